/*
 * tracking: client-side caching, Redis 7.0's CLIENT TRACKING.
 *
 * A client's tracking state (on, BCAST, OPTIN/OPTOUT, CACHING, NOLOOP, its
 * REDIRECT and its BCAST prefixes) lives in its connection and is touched
 * only by its home thread.  What a client read lives where the key lives:
 * each shard has its own table, key -> ids of the clients that read it,
 * filled by the read-only commands that run there for a tracking client
 * (struct call's `track`, call.h) and emptied, key by key, by the writes that modify
 * them (call.h's after-work), by expiry and eviction, and whole by FLUSHALL
 * and FLUSHDB.  Every shard also knows every BCAST prefix and who asked for
 * it, and gathers the keys modified under each during a loop turn.
 *
 * An invalidation leaves the owner as a record for the tracking client's
 * home (the id says which shard that is): at once when that is this shard,
 * else through the shard's outbox (`__track`, at the end of the batch or
 * turn, before its replies).  The home checks that the client still tracks
 * (a client gone or off gets nothing), applies NOLOOP, and writes the RESP3
 * push (`>2 invalidate [keys]`), or sends the keys on to the REDIRECT
 * client's home, which writes the push, or (RESP2, subscribed) the
 * `__redis__:invalidate` message; a redirect client gone turns into
 * `tracking-redir-broken` for a RESP3 client.
 *
 * With tracking off everywhere, a read pays one test of its connection's
 * flags, and a write one test of an empty table (call.h).
 *
 * Threading: every function on the calling shard's thread.  In the
 * global-lock build the tables are one, shared under the store lock.
 */
#ifndef PERCORE_TRACKING_H
#define PERCORE_TRACKING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cmd_ctx;
struct command;
struct conn;
struct outbox;
struct resp_arg;
struct shard;
struct tracking;
struct tracking_prefixes;

/* a connection's tracking flags (Redis's CLIENT_TRACKING_*) */
enum {
    TRACKING_ON = 1u << 0,
    TRACKING_BCAST = 1u << 1,
    TRACKING_OPTIN = 1u << 2,
    TRACKING_OPTOUT = 1u << 3,
    TRACKING_CACHING = 1u << 4,      /* CLIENT CACHING YES|NO given for the next command */
    TRACKING_NOLOOP = 1u << 5,
    TRACKING_BROKEN_REDIR = 1u << 6, /* its REDIRECT client was gone when an invalidation came */
};

/* in struct conn: the connection's tracking state (home thread) */
struct conn_tracking {
    uint8_t flags;                     /* TRACKING_*; 0: never tracked, or off with nothing to step */
    bool reads;                        /* the command dispatched now remembers the keys it reads (call.h) */
    uint64_t redirect;                 /* REDIRECT's client id, 0 none */
    struct tracking_prefixes *prefixes; /* its BCAST prefixes, NULL none */
    struct reply *held;                /* invalidations that came while EXEC ran its commands, NULL none */
};

/* in struct shard: the shard's tracking state */
struct shard_tracking {
    struct tracking *table;            /* keys read, BCAST prefixes (global-lock build: the one shared) */
    struct outbox *out;                /* invalidations bound for other shards' clients, NULL none yet */
    bool dirty;                        /* something to send at the end of the batch or turn */
    bool flushed;                      /* the running command empties databases: its clients told after it */
    struct conn **clients;             /* this shard's connections with tracking on */
    int nclients;
    int clients_cap;
};

/* the table starts with its count of keys, prefixes and tracking clients: nothing to do while 0 (inline) */
static inline size_t tracking_busy(const struct tracking *t)
{
    return *(const size_t *)(const void *)t;
}

void tracking_setup_shard(struct shard *self);
void tracking_teardown_shard(struct shard *self);
/* would a read-only cmd of this connection (flags not 0) remember its keys?  (OPTIN/OPTOUT, CACHING) */
bool tracking_reads(const struct conn_tracking *ct, const struct command *cmd);
/* a read-only command ran here for client: its keys are remembered for it */
void tracking_remember(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv,
                       uint64_t client);
/* key was modified here (by writer, 0 none: expiry, eviction) */
void tracking_invalidate(struct shard *self, const char *key, size_t len, uint64_t writer);
/* databases were emptied here (tracking.flushed, after the handler): the table goes, and the tracking
 * clients get a null */
void tracking_flush_databases(struct shard *self);
/* end of a batch or loop turn (self->tracking.dirty): BCAST keys and invalidations leave */
void tracking_flush(struct shard *self);
/* before each command of a connection with flags set (cmd NULL: unknown): CACHING lasts one client
 * command, or a transaction (Redis's resetClient); track.reads says whether cmd remembers its keys */
void tracking_step(struct conn *c, const struct command *cmd);
/* EXEC has dispatched its last command: the invalidations held meanwhile follow its reply (Redis sends a
 * running command's own after it) */
void tracking_exec_done(struct conn *c);
/* c is closing, or RESET: it tracks nothing any more (its BCAST prefixes go on every shard) */
void tracking_conn_off(struct conn *c);
/* CLIENT LIST flags (t R B) into flags, how many; and redir= */
int tracking_describe_flags(const struct conn *c, char *flags);
long long tracking_redirect_shown(const struct conn *c);

/* CLIENT TRACKING, CACHING, GETREDIR, TRACKINGINFO (ROUTE_HOME handlers) */
void tracking_cmd_tracking(struct cmd_ctx *ctx);
void tracking_cmd_caching(struct cmd_ctx *ctx);
void tracking_cmd_getredir(struct cmd_ctx *ctx);
void tracking_cmd_trackinginfo(struct cmd_ctx *ctx);

#endif
