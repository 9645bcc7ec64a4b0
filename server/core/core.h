/*
 * core: what the core layer's files (shard.c, conn.c, dispatch.c,
 * handoff.c) share among themselves and nobody else includes.
 *
 * struct shard is one core's world: only its own thread touches the fields
 * above `asleep`; `asleep` and `stats` are read by other threads and sit on
 * cache lines of their own.  struct conn is a client connection of one
 * shard.  struct slot holds the place of a reply that is still being
 * computed elsewhere (a remote or split command), so that replies leave in
 * request order (DESIGN.md rule 6).
 */
#ifndef PERCORE_CORE_H
#define PERCORE_CORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "percore/command.h"
#include "percore/conn.h"
#include "percore/engine.h"
#include "percore/reply.h"
#include "percore/resp.h"
#include "percore/shard.h"
#include "percore/stats.h"

struct event_base;
struct event;
struct store;
struct ring;
struct batch;
struct conn;
struct slot;
struct pubsub_client;

/* a part's reply arrives (parts of one slot may arrive in any order) */
typedef void slot_part_fn(struct conn *c, struct slot *s, int part, const char *reply, size_t len);
/* every part has arrived: complete the slot, or send the next step's parts */
typedef void slot_done_fn(struct conn *c, struct slot *s);

struct slot {
    struct slot *next;
    struct reply reply;      /* this command's reply, once complete */
    struct reply after;      /* replies of later local commands, sent after this one */
    struct reply gather;     /* element bytes gathered from parts */
    /* from here on: zeroed when a pooled slot is reused (dispatch_slot_release) */
    int parts_left;
    bool complete;
    bool barrier;            /* the connection parses nothing more until this completes */
    slot_part_fn *on_part;
    slot_done_fn *on_done;
    /* merge state */
    long long sum;
    long long count;
    bool failed;             /* reply holds the first error */
    uint32_t nkeys;
    uint16_t *key_shard;     /* MGET/MSETNX: owner shard of each key */
    int *key_pos;            /* gathered commands: argv positions of the distinct keys */
    uint64_t *elem;          /* MGET: offset << 32 | length of key i's element in gather */
    /* multi-step commands (RENAME, MSETNX, SCAN) */
    uint64_t cursor;         /* SCAN: the shard-local cursor of the last part */
    const struct command *cmd;
    int step;
    int db;
    int resp;
    int argc;
    struct resp_arg *argv;   /* a copy of the command, in argv_bytes */
    char *argv_bytes;
    conn_merge_fn *merge;    /* conn_fanout: writes the reply from every shard's part */
};

struct conn {
    int fd;                  /* -1: an in-process client (engine.h), its output goes to sink */
    engine_sink_fn *sink;
    void *sink_arg;
    uint64_t id;
    struct shard *home;
    struct event *read_ev;
    struct event *write_ev;
    /* input */
    char *rbuf;
    size_t rlen;             /* bytes in rbuf */
    size_t rpos;             /* bytes already consumed */
    size_t rcap;
    struct resp_parser parser;
    /* output: out.buf[out_sent..out.len) is ready to write */
    struct reply out;
    size_t out_sent;
    int64_t obuf_soft_since; /* ms since when pending output is over the soft limit, 0 not over */
    /* replies still being computed, in request order */
    struct slot *slot_head;
    struct slot *slot_tail;
    /* cross-shard */
    int inflight;            /* batches out for this conn */
    struct batch *stalled_head; /* batches waiting for credits or inbox space */
    struct batch *stalled_tail;
    /* lifecycle */
    bool closed;             /* fd closed; freed when inflight reaches 0 */
    bool close_after_reply;
    bool read_paused;
    bool write_armed;        /* write_ev is added: the socket was full */
    bool in_dirty;
    bool in_stalled;
    bool authenticated;
    bool cluster_port;       /* accepted on home's cluster port: talks to it as a cluster node (cluster.h) */
    bool processing;         /* inside conn_process_input: no re-entry */
    struct conn *dirty_next;
    struct conn *stalled_next;
    struct conn *dead_next;     /* closed, done, waiting to leave the shard's lists */
    struct conn *prev, *next;   /* the shard's list of open connections */
    /* client state */
    int db;
    int resp;
    char *name;
    char *lib_name;
    char *lib_ver;
    int64_t ctime;
    int64_t last_interaction;
    const struct command *last_cmd; /* cmd= of CLIENT LIST; NULL before the first (or an unknown) one */
    struct pubsub_client *pubsub; /* its channels and patterns (pubsub.c), NULL while it has none */
    char peer[64];
    char local[64];
};

struct shard {
    int index;
    int cpu;
    int numa_node;
    struct event_base *base;
    struct store *store;
    struct ring *inbox;       /* batches from other shards, to execute */
    struct ring *done;        /* our batches coming back */
    int doorbell_fd;          /* eventfd */
    struct event *doorbell_ev;
    struct event *timer_ev;
    struct event *retry_ev;   /* retries stalled sends */
    struct event *accept_pause_ev; /* re-enables accepting after running out of fds */
    int64_t accept_error_logged;
    struct event **listen_ev;
    int listen_count;
    int credits;              /* batches we may still send */
    int64_t now;              /* cached ms clock */
    bool rcu_online;
    struct conn *conns;       /* open connections */
    uint64_t conn_count;
    struct conn *dirty;       /* connections with output to flush */
    struct conn *stalled;     /* connections with batches waiting */
    struct conn *dead;        /* closed connections freed at the end of the turn */
    struct batch **building;  /* per target shard: the batch being filled */
    int *building_targets;
    int building_count;
    uint64_t *wake_targets;   /* bitmap: shards to ring at the end of the turn */
    struct slot *slot_pool;   /* released slots, for reuse */
    int slot_pool_len;
    struct batch *batch_pool;
    int batch_pool_len;
    struct resp_arg *scratch_argv; /* owner side: a batch entry's argv */
    int scratch_argc_cap;
    struct reply scratch;     /* local part replies */
    struct store *scratch_store; /* gathered commands run here on copies */
    struct cmd_stats cstats;
    uint64_t dirty_dbs;       /* databases written since the last publish (bit per db) */
    /* read by other threads: each on its own cache line */
    _Alignas(128) atomic_int asleep;
    atomic_bool stopping;     /* set by the main thread at shutdown */
    _Alignas(128) struct stats stats;
};

extern __thread struct shard *shard_self;
struct shard *shard_at(int i);

/*
 * The global-lock control build (PERCORE_GLOBAL_LOCK, DESIGN.md rule 10):
 * every shard's `store` is the one store all threads share, every command
 * runs on the thread that read it, inside shard_store_lock(), and no data
 * command goes through the handoff (only the admin fan-outs that ask each
 * thread about its own connections still do).  Shard 0 alone runs the
 * store's background work (expiry, rehash, lazy free).  In the sharded build
 * the lock calls are empty and compile away.
 */
#ifdef PERCORE_GLOBAL_LOCK
#define SHARD_STORE_SHARED 1
void shard_store_lock(void);
void shard_store_unlock(void);
#else
#define SHARD_STORE_SHARED 0
static inline void shard_store_lock(void) {}
static inline void shard_store_unlock(void) {}
#endif
/* how many stores the keyspace is split over: maxmemory's divisor, and 1 means no routing */
static inline int shard_store_count(void) { return SHARD_STORE_SHARED ? 1 : shard_count(); }
/* does this shard run its store's background work (expiry, rehash, lazy free)? */
static inline bool shard_runs_store_upkeep(const struct shard *self)
{
    return !SHARD_STORE_SHARED || self->index == 0;
}

/* shard.c */
void shard_wake_up(struct shard *self); /* called first thing in every event callback */
void shard_mark_dirty(struct conn *c);
void shard_mark_stalled(struct conn *c);
/* publish key counts and counters to our stats block (before replies leave) */
void shard_publish_keyspace(struct shard *self, bool everything);
/* a write command ran on db: its key count is published before the reply leaves */
static inline void shard_note_write(struct shard *self, const struct command *cmd, int db)
{
    if (cmd->flags & CMD_WRITE)
        self->dirty_dbs |= (cmd->route >= ROUTE_FANOUT_SUM || (cmd->flags & CMD_ANY_DB) || db >= 64) ? ~0ull : 1ull << db;
}

/* conn.c */
/* cluster_port: fd came from self's cluster port (cluster.h), not the main port */
void conn_accept(struct shard *self, int fd, bool cluster_port);
/* a connection of this shard: a socket (fd, sink NULL) or an in-process client (fd -1, sink) */
struct conn *conn_create(struct shard *self, int fd, engine_sink_fn *sink, void *sink_arg);
/* bytes that arrived for c, as if read from its socket: parsed and dispatched */
void conn_take_input(struct conn *c, const char *bytes, size_t len);
void conn_flush(struct conn *c);
void conn_close(struct conn *c);
/* close c for passing its output buffer limit, saying so in the log (Redis's words) */
void conn_close_output_limit(struct conn *c);
/* c's pending output has reached its class's hard limit: its next flush closes it */
bool conn_output_full(const struct conn *c);
/* a batch came back or was dropped: release the reference it held */
void conn_unref(struct conn *c);
/* resume parsing buffered input after a stall cleared */
void conn_resume(struct conn *c);
void conn_close_all(struct shard *self);
/* free closed connections that were still listed when their last batch came back */
void conn_reap_dead(struct shard *self);
void conn_reap_idle(struct shard *self, int timeout_s);

/* dispatch.c */
/* run one parsed command; false when the connection must stop parsing (stalled) */
void dispatch_command(struct conn *c, int argc, const struct resp_arg *argv);
/* where a local reply goes: the connection's output, or after the last pending slot */
struct reply *dispatch_reply_target(struct conn *c);
/*
 * Every shard calls this right before it runs a command (inline, remote,
 * split part, gathered): it keeps the store's LFU tracking in step with
 * maxmemory-policy and enforces this shard's share of maxmemory (evicting
 * keys, or refusing a CMD_DENYOOM command).  false: refused, Redis's OOM
 * error written to out.
 */
bool dispatch_memory_ok(struct shard *self, const struct config *cfg, const struct command *cmd,
                        struct reply *out);
/* a part of slot s computed by a shard (local or remote) */
void dispatch_part_reply(struct conn *c, struct slot *s, int part, const char *reply, size_t len);
/* a slot is done with: back to its shard's pool */
void dispatch_slot_release(struct shard *self, struct slot *s);
/* free the shard's pooled slots (at teardown) */
void dispatch_teardown_shard(struct shard *self);

/* handoff.c */
void handoff_setup_shard(struct shard *self, int nshards, int inbox_size, int credits);
void handoff_teardown_shard(struct shard *self);
/* queue one command for shard `target` on behalf of connection c */
void handoff_send(struct conn *c, int target, const struct command *cmd, int db, int argc,
                  const struct resp_arg *argv, struct slot *s, int part);
/* push the batches built since the last call (end of a read or a step) */
void handoff_flush(struct shard *self);
/* retry a connection's stalled batches; true when none is left */
bool handoff_retry(struct conn *c);
/* execute batches from the inbox, process our own returning batches; returns work done */
size_t handoff_drain(struct shard *self);
/* ring the doorbells of shards we pushed to this turn that may be asleep */
void handoff_ring(struct shard *self);
/* a closed connection's stalled batches are dropped */
void handoff_drop_stalled(struct conn *c);

#endif
