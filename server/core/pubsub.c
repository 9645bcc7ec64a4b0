/*
 * pubsub (core): each shard thread's subscriber tables, and the bytes
 * subscribers get (Redis 7.0's pubsub.c, per shard).
 *
 * A shard thread has three tables of its own, each created on its first
 * subscription and freed when its last one goes:
 *
 *   pubsub_channels: channel -> the thread's connections subscribed to it
 *   pubsub_patterns: pattern -> the thread's connections subscribed to it
 *   pubsub_shard_channels: shard channel (SSUBSCRIBE) -> the same
 *
 * (dicts whose value is the pointer to a struct pubsub_subs, the
 * connections in the order they subscribed, as Redis's lists).  A
 * connection keeps its own side in c->pubsub: its channels and shard
 * channels (dicts) and its patterns (in the order subscribed, which
 * PUNSUBSCRIBE without arguments follows as Redis does); the confirmations
 * count channels and patterns together and shard channels apart, as Redis
 * 7.0's; c->pubsub is NULL while it has none, so the
 * dispatcher's subscriber-mode test costs one load for everyone else.
 *
 * Delivery (pubsub_publish_local) runs on the subscribers' own thread: for a
 * local publisher inside its PUBLISH, for a remote one when its batch is
 * executed (cmd/pubsub.c).  A message is appended to the subscriber's output
 * where its next reply would go (dispatch_push_target), so it never
 * overtakes a reply, and the shard flushes it at the end of the turn.
 * Messages and (un)subscribe confirmations are pushes: CLIENT REPLY OFF|SKIP
 * does not drop them (Redis 7.0's CLIENT_PUSHING).
 * Nothing here waits: a subscriber that does not read piles up output until
 * its client-output-buffer-limit (the pubsub class, conn.c) closes it, and
 * once it is past the hard limit it is sent nothing more (Redis stops writing
 * to a client it has scheduled to close) but still counted as a receiver.
 *
 * INFO's pubsub_channels, pubsub_patterns and pubsubshard_channels are
 * Redis's sizes of its tables: names with a subscriber, each once, though
 * several shards may have subscribers of one.  So each name is counted by
 * one shard, the one its CRC16 picks (counted_by): that shard keeps, in
 * pubsub_counted, how many shards have a subscriber of it, and publishes
 * the number of its names as a stats gauge (levels, summed by INFO).  A
 * shard whose table gains a name or loses its last subscriber tells the
 * counting shard: at once when that is itself, else by a `__pubsub_count`
 * record in its outbox (outbox.h), flushed at the end of the loop turn
 * (with the closes of the turn's writes); the counting shard applies the records
 * when it drains its inbox (one shard's records in order, so each shard adds
 * 0 or 1 to a name at any time).  INFO may so lag a subscription of another
 * shard by that shard's hop, as Redis's counts never do.
 *
 * Threading: everything here is the calling shard thread's own state
 * (__thread tables, connections it owns, its outbox and stats block); no
 * locks, no atomics but the gauges' relaxed stores.
 */
#include "percore/pubsub.h"

#include "shard_internal.h"
#include "conn_internal.h"
#include "dispatch.h"
#include "notify.h"
#include "outbox.h"
#include "percore/dict.h"
#include "percore/mem.h"
#include "percore/reply.h"
#include "percore/slot.h"
#include "percore/stats.h"
#include "percore/util.h"

#include <stdio.h>
#include <string.h>

/* one channel's or pattern's subscribers on this thread, in subscription order */
struct pubsub_subs {
    struct conn **conn;
    size_t n;
    size_t cap;
};

/* a name a connection is subscribed to (its own copy) */
struct pubsub_name {
    char *ptr;
    size_t len;
};

/* a connection's side (c->pubsub) */
struct pubsub_client {
    struct dict *channels;         /* its channels (keys only), NULL before the first */
    struct dict *shard_channels;   /* its shard channels, the same */
    struct pubsub_name *patterns;  /* its patterns, in the order subscribed */
    size_t npatterns;
    size_t patterns_cap;
};

static __thread struct dict *pubsub_channels; /* channel -> struct pubsub_subs *, NULL when empty */
static __thread struct dict *pubsub_patterns; /* pattern -> struct pubsub_subs *, NULL when empty */
static __thread struct dict *pubsub_shard_channels; /* shard channel -> struct pubsub_subs *, NULL when empty */
/* per kind, the names this thread counts (counted_by) -> how many shards have a subscriber (uint32_t) */
static __thread struct dict *pubsub_counted[3];
/* this turn's records for the other shards' counts (`__pubsub_count`), NULL before the first */
static __thread struct outbox *pubsub_count_out;

/* Redis 7.0's names of each kind's confirmations and messages */
static const struct {
    const char *subscribe, *unsubscribe, *message;
} kind_names[] = {
    [PUBSUB_CHANNEL] = {"subscribe", "unsubscribe", "message"},
    [PUBSUB_PATTERN] = {"psubscribe", "punsubscribe", "pmessage"},
    [PUBSUB_SHARD_CHANNEL] = {"ssubscribe", "sunsubscribe", "smessage"},
};

/* ---------------------------------------------------------------- INFO's counts */

/* the shard that counts name: its CRC16's share, the same on every shard */
static int counted_by(const char *name, size_t len)
{
    return (int)(slot_crc16(name, len) % (unsigned)shard_count());
}

/* one more shard (delta 1) or one fewer (-1) has a subscriber of name: on the counting shard */
static void count_apply(enum pubsub_kind kind, const char *name, size_t len, int delta)
{
    struct dict **d = &pubsub_counted[kind];
    if (!*d)
        *d = dict_create();
    struct dict_entry *existing = NULL;
    struct dict_entry *e = dict_add(*d, name, len, &existing);
    uint32_t n = 0;
    size_t vlen;
    if (!e) {
        e = existing;
        memcpy(&n, dict_entry_value(e, &vlen), sizeof n);
    }
    n += (uint32_t)delta;
    if (n)
        dict_entry_set_value(*d, e, &n, sizeof n);
    else
        dict_delete(*d, name, len);
    uint64_t names = dict_size(*d);
    if (!names)
        dict_destroy(d);
    struct stats *st = &shard_self->stats;
    if (kind == PUBSUB_CHANNEL)
        STATS_SET(st, pubsub_channels, names);
    else if (kind == PUBSUB_PATTERN)
        STATS_SET(st, pubsub_patterns, names);
    else
        STATS_SET(st, pubsubshard_channels, names);
}

/* this thread's table of kind gained name (delta 1) or lost its last subscriber (-1): tell its counter */
static void count_change(enum pubsub_kind kind, const char *name, size_t len, int delta)
{
    int by = counted_by(name, len);
    if (by == shard_self->index) {
        count_apply(kind, name, len, delta);
        return;
    }
    if (!pubsub_count_out)
        pubsub_count_out = outbox_create(shard_count());
    struct reply *r = outbox_to(pubsub_count_out, by);
    uint32_t l = (uint32_t)len;
    char head[2] = {(char)kind, (char)delta};
    reply_raw(r, head, sizeof head);
    reply_raw(r, (const char *)&l, sizeof l);
    reply_raw(r, name, len);
}

/* `__pubsub_count <records>`: another shard's changes, each [kind, delta, uint32 length, name] */
static void cmd_pubsub_count(struct cmd_ctx *ctx)
{
    const char *at = ctx->argv[1].ptr, *end = at + ctx->argv[1].len;
    uint32_t len;
    while ((size_t)(end - at) >= 2 + sizeof len) {
        enum pubsub_kind kind = (enum pubsub_kind)at[0];
        int delta = (signed char)at[1];
        memcpy(&len, at + 2, sizeof len);
        at += 2 + sizeof len;
        if ((size_t)(end - at) < len)
            break;
        count_apply(kind, at, len, delta);
        at += len;
    }
    reply_ok(ctx->out);
}

static const struct command pubsub_count_command = {
    "__pubsub_count", cmd_pubsub_count, 2, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, "",
};

void pubsub_flush(struct shard *self)
{
    if (pubsub_count_out)
        outbox_flush(pubsub_count_out, self, &pubsub_count_command);
}

void pubsub_teardown_shard(void)
{
    outbox_destroy(&pubsub_count_out);
    for (int kind = 0; kind < 3; kind++)
        dict_destroy(&pubsub_counted[kind]);
}

/* ---------------------------------------------------------------- the thread's tables */

static struct pubsub_subs *subs_of(const struct dict_entry *e)
{
    struct pubsub_subs *s;
    size_t len;
    memcpy(&s, dict_entry_value(e, &len), sizeof(s));
    return s;
}

/* the thread's table of kind */
static struct dict **table_of(enum pubsub_kind kind)
{
    return kind == PUBSUB_SHARD_CHANNEL ? &pubsub_shard_channels
                                        : kind == PUBSUB_PATTERN ? &pubsub_patterns : &pubsub_channels;
}

static void table_add(enum pubsub_kind kind, const char *name, size_t len, struct conn *c)
{
    struct dict **table = table_of(kind);
    if (!*table)
        *table = dict_create();
    struct dict_entry *existing = NULL;
    struct dict_entry *e = dict_add(*table, name, len, &existing);
    struct pubsub_subs *s;
    if (e) {
        s = mem_calloc(1, sizeof(*s));
        dict_entry_set_value(*table, e, &s, sizeof(s));
        count_change(kind, name, len, 1);
    } else {
        s = subs_of(existing);
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4;
        s->conn = mem_realloc(s->conn, s->cap * sizeof(*s->conn));
    }
    s->conn[s->n++] = c;
}

static void table_remove(enum pubsub_kind kind, const char *name, size_t len, struct conn *c)
{
    struct dict **table = table_of(kind);
    struct dict_entry *e = *table ? dict_find(*table, name, len) : NULL;
    if (!e)
        return;
    struct pubsub_subs *s = subs_of(e);
    for (size_t i = 0; i < s->n; i++) {
        if (s->conn[i] == c) {
            memmove(&s->conn[i], &s->conn[i + 1], (s->n - i - 1) * sizeof(*s->conn));
            s->n--;
            break;
        }
    }
    if (s->n > 0)
        return;
    mem_release(s->conn);
    mem_release(s);
    count_change(kind, name, len, -1); /* name may be a key of c's own: still there */
    dict_delete(*table, name, len);
    if (dict_size(*table) == 0)
        dict_destroy(table);
}

/* ---------------------------------------------------------------- replies */

/* an array in RESP2, a push in RESP3 (Redis addReplyPushLen) */
static void push_header(struct reply *r, int n)
{
    char h[16];
    int len = snprintf(h, sizeof(h), "%c%d\r\n", r->resp >= 3 ? '>' : '*', n);
    reply_raw(r, h, (size_t)len);
}

/* [p][un]subscribe, name (null when NULL), the subscriptions left */
static void confirm(struct reply *out, const char *kind, const char *name, size_t len, long long count)
{
    push_header(out, 3);
    reply_bulk_cstr(out, kind);
    if (name)
        reply_bulk(out, name, len);
    else
        reply_null(out);
    reply_int(out, count);
}

/* message, smessage, or (pattern not NULL) pmessage to one subscriber */
static void deliver(struct conn *c, enum pubsub_kind kind, const char *pattern, size_t plen,
                    const struct resp_arg *channel, const struct resp_arg *message)
{
    if (conn_output_full(c))
        return;
    struct reply *r = dispatch_push_target(c);
    push_header(r, pattern ? 4 : 3);
    reply_bulk_cstr(r, kind_names[kind].message);
    if (pattern)
        reply_bulk(r, pattern, plen);
    reply_bulk(r, channel->ptr, channel->len);
    reply_bulk(r, message->ptr, message->len);
    shard_mark_dirty(c);
}

/* ---------------------------------------------------------------- a connection's side */

static long long dict_count(const struct dict *d)
{
    return d ? (long long)dict_size(d) : 0;
}

/* the count a confirmation of kind carries: channels and patterns, or shard channels (Redis 7.0) */
static long long client_total(const struct pubsub_client *pc, enum pubsub_kind kind)
{
    if (!pc)
        return 0;
    return kind == PUBSUB_SHARD_CHANNEL ? dict_count(pc->shard_channels)
                                        : dict_count(pc->channels) + (long long)pc->npatterns;
}

static struct pubsub_client *client_of(struct conn *c)
{
    if (!c->pubsub)
        c->pubsub = mem_calloc(1, sizeof(*c->pubsub));
    return c->pubsub;
}

/* no subscription left: c is a normal client again */
static void client_release_if_empty(struct conn *c)
{
    struct pubsub_client *pc = c->pubsub;
    if (!pc || client_total(pc, PUBSUB_CHANNEL) > 0 || client_total(pc, PUBSUB_SHARD_CHANNEL) > 0)
        return;
    dict_destroy(&pc->channels);
    dict_destroy(&pc->shard_channels);
    mem_release(pc->patterns);
    mem_release(pc);
    c->pubsub = NULL;
}

static long pattern_index(const struct pubsub_client *pc, const char *p, size_t len)
{
    for (size_t i = 0; pc && i < pc->npatterns; i++)
        if (pc->patterns[i].len == len && memcmp(pc->patterns[i].ptr, p, len) == 0)
            return (long)i;
    return -1;
}

/* drop c's pattern i, writing its confirmation to out (when not NULL) */
static void drop_pattern(struct conn *c, size_t i, struct reply *out)
{
    struct pubsub_client *pc = c->pubsub;
    struct pubsub_name name = pc->patterns[i];
    memmove(&pc->patterns[i], &pc->patterns[i + 1], (pc->npatterns - i - 1) * sizeof(*pc->patterns));
    pc->npatterns--;
    table_remove(PUBSUB_PATTERN, name.ptr, name.len, c);
    if (out)
        confirm(out, "punsubscribe", name.ptr, name.len, client_total(pc, PUBSUB_PATTERN));
    mem_release(name.ptr);
}

/* c's own dict of channels of kind (a channel or a shard channel) */
static struct dict **client_channels(struct pubsub_client *pc, enum pubsub_kind kind)
{
    return kind == PUBSUB_SHARD_CHANNEL ? &pc->shard_channels : &pc->channels;
}

/* drop c's channel of kind (a key of c's own dict, or a copy), confirming to out (when not NULL) */
static void drop_channel(struct conn *c, enum pubsub_kind kind, const char *name, size_t len, struct reply *out)
{
    struct pubsub_client *pc = c->pubsub;
    table_remove(kind, name, len, c);
    if (out)
        confirm(out, kind_names[kind].unsubscribe, name, len, client_total(pc, kind) - 1);
    dict_delete(*client_channels(pc, kind), name, len); /* last: name may be the entry's own key */
}

/* every channel, pattern or shard channel of c, confirming each to out (when not NULL) */
static void drop_all(struct conn *c, enum pubsub_kind kind, struct reply *out)
{
    struct pubsub_client *pc = c->pubsub;
    bool none = true;
    if (kind == PUBSUB_PATTERN) {
        for (; pc && pc->npatterns > 0; none = false)
            drop_pattern(c, 0, out);
    } else {
        for (; pc && dict_count(*client_channels(pc, kind)) > 0; none = false) {
            struct dict_iter it;
            dict_iter_init(&it, *client_channels(pc, kind));
            size_t len;
            const char *name = dict_entry_key(dict_iter_next(&it), &len);
            drop_channel(c, kind, name, len, out);
        }
    }
    if (none && out) /* Redis answers even when there was nothing to drop */
        confirm(out, kind_names[kind].unsubscribe, NULL, 0, client_total(pc, kind));
}

long long pubsub_count(const struct conn *c, enum pubsub_kind kind)
{
    struct pubsub_client *pc = c->pubsub;
    if (!pc)
        return 0;
    return kind == PUBSUB_PATTERN ? (long long)pc->npatterns : dict_count(*client_channels(pc, kind));
}

bool pubsub_subscribed(const struct conn *c)
{
    return c->pubsub != NULL;
}

bool pubsub_subscriber_mode(const struct conn *c)
{
    return c->pubsub != NULL && c->resp == 2;
}

const char *pubsub_refused_command(const struct conn *c, const struct command *cmd, int argc,
                                   const struct resp_arg *argv)
{
    if (!pubsub_subscriber_mode(c) || (cmd->flags & CMD_SUBSCRIBER_OK))
        return NULL;
    const struct command *named = command_resolve_subcommand(cmd, argc, argv);
    /* no name: the container answers "unknown subcommand" or the arity error, as Redis does first */
    return named ? named->name : NULL;
}

/* where a confirmation goes: out, or (a command under CLIENT REPLY OFF|SKIP) the output all the same */
static struct reply *confirm_target(struct conn *c, struct reply *out)
{
    return out && (c->reply & CONN_REPLY_SILENT) ? dispatch_push_target(c) : out;
}

void pubsub_subscribe(struct conn *c, enum pubsub_kind kind, const struct resp_arg *name, struct reply *out)
{
    struct pubsub_client *pc = client_of(c);
    out = confirm_target(c, out);
    if (kind == PUBSUB_PATTERN) {
        if (pattern_index(pc, name->ptr, name->len) < 0) {
            if (pc->npatterns == pc->patterns_cap) {
                pc->patterns_cap = pc->patterns_cap ? pc->patterns_cap * 2 : 4;
                pc->patterns = mem_realloc(pc->patterns, pc->patterns_cap * sizeof(*pc->patterns));
            }
            char *copy = mem_alloc(name->len ? name->len : 1);
            memcpy(copy, name->ptr, name->len);
            pc->patterns[pc->npatterns++] = (struct pubsub_name){copy, name->len};
            table_add(PUBSUB_PATTERN, name->ptr, name->len, c);
        }
    } else {
        struct dict **mine = client_channels(pc, kind);
        if (!*mine)
            *mine = dict_create();
        if (dict_add(*mine, name->ptr, name->len, NULL))
            table_add(kind, name->ptr, name->len, c);
    }
    confirm(out, kind_names[kind].subscribe, name->ptr, name->len, client_total(pc, kind));
}

void pubsub_unsubscribe(struct conn *c, enum pubsub_kind kind, const struct resp_arg *name, struct reply *out)
{
    struct pubsub_client *pc = c->pubsub;
    out = confirm_target(c, out);
    if (!name) {
        drop_all(c, kind, out);
    } else if (kind == PUBSUB_PATTERN) {
        long i = pattern_index(pc, name->ptr, name->len);
        if (i >= 0)
            drop_pattern(c, (size_t)i, out);
        else
            confirm(out, "punsubscribe", name->ptr, name->len, client_total(pc, kind));
    } else {
        if (pc && *client_channels(pc, kind) && dict_find(*client_channels(pc, kind), name->ptr, name->len))
            drop_channel(c, kind, name->ptr, name->len, out);
        else
            confirm(out, kind_names[kind].unsubscribe, name->ptr, name->len, client_total(pc, kind));
    }
    client_release_if_empty(c);
}

void pubsub_conn_closed(struct conn *c)
{
    if (!c->pubsub)
        return;
    drop_all(c, PUBSUB_CHANNEL, NULL);
    drop_all(c, PUBSUB_PATTERN, NULL);
    drop_all(c, PUBSUB_SHARD_CHANNEL, NULL);
    client_release_if_empty(c);
}

/* ---------------------------------------------------------------- the thread's subscribers */

long long pubsub_publish_local(bool shard, const struct resp_arg *channel, const struct resp_arg *message)
{
    long long receivers = 0;
    enum pubsub_kind kind = shard ? PUBSUB_SHARD_CHANNEL : PUBSUB_CHANNEL;
    struct dict *table = *table_of(kind);
    struct dict_entry *e = table ? dict_find(table, channel->ptr, channel->len) : NULL;
    if (e) {
        struct pubsub_subs *s = subs_of(e);
        for (size_t i = 0; i < s->n; i++)
            deliver(s->conn[i], kind, NULL, 0, channel, message);
        receivers += (long long)s->n;
    }
    if (shard || !pubsub_patterns) /* shard channels have no patterns */
        return receivers;
    struct dict_iter it;
    dict_iter_init(&it, pubsub_patterns);
    while ((e = dict_iter_next(&it))) {
        size_t plen;
        const char *pattern = dict_entry_key(e, &plen);
        if (!util_glob_match(pattern, plen, channel->ptr, channel->len, false))
            continue;
        struct pubsub_subs *s = subs_of(e);
        for (size_t i = 0; i < s->n; i++)
            deliver(s->conn[i], PUBSUB_PATTERN, pattern, plen, channel, message);
        receivers += (long long)s->n;
    }
    return receivers;
}

/* the names of a table matching pattern (all when NULL), as an array */
static void names_local(struct dict *table, const struct resp_arg *pattern, struct reply *out)
{
    struct reply items;
    reply_init(&items);
    long long n = 0;
    if (table) {
        struct dict_iter it;
        struct dict_entry *e;
        dict_iter_init(&it, table);
        while ((e = dict_iter_next(&it))) {
            size_t len;
            const char *name = dict_entry_key(e, &len);
            if (pattern && !util_glob_match(pattern->ptr, pattern->len, name, len, false))
                continue;
            reply_bulk(&items, name, len);
            n++;
        }
    }
    reply_array(out, n);
    reply_raw(out, items.buf, items.len);
    reply_deinit(&items);
}

void pubsub_channels_local(bool shard, const struct resp_arg *pattern, struct reply *out)
{
    names_local(*table_of(shard ? PUBSUB_SHARD_CHANNEL : PUBSUB_CHANNEL), pattern, out);
}

void pubsub_patterns_local(struct reply *out)
{
    names_local(pubsub_patterns, NULL, out);
}

long long pubsub_numsub_local(bool shard, const struct resp_arg *channel)
{
    struct dict *table = *table_of(shard ? PUBSUB_SHARD_CHANNEL : PUBSUB_CHANNEL);
    struct dict_entry *e = table ? dict_find(table, channel->ptr, channel->len) : NULL;
    return e ? (long long)subs_of(e)->n : 0;
}

long long pubsub_publish_async(bool shard, const struct resp_arg *channel, const struct resp_arg *message)
{
    return notify_publish_message(shard_self, shard, channel, message);
}
