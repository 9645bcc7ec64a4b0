/*
 * txn: commands whose keys span shards, run with their keys locked, and
 * MULTI/EXEC/WATCH (txn.c; percore/multi.h is the admin layer's side).
 */
#ifndef PERCORE_CORE_TXN_H
#define PERCORE_CORE_TXN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conn_internal.h"
#include "percore/resp.h"

struct conn;
struct shard;
struct command;
struct txn;
struct reply;

/* a command whose keys span shards: lock them, run it, unlock */
void txn_run_command(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv);
/* a script that names keys it did not declare (percore/script.h): every shard's keyspace locked, it runs
 * on copies of the keys it names (dispatch_run_script_whole), then unlock; argv[argc .. argc+nextra): keys it
 * named already, copied with its declared ones */
void txn_run_script_whole(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                          int nextra);
/* the same for a split command (MSET MGET DEL EXISTS ...): each shard's part runs as its keys are locked */
void txn_run_split(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv);
/* dispatch_split_kept's parts, kept for txn_run_split to send */
void txn_keep_part(struct txn *t, int shard, int argc, const struct resp_arg *argv);
/* owner side: lock a split command's part's keys for txid (true), or queue the request (home is told) */
#define TXN_LOCK_QUEUED "+QUEUED\r\n"
bool txn_lock_split_part(struct shard *self, uint64_t txid, int home, const struct command *cmd, int argc,
                   const struct resp_arg *argv, int db);
/* would cmd (run for transaction txid, 0 none) touch a key another transaction holds here?  Callers
 * test keylock_count() first: with no lock here, that is all a command pays */
bool txn_keys_locked(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv, int db,
                     uint64_t txid);
/* release t's keys and free it (its command is complete, or its connection went away) */
void txn_finish(struct shard *self, struct txn *t);
/* c's earlier commands are done: its waiting transaction takes its locks */
void txn_start_deferred(struct conn *c);
/* keys came free on this shard (any unlock, any queued request): waiters first, then queued requests */
void txn_locks_changed(struct shard *self);
/* a shard granted transaction txid (ours) its keys (the __granted message) */
void txn_granted(struct shard *self, uint64_t txid);
extern const struct command txn_granted_command;
/* owner side, with keys watched here: db is about to be emptied (db2 -1; db -1 every db) or swapped with db2 */
void txn_note_replacing(struct shard *self, int db, int db2);
/* between MULTI and EXEC? */
static inline bool txn_in_multi(const struct conn *c) { return c->in_multi; }
/* queue cmd for EXEC (+QUEUED into out); false: refused (the error written, EXEC will abort) */
bool txn_queue(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv, struct reply *out);
/* commands queued since MULTI, -1 outside MULTI (CLIENT LIST multi=) */
int txn_queued(const struct conn *c);
/* the queued commands' arguments in bytes, plus a pointer each; 0 outside MULTI (CLIENT LIST multi-mem=) */
size_t txn_queued_mem(const struct conn *c);
/* a command was refused between MULTI and EXEC: EXEC answers EXECABORT */
void txn_queue_failed(struct conn *c);
/* EXEC refused before it ran (argc, argv as sent): Redis discards the transaction saying why, and
 * MONITOR still shows it (execCommandAbort) */
void multi_exec_refused(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                        struct reply *out, const char *why);
/* would EXEC run a write (Redis's mstate.cmd_flags: CMD_WRITE or CMD_MAY_REPLICATE)?  false outside MULTI */
bool txn_queued_writes(const struct conn *c);
/* would EXEC run a deny-oom command (Redis's mstate.cmd_flags & CMD_DENYOOM)?  false outside MULTI */
bool txn_queued_denyoom(const struct conn *c);
/* RESET: the MULTI in progress is discarded and every watch dropped (Redis's discardTransaction) */
void txn_reset(struct conn *c);
/* EXEC's last queued command has been dispatched */
void txn_exec_dispatched(struct conn *c);
/* c closed: its watches go; c freed: its transaction state too */
void txn_conn_closed(struct conn *c);
void txn_conn_freed(struct conn *c);

#endif
