/*
 * test_rdb: Redis's RDB value format.  The CRC-64 check value; DUMP
 * payloads' footer (version, checksum); round trips of every type and
 * encoding, at the conversion thresholds and one past them (the loaded
 * object's encoding is percore's for its size, its DUMP the original's);
 * known bytes of Redis 7.0's encodings; hand-built payloads in the old
 * encodings (zipmap, ziplist list/hash/zset, intset, quicklist of
 * ziplists, plain LIST/SET/ZSET/HASH, 7.2's set listpack) with their
 * expected contents; and corrupt input refused: every truncation of every
 * payload, byte flips, duplicates, bad listpack/ziplist/intset framing,
 * empty collections, unknown types.  Whole files: the writer's bytes
 * (magic, AUX fields, SELECTDB/RESIZEDB, EXPIRETIME_MS, key records, EOF
 * and CRC64) read back key by key; old versions' opcodes (EXPIRETIME in
 * seconds, no checksum before version 5, IDLE, FREQ, FUNCTION2 skipped,
 * MODULE_AUX refused); a zero checksum unchecked; every truncation and a
 * flipped byte refused; a key the caller refuses fails the load.
 * Streams: Redis 7.0's bytes for a known stream (master entry, SAMEFIELDS,
 * integer fields, a deleted entry, XSETID's metadata), the same read as
 * types 21 (7.2) and 15 (6.2, its metadata derived), a stream with
 * consumer groups refused, truncations and flips; the cross-shard
 * serialized form round trips and refuses its truncations.
 */
#include "percore/rdb.h"

#include "percore/crc64.h"
#include "percore/hash.h"
#include "percore/list.h"
#include "percore/mem.h"
#include "percore/set.h"
#include "percore/stream.h"
#include "percore/zset.h"

#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct rdb_limits LIM = {
    .hash = {128, 64},
    .set = {512, 128, 64},
    .zset_max_entries = 128,
    .zset_max_value = 64,
    .list_fill = -2,
};
static const struct rdb_save_opts OPTS = {true, -2, 0, false};

/* ---- helpers ---- */

static struct rdb_buf value_of(const struct object *o, const struct rdb_save_opts *opts)
{
    struct rdb_buf b = {0};
    rdb_save_value(&b, o, opts);
    return b;
}

static struct object *load(const void *p, size_t n, unsigned version)
{
    size_t used = 0;
    struct object *o = rdb_load_value(p, n, version, &LIM, &used);
    if (o)
        CHECK_EQ_LL(used, n);
    return o;
}

/* a loaded copy of o, whose own value bytes must be o's when `same_bytes` */
static struct object *round_trip(const struct object *o, bool same_bytes)
{
    struct rdb_buf b = value_of(o, &OPTS);
    struct object *c = load(b.p, b.len, RDB_VERSION);
    CHECK(c != NULL);
    if (c && same_bytes) {
        struct rdb_buf b2 = value_of(c, &OPTS);
        CHECK(b2.len == b.len && memcmp(b2.p, b.p, b.len) == 0);
        rdb_buf_release(&b2);
    }
    rdb_buf_release(&b);
    return c;
}

/* every truncation of the value is refused, and no single byte changed makes the reader misbehave */
static void abuse(const char *p, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        struct object *o = rdb_load_value(p, k, RDB_VERSION_MAX, &LIM, NULL);
        CHECK(o == NULL);
        object_destroy(&o);
    }
    char *m = mem_alloc(n);
    for (size_t i = 0; i < n; i++) {
        static const unsigned char flips[] = {0x00, 0xff, 0x7f, 0x80, 0x01, 0xfe, 0x40, 0xc0};
        for (size_t f = 0; f < sizeof(flips); f++) {
            memcpy(m, p, n);
            m[i] = (char)flips[f];
            struct object *o = rdb_load_value(m, n, RDB_VERSION_MAX, &LIM, NULL);
            object_destroy(&o);
        }
    }
    mem_release(m);
}

static const char *enc(const struct object *o)
{
    return object_encoding_name(o);
}

/* ---- crc64 and the DUMP footer ---- */

static void test_crc64(void)
{
    CHECK(crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9caULL);
    CHECK(crc64(0, "", 0) == 0);
    /* continued over two halves: the same as at once */
    CHECK(crc64(crc64(0, "1234", 4), "56789", 5) == 0xe9c6d914c4b8d9caULL);
}

static void test_payload(void)
{
    struct object *o = object_string_create("hello", 5);
    struct rdb_buf b = {0};
    rdb_dump_payload(&b, o, &OPTS);
    /* Redis 7.0.15's DUMP of "hello" */
    CHECK_MEM(b.p, b.len, "\x00\x05hello\x0a\x00\x63\x72\xdf\x76\x65\x34\x20\x0a");
    unsigned version = 0;
    CHECK(rdb_verify_payload(b.p, b.len, &version) == 0);
    CHECK_EQ_LL(version, 10);
    b.p[1] ^= 1;
    CHECK(rdb_verify_payload(b.p, b.len, &version) != 0);
    b.p[1] ^= 1;
    b.p[b.len - 10] = 11; /* version 11: newer than 7.0's */
    CHECK(rdb_verify_payload(b.p, b.len, &version) != 0);
    CHECK(rdb_verify_payload(b.p, 9, &version) != 0);
    CHECK(rdb_verify_payload("", 0, &version) != 0);
    rdb_buf_release(&b);
    object_destroy(&o);
}

/* ---- strings ---- */

static void check_string(const char *s, size_t n, const char *want, size_t want_len, bool compress)
{
    struct object *o = object_string_create(s, n);
    struct rdb_save_opts opts = {compress, -2, 0, false};
    struct rdb_buf b = value_of(o, &opts);
    CHECK(b.len == want_len && memcmp(b.p, want, want_len) == 0);
    struct object *c = load(b.p, b.len, RDB_VERSION);
    CHECK(c != NULL);
    if (c) {
        size_t len;
        const char *p = object_string_ptr(c, &len);
        CHECK(len == n && memcmp(p, s, n) == 0);
        CHECK(strcmp(enc(c), enc(o)) == 0);
    }
    abuse(b.p, b.len);
    object_destroy(&c);
    object_destroy(&o);
    rdb_buf_release(&b);
}

static void test_strings(void)
{
    check_string("12", 2, "\x00\xc0\x0c", 3, true);
    check_string("-129", 4, "\x00\xc1\x7f\xff", 4, true);
    check_string("2147483647", 10, "\x00\xc2\xff\xff\xff\x7f", 6, true);
    check_string("2147483648", 10, "\x00\x0a" "2147483648", 12, true);
    check_string("0123", 4, "\x00\x04" "0123", 6, true);
    check_string("", 0, "\x00\x00", 2, true);
    /* 20 bytes: never compressed; 21: compressed when LZF gains 4 bytes */
    check_string("aaaaaaaaaaaaaaaaaaaa", 20, "\x00\x14" "aaaaaaaaaaaaaaaaaaaa", 22, true);
    check_string("aaaaaaaaaaaaaaaaaaaaa", 21, "\x00\xc3\x06\x15\x01" "aa\xe0\x0a\x00", 10, true); /* Redis 7.0.15 DUMP */
    check_string("aaaaaaaaaaaaaaaaaaaaa", 21, "\x00\x15" "aaaaaaaaaaaaaaaaaaaaa", 23, false);

    /* a long string: 14-bit length, LZF both ways */
    char big[5000];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (char)('a' + i % 7);
    struct object *o = object_string_create(big, sizeof(big));
    struct object *c = round_trip(o, true);
    size_t len;
    const char *p = c ? object_string_ptr(c, &len) : NULL;
    CHECK(p && len == sizeof(big) && memcmp(p, big, len) == 0);
    object_destroy(&c);
    object_destroy(&o);
}

/* ---- lists ---- */

static struct object *list_of(size_t n, size_t width)
{
    struct object *o = list_object_create();
    char *buf = mem_alloc(width + 32);
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(buf, 32, "%zu", i * 7919);
        while ((size_t)k < width)
            buf[k++] = 'x';
        list_push(o, LIST_TAIL, buf, (size_t)k, -2);
    }
    mem_release(buf);
    return o;
}

static void check_lists_equal(struct object *a, struct object *b)
{
    CHECK_EQ_LL(list_length(a), list_length(b));
    struct list_iter ia, ib;
    const char *pa, *pb;
    size_t na, nb;
    bool same = true;
    list_iter_init(&ia, a, 0, true);
    list_iter_init(&ib, b, 0, true);
    while (list_iter_next(&ia, &pa, &na)) {
        if (!list_iter_next(&ib, &pb, &nb) || na != nb || memcmp(pa, pb, na) != 0)
            same = false;
    }
    list_iter_finish(&ia, -2);
    list_iter_finish(&ib, -2);
    CHECK(same);
}

static void test_lists(void)
{
    /* Redis 7.0.15's DUMP value of RPUSH l a b 1 */
    struct object *o = list_object_create();
    list_push(o, LIST_TAIL, "a", 1, -2);
    list_push(o, LIST_TAIL, "b", 1, -2);
    list_push(o, LIST_TAIL, "1", 1, -2);
    struct rdb_buf b = value_of(o, &OPTS);
    CHECK_MEM(b.p, b.len, "\x12\x01\x02\x0f\x0f\x00\x00\x00\x03\x00\x81\x61\x02\x81\x62\x02\x01\x01\xff");
    abuse(b.p, b.len);
    rdb_buf_release(&b);
    object_destroy(&o);

    /* many nodes (8 KB each), long elements, compressed inner nodes */
    size_t sizes[][2] = {{1, 1}, {600, 1}, {5000, 3}, {300, 200}, {40, 5000}};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        o = list_of(sizes[i][0], sizes[i][1]);
        struct object *c = round_trip(o, true);
        if (c)
            check_lists_equal(o, c);
        object_destroy(&c);
        struct rdb_save_opts deep = {true, -2, 1, false};
        b = value_of(o, &deep);
        c = load(b.p, b.len, RDB_VERSION);
        CHECK(c != NULL);
        if (c)
            check_lists_equal(o, c);
        object_destroy(&c);
        rdb_buf_release(&b);
        object_destroy(&o);
    }
    /* fill 4: nodes of 4 elements */
    o = list_of(10, 1);
    struct rdb_save_opts four = {false, 4, 0, false};
    b = value_of(o, &four);
    CHECK(b.len > 2 && b.p[1] == 3); /* 3 nodes */
    rdb_buf_release(&b);
    object_destroy(&o);
}

/* ---- sets ---- */

static struct object *set_of(size_t n, bool ints)
{
    struct object *o = NULL;
    char buf[32];
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(buf, sizeof(buf), ints ? "%zu" : "m%zu", i * 3);
        if (o == NULL)
            o = set_create_for(buf, (size_t)k, &LIM.set);
        set_add(o, buf, (size_t)k, &LIM.set);
    }
    return o;
}

static void check_sets_equal(struct object *a, struct object *b)
{
    CHECK_EQ_LL(set_size(a), set_size(b));
    struct set_iter it;
    struct set_member m;
    bool all = true;
    set_iter_init(&it, a);
    while (set_iter_next(&it, &m))
        all = all && set_has_member(b, &m);
    CHECK(all);
}

static void test_sets(void)
{
    struct object *o = set_of(3, true);
    struct rdb_buf b = value_of(o, &OPTS);
    /* SADD s 0 3 6 in Redis: an int16 intset */
    CHECK_MEM(b.p, b.len, "\x0b\x0e\x02\x00\x00\x00\x03\x00\x00\x00\x00\x00\x03\x00\x06\x00");
    abuse(b.p, b.len);
    rdb_buf_release(&b);
    object_destroy(&o);

    struct { size_t n; bool ints; const char *enc; } cases[] = {
        {512, true, "intset"}, {513, true, "hashtable"}, {3, false, NULL}, {300, false, "hashtable"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        o = set_of(cases[i].n, cases[i].ints);
        struct object *c = round_trip(o, cases[i].ints && cases[i].n <= 512);
        if (c) {
            check_sets_equal(o, c);
            CHECK(strcmp(enc(c), enc(o)) == 0);
            if (cases[i].enc)
                CHECK(strcmp(enc(c), cases[i].enc) == 0);
        }
        object_destroy(&c);
        object_destroy(&o);
    }
}

/* ---- hashes ---- */

static struct object *hash_of(size_t n, size_t vlen)
{
    struct object *o = hash_create();
    char f[32], v[256];
    memset(v, 'v', sizeof(v));
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(f, sizeof(f), "f%zu", i);
        hash_set(o, &LIM.hash, f, (size_t)k, v, vlen);
    }
    return o;
}

static void check_hashes_equal(const struct object *a, const struct object *b)
{
    CHECK_EQ_LL(hash_length(a), hash_length(b));
    struct hash_iter it;
    const char *f, *v, *w;
    size_t fl, vl, wl;
    bool all = true;
    hash_iter_init(&it, a);
    while (hash_iter_next(&it, &f, &fl, &v, &vl))
        all = all && hash_get(b, f, fl, &w, &wl) && wl == vl && memcmp(v, w, vl) == 0;
    CHECK(all);
}

/* a plain HASH of one field "f" whose value is 100 bytes (a 14-bit length) */
static struct object *load_plain_hash_100(void)
{
    char p[1 + 1 + 2 + 2 + 100];
    memcpy(p, "\x04\x01\x01" "f" "\x40\x64", 6);
    memset(p + 6, 'v', 100);
    return rdb_load_value(p, sizeof(p), RDB_VERSION, &LIM, NULL);
}

static void test_hashes(void)
{
    struct object *o = hash_create();
    hash_set(o, &LIM.hash, "f", 1, "v", 1);
    hash_set(o, &LIM.hash, "n", 1, "5", 1);
    struct rdb_buf b = value_of(o, &OPTS);
    /* Redis 7.0.15's DUMP value of HSET h f v n 5 */
    CHECK_MEM(b.p, b.len, "\x10\x12\x12\x00\x00\x00\x04\x00\x81\x66\x02\x81\x76\x02\x81\x6e\x02\x05\x01\xff");
    abuse(b.p, b.len);
    rdb_buf_release(&b);
    object_destroy(&o);

    /* a listpack from a server with a higher hash-max-listpack-value stays one (Redis 7.0: only
     * the count converts it), a plain HASH converts */
    struct hash_limits wide = {128, 200};
    o = hash_create();
    char v100[100];
    memset(v100, 'v', sizeof(v100));
    hash_set(o, &wide, "f", 1, v100, sizeof(v100));
    struct object *wide_copy = round_trip(o, true);
    CHECK(wide_copy && strcmp(enc(wide_copy), "listpack") == 0);
    object_destroy(&wide_copy);
    object_destroy(&o);
    CHECK((o = load_plain_hash_100()) != NULL && strcmp(enc(o), "hashtable") == 0);
    object_destroy(&o);

    struct { size_t n, vlen; const char *enc; } cases[] = {
        {128, 64, "listpack"}, {129, 1, "hashtable"}, {3, 65, "hashtable"}, {1, 0, "listpack"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        o = hash_of(cases[i].n, cases[i].vlen);
        struct object *c = round_trip(o, strcmp(cases[i].enc, "listpack") == 0);
        if (c) {
            check_hashes_equal(o, c);
            CHECK(strcmp(enc(c), cases[i].enc) == 0);
        }
        object_destroy(&c);
        object_destroy(&o);
    }
}

/* ---- sorted sets ---- */

static struct object *zset_of(size_t n, size_t mlen)
{
    struct zset *z = zset_create(ZSET_ENC_LISTPACK);
    char m[256];
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(m, sizeof(m), "m%zu", i);
        while ((size_t)k < mlen)
            m[k++] = 'x';
        int out;
        double ns;
        zset_add(z, (double)i * 0.5 - 3, m, (size_t)k, 0, &out, &ns, LIM.zset_max_entries, LIM.zset_max_value);
    }
    return object_collection_create(OBJ_ZSET, zset_encoding(z), z);
}

static void check_zsets_equal(struct object *a, struct object *b)
{
    struct zset *za = object_collection_ptr(a), *zb = object_collection_ptr(b);
    CHECK_EQ_LL(zset_length(za), zset_length(zb));
    struct zset_iter ia, ib;
    bool same = true;
    zset_iter_rank(za, 0, false, &ia);
    zset_iter_rank(zb, 0, false, &ib);
    for (size_t i = 0; i < zset_length(za); i++) {
        size_t na, nb;
        const char *pa = zset_iter_member(&ia, &na), *pb = zset_iter_member(&ib, &nb);
        same = same && na == nb && memcmp(pa, pb, na) == 0 && zset_iter_scoreval(&ia) == zset_iter_scoreval(&ib);
        zset_iter_step(&ia, false);
        zset_iter_step(&ib, false);
    }
    CHECK(same);
}

static void test_zsets(void)
{
    struct zset *z = zset_create(ZSET_ENC_LISTPACK);
    int out;
    double ns;
    zset_add(z, 1, "a", 1, 0, &out, &ns, 128, 64);
    zset_add(z, 2.5, "b", 1, 0, &out, &ns, 128, 64);
    struct object *o = object_collection_create(OBJ_ZSET, zset_encoding(z), z);
    struct rdb_buf b = value_of(o, &OPTS);
    /* Redis 7.0.15's DUMP value of ZADD z 1 a 2.5 b */
    CHECK_MEM(b.p, b.len, "\x11\x14\x14\x00\x00\x00\x04\x00\x81\x61\x02\x01\x01\x81\x62\x02\x83\x32\x2e\x35\x04\xff");
    abuse(b.p, b.len);
    rdb_buf_release(&b);
    object_destroy(&o);

    struct { size_t n, mlen; const char *enc; } cases[] = {
        {128, 64, "listpack"}, {129, 1, "skiplist"}, {3, 65, "skiplist"}, {1, 0, "listpack"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        o = zset_of(cases[i].n, cases[i].mlen);
        struct object *c = round_trip(o, true);
        if (c) {
            check_zsets_equal(o, c);
            CHECK(strcmp(enc(c), cases[i].enc) == 0);
        }
        if (i == 2) {
            b = value_of(o, &OPTS);
            abuse(b.p, b.len);
            rdb_buf_release(&b);
        }
        object_destroy(&c);
        object_destroy(&o);
    }
}

/* ---- old encodings, hand-built ---- */

static struct object *load_lit(const char *p, size_t n, unsigned version)
{
    struct object *o = load(p, n, version);
    if (o)
        abuse(p, n);
    return o;
}
#define LOAD(lit) load_lit((lit), sizeof(lit) - 1, RDB_VERSION)

static bool list_is(struct object *o, const char *const *want, size_t n)
{
    if (o == NULL || object_type(o) != OBJ_LIST || list_length(o) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        const char *p;
        size_t len;
        if (!list_index(o, (long)i, &p, &len) || len != strlen(want[i]) || memcmp(p, want[i], len) != 0)
            return false;
    }
    return true;
}

static bool hash_is(const struct object *o, const char *const *pairs, size_t n)
{
    if (o == NULL || object_type(o) != OBJ_HASH || hash_length(o) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        const char *v;
        size_t vl;
        if (!hash_get(o, pairs[2 * i], strlen(pairs[2 * i]), &v, &vl) || vl != strlen(pairs[2 * i + 1]) ||
            memcmp(v, pairs[2 * i + 1], vl) != 0)
            return false;
    }
    return true;
}

static bool set_is(struct object *o, const char *const *members, size_t n)
{
    if (o == NULL || object_type(o) != OBJ_SET || set_size(o) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!set_is_member(o, members[i], strlen(members[i])))
            return false;
    return true;
}

static bool zset_is(struct object *o, const char *const *members, const double *scores, size_t n)
{
    if (o == NULL || object_type(o) != OBJ_ZSET)
        return false;
    struct zset *z = object_collection_ptr(o);
    if (zset_length(z) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        double d;
        if (!zset_score(z, members[i], strlen(members[i]), &d) || d != scores[i] ||
            zset_rank(z, members[i], strlen(members[i]), false) != (long)i)
            return false;
    }
    return true;
}

static void test_old_encodings(void)
{
    struct object *o;

    /* zipmap: f -> v, nn -> 12 (with 2 free bytes after the value) */
    o = LOAD("\x09\x10\x02\x01\x66\x01\x00\x76\x02\x6e\x6e\x02\x02\x31\x32\x61\x62\xff");
    static const char *const zm[] = {"f", "v", "nn", "12"};
    CHECK(hash_is(o, zm, 2));
    CHECK(o && strcmp(enc(o), "listpack") == 0);
    object_destroy(&o);

    /* ziplist list: "a", 5 (immediate), 300 (int16), -70000 (int64), "hello" */
    o = LOAD("\x0a\x25\x25\x00\x00\x00\x1d\x00\x00\x00\x05\x00\x00\x01\x61\x03\xf6\x02\xc0\x2c\x01\x04\xe0\x90"
             "\xee\xfe\xff\xff\xff\xff\xff\x0a\x05\x68\x65\x6c\x6c\x6f\xff");
    static const char *const zl[] = {"a", "5", "300", "-70000", "hello"};
    CHECK(list_is(o, zl, 5));
    object_destroy(&o);

    /* intset, int16: -5 1 300 */
    o = LOAD("\x0b\x0e\x02\x00\x00\x00\x03\x00\x00\x00\xfb\xff\x01\x00\x2c\x01");
    static const char *const is[] = {"-5", "1", "300"};
    CHECK(set_is(o, is, 3));
    CHECK(o && strcmp(enc(o), "intset") == 0);
    object_destroy(&o);

    /* zset ziplist: c -inf, a 1.5, b 2 */
    o = LOAD("\x0c\x21\x21\x00\x00\x00\x1e\x00\x00\x00\x06\x00\x00\x01\x63\x03\x04\x2d\x69\x6e\x66\x06\x01\x61\x03"
             "\x03\x31\x2e\x35\x05\x01\x62\x03\xf3\xff");
    static const char *const zzm[] = {"c", "a", "b"};
    static const double zzs[] = {-INFINITY, 1.5, 2};
    CHECK(zset_is(o, zzm, zzs, 3));
    object_destroy(&o);

    /* hash ziplist: f v, n 7 */
    o = LOAD("\x0d\x16\x16\x00\x00\x00\x13\x00\x00\x00\x04\x00\x00\x01\x66\x03\x01\x76\x03\x01\x6e\x03\xf8\xff");
    static const char *const hz[] = {"f", "v", "n", "7"};
    CHECK(hash_is(o, hz, 2));
    object_destroy(&o);

    /* quicklist of two ziplists: x 1 | y */
    o = LOAD("\x0e\x02\x10\x10\x00\x00\x00\x0d\x00\x00\x00\x02\x00\x00\x01\x78\x03\xf2\xff\x0e\x0e\x00\x00\x00\x0a"
             "\x00\x00\x00\x01\x00\x00\x01\x79\xff");
    static const char *const ql[] = {"x", "1", "y"};
    CHECK(list_is(o, ql, 3));
    object_destroy(&o);

    /* quicklist 2 with a PLAIN node and a PACKED one */
    o = LOAD("\x12\x02\x01\x03" "big\x02\x0f\x0f\x00\x00\x00\x03\x00\x81\x61\x02\x81\x62\x02\x01\x01\xff");
    static const char *const q2[] = {"big", "a", "b", "1"};
    CHECK(list_is(o, q2, 4));
    object_destroy(&o);

    /* plain LIST, SET, ZSET (text scores), ZSET_2, HASH */
    o = LOAD("\x01\x03\x01\x61\x01\x62\xc0\x07");
    static const char *const lp[] = {"a", "b", "7"};
    CHECK(list_is(o, lp, 3));
    object_destroy(&o);
    o = LOAD("\x02\x02\x02m1\x02m2");
    static const char *const sp[] = {"m1", "m2"};
    CHECK(set_is(o, sp, 2));
    object_destroy(&o);
    o = LOAD("\x03\x02\x01\x61\x03\x31\x2e\x35\x01\x62\xfe");
    static const char *const ztm[] = {"a", "b"};
    static const double zts[] = {1.5, INFINITY};
    CHECK(zset_is(o, ztm, zts, 2));
    object_destroy(&o);
    o = LOAD("\x05\x01\x01\x61\x00\x00\x00\x00\x00\x00\x02\x40");
    static const char *const z2m[] = {"a"};
    static const double z2s[] = {2.25};
    CHECK(zset_is(o, z2m, z2s, 1));
    object_destroy(&o);
    o = LOAD("\x04\x01\x01\x66\x01\x76");
    static const char *const hp[] = {"f", "v"};
    CHECK(hash_is(o, hp, 1));
    object_destroy(&o);

    /* 7.2's set listpack: only from a version 11 writer */
    static const char slp[] = "\x14\x0d\x0d\x00\x00\x00\x02\x00\x81\x61\x02\x81\x62\x02\xff";
    o = load(slp, sizeof(slp) - 1, 10);
    CHECK(o == NULL);
    o = load_lit(slp, sizeof(slp) - 1, 11);
    static const char *const sl[] = {"a", "b"};
    CHECK(set_is(o, sl, 2));
    object_destroy(&o);
}

/* ---- refused ---- */

#define REFUSED(lit) CHECK(rdb_load_value((lit), sizeof(lit) - 1, RDB_VERSION_MAX, &LIM, NULL) == NULL)

static void test_refused(void)
{
    REFUSED("");
    REFUSED("\x00\x3f");                          /* string longer than the input */
    REFUSED("\x00\xc4");                          /* unknown string encoding */
    REFUSED("\x00\xc3\x01\x05\x00");              /* LZF that does not decompress to its length */
    REFUSED("\x00\xc3\x01\x80\x00\x01\x00\x00\x00"); /* LZF claiming more (64 KB from 1 byte) than it
                                                        * could expand to: refused before allocating */
    REFUSED("\x00\x82");                          /* bad length byte */
    REFUSED("\x12\x00");                          /* empty list */
    REFUSED("\x02\x00");                          /* empty set */
    REFUSED("\x01\x3f\x01\x61");                  /* count beyond the input */
    REFUSED("\x80\x00\x00\x00\x10\x00");          /* a count of 2^28 with no elements (as a list) */
    REFUSED("\x01\x80\x10\x00\x00\x00\x01\x61");
    REFUSED("\x02\x02\x01m\x01m");                /* duplicate set member */
    REFUSED("\x04\x02\x01\x66\x01\x76\x01\x66\x01\x77"); /* duplicate hash field */
    REFUSED("\x05\x02\x01\x61\x00\x00\x00\x00\x00\x00\x02\x40\x01\x61\x00\x00\x00\x00\x00\x00\x02\x40");
    REFUSED("\x05\x01\x01\x61\x00\x00\x00\x00\x00\x00\xf8\x7f"); /* NaN score */
    REFUSED("\x03\x01\x01\x61\xfd");              /* NaN text score */
    REFUSED("\x03\x01\x01\x61\x03x.5");           /* not a number */
    REFUSED("\x0b\x0c\x02\x00\x00\x00\x02\x00\x00\x00\x05\x00\x01\x00"); /* intset not ascending */
    REFUSED("\x0b\x0c\x02\x00\x00\x00\x02\x00\x00\x00\x05\x00\x05\x00"); /* intset duplicate */
    REFUSED("\x0b\x0a\x03\x00\x00\x00\x01\x00\x00\x00\x05\x00");         /* width 3 */
    REFUSED("\x0b\x08\x02\x00\x00\x00\x00\x00\x00\x00");                 /* empty intset */
    REFUSED("\x0b\x0c\x02\x00\x00\x00\x03\x00\x00\x00\x05\x00\x06\x00"); /* count past the end */
    /* listpacks: wrong total, wrong count, bad back-length, odd hash, duplicate field, no end */
    REFUSED("\x10\x12\x13\x00\x00\x00\x04\x00\x81\x66\x02\x81\x76\x02\x81\x6e\x02\x05\x01\xff");
    REFUSED("\x10\x12\x12\x00\x00\x00\x05\x00\x81\x66\x02\x81\x76\x02\x81\x6e\x02\x05\x01\xff");
    REFUSED("\x10\x12\x12\x00\x00\x00\x04\x00\x81\x66\x03\x81\x76\x02\x81\x6e\x02\x05\x01\xff");
    REFUSED("\x10\x0f\x0f\x00\x00\x00\x03\x00\x81\x66\x02\x81\x76\x02\x81\x6e\x02\xff");
    REFUSED("\x10\x12\x12\x00\x00\x00\x04\x00\x81\x66\x02\x81\x76\x02\x81\x66\x02\x05\x01\xff");
    REFUSED("\x10\x12\x12\x00\x00\x00\x04\x00\x81\x66\x02\x81\x76\x02\x81\x6e\x02\x05\x01\xfe");
    REFUSED("\x10\x07\x07\x00\x00\x00\x00\x00\xff");                   /* empty hash listpack */
    REFUSED("\x11\x0c\x0c\x00\x00\x00\x02\x00\x81\x61\x02\x81\x62\x02\xff"); /* zset score "b" */
    REFUSED("\x14\x0d\x0d\x00\x00\x00\x02\x00\x81\x61\x02\x81\x61\x02\xff"); /* set listpack duplicate */
    /* ziplists: wrong prevlen, wrong tail, wrong count */
    REFUSED("\x0a\x10\x10\x00\x00\x00\x0d\x00\x00\x00\x02\x00\x00\x01\x78\x04\xf2\xff");
    REFUSED("\x0a\x10\x10\x00\x00\x00\x0a\x00\x00\x00\x02\x00\x00\x01\x78\x03\xf2\xff");
    REFUSED("\x0a\x10\x10\x00\x00\x00\x0d\x00\x00\x00\x03\x00\x00\x01\x78\x03\xf2\xff");
    REFUSED("\x0a\x0b\x0b\x00\x00\x00\x0a\x00\x00\x00\x00\x00\xff");  /* empty ziplist */
    /* zipmap: count mismatch, value past the end */
    REFUSED("\x09\x08\x02\x01\x66\x01\x00\x76\xff");
    REFUSED("\x09\x08\x01\x01\x66\x09\x00\x76\xff");
    /* quicklist 2: bad container, empty listpack only */
    REFUSED("\x12\x01\x03\x01\x61");
    REFUSED("\x12\x01\x02\x07\x07\x00\x00\x00\x00\x00\xff");
    /* streams, modules, unknown */
    REFUSED("\x0f\x00");
    REFUSED("\x07\x00");
    REFUSED("\x15\x00");
    REFUSED("\xff");
    /* a version the reader does not know */
    CHECK(rdb_load_value("\x00\x01x", 3, RDB_VERSION_MAX + 1, &LIM, NULL) == NULL);
}

/* ---- whole files ---- */

struct got {
    int n;
    int db[8];
    char key[8][16];
    int64_t expire[8];
    long long idle[8];
    int freq[8];
    char val[8][16];   /* a string value's bytes, "" otherwise */
    int refuse_at;     /* the key number the callback refuses, -1 none */
};

static int collect(void *arg, struct rdb_file_key *k)
{
    struct got *g = arg;
    if (g->n == g->refuse_at) {
        object_destroy(&k->val);
        return -1;
    }
    if (g->n < 8) {
        g->db[g->n] = k->db;
        snprintf(g->key[g->n], sizeof g->key[0], "%.*s", (int)k->klen, k->key);
        g->expire[g->n] = k->expire;
        g->idle[g->n] = k->idle_s;
        g->freq[g->n] = k->freq;
        g->val[g->n][0] = '\0';
        if (object_type(k->val) == OBJ_STRING) {
            size_t len;
            const char *p = object_string_ptr(k->val, &len);
            snprintf(g->val[g->n], sizeof g->val[0], "%.*s", (int)len, p);
        }
    }
    g->n++;
    object_destroy(&k->val);
    return 0;
}

static int load_file(const void *p, size_t n, struct got *g, struct rdb_file_info *info)
{
    char err[128];
    memset(g, 0, sizeof(*g));
    g->refuse_at = -1;
    return rdb_file_load(p, n, &LIM, collect, NULL, g, info, err, sizeof err);
}

/* the file test_file writes */
static struct rdb_buf sample_file(bool checksum)
{
    struct rdb_buf b = {0};
    rdb_file_begin(&b, "7.0.15", 1700000000, 12345, &OPTS);
    rdb_file_select(&b, 0, 2, 1);
    struct object *s = object_string_create("hello", 5);
    struct object *n = object_string_create("12345", 5);
    rdb_file_key(&b, "a", 1, -1, s, &OPTS);
    rdb_file_key(&b, "num", 3, 1700000000123LL, n, &OPTS);
    rdb_file_select(&b, 5, 0, 0);
    struct object *l = list_object_create();
    list_push(l, LIST_TAIL, "x", 1, -2);
    list_push(l, LIST_TAIL, "y", 1, -2);
    rdb_file_key(&b, "l", 1, -1, l, &OPTS);
    rdb_file_end(&b, crc64(0, b.p, b.len), checksum);
    object_destroy(&s);
    object_destroy(&n);
    object_destroy(&l);
    return b;
}

/* the stack below the caller written over with 'x' (no NUL), as a deep call before leaves it */
static __attribute__((noinline)) void dirty_stack(void)
{
    volatile char junk[8192];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = 'x';
}

static void test_file(void)
{
    dirty_stack();
    struct rdb_buf b = sample_file(true);
    CHECK(b.len > 9 && memcmp(b.p, "REDIS0010", 9) == 0);
    /* the first AUX field as Redis writes it: 0xFA, "redis-ver", "7.0.15" */
    CHECK_MEM(b.p + 9, 18, "\xfa\x09redis-ver\x06" "7.0.15");
    /* the integer AUX fields as Redis writes them, integer-encoded: 64, 1700000000, 12345, 0, then
     * SELECTDB (their digits were once read up to the next NUL on the stack, garbage and all) */
    static const char aux_ints[] = "\xfa\x0aredis-bits\xc0\x40" "\xfa\x05" "ctime\xc2\x00\xf1\x53\x65"
                                   "\xfa\x08used-mem\xc1\x39\x30" "\xfa\x08" "aof-base\xc0\x00" "\xfe";
    CHECK_MEM(b.p + 27, sizeof aux_ints - 1, aux_ints);
    /* the string key record: type 0, key, value; the expire before its record */
    static const char rec_a[] = "\x00\x01" "a\x05hello";
    static const char rec_num[] = "\xfc\x7b\x68\xe5\xcf\x8b\x01\x00\x00\x00\x03num\xc1\x39\x30";
    CHECK(memmem(b.p, b.len, rec_a, sizeof rec_a - 1) != NULL);
    CHECK(memmem(b.p, b.len, rec_num, sizeof rec_num - 1) != NULL);
    CHECK(memmem(b.p, b.len, "\xfe\x00\xfb\x02\x01", 5) != NULL); /* SELECTDB 0, RESIZEDB 2 1 */
    CHECK(memmem(b.p, b.len, "\xfe\x05\x12", 3) != NULL);         /* SELECTDB 5, no RESIZEDB, a QUICKLIST_2 */
    /* the trailer: EOF, then the CRC64 of every byte before it, little-endian */
    CHECK((unsigned char)b.p[b.len - 9] == 0xff);
    uint64_t crc = crc64(0, b.p, b.len - 8), want = 0;
    for (int i = 7; i >= 0; i--)
        want = want << 8 | (unsigned char)b.p[b.len - 8 + i];
    CHECK(crc == want);

    struct got g;
    struct rdb_file_info info;
    CHECK_EQ_LL(load_file(b.p, b.len, &g, &info), 0);
    CHECK_EQ_LL(info.version, 10);
    CHECK_EQ_LL(info.keys, 3);
    CHECK_EQ_LL(g.n, 3);
    CHECK(strcmp(g.key[0], "a") == 0 && g.db[0] == 0 && g.expire[0] == -1 && strcmp(g.val[0], "hello") == 0);
    CHECK(strcmp(g.key[1], "num") == 0 && g.db[1] == 0 && g.expire[1] == 1700000000123LL &&
          strcmp(g.val[1], "12345") == 0);
    CHECK(strcmp(g.key[2], "l") == 0 && g.db[2] == 5 && g.expire[2] == -1 && g.idle[2] == -1 && g.freq[2] == -1);

    /* every truncation refused; a flipped byte in a value caught by the checksum */
    for (size_t k = 0; k < b.len; k++)
        CHECK(load_file(b.p, k, &g, &info) < 0);
    char *m = mem_alloc(b.len);
    memcpy(m, b.p, b.len);
    char *h = memmem(m, b.len, "hello", 5);
    h[0] = 'j';
    CHECK(load_file(m, b.len, &g, &info) < 0);
    /* rdbchecksum no: 0 written, nothing checked */
    struct rdb_buf z = sample_file(false);
    for (int i = 1; i <= 8; i++)
        CHECK(z.p[z.len - i] == 0);
    h = memmem(z.p, z.len, "hello", 5);
    h[0] = 'j';
    CHECK_EQ_LL(load_file(z.p, z.len, &g, &info), 0);
    CHECK(strcmp(g.val[0], "jello") == 0);
    /* a key the caller refuses fails the load */
    memset(&g, 0, sizeof g);
    g.refuse_at = 1;
    char err[128] = "";
    CHECK(rdb_file_load(b.p, b.len, &LIM, collect, NULL, &g, &info, err, sizeof err) < 0);
    CHECK(strstr(err, "Database") != NULL);
    mem_release(m);
    rdb_buf_release(&z);
    rdb_buf_release(&b);
}

static void test_file_versions(void)
{
    struct got g;
    struct rdb_file_info info;
    /* RDB 3: EXPIRETIME in seconds, no checksum after the EOF */
    static const char v3[] = "REDIS0003\xfe\x01\xfd\x00\xf1\x53\x65\x00\x01k\x01v\xff";
    CHECK_EQ_LL(load_file(v3, sizeof v3 - 1, &g, &info), 0);
    CHECK(g.n == 1 && g.db[0] == 1 && g.expire[0] == 1700000000LL * 1000 && strcmp(g.val[0], "v") == 0);
    /* RDB 9: IDLE and FREQ before a key, a FUNCTION2 library skipped, checksum 0 */
    static const char v9[] = "REDIS0009\xfa\x03" "foo\x03" "bar\xf8\x0a\x00\x01k\x01v\xf9\x07\x00\x01q\x01w"
                             "\xf5\x04" "code\xff\x00\x00\x00\x00\x00\x00\x00\x00";
    CHECK_EQ_LL(load_file(v9, sizeof v9 - 1, &g, &info), 0);
    CHECK(g.n == 2 && g.idle[0] == 10 && g.freq[0] == -1 && g.freq[1] == 7 && g.idle[1] == -1);
    CHECK_EQ_LL(info.functions_skipped, 1);
    /* refused: a version past 11, a bad magic, module data, no EOF */
    static const char *const bad[] = {"REDIS0012\xff", "REDIX0009\xff", "REDIS00a9\xff",
                                      "REDIS0009\xf7\x01\x02\x03\xff", "REDIS0009\x00\x01k\x01v"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(load_file(bad[i], strlen(bad[i]), &g, &info) < 0);
    /* every version 1..11 is read */
    char hdr[16];
    for (int v = 1; v <= 11; v++) {
        snprintf(hdr, sizeof hdr, "REDIS%04d\xff", v);
        size_t n = strlen(hdr);
        char file[32];
        memcpy(file, hdr, n);
        memset(file + n, 0, 8);
        CHECK_EQ_LL(load_file(file, n + (v >= 5 ? 8 : 0), &g, &info), 0);
        CHECK_EQ_LL(info.version, v);
    }
}

/* ---- streams ---- */

/* XADD s 1-1 a 1 b 2; XADD s 1-2 a 3 b 4; XADD s 2-5 c 5; XADD s 3-0 a 1 b 2; XDEL s 1-2;
 * XADD s 7 1234 -5 z 99999999999; XSETID s 9-0 ENTRIESADDED 20 (Redis 7.0's DUMP, rdbcompression no) */
static const char STREAM_RDB[] =
    "\x13\x01\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x40\x67\x67\x00\x00\x00\x28"
    "\x00\x04\x01\x01\x01\x02\x01\x81\x61\x02\x81\x62\x02\x00\x01\x02\x01\x00\x01\x00\x01\x01\x01\x02\x01\x05"
    "\x01\x03\x01\x00\x01\x01\x01\x03\x01\x04\x01\x05\x01\x00\x01\x01\x01\x04\x01\x01\x01\x81\x63\x02\x05\x01"
    "\x06\x01\x02\x01\x02\x01\xdf\xff\x02\x01\x01\x02\x01\x05\x01\x00\x01\x06\x01\xdf\xff\x02\x02\x01\xc4\xd2"
    "\x02\xdf\xfb\x02\x81\x7a\x02\xf4\xff\xe7\x76\x48\x17\x00\x00\x00\x09\x08\x01\xff\x04\x09\x00\x01\x01\x01"
    "\x02\x14\x00";

static struct object *known_stream(void)
{
    static const struct stream_limits lim = {4096, 100};
    struct object *o = stream_object_create();
    struct stream *s = stream_of(o);
    const struct stream_str e1[] = {{"a", 1}, {"1", 1}, {"b", 1}, {"2", 1}};
    const struct stream_str e2[] = {{"a", 1}, {"3", 1}, {"b", 1}, {"4", 1}};
    const struct stream_str e3[] = {{"c", 1}, {"5", 1}};
    const struct stream_str e5[] = {{"1234", 4}, {"-5", 2}, {"z", 1}, {"99999999999", 11}};
    const struct stream_id ids[] = {{1, 1}, {1, 2}, {2, 5}, {3, 0}, {7, 0}, {9, 0}};
    stream_append(s, &ids[0], 2, e1, &lim);
    stream_append(s, &ids[1], 2, e2, &lim);
    stream_append(s, &ids[2], 1, e3, &lim);
    stream_append(s, &ids[3], 2, e1, &lim);
    CHECK(stream_delete(s, &ids[1]));
    CHECK(!stream_delete(s, &ids[1]));
    stream_set_meta(s, NULL, NULL, &ids[1]);
    stream_append(s, &ids[4], 2, e5, &lim);
    long long added = 20;
    stream_set_meta(s, &ids[5], &added, NULL);
    return o;
}

/* the stream's entries as "id f v f v;" text, and its metadata */
static void stream_text(const struct object *o, char *out, size_t cap)
{
    const struct stream *s = stream_of(o);
    struct stream_id lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX}, id, last = stream_last_id(s),
                     del = stream_max_deleted_id(s);
    struct stream_iter it;
    size_t nfields, n = 0;
    char buf[48];
    stream_iter_init(&it, s, &lo, &hi, false);
    while (stream_iter_next(&it, &id, &nfields) && n + 200 < cap) {
        buf[stream_id_format(&id, buf)] = 0;
        n += (size_t)snprintf(out + n, cap - n, "%s", buf);
        for (size_t i = 0; i < nfields; i++) {
            struct stream_str f, v;
            stream_iter_pair(&it, &f, &v);
            n += (size_t)snprintf(out + n, cap - n, " %.*s %.*s", (int)f.n, f.p, (int)v.n, v.p);
        }
        n += (size_t)snprintf(out + n, cap - n, ";");
    }
    snprintf(out + n, cap - n, " len %llu last %llu-%llu del %llu-%llu added %llu",
             (unsigned long long)stream_length(s), (unsigned long long)last.ms, (unsigned long long)last.seq,
             (unsigned long long)del.ms, (unsigned long long)del.seq, (unsigned long long)stream_entries_added(s));
}

static void serialize_emit(void *arg, const void *p, size_t n)
{
    rdb_buf_put(arg, p, n);
}

static void test_streams(void)
{
    const size_t n = sizeof STREAM_RDB - 1;
    const char *want = "1-1 a 1 b 2;2-5 c 5;3-0 a 1 b 2;7-0 1234 -5 z 99999999999; len 4 last 9-0 del 1-2 added 20";
    struct rdb_save_opts plain = OPTS;
    char text[1024];
    plain.compress = false;

    struct object *o = known_stream();
    struct rdb_buf b = value_of(o, &plain);
    CHECK(b.len == n && memcmp(b.p, STREAM_RDB, n) == 0);
    stream_text(o, text, sizeof text);
    CHECK(strcmp(text, want) == 0);
    CHECK(strcmp(enc(o), "stream") == 0 && strcmp(object_type_name(o), "stream") == 0);
    CHECK_EQ_LL(object_length(o), 4);

    struct object *c = load(STREAM_RDB, n, 10);
    CHECK(c != NULL);
    if (c) {
        stream_text(c, text, sizeof text);
        CHECK(strcmp(text, want) == 0);
        struct rdb_buf b2 = value_of(c, &plain);
        CHECK(b2.len == n && memcmp(b2.p, STREAM_RDB, n) == 0);
        rdb_buf_release(&b2);
        object_destroy(&c);
    }

    /* Redis 7.2's type 21: the same without groups; not before RDB 11 */
    char *m = mem_alloc(n);
    memcpy(m, STREAM_RDB, n);
    m[0] = 21;
    CHECK(rdb_load_value(m, n, 10, &LIM, NULL) == NULL);
    c = load(m, n, 11);
    CHECK(c != NULL);
    if (c) {
        stream_text(c, text, sizeof text);
        CHECK(strcmp(text, want) == 0);
        object_destroy(&c);
    }
    /* Redis 6.2's type 15: no first ID, max deleted ID or entries added (the length is taken for it) */
    m[0] = 15;
    memmove(m + n - 6, m + n - 1, 1);
    c = load(m, n - 5, 9);
    CHECK(c != NULL);
    if (c) {
        stream_text(c, text, sizeof text);
        CHECK(strcmp(text, "1-1 a 1 b 2;2-5 c 5;3-0 a 1 b 2;7-0 1234 -5 z 99999999999; len 4 last 9-0 del 0-0 "
                           "added 4") == 0);
        object_destroy(&c);
    }
    /* consumer groups are not kept: refused */
    memcpy(m, STREAM_RDB, n);
    m[n - 1] = 1;
    CHECK(rdb_load_value(m, n, 10, &LIM, NULL) == NULL);
    /* a length that does not count the live entries */
    memcpy(m, STREAM_RDB, n);
    m[n - 10] = 5;
    CHECK(rdb_load_value(m, n, 10, &LIM, NULL) == NULL);
    mem_release(m);
    abuse(STREAM_RDB, n);

    /* more nodes than one, compressed: a round trip to the same bytes */
    struct object *big = stream_object_create();
    static const struct stream_limits three = {4096, 3};
    for (uint64_t i = 1; i <= 20; i++) {
        char v[32];
        size_t vn = (size_t)snprintf(v, sizeof v, "value-%llu", (unsigned long long)i * 7919);
        struct stream_str f[] = {{i % 4 ? "field" : "other", 5}, {v, vn}};
        struct stream_id id = {i, i % 3};
        stream_append(stream_of(big), &id, 1, f, &three);
        if (i % 5 == 0)
            stream_delete(stream_of(big), &id);
    }
    CHECK_EQ_LL(stream_nodes(stream_of(big)), 6); /* what Redis 7.0 makes of the same (XINFO radix-tree-keys) */
    c = round_trip(big, true);
    object_destroy(&c);

    /* the cross-shard form: the same stream back, its truncations refused */
    struct rdb_buf ser = {0};
    object_serialize(big, serialize_emit, &ser);
    c = object_deserialize(ser.p, ser.len);
    CHECK(c != NULL);
    if (c) {
        struct rdb_buf b1 = value_of(big, &OPTS), b2 = value_of(c, &OPTS);
        CHECK(b1.len == b2.len && memcmp(b1.p, b2.p, b1.len) == 0);
        rdb_buf_release(&b1);
        rdb_buf_release(&b2);
        object_destroy(&c);
    }
    for (size_t k = 0; k < ser.len; k++) {
        c = object_deserialize(ser.p, k);
        CHECK(c == NULL);
        object_destroy(&c);
    }
    rdb_buf_release(&ser);
    object_destroy(&big);
    rdb_buf_release(&b);
    object_destroy(&o);
}

int main(void)
{
    test_crc64();
    test_payload();
    test_strings();
    test_lists();
    test_sets();
    test_hashes();
    test_zsets();
    test_old_encodings();
    test_refused();
    test_file();
    test_file_versions();
    test_streams();
    return check_done("test_rdb");
}
