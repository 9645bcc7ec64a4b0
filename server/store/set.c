/*
 * set: the set type's data side (see include/percore/set.h) and its
 * struct object_type_ops.
 *
 * Design.  Redis 7.0's setType* functions: an intset while every member is
 * a canonical integer and the count stays within set-max-intset-entries,
 * else a dict of members (no values).  Integers are recognised with Redis's
 * string2ll rules (util_str_to_ll), so "01", "+1" or " 1" are strings, and
 * an intset member prints back exactly as it was added.
 *
 * Serialized form (cross-shard moves): one encoding byte, then
 *   intset:    the intset's own bytes (intset_data)
 *   hashtable: for each member, a 4-byte length (native order) and the bytes
 * deserialize() checks every length, rejects duplicate members and validates
 * the intset, so malformed input yields NULL, never a broken set.
 *
 * Memory is O(1): the intset's allocation or the dict's running figure.
 *
 * Threading: a set belongs to the shard thread that owns its object; the
 * random generator is thread-local.
 */
#include "percore/set.h"

#include "percore/intset.h"
#include "percore/mem.h"
#include "percore/siphash.h"
#include "percore/util.h"

#include <assert.h>
#include <string.h>

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
    if (enc == SET_ENC_INTSET)
        return object_collection_create(OBJ_SET, SET_ENC_INTSET, intset_create());
    return object_collection_create(OBJ_SET, SET_ENC_HASHTABLE, dict_create());
}

struct object *set_create_for(const void *p, size_t n)
{
    int64_t v;
    return set_create(member_int(p, n, &v) ? SET_ENC_INTSET : SET_ENC_HASHTABLE);
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

size_t set_size(const struct object *o)
{
    void *ptr = object_collection_ptr(o);
    return set_encoding(o) == SET_ENC_INTSET ? intset_len(ptr) : dict_size(ptr);
}

void set_convert_to_hashtable(struct object *o)
{
    if (set_encoding(o) != SET_ENC_INTSET)
        return;
    struct intset *is = object_collection_ptr(o);
    struct dict *d = dict_create();
    for (size_t i = 0; i < intset_len(is); i++) {
        char buf[24];
        int len = util_ll_to_str(buf, intset_get(is, i));
        dict_add(d, buf, (size_t)len, NULL);
    }
    object_collection_set(o, SET_ENC_HASHTABLE, d);
    intset_destroy(&is);
}

bool set_add(struct object *o, const void *p, size_t n, long long max_intset)
{
    if (set_encoding(o) == SET_ENC_INTSET) {
        int64_t v;
        if (member_int(p, n, &v)) {
            struct intset *is = object_collection_ptr(o);
            bool added = intset_add(&is, v);
            object_collection_set(o, SET_ENC_INTSET, is);
            if (added && (long long)intset_len(is) > max_intset)
                set_convert_to_hashtable(o);
            return added;
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

void set_iter_init(struct set_iter *it, struct object *o)
{
    it->o = o;
    it->enc = object_collection_encoding(o);
    it->i = 0;
    if (it->enc == SET_ENC_HASHTABLE)
        dict_iter_init(&it->di, object_collection_ptr(o));
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
    struct dict_entry *e = dict_random(object_collection_ptr(o));
    assert(e != NULL);
    member_from_entry(m, e);
}

/* ---- struct object_type_ops */

static const char *set_encoding_name(unsigned enc)
{
    return enc == SET_ENC_INTSET ? "intset" : "hashtable";
}

static size_t set_length(unsigned enc, const void *ptr)
{
    return enc == SET_ENC_INTSET ? intset_len(ptr) : dict_size(ptr);
}

static size_t set_memory(unsigned enc, const void *ptr)
{
    return enc == SET_ENC_INTSET ? intset_bytes(ptr) : dict_memory(ptr);
}

static void set_destroy(unsigned enc, void *ptr)
{
    if (enc == SET_ENC_INTSET) {
        struct intset *is = ptr;
        intset_destroy(&is);
    } else {
        struct dict *d = ptr;
        dict_destroy(&d);
    }
}

static bool set_destroy_step(unsigned enc, void *ptr, size_t budget)
{
    if (enc == SET_ENC_INTSET) {
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
