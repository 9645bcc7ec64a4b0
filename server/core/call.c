/*
 * call: the after-work for what a handler reported (see call.h), out of
 * line: it runs only when something on the shard wants it.
 */
#include "call.h"

#include "notify.h"
#include "txn.h"

#include "percore/aof.h"

/* FLUSHALL FLUSHDB SWAPDB, before they change the databases: watches of keys that exist now, waiters */
static void call_replacing(void *arg, int db, int db2)
{
    struct shard *self = arg;
    if (watch_count(self->watches))
        txn_note_replacing(self, db, db2);
    if (db2 >= 0 && block_waiting(self->blockers)) /* a swapped-in database may hold their keys */
        block_note_databases(self, db, db2);
    if (db2 < 0 && tracking_busy(self->tracking.table)) /* a flush (Redis 7.0 sends nothing for SWAPDB): */
        self->tracking.flushed = true;                  /* told once the handler has replied */
}

struct cmd_effects *call_effects_begin(struct shard *self, unsigned notify, bool keys, bool prop)
{
    struct cmd_effects *fx = &self->effects;
    fx->notify = notify;
    fx->n = 0;
    fx->len = 0;
    fx->keys_unwanted = !keys; /* call_effects_apply reads them only with keys */
    fx->changes = 0;
    fx->propagating = prop;
    fx->prop_n = 0;
    reply_clear(&fx->prop);
    fx->replacing = keys ? call_replacing : NULL;
    fx->replacing_arg = self;
    return fx;
}

void call_effects_apply(struct shard *self, const struct cmd_effects *fx, bool keys, uint64_t client)
{
    for (int i = 0; i < fx->n; i++) {
        const struct cmd_effect *e = &fx->v[i];
        const char *key = fx->bytes + e->key_off;
        if (e->kind == CMD_EFFECT_EVENT) {
            notify_publish(self, e->type, e->event, e->db, key, e->key_len);
        } else if (e->kind == CMD_EFFECT_READY) {
            if (keys && block_waiting(self->blockers))
                block_note_key(self, e->db, key, e->key_len);
        } else if (keys) {
            if (watch_count(self->watches))
                watch_touch(self->watches, e->db, key, e->key_len);
            if (block_waiting(self->blockers))
                block_note_key(self, e->db, key, e->key_len);
            if (tracking_busy(self->tracking.table))
                tracking_invalidate(self, key, e->key_len, client);
        }
    }
    if (keys && block_waiting(self->blockers))
        block_serve_ready(self);
    if (self->tracking.flushed)
        tracking_flush_databases(self);
}

void call_propagate(struct shard *self, const struct command *cmd, uint64_t txid, int db, int argc,
                    const struct resp_arg *argv, const struct cmd_effects *fx, struct call_mark from)
{
    int stream = SHARD_STORE_SHARED ? 0 : self->index;
    bool fanout = cmd->route >= ROUTE_FANOUT_SUM && cmd->route <= ROUTE_FANOUT_CONCAT && /* every shard runs it */
                  !(cmd->flags & CMD_LOCKS_ALL);
    if (SHARD_STORE_SHARED) /* one stream: the store lock orders everything */
        txid = 0;
    if (fanout && !txid)
        aof_feed_barrier(stream, db, argc, argv);
    else if (fx->changes != from.changes || fanout)
        aof_feed(stream, txid, fanout, db, argc, argv, fx->prop.buf + from.prop_len, fx->prop.len - from.prop_len,
                 fx->prop_n - from.prop_n);
}
