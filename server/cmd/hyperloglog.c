/*
 * hyperloglog: the HyperLogLog command family (Redis's hyperloglog.c):
 * PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST.
 *
 * Design: a HyperLogLog is a plain string in Redis 7.0's exact layout, so GET,
 * DUMP/RESTORE and the AOF carry it to and from Redis unchanged.  A 16-byte
 * header ("HYLL", the encoding byte, 3 unused bytes, the cached cardinality as
 * 8 little-endian bytes whose top bit says "stale"), then 16384 registers:
 * dense, 6 bits each from the LSB up (12288 bytes), or sparse, a run-length
 * code of ZERO (00xxxxxx: 1..64 zero registers), XZERO (01xxxxxx yyyyyyyy:
 * 1..16384 zero registers) and VAL (1vvvvvxx: 1..4 registers of value
 * 1..32).  Elements hash with MurmurHash64A, seed 0xadc83b19: the low 14 bits
 * pick the register, the run of zeroes above them plus one is its value.  A
 * sparse HLL turns dense when a value passes 32 or a change would make it
 * longer than hll-sparse-max-bytes.  The count is Redis 7.0's estimator
 * (Ertl's: a register histogram, hllSigma and hllTau), so counts equal
 * Redis's for the same registers.
 *
 * Every step follows Redis 7.0's code in the same order, with the same
 * splits and merges of sparse opcodes, because the bytes of the string are
 * visible (GET) and must equal Redis's.  A change is made on a copy of the
 * string (room for the growth of one sparse split and the dense macros'
 * read of one byte past the end), stored back once the command is done: as
 * a raw string, as Redis's sds is.
 *
 * The estimator's floating point must round as Redis's does: no fused
 * multiply-add (-std=c11 keeps GCC from contracting; clang is told below).
 *
 * Effects as Redis: PFADD reports "new" when it creates the key, then
 * "pfadd" and one change per register changed (plus one for the creation);
 * PFMERGE "pfadd" too (sic, Redis 7.0) and one change; PFCOUNT of one key
 * whose cached cardinality was stale stores the new one and counts one
 * change (Redis propagates that PFCOUNT; here the core propagates writes
 * only, so it is not in the AOF: the cache is recomputed after a reload);
 * PFDEBUG GETREG and TODENSE count one change when they make the HLL dense,
 * no key signalled.  Every PF command that finds an HLL makes it a raw
 * string (OBJECT ENCODING), as Redis's dbUnshareStringValue.  PFCOUNT of
 * several keys and PFMERGE are ROUTE_GATHER: keys on several shards are
 * copied onto one, and PFMERGE's destination written back.
 *
 * Threading: handlers run on the shard that owns (or gathered) the keys and
 * touch only ctx->store.
 */
#include "families.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/reply.h"
#include "percore/store.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define HLL_P 14
#define HLL_Q (64 - HLL_P)
#define HLL_REGISTERS (1 << HLL_P)
#define HLL_P_MASK (HLL_REGISTERS - 1)
#define HLL_BITS 6
#define HLL_REGISTER_MAX ((1 << HLL_BITS) - 1)
#define HLL_HDR_SIZE 16
#define HLL_DENSE_SIZE (HLL_HDR_SIZE + ((HLL_REGISTERS * HLL_BITS + 7) / 8))
#define HLL_DENSE 0
#define HLL_SPARSE 1
#define HLL_RAW 255 /* registers one a byte: PFCOUNT of several keys, never stored */
#define HLL_MAX_ENCODING 1
#define HLL_ALPHA_INF 0.721347520444481703680 /* 1 / (2 ln 2) */

#define SPARSE_XZERO_BIT 0x40
#define SPARSE_VAL_BIT 0x80
#define SPARSE_IS_ZERO(p) (((*(p)) & 0xc0) == 0)
#define SPARSE_IS_XZERO(p) (((*(p)) & 0xc0) == SPARSE_XZERO_BIT)
#define SPARSE_IS_VAL(p) ((*(p)) & SPARSE_VAL_BIT)
#define SPARSE_ZERO_LEN(p) (((*(p)) & 0x3f) + 1)
#define SPARSE_VAL_VALUE(p) ((((*(p)) >> 2) & 0x1f) + 1)
#define SPARSE_VAL_LEN(p) (((*(p)) & 0x3) + 1)
#define SPARSE_VAL_MAX_VALUE 32
#define SPARSE_VAL_MAX_LEN 4
#define SPARSE_ZERO_MAX_LEN 64
#define SPARSE_XZERO_MAX_LEN 16384

/*
 * An XZERO's length.  A corrupt code may end in the first byte of one: Redis
 * then reads the byte after its string, sds's NUL, or what a change of the
 * string left there (sdsIncrLen puts a NUL at the new end, and hllSparseSet
 * copies its new opcodes over it).  A working copy keeps that byte as Redis's
 * string has it, within a command (struct hll_buf); a stored string reads 0.
 */
static long xzero_len(const uint8_t *p, const uint8_t *end)
{
    return ((long)(p[0] & 0x3f) << 8 | (p + 1 < end ? p[1] : 0)) + 1;
}

/* the same in a working copy, which has the byte after its end */
static long buf_xzero_len(const uint8_t *p)
{
    return ((long)(p[0] & 0x3f) << 8 | p[1]) + 1;
}

static const char invalid_hll_err[] = "INVALIDOBJ Corrupted HLL object detected";
static const char not_hll_err[] = "WRONGTYPE Key is not a valid HyperLogLog string value.";

/* ---- the working copy ---------------------------------------------------- */

/* a HyperLogLog being changed: its bytes, with room for 3 more and one past the end (dense reads) */
struct hll_buf {
    uint8_t *p;   /* the string's bytes, header first */
    size_t len;   /* its length */
    size_t cap;   /* bytes allocated: > len (a sparse change first makes room for 3 more) */
};

static void hll_buf_init(struct hll_buf *b, const void *p, size_t len)
{
    b->cap = (len > HLL_DENSE_SIZE ? len : HLL_DENSE_SIZE) + 8;
    b->p = mem_calloc(1, b->cap);
    memcpy(b->p, p, len);
    b->len = len;
}

static void hll_buf_deinit(struct hll_buf *b)
{
    mem_release(b->p);
    b->p = NULL;
}

/* Redis createHLLObject: an empty sparse HLL (one XZERO of 16384), 18 bytes */
static void hll_buf_init_empty(struct hll_buf *b)
{
    uint8_t h[HLL_HDR_SIZE + 2] = {'H', 'Y', 'L', 'L', HLL_SPARSE};
    int l = SPARSE_XZERO_MAX_LEN - 1;
    h[HLL_HDR_SIZE] = (uint8_t)((l >> 8) | SPARSE_XZERO_BIT);
    h[HLL_HDR_SIZE + 1] = (uint8_t)(l & 0xff);
    hll_buf_init(b, h, sizeof h);
}

static void hll_invalidate_cache(uint8_t *hdr)
{
    hdr[15] |= 1 << 7;
}

static bool hll_valid_cache(const uint8_t *hdr)
{
    return (hdr[15] & (1 << 7)) == 0;
}

/* ---- registers ------------------------------------------------------------ */

/* register regnum of dense registers r (regs_len bytes: the last one's neighbour may be missing) */
static unsigned dense_get(const uint8_t *r, unsigned long regnum)
{
    unsigned long byte = regnum * HLL_BITS / 8;
    unsigned long fb = regnum * HLL_BITS & 7;
    unsigned long fb8 = 8 - fb;
    unsigned long b0 = r[byte];
    unsigned long b1 = byte + 1 < (HLL_DENSE_SIZE - HLL_HDR_SIZE) ? r[byte + 1] : 0;
    return (unsigned)(((b0 >> fb) | (b1 << fb8)) & HLL_REGISTER_MAX);
}

/* set it (r has a byte past the registers: struct hll_buf) */
static void dense_set_register(uint8_t *r, unsigned long regnum, unsigned long v)
{
    unsigned long byte = regnum * HLL_BITS / 8;
    unsigned long fb = regnum * HLL_BITS & 7;
    unsigned long fb8 = 8 - fb;
    r[byte] &= (uint8_t)~(HLL_REGISTER_MAX << fb);
    r[byte] |= (uint8_t)(v << fb);
    r[byte + 1] &= (uint8_t)~(HLL_REGISTER_MAX >> fb8);
    r[byte + 1] |= (uint8_t)(v >> fb8);
}

/* Redis MurmurHash64A, endian neutral */
static uint64_t murmurhash64a(const void *key, size_t len, uint64_t seed)
{
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    const int r = 47;
    uint64_t h = seed ^ ((uint64_t)(int)len * m);
    const uint8_t *data = key;
    const uint8_t *end = data + (len - (len & 7));

    while (data != end) {
        uint64_t k = 0;
        for (int i = 7; i >= 0; i--)
            k = (k << 8) | data[i];
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
        data += 8;
    }
    switch (len & 7) {
    case 7: h ^= (uint64_t)data[6] << 48; /* fall through */
    case 6: h ^= (uint64_t)data[5] << 40; /* fall through */
    case 5: h ^= (uint64_t)data[4] << 32; /* fall through */
    case 4: h ^= (uint64_t)data[3] << 24; /* fall through */
    case 3: h ^= (uint64_t)data[2] << 16; /* fall through */
    case 2: h ^= (uint64_t)data[1] << 8;  /* fall through */
    case 1:
        h ^= (uint64_t)data[0];
        h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

/* Redis hllPatLen: the register of ele (*regp) and the value it proposes */
static uint8_t hll_pat_len(const void *ele, size_t len, long *regp)
{
    uint64_t hash = murmurhash64a(ele, len, 0xadc83b19ULL);
    *regp = (long)(hash & HLL_P_MASK);
    hash >>= HLL_P;
    hash |= (uint64_t)1 << HLL_Q; /* ends the count at HLL_Q + 1 */
    uint64_t bit = 1;
    uint8_t count = 1;
    while ((hash & bit) == 0) {
        count++;
        bit <<= 1;
    }
    return count;
}

/* Redis hllDenseSet: 1 when the register grew */
static int hll_dense_set(uint8_t *registers, long index, uint8_t count)
{
    if (count > dense_get(registers, (unsigned long)index)) {
        dense_set_register(registers, (unsigned long)index, count);
        return 1;
    }
    return 0;
}

/* Redis hllSparseToDense: 0, or -1 when the sparse code is corrupt (b unchanged) */
static int hll_sparse_to_dense(struct hll_buf *b)
{
    if (b->p[4] == HLL_DENSE)
        return 0;
    uint8_t *dense = mem_calloc(1, HLL_DENSE_SIZE + 8);
    memcpy(dense, b->p, HLL_HDR_SIZE); /* the magic and the cached cardinality */
    dense[4] = HLL_DENSE;
    uint8_t *regs = dense + HLL_HDR_SIZE;
    const uint8_t *p = b->p + HLL_HDR_SIZE, *end = b->p + b->len;
    long idx = 0;
    while (p < end) {
        if (SPARSE_IS_ZERO(p)) {
            idx += SPARSE_ZERO_LEN(p);
            p++;
        } else if (SPARSE_IS_XZERO(p)) {
            idx += buf_xzero_len(p);
            p += 2;
        } else {
            long runlen = SPARSE_VAL_LEN(p);
            int regval = SPARSE_VAL_VALUE(p);
            if (runlen + idx > HLL_REGISTERS) {
                mem_release(dense);
                return -1; /* overflow */
            }
            while (runlen--) {
                dense_set_register(regs, (unsigned long)idx, (unsigned long)regval);
                idx++;
            }
            p++;
        }
    }
    if (idx != HLL_REGISTERS) {
        mem_release(dense);
        return -1;
    }
    mem_release(b->p);
    b->p = dense;
    b->len = HLL_DENSE_SIZE;
    b->cap = HLL_DENSE_SIZE + 8;
    return 0;
}

/* Redis hllSparseSet: 1 changed, 0 not, -1 corrupt; may turn b dense (max_bytes: hll-sparse-max-bytes) */

/* a run of len zero registers as one opcode at n (ZERO, or XZERO past SPARSE_ZERO_MAX_LEN): past it */
static uint8_t *sparse_put_zeros(uint8_t *n, long len)
{
    if (len > SPARSE_ZERO_MAX_LEN) {
        n[0] = (uint8_t)(((len - 1) >> 8) | SPARSE_XZERO_BIT);
        n[1] = (uint8_t)((len - 1) & 0xff);
        return n + 2;
    }
    *n = (uint8_t)(len - 1);
    return n + 1;
}
static int hll_sparse_set(struct hll_buf *b, long index, uint8_t count, long long max_bytes)
{
    uint8_t *sparse, *end, *p, *prev, *next;
    long first, span;
    bool is_zero = false, is_xzero = false, is_val = false;
    long runlen = 0;

    if (count > SPARSE_VAL_MAX_VALUE)
        goto promote;

    /* room for the 3 bytes a split may add, and a 0 past them (Redis's sdsMakeRoomFor) */
    if (b->cap < b->len + 4) {
        size_t cap = b->len * 2 + 8;
        b->p = mem_realloc(b->p, cap);
        memset(b->p + b->cap, 0, cap - b->cap);
        b->cap = cap;
    }
    sparse = p = b->p + HLL_HDR_SIZE;
    end = b->p + b->len;
    first = 0;
    prev = NULL;
    span = 0;
    while (p < end) {
        long oplen = 1;
        if (SPARSE_IS_ZERO(p)) {
            span = SPARSE_ZERO_LEN(p);
        } else if (SPARSE_IS_VAL(p)) {
            span = SPARSE_VAL_LEN(p);
        } else {
            span = buf_xzero_len(p);
            oplen = 2;
        }
        if (index <= first + span - 1)
            break;
        prev = p;
        p += oplen;
        first += span;
    }
    if (span == 0 || p >= end)
        return -1;

    next = SPARSE_IS_XZERO(p) ? p + 2 : p + 1;
    if (next >= end)
        next = NULL;

    if (SPARSE_IS_ZERO(p)) {
        is_zero = true;
        runlen = SPARSE_ZERO_LEN(p);
    } else if (SPARSE_IS_XZERO(p)) {
        is_xzero = true;
        runlen = buf_xzero_len(p);
    } else {
        is_val = true;
        runlen = SPARSE_VAL_LEN(p);
    }

    if (is_val) {
        uint8_t oldcount = (uint8_t)SPARSE_VAL_VALUE(p);
        if (oldcount >= count)
            return 0;
        if (runlen == 1) {
            *p = (uint8_t)(((count - 1) << 2 | (1 - 1)) | SPARSE_VAL_BIT);
            goto updated;
        }
    }
    if (is_zero && runlen == 1) {
        *p = (uint8_t)(((count - 1) << 2 | (1 - 1)) | SPARSE_VAL_BIT);
        goto updated;
    }

    /* the general case: the opcode split in up to three (XZERO VAL XZERO, 5 bytes) */
    uint8_t seq[5], *n = seq;
    long last = first + span - 1;
    if (is_zero || is_xzero) {
        if (index != first)
            n = sparse_put_zeros(n, index - first);
        *n++ = (uint8_t)(((count - 1) << 2) | SPARSE_VAL_BIT);
        if (index != last)
            n = sparse_put_zeros(n, last - index);
    } else {
        int curval = SPARSE_VAL_VALUE(p);
        long len;
        if (index != first) {
            len = index - first;
            *n++ = (uint8_t)(((curval - 1) << 2 | (len - 1)) | SPARSE_VAL_BIT);
        }
        *n++ = (uint8_t)(((count - 1) << 2) | SPARSE_VAL_BIT);
        if (index != last) {
            len = last - index;
            *n++ = (uint8_t)(((curval - 1) << 2 | (len - 1)) | SPARSE_VAL_BIT);
        }
    }

    int seqlen = (int)(n - seq);
    int oldlen = is_xzero ? 2 : 1;
    int deltalen = seqlen - oldlen;
    if (deltalen > 0 && (long long)b->len + deltalen > max_bytes)
        goto promote;
    if (deltalen && next)
        memmove(next + deltalen, next, (size_t)(end - next));
    b->len = (size_t)((long)b->len + deltalen);
    b->p[b->len] = 0; /* sdsIncrLen's NUL, before the copy that may overwrite it */
    memcpy(p, seq, (size_t)seqlen);
    end += deltalen;

updated:
    /* merge adjacent VALs of one value, scanning up to 5 opcodes from prev */
    p = prev ? prev : sparse;
    int scanlen = 5;
    while (p < end && scanlen--) {
        if (SPARSE_IS_XZERO(p)) {
            p += 2;
            continue;
        } else if (SPARSE_IS_ZERO(p)) {
            p++;
            continue;
        }
        if (p + 1 < end && SPARSE_IS_VAL(p + 1)) {
            int v1 = SPARSE_VAL_VALUE(p);
            int v2 = SPARSE_VAL_VALUE(p + 1);
            if (v1 == v2) {
                int l = SPARSE_VAL_LEN(p) + SPARSE_VAL_LEN(p + 1);
                if (l <= SPARSE_VAL_MAX_LEN) {
                    p[1] = (uint8_t)(((v1 - 1) << 2 | (l - 1)) | SPARSE_VAL_BIT);
                    memmove(p, p + 1, (size_t)(end - p));
                    b->len--;
                    b->p[b->len] = 0;
                    end--;
                    continue;
                }
            }
        }
        p++;
    }
    hll_invalidate_cache(b->p);
    return 1;

promote:
    if (hll_sparse_to_dense(b) < 0)
        return -1;
    return hll_dense_set(b->p + HLL_HDR_SIZE, index, count); /* always 1: a register needed the change */
}

/* Redis hllAdd: 1 changed, 0 not, -1 corrupt */
static int hll_add(struct hll_buf *b, const void *ele, size_t len, long long max_bytes)
{
    long index;
    uint8_t count = hll_pat_len(ele, len, &index);
    switch (b->p[4]) {
    case HLL_DENSE:
        return hll_dense_set(b->p + HLL_HDR_SIZE, index, count);
    case HLL_SPARSE:
        return hll_sparse_set(b, index, count, max_bytes);
    default:
        return -1;
    }
}

/* Redis hllMerge: max[i] = the greater of it and the HLL's register i; -1 when corrupt */
static int hll_merge(uint8_t *max, const uint8_t *hll, size_t len)
{
    if (hll[4] == HLL_DENSE) {
        for (long i = 0; i < HLL_REGISTERS; i++) {
            uint8_t val = (uint8_t)dense_get(hll + HLL_HDR_SIZE, (unsigned long)i);
            if (val > max[i])
                max[i] = val;
        }
        return 0;
    }
    const uint8_t *p = hll + HLL_HDR_SIZE, *end = hll + len;
    long i = 0;
    while (p < end) {
        if (SPARSE_IS_ZERO(p)) {
            i += SPARSE_ZERO_LEN(p);
            p++;
        } else if (SPARSE_IS_XZERO(p)) {
            i += xzero_len(p, end);
            p += 2;
        } else {
            long runlen = SPARSE_VAL_LEN(p);
            uint8_t regval = (uint8_t)SPARSE_VAL_VALUE(p);
            if (runlen + i > HLL_REGISTERS)
                return -1; /* overflow */
            while (runlen--) {
                if (regval > max[i])
                    max[i] = regval;
                i++;
            }
            p++;
        }
    }
    return i == HLL_REGISTERS ? 0 : -1;
}

/* ---- the estimator (Redis 7.0: Otmar Ertl's) ------------------------------ */

static double hll_sigma(double x)
{
    if (x == 1.)
        return INFINITY;
    double z_prime;
    double y = 1;
    double z = x;
    do {
        x *= x;
        z_prime = z;
        z += x * y;
        y += y;
    } while (z_prime != z);
    return z;
}

static double hll_tau(double x)
{
    if (x == 0. || x == 1.)
        return 0.;
    double z_prime;
    double y = 1.0;
    double z = 1 - x;
    do {
        x = sqrt(x);
        z_prime = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (z_prime != z);
    return z / 3;
}

/* Redis hllCount over hdr (len bytes; encoding HLL_RAW: one register a byte); *invalid set for a corrupt
 * sparse code when invalid is not NULL */
static uint64_t hll_count(const uint8_t *hdr, size_t len, int *invalid)
{
    double m = HLL_REGISTERS;
    int reghisto[64] = {0};
    const uint8_t *regs = hdr + HLL_HDR_SIZE;

    if (hdr[4] == HLL_DENSE) {
        for (unsigned long j = 0; j < HLL_REGISTERS; j++)
            reghisto[dense_get(regs, j)]++;
    } else if (hdr[4] == HLL_SPARSE) {
        const uint8_t *p = regs, *end = hdr + len;
        long idx = 0;
        while (p < end) {
            if (SPARSE_IS_ZERO(p)) {
                long runlen = SPARSE_ZERO_LEN(p);
                idx += runlen;
                reghisto[0] += (int)runlen;
                p++;
            } else if (SPARSE_IS_XZERO(p)) {
                long runlen = xzero_len(p, end);
                idx += runlen;
                reghisto[0] += (int)runlen;
                p += 2;
            } else {
                long runlen = SPARSE_VAL_LEN(p);
                int regval = SPARSE_VAL_VALUE(p);
                idx += runlen;
                reghisto[regval] += (int)runlen;
                p++;
            }
        }
        if (idx != HLL_REGISTERS && invalid)
            *invalid = 1;
    } else {
        for (long j = 0; j < HLL_REGISTERS; j++)
            reghisto[regs[j] & 63]++;
    }

    double z = m * hll_tau((m - reghisto[HLL_Q + 1]) / (double)m);
    for (int j = HLL_Q; j >= 1; --j) {
        z += reghisto[j];
        z *= 0.5;
    }
    z += m * hll_sigma(reghisto[0] / (double)m);
    double e = (double)llroundl(HLL_ALPHA_INF * m * m / z);
    return (uint64_t)e;
}

/* ---- objects --------------------------------------------------------------- */

/* Redis isHLLObjectOrReply: o (a live key's value) is a HyperLogLog, else the error replied */
static bool hll_object_or_reply(struct cmd_ctx *ctx, const struct object *o)
{
    if (object_type(o) != OBJ_STRING) {
        reply_wrongtype(ctx->out);
        return false;
    }
    size_t len;
    const uint8_t *p = (const uint8_t *)object_string_ptr(o, &len);
    if (len < HLL_HDR_SIZE || p[0] != 'H' || p[1] != 'Y' || p[2] != 'L' || p[3] != 'L' ||
        p[4] > HLL_MAX_ENCODING || (p[4] == HLL_DENSE && len != HLL_DENSE_SIZE)) {
        reply_error(ctx->out, not_hll_err);
        return false;
    }
    return true;
}

/* Redis's dbUnshareStringValue: the HLL o becomes a raw string (OBJECT ENCODING) even when unchanged */
static void hll_unshare(struct object *o)
{
    uint8_t c = (uint8_t)object_string_ptr(o, NULL)[0];
    object_string_setrange(o, 0, &c, 1);
}

/* o's bytes become b's, as a raw string (Redis's sds), in an allocation of their size (a dense HLL made
 * from a sparse one is 12 KB, not the doubled room an append would leave) */
static void hll_store_back(struct object *o, const struct hll_buf *b)
{
    object_string_set(o, b->p, b->len);
    hll_unshare(o);
}

/* b stored under key: into o, its value, or (o NULL) as a new key, reported "new" as Redis's dbAdd */
static void hll_store(struct cmd_ctx *ctx, const struct resp_arg *key, struct object *o, const struct hll_buf *b)
{
    if (o) {
        hll_store_back(o, b);
        return;
    }
    struct object *n = object_string_create((const char *)b->p, b->len);
    hll_unshare(n);
    if (store_set(ctx->store, ctx->db, key->ptr, key->len, n, 0))
        cmd_notify(ctx, NOTIFY_NEW, "new", key);
}

static long long sparse_max_bytes(const struct cmd_ctx *ctx)
{
    return ctx->config ? ctx->config->hll_sparse_max_bytes : 3000;
}

/* ---- handlers ---------------------------------------------------------------- */

static void cmd_pfadd(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct object *o = cmd_lookup_write(ctx, key);
    struct hll_buf b;
    long long updated = 0;

    if (o == NULL) {
        hll_buf_init_empty(&b); /* stored once the elements are in (nothing sees it before) */
        updated++;
    } else {
        if (!hll_object_or_reply(ctx, o))
            return;
        hll_unshare(o);
        size_t len;
        const char *p = object_string_ptr(o, &len);
        hll_buf_init(&b, p, len);
    }
    long long max_bytes = sparse_max_bytes(ctx);
    long long changed = 0;
    for (int j = 2; j < ctx->argc; j++) {
        int r = hll_add(&b, ctx->argv[j].ptr, ctx->argv[j].len, max_bytes);
        if (r < 0) {
            if (changed && o) /* Redis changed the string in place up to here */
                hll_store_back(o, &b);
            hll_buf_deinit(&b);
            reply_error(ctx->out, invalid_hll_err);
            return;
        }
        changed += r;
    }
    updated += changed;
    if (updated) {
        hll_invalidate_cache(b.p);
        hll_store(ctx, key, o, &b);
        cmd_modified_n(ctx, key, updated);
        cmd_notify(ctx, NOTIFY_STRING, "pfadd", key);
    }
    hll_buf_deinit(&b);
    reply_int(ctx->out, updated ? 1 : 0);
}

/* PFCOUNT of several keys, PFMERGE: the maxima of the registers of the HLLs at argv[1..] into max (missing
 * keys skipped); dense: one of them is dense; false: an error was replied */
static bool hll_merge_keys(struct cmd_ctx *ctx, uint8_t *max, bool *dense)
{
    *dense = false;
    for (int j = 1; j < ctx->argc; j++) {
        struct object *o = cmd_lookup_read(ctx, &ctx->argv[j]);
        if (o == NULL)
            continue;
        if (!hll_object_or_reply(ctx, o))
            return false;
        size_t len;
        const uint8_t *p = (const uint8_t *)object_string_ptr(o, &len);
        if (p[4] == HLL_DENSE)
            *dense = true;
        if (hll_merge(max, p, len) < 0) {
            reply_error(ctx->out, invalid_hll_err);
            return false;
        }
    }
    return true;
}

static void cmd_pfcount(struct cmd_ctx *ctx)
{
    if (ctx->argc > 2) {
        /* a raw HLL of the registers' maxima; no key changes */
        uint8_t *max = mem_calloc(1, HLL_HDR_SIZE + HLL_REGISTERS);
        max[4] = HLL_RAW;
        bool dense;
        if (!hll_merge_keys(ctx, max + HLL_HDR_SIZE, &dense)) {
            mem_release(max);
            return;
        }
        reply_int(ctx->out, (long long)hll_count(max, HLL_HDR_SIZE + HLL_REGISTERS, NULL));
        mem_release(max);
        return;
    }

    struct object *o = cmd_lookup_read(ctx, &ctx->argv[1]);
    if (o == NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    if (!hll_object_or_reply(ctx, o))
        return;
    hll_unshare(o);
    size_t len;
    const uint8_t *hdr = (const uint8_t *)object_string_ptr(o, &len);
    uint64_t card;
    if (hll_valid_cache(hdr)) {
        card = 0;
        for (int i = 7; i >= 0; i--)
            card = (card << 8) | hdr[8 + i];
    } else {
        int invalid = 0;
        card = hll_count(hdr, len, &invalid);
        if (invalid) {
            reply_error(ctx->out, invalid_hll_err);
            return;
        }
        uint8_t c[8];
        for (int i = 0; i < 8; i++)
            c[i] = (uint8_t)(card >> (8 * i));
        object_string_setrange(o, 8, c, sizeof c);
        cmd_modified(ctx, &ctx->argv[1]);
    }
    reply_int(ctx->out, (long long)card);
}

static void cmd_pfmerge(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    uint8_t *max = mem_calloc(1, HLL_REGISTERS);
    bool use_dense;
    if (!hll_merge_keys(ctx, max, &use_dense)) {
        mem_release(max);
        return;
    }

    struct hll_buf b;
    struct object *o = cmd_lookup_write(ctx, key);
    if (o == NULL) {
        hll_buf_init_empty(&b);
    } else {
        size_t len;
        const char *p = object_string_ptr(o, &len);
        hll_buf_init(&b, p, len);
    }
    if (use_dense && hll_sparse_to_dense(&b) < 0) {
        hll_buf_deinit(&b);
        mem_release(max);
        reply_error(ctx->out, invalid_hll_err);
        return;
    }
    long long max_bytes = sparse_max_bytes(ctx);
    for (long j = 0; j < HLL_REGISTERS; j++) {
        if (max[j] == 0)
            continue;
        if (b.p[4] == HLL_DENSE)
            hll_dense_set(b.p + HLL_HDR_SIZE, j, max[j]);
        else if (b.p[4] == HLL_SPARSE)
            hll_sparse_set(&b, j, max[j], max_bytes);
    }
    hll_invalidate_cache(b.p);
    hll_store(ctx, key, o, &b);
    hll_buf_deinit(&b);
    mem_release(max);
    cmd_changed(ctx, NOTIFY_STRING, "pfadd", key); /* sic: Redis 7.0 says "pfadd" */
    reply_ok(ctx->out);
}

/* Redis's bare server.dirty++ of PFDEBUG's conversions: counted and propagated, no key signalled */
static void hll_dirty(struct cmd_ctx *ctx)
{
    ctx->dirty++;
    if (ctx->effects)
        ctx->effects->changes++;
}

/* PFDEBUG GETREG|DECODE|ENCODING|TODENSE key (Redis's pfdebugCommand) */
static void cmd_pfdebug(struct cmd_ctx *ctx)
{
    const struct resp_arg *sub = &ctx->argv[1];
    const struct resp_arg *key = &ctx->argv[2];
    struct object *o = cmd_lookup_write(ctx, key);
    if (o == NULL) {
        reply_error(ctx->out, "ERR The specified key does not exist");
        return;
    }
    if (!hll_object_or_reply(ctx, o))
        return;
    hll_unshare(o);
    size_t len;
    const uint8_t *hdr = (const uint8_t *)object_string_ptr(o, &len);

    if (cmd_arg_is(sub, "getreg") || cmd_arg_is(sub, "todense")) {
        bool conv = false;
        if (hdr[4] == HLL_SPARSE) {
            struct hll_buf b;
            hll_buf_init(&b, hdr, len);
            if (hll_sparse_to_dense(&b) < 0) {
                hll_buf_deinit(&b);
                reply_error(ctx->out, invalid_hll_err);
                return;
            }
            hll_store_back(o, &b);
            hll_buf_deinit(&b);
            hll_dirty(ctx);
            conv = true;
            hdr = (const uint8_t *)object_string_ptr(o, &len);
        }
        if (cmd_arg_is(sub, "todense")) {
            reply_int(ctx->out, conv ? 1 : 0);
            return;
        }
        reply_array(ctx->out, HLL_REGISTERS);
        for (unsigned long j = 0; j < HLL_REGISTERS; j++)
            reply_int(ctx->out, dense_get(hdr + HLL_HDR_SIZE, j));
    } else if (cmd_arg_is(sub, "decode")) {
        if (hdr[4] != HLL_SPARSE) {
            reply_error(ctx->out, "ERR HLL encoding is not sparse");
            return;
        }
        /* at most "v:32,4 " (7 bytes) an opcode byte */
        char *text = mem_alloc((len - HLL_HDR_SIZE) * 8 + 1);
        size_t n = 0;
        const uint8_t *p = hdr + HLL_HDR_SIZE, *end = hdr + len;
        while (p < end) {
            if (SPARSE_IS_ZERO(p)) {
                n += (size_t)sprintf(text + n, "z:%d ", SPARSE_ZERO_LEN(p));
                p++;
            } else if (SPARSE_IS_XZERO(p)) {
                n += (size_t)sprintf(text + n, "Z:%ld ", xzero_len(p, end));
                p += 2;
            } else {
                n += (size_t)sprintf(text + n, "v:%d,%d ", SPARSE_VAL_VALUE(p), SPARSE_VAL_LEN(p));
                p++;
            }
        }
        while (n && text[n - 1] == ' ')
            n--;
        reply_bulk(ctx->out, text, n);
        mem_release(text);
    } else if (cmd_arg_is(sub, "encoding")) {
        reply_simple(ctx->out, hdr[4] == HLL_DENSE ? "dense" : "sparse");
    } else {
        size_t l = strnlen(sub->ptr, sub->len);
        reply_errorf(ctx->out, "ERR Unknown PFDEBUG subcommand '%.*s'", (int)l, sub->ptr);
    }
}

/*
 * PFSELFTEST (Redis's pfselftestCommand): the dense registers keep what is
 * set in them without touching their neighbours; then 10^7 distinct
 * elements added to a dense and a sparse HLL at once, which at every power
 * of ten must count the same, within 6 standard errors of the truth (the
 * sparse one still sparse while that is small).  Seconds of the home shard's
 * time, as Redis's is of its one thread.
 */
static uint64_t selftest_rand(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static void cmd_pfselftest(struct cmd_ctx *ctx)
{
    static const uint8_t dense_hdr[HLL_HDR_SIZE] = {'H', 'Y', 'L', 'L', HLL_DENSE};
    struct hll_buf dense, sparse;
    uint8_t *bytecounters = mem_alloc(HLL_REGISTERS);
    uint64_t state = 0x9e3779b97f4a7c15ULL ^ (uint64_t)ctx->now;
    long long max_bytes = sparse_max_bytes(ctx);

    hll_buf_init(&dense, dense_hdr, HLL_HDR_SIZE);
    dense.len = HLL_DENSE_SIZE; /* zeroed registers */
    hll_buf_init_empty(&sparse);
    uint8_t *regs = dense.p + HLL_HDR_SIZE;
    for (int j = 0; j < 1000; j++) {
        for (unsigned long i = 0; i < HLL_REGISTERS; i++) {
            unsigned r = (unsigned)(selftest_rand(&state) & HLL_REGISTER_MAX);
            bytecounters[i] = (uint8_t)r;
            dense_set_register(regs, i, r);
        }
        for (unsigned long i = 0; i < HLL_REGISTERS; i++) {
            unsigned val = dense_get(regs, i);
            if (val != bytecounters[i]) {
                reply_errorf(ctx->out, "TESTFAILED Register %lu should be %d but is %u", i, (int)bytecounters[i],
                             val);
                goto cleanup;
            }
        }
    }

    memset(regs, 0, HLL_DENSE_SIZE - HLL_HDR_SIZE);
    double relerr = 1.04 / sqrt(HLL_REGISTERS);
    int64_t checkpoint = 1;
    uint64_t seed = selftest_rand(&state);
    for (uint64_t j = 1; j <= 10000000; j++) {
        uint8_t ele[8];
        uint64_t e = j ^ seed;
        memcpy(ele, &e, sizeof ele); /* the element's bytes as Redis's, a uint64_t in memory */
        long index;
        uint8_t count = hll_pat_len(ele, sizeof ele, &index);
        hll_dense_set(regs, index, count);
        hll_add(&sparse, ele, sizeof ele, max_bytes);
        if ((int64_t)j != checkpoint)
            continue;
        if ((long long)j < max_bytes / 2 && sparse.p[4] != HLL_SPARSE) {
            reply_error(ctx->out, "TESTFAILED sparse encoding not used");
            goto cleanup;
        }
        uint64_t card = hll_count(dense.p, dense.len, NULL);
        if (card != hll_count(sparse.p, sparse.len, NULL)) {
            reply_error(ctx->out, "TESTFAILED dense/sparse disagree");
            goto cleanup;
        }
        int64_t abserr = checkpoint - (int64_t)card;
        uint64_t maxerr = (uint64_t)ceil(relerr * 6 * (double)checkpoint);
        if (j == 10)
            maxerr = 1;
        if (abserr < 0)
            abserr = -abserr;
        if (abserr > (int64_t)maxerr) {
            reply_errorf(ctx->out, "TESTFAILED Too big error. card:%llu abserr:%llu",
                         (unsigned long long)checkpoint, (unsigned long long)abserr);
            goto cleanup;
        }
        checkpoint *= 10;
    }
    reply_ok(ctx->out);

cleanup:
    hll_buf_deinit(&dense);
    hll_buf_deinit(&sparse);
    mem_release(bytecounters);
}

/* ---- table --------------------------------------------------------------- */

/* arity, flags, key positions and ACL categories as Redis 7.0.15's COMMAND INFO reports them */
const struct command command_family_hyperloglog[] = {
    {"pfadd", cmd_pfadd, -2, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @hyperloglog @fast"},
    {"pfcount", cmd_pfcount, -2, CMD_READONLY | CMD_MAY_REPLICATE, 1, -1, 1, ROUTE_GATHER,
     "@read @hyperloglog @slow"},
    {"pfmerge", cmd_pfmerge, -2, CMD_WRITE | CMD_DENYOOM, 1, -1, 1, ROUTE_GATHER,
     "@write @hyperloglog @slow"},
    {"pfselftest", cmd_pfselftest, 1, CMD_ADMIN, 0, 0, 0, ROUTE_HOME, "@hyperloglog @admin @slow @dangerous"},
    {"pfdebug", cmd_pfdebug, 3, CMD_WRITE | CMD_DENYOOM | CMD_ADMIN, 2, 2, 1, ROUTE_OWNER,
     "@write @hyperloglog @admin @slow @dangerous"},
};

const size_t command_family_hyperloglog_count =
    sizeof(command_family_hyperloglog) / sizeof(command_family_hyperloglog[0]);
