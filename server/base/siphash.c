/*
 * siphash: SipHash-1-3 under a process-wide key (see include/percore/siphash.h).
 *
 * Design.  The reference SipHash-c-d with c = 1 compression round and d = 3
 * finalization rounds, Rust's and Redis's choice for hash tables: short keys
 * dominate, and 1-3 keeps the flooding resistance that matters here (the
 * attacker does not see the hashes) at a third of SipHash-2-4's cost.
 *
 * Threading: the key is written once by siphash_set_seed() before any shard
 * thread starts and only read afterwards.
 */
#include "percore/siphash.h"

#include <string.h>

#define SIP_CROUNDS 1
#define SIP_DROUNDS 3

static uint64_t seed_k0, seed_k1;

void siphash_set_seed(const uint8_t seed[16])
{
    uint64_t k[2] = {0, 0};
    for (int i = 0; i < 16; i++)
        k[i / 8] |= (uint64_t)seed[i] << (8 * (i % 8));
    seed_k0 = k[0];
    seed_k1 = k[1];
}

uint64_t siphash_seed_k0(void)
{
    return seed_k0;
}

uint64_t siphash_seed_k1(void)
{
    return seed_k1;
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                               \
    do {                                                                       \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);              \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                 \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                 \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);              \
    } while (0)

uint64_t siphash(const void *p, size_t n, uint64_t k0, uint64_t k1)
{
    const unsigned char *in = p;
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
    uint64_t v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
    uint64_t v3 = 0x7465646279746573ULL ^ k1;
    uint64_t m;
    size_t i;

    for (i = 0; i + 8 <= n; i += 8) {
        memcpy(&m, in + i, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        m = __builtin_bswap64(m);
#endif
        v3 ^= m;
        for (int r = 0; r < SIP_CROUNDS; r++)
            SIPROUND;
        v0 ^= m;
    }
    m = (uint64_t)n << 56;
    for (size_t j = 0; i + j < n; j++)
        m |= (uint64_t)in[i + j] << (8 * j);
    v3 ^= m;
    for (int r = 0; r < SIP_CROUNDS; r++)
        SIPROUND;
    v0 ^= m;
    v2 ^= 0xff;
    for (int r = 0; r < SIP_DROUNDS; r++)
        SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t siphash_seeded(const void *p, size_t n)
{
    return siphash(p, n, seed_k0, seed_k1);
}
