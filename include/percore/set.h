/*
 * set: the set type (Redis 7.0's t_set.c data side).
 *
 * Three encodings, those of Redis 7.2:
 *   SET_ENC_INTSET     an intset, while every member is an integer in
 *                      canonical form (Redis string2ll) and there are at most
 *                      set-max-intset-entries of them
 *   SET_ENC_LISTPACK   a listpack of members in insertion order, while there
 *                      are at most set-max-listpack-entries of them and none
 *                      is longer than set-max-listpack-value bytes
 *   SET_ENC_HASHTABLE  a dict of members without values
 * A set starts as an intset when its first member is an integer, else as a
 * listpack (a hashtable when the member is already too long or
 * set-max-listpack-entries is 0).  It converts intset -> listpack when a
 * string member is added and the result fits the listpack limits, intset ->
 * hashtable otherwise or when the intset grows past set-max-intset-entries,
 * listpack -> hashtable past the listpack limits; never back (Redis 7.2's
 * rules).  Redis 7.0 has no listpack sets: the same data there is a
 * hashtable, so OBJECT ENCODING says "hashtable" for a listpack set, and
 * "intset" exactly when Redis 7.0 has one.
 *
 * The functions take the set object (made by set_create*) and update its
 * structure pointer when it moves.  Everything here belongs to the shard
 * thread that owns the object.
 */
#ifndef PERCORE_SET_H
#define PERCORE_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "percore/dict.h"
#include "percore/object.h"

enum set_encoding {
    SET_ENC_INTSET = 0,
    SET_ENC_HASHTABLE = 1,
    SET_ENC_LISTPACK = 2,
};

/* the conversion thresholds, read from the config by the command layer */
struct set_limits {
    long long max_intset;           /* set-max-intset-entries */
    long long max_listpack_entries; /* set-max-listpack-entries */
    long long max_listpack_value;   /* set-max-listpack-value */
};

/* Redis setTypeCreate: an empty set able to hold member p[0..n) (an intset
 * when it is an integer, else a listpack when p fits lim, else a hashtable) */
struct object *set_create_for(const void *p, size_t n, const struct set_limits *lim);
/* an empty set in the given encoding */
struct object *set_create(enum set_encoding enc);

/* add p[0..n); true if it was new.  Converts as the design note says. */
bool set_add(struct object *o, const void *p, size_t n, const struct set_limits *lim);
/* true if p[0..n) was a member and is now gone */
bool set_remove(struct object *o, const void *p, size_t n);
bool set_is_member(struct object *o, const void *p, size_t n);
size_t set_size(const struct object *o);
enum set_encoding set_encoding(const struct object *o);
/* convert an intset or listpack set to a hashtable (no-op when it is one) */
void set_convert_to_hashtable(struct object *o);

/*
 * A member handed out by iteration or random choice.  p/n is always the
 * member's bytes (for an intset member, its decimal form in buf); is_int and
 * v say it came from an intset and give its value.  p is valid until the set
 * changes (or the set_member is reused).
 */
struct set_member {
    const char *p;   /* the member's bytes */
    size_t n;        /* their length */
    bool is_int;     /* from an intset: v holds the value */
    int64_t v;       /* the value when is_int */
    char buf[24];    /* decimal form of v */
};

/* membership test for a member of another set (integer fast path) */
bool set_has_member(struct object *o, const struct set_member *m);

/* iteration over all members; the set must not change meanwhile */
struct set_iter {
    struct object *o;       /* the set */
    unsigned enc;           /* its encoding */
    size_t i;               /* next intset index */
    uint32_t pos;           /* next listpack position */
    struct dict_iter di;    /* hashtable iterator */
};
void set_iter_init(struct set_iter *it, struct object *o);
bool set_iter_next(struct set_iter *it, struct set_member *m);

/* a random member of a non-empty set, every member equally likely */
void set_random(struct object *o, struct set_member *m);

/* the hashtable of a hashtable-encoded set (SSCAN's cursor walk) */
struct dict *set_dict(const struct object *o);

/* the thread-local PRNG the set type uses for random members */
uint64_t set_rand(void);

#endif
