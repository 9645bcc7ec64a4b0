/*
 * test_evict: the store's eviction (store_evict) and LFU counters, on a
 * store driven by a fake clock.
 *
 * - LRU: key i was last read i seconds after the start; with 64 samples
 *   the pool evicts only from the idlest half, with Redis's default 5 the
 *   evicted keys are still mostly the idle ones (mean index well below the
 *   middle a random pick would give).
 * - LFU: keys read 100 times survive evicting a fifth of the keyspace; a new
 *   key's counter is 5, reads raise it, each idle minute takes one off.
 * - TTL: the nearest expiries go first; volatile-* never evict a key
 *   without a TTL, and stop (return 0) once none is left.
 * - RANDOM empties a store across databases; long keys (past the pool's
 *   inline room) work; an expired victim counts as expired, not evicted;
 *   memory goes back to the empty store's.
 * - Fair victims, every policy: among keys alike (the same idle time,
 *   counter and expire time), each is evicted as often as any other, by
 *   chi-square over 10000 evictions of 50 keys (each victim put back).
 */
#include "percore/store.h"

#include "check.h"
#include "chisq.h"

#include <stdlib.h>

#define T0 1700000000000LL /* the fake clock's start, unix ms */
#define NKEYS 1000

static size_t key_of(char *buf, long i)
{
    return (size_t)snprintf(buf, 32, "key:%ld", i);
}

/* a store whose clock reads T0 (new keys take their access times from it) */
static struct store *fresh_store(int dbs)
{
    struct store *s = store_create(dbs);
    store_active_expire(s, T0, 1000);
    return s;
}

static void put(struct store *s, int db, long i)
{
    char k[32];
    store_set(s, db, k, key_of(k, i), object_string_create("value-of-some-length", 20), 0);
}

static void touch(struct store *s, int db, long i, int64_t now)
{
    char k[32];
    CHECK(store_lookup(s, db, k, key_of(k, i), now) != NULL);
}

static bool present(struct store *s, int db, long i, int64_t now)
{
    char k[32];
    return store_peek(s, db, k, key_of(k, i), now, NULL) != NULL;
}

/* evict n keys, one call at a time asking for a single byte */
static void evict_n(struct store *s, int how, int samples, uint64_t n, int64_t now)
{
    uint64_t target = store_evicted_keys(s) + n;
    while (store_evicted_keys(s) < target)
        if (store_evict(s, how, samples, 1, now) == 0)
            break;
}

static void test_lru(int samples)
{
    struct store *s = fresh_store(16);
    for (long i = 0; i < NKEYS; i++)
        put(s, 0, i);
    for (long i = 0; i < NKEYS; i++)
        touch(s, 0, i, T0 + i * 1000); /* key i idle (NKEYS - i) s at the end */
    int64_t now = T0 + NKEYS * 1000;
    evict_n(s, STORE_EVICT_LRU, samples, 100, now);
    CHECK_EQ_LL(store_size(s, 0), NKEYS - 100);
    long evicted_young = 0, sum = 0, count = 0;
    for (long i = 0; i < NKEYS; i++) {
        if (present(s, 0, i, now))
            continue;
        count++;
        sum += i;
        evicted_young += i >= NKEYS / 2;
    }
    CHECK_EQ_LL(count, 100);
    if (samples >= 64) {
        CHECK_EQ_LL(evicted_young, 0);
    } else {
        CHECK(count && sum / count < NKEYS / 4); /* a random pick averages NKEYS / 2 */
        CHECK(evicted_young <= 10);
    }
    CHECK_EQ_LL(store_expired_keys(s), 0);
    store_destroy(&s);
}

static void test_lfu(void)
{
    struct store *s = fresh_store(16);
    store_track_lfu(s, true, 10, 1);
    for (long i = 0; i < NKEYS; i++)
        put(s, 0, i);
    char k[32];
    size_t kl = key_of(k, 7);
    CHECK_EQ_LL(store_lfu_freq(s, 0, k, kl, T0), 5);
    CHECK_EQ_LL(store_lfu_freq(s, 0, "nope", 4, T0), -1);
    for (long i = 0; i < 100; i++)
        for (int r = 0; r < 100; r++)
            touch(s, 0, i, T0);
    int f = store_lfu_freq(s, 0, k, kl, T0);
    CHECK(f > 6 && f < 40); /* log factor 10: 100 hits land around 10 */
    /* decay: one per idle minute, without counting as an access */
    CHECK_EQ_LL(store_lfu_freq(s, 0, k, kl, T0 + 3 * 60000), f - 3);
    CHECK_EQ_LL(store_lfu_freq(s, 0, k, kl, T0 + 3 * 60000), f - 3);
    CHECK_EQ_LL(store_lfu_freq(s, 0, k, kl, T0 + 1000 * 60000LL), 0);
    /* tracking off: reads leave the counter alone */
    store_track_lfu(s, false, 10, 1);
    for (int r = 0; r < 1000; r++)
        touch(s, 0, 500, T0);
    kl = key_of(k, 500);
    CHECK_EQ_LL(store_lfu_freq(s, 0, k, kl, T0), 5);

    evict_n(s, STORE_EVICT_LFU, 64, 200, T0);
    CHECK_EQ_LL(store_size(s, 0), NKEYS - 200);
    long hot_gone = 0;
    for (long i = 0; i < 100; i++)
        hot_gone += !present(s, 0, i, T0);
    CHECK_EQ_LL(hot_gone, 0);
    store_destroy(&s);
}

static void test_volatile(int how)
{
    struct store *s = fresh_store(16);
    size_t empty = store_memory(s);
    char k[32];
    for (long i = 0; i < NKEYS; i++) {
        put(s, i % 2 ? 3 : 0, i);
        if (i % 4 < 2) /* half the keys of each db get a TTL, key i expiring at T0 + 1000 + i s */
            CHECK_EQ_LL(store_set_expire(s, i % 2 ? 3 : 0, k, key_of(k, i), T0 + (1000 + i) * 1000, T0), 0);
    }
    if ((how & ~STORE_EVICT_VOLATILE) == STORE_EVICT_TTL) {
        evict_n(s, how, 64, 100, T0);
        long late = 0;
        for (long i = 0; i < NKEYS; i++)
            if (i % 4 < 2 && !present(s, i % 2 ? 3 : 0, i, T0))
                late += i >= NKEYS / 2;
        CHECK_EQ_LL(late, 0); /* the 100 nearest expiries are all among the first half */
    }
    while (store_evict(s, how, 5, 1 << 20, T0) > 0)
        ;
    CHECK_EQ_LL(store_expires_size(s, 0) + store_expires_size(s, 3), 0);
    CHECK_EQ_LL(store_evicted_keys(s), NKEYS / 2);
    for (long i = 0; i < NKEYS; i++)
        if (i % 4 >= 2)
            CHECK(present(s, i % 2 ? 3 : 0, i, T0));
    CHECK_EQ_LL(store_evict(s, how, 5, 1, T0), 0);
    for (long i = 0; i < NKEYS; i++)
        store_delete(s, i % 2 ? 3 : 0, k, key_of(k, i), T0);
    for (int i = 0; i < 3; i++) /* shrink the tables: start, finish */
        store_rehash_step(s);
    CHECK(store_memory(s) <= empty + 8192); /* the eviction pool stays */
    store_destroy(&s);
}

static void test_random_and_long_keys(void)
{
    struct store *s = fresh_store(16);
    size_t empty = store_memory(s);
    char big[400];
    memset(big, 'x', sizeof big);
    for (long i = 0; i < NKEYS; i++) {
        int n = snprintf(big, sizeof big, "%ld", i);
        big[n] = 'x';
        store_set(s, (int)(i % 3), big, i % 2 ? sizeof big : 100, object_string_from_ll(i), 0);
    }
    evict_n(s, STORE_EVICT_LRU, 5, 300, T0);
    /* a call may take a key or two more: a shrinking table costs memory before it saves some */
    CHECK(store_evicted_keys(s) >= 300 && store_evicted_keys(s) <= 310);
    while (store_evict(s, STORE_EVICT_RANDOM, 5, 1 << 20, T0) > 0)
        ;
    CHECK_EQ_LL(store_size(s, 0) + store_size(s, 1) + store_size(s, 2), 0);
    CHECK_EQ_LL(store_evicted_keys(s), NKEYS);
    for (int i = 0; i < 3; i++) /* shrink the tables: start, finish */
        store_rehash_step(s);
    CHECK(store_memory(s) <= empty + 8192);
    store_destroy(&s);
}

static void test_expired_victim(void)
{
    struct store *s = fresh_store(1);
    char k[32];
    for (long i = 0; i < 10; i++) {
        put(s, 0, i);
        store_set_expire(s, 0, k, key_of(k, i), T0 + 10, T0);
    }
    while (store_evict(s, STORE_EVICT_TTL | STORE_EVICT_VOLATILE, 5, 1 << 20, T0 + 1000) > 0)
        ;
    CHECK_EQ_LL(store_size(s, 0), 0);
    CHECK_EQ_LL(store_expired_keys(s), 10);
    CHECK_EQ_LL(store_evicted_keys(s), 0);
    store_destroy(&s);
}

#define FAIR_KEYS 50
#define FAIR_ROUNDS 10000

/* evict one of FAIR_KEYS keys alike, note it, put it back; FAIR_ROUNDS times */
static void test_fair_victims(int how, const char *what)
{
    struct store *s = fresh_store(1);
    bool volatile_only = (how & STORE_EVICT_VOLATILE) || how == STORE_EVICT_TTL;
    char k[32];
    long hits[FAIR_KEYS] = {0};
    for (long i = 0; i < FAIR_KEYS; i++) {
        put(s, 0, i);
        if (volatile_only)
            store_set_expire(s, 0, k, key_of(k, i), T0 + 3600000, T0);
    }
    for (int r = 0; r < FAIR_ROUNDS; r++) {
        CHECK(store_evict(s, how, 5, 1, T0) > 0);
        int gone = 0;
        for (long i = 0; i < FAIR_KEYS; i++) {
            if (present(s, 0, i, T0))
                continue;
            gone++;
            hits[i]++;
            put(s, 0, i);
            if (volatile_only)
                store_set_expire(s, 0, k, key_of(k, i), T0 + 3600000, T0);
        }
        CHECK_EQ_LL(gone, 1);
    }
    CHECK(chisq_fair(what, chisq_draws(hits, FAIR_KEYS), FAIR_KEYS));
    store_destroy(&s);
}

int main(void)
{
    uint8_t seed[16] = {7};
    store_set_seed(seed);
    test_lru(64);
    test_lru(5);
    test_lfu();
    test_volatile(STORE_EVICT_LRU | STORE_EVICT_VOLATILE);
    test_volatile(STORE_EVICT_LFU | STORE_EVICT_VOLATILE);
    test_volatile(STORE_EVICT_RANDOM | STORE_EVICT_VOLATILE);
    test_volatile(STORE_EVICT_TTL | STORE_EVICT_VOLATILE);
    test_random_and_long_keys();
    test_expired_victim();
    test_fair_victims(STORE_EVICT_RANDOM, "allkeys-random");
    test_fair_victims(STORE_EVICT_LRU, "allkeys-lru");
    test_fair_victims(STORE_EVICT_LFU, "allkeys-lfu");
    test_fair_victims(STORE_EVICT_RANDOM | STORE_EVICT_VOLATILE, "volatile-random");
    test_fair_victims(STORE_EVICT_LRU | STORE_EVICT_VOLATILE, "volatile-lru");
    test_fair_victims(STORE_EVICT_LFU | STORE_EVICT_VOLATILE, "volatile-lfu");
    test_fair_victims(STORE_EVICT_TTL, "volatile-ttl");
    return check_done("test_evict");
}
