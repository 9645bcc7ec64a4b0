/*
 * multi: MULTI / EXEC / DISCARD / WATCH / UNWATCH of a connection, for the
 * handlers of server/cmd/multi.c (they run on the connection's home shard,
 * ROUTE_HOME).  The state, the queue and the atomic EXEC are the core's
 * (server/core/txn.c): EXEC locks every key its commands name and every key
 * the connection watches on their owners, checks the watches, then runs the
 * queued commands by their usual routes; its reply may come later, through
 * the connection's reply slots, so EXEC and WATCH may write nothing to out.
 */
#ifndef PERCORE_MULTI_H
#define PERCORE_MULTI_H

struct conn;
struct command;
struct reply;
struct resp_arg;

void multi_begin(struct conn *c, struct reply *out);
void multi_discard(struct conn *c, struct reply *out);
/* argv: EXEC as sent (its name: MONITOR shows it that way, after the commands it ran) */
void multi_exec(struct conn *c, const struct command *cmd, const struct resp_arg *argv, struct reply *out);
void multi_watch(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv, struct reply *out);
void multi_unwatch(struct conn *c, struct reply *out);

#endif
