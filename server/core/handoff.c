/*
 * handoff: cross-shard batches, bounded inboxes, credits and doorbells
 * (DESIGN.md rules 4 and 5, and "A cross-shard message, from birth to death").
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
 * Memory: batches are allocated, recycled and freed by their home shard.
 * A reply area that outgrows what the home gave it is grown by the owner;
 * mimalloc hands such a block back to its owning heap when the home frees it.
 */
#include "core.h"

#include "percore/config.h"
#include "percore/mem.h"
#include "percore/ring.h"
#include "percore/slowlog.h"

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
    while (self->batch_pool) {
        struct batch *b = self->batch_pool;
        self->batch_pool = b->next;
        batch_destroy(b);
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

static bool handoff_try_push(struct shard *self, struct batch *b)
{
    if (self->credits == 0) {
        STATS_ADD(&self->stats, handoff_credit_waits, 1);
        return false;
    }
    /* once pushed, the batch is the target's until it comes back: read it before */
    int target = b->target;
    uint64_t commands = (uint64_t)b->n;
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
    e->stat_cmd = s->cmd;
    e->slot = s;
    e->part = part;
    e->db = db;
    e->resp = c->resp;
    e->argc = argc;
    e->arg_first = b->nargs;
    for (int i = 0; i < argc; i++) {
        b->args[b->nargs].off = b->blen;
        b->args[b->nargs].len = argv[i].len;
        b->nargs++;
        batch_append_bytes(b, argv[i].ptr, argv[i].len);
    }
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

/* owner side: run every command of a batch against our store */
static void handoff_execute(struct shard *self, struct batch *b)
{
    const struct config *cfg = config_current();
    struct cmd_ctx ctx = {
        .store = self->store,
        .out = &b->replies,
        .now = self->now,
        .config = cfg,
        .stats = &self->cstats,
        .conn = NULL,
        .shard = self->index,
    };
    long long hard = cfg->obuf[OBUF_NORMAL].hard;
    size_t client_bytes = 0; /* replies bound for the client (internal steps' are not) */
    b->over_limit = false;
    for (int i = 0; i < b->n; i++) {
        struct batch_entry *e = &b->entries[i];
        if (hard > 0 && client_bytes > (unsigned long long)hard) {
            /* past the client's output limit: like Redis, run none of the rest; the home closes it */
            b->over_limit = true;
            b->n = i;
            break;
        }
        if (e->argc > self->scratch_argc_cap) {
            self->scratch_argc_cap = e->argc * 2;
            self->scratch_argv = mem_realloc(self->scratch_argv,
                                             (size_t)self->scratch_argc_cap * sizeof(struct resp_arg));
        }
        for (int j = 0; j < e->argc; j++) {
            const struct batch_arg *a = &b->args[e->arg_first + (size_t)j];
            self->scratch_argv[j].ptr = b->bytes + a->off;
            self->scratch_argv[j].len = a->len;
        }
        ctx.argv = self->scratch_argv;
        ctx.argc = e->argc;
        ctx.db = e->db;
        b->replies.resp = e->resp;
        e->reply_off = b->replies.len;
        shard_store_lock(); /* the global-lock build's admin fan-outs */
        if (dispatch_memory_ok(self, cfg, e->cmd, &b->replies)) {
            uint64_t t0 = stats_clock_ns();
            e->cmd->proc(&ctx);
            shard_store_unlock();
            /* the home counts the call and its outcome once the whole reply is there: this adds the time */
            uint64_t t1 = stats_cmd_done(&self->stats, e->stat_cmd, 0, t0, b->replies.buf + e->reply_off,
                                         b->replies.len - e->reply_off, cfg->latency_tracking);
            slowlog_note(&ctx, e->cmd, t1 - t0, NULL); /* the connection is the home's: not ours to read */
            shard_note_write(self, e->cmd, e->db);
        } else {
            shard_store_unlock(); /* refused for OOM: the home counts it when the reply is complete */
        }
        e->reply_len = b->replies.len - e->reply_off;
        if (!(e->cmd->flags & CMD_INTERNAL))
            client_bytes += e->reply_len;
    }
    STATS_ADD(&self->stats, handoff_batches_received, 1);
    shard_publish_keyspace(self, false);
}

/* home side: a batch came back */
static void handoff_complete(struct shard *self, struct batch *b)
{
    struct conn *c = b->conn;
    self->credits++;
    if (!c->closed && b->over_limit) {
        conn_close_output_limit(c);
    } else if (!c->closed) {
        for (int i = 0; i < b->n; i++) {
            struct batch_entry *e = &b->entries[i];
            dispatch_part_reply(c, e->slot, e->part, b->replies.buf + e->reply_off, e->reply_len);
        }
    }
    batch_return(self, b);
    conn_unref(c);
    handoff_flush(self);
}

size_t handoff_drain(struct shard *self)
{
    void *items[32];
    size_t total = 0;
    while (total < DRAIN_MAX_PER_TURN) {
        size_t n = ring_pop_batch(self->inbox, items, 32);
        for (size_t i = 0; i < n; i++) {
            struct batch *b = items[i];
            int home = b->home; /* once pushed, the batch is its home's again */
            handoff_execute(self, b);
            bool pushed = ring_push(shard_at(home)->done, b);
            assert(pushed && "done ring sized by credits cannot be full");
            (void)pushed;
            self->wake_targets[home / 64] |= 1ull << (home % 64);
        }
        size_t m = ring_pop_batch(self->done, items, 32);
        for (size_t i = 0; i < m; i++)
            handoff_complete(self, items[i]);
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
