/*
 * slowlog: the SLOWLOG command's memory of slow commands, one log per shard.
 *
 * A command that ran for slowlog-log-slower-than microseconds or more
 * (-1: never, 0: always) is recorded by its client's shard thread, into
 * that thread's own list (newest first, at most slowlog-max-len entries,
 * trimmed on each push as Redis does).  No other thread touches it: SLOWLOG
 * GET / LEN / RESET fan out (conn_fanout) and every shard answers for its
 * own log; slowlog_merge_get() merges the answers newest first.
 *
 * Entry ids are unique across shards: shard i's n-th entry (n from 0) has id
 * n * nshards + i, so ids grow with time within a shard, and across shards
 * only roughly.  Entries hold Redis 7.0's fields: id, unix time, duration
 * (us), argv (at most 32 arguments, each at most 128 bytes, with Redis's
 * "... (N more arguments)" / "... (N more bytes)" markers; AUTH, HELLO AUTH
 * and CONFIG SET requirepass values "(redacted)"), client addr and name.
 * A command is one entry, as in Redis, wherever it ran: one that ran on
 * another shard, or in parts on several, sends its handler time home with
 * its reply (call.h's CALL_TIME_HOME), and the home records the whole
 * command, its time the parts' sum, with the client's addr and name, once
 * every part is in (a blocking command as it blocks).  Internal cross-shard
 * helpers are not recorded (RENAME across shards runs as helpers only, a
 * gap), nor is EXEC (CMD_SKIP_SLOWLOG, Redis's skip_slowlog): the commands
 * it runs are.
 *
 * The dispatcher times each handler call once, for the command stats and
 * for this (slowlog_note): the slowlog reads no clock of its own.
 */
#ifndef PERCORE_SLOWLOG_H
#define PERCORE_SLOWLOG_H

#include <stdbool.h>
#include <stdint.h>

#include "percore/command.h"
#include "percore/config.h"

struct conn;
struct reply;

/* which arguments of a CMD_REDACTS command Redis shows as "(redacted)": redact[j] set for each secret of
 * argv's argc */
typedef void slowlog_redact_fn(const struct command *cmd, int argc, const struct resp_arg *argv, bool *redact);
/* setup, before the shards run: the redactor of the layer whose commands have secrets (AUTH HELLO CONFIG) */
void slowlog_set_redactor(slowlog_redact_fn *fn);
/* redact[] for cmd's argv, each of argc already false (the slowlog and MONITOR): the redactor's answer */
void slowlog_redactions(const struct command *cmd, int argc, const struct resp_arg *argv, bool *redact);

/* shard thread: record this call (ctx as the handler saw it); c is the home connection or NULL */
void slowlog_record(const struct cmd_ctx *ctx, const struct command *cmd, long long duration_us,
                    const struct conn *c);

/*
 * After a handler call that took ns nanoseconds (the dispatcher measures
 * every call once, for the command stats: stats_clock_ns): recorded when it
 * was slow enough.
 */
static inline void slowlog_note(const struct cmd_ctx *ctx, const struct command *cmd, uint64_t ns,
                                const struct conn *c)
{
    long long limit = ctx->config->slowlog_log_slower_than;
    if (limit >= 0 && (long long)(ns / 1000) >= limit)
        slowlog_record(ctx, cmd, (long long)(ns / 1000), c);
}

/* shard thread, on its own log: the newest `count` entries (-1: all) as the internal reply */
void slowlog_reply_local(struct reply *out, long long count);
long long slowlog_len_local(void);
void slowlog_reset_local(void);
/* shard thread, at its exit: free its log */
void slowlog_thread_teardown(void);

/* home: SLOWLOG GET's reply from every shard's slowlog_reply_local, newest first, at most count (-1 all) */
void slowlog_merge_get(struct reply *out, long long count, int nparts, const char *const *parts,
                       const size_t *lens);

#endif
