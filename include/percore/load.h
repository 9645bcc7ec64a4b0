/*
 * load: the dataset read at start (dir/dbfilename), while the server
 * already serves: Redis's loading state, with its -LOADING refusals and its
 * INFO persistence fields, until every key is in its owner shard's store.
 */
#ifndef PERCORE_LOAD_H
#define PERCORE_LOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct command;
struct resp_arg;
struct shard;
struct store;

/* main thread, before the shards start: open the file when it exists (loading:1 from now until
 * every key is in), room for `shards` shards' queues; 0 ok (or no file), -1 it cannot be read
 * (logged: do not start) */
int load_setup(int shards);
/* main thread, once every shard runs: the loader thread parses the file and hands each key to its
 * owner shard's queue; a file that is not valid stops the process with Redis's log lines, exit 1 */
void load_start(void);
/* main thread, after the shards stopped: stop the loader (a shutdown while loading), release */
void load_teardown(void);
/*
 * A replica's full sync, on its link thread (a registered RCU thread, offline), once the start's
 * load is over: every shard emptied (FLUSHALL and FUNCTION FLUSH through shard 0's pseudo-client),
 * then file's keys into their owner shards, Redis's loading state meanwhile; rewrite_aof: a
 * BGREWRITEAOF follows (the keys did not go through the AOF).  0 ok; -1 (logged): the shards are
 * emptied again, or the server stops (load_cancel).
 */
int load_replace(const char *file, bool rewrite_aof);
/* shutting down: a load_replace under way gives up (its caller is then joined) */
void load_cancel(void);

/* true while the dataset loads (Redis server.loading); any thread, a relaxed load of a flag
 * written twice in the process's life */
extern atomic_bool load_active;
static inline bool load_in_progress(void)
{
    return atomic_load_explicit(&load_active, memory_order_relaxed);
}
/* while loading: does Redis refuse cmd with -LOADING (no "loading" flag on it, or on the
 * subcommand argv names; an unknown subcommand is left to its own error)? */
bool load_refuses(const struct command *cmd, int argc, const struct resp_arg *argv);
/* shard self's loop turn while loading: put some of the keys queued for it into its store; true
 * while more are queued */
bool load_step(struct shard *self);
/* shard self, after announcing it may sleep: are keys queued for it? */
bool load_queued(const struct shard *self);

/* INFO rdb_last_load_keys_loaded / _expired: what the start loaded and skipped (any thread) */
long long load_keys_loaded(void);
long long load_keys_expired(void);
/* INFO persistence's loading_* fields while loading (any thread) */
struct load_progress {
    long long start_time;   /* unix s */
    long long total_bytes;  /* the file's size */
    long long loaded_bytes; /* parsed so far */
    long long rdb_used_mem; /* the file's used-mem AUX field, 0 none */
};
void load_progress(struct load_progress *p);

#endif
