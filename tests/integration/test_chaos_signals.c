/*
 * test_chaos_signals: the signals a server meets under load.
 *
 * - SIGPIPE: the server ignores it (SigIgn in /proc/<pid>/status has it), and
 *   clients that ask for 20 x 1 MB of replies, read a little and reset
 *   (SO_LINGER 0) while the server is writing do not kill it: 20 of them,
 *   on keys of every shard, then every shard still answers.
 * - SIGTERM in the middle of load: LOADERS threads keep two pipelines of
 *   PIPELINE cross-shard commands each in flight (SET, GET, MGET and INCR on
 *   keys of every shard); once each has had replies, SIGTERM.  The process
 *   must end by itself with exit status 0 within 10 s (pc_server_stop kills it
 *   and reports -1 otherwise) and log why.  ROUNDS servers in a row.
 * lost_writes is n/a: nothing outlives the process (no persistence).  Prints
 * the RELIABILITY line of the scenario.
 */
#include "testclient.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BIG (1 << 20)
#define BIG_GETS 20
#define RESETS 20
#define LOADERS 4
#define PIPELINE 200
#define ROUNDS 3
#define STOP_BOUND_MS 10000

static char keys[PC_SPREAD_KEYS][64];
static atomic_int loaders_served; /* loaders that have read a whole pipeline's replies */

/* 1 when the server process ignores SIGPIPE, 0 when not, -1 unknown */
static int ignores_sigpipe(const struct pc_server *srv)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)srv->pid);
    FILE *f = fopen(path, "r");
    int ignored = -1;
    while (f && ignored < 0 && fgets(line, sizeof(line), f))
        if (strncmp(line, "SigIgn:", 7) == 0)
            ignored = (strtoull(line + 7, NULL, 16) >> (SIGPIPE - 1)) & 1;
    if (f)
        fclose(f);
    return ignored;
}

static void check_sigpipe(struct pc_server *srv, struct pc_conn *ctl)
{
    if (ignores_sigpipe(srv) != 1)
        pc_fail("the server does not ignore SIGPIPE (SigIgn)");
    char *big = malloc(BIG);
    memset(big, 'p', BIG);
    char bigkeys[PC_SPREAD_KEYS][80];
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        snprintf(bigkeys[i], sizeof(bigkeys[i]), "{%.60s}big", keys[i]);
        const char *a[] = {"SET", bigkeys[i], big};
        const size_t al[] = {3, strlen(bigkeys[i]), BIG};
        pc_expectv(ctl, "+OK\r\n", 5, 3, a, al);
    }
    free(big);
    for (int n = 0; n < RESETS; n++) {
        struct pc_conn *c = pc_conn_open(srv->port);
        if (!c)
            continue;
        char *req = NULL;
        size_t len = 0, cap = 0;
        for (int j = 0; j < BIG_GETS; j++) {
            const char *a[] = {"GET", bigkeys[(n + j) % PC_SPREAD_KEYS]};
            pc_resp_encode(&req, &len, &cap, 2, a, NULL);
        }
        pc_conn_write(c, req, len);
        free(req);
        char buf[65536];
        recv(c->fd, buf, sizeof(buf), 0); /* the server is writing now */
        pc_conn_abort(&c);
        if (!pc_server_alive(srv)) {
            pc_fail("the server died after client %d reset during a big reply", n);
            return;
        }
    }
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        char exp[32];
        snprintf(exp, sizeof(exp), ":%d\r\n", BIG);
        pc_expect(ctl, exp, "STRLEN", bigkeys[i], NULL);
    }
}

/* SET/GET/MGET/INCR over every shard, PIPELINE commands */
static char *load_pipeline(unsigned seed, size_t *len)
{
    char *req = NULL;
    size_t cap = 0;
    *len = 0;
    for (int j = 0; j < PIPELINE; j++) {
        const char *k = keys[(seed + (unsigned)j) % PC_SPREAD_KEYS];
        const char *k2 = keys[(seed + (unsigned)j * 5u + 3u) % PC_SPREAD_KEYS];
        const char *set[] = {"SET", k, "loaded"}, *get[] = {"GET", k2}, *mget[] = {"MGET", k, k2, keys[0]},
                   *incr[] = {"INCR", "{sig}counter"};
        switch (j % 4) {
        case 0: pc_resp_encode(&req, len, &cap, 3, set, NULL); break;
        case 1: pc_resp_encode(&req, len, &cap, 2, get, NULL); break;
        case 2: pc_resp_encode(&req, len, &cap, 4, mget, NULL); break;
        default: pc_resp_encode(&req, len, &cap, 2, incr, NULL); break;
        }
    }
    return req;
}

struct loader {
    int port;
    int id;
    long long replies; /* read before the server went away */
};

/* two pipelines in flight at all times, until the connection ends */
static void *loader_main(void *arg)
{
    struct loader *l = arg;
    struct pc_conn *c = pc_conn_open(l->port);
    if (!c)
        return NULL;
    size_t len;
    char *req = load_pipeline((unsigned)l->id, &len);
    int ok = pc_conn_write(c, req, len) == 0 && pc_conn_write(c, req, len) == 0;
    for (int round = 0; ok; round++) {
        for (int j = 0; ok && j < PIPELINE; j++) {
            char *r;
            size_t rl;
            ok = pc_conn_read_reply(c, &r, &rl, pc_reply_timeout_ms) == 1;
            if (ok && r[0] == '-') {
                pc_fail("loader %d: error reply %s", l->id, r);
                ok = 0;
            }
            free(r);
            l->replies += ok;
        }
        if (ok && round == 0)
            atomic_fetch_add(&loaders_served, 1);
        ok = ok && pc_conn_write(c, req, len) == 0;
    }
    free(req);
    pc_conn_close(&c);
    return NULL;
}

/* SIGTERM with LOADERS pipelines in flight: exit status, or -1 when it had to be killed */
static int sigterm_under_load(struct pc_server *srv, long long *replies, long long *stop_ms)
{
    pthread_t th[LOADERS];
    struct loader ls[LOADERS];
    atomic_store(&loaders_served, 0);
    for (int i = 0; i < LOADERS; i++) {
        ls[i] = (struct loader){srv->port, i, 0};
        pthread_create(&th[i], NULL, loader_main, &ls[i]);
    }
    for (long long t0 = pc_now_ms(); atomic_load(&loaders_served) < LOADERS && pc_now_ms() - t0 < 20000;)
        pc_sleep_ms(10);
    if (atomic_load(&loaders_served) < LOADERS)
        pc_fail("only %d of %d loaders got replies before SIGTERM", atomic_load(&loaders_served), LOADERS);
    srv->max_rss_kb = pc_server_max_rss_kb(srv);
    long long t0 = pc_now_ms();
    int status = pc_server_stop(srv, STOP_BOUND_MS);
    *stop_ms = pc_now_ms() - t0;
    srv->exit_status = status;
    for (int i = 0; i < LOADERS; i++) {
        pthread_join(th[i], NULL);
        *replies += ls[i].replies;
    }
    fprintf(stderr, "SIGTERM under load: exit status %d after %lld ms\n", status, *stop_ms);
    if (status != 0) {
        pc_fail("SIGTERM under load: exit status %d (want 0 within %d ms)", status, STOP_BOUND_MS);
        pc_server_dump_log(srv, 8000);
    } else if (pc_server_log_has(srv, "Received SIGTERM") != 1) {
        pc_fail("the server log does not say it received SIGTERM");
    }
    return status;
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    if (srv.external) {
        printf("test_chaos_signals: needs a server of its own (not PC_SERVER_PORT); skipped\n");
        return 0;
    }
    pc_spread_keys("sig:", keys);
    struct pc_conn *ctl = pc_conn_open(srv.port);
    if (!ctl)
        return 2;
    long long shards = srv.is_redis ? 1 : pc_info_ll(ctl, "shard_threads");
    check_sigpipe(&srv, ctl);
    pc_conn_close(&ctl);

    long long replies = 0, worst_ms = 0;
    long max_rss = -1;
    int worst_status = 0;
    for (int round = 0; round < ROUNDS; round++) {
        if (round > 0 && pc_test_setup(argc, argv, &srv) != 0)
            return 2;
        long long ms;
        int status = sigterm_under_load(&srv, &replies, &ms);
        if (status != 0)
            worst_status = status;
        worst_ms = ms > worst_ms ? ms : worst_ms;
        max_rss = srv.max_rss_kb > max_rss ? srv.max_rss_kb : max_rss;
        if (status == 0 && pc_failures() == 0 && !getenv("PC_KEEP_LOGS"))
            unlink(srv.log_path);
    }
    srv.exit_status = worst_status;
    srv.max_rss_kb = max_rss;
    char load[200], faults[200];
    snprintf(load, sizeof(load),
             "%d resets during %d x 1 MB replies; %d servers x %d loaders with 2 x %d-command cross-shard "
             "pipelines in flight over %lld shard threads (%lld replies)",
             RESETS, BIG_GETS, ROUNDS, LOADERS, PIPELINE, shards, replies);
    snprintf(faults, sizeof(faults), "RST mid-write (SIGPIPE); SIGTERM under load (slowest exit %lld ms)",
             worst_ms);
    pc_reliability_line(&srv, "signals", load, faults, 0, -1);
    return pc_test_done("test_chaos_signals");
}
