/*
 * zset: the sorted set command family (Redis's t_zset.c commands).
 *
 * Design: every handler follows its Redis 7.0 counterpart step for step, in
 * the same order of checks, because the order decides which error a client
 * sees: ZADD parses all scores before it looks at the key; the range
 * commands parse their bounds before the lookup; ZUNION/ZINTER/ZDIFF look
 * up (and type-check) every source before they parse WEIGHTS/AGGREGATE;
 * ZSCAN parses its cursor, then looks up the key, then its options.  Scores
 * print through reply_double() (Redis's addReplyDouble), so RESP3 gets
 * doubles, and WITHSCORES in RESP3 nests [member, score] pairs exactly where
 * Redis 7.0 does (ZRANGE family, ZUNION/ZINTER/ZDIFF, ZRANDMEMBER, ZPOPMIN/
 * ZPOPMAX with a count, ZMPOP always).
 *
 * Encodings (include/percore/zset.h) change exactly where Redis 7.0 changes
 * them: a new key is a listpack unless zset-max-listpack-entries is 0 or the
 * first member is longer than zset-max-listpack-value; adding converts to a
 * skiplist; only the STORE commands build small results as listpacks.  After
 * a change the object's encoding is synced (object_collection_set) so OBJECT
 * ENCODING answers right.  A sorted set that becomes empty is deleted.
 *
 * What a write did is reported (command.h) where Redis 7.0's t_zset.c
 * reports it, in its order and only when something changed: cmd_modified
 * for signalModifiedKey, cmd_notify for notifyKeyspaceEvent ("new" where
 * Redis's dbAdd creates the key, "zadd"/"zincr", "zrem", "zremrangeby*",
 * "zpopmin"/"zpopmax", then "del" when that emptied the key).  The STORE
 * commands report their destination only ("zunionstore" ..., "zrangestore",
 * or "del" for an empty result over an existing key), never their sources.
 *
 * Threading and routing: a handler runs on the shard thread that owns its
 * keys and touches only ctx->store.  Multi-key commands (ZUNIONSTORE and
 * friends, ZRANGESTORE, ZMPOP) are ROUTE_GATHER: the dispatcher brings every
 * key into one store first, so the handlers see all keys in ctx->store.  A
 * changed object is finished before other keys are looked up (the store
 * re-measures recently looked-up objects).
 *
 * Each handler appends exactly one reply to ctx->out.
 */
#include "families.h"
#include "zset_family.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/dict.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/reply.h"
#include "percore/set.h"
#include "percore/store.h"
#include "percore/util.h"
#include "percore/zset.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NANERR "ERR resulting score is not a number (NaN)"

enum { ZSET_MIN = 0, ZSET_MAX = 1 };

/* ---- helpers ------------------------------------------------------------- */

static inline struct zset *zobj(const struct object *o)
{
    return object_collection_ptr(o);
}

static size_t cfg_entries(const struct cmd_ctx *ctx)
{
    long long v = ctx->config ? ctx->config->zset_max_listpack_entries : 128;
    return v < 0 ? 0 : (size_t)v;
}

static size_t cfg_value(const struct cmd_ctx *ctx)
{
    long long v = ctx->config ? ctx->config->zset_max_listpack_value : 64;
    return v < 0 ? 0 : (size_t)v;
}

/* the object's encoding follows its zset after a conversion */
static void sync_encoding(struct object *o)
{
    struct zset *z = zobj(o);
    if (object_collection_encoding(o) != (unsigned)zset_encoding(z))
        object_collection_set(o, zset_encoding(z), z);
}

static struct object *zset_object(struct zset *z)
{
    return object_collection_create(OBJ_ZSET, zset_encoding(z), z);
}

/* delete key when its sorted set became empty, with Redis's "del" event (after the command's own) */
static void delete_if_empty(struct cmd_ctx *ctx, const struct resp_arg *key, struct object *o)
{
    if (zset_length(zobj(o)) != 0)
        return;
    store_delete(ctx->store, ctx->db, key->ptr, key->len, ctx->now);
    cmd_notify(ctx, NOTIFY_GENERIC, "del", key);
}

void zset_put_destination(struct cmd_ctx *ctx, const struct resp_arg *dstkey, struct zset *dst, const char *event,
                          long long dirty)
{
    size_t len = zset_length(dst);
    if (len == 0) {
        zset_destroy(&dst);
        reply_int(ctx->out, 0);
        if (store_delete(ctx->store, ctx->db, dstkey->ptr, dstkey->len, ctx->now))
            cmd_changed(ctx, NOTIFY_GENERIC, "del", dstkey);
        return;
    }
    cmd_lookup_write(ctx, dstkey); /* an expired destination goes first, as in setKey */
    if (store_set(ctx->store, ctx->db, dstkey->ptr, dstkey->len, zset_object(dst), 0))
        cmd_notify(ctx, NOTIFY_NEW, "new", dstkey);
    cmd_modified_n(ctx, dstkey, dirty);
    reply_int(ctx->out, (long long)len);
    cmd_notify(ctx, NOTIFY_ZSET, event, dstkey);
}

/* a member and its score, as WITHSCORES emits it (nested pair in RESP3 when asked) */
static void reply_member(struct reply *out, const char *p, size_t n, double score, bool withscores,
                         bool nested)
{
    if (nested)
        reply_array(out, 2);
    reply_bulk(out, p, n);
    if (withscores)
        reply_double(out, score);
}

/* ---- ZADD ZINCRBY ---------------------------------------------------------- */

/* a new sorted set goes into the store once filled (never empty), with Redis's "new" event; an old
 * one syncs its encoding */
static void zadd_finish(struct cmd_ctx *ctx, const struct resp_arg *key, struct object *o,
                        struct zset *z, bool created)
{
    if (!created) {
        sync_encoding(o);
    } else if (zset_length(z)) {
        store_set(ctx->store, ctx->db, key->ptr, key->len, zset_object(z), 0);
        cmd_notify(ctx, NOTIFY_NEW, "new", key);
    } else {
        zset_destroy(&z);
    }
}

/* Redis zaddGenericCommand */
static void zadd_generic(struct cmd_ctx *ctx, int flags)
{
    const struct resp_arg *key = &ctx->argv[1];
    int scoreidx = 2, ch = 0;
    long elements;
    long added = 0, updated = 0, processed = 0;
    double score = 0, *scores = NULL;
    bool wrong;

    while (scoreidx < ctx->argc) {
        const struct resp_arg *opt = &ctx->argv[scoreidx];
        if (cmd_arg_is(opt, "nx"))
            flags |= ZADD_IN_NX;
        else if (cmd_arg_is(opt, "xx"))
            flags |= ZADD_IN_XX;
        else if (cmd_arg_is(opt, "ch"))
            ch = 1;
        else if (cmd_arg_is(opt, "incr"))
            flags |= ZADD_IN_INCR;
        else if (cmd_arg_is(opt, "gt"))
            flags |= ZADD_IN_GT;
        else if (cmd_arg_is(opt, "lt"))
            flags |= ZADD_IN_LT;
        else
            break;
        scoreidx++;
    }

    bool incr = flags & ZADD_IN_INCR, nx = flags & ZADD_IN_NX, xx = flags & ZADD_IN_XX;
    bool gt = flags & ZADD_IN_GT, lt = flags & ZADD_IN_LT;

    elements = ctx->argc - scoreidx;
    if (elements % 2 || !elements) {
        reply_syntax_error(ctx->out);
        return;
    }
    elements /= 2;

    if (nx && xx) {
        reply_error(ctx->out, "ERR XX and NX options at the same time are not compatible");
        return;
    }
    if ((gt && nx) || (lt && nx) || (gt && lt)) {
        reply_error(ctx->out, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if (incr && elements > 1) {
        reply_error(ctx->out, "ERR INCR option supports a single increment-element pair");
        return;
    }

    double one;
    scores = elements == 1 ? &one : mem_alloc(sizeof(double) * (size_t)elements);
    for (long j = 0; j < elements; j++)
        if (!cmd_get_double_or_reply(ctx, &ctx->argv[scoreidx + j * 2], &scores[j], NULL))
            goto cleanup;

    struct object *o = cmd_lookup_typed(ctx, key, OBJ_ZSET, true, &wrong);
    if (wrong)
        goto cleanup;
    struct zset *z;
    bool created = false;
    if (o == NULL) {
        if (xx)
            goto reply_to_client;
        if (cfg_entries(ctx) == 0 || cfg_value(ctx) < ctx->argv[scoreidx + 1].len)
            z = zset_create(ZSET_ENC_SKIPLIST);
        else
            z = zset_create(ZSET_ENC_LISTPACK);
        created = true;
    } else {
        z = zobj(o);
    }

    for (long j = 0; j < elements; j++) {
        const struct resp_arg *ele = &ctx->argv[scoreidx + 1 + j * 2];
        double newscore = 0;
        int retflags = 0;
        if (!zset_add(z, scores[j], ele->ptr, ele->len, flags, &retflags, &newscore,
                      cfg_entries(ctx), cfg_value(ctx))) {
            zadd_finish(ctx, key, o, z, created);
            reply_error(ctx->out, NANERR);
            goto cleanup;
        }
        if (retflags & ZADD_OUT_ADDED)
            added++;
        if (retflags & ZADD_OUT_UPDATED)
            updated++;
        if (!(retflags & ZADD_OUT_NOP))
            processed++;
        score = newscore;
    }
    zadd_finish(ctx, key, o, z, created);

reply_to_client:
    if (incr) {
        if (processed)
            reply_double(ctx->out, score);
        else
            reply_null(ctx->out);
    } else {
        reply_int(ctx->out, ch ? added + updated : added);
    }
cleanup:
    if (scores != &one)
        mem_release(scores);
    if (added || updated)
        cmd_changed_n(ctx, NOTIFY_ZSET, incr ? "zincr" : "zadd", key, added + updated);
}

static void cmd_zadd(struct cmd_ctx *ctx)
{
    zadd_generic(ctx, 0);
}

static void cmd_zincrby(struct cmd_ctx *ctx)
{
    zadd_generic(ctx, ZADD_IN_INCR);
}

/* ---- ZREM ZREMRANGEBY* ------------------------------------------------------- */

static void cmd_zrem(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    long long deleted = 0;
    bool wrong;
    struct object *o = cmd_lookup_typed(ctx, key, OBJ_ZSET, true, &wrong);
    if (wrong)
        return;
    if (o == NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    struct zset *z = zobj(o);
    for (int j = 2; j < ctx->argc; j++) {
        if (zset_delete(z, ctx->argv[j].ptr, ctx->argv[j].len))
            deleted++;
        if (zset_length(z) == 0)
            break;
    }
    if (deleted)
        cmd_notify(ctx, NOTIFY_ZSET, "zrem", key);
    delete_if_empty(ctx, key, o);
    if (deleted)
        cmd_modified_n(ctx, key, deleted);
    reply_int(ctx->out, deleted);
}

enum zrange_type { ZRANGE_AUTO = 0, ZRANGE_RANK, ZRANGE_SCORE, ZRANGE_LEX };
enum zrange_dir { ZDIR_AUTO = 0, ZDIR_FORWARD, ZDIR_REVERSE };

static const char *const zremrange_event[] = {
    [ZRANGE_RANK] = "zremrangebyrank", [ZRANGE_SCORE] = "zremrangebyscore", [ZRANGE_LEX] = "zremrangebylex"};

/* Redis zremrangeGenericCommand */
static void zremrange_generic(struct cmd_ctx *ctx, enum zrange_type type)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct zset_range range;
    struct zset_lex_range lex;
    long long start = 0, end = 0;
    size_t deleted = 0;
    bool wrong;

    if (type == ZRANGE_RANK) {
        if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &start) ||
            !cmd_get_ll_or_reply(ctx, &ctx->argv[3], &end))
            return;
    } else if (type == ZRANGE_SCORE) {
        if (!zset_parse_range(ctx->argv[2].ptr, ctx->argv[2].len, ctx->argv[3].ptr, ctx->argv[3].len,
                              &range)) {
            reply_error(ctx->out, "ERR min or max is not a float");
            return;
        }
    } else {
        if (!zset_parse_lex_range(ctx->argv[2].ptr, ctx->argv[2].len, ctx->argv[3].ptr,
                                  ctx->argv[3].len, &lex)) {
            reply_error(ctx->out, "ERR min or max not valid string range item");
            return;
        }
    }

    struct object *o = cmd_lookup_typed(ctx, key, OBJ_ZSET, true, &wrong);
    if (wrong)
        return;
    if (o == NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    struct zset *z = zobj(o);

    if (type == ZRANGE_RANK) {
        long long llen = (long long)zset_length(z);
        if (start < 0)
            start = llen + start;
        if (end < 0)
            end = llen + end;
        if (start < 0)
            start = 0;
        if (start > end || start >= llen) {
            reply_int(ctx->out, 0);
            return;
        }
        if (end >= llen)
            end = llen - 1;
        deleted = zset_delete_rank(z, (size_t)start, (size_t)end);
    } else if (type == ZRANGE_SCORE) {
        deleted = zset_delete_score(z, &range);
    } else {
        deleted = zset_delete_lex(z, &lex);
    }
    if (deleted) {
        cmd_changed_n(ctx, NOTIFY_ZSET, zremrange_event[type], key, (long long)deleted);
        delete_if_empty(ctx, key, o);
    }
    reply_int(ctx->out, (long long)deleted);
}

static void cmd_zremrangebyrank(struct cmd_ctx *ctx)
{
    zremrange_generic(ctx, ZRANGE_RANK);
}

static void cmd_zremrangebyscore(struct cmd_ctx *ctx)
{
    zremrange_generic(ctx, ZRANGE_SCORE);
}

static void cmd_zremrangebylex(struct cmd_ctx *ctx)
{
    zremrange_generic(ctx, ZRANGE_LEX);
}

/* ---- ZRANGE family -------------------------------------------------------------- */

/*
 * Redis's zrange_result_handler: a client reply or a destination zset
 * (ZRANGESTORE).  Client replies whose length is unknown up front (BYSCORE,
 * BYLEX) are encoded into a scratch buffer and copied behind the header.
 */
struct zrange_out {
    struct cmd_ctx *ctx;
    bool store;               /* ZRANGESTORE */
    const struct resp_arg *dstkey;
    struct zset *dst;         /* store: the result being built */
    bool withscores;          /* emit scores */
    bool nested;              /* RESP3 pairs */
    bool deferred;            /* client: length unknown, using buf */
    struct reply buf;         /* deferred client output */
    struct reply *w;          /* where elements go */
};

static void zout_init(struct zrange_out *h, struct cmd_ctx *ctx, bool store)
{
    memset(h, 0, sizeof(*h));
    h->ctx = ctx;
    h->store = store;
    h->w = ctx->out;
}

static void zout_scores(struct zrange_out *h)
{
    h->withscores = true;
    h->nested = h->ctx->out->resp > 2;
}

static void zout_begin(struct zrange_out *h, long length)
{
    if (h->store) {
        h->dst = zset_create(length > (long)cfg_entries(h->ctx) ? ZSET_ENC_SKIPLIST
                                                                : ZSET_ENC_LISTPACK);
        return;
    }
    if (length > 0) {
        reply_array(h->ctx->out, h->withscores && h->ctx->out->resp == 2 ? length * 2 : length);
        return;
    }
    h->deferred = true;
    reply_init(&h->buf);
    h->buf.resp = h->ctx->out->resp;
    h->w = &h->buf;
}

static void zout_emit(struct zrange_out *h, const char *p, size_t n, double score)
{
    if (h->store) {
        int flags;
        zset_add(h->dst, score, p, n, 0, &flags, NULL, cfg_entries(h->ctx), cfg_value(h->ctx));
        return;
    }
    reply_member(h->w, p, n, score, h->withscores, h->nested);
}

static void zout_finalize(struct zrange_out *h, size_t count)
{
    struct cmd_ctx *ctx = h->ctx;
    if (h->store) {
        zset_put_destination(ctx, h->dstkey, h->dst, "zrangestore", 1);
        return;
    }
    if (!h->deferred)
        return;
    reply_array(ctx->out, h->withscores && ctx->out->resp == 2 ? (long long)count * 2 : (long long)count);
    if (h->buf.len)
        reply_raw(ctx->out, h->buf.buf, h->buf.len);
    reply_deinit(&h->buf);
}

/* Redis genericZrangebyrankCommand */
static void zrange_rank(struct zrange_out *h, struct zset *z, long long start, long long end,
                        bool reverse)
{
    long long llen = (long long)zset_length(z);
    if (start < 0)
        start = llen + start;
    if (end < 0)
        end = llen + end;
    if (start < 0)
        start = 0;
    if (start > end || start >= llen) {
        zout_begin(h, 0);
        zout_finalize(h, 0);
        return;
    }
    if (end >= llen)
        end = llen - 1;
    long long rangelen = end - start + 1;
    zout_begin(h, (long)rangelen);
    struct zset_iter it;
    zset_iter_rank(z, (size_t)start, reverse, &it);
    for (long long i = 0; i < rangelen && it.valid; i++) {
        size_t n;
        const char *p = zset_iter_member(&it, &n);
        zout_emit(h, p, n, zset_iter_scoreval(&it));
        zset_iter_step(&it, reverse);
    }
    zout_finalize(h, (size_t)rangelen);
}

/* Redis genericZrangebyscoreCommand */
static void zrange_score(struct zrange_out *h, struct zset *z, const struct zset_range *r,
                         long long offset, long long limit, bool reverse)
{
    size_t rangelen = 0;
    zout_begin(h, -1);
    if (offset > 0 && offset >= (long long)zset_length(z)) {
        zout_finalize(h, 0);
        return;
    }
    struct zset_iter it;
    zset_iter_score(z, r, reverse, &it);
    while (it.valid && offset--)
        zset_iter_step(&it, reverse);
    while (it.valid && limit--) {
        double score = zset_iter_scoreval(&it);
        if (reverse ? !zset_value_gte_min(score, r) : !zset_value_lte_max(score, r))
            break;
        size_t n;
        const char *p = zset_iter_member(&it, &n);
        rangelen++;
        zout_emit(h, p, n, score);
        zset_iter_step(&it, reverse);
    }
    zout_finalize(h, rangelen);
}

/* Redis genericZrangebylexCommand */
static void zrange_lex(struct zrange_out *h, struct zset *z, const struct zset_lex_range *r,
                       long long offset, long long limit, bool reverse)
{
    size_t rangelen = 0;
    zout_begin(h, -1);
    struct zset_iter it;
    zset_iter_lex(z, r, reverse, &it);
    while (it.valid && offset--)
        zset_iter_step(&it, reverse);
    while (it.valid && limit--) {
        size_t n;
        const char *p = zset_iter_member(&it, &n);
        if (reverse ? !zset_lex_gte_min(p, n, r) : !zset_lex_lte_max(p, n, r))
            break;
        rangelen++;
        zout_emit(h, p, n, h->withscores ? zset_iter_scoreval(&it) : 0);
        zset_iter_step(&it, reverse);
    }
    zout_finalize(h, rangelen);
}

/* Redis zrangeGenericCommand */
static void zrange_generic(struct zrange_out *h, int argc_start, enum zrange_type type,
                           enum zrange_dir dir)
{
    struct cmd_ctx *ctx = h->ctx;
    const struct resp_arg *key = &ctx->argv[argc_start];
    int minidx = argc_start + 1, maxidx = argc_start + 2;
    long long opt_start = 0, opt_end = 0, opt_offset = 0, opt_limit = -1;
    bool opt_withscores = false;
    struct zset_range range;
    struct zset_lex_range lex;
    bool wrong;

    for (int j = argc_start + 3; j < ctx->argc; j++) {
        int leftargs = ctx->argc - j - 1;
        const struct resp_arg *a = &ctx->argv[j];
        if (!h->store && cmd_arg_is(a, "withscores")) {
            opt_withscores = true;
        } else if (cmd_arg_is(a, "limit") && leftargs >= 2) {
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[j + 1], &opt_offset) ||
                !cmd_get_ll_or_reply(ctx, &ctx->argv[j + 2], &opt_limit))
                return;
            j += 2;
        } else if (dir == ZDIR_AUTO && cmd_arg_is(a, "rev")) {
            dir = ZDIR_REVERSE;
        } else if (type == ZRANGE_AUTO && cmd_arg_is(a, "bylex")) {
            type = ZRANGE_LEX;
        } else if (type == ZRANGE_AUTO && cmd_arg_is(a, "byscore")) {
            type = ZRANGE_SCORE;
        } else {
            reply_syntax_error(ctx->out);
            return;
        }
    }
    if (dir == ZDIR_AUTO)
        dir = ZDIR_FORWARD;
    if (type == ZRANGE_AUTO)
        type = ZRANGE_RANK;

    if (opt_limit != -1 && type == ZRANGE_RANK) {
        reply_error(ctx->out,
                    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
        return;
    }
    if (opt_withscores && type == ZRANGE_LEX) {
        reply_error(ctx->out, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return;
    }
    if (dir == ZDIR_REVERSE && (type == ZRANGE_SCORE || type == ZRANGE_LEX)) {
        int tmp = maxidx;
        maxidx = minidx;
        minidx = tmp;
    }

    const struct resp_arg *mina = &ctx->argv[minidx], *maxa = &ctx->argv[maxidx];
    switch (type) {
    case ZRANGE_SCORE:
        if (!zset_parse_range(mina->ptr, mina->len, maxa->ptr, maxa->len, &range)) {
            reply_error(ctx->out, "ERR min or max is not a float");
            return;
        }
        break;
    case ZRANGE_LEX:
        if (!zset_parse_lex_range(mina->ptr, mina->len, maxa->ptr, maxa->len, &lex)) {
            reply_error(ctx->out, "ERR min or max not valid string range item");
            return;
        }
        break;
    default:
        if (!cmd_get_ll_or_reply(ctx, mina, &opt_start) || !cmd_get_ll_or_reply(ctx, maxa, &opt_end))
            return;
        break;
    }

    if (opt_withscores || h->store)
        zout_scores(h);

    struct object *o = cmd_lookup_typed(ctx, key, OBJ_ZSET, false, &wrong);
    if (wrong)
        return;
    if (o == NULL) {
        if (h->store) {
            zout_begin(h, -1);
            zout_finalize(h, 0);
        } else {
            reply_array(ctx->out, 0);
        }
        return;
    }
    struct zset *z = zobj(o);
    bool reverse = dir == ZDIR_REVERSE;
    switch (type) {
    case ZRANGE_SCORE:
        zrange_score(h, z, &range, opt_offset, opt_limit, reverse);
        break;
    case ZRANGE_LEX:
        zrange_lex(h, z, &lex, opt_offset, opt_limit, reverse);
        break;
    default:
        zrange_rank(h, z, opt_start, opt_end, reverse);
        break;
    }
}

static void zrange_client(struct cmd_ctx *ctx, enum zrange_type type, enum zrange_dir dir)
{
    struct zrange_out h;
    zout_init(&h, ctx, false);
    zrange_generic(&h, 1, type, dir);
}

static void cmd_zrange(struct cmd_ctx *ctx)
{
    zrange_client(ctx, ZRANGE_AUTO, ZDIR_AUTO);
}

static void cmd_zrevrange(struct cmd_ctx *ctx)
{
    zrange_client(ctx, ZRANGE_RANK, ZDIR_REVERSE);
}

static void cmd_zrangebyscore(struct cmd_ctx *ctx)
{
    zrange_client(ctx, ZRANGE_SCORE, ZDIR_FORWARD);
}

static void cmd_zrevrangebyscore(struct cmd_ctx *ctx)
{
    zrange_client(ctx, ZRANGE_SCORE, ZDIR_REVERSE);
}

static void cmd_zrangebylex(struct cmd_ctx *ctx)
{
    zrange_client(ctx, ZRANGE_LEX, ZDIR_FORWARD);
}

static void cmd_zrevrangebylex(struct cmd_ctx *ctx)
{
    zrange_client(ctx, ZRANGE_LEX, ZDIR_REVERSE);
}

static void cmd_zrangestore(struct cmd_ctx *ctx)
{
    struct zrange_out h;
    zout_init(&h, ctx, true);
    h.dstkey = &ctx->argv[1];
    zrange_generic(&h, 2, ZRANGE_AUTO, ZDIR_AUTO);
}

/* ---- ZCOUNT ZLEXCOUNT ZCARD ZSCORE ZMSCORE ZRANK ----------------------------- */

static void cmd_zcount(struct cmd_ctx *ctx)
{
    struct zset_range range;
    bool wrong;
    if (!zset_parse_range(ctx->argv[2].ptr, ctx->argv[2].len, ctx->argv[3].ptr, ctx->argv[3].len,
                          &range)) {
        reply_error(ctx->out, "ERR min or max is not a float");
        return;
    }
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_ZSET, false, &wrong);
    if (wrong)
        return;
    reply_int(ctx->out, o ? (long long)zset_count_score(zobj(o), &range) : 0);
}

static void cmd_zlexcount(struct cmd_ctx *ctx)
{
    struct zset_lex_range lex;
    bool wrong;
    if (!zset_parse_lex_range(ctx->argv[2].ptr, ctx->argv[2].len, ctx->argv[3].ptr, ctx->argv[3].len,
                              &lex)) {
        reply_error(ctx->out, "ERR min or max not valid string range item");
        return;
    }
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_ZSET, false, &wrong);
    if (wrong)
        return;
    reply_int(ctx->out, o ? (long long)zset_count_lex(zobj(o), &lex) : 0);
}

static void cmd_zcard(struct cmd_ctx *ctx)
{
    bool wrong;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_ZSET, false, &wrong);
    if (wrong)
        return;
    reply_int(ctx->out, o ? (long long)zset_length(zobj(o)) : 0);
}

static void cmd_zscore(struct cmd_ctx *ctx)
{
    bool wrong;
    double score;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_ZSET, false, &wrong);
    if (wrong)
        return;
    if (o && zset_score(zobj(o), ctx->argv[2].ptr, ctx->argv[2].len, &score))
        reply_double(ctx->out, score);
    else
        reply_null(ctx->out);
}

static void cmd_zmscore(struct cmd_ctx *ctx)
{
    bool wrong;
    double score;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_ZSET, false, &wrong);
    if (wrong)
        return;
    reply_array(ctx->out, ctx->argc - 2);
    for (int j = 2; j < ctx->argc; j++) {
        if (o && zset_score(zobj(o), ctx->argv[j].ptr, ctx->argv[j].len, &score))
            reply_double(ctx->out, score);
        else
            reply_null(ctx->out);
    }
}

static void zrank_generic(struct cmd_ctx *ctx, bool reverse)
{
    bool wrong;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_ZSET, false, &wrong);
    if (wrong)
        return;
    long rank = o ? zset_rank(zobj(o), ctx->argv[2].ptr, ctx->argv[2].len, reverse) : -1;
    if (rank >= 0)
        reply_int(ctx->out, rank);
    else
        reply_null(ctx->out);
}

static void cmd_zrank(struct cmd_ctx *ctx)
{
    zrank_generic(ctx, false);
}

static void cmd_zrevrank(struct cmd_ctx *ctx)
{
    zrank_generic(ctx, true);
}

/* ---- ZPOPMIN ZPOPMAX ZMPOP ------------------------------------------------------- */

/* Redis genericZpopCommand */
static void zpop_generic(struct cmd_ctx *ctx, const struct resp_arg *keyv, int keyc, int where,
                         bool emitkey, long long count, bool nested, bool nil_when_empty)
{
    const struct resp_arg *key = NULL;
    struct object *o = NULL;
    bool wrong;

    for (int idx = 0; idx < keyc; idx++) {
        key = &keyv[idx];
        o = cmd_lookup_typed(ctx, key, OBJ_ZSET, true, &wrong);
        if (wrong)
            return;
        if (o)
            break;
    }
    if (o == NULL) {
        if (nil_when_empty)
            reply_null_array(ctx->out);
        else
            reply_array(ctx->out, 0);
        return;
    }
    if (count == 0) {
        reply_array(ctx->out, 0);
        return;
    }
    if (count == -1)
        count = 1;

    struct zset *z = zobj(o);
    long long llen = (long long)zset_length(z);
    long long rangelen = count > llen ? llen : count;

    if (!nested && !emitkey) {
        reply_array(ctx->out, rangelen * 2);
    } else if (nested && !emitkey) {
        reply_array(ctx->out, rangelen);
    } else if (!nested && emitkey) {
        reply_array(ctx->out, rangelen * 2 + 1);
        reply_bulk(ctx->out, key->ptr, key->len);
    } else {
        reply_array(ctx->out, 2);
        reply_bulk(ctx->out, key->ptr, key->len);
        reply_array(ctx->out, rangelen);
    }

    /* reply first, then remove the popped members as one rank range */
    bool rev = where == ZSET_MAX;
    struct zset_iter it;
    zset_iter_rank(z, 0, rev, &it);
    for (long long i = 0; i < rangelen; i++) {
        size_t n;
        const char *p = zset_iter_member(&it, &n);
        reply_member(ctx->out, p, n, zset_iter_scoreval(&it), true, nested);
        zset_iter_step(&it, rev);
    }
    if (rev)
        zset_delete_rank(z, (size_t)(llen - rangelen), (size_t)llen - 1);
    else
        zset_delete_rank(z, 0, (size_t)rangelen - 1);
    cmd_notify(ctx, NOTIFY_ZSET, rev ? "zpopmax" : "zpopmin", key);
    cmd_modified_n(ctx, key, rangelen);
    delete_if_empty(ctx, key, o);
    if (emitkey && cmd_propagating(ctx)) { /* BZPOP*, [B]ZMPOP: as ZPOPMIN|ZPOPMAX key count, as Redis 7.0 */
        char num[24];
        struct resp_arg a[3] = {{rev ? "ZPOPMAX" : "ZPOPMIN", 7}, *key,
                                {num, (size_t)snprintf(num, sizeof num, "%lld", rangelen)}};
        cmd_propagate(ctx, 3, a);
    }
}

static void zpop_minmax(struct cmd_ctx *ctx, int where)
{
    long long count = -1;
    if (ctx->argc > 3) {
        reply_syntax_error(ctx->out);
        return;
    }
    if (ctx->argc == 3 && !cmd_get_positive_ll_or_reply(ctx, &ctx->argv[2], &count, NULL))
        return;
    bool nested = ctx->out->resp > 2 && count != -1;
    zpop_generic(ctx, &ctx->argv[1], 1, where, false, count, nested, false);
}

static void cmd_zpopmin(struct cmd_ctx *ctx)
{
    zpop_minmax(ctx, ZSET_MIN);
}

static void cmd_zpopmax(struct cmd_ctx *ctx)
{
    zpop_minmax(ctx, ZSET_MAX);
}

/* blocking pops: true when one of keys holds a sorted set (else blocked or nil, or WRONGTYPE replied) */
static bool bzpop_ready_or_reply(struct cmd_ctx *ctx, const struct resp_arg *keys, int n)
{
    for (int j = 0; j < n; j++) {
        bool wrong;
        if (cmd_lookup_typed(ctx, &keys[j], OBJ_ZSET, true, &wrong))
            return true;
        if (wrong)
            return false;
    }
    cmd_block_or_nil(ctx, false);
    return false;
}

/* BZPOPMIN BZPOPMAX key [key ...] timeout: [key, member, score] */
static void bzpop_minmax(struct cmd_ctx *ctx, int where)
{
    if (cmd_block_timeout_or_reply(ctx, &ctx->argv[ctx->argc - 1]) &&
        bzpop_ready_or_reply(ctx, &ctx->argv[1], ctx->argc - 2))
        zpop_generic(ctx, &ctx->argv[1], ctx->argc - 2, where, true, -1, false, true);
}

static void cmd_bzpopmin(struct cmd_ctx *ctx)
{
    bzpop_minmax(ctx, ZSET_MIN);
}

static void cmd_bzpopmax(struct cmd_ctx *ctx)
{
    bzpop_minmax(ctx, ZSET_MAX);
}

/* Redis zmpopGenericCommand: ZMPOP numkeys ..., and BZMPOP timeout numkeys ... (blocking) */
static void zmpop_generic(struct cmd_ctx *ctx, int numkeys_idx, bool blocking)
{
    long long numkeys, count = -1;
    int where;

    if (!cmd_get_range_ll_or_reply(ctx, &ctx->argv[numkeys_idx], 1, LONG_MAX, &numkeys,
                                 "ERR numkeys should be greater than 0"))
        return;
    if (numkeys >= ctx->argc - numkeys_idx - 1) {
        reply_syntax_error(ctx->out);
        return;
    }
    int where_idx = numkeys_idx + (int)numkeys + 1;
    if (cmd_arg_is(&ctx->argv[where_idx], "min")) {
        where = ZSET_MIN;
    } else if (cmd_arg_is(&ctx->argv[where_idx], "max")) {
        where = ZSET_MAX;
    } else {
        reply_syntax_error(ctx->out);
        return;
    }
    for (int j = where_idx + 1; j < ctx->argc; j++) {
        int moreargs = ctx->argc - 1 - j;
        if (count == -1 && cmd_arg_is(&ctx->argv[j], "count") && moreargs) {
            j++;
            if (!cmd_get_range_ll_or_reply(ctx, &ctx->argv[j], 1, LONG_MAX, &count,
                                         "ERR count should be greater than 0"))
                return;
        } else {
            reply_syntax_error(ctx->out);
            return;
        }
    }
    if (count == -1)
        count = 1;
    if (!blocking || bzpop_ready_or_reply(ctx, &ctx->argv[numkeys_idx + 1], (int)numkeys))
        zpop_generic(ctx, &ctx->argv[numkeys_idx + 1], (int)numkeys, where, true, count, true, true);
}

static void cmd_zmpop(struct cmd_ctx *ctx)
{
    zmpop_generic(ctx, 1, false);
}

static void cmd_bzmpop(struct cmd_ctx *ctx)
{
    if (cmd_block_timeout_or_reply(ctx, &ctx->argv[1]))
        zmpop_generic(ctx, 2, true);
}

/* ---- ZRANDMEMBER ------------------------------------------------------------------ */

static _Thread_local uint64_t zrand_state;

static uint64_t zrand(void)
{
    uint64_t x = zrand_state;
    if (x == 0)
        x = ((uint64_t)util_us_time() ^ (uint64_t)(uintptr_t)&zrand_state) | 1;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    zrand_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* all members in rank order, as iterators (ZRANDMEMBER's sampling) */
static struct zset_iter *zset_all(struct zset *z, size_t size)
{
    struct zset_iter *v = mem_alloc(sizeof(*v) * (size ? size : 1));
    struct zset_iter it;
    size_t i = 0;
    for (zset_iter_rank(z, 0, false, &it); it.valid && i < size; zset_iter_step(&it, false))
        v[i++] = it;
    return v;
}

static void reply_iter(struct reply *out, const struct zset_iter *it, bool withscores, bool nested)
{
    size_t n;
    const char *p = zset_iter_member(it, &n);
    reply_member(out, p, n, withscores ? zset_iter_scoreval(it) : 0, withscores, nested);
}

/* Redis zrandmemberWithCountCommand */
static void zrandmember_count(struct cmd_ctx *ctx, long long l, bool withscores)
{
    unsigned long long count, size;
    bool uniq = true, wrong;
    bool nested = withscores && ctx->out->resp > 2;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_ZSET, false, &wrong);
    if (wrong)
        return;
    if (o == NULL) {
        reply_array(ctx->out, 0);
        return;
    }
    struct zset *z = zobj(o);
    size = zset_length(z);
    if (l >= 0) {
        count = (unsigned long long)l;
    } else {
        count = -(unsigned long long)l;
        uniq = false;
    }
    if (count == 0) {
        reply_array(ctx->out, 0);
        return;
    }

    /* case 1: duplicates allowed (or one member) */
    if (!uniq || count == 1) {
        size_t start = ctx->out->len;
        reply_array(ctx->out, withscores && ctx->out->resp == 2 ? (long long)(count * 2) : (long long)count);
        if (zset_encoding(z) == ZSET_ENC_LISTPACK) {
            struct zset_iter *all = zset_all(z, size);
            while (count-- && cmd_reply_under_cap_or_reply(ctx, start))
                reply_iter(ctx->out, &all[zrand() % size], withscores, nested);
            mem_release(all);
        } else {
            while (count-- && cmd_reply_under_cap_or_reply(ctx, start)) {
                const char *p;
                size_t n;
                double score;
                zset_random(z, &p, &n, &score);
                reply_member(ctx->out, p, n, score, withscores, nested);
            }
        }
        return;
    }

    /* case 2: the whole set, in Redis's iteration order (from the highest) */
    if (count >= size) {
        reply_array(ctx->out, withscores && ctx->out->resp == 2 ? (long long)(size * 2) : (long long)size);
        struct zset_iter it;
        for (zset_iter_rank(z, 0, true, &it); it.valid; zset_iter_step(&it, true))
            reply_iter(ctx->out, &it, withscores, nested);
        return;
    }

    reply_array(ctx->out, withscores && ctx->out->resp == 2 ? (long long)(count * 2) : (long long)count);
    if (count * 3 > size || zset_encoding(z) == ZSET_ENC_LISTPACK) {
        /* case 3: a partial Fisher-Yates shuffle of all members */
        struct zset_iter *all = zset_all(z, size);
        for (unsigned long long i = 0; i < count; i++) {
            unsigned long long j = i + zrand() % (size - i);
            struct zset_iter t = all[i];
            all[i] = all[j];
            all[j] = t;
            reply_iter(ctx->out, &all[i], withscores, nested);
        }
        mem_release(all);
        return;
    }

    /* case 4: few members of a big set: random picks, duplicates skipped */
    struct dict *seen = dict_create();
    unsigned long long added = 0;
    while (added < count) {
        const char *p;
        size_t n;
        double score;
        zset_random(z, &p, &n, &score);
        if (dict_add(seen, p, n, NULL) == NULL)
            continue;
        added++;
        reply_member(ctx->out, p, n, score, withscores, nested);
    }
    dict_destroy(&seen);
}

static void cmd_zrandmember(struct cmd_ctx *ctx)
{
    bool wrong;
    if (ctx->argc >= 3) {
        long long l;
        bool withscores = false;
        if (!cmd_get_range_ll_or_reply(ctx, &ctx->argv[2], -LONG_MAX, LONG_MAX, &l, NULL))
            return;
        if (ctx->argc > 4 || (ctx->argc == 4 && !cmd_arg_is(&ctx->argv[3], "withscores"))) {
            reply_syntax_error(ctx->out);
            return;
        } else if (ctx->argc == 4) {
            withscores = true;
            if (l < -LONG_MAX / 2 || l > LONG_MAX / 2) {
                reply_error(ctx->out, "ERR value is out of range");
                return;
            }
        }
        zrandmember_count(ctx, l, withscores);
        return;
    }
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_ZSET, false, &wrong);
    if (wrong)
        return;
    if (o == NULL) {
        reply_null(ctx->out);
        return;
    }
    const char *p;
    size_t n;
    zset_random(zobj(o), &p, &n, NULL);
    reply_bulk(ctx->out, p, n);
}

/* ---- ZSCAN --------------------------------------------------------------------------- */

struct zscan_collect {
    struct reply buf;       /* kept member/score bulk pairs */
    long long kept;         /* members in buf */
    long long items;        /* member + score items visited (Redis counts both) */
    struct scan_options so; /* COUNT and the MATCH filter */
    bool listpack;          /* scores print as the listpack holds them */
};

/*
 * A score as Redis 7.0 ZSCAN prints it: a listpack keeps an integral score
 * within +-LLONG_MAX/2 as an integer (so "100000000000000000"), anything
 * else as %.17g; a skiplist's score goes through ld2string (%.17Lg, which
 * prints a double exactly as %.17g does).
 */
static int zscan_score(char *buf, size_t cap, double d, bool listpack)
{
    if (isinf(d))
        return snprintf(buf, cap, "%s", d > 0 ? "inf" : "-inf");
    if (listpack && d >= -(double)(LLONG_MAX / 2) && d <= (double)(LLONG_MAX / 2)) {
        long long ll = (long long)d;
        if ((double)ll == d)
            return snprintf(buf, cap, "%lld", ll);
    }
    return snprintf(buf, cap, "%.17g", d);
}

static void zscan_one(void *arg, const char *ele, size_t len, double score)
{
    struct zscan_collect *kc = arg;
    char num[64];
    kc->items += 2;
    if (!cmd_scan_match(&kc->so, ele, len))
        return;
    int n = zscan_score(num, sizeof(num), score, kc->listpack);
    reply_bulk(&kc->buf, ele, len);
    reply_bulk(&kc->buf, num, (size_t)n);
    kc->kept++;
}

static void cmd_zscan(struct cmd_ctx *ctx)
{
    uint64_t cursor;
    struct zscan_collect kc;
    bool wrong;

    if (!cmd_scan_cursor_or_reply(ctx, &ctx->argv[2], &cursor))
        return;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_ZSET, false, &wrong);
    if (wrong)
        return;
    if (o == NULL) {
        cmd_scan_reply(ctx, 0, 0, NULL);
        return;
    }

    memset(&kc, 0, sizeof(kc));
    if (!cmd_scan_options_or_reply(ctx, 3, false, &kc.so))
        return;

    struct zset *z = zobj(o);
    reply_init(&kc.buf);
    kc.buf.resp = ctx->out->resp;
    kc.listpack = zset_encoding(z) == ZSET_ENC_LISTPACK;
    if (kc.listpack) {
        cursor = zset_scan(z, 0, zscan_one, &kc);
    } else {
        long long maxiter = kc.so.count > LLONG_MAX / 10 ? LLONG_MAX : kc.so.count * 10;
        do {
            cursor = zset_scan(z, cursor, zscan_one, &kc);
        } while (cursor && maxiter-- && kc.items < kc.so.count);
    }

    cmd_scan_reply(ctx, cursor, kc.kept * 2, &kc.buf);
    reply_deinit(&kc.buf);
}

/* ---- ZUNION ZINTER ZDIFF (+STORE) ZINTERCARD ------------------------------------------- */

enum { SET_OP_UNION = 0, SET_OP_INTER = 1, SET_OP_DIFF = 2 };
enum { AGGR_SUM = 0, AGGR_MIN = 1, AGGR_MAX = 2 };

/* a source of the set algebra: a sorted set, a set (scores 1.0) or nothing */
struct zsrc {
    struct object *obj; /* NULL: missing key */
    double weight;
    size_t len;         /* members */
};

static bool zsrc_find(struct zsrc *s, const char *p, size_t n, double *score)
{
    if (s->obj == NULL)
        return false;
    if (object_type(s->obj) == OBJ_SET) {
        if (!set_is_member(s->obj, p, n))
            return false;
        *score = 1.0;
        return true;
    }
    return zset_score(zobj(s->obj), p, n, score);
}

/* calls fn for every member (a sorted set from its highest, as Redis's
 * zuiNext); stops early when fn returns false */
typedef bool zsrc_fn(void *arg, const char *p, size_t n, double score);

static void zsrc_each(struct zsrc *s, zsrc_fn *fn, void *arg)
{
    if (s->obj == NULL)
        return;
    if (object_type(s->obj) == OBJ_SET) {
        struct set_iter it;
        struct set_member m;
        set_iter_init(&it, s->obj);
        while (set_iter_next(&it, &m))
            if (!fn(arg, m.p, m.n, 1.0))
                return;
        return;
    }
    struct zset_iter it;
    for (zset_iter_rank(zobj(s->obj), 0, true, &it); it.valid; zset_iter_step(&it, true)) {
        size_t n;
        const char *p = zset_iter_member(&it, &n);
        if (!fn(arg, p, n, zset_iter_scoreval(&it)))
            return;
    }
}

static inline void aggregate(double *target, double val, int aggr)
{
    if (aggr == AGGR_SUM) {
        *target = *target + val;
        if (isnan(*target))
            *target = 0.0;
    } else if (aggr == AGGR_MIN) {
        *target = val < *target ? val : *target;
    } else {
        *target = val > *target ? val : *target;
    }
}

struct setop {
    struct zsrc *src;
    long setnum;
    int aggr;
    struct zset *dst;        /* the result (a skiplist while built) */
    size_t maxelelen;        /* longest member added */
    bool cardinality_only;   /* ZINTERCARD */
    unsigned long long cardinality;
    long long limit;         /* ZINTERCARD LIMIT, 0 none */
    struct dict *acc;        /* ZUNION accumulator */
    long cur;                /* ZUNION: source being read */
};

static void dst_add(struct setop *op, const char *p, size_t n, double score)
{
    int flags;
    zset_add(op->dst, score, p, n, 0, &flags, NULL, SIZE_MAX, SIZE_MAX);
    if (n > op->maxelelen)
        op->maxelelen = n;
}

static bool inter_one(void *arg, const char *p, size_t n, double zscore)
{
    struct setop *op = arg;
    double score = op->src[0].weight * zscore, value;
    long j;
    if (isnan(score))
        score = 0;
    for (j = 1; j < op->setnum; j++) {
        if (op->src[j].obj && op->src[j].obj == op->src[0].obj) {
            value = zscore * op->src[j].weight;
            aggregate(&score, value, op->aggr);
        } else if (zsrc_find(&op->src[j], p, n, &value)) {
            value *= op->src[j].weight;
            aggregate(&score, value, op->aggr);
        } else {
            break;
        }
    }
    if (j == op->setnum && op->cardinality_only) {
        op->cardinality++;
        if (op->limit && op->cardinality >= (unsigned long long)op->limit)
            return false;
    } else if (j == op->setnum) {
        dst_add(op, p, n, score);
    }
    return true;
}

static bool union_one(void *arg, const char *p, size_t n, double zscore)
{
    struct setop *op = arg;
    struct dict_entry *existing = NULL, *de;
    double score = op->src[op->cur].weight * zscore;
    if (isnan(score))
        score = 0;
    de = dict_add(op->acc, p, n, &existing);
    if (de) {
        dict_entry_set_double(de, score);
        if (n > op->maxelelen)
            op->maxelelen = n;
    } else {
        double t = dict_entry_double(existing);
        aggregate(&t, score, op->aggr);
        dict_entry_set_double(existing, t);
    }
    return true;
}

static bool diff_one(void *arg, const char *p, size_t n, double zscore)
{
    struct setop *op = arg;
    double value;
    for (long j = 1; j < op->setnum; j++) {
        if ((op->src[j].obj && op->src[j].obj == op->src[0].obj) ||
            zsrc_find(&op->src[j], p, n, &value))
            return true;
    }
    dst_add(op, p, n, zscore);
    return true;
}

/* stable sort by cardinality (glibc's qsort is a merge sort for small arrays) */
static void sort_by_cardinality(struct zsrc *src, long n)
{
    for (long i = 1; i < n; i++) {
        struct zsrc t = src[i];
        long j = i - 1;
        while (j >= 0 && src[j].len > t.len) {
            src[j + 1] = src[j];
            j--;
        }
        src[j + 1] = t;
    }
}

/* Redis zunionInterDiffGenericCommand */
static void zsetop_generic(struct cmd_ctx *ctx, const struct resp_arg *dstkey, int numkeys_idx, int op,
                           bool cardinality_only)
{
    long long setnum;
    int aggr = AGGR_SUM;
    bool withscores = false;
    long long limit = 0;
    int i, j;

    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[numkeys_idx], &setnum))
        return;
    if (setnum < 1) {
        const char *name = op == SET_OP_UNION ? (dstkey ? "zunionstore" : "zunion")
                           : op == SET_OP_INTER ? (dstkey ? "zinterstore" : cardinality_only ? "zintercard" : "zinter")
                                                : (dstkey ? "zdiffstore" : "zdiff");
        reply_errorf(ctx->out, "ERR at least 1 input key is needed for '%s' command", name);
        return;
    }
    if (setnum > ctx->argc - (numkeys_idx + 1)) {
        reply_syntax_error(ctx->out);
        return;
    }

    struct zsrc *src = mem_calloc((size_t)setnum, sizeof(*src));
    for (i = 0, j = numkeys_idx + 1; i < setnum; i++, j++) {
        struct object *obj = cmd_lookup_read(ctx, &ctx->argv[j]);
        if (obj != NULL) {
            if (object_type(obj) != OBJ_ZSET && object_type(obj) != OBJ_SET) {
                mem_release(src);
                reply_wrongtype(ctx->out);
                return;
            }
            src[i].obj = obj;
            src[i].len = object_type(obj) == OBJ_SET ? set_size(obj) : zset_length(zobj(obj));
        }
        src[i].weight = 1.0;
    }

    if (j < ctx->argc) {
        int remaining = ctx->argc - j;
        while (remaining) {
            const struct resp_arg *a = &ctx->argv[j];
            if (op != SET_OP_DIFF && !cardinality_only && remaining >= setnum + 1 &&
                cmd_arg_is(a, "weights")) {
                j++;
                remaining--;
                for (i = 0; i < setnum; i++, j++, remaining--) {
                    if (!cmd_get_double_or_reply(ctx, &ctx->argv[j], &src[i].weight,
                                                 "ERR weight value is not a float")) {
                        mem_release(src);
                        return;
                    }
                }
            } else if (op != SET_OP_DIFF && !cardinality_only && remaining >= 2 &&
                       cmd_arg_is(a, "aggregate")) {
                j++;
                remaining--;
                if (cmd_arg_is(&ctx->argv[j], "sum")) {
                    aggr = AGGR_SUM;
                } else if (cmd_arg_is(&ctx->argv[j], "min")) {
                    aggr = AGGR_MIN;
                } else if (cmd_arg_is(&ctx->argv[j], "max")) {
                    aggr = AGGR_MAX;
                } else {
                    mem_release(src);
                    reply_syntax_error(ctx->out);
                    return;
                }
                j++;
                remaining--;
            } else if (remaining >= 1 && !dstkey && !cardinality_only && cmd_arg_is(a, "withscores")) {
                j++;
                remaining--;
                withscores = true;
            } else if (cardinality_only && remaining >= 2 && cmd_arg_is(a, "limit")) {
                j++;
                remaining--;
                if (!cmd_get_positive_ll_or_reply(ctx, &ctx->argv[j], &limit, "ERR LIMIT can't be negative")) {
                    mem_release(src);
                    return;
                }
                j++;
                remaining--;
            } else {
                mem_release(src);
                reply_syntax_error(ctx->out);
                return;
            }
        }
    }

    if (op != SET_OP_DIFF)
        sort_by_cardinality(src, (long)setnum);

    struct setop so;
    memset(&so, 0, sizeof(so));
    so.src = src;
    so.setnum = (long)setnum;
    so.aggr = aggr;
    so.cardinality_only = cardinality_only;
    so.limit = limit;
    so.dst = zset_create(ZSET_ENC_SKIPLIST);

    if (op == SET_OP_INTER) {
        if (src[0].len > 0)
            zsrc_each(&src[0], inter_one, &so);
    } else if (op == SET_OP_UNION) {
        so.acc = dict_create();
        for (so.cur = 0; so.cur < so.setnum; so.cur++)
            if (src[so.cur].len > 0)
                zsrc_each(&src[so.cur], union_one, &so);
        struct dict_iter it;
        struct dict_entry *de;
        dict_iter_init(&it, so.acc);
        while ((de = dict_iter_next(&it)) != NULL) {
            size_t n;
            const char *p = dict_entry_key(de, &n);
            int flags;
            zset_add(so.dst, dict_entry_double(de), p, n, 0, &flags, NULL, SIZE_MAX, SIZE_MAX);
        }
        dict_destroy(&so.acc);
    } else {
        if (src[0].len > 0)
            zsrc_each(&src[0], diff_one, &so);
    }
    mem_release(src);

    struct zset *dst = so.dst;
    if (dstkey) {
        static const char *const event[] = {
            [SET_OP_UNION] = "zunionstore", [SET_OP_INTER] = "zinterstore", [SET_OP_DIFF] = "zdiffstore"};
        if (zset_length(dst))
            zset_maybe_shrink(dst, so.maxelelen, cfg_entries(ctx), cfg_value(ctx));
        zset_put_destination(ctx, dstkey, dst, event[op], 1);
        return;
    }
    if (cardinality_only) {
        reply_int(ctx->out, (long long)so.cardinality);
    } else {
        size_t length = zset_length(dst);
        bool nested = withscores && ctx->out->resp > 2;
        reply_array(ctx->out, withscores && ctx->out->resp == 2 ? (long long)length * 2 : (long long)length);
        struct zset_iter it;
        for (zset_iter_rank(dst, 0, false, &it); it.valid; zset_iter_step(&it, false))
            reply_iter(ctx->out, &it, withscores, nested);
    }
    zset_destroy(&dst);
}

static void cmd_zunionstore(struct cmd_ctx *ctx)
{
    zsetop_generic(ctx, &ctx->argv[1], 2, SET_OP_UNION, false);
}

static void cmd_zinterstore(struct cmd_ctx *ctx)
{
    zsetop_generic(ctx, &ctx->argv[1], 2, SET_OP_INTER, false);
}

static void cmd_zdiffstore(struct cmd_ctx *ctx)
{
    zsetop_generic(ctx, &ctx->argv[1], 2, SET_OP_DIFF, false);
}

static void cmd_zunion(struct cmd_ctx *ctx)
{
    zsetop_generic(ctx, NULL, 1, SET_OP_UNION, false);
}

static void cmd_zinter(struct cmd_ctx *ctx)
{
    zsetop_generic(ctx, NULL, 1, SET_OP_INTER, false);
}

static void cmd_zdiff(struct cmd_ctx *ctx)
{
    zsetop_generic(ctx, NULL, 1, SET_OP_DIFF, false);
}

static void cmd_zintercard(struct cmd_ctx *ctx)
{
    zsetop_generic(ctx, NULL, 1, SET_OP_INTER, true);
}

/* ---- table ------------------------------------------------------------------------------ */

#define ZW CMD_WRITE
#define ZR CMD_READONLY

const struct command command_family_zset[] = {
    {"zadd", cmd_zadd, -4, ZW | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @sortedset @fast"},
    {"zincrby", cmd_zincrby, 4, ZW | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @sortedset @fast"},
    {"zrem", cmd_zrem, -3, ZW | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @sortedset @fast"},
    {"zscore", cmd_zscore, 3, ZR | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @fast"},
    {"zmscore", cmd_zmscore, -3, ZR | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @fast"},
    {"zcard", cmd_zcard, 2, ZR | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @fast"},
    {"zcount", cmd_zcount, 4, ZR | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @fast"},
    {"zlexcount", cmd_zlexcount, 4, ZR | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @fast"},
    {"zrank", cmd_zrank, 3, ZR | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @fast"},
    {"zrevrank", cmd_zrevrank, 3, ZR | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @fast"},
    {"zrange", cmd_zrange, -4, ZR, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @slow"},
    {"zrangestore", cmd_zrangestore, -5, ZW | CMD_DENYOOM, 1, 2, 1, ROUTE_GATHER,
     "@write @sortedset @slow"},
    {"zrangebyscore", cmd_zrangebyscore, -4, ZR, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @slow"},
    {"zrevrangebyscore", cmd_zrevrangebyscore, -4, ZR, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @slow"},
    {"zrangebylex", cmd_zrangebylex, -4, ZR, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @slow"},
    {"zrevrangebylex", cmd_zrevrangebylex, -4, ZR, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @slow"},
    {"zrevrange", cmd_zrevrange, -4, ZR, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @slow"},
    {"zpopmin", cmd_zpopmin, -2, ZW | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @sortedset @fast"},
    {"zpopmax", cmd_zpopmax, -2, ZW | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @sortedset @fast"},
    {"zmpop", cmd_zmpop, -4, ZW | CMD_NUMKEYS, 1, 0, 0, ROUTE_GATHER, "@write @sortedset @slow"},
    {"bzpopmin", cmd_bzpopmin, -3, ZW | CMD_FAST | CMD_BLOCKING | CMD_BLOCK_ZSET, 1, -2, 1, ROUTE_OWNER,
     "@write @sortedset @fast @blocking"},
    {"bzpopmax", cmd_bzpopmax, -3, ZW | CMD_FAST | CMD_BLOCKING | CMD_BLOCK_ZSET, 1, -2, 1, ROUTE_OWNER,
     "@write @sortedset @fast @blocking"},
    {"bzmpop", cmd_bzmpop, -5, ZW | CMD_BLOCKING | CMD_NUMKEYS | CMD_BLOCK_ZSET, 2, 0, 0, ROUTE_OWNER,
     "@write @sortedset @slow @blocking"},
    {"zrandmember", cmd_zrandmember, -2, ZR, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @slow"},
    {"zremrangebyrank", cmd_zremrangebyrank, 4, ZW, 1, 1, 1, ROUTE_OWNER, "@write @sortedset @slow"},
    {"zremrangebyscore", cmd_zremrangebyscore, 4, ZW, 1, 1, 1, ROUTE_OWNER, "@write @sortedset @slow"},
    {"zremrangebylex", cmd_zremrangebylex, 4, ZW, 1, 1, 1, ROUTE_OWNER, "@write @sortedset @slow"},
    {"zunion", cmd_zunion, -3, ZR | CMD_NUMKEYS, 1, 0, 0, ROUTE_GATHER, "@read @sortedset @slow"},
    {"zinter", cmd_zinter, -3, ZR | CMD_NUMKEYS, 1, 0, 0, ROUTE_GATHER, "@read @sortedset @slow"},
    {"zdiff", cmd_zdiff, -3, ZR | CMD_NUMKEYS, 1, 0, 0, ROUTE_GATHER, "@read @sortedset @slow"},
    {"zintercard", cmd_zintercard, -3, ZR | CMD_NUMKEYS, 1, 0, 0, ROUTE_GATHER,
     "@read @sortedset @slow"},
    {"zunionstore", cmd_zunionstore, -4, ZW | CMD_DENYOOM | CMD_NUMKEYS, 2, 0, 0, ROUTE_GATHER,
     "@write @sortedset @slow"},
    {"zinterstore", cmd_zinterstore, -4, ZW | CMD_DENYOOM | CMD_NUMKEYS, 2, 0, 0, ROUTE_GATHER,
     "@write @sortedset @slow"},
    {"zdiffstore", cmd_zdiffstore, -4, ZW | CMD_DENYOOM | CMD_NUMKEYS, 2, 0, 0, ROUTE_GATHER,
     "@write @sortedset @slow"},
    {"zscan", cmd_zscan, -3, ZR, 1, 1, 1, ROUTE_OWNER, "@read @sortedset @slow"},
};
const size_t command_family_zset_count = sizeof(command_family_zset) / sizeof(command_family_zset[0]);
