/*
 * siphash: SipHash-1-3 (Aumasson & Bernstein), the keyed hash of every hash
 * table in the server (the store's key tables and the dicts of sets, hashes
 * and sorted sets), so crafted keys cannot pile into one bucket.
 *
 * The process-wide key is set once at startup (store_set_seed() calls
 * siphash_set_seed()) before any shard thread runs; afterwards it is only
 * read, so any thread may call these functions.
 */
#ifndef PERCORE_SIPHASH_H
#define PERCORE_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* set the process-wide key (16 bytes, little-endian k0 then k1); startup only */
void siphash_set_seed(const uint8_t seed[16]);
/* the two halves of the process-wide key (e.g. to seed a private PRNG) */
uint64_t siphash_seed_k0(void);
uint64_t siphash_seed_k1(void);

/* SipHash-1-3 of p[0..n) under the key (k0, k1) */
uint64_t siphash(const void *p, size_t n, uint64_t k0, uint64_t k1);
/* SipHash-1-3 of p[0..n) under the process-wide key */
uint64_t siphash_seeded(const void *p, size_t n);

#endif
