/*
 * fuzz_input: what the fuzz targets share: how an input is cut into reads,
 * and FUZZ_CHECK, an invariant that aborts (libFuzzer keeps the input).
 *
 * The first byte of every input is not request data: it chooses the sizes of
 * the pieces the rest arrives in, so that libFuzzer explores split points as
 * it explores bytes.  Its low 7 bits, n: 0 delivers the stream in one piece;
 * n > 0 draws each piece's size from 1..n with a small PRNG seeded by n, the
 * same sizes for the same byte (inputs must replay exactly).  Its top bit is
 * a switch each target defines for itself (FUZZ_FLAG).
 */
#ifndef PERCORE_FUZZ_INPUT_H
#define PERCORE_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                 \
        }                                                                            \
    } while (0)

#define FUZZ_FLAG 0x80

struct fuzz_chunks {
    unsigned max;   /* largest piece; 0: one piece */
    uint32_t rng;   /* xorshift32 state */
};

static inline void fuzz_chunks_init(struct fuzz_chunks *ch, uint8_t control)
{
    ch->max = control & 0x7fu;
    ch->rng = 0x9e3779b9u ^ ch->max;
}

/* the size of the next piece when `left` bytes remain (never 0 while left > 0) */
static inline size_t fuzz_chunks_next(struct fuzz_chunks *ch, size_t left)
{
    if (ch->max == 0)
        return left;
    ch->rng ^= ch->rng << 13;
    ch->rng ^= ch->rng >> 17;
    ch->rng ^= ch->rng << 5;
    size_t size = 1 + ch->rng % ch->max;
    return size < left ? size : left;
}

#endif
