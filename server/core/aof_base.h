/*
 * aof_base: an AOF base file in commands (aof-use-rdb-preamble no), as
 * Redis's rewriteAppendOnlyFileRio writes one: per database a SELECT, per
 * key the commands that build it -- SET, or RPUSH / SADD / ZADD / HMSET of at
 * most 64 elements (or pairs) each -- then PEXPIREAT when it has an expiry.
 * A snapshot's keys go in as the store hands them out (save.c); any loader
 * of an AOF (Redis's, percore's) replays them.
 *
 * No threads: the caller owns the buffer.
 */
#ifndef PERCORE_AOF_BASE_H
#define PERCORE_AOF_BASE_H

#include <stddef.h>
#include <stdint.h>

struct object;
struct rdb_buf;

/* SELECT db */
void aof_base_select(struct rdb_buf *b, int db);
/* key's value (and expiry, ms unix time, -1 none) as commands */
void aof_base_key(struct rdb_buf *b, const char *key, size_t klen, int64_t expire_ms, const struct object *val);

#endif
