/*
 * string: the string command family (Redis's t_string.c).
 *
 * Design: every handler follows its Redis 7.0 counterpart step for step, in
 * the same order of checks, because the order decides which error a client
 * sees (SET parses its options before it looks at the key; GETEX looks up
 * the key before it validates the expire value; INCRBYFLOAT parses the
 * stored value before the increment).  Reads go through cmd_lookup_read(), which
 * counts keyspace hits/misses as Redis's lookupKeyRead does; writes look up
 * without counting (lookupKeyWrite).
 *
 * Threading: a handler runs on the shard thread that owns its keys and
 * touches only ctx->store (ARCHITECTURE.md rule 1).  Multi-key handlers (MGET,
 * MSET, MSETNX) see only the keys the dispatcher routed to this shard; MSETNX
 * is driven across shards by the dispatcher and only reaches this handler
 * when all its keys live here.  LCS reads its two keys where they are: on
 * their shard, or (keys on two shards) on the copies the dispatcher gathers
 * under their locks (ROUTE_OWNER).
 *
 * Effects: a write reports what it did where Redis 7.0's t_string.c does, in
 * the same order: set_key() is Redis's setKey (dbAdd's "new" when it creates
 * the key, then the signalModifiedKey), followed by the command's own event
 * ("set", "incrby", "append", ...); nothing is reported when nothing changed
 * (SET NX on an existing key, SETRANGE of an empty value, GETEX without an
 * option, errors).
 *
 * Each handler appends exactly one reply to ctx->out.
 */
#include "families.h"
#include "string_family.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/reply.h"
#include "percore/store.h"
#include "percore/util.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_PROTO_MAX_BULK_LEN (512LL * 1024 * 1024)

/* SET / GETEX option flags (Redis OBJ_*) */
enum {
    SET_NX = 1 << 0,
    SET_XX = 1 << 1,
    SET_EX = 1 << 2,
    SET_PX = 1 << 3,
    SET_KEEPTTL = 1 << 4,
    SET_GET = 1 << 5,
    SET_EXAT = 1 << 6,
    SET_PXAT = 1 << 7,
    SET_PERSIST = 1 << 8,
};

enum { UNIT_SECONDS = 0, UNIT_MILLISECONDS = 1 };
enum { PARSE_SET = 0, PARSE_GET = 1 };

/* ---- helpers ------------------------------------------------------------- */

static void reply_object(struct reply *out, const struct object *o)
{
    size_t len;
    const char *p = object_string_ptr(o, &len);
    reply_bulk(out, p, len);
}

/* Redis checkStringLength(size, append), overflow-safe (CVE-2022-35977 fix) */
static bool check_string_length_or_reply(struct cmd_ctx *ctx, long long size, long long append)
{
    long long max = string_max_bulk_len(ctx);
    long long total = (long long)((uint64_t)size + (uint64_t)append);
    if (total > max || total < size || total < append) {
        reply_error(ctx->out, "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        return false;
    }
    return true;
}

static void reply_expire_time_error(struct cmd_ctx *ctx, const char *cmd)
{
    reply_errorf(ctx->out, "ERR invalid expire time in '%s' command", cmd);
}

/* Redis parseExtendedStringArgumentsOrReply */
static bool parse_extended_or_reply(struct cmd_ctx *ctx, int *flags, int *unit,
                                    const struct resp_arg **expire, int type)
{
    int j = type == PARSE_GET ? 2 : 3;
    for (; j < ctx->argc; j++) {
        const struct resp_arg *opt = &ctx->argv[j];
        const struct resp_arg *next = (j == ctx->argc - 1) ? NULL : &ctx->argv[j + 1];
        int f = *flags;

        if (cmd_arg_is(opt, "nx") && !(f & SET_XX) && type == PARSE_SET) {
            *flags |= SET_NX;
        } else if (cmd_arg_is(opt, "xx") && !(f & SET_NX) && type == PARSE_SET) {
            *flags |= SET_XX;
        } else if (cmd_arg_is(opt, "get") && type == PARSE_SET) {
            *flags |= SET_GET;
        } else if (cmd_arg_is(opt, "keepttl") && !(f & SET_PERSIST) && !(f & SET_EX) &&
                   !(f & SET_EXAT) && !(f & SET_PX) && !(f & SET_PXAT) && type == PARSE_SET) {
            *flags |= SET_KEEPTTL;
        } else if (cmd_arg_is(opt, "persist") && type == PARSE_GET && !(f & SET_EX) &&
                   !(f & SET_EXAT) && !(f & SET_PX) && !(f & SET_PXAT) && !(f & SET_KEEPTTL)) {
            *flags |= SET_PERSIST;
        } else if (cmd_arg_is(opt, "ex") && !(f & SET_KEEPTTL) && !(f & SET_PERSIST) &&
                   !(f & SET_EXAT) && !(f & SET_PX) && !(f & SET_PXAT) && next) {
            *flags |= SET_EX;
            *expire = next;
            j++;
        } else if (cmd_arg_is(opt, "px") && !(f & SET_KEEPTTL) && !(f & SET_PERSIST) &&
                   !(f & SET_EX) && !(f & SET_EXAT) && !(f & SET_PXAT) && next) {
            *flags |= SET_PX;
            *unit = UNIT_MILLISECONDS;
            *expire = next;
            j++;
        } else if (cmd_arg_is(opt, "exat") && !(f & SET_KEEPTTL) && !(f & SET_PERSIST) &&
                   !(f & SET_EX) && !(f & SET_PX) && !(f & SET_PXAT) && next) {
            *flags |= SET_EXAT;
            *expire = next;
            j++;
        } else if (cmd_arg_is(opt, "pxat") && !(f & SET_KEEPTTL) && !(f & SET_PERSIST) &&
                   !(f & SET_EX) && !(f & SET_EXAT) && !(f & SET_PX) && next) {
            *flags |= SET_PXAT;
            *unit = UNIT_MILLISECONDS;
            *expire = next;
            j++;
        } else {
            reply_syntax_error(ctx->out);
            return false;
        }
    }
    return true;
}

/* Redis getExpireMillisecondsOrReply: the absolute expire in ms */
static bool get_expire_ms_or_reply(struct cmd_ctx *ctx, const struct resp_arg *expire, int flags,
                                   int unit, const char *cmd, long long *ms)
{
    if (!cmd_get_ll_or_reply(ctx, expire, ms))
        return false;
    if (*ms <= 0 || (unit == UNIT_SECONDS && *ms > LLONG_MAX / 1000)) {
        reply_expire_time_error(ctx, cmd);
        return false;
    }
    if (unit == UNIT_SECONDS)
        *ms *= 1000;
    if ((flags & SET_PX) || (flags & SET_EX))
        *ms = (long long)((uint64_t)*ms + (uint64_t)ctx->now); /* wraps negative on overflow */
    if (*ms <= 0) {
        reply_expire_time_error(ctx, cmd);
        return false;
    }
    return true;
}

/*
 * Redis getGenericCommand: replies with the value or nil; false (after a
 * WRONGTYPE reply) when the key holds another type.  *found says whether a
 * string value was replied.
 */
static bool get_generic(struct cmd_ctx *ctx, bool *found)
{
    struct object *o = cmd_lookup_read(ctx, &ctx->argv[1]);
    *found = false;
    if (o == NULL) {
        reply_null(ctx->out);
        return true;
    }
    if (object_type(o) != OBJ_STRING) {
        reply_wrongtype(ctx->out);
        return false;
    }
    reply_object(ctx->out, o);
    *found = true;
    return true;
}

/*
 * Redis setKey's reports once the store has set key: "new" when that created
 * it (added), and the change.  Always inlined, as set_key and set_value are:
 * out of line they cost SET's handler 22 instructions more than before it
 * reported anything, inlined 5 (callgrind, cmd_set inclusive).
 */
static inline __attribute__((always_inline)) void key_set(struct cmd_ctx *ctx, const struct resp_arg *key, int added)
{
    if (added)
        cmd_notify(ctx, NOTIFY_NEW, "new", key);
    cmd_modified(ctx, key);
}

/* Redis setKey: store val (the store takes it) under key */
static inline __attribute__((always_inline)) void set_key(struct cmd_ctx *ctx, const struct resp_arg *key,
                                                          struct object *val, int store_flags)
{
    key_set(ctx, key, store_set(ctx->store, ctx->db, key->ptr, key->len, val, store_flags));
}

/*
 * set_key with the string val, built in the key's entry.  lookup: the set is Redis's lookupKeyWrite
 * of the key too (an access; a key past its TTL expires first).  Else the caller looked it up, and
 * STORE_ACCESS in store_flags counts one more access, as Redis's setKey's own lookup after it.
 */
static inline __attribute__((always_inline)) void set_value(struct cmd_ctx *ctx, const struct resp_arg *key,
                                                            const struct resp_arg *val, int store_flags,
                                                            bool lookup)
{
    key_set(ctx, key,
            store_set_string(ctx->store, ctx->db, key->ptr, key->len, val->ptr, val->len, store_flags,
                             lookup ? ctx->now : -1));
}

void string_set_key(struct cmd_ctx *ctx, const struct resp_arg *key, struct object *val, int store_flags)
{
    set_key(ctx, key, val, store_flags);
}

long long string_max_bulk_len(const struct cmd_ctx *ctx)
{
    return ctx->config ? ctx->config->proto_max_bulk_len : DEFAULT_PROTO_MAX_BULK_LEN;
}

enum set_reply { SETR_OK, SETR_NX }; /* +OK/nil, or :1/:0 (SETNX) */

/* Redis setGenericCommand */
static void set_generic(struct cmd_ctx *ctx, int flags, const struct resp_arg *key,
                        const struct resp_arg *val, const struct resp_arg *expire, int unit,
                        enum set_reply style, const char *cmd)
{
    long long ms = 0;
    bool found;

    if (expire && !get_expire_ms_or_reply(ctx, expire, flags, unit, cmd, &ms))
        return;

    if (flags & SET_GET) {
        bool had;
        if (!get_generic(ctx, &had))
            return;
    }

    /* the key is looked up (lookupKeyWrite) here for NX and XX, else with the set */
    bool cond = (flags & (SET_NX | SET_XX)) != 0;
    found = cond && cmd_lookup_write(ctx, key) != NULL;
    if (((flags & SET_NX) && found) || ((flags & SET_XX) && !found)) {
        if (!(flags & SET_GET)) {
            if (style == SETR_NX)
                reply_int(ctx->out, 0);
            else
                reply_null(ctx->out);
        }
        return;
    }

    set_value(ctx, key, val, (flags & SET_KEEPTTL) ? STORE_KEEPTTL : 0, !cond);
    cmd_notify(ctx, NOTIFY_STRING, "set", key);
    if (expire) {
        store_set_expire(ctx->store, ctx->db, key->ptr, key->len, ms, ctx->now);
        cmd_notify(ctx, NOTIFY_GENERIC, "expire", key);
        if (cmd_propagating(ctx) && !(flags & SET_PXAT)) { /* as SET key value PXAT ms (Redis 7.0) */
            char num[24];
            struct resp_arg a[5] = {{"SET", 3}, *key, *val, {"PXAT", 4},
                                    {num, (size_t)snprintf(num, sizeof num, "%lld", ms)}};
            cmd_propagate(ctx, 5, a);
        }
    }

    if (!(flags & SET_GET)) {
        if (style == SETR_NX)
            reply_int(ctx->out, 1);
        else
            reply_ok(ctx->out);
    }
}

/* ---- handlers ------------------------------------------------------------ */

static void cmd_get(struct cmd_ctx *ctx)
{
    bool found;
    get_generic(ctx, &found);
}

static void cmd_set(struct cmd_ctx *ctx)
{
    const struct resp_arg *expire = NULL;
    int unit = UNIT_SECONDS;
    int flags = 0;

    if (!parse_extended_or_reply(ctx, &flags, &unit, &expire, PARSE_SET))
        return;
    set_generic(ctx, flags, &ctx->argv[1], &ctx->argv[2], expire, unit, SETR_OK, "set");
}

static void cmd_setnx(struct cmd_ctx *ctx)
{
    set_generic(ctx, SET_NX, &ctx->argv[1], &ctx->argv[2], NULL, 0, SETR_NX, "setnx");
}

static void cmd_setex(struct cmd_ctx *ctx)
{
    set_generic(ctx, SET_EX, &ctx->argv[1], &ctx->argv[3], &ctx->argv[2], UNIT_SECONDS, SETR_OK,
                "setex");
}

static void cmd_psetex(struct cmd_ctx *ctx)
{
    set_generic(ctx, SET_PX, &ctx->argv[1], &ctx->argv[3], &ctx->argv[2], UNIT_MILLISECONDS,
                SETR_OK, "psetex");
}

static void cmd_getset(struct cmd_ctx *ctx)
{
    bool found;
    if (!get_generic(ctx, &found))
        return;
    set_value(ctx, &ctx->argv[1], &ctx->argv[2], STORE_ACCESS, false); /* GET's lookup, then setKey's */
    cmd_notify(ctx, NOTIFY_STRING, "set", &ctx->argv[1]);
}

static void cmd_getdel(struct cmd_ctx *ctx)
{
    bool found;
    if (!get_generic(ctx, &found))
        return;
    if (found && store_delete(ctx->store, ctx->db, ctx->argv[1].ptr, ctx->argv[1].len, ctx->now))
        cmd_changed(ctx, NOTIFY_GENERIC, "del", &ctx->argv[1]);
}

static void cmd_getex(struct cmd_ctx *ctx)
{
    const struct resp_arg *expire = NULL;
    const struct resp_arg *key = &ctx->argv[1];
    int unit = UNIT_SECONDS;
    int flags = 0;
    long long ms = 0;
    struct object *o;

    if (!parse_extended_or_reply(ctx, &flags, &unit, &expire, PARSE_GET))
        return;

    o = cmd_lookup_read(ctx, key);
    if (o == NULL) {
        reply_null(ctx->out);
        return;
    }
    if (object_type(o) != OBJ_STRING) {
        reply_wrongtype(ctx->out);
        return;
    }
    if (expire && !get_expire_ms_or_reply(ctx, expire, flags, unit, "getex", &ms))
        return;

    /* reply before the key may be deleted */
    reply_object(ctx->out, o);

    if (((flags & SET_PXAT) || (flags & SET_EXAT)) && ms <= ctx->now) {
        store_delete(ctx->store, ctx->db, key->ptr, key->len, ctx->now);
        cmd_changed(ctx, NOTIFY_GENERIC, "del", key);
        if (cmd_propagating(ctx))
            cmd_propagate_key(ctx, "DEL", key, NULL);
    } else if (expire) {
        store_set_expire(ctx->store, ctx->db, key->ptr, key->len, ms, ctx->now);
        cmd_changed(ctx, NOTIFY_GENERIC, "expire", key);
        if (cmd_propagating(ctx))
            cmd_propagate_key(ctx, "PEXPIREAT", key, &ms);
    } else if ((flags & SET_PERSIST) && store_persist(ctx->store, ctx->db, key->ptr, key->len, ctx->now)) {
        cmd_changed(ctx, NOTIFY_GENERIC, "persist", key);
        if (cmd_propagating(ctx))
            cmd_propagate_key(ctx, "PERSIST", key, NULL);
    }
}

static void cmd_mget(struct cmd_ctx *ctx)
{
    reply_array(ctx->out, ctx->argc - 1);
    for (int j = 1; j < ctx->argc; j++) {
        struct object *o = cmd_lookup_read(ctx, &ctx->argv[j]);
        if (o == NULL || object_type(o) != OBJ_STRING)
            reply_null(ctx->out);
        else
            reply_object(ctx->out, o);
    }
}

static void mset_generic(struct cmd_ctx *ctx, bool nx, const char *cmd)
{
    if ((ctx->argc % 2) == 0) {
        reply_errorf(ctx->out, "ERR wrong number of arguments for '%s' command", cmd);
        return;
    }
    if (nx) {
        for (int j = 1; j < ctx->argc; j += 2) {
            if (cmd_lookup_write(ctx, &ctx->argv[j]) != NULL) {
                reply_int(ctx->out, 0);
                return;
            }
        }
    }
    for (int j = 1; j < ctx->argc; j += 2) {
        /* setKey looks the key up first: a key past its TTL expires (expired_keys, "expired") before
         * the new one is added ("new"); MSETNX's lookups above did that already */
        set_value(ctx, &ctx->argv[j], &ctx->argv[j + 1], 0, !nx);
        cmd_notify(ctx, NOTIFY_STRING, "set", &ctx->argv[j]);
    }
    if (nx)
        reply_int(ctx->out, 1);
    else
        reply_ok(ctx->out);
}

static void cmd_mset(struct cmd_ctx *ctx)
{
    mset_generic(ctx, false, "mset");
}

static void cmd_msetnx(struct cmd_ctx *ctx)
{
    mset_generic(ctx, true, "msetnx");
}

/* Redis incrDecrCommand */
static void incr_decr(struct cmd_ctx *ctx, long long incr)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct object *o = cmd_lookup_write(ctx, key);
    long long value = 0;

    if (o != NULL) {
        size_t len;
        const char *p;
        if (object_type(o) != OBJ_STRING) {
            reply_wrongtype(ctx->out);
            return;
        }
        p = object_string_ptr(o, &len);
        if (!util_str_to_ll(p, len, &value)) {
            reply_not_integer(ctx->out);
            return;
        }
    }
    if ((incr < 0 && value < 0 && incr < (LLONG_MIN - value)) ||
        (incr > 0 && value > 0 && incr > (LLONG_MAX - value))) {
        reply_error(ctx->out, "ERR increment or decrement would overflow");
        return;
    }
    value += incr;
    /* dbOverwrite keeps the TTL */
    set_key(ctx, key, object_string_from_ll(value), STORE_KEEPTTL);
    cmd_notify(ctx, NOTIFY_STRING, "incrby", key);
    reply_int(ctx->out, value);
}

static void cmd_incr(struct cmd_ctx *ctx)
{
    incr_decr(ctx, 1);
}

static void cmd_decr(struct cmd_ctx *ctx)
{
    incr_decr(ctx, -1);
}

static void cmd_incrby(struct cmd_ctx *ctx)
{
    long long incr;
    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &incr))
        return;
    incr_decr(ctx, incr);
}

static void cmd_decrby(struct cmd_ctx *ctx)
{
    long long incr;
    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &incr))
        return;
    /* negating LLONG_MIN would overflow */
    if (incr == LLONG_MIN) {
        reply_error(ctx->out, "ERR decrement would overflow");
        return;
    }
    incr_decr(ctx, -incr);
}

static void cmd_incrbyfloat(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct object *o = cmd_lookup_write(ctx, key);
    long double value = 0, incr;
    char buf[5 * 1024 + 32];
    int len;

    if (o != NULL) {
        size_t n;
        const char *p;
        if (object_type(o) != OBJ_STRING) {
            reply_wrongtype(ctx->out);
            return;
        }
        p = object_string_ptr(o, &n);
        if (!util_str_to_ld(p, n, &value)) {
            reply_error(ctx->out, "ERR value is not a valid float");
            return;
        }
    }
    if (!util_str_to_ld(ctx->argv[2].ptr, ctx->argv[2].len, &incr)) {
        reply_error(ctx->out, "ERR value is not a valid float");
        return;
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        reply_error(ctx->out, "ERR increment would produce NaN or Infinity");
        return;
    }
    len = util_ld_to_str(buf, sizeof(buf), value);
    struct object *result = object_string_create(buf, (size_t)len);
    object_string_mark_float(result);
    set_key(ctx, key, result, STORE_KEEPTTL);
    cmd_notify(ctx, NOTIFY_STRING, "incrbyfloat", key);
    reply_bulk(ctx->out, buf, (size_t)len);
    if (cmd_propagating(ctx)) { /* as SET key value KEEPTTL: float formatting may differ on replay */
        struct resp_arg a[4] = {{"SET", 3}, ctx->argv[1], {buf, (size_t)len}, {"KEEPTTL", 7}};
        cmd_propagate(ctx, 4, a);
    }
}

static void cmd_append(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    const struct resp_arg *val = &ctx->argv[2];
    struct object *o = cmd_lookup_write(ctx, key);
    size_t totlen;

    if (o == NULL) {
        set_value(ctx, key, val, 0, false);
        totlen = val->len;
    } else {
        if (object_type(o) != OBJ_STRING) {
            reply_wrongtype(ctx->out);
            return;
        }
        if (!check_string_length_or_reply(ctx, (long long)object_string_len(o),
                                          (long long)val->len))
            return;
        totlen = object_string_append(o, val->ptr, val->len);
        cmd_modified(ctx, key);
    }
    cmd_notify(ctx, NOTIFY_STRING, "append", key);
    reply_int(ctx->out, (long long)totlen);
}

static void cmd_strlen(struct cmd_ctx *ctx)
{
    struct object *o = cmd_lookup_read(ctx, &ctx->argv[1]);
    if (o == NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    if (object_type(o) != OBJ_STRING) {
        reply_wrongtype(ctx->out);
        return;
    }
    reply_int(ctx->out, (long long)object_string_len(o));
}

/* GETRANGE and SUBSTR */
static void cmd_getrange(struct cmd_ctx *ctx)
{
    long long start, end;
    struct object *o;
    const char *str;
    size_t slen;

    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &start))
        return;
    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[3], &end))
        return;
    o = cmd_lookup_read(ctx, &ctx->argv[1]);
    if (o == NULL) {
        reply_bulk(ctx->out, "", 0);
        return;
    }
    if (object_type(o) != OBJ_STRING) {
        reply_wrongtype(ctx->out);
        return;
    }
    str = object_string_ptr(o, &slen);

    if (start < 0 && end < 0 && start > end) {
        reply_bulk(ctx->out, "", 0);
        return;
    }
    if (start < 0)
        start = (long long)slen + start;
    if (end < 0)
        end = (long long)slen + end;
    if (start < 0)
        start = 0;
    if (end < 0)
        end = 0;
    if ((unsigned long long)end >= slen)
        end = (long long)slen - 1;
    if (start > end || slen == 0)
        reply_bulk(ctx->out, "", 0);
    else
        reply_bulk(ctx->out, str + start, (size_t)(end - start + 1));
}

static void cmd_setrange(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    const struct resp_arg *val = &ctx->argv[3];
    long long offset;
    struct object *o;
    size_t newlen;

    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &offset))
        return;
    if (offset < 0) {
        reply_error(ctx->out, "ERR offset is out of range");
        return;
    }

    o = cmd_lookup_write(ctx, key);
    if (o == NULL) {
        /* Return 0 when setting nothing on a non-existing string */
        if (val->len == 0) {
            reply_int(ctx->out, 0);
            return;
        }
        if (!check_string_length_or_reply(ctx, offset, (long long)val->len))
            return;
        o = object_string_create("", 0);
        newlen = object_string_setrange(o, (size_t)offset, val->ptr, val->len);
        set_key(ctx, key, o, 0);
    } else {
        if (object_type(o) != OBJ_STRING) {
            reply_wrongtype(ctx->out);
            return;
        }
        /* Return existing string length when setting nothing */
        if (val->len == 0) {
            reply_int(ctx->out, (long long)object_string_len(o));
            return;
        }
        if (!check_string_length_or_reply(ctx, offset, (long long)val->len))
            return;
        newlen = object_string_setrange(o, (size_t)offset, val->ptr, val->len);
        cmd_modified(ctx, key);
    }
    cmd_notify(ctx, NOTIFY_STRING, "setrange", key);
    reply_int(ctx->out, (long long)newlen);
}

/*
 * LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]: Redis 7.0's
 * lcsCommand, the dynamic-programming table of LCS lengths (bounded by
 * proto-max-bulk-len, as Redis bounds it) walked back from its end to build
 * the string, or the matching ranges, last first.
 */
static void cmd_lcs(struct cmd_ctx *ctx)
{
    const struct object *oa = cmd_lookup_read(ctx, &ctx->argv[1]);
    const struct object *ob = cmd_lookup_read(ctx, &ctx->argv[2]);
    if ((oa && object_type(oa) != OBJ_STRING) || (ob && object_type(ob) != OBJ_STRING)) {
        reply_error(ctx->out, "ERR The specified keys must contain string values");
        return;
    }
    size_t alen = 0, blen = 0;
    const char *a = oa ? object_string_ptr(oa, &alen) : "";
    const char *b = ob ? object_string_ptr(ob, &blen) : "";
    bool getlen = false, getidx = false, withmatchlen = false;
    long long minmatchlen = 0;
    for (int j = 3; j < ctx->argc; j++) {
        if (cmd_arg_is(&ctx->argv[j], "idx")) {
            getidx = true;
        } else if (cmd_arg_is(&ctx->argv[j], "len")) {
            getlen = true;
        } else if (cmd_arg_is(&ctx->argv[j], "withmatchlen")) {
            withmatchlen = true;
        } else if (cmd_arg_is(&ctx->argv[j], "minmatchlen") && j + 1 < ctx->argc) {
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[j + 1], &minmatchlen))
                return;
            if (minmatchlen < 0)
                minmatchlen = 0;
            j++;
        } else {
            reply_syntax_error(ctx->out);
            return;
        }
    }
    if (getidx && getlen) {
        reply_error(ctx->out, "ERR If you want both the length and indexes, please just use IDX.");
        return;
    }
    if (alen >= UINT32_MAX - 1 || blen >= UINT32_MAX - 1) {
        reply_error(ctx->out, "ERR String too long for LCS");
        return;
    }
    unsigned long long cells = (unsigned long long)(alen + 1) * (blen + 1);
    if (cells * sizeof(uint32_t) > (unsigned long long)ctx->config->proto_max_bulk_len) {
        reply_error(ctx->out, "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
        return;
    }
    uint32_t *dp = mem_alloc((size_t)cells * sizeof(uint32_t));
#define LCS(i, j) dp[(j) + (i) * (blen + 1)]
    for (size_t i = 0; i <= alen; i++) {
        for (size_t j = 0; j <= blen; j++) {
            if (i == 0 || j == 0)
                LCS(i, j) = 0;
            else if (a[i - 1] == b[j - 1])
                LCS(i, j) = LCS(i - 1, j - 1) + 1;
            else
                LCS(i, j) = LCS(i - 1, j) > LCS(i, j - 1) ? LCS(i - 1, j) : LCS(i, j - 1);
        }
    }
    uint32_t idx = LCS(alen, blen);
    bool computelcs = getidx || !getlen;
    char *result = computelcs ? mem_alloc(idx ? idx : 1) : NULL;
    struct reply ranges; /* IDX's matches, counted before their array header is written */
    reply_init(&ranges);
    ranges.resp = ctx->out->resp;
    long long nranges = 0;
    /* a range is unset while arange_start is alen */
    size_t arange_start = alen, arange_end = 0, brange_start = 0, brange_end = 0;
    size_t i = alen, j = blen;
    while (computelcs && i > 0 && j > 0) {
        bool emit_range = false;
        if (a[i - 1] == b[j - 1]) {
            result[idx - 1] = a[i - 1];
            if (arange_start == alen) {
                arange_start = arange_end = i - 1;
                brange_start = brange_end = j - 1;
            } else if (arange_start == i && brange_start == j) { /* contiguous: extend backward */
                arange_start--;
                brange_start--;
            } else {
                emit_range = true;
            }
            if (arange_start == 0 || brange_start == 0) /* the first byte of one string: the loop ends */
                emit_range = true;
            idx--, i--, j--;
        } else {
            if (LCS(i - 1, j) > LCS(i, j - 1))
                i--;
            else
                j--;
            if (arange_start != alen)
                emit_range = true;
        }
        long long match_len = (long long)(arange_end - arange_start + 1);
        if (emit_range) {
            if (getidx && (minmatchlen == 0 || match_len >= minmatchlen)) {
                reply_array(&ranges, 2 + withmatchlen);
                reply_array(&ranges, 2);
                reply_int(&ranges, (long long)arange_start);
                reply_int(&ranges, (long long)arange_end);
                reply_array(&ranges, 2);
                reply_int(&ranges, (long long)brange_start);
                reply_int(&ranges, (long long)brange_end);
                if (withmatchlen)
                    reply_int(&ranges, match_len);
                nranges++;
            }
            arange_start = alen;
        }
    }
    if (getidx) {
        reply_map(ctx->out, 2);
        reply_bulk_cstr(ctx->out, "matches");
        reply_array(ctx->out, nranges);
        reply_raw(ctx->out, ranges.buf, ranges.len);
        reply_bulk_cstr(ctx->out, "len");
        reply_int(ctx->out, LCS(alen, blen));
    } else if (getlen) {
        reply_int(ctx->out, idx);
    } else {
        reply_bulk(ctx->out, result, LCS(alen, blen));
    }
#undef LCS
    reply_deinit(&ranges);
    mem_release(result);
    mem_release(dp);
}

/* ---- table --------------------------------------------------------------- */

/* arity, flags, key positions and ACL categories as Redis 7.0.15's COMMAND
 * INFO reports them */
const struct command command_family_string[] = {
    {"get", cmd_get, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @string @fast"},
    {"set", cmd_set, -3, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, ROUTE_OWNER, "@write @string @slow"},
    {"setnx", cmd_setnx, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @string @fast"},
    {"setex", cmd_setex, 4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, ROUTE_OWNER, "@write @string @slow"},
    {"psetex", cmd_psetex, 4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, ROUTE_OWNER,
     "@write @string @slow"},
    {"getset", cmd_getset, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @string @fast"},
    {"getdel", cmd_getdel, 2, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @string @fast"},
    {"getex", cmd_getex, -2, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @string @fast"},
    {"mget", cmd_mget, -2, CMD_READONLY | CMD_FAST, 1, -1, 1, ROUTE_SPLIT_MGET,
     "@read @string @fast"},
    {"mset", cmd_mset, -3, CMD_WRITE | CMD_DENYOOM, 1, -1, 2, ROUTE_SPLIT_OK,
     "@write @string @slow"},
    {"msetnx", cmd_msetnx, -3, CMD_WRITE | CMD_DENYOOM, 1, -1, 2, ROUTE_MSETNX,
     "@write @string @slow"},
    {"incr", cmd_incr, 2, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @string @fast"},
    {"decr", cmd_decr, 2, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @string @fast"},
    {"incrby", cmd_incrby, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @string @fast"},
    {"decrby", cmd_decrby, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @string @fast"},
    {"incrbyfloat", cmd_incrbyfloat, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @string @fast"},
    {"append", cmd_append, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @string @fast"},
    {"strlen", cmd_strlen, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @string @fast"},
    {"getrange", cmd_getrange, 4, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @string @slow"},
    {"setrange", cmd_setrange, 4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, ROUTE_OWNER,
     "@write @string @slow"},
    {"substr", cmd_getrange, 4, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @string @slow"},
    {"lcs", cmd_lcs, -3, CMD_READONLY, 1, 2, 1, ROUTE_OWNER, "@read @string @slow"},
};

const size_t command_family_string_count =
    sizeof(command_family_string) / sizeof(command_family_string[0]);
