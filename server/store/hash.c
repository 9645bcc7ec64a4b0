/*
 * hash: the hash type's structures (see include/percore/hash.h).
 *
 * Design.  The object's pointer is the structure itself, with no wrapper:
 * a listpack hash costs the 16-byte object header block plus one listpack
 * allocation (a 6-byte header and, per pair, the two entries with 2-4 bytes
 * of framing each), which is what Redis 7 spends (robj + listpack).  Every
 * change to a listpack may move it, so the object's pointer is stored back
 * after each change (object_collection_set).  A hashtable is a dict with
 * string values; it keeps its own byte count, so hash_memory() is O(1) for
 * both encodings (a listpack's size is one mem_usable()).
 *
 * Once stored, a listpack of up to HASH_PACKED_MAX bytes is packed into its
 * key's entry (packed_size, object.h's "Embedding"): no header block and no
 * allocation of its own (nothing of its own to count either).  Reads work on
 * it in place; every change here (hash_set, hash_delete, hash_convert) first
 * takes it out (object_collection_own), and the command layer has the store
 * pack it again afterwards (store_settle).
 *
 * Conversion follows Redis 7.0 t_hash.c step for step: hash_try_conversion
 * (hashTypeTryConversion) before a write looks at the longest argument and
 * the listpack's safe size; hash_set (hashTypeSet) checks the field and value
 * lengths again (HINCRBY*, which skip the first check) and the field count
 * after inserting.  Nothing converts a hashtable back to a listpack.
 *
 * Serialized form (object_serialize's payload after its type bytes):
 *   listpack:   0:u8  lp_data() bytes
 *   hashtable:  1:u8  count:u64  then per pair  flen:u32 field vlen:u32 value
 * little-endian.  Deserialize checks every length, an even listpack entry
 * count and that no field repeats, and rebuilds the same encoding.
 *
 * Threading: a hash is touched only by the thread of the shard that owns it.
 * The generator for random picks is thread-local.
 */
#include "percore/hash.h"

#include "percore/listpack.h"
#include "percore/mem.h"
#include "percore/siphash.h"

#include <assert.h>
#include <string.h>

#define HASH_LP_SAFETY_SIZE (1u << 30) /* Redis LISTPACK_MAX_SAFETY_SIZE */
#define HASH_SER_MAX_LEN UINT32_MAX    /* a dict value's length is 32 bits */
#define HASH_PACKED_MAX 254            /* a listpack up to this size is packed into its key's entry */

/* ---- helpers --------------------------------------------------------------- */

static unsigned hash_enc(const struct object *o)
{
    return object_collection_encoding(o);
}

static struct listpack *hash_lp(const struct object *o)
{
    return object_collection_ptr(o);
}

static struct dict *hash_dict(const struct object *o)
{
    return object_collection_ptr(o);
}

static _Thread_local uint64_t hash_rng_state;

/* xorshift64*, seeded from the process hash key and a thread-local address */
static uint64_t hash_rand(void)
{
    uint64_t x = hash_rng_state;
    if (x == 0)
        x = (siphash_seed_k1() ^ (uint64_t)(uintptr_t)&hash_rng_state ^ 0x9E3779B97F4A7C15ULL) | 1;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    hash_rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* the position of field f's entry in a listpack hash, LP_NONE if absent */
static uint32_t lp_find_field(const struct listpack *lp, const void *f, size_t flen)
{
    return lp_find(lp, lp_first(lp), f, flen, 1);
}

/* ---- the object_type_ops ----------------------------------------------------- */

static const char *hash_encoding_name(unsigned encoding)
{
    return encoding == HASH_LISTPACK ? "listpack" : "hashtable";
}

static size_t hash_ops_length(unsigned encoding, const void *ptr)
{
    if (encoding == HASH_LISTPACK)
        return lp_count(ptr) / 2;
    return dict_size(ptr);
}

static size_t hash_ops_memory(unsigned encoding, const void *ptr)
{
    if (encoding == HASH_LISTPACK)
        return lp_bytes(ptr);
    return dict_memory(ptr);
}

/* a listpack's bytes, header included */
static size_t lp_size(const struct listpack *lp)
{
    size_t n;
    lp_data(lp, &n);
    return n;
}

static size_t hash_ops_packed_size(unsigned encoding, const void *ptr)
{
    if (encoding != HASH_LISTPACK)
        return 0;
    size_t n = lp_size(ptr);
    return n <= HASH_PACKED_MAX ? n : 0;
}

static void hash_ops_destroy(unsigned encoding, void *ptr)
{
    if (encoding == HASH_LISTPACK) {
        struct listpack *lp = ptr;
        lp_destroy(&lp);
    } else {
        struct dict *d = ptr;
        dict_destroy(&d);
    }
}

static bool hash_ops_destroy_step(unsigned encoding, void *ptr, size_t budget)
{
    if (encoding == HASH_LISTPACK) {
        hash_ops_destroy(encoding, ptr);
        return true;
    }
    struct dict *d = ptr;
    return dict_destroy_step(&d, budget);
}

static void put_u32(unsigned char *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *b)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)b[i] << (8 * i);
    return v;
}

static void hash_ops_serialize(unsigned encoding, const void *ptr, object_emit_fn *emit, void *arg)
{
    unsigned char enc = (unsigned char)encoding;
    emit(arg, &enc, 1);
    if (encoding == HASH_LISTPACK) {
        size_t n;
        const void *p = lp_data(ptr, &n);
        emit(arg, p, n);
        return;
    }
    struct dict *d = (struct dict *)ptr;
    unsigned char h[8];
    uint64_t count = dict_size(d);
    for (int i = 0; i < 8; i++)
        h[i] = (unsigned char)(count >> (8 * i));
    emit(arg, h, sizeof h);
    struct dict_iter it;
    struct dict_entry *e;
    dict_iter_init(&it, d);
    while ((e = dict_iter_next(&it)) != NULL) {
        size_t flen, vlen;
        const char *f = dict_entry_key(e, &flen);
        const char *v = dict_entry_value(e, &vlen);
        unsigned char l[4];
        put_u32(l, (uint32_t)flen);
        emit(arg, l, 4);
        emit(arg, f, flen);
        put_u32(l, (uint32_t)vlen);
        emit(arg, l, 4);
        emit(arg, v, vlen);
    }
}

/* a listpack hash holds pairs and no field twice */
static bool lp_hash_valid(const struct listpack *lp)
{
    return lp_count(lp) % 2 == 0 && lp_unique(lp, 1);
}

static void *hash_ops_deserialize(const void *p, size_t n, unsigned *encoding)
{
    const unsigned char *b = p;
    if (n < 1)
        return NULL;
    if (b[0] == HASH_LISTPACK) {
        struct listpack *lp = lp_from_data(b + 1, n - 1);
        if (lp == NULL)
            return NULL;
        if (!lp_hash_valid(lp)) {
            lp_destroy(&lp);
            return NULL;
        }
        *encoding = HASH_LISTPACK;
        return lp;
    }
    if (b[0] != HASH_HASHTABLE || n < 9)
        return NULL;
    uint64_t count = 0;
    for (int i = 0; i < 8; i++)
        count |= (uint64_t)b[1 + i] << (8 * i);
    size_t off = 9;
    /* each pair takes at least 8 bytes: bound count before building */
    if (count > (n - off) / 8)
        return NULL;
    struct dict *d = dict_create();
    for (uint64_t i = 0; i < count; i++) {
        if (n - off < 4)
            goto bad;
        size_t flen = get_u32(b + off);
        off += 4;
        if (n - off < flen)
            goto bad;
        const unsigned char *f = b + off;
        off += flen;
        if (n - off < 4)
            goto bad;
        size_t vlen = get_u32(b + off);
        off += 4;
        if (n - off < vlen)
            goto bad;
        struct dict_entry *e = dict_add(d, f, flen, NULL);
        if (e == NULL)
            goto bad; /* a field twice */
        dict_entry_set_value(d, e, b + off, vlen);
        off += vlen;
    }
    if (off != n)
        goto bad;
    *encoding = HASH_HASHTABLE;
    return d;
bad:
    dict_destroy(&d);
    return NULL;
}

const struct object_type_ops hash_type_ops = {
    .name = "hash",
    .encoding_name = hash_encoding_name,
    .length = hash_ops_length,
    .memory = hash_ops_memory,
    .destroy = hash_ops_destroy,
    .destroy_step = hash_ops_destroy_step,
    .serialize = hash_ops_serialize,
    .deserialize = hash_ops_deserialize,
    .packed_size = hash_ops_packed_size,
};

/* ---- the hash API ------------------------------------------------------------ */

struct object *hash_create(void)
{
    return object_collection_create(OBJ_HASH, HASH_LISTPACK, lp_create());
}

size_t hash_length(const struct object *o)
{
    return hash_ops_length(hash_enc(o), object_collection_ptr(o));
}

void hash_convert(struct object *o)
{
    if (hash_enc(o) != HASH_LISTPACK)
        return;
    object_collection_own(o);
    struct listpack *lp = hash_lp(o);
    struct dict *d = dict_create();
    for (uint32_t pos = lp_first(lp); pos != LP_NONE;) {
        size_t flen, vlen;
        const char *f = lp_get(lp, pos, &flen);
        pos = lp_next(lp, pos);
        const char *v = lp_get(lp, pos, &vlen);
        pos = lp_next(lp, pos);
        struct dict_entry *e = dict_add(d, f, flen, NULL);
        assert(e != NULL);
        dict_entry_set_value(d, e, v, vlen);
    }
    object_collection_set(o, HASH_HASHTABLE, d);
    lp_destroy(&lp);
}

void hash_try_conversion(struct object *o, const struct hash_limits *lim, size_t maxlen,
                         size_t sumlen)
{
    if (hash_enc(o) != HASH_LISTPACK)
        return;
    if (maxlen > lim->max_value || lp_size(hash_lp(o)) + sumlen > HASH_LP_SAFETY_SIZE ||
        sumlen > HASH_LP_SAFETY_SIZE)
        hash_convert(o);
}

bool hash_get(const struct object *o, const void *f, size_t flen, const char **v, size_t *vlen)
{
    if (hash_enc(o) == HASH_LISTPACK) {
        const struct listpack *lp = hash_lp(o);
        uint32_t pos = lp_find_field(lp, f, flen);
        if (pos == LP_NONE)
            return false;
        *v = lp_get(lp, lp_next(lp, pos), vlen);
        return true;
    }
    struct dict_entry *e = dict_find(hash_dict(o), f, flen);
    if (e == NULL)
        return false;
    *v = dict_entry_value(e, vlen);
    return true;
}

bool hash_exists(const struct object *o, const void *f, size_t flen)
{
    const char *v;
    size_t vlen;
    return hash_get(o, f, flen, &v, &vlen);
}

int hash_set(struct object *o, const struct hash_limits *lim, const void *f, size_t flen,
             const void *v, size_t vlen)
{
    object_collection_own(o);
    if (hash_enc(o) == HASH_LISTPACK && (flen > lim->max_value || vlen > lim->max_value))
        hash_convert(o);

    if (hash_enc(o) == HASH_LISTPACK) {
        struct listpack *lp = hash_lp(o);
        int update = 0;
        uint32_t pos = lp_find_field(lp, f, flen);
        if (pos != LP_NONE) {
            lp_replace(&lp, lp_next(lp, pos), v, vlen);
            update = 1;
        } else {
            lp_append(&lp, f, flen);
            lp_append(&lp, v, vlen);
        }
        object_collection_set(o, HASH_LISTPACK, lp);
        if (lp_count(lp) / 2 > lim->max_entries)
            hash_convert(o);
        return update;
    }

    struct dict *d = hash_dict(o);
    struct dict_entry *existing = NULL;
    struct dict_entry *e = dict_add(d, f, flen, &existing);
    if (e == NULL) {
        dict_entry_set_value(d, existing, v, vlen);
        return 1;
    }
    dict_entry_set_value(d, e, v, vlen);
    return 0;
}

bool hash_delete(struct object *o, const void *f, size_t flen)
{
    if (hash_enc(o) == HASH_LISTPACK) {
        struct listpack *lp = hash_lp(o);
        uint32_t pos = lp_find_field(lp, f, flen);
        if (pos == LP_NONE)
            return false;
        object_collection_own(o); /* positions are offsets into the entries: the copy's are the same */
        lp = hash_lp(o);
        pos = lp_delete(&lp, pos); /* the field; pos is now its value */
        lp_delete(&lp, pos);
        object_collection_set(o, HASH_LISTPACK, lp);
        return true;
    }
    struct dict *d = hash_dict(o);
    if (!dict_delete(d, f, flen))
        return false;
    dict_compact(d); /* Redis: htNeedsResize -> dictResize after a delete */
    return true;
}

void hash_iter_init(struct hash_iter *it, const struct object *o)
{
    it->o = o;
    if (hash_enc(o) == HASH_LISTPACK)
        it->pos = lp_first(hash_lp(o));
    else
        dict_iter_init(&it->di, hash_dict(o));
}

bool hash_iter_next(struct hash_iter *it, const char **f, size_t *flen, const char **v,
                    size_t *vlen)
{
    if (hash_enc(it->o) == HASH_LISTPACK) {
        const struct listpack *lp = hash_lp(it->o);
        if (it->pos == LP_NONE)
            return false;
        *f = lp_get(lp, it->pos, flen);
        it->pos = lp_next(lp, it->pos);
        *v = lp_get(lp, it->pos, vlen);
        it->pos = lp_next(lp, it->pos);
        return true;
    }
    struct dict_entry *e = dict_iter_next(&it->di);
    if (e == NULL)
        return false;
    *f = dict_entry_key(e, flen);
    *v = dict_entry_value(e, vlen);
    return true;
}

void hash_random(struct object *o, const char **f, size_t *flen, const char **v, size_t *vlen)
{
    if (hash_enc(o) == HASH_LISTPACK) {
        const struct listpack *lp = hash_lp(o);
        size_t pairs = lp_count(lp) / 2;
        assert(pairs > 0);
        uint32_t pos = lp_seek(lp, (long)(2 * (hash_rand() % pairs)));
        *f = lp_get(lp, pos, flen);
        *v = lp_get(lp, lp_next(lp, pos), vlen);
        return;
    }
    struct dict_entry *e = dict_random(hash_dict(o));
    assert(e != NULL);
    *f = dict_entry_key(e, flen);
    *v = dict_entry_value(e, vlen);
}

void hash_random_unique(struct object *o, size_t count, hash_pair_fn *fn, void *arg)
{
    size_t size = hash_length(o);
    assert(count > 0 && count < size);

    /*
     * A listpack, or a hashtable where count is a good part of it (Redis's
     * CASE 3, count*3 > size): one walk in order, keeping each pair with
     * probability (wanted left)/(pairs left) -- Knuth's selection sampling.
     */
    if (hash_enc(o) == HASH_LISTPACK || count * 3 > size) {
        struct hash_iter it;
        const char *f, *v;
        size_t flen, vlen, left = size, want = count;
        hash_iter_init(&it, o);
        while (want && hash_iter_next(&it, &f, &flen, &v, &vlen)) {
            if (hash_rand() % left < want) {
                fn(arg, f, flen, v, vlen);
                want--;
            }
            left--;
        }
        return;
    }

    /* a few of many (Redis's CASE 4): random picks, duplicates skipped */
    struct dict *seen = dict_create();
    struct dict *d = hash_dict(o);
    while (dict_size(seen) < count) {
        struct dict_entry *e = dict_random(d);
        size_t flen, vlen;
        const char *f = dict_entry_key(e, &flen);
        if (dict_add(seen, f, flen, NULL) == NULL)
            continue;
        const char *v = dict_entry_value(e, &vlen);
        fn(arg, f, flen, v, vlen);
    }
    dict_destroy(&seen);
}

struct hash_scan_arg {
    hash_pair_fn *fn; /* the caller's callback */
    void *arg;        /* its argument */
    uint64_t items;   /* fields + values handed over (Redis counts both) */
};

static void hash_scan_entry(void *arg, const struct dict_entry *e)
{
    struct hash_scan_arg *sa = arg;
    size_t flen, vlen;
    const char *f = dict_entry_key(e, &flen);
    const char *v = dict_entry_value(e, &vlen);
    sa->fn(sa->arg, f, flen, v, vlen);
    sa->items += 2;
}

uint64_t hash_scan(struct object *o, uint64_t cursor, unsigned long count, hash_pair_fn *fn,
                   void *arg)
{
    if (hash_enc(o) == HASH_LISTPACK) {
        struct hash_iter it;
        const char *f, *v;
        size_t flen, vlen;
        hash_iter_init(&it, o);
        while (hash_iter_next(&it, &f, &flen, &v, &vlen))
            fn(arg, f, flen, v, vlen);
        return 0;
    }
    /*
     * Redis: count *= 2 (fields and values are counted), at most count*10
     * dictScan calls; computed unsigned, so a huge COUNT only means "to the
     * end" instead of overflowing.
     */
    uint64_t want = (uint64_t)count * 2;
    uint64_t maxiter = want * 10;
    struct hash_scan_arg sa = {fn, arg, 0};
    do {
        cursor = dict_scan(hash_dict(o), cursor, hash_scan_entry, &sa);
    } while (cursor && maxiter-- && sa.items < want);
    return cursor;
}
