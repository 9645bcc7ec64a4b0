/*
 * core: what the core layer's files (shard.c, conn.c, dispatch.c,
 * handoff.c) share among themselves and nobody else includes.
 *
 * struct shard is one core's world: only its own thread touches the fields
 * above `asleep`; `asleep` and `stats` are read by other threads and sit on
 * cache lines of their own.  struct conn is a client connection of one
 * shard.  struct slot holds the place of a reply that is still being
 * computed elsewhere (a remote or split command), so that replies leave in
 * request order (ARCHITECTURE.md rule 6).
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
struct txn;
struct keylocks;
struct watches;
struct multi;
struct blockers;
struct outbox;

/* a part's reply arrives (parts of one slot may arrive in any order) */
typedef void slot_part_fn(struct conn *c, struct slot *s, int part, const char *reply, size_t len);
/* every part has arrived: complete the slot, or send the next step's parts */
typedef void slot_done_fn(struct conn *c, struct slot *s);
/* a blocking command's part found nothing and waits at its owner: its reply comes later */
typedef void slot_wait_fn(struct conn *c, struct slot *s, int part);

struct slot {
    struct slot *next;
    struct reply reply;      /* this command's reply, once complete */
    struct reply after;      /* replies of later local commands, sent after this one */
    struct reply gather;     /* element bytes gathered from parts */
    /* from here on: zeroed when a pooled slot is reused (dispatch_slot_release) */
    uint64_t txid;           /* the multi-shard transaction it runs in (its parts pass its locks), 0 none */
    struct txn *txn;         /* the transaction this slot locks for, or whose locks it releases when done */
    int parts_left;
    bool complete;
    bool txn_end;            /* EXEC's end: completes (freeing txn's locks) once every slot before it has */
    bool block_cancelling;   /* the owner was asked to drop it */
    struct slot *block_target; /* a cancel's: the blocked slot it is for */
    struct block_multi *bmulti; /* a blocking command whose keys live on several shards (block.c) */
    bool barrier;            /* the connection parses nothing more until this completes */
    bool silent;             /* its command ran under CLIENT REPLY OFF|SKIP: its reply is dropped */
    slot_part_fn *on_part;
    slot_done_fn *on_done;
    slot_wait_fn *on_wait;   /* blocking commands only */
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
    bool lock_wait;          /* the next command names a key a multi-shard transaction holds */
    bool monitor;            /* MONITOR: gets every command's line (monitor.c) */
    bool pause_wait;         /* the next command waits for CLIENT PAUSE to end (on the shard's pause list) */
    uint8_t reply;           /* CLIENT REPLY state, CONN_REPLY_* (0: replies on, nothing to step) */
    uint64_t txid;           /* while a transaction's command is dispatched: its id, else 0 */
    struct conn *lock_wait_next;
    struct conn *pause_next;
    struct conn *dirty_next;
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
    struct slot *blocked;    /* its blocking command waiting at the owner (block.c), NULL none */
    struct event *block_ev;  /* that command's timeout */
    char *exec_input;        /* EXEC's queued commands, parsed before the rest of the input */
    size_t exec_len;
    size_t exec_pos;
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
    struct listener *listeners; /* the sockets this shard accepts on (shard.c "listeners") */
    int listen_count;
    uint64_t listen_gen;      /* the bind plan they come from */
    int credits;              /* batches we may still send */
    int64_t now;              /* cached ms clock */
    bool rcu_online;
    uint64_t callbacks;       /* event callbacks run (shard_wake_up), to see a poll find work */
    int64_t last_sleep_ns;    /* how long the last wait in the event loop lasted */
    int poll_backoff;         /* sleeps to skip polling after the next poll that finds nothing */
    int poll_skip;            /* sleeps still to skip polling (shard_poll_for_work) */
    struct conn *conns;       /* open connections */
    struct conn *closing;     /* closed connections still waiting for batches to come back */
    uint64_t conn_count;
    struct conn *dirty;       /* connections with output to flush */
    struct conn *stalled;     /* connections with batches waiting */
    struct conn *dead;        /* closed connections freed at the end of the turn */
    struct batch **building;  /* per target shard: the batch being filled */
    int *building_targets;
    int building_count;
    uint64_t *wake_targets;   /* bitmap: shards to ring at the end of the turn */
    struct keylocks *locks;   /* keys held by multi-shard transactions (keylock.h) */
    int pause;                /* CLIENT PAUSE in force here: 0 none, CONN_PAUSE_WRITE or CONN_PAUSE_ALL */
    int64_t pause_end;        /* when it ends, unix ms */
    uint64_t pause_stamp;     /* the stamp of the last pause or unpause applied (conn_pause_local) */
    struct event *pause_ev;   /* ends it, resumes the waiters (NULL until the first pause) */
    struct conn *pause_head;  /* connections whose next command waits for it, in the order they came */
    struct conn *pause_tail;
    struct reply discard;     /* where the replies of a command under CLIENT REPLY OFF|SKIP go; emptied every turn */
    struct watches *watches;  /* keys clients WATCH (watch.h) */
    struct blockers *blockers; /* clients waiting here in blocking commands (block.c) */
    struct txn *txn_waiting;  /* our transactions waiting for a shard to grant their keys */
    uint64_t locks_seen;      /* keylock_generation when last looked at */
#define EARLY_GRANTS_MAX 64
    uint64_t early_grants[EARLY_GRANTS_MAX]; /* grants that came before their +QUEUED (dispatch.c) */
    size_t early_grants_len;
    uint64_t *granted_local;  /* our own grants, handled after the queue walk */
    size_t granted_local_len;
    size_t granted_local_cap;
    struct conn *lock_waiters; /* connections whose next command waits for a key lock */
    uint64_t txn_seq;
    struct batch *system_stalled; /* connection-less batches (unlocks) waiting for credits */
    struct batch *parked_head; /* others' batches waiting here for key locks, in arrival order */
    struct batch *parked_tail;
    struct batch *lockrun_queued; /* split commands' parts whose lock request queued here (txn.c) */
    struct batch *lockrun_granted; /* ... granted since: run at the end of the grant walk */
    struct slot *slot_pool;   /* released slots, for reuse */
    int slot_pool_len;
    struct batch *batch_pool;
    int batch_pool_len;
    struct resp_arg *scratch_argv; /* owner side: a batch entry's argv */
    int scratch_argc_cap;
    struct reply scratch;     /* local part replies */
    struct store *scratch_store; /* gathered commands run here on copies */
    struct cmd_stats cstats;
    struct cmd_effects effects; /* what the running command reported (call.h), reused */
    struct outbox *notify;    /* keyspace events bound for other shards this turn (notify.c), NULL none yet */
    struct outbox *monitor_out; /* MONITOR lines bound for other shards this turn (monitor.c), NULL none yet */
    struct conn **monitors;   /* this shard's monitoring connections (monitor.c) */
    int monitor_count;
    int monitor_cap;
    uint64_t dirty_dbs;       /* databases written since the last publish (bit per db) */
    /* read by other threads: each on its own cache line */
    _Alignas(128) atomic_int asleep;
    atomic_bool stopping;     /* set by the main thread at shutdown */
    _Alignas(128) struct stats stats;
};

extern __thread struct shard *shard_self;

/* false once the shard is stopping: after conn_close_all nothing may be sent any more, so a closed
 * connection's command no longer goes on (to finish and free its keys) and no unlock is sent */
static inline bool shard_running(struct shard *self)
{
    return !atomic_load_explicit(&self->stopping, memory_order_relaxed);
}
struct shard *shard_at(int i);

/*
 * The global-lock control build (PERCORE_GLOBAL_LOCK, ARCHITECTURE.md rule 10):
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
/* run the retry timer soon (stalled batches, lock waits) */
void shard_arm_retry(struct shard *self);
/* publish key counts and counters to our stats block (before replies leave) */
void shard_publish_keyspace(struct shard *self, bool everything);
/* a write command ran on db: its key count is published before the reply leaves */
static inline void shard_note_write(struct shard *self, const struct command *cmd, int db)
{
    if (cmd->flags & CMD_WRITE)
        self->dirty_dbs |= (cmd->route >= ROUTE_FANOUT_SUM || (cmd->flags & CMD_ANY_DB) || db >= 64) ? ~0ull : 1ull << db;
}

/* conn.c */
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

/* dispatch.c */
/* run one parsed command; false: it names a key a multi-shard transaction holds, the connection waits
 * (nothing consumed) */
bool dispatch_command(struct conn *c, int argc, const struct resp_arg *argv);
/* a reply slot at the end of c's queue for cmd (the reply's place in request order) */
struct slot *dispatch_slot_create(struct conn *c, const struct command *cmd);
/* s's reply is final: complete slots at the head of c's queue go to its output */
void dispatch_slot_complete(struct conn *c, struct slot *s);
/* run part `part` of s on shard target (now, when that is this shard) */
void dispatch_send_part(struct conn *c, struct slot *s, int target, int part, const struct command *cmd, int argc,
                        const struct resp_arg *argv);
/* a command whose keys span shards, its keys held (txn.c) */
void dispatch_run_multi_shard(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv);
/* a split command's slot with its merge; its parts go to txn_keep_part, not to the shards */
struct slot *dispatch_split_kept(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                                 struct txn *t);
/* a command's arguments copied: *out points into *bytes (both to be released) */
void dispatch_argv_copy(int argc, const struct resp_arg *argv, struct resp_arg **out, char **bytes);
/* this shard's empty store for running a handler on copies (one database) */
struct store *dispatch_scratch_store(struct shard *self);
/* the shard owning key */
int dispatch_key_shard(const struct config *cfg, const struct resp_arg *key);
/* where a local reply goes: the connection's output, or after the last pending slot; nowhere (the shard's
 * discard) for a command under CLIENT REPLY OFF|SKIP */
struct reply *dispatch_reply_target(struct conn *c);
/* the same for a push, which CLIENT REPLY does not stop (pub/sub messages and confirmations) */
struct reply *dispatch_push_target(struct conn *c);
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
/* a blocking command's part of slot s waits at its owner (s->on_wait): the part's reply comes later */
void dispatch_part_waits(struct conn *c, struct slot *s, int part);
/* a slot is done with: back to its shard's pool */
void dispatch_slot_release(struct shard *self, struct slot *s);
/* free the shard's pooled slots (at teardown) */
void dispatch_teardown_shard(struct shard *self);

/* txn.c */
/* a command whose keys span shards: lock them, run it, unlock */
void txn_run_command(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv);
/* the same for a split command (MSET MGET DEL EXISTS ...): each shard's part runs as its keys are locked */
void txn_run_split(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv);
/* dispatch_split_kept's parts, kept for txn_run_split to send */
void txn_keep_part(struct txn *t, int shard, int argc, const struct resp_arg *argv);
/* owner side: lock a split command's part's keys for txid (true), or queue the request (home is told) */
#define TXN_LOCK_QUEUED "+QUEUED\r\n"
bool txn_lock_split_part(struct shard *self, uint64_t txid, int home, const struct command *cmd, int argc,
                   const struct resp_arg *argv, int db);
/* would cmd (run for transaction txid, 0 none) touch a key another transaction holds here?  Callers
 * test keylock_count() first: with no lock here, that is all a command pays */
bool txn_keys_locked(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv, int db,
                     uint64_t txid);
/* release t's keys and free it (its command is complete, or its connection went away) */
void txn_finish(struct shard *self, struct txn *t);
/* c's earlier commands are done: its waiting transaction takes its locks */
void txn_start_deferred(struct conn *c);
/* keys came free on this shard (any unlock, any queued request): waiters first, then queued requests */
void txn_locks_changed(struct shard *self);
/* a shard granted transaction txid (ours) its keys (the __granted message) */
void txn_granted(struct shard *self, uint64_t txid);
extern const struct command txn_granted_command;
/* owner side, with keys watched here: db is about to be emptied (db2 -1; db -1 every db) or swapped with db2 */
void txn_note_replacing(struct shard *self, int db, int db2);
/* between MULTI and EXEC? */
static inline bool txn_in_multi(const struct conn *c) { return c->in_multi; }
/* queue cmd for EXEC (+QUEUED into out); false: refused (the error written, EXEC will abort) */
bool txn_queue(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv, struct reply *out);
/* commands queued since MULTI, -1 outside MULTI (CLIENT LIST multi=) */
int txn_queued(const struct conn *c);
/* the queued commands' arguments in bytes, plus a pointer each; 0 outside MULTI (CLIENT LIST multi-mem=) */
size_t txn_queued_mem(const struct conn *c);
/* a command was refused between MULTI and EXEC: EXEC answers EXECABORT */
void txn_queue_failed(struct conn *c);
/* EXEC refused before it ran (argc, argv as sent): Redis discards the transaction saying why, and
 * MONITOR still shows it (execCommandAbort) */
void multi_exec_refused(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                        struct reply *out, const char *why);
/* would EXEC run a write (Redis's mstate.cmd_flags: CMD_WRITE or CMD_MAY_REPLICATE)?  false outside MULTI */
bool txn_queued_writes(const struct conn *c);
/* RESET: the MULTI in progress is discarded and every watch dropped (Redis's discardTransaction) */
void txn_reset(struct conn *c);
/* EXEC's last queued command has been dispatched */
void txn_exec_dispatched(struct conn *c);
/* c closed: its watches go; c freed: its transaction state too */
void txn_conn_closed(struct conn *c);
void txn_conn_freed(struct conn *c);

/* block.c */
struct blockers *block_create(int shard);
void block_destroy(struct blockers **b);
/* a table starts with the number of its waiters: the write hooks look only when there are some (inline) */
static inline size_t block_waiting(const struct blockers *b) { return *(const size_t *)(const void *)b; }
/* a blocking command found nothing here and may wait (CALL_BLOCKED): it waits for its keys (its reply goes
 * to home's slot) */
void block_register(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv, int db,
                    int resp, uint64_t client, int home, struct conn *conn, struct slot *slot, int part);
/* a command changed key of db: its waiters are served after it (block_serve_ready) */
void block_note_key(struct shard *self, int db, const char *key, size_t len);
/* databases db and db2 (-1: one) were swapped: every waited-for key of them may hold data now */
void block_note_databases(struct shard *self, int db, int db2);
/* serve the waiters of the keys noted, unless a serving round is under way (it sees them) */
void block_serve_ready(struct shard *self);
/* home side: a waiter's reply, served by its owner */
void block_served(struct conn *c, struct slot *s, int part, const char *reply, size_t len);
/* owner side, the internal commands a blocked client's home sends its keys' owners (block.c):
 *   __bcancel client slot          drop its waiter: ":1" it was waiting, ":0" it was served
 *   __bwait <blocking command>     this shard's part of a command on keys of several shards waits: ":1"
 *   __bprobe type skip pos key...  which of these keys holds data (see probe_run) */
extern const struct command block_cancel_command;
extern const struct command block_part_command;
extern const struct command block_probe_command;
bool block_owner_command(const struct command *cmd);
void block_owner_run(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv, int db,
                     int resp, uint64_t client, int home, struct conn *conn, struct slot *slot, int part,
                     struct reply *out);
/* a blocking command whose keys live on several shards, run while its keys are locked */
void block_run_multi(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv);
void block_multi_free(struct slot *s);
/* run a blocking command (its keys on owner, -1 several shards, -2 none) */
void block_run(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv, int owner);
/* CLIENT UNBLOCK: false when c is not blocked; error: answer UNBLOCKED instead of the timeout reply */
bool block_unblock(struct conn *c, bool error);
void block_conn_closed(struct conn *c);
void block_conn_freed(struct conn *c);

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
/* a batch with no connection (a transaction's unlock or grant): pushed now or as soon as there is a credit */
void handoff_send_system(struct shard *self, int target, const struct command *cmd, int db, int argc,
                         const struct resp_arg *argv);
/* a blocked client's reply, served here, to its home (a delivery) */
void handoff_send_served(struct shard *self, int home, struct conn *conn, struct slot *slot, int part,
                         const char *reply, size_t len);
/* a split command's part that locks its keys here first, then runs (txn.c); its answer is the part's
 * reply, or TXN_LOCK_QUEUED when the lock request queued: the part then runs once granted and its
 * reply comes home as a delivery */
void handoff_send_locking(struct conn *c, int target, const struct command *cmd, int db, int argc,
                          const struct resp_arg *argv, struct slot *s, int part);
/* owner side: the queued part of transaction txid was granted its keys (false: txid has none here) */
bool handoff_lockrun_granted(struct shard *self, uint64_t txid);
/* run the granted parts and send their replies home */
void handoff_run_granted(struct shard *self);
/* push the connection-less batches that waited for credits */
void handoff_retry_system(struct shard *self);
/* keys came free here: run the batches parked for them, in order, and send their replies home */
void handoff_run_parked(struct shard *self);
/* a closed connection's stalled batches are dropped */
void handoff_drop_stalled(struct conn *c);

#endif
