/*
 * replica: this server as a replica of a Redis master (REPLICAOF host
 * port, `replicaof` in the config): the link to the master, its full sync
 * loaded into the shards, its command stream applied through the funnel,
 * REPLCONF ACK, -READONLY for clients' writes, and what INFO replication
 * and ROLE say.  See replica.c for how.
 */
#ifndef PERCORE_REPLICA_H
#define PERCORE_REPLICA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "percore/command.h"
#include "percore/config.h"

struct conn;
struct shard;

/* main thread, before the shards start: the replication ids and the config's replicaof */
void replica_setup(void);
/* main thread, once every shard runs: the link thread (it connects once the start's load is over) */
int replica_start(void);
/* main thread, at shutdown, before the shards' teardown: the link thread stops and is joined */
void replica_teardown(void);

/* this server replicates a master now (any thread; a relaxed load of a flag REPLICAOF writes) */
extern atomic_bool replica_active;
static inline bool replica_now(void)
{
    return atomic_load_explicit(&replica_active, memory_order_relaxed);
}

/* the master's stream flows (a replica's link is up): any thread, a relaxed load */
extern atomic_bool replica_link;
static inline bool replica_link_up(void)
{
    return atomic_load_explicit(&replica_link, memory_order_relaxed);
}

/*
 * The obeyed client's connection id (UINT64_MAX none): a replica's master client, or the loader's
 * pseudo-client while the AOF loads.  Its commands, and their parts on every shard, see no key as
 * expired, as in Redis, where the master client's lookups never expire a key and nothing expires
 * while loading: a replica's keys expire when its master says so (DEL), and a replayed command
 * finds the keys it found when it first ran.  call() runs them with OBEYED_NOW, earlier than any
 * expiry time (the store's "no lookup" time, which touches no access clock either), and marks
 * them replaying (cmd_ctx).
 */
extern atomic_uint_least64_t obeyed_client;
#define OBEYED_NOW INT64_MIN
static inline bool client_obeyed(uint64_t client)
{
    return __builtin_expect(client == atomic_load_explicit(&obeyed_client, memory_order_relaxed), 0);
}
/* the obeyed client from now on (UINT64_MAX: none); the thread that owns it */
static inline void obey_client(uint64_t id)
{
    atomic_store_explicit(&obeyed_client, id, memory_order_relaxed);
}

/* Redis's error for a client's write on a read-only replica ("-READONLY ...") */
extern const char replica_readonly_error[];
/* a command of ctx's client that writes is refused here: a read-only replica, and not its master */
static inline bool replica_refuses_writes(const struct cmd_ctx *ctx)
{
    return __builtin_expect(replica_now(), 0) && ctx->config->replica_read_only &&
           ctx->client != atomic_load_explicit(&obeyed_client, memory_order_relaxed);
}

/* shard 0, on its timer and doorbell: take the master's link the link thread handed over, send the
 * master its ACK every second, drop a link no longer wanted or silent past repl-timeout */
void replica_cron(struct shard *self);
/* shard 0's doorbell rang: replica_cron at once when the link thread or REPLICAOF asked for it (a relaxed
 * load otherwise) */
void replica_poked(struct shard *self);
/* shard 0 ran what it read from c: the master client's offset for INFO and ROLE */
void replica_master_read(struct conn *c);
/* c closes: the master's link is lost (the link thread resyncs from the offset it reached) */
void replica_conn_closed(struct conn *c);

/* INFO's "# Replication" section into buf (NUL-terminated, cut at cap) */
void replica_info(char *buf, size_t cap);
/* ROLE's reply */
void replica_role_reply(struct reply *out);
/* the replication id this server answers with (a master's own, a replica's master's) */
void replica_replid(char out[41]);

/* REPLICAOF SLAVEOF REPLCONF */
extern const struct command command_family_replica[];
extern const size_t command_family_replica_count;

#endif
