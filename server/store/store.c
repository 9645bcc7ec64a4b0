/*
 * store: one shard's keyspace (see include/percore/store.h).
 *
 * Design.  Each database is a chained hash table of power-of-two size,
 * hashed with SipHash-1-3 under the 16-byte per-process seed (base/siphash.c),
 * and resized by incremental rehash as in Redis's dict.c: while a resize is in progress
 * there are two tables, every lookup/insert/delete moves one bucket from the
 * old to the new (visiting at most 10 empty buckets), and store_rehash_step()
 * moves more while the shard is idle.  Tables grow when they hold as many
 * keys as buckets and shrink when under 10% full (checked on every delete),
 * so no operation costs time proportional to the table.
 *
 * An entry is a single allocation: chain link, value pointer, key length,
 * TTL index and the key bytes inline (24 bytes + key).  The expire time is
 * not in the entry: keys with a TTL also sit in the db's TTL array, slots of
 * {entry, when} kept in fixed chunks (so growing it never copies more than
 * the small chunk directory), and the entry holds its slot index.  A key
 * without a TTL so pays nothing for expiry; removal from the array is a swap
 * with the last slot.  Active expiry walks the array with a rolling cursor,
 * one slot per sample (O(1)), so every TTL key is eventually examined.
 *
 * Memory accounting (store_memory) is kept incrementally with mem_usable()
 * of every allocation: buckets, entries, TTL chunks, objects.  Objects grow
 * in place (APPEND, SETRANGE) without telling the store, so the last few
 * objects handed out by store_lookup() are remembered with the size they
 * were accounted at and re-measured when they fall out of that small ring,
 * when they are removed or replaced, and by store_memory() itself.  So a
 * caller must finish mutating a looked-up object in place before it looks
 * up STORE_DIRTY_MAX more keys (every command does: it mutates the one or
 * two values it just looked up).
 *
 * Eviction (store_evict) follows Redis's evict.c: a pool of the 16 best
 * candidates (EVPOOL_SIZE), sorted by score (higher = evict first: idle
 * seconds for LRU, 255 - counter for LFU, the inverse of the expire time
 * for TTL), filled with `samples` keys per database per round; the best
 * candidate still present is evicted.  The pool holds copies of the keys
 * (their entries may be deleted between two calls) and is looked up again
 * before eviction.  Allkeys sampling walks consecutive buckets from a random
 * one (dictGetSomeKeys); volatile sampling picks random slots of the TTL
 * array.  The LFU counter and its last-decrement minute live in the
 * entry's tail padding (struct entry stays 32 bytes).
 *
 * FLUSHDB of a large db detaches its tables and frees them in time-boxed
 * steps from store_rehash_step() (their memory stays counted until freed);
 * small dbs are freed at once, and store_destroy() frees everything.
 *
 * SCAN is Redis's reverse-binary cursor (dictScan), visiting both tables
 * while rehashing.  Expired keys it meets are skipped and deleted after the
 * step's callbacks, never while walking a chain.
 *
 * Threading: a store and everything in it belong to one shard thread
 * (DESIGN.md rule 1).  The seed is written once before any store exists.
 */
#include "percore/store.h"

#include "percore/mem.h"
#include "percore/siphash.h"
#include "percore/util.h"

#include <assert.h>
#include <string.h>

#define TABLE_MIN 4             /* Redis DICT_HT_INITIAL_SIZE */
#define TTL_NONE UINT32_MAX     /* entry has no TTL slot */
#define TTL_CHUNK 512           /* TTL slots per chunk (8 KiB) */
#define EXPIRE_SAMPLE 20        /* Redis ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP */
#define EXPIRE_STALE_PCT 10     /* repeat while more than this % expired */
#define SCAN_REAP_MAX 64        /* expired keys a scan call deletes at most */
#define RANDOM_TRIES 100        /* expired keys RANDOMKEY deletes before giving up */
#define RANDOM_PROBES 256       /* random bucket probes before walking */
#define FLUSH_SYNC_MAX 4096     /* a flushed db this small is freed at once */
#define IDLE_BUDGET_NS 1000000  /* store_rehash_step: 1 ms of work at most */
#define STORE_DIRTY_MAX 4       /* looked-up objects re-measured later */
#define EVPOOL_SIZE 16          /* Redis: candidates kept between eviction rounds */
#define EVPOOL_KEY 255          /* pool candidates' inline key room (EVPOOL_CACHED_SDS_SIZE) */
#define EVICT_BUDGET_NS 500000  /* Redis evictionTimeLimitUs at maxmemory-eviction-tenacity 10 */
#define LFU_INIT_VAL 5          /* a new key's counter */
#define LFU_LOG_FACTOR 10       /* Redis lfu-log-factor default */
#define LFU_DECAY_MIN 1         /* Redis lfu-decay-time default: minutes per decrement */

struct entry {
    struct entry *next;   /* next entry in the bucket chain */
    struct object *val;   /* the value, owned */
    uint32_t klen;        /* key length */
    uint32_t ttl;         /* index in the db's TTL array, TTL_NONE without */
    uint32_t atime;       /* last access, unix seconds (OBJECT IDLETIME, LRU) */
    uint16_t ldt;         /* LFU: unix minutes (mod 2^16) of the last decrement */
    uint8_t lfu;          /* LFU: logarithmic access counter */
    char key[];           /* key bytes, binary, not terminated */
};

_Static_assert(sizeof(struct entry) == 32, "the LFU fields must fit the entry's padding");

struct table {
    struct entry **bucket; /* 2^k chain heads, NULL when the table is unused */
    size_t mask;           /* buckets - 1 (0 when unused) */
    size_t used;           /* entries in this table */
};

struct ttl_slot {
    struct entry *e; /* the key */
    int64_t when;    /* absolute expire, unix ms */
};

struct db {
    struct table ht[2];       /* ht[1] is used only while rehashing */
    long rehash;              /* next ht[0] bucket to move, -1 when not rehashing */
    struct ttl_slot **ttl;    /* chunk directory of the TTL array */
    size_t ttl_len;           /* slots in use */
    size_t ttl_chunks;        /* chunks allocated */
    size_t ttl_dir_cap;       /* directory capacity, in chunks */
    size_t ttl_cursor;        /* active expiry's position in the TTL array */
};

struct dead_table {
    struct entry **bucket;   /* detached bucket array being freed */
    size_t size;             /* its buckets */
    size_t pos;              /* next bucket to free */
    struct dead_table *next; /* next pending table */
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
    int expire_db;               /* db where the next active expiry starts */
    struct db *db;               /* the dbs */
    size_t mem;                  /* bytes accounted (see the design note) */
    uint64_t expired;            /* keys removed because expired */
    uint64_t rng;                /* xorshift state for sampling */
    struct dead_table *dead;     /* flushed tables still to free */
    struct dirty dirty[STORE_DIRTY_MAX]; /* ring of recently looked-up objects */
    unsigned dirty_next;         /* ring slot to use next */
    uint32_t clock;              /* unix seconds of the latest `now` seen */
    struct object **lazy;        /* big collections being freed in steps */
    size_t lazy_len;
    size_t lazy_cap;
    uint64_t evicted;            /* keys removed by store_evict */
    bool track_lfu;              /* store_lookup updates LFU counters */
    int evict_db;                /* RANDOM eviction: the db to try next */
    struct evict_cand **pool;    /* EVPOOL_SIZE candidates, best last, empty ones at the end */
    store_gone_fn *gone;         /* told of every key that expires or is evicted, NULL none */
    void *gone_arg;
};

/* collections with more elements than this are freed in steps (Redis's LAZYFREE_THRESHOLD) */
#define LAZYFREE_MIN 64
#define LAZYFREE_STEP_IDLE 65536  /* elements freed per timer tick */

void store_set_seed(const uint8_t seed[16])
{
    siphash_set_seed(seed);
}

static uint64_t key_hash(const char *key, size_t klen)
{
    return siphash_seeded(key, klen);
}

/* ---- helpers */

static uint64_t store_rand(struct store *s)
{
    uint64_t x = s->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    s->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static struct db *store_db(const struct store *s, int db)
{
    assert(db >= 0 && db < s->databases);
    return &s->db[db];
}

static bool rehashing(const struct db *d)
{
    return d->rehash >= 0;
}

static size_t table_size(const struct table *t)
{
    return t->bucket ? t->mask + 1 : 0;
}

static struct ttl_slot *ttl_at(const struct db *d, size_t i)
{
    return &d->ttl[i / TTL_CHUNK][i % TTL_CHUNK];
}

static bool entry_expired(const struct db *d, const struct entry *e, int64_t now)
{
    return e->ttl != TTL_NONE && now > ttl_at(d, e->ttl)->when;
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

static void dirty_sync_all(struct store *s)
{
    for (int i = 0; i < STORE_DIRTY_MAX; i++)
        if (s->dirty[i].o)
            dirty_sync(s, &s->dirty[i]);
}

/* ---- the TTL array */

static void ttl_add(struct store *s, struct db *d, struct entry *e, int64_t when)
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
    e->ttl = (uint32_t)d->ttl_len;
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

static void ttl_remove(struct store *s, struct db *d, struct entry *e)
{
    size_t i = e->ttl, last = --d->ttl_len;
    if (i != last) {
        *ttl_at(d, i) = *ttl_at(d, last);
        ttl_at(d, i)->e->ttl = (uint32_t)i;
    }
    e->ttl = TTL_NONE;
    if (d->ttl_len == 0) {
        ttl_release(s, d);
    } else if (d->ttl_len + 2 * TTL_CHUNK <= d->ttl_chunks * TTL_CHUNK) {
        /* keep one spare chunk so a key hovering at a boundary doesn't thrash */
        struct ttl_slot *c = d->ttl[--d->ttl_chunks];
        s->mem -= mem_usable(c);
        mem_release(c);
    }
}

/* ---- hash table */

static struct entry **table_alloc(struct store *s, size_t size)
{
    struct entry **b = mem_calloc(size, sizeof *b);
    s->mem += mem_usable(b);
    return b;
}

static void table_release(struct store *s, struct table *t)
{
    s->mem -= mem_usable(t->bucket);
    mem_release(t->bucket);
    *t = (struct table){NULL, 0, 0};
}

/* move up to n buckets from ht[0] to ht[1]; false once rehashing is done */
static bool rehash(struct store *s, struct db *d, size_t n)
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
        struct entry *e = d->ht[0].bucket[d->rehash];
        while (e) {
            struct entry *next = e->next;
            size_t h = key_hash(e->key, e->klen) & d->ht[1].mask;
            e->next = d->ht[1].bucket[h];
            d->ht[1].bucket[h] = e;
            d->ht[0].used--;
            d->ht[1].used++;
            e = next;
        }
        d->ht[0].bucket[d->rehash++] = NULL;
    }
    if (d->ht[0].used != 0)
        return true;
    table_release(s, &d->ht[0]);
    d->ht[0] = d->ht[1];
    d->ht[1] = (struct table){NULL, 0, 0};
    d->rehash = -1;
    return false;
}

static size_t next_pow2(size_t n)
{
    size_t size = TABLE_MIN;
    while (size < n)
        size *= 2;
    return size;
}

/* start resizing to the smallest power of two >= n (or create the table) */
static void table_resize(struct store *s, struct db *d, size_t n)
{
    size_t size = next_pow2(n);
    if (rehashing(d) || size == table_size(&d->ht[0]))
        return;
    struct table t = {table_alloc(s, size), size - 1, 0};
    if (d->ht[0].bucket == NULL) {
        d->ht[0] = t;
        return;
    }
    d->ht[1] = t;
    d->rehash = 0;
}

static void maybe_shrink(struct store *s, struct db *d)
{
    size_t size = table_size(&d->ht[0]);
    if (!rehashing(d) && size > TABLE_MIN && d->ht[0].used * 100 / size < 10)
        table_resize(s, d, d->ht[0].used);
}

static struct entry *find(struct store *s, struct db *d, const char *key, size_t klen)
{
    if (d->ht[0].used + d->ht[1].used == 0)
        return NULL;
    rehash(s, d, 1);
    uint64_t h = key_hash(key, klen);
    for (int t = 0; t <= 1; t++) {
        if (d->ht[t].bucket == NULL)
            break;
        for (struct entry *e = d->ht[t].bucket[h & d->ht[t].mask]; e; e = e->next)
            if (e->klen == klen && memcmp(e->key, key, klen) == 0)
                return e;
        if (!rehashing(d))
            break;
    }
    return NULL;
}

static void insert(struct store *s, struct db *d, struct entry *e)
{
    rehash(s, d, 1);
    if (d->ht[0].bucket == NULL)
        table_resize(s, d, TABLE_MIN);
    else if (!rehashing(d) && d->ht[0].used >= table_size(&d->ht[0]))
        table_resize(s, d, d->ht[0].used + 1);
    struct table *t = &d->ht[rehashing(d) ? 1 : 0];
    size_t h = key_hash(e->key, e->klen) & t->mask;
    e->next = t->bucket[h];
    t->bucket[h] = e;
    t->used++;
}

/* take e out of its chain (and the TTL array); e itself stays allocated */
static void unlink_entry(struct store *s, struct db *d, struct entry *e)
{
    uint64_t h = key_hash(e->key, e->klen);
    for (int t = 0; t <= 1 && d->ht[t].bucket; t++) {
        struct entry **ref = &d->ht[t].bucket[h & d->ht[t].mask];
        for (; *ref; ref = &(*ref)->next) {
            if (*ref == e) {
                *ref = e->next;
                d->ht[t].used--;
                if (e->ttl != TTL_NONE)
                    ttl_remove(s, d, e);
                maybe_shrink(s, d);
                return;
            }
        }
    }
    assert(!"entry not in its table");
}

static struct entry *entry_create(struct store *s, const char *key, size_t klen, struct object *val)
{
    assert(klen <= UINT32_MAX);
    struct entry *e = mem_alloc(sizeof *e + klen);
    e->next = NULL;
    e->val = val;
    e->klen = (uint32_t)klen;
    e->ttl = TTL_NONE;
    e->atime = s->clock;
    e->ldt = (uint16_t)(s->clock / 60);
    e->lfu = LFU_INIT_VAL;
    memcpy(e->key, key, klen);
    s->mem += mem_usable(e) + object_memory(val);
    return e;
}

/* a value nobody refers to any more: big collections go to the lazy list */
static void release_object(struct store *s, struct object *o)
{
    if (object_length(o) <= LAZYFREE_MIN) {
        object_destroy(&o);
        return;
    }
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

/* free an unlinked entry; its object too unless `keep` */
static struct object *entry_destroy(struct store *s, struct entry *e, bool keep)
{
    struct object *val = e->val;
    dirty_forget(s, val);
    s->mem -= mem_usable(e) + object_memory(val);
    mem_release(e);
    if (!keep)
        release_object(s, val);
    return val;
}

static void delete_entry(struct store *s, struct db *d, struct entry *e)
{
    unlink_entry(s, d, e);
    entry_destroy(s, e, false);
}

void store_set_gone_listener(struct store *s, store_gone_fn *fn, void *arg)
{
    s->gone = fn;
    s->gone_arg = arg;
}

static void delete_gone(struct store *s, struct db *d, struct entry *e, enum store_gone why)
{
    if (s->gone)
        s->gone(s->gone_arg, why, (int)(d - s->db), e->key, e->klen);
    delete_entry(s, d, e);
}

static void delete_expired(struct store *s, struct db *d, struct entry *e)
{
    delete_gone(s, d, e, STORE_GONE_EXPIRED);
    s->expired++;
}

/* a live entry for key, reaping it if expired */
static struct entry *find_live(struct store *s, struct db *d, const char *key, size_t klen,
                               int64_t now)
{
    struct entry *e = find(s, d, key, klen);
    if (e && entry_expired(d, e, now)) {
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
        s->db[i].rehash = -1;
    s->rng = (siphash_seed_k0() ^ (uint64_t)(uintptr_t)s) | 1;
    s->mem = mem_usable(s) + mem_usable(s->db);
    return s;
}

static void chain_release(struct store *s, struct entry *e)
{
    while (e) {
        struct entry *next = e->next;
        entry_destroy(s, e, false);
        e = next;
    }
}

static void table_release_all(struct store *s, struct table *t)
{
    for (size_t i = 0; i < table_size(t); i++)
        chain_release(s, t->bucket[i]);
    table_release(s, t);
}

/* free up to the deadline (0: everything); true if all dead tables are gone */
static bool dead_release(struct store *s, int64_t deadline)
{
    while (s->dead) {
        struct dead_table *dt = s->dead;
        while (dt->pos < dt->size) {
            chain_release(s, dt->bucket[dt->pos++]);
            if (deadline && (dt->pos & 127) == 0 && util_mono_ns() > deadline)
                return false;
        }
        s->mem -= mem_usable(dt->bucket) + mem_usable(dt);
        mem_release(dt->bucket);
        s->dead = dt->next;
        mem_release(dt);
    }
    return true;
}

static void db_flush(struct store *s, struct db *d)
{
    bool lazy = d->ht[0].used + d->ht[1].used > FLUSH_SYNC_MAX;
    for (int t = 0; t <= 1; t++) {
        if (d->ht[t].bucket == NULL)
            continue;
        if (!lazy) {
            table_release_all(s, &d->ht[t]);
            continue;
        }
        struct dead_table *dt = mem_alloc(sizeof *dt);
        *dt = (struct dead_table){d->ht[t].bucket, table_size(&d->ht[t]), 0, s->dead};
        s->mem += mem_usable(dt);
        s->dead = dt;
        d->ht[t] = (struct table){NULL, 0, 0};
    }
    if (d->ttl)
        ttl_release(s, d);
    d->rehash = -1;
}

void store_destroy(struct store **sp)
{
    if (sp == NULL || *sp == NULL)
        return;
    struct store *s = *sp;
    for (int i = 0; i < s->databases; i++) {
        struct db *d = &s->db[i];
        for (int t = 0; t <= 1; t++)
            if (d->ht[t].bucket)
                table_release_all(s, &d->ht[t]);
        if (d->ttl)
            ttl_release(s, d);
    }
    dead_release(s, 0);
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

/* the counter after its decay: one per LFU_DECAY_MIN minutes since ldt */
static unsigned lfu_decayed(const struct entry *e, uint32_t now_s)
{
    uint16_t now_min = (uint16_t)(now_s / 60);
    unsigned elapsed = now_min >= e->ldt ? (unsigned)(now_min - e->ldt) : 65535u - e->ldt + now_min;
    unsigned periods = elapsed / LFU_DECAY_MIN;
    return periods > e->lfu ? 0 : e->lfu - periods;
}

/* an access: decay, then increment with probability 1 / ((counter - 5) * 10 + 1) */
static void lfu_touch(struct store *s, struct entry *e)
{
    unsigned counter = lfu_decayed(e, s->clock);
    if (counter < 255) {
        unsigned base = counter > LFU_INIT_VAL ? counter - LFU_INIT_VAL : 0;
        uint64_t r = store_rand(s) >> 32; /* uniform in [0, 2^32) */
        if (r * (base * LFU_LOG_FACTOR + 1) < (1ull << 32))
            counter++;
    }
    e->lfu = (uint8_t)counter;
    e->ldt = (uint16_t)(s->clock / 60);
}

void store_track_lfu(struct store *s, bool on)
{
    s->track_lfu = on;
}

/* ---- keys */

struct object *store_lookup(struct store *s, int db, const char *key, size_t klen, int64_t now)
{
    s->clock = (uint32_t)(now / 1000);
    struct entry *e = find_live(s, store_db(s, db), key, klen, now);
    if (e == NULL)
        return NULL;
    e->atime = s->clock;
    if (s->track_lfu)
        lfu_touch(s, e);
    dirty_add(s, e->val);
    return e->val;
}

struct object *store_peek(struct store *s, int db, const char *key, size_t klen, int64_t now,
                          long long *idle_s)
{
    struct entry *e = find_live(s, store_db(s, db), key, klen, now);
    if (e == NULL)
        return NULL;
    if (idle_s) {
        long long idle = now / 1000 - (long long)e->atime;
        *idle_s = idle > 0 ? idle : 0;
    }
    return e->val;
}

int store_lfu_freq(struct store *s, int db, const char *key, size_t klen, int64_t now)
{
    struct entry *e = find_live(s, store_db(s, db), key, klen, now);
    return e ? (int)lfu_decayed(e, (uint32_t)(now / 1000)) : -1;
}

long long store_key_memory(struct store *s, int db, const char *key, size_t klen, int64_t now)
{
    struct entry *e = find_live(s, store_db(s, db), key, klen, now);
    return e ? (long long)(mem_usable(e) + object_memory(e->val)) : -1;
}

int store_set(struct store *s, int db, const char *key, size_t klen, struct object *val, int flags)
{
    struct db *d = store_db(s, db);
    struct entry *e = find(s, d, key, klen);
    if (e == NULL) {
        insert(s, d, entry_create(s, key, klen, val));
        return 1;
    }
    dirty_forget(s, e->val);
    if (e->val != val) {
        s->mem -= object_memory(e->val);
        release_object(s, e->val);
        e->val = val;
        s->mem += object_memory(val);
    }
    if (!(flags & STORE_KEEPTTL) && e->ttl != TTL_NONE)
        ttl_remove(s, d, e);
    return 0;
}

int store_delete(struct store *s, int db, const char *key, size_t klen, int64_t now)
{
    struct db *d = store_db(s, db);
    struct entry *e = find_live(s, d, key, klen, now);
    if (e == NULL)
        return 0;
    delete_entry(s, d, e);
    return 1;
}

struct object *store_take(struct store *s, int db, const char *key, size_t klen, int64_t now,
                          int64_t *expire)
{
    struct db *d = store_db(s, db);
    struct entry *e = find_live(s, d, key, klen, now);
    if (e == NULL) {
        if (expire)
            *expire = -1;
        return NULL;
    }
    if (expire)
        *expire = e->ttl != TTL_NONE ? ttl_at(d, e->ttl)->when : -1;
    unlink_entry(s, d, e);
    return entry_destroy(s, e, true);
}

int64_t store_get_expire(struct store *s, int db, const char *key, size_t klen, int64_t now)
{
    struct db *d = store_db(s, db);
    struct entry *e = find_live(s, d, key, klen, now);
    if (e == NULL)
        return -2;
    return e->ttl != TTL_NONE ? ttl_at(d, e->ttl)->when : -1;
}

int store_set_expire(struct store *s, int db, const char *key, size_t klen, int64_t when, int64_t now)
{
    struct db *d = store_db(s, db);
    struct entry *e = find_live(s, d, key, klen, now);
    if (e == NULL)
        return -1;
    if (e->ttl != TTL_NONE)
        ttl_at(d, e->ttl)->when = when;
    else
        ttl_add(s, d, e, when);
    return 0;
}

int store_persist(struct store *s, int db, const char *key, size_t klen, int64_t now)
{
    struct db *d = store_db(s, db);
    struct entry *e = find_live(s, d, key, klen, now);
    if (e == NULL || e->ttl == TTL_NONE)
        return 0;
    ttl_remove(s, d, e);
    return 1;
}

size_t store_size(const struct store *s, int db)
{
    const struct db *d = store_db(s, db);
    return d->ht[0].used + d->ht[1].used;
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
    return 0;
}

int store_move(struct store *s, int src_db, int dst_db, const char *key, size_t klen, int64_t now)
{
    struct db *src = store_db(s, src_db), *dst = store_db(s, dst_db);
    if (src == dst)
        return 0;
    struct entry *e = find_live(s, src, key, klen, now);
    if (e == NULL || find_live(s, dst, key, klen, now) != NULL)
        return 0;
    int64_t when = e->ttl != TTL_NONE ? ttl_at(src, e->ttl)->when : -1;
    unlink_entry(s, src, e);
    insert(s, dst, e);
    if (when != -1)
        ttl_add(s, dst, e, when);
    return 1;
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

struct scan_state {
    store_scan_fn *fn;                   /* the caller's callback */
    void *arg;                           /* its argument */
    int64_t now;                         /* for expiry */
    long emitted;                        /* keys passed to fn */
    size_t nreap;                        /* expired entries collected */
    struct entry *reap[SCAN_REAP_MAX];   /* deleted after the step */
};

static void scan_bucket(const struct db *d, struct entry *e, struct scan_state *st)
{
    for (; e; e = e->next) {
        if (entry_expired(d, e, st->now)) {
            if (st->nreap < SCAN_REAP_MAX)
                st->reap[st->nreap++] = e;
            continue;
        }
        st->fn(st->arg, e->key, e->klen, e->val);
        st->emitted++;
    }
}

/* Redis dictScan: one cursor step over one or (rehashing) both tables */
static uint64_t scan_step(const struct db *d, uint64_t v, struct scan_state *st)
{
    if (!rehashing(d)) {
        uint64_t m0 = d->ht[0].mask;
        scan_bucket(d, d->ht[0].bucket[v & m0], st);
        v |= ~m0;
        return rev64(rev64(v) + 1);
    }
    const struct table *t0 = &d->ht[0], *t1 = &d->ht[1];
    if (t0->mask > t1->mask) {
        const struct table *tmp = t0;
        t0 = t1;
        t1 = tmp;
    }
    uint64_t m0 = t0->mask, m1 = t1->mask;
    scan_bucket(d, t0->bucket[v & m0], st);
    do {
        scan_bucket(d, t1->bucket[v & m1], st);
        v |= ~m1;
        v = rev64(rev64(v) + 1);
    } while (v & (m0 ^ m1));
    return v;
}

uint64_t store_scan(struct store *s, int db, uint64_t cursor, long count, int64_t now,
                    store_scan_fn *fn, void *arg)
{
    struct db *d = store_db(s, db);
    if (d->ht[0].used + d->ht[1].used == 0)
        return 0;
    struct scan_state st = {.fn = fn, .arg = arg, .now = now};
    long maxiter = count > 0 ? count * 10 : 10;
    do {
        cursor = scan_step(d, cursor, &st);
    } while (cursor && maxiter-- > 0 && st.emitted < count && st.nreap < SCAN_REAP_MAX);
    for (size_t i = 0; i < st.nreap; i++)
        delete_expired(s, d, st.reap[i]);
    return cursor;
}

/* ---- RANDOMKEY */

/* the first entry of a random non-empty bucket (d holds keys) */
static struct entry *random_bucket(struct store *s, const struct db *d)
{
    size_t s0 = table_size(&d->ht[0]), s1 = table_size(&d->ht[1]);
    size_t lo = rehashing(d) ? (size_t)d->rehash : 0, span = s0 + s1 - lo;
    size_t i = lo + store_rand(s) % span;
    for (size_t probes = 0;; probes++) {
        struct entry *b = i < s0 ? d->ht[0].bucket[i] : d->ht[1].bucket[i - s0];
        if (b)
            return b;
        /* a sparse table (mid-rehash after mass deletes): walk on instead */
        if (probes < RANDOM_PROBES)
            i = lo + store_rand(s) % span;
        else
            i = i + 1 < s0 + s1 ? i + 1 : lo;
    }
}

/* a random entry of a random non-empty bucket (d holds keys), as Redis's dictGetRandomKey */
static struct entry *random_entry(struct store *s, const struct db *d)
{
    struct entry *e = random_bucket(s, d);
    size_t len = 0;
    for (struct entry *x = e; x; x = x->next)
        len++;
    for (size_t k = store_rand(s) % len; k; k--)
        e = e->next;
    return e;
}

bool store_random_key(struct store *s, int db, int64_t now, const char **key, size_t *klen)
{
    struct db *d = store_db(s, db);
    for (int tries = 0; tries < RANDOM_TRIES; tries++) {
        if (d->ht[0].used + d->ht[1].used == 0)
            return false;
        rehash(s, d, 1);
        struct entry *e = random_entry(s, d);
        /* like a Redis replica, give up reaping after enough tries */
        if (!entry_expired(d, e, now) || tries == RANDOM_TRIES - 1) {
            *key = e->key;
            *klen = e->klen;
            return true;
        }
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
static void pool_insert(struct store *s, int db, const struct entry *e, uint64_t score)
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

static uint64_t evict_score(const struct db *d, const struct entry *e, int kind, uint32_t now_s)
{
    switch (kind) {
    case STORE_EVICT_LRU: return now_s > e->atime ? now_s - e->atime : 0;
    case STORE_EVICT_LFU: return 255 - lfu_decayed(e, now_s);
    default: return e->ttl != TTL_NONE ? UINT64_MAX - (uint64_t)ttl_at(d, e->ttl)->when : 0;
    }
}

/* up to n keys of d from consecutive buckets at a random place (Redis dictGetSomeKeys) */
static size_t sample_keys(struct store *s, struct db *d, struct entry **out, size_t n)
{
    size_t s0 = table_size(&d->ht[0]), s1 = table_size(&d->ht[1]);
    size_t lo = rehashing(d) ? (size_t)d->rehash : 0, span = s0 + s1 - lo;
    size_t got = 0, empty = 0, i = lo + store_rand(s) % span;
    for (size_t steps = n * 10; got < n && steps; steps--) {
        struct entry *e = i < s0 ? d->ht[0].bucket[i] : d->ht[1].bucket[i - s0];
        if (e == NULL && ++empty >= 5 && empty > n) {
            i = lo + store_rand(s) % span;
            empty = 0;
            continue;
        }
        if (e)
            empty = 0;
        for (; e && got < n; e = e->next)
            out[got++] = e;
        i = i + 1 < s0 + s1 ? i + 1 : lo;
    }
    return got;
}

/* one round of sampling into the pool; false when there is no key to sample
 * (a round may find none in a sparse table: the caller samples again, as
 * Redis's performEvictions loops while the dicts hold keys) */
static bool pool_populate(struct store *s, int kind, bool volatile_only, int samples, uint32_t now_s)
{
    struct entry *sample[64];
    size_t want = samples < 1 ? 1 : samples > 64 ? 64 : (size_t)samples;
    bool any = false;
    for (int i = 0; i < s->databases; i++) {
        struct db *d = &s->db[i];
        size_t got = 0;
        if (volatile_only) {
            for (; got < want && d->ttl_len; got++)
                sample[got] = ttl_at(d, store_rand(s) % d->ttl_len)->e;
        } else if (d->ht[0].used + d->ht[1].used) {
            got = sample_keys(s, d, sample, want);
        }
        any |= volatile_only ? d->ttl_len > 0 : d->ht[0].used + d->ht[1].used > 0;
        for (size_t j = 0; j < got; j++)
            pool_insert(s, i, sample[j], evict_score(d, sample[j], kind, now_s));
    }
    return any;
}

/* the best pool candidate still present (and still with a TTL when volatile) */
static struct entry *pool_pop(struct store *s, bool volatile_only, int *db)
{
    for (int k = EVPOOL_SIZE - 1; k >= 0; k--) {
        struct evict_cand *c = s->pool[k];
        if (c->db < 0)
            continue;
        struct db *d = &s->db[c->db];
        struct entry *e = find(s, d, c->key, c->klen);
        *db = c->db;
        cand_clear(c);
        if (e && (!volatile_only || e->ttl != TTL_NONE))
            return e;
    }
    return NULL;
}

/* the entry to evict next, NULL when there is none */
static struct entry *evict_pick(struct store *s, int kind, bool volatile_only, int samples, uint32_t now_s,
                                int *db)
{
    if (kind == STORE_EVICT_RANDOM) {
        for (int i = 0; i < s->databases; i++) {
            int j = s->evict_db = (s->evict_db + 1) % s->databases;
            struct db *d = &s->db[j];
            *db = j;
            if (volatile_only && d->ttl_len)
                return ttl_at(d, store_rand(s) % d->ttl_len)->e;
            if (!volatile_only && d->ht[0].used + d->ht[1].used)
                return random_entry(s, d);
        }
        return NULL;
    }
    for (;;) {
        if (!pool_populate(s, kind, volatile_only, samples, now_s))
            return NULL;
        struct entry *e = pool_pop(s, volatile_only, db);
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
        struct entry *e = evict_pick(s, kind, volatile_only, samples, now_s, &db);
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
        struct db *d = &s->db[i];
        while (rehash(s, d, 100))
            if (util_mono_ns() > deadline)
                return;
        maybe_shrink(s, d);
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
    for (int i = 0; i < STORE_DIRTY_MAX; i++)
        if (s->dirty[i].o)
            m += object_memory(s->dirty[i].o) - s->dirty[i].mem;
    return m;
}
