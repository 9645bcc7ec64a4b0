/*
 * bitops: the bitmap command family (Redis's bitops.c): SETBIT GETBIT
 * BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO.
 *
 * Design: a bitmap is a string; bit 0 is the most significant bit of byte 0.
 * Every handler follows its Redis 7.0 counterpart step for step, in the same
 * order of checks, because the order decides which error a client sees
 * (BITCOUNT looks the key up before it parses its range: a missing key
 * answers 0 to any arguments; BITFIELD parses every subcommand before it
 * looks at the key).  A write never touches the string's bytes directly: it
 * goes through object_string_setrange(), which grows the string with zero
 * bytes and marks it raw, as Redis's sdsgrowzero on an unshared value does.
 * New strings (BITOP's result) are stored with string.c's setKey
 * (string_family.h).
 *
 * Effects, as Redis: SETBIT reports "setbit" and one change only when it
 * created or grew the string or flipped the bit; BITFIELD creates or grows
 * the string for its highest write ("new" when created, nothing else yet),
 * then reports "setbit" once with one change per SET/INCRBY subcommand that
 * wrote (not an OVERFLOW FAIL one) and changed the field, or wrote on a
 * string it created or grew (Redis 7.0.15); BITOP "set" on its destination (with "new"),
 * or "del" when the result is empty and the destination existed.  All are
 * propagated as sent: they are deterministic.
 *
 * Threading and routing: a handler runs on the shard thread that owns its
 * keys and touches only ctx->store.  BITOP is ROUTE_GATHER: its keys may
 * live on several shards; it then runs on copies in the dispatcher's scratch
 * store, which writes its destination back to the owner.
 *
 * Each handler appends exactly one reply to ctx->out.
 */
#include "families.h"
#include "string_family.h"

#include "percore/command.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/reply.h"
#include "percore/store.h"
#include "percore/util.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------- */

static const char bit_offset_err[] = "ERR bit offset is not an integer or out of range";

/*
 * Redis getBitOffsetFromArgument: a bit offset below proto-max-bulk-len
 * bytes; with hash, "#n" means n * bits (BITFIELD).
 */
static bool bit_offset_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, bool hash, int bits,
                                uint64_t *offset)
{
    long long v;
    bool usehash = hash && bits > 0 && a->len > 0 && a->ptr[0] == '#';
    size_t skip = usehash ? 1 : 0;

    if (!util_str_to_ll(a->ptr + skip, a->len - skip, &v)) {
        reply_error(ctx->out, bit_offset_err);
        return false;
    }
    if (usehash) /* wraps as Redis's multiplication does */
        v = (long long)((uint64_t)v * (uint64_t)bits);
    if (v < 0 || (v >> 3) >= string_max_bulk_len(ctx)) {
        reply_error(ctx->out, bit_offset_err);
        return false;
    }
    *offset = (uint64_t)v;
    return true;
}

/*
 * Redis lookupStringForBitCommand: the string under argv[1], created (zero
 * bytes, "new") or grown with zero bytes so that bit maxbit exists; NULL
 * after WRONGTYPE.  *dirty: it was created or grew.
 */
static struct object *bit_string_for_write(struct cmd_ctx *ctx, uint64_t maxbit, bool *dirty)
{
    const struct resp_arg *key = &ctx->argv[1];
    size_t byte = (size_t)(maxbit >> 3);
    struct object *o = cmd_lookup_write(ctx, key);
    static const char zero = 0;

    *dirty = false;
    if (o == NULL) {
        o = object_string_create("", 0);
        object_string_setrange(o, byte, &zero, 1);
        if (store_set(ctx->store, ctx->db, key->ptr, key->len, o, 0))
            cmd_notify(ctx, NOTIFY_NEW, "new", key);
        *dirty = true;
        return store_lookup(ctx->store, ctx->db, key->ptr, key->len, ctx->now);
    }
    if (object_type(o) != OBJ_STRING) {
        reply_wrongtype(ctx->out);
        return NULL;
    }
    size_t len;
    const char *p = object_string_ptr(o, &len);
    if (byte >= len) {
        object_string_setrange(o, byte, &zero, 1);
        *dirty = true;
    } else {
        char b = p[byte]; /* no change but the raw encoding, as dbUnshareStringValue */
        object_string_setrange(o, byte, &b, 1);
    }
    return o;
}

/* the read side: the string under key, NULL (found false) when missing; false after WRONGTYPE */
static bool bit_string_for_read(struct cmd_ctx *ctx, const struct resp_arg *key, const unsigned char **p,
                                size_t *len, bool *found)
{
    struct object *o = cmd_lookup_read(ctx, key);
    *found = false;
    *p = NULL;
    *len = 0;
    if (o == NULL)
        return true;
    if (object_type(o) != OBJ_STRING) {
        reply_wrongtype(ctx->out);
        return false;
    }
    *p = (const unsigned char *)object_string_ptr(o, len);
    *found = true;
    return true;
}

/* Redis redisPopcount */
static long long popcount(const unsigned char *p, size_t n)
{
    long long c = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        c += __builtin_popcountll(w);
    }
    for (; i < n; i++)
        c += __builtin_popcount(p[i]);
    return c;
}

/*
 * Redis redisBitpos: the first bit equal to bit in p[0..n); -1 when looking
 * for a 1 that is not there, n*8 when looking for a 0 in all ones.
 */
static long long bitpos(const unsigned char *p, size_t n, int bit)
{
    const unsigned char skip = bit ? 0x00 : 0xff;
    size_t i = 0;
    const uint64_t wskip = bit ? 0 : UINT64_MAX;

    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w != wskip)
            break;
    }
    for (; i < n; i++) {
        if (p[i] != skip) {
            for (int b = 7; b >= 0; b--)
                if (((p[i] >> b) & 1) == bit)
                    return (long long)i * 8 + (7 - b);
        }
    }
    return bit ? -1 : (long long)n * 8;
}

/* BIT or BYTE (Redis's strcasecmp); false after a syntax error */
static bool bit_unit_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, bool *isbit)
{
    if (cmd_arg_is(a, "bit")) {
        *isbit = true;
    } else if (cmd_arg_is(a, "byte")) {
        *isbit = false;
    } else {
        reply_syntax_error(ctx->out);
        return false;
    }
    return true;
}

/* ---- SETBIT GETBIT -------------------------------------------------------- */

static void cmd_setbit(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    uint64_t offset;
    long long on;
    bool dirty;

    if (!bit_offset_or_reply(ctx, &ctx->argv[2], false, 0, &offset))
        return;
    if (!util_str_to_ll(ctx->argv[3].ptr, ctx->argv[3].len, &on) || on < LONG_MIN || on > LONG_MAX ||
        (on & ~1LL)) {
        reply_error(ctx->out, "ERR bit is not an integer or out of range");
        return;
    }
    struct object *o = bit_string_for_write(ctx, offset, &dirty);
    if (o == NULL)
        return;

    size_t byte = (size_t)(offset >> 3);
    int bit = 7 - (int)(offset & 7);
    unsigned char byteval = (unsigned char)object_string_ptr(o, NULL)[byte];
    int bitval = (byteval >> bit) & 1;

    if (dirty || bitval != on) {
        byteval = (unsigned char)((byteval & ~(1u << bit)) | ((unsigned)on << bit));
        object_string_setrange(o, byte, &byteval, 1);
        cmd_changed(ctx, NOTIFY_STRING, "setbit", key);
    }
    reply_int(ctx->out, bitval);
}

static void cmd_getbit(struct cmd_ctx *ctx)
{
    const unsigned char *p;
    uint64_t offset;
    size_t len;
    bool found;

    if (!bit_offset_or_reply(ctx, &ctx->argv[2], false, 0, &offset))
        return;
    if (!bit_string_for_read(ctx, &ctx->argv[1], &p, &len, &found))
        return;
    size_t byte = (size_t)(offset >> 3);
    int bitval = 0;
    if (found && byte < len)
        bitval = (p[byte] >> (7 - (offset & 7))) & 1;
    reply_int(ctx->out, bitval);
}

/* ---- BITCOUNT BITPOS ------------------------------------------------------ */

/* Redis's range rules for BITCOUNT and BITPOS: start..end of a string of totlen bytes, in bytes or (isbit)
 * in bits, negative from the end, clamped; bits turned into bytes, with the masks of the first and last
 * bytes' bits outside the range */
static void bit_range(long long totlen, bool isbit, long long *start, long long *end, unsigned char *first_mask,
                      unsigned char *last_mask)
{
    if (isbit)
        totlen <<= 3;
    if (*start < 0)
        *start = totlen + *start;
    if (*end < 0)
        *end = totlen + *end;
    if (*start < 0)
        *start = 0;
    if (*end < 0)
        *end = 0;
    if (*end >= totlen)
        *end = totlen - 1;
    if (isbit && *start <= *end) {
        *first_mask = (unsigned char)(~((1u << (8 - (*start & 7))) - 1) & 0xff);
        *last_mask = (unsigned char)((1u << (7 - (*end & 7))) - 1);
        *start >>= 3;
        *end >>= 3;
    }
}

static void cmd_bitcount(struct cmd_ctx *ctx)
{
    const unsigned char *p;
    size_t slen;
    bool found, isbit = false;
    long long start, end;
    unsigned char first_mask = 0, last_mask = 0;

    if (!bit_string_for_read(ctx, &ctx->argv[1], &p, &slen, &found))
        return;
    if (!found) {
        reply_int(ctx->out, 0);
        return;
    }
    if (ctx->argc == 4 || ctx->argc == 5) {
        long long totlen = (long long)slen;
        if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &start))
            return;
        if (!cmd_get_ll_or_reply(ctx, &ctx->argv[3], &end))
            return;
        if (start < 0 && end < 0 && start > end) { /* before BIT|BYTE is looked at, as Redis 7.0 */
            reply_int(ctx->out, 0);
            return;
        }
        if (ctx->argc == 5 && !bit_unit_or_reply(ctx, &ctx->argv[4], &isbit))
            return;
        bit_range(totlen, isbit, &start, &end, &first_mask, &last_mask);
    } else if (ctx->argc == 2) {
        start = 0;
        end = (long long)slen - 1;
    } else {
        reply_syntax_error(ctx->out);
        return;
    }

    if (start > end) {
        reply_int(ctx->out, 0);
        return;
    }
    long long count = popcount(p + start, (size_t)(end - start + 1));
    if (first_mask)
        count -= __builtin_popcount(p[start] & first_mask);
    if (last_mask)
        count -= __builtin_popcount(p[end] & last_mask);
    reply_int(ctx->out, count);
}

static void cmd_bitpos(struct cmd_ctx *ctx)
{
    const unsigned char *p;
    size_t slen;
    bool found, isbit = false, end_given = false;
    long long bit, start, end, pos;
    unsigned char first_mask = 0, last_mask = 0;

    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &bit))
        return;
    if (bit != 0 && bit != 1) {
        reply_error(ctx->out, "ERR The bit argument must be 1 or 0.");
        return;
    }
    if (!bit_string_for_read(ctx, &ctx->argv[1], &p, &slen, &found))
        return;
    if (!found) {
        reply_int(ctx->out, bit ? -1 : 0);
        return;
    }
    if (ctx->argc >= 4 && ctx->argc <= 6) {
        long long totlen = (long long)slen;
        if (!cmd_get_ll_or_reply(ctx, &ctx->argv[3], &start))
            return;
        if (ctx->argc == 6 && !bit_unit_or_reply(ctx, &ctx->argv[5], &isbit))
            return;
        if (ctx->argc >= 5) {
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[4], &end))
                return;
            end_given = true;
        } else {
            end = isbit ? (totlen << 3) + 7 : totlen - 1;
        }
        bit_range(totlen, isbit, &start, &end, &first_mask, &last_mask);
    } else if (ctx->argc == 3) {
        start = 0;
        end = (long long)slen - 1;
    } else {
        reply_syntax_error(ctx->out);
        return;
    }

    if (start > end) {
        reply_int(ctx->out, -1);
        return;
    }

    long long bytes = end - start + 1;
    unsigned char tmp;
    if (first_mask) {
        tmp = bit ? (unsigned char)(p[start] & ~first_mask) : (unsigned char)(p[start] | first_mask);
        if (last_mask && bytes == 1)
            tmp = bit ? (unsigned char)(tmp & ~last_mask) : (unsigned char)(tmp | last_mask);
        pos = bitpos(&tmp, 1, (int)bit);
        if (bytes == 1 || (pos != -1 && pos != 8))
            goto result;
        start++;
        bytes--;
    }
    {
        long long curbytes = bytes - (last_mask ? 1 : 0);
        if (curbytes > 0) {
            pos = bitpos(p + start, (size_t)curbytes, (int)bit);
            if (bytes == curbytes || (pos != -1 && pos != curbytes << 3))
                goto result;
            start += curbytes;
            bytes -= curbytes;
        }
    }
    tmp = bit ? (unsigned char)(p[end] & ~last_mask) : (unsigned char)(p[end] | last_mask);
    pos = bitpos(&tmp, 1, (int)bit);

result:
    /* looking for a 0 in an explicit range: the bit after it is no padding */
    if (end_given && bit == 0 && pos == bytes << 3) {
        reply_int(ctx->out, -1);
        return;
    }
    if (pos != -1)
        pos += start << 3;
    reply_int(ctx->out, pos);
}

/* ---- BITOP ---------------------------------------------------------------- */

enum { BITOP_AND, BITOP_OR, BITOP_XOR, BITOP_NOT };

static void cmd_bitop(struct cmd_ctx *ctx)
{
    const struct resp_arg *opname = &ctx->argv[1];
    const struct resp_arg *dst = &ctx->argv[2];
    int op;

    if (cmd_arg_is(opname, "and")) {
        op = BITOP_AND;
    } else if (cmd_arg_is(opname, "or")) {
        op = BITOP_OR;
    } else if (cmd_arg_is(opname, "xor")) {
        op = BITOP_XOR;
    } else if (cmd_arg_is(opname, "not")) {
        op = BITOP_NOT;
    } else {
        reply_syntax_error(ctx->out);
        return;
    }
    if (op == BITOP_NOT && ctx->argc != 4) {
        reply_error(ctx->out, "ERR BITOP NOT must be called with a single source key.");
        return;
    }

    size_t numkeys = (size_t)ctx->argc - 3, maxlen = 0;
    const unsigned char **src = mem_alloc(numkeys * sizeof *src);
    size_t *len = mem_alloc(numkeys * sizeof *len);
    for (size_t j = 0; j < numkeys; j++) {
        bool found;
        if (!bit_string_for_read(ctx, &ctx->argv[j + 3], &src[j], &len[j], &found)) {
            mem_release(src);
            mem_release(len);
            return;
        }
        if (len[j] > maxlen)
            maxlen = len[j];
    }

    struct object *res = NULL;
    if (maxlen) {
        unsigned char *r = mem_alloc(maxlen);
        /* a missing byte is 0: the first source (padded), then each other over its bytes, AND
         * clearing what lies past a shorter one */
        if (len[0])
            memcpy(r, src[0], len[0]);
        memset(r + len[0], 0, maxlen - len[0]);
        if (op == BITOP_NOT) {
            for (size_t i = 0; i < maxlen; i++)
                r[i] = (unsigned char)~r[i];
        }
        for (size_t j = 1; j < numkeys; j++) {
            const unsigned char *b = src[j];
            size_t n = len[j];
            if (op == BITOP_AND) {
                for (size_t i = 0; i < n; i++)
                    r[i] &= b[i];
                memset(r + n, 0, maxlen - n);
            } else if (op == BITOP_OR) {
                for (size_t i = 0; i < n; i++)
                    r[i] |= b[i];
            } else {
                for (size_t i = 0; i < n; i++)
                    r[i] ^= b[i];
            }
        }
        /* built before the destination changes: it may be one of the sources */
        res = object_string_create(r, maxlen);
        object_string_setrange(res, 0, r, 1); /* a raw string, as Redis's sdsnewlen result */
        mem_release(r);
    }
    mem_release(src);
    mem_release(len);

    if (res) {
        cmd_lookup_write(ctx, dst); /* setKey's lookup: an expired destination is gone first */
        string_set_key(ctx, dst, res, 0);
        cmd_notify(ctx, NOTIFY_STRING, "set", dst);
    } else if (store_delete(ctx->store, ctx->db, dst->ptr, dst->len, ctx->now)) {
        cmd_changed(ctx, NOTIFY_GENERIC, "del", dst);
    }
    reply_int(ctx->out, (long long)maxlen);
}

/* ---- BITFIELD BITFIELD_RO ------------------------------------------------- */

enum { BF_GET, BF_SET, BF_INCRBY };
enum { BF_WRAP, BF_SAT, BF_FAIL };

struct bf_op {
    uint64_t offset; /* bit offset */
    int64_t i64;     /* SET's value, INCRBY's increment */
    int opcode;      /* BF_GET ... */
    int owtype;      /* the OVERFLOW in force: BF_WRAP ... */
    int bits;        /* field width, 1..64 */
    bool sign;       /* i (true) or u */
};

/* Redis getBitfieldTypeFromArgument: i1..i64 or u1..u63 */
static bool bf_type_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, bool *sign, int *bits)
{
    long long n;
    size_t rest;

    if (a->len > 0 && a->ptr[0] == 'i') {
        *sign = true;
    } else if (a->len > 0 && a->ptr[0] == 'u') {
        *sign = false;
    } else {
        goto err;
    }
    rest = strnlen(a->ptr + 1, a->len - 1); /* up to the first NUL, as Redis's strlen */
    if (!util_str_to_ll(a->ptr + 1, rest, &n) || n < 1 || (*sign && n > 64) || (!*sign && n > 63))
        goto err;
    *bits = (int)n;
    return true;
err:
    reply_error(ctx->out,
                "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");
    return false;
}

static uint64_t bf_get_unsigned(const unsigned char *p, uint64_t offset, int bits)
{
    uint64_t v = 0;
    for (int i = 0; i < bits; i++, offset++)
        v = (v << 1) | ((p[offset >> 3] >> (7 - (offset & 7))) & 1);
    return v;
}

static int64_t bf_get_signed(const unsigned char *p, uint64_t offset, int bits)
{
    uint64_t u = bf_get_unsigned(p, offset, bits);
    if (bits < 64 && (u & ((uint64_t)1 << (bits - 1))))
        u |= UINT64_MAX << bits;
    return (int64_t)u;
}

static void bf_set_unsigned(unsigned char *p, uint64_t offset, int bits, uint64_t v)
{
    for (int j = 0; j < bits; j++, offset++) {
        unsigned bitval = (v >> (bits - 1 - j)) & 1;
        unsigned bit = 7 - (unsigned)(offset & 7);
        p[offset >> 3] = (unsigned char)((p[offset >> 3] & ~(1u << bit)) | (bitval << bit));
    }
}

/* Redis checkUnsignedBitfieldOverflow: 0, or 1 / -1 with *limit what WRAP or SAT make of it */
static int bf_overflow_unsigned(uint64_t value, int64_t incr, int bits, int owtype, uint64_t *limit)
{
    uint64_t max = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    int64_t maxincr = (int64_t)(max - value);
    int64_t minincr = (int64_t)(0 - value);
    int r;

    if (value > max || (incr > 0 && incr > maxincr)) {
        r = 1;
        if (owtype == BF_SAT)
            *limit = max;
    } else if (incr < 0 && incr < minincr) {
        r = -1;
        if (owtype == BF_SAT)
            *limit = 0;
    } else {
        return 0;
    }
    if (owtype == BF_WRAP) {
        uint64_t res = value + (uint64_t)incr;
        if (bits < 64)
            res &= ~(UINT64_MAX << bits);
        *limit = res;
        return 1;
    }
    return r;
}

/* Redis checkSignedBitfieldOverflow */
static int bf_overflow_signed(int64_t value, int64_t incr, int bits, int owtype, int64_t *limit)
{
    int64_t max = bits == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
    int64_t min = -max - 1;
    int64_t maxincr = (int64_t)((uint64_t)max - (uint64_t)value);
    int64_t minincr = (int64_t)((uint64_t)min - (uint64_t)value);
    int r;

    if (value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr)) {
        r = 1;
        if (owtype == BF_SAT)
            *limit = max;
    } else if (value < min || (bits != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr)) {
        r = -1;
        if (owtype == BF_SAT)
            *limit = min;
    } else {
        return 0;
    }
    if (owtype == BF_WRAP) {
        uint64_t c = (uint64_t)value + (uint64_t)incr;
        if (bits < 64) {
            uint64_t mask = UINT64_MAX << bits;
            if (c & ((uint64_t)1 << (bits - 1)))
                c |= mask;
            else
                c &= ~mask;
        }
        *limit = (int64_t)c;
        return 1;
    }
    return r;
}

/* the up to 9 bytes holding op's field, copied zero-padded from p[0..len) into buf; the field's offset in buf */
static uint64_t bf_window(const unsigned char *p, size_t len, uint64_t offset, unsigned char buf[9])
{
    uint64_t byte = offset >> 3;
    memset(buf, 0, 9);
    for (int i = 0; i < 9 && p && byte + (uint64_t)i < len; i++)
        buf[i] = p[byte + (uint64_t)i];
    return offset - byte * 8;
}

/* Redis bitfieldGeneric */
static void bitfield_generic(struct cmd_ctx *ctx, bool ro)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct bf_op *ops = NULL;
    int numops = 0, owtype = BF_WRAP;
    long long changes = 0;
    bool readonly = true;
    uint64_t highest_write = 0;

    if (ctx->argc > 2)
        ops = mem_alloc((size_t)(ctx->argc - 2) / 2 * sizeof *ops + sizeof *ops);
    for (int j = 2; j < ctx->argc; j++) {
        int remargs = ctx->argc - j - 1;
        const struct resp_arg *sub = &ctx->argv[j];
        struct bf_op op = {0};

        if (cmd_arg_is(sub, "get") && remargs >= 2) {
            op.opcode = BF_GET;
        } else if (cmd_arg_is(sub, "set") && remargs >= 3) {
            op.opcode = BF_SET;
        } else if (cmd_arg_is(sub, "incrby") && remargs >= 3) {
            op.opcode = BF_INCRBY;
        } else if (cmd_arg_is(sub, "overflow") && remargs >= 1) {
            const struct resp_arg *t = &ctx->argv[++j];
            if (cmd_arg_is(t, "wrap")) {
                owtype = BF_WRAP;
            } else if (cmd_arg_is(t, "sat")) {
                owtype = BF_SAT;
            } else if (cmd_arg_is(t, "fail")) {
                owtype = BF_FAIL;
            } else {
                reply_error(ctx->out, "ERR Invalid OVERFLOW type specified");
                goto done;
            }
            continue;
        } else {
            reply_syntax_error(ctx->out);
            goto done;
        }
        if (!bf_type_or_reply(ctx, &ctx->argv[j + 1], &op.sign, &op.bits))
            goto done;
        if (!bit_offset_or_reply(ctx, &ctx->argv[j + 2], true, op.bits, &op.offset))
            goto done;
        if (op.opcode != BF_GET) {
            long long v;
            readonly = false;
            if (highest_write < op.offset + (uint64_t)op.bits - 1)
                highest_write = op.offset + (uint64_t)op.bits - 1;
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[j + 3], &v))
                goto done;
            op.i64 = v;
        }
        op.owtype = owtype;
        ops[numops++] = op;
        j += op.opcode == BF_GET ? 2 : 3;
    }

    struct object *o;
    bool grown = false;
    if (readonly) {
        o = cmd_lookup_read(ctx, key);
        if (o != NULL && object_type(o) != OBJ_STRING) {
            reply_wrongtype(ctx->out);
            goto done;
        }
    } else {
        if (ro) {
            reply_error(ctx->out, "ERR BITFIELD_RO only supports the GET subcommand");
            goto done;
        }
        o = bit_string_for_write(ctx, highest_write, &grown);
        if (o == NULL)
            goto done;
    }

    reply_array(ctx->out, numops);
    for (int j = 0; j < numops; j++) {
        const struct bf_op *op = &ops[j];
        const unsigned char *p = NULL;
        size_t len = 0;
        unsigned char buf[9];

        if (o != NULL)
            p = (const unsigned char *)object_string_ptr(o, &len);
        uint64_t at = bf_window(p, len, op->offset, buf);

        if (op->opcode == BF_GET) {
            if (op->sign)
                reply_int(ctx->out, bf_get_signed(buf, at, op->bits));
            else
                reply_int(ctx->out, (long long)bf_get_unsigned(buf, at, op->bits));
            continue;
        }

        bool write;
        uint64_t newval, before;
        if (op->sign) {
            int64_t oldval = bf_get_signed(buf, at, op->bits), nv, wrapped = 0, retval;
            int overflow;
            if (op->opcode == BF_INCRBY) {
                overflow = bf_overflow_signed(oldval, op->i64, op->bits, op->owtype, &wrapped);
                nv = overflow ? wrapped : (int64_t)((uint64_t)oldval + (uint64_t)op->i64);
                retval = nv;
            } else {
                nv = op->i64;
                overflow = bf_overflow_signed(nv, 0, op->bits, op->owtype, &wrapped);
                if (overflow)
                    nv = wrapped;
                retval = oldval;
            }
            write = !(overflow && op->owtype == BF_FAIL);
            if (write)
                reply_int(ctx->out, retval);
            newval = (uint64_t)nv;
            before = (uint64_t)oldval;
        } else {
            uint64_t oldval = bf_get_unsigned(buf, at, op->bits), nv, wrapped = 0, retval;
            int overflow;
            if (op->opcode == BF_INCRBY) {
                nv = oldval + (uint64_t)op->i64;
                overflow = bf_overflow_unsigned(oldval, op->i64, op->bits, op->owtype, &wrapped);
                if (overflow)
                    nv = wrapped;
                retval = nv;
            } else {
                nv = (uint64_t)op->i64;
                overflow = bf_overflow_unsigned(nv, 0, op->bits, op->owtype, &wrapped);
                if (overflow)
                    nv = wrapped;
                retval = oldval;
            }
            write = !(overflow && op->owtype == BF_FAIL);
            if (write)
                reply_int(ctx->out, (long long)retval);
            newval = nv;
            before = oldval;
        }
        if (write) {
            size_t nbytes = (size_t)(((at + (uint64_t)op->bits - 1) >> 3) + 1);
            bf_set_unsigned(buf, at, op->bits, newval);
            object_string_setrange(o, (size_t)(op->offset >> 3), buf, nbytes);
            if (grown || before != newval) /* Redis 7.0.15 counts what changed the string */
                changes++;
        } else {
            reply_null(ctx->out);
        }
    }

    if (changes) {
        cmd_modified_n(ctx, key, changes);
        cmd_notify(ctx, NOTIFY_STRING, "setbit", key);
    }
done:
    mem_release(ops);
}

static void cmd_bitfield(struct cmd_ctx *ctx)
{
    bitfield_generic(ctx, false);
}

static void cmd_bitfield_ro(struct cmd_ctx *ctx)
{
    bitfield_generic(ctx, true);
}

/* ---- table --------------------------------------------------------------- */

/* arity, flags, key positions and ACL categories as Redis 7.0.15's COMMAND
 * INFO reports them */
const struct command command_family_bitops[] = {
    {"setbit", cmd_setbit, 4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, ROUTE_OWNER, "@write @bitmap @slow"},
    {"getbit", cmd_getbit, 3, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @bitmap @fast"},
    {"bitcount", cmd_bitcount, -2, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @bitmap @slow"},
    {"bitpos", cmd_bitpos, -3, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @bitmap @slow"},
    {"bitop", cmd_bitop, -4, CMD_WRITE | CMD_DENYOOM, 2, -1, 1, ROUTE_GATHER, "@write @bitmap @slow"},
    {"bitfield", cmd_bitfield, -2, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, ROUTE_OWNER, "@write @bitmap @slow"},
    {"bitfield_ro", cmd_bitfield_ro, -2, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @bitmap @fast"},
};

const size_t command_family_bitops_count = sizeof(command_family_bitops) / sizeof(command_family_bitops[0]);
