/*
 * test_outbuf: client-output-buffer-limit, normal class.
 *
 * - No limit (the default "normal 0 0 0"): a client that pipelines 50 GETs
 *   of a 100 KB value and only then reads gets every reply; nobody is
 *   closed.
 * - Hard limit ("normal 1mb 0 0"): a client that pipelines 3000 GETs of the
 *   100 KB value and never reads is disconnected: reading afterwards it sees
 *   the connection end after a few MB at most (300 MB were asked for), and
 *   the server logs Redis's "scheduled to be closed ASAP for overcoming of
 *   output buffer limits".  Another client keeps working throughout, and
 *   the server's RSS comes back near what it was before (generous bound).
 * - Soft limit ("normal 0 512kb 1"): a client that keeps asking and never
 *   reads is disconnected, but not before a second over the limit; a client
 *   that reads its replies is never touched.
 * Prints the RELIABILITY line of the output-limit scenario.
 */
#include "testclient.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define BIG (100 * 1024)

static char *big;
static char *big_reply; /* "$102400\r\n...\r\n" */
static size_t big_reply_len;

/* GET big on a client that reads its replies */
static void get_big(struct pc_conn *c, const char *what)
{
    const char *argv[] = {"GET", "big"};
    if (pc_conn_send(c, 2, argv, NULL) != 0)
        pc_fail("%s: send failed", what);
    else
        pc_expect_reply(c, what, big_reply, big_reply_len);
}

static void set_limit(struct pc_conn *c, const char *limit)
{
    pc_expect(c, "+OK\r\n", "CONFIG", "SET", "client-output-buffer-limit", limit, NULL);
}

/* n GET big requests in one buffer */
static char *gets(int n, size_t *len)
{
    char *req = NULL;
    size_t cap = 0;
    *len = 0;
    const char *argv[] = {"GET", "big"};
    for (int i = 0; i < n; i++)
        pc_resp_encode(&req, len, &cap, 2, argv, NULL);
    return req;
}

/* a client socket that holds little unread data: the server's buffer fills sooner */
static struct pc_conn *small_window_conn(int port)
{
    struct pc_conn *c = pc_conn_open(port);
    int small = 4096;
    if (c)
        setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    return c;
}

static void phase_no_limit(struct pc_conn *ctl, int port)
{
    struct pc_conn *a = pc_conn_open(port);
    size_t len;
    char *req = gets(50, &len);
    pc_conn_write(a, req, len);
    free(req);
    pc_sleep_ms(200);
    for (int i = 0; i < 50; i++)
        if (!pc_expect_reply(a, "GET big (pipelined, read late)", big_reply, big_reply_len))
            break;
    pc_expect(a, "+PONG\r\n", "PING", NULL);
    pc_expect(ctl, "+PONG\r\n", "PING", NULL);
    pc_conn_close(&a);
}

static void phase_hard(struct pc_server *srv, struct pc_conn *ctl)
{
    long before = pc_server_status_kb(srv, "VmRSS");
    set_limit(ctl, "normal 1mb 0 0");
    struct pc_conn *a = small_window_conn(srv->port);
    size_t len;
    char *req = gets(3000, &len);
    long long t0 = pc_now_ms();
    if (pc_conn_write(a, req, len) != 0)
        fprintf(stderr, "note: the server closed while the requests were still being written\n");
    free(req);
    /* the other client is served meanwhile */
    for (int i = 0; i < 5; i++)
        get_big(ctl, "GET big (other client)");
    pc_sleep_ms(300); /* the client does not read */
    long long got = pc_conn_drain_until_closed(a, 20000);
    fprintf(stderr, "hard limit: client closed after %lld bytes of replies (%lld ms)\n", got, pc_now_ms() - t0);
    if (got < 0)
        pc_fail("hard limit 1mb: a client with 300 MB of replies pending was not disconnected");
    else if (got > 64LL << 20)
        pc_fail("hard limit 1mb: the client read %lld bytes before being disconnected", got);
    pc_conn_close(&a);
    pc_expect(ctl, "+PONG\r\n", "PING", NULL);
    if (!srv->external) {
        pc_sleep_ms(200);
        if (pc_server_log_has(srv, "scheduled to be closed ASAP for overcoming of output buffer limits") != 1)
            pc_fail("the server log does not say why the client was closed");
        long after = pc_server_status_kb(srv, "VmRSS");
        for (long long w = pc_now_ms(); after > before + 32 * 1024 && pc_now_ms() - w < 5000; pc_sleep_ms(200))
            after = pc_server_status_kb(srv, "VmRSS");
        fprintf(stderr, "hard limit: server RSS %ld kB before, %ld kB after\n", before, after);
        if (after > before + 32 * 1024)
            pc_fail("server RSS %ld kB after the client was closed, %ld kB before", after, before);
    }
}

static void phase_soft(struct pc_server *srv, struct pc_conn *ctl)
{
    set_limit(ctl, "normal 0 512kb 1");
    struct pc_conn *a = small_window_conn(srv->port);
    size_t len;
    char *req = gets(10, &len);
    long long t0 = pc_now_ms(), closed_at = -1;
    while (pc_now_ms() - t0 < 20000) {
        /* a client that reads stays: 100 KB replies never pass 512 KB for it */
        get_big(ctl, "GET big (reading client)");
        ssize_t n = send(a->fd, req, len, MSG_NOSIGNAL);
        if (n < 0) {
            closed_at = pc_now_ms();
            break;
        }
        pc_sleep_ms(100);
    }
    free(req);
    long long elapsed = closed_at < 0 ? -1 : closed_at - t0;
    fprintf(stderr, "soft limit: the non-reading client was closed after %lld ms\n", elapsed);
    if (closed_at < 0)
        pc_fail("soft limit 512kb/1s: a client that never reads was not disconnected within 20 s");
    else if (elapsed < 1000)
        pc_fail("soft limit 512kb/1s: closed after %lld ms, before a second over the limit", elapsed);
    pc_conn_close(&a);
    pc_expect(ctl, "+PONG\r\n", "PING", NULL);
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    struct pc_conn *ctl = pc_conn_open(srv.port);
    if (!ctl)
        return 2;
    big = malloc(BIG);
    memset(big, 'b', BIG);
    big_reply = malloc(BIG + 32);
    big_reply_len = (size_t)snprintf(big_reply, 32, "$%d\r\n", BIG);
    memcpy(big_reply + big_reply_len, big, BIG);
    big_reply_len += BIG;
    memcpy(big_reply + big_reply_len, "\r\n", 3);
    big_reply_len += 2;
    pc_expectv(ctl, "+OK\r\n", 5, 3, (const char *[]){"SET", "big", big}, (const size_t[]){3, 3, BIG});

    phase_no_limit(ctl, srv.port);
    phase_hard(&srv, ctl);
    phase_soft(&srv, ctl);
    set_limit(ctl, "normal 0 0 0");

    pc_conn_close(&ctl);
    free(big);
    free(big_reply);
    pc_test_teardown(&srv);
    pc_reliability_line(&srv, "output buffer limit",
                        "3000 pipelined GETs of a 100 KB value (300 MB of replies) at hard limit 1mb; "
                        "GETs every 100 ms at soft limit 512kb/1s",
                        "clients that never read (4 KB receive window)", 0, -1);
    return pc_test_done("test_outbuf");
}
