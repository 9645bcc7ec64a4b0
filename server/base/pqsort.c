/*
 * pqsort: a quicksort that skips the partitions lying wholly outside the
 * wanted range of positions (include/percore/pqsort.h).
 *
 * Design: Bentley and McIlroy's "Engineering a sort function" as NetBSD and
 * Redis write it: insertion sort below 7 elements; the pivot the median of
 * three (of three medians of three above 40 elements) moved to the front;
 * a three-way partition that parks elements equal to the pivot at both ends
 * and swaps them into the middle afterwards; then the left part recursively
 * and the right part by iteration, each only when it overlaps the range.
 * Equal elements are not kept in order, so the order of ties is the
 * algorithm's: every choice here is Redis's, which is the point.
 *
 * Pure function on the caller's array: any thread.
 */
#include "percore/pqsort.h"

#include <stdint.h>

/* exchange n bytes at a and b */
static void swap_bytes(char *a, char *b, size_t n)
{
    while (n--) {
        char t = *a;
        *a++ = *b;
        *b++ = t;
    }
}

static char *median_of_three(char *a, char *b, char *c, pqsort_cmp_fn *cmp)
{
    if (cmp(a, b) < 0)
        return cmp(b, c) < 0 ? b : (cmp(a, c) < 0 ? c : a);
    return cmp(b, c) > 0 ? b : (cmp(a, c) < 0 ? a : c);
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* does [lo, hi] (bytes) miss [lrange, rrange] (bytes) entirely */
static int outside(const char *lo, const char *hi, const char *lrange, const char *rrange)
{
    return (lrange < lo && rrange < lo) || (lrange > hi && rrange > hi);
}

static void partial_sort(char *a, size_t n, size_t es, pqsort_cmp_fn *cmp, const char *lrange, const char *rrange)
{
    for (;;) {
        if (n < 7) {
            for (char *m = a + es; m < a + n * es; m += es)
                for (char *l = m; l > a && cmp(l - es, l) > 0; l -= es)
                    swap_bytes(l, l - es, es);
            return;
        }
        char *pivot = a + (n / 2) * es;
        if (n > 7) {
            char *first = a, *last = a + (n - 1) * es;
            if (n > 40) {
                size_t d = (n / 8) * es;
                first = median_of_three(first, first + d, first + 2 * d, cmp);
                pivot = median_of_three(pivot - d, pivot, pivot + d, cmp);
                last = median_of_three(last - 2 * d, last - d, last, cmp);
            }
            pivot = median_of_three(first, pivot, last, cmp);
        }
        swap_bytes(a, pivot, es);

        /* [a+es, left_eq): equal; [left_eq, lo): less; (hi, right_eq]: greater; (right_eq, end): equal */
        char *left_eq = a + es, *lo = a + es;
        char *hi = a + (n - 1) * es, *right_eq = hi;
        for (;;) {
            int c;
            while (lo <= hi && (c = cmp(lo, a)) <= 0) {
                if (c == 0) {
                    swap_bytes(left_eq, lo, es);
                    left_eq += es;
                }
                lo += es;
            }
            while (lo <= hi && (c = cmp(hi, a)) >= 0) {
                if (c == 0) {
                    swap_bytes(hi, right_eq, es);
                    right_eq -= es;
                }
                hi -= es;
            }
            if (lo > hi)
                break;
            swap_bytes(lo, hi, es);
            lo += es;
            hi -= es;
        }

        char *end = a + n * es;
        size_t r = min_size((size_t)(left_eq - a), (size_t)(lo - left_eq));
        swap_bytes(a, lo - r, r);
        r = min_size((size_t)(right_eq - hi), (size_t)(end - right_eq) - es);
        swap_bytes(lo, end - r, r);

        if ((r = (size_t)(lo - left_eq)) > es && !outside(a, a + r - 1, lrange, rrange))
            partial_sort(a, r / es, es, cmp, lrange, rrange);
        if ((r = (size_t)(right_eq - hi)) <= es)
            return;
        a = end - r;
        n = r / es;
        if (outside(a, a + r - 1, lrange, rrange))
            return;
    }
}

void pqsort(void *base, size_t n, size_t size, pqsort_cmp_fn *cmp, size_t lrange, size_t rrange)
{
    char *a = base;
    partial_sort(a, n, size, cmp, a + lrange * size, a + (rrange + 1) * size - 1);
}
