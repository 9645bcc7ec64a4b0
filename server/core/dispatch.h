/*
 * dispatch: running one parsed command where its keys live (dispatch.c),
 * and the reply slots that keep replies in request order (reply_slot.h).
 * Home shard thread, except dispatch_memory_ok (any shard, before a command).
 */
#ifndef PERCORE_CORE_DISPATCH_H
#define PERCORE_CORE_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "percore/config.h"
#include "percore/resp.h"
#include "percore/store.h"

#include "reply_slot.h"
#include "shard_internal.h"

struct conn;
struct slot;
struct shard;
struct command;
struct config;
struct store;
struct txn;
struct reply;

/* run one parsed command; false: it names a key a multi-shard transaction holds, the connection waits
 * (nothing consumed) */
bool dispatch_command(struct conn *c, int argc, const struct resp_arg *argv);
/* a reply slot at the end of c's queue for cmd (the reply's place in request order) */
struct slot *dispatch_slot_create(struct conn *c, const struct command *cmd);
/* s's reply is final: complete slots at the head of c's queue go to its output */
void dispatch_slot_complete(struct conn *c, struct slot *s);
/* run part `part` of s on shard target (now, when that is this shard) */
void dispatch_send_part(struct conn *c, struct slot *s, int target, int part, const struct command *cmd, int argc,
                        const struct resp_arg *argv);
/* a command whose keys span shards, its keys held (txn.c) */
void dispatch_run_multi_shard(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv);
/* a busy script's hook (handoff_deliver_busy): does s's one part's reply (reply[0..len)) complete a remote
 * command alone, with nothing in c's queue that its completion would start (a transaction, a barrier, a
 * blocked command, a script run again)? */
bool dispatch_slot_answers_alone(const struct conn *c, const struct slot *s, const char *reply, size_t len);
/* a script, every shard's keyspace held (txn_run_script_whole): run on copies of the keys it names, gathered
 * as it names them (percore/script.h) */
void dispatch_run_script_whole(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                               int nextra);
/* may a script that runs inline on self for connection `client` (its id) run again with every shard's
 * keyspace locked?  (a connection of self, outside MULTI/EXEC, no replica's master, AOF loader or cluster
 * port); and run it so (nothing when it may not): its reply then comes from that run */
int dispatch_script_restartable(struct shard *self, uint64_t client); /* 1 yes, 0 no, -1 not self's: a part
                                                                     * sent here (DISPATCH_SCRIPT_AGAIN) */
/* the first byte of a script's reply that asks its home to run it again (no RESP reply starts so), then its
 * argc, the number of keys it named (nextra), and each argument then each key as a 4-byte length and the
 * bytes */
#define DISPATCH_SCRIPT_AGAIN '\x01'
void dispatch_script_restart(struct shard *self, uint64_t client, int argc, const struct resp_arg *argv, int nextra);
/* does cmd read keys its patterns form (CMD_PATTERN_KEYS: SORT BY/GET), which may be on any shard?  Such a
 * command spanning shards runs with every shard's keyspace locked (txn_run_command, and EXEC) */
bool dispatch_forms_pattern_keys(const struct command *cmd, int argc, const struct resp_arg *argv);
/* a split command's slot with its merge; its parts go to txn_keep_part, not to the shards */
struct slot *dispatch_split_kept(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                                 struct txn *t);
/* a command's arguments copied: *out points into *bytes (both to be released) */
void dispatch_argv_copy(int argc, const struct resp_arg *argv, struct resp_arg **out, char **bytes);
/* this shard's empty store for running a handler on copies (one database) */
struct store *dispatch_scratch_store(struct shard *self);
/* the shard owning key */
int dispatch_key_shard(const struct config *cfg, const struct resp_arg *key);
/* where a local reply goes: the connection's output, or after the last pending slot; nowhere (the shard's
 * discard) for a command under CLIENT REPLY OFF|SKIP */
struct reply *dispatch_reply_target(struct conn *c);
/* the same for a push, which CLIENT REPLY does not stop (pub/sub messages and confirmations) */
struct reply *dispatch_push_target(struct conn *c);
/*
 * Every shard calls this right before it runs a command (inline, remote,
 * split part, gathered): it keeps the store's LFU tracking in step with
 * maxmemory-policy and enforces this shard's share of maxmemory (evicting
 * keys, or refusing a CMD_DENYOOM command: a container's subcommand, named by
 * argv, by its own flag, as XGROUP CREATE).  false: refused, Redis's OOM
 * error written to out.
 */
static inline bool dispatch_memory_ok(struct shard *self, const struct config *cfg, const struct command *cmd,
                                      int argc, const struct resp_arg *argv, struct reply *out);
/* dispatch_memory_ok's part when maxmemory is set (dispatch.c) */
bool dispatch_memory_enforce(struct shard *self, const struct config *cfg, const struct command *cmd, int argc,
                             const struct resp_arg *argv, struct reply *out);
/* inline: without maxmemory, the usual case, it costs one call into the store and a test */
static inline bool dispatch_memory_ok(struct shard *self, const struct config *cfg, const struct command *cmd,
                                      int argc, const struct resp_arg *argv, struct reply *out)
{
    enum maxmemory_policy p = cfg->maxmemory_policy;
    store_track_lfu(self->store, p == MAXMEMORY_VOLATILE_LFU || p == MAXMEMORY_ALLKEYS_LFU, cfg->lfu_log_factor,
                    cfg->lfu_decay_time);
    return cfg->maxmemory <= 0 || dispatch_memory_enforce(self, cfg, cmd, argc, argv, out);
}
/* a part of slot s computed by a shard (local or remote) */
void dispatch_part_reply(struct conn *c, struct slot *s, int part, const char *reply, size_t len);
/* a blocking command's part of slot s waits at its owner (s->on_wait): the part's reply comes later */
void dispatch_part_waits(struct conn *c, struct slot *s, int part);
/*
 * Before its reply: a part that ran for s (CALL_TIME_HOME) took ns; s's one latency sample is taken when
 * it completes.  True when it was s's last and the command, slow enough, is the slowlog's with the part's
 * arguments (a command sent whole, or one of a fan-out's identical parts; s keeps no copy of its own):
 * the caller then hands them to dispatch_part_slow.
 */
static inline bool dispatch_part_time(struct slot *s, uint64_t ns) /* inline: it runs for every remote command */
{
    s->ran_ns += ns;
    s->ran = true;
    if (s->parts_left != 1) /* not all in yet (a stepped command's last step sets it again) */
        return false;
    const struct config *cfg = config_current();
    s->sample = cfg->latency_tracking;
    long long limit = cfg->slowlog_log_slower_than;
    /* one that keeps its arguments is logged once it is done (dispatch_slot_complete) */
    return !s->argv && limit >= 0 && (long long)(s->ran_ns / 1000) >= limit;
}
void dispatch_part_slow(struct conn *c, struct slot *s, int argc, const struct resp_arg *argv);
/* a slot is done with: back to its shard's pool */
void dispatch_slot_release(struct shard *self, struct slot *s);
/* free the shard's pooled slots (at teardown) */
void dispatch_teardown_shard(struct shard *self);

#endif
