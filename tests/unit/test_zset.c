/*
 * test_zset: the sorted set structure (server/store/zset.c) in both
 * encodings, checked against a plain sorted array model after random
 * operations: order, ranks, score and lex ranges, range removals, the
 * listpack <-> skiplist conversions, serialize/deserialize (and rejection of
 * malformed bytes), memory accounting and lazy free.
 */
#include "percore/zset.h"

#include "percore/object.h"

#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* ---- the model: members sorted by (score, member) */

struct mel {
    char m[16];
    size_t n;
    double s;
};

static struct mel model[4096];
static size_t mlen;

static int mcmp(const char *a, size_t an, const char *b, size_t bn)
{
    size_t k = an < bn ? an : bn;
    int c = k ? memcmp(a, b, k) : 0;
    if (c)
        return c;
    return an < bn ? -1 : (an > bn ? 1 : 0);
}

static int elcmp(const struct mel *a, const struct mel *b)
{
    if (a->s < b->s)
        return -1;
    if (a->s > b->s)
        return 1;
    return mcmp(a->m, a->n, b->m, b->n);
}

static long model_find(const char *m, size_t n)
{
    for (size_t i = 0; i < mlen; i++)
        if (model[i].n == n && memcmp(model[i].m, m, n) == 0)
            return (long)i;
    return -1;
}

static void model_del_at(size_t i)
{
    memmove(&model[i], &model[i + 1], (mlen - i - 1) * sizeof(model[0]));
    mlen--;
}

static void model_set(const char *m, size_t n, double s)
{
    long i = model_find(m, n);
    if (i >= 0)
        model_del_at((size_t)i);
    struct mel e;
    memcpy(e.m, m, n);
    e.n = n;
    e.s = s;
    size_t at = 0;
    while (at < mlen && elcmp(&model[at], &e) < 0)
        at++;
    memmove(&model[at + 1], &model[at], (mlen - at) * sizeof(model[0]));
    model[at] = e;
    mlen++;
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static size_t member_of(char *buf, uint64_t i)
{
    /* some members share prefixes, one holds a NUL, one is empty */
    if (i == 0)
        return 0;
    if (i == 1) {
        buf[0] = 'a';
        buf[1] = '\0';
        return 2;
    }
    return (size_t)snprintf(buf, 16, "m%llu", (unsigned long long)i);
}

/* the zset equals the model, in order, with ranks both ways */
static bool same_as_model(struct zset *z)
{
    if (!zset_check(z) || zset_length(z) != mlen)
        return false;
    struct zset_iter it;
    size_t i = 0;
    for (zset_iter_rank(z, 0, false, &it); it.valid; zset_iter_step(&it, false), i++) {
        size_t n;
        const char *p = zset_iter_member(&it, &n);
        if (i >= mlen || n != model[i].n || memcmp(p, model[i].m, n) != 0 ||
            zset_iter_scoreval(&it) != model[i].s)
            return false;
    }
    if (i != mlen)
        return false;
    i = mlen;
    for (zset_iter_rank(z, 0, true, &it); it.valid; zset_iter_step(&it, true)) {
        size_t n;
        const char *p = zset_iter_member(&it, &n);
        if (i == 0)
            return false;
        i--;
        if (n != model[i].n || memcmp(p, model[i].m, n) != 0)
            return false;
    }
    for (size_t k = 0; k < mlen; k += 1 + mlen / 16) {
        double s;
        if (zset_rank(z, model[k].m, model[k].n, false) != (long)k ||
            zset_rank(z, model[k].m, model[k].n, true) != (long)(mlen - 1 - k) ||
            !zset_score(z, model[k].m, model[k].n, &s) || s != model[k].s)
            return false;
        zset_iter_rank(z, k, false, &it);
        size_t n;
        const char *p = zset_iter_member(&it, &n);
        if (n != model[k].n || memcmp(p, model[k].m, n) != 0)
            return false;
    }
    return true;
}

static size_t model_count(const struct zset_range *r)
{
    size_t c = 0;
    for (size_t i = 0; i < mlen; i++)
        if (zset_value_gte_min(model[i].s, r) && zset_value_lte_max(model[i].s, r))
            c++;
    return c;
}

/* ---- random operations against the model */

static void random_ops(enum zset_encoding enc, size_t max_entries, int ops, uint64_t members)
{
    struct zset *z = zset_create(enc);
    mlen = 0;
    int bad = 0;
    for (int k = 0; k < ops && !bad; k++) {
        char m[16];
        size_t n = member_of(m, rnd() % members);
        double s = (double)(int)(rnd() % 20) - 5;
        if (rnd() % 7 == 0)
            s += 0.5;
        int op = (int)(rnd() % 10);
        if (op < 5) {
            int in = 0, out;
            double ns;
            if (rnd() % 5 == 0)
                in = ZADD_IN_INCR;
            double cur;
            bool had = zset_score(z, m, n, &cur);
            CHECK(zset_add(z, s, m, n, in, &out, &ns, max_entries, 64));
            double want = (in && had) ? cur + s : s;
            CHECK(ns == want);
            CHECK(!!(out & ZADD_OUT_ADDED) == !had);
            model_set(m, n, want);
        } else if (op < 7) {
            long i = model_find(m, n);
            CHECK(zset_delete(z, m, n) == (i >= 0));
            if (i >= 0)
                model_del_at((size_t)i);
        } else if (op == 7 && mlen > 0) {
            size_t a = rnd() % mlen, b = a + rnd() % 3;
            if (b >= mlen)
                b = mlen - 1;
            CHECK_EQ_LL(zset_delete_rank(z, a, b), b - a + 1);
            for (size_t i = a; i <= b; i++)
                model_del_at(a);
        } else if (op == 8) {
            struct zset_range r = {(double)(int)(rnd() % 20) - 5, 0, rnd() % 2, rnd() % 2};
            r.max = r.min + (double)(rnd() % 4);
            CHECK_EQ_LL(zset_count_score(z, &r), model_count(&r));
            if (rnd() % 4 == 0) {
                size_t want = model_count(&r);
                CHECK_EQ_LL(zset_delete_score(z, &r), want);
                for (size_t i = 0; i < mlen;) {
                    if (zset_value_gte_min(model[i].s, &r) && zset_value_lte_max(model[i].s, &r))
                        model_del_at(i);
                    else
                        i++;
                }
            } else {
                /* first/last in range match the model */
                struct zset_iter it;
                zset_iter_score(z, &r, false, &it);
                long first = -1, last = -1;
                for (size_t i = 0; i < mlen; i++)
                    if (zset_value_gte_min(model[i].s, &r) && zset_value_lte_max(model[i].s, &r)) {
                        if (first < 0)
                            first = (long)i;
                        last = (long)i;
                    }
                CHECK(it.valid == (first >= 0));
                if (it.valid && first >= 0) {
                    size_t n2;
                    const char *p = zset_iter_member(&it, &n2);
                    CHECK(n2 == model[first].n && memcmp(p, model[first].m, n2) == 0);
                    zset_iter_score(z, &r, true, &it);
                    p = zset_iter_member(&it, &n2);
                    CHECK(n2 == model[last].n && memcmp(p, model[last].m, n2) == 0);
                }
            }
        } else {
            /* random member is a member */
            if (mlen) {
                const char *p;
                size_t n2;
                double sc;
                zset_random(z, &p, &n2, &sc);
                long i = model_find(p, n2);
                CHECK(i >= 0 && model[i].s == sc);
            }
        }
        if (zset_length(z) > max_entries)
            CHECK(zset_encoding(z) == ZSET_ENC_SKIPLIST);
        if (k % 64 == 0 || k == ops - 1) {
            bool ok = same_as_model(z);
            CHECK(ok);
            if (!ok)
                bad = 1;
        }
    }
    zset_destroy(&z);
    CHECK(z == NULL);
}

/* ---- lex ranges on equal scores */

static void test_lex(enum zset_encoding enc)
{
    struct zset *z = zset_create(enc);
    const char *ms[] = {"a", "b", "c", "d", "e", "f", "g"};
    int out;
    for (int i = 0; i < 7; i++)
        zset_add(z, 0, ms[i], 1, 0, &out, NULL, 128, 64);
    struct zset_lex_range r;
    CHECK(zset_parse_lex_range("[b", 2, "(e", 2, &r));
    CHECK_EQ_LL(zset_count_lex(z, &r), 3);
    CHECK(zset_parse_lex_range("-", 1, "+", 1, &r));
    CHECK_EQ_LL(zset_count_lex(z, &r), 7);
    CHECK(zset_parse_lex_range("+", 1, "-", 1, &r));
    CHECK_EQ_LL(zset_count_lex(z, &r), 0);
    CHECK(zset_parse_lex_range("(c", 2, "(c", 2, &r));
    CHECK_EQ_LL(zset_count_lex(z, &r), 0);
    CHECK(!zset_parse_lex_range("b", 1, "+", 1, &r));
    CHECK(!zset_parse_lex_range("+x", 2, "+", 1, &r));
    CHECK(!zset_parse_lex_range("", 0, "+", 1, &r));
    CHECK(zset_parse_lex_range("(b", 2, "[f", 2, &r));
    struct zset_iter it;
    zset_iter_lex(z, &r, true, &it);
    size_t n;
    CHECK(it.valid && zset_iter_member(&it, &n)[0] == 'f');
    zset_iter_lex(z, &r, false, &it);
    CHECK(it.valid && zset_iter_member(&it, &n)[0] == 'c');
    CHECK_EQ_LL(zset_delete_lex(z, &r), 4);
    CHECK_EQ_LL(zset_length(z), 3);
    CHECK(zset_check(z));
    zset_destroy(&z);
}

static void test_parse_range(void)
{
    struct zset_range r;
    CHECK(zset_parse_range("(1", 2, "+inf", 4, &r) && r.minex && !r.maxex && r.min == 1 &&
          isinf(r.max));
    CHECK(zset_parse_range("", 0, "(", 1, &r) && r.min == 0 && r.maxex && r.max == 0);
    CHECK(zset_parse_range("1\0x", 3, "2", 1, &r) && r.min == 1);
    CHECK(!zset_parse_range("nan", 3, "1", 1, &r));
    CHECK(!zset_parse_range("1", 1, "x", 1, &r));
    CHECK(!zset_parse_range("1 ", 2, "2", 1, &r));
    CHECK(zset_parse_range(" 1", 2, "2", 1, &r));
}

/* ---- ZADD flags */

static void test_add_flags(void)
{
    struct zset *z = zset_create(ZSET_ENC_LISTPACK);
    int out;
    double ns;
    CHECK(zset_add(z, 1, "a", 1, ZADD_IN_XX, &out, &ns, 128, 64) && (out & ZADD_OUT_NOP));
    CHECK_EQ_LL(zset_length(z), 0);
    CHECK(zset_add(z, 1, "a", 1, ZADD_IN_NX, &out, &ns, 128, 64) && (out & ZADD_OUT_ADDED));
    CHECK(zset_add(z, 5, "a", 1, ZADD_IN_NX, &out, &ns, 128, 64) && (out & ZADD_OUT_NOP));
    CHECK(zset_add(z, 0, "a", 1, ZADD_IN_GT, &out, &ns, 128, 64) && (out & ZADD_OUT_NOP));
    CHECK(zset_add(z, 3, "a", 1, ZADD_IN_GT, &out, &ns, 128, 64) && (out & ZADD_OUT_UPDATED));
    CHECK(zset_add(z, 2, "a", 1, ZADD_IN_INCR | ZADD_IN_LT, &out, &ns, 128, 64) &&
          (out & ZADD_OUT_NOP));
    CHECK(zset_add(z, -2, "a", 1, ZADD_IN_INCR | ZADD_IN_LT, &out, &ns, 128, 64) && ns == 1);
    CHECK(zset_add(z, INFINITY, "a", 1, 0, &out, &ns, 128, 64));
    CHECK(!zset_add(z, -INFINITY, "a", 1, ZADD_IN_INCR, &out, &ns, 128, 64) &&
          (out & ZADD_OUT_NAN));
    CHECK(!zset_add(z, NAN, "b", 1, 0, &out, &ns, 128, 64));
    /* -0 becomes 0 in a listpack (as Redis's integer-encoded score), stays -0 in a skiplist */
    double s;
    zset_add(z, -0.0, "n", 1, 0, &out, &ns, 128, 64);
    CHECK(zset_score(z, "n", 1, &s) && s == 0 && !signbit(s));
    zset_convert(z, ZSET_ENC_SKIPLIST);
    zset_add(z, -0.0, "m", 1, 0, &out, &ns, 128, 64);
    CHECK(zset_score(z, "m", 1, &s) && signbit(s));
    /* a long member converts; thresholds on entries too */
    zset_destroy(&z);
    z = zset_create(ZSET_ENC_LISTPACK);
    zset_add(z, 1, "short", 5, 0, &out, &ns, 2, 8);
    zset_add(z, 1, "a-long-member", 13, 0, &out, &ns, 2, 8);
    CHECK(zset_encoding(z) == ZSET_ENC_SKIPLIST);
    zset_destroy(&z);
    z = zset_create(ZSET_ENC_LISTPACK);
    zset_add(z, 1, "a", 1, 0, &out, &ns, 2, 8);
    zset_add(z, 2, "b", 1, 0, &out, &ns, 2, 8);
    CHECK(zset_encoding(z) == ZSET_ENC_LISTPACK);
    zset_add(z, 2, "b", 1, 0, &out, &ns, 2, 8);
    CHECK(zset_encoding(z) == ZSET_ENC_LISTPACK);
    zset_add(z, 3, "c", 1, ZADD_IN_XX, &out, &ns, 2, 8);
    CHECK(zset_encoding(z) == ZSET_ENC_LISTPACK);
    zset_add(z, 3, "c", 1, 0, &out, &ns, 2, 8);
    CHECK(zset_encoding(z) == ZSET_ENC_SKIPLIST && zset_check(z));
    zset_maybe_shrink(z, 1, 2, 8);
    CHECK(zset_encoding(z) == ZSET_ENC_SKIPLIST);
    zset_maybe_shrink(z, 1, 3, 8);
    CHECK(zset_encoding(z) == ZSET_ENC_LISTPACK && zset_check(z) && zset_length(z) == 3);
    zset_destroy(&z);
}

/* ---- serialize / deserialize through the object layer */

struct buf {
    char *p;
    size_t n, cap;
};

static void emit(void *arg, const void *p, size_t n)
{
    struct buf *b = arg;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void test_serialize(enum zset_encoding enc, int count)
{
    struct zset *z = zset_create(enc);
    int out;
    char m[16];
    for (int i = 0; i < count; i++) {
        size_t n = member_of(m, (uint64_t)i);
        zset_add(z, (double)(i % 7) - 3.5, m, n, 0, &out, NULL, 100000, 64);
    }
    struct object *o = object_collection_create(OBJ_ZSET, zset_encoding(z), z);
    CHECK(strcmp(object_encoding_name(o), enc == ZSET_ENC_LISTPACK ? "listpack" : "skiplist") == 0);
    CHECK(strcmp(object_type_name(o), "zset") == 0);
    CHECK_EQ_LL(object_length(o), count);
    CHECK(object_memory(o) > (size_t)count);
    struct buf b = {0};
    object_serialize(o, emit, &b);
    struct object *o2 = object_deserialize(b.p, b.n);
    CHECK(o2 != NULL);
    if (o2) {
        struct zset *z2 = object_collection_ptr(o2);
        CHECK(zset_encoding(z2) == enc && zset_length(z2) == (size_t)count && zset_check(z2));
        CHECK(strcmp(object_encoding_name(o2), object_encoding_name(o)) == 0);
        struct zset_iter a, c;
        zset_iter_rank(z, 0, false, &a);
        zset_iter_rank(z2, 0, false, &c);
        for (; a.valid && c.valid; zset_iter_step(&a, false), zset_iter_step(&c, false)) {
            size_t n1, n2;
            const char *p1 = zset_iter_member(&a, &n1), *p2 = zset_iter_member(&c, &n2);
            CHECK(n1 == n2 && memcmp(p1, p2, n1) == 0 &&
                  zset_iter_scoreval(&a) == zset_iter_scoreval(&c));
        }
        CHECK(!a.valid && !c.valid);
        object_destroy(&o2);
    }
    /* every truncation and a few corruptions are rejected (the object layer
     * adds its own header: corrupt past it) */
    for (size_t cut = 0; cut < b.n; cut += 1 + b.n / 50) {
        struct object *bad = object_deserialize(b.p, cut);
        CHECK(bad == NULL);
        object_destroy(&bad);
    }
    if (count >= 2) {
        /* swap the first two members' bytes: breaks the order (or duplicates) */
        char *copy = malloc(b.n + 8);
        memcpy(copy, b.p, b.n);
        memcpy(copy + b.n, "\0\0\0\0\0\0\0\0", 8); /* trailing junk */
        struct object *bad = object_deserialize(copy, b.n + 8);
        CHECK(bad == NULL);
        object_destroy(&bad);
        free(copy);
    }
    free(b.p);
    /* lazy free in small steps */
    int steps = 0;
    while (!object_destroy_step(&o, 3))
        steps++;
    CHECK(o == NULL);
    CHECK(enc == ZSET_ENC_LISTPACK || count < 6 || steps > 0);
}

static void test_bad_bytes(void)
{
    unsigned char junk[64];
    unsigned encoding;
    for (int i = 0; i < 200; i++) {
        size_t n = rnd() % sizeof(junk);
        for (size_t k = 0; k < n; k++)
            junk[k] = (unsigned char)rnd();
        void *p = zset_type_ops.deserialize(junk, n, &encoding);
        if (p) {
            struct zset *z = p;
            CHECK(zset_check(z));
            zset_destroy(&z);
        }
    }
    /* NaN score, duplicate member */
    unsigned char b[64];
    size_t n = 0;
    uint64_t count = 1;
    uint32_t len = 1;
    double nan = NAN;
    b[n++] = ZSET_ENC_SKIPLIST;
    memcpy(b + n, &count, 8);
    n += 8;
    memcpy(b + n, &len, 4);
    n += 4;
    b[n++] = 'a';
    memcpy(b + n, &nan, 8);
    n += 8;
    CHECK(zset_type_ops.deserialize(b, n, &encoding) == NULL);
    n = 0;
    count = 2;
    double s1 = 1, s2 = 2;
    b[n++] = ZSET_ENC_LISTPACK;
    memcpy(b + n, &count, 8);
    n += 8;
    memcpy(b + n, &len, 4);
    n += 4;
    b[n++] = 'a';
    memcpy(b + n, &s1, 8);
    n += 8;
    memcpy(b + n, &len, 4);
    n += 4;
    b[n++] = 'a';
    memcpy(b + n, &s2, 8);
    n += 8;
    CHECK(zset_type_ops.deserialize(b, n, &encoding) == NULL);
    b[n - 9] = 'b';
    void *ok = zset_type_ops.deserialize(b, n, &encoding);
    CHECK(ok != NULL && encoding == ZSET_ENC_LISTPACK);
    if (ok) {
        struct zset *z = ok;
        CHECK(zset_length(z) == 2 && zset_check(z));
        zset_destroy(&z);
    }
}

/* ---- memory tracks additions and removals */

static void test_memory(void)
{
    struct zset *z = zset_create(ZSET_ENC_SKIPLIST);
    size_t m0 = zset_memory(z);
    int out;
    char m[16];
    for (int i = 0; i < 1000; i++) {
        size_t n = member_of(m, (uint64_t)i + 2);
        zset_add(z, i, m, n, 0, &out, NULL, 0, 0);
    }
    size_t m1 = zset_memory(z);
    CHECK(m1 > m0 + 1000 * 40);
    zset_delete_rank(z, 0, 999);
    CHECK_EQ_LL(zset_length(z), 0);
    CHECK(zset_memory(z) < m1 / 4);
    zset_destroy(&z);

    z = zset_create(ZSET_ENC_LISTPACK);
    m0 = zset_memory(z);
    for (int i = 0; i < 100; i++) {
        size_t n = member_of(m, (uint64_t)i + 2);
        zset_add(z, i, m, n, 0, &out, NULL, 128, 64);
    }
    CHECK(zset_memory(z) > m0 + 100 * 10);
    zset_destroy(&z);
}

/* ---- scan returns every member of a skiplist */

static size_t scanned;
static void scan_fn(void *arg, const char *ele, size_t len, double score)
{
    (void)arg;
    (void)ele;
    (void)len;
    (void)score;
    scanned++;
}

static void test_scan(void)
{
    struct zset *z = zset_create(ZSET_ENC_SKIPLIST);
    int out;
    char m[16];
    for (int i = 0; i < 500; i++) {
        size_t n = member_of(m, (uint64_t)i + 2);
        zset_add(z, i, m, n, 0, &out, NULL, 0, 0);
    }
    uint64_t cur = 0;
    scanned = 0;
    do {
        cur = zset_scan(z, cur, scan_fn, NULL);
    } while (cur);
    CHECK(scanned >= 500);
    zset_convert(z, ZSET_ENC_LISTPACK);
    scanned = 0;
    CHECK(zset_scan(z, 0, scan_fn, NULL) == 0 && scanned == 500);
    zset_destroy(&z);
}

int main(void)
{
    test_parse_range();
    test_add_flags();
    test_lex(ZSET_ENC_LISTPACK);
    test_lex(ZSET_ENC_SKIPLIST);
    random_ops(ZSET_ENC_LISTPACK, 128, 3000, 40);
    random_ops(ZSET_ENC_LISTPACK, 16, 3000, 60);
    random_ops(ZSET_ENC_SKIPLIST, 0, 20000, 3000);
    random_ops(ZSET_ENC_SKIPLIST, 0, 5000, 20);
    test_serialize(ZSET_ENC_LISTPACK, 1);
    test_serialize(ZSET_ENC_LISTPACK, 50);
    test_serialize(ZSET_ENC_SKIPLIST, 1);
    test_serialize(ZSET_ENC_SKIPLIST, 300);
    test_bad_bytes();
    test_memory();
    test_scan();
    return check_done("test_zset");
}
