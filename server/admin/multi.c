/*
 * multi: the transaction commands, MULTI EXEC DISCARD WATCH UNWATCH (Redis's
 * multi.c).  Each runs on the connection's home shard and hands over to the
 * core (multi.h), which keeps the queue and runs EXEC atomically across
 * shards.  The commands queued between MULTI and EXEC never reach a handler
 * here: the dispatcher queues them (and refuses the ones Redis refuses).
 */
#include "admin_families.h"

#include "percore/multi.h"

static void cmd_multi(struct cmd_ctx *ctx) { multi_begin(ctx->conn, ctx->out); }
static void cmd_exec(struct cmd_ctx *ctx);
static void cmd_watch(struct cmd_ctx *ctx);
static void cmd_discard(struct cmd_ctx *ctx) { multi_discard(ctx->conn, ctx->out); }
static void cmd_unwatch(struct cmd_ctx *ctx) { multi_unwatch(ctx->conn, ctx->out); }

/* the table's entries, for the handlers that hand their own entry to the core */
enum { MULTI_CMD_MULTI, MULTI_CMD_EXEC, MULTI_CMD_DISCARD, MULTI_CMD_WATCH, MULTI_CMD_UNWATCH };

#define TX (CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
#define BUSY (CMD_ALLOW_BUSY | CMD_BUSY_WATCHES) /* they drop or add watches (command.h) */

const struct command command_family_multi[] = {
    [MULTI_CMD_MULTI] = {"multi", cmd_multi, 1, TX | CMD_FAST | CMD_NO_QUEUE | CMD_OPENS_TXN | CMD_ALLOW_BUSY, 0, 0, 0, ROUTE_HOME,
                         "@fast @transaction"},
    [MULTI_CMD_EXEC] = {"exec", cmd_exec, 1, TX | CMD_NO_QUEUE | CMD_ENDS_TXN | CMD_FEEDS_MONITOR | CMD_SKIP_SLOWLOG | CMD_RUNS_QUEUE, 0, 0, 0, ROUTE_HOME, "@slow @transaction"},
    [MULTI_CMD_DISCARD] = {"discard", cmd_discard, 1, TX | CMD_FAST | CMD_NO_QUEUE | CMD_ENDS_TXN | BUSY, 0, 0, 0, ROUTE_HOME, "@fast @transaction"},
    [MULTI_CMD_WATCH] = {"watch", cmd_watch, -2, TX | CMD_FAST | CMD_NO_QUEUE | BUSY, 1, -1, 1, ROUTE_HOME, "@fast @transaction"},
    [MULTI_CMD_UNWATCH] = {"unwatch", cmd_unwatch, 1, TX | CMD_FAST | BUSY, 0, 0, 0, ROUTE_HOME, "@fast @transaction"},
};

const size_t command_family_multi_count = sizeof(command_family_multi) / sizeof(command_family_multi[0]);

static void cmd_exec(struct cmd_ctx *ctx)
{
    multi_exec(ctx->conn, &command_family_multi[MULTI_CMD_EXEC], ctx->argv, ctx->out);
}

static void cmd_watch(struct cmd_ctx *ctx)
{
    multi_watch(ctx->conn, &command_family_multi[MULTI_CMD_WATCH], ctx->argc, ctx->argv, ctx->out);
}
