/*
 * intset: a sorted array of distinct 64-bit integers stored at the smallest
 * width that holds them all (int16, int32 or int64) — the small encoding of
 * sets whose members are all integers (Redis's intset).
 *
 * One allocation: an 8-byte header (width, count) and the values in
 * ascending order, native byte order.  Lookups are binary searches; an
 * insert or delete moves the tail (O(n)), which the set-max-intset-entries
 * threshold keeps small.  Functions that may move the intset take
 * `struct intset **`.
 *
 * Owned and touched by one shard thread only, like the object holding it.
 */
#ifndef PERCORE_INTSET_H
#define PERCORE_INTSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct intset;

struct intset *intset_create(void);
void intset_destroy(struct intset **is);

/* true if v was added, false if it was there already */
bool intset_add(struct intset **is, int64_t v);
/* true if v was there and is now gone */
bool intset_remove(struct intset **is, int64_t v);
bool intset_find(const struct intset *is, int64_t v);

size_t intset_len(const struct intset *is);
/* the i-th smallest value, i < intset_len() */
int64_t intset_get(const struct intset *is, size_t i);
/* bytes per value: 2, 4 or 8 */
unsigned intset_width(const struct intset *is);
/* bytes allocated, for memory accounting */
size_t intset_bytes(const struct intset *is);

/* the whole intset as bytes (to serialize), and back (validated: a width of
 * 2/4/8, a count that matches the size, strictly ascending values; NULL if
 * malformed) */
const void *intset_data(const struct intset *is, size_t *len);
struct intset *intset_from_data(const void *p, size_t n);

#endif
