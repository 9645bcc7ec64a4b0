/*
 * monitor: MONITOR, Redis's feed of every command a client runs, to every
 * monitoring connection on every shard.
 *
 * The home shard of the client that sent a command formats Redis's line
 * (`+<sec>.<usec> [<db> <addr>] "arg" ...`, AUTH and HELLO secrets
 * "(redacted)") and delivers it at once to its own monitors, and to every
 * other shard's in one message per shard and loop turn.  Admin commands are
 * not shown, as in Redis.  A monitor is a client of the replica output class
 * (Redis's monitors are replicas inside, though Redis 7.0 limits their output
 * as the normal class's, unlimited by default): one that does not read is cut
 * off at that class's limits on its own shard, and no shard ever waits for it.
 * Like a Redis replica it may not touch the keyspace (dispatch.c refuses it).
 * EXEC feeds its own line, after the commands it ran (CMD_FEEDS_MONITOR).
 *
 * With no monitor open anywhere the feed costs one relaxed load of a line no
 * command writes.  Threading: every function on the calling shard's thread.
 */
#ifndef PERCORE_MONITOR_H
#define PERCORE_MONITOR_H

#include <stdatomic.h>
#include <stdbool.h>

struct conn;
struct shard;
struct command;
struct resp_arg;
struct reply;

/* monitors open on every shard: written when one starts or goes, read before every command */
struct monitor_census {
    _Alignas(128) atomic_int open;
    char pad[128 - sizeof(atomic_int)];
};
extern struct monitor_census monitor_census;

static inline bool monitor_any(void)
{
    return atomic_load_explicit(&monitor_census.open, memory_order_relaxed) != 0;
}

/* MONITOR on c: it gets every command's line from now on, +OK in out (Redis's answers when it is one
 * already, or inside EXEC) */
void monitor_start(struct conn *c, struct reply *out);
/* c is closing: if it was a monitor, it is one no more */
void monitor_conn_closed(struct conn *c);
/* c (of this shard) ran cmd: its line goes to every monitor (callers test monitor_any() first) */
void monitor_feed(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv);
/* the same for a command run on shard self in db by `who` (a script's redis.call: "lua", as Redis) */
void monitor_feed_as(struct shard *self, int db, const char *who, const struct command *cmd, int argc,
                     const struct resp_arg *argv);
/* end of a loop turn: this turn's lines leave for the other shards */
void monitor_flush(struct shard *self);
/* this shard's pending lines and monitor list (teardown) */
void monitor_teardown_shard(struct shard *self);
/* the message that carries them: `__monitor <lines>`, delivered where it arrives */
extern const struct command monitor_deliver_command;

#endif
