/*
 * script_internal: what script.c (EVAL, the shard's Lua state, redis.call,
 * busy scripts) shares with function.c (FUNCTION, FCALL), which runs its
 * library code in the same per-shard Lua state and its functions through
 * the same run (redis.call, the hook, the flags' checks, the replies).
 *
 * Threading: everything here runs on the shard thread that owns its Lua
 * state (script.c's `engine`).
 */
#ifndef PERCORE_CORE_SCRIPT_INTERNAL_H
#define PERCORE_CORE_SCRIPT_INTERNAL_H

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "percore/command.h"

/* a script's flags: the shebang's (EVAL) or register_function's (functions) */
enum {
    SCRIPT_FLAG_NO_WRITES = 1u << 0,
    SCRIPT_FLAG_ALLOW_OOM = 1u << 1,
    SCRIPT_FLAG_ALLOW_STALE = 1u << 2,
    SCRIPT_FLAG_NO_CLUSTER = 1u << 3,
    SCRIPT_FLAG_ALLOW_CROSS_SLOT = 1u << 4,
    SCRIPT_FLAG_SHEBANG = 1u << 5, /* it has flags (a shebang or a function; not Redis's compatibility mode) */
};

/* the flags' names, in Redis's order (scripts_flags_def) */
struct script_flag_name {
    const char *name;
    unsigned flag;
};
extern const struct script_flag_name script_flag_names[];
extern const size_t script_flag_names_count;

/* the calling shard's Lua state, made now if it has none (or SCRIPT FLUSH dropped it) */
lua_State *script_state(void);

/* push Redis's error table {err="CODE msg"} for msg ("-CODE msg" or "msg": ERR) */
void script_push_error(lua_State *L, const char *msg);
/* redis.log, for the load-time API of a library */
int script_lua_log(lua_State *L);

/* a script runs on this shard now (a command from its busy hook: SCRIPT or FUNCTION, KILL allowed only) */
bool script_running(void);
/* the command running a script on this shard now (its name, how long it has run, FCALL's or EVAL's), NULL
 * none: FUNCTION STATS from its busy hook */
const struct cmd_ctx *script_running_call(const char **name, int64_t *duration_ms, bool *function);
/* a script busy on another shard, for FUNCTION STATS: 1 a function (*stats: its name and command as RESP,
 * the caller frees it; *duration_ms), 2 an EVAL script, 0 none */
int script_busy_elsewhere(char **stats, size_t *len, int64_t *duration_ms);
/* -BUSY's text (without the '-') for a command from the hook of the script running on this shard */
const char *script_busy_error_here(void);

/* what one run is: its name in errors and logs, its flags, how it gets KEYS and ARGV */
struct script_call {
    const char *name;      /* in "script: <name>, on ..." and the slow-script log (EVAL: the sha) */
    const char *raw_name;  /* in "Error running script <raw_name>" (EVAL: f_<sha>) */
    unsigned flags;        /* SCRIPT_FLAG_* */
    bool read_only;        /* EVAL_RO, EVALSHA_RO, FCALL_RO */
    bool function;         /* FCALL: KEYS and ARGV are its two arguments (else the globals) */
    int nkeys;             /* ctx->argv[3 .. 3+nkeys) are the keys, the rest the arguments */
};

/*
 * Run the Lua function on top of the calling shard's state (Redis's
 * scriptPrepareForRun and luaCallFunction): the flags' checks, then the call
 * with the error handler, its reply or error into ctx->out.  The stack is
 * left empty.
 */
void script_run(struct cmd_ctx *ctx, const struct script_call *sc);

/* the next blank-separated word of a shebang line [*p, end), *p moved past it; NULL when none is left
 * (Redis splits it with sdssplitargs, whose quoting a shebang never needs) */
static inline const char *shebang_word(const char **p, const char *end, size_t *len)
{
    const char *q = *p;
    while (q < end && isspace((unsigned char)*q))
        q++;
    if (q == end) {
        *p = q;
        return NULL;
    }
    const char *w = q;
    while (q < end && !isspace((unsigned char)*q))
        q++;
    *len = (size_t)(q - w);
    *p = q;
    return w;
}

#endif
