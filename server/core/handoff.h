/*
 * handoff: the bounded MPSC rings between shards that carry only the
 * commands that need another shard, and their replies (handoff.c;
 * ARCHITECTURE.md rules 4 and 5).
 */
#ifndef PERCORE_CORE_HANDOFF_H
#define PERCORE_CORE_HANDOFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "percore/resp.h"

struct shard;
struct conn;
struct slot;
struct command;

void handoff_setup_shard(struct shard *self, int nshards, int inbox_size, int credits);
void handoff_teardown_shard(struct shard *self);
/* queue one command for shard `target` on behalf of connection c */
void handoff_send(struct conn *c, int target, const struct command *cmd, int db, int argc,
                  const struct resp_arg *argv, struct slot *s, int part);
/* push the batches built since the last call (end of a read or a step) */
void handoff_flush(struct shard *self);
/* retry a connection's stalled batches; true when none is left */
bool handoff_retry(struct conn *c);
/* execute batches from the inbox, process our own returning batches; returns work done */
size_t handoff_drain(struct shard *self);
/* a script is busy here (its hook): answer the clients' commands waiting in the inbox -BUSY */
void handoff_refuse_busy(struct shard *self);
/* a busy script's hook: the replies that came back to our clients (not `running`'s, the script's client) that
 * complete a remote command alone and start nothing go out now, the rest after the script (handoff.c) */
void handoff_deliver_busy(struct shard *self, uint64_t running);
/* ring the doorbells of shards we pushed to this turn that may be asleep */
void handoff_ring(struct shard *self);
/* a batch with no connection (a transaction's unlock or grant): pushed now or as soon as there is a credit */
void handoff_send_system(struct shard *self, int target, const struct command *cmd, int db, int argc,
                         const struct resp_arg *argv);
/* a blocked client's reply, served here, to its home (a delivery) */
void handoff_send_served(struct shard *self, int home, struct conn *conn, struct slot *slot, int part,
                         const char *reply, size_t len);
/* a split command's part that locks its keys here first, then runs (txn.c); its answer is the part's
 * reply, or TXN_LOCK_QUEUED when the lock request queued: the part then runs once granted and its
 * reply comes home as a delivery */
void handoff_send_locking(struct conn *c, int target, const struct command *cmd, int db, int argc,
                          const struct resp_arg *argv, struct slot *s, int part);
/* owner side: the queued part of transaction txid was granted its keys (false: txid has none here) */
bool handoff_lockrun_granted(struct shard *self, uint64_t txid);
/* run the granted parts and send their replies home */
void handoff_run_granted(struct shard *self);
/* push the connection-less batches that waited for credits */
void handoff_retry_system(struct shard *self);
/* keys came free here: run the batches parked for them, in order, and send their replies home */
void handoff_run_parked(struct shard *self);
/* a closed connection's stalled batches are dropped */
void handoff_drop_stalled(struct conn *c);

#endif
