/*
 * script: Lua scripting (EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT LOAD |
 * EXISTS | FLUSH | HELP), with Redis 7.0's sandbox, conversions and error
 * texts (core/script.c).
 *
 * Every shard thread owns its own Lua 5.1 state, created on its first
 * script; the script cache (sha -> body) is one read-mostly map published
 * with RCU, from which each shard compiles a script the first time it runs
 * it.  The admin layer registers the commands.
 *
 * Threading: the handlers run on a shard thread (the one that owns the keys,
 * or the connection's home with the declared keys gathered and locked).
 */
#ifndef PERCORE_SCRIPT_H
#define PERCORE_SCRIPT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "percore/command.h"

extern const struct command command_family_script[];
extern const size_t command_family_script_count;
/* SCRIPT's subcommands (admin_setup registers them) */
extern const struct subcommand command_subs_script[];
extern const size_t command_subs_script_count;

/* shards whose script has run past busy-reply-threshold (their clients get -BUSY) */
extern atomic_int script_busy_shards;
/* Redis's -BUSY for a command while a script is busy */
#define SCRIPT_BUSY_ERROR "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
/* ... and while a function is (FCALL) */
#define FUNCTION_BUSY_ERROR "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
/* -BUSY's text (without the '-') for a command refused while shard `shard`'s script is busy (-1, or a shard
 * with none: the first busy one's): FUNCTION_BUSY_ERROR for a function, else SCRIPT_BUSY_ERROR */
const char *script_busy_error(int shard);
/* SCRIPT KILL (FUNCTION KILL: function), from any shard: +OK (the busy scripts of that kind that have not
 * written end at their next hook), -UNKILLABLE, -BUSY (only a script of the other kind is busy), or -NOTBUSY */
struct reply;
void script_kill_reply(struct reply *out, bool function);

/* the calling shard thread's Lua state goes (its thread is ending); a no-op when it had none */
/*
 * Scripts that touch keys they did not declare, on other shards (Redis
 * allows it outside cluster mode).  A script runs first where its declared
 * keys are (inline, or on copies of keys of several shards); when it names a
 * key that is not there and it has written nothing that can not be undone
 * (inline: no write, no PUBLISH; on copies: nothing reaches a store before
 * the end), it stops, answers nothing, and its command is run again with
 * every shard's keyspace locked (txn.c), on copies of the keys it named
 * (dispatch.c's script gather): each run that names a key not copied yet
 * ends with the keys it named, which are gathered, and it runs again, until
 * one run finds every key it names.  Atomic, as the lock holds every key.
 *
 * The discovery state of the script run on copies now, set by the gather
 * around its call() (NULL: none): the keys copied (`have`, in db), and the
 * ones it named that are not (`found`, each once, as length + bytes).
 * Owner thread only.
 */
struct script_discovery {
    const struct resp_arg *have; /* the keys copied */
    size_t nhave;
    int db;                      /* the database they are in */
    struct reply *found;         /* keys named that are not copied: a 4-byte length then the bytes, each once */
    size_t nfound;
};
void script_discovery_set(struct script_discovery *d);

void script_thread_teardown(void);
/* the shared script cache is freed (at exit, after every shard thread has stopped) */
void script_teardown(void);

#endif
