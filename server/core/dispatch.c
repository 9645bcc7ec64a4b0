/*
 * dispatch: where a parsed command runs, and how its reply finds its place.
 *
 *   lookup -> arity -> auth -> RESP2 subscriber mode (pubsub.h) -> CLIENT PAUSE: the
 *   connection waits (conn.c) -> MULTI queue (txn.c)
 *   -> a key held by a multi-shard transaction: wait -> keys' slots -> shard(s)
 *     blocking command              -> its keys' owner, through a slot (block.c)
 *     all keys on this shard        -> the handler runs now (no message, no atomic)
 *     all keys on one other shard   -> one entry in that shard's batch; a slot
 *                                      holds the reply's place
 *     keys on several shards        -> locked first (txn.c), then one part per
 *                                      shard merged in the slot, or gathered, or
 *                                      RENAME/RENAMENX/MSETNX's steps
 *     keyspace-wide                 -> one part per shard, merged
 *   on a cluster port: -MOVED / -CROSSSLOT (cluster.h), else the handler runs
 *   here, whatever the route
 *
 * Local replies go straight to the connection's output while nothing is
 * pending, else behind the last pending slot, so replies always leave in
 * request order (ARCHITECTURE.md rule 6); those of a command run under CLIENT
 * REPLY OFF|SKIP go to the shard's discard buffer, and its slots drop their
 * reply but keep their place (the replies behind them still wait for them).
 * A multi-step command is a barrier:
 * the connection parses nothing more until it completes, so that a later
 * command of the same pipeline cannot overtake one of its steps.
 */
#include "dispatch.h"

#include "shard_internal.h"
#include "conn_internal.h"
#include "reply_slot.h"
#include "txn.h"
#include "block.h"
#include "handoff.h"

#include "call.h"

#include "percore/aof.h"
#include "percore/load.h"
#include "percore/save.h"
#include "percore/script.h"
#include "percore/cluster.h"
#include "percore/config.h"
#include "percore/keylock.h"
#include "percore/monitor.h"
#include "percore/watch.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/pubsub.h"
#include "percore/primary.h"
#include "percore/replica.h"
#include "percore/rread.h"
#include "percore/slot.h"
#include "percore/slowlog.h"
#include "percore/store.h"
#include "percore/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reply *dispatch_push_target(struct conn *c)
{
    struct reply *r = c->slot_tail ? &c->slot_tail->after : &c->out;
    r->resp = c->resp;
    return r;
}

struct reply *dispatch_reply_target(struct conn *c)
{
    if (__builtin_expect(c->reply & CONN_REPLY_SILENT, 0)) { /* CLIENT REPLY OFF|SKIP: dropped */
        c->home->discard.resp = c->resp;
        return &c->home->discard;
    }
    return dispatch_push_target(c);
}

/* Redis 7.0's shared.bgsaveerr */
static const char misconf_error[] =
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that "
    "may modify the data set are disabled, because this instance is configured to report errors during writes if RDB "
    "snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB "
    "error.";

/* Redis 7.0's shared.oomerr */
static const char oom_error[] = "OOM command not allowed when used memory > 'maxmemory'.";


/* maxmemory-policy -> what store_evict picks (-1: noeviction) */
static const int evict_how[] = {
    [MAXMEMORY_VOLATILE_LRU] = STORE_EVICT_LRU | STORE_EVICT_VOLATILE,
    [MAXMEMORY_ALLKEYS_LRU] = STORE_EVICT_LRU,
    [MAXMEMORY_VOLATILE_LFU] = STORE_EVICT_LFU | STORE_EVICT_VOLATILE,
    [MAXMEMORY_ALLKEYS_LFU] = STORE_EVICT_LFU,
    [MAXMEMORY_VOLATILE_RANDOM] = STORE_EVICT_RANDOM | STORE_EVICT_VOLATILE,
    [MAXMEMORY_ALLKEYS_RANDOM] = STORE_EVICT_RANDOM,
    [MAXMEMORY_VOLATILE_TTL] = STORE_EVICT_TTL | STORE_EVICT_VOLATILE,
    [MAXMEMORY_NOEVICTION] = -1,
};

/*
 * maxmemory, per shard: each shard may hold maxmemory / threads, as its
 * store counts it (store_memory).  Over that, before any command and on
 * the shard's timer (cmd NULL: maxmemory lowered while the shard idles),
 * keys are evicted as the policy says (Redis evicts before every command
 * too, and in CONFIG SET maxmemory); a
 * CMD_DENYOOM command is refused when eviction freed nothing (noeviction,
 * or no candidate left).  Eviction that freed some but stopped at its time
 * budget lets the command run, as Redis's EVICT_RUNNING does.
 */
/* over this shard's budget once the policy evicted what it could (nothing: noeviction, no candidate left) */
static bool memory_full(struct shard *self, const struct config *cfg)
{
    if (replica_now() && cfg->replica_ignore_maxmemory) /* Redis's default: a replica's keys go when its master */
        return false;                                     /* says, and its master's writes are never refused */
    enum maxmemory_policy p = cfg->maxmemory_policy;
    size_t budget = (size_t)cfg->maxmemory / (size_t)shard_store_count();
    size_t used = store_memory(self->store);
    if (used <= budget)
        return false;
    size_t freed = 0;
    if (evict_how[p] >= 0)
        freed = store_evict(self->store, evict_how[p], cfg->maxmemory_samples, used - budget, self->now);
    return freed == 0;
}

bool dispatch_memory_enforce(struct shard *self, const struct config *cfg, const struct command *cmd, int argc,
                             const struct resp_arg *argv, struct reply *out)
{
    if (!memory_full(self, cfg) || !cmd) /* no cmd: the shard's timer, only evicting */
        return true;
    const struct command *run = command_resolve_subcommand(cmd, argc, argv); /* NULL: the container refuses it */
    if (!((run ? run : cmd)->flags & CMD_DENYOOM))
        return true;
    reply_error(out, oom_error);
    return false;
}

/* the client's whole command, here and now */
static enum call_result run_handler(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                                    struct reply *out, bool with_conn)
{
    struct call run = {
        .cmd = cmd, .argv = argv, .argc = argc, .db = c->db, .resp = c->resp, .client = c->id, .conn = c,
        .out = out, .flags = CALL_WHOLE | CALL_STATS | CALL_CHECK_MEMORY | CALL_EFFECTS | (with_conn ? CALL_CONN : 0),
        .track = c->track.reads,
        .txid = c->txid,
    };
    return call(c->home, &run);
}

/*
 * CMD_AFTER_PENDING: true when a command of the connection sent earlier is
 * still pending, the last such one then marked a barrier, so that its
 * completion parses the connection again (dispatch_slot_complete; as the
 * tail, it also stops parsing meanwhile).
 */
static bool wait_for_pending(struct conn *c)
{
    struct slot *last = NULL;
    for (struct slot *s = c->slot_head; s; s = s->next)
        if (!s->complete)
            last = s;
    if (last)
        last->barrier = true;
    return last != NULL;
}

/* run here and now; MONITOR sees it once it ran (a connection command with the database it left), unless
 * maxmemory refused it, as Redis's monitors are fed by call() (processCommand's refusals never get there) */
static void run_inline(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                       struct reply *out, bool with_conn, bool feed)
{
    if (feed && (cmd->flags & CMD_MONITOR_FIRST)) { /* its own commands' lines follow (a script's) */
        monitor_feed(c, cmd, argc, argv);
        feed = false;
    }
    if (run_handler(c, cmd, argc, argv, out, with_conn) != CALL_REFUSED && feed)
        monitor_feed(c, cmd, argc, argv);
}

/* ---------------------------------------------------------------- slots */

/* a shard keeps released slots with their (small) reply buffers: a remote command costs no allocation */
#define SLOT_POOL_MAX 256
#define SLOT_POOL_BUF_MAX 16384

struct slot *dispatch_slot_create(struct conn *c, const struct command *cmd)
{
    struct shard *self = c->home;
    struct slot *s = self->slot_pool;
    if (s) {
        self->slot_pool = s->next;
        self->slot_pool_len--;
        s->next = NULL;
    } else {
        s = mem_calloc(1, sizeof(*s));
        reply_init(&s->reply);
        reply_init(&s->after);
        reply_init(&s->gather);
    }
    s->cmd = cmd;
    s->txid = c->txid;
    s->silent = (c->reply & CONN_REPLY_SILENT) != 0;
    s->db = c->db;
    s->resp = c->resp;
    s->reply.resp = c->resp;
    if (c->slot_tail)
        c->slot_tail->next = s;
    else
        c->slot_head = s;
    c->slot_tail = s;
    return s;
}

static void slot_destroy(struct slot *s)
{
    reply_deinit(&s->reply);
    reply_deinit(&s->after);
    reply_deinit(&s->gather);
    mem_release(s);
}

void dispatch_slot_release(struct shard *self, struct slot *s)
{
    if (s->txn) /* its connection went away mid-way: give its keys back */
        txn_finish(self, s->txn);
    if (s->bmulti)
        block_multi_free(s);
    if (s->key_shard || s->key_pos || s->elem || s->argv) { /* a multi-key or multi-step command's */
        mem_release(s->key_shard);
        mem_release(s->key_pos);
        mem_release(s->elem);
        mem_release(s->argv);
        mem_release(s->argv_bytes);
    }
    if (self->slot_pool_len >= SLOT_POOL_MAX || s->reply.cap > SLOT_POOL_BUF_MAX ||
        s->after.cap > SLOT_POOL_BUF_MAX || s->gather.cap > SLOT_POOL_BUF_MAX) {
        slot_destroy(s);
        return;
    }
    reply_clear(&s->reply);
    reply_clear(&s->after);
    reply_clear(&s->gather);
    memset(&s->txid, 0, sizeof(*s) - offsetof(struct slot, txid));
    s->next = self->slot_pool;
    self->slot_pool = s;
    self->slot_pool_len++;
}

void dispatch_teardown_shard(struct shard *self)
{
    while (self->slot_pool) {
        struct slot *s = self->slot_pool;
        self->slot_pool = s->next;
        slot_destroy(s);
    }
    self->slot_pool_len = 0;
}

/* s's command, which ran s->ran_ns in all, its slowlog entry with these arguments when it was slow enough,
 * with its client's addr and name, as Redis's call() records a command once */
static void slot_note_slow(struct conn *c, const struct slot *s, const struct config *cfg, int argc,
                           const struct resp_arg *argv)
{
    struct cmd_ctx ctx = {.argv = argv, .argc = argc, .config = cfg, .shard = c->home->index};
    slowlog_note(&ctx, s->cmd, s->ran_ns, c);
}

/* the slot's reply is final: move every complete slot at the head to the output */
void dispatch_slot_complete(struct conn *c, struct slot *s)
{
    s->complete = true;
    if (s->txn) { /* the multi-shard command ran: its keys are free again */
        txn_finish(c->home, s->txn);
        s->txn = NULL;
    }
    if (!(s->cmd->flags & CMD_INTERNAL)) { /* a client's command (not conn_fanout's): counted once, here */
        /* with its one latency sample (latency-tracking as its last part came) */
        const char *reply = s->sent ? s->sent : s->reply.buf;
        size_t len = s->sent ? s->sent_len : s->reply.len;
        stats_cmd_outcome(&c->home->stats, s->cmd, reply, len, s->rejected, s->sample, s->ran_ns);
        if (s->ran && s->argv) /* one that keeps its arguments (split, stepped) is logged once it is done */
            slot_note_slow(c, s, config_current(), s->argc, s->argv);
    }
    bool was_barrier = s->barrier;
    while (c->slot_head && c->slot_head->complete) {
        struct slot *h = c->slot_head;
        if (!h->silent)
            reply_raw(&c->out, h->reply.buf, h->reply.len);
        reply_raw(&c->out, h->after.buf, h->after.len);
        c->slot_head = h->next;
        if (!c->slot_head)
            c->slot_tail = NULL;
        dispatch_slot_release(c->home, h);
    }
    shard_mark_dirty(c);
    if (c->slot_head && c->slot_head->txn_end) { /* every EXEC reply is in: its locks go */
        dispatch_slot_complete(c, c->slot_head);
        return;
    }
    if (c->slot_head && c->slot_head->txn) /* a transaction waiting for its connection's earlier commands */
        txn_start_deferred(c);
    if (was_barrier)
        conn_resume(c);
}

static void slot_fail(struct slot *s, const char *reply, size_t len)
{
    if (!s->failed) {
        s->failed = true;
        reply_clear(&s->reply);
        reply_raw(&s->reply, reply, len);
    }
}

void dispatch_part_reply(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    s->on_part(c, s, part, reply, len);
    if (--s->parts_left == 0)
        s->on_done(c, s);
}

void dispatch_part_waits(struct conn *c, struct slot *s, int part)
{
    s->on_wait(c, s, part);
}

void dispatch_part_slow(struct conn *c, struct slot *s, int argc, const struct resp_arg *argv)
{
    slot_note_slow(c, s, config_current(), argc, argv);
}

/*
 * A part of slot s for shard `target`: queued for it, or run now when it is
 * us.  Running it may complete and free s: callers touch s no more after
 * sending its last part.
 */
void dispatch_send_part(struct conn *c, struct slot *s, int target, int part, const struct command *cmd, int argc,
                        const struct resp_arg *argv)
{
    struct shard *self = c->home;
    if (target != self->index) {
        if (__builtin_expect(atomic_load_explicit(&script_busy_shards, memory_order_relaxed) != 0, 0) &&
            atomic_load(&shard_at(target)->script_busy) && !(cmd->flags & CMD_INTERNAL) &&
            !c->repl_master) { /* a replica's master waits for the script, as Redis's */
            /* a busy script there: Redis's -BUSY, not a wait (one load of a line written only when a script
             * turns busy or ends, before another shard's is looked at) */
            char err[sizeof(FUNCTION_BUSY_ERROR) + 3];
            int n = snprintf(err, sizeof err, "-%s\r\n", script_busy_error(target));
            s->rejected = true;
            dispatch_part_reply(c, s, part, err, (size_t)n);
            return;
        }
        handoff_send(c, target, cmd, s->db, argc, argv, s, part);
        return;
    }
    struct reply *scratch = &self->scratch;
    reply_clear(scratch);
    uint64_t took = 0;
    bool timed = !(cmd->flags & CMD_INTERNAL); /* an internal step only adds time (call.h) */
    struct call run = {
        .cmd = cmd, .stat_cmd = s->cmd, .argv = argv, .argc = argc, .db = s->db, .resp = s->resp,
        .client = c->id, .conn = c, .out = scratch,
        /* from a busy script's hook (a watch's step, dispatch_while_busy): nothing evicted under the script,
         * and the shard's effects record is the script's */
        .flags = CALL_STATS | (__builtin_expect(self->busy_script, 0) ? 0 : CALL_CHECK_MEMORY | CALL_EFFECTS) |
                 (timed ? CALL_TIME_HOME : 0) | ((cmd->flags & CMD_BLOCKING) && !s->txid ? CALL_MAY_BLOCK : 0),
        .track = c->track.reads,
        .took = &took,
        .txid = s->txid,
    };
    /* the global-lock build: a command that finds no data is in line before any other thread may push
     * (its one lock held from the handler to block_register; nothing in the sharded build) */
    shard_store_lock();
    enum call_result ran = call(self, &run);
    if (ran == CALL_BLOCKED)
        block_register(self, cmd, argc, argv, s->db, s->resp, c->id, self->index, c, s, part);
    shard_store_unlock();
    if (timed && ran != CALL_REFUSED && dispatch_part_time(s, took)) /* one that waits: timed as it blocks */
        dispatch_part_slow(c, s, argc, argv);
    if (ran == CALL_BLOCKED) {
        dispatch_part_waits(c, s, part);
        return;
    }
    dispatch_part_reply(c, s, part, scratch->buf, scratch->len);
}

int dispatch_key_shard(const struct config *cfg, const struct resp_arg *key)
{
    return cfg->slot_shard[slot_of_key(key->ptr, key->len)];
}

/* ---------------------------------------------------------------- merges */

static void part_copy(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    (void)part;
    reply_raw(&s->reply, reply, len);
}

static void done_copy(struct conn *c, struct slot *s);
static void part_whole(struct conn *c, struct slot *s, int part, const char *reply, size_t len);
static void part_script(struct conn *c, struct slot *s, int part, const char *reply, size_t len);

bool dispatch_slot_answers_alone(const struct conn *c, const struct slot *s, const char *reply, size_t len)
{
    bool script = s->on_part == part_script && !(len && reply[0] == DISPATCH_SCRIPT_AGAIN); /* not to run again */
    if (s->on_done != done_copy || (s->on_part != part_whole && s->on_part != part_copy && !script) ||
        s->parts_left != 1)
        return false;
    for (const struct slot *q = c->slot_head; q; q = q->next)
        if (q->txn || q->txn_end || q->barrier || q->bmulti || q->block_cancelling || q->block_target)
            return false;
    return true;
}

/* a command sent whole to one owner: at the head of its connection's queue, its reply goes straight to the
 * output (no copy into the slot and out again); done_copy follows at once */
static void part_whole(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    if (c->slot_head != s || s->silent) {
        part_copy(c, s, part, reply, len);
        return;
    }
    reply_raw(&c->out, reply, len);
    s->sent = reply;
    s->sent_len = len;
}

static void part_sum(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    (void)part;
    struct rread r;
    long long v;
    rread_init(&r, reply, len);
    if (rread_int(&r, &v))
        s->sum += v;
    else
        slot_fail(s, reply, len);
}

static void part_ok(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    (void)part;
    struct rread r;
    rread_init(&r, reply, len);
    if (rread_type(&r) == '-')
        slot_fail(s, reply, len);
    else if (!s->failed && s->reply.len == 0 && !(len == 5 && memcmp(reply, "+OK\r\n", 5) == 0))
        reply_raw(&s->reply, reply, len); /* a reply of its own ("+Background saving started", a library's name) */
}

static void part_concat(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    (void)part;
    struct rread r;
    char t;
    long long n;
    rread_init(&r, reply, len);
    if (!rread_agg(&r, &t, &n) || (t != '*' && t != '~') || n < 0) {
        slot_fail(s, reply, len);
        return;
    }
    s->count += n;
    reply_raw(&s->gather, r.p, rread_left(&r));
}

static void part_mget(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    struct rread r;
    char t;
    long long n;
    rread_init(&r, reply, len);
    if (!rread_agg(&r, &t, &n) || t != '*') {
        slot_fail(s, reply, len);
        return;
    }
    for (uint32_t i = 0; i < s->nkeys && rread_left(&r); i++) {
        if (s->key_shard[i] != part)
            continue;
        const char *elem = r.p;
        if (!rread_skip(&r))
            break;
        size_t elen = (size_t)(r.p - elem);
        s->elem[i] = ((uint64_t)s->gather.len << 32) | elen;
        reply_raw(&s->gather, elem, elen);
    }
}

static void done_copy(struct conn *c, struct slot *s)
{
    dispatch_slot_complete(c, s);
}

static void done_sum(struct conn *c, struct slot *s)
{
    if (!s->failed)
        reply_int(&s->reply, s->sum);
    dispatch_slot_complete(c, s);
}

static void done_ok(struct conn *c, struct slot *s)
{
    if (!s->failed && s->reply.len == 0)
        reply_ok(&s->reply);
    dispatch_slot_complete(c, s);
}

/* SAVE: every shard has begun; the keyspaces are free again while the file is written, the reply waits */
static void done_after_save(struct conn *c, struct slot *s)
{
    if (s->failed) {
        dispatch_slot_complete(c, s);
        return;
    }
    txn_finish(c->home, s->txn);
    s->txn = NULL;
    save_wait(c, s);
}

static void done_concat(struct conn *c, struct slot *s)
{
    if (!s->failed) {
        reply_array(&s->reply, s->count);
        reply_raw(&s->reply, s->gather.buf, s->gather.len);
    }
    dispatch_slot_complete(c, s);
}

static void done_mget(struct conn *c, struct slot *s)
{
    if (!s->failed) {
        reply_array(&s->reply, s->nkeys);
        for (uint32_t i = 0; i < s->nkeys; i++) {
            uint64_t e = s->elem[i];
            reply_raw(&s->reply, s->gather.buf + (e >> 32), (size_t)(e & 0xffffffffu));
        }
    }
    dispatch_slot_complete(c, s);
}

/* ---------------------------------------------------------------- sending */

/*
 * Split the keys of argv (from `first`, `step` arguments per key) by owner
 * shard and send each shard its part: argv[0] then its keys (with their
 * values when step is 2), in the original order.  With `keep`, the parts
 * go to its transaction instead, which sends them as it locks (txn.c).
 */
static void send_split(struct conn *c, struct slot *s, const struct command *cmd, int argc,
                       const struct resp_arg *argv, int first, int step, struct txn *keep)
{
    const struct config *cfg = config_current();
    uint32_t nkeys = (uint32_t)((argc - first) / step);
    mem_release(s->key_shard);
    s->key_shard = mem_alloc(nkeys * sizeof(uint16_t));
    s->nkeys = nkeys;
    int nshards = shard_count();
    uint8_t *present = mem_calloc((size_t)nshards, 1);
    int parts = 0;
    for (uint32_t i = 0; i < nkeys; i++) {
        int sh = dispatch_key_shard(cfg, &argv[first + (int)i * step]);
        s->key_shard[i] = (uint16_t)sh;
        if (!present[sh]) {
            present[sh] = 1;
            parts++;
        }
    }
    s->parts_left = parts;
    struct resp_arg *sub = mem_alloc((size_t)(1 + nkeys * (uint32_t)step) * sizeof(*sub));
    int home = c->home->index;
    /* remote parts first, ours last, so no merge can complete the slot early */
    for (int pass = 0; pass < 2; pass++) {
        for (int sh = 0; sh < nshards; sh++) {
            if (!present[sh] || (pass == 0) == (sh == home))
                continue;
            int n = 0;
            sub[n++] = argv[0];
            for (uint32_t i = 0; i < nkeys; i++) {
                if (s->key_shard[i] != sh)
                    continue;
                for (int j = 0; j < step; j++)
                    sub[n++] = argv[first + (int)i * step + j];
            }
            if (keep)
                txn_keep_part(keep, sh, n, sub);
            else
                dispatch_send_part(c, s, sh, sh, cmd, n, sub);
        }
    }
    mem_release(sub);
    mem_release(present);
}

static void send_all(struct conn *c, struct slot *s, const struct command *cmd, int argc,
                     const struct resp_arg *argv)
{
    int n = shard_count();
    int home = c->home->index;
    s->parts_left = n;
    for (int sh = 0; sh < n; sh++)
        if (sh != home)
            dispatch_send_part(c, s, sh, sh, cmd, argc, argv);
    dispatch_send_part(c, s, home, home, cmd, argc, argv);
}

static void send_one(struct conn *c, struct slot *s, int target, const struct command *cmd, int argc,
                     const struct resp_arg *argv)
{
    s->parts_left = 1;
    dispatch_send_part(c, s, target, target, cmd, argc, argv);
}

/* keep a copy of the command in the slot: later steps run after the read buffer moved on */
void dispatch_argv_copy(int argc, const struct resp_arg *argv, struct resp_arg **out, char **bytes)
{
    size_t total = 0;
    for (int i = 0; i < argc; i++)
        total += argv[i].len;
    *out = mem_alloc((size_t)(argc ? argc : 1) * sizeof(**out));
    *bytes = mem_alloc(total ? total : 1);
    size_t off = 0;
    for (int i = 0; i < argc; i++) {
        memcpy(*bytes + off, argv[i].ptr, argv[i].len);
        (*out)[i].ptr = *bytes + off;
        (*out)[i].len = argv[i].len;
        off += argv[i].len;
    }
}

static void slot_keep_argv(struct slot *s, int argc, const struct resp_arg *argv)
{
    dispatch_argv_copy(argc, argv, &s->argv, &s->argv_bytes);
    s->argc = argc;
}

/* ---------------------------------------------------------------- multi-step commands */


/* a key's value, TTL and LFU counter, as __dump and __take send them */
struct key_state {
    bool exists;
    const char *blob;
    size_t blob_len;
    long long expire;
    long long freq; /* its LFU counter */
};

/* a __dump or __take reply: nil, or *3 [$blob, :expire, :freq] */
static bool parse_dump(const char *r, size_t len, struct key_state *k)
{
    struct rread rr;
    char t;
    long long n;
    rread_init(&rr, r, len);
    k->exists = false;
    if (rread_type(&rr) == '$' || rread_type(&rr) == '_')
        return true; /* nil */
    if (!rread_agg(&rr, &t, &n) || t != '*' || n != 3 || !rread_bulk(&rr, &k->blob, &k->blob_len) || !k->blob)
        return false;
    k->exists = true;
    return rread_int(&rr, &k->expire) && rread_int(&rr, &k->freq);
}

/* RENAME / RENAMENX across shards: [exists src, dst] -> take src -> put dst */
static void rename_step(struct conn *c, struct slot *s);

static void rename_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    if (s->failed)
        return;
    const struct config *cfg = config_current();
    struct rread r;
    long long v;
    rread_init(&r, reply, len);
    if (rread_is_error(&r)) {
        slot_fail(s, reply, len);
        return;
    }
    switch (s->step) {
    case 0: /* EXISTS replies: count = src exists, sum = dst exists */
        if (rread_int(&r, &v)) {
            if (part == dispatch_key_shard(cfg, &s->argv[1]))
                s->count = v;
            else
                s->sum = v;
        }
        break;
    case 1: { /* __take: nil, or [blob, expire, freq], kept whole for the __put */
        struct key_state k;
        s->count = 0; /* no such key */
        if (parse_dump(reply, len, &k) && k.exists) {
            reply_clear(&s->gather);
            reply_raw(&s->gather, reply, len);
            s->count = 1;
        }
        break;
    }
    default: /* __put */
        break;
    }
}

static void rename_done(struct conn *c, struct slot *s)
{
    if (s->failed) {
        dispatch_slot_complete(c, s);
        return;
    }
    bool nx = s->cmd->route == ROUTE_RENAMENX;
    if (s->step == 0) {
        if (s->count == 0) {
            reply_error(&s->reply, "ERR no such key");
            dispatch_slot_complete(c, s);
            return;
        }
        if (nx && s->sum) {
            reply_int(&s->reply, 0);
            dispatch_slot_complete(c, s);
            return;
        }
    } else if (s->step == 1) {
        if (s->count == 0) {
            reply_error(&s->reply, "ERR no such key");
            dispatch_slot_complete(c, s);
            return;
        }
    } else {
        if (nx)
            reply_int(&s->reply, 1);
        else
            reply_ok(&s->reply);
        dispatch_slot_complete(c, s);
        return;
    }
    s->step++;
    rename_step(c, s);
}

static void rename_step(struct conn *c, struct slot *s)
{
    const struct config *cfg = config_current();
    int src = dispatch_key_shard(cfg, &s->argv[1]);
    int dst = dispatch_key_shard(cfg, &s->argv[2]);
    if (s->step == 0) {
        /* TOUCH: Redis looks both keys up, an access (src's counter goes with it; RENAMENX may refuse) */
        const struct command *touch = command_step(CMD_S_TOUCH);
        struct resp_arg a[2] = {command_name_arg(touch), s->argv[1]};
        struct resp_arg b[2] = {command_name_arg(touch), s->argv[2]};
        s->count = -1;
        s->sum = 0;
        s->parts_left = 2;
        dispatch_send_part(c, s, dst, dst, touch, 2, b);
        dispatch_send_part(c, s, src, src, touch, 2, a);
    } else if (s->step == 1) {
        struct resp_arg a[3] = {command_name_arg(command_internal(CMD_I_TAKE)), s->argv[1], {"rename_from", 11}}; /* Redis's events */
        send_one(c, s, src, command_internal(CMD_I_TAKE), 3, a);
    } else {
        struct key_state k;
        parse_dump(s->gather.buf, s->gather.len, &k); /* checked by rename_part */
        char exp[24], freq[24];
        int elen = snprintf(exp, sizeof(exp), "%lld", k.expire);
        int flen = snprintf(freq, sizeof(freq), "%lld", k.freq);
        struct resp_arg a[7] = {command_name_arg(command_internal(CMD_I_PUT)), s->argv[2], {k.blob, k.blob_len},
                                {exp, (size_t)elen}, {"0", 1}, {freq, (size_t)flen}, {"rename_to", 9}};
        send_one(c, s, dst, command_internal(CMD_I_PUT), 7, a);
    }
    handoff_flush(c->home);
}

/*
 * COPY across shards (ROUTE_COPY), RENAME's steps without the take: the
 * options read as the handler reads them (cmd_copy_options), then TOUCH (the
 * handler's read of the source: a keyspace hit or miss) and __dump of the
 * source at its owner -> __put at the destination's owner, in the
 * destination database, NX unless REPLACE, with the "copy_to" event (and
 * dbAdd's "new"): the __put's :0 or :1 is COPY's reply.  Both keys are
 * locked (txn_run_command), so the source cannot change between the steps,
 * and the destination's check and write are one step on its owner.
 */
static void copy_step(struct conn *c, struct slot *s);

static void copy_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    struct rread r;
    rread_init(&r, reply, len);
    if (rread_is_error(&r)) {
        slot_fail(s, reply, len);
        return;
    }
    if (s->step == 0 && part == 1) { /* __dump: nil, or [blob, expire, freq], kept whole for the __put */
        struct key_state k;
        s->count = parse_dump(reply, len, &k) && k.exists;
        if (s->count) {
            reply_clear(&s->gather);
            reply_raw(&s->gather, reply, len);
        }
    } else if (s->step == 1) { /* __put: :0 the destination exists (no REPLACE), :1 copied */
        reply_raw(&s->reply, reply, len);
    } /* else step 0's TOUCH */
}

static void copy_done(struct conn *c, struct slot *s)
{
    if (s->failed || s->step == 1) {
        dispatch_slot_complete(c, s);
        return;
    }
    if (!s->count) { /* no source */
        reply_int(&s->reply, 0);
        dispatch_slot_complete(c, s);
        return;
    }
    s->step = 1;
    copy_step(c, s);
}

static void copy_step(struct conn *c, struct slot *s)
{
    const struct config *cfg = config_current();
    if (s->step == 0) {
        int dst_db;
        bool replace;
        const char *err = cmd_copy_options(s->argc, s->argv, s->db, cfg->databases, &dst_db, &replace);
        if (err) {
            reply_error(&s->reply, err);
            dispatch_slot_complete(c, s);
            return;
        }
        /* TOUCH: Redis reads the source with lookupKeyRead, a hit or a miss and an access (RENAME's way) */
        const struct command *touch = command_step(CMD_S_TOUCH);
        int src = dispatch_key_shard(cfg, &s->argv[1]);
        struct resp_arg t[2] = {command_name_arg(touch), s->argv[1]};
        struct resp_arg a[2] = {command_name_arg(command_internal(CMD_I_DUMP)), s->argv[1]};
        s->parts_left = 2;
        dispatch_send_part(c, s, src, 0, touch, 2, t);
        dispatch_send_part(c, s, src, 1, command_internal(CMD_I_DUMP), 2, a);
    } else {
        int dst_db;
        bool replace;
        cmd_copy_options(s->argc, s->argv, s->db, cfg->databases, &dst_db, &replace); /* checked at step 0 */
        struct key_state k;
        parse_dump(s->gather.buf, s->gather.len, &k); /* checked by copy_part */
        char exp[24];
        int elen = snprintf(exp, sizeof(exp), "%lld", k.expire);
        struct resp_arg a[7] = {command_name_arg(command_internal(CMD_I_PUT)), s->argv[2], {k.blob, k.blob_len},
                                {exp, (size_t)elen}, {replace ? "0" : "1", 1}, {"-1", 2}, {"copy_to", 7}};
        s->db = dst_db; /* the __put's database */
        send_one(c, s, dispatch_key_shard(cfg, &s->argv[2]), command_internal(CMD_I_PUT), 7, a);
    }
    handoff_flush(c->home);
}

/* MSETNX across shards: TOUCH split (Redis looks the keys up: an access) -> MSET split */
static void msetnx_done(struct conn *c, struct slot *s)
{
    if (s->failed) {
        dispatch_slot_complete(c, s);
        return;
    }
    if (s->step == 0) {
        if (s->sum > 0) {
            reply_int(&s->reply, 0);
            dispatch_slot_complete(c, s);
            return;
        }
        s->step = 1;
        s->on_part = part_ok;
        send_split(c, s, command_step(CMD_S_MSET), s->argc, s->argv, 1, 2, NULL);
        handoff_flush(c->home);
        return;
    }
    reply_int(&s->reply, 1);
    dispatch_slot_complete(c, s);
}

static void msetnx_start(struct conn *c, struct slot *s)
{
    int nkeys = (s->argc - 1) / 2;
    struct resp_arg *keys = mem_alloc((size_t)(nkeys + 1) * sizeof(*keys));
    keys[0] = command_name_arg(command_step(CMD_S_TOUCH));
    for (int i = 0; i < nkeys; i++)
        keys[1 + i] = s->argv[1 + 2 * i];
    s->on_part = part_sum;
    s->on_done = msetnx_done;
    send_split(c, s, command_step(CMD_S_TOUCH), nkeys + 1, keys, 1, 1, NULL);
    mem_release(keys);
}

/*
 * SCAN walks the shards one after the other.  The cursor is the shard's own
 * cursor times the shard count plus the shard's number (local * n + shard),
 * so the shard number sits in the low bits whatever the tables' sizes, and
 * shard 0 starts at 0.  A shard's cursor is Redis's reverse-binary one, below
 * its table's bucket count 2^k, so the cursor is below n * 2^k: under 2^53,
 * the integers a JavaScript number holds exactly (node-redis 4 parses cursors
 * as numbers), for tables under 2^43 buckets at 1024 threads
 * (CONFIG_MAX_THREADS), and a table grows to 2^43 only once its shard held
 * 2^42 keys (128 TiB of entries).  The local cursor travels unchanged, so
 * Redis's guarantee holds across a shard's rehashes (every key present for
 * the whole scan is returned); keys never change shard, and the shard count
 * is fixed at startup.  When a shard's scan ends before COUNT keys were found,
 * the same call goes on with the next shard, so a small keyspace is scanned
 * in one call (cursor 0), as Redis does.  A cluster port and the global-lock
 * build scan one store and give its cursor as it is (run_handler).
 */
static void scan_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    (void)part;
    struct rread r;
    char t, kt;
    long long n, nkeys;
    const char *cur;
    size_t clen;
    rread_init(&r, reply, len);
    if (!rread_agg(&r, &t, &n) || t != '*' || n != 2 || !rread_bulk(&r, &cur, &clen) || !cur ||
        !rread_agg(&r, &kt, &nkeys) || kt != '*' || nkeys < 0) {
        slot_fail(s, reply, len);
        return;
    }
    s->cursor = strtoull(cur, NULL, 10); /* the digits end at the bulk's CR */
    s->count += nkeys;
    reply_raw(&s->gather, r.p, rread_left(&r));
}

/* ask shard s->step for the keys from `local` on (s may be gone when this returns) */
static void scan_send(struct conn *c, struct slot *s, unsigned long long local)
{
    char tmp[24];
    int clen = snprintf(tmp, sizeof(tmp), "%llu", local);
    struct resp_arg *argv = mem_alloc((size_t)s->argc * sizeof(*argv));
    memcpy(argv, s->argv, (size_t)s->argc * sizeof(*argv));
    argv[1] = (struct resp_arg){tmp, (size_t)clen};
    send_one(c, s, s->step, s->cmd, s->argc, argv);
    mem_release(argv);
}

static void scan_done(struct conn *c, struct slot *s)
{
    if (s->failed) {
        dispatch_slot_complete(c, s);
        return;
    }
    unsigned long long next;
    bool more_shards = s->step + 1 < shard_count();
    if (s->cursor != 0) {
        next = s->cursor * (unsigned long long)shard_count() + (unsigned long long)s->step;
    } else if (more_shards && s->count < s->sum) {
        s->step++;
        scan_send(c, s, 0);
        handoff_flush(c->home);
        return;
    } else {
        next = more_shards ? (unsigned long long)s->step + 1 : 0;
    }
    char buf[24];
    int blen = snprintf(buf, sizeof(buf), "%llu", next);
    reply_array(&s->reply, 2);
    reply_bulk(&s->reply, buf, (size_t)blen);
    reply_array(&s->reply, s->count);
    reply_raw(&s->reply, s->gather.buf, s->gather.len);
    dispatch_slot_complete(c, s);
}

static void scan_start(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv)
{
    uint64_t cursor;
    if (!cmd_scan_cursor_parse(&argv[1], &cursor)) {
        reply_error(dispatch_reply_target(c), "ERR invalid cursor");
        stats_cmd_outcome(&c->home->stats, cmd, "-ERR", 4, false, false, 0);
        return;
    }
    long long want = 10;
    for (int i = 2; i + 1 < argc; i += 2) {
        long long v;
        if (util_eq_nocase(argv[i].ptr, argv[i].len, "count") && util_str_to_ll(argv[i + 1].ptr, argv[i + 1].len, &v))
            want = v;
    }
    struct slot *s = dispatch_slot_create(c, cmd);
    slot_keep_argv(s, argc, argv);
    s->on_part = scan_part;
    s->on_done = scan_done;
    s->step = (int)(cursor % (uint64_t)shard_count());
    s->sum = want;
    scan_send(c, s, cursor / (uint64_t)shard_count());
}

/*
 * RANDOMKEY: every shard proposes one of its keys with its key count
 * (__randomkey: *0, or *2 [:keys, $key]); a proposal replaces the kept one
 * with probability keys / (keys of the proposals so far), so a shard's key
 * wins with probability keys / total and every key is equally likely, not
 * every shard (a key alone on its shard would win 1 / shards of the time)
 */
static void randomkey_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    static _Thread_local uint64_t rng;
    struct rread r;
    char t;
    long long n, keys;
    (void)c;
    (void)part;
    rread_init(&r, reply, len);
    if (rread_is_error(&r)) {
        slot_fail(s, reply, len);
        return;
    }
    if (!rread_agg(&r, &t, &n) || t != '*' || n != 2 || !rread_int(&r, &keys) || keys <= 0)
        return;
    const char *p = r.p;
    if (rng == 0)
        rng = ((uint64_t)util_mono_ns() ^ (uint64_t)(uintptr_t)&rng) | 1;
    s->count++;
    s->sum += keys;
    if (util_rand_below(&rng, (uint64_t)s->sum) < (uint64_t)keys) {
        reply_clear(&s->gather);
        reply_raw(&s->gather, p, len - (size_t)(p - reply));
    }
}

static void randomkey_done(struct conn *c, struct slot *s)
{
    if (!s->failed) {
        if (s->count)
            reply_raw(&s->reply, s->gather.buf, s->gather.len);
        else
            reply_null(&s->reply);
    }
    dispatch_slot_complete(c, s);
}

/*
 * Gathered commands (ROUTE_GATHER, or any command whose keys span shards
 * and that has no split of its own): copy every key from its owner
 * (__dump), rebuild the copies in a scratch store on this shard, run the
 * handler there, then write back to its owner every key whose value or TTL
 * the handler changed (__put, or __take when it is gone).  Values cross threads
 * only as serialized copies (ARCHITECTURE.md rule 1).  A barrier: the connection
 * parses nothing more until the write-backs are done, so its next command
 * sees them.  Atomic against other clients it is not; that is the
 * transactions work.  XREAD / XREADGROUP BLOCK that finds nothing on the
 * copies, its keys still locked, waits at each owner instead
 * (block_gathered_wait).
 */
static void gather_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    s->elem[part] = ((uint64_t)s->gather.len << 32) | len;
    reply_raw(&s->gather, reply, len);
}

static void part_ignore(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c, (void)s, (void)part, (void)reply, (void)len;
}

static void emit_to_reply(void *arg, const void *p, size_t n)
{
    reply_raw(arg, p, n);
}

struct store *dispatch_scratch_store(struct shard *self)
{
    if (!self->scratch_store) { /* every database: a command runs on copies in its own db */
        self->scratch_store = store_create(config_current()->databases);
        store_mark_copies(self->scratch_store, false);
    }
    return self->scratch_store;
}

static void gather_extra(struct conn *c, struct slot *s, const struct resp_arg *extra, size_t nextra);

#define SCRIPT_ROUNDS_MAX 64 /* runs of a script over every shard that name keys not gathered yet */

/*
 * A script's run on copies named keys that were not copied (`found`,
 * script.h's format): they are gathered and it runs again, under every
 * shard's keyspace lock (s->script_whole); or, run under its declared keys'
 * locks, its command is run again with every shard's keyspace locked, and
 * this slot, answering nothing and counted for nothing, releases its locks.
 */
static void gather_found(struct conn *c, struct slot *s, const struct reply *found, size_t nfound)
{
    if (s->script_whole && ++s->rounds > SCRIPT_ROUNDS_MAX) {
        reply_error(&s->reply, "ERR Script attempted to access too many keys that are not in KEYS and live on other "
                               "shards");
        dispatch_slot_complete(c, s);
        return;
    }
    /* its arguments, then the keys it named: gathered with its declared keys from the start */
    struct resp_arg *argv = mem_alloc(((size_t)s->argc + nfound) * sizeof(*argv));
    memcpy(argv, s->argv, (size_t)s->argc * sizeof(*argv));
    size_t off = 0;
    for (size_t i = 0; i < nfound; i++) {
        uint32_t len;
        memcpy(&len, found->buf + off, 4);
        argv[s->argc + i] = (struct resp_arg){found->buf + off + 4, len};
        off += 4 + len;
    }
    if (!s->script_whole) {
        txn_run_script_whole(c, s->cmd, s->argc, argv, (int)nfound); /* it waits for this slot (its connection's) */
        s->cmd = command_internal(CMD_I_LOCK);
        s->silent = true;
        mem_release(argv);
        dispatch_slot_complete(c, s);
        return;
    }
    gather_extra(c, s, argv + s->argc, nfound);
    mem_release(argv);
}

static void gather_done(struct conn *c, struct slot *s)
{
    struct shard *self = c->home;
    const struct config *cfg = config_current();
    if (s->step == 1) {
        dispatch_slot_complete(c, s);
        return;
    }
    /* the copies are made here, the results written back to their owners: this shard's budget decides */
    s->reply.resp = s->resp;
    if (!dispatch_memory_ok(self, cfg, s->cmd, s->argc, s->argv, &s->reply)) {
        dispatch_slot_complete(c, s);
        return;
    }
    struct store *st = dispatch_scratch_store(self);
    /* 1. the copies */
    for (uint32_t i = 0; i < s->nkeys; i++) {
        const struct resp_arg *key = &s->argv[s->key_pos[i]];
        uint64_t e = s->elem[i];
        struct key_state k;
        if (!parse_dump(s->gather.buf + (e >> 32), (size_t)(e & 0xffffffffu), &k)) {
            reply_raw(&s->reply, s->gather.buf + (e >> 32), (size_t)(e & 0xffffffffu)); /* an error */
            store_flush(st, -1);
            dispatch_slot_complete(c, s);
            return;
        }
        struct object *o = k.exists ? object_deserialize(k.blob, k.blob_len) : NULL;
        if (o) {
            store_set(st, s->db, key->ptr, key->len, o, 0);
            if (k.expire >= 0)
                store_set_expire(st, s->db, key->ptr, key->len, k.expire, self->now);
        }
    }
    /* 2. the command, on the copies; a script that may run again over every shard (alone in its transaction,
     * not in an EXEC's) notes the keys it names that were not copied (percore/script.h) */
    struct call run = {
        .cmd = s->cmd, .argv = s->argv, .argc = s->argc, .db = s->db, .resp = s->resp, .client = c->id,
        .conn = c, .store = st, .out = &s->reply,
        .flags = CALL_STATS | CALL_EVENTS | (s->may_block ? CALL_MAY_BLOCK : 0),
    };
    bool discover = (s->cmd->flags & CMD_MONITOR_FIRST) && (s->script_whole || s->txn);
    struct reply found;
    struct resp_arg *have = NULL;
    struct script_discovery d = {0};
    if (discover) {
        reply_init(&found);
        have = mem_alloc((s->nkeys + 1) * sizeof(*have));
        for (uint32_t i = 0; i < s->nkeys; i++)
            have[i] = s->argv[s->key_pos[i]];
        d = (struct script_discovery){.have = have, .nhave = s->nkeys, .db = s->db, .found = &found};
        script_discovery_set(&d);
    }
    store_mark_copies(st, s->every_key);
    enum call_result ran = call(self, &run);
    store_mark_copies(st, false);
    if (discover) {
        script_discovery_set(NULL);
        mem_release(have);
        if (d.nfound) { /* its reply and its copies go: it runs again (script.c dropped its effects) */
            store_flush(st, -1);
            reply_clear(&s->reply);
            gather_found(c, s, &found, d.nfound);
            reply_deinit(&found);
            return;
        }
        reply_deinit(&found);
    }
    if (ran == CALL_BLOCKED) { /* XREAD BLOCK found nothing (and changed nothing): it waits at each owner */
        store_flush(st, -1);
        block_gathered_wait(c, s);
        return;
    }
    /* 3. what changed goes back to its owner */
    struct reply now_blob, args_bytes;
    reply_init(&now_blob);
    reply_init(&args_bytes);
    uint32_t *changed = mem_alloc(s->nkeys * sizeof(uint32_t));
    uint32_t nchanged = 0;
    for (uint32_t i = 0; i < s->nkeys; i++) {
        const struct resp_arg *key = &s->argv[s->key_pos[i]];
        uint64_t e = s->elem[i];
        struct key_state before;
        parse_dump(s->gather.buf + (e >> 32), (size_t)(e & 0xffffffffu), &before);
        struct object *o = store_lookup(st, s->db, key->ptr, key->len, self->now);
        reply_clear(&now_blob);
        if (o)
            object_serialize(o, emit_to_reply, &now_blob);
        long long expire = o ? store_get_expire(st, s->db, key->ptr, key->len, self->now) : -1;
        if (expire < 0)
            expire = -1;
        bool same = o ? before.exists && before.expire == expire && before.blob_len == now_blob.len &&
                            memcmp(before.blob, now_blob.buf, now_blob.len) == 0
                      : !before.exists;
        if (!same)
            changed[nchanged++] = i;
    }
    s->step = 1;
    s->on_part = part_ignore;
    s->parts_left = (int)nchanged;
    int home = self->index;
    /* remote owners first, ours last, so nothing completes the slot early */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t j = 0; j < nchanged; j++) {
            const struct resp_arg *key = &s->argv[s->key_pos[changed[j]]];
            int owner = dispatch_key_shard(cfg, key);
            if ((pass == 0) == (owner == home))
                continue;
            struct object *o = store_lookup(st, s->db, key->ptr, key->len, self->now);
            if (!o) {
                /* gone: taken from its owner (no event there: the command's own came from the copies) */
                struct resp_arg take[2] = {command_name_arg(command_internal(CMD_I_TAKE)), *key};
                dispatch_send_part(c, s, owner, (int)changed[j], command_internal(CMD_I_TAKE), 2, take);
                continue;
            }
            reply_clear(&now_blob);
            object_serialize(o, emit_to_reply, &now_blob);
            long long expire = store_get_expire(st, s->db, key->ptr, key->len, self->now);
            char exp[24];
            int elen = snprintf(exp, sizeof(exp), "%lld", expire < 0 ? -1 : expire);
            struct resp_arg put[6] = {command_name_arg(command_internal(CMD_I_PUT)), *key, {now_blob.buf, now_blob.len}, {exp, (size_t)elen},
                                      {"0", 1}, {"-1", 2}}; /* the owner's counter stays */
            dispatch_send_part(c, s, owner, (int)changed[j], command_internal(CMD_I_PUT), 6, put);
        }
    }
    mem_release(changed);
    reply_deinit(&now_blob);
    reply_deinit(&args_bytes);
    store_flush(st, -1);
    if (nchanged == 0)
        dispatch_slot_complete(c, s);
    else
        handoff_flush(self);
}

static void run_gather(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                       const int *pos, int npos, slot_done_fn *done, bool script_whole, int nextra)
{
    const struct config *cfg = config_current();
    struct slot *s = dispatch_slot_create(c, cmd);
    slot_keep_argv(s, argc + nextra, argv);
    s->argc = argc; /* keys after its arguments are gathered, not given to its handler */
    s->barrier = true;
    s->script_whole = script_whole;
    /* XREAD / XREADGROUP BLOCK that finds nothing waits (block.c), but not inside EXEC, which feeds its
     * commands from exec_input */
    s->may_block = (cmd->flags & CMD_BLOCKING) && c->exec_input == NULL;
    s->key_pos = mem_alloc((size_t)npos * sizeof(int));
    for (int i = 0; i < npos; i++) { /* each distinct key once */
        bool seen = false;
        for (uint32_t j = 0; j < s->nkeys && !seen; j++) {
            const struct resp_arg *a = &argv[pos[i]], *b = &argv[s->key_pos[j]];
            seen = a->len == b->len && memcmp(a->ptr, b->ptr, a->len) == 0;
        }
        if (!seen)
            s->key_pos[s->nkeys++] = pos[i];
    }
    s->elem = mem_calloc(s->nkeys, sizeof(uint64_t));
    s->on_part = gather_part;
    s->on_done = done;
    s->parts_left = (int)s->nkeys;
    int home = c->home->index;
    uint32_t nkeys = s->nkeys; /* `done` may gather more keys before the last of these is sent */
    if (nkeys == 0) { /* a script over every shard that declared no key: it runs now, and names them */
        done(c, s);
        return;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < nkeys; i++) {
            const struct resp_arg *key = &s->argv[s->key_pos[i]];
            int owner = dispatch_key_shard(cfg, key);
            if ((pass == 0) == (owner == home))
                continue;
            struct resp_arg dump[2] = {command_name_arg(command_internal(CMD_I_DUMP)), *key};
            dispatch_send_part(c, s, owner, (int)i, command_internal(CMD_I_DUMP), 2, dump);
        }
    }
    handoff_flush(c->home);
}

/*
 * A command whose pattern keys may be on other shards (CMD_PATTERN_KEYS:
 * SORT BY/GET), run with every shard's keyspace locked (txn_run_command, or
 * EXEC, which locks it whole for such a command):
 * its declared keys are gathered as any gathered command's, then the keys
 * its patterns form for the sorted value's copy (cmd_sort_pattern_keys, each
 * once) are gathered too, and gather_done runs it on copies of every key it
 * reads (s->every_key).  Nothing can change in between: the sorted value
 * the keys were formed from is the one the handler reads.
 */
struct key_list {
    struct reply bytes;      /* the keys, one after the other */
    size_t *off;             /* key i: bytes.buf + off[i], len[i] bytes */
    size_t *len;
    size_t n, cap;
};

static void key_list_add(void *arg, const char *key, size_t len)
{
    struct key_list *l = arg;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->off = mem_realloc(l->off, l->cap * sizeof(*l->off));
        l->len = mem_realloc(l->len, l->cap * sizeof(*l->len));
    }
    l->off[l->n] = l->bytes.len;
    l->len[l->n++] = len;
    reply_raw(&l->bytes, key, len);
}

static _Thread_local const struct key_list *key_list_sorting; /* qsort's context */

static int key_list_cmp(const void *a, const void *b)
{
    const struct key_list *l = key_list_sorting;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    size_t n = l->len[i] < l->len[j] ? l->len[i] : l->len[j];
    int c = memcmp(l->bytes.buf + l->off[i], l->bytes.buf + l->off[j], n);
    return c ? c : (l->len[i] > l->len[j]) - (l->len[i] < l->len[j]);
}

static void pattern_gather_keys(struct conn *c, struct slot *s)
{
    struct key_state k;
    uint64_t e = s->elem[0]; /* argv[1], the sorted key */
    s->every_key = true;
    s->on_done = gather_done; /* from here on, a gathered command's */
    if (!parse_dump(s->gather.buf + (e >> 32), (size_t)(e & 0xffffffffu), &k) || !k.exists) {
        gather_done(c, s); /* an error (replied there), or nothing to sort: no pattern key is read */
        return;
    }
    struct key_list l = {0};
    reply_init(&l.bytes);
    reply_raw(&l.bytes, "", 1); /* l.bytes.buf is never NULL, even when every key is empty */
    reply_clear(&l.bytes);
    struct object *sorted = object_deserialize(k.blob, k.blob_len);
    if (sorted)
        cmd_sort_pattern_keys(s->argc, s->argv, sorted, key_list_add, &l);
    object_destroy(&sorted);
    /* each key once, and none of the declared ones again */
    size_t *order = mem_alloc((l.n ? l.n : 1) * sizeof(size_t));
    for (size_t i = 0; i < l.n; i++)
        order[i] = i;
    key_list_sorting = &l;
    qsort(order, l.n, sizeof(size_t), key_list_cmp);
    size_t nextra = 0;
    for (size_t i = 0; i < l.n; i++) {
        const char *kp = l.bytes.buf + l.off[order[i]];
        size_t kl = l.len[order[i]];
        bool seen = nextra > 0 && key_list_cmp(&order[nextra - 1], &order[i]) == 0;
        for (uint32_t j = 0; j < s->nkeys && !seen; j++) {
            const struct resp_arg *d = &s->argv[s->key_pos[j]];
            seen = d->len == kl && memcmp(d->ptr, kp, kl) == 0;
        }
        if (!seen)
            order[nextra++] = order[i];
    }
    struct resp_arg *extra = mem_alloc((nextra ? nextra : 1) * sizeof(*extra));
    for (size_t i = 0; i < nextra; i++)
        extra[i] = (struct resp_arg){l.bytes.buf + l.off[order[i]], l.len[order[i]]};
    mem_release(order);
    mem_release(l.off);
    mem_release(l.len);
    if (nextra == 0) {
        mem_release(extra);
        reply_deinit(&l.bytes);
        gather_done(c, s);
        return;
    }
    gather_extra(c, s, extra, nextra);
    mem_release(extra);
    reply_deinit(&l.bytes);
}

/* more keys (none of s's yet) gathered for s: its command's argv gets them after its last argument (the handler
 * sees argc: not them), then their dumps are sent; s->on_done runs once they are in */
static void gather_extra(struct conn *c, struct slot *s, const struct resp_arg *extra, size_t nextra)
{
    const struct config *cfg = config_current();
    struct resp_arg *argv = mem_alloc(((size_t)s->argc + s->nkeys + nextra) * sizeof(*argv));
    memcpy(argv, s->argv, (size_t)s->argc * sizeof(*argv));
    /* keys gathered before (after argc too) keep their places */
    uint32_t declared = s->nkeys;
    int extra_at = s->argc;
    for (uint32_t i = 0; i < declared; i++)
        if (s->key_pos[i] >= extra_at)
            extra_at = s->key_pos[i] + 1;
    for (int i = s->argc; i < extra_at; i++)
        argv[i] = s->argv[i];
    for (size_t i = 0; i < nextra; i++)
        argv[extra_at + (int)i] = extra[i];
    struct resp_arg *copy;
    char *bytes;
    dispatch_argv_copy(extra_at + (int)nextra, argv, &copy, &bytes);
    mem_release(argv);
    mem_release(s->argv);
    mem_release(s->argv_bytes);
    s->argv = copy;
    s->argv_bytes = bytes;
    s->key_pos = mem_realloc(s->key_pos, (declared + nextra + 1) * sizeof(int));
    s->elem = mem_realloc(s->elem, (declared + nextra + 1) * sizeof(uint64_t));
    for (size_t i = 0; i < nextra; i++) {
        s->key_pos[declared + i] = extra_at + (int)i;
        s->elem[declared + i] = 0;
    }
    s->nkeys = declared + (uint32_t)nextra;
    s->parts_left = (int)nextra;
    /* remote owners first, ours last, so nothing completes the slot early; the last of ours may complete
     * and free it: the order is taken first, and nothing of s is read after that send */
    struct shard *self = c->home;
    uint32_t *by_owner = mem_alloc(nextra * sizeof(uint32_t));
    size_t nremote = 0, nsend = 0;
    for (uint32_t i = declared; i < s->nkeys; i++)
        if (dispatch_key_shard(cfg, &s->argv[s->key_pos[i]]) != self->index)
            by_owner[nremote++] = i;
    nsend = nremote;
    for (uint32_t i = declared; i < s->nkeys; i++)
        if (dispatch_key_shard(cfg, &s->argv[s->key_pos[i]]) == self->index)
            by_owner[nsend++] = i;
    for (size_t j = 0; j < nsend; j++) {
        uint32_t i = by_owner[j];
        const struct resp_arg *key = &s->argv[s->key_pos[i]];
        struct resp_arg dump[2] = {command_name_arg(command_internal(CMD_I_DUMP)), *key};
        dispatch_send_part(c, s, dispatch_key_shard(cfg, key), (int)i, command_internal(CMD_I_DUMP), 2, dump);
    }
    mem_release(by_owner);
    handoff_flush(self);
}

bool dispatch_forms_pattern_keys(const struct command *cmd, int argc, const struct resp_arg *argv)
{
    if (!(cmd->flags & CMD_PATTERN_KEYS))
        return false;
    int *slots = mem_alloc((size_t)argc * sizeof(int));
    bool forms = cmd_sort_pattern_slots(argc, argv, slots) > 0;
    mem_release(slots);
    return forms;
}

static void run_pattern_gather(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv)
{
    int *pos = mem_alloc((size_t)argc * sizeof(int));
    int n = command_key_positions(cmd, argc, argv, pos);
    run_gather(c, cmd, argc, argv, pos, n, pattern_gather_keys, false, 0);
    mem_release(pos);
}

/* ---------------------------------------------------------------- the entry point */

static void reply_unknown_command(struct reply *out, int argc, const struct resp_arg *argv)
{
    char args[256];
    size_t len = 0;
    args[0] = '\0';
    for (int j = 1; j < argc && len < 128; j++) {
        int room = 128 - (int)len;
        int n = snprintf(args + len, sizeof(args) - len, "'%.*s' ",
                         (int)(argv[j].len < (size_t)room ? argv[j].len : (size_t)room), argv[j].ptr);
        if (n < 0)
            break;
        len += (size_t)n;
        if (len >= sizeof(args))
            len = sizeof(args) - 1;
    }
    reply_errorf(out, "ERR unknown command '%.*s', with args beginning with: %s",
                 (int)(argv[0].len < 128 ? argv[0].len : 128), argv[0].ptr, args);
}

/* keys of a command: first, last (resolved), step; false when it names none */
static bool key_range(const struct command *cmd, int argc, int *first, int *last)
{
    if (cmd->first_key <= 0 || cmd->first_key >= argc)
        return false;
    *first = cmd->first_key;
    *last = cmd->last_key < 0 ? argc + cmd->last_key : cmd->last_key;
    if (*last >= argc)
        *last = argc - 1;
    return *last >= *first;
}

/* the one shard all keys live on, -1 when they span several, -2 when there are none */
static inline __attribute__((always_inline)) int keys_owner(const struct config *cfg, const struct command *cmd, int argc,
                                                         const struct resp_arg *argv)
{
    int first, last;
    if (cmd->flags & (CMD_NUMKEYS | CMD_KEYS_STREAMS | CMD_STORE_KEY | CMD_SORT_STORE_KEY | CMD_PATTERN_KEYS)) {
        int *pos = mem_alloc((size_t)argc * sizeof(int));
        int n = command_key_positions(cmd, argc, argv, pos);
        int owner = n > 0 ? dispatch_key_shard(cfg, &argv[pos[0]]) : -2;
        for (int i = 1; i < n && owner >= 0; i++)
            if (dispatch_key_shard(cfg, &argv[pos[i]]) != owner)
                owner = -1;
        /* keys its patterns form: on its shard only when each pattern's {tag} says so, else anywhere */
        n = owner >= 0 && (cmd->flags & CMD_PATTERN_KEYS) ? cmd_sort_pattern_slots(argc, argv, pos) : 0;
        for (int i = 0; i < n && owner >= 0; i++)
            if (pos[i] < 0 || cfg->slot_shard[pos[i]] != owner)
                owner = -1;
        mem_release(pos);
        return owner;
    }
    if (!key_range(cmd, argc, &first, &last))
        return -2;
    int owner = dispatch_key_shard(cfg, &argv[first]);
    for (int i = first + cmd->key_step; i <= last; i += cmd->key_step)
        if (dispatch_key_shard(cfg, &argv[i]) != owner)
            return -1;
    return owner;
}

/*
 * The commands that do not run inline count their call on the home shard,
 * once, when their reply is complete (slot_complete); each shard that runs
 * a part of one adds its time (stats.h).
 */
static void part_script(struct conn *c, struct slot *s, int part, const char *reply, size_t len);

static void run_remote(struct conn *c, const struct command *cmd, int owner, int argc, const struct resp_arg *argv)
{
    struct slot *s = dispatch_slot_create(c, cmd);
    s->on_part = __builtin_expect((cmd->flags & CMD_MONITOR_FIRST) != 0, 0) ? part_script : part_whole; /* EVAL */
    s->on_done = done_copy;
    send_one(c, s, owner, cmd, argc, argv);
}

static struct slot *run_split(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                              struct txn *keep)
{
    struct slot *s = dispatch_slot_create(c, cmd);
    if (config_current()->slowlog_log_slower_than >= 0) /* its parts have only theirs (slot_note_time) */
        slot_keep_argv(s, argc, argv);
    switch (cmd->route) {
    case ROUTE_SPLIT_SUM: s->on_part = part_sum; s->on_done = done_sum; break;
    case ROUTE_SPLIT_OK: s->on_part = part_ok; s->on_done = done_ok; break;
    case ROUTE_FANOUT_OK: /* FLUSHALL FLUSHDB SWAPDB: the same part for every shard */
        s->on_part = part_ok;
        s->on_done = (cmd->flags & CMD_REPLIES_AFTER_SAVE) ? done_after_save : done_ok;
        for (int i = 0; i < shard_count(); i++)
            txn_keep_part(keep, i, argc, argv);
        return s;
    default:
        s->on_part = part_mget;
        s->on_done = done_mget;
        s->elem = mem_calloc((size_t)(argc - 1), sizeof(uint64_t));
        break;
    }
    send_split(c, s, cmd, argc, argv, cmd->first_key, cmd->key_step, keep);
    return s;
}

struct slot *dispatch_split_kept(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                                 struct txn *t)
{
    return run_split(c, cmd, argc, argv, t);
}

static void run_fanout(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv)
{
    struct slot *s = dispatch_slot_create(c, cmd);
    switch (cmd->route) {
    case ROUTE_FANOUT_SUM: s->on_part = part_sum; s->on_done = done_sum; break;
    case ROUTE_FANOUT_OK: s->on_part = part_ok; s->on_done = done_ok; break;
    default: s->on_part = part_concat; s->on_done = done_concat; break; /* ROUTE_FANOUT_CONCAT */
    }
    send_all(c, s, cmd, argc, argv);
}

/* conn_fanout: every part kept whole (gather_part), then the command's own merge */
static void fanout_done(struct conn *c, struct slot *s)
{
    int n = shard_count();
    const char **parts = mem_alloc((size_t)n * sizeof(*parts));
    size_t *lens = mem_alloc((size_t)n * sizeof(*lens));
    for (int i = 0; i < n; i++) {
        parts[i] = s->gather.buf + (s->elem[i] >> 32);
        lens[i] = (size_t)(s->elem[i] & 0xffffffffu);
    }
    s->merge(&s->reply, s->argc, s->argv, n, parts, lens);
    mem_release(parts);
    mem_release(lens);
    dispatch_slot_complete(c, s);
}

void conn_fanout_locked(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv)
{
    if (shard_store_count() == 1) { /* its one part, here: an internal step, counted in no commandstats (the
                                     * command that sent it is) */
        struct call run = {
            .cmd = cmd, .argv = argv, .argc = argc, .db = c->db, .resp = c->resp, .client = c->id, .conn = c,
            .out = dispatch_reply_target(c), .flags = CALL_CHECK_MEMORY | CALL_EFFECTS, .txid = c->txid,
        };
        call(c->home, &run);
    } else if (c->txid) /* inside EXEC, which holds every lock (CMD_WHOLE_IN_EXEC) */
        run_fanout(c, cmd, argc, argv);
    else
        txn_run_split(c, cmd, argc, argv);
}

void conn_fanout(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                 conn_merge_fn *merge)
{
    struct slot *s = dispatch_slot_create(c, cmd);
    slot_keep_argv(s, argc, argv);
    s->elem = mem_calloc((size_t)shard_count(), sizeof(uint64_t));
    s->on_part = gather_part;
    s->on_done = fanout_done;
    s->merge = merge;
    send_all(c, s, cmd, s->argc, s->argv);
}

static void run_special(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                        int owner)
{
    if (cmd->route == ROUTE_SCAN) {
        scan_start(c, cmd, argc, argv);
    } else if (cmd->route == ROUTE_RANDOMKEY) {
        struct slot *s = dispatch_slot_create(c, cmd);
        struct resp_arg part = command_name_arg(command_internal(CMD_I_RANDOMKEY));
        s->on_part = randomkey_part;
        s->on_done = randomkey_done;
        send_all(c, s, command_internal(CMD_I_RANDOMKEY), 1, &part);
    } else if (owner >= 0 || (cmd->route == ROUTE_MSETNX && (argc - 1) % 2 != 0)) {
        if (owner == c->home->index || owner < 0)
            run_handler(c, cmd, argc, argv, dispatch_reply_target(c), false);
        else
            run_remote(c, cmd, owner, argc, argv);
    } else {
        struct slot *s = dispatch_slot_create(c, cmd);
        slot_keep_argv(s, argc, argv);
        s->barrier = true;
        if (cmd->route == ROUTE_MSETNX) {
            msetnx_start(c, s);
        } else if (cmd->route == ROUTE_COPY) {
            s->on_part = copy_part;
            s->on_done = copy_done;
            s->step = 0;
            copy_step(c, s);
        } else {
            s->on_part = rename_part;
            s->on_done = rename_done;
            s->step = 0;
            rename_step(c, s);
        }
    }
}

/*
 * A command refused before it runs (arity, NOAUTH, subscriber context), as
 * Redis's rejectCommand: the error, and a MULTI in progress fails at EXEC;
 * a refused EXEC itself answers EXECABORT with the reason and discards the
 * transaction and the watches, with or without a MULTI.  Counted as Redis
 * counts it: a rejected call of the (sub)command named, and the error sent
 * (EXEC's: EXECABORT).
 */
static void dispatch_reject(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                            const char *err)
{
    struct reply *out = dispatch_reply_target(c);
    size_t before = out->len;
    if (cmd->flags & CMD_RUNS_QUEUE) {
        multi_exec_refused(c, cmd, argc, argv, out, strncmp(err, "ERR ", 4) == 0 ? err + 4 : err);
    } else {
        reply_error(out, err);
        txn_queue_failed(c);
    }
    const struct command *run = command_resolve_subcommand(cmd, argc, argv); /* NULL: no such subcommand */
    stats_cmd_rejected(&c->home->stats, run ? run : cmd, call_reply_since(out, before), out->len - before);
}

/*
 * Inside MULTI past maxmemory, Redis 7.0's processCommand refuses with -OOM
 * every command but those that end the transaction or the connection
 * (queuing would only grow its memory), and EXEC too when a deny-oom
 * command is queued: the transaction fails at EXEC (EXECABORT), or EXEC
 * itself discards it saying why.  A command Redis's lookup refuses (an
 * unknown subcommand), and one never allowed inside MULTI, keep their errors.  The home shard's budget decides,
 * as for a script's commands.  True: refused.
 */
static bool multi_refuses_oom(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                              const struct config *cfg)
{
    if ((cmd->flags & CMD_ENDS_TXN) && !((cmd->flags & CMD_RUNS_QUEUE) && txn_queued_denyoom(c)))
        return false;
    if (cmd->flags & CMD_NO_MULTI) /* Redis refuses it inside MULTI first (txn_queue) */
        return false;
    const struct command *run = command_resolve_subcommand(cmd, argc, argv); /* counted as Redis names it */
    if (!run || !memory_full(c->home, cfg))
        return false;
    dispatch_reject(c, cmd, argc, argv, oom_error); /* counted there, as its subcommand, by its reply */
    return true;
}

/* a replica's client (not its master): a write while replica-read-only, or anything but the stale-ok
 * commands while the master's link is down and replica-serve-stale-data is no, is refused with Redis's
 * error (processCommand's order: READONLY first); true: refused */
static bool replica_refuses(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                            const struct config *cfg)
{
    const char *err = NULL;
    const struct command *run = command_resolve_subcommand(cmd, argc, argv); /* FUNCTION DELETE writes */
    uint64_t flags = (run ? run : cmd)->flags;
    if (cfg->replica_read_only && ((flags & CMD_WRITE) || ((flags & CMD_RUNS_QUEUE) && txn_queued_writes(c)))) {
        err = replica_readonly_error + 1;
    } else if (!cfg->replica_serve_stale_data && !replica_link_up()) {
        if (!(flags & CMD_STALE)) { /* CONFIG GET is stale-ok, CONFIG itself not */
            err = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
        }
    }
    if (!err)
        return false;
    dispatch_reject(c, cmd, argc, argv, err);
    return true;
}

/* a script is busy on this shard (the global-lock build: on any thread), so this runs from its hook
 * (shard_serve_busy): Redis's processCommand answers -BUSY, but an allow-busy command runs here by its
 * handler alone -- not through call(): the shard's effects record and the store's lock are the script's
 * (the steps on this shard of WATCH and the unwatching commands go through call() without effects,
 * dispatch_send_part) */
static void dispatch_while_busy(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv)
{
    struct shard *self = c->home;
    if (!(cmd->flags & CMD_ALLOW_BUSY) ||
        (SHARD_STORE_SHARED && !self->busy_script && (cmd->flags & CMD_BUSY_WATCHES))) {
        dispatch_reject(c, cmd, argc, argv, script_busy_error(self->index));
        return;
    }
    struct cmd_ctx ctx = {
        .out = dispatch_reply_target(c), .argv = argv, .argc = argc, .db = c->db, .now = self->now,
        .config = config_current(), .stats = &self->cstats, .conn = c, .shard = self->index, .client = c->id,
    };
    size_t before = ctx.out->len;
    uint64_t t0 = stats_clock_ns();
    cmd->proc(&ctx);
    /* counted as Redis's call() counts what runs while busy (a container: its subcommand, or rejected) */
    stats_cmd_done(&self->stats, cmd, 1, t0, call_reply_since(ctx.out, before), ctx.out->len - before,
                   ctx.config->latency_tracking);
}

/* a blocking command: it waits at its keys' owner when they have no data (block.c) */
static bool dispatch_blocking(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                              const struct config *cfg, bool feed)
{
    if (c->cluster_port) {
        struct reply *out = dispatch_reply_target(c);
        size_t before = out->len;
        if (cluster_refuse(c, cfg, cmd, argc, argv, out)) {
            stats_cmd_rejected(&c->home->stats, cmd, call_reply_since(out, before), out->len - before);
            return true;
        }
    }
    if (feed)
        monitor_feed(c, cmd, argc, argv);
    block_run(c, cmd, argc, argv, keys_owner(cfg, cmd, argc, argv));
    return true;
}

bool dispatch_command(struct conn *c, int argc, const struct resp_arg *argv)
{
    struct shard *self = c->home;
    const struct config *cfg = config_current();
    uint8_t reply_was = c->reply;
    if (__builtin_expect(reply_was != 0, 0) && !c->exec_input) /* CLIENT REPLY OFF|SKIP (EXEC's own for its queue) */
        conn_reply_step(c);
    STATS_ADD(&self->stats, total_commands_processed, 1);
    const struct command *cmd = command_lookup(argv[0].ptr, argv[0].len);
    if (__builtin_expect(c->track.flags != 0, 0)) /* CLIENT TRACKING: CACHING's step, and does cmd track? */
        tracking_step(c, cmd);
    c->last_cmd = cmd;
    if (!cmd) {
        reply_unknown_command(dispatch_reply_target(c), argc, argv);
        stats_cmd_rejected(&self->stats, NULL, "-ERR", 4);
        txn_queue_failed(c);
        return true;
    }
    char err[256];
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        snprintf(err, sizeof err, "ERR wrong number of arguments for '%s' command", cmd->name);
        dispatch_reject(c, cmd, argc, argv, err);
        return true;
    }
    if (cfg->requirepass && cfg->requirepass[0] && !c->authenticated && !(cmd->flags & CMD_NO_AUTH)) {
        dispatch_reject(c, cmd, argc, argv, "NOAUTH Authentication required.");
        return true;
    }
    bool rdb_denies = save_denies_writes(cfg);
    if ((rdb_denies || aof_denies_writes()) && /* Redis's processCommand: a write, an EXEC of writes, PING */
        ((cmd->flags & (CMD_WRITE | CMD_DENIED_ON_DISK_ERROR)) ||
         ((cmd->flags & CMD_RUNS_QUEUE) && txn_queued_writes(c)))) {
        if (!rdb_denies)
            snprintf(err, sizeof err, "MISCONF Errors writing to the AOF file: %s", strerror(aof_last_write_errno()));
        dispatch_reject(c, cmd, argc, argv, rdb_denies ? misconf_error : err);
        return true;
    }
    if (__builtin_expect(replica_now(), 0) && !c->repl_master && !c->loads_aof && replica_refuses(c, cmd, argc, argv, cfg))
        return true;
    if (__builtin_expect(cfg->min_replicas_to_write > 0, 0) && !c->loads_aof &&
        ((cmd->flags & CMD_WRITE) || ((cmd->flags & CMD_RUNS_QUEUE) && txn_queued_writes(c))) &&
        primary_too_few_replicas(cfg->min_replicas_to_write, cfg->min_replicas_max_lag)) {
        dispatch_reject(c, cmd, argc, argv, "NOREPLICAS Not enough good replicas to write.");
        return true;
    }
    const char *refused = c->pubsub && !c->exec_input ? pubsub_refused_command(c, cmd, argc, argv) : NULL;
    if (refused) {
        snprintf(err, sizeof err,
                 "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
                 "allowed in this context",
                 refused);
        dispatch_reject(c, cmd, argc, argv, err);
        return true;
    }
    if (__builtin_expect(c->monitor, 0) && (cmd->flags & (CMD_WRITE | CMD_READONLY | CMD_MAY_REPLICATE))) {
        /* Redis's monitors are replicas, which may not touch the keyspace */
        dispatch_reject(c, cmd, argc, argv, "ERR Replica can't interact with the keyspace");
        return true;
    }
    if (shard_loading(self) && !c->exec_input && !c->loads_aof && load_refuses(cmd, argc, argv)) {
        dispatch_reject(c, cmd, argc, argv, "LOADING Redis is loading the dataset in memory");
        return true;
    }
    if (__builtin_expect(self->busy_script || (SHARD_STORE_SHARED && atomic_load_explicit(&script_busy_shards,
                                                                               memory_order_relaxed)), 0)) {
        dispatch_while_busy(c, cmd, argc, argv);
        return true;
    }
    if (__builtin_expect(self->pause != 0, 0) && !c->exec_input && conn_wait_if_paused(c, cmd)) { /* CLIENT PAUSE */
        STATS_ADD(&self->stats, total_commands_processed, (uint64_t)-1); /* counted when it runs */
        c->reply = reply_was; /* parsed again then: its step is still to come */
        return false;
    }
    if (txn_in_multi(c)) {
        const char *protected_err = (cmd->flags & CMD_PROTECTED) ? conn_protected_refusal(c, cfg) : NULL;
        if (protected_err) { /* Redis refuses DEBUG before queuing it: EXEC aborts */
            dispatch_reject(c, cmd, argc, argv, protected_err);
            return true;
        }
        if (cfg->maxmemory > 0 && multi_refuses_oom(c, cmd, argc, argv, cfg))
            return true;
        if (!(cmd->flags & CMD_NO_QUEUE)) { /* it runs at EXEC, and is counted then */
            if (!command_subcommand_ok_or_reply(cmd, argc, argv, dispatch_reply_target(c))) {
                txn_queue_failed(c); /* Redis refuses an unknown subcommand when it is queued */
                stats_cmd_rejected(&self->stats, cmd, "-ERR", 4);
                return true;
            }
            STATS_ADD(&self->stats, total_commands_processed, (uint64_t)-1);
            if (!txn_queue(c, cmd, argc, argv, dispatch_reply_target(c)))
                stats_cmd_rejected(&self->stats, cmd, "-ERR", 4);
            return true;
        }
    }
    if (keylock_count(self->locks) && txn_keys_locked(self, cmd, argc, argv, c->db, c->txid)) { /* a multi-shard command holds one of its keys */
        STATS_ADD(&self->stats, total_commands_processed, (uint64_t)-1); /* counted when it runs */
        c->reply = reply_was;
        conn_wait_for_lock(c);
        return false;
    }
    /* MONITOR sees a command run here once it ran (run_inline); one sent to other shards as it leaves
     * (so a part another shard's maxmemory refuses is seen too); EXEC once its commands ran (txn.c) */
    bool feed = __builtin_expect(monitor_any(), 0) && !(cmd->flags & CMD_FEEDS_MONITOR) &&
                command_monitored(cmd, argc, argv);
    if (__builtin_expect(cmd->flags & (CMD_BLOCKING | CMD_SUBCOMMANDS), 0)) { /* one test for both */
        if (cmd->flags & CMD_BLOCKING)
            return dispatch_blocking(c, cmd, argc, argv, cfg, feed);
        /* the subcommand, as Redis's lookupCommand finds it: refused here when unknown or of the wrong arity
         * (counted for it, or for none); else counted as "object|encoding" -- where it has keys it runs as
         * its own table entry (same handler, keys and route), else its home's call is counted for it */
        struct reply *out = dispatch_reply_target(c);
        size_t before = out->len;
        const struct subcommand *found;
        if (!command_subcommand_or_reply(cmd->name, argc, argv, out, &found)) {
            stats_cmd_rejected(&self->stats, found ? &found->cmd : NULL, call_reply_since(out, before),
                               out->len - before);
            return true;
        }
        if (cmd->route == ROUTE_HOME)
            stats_subcommand_of(cmd, &found->cmd);
        else
            cmd = &found->cmd;
    }
    if (c->cluster_port) { /* a cluster node: redirected, or run here on this shard's keys */
        struct reply *out = dispatch_reply_target(c);
        size_t before = out->len;
        if (cluster_refuse(c, cfg, cmd, argc, argv, out)) {
            stats_cmd_rejected(&self->stats, cmd, call_reply_since(out, before), out->len - before);
        } else {
            self->cluster_call = true;
            run_inline(c, cmd, argc, argv, out, cmd->route == ROUTE_HOME, feed);
            self->cluster_call = false;
        }
        return true;
    }
    if (cmd->route == ROUTE_HOME || shard_store_count() == 1 || (c->txid && (cmd->flags & CMD_HOME_IN_EXEC))) {
        if (__builtin_expect((cmd->flags & CMD_AFTER_PENDING) != 0, 0) && c->slot_head && !c->exec_input &&
            !c->txid && wait_for_pending(c)) {
            STATS_ADD(&self->stats, total_commands_processed, (uint64_t)-1); /* counted when it runs */
            c->reply = reply_was; /* parsed again then */
            return false;
        }
        run_inline(c, cmd, argc, argv, dispatch_reply_target(c),
                   cmd->route == ROUTE_HOME || (c->txid && (cmd->flags & CMD_HOME_IN_EXEC)), feed);
        return true;
    }
    switch (cmd->route) {
    case ROUTE_FANOUT_OK: /* a keyspace-wide write: every shard's keyspace locked in turn, atomic (txn.c) */
        if (feed)
            monitor_feed(c, cmd, argc, argv);
        if (c->txid)
            run_fanout(c, cmd, argc, argv); /* inside EXEC, which holds every lock */
        else
            txn_run_split(c, cmd, argc, argv);
        return true;
    case ROUTE_FANOUT_SUM:
    case ROUTE_FANOUT_CONCAT:
        if (feed)
            monitor_feed(c, cmd, argc, argv);
        run_fanout(c, cmd, argc, argv);
        return true;
    default:
        break;
    }
    int owner = keys_owner(cfg, cmd, argc, argv);
    bool here = owner == self->index || owner == -2;
    bool multi_step = owner == -1 && (cmd->route == ROUTE_RENAME || cmd->route == ROUTE_RENAMENX || cmd->route == ROUTE_COPY ||
                                      (cmd->route == ROUTE_MSETNX && (argc - 1) % 2 == 0));
    bool split_ok = cmd->route == ROUTE_OWNER || cmd->route == ROUTE_GATHER ||
                    (cmd->key_step > 0 && (argc - cmd->first_key) % cmd->key_step == 0);
    bool stepped = cmd_route_stepped(cmd->route);
    if (here && !stepped) {
        run_inline(c, cmd, argc, argv, dispatch_reply_target(c), false, feed);
        return true;
    }
    if (feed)
        monitor_feed(c, cmd, argc, argv);
    if (owner == -1 && (multi_step || (!stepped && split_ok)) && c->txid)
        dispatch_run_multi_shard(c, cmd, argc, argv); /* inside EXEC: its keys are held already */
    else if (owner == -1 && split_ok &&
             (cmd->route == ROUTE_SPLIT_SUM || cmd->route == ROUTE_SPLIT_MGET || cmd->route == ROUTE_SPLIT_OK))
        txn_run_split(c, cmd, argc, argv); /* each shard's part runs as it is locked */
    else if (owner == -1 && (multi_step || (!stepped && split_ok)))
        txn_run_command(c, cmd, argc, argv);
    else if (stepped)
        run_special(c, cmd, argc, argv, owner);
    else if (owner >= 0)
        run_remote(c, cmd, owner, argc, argv);
    else
        run_handler(c, cmd, argc, argv, dispatch_reply_target(c), false); /* the handler's arity error */
    return true;
}

/* keys on several shards, every lock held (txn_run) */
void dispatch_run_multi_shard(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv)
{
    if ((cmd->flags & CMD_BLOCKING) && !(cmd->flags & CMD_KEYS_STREAMS)) { /* XREAD: gathered (block.c) */
        block_run_multi(c, cmd, argc, argv);
    } else if (cmd_route_stepped(cmd->route)) {
        run_special(c, cmd, argc, argv, -1);
    } else if (dispatch_forms_pattern_keys(cmd, argc, argv)) { /* every shard's keyspace is held */
        run_pattern_gather(c, cmd, argc, argv);
    } else if (cmd->route == ROUTE_OWNER || cmd->route == ROUTE_GATHER) {
        int *pos = mem_alloc((size_t)argc * sizeof(int));
        int n = command_key_positions(cmd, argc, argv, pos);
        run_gather(c, cmd, argc, argv, pos, n, gather_done, false, 0);
        mem_release(pos);
    } else {
        run_split(c, cmd, argc, argv, NULL);
    }
}

void dispatch_run_script_whole(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                               int nextra)
{
    int *pos = mem_alloc(((size_t)argc + (size_t)nextra + 1) * sizeof(int));
    int n = command_key_positions(cmd, argc, argv, pos);
    for (int i = 0; i < nextra; i++)
        pos[n++] = argc + i;
    run_gather(c, cmd, argc, argv, pos, n, gather_done, true, nextra);
    mem_release(pos);
}

/* the connection `client` of self (*found: it is one of self's), when a script it runs may run again */
static struct conn *script_restart_conn(struct shard *self, uint64_t client, bool *found)
{
    *found = client_obeyed(client);
    for (struct conn *c = self->conns; c && !*found; c = c->next)
        if (c->id == client) {
            *found = true;
            if (!c->closed && !c->txid && !c->in_multi && !c->exec_input && !c->loads_aof && !c->repl_master &&
                !c->cluster_port)
                return c;
        }
    return NULL;
}

int dispatch_script_restartable(struct shard *self, uint64_t client)
{
    bool found;
    struct conn *c = script_restart_conn(self, client, &found);
    return c ? 1 : found ? 0 : -1;
}

void dispatch_script_restart(struct shard *self, uint64_t client, int argc, const struct resp_arg *argv, int nextra)
{
    bool found;
    struct conn *c = script_restart_conn(self, client, &found);
    if (c)
        txn_run_script_whole(c, command_lookup(argv[0].ptr, argv[0].len), argc, argv, nextra);
}

/*
 * A script sent whole to its declared keys' owner that named an undeclared key of another shard there (before
 * it wrote) answers DISPATCH_SCRIPT_AGAIN and its arguments (script.c): it runs again from here with every
 * shard's keyspace locked, when nothing of its connection was sent after it (or it would run after commands
 * that followed it) and it is no command of an EXEC; else it is refused, as before it could run again.  This
 * slot, answering nothing and counted for nothing, makes way.
 */
static void part_script(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    if (len == 0 || reply[0] != DISPATCH_SCRIPT_AGAIN) {
        part_whole(c, s, part, reply, len);
        return;
    }
    uint32_t argc, nextra;
    memcpy(&argc, reply + 1, 4);
    memcpy(&nextra, reply + 5, 4);
    struct resp_arg *argv = mem_alloc(((size_t)argc + nextra + 1) * sizeof(*argv));
    size_t off = 9;
    for (uint32_t i = 0; i < argc + nextra; i++) {
        uint32_t n;
        memcpy(&n, reply + off, 4);
        argv[i] = (struct resp_arg){reply + off + 4, n};
        off += 4 + n;
    }
    if (c->slot_tail == s && s->after.len == 0 && !s->txid && !c->closed && !c->in_multi && !c->exec_input) {
        txn_run_script_whole(c, s->cmd, (int)argc, argv, (int)nextra);
        s->cmd = command_internal(CMD_I_LOCK);
        s->silent = true;
    } else {
        static const char refused[] = "-ERR Script attempted to access a key that is not in KEYS and lives on "
                                      "another shard\r\n";
        part_copy(c, s, part, refused, sizeof refused - 1);
    }
    mem_release(argv);
}
