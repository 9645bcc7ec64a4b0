/*
 * dict: a hash table of binary-safe string keys, each with an optional
 * value (a byte string for hashes, a double for sorted sets, none for sets):
 * the large encoding of sets and hashes and the member index of sorted sets.
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
struct dict_entry;

struct dict *dict_create(void);
void dict_destroy(struct dict **d);
/* lazy free: release up to `budget` entries; true (and *d freed) once all are */
bool dict_destroy_step(struct dict **d, size_t budget);

size_t dict_size(const struct dict *d);
size_t dict_memory(const struct dict *d); /* bytes: table, entries, keys, values */

struct dict_entry *dict_find(struct dict *d, const void *key, size_t len);
/* dict_find that never moves entries nor changes dict_memory(): for reads
 * of several dicts at once (the store re-measures only recently looked-up
 * objects) and lookups during an iteration */
struct dict_entry *dict_peek(const struct dict *d, const void *key, size_t len);
/* add key; returns the new entry, or NULL when present (then *existing, if asked, is it) */
struct dict_entry *dict_add(struct dict *d, const void *key, size_t len, struct dict_entry **existing);
/* true if key was there and is now gone */
bool dict_delete(struct dict *d, const void *key, size_t len);

const char *dict_entry_key(const struct dict_entry *e, size_t *len);
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
typedef void dict_scan_fn(void *arg, const struct dict_entry *e);
uint64_t dict_scan(struct dict *d, uint64_t cursor, dict_scan_fn *fn, void *arg);

#endif
