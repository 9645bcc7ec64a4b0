/*
 * script: Lua 5.1 scripting as Redis 7.0 has it (see percore/script.h).
 *
 * Per core.  Each shard thread owns one lua_State (`engine`, thread-local),
 * made on its first script, never touched by another thread.  A script is
 * compiled once per shard, into that state's registry as f_<sha>.
 *
 * The cache.  SCRIPT LOAD and EVAL publish the body into one map sha ->
 * body (`cache`), an immutable array replaced whole with
 * rcu_ptr_cmpxchg (copy, add, swap; a lost race retries) and freed by
 * call_rcu: a reader (a shard that meets an EVALSHA it has not compiled) only
 * loads the pointer, inside its loop's QSBR read side.  Bodies are shared
 * by the versions of the map; SCRIPT FLUSH publishes an empty map with the
 * next generation, and the map it replaced frees the bodies with itself.
 * A shard whose state was made under an older generation closes it and
 * starts afresh at its next script: SCRIPT FLUSH reaches every shard.
 *
 * Where a script runs.  EVAL is ROUTE_GATHER with its declared keys
 * (CMD_NUMKEYS): keys all on one shard, it runs there inline, like any
 * command (no lock, no message); no keys, on the connection's shard; keys on
 * several shards, the transaction machinery locks them (two-phase, in shard
 * order), copies them into this shard's scratch store, runs the script on
 * the copies and writes back what changed, all before any other client may
 * touch them (txn.c, dispatch.c's gather).  A redis.call on a key that is
 * not declared works at once when the key lives on the shard the script
 * runs on (and not on copies); elsewhere the script is run again with every
 * shard's keyspace locked, on copies of every key it names (see
 * percore/script.h), when what it did so far can be undone (inline: nothing
 * written or published yet); else (it wrote first, inline, or it runs
 * inside MULTI/EXEC or for a client of another shard) it is refused with an
 * error (the script's earlier writes stand, as after any script error in
 * Redis).
 *
 * redis.call goes through call() (core/call.h) with CALL_NESTED: stats,
 * slowlog, keyspace events, WATCH and blocked clients, into the script's own
 * effects record, applied once when the script's call() ends, so no blocked
 * client is served in the middle of a script.  Blocking commands answer as
 * if they timed out (ctx.may_block is false).
 *
 * Threading: every function here runs on the shard thread that owns
 * `engine`; the cache is shared through RCU only.
 */
#include "percore/script.h"

#include "call.h"
#include "dispatch.h"
#include "lua_cmsgpack.h"
#include "lua_struct.h"
#include "script_internal.h"
#include "shard_internal.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/keylock.h"
#include "percore/log.h"
#include "percore/mem.h"
#include "percore/monitor.h"
#include "percore/object.h"
#include "percore/rcu_ptr.h"
#include "percore/replica.h"
#include "percore/reply.h"
#include "percore/sha1.h"
#include "percore/store.h"
#include "percore/util.h"

#include <ctype.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <urcu-qsbr.h>

/* Debian's lua-cjson and lua-bitop, linked in */
int luaopen_cjson(lua_State *L);
int luaopen_bit(lua_State *L);

#define SCRIPT_VERSION "7.0.15" /* redis.REDIS_VERSION: the Redis this server answers as */
#define SCRIPT_VERSION_NUM 0x07000f
#define SCRIPT_GC_PERIOD 50
#define SCRIPT_HOOK_PERIOD 100000 /* Lua instructions between two looks at the clock (Redis's) */
#define SCRIPT_RESTART "restart"  /* the error that ends a run that starts again (never replied) */

/* ---------------------------------------------------------------- the shared cache */

struct script_body {
    char sha[41];
    size_t len;
    char text[];
};

struct script_cache {
    struct rcu_head rcu;
    uint64_t gen;               /* bumped by SCRIPT FLUSH */
    bool owns_bodies;           /* replaced by a flush: it frees the bodies too */
    size_t n;
    struct script_body *v[];
};

static struct script_cache *cache; /* RCU-published; NULL: empty, generation 0 */

static struct script_cache *cache_alloc(size_t n, uint64_t gen)
{
    struct script_cache *m = mem_alloc(sizeof(*m) + n * sizeof(m->v[0]));
    m->gen = gen;
    m->owns_bodies = false;
    m->n = n;
    return m;
}

static void cache_free(struct script_cache *m)
{
    if (m && m->owns_bodies)
        for (size_t i = 0; i < m->n; i++)
            mem_release(m->v[i]);
    mem_release(m);
}

static void cache_free_rcu(struct rcu_head *h)
{
    rcu_ptr_reclaiming();
    cache_free(caa_container_of(h, struct script_cache, rcu));
}

/* the body of sha (40 hex digits, either case) in the cache, NULL none */
static const struct script_body *cache_find(const struct script_cache *m, const char *sha)
{
    for (size_t i = 0; m && i < m->n; i++)
        if (strncasecmp(m->v[i]->sha, sha, 40) == 0)
            return m->v[i];
    return NULL;
}

static uint64_t cache_gen(void)
{
    struct script_cache *m = rcu_ptr_read(&cache);
    return m ? m->gen : 0;
}

/* publish body under sha unless it is there already */
static void cache_add(const char *sha, const char *body, size_t len)
{
    struct script_body *b = NULL;
    for (;;) {
        struct script_cache *old = rcu_ptr_read(&cache);
        if (cache_find(old, sha)) {
            mem_release(b);
            return;
        }
        if (!b) {
            b = mem_alloc(sizeof(*b) + len + 1);
            memcpy(b->sha, sha, 41);
            b->len = len;
            memcpy(b->text, body, len);
            b->text[len] = 0;
        }
        size_t n = old ? old->n : 0;
        struct script_cache *m = cache_alloc(n + 1, old ? old->gen : 0);
        if (n)
            memcpy(m->v, old->v, n * sizeof(m->v[0]));
        m->v[n] = b;
        if (rcu_ptr_cmpxchg(&cache, old, m) == old) {
            if (old)
                call_rcu(&old->rcu, cache_free_rcu);
            return;
        }
        mem_release(m); /* another shard published first: look again */
    }
}

static void cache_flush(void)
{
    for (;;) {
        struct script_cache *old = rcu_ptr_read(&cache);
        struct script_cache *m = cache_alloc(0, (old ? old->gen : 0) + 1);
        if (rcu_ptr_cmpxchg(&cache, old, m) == old) {
            if (old) {
                old->owns_bodies = true;
                call_rcu(&old->rcu, cache_free_rcu);
            }
            return;
        }
        mem_release(m);
    }
}

void script_teardown(void)
{
    struct script_cache *m = rcu_ptr_swap(&cache, NULL);
    if (m)
        m->owns_bodies = true;
    cache_free(m);
}

/* ---------------------------------------------------------------- the shard's Lua state */

/* the script running now, for redis.call and friends */
struct script_run {
    struct cmd_ctx *ctx;        /* the EVAL's */
    const char *name;           /* its name in the slow-script log (EVAL: the sha) */
    int db;                     /* SELECT inside the script changes it for the script only */
    int resp;                   /* redis.setresp: the protocol of redis.call's replies */
    bool read_only;             /* EVAL_RO, EVALSHA_RO, or the no-writes flag */
    bool function;              /* FCALL's (FUNCTION KILL kills it, not SCRIPT KILL) */
    bool allow_oom;             /* the allow-oom flag: deny-oom commands run past maxmemory */
    bool wrote;                 /* it ran a write: past maxmemory it goes on (Redis's SCRIPT_WRITE_DIRTY) */
    bool on_copies;             /* running on gathered copies: every key it touches must be declared */
    bool cluster;               /* its client is on a cluster port: Redis Cluster's errors */
    bool busy;                  /* past busy-reply-threshold: its shard serves its clients from the hook */
    bool killed;                /* SCRIPT KILL (or the shutdown) ended it: every line raises again */
    bool published;             /* it ran a command that reaches others and can not be undone (PUBLISH) */
    bool restart;               /* it named an undeclared key of another shard: it ends and runs again with
                                 * every shard's keyspace locked (every line raises again, as killed) */
    bool undoable;              /* every write so far is in the engine's undo record (several shards, not on
                                 * copies): a run again puts its keys back first */
    int64_t start_ms;           /* when it began (monotonic) */
    int nkeys;                  /* the declared keys */
    const struct resp_arg *keys;
};

struct script_engine {
    lua_State *L;
    uint64_t gen;               /* the cache generation it was made under */
    struct script_run *run;     /* NULL between scripts */
    struct reply reply;         /* redis.call's reply, reused */
    struct reply undo;          /* the keys the run wrote, as they were before (undo_note), reused */
    struct reply again;         /* the key a run that runs again named (copied with its declared keys then) */
    struct resp_arg *argv;      /* redis.call's arguments, reused (a Lua error may skip any free) */
    int argv_cap;
    struct {
        const struct command *cmd;
        bool container;
    } containers[256];          /* is a command a container (CONFIG CLIENT ...)?  Remembered, direct-mapped:
                                 * the table's own answer is a scan of every subcommand */
    unsigned calls;             /* scripts run: the garbage collector steps every SCRIPT_GC_PERIOD */
    uint32_t rand48[3];         /* math.random's state (Redis's rand.c): the shard's own sequence, as the
                                 * server's in Redis 7.0, which no longer reseeds it per script */
};

static __thread struct script_engine *engine;

/* ---- Redis's redisLrand48 (a drand48); math.randomseed(n) makes it repeatable */
static void rand48_seed(struct script_engine *e, int32_t seed)
{
    e->rand48[0] = 0x330E;
    e->rand48[1] = (uint32_t)seed & 0xffff;
    e->rand48[2] = ((uint32_t)seed >> 16) & 0xffff;
}

static int32_t rand48_next(struct script_engine *e)
{
    uint64_t x = (uint64_t)e->rand48[2] << 32 | (uint64_t)e->rand48[1] << 16 | e->rand48[0];
    x = (x * 0x5DEECE66Dull + 0xB) & 0xffffffffffffull;
    e->rand48[0] = (uint32_t)(x & 0xffff);
    e->rand48[1] = (uint32_t)((x >> 16) & 0xffff);
    e->rand48[2] = (uint32_t)((x >> 32) & 0xffff);
    return (int32_t)(x >> 17);
}

static int lua_math_random(lua_State *L)
{
    lua_Number r = (lua_Number)(rand48_next(engine) % INT32_MAX) / (lua_Number)INT32_MAX;
    switch (lua_gettop(L)) {
    case 0:
        lua_pushnumber(L, r);
        break;
    case 1: {
        int u = luaL_checkint(L, 1);
        luaL_argcheck(L, 1 <= u, 1, "interval is empty");
        lua_pushnumber(L, floor(r * u) + 1);
        break;
    }
    case 2: {
        int l = luaL_checkint(L, 1);
        int u = luaL_checkint(L, 2);
        luaL_argcheck(L, l <= u, 2, "interval is empty");
        lua_pushnumber(L, floor(r * (u - l + 1)) + l);
        break;
    }
    default:
        return luaL_error(L, "wrong number of arguments");
    }
    return 1;
}

static int lua_math_randomseed(lua_State *L)
{
    rand48_seed(engine, luaL_checkint(L, 1));
    return 0;
}

/* ---- errors as Redis's luaPushError builds them: a table {err="CODE msg"} */
static void push_error(lua_State *L, const char *msg, size_t len)
{
    const char *code = "ERR", *text = msg;
    size_t code_len = 3, text_len = len;
    if (len && msg[0] == '-') {
        const char *sp = memchr(msg, ' ', len);
        if (sp) {
            code = msg + 1, code_len = (size_t)(sp - msg - 1);
            text = sp + 1, text_len = len - (size_t)(sp + 1 - msg);
        } else {
            text = msg + 1, text_len = len - 1;
        }
    }
    while (text_len && (text[text_len - 1] == '\r' || text[text_len - 1] == '\n'))
        text_len--;
    lua_newtable(L);
    lua_pushstring(L, "err");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, code, code_len);
    luaL_addchar(&b, ' ');
    luaL_addlstring(&b, text, text_len);
    luaL_pushresult(&b);
    lua_settable(L, -3);
}

static void push_error_cstr(lua_State *L, const char *msg) { push_error(L, msg, strlen(msg)); }

void script_push_error(lua_State *L, const char *msg) { push_error_cstr(L, msg); }

static int raise_error(lua_State *L) { return lua_error(L); }

/* ---- RESP (a command's reply) to Lua, as redisProtocolToLuaType */
static const char *resp_to_lua(lua_State *L, const char *p, int depth);

static const char *line_end(const char *p) { return strstr(p, "\r\n"); }

static void push_field_table(lua_State *L, const char *field) /* {field = <top>} */
{
    lua_newtable(L);
    lua_pushstring(L, field);
    lua_pushvalue(L, -3);
    lua_settable(L, -3);
    lua_remove(L, -2);
}

static const char *resp_aggregate_to_lua(lua_State *L, const char *p, long long n, char type, int depth)
{
    lua_newtable(L);
    for (long long i = 0; i < n; i++) {
        if (type == '%' || type == '~') {
            p = resp_to_lua(L, p, depth + 1);
            if (type == '%')
                p = resp_to_lua(L, p, depth + 1);
            else
                lua_pushboolean(L, 1);
            lua_settable(L, -3);
        } else {
            p = resp_to_lua(L, p, depth + 1);
            lua_rawseti(L, -2, (int)i + 1);
        }
    }
    if (type == '%')
        push_field_table(L, "map");
    else if (type == '~')
        push_field_table(L, "set");
    return p;
}

static const char *resp_to_lua(lua_State *L, const char *p, int depth)
{
    luaL_checkstack(L, 5, "reached lua stack limit");
    const char *e = line_end(p);
    char type = p[0];
    const char *body = p + 1;
    size_t blen = (size_t)(e - body);
    long long n = 0;
    switch (type) {
    case ':':
        util_str_to_ll(body, blen, &n);
        lua_pushnumber(L, (lua_Number)n);
        return e + 2;
    case '+':
        lua_newtable(L);
        lua_pushstring(L, "ok");
        lua_pushlstring(L, body, blen);
        lua_settable(L, -3);
        return e + 2;
    case '-':
        push_error(L, p, blen + 1);
        return e + 2;
    case '$':
    case '=':
    case '(':
        if (type == '(') {
            lua_pushlstring(L, body, blen);
            push_field_table(L, "big_number");
            return e + 2;
        }
        util_str_to_ll(body, blen, &n);
        if (n < 0) {
            lua_pushboolean(L, 0);
            return e + 2;
        }
        if (type == '=') { /* {verbatim_string={format=..., string=...}} */
            lua_newtable(L);
            lua_pushstring(L, "format");
            lua_pushlstring(L, e + 2, 3);
            lua_settable(L, -3);
            lua_pushstring(L, "string");
            lua_pushlstring(L, e + 6, (size_t)n - 4);
            lua_settable(L, -3);
            push_field_table(L, "verbatim_string");
        } else {
            lua_pushlstring(L, e + 2, (size_t)n);
        }
        return e + 2 + n + 2;
    case '*':
    case '%':
    case '~':
    case '>':
        util_str_to_ll(body, blen, &n);
        if (n < 0) {
            lua_pushboolean(L, 0);
            return e + 2;
        }
        return resp_aggregate_to_lua(L, e + 2, n, type == '>' ? '*' : type, depth);
    case '_':
        lua_pushnil(L);
        return e + 2;
    case '#':
        lua_pushboolean(L, body[0] == 't');
        return e + 2;
    case ',': {
        char buf[64];
        size_t k = blen < sizeof buf - 1 ? blen : sizeof buf - 1;
        memcpy(buf, body, k);
        buf[k] = 0;
        lua_pushnumber(L, strtod(buf, NULL));
        push_field_table(L, "double");
        return e + 2;
    }
    case '|': { /* an attribute: skipped, the value follows */
        util_str_to_ll(body, blen, &n);
        const char *q = e + 2;
        for (long long i = 0; i < 2 * n; i++) {
            q = resp_to_lua(L, q, depth + 1);
            lua_pop(L, 1);
        }
        return resp_to_lua(L, q, depth);
    }
    default:
        lua_pushnil(L);
        return e + 2;
    }
}

/* ---- Lua to the EVAL's reply, as luaReplyToRedisReply */
static void reply_sanitized(struct reply *out, char prefix, const char *s, size_t n)
{
    char *p = reply_reserve(out, n + 3);
    p[0] = prefix;
    for (size_t i = 0; i < n; i++)
        p[1 + i] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
    p[n + 1] = '\r';
    p[n + 2] = '\n';
    out->len += n + 3;
}

/* the string field `name` of the table at the top, NULL when it has none */
static const char *table_string_field(lua_State *L, const char *name, size_t *len)
{
    lua_pushstring(L, name);
    lua_rawget(L, -2);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, len) : NULL;
    lua_pop(L, 1); /* the string stays alive: the table holds it */
    return s;
}

/* entries of the table on top of the stack, every key counted (a RESP3 map's or set's length) */
static long long lua_table_entries(lua_State *L)
{
    long long n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        n++;
    }
    return n;
}

static void lua_to_reply(lua_State *L, struct reply *out, int script_resp)
{
    if (!lua_checkstack(L, 4)) {
        reply_error(out, "ERR reached lua stack limit");
        lua_pop(L, 1);
        return;
    }
    size_t len;
    const char *s;
    switch (lua_type(L, -1)) {
    case LUA_TSTRING:
        s = lua_tolstring(L, -1, &len);
        reply_bulk(out, s, len);
        break;
    case LUA_TBOOLEAN:
        if (script_resp == 2) {
            if (lua_toboolean(L, -1))
                reply_int(out, 1);
            else
                reply_null(out);
        } else {
            reply_bool(out, lua_toboolean(L, -1));
        }
        break;
    case LUA_TNUMBER:
        reply_int(out, lua_number_to_int64(lua_tonumber(L, -1)));
        break;
    case LUA_TTABLE:
        if ((s = table_string_field(L, "err", &len))) {
            reply_sanitized(out, '-', s, len);
            break;
        }
        if ((s = table_string_field(L, "ok", &len))) {
            reply_sanitized(out, '+', s, len);
            break;
        }
        lua_pushstring(L, "double");
        lua_rawget(L, -2);
        if (lua_type(L, -1) == LUA_TNUMBER) {
            reply_double(out, lua_tonumber(L, -1));
            lua_pop(L, 2);
            return;
        }
        lua_pop(L, 1);
        if ((s = table_string_field(L, "big_number", &len))) {
            if (out->resp == 3)
                reply_sanitized(out, '(', s, len);
            else
                reply_bulk(out, s, len);
            break;
        }
        lua_pushstring(L, "map");
        lua_rawget(L, -2);
        if (lua_type(L, -1) == LUA_TTABLE) {
            reply_map(out, lua_table_entries(L));
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                lua_pushvalue(L, -2); /* key, value, key */
                lua_to_reply(L, out, script_resp);
                lua_to_reply(L, out, script_resp);
            }
            lua_pop(L, 2);
            return;
        }
        lua_pop(L, 1);
        lua_pushstring(L, "set");
        lua_rawget(L, -2);
        if (lua_type(L, -1) == LUA_TTABLE) {
            reply_set(out, lua_table_entries(L));
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                lua_pop(L, 1);
                lua_pushvalue(L, -1);
                lua_to_reply(L, out, script_resp);
            }
            lua_pop(L, 2);
            return;
        }
        lua_pop(L, 1);
        {
            /* an array up to its first nil: counted first, then each element converted in place (each is one
             * value, an error where it nests too deep), so nested tables are written once, not copied up
             * through every level */
            int n = 0;
            for (;; n++) {
                lua_rawgeti(L, -1, n + 1);
                bool end = lua_isnil(L, -1);
                lua_pop(L, 1);
                if (end)
                    break;
            }
            reply_array(out, n);
            for (int i = 1; i <= n; i++) {
                lua_rawgeti(L, -1, i);
                lua_to_reply(L, out, script_resp);
            }
        }
        break;
    default:
        reply_null(out);
        break;
    }
    lua_pop(L, 1);
}

/* ---- redis.call and redis.pcall */
static struct script_run *current_run_or_raise(lua_State *L, const char *what)
{
    if (engine && engine->run)
        return engine->run;
    char msg[128];
    snprintf(msg, sizeof msg, "%s can only be called inside a script invocation", what);
    push_error_cstr(L, msg);
    raise_error(L);
    return NULL;
}

static __thread struct script_discovery *discovery; /* the gather's, for the script it runs on copies */

static void script_hook(lua_State *L, lua_Debug *ar);

void script_discovery_set(struct script_discovery *d) { discovery = d; }

/* is key among the discovery's copies, or already found? (found: record it when neither) */
static bool discovery_note(struct script_discovery *d, const struct resp_arg *key)
{
    for (size_t i = 0; i < d->nhave; i++)
        if (d->have[i].len == key->len && memcmp(d->have[i].ptr, key->ptr, key->len) == 0)
            return true;
    size_t off = 0;
    for (size_t i = 0; i < d->nfound; i++) {
        uint32_t len;
        memcpy(&len, d->found->buf + off, 4);
        if (len == key->len && memcmp(d->found->buf + off + 4, key->ptr, len) == 0)
            return false;
        off += 4 + len;
    }
    uint32_t len = (uint32_t)key->len;
    reply_raw(d->found, (const char *)&len, 4);
    reply_raw(d->found, key->ptr, key->len);
    d->nfound++;
    return false;
}

/*
 * The undo record of a run not on copies, with several shards: before a write, each key it names (the first
 * time) as it is -- db (4 bytes), key length (4) and bytes, exists (1), expire (8), value length (4) and
 * serialized value -- so that a run that must start again over every shard (percore/script.h) can put its
 * keys back.  A write to another database (MOVE, COPY ... DB) can not be undone so.
 */
static void undo_emit(void *arg, const void *p, size_t n) { reply_raw(arg, p, n); }

static bool undo_has(const struct reply *u, int db, const struct resp_arg *key)
{
    for (size_t off = 0; off < u->len;) {
        int32_t kdb;
        uint32_t klen, vlen;
        memcpy(&kdb, u->buf + off, 4);
        memcpy(&klen, u->buf + off + 4, 4);
        memcpy(&vlen, u->buf + off + 8 + klen + 9, 4);
        if (kdb == db && klen == key->len && memcmp(u->buf + off + 8, key->ptr, klen) == 0)
            return true;
        off += 8 + klen + 13 + vlen;
    }
    return false;
}

static void undo_note(struct script_run *run, struct script_engine *e, const struct command *cmd, int argc,
                      const struct resp_arg *argv)
{
    if (run->cluster || (cmd->flags & CMD_ANY_DB)) { /* whether it could run again is asked only when it must */
        run->undoable = false;
        return;
    }
    int stack_pos[16];
    int *pos = argc <= 16 ? stack_pos : mem_alloc((size_t)argc * sizeof(int));
    int n = command_key_positions(cmd, argc, argv, pos);
    struct store *st = run->ctx->store;
    int64_t now = run->ctx->now;
    for (int i = 0; i < n; i++) {
        const struct resp_arg *key = &argv[pos[i]];
        if (undo_has(&e->undo, run->db, key))
            continue;
        int32_t db = run->db;
        uint32_t klen = (uint32_t)key->len;
        struct object *o = store_peek(st, run->db, key->ptr, key->len, now, NULL);
        int64_t expire = o ? store_get_expire(st, run->db, key->ptr, key->len, now) : -1;
        uint8_t exists = o != NULL;
        reply_raw(&e->undo, (const char *)&db, 4);
        reply_raw(&e->undo, (const char *)&klen, 4);
        reply_raw(&e->undo, key->ptr, key->len);
        reply_raw(&e->undo, (const char *)&exists, 1);
        reply_raw(&e->undo, (const char *)&expire, 8);
        size_t at = e->undo.len;
        uint32_t vlen = 0;
        reply_raw(&e->undo, (const char *)&vlen, 4);
        if (o)
            object_serialize(o, undo_emit, &e->undo);
        vlen = (uint32_t)(e->undo.len - at - 4);
        memcpy(e->undo.buf + at, &vlen, 4);
    }
    if (pos != stack_pos)
        mem_release(pos);
}

/* put back the keys the run wrote (undo_note) */
static void undo_apply(struct script_engine *e, struct store *st, int64_t now)
{
    struct reply *u = &e->undo;
    for (size_t off = 0; off < u->len;) {
        int32_t db;
        uint32_t klen, vlen;
        int64_t expire;
        memcpy(&db, u->buf + off, 4);
        memcpy(&klen, u->buf + off + 4, 4);
        const char *key = u->buf + off + 8;
        bool exists = u->buf[off + 8 + klen] != 0;
        memcpy(&expire, u->buf + off + 8 + klen + 1, 8);
        memcpy(&vlen, u->buf + off + 8 + klen + 9, 4);
        const char *val = u->buf + off + 8 + klen + 13;
        struct object *o = exists ? object_deserialize(val, vlen) : NULL;
        if (o) {
            store_set(st, db, key, klen, o, 0);
            if (expire >= 0)
                store_set_expire(st, db, key, klen, expire, now);
        } else {
            store_delete(st, db, key, klen, now);
        }
        off += 8 + klen + 13 + vlen;
    }
    reply_clear(u);
}

/* may a run not on copies stop now and run again with every keyspace locked?  Only when nothing it did must
 * stay (no write, no PUBLISH), for a connection of this shard outside MULTI/EXEC (it runs again from here), or
 * of another shard (a part: its home decides, dispatch.c's part_script) */
static bool restart_possible(const struct script_run *run)
{
    return (!run->wrote || run->undoable) && !run->published && !run->cluster && !SHARD_STORE_SHARED &&
           dispatch_script_restartable(shard_self, run->ctx->client) != 0;
}

static bool key_declared(const struct script_run *run, const struct resp_arg *key)
{
    for (int i = 0; i < run->nkeys; i++)
        if (run->keys[i].len == key->len && memcmp(run->keys[i].ptr, key->ptr, key->len) == 0)
            return true;
    return false;
}

/* may the script touch cmd's keys from where it runs?  Else why not (a constant) */
static const char *keys_reachable(struct script_run *run, const struct command *cmd, int argc,
                                  const struct resp_arg *argv)
{
    if (shard_store_count() == 1 && !run->cluster) /* one store holds every key (a cluster port's slots aside) */
        return NULL;
    int stack_pos[16];
    int *pos = argc <= 16 ? stack_pos : mem_alloc((size_t)argc * sizeof(int));
    int n = command_key_positions(cmd, argc, argv, pos);
    const struct config *cfg = config_current();
    const char *why = NULL;
    for (int i = 0; i < n && !why; i++) {
        const struct resp_arg *key = &argv[pos[i]];
        if (run->cluster && dispatch_key_shard(cfg, key) != shard_self->index) /* Redis Cluster: a key's node */
            why = "Script attempted to access a non local key in a cluster node";
        else if (shard_store_count() == 1)
            continue;
        else if (run->on_copies && run->db != run->ctx->db) /* the copies are of the keys in the script's first db */
            why = "Script attempted to access keys of several shards in another database than its own";
        else if (key_declared(run, key))
            continue;
        else if (run->on_copies && discovery && discovery->db == run->db) {
            if (!discovery_note(discovery, key)) /* not copied: this run goes on, its keys are gathered after */
                run->restart = true;
        } else if (!run->on_copies && dispatch_key_shard(cfg, key) != shard_self->index && restart_possible(run)) {
            run->restart = true; /* it stops here, and runs again over every shard */
            reply_clear(&engine->again);
            reply_raw(&engine->again, key->ptr, key->len);
            why = SCRIPT_RESTART;
        } else if (run->on_copies || dispatch_key_shard(cfg, key) != shard_self->index)
            why = "Script attempted to access a key that is not in KEYS and lives on another shard";
        else if (keylock_count(shard_self->locks) &&
                 keylock_holds_other(shard_self->locks, 0, run->db, key->ptr, key->len)) {
            if (restart_possible(run)) { /* it runs again over every shard, once that command is done */
                run->restart = true;
                reply_clear(&engine->again);
                reply_raw(&engine->again, key->ptr, key->len);
                why = SCRIPT_RESTART;
            } else {
                why = "Script attempted to access a key that is not in KEYS while a multi-shard command holds it";
            }
        }
    }
    if (pos != stack_pos)
        mem_release(pos);
    return why;
}

static const char oom_error[] = "-OOM command not allowed when used memory > 'maxmemory'.";

/* is this shard past its share of maxmemory (dispatch.c's budget)?  Scripts do not evict: Redis evicts before
 * the script, and refuses its first deny-oom command (or a shebang script that may write) when still over */
static bool over_maxmemory(const struct config *cfg)
{
    return cfg->maxmemory && store_memory(shard_self->store) > (size_t)cfg->maxmemory / (size_t)shard_store_count();
}

static bool command_is_container(struct script_engine *e, const struct command *cmd)
{
    size_t h = ((uintptr_t)cmd >> 4) & 255;
    if (e->containers[h].cmd != cmd) {
        const struct subcommand *first;
        e->containers[h].cmd = cmd;
        e->containers[h].container = command_subcommands_of(cmd->name, &first) > 0;
    }
    return e->containers[h].container;
}
/* XREAD / XREADGROUP given BLOCK among its options (before STREAMS), as Redis's parser sees it */
static bool stream_block_given(int argc, const struct resp_arg *argv)
{
    for (int i = 1; i + 1 < argc; i++) {
        const struct resp_arg *a = &argv[i];
        if (a->len == 7 && strncasecmp(a->ptr, "streams", 7) == 0)
            return false;
        if (a->len == 5 && strncasecmp(a->ptr, "block", 5) == 0)
            return true;
    }
    return false;
}


/* the checks of Redis's scriptCall before a command runs: NULL, or the error */
static const char *command_refusal(struct script_run *run, const struct command **cmdp, int argc,
                                   const struct resp_arg *argv)
{
    const struct command *cmd = command_lookup(argv[0].ptr, argv[0].len);
    if (!cmd)
        return "Unknown Redis command called from script";
    if (argc >= 2 && command_is_container(engine, cmd)) { /* a container: its subcommand */
        const struct subcommand *sub = command_subcommand_find(cmd->name, argv[1].ptr, argv[1].len);
        if (!sub)
            return "Unknown Redis command called from script";
        cmd = &sub->cmd;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity)
        return "Wrong number of args calling Redis command from script";
    *cmdp = cmd;
    /* Redis 7.0 flags every blocking command no-script but XREAD and XREADGROUP, whose BLOCK it refuses */
    if ((cmd->flags & CMD_NOSCRIPT) || ((cmd->flags & CMD_BLOCKING) && !(cmd->flags & CMD_KEYS_STREAMS)))
        return "This Redis command is not allowed from script";
    if ((cmd->flags & CMD_KEYS_STREAMS) && stream_block_given(argc, argv)) {
        static __thread char refused[192];
        snprintf(refused, sizeof refused, "%.*s command is not allowed with BLOCK option from scripts",
                 (int)(argv[0].len < 64 ? argv[0].len : 64), argv[0].ptr);
        return refused;
    }
    /* Redis 7.0 counts may-replicate commands (PUBLISH, PFCOUNT) as writes here */
    if ((cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)) && run->read_only)
        return "Write commands are not allowed from read-only scripts.";
    if ((cmd->flags & CMD_WRITE) && !run->wrote && replica_refuses_writes(run->ctx))
        return replica_readonly_error; /* "-READONLY ...": its own code */
    if ((cmd->flags & CMD_DENYOOM) && !run->wrote && !run->allow_oom && over_maxmemory(run->ctx->config))
        return oom_error;
    /* connection commands need the connection, which a script has not: the few that do not (PUBLISH
     * goes out as keyspace events do) */
    if (cmd->route == ROUTE_HOME && (!(cmd->flags & CMD_FAST) || (cmd->flags & CMD_PUBSUB)) &&
        !(cmd->flags & (CMD_SELECTS_DB | CMD_MAY_REPLICATE)))
        return "This Redis command is not allowed from script";
    /* keyspace-wide commands see every shard only from a client */
    if (shard_store_count() > 1 && cmd->route >= ROUTE_FANOUT_SUM && cmd->route <= ROUTE_RANDOMKEY)
        return "This Redis command is not allowed from script when the keyspace spans several shards";
    return keys_reachable(run, cmd, argc, argv);
}

/* SELECT inside a script: the script's own database */
static void script_select(struct script_run *run, const struct resp_arg *arg, struct reply *out)
{
    long long id;
    if (!util_str_to_ll(arg->ptr, arg->len, &id)) {
        reply_error(out, "ERR value is not an integer or out of range");
        return;
    }
    if (id < 0 || id >= run->ctx->config->databases) {
        reply_error(out, "ERR DB index is out of range");
        return;
    }
    run->db = (int)id;
    reply_ok(out);
}

static int redis_generic_call(lua_State *L, bool raise)
{
    struct script_run *run = current_run_or_raise(L, "redis.call/pcall");
    struct script_engine *e = engine;
    int argc = lua_gettop(L);
    if (argc == 0) {
        push_error_cstr(L, "Please specify at least one argument for this redis lib call");
        return raise ? raise_error(L) : 1;
    }
    if (argc > e->argv_cap) {
        e->argv = mem_realloc(e->argv, (size_t)argc * sizeof(*e->argv));
        e->argv_cap = argc;
    }
    for (int j = 1; j <= argc; j++) {
        int t = lua_type(L, j);
        if (t == LUA_TNUMBER) { /* %.17g: lua_tolstring would lose precision */
            char buf[64];
            int n = snprintf(buf, sizeof buf, "%.17g", (double)lua_tonumber(L, j));
            lua_pushlstring(L, buf, (size_t)n);
            lua_replace(L, j);
        } else if (t != LUA_TSTRING) {
            lua_settop(L, 0);
            push_error_cstr(L, "Lua redis lib command arguments must be strings or integers");
            return raise ? raise_error(L) : 1;
        }
        e->argv[j - 1].ptr = lua_tolstring(L, j, &e->argv[j - 1].len);
    }
    const struct command *cmd = NULL;
    const char *why = command_refusal(run, &cmd, argc, e->argv);
    if (why) {
        lua_settop(L, 0);
        push_error_cstr(L, why);
        if (run->restart) /* it runs again over every shard: this run ends, whatever pcall it is in */
            lua_sethook(L, script_hook, LUA_MASKLINE, 0);
        return raise || run->restart ? raise_error(L) : 1;
    }
    struct cmd_ctx *ctx = run->ctx;
    struct shard *self = shard_self;
    reply_clear(&e->reply);
    e->reply.resp = run->resp;
    if (cmd->flags & CMD_MAY_REPLICATE)
        run->published = true;
    if (run->restart && (cmd->flags & CMD_MAY_REPLICATE)) { /* a run on copies that runs again: nothing leaves */
        lua_settop(L, 0);
        push_error_cstr(L, SCRIPT_RESTART);
        return raise_error(L);
    }
    if ((cmd->flags & CMD_WRITE) && run->undoable && !(cmd->flags & CMD_SELECTS_DB))
        undo_note(run, e, cmd, argc, e->argv);
    if (cmd->flags & CMD_WRITE) {
        run->wrote = true;
        if (run->busy) /* SCRIPT KILL from now on answers -UNKILLABLE */
            atomic_store(&shard_self->script_wrote, true);
    }
    if (cmd->flags & CMD_SELECTS_DB) {
        script_select(run, &e->argv[1], &e->reply);
    } else if (run->on_copies) {
        struct call c = {
            .cmd = cmd, .argv = e->argv, .argc = argc, .db = run->db, .resp = run->resp, .client = ctx->client,
            .store = ctx->store, .out = &e->reply, .flags = CALL_WHOLE | CALL_STATS | CALL_NESTED,
            .effects = ctx->effects,
        };
        call(self, &c);
    } else {
        struct call c = {
            .cmd = cmd, .argv = e->argv, .argc = argc, .db = run->db, .resp = run->resp, .client = ctx->client,
            .store = ctx->store, .out = &e->reply,
            .flags = CALL_WHOLE | CALL_STATS | CALL_EFFECTS | CALL_NESTED, .effects = ctx->effects,
        };
        call(self, &c);
    }
    if (__builtin_expect(monitor_any(), 0) && command_monitored(cmd, argc, e->argv)) /* Redis's call(): after it ran */
        monitor_feed_as(self, run->db, "lua", cmd, argc, e->argv);
    lua_settop(L, 0);
    reply_raw(&e->reply, "", 1); /* a NUL after the reply: the parser's strstr stops there */
    bool is_error = e->reply.buf[0] == '-';
    resp_to_lua(L, e->reply.buf, 0);
    return raise && is_error ? raise_error(L) : 1;
}

static int lua_redis_call(lua_State *L) { return redis_generic_call(L, true); }

static int lua_redis_pcall_command(lua_State *L) { return redis_generic_call(L, false); }

/* pcall as Redis 7 has it: a table error ({err=...}) comes back as its message */
static int lua_redis_pcall_builtin(lua_State *L)
{
    int argc = lua_gettop(L);
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    if (lua_pcall(L, argc - 1, LUA_MULTRET, 0)) {
        lua_remove(L, 1);
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            if (lua_isstring(L, -1))
                lua_replace(L, -2);
            else
                lua_pop(L, 1);
        }
        lua_pushboolean(L, 0);
        lua_insert(L, 1);
    }
    return lua_gettop(L);
}

static int lua_redis_sha1hex(lua_State *L)
{
    if (lua_gettop(L) != 1) {
        push_error_cstr(L, "wrong number of arguments");
        return raise_error(L);
    }
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    char hex[41];
    sha1_hex(hex, s ? s : "", s ? len : 0);
    lua_pushstring(L, hex);
    return 1;
}

static int lua_redis_error_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        push_error_cstr(L, "wrong number or type of arguments");
        return 1;
    }
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    if (len && s[0] == '-') {
        push_error(L, s, len);
    } else {
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        luaL_addchar(&b, '-');
        luaL_addlstring(&b, s, len);
        luaL_pushresult(&b);
        s = lua_tolstring(L, -1, &len);
        push_error(L, s, len);
    }
    return 1;
}

static int lua_redis_status_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        push_error_cstr(L, "wrong number or type of arguments");
        return 1;
    }
    lua_newtable(L);
    lua_pushstring(L, "ok");
    lua_pushvalue(L, -3);
    lua_settable(L, -3);
    return 1;
}

int script_lua_log(lua_State *L)
{
    int argc = lua_gettop(L);
    if (argc < 2) {
        push_error_cstr(L, "redis.log() requires two arguments or more.");
        return raise_error(L);
    }
    if (!lua_isnumber(L, -argc)) {
        push_error_cstr(L, "First argument must be a number (log level).");
        return raise_error(L);
    }
    int level = lua_number_to_int(lua_tonumber(L, -argc));
    if (level < LOG_DEBUG || level > LOG_WARNING) {
        push_error_cstr(L, "Invalid debug level.");
        return raise_error(L);
    }
    if (!log_enabled((enum loglevel)level))
        return 0;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int j = 1; j < argc; j++) {
        size_t len;
        const char *s = lua_tolstring(L, (-argc) + j, &len);
        if (s) {
            if (j != 1)
                luaL_addchar(&b, ' ');
            luaL_addlstring(&b, s, len);
        }
    }
    luaL_pushresult(&b);
    log_emit((enum loglevel)level, "%s", lua_tostring(L, -1));
    return 0;
}

static int lua_redis_setresp(lua_State *L)
{
    struct script_run *run = current_run_or_raise(L, "redis.setresp");
    if (lua_gettop(L) != 1) {
        push_error_cstr(L, "redis.setresp() requires one argument.");
        return raise_error(L);
    }
    int resp = lua_number_to_int(lua_tonumber(L, -1));
    if (resp != 2 && resp != 3) {
        push_error_cstr(L, "RESP version must be 2 or 3.");
        return raise_error(L);
    }
    run->resp = resp;
    return 0;
}

/* redis.set_repl: accepted (writes go out as the script's commands, whatever it asks) */
static int lua_redis_set_repl(lua_State *L)
{
    current_run_or_raise(L, "redis.set_repl");
    if (lua_gettop(L) != 1) {
        push_error_cstr(L, "redis.set_repl() requires two arguments.");
        return raise_error(L);
    }
    int flags = lua_number_to_int(lua_tonumber(L, -1));
    if ((flags & ~3) != 0) {
        push_error_cstr(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
        return raise_error(L);
    }
    return 0;
}

/* redis.replicate_commands: always on since Redis 7 */
static int lua_redis_true(lua_State *L)
{
    lua_pushboolean(L, 1);
    return 1;
}

static int lua_redis_noop(lua_State *L)
{
    (void)L;
    return 0;
}

/* ---- the sandbox: scripts see the globals through a read-only proxy (Redis 7.0.15's readonly _G) */
static int globals_index(lua_State *L)
{
    /* (proxy, name): the real globals are the proxy's upvalue */
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    if (!lua_isnil(L, -1))
        return 1;
    const char *name = lua_tostring(L, 2);
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", name ? name : "?");
}

static int globals_newindex(lua_State *L) { return luaL_error(L, "Attempt to modify a readonly table"); }

static const char error_handler_src[] =
    "local dbg = debug\n"
    "return function(err)\n"
    "  local i = dbg.getinfo(2,'nSl')\n"
    "  if i and i.what == 'C' then\n"
    "    i = dbg.getinfo(3,'nSl')\n"
    "  end\n"
    "  if type(err) ~= 'table' then\n"
    "    err = {err='ERR ' .. tostring(err)}\n"
    "  end\n"
    "  if i then\n"
    "    err['source'] = i.source\n"
    "    err['line'] = i.currentline\n"
    "  end\n"
    "  return err\n"
    "end\n";

static void open_lib(lua_State *L, const char *name, lua_CFunction fn)
{
    lua_pushcfunction(L, fn);
    lua_pushstring(L, name);
    lua_call(L, 1, 0);
}

static void set_fn(lua_State *L, const char *name, lua_CFunction fn)
{
    lua_pushstring(L, name);
    lua_pushcfunction(L, fn);
    lua_settable(L, -3);
}

static void set_num(lua_State *L, const char *name, lua_Number v)
{
    lua_pushstring(L, name);
    lua_pushnumber(L, v);
    lua_settable(L, -3);
}

static lua_State *engine_state_create(void)
{
    lua_State *L = luaL_newstate();
    open_lib(L, "", luaopen_base);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    open_lib(L, LUA_DBLIBNAME, luaopen_debug);
    /* Debian's modules and ours return their table (cjson sets no global): Redis has them as globals */
    lua_pushcfunction(L, luaopen_cjson);
    lua_call(L, 0, 1);
    lua_setglobal(L, "cjson");
    lua_pushcfunction(L, luaopen_bit);
    lua_call(L, 0, 1);
    lua_setglobal(L, "bit");
    lua_cmsgpack_open(L);
    lua_setglobal(L, "cmsgpack");
    lua_struct_open(L);
    lua_setglobal(L, "struct");
    /* what Redis 7.0.15's allow list leaves out of the base library */
    static const char *const denied[] = {"loadfile", "dofile", "print", "newproxy", "getfenv", "setfenv"};
    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, denied[i]);
    }
    /* math.random as Redis's: rand48, repeatable after math.randomseed */
    lua_getglobal(L, "math");
    set_fn(L, "random", lua_math_random);
    set_fn(L, "randomseed", lua_math_randomseed);
    lua_pop(L, 1);
    /* the redis table */
    lua_newtable(L);
    set_fn(L, "call", lua_redis_call);
    set_fn(L, "pcall", lua_redis_pcall_command);
    set_fn(L, "log", script_lua_log);
    set_fn(L, "setresp", lua_redis_setresp);
    set_fn(L, "sha1hex", lua_redis_sha1hex);
    set_fn(L, "error_reply", lua_redis_error_reply);
    set_fn(L, "status_reply", lua_redis_status_reply);
    set_fn(L, "set_repl", lua_redis_set_repl);
    set_fn(L, "replicate_commands", lua_redis_true);
    set_fn(L, "breakpoint", lua_redis_noop);
    set_fn(L, "debug", lua_redis_noop);
    set_num(L, "LOG_DEBUG", LOG_DEBUG);
    set_num(L, "LOG_VERBOSE", LOG_VERBOSE);
    set_num(L, "LOG_NOTICE", LOG_NOTICE);
    set_num(L, "LOG_WARNING", LOG_WARNING);
    set_num(L, "REPL_NONE", 0);
    set_num(L, "REPL_AOF", 1);
    set_num(L, "REPL_SLAVE", 2);
    set_num(L, "REPL_REPLICA", 2);
    set_num(L, "REPL_ALL", 3);
    lua_pushstring(L, "REDIS_VERSION");
    lua_pushstring(L, SCRIPT_VERSION);
    lua_settable(L, -3);
    set_num(L, "REDIS_VERSION_NUM", SCRIPT_VERSION_NUM);
    lua_setglobal(L, "redis");
    lua_pushcfunction(L, lua_redis_pcall_builtin);
    lua_setglobal(L, "pcall");
    /* the error handler, in the registry, holding `debug`, which scripts do not see */
    luaL_loadbuffer(L, error_handler_src, sizeof error_handler_src - 1, "@err_handler");
    lua_call(L, 0, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "__redis__err__handler");
    lua_setglobal(L, "__redis__err__handler"); /* scripts see it, as in Redis; EVAL uses the registry's */
    lua_pushnil(L);
    lua_setglobal(L, "debug");
    /* the proxy scripts see as their globals: reads fall through, writes are refused */
    lua_newtable(L);                       /* proxy */
    lua_newtable(L);                       /* its metatable */
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_pushcclosure(L, globals_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, globals_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setglobal(L, "_G");                /* _G names the proxy: _G.x = 1 is refused too */
    lua_setfield(L, LUA_REGISTRYINDEX, "__redis__globals");
    return L;
}

static void engine_state_reset(struct script_engine *e)
{
    if (e->L)
        lua_close(e->L);
    e->L = engine_state_create();
    e->gen = cache_gen();
}

static struct script_engine *engine_get(void)
{
    struct script_engine *e = engine;
    if (!e) {
        e = mem_alloc(sizeof(*e));
        memset(e, 0, sizeof(*e));
        reply_init(&e->reply);
        reply_init(&e->undo);
        reply_init(&e->again);
        e->rand48[0] = 0x330E, e->rand48[1] = 0xABCD, e->rand48[2] = 0x1234; /* rand.c's initial state */
        engine = e;
        engine_state_reset(e);
    } else if (e->gen != cache_gen()) {
        engine_state_reset(e); /* SCRIPT FLUSH since it compiled its scripts */
    }
    return e;
}

void script_thread_teardown(void)
{
    struct script_engine *e = engine;
    if (!e)
        return;
    if (e->L)
        lua_close(e->L);
    reply_deinit(&e->reply);
    reply_deinit(&e->undo);
    reply_deinit(&e->again);
    mem_release(e->argv);
    mem_release(e);
    engine = NULL;
}

/* ---------------------------------------------------------------- shebang and compiling */

const struct script_flag_name script_flag_names[] = {
    {"no-writes", SCRIPT_FLAG_NO_WRITES},
    {"allow-oom", SCRIPT_FLAG_ALLOW_OOM},
    {"allow-stale", SCRIPT_FLAG_ALLOW_STALE},
    {"no-cluster", SCRIPT_FLAG_NO_CLUSTER},
    {"allow-cross-slot-keys", SCRIPT_FLAG_ALLOW_CROSS_SLOT},
};
const size_t script_flag_names_count = sizeof script_flag_names / sizeof script_flag_names[0];

/*
 * Redis's evalExtractShebangFlags: "#!lua [flags=a,b]" on the first line.
 * *skip: the bytes of the shebang (the line feed stays, so lines keep their
 * numbers).  False with the error written to out.
 */
static bool shebang_parse_or_reply(const char *body, size_t len, unsigned *flags, size_t *skip, struct reply *out)
{
    *flags = 0;
    *skip = 0;
    if (len < 2 || body[0] != '#' || body[1] != '!')
        return true;
    const char *nl = memchr(body, '\n', len);
    if (!nl) {
        reply_error(out, "ERR Invalid script shebang");
        return false;
    }
    *skip = (size_t)(nl - body);
    *flags = SCRIPT_FLAG_SHEBANG;
    const char *p = body, *end = nl;
    int word = 0;
    size_t wl;
    for (const char *w; (w = shebang_word(&p, end, &wl));) {
        if (word++ == 0) {
            if (wl != 5 || memcmp(w, "#!lua", 5) != 0) {
                reply_errorf(out, "ERR Unexpected engine in script shebang: %.*s", (int)wl, w);
                return false;
            }
            continue;
        }
        if (wl < 6 || memcmp(w, "flags=", 6) != 0) {
            reply_errorf(out, "ERR Unknown lua shebang option: %.*s", (int)wl, w);
            return false;
        }
        const char *f = w + 6, *fend = p;
        while (f <= fend) {
            const char *comma = memchr(f, ',', (size_t)(fend - f));
            const char *stop = comma ? comma : fend;
            size_t fl = (size_t)(stop - f);
            size_t i = 0, n = script_flag_names_count;
            for (; i < n; i++)
                if (strlen(script_flag_names[i].name) == fl && memcmp(script_flag_names[i].name, f, fl) == 0)
                    break;
            if (i == n) {
                if (fl == 0 && !comma && f == w + 6) /* "flags=" with nothing: no flags */
                    break;
                reply_errorf(out, "ERR Unexpected flag in script shebang: %.*s", (int)fl, f);
                return false;
            }
            *flags |= script_flag_names[i].flag;
            if (!comma)
                break;
            f = comma + 1;
        }
    }
    return true;
}

/* the script's function f_<sha> on the stack, compiled now if this shard has not yet: false with the error
 * written to out */
static bool script_function_or_reply(struct script_engine *e, const char *sha, const char *body, size_t len,
                                     struct reply *out)
{
    lua_State *L = e->L;
    char name[43] = "f_";
    memcpy(name + 2, sha, 41);
    lua_getfield(L, LUA_REGISTRYINDEX, name);
    if (!lua_isnil(L, -1))
        return true;
    lua_pop(L, 1);
    unsigned flags;
    size_t skip;
    if (!shebang_parse_or_reply(body, len, &flags, &skip, out))
        return false;
    if (luaL_loadbuffer(L, body + skip, len - skip, "@user_script")) {
        reply_errorf(out, "ERR Error compiling script (new function): %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return false;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, "__redis__globals");
    lua_setfenv(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, name);
    /* its flags beside it */
    char fname[45] = "F_";
    memcpy(fname + 2, sha, 41);
    lua_pushnumber(L, flags);
    lua_setfield(L, LUA_REGISTRYINDEX, fname);
    return true;
}

static unsigned script_flags_of(lua_State *L, const char *sha)
{
    char fname[45] = "F_";
    memcpy(fname + 2, sha, 41);
    lua_getfield(L, LUA_REGISTRYINDEX, fname);
    unsigned flags = (unsigned)lua_tonumber(L, -1);
    lua_pop(L, 1);
    return flags;
}

/* ---------------------------------------------------------------- busy scripts */

atomic_int script_busy_shards;

/* the busy script's name and command, for a FUNCTION STATS asked on another shard */
static void script_stats_publish(struct shard *self, const struct script_run *run)
{
    struct reply r;
    reply_init(&r);
    if (run) {
        reply_bulk(&r, "name", 4);
        reply_bulk(&r, run->name, strlen(run->name));
        reply_bulk(&r, "command", 7);
        reply_array(&r, run->ctx->argc);
        for (int i = 0; i < run->ctx->argc; i++)
            reply_bulk(&r, run->ctx->argv[i].ptr, run->ctx->argv[i].len);
    }
    pthread_mutex_lock(&self->script_stats_lock);
    mem_release(self->script_stats);
    self->script_stats = run ? mem_strndup(r.buf, r.len) : NULL;
    self->script_stats_len = run ? r.len : 0;
    self->script_start_ms = run ? run->start_ms : 0;
    pthread_mutex_unlock(&self->script_stats_lock);
    reply_deinit(&r);
}

int script_busy_elsewhere(char **stats, size_t *len, int64_t *duration_ms)
{
    for (int i = 0; i < shard_count() && atomic_load_explicit(&script_busy_shards, memory_order_relaxed); i++) {
        struct shard *sh = shard_at(i);
        if (sh == shard_self || !atomic_load(&sh->script_busy))
            continue;
        if (!atomic_load(&sh->script_function))
            return 2;
        pthread_mutex_lock(&sh->script_stats_lock);
        bool have = sh->script_stats != NULL;
        if (have) {
            *stats = mem_strndup(sh->script_stats, sh->script_stats_len);
            *len = sh->script_stats_len;
            *duration_ms = util_mono_ns() / 1000000 - sh->script_start_ms;
        }
        pthread_mutex_unlock(&sh->script_stats_lock);
        if (have)
            return 1;
    }
    return 0;
}

static void script_busy_begin(struct shard *self, const struct script_run *run, int64_t elapsed)
{
    script_stats_publish(self, run);
    self->busy_script = true;
    atomic_store(&self->script_kill, false);
    atomic_store(&self->script_wrote, run->wrote);
    atomic_store(&self->script_function, run->function);
    atomic_store(&self->script_busy, true);
    atomic_fetch_add(&script_busy_shards, 1);
    log_warn("Slow script detected: still in execution after %lld milliseconds. You can try killing the script "
             "using the %s command. Script name is: %s.", (long long)elapsed,
             run->function ? "FUNCTION KILL" : "SCRIPT KILL", run->name);
}

static void script_busy_end(struct shard *self)
{
    script_stats_publish(self, NULL);
    atomic_store(&self->script_busy, false);
    atomic_store(&self->script_kill, false);
    atomic_fetch_sub(&script_busy_shards, 1);
    self->busy_script = false;
}

/*
 * Redis's luaMaskCountHook and scriptInterrupt, every SCRIPT_HOOK_PERIOD Lua
 * instructions: past busy-reply-threshold the shard serves its clients from
 * here (shard_serve_busy: -BUSY, SCRIPT KILL, SHUTDOWN NOSAVE) and the script
 * ends when SCRIPT KILL asked (a script that wrote is not killed: SCRIPT KILL
 * said -UNKILLABLE) or the server stops.  Once killed, the hook runs at every
 * line, so a pcall in the script cannot catch the error and go on.
 */
static void script_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    struct script_run *run = engine ? engine->run : NULL;
    struct shard *self = shard_self;
    if (!run || !self)
        return;
    if (run->restart && !run->on_copies) { /* it runs again over every shard: no pcall goes on */
        push_error_cstr(L, SCRIPT_RESTART);
        raise_error(L);
    }
    bool stop = run->killed || !shard_running(self);
    if (!stop && !run->busy) {
        int64_t elapsed = util_mono_ns() / 1000000 - run->start_ms;
        if (elapsed < run->ctx->config->busy_reply_threshold)
            return;
        run->busy = true;
        script_busy_begin(self, run, elapsed);
    }
    if (!stop) {
        shard_serve_busy(self, run->ctx->conn, run->ctx->client);
        stop = (atomic_load(&self->script_kill) && !run->wrote) || !shard_running(self);
    }
    if (!stop)
        return;
    if (!run->killed) {
        if (shard_running(self))
            log_warn("Lua script killed by user with SCRIPT KILL.");
        run->killed = true;
        lua_sethook(L, script_hook, LUA_MASKLINE, 0);
    }
    push_error_cstr(L, "Script killed by user with SCRIPT KILL...");
    raise_error(L);
}

void script_kill_reply(struct reply *out, bool function)
{
    bool killed = false, unkillable = false, other = false;
    for (int i = 0; i < shard_count(); i++) { /* a busy script on any shard (Redis has one at most) */
        struct shard *sh = shard_at(i);
        if (!sh || !atomic_load(&sh->script_busy))
            continue;
        if (atomic_load(&sh->script_wrote)) {
            unkillable = true;
        } else if (atomic_load(&sh->script_function) != function) {
            other = true;
        } else {
            atomic_store(&sh->script_kill, true);
            killed = true;
        }
    }
    if (killed)
        reply_ok(out);
    else if (unkillable)
        reply_error(out, "UNKILLABLE Sorry the script already executed write commands against the dataset. You "
                         "can either wait the script termination or kill the server in a hard way using the "
                         "SHUTDOWN NOSAVE command.");
    else if (other) /* Redis's: a function is no SCRIPT KILL's, an EVAL no FUNCTION KILL's */
        reply_error(out, function ? SCRIPT_BUSY_ERROR : FUNCTION_BUSY_ERROR);
    else
        reply_error(out, "NOTBUSY No scripts in execution right now.");
}

const char *script_busy_error(int shard)
{
    struct shard *sh = shard >= 0 ? shard_at(shard) : NULL;
    for (int i = 0; (!sh || !atomic_load(&sh->script_busy)) && i < shard_count(); i++)
        sh = shard_at(i);
    return sh && atomic_load(&sh->script_busy) && atomic_load(&sh->script_function) ? FUNCTION_BUSY_ERROR
                                                                                     : SCRIPT_BUSY_ERROR;
}

const char *script_busy_error_here(void)
{
    return engine && engine->run && engine->run->function ? FUNCTION_BUSY_ERROR : SCRIPT_BUSY_ERROR;
}

/* ---------------------------------------------------------------- EVAL and friends */

/* the script failed: Redis's reply from its error table (luaCallFunction) */
static void reply_script_error(lua_State *L, const struct script_call *sc, struct reply *out)
{
    if (!lua_istable(L, -1)) {
        const char *msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
        reply_errorf(out, "ERR Error running script %s, %.100s", sc->raw_name, msg);
        return;
    }
    size_t mlen = 0;
    const char *msg = table_string_field(L, "err", &mlen);
    const char *source = table_string_field(L, "source", NULL);
    lua_pushstring(L, "line");
    lua_rawget(L, -2);
    const char *line = lua_isnumber(L, -1) || lua_isstring(L, -1) ? lua_tostring(L, -1) : NULL;
    struct reply text;
    reply_init(&text);
    reply_raw(&text, msg ? msg : "", msg ? mlen : 0);
    if (line && source) {
        reply_raw(&text, " script: ", 9);
        reply_raw(&text, sc->name, strlen(sc->name));
        reply_raw(&text, ", on ", 5);
        reply_raw(&text, source, strlen(source));
        reply_raw(&text, ":", 1);
        reply_raw(&text, line, strlen(line));
        reply_raw(&text, ".", 1);
    }
    lua_pop(L, 1);
    reply_sanitized(out, '-', text.buf ? text.buf : "", text.len);
    reply_deinit(&text);
}

/* a Lua array of n strings on the stack */
static void push_array(lua_State *L, const struct resp_arg *v, int n)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushlstring(L, v[i].ptr, v[i].len);
        lua_rawseti(L, -2, i + 1);
    }
}

lua_State *script_state(void) { return engine_get()->L; }

void script_run(struct cmd_ctx *ctx, const struct script_call *sc)
{
    struct script_engine *e = engine;
    lua_State *L = e->L;
    unsigned flags = sc->flags;
    struct shard *self = shard_self;
    if (self->cluster_call && (flags & SCRIPT_FLAG_NO_CLUSTER)) { /* Redis's scriptPrepareForRun, first */
        lua_settop(L, 0);
        reply_error(ctx->out, "ERR Can not run script on cluster, 'no-cluster' flag is set.");
        return;
    }
    if ((flags & SCRIPT_FLAG_SHEBANG) && !(flags & SCRIPT_FLAG_NO_WRITES) && replica_refuses_writes(ctx)) {
        lua_settop(L, 0); /* Redis's processCommand: such a script is a write (its flags) */
        reply_error(ctx->out, replica_readonly_error + 1);
        return;
    }
    if (sc->read_only && (flags & SCRIPT_FLAG_SHEBANG) && !(flags & SCRIPT_FLAG_NO_WRITES)) {
        lua_settop(L, 0);
        reply_error(ctx->out, "ERR Can not execute a script with write flag using *_ro command.");
        return;
    }
    if ((flags & SCRIPT_FLAG_SHEBANG) && !(flags & (SCRIPT_FLAG_NO_WRITES | SCRIPT_FLAG_ALLOW_OOM)) &&
        !sc->read_only && over_maxmemory(ctx->config)) {
        lua_settop(L, 0);
        reply_error(ctx->out, oom_error + 1);
        return;
    }
    struct script_run run = {
        .ctx = ctx,
        .name = sc->name,
        .db = ctx->db,
        .resp = 2,
        .read_only = sc->read_only || (flags & SCRIPT_FLAG_NO_WRITES),
        .function = sc->function,
        .allow_oom = (flags & SCRIPT_FLAG_ALLOW_OOM) != 0,
        .on_copies = !SHARD_STORE_SHARED && ctx->store != self->store,
        .cluster = self->cluster_call,
        .undoable = shard_store_count() > 1 && !SHARD_STORE_SHARED && ctx->store == self->store,
        .nkeys = sc->nkeys,
        .keys = &ctx->argv[3],
    };
    const struct resp_arg *args = &ctx->argv[3 + sc->nkeys];
    int nargs = ctx->argc - 3 - sc->nkeys;
    if (sc->function) { /* fn(keys, args) */
        push_array(L, run.keys, sc->nkeys);
        push_array(L, args, nargs);
    } else {
        push_array(L, run.keys, sc->nkeys);
        lua_setglobal(L, "KEYS");
        push_array(L, args, nargs);
        lua_setglobal(L, "ARGV");
    }
    reply_clear(&e->undo);
    e->run = &run;
    run.start_ms = util_mono_ns() / 1000000;
    lua_sethook(L, script_hook, LUA_MASKCOUNT, SCRIPT_HOOK_PERIOD);
    int err = lua_pcall(L, sc->function ? 2 : 0, 1, sc->function ? -4 : -2);
    lua_sethook(L, NULL, 0, 0);
    if (run.busy)
        script_busy_end(self);
    e->run = NULL;
    if (run.restart) { /* it named an undeclared key of another shard: it runs again over every shard */
        lua_settop(L, 0);
        if (!run.on_copies)
            undo_apply(e, ctx->store, ctx->now); /* the keys it wrote as they were */
        { /* what it did goes (events, watches, the AOF): the run again does it */
            if (ctx->effects) {
                ctx->effects->n = 0;
                ctx->effects->len = 0;
                ctx->effects->changes = 0;
                ctx->effects->prop_n = 0;
                reply_clear(&ctx->effects->prop);
            }
        }
        if (run.on_copies) {
            /* the gather runs it again (dispatch.c) */
        } else {
            /* its arguments, then the key it named: copied with its declared keys in the run again */
            struct resp_arg *argv = mem_alloc(((size_t)ctx->argc + 1) * sizeof(*argv));
            memcpy(argv, ctx->argv, (size_t)ctx->argc * sizeof(*argv));
            argv[ctx->argc] = (struct resp_arg){e->again.buf ? e->again.buf : "", e->again.len};
            if (dispatch_script_restartable(self, ctx->client) > 0) {
                /* run inline: nothing written; no reply and no call counted here, the run again has them */
                stats_subcommand(NULL, false);
                dispatch_script_restart(self, ctx->client, ctx->argc, argv, 1);
            } else { /* a part for a client of another shard: its home runs it again (dispatch.c's part_script) */
                char mark = DISPATCH_SCRIPT_AGAIN;
                uint32_t argc = (uint32_t)ctx->argc, nextra = 1;
                reply_raw(ctx->out, &mark, 1);
                reply_raw(ctx->out, (const char *)&argc, 4);
                reply_raw(ctx->out, (const char *)&nextra, 4);
                for (int i = 0; i <= ctx->argc; i++) {
                    uint32_t n = (uint32_t)argv[i].len;
                    reply_raw(ctx->out, (const char *)&n, 4);
                    reply_raw(ctx->out, argv[i].ptr, argv[i].len);
                }
            }
            mem_release(argv);
        }
        return;
    }
    if (err)
        reply_script_error(L, sc, ctx->out);
    else
        lua_to_reply(L, ctx->out, run.resp);
    lua_settop(L, 0);
    if (++e->calls % SCRIPT_GC_PERIOD == 0) /* as Redis: a step of 50 every 50 scripts, not a full cycle */
        lua_gc(L, LUA_GCSTEP, SCRIPT_GC_PERIOD);
}

static void eval_generic(struct cmd_ctx *ctx, bool by_sha, bool read_only)
{
    long long numkeys;
    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &numkeys))
        return;
    if (numkeys > ctx->argc - 3) {
        reply_error(ctx->out, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (numkeys < 0) {
        reply_error(ctx->out, "ERR Number of keys can't be negative");
        return;
    }
    struct script_engine *e = engine_get();
    lua_State *L = e->L;
    const struct resp_arg *body = &ctx->argv[1];
    char sha[41];
    if (by_sha) {
        if (body->len != 40) {
            reply_error(ctx->out, "NOSCRIPT No matching script. Please use EVAL.");
            return;
        }
        for (int i = 0; i < 40; i++)
            sha[i] = (char)tolower((unsigned char)body->ptr[i]);
        sha[40] = 0;
        char name[43] = "f_";
        memcpy(name + 2, sha, 41);
        lua_getfield(L, LUA_REGISTRYINDEX, name);
        bool known = !lua_isnil(L, -1);
        lua_pop(L, 1);
        if (!known) {
            const struct script_body *b = cache_find(rcu_ptr_read(&cache), sha);
            if (!b) {
                reply_error(ctx->out, "NOSCRIPT No matching script. Please use EVAL.");
                return;
            }
            if (!script_function_or_reply(e, sha, b->text, b->len, ctx->out))
                return;
            lua_pop(L, 1);
        }
    } else {
        sha1_hex(sha, body->ptr, body->len);
    }
    lua_getfield(L, LUA_REGISTRYINDEX, "__redis__err__handler");
    if (by_sha) {
        char name[43] = "f_";
        memcpy(name + 2, sha, 41);
        lua_getfield(L, LUA_REGISTRYINDEX, name);
    } else {
        char name[43] = "f_";
        memcpy(name + 2, sha, 41);
        lua_getfield(L, LUA_REGISTRYINDEX, name);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            if (!script_function_or_reply(e, sha, body->ptr, body->len, ctx->out)) {
                lua_pop(L, 1);
                return;
            }
            cache_add(sha, body->ptr, body->len); /* first seen on this shard: every shard may run it by sha */
        }
    }
    char raw_name[43] = "f_";
    memcpy(raw_name + 2, sha, 41);
    struct script_call sc = {
        .name = sha, .raw_name = raw_name, .flags = script_flags_of(L, sha), .read_only = read_only,
        .nkeys = (int)numkeys,
    };
    script_run(ctx, &sc);
}

static void cmd_eval(struct cmd_ctx *ctx) { eval_generic(ctx, false, false); }
static void cmd_evalsha(struct cmd_ctx *ctx) { eval_generic(ctx, true, false); }
static void cmd_eval_ro(struct cmd_ctx *ctx) { eval_generic(ctx, false, true); }
static void cmd_evalsha_ro(struct cmd_ctx *ctx) { eval_generic(ctx, true, true); }

/* ---------------------------------------------------------------- SCRIPT */

static const char *const script_help[] = {
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Print this help.",
};

bool script_running(void) { return engine && engine->run; }

const struct cmd_ctx *script_running_call(const char **name, int64_t *duration_ms, bool *function)
{
    const struct script_run *run = engine ? engine->run : NULL;
    if (!run)
        return NULL;
    *name = run->name;
    *duration_ms = util_mono_ns() / 1000000 - run->start_ms;
    *function = run->function;
    return run->ctx;
}

static void cmd_script(struct cmd_ctx *ctx)
{
    const struct resp_arg *sub = &ctx->argv[1];
    const struct subcommand *found;
    /* as Redis's processCommand: an unknown subcommand or a wrong arity first (rejected, counted for the
     * subcommand, an unknown one for none), then -BUSY from a busy script's hook (KILL alone runs) */
    if (!command_subcommand_or_reply("script", ctx->argc, ctx->argv, ctx->out, &found)) {
        stats_subcommand(found ? &found->cmd : NULL, true);
        return;
    }
    bool refused = script_running() && !cmd_arg_is(sub, "kill");
    stats_subcommand(&found->cmd, refused); /* commandstats count "script|load", not "script" */
    if (refused) {
        reply_error(ctx->out, script_busy_error_here());
    } else if (cmd_arg_is(sub, "help")) {
        size_t n = sizeof script_help / sizeof script_help[0];
        reply_array(ctx->out, (long long)n);
        for (size_t i = 0; i < n; i++)
            reply_simple(ctx->out, script_help[i]);
    } else if (cmd_arg_is(sub, "load")) {
        struct script_engine *e = engine_get();
        char sha[41];
        sha1_hex(sha, ctx->argv[2].ptr, ctx->argv[2].len);
        if (!script_function_or_reply(e, sha, ctx->argv[2].ptr, ctx->argv[2].len, ctx->out))
            return;
        lua_settop(e->L, 0);
        cache_add(sha, ctx->argv[2].ptr, ctx->argv[2].len);
        reply_bulk(ctx->out, sha, 40);
    } else if (cmd_arg_is(sub, "exists")) {
        const struct script_cache *m = rcu_ptr_read(&cache);
        reply_array(ctx->out, ctx->argc - 2);
        for (int i = 2; i < ctx->argc; i++)
            reply_int(ctx->out, ctx->argv[i].len == 40 && cache_find(m, ctx->argv[i].ptr) ? 1 : 0);
    } else if (cmd_arg_is(sub, "flush")) {
        if (ctx->argc > 3 || (ctx->argc == 3 && !cmd_arg_is(&ctx->argv[2], "sync") && !cmd_arg_is(&ctx->argv[2], "async"))) {
            reply_error(ctx->out, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
            return;
        }
        cache_flush();
        engine_get(); /* this shard's state goes now; the others' at their next script */
        reply_ok(ctx->out);
    } else {
        script_kill_reply(ctx->out, false);
    }
}

#define SCRIPT_CMD (CMD_NOSCRIPT | CMD_STALE | CMD_NUMKEYS | CMD_NUMKEYS_ZERO_OK | CMD_MONITOR_FIRST)

const struct command command_family_script[] = {
    {"eval", cmd_eval, -3, SCRIPT_CMD | CMD_MAY_REPLICATE, 2, 0, 0, ROUTE_GATHER, "@slow @scripting"},
    {"evalsha", cmd_evalsha, -3, SCRIPT_CMD | CMD_MAY_REPLICATE, 2, 0, 0, ROUTE_GATHER, "@slow @scripting"},
    {"eval_ro", cmd_eval_ro, -3, SCRIPT_CMD | CMD_READONLY, 2, 0, 0, ROUTE_GATHER, "@slow @scripting"},
    {"evalsha_ro", cmd_evalsha_ro, -3, SCRIPT_CMD | CMD_READONLY, 2, 0, 0, ROUTE_GATHER, "@slow @scripting"},
    {"script", cmd_script, -2, CMD_NOSCRIPT | CMD_STALE | CMD_ALLOW_BUSY | CMD_AFTER_PENDING | CMD_SUBCOMMANDS, 0, 0, 0,
     ROUTE_HOME, "@slow"},
};
const size_t command_family_script_count = sizeof command_family_script / sizeof command_family_script[0];

/* SCRIPT's subcommands, as Redis 7.0's table has them (cmd_script runs them all; no SCRIPT DEBUG: percore
 * has no Lua debugger) */
const struct subcommand command_subs_script[] = {
    COMMAND_SUB("script", "exists", cmd_script, -3, CMD_NOSCRIPT, 0, 0, 0, ROUTE_HOME, "@slow @scripting"),
    COMMAND_SUB("script", "flush", cmd_script, -2, CMD_NOSCRIPT, 0, 0, 0, ROUTE_HOME, "@slow @scripting"),
    COMMAND_SUB("script", "help", cmd_script, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, ROUTE_HOME, "@slow @scripting"),
    COMMAND_SUB("script", "kill", cmd_script, 2, CMD_NOSCRIPT | CMD_ALLOW_BUSY, 0, 0, 0, ROUTE_HOME, "@slow @scripting"),
    COMMAND_SUB("script", "load", cmd_script, 3, CMD_NOSCRIPT | CMD_STALE, 0, 0, 0, ROUTE_HOME, "@slow @scripting"),
};
const size_t command_subs_script_count = sizeof command_subs_script / sizeof command_subs_script[0];
