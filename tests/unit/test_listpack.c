/*
 * test_listpack: the packed array against a plain array model, under random
 * inserts, deletes and replaces with entry sizes across every length-prefix
 * boundary; walking both ways, seek, find with skip, ranges, and the
 * serialized form (round trip, and every corruption refused).
 */
#include "check.h"

#include "percore/listpack.h"
#include "percore/mem.h"

#include <stdlib.h>
#include <string.h>

#define MODEL_MAX 600

struct model {
    char *v[MODEL_MAX];
    size_t len[MODEL_MAX];
    int n;
};

static const size_t sizes[] = {0, 1, 5, 120, 121, 122, 127, 128, 129, 16370, 16383, 16384, 16390};

static void fill(char *buf, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)('a' + (seed + i * 7) % 26);
}

static void check_same(const struct listpack *lp, const struct model *m)
{
    CHECK_EQ_LL(lp_count(lp), m->n);
    uint32_t pos = lp_first(lp);
    for (int i = 0; i < m->n; i++) {
        size_t len;
        const char *e = lp_get(lp, pos, &len);
        CHECK_EQ_LL(len, m->len[i]);
        CHECK(len == m->len[i] && memcmp(e, m->v[i], len) == 0);
        pos = lp_next(lp, pos);
    }
    CHECK(pos == LP_NONE);
    pos = lp_last(lp);
    for (int i = m->n - 1; i >= 0; i--) {
        size_t len;
        lp_get(lp, pos, &len);
        CHECK_EQ_LL(len, m->len[i]);
        CHECK(pos == lp_seek(lp, i));
        CHECK(pos == lp_seek(lp, i - m->n));
        pos = lp_prev(lp, pos);
    }
    CHECK(pos == LP_NONE);
    CHECK(lp_seek(lp, m->n) == LP_NONE);
    CHECK(lp_seek(lp, -m->n - 1) == LP_NONE);
}

static void model_insert(struct model *m, int at, size_t size, unsigned seed)
{
    memmove(&m->v[at + 1], &m->v[at], (size_t)(m->n - at) * sizeof(char *));
    memmove(&m->len[at + 1], &m->len[at], (size_t)(m->n - at) * sizeof(size_t));
    m->v[at] = malloc(size ? size : 1);
    fill(m->v[at], size, seed);
    m->len[at] = size;
    m->n++;
}

static void model_delete(struct model *m, int at)
{
    free(m->v[at]);
    memmove(&m->v[at], &m->v[at + 1], (size_t)(m->n - at - 1) * sizeof(char *));
    memmove(&m->len[at], &m->len[at + 1], (size_t)(m->n - at - 1) * sizeof(size_t));
    m->n--;
}

static void test_random_ops(void)
{
    struct listpack *lp = lp_create();
    struct model m = {.n = 0};
    srand(12345);
    for (int step = 0; step < 3000; step++) {
        int op = rand() % 10;
        size_t size = sizes[rand() % (sizeof(sizes) / sizeof(sizes[0]))];
        if (size > 200 && rand() % 4)
            size = (size_t)(rand() % 40); /* keep it mostly small */
        unsigned seed = (unsigned)rand();
        if ((op < 5 || m.n == 0) && m.n < MODEL_MAX) {
            int at = m.n ? rand() % (m.n + 1) : 0;
            char *buf = malloc(size ? size : 1);
            fill(buf, size, seed);
            if (at == m.n)
                lp_append(&lp, buf, size);
            else if (at == 0 && rand() % 2)
                lp_prepend(&lp, buf, size);
            else
                CHECK_EQ_LL(lp_insert(&lp, lp_seek(lp, at), buf, size), lp_seek(lp, at));
            free(buf);
            model_insert(&m, at, size, seed);
        } else if (op < 8 && m.n) {
            int at = rand() % m.n;
            uint32_t next = lp_delete(&lp, lp_seek(lp, at));
            model_delete(&m, at);
            CHECK(next == (at < m.n ? lp_seek(lp, at) : LP_NONE));
        } else if (m.n) {
            int at = rand() % m.n;
            char *buf = malloc(size ? size : 1);
            fill(buf, size, seed);
            lp_replace(&lp, lp_seek(lp, at), buf, size);
            free(m.v[at]);
            m.v[at] = buf;
            m.len[at] = size;
        }
        if (step % 50 == 0)
            check_same(lp, &m);
    }
    check_same(lp, &m);

    /* delete_range from the middle and with a negative index */
    if (m.n > 10) {
        lp_delete_range(&lp, 3, 4);
        for (int i = 0; i < 4; i++)
            model_delete(&m, 3);
        lp_delete_range(&lp, -2, 10); /* more than is left: stops at the end */
        model_delete(&m, m.n - 1);
        model_delete(&m, m.n - 1);
        check_same(lp, &m);
    }

    /* serialized form: round trip, and corruptions refused */
    size_t n;
    const void *data = lp_data(lp, &n);
    struct listpack *copy = lp_from_data(data, n);
    CHECK(copy != NULL);
    if (copy)
        check_same(copy, &m);
    lp_destroy(&copy);
    CHECK(lp_from_data(data, n - 1) == NULL);
    CHECK(lp_from_data(data, 3) == NULL);
    unsigned char *bad = malloc(n);
    int refused = 0, tried = 0;
    for (size_t i = 8; i < n && tried < 400; i += 1 + n / 400, tried++) {
        memcpy(bad, data, n);
        bad[i] ^= 0x80;
        struct listpack *b = lp_from_data(bad, n);
        if (!b)
            refused++;
        else
            lp_destroy(&b); /* a flip inside a payload byte is still a valid listpack */
    }
    CHECK(refused > 0);
    free(bad);

    while (m.n)
        model_delete(&m, 0);
    lp_destroy(&lp);
    CHECK(lp == NULL);
}

static void test_find(void)
{
    struct listpack *lp = lp_create();
    const char *pairs[] = {"f1", "v1", "f2", "f1", "f3", "v3"};
    for (int i = 0; i < 6; i++)
        lp_append(&lp, pairs[i], strlen(pairs[i]));
    /* as fields (skip 1): "f1" the value of f2 must not match */
    uint32_t p = lp_find(lp, lp_first(lp), "f1", 2, 1);
    CHECK(p == lp_seek(lp, 0));
    CHECK(lp_find(lp, lp_next(lp, lp_next(lp, p)), "f1", 2, 1) == LP_NONE);
    CHECK(lp_find(lp, lp_first(lp), "f3", 2, 1) == lp_seek(lp, 4));
    CHECK(lp_find(lp, lp_first(lp), "v1", 2, 1) == LP_NONE);
    /* as plain entries (skip 0) */
    CHECK(lp_find(lp, lp_next(lp, lp_first(lp)), "f1", 2, 0) == lp_seek(lp, 3));
    CHECK(lp_find(lp, lp_first(lp), "", 0, 0) == LP_NONE);
    lp_append(&lp, "", 0);
    CHECK(lp_find(lp, lp_first(lp), "", 0, 0) == lp_seek(lp, -1));
    CHECK(lp_bytes(lp) >= 8);
    lp_destroy(&lp);
}

/* the 6-byte header's 16-bit count saturates at 65535: counted by walking past it, exact again
 * once deletes bring it under; positions, copies and serialized bytes keep working */
static void test_count_saturates(void)
{
    struct listpack *lp = lp_create();
    size_t n0;
    lp_data(lp, &n0);
    CHECK_EQ_LL(n0, 6);
    const long N = 70000;
    for (long i = 0; i < N; i++) {
        char b[16];
        int n = snprintf(b, sizeof b, "%ld", i % 10);
        lp_append(&lp, b, (size_t)n);
    }
    CHECK_EQ_LL(lp_count(lp), N);
    size_t len;
    const char *e = lp_get(lp, lp_seek(lp, 65536), &len);
    CHECK(len == 1 && e[0] == '6');
    CHECK(lp_seek(lp, N) == LP_NONE && lp_seek(lp, N - 1) != LP_NONE);
    struct listpack *c = lp_dup(lp);
    CHECK_EQ_LL(lp_count(c), N);
    const void *d = lp_data(lp, &len);
    struct listpack *back = lp_from_data(d, len);
    CHECK(back != NULL && lp_count(back) == (size_t)N);
    lp_destroy(&back);
    lp_destroy(&c);
    /* inserts past the limit keep it unknown; deletes recount */
    lp_insert(&lp, lp_first(lp), "x", 1);
    CHECK_EQ_LL(lp_count(lp), N + 1);
    lp_delete_range(&lp, 0, (size_t)(N + 1 - 65534));
    CHECK_EQ_LL(lp_count(lp), 65534);
    lp_delete(&lp, lp_first(lp));
    CHECK_EQ_LL(lp_count(lp), 65533);
    d = lp_data(lp, &len);
    back = lp_from_data(d, len);
    CHECK(back != NULL && lp_count(back) == 65533);
    lp_destroy(&back);
    lp_destroy(&lp);
}

int main(void)
{
    test_random_ops();
    test_find();
    test_count_saturates();
    return check_done("test_listpack");
}
