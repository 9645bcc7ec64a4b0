/*
 * hash: the hash type (Redis's t_hash.c data layer).
 *
 * A hash object (object_type OBJ_HASH) points at one of two structures:
 *
 *   HASH_LISTPACK   a listpack of field,value,field,value,... entries, in
 *                   insertion order (OBJECT ENCODING "listpack");
 *   HASH_HASHTABLE  a dict whose keys are the fields and whose string values
 *                   are the values ("hashtable").
 *
 * A new hash is a listpack.  It becomes a hashtable, for good, once it holds
 * more than hash-max-listpack-entries fields or a field or value longer than
 * hash-max-listpack-value bytes, exactly when Redis 7.0 converts; a hashtable
 * never goes back (Redis converts back only when loading an RDB file).  The
 * thresholds are passed in by the command layer (struct hash_limits, read
 * from the config), so this module does not read the config itself.
 *
 * Once stored, a small listpack (up to 254 bytes) is packed into its key's
 * entry (object.h's "Embedding"): the reads here work on it in place, and
 * every change (hash_set, hash_delete, hash_convert, hash_try_conversion
 * when it converts) first copies it out (object_collection_own); the caller
 * then has the store pack it again (store_settle).
 *
 * Pointers returned into a hash (field and value bytes) stay valid until the
 * next change to that hash (or store_settle).
 *
 * Threading: a hash belongs to the shard that owns its key, like any object;
 * every function here is called by that shard's thread only.  The random
 * generator behind hash_random*() is thread-local.
 */
#ifndef PERCORE_HASH_H
#define PERCORE_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "percore/dict.h"
#include "percore/object.h"

enum hash_encoding {
    HASH_LISTPACK = 0,  /* "listpack": field,value pairs in a listpack */
    HASH_HASHTABLE = 1, /* "hashtable": a dict field -> value */
};

/* the conversion thresholds (hash-max-listpack-entries / -value) */
struct hash_limits {
    size_t max_entries; /* more fields than this: hashtable */
    size_t max_value;   /* a field or value longer than this: hashtable */
};

/* a new empty hash object (listpack); the caller owns it (store_set takes it) */
struct object *hash_create(void);

/* fields in o (an OBJ_HASH object), O(1) */
size_t hash_length(const struct object *o);

/*
 * Redis hashTypeTryConversion: before adding arguments whose longest is
 * `maxlen` bytes and whose lengths sum to `sumlen`, convert a listpack hash
 * to a hashtable if maxlen > lim->max_value or the listpack would grow past
 * its safe size (1 GiB, Redis lpSafeToAdd).
 */
void hash_try_conversion(struct object *o, const struct hash_limits *lim, size_t maxlen,
                         size_t sumlen);
/* listpack -> hashtable (no-op on a hashtable) */
void hash_convert(struct object *o);

/* the value of field f: true and *v, *vlen set when present */
bool hash_get(const struct object *o, const void *f, size_t flen, const char **v, size_t *vlen);
bool hash_exists(const struct object *o, const void *f, size_t flen);
/*
 * Redis hashTypeSet: set field f to v (copied).  Converts to a hashtable
 * first when f or v is longer than lim->max_value, and after inserting when
 * the fields outnumber lim->max_entries.  Returns 1 if f existed (value
 * replaced), 0 if it was added.
 */
int hash_set(struct object *o, const struct hash_limits *lim, const void *f, size_t flen,
             const void *v, size_t vlen);
/* remove field f; true if it was there.  The caller deletes an emptied key. */
bool hash_delete(struct object *o, const void *f, size_t flen);

/*
 * Iteration over every field/value, in the structure's order (insertion
 * order for a listpack).  The hash must not change meanwhile.
 */
struct hash_iter {
    const struct object *o; /* the hash */
    uint32_t pos;           /* listpack: position of the next field */
    struct dict_iter di;    /* hashtable: the dict iterator */
};
void hash_iter_init(struct hash_iter *it, const struct object *o);
bool hash_iter_next(struct hash_iter *it, const char **f, size_t *flen, const char **v,
                    size_t *vlen);

/* one random field/value (o non-empty); may move dict entries (rehash step) */
void hash_random(struct object *o, const char **f, size_t *flen, const char **v, size_t *vlen);

/*
 * `count` distinct random fields (0 < count < hash_length(o)), each passed to
 * fn with its value.  A listpack answers in listpack order (Redis
 * lpRandomPairsUnique); a hashtable in no particular order.
 */
typedef void hash_pair_fn(void *arg, const char *f, size_t flen, const char *v, size_t vlen);
void hash_random_unique(struct object *o, size_t count, hash_pair_fn *fn, void *arg);

/*
 * HSCAN step (Redis scanGenericCommand for hashes): a listpack hands every
 * pair to fn and returns 0; a hashtable scans from cursor until about
 * `count` pairs were handed over (or 10*count buckets visited, or the end)
 * and returns the next cursor, 0 when the scan is complete.
 */
uint64_t hash_scan(struct object *o, uint64_t cursor, unsigned long count, hash_pair_fn *fn,
                   void *arg);

#endif
