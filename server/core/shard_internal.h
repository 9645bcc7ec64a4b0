/*
 * shard_internal: struct shard, one core's world, and shard.c's functions
 * for the rest of the core (percore/shard.h is what the layers above see).
 * Only its own thread touches the fields above `asleep`; `asleep` and
 * `stats` are read by other threads and sit on cache lines of their own.
 */
#ifndef PERCORE_CORE_SHARD_INTERNAL_H
#define PERCORE_CORE_SHARD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "percore/command.h"
#include "percore/reply.h"
#include "percore/shard.h"
#include "percore/stats.h"
#include "percore/tracking.h"

struct event_base;
struct event;
struct store;
struct ring;
struct batch;
struct conn;
struct slot;
struct listener;
struct keylocks;
struct watches;
struct blockers;
struct txn;
struct outbox;
struct resp_arg;

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
    struct batch *busy_held;  /* popped while a script was busy here, not all refused: it runs from
                               * busy_held_from once the script ended (handoff_refuse_busy), NULL none */
    int busy_held_from;
    struct batch *busy_done_held; /* came back while a script was busy here and not answered from its hook
                                   * (handoff_deliver_busy): completed first once the script ended, NULL none */
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
    struct shard_tracking tracking; /* client-side caching: keys read, prefixes, invalidations (tracking.h) */
    uint64_t dirty_dbs;       /* databases written since the last publish (bit per db) */
    bool propagating;         /* appendonly: writes go to the shard's stream (aof.h; call.h reads it) */
    bool loading;             /* a load (the start's, a full sync's) was under way when this shard last looked */
    bool aof_replies_came;    /* appendfsync always: other shards' replies came this turn (they may be writes') */
    struct conn *aof_held;    /* appendfsync always: connections whose output waits for a writer round */
    bool busy_script;         /* a script here ran past busy-reply-threshold: shard_serve_busy serves its clients */
    bool cluster_call;        /* the command running inline came from a cluster port: a script obeys Redis
                               * Cluster's rules (script.c) */
    /* read by other threads: each on its own cache line */
    _Alignas(128) atomic_int asleep;
    atomic_bool stopping;     /* set by the main thread at shutdown */
    atomic_bool teardown_busy; /* at teardown: it still had batches out as the round ended (shard.c) */
    /* a busy script here (script.c), for SCRIPT KILL and the -BUSY of a command bound here, from any shard */
    _Alignas(128) atomic_bool script_busy;
    atomic_bool script_wrote; /* ... it has written: SCRIPT KILL answers -UNKILLABLE */
    atomic_bool script_kill;  /* SCRIPT KILL asked: the script ends with an error at its next hook */
    atomic_bool script_function; /* ... it is a function (FCALL): FUNCTION KILL kills it, not SCRIPT KILL */
    pthread_mutex_t script_stats_lock; /* guards the two below, written when a script turns busy and ends */
    char *script_stats;       /* FUNCTION STATS's name and command of the busy script (RESP), NULL none */
    size_t script_stats_len;
    int64_t script_start_ms;  /* when it began (monotonic ms) */
    _Alignas(128) struct stats stats;
};

extern __thread struct shard *shard_self;

/* false once the shard is stopping: after conn_close_all nothing may be sent any more, so a closed
 * connection's command no longer goes on (to finish and free its keys) and no unlock is sent */
/* is the start's load still under way (load.h)?  Its first look that finds it over clears self->loading */
bool shard_still_loading(struct shard *self);
/* the start's load is in on every shard (load.c's record marker, before the load flag goes down): its
 * writes are recorded from now on (appendonly yes; the commands the load replayed are in the files
 * already) */
void shard_loaded(struct shard *self);
/* is the dataset still loading?  Every path that runs a client's command asks it first (dispatch, a
 * part from another shard) */
static inline bool shard_loading(struct shard *self)
{
    return __builtin_expect(self->loading, 0) && shard_still_loading(self);
}

/* a keyspace-wide cut turning the AOF on or off (aof.h), on the shard of the part, under its keyspace
 * lock: its writes are recorded from here on, or no longer (the global-lock build: every thread's flag,
 * under the store lock) */
void shard_set_recording(struct shard *self, bool on);
/* a script running past busy-reply-threshold (script.c, from its Lua hook), the loop stuck in it: new
 * connections are accepted, the others' input is read and answered (-BUSY, or SCRIPT KILL / SHUTDOWN
 * NOSAVE / QUIT, dispatch.c), their output written; running, the script's own client, is left alone.
 * Other shards' clients' commands waiting in the inbox get -BUSY (handoff_refuse_busy); nothing else of
 * the loop runs (no timer; the rest of the inbox and the replies coming back wait for the script's end) */
void shard_serve_busy(struct shard *self, const struct conn *running, uint64_t running_id);

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

void shard_wake_up(struct shard *self); /* called first thing in every event callback */
void shard_mark_dirty(struct conn *c);
void shard_mark_stalled(struct conn *c);
/* run the retry timer soon (stalled batches, lock waits) */
void shard_arm_retry(struct shard *self);
/* publish key counts and counters to our stats block (before replies leave) */
void shard_publish_keyspace(struct shard *self, bool everything);
/* a write command ran on db, making `dirty` changes: its key count is published before the reply leaves */
static inline void shard_note_write(struct shard *self, const struct command *cmd, int db, long long dirty)
{
    if (!(cmd->flags & CMD_WRITE) && dirty == 0) /* a read may change a key too: PFCOUNT's cached count */
        return;
    STATS_ADD(&self->stats, dirty, (uint64_t)dirty); /* INFO rdb_changes_since_last_save (save.c) */
    self->dirty_dbs |= (cmd->route >= ROUTE_FANOUT_SUM || (cmd->flags & CMD_ANY_DB) || db >= 64) ? ~0ull : 1ull << db;
}

#endif
