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

#include <stddef.h>

#include "percore/command.h"

extern const struct command command_family_function[];
extern const size_t command_family_function_count;

/* the registry is freed (at exit, after every shard thread has stopped) */
void function_teardown(void);

#endif
