/*
 * test_intset: the sorted integer array of small sets: widths and upgrades
 * (both ends), add/remove/find against a reference, order, and the
 * serialized form's validation.
 */
#include "percore/intset.h"

#include "check.h"

#include <stdlib.h>

static bool sorted(const struct intset *is)
{
    for (size_t i = 1; i < intset_len(is); i++)
        if (intset_get(is, i - 1) >= intset_get(is, i))
            return false;
    return true;
}

static void test_widths(void)
{
    struct intset *is = intset_create();
    CHECK(intset_len(is) == 0);
    CHECK(intset_width(is) == 2);
    CHECK(!intset_find(is, 0));
    CHECK(!intset_remove(&is, 0));
    CHECK(intset_add(&is, 32767));
    CHECK(intset_add(&is, -32768));
    CHECK(intset_width(is) == 2);
    CHECK(!intset_add(&is, 32767));
    CHECK(intset_add(&is, 32768));
    CHECK(intset_width(is) == 4);
    CHECK(intset_add(&is, -2147483648LL));
    CHECK(intset_width(is) == 4);
    CHECK(intset_add(&is, -2147483649LL));
    CHECK(intset_width(is) == 8);
    CHECK(intset_add(&is, INT64_MAX));
    CHECK(intset_add(&is, INT64_MIN));
    CHECK_EQ_LL(intset_len(is), 7);
    CHECK(sorted(is));
    CHECK(intset_get(is, 0) == INT64_MIN);
    CHECK(intset_get(is, 1) == -2147483649LL);
    CHECK(intset_get(is, 6) == INT64_MAX);
    CHECK(intset_find(is, 32768));
    CHECK(intset_find(is, -32768));
    CHECK(!intset_find(is, 5));
    /* removing wide values never narrows */
    CHECK(intset_remove(&is, INT64_MAX));
    CHECK(intset_remove(&is, INT64_MIN));
    CHECK(intset_remove(&is, -2147483649LL));
    CHECK(!intset_remove(&is, -2147483649LL));
    CHECK(intset_width(is) == 8);
    CHECK_EQ_LL(intset_len(is), 4);
    CHECK(sorted(is));
    intset_destroy(&is);
    CHECK(is == NULL);
    intset_destroy(&is);

    /* a small-width set never finds a value that needs more */
    is = intset_create();
    intset_add(&is, 1);
    CHECK(!intset_find(is, 65537));
    CHECK(!intset_remove(&is, 65537));
    CHECK(!intset_find(is, INT64_MIN));
    /* upgrade by a negative value prepends, by a positive one appends */
    intset_add(&is, 2);
    intset_add(&is, -100000);
    CHECK(intset_get(is, 0) == -100000 && intset_get(is, 1) == 1 && intset_get(is, 2) == 2);
    intset_add(&is, 10000000000LL);
    CHECK(intset_get(is, 3) == 10000000000LL);
    CHECK(sorted(is));
    intset_destroy(&is);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void test_random_ops(void)
{
    enum { RANGE = 3000 };
    static bool ref[RANGE];
    struct intset *is = intset_create();
    srand(7);
    size_t n = 0;
    for (int r = 0; r < 100000; r++) {
        int v = rand() % RANGE;
        int64_t x = (int64_t)v - RANGE / 2;
        if (v % 500 == 0)
            x *= 10000000; /* some values need 8 bytes */
        if (rand() % 3) {
            bool added = intset_add(&is, x);
            CHECK(added == !ref[v]);
            if (added)
                n++;
            ref[v] = true;
        } else {
            bool removed = intset_remove(&is, x);
            CHECK(removed == ref[v]);
            if (removed)
                n--;
            ref[v] = false;
        }
    }
    CHECK_EQ_LL(intset_len(is), n);
    CHECK(sorted(is));
    int64_t *vals = malloc(n * sizeof *vals);
    size_t k = 0;
    for (int v = 0; v < RANGE; v++) {
        int64_t x = (int64_t)v - RANGE / 2;
        if (v % 500 == 0)
            x *= 10000000;
        if (ref[v])
            vals[k++] = x;
        CHECK(intset_find(is, x) == ref[v]);
    }
    qsort(vals, k, sizeof *vals, cmp_i64);
    CHECK(k == n);
    for (size_t i = 0; i < k; i++)
        CHECK(intset_get(is, i) == vals[i]);
    free(vals);
    CHECK(intset_bytes(is) >= 8 + n * intset_width(is));
    intset_destroy(&is);
}

static void test_data(void)
{
    struct intset *is = intset_create();
    for (int64_t v = -5; v <= 5; v++)
        intset_add(&is, v * 1000);
    size_t len;
    const void *p = intset_data(is, &len);
    CHECK(len == 8 + 11 * 2);
    struct intset *copy = intset_from_data(p, len);
    CHECK(copy != NULL);
    if (copy) {
        CHECK(intset_len(copy) == 11);
        for (size_t i = 0; i < 11; i++)
            CHECK(intset_get(copy, i) == intset_get(is, i));
        intset_destroy(&copy);
    }
    /* malformed: short, bad width, wrong count, unsorted, duplicate */
    unsigned char buf[64];
    memcpy(buf, p, len);
    CHECK(intset_from_data(buf, 4) == NULL);
    CHECK(intset_from_data(buf, len - 1) == NULL);
    CHECK(intset_from_data(buf, len + 2) == NULL);
    unsigned char bad[64];
    memcpy(bad, buf, len);
    bad[0] = 3;
    CHECK(intset_from_data(bad, len) == NULL);
    memcpy(bad, buf, len);
    bad[4] = 12; /* count says 12 */
    CHECK(intset_from_data(bad, len) == NULL);
    memcpy(bad, buf, len);
    memcpy(bad + 8, buf + 10, 2); /* first == second */
    CHECK(intset_from_data(bad, len) == NULL);
    memcpy(bad, buf, len);
    memcpy(bad + 8, buf + 8 + 20, 2); /* first is the largest */
    CHECK(intset_from_data(bad, len) == NULL);
    /* empty, and a wide set of small values (after removals) are fine */
    struct intset *e = intset_create();
    p = intset_data(e, &len);
    copy = intset_from_data(p, len);
    CHECK(copy != NULL && intset_len(copy) == 0);
    intset_destroy(&copy);
    intset_add(&e, 1);
    intset_add(&e, INT64_MAX);
    intset_remove(&e, INT64_MAX);
    p = intset_data(e, &len);
    copy = intset_from_data(p, len);
    CHECK(copy != NULL && intset_width(copy) == 8 && intset_get(copy, 0) == 1);
    intset_destroy(&copy);
    intset_destroy(&e);
    intset_destroy(&is);
}

int main(void)
{
    test_widths();
    test_random_ops();
    test_data();
    return check_done("test_intset");
}
