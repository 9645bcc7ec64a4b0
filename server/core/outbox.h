/*
 * outbox: bytes a shard sends to every other shard, gathered over a loop
 * turn and sent as one connection-less message per target (keyspace events,
 * MONITOR lines): `<name> <bytes>`, run by the target as an internal command.
 * Messages to one target leave in the order they were written
 * (handoff_send_system keeps that order when credits run out).
 *
 * Threading: owned by one shard thread.
 */
#ifndef PERCORE_OUTBOX_H
#define PERCORE_OUTBOX_H

#include <stdint.h>

struct command;
struct reply;
struct shard;

struct outbox;

struct outbox *outbox_create(int nshards);
void outbox_destroy(struct outbox **o);
/* the buffer of what goes to target, which now has something to send */
struct reply *outbox_to(struct outbox *o, int target);
/* send every target's bytes as `cmd <bytes>` and empty the buffers */
void outbox_flush(struct outbox *o, struct shard *self, const struct command *cmd);

#endif
