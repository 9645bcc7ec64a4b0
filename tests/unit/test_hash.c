/*
 * test_hash: the hash type's structures (store/hash.c).  Fields are binary
 * (they hold NUL bytes); both encodings, the conversions Redis 7.0 makes and
 * the ones it never makes, iteration order, HSCAN coverage, random picks,
 * serialize/deserialize (with malformed input), lazy free and memory.
 */
#include "percore/hash.h"
#include "percore/mem.h"
#include "percore/siphash.h"

#include "check.h"

#include <limits.h>
#include <stdlib.h>

static const struct hash_limits lim_default = {128, 64};

/* field i: "f\0" + decimal i, so every field holds a NUL byte */
static size_t field_of(char *buf, long i)
{
    buf[0] = 'f';
    buf[1] = '\0';
    return 2 + (size_t)snprintf(buf + 2, 30, "%ld", i);
}

static long index_of(const char *f, size_t flen)
{
    char tmp[32];
    if (flen < 3 || flen > 30 || f[0] != 'f' || f[1] != '\0')
        return -1;
    memcpy(tmp, f + 2, flen - 2);
    tmp[flen - 2] = '\0';
    return strtol(tmp, NULL, 10);
}

static int set_i(struct object *o, const struct hash_limits *lim, long i, long v)
{
    char f[32], val[32];
    size_t fn = field_of(f, i);
    int vn = snprintf(val, sizeof val, "v%ld", v);
    return hash_set(o, lim, f, fn, val, (size_t)vn);
}

static bool get_i(const struct object *o, long i, long *v)
{
    char f[32];
    size_t fn = field_of(f, i);
    const char *p;
    size_t n;
    if (!hash_get(o, f, fn, &p, &n))
        return false;
    char tmp[32];
    if (n < 2 || n > 30 || p[0] != 'v')
        return false;
    memcpy(tmp, p + 1, n - 1);
    tmp[n - 1] = '\0';
    *v = strtol(tmp, NULL, 10);
    return true;
}

static bool del_i(struct object *o, long i)
{
    char f[32];
    size_t fn = field_of(f, i);
    return hash_delete(o, f, fn);
}

static void test_listpack_basics(void)
{
    struct object *o = hash_create();
    long v;

    CHECK(object_type(o) == OBJ_HASH);
    CHECK(strcmp(object_type_name(o), "hash") == 0);
    CHECK(strcmp(object_encoding_name(o), "listpack") == 0);
    CHECK_EQ_LL(hash_length(o), 0);
    CHECK(!get_i(o, 1, &v));

    CHECK_EQ_LL(set_i(o, &lim_default, 1, 10), 0);
    CHECK_EQ_LL(set_i(o, &lim_default, 2, 20), 0);
    CHECK_EQ_LL(set_i(o, &lim_default, 3, 30), 0);
    CHECK_EQ_LL(set_i(o, &lim_default, 2, 200), 1); /* update */
    CHECK_EQ_LL(hash_length(o), 3);
    CHECK_EQ_LL(object_length(o), 3);
    CHECK(get_i(o, 2, &v) && v == 200);
    CHECK(get_i(o, 3, &v) && v == 30);
    CHECK(!get_i(o, 4, &v));

    /* a value equal to a field name is not a field */
    CHECK_EQ_LL(hash_set(o, &lim_default, "x", 1, "f", 1), 0);
    CHECK(!hash_exists(o, "f", 1));
    CHECK(hash_exists(o, "x", 1));

    /* empty field and value */
    CHECK_EQ_LL(hash_set(o, &lim_default, "", 0, "", 0), 0);
    const char *p;
    size_t n = 99;
    CHECK(hash_get(o, "", 0, &p, &n) && n == 0);

    /* insertion order, updates in place */
    struct hash_iter it;
    const char *f, *val;
    size_t flen, vlen;
    long order[] = {1, 2, 3};
    int k = 0;
    hash_iter_init(&it, o);
    while (hash_iter_next(&it, &f, &flen, &val, &vlen)) {
        if (k < 3)
            CHECK_EQ_LL(index_of(f, flen), order[k]);
        k++;
    }
    CHECK_EQ_LL(k, 5);

    CHECK(del_i(o, 2));
    CHECK(!del_i(o, 2));
    CHECK(!get_i(o, 2, &v));
    CHECK(get_i(o, 3, &v) && v == 30);
    CHECK(hash_delete(o, "", 0));
    CHECK(hash_delete(o, "x", 1));
    CHECK_EQ_LL(hash_length(o), 2);
    CHECK(strcmp(object_encoding_name(o), "listpack") == 0);
    object_destroy(&o);
    CHECK(o == NULL);
}

static void test_conversion_by_entries(void)
{
    struct hash_limits lim = {4, 64};
    struct object *o = hash_create();
    long v;
    for (long i = 0; i < 4; i++)
        set_i(o, &lim, i, i);
    CHECK(strcmp(object_encoding_name(o), "listpack") == 0);
    set_i(o, &lim, 3, 33); /* an update does not add a field */
    CHECK(strcmp(object_encoding_name(o), "listpack") == 0);
    set_i(o, &lim, 4, 4);
    CHECK(strcmp(object_encoding_name(o), "hashtable") == 0);
    CHECK_EQ_LL(hash_length(o), 5);
    for (long i = 0; i < 5; i++)
        CHECK(get_i(o, i, &v) && v == (i == 3 ? 33 : i));
    /* never back, even when small again or when the limit is raised */
    for (long i = 0; i < 4; i++)
        CHECK(del_i(o, i));
    CHECK_EQ_LL(hash_length(o), 1);
    lim.max_entries = 1000;
    set_i(o, &lim, 7, 7);
    CHECK(strcmp(object_encoding_name(o), "hashtable") == 0);
    CHECK_EQ_LL(set_i(o, &lim, 7, 8), 1);
    object_destroy(&o);

    /* a limit of 0: the first field converts */
    struct hash_limits zero = {0, 64};
    o = hash_create();
    set_i(o, &zero, 1, 1);
    CHECK(strcmp(object_encoding_name(o), "hashtable") == 0);
    object_destroy(&o);
}

static void test_conversion_by_length(void)
{
    struct hash_limits lim = {128, 8};
    struct object *o = hash_create();
    CHECK_EQ_LL(hash_set(o, &lim, "12345678", 8, "abcdefgh", 8), 0);
    CHECK(strcmp(object_encoding_name(o), "listpack") == 0);
    CHECK_EQ_LL(hash_set(o, &lim, "a", 1, "123456789", 9), 0);
    CHECK(strcmp(object_encoding_name(o), "hashtable") == 0);
    const char *p;
    size_t n;
    CHECK(hash_get(o, "12345678", 8, &p, &n));
    CHECK_MEM(p, n, "abcdefgh");
    CHECK(hash_get(o, "a", 1, &p, &n));
    CHECK_MEM(p, n, "123456789");
    object_destroy(&o);

    o = hash_create();
    hash_set(o, &lim, "123456789", 9, "", 0); /* a long field */
    CHECK(strcmp(object_encoding_name(o), "hashtable") == 0);
    object_destroy(&o);

    /* hash_try_conversion: before the writes, from the longest argument */
    o = hash_create();
    hash_set(o, &lim, "a", 1, "1", 1);
    hash_try_conversion(o, &lim, 8, 100);
    CHECK(strcmp(object_encoding_name(o), "listpack") == 0);
    hash_try_conversion(o, &lim, 9, 9);
    CHECK(strcmp(object_encoding_name(o), "hashtable") == 0);
    CHECK(hash_get(o, "a", 1, &p, &n));
    CHECK_MEM(p, n, "1");
    hash_try_conversion(o, &lim, 0, 0); /* a no-op on a hashtable */
    CHECK(strcmp(object_encoding_name(o), "hashtable") == 0);
    object_destroy(&o);

    /* the listpack's safe size (1 GiB), without allocating it */
    o = hash_create();
    hash_try_conversion(o, &lim_default, 1, (size_t)1 << 31);
    CHECK(strcmp(object_encoding_name(o), "hashtable") == 0);
    object_destroy(&o);

    /* hash_convert keeps every pair */
    o = hash_create();
    for (long i = 0; i < 50; i++)
        set_i(o, &lim_default, i, i * 3);
    hash_convert(o);
    CHECK(strcmp(object_encoding_name(o), "hashtable") == 0);
    CHECK_EQ_LL(hash_length(o), 50);
    long v;
    for (long i = 0; i < 50; i++)
        CHECK(get_i(o, i, &v) && v == i * 3);
    hash_convert(o);
    CHECK_EQ_LL(hash_length(o), 50);
    object_destroy(&o);
}

/* a hash of n fields i -> "v<i>", in the encoding asked for */
static struct object *make(long n, bool table)
{
    struct object *o = hash_create();
    for (long i = 0; i < n; i++)
        set_i(o, &lim_default, i, i);
    if (table)
        hash_convert(o);
    return o;
}

static void test_iteration(void)
{
    for (int table = 0; table <= 1; table++) {
        long n = table ? 1000 : 100;
        struct object *o = make(n, table);
        char *seen = calloc((size_t)n, 1);
        struct hash_iter it;
        const char *f, *v;
        size_t flen, vlen;
        long count = 0, bad = 0;
        hash_iter_init(&it, o);
        while (hash_iter_next(&it, &f, &flen, &v, &vlen)) {
            long i = index_of(f, flen);
            if (i < 0 || i >= n || seen[i])
                bad++;
            else
                seen[i] = 1;
            if (!table && i != count)
                bad++; /* listpack: insertion order */
            count++;
        }
        CHECK_EQ_LL(count, n);
        CHECK_EQ_LL(bad, 0);
        free(seen);
        object_destroy(&o);
    }
}

struct seen_set {
    long n;       /* fields 0..n-1 */
    char *seen;   /* how often each came */
    long calls;   /* pairs handed over */
    long bad;     /* unknown fields or wrong values */
    long last;    /* last index (order checks) */
    long unorder; /* out of increasing order */
};

static void seen_pair(void *arg, const char *f, size_t flen, const char *v, size_t vlen)
{
    struct seen_set *s = arg;
    long i = index_of(f, flen);
    char want[32];
    int wn = snprintf(want, sizeof want, "v%ld", i);
    s->calls++;
    if (i < 0 || i >= s->n || (size_t)wn != vlen || memcmp(want, v, vlen) != 0) {
        s->bad++;
        return;
    }
    if (s->seen[i] < 100)
        s->seen[i]++;
    if (i <= s->last)
        s->unorder++;
    s->last = i;
}

static void seen_reset(struct seen_set *s, long n)
{
    free(s->seen);
    s->n = n;
    s->seen = calloc((size_t)n, 1);
    s->calls = s->bad = s->unorder = 0;
    s->last = -1;
}

static void test_scan(void)
{
    struct seen_set s = {0};

    /* a listpack: everything at once, cursor 0, whatever the cursor was */
    struct object *o = make(20, false);
    seen_reset(&s, 20);
    CHECK_EQ_LL(hash_scan(o, 12345, 1, seen_pair, &s), 0);
    CHECK_EQ_LL(s.calls, 20);
    CHECK_EQ_LL(s.unorder, 0);
    CHECK_EQ_LL(s.bad, 0);
    object_destroy(&o);

    /* a hashtable: full coverage with small counts, while it changes */
    o = make(2000, true);
    seen_reset(&s, 4000);
    uint64_t cursor = 0;
    long steps = 0;
    do {
        cursor = hash_scan(o, cursor, 10, seen_pair, &s);
        steps++;
        /* fields added during the scan may or may not come; the old ones must */
        if (steps == 20)
            for (long i = 2000; i < 4000; i++)
                set_i(o, &lim_default, i, i);
    } while (cursor != 0 && steps < 100000);
    CHECK_EQ_LL(cursor, 0);
    CHECK(steps > 20);
    long missing = 0;
    for (long i = 0; i < 2000; i++)
        missing += s.seen[i] == 0;
    CHECK_EQ_LL(missing, 0);
    CHECK_EQ_LL(s.bad, 0);

    /* a count covering the table: one call does it all */
    seen_reset(&s, 4000);
    CHECK_EQ_LL(hash_scan(o, 0, 100000, seen_pair, &s), 0);
    CHECK_EQ_LL(s.calls, 4000);
    /* a huge count does not overflow into "stop at once" */
    seen_reset(&s, 4000);
    CHECK_EQ_LL(hash_scan(o, 0, (unsigned long)LONG_MAX, seen_pair, &s), 0);
    CHECK_EQ_LL(s.calls, 4000);
    object_destroy(&o);
    free(s.seen);
}

static void test_random(void)
{
    struct seen_set s = {0};
    for (int table = 0; table <= 1; table++) {
        long n = table ? 300 : 50;
        struct object *o = make(n, table);

        /* hash_random: always a real pair, and not always the same one */
        seen_reset(&s, n);
        for (int k = 0; k < 2000; k++) {
            const char *f, *v;
            size_t flen, vlen;
            hash_random(o, &f, &flen, &v, &vlen);
            seen_pair(&s, f, flen, v, vlen);
        }
        CHECK_EQ_LL(s.bad, 0);
        long distinct = 0;
        for (long i = 0; i < n; i++)
            distinct += s.seen[i] != 0;
        CHECK(distinct > n / 2);

        /* unique picks: few of many (case 4), most of them (case 3) */
        long counts[] = {1, 3, n / 3 - 1, n / 2, n - 1};
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            seen_reset(&s, n);
            hash_random_unique(o, (size_t)counts[c], seen_pair, &s);
            CHECK_EQ_LL(s.calls, counts[c]);
            CHECK_EQ_LL(s.bad, 0);
            long dup = 0;
            for (long i = 0; i < n; i++)
                dup += s.seen[i] > 1;
            CHECK_EQ_LL(dup, 0);
            if (!table)
                CHECK_EQ_LL(s.unorder, 0); /* a listpack answers in its order */
        }
        object_destroy(&o);
    }
    free(s.seen);
}

struct buf {
    char *p;
    size_t len, cap;
};

static void buf_emit(void *arg, const void *p, size_t n)
{
    struct buf *b = arg;
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 16;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

/* same fields and values, same encoding */
static bool same_hash(const struct object *a, const struct object *b)
{
    if (hash_length(a) != hash_length(b) ||
        strcmp(object_encoding_name(a), object_encoding_name(b)) != 0)
        return false;
    struct hash_iter it;
    const char *f, *v, *w;
    size_t flen, vlen, wlen;
    hash_iter_init(&it, a);
    while (hash_iter_next(&it, &f, &flen, &v, &vlen))
        if (!hash_get(b, f, flen, &w, &wlen) || wlen != vlen || memcmp(v, w, vlen) != 0)
            return false;
    return true;
}

static void test_serialize(void)
{
    for (int table = 0; table <= 1; table++) {
        struct object *o = make(table ? 500 : 30, table);
        hash_set(o, &lim_default, "", 0, "", 0);
        hash_set(o, &lim_default, "bin\0x", 5, "\0\r\n", 3);
        struct buf b = {0};
        object_serialize(o, buf_emit, &b);
        struct object *c = object_deserialize(b.p, b.len);
        CHECK(c != NULL);
        if (c) {
            CHECK(object_type(c) == OBJ_HASH);
            CHECK(same_hash(o, c));
            object_destroy(&c);
        }
        /* every truncation is rejected, and so is a trailing byte */
        long accepted = 0;
        for (size_t cut = 0; cut < b.len; cut += (b.len > 3000 ? 7 : 1)) {
            struct object *t = object_deserialize(b.p, cut);
            accepted += t != NULL;
            object_destroy(&t);
        }
        CHECK_EQ_LL(accepted, 0);
        buf_emit(&b, "", 1);
        CHECK(object_deserialize(b.p, b.len) == NULL);
        free(b.p);
        object_destroy(&o);
    }

    /* an empty hash round-trips too */
    struct object *e = hash_create();
    struct buf b = {0};
    object_serialize(e, buf_emit, &b);
    struct object *c = object_deserialize(b.p, b.len);
    CHECK(c != NULL && hash_length(c) == 0);
    object_destroy(&c);
    object_destroy(&e);
    free(b.p);

    /* a listpack with a field twice, or an odd number of entries */
    struct object *o = hash_create();
    hash_set(o, &lim_default, "a", 1, "1", 1);
    hash_set(o, &lim_default, "b", 1, "a", 1);
    hash_set(o, &lim_default, "c", 1, "3", 1);
    b = (struct buf){0};
    object_serialize(o, buf_emit, &b);
    /* entries a 1 b a c 3: make the third entry "a" too (each entry is len,byte,back) */
    char *bad = malloc(b.len);
    memcpy(bad, b.p, b.len);
    bool patched = false;
    for (size_t i = 0; i + 2 < b.len; i++) {
        if (bad[i] == 1 && bad[i + 1] == 'b' && bad[i + 2] == 2) {
            bad[i + 1] = 'a';
            patched = true;
            break;
        }
    }
    CHECK(patched);
    CHECK(object_deserialize(bad, b.len) == NULL);
    free(bad);
    free(b.p);
    object_destroy(&o);

    /* many pairs (the dict-checked path), one repeated */
    o = make(100, false);
    b = (struct buf){0};
    object_serialize(o, buf_emit, &b);
    c = object_deserialize(b.p, b.len);
    CHECK(c != NULL && same_hash(o, c));
    object_destroy(&c);
    free(b.p);
    object_destroy(&o);

    /* a hashtable with a field twice */
    o = hash_create();
    hash_set(o, &lim_default, "a", 1, "1", 1);
    hash_set(o, &lim_default, "b", 1, "2", 1);
    hash_convert(o);
    b = (struct buf){0};
    object_serialize(o, buf_emit, &b);
    bad = malloc(b.len);
    memcpy(bad, b.p, b.len);
    for (size_t i = 0; i + 4 < b.len; i++)
        if (bad[i] == 1 && bad[i + 1] == 0 && bad[i + 2] == 0 && bad[i + 3] == 0 &&
            bad[i + 4] == 'b')
            bad[i + 4] = 'a';
    CHECK(object_deserialize(bad, b.len) == NULL);
    /* a count bigger than the bytes could hold */
    memcpy(bad, b.p, b.len);
    bad[2 + 1 + 7] = 0x7f;
    CHECK(object_deserialize(bad, b.len) == NULL);
    /* an unknown encoding byte */
    memcpy(bad, b.p, b.len);
    bad[2] = 9;
    CHECK(object_deserialize(bad, b.len) == NULL);
    free(bad);
    free(b.p);
    object_destroy(&o);
}

static void test_memory_and_free(void)
{
    /* a listpack's figure is its block; it grows with the pairs */
    struct object *o = hash_create();
    size_t m0 = object_memory(o);
    for (long i = 0; i < 5; i++)
        set_i(o, &lim_default, i, i);
    size_t m5 = object_memory(o);
    CHECK(m5 > m0);
    /*
     * 5 small pairs ("f\0<i>" -> "v<i>"): the object header block (16 bytes)
     * plus one listpack of 8 + 10 entries of 1 + len + 1 bytes, with
     * allocator rounding: well under what Redis 7 spends (robj 16 + the
     * listpack in its jemalloc size class).
     */
    CHECK(m5 <= 16 + 8 + 10 * 5 + 32);
    object_destroy(&o);

    /* a hashtable's figure follows adds and deletes */
    o = make(1000, true);
    size_t big = object_memory(o);
    for (long i = 0; i < 990; i++)
        del_i(o, i);
    long v;
    get_i(o, 995, &v); /* lets the dict shrink */
    CHECK(object_memory(o) < big);
    object_destroy(&o);

    /* lazy free in steps */
    o = make(5000, true);
    int steps = 0;
    while (!object_destroy_step(&o, 100))
        steps++;
    CHECK(o == NULL);
    CHECK(steps >= 10);
    o = make(10, false);
    CHECK(object_destroy_step(&o, 1));
    CHECK(o == NULL);
}

int main(void)
{
    uint8_t seed[16];
    for (int i = 0; i < 16; i++)
        seed[i] = (uint8_t)(i * 31 + 7);
    siphash_set_seed(seed);

    test_listpack_basics();
    test_conversion_by_entries();
    test_conversion_by_length();
    test_iteration();
    test_scan();
    test_random();
    test_serialize();
    test_memory_and_free();
    return check_done("test_hash");
}
