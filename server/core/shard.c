/*
 * shard: one thread per core, each with its own event_base, listener,
 * store, rings and stats (ARCHITECTURE.md "The shape").
 *
 * Setup: the main thread binds one SO_REUSEPORT listener per shard and bind
 * address (so a busy port fails the start with a clear message), with
 * cluster-ports also each shard's own cluster port (cluster.h), then starts
 * the threads; CONFIG SET bind later hands each shard new ones ("listeners"
 * below).  Each thread pins itself (libnuma), allocates its own shard
 * struct and store from its own heap, registers with urcu-qsbr and waits on
 * a barrier until every shard is published, since any shard may push to any
 * other's inbox.
 *
 * The loop turn:  events (reads, dispatch) -> drain inbox and done rings ->
 * flush every dirty connection once -> empty the discard buffer (replies
 * CLIENT REPLY dropped) -> ring the doorbells of shards we fed
 * -> announce a quiescent state -> set `asleep`, fence, re-check the rings,
 * (a busy shard: poll for up to idle-poll-us first, shard_poll_for_work) ->
 * go RCU-offline and block in the event loop.  The first callback of the
 * next turn comes back online (shard_wake_up) before it reads any config.
 */
#include "percore/shard.h"

#include "shard_internal.h"
#include "conn_internal.h"
#include "dispatch.h"
#include "txn.h"
#include "block.h"
#include "handoff.h"
#include "percore/aof.h"
#include "percore/load.h"
#include "percore/save.h"

#include "percore/monitor.h"
#include "percore/pubsub.h"
#include "notify.h"
#include "percore/cluster.h"
#include "percore/config.h"
#include "percore/keylock.h"
#include "percore/watch.h"
#include "percore/log.h"
#include "percore/primary.h"
#include "percore/replica.h"
#include "percore/mem.h"
#include "percore/ring.h"
#include "percore/script.h"
#include "percore/slowlog.h"
#include "percore/store.h"
#include "percore/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <netdb.h>
#include <netinet/in.h>
#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <urcu-qsbr.h>

__thread struct shard *shard_self;

/* a listening socket of a shard (see "listeners" below) */
#define SHARD_ADDR_MAX 64

struct listener {
    int fd;
    bool cluster;              /* the shard's own cluster port, else the main port */
    struct event *ev;          /* its accept event, once a shard adopted it */
    char addr[SHARD_ADDR_MAX]; /* the bind address, without Redis's optional '-' */
};

/* elements of deleted big collections freed per loop turn (the timer frees more) */
#define SHARD_LAZYFREE_STEP 1024
/* the discard buffer's memory kept from one turn to the next */
#define SHARD_DISCARD_KEEP (64u << 10)

static struct shard **shards;
static int nshards;
static pthread_t *threads;
static pthread_barrier_t start_barrier; /* the shards and the main thread: all published */
static pthread_barrier_t stop_barrier;  /* the shards, at teardown */
static struct shard_listeners *start_listeners; /* setup's plan, each shard adopts its row before start_barrier */
static int64_t start_time_ms;
static atomic_int shutdown_requested;
/* where each shard runs, planned on the main thread: libnuma's lookups are not thread-safe */
struct shard_place {
    int cpu;
    int node;
};
static struct shard_place *shard_places;
#ifdef PERCORE_GLOBAL_LOCK
static struct store *shared_store;
static struct watches *shared_watches; /* the one store's watched keys */
static struct blockers *shared_blockers; /* and its blocked clients */
/* recursive: EXEC holds it across its commands (txn.c), each of which takes it too */
static pthread_mutex_t shared_store_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void shard_store_lock(void) { pthread_mutex_lock(&shared_store_lock); }
void shard_store_unlock(void) { pthread_mutex_unlock(&shared_store_lock); }
#endif

struct shard *shard_at(int i) { return shards[i]; }
int shard_count(void) { return nshards; }
int shard_self_index(void) { return shard_self ? shard_self->index : -1; }
const struct stats *shard_stats(int i) { return &shards[i]->stats; }
int shard_cpu(int i) { return shards[i]->cpu; }
int shard_numa_node(int i) { return shards[i]->numa_node; }
int64_t shard_start_time_ms(void) { return start_time_ms; }
const char *shard_build_name(void) { return SHARD_STORE_SHARED ? "global-lock" : "sharded"; }
int shard_stores(void) { return shard_store_count(); }

static atomic_bool active_expire = true; /* written by DEBUG SET-ACTIVE-EXPIRE alone */
void shard_set_active_expire(bool on) { atomic_store(&active_expire, on); }

#define SHUTDOWN_ASKED 0x100 /* in shutdown_requested: a SHUTDOWN's flags are beside it */

void shard_request_shutdown(int flags)
{
    atomic_store(&shutdown_requested, SHUTDOWN_ASKED | flags);
    kill(getpid(), SIGTERM);
}

void shard_wake_up(struct shard *self)
{
    self->callbacks++;
    if (!self->rcu_online) {
        rcu_thread_online();
        self->rcu_online = true;
        self->now = util_ms_time();
    }
}

void shard_mark_dirty(struct conn *c)
{
    if (!c->in_dirty && !c->closed) {
        c->in_dirty = true;
        c->dirty_next = c->home->dirty;
        c->home->dirty = c;
    }
}

void shard_arm_retry(struct shard *self)
{
    if (!evtimer_pending(self->retry_ev, NULL)) {
        struct timeval tv = {0, 1000};
        evtimer_add(self->retry_ev, &tv);
    }
}

void shard_mark_stalled(struct conn *c)
{
    struct shard *self = c->home;
    if (!c->in_stalled) {
        c->in_stalled = true;
        c->stalled_next = self->stalled;
        self->stalled = c;
    }
    shard_arm_retry(self);
}

/* retry every stalled connection's batches; resume those that got through */
static void shard_retry_stalled(struct shard *self)
{
    struct conn *c = self->stalled, *keep = NULL;
    self->stalled = NULL;
    while (c) {
        struct conn *next = c->stalled_next;
        c->in_stalled = false;
        if (c->closed && !shard_running(self))
            handoff_drop_stalled(c);
        if (handoff_retry(c)) { /* a closed connection's too: what it sent still runs */
            conn_resume(c);
        } else {
            c->in_stalled = true;
            c->stalled_next = keep;
            keep = c;
        }
        c = next;
    }
    /* conn_resume may have stalled others meanwhile: append them */
    while (keep) {
        struct conn *next = keep->stalled_next;
        keep->stalled_next = self->stalled;
        self->stalled = keep;
        keep = next;
    }
    if (self->stalled && !evtimer_pending(self->retry_ev, NULL)) {
        struct timeval tv = {0, 1000};
        evtimer_add(self->retry_ev, &tv);
    }
}

/* nothing of ours in flight: every batch back (credits), no connection's waiting to leave (the
 * connection-less ones still waiting for credits are for shards that stop: freed at teardown) */
static bool shard_quiet(const struct shard *self)
{
    return self->credits == config_current()->handoff_credits && !self->stalled;
}

/*
 * Teardown, once no client sends: until no batch is in flight anywhere.
 * Running what others sent may send more (deliveries, unlocks, outboxes),
 * also to a shard that has finished, so each shard drains and retries until
 * it is quiet, and then all compare at a barrier: a shard that still had
 * something out sends every shard round again.  Between the two barriers
 * nobody runs anything, so when all are quiet no ring holds a batch (a batch
 * in a ring is its sender's credit not yet back).  Bounded: about 10 s.
 */
static void shard_drain_all(struct shard *self)
{
    for (int round = 0; round < 10; round++) {
        for (int spin = 0; spin < 1000; spin++) {
            self->now = util_ms_time();
            if (self->stalled)
                shard_retry_stalled(self);
            if (handoff_drain(self) == 0 && shard_quiet(self))
                break;
            usleep(1000);
        }
        atomic_store(&self->teardown_busy, !shard_quiet(self));
        pthread_barrier_wait(&stop_barrier); /* every shard's flag is final for this round */
        bool busy = false;
        for (int i = 0; i < shard_count(); i++)
            busy = busy || atomic_load(&shard_at(i)->teardown_busy);
        pthread_barrier_wait(&stop_barrier); /* read by all: every shard goes on, or round, alike */
        if (!busy)
            return;
    }
}

static void shard_on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct shard *self = arg;
    shard_wake_up(self);
    handoff_retry_system(self);
    shard_retry_stalled(self);
    conn_retry_lock_waiters(self);
    if (self->system_stalled)
        shard_arm_retry(self);
}

static void shard_on_doorbell(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct shard *self = arg;
    shard_wake_up(self);
    uint64_t v;
    ssize_t rc = read(fd, &v, sizeof(v));
    (void)rc;
    replica_poked(self); /* shard 0: a master's link handed over, or to drop */
    if (primary_has_waits()) /* WAITs: the sender rings on an ACK, the AOF writer on a written round */
        primary_serve(self);
}

/*
 * Publish what INFO reads.  Key counts of the databases written since the
 * last call (self->dirty_dbs) go out before their replies do, so SET then
 * INFO agrees; the timer publishes every database and the memory figure,
 * which also catches keys that expired or moved.
 */
void shard_publish_keyspace(struct shard *self, bool everything)
{
    STATS_SET(&self->stats, keyspace_hits, self->cstats.keyspace_hits);
    STATS_SET(&self->stats, keyspace_misses, self->cstats.keyspace_misses);
    uint64_t mask = everything ? ~0ull : self->dirty_dbs;
    self->dirty_dbs = 0;
    if (SHARD_STORE_SHARED && !mask)
        return;
    /* the global-lock build: the one store's figures, in shard 0's block, written under the lock */
    struct stats *st = SHARD_STORE_SHARED ? &shards[0]->stats : &self->stats;
    shard_store_lock();
    int dbs = store_databases(self->store);
    for (; mask; mask &= mask - 1) {
        int db = __builtin_ctzll(mask);
        if (db >= dbs || db >= STATS_MAX_DB)
            break;
        STATS_SET(st, db_keys[db], store_size(self->store, db));
        STATS_SET(st, db_expires[db], store_expires_size(self->store, db));
    }
    STATS_SET(st, expired_keys, store_expired_keys(self->store));
    STATS_SET(st, evicted_keys, store_evicted_keys(self->store));
    if (everything)
        STATS_SET(st, used_memory, store_memory(self->store));
    shard_store_unlock();
}

static void shard_on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct shard *self = arg;
    shard_wake_up(self);
    const struct config *cfg = config_current();
    self->now = util_ms_time();
    if (shard_runs_store_upkeep(self)) {
        shard_store_lock();
        /* Redis: 25% of each timer period for active expiry */
        if (atomic_load_explicit(&active_expire, memory_order_relaxed) && !replica_now()) /* a replica: its master's DELs */
            store_active_expire(self->store, self->now, 250000L / cfg->hz);
        store_rehash_step(self->store);
        save_step(self->index, self->store); /* a save whose writer was behind when the shard went to sleep */
        /* maxmemory lowered: down to our share now, not at our next command (Redis's updateMaxmemory) */
        dispatch_memory_ok(self, cfg, NULL, 0, NULL, NULL);
        shard_store_unlock();
    }
    if (self->index == 0) {
        save_cron(self, cfg); /* save points, the shutdown's save */
        replica_cron(self);   /* the master's link: ACKs, its timeout */
        primary_cron(self);   /* a full sync replicas wait for */
    }
    conn_reap_idle(self, cfg->timeout);
    if (primary_has_waits()) /* WAITs whose client went */
        primary_serve(self);
    shard_publish_keyspace(self, true);
    struct timeval tv = {0, 1000000 / cfg->hz};
    evtimer_add(self->timer_ev, &tv);
}

/* out of file descriptors: stop accepting for a while instead of spinning on a readable listener */
static void shard_pause_accept(struct shard *self)
{
    for (int b = 0; b < self->listen_count; b++)
        event_del(self->listeners[b].ev);
    struct timeval tv = {0, 100000};
    evtimer_add(self->accept_pause_ev, &tv);
}

static void shard_on_accept_resume(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct shard *self = arg;
    shard_wake_up(self);
    for (int b = 0; b < self->listen_count; b++)
        event_add(self->listeners[b].ev, NULL);
}

/* up to 64 connections waiting on fd; true when there may be more */
static bool shard_accept(struct shard *self, evutil_socket_t fd, bool cluster_port)
{
    shard_wake_up(self);
    for (int i = 0; i < 64; i++) {
        int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                if (self->now - self->accept_error_logged > 1000) {
                    log_warn("Error accepting a client connection: %s; pausing accepts for 100 ms", strerror(errno));
                    self->accept_error_logged = self->now;
                }
                shard_pause_accept(self);
            }
            return false;
        }
        conn_accept(self, cfd, cluster_port);
    }
    return true;
}

static void shard_on_accept(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    shard_accept(arg, fd, false);
}

static void shard_on_cluster_accept(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    shard_accept(arg, fd, true);
}

static void shard_flush_dirty(struct shard *self);

void shard_serve_busy(struct shard *self, const struct conn *running, uint64_t running_id)
{
    enum { MAX_FDS = 1024 };
    struct pollfd fds[MAX_FDS];
    struct conn *who[MAX_FDS];
    int n = 0;
    self->now = util_ms_time();
    for (int i = 0; i < self->listen_count && n < MAX_FDS; i++, n++) {
        fds[n] = (struct pollfd){self->listeners[i].fd, POLLIN, 0};
        who[n] = NULL;
    }
    for (struct conn *c = self->conns; c && n < MAX_FDS; c = c->next) {
        if (c == running || c->fd < 0 || c->closed || c->read_paused || c->read_eof ||
            c->repl_master) /* Redis reads nothing of its master while a script is busy */
            continue;
        fds[n] = (struct pollfd){c->fd, POLLIN, 0};
        who[n++] = c;
    }
    if (poll(fds, (nfds_t)n, 0) > 0) {
        for (int i = 0; i < n; i++) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (!who[i])
                shard_accept(self, fds[i].fd, self->listeners[i].cluster);
            else if (!who[i]->closed && !who[i]->read_paused)
                conn_read_ready(who[i]);
        }
    }
    handoff_refuse_busy(self); /* other shards' clients: their commands waiting here */
    handoff_deliver_busy(self, running_id); /* our clients' replies that came back, when they start nothing */
    shard_flush_dirty(self);
    handoff_ring(self);
}

/* pin the calling thread to shard index's cpu, prefer its node's memory; false when unpinned */
static bool shard_pin(int index)
{
    if (!shard_places)
        return false;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(shard_places[index].cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
        return false;
    if (shard_places[index].node >= 0)
        numa_set_preferred(shard_places[index].node);
    return true;
}

/* a key expired or was evicted on the running thread (the global-lock build: whichever runs the store) */
static void shard_key_gone(void *arg, enum store_gone why, int db, const char *key, size_t len)
{
    (void)arg;
    if (!shard_self) /* not a shard thread: no subscriber to tell */
        return;
    if (why == STORE_GONE_EXPIRED)
        notify_publish(shard_self, NOTIFY_EXPIRED, "expired", db, key, len);
    else
        notify_publish(shard_self, NOTIFY_EVICTED, "evicted", db, key, len);
    if (tracking_busy(shard_self->tracking.table)) /* Redis's signalModifiedKey for expired and evicted keys */
        tracking_invalidate(shard_self, key, len, 0);
    if (db < 64) /* INFO's key count: published with this turn's replies (a lazy expiry is no write) */
        shard_self->dirty_dbs |= 1ull << db;
    if (shard_self->propagating) /* Redis's propagateDeletion (lazyfree-lazy-expire|eviction no: DEL) */
        aof_feed_del(SHARD_STORE_SHARED ? 0 : shard_self->index, db, key, len);
}

/* a transaction was granted or let go of a lock unit here: its marker in the AOF stream (aof.h) */
static void shard_txn_lock_event(void *arg, uint64_t txid, bool granted)
{
    struct shard *self = arg;
    aof_feed_txn_lock(self->index, txid, granted);
}

/* appendonly: this shard's writes go to its AOF stream from now on, or no longer */
static void shard_propagate(struct shard *self, bool on)
{
    __atomic_store_n(&self->propagating, on, __ATOMIC_RELAXED);
    if (!SHARD_STORE_SHARED) /* transactions' lock units mark their place in the stream */
        keylock_set_listener(self->locks, on ? shard_txn_lock_event : NULL, self);
}

void shard_set_recording(struct shard *self, bool on)
{
    if (!SHARD_STORE_SHARED) {
        shard_propagate(self, on);
        return;
    }
    for (int i = 0; i < nshards; i++) /* each thread reads its flag under the store lock, held here */
        if (shards[i])
            shard_propagate(shards[i], on);
}

bool shard_still_loading(struct shard *self)
{
    if (load_in_progress())
        return true;
    self->loading = false;
    return false;
}

void shard_loaded(struct shard *self)
{
    if (aof_state() == AOF_ON)
        shard_propagate(self, true);
}

/*
 * appendfsync always: what this turn wrote goes to the AOF writer, and the
 * connections with output wait for the writer's round that covers it (its
 * fsync done) -- other shards' replies too, as their writes went to their
 * streams before their replies left.  Their output stays where it is; a
 * connection that gets more while it waits takes the later round.  True
 * when a round is already done for some of them (the loop goes on).
 */
static bool shard_aof_turn_end(struct shard *self)
{
    int stream = SHARD_STORE_SHARED ? 0 : self->index;
    bool always = config_current()->appendfsync == APPENDFSYNC_ALWAYS;
    uint64_t ticket = aof_turn_end(stream, always && (self->aof_replies_came || self->aof_held));
    self->aof_replies_came = false;
    if (always && ticket) {
        while (self->dirty) {
            struct conn *c = self->dirty;
            self->dirty = c->dirty_next;
            c->in_dirty = false;
            c->aof_ticket = ticket;
            if (!c->aof_held) {
                c->aof_held = true;
                c->inflight++; /* kept until its output leaves */
                c->aof_held_next = self->aof_held;
                self->aof_held = c;
            }
        }
        for (struct conn *c = self->aof_held; c; c = c->aof_held_next)
            if (c->aof_ticket == UINT64_MAX) /* the writer's ring was full then */
                c->aof_ticket = ticket;
    }
    uint64_t done = aof_round_done();
    bool waiting = false;
    struct conn **at = &self->aof_held;
    while (*at) {
        struct conn *c = *at;
        if (c->aof_ticket > done && always) {
            waiting = true;
            at = &c->aof_held_next;
            continue;
        }
        *at = c->aof_held_next;
        c->aof_held = false;
        if (!c->closed)
            shard_mark_dirty(c);
        conn_unref(c);
    }
    aof_wait_round(stream, waiting);
    return self->dirty != NULL || (waiting && aof_round_done() != done);
}

/* the replies CLIENT REPLY OFF|SKIP dropped this turn: nothing holds a place in them between turns */
static void shard_empty_discard(struct shard *self)
{
    if (self->discard.cap > SHARD_DISCARD_KEEP) {
        reply_deinit(&self->discard);
        reply_init(&self->discard);
    } else {
        reply_clear(&self->discard);
    }
}

/* one write per dirty connection per loop turn */
static void shard_flush_dirty(struct shard *self)
{
    while (self->dirty) {
        struct conn *c = self->dirty;
        self->dirty = c->dirty_next;
        c->in_dirty = false;
        conn_flush(c);
    }
}

/*
 * Polling before sleeping (idle-poll-us).  At -P 1 a shard runs out of work
 * after every few requests; its sleep in epoll_wait and the wake-up that ends
 * it cost it, and the client whose write wakes it, more than a GET does.  A
 * shard whose last sleep was shorter than idle-poll-us is busy: it polls its
 * sockets (epoll_wait with no timeout) and its rings for up to that long
 * first.  Only a shard pinned to a cpu of its own polls, so it takes no time
 * from another shard; an idle shard sleeps at once (its last sleep was long).
 *
 * It does not yield between polls: that would hand the cpu to whatever else
 * may run there, a niced batch job included, for a whole time slice (a 3x
 * loss measured with a `nice 19` busy loop on the shard's cpu).  A poll that
 * finds nothing backs off instead, 1, 2, 4 ... up to POLL_BACKOFF_MAX sleeps
 * without polling, reset by a poll that finds work: a client that shares the
 * shard's cpu, and cannot send while the shard polls, costs it one window in
 * that many sleeps.  It stays RCU-online while it polls, so a grace period
 * waits at most one window for it.  True when work came: `asleep` is then 0
 * and the caller runs a turn.
 */
#define POLL_BACKOFF_MAX 256
static bool shard_poll_for_work(struct shard *self)
{
    long long window_ns = (long long)config_current()->idle_poll_us * 1000;
    if (window_ns == 0 || self->cpu < 0 || self->last_sleep_ns >= window_ns)
        return false;
    if (self->poll_skip > 0) {
        self->poll_skip--;
        return false;
    }
    atomic_store(&self->asleep, 0);
    uint64_t callbacks = self->callbacks;
    long long start = util_mono_ns();
    do {
        event_base_loop(self->base, EVLOOP_NONBLOCK);
        if (self->callbacks != callbacks || !ring_empty(self->inbox) || !ring_empty(self->done)) {
            STATS_ADD(&self->stats, idle_poll_hits, 1);
            self->poll_backoff = 0;
            return true;
        }
    } while (util_mono_ns() - start < window_ns);
    self->poll_backoff = self->poll_backoff == 0 ? 1 : self->poll_backoff * 2;
    if (self->poll_backoff > POLL_BACKOFF_MAX)
        self->poll_backoff = POLL_BACKOFF_MAX;
    self->poll_skip = self->poll_backoff;
    /* about to sleep: announce it before the last look at the rings (see shard_loop) */
    atomic_store(&self->asleep, 1);
    atomic_thread_fence(memory_order_seq_cst);
    if (!ring_empty(self->inbox) || !ring_empty(self->done)) {
        atomic_store(&self->asleep, 0);
        return true;
    }
    return false;
}

static void shard_loop(struct shard *self)
{
    while (!atomic_load_explicit(&self->stopping, memory_order_relaxed)) {
        self->now = util_ms_time();
        handoff_drain(self);
        txn_locks_changed(self);
        bool lazy_work = false;
        if (shard_runs_store_upkeep(self)) {
            shard_store_lock();
            lazy_work = store_lazyfree_pending(self->store) && store_lazyfree_step(self->store, SHARD_LAZYFREE_STEP);
            if (save_has_work())
                lazy_work |= save_step(self->index, self->store);
            shard_store_unlock();
        }
        if (__builtin_expect(!self->loading, 1) && load_in_progress())
            self->loading = true; /* a replica's full sync began (load_replace) */
        if (shard_loading(self))
            lazy_work |= load_step(self); /* keys the loader queued for this shard */
        if (save_has_work())
            save_serve(self); /* SAVEs whose file is written */
        if (self->system_stalled)
            handoff_retry_system(self);
        if (self->stalled)
            shard_retry_stalled(self);
        if (self->notify)
            notify_flush(self); /* this turn's keyspace events leave before its replies */
        if (self->monitor_out)
            monitor_flush(self);
        if (self->tracking.dirty)
            tracking_flush(self);
        bool aof_again = false;
        /* held replies are let go once the AOF is off; the global-lock build's flag is written by the thread
         * that turns the AOF on or off, under the store lock, which the one stream is under too */
        if (__atomic_load_n(&self->propagating, __ATOMIC_RELAXED) || self->aof_held) {
            shard_store_lock();
            aof_again = shard_aof_turn_end(self);
            shard_store_unlock();
        }
        shard_flush_dirty(self);
        conn_reap_dead(self);
        pubsub_flush(self); /* INFO's pub/sub counts: this turn's changes, closes in its writes too */
        shard_empty_discard(self);
        shard_publish_keyspace(self, false);
        handoff_ring(self);
        rcu_ptr_quiescent();
        rcu_quiescent_state();
        atomic_store(&self->asleep, 1);
        atomic_thread_fence(memory_order_seq_cst);
        bool locks_moved = keylock_generation(self->locks) != self->locks_seen; /* keys freed since */
        if (!ring_empty(self->inbox) || !ring_empty(self->done) || self->busy_held || self->busy_done_held ||
            lazy_work || locks_moved ||
            aof_again || (load_in_progress() && load_queued(self))) {
            atomic_store(&self->asleep, 0);
            event_base_loop(self->base, EVLOOP_NONBLOCK);
            continue;
        }
        if (shard_poll_for_work(self))
            continue;
        rcu_ptr_quiescent();
        rcu_thread_offline();
        self->rcu_online = false;
        long long sleep_start = util_mono_ns();
        event_base_loop(self->base, EVLOOP_ONCE);
        self->last_sleep_ns = util_mono_ns() - sleep_start;
        shard_wake_up(self);
        atomic_store(&self->asleep, 0);
    }
}

static void *shard_main(void *arg)
{
    int index = (int)(intptr_t)arg;
    bool pinned = shard_pin(index);
    struct shard *self = mem_calloc_aligned(1, sizeof(*self), _Alignof(struct shard));
    self->index = index;
    self->cpu = pinned ? shard_places[index].cpu : -1;
    self->numa_node = pinned ? shard_places[index].node : -1;
    shard_self = self;
    rcu_register_thread();
    self->rcu_online = true;
    const struct config *cfg = config_current();
    struct event_config *ec = event_config_new();
    event_config_set_flag(ec, EVENT_BASE_FLAG_NOLOCK);
    self->base = event_base_new_with_config(ec);
    pthread_mutex_init(&self->script_stats_lock, NULL);
    event_config_free(ec);
#ifdef PERCORE_GLOBAL_LOCK
    self->store = shared_store;
    self->watches = shared_watches;
    self->blockers = shared_blockers;
#else
    self->store = store_create(cfg->databases);
    if (self->index == 0)
        store_set_first(self->store);
    store_set_gone_listener(self->store, shard_key_gone, NULL);
    self->watches = watch_create();
    self->blockers = block_create(self->index);
#endif
    self->locks = keylock_create();
    self->loading = load_in_progress();
    if (!self->loading && aof_state() == AOF_ON)
        shard_propagate(self, true);
    tracking_setup_shard(self);
    self->now = util_ms_time();
    self->last_sleep_ns = INT64_MAX; /* idle until the first sleep says otherwise */
    reply_init(&self->scratch);
    reply_init(&self->discard);
    handoff_setup_shard(self, nshards, cfg->inbox_size, cfg->handoff_credits);
    self->doorbell_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    self->doorbell_ev = event_new(self->base, self->doorbell_fd, EV_READ | EV_PERSIST, shard_on_doorbell, self);
    event_add(self->doorbell_ev, NULL);
    self->retry_ev = evtimer_new(self->base, shard_on_retry, self);
    self->timer_ev = evtimer_new(self->base, shard_on_timer, self);
    self->accept_pause_ev = evtimer_new(self->base, shard_on_accept_resume, self);
    struct timeval tv = {0, 1000000 / cfg->hz};
    evtimer_add(self->timer_ev, &tv);
    shard_listeners_adopt(start_listeners);
    shards[index] = self;
    pthread_barrier_wait(&start_barrier); /* every shard published */
    engine_start_driver(index);
    shard_loop(self);
    while (self->aof_held) { /* stopping: their output goes with the rest (the writer's last fsync follows) */
        struct conn *c = self->aof_held;
        self->aof_held = c->aof_held_next;
        c->aof_held = false;
        if (!c->closed)
            shard_mark_dirty(c);
        conn_unref(c);
    }

    /* teardown: send what is ready, finish what is in flight, free our own memory */
    shard_flush_dirty(self);
    for (int b = 0; b < self->listen_count; b++) {
        event_free(self->listeners[b].ev);
        close(self->listeners[b].fd);
    }
    conn_close_all(self);
    pthread_barrier_wait(&stop_barrier); /* no client sends any more */
    shard_drain_all(self);
    if (self->propagating) { /* its last records, before the writer ends */
        shard_store_lock();
        aof_shard_stop(SHARD_STORE_SHARED ? 0 : self->index);
        shard_store_unlock();
    }
    shard_flush_dirty(self);
    conn_reap_dead(self);
    conn_free_closed(self);
    dispatch_teardown_shard(self);
    notify_teardown_shard(self);
    pubsub_teardown_shard();
    monitor_teardown_shard(self);
    tracking_teardown_shard(self);
    mem_release(self->effects.v);
    mem_release(self->effects.bytes);
    reply_deinit(&self->effects.prop);
    mem_release(self->listeners);
    event_free(self->doorbell_ev); /* its fd is closed by shard_teardown, after every thread joined */
    event_free(self->retry_ev);
    event_free(self->timer_ev);
    event_free(self->accept_pause_ev);
    if (self->pause_ev)
        event_free(self->pause_ev);
    event_base_free(self->base);
    if (!SHARD_STORE_SHARED) {
        store_destroy(&self->store);
        watch_destroy(&self->watches);
        block_destroy(&self->blockers);
    }
    keylock_destroy(&self->locks);
    mem_release(self->granted_local);
    store_destroy(&self->scratch_store);
    reply_deinit(&self->scratch);
    reply_deinit(&self->discard);
    slowlog_thread_teardown();
    script_thread_teardown();
    rcu_ptr_quiescent();
    rcu_unregister_thread();
    return NULL;
}

/* ---------------------------------------------------------------- listeners */

/*
 * A bind plan: for every shard, the sockets it is to listen on (the main port
 * on each bind address, SO_REUSEPORT so that every shard has one, and with
 * cluster-ports the shard's own port on each), all bound and listening
 * before any shard sees them, so that a bind that fails changes nothing
 * (Redis's changeBindAddr, which then restores the old addresses).  The main
 * thread opens the first plan at setup; CONFIG SET bind opens the next ones
 * (shard_listeners_open, under the config writer lock) and sends each shard
 * a message, on which the shard takes its own row (shard_listeners_adopt):
 * it keeps its sockets on the addresses it listens on already (the plan's
 * duplicate goes), starts on the new ones and closes the others, each
 * socket it closes only after accepting what waits in its queue.  No shard
 * touches another's listeners.  A shard handed an older plan after a newer
 * one (two CONFIG SETs racing from two shards) closes its row of it.
 *
 * Every listening socket has SO_REUSEPORT, so that a plan can bind an
 * address the shards listen on already.  It would also let a second server
 * share the port unnoticed: an address is first bound once without it,
 * which fails if anyone listens there already (shard_port_free) -- at setup,
 * and later where no listener of ours, of that address family, could be
 * what it finds.
 */
struct shard_listeners {
    uint64_t gen;              /* plans are numbered in the order they were opened */
    int nshards;
    int count;                 /* listeners in each shard's row */
    int row_cap;
    struct listener *l;        /* shard i's row: l[i * row_cap ...] */
};

/* the latest plan: its number and addresses (setup, then CONFIG SET under the config writer lock) */
static uint64_t listen_gen;
static char listen_addrs[CONFIG_MAX_BIND][SHARD_ADDR_MAX];
static int listen_addr_count;

static bool shard_addr_v6(const char *addr)
{
    return strchr(addr, ':') != NULL; /* Redis: anetTcp6Server for an address with a ':' */
}

/* addr:port for a listening socket ("*": any IPv4 address, "::*": any IPv6, as Redis); EAI_* or 0 */
static int shard_resolve(const char *addr, int port, struct addrinfo **res)
{
    struct addrinfo hints = {0};
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    hints.ai_family = shard_addr_v6(addr) ? AF_INET6 : AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST; /* numeric: no name lookup on a shard thread */
    bool any = strcmp(addr, "*") == 0 || strcmp(addr, "::*") == 0;
    return getaddrinfo(any ? NULL : addr, portstr, &hints, res);
}

/* two addresses Redis cannot both bind (it has no SO_REUSEPORT): the same, or one is the family's any-address */
static bool shard_addr_overlap(const char *a, const char *b)
{
    struct addrinfo *ra = NULL, *rb = NULL;
    bool overlap = false;
    if (shard_resolve(a, 0, &ra) == 0 && shard_resolve(b, 0, &rb) == 0 && ra->ai_family == rb->ai_family) {
        if (ra->ai_family == AF_INET) {
            in_addr_t x = ((const struct sockaddr_in *)(const void *)ra->ai_addr)->sin_addr.s_addr;
            in_addr_t y = ((const struct sockaddr_in *)(const void *)rb->ai_addr)->sin_addr.s_addr;
            overlap = x == y || x == htonl(INADDR_ANY) || y == htonl(INADDR_ANY);
        } else {
            const struct in6_addr *x = &((const struct sockaddr_in6 *)(const void *)ra->ai_addr)->sin6_addr;
            const struct in6_addr *y = &((const struct sockaddr_in6 *)(const void *)rb->ai_addr)->sin6_addr;
            overlap = IN6_ARE_ADDR_EQUAL(x, y) || IN6_IS_ADDR_UNSPECIFIED(x) || IN6_IS_ADDR_UNSPECIFIED(y);
        }
    }
    if (ra)
        freeaddrinfo(ra);
    if (rb)
        freeaddrinfo(rb);
    return overlap;
}

/* nobody listens on ai already: it binds without SO_REUSEPORT */
static bool shard_port_free(const struct addrinfo *ai)
{
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return true; /* the real socket() says why */
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ai->ai_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    bool ok = bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno != EADDRINUSE;
    close(fd);
    return ok;
}

static void shard_bind_warn(const char *addr, int port, const char *why)
{
    log_warn("Warning: Could not create server TCP listening socket %s:%d: %s", addr, port, why);
}

/* a listening socket on addr:port, or -1 with errno set (logged as Redis does) */
static int shard_open_listener(const char *addr, int port, bool check_free)
{
    struct addrinfo *res = NULL;
    int rc = shard_resolve(addr, port, &res);
    if (rc != 0) {
        shard_bind_warn(addr, port, gai_strerror(rc));
        errno = EINVAL;
        return -1;
    }
    int fd = -1;
    if (check_free && !shard_port_free(res)) {
        errno = EADDRINUSE;
    } else if ((fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) >= 0) {
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
        if (res->ai_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        if (bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, config_current()->tcp_backlog) < 0) {
            int err = errno;
            close(fd);
            fd = -1;
            errno = err;
        }
    }
    if (fd < 0) {
        int err = errno;
        shard_bind_warn(addr, port, strerror(err));
        errno = err;
    }
    freeaddrinfo(res);
    return fd;
}

/* Redis's listenToPort: an address it may skip (an optional one not on this host, an unsupported family) */
static bool shard_bind_skippable(int err, bool optional)
{
    return (err == EADDRNOTAVAIL && optional) || err == ENOPROTOOPT || err == EPROTONOSUPPORT ||
           err == ESOCKTNOSUPPORT || err == EPFNOSUPPORT || err == EAFNOSUPPORT;
}

/* bind at setup: nothing of ours listens yet; later: no listener of ours of that family */
static bool shard_needs_port_check(const char *addr, bool at_setup)
{
    if (at_setup)
        return true;
    for (int i = 0; i < listen_addr_count; i++)
        if (shard_addr_v6(listen_addrs[i]) == shard_addr_v6(addr))
            return false;
    return true;
}

void shard_listeners_destroy(struct shard_listeners **lp)
{
    struct shard_listeners *l = *lp;
    if (!l)
        return;
    mem_release(l->l);
    mem_release(l);
    *lp = NULL;
}

/* close every socket of a plan no shard adopted (a bind that failed half-way) */
static void shard_listeners_close_all(struct shard_listeners *l)
{
    for (int i = 0; i < l->nshards; i++)
        for (int j = 0; j < l->count; j++)
            close(l->l[i * l->row_cap + j].fd);
}

static struct shard_listeners *shard_listeners_open_for(const struct config *cfg, int nsh, bool at_setup)
{
    int per_addr = cfg->cluster_ports ? 2 : 1;
    struct shard_listeners *l = mem_calloc(1, sizeof(*l));
    l->nshards = nsh;
    l->row_cap = cfg->bind_count * per_addr;
    l->l = mem_calloc((size_t)nsh * (size_t)(l->row_cap ? l->row_cap : 1), sizeof(*l->l));
    for (int b = 0; b < cfg->bind_count; b++) {
        bool optional = cfg->bind[b][0] == '-';
        const char *addr = cfg->bind[b] + optional;
        bool check = shard_needs_port_check(addr, at_setup);
        for (int j = 0; j < l->count; j += per_addr) {
            if (shard_addr_overlap(l->l[j].addr, addr)) { /* what Redis's second bind finds */
                shard_bind_warn(addr, cfg->port, strerror(EADDRINUSE));
                goto failed;
            }
        }
        int ok = 0; /* sockets opened for this address */
        for (int i = 0; i < nsh; i++) {
            for (int k = 0; k < per_addr; k++) {
                int port = k == 0 ? cfg->port : config_cluster_port(cfg, i);
                int fd = strlen(addr) < SHARD_ADDR_MAX ? shard_open_listener(addr, port, check && (k == 1 || i == 0))
                                                       : (errno = EINVAL, -1);
                if (fd < 0) {
                    int err = errno;
                    for (int o = 0; o < ok; o++) /* this address's sockets so far */
                        close(l->l[(o / per_addr) * l->row_cap + l->count + o % per_addr].fd);
                    if (ok == 0 && shard_bind_skippable(err, optional))
                        goto next_address;
                    goto failed;
                }
                struct listener *e = &l->l[i * l->row_cap + l->count + k];
                e->fd = fd;
                e->cluster = k == 1;
                snprintf(e->addr, sizeof(e->addr), "%s", addr);
                ok++;
            }
        }
        l->count += per_addr;
    next_address:;
    }
    l->gen = at_setup ? 0 : ++listen_gen;
    listen_addr_count = 0;
    for (int j = 0; j < l->count; j += per_addr)
        snprintf(listen_addrs[listen_addr_count++], SHARD_ADDR_MAX, "%s", l->l[j].addr);
    return l;
failed:
    log_warn("Failed to bind");
    shard_listeners_close_all(l);
    shard_listeners_destroy(&l);
    return NULL;
}

struct shard_listeners *shard_listeners_open(const struct config *cfg)
{
    return shard_listeners_open_for(cfg, nshards, false);
}

/* accept what waits in fd's queue (on a listener about to close), then close it */
static void shard_listener_close(struct shard *self, struct listener *e)
{
    while (shard_accept(self, e->fd, e->cluster))
        ;
    if (e->ev)
        event_free(e->ev);
    close(e->fd);
}

void shard_listeners_adopt(struct shard_listeners *l)
{
    struct shard *self = shard_self;
    struct listener *row = l->l + (size_t)self->index * (size_t)l->row_cap;
    if (l->gen < self->listen_gen) { /* overtaken by a newer plan */
        for (int j = 0; j < l->count; j++)
            shard_listener_close(self, &row[j]);
        return;
    }
    bool accepting = !evtimer_pending(self->accept_pause_ev, NULL);
    struct listener *now = mem_calloc((size_t)(l->count ? l->count : 1), sizeof(*now));
    bool *kept = mem_calloc((size_t)(self->listen_count ? self->listen_count : 1), sizeof(*kept));
    for (int j = 0; j < l->count; j++) {
        int old = 0;
        while (old < self->listen_count && (kept[old] || self->listeners[old].cluster != row[j].cluster ||
                                            strcmp(self->listeners[old].addr, row[j].addr) != 0))
            old++;
        if (old < self->listen_count) { /* listening there already: the plan's duplicate goes */
            kept[old] = true;
            now[j] = self->listeners[old];
            shard_listener_close(self, &row[j]);
            continue;
        }
        now[j] = row[j];
        now[j].ev = event_new(self->base, now[j].fd, EV_READ | EV_PERSIST,
                              now[j].cluster ? shard_on_cluster_accept : shard_on_accept, self);
        if (accepting)
            event_add(now[j].ev, NULL);
    }
    for (int old = 0; old < self->listen_count; old++)
        if (!kept[old])
            shard_listener_close(self, &self->listeners[old]);
    mem_release(kept);
    mem_release(self->listeners);
    self->listeners = now;
    self->listen_count = l->count;
    self->listen_gen = l->gen;
}

/* shard i -> the i-th cpu of cpu-list (or of our affinity mask); none when there are too few */
static void shard_plan_cpus(const struct config *cfg)
{
    int allowed[CONFIG_MAX_THREADS];
    int n = 0;
    if (cfg->cpu_list && cfg->cpu_list[0]) {
        struct bitmask *bm = numa_parse_cpustring_all(cfg->cpu_list);
        if (bm) {
            for (unsigned i = 0; i < bm->size && n < CONFIG_MAX_THREADS; i++)
                if (numa_bitmask_isbitset(bm, i))
                    allowed[n++] = (int)i;
            numa_bitmask_free(bm);
        }
    } else {
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof(set), &set) == 0)
            for (int i = 0; i < CPU_SETSIZE && n < CONFIG_MAX_THREADS; i++)
                if (CPU_ISSET(i, &set))
                    allowed[n++] = i;
    }
    if (n < nshards) {
        log_warn("%d shard threads on %d cpus: threads are not pinned", nshards, n);
        return;
    }
    bool numa = numa_available() >= 0;
    shard_places = mem_alloc((size_t)nshards * sizeof(*shard_places));
    for (int i = 0; i < nshards; i++) {
        shard_places[i].cpu = allowed[i];
        shard_places[i].node = numa ? numa_node_of_cpu(allowed[i]) : -1;
    }
}

int shard_setup(void)
{
    const struct config *cfg = config_current();
    nshards = cfg->threads;
    start_time_ms = util_ms_time();
    shards = mem_calloc((size_t)nshards, sizeof(*shards));
    threads = mem_calloc((size_t)nshards, sizeof(*threads));
    start_listeners = shard_listeners_open_for(cfg, nshards, true);
    if (!start_listeners)
        return -1;
    if (cfg->cluster_ports)
        log_notice("Cluster ports %d..%d: shard i on %d + i", config_cluster_port(cfg, 0), config_cluster_port(cfg, nshards - 1),
                   config_cluster_port(cfg, 0));
    shard_plan_cpus(cfg);
#ifdef PERCORE_GLOBAL_LOCK
    shared_store = store_create(cfg->databases);
    store_set_first(shared_store);
    store_set_gone_listener(shared_store, shard_key_gone, NULL);
    shared_watches = watch_create();
    shared_blockers = block_create(0);
#endif
    if (load_setup(nshards) < 0)
        return -1;
    if (aof_setup(nshards, cfg) < 0)
        return -1;
    save_setup(nshards);
    replica_setup(); /* its ids, before any INFO */
    if (primary_setup(nshards) < 0) /* after them: its replication id */
        return -1;
    pthread_barrier_init(&start_barrier, NULL, (unsigned)nshards + 1);
    pthread_barrier_init(&stop_barrier, NULL, (unsigned)nshards);
    for (int i = 0; i < nshards; i++) {
        if (pthread_create(&threads[i], NULL, shard_main, (void *)(intptr_t)i) != 0) {
            log_warn("Cannot start shard thread %d", i);
            return -1;
        }
    }
    pthread_barrier_wait(&start_barrier);
    shard_listeners_destroy(&start_listeners); /* every shard took its row */
    load_start(); /* the file loads while the shards serve (loading:1, -LOADING) */
    return replica_start(); /* its link waits for the load */
}

static void shard_stop_all(void)
{
    for (int i = 0; i < nshards; i++) {
        struct shard *s = shards[i];
        if (!s)
            continue;
        atomic_store(&s->stopping, true); /* seen by its thread after the doorbell wakes it */
        uint64_t one = 1;
        ssize_t rc = write(s->doorbell_fd, &one, sizeof(one));
        (void)rc;
    }
}

void shard_run_until_signal(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    /* as Redis's prepareForShutdown: the final save when save points are set (or SHUTDOWN SAVE, not
     * NOSAVE); one that fails keeps the server running, unless FORCE; while loading, none */
    for (;;) {
        int sig = 0;
        sigwait(&set, &sig);
        const char *name = sig == SIGTERM ? "SIGTERM" : "SIGINT";
        int asked = atomic_exchange(&shutdown_requested, 0);
        if (load_in_progress()) { /* Redis: a shutdown while loading saves nothing */
            log_warn("Received shutdown signal during loading, scheduling shutdown.");
            break;
        }
        if (!asked)
            log_warn("Received %s scheduling shutdown...", name);
        log_warn("User requested shutdown...");
        if (asked & SHARD_SHUTDOWN_NOSAVE)
            break;
        if (save_final(asked & SHARD_SHUTDOWN_SAVE) >= 0)
            break;
        if (asked & SHARD_SHUTDOWN_FORCE) {
            log_warn("Error trying to save the DB. Exit anyway.");
            break;
        }
        log_warn("Error trying to save the DB, can't exit.");
        log_warn("Errors trying to shut down the server. Check the logs for more information.");
        save_final_refused();
    }
    shard_stop_all();
    for (int i = 0; i < nshards; i++)
        pthread_join(threads[i], NULL);
}

void shard_teardown(void)
{
    save_teardown(); /* the writer may still ring the shards' doorbells */
    aof_teardown();  /* so may the AOF's */
    primary_teardown(); /* which fed it, as the save's did */
    replica_teardown(); /* a full sync's load may be under way */
    load_teardown(); /* and so may the loader (a shutdown while loading) */
    for (int i = 0; i < nshards; i++) {
        if (shards && shards[i]) {
            close(shards[i]->doorbell_fd);
            handoff_teardown_shard(shards[i]);
            stats_block_deinit(&shards[i]->stats);
            mem_release(shards[i]->script_stats); /* a script busy as the server stopped (SHUTDOWN NOSAVE) */
            pthread_mutex_destroy(&shards[i]->script_stats_lock);
            mem_release(shards[i]);
        }
    }
    mem_release(shards);
    mem_release(threads);
    if (start_listeners) { /* the start failed before the shards took their rows */
        shard_listeners_close_all(start_listeners);
        shard_listeners_destroy(&start_listeners);
    }
    mem_release(shard_places);
    shard_places = NULL;
    shards = NULL;
#ifdef PERCORE_GLOBAL_LOCK
    store_destroy(&shared_store);
    watch_destroy(&shared_watches);
    block_destroy(&shared_blockers);
#endif
    pthread_barrier_destroy(&start_barrier);
    pthread_barrier_destroy(&stop_barrier);
}
