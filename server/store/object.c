/*
 * object: values stored under keys (see include/percore/object.h).
 *
 * Design.  A string object of up to OBJ_EMBED_MAX bytes is one allocation:
 * an 8-byte header (40-bit length, type, flags, block size) followed by the
 * bytes, so a small string costs its length plus 8, rounded up by mimalloc
 * (Redis's embstr costs 16 + 3 + 1); a longer one keeps its bytes in a
 * buffer of their own from the start (below).  There is no capacity field:
 * the capacity of the inline bytes is what the block holds past the header,
 * its usable size cached in 8-byte units when it fits 16 bits so that
 * object_memory(), which the store calls on every lookup, need not ask the
 * allocator.  The header address is what the store keeps, so it can never
 * move; when APPEND/SETRANGE outgrow
 * the inline room the bytes move to a separate buffer (OBJ_EXTERNAL), whose
 * pointer takes the first 8 bytes after the header (every object is
 * allocated with at least that much room) and whose capacity is again
 * mem_usable() of the buffer.  Growth is greedy like Redis's sdsMakeRoomFor:
 * double below 1 MiB, then 1 MiB more, so repeated APPENDs are amortised.
 *
 * Encoding names are computed from the bytes when asked (OBJECT ENCODING is
 * rare): "int" for a canonical long long of at most 20 characters (Redis
 * string2ll), "embstr" up to 44 bytes, "raw" beyond that or once APPEND or
 * SETRANGE has modified the value in place (OBJ_RAW), as Redis 7.0 reports.
 * object_string_set() (INCR and friends) clears OBJ_RAW, since Redis builds
 * a fresh object for those results.
 *
 * A collection is a header whose data[] holds the pointer to its type's
 * structure and whose second byte holds the encoding; the type module's
 * struct object_type_ops does the rest.
 *
 * Packing.  An embedded collection whose structure is one flat block of at
 * most a few hundred bytes (a small hash's listpack: the type's packed_size
 * says which) keeps that block itself inside its owner's room, right after
 * the first two bytes (type and flags, encoding), with no pointer and no
 * allocation of its own (OBJ_PACKED): a 17-byte key holding 5 short fields is
 * one 112-byte entry.  object_embed() packs what it can.  A packed structure
 * is read in place but never changed there: object_collection_own() first
 * copies it out into a block of its own and makes the object a plain
 * embedded one again (the owner's room always has the 16 bytes that takes),
 * and once the writer is done the owner resizes its room to
 * object_embed_size() and calls object_repack(), which packs it again if it
 * still fits.  A packed object's room is what its structure needs
 * (object_embed_room), its memory all its owner's (object_memory 0); an
 * unpacked embedded collection keeps its room exactly (where a string keeps
 * its length's low bits), so that a change of the same size resizes nothing.
 *
 * Embedding.  The store keeps a key's object inside the key's own entry
 * (store.c), not in a block of its own: object_embed() moves an object
 * there (header, and a small string's bytes), object_string_embed() builds a
 * string there directly (SET), and the object is then OBJ_EMBED: its header
 * block is the owner's, so object_memory() counts only what hangs off it
 * (an external buffer, a collection's structure), object_destroy() frees
 * only that, and `units` is the room the owner gave it.  A string of up to
 * OBJ_EMBED_MAX bytes keeps its bytes inline (a 16-byte value costs its
 * key's entry 24 bytes, where a block of its own cost 32 and the entry's
 * pointer to it 8 more); a longer one is made with its bytes in an external
 * buffer from the start, so that embedding it (or taking it back out,
 * object_unembed(), when a key is renamed) moves 16 bytes, never the value.
 *
 * Serialized form (private, for moving a value across shards):
 *   string:      type:u8  flags:u8  length:u64 little-endian  bytes[length]
 *   collection:  type:u8  0:u8  the type module's own bytes
 *
 * Threading: an object is touched only by the thread of the shard that owns
 * it; serialize/deserialize is how a value crosses to another thread.
 */
#include "percore/object.h"

#include "percore/mem.h"

#include <assert.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum {
    OBJ_EXTERNAL = 1, /* bytes live in a separate buffer, pointer at data[] */
    OBJ_RAW = 2,      /* modified in place by APPEND/SETRANGE: encoding "raw" */
    OBJ_FLOAT = 4,    /* made from a float (INCRBYFLOAT): never "int", as in Redis */
    OBJ_EMBED = 8,    /* lives in its owner's memory (a key's entry): the header block is not ours */
    OBJ_PACKED = 2,   /* a collection (OBJ_RAW is a string's): its structure is at OBJ_PACKED_AT, no pointer */
};

#define OBJ_EMBSTR_MAX 44          /* Redis OBJ_ENCODING_EMBSTR_SIZE_LIMIT */
#define OBJ_GREEDY_MAX (1u << 20)  /* Redis SDS_MAX_PREALLOC */
#define OBJ_LEN_MAX ((1ull << 40) - 1)
#define OBJ_SER_HEADER 10          /* type + flags + u64 length */
#define OBJ_EMBED_MAX 64           /* longest string kept inline (else in an external buffer) */
#define OBJ_ROOM_MAX (8u * 4096)   /* embedded room beyond this is not used (units stays small) */
#define OBJ_PACKED_AT 2            /* where a packed structure starts: after tf and the encoding */

/* tf and len_hi first: a packed collection keeps only those two */
struct object {
    uint8_t tf;       /* low nibble: enum object_type; high nibble: OBJ_* flags */
    uint8_t len_hi;   /* a string: bits 32..39 of the length (up to 1 TiB); a collection: its encoding */
    uint16_t units;   /* block size in 8-byte units, 0 if too big to say */
    uint32_t len_lo;  /* low 32 bits of the string length; an embedded collection: its exact room */
    char data[];      /* the bytes, or (OBJ_EXTERNAL, a collection) a pointer to them */
};

_Static_assert(sizeof(struct object) == 8, "object header is 8 bytes");

static unsigned obj_flags(const struct object *o)
{
    return o->tf >> 4;
}

static void obj_set_flags(struct object *o, unsigned flags)
{
    o->tf = (uint8_t)((o->tf & 0x0f) | (flags << 4));
}

/* the header block's usable size, without asking the allocator if cached */
static size_t obj_block(const struct object *o)
{
    return o->units ? (size_t)o->units * 8 : mem_usable(o);
}

static size_t obj_len(const struct object *o)
{
    return (size_t)o->len_lo | ((size_t)o->len_hi << 32);
}

static void obj_set_len(struct object *o, size_t n)
{
    assert(n <= OBJ_LEN_MAX);
    o->len_lo = (uint32_t)n;
    o->len_hi = (uint8_t)((uint64_t)n >> 32);
}

static char *obj_ext(const struct object *o)
{
    char *p;
    memcpy(&p, o->data, sizeof p);
    return p;
}

static void obj_set_ext(struct object *o, char *p)
{
    memcpy(o->data, &p, sizeof p);
}

static const struct object_type_ops *obj_ops(const struct object *o);

static bool obj_packed(const struct object *o)
{
    return object_type(o) != OBJ_STRING && (obj_flags(o) & OBJ_PACKED);
}

/* a collection's structure: packed in the header, or pointed at */
static void *obj_coll(const struct object *o)
{
    return obj_packed(o) ? (char *)o + OBJ_PACKED_AT : obj_ext(o);
}

static unsigned obj_enc(const struct object *o)
{
    return o->len_hi;
}

/* bytes of a collection's structure when it may be packed, else 0 */
static size_t obj_pack_size(const struct object *o)
{
    const struct object_type_ops *ops = obj_ops(o);
    return ops && ops->packed_size ? ops->packed_size(obj_enc(o), obj_coll(o)) : 0;
}

/* the room a collection needs embedded: its packed structure of n bytes (n > 0), at least what
 * header and pointer take (so it can always be unpacked in place), or (n 0) just those */
static size_t obj_packed_room(size_t n)
{
    size_t plain = sizeof(struct object) + sizeof(void *);
    return n && OBJ_PACKED_AT + n > plain ? OBJ_PACKED_AT + n : plain;
}

static size_t obj_coll_embed_size(const struct object *o)
{
    return obj_packed_room(obj_pack_size(o));
}

static char *obj_bytes(const struct object *o)
{
    return (obj_flags(o) & OBJ_EXTERNAL) ? obj_ext(o) : (char *)o->data;
}

static size_t obj_capacity(const struct object *o)
{
    if (obj_flags(o) & OBJ_EXTERNAL)
        return mem_usable(obj_ext(o));
    return obj_block(o) - sizeof(struct object);
}

/* make room for `need` bytes, keeping the first `keep` bytes; greedy if grow */
static char *obj_reserve(struct object *o, size_t need, size_t keep, bool greedy)
{
    if (need <= obj_capacity(o))
        return obj_bytes(o);
    size_t cap = need;
    if (greedy)
        cap = need < OBJ_GREEDY_MAX ? need * 2 : need + OBJ_GREEDY_MAX;
    char *p;
    if (obj_flags(o) & OBJ_EXTERNAL) {
        p = mem_realloc(obj_ext(o), cap);
    } else {
        p = mem_alloc(cap);
        memcpy(p, o->data, keep);
        obj_set_flags(o, obj_flags(o) | OBJ_EXTERNAL);
    }
    obj_set_ext(o, p);
    return p;
}

/* header and n inline bytes, at least a pointer's room (OBJ_EXTERNAL needs it) */
static size_t obj_inline_size(size_t n)
{
    return sizeof(struct object) + (n < sizeof(char *) ? sizeof(char *) : (n + 7) & ~(size_t)7);
}

/* bytes a new string of n bytes takes: inline up to OBJ_EMBED_MAX, else header and pointer */
static size_t obj_string_size(size_t n)
{
    return n > OBJ_EMBED_MAX ? sizeof(struct object) + sizeof(char *) : obj_inline_size(n);
}

/* a string of p[0..n) in `room` bytes at o (room >= obj_string_size(n)) */
static struct object *obj_string_init(struct object *o, size_t room, unsigned flags, const void *p, size_t n)
{
    o->units = room / 8 <= UINT16_MAX ? (uint16_t)(room / 8) : 0;
    o->tf = (uint8_t)(OBJ_STRING | flags << 4);
    obj_set_len(o, n);
    char *b = o->data;
    if (n > OBJ_EMBED_MAX) {
        b = mem_alloc(n);
        obj_set_ext(o, b);
        obj_set_flags(o, flags | OBJ_EXTERNAL);
    }
    if (n)
        memcpy(b, p, n);
    return o;
}

struct object *object_string_create(const void *p, size_t n)
{
    assert(n <= OBJ_LEN_MAX);
    struct object *o = mem_alloc(obj_string_size(n));
    return obj_string_init(o, mem_usable(o), 0, p, n);
}

size_t object_string_embed_size(size_t n)
{
    return obj_string_size(n);
}

static size_t obj_room(size_t room)
{
    return room < OBJ_ROOM_MAX ? room & ~(size_t)7 : OBJ_ROOM_MAX;
}

struct object *object_string_embed(void *at, size_t room, const void *p, size_t n)
{
    assert(n <= OBJ_LEN_MAX && room >= obj_string_size(n));
    return obj_string_init(at, obj_room(room), OBJ_EMBED, p, n);
}

size_t object_embed_size(const struct object *o)
{
    if (object_type(o) != OBJ_STRING)
        return obj_coll_embed_size(o);
    if (obj_flags(o) & OBJ_EXTERNAL)
        return sizeof(struct object) + sizeof(char *);
    return obj_inline_size(obj_len(o));
}

size_t object_embed_room(const struct object *o)
{
    if (obj_packed(o))
        return obj_coll_embed_size(o);
    if (object_type(o) != OBJ_STRING && object_embedded(o))
        return o->len_lo;
    return obj_block(o);
}

/* pack o's structure (packed_size n) into the header at o, freeing its block */
static void obj_pack(struct object *o, size_t n)
{
    void *ptr = obj_ext(o);
    obj_set_flags(o, obj_flags(o) | OBJ_PACKED);
    memcpy((char *)o + OBJ_PACKED_AT, ptr, n);
    obj_ops(o)->destroy(obj_enc(o), ptr);
}

/* a copy of o's packed structure (n bytes) in a block of its own */
static void *obj_unpack(const struct object *o, size_t n)
{
    void *c = mem_alloc(n);
    memcpy(c, obj_coll(o), n);
    return c;
}

void object_collection_own(struct object *o)
{
    if (!obj_packed(o))
        return;
    size_t n = obj_pack_size(o);
    void *c = obj_unpack(o, n);
    obj_set_flags(o, obj_flags(o) & ~(unsigned)OBJ_PACKED);
    o->len_lo = (uint32_t)obj_packed_room(n); /* the room it had (at least) */
    obj_set_ext(o, c);
}

bool object_packed(const struct object *o)
{
    return obj_packed(o);
}

struct object *object_repack(struct object *o, size_t room)
{
    assert(object_embedded(o) && !obj_packed(o));
    size_t n = obj_pack_size(o);
    assert(room >= obj_packed_room(n));
    if (n)
        obj_pack(o, n);
    else
        o->len_lo = (uint32_t)room;
    return o;
}

bool object_embedded(const struct object *o)
{
    return (obj_flags(o) & OBJ_EMBED) != 0;
}

struct object *object_embed(void *at, size_t room, struct object *o)
{
    assert(!object_embedded(o) && room >= object_embed_size(o));
    struct object *e = at;
    size_t n = obj_pack_size(o);
    if (n) {
        memcpy(e, o, sizeof(struct object) + sizeof(void *));
        obj_set_flags(e, obj_flags(o) | OBJ_EMBED);
        obj_pack(e, n);
        mem_release(o);
        return e;
    }
    memcpy(e, o, object_embed_size(o));
    e->units = (uint16_t)(obj_room(room) / 8);
    if (object_type(o) != OBJ_STRING)
        e->len_lo = (uint32_t)room;
    obj_set_flags(e, obj_flags(o) | OBJ_EMBED);
    mem_release(o);
    return e;
}

struct object *object_unembed(const struct object *o)
{
    assert(object_embedded(o));
    if (obj_packed(o))
        return object_collection_create(object_type(o), obj_enc(o), obj_unpack(o, obj_pack_size(o)));
    size_t n = object_embed_size(o);
    struct object *c = mem_alloc(n);
    memcpy(c, o, n);
    size_t block = mem_usable(c);
    c->units = block / 8 <= UINT16_MAX ? (uint16_t)(block / 8) : 0;
    obj_set_flags(c, obj_flags(o) & ~(unsigned)OBJ_EMBED);
    return c;
}

struct object *object_string_from_ll(long long v)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%lld", v);
    return object_string_create(buf, (size_t)n);
}

/* the type module behind a collection; NULL for strings */
static const struct object_type_ops *obj_ops(const struct object *o)
{
    switch (object_type(o)) {
    case OBJ_LIST: return &list_type_ops;
    case OBJ_SET: return &set_type_ops;
    case OBJ_ZSET: return &zset_type_ops;
    case OBJ_HASH: return &hash_type_ops;
    case OBJ_STREAM: return &stream_type_ops;
    case OBJ_STRING: break;
    }
    return NULL;
}

struct object *object_collection_create(enum object_type type, unsigned encoding, void *ptr)
{
    assert(type != OBJ_STRING);
    struct object *o = mem_alloc(sizeof(struct object) + sizeof(void *));
    size_t block = mem_usable(o);
    o->units = block / 8 <= UINT16_MAX ? (uint16_t)(block / 8) : 0;
    o->tf = (uint8_t)type;
    o->len_hi = (uint8_t)encoding; /* where a string keeps its length's high bits */
    o->len_lo = 0;
    obj_set_ext(o, ptr);
    return o;
}

void *object_collection_ptr(const struct object *o)
{
    return obj_coll(o);
}

unsigned object_collection_encoding(const struct object *o)
{
    return obj_enc(o);
}

void object_collection_set(struct object *o, unsigned encoding, void *ptr)
{
    assert(!obj_packed(o) && encoding <= UINT8_MAX);
    o->len_hi = (uint8_t)encoding;
    obj_set_ext(o, ptr);
}

size_t object_length(const struct object *o)
{
    const struct object_type_ops *ops = obj_ops(o);
    return ops ? ops->length(obj_enc(o), obj_coll(o)) : 1;
}

bool object_destroy_step(struct object **o, size_t budget)
{
    assert(!object_embedded(*o));
    const struct object_type_ops *ops = obj_ops(*o);
    if (ops && !ops->destroy_step(obj_enc(*o), obj_ext(*o), budget))
        return false;
    if (ops)
        mem_release(*o); /* the structure is gone already */
    else
        object_destroy(o);
    *o = NULL;
    return true;
}

void object_destroy(struct object **o)
{
    if (o == NULL || *o == NULL)
        return;
    const struct object_type_ops *ops = obj_ops(*o);
    if (ops) {
        if (!obj_packed(*o))
            ops->destroy(obj_enc(*o), obj_ext(*o));
    } else if (obj_flags(*o) & OBJ_EXTERNAL)
        mem_release(obj_ext(*o));
    if (!object_embedded(*o))
        mem_release(*o);
    *o = NULL;
}

enum object_type object_type(const struct object *o)
{
    return (enum object_type)(o->tf & 0x0f);
}

const char *object_type_name(const struct object *o)
{
    const struct object_type_ops *ops = obj_ops(o);
    return ops ? ops->name : "string";
}

/* Redis string2ll's acceptance test: canonical decimal that fits long long */
static bool obj_is_canonical_ll(const char *s, size_t len)
{
    if (len == 0 || len > 20)
        return false;
    if (len == 1 && s[0] == '0')
        return true;
    size_t i = 0;
    bool neg = s[0] == '-';
    if (neg)
        i++;
    if (i == len || s[i] < '1' || s[i] > '9')
        return false;
    unsigned long long v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    return neg ? v <= (unsigned long long)LLONG_MAX + 1 : v <= (unsigned long long)LLONG_MAX;
}

const char *object_encoding_name(const struct object *o)
{
    const struct object_type_ops *ops = obj_ops(o);
    if (ops)
        return ops->encoding_name(obj_enc(o));
    size_t len = obj_len(o);
    if (obj_flags(o) & OBJ_RAW)
        return "raw";
    if (!(obj_flags(o) & OBJ_FLOAT) && obj_is_canonical_ll(obj_bytes(o), len))
        return "int";
    return len <= OBJ_EMBSTR_MAX ? "embstr" : "raw";
}

const char *object_string_ptr(const struct object *o, size_t *len)
{
    if (len)
        *len = obj_len(o);
    return obj_bytes(o);
}

size_t object_string_len(const struct object *o)
{
    return obj_len(o);
}

size_t object_string_append(struct object *o, const void *p, size_t n)
{
    size_t len = obj_len(o);
    char *b = obj_reserve(o, len + n, len, true);
    if (n)
        memcpy(b + len, p, n);
    obj_set_len(o, len + n);
    obj_set_flags(o, obj_flags(o) | OBJ_RAW);
    return len + n;
}

size_t object_string_setrange(struct object *o, size_t offset, const void *p, size_t n)
{
    size_t len = obj_len(o);
    if (n == 0) /* Redis: an empty value changes nothing, not even padding */
        return len;
    size_t end = offset + n;
    char *b = obj_reserve(o, end, len, true);
    if (offset > len)
        memset(b + len, 0, offset - len);
    memcpy(b + offset, p, n);
    if (end > len)
        obj_set_len(o, end);
    obj_set_flags(o, obj_flags(o) | OBJ_RAW);
    return obj_len(o);
}

void object_string_set(struct object *o, const void *p, size_t n)
{
    char *b = obj_reserve(o, n, 0, false);
    if (n)
        memmove(b, p, n);
    obj_set_len(o, n);
    obj_set_flags(o, obj_flags(o) & ~(unsigned)(OBJ_RAW | OBJ_FLOAT));
}

void object_string_mark_float(struct object *o)
{
    obj_set_flags(o, obj_flags(o) | OBJ_FLOAT);
}

size_t object_memory(const struct object *o)
{
    size_t m = object_embedded(o) ? 0 : obj_block(o);
    const struct object_type_ops *ops = obj_ops(o);
    if (ops)
        return obj_packed(o) ? m : m + ops->memory(obj_enc(o), obj_ext(o));
    if (obj_flags(o) & OBJ_EXTERNAL)
        m += mem_usable(obj_ext(o));
    return m;
}

void object_serialize(const struct object *o, object_emit_fn *emit, void *arg)
{
    const struct object_type_ops *ops = obj_ops(o);
    if (ops) {
        unsigned char h[2] = {(unsigned char)object_type(o), 0};
        emit(arg, h, sizeof h);
        ops->serialize(obj_enc(o), obj_coll(o), emit, arg);
        return;
    }
    size_t len = obj_len(o);
    unsigned char h[OBJ_SER_HEADER];
    h[0] = (unsigned char)object_type(o);
    h[1] = (unsigned char)(obj_flags(o) & (OBJ_RAW | OBJ_FLOAT));
    for (int i = 0; i < 8; i++)
        h[2 + i] = (unsigned char)((uint64_t)len >> (8 * i));
    emit(arg, h, sizeof h);
    if (len)
        emit(arg, obj_bytes(o), len);
}

struct object *object_deserialize(const void *p, size_t n)
{
    const unsigned char *h = p;
    if (p == NULL || n < 2)
        return NULL;
    if (h[0] != OBJ_STRING && h[0] <= OBJ_STREAM && h[1] == 0) {
        struct object probe = {.tf = h[0]};
        unsigned encoding;
        void *ptr = obj_ops(&probe)->deserialize(h + 2, n - 2, &encoding);
        return ptr ? object_collection_create((enum object_type)h[0], encoding, ptr) : NULL;
    }
    if (n < OBJ_SER_HEADER || h[0] != OBJ_STRING || (h[1] & ~(OBJ_RAW | OBJ_FLOAT)) != 0)
        return NULL;
    uint64_t len = 0;
    for (int i = 0; i < 8; i++)
        len |= (uint64_t)h[2 + i] << (8 * i);
    if (len != n - OBJ_SER_HEADER || len > OBJ_LEN_MAX)
        return NULL;
    struct object *o = object_string_create(h + OBJ_SER_HEADER, (size_t)len);
    obj_set_flags(o, obj_flags(o) | h[1]);
    return o;
}
