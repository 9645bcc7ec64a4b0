/*
 * dict: a hash table of binary-safe string keys with optional values
 * (see include/percore/dict.h).
 *
 * Design.  Redis's dict.c, cut down to what the collection types and the
 * keyspace (store.c) need: chained buckets in a power-of-two table, SipHash-1-3 under the process
 * seed (base/siphash.c), and incremental rehash with two tables while a
 * resize is in progress.  The table grows when it holds as many entries as
 * buckets and shrinks when under 10% full, to the smallest power of two that
 * holds the entries.
 *
 * Which operations move entries.  dict_find, dict_add and dict_random do one
 * rehash step (moving one bucket, visiting at most 10 empty ones) and may
 * start a resize; dict_delete never does, so deleting the entry an iterator
 * just returned is safe, as the header promises.  A dict emptied by deletes
 * shrinks on its next find/add/random, or when the owner calls
 * dict_compact() after a batch of deletes.
 *
 * Random entries are fair: every entry is drawn with the same probability.
 * A random bucket's random entry (Redis's dictGetRandomKey) is not: an entry
 * alone in its bucket comes up three times as often as one of a chain of
 * three.  Each table keeps an upper bound on its chains' length (chain_max:
 * raised when an add or a rehash move makes a chain longer, never lowered
 * by deletes, reset when the table is replaced), and a draw is rejection
 * sampling over slots (bucket, position < chain_max) of both tables' live
 * buckets: a slot holding an entry is taken, an empty one drawn again.  Each
 * entry owns exactly one slot, so each is equally likely.  A try costs a
 * bucket read and a short chain walk; about chain_max / load tries are
 * needed (a few to a few tens: the table is at least 10% full outside a
 * shrink).  A sparse table mid-shrink (a big dict emptied by deletes) would
 * need far more: after RANDOM_TRIES misses the draw moves the rehash on
 * (RANDOM_REHASH buckets), which removes the emptied old table from the draw.
 *
 * An entry is one allocation: the value in front (union dict_value), then
 * chain link, key and value lengths, and the key bytes inline (24 bytes +
 * key).  The value is a double (sorted sets) or a pointer to a separate copy
 * of the value bytes (hashes); which of the two the dict's entries hold is
 * remembered per dict (string values are freed with the entry).  Both start
 * as all-zero bits: NULL / 0.0.  A dict_create_meta dict has no value: its
 * owner's record takes that place (the store's keys: 8 bytes of access time
 * and LFU counter), and dict_add_tail puts the owner's bytes after the key,
 * 4-aligned (the store embeds the key's object there, whose fields need no
 * more: a key with a 16-byte string value is 24 + 16 + 8 + 16 = 64 bytes,
 * one allocation).  Such an entry may grow or shrink (dict_entry_resize_tail,
 * mem_resize so that a shrink gives memory back): reallocated and relinked
 * in place of the old one, found by its key's hash.
 *
 * The dict itself is 80 bytes (a small hash or set pays it per key): the
 * chain bounds are 32 bits (a chain is never 4G entries long) and sit with
 * the byte-sized fields, and a lazy free's walk position reuses the rehash
 * index (a dict being freed never rehashes).
 *
 * Memory: d->mem is kept with mem_usable() of every allocation (the dict,
 * the tables, entries, values), so dict_memory() is O(1).
 *
 * Lazy free (dict_destroy_step): the dict is detached by its owner and
 * freed a budget of entries at a time, the table walk position kept in the
 * dict.
 *
 * Threading: a dict belongs to one shard thread, like the object holding it.
 * The random generator is thread-local.
 */
#include "percore/dict.h"

#include "percore/mem.h"
#include "percore/siphash.h"
#include "percore/util.h"

#include <assert.h>
#include <string.h>

#define DICT_MIN 4            /* Redis DICT_HT_INITIAL_SIZE */
#define DICT_SHRINK_PCT 10    /* Redis HASHTABLE_MIN_FILL */
#define RANDOM_TRIES 64       /* draw tries before moving a rehash on */
#define RANDOM_REHASH 100     /* buckets such a draw moves (1000 empty visits at most) */

struct dict_table {
    struct dict_entry **bucket; /* 2^k chain heads, NULL when unused */
    size_t mask;                /* buckets - 1 (0 when unused) */
    size_t used;                /* entries in this table */
};

struct dict {
    struct dict_table ht[2]; /* ht[1] is used only while rehashing */
    long rehash;             /* next ht[0] bucket to move, -1 when not rehashing; dict_drain_step: next to free */
    size_t mem;              /* bytes held: dict, tables, entries, values */
    uint32_t chain_max[2];   /* no chain of ht[i] is longer (an upper bound: deletes keep it) */
    bool string_values;      /* entries' values' s are owned strings */
    uint8_t meta;            /* bytes in front of each entry: its value, or the owner's record */
    bool owner_meta;         /* dict_create_meta: those bytes are the owner's, not a value */
    uint8_t free_table;      /* dict_drain_step: 0 not begun, else 1 + the table being freed */
};

_Static_assert(sizeof(struct dict) == 80, "a small hash or set pays for the dict per key");

static _Thread_local uint64_t dict_rng_state;

static uint64_t hash_key(const void *key, size_t len)
{
    return siphash_seeded(key, len);
}

static bool rehashing(const struct dict *d)
{
    return d->rehash >= 0;
}

static size_t table_size(const struct dict_table *t)
{
    return t->bucket ? t->mask + 1 : 0;
}

/* ---- lifecycle */

/* the value of a dict_create() dict's entry, just in front of it */
static union dict_value *val_of(const struct dict_entry *e)
{
    return (union dict_value *)(void *)((char *)e - sizeof(union dict_value));
}

static struct dict *create(size_t meta, bool owner_meta)
{
    assert(meta % 8 == 0 && meta <= 248);
    struct dict *d = mem_calloc(1, sizeof *d);
    d->rehash = -1;
    d->meta = (uint8_t)meta;
    d->owner_meta = owner_meta;
    d->mem = mem_usable(d);
    return d;
}

struct dict *dict_create_meta(size_t meta)
{
    return create(meta, true);
}

struct dict *dict_create(void)
{
    return create(sizeof(union dict_value), false);
}

size_t dict_entry_memory(const struct dict *d, const struct dict_entry *e)
{
    return mem_usable((const char *)e - d->meta);
}

static void entry_release(struct dict *d, struct dict_entry *e)
{
    if (d->string_values && val_of(e)->s) {
        d->mem -= mem_usable(val_of(e)->s);
        mem_release(val_of(e)->s);
    }
    char *block = (char *)e - d->meta;
    d->mem -= mem_usable(block);
    mem_release(block);
}

static void table_release(struct dict *d, int i)
{
    struct dict_table *t = &d->ht[i];
    if (t->bucket) {
        d->mem -= mem_usable(t->bucket);
        mem_release(t->bucket);
    }
    *t = (struct dict_table){NULL, 0, 0};
    d->chain_max[i] = 0;
}

void dict_destroy(struct dict **dp)
{
    if (dp == NULL || *dp == NULL)
        return;
    while (!dict_destroy_step(dp, SIZE_MAX))
        ;
}

bool dict_destroy_step(struct dict **dp, size_t budget)
{
    return dict_drain_step(dp, budget, NULL, NULL);
}

bool dict_drain_step(struct dict **dp, size_t budget, dict_entry_fn *fn, void *arg)
{
    struct dict *d = *dp;
    if (d == NULL)
        return true;
    if (d->free_table == 0) {
        d->free_table = 1;
        d->rehash = 0;
    }
    size_t freed = 0;
    while (d->free_table <= 2) {
        struct dict_table *t = &d->ht[d->free_table - 1];
        while ((size_t)d->rehash < table_size(t)) {
            if (freed >= budget)
                return false;
            struct dict_entry *e = t->bucket[d->rehash];
            /* free the chain's head only, so a budget is honoured within a chain */
            if (e == NULL) {
                d->rehash++;
                continue;
            }
            t->bucket[d->rehash] = e->next;
            t->used--;
            if (fn)
                fn(arg, e);
            entry_release(d, e);
            freed++;
        }
        table_release(d, d->free_table - 1);
        d->free_table++;
        d->rehash = 0;
    }
    mem_release(d);
    *dp = NULL;
    return true;
}

size_t dict_size(const struct dict *d)
{
    return d->ht[0].used + d->ht[1].used;
}

size_t dict_memory(const struct dict *d)
{
    return d->mem;
}

/* ---- resizing */

/* head's chain is in ht[i]: keep its bound on chain lengths */
static void chain_note(struct dict *d, int i, const struct dict_entry *head)
{
    uint32_t n = 0;
    for (; head; head = head->next)
        n++;
    if (n > d->chain_max[i])
        d->chain_max[i] = n;
}

/* move up to n buckets from ht[0] to ht[1]; false once rehashing is done */
static bool rehash(struct dict *d, size_t n)
{
    size_t empty_visits = n * 10;
    if (!rehashing(d))
        return false;
    while (n-- && d->ht[0].used != 0) {
        assert((size_t)d->rehash <= d->ht[0].mask);
        while (d->ht[0].bucket[d->rehash] == NULL) {
            d->rehash++;
            if (--empty_visits == 0)
                return true;
        }
        struct dict_entry *e = d->ht[0].bucket[d->rehash];
        while (e) {
            struct dict_entry *next = e->next;
            size_t h = hash_key(e->key, e->klen) & d->ht[1].mask;
            e->next = d->ht[1].bucket[h];
            d->ht[1].bucket[h] = e;
            chain_note(d, 1, e);
            d->ht[0].used--;
            d->ht[1].used++;
            e = next;
        }
        d->ht[0].bucket[d->rehash++] = NULL;
    }
    if (d->ht[0].used != 0)
        return true;
    table_release(d, 0);
    d->ht[0] = d->ht[1];
    d->chain_max[0] = d->chain_max[1];
    d->ht[1] = (struct dict_table){NULL, 0, 0};
    d->chain_max[1] = 0;
    d->rehash = -1;
    return false;
}

bool dict_rehash(struct dict *d, size_t n)
{
    return rehash(d, n);
}

/* start resizing to the smallest power of two >= n (or create the table) */
static void resize(struct dict *d, size_t n)
{
    size_t size = DICT_MIN;
    while (size < n)
        size *= 2;
    if (rehashing(d) || size == table_size(&d->ht[0]))
        return;
    struct dict_table t = {mem_calloc(size, sizeof(struct dict_entry *)), size - 1, 0};
    d->mem += mem_usable(t.bucket);
    if (d->ht[0].bucket == NULL) {
        d->ht[0] = t;
        return;
    }
    d->ht[1] = t;
    d->rehash = 0;
}

static void maybe_shrink(struct dict *d)
{
    size_t size = table_size(&d->ht[0]);
    if (!rehashing(d) && size > DICT_MIN && d->ht[0].used * 100 < size * DICT_SHRINK_PCT)
        resize(d, d->ht[0].used);
}

/* the bookkeeping every find/add/random does: a rehash step, or a shrink */
static void maintain(struct dict *d)
{
    if (rehashing(d))
        rehash(d, 1);
    else
        maybe_shrink(d);
}

void dict_compact(struct dict *d)
{
    rehash(d, 1);
    maybe_shrink(d);
}

/* ---- lookups and changes */

/* inline: the keyspace's every GET and SET comes here */
static inline struct dict_entry *find(const struct dict *d, const void *key, size_t len, uint64_t h)
{
    for (int t = 0; t <= 1; t++) {
        if (d->ht[t].bucket == NULL)
            break;
        for (struct dict_entry *e = d->ht[t].bucket[h & d->ht[t].mask]; e; e = e->next)
            if (e->klen == len && memcmp(e->key, key, len) == 0)
                return e;
        if (!rehashing(d))
            break;
    }
    return NULL;
}

struct dict_entry *dict_find(struct dict *d, const void *key, size_t len)
{
    maintain(d);
    if (dict_size(d) == 0)
        return NULL;
    return find(d, key, len, hash_key(key, len));
}

struct dict_entry *dict_peek(const struct dict *d, const void *key, size_t len)
{
    if (dict_size(d) == 0)
        return NULL;
    return find(d, key, len, hash_key(key, len));
}

struct dict_entry *dict_add(struct dict *d, const void *key, size_t len, struct dict_entry **existing)
{
    return dict_add_tail(d, key, len, 0, existing);
}

/* bytes of an entry with a key of len and `tail` bytes of tail after it */
static size_t entry_size(const struct dict *d, size_t len, size_t tail)
{
    return d->meta + sizeof(struct dict_entry) + (tail ? ((len + 3) & ~(size_t)3) + tail : len);
}

struct dict_entry *dict_add_tail(struct dict *d, const void *key, size_t len, size_t tail,
                                 struct dict_entry **existing)
{
    assert(len <= UINT32_MAX);
    maintain(d);
    uint64_t h = hash_key(key, len);
    struct dict_entry *e = find(d, key, len, h);
    if (e) {
        if (existing)
            *existing = e;
        return NULL;
    }
    if (d->ht[0].bucket == NULL)
        resize(d, DICT_MIN);
    else if (!rehashing(d) && d->ht[0].used >= table_size(&d->ht[0]))
        resize(d, d->ht[0].used + 1);
    char *block = mem_alloc(entry_size(d, len, tail));
    e = (struct dict_entry *)(void *)(block + d->meta);
    if (!d->owner_meta)
        memset(val_of(e), 0, sizeof(union dict_value));
    e->klen = (uint32_t)len;
    e->aux = 0;
    memcpy(e->key, key, len);
    d->mem += mem_usable(block);
    int i = rehashing(d) ? 1 : 0;
    struct dict_table *t = &d->ht[i];
    size_t b = h & t->mask;
    e->next = t->bucket[b];
    t->bucket[b] = e;
    chain_note(d, i, e);
    t->used++;
    if (existing)
        *existing = NULL;
    return e;
}

bool dict_delete(struct dict *d, const void *key, size_t len)
{
    if (dict_size(d) == 0)
        return false;
    uint64_t h = hash_key(key, len);
    for (int t = 0; t <= 1 && d->ht[t].bucket; t++) {
        struct dict_entry **ref = &d->ht[t].bucket[h & d->ht[t].mask];
        for (; *ref; ref = &(*ref)->next) {
            struct dict_entry *e = *ref;
            if (e->klen == len && memcmp(e->key, key, len) == 0) {
                *ref = e->next;
                d->ht[t].used--;
                entry_release(d, e);
                return true;
            }
        }
        if (!rehashing(d))
            break;
    }
    return false;
}

/* ---- entries */

void dict_entry_set_value(struct dict *d, struct dict_entry *e, const void *p, size_t n)
{
    assert(n <= UINT32_MAX);
    union dict_value *v = val_of(e);
    d->string_values = true;
    if (v->s && e->aux >= n && mem_usable(v->s) <= 2 * (n + 16)) {
        /* reuse the block when it fits without wasting much */
        memcpy(v->s, p, n);
        e->aux = (uint32_t)n;
        return;
    }
    if (v->s) {
        d->mem -= mem_usable(v->s);
        mem_release(v->s);
    }
    v->s = mem_alloc(n ? n : 1);
    memcpy(v->s, p, n);
    e->aux = (uint32_t)n;
    d->mem += mem_usable(v->s);
}

const char *dict_entry_value(const struct dict_entry *e, size_t *len)
{
    const char *s = val_of(e)->s;
    if (len)
        *len = s ? e->aux : 0;
    return s;
}

void dict_entry_set_double(struct dict_entry *e, double v)
{
    val_of(e)->d = v;
}

double dict_entry_double(const struct dict_entry *e)
{
    return val_of(e)->d;
}

struct dict_entry *dict_entry_resize_tail(struct dict *d, struct dict_entry *e, size_t tail)
{
    uint64_t h = hash_key(e->key, e->klen);
    struct dict_entry **ref = NULL;
    for (int t = 0; t <= 1 && ref == NULL && d->ht[t].bucket; t++)
        for (struct dict_entry **r = &d->ht[t].bucket[h & d->ht[t].mask]; *r; r = &(*r)->next)
            if (*r == e) {
                ref = r;
                break;
            }
    assert(ref != NULL);
    char *block = (char *)e - d->meta;
    d->mem -= mem_usable(block);
    block = mem_resize(block, entry_size(d, e->klen, tail));
    d->mem += mem_usable(block);
    e = (struct dict_entry *)(void *)(block + d->meta);
    *ref = e;
    return e;
}

/* ---- random */

struct dict_entry *dict_random(struct dict *d)
{
    if (dict_size(d) == 0)
        return NULL;
    maintain(d);
    if (dict_rng_state == 0)
        dict_rng_state = (siphash_seed_k0() ^ (uint64_t)(uintptr_t)&dict_rng_state) | 1;
    uint64_t rng = dict_rng_state; /* a copy the tries keep in a register */
    struct dict_entry *e = NULL;
    while (e == NULL) {
        /* the live buckets: ht[0]'s from the rehash index (those below are empty), then ht[1]'s */
        size_t s0 = table_size(&d->ht[0]), s1 = table_size(&d->ht[1]);
        size_t lo = rehashing(d) ? (size_t)d->rehash : 0, span = s0 + s1 - lo;
        size_t slots = d->chain_max[0] > d->chain_max[1] ? d->chain_max[0] : d->chain_max[1];
        for (int tries = 0; e == NULL && tries < RANDOM_TRIES; tries++) {
            size_t i = lo + util_rand_below(&rng, span);
            e = i < s0 ? d->ht[0].bucket[i] : d->ht[1].bucket[i - s0];
            for (size_t k = util_rand_below(&rng, slots); e && k; k--)
                e = e->next;
        }
        if (e == NULL) {
            /* a sparse table (mass deletes): move its shrink on, or start it */
            rehash(d, RANDOM_REHASH);
            maybe_shrink(d);
        }
    }
    dict_rng_state = rng;
    return e;
}

void dict_sample(struct dict *d, size_t n, uint64_t *rng, dict_scan_fn *fn, void *arg)
{
    rehash(d, n);
    size_t entries = dict_size(d);
    if (entries == 0)
        return;
    size_t s0 = table_size(&d->ht[0]), s1 = table_size(&d->ht[1]);
    size_t lo = rehashing(d) ? (size_t)d->rehash : 0, span = s0 + s1 - lo;
    size_t width = entries <= n ? span : (n * span + entries - 1) / entries;
    size_t i = lo + util_rand_below(rng, span);
    for (; width; width--) {
        for (struct dict_entry *e = i < s0 ? d->ht[0].bucket[i] : d->ht[1].bucket[i - s0]; e; e = e->next)
            fn(arg, e);
        i = i + 1 < s0 + s1 ? i + 1 : lo;
    }
}

/* ---- iteration */

void dict_iter_init(struct dict_iter *it, struct dict *d)
{
    it->d = d;
    it->table = 0;
    it->bucket = 0;
    it->next = NULL;
}

struct dict_entry *dict_iter_next(struct dict_iter *it)
{
    struct dict *d = it->d;
    for (;;) {
        if (it->next) {
            struct dict_entry *e = it->next;
            it->next = e->next;
            return e;
        }
        if (it->table > 1)
            return NULL;
        const struct dict_table *t = &d->ht[it->table];
        if (it->bucket < table_size(t)) {
            it->next = t->bucket[it->bucket++];
            continue;
        }
        it->table++;
        it->bucket = 0;
    }
}

/* ---- SCAN */

/* Redis rev(): reverse the bits of v */
static uint64_t rev64(uint64_t v)
{
    unsigned sh = 64;
    uint64_t mask = ~0ULL;
    while ((sh >>= 1) > 0) {
        mask ^= (mask << sh);
        v = ((v >> sh) & mask) | ((v << sh) & ~mask);
    }
    return v;
}

static void scan_bucket(const struct dict_entry *e, dict_scan_fn *fn, void *arg)
{
    while (e) {
        const struct dict_entry *next = e->next;
        fn(arg, e);
        e = next;
    }
}

uint64_t dict_scan(struct dict *d, uint64_t v, dict_scan_fn *fn, void *arg)
{
    if (dict_size(d) == 0)
        return 0;
    if (!rehashing(d)) {
        uint64_t m0 = d->ht[0].mask;
        scan_bucket(d->ht[0].bucket[v & m0], fn, arg);
        v |= ~m0;
        return rev64(rev64(v) + 1);
    }
    const struct dict_table *t0 = &d->ht[0], *t1 = &d->ht[1];
    if (t0->mask > t1->mask) {
        const struct dict_table *tmp = t0;
        t0 = t1;
        t1 = tmp;
    }
    uint64_t m0 = t0->mask, m1 = t1->mask;
    scan_bucket(t0->bucket[v & m0], fn, arg);
    do {
        scan_bucket(t1->bucket[v & m1], fn, arg);
        v |= ~m1;
        v = rev64(rev64(v) + 1);
    } while (v & (m0 ^ m1));
    return v;
}

void dict_entry_set_pointer(struct dict *d, struct dict_entry *e, void *p)
{
    dict_entry_set_value(d, e, &p, sizeof p);
}

void *dict_entry_pointer(const struct dict_entry *e)
{
    size_t len;
    const char *v = dict_entry_value(e, &len);
    void *p = NULL;
    if (len == sizeof p)
        memcpy(&p, v, sizeof p);
    return p;
}

void dict_dbkey_make(struct dict_dbkey *k, int db, const char *key, size_t len)
{
    int32_t d = db;
    k->len = sizeof d + len;
    k->p = k->len <= sizeof k->inline_buf ? k->inline_buf : mem_alloc(k->len);
    memcpy(k->p, &d, sizeof d);
    memcpy(k->p + sizeof d, key, len);
}

void dict_dbkey_done(struct dict_dbkey *k)
{
    if (k->p != k->inline_buf)
        mem_release(k->p);
}

int dict_dbkey_split(const char *k, size_t klen, const char **key, size_t *len)
{
    int32_t db;
    memcpy(&db, k, sizeof db);
    *key = k + sizeof db;
    *len = klen - sizeof db;
    return db;
}
