/*
 * test_dict: the hash table of sets, hashes and sorted sets.  Keys are
 * binary (they hold NUL bytes); growth, shrink, rehash mid-way, scan
 * coverage across resizes, values, random draws (fair by chi-square:
 * dense, sparse and mid-rehash tables), lazy free and memory accounting;
 * the keyspace's uses: owner records in front of entries (dict_create_meta),
 * a drain that hands each entry to its owner, and window sampling (each
 * entry as likely to be in a sample: chi-square over subsets).
 */
#include "percore/dict.h"
#include "percore/siphash.h"

#include "check.h"
#include "chisq.h"

#include <stdlib.h>

/* key i: "m\0" + decimal i */
static size_t key_of(char *buf, long i)
{
    buf[0] = 'm';
    buf[1] = '\0';
    return 2 + (size_t)snprintf(buf + 2, 30, "%ld", i);
}

static long index_of(const char *key, size_t klen)
{
    char tmp[32];
    if (klen < 3 || klen > 30 || key[0] != 'm' || key[1] != '\0')
        return -1;
    memcpy(tmp, key + 2, klen - 2);
    tmp[klen - 2] = '\0';
    return strtol(tmp, NULL, 10);
}

static void add(struct dict *d, long i)
{
    char k[32];
    size_t n = key_of(k, i);
    CHECK(dict_add(d, k, n, NULL) != NULL);
}

static bool has(struct dict *d, long i)
{
    char k[32];
    size_t n = key_of(k, i);
    return dict_find(d, k, n) != NULL;
}

static bool del(struct dict *d, long i)
{
    char k[32];
    size_t n = key_of(k, i);
    return dict_delete(d, k, n);
}

static void test_basic(void)
{
    struct dict *d = dict_create();
    size_t empty = dict_memory(d);
    CHECK(dict_size(d) == 0);
    CHECK(dict_find(d, "a", 1) == NULL);
    CHECK(dict_random(d) == NULL);
    CHECK(!dict_delete(d, "a", 1));
    struct dict_entry *e = dict_add(d, "a", 1, NULL), *ex = (void *)1;
    CHECK(e != NULL);
    CHECK(dict_add(d, "a", 1, &ex) == NULL);
    CHECK(ex == e);
    CHECK(dict_add(d, "", 0, &ex) != NULL);
    CHECK(ex == NULL);
    CHECK(dict_find(d, "", 0) != NULL);
    size_t len;
    const char *k = dict_entry_key(e, &len);
    CHECK_MEM(k, len, "a");
    CHECK(dict_entry_value(e, &len) == NULL && len == 0);
    CHECK(dict_size(d) == 2);
    CHECK(dict_memory(d) > empty);
    CHECK(dict_delete(d, "a", 1));
    CHECK(dict_delete(d, "", 0));
    CHECK(dict_size(d) == 0);
    dict_destroy(&d);
    CHECK(d == NULL);
    dict_destroy(&d);
}

static void test_many(void)
{
    enum { N = 200000 };
    struct dict *d = dict_create();
    for (long i = 0; i < N; i++)
        add(d, i);
    CHECK(dict_size(d) == N);
    long missing = 0;
    for (long i = 0; i < N; i++)
        missing += !has(d, i);
    CHECK_EQ_LL(missing, 0);
    CHECK(!has(d, N));
    /* delete all but 100: the table shrinks on later lookups */
    size_t big = dict_memory(d);
    for (long i = 100; i < N; i++)
        CHECK(del(d, i));
    CHECK(!del(d, N - 1));
    dict_compact(d);
    /* each lookup moves a bucket or skips 10 empty ones */
    for (int r = 0; r < 100000; r++)
        has(d, r % 100);
    CHECK(dict_size(d) == 100);
    CHECK(dict_memory(d) < big / 100);
    for (long i = 0; i < 100; i++)
        CHECK(has(d, i));
    dict_destroy(&d);
}

static void test_iter(void)
{
    enum { N = 5000 };
    struct dict *d = dict_create();
    char *seen = calloc(N, 1);
    /* interleave adds and finds so a rehash is in progress at times */
    for (long i = 0; i < N; i++)
        add(d, i);
    for (int pass = 0; pass < 2; pass++) {
        memset(seen, 0, N);
        struct dict_iter it;
        dict_iter_init(&it, d);
        struct dict_entry *e;
        long count = 0, dup = 0;
        while ((e = dict_iter_next(&it)) != NULL) {
            size_t len;
            const char *k = dict_entry_key(e, &len);
            long i = index_of(k, len);
            CHECK(i >= 0 && i < N);
            if (seen[i])
                dup++;
            seen[i] = 1;
            count++;
            /* pass 1 deletes every odd entry while iterating */
            if (pass == 1 && (i & 1))
                CHECK(dict_delete(d, k, len));
        }
        CHECK_EQ_LL(count, N);
        CHECK_EQ_LL(dup, 0);
    }
    CHECK(dict_size(d) == N / 2);
    for (long i = 0; i < N; i++)
        CHECK(has(d, i) == !(i & 1));
    free(seen);
    dict_destroy(&d);
}

struct scan_arg {
    char *seen;
    long n;
};

static void scan_cb(void *arg, const struct dict_entry *e)
{
    struct scan_arg *sa = arg;
    size_t len;
    const char *k = dict_entry_key(e, &len);
    long i = index_of(k, len);
    if (i >= 0 && i < sa->n)
        sa->seen[i] = 1;
}

static void test_scan_resize(void)
{
    enum { N = 3000 };
    struct dict *d = dict_create();
    for (long i = 0; i < N; i++)
        add(d, i);
    struct scan_arg sa = {calloc(N, 1), N};
    uint64_t cursor = 0;
    long steps = 0, extra = N;
    do {
        cursor = dict_scan(d, cursor, scan_cb, &sa);
        /* grow mid-scan, then shrink: keys present throughout must be seen */
        if (steps < 200)
            add(d, extra++);
        else if (extra > N)
            del(d, --extra);
        has(d, 0);
        steps++;
    } while (cursor != 0);
    long missed = 0;
    for (long i = 0; i < N; i++)
        missed += !sa.seen[i];
    CHECK_EQ_LL(missed, 0);
    free(sa.seen);
    dict_destroy(&d);

    d = dict_create();
    CHECK(dict_scan(d, 0, scan_cb, &sa) == 0);
    dict_destroy(&d);
}

static void test_values(void)
{
    struct dict *d = dict_create();
    struct dict_entry *e = dict_add(d, "f", 1, NULL);
    size_t m0 = dict_memory(d), len;
    dict_entry_set_value(d, e, "hello", 5);
    const char *v = dict_entry_value(e, &len);
    CHECK_MEM(v, len, "hello");
    CHECK(dict_memory(d) > m0);
    char big[1000];
    memset(big, 'x', sizeof big);
    dict_entry_set_value(d, e, big, sizeof big);
    CHECK(dict_memory(d) >= m0 + sizeof big);
    dict_entry_value(e, &len);
    CHECK(len == sizeof big);
    dict_entry_set_value(d, e, "", 0);
    CHECK(dict_entry_value(e, &len) != NULL && len == 0);
    CHECK(dict_memory(d) < m0 + 100);
    dict_entry_set_value(d, e, "v\0w", 3);
    v = dict_entry_value(e, &len);
    CHECK_MEM(v, len, "v\0w");
    for (long i = 0; i < 100; i++) {
        char k[32];
        size_t n = key_of(k, i);
        struct dict_entry *x = dict_add(d, k, n, NULL);
        dict_entry_set_value(d, x, k, n);
    }
    for (long i = 0; i < 100; i++) {
        char k[32];
        size_t n = key_of(k, i);
        struct dict_entry *x = dict_find(d, k, n);
        v = dict_entry_value(x, &len);
        CHECK(len == n && memcmp(v, k, n) == 0);
    }
    dict_destroy(&d);

    struct dict *z = dict_create();
    e = dict_add(z, "m", 1, NULL);
    CHECK(dict_entry_double(e) == 0.0);
    dict_entry_set_double(e, -1.5);
    CHECK(dict_entry_double(dict_find(z, "m", 1)) == -1.5);
    dict_destroy(&z);
}

/* n draws from d (keys 0..k-1): fair by chi-square */
static void check_fair(struct dict *d, int k, long n, const char *what)
{
    long *hits = calloc((size_t)k, sizeof *hits);
    for (long r = 0; r < n; r++) {
        size_t len;
        const char *key = dict_entry_key(dict_random(d), &len);
        long i = index_of(key, len);
        CHECK(i >= 0 && i < k);
        if (i >= 0 && i < k)
            hits[i]++;
    }
    CHECK(chisq_fair(what, chisq_draws(hits, k), k));
    free(hits);
}

/*
 * Every entry is as likely as any other, whatever its chain (a random
 * bucket's random entry favours short chains), in a dense table, a sparse
 * one (a big table emptied by deletes: random probes miss) and while the
 * table grows (two tables of different loads).
 */
static void test_random(void)
{
    struct dict *d = dict_create();
    for (long i = 0; i < 10; i++)
        add(d, i);
    check_fair(d, 10, 20000, "10 entries");
    for (long i = 10; i < 1000; i++)
        add(d, i);
    check_fair(d, 1000, 200000, "1000 entries");
    dict_destroy(&d);

    /* sparse: 100000 entries deleted down to 100, drawn from while it shrinks */
    d = dict_create();
    for (long i = 0; i < 100000; i++)
        add(d, i);
    for (long i = 100; i < 100000; i++)
        del(d, i);
    check_fair(d, 100, 20000, "100 left of 100000");
    for (long i = 1; i < 100; i++)
        del(d, i);
    for (int r = 0; r < 10; r++) {
        size_t len;
        const char *k = dict_entry_key(dict_random(d), &len);
        CHECK(index_of(k, len) == 0);
    }
    dict_destroy(&d);

    /* growing: the 65th entry starts a rehash to 128 buckets, each draw moves
     * one of the 64 old buckets, so 16 draws all see two tables */
    long hits[65] = {0};
    for (int round = 0; round < 2000; round++) {
        d = dict_create();
        for (long i = 0; i < 65; i++)
            add(d, i);
        for (int r = 0; r < 16; r++) {
            size_t len;
            const char *k = dict_entry_key(dict_random(d), &len);
            long i = index_of(k, len);
            CHECK(i >= 0 && i < 65);
            if (i >= 0 && i < 65)
                hits[i]++;
        }
        dict_destroy(&d);
    }
    CHECK(chisq_fair("65 entries, mid-rehash", chisq_draws(hits, 65), 65));
}

static void test_destroy_step(void)
{
    struct dict *d = dict_create();
    for (long i = 0; i < 10000; i++) {
        char k[32];
        size_t n = key_of(k, i);
        struct dict_entry *e = dict_add(d, k, n, NULL);
        dict_entry_set_value(d, e, "value", 5);
    }
    int steps = 0;
    while (!dict_destroy_step(&d, 1000))
        steps++;
    CHECK(d == NULL);
    CHECK(steps >= 9 && steps <= 11);
    CHECK(dict_destroy_step(&d, 10));
}

static void drain_cb(void *arg, struct dict_entry *e)
{
    long *seen = *(long **)arg;
    long i = index_of(e->key, e->klen);
    if (i >= 0 && i < 5000)
        seen[i]++;
}

/* a grown or shrunk tail keeps the entry's bytes and its place in the table, mid-rehash too, and
 * is accounted; a shrink gives the memory back */
static void test_resize_tail(void)
{
    struct dict *d = dict_create_meta(8);
    long bad = 0;
    for (long i = 0; i < 3000; i++) {
        char k[32];
        size_t n = key_of(k, i);
        struct dict_entry *e = dict_add_tail(d, k, n, 8, NULL);
        memcpy(dict_entry_meta(e, 8), &i, sizeof i);
        memcpy(dict_entry_tail(e), &i, sizeof i);
        e->aux = (uint32_t)i;
        if (i % 3 == 0) { /* while the table grows (rehashing much of the time) */
            size_t before = dict_memory(d) - dict_entry_memory(d, e);
            e = dict_entry_resize_tail(d, e, 200);
            size_t grown = dict_entry_memory(d, e);
            CHECK(grown >= 8 + sizeof *e + ((n + 3) & ~(size_t)3) + 200);
            CHECK_EQ_LL(dict_memory(d), before + grown);
            bad += dict_peek(d, k, n) != e;
            if (i % 2 == 0) { /* and back: a 200-byte tail's block is not kept for 8 bytes */
                e = dict_entry_resize_tail(d, e, 8);
                CHECK(dict_entry_memory(d, e) < grown);
                CHECK_EQ_LL(dict_memory(d), before + dict_entry_memory(d, e));
                bad += dict_peek(d, k, n) != e;
            }
        }
    }
    for (long i = 0; i < 3000; i++) {
        char k[32];
        size_t n = key_of(k, i);
        struct dict_entry *e = dict_find(d, k, n);
        long m = -1, t = -1;
        if (e) {
            memcpy(&m, dict_entry_meta(e, 8), sizeof m);
            memcpy(&t, dict_entry_tail(e), sizeof t);
        }
        bad += e == NULL || m != i || t != i || e->aux != (uint32_t)i;
    }
    CHECK_EQ_LL(bad, 0);
    CHECK_EQ_LL(dict_size(d), 3000);
    dict_destroy(&d);
}

/* the owner's record rides in front of each entry and its tail after the key; a drain shows every
 * entry to the owner once */
static void test_meta_drain(void)
{
    struct dict *d = dict_create_meta(8);
    struct dict *plain = dict_create();
    for (long i = 0; i < 5000; i++) {
        char k[32];
        size_t n = key_of(k, i);
        struct dict_entry *e = dict_add_tail(d, k, n, 16, NULL);
        uint64_t rec = (uint64_t)i * 3 + 1;
        memcpy(dict_entry_meta(e, 8), &rec, 8);
        memcpy(dict_entry_tail(e), &d, sizeof d);
        CHECK(((uintptr_t)dict_entry_tail(e) & 3) == 0);
        e->aux = (uint32_t)i;
        CHECK(dict_entry_memory(d, e) >= 8 + sizeof *e + ((n + 3) & ~(size_t)3) + 16);
        dict_add(plain, k, n, NULL);
    }
    /* the records survive the growth's rehashes, and cost their bytes an entry */
    long bad = 0;
    for (long i = 0; i < 5000; i++) {
        char k[32];
        size_t n = key_of(k, i);
        struct dict_entry *e = dict_find(d, k, n);
        uint64_t rec;
        struct dict *tail;
        memcpy(&rec, dict_entry_meta(e, 8), 8);
        memcpy(&tail, dict_entry_tail(e), sizeof tail);
        bad += rec != (uint64_t)i * 3 + 1 || e->aux != (uint32_t)i || tail != d;
    }
    CHECK_EQ_LL(bad, 0);
    CHECK(dict_memory(d) > dict_memory(plain));
    dict_destroy(&plain);
    long seen[5000] = {0};
    struct drain_seen {
        long *seen;
    } ds = {seen};
    int steps = 0;
    while (!dict_drain_step(&d, 700, drain_cb, &ds))
        steps++;
    CHECK(d == NULL);
    CHECK(steps >= 7 && steps <= 8);
    for (long i = 0; i < 5000; i++)
        bad += seen[i] != 1;
    CHECK_EQ_LL(bad, 0);
}

static void sample_cb(void *arg, const struct dict_entry *e)
{
    long *hits = arg;
    long i = index_of(e->key, e->klen);
    hits[i]++;
    hits[1000]++; /* the sample's size */
}

/* dict_sample takes about n entries, each as likely to be among them (dense, sparse, mid-rehash) */
static void test_sample(void)
{
    struct dict *d = dict_create();
    for (long i = 0; i < 1000; i++)
        add(d, i);
    uint64_t rng = 12345;
    enum { ROUNDS = 20000 };
    long hits[1001] = {0};
    for (int r = 0; r < ROUNDS; r++)
        dict_sample(d, 10, &rng, sample_cb, hits);
    /* 10 entries a sample on average (a window of buckets: the number varies) */
    CHECK(hits[1000] > ROUNDS * 8 && hits[1000] < ROUNDS * 12);
    CHECK(chisq_fair("sample, 1000 entries", chisq_draws(hits, 1000), 1000));
    /* sparse: deletes down to 100 leave a big table with runs of empty buckets */
    for (long i = 100; i < 1000; i++)
        del(d, i);
    memset(hits, 0, sizeof hits);
    for (int r = 0; r < ROUNDS; r++)
        dict_sample(d, 5, &rng, sample_cb, hits);
    for (long i = 100; i < 1000; i++)
        CHECK(hits[i] == 0);
    CHECK(chisq_fair("sample, 100 left of 1000", chisq_draws(hits, 100), 100));
    dict_destroy(&d);
}

/* memory returns to the empty figure after churn */
static void test_memory(void)
{
    struct dict *d = dict_create();
    size_t empty = dict_memory(d);
    for (int round = 0; round < 3; round++) {
        for (long i = 0; i < 10000; i++)
            add(d, i);
        for (long i = 0; i < 10000; i++)
            CHECK(del(d, i));
    }
    for (int r = 0; r < 10000; r++)
        has(d, 1);
    CHECK(dict_size(d) == 0);
    /* the table shrank to its minimum: only it remains beyond the empty dict */
    CHECK(dict_memory(d) <= empty + 64);
    dict_destroy(&d);
}

int main(void)
{
    uint8_t seed[16];
    for (int i = 0; i < 16; i++)
        seed[i] = (uint8_t)(i * 29 + 5);
    siphash_set_seed(seed);
    test_basic();
    test_many();
    test_iter();
    test_scan_resize();
    test_values();
    test_random();
    test_destroy_step();
    test_meta_drain();
    test_resize_tail();
    test_sample();
    test_memory();
    return check_done("test_dict");
}
