/*
 * txn: atomic multi-shard work -- key locks through the handoff, the
 * commands whose keys span shards, and MULTI / EXEC / DISCARD / WATCH /
 * UNWATCH (multi.h).
 *
 * Key locks.  Work whose keys live on several shards is made atomic and
 * isolated with key locks (keylock.h): its home shard locks the keys on
 * each shard involved, one lock unit (shard, database) after the other in
 * ascending order -- the home's own directly, the others with __lock
 * through the handoff -- then runs, with the transaction's id on every
 * part so that its parts pass the locks, and once its replies are complete
 * releases every lock (__unlock).  Meanwhile any other command naming a
 * locked key waits: a local one stops its connection's parsing until the
 * key comes free, a remote one is parked at its owner (handoff.c) and its
 * connection stops parsing until its reply comes back.  A lock request for
 * a taken key queues at the owner, which tells the transaction's home
 * (__granted) once it holds the keys; a grant can overtake its +QUEUED
 * reply, so early grants are kept.  No thread ever blocks, and keys coming
 * free on a shard are noticed in its loop (txn_locks_changed).
 *
 * Deadlock-free: a transaction takes a unit's keys all at once or not at
 * all and holds only units below the one it waits for, so no cycle forms.
 * Single-shard commands pay one check of an empty table.  The lock phase is
 * a barrier for its connection (a later command of the same pipeline cannot
 * overtake it), and it starts only once the connection's earlier commands
 * are done (one of them, waiting for a key another transaction holds, must
 * not sit behind our lock requests while we hold keys).  A split command
 * (MSET MGET DEL ...) sends each shard its part with the lock request
 * instead, which runs there once its keys are locked (txn_run_split).  A
 * command whose keys are only known once its value is read (SORT's BY/GET
 * patterns, CMD_PATTERN_KEYS) locks every shard's keyspace in turn, as a
 * keyspace-wide write does, and gathers them under it.
 *
 * MULTI queues a connection's commands (as RESP, answering +QUEUED); EXEC
 * locks every key they name and every key the connection WATCHes, asks the
 * watched keys' owners whether any was touched (watch.h) and, if none was,
 * puts the queued commands back in front of the connection's input with the
 * transaction's id: they run by their usual routes, their replies follow
 * the array header in order, and a marker slot after the last one releases
 * the locks once every reply is in.  WATCH registers the keys with their
 * owners before it answers; owners mark watches touched when a command
 * reports that it changed a key (call.h), as Redis's signalModifiedKey does.
 * MONITOR sees EXEC once its last queued command is dispatched, after
 * theirs, as in Redis (or at once, when it answers at once).
 */
#include "txn.h"

#include "shard_internal.h"
#include "conn_internal.h"
#include "reply_slot.h"
#include "dispatch.h"
#include "block.h"
#include "handoff.h"

#include "percore/aof.h"
#include "percore/config.h"
#include "percore/keylock.h"
#include "percore/mem.h"
#include "percore/monitor.h"
#include "percore/multi.h"
#include "percore/reply.h"
#include "percore/script.h"
#include "percore/stats.h"
#include "percore/store.h"
#include "percore/util.h"
#include "percore/watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- key locks */

struct txn_key {
    int db;
    int shard;
    size_t off;              /* in the set's bytes */
    size_t len;
};

/* keys with their database and owner (a transaction's, a connection's watched ones) */
struct keyset {
    int n;
    int cap;
    struct txn_key *keys;
    char *bytes;
    size_t len;
    size_t bcap;
};

typedef void txn_locked_fn(struct conn *c, struct slot *s);

struct txn {
    uint64_t id;
    struct keyset ks;        /* sorted by (shard, db) before locking */
    int next;                /* the first key of the unit to lock next; nkeys: all held */
    txn_locked_fn *locked;   /* every key held: what runs (on the lock slot) */
    int argc;                /* a single command's copy (txn_run_command) */
    int nextra;              /* a script's (txn_run_script_whole): keys it named, after its argc arguments */
    struct resp_arg *argv;
    char *bytes;
    struct conn *conn;       /* while waiting for a grant */
    struct slot *slot;
    struct txn *waiting_next; /* the shard's list of transactions waiting for a grant */
    bool waiting;
    bool queued;             /* the last __lock answered +QUEUED */
    bool deferred;           /* waits for its connection's earlier commands to finish */
    /* a split command (txn_run_split): each shard's part, sent with its lock request */
    bool split;
    bool whole;              /* a keyspace-wide write: every shard's every key (KEYLOCK_ALL) */
    bool own_queued;         /* our own shard's keys were queued for: held once granted */
    int nparts;
    int next_part;
    struct txn_part *parts;  /* ascending by shard, as units are locked */
    const struct command *cmd;
    slot_part_fn *merge_part; /* the split slot's own merge */
    slot_done_fn *merge_done;
};

struct txn_part {
    int shard;
    int argc;
    struct resp_arg *argv;
    char *bytes;
};

static struct txn *txn_create(struct shard *self)
{
    struct txn *t = mem_calloc(1, sizeof(*t));
    t->id = ++self->txn_seq * (uint64_t)shard_count() + (uint64_t)self->index;
    return t;
}

static void keyset_push(struct keyset *ks, int db, int shard, const char *key, size_t len)
{
    if (ks->n == ks->cap) {
        ks->cap = ks->cap ? ks->cap * 2 : 8;
        ks->keys = mem_realloc(ks->keys, (size_t)ks->cap * sizeof(*ks->keys));
    }
    if (ks->len + len > ks->bcap || !ks->bytes) {
        ks->bcap = (ks->len + len) * 2 + 64;
        ks->bytes = mem_realloc(ks->bytes, ks->bcap);
    }
    memcpy(ks->bytes + ks->len, key, len);
    ks->keys[ks->n++] = (struct txn_key){db, shard, ks->len, len};
    ks->len += len;
}

static void keyset_add(struct keyset *ks, const struct config *cfg, int db, const struct resp_arg *key)
{
    /* under the global lock every key is the home's (one store, one table of watches) */
    int shard = SHARD_STORE_SHARED ? shard_self->index : dispatch_key_shard(cfg, key);
    keyset_push(ks, db, shard, key->ptr, key->len);
}

static void keyset_add_all(struct keyset *ks, const struct keyset *from)
{
    for (int i = 0; i < from->n; i++)
        keyset_push(ks, from->keys[i].db, from->keys[i].shard, from->bytes + from->keys[i].off, from->keys[i].len);
}

static void keyset_clear(struct keyset *ks)
{
    mem_release(ks->keys);
    mem_release(ks->bytes);
    memset(ks, 0, sizeof(*ks));
}

static void keyset_add_command(struct keyset *ks, const struct config *cfg, const struct command *cmd, int argc,
                               const struct resp_arg *argv, int db)
{
    int pos_small[16];
    int *pos = argc <= 16 ? pos_small : mem_alloc((size_t)argc * sizeof(int));
    int n = command_key_positions(cmd, argc, argv, pos);
    for (int i = 0; i < n; i++)
        keyset_add(ks, cfg, db, &argv[pos[i]]);
    if (pos != pos_small)
        mem_release(pos);
}

static int key_unit_cmp(const void *a, const void *b)
{
    const struct txn_key *x = a, *y = b;
    if (x->shard != y->shard)
        return x->shard < y->shard ? -1 : 1;
    return x->db < y->db ? -1 : x->db > y->db;
}

/* by (shard, database): the order units are locked in */
static void keyset_sort(struct keyset *ks)
{
    if (ks->n > 1)
        qsort(ks->keys, (size_t)ks->n, sizeof(*ks->keys), key_unit_cmp);
}

/* keys [from, end) of a sorted set are one unit: the same shard and database */
static int unit_end(const struct keyset *ks, int from)
{
    int end = from + 1;
    while (end < ks->n && ks->keys[end].shard == ks->keys[from].shard && ks->keys[end].db == ks->keys[from].db)
        end++;
    return end;
}

/* "<cmd> <id> [home] key..." for the unit [from, end) into args (argc returned); idbuf holds 2 numbers */
static int unit_args(const struct keyset *ks, uint64_t id, int from, int end, const char *cmd, int home,
                     char *idbuf, size_t idcap, struct resp_arg *args)
{
    int n = 0;
    args[n].ptr = cmd;
    args[n++].len = strlen(cmd);
    args[n].ptr = idbuf;
    args[n++].len = (size_t)snprintf(idbuf, idcap / 2, "%llu", (unsigned long long)id);
    if (home >= 0) {
        args[n].ptr = idbuf + idcap / 2;
        args[n++].len = (size_t)snprintf(idbuf + idcap / 2, idcap / 2, "%d", home);
    }
    for (int i = from; i < end; i++) {
        args[n].ptr = ks->bytes + ks->keys[i].off;
        args[n++].len = ks->keys[i].len;
    }
    return n;
}

/* the keys of the unit [from, end) as keylock takes them, into keys (room for end - from); their number */
static int unit_keys(const struct keyset *ks, int from, int end, struct keylock_key *keys)
{
    for (int i = from; i < end; i++)
        keys[i - from] = (struct keylock_key){ks->bytes + ks->keys[i].off, ks->keys[i].len};
    return end - from;
}

/* FLUSHALL FLUSHDB SWAPDB, and SAVE BGSAVE (their cut): they lock whole keyspaces */
static bool keyspace_wide(const struct command *cmd)
{
    return cmd->route == ROUTE_FANOUT_OK && (cmd->flags & (CMD_WRITE | CMD_LOCKS_ALL));
}

/* the AOF: where t's unlocks go, before they leave (the writer writes t once they are all in, aof.h) */
static void txn_note_end(struct shard *self, const struct txn *t)
{
    int n = shard_count();
    int *units = mem_calloc((size_t)n * 2, sizeof(int)), *shards = units + n;
    for (int i = 0; i < n; i++) {
        shards[i] = i;
        units[i] = t->whole ? 1 : 0;
    }
    for (int from = 0; from < t->ks.n; from = unit_end(&t->ks, from))
        units[t->ks.keys[from].shard]++;
    aof_feed_txn_end(self->index, t->id, n, shards, units);
    mem_release(units);
}

static void txn_unlock_all(struct shard *self, struct txn *t)
{
    if (self->propagating && !SHARD_STORE_SHARED)
        txn_note_end(self, t);
    if (t->whole) {
        char idbuf[24];
        struct resp_arg args[2] = {command_name_arg(command_internal(CMD_I_UNLOCK)), {idbuf, 0}};
        args[1].len = (size_t)snprintf(idbuf, sizeof idbuf, "%llu", (unsigned long long)t->id);
        for (int i = 0; i < shard_count(); i++) {
            if (i == self->index)
                keylock_release(self->locks, t->id, 0, KEYLOCK_ALL, NULL);
            else if (shard_running(self))
                handoff_send_system(self, i, command_internal(CMD_I_UNLOCK), 0, 2, args);
        }
    }
    const struct keyset *ks = &t->ks;
    struct resp_arg *args = mem_alloc((size_t)(ks->n + 3) * sizeof(*args));
    struct keylock_key *keys = mem_alloc((size_t)(ks->n + 1) * sizeof(*keys));
    char idbuf[64];
    for (int from = 0; from < ks->n;) {
        int end = unit_end(ks, from);
        if (ks->keys[from].shard == self->index) {
            keylock_release(self->locks, t->id, ks->keys[from].db, unit_keys(ks, from, end, keys), keys);
        } else if (shard_running(self)) {
            int n = unit_args(ks, t->id, from, end, command_internal(CMD_I_UNLOCK)->name, -1, idbuf, sizeof idbuf, args);
            handoff_send_system(self, ks->keys[from].shard, command_internal(CMD_I_UNLOCK), ks->keys[from].db, n, args);
        }
        from = end;
    }
    mem_release(keys);
    mem_release(args);
}

static void txn_free(struct txn *t)
{
    for (int i = 0; i < t->nparts; i++) {
        mem_release(t->parts[i].argv);
        mem_release(t->parts[i].bytes);
    }
    mem_release(t->parts);
    keyset_clear(&t->ks);
    mem_release(t->argv);
    mem_release(t->bytes);
    mem_release(t);
}

static void txn_unwait(struct shard *self, struct txn *t)
{
    if (!t->waiting)
        return;
    for (struct txn **p = &self->txn_waiting; *p; p = &(*p)->waiting_next) {
        if (*p == t) {
            *p = t->waiting_next;
            break;
        }
    }
    t->waiting = false;
}

void txn_finish(struct shard *self, struct txn *t)
{
    txn_unwait(self, t);
    txn_unlock_all(self, t); /* an __unlock of keys it does not hold (yet) is harmless */
    txn_free(t);
}

static void txn_wait(struct shard *self, struct conn *c, struct slot *s)
{
    struct txn *t = s->txn;
    t->conn = c;
    t->slot = s;
    if (!t->waiting) {
        t->waiting = true;
        t->waiting_next = self->txn_waiting;
        self->txn_waiting = t;
    }
}

static void txn_lock_next(struct conn *c, struct slot *s);

static void txn_lock_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    (void)part;
    s->txn->queued = len >= 7 && memcmp(reply, "+QUEUED", 7) == 0;
}

/* a grant that came before its +QUEUED: taken (true) */
static bool txn_take_early_grant(struct shard *self, uint64_t txid)
{
    for (size_t i = 0; i < self->early_grants_len; i++) {
        if (self->early_grants[i] == txid) {
            self->early_grants[i] = self->early_grants[--self->early_grants_len];
            return true;
        }
    }
    return false;
}

static void txn_lock_done(struct conn *c, struct slot *s)
{
    struct txn *t = s->txn;
    if (t->queued && !txn_take_early_grant(c->home, t->id)) /* that shard tells us (__granted) when we hold it */
        txn_wait(c->home, c, s);
    else
        txn_lock_next(c, s);
}

static void split_next(struct conn *c, struct slot *s);

/* an EXEC with a keyspace-wide write: every shard's keyspace in ascending order (t->next the shard), every
 * key it names included */
static void lock_whole_next(struct conn *c, struct slot *s)
{
    struct shard *self = c->home;
    struct txn *t = s->txn;
    while (t->next < shard_count()) {
        int sh = t->next++; /* held once it answers +OK, or once granted */
        if (sh == self->index) {
            if (keylock_try(self->locks, t->id, 0, KEYLOCK_ALL, NULL))
                continue;
            keylock_enqueue(self->locks, t->id, self->index, 0, KEYLOCK_ALL, NULL);
            txn_wait(self, c, s);
            return;
        }
        char idbuf[48];
        struct resp_arg args[3];
        int argc = unit_args(&t->ks, t->id, 0, 0, command_internal(CMD_I_LOCK)->name, self->index, idbuf,
                             sizeof idbuf, args);
        s->parts_left = 1;
        s->db = 0;
        handoff_send(c, sh, command_internal(CMD_I_LOCK), 0, argc, args, s, sh);
        return; /* txn_lock_done goes on */
    }
    s->on_part = NULL;
    s->on_done = NULL;
    t->locked(c, s);
}

static void txn_lock_next(struct conn *c, struct slot *s)
{
    struct shard *self = c->home;
    struct txn *t = s->txn;
    if (t->split) {
        split_next(c, s);
        return;
    }
    if (t->whole) {
        lock_whole_next(c, s);
        return;
    }
    const struct keyset *ks = &t->ks;
    struct resp_arg *args = mem_alloc((size_t)(ks->n + 3) * sizeof(*args));
    struct keylock_key *keys = mem_alloc((size_t)(ks->n + 1) * sizeof(*keys));
    char idbuf[64];
    while (t->next < ks->n) {
        int from = t->next, end = unit_end(ks, from);
        int sh = ks->keys[from].shard, db = ks->keys[from].db;
        t->next = end; /* held once it answers +OK, or once granted */
        if (sh == self->index) {
            int n = unit_keys(ks, from, end, keys);
            if (keylock_try(self->locks, t->id, db, n, keys))
                continue;
            keylock_enqueue(self->locks, t->id, self->index, db, n, keys);
            mem_release(keys);
            mem_release(args);
            txn_wait(self, c, s);
            return;
        }
        int argc = unit_args(ks, t->id, from, end, command_internal(CMD_I_LOCK)->name, self->index, idbuf, sizeof idbuf, args);
        s->parts_left = 1;
        s->db = db;
        handoff_send(c, sh, command_internal(CMD_I_LOCK), db, argc, args, s, sh);
        mem_release(keys);
        mem_release(args);
        return; /* txn_lock_done goes on */
    }
    mem_release(keys);
    mem_release(args);
    s->on_part = NULL;
    s->on_done = NULL;
    t->locked(c, s);
}

void txn_granted(struct shard *self, uint64_t txid)
{
    struct txn *t = self->txn_waiting;
    while (t && t->id != txid)
        t = t->waiting_next;
    if (!t) {
        /* the grant overtook its +QUEUED (a shard drains its inbox before its returning batches),
         * or its connection went away (the release unlocked it): keep it a while */
        if (self->early_grants_len == EARLY_GRANTS_MAX)
            memmove(self->early_grants, self->early_grants + 1, --self->early_grants_len * sizeof(uint64_t));
        self->early_grants[self->early_grants_len++] = txid;
        return;
    }
    txn_unwait(self, t);
    t->queued = false;
    if (!t->conn->closed || shard_running(self)) /* it runs and frees its keys */
        txn_lock_next(t->conn, t->slot);
    handoff_flush(self);
}

const struct command txn_granted_command = {"__granted", NULL, 2, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, ""};

static void txn_grant(void *arg, uint64_t txid, int home)
{
    struct shard *self = arg;
    if (home != self->index && handoff_lockrun_granted(self, txid))
        return; /* a split command's part waits here for these keys: it runs after the queue walk */
    if (home == self->index) { /* after the queue walk: granting may lock and queue again */
        if (self->granted_local_len == self->granted_local_cap) {
            self->granted_local_cap = self->granted_local_cap ? self->granted_local_cap * 2 : 8;
            self->granted_local = mem_realloc(self->granted_local,
                                              (size_t)self->granted_local_cap * sizeof(*self->granted_local));
        }
        self->granted_local[self->granted_local_len++] = txid;
        return;
    }
    char idbuf[32];
    struct resp_arg args[2] = {{"__granted", 9}, {idbuf, 0}};
    args[1].len = (size_t)snprintf(idbuf, sizeof idbuf, "%llu", (unsigned long long)txid);
    handoff_send_system(self, home, &txn_granted_command, 0, 2, args);
}

void txn_locks_changed(struct shard *self)
{
    uint64_t gen = keylock_generation(self->locks);
    if (gen == self->locks_seen)
        return;
    self->locks_seen = gen;
    /* commands that waited for these keys go before the lock requests queued since */
    if (self->lock_waiters)
        conn_retry_lock_waiters(self);
    if (self->parked_head)
        handoff_run_parked(self);
    if (block_waiting(self->blockers)) { /* keys a transaction wrote serve their waiters once it let go */
        shard_store_lock();
        block_serve_ready(self);
        shard_store_unlock();
    }
    keylock_hold_new(self->locks, self->parked_head || self->lock_waiters);
    if (keylock_waiting(self->locks)) {
        keylock_grant_waiting(self->locks, txn_grant, self);
        for (size_t i = 0; i < self->granted_local_len; i++)
            txn_granted(self, self->granted_local[i]);
        self->granted_local_len = 0;
        if (self->lockrun_granted)
            handoff_run_granted(self);
    }
}

/* take the locks of t for c, then t->locked runs on the lock slot (a barrier with no reply of its own) */
static void txn_begin(struct conn *c, struct txn *t, txn_locked_fn *locked)
{
    keyset_sort(&t->ks);
    t->locked = locked;
    struct slot *s = dispatch_slot_create(c, command_internal(CMD_I_LOCK));
    s->barrier = true;
    s->on_part = txn_lock_part;
    s->on_done = txn_lock_done;
    s->txn = t;
    t->deferred = c->slot_head != s;
    if (!t->deferred)
        txn_lock_next(c, s);
}

void txn_start_deferred(struct conn *c)
{
    struct slot *s = c->slot_head;
    if (s && s == c->slot_tail && s->txn && s->txn->deferred && !c->closed) {
        s->txn->deferred = false;
        txn_lock_next(c, s);
    }
}

/* a single command: every lock is held, run it; its own slot takes the transaction over */
static void single_locked(struct conn *c, struct slot *s, bool script)
{
    struct txn *t = s->txn;
    s->txn = NULL;
    c->txid = t->id;
    const struct command *cmd = command_lookup(t->argv[0].ptr, t->argv[0].len);
    if (script)
        dispatch_run_script_whole(c, cmd, t->argc, t->argv, t->nextra);
    else
        dispatch_run_multi_shard(c, cmd, t->argc, t->argv);
    c->txid = 0;
    struct slot *cmd_slot = c->slot_tail != s ? c->slot_tail : NULL;
    if (cmd_slot && !cmd_slot->complete && cmd_slot->txid == t->id)
        cmd_slot->txn = t;
    else /* it completed at once (an error before any part left) */
        txn_finish(c->home, t);
    dispatch_slot_complete(c, s);
}

static void command_locked(struct conn *c, struct slot *s) { single_locked(c, s, false); }

static void script_whole_locked(struct conn *c, struct slot *s) { single_locked(c, s, true); }

void txn_run_script_whole(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                          int nextra)
{
    (void)cmd;
    struct txn *t = txn_create(c->home);
    t->argc = argc;
    t->nextra = nextra;
    dispatch_argv_copy(argc + nextra, argv, &t->argv, &t->bytes);
    t->whole = true; /* the keys it names are known only as it runs: every shard's keyspace */
    txn_begin(c, t, script_whole_locked);
}

void txn_run_command(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv)
{
    struct txn *t = txn_create(c->home);
    t->argc = argc;
    dispatch_argv_copy(argc, argv, &t->argv, &t->bytes);
    /* the keys SORT's patterns form are known once its value is read: every shard's keyspace is locked */
    t->whole = dispatch_forms_pattern_keys(cmd, argc, argv);
    if (!t->whole)
        keyset_add_command(&t->ks, config_current(), cmd, argc, t->argv, c->db);
    txn_begin(c, t, command_locked);
}

/*
 * Split commands (MSET MGET DEL EXISTS ...) lock and run in one step per
 * shard: each shard's part goes with its lock request, in ascending shard
 * order, and runs there as soon as its keys are the transaction's -- at once,
 * or, when the request queued, once granted, its reply then coming home as a
 * delivery.  Strict two-phase locking: nothing is released before the last
 * part ran, so no other client sees some parts and not the others, and the
 * transaction waits only for shards above those it holds (no deadlock).  It
 * saves a round trip per command over locking first, and holds the locks
 * that much less.
 */
void txn_keep_part(struct txn *t, int shard, int argc, const struct resp_arg *argv)
{
    t->parts = mem_realloc(t->parts, (size_t)(t->nparts + 1) * sizeof(*t->parts));
    struct txn_part *p = &t->parts[t->nparts++];
    p->shard = shard;
    p->argc = argc;
    dispatch_argv_copy(argc, argv, &p->argv, &p->bytes);
}

static int part_shard_cmp(const void *a, const void *b)
{
    const struct txn_part *x = a, *y = b;
    return x->shard < y->shard ? -1 : x->shard > y->shard;
}

/* the keys of a part of cmd, side by side (keys: room for argc) */
static int part_keys(const struct command *cmd, int argc, const struct resp_arg *argv, struct keylock_key *keys)
{
    int pos_small[16];
    int *pos = argc <= 16 ? pos_small : mem_alloc((size_t)argc * sizeof(int));
    int n = command_key_positions(cmd, argc, argv, pos);
    for (int i = 0; i < n; i++)
        keys[i] = (struct keylock_key){argv[pos[i]].ptr, argv[pos[i]].len};
    if (pos != pos_small)
        mem_release(pos);
    return n < 0 ? 0 : n;
}

bool txn_lock_split_part(struct shard *self, uint64_t txid, int home, const struct command *cmd, int argc,
                         const struct resp_arg *argv, int db)
{
    struct keylock_key keys_small[16];
    struct keylock_key *keys = argc <= 16 ? keys_small : mem_alloc((size_t)argc * sizeof(*keys));
    int n = KEYLOCK_ALL;
    const struct keylock_key *named = NULL;
    if (!keyspace_wide(cmd)) {
        n = part_keys(cmd, argc, argv, keys);
        named = keys;
    }
    bool held = keylock_try(self->locks, txid, db, n, named);
    if (!held) {
        keylock_enqueue(self->locks, txid, home, db, n, named);
        STATS_ADD(&self->stats, handoff_lock_queued, 1);
    }
    if (keys != keys_small)
        mem_release(keys);
    return held;
}

/* a part's reply; TXN_LOCK_QUEUED: its keys were queued for, its reply comes once they are ours */
static void split_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    if (len == sizeof TXN_LOCK_QUEUED - 1 && memcmp(reply, TXN_LOCK_QUEUED, len) == 0) {
        s->parts_left++; /* the delivery (block_served), which gives this reference back */
        c->inflight++;
        return;
    }
    s->txn->merge_part(c, s, part, reply, len);
}

static void split_part_done(struct conn *c, struct slot *s)
{
    split_next(c, s);
}

/*
 * A multi-shard command or EXEC that needs a shard whose script is busy is
 * refused whole before anything of it runs, as Redis answers what it reads
 * while busy: one part or lock request sent there would wait for the
 * script's end, while the others ran alone.  A shard of ks (whole: every
 * shard) whose script is busy, -1 none (one load while no script is busy).
 */
static int keyset_busy_shard(const struct keyset *ks, bool whole)
{
    if (__builtin_expect(atomic_load_explicit(&script_busy_shards, memory_order_relaxed) == 0, 1))
        return -1;
    int n = whole ? shard_count() : ks->n;
    for (int i = 0; i < n; i++) {
        int sh = whole ? i : ks->keys[i].shard;
        if (atomic_load(&shard_at(sh)->script_busy))
            return sh;
    }
    return -1;
}

/* before a split command's first part runs: -BUSY (the merge's error) when it needs a busy shard */
static bool split_refused_busy(struct conn *c, struct slot *s)
{
    struct txn *t = s->txn;
    int sh = c->repl_master ? -1 : keyset_busy_shard(&t->ks, t->whole); /* a replica's master waits */
    if (sh < 0)
        return false;
    char err[sizeof(FUNCTION_BUSY_ERROR) + 3];
    int n = snprintf(err, sizeof err, "-%s\r\n", script_busy_error(sh));
    s->rejected = true; /* Redis's rejected call */
    t->merge_part(c, s, sh, err, (size_t)n);
    t->merge_done(c, s);
    return true;
}

/* lock and run the next shard's part; after the last, the merge completes the slot (its locks go) */
static void split_next(struct conn *c, struct slot *s)
{
    struct shard *self = c->home;
    struct txn *t = s->txn;
    if (t->next_part == 0 && !t->own_queued && split_refused_busy(c, s))
        return;
    if (t->next_part == t->nparts) {
        t->merge_done(c, s);
        return;
    }
    struct txn_part *p = &t->parts[t->next_part];
    if (p->shard != self->index) {
        t->next_part++;
        s->parts_left = 1;
        handoff_send_locking(c, p->shard, t->cmd, s->db, p->argc, p->argv, s, p->shard);
        handoff_flush(self);
        return;
    }
    if (!t->own_queued && !txn_lock_split_part(self, t->id, self->index, t->cmd, p->argc, p->argv, s->db)) {
        t->own_queued = true; /* txn_granted brings us back here */
        txn_wait(self, c, s);
        return;
    }
    t->own_queued = false;
    t->next_part++;
    s->parts_left = 1;
    dispatch_send_part(c, s, self->index, p->shard, t->cmd, p->argc, p->argv); /* runs now: may complete s */
}

void txn_run_split(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv)
{
    struct txn *t = txn_create(c->home);
    t->split = true;
    t->whole = keyspace_wide(cmd);
    t->cmd = cmd;
    keyset_add_command(&t->ks, config_current(), cmd, argc, argv, c->db);
    keyset_sort(&t->ks);
    struct slot *s = dispatch_split_kept(c, cmd, argc, argv, t);
    qsort(t->parts, (size_t)t->nparts, sizeof(*t->parts), part_shard_cmp);
    t->merge_part = s->on_part;
    t->merge_done = s->on_done;
    s->on_part = split_part;
    s->on_done = split_part_done;
    s->barrier = true; /* the connection's later commands wait for its locks */
    s->txn = t;
    s->txid = t->id;
    t->deferred = c->slot_head != s;
    if (!t->deferred)
        split_next(c, s);
}

bool txn_keys_locked(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv, int db,
                     uint64_t txid)
{
    if (cmd->flags & CMD_INTERNAL)
        return false;
    if (cmd->first_key == 0) /* keyspace-wide writes wait for every lock here (inside EXEC: its own) */
        return txid == 0 && keyspace_wide(cmd);
    int pos_small[16];
    int *pos = argc <= 16 ? pos_small : mem_alloc((size_t)argc * sizeof(int));
    int n = command_key_positions(cmd, argc, argv, pos);
    bool locked = false;
    const struct config *cfg = config_current();
    for (int i = 0; i < n && !locked; i++) {
        const struct resp_arg *key = &argv[pos[i]];
        /* a key of another shard is its owner's to hold back (its part is parked there while the key is
         * taken): here, under a whole-keyspace lock (BGSAVE's, FLUSHALL's), it would look taken and
         * wait for a lock whose holder may be waiting for this very transaction's keys */
        if (!SHARD_STORE_SHARED && dispatch_key_shard(cfg, key) != self->index)
            continue;
        locked = keylock_holds_other(self->locks, txid, db, key->ptr, key->len);
    }
    if (pos != pos_small)
        mem_release(pos);
    return locked;
}

/* ---------------------------------------------------------------- owners: watched keys */

static bool key_exists(void *arg, int db, const char *key, size_t len)
{
    struct shard *self = arg;
    return store_peek(self->store, db, key, len, self->now, NULL) != NULL;
}

/* SWAPDB a b: a watched key of either database changes when it exists in either */
struct swap_pair {
    struct shard *self;
    int a, b;
};

static bool key_exists_in_pair(void *arg, int db, const char *key, size_t len)
{
    (void)db;
    const struct swap_pair *p = arg;
    return key_exists(p->self, p->a, key, len) || key_exists(p->self, p->b, key, len);
}

void txn_note_replacing(struct shard *self, int db, int db2)
{
    if (db2 < 0) { /* FLUSHALL (-1), FLUSHDB */
        watch_touch_existing(self->watches, db, key_exists, self);
    } else if (db != db2) {
        struct swap_pair pair = {self, db, db2};
        watch_touch_existing(self->watches, db, key_exists_in_pair, &pair);
        watch_touch_existing(self->watches, db2, key_exists_in_pair, &pair);
    }
}

/* ---------------------------------------------------------------- MULTI / EXEC / WATCH */

struct multi {
    bool failed;             /* a command was refused while queued: EXEC answers EXECABORT */
    int count;               /* commands queued */
    size_t argv_mem;         /* their arguments' bytes and a pointer each (Redis's multi-mem) */
    uint64_t flags;          /* their command flags, or'ed (CLIENT PAUSE WRITE holds an EXEC that writes) */
    bool whole;              /* one is a keyspace-wide write: EXEC locks every shard's keyspace */
    int db;                  /* the database the next queued command will run in (SELECT is queued too) */
    struct reply queue;      /* the queued commands, as RESP */
    struct keyset keys;      /* every key they name */
    struct keyset watched;   /* WATCHed keys (with their owners) */
    struct txn *exec;        /* EXEC's transaction while its commands run */
    char exec_name[4];       /* EXEC as the client spelled it (its only argument), for MONITOR */
    const struct command *exec_cmd; /* EXEC's table entry, for MONITOR */
};

static struct multi *multi_of(struct conn *c)
{
    if (!c->multi) {
        c->multi = mem_calloc(1, sizeof(*c->multi));
        reply_init(&c->multi->queue);
    }
    return c->multi;
}

static void multi_clear_queue(struct conn *c)
{
    struct multi *m = c->multi;
    c->in_multi = false;
    m->failed = false;
    m->count = 0;
    m->argv_mem = 0;
    m->flags = 0;
    m->whole = false;
    reply_clear(&m->queue);
    keyset_clear(&m->keys);
}

/*
 * EXEC's line to MONITOR (CMD_FEEDS_MONITOR): Redis's call() feeds it once
 * execCommand returned, so after the commands it ran; execCommandAbort feeds a
 * refused one too.
 */
static void exec_feed_monitors(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv)
{
    if (__builtin_expect(monitor_any(), 0))
        monitor_feed(c, cmd, argc, argv);
}

/* the same for the EXEC whose transaction ran (or found a watched key touched) */
static void exec_feed_monitors_ran(struct conn *c)
{
    struct resp_arg name = {c->multi->exec_name, sizeof c->multi->exec_name};
    exec_feed_monitors(c, c->multi->exec_cmd, 1, &name);
}

/* an internal slot with no reply of its own, done once each part is */
static void ignore_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    (void)s;
    (void)part;
    (void)reply;
    (void)len;
}

/*
 * "<cmd> <client> key..." to the owner of every (shard, db) unit of ks, on
 * slot s (its parts counted first, on_done called once all are in; a unit
 * on this shard runs at once).  ks is sorted here.
 */
static void send_to_owners(struct conn *c, struct slot *s, struct keyset *ks, const struct command *cmd)
{
    keyset_sort(ks);
    struct resp_arg *args = mem_alloc((size_t)(ks->n + 2) * sizeof(*args));
    char idbuf[64];
    int units = 0;
    for (int from = 0; from < ks->n; from = unit_end(ks, from))
        units++;
    s->parts_left = units + 1; /* + 1: held until every part is sent (a local one completes at once) */
    int part = 0;
    for (int from = 0; from < ks->n;) {
        int end = unit_end(ks, from);
        int n = unit_args(ks, c->id, from, end, cmd->name, -1, idbuf, sizeof idbuf, args);
        s->db = ks->keys[from].db;
        dispatch_send_part(c, s, ks->keys[from].shard, part++, cmd, n, args);
        from = end;
    }
    mem_release(args);
    dispatch_part_reply(c, s, part, "", 0);
}

/* drop every watch of c on its owners (a slot with no reply; it keeps them in order with a later WATCH) */
static void unwatch_all(struct conn *c)
{
    struct multi *m = c->multi;
    if (!m || m->watched.n == 0)
        return;
    struct slot *s = dispatch_slot_create(c, command_internal(CMD_I_UNWATCH));
    s->on_part = ignore_part;
    s->on_done = dispatch_slot_complete;
    send_to_owners(c, s, &m->watched, command_internal(CMD_I_UNWATCH));
    keyset_clear(&m->watched);
}

void multi_begin(struct conn *c, struct reply *out)
{
    struct multi *m = multi_of(c);
    if (c->in_multi) {
        reply_error(out, "ERR MULTI calls can not be nested");
        return;
    }
    c->in_multi = true;
    m->db = c->db;
    reply_ok(out);
}

void multi_discard(struct conn *c, struct reply *out)
{
    if (!txn_in_multi(c)) {
        reply_error(out, "ERR DISCARD without MULTI");
        return;
    }
    multi_clear_queue(c);
    unwatch_all(c);
    reply_ok(out);
}

int txn_queued(const struct conn *c)
{
    return c->in_multi ? c->multi->count : -1;
}

size_t txn_queued_mem(const struct conn *c)
{
    return c->in_multi ? c->multi->argv_mem : 0;
}

void txn_queue_failed(struct conn *c)
{
    if (txn_in_multi(c))
        c->multi->failed = true;
}

bool txn_queue(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv, struct reply *out)
{
    struct multi *m = c->multi;
    if (cmd->flags & CMD_NO_MULTI) { /* Redis refuses SAVE, SHUTDOWN, SYNC and PSYNC here */
        reply_error(out, "ERR Command not allowed inside a transaction");
        m->failed = true;
        return false;
    }
    reply_raw(&m->queue, "*", 1);
    char num[32];
    reply_raw(&m->queue, num, (size_t)snprintf(num, sizeof num, "%d\r\n", argc));
    for (int i = 0; i < argc; i++) {
        reply_raw(&m->queue, num, (size_t)snprintf(num, sizeof num, "$%zu\r\n", argv[i].len));
        reply_raw(&m->queue, argv[i].ptr, argv[i].len);
        reply_raw(&m->queue, "\r\n", 2);
        m->argv_mem += argv[i].len + sizeof(void *);
    }
    m->count++;
    m->flags |= cmd->flags;
    const struct command *run = command_resolve_subcommand(cmd, argc, argv); /* XGROUP CREATE is deny-oom */
    if (run)
        m->flags |= run->flags & CMD_DENYOOM;
    m->whole |= keyspace_wide(cmd) || (cmd->flags & CMD_WHOLE_IN_EXEC) || dispatch_forms_pattern_keys(cmd, argc, argv);
    keyset_add_command(&m->keys, config_current(), cmd, argc, argv, m->db);
    long long db;
    if ((cmd->flags & CMD_SELECTS_DB) && argc == 2 && util_str_to_ll(argv[1].ptr, argv[1].len, &db) && db >= 0 &&
        db < config_current()->databases)
        m->db = (int)db; /* the later commands' keys are locked in the database they will use */
    reply_simple(out, "QUEUED");
    return true;
}

static void exec_check_part(struct conn *c, struct slot *s, int part, const char *reply, size_t len)
{
    (void)c;
    (void)part;
    if (len >= 2 && memcmp(reply, ":1", 2) == 0)
        s->sum = 1; /* a watched key was touched */
}

/* EXEC's commands are all dispatched: the locks go once every one of their replies is in */
void txn_exec_dispatched(struct conn *c)
{
    exec_feed_monitors_ran(c);
    struct txn *t = c->multi->exec;
    c->multi->exec = NULL;
    c->txid = 0;
    if (SHARD_STORE_SHARED && c->exec_len)
        shard_store_unlock();
    c->exec_len = 0;
    if (!c->slot_head) { /* every one ran here, at once */
        txn_finish(c->home, t);
        return;
    }
    struct slot *end = dispatch_slot_create(c, command_internal(CMD_I_UNLOCK));
    end->txn = t;
    end->txn_end = true;
    if (c->slot_head == end)
        dispatch_slot_complete(c, end);
}

static void exec_checked(struct conn *c, struct slot *s)
{
    struct multi *m = c->multi;
    struct txn *t = s->txn;
    s->txn = NULL;
    unwatch_all(c);
    if (s->sum) { /* a watched key changed: nothing runs */
        reply_null_array(&s->reply);
        exec_feed_monitors_ran(c);
        txn_finish(c->home, t);
        multi_clear_queue(c);
        dispatch_slot_complete(c, s);
        return;
    }
    reply_array(&s->reply, m->count);
    m->exec = t;
    c->txid = t->id;
    if (m->count == 0) {
        txn_exec_dispatched(c);
    } else {
        c->exec_input = m->queue.buf; /* parsed in front of the client's input (conn.c) */
        c->exec_len = m->queue.len;
        c->exec_pos = 0;
        reply_init(&m->queue);
        m->queue.resp = c->resp;
        if (SHARD_STORE_SHARED)
            shard_store_lock(); /* the global-lock build: the one lock, held until the last has run */
    }
    multi_clear_queue(c);
    dispatch_slot_complete(c, s); /* a barrier: its completion resumes parsing, EXEC's commands first */
}

/* every key is locked: were any watched keys touched? */
static void exec_locked(struct conn *c, struct slot *s)
{
    struct multi *m = c->multi;
    s->sum = 0;
    s->on_part = exec_check_part;
    s->on_done = exec_checked;
    if (m->watched.n == 0) {
        exec_checked(c, s);
        return;
    }
    struct keyset check = {0};
    keyset_add_all(&check, &m->watched);
    send_to_owners(c, s, &check, command_internal(CMD_I_WATCHCHECK));
    keyset_clear(&check);
}

void multi_exec(struct conn *c, const struct command *cmd, const struct resp_arg *argv, struct reply *out)
{
    struct multi *m = c->multi;
    if (!txn_in_multi(c)) {
        reply_error(out, "ERR EXEC without MULTI");
        exec_feed_monitors(c, cmd, 1, argv);
        return;
    }
    if (m->failed) {
        reply_error(out, "EXECABORT Transaction discarded because of previous errors.");
        exec_feed_monitors(c, cmd, 1, argv);
        multi_clear_queue(c);
        unwatch_all(c);
        return;
    }
    int busy = c->repl_master ? -1 : keyset_busy_shard(&m->keys, m->whole); /* a replica's master waits */
    if (busy < 0 && !c->repl_master)
        busy = keyset_busy_shard(&m->watched, false);
    if (busy >= 0) { /* Redis's -EXECABORT for an EXEC read while busy (a rejected call: exec's rejected_calls) */
        stats_subcommand(cmd, true);
        multi_exec_refused(c, cmd, 1, argv, out, script_busy_error(busy));
        return;
    }
    memcpy(m->exec_name, argv[0].ptr, sizeof m->exec_name); /* "exec" in any case: the lookup matched it */
    m->exec_cmd = cmd;
    c->in_multi = false;
    struct txn *t = txn_create(c->home);
    t->whole = m->whole;
    keyset_add_all(&t->ks, &m->keys);
    keyset_add_all(&t->ks, &m->watched);
    txn_begin(c, t, exec_locked);
}

void multi_exec_refused(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                        struct reply *out, const char *why)
{
    reply_errorf(out, "EXECABORT Transaction discarded because of: %s", why);
    exec_feed_monitors(c, cmd, argc, argv);
    if (c->multi)
        multi_clear_queue(c);
    unwatch_all(c);
}

static void watch_done(struct conn *c, struct slot *s)
{
    reply_ok(&s->reply);
    dispatch_slot_complete(c, s);
}

void multi_watch(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv, struct reply *out)
{
    if (txn_in_multi(c)) {
        reply_error(out, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    struct multi *m = multi_of(c);
    struct keyset add = {0};
    keyset_add_command(&add, config_current(), cmd, argc, argv, c->db);
    keyset_add_all(&m->watched, &add);
    /* +OK once every owner has them; an internal slot: the WATCH was counted when its handler ran */
    struct slot *s = dispatch_slot_create(c, command_internal(CMD_I_WATCH));
    s->on_part = ignore_part;
    s->on_done = watch_done;
    send_to_owners(c, s, &add, command_internal(CMD_I_WATCH));
    keyset_clear(&add);
}

void multi_unwatch(struct conn *c, struct reply *out)
{
    unwatch_all(c);
    reply_ok(out);
}

bool txn_queued_writes(const struct conn *c)
{
    return c->in_multi && (c->multi->flags & (CMD_WRITE | CMD_MAY_REPLICATE));
}

bool txn_queued_denyoom(const struct conn *c)
{
    return c->in_multi && (c->multi->flags & CMD_DENYOOM);
}

void txn_reset(struct conn *c)
{
    if (c->multi)
        multi_clear_queue(c);
    unwatch_all(c);
}

void txn_conn_closed(struct conn *c)
{
    if (c->multi) {
        multi_clear_queue(c);
        if (shard_running(c->home))
            unwatch_all(c);
    }
}

void txn_conn_freed(struct conn *c)
{
    struct multi *m = c->multi;
    if (!m)
        return;
    if (m->exec) { /* closed before its commands were dispatched */
        txn_finish(c->home, m->exec);
        if (SHARD_STORE_SHARED && c->exec_len)
            shard_store_unlock();
    }
    multi_clear_queue(c);
    reply_deinit(&m->queue);
    keyset_clear(&m->watched);
    mem_release(m);
    c->multi = NULL;
    mem_release(c->exec_input);
    c->exec_input = NULL;
}
