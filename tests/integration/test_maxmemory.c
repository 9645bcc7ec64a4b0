/*
 * test_maxmemory: maxmemory and every maxmemory-policy, end to end.
 *
 * - noeviction: a flood of 1000-byte SETs at maxmemory 2mb gets +OK until
 *   the shards are full, then exactly Redis 7.0's
 *   "-OOM command not allowed when used memory > 'maxmemory'." and nothing
 *   else; the server never aborts; reads (GET, MGET, DBSIZE) and DEL still
 *   work, MSET split across shards and SUNIONSTORE gathered across them are
 *   refused with the same error, and lifting
 *   maxmemory lets writes in again.
 * - each eviction policy, maxmemory 4mb, writing 10x that: no write is
 *   refused, INFO used_memory ends up under maxmemory (10% tolerance: a
 *   shard may overshoot by a value and a table resize), DBSIZE is bounded
 *   and keys disappeared; evicted_keys, once INFO publishes it, accounts for
 *   them exactly.  volatile-* never evict the keys without a TTL; under
 *   allkeys-lfu a key read all along survives.
 * - maxmemory lowered under allkeys-lru with keys on every shard: every
 *   shard gets under its share (maxmemory / shards) within a few timer
 *   ticks although only INFO runs, on one connection: a command evicts on
 *   the shard it runs on, so the shards other than the connection's home
 *   (the one whose INFO shards `commands` grows) show that the shards'
 *   timers evict.  evicted_keys accounts for every key gone.  (The
 *   global-lock build has one store, shown on shard 0's line, that shard 0's
 *   timer keeps under the whole of maxmemory.)
 * - OBJECT FREQ: 5 for a new key under allkeys-lfu, growing with reads;
 *   OBJECT IDLETIME refused under LFU and OBJECT FREQ under LRU, with
 *   Redis's texts.
 */
#include "testclient.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OOM_REPLY "-OOM command not allowed when used memory > 'maxmemory'.\r\n"
#define VALUE_SIZE 1000
#define CHUNK 500

static char value[VALUE_SIZE + 1];

/* a field of INFO's output (all sections), -1 when absent */
static long long info_ll(struct pc_conn *c, const char *field)
{
    size_t len;
    char *r = pc_conn_cmdl(c, &len, "INFO", "everything", NULL);
    long long v = -1;
    char pat[64];
    snprintf(pat, sizeof(pat), "\r\n%s:", field);
    const char *p = r ? strstr(r, pat) : NULL;
    if (p)
        v = atoll(p + strlen(pat));
    free(r);
    return v;
}

static long long int_cmd(struct pc_conn *c, const char *a0, const char *a1)
{
    size_t len;
    char *r = pc_conn_cmdl(c, &len, a0, a1, NULL);
    long long v = -1;
    if (r && r[0] == ':')
        v = atoll(r + 1);
    else
        pc_fail("%s %s: want an integer, got %s", a0, a1 ? a1 : "", r ? r : "(nothing)");
    free(r);
    return v;
}

struct flood {
    long ok;  /* +OK replies */
    long oom; /* exact OOM errors */
    long bad; /* anything else */
};

/* SET prefix<i> value [EX 100000] for i in [0, n), pipelined CHUNK at a time */
static struct flood flood(struct pc_conn *c, const char *prefix, long n, int with_ttl)
{
    struct flood f = {0, 0, 0};
    for (long base = 0; base < n; base += CHUNK) {
        char *req = NULL;
        size_t len = 0, cap = 0;
        long m = n - base < CHUNK ? n - base : CHUNK;
        for (long i = 0; i < m; i++) {
            char key[64];
            snprintf(key, sizeof(key), "%s%ld", prefix, base + i);
            const char *argv[] = {"SET", key, value, "EX", "100000"};
            pc_resp_encode(&req, &len, &cap, with_ttl ? 5 : 3, argv, NULL);
        }
        if (pc_conn_write(c, req, len) != 0) {
            pc_fail("flood: write failed");
            free(req);
            return f;
        }
        free(req);
        for (long i = 0; i < m; i++) {
            char *r;
            size_t rl;
            if (pc_conn_read_reply(c, &r, &rl, 20000) != 1) {
                pc_fail("flood %s: no reply to SET %ld", prefix, base + i);
                return f;
            }
            if (strcmp(r, "+OK\r\n") == 0)
                f.ok++;
            else if (strcmp(r, OOM_REPLY) == 0)
                f.oom++;
            else if (f.bad++ < 3)
                pc_fail("flood %s: SET %ld got %s", prefix, base + i, r);
            free(r);
        }
    }
    return f;
}

static void set_config(struct pc_conn *c, const char *key, const char *val)
{
    pc_expect(c, "+OK\r\n", "CONFIG", "SET", key, val, NULL);
}

static void phase_noeviction(struct pc_conn *c)
{
    set_config(c, "maxmemory-policy", "noeviction");
    set_config(c, "maxmemory", "2mb");
    struct flood f = flood(c, "ne:", 20000, 0);
    fprintf(stderr, "noeviction: %ld OK, %ld OOM\n", f.ok, f.oom);
    if (f.ok <= 0 || f.oom <= 0)
        pc_fail("noeviction at 2mb with 20 MB written: want some +OK then OOM errors, got %ld OK %ld OOM",
                f.ok, f.oom);
    pc_expect(c, "+PONG\r\n", "PING", NULL);
    char exp[VALUE_SIZE + 32];
    snprintf(exp, sizeof(exp), "$%d\r\n%s\r\n", VALUE_SIZE, value);
    pc_expect(c, exp, "GET", "ne:0", NULL);
    long long n = int_cmd(c, "DBSIZE", NULL);
    if (n != f.ok)
        pc_fail("noeviction: DBSIZE %lld, want the %ld keys acknowledged", n, f.ok);
    pc_expect(c, "*2\r\n$-1\r\n$-1\r\n", "MGET", "nokey:a", "nokey:b", NULL);
    /* a write flagged denyoom is refused everywhere: MSET over every shard */
    char keys[PC_SPREAD_KEYS][64];
    pc_spread_keys("ms:", keys);
    const char *ms[1 + 2 * PC_SPREAD_KEYS];
    ms[0] = "MSET";
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        ms[1 + 2 * i] = keys[i];
        ms[2 + 2 * i] = value;
    }
    pc_expectv(c, OOM_REPLY, strlen(OOM_REPLY), 1 + 2 * PC_SPREAD_KEYS, ms, NULL);
    pc_expect(c, OOM_REPLY, "SUNIONSTORE", keys[0], keys[1], keys[2], NULL); /* gathered across shards */
    pc_expect(c, OOM_REPLY, "SET", "ne:0", "other", NULL);
    pc_expect(c, OOM_REPLY, "APPEND", "ne:0", "more", NULL);
    pc_expect(c, ":1\r\n", "DEL", "ne:0", NULL); /* not denyoom */
    set_config(c, "maxmemory", "0");
    pc_expect(c, "+OK\r\n", "SET", "ne:0", "back", NULL);
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);
}

/* INFO used_memory, waiting up to 3 s for the published figure to settle under bound */
static long long settled_used_memory(struct pc_conn *c, long long bound)
{
    long long t0 = pc_now_ms(), used;
    pc_sleep_ms(300); /* the shards publish their memory figure on their timer */
    for (;;) {
        used = info_ll(c, "used_memory");
        if ((used >= 0 && used <= bound) || pc_now_ms() - t0 > 3000)
            return used;
        pc_sleep_ms(100);
    }
}

static void phase_policy(struct pc_conn *c, const char *policy)
{
    const long long maxmem = 4 << 20;
    const long written = 10 * (maxmem / VALUE_SIZE / 10) * 10; /* 10x maxmemory, in 10 parts */
    int is_volatile = strncmp(policy, "volatile", 8) == 0;
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);
    long long ev0 = info_ll(c, "evicted_keys");
    set_config(c, "maxmemory-policy", policy);
    set_config(c, "maxmemory", "4mb");
    char keep[PC_SPREAD_KEYS][64];
    pc_spread_keys("keep:", keep);
    for (int i = 0; i < PC_SPREAD_KEYS; i++)
        pc_expect(c, "+OK\r\n", "SET", keep[i], "persistent", NULL);
    pc_expect(c, "+OK\r\n", "SET", "hot", "x", NULL);
    struct flood f = {0, 0, 0};
    for (long part = 0; part < 10; part++) { /* the hot key is read between parts */
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "%s:%ld:", policy, part);
        struct flood p = flood(c, prefix, written / 10, is_volatile);
        f.ok += p.ok;
        f.oom += p.oom;
        f.bad += p.bad;
        for (int r = 0; r < 20; r++)
            int_cmd(c, "EXISTS", "hot");
    }
    if (f.ok != written)
        pc_fail("%s: %ld OK, %ld OOM, %ld other of %ld SETs; want every one OK", policy, f.ok, f.oom, f.bad,
                written);
    long long bound = maxmem + maxmem / 10;
    long long used = settled_used_memory(c, bound);
    long long dbsize = int_cmd(c, "DBSIZE", NULL);
    /* INFO reads the aggregator's snapshot: let it catch up with DBSIZE */
    long long evicted = info_ll(c, "evicted_keys") - ev0;
    for (int wait = 0; wait < 40 && evicted != written + PC_SPREAD_KEYS + 1 - dbsize; wait++) {
        usleep(50 * 1000);
        evicted = info_ll(c, "evicted_keys") - ev0;
    }
    fprintf(stderr, "%s: wrote %ld keys (%ld MB); used_memory %lld (maxmemory %lld), DBSIZE %lld, "
            "evicted_keys %lld\n", policy, written, written * VALUE_SIZE >> 20, used, maxmem, dbsize, evicted);
    if (used < 0 || used > bound)
        pc_fail("%s: used_memory %lld after writing 10x maxmemory %lld (bound %lld)", policy, used, maxmem, bound);
    if (used >= 0 && used < maxmem / 4)
        pc_fail("%s: used_memory %lld: eviction threw away far more than it had to", policy, used);
    if (dbsize <= 0 || dbsize >= written / 2)
        pc_fail("%s: DBSIZE %lld after %ld writes under maxmemory: keys are not being evicted", policy, dbsize,
                written);
    long long total = written + PC_SPREAD_KEYS + 1;
    if (evicted != total - dbsize)
        pc_fail("%s: evicted_keys %lld, want %lld (written %lld, DBSIZE %lld)", policy, evicted, total - dbsize,
                total, dbsize);
    if (is_volatile) {
        const char *ex[1 + PC_SPREAD_KEYS];
        ex[0] = "EXISTS";
        for (int i = 0; i < PC_SPREAD_KEYS; i++)
            ex[1 + i] = keep[i];
        char want[16];
        snprintf(want, sizeof(want), ":%d\r\n", PC_SPREAD_KEYS);
        pc_expectv(c, want, strlen(want), 1 + PC_SPREAD_KEYS, ex, NULL);
        pc_expect(c, ":1\r\n", "EXISTS", "hot", NULL);
    }
    /* that allkeys-lfu prefers to keep a frequently read key is sampled, so
     * probable, not certain, here: tests/unit/test_evict.c checks it exactly */
    set_config(c, "maxmemory", "0");
}

#define MAX_SHARDS 64

struct shard_figures {
    int n;
    long long keys[MAX_SHARDS];
    long long used_memory[MAX_SHARDS];
    long long commands[MAX_SHARDS];
};

/* INFO shards: "shard<i>:cpu=..,node=..,keys=..,used_memory=..,commands=..,..." */
static void shard_figures(struct pc_conn *c, struct shard_figures *f)
{
    size_t len;
    char *r = pc_conn_cmdl(c, &len, "INFO", "shards", NULL);
    memset(f, 0, sizeof(*f));
    for (const char *p = r ? strstr(r, "\nshard") : NULL; p && f->n < MAX_SHARDS; p = strstr(p + 1, "\nshard")) {
        const char *k = strstr(p, ",keys="), *u = strstr(p, ",used_memory="), *m = strstr(p, ",commands=");
        if (!k || !u || !m)
            break;
        f->keys[f->n] = atoll(k + 6);
        f->used_memory[f->n] = atoll(u + 13);
        f->commands[f->n] = atoll(m + 10);
        f->n++;
    }
    free(r);
}

static void phase_lowered(struct pc_conn *c)
{
    const long long keys_written = 4000, lowered = 1 << 20;
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);
    set_config(c, "maxmemory", "0");
    long long ev0 = info_ll(c, "evicted_keys");
    struct flood f = flood(c, "low:", keys_written, 0);
    if (f.ok != keys_written)
        pc_fail("lowered: %ld of %lld SETs acknowledged without maxmemory", f.ok, keys_written);
    set_config(c, "maxmemory-policy", "allkeys-lru");
    set_config(c, "maxmemory", "1mb");
    /* from here on only INFO, on this connection */
    struct shard_figures before, now;
    shard_figures(c, &before);
#ifdef PERCORE_GLOBAL_LOCK
    const int stores = 1; /* the control build: one store, its figures on shard 0's line */
#else
    const int stores = before.n;
#endif
    long long budget = lowered / (stores ? stores : 1), deadline = pc_now_ms() + 5000;
    bool all_under;
    do {
        pc_sleep_ms(100);
        shard_figures(c, &now);
        all_under = now.n == before.n && now.n > 0;
        for (int i = 0; i < stores && i < now.n; i++)
            all_under = all_under && now.used_memory[i] <= budget;
    } while (!all_under && pc_now_ms() < deadline);
    if (now.n <= 0) {
        pc_fail("lowered: INFO shards lists no shard");
        return;
    }
    int home = 0;
    for (int i = 0; i < now.n; i++)
        if (now.commands[i] - before.commands[i] > now.commands[home] - before.commands[home])
            home = i;
    long long keys = 0;
    for (int i = 0; i < stores && i < now.n; i++) {
        keys += now.keys[i];
        fprintf(stderr, "lowered: shard %d%s: %lld keys, used_memory %lld (budget %lld)\n", i,
                i == home ? " (home)" : "", now.keys[i], now.used_memory[i], budget);
        if (now.used_memory[i] > budget)
            pc_fail("lowered: shard %d%s still holds %lld bytes, over its share %lld of maxmemory 1mb", i,
                    i == home ? " (home)" : " (no command ran there: its timer must evict)", now.used_memory[i],
                    budget);
        if (now.keys[i] <= 0 || now.keys[i] >= before.keys[i])
            pc_fail("lowered: shard %d went from %lld to %lld keys", i, before.keys[i], now.keys[i]);
    }
    long long evicted = info_ll(c, "evicted_keys") - ev0;
    for (int wait = 0; wait < 40 && evicted != keys_written - keys; wait++) {
        pc_sleep_ms(50);
        evicted = info_ll(c, "evicted_keys") - ev0;
    }
    if (evicted != keys_written - keys)
        pc_fail("lowered: evicted_keys %lld, want %lld (written %lld, left %lld)", evicted, keys_written - keys,
                keys_written, keys);
    set_config(c, "maxmemory", "0");
    set_config(c, "maxmemory-policy", "noeviction");
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);
}

static void phase_object_freq(struct pc_conn *c)
{
    set_config(c, "maxmemory-policy", "allkeys-lfu");
    pc_expect(c, "+OK\r\n", "SET", "f", "v", NULL);
    pc_expect(c, ":5\r\n", "OBJECT", "FREQ", "f", NULL);
    pc_expect(c, "$-1\r\n", "OBJECT", "FREQ", "nokey", NULL);
    for (int i = 0; i < 300; i++)
        pc_expect(c, "$1\r\nv\r\n", "GET", "f", NULL);
    size_t len;
    char *r = pc_conn_cmdl(c, &len, "OBJECT", "FREQ", "f", NULL);
    if (!r || r[0] != ':' || atoll(r + 1) <= 5 || atoll(r + 1) > 255)
        pc_fail("OBJECT FREQ after 300 reads under allkeys-lfu: %s (want more than 5)", r ? r : "(nothing)");
    free(r);
    pc_expect(c, "-ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
                 "switching between policies at runtime LRU and LFU data will take some time to adjust.\r\n",
              "OBJECT", "IDLETIME", "f", NULL);
    set_config(c, "maxmemory-policy", "allkeys-lru");
    pc_expect(c, "-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
                 "that when switching between policies at runtime LRU and LFU data will take some time to "
                 "adjust.\r\n",
              "OBJECT", "FREQ", "f", NULL);
    set_config(c, "maxmemory-policy", "noeviction");
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    struct pc_conn *c = pc_conn_open(srv.port);
    if (!c)
        return 2;
    memset(value, 'v', VALUE_SIZE);
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);

    phase_object_freq(c);
    phase_noeviction(c);
    if (!srv.is_redis) /* INFO shards is percore's */
        phase_lowered(c);
    static const char *const policies[] = {"allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru",
                                           "volatile-lfu", "volatile-random", "volatile-ttl"};
    for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
        phase_policy(c, policies[i]);
    if (!pc_server_alive(&srv))
        pc_fail("the server died");

    pc_conn_close(&c);
    pc_test_teardown(&srv);
    return pc_test_done("test_maxmemory");
}
