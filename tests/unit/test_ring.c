/*
 * test_ring: the bounded MPSC ring.  Single-threaded: FIFO order, a full
 * ring refuses, the capacity never changes, wrap-around.  Concurrent:
 * several producers hammer one consumer through a small ring (so it is
 * full most of the time); nothing is lost or duplicated and each producer's
 * items arrive in the order it pushed them.  Run it under TSan too.
 */
#include "percore/ring.h"

#include "check.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

#define PRODUCERS 4
#define PER_PRODUCER 200000

/* an item: producer number in the high bits, sequence in the low ones */
static void *item_of(uintptr_t producer, uintptr_t seq)
{
    return (void *)((producer << 32 | seq) + 1); /* never NULL */
}

struct producer {
    struct ring *ring;
    uintptr_t id;
    unsigned long full; /* pushes refused */
};

static void *produce(void *arg)
{
    struct producer *p = arg;

    for (uintptr_t seq = 0; seq < PER_PRODUCER; seq++) {
        while (!ring_push(p->ring, item_of(p->id, seq))) {
            p->full++;
            sched_yield();
        }
    }
    return NULL;
}

static void test_single_thread(void)
{
    struct ring *ring = ring_create(8);
    void *items[16];

    CHECK(ring != NULL);
    CHECK_EQ_LL(ring_capacity(ring), 8);
    CHECK(ring_empty(ring));
    CHECK(ring_pop(ring) == NULL);
    CHECK_EQ_LL(ring_pop_batch(ring, items, 16), 0);
    for (int lap = 0; lap < 5; lap++) { /* wraps around several times */
        for (uintptr_t i = 0; i < 8; i++)
            CHECK(ring_push(ring, item_of(0, i)));
        CHECK(!ring_push(ring, item_of(0, 99))); /* full: refused, not grown */
        CHECK(!ring_empty(ring));
        CHECK_EQ_LL(ring_capacity(ring), 8);
        CHECK(ring_pop(ring) == item_of(0, 0));
        CHECK(ring_push(ring, item_of(0, 8))); /* one freed, one fits */
        CHECK(!ring_push(ring, item_of(0, 99)));
        CHECK_EQ_LL(ring_pop_batch(ring, items, 3), 3);
        CHECK(items[0] == item_of(0, 1) && items[1] == item_of(0, 2) && items[2] == item_of(0, 3));
        CHECK_EQ_LL(ring_pop_batch(ring, items, 16), 5);
        CHECK(items[0] == item_of(0, 4) && items[4] == item_of(0, 8));
        CHECK(ring_empty(ring));
        CHECK(ring_pop(ring) == NULL);
    }
    ring_destroy(&ring);
    CHECK(ring == NULL);
    ring_destroy(&ring); /* no-op */
    ring_destroy(NULL);

    /* capacities are powers of two, at least two */
    ring = ring_create(1);
    CHECK_EQ_LL(ring_capacity(ring), 2);
    CHECK(ring_push(ring, item_of(0, 1)) && ring_push(ring, item_of(0, 2)));
    CHECK(!ring_push(ring, item_of(0, 3)));
    ring_destroy(&ring);
    ring = ring_create(1000);
    CHECK_EQ_LL(ring_capacity(ring), 1024);
    ring_destroy(&ring);
}

static void test_producers(void)
{
    struct ring *ring = ring_create(64);
    struct producer prod[PRODUCERS];
    pthread_t threads[PRODUCERS];
    uintptr_t next[PRODUCERS] = {0};
    unsigned long got = 0, empty = 0;
    bool ordered = true;
    void *batch[16];

    for (int i = 0; i < PRODUCERS; i++) {
        prod[i] = (struct producer){.ring = ring, .id = (uintptr_t)i};
        CHECK(pthread_create(&threads[i], NULL, produce, &prod[i]) == 0);
    }
    while (got < (unsigned long)PRODUCERS * PER_PRODUCER) {
        /* alternate single pops and batches */
        size_t n = got % 3 ? ring_pop_batch(ring, batch, 16) : (batch[0] = ring_pop(ring)) != NULL;
        if (n == 0) {
            empty++;
            sched_yield();
            continue;
        }
        for (size_t k = 0; k < n; k++) {
            uintptr_t v = (uintptr_t)batch[k] - 1;
            uintptr_t id = v >> 32, seq = v & 0xffffffffu;
            if (id >= PRODUCERS || seq != next[id]) {
                ordered = false;
                break;
            }
            next[id]++;
        }
        got += n;
        if (!ordered)
            break;
    }
    CHECK(ordered);
    for (int i = 0; i < PRODUCERS; i++) {
        CHECK(pthread_join(threads[i], NULL) == 0);
        CHECK_EQ_LL(next[i], PER_PRODUCER);
    }
    CHECK(ring_empty(ring));
    CHECK(ring_pop(ring) == NULL);
    CHECK_EQ_LL(ring_capacity(ring), 64);
    unsigned long full = 0;
    for (int i = 0; i < PRODUCERS; i++)
        full += prod[i].full;
    printf("test_ring: %lu pops found it empty, %lu pushes found it full\n", empty, full);
    ring_destroy(&ring);
}

int main(void)
{
    test_single_thread();
    test_producers();
    return check_done("test_ring");
}
