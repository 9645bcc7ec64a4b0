/*
 * stream: the stream value (object_type OBJ_STREAM), Redis's stream of
 * entries ordered by a 128-bit ID (ms-seq), each a list of field/value pairs.
 *
 * Stored as Redis stores it, in nodes of delta-encoded entries: an ordered
 * array of nodes, each one listpack holding up to stream-node-max-entries
 * entries (live or deleted) and about stream-node-max-bytes bytes, keyed by
 * the ID of the first entry it was made with (its master ID), found by
 * binary search.  The stream's metadata is Redis 7.0's: last generated ID,
 * entries added, max deleted entry ID.
 *
 * Threading: a stream belongs to the shard that owns its key; nothing here
 * is thread-aware.  Moving one across shards is object_serialize().
 */
#ifndef PERCORE_STREAM_H
#define PERCORE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stream;
struct object;

struct stream_id {
    uint64_t ms;  /* milliseconds part */
    uint64_t seq; /* sequence within the millisecond */
};

/* a byte string: a field or a value */
struct stream_str {
    const char *p;
    size_t n;
};

/* how nodes are filled (stream-node-max-bytes, stream-node-max-entries; 0: no limit) */
struct stream_limits {
    long long node_max_bytes;
    long long node_max_entries;
};

enum stream_trim_strategy {
    STREAM_TRIM_NONE,
    STREAM_TRIM_MAXLEN,
    STREAM_TRIM_MINID,
};

/* a trim as XADD and XTRIM ask for it (Redis's streamAddTrimArgs) */
struct stream_trim {
    enum stream_trim_strategy strategy;
    long long maxlen;        /* MAXLEN: entries to keep */
    struct stream_id minid;  /* MINID: entries below it go */
    bool approx;             /* `~`: whole nodes only */
    long long limit;         /* most entries removed, 0 no limit */
};

extern const struct object_type_ops stream_type_ops;

int stream_id_cmp(const struct stream_id *a, const struct stream_id *b);
/* the next / previous ID; false (and 0-0 for incr) at the end of the range */
bool stream_id_incr(struct stream_id *id);
bool stream_id_decr(struct stream_id *id);
/* "ms" (seq 0) or "ms-seq" in decimal digits: false when p[0..n) is neither */
bool stream_id_parse(const char *p, size_t n, struct stream_id *id);
/* "ms-seq" into buf (room for 42 bytes); returns its length */
size_t stream_id_format(const struct stream_id *id, char *buf);

/* a new empty stream in an OBJ_STREAM object, owned by the caller */
struct object *stream_object_create(void);
/* the stream of an OBJ_STREAM object */
struct stream *stream_of(const struct object *o);

uint64_t stream_length(const struct stream *s);
/* nodes (XINFO's radix-tree-keys) */
size_t stream_nodes(const struct stream *s);
struct stream_id stream_last_id(const struct stream *s);
struct stream_id stream_max_deleted_id(const struct stream *s);
uint64_t stream_entries_added(const struct stream *s);
/* XSETID's changes */
void stream_set_meta(struct stream *s, const struct stream_id *last_id, const long long *entries_added,
                     const struct stream_id *max_deleted);
/* the first / last live entry's ID; false (and 0-0) when empty */
bool stream_first_entry_id(const struct stream *s, struct stream_id *id);
bool stream_last_entry_id(const struct stream *s, struct stream_id *id);

/*
 * Append an entry of nfields pairs (fields[2i] field, fields[2i+1] value) under
 * id, which must be above the last ID (the caller checked).  Updates the last
 * ID and entries added.
 */
void stream_append(struct stream *s, const struct stream_id *id, size_t nfields, const struct stream_str *fields,
                   const struct stream_limits *lim);
/* delete the live entry id: true when there was one (the max deleted ID is the caller's) */
bool stream_delete(struct stream *s, const struct stream_id *id);
/* Redis's streamTrim: the entries removed */
long long stream_trim(struct stream *s, const struct stream_trim *t);

/* reading live entries from start to end (inclusive), forwards or backwards */
struct stream_iter {
    const struct stream *s;
    struct stream_id start;   /* the range */
    struct stream_id end;
    bool rev;                 /* from end to start */
    bool done;
    size_t node;              /* the node being read */
    uint32_t pos;             /* the next entry's header in it (LP_NONE: the node is done) */
    uint32_t field;           /* the next field to read of the current entry */
};
void stream_iter_init(struct stream_iter *it, const struct stream *s, const struct stream_id *start,
                      const struct stream_id *end, bool rev);
/* the next entry: its ID and pair count; then stream_iter_pair() that many times */
bool stream_iter_next(struct stream_iter *it, struct stream_id *id, size_t *nfields);
void stream_iter_pair(struct stream_iter *it, struct stream_str *field, struct stream_str *value);


/* ---- node by node, deleted entries too (RDB) */
struct stream_node_info {
    struct stream_id master; /* the ID it was made with (its first entry's) */
    uint32_t entries;        /* entries, live and deleted */
    uint32_t deleted;        /* of which deleted */
};
void stream_node_info(const struct stream *s, size_t node, struct stream_node_info *info);
/* read node's entries in order with stream_node_next, their pairs with stream_iter_pair */
void stream_node_iter_init(struct stream_iter *it, const struct stream *s, size_t node);
bool stream_node_next(struct stream_iter *it, struct stream_id *id, size_t *nfields, bool *deleted);

/*
 * Loading (RDB): stream_load_node() starts a node, stream_load_entry() adds
 * an entry to it, which must be above the one before (the first: its master
 * ID); stream_load_finish() sets the metadata and checks that length counts
 * the live entries, that no node is empty and no entry above last_id.
 * False: malformed (the caller destroys the stream).
 */
void stream_load_node(struct stream *s, const struct stream_id *master);
bool stream_load_entry(struct stream *s, const struct stream_id *id, bool deleted, size_t nfields,
                       const struct stream_str *fields);
bool stream_load_finish(struct stream *s, uint64_t length, const struct stream_id *last_id,
                        const struct stream_id *max_deleted, uint64_t entries_added);

#endif
