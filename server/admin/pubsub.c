/*
 * pubsub (commands): SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE PUBLISH,
 * the sharded SSUBSCRIBE SUNSUBSCRIBE SPUBLISH, the PUBSUB container's
 * CHANNELS NUMSUB NUMPAT SHARDCHANNELS SHARDNUMSUB (listed in server.c's
 * subcommand table, with HELP), and the RESP2 subscriber-mode rule the
 * dispatcher applies.  Replies are Redis 7.0.15's bytes, pushes in RESP3.
 *
 * Shard channels are channels of their own namespace (smessage), whose
 * names Redis Cluster checks as keys: the commands are CMD_SHARD_CHANNELS,
 * so on a cluster port a channel of another shard's slot gets -MOVED and
 * channels of several slots -CROSSSLOT before the handler runs, as Redis
 * Cluster answers; elsewhere they are no keys (a script may SPUBLISH to any).  Subscribers of any port may listen to one, so SPUBLISH reaches
 * every shard as PUBLISH does.
 *
 * The subscriptions live on the subscriber's own shard (core/pubsub.c), so
 * (P)(UN)SUBSCRIBE run on the connection's shard and touch only its tables.
 *
 * PUBLISH delivers to its own shard's subscribers at once, inside the
 * handler (so a RESP3 publisher subscribed to the channel gets the message
 * before the count, as from Redis), then, with more than one shard, fans
 *
 *     __pubsub publish <channel> <message> <home shard> <home's receivers>
 *
 * out to every shard (conn_fanout); the others deliver to their own
 * subscribers and answer how many, the home answers the count it already
 * has, and the reply is the sum.  Order per publisher: its messages leave
 * for a shard in its own batches, in order (handoff.c never reorders a
 * connection's batches; a stalled one stops the connection's parsing), and
 * each shard delivers a batch's messages in order, so every subscriber, on
 * whichever shard, sees one publisher's messages in the order published.
 * A shard delivering never waits for a subscriber: a slow one is cut off at
 * its output limit (pubsub class) on its own shard, and the publisher's
 * reply comes back as soon as every shard has appended the message.
 *
 * PUBSUB CHANNELS / NUMSUB / NUMPAT fan `__pubsub channels [pattern]`,
 * `__pubsub numsub <channel>...` and `__pubsub numpat` out; each shard
 * answers for its own subscribers and the home merges: channels and patterns
 * are deduplicated across shards (several shards may have subscribers of
 * one), NUMSUB counts summed.
 *
 * Threading: every handler is ROUTE_HOME on the connection's shard; the
 * `__pubsub` parts run on each shard against that shard's tables only.
 */
#include "admin_families.h"

#include "percore/command.h"
#include "percore/conn.h"
#include "percore/mem.h"
#include "percore/pubsub.h"
#include "percore/reply.h"
#include "percore/rread.h"
#include "percore/shard.h"
#include "percore/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the shards' parts */

/* `__pubsub publish|channels|numsub|numpat ...` on one shard, about its own subscribers */
static void cmd_pubsub_part(struct cmd_ctx *ctx)
{
    const struct resp_arg *what = &ctx->argv[1];
    bool shard = ctx->argv[1].len && (ctx->argv[1].ptr[0] == 's' || ctx->argv[1].ptr[0] == 'S'); /* spublish ... */
    if (cmd_arg_is(what, "publish") || cmd_arg_is(what, "spublish")) {
        long long home = -1, delivered = 0;
        util_str_to_ll(ctx->argv[4].ptr, ctx->argv[4].len, &home);
        util_str_to_ll(ctx->argv[5].ptr, ctx->argv[5].len, &delivered);
        if (home != ctx->shard)
            delivered = pubsub_publish_local(shard, &ctx->argv[2], &ctx->argv[3]);
        reply_int(ctx->out, delivered);
    } else if (cmd_arg_is(what, "channels") || cmd_arg_is(what, "shardchannels")) {
        pubsub_channels_local(shard, ctx->argc > 2 ? &ctx->argv[2] : NULL, ctx->out);
    } else if (cmd_arg_is(what, "numsub") || cmd_arg_is(what, "shardnumsub")) {
        reply_array(ctx->out, ctx->argc - 2);
        for (int j = 2; j < ctx->argc; j++)
            reply_int(ctx->out, pubsub_numsub_local(shard, &ctx->argv[j]));
    } else {
        pubsub_patterns_local(ctx->out);
    }
}

static const struct command pubsub_part_command = {
    "__pubsub", cmd_pubsub_part, -2, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, "",
};

/* ---------------------------------------------------------------- merging the parts */

/* an array's header at the cursor: its count, false when it is not one */
static bool part_array(struct rread *r, long long *count)
{
    char t;
    return rread_agg(r, &t, count) && t == '*';
}

static void merge_sum(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                      const char *const *parts, const size_t *lens)
{
    (void)argc, (void)argv;
    reply_int(out, rread_int_sum(nparts, parts, lens));
}

/* NUMSUB: the channels asked, each with its subscribers on every shard */
static void merge_numsub(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                         const char *const *parts, const size_t *lens)
{
    int n = argc - 2;
    long long *sums = mem_calloc((size_t)n + 1, sizeof(*sums));
    for (int i = 0; i < nparts; i++) {
        struct rread r;
        long long count, v;
        rread_init(&r, parts[i], lens[i]);
        if (!part_array(&r, &count))
            continue;
        for (int j = 0; j < n && j < count && rread_int(&r, &v); j++)
            sums[j] += v;
    }
    reply_array(out, (long long)n * 2);
    for (int j = 0; j < n; j++) {
        reply_bulk(out, argv[j + 2].ptr, argv[j + 2].len);
        reply_int(out, sums[j]);
    }
    mem_release(sums);
}

static int name_cmp(const void *a, const void *b)
{
    const struct resp_arg *x = a, *y = b;
    return util_bytes_cmp(x->ptr, x->len, y->ptr, y->len);
}

/* the names every shard listed (arrays of bulk strings), each once, sorted; *n of them */
static struct resp_arg *distinct_names(int nparts, const char *const *parts, const size_t *lens, size_t *n)
{
    size_t total = 0, cap = 16;
    struct resp_arg *names = mem_alloc(cap * sizeof(*names));
    for (int i = 0; i < nparts; i++) {
        struct rread r;
        long long count;
        const char *p;
        size_t len;
        rread_init(&r, parts[i], lens[i]);
        if (!part_array(&r, &count))
            continue;
        for (long long j = 0; j < count && rread_bulk(&r, &p, &len) && p; j++) {
            if (total == cap) {
                cap *= 2;
                names = mem_realloc(names, cap * sizeof(*names));
            }
            names[total++] = (struct resp_arg){p, len};
        }
    }
    if (total)
        qsort(names, total, sizeof(*names), name_cmp);
    size_t kept = 0;
    for (size_t i = 0; i < total; i++)
        if (kept == 0 || name_cmp(&names[kept - 1], &names[i]) != 0)
            names[kept++] = names[i];
    *n = kept;
    return names;
}

static void merge_channels(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                           const char *const *parts, const size_t *lens)
{
    (void)argc, (void)argv;
    size_t n;
    struct resp_arg *names = distinct_names(nparts, parts, lens, &n);
    reply_array(out, (long long)n);
    for (size_t i = 0; i < n; i++)
        reply_bulk(out, names[i].ptr, names[i].len);
    mem_release(names);
}

static void merge_numpat(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                         const char *const *parts, const size_t *lens)
{
    (void)argc, (void)argv;
    size_t n;
    mem_release(distinct_names(nparts, parts, lens, &n));
    reply_int(out, (long long)n);
}

/* `__pubsub <what>` and then the subcommand's arguments (PUBSUB's argv[2..]), to every shard */
static void pubsub_fanout(struct cmd_ctx *ctx, const char *what, conn_merge_fn *merge)
{
    int n = ctx->argc;
    struct resp_arg *argv = mem_alloc((size_t)n * sizeof(*argv));
    argv[0] = (struct resp_arg){"__pubsub", 8};
    argv[1] = (struct resp_arg){what, strlen(what)};
    for (int j = 2; j < n; j++)
        argv[j] = ctx->argv[j];
    conn_fanout(ctx->conn, &pubsub_part_command, n, argv, merge);
    mem_release(argv);
}

/* ---------------------------------------------------------------- commands */

static void subscribe_generic(struct cmd_ctx *ctx, enum pubsub_kind kind)
{
    for (int j = 1; j < ctx->argc; j++)
        pubsub_subscribe(ctx->conn, kind, &ctx->argv[j], ctx->out);
}

static void unsubscribe_generic(struct cmd_ctx *ctx, enum pubsub_kind kind)
{
    if (ctx->argc == 1)
        pubsub_unsubscribe(ctx->conn, kind, NULL, ctx->out);
    for (int j = 1; j < ctx->argc; j++)
        pubsub_unsubscribe(ctx->conn, kind, &ctx->argv[j], ctx->out);
}

static void cmd_subscribe(struct cmd_ctx *ctx)
{
    subscribe_generic(ctx, PUBSUB_CHANNEL);
}

static void cmd_psubscribe(struct cmd_ctx *ctx)
{
    subscribe_generic(ctx, PUBSUB_PATTERN);
}

static void cmd_ssubscribe(struct cmd_ctx *ctx)
{
    if (conn_in_exec(ctx->conn)) { /* Redis 7.0: EXEC denies blocking, and SSUBSCRIBE has no MULTI exception */
        reply_error(ctx->out, "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
        return;
    }
    subscribe_generic(ctx, PUBSUB_SHARD_CHANNEL);
}

static void cmd_unsubscribe(struct cmd_ctx *ctx)
{
    unsubscribe_generic(ctx, PUBSUB_CHANNEL);
}

static void cmd_punsubscribe(struct cmd_ctx *ctx)
{
    unsubscribe_generic(ctx, PUBSUB_PATTERN);
}

static void cmd_sunsubscribe(struct cmd_ctx *ctx)
{
    unsubscribe_generic(ctx, PUBSUB_SHARD_CHANNEL);
}

/* PUBLISH and SPUBLISH: here at once, then the other shards' parts; the receivers summed */
static void publish_generic(struct cmd_ctx *ctx, bool shard)
{
    if (!ctx->conn) { /* a script's: it cannot wait for the other shards' counts */
        reply_int(ctx->out, pubsub_publish_async(shard, &ctx->argv[1], &ctx->argv[2]));
        return;
    }
    long long local = pubsub_publish_local(shard, &ctx->argv[1], &ctx->argv[2]);
    if (shard_count() == 1) {
        reply_int(ctx->out, local);
        return;
    }
    char home[24], count[24];
    struct resp_arg argv[6] = {
        {"__pubsub", 8}, shard ? (struct resp_arg){"spublish", 8} : (struct resp_arg){"publish", 7},
        ctx->argv[1], ctx->argv[2],
        {home, (size_t)snprintf(home, sizeof(home), "%d", ctx->shard)},
        {count, (size_t)snprintf(count, sizeof(count), "%lld", local)},
    };
    conn_fanout(ctx->conn, &pubsub_part_command, 6, argv, merge_sum);
}

static void cmd_publish(struct cmd_ctx *ctx)
{
    publish_generic(ctx, false);
}

static void cmd_spublish(struct cmd_ctx *ctx)
{
    publish_generic(ctx, true);
}

/* CHANNELS and SHARDCHANNELS [pattern] */
static void channels_generic(struct cmd_ctx *ctx, const char *what)
{
    if (ctx->argc > 3) { /* Redis addReplySubcommandSyntaxError */
        reply_errorf(ctx->out, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try PUBSUB HELP.",
                     (int)strnlen(ctx->argv[1].ptr, ctx->argv[1].len < 128 ? ctx->argv[1].len : 128),
                     ctx->argv[1].ptr);
        return;
    }
    pubsub_fanout(ctx, what, merge_channels);
}

void cmd_pubsub_channels(struct cmd_ctx *ctx)
{
    channels_generic(ctx, "channels");
}

void cmd_pubsub_shardchannels(struct cmd_ctx *ctx)
{
    channels_generic(ctx, "shardchannels");
}

void cmd_pubsub_numsub(struct cmd_ctx *ctx)
{
    pubsub_fanout(ctx, "numsub", merge_numsub);
}

void cmd_pubsub_shardnumsub(struct cmd_ctx *ctx)
{
    pubsub_fanout(ctx, "shardnumsub", merge_numsub);
}

void cmd_pubsub_numpat(struct cmd_ctx *ctx)
{
    pubsub_fanout(ctx, "numpat", merge_numpat);
}

/* ---------------------------------------------------------------- table */

#define PS_FLAGS (CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUBSCRIBER_OK)

const struct command command_family_pubsub[] = {
    {"subscribe", cmd_subscribe, -2, PS_FLAGS, 0, 0, 0, ROUTE_HOME, "@pubsub @slow"},
    {"unsubscribe", cmd_unsubscribe, -1, PS_FLAGS, 0, 0, 0, ROUTE_HOME, "@pubsub @slow"},
    {"psubscribe", cmd_psubscribe, -2, PS_FLAGS, 0, 0, 0, ROUTE_HOME, "@pubsub @slow"},
    {"punsubscribe", cmd_punsubscribe, -1, PS_FLAGS, 0, 0, 0, ROUTE_HOME, "@pubsub @slow"},
    {"publish", cmd_publish, 3, CMD_PUBSUB | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_MAY_REPLICATE, 0, 0, 0,
     ROUTE_HOME, "@pubsub @fast"},
    {"ssubscribe", cmd_ssubscribe, -2, PS_FLAGS | CMD_SHARD_CHANNELS, 0, 0, 0, ROUTE_HOME, "@pubsub @slow"},
    {"sunsubscribe", cmd_sunsubscribe, -1, PS_FLAGS | CMD_SHARD_CHANNELS, 0, 0, 0, ROUTE_HOME, "@pubsub @slow"},
    {"spublish", cmd_spublish, 3,
     CMD_PUBSUB | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_MAY_REPLICATE | CMD_SHARD_CHANNELS, 0, 0, 0, ROUTE_HOME,
     "@pubsub @fast"},
};

const size_t command_family_pubsub_count = sizeof(command_family_pubsub) / sizeof(command_family_pubsub[0]);
