/*
 * call: the one function every command runs through (Redis's call()).
 *
 * Wherever a handler runs -- inline on the connection's own shard, as a
 * part on another shard, on copies inside a gathered command, inside EXEC,
 * serving a blocked client, on the scratch store to find a blocking
 * command's argument errors -- the caller fills a struct call and calls
 * call().  It does the checks before the handler (maxmemory) and all the
 * after-work, in one place: command stats and latency, the slowlog, WATCH
 * invalidation, waking blocked clients, the database's key count.  The
 * caller says with flags which of them apply where it runs; a new hook is
 * one edit here.
 *
 *   before   maxmemory (CALL_CHECK_MEMORY): evict, or refuse a deny-oom command
 *   handler  cmd->proc, timed once for the stats and the slowlog; it reports
 *            what it did into ctx->effects (command.h): the keys it modified,
 *            the keyspace events it caused, databases it is about to empty
 *   after    propagate: a write that changed something (ctx->effects->changes)
 *            goes to the shard's stream (aof.h), as its handler propagated
 *            it (cmd_propagate) or as sent; a keyspace-wide one as a barrier;
 *            track: a tracking client's read remembers its keys;
 *            CALL_EFFECTS: watches of the keys it modified, clients waiting on
 *            them, their tracking clients told, its keyspace events, the database's key count published
 *            before the reply leaves; CALL_STATS: time, latency histogram, the
 *            call (CALL_WHOLE), slowlog (a command run for a slot, whole on
 *            another shard or in parts, gives its time back, CALL_TIME_HOME:
 *            its home takes one sample and writes one entry when the slot
 *            completes; an internal step only adds time)
 *
 * The hot path is a budget: with no watcher, no waiter and no keyspace event
 * asked for, a command pays one load and test for each (ctx->effects stays
 * NULL, so reporting costs the handler one test), and the stats it always
 * paid.
 *
 * Threading: the shard thread that owns `store` (in the global-lock build,
 * any thread: call() takes the one lock around the handler).
 */
#ifndef PERCORE_CALL_H
#define PERCORE_CALL_H

#include <stdint.h>

#include "shard_internal.h"
#include "conn_internal.h"
#include "dispatch.h"
#include "block.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/replica.h"
#include "percore/slowlog.h"
#include "percore/stats.h"
#include "percore/watch.h"

enum {
    /* the client's whole command runs here: one call is counted with its outcome (else a part or
     * a step of it: only its time is, the home counts the call once the whole reply is there) */
    CALL_WHOLE = 1u << 0,
    CALL_STATS = 1u << 1,        /* its time goes to the command stats, latency and the slowlog */
    CALL_CHECK_MEMORY = 1u << 2, /* maxmemory first: evict, or refuse a deny-oom command */
    CALL_EFFECTS = 1u << 3,      /* its writes are real: watches, blocked clients, key counts */
    CALL_MAY_BLOCK = 1u << 4,    /* a blocking command may wait here (ctx.may_block) */
    CALL_CONN = 1u << 5,         /* the handler sees the connection (ROUTE_HOME on its home) */
    CALL_EVENTS = 1u << 6,       /* on copies whose results go back to their owners: its keyspace events
                                  * are published from here (the owners' write-back notes the keys) */
    CALL_TIME_HOME = 1u << 7,    /* a client's command, or part of one, whose slot is on its home: its time goes
                                  * back (*took) and the home takes the latency sample and writes the slowlog
                                  * entry, once for the whole command, with its client's addr and name */
    CALL_NESTED = 1u << 8,       /* a command a script runs (script.c): what it does is reported into the
                                  * script's record (c->effects), applied once when the script's call ends */
};

struct call {
    const struct command *cmd;      /* what runs */
    const struct command *stat_cmd; /* the client's command it is, or is part of (its stats); NULL: cmd */
    const struct resp_arg *argv;
    int argc;
    int db;
    int resp;                       /* the client's protocol (the reply's encoding) */
    uint64_t client;                /* the id of the connection it runs for */
    struct conn *conn;              /* that connection when it lives on this shard, else NULL */
    struct store *store;            /* where it runs: NULL for the shard's own */
    struct reply *out;              /* the reply is appended here */
    uint32_t flags;                 /* CALL_* (constants where call() is inlined: its tests fold away) */
    bool track;                     /* the client tracks what it reads (tracking.h): a read-only command
                                     * remembers its keys here */
    uint64_t *took;                 /* CALL_TIME_HOME: the handler's time is added here (ns) */
    uint64_t txid;                  /* the multi-shard transaction (EXEC, a split or keyspace-wide command) it is
                                     * part of, 0 none: its propagation is that transaction's (aof.h) */
    struct cmd_effects *effects;    /* CALL_NESTED: the script's effects record (NULL: nothing wants them) */
};

enum call_result {
    CALL_RAN,     /* the handler ran and replied */
    CALL_REFUSED, /* refused before it ran (maxmemory): the error is in out */
    CALL_BLOCKED, /* a blocking command found nothing and may wait (CALL_MAY_BLOCK): no reply written */
};

/* the shard's effects record, emptied, for a handler about to run (call.c) */
struct cmd_effects *call_effects_begin(struct shard *self, unsigned notify, bool keys, bool prop);
/* where a record stood before a handler ran: a script's commands share its record (CALL_NESTED) */
struct call_mark {
    int changes;
    size_t prop_len;
    int prop_n;
};
/* a write ran with propagation on: what it changed since `from` goes to the shard's stream (aof.h) */
void call_propagate(struct shard *self, const struct command *cmd, uint64_t txid, int db, int argc,
                    const struct resp_arg *argv, const struct cmd_effects *fx, struct call_mark from);
/* the after-work for what it reported: keyspace events; with keys, watched keys, waiting clients and the
 * clients tracking the keys (client: the writer, for NOLOOP) */
void call_effects_apply(struct shard *self, const struct cmd_effects *fx, bool keys, uint64_t client);

/* the bytes written to out from `before` on (out->buf is NULL until something is written) */
static inline const char *call_reply_since(const struct reply *out, size_t before)
{
    return out->buf ? out->buf + before : "";
}

/* run c->cmd on self (see the top of this file); always inlined: out of line, the call and the copy of
 * its arguments cost 2-3% of a GET (callgrind) */
static inline __attribute__((always_inline)) enum call_result call(struct shard *self, const struct call *c)
{
    const struct command *cmd = c->cmd;
    struct reply *out = c->out;
    bool obeyed = client_obeyed(c->client);
    struct cmd_ctx ctx = {
        .store = c->store ? c->store : self->store,
        .out = out,
        .argv = c->argv,
        .argc = c->argc,
        .db = c->db,
        .now = obeyed ? OBEYED_NOW : self->now,
        .config = config_current(),
        .stats = &self->cstats,
        .conn = (c->flags & CALL_CONN) ? c->conn : NULL,
        .shard = self->index,
        .locks = self->locks,
        .watches = self->watches,
        .client = c->client,
        .may_block = (c->flags & CALL_MAY_BLOCK) != 0,
        .replaying = obeyed,
    };
    out->resp = c->resp;
    size_t before = out->len;
    shard_store_lock(); /* the global-lock build's one lock (recursive); nothing in the sharded build */
    if ((c->flags & CALL_CHECK_MEMORY) && !dispatch_memory_ok(self, ctx.config, cmd, c->argc, c->argv, out)) {
        shard_store_unlock();
        if (c->flags & CALL_WHOLE) /* a part's refusal is counted by its home, with the whole reply */
            stats_cmd_rejected(&self->stats, cmd, call_reply_since(out, before), out->len - before);
        return CALL_REFUSED;
    }
    /* what the handler does is recorded when something here wants it: watched keys, waiting clients
     * (real writes only), keyspace events (also from copies, CALL_EVENTS) */
    bool effects = (c->flags & CALL_EFFECTS) != 0;
    bool keys = false, prop;
    struct call_mark mark = {0, 0, 0};
    if (c->flags & CALL_NESTED) { /* a script's command: its record is the script's; its writes propagate alone */
        ctx.effects = c->effects;
        prop = effects && ctx.effects && ctx.effects->propagating && (cmd->flags & CMD_WRITE);
        if (prop)
            mark = (struct call_mark){ctx.effects->changes, ctx.effects->prop.len, ctx.effects->prop_n};
    } else {
        keys = effects && (watch_count(self->watches) != 0 || block_waiting(self->blockers) != 0 ||
                           tracking_busy(self->tracking.table) != 0);
        unsigned notify = ctx.config->notify_keyspace_events;
        if (!(notify & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT)) || !(c->flags & (CALL_EFFECTS | CALL_EVENTS)))
            notify = 0;
        /* propagated (the AOF): a real write on the shard's own store (a script: its commands are, in the
         * record begun here); a read pays the load and test */
        bool record = effects && self->propagating && (cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)) && !c->store;
        prop = record && (cmd->flags & CMD_WRITE);
        if (__builtin_expect(keys || notify || record, 0))
            ctx.effects = call_effects_begin(self, notify, keys, record);
    }
    uint64_t t0 = stats_clock_ns();
    cmd->proc(&ctx);
    if (__builtin_expect(c->track, 0))
        tracking_remember(self, cmd, c->argc, c->argv, c->client);
    if (__builtin_expect(prop, 0)) /* scalars, not c: run must not escape, or its constant flags no longer fold away */
        call_propagate(self, cmd, c->txid, c->db, c->argc, c->argv, ctx.effects, mark);
    if (__builtin_expect(ctx.effects != NULL, 0) && !(c->flags & CALL_NESTED)) {
        call_effects_apply(self, ctx.effects, keys, c->client);
    }
    shard_store_unlock();
    if (c->flags & CALL_STATS) {
        const struct command *stat_cmd = c->stat_cmd ? c->stat_cmd : cmd;
        /* an internal step of a client's command (a gather's __dump, RENAME's __take) adds its time, but is
         * no latency sample, as it is no slowlog entry: a sample is a run of the command's own handler */
        bool home = (c->flags & CALL_TIME_HOME) != 0;
        bool sample = ctx.config->latency_tracking && !(cmd->flags & CMD_INTERNAL) && !home;
        uint64_t t1 = stats_cmd_done(&self->stats, stat_cmd, (c->flags & CALL_WHOLE) ? 1 : 0, t0,
                                     call_reply_since(out, before), out->len - before, sample);
        if (home)
            *c->took += t1 - t0;
        else
            slowlog_note(&ctx, cmd, t1 - t0, c->conn);
    }
    /* a gathered command, or a script's over shards, counts its changes on the copies (not as written back) */
    if (effects || (c->flags & (CALL_EVENTS | CALL_NESTED)))
        shard_note_write(self, cmd, c->db, ctx.dirty);
    return ctx.blocked ? CALL_BLOCKED : CALL_RAN;
}

#endif
