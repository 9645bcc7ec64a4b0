/*
 * block: the blocking commands (BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP
 * BZPOPMIN BZPOPMAX BZMPOP), served where their keys live.
 *
 * A blocking command goes, like any command, to the shard owning its keys,
 * always through a reply slot that is a barrier for its connection (Redis's
 * blocked client reads nothing more).  Its handler pops at once if it can;
 * else it answers CMD_BLOCK_MARKER and the owner registers a waiter for
 * each of the command's keys (a FIFO per key, in the order clients
 * blocked).  After every command that writes a key with waiters, the owner
 * serves them in order while the key holds data of their type: it runs the
 * waiter's command again (it pops now) and sends the reply home as a
 * delivery (handoff.c), or hands it over directly when home is itself.  A
 * served BLMOVE's push can serve the next key's waiters in turn.
 *
 * The home keeps the slot open after the marker, holding a reference on the
 * connection, and on timeout, CLIENT UNBLOCK or disconnection asks the
 * owner to drop the waiter (block_cancel_command): ":1" means dropped (the
 * home answers the timeout reply, or UNBLOCKED), ":0" that it was served
 * and its reply is on the way.  A served reply never overtakes its marker
 * (handoff_deliver completes the returned batches first).
 *
 * Keys written inside a transaction serve their waiters only once its locks
 * are gone (Redis serves them after EXEC): a waiter must not see, or take,
 * what a transaction does half-way.
 *
 * The keys of one blocking command must live on one shard (one hash tag);
 * across shards it answers an error for now.  Inside MULTI it never blocks:
 * it answers as if it had timed out, as Redis does.
 */
#include "core.h"

#include "percore/config.h"
#include "percore/dict.h"
#include "percore/keylock.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/reply.h"
#include "percore/store.h"
#include "percore/util.h"
#include "percore/watch.h"

#include <event2/event.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- owner: waiters */

struct waiter {
    uint64_t client;
    int home;
    struct conn *conn;        /* the home's: carried back, never read here */
    struct slot *slot;
    int part;
    int db;
    int resp;
    const struct command *cmd;
    int argc;
    struct resp_arg *argv;    /* a copy of the command */
    char *bytes;
};

struct waiter_list {
    int n;
    int cap;
    struct waiter **v;        /* oldest first */
};

struct blockers {
    size_t waiting;           /* first: block_waiting() reads it.  Waiters (each under every key it names) */
    struct dict *keys;        /* db (int32) + key -> struct waiter_list * */
    int nready;               /* keys written since the last serving round */
    int ready_cap;
    char **ready;             /* their db + key bytes, ready_len[i] long */
    size_t *ready_len;
};

struct blockers *block_create(void)
{
    struct blockers *b = mem_calloc(1, sizeof(*b));
    b->keys = dict_create();
    return b;
}

static void waiter_free(struct waiter *w)
{
    mem_release(w->argv);
    mem_release(w->bytes);
    mem_release(w);
}

static struct waiter_list *entry_list(const struct dict_entry *e) { return dict_entry_pointer(e); }

static void waiter_unlist(struct blockers *b, struct waiter *w);

void block_destroy(struct blockers **bp)
{
    struct blockers *b = *bp;
    if (!b)
        return;
    while (dict_size(b->keys)) { /* a waiter is listed under each of its keys: off all of them, then freed */
        struct dict_iter it;
        dict_iter_init(&it, b->keys);
        struct waiter *w = entry_list(dict_iter_next(&it))->v[0];
        waiter_unlist(b, w);
        waiter_free(w);
    }
    dict_destroy(&b->keys);
    for (int i = 0; i < b->nready; i++)
        mem_release(b->ready[i]);
    mem_release(b->ready);
    mem_release(b->ready_len);
    mem_release(b);
    *bp = NULL;
}


static int waiter_keys(const struct waiter *w, int *pos)
{
    return command_key_positions(w->cmd, w->argc, w->argv, pos);
}

static void waiter_unlist(struct blockers *b, struct waiter *w)
{
    int pos_small[16];
    int *pos = w->argc <= 16 ? pos_small : mem_alloc((size_t)w->argc * sizeof(int));
    int n = waiter_keys(w, pos);
    for (int i = 0; i < n; i++) {
        struct dict_dbkey k;
        dict_dbkey_make(&k, w->db, w->argv[pos[i]].ptr, w->argv[pos[i]].len);
        struct dict_entry *e = dict_find(b->keys, k.p, k.len);
        struct waiter_list *l = e ? entry_list(e) : NULL;
        for (int j = 0; l && j < l->n; j++) {
            if (l->v[j] == w) {
                memmove(l->v + j, l->v + j + 1, (size_t)(l->n - j - 1) * sizeof(*l->v));
                l->n--;
                break;
            }
        }
        if (l && l->n == 0) {
            mem_release(l->v);
            mem_release(l);
            dict_delete(b->keys, k.p, k.len);
        }
        dict_dbkey_done(&k);
    }
    if (pos != pos_small)
        mem_release(pos);
    b->waiting--;
}

void block_register(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv, int db,
                    int resp, uint64_t client, int home, struct conn *conn, struct slot *slot, int part)
{
    struct blockers *b = self->blockers;
    struct waiter *w = mem_calloc(1, sizeof(*w));
    *w = (struct waiter){client, home, conn, slot, part, db, resp, cmd, argc, NULL, NULL};
    dispatch_argv_copy(argc, argv, &w->argv, &w->bytes);
    int pos_small[16];
    int *pos = argc <= 16 ? pos_small : mem_alloc((size_t)argc * sizeof(int));
    int n = waiter_keys(w, pos);
    for (int i = 0; i < n; i++) {
        struct dict_dbkey k;
        dict_dbkey_make(&k, db, w->argv[pos[i]].ptr, w->argv[pos[i]].len);
        struct dict_entry *existing = NULL;
        struct dict_entry *e = dict_add(b->keys, k.p, k.len, &existing);
        dict_dbkey_done(&k);
        struct waiter_list *l;
        if (e) {
            l = mem_calloc(1, sizeof(*l));
            dict_entry_set_pointer(b->keys, e, l);
        } else {
            l = entry_list(existing);
        }
        bool listed = false; /* a key named twice is one place in line */
        for (int j = 0; j < l->n && !listed; j++)
            listed = l->v[j] == w;
        if (!listed) {
            if (l->n == l->cap) {
                l->cap = l->cap ? l->cap * 2 : 4;
                l->v = mem_realloc(l->v, (size_t)l->cap * sizeof(*l->v));
            }
            l->v[l->n++] = w;
        }
    }
    if (pos != pos_small)
        mem_release(pos);
    b->waiting++;
}

static void note_ready(struct blockers *b, const char *k, size_t kl)
{
    if (b->nready == b->ready_cap) {
        b->ready_cap = b->ready_cap ? b->ready_cap * 2 : 8;
        b->ready = mem_realloc(b->ready, (size_t)b->ready_cap * sizeof(*b->ready));
        b->ready_len = mem_realloc(b->ready_len, (size_t)b->ready_cap * sizeof(*b->ready_len));
    }
    b->ready[b->nready] = mem_alloc(kl);
    memcpy(b->ready[b->nready], k, kl);
    b->ready_len[b->nready++] = kl;
}

/* SWAPDB a b: every waited-for key of either database may hold data now */
static void note_swapdb(struct blockers *b, int argc, const struct resp_arg *argv)
{
    long long x, y;
    if (argc != 3 || !util_str_to_ll(argv[1].ptr, argv[1].len, &x) || !util_str_to_ll(argv[2].ptr, argv[2].len, &y))
        return;
    struct dict_iter it;
    dict_iter_init(&it, b->keys);
    for (struct dict_entry *e; (e = dict_iter_next(&it));) {
        size_t kl, len;
        const char *k = dict_entry_key(e, &kl), *key;
        int db = dict_dbkey_split(k, kl, &key, &len);
        if (db == x || db == y)
            note_ready(b, k, kl);
    }
}

void block_note_write(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv, int db)
{
    struct blockers *b = self->blockers;
    if (strcmp(cmd->name, "swapdb") == 0) {
        note_swapdb(b, argc, argv);
        return;
    }
    int pos_small[16];
    int *pos = argc <= 16 ? pos_small : mem_alloc((size_t)argc * sizeof(int));
    int n = command_key_positions(cmd, argc, argv, pos);
    for (int i = 0; i < n; i++) {
        struct dict_dbkey k;
        dict_dbkey_make(&k, db, argv[pos[i]].ptr, argv[pos[i]].len);
        if (dict_find(b->keys, k.p, k.len))
            note_ready(b, k.p, k.len);
        dict_dbkey_done(&k);
    }
    if (pos != pos_small)
        mem_release(pos);
}

void block_after_command(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv, int db)
{
    if (!(cmd->flags & CMD_WRITE) || (cmd->first_key == 0 && strcmp(cmd->name, "swapdb") != 0))
        return;
    block_note_write(self, cmd, argc, argv, db);
    if (self->blockers->nready)
        block_serve_ready(self);
}

bool block_marker(const char *reply, size_t len)
{
    return len == sizeof(CMD_BLOCK_MARKER) - 1 && memcmp(reply, CMD_BLOCK_MARKER, len) == 0;
}

/* does key hold what w waits for: a non-empty list, or sorted set for BZ* */
static bool waiter_can_run(struct shard *self, const struct waiter *w, const char *key, size_t len)
{
    struct object *o = store_peek(self->store, w->db, key, len, self->now, NULL);
    enum object_type want = w->cmd->name[1] == 'z' ? OBJ_ZSET : OBJ_LIST;
    return o && object_type(o) == want;
}

/* run w's command again (it pops now) and send its reply home */
static void waiter_serve(struct shard *self, struct waiter *w)
{
    struct reply out;
    reply_init(&out);
    out.resp = w->resp;
    struct cmd_ctx ctx = {
        .store = self->store, .out = &out, .argv = w->argv, .argc = w->argc, .db = w->db, .now = self->now,
        .config = config_current(), .stats = &self->cstats, .conn = NULL, .shard = self->index,
        .locks = self->locks, .watches = self->watches, .client = w->client, .may_block = true,
    };
    w->cmd->proc(&ctx);
    shard_note_write(self, w->cmd, w->db);
    if (watch_count(self->watches))
        txn_note_write(self, w->cmd, w->argc, w->argv, w->db, out.buf, out.len);
    block_note_write(self, w->cmd, w->argc, w->argv, w->db); /* BLMOVE's push may serve others */
    if (w->home == self->index)
        block_served(w->conn, w->slot, w->part, out.buf, out.len);
    else
        handoff_send_served(self, w->home, w->conn, w->slot, w->part, out.buf, out.len);
    reply_deinit(&out);
}

void block_serve_ready(struct shard *self)
{
    struct blockers *b = self->blockers;
    int kept = 0; /* keys a transaction holds: served once it lets go (txn_locks_changed) */
    for (int r = 0; r < b->nready; r++) { /* serving may add ready keys: nready grows */
        char *k = b->ready[r];
        size_t kl = b->ready_len[r], len;
        const char *key;
        int db = dict_dbkey_split(k, kl, &key, &len);
        if (keylock_count(self->locks) && keylock_holds_other(self->locks, 0, db, key, len)) {
            b->ready[kept] = k;
            b->ready_len[kept++] = kl;
            continue;
        }
        for (;;) {
            struct dict_entry *e = dict_find(b->keys, k, kl);
            struct waiter_list *l = e ? entry_list(e) : NULL;
            struct waiter *w = l && l->n ? l->v[0] : NULL;
            if (!w || !waiter_can_run(self, w, key, len))
                break;
            waiter_unlist(b, w);
            waiter_serve(self, w);
            waiter_free(w);
        }
        mem_release(k);
    }
    b->nready = kept;
}

/* drop the waiter of client (its slot): true when it was still waiting */
static bool block_drop(struct shard *self, uint64_t client, const struct slot *slot)
{
    struct blockers *b = self->blockers;
    struct dict_iter it;
    dict_iter_init(&it, b->keys);
    for (struct dict_entry *e; (e = dict_iter_next(&it));) {
        struct waiter_list *l = entry_list(e);
        for (int j = 0; j < l->n; j++) {
            struct waiter *w = l->v[j];
            if (w->client == client && w->slot == slot) {
                waiter_unlist(b, w); /* the iterator goes no further */
                waiter_free(w);
                return true;
            }
        }
    }
    return false;
}

const struct command block_cancel_command = {"__bcancel", NULL, 3, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, ""};

void block_cancel_run(struct shard *self, uint64_t client, const struct resp_arg *slot_arg, struct reply *out)
{
    uint64_t slot_bits = 0;
    if (slot_arg->len == sizeof slot_bits)
        memcpy(&slot_bits, slot_arg->ptr, sizeof slot_bits);
    reply_int(out, block_drop(self, client, (const struct slot *)(uintptr_t)slot_bits));
}

/* ---------------------------------------------------------------- home: blocked connections */

static void block_on_timeout(evutil_socket_t fd, short what, void *arg);
static void block_cancel(struct conn *c, bool error);

static void block_finish(struct conn *c, struct slot *s)
{
    if (c->blocked == s) {
        c->blocked = NULL;
        STATS_ADD(&c->home->stats, blocked_clients, (uint64_t)-1);
        if (c->block_ev)
            event_del(c->block_ev);
    }
    dispatch_slot_complete(c, s);
}

static void blocked_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)part;
    if (!block_marker(reply, len)) {
        reply_raw(&s->reply, reply, len);
        return;
    }
    s->blocked = true;
    s->parts_left++; /* the served reply, or the owner's word that it dropped the waiter */
    c->inflight++;   /* held until then */
    c->blocked = s;
    STATS_ADD(&c->home->stats, blocked_clients, 1);
    conn_unpause_reading(c);
    if (s->cursor > 0) { /* ms */
        if (!c->block_ev)
            c->block_ev = evtimer_new(c->home->base, block_on_timeout, c);
        struct timeval tv = {(time_t)(s->cursor / 1000), (suseconds_t)(s->cursor % 1000) * 1000};
        evtimer_add(c->block_ev, &tv);
    }
    if (c->closed) /* gone meanwhile: the owner drops its waiter */
        block_cancel(c, false);
}

static void blocked_done(struct conn *c, struct slot *s)
{
    block_finish(c, s);
}

void block_served(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    dispatch_part_reply(c, s, part, reply, len);
    conn_unref(c); /* the waiter's reference (this may free c: nothing after it) */
}

/* the owner's answer to a cancel: ":1" it dropped the waiter, which is answered now */
static void cancel_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)part;
    struct slot *blocked = s->block_target;
    s->count = len >= 2 && memcmp(reply, ":1", 2) == 0;
    if (s->count) {
        if (s->sum) /* CLIENT UNBLOCK ... ERROR */
            reply_error(&blocked->reply, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
        else
            reply_null_array(&blocked->reply); /* timed out: BLMOVE's too (Redis 7.0) */
        blocked->parts_left = 1;
        dispatch_part_reply(c, blocked, 0, "", 0);
    }
}

static void cancel_done(struct conn *c, struct slot *s)
{
    bool dropped = s->count;
    dispatch_slot_complete(c, s);
    if (dropped) /* the reference the waiter held (this may free c: nothing after it) */
        conn_unref(c);
}

/* ask the owner to drop c's waiter; error: CLIENT UNBLOCK ... ERROR */
static void block_cancel(struct conn *c, bool error)
{
    struct slot *s = c->blocked;
    if (!s || s->block_cancelling)
        return;
    s->block_cancelling = true;
    struct shard *self = c->home;
    char slot_bits[sizeof(uint64_t)];
    uint64_t p = (uint64_t)(uintptr_t)s;
    memcpy(slot_bits, &p, sizeof p);
    char id[24];
    struct resp_arg argv[3] = {{"__bcancel", 9}, {id, 0}, {slot_bits, sizeof slot_bits}};
    argv[1].len = (size_t)snprintf(id, sizeof id, "%llu", (unsigned long long)c->id);
    struct slot *cs = dispatch_slot_create(c, &block_cancel_command);
    cs->on_part = cancel_part;
    cs->on_done = cancel_done;
    cs->block_target = s;
    cs->sum = error;
    cs->parts_left = 1;
    if (s->step == self->index || SHARD_STORE_SHARED) {
        struct reply *out = &self->scratch;
        reply_clear(out);
        shard_store_lock();
        block_cancel_run(self, c->id, &argv[2], out);
        shard_store_unlock();
        dispatch_part_reply(c, cs, 0, out->buf, out->len);
    } else {
        handoff_send(c, s->step, &block_cancel_command, s->db, 3, argv, cs, 0);
    }
}

static void block_on_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct conn *c = arg;
    struct shard *self = c->home; /* the cancel may free c */
    shard_wake_up(self);
    block_cancel(c, false);
    handoff_flush(self);
}

bool block_unblock(struct conn *c, bool error)
{
    if (!c->blocked || c->blocked->block_cancelling)
        return false;
    struct shard *self = c->home;
    block_cancel(c, error);
    handoff_flush(self);
    return true;
}

void block_conn_closed(struct conn *c)
{
    if (c->blocked && shard_running(c->home))
        block_cancel(c, false);
}

void block_conn_freed(struct conn *c)
{
    if (c->block_ev)
        event_free(c->block_ev);
    c->block_ev = NULL;
}

/* a blocking command's timeout argument (Redis's getTimeoutFromObjectOrReply, seconds): ms, 0 forever */
static bool block_timeout(const struct command *cmd, int argc, const struct resp_arg *argv, long long *ms)
{
    int i = argc - 1; /* BLPOP BRPOP BZPOPMIN BZPOPMAX */
    if (strcmp(cmd->name, "blmpop") == 0 || strcmp(cmd->name, "bzmpop") == 0)
        i = 1;
    else if (strcmp(cmd->name, "blmove") == 0)
        i = 5;
    else if (strcmp(cmd->name, "brpoplpush") == 0)
        i = 3;
    return i > 0 && i < argc && cmd_parse_block_timeout(&argv[i], ms, NULL);
}

void block_run(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv, int owner)
{
    struct shard *self = c->home;
    if (SHARD_STORE_SHARED || owner == -2)
        owner = self->index; /* one store; or no keys (an arity error the handler answers) */
    if (owner == -1) {
        /* Redis's answer to bad arguments comes first: the handler, on an empty store, finds them */
        struct reply *out = &self->scratch;
        reply_clear(out);
        out->resp = c->resp;
        struct cmd_ctx ctx = {
            .store = dispatch_scratch_store(self), .out = out, .argv = argv, .argc = argc, .db = 0,
            .now = self->now, .config = config_current(), .stats = &self->cstats, .shard = self->index,
            .locks = self->locks, .watches = self->watches, .client = c->id, .may_block = true,
        };
        cmd->proc(&ctx);
        struct reply *to = dispatch_reply_target(c);
        if (out->len && out->buf[0] == '-')
            reply_raw(to, out->buf, out->len);
        else
            reply_error(to, "ERR blocking on keys of several shards is not supported yet: give the keys one {hash tag}");
        stats_cmd_rejected(&self->stats, cmd, "-ERR", 4);
        return;
    }
    long long ms = 0;
    struct slot *s = dispatch_slot_create(c, cmd);
    s->barrier = true;
    s->on_part = blocked_part;
    s->on_done = blocked_done;
    s->parts_left = 1;
    s->step = owner;
    s->cursor = block_timeout(cmd, argc, argv, &ms) ? (uint64_t)ms : 0;
    dispatch_send_part(c, s, owner, 0, cmd, argc, argv);
}
