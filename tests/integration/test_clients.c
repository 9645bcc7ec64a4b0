/*
 * test_clients: many clients at once.
 *
 * 1. 200 connections open together; each writes a pipeline on its own keys
 *    (spread over the shards by their names) and a shared INCR on counters
 *    on every shard; replies are read round-robin after all have written.
 * 2. 8 threads x 4 connections each hammer the same 16 cross-shard counters
 *    with INCRBY and pipelined MGETs; the final counters must equal the sum
 *    of all increments (no lost update, whatever thread ran them).
 * 3. Every connection's replies are checked byte for byte.
 */
#include "testclient.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NCONN 200
#define PER_CONN 30

static char counters[PC_SPREAD_KEYS][64];
static int port;

static void phase_many_conns(void)
{
    struct pc_conn **cs = calloc(NCONN, sizeof(*cs));
    int open_ok = 0;
    for (int i = 0; i < NCONN; i++) {
        cs[i] = pc_conn_open(port);
        if (cs[i])
            open_ok++;
    }
    if (open_ok != NCONN) {
        pc_fail("only %d of %d connections opened", open_ok, NCONN);
    }
    /* everyone writes before anyone reads */
    for (int i = 0; i < NCONN; i++) {
        if (!cs[i])
            continue;
        char *req = NULL;
        size_t len = 0, cap = 0;
        for (int j = 0; j < PER_CONN; j++) {
            char k[64], v[64];
            snprintf(k, sizeof(k), "c%d:k%d", i, j);
            snprintf(v, sizeof(v), "v%d.%d", i, j);
            const char *set[] = { "SET", k, v };
            pc_resp_encode(&req, &len, &cap, 3, set, NULL);
            const char *incr[] = { "INCR", counters[(i + j) % PC_SPREAD_KEYS] };
            pc_resp_encode(&req, &len, &cap, 2, incr, NULL);
        }
        for (int j = 0; j < PER_CONN; j++) {
            char k[64];
            snprintf(k, sizeof(k), "c%d:k%d", i, j);
            const char *get[] = { "GET", k };
            pc_resp_encode(&req, &len, &cap, 2, get, NULL);
        }
        if (pc_conn_write(cs[i], req, len) != 0)
            pc_fail("client %d: write failed", i);
        free(req);
    }
    /* read round-robin, one reply per client per turn */
    int *next = calloc(NCONN, sizeof(int));
    int total = 3 * PER_CONN, bad = 0;
    for (int step = 0; step < total; step++) {
        for (int i = 0; i < NCONN; i++) {
            if (!cs[i])
                continue;
            char *r = NULL;
            size_t rl = 0;
            if (pc_conn_read_reply(cs[i], &r, &rl, pc_reply_timeout_ms) != 1) {
                pc_fail("client %d: no reply #%d", i, step);
                pc_conn_close(&cs[i]);
                continue;
            }
            int j = next[i]++;
            char what[128];
            if (j < 2 * PER_CONN && j % 2 == 0) {
                snprintf(what, sizeof(what), "client %d SET #%d", i, j / 2);
                if (!pc_expect_bytes(what, r, rl, "+OK\r\n"))
                    bad++;
            } else if (j < 2 * PER_CONN) {
                if (r[0] != ':') {
                    snprintf(what, sizeof(what), "client %d INCR #%d", i, j / 2);
                    pc_expect_bytes(what, r, rl, ":<n>\r\n");
                    bad++;
                }
            } else {
                char v[64], e[80];
                snprintf(v, sizeof(v), "v%d.%d", i, j - 2 * PER_CONN);
                snprintf(e, sizeof(e), "$%zu\r\n%s\r\n", strlen(v), v);
                snprintf(what, sizeof(what), "client %d GET c%d:k%d", i, i, j - 2 * PER_CONN);
                if (!pc_expect_bytes(what, r, rl, e))
                    bad++;
            }
            free(r);
            if (bad > 10) {
                fprintf(stderr, "(stopping after 10 mismatches)\n");
                step = total;
                break;
            }
        }
    }
    free(next);
    for (int i = 0; i < NCONN; i++)
        pc_conn_close(&cs[i]);
    free(cs);

    /* the counters: NCONN*PER_CONN increments in total, evenly spread */
    struct pc_conn *c = pc_conn_open(port);
    if (!c)
        return;
    long long sum = 0;
    for (int k = 0; k < PC_SPREAD_KEYS; k++) {
        size_t rl;
        char *r = pc_conn_cmdl(c, &rl, "GET", counters[k], NULL);
        if (r && r[0] == '$' && r[1] != '-')
            sum += atoll(strchr(r, '\n') + 1);
        free(r);
    }
    if (sum != (long long)NCONN * PER_CONN)
        pc_fail("phase 1: counters sum to %lld, want %d", sum, NCONN * PER_CONN);
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);
    char exp[32];
    snprintf(exp, sizeof(exp), ":%d\r\n", 0);
    pc_expect(c, exp, "DBSIZE", NULL);
    pc_conn_close(&c);
}

#define THREADS 8
#define CONNS_PER_THREAD 4
#define ROUNDS 150

struct worker {
    int id;
    long long added[PC_SPREAD_KEYS];
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct pc_conn *cs[CONNS_PER_THREAD];
    for (int i = 0; i < CONNS_PER_THREAD; i++)
        cs[i] = pc_conn_open(port);
    unsigned seed = (unsigned)w->id * 2654435761u + 1;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < CONNS_PER_THREAD; i++) {
            if (!cs[i])
                continue;
            /* a small pipeline: two INCRBYs on different shards and an MGET of all */
            char *req = NULL;
            size_t len = 0, cap = 0;
            int k1 = (int)((seed = seed * 1103515245u + 12345u) >> 16) % PC_SPREAD_KEYS;
            int k2 = (k1 + 1 + (int)((seed >> 20) % (PC_SPREAD_KEYS - 1))) % PC_SPREAD_KEYS;
            int by = 1 + r % 7;
            char bybuf[16];
            snprintf(bybuf, sizeof(bybuf), "%d", by);
            const char *a1[] = { "INCRBY", counters[k1], bybuf };
            const char *a2[] = { "INCRBY", counters[k2], bybuf };
            const char *mg[1 + PC_SPREAD_KEYS];
            mg[0] = "MGET";
            for (int k = 0; k < PC_SPREAD_KEYS; k++)
                mg[k + 1] = counters[k];
            pc_resp_encode(&req, &len, &cap, 3, a1, NULL);
            pc_resp_encode(&req, &len, &cap, 3, a2, NULL);
            pc_resp_encode(&req, &len, &cap, 1 + PC_SPREAD_KEYS, mg, NULL);
            pc_conn_write(cs[i], req, len);
            free(req);
            for (int n = 0; n < 3; n++) {
                char *rep;
                size_t rl;
                if (pc_conn_read_reply(cs[i], &rep, &rl, pc_reply_timeout_ms) != 1) {
                    pc_fail("thread %d conn %d: no reply", w->id, i);
                    pc_conn_close(&cs[i]);
                    break;
                }
                if (n < 2 && rep[0] != ':')
                    pc_fail("thread %d: INCRBY reply %s", w->id, rep);
                if (n == 2 && strncmp(rep, "*16\r\n", 5) != 0)
                    pc_fail("thread %d: MGET reply %.40s", w->id, rep);
                free(rep);
            }
            w->added[k1] += by;
            w->added[k2] += by;
        }
    }
    for (int i = 0; i < CONNS_PER_THREAD; i++)
        pc_conn_close(&cs[i]);
    return NULL;
}

static void phase_threads(void)
{
    pthread_t th[THREADS];
    struct worker ws[THREADS];
    memset(ws, 0, sizeof(ws));
    for (int t = 0; t < THREADS; t++) {
        ws[t].id = t;
        pthread_create(&th[t], NULL, worker_main, &ws[t]);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    struct pc_conn *c = pc_conn_open(port);
    if (!c)
        return;
    for (int k = 0; k < PC_SPREAD_KEYS; k++) {
        long long want = 0;
        for (int t = 0; t < THREADS; t++)
            want += ws[t].added[k];
        char exp[64];
        snprintf(exp, sizeof(exp), ":%lld\r\n", want);
        pc_expect(c, exp, "INCRBY", counters[k], "0", NULL);
    }
    pc_conn_close(&c);
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    port = srv.port;
    pc_spread_keys("ctr:", counters);
    phase_many_conns();
    phase_threads();
    pc_test_teardown(&srv);
    return pc_test_done("test_clients");
}
