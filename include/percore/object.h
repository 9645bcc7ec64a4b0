/*
 * object: a value stored under a key.
 *
 * A string object owns its bytes and a capacity, so APPEND and SETRANGE grow
 * it in place.  A collection (list, set, zset, hash) is a small object that
 * points at its type's structure and says which encoding that structure is
 * in; each type module (store/list.c, set.c, zset.c, hash.c, stream.c) provides a
 * struct object_type_ops, and this module dispatches to it.  Objects belong to the
 * shard that created them and are never touched by another thread; to move a
 * value across shards (RENAME) it is serialized into bytes and rebuilt on the
 * owner of the destination key.
 */
#ifndef PERCORE_OBJECT_H
#define PERCORE_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum object_type {
    OBJ_STRING = 0,
    OBJ_LIST = 1,
    OBJ_SET = 2,
    OBJ_ZSET = 3,
    OBJ_HASH = 4,
    OBJ_STREAM = 5,
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

/* ---- collections ------------------------------------------------------- */

typedef void object_emit_fn(void *arg, const void *p, size_t n);

struct object_type_ops {
    const char *name;                                   /* TYPE's answer */
    const char *(*encoding_name)(unsigned encoding);    /* OBJECT ENCODING's answer */
    size_t (*length)(unsigned encoding, const void *ptr); /* elements, O(1) */
    size_t (*memory)(unsigned encoding, const void *ptr); /* bytes held, O(1) */
    void (*destroy)(unsigned encoding, void *ptr);
    /* free up to `budget` elements; true once everything is freed (lazy free) */
    bool (*destroy_step)(unsigned encoding, void *ptr, size_t budget);
    void (*serialize)(unsigned encoding, const void *ptr, object_emit_fn *emit, void *arg);
    /* rebuild from serialize's bytes; NULL when malformed */
    void *(*deserialize)(const void *p, size_t n, unsigned *encoding);
    /* optional: the structure's size when it is one flat block (2-aligned, freed by destroy, a
     * bytewise copy of it as good as it) small enough to be packed into an embedded object's
     * room, else 0 (see "Embedding") */
    size_t (*packed_size)(unsigned encoding, const void *ptr);
};

extern const struct object_type_ops list_type_ops;
extern const struct object_type_ops set_type_ops;
extern const struct object_type_ops zset_type_ops;
extern const struct object_type_ops hash_type_ops;
extern const struct object_type_ops stream_type_ops;

/* a collection object owning ptr (a structure of its type's module); encoding < 256 */
struct object *object_collection_create(enum object_type type, unsigned encoding, void *ptr);
void *object_collection_ptr(const struct object *o);
unsigned object_collection_encoding(const struct object *o);
/* after a conversion (e.g. listpack -> hashtable): the new structure; the old one is the caller's.
 * Not on a packed object (object_collection_own first) */
void object_collection_set(struct object *o, unsigned encoding, void *ptr);
/* before changing o's structure: a packed one (read-only in place) is copied out into a block of
 * its own, and o (same address) points at it; the owner later calls object_repack() */
void object_collection_own(struct object *o);
/* elements of a collection (1 for a string) */
size_t object_length(const struct object *o);
/* lazy free: release up to `budget` elements of o; true (and o freed) once done */
bool object_destroy_step(struct object **o, size_t budget);

/* bytes this object holds (header + payload; an embedded one: the payload), for memory accounting */
size_t object_memory(const struct object *o);

/*
 * Embedding: an owner (the store) keeps an object in its own memory, `room`
 * bytes at `at` (4-aligned).  An embedded object works as any other, except
 * that object_memory() leaves out, and object_destroy() does not free, the
 * header block, which is the owner's.  A collection whose type gives it a
 * packed_size (a small hash's listpack) is packed: its structure itself
 * sits in the room, 2 bytes in, with nothing of its own to free or count
 * (object_memory 0).  It is read in place; object_collection_own() copies it
 * out before a change, after which the owner resizes the room to
 * object_embed_size() (the first 16 bytes kept) and calls object_repack().
 */
/* the room o needs embedded: 16 bytes, a short string's header and bytes, or a packable
 * structure's 2 + its bytes (16 at least) */
size_t object_embed_size(const struct object *o);
/* the room a string of n bytes needs embedded */
size_t object_string_embed_size(size_t n);
/* the room embedded o was given (what a new object may use there) */
size_t object_embed_room(const struct object *o);
/* move o (not embedded) into room bytes at `at`, freeing its block; returns the embedded object */
struct object *object_embed(void *at, size_t room, struct object *o);
/* a string of p[0..n) built embedded in room bytes at `at` */
struct object *object_string_embed(void *at, size_t room, const void *p, size_t n);
/* a copy of embedded o in a block of its own, which takes over its payload: the owner then frees
 * its room without object_destroy() */
struct object *object_unembed(const struct object *o);
bool object_embedded(const struct object *o);
/* o's structure is packed in its owner's room (read-only there) */
bool object_packed(const struct object *o);
/* embedded, unpacked o, its room resized to room >= object_embed_size(o) bytes (the first 16 kept):
 * its structure packed again when it can be, the room noted; returns o */
struct object *object_repack(struct object *o, size_t room);

/*
 * Cross-shard transfer (RENAME): serialize into a self-contained byte string
 * that object_deserialize() rebuilds on another thread.  The encoding is
 * private to this module.  deserialize returns NULL on malformed input.
 */
void object_serialize(const struct object *o, object_emit_fn *emit, void *arg);
struct object *object_deserialize(const void *p, size_t n);

#endif
