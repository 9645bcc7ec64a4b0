/*
 * notify: keyspace notifications (Redis's notifyKeyspaceEvent), published
 * to subscribers on every shard.
 *
 * A shard that runs a command, expires or evicts a key publishes
 * `__keyspace@<db>__:<key>` (message: the event) and `__keyevent@<db>__:<event>`
 * (message: the key), as notify-keyspace-events asks: at once to its own
 * subscribers, and to every other shard's in one message per shard and loop
 * turn (notify_flush), so each shard's events reach every subscriber in the
 * order they happened.  With notify-keyspace-events empty nothing is
 * recorded and this module is never called.
 *
 * Threading: every function on its own shard's thread.
 */
#ifndef PERCORE_NOTIFY_H
#define PERCORE_NOTIFY_H

#include <stdbool.h>

#include <stddef.h>

struct shard;
struct command;

/* event (class type, NOTIFY_*) happened on key of db: published as notify-keyspace-events says */
void notify_publish(struct shard *self, int type, const char *event, int db, const char *key, size_t len);
/* a message published as keyspace events are (PUBLISH inside a script, which may not wait for the other
 * shards' counts): to this shard's subscribers now, to the others' at the end of the turn; the receivers
 * here */
struct resp_arg;
long long notify_publish_message(struct shard *self, bool shard, const struct resp_arg *channel,
                                 const struct resp_arg *message);
/* end of a loop turn (self->notify set): the events of this turn leave for the other shards */
void notify_flush(struct shard *self);
/* this shard's pending events (teardown) */
void notify_teardown_shard(struct shard *self);
/* the message that carries them: `__notify <channel/message pairs>`, run where it arrives */
extern const struct command notify_deliver_command;

#endif
