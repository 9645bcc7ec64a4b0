/*
 * pubsub: Redis 7.0's Pub/Sub (SUBSCRIBE, PSUBSCRIBE, their UNSUBSCRIBEs,
 * PUBLISH, PUBSUB; the sharded SSUBSCRIBE SUNSUBSCRIBE SPUBLISH) over
 * shards that each own their connections.
 *
 * Every shard thread keeps its own subscriber tables (server/core/pubsub.c):
 * channel -> its subscribed connections, pattern -> its subscribed
 * connections, and each connection its own channels and patterns.  Only
 * that thread touches them.  PUBLISH delivers to the publisher's shard's
 * subscribers at once and fans out to every other shard through the handoff
 * (server/cmd/pubsub.c), where each delivers to its own and answers how many
 * it reached; the reply is the sum.  PUBSUB CHANNELS / NUMSUB / NUMPAT fan
 * out the same way and merge.
 *
 * Every function here runs on the thread that owns c (or, without c, on a
 * shard thread about that thread's own subscribers).
 */
#ifndef PERCORE_PUBSUB_H
#define PERCORE_PUBSUB_H

#include <stdbool.h>
#include <stddef.h>

struct conn;
struct command;
struct shard;
struct reply;
struct resp_arg;

/* what a subscription names: a channel (SUBSCRIBE), a pattern (PSUBSCRIBE), a shard channel (SSUBSCRIBE) */
enum pubsub_kind { PUBSUB_CHANNEL, PUBSUB_PATTERN, PUBSUB_SHARD_CHANNEL };

/* ---- a connection's subscriptions (core/pubsub.c) */

/* how many subscriptions of kind c has */
long long pubsub_count(const struct conn *c, enum pubsub_kind kind);
/* Redis's CLIENT_PUBSUB flag: c has a subscription (CLIENT LIST's 'P', the pubsub output class) */
bool pubsub_subscribed(const struct conn *c);
/* subscribed and speaking RESP2: only (P)(UN)SUBSCRIBE, PING, QUIT, RESET are allowed */
bool pubsub_subscriber_mode(const struct conn *c);
/*
 * Subscribe c to name (of kind), if it is not already, and write Redis's
 * confirmation ([p|s]subscribe, name, subscription count: channels and
 * patterns together, shard channels apart) to out: an array in RESP2, a
 * push in RESP3.  Confirmations are pushes: under CLIENT REPLY OFF|SKIP
 * they go to c's output all the same (Redis 7.0).
 */
void pubsub_subscribe(struct conn *c, enum pubsub_kind kind, const struct resp_arg *name, struct reply *out);
/*
 * Unsubscribe c from one name of kind (it need not be subscribed), or from
 * every one when name is NULL (channels in no set order, patterns in the
 * order subscribed), writing a confirmation for each (with a null name when
 * there was none) to out.
 */
void pubsub_unsubscribe(struct conn *c, enum pubsub_kind kind, const struct resp_arg *name, struct reply *out);
/* c is closing, or RESET: drop every subscription it has, confirming none (conn.c) */
void pubsub_conn_closed(struct conn *c);

/* ---- this shard thread's subscribers (core/pubsub.c) */

/*
 * Deliver a message on channel to this thread's subscribers of the channel
 * and of every pattern matching it, in that order (shard: to the
 * subscribers of the shard channel, as smessage); returns how many
 * deliveries (Redis's receivers count).  A subscriber whose pending output
 * has reached its hard limit is counted but sent nothing: its next flush
 * closes it.
 */
long long pubsub_publish_local(bool shard, const struct resp_arg *channel, const struct resp_arg *message);
/* (S)PUBLISH without a connection to gather the other shards' counts (inside a script): delivered here at
 * once and on every other shard after this loop turn, in order with this shard's keyspace events; the
 * receivers on this shard (Redis counts every receiver).  The calling shard's thread. */
long long pubsub_publish_async(bool shard, const struct resp_arg *channel, const struct resp_arg *message);
/* this thread's channels (shard channels when shard) with a subscriber, matching pattern (all when NULL),
 * as an array */
void pubsub_channels_local(bool shard, const struct resp_arg *pattern, struct reply *out);
/* this thread's subscribers of channel (of the shard channel when shard) */
long long pubsub_numsub_local(bool shard, const struct resp_arg *channel);
/* this thread's patterns with a subscriber, as an array */
void pubsub_patterns_local(struct reply *out);

/* ---- INFO's counts of names with a subscriber (core/pubsub.c): each counted by one shard, a stats gauge */

/* end of a loop turn: this turn's changes of the counts that other shards keep leave for them */
void pubsub_flush(struct shard *self);
/* the thread's counts and pending changes (teardown) */
void pubsub_teardown_shard(void);

/* ---- the dispatcher's check: the commands flagged CMD_SUBSCRIBER_OK run, the rest are refused */

/*
 * Redis's processCommand rule for a RESP2 client in subscriber mode: the
 * name for Redis 7.0's "Can't execute '<cmd>'" error when c may not run cmd
 * (a container's subcommand is named "container|sub"), else NULL: when c is
 * not in subscriber mode, and for an unknown subcommand or one with the wrong
 * arity, whose error from the container Redis sends first.  The dispatcher
 * asks only for a connection with a subscription, and not for the commands
 * EXEC runs (Redis checks a command when it arrives).
 */
const char *pubsub_refused_command(const struct conn *c, const struct command *cmd, int argc,
                                   const struct resp_arg *argv);

#endif
