/*
 * block: the blocking commands (BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP
 * BZPOPMIN BZPOPMAX BZMPOP, XREAD and XREADGROUP with BLOCK), served where
 * their keys live.
 *
 * A blocking command goes, like any command, to the shard owning its keys,
 * always through a reply slot that is a barrier for its connection (Redis's
 * blocked client reads nothing more).  Its handler pops at once if it can;
 * else it sets ctx->blocked (call() answers CALL_BLOCKED), the owner
 * registers a waiter for each of the command's keys (a FIFO per key, in the order clients
 * blocked).  After every command that writes a key with waiters, the owner
 * serves them in order while the key holds data of their type: it runs the
 * waiter's command again for that key alone (it pops now; Redis too serves
 * a client from the key that got data) and sends the reply home as a
 * delivery (handoff.c), or hands it over directly when home is itself.  A
 * served BLMOVE's push can serve the next key's waiters in turn.
 *
 * The home keeps the slot open after the owner's word that it waits
 * (dispatch_part_waits), holding a reference on the
 * connection, and on timeout, CLIENT UNBLOCK or disconnection asks the
 * owner to drop the waiter (block_cancel_command): ":1" means dropped (the
 * home answers the timeout reply, or UNBLOCKED), ":0" that it was served
 * and its reply is on the way.  A served reply never overtakes the owner's
 * word that it waits (handoff_deliver completes the returned batches first).
 *
 * Keys written inside a transaction serve their waiters only once its locks
 * are gone (Redis serves them after EXEC): a waiter must not see, or take,
 * what a transaction does half-way.
 *
 * A command whose keys live on several shards waits as one part per shard
 * (see "keys on several shards" below).  Inside MULTI it never blocks: it
 * answers as if it had timed out, as Redis does.
 *
 * XREAD and XREADGROUP wait for an entry above the ID they read after: XREAD's
 * `$` is made the stream's last ID as the waiter is registered (right after
 * the handler found nothing, on the same shard), XREADGROUP's `>` is
 * compared with its group's last ID each time; a stream deleted or a group
 * destroyed (XGROUP DESTROY signals its key) answers XREADGROUP Redis's
 * -UNBLOCKED / -NOGROUP.  Served, the command runs again for that key alone.  Over
 * keys of several shards they are gathered (dispatch.c) under their keys'
 * locks, and when the copies hold nothing, wait as one part per shard
 * (block_gathered_wait; "keys on several shards" below).
 */
#include "block.h"

#include "shard_internal.h"
#include "conn_internal.h"
#include "reply_slot.h"
#include "dispatch.h"
#include "txn.h"
#include "handoff.h"

#include "call.h"

#include "percore/config.h"
#include "percore/dict.h"
#include "percore/keylock.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/reply.h"
#include "percore/rread.h"
#include "percore/store.h"
#include "percore/stream.h"
#include "percore/stream_group.h"
#include "percore/util.h"
#include "percore/watch.h"

#include <event2/event.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
    bool of_several;          /* one shard's part of a command on keys of several shards: listed under
                                 this shard's keys only, and served alone (BLMOVE: the pop alone) */
};

struct waiter_list {
    int n;
    int cap;
    struct waiter **v;        /* oldest first */
};

struct blockers {
    size_t waiting;           /* first: block_waiting() reads it.  Waiters (each under every key it names) */
    int shard;                /* whose table */
    bool serving;             /* block_serve_ready is under way (serving can run commands that write) */
    struct dict *keys;        /* db (int32) + key -> struct waiter_list * */
    int nready;               /* keys written since the last serving round */
    int ready_cap;
    char **ready;             /* their db + key bytes, ready_len[i] long */
    size_t *ready_len;
};

struct blockers *block_create(int shard)
{
    struct blockers *b = mem_calloc(1, sizeof(*b));
    b->shard = shard;
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


/* ---- XREAD / XREADGROUP (CMD_KEYS_STREAMS): their options, then STREAMS key... id... */

static bool arg_is(const struct resp_arg *a, const char *word)
{
    size_t n = strlen(word);
    return a->len == n && strncasecmp(a->ptr, word, n) == 0;
}

/* the index of the first key (after STREAMS), 0 none; *block, *group: the BLOCK and GROUP arguments (0 none),
 * skipped as the handler's parser skips them */
static int streams_args(int argc, const struct resp_arg *argv, int *block, int *group)
{
    *block = *group = 0;
    for (int i = 1; i < argc; i++) {
        if ((arg_is(&argv[i], "block") || arg_is(&argv[i], "count")) && i + 1 < argc) {
            if (arg_is(&argv[i], "block"))
                *block = i + 1;
            i++;
        } else if (arg_is(&argv[i], "group") && i + 2 < argc) {
            *group = i + 1;
            i += 2;
        } else if (arg_is(&argv[i], "streams")) {
            return i + 1;
        }
    }
    return 0;
}

/* XREAD's `$` made the stream's last ID now (0-0 when there is none), as Redis resolves it when the client
 * blocks: entries added from here on are what it waits for */
static void stream_waiter_resolve(struct shard *self, struct waiter *w)
{
    int block, group, first = streams_args(w->argc, w->argv, &block, &group);
    int nkeys = first ? (w->argc - first) / 2 : 0;
    struct resp_arg *args = mem_alloc((size_t)w->argc * sizeof(*args));
    char *ids = mem_alloc((size_t)(nkeys ? nkeys : 1) * 48);
    memcpy(args, w->argv, (size_t)w->argc * sizeof(*args));
    for (int i = 0; i < nkeys; i++) {
        struct resp_arg *id = &args[first + nkeys + i];
        const struct resp_arg *key = &w->argv[first + i];
        if (!(id->len == 1 && id->ptr[0] == '$'))
            continue;
        struct object *o = store_peek(self->store, w->db, key->ptr, key->len, self->now, NULL);
        struct stream_id last = {0, 0};
        if (o && object_type(o) == OBJ_STREAM)
            last = stream_last_id(stream_of(o));
        id->ptr = ids + 48 * i;
        id->len = stream_id_format(&last, ids + 48 * i);
    }
    char *bytes = w->bytes;
    struct resp_arg *argv = w->argv;
    dispatch_argv_copy(w->argc, args, &w->argv, &w->bytes);
    mem_release(argv);
    mem_release(bytes);
    mem_release(args);
    mem_release(ids);
}

/* has the stream under key an entry for w: above its ID, or for `>` above its group's last (a group gone:
 * the command runs again and answers its error) */
static bool stream_waiter_can_run(const struct waiter *w, struct object *o, const char *key, size_t len)
{
    int block, group, first = streams_args(w->argc, w->argv, &block, &group);
    int nkeys = first ? (w->argc - first) / 2 : 0;
    if (!o || object_type(o) != OBJ_STREAM)
        return group != 0; /* XREADGROUP's stream gone: answered its error */
    const struct stream *s = stream_of(o);
    for (int i = 0; i < nkeys; i++) {
        const struct resp_arg *k = &w->argv[first + i], *arg = &w->argv[first + nkeys + i];
        if (k->len != len || memcmp(k->ptr, key, len) != 0)
            continue;
        struct stream_id after, top;
        if (group && arg->len == 1 && arg->ptr[0] == '>') {
            const struct stream_group *g = stream_group_find(s, w->argv[group].ptr, w->argv[group].len);
            if (g == NULL)
                return true;
            after = g->last_id;
        } else if (!stream_id_parse(arg->ptr, arg->len, &after)) {
            return false;
        }
        return stream_last_entry_id(s, &top) && stream_id_cmp(&top, &after) > 0;
    }
    return false;
}

/* Redis's errors for an XREADGROUP waiter whose stream or group is gone (NULL: neither) */
static const char *stream_waiter_gone(const struct waiter *w, struct object *o)
{
    int block, group;
    streams_args(w->argc, w->argv, &block, &group);
    if (!group)
        return NULL;
    if (!o || object_type(o) != OBJ_STREAM)
        return "UNBLOCKED the stream key no longer exists";
    if (!stream_group_find(stream_of(o), w->argv[group].ptr, w->argv[group].len))
        return "NOGROUP the consumer group this client was blocked on no longer exists";
    return NULL;
}

/* the command for key alone: its options, STREAMS key id */
static int stream_one_key_form(int argc, const struct resp_arg *argv, const struct resp_arg *key,
                               struct resp_arg *args)
{
    int block, group, first = streams_args(argc, argv, &block, &group);
    int nkeys = (argc - first) / 2, n = first;
    memcpy(args, argv, (size_t)first * sizeof(*args));
    for (int i = 0; i < nkeys; i++) {
        if (argv[first + i].len == key->len && memcmp(argv[first + i].ptr, key->ptr, key->len) == 0) {
            args[n++] = argv[first + i];
            args[n++] = argv[first + nkeys + i];
            break;
        }
    }
    return n;
}

/* the keys w is listed under (a part's: those of this shard; BLMOVE's: its source) */
static int waiter_keys(const struct blockers *b, const struct waiter *w, int *pos)
{
    int n = command_key_positions(w->cmd, w->argc, w->argv, pos);
    if (!w->of_several)
        return n;
    const struct config *cfg = config_current();
    if (w->cmd->flags & CMD_BLOCK_MOVE)
        n = 1;
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (dispatch_key_shard(cfg, &w->argv[pos[i]]) == b->shard)
            pos[kept++] = pos[i];
    return kept;
}

static void waiter_unlist(struct blockers *b, struct waiter *w)
{
    int pos_small[16];
    int *pos = w->argc <= 16 ? pos_small : mem_alloc((size_t)w->argc * sizeof(int));
    int n = waiter_keys(b, w, pos);
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

/* false: it names no key here, and waits for nothing */
static bool block_register_part(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv,
                                int db, int resp, uint64_t client, int home, struct conn *conn, struct slot *slot,
                                int part, bool of_several)
{
    struct blockers *b = self->blockers;
    struct waiter *w = mem_calloc(1, sizeof(*w));
    *w = (struct waiter){client, home, conn, slot, part, db, resp, cmd, argc, NULL, NULL, of_several};
    dispatch_argv_copy(argc, argv, &w->argv, &w->bytes);
    if (cmd->flags & CMD_KEYS_STREAMS)
        stream_waiter_resolve(self, w);
    int pos_small[16];
    int *pos = argc <= 16 ? pos_small : mem_alloc((size_t)argc * sizeof(int));
    int n = waiter_keys(b, w, pos);
    if (n <= 0) {
        if (pos != pos_small)
            mem_release(pos);
        waiter_free(w);
        return false;
    }
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
    return true;
}

void block_register(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv, int db,
                    int resp, uint64_t client, int home, struct conn *conn, struct slot *slot, int part)
{
    block_register_part(self, cmd, argc, argv, db, resp, client, home, conn, slot, part, false);
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

void block_note_databases(struct shard *self, int db, int db2)
{
    struct blockers *b = self->blockers;
    struct dict_iter it;
    dict_iter_init(&it, b->keys);
    for (struct dict_entry *e; (e = dict_iter_next(&it));) {
        size_t kl, len;
        const char *k = dict_entry_key(e, &kl), *key;
        int kdb = dict_dbkey_split(k, kl, &key, &len);
        if (kdb == db || kdb == db2)
            note_ready(b, k, kl);
    }
}

void block_note_key(struct shard *self, int db, const char *key, size_t len)
{
    struct blockers *b = self->blockers;
    struct dict_dbkey k;
    dict_dbkey_make(&k, db, key, len);
    if (dict_find(b->keys, k.p, k.len))
        note_ready(b, k.p, k.len);
    dict_dbkey_done(&k);
}

/* does key hold what w waits for: a non-empty list, or sorted set for BZ*, a new stream entry for XREAD */
static bool waiter_can_run(struct shard *self, const struct waiter *w, const char *key, size_t len)
{
    struct object *o = store_peek(self->store, w->db, key, len, self->now, NULL);
    if (w->cmd->flags & CMD_KEYS_STREAMS)
        return stream_waiter_can_run(w, o, key, len);
    return o && object_type(o) == ((w->cmd->flags & CMD_BLOCK_ZSET) ? OBJ_ZSET : OBJ_LIST);
}

/*
 * The command served for one of its keys (args: room for argc + 2), as Redis
 * serves a client from the key that got data: BLPOP a b c 0 for b runs
 * BLPOP b 0, BLMPOP 0 3 a b c LEFT runs BLMPOP 0 1 b LEFT.  BLMOVE's part
 * on the source's shard (several shards) is the pop alone: LPOP / RPOP.
 * Returns the argument count; *cmd is what to run.
 */
static bool move_side_left(int argc, const struct resp_arg *argv, int i) /* BRPOPLPUSH: RIGHT, then LEFT */
{
    if (argc != 6)
        return i == 4;
    return argv[i].len == 4 && strncasecmp(argv[i].ptr, "left", 4) == 0;
}

static int one_key_form(const struct command **cmd, int argc, const struct resp_arg *argv, const struct resp_arg *key,
                        bool part, struct resp_arg *args)
{
    const struct command *c = *cmd;
    int n = 0;
    if (c->flags & CMD_KEYS_STREAMS)
        return stream_one_key_form(argc, argv, key, args);
    if (c->flags & CMD_BLOCK_MOVE) {
        if (!part) {
            memcpy(args, argv, (size_t)argc * sizeof(*args));
            return argc;
        }
        *cmd = command_step(move_side_left(argc, argv, 3) ? CMD_S_LPOP : CMD_S_RPOP);
        args[n++] = command_name_arg(*cmd);
        args[n++] = argv[1];
        return n;
    }
    args[n++] = argv[0];
    if (c->flags & CMD_NUMKEYS) { /* BLMPOP / BZMPOP timeout numkeys key... rest */
        long long nk = 0;
        util_str_to_ll(argv[2].ptr, argv[2].len, &nk);
        args[n++] = argv[1];
        args[n++] = (struct resp_arg){"1", 1};
        args[n++] = *key;
        for (int i = 3 + (int)nk; i < argc; i++)
            args[n++] = argv[i];
    } else { /* key... timeout */
        args[n++] = *key;
        args[n++] = argv[argc - 1];
    }
    return n;
}

/* serve w from key (it pops now) and send the reply home */
static void waiter_serve(struct shard *self, struct waiter *w, const char *key, size_t len)
{
    struct reply out;
    reply_init(&out);
    out.resp = w->resp;
    struct resp_arg args_small[8];
    struct resp_arg *args = w->argc + 2 <= 8 ? args_small : mem_alloc((size_t)(w->argc + 2) * sizeof(*args));
    struct resp_arg k = {key, len};
    const struct command *cmd = w->cmd;
    int argc = one_key_form(&cmd, w->argc, w->argv, &k, w->of_several, args);
    const char *gone = (cmd->flags & CMD_KEYS_STREAMS)
                           ? stream_waiter_gone(w, store_peek(self->store, w->db, key, len, self->now, NULL))
                           : NULL;
    /* counted when it blocked; its pop may serve others after this round (BLMOVE's push) */
    struct call run = {
        .cmd = cmd, .argv = args, .argc = argc, .db = w->db, .resp = w->resp, .client = w->client,
        .out = &out, .flags = CALL_EFFECTS | CALL_MAY_BLOCK,
    };
    if (gone)
        reply_error(&out, gone);
    else
        call(self, &run);
    if (args != args_small)
        mem_release(args);
    if (w->home == self->index)
        block_served(w->conn, w->slot, w->part, out.buf, out.len);
    else
        handoff_send_served(self, w->home, w->conn, w->slot, w->part, out.buf, out.len);
    reply_deinit(&out);
}

void block_serve_ready(struct shard *self)
{
    struct blockers *b = self->blockers;
    if (b->serving || !b->nready) /* serving: a served client's next commands ran and wrote, the loop below
                                   * sees their keys */
        return;
    b->serving = true;
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
        for (int j = 0;;) { /* j: waiters passed over, each a stream's that waits on (the next may not) */
            struct dict_entry *e = dict_find(b->keys, k, kl);
            struct waiter_list *l = e ? entry_list(e) : NULL;
            struct waiter *w = l && j < l->n ? l->v[j] : NULL;
            if (!w)
                break;
            if (!waiter_can_run(self, w, key, len)) {
                if (!(w->cmd->flags & CMD_KEYS_STREAMS))
                    break; /* a pop: none behind it can pop either */
                j++;
                continue;
            }
            waiter_unlist(b, w);
            waiter_serve(self, w, key, len);
            waiter_free(w);
        }
        mem_release(k);
    }
    b->nready = kept;
    b->serving = false;
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

/* __bprobe type skip pos key [pos key ...]: :pos of the first key holding data of `type` (list, zset),
 * :-pos when it holds another type (passed over when skip is "1"), :0 when none does */
static void probe_run(struct shard *self, int argc, const struct resp_arg *argv, int db, struct reply *out)
{
    enum object_type want = argv[1].len && argv[1].ptr[0] == 'z' ? OBJ_ZSET : OBJ_LIST;
    bool skip = argv[2].len == 1 && argv[2].ptr[0] == '1';
    for (int i = 3; i + 1 < argc; i += 2) {
        long long pos;
        const struct resp_arg *key = &argv[i + 1];
        struct object *o = store_peek(self->store, db, key->ptr, key->len, self->now, NULL);
        if (!o || !util_str_to_ll(argv[i].ptr, argv[i].len, &pos) || (skip && object_type(o) != want))
            continue;
        reply_int(out, object_type(o) == want ? pos : -pos);
        return;
    }
    reply_int(out, 0);
}

const struct command block_cancel_command = {"__bcancel", NULL, 3, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, ""};
const struct command block_part_command = {"__bwait", NULL, -3, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, ""};
const struct command block_probe_command = {"__bprobe", NULL, -5, CMD_INTERNAL, 4, -1, 2, ROUTE_HOME, ""};

bool block_owner_command(const struct command *cmd)
{
    return cmd == &block_cancel_command || cmd == &block_part_command || cmd == &block_probe_command;
}

void block_owner_run(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv, int db,
                     int resp, uint64_t client, int home, struct conn *conn, struct slot *slot, int part,
                     struct reply *out)
{
    shard_store_lock();
    if (cmd == &block_cancel_command) { /* __bcancel client slot: drop that waiter */
        uint64_t slot_bits = 0;
        if (argc == 3 && argv[2].len == sizeof slot_bits)
            memcpy(&slot_bits, argv[2].ptr, sizeof slot_bits);
        reply_int(out, block_drop(self, client, (const struct slot *)(uintptr_t)slot_bits));
    } else if (cmd == &block_part_command) { /* __bwait <the blocking command...>: this shard's part waits */
        const struct command *blocking = command_lookup(argv[1].ptr, argv[1].len);
        reply_int(out, blocking && block_register_part(self, blocking, argc - 1, argv + 1, db, resp, client, home,
                                                       conn, slot, part, true));
    } else {
        probe_run(self, argc, argv, db, out);
    }
    shard_store_unlock();
}

/* ---------------------------------------------------------------- home: blocked connections */

static bool reply_is_error(const char *reply, size_t len)
{
    struct rread r;
    rread_init(&r, reply, len);
    return rread_is_error(&r);
}

static long long reply_integer(const char *reply, size_t len)
{
    struct rread r;
    long long v;
    rread_init(&r, reply, len);
    return rread_int(&r, &v) ? v : 0;
}

/* a null array or RESP3 null: what a blocking command answers when nothing came */
static bool reply_is_null(const char *reply, size_t len)
{
    struct rread r;
    char t;
    long long n;
    rread_init(&r, reply, len);
    return rread_type(&r) == '_' || (rread_agg(&r, &t, &n) && n < 0);
}

/* a bulk string, not a null: an element popped */
static bool reply_is_string(const char *reply, size_t len)
{
    struct rread r;
    const char *p;
    size_t n;
    rread_init(&r, reply, len);
    return rread_type(&r) == '$' && rread_bulk(&r, &p, &n) && p;
}

/* the strings of a reply, depth first, aggregate headers, nils and errors left out: [key, elem],
 * [key, member, score] ... */
static int reply_strings(const char *reply, size_t len, struct resp_arg *out, int max)
{
    struct rread r;
    int n = 0;
    rread_init(&r, reply, len);
    while (rread_left(&r) && n < max) {
        char t = rread_type(&r);
        const char *p;
        size_t plen;
        long long k;
        if (rread_agg(&r, &t, &k))
            continue;
        if (rread_bulk(&r, &p, &plen)) {
            if (p)
                out[n++] = (struct resp_arg){p, plen};
        } else if (rread_line(&r, &p, &plen)) {
            if (t == '+' || t == ',' || t == ':')
                out[n++] = (struct resp_arg){p, plen};
        } else {
            break;
        }
    }
    return n;
}


static void block_on_timeout(evutil_socket_t fd, short what, void *arg);
static void block_cancel(struct conn *c, bool error);

/* c waits in s (its timeout, s->cursor ms, 0 none): counted, read (to see it go), timed */
static void block_start(struct conn *c, struct slot *s)
{
    c->blocked = s;
    STATS_ADD(&c->home->stats, blocked_clients, 1);
    conn_unpause_reading(c);
    if (s->cursor > 0) {
        STATS_ADD(&c->home->stats, clients_in_timeout_table, 1);
        if (!c->block_ev)
            c->block_ev = evtimer_new(c->home->base, block_on_timeout, c);
        struct timeval tv = {(time_t)(s->cursor / 1000), (suseconds_t)(s->cursor % 1000) * 1000};
        evtimer_add(c->block_ev, &tv);
    }
}

static void block_finish(struct conn *c, struct slot *s)
{
    if (c->blocked == s) {
        c->blocked = NULL;
        STATS_ADD(&c->home->stats, blocked_clients, (uint64_t)-1);
        if (s->cursor > 0) {
            STATS_ADD(&c->home->stats, clients_in_timeout_table, (uint64_t)-1);
            event_del(c->block_ev);
        }
    }
    dispatch_slot_complete(c, s);
}

static void blocked_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    (void)part;
    reply_raw(&s->reply, reply, len);
}

/* nothing to pop: it waits for the served reply, or the owner's word that it dropped the waiter */
static void blocked_wait(struct conn *c, struct slot *s, int part)
{
    (void)part;
    c->inflight++; /* held until then */
    block_start(c, s);
    if (c->closed) /* gone meanwhile: the owner drops its waiter */
        block_cancel(c, false);
}

static void blocked_done(struct conn *c, struct slot *s)
{
    block_finish(c, s);
}

static void bm_served(struct conn *c, struct slot *s, int owner, const char *reply, size_t len);
static void bm_cancel(struct conn *c, struct slot *s, bool error);

void block_served(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    if (s->bmulti) { /* a part of a command on keys of several shards (this may free c: nothing after it) */
        bm_served(c, s, part, reply, len);
        return;
    }
    dispatch_part_reply(c, s, part, reply, len);
    conn_unref(c); /* the waiter's reference (this may free c: nothing after it) */
}

/* the owner's answer to a cancel: ":1" it dropped the waiter, which is answered now */
static void cancel_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)part;
    struct slot *blocked = s->block_target;
    s->count = reply_integer(reply, len) == 1;
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
    if (s->bmulti) {
        bm_cancel(c, s, error);
        return;
    }
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
        block_owner_run(self, &block_cancel_command, 3, argv, s->db, c->resp, c->id, self->index, c, cs, 0, out);
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
    if (cmd->flags & CMD_KEYS_STREAMS) { /* XREAD's BLOCK, in ms (the handler checked it) */
        int block, group;
        streams_args(argc, argv, &block, &group);
        return block && util_str_to_ll(argv[block].ptr, argv[block].len, ms) && *ms > 0;
    }
    int i = (cmd->flags & CMD_NUMKEYS) ? 1 : argc - 1; /* BLMPOP BZMPOP; the rest end with it */
    return i > 0 && i < argc && cmd_parse_block_timeout(&argv[i], ms, NULL);
}

/* ---------------------------------------------------------------- keys on several shards */

/*
 * A blocking command whose keys live on several shards (BLPOP q1 q2 with no
 * shared hash tag, BLMOVE between shards) is run by its home.  First, while
 * its keys are locked (txn.c):
 *   probe: each owner names the first of its keys holding data (__bprobe);
 *   take:  the first such key in the command's order is popped by its owner,
 *          running the command's one-key form (BLMOVE: LPOP / RPOP at the
 *          source's owner, then LPUSH / RPUSH at the destination's, undone
 *          if that fails);
 *   none:  each owner queues the command's part (__bwait), in line with every
 *          other waiter of its keys, and only then do the locks go: no push
 *          can fall in between.
 * A part is served like any waiter, at once when one of its keys gets data,
 * in the order clients blocked: its owner pops for it and sends the reply
 * home.  The home answers the first reply and drops the other parts
 * (__bcancel); what a part served after that took (its owner answers ":0")
 * is pushed back where it came from, as is what a part served once the
 * client timed out, was unblocked or went away.  A served BLMOVE part brings
 * its element home, which pushes it to the destination.
 *
 * The home holds one connection reference per part that may still send it a
 * reply, so that neither the connection nor the slot goes while an owner may
 * name them.
 *
 * XREAD and XREADGROUP over several shards have no probe and take: their
 * attempt is the gathered run (dispatch.c), which reads every stream at once
 * as Redis does; finding nothing, with its keys still locked, each owner
 * queues its part (its `$` resolved there, then), as above.  A part served
 * reads its stream alone; one served after the answer took nothing back: an
 * XREAD's is dropped, an XREADGROUP's (its entries now pending for the
 * consumer) joins the answer, or is the answer when none came before the
 * timeout, so that nothing it delivered is lost.
 */
enum { BM_NONE, BM_WAITING, BM_LEAVING }; /* per owner: its part, as the home knows it */
enum { BM_ATTEMPT, BM_REGISTER, BM_WAIT, BM_PUSH, BM_DROP };

struct block_multi {
    int db;
    int phase;
    bool may_block;          /* not inside EXEC */
    bool move;               /* BLMOVE / BRPOPLPUSH */
    bool taken;              /* s->reply holds the answer (data or an error) */
    bool cancel;             /* timed out, unblocked or gone */
    bool cancel_error;       /* CLIENT UNBLOCK ... ERROR */
    int best;                /* probe: argv position of the first key with data, negative: of another type; 0 none */
    int dst_code;            /* BLMOVE's destination, probed the same way */
    int src_owner, dst_owner;
    int unrefs;              /* references to give back once the slot is complete */
    uint8_t *owner;          /* per shard */
    struct reply elem;       /* BLMOVE: the popped element's reply */
};

static void bm_drop(struct conn *c, struct slot *s);

void block_multi_free(struct slot *s)
{
    struct block_multi *bm = s->bmulti;
    reply_deinit(&bm->elem);
    mem_release(bm->owner);
    mem_release(bm);
    s->bmulti = NULL;
}

static int bm_key_owner(const struct resp_arg *key)
{
    return dispatch_key_shard(config_current(), key);
}

/* the attempt's locks go (inside EXEC there are none of ours) */
static void bm_release(struct conn *c, struct slot *s)
{
    if (s->txn)
        txn_finish(c->home, s->txn);
    s->txn = NULL;
    s->txid = 0;
}

/* run the command on the empty scratch store: its argument errors, or its answer when nothing is there */
static void run_on_scratch(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                           bool may_block, struct reply *out)
{
    struct call run = {
        .cmd = cmd, .argv = argv, .argc = argc, .db = 0, .resp = c->resp, .client = c->id, .conn = c,
        .store = dispatch_scratch_store(c->home), .out = out, .flags = may_block ? CALL_MAY_BLOCK : 0,
    };
    call(c->home, &run);
}

/* send one part per owner in `to`; the home's own last, so that nothing completes the slot early */
typedef int bm_part_args_fn(struct conn *c, struct slot *s, int owner, struct resp_arg *args, char *buf);

static void bm_send_to_owners(struct conn *c, struct slot *s, const bool *to, const struct command *cmd,
                              bm_part_args_fn *build)
{
    struct shard *self = c->home; /* the last part may complete the slot, and free c */
    int n = shard_count(), home = self->index, parts = 0;
    for (int sh = 0; sh < n; sh++)
        parts += to[sh];
    s->parts_left = parts;
    struct resp_arg *args = mem_alloc((size_t)(s->argc + 4) * sizeof(*args));
    char *buf = mem_alloc((size_t)(s->argc + 4) * 24);
    for (int pass = 0; pass < 2; pass++) {
        for (int sh = 0; sh < n; sh++) {
            if (!to[sh] || (pass == 0) == (sh == home))
                continue;
            int argc = build(c, s, sh, args, buf);
            if (sh == home) { /* run here, now */
                struct reply *out = &self->scratch;
                reply_clear(out);
                block_owner_run(self, cmd, argc, args, s->db, s->resp, c->id, home, c, s, sh, out);
                dispatch_part_reply(c, s, sh, out->buf, out->len);
            } else {
                handoff_send(c, sh, cmd, s->db, argc, args, s, sh);
            }
        }
    }
    mem_release(args);
    mem_release(buf);
    handoff_flush(self);
}

/* the owners of the keys the command names (waited: those it waits on -- BLMOVE's source alone) */
static void bm_owners(const struct slot *s, bool waited, bool *to)
{
    int pos_small[16];
    int *pos = s->argc <= 16 ? pos_small : mem_alloc((size_t)s->argc * sizeof(int));
    int n = command_key_positions(s->cmd, s->argc, s->argv, pos);
    if (waited && s->bmulti->move)
        n = 1;
    memset(to, 0, (size_t)shard_count() * sizeof(bool));
    for (int i = 0; i < n; i++)
        to[bm_key_owner(&s->argv[pos[i]])] = true;
    if (pos != pos_small)
        mem_release(pos);
}

static void bm_ignore_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c, (void)s, (void)part, (void)reply, (void)len;
}

/* ---- the attempt: probe, take */

/* __bprobe type skip pos key...: BLMOVE's destination is never passed over (another type is WRONGTYPE) */
static int bm_probe_args(struct conn *c, struct slot *s, int owner, struct resp_arg *args, char *buf)
{
    (void)c;
    int n = 0;
    args[n++] = (struct resp_arg){"__bprobe", 8};
    args[n++] = (s->cmd->flags & CMD_BLOCK_ZSET) ? (struct resp_arg){"zset", 4} : (struct resp_arg){"list", 4};
    args[n++] = (struct resp_arg){"0", 1};
    int pos_small[16];
    int *pos = s->argc <= 16 ? pos_small : mem_alloc((size_t)s->argc * sizeof(int));
    int nk = command_key_positions(s->cmd, s->argc, s->argv, pos);
    for (int i = 0; i < nk; i++) {
        if (bm_key_owner(&s->argv[pos[i]]) != owner)
            continue;
        char *p = buf + 24 * n;
        args[n++] = (struct resp_arg){p, (size_t)snprintf(p, 24, "%d", pos[i])};
        args[n++] = s->argv[pos[i]];
    }
    if (pos != pos_small)
        mem_release(pos);
    return n;
}

static void bm_probe_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    struct block_multi *bm = s->bmulti;
    int code = (int)reply_integer(reply, len);
    if (bm->move && part == bm->dst_owner)
        bm->dst_code = code;
    else if (code != 0 && (bm->best == 0 || abs(code) < abs(bm->best)))
        bm->best = code;
}

static void bm_taken_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    (void)part;
    reply_raw(&s->reply, reply, len);
}

/* s->reply is the answer: the locks go (if any are still ours), and every part waiting at an owner */
static void bm_answered(struct conn *c, struct slot *s)
{
    s->bmulti->taken = true;
    bm_release(c, s);
    bm_drop(c, s);
}

static void bm_none(struct conn *c, struct slot *s);

/* the element as an argument (bm->elem is its bulk reply) */
static struct resp_arg bm_element(const struct block_multi *bm)
{
    struct resp_arg elem = {"", 0};
    reply_strings(bm->elem.buf, bm->elem.len, &elem, 1);
    return elem;
}

static void bm_gather_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    (void)part;
    reply_raw(&s->gather, reply, len);
}

static void bm_move_pushed(struct conn *c, struct slot *s)
{
    struct block_multi *bm = s->bmulti;
    if (!reply_is_error(s->gather.buf, s->gather.len)) {
        reply_raw(&s->reply, bm->elem.buf, bm->elem.len);
        bm_answered(c, s);
        return;
    }
    /* the destination refused it (out of memory): it goes back where it was */
    struct shard *self = c->home;
    reply_raw(&s->reply, s->gather.buf, s->gather.len);
    const struct command *push = command_step(move_side_left(s->argc, s->argv, 3) ? CMD_S_LPUSH : CMD_S_RPUSH);
    struct resp_arg undo[3] = {command_name_arg(push), s->argv[1], bm_element(bm)};
    s->on_part = bm_ignore_part;
    s->on_done = bm_answered;
    s->parts_left = 1;
    dispatch_send_part(c, s, bm->src_owner, 0, push, 3, undo);
    handoff_flush(self);
}

/* BLMOVE: the element popped from the source (bm->elem) goes to the destination */
static void bm_move_push(struct conn *c, struct slot *s)
{
    struct shard *self = c->home;
    struct block_multi *bm = s->bmulti;
    const struct command *cmd = command_step(move_side_left(s->argc, s->argv, 4) ? CMD_S_LPUSH : CMD_S_RPUSH);
    struct resp_arg push[3] = {command_name_arg(cmd), s->argv[2], bm_element(bm)};
    reply_clear(&s->gather);
    s->on_part = bm_gather_part;
    s->on_done = bm_move_pushed;
    s->parts_left = 1;
    dispatch_send_part(c, s, bm->dst_owner, 0, cmd, 3, push);
    handoff_flush(self);
}

static void bm_elem_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    (void)part;
    reply_raw(&s->bmulti->elem, reply, len);
}

static void bm_move_popped(struct conn *c, struct slot *s)
{
    struct block_multi *bm = s->bmulti;
    if (reply_is_string(bm->elem.buf, bm->elem.len)) {
        bm_move_push(c, s);
    } else if (reply_is_error(bm->elem.buf, bm->elem.len)) {
        reply_raw(&s->reply, bm->elem.buf, bm->elem.len);
        bm_answered(c, s);
    } else { /* nothing, which the locks rule out */
        bm_none(c, s);
    }
}

static void bm_take(struct conn *c, struct slot *s)
{
    struct shard *self = c->home;
    struct block_multi *bm = s->bmulti;
    struct resp_arg args_small[8];
    struct resp_arg *args = s->argc + 2 <= 8 ? args_small : mem_alloc((size_t)(s->argc + 2) * sizeof(*args));
    const struct command *cmd = s->cmd;
    int n = one_key_form(&cmd, s->argc, s->argv, &s->argv[abs(bm->best)], bm->move, args);
    s->parts_left = 1;
    if (bm->move) { /* pop here, push there */
        reply_clear(&bm->elem);
        s->on_part = bm_elem_part;
        s->on_done = bm_move_popped;
    } else { /* its handler pops (or answers WRONGTYPE): its reply is the answer */
        s->on_part = bm_taken_part;
        s->on_done = bm_answered;
    }
    dispatch_send_part(c, s, bm_key_owner(&s->argv[abs(bm->best)]), 0, cmd, n, args);
    if (args != args_small)
        mem_release(args);
    handoff_flush(self);
}

static void bm_probed(struct conn *c, struct slot *s)
{
    struct block_multi *bm = s->bmulti;
    if (c->closed) { /* nothing is taken for a client gone */
        bm_none(c, s);
    } else if (bm->move && (bm->best < 0 || (bm->best > 0 && bm->dst_code < 0))) {
        reply_wrongtype(&s->reply);
        bm_answered(c, s);
    } else if (bm->best != 0) {
        bm_take(c, s);
    } else {
        bm_none(c, s);
    }
}

static void bm_probe(struct conn *c, struct slot *s)
{
    struct block_multi *bm = s->bmulti;
    bool *to = mem_alloc((size_t)shard_count() * sizeof(bool));
    bm->phase = BM_ATTEMPT;
    s->on_part = bm_probe_part;
    s->on_done = bm_probed;
    bm_owners(s, false, to);
    bm_send_to_owners(c, s, to, &block_probe_command, bm_probe_args);
    mem_release(to);
}

/* ---- nothing there: a part waits at each owner */

static void bm_cancel(struct conn *c, struct slot *s, bool error);

static void bm_registered(struct conn *c, struct slot *s)
{
    struct block_multi *bm = s->bmulti;
    bm_release(c, s); /* from here on the owners serve the parts */
    bm->phase = BM_WAIT;
    block_start(c, s);
    if (bm->cancel || c->closed)
        bm_cancel(c, s, bm->cancel_error);
}

/* an owner that found none of its keys in the command waits for nothing (":0"): its reference is back */
static void bm_registered_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    if (reply_integer(reply, len) != 1) {
        s->bmulti->owner[part] = BM_NONE;
        s->bmulti->unrefs++;
    }
}

/* __bwait <the command>: the owner lists it under its own keys */
static int bm_wait_args(struct conn *c, struct slot *s, int owner, struct resp_arg *args, char *buf)
{
    (void)c, (void)owner, (void)buf;
    args[0] = (struct resp_arg){"__bwait", 7};
    memcpy(args + 1, s->argv, (size_t)s->argc * sizeof(*args));
    return s->argc + 1;
}

static void bm_none(struct conn *c, struct slot *s)
{
    struct block_multi *bm = s->bmulti;
    if (!bm->may_block) { /* inside EXEC: what the command answers when there is nothing */
        run_on_scratch(c, s->cmd, s->argc, s->argv, false, &s->reply);
        bm_answered(c, s);
        return;
    }
    if (bm->cancel || c->closed) {
        bm_release(c, s);
        bm_drop(c, s);
        return;
    }
    bool *to = mem_alloc((size_t)shard_count() * sizeof(bool));
    bm_owners(s, true, to);
    for (int sh = 0; sh < shard_count(); sh++) {
        if (to[sh]) { /* a reference for each part */
            bm->owner[sh] = BM_WAITING;
            c->inflight++;
        }
    }
    bm->phase = BM_REGISTER;
    s->on_part = bm_registered_part;
    s->on_done = bm_registered;
    bm_send_to_owners(c, s, to, &block_part_command, bm_wait_args);
    mem_release(to);
}

/* ---- a part served: the answer, or data to give back */

static int bm_undo_part_id(int owner)
{
    return shard_count() + owner; /* the cancels' parts are the owners' numbers */
}

/* push back what an owner popped for us (args: the strings of its reply) */
static void bm_undo(struct conn *c, struct slot *s, int owner, const char *reply, size_t len)
{
    int max = 4 + (int)(len / 4);
    struct resp_arg *got = mem_alloc((size_t)max * sizeof(*got));
    struct resp_arg *args = mem_alloc((size_t)(max + 2) * sizeof(*args));
    int n = reply_strings(reply, len, got, max), argc = 0;
    uint64_t flags = s->cmd->flags;
    const struct command *undo = NULL;
    if (s->bmulti->move && n == 1) { /* the element, from the source */
        undo = command_step(move_side_left(s->argc, s->argv, 3) ? CMD_S_LPUSH : CMD_S_RPUSH);
        args[argc++] = command_name_arg(undo);
        args[argc++] = s->argv[1];
        args[argc++] = got[0];
    } else if ((flags & CMD_BLOCK_ZSET) && n >= 3 && n % 2 == 1) { /* key, then member score pairs */
        undo = command_step(CMD_S_ZADD);
        args[argc++] = command_name_arg(undo);
        args[argc++] = got[0];
        for (int i = 1; i + 1 < n; i += 2) {
            args[argc++] = got[i + 1];
            args[argc++] = got[i];
        }
    } else if (n >= 2) { /* key, then the elements in the order popped: pushed back last first */
        bool left = flags & CMD_BLOCK_LEFT;
        if (flags & CMD_NUMKEYS) { /* BLMPOP: its direction comes right after the keys */
            long long nk = 0;
            util_str_to_ll(s->argv[2].ptr, s->argv[2].len, &nk);
            const struct resp_arg *dir = &s->argv[3 + nk];
            left = dir->len == 4 && strncasecmp(dir->ptr, "left", 4) == 0;
        }
        undo = command_step(left ? CMD_S_LPUSH : CMD_S_RPUSH);
        args[argc++] = command_name_arg(undo);
        args[argc++] = got[0];
        for (int i = n - 1; i >= 1; i--)
            args[argc++] = got[i];
    }
    if (argc) {
        s->parts_left++;
        dispatch_send_part(c, s, owner, bm_undo_part_id(owner), undo, argc, args);
    }
    mem_release(got);
    mem_release(args);
}

static void bm_dropped(struct conn *c, struct slot *s);

/* an aggregate's header: its type and length (false: not an array or map) */
static bool reply_agg_header(const char *reply, size_t len, char *type, long long *n, size_t *header)
{
    struct rread r;
    rread_init(&r, reply, len);
    if (!rread_agg(&r, type, n) || *n < 0 || (*type != '*' && *type != '%'))
        return false;
    *header = len - rread_left(&r);
    return true;
}

/* a stream part served after the answer was decided: an XREADGROUP's entries are the consumer's now
 * (pending, or acknowledged with NOACK), so they reach it -- the answer, when it has none (timed out), else
 * one more stream in it; an XREAD's are dropped */
static void bm_stream_late(struct conn *c, struct slot *s, const char *reply, size_t len)
{
    (void)c;
    struct block_multi *bm = s->bmulti;
    if (!(s->cmd->flags & CMD_WRITE))
        return;
    if (!bm->taken) {
        bm->taken = true;
        reply_clear(&s->reply);
        reply_raw(&s->reply, reply, len);
        return;
    }
    char t1, t2;
    long long n1, n2;
    size_t h1, h2;
    if (!reply_agg_header(s->reply.buf, s->reply.len, &t1, &n1, &h1) ||
        !reply_agg_header(reply, len, &t2, &n2, &h2) || t1 != t2)
        return; /* the answer is an error: Redis's client would have had that alone */
    struct reply merged;
    reply_init(&merged);
    merged.resp = s->reply.resp;
    char head[32];
    reply_raw(&merged, head, (size_t)snprintf(head, sizeof head, "%c%lld\r\n", t1, n1 + n2));
    reply_raw(&merged, s->reply.buf + h1, s->reply.len - h1);
    reply_raw(&merged, reply + h2, len - h2);
    reply_clear(&s->reply);
    reply_raw(&s->reply, merged.buf, merged.len);
    reply_deinit(&merged);
}

static void bm_served(struct conn *c, struct slot *s, int owner, const char *reply, size_t len)
{
    struct shard *self = c->home;
    struct block_multi *bm = s->bmulti;
    bm->owner[owner] = BM_NONE; /* its reference comes back with the slot */
    bm->unrefs++;
    bool data = !reply_is_error(reply, len) && !reply_is_null(reply, len);
    if (bm->phase == BM_WAIT && !c->closed) { /* the first: the answer */
        bm->taken = true;
        if (bm->move && reply_is_string(reply, len)) { /* to the destination first */
            reply_clear(&bm->elem);
            reply_raw(&bm->elem, reply, len);
            bm->phase = BM_PUSH;
            bm_move_push(c, s);
        } else {
            reply_raw(&s->reply, reply, len);
            bm_drop(c, s);
        }
    } else if (s->cmd->flags & CMD_KEYS_STREAMS) { /* dropping: a read takes nothing back */
        if (data && !c->closed)
            bm_stream_late(c, s, reply, len);
        if (s->parts_left == 0)
            bm_dropped(c, s);
    } else { /* dropping: answered already, timed out, unblocked or gone -- what it took goes back */
        if (data)
            bm_undo(c, s, owner, reply, len);
        if (s->parts_left == 0)
            bm_dropped(c, s);
    }
    handoff_flush(self);
}

/* ---- the end: drop every part still waiting, answer */

static int bm_cancel_args(struct conn *c, struct slot *s, int owner, struct resp_arg *args, char *buf)
{
    (void)owner;
    uint64_t p = (uint64_t)(uintptr_t)s;
    memcpy(buf, &p, sizeof p);
    args[0] = (struct resp_arg){"__bcancel", 9};
    args[1] = (struct resp_arg){buf + 8, (size_t)snprintf(buf + 8, 24, "%llu", (unsigned long long)c->id)};
    args[2] = (struct resp_arg){buf, sizeof p};
    return 3;
}

static void bm_drop_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    struct block_multi *bm = s->bmulti;
    if (part >= shard_count()) /* a give-back's */
        return;
    if (reply_integer(reply, len) == 1) { /* it was still waiting: dropped */
        bm->owner[part] = BM_NONE;
        bm->unrefs++;
    } else if (bm->owner[part] == BM_WAITING) { /* served: its reply is on the way (bm_served) */
        bm->owner[part] = BM_LEAVING;
    }
}

static bool bm_any(const struct block_multi *bm, int state)
{
    for (int sh = 0; sh < shard_count(); sh++)
        if (bm->owner[sh] == state)
            return true;
    return false;
}

static void bm_dropped(struct conn *c, struct slot *s)
{
    struct block_multi *bm = s->bmulti;
    if (bm_any(bm, BM_LEAVING) || bm->phase != BM_DROP)
        return; /* bm_served comes back here */
    if (!bm->taken) {
        if (bm->cancel_error)
            reply_error(&s->reply, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
        else
            reply_null_array(&s->reply); /* timed out: BLMOVE's too (Redis 7.0) */
    }
    int unrefs = bm->unrefs;
    block_finish(c, s);
    while (unrefs-- > 0) /* (this may free c: nothing after it) */
        conn_unref(c);
}

static void bm_drop(struct conn *c, struct slot *s)
{
    struct block_multi *bm = s->bmulti;
    bm->phase = BM_DROP;
    s->on_part = bm_drop_part;
    s->on_done = bm_dropped;
    bool *to = mem_alloc((size_t)shard_count() * sizeof(bool));
    bool any = false;
    for (int sh = 0; sh < shard_count(); sh++) {
        to[sh] = bm->owner[sh] == BM_WAITING;
        any |= to[sh];
    }
    if (any && shard_running(c->home)) {
        bm_send_to_owners(c, s, to, &block_cancel_command, bm_cancel_args);
    } else if (!any && s->parts_left == 0) {
        bm_dropped(c, s);
    }
    mem_release(to);
}

static void bm_cancel(struct conn *c, struct slot *s, bool error)
{
    struct block_multi *bm = s->bmulti;
    s->block_cancelling = true;
    bm->cancel = true;
    bm->cancel_error = error;
    if (bm->phase == BM_WAIT)
        bm_drop(c, s);
    /* else the attempt under way sees it when it finds nothing, or a BLMOVE under way answers */
}

/* keys on several shards: every lock is held (the command's transaction, or EXEC's) */
void block_run_multi(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv)
{
    struct slot *s = dispatch_slot_create(c, cmd);
    s->barrier = true;
    dispatch_argv_copy(argc, argv, &s->argv, &s->argv_bytes);
    s->argc = argc;
    struct block_multi *bm = mem_calloc(1, sizeof(*bm));
    s->bmulti = bm;
    bm->db = c->db;
    bm->may_block = c->exec_input == NULL; /* EXEC feeds its commands from exec_input */
    bm->move = cmd->flags & CMD_BLOCK_MOVE;
    bm->owner = mem_calloc((size_t)shard_count(), 1);
    reply_init(&bm->elem);
    if (bm->move) {
        bm->src_owner = bm_key_owner(&s->argv[1]);
        bm->dst_owner = bm_key_owner(&s->argv[2]);
    }
    long long ms = 0;
    s->cursor = block_timeout(cmd, argc, argv, &ms) ? (uint64_t)ms : 0;
    if (bm->move && !dispatch_memory_ok(c->home, config_current(), cmd, argc, argv, &s->reply)) { /* the home's budget, as gathers */
        bm_answered(c, s);
        return;
    }
    bm_probe(c, s);
}

void block_gathered_wait(struct conn *c, struct slot *s)
{
    struct block_multi *bm = mem_calloc(1, sizeof(*bm));
    s->bmulti = bm;
    bm->db = s->db;
    bm->may_block = true;
    bm->owner = mem_calloc((size_t)shard_count(), 1);
    reply_init(&bm->elem);
    long long ms = 0;
    s->cursor = block_timeout(s->cmd, s->argc, s->argv, &ms) ? (uint64_t)ms : 0;
    reply_clear(&s->reply);
    bm_none(c, s);
}

void block_run(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv, int owner)
{
    struct shard *self = c->home;
    if (SHARD_STORE_SHARED || owner == -2)
        owner = self->index; /* one store; or no keys (an arity error the handler answers) */
    if (owner == -1 && (cmd->flags & CMD_KEYS_STREAMS)) { /* XREAD over several shards: gathered first */
        if (c->txid)
            dispatch_run_multi_shard(c, cmd, argc, argv);
        else
            txn_run_command(c, cmd, argc, argv);
        return;
    }
    if (owner == -1) { /* keys on several shards: Redis's answer to bad arguments first (the empty store finds them) */
        struct reply *out = &self->scratch;
        reply_clear(out);
        run_on_scratch(c, cmd, argc, argv, true, out);
        if (reply_is_error(out->buf, out->len)) {
            reply_raw(dispatch_reply_target(c), out->buf, out->len);
            stats_cmd_rejected(&self->stats, cmd, "-ERR", 4);
        } else if (c->txid) {
            block_run_multi(c, cmd, argc, argv); /* inside EXEC: its keys are held */
        } else {
            txn_run_command(c, cmd, argc, argv); /* lock them, then block_run_multi */
        }
        return;
    }
    long long ms = 0;
    struct slot *s = dispatch_slot_create(c, cmd);
    s->barrier = true;
    s->on_part = blocked_part;
    s->on_wait = blocked_wait;
    s->on_done = blocked_done;
    s->parts_left = 1;
    s->step = owner;
    s->cursor = block_timeout(cmd, argc, argv, &ms) ? (uint64_t)ms : 0;
    dispatch_send_part(c, s, owner, 0, cmd, argc, argv);
}
