/*
 * function: Redis 7.0's functions (FUNCTION LOAD | DELETE | FLUSH | LIST |
 * STATS | KILL | DUMP | RESTORE | HELP, FCALL, FCALL_RO) with its sandbox,
 * flags, replies and error texts (core/function.c).
 *
 * The libraries are one read-mostly registry published with RCU; each shard
 * runs a library's code in its own Lua state (script.c's) the first time it
 * calls one of its functions.  The admin layer registers the commands.
 *
 * Threading: the handlers run on a shard thread (FCALL: the one that owns
 * its keys, or the connection's home with the declared keys gathered and
 * locked, as EVAL).
 */
#ifndef PERCORE_FUNCTION_H
#define PERCORE_FUNCTION_H

#include <stdbool.h>
#include <stddef.h>

#include "percore/command.h"

extern const struct command command_family_function[];
extern const size_t command_family_function_count;
/* FUNCTION's subcommands (admin_setup registers them) */
extern const struct subcommand command_subs_function[];
extern const size_t command_subs_function_count;

/* Redis's rdbFunctionLoad: the library of an RDB file's FUNCTION2 record, registered (before any client
 * runs; its code runs in the calling thread's Lua state, which must be an RCU thread); 0, or -1 logged */
int function_load_library(const char *code, size_t len);
/* the libraries as FUNCTION2 records (an RDB file's, before its keys), appended to b; a shard thread */
struct rdb_buf;
void function_rdb_save(struct rdb_buf *b, bool compress);
/* the libraries as FUNCTION LOAD commands (an AOF base in commands, before its keys: Redis's
 * rewriteFunctions), appended to b; a shard thread */
void function_aof_save(struct rdb_buf *b);

/* the registry is freed (at exit, after every shard thread has stopped) */
void function_teardown(void);

#endif
