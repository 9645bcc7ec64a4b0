/*
 * test_chaos_hotshard: one shard flooded from the others while other clients
 * use the other shards.
 *
 * The server runs with --inbox-size 16 (handoff-credits stays 256): with 3
 * sending shards up to 768 batches can be bound for the hot shard at once,
 * so its inbox fills and the senders must stop reading from their clients
 * until it drains (ARCHITECTURE.md rule 4).  With the default 1024 it never fills.
 *
 * - Flooders: FLOODERS connections homed on shards other than the hot one
 *   (CLIENT INFO shard=; any shard when there is only one), each streaming
 *   `rounds` pipelines of PIPELINE commands from a writer thread: SETs of
 *   200-byte values on KEYS keys of the hot shard ({hot} hash tag) and one
 *   INCR of its own counter there; a reader thread reads every reply.
 * - Victims: VICTIMS clients SET and GET keys of the other shards, one
 *   command at a time, as long as the flood lasts: each reply must come
 *   within REPLY_WAIT_MS and be right (a bounded wait, not a speed).
 * - Backpressure shows: with more than one shard, INFO shards inbox_full
 *   sums to more than 0.
 * - Memory stays bounded: the server's peak RSS (VmHWM) ends under its RSS
 *   before the flood + RSS_BOUND_KB (64 MB).  What the server may hold at
 *   once is bounded by design: the live data (KEYS keys of ~250 B, under
 *   1 MB); per flooding connection one read (16 KB) of unparsed input and the
 *   replies of what it parsed; per sending shard at most handoff-credits (256)
 *   batches, each one read's commands and their replies (~20 KB): 3 x 256 x
 *   20 KB = 15 MB; the inbox is a fixed ring.  64 MB is four times that
 *   with room for the allocator, and far under the ~400 MB the flood sends
 *   (an unbounded queue in front of the hot shard could hold most of it).
 *   Not checked under a sanitizer (its allocator holds freed memory back;
 *   `rounds` is cut to an eighth there).
 * - Nothing acknowledged is lost: each flooder's counter equals the INCR
 *   replies it read; the hot shard holds the keys.
 * Prints the RELIABILITY line of the scenario.
 */
#include "testclient.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define FLOODERS 8
#define PIPELINE 500
#define KEYS 1000
#define VALUE_SIZE 200
#define VICTIMS 2
#define REPLY_WAIT_MS 10000
#define RSS_BOUND_KB (64 * 1024)
#define MAX_SHARDS 64

/* the global-lock control build has no handoff (no inbox to fill) and one
 * store, whose figures INFO shows on shard 0's line */
#ifdef PERCORE_GLOBAL_LOCK
static const bool sharded = false;
#else
static const bool sharded = true;
#endif
static int port;
static int rounds = 400;
static int hot_shard;
static int nshards;
static char value[VALUE_SIZE + 1];
static atomic_int flooding;

struct flooder {
    int id;
    struct pc_conn *conn;
    long long incr_read; /* INCR replies read: the counter's acknowledged value */
    long long replies;
};

static void *flood_writer(void *arg)
{
    struct flooder *f = arg;
    char counter[64];
    snprintf(counter, sizeof(counter), "{hot}:ctr:%d", f->id);
    for (int r = 0; r < rounds; r++) {
        char *req = NULL;
        size_t len = 0, cap = 0;
        for (int j = 0; j < PIPELINE - 1; j++) {
            char key[64];
            snprintf(key, sizeof(key), "{hot}:k%d", (f->id * 7919 + r * PIPELINE + j) % KEYS);
            const char *a[] = {"SET", key, value};
            pc_resp_encode(&req, &len, &cap, 3, a, NULL);
        }
        const char *incr[] = {"INCR", counter};
        pc_resp_encode(&req, &len, &cap, 2, incr, NULL);
        int ok = pc_conn_write(f->conn, req, len) == 0;
        free(req);
        if (!ok) {
            pc_fail("flooder %d: write failed in round %d", f->id, r);
            break;
        }
    }
    return NULL;
}

static void *flood_reader(void *arg)
{
    struct flooder *f = arg;
    for (long long n = 0; n < (long long)rounds * PIPELINE; n++) {
        char *r;
        size_t rl;
        if (pc_conn_read_reply(f->conn, &r, &rl, REPLY_WAIT_MS) != 1) {
            pc_fail("flooder %d: no reply #%lld within %d ms", f->id, n, REPLY_WAIT_MS);
            break;
        }
        f->replies++;
        if (n % PIPELINE == PIPELINE - 1) {
            if (r[0] == ':' && atoll(r + 1) == f->incr_read + 1)
                f->incr_read++;
            else
                pc_fail("flooder %d: INCR #%lld got %s", f->id, f->incr_read + 1, r);
        } else if (strcmp(r, "+OK\r\n") != 0) {
            pc_fail("flooder %d: SET got %s", f->id, r);
        }
        free(r);
    }
    atomic_fetch_sub(&flooding, 1);
    return NULL;
}

struct victim {
    int id;
    const char *key; /* on a shard other than the hot one */
    long long ops;
    long long max_wait_ms;
};

static void *victim_main(void *arg)
{
    struct victim *v = arg;
    struct pc_conn *c = pc_conn_open(port);
    while (c && atomic_load(&flooding) > 0) {
        char val[32], exp[48];
        snprintf(val, sizeof(val), "v%d.%lld", v->id, v->ops);
        snprintf(exp, sizeof(exp), "$%zu\r\n%s\r\n", strlen(val), val);
        long long t0 = pc_now_ms();
        char *set = pc_conn_cmdl(c, NULL, "SET", v->key, val, NULL);
        char *get = pc_conn_cmdl(c, NULL, "GET", v->key, NULL);
        long long waited = pc_now_ms() - t0;
        int ok = set && get && strcmp(set, "+OK\r\n") == 0 && strcmp(get, exp) == 0;
        free(set);
        free(get);
        if (!ok) {
            pc_fail("victim %d: SET/GET %s on a cold shard failed or took over %d ms", v->id, v->key,
                    pc_reply_timeout_ms);
            break;
        }
        v->max_wait_ms = waited > v->max_wait_ms ? waited : v->max_wait_ms;
        v->ops++;
    }
    pc_conn_close(&c);
    return NULL;
}

/* a connection homed on a shard other than the hot one (any, with one shard) */
static struct pc_conn *cold_homed_conn(void)
{
    for (int tries = 0; tries < 200; tries++) {
        struct pc_conn *c = pc_conn_open(port);
        if (!c)
            return NULL;
        int home = pc_conn_home_shard(c);
        if (home >= 0 && (nshards == 1 || home != hot_shard))
            return c;
        pc_conn_close(&c);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    static const char *const more[] = {"--inbox-size", "16", NULL};
    struct pc_server srv;
    if (pc_test_setup_extra(argc, argv, &srv, more) != 0)
        return 2;
    if (srv.is_redis || srv.external) {
        printf("test_chaos_hotshard: needs a percore server of its own; skipped\n");
        return 0;
    }
    port = srv.port;
    pc_reply_timeout_ms = REPLY_WAIT_MS;
    if (pc_sanitized())
        rounds /= 8;
    memset(value, 'h', VALUE_SIZE);
    struct pc_conn *ctl = pc_conn_open(port);
    if (!ctl)
        return 2;
    nshards = (int)pc_info_ll(ctl, "shard_threads");
    if (nshards < 1 || nshards > MAX_SHARDS) {
        pc_fail("INFO shard_threads: %d", nshards);
        return pc_test_done("test_chaos_hotshard");
    }
    hot_shard = pc_slot_shard(pc_key_slot("hot", 3), nshards);

    char spread[PC_SPREAD_KEYS][64];
    pc_spread_keys("cold:", spread);
    struct victim vs[VICTIMS];
    int nv = 0;
    for (int i = 0; i < PC_SPREAD_KEYS && nv < VICTIMS; i++)
        if (nshards == 1 || pc_slot_shard(pc_key_slot(spread[i], strlen(spread[i])), nshards) != hot_shard)
            vs[nv++] = (struct victim){.id = nv, .key = spread[i]};

    struct flooder fl[FLOODERS];
    for (int i = 0; i < FLOODERS; i++) {
        fl[i] = (struct flooder){.id = i, .conn = cold_homed_conn()};
        if (!fl[i].conn) {
            pc_fail("no connection homed off the hot shard %d", hot_shard);
            return pc_test_done("test_chaos_hotshard");
        }
    }
    long rss_before = pc_server_status_kb(&srv, "VmRSS");
    long long inbox_full0 = pc_info_shards_sum(ctl, "inbox_full");

    pthread_t writers[FLOODERS], readers[FLOODERS], victims[VICTIMS];
    atomic_store(&flooding, FLOODERS);
    for (int i = 0; i < FLOODERS; i++) {
        pthread_create(&writers[i], NULL, flood_writer, &fl[i]);
        pthread_create(&readers[i], NULL, flood_reader, &fl[i]);
    }
    for (int i = 0; i < nv; i++)
        pthread_create(&victims[i], NULL, victim_main, &vs[i]);
    long long replies = 0;
    for (int i = 0; i < FLOODERS; i++) {
        pthread_join(writers[i], NULL);
        pthread_join(readers[i], NULL);
        replies += fl[i].replies;
    }
    long long victim_ops = 0, victim_max_ms = 0;
    for (int i = 0; i < nv; i++) {
        pthread_join(victims[i], NULL);
        victim_ops += vs[i].ops;
        victim_max_ms = vs[i].max_wait_ms > victim_max_ms ? vs[i].max_wait_ms : victim_max_ms;
        if (vs[i].ops == 0)
            pc_fail("victim %d completed no request during the flood", i);
    }
    long hwm = pc_server_status_kb(&srv, "VmHWM");
    long long inbox_full = pc_info_shards_sum(ctl, "inbox_full") - inbox_full0;
    for (long long t0 = pc_now_ms(); nshards > 1 && inbox_full <= 0 && pc_now_ms() - t0 < 2000; pc_sleep_ms(100))
        inbox_full = pc_info_shards_sum(ctl, "inbox_full") - inbox_full0; /* merged every stats-interval */
    fprintf(stderr,
            "hot shard %d of %d: %lld flood replies; inbox_full %lld; victims %lld requests, slowest %lld ms; "
            "RSS %ld kB before, peak %ld kB\n",
            hot_shard, nshards, replies, inbox_full, victim_ops, victim_max_ms, rss_before, hwm);
    if (sharded && nshards > 1 && inbox_full <= 0)
        pc_fail("inbox_full stayed 0: the hot shard's inbox (16) never filled, no backpressure was seen");
    if (!pc_sanitized() && rss_before > 0 && hwm > rss_before + RSS_BOUND_KB)
        pc_fail("peak RSS %ld kB, over %ld kB before the flood + %d kB", hwm, rss_before, RSS_BOUND_KB);

    long long lost = 0;
    for (int i = 0; i < FLOODERS; i++) {
        char counter[64];
        snprintf(counter, sizeof(counter), "{hot}:ctr:%d", i);
        char *r = pc_conn_cmdl(ctl, NULL, "GET", counter, NULL);
        const char *nl = r ? strchr(r, '\n') : NULL;
        long long got = nl && r[0] == '$' && r[1] != '-' ? atoll(nl + 1) : 0;
        if (got != fl[i].incr_read) {
            pc_fail("flooder %d: counter %lld, %lld INCRs acknowledged", i, got, fl[i].incr_read);
            lost += got < fl[i].incr_read ? fl[i].incr_read - got : 0;
        }
        free(r);
        pc_conn_close(&fl[i].conn);
    }
    long long hot_keys = pc_info_shard_field(ctl, sharded ? hot_shard : 0, "keys");
    if (hot_keys < KEYS)
        pc_fail("shard %d holds %lld keys: the {hot} keys are not where pc_slot_shard says", hot_shard, hot_keys);
    pc_conn_close(&ctl);
    pc_test_teardown(&srv);
    char load[240], faults[160];
    snprintf(load, sizeof(load),
             "%d clients x %d pipelines x %d commands (%d B values) on shard %d of %d from the others; "
             "%d clients on other shards (%lld requests, slowest %lld ms)",
             FLOODERS, rounds, PIPELINE, VALUE_SIZE, hot_shard, nshards, nv, victim_ops, victim_max_ms);
    snprintf(faults, sizeof(faults), "one hot shard, inbox-size 16: inbox_full %lld; peak RSS bound %d MB over %ld kB",
             inbox_full, RSS_BOUND_KB / 1024, rss_before);
    pc_reliability_line(&srv, "hot shard", load, faults, 0, lost);
    return pc_test_done("test_chaos_hotshard");
}
