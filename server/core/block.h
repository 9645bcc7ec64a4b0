/*
 * block: clients waiting in blocking commands (BLPOP BLMOVE BZPOPMIN ...)
 * for their keys, on the keys' owners (block.c).
 */
#ifndef PERCORE_CORE_BLOCK_H
#define PERCORE_CORE_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "percore/resp.h"

struct blockers;
struct conn;
struct shard;
struct slot;
struct command;
struct reply;

struct blockers *block_create(int shard);
void block_destroy(struct blockers **b);
/* a table starts with the number of its waiters: the write hooks look only when there are some (inline) */
static inline size_t block_waiting(const struct blockers *b) { return *(const size_t *)(const void *)b; }
/* a blocking command found nothing here and may wait (CALL_BLOCKED): it waits for its keys (its reply goes
 * to home's slot) */
void block_register(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv, int db,
                    int resp, uint64_t client, int home, struct conn *conn, struct slot *slot, int part);
/* a command changed key of db: its waiters are served after it (block_serve_ready) */
void block_note_key(struct shard *self, int db, const char *key, size_t len);
/* databases db and db2 (-1: one) were swapped: every waited-for key of them may hold data now */
void block_note_databases(struct shard *self, int db, int db2);
/* serve the waiters of the keys noted, unless a serving round is under way (it sees them) */
void block_serve_ready(struct shard *self);
/* home side: a waiter's reply, served by its owner */
void block_served(struct conn *c, struct slot *s, int part, const char *reply, size_t len);
/* owner side, the internal commands a blocked client's home sends its keys' owners (block.c):
 *   __bcancel client slot          drop its waiter: ":1" it was waiting, ":0" it was served
 *   __bwait <blocking command>     this shard's part of a command on keys of several shards waits: ":1"
 *   __bprobe type skip pos key...  which of these keys holds data (see probe_run) */
extern const struct command block_cancel_command;
extern const struct command block_part_command;
extern const struct command block_probe_command;
bool block_owner_command(const struct command *cmd);
void block_owner_run(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv, int db,
                     int resp, uint64_t client, int home, struct conn *conn, struct slot *slot, int part,
                     struct reply *out);
/* a blocking command whose keys live on several shards, run while its keys are locked */
void block_run_multi(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv);
void block_multi_free(struct slot *s);
/* a gathered XREAD / XREADGROUP BLOCK (s: its slot, its keys still locked) found nothing on the copies:
 * each owner of its keys queues its part, then the locks go and it waits as block_run_multi's commands do */
void block_gathered_wait(struct conn *c, struct slot *s);
/* run a blocking command (its keys on owner, -1 several shards, -2 none) */
void block_run(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv, int owner);
/* CLIENT UNBLOCK: false when c is not blocked; error: answer UNBLOCKED instead of the timeout reply */
bool block_unblock(struct conn *c, bool error);
void block_conn_closed(struct conn *c);
void block_conn_freed(struct conn *c);

#endif
