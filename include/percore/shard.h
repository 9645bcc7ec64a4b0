/*
 * shard: the per-core shard threads.
 *
 * Shard i owns a store (the keys whose slots map to it), an event_base, its
 * connections, a stats block and two rings: an inbox for batches other
 * shards send it and a completion ring for its own batches coming back.
 */
#ifndef PERCORE_SHARD_H
#define PERCORE_SHARD_H

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
/* process start, for INFO uptime */
int64_t shard_start_time_ms(void);
/* ask the process to stop (SHUTDOWN) */
void shard_request_shutdown(void);

#endif
