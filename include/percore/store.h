/*
 * store: one shard's keyspace.
 *
 * A store holds `databases` tables (SELECT 0..N-1), each a hash table keyed
 * by binary-safe key bytes with siphash under a random per-process seed, so
 * crafted keys cannot pile into one bucket.  Tables grow and shrink by
 * incremental rehash: every lookup/insert/delete moves a bucket or two, and
 * the shard's timer moves more while idle, so no single operation pauses for
 * time proportional to the table's size.
 *
 * Expiry: an absolute unix time in ms per key (-1 none).  Lookups expire
 * lazily (an expired key is deleted and reported missing);
 * store_active_expire() samples keys with a TTL, Redis's algorithm, and is
 * driven by the shard's timer.
 *
 * A store is touched only by the thread that owns it (ARCHITECTURE.md rule 1).
 * Functions taking `now` use it (ms, the shard's cached clock) to decide
 * whether a key has expired.
 */
#ifndef PERCORE_STORE_H
#define PERCORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "percore/object.h"

struct store;

/* process-wide hash seed (also the dicts' key, see siphash.h), set once at
 * startup before any store exists */
void store_set_seed(const uint8_t seed[16]);

/* process-wide: expired keys are hidden from lookups, scans and RANDOMKEY but kept (a replica, as
 * Redis's expireIfNeeded on one: its master's DEL removes them); any thread, read when a key is expired */
void store_keep_expired(bool on);

struct store *store_create(int databases);
void store_destroy(struct store **s);
int store_databases(const struct store *s);
/* s is a scratch store holding copies of the keys a command was given (core's gathers), not a shard's
 * keyspace: a key it was not given is not in it, wherever it lives -- unless every_key says that the
 * command run on it is given every key it reads (its pattern keys too).  Its owner's thread only */
void store_mark_copies(struct store *s, bool every_key);
bool store_holds_copies(const struct store *s);
bool store_holds_every_key(const struct store *s);

/*
 * NULL when missing or expired (an expired key is deleted on the way).
 * A lookup is an access: it sets the key's access time.
 */
struct object *store_lookup(struct store *s, int db, const char *key, size_t klen, int64_t now);
/* the same without counting as an access (Redis's LOOKUP_NOTOUCH); *idle_s, if
 * asked, is the seconds since the key's last access (OBJECT IDLETIME).  The
 * object must not be changed through this pointer. */
struct object *store_peek(struct store *s, int db, const char *key, size_t klen, int64_t now,
                          long long *idle_s);

enum {
    STORE_KEEPTTL = 1, /* keep the key's existing expire when replacing */
    STORE_ACCESS = 2,  /* replacing counts as an access of the key for LFU (Redis's setKey looks it up):
                          given a `now` (the set's own lookup) it is one anyway */
};
/*
 * Set key to val, replacing any existing value (destroyed) and clearing its
 * TTL unless STORE_KEEPTTL.  The store takes val: it moves it into the key's
 * entry (object_embed) and frees val's block, so the caller must not use val
 * afterwards (store_lookup() gives the stored object); val must not be the
 * object stored under key.  A replaced key's idle time starts again (OBJECT
 * IDLETIME 0, as Redis's new object), its LFU counter stays (Redis's
 * dbOverwrite).  Returns 1 if the key was new, 0 if replaced.
 */
int store_set(struct store *s, int db, const char *key, size_t klen, struct object *val, int flags);
/*
 * store_set of the string p[0..n), built in the key's entry (no object of its own first).  now >= 0:
 * after a store_lookup() of key at now, with one hash of the key (Redis's SET: lookupKeyWrite, then
 * setKey): an expired key is deleted first (so the set makes it anew, 1), a live one is accessed,
 * then replaced; now < 0: no lookup.
 */
int store_set_string(struct store *s, int db, const char *key, size_t klen, const void *p, size_t n, int flags,
                     int64_t now);
/*
 * After changing the collection o in place, the value store_lookup() gave for key of db: its
 * entry is resized to what the value now needs and a small one packed into it again (object.h's
 * "Embedding"; the entry may move).  o is stale afterwards.  Nothing when o is packed (it was
 * not changed).
 */
void store_settle(struct store *s, int db, const char *key, size_t klen, struct object *o);
/* 1 if a live key was deleted, 0 if there was none (expired counts as none) */
int store_delete(struct store *s, int db, const char *key, size_t klen, int64_t now);
/* remove key and hand its object to the caller (NULL if none); TTL returned in *expire */
struct object *store_take(struct store *s, int db, const char *key, size_t klen, int64_t now,
                          int64_t *expire);

/* expire of a live key: ms unix time, -1 no TTL, -2 no such key */
int64_t store_get_expire(struct store *s, int db, const char *key, size_t klen, int64_t now);
/* set an absolute expire (ms) on an existing key; 0 ok, -1 no such key */
int store_set_expire(struct store *s, int db, const char *key, size_t klen, int64_t when, int64_t now);
/* 1 if a TTL was removed, 0 if the key had none or does not exist */
int store_persist(struct store *s, int db, const char *key, size_t klen, int64_t now);

size_t store_size(const struct store *s, int db);          /* keys (may count not-yet-reaped expired) */
size_t store_expires_size(const struct store *s, int db);  /* keys with a TTL */

/* drop every key of db (db < 0: of every db) */
void store_flush(struct store *s, int db);
/* swap two databases' contents; 0 ok, -1 bad index */
int store_swapdb(struct store *s, int a, int b);
/* MOVE: 1 moved, 0 not moved (missing in src or present in dst) */
int store_move(struct store *s, int src_db, int dst_db, const char *key, size_t klen, int64_t now);
/* RENAME within db: key becomes dkey with its TTL, access time and LFU counter; 1 renamed, 0 not
 * (key missing, dkey present, or the same key) */
int store_rename(struct store *s, int db, const char *key, size_t klen, const char *dkey, size_t dklen, int64_t now);

/*
 * One step of a full-coverage cursor scan (Redis's reverse-binary cursor):
 * calls fn for the keys of a bucket or more (about `count` keys), skipping
 * expired ones, and returns the next cursor, 0 when the scan is complete.
 * Every key present for the whole scan is returned at least once, even
 * across rehashes.
 */
typedef void store_scan_fn(void *arg, const char *key, size_t klen, struct object *val);
uint64_t store_scan(struct store *s, int db, uint64_t cursor, long count, int64_t now,
                    store_scan_fn *fn, void *arg);

/* every key of db once, logically expired ones included (DEBUG DIGEST, as Redis walks its dict), with its
 * expire (-1 none); fn must not change the store */
typedef void store_each_fn(void *arg, const char *key, size_t klen, const struct object *val, int64_t expire);
void store_each(struct store *s, int db, store_each_fn *fn, void *arg);

/* a random live key, every key of the db equally likely (expired ones met on the
 * way are reaped): returns true and points *key and *klen into the store */
bool store_random_key(struct store *s, int db, int64_t now, const char **key, size_t *klen);

/*
 * Active expiry: sample keys with a TTL in every db and delete the expired
 * ones, Redis's adaptive cycle (repeat while more than 10% of a sample was
 * expired), spending at most budget_us microseconds.  Returns keys deleted.
 */
size_t store_active_expire(struct store *s, int64_t now, long budget_us);
/* a few rehash steps on every table that is rehashing (idle-time work) */
void store_rehash_step(struct store *s);

/*
 * Lazy free: a deleted or replaced collection of more than 64 elements is
 * not freed at once (that would stall the shard for a huge one) but in
 * steps: store_rehash_step() frees a large step per timer tick, and the
 * shard calls store_lazyfree_step() with a small budget every loop turn
 * while store_lazyfree_pending().  Returns whether work is left.
 */
bool store_lazyfree_step(struct store *s, size_t budget);
bool store_lazyfree_pending(const struct store *s);

/*
 * Eviction (maxmemory), Redis's approximated algorithms (evict.c).  `how` is
 * one of the STORE_EVICT_* kinds, or'ed with STORE_EVICT_VOLATILE to pick
 * only among keys with a TTL.  LRU, LFU and TTL sample about `samples` keys
 * per database into the store's pool of the 16 best candidates seen so far
 * and evict the best one still present (idlest, least frequently used,
 * nearest expiry; ties broken at random); RANDOM evicts a random key, the
 * databases taken in turn.  Every key is as likely to be sampled, or to be
 * RANDOM's victim, as any other of its database.  Keys
 * are deleted until `bytes` of store_memory() are freed, nothing is left to
 * evict, or about 500 us have passed (Redis's eviction time limit at the
 * default tenacity).  Returns the bytes freed.  A big collection goes to the
 * lazy free list (its bytes count as freed at once).
 */
enum store_evict_kind {
    STORE_EVICT_LRU = 0,      /* longest since the last access (entry atime) */
    STORE_EVICT_LFU = 1,      /* lowest decayed access-frequency counter */
    STORE_EVICT_RANDOM = 2,   /* any */
    STORE_EVICT_TTL = 3,      /* nearest expire (volatile only) */
    STORE_EVICT_VOLATILE = 8, /* flag: only keys with a TTL */
};
size_t store_evict(struct store *s, int how, int samples, size_t bytes, int64_t now);

/*
 * LFU: while on, every store_lookup() also updates the key's 8-bit
 * logarithmic access counter (Redis's LFULogIncr with lfu-log-factor
 * log_factor; a decrement per decay_time idle minutes, lfu-decay-time, 0
 * none).  The shard turns it on while an LFU maxmemory-policy is
 * configured.  New keys start at 5.
 */
void store_track_lfu(struct store *s, bool on, int log_factor, int decay_time);
/* OBJECT FREQ: the key's decayed counter, without counting an access; -1 no such key */
int store_lfu_freq(struct store *s, int db, const char *key, size_t klen, int64_t now);
/* the key's LFU counter set to freq (kept within 0..255), as of now; 0 ok, -1 no such key */
int store_set_lfu_freq(struct store *s, int db, const char *key, size_t klen, int freq, int64_t now);
/* the key's idle time set to idle_s seconds as of now (RESTORE IDLETIME: its last access idle_s ago,
 * not before the epoch); 0 ok, -1 no such key */
int store_set_idle(struct store *s, int db, const char *key, size_t klen, long long idle_s, int64_t now);
/* MEMORY USAGE: bytes the key holds (its entry with the key, and the value), as used_memory counts
 * them, without counting an access; -1 no such key */
long long store_key_memory(struct store *s, int db, const char *key, size_t klen, int64_t now);

/*
 * Snapshot: every key the store holds at store_snapshot_begin, handed to fn
 * exactly once, as it was then, while the store goes on changing (BGSAVE
 * without a fork).  store_snapshot_step walks the dbs and hands out keys
 * not out yet; any store call that is about to read, change, move or
 * remove such a key hands it out first (so does FLUSHDB/FLUSHALL, for the
 * whole db, at once), and keys added since the start are not in it.  A key
 * keeps the db it was in at the start across SWAPDB.  Keys past their TTL
 * but not yet reaped are handed out too, with their expire time.  The key,
 * value and fields are valid only during the call; fn must not call into
 * this store.  Beginning a snapshot drops one under way.
 */
struct store_snapshot_key {
    int db;
    const char *key;
    size_t klen;
    const struct object *val;
    int64_t expire;     /* ms unix time, -1 none */
    long long idle_s;   /* seconds since its last access (OBJECT IDLETIME) */
    int freq;           /* its LFU counter (OBJECT FREQ) */
};
typedef void store_snapshot_fn(void *arg, const struct store_snapshot_key *k);
void store_snapshot_begin(struct store *s, store_snapshot_fn *fn, void *arg);
/* hand out keys of about `budget` buckets; false once every key is out (the snapshot is over) */
bool store_snapshot_step(struct store *s, size_t budget);
bool store_snapshot_active(const struct store *s);
/* stop handing out keys (nothing else changes) */
void store_snapshot_abort(struct store *s);

/* counters, owned by this store's thread */
/* a key left on its own (told before it goes, its key bytes valid for the call): Redis's "expired" and
 * "evicted" keyspace events */
enum store_gone { STORE_GONE_EXPIRED, STORE_GONE_EVICTED };
typedef void store_gone_fn(void *arg, enum store_gone why, int db, const char *key, size_t klen);
void store_set_gone_listener(struct store *s, store_gone_fn *fn, void *arg);
/* the first of the server's stores (shard 0's, or the one every shard shares): a keyspace-wide command,
 * which runs on every store, counts its one-off changes on it (SWAPDB's one, in Redis's dirty) */
void store_set_first(struct store *s);
bool store_is_first(const struct store *s);
uint64_t store_expired_keys(const struct store *s);  /* lazily + actively expired, total */
uint64_t store_evicted_keys(const struct store *s);  /* removed by store_evict, total */
/*
 * Bytes held by this store, as the allocator's usable sizes of its hash
 * tables, key entries, TTL arrays, objects (strings, collections and their
 * nodes) and eviction pool; flushed tables count until freed in steps,
 * collections on the lazy free list do not.  Not counted: connections,
 * buffers, cross-shard batches, the allocator's own overhead.
 */
size_t store_memory(const struct store *s);

#endif
