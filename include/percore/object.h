/*
 * object: a value stored under a key.
 *
 * Only strings exist so far (the other types arrive with the data-types
 * issue and add their encodings here).  A string object owns its bytes and a
 * capacity, so APPEND and SETRANGE grow it in place.  Objects belong to the
 * shard that created them and are never touched by another thread; to move a
 * value across shards (RENAME) it is serialized into bytes and rebuilt on the
 * owner of the destination key.
 */
#ifndef PERCORE_OBJECT_H
#define PERCORE_OBJECT_H

#include <stddef.h>
#include <stdint.h>

enum object_type {
    OBJ_STRING = 0,
    OBJ_LIST = 1,
    OBJ_SET = 2,
    OBJ_ZSET = 3,
    OBJ_HASH = 4,
};

struct object;

struct object *object_string_create(const void *p, size_t n);
struct object *object_string_from_ll(long long v);
void object_destroy(struct object **o);

enum object_type object_type(const struct object *o);
/* "string", "list", ... as TYPE prints it */
const char *object_type_name(const struct object *o);
/* OBJECT ENCODING's answer: "int", "embstr" or "raw" for strings */
const char *object_encoding_name(const struct object *o);

/* string access (o must be OBJ_STRING) */
const char *object_string_ptr(const struct object *o, size_t *len);
size_t object_string_len(const struct object *o);
/* append n bytes; returns the new length */
size_t object_string_append(struct object *o, const void *p, size_t n);
/* overwrite at offset, zero-padding any gap; returns the new length */
size_t object_string_setrange(struct object *o, size_t offset, const void *p, size_t n);
/* replace the contents (INCR and friends reuse the object) */
void object_string_set(struct object *o, const void *p, size_t n);

/* the string was made from a float (INCRBYFLOAT): OBJECT ENCODING never says
 * "int" for it, as in Redis; object_string_set() forgets this */
void object_string_mark_float(struct object *o);

/* bytes this object holds (header + payload), for memory accounting */
size_t object_memory(const struct object *o);

/*
 * Cross-shard transfer (RENAME): serialize into a self-contained byte string
 * that object_deserialize() rebuilds on another thread.  The encoding is
 * private to this module.  deserialize returns NULL on malformed input.
 */
void object_serialize(const struct object *o, void (*emit)(void *arg, const void *p, size_t n), void *arg);
struct object *object_deserialize(const void *p, size_t n);

#endif
