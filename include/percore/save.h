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
void save_part(struct cmd_ctx *ctx, bool blocking);
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
/* a shard's loop turn: complete its SAVEs whose file is done (cheap when it has none) */
void save_serve(struct shard *self);

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
