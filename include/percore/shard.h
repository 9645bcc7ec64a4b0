/*
 * shard: the per-core shard threads.
 *
 * Shard i owns a store (the keys whose slots map to it), an event_base, its
 * connections, a stats block and two rings: an inbox for batches other
 * shards send it and a completion ring for its own batches coming back.
 */
#ifndef PERCORE_SHARD_H
#define PERCORE_SHARD_H

#include <stdbool.h>
#include <stdint.h>

struct shard;
struct stats;

int shard_setup(void);           /* create and start every shard thread */
void shard_run_until_signal(void); /* main thread: wait for SIGTERM/SIGINT, then stop shards */
void shard_teardown(void);

int shard_count(void);
/* the calling shard thread's index, -1 on other threads */
int shard_self_index(void);
/* another shard's stats block, for readers (INFO) */
const struct stats *shard_stats(int i);
/* the cpu and NUMA node shard i is pinned to (-1 none) */
int shard_cpu(int i);
int shard_numa_node(int i);
/* "sharded", or "global-lock" for the control build (-DPERCORE_GLOBAL_LOCK=ON) */
const char *shard_build_name(void);
/* how many stores hold the keys: the shards, or 1 (the global-lock build's shared store) */
int shard_stores(void);
/* DEBUG SET-ACTIVE-EXPIRE: whether the shards' timers expire keys nobody reads (Redis's
 * active_expire_enabled; any thread) */
void shard_set_active_expire(bool on);
/* process start, for INFO uptime */
int64_t shard_start_time_ms(void);
/* how SHUTDOWN asks the process to stop (Redis's SHUTDOWN_* flags) */
enum { SHARD_SHUTDOWN_NOSAVE = 1, SHARD_SHUTDOWN_SAVE = 2, SHARD_SHUTDOWN_FORCE = 4 };
/* ask the process to stop (SHUTDOWN): the main thread saves first as flags and the save points say
 * (save_final), and stops the shards unless that save failed without FORCE */
void shard_request_shutdown(int flags);

/*
 * CONFIG SET bind (Redis's changeBindAddr).  shard_listeners_open binds and
 * listens on cfg's addresses for every shard, or, when one cannot be bound
 * (Redis's "-" prefix: an address that may be missing), closes what it
 * opened and answers NULL; the caller holds the config writer lock, so plans
 * are opened one at a time.  Then each shard thread calls
 * shard_listeners_adopt on it (a message to each, the plan read-only): it
 * takes its own row, keeping its sockets on addresses it listens on
 * already and closing those on addresses no longer listed.  Once every
 * shard has, the plan goes (destroy; NULL is a no-op).
 */
struct shard_listeners;
struct config;
struct shard_listeners *shard_listeners_open(const struct config *cfg);
void shard_listeners_adopt(struct shard_listeners *l);
void shard_listeners_destroy(struct shard_listeners **l);

#endif
