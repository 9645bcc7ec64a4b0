/*
 * debug (commands): DEBUG, Redis 7.0's testing command, behind
 * `enable-debug-command` (no by default; local: loopback clients only),
 * with its error text.  What it has: DIGEST and DIGEST-VALUE (Redis's
 * signatures, digest.h), SLEEP, SET-ACTIVE-EXPIRE, ERROR, LOG,
 * CHANGE-REPL-ID (no replication yet: nothing to change), HELP.
 *
 * DIGEST: every shard computes, per database, the xor of its own keys'
 * digests (`__debug digest`, an array of db, digest pairs for its non-empty
 * databases) and the home combines them in database order as Redis's
 * computeDatasetDigest does.  DIGEST-VALUE: every shard answers the keys it
 * has (a key lives on one shard; the others answer zeros) and the home
 * xors the answers.  The parts are not one cut: a DIGEST taken while
 * clients write may mix moments (Redis's tests take it when quiet).  With
 * one store (one shard, the global-lock build) the home computes it alone.
 *
 * SLEEP stalls the connection's shard, as Redis's stalls the server (a
 * testing tool for a stalled server); the other shards go on.
 *
 * Threading: the handler runs on the connection's shard; each `__debug`
 * part reads its own shard's store only.
 */
#include "admin_families.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/conn.h"
#include "percore/digest.h"
#include "percore/log.h"
#include "percore/mem.h"
#include "percore/reply.h"
#include "percore/rread.h"
#include "percore/shard.h"
#include "percore/stats.h"
#include "percore/store.h"
#include "percore/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* ---------------------------------------------------------------- the shards' parts */

/* this store's part of DIGEST: *n, db, digest, ... for its non-empty databases */
static void digest_part(struct cmd_ctx *ctx)
{
    int dbs = store_databases(ctx->store);
    struct reply items;
    reply_init(&items);
    long long n = 0;
    for (int db = 0; db < dbs; db++) {
        unsigned char d[DIGEST_LEN];
        if (digest_db(ctx->store, db, d)) {
            reply_int(&items, db);
            reply_bulk(&items, (const char *)d, DIGEST_LEN);
            n += 2;
        }
    }
    reply_array(ctx->out, n);
    reply_raw(ctx->out, items.buf, items.len);
    reply_deinit(&items);
}

/* this store's part of DIGEST-VALUE: the raw digest of each key it has (zeros for the others) */
static void digest_value_part(struct cmd_ctx *ctx, int first)
{
    reply_array(ctx->out, ctx->argc - first);
    for (int j = first; j < ctx->argc; j++) {
        unsigned char d[DIGEST_LEN] = {0};
        const struct resp_arg *k = &ctx->argv[j];
        const struct object *o = store_peek(ctx->store, ctx->db, k->ptr, k->len, ctx->now, NULL);
        if (o)
            digest_value(d, o, store_get_expire(ctx->store, ctx->db, k->ptr, k->len, ctx->now) != -1);
        reply_bulk(ctx->out, (const char *)d, DIGEST_LEN);
    }
}

/* `__debug digest` or `__debug digest-value <key>...` */
static void cmd_debug_part(struct cmd_ctx *ctx)
{
    if (cmd_arg_is(&ctx->argv[1], "digest"))
        digest_part(ctx);
    else
        digest_value_part(ctx, 2);
}

static const struct command debug_part_command = {
    "__debug", cmd_debug_part, -2, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, "",
};

/* ---------------------------------------------------------------- merging */

static void reply_digest(struct reply *out, const unsigned char d[DIGEST_LEN])
{
    char hex[2 * DIGEST_LEN + 1];
    digest_hex(hex, d);
    reply_simple(out, hex);
}

/* the next bulk of a part as a digest (zeros when it is not one) */
static void read_digest(struct rread *r, unsigned char d[DIGEST_LEN])
{
    const char *p;
    size_t len;
    if (rread_bulk(r, &p, &len) && p && len == DIGEST_LEN)
        memcpy(d, p, DIGEST_LEN);
    else
        memset(d, 0, DIGEST_LEN);
}

static void merge_digest(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                         const char *const *parts, const size_t *lens)
{
    (void)argc, (void)argv;
    int dbs = config_current()->databases;
    unsigned char *xors = mem_calloc((size_t)dbs, DIGEST_LEN);
    bool *any = mem_calloc((size_t)dbs, sizeof(bool));
    for (int i = 0; i < nparts; i++) {
        struct rread r;
        char t;
        long long n, db;
        rread_init(&r, parts[i], lens[i]);
        if (!rread_agg(&r, &t, &n))
            continue;
        for (long long j = 0; j + 1 < n && rread_int(&r, &db); j += 2) {
            unsigned char d[DIGEST_LEN];
            read_digest(&r, d);
            if (db < 0 || db >= dbs)
                continue;
            any[db] = true;
            for (int b = 0; b < DIGEST_LEN; b++)
                xors[db * DIGEST_LEN + b] ^= d[b];
        }
    }
    unsigned char final[DIGEST_LEN] = {0};
    for (int db = 0; db < dbs; db++)
        if (any[db])
            digest_dataset_add(final, db, xors + db * DIGEST_LEN);
    reply_digest(out, final);
    mem_release(xors);
    mem_release(any);
}

static void merge_digest_value(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                               const char *const *parts, const size_t *lens)
{
    (void)argv;
    int n = argc - 2;
    unsigned char *d = mem_calloc((size_t)n + 1, DIGEST_LEN);
    for (int i = 0; i < nparts; i++) {
        struct rread r;
        char t;
        long long count;
        rread_init(&r, parts[i], lens[i]);
        if (!rread_agg(&r, &t, &count))
            continue;
        for (int j = 0; j < n && j < count; j++) {
            unsigned char one[DIGEST_LEN];
            read_digest(&r, one);
            for (int b = 0; b < DIGEST_LEN; b++)
                d[j * DIGEST_LEN + b] ^= one[b];
        }
    }
    reply_array(out, n);
    for (int j = 0; j < n; j++)
        reply_digest(out, d + j * DIGEST_LEN);
    mem_release(d);
}

/* DIGEST or DIGEST-VALUE: every shard's part merged, or with one store the home's alone */
static void digest_command(struct cmd_ctx *ctx, bool values)
{
    int n = ctx->argc;
    struct resp_arg *argv = mem_alloc((size_t)n * sizeof(*argv));
    argv[0] = (struct resp_arg){"__debug", 7};
    for (int j = 1; j < n; j++)
        argv[j] = ctx->argv[j];
    conn_merge_fn *merge = values ? merge_digest_value : merge_digest;
    if (shard_stores() == 1) {
        struct reply part;
        reply_init(&part);
        struct cmd_ctx one = *ctx;
        one.out = &part;
        one.argv = argv;
        cmd_debug_part(&one);
        const char *parts[1] = {part.buf ? part.buf : ""};
        size_t lens[1] = {part.len};
        merge(ctx->out, n, argv, 1, parts, lens);
        reply_deinit(&part);
    } else {
        conn_fanout(ctx->conn, &debug_part_command, n, argv, merge);
    }
    mem_release(argv);
}

/* ---------------------------------------------------------------- DEBUG */

static void debug_help(struct cmd_ctx *ctx)
{
    static const char *const help[] = {
        "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANGE-REPL-ID",
        "    Change the replication IDs of the instance.",
        "    Dangerous: should be used only for testing the replication subsystem.",
        "DIGEST",
        "    Output a hex signature representing the current DB content.",
        "DIGEST-VALUE <key> [<key> ...]",
        "    Output a hex signature of the values of all the specified keys.",
        "ERROR <string>",
        "    Return a Redis protocol error with <string> as message. Useful for clients",
        "    unit tests to simulate Redis errors.",
        "LOG <message>",
        "    Write <message> to the server log.",
        "SET-ACTIVE-EXPIRE <0|1>",
        "    Setting it to 0 disables expiring keys in background when they are not",
        "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
        "    default.",
        "SLEEP <seconds>",
        "    Stop the server for <seconds>. Decimals allowed.",
        "HELP",
        "    Prints this help.",
    };
    size_t n = sizeof help / sizeof help[0];
    reply_array(ctx->out, (long long)n);
    for (size_t i = 0; i < n; i++)
        reply_simple(ctx->out, help[i]);
}

/* an argument as a C string (cut to 63 bytes), for Redis's strtod and atoi readings */
static void arg_cstr(const struct resp_arg *a, char buf[64])
{
    size_t n = a->len < 63 ? a->len : 63;
    memcpy(buf, a->ptr, n);
    buf[n] = 0;
}

static void debug_sleep(struct cmd_ctx *ctx)
{
    char buf[64];
    arg_cstr(&ctx->argv[2], buf);
    long long us = (long long)(strtod(buf, NULL) * 1000000);
    if (us > 0) {
        struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
    reply_ok(ctx->out);
}

static void cmd_debug(struct cmd_ctx *ctx)
{
    const char *refused = conn_protected_refusal(ctx->conn, ctx->config);
    if (refused) { /* Redis refuses it before it runs: a rejected call (inside MULTI: dispatch.c) */
        stats_subcommand_of(&command_family_debug[0], &command_family_debug[0]);
        stats_sub.rejected = true;
        reply_error(ctx->out, refused);
        return;
    }
    const struct resp_arg *sub = &ctx->argv[1];
    if (ctx->argc == 2 && cmd_arg_is(sub, "help")) {
        debug_help(ctx);
    } else if (ctx->argc == 2 && cmd_arg_is(sub, "digest")) {
        digest_command(ctx, false);
    } else if (cmd_arg_is(sub, "digest-value")) {
        digest_command(ctx, true);
    } else if (ctx->argc == 3 && cmd_arg_is(sub, "error")) {
        char *msg = mem_strndup(ctx->argv[2].ptr, ctx->argv[2].len);
        reply_error(ctx->out, msg);
        mem_release(msg);
    } else if (ctx->argc == 3 && cmd_arg_is(sub, "log")) {
        log_warn("DEBUG LOG: %.*s", (int)ctx->argv[2].len, ctx->argv[2].ptr);
        reply_ok(ctx->out);
    } else if (ctx->argc == 2 && cmd_arg_is(sub, "change-repl-id")) {
        reply_ok(ctx->out);
    } else if (ctx->argc == 3 && cmd_arg_is(sub, "sleep")) {
        debug_sleep(ctx);
    } else if (ctx->argc == 3 && cmd_arg_is(sub, "set-active-expire")) {
        char buf[64];
        arg_cstr(&ctx->argv[2], buf);
        shard_set_active_expire(atoi(buf) != 0);
        reply_ok(ctx->out);
    } else {
        reply_errorf(ctx->out, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try DEBUG HELP.",
                     (int)sub->len, sub->ptr);
    }
}

const struct command command_family_debug[] = {
    {"debug", cmd_debug, -2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_PROTECTED, 0, 0, 0, ROUTE_HOME,
     "@admin @slow @dangerous"},
};
const size_t command_family_debug_count = sizeof command_family_debug / sizeof command_family_debug[0];
