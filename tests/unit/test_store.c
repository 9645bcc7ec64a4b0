/*
 * test_store: the per-shard keyspace.  Keys are binary (they hold NUL
 * bytes); time is a fake `now` passed in, so expiry is deterministic.
 * RANDOMKEY's draws are checked for fairness by chi-square.
 */
#include "percore/hash.h"
#include "percore/mem.h"
#include "percore/set.h"
#include "percore/store.h"
#include "percore/util.h"

#include "check.h"
#include "chisq.h"

#include <stdlib.h>

#define NOW 1000000 /* the fake clock, ms */

/* key i: "k\0" + decimal i, so every key holds a NUL byte */
static size_t key_of(char *buf, long i)
{
    buf[0] = 'k';
    buf[1] = '\0';
    return 2 + (size_t)snprintf(buf + 2, 30, "%ld", i);
}

static long index_of(const char *key, size_t klen)
{
    char tmp[32];
    if (klen < 3 || klen > 30 || key[0] != 'k' || key[1] != '\0')
        return -1;
    memcpy(tmp, key + 2, klen - 2);
    tmp[klen - 2] = '\0';
    return strtol(tmp, NULL, 10);
}

static void put(struct store *s, int db, long i, long v)
{
    char k[32];
    size_t n = key_of(k, i);
    store_set(s, db, k, n, object_string_from_ll(v), 0);
}

static struct object *get(struct store *s, int db, long i, int64_t now)
{
    char k[32];
    size_t n = key_of(k, i);
    return store_lookup(s, db, k, n, now);
}

static int del(struct store *s, int db, long i, int64_t now)
{
    char k[32];
    size_t n = key_of(k, i);
    return store_delete(s, db, k, n, now);
}

static int expire_at(struct store *s, int db, long i, int64_t when)
{
    char k[32];
    size_t n = key_of(k, i);
    return store_set_expire(s, db, k, n, when, NOW);
}

static int64_t ttl_of(struct store *s, int db, long i, int64_t now)
{
    char k[32];
    size_t n = key_of(k, i);
    return store_get_expire(s, db, k, n, now);
}

static bool value_is(struct object *o, long v)
{
    char buf[32];
    size_t len, n = (size_t)snprintf(buf, sizeof buf, "%ld", v);
    const char *p = o ? object_string_ptr(o, &len) : NULL;
    return p && len == n && memcmp(p, buf, n) == 0;
}

static void settle(struct store *s)
{
    for (int i = 0; i < 10000; i++)
        store_rehash_step(s);
}

/* ---- scan helpers */

struct seen {
    unsigned char *hit; /* per key index */
    long max;           /* indexes < max are tracked */
    long calls;         /* callback count */
    long bad;           /* keys not in range */
};

static void on_key(void *arg, const char *key, size_t klen, struct object *val)
{
    struct seen *sn = arg;
    long i = index_of(key, klen);
    sn->calls++;
    if (i < 0 || i >= sn->max || val == NULL) {
        sn->bad++;
        return;
    }
    if (sn->hit[i] < 255)
        sn->hit[i]++;
}

static void seen_init(struct seen *sn, long max)
{
    sn->hit = calloc((size_t)max, 1);
    sn->max = max;
    sn->calls = sn->bad = 0;
}

static void test_million(void)
{
    const long N = 1000000;
    struct store *s = store_create(16);
    size_t base = store_memory(s);
    for (long i = 0; i < N; i++)
        put(s, 0, i, i);
    CHECK_EQ_LL(store_size(s, 0), N);
    CHECK_EQ_LL(store_size(s, 1), 0);
    long ok = 0;
    for (long i = 0; i < N; i++)
        ok += value_is(get(s, 0, i, NOW), i);
    CHECK_EQ_LL(ok, N);
    CHECK(get(s, 0, N, NOW) == NULL);
    CHECK(store_lookup(s, 0, "k", 1, NOW) == NULL);
    CHECK(store_lookup(s, 0, "k\0", 2, NOW) == NULL);
    CHECK(store_lookup(s, 1, "k\0" "5", 3, NOW) == NULL);
    /* replace returns 0 and keeps the count */
    CHECK_EQ_LL(store_set(s, 0, "k\0" "7", 3, object_string_from_ll(-7), 0), 0);
    CHECK(value_is(get(s, 0, 7, NOW), -7));
    CHECK_EQ_LL(store_size(s, 0), N);

    long deleted = 0;
    for (long i = 0; i < N; i += 2)
        deleted += del(s, 0, i, NOW);
    CHECK_EQ_LL(deleted, N / 2);
    CHECK_EQ_LL(del(s, 0, 0, NOW), 0);
    ok = 0;
    for (long i = 0; i < N; i++)
        ok += (get(s, 0, i, NOW) != NULL) == (i % 2 == 1);
    CHECK_EQ_LL(ok, N);
    for (long i = 1; i < N; i += 2)
        deleted += del(s, 0, i, NOW);
    CHECK_EQ_LL(deleted, N);
    CHECK_EQ_LL(store_size(s, 0), 0);
    settle(s);
    /* only the 4-bucket minimum table remains */
    CHECK(store_memory(s) <= base + 64);
    store_destroy(&s);
    CHECK(s == NULL);
    store_destroy(&s);
}

/* memory per key, redis-benchmark style keys and a 3-byte value */
static void test_memory_per_key(void)
{
    const long N = 1000000;
    struct store *s = store_create(16);
    size_t base = store_memory(s);
    char k[32];
    for (long i = 0; i < N; i++) {
        snprintf(k, sizeof k, "key:%012ld", i);
        store_set(s, 0, k, 16, object_string_create("xxx", 3), 0);
    }
    settle(s);
    double per = (double)(store_memory(s) - base) / (double)N;
    printf("memory: %.1f bytes per key (16-byte key, 3-byte value), %.1f overhead\n",
           per, per - 19);
    CHECK(per < 74); /* one 64-byte entry (the value embedded) and a bucket slot */
    for (long i = 0; i < N; i++) {
        snprintf(k, sizeof k, "key:%012ld", i);
        store_delete(s, 0, k, 16, NOW);
    }
    settle(s);
    CHECK(store_memory(s) <= base + 64);
    store_destroy(&s);
}

static void test_rehash_churn(void)
{
    /* deletes and lookups while tables grow and shrink, checked at every size */
    struct store *s = store_create(1);
    const long N = 70000;
    unsigned char *in = calloc((size_t)N, 1);
    uint64_t x = 88172645463325252ULL;
    long live = 0, bad = 0;
    for (long step = 0; step < 600000; step++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        long i = (long)(x % (uint64_t)N);
        /* phases: mostly inserts, then mostly deletes, then inserts again */
        bool ins = (step / 100000) % 2 == 0 ? (x >> 40) % 4 != 0 : (x >> 40) % 4 == 0;
        if (ins) {
            put(s, 0, i, i);
            live += !in[i];
            in[i] = 1;
        } else {
            int d = del(s, 0, i, NOW);
            bad += d != in[i];
            live -= in[i];
            in[i] = 0;
        }
        if (step % 50000 == 0) {
            for (long j = 0; j < N; j++)
                bad += (get(s, 0, j, NOW) != NULL) != in[j];
        }
    }
    CHECK_EQ_LL(bad, 0);
    CHECK_EQ_LL(store_size(s, 0), live);
    free(in);
    store_destroy(&s);
}

static void test_shrink(void)
{
    struct store *s = store_create(1);
    size_t base = store_memory(s);
    for (long i = 0; i < 100000; i++)
        put(s, 0, i, i);
    settle(s);
    size_t full = store_memory(s);
    for (long i = 100; i < 100000; i++)
        del(s, 0, i, NOW);
    settle(s);
    size_t small = store_memory(s);
    /* the bucket array shrank from 128K slots to a few hundred */
    CHECK(small < base + 100 * 200);
    CHECK(small < full / 100);
    long ok = 0;
    for (long i = 0; i < 100; i++)
        ok += value_is(get(s, 0, i, NOW), i);
    CHECK_EQ_LL(ok, 100);
    store_destroy(&s);
}

static void scan_all(struct store *s, int db, long count, struct seen *sn)
{
    uint64_t c = 0;
    do {
        c = store_scan(s, db, c, count, NOW, on_key, sn);
    } while (c != 0);
}

static void test_scan_coverage(void)
{
    struct store *s = store_create(2);
    struct seen sn;
    /* empty db: done at once */
    seen_init(&sn, 10);
    CHECK_EQ_LL(store_scan(s, 0, 0, 10, NOW, on_key, &sn), 0);
    CHECK_EQ_LL(sn.calls, 0);
    free(sn.hit);

    /* full table, stable: every key exactly once */
    const long N = 50000;
    for (long i = 0; i < N; i++)
        put(s, 0, i, i);
    settle(s);
    seen_init(&sn, N);
    scan_all(s, 0, 10, &sn);
    long once = 0;
    for (long i = 0; i < N; i++)
        once += sn.hit[i] == 1;
    CHECK_EQ_LL(once, N);
    CHECK_EQ_LL(sn.bad, 0);
    free(sn.hit);

    /* sparse: few keys in a table that is mid-shrink (both tables visited) */
    for (long i = 0; i < N; i++)
        if (i % 1000 != 0)
            del(s, 0, i, NOW);
    seen_init(&sn, N);
    scan_all(s, 0, 1, &sn);
    long got = 0;
    for (long i = 0; i < N; i += 1000)
        got += sn.hit[i] >= 1;
    CHECK_EQ_LL(got, N / 1000);
    CHECK_EQ_LL(sn.calls, N / 1000);
    free(sn.hit);

    /* expired keys are skipped and reaped */
    for (long i = 0; i < N; i += 1000)
        if (i % 2000 == 0)
            expire_at(s, 0, i, NOW - 1);
    uint64_t before = store_expired_keys(s);
    seen_init(&sn, N);
    scan_all(s, 0, 100, &sn);
    CHECK_EQ_LL(sn.calls, N / 2000);
    CHECK_EQ_LL(store_expired_keys(s) - before, N / 2000);
    CHECK_EQ_LL(store_size(s, 0), N / 2000);
    free(sn.hit);
    store_destroy(&s);
}

static void test_scan_resize(void)
{
    /* growth during a scan: keys inserted between calls, originals all seen */
    struct store *s = store_create(1);
    const long N0 = 1000, MAX = 200000;
    for (long i = 0; i < N0; i++)
        put(s, 0, i, i);
    struct seen sn;
    seen_init(&sn, MAX);
    uint64_t c = 0;
    long next = N0;
    do {
        c = store_scan(s, 0, c, 5, NOW, on_key, &sn);
        for (int k = 0; k < 50 && next < MAX; k++)
            put(s, 0, next++, 0);
    } while (c != 0);
    long seen = 0;
    for (long i = 0; i < N0; i++)
        seen += sn.hit[i] >= 1;
    CHECK_EQ_LL(seen, N0);
    CHECK_EQ_LL(sn.bad, 0);
    CHECK(next > 20 * N0); /* the table grew many times meanwhile */
    free(sn.hit);

    /* shrinking during a scan: keys < 500 stay, the rest go between calls */
    seen_init(&sn, MAX);
    c = 0;
    long victim = 500;
    do {
        c = store_scan(s, 0, c, 10, NOW, on_key, &sn);
        for (int k = 0; k < 2000 && victim < next; k++)
            del(s, 0, victim++, NOW);
    } while (c != 0);
    seen = 0;
    for (long i = 0; i < 500; i++)
        seen += sn.hit[i] >= 1;
    CHECK_EQ_LL(seen, 500);
    free(sn.hit);
    store_destroy(&s);
}

static void test_ttl(void)
{
    struct store *s = store_create(2);
    put(s, 0, 1, 1);
    CHECK_EQ_LL(ttl_of(s, 0, 1, NOW), -1);
    CHECK_EQ_LL(ttl_of(s, 0, 2, NOW), -2);
    CHECK_EQ_LL(expire_at(s, 0, 2, NOW + 5), -1);
    CHECK_EQ_LL(expire_at(s, 0, 1, NOW + 5), 0);
    CHECK_EQ_LL(ttl_of(s, 0, 1, NOW), NOW + 5);
    CHECK_EQ_LL(store_expires_size(s, 0), 1);
    /* alive at exactly its expire time (Redis: expired when now > when) */
    CHECK(get(s, 0, 1, NOW + 5) != NULL);
    CHECK(get(s, 0, 1, NOW + 6) == NULL);
    CHECK_EQ_LL(store_expired_keys(s), 1);
    CHECK_EQ_LL(store_size(s, 0), 0);
    CHECK_EQ_LL(store_expires_size(s, 0), 0);
    CHECK_EQ_LL(ttl_of(s, 0, 1, NOW), -2);

    /* persist */
    put(s, 0, 3, 3);
    CHECK_EQ_LL(store_persist(s, 0, "k\0" "3", 3, NOW), 0);
    expire_at(s, 0, 3, NOW + 100);
    expire_at(s, 0, 3, NOW + 200);
    CHECK_EQ_LL(ttl_of(s, 0, 3, NOW), NOW + 200);
    CHECK_EQ_LL(store_expires_size(s, 0), 1);
    CHECK_EQ_LL(store_persist(s, 0, "k\0" "3", 3, NOW), 1);
    CHECK_EQ_LL(ttl_of(s, 0, 3, NOW), -1);
    CHECK_EQ_LL(store_persist(s, 0, "k\0" "9", 3, NOW), 0);

    /* SET clears the TTL, KEEPTTL keeps it, also when the value outgrows the key's entry (which
     * moves: its TTL slot follows) */
    expire_at(s, 0, 3, NOW + 300);
    put(s, 0, 3, 33);
    CHECK_EQ_LL(ttl_of(s, 0, 3, NOW), -1);
    expire_at(s, 0, 3, NOW + 300);
    CHECK_EQ_LL(store_set(s, 0, "k\0" "3", 3, object_string_from_ll(34), STORE_KEEPTTL), 0);
    CHECK_EQ_LL(ttl_of(s, 0, 3, NOW), NOW + 300);
    CHECK(value_is(get(s, 0, 3, NOW), 34));
    CHECK_EQ_LL(store_set(s, 0, "k\0" "3", 3, object_string_from_ll(-1234567890123456789LL), STORE_KEEPTTL), 0);
    CHECK(value_is(get(s, 0, 3, NOW), -1234567890123456789LL));
    CHECK_EQ_LL(ttl_of(s, 0, 3, NOW), NOW + 300);
    CHECK_EQ_LL(store_expires_size(s, 0), 1);
    CHECK_EQ_LL(store_set(s, 0, "k\0" "3", 3, object_string_from_ll(35), 0), 0);
    CHECK_EQ_LL(ttl_of(s, 0, 3, NOW), -1);

    /* delete and take of an expired key report nothing */
    expire_at(s, 0, 3, NOW);
    CHECK_EQ_LL(del(s, 0, 3, NOW + 1), 0);
    put(s, 0, 4, 4);
    expire_at(s, 0, 4, NOW);
    int64_t when = 0;
    CHECK(store_take(s, 0, "k\0" "4", 3, NOW + 1, &when) == NULL);
    CHECK_EQ_LL(store_expired_keys(s), 3);
    CHECK_EQ_LL(store_expires_size(s, 0), 0);
    store_destroy(&s);
}

static void count_gone(void *arg, enum store_gone why, int db, const char *key, size_t klen)
{
    (void)db;
    (void)key;
    (void)klen;
    if (why == STORE_GONE_EXPIRED)
        (*(int *)arg)++;
}

/* store_set_string with a time is store_lookup then store_set_string of the key: the same keys, TTLs, idle
 * times and memory */
static void test_lookup_set(void)
{
    struct store *a = store_create(1), *b = store_create(1);
    int gone_a = 0, gone_b = 0;
    store_set_gone_listener(a, count_gone, &gone_a);
    store_set_gone_listener(b, count_gone, &gone_b);
    char k[32];
    for (long i = 0; i < 300; i++) {
        size_t n = key_of(k, i % 100);
        int64_t now = NOW + i * 1000;
        int flags = i % 3 == 0 ? STORE_KEEPTTL : STORE_ACCESS;
        char v[24];
        size_t vn = (size_t)snprintf(v, sizeof v, "%ld", i);
        store_lookup(b, 0, k, n, now);
        int rb = store_set_string(b, 0, k, n, v, vn, flags, -1);
        int ra = store_set_string(a, 0, k, n, v, vn, flags, now);
        CHECK_EQ_LL(ra, rb);
        if (i % 7 == 0) { /* some keys expire before they are set again */
            store_set_expire(a, 0, k, n, now + 500, now);
            store_set_expire(b, 0, k, n, now + 500, now);
        }
    }
    CHECK(gone_a > 0);
    CHECK_EQ_LL(gone_a, gone_b);
    CHECK_EQ_LL(store_expired_keys(a), store_expired_keys(b));
    CHECK_EQ_LL(store_size(a, 0), store_size(b, 0));
    CHECK_EQ_LL(store_expires_size(a, 0), store_expires_size(b, 0));
    CHECK_EQ_LL(store_memory(a), store_memory(b));
    int64_t end = NOW + 400 * 1000;
    for (long i = 0; i < 100; i++) {
        size_t n = key_of(k, i);
        long long idle_a = -1, idle_b = -1;
        struct object *oa = store_peek(a, 0, k, n, end, &idle_a), *ob = store_peek(b, 0, k, n, end, &idle_b);
        CHECK((oa == NULL) == (ob == NULL));
        CHECK_EQ_LL(idle_a, idle_b);
        CHECK_EQ_LL(store_get_expire(a, 0, k, n, end), store_get_expire(b, 0, k, n, end));
        CHECK(!oa || value_is(oa, 200 + i));
    }
    store_destroy(&a);
    store_destroy(&b);
}

static void test_active_expire(void)
{
    struct store *s = store_create(4);
    const long N = 20000;
    /* db 1: half the keys expire, interleaved; db 2: all of them; db 3: none */
    for (long i = 0; i < N; i++) {
        put(s, 1, i, i);
        expire_at(s, 1, i, i % 2 ? NOW - 10 : NOW + 1000);
        put(s, 2, i, i);
        expire_at(s, 2, i, NOW - 1);
        put(s, 3, i, i);
    }
    size_t deleted = store_active_expire(s, NOW, 1000000000L);
    /* db 2 empties in one cycle (every sample is 100% expired) */
    CHECK_EQ_LL(store_size(s, 2), 0);
    CHECK_EQ_LL(store_expires_size(s, 2), 0);
    CHECK(store_size(s, 1) < (size_t)(N / 2 + N / 10));
    int calls = 1;
    while (store_size(s, 1) > (size_t)N / 2 && calls < 10000) {
        deleted += store_active_expire(s, NOW, 1000000000L);
        calls++;
    }
    CHECK_EQ_LL(store_size(s, 1), N / 2);
    CHECK_EQ_LL(store_expires_size(s, 1), N / 2);
    CHECK_EQ_LL(store_size(s, 3), N);
    CHECK_EQ_LL(deleted, N + N / 2);
    CHECK_EQ_LL(store_expired_keys(s), N + N / 2);
    long ok = 0;
    for (long i = 0; i < N; i++)
        ok += (get(s, 1, i, NOW) != NULL) == (i % 2 == 0);
    CHECK_EQ_LL(ok, N);
    /* nothing more to do: a cycle deletes nothing */
    CHECK_EQ_LL(store_active_expire(s, NOW, 1000), 0);
    /* a zero budget still makes progress, bounded by the time check */
    for (long i = 0; i < N; i++)
        expire_at(s, 3, i, NOW - 1);
    CHECK(store_active_expire(s, NOW, 0) > 0);
    store_destroy(&s);
}

static void test_swapdb_move_take(void)
{
    struct store *s = store_create(3);
    put(s, 0, 1, 10);
    expire_at(s, 0, 1, NOW + 50);
    put(s, 1, 2, 20);
    CHECK_EQ_LL(store_swapdb(s, 0, 1), 0);
    CHECK(value_is(get(s, 1, 1, NOW), 10));
    CHECK_EQ_LL(ttl_of(s, 1, 1, NOW), NOW + 50);
    CHECK(value_is(get(s, 0, 2, NOW), 20));
    CHECK(get(s, 0, 1, NOW) == NULL);
    CHECK_EQ_LL(store_swapdb(s, 0, 3), -1);
    CHECK_EQ_LL(store_swapdb(s, -1, 0), -1);
    CHECK_EQ_LL(store_swapdb(s, 2, 2), 0);

    /* move: carries the TTL; refused if present in dst or missing in src */
    CHECK_EQ_LL(store_move(s, 1, 2, "k\0" "1", 3, NOW), 1);
    CHECK(get(s, 1, 1, NOW) == NULL);
    CHECK(value_is(get(s, 2, 1, NOW), 10));
    CHECK_EQ_LL(ttl_of(s, 2, 1, NOW), NOW + 50);
    CHECK_EQ_LL(store_expires_size(s, 1), 0);
    CHECK_EQ_LL(store_expires_size(s, 2), 1);
    CHECK_EQ_LL(store_move(s, 1, 2, "k\0" "1", 3, NOW), 0);
    put(s, 0, 1, 11);
    CHECK_EQ_LL(store_move(s, 0, 2, "k\0" "1", 3, NOW), 0);
    CHECK(value_is(get(s, 0, 1, NOW), 11));
    /* an expired key in dst does not block the move */
    CHECK_EQ_LL(store_move(s, 0, 2, "k\0" "1", 3, NOW + 51), 1);
    CHECK(value_is(get(s, 2, 1, NOW + 51), 11));
    CHECK_EQ_LL(ttl_of(s, 2, 1, NOW + 51), -1);

    /* take: object and TTL handed over, key gone, memory back */
    size_t m0 = store_memory(s);
    put(s, 1, 5, 55);
    expire_at(s, 1, 5, NOW + 9);
    int64_t when = 0;
    struct object *o = store_take(s, 1, "k\0" "5", 3, NOW, &when);
    CHECK(value_is(o, 55));
    CHECK_EQ_LL(when, NOW + 9);
    CHECK(get(s, 1, 5, NOW) == NULL);
    CHECK_EQ_LL(store_memory(s), m0);
    /* and back in, as RENAME does */
    store_set(s, 1, "k\0" "6", 3, o, 0);
    CHECK(value_is(get(s, 1, 6, NOW), 55));
    put(s, 1, 7, 7);
    o = store_take(s, 1, "k\0" "7", 3, NOW, &when);
    CHECK(value_is(o, 7) && when == -1);
    object_destroy(&o);
    CHECK(store_take(s, 1, "k\0" "8", 3, NOW, &when) == NULL);
    store_destroy(&s);
}

/* n RANDOMKEY draws from db (keys 0..k-1): fair by chi-square */
static void check_fair(struct store *s, int db, int k, long n, const char *what)
{
    long *hits = calloc((size_t)k, sizeof *hits);
    const char *key;
    size_t klen;
    for (long r = 0; r < n; r++) {
        CHECK(store_random_key(s, db, NOW, &key, &klen));
        long i = index_of(key, klen);
        CHECK(i >= 0 && i < k);
        if (i >= 0 && i < k)
            hits[i]++;
    }
    CHECK(chisq_fair(what, chisq_draws(hits, k), k));
    free(hits);
}

/*
 * RANDOMKEY: every key as likely as any other (by chi-square) in a dense
 * table, one emptied by deletes (sparse, shrinking) and one growing (two
 * tables of different loads); reaping of expired keys.
 */
static void test_random(void)
{
    struct store *s = store_create(2);
    const char *key;
    size_t klen;
    CHECK(!store_random_key(s, 0, NOW, &key, &klen));
    for (long i = 0; i < 10; i++)
        put(s, 0, i, i);
    check_fair(s, 0, 10, 20000, "10 keys");
    for (long i = 10; i < 1000; i++)
        put(s, 0, i, i);
    check_fair(s, 0, 1000, 200000, "1000 keys");
    for (long i = 1000; i < 100000; i++)
        put(s, 0, i, i);
    for (long i = 100; i < 100000; i++)
        del(s, 0, i, NOW);
    check_fair(s, 0, 100, 20000, "100 left of 100000");
    store_flush(s, 0);
    /* growing: the 65th key starts a rehash to 128 buckets and each draw
     * moves one of the 64 old ones, so 16 draws all see two tables */
    long hits[65] = {0};
    for (int round = 0; round < 2000; round++) {
        for (long i = 0; i < 65; i++)
            put(s, 0, i, i);
        for (int r = 0; r < 16; r++) {
            CHECK(store_random_key(s, 0, NOW, &key, &klen));
            long i = index_of(key, klen);
            CHECK(i >= 0 && i < 65);
            if (i >= 0 && i < 65)
                hits[i]++;
        }
        store_flush(s, 0);
    }
    CHECK(chisq_fair("65 keys, mid-rehash", chisq_draws(hits, 65), 65));
    /* all but one expired: the live one is found and the rest reaped */
    for (long i = 0; i < 1000; i++) {
        put(s, 1, i, i);
        if (i != 777)
            expire_at(s, 1, i, NOW - 1);
    }
    /* a draw may hit the live key first and reap nothing: draw on until one has reaped too (each draw
     * meets an expired key 999 times in 1000) */
    bool found = false;
    for (int t = 0; t < 50 && !(found && store_expired_keys(s) > 0); t++)
        if (store_random_key(s, 1, NOW, &key, &klen) && index_of(key, klen) == 777 && get(s, 1, 777, NOW) != NULL)
            found = true;
    CHECK(found);
    CHECK(store_expired_keys(s) > 0);
    CHECK(store_size(s, 1) < 1000);
    store_destroy(&s);
}

static void test_flush(void)
{
    struct store *s = store_create(3);
    size_t base = store_memory(s);
    for (long i = 0; i < 100000; i++) {
        put(s, 0, i, i);
        expire_at(s, 0, i, NOW + i);
    }
    for (long i = 0; i < 100; i++)
        put(s, 1, i, i);
    put(s, 2, 1, 1);
    store_flush(s, 0);
    CHECK_EQ_LL(store_size(s, 0), 0);
    CHECK_EQ_LL(store_expires_size(s, 0), 0);
    CHECK(get(s, 0, 5, NOW) == NULL);
    CHECK_EQ_LL(store_size(s, 1), 100);
    /* the db is usable at once, while the old table is freed in steps */
    put(s, 0, 5, 5);
    CHECK(value_is(get(s, 0, 5, NOW), 5));
    settle(s);
    store_flush(s, -1);
    CHECK_EQ_LL(store_size(s, 0) + store_size(s, 1) + store_size(s, 2), 0);
    CHECK_EQ_LL(store_memory(s), base);
    /* destroy with a flush still pending */
    for (long i = 0; i < 100000; i++)
        put(s, 2, i, i);
    store_flush(s, 2);
    store_destroy(&s);
}

static void test_memory_tracks_growth(void)
{
    struct store *s = store_create(1);
    size_t base = store_memory(s);
    put(s, 0, 1, 1);
    put(s, 0, 2, 2);
    size_t m1 = store_memory(s);
    /* APPEND-style growth of a looked-up value is seen */
    struct object *o = get(s, 0, 1, NOW);
    char big[4096] = {0};
    object_string_append(o, big, sizeof big);
    CHECK(store_memory(s) >= m1 + sizeof big);
    /* and stays right after more lookups push it out of the recent set */
    for (int k = 0; k < 10; k++)
        get(s, 0, 2, NOW);
    o = get(s, 0, 2, NOW);
    object_string_setrange(o, 10000, "x", 1);
    for (long k = 3; k < 20; k++)
        put(s, 0, k, k), get(s, 0, k, NOW);
    CHECK(store_memory(s) >= m1 + sizeof big + 10000);
    for (long k = 1; k < 20; k++)
        del(s, 0, k, NOW);
    settle(s);
    CHECK(store_memory(s) <= base + 64);
    store_destroy(&s);
}

/* the value lives in its key's entry: MEMORY USAGE is the entry alone for a short string, the
 * store's figure is the sum of its keys' (the table aside) through every way a value changes:
 * replaced by a longer or shorter one, a string by a collection and back, grown in place past the
 * entry's room, moved out and back in (take, MOVE) */
static void test_embedded_values(void)
{
    struct store *s = store_create(2);
    const struct set_limits lim = {512, 128, 64};
    char k[32], v[200];
    memset(v, 'v', sizeof v);
    size_t empty = store_memory(s);
    CHECK_EQ_LL(store_set_string(s, 0, "key:000000000001", 16, v, 16, 0, -1), 1);
    CHECK_EQ_LL(store_key_memory(s, 0, "key:000000000001", 16, NOW), 64);
    for (long i = 0; i < 300; i++) {
        snprintf(k, sizeof k, "k%ld", i);
        size_t n = (size_t)(i * 7) % sizeof v;
        switch (i % 5) {
        case 0: store_set_string(s, 0, k, strlen(k), v, n, 0, -1); break;
        case 1: store_set(s, 0, k, strlen(k), object_string_create(v, n), 0); break;
        case 2: {
            struct object *o = set_create_for("a", 1, &lim);
            set_add(o, "a", 1, &lim);
            store_set(s, 0, k, strlen(k), o, 0);
            break;
        }
        case 3: store_set_string(s, 0, k, strlen(k), v, 3, 0, -1); break;
        default: store_set(s, 0, k, strlen(k), object_string_from_ll(i), 0); break;
        }
        if (i % 3 == 0)
            store_set_expire(s, 0, k, strlen(k), NOW + 1000 + i, NOW);
    }
    /* every second key replaced: longer, shorter, other kinds; TTLs kept or cleared */
    for (long i = 0; i < 300; i += 2) {
        snprintf(k, sizeof k, "k%ld", i);
        size_t n = (size_t)(i * 13) % sizeof v;
        if (i % 4 == 0)
            store_set_string(s, 0, k, strlen(k), v, n, STORE_KEEPTTL, -1);
        else
            store_set(s, 0, k, strlen(k), set_create_for("z", 1, &lim), STORE_KEEPTTL);
    }
    /* grown in place past the room (APPEND), after the lookup ring moved on */
    struct object *o = store_lookup(s, 0, "k3", 2, NOW);
    object_string_append(o, v, sizeof v);
    for (long i = 10; i < 20; i++) {
        snprintf(k, sizeof k, "k%ld", i);
        store_lookup(s, 0, k, strlen(k), NOW);
    }
    /* out and back in */
    int64_t when;
    o = store_take(s, 0, "k6", 2, NOW, &when);
    CHECK(o != NULL && !object_embedded(o) && when == NOW + 1006);
    store_set(s, 0, "k6b", 3, o, 0);
    store_set_expire(s, 0, "k6b", 3, when, NOW);
    CHECK_EQ_LL(store_move(s, 0, 1, "k9", 2, NOW), 1);
    CHECK_EQ_LL(store_get_expire(s, 1, "k9", 2, NOW), NOW + 1009);
    size_t len;
    const char *p = object_string_ptr(store_lookup(s, 0, "k3", 2, NOW), &len);
    CHECK(len == 3 + sizeof v && p[0] == 'v' && memcmp(p + 3, v, sizeof v) == 0);
    /* the sum of MEMORY USAGE over the keys is the store's figure, less the tables (512 buckets and
     * maybe the 256 of a rehash) and the TTL arrays (a chunk of 512 slots and a directory per db) */
    long long sum = 0;
    for (int db = 0; db < 2; db++) {
        for (long i = 0; i < 300; i++) {
            snprintf(k, sizeof k, "k%ld", i);
            long long m = store_key_memory(s, db, k, strlen(k), NOW);
            sum += m > 0 ? m : 0;
        }
        long long m = store_key_memory(s, db, "k6b", 3, NOW);
        sum += m > 0 ? m : 0;
    }
    sum += store_key_memory(s, 0, "key:000000000001", 16, NOW);
    size_t total = store_memory(s) - empty;
    long long slack = (512 + 256 + 4) * 8 + 2 * (512 * 16 + 64);
    CHECK((long long)total >= sum && (long long)total <= sum + slack);
    if (!((long long)total >= sum && (long long)total <= sum + slack))
        fprintf(stderr, "store %zu, keys %lld\n", total, sum);
    /* and everything goes back */
    for (int db = 0; db < 2; db++)
        store_flush(s, db);
    settle(s);
    CHECK(store_memory(s) <= empty + 64);
    store_destroy(&s);
}

/* a deleted big collection is freed in steps, never in one go, and all of it in the end */
static void test_lazyfree(void)
{
    struct store *s = store_create(1);
    size_t empty = store_memory(s);
    const struct set_limits lim = {512, 128, 64};
    struct object *big = set_create_for("m", 1, &lim);
    char m[32];
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(m, sizeof m, "member:%d", i);
        set_add(big, m, (size_t)n, &lim);
    }
    store_set(s, 0, "big", 3, big, 0);
    struct object *small = set_create_for("m", 1, &lim);
    set_add(small, "x", 1, &lim);
    store_set(s, 0, "small", 5, small, 0);
    CHECK(store_memory(s) > empty + 100000 * 8);
    CHECK(!store_lazyfree_pending(s));
    CHECK_EQ_LL(store_delete(s, 0, "small", 5, 0), 1);
    CHECK(!store_lazyfree_pending(s)); /* small ones are freed at once */
    CHECK_EQ_LL(store_delete(s, 0, "big", 3, 0), 1);
    CHECK(store_lazyfree_pending(s));
    int steps = 0;
    while (store_lazyfree_step(s, 1000))
        steps++;
    CHECK(steps >= 50); /* ~100 steps of 1000 members, not one */
    CHECK(!store_lazyfree_pending(s));
    /* replacing a big value frees the old one lazily too */
    big = set_create_for("m", 1, &lim);
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(m, sizeof m, "member:%d", i);
        set_add(big, m, (size_t)n, &lim);
    }
    store_set(s, 0, "big", 3, big, 0);
    store_set(s, 0, "big", 3, object_string_create("v", 1), 0);
    CHECK(store_lazyfree_pending(s));
    store_destroy(&s); /* with work pending: everything is freed (ASan checks) */
    CHECK(s == NULL);
}

/* ---- snapshot: the keys as of its start, each once, while everything changes */

#define SNAP_DBS 3
#define SNAP_KEYS 3000      /* per db at the start */
#define SNAP_SPACE 40000    /* key indexes used: the rest come later */

struct snap_seen {
    long value[SNAP_DBS][SNAP_SPACE];   /* -1: not handed out */
    int64_t expire[SNAP_DBS][SNAP_SPACE];
    int times[SNAP_DBS][SNAP_SPACE];
    long bad;                           /* keys handed out that are not the test's */
};

static void snap_collect(void *arg, const struct store_snapshot_key *k)
{
    struct snap_seen *seen = arg;
    long i = index_of(k->key, k->klen);
    size_t len;
    const char *p = object_string_ptr(k->val, &len);
    char buf[32];
    if (i < 0 || i >= SNAP_SPACE || k->db < 0 || k->db >= SNAP_DBS || !p || len >= sizeof buf) {
        seen->bad++;
        return;
    }
    memcpy(buf, p, len);
    buf[len] = '\0';
    seen->value[k->db][i] = strtol(buf, NULL, 10);
    seen->expire[k->db][i] = k->expire;
    seen->times[k->db][i]++;
}

static void test_snapshot(void)
{
    static struct snap_seen seen, want;
    struct store *s = store_create(SNAP_DBS);
    uint64_t rng = 12345;
    for (int db = 0; db < SNAP_DBS; db++) {
        for (long i = 0; i < SNAP_SPACE; i++) {
            want.value[db][i] = seen.value[db][i] = -1;
            want.expire[db][i] = -1;
        }
        for (long i = 0; i < SNAP_KEYS; i++) {
            long v = db * 100000 + i;
            put(s, db, i, v);
            want.value[db][i] = v;
            if (i % 7 == 0) { /* some soon past their TTL, reaped while the snapshot runs */
                int64_t when = NOW + (i % 14 == 0 ? 50 : 1000000);
                expire_at(s, db, i, when);
                want.expire[db][i] = when;
            }
        }
    }
    store_snapshot_begin(s, snap_collect, &seen);
    CHECK(store_snapshot_active(s));
    long next_new = SNAP_KEYS; /* indexes of keys that did not exist at the start */
    int steps = 0;
    bool flushed = false;
    int64_t now = NOW;
    while (store_snapshot_step(s, 1 + (size_t)util_rand_below(&rng, 3))) {
        steps++;
        for (int n = 0; n < 4; n++) {
            int db = (int)util_rand_below(&rng, SNAP_DBS);
            long i = (long)util_rand_below(&rng, SNAP_KEYS);
            char k[32], k2[32];
            size_t kl = key_of(k, i);
            switch (util_rand_below(&rng, 10)) {
            case 0: put(s, db, i, -7); break;                      /* overwritten */
            case 1: del(s, db, i, now); break;                     /* deleted */
            case 2: put(s, db, next_new++ % SNAP_SPACE, -8); break; /* new (the table grows) */
            case 3: {                                              /* renamed, or moved */
                size_t kl2 = key_of(k2, next_new++ % SNAP_SPACE);
                if (util_rand_below(&rng, 2))
                    store_rename(s, db, k, kl, k2, kl2, now);
                else
                    store_move(s, db, (db + 1) % SNAP_DBS, k, kl, now);
                break;
            }
            case 4: expire_at(s, db, i, now + 5); break;           /* its TTL changed */
            case 5: store_persist(s, db, k, kl, now); break;
            case 6: { struct object *o = store_take(s, db, k, kl, now, NULL); object_destroy(&o); break; }
            case 7: store_set_string(s, db, k, kl, "-9", 2, 0, now); break;
            case 8: get(s, db, i, now); break;
            default:
                if (steps % 50 == 0)
                    CHECK(store_swapdb(s, 0, 1) == 0);
                break;
            }
        }
        if (steps == 400 && !flushed) {
            store_flush(s, 2);
            flushed = true;
        }
        if (steps % 100 == 0) {
            now += 30;
            store_active_expire(s, now, 1000);
        }
        store_rehash_step(s);
    }
    CHECK(!store_snapshot_active(s));
    CHECK(flushed);
    CHECK(next_new > SNAP_KEYS + 1000); /* the test did change the store while the snapshot ran */
    CHECK_EQ_LL(seen.bad, 0);
    long missing = 0, twice = 0, wrong = 0, extra = 0;
    for (int db = 0; db < SNAP_DBS; db++) {
        for (long i = 0; i < SNAP_SPACE; i++) {
            if (want.value[db][i] < 0) {
                extra += seen.times[db][i] != 0;
                continue;
            }
            missing += seen.times[db][i] == 0;
            twice += seen.times[db][i] > 1;
            wrong += seen.times[db][i] &&
                     (seen.value[db][i] != want.value[db][i] || seen.expire[db][i] != want.expire[db][i]);
        }
    }
    CHECK_EQ_LL(missing, 0);
    CHECK_EQ_LL(twice, 0);
    CHECK_EQ_LL(wrong, 0);
    CHECK_EQ_LL(extra, 0);

    /* a second snapshot has what the store holds now, old keys and new */
    static struct snap_seen again;
    for (int db = 0; db < SNAP_DBS; db++)
        for (long i = 0; i < SNAP_SPACE; i++)
            again.value[db][i] = -1;
    store_snapshot_begin(s, snap_collect, &again);
    while (store_snapshot_step(s, 64))
        ;
    long keys = 0, held = 0;
    for (int db = 0; db < SNAP_DBS; db++) {
        held += (long)store_size(s, db);
        for (long i = 0; i < SNAP_SPACE; i++)
            keys += again.times[db][i];
    }
    CHECK_EQ_LL(keys, held);
    /* abandoned half way: nothing more is handed out */
    store_snapshot_begin(s, snap_collect, &again);
    store_snapshot_step(s, 8);
    store_snapshot_abort(s);
    long before = again.bad;
    put(s, 0, 1, 1);
    del(s, 1, 2, now);
    CHECK(!store_snapshot_step(s, 8));
    CHECK_EQ_LL(again.bad, before);
    store_destroy(&s);
}

/* HSET as the command layer does it: a new hash stored, an existing one changed and settled */
static void hset_key(struct store *s, const char *k, const char *f, const char *v, const struct hash_limits *lim)
{
    size_t kl = strlen(k);
    struct object *o = store_lookup(s, 0, k, kl, NOW);
    bool created = o == NULL;
    if (created)
        o = hash_create();
    hash_set(o, lim, f, strlen(f), v, strlen(v));
    if (created)
        store_set(s, 0, k, kl, o, 0);
    else
        store_settle(s, 0, k, kl, o);
}

/* HDEL as the command layer does it: an emptied hash deleted */
static void hdel_key(struct store *s, const char *k, const char *f)
{
    size_t kl = strlen(k);
    struct object *o = store_lookup(s, 0, k, kl, NOW);
    if (o == NULL || !hash_delete(o, f, strlen(f)))
        return;
    if (hash_length(o) == 0)
        store_delete(s, 0, k, kl, NOW);
    else
        store_settle(s, 0, k, kl, o);
}

/* the bytes an allocation of n takes */
static size_t block_of(size_t n)
{
    void *p = mem_alloc(n);
    size_t u = mem_usable(p);
    mem_release(p);
    return u;
}

/* the hash under k holds fields f0..f(n-1) with values v(i) = "value<i>" (i < 5) or "<pad><i>" */
static bool hash_is(struct store *s, const char *k, int n, const char *pad)
{
    struct object *o = store_peek(s, 0, k, strlen(k), NOW, NULL);
    if (o == NULL || object_type(o) != OBJ_HASH || hash_length(o) != (size_t)n)
        return false;
    for (int i = 0; i < n; i++) {
        char f[16], want[64];
        snprintf(f, sizeof f, "f%d", i);
        snprintf(want, sizeof want, "%s%d", i < 5 ? "value" : pad, i);
        const char *v;
        size_t vlen;
        if (!hash_get(o, f, strlen(f), &v, &vlen) || vlen != strlen(want) || memcmp(v, want, vlen) != 0)
            return false;
    }
    return true;
}

/* a small hash is packed whole into its key's entry: the benchmark's 17-byte key with 5 fields is one
 * 112-byte block; it leaves the entry past 254 bytes of listpack (the entry shrinking, moving, its TTL
 * following), comes back on HDEL, survives take/put (RENAME), and every byte stays accounted to a key */
static void test_packed_hashes(void)
{
    const struct hash_limits lim = {128, 64};
    const char *pad = "padpadpadpadpadpad";
    struct store *s = store_create(1);
    const char *k = "hash:000000000001";
    char f[16], v[64];
    for (int i = 0; i < 5; i++) {
        snprintf(f, sizeof f, "f%d", i);
        snprintf(v, sizeof v, "value%d", i);
        hset_key(s, k, f, v, &lim);
    }
    struct object *o = store_peek(s, 0, k, 17, NOW, NULL);
    CHECK(object_packed(o));
    CHECK(strcmp(object_encoding_name(o), "listpack") == 0);
    CHECK_EQ_LL(object_memory(o), 0);
    /* 8 record + 16 entry + 20 key + 2 header + 6 listpack header + 5 * (4 + 8) */
    CHECK_EQ_LL(store_key_memory(s, 0, k, 17, NOW), (long long)block_of(112));
    CHECK(hash_is(s, k, 5, pad));
    /* growth past the packed limit with a TTL, other keys' lookups and changes in between */
    store_set_expire(s, 0, k, 17, NOW + 5000, NOW);
    for (int j = 0; j < 8; j++)
        hset_key(s, j % 2 ? "other:a" : "other:b", "x", j % 2 ? "1" : "22", &lim);
    long long packed_max = 0;
    int unpacked_at = -1;
    for (int i = 5; i < 40; i++) {
        snprintf(f, sizeof f, "f%d", i);
        snprintf(v, sizeof v, "%s%d", pad, i);
        store_lookup(s, 0, "other:a", 7, NOW); /* the dirty ring holds other objects meanwhile */
        hset_key(s, k, f, v, &lim);
        o = store_peek(s, 0, k, 17, NOW, NULL);
        if (object_packed(o))
            packed_max = store_key_memory(s, 0, k, 17, NOW);
        else if (unpacked_at < 0)
            unpacked_at = i;
        CHECK_EQ_LL(store_get_expire(s, 0, k, 17, NOW), NOW + 5000);
    }
    CHECK(unpacked_at > 5 && packed_max > 200 && packed_max <= (long long)block_of(8 + 16 + 20 + 2 + 254));
    o = store_peek(s, 0, k, 17, NOW, NULL);
    CHECK(!object_packed(o) && strcmp(object_encoding_name(o), "listpack") == 0);
    /* the entry shrank back to a plain one: 8 + 16 + 20 + 16 bytes, and the listpack's own block */
    CHECK_EQ_LL(store_key_memory(s, 0, k, 17, NOW), (long long)(block_of(60) + object_memory(o)));
    CHECK(hash_is(s, k, 40, pad));
    /* HDEL back into the entry */
    for (int i = 39; i >= 5; i--) {
        snprintf(f, sizeof f, "f%d", i);
        hdel_key(s, k, f);
    }
    o = store_peek(s, 0, k, 17, NOW, NULL);
    CHECK(object_packed(o) && hash_is(s, k, 5, pad));
    CHECK_EQ_LL(store_key_memory(s, 0, k, 17, NOW), (long long)block_of(112));
    /* the TTL followed the entry through its moves: active expiry finds and reaps it */
    CHECK_EQ_LL(store_get_expire(s, 0, k, 17, NOW), NOW + 5000);
    CHECK(store_active_expire(s, NOW + 6000, 100000) >= 1);
    CHECK(store_peek(s, 0, k, 17, NOW + 6000, NULL) == NULL);
    CHECK_EQ_LL(store_expires_size(s, 0), 0);

    /* take and put, as RENAME does across shards: out as a block of its own, packed again */
    hset_key(s, k, "f0", "value0", &lim);
    hset_key(s, k, "f1", "value1", &lim);
    int64_t when;
    o = store_take(s, 0, k, 17, NOW, &when);
    CHECK(o != NULL && !object_embedded(o) && !object_packed(o) && hash_length(o) == 2);
    store_set(s, 0, "hash:000000000002", 17, o, 0);
    CHECK(object_packed(store_peek(s, 0, "hash:000000000002", 17, NOW, NULL)));
    CHECK(hash_is(s, "hash:000000000002", 2, pad));
    CHECK_EQ_LL(store_rename(s, 0, "hash:000000000002", 17, "h", 1, NOW), 1);
    CHECK(object_packed(store_peek(s, 0, "h", 1, NOW, NULL)) && hash_is(s, "h", 2, pad));
    /* conversion to a hashtable past hash-max-listpack-entries: never packed */
    const struct hash_limits two = {2, 64};
    hset_key(s, "h", "f2", "value2", &two);
    o = store_peek(s, 0, "h", 1, NOW, NULL);
    CHECK(!object_packed(o) && strcmp(object_encoding_name(o), "hashtable") == 0 && hash_is(s, "h", 3, pad));
    store_destroy(&s);

    /* MEMORY USAGE summed over 200 hashes changed many times (grown past the limit, shrunk, some with
     * a TTL) is what the store accounts: its figure less the keys' is that of a store with the
     * same keys (its table and TTL array) */
    s = store_create(1);
    struct store *ref = store_create(1);
    char key[32];
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "hash:%012d", i);
        int n = 1 + i % 30;
        for (int round = 0; round < 3; round++) {
            for (int j = 0; j < n; j++) {
                snprintf(f, sizeof f, "f%d", j);
                snprintf(v, sizeof v, "%s%d", j % 3 ? "v" : pad, round * 100 + j);
                hset_key(s, key, f, v, &lim);
            }
            for (int j = round; j < n; j += 2) {
                snprintf(f, sizeof f, "f%d", j);
                hdel_key(s, key, f);
            }
        }
        hset_key(s, key, "last", "1", &lim);
        store_set_string(ref, 0, key, strlen(key), "x", 1, 0, -1);
        if (i % 3 == 0) {
            store_set_expire(s, 0, key, strlen(key), NOW + 100000, NOW);
            store_set_expire(ref, 0, key, strlen(key), NOW + 100000, NOW);
        }
    }
    settle(s);
    settle(ref);
    long long sum = 0, ref_sum = 0;
    int packed = 0;
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "hash:%012d", i);
        sum += store_key_memory(s, 0, key, strlen(key), NOW);
        ref_sum += store_key_memory(ref, 0, key, strlen(key), NOW);
        packed += object_packed(store_peek(s, 0, key, strlen(key), NOW, NULL));
    }
    CHECK(packed > 20 && packed < 200);
    CHECK_EQ_LL((long long)store_memory(s) - sum, (long long)store_memory(ref) - ref_sum);
    store_destroy(&s);
    store_destroy(&ref);
}

int main(void)
{
    uint8_t seed[16];
    for (int i = 0; i < 16; i++)
        seed[i] = (uint8_t)(i * 37 + 11);
    store_set_seed(seed);
    test_million();
    test_memory_per_key();
    test_rehash_churn();
    test_shrink();
    test_scan_coverage();
    test_scan_resize();
    test_ttl();
    test_lookup_set();
    test_active_expire();
    test_swapdb_move_take();
    test_random();
    test_flush();
    test_memory_tracks_growth();
    test_lazyfree();
    test_embedded_values();
    test_snapshot();
    test_packed_hashes();
    return check_done("test_store");
}
