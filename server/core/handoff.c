/*
 * handoff: cross-shard batches, bounded inboxes, credits and doorbells
 * (ARCHITECTURE.md rules 4 and 5, and "A cross-shard message, from birth to death").
 *
 * While a connection's read is processed, the commands bound for shard T are
 * appended to one batch for T (arguments copied into the batch's arena,
 * since the read buffer is reused).  handoff_flush() pushes each batch into
 * T's inbox, a bounded MPSC ring, after taking one of the home shard's
 * credits.  No credit or a full inbox means the batch waits on the
 * connection's stalled list and the connection stops reading until a retry
 * succeeds: full means slow down, never grow.
 *
 * The owner executes a batch's commands in order against its own store,
 * writing replies into the batch, and pushes it onto the home shard's `done`
 * ring, which holds as many batches as the home has credits, so that push
 * cannot fail and no shard ever waits for another.  The home copies the
 * replies into their slots, returns the credit and recycles the batch.
 *
 * Doorbells: a shard sets `asleep` before it blocks in the event loop and
 * re-checks its rings after a full fence; a producer fences after its pushes
 * and writes the target's eventfd only if it saw `asleep` (Dekker), once per
 * target per loop turn.
 *
 * Key locks (keylock.h): an entry naming a key that a multi-shard
 * transaction holds is not run.  The owner copies it and the rest of the
 * batch (the same client's later commands) into a batch of its own, parked
 * here in arrival order, and returns the original at once with the replies
 * of the entries that ran, so no credit is ever held while a lock is.  The
 * home stops parsing that connection until the parked entries' replies come
 * back, which bounds what an owner parks to one batch per connection.  Any
 * later batch of a connection with a batch parked here is parked behind it
 * whole, so nothing of one connection overtakes it.  When keys come free
 * (handoff_run_parked) the owner runs its parked batches in order and sends
 * each that ran whole to its home as a delivery: a batch the home executes
 * by writing its replies into their slots.  Deliveries, lock requests,
 * grants and unlocks all run at once wherever they arrive, so every credit
 * comes back and the transaction holding the lock always finishes.  With no
 * lock anywhere this costs one test of an empty list per batch.
 *
 * A script busy on the owner (past busy-reply-threshold) keeps its loop in
 * the script's hook, which answers the clients' commands waiting in the
 * inbox -BUSY, as Redis answers what it reads while busy, and leaves the
 * rest (the first batch with an internal step, held, and all behind it) to
 * run in order once the script ended (handoff_refuse_busy).  The hook also
 * completes our batches that came back with whole replies of our clients'
 * remote commands whose completion starts nothing (handoff_deliver_busy);
 * the first other one is held, it and those behind it completed in order
 * once the script ended.
 *
 * Memory: batches are allocated, recycled and freed by their home shard.
 * A reply area that outgrows what the home gave it is grown by the owner;
 * mimalloc hands such a block back to its owning heap when the home frees it.
 */
#include "handoff.h"

#include "shard_internal.h"
#include "conn_internal.h"
#include "reply_slot.h"
#include "dispatch.h"
#include "txn.h"
#include "block.h"

#include "call.h"
#include "notify.h"

#include "percore/aof.h"
#include "percore/config.h"
#include "percore/keylock.h"
#include "percore/watch.h"
#include "percore/mem.h"
#include "percore/replica.h"
#include "percore/ring.h"
#include "percore/script.h"
#include "percore/slowlog.h"
#include "percore/util.h"

#include <assert.h>
#include <event2/event.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define BATCH_MAX_ENTRIES 1024
#define BATCH_MAX_BYTES (4u << 20)
#define BATCH_POOL_MAX 64
#define DRAIN_MAX_PER_TURN 256

struct batch_entry {
    const struct command *cmd;
    uint64_t txid;      /* the multi-shard transaction it belongs to (its parts pass its key locks), 0 none */
    bool may_block;     /* a blocking command that may wait at the owner (not inside MULTI) */
    bool lock_first;    /* a split command's part: lock its keys for txid first (txn.c) */
    bool waits;         /* owner side: a blocking command that found nothing waits here (no reply) */
    bool timed;         /* its handler ran for its slot (CALL_TIME_HOME): `ns` goes home with the reply */
    uint64_t ns;
    bool track;         /* a tracking client's read: the owner remembers its keys (call.h) */
    const struct command *stat_cmd; /* the client's command this entry is (part of), for its stats */
    struct slot *slot;
    int part;
    int db;
    int resp;
    int argc;
    size_t arg_first;   /* index of the first argument in args[] */
    size_t reply_off;
    size_t reply_len;
};

struct batch_arg {
    size_t off;
    size_t len;
};

struct batch {
    struct batch *next;      /* stalled list / pool */
    struct conn *conn;
    int home;
    int target;
    int n;
    int cap;
    struct batch_entry *entries;
    struct batch_arg *args;
    size_t nargs;
    size_t args_cap;
    char *bytes;
    size_t blen;
    size_t bcap;
    struct reply replies;    /* written by the owner */
    bool over_limit;         /* the owner stopped: the client's replies passed its output hard limit */
    int refused;             /* entries [0, refused) got -BUSY unrun (handoff_refuse_busy): rejected calls */
    bool delivery;           /* replies of entries an owner parked, executed by their home (conn's) */
    bool served;             /* a delivery: a blocked client's reply (block.c) */
    int wait_from;           /* returned: entries from here on are parked at the owner (-1: ran all);
                              * parked: the next entry to run */
    uint64_t conn_id;        /* the connection's id (0: a connection-less batch) */
};

static struct batch *batch_borrow(struct shard *self)
{
    struct batch *b = self->batch_pool;
    if (b) {
        self->batch_pool = b->next;
        self->batch_pool_len--;
        b->next = NULL;
        return b;
    }
    b = mem_calloc(1, sizeof(*b));
    reply_init(&b->replies);
    return b;
}

static void batch_destroy(struct batch *b)
{
    mem_release(b->entries);
    mem_release(b->args);
    mem_release(b->bytes);
    reply_deinit(&b->replies);
    mem_release(b);
}

static void batch_return(struct shard *self, struct batch *b)
{
    b->n = 0;
    b->nargs = 0;
    b->blen = 0;
    b->conn = NULL;
    b->conn_id = 0;
    b->delivery = false;
    b->served = false;
    b->refused = 0;
    reply_clear(&b->replies);
    if (self->batch_pool_len >= BATCH_POOL_MAX || b->bcap > (1u << 20) || b->replies.cap > (1u << 20)) {
        batch_destroy(b);
        return;
    }
    b->next = self->batch_pool;
    self->batch_pool = b;
    self->batch_pool_len++;
}

void handoff_setup_shard(struct shard *self, int nshards, int inbox_size, int credits)
{
    size_t done_cap = 2;
    while (done_cap < (size_t)credits)
        done_cap <<= 1;
    self->inbox = ring_create((size_t)inbox_size);
    self->done = ring_create(done_cap);
    self->credits = credits;
    self->building = mem_calloc((size_t)nshards, sizeof(*self->building));
    self->building_targets = mem_calloc((size_t)nshards, sizeof(*self->building_targets));
    self->wake_targets = mem_calloc((size_t)(nshards + 63) / 64, sizeof(uint64_t));
}

void handoff_teardown_shard(struct shard *self)
{
    while (self->system_stalled) { /* unlocks for shards that have stopped */
        struct batch *b = self->system_stalled;
        self->system_stalled = b->next;
        batch_destroy(b);
    }
    while (self->batch_pool) {
        struct batch *b = self->batch_pool;
        self->batch_pool = b->next;
        batch_destroy(b);
    }
    struct batch **waiting[] = {&self->parked_head, &self->lockrun_queued, &self->lockrun_granted};
    for (size_t i = 0; i < sizeof waiting / sizeof waiting[0]; i++) {
        while (*waiting[i]) { /* waited for locks of shards that have stopped */
            struct batch *b = *waiting[i];
            *waiting[i] = b->next;
            batch_destroy(b);
        }
    }
    ring_destroy(&self->inbox);
    ring_destroy(&self->done);
    mem_release(self->building);
    mem_release(self->building_targets);
    mem_release(self->wake_targets);
    mem_release(self->scratch_argv);
}

static void batch_append_bytes(struct batch *b, const char *p, size_t n)
{
    if (b->blen + n > b->bcap) {
        size_t cap = b->bcap ? b->bcap : 4096;
        while (cap < b->blen + n)
            cap *= 2;
        b->bytes = mem_realloc(b->bytes, cap);
        b->bcap = cap;
    }
    memcpy(b->bytes + b->blen, p, n);
    b->blen += n;
}

/*
 * A command's arguments into the batch.  Parsed from one read, they lie in
 * one buffer, each after the last with only its RESP framing in between
 * ("\r\n$<len>\r\n", 6 to 15 bytes): then the span is copied at once (one
 * memcpy instead of one per argument).  Arguments from anywhere else (a
 * command's kept copy, a part built of pieces) are copied one by one.
 */
static void batch_append_args(struct batch *b, int argc, const struct resp_arg *argv)
{
    bool framed = true;
    for (int i = 1; i < argc && framed; i++) {
        uintptr_t gap = (uintptr_t)argv[i].ptr - (uintptr_t)(argv[i - 1].ptr + argv[i - 1].len);
        framed = gap - 6 <= 15 - 6; /* unsigned: a backward "gap" is huge */
    }
    if (framed) {
        size_t base = b->blen;
        const char *first = argv[0].ptr;
        batch_append_bytes(b, first, (size_t)(argv[argc - 1].ptr + argv[argc - 1].len - first));
        for (int i = 0; i < argc; i++) {
            b->args[b->nargs].off = base + (size_t)(argv[i].ptr - first);
            b->args[b->nargs].len = argv[i].len;
            b->nargs++;
        }
        return;
    }
    for (int i = 0; i < argc; i++) {
        b->args[b->nargs].off = b->blen;
        b->args[b->nargs].len = argv[i].len;
        b->nargs++;
        batch_append_bytes(b, argv[i].ptr, argv[i].len);
    }
}

static bool handoff_try_push(struct shard *self, struct batch *b)
{
    if (self->credits == 0) {
        STATS_ADD(&self->stats, handoff_credit_waits, 1);
        return false;
    }
    /* once pushed, the batch is the target's until it comes back: read it before */
    int target = b->target;
    uint64_t commands = (uint64_t)b->n;
    if (b->delivery && self->propagating && !SHARD_STORE_SHARED) /* a reply's writes reach the AOF writer before the reply its home */
        aof_hand_over(self->index);
    if (!ring_push(shard_at(target)->inbox, b)) {
        STATS_ADD(&self->stats, handoff_inbox_full, 1);
        return false;
    }
    self->credits--;
    self->wake_targets[target / 64] |= 1ull << (target % 64);
    STATS_ADD(&self->stats, handoff_batches_sent, 1);
    STATS_ADD(&self->stats, handoff_commands_sent, commands);
    return true;
}

static void handoff_stall(struct conn *c, struct batch *b)
{
    b->next = NULL;
    if (c->stalled_tail)
        c->stalled_tail->next = b;
    else
        c->stalled_head = b;
    c->stalled_tail = b;
    shard_mark_stalled(c);
}

static void handoff_flush_target(struct shard *self, int target)
{
    struct batch *b = self->building[target];
    self->building[target] = NULL;
    if (!b)
        return;
    struct conn *c = b->conn;
    /* batches of a connection leave in order: behind any stalled one */
    if (c->stalled_head || !handoff_try_push(self, b))
        handoff_stall(c, b);
}

void handoff_flush(struct shard *self)
{
    for (int i = 0; i < self->building_count; i++)
        handoff_flush_target(self, self->building_targets[i]);
    self->building_count = 0;
}

void handoff_send(struct conn *c, int target, const struct command *cmd, int db, int argc,
                  const struct resp_arg *argv, struct slot *s, int part)
{
    struct shard *self = c->home;
    struct batch *b = self->building[target];
    if (b && b->conn != c) {
        handoff_flush_target(self, target);
        b = NULL;
    }
    if (!b) {
        b = batch_borrow(self);
        b->conn = c;
        b->home = self->index;
        b->target = target;
        b->conn_id = c->id;
        self->building[target] = b;
        bool listed = false;
        for (int i = 0; i < self->building_count; i++)
            listed |= self->building_targets[i] == target;
        if (!listed)
            self->building_targets[self->building_count++] = target;
        c->inflight++;
    }
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->entries = mem_realloc(b->entries, (size_t)b->cap * sizeof(*b->entries));
    }
    if (b->nargs + (size_t)argc > b->args_cap) {
        size_t cap = b->args_cap ? b->args_cap : 64;
        while (cap < b->nargs + (size_t)argc)
            cap *= 2;
        b->args = mem_realloc(b->args, cap * sizeof(*b->args));
        b->args_cap = cap;
    }
    struct batch_entry *e = &b->entries[b->n++];
    e->cmd = cmd;
    e->txid = s->txid;
    e->may_block = (cmd->flags & CMD_BLOCKING) && !s->txid;
    e->lock_first = false;
    e->waits = false;
    e->timed = false;
    e->track = c->track.reads;
    e->stat_cmd = s->cmd;
    e->slot = s;
    e->part = part;
    e->db = db;
    e->resp = c->resp;
    e->argc = argc;
    e->arg_first = b->nargs;
    batch_append_args(b, argc, argv);
    if (b->n >= BATCH_MAX_ENTRIES || b->blen >= BATCH_MAX_BYTES)
        handoff_flush_target(self, target);
}

bool handoff_retry(struct conn *c)
{
    struct shard *self = c->home;
    while (c->stalled_head) {
        struct batch *b = c->stalled_head;
        struct batch *next = b->next; /* b is not ours to read once pushed */
        if (!handoff_try_push(self, b))
            return false;
        c->stalled_head = next;
        if (!c->stalled_head)
            c->stalled_tail = NULL;
    }
    return true;
}

void handoff_drop_stalled(struct conn *c)
{
    while (c->stalled_head) {
        struct batch *b = c->stalled_head;
        c->stalled_head = b->next;
        batch_return(c->home, b);
        c->inflight--;
    }
    c->stalled_tail = NULL;
}

static struct batch *batch_copy(struct shard *self, const struct batch *b, int from, int to);

/* e's arguments, in self's scratch_argv (until the next call: owner side, to run it; home side, for the
 * slowlog entry of a command that ran whole at its owner) */
static inline const struct resp_arg *batch_entry_argv(struct shard *self, const struct batch *b,
                                                      const struct batch_entry *e)
{
    if (e->argc > self->scratch_argc_cap) {
        self->scratch_argc_cap = e->argc * 2;
        self->scratch_argv = mem_realloc(self->scratch_argv, (size_t)self->scratch_argc_cap * sizeof(struct resp_arg));
    }
    for (int j = 0; j < e->argc; j++) {
        const struct batch_arg *a = &b->args[e->arg_first + (size_t)j];
        self->scratch_argv[j].ptr = b->bytes + a->off;
        self->scratch_argv[j].len = a->len;
    }
    return self->scratch_argv;
}

/* owner side: run b's entries from `from` on against our store; returns where it stopped, at an
 * entry naming a key another transaction holds (b->n: ran them all) */
static int batch_run(struct shard *self, struct batch *b, int from)
{
    const struct config *cfg = config_current();
    long long hard = cfg->obuf[OBUF_NORMAL].hard;
    size_t client_bytes = 0; /* replies bound for the client (internal steps' are not) */
    for (int i = from; i < b->n; i++) {
        struct batch_entry *e = &b->entries[i];
        e->timed = false; /* until its handler runs for its slot (internal and queued ones never do) */
        if (hard > 0 && client_bytes > (unsigned long long)hard) {
            /* past the client's output limit: like Redis, run none of the rest; the home closes it */
            b->over_limit = true;
            b->n = i;
            break;
        }
        batch_entry_argv(self, b, e);
        e->reply_off = b->replies.len;
        if (e->cmd->flags & CMD_INTERNAL) { /* messages of another shard's own */
            if (block_owner_command(e->cmd)) { /* a blocked client's home: drop, a part that waits, probe */
                block_owner_run(self, e->cmd, e->argc, self->scratch_argv, e->db, e->resp, b->conn_id, b->home,
                                b->conn, e->slot, e->part, &b->replies);
                e->reply_len = b->replies.len - e->reply_off;
                continue;
            }
            if (e->cmd == &txn_granted_command) { /* a shard we asked holds our transaction's keys */
                long long txid;
                if (util_str_to_ll(self->scratch_argv[1].ptr, self->scratch_argv[1].len, &txid))
                    txn_granted(self, (uint64_t)txid);
                e->reply_len = 0;
                continue;
            }
        }
        if (e->lock_first && !txn_lock_split_part(self, e->txid, b->home, e->cmd, e->argc, self->scratch_argv, e->db)) {
            /* its keys are taken: the request queued, the part waits here with it (handoff_lockrun_granted) */
            struct batch *p = batch_copy(self, b, i, i + 1);
            p->entries[0].lock_first = false;
            p->next = self->lockrun_queued;
            self->lockrun_queued = p;
            reply_raw(&b->replies, TXN_LOCK_QUEUED, sizeof TXN_LOCK_QUEUED - 1);
            e->reply_len = b->replies.len - e->reply_off;
            continue;
        }
        if (keylock_count(self->locks) && txn_keys_locked(self, e->cmd, e->argc, self->scratch_argv, e->db, e->txid))
            return i;
        bool timed = e->slot && !(e->cmd->flags & CMD_INTERNAL); /* an internal step only adds time (call.h) */
        e->ns = 0;
        struct call run = {
            .cmd = e->cmd, .stat_cmd = e->stat_cmd, .argv = self->scratch_argv, .argc = e->argc, .db = e->db,
            .resp = e->resp, .client = b->conn_id, .conn = NULL, /* the home's connection: not ours to read */
            .out = &b->replies,
            .flags = CALL_STATS | CALL_CHECK_MEMORY | CALL_EFFECTS | (e->may_block ? CALL_MAY_BLOCK : 0) |
                     (timed ? CALL_TIME_HOME : 0),
            .took = &e->ns,
            .track = e->track,
            .txid = e->txid,
        };
        enum call_result ran = call(self, &run);
        e->waits = ran == CALL_BLOCKED;
        e->timed = timed && ran != CALL_REFUSED; /* one that waits is timed as it blocks, as Redis times it once */
        if (e->waits)
            block_register(self, e->cmd, e->argc, self->scratch_argv, e->db, e->resp, b->conn_id, b->home, b->conn,
                           e->slot, e->part);
        e->reply_len = b->replies.len - e->reply_off;
        if (!(e->cmd->flags & CMD_INTERNAL))
            client_bytes += e->reply_len;
    }
    return b->n;
}

/* owner side: does this connection have a batch parked here? */
static bool conn_parked_here(const struct shard *self, uint64_t conn_id)
{
    for (const struct batch *p = self->parked_head; p; p = p->next)
        if (p->conn_id == conn_id)
            return true;
    return false;
}

/* owner side: entries [from, n) of b wait here for keys; b goes home with the rest's replies */
/* entries [from, to) of b, to run here later: its delivery goes to b's home */
static struct batch *batch_copy(struct shard *self, const struct batch *b, int from, int to)
{
    struct batch *p = batch_borrow(self);
    p->conn = b->conn; /* the home's: carried back, never read here */
    p->conn_id = b->conn_id;
    p->home = self->index; /* its delivery comes back to us */
    p->target = b->home;
    for (int i = from; i < to; i++) {
        const struct batch_entry *e = &b->entries[i];
        if (p->n == p->cap) {
            p->cap = p->cap ? p->cap * 2 : 16;
            p->entries = mem_realloc(p->entries, (size_t)p->cap * sizeof(*p->entries));
        }
        if (p->nargs + (size_t)e->argc > p->args_cap) {
            p->args_cap = (p->nargs + (size_t)e->argc) * 2;
            p->args = mem_realloc(p->args, p->args_cap * sizeof(*p->args));
        }
        struct batch_entry *ne = &p->entries[p->n++];
        *ne = *e;
        ne->arg_first = p->nargs;
        for (int j = 0; j < e->argc; j++) {
            const struct batch_arg *a = &b->args[e->arg_first + (size_t)j];
            p->args[p->nargs].off = p->blen;
            p->args[p->nargs].len = a->len;
            p->nargs++;
            batch_append_bytes(p, b->bytes + a->off, a->len);
        }
    }
    return p;
}

static void batch_park(struct shard *self, struct batch *b, int from)
{
    struct batch *p = batch_copy(self, b, from, b->n);
    p->wait_from = 0;
    p->next = NULL;
    if (self->parked_tail)
        self->parked_tail->next = p;
    else
        self->parked_head = p;
    self->parked_tail = p;
    b->wait_from = from;
    keylock_hold_new(self->locks, true); /* it goes before lock requests that come after it */
    STATS_ADD(&self->stats, handoff_parked, 1);
}

/* owner side: run the commands of a batch against our store, from `from` on (those before were answered) */
static void handoff_execute(struct shard *self, struct batch *b, int from)
{
    b->over_limit = false;
    b->wait_from = -1;
    /* a connection with a batch parked here: this one waits behind it */
    int stop = self->parked_head && b->conn_id && conn_parked_here(self, b->conn_id) ? from : batch_run(self, b, from);
    if (stop < b->n)
        batch_park(self, b, stop);
    STATS_ADD(&self->stats, handoff_batches_received, 1);
    shard_publish_keyspace(self, false);
    if (self->notify)
        notify_flush(self); /* its keyspace events leave before its replies: a client that saw the reply and
                         * then publishes finds its subscribers told of them first */
    if (self->tracking.dirty)
        tracking_flush(self); /* so do the invalidations: a client that saw +OK finds the readers told */
}

/* a connection-less batch (unlock, grant, delivery) waits its turn behind earlier ones */
static void handoff_push_system(struct shard *self, struct batch *b)
{
    if (self->system_stalled || !handoff_try_push(self, b)) {
        b->next = NULL;
        struct batch **tail = &self->system_stalled;
        while (*tail)
            tail = &(*tail)->next;
        *tail = b;
        shard_arm_retry(self);
    }
}

bool handoff_lockrun_granted(struct shard *self, uint64_t txid)
{
    for (struct batch **link = &self->lockrun_queued; *link; link = &(*link)->next) {
        struct batch *p = *link;
        if (p->entries[0].txid == txid) {
            *link = p->next;
            p->next = self->lockrun_granted;
            self->lockrun_granted = p;
            return true;
        }
    }
    return false;
}

void handoff_run_granted(struct shard *self)
{
    while (self->lockrun_granted) {
        struct batch *p = self->lockrun_granted;
        self->lockrun_granted = p->next;
        batch_run(self, p, 0); /* its keys are its transaction's: it runs whole */
        p->delivery = true;
        p->served = true; /* one entry's reply, to its slot (block_served) */
        handoff_push_system(self, p);
    }
}

void handoff_run_parked(struct shard *self)
{
    struct batch **link = &self->parked_head, *tail = NULL;
    while (*link) {
        struct batch *p = *link;
        bool behind = false; /* an earlier batch of its connection still waits */
        for (struct batch *q = self->parked_head; q != p && !behind; q = q->next)
            behind = q->conn_id == p->conn_id;
        if (!behind)
            p->wait_from = batch_run(self, p, p->wait_from);
        if (behind || p->wait_from < p->n) {
            tail = p;
            link = &p->next;
            continue;
        }
        *link = p->next; /* ran whole: its replies go home */
        p->delivery = true;
        handoff_push_system(self, p);
    }
    self->parked_tail = tail;
    shard_publish_keyspace(self, false);
}

static void handoff_complete(struct shard *self, struct batch *b);

/* home side: an entry's answer to its slot (inline: out of line, its call costs 1% of a remote GET) */
static inline __attribute__((always_inline)) void batch_entry_reply(struct conn *c, const struct batch *b, const struct batch_entry *e)
{
    if (e->timed && dispatch_part_time(e->slot, e->ns))
        dispatch_part_slow(c, e->slot, e->argc, batch_entry_argv(c->home, b, e));
    if (e->waits)
        dispatch_part_waits(c, e->slot, e->part);
    else
        dispatch_part_reply(c, e->slot, e->part, b->replies.buf + e->reply_off, e->reply_len);
}

/* our batches that came back: completed (first the one a busy script's hook held, once it ended) */
static size_t handoff_drain_done(struct shard *self)
{
    void *items[32];
    size_t total = 0, m;
    if (self->busy_done_held) {
        if (self->busy_script)
            return 0;
        struct batch *b = self->busy_done_held;
        self->busy_done_held = NULL;
        self->aof_replies_came = true;
        handoff_complete(self, b);
        total++;
    }
    while ((m = ring_pop_batch(self->done, items, 32)) > 0) {
        self->aof_replies_came = true;
        for (size_t i = 0; i < m; i++)
            handoff_complete(self, items[i]);
        total += m;
    }
    return total;
}

/* home side: the replies of entries an owner parked (the connection was held for them), or a blocked
 * client's reply */
static void handoff_deliver(struct shard *self, struct batch *b)
{
    /* the batch it follows went back to our done ring before the owner pushed this one to our inbox:
     * complete that first, so that each connection sees the two in order */
    handoff_drain_done(self);
    struct conn *c = b->conn;
    b->conn = NULL; /* back at the owner it is connection-less */
    if (b->served) { /* a blocked client's reply (this may free c: nothing after it) */
        block_served(c, b->entries[0].slot, b->entries[0].part, b->replies.buf, b->replies.len);
        handoff_flush(self);
        return;
    }
    if (b->over_limit) {
        conn_close_output_limit(c);
    } else if (!c->closed || shard_running(self)) { /* a multi-shard command must finish, to free its keys */
        for (int i = 0; i < b->n; i++)
            batch_entry_reply(c, b, &b->entries[i]);
    }
    if (--c->parked == 0)
        conn_resume(c);
    conn_unref(c); /* the reference its original batch left to it (this may free c: nothing after it) */
    handoff_flush(self);
}

/* home side: a batch came back */
static void handoff_complete(struct shard *self, struct batch *b)
{
    struct conn *c = b->conn;
    self->credits++;
    if (!c) { /* an unlock, a grant or a delivery: nothing to answer */
        batch_return(self, b);
        return;
    }
    if (b->over_limit) {
        conn_close_output_limit(c);
    } else if (!c->closed || shard_running(self)) { /* a multi-shard command must finish, to free its keys */
        int ran = b->wait_from >= 0 ? b->wait_from : b->n;
        for (int i = 0; i < b->refused; i++) /* counted as Redis counts a command refused while busy */
            b->entries[i].slot->rejected = true;
        for (int i = 0; i < ran; i++)
            batch_entry_reply(c, b, &b->entries[i]);
    }
    bool parked = b->wait_from >= 0; /* the rest comes in a delivery (handoff_deliver), which drops the reference */
    batch_return(self, b);
    if (parked)
        c->parked++;
    else
        conn_unref(c);
    handoff_flush(self);
}

void handoff_send_system(struct shard *self, int target, const struct command *cmd, int db, int argc,
                         const struct resp_arg *argv)
{
    struct batch *b = batch_borrow(self);
    b->home = self->index;
    b->target = target;
    if (b->cap == 0) {
        b->cap = 16;
        b->entries = mem_realloc(b->entries, (size_t)b->cap * sizeof(*b->entries));
    }
    if ((size_t)argc > b->args_cap) {
        b->args_cap = (size_t)argc;
        b->args = mem_realloc(b->args, b->args_cap * sizeof(*b->args));
    }
    struct batch_entry *e = &b->entries[b->n++];
    memset(e, 0, sizeof(*e));
    e->cmd = cmd;
    e->stat_cmd = cmd;
    e->db = db;
    e->resp = 2;
    e->argc = argc;
    batch_append_args(b, argc, argv);
    handoff_push_system(self, b);
}

void handoff_send_locking(struct conn *c, int target, const struct command *cmd, int db, int argc,
                          const struct resp_arg *argv, struct slot *s, int part)
{
    handoff_send(c, target, cmd, db, argc, argv, s, part);
    struct batch *b = c->home->building[target];
    b->entries[b->n - 1].lock_first = true;
}

void handoff_send_served(struct shard *self, int home, struct conn *conn, struct slot *slot, int part,
                         const char *reply, size_t len)
{
    struct batch *b = batch_borrow(self);
    b->home = self->index; /* it comes back to us */
    b->target = home;
    b->conn = conn;
    b->delivery = true;
    b->served = true;
    if (b->cap == 0) {
        b->cap = 16;
        b->entries = mem_realloc(b->entries, (size_t)b->cap * sizeof(*b->entries));
    }
    struct batch_entry *e = &b->entries[b->n++];
    memset(e, 0, sizeof(*e));
    e->slot = slot;
    e->part = part;
    reply_raw(&b->replies, reply, len);
    e->reply_len = len;
    handoff_push_system(self, b);
}

void handoff_retry_system(struct shard *self)
{
    while (self->system_stalled) {
        struct batch *b = self->system_stalled;
        struct batch *next = b->next; /* b is not ours to read once pushed */
        if (!handoff_try_push(self, b))
            return;
        self->system_stalled = next;
    }
}

/* owner side: b goes back to its home's done ring (its doorbell rung at the end of the turn) */
static void handoff_return(struct shard *self, struct batch *b)
{
    int home = b->home; /* once pushed, the batch is its home's again */
    bool pushed = ring_push(shard_at(home)->done, b);
    assert(pushed && "done ring sized by credits cannot be full");
    (void)pushed;
    self->wake_targets[home / 64] |= 1ull << (home % 64);
}

/* owner side: a batch from the inbox, its entries from `from` on (a delivery: all of it) */
static void handoff_serve(struct shard *self, struct batch *b, int from)
{
    if (b->delivery) {
        handoff_deliver(self, b);
        self->aof_replies_came = true;
    } else {
        shard_loading(self); /* a client's part after the load: its writes are propagated */
        handoff_execute(self, b, from);
        if (self->propagating && !SHARD_STORE_SHARED) /* its writes reach the AOF writer before its replies their home */
            aof_hand_over(self->index);
    }
    handoff_return(self, b);
}

/*
 * Redis answers -BUSY to what it reads while a script is busy; here that is
 * also what other shards' clients sent to this shard, waiting in its inbox
 * (sent before they saw it busy, which dispatch_send_part answers itself).
 * An entry a client's command sent runs nothing: it gets -BUSY, as
 * dispatch_send_part would have given it.  The first entry that must run
 * (an internal step: a lock request, a watch, a blocked client's part; a
 * part that locks its keys first), a delivery, or a batch of a connection
 * with one parked here stops the refusing: that batch waits in busy_held,
 * what follows it in the inbox, and the rest runs in order once the script
 * ended (handoff_drain).
 */
void handoff_refuse_busy(struct shard *self)
{
    if (self->busy_held || ring_empty(self->inbox))
        return;
    char err[sizeof(FUNCTION_BUSY_ERROR) + 3];
    int len = snprintf(err, sizeof err, "-%s\r\n", script_busy_error(self->index));
    void *item;
    while (!self->busy_held && ring_pop_batch(self->inbox, &item, 1) == 1) {
        struct batch *b = item;
        int i = 0;
        if (!b->delivery && !client_obeyed(b->conn_id) && /* a replica's master waits, as Redis's */
            !(self->parked_head && b->conn_id && conn_parked_here(self, b->conn_id))) {
            for (; i < b->n && !(b->entries[i].cmd->flags & CMD_INTERNAL) && !b->entries[i].lock_first; i++) {
                struct batch_entry *e = &b->entries[i];
                e->timed = e->waits = false;
                e->reply_off = b->replies.len;
                reply_raw(&b->replies, err, (size_t)len);
                e->reply_len = (size_t)len;
            }
        }
        b->refused = i;
        if (b->delivery || i < b->n) {
            self->busy_held = b;
            self->busy_held_from = i;
            return;
        }
        b->over_limit = false;
        b->wait_from = -1;
        STATS_ADD(&self->stats, handoff_batches_received, 1);
        handoff_return(self, b);
    }
}

/*
 * Replies that came back to this shard's clients while a script is busy
 * here: Redis would have answered them at once.  From the hook, a batch
 * whose every entry is the whole reply of one remote command (a GET sent to
 * another shard just before the script began), for a connection other than
 * the script's own, whose queue holds nothing that completing it would start
 * (a transaction, a barrier, a blocked command: dispatch_slot_answers_alone),
 * completes now.  The first other batch stops it: that one waits in
 * busy_done_held, the rest in the done ring, and they complete in order once
 * the script ended (handoff_drain_done).
 */
void handoff_deliver_busy(struct shard *self, uint64_t running)
{
    void *item;
    while (!self->busy_done_held && ring_pop_batch(self->done, &item, 1) == 1) {
        struct batch *b = item;
        struct conn *c = b->conn;
        /* a connection-less batch (an unlock, a grant) only comes back */
        bool now = !c || (!c->closed && c->id != running && !c->repl_master && !c->loads_aof && !b->over_limit &&
                          b->wait_from < 0 && !b->delivery && !b->served); /* a replica's master waits, as Redis's */
        for (int i = 0; c && now && i < b->n; i++) {
            const struct batch_entry *e = &b->entries[i];
            now = !e->waits && dispatch_slot_answers_alone(c, e->slot, b->replies.buf + e->reply_off, e->reply_len);
        }
        if (!now) {
            self->busy_done_held = b;
            return;
        }
        self->aof_replies_came = true;
        handoff_complete(self, b);
    }
}

size_t handoff_drain(struct shard *self)
{
    void *items[32];
    size_t total = 0;
    if (self->busy_held && !self->busy_script) { /* the script that held it ended */
        struct batch *b = self->busy_held;
        self->busy_held = NULL;
        handoff_serve(self, b, self->busy_held_from);
        total++;
    }
    while (total < DRAIN_MAX_PER_TURN && !self->busy_held) {
        size_t n = ring_pop_batch(self->inbox, items, 32);
        for (size_t i = 0; i < n; i++)
            handoff_serve(self, items[i], 0);
        size_t m = handoff_drain_done(self);
        total += n + m;
        if (n == 0 && m == 0)
            break;
    }
    return total;
}

void handoff_ring(struct shard *self)
{
    int n = shard_count();
    bool any = false;
    for (int w = 0; w < (n + 63) / 64; w++)
        any |= self->wake_targets[w] != 0;
    if (!any)
        return;
    atomic_thread_fence(memory_order_seq_cst);
    for (int w = 0; w < (n + 63) / 64; w++) {
        uint64_t bits = self->wake_targets[w];
        self->wake_targets[w] = 0;
        while (bits) {
            int t = w * 64 + __builtin_ctzll(bits);
            bits &= bits - 1;
            struct shard *target = shard_at(t);
            if (atomic_load_explicit(&target->asleep, memory_order_seq_cst)) {
                uint64_t one = 1;
                ssize_t rc = write(target->doorbell_fd, &one, sizeof(one));
                (void)rc; /* EAGAIN: the counter is already non-zero, the target will wake */
            }
        }
    }
}
