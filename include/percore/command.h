/*
 * command: the command table and the handler interface.
 *
 * A handler runs on the shard that owns the keys it names, against that
 * shard's store, and appends exactly one reply to ctx->out.  It never knows
 * whether it was called inline on the connection's own shard or from a
 * cross-shard batch: the dispatcher (core/dispatch.c) decides where it runs
 * from the command's `route`, and splits multi-key commands into per-shard
 * parts whose replies it merges.  ctx->conn is set only for ROUTE_HOME
 * commands (connection and server state live on the home shard).
 */
#ifndef PERCORE_COMMAND_H
#define PERCORE_COMMAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "percore/config.h"
#include "percore/reply.h"
#include "percore/resp.h"

struct store;
struct conn;
struct config;

/* per-thread counters a handler may bump (the owner shard's) */
struct cmd_stats {
    uint64_t keyspace_hits;
    uint64_t keyspace_misses;
};

/*
 * What a write handler did, for the after-work of call() (core/call.h): the
 * keys it modified (Redis's signalModifiedKey: WATCH, blocked clients) and
 * the keyspace events it caused (notifyKeyspaceEvent).  ctx->effects is NULL
 * when nothing on the shard wants either: then reporting costs one test.
 */
enum cmd_effect_kind {
    CMD_EFFECT_MODIFIED, /* key of db changed */
    CMD_EFFECT_EVENT,    /* keyspace event `event` of class `type` on key of db */
    CMD_EFFECT_READY,    /* key of db may serve its blocked clients, nothing else changed (XGROUP DESTROY) */
};

struct cmd_effect {
    uint8_t kind;        /* enum cmd_effect_kind */
    int type;            /* NOTIFY_* (events) */
    const char *event;   /* the event's name, a string constant (events) */
    int db;
    uint32_t key_off;    /* the key's bytes in cmd_effects.bytes */
    uint32_t key_len;
};

/* databases about to be emptied (db; -1 all) or swapped (db with db2, else -1): called before they change */
typedef void cmd_replacing_fn(void *arg, int db, int db2);

struct cmd_effects {
    unsigned notify;                /* the classes notify-keyspace-events asks for (NOTIFY_*), 0 none */
    int n;                          /* effects recorded, in the order they happened */
    int cap;
    struct cmd_effect *v;
    char *bytes;                    /* the keys' bytes (a key may be gone once the handler returns) */
    size_t len;
    size_t bytes_cap;
    cmd_replacing_fn *replacing;    /* the shard's hook for FLUSHALL FLUSHDB SWAPDB (core) */
    void *replacing_arg;
    bool keys_unwanted;             /* the keys modified are only counted, not recorded (nothing reads them) */
    int changes;                    /* keys modified, databases replaced: 0, the command changed nothing (Redis's
                                     * server.dirty) and is not propagated */
    bool propagating;               /* its writes are propagated (the AOF): rewrites are kept in prop */
    int prop_n;                     /* commands in prop; 0: the command propagates as it was sent */
    struct reply prop;              /* what it propagates instead (cmd_propagate), RESP commands */
};

struct cmd_ctx {
    struct store *store;          /* the owner shard's store */
    struct reply *out;            /* append the reply here */
    const struct resp_arg *argv;  /* argv[0] is the command name as sent */
    int argc;
    int db;                       /* selected database */
    int64_t now;                  /* cached unix time in ms */
    const struct config *config;  /* RCU-protected snapshot, valid for this call */
    struct cmd_stats *stats;      /* the running shard's counters */
    struct conn *conn;            /* home connection (ROUTE_HOME only), else NULL */
    int shard;                    /* index of the running shard */
    struct keylocks *locks;       /* the running shard's key locks (multi-shard transactions) */
    struct watches *watches;      /* the running shard's watched keys (WATCH) */
    uint64_t client;              /* the id of the connection it runs for */
    bool may_block;               /* a blocking command may wait here (it sets `blocked`); else (inside
                                   * MULTI) it answers as if it timed out */
    bool blocked;                 /* set by a blocking command that found nothing and may wait: it wrote
                                   * no reply, the shard keeps the client waiting (core/block.c) */
    struct cmd_effects *effects;  /* where what it did is reported (cmd_modified, cmd_notify), NULL: nowhere */
    long long dirty;              /* the changes it made as Redis's server.dirty counts them (cmd_modified_n):
                                   * INFO rdb_changes_since_last_save, the save points */
    bool replaying;               /* it replays what another server or the AOF ran (a replica's master client,
                                   * the AOF loader's pseudo-client: replica.h's obeyed client), Redis's
                                   * CLIENT_MASTER / CLIENT_ID_AOF: trusted as Redis trusts them (XADD /
                                   * XTRIM's `= <n> LIMIT <m>`) */
};

/* ---- reporting what a write did (command.c) */
void cmd_effect_record(struct cmd_ctx *ctx, int kind, int type, const char *event, int db, const char *key,
                       size_t len);
/* the handler modified key of database db (Redis's signalModifiedKey), n changes to Redis's dirty (elements
 * or fields added, set or removed; 0: the command's change is counted with another key) */
static inline void cmd_modified_in_n(struct cmd_ctx *ctx, int db, const struct resp_arg *key, long long n)
{
    ctx->dirty += n;
    if (__builtin_expect(ctx->effects != NULL, 0))
        cmd_effect_record(ctx, CMD_EFFECT_MODIFIED, 0, NULL, db, key->ptr, key->len);
}
/* the same, one change */
static inline void cmd_modified_in(struct cmd_ctx *ctx, int db, const struct resp_arg *key)
{
    cmd_modified_in_n(ctx, db, key, 1);
}
/* it caused keyspace event `event` (a string constant) of class type on key of db (notifyKeyspaceEvent) */
static inline void cmd_notify_in(struct cmd_ctx *ctx, int type, const char *event, int db, const struct resp_arg *key)
{
    if (__builtin_expect(ctx->effects != NULL, 0) && (ctx->effects->notify & type))
        cmd_effect_record(ctx, CMD_EFFECT_EVENT, type, event, db, key->ptr, key->len);
}
/* key's blocked clients are to look at it again, and nothing else (Redis's signalKeyAsReady alone: WATCH and
 * tracking see nothing) */
static inline void cmd_key_ready(struct cmd_ctx *ctx, const struct resp_arg *key)
{
    if (__builtin_expect(ctx->effects != NULL, 0))
        cmd_effect_record(ctx, CMD_EFFECT_READY, 0, NULL, ctx->db, key->ptr, key->len);
}
/* the same in the selected database */
static inline void cmd_modified(struct cmd_ctx *ctx, const struct resp_arg *key)
{
    cmd_modified_in(ctx, ctx->db, key);
}
static inline void cmd_notify(struct cmd_ctx *ctx, int type, const char *event, const struct resp_arg *key)
{
    cmd_notify_in(ctx, type, event, ctx->db, key);
}
static inline void cmd_modified_n(struct cmd_ctx *ctx, const struct resp_arg *key, long long n)
{
    cmd_modified_in_n(ctx, ctx->db, key, n);
}
/* both, the usual pair after a change */
static inline void cmd_changed(struct cmd_ctx *ctx, int type, const char *event, const struct resp_arg *key)
{
    cmd_modified(ctx, key);
    cmd_notify(ctx, type, event, key);
}
/* the same, n changes */
static inline void cmd_changed_n(struct cmd_ctx *ctx, int type, const char *event, const struct resp_arg *key,
                                 long long n)
{
    cmd_modified_n(ctx, key, n);
    cmd_notify(ctx, type, event, key);
}
/* one change, propagated as sent, that signals no key to WATCH, tracking or blocked clients: the handler
 * changed the server outside the keyspace (FUNCTION LOAD), or made a change Redis does not signal (XSETID) */
static inline void cmd_changed_server(struct cmd_ctx *ctx)
{
    ctx->dirty++;
    if (ctx->effects)
        ctx->effects->changes++;
}
/* the handler is about to empty db (-1: every db), or swap it with db2 (else -1): FLUSHALL FLUSHDB SWAPDB */
static inline void cmd_replacing_databases(struct cmd_ctx *ctx, int db, int db2)
{
    if (ctx->effects) {
        ctx->effects->changes++;
        if (ctx->effects->replacing)
            ctx->effects->replacing(ctx->effects->replacing_arg, db, db2);
    }
}
/*
 * Propagation (the AOF, later replication): a write is logged as it was sent
 * unless its handler says otherwise, as Redis's rewriteClientCommandVector
 * and alsoPropagate do -- a relative expiry made absolute, a random pop made
 * the SREM of what it popped.  cmd_propagating says whether anyone listens
 * (build the arguments only then); each cmd_propagate call adds one command,
 * in ctx->db, in place of the handler's argv.
 */
static inline bool cmd_propagating(const struct cmd_ctx *ctx)
{
    return ctx->effects && ctx->effects->propagating;
}
void cmd_propagate(struct cmd_ctx *ctx, int argc, const struct resp_arg *argv);
/* key's value o as what any Redis replays: RESTORE key ms payload REPLACE ABSTTL (ms: expire, 0 when
 * negative: no TTL); nothing when o is NULL.  A value another shard's command wrote here (RENAME's or a
 * gather's write-back), or one whose command would not replay the same (SORT ... STORE) */
struct object;
void cmd_propagate_restore(struct cmd_ctx *ctx, const struct resp_arg *key, const struct object *o, long long expire);
/* NAME key, or NAME key ms when ms is not NULL (PEXPIREAT key ms, DEL key, PERSIST key) */
void cmd_propagate_key(struct cmd_ctx *ctx, const char *name, const struct resp_arg *key, const long long *ms);

typedef void cmd_handler(struct cmd_ctx *ctx);
/* what FLUSHALL's part does once its store is empty (core's save: Redis's flushAllDataAndResetRDB);
 * set once before any shard runs, NULL: nothing (keys.c) */
void cmd_on_flushall(cmd_handler *after);

/* flags, as COMMAND INFO names them */
enum {
    CMD_WRITE = 1u << 0,
    CMD_READONLY = 1u << 1,
    CMD_DENYOOM = 1u << 2,
    CMD_ADMIN = 1u << 3,
    CMD_PUBSUB = 1u << 4,
    CMD_NOSCRIPT = 1u << 5,
    CMD_BLOCKING = 1u << 6,
    CMD_LOADING = 1u << 7,
    CMD_STALE = 1u << 8,
    CMD_FAST = 1u << 9,
    CMD_NO_AUTH = 1u << 10,
    CMD_INTERNAL = 1u << 11, /* not callable by clients (cross-shard helpers) */
    CMD_ANY_DB = 1u << 12,   /* may change a database other than the selected one (MOVE) */
    /*
     * The keys are counted by a numkeys argument at position first_key: they
     * are argv[first_key+1 .. first_key+numkeys], plus any arguments before
     * it from argv[1] (the destination of ZUNIONSTORE and friends).
     */
    CMD_NUMKEYS = 1u << 13,
    CMD_NO_QUEUE = 1u << 14, /* runs at once between MULTI and EXEC (EXEC DISCARD MULTI WATCH QUIT RESET) */
    CMD_NO_MULTI = 1u << 15, /* refused between MULTI and EXEC (SHUTDOWN) */
    CMD_FEEDS_MONITOR = 1u << 16, /* shows itself to MONITOR once its work is done (EXEC: after its commands) */
    CMD_MAY_REPLICATE = 1u << 17, /* neither reads nor writes keys but is propagated (PUBLISH), as Redis's flag;
                                   * CLIENT PAUSE WRITE holds it as a write */
    CMD_SKIP_SLOWLOG = 1u << 18, /* never in the slowlog (EXEC: the commands it runs are) */
    CMD_RUNS_QUEUE = 1u << 19,   /* runs what MULTI queued (EXEC): CLIENT PAUSE WRITE holds it when that writes,
                                  * and refused it discards the transaction (EXECABORT) */
    CMD_SELECTS_DB = 1u << 20,   /* makes argv[1] the connection's database (SELECT): MULTI's later keys are in it */
    CMD_NO_CLUSTER = 1u << 21,   /* refused on a cluster port, Redis Cluster having db 0 only (SWAPDB MOVE; SELECT
                                  * of another db than 0) */
    CMD_REDACTS = 1u << 22,      /* some arguments are secrets (AUTH HELLO CONFIG SET): SLOWLOG and MONITOR show
                                  * them as "(redacted)" (slowlog.h's redactor says which) */
    /* blocking commands' shapes (CMD_BLOCKING; core/block.c): which keys, where the timeout is, how a pop is undone */
    CMD_BLOCK_MOVE = 1u << 23,   /* pops argv[1], pushes to argv[2] (BLMOVE BRPOPLPUSH) */
    CMD_BLOCK_LEFT = 1u << 24,   /* pops from the head (BLPOP); BLMPOP's direction is its argument */
    CMD_BLOCK_ZSET = 1u << 25,   /* pops from sorted sets: undone by ZADD (BZPOPMIN BZPOPMAX BZMPOP) */
    CMD_SUBSCRIBER_OK = 1u << 26, /* allowed to a RESP2 subscriber ((P)SUBSCRIBE (P)UNSUBSCRIBE PING QUIT RESET) */
    CMD_KEEPS_CACHING = 1u << 27, /* the command after CLIENT CACHING yes|no that keeps it for the next one
                                   * (every CLIENT subcommand, as Redis's resetClient) */
    CMD_LOCKS_ALL = 1u << 28,     /* ROUTE_FANOUT_OK without writing keys: its parts still run under every
                                   * shard's keyspace lock, in turn (SAVE BGSAVE: the snapshots are one cut);
                                   * a part that changes something is propagated alone (__function) */
    CMD_REPLIES_AFTER_SAVE = 1ull << 46, /* ROUTE_FANOUT_OK whose reply, its parts done and its locks freed, waits
                                        * for the save they began (SAVE; save.h) */
    CMD_DENIED_ON_DISK_ERROR = 1u << 30, /* not a write, yet refused with -MISCONF as writes are (PING, as Redis
                                          * 7.0's processCommand) */
    CMD_HOME_IN_EXEC = 1u << 31,  /* inside EXEC, runs once on its home, seeing the connection, instead of its
                                   * route (BGSAVE: Redis schedules it there) */
    CMD_OPENS_TXN = 1ull << 32,   /* starts a transaction (MULTI): an AOF being loaded that ends inside one
                                   * drops it (load.c) */
    CMD_NUMKEYS_ZERO_OK = 1ull << 33, /* CMD_NUMKEYS whose arguments before numkeys are no keys and whose
                                     * numkeys may be 0 (EVAL EVALSHA: the script, then numkeys) */
    CMD_MONITOR_FIRST = 1ull << 35, /* MONITOR shows it before the commands it runs (EVAL: Redis 7.0 feeds a
                                     * script's line, then its redis.call lines as "[db lua]") */
    CMD_AFTER_PENDING = 1ull << 36, /* runs on its home once the connection's earlier commands are done: what
                                     * other shards' commands depend on (FUNCTION, SCRIPT: an FCALL or EVALSHA
                                     * pipelined before it and sent to another shard must not meet the library
                                     * or script it deletes) */
    CMD_SHARD_CHANNELS = 1ull << 39, /* its arguments (SPUBLISH: argv[1] alone) are shard channels: no keys,
                                      * but on a cluster port they must be of one slot, this shard's, as
                                      * Redis Cluster checks them (SSUBSCRIBE SUNSUBSCRIBE SPUBLISH) */
    CMD_WHOLE_IN_EXEC = 1ull << 37, /* inside MULTI, the transaction locks every shard's whole keyspace: its
                                     * changes are keyspace-wide parts (FUNCTION LOAD, conn_fanout_locked) */
    CMD_KEYS_STREAMS = 1ull << 38, /* the keys are the first half of the arguments after the first STREAMS
                                    * (XREAD XREADGROUP), as Redis's key spec for them */
    CMD_STORE_KEY = 1ull << 40,   /* its keys: argv[1] and the arguments after STORE and STOREDIST options
                                   * (GEORADIUS GEORADIUSBYMEMBER; command_key_positions says which) */
    CMD_SORT_STORE_KEY = 1ull << 41, /* besides argv[1], the argument after its last STORE option is a key (SORT:
                                   * its other options skipped as Redis's sortGetKeys skips them) */
    CMD_PATTERN_KEYS = 1ull << 42, /* reads keys its patterns form from its key's value (SORT's BY and GET):
                                    * where they may be on other shards, it runs with every shard's keyspace
                                    * locked, on copies of every key it reads (cmd_sort_pattern_keys) */
    CMD_ALLOW_BUSY = 1ull << 34,  /* runs while a script is busy (Redis's allow-busy), its handler alone, outside
                                   * call(): SCRIPT (its KILL), SHUTDOWN (with NOSAVE), QUIT, MULTI; the
                                   * handler refuses the rest with -BUSY; AUTH HELLO (the connection alone);
                                   * WATCH UNWATCH DISCARD RESET (with CMD_BUSY_WATCHES) */
    CMD_ENDS_TXN = 1ull << 44,    /* ends the transaction or the connection (EXEC DISCARD QUIT RESET): inside
                                   * MULTI past maxmemory it is not refused as the rest is (EXEC only when a
                                   * deny-oom command is queued), as Redis's processCommand */
    CMD_SUBCOMMANDS = 1u << 29,   /* a container whose one handler serves its subcommands (OBJECT MEMORY XGROUP
                                   * XINFO FUNCTION SCRIPT): found by the dispatcher as Redis's lookupCommand
                                   * finds them, refused there when unknown, counted as "object|encoding";
                                   * below bit 31, so that the dispatcher tests it with CMD_BLOCKING in one
                                   * instruction (CMD_REPLIES_AFTER_SAVE, tested only in fan-outs, moved up) */
    CMD_PROTECTED = 1ull << 47,   /* allowed only as enable-debug-command says (DEBUG): refused, and counted
                                   * as a rejected call, before it is queued or run (conn_protected_refusal) */
    CMD_BUSY_WATCHES = 1ull << 43, /* allow-busy, but it adds or drops the connection's watches, on their keys'
                                    * owners: the global-lock build runs it while busy only on the script's
                                    * thread, and refuses it -BUSY on the others (it would wait there for the
                                    * store lock the script holds) */
};

/* where a command runs (see dispatch.c) */
enum cmd_route {
    ROUTE_HOME = 0,    /* no keys: runs on the connection's shard, ctx->conn set */
    ROUTE_OWNER,       /* all keys on one shard: runs there (inline when that is home) */
    ROUTE_SPLIT_SUM,   /* keys split by shard; integer replies summed (DEL EXISTS UNLINK TOUCH) */
    ROUTE_SPLIT_MGET,  /* keys split by shard; array replies put back in key order (MGET) */
    ROUTE_SPLIT_OK,    /* key/value pairs split by shard; +OK (MSET) */
    ROUTE_FANOUT_SUM,  /* every shard runs it; integers summed (DBSIZE) */
    ROUTE_FANOUT_OK,   /* every shard runs it; +OK or the first error (FLUSHALL FLUSHDB SWAPDB) */
    ROUTE_FANOUT_CONCAT, /* every shard runs it; arrays concatenated (KEYS) */
    /* the dispatcher drives these step by step (dispatch.c's run_special) */
    ROUTE_SCAN,        /* SCAN: shard by shard, the cursor's high bits naming the shard */
    ROUTE_RANDOMKEY,   /* RANDOMKEY: a random shard's part */
    ROUTE_RENAME,      /* RENAME, RENAMENX (ROUTE_RENAMENX): the key taken from its owner, put at the other's */
    ROUTE_RENAMENX,
    ROUTE_COPY,        /* COPY: the source dumped at its owner, put at the destination's (NX unless REPLACE) */
    ROUTE_MSETNX,      /* MSETNX: every key checked on its owner, then all set or none */
    /*
     * Keys on one shard: as ROUTE_OWNER.  Keys on several: the dispatcher
     * copies them into a scratch store on the home shard, runs the handler
     * there, and writes every key it changed back to its owner (SMOVE,
     * SINTERSTORE, ZUNIONSTORE, LMOVE, ...).
     */
    ROUTE_GATHER,
};

/* does the dispatcher drive it step by step (ROUTE_SCAN .. ROUTE_MSETNX)? */
static inline bool cmd_route_stepped(enum cmd_route route)
{
    return route >= ROUTE_SCAN && route <= ROUTE_MSETNX;
}

struct command {
    const char *name;   /* lower case */
    cmd_handler *proc;
    int arity;          /* Redis's convention: -N means at least N */
    uint64_t flags;     /* CMD_* */
    int first_key;      /* 0: no keys */
    int last_key;       /* negative: counts from the end (-1 = last argument) */
    int key_step;
    enum cmd_route route;
    const char *categories; /* ACL categories, space separated, e.g. "@read @string @fast" */
};

/* Redis's getTimeoutFromObjectOrReply in seconds: *ms (0: forever); false and *err (when not NULL) set */
bool cmd_parse_block_timeout(const struct resp_arg *a, long long *ms, const char **err);
/* the timeout argument of a blocking command, or its error replied */
bool cmd_block_timeout_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a);
/* nothing to pop: ctx->blocked (no reply), or (may not block) the timeout reply: nil, bulk or array */
void cmd_block_or_nil(struct cmd_ctx *ctx, bool bulk);

/*
 * COPY's options after its two keys (keys.c): *dst_db (db when DB is absent)
 * and *replace; NULL, or Redis's error text when they are wrong.  Shared by
 * the handler and the dispatcher's cross-shard steps.  Any thread.
 */
const char *cmd_copy_options(int argc, const struct resp_arg *argv, int db, int databases, int *dst_db,
                             bool *replace);

/* a key's bytes, handed to a caller's function */
typedef void cmd_key_fn(void *arg, const char *key, size_t len);
/*
 * SORT's patterns that form keys (BY and GET patterns with a `*`; not `#`)
 * (sort.c), for the dispatcher: cmd_sort_pattern_slots gives how many, and
 * for each the slot of every key it forms when a {hash tag} closes before
 * its `*`, else -1 (the slot depends on the element); slots has room for
 * argc.  cmd_sort_pattern_keys calls fn with every key they form for the
 * elements of sorted (a copy the caller owns; any type).  Any thread.
 */
int cmd_sort_pattern_slots(int argc, const struct resp_arg *argv, int *slots);
struct object;
void cmd_sort_pattern_keys(int argc, const struct resp_arg *argv, struct object *sorted, cmd_key_fn *fn,
                           void *arg);

/* ---- helpers for handlers (command.c) */
struct object;
/* look a key up to read it: counts a keyspace hit or miss (Redis's lookupKeyRead) */
struct object *cmd_lookup_read(struct cmd_ctx *ctx, const struct resp_arg *key);
/* the same, not counted as an access: no LRU/LFU update (LOOKUP_NOTOUCH: EXISTS, TYPE, TTL) */
const struct object *cmd_lookup_read_notouch(struct cmd_ctx *ctx, const struct resp_arg *key);
/* Redis addReplyHelp: "ARGV0 <subcommand> ...", the lines of help (NULL-ended), then HELP's own */
void cmd_reply_help(struct cmd_ctx *ctx, const char *const *help);
/* "ERR unknown subcommand 'x'. Try OBJECT HELP.": argv[1], and argv[0] upper-cased, as Redis prints them */
void cmd_reply_unknown_subcommand(struct reply *out, const struct resp_arg *argv);
/* look a key up to change it: no hit/miss counted (lookupKeyWrite) */
struct object *cmd_lookup_write(struct cmd_ctx *ctx, const struct resp_arg *key);
/*
 * The same for a value that must be of `type` (an enum object_type): NULL
 * when the key is missing, or (*wrongtype set, WRONGTYPE replied) when it
 * holds another type.
 */
struct object *cmd_lookup_typed(struct cmd_ctx *ctx, const struct resp_arg *key, int type, bool write,
                                bool *wrongtype);
/* an option word, compared as Redis does: case-insensitive, up to the first NUL */
bool cmd_arg_is(const struct resp_arg *a, const char *name);
/* parse a long long or reply "value is not an integer or out of range" */
bool cmd_get_ll_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, long long *v);
/* Redis getDoubleFromObjectOrReply: a double, else msg ("ERR value is not a valid float" when NULL) */
bool cmd_get_double_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, double *v, const char *msg);
/*
 * Redis getRangeLongFromObjectOrReply: a long long in [min, max], else
 * "value is not an integer or out of range" / "value is out of range,
 * value must between min and max"; msg (when not NULL) replaces both.
 */
bool cmd_get_range_ll_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, long long min,
                               long long max, long long *v, const char *msg);
/* Redis getPositiveLongFromObjectOrReply: [0, LONG_MAX], msg as above
 * ("value is out of range, must be positive" when NULL) */
bool cmd_get_positive_ll_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, long long *v,
                                  const char *msg);

/*
 * A reply whose size the client picks with a count, not bounded by the data
 * (SRANDMEMBER, HRANDFIELD, ZRANDMEMBER with a negative count: members
 * repeat, so -1000000000000 asks for 10^12 of them).  The handler notes
 * start = ctx->out->len before the reply and calls this after each element:
 * false means stop now, the cap (command.c) was passed and dealt with.
 */
bool cmd_reply_under_cap_or_reply(struct cmd_ctx *ctx, size_t start);

/* ---- SCAN SSCAN HSCAN ZSCAN (command.c) */

/* the options after a scan's cursor, as Redis's scanGenericCommand reads them */
struct scan_options {
    long long count;     /* COUNT, 10 when absent; always >= 1 */
    const char *pattern; /* MATCH pattern, not NUL-terminated; NULL when absent or "*" */
    size_t plen;         /* bytes in pattern */
    const char *type;    /* TYPE (SCAN only), not NUL-terminated; NULL when absent */
    size_t tlen;         /* bytes in type, up to its first NUL */
};

/*
 * Parse a scan cursor as Redis's parseScanCursorOrReply does (strtoul over
 * the argument as a C string, so a sign is accepted and "-1" wraps).
 * cmd_scan_cursor_parse only parses; the _or_reply form sends
 * "ERR invalid cursor" when it fails.  Any thread.
 */
bool cmd_scan_cursor_parse(const struct resp_arg *a, uint64_t *cursor);
bool cmd_scan_cursor_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, uint64_t *cursor);
/*
 * Parse COUNT n / MATCH p / TYPE t (TYPE only when allow_type) from
 * argv[first] on into *o, which points into ctx->argv.  A bad option,
 * COUNT < 1 or a missing value sends a syntax error, a non-integer COUNT
 * "value is not an integer", and returns false.
 */
bool cmd_scan_options_or_reply(struct cmd_ctx *ctx, int first, bool allow_type,
                               struct scan_options *o);
/* does an element of n bytes pass o's MATCH filter (always, without one) */
bool cmd_scan_match(const struct scan_options *o, const char *p, size_t n);
/*
 * The scan reply: [cursor, [n elements]], the elements already encoded in
 * items (NULL when n is 0).  items stays the caller's.
 */
void cmd_scan_reply(struct cmd_ctx *ctx, uint64_t cursor, long long n, const struct reply *items);

/*
 * The argv positions of a command's keys, into pos[] (room for argc
 * entries): first/last/step, or the CMD_NUMKEYS, CMD_KEYS_STREAMS, CMD_STORE_KEY or
 * CMD_SORT_STORE_KEY form.  Returns how many, or -1 when a numkeys argument (or XREAD's STREAMS list)
 * is not usable (the handler says why).
 */
int command_key_positions(const struct command *cmd, int argc, const struct resp_arg *argv, int *pos);

/*
 * The table is assembled at setup, before the shards run, from each layer's
 * families: command_setup() registers the data-type families (cmd/), the
 * admin layer's admin_setup() its own (admin.h).  Read-only afterwards.
 */
void command_setup(void);
/* add a family's commands (n of them; internal ones are skipped) to the lookup */
void command_register(const struct command *family, size_t n);
/* case-insensitive; NULL when unknown (internal commands are never found) */
const struct command *command_lookup(const char *name, size_t len);

/*
 * A container's subcommand (CONFIG GET, CLIENT LIST, OBJECT ENCODING ...): cmd.name is the full name
 * "parent|sub", with Redis 7.0's arity, flags (what COMMAND INFO names) and key positions for it, which
 * Redis's lookupCommand checks (MULTI queueing, -LOADING, scripts, -OOM, COMMAND LIST / GETKEYS).  The
 * container's own entry still routes the command; cmd.proc is the subcommand's handler, or the
 * container's where that handler parses the subcommand itself (OBJECT, XGROUP, FUNCTION ...).
 */
struct subcommand {
    const char *parent;       /* the container's name */
    const char *sub;          /* the subcommand, lower case */
    struct command cmd;
};
/* one entry of a subcommand table (gen_command_meta.py finds the names by this macro's name) */
#define COMMAND_SUB(parent_, sub_, proc_, arity_, flags_, first_, last_, step_, route_, cats_) \
    {parent_, sub_, {parent_ "|" sub_, proc_, arity_, flags_, first_, last_, step_, route_, cats_}}
/* a table of containers' subcommands, each container's contiguous in one table (command_setup's and
 * admin_setup's); setup only */
void command_register_subcommands(const struct subcommand *table, size_t n);
/* parent's subcommand named sub (case-insensitive), NULL none */
const struct subcommand *command_subcommand_find(const char *parent, const char *sub, size_t len);
/* how many subcommands parent has, *first the first of them (NULL: none, parent is no container) */
size_t command_subcommands_of(const char *parent, const struct subcommand **first);
/* Redis's lookupCommand refusals of a container's argv, written to out: an unknown subcommand, or the wrong
 * arity for it.  *found: the subcommand (NULL: unknown).  True when argv may run */
bool command_subcommand_or_reply(const char *parent, int argc, const struct resp_arg *argv, struct reply *out,
                                 const struct subcommand **found);
/* a container's argv names a subcommand it has, with its arity: true (and true for any other
 * command); else false with Redis's error written to out, as lookupCommand refuses it */
bool command_subcommand_ok_or_reply(const struct command *cmd, int argc, const struct resp_arg *argv,
                                    struct reply *out);
/*
 * What Redis's lookupCommand finds for argv: cmd itself when it is not a
 * container; a container's subcommand named by argv[1] when its arity fits
 * argc; NULL when there is no such subcommand or its arity does not fit (the
 * container's handler then answers Redis's error).
 */
const struct command *command_resolve_subcommand(const struct command *cmd, int argc, const struct resp_arg *argv);
/* does MONITOR show this call?  Not for admin commands or subcommands (CONFIG SET, CLIENT LIST ...), as Redis */
bool command_monitored(const struct command *cmd, int argc, const struct resp_arg *argv);
/* the internal commands (cmd/internal.c), for the core's cross-shard steps: objects, never looked up by name */
enum command_internal_id {
    CMD_I_TAKE,
    CMD_I_PUT,
    CMD_I_DUMP,
    CMD_I_LOCK,
    CMD_I_UNLOCK,
    CMD_I_WATCH,
    CMD_I_UNWATCH,
    CMD_I_WATCHCHECK,
    CMD_I_RANDOMKEY,
    CMD_I_COUNT
};
extern const struct command command_internal_table[CMD_I_COUNT];
static inline const struct command *command_internal(enum command_internal_id id)
{
    return &command_internal_table[id];
}
/* the data commands the core runs as steps of others (RENAME's and MSETNX's TOUCH, MSETNX's MSET, a
 * blocking command's pop on one shard and the push that undoes it): objects, resolved by command_setup */
enum command_step_id {
    CMD_S_TOUCH,
    CMD_S_MSET,
    CMD_S_LPOP,
    CMD_S_RPOP,
    CMD_S_LPUSH,
    CMD_S_RPUSH,
    CMD_S_ZADD,
    CMD_S_COUNT
};
const struct command *command_step(enum command_step_id id);
/* a command's name as an argv[0], for a step the core builds */
struct resp_arg command_name_arg(const struct command *cmd);
/* iterate the public table (COMMAND, COMMAND COUNT/INFO/DOCS) */
size_t command_count(void);
const struct command *command_at(size_t i);

#endif
