/*
 * store: one shard's keyspace (see include/percore/store.h).
 *
 * Design.  Each database is a dict (dict.c: the project's one hash table,
 * chained, power-of-two, SipHash-1-3 under the 16-byte per-process seed,
 * incremental rehash as in Redis's dict.c: while a resize is in progress
 * every lookup/insert/delete moves one bucket, and store_rehash_step() moves
 * more while the shard is idle; it grows when it holds as many keys as
 * buckets and shrinks when under 10% full), so no operation costs time
 * proportional to the table.
 *
 * A key is one dict entry, a single allocation: the store's record in front
 * (struct key_meta: access time and LFU counter, dict_create_meta), then the
 * chain link, key length, TTL index (aux), the key bytes inline and, 4-aligned
 * after them (the entry's tail, dict_add_tail), the key's object itself,
 * embedded (object.h): a collection's 16-byte header, a string's header
 * and, up to 64 bytes, its bytes (24 bytes + key + 16 or more), or a small
 * hash packed whole, its listpack after a 2-byte header (a 17-byte key with
 * 5 short fields: one 112-byte block).  A 16-byte key
 * with a 16-byte value is one 64-byte block, where an entry pointing at an
 * object of its own took 48 + 32.  store_set() moves the caller's object in
 * (store_set_string() builds a string there directly); a value that needs
 * more room than the entry has grows the entry (dict_entry_resize_tail: it may
 * move, and its TTL slot is pointed at the new place); after a packed hash
 * was changed (taken out of the entry to be written, object_collection_own),
 * store_settle() resizes the entry to what the hash now needs, moving it
 * the same way, and packs it again if it still fits; a key taken out
 * (store_take, MOVE) or a big collection sent to the lazy free list leaves
 * as a copy in a block of its own (object_unembed).  The expire time is
 * not in the entry: keys with a TTL also sit in the db's TTL array, slots of
 * {entry, when} kept in fixed chunks (so growing it never copies more than
 * the small chunk directory), and the entry holds its slot index.  A key
 * without a TTL so pays nothing for expiry; removal from the array is a swap
 * with the last slot.  Active expiry walks the array with a rolling cursor,
 * one slot per sample (O(1)), so every TTL key is eventually examined.
 *
 * Memory accounting (store_memory) is kept incrementally with mem_usable()
 * of every allocation: TTL chunks and what objects hold beyond their entry
 * here, the dicts' tables and entries (the embedded object with them) in
 * each dict (dict_memory).  Objects grow
 * in place (APPEND, SETRANGE) without telling the store, so the last few
 * objects handed out by store_lookup() are remembered with the size they
 * were accounted at and re-measured when they fall out of that small ring,
 * when they are removed or replaced, and by store_memory() itself.  So a
 * caller must finish mutating a looked-up object in place before it looks
 * up STORE_DIRTY_MAX more keys (every command does: it mutates the one or
 * two values it just looked up).
 *
 * Random keys are fair (RANDOMKEY, allkeys-random eviction): every key is
 * drawn with the same probability (dict_random, see dict.c).
 *
 * Eviction (store_evict) follows Redis's evict.c: a pool of the 16 best
 * candidates (EVPOOL_SIZE), sorted by score (higher = evict first: idle
 * seconds for LRU, 255 - counter for LFU, each with 32 random low bits that
 * break ties; the inverse of the expire time for TTL), filled with about
 * `samples` keys per database per round; the best candidate still present
 * is evicted.  The pool holds copies of the keys (their entries may be
 * deleted between two calls) and is looked up again before eviction.
 * Allkeys sampling takes every key of a window of consecutive buckets at a
 * random place, as wide as `samples` keys need on average, so that every
 * key is sampled with the same probability (dict_sample); volatile sampling picks random slots of the TTL
 * array.  With the random tie-break, among keys alike (the same idle time or
 * counter) none is favoured.
 *
 * FLUSHDB of a large db detaches its dict and frees it in time-boxed
 * steps from store_rehash_step() (its memory stays counted until freed);
 * small dbs are freed at once, and store_destroy() frees everything.
 *
 * Snapshots (BGSAVE without a fork): beginning one flips the store's
 * parity bit, so every key's mark (in its key_meta's spare byte) says "not
 * out yet"; the walk hands keys out bucket by bucket (dict_scan, so keys
 * moved by a rehash are met at least once and the mark makes it once), and
 * every path that reaches a key to read, replace or remove it (find_live,
 * set_entry, unlink_entry, a db's flush) hands it out first.  New keys are
 * born marked.  The cost when no snapshot runs: a test of s->snap on a
 * lookup and on a set (callgrind SET/GET, threads 1: P1 2,275 -> 2,275,
 * P16 1,435 -> 1,441 Ir per request).
 *
 * SCAN is Redis's reverse-binary cursor (dict_scan), visiting both tables
 * while rehashing.  Expired keys it meets are skipped and deleted after the
 * step's callbacks, never while walking a chain.
 *
 * Threading: a store and everything in it belong to one shard thread
 * (ARCHITECTURE.md rule 1).  The seed is written once before any store exists.
 */
#include "percore/store.h"

#include "percore/dict.h"
#include "percore/mem.h"
#include "percore/siphash.h"
#include "percore/util.h"

#include <assert.h>
#include <stdatomic.h>
#include <string.h>

#define TTL_NONE UINT32_MAX     /* entry has no TTL slot */
#define TTL_CHUNK 512           /* TTL slots per chunk (8 KiB) */
#define EXPIRE_SAMPLE 20        /* Redis ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP */
#define EXPIRE_STALE_PCT 10     /* repeat while more than this % expired */
#define SCAN_REAP_MAX 64        /* expired keys a scan call deletes at most */
#define RANDOM_TRIES 100        /* expired keys RANDOMKEY deletes before giving up */
#define FLUSH_SYNC_MAX 4096     /* a flushed db this small is freed at once */
#define IDLE_BUDGET_NS 1000000  /* store_rehash_step: 1 ms of work at most */
#define STORE_DIRTY_MAX 4       /* looked-up objects re-measured later */
#define EVPOOL_SIZE 16          /* Redis: candidates kept between eviction rounds */
#define EVPOOL_KEY 255          /* pool candidates' inline key room (EVPOOL_CACHED_SDS_SIZE) */
#define EVICT_BUDGET_NS 500000  /* Redis evictionTimeLimitUs at maxmemory-eviction-tenacity 10 */
#define LFU_INIT_VAL 5          /* a new key's counter */

/* what the store keeps of a key besides its value and TTL slot: the record in front of its entry */
struct key_meta {
    uint32_t atime;       /* last access, unix seconds (OBJECT IDLETIME, LRU) */
    uint16_t ldt;         /* LFU: unix minutes (mod 2^16) of the last decrement */
    uint8_t lfu;          /* LFU: logarithmic access counter */
    uint8_t snap;         /* the snapshot parity it was handed out under (see store_snapshot_begin) */
};

_Static_assert(sizeof(struct key_meta) == 8, "a key's entry stays 32 bytes + key");

/* the key's object, embedded in its entry */
static inline struct object *entry_obj(const struct dict_entry *e)
{
    return dict_entry_tail(e);
}

static struct key_meta *meta_of(struct dict_entry *e)
{
    return dict_entry_meta(e, sizeof(struct key_meta));
}

static const struct key_meta *meta_peek(const struct dict_entry *e)
{
    return (const struct key_meta *)(const void *)((const char *)e - sizeof(struct key_meta));
}

struct ttl_slot {
    struct dict_entry *e; /* the key */
    int64_t when;    /* absolute expire, unix ms */
};

struct db {
    struct dict *keys;        /* key -> object (the tail), TTL slot (aux), key_meta in front */
    struct ttl_slot **ttl;    /* chunk directory of the TTL array */
    size_t ttl_len;           /* slots in use */
    size_t ttl_chunks;        /* chunks allocated */
    size_t ttl_dir_cap;       /* directory capacity, in chunks */
    size_t ttl_cursor;        /* active expiry's position in the TTL array */
};

struct dead_dict {
    struct dict *keys;       /* a flushed db's keys being freed */
    struct dead_dict *next;  /* next pending one */
};

struct dirty {
    struct object *o; /* object handed out by store_lookup */
    size_t mem;       /* object_memory(o) as currently accounted */
};

/* an eviction candidate; empty when db < 0 */
struct evict_cand {
    uint64_t score;              /* higher: evicted first */
    int db;                      /* its database, -1 for an empty slot */
    uint32_t klen;               /* key length */
    char *key;                   /* `inline` or an allocation for a longer key */
    char inline_key[EVPOOL_KEY]; /* room for the usual key */
};

struct store {
    int databases;               /* number of dbs */
    bool copies;                 /* holds copies of some keys of other stores (store_mark_copies) */
    bool every_key;              /* and they are every key the command run on them reads */
    int expire_db;               /* db where the next active expiry starts */
    struct db *db;               /* the dbs */
    size_t mem;                  /* bytes accounted (see the design note) */
    uint64_t expired;            /* keys removed because expired */
    uint64_t rng;                /* xorshift state for sampling */
    struct dead_dict *dead;      /* flushed dbs' keys still to free */
    struct dirty dirty[STORE_DIRTY_MAX]; /* ring of recently looked-up objects */
    unsigned dirty_next;         /* ring slot to use next */
    uint32_t clock;              /* unix seconds of the latest `now` seen */
    struct object **lazy;        /* big collections being freed in steps */
    size_t lazy_len;
    size_t lazy_cap;
    uint64_t evicted;            /* keys removed by store_evict */
    bool track_lfu;              /* store_lookup updates LFU counters */
    int lfu_log_factor;          /* lfu-log-factor: how slowly the counter grows */
    int lfu_decay_time;          /* lfu-decay-time: idle minutes per decrement, 0 none */
    int evict_db;                /* RANDOM eviction: the db to try next */
    struct evict_cand **pool;    /* EVPOOL_SIZE candidates, best last, empty ones at the end */
    store_gone_fn *gone;         /* told of every key that expires or is evicted, NULL none */
    void *gone_arg;
    bool first;                  /* store_set_first */
    uint8_t snap_parity;         /* a key whose snap differs is not yet out to the snapshot */
    struct snapshot *snap;       /* the snapshot under way, NULL none */
};

/* a snapshot under way: its listener, and its walk of the dbs */
struct snapshot {
    store_snapshot_fn *fn;
    void *arg;
    int *origin;                 /* origin[i]: the db index, at its start, of the keys now in db i (SWAPDB) */
    int walk;                    /* the origin db being walked, databases when the walk is over */
    uint64_t cursor;             /* its dict_scan cursor */
    struct dict_entry **seen;    /* entries a dict_scan step met, handed out after it */
    size_t seen_len;
    size_t seen_cap;
};

/* collections with more elements than this are freed in steps (Redis's LAZYFREE_THRESHOLD) */
#define LAZYFREE_MIN 64
#define LAZYFREE_STEP_IDLE 65536  /* elements freed per timer tick */

void store_set_seed(const uint8_t seed[16])
{
    siphash_set_seed(seed);
}

/* ---- helpers */

static struct db *store_db(const struct store *s, int db)
{
    assert(db >= 0 && db < s->databases);
    return &s->db[db];
}

static struct ttl_slot *ttl_at(const struct db *d, size_t i)
{
    return &d->ttl[i / TTL_CHUNK][i % TTL_CHUNK];
}

static bool entry_expired(const struct db *d, const struct dict_entry *e, int64_t now)
{
    return e->aux != TTL_NONE && now > ttl_at(d, e->aux)->when;
}

/* ---- memory accounting of objects that may have grown in place */

static void dirty_sync(struct store *s, struct dirty *dd)
{
    size_t m = object_memory(dd->o);
    s->mem += m - dd->mem;
    dd->o = NULL;
}

static void dirty_add(struct store *s, struct object *o)
{
    for (int i = 0; i < STORE_DIRTY_MAX; i++)
        if (s->dirty[i].o == o)
            return;
    struct dirty *dd = &s->dirty[s->dirty_next];
    s->dirty_next = (s->dirty_next + 1) % STORE_DIRTY_MAX;
    if (dd->o)
        dirty_sync(s, dd);
    dd->o = o;
    dd->mem = object_memory(o);
}

/* bring o's accounting up to date (it may have grown since it was handed out) */
static void dirty_forget(struct store *s, const struct object *o)
{
    for (int i = 0; i < STORE_DIRTY_MAX; i++)
        if (s->dirty[i].o == o)
            dirty_sync(s, &s->dirty[i]);
}

/* o's accounted bytes, brought up to date, and o out of the ring (it is about to move or go) */
static size_t dirty_drop(struct store *s, const struct object *o)
{
    size_t m = object_memory(o);
    for (int i = 0; i < STORE_DIRTY_MAX; i++)
        if (s->dirty[i].o == o) {
            s->mem += m - s->dirty[i].mem;
            s->dirty[i].o = NULL;
        }
    return m;
}

static void dirty_sync_all(struct store *s)
{
    for (int i = 0; i < STORE_DIRTY_MAX; i++)
        if (s->dirty[i].o)
            dirty_sync(s, &s->dirty[i]);
}

/* ---- the TTL array */

static void ttl_add(struct store *s, struct db *d, struct dict_entry *e, int64_t when)
{
    if (d->ttl_len == d->ttl_chunks * TTL_CHUNK) {
        if (d->ttl_chunks == d->ttl_dir_cap) {
            size_t cap = d->ttl_dir_cap ? d->ttl_dir_cap * 2 : 4;
            s->mem -= mem_usable(d->ttl);
            d->ttl = mem_realloc(d->ttl, cap * sizeof *d->ttl);
            s->mem += mem_usable(d->ttl);
            d->ttl_dir_cap = cap;
        }
        struct ttl_slot *c = mem_alloc(TTL_CHUNK * sizeof *c);
        s->mem += mem_usable(c);
        d->ttl[d->ttl_chunks++] = c;
    }
    assert(d->ttl_len < TTL_NONE);
    e->aux = (uint32_t)d->ttl_len;
    *ttl_at(d, d->ttl_len++) = (struct ttl_slot){e, when};
}

static void ttl_release(struct store *s, struct db *d)
{
    for (size_t i = 0; i < d->ttl_chunks; i++) {
        s->mem -= mem_usable(d->ttl[i]);
        mem_release(d->ttl[i]);
    }
    s->mem -= mem_usable(d->ttl);
    mem_release(d->ttl);
    d->ttl = NULL;
    d->ttl_len = d->ttl_chunks = d->ttl_dir_cap = d->ttl_cursor = 0;
}

static void ttl_remove(struct store *s, struct db *d, struct dict_entry *e)
{
    size_t i = e->aux, last = --d->ttl_len;
    if (i != last) {
        *ttl_at(d, i) = *ttl_at(d, last);
        ttl_at(d, i)->e->aux = (uint32_t)i;
    }
    e->aux = TTL_NONE;
    if (d->ttl_len == 0) {
        ttl_release(s, d);
    } else if (d->ttl_len + 2 * TTL_CHUNK <= d->ttl_chunks * TTL_CHUNK) {
        /* keep one spare chunk so a key hovering at a boundary doesn't thrash */
        struct ttl_slot *c = d->ttl[--d->ttl_chunks];
        s->mem -= mem_usable(c);
        mem_release(c);
    }
}

/* ---- keys' entries */

/* a new entry (from dict_add_tail): its record and TTL index; its object is the caller's to put */
static void entry_init(struct store *s, struct dict_entry *e)
{
    struct key_meta *m = meta_of(e);
    e->aux = TTL_NONE;
    m->atime = s->clock;
    m->ldt = (uint16_t)(s->clock / 60);
    m->lfu = LFU_INIT_VAL;
    m->snap = s->snap_parity; /* a key new since a snapshot began is not in it */
}

/* ---- snapshot: every key as of its start, handed out once, before anything changes it */

static unsigned lfu_decayed(const struct store *s, const struct key_meta *m, uint32_t now_s);

/* e of d, if the snapshot does not have it yet: handed out as it is now */
static void snapshot_save(struct store *s, struct db *d, struct dict_entry *e)
{
    struct key_meta *m = meta_of(e);
    if (m->snap == s->snap_parity)
        return;
    m->snap = s->snap_parity;
    long long idle = (long long)s->clock - (long long)m->atime;
    struct store_snapshot_key k = {
        .db = s->snap->origin[d - s->db],
        .key = e->key,
        .klen = e->klen,
        .val = entry_obj(e),
        .expire = e->aux != TTL_NONE ? ttl_at(d, e->aux)->when : -1,
        .idle_s = idle > 0 ? idle : 0,
        .freq = (int)lfu_decayed(s, m, s->clock),
    };
    s->snap->fn(s->snap->arg, &k);
}

/* an embedded object whose room is about to be freed or reused: what it holds is freed, or (a
 * big collection) goes to the lazy list as a copy of its own */
static void release_object(struct store *s, struct object *o)
{
    if (object_length(o) <= LAZYFREE_MIN) {
        object_destroy(&o);
        return;
    }
    o = object_unembed(o);
    if (s->lazy_len == s->lazy_cap) {
        s->lazy_cap = s->lazy_cap ? s->lazy_cap * 2 : 8;
        s->lazy = mem_realloc(s->lazy, s->lazy_cap * sizeof(*s->lazy));
    }
    s->lazy[s->lazy_len++] = o;
}

bool store_lazyfree_step(struct store *s, size_t budget)
{
    while (s->lazy_len) {
        if (!object_destroy_step(&s->lazy[s->lazy_len - 1], budget))
            return true;
        s->lazy_len--;
        budget = budget > LAZYFREE_MIN ? budget - LAZYFREE_MIN : 1;
    }
    return false;
}

bool store_lazyfree_pending(const struct store *s)
{
    return s->lazy_len != 0;
}

/* remove e from d (and the TTL array), its object released or (keep) handed back in a block of
 * its own; e is freed */
static struct object *unlink_entry(struct store *s, struct db *d, struct dict_entry *e, bool keep)
{
    if (s->snap)
        snapshot_save(s, d, e);
    struct object *val = entry_obj(e);
    if (e->aux != TTL_NONE)
        ttl_remove(s, d, e);
    dirty_forget(s, val);
    s->mem -= object_memory(val);
    if (keep)
        val = object_unembed(val);
    else
        release_object(s, val);
    dict_delete(d->keys, e->key, e->klen);
    dict_compact(d->keys);
    return keep ? val : NULL;
}

static void delete_entry(struct store *s, struct db *d, struct dict_entry *e)
{
    unlink_entry(s, d, e, false);
}

void store_set_gone_listener(struct store *s, store_gone_fn *fn, void *arg)
{
    s->gone = fn;
    s->gone_arg = arg;
}

void store_set_first(struct store *s) { s->first = true; }
bool store_is_first(const struct store *s) { return s->first; }

static void delete_gone(struct store *s, struct db *d, struct dict_entry *e, enum store_gone why)
{
    if (s->gone)
        s->gone(s->gone_arg, why, (int)(d - s->db), e->key, e->klen);
    delete_entry(s, d, e);
}

static atomic_bool keep_expired;

void store_keep_expired(bool on) { atomic_store_explicit(&keep_expired, on, memory_order_relaxed); }

/* an expired key is deleted when met, but on a replica (kept, hidden) */
static bool reap_expired(void) { return !atomic_load_explicit(&keep_expired, memory_order_relaxed); }

static void delete_expired(struct store *s, struct db *d, struct dict_entry *e)
{
    delete_gone(s, d, e, STORE_GONE_EXPIRED);
    s->expired++;
}

/* a live entry for key, reaping it if expired */
static struct dict_entry *find_live(struct store *s, struct db *d, const char *key, size_t klen,
                                    int64_t now)
{
    struct dict_entry *e = dict_find(d->keys, key, klen);
    if (e == NULL)
        return NULL;
    if (s->snap) /* whatever the caller does next, the snapshot has the key as it was */
        snapshot_save(s, d, e);
    if (entry_expired(d, e, now)) {
        if (reap_expired())
            delete_expired(s, d, e);
        return NULL;
    }
    return e;
}

/* ---- lifecycle */

struct store *store_create(int databases)
{
    assert(databases > 0);
    struct store *s = mem_calloc(1, sizeof *s);
    s->databases = databases;
    s->db = mem_calloc((size_t)databases, sizeof *s->db);
    for (int i = 0; i < databases; i++)
        s->db[i].keys = dict_create_meta(sizeof(struct key_meta));
    s->rng = (siphash_seed_k0() ^ (uint64_t)(uintptr_t)s) | 1;
    s->lfu_log_factor = 10; /* Redis's defaults */
    s->lfu_decay_time = 1;
    s->mem = mem_usable(s) + mem_usable(s->db);
    return s;
}

/* an entry of a db being freed (dict_drain_step): its object goes (its TTL array is gone already) */
static void drop_entry(void *arg, struct dict_entry *e)
{
    struct store *s = arg;
    dirty_forget(s, entry_obj(e));
    s->mem -= object_memory(entry_obj(e));
    release_object(s, entry_obj(e));
}

/* free up to the deadline (0: everything); true if all dead dicts are gone */
static bool dead_release(struct store *s, int64_t deadline)
{
    while (s->dead) {
        struct dead_dict *dd = s->dead;
        while (!dict_drain_step(&dd->keys, deadline ? 128 : SIZE_MAX, drop_entry, s))
            if (util_mono_ns() > deadline)
                return false;
        s->dead = dd->next;
        s->mem -= mem_usable(dd);
        mem_release(dd);
    }
    return true;
}

static void snapshot_save_db(struct store *s, struct db *d);

static void db_flush(struct store *s, struct db *d)
{
    if (s->snap) /* at once: the snapshot does not follow a flushed dict to its lazy free */
        snapshot_save_db(s, d);
    if (d->ttl)
        ttl_release(s, d);
    if (dict_size(d->keys) > FLUSH_SYNC_MAX) {
        struct dead_dict *dd = mem_alloc(sizeof *dd);
        *dd = (struct dead_dict){d->keys, s->dead};
        s->mem += mem_usable(dd);
        s->dead = dd;
    } else {
        dict_drain_step(&d->keys, SIZE_MAX, drop_entry, s);
    }
    d->keys = dict_create_meta(sizeof(struct key_meta));
}

void store_destroy(struct store **sp)
{
    if (sp == NULL || *sp == NULL)
        return;
    struct store *s = *sp;
    for (int i = 0; i < s->databases; i++) {
        struct db *d = &s->db[i];
        if (d->ttl)
            ttl_release(s, d);
        dict_drain_step(&d->keys, SIZE_MAX, drop_entry, s);
    }
    dead_release(s, 0);
    store_snapshot_abort(s);
    for (size_t i = 0; i < s->lazy_len; i++)
        object_destroy(&s->lazy[i]);
    mem_release(s->lazy);
    if (s->pool) {
        for (int i = 0; i < EVPOOL_SIZE; i++) {
            if (s->pool[i]->key != s->pool[i]->inline_key)
                mem_release(s->pool[i]->key);
            mem_release(s->pool[i]);
        }
        mem_release(s->pool);
    }
    mem_release(s->db);
    mem_release(s);
    *sp = NULL;
}

int store_databases(const struct store *s)
{
    return s->databases;
}

/* ---- LFU (Redis's evict.c, the counter's 8 bits and 16 bits of minutes kept apart) */

/* the counter after its decay: one per lfu-decay-time minutes since ldt (Redis's LFUDecrAndReturn) */
static unsigned lfu_decayed(const struct store *s, const struct key_meta *m, uint32_t now_s)
{
    uint16_t now_min = (uint16_t)(now_s / 60);
    unsigned elapsed = now_min >= m->ldt ? (unsigned)(now_min - m->ldt) : 65535u - m->ldt + now_min;
    unsigned periods = s->lfu_decay_time > 0 ? elapsed / (unsigned)s->lfu_decay_time : 0;
    return periods > m->lfu ? 0 : m->lfu - periods;
}

/* an access: decay, then increment with probability 1 / ((counter - 5) * lfu-log-factor + 1) */
static void lfu_touch(struct store *s, struct key_meta *m)
{
    unsigned counter = lfu_decayed(s, m, s->clock);
    if (counter < 255) {
        uint64_t base = counter > LFU_INIT_VAL ? counter - LFU_INIT_VAL : 0;
        uint64_t odds = base * (uint64_t)s->lfu_log_factor + 1;
        uint64_t r = util_rand(&s->rng) >> 32; /* uniform in [0, 2^32): r * odds < 2^32 */
        if (r < ((1ull << 32) + odds - 1) / odds)
            counter++;
    }
    m->lfu = (uint8_t)counter;
    m->ldt = (uint16_t)(s->clock / 60);
}

void store_track_lfu(struct store *s, bool on, int log_factor, int decay_time)
{
    s->track_lfu = on;
    s->lfu_log_factor = log_factor;
    s->lfu_decay_time = decay_time;
}

/* ---- keys */

struct object *store_lookup(struct store *s, int db, const char *key, size_t klen, int64_t now)
{
    if (now >= 0) /* a negative time (a replica's master client) leaves the access clock as it is */
        s->clock = (uint32_t)(now / 1000);
    struct dict_entry *e = find_live(s, store_db(s, db), key, klen, now);
    if (e == NULL)
        return NULL;
    struct key_meta *m = meta_of(e);
    m->atime = s->clock;
    if (s->track_lfu)
        lfu_touch(s, m);
    struct object *o = entry_obj(e);
    dirty_add(s, o);
    return o;
}

struct object *store_peek(struct store *s, int db, const char *key, size_t klen, int64_t now,
                          long long *idle_s)
{
    struct dict_entry *e = find_live(s, store_db(s, db), key, klen, now);
    if (e == NULL)
        return NULL;
    if (idle_s) {
        long long idle = now / 1000 - (long long)meta_peek(e)->atime;
        *idle_s = idle > 0 ? idle : 0;
    }
    return entry_obj(e);
}

int store_lfu_freq(struct store *s, int db, const char *key, size_t klen, int64_t now)
{
    struct dict_entry *e = find_live(s, store_db(s, db), key, klen, now);
    return e ? (int)lfu_decayed(s, meta_peek(e), (uint32_t)(now / 1000)) : -1;
}

long long store_key_memory(struct store *s, int db, const char *key, size_t klen, int64_t now)
{
    struct db *d = store_db(s, db);
    struct dict_entry *e = find_live(s, d, key, klen, now);
    return e ? (long long)(dict_entry_memory(d->keys, e) + object_memory(entry_obj(e))) : -1;
}

/*
 * The entry a new value of key goes in, with room for `need` bytes of object (*room: what the
 * object may use of its tail): a new entry (*added) with just that, or key's, its old value
 * released, grown if its old object's room is short.  The room is what the entry was made with,
 * not the allocation's usable size: asking the allocator costs every SET more than the few bytes
 * of slack would save.  now >= 0: after a lookup of the key (Redis's SET: lookupKeyWrite, then
 * setKey), done with the same hash: an expired key is reaped first (the set then adds it anew),
 * a live one accessed.
 */
static struct dict_entry *set_entry(struct store *s, struct db *d, const char *key, size_t klen, size_t need,
                                    int flags, int64_t now, bool *added, size_t *room)
{
    struct dict_entry *e;
    struct dict_entry *n = dict_add_tail(d->keys, key, klen, need, &e);
    if (!n && s->snap)
        snapshot_save(s, d, e);
    if (!n && now >= 0 && entry_expired(d, e, now)) {
        delete_expired(s, d, e);
        n = dict_add_tail(d->keys, key, klen, need, &e);
    }
    *added = n != NULL;
    if (n) {
        entry_init(s, n);
        *room = need;
        return n;
    }
    struct object *old = entry_obj(e);
    *room = object_embed_room(old);
    dirty_forget(s, old);
    struct key_meta *m = meta_of(e);
    /* the lookup's access, once (store_lookup; the set writes the access time) */
    if ((now >= 0 || (flags & STORE_ACCESS)) && s->track_lfu)
        lfu_touch(s, m);
    m->atime = s->clock; /* a new value is new to LRU (Redis's new object); its LFU counter stays (dbOverwrite) */
    s->mem -= object_memory(old);
    release_object(s, old);
    if (!(flags & STORE_KEEPTTL) && e->aux != TTL_NONE)
        ttl_remove(s, d, e);
    if (*room < need) {
        e = dict_entry_resize_tail(d->keys, e, need);
        if (e->aux != TTL_NONE)
            ttl_at(d, e->aux)->e = e;
        *room = need;
    }
    return e;
}

int store_set(struct store *s, int db, const char *key, size_t klen, struct object *val, int flags)
{
    struct db *d = store_db(s, db);
    bool added;
    size_t room;
    struct dict_entry *e = set_entry(s, d, key, klen, object_embed_size(val), flags, -1, &added, &room);
    s->mem += object_memory(object_embed(dict_entry_tail(e), room, val));
    return added;
}

int store_set_string(struct store *s, int db, const char *key, size_t klen, const void *p, size_t n, int flags,
                     int64_t now)
{
    if (now >= 0)
        s->clock = (uint32_t)(now / 1000);
    struct db *d = store_db(s, db);
    bool added;
    size_t room;
    struct dict_entry *e = set_entry(s, d, key, klen, object_string_embed_size(n), flags, now, &added, &room);
    s->mem += object_memory(object_string_embed(dict_entry_tail(e), room, p, n));
    return added;
}

void store_settle(struct store *s, int db, const char *key, size_t klen, struct object *o)
{
    struct db *d = store_db(s, db);
    if (object_packed(o))
        return;
    struct dict_entry *e = dict_tail_entry(o, klen); /* no lookup: o is the key's, just past it */
    assert(e->klen == klen && memcmp(e->key, key, klen) == 0);
    size_t need = object_embed_size(o);
    s->mem -= dirty_drop(s, o);
    if (need != object_embed_room(o)) {
        e = dict_entry_resize_tail(d->keys, e, need);
        if (e->aux != TTL_NONE)
            ttl_at(d, e->aux)->e = e;
        o = entry_obj(e);
    }
    s->mem += object_memory(object_repack(o, need));
}

int store_delete(struct store *s, int db, const char *key, size_t klen, int64_t now)
{
    struct db *d = store_db(s, db);
    struct dict_entry *e = find_live(s, d, key, klen, now);
    if (e == NULL)
        return 0;
    delete_entry(s, d, e);
    return 1;
}

struct object *store_take(struct store *s, int db, const char *key, size_t klen, int64_t now,
                          int64_t *expire)
{
    struct db *d = store_db(s, db);
    struct dict_entry *e = find_live(s, d, key, klen, now);
    if (e == NULL) {
        if (expire)
            *expire = -1;
        return NULL;
    }
    if (expire)
        *expire = e->aux != TTL_NONE ? ttl_at(d, e->aux)->when : -1;
    return unlink_entry(s, d, e, true);
}

int64_t store_get_expire(struct store *s, int db, const char *key, size_t klen, int64_t now)
{
    struct db *d = store_db(s, db);
    struct dict_entry *e = find_live(s, d, key, klen, now);
    if (e == NULL)
        return -2;
    return e->aux != TTL_NONE ? ttl_at(d, e->aux)->when : -1;
}

int store_set_expire(struct store *s, int db, const char *key, size_t klen, int64_t when, int64_t now)
{
    struct db *d = store_db(s, db);
    struct dict_entry *e = find_live(s, d, key, klen, now);
    if (e == NULL)
        return -1;
    if (e->aux != TTL_NONE)
        ttl_at(d, e->aux)->when = when;
    else
        ttl_add(s, d, e, when);
    return 0;
}

int store_persist(struct store *s, int db, const char *key, size_t klen, int64_t now)
{
    struct db *d = store_db(s, db);
    struct dict_entry *e = find_live(s, d, key, klen, now);
    if (e == NULL || e->aux == TTL_NONE)
        return 0;
    ttl_remove(s, d, e);
    return 1;
}

size_t store_size(const struct store *s, int db)
{
    return dict_size(store_db(s, db)->keys);
}

size_t store_expires_size(const struct store *s, int db)
{
    return store_db(s, db)->ttl_len;
}

void store_flush(struct store *s, int db)
{
    dirty_sync_all(s);
    if (db >= 0) {
        db_flush(s, store_db(s, db));
        return;
    }
    for (int i = 0; i < s->databases; i++)
        db_flush(s, &s->db[i]);
}

int store_swapdb(struct store *s, int a, int b)
{
    if (a < 0 || b < 0 || a >= s->databases || b >= s->databases)
        return -1;
    struct db t = s->db[a];
    s->db[a] = s->db[b];
    s->db[b] = t;
    if (s->snap) { /* the keys keep the db they had when the snapshot began */
        int o = s->snap->origin[a];
        s->snap->origin[a] = s->snap->origin[b];
        s->snap->origin[b] = o;
    }
    return 0;
}

/* key's entry e of src, as dkey of dst (where it is not): the key keeps its TTL, access time and LFU counter */
static void relocate(struct store *s, struct db *src, struct dict_entry *e, struct db *dst, const char *dkey,
                     size_t dklen)
{
    int64_t when = e->aux != TTL_NONE ? ttl_at(src, e->aux)->when : -1;
    struct key_meta m = *meta_of(e);
    struct object *val = unlink_entry(s, src, e, true);
    struct dict_entry *moved = dict_add_tail(dst->keys, dkey, dklen, object_embed_size(val), NULL);
    entry_init(s, moved);
    s->mem += object_memory(object_embed(dict_entry_tail(moved), object_embed_size(val), val));
    *meta_of(moved) = m;
    if (when != -1)
        ttl_add(s, dst, moved, when);
}

int store_move(struct store *s, int src_db, int dst_db, const char *key, size_t klen, int64_t now)
{
    struct db *src = store_db(s, src_db), *dst = store_db(s, dst_db);
    if (src == dst)
        return 0;
    struct dict_entry *e = find_live(s, src, key, klen, now);
    if (e == NULL || find_live(s, dst, key, klen, now) != NULL)
        return 0;
    relocate(s, src, e, dst, key, klen);
    return 1;
}

int store_rename(struct store *s, int db, const char *key, size_t klen, const char *dkey, size_t dklen, int64_t now)
{
    struct db *d = store_db(s, db);
    if (klen == dklen && memcmp(key, dkey, klen) == 0)
        return 0;
    struct dict_entry *e = find_live(s, d, key, klen, now);
    if (e == NULL || find_live(s, d, dkey, dklen, now) != NULL)
        return 0;
    relocate(s, d, e, d, dkey, dklen);
    return 1;
}

int store_set_lfu_freq(struct store *s, int db, const char *key, size_t klen, int freq, int64_t now)
{
    struct dict_entry *e = find_live(s, store_db(s, db), key, klen, now);
    if (e == NULL)
        return -1;
    struct key_meta *m = meta_of(e);
    m->lfu = (uint8_t)(freq < 0 ? 0 : freq > 255 ? 255 : freq);
    m->ldt = (uint16_t)(now / 1000 / 60);
    return 0;
}

int store_set_idle(struct store *s, int db, const char *key, size_t klen, long long idle_s, int64_t now)
{
    struct dict_entry *e = find_live(s, store_db(s, db), key, klen, now);
    if (e == NULL)
        return -1;
    long long now_s = now / 1000;
    meta_of(e)->atime = (uint32_t)(idle_s < now_s ? now_s - idle_s : 0);
    return 0;
}

/* ---- snapshot's walk */

void store_snapshot_begin(struct store *s, store_snapshot_fn *fn, void *arg)
{
    store_snapshot_abort(s);
    struct snapshot *snap = mem_calloc(1, sizeof *snap);
    snap->fn = fn;
    snap->arg = arg;
    snap->origin = mem_alloc((size_t)s->databases * sizeof *snap->origin);
    for (int i = 0; i < s->databases; i++)
        snap->origin[i] = i;
    s->snap = snap;
    s->snap_parity ^= 1; /* every key there is now is not out yet */
}

bool store_snapshot_active(const struct store *s)
{
    return s->snap != NULL;
}

void store_snapshot_abort(struct store *s)
{
    if (s->snap == NULL)
        return;
    mem_release(s->snap->origin);
    mem_release(s->snap->seen);
    mem_release(s->snap);
    s->snap = NULL;
}

static void snapshot_seen(void *arg, const struct dict_entry *e)
{
    struct snapshot *snap = arg;
    if (snap->seen_len == snap->seen_cap) {
        snap->seen_cap = snap->seen_cap ? snap->seen_cap * 2 : 16;
        snap->seen = mem_realloc(snap->seen, snap->seen_cap * sizeof *snap->seen);
    }
    snap->seen[snap->seen_len++] = (struct dict_entry *)e; /* the store's own entry: its mark is written next */
}

/* the current index of the db that was `origin` when the snapshot began */
static struct db *snapshot_db(const struct store *s, int origin)
{
    for (int i = 0; i < s->databases; i++)
        if (s->snap->origin[i] == origin)
            return &s->db[i];
    return NULL;
}

/* one dict_scan step of d from *cursor: what it meets handed out; the number met */
static size_t snapshot_scan(struct store *s, struct db *d, uint64_t *cursor)
{
    struct snapshot *snap = s->snap;
    snap->seen_len = 0;
    *cursor = dict_scan(d->keys, *cursor, snapshot_seen, snap);
    for (size_t i = 0; i < snap->seen_len; i++)
        snapshot_save(s, d, snap->seen[i]);
    return snap->seen_len;
}

static void snapshot_save_db(struct store *s, struct db *d)
{
    uint64_t cursor = 0;
    do
        snapshot_scan(s, d, &cursor);
    while (cursor != 0);
}

bool store_snapshot_step(struct store *s, size_t budget)
{
    struct snapshot *snap = s->snap;
    if (snap == NULL)
        return false;
    size_t met = 0;
    while (snap->walk < s->databases && met < budget) {
        struct db *d = snapshot_db(s, snap->walk);
        met += snapshot_scan(s, d, &snap->cursor) + 1; /* an empty bucket costs too */
        if (snap->cursor == 0)
            snap->walk++;
    }
    if (snap->walk < s->databases)
        return true;
    store_snapshot_abort(s); /* every key is out */
    return false;
}

/* ---- SCAN */

struct scan_state {
    store_scan_fn *fn;                   /* the caller's callback */
    void *arg;                           /* its argument */
    const struct db *d;                  /* the db scanned */
    int64_t now;                         /* for expiry */
    long emitted;                        /* keys passed to fn */
    size_t nreap;                        /* expired entries collected */
    const struct dict_entry *reap[SCAN_REAP_MAX]; /* deleted after the step */
};

static void scan_entry(void *arg, const struct dict_entry *e)
{
    struct scan_state *st = arg;
    if (entry_expired(st->d, e, st->now)) {
        if (st->nreap < SCAN_REAP_MAX && reap_expired())
            st->reap[st->nreap++] = e;
        return;
    }
    st->fn(st->arg, e->key, e->klen, entry_obj(e));
    st->emitted++;
}

uint64_t store_scan(struct store *s, int db, uint64_t cursor, long count, int64_t now,
                    store_scan_fn *fn, void *arg)
{
    struct db *d = store_db(s, db);
    if (dict_size(d->keys) == 0)
        return 0;
    struct scan_state st = {.fn = fn, .arg = arg, .d = d, .now = now};
    long maxiter = count > 0 ? count * 10 : 10;
    do {
        cursor = dict_scan(d->keys, cursor, scan_entry, &st);
    } while (cursor && maxiter-- > 0 && st.emitted < count && st.nreap < SCAN_REAP_MAX);
    for (size_t i = 0; i < st.nreap; i++)
        delete_expired(s, d, dict_peek(d->keys, st.reap[i]->key, st.reap[i]->klen));
    return cursor;
}

void store_each(struct store *s, int db, store_each_fn *fn, void *arg)
{
    struct db *d = store_db(s, db);
    struct dict_iter it;
    struct dict_entry *e;
    dict_iter_init(&it, d->keys);
    while ((e = dict_iter_next(&it)))
        fn(arg, e->key, e->klen, entry_obj(e), e->aux == TTL_NONE ? -1 : ttl_at(d, e->aux)->when);
}

/* ---- RANDOMKEY */

bool store_random_key(struct store *s, int db, int64_t now, const char **key, size_t *klen)
{
    struct db *d = store_db(s, db);
    for (int tries = 0; tries < RANDOM_TRIES; tries++) {
        if (dict_size(d->keys) == 0)
            return false;
        struct dict_entry *e = dict_random(d->keys);
        /* like a Redis replica, give up reaping after enough tries */
        if (!entry_expired(d, e, now) || tries == RANDOM_TRIES - 1) {
            *key = e->key;
            *klen = e->klen;
            return true;
        }
        if (reap_expired())
            delete_expired(s, d, e);
    }
    return false;
}

/* ---- eviction */

static void cand_clear(struct evict_cand *c)
{
    if (c->key != c->inline_key)
        mem_release(c->key);
    c->key = c->inline_key;
    c->db = -1;
}

static void pool_create(struct store *s)
{
    s->pool = mem_alloc(EVPOOL_SIZE * sizeof *s->pool);
    s->mem += mem_usable(s->pool);
    for (int i = 0; i < EVPOOL_SIZE; i++) {
        s->pool[i] = mem_alloc(sizeof **s->pool);
        s->pool[i]->key = s->pool[i]->inline_key;
        s->pool[i]->db = -1;
        s->mem += mem_usable(s->pool[i]);
    }
}

/* Redis evictionPoolPopulate's insertion: keep the pool sorted, best last */
static void pool_insert(struct store *s, int db, const struct dict_entry *e, uint64_t score)
{
    struct evict_cand **p = s->pool;
    int k = 0;
    while (k < EVPOOL_SIZE && p[k]->db >= 0 && p[k]->score < score)
        k++;
    if (k == 0 && p[EVPOOL_SIZE - 1]->db >= 0)
        return; /* worse than every candidate of a full pool */
    if (k < EVPOOL_SIZE && p[k]->db < 0) {
        /* an empty slot, and everything after it is empty too */
    } else if (p[EVPOOL_SIZE - 1]->db < 0) {
        struct evict_cand *spare = p[EVPOOL_SIZE - 1]; /* room at the end: shift right */
        memmove(p + k + 1, p + k, (size_t)(EVPOOL_SIZE - k - 1) * sizeof *p);
        p[k] = spare;
    } else {
        struct evict_cand *worst = p[0]; /* full: drop the worst, shift left */
        k--;
        cand_clear(worst);
        memmove(p, p + 1, (size_t)k * sizeof *p);
        p[k] = worst;
    }
    struct evict_cand *c = p[k];
    if (e->klen > EVPOOL_KEY)
        c->key = mem_alloc(e->klen);
    memcpy(c->key, e->key, e->klen);
    c->klen = e->klen;
    c->db = db;
    c->score = score;
}

/* a candidate's score; LRU and LFU ties are broken at random (the low 32 bits), so
 * that among keys alike the pool keeps no favourite (the first one sampled) */
static uint64_t evict_score(struct store *s, const struct db *d, const struct dict_entry *e, int kind, uint32_t now_s)
{
    uint64_t tie = util_rand(&s->rng) >> 32;
    const struct key_meta *m = meta_peek(e);
    switch (kind) {
    case STORE_EVICT_LRU: return (uint64_t)(now_s > m->atime ? now_s - m->atime : 0) << 32 | tie;
    case STORE_EVICT_LFU: return (uint64_t)(255 - lfu_decayed(s, m, now_s)) << 32 | tie;
    default: return e->aux != TTL_NONE ? UINT64_MAX - (uint64_t)ttl_at(d, e->aux)->when : 0;
    }
}

struct sample_state {
    struct store *s;
    int db;
    int kind;
    uint32_t now_s;
};

static void sample_entry(void *arg, const struct dict_entry *e)
{
    struct sample_state *st = arg;
    pool_insert(st->s, st->db, e, evict_score(st->s, &st->s->db[st->db], e, st->kind, st->now_s));
}

/* one round of sampling into the pool; false when there is no key to sample
 * (a round may find none: the caller samples again, as Redis's
 * performEvictions loops while the dicts hold keys) */
static bool pool_populate(struct store *s, int kind, bool volatile_only, int samples, uint32_t now_s)
{
    size_t want = samples < 1 ? 1 : samples > 64 ? 64 : (size_t)samples;
    bool any = false;
    for (int i = 0; i < s->databases; i++) {
        struct db *d = &s->db[i];
        if (volatile_only) {
            for (size_t j = 0; j < want && d->ttl_len; j++) {
                struct dict_entry *e = ttl_at(d, util_rand_below(&s->rng, d->ttl_len))->e;
                pool_insert(s, i, e, evict_score(s, d, e, kind, now_s));
            }
            any |= d->ttl_len > 0;
        } else if (dict_size(d->keys)) {
            struct sample_state st = {s, i, kind, now_s};
            dict_sample(d->keys, want, &s->rng, sample_entry, &st);
            any = true;
        }
    }
    return any;
}

/* the best pool candidate still present (and still with a TTL when volatile) */
static struct dict_entry *pool_pop(struct store *s, bool volatile_only, int *db)
{
    for (int k = EVPOOL_SIZE - 1; k >= 0; k--) {
        struct evict_cand *c = s->pool[k];
        if (c->db < 0)
            continue;
        struct db *d = &s->db[c->db];
        struct dict_entry *e = dict_find(d->keys, c->key, c->klen);
        *db = c->db;
        cand_clear(c);
        if (e && (!volatile_only || e->aux != TTL_NONE))
            return e;
    }
    return NULL;
}

/* the entry to evict next, NULL when there is none */
static struct dict_entry *evict_pick(struct store *s, int kind, bool volatile_only, int samples, uint32_t now_s,
                                int *db)
{
    if (kind == STORE_EVICT_RANDOM) {
        for (int i = 0; i < s->databases; i++) {
            int j = s->evict_db = (s->evict_db + 1) % s->databases;
            struct db *d = &s->db[j];
            *db = j;
            if (volatile_only && d->ttl_len)
                return ttl_at(d, util_rand_below(&s->rng, d->ttl_len))->e;
            if (!volatile_only && dict_size(d->keys))
                return dict_random(d->keys);
        }
        return NULL;
    }
    for (;;) {
        if (!pool_populate(s, kind, volatile_only, samples, now_s))
            return NULL;
        struct dict_entry *e = pool_pop(s, volatile_only, db);
        if (e)
            return e;
    }
}

size_t store_evict(struct store *s, int how, int samples, size_t bytes, int64_t now)
{
    int kind = how & ~STORE_EVICT_VOLATILE;
    bool volatile_only = (how & STORE_EVICT_VOLATILE) || kind == STORE_EVICT_TTL;
    uint32_t now_s = s->clock = (uint32_t)(now / 1000);
    int64_t deadline = util_mono_ns() + EVICT_BUDGET_NS;
    if (kind != STORE_EVICT_RANDOM && s->pool == NULL)
        pool_create(s); /* before measuring: it is no key's memory */
    size_t start = store_memory(s), freed = 0;
    for (unsigned n = 1; freed < bytes; n++) {
        int db;
        struct dict_entry *e = evict_pick(s, kind, volatile_only, samples, now_s, &db);
        if (e == NULL)
            break;
        struct db *d = &s->db[db];
        if (entry_expired(d, e, now)) {
            delete_expired(s, d, e);
        } else {
            delete_gone(s, d, e, STORE_GONE_EVICTED);
            s->evicted++;
        }
        size_t m = store_memory(s);
        freed = start > m ? start - m : 0;
        if ((n & 15) == 0 && util_mono_ns() > deadline)
            break;
    }
    return freed;
}

/* ---- background work */

size_t store_active_expire(struct store *s, int64_t now, long budget_us)
{
    int64_t deadline = util_mono_ns() + (int64_t)budget_us * 1000;
    size_t deleted = 0;
    s->clock = (uint32_t)(now / 1000);
    unsigned long iteration = 0;
    bool timeout = false;
    for (int j = 0; j < s->databases && !timeout; j++) {
        struct db *d = &s->db[s->expire_db];
        s->expire_db = (s->expire_db + 1) % s->databases;
        size_t sampled = 0, expired = 0;
        do {
            size_t num = d->ttl_len;
            if (num == 0)
                break;
            iteration++;
            if (num > EXPIRE_SAMPLE)
                num = EXPIRE_SAMPLE;
            sampled = expired = 0;
            while (sampled < num && d->ttl_len) {
                if (d->ttl_cursor >= d->ttl_len)
                    d->ttl_cursor = 0;
                struct ttl_slot *slot = ttl_at(d, d->ttl_cursor);
                sampled++;
                if (now > slot->when) {
                    /* the last slot moves into this one: look at it next */
                    delete_expired(s, d, slot->e);
                    expired++;
                } else {
                    d->ttl_cursor++;
                }
            }
            deleted += expired;
            if ((iteration & 0xf) == 0 && util_mono_ns() > deadline) {
                timeout = true;
                break;
            }
        } while (expired * 100 > sampled * EXPIRE_STALE_PCT);
    }
    return deleted;
}

void store_rehash_step(struct store *s)
{
    int64_t deadline = util_mono_ns() + IDLE_BUDGET_NS;
    for (int i = 0; i < s->databases; i++) {
        struct dict *keys = s->db[i].keys;
        while (dict_rehash(keys, 100))
            if (util_mono_ns() > deadline)
                return;
        dict_compact(keys);
    }
    dead_release(s, deadline);
    store_lazyfree_step(s, LAZYFREE_STEP_IDLE);
}

uint64_t store_expired_keys(const struct store *s)
{
    return s->expired;
}

uint64_t store_evicted_keys(const struct store *s)
{
    return s->evicted;
}

size_t store_memory(const struct store *s)
{
    size_t m = s->mem;
    for (int i = 0; i < s->databases; i++)
        m += dict_memory(s->db[i].keys);
    for (const struct dead_dict *dd = s->dead; dd; dd = dd->next)
        m += dict_memory(dd->keys);
    for (int i = 0; i < STORE_DIRTY_MAX; i++)
        if (s->dirty[i].o)
            m += object_memory(s->dirty[i].o) - s->dirty[i].mem;
    return m;
}

void store_mark_copies(struct store *s, bool every_key)
{
    s->copies = true;
    s->every_key = every_key;
}

bool store_holds_copies(const struct store *s)
{
    return s->copies;
}

bool store_holds_every_key(const struct store *s)
{
    return s->every_key;
}
