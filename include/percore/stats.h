/*
 * stats: per-shard counters, one block per shard thread.
 *
 * Each block is written only by its shard thread (relaxed atomic stores, so
 * readers on other threads see whole values) and sits on its own cache lines,
 * so no two threads' hot counters share a line (DESIGN.md rule 8).  Readers
 * (INFO) sum the blocks with relaxed loads.  The ACTION table gives the struct
 * fields and their INFO names from one list.
 */
#ifndef PERCORE_STATS_H
#define PERCORE_STATS_H

#include <stdint.h>

#define STATS_MAX_DB 64 /* INFO keyspace covers the first 64 databases */

#define STATS_COUNTERS(ACTION)                                                    \
    ACTION(total_commands_processed, "commands executed on this shard")           \
    ACTION(total_connections_received, "connections accepted")                   \
    ACTION(rejected_connections, "connections refused (maxclients)")             \
    ACTION(connected_clients, "connections open now (gauge)")                    \
    ACTION(keyspace_hits, "key lookups that found the key")                      \
    ACTION(keyspace_misses, "key lookups that did not")                          \
    ACTION(expired_keys, "keys expired (lazily or actively)")                    \
    ACTION(total_net_input_bytes, "bytes read from clients")                     \
    ACTION(total_net_output_bytes, "bytes written to clients")                   \
    ACTION(handoff_batches_sent, "cross-shard batches sent to other shards")     \
    ACTION(handoff_commands_sent, "commands sent to other shards")               \
    ACTION(handoff_batches_received, "cross-shard batches executed for others")  \
    ACTION(handoff_inbox_full, "sends refused by a full inbox (backpressure)")   \
    ACTION(handoff_credit_waits, "sends delayed for want of credits")            \
    ACTION(used_memory, "bytes held by this shard's store (gauge)")

struct stats {
#define STATS_FIELD(name, desc) uint64_t name;
    STATS_COUNTERS(STATS_FIELD)
#undef STATS_FIELD
    uint64_t db_keys[STATS_MAX_DB];
    uint64_t db_expires[STATS_MAX_DB];
} __attribute__((aligned(128)));

_Static_assert(sizeof(struct stats) % 128 == 0, "stats block must fill whole cache-line pairs");

/* owner thread: a relaxed store so readers see whole values */
#define STATS_ADD(st, field, n) \
    __atomic_store_n(&(st)->field, (st)->field + (n), __ATOMIC_RELAXED)
#define STATS_SET(st, field, v) __atomic_store_n(&(st)->field, (v), __ATOMIC_RELAXED)
#define STATS_GET(st, field) __atomic_load_n(&(st)->field, __ATOMIC_RELAXED)

#endif
