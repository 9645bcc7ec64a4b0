/*
 * hash: the hash command family (Redis's t_hash.c commands).
 *
 * Design: every handler follows its Redis 7.0 counterpart step for step, in
 * the same order of checks, because the order decides which error a client
 * sees: HSET checks its argument count before the key's type, HINCRBY and
 * HINCRBYFLOAT parse the increment before they look the key up, HRANDFIELD
 * parses its count before the lookup and HSCAN its cursor before the lookup
 * but its options after it.  The structures and the listpack -> hashtable
 * conversion live in store/hash.c (include/percore/hash.h); the thresholds
 * come from ctx->config.
 *
 * A write to a missing key builds the new hash first and hands it to the
 * store at the end (store_set measures it then), so the store's memory
 * figure never misses a change; an existing hash is changed in place right
 * after its lookup, which the store re-measures (store.h's rule), and
 * handed back with store_settle() once the handler is done with it (a small
 * hash is kept packed in its key's entry, and a change takes it out first:
 * hash.h), after which the object is not touched again.  A hash emptied by
 * HDEL is deleted, as in Redis.
 *
 * Each write reports what it did where Redis's handler does (command.h): the
 * key modified and its event after the change ("hset" for HSET, HMSET and
 * HSETNX), "new" first when it creates the key, "del" after HDEL's event
 * when HDEL empties it; one that fails or changes nothing (HSETNX of an
 * existing field, HDEL of no field) reports nothing.
 *
 * Replies whose order Redis leaves to the structure (HGETALL, HKEYS, HVALS,
 * HSCAN, HRANDFIELD) come in listpack order for a listpack hash, as in Redis,
 * and in dict order for a hashtable.
 *
 * Threading: a handler runs on the shard thread that owns its key and
 * touches only ctx->store (ARCHITECTURE.md rule 1).  Every hash command has one
 * key (ROUTE_OWNER).  Each handler appends exactly one reply to ctx->out.
 */
#include "families.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/hash.h"
#include "percore/object.h"
#include "percore/reply.h"
#include "percore/store.h"
#include "percore/util.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HASH_DEFAULT_MAX_ENTRIES 128 /* Redis's defaults, when no config is given */
#define HASH_DEFAULT_MAX_VALUE 64
#define HASH_LD_MAX_CHARS (5 * 1024 + 32) /* Redis MAX_LONG_DOUBLE_CHARS, and room */

/* ---- helpers ------------------------------------------------------------- */

static struct hash_limits hash_limits_of(const struct cmd_ctx *ctx)
{
    struct hash_limits lim = {HASH_DEFAULT_MAX_ENTRIES, HASH_DEFAULT_MAX_VALUE};
    if (ctx->config) {
        long long e = ctx->config->hash_max_listpack_entries;
        long long v = ctx->config->hash_max_listpack_value;
        lim.max_entries = e > 0 ? (size_t)e : 0;
        lim.max_value = v > 0 ? (size_t)v : 0;
    }
    return lim;
}

/*
 * Redis hashTypeLookupWriteOrCreate: the hash at key, or a new empty one
 * (*created set), or NULL after a WRONGTYPE reply; once changed the caller
 * hands it to the store with hash_store_done.
 */
static struct object *hash_lookup_write_or_create(struct cmd_ctx *ctx, const struct resp_arg *key,
                                                  bool *created)
{
    struct object *o = cmd_lookup_write(ctx, key);
    *created = false;
    if (o == NULL) {
        *created = true;
        return hash_create();
    }
    if (object_type(o) != OBJ_HASH) {
        reply_wrongtype(ctx->out);
        return NULL;
    }
    return o;
}

/* hand a changed hash of hash_lookup_write_or_create to the store: a new key ("new", Redis's
 * dbAdd), or an existing one settled back into its entry; o is not to be used afterwards */
static void hash_store_done(struct cmd_ctx *ctx, const struct resp_arg *key, struct object *o,
                            bool created)
{
    if (created) {
        store_set(ctx->store, ctx->db, key->ptr, key->len, o, 0);
        cmd_notify(ctx, NOTIFY_NEW, "new", key);
    } else {
        store_settle(ctx->store, ctx->db, key->ptr, key->len, o);
    }
}

/* Redis hashTypeTryConversion over argv[start..end] */
static void hash_try_conversion_args(struct cmd_ctx *ctx, struct object *o,
                                     const struct hash_limits *lim, int start, int end)
{
    size_t maxlen = 0, sum = 0;
    for (int i = start; i <= end; i++) {
        size_t n = ctx->argv[i].len;
        if (n > maxlen)
            maxlen = n;
        sum += n;
    }
    hash_try_conversion(o, lim, maxlen, sum);
}

/* ---- HSET HMSET HSETNX --------------------------------------------------- */

static void hset_generic(struct cmd_ctx *ctx, bool hmset)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct hash_limits lim = hash_limits_of(ctx);
    long long created_fields = 0;
    bool created;

    if ((ctx->argc % 2) == 1) {
        reply_errorf(ctx->out, "ERR wrong number of arguments for '%s' command",
                     hmset ? "hmset" : "hset");
        return;
    }
    struct object *o = hash_lookup_write_or_create(ctx, key, &created);
    if (o == NULL)
        return;
    hash_try_conversion_args(ctx, o, &lim, 2, ctx->argc - 1);
    for (int i = 2; i < ctx->argc; i += 2) {
        const struct resp_arg *f = &ctx->argv[i], *v = &ctx->argv[i + 1];
        created_fields += !hash_set(o, &lim, f->ptr, f->len, v->ptr, v->len);
    }
    hash_store_done(ctx, key, o, created);
    if (hmset)
        reply_ok(ctx->out);
    else
        reply_int(ctx->out, created_fields);
    cmd_changed_n(ctx, NOTIFY_HASH, "hset", key, (ctx->argc - 2) / 2); /* also when no field changed, as Redis */
}

static void cmd_hset(struct cmd_ctx *ctx)
{
    hset_generic(ctx, false);
}

static void cmd_hmset(struct cmd_ctx *ctx)
{
    hset_generic(ctx, true);
}

static void cmd_hsetnx(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    const struct resp_arg *f = &ctx->argv[2], *v = &ctx->argv[3];
    struct hash_limits lim = hash_limits_of(ctx);
    bool created;

    struct object *o = hash_lookup_write_or_create(ctx, key, &created);
    if (o == NULL)
        return;
    if (hash_exists(o, f->ptr, f->len)) {
        reply_int(ctx->out, 0);
        return; /* never for a created hash: it is empty */
    }
    hash_try_conversion_args(ctx, o, &lim, 2, 3);
    hash_set(o, &lim, f->ptr, f->len, v->ptr, v->len);
    hash_store_done(ctx, key, o, created);
    reply_int(ctx->out, 1);
    cmd_changed(ctx, NOTIFY_HASH, "hset", key);
}

/* ---- HGET HMGET HEXISTS HSTRLEN HLEN ---------------------------------- */

static void cmd_hget(struct cmd_ctx *ctx)
{
    bool wrongtype;
    const char *v;
    size_t vlen;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype)
        return;
    if (o && hash_get(o, ctx->argv[2].ptr, ctx->argv[2].len, &v, &vlen))
        reply_bulk(ctx->out, v, vlen);
    else
        reply_null(ctx->out);
}

static void cmd_hmget(struct cmd_ctx *ctx)
{
    bool wrongtype;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype)
        return;
    /* a missing key is an empty hash: one null per field */
    reply_array(ctx->out, ctx->argc - 2);
    for (int i = 2; i < ctx->argc; i++) {
        const char *v;
        size_t vlen;
        if (o && hash_get(o, ctx->argv[i].ptr, ctx->argv[i].len, &v, &vlen))
            reply_bulk(ctx->out, v, vlen);
        else
            reply_null(ctx->out);
    }
}

static void cmd_hexists(struct cmd_ctx *ctx)
{
    bool wrongtype;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype)
        return;
    reply_int(ctx->out, o && hash_exists(o, ctx->argv[2].ptr, ctx->argv[2].len) ? 1 : 0);
}

static void cmd_hstrlen(struct cmd_ctx *ctx)
{
    bool wrongtype;
    const char *v;
    size_t vlen = 0;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype)
        return;
    if (o == NULL || !hash_get(o, ctx->argv[2].ptr, ctx->argv[2].len, &v, &vlen))
        vlen = 0;
    reply_int(ctx->out, (long long)vlen);
}

static void cmd_hlen(struct cmd_ctx *ctx)
{
    bool wrongtype;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype)
        return;
    reply_int(ctx->out, o ? (long long)hash_length(o) : 0);
}

/* ---- HDEL ---------------------------------------------------------------- */

static void cmd_hdel(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    long long deleted = 0;
    bool keyremoved = false;
    struct object *o = cmd_lookup_write(ctx, key);

    if (o == NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    if (object_type(o) != OBJ_HASH) {
        reply_wrongtype(ctx->out);
        return;
    }
    for (int i = 2; i < ctx->argc; i++) {
        if (hash_delete(o, ctx->argv[i].ptr, ctx->argv[i].len)) {
            deleted++;
            if (hash_length(o) == 0) {
                store_delete(ctx->store, ctx->db, key->ptr, key->len, ctx->now);
                keyremoved = true;
                break;
            }
        }
    }
    if (deleted && !keyremoved)
        store_settle(ctx->store, ctx->db, key->ptr, key->len, o);
    if (deleted) {
        cmd_changed_n(ctx, NOTIFY_HASH, "hdel", key, deleted);
        if (keyremoved)
            cmd_notify(ctx, NOTIFY_GENERIC, "del", key);
    }
    reply_int(ctx->out, deleted);
}

/* ---- HGETALL HKEYS HVALS ------------------------------------------------- */

enum { HASH_KEYS = 1, HASH_VALS = 2 };

static void hgetall_generic(struct cmd_ctx *ctx, int what)
{
    bool wrongtype;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_HASH, false, &wrongtype);
    bool map = what == (HASH_KEYS | HASH_VALS);
    if (wrongtype)
        return;
    long long len = o ? (long long)hash_length(o) : 0;
    /* a map when both are asked for (HGETALL), otherwise a flat array */
    if (map)
        reply_map(ctx->out, len);
    else
        reply_array(ctx->out, len);
    if (o == NULL)
        return;

    struct hash_iter it;
    const char *f, *v;
    size_t flen, vlen;
    hash_iter_init(&it, o);
    while (hash_iter_next(&it, &f, &flen, &v, &vlen)) {
        if (what & HASH_KEYS)
            reply_bulk(ctx->out, f, flen);
        if (what & HASH_VALS)
            reply_bulk(ctx->out, v, vlen);
    }
}

static void cmd_hgetall(struct cmd_ctx *ctx)
{
    hgetall_generic(ctx, HASH_KEYS | HASH_VALS);
}

static void cmd_hkeys(struct cmd_ctx *ctx)
{
    hgetall_generic(ctx, HASH_KEYS);
}

static void cmd_hvals(struct cmd_ctx *ctx)
{
    hgetall_generic(ctx, HASH_VALS);
}

/* ---- HINCRBY HINCRBYFLOAT ---------------------------------------------- */

static void cmd_hincrby(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    const struct resp_arg *field = &ctx->argv[2];
    struct hash_limits lim = hash_limits_of(ctx);
    long long value = 0, incr;
    const char *v;
    size_t vlen;
    bool created;
    char buf[32];

    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[3], &incr))
        return;
    struct object *o = hash_lookup_write_or_create(ctx, key, &created);
    if (o == NULL)
        return;
    if (hash_get(o, field->ptr, field->len, &v, &vlen)) {
        if (!util_str_to_ll(v, vlen, &value)) {
            reply_error(ctx->out, "ERR hash value is not an integer");
            return; /* the hash existed: created is false */
        }
    }
    if ((incr < 0 && value < 0 && incr < (LLONG_MIN - value)) ||
        (incr > 0 && value > 0 && incr > (LLONG_MAX - value))) {
        reply_error(ctx->out, "ERR increment or decrement would overflow");
        return; /* value != 0: the hash existed */
    }
    value += incr;
    int n = util_ll_to_str(buf, value);
    hash_set(o, &lim, field->ptr, field->len, buf, (size_t)n);
    hash_store_done(ctx, key, o, created);
    reply_int(ctx->out, value);
    cmd_changed(ctx, NOTIFY_HASH, "hincrby", key);
}

static void cmd_hincrbyfloat(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    const struct resp_arg *field = &ctx->argv[2];
    struct hash_limits lim = hash_limits_of(ctx);
    long double value = 0, incr;
    const char *v;
    size_t vlen;
    bool created;
    char buf[HASH_LD_MAX_CHARS];

    if (!util_str_to_ld(ctx->argv[3].ptr, ctx->argv[3].len, &incr)) {
        reply_error(ctx->out, "ERR value is not a valid float");
        return;
    }
    if (isnan(incr) || isinf(incr)) {
        reply_error(ctx->out, "ERR value is NaN or Infinity");
        return;
    }
    struct object *o = hash_lookup_write_or_create(ctx, key, &created);
    if (o == NULL)
        return;
    if (hash_get(o, field->ptr, field->len, &v, &vlen)) {
        if (!util_str_to_ld(v, vlen, &value)) {
            reply_error(ctx->out, "ERR hash value is not a float");
            return; /* the hash existed */
        }
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        /* never for a created hash: 0 + a finite increment is finite */
        if (created) {
            object_destroy(&o);
        }
        reply_error(ctx->out, "ERR increment would produce NaN or Infinity");
        return;
    }
    int n = util_ld_to_str(buf, sizeof buf, value);
    hash_set(o, &lim, field->ptr, field->len, buf, (size_t)n);
    hash_store_done(ctx, key, o, created);
    reply_bulk(ctx->out, buf, (size_t)n);
    cmd_changed(ctx, NOTIFY_HASH, "hincrbyfloat", key);
    if (cmd_propagating(ctx)) { /* as HSET key field value */
        struct resp_arg a[4] = {{"HSET", 4}, *key, *field, {buf, (size_t)n}};
        cmd_propagate(ctx, 4, a);
    }
}

/* ---- HRANDFIELD ------------------------------------------------------- */

struct hrand_reply {
    struct reply *out; /* where the pairs go */
    bool withvalues;   /* field and value, or the field only */
    bool nested;       /* RESP3 WITHVALUES: each pair is an array of 2 */
};

static void hrand_emit(void *arg, const char *f, size_t flen, const char *v, size_t vlen)
{
    struct hrand_reply *hr = arg;
    if (hr->nested)
        reply_array(hr->out, 2);
    reply_bulk(hr->out, f, flen);
    if (hr->withvalues)
        reply_bulk(hr->out, v, vlen);
}

/* Redis hrandfieldWithCountCommand */
static void hrandfield_with_count(struct cmd_ctx *ctx, long l, bool withvalues)
{
    bool wrongtype;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_HASH, false, &wrongtype);
    struct hrand_reply hr = {ctx->out, withvalues, withvalues && ctx->out->resp > 2};
    unsigned long count;
    bool uniq = true;
    /* RESP2 WITHVALUES: a flat array of 2 per pair; otherwise one element per pair */
    unsigned long per = withvalues && ctx->out->resp == 2 ? 2 : 1;

    if (wrongtype)
        return;
    if (o == NULL) {
        reply_array(ctx->out, 0);
        return;
    }
    size_t size = hash_length(o);
    if (l >= 0) {
        count = (unsigned long)l;
    } else {
        count = (unsigned long)-l;
        uniq = false;
    }
    if (count == 0) {
        reply_array(ctx->out, 0);
        return;
    }

    /* CASE 1: negative count (repeats allowed, random order), or one field */
    if (!uniq || count == 1) {
        size_t start = ctx->out->len;
        reply_array(ctx->out, (long long)(count * per));
        while (count--) {
            const char *f, *v;
            size_t flen, vlen;
            hash_random(o, &f, &flen, &v, &vlen);
            hrand_emit(&hr, f, flen, v, vlen);
            if (!cmd_reply_under_cap_or_reply(ctx, start))
                return;
        }
        return;
    }

    /* CASE 2: as many as the hash holds, or more: the whole hash */
    if (count >= size) {
        struct hash_iter it;
        const char *f, *v;
        size_t flen, vlen;
        reply_array(ctx->out, (long long)(size * per));
        hash_iter_init(&it, o);
        while (hash_iter_next(&it, &f, &flen, &v, &vlen))
            hrand_emit(&hr, f, flen, v, vlen);
        return;
    }

    /* CASE 3/4: count distinct fields */
    reply_array(ctx->out, (long long)(count * per));
    hash_random_unique(o, count, hrand_emit, &hr);
}

static void cmd_hrandfield(struct cmd_ctx *ctx)
{
    if (ctx->argc >= 3) {
        long long l;
        bool withvalues = false;
        if (!cmd_get_range_ll_or_reply(ctx, &ctx->argv[2], -LONG_MAX, LONG_MAX, &l, NULL))
            return;
        if (ctx->argc > 4 || (ctx->argc == 4 && !cmd_arg_is(&ctx->argv[3], "withvalues"))) {
            reply_syntax_error(ctx->out);
            return;
        } else if (ctx->argc == 4) {
            withvalues = true;
            if (l < -LONG_MAX / 2 || l > LONG_MAX / 2) {
                reply_error(ctx->out, "ERR value is out of range");
                return;
            }
        }
        hrandfield_with_count(ctx, (long)l, withvalues);
        return;
    }

    bool wrongtype;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype)
        return;
    if (o == NULL) {
        reply_null(ctx->out);
        return;
    }
    const char *f, *v;
    size_t flen, vlen;
    hash_random(o, &f, &flen, &v, &vlen);
    reply_bulk(ctx->out, f, flen);
}

/* ---- HSCAN ------------------------------------------------------------- */

struct hscan_collect {
    struct reply buf;       /* bulk replies of the pairs kept */
    long long kept;         /* fields and values in buf */
    struct scan_options so; /* COUNT and the MATCH filter */
};

static void hscan_pair(void *arg, const char *f, size_t flen, const char *v, size_t vlen)
{
    struct hscan_collect *hc = arg;
    if (!cmd_scan_match(&hc->so, f, flen))
        return;
    reply_bulk(&hc->buf, f, flen);
    reply_bulk(&hc->buf, v, vlen);
    hc->kept += 2;
}

static void cmd_hscan(struct cmd_ctx *ctx)
{
    struct hscan_collect hc;
    uint64_t cursor;
    bool wrongtype;

    if (!cmd_scan_cursor_or_reply(ctx, &ctx->argv[2], &cursor))
        return;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype)
        return;
    if (o == NULL) {
        cmd_scan_reply(ctx, 0, 0, NULL);
        return;
    }

    memset(&hc, 0, sizeof(hc));
    if (!cmd_scan_options_or_reply(ctx, 3, false, &hc.so)) /* TYPE is for SCAN only */
        return;

    reply_init(&hc.buf);
    hc.buf.resp = ctx->out->resp;
    cursor = hash_scan(o, cursor, (unsigned long)hc.so.count, hscan_pair, &hc);

    cmd_scan_reply(ctx, cursor, hc.kept, &hc.buf);
    reply_deinit(&hc.buf);
}

/* ---- table --------------------------------------------------------------- */

/* arity, flags, key positions and ACL categories as Redis 7.0.15's COMMAND
 * INFO reports them */
const struct command command_family_hash[] = {
    {"hset", cmd_hset, -4, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @hash @fast"},
    {"hsetnx", cmd_hsetnx, 4, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @hash @fast"},
    {"hget", cmd_hget, 3, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @hash @fast"},
    {"hmget", cmd_hmget, -3, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @hash @fast"},
    {"hmset", cmd_hmset, -4, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @hash @fast"},
    {"hgetall", cmd_hgetall, 2, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @hash @slow"},
    {"hdel", cmd_hdel, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @hash @fast"},
    {"hlen", cmd_hlen, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @hash @fast"},
    {"hexists", cmd_hexists, 3, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@read @hash @fast"},
    {"hkeys", cmd_hkeys, 2, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @hash @slow"},
    {"hvals", cmd_hvals, 2, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @hash @slow"},
    {"hincrby", cmd_hincrby, 4, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @hash @fast"},
    {"hincrbyfloat", cmd_hincrbyfloat, 4, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1,
     ROUTE_OWNER, "@write @hash @fast"},
    {"hstrlen", cmd_hstrlen, 3, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@read @hash @fast"},
    {"hrandfield", cmd_hrandfield, -2, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @hash @slow"},
    {"hscan", cmd_hscan, -3, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @hash @slow"},
};

const size_t command_family_hash_count =
    sizeof(command_family_hash) / sizeof(command_family_hash[0]);
