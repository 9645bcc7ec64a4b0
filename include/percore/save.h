/*
 * save: SAVE and BGSAVE without a fork, into one RDB file.
 *
 * A save begins as a keyspace-wide command (BGSAVE, SAVE: CMD_LOCKS_ALL,
 * ROUTE_FANOUT_OK): its parts run on every shard in ascending order, each
 * under the lock of its shard's whole keyspace, held until every shard has
 * begun (txn.c, strict two-phase as FLUSHALL), so the shards' snapshots
 * together are one cut: a multi-shard MSET or EXEC is in the file whole or
 * not at all.  Each part begins a store snapshot (store.h); the shard then
 * serializes its keys a few buckets per loop turn into 64 KiB chunks that
 * go to one writer thread through a bounded ring per shard.  A shard never
 * waits for the disk in a BGSAVE: with its ring full it stops walking (keys
 * the store hands out before a write just pile up in its current chunk)
 * until the writer has taken some.  The writer writes temp-<pid>.rdb in
 * dir, fsyncs it and renames it to dbfilename, as Redis; a save that fails
 * leaves the old file.  SAVE begins the same way, then its client waits
 * for the file (its home holds the reply, CMD_REPLIES_AFTER_SAVE) while
 * every other client is served; with one store (threads 1, the global-lock
 * build) it runs inline and blocks until the file is written, as Redis's.
 *
 * Save points (`save`) fire a BGSAVE from shard 0's timer; a shutdown
 * saves first when they are set (or SHUTDOWN SAVE), refusing to exit when
 * that save fails (unless FORCE); a failed BGSAVE refuses writes with
 * -MISCONF while stop-writes-on-bgsave-error and save points are set.
 *
 * Threading: save_part and save_step on the shard whose store they get (in
 * the global-lock build: under the store lock); the save_last_* readers on
 * any thread.
 */
#ifndef PERCORE_SAVE_H
#define PERCORE_SAVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct cmd_ctx;
struct config;
struct conn;
struct shard;
struct slot;
struct store;

/* main thread, before the shards start: room for `shards` shards' parts */
void save_setup(int shards);
/* main thread, after the shards stopped: wait for a save being written, free */
void save_teardown(void);

/* BGSAVE's (blocking false) or SAVE's part on the running shard: begins its snapshot; replies
 * "+Background saving started" or "+OK" (SAVE's last part, once the file is renamed), or the error */
void save_part(struct cmd_ctx *ctx, bool blocking, bool schedule);
/* BGREWRITEAOF's part on the running shard (aof.h): the same snapshot, written as the AOF's new base;
 * replies "+Background append only file rewriting started" (or "scheduled" after a save under way, or
 * the error).  BGSAVE while it runs: Redis's "Another child process is active" (schedule: scheduled) */
void save_rewrite_part(struct cmd_ctx *ctx);
/* __replsync's part (primary.h): a BGSAVE to dbfilename whose cut is also full sync gen's cut in the shard's
 * propagation stream (recorded from here on); its file goes to primary_rdb_done.  -ERR while a save or a
 * rewrite runs (the sync is tried again after it): false, on shard 0's part, when it did not begin */
bool save_sync_part(struct cmd_ctx *ctx, uint64_t gen);
/* FLUSHALL's part, its store flushed: with save points set, as Redis's flushAllDataAndResetRDB, the
 * empty dataset is saved: shard 0's timer starts that save at its next tick (after the save under
 * way, if one is), not counted in rdb_saves, its failure leaving the BGSAVE status, as Redis's rdbSave */
void save_after_flushall(struct cmd_ctx *ctx);
/* saves under way plus SAVE clients waiting: while 0, a shard's loop skips save_step and save_serve */
extern atomic_int save_pending;
static inline bool save_has_work(void)
{
    return atomic_load_explicit(&save_pending, memory_order_relaxed) != 0;
}
/* a shard's loop turn or timer: serialize some of its keys; true while it could go on now */
bool save_step(int shard, struct store *s);
/* SAVE over several shards, on its home once every part has begun (its locks freed): s is completed
 * (+OK, or -ERR) once the file is renamed; the connection is held until then */
void save_wait(struct conn *c, struct slot *s);
/* a shard's loop turn: complete its SAVEs whose file is done, and its SHUTDOWNs refused (cheap when it
 * has none) */
void save_serve(struct shard *self);
/* SHUTDOWN that saves, on c's home: a reply slot held after its own (empty) one, and c reads nothing
 * more, until the shutdown is refused (-ERR Errors trying to SHUTDOWN) or the process exits */
void save_shutdown_wait(struct conn *c);

/*
 * Save points and the shutdown's save (save.c).  save_cron: shard 0's
 * timer, under cfg; starts a BGSAVE when a save point is reached or one was
 * scheduled.  save_schedule: any shard; the next timer starts a BGSAVE
 * (Redis's rdb_bgsave_scheduled).  save_final: the main thread, the shards
 * running; with save points set (or always), pauses writes and saves,
 * blocking until done: 1 saved, 0 nothing to save, -1 failed, writes still
 * paused until save_final_refused() lets them go on (and answers the
 * SHUTDOWNs waiting).
 */
void save_cron(struct shard *self, const struct config *cfg);
void save_schedule(void);
int save_final(bool always);
void save_final_refused(void);

/* Redis's lastbgsave_status (C_OK: true), read on the write path (save_denies_writes) */
extern atomic_bool save_bgsave_ok;
/* the last BGSAVE failed: do cfg's save points and stop-writes-on-bgsave-error refuse writes? */
bool save_denies_writes_now(const struct config *cfg);
/* write commands (and PING) get -MISCONF: save points set, stop-writes-on-bgsave-error, the last
 * BGSAVE failed (Redis's writeCommandsDeniedByDiskError); one relaxed load while all is well */
static inline bool save_denies_writes(const struct config *cfg)
{
    return __builtin_expect(!atomic_load_explicit(&save_bgsave_ok, memory_order_relaxed), 0) &&
           save_denies_writes_now(cfg);
}

bool save_in_progress(void);
long long save_last_time(void);       /* unix s of the last successful save (the start time before) */
bool save_last_ok(void);              /* the last save succeeded (true before any) */
long long save_last_duration(void);   /* seconds the last save took, -1 none yet */
long long save_current_duration(void); /* seconds the one under way has taken, -1 none */
long long save_count(void);           /* saves that succeeded */
/* write commands (a multi-shard one: its parts) run since the cut of the last successful save, from
 * the shards' live counters (Redis counts the keys changed: MSET of n keys is n there) */
long long save_changes_since(void);

#endif
