/*
 * test_latency: LATENCY HISTOGRAM's figures, end to end.
 *
 * Exactly GETS GETs go out over keys that cover every shard (so with 4
 * shards most run on a shard other than the connection's).  The aggregator
 * merges the shards' histograms every stats-interval, so LATENCY HISTOGRAM
 * get is polled (up to 3 s) until it shows them; then, as Redis 7.0 replies:
 * one entry "get" -> [calls, GETS, histogram_usec, [label, count, ...]],
 * labels from Redis's series (1 2 4 8 16 33 66 ... usec: the tops of its
 * power-of-two hdr buckets), strictly rising, counts cumulative (rising) and
 * the last one GETS.  Also: unknown names skipped, a container's name
 * brings its subcommands, the no-argument form lists every command called,
 * RESP3 gives maps, and with latency-tracking off nothing more is recorded.
 * No assertion on the latencies themselves (no speed asserts).
 *
 * Against a real redis-server (--server /usr/bin/redis-server) it passes
 * too, which keeps the expectations honest.
 */
#include "testclient.h"

#include <stdlib.h>
#include <string.h>

#define GETS 600

/* the usec labels Redis 7.0 prints: the tops of the hdr buckets holding 1024 ns x 2^k, read off a real
 * redis-server (DEBUG SLEEP 0.13 shows 135266) */
static const long long redis_labels[] = {1,      2,      4,      8,       16,      33,      66,
                                         132,    264,    528,    1056,    2113,    4227,    8454,
                                         16908,  33816,  67633,  135266,  270532,  541065,  1082130};

static int is_redis_label(long long v)
{
    for (size_t i = 0; i < sizeof redis_labels / sizeof redis_labels[0]; i++)
        if (redis_labels[i] == v)
            return 1;
    return 0;
}

static redisReply *cmd(redisContext *ctx, int argc, const char **argv)
{
    redisReply *r = redisCommandArgv(ctx, argc, argv, NULL);
    if (!r)
        pc_fail("%s %s: no reply (%s)", argv[0], argc > 1 ? argv[1] : "", ctx->errstr);
    return r;
}

/* the entry of `name` in a LATENCY HISTOGRAM reply (RESP2: name, [calls, n, histogram_usec, [...]]) */
static const redisReply *entry_of(const redisReply *r, const char *name)
{
    if (!r || r->type != REDIS_REPLY_ARRAY)
        return NULL;
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        if (r->element[i]->type == REDIS_REPLY_STRING && strcmp(r->element[i]->str, name) == 0)
            return r->element[i + 1];
    return NULL;
}

/* calls of an entry, -1 when it is malformed */
static long long entry_calls(const redisReply *e)
{
    if (!e || e->type != REDIS_REPLY_ARRAY || e->elements != 4 || e->element[0]->type != REDIS_REPLY_STRING ||
        strcmp(e->element[0]->str, "calls") != 0 || e->element[1]->type != REDIS_REPLY_INTEGER ||
        e->element[2]->type != REDIS_REPLY_STRING || strcmp(e->element[2]->str, "histogram_usec") != 0 ||
        e->element[3]->type != REDIS_REPLY_ARRAY)
        return -1;
    return e->element[1]->integer;
}

/* the histogram of an entry: Redis's labels, rising; counts rising, the last = calls */
static void check_buckets(const char *name, const redisReply *e)
{
    long long calls = entry_calls(e);
    if (calls < 0) {
        pc_fail("%s: entry is not [calls, N, histogram_usec, [...]]", name);
        return;
    }
    const redisReply *h = e->element[3];
    if (h->elements == 0 || h->elements % 2 != 0) {
        pc_fail("%s: histogram_usec has %zu elements, want label/count pairs", name, h->elements);
        return;
    }
    long long prev_label = 0, prev_count = 0;
    for (size_t i = 0; i < h->elements; i += 2) {
        if (h->element[i]->type != REDIS_REPLY_INTEGER || h->element[i + 1]->type != REDIS_REPLY_INTEGER) {
            pc_fail("%s: histogram_usec holds a non-integer", name);
            return;
        }
        long long label = h->element[i]->integer, count = h->element[i + 1]->integer;
        if (!is_redis_label(label))
            pc_fail("%s: bucket %lld usec is not one of Redis's power-of-two buckets", name, label);
        if (label <= prev_label)
            pc_fail("%s: bucket %lld after %lld: labels must rise", name, label, prev_label);
        if (count <= prev_count)
            pc_fail("%s: cumulative count %lld after %lld: an empty bucket is shown or counts fall", name, count,
                    prev_count);
        prev_label = label;
        prev_count = count;
    }
    if (prev_count != calls)
        pc_fail("%s: last cumulative count %lld, want calls %lld", name, prev_count, calls);
}

/* LATENCY HISTOGRAM get, polled until get shows `want` calls (3 s at most) */
static redisReply *wait_get_calls(redisContext *ctx, long long want)
{
    const char *argv[] = {"LATENCY", "HISTOGRAM", "get"};
    long long deadline = pc_now_ms() + 3000;
    for (;;) {
        redisReply *r = cmd(ctx, 3, argv);
        if (!r || entry_calls(entry_of(r, "get")) == want || pc_now_ms() > deadline)
            return r;
        freeReplyObject(r);
        pc_sleep_ms(20);
    }
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    redisContext *ctx = pc_hiredis_connect(srv.port);
    struct pc_conn *raw = pc_conn_open(srv.port);
    if (!ctx || !raw)
        return 2;
    pc_expect(raw, "+OK\r\n", "FLUSHALL", NULL);
    pc_expect(raw, "+OK\r\n", "CONFIG", "RESETSTAT", NULL);
    char keys[PC_SPREAD_KEYS][64];
    pc_spread_keys("lat:", keys);
    for (int i = 0; i < PC_SPREAD_KEYS; i++)
        pc_expect(raw, "+OK\r\n", "SET", keys[i], "v", NULL);

    /* GETS GETs, pipelined */
    for (int i = 0; i < GETS; i++)
        redisAppendCommand(ctx, "GET %s", keys[i % PC_SPREAD_KEYS]);
    for (int i = 0; i < GETS; i++) {
        redisReply *r = NULL;
        if (redisGetReply(ctx, (void **)&r) != REDIS_OK || !r || r->type != REDIS_REPLY_STRING)
            pc_fail("GET %d: no value", i);
        freeReplyObject(r);
    }

    redisReply *r = wait_get_calls(ctx, GETS);
    if (r) {
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2)
            pc_fail("LATENCY HISTOGRAM get: want one name/histogram pair, got %zu elements", r->elements);
        const redisReply *e = entry_of(r, "get");
        if (entry_calls(e) != GETS)
            pc_fail("LATENCY HISTOGRAM get: calls %lld, want %d", entry_calls(e), GETS);
        check_buckets("get", e);
        freeReplyObject(r);
    }

    /* unknown names are skipped; the order is the arguments' */
    const char *some[] = {"LATENCY", "HISTOGRAM", "nosuch", "set", "config|nosuch", "get", "zunionstore"};
    r = cmd(ctx, 7, some);
    if (r) {
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 4 || entry_of(r, "set") != r->element[1] ||
            entry_of(r, "get") != r->element[3])
            pc_fail("LATENCY HISTOGRAM nosuch set config|nosuch get zunionstore: want set then get only");
        else if (entry_calls(r->element[1]) != PC_SPREAD_KEYS)
            pc_fail("LATENCY HISTOGRAM set: calls %lld, want %d", entry_calls(r->element[1]), PC_SPREAD_KEYS);
        else
            check_buckets("set", r->element[1]);
        freeReplyObject(r);
    }

    /* a container's name: its subcommands (CONFIG RESETSTAT ran once, after the reset) */
    const char *config[] = {"LATENCY", "HISTOGRAM", "config"};
    r = cmd(ctx, 3, config);
    if (r) {
        const redisReply *e = entry_of(r, "config|resetstat");
        if (entry_calls(e) != 1)
            pc_fail("LATENCY HISTOGRAM config: config|resetstat calls %lld, want 1", entry_calls(e));
        else
            check_buckets("config|resetstat", e);
        if (entry_of(r, "config"))
            pc_fail("LATENCY HISTOGRAM config: an entry for the container itself");
        freeReplyObject(r);
    }

    /* no names: every command with values, get and set among them */
    const char *all[] = {"LATENCY", "HISTOGRAM"};
    r = cmd(ctx, 2, all);
    if (r) {
        if (entry_calls(entry_of(r, "get")) != GETS || entry_calls(entry_of(r, "set")) != PC_SPREAD_KEYS)
            pc_fail("LATENCY HISTOGRAM: get and set missing or with wrong calls");
        if (entry_of(r, "zunionstore"))
            pc_fail("LATENCY HISTOGRAM: a command never called is listed");
        for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2)
            check_buckets(r->element[i]->str, r->element[i + 1]);
        freeReplyObject(r);
    }

    /* RESP3: maps at every level */
    size_t len;
    free(pc_conn_cmdl(raw, &len, "HELLO", "3", NULL));
    char *b = pc_conn_cmdl(raw, &len, "LATENCY", "HISTOGRAM", "get", NULL);
    static const char resp3_head[] = "%1\r\n$3\r\nget\r\n%2\r\n$5\r\ncalls\r\n:";
    if (!b || strncmp(b, resp3_head, strlen(resp3_head)) != 0 || !strstr(b, "histogram_usec\r\n%"))
        pc_fail("LATENCY HISTOGRAM get in RESP3: want %%1 get %%2 calls .. histogram_usec %%n, got %s",
                b ? b : "(nothing)");
    free(b);
    pc_expect(raw, "%0\r\n", "LATENCY", "HISTOGRAM", "nosuch", NULL);

    /* latency-tracking no: calls go on, the histogram does not grow */
    pc_expect(raw, "+OK\r\n", "CONFIG", "SET", "latency-tracking", "no", NULL);
    for (int i = 0; i < 50; i++)
        pc_expect(raw, "$1\r\nv\r\n", "GET", keys[i % PC_SPREAD_KEYS], NULL);
    pc_expect(raw, "+OK\r\n", "CONFIG", "SET", "latency-tracking", "yes", NULL);
    pc_expect(raw, "$1\r\nv\r\n", "GET", keys[0], NULL); /* tracked: the one that ends the wait below */
    r = wait_get_calls(ctx, GETS + 1);
    if (r) {
        if (entry_calls(entry_of(r, "get")) != GETS + 1)
            pc_fail("latency-tracking no: get calls %lld, want %d (the untracked 50 left out)",
                    entry_calls(entry_of(r, "get")), GETS + 1);
        freeReplyObject(r);
    }

    pc_conn_close(&raw);
    redisFree(ctx);
    pc_test_teardown(&srv);
    return pc_test_done("test_latency");
}
