/*
 * aof: the append-only file's writing side -- the propagation stream every
 * write feeds (the one function call() hands a write to), and the writer
 * thread that merges the shards' streams into Redis 7.0's multi-part AOF
 * (appenddirname/: a base, an incr file, the manifest).
 *
 * The stream is per shard and in Redis's propagated form (what Redis's
 * propagateNow hands to feedAppendOnlyFile and replicationFeedSlaves): a
 * write that changed nothing is not in it, relative expiries are absolute,
 * randomness is replaced by its outcome (the handlers' cmd_propagate), keys
 * that expired or were evicted are DELs.  Records carry their database; a
 * consumer writes SELECT where the database changes, as Redis keeps
 * aof_selected_db and slaveseldb per consumer.  A replication feed reads the
 * same records.
 *
 * Threading: aof_setup / aof_teardown on the main thread with no shard
 * running; aof_feed*, aof_turn_end, aof_shard_stop on the shard thread of
 * the stream (the global-lock build: the one stream, under the store lock);
 * the aof_info_* readers on any thread.
 */
#ifndef PERCORE_AOF_H
#define PERCORE_AOF_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct command;
struct config;
struct resp_arg;

/* main thread, after the load, before the shards start: with appendonly yes, the directory, its
 * manifest (a new base and incr file when there is none) and the writer thread.  0 ok, -1 (logged) */
int aof_setup(int shards, const struct config *cfg);
/* main thread, after every shard's aof_shard_stop: the writer writes what is left, fsyncs, ends */
void aof_teardown(void);

/*
 * Whether the shards' writes are recorded (Redis's aof_state).  ON: appendonly yes at start, or once a
 * rewrite that turned the AOF on is installed; WAIT_REWRITE: CONFIG SET appendonly yes, its rewrite's cut
 * taken (the shards record into a temp incr file) or to come; OFF.  The changes happen at keyspace-wide
 * cuts, every shard's part under its keyspace lock (save.c): shard 0's timer sends the BGREWRITEAOF that
 * turns it on, and the one that turns it off (each part: aof_feed_stop, and its shard stops recording).
 * A shard copies "recording" into its hot flag at its part, or at start (ON).
 */
enum aof_state { AOF_OFF, AOF_ON, AOF_WAIT_REWRITE };
enum aof_state aof_state(void);
/* CONFIG SET appendonly no (Redis's stopAppendOnly), on c's home: the cut where every shard stops
 * recording (each feeds a stop; once every stream has one, the file is fsynced and closed), a rewrite
 * under way abandoned; c is answered +OK once every shard has stopped, in place of the command being
 * handled */
struct conn;
void aof_stop_all(struct conn *c);

/* a write that changed something ran on stream `stream`, in db: its argv, or (prop_n > 0) the
 * commands the handler propagated instead, RESP-encoded in prop[0..prop_len) (more than one, outside a
 * transaction: written as MULTI ... EXEC, as Redis does).  txid: the multi-shard
 * transaction it is part of (0 none), fanout: a keyspace-wide command's part (written once) */
void aof_feed(int stream, uint64_t txid, bool fanout, int db, int argc, const struct resp_arg *argv, const char *prop,
              size_t prop_len, int prop_n);
/* a keyspace-wide write's part (FLUSHALL FLUSHDB SWAPDB; every shard runs one, in the same order on
 * every shard): written once, when every stream has reached it */
void aof_feed_barrier(int stream, int db, int argc, const struct resp_arg *argv);
/* key of db expired or was evicted: a DEL */
void aof_feed_del(int stream, int db, const char *key, size_t len);
/* transaction txid was granted (granted) or let go of a lock unit on this stream's shard (keylock.h) */
void aof_feed_txn_lock(int stream, uint64_t txid, bool granted);
/* transaction txid is over, on its home's stream (before it lets go of its locks): it sends units[i]
 * unlocks to shards[i] */
void aof_feed_txn_end(int stream, uint64_t txid, int n, const int *shards, const int *units);

/* the end of a shard's loop turn: what the stream got this turn goes to the writer.  With
 * appendfsync always, the writer round that covers it (wait for aof_round_done() >= it), else 0 */
uint64_t aof_turn_end(int stream, bool cover);
/* writer rounds whose writes (and, with appendfsync always, their fsync) are done */
uint64_t aof_round_done(void);
/* the round the writer starts next: it takes every chunk pushed before this call (WAIT, primary.c) */
uint64_t aof_next_round(void);
/* the writer runs a round soon */
void aof_wake(void);
/* a replica's full sync's cut on the stream (its part of __replsync, under the shard's keyspace lock): the
 * replication stream after it is the sync's (primary.h) */
void aof_feed_sync(int stream, uint64_t gen);
/* a shard waits for a round (its doorbell is rung when one is done) */
void aof_wait_round(int stream, bool waiting);
/* a stopping shard's last records go to the writer (it may wait here: nothing else is served) */
void aof_shard_stop(int stream);
/* the stream's records so far go to the writer before a reply that depends on them leaves for another
 * shard: when the writer's ring is full, it waits for the writer to take some (one writer round at most) */
void aof_hand_over(int stream);

/*
 * BGREWRITEAOF without a fork (Redis's rewriteAppendOnlyFileBackground).
 * The rewrite is a keyspace-wide command like BGSAVE (save.h): its part on
 * every shard, under that shard's keyspace lock, begins the shard's
 * snapshot and puts the rewrite's cut in the shard's stream
 * (aof_feed_rotate); the snapshot's writer writes the new base to a temp
 * file (aof_rewrite_base_done).  Once every stream has reached the cut, the
 * AOF writer starts a new incr file for what follows (listed in the
 * manifest at once), and once the base is written too, makes it the base
 * and deletes the files it replaces.  With the AOF off the directory gets
 * the base and a manifest of it alone, as Redis 7.0's.
 */
/* shard 0's part, before any part's cut: a new rewrite is under way (the directory made when missing),
 * turn_on: it turns the AOF on (WAIT_REWRITE from now), rdb_preamble: its base is an RDB file, else
 * commands; 0, or -1 (logged): it cannot be */
int aof_rewrite_begin(bool turn_on, bool rdb_preamble);
/* a part's cut on its shard's stream (appendonly yes) */
void aof_feed_rotate(int stream);
/* the snapshot's writer: the base is at tmp (fsynced), or could not be written (ok false) */
void aof_rewrite_base_done(const char *tmp, bool ok);
/* begun and not yet over */
bool aof_rewrite_in_progress(void);
/* BGREWRITEAOF while a BGSAVE runs: shard 0's timer begins it once no save runs */
void aof_rewrite_schedule(void);
bool aof_rewrite_scheduled(void);
/* auto-aof-rewrite-percentage/min-size: the growth (%) that calls for a rewrite now, else -1 */
long long aof_rewrite_growth(const struct config *cfg);

/* INFO persistence's aof_rewrite_* / aof_rewrites* fields */
struct aof_rewrite_info {
    bool in_progress, scheduled, last_ok;
    long long last_seconds, current_seconds, count, failures;
};
void aof_rewrite_info(struct aof_rewrite_info *out);

/* the last write or fsync of the AOF succeeded (Redis's aof_last_write_status); the write path reads it */
extern atomic_bool aof_write_ok;
/* write commands (and PING) get "-MISCONF Errors writing to the AOF file: <errno's text>" (Redis's
 * writeCommandsDeniedByDiskError): the AOF is on and its last write failed; one relaxed load while all
 * is well */
static inline bool aof_denies_writes(void)
{
    return __builtin_expect(!atomic_load_explicit(&aof_write_ok, memory_order_relaxed), 0) && aof_state() != AOF_OFF;
}
int aof_last_write_errno(void);

/* INFO persistence */
bool aof_info_last_write_ok(void);
long long aof_info_current_size(void);
long long aof_info_base_size(void);
long long aof_info_buffer_length(void); /* bytes merged but not yet written (a failing disk) */

#endif
