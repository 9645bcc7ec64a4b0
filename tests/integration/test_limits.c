/*
 * test_limits: connection limits set at runtime through CONFIG SET, read back
 * through CONFIG GET and checked through their effect.
 *   - maxclients: past the limit a new client gets Redis's
 *     "-ERR max number of clients reached" and is closed; a freed place can
 *     be taken again.  (Clients are opened one by one so that, with several
 *     shards, each accept sees the others' counts.)
 *   - timeout: an idle client is closed after `timeout` seconds, a client
 *     that keeps talking is not.
 *   - requirepass: after CONFIG SET requirepass, new clients need AUTH
 *     (clients connected before stay authenticated, as in Redis).
 */
#include "testclient.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXC 6

static void check_maxclients(int port)
{
    struct pc_conn *admin = pc_conn_open(port);
    pc_expect(admin, "+OK\r\n", "CONFIG", "SET", "maxclients", "6", NULL);
    pc_expect(admin, "*2\r\n$10\r\nmaxclients\r\n$1\r\n6\r\n", "CONFIG", "GET", "maxclients", NULL);
    struct pc_conn *c[MAXC];
    int opened = 0;
    for (int i = 0; i < MAXC - 1; i++) { /* the admin connection is one of the six */
        c[i] = pc_conn_open(port);
        if (c[i] && pc_expect(c[i], "+PONG\r\n", "PING", NULL))
            opened++;
    }
    if (opened != MAXC - 1)
        pc_fail("maxclients 6: only %d of %d clients below the limit were served", opened, MAXC - 1);
    struct pc_conn *extra = pc_conn_open(port);
    if (extra) {
        char *r = NULL;
        size_t rl = 0;
        int st = pc_conn_read_reply(extra, &r, &rl, 5000);
        if (st != 1)
            pc_fail("maxclients: the client over the limit got no reply (status %d)", st);
        else
            pc_expect_bytes("client over maxclients", r, rl, "-ERR max number of clients reached\r\n");
        free(r);
        if (pc_conn_wait_closed(extra, 5000) != 1)
            pc_fail("maxclients: the client over the limit was not closed");
        pc_conn_close(&extra);
    }
    /* a freed place can be taken again */
    pc_conn_close(&c[0]);
    int served = 0;
    for (int tries = 0; tries < 50 && !served; tries++) {
        usleep(20 * 1000);
        struct pc_conn *again = pc_conn_open(port);
        size_t rl;
        char *r = again ? pc_conn_cmdl(again, &rl, "PING", NULL) : NULL;
        served = r && strcmp(r, "+PONG\r\n") == 0;
        free(r);
        pc_conn_close(&again);
    }
    if (!served)
        pc_fail("maxclients: a place freed by a closed client could not be taken again");
    for (int i = 1; i < MAXC - 1; i++)
        pc_conn_close(&c[i]);
    pc_expect(admin, "+OK\r\n", "CONFIG", "SET", "maxclients", "10000", NULL);
    pc_conn_close(&admin);
}

static void check_timeout(int port)
{
    struct pc_conn *admin = pc_conn_open(port);
    pc_expect(admin, "+OK\r\n", "CONFIG", "SET", "timeout", "2", NULL);
    pc_expect(admin, "*2\r\n$7\r\ntimeout\r\n$1\r\n2\r\n", "CONFIG", "GET", "timeout", NULL);
    struct pc_conn *idle = pc_conn_open(port);
    struct pc_conn *busy = pc_conn_open(port);
    pc_expect(idle, "+PONG\r\n", "PING", NULL);
    /* the busy client talks every 100 ms for 3 s (20x within the timeout, so that a
     * loaded machine's scheduling delays cannot make it look idle); the idle one
     * must be gone by then or soon after */
    for (int i = 0; i < 30; i++) {
        usleep(100 * 1000);
        pc_expect(busy, "+PONG\r\n", "PING", NULL);
        pc_expect(admin, "+PONG\r\n", "PING", NULL);
    }
    if (pc_conn_wait_closed(idle, 5000) != 1)
        pc_fail("timeout 2: an idle client was still open after 8 s");
    pc_expect(busy, "+PONG\r\n", "PING", NULL);
    pc_expect(admin, "+OK\r\n", "CONFIG", "SET", "timeout", "0", NULL);
    pc_conn_close(&idle);
    pc_conn_close(&busy);
    pc_conn_close(&admin);
}

static void check_requirepass(int port)
{
    struct pc_conn *a = pc_conn_open(port);
    pc_expect(a, "+OK\r\n", "CONFIG", "SET", "requirepass", "s3cret", NULL);
    /* a client connected before the password was set stays authenticated, as in Redis */
    pc_expect(a, "$-1\r\n", "GET", "limits:nokey", NULL);
    struct pc_conn *b = pc_conn_open(port);
    pc_expect(b, "-NOAUTH Authentication required.\r\n", "GET", "k", NULL);
    /* a refused EXEC discards the transaction: Redis's rejectCommand answers EXECABORT */
    pc_expect(b, "-EXECABORT Transaction discarded because of: NOAUTH Authentication required.\r\n", "EXEC", NULL);
    pc_expect(b, "-WRONGPASS invalid username-password pair or user is disabled.\r\n", "AUTH", "nope", NULL);
    pc_expect(b, "+OK\r\n", "AUTH", "s3cret", NULL);
    pc_expect(b, "$-1\r\n", "GET", "limits:nokey", NULL);
    struct pc_conn *c = pc_conn_open(port);
    pc_expect(c, "+OK\r\n", "AUTH", "default", "s3cret", NULL);
    pc_expect(c, "+OK\r\n", "CONFIG", "SET", "requirepass", "", NULL);
    pc_conn_close(&c);
    struct pc_conn *d = pc_conn_open(port);
    pc_expect(d, "+PONG\r\n", "PING", NULL);
    pc_conn_close(&d);
    pc_conn_close(&a);
    pc_conn_close(&b);
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    check_maxclients(srv.port);
    check_timeout(srv.port);
    check_requirepass(srv.port);
    pc_test_teardown(&srv);
    return pc_test_done("test_limits");
}
