/*
 * test_chaos_slowloris: thousands of connections that hold a place and say
 * nothing (idle) or never finish their command (half-sent).
 *
 * - maxclients MAXC (CONFIG SET); MAXC - 1 slowloris connections are opened
 *   (the admin connection is the last place), half idle, half with a SET
 *   written but for its last bytes.  The test raises its own RLIMIT_NOFILE
 *   (and so the server's, which it inherits) above what they need.  Once
 *   INFO connected_clients shows them all, each of EXTRA more clients gets
 *   Redis's "-ERR max number of clients reached" and is closed.
 * - The slowloris clients are still served: one idle client PINGs, one
 *   half-sent client finishes its SET and gets +OK.
 * - CONFIG SET timeout 1 reaps them: every slowloris connection is closed by
 *   the server within a bounded wait and connected_clients is back to the
 *   admin connection (which talks every 100 ms, so it is never idle).
 * - Service continues: a new client sets and reads a key on every shard.
 * MAXC is 2000.  Prints the RELIABILITY line.
 */
#include "testclient.h"

#include <stdlib.h>
#include <string.h>

#define MAXC 2000
#define EXTRA 50
#define REAP_WAIT_MS 15000

static const char half_set[] = "*3\r\n$3\r\nSET\r\n$8\r\nslowlori\r\n$5\r\nval"; /* "ue\r\n" never comes */

int main(int argc, char **argv)
{
    const int maxc = MAXC;
    if (pc_raise_nofile(maxc + EXTRA + 256) < maxc + EXTRA + 64) {
        printf("test_chaos_slowloris: cannot raise RLIMIT_NOFILE to %d; skipped\n", maxc + EXTRA + 256);
        return 0;
    }
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    struct pc_conn *admin = pc_conn_open(srv.port);
    if (!admin)
        return 2;
    long long shards = srv.is_redis ? 1 : pc_info_ll(admin, "shard_threads");
    char maxcs[16];
    snprintf(maxcs, sizeof(maxcs), "%d", maxc);
    pc_expect(admin, "+OK\r\n", "CONFIG", "SET", "maxclients", maxcs, NULL);

    int n = maxc - 1;
    struct pc_conn **slow = calloc((size_t)n, sizeof(*slow));
    int opened = 0;
    for (int i = 0; i < n; i++) {
        slow[i] = pc_conn_open(srv.port);
        if (slow[i] && i % 2 && pc_conn_write(slow[i], half_set, sizeof(half_set) - 1) != 0)
            pc_conn_close(&slow[i]);
        opened += slow[i] != NULL;
    }
    long long clients = pc_info_wait_for(admin, "connected_clients", maxc, 10000);
    long long rejected0 = pc_info_ll(admin, "rejected_connections");
    fprintf(stderr, "%d slowloris connections opened, connected_clients %d\n", opened, (int)clients);
    if (opened != n || clients != maxc || rejected0 != 0)
        pc_fail("%d of %d slowloris clients opened, connected_clients %lld, rejected %lld: want %d, %d and 0",
                opened, n, clients, rejected0, n, maxc);

    int refused = 0;
    for (int i = 0; i < EXTRA; i++) {
        struct pc_conn *c = pc_conn_open(srv.port);
        char *r = NULL;
        size_t rl = 0;
        if (c && pc_conn_read_reply(c, &r, &rl, 5000) == 1 &&
            pc_expect_bytes("a client over maxclients", r, rl, "-ERR max number of clients reached\r\n") &&
            pc_conn_wait_closed(c, 5000) == 1)
            refused++;
        free(r);
        pc_conn_close(&c);
    }
    if (refused != EXTRA)
        pc_fail("%d of %d clients over maxclients were refused with the error and closed", refused, EXTRA);

    /* still served: an idle one talks, a half-sent one finishes its command */
    if (slow[0])
        pc_expect(slow[0], "+PONG\r\n", "PING", NULL);
    if (slow[1]) {
        char *r = NULL;
        size_t rl = 0;
        if (pc_conn_write(slow[1], "ue\r\n", 4) == 0)
            pc_conn_read_reply(slow[1], &r, &rl, pc_reply_timeout_ms);
        pc_expect_bytes("the rest of a half-sent SET", r, rl, "+OK\r\n");
        free(r);
    }

    pc_expect(admin, "+OK\r\n", "CONFIG", "SET", "timeout", "1", NULL);
    long long t0 = pc_now_ms();
    int reaped = 0;
    for (int i = 0; i < n; i++) {
        if (!slow[i])
            continue;
        long long left = t0 + REAP_WAIT_MS - pc_now_ms();
        if (i % 100 == 0)
            pc_expect(admin, "+PONG\r\n", "PING", NULL); /* the admin connection stays busy */
        int st = pc_conn_wait_closed(slow[i], left > 0 ? (int)(left < 100 ? left : 100) : 1);
        for (int tries = 0; st == 0 && pc_now_ms() - t0 < REAP_WAIT_MS; tries++) {
            pc_expect(admin, "+PONG\r\n", "PING", NULL);
            st = pc_conn_wait_closed(slow[i], 100);
        }
        reaped += st == 1;
        pc_conn_close(&slow[i]);
    }
    long long reap_ms = pc_now_ms() - t0;
    fprintf(stderr, "timeout 1: %d of %d idle and half-sent clients closed in %lld ms\n", reaped, opened, reap_ms);
    if (reaped != opened)
        pc_fail("timeout 1: %d of %d slowloris clients closed by the server within %d ms", reaped, opened,
                REAP_WAIT_MS);
    clients = pc_info_wait_for(admin, "connected_clients", 1, 5000);
    if (clients != 1)
        pc_fail("connected_clients %lld after the reaping, want 1 (the admin)", clients);
    pc_expect(admin, "+OK\r\n", "CONFIG", "SET", "timeout", "0", NULL);
    pc_expect(admin, "+OK\r\n", "CONFIG", "SET", "maxclients", "10000", NULL);

    struct pc_conn *c = pc_conn_open(srv.port);
    if (c) {
        char keys[PC_SPREAD_KEYS][64];
        pc_spread_keys("slow:", keys);
        for (int i = 0; i < PC_SPREAD_KEYS; i++) {
            pc_expect(c, "+OK\r\n", "SET", keys[i], "served", NULL);
            pc_expect(c, "$6\r\nserved\r\n", "GET", keys[i], NULL);
        }
        pc_expect(c, "$5\r\nvalue\r\n", "GET", "slowlori", NULL);
        pc_conn_close(&c);
    } else {
        pc_fail("no new client after the slowloris clients were reaped");
    }
    free(slow);
    pc_conn_close(&admin);
    pc_test_teardown(&srv);
    char load[200];
    snprintf(load, sizeof(load),
             "%d connections (half idle, half with a command half sent) at maxclients %d, %d more over it "
             "(%lld shard threads)",
             n, maxc, EXTRA, shards);
    pc_reliability_line(&srv, "slowloris", load, "idle and half-sent clients holding every place; timeout 1 reaps them",
                        n / 2, -1);
    return pc_test_done("test_chaos_slowloris");
}
