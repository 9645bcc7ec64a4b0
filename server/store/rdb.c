/*
 * rdb: one value in Redis's RDB format (rdb.h).
 *
 * Design.  The writer walks percore's object with its type's public
 * iterators and writes Redis's encodings itself, because percore's packed
 * structures are not byte-compatible with Redis's: a listpack is re-encoded
 * entry by entry (lp_* below: Redis's entry encodings, back-lengths, the
 * 6-byte header and the 0xFF end), a list is cut into nodes by Redis 7.0's
 * _quicklistNodeAllowInsert rule applied to those Redis-sized listpacks (what
 * Redis holds after RPUSHing the elements in order under the list-max-
 * listpack-size in force now; Redis keeps the cuts of the list's history and
 * the fill it was made with), inner nodes LZF-compressed as list-compress-
 * depth says, an intset is written
 * little-endian at percore's width.  Hashtable sets and hashes are written
 * in dict order, which no two servers share, so only their contents compare.
 *
 * The reader is a cursor over the input (struct rd) whose every read is
 * bounds-checked; a count read from the input is refused when the input
 * left could not hold that many elements, so no hostile count makes it
 * loop or allocate much.  Packed structures (listpack, ziplist, zipmap,
 * intset) are validated whole by one walker each, which hands every element
 * to a sink; the sink builds the percore object with its type's ordinary
 * insert functions (so the usual thresholds convert it as commands would)
 * and reports duplicates.  Any failure destroys the partial object.
 *
 * Threading: none of its own; the caller owns the object.
 */
#include "percore/rdb.h"

#include "percore/crc64.h"
#include "percore/intset.h"
#include "percore/list.h"
#include "percore/mem.h"
#include "percore/stream.h"
#include "percore/stream_group.h"
#include "percore/util.h"
#include "percore/zset.h"

#include <limits.h>
#include <lzf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* RDB value types (Redis rdb.h) */
enum {
    RDB_TYPE_STRING = 0,
    RDB_TYPE_LIST = 1,
    RDB_TYPE_SET = 2,
    RDB_TYPE_ZSET = 3,
    RDB_TYPE_HASH = 4,
    RDB_TYPE_ZSET_2 = 5,
    RDB_TYPE_HASH_ZIPMAP = 9,
    RDB_TYPE_LIST_ZIPLIST = 10,
    RDB_TYPE_SET_INTSET = 11,
    RDB_TYPE_ZSET_ZIPLIST = 12,
    RDB_TYPE_HASH_ZIPLIST = 13,
    RDB_TYPE_LIST_QUICKLIST = 14,
    RDB_TYPE_STREAM_LISTPACKS = 15,
    RDB_TYPE_HASH_LISTPACK = 16,
    RDB_TYPE_ZSET_LISTPACK = 17,
    RDB_TYPE_LIST_QUICKLIST_2 = 18,
    RDB_TYPE_STREAM_LISTPACKS_2 = 19,
    RDB_TYPE_SET_LISTPACK = 20,
    RDB_TYPE_STREAM_LISTPACKS_3 = 21,
};

/* length encodings */
#define RDB_6BITLEN 0
#define RDB_14BITLEN 1
#define RDB_32BITLEN 0x80
#define RDB_64BITLEN 0x81
#define RDB_ENCVAL 3
#define RDB_ENC_INT8 0
#define RDB_ENC_INT16 1
#define RDB_ENC_INT32 2
#define RDB_ENC_LZF 3

#define QUICKLIST_NODE_PLAIN 1
#define QUICKLIST_NODE_PACKED 2

#define LP_HDR 6                  /* listpack header: total bytes (4), count (2) */
#define LP_EOF 0xFF
#define LP_COUNT_UNKNOWN 65535

/* a stream entry's flags in Redis's listpack */
#define STREAM_ITEM_FLAG_DELETED 1
#define STREAM_ITEM_FLAG_SAMEFIELDS 2
#define ZL_HDR 10                 /* ziplist header: bytes (4), tail offset (4), count (2) */
#define ZL_END 0xFF
#define ZIPMAP_BIGLEN 254
#define ZIPMAP_END 255

#define QL_SIZE_SAFETY_LIMIT 8192 /* Redis quicklist.c SIZE_SAFETY_LIMIT */
#define QL_SIZE_ESTIMATE_OVERHEAD 8 /* quicklist.c SIZE_ESTIMATE_OVERHEAD */
#define QL_MIN_COMPRESS_BYTES 48  /* quicklist.c MIN_COMPRESS_BYTES */
#define QL_MIN_COMPRESS_IMPROVE 8 /* quicklist.c MIN_COMPRESS_IMPROVE */
#define QL_FILL_MAX 32768
#define QL_FILL_MIN (-5)

#define MAX_STRING_LEN ((uint64_t)UINT32_MAX) /* no compressed RDB string the reader accepts is longer */

/* ==== writer ============================================================ */

void rdb_buf_release(struct rdb_buf *b)
{
    mem_release(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static char *buf_room(struct rdb_buf *b, size_t n)
{
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap - b->len < n)
            cap *= 2;
        b->p = mem_realloc(b->p, cap);
        b->cap = cap;
    }
    char *at = b->p + b->len;
    b->len += n;
    return at;
}

static void buf_put(struct rdb_buf *b, const void *p, size_t n)
{
    if (n)
        memcpy(buf_room(b, n), p, n);
}

void rdb_buf_put(struct rdb_buf *b, const void *p, size_t n)
{
    buf_put(b, p, n);
}

static void buf_byte(struct rdb_buf *b, unsigned v)
{
    *buf_room(b, 1) = (char)v;
}

/* little-endian integer of `bytes` bytes */
static void put_le(unsigned char *at, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        at[i] = (unsigned char)(v >> (8 * i));
}

static void buf_le(struct rdb_buf *b, uint64_t v, unsigned bytes)
{
    put_le((unsigned char *)buf_room(b, bytes), v, bytes);
}

/* Redis rdbSaveLen */
static void save_len(struct rdb_buf *b, uint64_t len)
{
    if (len < (1 << 6)) {
        buf_byte(b, (unsigned)len | (RDB_6BITLEN << 6));
    } else if (len < (1 << 14)) {
        buf_byte(b, (unsigned)(len >> 8) | (RDB_14BITLEN << 6));
        buf_byte(b, (unsigned)(len & 0xff));
    } else if (len <= UINT32_MAX) {
        buf_byte(b, RDB_32BITLEN);
        for (int i = 3; i >= 0; i--)
            buf_byte(b, (unsigned)(len >> (8 * i)) & 0xff);
    } else {
        buf_byte(b, RDB_64BITLEN);
        for (int i = 7; i >= 0; i--)
            buf_byte(b, (unsigned)(len >> (8 * i)) & 0xff);
    }
}

/* Redis rdbEncodeInteger: false when v needs more than 32 bits */
static bool save_int_encoded(struct rdb_buf *b, long long v)
{
    if (v >= -(1 << 7) && v <= (1 << 7) - 1) {
        buf_byte(b, (RDB_ENCVAL << 6) | RDB_ENC_INT8);
        buf_le(b, (uint64_t)v, 1);
    } else if (v >= -(1 << 15) && v <= (1 << 15) - 1) {
        buf_byte(b, (RDB_ENCVAL << 6) | RDB_ENC_INT16);
        buf_le(b, (uint64_t)v, 2);
    } else if (v >= -((long long)1 << 31) && v <= ((long long)1 << 31) - 1) {
        buf_byte(b, (RDB_ENCVAL << 6) | RDB_ENC_INT32);
        buf_le(b, (uint64_t)v, 4);
    } else {
        return false;
    }
    return true;
}

static void save_lzf_blob(struct rdb_buf *b, const void *c, size_t clen, size_t len)
{
    buf_byte(b, (RDB_ENCVAL << 6) | RDB_ENC_LZF);
    save_len(b, clen);
    save_len(b, len);
    buf_put(b, c, clen);
}

/* Redis rdbSaveLzfStringObject: false when compressing gains under 4 bytes */
static bool save_lzf(struct rdb_buf *b, const char *s, size_t len)
{
    if (len <= 4)
        return false;
    size_t outlen = len - 4;
    char *out = mem_alloc(outlen + 1);
    unsigned clen = lzf_compress(s, (unsigned)len, out, (unsigned)outlen);
    if (clen)
        save_lzf_blob(b, out, clen, len);
    mem_release(out);
    return clen != 0;
}

/* Redis rdbSaveRawString */
static void save_string(struct rdb_buf *b, const char *s, size_t len, bool compress)
{
    if (len <= 11) {
        long long v;
        char tmp[24];
        if (util_str_to_ll(s, len, &v) && (size_t)util_ll_to_str(tmp, v) == len &&
            memcmp(tmp, s, len) == 0 && save_int_encoded(b, v))
            return;
    }
    if (compress && len > 20 && len <= UINT32_MAX && save_lzf(b, s, len))
        return;
    save_len(b, len);
    buf_put(b, s, len);
}

/* Redis rdbSaveLongLongAsStringObject */
static void save_ll_string(struct rdb_buf *b, long long v)
{
    if (save_int_encoded(b, v))
        return;
    char tmp[24];
    int n = util_ll_to_str(tmp, v);
    save_len(b, (uint64_t)n);
    buf_put(b, tmp, (size_t)n);
}

/* ---- Redis's listpack, built entry by entry ---- */

/* Redis lpEncodeBacklen: the back-length of an entry of l bytes at buf (NULL: only its size) */
static unsigned lp_backlen(unsigned char *buf, uint64_t l)
{
    unsigned n = l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
    if (buf) {
        for (unsigned i = 0; i < n; i++) {
            unsigned shift = 7 * (n - 1 - i);
            buf[i] = (unsigned char)((l >> shift) & 127);
            if (i > 0)
                buf[i] |= 128;
        }
    }
    return n;
}

/* Redis lpStringToInt64 and lpEncodeIntegerGetType / lpEncodeString: the entry's encoded header and
 * data for s[0..n) at enc (NULL: size only; a string's bytes are not copied, only its header); *hdr the
 * header's bytes */
static size_t lp_encode(unsigned char *enc, const char *s, size_t n, size_t *hdr)
{
    long long v;
    if (n <= 20 && util_str_to_ll(s, n, &v)) {
        unsigned char tmp[9];
        size_t len;
        if (v >= 0 && v <= 127) {
            tmp[0] = (unsigned char)v;
            len = 1;
        } else if (v >= -4096 && v <= 4095) {
            uint64_t u = v < 0 ? (uint64_t)((1 << 13) + v) : (uint64_t)v;
            tmp[0] = (unsigned char)((u >> 8) | 0xC0);
            tmp[1] = (unsigned char)(u & 0xff);
            len = 2;
        } else if (v >= -32768 && v <= 32767) {
            tmp[0] = 0xF1;
            put_le(tmp + 1, (uint64_t)v, 2);
            len = 3;
        } else if (v >= -8388608 && v <= 8388607) {
            tmp[0] = 0xF2;
            put_le(tmp + 1, (uint64_t)v, 3);
            len = 4;
        } else if (v >= -2147483648LL && v <= 2147483647LL) {
            tmp[0] = 0xF3;
            put_le(tmp + 1, (uint64_t)v, 4);
            len = 5;
        } else {
            tmp[0] = 0xF4;
            put_le(tmp + 1, (uint64_t)v, 8);
            len = 9;
        }
        if (enc)
            memcpy(enc, tmp, len);
        *hdr = len;
        return len;
    }
    unsigned char h[5];
    size_t hl;
    if (n < 64) {
        h[0] = (unsigned char)(0x80 | n);
        hl = 1;
    } else if (n < 4096) {
        h[0] = (unsigned char)(0xE0 | (n >> 8));
        h[1] = (unsigned char)(n & 0xff);
        hl = 2;
    } else {
        h[0] = 0xF0;
        put_le(h + 1, n, 4);
        hl = 5;
    }
    if (enc)
        memcpy(enc, h, hl);
    *hdr = hl;
    return hl + n;
}

size_t rdb_lp_element_size(const char *p, size_t n)
{
    size_t hdr, l = lp_encode(NULL, p, n, &hdr);
    return l + lp_backlen(NULL, l);
}

size_t rdb_lp_int_size(long long v)
{
    char buf[24];
    return rdb_lp_element_size(buf, (size_t)util_ll_to_str(buf, v));
}

/* a Redis listpack being built in a buffer from offset `start` */
struct lpw {
    struct rdb_buf *b;  /* where it is built */
    size_t start;       /* offset of its header */
    size_t count;       /* entries so far */
};

static void lpw_begin(struct lpw *w, struct rdb_buf *b)
{
    w->b = b;
    w->start = b->len;
    w->count = 0;
    buf_room(b, LP_HDR);
}

static void lpw_append(struct lpw *w, const char *s, size_t n)
{
    size_t hdr;
    size_t l = lp_encode(NULL, s, n, &hdr);
    unsigned bl = lp_backlen(NULL, l);
    unsigned char *at = (unsigned char *)buf_room(w->b, l + bl);
    lp_encode(at, s, n, &hdr);
    if (hdr < l)
        memcpy(at + hdr, s, n);
    lp_backlen(at + l, l);
    w->count++;
}

/* the listpack's size once finished (header, entries, end) */
static size_t lpw_bytes(const struct lpw *w)
{
    return w->b->len - w->start + 1;
}

/* write the end byte and the header; returns the listpack's size */
static size_t lpw_finish(struct lpw *w)
{
    buf_byte(w->b, LP_EOF);
    size_t total = w->b->len - w->start;
    unsigned char *h = (unsigned char *)w->b->p + w->start;
    put_le(h, total, 4);
    put_le(h + 4, w->count < LP_COUNT_UNKNOWN ? w->count : LP_COUNT_UNKNOWN, 2);
    return total;
}

/* Redis d2string (7.0): a score as a zset listpack holds it */
static int score_to_str(char *buf, size_t cap, double d)
{
    if (isnan(d))
        return snprintf(buf, cap, "nan");
    if (isinf(d))
        return snprintf(buf, cap, d < 0 ? "-inf" : "inf");
    if (d == 0)
        return snprintf(buf, cap, 1.0 / d < 0 ? "-0" : "0");
    if (d > -4503599627370495.0 && d < 4503599627370496.0 && d == (double)(long long)d)
        return util_ll_to_str(buf, (long long)d);
    return snprintf(buf, cap, "%.17g", d);
}

/* ---- the types ---- */

/* Redis 7.0 _quicklistNodeAllowInsert: may a node of node_sz bytes and node_count elements take one
 * of sz bytes (its estimate of the growth: sz + SIZE_ESTIMATE_OVERHEAD) */
static bool ql_allows(size_t node_sz, size_t node_count, size_t sz, int fill)
{
    size_t new_sz = node_sz + sz + QL_SIZE_ESTIMATE_OVERHEAD;
    if (fill < 0) {
        size_t offset = (size_t)(-fill) - 1;
        if (offset < 5 && new_sz <= ((size_t)4096 << offset))
            return true;
    }
    if (new_sz > QL_SIZE_SAFETY_LIMIT)
        return false;
    return fill >= 0 && node_count < (size_t)fill;
}

/* one finished node listpack (in scratch) written as Redis's rdbSaveObject writes a quicklist node */
static void save_list_node(struct rdb_buf *b, const char *lp, size_t sz, bool compressed_node,
                           const struct rdb_save_opts *opts)
{
    save_len(b, QUICKLIST_NODE_PACKED);
    if (compressed_node && sz >= QL_MIN_COMPRESS_BYTES) {
        /* __quicklistCompressNode: kept compressed only when it saves 8 bytes */
        char *out = mem_alloc(sz);
        unsigned clen = lzf_compress(lp, (unsigned)sz, out, (unsigned)sz);
        if (clen != 0 && clen + QL_MIN_COMPRESS_IMPROVE < sz) {
            save_lzf_blob(b, out, clen, sz);
            mem_release(out);
            return;
        }
        mem_release(out);
    }
    save_string(b, lp, sz, opts->compress);
}

static void save_list(struct rdb_buf *b, const struct object *o, const struct rdb_save_opts *opts)
{
    int fill = opts->list_fill > QL_FILL_MAX ? QL_FILL_MAX : opts->list_fill < QL_FILL_MIN ? QL_FILL_MIN
                                                                                           : opts->list_fill;
    /* the nodes' listpacks, one after the other (each header says its size) */
    struct rdb_buf scratch = {0};
    size_t nodes = 0;
    struct lpw w;
    bool open = false;
    struct list_iter it;
    const char *p;
    size_t n;

    list_iter_init(&it, (struct object *)o, 0, true);
    while (list_iter_next(&it, &p, &n)) {
        if (open && !ql_allows(lpw_bytes(&w), w.count, n, fill)) {
            lpw_finish(&w);
            open = false;
        }
        if (!open) {
            nodes++;
            lpw_begin(&w, &scratch);
            open = true;
        }
        lpw_append(&w, p, n);
    }
    list_iter_finish(&it, fill);
    if (open)
        lpw_finish(&w);

    save_len(b, nodes);
    size_t at = 0;
    for (size_t i = 0; i < nodes; i++) {
        const unsigned char *h = (const unsigned char *)scratch.p + at;
        size_t sz = (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16 | (size_t)h[3] << 24;
        size_t depth = opts->list_compress_depth > 0 ? (size_t)opts->list_compress_depth : 0;
        bool inner = depth > 0 && i >= depth && i + depth < nodes;
        save_list_node(b, (const char *)h, sz, inner, opts);
        at += sz;
    }
    rdb_buf_release(&scratch);
}

static void save_set(struct rdb_buf *b, const struct object *o, const struct rdb_save_opts *opts)
{
    struct set_iter it;
    struct set_member m;
    if (set_encoding(o) == SET_ENC_INTSET) {
        /* Redis's intset bytes: encoding (width), length, the values, all little-endian */
        unsigned width = 2;
        size_t count = set_size(o);
        set_iter_init(&it, (struct object *)o);
        while (set_iter_next(&it, &m)) {
            if (m.v < INT16_MIN || m.v > INT16_MAX)
                width = width < 4 ? 4 : width;
            if (m.v < INT32_MIN || m.v > INT32_MAX)
                width = 8;
        }
        const struct intset *is = object_collection_ptr(o);
        width = width > intset_width(is) ? width : intset_width(is);
        struct rdb_buf blob = {0};
        buf_le(&blob, width, 4);
        buf_le(&blob, count, 4);
        set_iter_init(&it, (struct object *)o);
        while (set_iter_next(&it, &m))
            buf_le(&blob, (uint64_t)m.v, width);
        buf_byte(b, RDB_TYPE_SET_INTSET);
        save_string(b, blob.p, blob.len, opts->compress);
        rdb_buf_release(&blob);
        return;
    }
    buf_byte(b, RDB_TYPE_SET);
    save_len(b, set_size(o));
    set_iter_init(&it, (struct object *)o);
    while (set_iter_next(&it, &m))
        save_string(b, m.p, m.n, opts->compress);
}

static void save_zset(struct rdb_buf *b, const struct object *o, const struct rdb_save_opts *opts)
{
    struct zset *z = object_collection_ptr(o);
    size_t len = zset_length(z);
    struct zset_iter it;
    const char *ele;
    size_t n;
    if (zset_encoding(z) == ZSET_ENC_LISTPACK) {
        struct rdb_buf lp = {0};
        struct lpw w;
        char sbuf[64];
        lpw_begin(&w, &lp);
        zset_iter_rank(z, 0, false, &it);
        for (size_t i = 0; i < len && it.valid; i++) {
            ele = zset_iter_member(&it, &n);
            lpw_append(&w, ele, n);
            int sl = score_to_str(sbuf, sizeof(sbuf), zset_iter_scoreval(&it));
            lpw_append(&w, sbuf, (size_t)sl);
            zset_iter_step(&it, false);
        }
        lpw_finish(&w);
        buf_byte(b, RDB_TYPE_ZSET_LISTPACK);
        save_string(b, lp.p, lp.len, opts->compress);
        rdb_buf_release(&lp);
        return;
    }
    /* ZSET_2, from the greatest to the smallest (rdbSaveObject) */
    buf_byte(b, RDB_TYPE_ZSET_2);
    save_len(b, len);
    zset_iter_rank(z, 0, true, &it);
    for (size_t i = 0; i < len && it.valid; i++) {
        ele = zset_iter_member(&it, &n);
        save_string(b, ele, n, opts->compress);
        double d = zset_iter_scoreval(&it);
        uint64_t bits;
        memcpy(&bits, &d, sizeof(bits));
        buf_le(b, bits, 8);
        zset_iter_step(&it, true);
    }
}

static void save_hash(struct rdb_buf *b, const struct object *o, const struct rdb_save_opts *opts)
{
    struct hash_iter it;
    const char *f, *v;
    size_t fl, vl;
    if (object_collection_encoding(o) == HASH_LISTPACK) {
        struct rdb_buf lp = {0};
        struct lpw w;
        lpw_begin(&w, &lp);
        hash_iter_init(&it, o);
        while (hash_iter_next(&it, &f, &fl, &v, &vl)) {
            lpw_append(&w, f, fl);
            lpw_append(&w, v, vl);
        }
        lpw_finish(&w);
        buf_byte(b, RDB_TYPE_HASH_LISTPACK);
        save_string(b, lp.p, lp.len, opts->compress);
        rdb_buf_release(&lp);
        return;
    }
    buf_byte(b, RDB_TYPE_HASH);
    save_len(b, hash_length(o));
    hash_iter_init(&it, o);
    while (hash_iter_next(&it, &f, &fl, &v, &vl)) {
        save_string(b, f, fl, opts->compress);
        save_string(b, v, vl, opts->compress);
    }
}

static void lpw_int(struct lpw *w, int64_t v)
{
    char buf[24];
    lpw_append(w, buf, (size_t)util_ll_to_str(buf, v));
}

/* an entry's pairs read from it into *pairs (grown to hold them) */
static void stream_pairs(struct stream_iter *it, size_t nfields, struct stream_str **pairs, size_t *cap)
{
    if (2 * nfields > *cap) {
        *cap = 2 * nfields;
        *pairs = mem_realloc(*pairs, *cap * sizeof **pairs);
    }
    for (size_t i = 0; i < nfields; i++)
        stream_iter_pair(it, &(*pairs)[2 * i], &(*pairs)[2 * i + 1]);
}

/*
 * A stream node as Redis 7.0's listpack: the master entry (live count, deleted count, the first
 * entry's fields, 0), then each entry: flags, the ms and seq differences from the master ID, the
 * field count and the fields unless they are the master's (SAMEFIELDS), the values, and how many
 * elements the entry took.
 */
static void save_stream_node(struct rdb_buf *lp, const struct stream *s, size_t node)
{
    struct stream_node_info info;
    struct stream_iter it;
    struct stream_id id;
    struct stream_str *master = NULL, *pairs = NULL;
    size_t nmaster, nfields, mcap = 0, pcap = 0;
    bool deleted;
    struct lpw w;

    stream_node_info(s, node, &info);
    lpw_begin(&w, lp);
    lpw_int(&w, info.entries - info.deleted);
    lpw_int(&w, info.deleted);
    stream_node_iter_init(&it, s, node);
    stream_node_next(&it, &id, &nmaster, &deleted);
    stream_pairs(&it, nmaster, &master, &mcap);
    lpw_int(&w, (int64_t)nmaster);
    for (size_t i = 0; i < nmaster; i++)
        lpw_append(&w, master[2 * i].p, master[2 * i].n);
    lpw_int(&w, 0);
    stream_node_iter_init(&it, s, node);
    while (stream_node_next(&it, &id, &nfields, &deleted)) {
        stream_pairs(&it, nfields, &pairs, &pcap);
        bool same = nfields == nmaster;
        for (size_t i = 0; same && i < nfields; i++)
            same = pairs[2 * i].n == master[2 * i].n && memcmp(pairs[2 * i].p, master[2 * i].p, pairs[2 * i].n) == 0;
        lpw_int(&w, (deleted ? STREAM_ITEM_FLAG_DELETED : 0) | (same ? STREAM_ITEM_FLAG_SAMEFIELDS : 0));
        lpw_int(&w, (int64_t)(id.ms - info.master.ms));
        lpw_int(&w, (int64_t)(id.seq - info.master.seq));
        if (!same)
            lpw_int(&w, (int64_t)nfields);
        for (size_t i = 0; i < nfields; i++) {
            if (!same)
                lpw_append(&w, pairs[2 * i].p, pairs[2 * i].n);
            lpw_append(&w, pairs[2 * i + 1].p, pairs[2 * i + 1].n);
        }
        lpw_int(&w, (int64_t)(same ? nfields + 3 : 2 * nfields + 4));
    }
    lpw_finish(&w);
    mem_release(master);
    mem_release(pairs);
}

static void id_be(unsigned char *at, const struct stream_id *id)
{
    for (int i = 0; i < 8; i++) {
        at[i] = (unsigned char)(id->ms >> (56 - 8 * i));
        at[8 + i] = (unsigned char)(id->seq >> (56 - 8 * i));
    }
}

/* Redis's rdbSaveStreamPEL: each NACK's ID (16 raw bytes, big-endian), with its delivery time (ms, 8 bytes) and
 * count when nacks */
static void save_stream_pel(struct rdb_buf *b, const struct stream_pel *pel, bool nacks)
{
    save_len(b, pel->n);
    for (size_t i = 0; i < pel->n; i++) {
        unsigned char id[16];
        id_be(id, &pel->v[i]->id);
        buf_put(b, id, sizeof id);
        if (nacks) {
            buf_le(b, (uint64_t)pel->v[i]->delivery_time, 8);
            save_len(b, pel->v[i]->delivery_count);
        }
    }
}

/* Redis 7.0's groups of a RDB_TYPE_STREAM_LISTPACKS_2: name, last ID, entries read, PEL, consumers (name, seen
 * time, the IDs they own) */
static void save_stream_groups(struct rdb_buf *b, const struct stream *s, const struct rdb_save_opts *opts)
{
    save_len(b, stream_group_count(s));
    for (size_t i = 0; i < stream_group_count(s); i++) {
        const struct stream_group *g = stream_group_at(s, i);
        save_string(b, g->name.p, g->name.len, opts->compress);
        save_len(b, g->last_id.ms);
        save_len(b, g->last_id.seq);
        save_len(b, (uint64_t)g->entries_read);
        save_stream_pel(b, &g->pel, true);
        save_len(b, g->nconsumers);
        for (size_t j = 0; j < g->nconsumers; j++) {
            const struct stream_consumer *c = g->consumers[j];
            save_string(b, c->name.p, c->name.len, opts->compress);
            buf_le(b, (uint64_t)c->seen_time, 8);
            save_stream_pel(b, &c->pel, false);
        }
    }
}

/* Redis 7.0's RDB_TYPE_STREAM_LISTPACKS_2: the nodes (master ID big-endian, listpack), the length, the
 * last, first and max deleted IDs, entries added, and the consumer groups */
static void save_stream(struct rdb_buf *b, const struct object *o, const struct rdb_save_opts *opts)
{
    const struct stream *s = stream_of(o);
    struct stream_id last = stream_last_id(s), first, max_deleted = stream_max_deleted_id(s);
    buf_byte(b, RDB_TYPE_STREAM_LISTPACKS_2);
    save_len(b, stream_nodes(s));
    for (size_t i = 0; i < stream_nodes(s); i++) {
        struct stream_node_info info;
        unsigned char key[16];
        struct rdb_buf lp = {0};
        stream_node_info(s, i, &info);
        id_be(key, &info.master);
        save_string(b, (const char *)key, sizeof key, opts->compress);
        save_stream_node(&lp, s, i);
        save_string(b, lp.p, lp.len, opts->compress);
        rdb_buf_release(&lp);
    }
    stream_first_entry_id(s, &first);
    save_len(b, stream_length(s));
    save_len(b, last.ms);
    save_len(b, last.seq);
    save_len(b, first.ms);
    save_len(b, first.seq);
    save_len(b, max_deleted.ms);
    save_len(b, max_deleted.seq);
    save_len(b, stream_entries_added(s));
    save_stream_groups(b, s, opts);
}

void rdb_save_value(struct rdb_buf *b, const struct object *o, const struct rdb_save_opts *opts)
{
    switch (object_type(o)) {
    case OBJ_STRING: {
        size_t len;
        const char *p = object_string_ptr(o, &len);
        long long v;
        buf_byte(b, RDB_TYPE_STRING);
        if (strcmp(object_encoding_name(o), "int") == 0 && util_str_to_ll(p, len, &v))
            save_ll_string(b, v);
        else
            save_string(b, p, len, opts->compress);
        break;
    }
    case OBJ_LIST:
        buf_byte(b, RDB_TYPE_LIST_QUICKLIST_2);
        save_list(b, o, opts);
        break;
    case OBJ_SET:
        save_set(b, o, opts);
        break;
    case OBJ_ZSET:
        save_zset(b, o, opts);
        break;
    case OBJ_HASH:
        save_hash(b, o, opts);
        break;
    case OBJ_STREAM:
        save_stream(b, o, opts);
        break;
    }
}

void rdb_payload_footer(struct rdb_buf *b, size_t start)
{
    buf_le(b, RDB_VERSION, 2);
    buf_le(b, crc64(0, b->p + start, b->len - start), 8);
}

void rdb_dump_payload(struct rdb_buf *b, const struct object *o, const struct rdb_save_opts *opts)
{
    size_t start = b->len;
    rdb_save_value(b, o, opts);
    rdb_payload_footer(b, start);
}

int rdb_verify_payload(const void *p, size_t n, unsigned *version)
{
    const unsigned char *s = p;
    if (n < 10)
        return -1;
    const unsigned char *footer = s + n - 10;
    unsigned ver = (unsigned)footer[0] | (unsigned)footer[1] << 8;
    if (ver > RDB_VERSION)
        return -1;
    uint64_t crc = crc64(0, s, n - 8), want = 0;
    for (int i = 7; i >= 0; i--)
        want = want << 8 | footer[2 + i];
    if (crc != want)
        return -1;
    *version = ver;
    return 0;
}

/* ---- whole files ---- */

/* file opcodes (Redis rdb.h) */
enum {
    RDB_OPCODE_FUNCTION2 = 245,
    RDB_OPCODE_FUNCTION_PRE_GA = 246,
    RDB_OPCODE_MODULE_AUX = 247,
    RDB_OPCODE_IDLE = 248,
    RDB_OPCODE_FREQ = 249,
    RDB_OPCODE_AUX = 250,
    RDB_OPCODE_RESIZEDB = 251,
    RDB_OPCODE_EXPIRETIME_MS = 252,
    RDB_OPCODE_EXPIRETIME = 253,
    RDB_OPCODE_SELECTDB = 254,
    RDB_OPCODE_EOF = 255,
};

static void save_aux(struct rdb_buf *b, const char *key, const char *val, bool compress)
{
    buf_byte(b, RDB_OPCODE_AUX);
    save_string(b, key, strlen(key), compress);
    save_string(b, val, strlen(val), compress);
}

static void save_aux_ll(struct rdb_buf *b, const char *key, long long v, bool compress)
{
    char tmp[24];
    tmp[util_ll_to_str(tmp, v)] = '\0'; /* it writes no NUL; save_aux takes strlen */
    save_aux(b, key, tmp, compress);
}

void rdb_file_begin(struct rdb_buf *b, const char *redis_ver, long long ctime_s, long long used_mem,
                    const struct rdb_save_opts *opts)
{
    char magic[16];
    int n = snprintf(magic, sizeof magic, "REDIS%04d", RDB_VERSION);
    buf_put(b, magic, (size_t)n);
    save_aux(b, "redis-ver", redis_ver, opts->compress);
    save_aux_ll(b, "redis-bits", (long long)(sizeof(void *) * 8), opts->compress);
    save_aux_ll(b, "ctime", ctime_s, opts->compress);
    save_aux_ll(b, "used-mem", used_mem, opts->compress);
    save_aux_ll(b, "aof-base", opts->aof_base, opts->compress);
}

void rdb_save_function(struct rdb_buf *b, const char *code, size_t len, bool compress)
{
    buf_byte(b, RDB_OPCODE_FUNCTION2);
    save_string(b, code, len, compress);
}

void rdb_file_select(struct rdb_buf *b, int db, uint64_t keys, uint64_t expires)
{
    buf_byte(b, RDB_OPCODE_SELECTDB);
    save_len(b, (uint64_t)db);
    if (keys) {
        buf_byte(b, RDB_OPCODE_RESIZEDB);
        save_len(b, keys);
        save_len(b, expires);
    }
}

void rdb_file_key(struct rdb_buf *b, const char *key, size_t klen, int64_t expire_ms, const struct object *val,
                  const struct rdb_save_opts *opts)
{
    if (expire_ms >= 0) {
        buf_byte(b, RDB_OPCODE_EXPIRETIME_MS);
        buf_le(b, (uint64_t)expire_ms, 8);
    }
    /* Redis writes the value's type, the key, then the value: the key goes in after the type byte */
    size_t at = b->len;
    rdb_save_value(b, val, opts);
    size_t vlen = b->len - at;
    struct rdb_buf k = {0};
    save_string(&k, key, klen, opts->compress);
    buf_room(b, k.len);
    memmove(b->p + at + 1 + k.len, b->p + at + 1, vlen - 1);
    memcpy(b->p + at + 1, k.p, k.len);
    rdb_buf_release(&k);
}

void rdb_file_end(struct rdb_buf *b, uint64_t crc, bool checksum)
{
    buf_byte(b, RDB_OPCODE_EOF);
    crc = checksum ? crc64(crc, b->p + b->len - 1, 1) : 0;
    buf_le(b, crc, 8);
}

/* ==== reader ============================================================ */

/* a bounds-checked cursor over the input */
struct rd {
    const unsigned char *p;  /* the input */
    size_t n;                /* its length */
    size_t off;              /* bytes consumed */
};

static size_t rd_left(const struct rd *r)
{
    return r->n - r->off;
}

static bool rd_bytes(struct rd *r, size_t k, const unsigned char **at)
{
    if (rd_left(r) < k)
        return false;
    *at = r->p + r->off;
    r->off += k;
    return true;
}

static uint64_t get_be(const unsigned char *p, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v = v << 8 | p[i];
    return v;
}

static uint64_t get_le(const unsigned char *p, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = bytes; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* sign-extend the low `bits` bits of v */
static int64_t sign_extend(uint64_t v, unsigned bits)
{
    if (bits < 64 && (v & ((uint64_t)1 << (bits - 1))))
        v |= ~(((uint64_t)1 << bits) - 1);
    return (int64_t)v;
}

/* Redis rdbLoadLenByRef: *encoded when it is a special string encoding (then *len is that encoding) */
static bool rd_len(struct rd *r, uint64_t *len, bool *encoded)
{
    const unsigned char *b;
    if (!rd_bytes(r, 1, &b))
        return false;
    unsigned type = (b[0] & 0xC0) >> 6;
    if (encoded)
        *encoded = false;
    if (type == RDB_ENCVAL) {
        if (!encoded)
            return false;
        *encoded = true;
        *len = b[0] & 0x3F;
        return true;
    }
    if (type == RDB_6BITLEN) {
        *len = b[0] & 0x3F;
        return true;
    }
    if (type == RDB_14BITLEN) {
        const unsigned char *c;
        if (!rd_bytes(r, 1, &c))
            return false;
        *len = (uint64_t)(b[0] & 0x3F) << 8 | c[0];
        return true;
    }
    unsigned k = b[0] == RDB_32BITLEN ? 4 : b[0] == RDB_64BITLEN ? 8 : 0;
    const unsigned char *c;
    if (k == 0 || !rd_bytes(r, k, &c))
        return false;
    uint64_t v = 0;
    for (unsigned i = 0; i < k; i++)
        v = v << 8 | c[i];
    *len = v;
    return true;
}

/* a collection's count: each element takes at least `min_bytes` of what is left */
static bool rd_count(struct rd *r, uint64_t *count, size_t min_bytes)
{
    return rd_len(r, count, NULL) && *count > 0 && *count <= rd_left(r) / min_bytes;
}

/* a string read from the input: its bytes in place, in num (an integer), or in owned (LZF) */
struct rstr {
    const char *p;  /* the bytes */
    size_t n;       /* their length */
    char *owned;    /* a decompressed copy this holds, or NULL */
    char num[24];   /* an integer's decimal form */
};

static void rstr_release(struct rstr *s)
{
    mem_release(s->owned);
    s->owned = NULL;
}

/* Redis rdbGenericLoadStringObject */
static bool rd_string(struct rd *r, struct rstr *s)
{
    uint64_t len;
    bool enc;
    const unsigned char *at;
    s->owned = NULL;
    if (!rd_len(r, &len, &enc))
        return false;
    if (!enc) {
        if (!rd_bytes(r, len, &at))
            return false;
        s->p = (const char *)at;
        s->n = len;
        return true;
    }
    if (len == RDB_ENC_INT8 || len == RDB_ENC_INT16 || len == RDB_ENC_INT32) {
        unsigned k = len == RDB_ENC_INT8 ? 1 : len == RDB_ENC_INT16 ? 2 : 4;
        if (!rd_bytes(r, k, &at))
            return false;
        s->n = (size_t)util_ll_to_str(s->num, sign_extend(get_le(at, k), 8 * k));
        s->p = s->num;
        return true;
    }
    if (len != RDB_ENC_LZF)
        return false;
    uint64_t clen, ulen;
    /* an LZF back-reference (3 bytes) expands to at most 264 bytes */
    if (!rd_len(r, &clen, NULL) || !rd_len(r, &ulen, NULL) || clen == 0 || ulen == 0 ||
        ulen > MAX_STRING_LEN || ulen / 88 > clen || !rd_bytes(r, clen, &at))
        return false;
    s->owned = mem_alloc(ulen);
    if (lzf_decompress(at, (unsigned)clen, s->owned, (unsigned)ulen) != ulen) {
        rstr_release(s);
        return false;
    }
    s->p = s->owned;
    s->n = ulen;
    return true;
}

int rdb_load_function(const void *p, size_t n, size_t *off, char **code, size_t *len)
{
    struct rd r = {.p = p, .n = n, .off = *off};
    if (r.off >= n || r.p[r.off] != RDB_OPCODE_FUNCTION2)
        return -2;
    r.off++;
    struct rstr s;
    if (!rd_string(&r, &s))
        return -1;
    *code = mem_strndup(s.p, s.n);
    *len = s.n;
    rstr_release(&s);
    *off = r.off;
    return 0;
}

/* ---- building the object ---- */

/* receives the elements of a value in order and builds the percore object */
struct sink {
    enum object_type type;       /* what is being built */
    struct object *o;            /* the list, set or hash (NULL until the first element) */
    struct zset *z;              /* the sorted set */
    struct rdb_limits lim;       /* the thresholds it converts at */
    bool half;                   /* a hash field or zset member waits for its value or score */
    char *key;                   /* that field or member (a copy) */
    size_t klen;
    size_t count;                /* elements (pairs) added */
};

static void sink_init(struct sink *k, enum object_type type, const struct rdb_limits *lim)
{
    memset(k, 0, sizeof(*k));
    k->type = type;
    k->lim = *lim;
}

/* a hash or sorted set read from a listpack or ziplist: only the count converts it to a hashtable or
 * skiplist, long values stay in the listpack (Redis 7.0's rdbLoadObject) */
static void sink_init_packed(struct sink *k, enum object_type type, const struct rdb_limits *lim)
{
    sink_init(k, type, lim);
    k->lim.hash.max_value = SIZE_MAX;
    k->lim.zset_max_value = SIZE_MAX;
}

static void sink_destroy(struct sink *k)
{
    object_destroy(&k->o);
    zset_destroy(&k->z);
    mem_release(k->key);
    k->key = NULL;
}

static bool sink_zadd(struct sink *k, const char *m, size_t mn, double score)
{
    int out = 0;
    double newscore;
    if (isnan(score))
        return false;
    if (k->z == NULL)
        k->z = zset_create(ZSET_ENC_LISTPACK);
    zset_add(k->z, score, m, mn, ZADD_IN_NX, &out, &newscore, k->lim.zset_max_entries,
             k->lim.zset_max_value);
    if (!(out & ZADD_OUT_ADDED))
        return false; /* a duplicate member */
    k->count++;
    return true;
}

/* a zset score written as text: a listpack's or ziplist's string, or old ZSET's */
static bool parse_score(const char *p, size_t n, double *d)
{
    char buf[128];
    char *end;
    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, p, n);
    buf[n] = '\0';
    *d = strtod(buf, &end);
    return end == buf + n && !isnan(*d);
}

/* one element: a list element, a set member, a hash field or value, a zset member or score (text) */
static bool sink_add(struct sink *k, const char *p, size_t n)
{
    switch (k->type) {
    case OBJ_LIST:
        if (k->o == NULL)
            k->o = list_object_create();
        list_push(k->o, LIST_TAIL, p, n, k->lim.list_fill);
        k->count++;
        return true;
    case OBJ_SET:
        if (k->o == NULL)
            k->o = set_create_for(p, n, &k->lim.set);
        if (!set_add(k->o, p, n, &k->lim.set))
            return false;
        k->count++;
        return true;
    case OBJ_HASH:
    case OBJ_ZSET:
        if (!k->half) {
            mem_release(k->key);
            k->key = mem_alloc(n ? n : 1);
            memcpy(k->key, p, n);
            k->klen = n;
            k->half = true;
            return true;
        }
        k->half = false;
        if (k->type == OBJ_ZSET) {
            double d;
            return parse_score(p, n, &d) && sink_zadd(k, k->key, k->klen, d);
        }
        if (k->o == NULL)
            k->o = hash_create();
        if (hash_set(k->o, &k->lim.hash, k->key, k->klen, p, n) != 0)
            return false; /* a duplicate field */
        k->count++;
        return true;
    default:
        return false;
    }
}

/* the object built, or NULL (and everything released) when empty or a pair is incomplete */
static struct object *sink_finish(struct sink *k)
{
    struct object *o = NULL;
    if (k->count > 0 && !k->half) {
        if (k->type == OBJ_ZSET) {
            o = object_collection_create(OBJ_ZSET, zset_encoding(k->z), k->z);
            k->z = NULL;
        } else {
            o = k->o;
            k->o = NULL;
        }
    }
    sink_destroy(k);
    return o;
}

/* ---- packed structures: validate whole, then hand each element to the sink ---- */

/* one decoded element of a packed structure */
struct elem {
    const char *p;  /* its bytes */
    size_t n;
    char num[24];   /* an integer's decimal form */
};

static void elem_int(struct elem *e, int64_t v)
{
    e->n = (size_t)util_ll_to_str(e->num, v);
    e->p = e->num;
}

/*
 * Redis listpack entry at p[0..left): its element and its size with the
 * back-length; 0 when the entry is malformed or does not fit.
 */
static size_t lp_entry(const unsigned char *p, size_t left, struct elem *e)
{
    size_t hdr, len;
    unsigned b = p[0];
    if (b < 0x80) {
        elem_int(e, b);
        hdr = 1, len = 0;
    } else if ((b & 0xC0) == 0x80) {
        hdr = 1, len = b & 0x3F;
    } else if ((b & 0xE0) == 0xC0) {
        if (left < 2)
            return 0;
        elem_int(e, sign_extend((uint64_t)(b & 0x1F) << 8 | p[1], 13));
        hdr = 2, len = 0;
    } else if ((b & 0xF0) == 0xE0) {
        if (left < 2)
            return 0;
        hdr = 2, len = (size_t)(b & 0x0F) << 8 | p[1];
    } else if (b == 0xF0) {
        if (left < 5)
            return 0;
        hdr = 5, len = (size_t)get_le(p + 1, 4);
    } else if (b >= 0xF1 && b <= 0xF4) {
        static const unsigned widths[] = {2, 3, 4, 8};
        unsigned k = widths[b - 0xF1];
        if (left < 1 + k)
            return 0;
        elem_int(e, sign_extend(get_le(p + 1, k), 8 * k));
        hdr = 1 + k, len = 0;
    } else {
        return 0;
    }
    if (len > left || hdr + len > left)
        return 0;
    if (len || (b & 0xC0) == 0x80 || (b & 0xF0) == 0xE0 || b == 0xF0) {
        e->p = (const char *)p + hdr;
        e->n = len;
    }
    size_t l = hdr + len;
    unsigned char want[5];
    unsigned bl = lp_backlen(want, l);
    if (left - l < bl || memcmp(p + l, want, bl) != 0)
        return 0;
    return l + bl;
}

/* Redis lpValidateIntegrity (deep): every entry, the count and the size; each element to k */
static bool walk_listpack(const unsigned char *p, size_t n, struct sink *k)
{
    if (n < LP_HDR + 1 || get_le(p, 4) != n || p[n - 1] != LP_EOF)
        return false;
    size_t want = (size_t)get_le(p + 4, 2), count = 0, off = LP_HDR;
    while (off < n - 1) {
        struct elem e;
        size_t sz = lp_entry(p + off, n - 1 - off, &e);
        if (sz == 0 || !sink_add(k, e.p, e.n))
            return false;
        off += sz;
        count++;
    }
    return want == LP_COUNT_UNKNOWN || want == count;
}

/* the prevlen field of a ziplist entry: its size and value; 0 when it does not fit */
static size_t zl_prevlen(const unsigned char *p, size_t left, size_t *prevlen)
{
    if (left < 1 || p[0] == ZL_END)
        return 0;
    if (p[0] < 254) {
        *prevlen = p[0];
        return 1;
    }
    if (left < 5)
        return 0;
    *prevlen = (size_t)get_le(p + 1, 4);
    return 5;
}

/* Redis ziplistValidateIntegrity (deep): entries, prevlens, tail offset, count, size; elements to k */
static bool walk_ziplist(const unsigned char *p, size_t n, struct sink *k)
{
    if (n < ZL_HDR + 1 || get_le(p, 4) != n || p[n - 1] != ZL_END)
        return false;
    size_t tail = (size_t)get_le(p + 4, 4), want = (size_t)get_le(p + 8, 2);
    size_t off = ZL_HDR, prev_size = 0, last = ZL_HDR, count = 0;
    while (off < n - 1) {
        size_t left = n - 1 - off, prevlen, hdr, len = 0;
        size_t pl = zl_prevlen(p + off, left, &prevlen);
        struct elem e;
        if (pl == 0 || prevlen != prev_size || pl >= left)
            return false;
        const unsigned char *q = p + off + pl;
        left -= pl;
        unsigned b = q[0];
        if ((b & 0xC0) == 0x00) {
            hdr = 1, len = b & 0x3F;
        } else if ((b & 0xC0) == 0x40) {
            if (left < 2)
                return false;
            hdr = 2, len = (size_t)(b & 0x3F) << 8 | q[1];
        } else if (b == 0x80) {
            if (left < 5)
                return false;
            hdr = 5, len = (size_t)q[1] << 24 | (size_t)q[2] << 16 | (size_t)q[3] << 8 | q[4];
        } else {
            unsigned w;
            switch (b) {
            case 0xC0: w = 2; break;
            case 0xD0: w = 4; break;
            case 0xE0: w = 8; break;
            case 0xF0: w = 3; break;
            case 0xFE: w = 1; break;
            default:
                if (b < 0xF1 || b > 0xFD)
                    return false;
                w = 0;
            }
            hdr = 1 + w;
            if (left < hdr)
                return false;
            elem_int(&e, w ? sign_extend(get_le(q + 1, w), 8 * w) : (int64_t)(b & 0x0F) - 1);
        }
        if (b < 0xC0) {
            if (len > left || hdr + len > left)
                return false;
            e.p = (const char *)q + hdr;
            e.n = len;
        }
        if (!sink_add(k, e.p, e.n))
            return false;
        last = off;
        prev_size = pl + hdr + len;
        off += prev_size;
        count++;
    }
    if (off != n - 1 || tail != last)
        return false;
    return want == UINT16_MAX || want == count;
}

/* Redis zipmapValidateIntegrity (deep): a length field at p[0..left) */
static size_t zm_len(const unsigned char *p, size_t left, size_t *len)
{
    if (left < 1 || p[0] == ZIPMAP_END)
        return 0;
    if (p[0] < ZIPMAP_BIGLEN) {
        *len = p[0];
        return 1;
    }
    if (left < 5)
        return 0;
    *len = (size_t)get_le(p + 1, 4);
    return 5;
}

/* zipmap: <count><len>field<len><free>value[free bytes]...<end>; pairs to k */
static bool walk_zipmap(const unsigned char *p, size_t n, struct sink *k)
{
    if (n < 2 || p[n - 1] != ZIPMAP_END)
        return false;
    size_t off = 1, count = 0;
    while (off < n - 1) {
        size_t left = n - 1 - off, fl, vl, s;
        if ((s = zm_len(p + off, left, &fl)) == 0 || fl > left - s)
            return false;
        const unsigned char *f = p + off + s;
        off += s + fl;
        left = n - 1 - off;
        if ((s = zm_len(p + off, left, &vl)) == 0 || left - s < 1)
            return false;
        size_t free_bytes = p[off + s];
        off += s + 1;
        left = n - 1 - off;
        if (vl > left || free_bytes > left - vl)
            return false;
        if (!sink_add(k, (const char *)f, fl) || !sink_add(k, (const char *)p + off, vl))
            return false;
        off += vl + free_bytes;
        count++;
    }
    return count > 0 && (p[0] == ZIPMAP_BIGLEN || p[0] == count);
}

/* Redis intsetValidateIntegrity (deep): width 2/4/8, a non-empty count matching the size, strictly
 * ascending; members to k */
static bool walk_intset(const unsigned char *p, size_t n, struct sink *k)
{
    if (n < 8)
        return false;
    uint64_t width = get_le(p, 4), count = get_le(p + 4, 4);
    if ((width != 2 && width != 4 && width != 8) || count == 0 || (n - 8) / width != count ||
        (n - 8) % width != 0)
        return false;
    int64_t prev = 0;
    for (uint64_t i = 0; i < count; i++) {
        int64_t v = sign_extend(get_le(p + 8 + i * width, (unsigned)width), 8 * (unsigned)width);
        if (i > 0 && v <= prev)
            return false;
        prev = v;
        struct elem e;
        elem_int(&e, v);
        if (!sink_add(k, e.p, e.n))
            return false;
    }
    return true;
}

typedef bool walk_fn(const unsigned char *p, size_t n, struct sink *k);

/* a packed structure stored as one RDB string */
static bool load_packed(struct rd *r, walk_fn *walk, struct sink *k)
{
    struct rstr s;
    if (!rd_string(r, &s))
        return false;
    bool ok = walk((const unsigned char *)s.p, s.n, k);
    rstr_release(&s);
    return ok;
}

/* `count` strings (pairs when the sink wants them, as its element stream) */
static bool load_strings(struct rd *r, uint64_t count, struct sink *k)
{
    for (uint64_t i = 0; i < count; i++) {
        struct rstr s;
        if (!rd_string(r, &s))
            return false;
        bool ok = sink_add(k, s.p, s.n);
        rstr_release(&s);
        if (!ok)
            return false;
    }
    return true;
}

/* Redis rdbLoadDoubleValue: RDB_TYPE_ZSET's text score */
static bool rd_text_double(struct rd *r, double *d)
{
    const unsigned char *b, *at;
    if (!rd_bytes(r, 1, &b))
        return false;
    switch (b[0]) {
    case 255: *d = -INFINITY; return true;
    case 254: *d = INFINITY; return true;
    case 253: return false; /* NaN: no sorted set holds it */
    default:
        return rd_bytes(r, b[0], &at) && parse_score((const char *)at, b[0], d);
    }
}

static bool load_zset_plain(struct rd *r, bool binary, struct sink *k)
{
    uint64_t count;
    if (!rd_count(r, &count, binary ? 9 : 2))
        return false;
    for (uint64_t i = 0; i < count; i++) {
        struct rstr s;
        double d;
        const unsigned char *at;
        if (!rd_string(r, &s))
            return false;
        bool ok;
        if (binary) {
            ok = rd_bytes(r, 8, &at);
            if (ok) {
                uint64_t bits = get_le(at, 8);
                memcpy(&d, &bits, sizeof(d));
            }
        } else {
            ok = rd_text_double(r, &d);
        }
        ok = ok && sink_zadd(k, s.p, s.n, d);
        rstr_release(&s);
        if (!ok)
            return false;
    }
    return true;
}

static bool load_quicklist(struct rd *r, bool v2, struct sink *k)
{
    uint64_t nodes;
    if (!rd_count(r, &nodes, v2 ? 2 : 1))
        return false;
    for (uint64_t i = 0; i < nodes; i++) {
        uint64_t container = QUICKLIST_NODE_PACKED;
        if (v2 && (!rd_len(r, &container, NULL) ||
                   (container != QUICKLIST_NODE_PACKED && container != QUICKLIST_NODE_PLAIN)))
            return false;
        if (container == QUICKLIST_NODE_PLAIN) {
            if (!load_strings(r, 1, k))
                return false;
        } else if (!load_packed(r, v2 ? walk_listpack : walk_ziplist, k)) {
            return false;
        }
    }
    return true;
}

static bool load_body(struct rd *r, unsigned type, unsigned version, struct sink *k,
                      const struct rdb_limits *lim)
{
    uint64_t count;
    switch (type) {
    case RDB_TYPE_LIST:
        sink_init(k, OBJ_LIST, lim);
        return rd_count(r, &count, 1) && load_strings(r, count, k);
    case RDB_TYPE_SET:
        sink_init(k, OBJ_SET, lim);
        return rd_count(r, &count, 1) && load_strings(r, count, k);
    case RDB_TYPE_HASH:
        sink_init(k, OBJ_HASH, lim);
        return rd_count(r, &count, 2) && count <= UINT64_MAX / 2 && load_strings(r, count * 2, k);
    case RDB_TYPE_ZSET:
    case RDB_TYPE_ZSET_2:
        sink_init(k, OBJ_ZSET, lim);
        return load_zset_plain(r, type == RDB_TYPE_ZSET_2, k);
    case RDB_TYPE_HASH_ZIPMAP:
        sink_init(k, OBJ_HASH, lim);
        return load_packed(r, walk_zipmap, k);
    case RDB_TYPE_LIST_ZIPLIST:
        sink_init(k, OBJ_LIST, lim);
        return load_packed(r, walk_ziplist, k);
    case RDB_TYPE_SET_INTSET:
        sink_init(k, OBJ_SET, lim);
        return load_packed(r, walk_intset, k);
    case RDB_TYPE_ZSET_ZIPLIST:
        sink_init_packed(k, OBJ_ZSET, lim);
        return load_packed(r, walk_ziplist, k);
    case RDB_TYPE_HASH_ZIPLIST:
        sink_init_packed(k, OBJ_HASH, lim);
        return load_packed(r, walk_ziplist, k);
    case RDB_TYPE_LIST_QUICKLIST:
    case RDB_TYPE_LIST_QUICKLIST_2:
        sink_init(k, OBJ_LIST, lim);
        return load_quicklist(r, type == RDB_TYPE_LIST_QUICKLIST_2, k);
    case RDB_TYPE_HASH_LISTPACK:
        sink_init_packed(k, OBJ_HASH, lim);
        return load_packed(r, walk_listpack, k);
    case RDB_TYPE_ZSET_LISTPACK:
        sink_init_packed(k, OBJ_ZSET, lim);
        return load_packed(r, walk_listpack, k);
    case RDB_TYPE_SET_LISTPACK:
        sink_init(k, OBJ_SET, lim);
        return version >= 11 && load_packed(r, walk_listpack, k);
    default:
        sink_init(k, OBJ_STRING, lim);
        return false; /* streams, modules, unknown types */
    }
}

/* a Redis listpack read element by element (its header and end checked first) */
struct lpr {
    const unsigned char *p; /* the listpack */
    size_t n;               /* its bytes */
    size_t off;             /* the next element */
    size_t count;           /* elements read */
};

static bool lpr_init(struct lpr *l, const char *p, size_t n)
{
    l->p = (const unsigned char *)p;
    l->n = n;
    l->off = LP_HDR;
    l->count = 0;
    return n >= LP_HDR + 1 && get_le(l->p, 4) == n && l->p[n - 1] == LP_EOF;
}

static bool lpr_done(const struct lpr *l)
{
    return l->off >= l->n - 1;
}

/* the next element into *e (its bytes may be e's own: an integer) */
static bool lpr_next(struct lpr *l, struct elem *e)
{
    size_t sz = lpr_done(l) ? 0 : lp_entry(l->p + l->off, l->n - 1 - l->off, e);
    l->off += sz;
    l->count++;
    return sz != 0;
}

static bool lpr_int(struct lpr *l, int64_t *v)
{
    struct elem e;
    long long ll;
    if (!lpr_next(l, &e) || !util_str_to_ll(e.p, e.n, &ll))
        return false;
    *v = ll;
    return true;
}

/* the next element as a string whose bytes stay valid while *e does (an integer's are e's own) */
static bool lpr_str(struct lpr *l, struct elem *e, struct stream_str *str)
{
    if (!lpr_next(l, e))
        return false;
    str->p = e->p;
    str->n = e->n;
    return true;
}

/* the entries of one node's listpack into s (Redis's layout, see save_stream_node), counts checked */
static bool load_stream_node(struct stream *s, const struct stream_id *master, const struct rstr *lp)
{
    struct lpr l;
    int64_t live, deleted, nmaster, zero;
    bool ok = false;
    if (!lpr_init(&l, lp->p, lp->n) || !lpr_int(&l, &live) || !lpr_int(&l, &deleted) || !lpr_int(&l, &nmaster) ||
        nmaster <= 0 || live < 0 || deleted < 0 || (size_t)nmaster > lp->n)
        return false;
    struct elem *elems = mem_alloc(2 * (size_t)nmaster * sizeof *elems);
    struct stream_str *strs = mem_alloc(2 * (size_t)nmaster * sizeof *strs);
    struct elem *melems = mem_alloc((size_t)nmaster * sizeof *melems);
    struct stream_str *mstrs = mem_alloc((size_t)nmaster * sizeof *mstrs);
    size_t cap = (size_t)nmaster;
    int64_t seen_live = 0, seen_deleted = 0;
    for (int64_t i = 0; i < nmaster; i++)
        if (!lpr_str(&l, &melems[i], &mstrs[i]))
            goto done;
    if (!lpr_int(&l, &zero) || zero != 0)
        goto done;
    stream_load_node(s, master);
    while (!lpr_done(&l)) {
        int64_t flags, dms, dseq, nfields = nmaster, count;
        if (!lpr_int(&l, &flags) || !lpr_int(&l, &dms) || !lpr_int(&l, &dseq) ||
            (flags & ~(STREAM_ITEM_FLAG_DELETED | STREAM_ITEM_FLAG_SAMEFIELDS)))
            goto done;
        bool same = flags & STREAM_ITEM_FLAG_SAMEFIELDS;
        if (!same && (!lpr_int(&l, &nfields) || nfields <= 0 || (size_t)nfields > lp->n))
            goto done;
        if ((size_t)nfields > cap) {
            cap = (size_t)nfields;
            elems = mem_realloc(elems, 2 * cap * sizeof *elems);
            strs = mem_realloc(strs, 2 * cap * sizeof *strs);
        }
        for (int64_t i = 0; i < nfields; i++) {
            if (same)
                strs[2 * i] = mstrs[i];
            else if (!lpr_str(&l, &elems[2 * i], &strs[2 * i]))
                goto done;
            if (!lpr_str(&l, &elems[2 * i + 1], &strs[2 * i + 1]))
                goto done;
        }
        struct stream_id id = {master->ms + (uint64_t)dms, master->seq + (uint64_t)dseq};
        bool gone = flags & STREAM_ITEM_FLAG_DELETED;
        if (!lpr_int(&l, &count) || count != (same ? nfields + 3 : 2 * nfields + 4) ||
            !stream_load_entry(s, &id, gone, (size_t)nfields, strs))
            goto done;
        seen_live += !gone;
        seen_deleted += gone;
    }
    ok = seen_live == live && seen_deleted == deleted &&
         (get_le(l.p + 4, 2) == LP_COUNT_UNKNOWN || get_le(l.p + 4, 2) == l.count);
done:
    mem_release(elems);
    mem_release(strs);
    mem_release(melems);
    mem_release(mstrs);
    return ok;
}

/* a 16-byte big-endian stream ID written raw */
static bool rd_stream_id(struct rd *r, struct stream_id *id)
{
    const unsigned char *at;
    if (!rd_bytes(r, 16, &at))
        return false;
    id->ms = get_be(at, 8);
    id->seq = get_be(at + 8, 8);
    return true;
}

/* one consumer group (save_stream_groups; _3 adds each consumer's active time), its PEL owned throughout */
static bool load_stream_group(struct rd *r, struct stream *s, unsigned type)
{
    struct rstr name;
    uint64_t ms = 0, seq = 0, entries_read, npel, nconsumers;
    const unsigned char *at;
    if (!rd_string(r, &name))
        return false;
    bool ok = rd_len(r, &ms, NULL) && rd_len(r, &seq, NULL);
    struct stream_id last = {ms, seq};
    if (ok && type == RDB_TYPE_STREAM_LISTPACKS)
        entries_read = (uint64_t)stream_estimate_entries_read(s, &last);
    else
        ok = ok && rd_len(r, &entries_read, NULL);
    struct stream_group *g = ok ? stream_group_create(s, name.p, name.n, &last, (long long)entries_read) : NULL;
    rstr_release(&name);
    ok = g && rd_len(r, &npel, NULL) && npel <= rd_left(r) / 25;
    for (uint64_t i = 0; ok && i < npel; i++) {
        struct stream_id id;
        uint64_t count;
        ok = rd_stream_id(r, &id) && rd_bytes(r, 8, &at) && rd_len(r, &count, NULL) &&
             stream_nack_load(g, &id, (long long)get_le(at, 8), count);
    }
    ok = ok && rd_len(r, &nconsumers, NULL) && nconsumers <= rd_left(r) / 10;
    for (uint64_t i = 0; ok && i < nconsumers; i++) {
        struct rstr cname;
        uint64_t owned;
        if (!rd_string(r, &cname))
            return false;
        struct stream_consumer *c = NULL;
        if (rd_bytes(r, 8, &at))
            c = stream_consumer_create(g, cname.p, cname.n, (long long)get_le(at, 8));
        rstr_release(&cname);
        ok = c && (type != RDB_TYPE_STREAM_LISTPACKS_3 || rd_bytes(r, 8, &at)) && rd_len(r, &owned, NULL) &&
             owned <= rd_left(r) / 16;
        for (uint64_t j = 0; ok && j < owned; j++) {
            struct stream_id id;
            ok = rd_stream_id(r, &id) && stream_nack_load_owner(g, c, &id);
        }
    }
    return ok && stream_group_loaded(g);
}

/* RDB_TYPE_STREAM_LISTPACKS (Redis 5 to 6.2), _2 (7.0) and _3 (7.2), consumer groups included */
static struct object *load_stream(struct rd *r, unsigned type)
{
    struct object *o = stream_object_create();
    struct stream *s = stream_of(o);
    uint64_t nodes, length, meta[7] = {0}, groups;
    size_t nmeta = type == RDB_TYPE_STREAM_LISTPACKS ? 2 : 7;
    bool ok = rd_len(r, &nodes, NULL) && nodes <= rd_left(r) / 2;
    for (uint64_t i = 0; ok && i < nodes; i++) {
        struct rstr key, lp;
        struct stream_id master;
        ok = rd_string(r, &key);
        if (!ok)
            break;
        ok = key.n == 16;
        if (ok) {
            master.ms = get_be((const unsigned char *)key.p, 8);
            master.seq = get_be((const unsigned char *)key.p + 8, 8);
        }
        rstr_release(&key);
        ok = ok && rd_string(r, &lp);
        if (!ok)
            break;
        ok = load_stream_node(s, &master, &lp);
        rstr_release(&lp);
    }
    ok = ok && rd_len(r, &length, NULL);
    for (size_t i = 0; ok && i < nmeta; i++)
        ok = rd_len(r, &meta[i], NULL);
    ok = ok && rd_len(r, &groups, NULL);
    if (ok) {
        struct stream_id last = {meta[0], meta[1]}, max_deleted = {meta[4], meta[5]};
        /* a Redis 6.2 stream counts what it holds as added (Redis's own upgrade) */
        ok = stream_load_finish(s, length, &last, &max_deleted, nmeta == 2 ? length : meta[6]);
    }
    for (uint64_t i = 0; ok && i < groups; i++)
        ok = load_stream_group(r, s, type);
    if (!ok)
        object_destroy(&o);
    return o;
}

/* a value of RDB type `type` (its type byte read already) */
static struct object *load_object(struct rd *r, unsigned type, unsigned version, const struct rdb_limits *lim)
{
    struct object *o = NULL;
    if (type == RDB_TYPE_STRING) {
        struct rstr s;
        if (!rd_string(r, &s))
            return NULL;
        o = object_string_create(s.p, s.n);
        rstr_release(&s);
    } else if (type == RDB_TYPE_STREAM_LISTPACKS || type == RDB_TYPE_STREAM_LISTPACKS_2 ||
               type == RDB_TYPE_STREAM_LISTPACKS_3) {
        o = version >= (type == RDB_TYPE_STREAM_LISTPACKS ? 9u : type == RDB_TYPE_STREAM_LISTPACKS_2 ? 10u : 11u)
                ? load_stream(r, type)
                : NULL;
    } else {
        struct sink k;
        if (load_body(r, type, version, &k, lim))
            o = sink_finish(&k);
        else
            sink_destroy(&k);
    }
    return o;
}

struct object *rdb_load_value(const void *p, size_t n, unsigned version, const struct rdb_limits *lim,
                              size_t *used)
{
    struct rd r = {p, n, 0};
    const unsigned char *t;
    if (version > RDB_VERSION_MAX || !rd_bytes(&r, 1, &t))
        return NULL;
    struct object *o = load_object(&r, t[0], version, lim);
    if (o && used)
        *used = r.off;
    return o;
}

/* ---- whole files ---- */

static int load_fail(char *err, size_t cap, const char *what, size_t off)
{
    snprintf(err, cap, "%s at offset %zu", what, off);
    return -1;
}

/* the AUX fields Redis logs (rdbLoadRioWithLoadingCtx: redis-ver, ctime, used-mem) into info */
static void aux_note(struct rdb_file_info *info, const struct rstr *name, const struct rstr *val)
{
    long long v;
    if (name->n == 9 && memcmp(name->p, "redis-ver", 9) == 0) {
        size_t n = val->n < sizeof(info->redis_ver) - 1 ? val->n : sizeof(info->redis_ver) - 1;
        memcpy(info->redis_ver, val->p, n);
        info->redis_ver[n] = '\0';
    } else if (name->n == 5 && memcmp(name->p, "ctime", 5) == 0 && util_str_to_ll(val->p, val->n, &v)) {
        info->ctime = v;
    } else if (name->n == 8 && memcmp(name->p, "used-mem", 8) == 0 && util_str_to_ll(val->p, val->n, &v)) {
        info->used_mem = v;
    }
}

int rdb_file_load(const void *p, size_t n, const struct rdb_limits *lim, rdb_file_fn *fn, rdb_function_fn *ffn,
                  void *arg, struct rdb_file_info *info, char *err, size_t errcap)
{
    struct rd r = {p, n, 0};
    const unsigned char *at;
    memset(info, 0, sizeof(*info));
    info->ctime = info->used_mem = -1;
    if (!rd_bytes(&r, 9, &at) || memcmp(at, "REDIS", 5) != 0)
        return load_fail(err, errcap, "Wrong signature trying to load DB from file", 0);
    unsigned version = 0;
    for (int i = 5; i < 9; i++) {
        if (at[i] < '0' || at[i] > '9')
            return load_fail(err, errcap, "Wrong signature trying to load DB from file", 0);
        version = version * 10 + (unsigned)(at[i] - '0');
    }
    if (version < 1 || version > RDB_VERSION_MAX) {
        snprintf(err, errcap, "Can't handle RDB format version %u", version);
        return -1;
    }
    info->version = version;
    struct rdb_file_key k = {.expire = -1, .idle_s = -1, .freq = -1};
    for (;;) {
        const unsigned char *t;
        uint64_t v, v2;
        if (!rd_bytes(&r, 1, &t))
            return load_fail(err, errcap, "Unexpected EOF reading RDB file", r.off);
        switch (t[0]) {
        case RDB_OPCODE_EXPIRETIME:
            if (!rd_bytes(&r, 4, &at))
                return load_fail(err, errcap, "Unexpected EOF reading RDB file", r.off);
            k.expire = (int64_t)(int32_t)get_le(at, 4) * 1000;
            continue;
        case RDB_OPCODE_EXPIRETIME_MS:
            if (!rd_bytes(&r, 8, &at))
                return load_fail(err, errcap, "Unexpected EOF reading RDB file", r.off);
            k.expire = (int64_t)get_le(at, 8);
            continue;
        case RDB_OPCODE_FREQ:
            if (!rd_bytes(&r, 1, &at))
                return load_fail(err, errcap, "Unexpected EOF reading RDB file", r.off);
            k.freq = at[0];
            continue;
        case RDB_OPCODE_IDLE:
            if (!rd_len(&r, &v, NULL) || v > (uint64_t)LLONG_MAX)
                return load_fail(err, errcap, "Bad LRU idle time in RDB file", r.off);
            k.idle_s = (long long)v;
            continue;
        case RDB_OPCODE_SELECTDB:
            if (!rd_len(&r, &v, NULL) || v > INT_MAX)
                return load_fail(err, errcap, "Bad database number in RDB file", r.off);
            k.db = (int)v;
            continue;
        case RDB_OPCODE_RESIZEDB:
            if (!rd_len(&r, &v, NULL) || !rd_len(&r, &v2, NULL))
                return load_fail(err, errcap, "Unexpected EOF reading RDB file", r.off);
            continue;
        case RDB_OPCODE_AUX: {
            struct rstr a, b;
            if (!rd_string(&r, &a))
                return load_fail(err, errcap, "Bad AUX field in RDB file", r.off);
            if (!rd_string(&r, &b)) {
                rstr_release(&a);
                return load_fail(err, errcap, "Bad AUX field in RDB file", r.off);
            }
            aux_note(info, &a, &b);
            rstr_release(&a);
            rstr_release(&b);
            continue;
        }
        case RDB_OPCODE_MODULE_AUX:
            return load_fail(err, errcap, "The RDB file contains AUX module data this server cannot load", r.off);
        case RDB_OPCODE_FUNCTION2:
        case RDB_OPCODE_FUNCTION_PRE_GA: {
            struct rstr f;
            if (t[0] == RDB_OPCODE_FUNCTION_PRE_GA || !rd_string(&r, &f))
                return load_fail(err, errcap, "The RDB file contains functions this server cannot load", r.off);
            int rc = ffn ? ffn(arg, f.p, f.n) : 0;
            rstr_release(&f);
            if (rc < 0)
                return load_fail(err, errcap, "Failed loading library", r.off);
            info->functions_skipped += !ffn;
            continue;
        }
        case RDB_OPCODE_EOF: {
            info->used = r.off;
            if (version < 5)
                return 0;
            size_t end = r.off;
            if (!rd_bytes(&r, 8, &at))
                return load_fail(err, errcap, "Unexpected EOF reading RDB file", r.off);
            uint64_t want = get_le(at, 8);
            if (want != 0 && crc64(0, p, end) != want)
                return load_fail(err, errcap, "Wrong RDB checksum", end);
            info->used = r.off;
            return 0;
        }
        default: {
            struct rstr key;
            if (!rd_string(&r, &key))
                return load_fail(err, errcap, "Bad key in RDB file", r.off);
            struct object *o = load_object(&r, t[0], version, lim);
            if (!o) {
                rstr_release(&key);
                return load_fail(err, errcap, "Bad value in RDB file", r.off);
            }
            k.key = key.p;
            k.klen = key.n;
            k.val = o;
            k.offset = r.off;
            info->keys++;
            int rc = fn(arg, &k);
            rstr_release(&key);
            if (rc < 0)
                return load_fail(err, errcap, "Database index out of range in RDB file", r.off);
            k.expire = -1;
            k.idle_s = -1;
            k.freq = -1;
            continue;
        }
        }
    }
}
