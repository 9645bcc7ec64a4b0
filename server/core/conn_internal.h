/*
 * conn_internal: struct conn, a client connection of one shard, and conn.c's
 * functions for the rest of the core (percore/conn.h is what the layers
 * above see).  Only the connection's home shard thread touches it.
 */
#ifndef PERCORE_CORE_CONN_INTERNAL_H
#define PERCORE_CORE_CONN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "percore/conn.h"
#include "percore/engine.h"
#include "percore/reply.h"
#include "percore/resp.h"
#include "percore/tracking.h"

struct shard;
struct event;
struct slot;
struct batch;
struct command;
struct pubsub_client;
struct multi;

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
    int inflight;            /* batches out for this conn (and parked batches' deliveries to come) */
    int parked;              /* batches whose rest waits at an owner for a key lock: parsing stops */
    struct batch *stalled_head; /* batches waiting for credits or inbox space */
    struct batch *stalled_tail;
    /* lifecycle */
    bool closed;             /* fd closed; freed when inflight reaches 0 */
    bool close_after_reply;
    bool read_paused;        /* input waits for a stall to clear, read_ev off meanwhile */
    bool read_eof;           /* the client shut its sending side (read_ev off): what it sent is answered, then it closes */
    bool output_held;        /* input waits for piled-up output to go out (read on meanwhile) */
    bool write_armed;        /* write_ev is added: the socket was full */
    bool in_dirty;
    bool in_stalled;
    bool authenticated;
    bool cluster_port;       /* accepted on home's cluster port: talks to it as a cluster node (cluster.h) */
    bool processing;         /* inside conn_process_input: no re-entry */
    size_t round_start;      /* rpos when that began: the query buffer Redis would hold while it runs */
    bool lock_wait;          /* the next command names a key a multi-shard transaction holds */
    bool monitor;            /* MONITOR: gets every command's line (monitor.c) */
    bool pause_wait;         /* the next command waits for CLIENT PAUSE to end (on the shard's pause list) */
    uint8_t reply;           /* CLIENT REPLY state, CONN_REPLY_* (0: replies on, nothing to step) */
    uint64_t txid;           /* while a transaction's command is dispatched: its id, else 0 */
    struct conn *lock_wait_next;
    struct conn *pause_next;
    struct conn *dirty_next;
    /* appendfsync always: its output waits for the AOF writer's round aof_ticket (shard.c) */
    struct conn *aof_held_next;
    uint64_t aof_ticket;
    bool aof_held;
    struct conn *stalled_next;
    struct conn *dead_next;     /* closed, done, waiting to leave the shard's lists */
    struct conn *prev, *next;   /* the shard's list of open connections, or of closed ones (closing) */
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
    struct multi *multi;     /* MULTI queue and WATCHed keys (txn.c), NULL until it uses them */
    bool in_multi;           /* between MULTI and EXEC / DISCARD (txn.c) */
    struct conn_tracking track; /* CLIENT TRACKING (tracking.h) */
    struct slot *blocked;    /* its blocking command waiting at the owner (block.c), NULL none */
    struct event *block_ev;  /* that command's timeout */
    char *exec_input;        /* EXEC's queued commands, parsed before the rest of the input */
    bool loads_aof;          /* the AOF loader's pseudo-client (load.c): not refused -LOADING */
    bool repl_master;        /* the master's link of a replica (replica.c): its writes are obeyed, unanswered */
    uint64_t bytes_in;       /* read from its socket (or given as read): a master link's offset */
    int repl_port;           /* REPLCONF listening-port: the replica's port, once it asks to SYNC (primary.c) */
    size_t exec_len;
    size_t exec_pos;
    char peer[64];
    char local[64];
};

/* c->reply, Redis's client flags: CLIENT REPLY OFF, this command's SKIP, the next one's, and a step due
 * before the next client command (Redis's resetClient; conn_reply_step) */
enum {
    CONN_REPLY_OFF = 1u << 0,
    CONN_REPLY_SKIP = 1u << 1,
    CONN_REPLY_SKIP_NEXT = 1u << 2,
    CONN_REPLY_STEP = 1u << 3,
};
#define CONN_REPLY_SILENT (CONN_REPLY_OFF | CONN_REPLY_SKIP)
/* before each client command (not EXEC's queued ones) while c->reply is not 0: a SKIP lasts one command */
void conn_reply_step(struct conn *c);
/* CLIENT PAUSE is in force on c's shard: true when c's next command, cmd, must wait for it to end (c is
 * listed and parses nothing more until then) */
bool conn_wait_if_paused(struct conn *c, const struct command *cmd);
/* cluster_port: fd came from self's cluster port (cluster.h), not the main port */
void conn_accept(struct shard *self, int fd, bool cluster_port);
/* a connection of self over the socket fd (its checks done), read from now on; peer: its address as
 * CLIENT LIST shows it, NULL asks the socket */
struct conn *conn_adopt(struct shard *self, int fd, const char *peer);
/* its socket is readable: read and run what came, as its read event does (shard_serve_busy) */
void conn_read_ready(struct conn *c);
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
/* read c's socket again (a client waiting in a blocking command is read, to see it go, but not parsed) */
void conn_unpause_reading(struct conn *c);
/* resume parsing buffered input after a stall cleared */
void conn_resume(struct conn *c);
void conn_close_all(struct shard *self);
/* teardown, every ring empty: free the closed connections still waiting for batches (parked ones) */
void conn_free_closed(struct shard *self);
/* free closed connections that were still listed when their last batch came back */
void conn_reap_dead(struct shard *self);
void conn_reap_idle(struct shard *self, int timeout_s);
/* c's next command names a locked key: stop parsing until the retry timer */
void conn_wait_for_lock(struct conn *c);
/* the retry timer: connections waiting for a lock try their command again */
void conn_retry_lock_waiters(struct shard *self);

#endif
