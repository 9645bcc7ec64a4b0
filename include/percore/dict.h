/*
 * dict: a hash table of binary-safe string keys, each with an optional
 * value (a byte string for hashes, a double for sorted sets, none for sets):
 * the large encoding of sets and hashes and the member index of sorted sets.
 *
 * Also the store's keyspace: a dict made with dict_create_meta carries the
 * owner's fixed-size record in front of each entry (the store's access time
 * and LFU counter) instead of a value, the owner's bytes after the key (the
 * tail: the store embeds the key's object there) and the entry's spare word
 * the owner's (the key's TTL slot).
 *
 * Keyed with SipHash under the process seed (store_set_seed), so crafted
 * members cannot pile into one bucket; incremental rehash (each operation
 * moves a bucket, no pause proportional to the size); O(1) memory figure.
 * Owned and touched by one shard thread only.
 */
#ifndef PERCORE_DICT_H
#define PERCORE_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dict;

/* an entry: public so that the hot paths read it inline; only dict.c links or frees one.  A
 * dict_create() dict keeps each entry's value just in front of it (union dict_value) */
struct dict_entry {
    struct dict_entry *next; /* next entry in the bucket chain */
    uint32_t klen;           /* key length */
    uint32_t aux;            /* string value length; the owner's word in a dict_create_meta dict */
    char key[];              /* key bytes, binary, not terminated; then the owner's tail, if any */
};

union dict_value {
    char *s;  /* string value, NULL when none (hashes) */
    double d; /* double value (sorted sets) */
};

struct dict *dict_create(void);
/* a dict whose entries each carry `meta` bytes (a multiple of 8, at most 248) of the owner's just
 * before the entry (dict_entry_meta) instead of a value; dict_add leaves them for the owner to
 * fill, and dict_add_tail gives an entry room for the owner's bytes after its key */
struct dict *dict_create_meta(size_t meta);
void dict_destroy(struct dict **d);
/* lazy free: release up to `budget` entries; true (and *d freed) once all are */
bool dict_destroy_step(struct dict **d, size_t budget);
/* dict_destroy_step telling fn of each entry just before it is freed (the owner frees its values) */
typedef void dict_entry_fn(void *arg, struct dict_entry *e);
bool dict_drain_step(struct dict **d, size_t budget, dict_entry_fn *fn, void *arg);

size_t dict_size(const struct dict *d);
size_t dict_memory(const struct dict *d); /* bytes: table, entries, keys, values */

struct dict_entry *dict_find(struct dict *d, const void *key, size_t len);
/* dict_find that never moves entries nor changes dict_memory(): for reads
 * of several dicts at once (the store re-measures only recently looked-up
 * objects) and lookups during an iteration */
struct dict_entry *dict_peek(const struct dict *d, const void *key, size_t len);
/* add key; returns the new entry, or NULL when present (then *existing, if asked, is it) */
struct dict_entry *dict_add(struct dict *d, const void *key, size_t len, struct dict_entry **existing);
/* dict_add of a dict_create_meta dict's entry with room for `tail` bytes (4-aligned) after its key,
 * dict_entry_tail() */
struct dict_entry *dict_add_tail(struct dict *d, const void *key, size_t len, size_t tail,
                                 struct dict_entry **existing);
/* true if key was there and is now gone */
bool dict_delete(struct dict *d, const void *key, size_t len);

static inline const char *dict_entry_key(const struct dict_entry *e, size_t *len)
{
    if (len)
        *len = e->klen;
    return e->key;
}
/* the owner's record of a dict_create_meta dict's entry: the `meta` bytes in front of it */
static inline void *dict_entry_meta(struct dict_entry *e, size_t meta)
{
    return (char *)e - meta;
}
/* bytes the entry's allocation holds (its record, key, tail; not a string value) */
size_t dict_entry_memory(const struct dict *d, const struct dict_entry *e);
/* the owner's tail of a dict_add_tail entry: 4-aligned, just past the key */
static inline void *dict_entry_tail(const struct dict_entry *e)
{
    return (char *)e->key + (((size_t)e->klen + 3) & ~(size_t)3);
}
/* the entry whose tail is at `tail`, its key klen bytes long */
static inline struct dict_entry *dict_tail_entry(void *tail, size_t klen)
{
    return (struct dict_entry *)(void *)((char *)tail - ((klen + 3) & ~(size_t)3) - sizeof(struct dict_entry));
}
/* give e room for exactly `tail` bytes of tail (as much of the old tail's bytes kept as fit; a
 * shrink returns the memory): the entry may move, and the new one is returned, linked where e
 * was; the owner updates its own pointers to it */
struct dict_entry *dict_entry_resize_tail(struct dict *d, struct dict_entry *e, size_t tail);
/* string values (hashes): a copy of p[0..n) */
void dict_entry_set_value(struct dict *d, struct dict_entry *e, const void *p, size_t n);
const char *dict_entry_value(const struct dict_entry *e, size_t *len);
/* pointer values (a shard's per-key tables: watchers, waiters) */
void dict_entry_set_pointer(struct dict *d, struct dict_entry *e, void *p);
void *dict_entry_pointer(const struct dict_entry *e);
/* double values (sorted sets) */
void dict_entry_set_double(struct dict_entry *e, double v);
double dict_entry_double(const struct dict_entry *e);

/*
 * A key of database db as one dict key (tables that span databases: key
 * locks, watched keys, blocked clients): db as an int32, then the key's
 * bytes; in inline_buf when it fits, else allocated until dict_dbkey_done.
 */
struct dict_dbkey {
    char *p;
    size_t len;
    char inline_buf[128];
};
void dict_dbkey_make(struct dict_dbkey *k, int db, const char *key, size_t len);
void dict_dbkey_done(struct dict_dbkey *k);
/* such a key's database, and its key bytes */
int dict_dbkey_split(const char *k, size_t klen, const char **key, size_t *len);

/* move up to n buckets of a rehash in progress (idle-time work); true while one is left to do */
bool dict_rehash(struct dict *d, size_t n);
/*
 * after deletes: a rehash step, and start shrinking if the table is under
 * 10% full (find/add/random also do both); not during an iteration of d
 */
void dict_compact(struct dict *d);

/*
 * a random entry (SPOP, SRANDMEMBER, ...), NULL when empty: every entry
 * equally likely, whatever the table's shape (dense, sparse, mid-rehash);
 * a few bucket reads on average, and a bounded rehash step when the table
 * is sparse
 */
struct dict_entry *dict_random(struct dict *d);
/*
 * about n entries for sampling (eviction): every entry of a window of
 * consecutive live buckets at a random place (wrapping around), n * buckets /
 * entries wide, so each entry is in it with the same probability (unlike the
 * first n after a random bucket: an entry after a run of empty buckets would
 * come up more often); fn is called for each.  Moves the rehash on first (n
 * buckets), as Redis's dictGetSomeKeys.  rng: the caller's util_rand state.
 */
typedef void dict_scan_fn(void *arg, const struct dict_entry *e);
void dict_sample(struct dict *d, size_t n, uint64_t *rng, dict_scan_fn *fn, void *arg);

/*
 * full iteration; the dict must not change meanwhile (except deleting the
 * current entry).  dict_find, dict_add and dict_random of the same dict move
 * entries (incremental rehash): not during its iteration.  dict_delete never
 * moves entries.
 */
struct dict_iter {
    struct dict *d;
    int table;
    size_t bucket;
    struct dict_entry *next;
};
void dict_iter_init(struct dict_iter *it, struct dict *d);
struct dict_entry *dict_iter_next(struct dict_iter *it);

/*
 * Redis's reverse-binary cursor scan (SSCAN/HSCAN/ZSCAN): calls fn for the
 * entries of a bucket or more and returns the next cursor, 0 when done;
 * every entry present for the whole scan is returned at least once.
 */
uint64_t dict_scan(struct dict *d, uint64_t cursor, dict_scan_fn *fn, void *arg);

#endif
