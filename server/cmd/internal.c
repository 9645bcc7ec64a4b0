/*
 * internal: cross-shard helper commands, never callable by clients.
 *
 * Design: RENAME/RENAMENX whose two keys live on different shards cannot run
 * in one handler (a handler sees one store).  The dispatcher runs them as two
 * steps through these commands, each on the owner of its key; gathered
 * multi-key commands (SMOVE, SUNIONSTORE, ...) copy their keys with __dump:
 *
 *   __take key [event]          -> nil when the key is missing, else
 *                                  *3 [$blob (object_serialize), :expire-ms or -1,
 *                                  :LFU counter] and the key is removed from
 *                                  this store
 *   __dump key                  -> the same as __take, but the key stays
 *                                  (COPY across shards: __dump, then __put
 *                                  with "copy_to")
 *   __put key blob expire nx freq [event]
 *                               -> :0 when nx is "1" and key exists; else the
 *                                  value is rebuilt with object_deserialize,
 *                                  stored (replacing, TTL = expire unless -1,
 *                                  LFU counter = freq unless -1: a renamed key
 *                                  keeps its counter, as Redis's object does)
 *                                  and :1; "-ERR corrupt value" on a bad blob
 *
 * A __take or __put that changed its key reports it modified (a change to
 * Redis's dirty only for a RENAME's __take and a COPY's __put: a gathered
 * command counts its changes as it runs on the copies); `event`, a
 * generic-class keyspace event (RENAME's "rename_from" on its __take,
 * "rename_to" on its __put), is reported after that, and a __put that has
 * one reports dbAdd's "new" first, as Redis's RENAME does even over an
 * existing key.  Without an event a step reports no event at all: a
 * gathered command's write-back, whose events the handler reported on the
 * copies.  An event that is not a generic one is refused before anything
 * changes ("-ERR unknown event").
 *
 *   __lock txid home key...     -> +OK when every key is now held by txid on
 *                                  this shard (all or none); +QUEUED when
 *                                  another transaction holds one of them: the
 *                                  request waits here, and shard `home` is
 *                                  told (__granted) once it holds them
 *   __unlock txid key...        -> +OK: txid holds none of the keys any more,
 *                                  nor waits for them
 *                                  (no key named, for both: every key of the
 *                                  shard, KEYLOCK_ALL: FLUSHALL FLUSHDB SWAPDB)
 *   __watch client key...       -> +OK: the client watches the keys (watch.h)
 *   __unwatch client key...     -> +OK: it watches none of them any more
 *   __watchcheck client key...  -> :1 when one of its watches of the keys
 *                                  was touched (or a key that existed then
 *                                  is gone), else :0
 *   __randomkey                 -> RANDOMKEY's part on one shard: *0 when
 *                                  the db has no key, else *2 [:keys, $key],
 *                                  keys the db's size, so that the
 *                                  dispatcher picks a shard's key with
 *                                  probability keys / total: every key of
 *                                  the keyspace equally likely
 *
 * The blob is a byte string, so the value crosses threads as a copy: no
 * object is ever touched by a thread other than its owner (ARCHITECTURE.md rule 1).
 * The replies follow ctx->out's protocol (nil is "$-1" in RESP2, "_" in RESP3).
 *
 * Threading: each runs on the shard owning argv[1] (ROUTE_OWNER, key 1);
 * __lock and __unlock on the shard owning every key they name; __randomkey
 * on each shard in turn.
 */
#include "families.h"

#include "percore/command.h"
#include "percore/keylock.h"
#include "percore/mem.h"
#include "percore/watch.h"
#include "percore/object.h"
#include "percore/reply.h"
#include "percore/store.h"
#include "percore/util.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void emit_to_reply(void *arg, const void *p, size_t n)
{
    reply_raw(arg, p, n);
}

/* *3 [$blob, :expire or -1, :LFU counter]: a copy of a value that may cross to another thread */
static void reply_dump(struct cmd_ctx *ctx, const struct object *o, int64_t expire, int freq)
{
    struct reply blob;
    reply_init(&blob);
    object_serialize(o, emit_to_reply, &blob);
    reply_array(ctx->out, 3);
    reply_bulk(ctx->out, blob.buf ? blob.buf : "", blob.len);
    reply_int(ctx->out, expire < 0 ? -1 : expire);
    reply_int(ctx->out, freq);
    reply_deinit(&blob);
}

/* Redis's NOTIFY_GENERIC events (db.c, expire.c, cluster.c), the ones a __take or __put may report */
static const char *const generic_events[] = {
    "del", "expire", "persist", "rename_from", "rename_to", "move_from", "move_to", "copy_to", "restore",
};

/*
 * The optional event argument, the last of argc_max: *event its constant, or
 * NULL when absent; false (an error replied) when it is not a generic event
 * or there are more arguments.
 */
static bool event_arg_or_reply(struct cmd_ctx *ctx, int argc_max, const char **event)
{
    *event = NULL;
    if (ctx->argc > argc_max) {
        reply_syntax_error(ctx->out);
        return false;
    }
    if (ctx->argc < argc_max)
        return true;
    const struct resp_arg *a = &ctx->argv[argc_max - 1];
    for (size_t i = 0; i < sizeof(generic_events) / sizeof(generic_events[0]); i++) {
        if (a->len == strlen(generic_events[i]) && memcmp(a->ptr, generic_events[i], a->len) == 0) {
            *event = generic_events[i];
            return true;
        }
    }
    reply_error(ctx->out, "ERR unknown event");
    return false;
}

static void cmd_take(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    const char *event;
    int64_t expire = -1;
    if (!event_arg_or_reply(ctx, 3, &event))
        return;
    int freq = store_lfu_freq(ctx->store, ctx->db, key->ptr, key->len, ctx->now);
    struct object *o = store_take(ctx->store, ctx->db, key->ptr, key->len, ctx->now, &expire);
    if (o == NULL) {
        reply_null(ctx->out);
        return;
    }
    cmd_modified_n(ctx, key, event != NULL); /* a RENAME's one change; a gather's counted on the copies */
    if (event)
        cmd_notify(ctx, NOTIFY_GENERIC, event, key);
    if (cmd_propagating(ctx)) /* the half of a RENAME or gather on this shard: the key is gone */
        cmd_propagate_key(ctx, "DEL", key, NULL);
    reply_dump(ctx, o, expire, freq);
    object_destroy(&o);
}

static void cmd_dump(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct object *o = store_lookup(ctx->store, ctx->db, key->ptr, key->len, ctx->now);
    if (o == NULL) {
        reply_null(ctx->out);
        return;
    }
    reply_dump(ctx, o, store_get_expire(ctx->store, ctx->db, key->ptr, key->len, ctx->now),
               store_lfu_freq(ctx->store, ctx->db, key->ptr, key->len, ctx->now));
}

static void cmd_put(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    const struct resp_arg *blob = &ctx->argv[2];
    const struct resp_arg *nx = &ctx->argv[4];
    const char *event;
    long long expire, freq;
    struct object *o;

    if (!event_arg_or_reply(ctx, 7, &event))
        return;
    if (!util_str_to_ll(ctx->argv[3].ptr, ctx->argv[3].len, &expire) ||
        !util_str_to_ll(ctx->argv[5].ptr, ctx->argv[5].len, &freq)) {
        reply_not_integer(ctx->out);
        return;
    }
    if (nx->len == 1 && nx->ptr[0] == '1' &&
        store_lookup(ctx->store, ctx->db, key->ptr, key->len, ctx->now) != NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    o = object_deserialize(blob->ptr, blob->len);
    if (o == NULL) {
        reply_error(ctx->out, "ERR corrupt value");
        return;
    }
    store_set(ctx->store, ctx->db, key->ptr, key->len, o, 0);
    if (expire != -1)
        store_set_expire(ctx->store, ctx->db, key->ptr, key->len, expire, ctx->now);
    if (freq >= 0)
        store_set_lfu_freq(ctx->store, ctx->db, key->ptr, key->len, (int)freq, ctx->now);
    if (event)
        cmd_notify(ctx, NOTIFY_NEW, "new", key);
    /* COPY's one change; a RENAME's is counted by its __take, a gathered command's on the copies */
    cmd_modified_n(ctx, key, event && strcmp(event, "copy_to") == 0);
    if (cmd_propagating(ctx)) /* the value as stored (store_set may have taken o over) */
        cmd_propagate_restore(ctx, key, store_peek(ctx->store, ctx->db, key->ptr, key->len, ctx->now, NULL), expire);
    if (event)
        cmd_notify(ctx, NOTIFY_GENERIC, event, key);
    reply_int(ctx->out, 1);
}

/* __lock / __unlock: argv[1] the transaction id, then the keys */
static bool txid_arg(struct cmd_ctx *ctx, uint64_t *txid)
{
    long long v;
    if (!util_str_to_ll(ctx->argv[1].ptr, ctx->argv[1].len, &v) || v <= 0) {
        reply_not_integer(ctx->out);
        return false;
    }
    *txid = (uint64_t)v;
    return true;
}

/* argv[from..argc) as keylock takes them: in small (room for 16) when they fit, else allocated (the
 * caller frees a result that is not small) */
static struct keylock_key *lock_keys(const struct cmd_ctx *ctx, int from, struct keylock_key *small)
{
    int n = ctx->argc - from;
    struct keylock_key *keys = n <= 16 ? small : mem_alloc((size_t)n * sizeof(*keys));
    for (int i = 0; i < n; i++)
        keys[i] = (struct keylock_key){ctx->argv[from + i].ptr, ctx->argv[from + i].len};
    return keys;
}

static void cmd_lock(struct cmd_ctx *ctx)
{
    uint64_t txid;
    if (!txid_arg(ctx, &txid))
        return;
    long long home;
    if (!util_str_to_ll(ctx->argv[2].ptr, ctx->argv[2].len, &home) || home < 0) {
        reply_not_integer(ctx->out);
        return;
    }
    struct keylock_key small[16], *keys = lock_keys(ctx, 3, small);
    int n = ctx->argc > 3 ? ctx->argc - 3 : KEYLOCK_ALL;
    if (keylock_try(ctx->locks, txid, ctx->db, n, keys)) {
        reply_ok(ctx->out);
    } else {
        keylock_enqueue(ctx->locks, txid, (int)home, ctx->db, n, keys);
        reply_simple(ctx->out, "QUEUED");
    }
    if (keys != small)
        mem_release(keys);
}

static void cmd_unlock(struct cmd_ctx *ctx)
{
    uint64_t txid;
    if (!txid_arg(ctx, &txid))
        return;
    struct keylock_key small[16], *keys = lock_keys(ctx, 2, small);
    keylock_release(ctx->locks, txid, ctx->db, ctx->argc > 2 ? ctx->argc - 2 : KEYLOCK_ALL, keys);
    if (keys != small)
        mem_release(keys);
    reply_ok(ctx->out);
}

/* __watch / __unwatch / __watchcheck: argv[1] the client (its id, also in ctx->client), then the keys */
static void cmd_watch_keys(struct cmd_ctx *ctx)
{
    for (int i = 2; i < ctx->argc; i++) {
        bool exists = store_peek(ctx->store, ctx->db, ctx->argv[i].ptr, ctx->argv[i].len, ctx->now, NULL) != NULL;
        watch_add(ctx->watches, ctx->client, ctx->db, ctx->argv[i].ptr, ctx->argv[i].len, exists);
    }
    reply_ok(ctx->out);
}

static void cmd_unwatch_keys(struct cmd_ctx *ctx)
{
    for (int i = 2; i < ctx->argc; i++)
        watch_remove(ctx->watches, ctx->client, ctx->db, ctx->argv[i].ptr, ctx->argv[i].len);
    reply_ok(ctx->out);
}

static void cmd_watch_check(struct cmd_ctx *ctx)
{
    bool touched = false;
    for (int i = 2; i < ctx->argc && !touched; i++) {
        bool exists = store_peek(ctx->store, ctx->db, ctx->argv[i].ptr, ctx->argv[i].len, ctx->now, NULL) != NULL;
        touched = watch_touched(ctx->watches, ctx->client, ctx->db, ctx->argv[i].ptr, ctx->argv[i].len, exists);
    }
    reply_int(ctx->out, touched);
}

static void cmd_randomkey_part(struct cmd_ctx *ctx)
{
    const char *key;
    size_t klen;
    if (!store_random_key(ctx->store, ctx->db, ctx->now, &key, &klen)) {
        reply_array(ctx->out, 0);
        return;
    }
    reply_array(ctx->out, 2);
    reply_int(ctx->out, (long long)store_size(ctx->store, ctx->db));
    reply_bulk(ctx->out, key, klen);
}

const struct command command_internal_table[CMD_I_COUNT] = {
    [CMD_I_TAKE] = {"__take", cmd_take, -2, CMD_INTERNAL | CMD_WRITE, 1, 1, 1, ROUTE_OWNER, ""},
    [CMD_I_PUT] = {"__put", cmd_put, -6, CMD_INTERNAL | CMD_WRITE, 1, 1, 1, ROUTE_OWNER, ""},
    [CMD_I_DUMP] = {"__dump", cmd_dump, 2, CMD_INTERNAL | CMD_READONLY, 1, 1, 1, ROUTE_OWNER, ""},
    [CMD_I_LOCK] = {"__lock", cmd_lock, -3, CMD_INTERNAL, 3, -1, 1, ROUTE_OWNER, ""},
    [CMD_I_UNLOCK] = {"__unlock", cmd_unlock, -2, CMD_INTERNAL, 2, -1, 1, ROUTE_OWNER, ""},
    [CMD_I_WATCH] = {"__watch", cmd_watch_keys, -3, CMD_INTERNAL, 2, -1, 1, ROUTE_OWNER, ""},
    [CMD_I_UNWATCH] = {"__unwatch", cmd_unwatch_keys, -3, CMD_INTERNAL, 2, -1, 1, ROUTE_OWNER, ""},
    [CMD_I_WATCHCHECK] = {"__watchcheck", cmd_watch_check, -3, CMD_INTERNAL | CMD_READONLY, 2, -1, 1, ROUTE_OWNER, ""},
    [CMD_I_RANDOMKEY] = {"__randomkey", cmd_randomkey_part, 1, CMD_INTERNAL | CMD_READONLY, 0, 0, 0, ROUTE_HOME, ""},
};
