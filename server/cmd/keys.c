/*
 * keys: the generic keyspace commands (Redis's db.c and expire.c): DEL,
 * EXISTS, TYPE, the EXPIRE/TTL family, KEYS, SCAN, RANDOMKEY, RENAME, MOVE, COPY,
 * DBSIZE, FLUSHDB/FLUSHALL, SWAPDB, OBJECT, and DUMP/RESTORE (Redis's
 * cluster.c), whose payload is Redis's RDB value format (store/rdb.c).
 *
 * Design: each handler follows its Redis 7.0 counterpart in the order of its
 * checks, so the same input gets the same error.  Reads count keyspace
 * hits/misses like Redis's lookupKeyRead (EXISTS, TYPE, TTL, TOUCH, OBJECT,
 * SCAN's TYPE filter); writes do not.
 *
 * Threading and routing: a handler runs on the shard thread that owns its
 * keys and sees only that shard's store (ARCHITECTURE.md rule 1).  Keyspace-wide
 * commands are answered for this one store and merged by the dispatcher:
 * KEYS returns this store's matches (ROUTE_FANOUT_CONCAT), DBSIZE its count
 * (ROUTE_FANOUT_SUM), FLUSHDB, FLUSHALL and SWAPDB act on it (ROUTE_FANOUT_OK).  SCAN reads
 * a shard-local cursor (the dispatcher rewrote argv[1]) and replies with the
 * next shard-local cursor.  RENAME/RENAMENX handle both keys in this store;
 * the cross-shard case is the dispatcher's (internal.c's __take/__put).
 * COPY copies a value through its serialized form (object_serialize), so
 * every type, and any added later through object_type_ops, is copied with its
 * encoding; across shards the dispatcher runs it as RENAME's steps
 * (ROUTE_COPY: __dump at the source's owner, __put "copy_to" at the
 * destination's, in the destination database, NX unless REPLACE), with
 * cmd_copy_options reading the options for both.  Run on copies (a script
 * whose keys span shards, whose changed keys go back in its own database
 * only), COPY ... DB into another database answers an error rather than
 * lose the copy.
 *
 * Effects: a write reports what it did where Redis 7.0's db.c and expire.c
 * do, in the same order: the keys it modified (signalModifiedKey) and its
 * events ("del", "expire", "persist", "rename_from"/"rename_to", "move_from"/
 * "move_to", "copy_to", and dbAdd's "new" for the key a RENAME, MOVE or COPY creates), only
 * when something changed; RESTORE reports dbAdd's "new" then "restore" (or,
 * when its absolute TTL is already past and REPLACE deleted the key, "del"
 * only).  FLUSHDB, FLUSHALL and SWAPDB send no events; they
 * say which databases they are about to replace (cmd_replacing_databases).
 * FLUSHALL's part, its store empty, calls the hook core sets (cmd_on_flushall:
 * with save points, the file rewritten, as Redis's flushAllDataAndResetRDB).
 *
 * Each handler appends exactly one reply to ctx->out.
 */
#include "families.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/rdb.h"
#include "percore/reply.h"
#include "percore/store.h"
#include "percore/util.h"

#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { UNIT_SECONDS = 0, UNIT_MILLISECONDS = 1 };

enum {
    EXPIRE_NX = 1 << 0,
    EXPIRE_XX = 1 << 1,
    EXPIRE_GT = 1 << 2,
    EXPIRE_LT = 1 << 3,
};

/* ---- helpers ------------------------------------------------------------- */

/* Redis compares options as C strings: the argument up to its first NUL */
static size_t cstr_len(const struct resp_arg *a)
{
    return strnlen(a->ptr, a->len);
}

/* Redis getIntFromObjectOrReply: msg (when not NULL) replaces both errors */
static bool get_int_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, int *v,
                             const char *msg)
{
    long long ll;
    if (!cmd_get_range_ll_or_reply(ctx, a, INT_MIN, INT_MAX, &ll, msg))
        return false;
    *v = (int)ll;
    return true;
}

static bool same_bytes(const struct resp_arg *a, const struct resp_arg *b)
{
    return a->len == b->len && memcmp(a->ptr, b->ptr, a->len) == 0;
}

/* ---- DEL UNLINK EXISTS TOUCH TYPE ------------------------------------------ */

static void cmd_del(struct cmd_ctx *ctx)
{
    long long n = 0;
    for (int j = 1; j < ctx->argc; j++) {
        if (store_delete(ctx->store, ctx->db, ctx->argv[j].ptr, ctx->argv[j].len, ctx->now)) {
            cmd_changed(ctx, NOTIFY_GENERIC, "del", &ctx->argv[j]);
            n++;
        }
    }
    reply_int(ctx->out, n);
}

/* EXISTS looks without touching (Redis's LOOKUP_NOTOUCH); TOUCH is an access: OBJECT IDLETIME
 * starts again from 0, the LFU counter counts it */
static void exists_generic(struct cmd_ctx *ctx, bool touch)
{
    long long n = 0;
    for (int j = 1; j < ctx->argc; j++)
        if ((touch ? cmd_lookup_read(ctx, &ctx->argv[j]) : cmd_lookup_read_notouch(ctx, &ctx->argv[j])) != NULL)
            n++;
    reply_int(ctx->out, n);
}

static void cmd_exists(struct cmd_ctx *ctx)
{
    exists_generic(ctx, false);
}

static void cmd_touch(struct cmd_ctx *ctx)
{
    exists_generic(ctx, true);
}

static void cmd_type(struct cmd_ctx *ctx)
{
    const struct object *o = cmd_lookup_read_notouch(ctx, &ctx->argv[1]);
    reply_simple(ctx->out, o ? object_type_name(o) : "none");
}

/* ---- EXPIRE family --------------------------------------------------------- */

/* Redis parseExtendedExpireArgumentsOrReply */
static bool parse_expire_flags_or_reply(struct cmd_ctx *ctx, int *flags)
{
    bool nx = false, xx = false, gt = false, lt = false;

    for (int j = 3; j < ctx->argc; j++) {
        const struct resp_arg *opt = &ctx->argv[j];
        if (cmd_arg_is(opt, "nx")) {
            *flags |= EXPIRE_NX;
            nx = true;
        } else if (cmd_arg_is(opt, "xx")) {
            *flags |= EXPIRE_XX;
            xx = true;
        } else if (cmd_arg_is(opt, "gt")) {
            *flags |= EXPIRE_GT;
            gt = true;
        } else if (cmd_arg_is(opt, "lt")) {
            *flags |= EXPIRE_LT;
            lt = true;
        } else {
            reply_errorf(ctx->out, "ERR Unsupported option %.*s", (int)cstr_len(opt), opt->ptr);
            return false;
        }
    }
    if ((nx && xx) || (nx && gt) || (nx && lt)) {
        reply_error(ctx->out, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return false;
    }
    if (gt && lt) {
        reply_error(ctx->out, "ERR GT and LT options at the same time are not compatible");
        return false;
    }
    return true;
}

/* Redis expireGenericCommand; basetime is ctx->now for the relative forms */
static void expire_generic(struct cmd_ctx *ctx, long long basetime, int unit, const char *cmd)
{
    const struct resp_arg *key = &ctx->argv[1];
    long long when;
    int flags = 0;

    if (!parse_expire_flags_or_reply(ctx, &flags))
        return;
    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &when))
        return;

    /* negative values are allowed, overflows are not */
    if (unit == UNIT_SECONDS) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) {
            reply_errorf(ctx->out, "ERR invalid expire time in '%s' command", cmd);
            return;
        }
        when *= 1000;
    }
    if (when > LLONG_MAX - basetime) {
        reply_errorf(ctx->out, "ERR invalid expire time in '%s' command", cmd);
        return;
    }
    when += basetime;

    if (cmd_lookup_write(ctx, key) == NULL) {
        reply_int(ctx->out, 0);
        return;
    }

    if (flags) {
        long long current = store_get_expire(ctx->store, ctx->db, key->ptr, key->len, ctx->now);
        if ((flags & EXPIRE_NX) && current != -1) {
            reply_int(ctx->out, 0);
            return;
        }
        if ((flags & EXPIRE_XX) && current == -1) {
            reply_int(ctx->out, 0);
            return;
        }
        /* no TTL counts as infinite: GT always fails, LT always succeeds */
        if ((flags & EXPIRE_GT) && (when <= current || current == -1)) {
            reply_int(ctx->out, 0);
            return;
        }
        if ((flags & EXPIRE_LT) && current != -1 && when >= current) {
            reply_int(ctx->out, 0);
            return;
        }
    }

    if (when <= ctx->now) {
        /* an expire in the past deletes the key */
        store_delete(ctx->store, ctx->db, key->ptr, key->len, ctx->now);
        cmd_changed(ctx, NOTIFY_GENERIC, "del", key);
        if (cmd_propagating(ctx)) /* propagated as the DEL it was */
            cmd_propagate_key(ctx, "DEL", key, NULL);
    } else {
        store_set_expire(ctx->store, ctx->db, key->ptr, key->len, when, ctx->now);
        cmd_changed(ctx, NOTIFY_GENERIC, "expire", key);
        if (cmd_propagating(ctx)) { /* as PEXPIREAT key ms, its flags kept (Redis 7.0) */
            char num[24];
            struct resp_arg a[8] = {{"PEXPIREAT", 9}, *key, {num, (size_t)snprintf(num, sizeof num, "%lld", when)}};
            int n = 3;
            for (int i = 3; i < ctx->argc && n < 8; i++)
                a[n++] = ctx->argv[i];
            cmd_propagate(ctx, n, a);
        }
    }
    reply_int(ctx->out, 1);
}

static void cmd_expire(struct cmd_ctx *ctx)
{
    expire_generic(ctx, ctx->now, UNIT_SECONDS, "expire");
}

static void cmd_pexpire(struct cmd_ctx *ctx)
{
    expire_generic(ctx, ctx->now, UNIT_MILLISECONDS, "pexpire");
}

static void cmd_expireat(struct cmd_ctx *ctx)
{
    expire_generic(ctx, 0, UNIT_SECONDS, "expireat");
}

static void cmd_pexpireat(struct cmd_ctx *ctx)
{
    expire_generic(ctx, 0, UNIT_MILLISECONDS, "pexpireat");
}

/* Redis ttlGenericCommand */
static void ttl_generic(struct cmd_ctx *ctx, bool output_ms, bool output_abs)
{
    const struct resp_arg *key = &ctx->argv[1];
    long long expire, ttl = -1;

    if (cmd_lookup_read_notouch(ctx, key) == NULL) {
        reply_int(ctx->out, -2);
        return;
    }
    expire = store_get_expire(ctx->store, ctx->db, key->ptr, key->len, ctx->now);
    if (expire != -1) {
        ttl = output_abs ? expire : expire - ctx->now;
        if (ttl < 0)
            ttl = 0;
    }
    if (ttl == -1)
        reply_int(ctx->out, -1);
    else
        reply_int(ctx->out, output_ms ? ttl : ((ttl + 500) / 1000));
}

static void cmd_ttl(struct cmd_ctx *ctx)
{
    ttl_generic(ctx, false, false);
}

static void cmd_pttl(struct cmd_ctx *ctx)
{
    ttl_generic(ctx, true, false);
}

static void cmd_expiretime(struct cmd_ctx *ctx)
{
    ttl_generic(ctx, false, true);
}

static void cmd_pexpiretime(struct cmd_ctx *ctx)
{
    ttl_generic(ctx, true, true);
}

static void cmd_persist(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    if (cmd_lookup_write(ctx, key) == NULL || !store_persist(ctx->store, ctx->db, key->ptr, key->len, ctx->now)) {
        reply_int(ctx->out, 0);
        return;
    }
    cmd_changed(ctx, NOTIFY_GENERIC, "persist", key);
    reply_int(ctx->out, 1);
}

/* ---- KEYS SCAN RANDOMKEY ------------------------------------------------------ */

/*
 * Keys are encoded into a scratch reply while the store is walked (the array
 * length is known only at the end), then copied behind the array header.  No
 * pointer into the store is kept across store calls.
 */
struct key_collect {
    struct reply buf;        /* bulk replies of the keys kept */
    long long kept;          /* keys in buf */
    long long seen;          /* keys visited (SCAN's COUNT budget) */
    struct scan_options so;  /* the MATCH and TYPE filters (KEYS: its pattern only) */
    struct cmd_stats *stats; /* SCAN's TYPE filter counts a hit per key checked */
};

static void collect_key(void *arg, const char *key, size_t klen, struct object *val)
{
    struct key_collect *kc = arg;

    kc->seen++;
    if (!cmd_scan_match(&kc->so, key, klen))
        return;
    if (kc->so.type) {
        if (kc->stats)
            kc->stats->keyspace_hits++;
        if (!util_eq_nocase(kc->so.type, kc->so.tlen, object_type_name(val)))
            return;
    }
    reply_bulk(&kc->buf, key, klen);
    kc->kept++;
}

static void cmd_keys(struct cmd_ctx *ctx)
{
    const struct resp_arg *pat = &ctx->argv[1];
    struct key_collect kc;
    uint64_t cursor = 0;

    memset(&kc, 0, sizeof(kc));
    reply_init(&kc.buf);
    kc.buf.resp = ctx->out->resp;
    if (!(pat->len == 1 && pat->ptr[0] == '*')) {
        kc.so.pattern = pat->ptr;
        kc.so.plen = pat->len;
    }
    do {
        cursor = store_scan(ctx->store, ctx->db, cursor, 1024, ctx->now, collect_key, &kc);
    } while (cursor != 0);

    reply_array(ctx->out, kc.kept);
    if (kc.buf.len)
        reply_raw(ctx->out, kc.buf.buf, kc.buf.len);
    reply_deinit(&kc.buf);
}

static void cmd_scan(struct cmd_ctx *ctx)
{
    struct key_collect kc;
    uint64_t cursor;
    long long maxiter;

    if (!cmd_scan_cursor_or_reply(ctx, &ctx->argv[1], &cursor))
        return;
    memset(&kc, 0, sizeof(kc));
    if (!cmd_scan_options_or_reply(ctx, 2, true, &kc.so))
        return;
    kc.stats = ctx->stats;
    reply_init(&kc.buf);
    kc.buf.resp = ctx->out->resp;
    maxiter = kc.so.count > LLONG_MAX / 10 ? LLONG_MAX : kc.so.count * 10;
    do {
        cursor = store_scan(ctx->store, ctx->db, cursor, (long)(kc.so.count - kc.seen), ctx->now,
                            collect_key, &kc);
    } while (cursor && maxiter-- && kc.seen < kc.so.count);

    cmd_scan_reply(ctx, cursor, kc.kept, &kc.buf);
    reply_deinit(&kc.buf);
}

static void cmd_randomkey(struct cmd_ctx *ctx)
{
    const char *key;
    size_t klen;
    if (store_random_key(ctx->store, ctx->db, ctx->now, &key, &klen))
        reply_bulk(ctx->out, key, klen);
    else
        reply_null(ctx->out);
}

/* ---- RENAME RENAMENX MOVE ----------------------------------------------------- */

/* Redis renameGenericCommand, both keys in this store */
static void rename_generic(struct cmd_ctx *ctx, bool nx)
{
    const struct resp_arg *src = &ctx->argv[1];
    const struct resp_arg *dst = &ctx->argv[2];
    if (cmd_lookup_write(ctx, src) == NULL) {
        reply_error(ctx->out, "ERR no such key");
        return;
    }
    /* same key: nothing to do, but only if it exists (checked above) */
    if (same_bytes(src, dst)) {
        if (nx)
            reply_int(ctx->out, 0);
        else
            reply_ok(ctx->out);
        return;
    }
    if (cmd_lookup_write(ctx, dst) != NULL) {
        if (nx) {
            reply_int(ctx->out, 0);
            return;
        }
        store_delete(ctx->store, ctx->db, dst->ptr, dst->len, ctx->now);
    }
    store_rename(ctx->store, ctx->db, src->ptr, src->len, dst->ptr, dst->len, ctx->now);
    /* dst was deleted first when it existed: Redis's dbAdd says "new" either way */
    cmd_notify(ctx, NOTIFY_NEW, "new", dst);
    cmd_modified(ctx, src);
    cmd_modified_n(ctx, dst, 0); /* a rename is one change */
    cmd_notify(ctx, NOTIFY_GENERIC, "rename_from", src);
    cmd_notify(ctx, NOTIFY_GENERIC, "rename_to", dst);
    if (nx)
        reply_int(ctx->out, 1);
    else
        reply_ok(ctx->out);
}

static void cmd_rename(struct cmd_ctx *ctx)
{
    rename_generic(ctx, false);
}

static void cmd_renamenx(struct cmd_ctx *ctx)
{
    rename_generic(ctx, true);
}

static void cmd_move(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    int dbid;

    if (!get_int_or_reply(ctx, &ctx->argv[2], &dbid, NULL))
        return;
    if (dbid < 0 || dbid >= store_databases(ctx->store)) {
        reply_error(ctx->out, "ERR DB index is out of range");
        return;
    }
    if (dbid == ctx->db) {
        reply_error(ctx->out, "ERR source and destination objects are the same");
        return;
    }
    if (cmd_lookup_write(ctx, key) == NULL ||
        !store_move(ctx->store, ctx->db, dbid, key->ptr, key->len, ctx->now)) {
        reply_int(ctx->out, 0);
        return;
    }
    cmd_notify_in(ctx, NOTIFY_NEW, "new", dbid, key);
    cmd_modified_in(ctx, ctx->db, key);
    cmd_modified_in_n(ctx, dbid, key, 0); /* a move is one change */
    cmd_notify_in(ctx, NOTIFY_GENERIC, "move_from", ctx->db, key);
    cmd_notify_in(ctx, NOTIFY_GENERIC, "move_to", dbid, key);
    reply_int(ctx->out, 1);
}

/* ---- COPY ---------------------------------------------------------------------- */

static void emit_to_reply(void *arg, const void *p, size_t n)
{
    reply_raw(arg, p, n);
}

/* a copy of o, whatever its type, through its serialized form (object_type_ops: later types too) */
static struct object *object_copy(const struct object *o)
{
    struct reply bytes;
    reply_init(&bytes);
    object_serialize(o, emit_to_reply, &bytes);
    struct object *copy = object_deserialize(bytes.buf ? bytes.buf : "", bytes.len);
    reply_deinit(&bytes);
    return copy;
}

const char *cmd_copy_options(int argc, const struct resp_arg *argv, int db, int databases, int *dst_db,
                             bool *replace)
{
    *dst_db = db;
    *replace = false;
    for (int j = 3; j < argc; j++) {
        if (cmd_arg_is(&argv[j], "replace")) {
            *replace = true;
        } else if (cmd_arg_is(&argv[j], "db") && j + 1 < argc) {
            long long v;
            if (!util_str_to_ll(argv[j + 1].ptr, argv[j + 1].len, &v) || v < INT_MIN || v > INT_MAX)
                return "ERR value is not an integer or out of range";
            if (v < 0 || v >= databases)
                return "ERR DB index is out of range";
            *dst_db = (int)v;
            j++;
        } else {
            return "ERR syntax error";
        }
    }
    return NULL;
}

/* Redis copyCommand, both keys in this store (the dispatcher's ROUTE_COPY steps when they are not) */
static void cmd_copy(struct cmd_ctx *ctx)
{
    const struct resp_arg *src = &ctx->argv[1];
    const struct resp_arg *dst = &ctx->argv[2];
    int dst_db;
    bool replace;
    const char *err = cmd_copy_options(ctx->argc, ctx->argv, ctx->db, store_databases(ctx->store), &dst_db,
                                       &replace);
    if (err) {
        reply_error(ctx->out, err);
        return;
    }
    if (dst_db == ctx->db && same_bytes(src, dst)) {
        reply_error(ctx->out, "ERR source and destination objects are the same");
        return;
    }
    if (dst_db != ctx->db && store_holds_copies(ctx->store)) {
        /* copies of a script's keys on several shards go back to their owners in the script's database only */
        reply_error(ctx->out, "ERR COPY into another database is not supported where the keys span shards (a script)");
        return;
    }
    const struct object *o = cmd_lookup_read(ctx, src);
    if (o == NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    int64_t expire = store_get_expire(ctx->store, ctx->db, src->ptr, src->len, ctx->now);
    if (store_lookup(ctx->store, dst_db, dst->ptr, dst->len, ctx->now) != NULL) {
        if (!replace) {
            reply_int(ctx->out, 0);
            return;
        }
        store_delete(ctx->store, dst_db, dst->ptr, dst->len, ctx->now);
    }
    store_set(ctx->store, dst_db, dst->ptr, dst->len, object_copy(o), 0);
    if (expire >= 0)
        store_set_expire(ctx->store, dst_db, dst->ptr, dst->len, expire, ctx->now);
    cmd_notify_in(ctx, NOTIFY_NEW, "new", dst_db, dst);
    cmd_modified_in(ctx, dst_db, dst);
    cmd_notify_in(ctx, NOTIFY_GENERIC, "copy_to", dst_db, dst);
    reply_int(ctx->out, 1);
}

/* ---- DBSIZE FLUSHDB FLUSHALL SWAPDB --------------------------------------------- */

static void cmd_dbsize(struct cmd_ctx *ctx)
{
    reply_int(ctx->out, (long long)store_size(ctx->store, ctx->db));
}

/* Redis getFlushCommandFlags: [ASYNC|SYNC]; both flush synchronously here */
static bool flush_args_ok_or_reply(struct cmd_ctx *ctx)
{
    if (ctx->argc == 1)
        return true;
    if (ctx->argc == 2 && (cmd_arg_is(&ctx->argv[1], "sync") || cmd_arg_is(&ctx->argv[1], "async")))
        return true;
    reply_syntax_error(ctx->out);
    return false;
}

/*
 * FLUSHDB, FLUSHALL and SWAPDB cause no keyspace event in Redis 7.0 and
 * signal no key one by one: they say which databases they are about to
 * replace (cmd_replacing_databases), for WATCH and blocked clients.
 */
static void cmd_flushdb(struct cmd_ctx *ctx)
{
    if (!flush_args_ok_or_reply(ctx))
        return;
    cmd_replacing_databases(ctx, ctx->db, -1);
    ctx->dirty += (long long)store_size(ctx->store, ctx->db); /* Redis: the keys it removed */
    store_flush(ctx->store, ctx->db);
    reply_ok(ctx->out);
}

static cmd_handler *after_flushall;

void cmd_on_flushall(cmd_handler *after)
{
    after_flushall = after;
}

static void cmd_flushall(struct cmd_ctx *ctx)
{
    if (!flush_args_ok_or_reply(ctx))
        return;
    cmd_replacing_databases(ctx, -1, -1);
    for (int db = 0; db < store_databases(ctx->store); db++) /* Redis: the keys it removed */
        ctx->dirty += (long long)store_size(ctx->store, db);
    store_flush(ctx->store, -1);
    if (after_flushall)
        after_flushall(ctx);
    reply_ok(ctx->out);
}

static void cmd_swapdb(struct cmd_ctx *ctx)
{
    int id1, id2;
    int n = store_databases(ctx->store);

    if (!get_int_or_reply(ctx, &ctx->argv[1], &id1, "ERR invalid first DB index"))
        return;
    if (!get_int_or_reply(ctx, &ctx->argv[2], &id2, "ERR invalid second DB index"))
        return;
    if (id1 < 0 || id1 >= n || id2 < 0 || id2 >= n) {
        reply_error(ctx->out, "ERR DB index is out of range");
        return;
    }
    if (id1 != id2) {
        cmd_replacing_databases(ctx, id1, id2);
        store_swapdb(ctx->store, id1, id2); /* cannot fail: both indexes are in range */
    }
    ctx->dirty += store_is_first(ctx->store); /* one change, counted by one part (Redis: also id1 == id2) */
    reply_ok(ctx->out);
}

/* ---- OBJECT -------------------------------------------------------------------- */

static const char *const object_help[] = {
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    NULL,
};

static long long object_refcount(const struct object *o)
{
    /* Redis shares the integers 0..9999 (OBJ_SHARED_INTEGERS), refcount INT_MAX */
    if (object_type(o) == OBJ_STRING && strcmp(object_encoding_name(o), "int") == 0) {
        size_t len;
        const char *p = object_string_ptr(o, &len);
        long long v;
        if (util_str_to_ll(p, len, &v) && v >= 0 && v < 10000)
            return INT_MAX;
    }
    return 1;
}

static void cmd_object(struct cmd_ctx *ctx)
{
    const struct subcommand *sub;
    struct object *o;
    if (!command_subcommand_or_reply("object", ctx->argc, ctx->argv, ctx->out, &sub))
        return;
    const char *found = sub->sub;
    if (strcmp(found, "help") == 0) {
        cmd_reply_help(ctx, object_help);
        return;
    }

    /* OBJECT looks without touching (Redis's LOOKUP_NOTOUCH), but counts hits and misses */
    enum maxmemory_policy policy = ctx->config->maxmemory_policy;
    bool lfu = policy == MAXMEMORY_VOLATILE_LFU || policy == MAXMEMORY_ALLKEYS_LFU;
    long long idle = 0;
    o = store_peek(ctx->store, ctx->db, ctx->argv[2].ptr, ctx->argv[2].len, ctx->now, &idle);
    if (ctx->stats) {
        if (o)
            ctx->stats->keyspace_hits++;
        else
            ctx->stats->keyspace_misses++;
    }
    if (o == NULL) {
        reply_null(ctx->out);
        return;
    }
    if (strcmp(found, "encoding") == 0) {
        reply_bulk_cstr(ctx->out, object_encoding_name(o));
    } else if (strcmp(found, "refcount") == 0) {
        reply_int(ctx->out, object_refcount(o));
    } else if (lfu) {
        if (strcmp(found, "idletime") == 0)
            reply_error(ctx->out,
                        "ERR An LFU maxmemory policy is selected, idle time not tracked. "
                        "Please note that when switching between policies at runtime LRU and LFU "
                        "data will take some time to adjust.");
        else
            reply_int(ctx->out, store_lfu_freq(ctx->store, ctx->db, ctx->argv[2].ptr, ctx->argv[2].len, ctx->now));
    } else if (strcmp(found, "idletime") == 0) {
        reply_int(ctx->out, idle);
    } else {
        reply_error(ctx->out,
                    "ERR An LFU maxmemory policy is not selected, access frequency not tracked. "
                    "Please note that when switching between policies at runtime LRU and LFU "
                    "data will take some time to adjust.");
    }
}

/* ---- MEMORY -------------------------------------------------------------------- */

/* MEMORY USAGE, and HELP; Redis's DOCTOR, MALLOC-STATS, PURGE and STATS are not served */
static const char *const memory_help[] = {
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    NULL,
};

/*
 * MEMORY USAGE key [SAMPLES count]: Redis's argument rules; the bytes are
 * the key's share of used_memory (entry, key and value, counted exactly, so
 * SAMPLES changes nothing).  Looked up without touching the key.
 */
static void cmd_memory(struct cmd_ctx *ctx)
{
    const struct subcommand *sub;
    if (!command_subcommand_or_reply("memory", ctx->argc, ctx->argv, ctx->out, &sub))
        return;
    if (strcmp(sub->sub, "help") == 0) {
        cmd_reply_help(ctx, memory_help);
        return;
    }
    for (int j = 3; j < ctx->argc; j++) {
        long long samples;
        if (!cmd_arg_is(&ctx->argv[j], "samples") || j + 1 >= ctx->argc) {
            reply_syntax_error(ctx->out);
            return;
        }
        if (!cmd_get_ll_or_reply(ctx, &ctx->argv[++j], &samples))
            return;
        if (samples < 0) {
            reply_syntax_error(ctx->out);
            return;
        }
    }
    long long bytes = store_key_memory(ctx->store, ctx->db, ctx->argv[2].ptr, ctx->argv[2].len, ctx->now);
    if (bytes < 0)
        reply_null(ctx->out);
    else
        reply_int(ctx->out, bytes);
}

/* ---- DUMP RESTORE ---------------------------------------------------------------- */

/* Redis's defaults, when a handler runs without a config (unit tests) */
static const struct config default_encodings = {
    .hash_max_listpack_entries = 128, .hash_max_listpack_value = 64, .list_max_listpack_size = -2,
    .set_max_intset_entries = 512, .set_max_listpack_entries = 128, .set_max_listpack_value = 64,
    .zset_max_listpack_entries = 128, .zset_max_listpack_value = 64, .rdbcompression = true,
};

static const struct config *encodings_of(const struct cmd_ctx *ctx)
{
    return ctx->config ? ctx->config : &default_encodings;
}

/* Redis dumpCommand: the value as an RDB payload, nil when the key is missing */
static void cmd_dump(struct cmd_ctx *ctx)
{
    const struct config *c = encodings_of(ctx);
    struct object *o = cmd_lookup_read(ctx, &ctx->argv[1]);
    if (o == NULL) {
        reply_null(ctx->out);
        return;
    }
    struct rdb_save_opts opts = {c->rdbcompression, c->list_max_listpack_size, c->list_compress_depth, false};
    struct rdb_buf b = {0};
    rdb_dump_payload(&b, o, &opts);
    reply_bulk(ctx->out, b.p, b.len);
    rdb_buf_release(&b);
}

/*
 * Redis restoreCommand: RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f], its checks
 * in its order (options, BUSYKEY, TTL, version and checksum, the value).  IDLETIME sets the key's
 * idle time unless an LFU policy is in force, FREQ its LFU counter only under one, as Redis's
 * objectSetLRUOrLFU does.
 */
static void cmd_restore(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    const struct resp_arg *payload = &ctx->argv[3];
    const struct config *c = encodings_of(ctx);
    long long ttl, freq = -1, idle = -1;
    bool replace = false, absttl = false;
    unsigned version;

    for (int j = 4; j < ctx->argc; j++) {
        int additional = ctx->argc - j - 1;
        if (cmd_arg_is(&ctx->argv[j], "replace")) {
            replace = true;
        } else if (cmd_arg_is(&ctx->argv[j], "absttl")) {
            absttl = true;
        } else if (cmd_arg_is(&ctx->argv[j], "idletime") && additional >= 1 && freq == -1) {
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[++j], &idle))
                return;
            if (idle < 0) {
                reply_error(ctx->out, "ERR Invalid IDLETIME value, must be >= 0");
                return;
            }
        } else if (cmd_arg_is(&ctx->argv[j], "freq") && additional >= 1 && idle == -1) {
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[++j], &freq))
                return;
            if (freq < 0 || freq > 255) {
                reply_error(ctx->out, "ERR Invalid FREQ value, must be >= 0 and <= 255");
                return;
            }
        } else {
            reply_syntax_error(ctx->out);
            return;
        }
    }
    if (!replace && cmd_lookup_write(ctx, key) != NULL) {
        reply_error(ctx->out, "BUSYKEY Target key name already exists.");
        return;
    }
    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &ttl))
        return;
    if (ttl < 0) {
        reply_error(ctx->out, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    if (rdb_verify_payload(payload->ptr, payload->len, &version) != 0) {
        reply_error(ctx->out, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    struct rdb_limits lim = config_rdb_limits(c);
    struct object *o = rdb_load_value(payload->ptr, payload->len - 10, version, &lim, NULL);
    if (o == NULL) {
        reply_error(ctx->out, "ERR Bad data format");
        return;
    }
    bool deleted = replace && store_delete(ctx->store, ctx->db, key->ptr, key->len, ctx->now) == 1;
    if (ttl && !absttl) /* wraps as Redis's does: a TTL past the clock's end is already gone */
        ttl = (long long)((unsigned long long)ttl + (unsigned long long)ctx->now);
    if (ttl && ttl <= ctx->now) {
        /* already expired: nothing is created (Redis's checkAlreadyExpired) */
        if (deleted) {
            cmd_modified(ctx, key);
            cmd_notify(ctx, NOTIFY_GENERIC, "del", key);
        }
        object_destroy(&o);
        reply_ok(ctx->out);
        return;
    }
    store_set(ctx->store, ctx->db, key->ptr, key->len, o, 0);
    if (ttl)
        store_set_expire(ctx->store, ctx->db, key->ptr, key->len, ttl, ctx->now);
    bool lfu = c->maxmemory_policy == MAXMEMORY_VOLATILE_LFU || c->maxmemory_policy == MAXMEMORY_ALLKEYS_LFU;
    if (lfu && freq >= 0)
        store_set_lfu_freq(ctx->store, ctx->db, key->ptr, key->len, (int)freq, ctx->now);
    else if (!lfu && idle >= 0)
        store_set_idle(ctx->store, ctx->db, key->ptr, key->len, idle, ctx->now);
    cmd_notify(ctx, NOTIFY_NEW, "new", key);
    cmd_modified(ctx, key);
    cmd_notify(ctx, NOTIFY_GENERIC, "restore", key);
    reply_ok(ctx->out);
}

/* ---- table --------------------------------------------------------------------- */

/* arity, flags, key positions and ACL categories as Redis 7.0.15's COMMAND
 * INFO reports them (OBJECT is a container command there; here it is one
 * entry whose key is argv[2]) */
const struct command command_family_keys[] = {
    {"del", cmd_del, -2, CMD_WRITE, 1, -1, 1, ROUTE_SPLIT_SUM, "@keyspace @write @slow"},
    {"unlink", cmd_del, -2, CMD_WRITE | CMD_FAST, 1, -1, 1, ROUTE_SPLIT_SUM,
     "@keyspace @write @fast"},
    {"exists", cmd_exists, -2, CMD_READONLY | CMD_FAST, 1, -1, 1, ROUTE_SPLIT_SUM,
     "@keyspace @read @fast"},
    {"touch", cmd_touch, -2, CMD_READONLY | CMD_FAST, 1, -1, 1, ROUTE_SPLIT_SUM,
     "@keyspace @read @fast"},
    {"type", cmd_type, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@keyspace @read @fast"},
    {"expire", cmd_expire, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@keyspace @write @fast"},
    {"pexpire", cmd_pexpire, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@keyspace @write @fast"},
    {"expireat", cmd_expireat, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@keyspace @write @fast"},
    {"pexpireat", cmd_pexpireat, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@keyspace @write @fast"},
    {"ttl", cmd_ttl, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@keyspace @read @fast"},
    {"pttl", cmd_pttl, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@keyspace @read @fast"},
    {"expiretime", cmd_expiretime, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@keyspace @read @fast"},
    {"pexpiretime", cmd_pexpiretime, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@keyspace @read @fast"},
    {"persist", cmd_persist, 2, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@keyspace @write @fast"},
    {"keys", cmd_keys, 2, CMD_READONLY, 0, 0, 0, ROUTE_FANOUT_CONCAT,
     "@keyspace @read @slow @dangerous"},
    {"scan", cmd_scan, -2, CMD_READONLY, 0, 0, 0, ROUTE_SCAN, "@keyspace @read @slow"},
    {"randomkey", cmd_randomkey, 1, CMD_READONLY, 0, 0, 0, ROUTE_RANDOMKEY, "@keyspace @read @slow"},
    {"rename", cmd_rename, 3, CMD_WRITE, 1, 2, 1, ROUTE_RENAME, "@keyspace @write @slow"},
    {"renamenx", cmd_renamenx, 3, CMD_WRITE | CMD_FAST, 1, 2, 1, ROUTE_RENAMENX,
     "@keyspace @write @fast"},
    {"copy", cmd_copy, -3, CMD_WRITE | CMD_DENYOOM | CMD_ANY_DB, 1, 2, 1, ROUTE_COPY, "@keyspace @write @slow"},
    {"dbsize", cmd_dbsize, 1, CMD_READONLY | CMD_FAST, 0, 0, 0, ROUTE_FANOUT_SUM,
     "@keyspace @read @fast"},
    {"flushdb", cmd_flushdb, -1, CMD_WRITE, 0, 0, 0, ROUTE_FANOUT_OK,
     "@keyspace @write @slow @dangerous"},
    {"flushall", cmd_flushall, -1, CMD_WRITE, 0, 0, 0, ROUTE_FANOUT_OK,
     "@keyspace @write @slow @dangerous"},
    {"swapdb", cmd_swapdb, 3, CMD_WRITE | CMD_FAST | CMD_NO_CLUSTER, 0, 0, 0, ROUTE_FANOUT_OK,
     "@keyspace @write @fast @dangerous"},
    {"move", cmd_move, 3, CMD_WRITE | CMD_ANY_DB | CMD_FAST | CMD_NO_CLUSTER, 1, 1, 1, ROUTE_OWNER,
     "@keyspace @write @fast"},
    {"dump", cmd_dump, 2, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@keyspace @read @slow"},
    {"restore", cmd_restore, -4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, ROUTE_OWNER,
     "@keyspace @write @slow @dangerous"},
    {"object", cmd_object, -2, CMD_READONLY | CMD_SUBCOMMANDS, 2, 2, 1, ROUTE_OWNER, "@slow"}, /* containers: "@slow" alone */
    {"memory", cmd_memory, -2, CMD_READONLY | CMD_SUBCOMMANDS, 2, 2, 1, ROUTE_OWNER, "@slow"},
};

const size_t command_family_keys_count =
    sizeof(command_family_keys) / sizeof(command_family_keys[0]);

/* OBJECT's and MEMORY's subcommands, as Redis 7.0's table has them (their handlers parse the subcommand);
 * MEMORY DOCTOR, MALLOC-STATS, PURGE and STATS are not here: percore has no allocator report */
const struct subcommand command_subs_keys[] = {
    COMMAND_SUB("object", "encoding", cmd_object, 3, CMD_READONLY, 2, 2, 1, ROUTE_OWNER, "@keyspace @read @slow"),
    COMMAND_SUB("object", "freq", cmd_object, 3, CMD_READONLY, 2, 2, 1, ROUTE_OWNER, "@keyspace @read @slow"),
    COMMAND_SUB("object", "help", cmd_object, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, ROUTE_OWNER, "@keyspace @slow"),
    COMMAND_SUB("object", "idletime", cmd_object, 3, CMD_READONLY, 2, 2, 1, ROUTE_OWNER, "@keyspace @read @slow"),
    COMMAND_SUB("object", "refcount", cmd_object, 3, CMD_READONLY, 2, 2, 1, ROUTE_OWNER, "@keyspace @read @slow"),
    COMMAND_SUB("memory", "help", cmd_memory, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, ROUTE_OWNER, "@slow"),
    COMMAND_SUB("memory", "usage", cmd_memory, -3, CMD_READONLY, 2, 2, 1, ROUTE_OWNER, "@read @slow"),
};
const size_t command_subs_keys_count = sizeof command_subs_keys / sizeof command_subs_keys[0];
