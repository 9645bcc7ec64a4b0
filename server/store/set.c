/*
 * set: the set type's data side (see include/percore/set.h) and its
 * struct object_type_ops.
 *
 * Design.  Redis 7.2's setType* functions: an intset while every member is
 * a canonical integer and the count stays within set-max-intset-entries, a
 * listpack of members while the set is small (set-max-listpack-entries,
 * -value), else a dict of members (no values).  Integers are recognised with
 * Redis's string2ll rules (util_str_to_ll), so "01", "+1" or " 1" are
 * strings, and an intset member prints back exactly as it was added.
 *
 * Why a listpack: a small set of strings as a dict costs the dict (80
 * bytes), its bucket table and an entry per member (a 5-member set of
 * 7-byte members: about 340 bytes); as a listpack it is one allocation of a
 * header and 2 bytes of framing per member (64 bytes).  Lookups walk it
 * (O(n)), which the thresholds keep short, as for hashes and sorted sets.
 * Redis 7.0, the reference, has no listpack sets: what it holds as a
 * hashtable is a listpack or a hashtable here, and OBJECT ENCODING says
 * "hashtable" for both, so every reply matches 7.0's (a hashtable's member
 * order is unspecified; SSCAN returns a listpack whole, cursor 0, as Redis
 * does for its small encodings).
 *
 * Conversions (Redis 7.2's t_set.c): a string member added to an intset
 * makes a listpack when the intset's members and the new one fit the
 * listpack limits, else a hashtable; an intset past set-max-intset-entries
 * becomes a hashtable; a listpack past either listpack limit becomes a
 * hashtable.  Never back.
 *
 * Serialized form (cross-shard moves): one encoding byte, then
 *   intset:    the intset's own bytes (intset_data)
 *   listpack:  the listpack's own bytes (lp_data)
 *   hashtable: for each member, a 4-byte length (native order) and the bytes
 * deserialize() checks every length, rejects duplicate members and validates
 * the intset and listpack, so malformed input yields NULL, never a broken
 * set.
 *
 * Memory is O(1): the intset's or listpack's allocation, or the dict's
 * running figure.
 *
 * Threading: a set belongs to the shard thread that owns its object; the
 * random generator is thread-local.
 */
#include "percore/set.h"

#include "percore/intset.h"
#include "percore/listpack.h"
#include "percore/mem.h"
#include "percore/siphash.h"
#include "percore/util.h"

#include <assert.h>
#include <string.h>

#define SET_LP_SAFETY_SIZE (1u << 30) /* Redis LISTPACK_MAX_SAFETY_SIZE */

static _Thread_local uint64_t set_rng_state;

uint64_t set_rand(void)
{
    uint64_t x = set_rng_state;
    if (x == 0)
        x = (siphash_seed_k1() ^ (uint64_t)(uintptr_t)&set_rng_state) | 1;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    set_rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static bool member_int(const void *p, size_t n, int64_t *v)
{
    long long ll;
    if (!util_str_to_ll(p, n, &ll))
        return false;
    *v = ll;
    return true;
}

/* ---- objects */

struct object *set_create(enum set_encoding enc)
{
    switch (enc) {
    case SET_ENC_INTSET: return object_collection_create(OBJ_SET, SET_ENC_INTSET, intset_create());
    case SET_ENC_LISTPACK: return object_collection_create(OBJ_SET, SET_ENC_LISTPACK, lp_create());
    case SET_ENC_HASHTABLE: break;
    }
    return object_collection_create(OBJ_SET, SET_ENC_HASHTABLE, dict_create());
}

/* a listpack may take one more member of n bytes (Redis 7.2's setTypeAdd checks) */
static bool lp_fits(size_t count, size_t bytes, size_t n, const struct set_limits *lim)
{
    return (long long)count < lim->max_listpack_entries && (long long)n <= lim->max_listpack_value &&
           bytes + n <= SET_LP_SAFETY_SIZE;
}

struct object *set_create_for(const void *p, size_t n, const struct set_limits *lim)
{
    int64_t v;
    if (member_int(p, n, &v))
        return set_create(SET_ENC_INTSET);
    return set_create(lp_fits(0, 0, n, lim) ? SET_ENC_LISTPACK : SET_ENC_HASHTABLE);
}

enum set_encoding set_encoding(const struct object *o)
{
    return (enum set_encoding)object_collection_encoding(o);
}

struct dict *set_dict(const struct object *o)
{
    assert(set_encoding(o) == SET_ENC_HASHTABLE);
    return object_collection_ptr(o);
}

static size_t set_length(unsigned enc, const void *ptr)
{
    switch (enc) {
    case SET_ENC_INTSET: return intset_len(ptr);
    case SET_ENC_LISTPACK: return lp_count(ptr);
    default: return dict_size(ptr);
    }
}

size_t set_size(const struct object *o)
{
    return set_length(object_collection_encoding(o), object_collection_ptr(o));
}

/* an intset's members in a new listpack (ascending) or dict */
static void *intset_members(const struct intset *is, enum set_encoding to)
{
    struct listpack *lp = to == SET_ENC_LISTPACK ? lp_create() : NULL;
    struct dict *d = lp ? NULL : dict_create();
    for (size_t i = 0; i < intset_len(is); i++) {
        char buf[24];
        int len = util_ll_to_str(buf, intset_get(is, i));
        if (lp)
            lp_append(&lp, buf, (size_t)len);
        else
            dict_add(d, buf, (size_t)len, NULL);
    }
    return lp ? (void *)lp : (void *)d;
}

void set_convert_to_hashtable(struct object *o)
{
    unsigned enc = set_encoding(o);
    if (enc == SET_ENC_INTSET) {
        struct intset *is = object_collection_ptr(o);
        object_collection_set(o, SET_ENC_HASHTABLE, intset_members(is, SET_ENC_HASHTABLE));
        intset_destroy(&is);
    } else if (enc == SET_ENC_LISTPACK) {
        struct listpack *lp = object_collection_ptr(o);
        struct dict *d = dict_create();
        for (uint32_t pos = lp_first(lp); pos != LP_NONE; pos = lp_next(lp, pos)) {
            size_t len;
            const char *m = lp_get(lp, pos, &len);
            dict_add(d, m, len, NULL);
        }
        object_collection_set(o, SET_ENC_HASHTABLE, d);
        lp_destroy(&lp);
    }
}

/* Redis 7.2: a string member for an intset; a listpack if everything fits, else a hashtable */
static void intset_convert_for(struct object *o, size_t n, const struct set_limits *lim)
{
    struct intset *is = object_collection_ptr(o);
    size_t count = intset_len(is), longest = 0;
    if (count) {
        char buf[24];
        size_t a = (size_t)util_ll_to_str(buf, intset_get(is, 0));
        size_t b = (size_t)util_ll_to_str(buf, intset_get(is, count - 1));
        longest = a > b ? a : b;
    }
    /* the listpack's size bound assumes every member is as long as the longest */
    if (lp_fits(count, count * (longest + 2), n, lim) && (long long)longest <= lim->max_listpack_value) {
        object_collection_set(o, SET_ENC_LISTPACK, intset_members(is, SET_ENC_LISTPACK));
        intset_destroy(&is);
    } else {
        set_convert_to_hashtable(o);
    }
}

bool set_add(struct object *o, const void *p, size_t n, const struct set_limits *lim)
{
    if (set_encoding(o) == SET_ENC_INTSET) {
        int64_t v;
        if (member_int(p, n, &v)) {
            struct intset *is = object_collection_ptr(o);
            bool added = intset_add(&is, v);
            object_collection_set(o, SET_ENC_INTSET, is);
            if (added && (long long)intset_len(is) > lim->max_intset)
                set_convert_to_hashtable(o);
            return added;
        }
        intset_convert_for(o, n, lim);
    }
    if (set_encoding(o) == SET_ENC_LISTPACK) {
        struct listpack *lp = object_collection_ptr(o);
        if (lp_find(lp, lp_first(lp), p, n, 0) != LP_NONE)
            return false;
        if (lp_fits(lp_count(lp), lp_bytes(lp), n, lim)) {
            lp_append(&lp, p, n);
            object_collection_set(o, SET_ENC_LISTPACK, lp);
            return true;
        }
        set_convert_to_hashtable(o);
    }
    return dict_add(object_collection_ptr(o), p, n, NULL) != NULL;
}

bool set_remove(struct object *o, const void *p, size_t n)
{
    if (set_encoding(o) == SET_ENC_INTSET) {
        int64_t v;
        if (!member_int(p, n, &v))
            return false;
        struct intset *is = object_collection_ptr(o);
        bool removed = intset_remove(&is, v);
        object_collection_set(o, SET_ENC_INTSET, is);
        return removed;
    }
    if (set_encoding(o) == SET_ENC_LISTPACK) {
        struct listpack *lp = object_collection_ptr(o);
        uint32_t pos = lp_find(lp, lp_first(lp), p, n, 0);
        if (pos == LP_NONE)
            return false;
        lp_delete(&lp, pos);
        object_collection_set(o, SET_ENC_LISTPACK, lp);
        return true;
    }
    struct dict *d = object_collection_ptr(o);
    if (!dict_delete(d, p, n))
        return false;
    dict_compact(d); /* Redis: if (htNeedsResize) dictResize */
    return true;
}

bool set_is_member(struct object *o, const void *p, size_t n)
{
    if (set_encoding(o) == SET_ENC_INTSET) {
        int64_t v;
        return member_int(p, n, &v) && intset_find(object_collection_ptr(o), v);
    }
    if (set_encoding(o) == SET_ENC_LISTPACK) {
        const struct listpack *lp = object_collection_ptr(o);
        return lp_find(lp, lp_first(lp), p, n, 0) != LP_NONE;
    }
    /* no rehash step: multi-key reads must leave the sets' memory as it is */
    return dict_peek(object_collection_ptr(o), p, n) != NULL;
}

bool set_has_member(struct object *o, const struct set_member *m)
{
    if (m->is_int && set_encoding(o) == SET_ENC_INTSET)
        return intset_find(object_collection_ptr(o), m->v);
    return set_is_member(o, m->p, m->n);
}

/* ---- iteration and random members */

static void member_from_int(struct set_member *m, int64_t v)
{
    m->is_int = true;
    m->v = v;
    m->n = (size_t)util_ll_to_str(m->buf, v);
    m->p = m->buf;
}

static void member_from_entry(struct set_member *m, const struct dict_entry *e)
{
    m->is_int = false;
    m->v = 0;
    m->p = dict_entry_key(e, &m->n);
}

static void member_from_lp(struct set_member *m, const struct listpack *lp, uint32_t pos)
{
    m->is_int = false;
    m->v = 0;
    m->p = lp_get(lp, pos, &m->n);
}

void set_iter_init(struct set_iter *it, struct object *o)
{
    it->o = o;
    it->enc = object_collection_encoding(o);
    it->i = 0;
    if (it->enc == SET_ENC_HASHTABLE)
        dict_iter_init(&it->di, object_collection_ptr(o));
    else if (it->enc == SET_ENC_LISTPACK)
        it->pos = lp_first(object_collection_ptr(o));
}

bool set_iter_next(struct set_iter *it, struct set_member *m)
{
    if (it->enc == SET_ENC_INTSET) {
        struct intset *is = object_collection_ptr(it->o);
        if (it->i >= intset_len(is))
            return false;
        member_from_int(m, intset_get(is, it->i++));
        return true;
    }
    if (it->enc == SET_ENC_LISTPACK) {
        const struct listpack *lp = object_collection_ptr(it->o);
        if (it->pos == LP_NONE)
            return false;
        member_from_lp(m, lp, it->pos);
        it->pos = lp_next(lp, it->pos);
        return true;
    }
    struct dict_entry *e = dict_iter_next(&it->di);
    if (e == NULL)
        return false;
    member_from_entry(m, e);
    return true;
}

void set_random(struct object *o, struct set_member *m)
{
    if (set_encoding(o) == SET_ENC_INTSET) {
        struct intset *is = object_collection_ptr(o);
        assert(intset_len(is) > 0);
        member_from_int(m, intset_get(is, set_rand() % intset_len(is)));
        return;
    }
    if (set_encoding(o) == SET_ENC_LISTPACK) {
        const struct listpack *lp = object_collection_ptr(o);
        assert(lp_count(lp) > 0);
        member_from_lp(m, lp, lp_seek(lp, (long)(set_rand() % lp_count(lp))));
        return;
    }
    struct dict_entry *e = dict_random(object_collection_ptr(o));
    assert(e != NULL);
    member_from_entry(m, e);
}

/* ---- struct object_type_ops */

/* Redis 7.0 holds a listpack set's data as a hashtable (see the design note) */
static const char *set_encoding_name(unsigned enc)
{
    return enc == SET_ENC_INTSET ? "intset" : "hashtable";
}

static size_t set_memory(unsigned enc, const void *ptr)
{
    switch (enc) {
    case SET_ENC_INTSET: return intset_bytes(ptr);
    case SET_ENC_LISTPACK: return lp_bytes(ptr);
    default: return dict_memory(ptr);
    }
}

static void set_destroy(unsigned enc, void *ptr)
{
    if (enc == SET_ENC_INTSET) {
        struct intset *is = ptr;
        intset_destroy(&is);
    } else if (enc == SET_ENC_LISTPACK) {
        struct listpack *lp = ptr;
        lp_destroy(&lp);
    } else {
        struct dict *d = ptr;
        dict_destroy(&d);
    }
}

static bool set_destroy_step(unsigned enc, void *ptr, size_t budget)
{
    if (enc != SET_ENC_HASHTABLE) {
        set_destroy(enc, ptr);
        return true;
    }
    struct dict *d = ptr;
    return dict_destroy_step(&d, budget ? budget : 1);
}

static void set_serialize(unsigned enc, const void *ptr, object_emit_fn *emit, void *arg)
{
    uint8_t e = (uint8_t)enc;
    emit(arg, &e, 1);
    if (enc == SET_ENC_INTSET) {
        size_t len;
        const void *p = intset_data(ptr, &len);
        emit(arg, p, len);
        return;
    }
    if (enc == SET_ENC_LISTPACK) {
        size_t len;
        const void *p = lp_data(ptr, &len);
        emit(arg, p, len);
        return;
    }
    struct dict_iter it;
    struct dict_entry *de;
    dict_iter_init(&it, (struct dict *)ptr);
    while ((de = dict_iter_next(&it)) != NULL) {
        size_t n;
        const char *k = dict_entry_key(de, &n);
        uint32_t len = (uint32_t)n;
        emit(arg, &len, sizeof len);
        emit(arg, k, n);
    }
}

static void *set_deserialize(const void *p, size_t n, unsigned *encoding)
{
    const unsigned char *in = p;
    if (n < 1)
        return NULL;
    if (in[0] == SET_ENC_INTSET) {
        *encoding = SET_ENC_INTSET;
        return intset_from_data(in + 1, n - 1);
    }
    if (in[0] == SET_ENC_LISTPACK) {
        struct listpack *lp = lp_from_data(in + 1, n - 1);
        if (lp && !lp_unique(lp, 0))
            lp_destroy(&lp);
        *encoding = SET_ENC_LISTPACK;
        return lp;
    }
    if (in[0] != SET_ENC_HASHTABLE)
        return NULL;
    struct dict *d = dict_create();
    size_t pos = 1;
    while (pos < n) {
        uint32_t len;
        if (n - pos < sizeof len)
            goto bad;
        memcpy(&len, in + pos, sizeof len);
        pos += sizeof len;
        if (n - pos < len || dict_add(d, in + pos, len, NULL) == NULL)
            goto bad;
        pos += len;
    }
    *encoding = SET_ENC_HASHTABLE;
    return d;
bad:
    dict_destroy(&d);
    return NULL;
}

const struct object_type_ops set_type_ops = {
    .name = "set",
    .encoding_name = set_encoding_name,
    .length = set_length,
    .memory = set_memory,
    .destroy = set_destroy,
    .destroy_step = set_destroy_step,
    .serialize = set_serialize,
    .deserialize = set_deserialize,
};
