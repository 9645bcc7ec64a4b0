/*
 * pqsort: Redis's partial quicksort (pqsort.c, after NetBSD's qsort): sorts
 * base[0..n) only as far as needed for the elements whose final positions
 * are in [lrange, rrange] to be in place, in the same sequence of
 * comparisons and swaps as Redis's, so that equal elements end where
 * Redis's end (GEORADIUS ... COUNT).  Any thread; no allocation.
 */
#ifndef PERCORE_PQSORT_H
#define PERCORE_PQSORT_H

#include <stddef.h>

typedef int pqsort_cmp_fn(const void *a, const void *b);

void pqsort(void *base, size_t n, size_t size, pqsort_cmp_fn *cmp, size_t lrange, size_t rrange);

#endif
