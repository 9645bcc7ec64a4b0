/*
 * ring: bounded MPSC ring of pointers (include/percore/ring.h).
 *
 * What.  Dmitry Vyukov's bounded queue, with one consumer.  Each cell holds
 * a sequence number and an item.  A cell at position pos is free for the
 * producer of pos when seq == pos, and holds that producer's item when
 * seq == pos + 1; the consumer frees it for the next lap by setting
 * seq = pos + capacity.
 *  - push: read tail; if its cell's seq == tail, claim the position with a CAS
 *    on tail, write the item, then publish it with a release store of
 *    seq = pos + 1.  seq < pos means the consumer has not freed the cell from
 *    the previous lap: the ring is full and push fails (it never grows,
 *    ARCHITECTURE.md rule 4).  seq > pos means another producer won: reload tail.
 *  - pop: the consumer alone owns head; it takes the cell's item once an
 *    acquire load sees seq == head + 1, then frees the cell with a release
 *    store and advances head.
 * The release/acquire pairs on seq order the item's plain write before its
 * read, and the consumer's read before the next lap's write.  tail needs no
 * ordering of its own (relaxed CAS): seq carries all the synchronisation.
 *
 * Why.  A cross-shard batch costs one CAS and two stores to send and no
 * atomic read-modify-write to receive.  The read-only fields, the producers'
 * tail and the consumer's head sit on three separate 128-byte lines (two
 * 64-byte lines, as the adjacent-line prefetcher pairs them), so the consumer
 * draining never slows the producers down by false sharing.
 *
 * Caveat for the doorbell.  pop sees the ring empty while the oldest claimed
 * cell is not yet published, even if later cells are: the producer of that
 * cell is between its CAS and its publish, and must itself ring the doorbell
 * (or not) after publishing, never decide before.
 *
 * Threading.  ring_push and ring_capacity: any thread.  ring_pop,
 * ring_pop_batch: the one consumer thread.  ring_empty: any thread, as a
 * snapshot.  create/destroy: with no concurrent users.
 */
#include "percore/ring.h"

#include "percore/mem.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define RING_LINE 128

struct ring_cell {
    _Atomic size_t seq; /* pos: free for pos; pos + 1: holds pos's item */
    void *item;         /* written by the claiming producer, read by the consumer */
};

struct ring {
    /* read-only after create */
    alignas(RING_LINE) size_t mask; /* capacity - 1 */
    struct ring_cell *cells;        /* capacity cells, right after this struct */
    void *block;                    /* what mem_alloc returned (for alignment) */
    /* producers */
    alignas(RING_LINE) _Atomic size_t tail; /* next position to claim */
    /* consumer */
    alignas(RING_LINE) _Atomic size_t head; /* next position to pop; relaxed, read by ring_empty */
};

_Static_assert(offsetof(struct ring, tail) == RING_LINE, "tail shares the read-only line");
_Static_assert(offsetof(struct ring, head) - offsetof(struct ring, tail) == RING_LINE,
               "head and tail are not one line apart");
_Static_assert(sizeof(struct ring) == 3 * RING_LINE, "struct ring is not three lines");
_Static_assert(sizeof(struct ring_cell) == 2 * sizeof(void *), "a cell is not two words");

struct ring *ring_create(size_t capacity_pow2)
{
    size_t cap = 2; /* Vyukov's queue needs two cells at least */
    struct ring *ring;
    void *block;

    while (cap < capacity_pow2)
        cap <<= 1;
    block = mem_alloc(sizeof(struct ring) + cap * sizeof(struct ring_cell) + RING_LINE - 1);
    ring = (struct ring *)(((uintptr_t)block + RING_LINE - 1) & ~(uintptr_t)(RING_LINE - 1));
    ring->mask = cap - 1;
    ring->cells = (struct ring_cell *)(ring + 1);
    ring->block = block;
    for (size_t i = 0; i < cap; i++) {
        atomic_init(&ring->cells[i].seq, i);
        ring->cells[i].item = NULL;
    }
    atomic_init(&ring->tail, 0);
    atomic_init(&ring->head, 0);
    return ring;
}

void ring_destroy(struct ring **ring)
{
    if (ring == NULL || *ring == NULL)
        return;
    mem_release((*ring)->block);
    *ring = NULL;
}

bool ring_push(struct ring *ring, void *item)
{
    size_t pos = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    struct ring_cell *cell;

    for (;;) {
        cell = &ring->cells[pos & ring->mask];
        size_t seq = atomic_load_explicit(&cell->seq, memory_order_acquire);
        intptr_t dif = (intptr_t)(seq - pos);
        if (dif == 0) {
            /* on failure pos is reloaded with the current tail */
            if (atomic_compare_exchange_weak_explicit(&ring->tail, &pos, pos + 1,
                                                      memory_order_relaxed,
                                                      memory_order_relaxed))
                break;
        } else if (dif < 0) {
            return false; /* full: the consumer has not freed this cell yet */
        } else {
            pos = atomic_load_explicit(&ring->tail, memory_order_relaxed);
        }
    }
    cell->item = item;
    atomic_store_explicit(&cell->seq, pos + 1, memory_order_release);
    return true;
}

size_t ring_pop_batch(struct ring *ring, void **items, size_t n)
{
    size_t pos = atomic_load_explicit(&ring->head, memory_order_relaxed);
    size_t got = 0;

    while (got < n) {
        struct ring_cell *cell = &ring->cells[pos & ring->mask];
        if (atomic_load_explicit(&cell->seq, memory_order_acquire) != pos + 1)
            break; /* empty, or its producer has not published yet */
        items[got++] = cell->item;
        atomic_store_explicit(&cell->seq, pos + ring->mask + 1, memory_order_release);
        pos++;
    }
    if (got > 0)
        atomic_store_explicit(&ring->head, pos, memory_order_relaxed);
    return got;
}

void *ring_pop(struct ring *ring)
{
    void *item;

    return ring_pop_batch(ring, &item, 1) ? item : NULL;
}

bool ring_empty(const struct ring *ring)
{
    return atomic_load_explicit(&ring->head, memory_order_relaxed) ==
           atomic_load_explicit(&ring->tail, memory_order_relaxed);
}

size_t ring_capacity(const struct ring *ring)
{
    return ring->mask + 1;
}
