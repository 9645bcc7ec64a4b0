/*
 * primary: this server as a master -- replicas served over Redis's
 * protocol (SYNC, PSYNC, REPLCONF ACK), the replication stream and its
 * backlog, WAIT, min-replicas-to-write, and what INFO replication and ROLE
 * say of the replicas.  See primary.c for how.
 *
 * Threading: the AOF writer feeds the stream (primary_feed, primary_cut,
 * primary_writer_tick); the save's writer hands over a full sync's RDB
 * (primary_rdb_done); the sender thread owns the replicas' sockets; shards
 * run SYNC/PSYNC/WAIT (their home's thread) and shard 0's timer starts full
 * syncs (primary_cron); INFO and ROLE read from any thread.
 */
#ifndef PERCORE_PRIMARY_H
#define PERCORE_PRIMARY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "percore/command.h"

struct conn;
struct reply;
struct shard;

/* main thread, before the shards start: the sender thread */
int primary_setup(int shards);
/* main thread, after the shards stopped: replicas dropped, the sender joined */
void primary_teardown(void);

/* the writer fills a replication buffer alongside the file (a full sync has begun once): a relaxed load */
extern atomic_bool primary_feed_on;
static inline bool primary_feeding(void)
{
    return atomic_load_explicit(&primary_feed_on, memory_order_relaxed);
}
/* AOF writer: the stream's next bytes (whole commands, or whole MULTI ... EXEC) */
void primary_feed(const char *p, size_t n);
/* AOF writer: every shard's stream reached full sync gen's cut; what was fed so far precedes it */
void primary_cut(uint64_t gen);
/* AOF writer, between rounds (a command boundary): PING every repl-ping-replica-period and GETACK that
 * WAIT asked for go into the stream */
void primary_writer_tick(void);
/* AOF writer: round_done moved; shards with WAITs look again */
void primary_round_done(void);
/* the save's writer: full sync gen's RDB is at path (ok), or could not be written */
void primary_rdb_done(uint64_t gen, const char *path, bool ok);

/* shard 0's timer: start the full sync replicas wait for (an in-process client's __replsync) */
void primary_cron(struct shard *self);
/* a shard's doorbell (rung by the sender on an ACK, by the AOF writer on a written round) and timer: its
 * WAITs answered once enough replicas acknowledged (or timed out), those of closed clients let go */
extern atomic_int primary_waits;
static inline bool primary_has_waits(void)
{
    return atomic_load_explicit(&primary_waits, memory_order_relaxed) != 0;
}
void primary_serve(struct shard *self);
/* a write is refused -NOREPLICAS: min-replicas-to-write is set and too few replicas are good */
bool primary_too_few_replicas(int to_write, int max_lag);

/* REPLICAOF: this server becomes a replica (its replicas dropped), or a master again whose stream
 * continues the replica's at offset */
void primary_demote(void);
void primary_promote(long long offset);
/* CLIENT KILL TYPE replica: every replica dropped (they connect again); how many */
long long primary_kill_replicas(void);
/* the stream's offset (a master's master_repl_offset) */
long long primary_offset(void);
/* INFO replication's connected_slaves and slaveN lines into buf (cut at cap); their length */
size_t primary_info(char *buf, size_t cap);
/* INFO's backlog fields and sync counts */
struct primary_backlog {
    bool active;
    long long size, first_byte, histlen;
    long long sync_full, sync_partial_ok, sync_partial_err;
};
void primary_backlog(struct primary_backlog *out);
/* ROLE's replica list (an array of [ip, port, offset]) */
void primary_role_replicas(struct reply *out);
/* REPLCONF listening-port's value for c (kept on c until its SYNC/PSYNC) */
void primary_note_listening_port(struct conn *c, int port);

/* SYNC PSYNC WAIT */
extern const struct command command_family_primary[];
extern const size_t command_family_primary_count;

#endif
