/*
 * function: Redis 7.0's functions (FUNCTION LOAD | DELETE | FLUSH | LIST |
 * STATS | KILL | DUMP | RESTORE | HELP, FCALL, FCALL_RO), see
 * percore/function.h.
 *
 * The registry.  The libraries (name, code, and the functions their code
 * registered: name, description, flags) are one immutable array, published
 * with rcu_ptr_publish and freed by call_rcu; the libraries themselves
 * are shared by the versions that hold them (a reference count).  Readers
 * (FCALL, FUNCTION LIST) only load the pointer inside their loop's QSBR read
 * side.  Writers (LOAD, DELETE, FLUSH, RESTORE: rare, from any shard) check
 * and publish under `registry_lock`, after the shard has compiled the new
 * code on its own.
 *
 * Per shard.  Library code runs in the shard's own Lua state (script.c's),
 * in the load sandbox as Redis's: while it runs, its globals are the
 * load-time API alone (redis.register_function, redis.log, the LOG_ and
 * version constants), and it may take no longer than FUNCTION_LOAD_TIMEOUT_MS.
 * Once loaded, the same environment falls through to the state's globals
 * (read-only), so the registered functions see the whole scripting API.
 * The shard keeps what it compiled in its state's registry, `__fn_libs`:
 * library name -> {[1] = the library's id, [function name] = function}.  A
 * shard that meets an FCALL of a library it has not compiled (or compiled
 * under another id: LOAD REPLACE, RESTORE) compiles it from the registry's
 * code then; when the registry's version moved, it first drops the
 * libraries the registry no longer has.  No shard touches another's state:
 * DELETE, FLUSH and REPLACE reach every shard through the registry.
 *
 * FCALL runs like EVAL (script_run): routed over its declared keys (one
 * shard: inline; several: gathered and locked), the function gets KEYS and
 * ARGV as its two arguments.
 *
 * Threading: the handlers run on a shard thread; the registry is shared
 * through RCU and `registry_lock` only.
 */
#include "percore/function.h"

#include "script_internal.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/conn.h"
#include "percore/log.h"
#include "percore/mem.h"
#include "percore/rcu_ptr.h"
#include "percore/rdb.h"
#include "percore/reply.h"
#include "percore/script.h"
#include "percore/stats.h"
#include "percore/store.h"
#include "percore/util.h"

#include <ctype.h>
#include <lauxlib.h>
#include <lua.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <urcu-qsbr.h>

#define FUNCTION_LOAD_TIMEOUT_MS 500 /* Redis's LOAD_TIMEOUT_MS */
#define FUNCTION_HOOK_PERIOD 100000

/* ---------------------------------------------------------------- the registry */

struct fn_func {
    char *name;
    char *desc;       /* NULL: none */
    unsigned flags;   /* SCRIPT_FLAG_* */
};

struct fn_lib {
    atomic_int refs;  /* the registry versions holding it */
    uint64_t id;      /* unique per load: a shard's compiled copy is of this id or stale */
    char *name;
    char *code;       /* the whole FUNCTION LOAD argument, shebang included */
    size_t code_len;
    size_t nfuncs;
    struct fn_func *funcs; /* in registration order */
};

struct fn_registry {
    struct rcu_head rcu;
    uint64_t version; /* bumped by every change */
    size_t n;
    struct fn_lib *libs[];
};

static struct fn_registry *registry; /* RCU-published; NULL: empty */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER; /* writers */
static atomic_uint_fast64_t next_lib_id = 1;

static void lib_release(struct fn_lib *lib)
{
    if (!lib || atomic_fetch_sub(&lib->refs, 1) != 1)
        return;
    for (size_t i = 0; i < lib->nfuncs; i++) {
        mem_release(lib->funcs[i].name);
        mem_release(lib->funcs[i].desc);
    }
    mem_release(lib->funcs);
    mem_release(lib->name);
    mem_release(lib->code);
    mem_release(lib);
}

static void registry_free(struct fn_registry *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        lib_release(r->libs[i]);
    mem_release(r);
}

static void registry_free_rcu(struct rcu_head *h)
{
    rcu_ptr_reclaiming();
    registry_free(caa_container_of(h, struct fn_registry, rcu));
}

static struct fn_lib *registry_lib(const struct fn_registry *r, const char *name)
{
    for (size_t i = 0; r && i < r->n; i++)
        if (strcmp(r->libs[i]->name, name) == 0)
            return r->libs[i];
    return NULL;
}

/* the function named `name` (any case, as Redis's dict), its library in *lib */
static const struct fn_func *registry_func(const struct fn_registry *r, const char *name, size_t len,
                                           const struct fn_lib **lib)
{
    for (size_t i = 0; r && i < r->n; i++)
        for (size_t j = 0; j < r->libs[i]->nfuncs; j++) {
            const struct fn_func *f = &r->libs[i]->funcs[j];
            if (strlen(f->name) == len && strncasecmp(f->name, name, len) == 0) {
                *lib = r->libs[i];
                return f;
            }
        }
    return NULL;
}

/* called with registry_lock held: publish libs[0..n) (their references are the new version's) */
static void registry_publish(struct fn_lib **libs, size_t n)
{
    struct fn_registry *old = registry;
    struct fn_registry *r = mem_alloc(sizeof(*r) + n * sizeof(r->libs[0]));
    r->version = (old ? old->version : 0) + 1;
    r->n = n;
    if (n)
        memcpy(r->libs, libs, n * sizeof(libs[0]));
    rcu_ptr_publish(&registry, r);
    if (old)
        call_rcu(&old->rcu, registry_free_rcu);
}

/*
 * Redis's functionsCreateWithLibraryCtx and libraryJoin: add libs[0..n) to
 * the registry (flush: instead of what it holds).  A library of the same
 * name is an error unless replace (exists_fmt, with the name); a function
 * that another library registered is one too.  Takes the references of
 * libs; false with the error written (libs released).
 */
static bool registry_join_or_reply(struct fn_lib **libs, size_t n, bool replace, bool flush, const char *exists_fmt,
                                   struct reply *out)
{
    pthread_mutex_lock(&registry_lock);
    struct fn_registry *old = registry;
    size_t oldn = flush || !old ? 0 : old->n;
    struct fn_lib **all = mem_alloc((oldn + n + 1) * sizeof(*all));
    size_t k = 0;
    bool ok = true;
    for (size_t j = 0; j < n && ok; j++) /* Redis looks at the new libraries in turn */
        if (!replace && registry_lib(old, libs[j]->name) && !flush) {
            reply_errorf(out, exists_fmt, libs[j]->name);
            ok = false;
        }
    for (size_t i = 0; i < oldn && ok; i++) {
        struct fn_lib *o = old->libs[i];
        bool replaced = false;
        for (size_t j = 0; j < n; j++)
            if (strcmp(libs[j]->name, o->name) == 0)
                replaced = true;
        if (!replaced)
            all[k++] = o;
    }
    for (size_t i = 0; i < k && ok; i++) /* the libraries kept: their functions may not come again */
        for (size_t f = 0; f < all[i]->nfuncs && ok; f++)
            for (size_t j = 0; j < n && ok; j++)
                for (size_t g = 0; g < libs[j]->nfuncs && ok; g++)
                    if (strcasecmp(libs[j]->funcs[g].name, all[i]->funcs[f].name) == 0) {
                        reply_errorf(out, "ERR Function %s already exists", libs[j]->funcs[g].name);
                        ok = false;
                    }
    if (ok) {
        for (size_t i = 0; i < k; i++)
            atomic_fetch_add(&all[i]->refs, 1);
        if (n)
            memcpy(all + k, libs, n * sizeof(*libs));
        registry_publish(all, k + n);
    } else {
        for (size_t j = 0; j < n; j++)
            lib_release(libs[j]);
    }
    pthread_mutex_unlock(&registry_lock);
    mem_release(all);
    return ok;
}

void function_teardown(void)
{
    struct fn_registry *r = registry;
    registry = NULL;
    registry_free(r);
}

/* ---------------------------------------------------------------- the library metadata */

/* letters, digits and underscores, at least one (Redis's functionsVerifyName) */
static bool name_valid(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return false;
    return true;
}

#define NAME_ERROR "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

/*
 * Redis's functionExtractLibMetaData: "#!lua name=<lib>" on the first line.
 * The library's name into name (cap bytes), *body the code after the
 * shebang (its line feed kept, so lines keep their numbers).  False with
 * the error written.
 */
static bool metadata_or_reply(const char *code, size_t len, char *name, size_t cap, size_t *body, struct reply *out)
{
    if (len < 2 || code[0] != '#' || code[1] != '!') {
        reply_error(out, "ERR Missing library metadata");
        return false;
    }
    const char *nl = memchr(code, '\n', len);
    if (!nl) {
        reply_error(out, "ERR Invalid library metadata");
        return false;
    }
    *body = (size_t)(nl - code);
    const char *engine = NULL, *nm = NULL;
    size_t engine_len = 0, nm_len = 0;
    const char *p = code, *end = nl;
    size_t wl;
    for (const char *w; (w = shebang_word(&p, end, &wl));) {
        if (!engine) { /* "#!<engine>": looked up once the name is known good, as Redis's */
            engine = w + 2, engine_len = wl - 2;
            continue;
        }
        if (wl < 5 || strncasecmp(w, "name=", 5) != 0) {
            reply_errorf(out, "ERR Invalid metadata value given: %.*s", (int)wl, w);
            return false;
        }
        if (nm) {
            reply_error(out, "ERR Invalid metadata value, name argument was given multiple times");
            return false;
        }
        nm = w + 5, nm_len = wl - 5;
    }
    if (!engine) {
        reply_error(out, "ERR Invalid library metadata");
        return false;
    }
    if (!nm) {
        reply_error(out, "ERR Library name was not given");
        return false;
    }
    if (!name_valid(nm, nm_len) || nm_len >= cap) {
        reply_error(out, "ERR " NAME_ERROR);
        return false;
    }
    if (engine_len != 3 || strncasecmp(engine, "lua", 3) != 0) {
        reply_errorf(out, "ERR Engine '%.*s' not found", (int)engine_len, engine);
        return false;
    }
    memcpy(name, nm, nm_len);
    name[nm_len] = 0;
    return true;
}

/* ---------------------------------------------------------------- the load sandbox (per shard) */

/* a library's code running now on this shard: register_function fills the table __fn_loading of the
 * state's registry: name -> {fn, desc or false, flags}, and [i] = the i-th name */
struct fn_load {
    int count;        /* functions registered */
    int64_t start_ms;
};

static __thread struct fn_load *loading;

static int raise_msg(lua_State *L, const char *msg)
{
    script_push_error(L, msg);
    return lua_error(L);
}

/* register_function's flags table: false on an unknown flag or a flag that is no string */
static bool read_flags(lua_State *L, int at, unsigned *flags)
{
    *flags = SCRIPT_FLAG_SHEBANG;
    for (int j = 1;; j++) {
        lua_rawgeti(L, at, j);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            return true;
        }
        if (!lua_isstring(L, -1)) {
            lua_pop(L, 1);
            return false;
        }
        const char *s = lua_tostring(L, -1);
        size_t i = 0;
        while (i < script_flag_names_count && strcasecmp(script_flag_names[i].name, s) != 0)
            i++;
        lua_pop(L, 1);
        if (i == script_flag_names_count)
            return false;
        *flags |= script_flag_names[i].flag;
    }
}

/* redis.register_function(name, fn) or redis.register_function{function_name=, callback=, flags=, description=} */
static int lua_register_function(lua_State *L)
{
    struct fn_load *ld = loading;
    if (!ld)
        return raise_msg(L, "redis.register_function can only be called on FUNCTION LOAD command");
    int argc = lua_gettop(L);
    if (argc < 1 || argc > 2)
        return raise_msg(L, "wrong number of arguments to redis.register_function");
    int name_at = 0, fn_at = 0, desc_at = 0;
    unsigned flags = SCRIPT_FLAG_SHEBANG;
    if (argc == 2) {
        if (!lua_isstring(L, 1))
            return raise_msg(L, "first argument to redis.register_function must be a string");
        if (!lua_isfunction(L, 2))
            return raise_msg(L, "second argument to redis.register_function must be a function");
        name_at = 1, fn_at = 2;
    } else {
        if (!lua_istable(L, 1))
            return raise_msg(L, "calling redis.register_function with a single argument is only applicable to "
                                "Lua table (representing named arguments).");
        lua_pushnil(L);
        while (lua_next(L, 1)) {
            if (lua_type(L, -2) != LUA_TSTRING && lua_type(L, -2) != LUA_TNUMBER)
                return raise_msg(L, "named argument key given to redis.register_function is not a string");
            lua_pushvalue(L, -2);
            const char *key = lua_tostring(L, -1); /* a copy: lua_next needs the key as it was */
            int val = lua_gettop(L) - 1;
            if (!strcasecmp(key, "function_name")) {
                if (!lua_isstring(L, val))
                    return raise_msg(L, "function_name argument given to redis.register_function must be a string");
                name_at = val;
            } else if (!strcasecmp(key, "description")) {
                if (!lua_isstring(L, val))
                    return raise_msg(L, "description argument given to redis.register_function must be a string");
                desc_at = val;
            } else if (!strcasecmp(key, "callback")) {
                if (!lua_isfunction(L, val))
                    return raise_msg(L, "callback argument given to redis.register_function must be a function");
                fn_at = val;
            } else if (!strcasecmp(key, "flags")) {
                if (!lua_istable(L, val))
                    return raise_msg(L, "flags argument to redis.register_function must be a table representing "
                                        "function flags");
                if (!read_flags(L, val, &flags))
                    return raise_msg(L, "unknown flag given");
            } else {
                return raise_msg(L, "unknown argument given to redis.register_function");
            }
            lua_pop(L, 1);          /* the key's copy; the value stays where name_at and friends point */
            lua_pushvalue(L, -2);   /* the key again, on top, for lua_next */
        }
        if (!name_at)
            return raise_msg(L, "redis.register_function must get a function name argument");
        if (!fn_at)
            return raise_msg(L, "redis.register_function must get a callback argument");
    }
    lua_getfield(L, LUA_REGISTRYINDEX, "__fn_loading");
    int registered = lua_gettop(L);
    size_t nlen;
    const char *name = lua_tolstring(L, name_at, &nlen);
    if (!name_valid(name, nlen))
        return raise_msg(L, NAME_ERROR);
    /* within a library names compare exactly (Redis's library dict); across libraries in any case */
    lua_pushvalue(L, name_at);
    lua_rawget(L, registered);
    bool dup = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (dup)
        return raise_msg(L, "Function already exists in the library");
    lua_pushlstring(L, name, nlen);
    lua_createtable(L, 3, 0);
    lua_pushvalue(L, fn_at);
    lua_rawseti(L, -2, 1);
    if (desc_at)
        lua_pushvalue(L, desc_at);
    else
        lua_pushboolean(L, 0);
    lua_rawseti(L, -2, 2);
    lua_pushnumber(L, flags);
    lua_rawseti(L, -2, 3);
    lua_rawset(L, registered);
    lua_pushlstring(L, name, nlen);
    lua_rawseti(L, registered, ++ld->count);
    return 0;
}

/* the environment's lookups: the load-time API while a library loads, the state's globals after (but for
 * EVAL's KEYS and ARGV, which its scripts leave there: a function has its keys and arguments as arguments) */
static int fn_env_index(lua_State *L)
{
    const char *name = lua_tostring(L, 2);
    bool evals = name && (!strcmp(name, "KEYS") || !strcmp(name, "ARGV"));
    lua_pushvalue(L, 2);
    lua_rawget(L, loading ? lua_upvalueindex(1) : LUA_GLOBALSINDEX);
    if (!lua_isnil(L, -1) && (loading || !evals))
        return 1;
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", name ? name : "?");
}

static int readonly_newindex(lua_State *L) { return luaL_error(L, "Attempt to modify a readonly table"); }

/* a read-only proxy on the stack: lookups through index (with the upvalue on top, popped), or raw in it */
static void push_readonly_proxy(lua_State *L, lua_CFunction index)
{
    lua_newtable(L);                  /* upvalue, proxy */
    lua_newtable(L);                  /* upvalue, proxy, metatable */
    lua_pushvalue(L, -3);
    lua_pushcclosure(L, index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_setmetatable(L, -2);
    lua_remove(L, -2);
}

static int load_api_index(lua_State *L)
{
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    if (!lua_isnil(L, -1))
        return 1;
    const char *name = lua_tostring(L, 2);
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", name ? name : "?");
}

/* the environment of library code, made once per Lua state: its registry's __fn_env */
static void push_env(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, "__fn_env");
    if (!lua_isnil(L, -1))
        return;
    lua_pop(L, 1);
    /* the load-time `redis`: register_function, log and the constants */
    lua_newtable(L);
    lua_pushcfunction(L, lua_register_function);
    lua_setfield(L, -2, "register_function");
    lua_pushcfunction(L, script_lua_log);
    lua_setfield(L, -2, "log");
    lua_getglobal(L, "redis");
    static const char *const consts[] = {"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING",
                                         "REDIS_VERSION", "REDIS_VERSION_NUM"};
    for (size_t i = 0; i < sizeof consts / sizeof consts[0]; i++) {
        lua_getfield(L, -1, consts[i]);
        lua_setfield(L, -3, consts[i]);
    }
    lua_pop(L, 1);
    push_readonly_proxy(L, load_api_index); /* the load-time redis table */
    lua_newtable(L);                        /* the load-time globals */
    lua_insert(L, -2);
    lua_setfield(L, -2, "redis");
    push_readonly_proxy(L, fn_env_index);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "__fn_env");
}

static void load_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (!loading || util_mono_ns() / 1000000 - loading->start_ms <= FUNCTION_LOAD_TIMEOUT_MS)
        return;
    lua_sethook(L, load_hook, LUA_MASKLINE, 0);
    raise_msg(L, "FUNCTION LOAD timeout");
}

/*
 * Run a library's code (body: after the shebang) in the load sandbox: on
 * success the table of what it registered is on the stack (name -> {fn,
 * desc or false, flags}; [i] = the i-th name), else the error
 * is written and the stack is as it was.
 */
static bool library_run_or_reply(lua_State *L, const char *body, size_t len, struct reply *out)
{
    if (luaL_loadbuffer(L, body, len, "@user_function")) {
        reply_errorf(out, "ERR Error compiling function: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return false;
    }
    push_env(L);
    lua_setfenv(L, -2);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "__fn_loading");
    lua_insert(L, -2); /* registered, chunk */
    int registered = lua_gettop(L) - 1;
    struct fn_load ld = {.start_ms = util_mono_ns() / 1000000};
    loading = &ld;
    lua_sethook(L, load_hook, LUA_MASKCOUNT, FUNCTION_HOOK_PERIOD);
    int err = lua_pcall(L, 0, 0, 0);
    lua_sethook(L, NULL, 0, 0);
    loading = NULL;
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "__fn_loading");
    if (err) {
        const char *msg = NULL;
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            msg = lua_tostring(L, -1);
        }
        if (msg)
            reply_errorf(out, "ERR Error registering functions: %s", msg);
        else
            reply_errorf(out, "ERR Error registering functions: ERR %s",
                         lua_isstring(L, -1) ? lua_tostring(L, -1) : "unknown error");
        lua_settop(L, registered - 1);
        return false;
    }
    if (ld.count == 0) {
        reply_error(out, "ERR No functions registered");
        lua_settop(L, registered - 1);
        return false;
    }
    return true;
}

/* keep the registered table on top as the shard's copy of lib: __fn_libs[name] = {[1] = id, name = fn...} */
static void library_install(lua_State *L, const struct fn_lib *lib)
{
    int reg = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, "__fn_libs");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, "__fn_libs");
    }
    lua_createtable(L, 1, (int)lib->nfuncs);
    lua_pushnumber(L, (lua_Number)lib->id);
    lua_rawseti(L, -2, 1);
    for (int i = 1; i <= (int)lib->nfuncs; i++) { /* name -> function */
        lua_rawgeti(L, reg, i);
        lua_pushvalue(L, -1);
        lua_rawget(L, reg);
        lua_rawgeti(L, -1, 1);
        lua_replace(L, -2);
        lua_rawset(L, -3);
    }
    lua_setfield(L, -2, lib->name);
    lua_settop(L, reg - 1);
}

/* a new library of code: metadata, then its code run on this shard (and installed here); NULL with the error
 * written.  exists_fmt: the registry must not hold a library of its name (LOAD without REPLACE) */
static struct fn_lib *library_create_or_reply(const char *code, size_t len, const char *exists_fmt, struct reply *out)
{
    char name[256];
    size_t body;
    if (!metadata_or_reply(code, len, name, sizeof name, &body, out))
        return NULL;
    if (exists_fmt && registry_lib(rcu_ptr_read(&registry), name)) {
        reply_errorf(out, exists_fmt, name);
        return NULL;
    }
    lua_State *L = script_state();
    if (!library_run_or_reply(L, code + body, len - body, out))
        return NULL;
    int reg = lua_gettop(L);
    struct fn_lib *lib = mem_alloc(sizeof(*lib));
    atomic_init(&lib->refs, 1);
    lib->id = atomic_fetch_add(&next_lib_id, 1);
    lib->name = mem_strndup(name, strlen(name));
    lib->code = mem_alloc(len + 1);
    memcpy(lib->code, code, len);
    lib->code[len] = 0;
    lib->code_len = len;
    lib->nfuncs = lua_objlen(L, reg);
    lib->funcs = mem_alloc(lib->nfuncs * sizeof(*lib->funcs));
    for (size_t i = 0; i < lib->nfuncs; i++) {
        struct fn_func *f = &lib->funcs[i];
        size_t n;
        lua_rawgeti(L, reg, (int)i + 1);
        const char *s = lua_tolstring(L, -1, &n);
        f->name = mem_strndup(s, n);
        lua_rawget(L, reg);
        lua_rawgeti(L, -1, 2);
        s = lua_isstring(L, -1) ? lua_tolstring(L, -1, &n) : NULL;
        f->desc = s ? mem_strndup(s, n) : NULL;
        lua_rawgeti(L, -2, 3);
        f->flags = (unsigned)lua_tonumber(L, -1);
        lua_pop(L, 3);
    }
    library_install(L, lib);
    return lib;
}

/* ---------------------------------------------------------------- FCALL */

/* drop what this shard compiled of libraries the registry no longer holds (as they were) */
static void shard_sweep(lua_State *L, const struct fn_registry *r, int libs)
{
    uint64_t version = r ? r->version : 0;
    lua_getfield(L, LUA_REGISTRYINDEX, "__fn_version");
    bool same = (uint64_t)lua_tonumber(L, -1) == version;
    lua_pop(L, 1);
    if (same)
        return;
    lua_pushnil(L);
    while (lua_next(L, libs)) { /* clearing a field while traversing is allowed (Lua 5.1's lua_next) */
        lua_rawgeti(L, -1, 1);
        const struct fn_lib *lib = registry_lib(r, lua_tostring(L, -3));
        bool stale = !lib || (uint64_t)lua_tonumber(L, -1) != lib->id;
        lua_pop(L, 2);
        if (stale) {
            lua_pushvalue(L, -1);
            lua_pushnil(L);
            lua_rawset(L, libs);
        }
    }
    lua_pushnumber(L, (lua_Number)version);
    lua_setfield(L, LUA_REGISTRYINDEX, "__fn_version");
}

/* lib's function f on the stack, from this shard's copy of lib (compiled now if it has none of lib's id): false
 * with the error written */
static bool function_push_or_reply(lua_State *L, const struct fn_registry *r, const struct fn_lib *lib,
                                   const struct fn_func *f, struct reply *out)
{
    lua_getfield(L, LUA_REGISTRYINDEX, "__fn_libs");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, "__fn_libs");
    }
    int libs = lua_gettop(L);
    shard_sweep(L, r, libs);
    lua_getfield(L, libs, lib->name);
    bool have = false;
    if (lua_istable(L, -1)) {
        lua_rawgeti(L, -1, 1);
        have = (uint64_t)lua_tonumber(L, -1) == lib->id;
        lua_pop(L, 1);
    }
    if (!have) {
        lua_pop(L, 1);
        const char *nl = memchr(lib->code, '\n', lib->code_len);
        size_t body = nl ? (size_t)(nl - lib->code) : lib->code_len;
        if (!library_run_or_reply(L, lib->code + body, lib->code_len - body, out)) {
            lua_settop(L, libs - 1);
            return false;
        }
        library_install(L, lib);
        lua_getfield(L, libs, lib->name);
    }
    lua_getfield(L, -1, f->name);
    lua_replace(L, libs);
    lua_settop(L, libs);
    return true;
}

static void fcall_generic(struct cmd_ctx *ctx, bool read_only)
{
    const struct fn_registry *r = rcu_ptr_read(&registry);
    const struct fn_lib *lib;
    const struct fn_func *f = registry_func(r, ctx->argv[1].ptr, ctx->argv[1].len, &lib);
    if (!f) {
        reply_error(ctx->out, "ERR Function not found");
        return;
    }
    long long numkeys;
    if (!util_str_to_ll(ctx->argv[2].ptr, ctx->argv[2].len, &numkeys)) {
        reply_error(ctx->out, "ERR Bad number of keys provided");
        return;
    }
    if (numkeys > ctx->argc - 3) {
        reply_error(ctx->out, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (numkeys < 0) {
        reply_error(ctx->out, "ERR Number of keys can't be negative");
        return;
    }
    lua_State *L = script_state();
    lua_getfield(L, LUA_REGISTRYINDEX, "__redis__err__handler");
    if (!function_push_or_reply(L, r, lib, f, ctx->out)) {
        lua_settop(L, 0);
        return;
    }
    struct script_call sc = {
        .name = f->name, .raw_name = f->name, .flags = f->flags, .read_only = read_only, .function = true,
        .nkeys = (int)numkeys,
    };
    script_run(ctx, &sc);
}

static void cmd_fcall(struct cmd_ctx *ctx) { fcall_generic(ctx, false); }
static void cmd_fcall_ro(struct cmd_ctx *ctx) { fcall_generic(ctx, true); }

/* ---------------------------------------------------------------- FUNCTION */

static const char *const function_help[] = {
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    ("    Return a serialized payload representing the current libraries, can be restored using FUNCTION "
     "RESTORE command"),
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
};

/* Redis's addReplySubcommandSyntaxError */
static void function_syntax_error(struct cmd_ctx *ctx)
{
    reply_errorf(ctx->out, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try FUNCTION HELP.",
                 (int)ctx->argv[1].len, ctx->argv[1].ptr);
}

static void function_load(struct cmd_ctx *ctx)
{
    bool replace = false;
    int at = 2;
    for (; at < ctx->argc - 1; at++) {
        if (!cmd_arg_is(&ctx->argv[at], "replace")) {
            reply_errorf(ctx->out, "ERR Unknown option given: %.*s", (int)ctx->argv[at].len, ctx->argv[at].ptr);
            return;
        }
        replace = true;
    }
    const struct resp_arg *code = &ctx->argv[at];
    struct fn_lib *lib = library_create_or_reply(code->ptr, code->len, replace ? NULL : "ERR Library '%s' already exists",
                                                 ctx->out);
    if (!lib)
        return;
    if (registry_join_or_reply(&lib, 1, replace, false, "ERR Library '%s' already exists", ctx->out))
        reply_bulk(ctx->out, lib->name, strlen(lib->name));
}

static void function_delete(struct cmd_ctx *ctx)
{
    pthread_mutex_lock(&registry_lock);
    struct fn_registry *old = registry;
    size_t n = old ? old->n : 0, k = 0;
    struct fn_lib **keep = mem_alloc((n + 1) * sizeof(*keep));
    for (size_t i = 0; i < n; i++)
        if (strlen(old->libs[i]->name) != ctx->argv[2].len ||
            memcmp(old->libs[i]->name, ctx->argv[2].ptr, ctx->argv[2].len) != 0)
            keep[k++] = old->libs[i];
    if (k < n) {
        for (size_t i = 0; i < k; i++)
            atomic_fetch_add(&keep[i]->refs, 1);
        registry_publish(keep, k);
        reply_ok(ctx->out);
    } else {
        reply_error(ctx->out, "ERR Library not found");
    }
    pthread_mutex_unlock(&registry_lock);
    mem_release(keep);
}

static void function_flush(struct cmd_ctx *ctx)
{
    if (ctx->argc > 3) {
        function_syntax_error(ctx);
        return;
    }
    if (ctx->argc == 3 && !cmd_arg_is(&ctx->argv[2], "sync") && !cmd_arg_is(&ctx->argv[2], "async")) {
        reply_error(ctx->out, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        return;
    }
    pthread_mutex_lock(&registry_lock);
    registry_publish(NULL, 0);
    pthread_mutex_unlock(&registry_lock);
    reply_ok(ctx->out);
}

static void function_list(struct cmd_ctx *ctx)
{
    bool with_code = false;
    const struct resp_arg *pattern = NULL;
    for (int i = 2; i < ctx->argc; i++) {
        if (!with_code && cmd_arg_is(&ctx->argv[i], "withcode")) {
            with_code = true;
        } else if (!pattern && cmd_arg_is(&ctx->argv[i], "libraryname")) {
            if (i >= ctx->argc - 1) {
                reply_error(ctx->out, "ERR library name argument was not given");
                return;
            }
            pattern = &ctx->argv[++i];
        } else {
            reply_errorf(ctx->out, "ERR Unknown argument %.*s", (int)ctx->argv[i].len, ctx->argv[i].ptr);
            return;
        }
    }
    const struct fn_registry *r = rcu_ptr_read(&registry);
    size_t n = 0;
    for (size_t i = 0; r && i < r->n; i++)
        n += !pattern || util_glob_match(pattern->ptr, pattern->len, r->libs[i]->name, strlen(r->libs[i]->name), true);
    reply_array(ctx->out, (long long)n);
    for (size_t i = 0; r && i < r->n; i++) {
        const struct fn_lib *lib = r->libs[i];
        if (pattern && !util_glob_match(pattern->ptr, pattern->len, lib->name, strlen(lib->name), true))
            continue;
        reply_map(ctx->out, with_code ? 4 : 3);
        reply_bulk(ctx->out, "library_name", 12);
        reply_bulk(ctx->out, lib->name, strlen(lib->name));
        reply_bulk(ctx->out, "engine", 6);
        reply_bulk(ctx->out, "LUA", 3);
        reply_bulk(ctx->out, "functions", 9);
        reply_array(ctx->out, (long long)lib->nfuncs);
        for (size_t j = 0; j < lib->nfuncs; j++) {
            const struct fn_func *f = &lib->funcs[j];
            reply_map(ctx->out, 3);
            reply_bulk(ctx->out, "name", 4);
            reply_bulk(ctx->out, f->name, strlen(f->name));
            reply_bulk(ctx->out, "description", 11);
            if (f->desc)
                reply_bulk(ctx->out, f->desc, strlen(f->desc));
            else
                reply_null(ctx->out);
            reply_bulk(ctx->out, "flags", 5);
            long long nf = 0;
            for (size_t k = 0; k < script_flag_names_count; k++)
                nf += (f->flags & script_flag_names[k].flag) != 0;
            reply_set(ctx->out, nf);
            for (size_t k = 0; k < script_flag_names_count; k++)
                if (f->flags & script_flag_names[k].flag)
                    reply_simple(ctx->out, script_flag_names[k].name);
        }
        if (with_code) {
            reply_bulk(ctx->out, "library_code", 12);
            reply_bulk(ctx->out, lib->code, lib->code_len);
        }
    }
}

/* Redis's functionStatsCommand; the running function is the one busy on this shard (a shard answers from its
 * busy hook; one elsewhere is not seen) */
static void function_stats(struct cmd_ctx *ctx)
{
    const char *name;
    int64_t duration;
    bool function;
    const struct cmd_ctx *run = script_running_call(&name, &duration, &function);
    char *elsewhere = NULL; /* a function busy on another shard: its name and command */
    size_t elsewhere_len = 0;
    int other = run ? 0 : script_busy_elsewhere(&elsewhere, &elsewhere_len, &duration);
    if ((run && !function) || other == 2) {
        reply_error(ctx->out, SCRIPT_BUSY_ERROR);
        return;
    }
    const struct fn_registry *r = rcu_ptr_read(&registry);
    long long funcs = 0;
    for (size_t i = 0; r && i < r->n; i++)
        funcs += (long long)r->libs[i]->nfuncs;
    reply_map(ctx->out, 2);
    reply_bulk(ctx->out, "running_script", 14);
    if (elsewhere) {
        reply_map(ctx->out, 3);
        reply_raw(ctx->out, elsewhere, elsewhere_len);
        reply_bulk(ctx->out, "duration_ms", 11);
        reply_int(ctx->out, duration);
        mem_release(elsewhere);
    } else if (run) {
        reply_map(ctx->out, 3);
        reply_bulk(ctx->out, "name", 4);
        reply_bulk(ctx->out, name, strlen(name));
        reply_bulk(ctx->out, "command", 7);
        reply_array(ctx->out, run->argc);
        for (int i = 0; i < run->argc; i++)
            reply_bulk(ctx->out, run->argv[i].ptr, run->argv[i].len);
        reply_bulk(ctx->out, "duration_ms", 11);
        reply_int(ctx->out, duration);
    } else {
        reply_null(ctx->out);
    }
    reply_bulk(ctx->out, "engines", 7);
    reply_map(ctx->out, 1);
    reply_bulk(ctx->out, "LUA", 3);
    reply_map(ctx->out, 2);
    reply_bulk(ctx->out, "libraries_count", 15);
    reply_int(ctx->out, r ? (long long)r->n : 0);
    reply_bulk(ctx->out, "functions_count", 15);
    reply_int(ctx->out, funcs);
}

void function_rdb_save(struct rdb_buf *b, bool compress)
{
    const struct fn_registry *r = rcu_ptr_read(&registry);
    for (size_t i = 0; r && i < r->n; i++)
        rdb_save_function(b, r->libs[i]->code, r->libs[i]->code_len, compress);
}

void function_aof_save(struct rdb_buf *b)
{
    const struct fn_registry *r = rcu_ptr_read(&registry);
    for (size_t i = 0; r && i < r->n; i++) {
        char head[64];
        int n = snprintf(head, sizeof head, "*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n$%zu\r\n", r->libs[i]->code_len);
        rdb_buf_put(b, head, (size_t)n);
        rdb_buf_put(b, r->libs[i]->code, r->libs[i]->code_len);
        rdb_buf_put(b, "\r\n", 2);
    }
}

int function_load_library(const char *code, size_t len)
{
    struct reply err;
    reply_init(&err);
    struct fn_lib *lib = library_create_or_reply(code, len, NULL, &err);
    bool ok = lib && registry_join_or_reply(&lib, 1, false, false, "ERR Library %s already exists", &err);
    if (!ok) /* the error's text, from its reply ("-ERR ...\r\n") */
        log_warn("Failed loading library, %.*s", (int)(err.len > 3 ? err.len - 3 : 0), err.buf + 1);
    reply_deinit(&err);
    return ok ? 0 : -1;
}

/* FUNCTION DUMP: each library's FUNCTION2 record, then the version and the checksum, as DUMP's */
static void function_dump(struct cmd_ctx *ctx)
{
    struct rdb_buf b = {0};
    function_rdb_save(&b, ctx->config->rdbcompression);
    rdb_payload_footer(&b, 0);
    reply_bulk(ctx->out, b.p, b.len);
    rdb_buf_release(&b);
}

static void function_restore(struct cmd_ctx *ctx)
{
    if (ctx->argc > 4) {
        function_syntax_error(ctx);
        return;
    }
    bool flush = false, replace = false;
    if (ctx->argc == 4) {
        const struct resp_arg *p = &ctx->argv[3];
        flush = cmd_arg_is(p, "flush");
        replace = cmd_arg_is(p, "replace");
        if (!flush && !replace && !cmd_arg_is(p, "append")) {
            reply_error(ctx->out, "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
            return;
        }
    }
    const struct resp_arg *payload = &ctx->argv[2];
    unsigned version;
    if (rdb_verify_payload(payload->ptr, payload->len, &version) != 0) {
        reply_error(ctx->out, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    struct fn_lib **libs = NULL;
    size_t n = 0, off = 0, end = payload->len - 10;
    bool ok = true;
    while (ok && off < end) {
        char *code;
        size_t len;
        int rc = rdb_load_function(payload->ptr, end, &off, &code, &len);
        if (rc != 0) {
            reply_error(ctx->out, rc == -2 ? "ERR given type is not a function"
                                           : "ERR failed loading the given functions payload");
            ok = false;
            break;
        }
        struct fn_lib *lib = library_create_or_reply(code, len, NULL, ctx->out);
        mem_release(code);
        if (!lib) {
            ok = false;
            break;
        }
        for (size_t i = 0; i < n && ok; i++) { /* the payload's own libraries may not collide (Redis loads them
                                                 * into a library context of their own first) */
            if (strcmp(libs[i]->name, lib->name) == 0) {
                reply_errorf(ctx->out, "ERR Library '%s' already exists", lib->name);
                ok = false;
            }
            for (size_t f = 0; f < libs[i]->nfuncs && ok; f++)
                for (size_t g = 0; g < lib->nfuncs && ok; g++)
                    if (strcasecmp(libs[i]->funcs[f].name, lib->funcs[g].name) == 0) {
                        reply_errorf(ctx->out, "ERR Function %s already exists", lib->funcs[g].name);
                        ok = false;
                    }
        }
        libs = mem_realloc(libs, (n + 1) * sizeof(*libs));
        libs[n++] = lib;
    }
    if (ok && registry_join_or_reply(libs, n, replace, flush, "ERR Library %s already exists", ctx->out))
        reply_ok(ctx->out);
    else if (!ok)
        for (size_t i = 0; i < n; i++)
            lib_release(libs[i]);
    mem_release(libs);
}

/* the subcommands' handlers (their arities are command_subs_function's); `changes`: LOAD DELETE FLUSH
 * RESTORE, run as a keyspace-wide part (below) */
static const struct {
    const char *name;
    void (*proc)(struct cmd_ctx *);
    bool changes;
} function_subs[] = {
    {"load", function_load, true},  {"delete", function_delete, true}, {"flush", function_flush, true},
    {"list", function_list, false}, {"stats", function_stats, false},  {"kill", NULL, false},
    {"dump", function_dump, false},  {"restore", function_restore, true}, {"help", NULL, false},
};
#define FUNCTION_NSUBS (sizeof function_subs / sizeof function_subs[0])

static size_t function_sub_index(const struct resp_arg *sub)
{
    size_t i = 0;
    while (i < FUNCTION_NSUBS && !cmd_arg_is(sub, function_subs[i].name))
        i++;
    return i;
}

/*
 * A change of the libraries runs as __function, a keyspace-wide part on
 * every shard under its whole keyspace lock (as FLUSHALL): the first store's
 * part makes the change and answers, the others answer +OK.  So changes are
 * in one order with every write and with a snapshot's or rewrite's cut, and
 * the AOF records the one that worked (as sent: FUNCTION LOAD ...) once, in
 * that order, as Redis propagates it.
 */
static void function_change_part(struct cmd_ctx *ctx)
{
    if (!store_is_first(ctx->store)) {
        reply_ok(ctx->out);
        return;
    }
    size_t before = ctx->out->len;
    function_subs[function_sub_index(&ctx->argv[1])].proc(ctx);
    if (ctx->out->len > before && ctx->out->buf[before] != '-')
        cmd_changed_server(ctx);
}

static const struct command function_change_command = {
    "__function", function_change_part, -2, CMD_INTERNAL | CMD_WRITE | CMD_LOCKS_ALL, 0, 0, 0, ROUTE_FANOUT_OK, "",
};

static void cmd_function(struct cmd_ctx *ctx)
{
    const struct resp_arg *sub = &ctx->argv[1];
    const struct subcommand *found;
    if (!command_subcommand_or_reply("function", ctx->argc, ctx->argv, ctx->out, &found)) {
        stats_subcommand(found ? &found->cmd : NULL, true); /* as Redis: rejected, an unknown one for none */
        return;
    }
    size_t i = function_sub_index(sub);
    bool refused = script_running() && !cmd_arg_is(sub, "kill") && !cmd_arg_is(sub, "stats"); /* a busy hook's */
    if (refused) {
        reply_error(ctx->out, script_busy_error_here());
    } else if (cmd_arg_is(sub, "kill")) {
        script_kill_reply(ctx->out, true);
    } else if (cmd_arg_is(sub, "help")) {
        size_t n = sizeof function_help / sizeof function_help[0];
        reply_array(ctx->out, (long long)n);
        for (size_t j = 0; j < n; j++)
            reply_simple(ctx->out, function_help[j]);
    } else if (function_subs[i].changes && atomic_load_explicit(&script_busy_shards, memory_order_relaxed)) {
        reply_error(ctx->out, script_busy_error(-1)); /* its part would wait for the busy shard's lock */
        refused = true;
    } else if (function_subs[i].changes) {
        conn_fanout_locked(ctx->conn, &function_change_command, ctx->argc, ctx->argv);
    } else {
        function_subs[i].proc(ctx);
    }
    /* commandstats count "function|load", not "function"; named after the change's own run (inline with one
     * shard: a call() of its own), so that this call takes it */
    stats_subcommand(&found->cmd, refused);
}

#define FCALL_CMD (CMD_NOSCRIPT | CMD_STALE | CMD_NUMKEYS | CMD_NUMKEYS_ZERO_OK | CMD_MONITOR_FIRST)

const struct command command_family_function[] = {
    {"fcall", cmd_fcall, -3, FCALL_CMD | CMD_MAY_REPLICATE, 2, 0, 0, ROUTE_GATHER, "@slow @scripting"},
    {"fcall_ro", cmd_fcall_ro, -3, FCALL_CMD | CMD_READONLY, 2, 0, 0, ROUTE_GATHER, "@slow @scripting"},
    {"function", cmd_function, -2,
     CMD_NOSCRIPT | CMD_STALE | CMD_ALLOW_BUSY | CMD_AFTER_PENDING | CMD_WHOLE_IN_EXEC | CMD_SUBCOMMANDS, 0, 0, 0,
     ROUTE_HOME,
     "@slow"}, /* a container: "@slow" alone, as Redis's */
};
const size_t command_family_function_count = sizeof command_family_function / sizeof command_family_function[0];

/* FUNCTION's subcommands, as Redis 7.0's table has them (cmd_function runs them all) */
const struct subcommand command_subs_function[] = {
    COMMAND_SUB("function", "delete", cmd_function, 3, CMD_WRITE | CMD_NOSCRIPT, 0, 0, 0, ROUTE_HOME,
                "@write @slow @scripting"),
    COMMAND_SUB("function", "dump", cmd_function, 2, CMD_NOSCRIPT, 0, 0, 0, ROUTE_HOME, "@slow @scripting"),
    COMMAND_SUB("function", "flush", cmd_function, -2, CMD_WRITE | CMD_NOSCRIPT, 0, 0, 0, ROUTE_HOME,
                "@write @slow @scripting"),
    COMMAND_SUB("function", "help", cmd_function, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, ROUTE_HOME, "@slow @scripting"),
    COMMAND_SUB("function", "kill", cmd_function, 2, CMD_NOSCRIPT | CMD_ALLOW_BUSY, 0, 0, 0, ROUTE_HOME,
                "@slow @scripting"),
    COMMAND_SUB("function", "list", cmd_function, -2, CMD_NOSCRIPT, 0, 0, 0, ROUTE_HOME, "@slow @scripting"),
    COMMAND_SUB("function", "load", cmd_function, -3, CMD_WRITE | CMD_DENYOOM | CMD_NOSCRIPT, 0, 0, 0, ROUTE_HOME,
                "@write @slow @scripting"),
    COMMAND_SUB("function", "restore", cmd_function, -3, CMD_WRITE | CMD_DENYOOM | CMD_NOSCRIPT, 0, 0, 0, ROUTE_HOME,
                "@write @slow @scripting"),
    COMMAND_SUB("function", "stats", cmd_function, 2, CMD_NOSCRIPT | CMD_ALLOW_BUSY, 0, 0, 0, ROUTE_HOME,
                "@slow @scripting"),
};
const size_t command_subs_function_count = sizeof command_subs_function / sizeof command_subs_function[0];
