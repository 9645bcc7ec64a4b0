/*
 * set: the set type (Redis 7.0's t_set.c data side).
 *
 * Two encodings, as Redis 7.0 (which has no listpack sets):
 *   SET_ENC_INTSET     an intset, while every member is an integer in
 *                      canonical form (Redis string2ll) and there are at most
 *                      set-max-intset-entries of them
 *   SET_ENC_HASHTABLE  a dict of members without values
 * A set converts intset -> hashtable (never back) when a non-integer member
 * is added or the intset grows past the threshold; OBJECT ENCODING says
 * "intset" or "hashtable".
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
};

/* Redis setTypeCreate: an empty set able to hold member p[0..n) (an intset
 * when it is an integer, else a hashtable) */
struct object *set_create_for(const void *p, size_t n);
/* an empty set in the given encoding */
struct object *set_create(enum set_encoding enc);

/* add p[0..n); true if it was new.  Converts to a hashtable when the member
 * is not an integer or the intset would hold more than max_intset members. */
bool set_add(struct object *o, const void *p, size_t n, long long max_intset);
/* true if p[0..n) was a member and is now gone */
bool set_remove(struct object *o, const void *p, size_t n);
bool set_is_member(struct object *o, const void *p, size_t n);
size_t set_size(const struct object *o);
enum set_encoding set_encoding(const struct object *o);
/* convert an intset set to a hashtable (no-op when it is one) */
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
    struct dict_iter di;    /* hashtable iterator */
};
void set_iter_init(struct set_iter *it, struct object *o);
bool set_iter_next(struct set_iter *it, struct set_member *m);

/* a random member of a non-empty set (uniform for intsets, Redis-fair for hashtables) */
void set_random(struct object *o, struct set_member *m);

/* the hashtable of a hashtable-encoded set (SSCAN's cursor walk) */
struct dict *set_dict(const struct object *o);

/* the thread-local PRNG the set type uses for random members */
uint64_t set_rand(void);

#endif
