/*
 * ring: a bounded multi-producer single-consumer ring of pointers.
 *
 * Fixed capacity (a power of two), set at creation: a full ring refuses a
 * push instead of growing (ARCHITECTURE.md rule 4).  Producers claim a cell with a
 * CAS on the tail; each cell carries a sequence number (Vyukov's bounded
 * queue), so the consumer never sees a half-written cell.  Head (consumer)
 * and tail (producers) live on separate cache lines.
 */
#ifndef PERCORE_RING_H
#define PERCORE_RING_H

#include <stdbool.h>
#include <stddef.h>

struct ring;

struct ring *ring_create(size_t capacity_pow2);
void ring_destroy(struct ring **ring);
/* any thread; false when full */
bool ring_push(struct ring *ring, void *item);
/* the consumer thread only; NULL when empty */
void *ring_pop(struct ring *ring);
/* the consumer thread only; pops up to n items, returns how many */
size_t ring_pop_batch(struct ring *ring, void **items, size_t n);
/* any thread; a snapshot, exact only when nobody is pushing or popping */
bool ring_empty(const struct ring *ring);
size_t ring_capacity(const struct ring *ring);

#endif
