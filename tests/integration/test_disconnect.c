/*
 * test_disconnect: clients that write a pipeline of hundreds of cross-shard
 * commands and go away at once, 3,000 times (1,000 under a sanitizer): a
 * third close normally (FIN), a third reset (SO_LINGER 0: RST), a third
 * half-close (shutdown(SHUT_WR)) and read until the server closes, as it must when it reads the end of their
 * input (Redis frees such a client); some read part of their replies first,
 * some leave a command half written.  This is the path where a connection
 * dies with remote requests in flight (ARCHITECTURE.md rule 6).  Afterwards every
 * shard must still answer correctly (a value written and read back on each;
 * a mismatch counts as a lost write), a counter touched only by the survivors
 * must be exact, INFO connected_clients must be back to what it was before
 * the storm, and the server must exit 0 on SIGTERM (leaks: the ASan run).
 * Every tenth client asks for megabytes of replies (GETs of 16 KB values on
 * every shard) that it never reads, so it dies with the server's output to
 * it backed up.  Prints the RELIABILITY line of the disconnect scenario.
 */
#include "testclient.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define ITERATIONS 3000 /* a third of that under a sanitizer */
#define PIPELINE 300

static char keys[PC_SPREAD_KEYS][64];
static char bigkeys[PC_SPREAD_KEYS][80];

static void build_big_pipeline(char **req, size_t *len, size_t *cap, unsigned seed)
{
    for (int j = 0; j < PIPELINE; j++) {
        const char *k = bigkeys[(seed + (unsigned)j) % PC_SPREAD_KEYS];
        if (j % 3 == 2) {
            const char *a[] = { "MGET", k, bigkeys[(seed + (unsigned)j + 7) % PC_SPREAD_KEYS] };
            pc_resp_encode(req, len, cap, 3, a, NULL);
        } else {
            const char *a[] = { "GET", k };
            pc_resp_encode(req, len, cap, 2, a, NULL);
        }
    }
}

static void build_pipeline(char **req, size_t *len, size_t *cap, unsigned seed)
{
    for (int j = 0; j < PIPELINE; j++) {
        const char *k = keys[(seed + (unsigned)j * 7u) % PC_SPREAD_KEYS];
        const char *k2 = keys[(seed + (unsigned)j * 3u + 5u) % PC_SPREAD_KEYS];
        switch ((seed + (unsigned)j) % 6) {
        case 0: {
            const char *a[] = { "SET", k, "some-value-of-moderate-length" };
            pc_resp_encode(req, len, cap, 3, a, NULL);
            break;
        }
        case 1: {
            const char *a[] = { "GET", k };
            pc_resp_encode(req, len, cap, 2, a, NULL);
            break;
        }
        case 2: {
            const char *a[] = { "MGET", k, k2, keys[0], keys[15] };
            pc_resp_encode(req, len, cap, 5, a, NULL);
            break;
        }
        case 3: {
            const char *a[] = { "MSET", k, "1", k2, "2" };
            pc_resp_encode(req, len, cap, 5, a, NULL);
            break;
        }
        case 4: {
            const char *a[] = { "DEL", k2, k };
            pc_resp_encode(req, len, cap, 3, a, NULL);
            break;
        }
        default: {
            const char *a[] = { "EXISTS", k, k2, keys[7] };
            pc_resp_encode(req, len, cap, 4, a, NULL);
            break;
        }
        }
    }
}

/* SET and GET back a value on every shard: returns how many were not read back */
static int check_all_shards(struct pc_conn *c, const char *when)
{
    int lost = 0;
    char what[160];
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        char k[80];
        snprintf(k, sizeof(k), "{%.60s}check", keys[i]);
        snprintf(what, sizeof(what), "%.60s: SET/GET on shard of %.60s", when, keys[i]);
        size_t rl;
        char *r = pc_conn_cmdl(c, &rl, "SET", k, when, NULL);
        pc_expect_bytes(what, r, rl, "+OK\r\n");
        free(r);
        r = pc_conn_cmdl(c, &rl, "GET", k, NULL);
        char e[200];
        snprintf(e, sizeof(e), "$%zu\r\n%s\r\n", strlen(when), when);
        lost += !pc_expect_bytes(what, r, r ? rl : 0, e);
        free(r);
    }
    return lost;
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    pc_spread_keys("dc:", keys);
    struct pc_conn *ctl = pc_conn_open(srv.port);
    if (!ctl)
        return 2;
    size_t biglen = 16 * 1024;
    char *bigval = malloc(biglen);
    memset(bigval, 'B', biglen);
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        snprintf(bigkeys[i], sizeof(bigkeys[i]), "{%.60s}big", keys[i]);
        const char *a[] = { "SET", bigkeys[i], bigval };
        size_t al[] = { 3, strlen(bigkeys[i]), biglen };
        pc_expectv(ctl, "+OK\r\n", 5, 3, a, al);
    }
    free(bigval);
    long long shards = pc_info_ll(ctl, "shard_threads");
    long long baseline_clients = pc_info_wait_for(ctl, "connected_clients", 1, 5000);
    int lost_writes = 0;

    int connect_failures = 0;
    int iterations = pc_sanitized() ? ITERATIONS / 3 : ITERATIONS;
    for (int it = 0; it < iterations; it++) {
        struct pc_conn *c = pc_conn_open(srv.port);
        if (!c) {
            if (++connect_failures > 20) {
                pc_fail("iteration %d: cannot connect any more", it);
                break;
            }
            pc_sleep_ms(50);
            continue;
        }
        char *req = NULL;
        size_t len = 0, cap = 0;
        if (it % 10 == 5)
            build_big_pipeline(&req, &len, &cap, (unsigned)it); /* ~6 MB of replies */
        else
            build_pipeline(&req, &len, &cap, (unsigned)it);
        int mode = it % 4;
        if (mode == 3) /* leave the last command half written */
            len -= 7;
        pc_conn_write(c, req, len);
        free(req);
        if (it % 10 == 1) {
            /* read a few replies first: some remote requests are done, some not */
            for (int n = 0; n < 3; n++) {
                char *r;
                size_t rl;
                if (pc_conn_read_reply(c, &r, &rl, pc_reply_timeout_ms) != 1) {
                    pc_fail("iteration %d: no reply before disconnect", it);
                    break;
                }
                free(r);
            }
        }
        if (it % 3 == 0) {
            pc_conn_close(&c); /* FIN */
        } else if (it % 3 == 1) {
            pc_conn_abort(&c); /* RST */
        } else {
            /* half-close: the server reads the end of the input and must close its side */
            shutdown(c->fd, SHUT_WR);
            if (pc_conn_drain_until_closed(c, 10000) < 0)
                pc_fail("iteration %d: the server did not close a half-closed client within 10 s", it);
            pc_conn_close(&c);
        }

        if (it % 100 == 0) {
            char *r = pc_conn_cmdl(ctl, NULL, "INCR", keys[it / 100 % PC_SPREAD_KEYS], NULL);
            (void)r;
            free(r);
            char *p = pc_conn_cmdl(ctl, NULL, "PING", NULL);
            if (!pc_expect_bytes("control connection PING during the storm", p, p ? strlen(p) : 0,
                                 "+PONG\r\n")) {
                free(p);
                break;
            }
            free(p);
            if (!pc_server_alive(&srv)) {
                pc_fail("server died at iteration %d", it);
                pc_server_dump_log(&srv, 8000);
                return pc_test_done("test_disconnect");
            }
        }
        if (it % 500 == 499) {
            char when[64];
            snprintf(when, sizeof(when), "after-%d-disconnects", it + 1);
            int lost = check_all_shards(ctl, when);
            lost_writes += lost;
            if (lost)
                break;
        }
    }

    long long clients = pc_info_wait_for(ctl, "connected_clients", baseline_clients, 5000);
    if (clients != baseline_clients)
        pc_fail("connected_clients %lld after the storm, %lld before it", clients, baseline_clients);

    /* a fresh connection: every shard answers, a counter on each is exact */
    struct pc_conn *c = pc_conn_open(srv.port);
    if (c) {
        lost_writes += check_all_shards(c, "final");
        for (int i = 0; i < PC_SPREAD_KEYS; i++) {
            char k[80];
            snprintf(k, sizeof(k), "{%.60s}counter", keys[i]);
            for (int n = 1; n <= 50; n++) {
                char e[32];
                snprintf(e, sizeof(e), ":%d\r\n", n);
                if (!pc_expect(c, e, "INCR", k, NULL)) {
                    lost_writes++;
                    break;
                }
            }
        }
        for (int i = 0; i < PC_SPREAD_KEYS; i++) {
            char what[128];
            snprintf(what, sizeof(what), "STRLEN %.80s after the storm", bigkeys[i]);
            size_t rl;
            char *r = pc_conn_cmdl(c, &rl, "STRLEN", bigkeys[i], NULL);
            pc_expect_bytes(what, r, r ? rl : 0, ":16384\r\n");
            free(r);
        }
        const char *argv2[1 + PC_SPREAD_KEYS];
        argv2[0] = "DEL";
        for (int i = 0; i < PC_SPREAD_KEYS; i++)
            argv2[1 + i] = keys[i];
        char *r = pc_conn_cmd(c, NULL, 1 + PC_SPREAD_KEYS, argv2);
        if (!r || r[0] != ':')
            pc_fail("final multi-shard DEL: %s", r ? r : "(no reply)");
        free(r);
        pc_expect(c, "+PONG\r\n", "PING", NULL);
        pc_conn_close(&c);
    } else {
        pc_fail("cannot connect after the storm");
    }
    pc_conn_close(&ctl);
    pc_test_teardown(&srv);
    char load[160];
    snprintf(load, sizeof(load), "%d clients x %d-command cross-shard pipelines over %lld shards", iterations,
             PIPELINE, shards);
    pc_reliability_line(&srv, "disconnect storm", load,
                        "FIN, RST (SO_LINGER 0), shutdown(SHUT_WR); 1/4 leave a command half written, "
                        "1/10 leave ~6 MB of replies unread",
                        0, lost_writes);
    return pc_test_done("test_disconnect");
}
