/*
 * stream_group: a stream's consumer groups (Redis 7.0's streamCG), their
 * consumers (streamConsumer) and pending entries lists (streamNACK).
 *
 * A group has a name, the last ID delivered, the entries read (Redis 7.0's
 * counter, -1 when unknown), its PEL (every entry delivered and not yet
 * acknowledged, ordered by ID) and its consumers, each with its own PEL (the
 * same NACKs, those it owns).  Groups and consumers are kept in name order
 * as Redis's radix trees give them (bytes, then the shorter first).
 *
 * The structs are open: the commands (cmd/stream.c), RDB and XINFO walk
 * them; they change only through these functions, which keep the group's
 * and the consumers' PELs in step.
 *
 * Threading: a stream's groups belong to the shard that owns its key.
 */
#ifndef PERCORE_STREAM_GROUP_H
#define PERCORE_STREAM_GROUP_H

#include "percore/stream.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STREAM_ENTRIES_READ_UNKNOWN (-1LL) /* Redis's SCG_INVALID_ENTRIES_READ */

struct stream_consumer;

/* a pending entry (Redis's streamNACK) */
struct stream_nack {
    struct stream_id id;              /* the entry */
    long long delivery_time;          /* unix ms of the last delivery */
    uint64_t delivery_count;          /* deliveries */
    struct stream_consumer *consumer; /* its owner */
};

/* NACKs ordered by ID (not owned: the group's PEL owns them) */
struct stream_pel {
    struct stream_nack **v;
    size_t n;
    size_t cap;
};

/* a group's or consumer's name: the first member of both, so one search finds either */
struct stream_name {
    char *p;
    size_t len;
};

struct stream_consumer {
    struct stream_name name;
    long long seen_time;   /* unix ms it was last seen (XREADGROUP, XCLAIM, creation) */
    struct stream_pel pel; /* the NACKs it owns */
};

/* a stream's groups in name order (embedded in the stream) */
struct stream_group_set {
    struct stream_group **v;
    size_t n;
    size_t cap;
};

struct stream_group {
    struct stream_name name;
    struct stream_id last_id;           /* the last ID delivered */
    long long entries_read;             /* entries delivered, STREAM_ENTRIES_READ_UNKNOWN */
    struct stream_pel pel;              /* every NACK; it owns them */
    struct stream_consumer **consumers; /* in name order */
    size_t nconsumers;
    size_t cap;
};

/* the stream's groups */
struct stream_group_set *stream_groups(const struct stream *s);
size_t stream_group_count(const struct stream *s);
struct stream_group *stream_group_at(const struct stream *s, size_t i);
struct stream_group *stream_group_find(const struct stream *s, const char *name, size_t len);
/* a new group, NULL when one has the name */
struct stream_group *stream_group_create(struct stream *s, const char *name, size_t len,
                                         const struct stream_id *last_id, long long entries_read);
void stream_group_destroy(struct stream *s, struct stream_group *g);
/* every group (stream destruction) */
void stream_groups_release(struct stream *s);

struct stream_consumer *stream_consumer_find(const struct stream_group *g, const char *name, size_t len);
/* a new consumer seen at now, NULL when one has the name */
struct stream_consumer *stream_consumer_create(struct stream_group *g, const char *name, size_t len, long long now);
/* the consumer and its NACKs go */
void stream_consumer_delete(struct stream_group *g, struct stream_consumer *c);

/* the index of the first NACK at or above id */
size_t stream_pel_lower_bound(const struct stream_pel *p, const struct stream_id *id);
struct stream_nack *stream_pel_find(const struct stream_pel *p, const struct stream_id *id);
/* a NACK of id (not pending yet) owned by c, delivered at time with count */
struct stream_nack *stream_nack_add(struct stream_group *g, struct stream_consumer *c, const struct stream_id *id,
                                    long long time, uint64_t count);
/* the NACK moves to consumer c */
void stream_nack_move(struct stream_nack *nack, struct stream_consumer *c);
/* the NACK is acknowledged: it leaves both PELs and is released */
void stream_nack_remove(struct stream_group *g, struct stream_nack *nack);

/*
 * Loading (RDB, a stream moved across shards): stream_nack_load() adds a
 * NACK to the group's PEL owned by nobody yet, stream_nack_load_owner() gives
 * it to c; false when the ID is already there / is not in the group's PEL or
 * already owned.  stream_group_loaded() checks every NACK found its owner.
 */
bool stream_nack_load(struct stream_group *g, const struct stream_id *id, long long time, uint64_t count);
bool stream_nack_load_owner(struct stream_group *g, struct stream_consumer *c, const struct stream_id *id);
bool stream_group_loaded(const struct stream_group *g);

/* Redis 7.0's lag arithmetic: streamEstimateDistanceFromFirstEverEntry and streamRangeHasTombstones */
long long stream_estimate_entries_read(const struct stream *s, const struct stream_id *id);
bool stream_range_has_tombstones(const struct stream *s, const struct stream_id *start);
/* whether a live entry has this ID */
bool stream_entry_exists(const struct stream *s, const struct stream_id *id);

#endif
