/*
 * list: the list command family (Redis's t_list.c, non-blocking commands).
 *
 * Design: every handler follows its Redis 7.0 counterpart in the order of
 * its checks, because the order decides which error a client sees (LINDEX
 * looks the key up before it parses the index, LRANGE parses before it looks
 * up; LPOS parses all its options first).  Arithmetic that Redis 7.0 lets
 * wrap (LPOS RANK -9223372036854775808, LREM with LLONG_MIN) wraps here the
 * same way, through unsigned arithmetic, so the replies match.  A list that
 * becomes empty is deleted, as Redis does.  The data side (encodings, node
 * limits, iteration) is store/list.c; handlers only see list.h.
 *
 * Ranges (LRANGE, LPOP/RPOP with a count, LMPOP) are replied with one
 * sequential iterator walk, never a seek per element.
 *
 * Each write reports what it did where Redis's handler does (command.h), in
 * Redis's order: "new" when it creates a key, then the key modified and its
 * event ("lpush", "linsert", ...); a pop reports "lpop"/"rpop", "del" when
 * it emptied the list, then the key modified (Redis's listElementsRemoved);
 * LMOVE reports the push on the destination before the pop on the source.
 * LTRIM reports "ltrim" even when nothing went, as Redis does; a write that
 * fails or finds nothing to do (LINSERT without its pivot, LREM of no
 * element, a pop of a missing key) reports nothing.  A blocked client served
 * later runs its handler again (core/block.c), which reports the same way.
 *
 * Threading and routing: a handler runs on the shard thread that owns its
 * keys and sees only that shard's store (ARCHITECTURE.md rule 1).  LMOVE,
 * RPOPLPUSH and LMPOP name several keys: they are ROUTE_GATHER, so when the
 * keys live on several shards the dispatcher runs the handler on a scratch
 * store that holds copies of all of them.
 *
 * Each handler appends exactly one reply to ctx->out.
 */
#include "families.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/list.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/reply.h"
#include "percore/store.h"
#include "percore/util.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------- */

static int list_fill(const struct cmd_ctx *ctx)
{
    return ctx->config ? ctx->config->list_max_listpack_size : LIST_FILL_DEFAULT;
}

static bool arg_eq(const struct resp_arg *a, const char *p, size_t n)
{
    return a->len == n && (n == 0 || memcmp(a->ptr, p, n) == 0);
}

/* a list whose last element went away is deleted ("del"), as Redis does */
static void delete_if_empty(struct cmd_ctx *ctx, struct object *o, const struct resp_arg *key)
{
    if (list_length(o) == 0) {
        store_delete(ctx->store, ctx->db, key->ptr, key->len, ctx->now);
        cmd_notify(ctx, NOTIFY_GENERIC, "del", key);
    }
}

/* n elements were popped from key's `where` end (Redis listElementsRemoved): its event, "del" if empty,
 * n changes */
static void note_popped(struct cmd_ctx *ctx, struct object *o, const struct resp_arg *key,
                        enum list_where where, long long n)
{
    cmd_notify(ctx, NOTIFY_LIST, where == LIST_HEAD ? "lpop" : "rpop", key);
    delete_if_empty(ctx, o, key);
    cmd_modified_n(ctx, key, n);
}

/* a new list o for key is stored once filled, so that the store accounts its full size */
static void store_created(struct cmd_ctx *ctx, const struct resp_arg *key, struct object *o)
{
    store_set(ctx->store, ctx->db, key->ptr, key->len, o, 0);
    cmd_notify(ctx, NOTIFY_NEW, "new", key);
}

/* Redis getRangeLongFromObjectOrReply(min..LLONG_MAX, msg): msg for both errors */
static bool get_min_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, long long min,
                             long long *v, const char *msg)
{
    if (!util_str_to_ll(a->ptr, a->len, v) || *v < min) {
        reply_error(ctx->out, msg);
        return false;
    }
    return true;
}

/* Redis getListPositionFromObjectOrReply: LEFT or RIGHT */
static bool get_position_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a,
                                  enum list_where *where)
{
    if (cmd_arg_is(a, "right")) {
        *where = LIST_TAIL;
    } else if (cmd_arg_is(a, "left")) {
        *where = LIST_HEAD;
    } else {
        reply_syntax_error(ctx->out);
        return false;
    }
    return true;
}

/* Redis addListRangeReply: elements start..end (Redis's index rules), reversed if asked */
static void range_reply(struct cmd_ctx *ctx, struct object *o, long long start, long long end,
                        bool reverse)
{
    long long llen = (long long)list_length(o);
    struct list_iter it;
    const char *p;
    size_t n;

    if (start < 0)
        start += llen;
    if (end < 0)
        end += llen;
    if (start < 0)
        start = 0;
    if (start > end || start >= llen) {
        reply_array(ctx->out, 0);
        return;
    }
    if (end >= llen)
        end = llen - 1;
    long long rangelen = end - start + 1;
    reply_array(ctx->out, rangelen);
    list_iter_init(&it, o, (size_t)(reverse ? end : start), !reverse);
    while (rangelen-- > 0 && list_iter_next(&it, &p, &n))
        reply_bulk(ctx->out, p, n);
}

/* pop up to count elements from one end, replying them as an array (Redis listPopRange...) */
static void pop_range_reply(struct cmd_ctx *ctx, struct object *o, const struct resp_arg *key,
                            enum list_where where, long long count)
{
    long long llen = (long long)list_length(o);
    long long rangelen = count > llen ? llen : count;
    if (where == LIST_HEAD) {
        range_reply(ctx, o, 0, rangelen - 1, false);
        list_delete_range(o, 0, (size_t)rangelen, list_fill(ctx));
    } else {
        range_reply(ctx, o, -rangelen, -1, true);
        list_delete_range(o, (size_t)(llen - rangelen), (size_t)rangelen, list_fill(ctx));
    }
    note_popped(ctx, o, key, where, rangelen);
}

/* ---- push ------------------------------------------------------------------- */

/* LPUSH RPUSH (create) and LPUSHX RPUSHX (only if the list exists) */
static void push_generic(struct cmd_ctx *ctx, enum list_where where, bool existing_only)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct object *o = cmd_lookup_write(ctx, key);
    bool created = false;
    int fill = list_fill(ctx);

    if (o == NULL) {
        if (existing_only) {
            reply_int(ctx->out, 0);
            return;
        }
        o = list_object_create();
        created = true;
    } else if (object_type(o) != OBJ_LIST) {
        reply_wrongtype(ctx->out);
        return;
    }
    for (int j = 2; j < ctx->argc; j++)
        list_push(o, where, ctx->argv[j].ptr, ctx->argv[j].len, fill);
    long long len = (long long)list_length(o);
    if (created)
        store_created(ctx, key, o);
    reply_int(ctx->out, len);
    cmd_changed_n(ctx, NOTIFY_LIST, where == LIST_HEAD ? "lpush" : "rpush", key, ctx->argc - 2);
}

static void cmd_lpush(struct cmd_ctx *ctx)
{
    push_generic(ctx, LIST_HEAD, false);
}

static void cmd_rpush(struct cmd_ctx *ctx)
{
    push_generic(ctx, LIST_TAIL, false);
}

static void cmd_lpushx(struct cmd_ctx *ctx)
{
    push_generic(ctx, LIST_HEAD, true);
}

static void cmd_rpushx(struct cmd_ctx *ctx)
{
    push_generic(ctx, LIST_TAIL, true);
}

static void cmd_linsert(struct cmd_ctx *ctx)
{
    const struct resp_arg *pivot = &ctx->argv[3];
    const struct resp_arg *val = &ctx->argv[4];
    struct list_iter it;
    struct object *o;
    bool after, inserted = false;
    const char *p;
    size_t n;

    if (cmd_arg_is(&ctx->argv[2], "after")) {
        after = true;
    } else if (cmd_arg_is(&ctx->argv[2], "before")) {
        after = false;
    } else {
        reply_syntax_error(ctx->out);
        return;
    }
    o = cmd_lookup_write(ctx, &ctx->argv[1]);
    if (o == NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    if (object_type(o) != OBJ_LIST) {
        reply_wrongtype(ctx->out);
        return;
    }
    list_iter_init(&it, o, 0, true);
    while (list_iter_next(&it, &p, &n)) {
        if (arg_eq(pivot, p, n)) {
            list_iter_insert(&it, after, val->ptr, val->len, list_fill(ctx));
            inserted = true;
            break;
        }
    }
    list_iter_finish(&it, list_fill(ctx));
    reply_int(ctx->out, inserted ? (long long)list_length(o) : -1);
    if (inserted)
        cmd_changed(ctx, NOTIFY_LIST, "linsert", &ctx->argv[1]);
}

/* ---- read ---------------------------------------------------------------------- */

static void cmd_llen(struct cmd_ctx *ctx)
{
    struct object *o = cmd_lookup_read(ctx, &ctx->argv[1]);
    if (o == NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    if (object_type(o) != OBJ_LIST) {
        reply_wrongtype(ctx->out);
        return;
    }
    reply_int(ctx->out, (long long)list_length(o));
}

static void cmd_lindex(struct cmd_ctx *ctx)
{
    struct object *o = cmd_lookup_read(ctx, &ctx->argv[1]);
    long long index;
    const char *p;
    size_t n;

    if (o == NULL) {
        reply_null(ctx->out);
        return;
    }
    if (object_type(o) != OBJ_LIST) {
        reply_wrongtype(ctx->out);
        return;
    }
    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &index))
        return;
    if (list_index(o, (long)index, &p, &n))
        reply_bulk(ctx->out, p, n);
    else
        reply_null(ctx->out);
}

static void cmd_lrange(struct cmd_ctx *ctx)
{
    long long start, end;
    struct object *o;

    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &start) ||
        !cmd_get_ll_or_reply(ctx, &ctx->argv[3], &end))
        return;
    o = cmd_lookup_read(ctx, &ctx->argv[1]);
    if (o == NULL) {
        reply_array(ctx->out, 0);
        return;
    }
    if (object_type(o) != OBJ_LIST) {
        reply_wrongtype(ctx->out);
        return;
    }
    range_reply(ctx, o, start, end, false);
}

static void cmd_lpos(struct cmd_ctx *ctx)
{
    const struct resp_arg *ele = &ctx->argv[2];
    long long rank = 1, count = -1, maxlen = 0; /* count -1: no COUNT option */
    bool forward = true;
    struct object *o;

    for (int j = 3; j < ctx->argc; j++) {
        const struct resp_arg *opt = &ctx->argv[j];
        int moreargs = ctx->argc - 1 - j;
        if (cmd_arg_is(opt, "rank") && moreargs) {
            j++;
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[j], &rank))
                return;
            if (rank == 0) {
                reply_error(ctx->out, "ERR RANK can't be zero: use 1 to start from the first match, "
                                      "2 from the second ... or use negative to start from the end "
                                      "of the list");
                return;
            }
        } else if (cmd_arg_is(opt, "count") && moreargs) {
            j++;
            if (!get_min_or_reply(ctx, &ctx->argv[j], 0, &count, "ERR COUNT can't be negative"))
                return;
        } else if (cmd_arg_is(opt, "maxlen") && moreargs) {
            j++;
            if (!get_min_or_reply(ctx, &ctx->argv[j], 0, &maxlen, "ERR MAXLEN can't be negative"))
                return;
        } else {
            reply_syntax_error(ctx->out);
            return;
        }
    }
    /* a negative rank searches from the tail; -LLONG_MIN wraps, as in Redis */
    if (rank < 0) {
        rank = (long long)(0ULL - (unsigned long long)rank);
        forward = false;
    }

    o = cmd_lookup_read(ctx, &ctx->argv[1]);
    if (o == NULL) {
        if (count != -1)
            reply_array(ctx->out, 0);
        else
            reply_null(ctx->out);
        return;
    }
    if (object_type(o) != OBJ_LIST) {
        reply_wrongtype(ctx->out);
        return;
    }

    long long llen = (long long)list_length(o);
    long long index = 0, matches = 0, matchindex = -1, arraylen = 0;
    struct reply found; /* COUNT: the matches, behind an array length known at the end */
    struct list_iter it;
    const char *p;
    size_t n;

    reply_init(&found);
    found.resp = ctx->out->resp;
    list_iter_init(&it, o, forward ? 0 : (size_t)(llen - 1), forward);
    while (list_iter_next(&it, &p, &n) && (maxlen == 0 || index < maxlen)) {
        if (arg_eq(ele, p, n)) {
            matches++;
            matchindex = forward ? index : llen - index - 1;
            if (matches >= rank) {
                if (count != -1) {
                    arraylen++;
                    reply_int(&found, matchindex);
                    long long got = (long long)((unsigned long long)matches -
                                                (unsigned long long)rank + 1ULL);
                    if (count && got >= count)
                        break;
                } else {
                    break;
                }
            }
        }
        index++;
        matchindex = -1; /* so that leaving the loop without a match says so */
    }
    if (count != -1) {
        reply_array(ctx->out, arraylen);
        reply_raw(ctx->out, found.buf, found.len);
    } else if (matchindex != -1) {
        reply_int(ctx->out, matchindex);
    } else {
        reply_null(ctx->out);
    }
    reply_deinit(&found);
}

/* ---- change ----------------------------------------------------------------------- */

static void cmd_lset(struct cmd_ctx *ctx)
{
    struct object *o = cmd_lookup_write(ctx, &ctx->argv[1]);
    const struct resp_arg *val = &ctx->argv[3];
    long long index;

    if (o == NULL) {
        reply_error(ctx->out, "ERR no such key");
        return;
    }
    if (object_type(o) != OBJ_LIST) {
        reply_wrongtype(ctx->out);
        return;
    }
    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &index))
        return;
    if (list_replace(o, (long)index, val->ptr, val->len, list_fill(ctx))) {
        reply_ok(ctx->out);
        cmd_changed(ctx, NOTIFY_LIST, "lset", &ctx->argv[1]);
    } else {
        reply_error(ctx->out, "ERR index out of range");
    }
}

static void cmd_lrem(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    const struct resp_arg *ele = &ctx->argv[3];
    long long toremove;
    unsigned long long limit, removed = 0;
    struct list_iter it;
    struct object *o;
    const char *p;
    size_t n;

    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &toremove))
        return;
    o = cmd_lookup_write(ctx, key);
    if (o == NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    if (object_type(o) != OBJ_LIST) {
        reply_wrongtype(ctx->out);
        return;
    }
    if (toremove < 0) {
        limit = 0ULL - (unsigned long long)toremove;
        list_iter_init(&it, o, list_length(o) - 1, false);
    } else {
        limit = (unsigned long long)toremove;
        list_iter_init(&it, o, 0, true);
    }
    while (list_iter_next(&it, &p, &n)) {
        if (arg_eq(ele, p, n)) {
            list_iter_delete(&it);
            removed++;
            if (limit && removed == limit)
                break;
        }
    }
    list_iter_finish(&it, list_fill(ctx));
    if (removed)
        cmd_changed_n(ctx, NOTIFY_LIST, "lrem", key, (long long)removed);
    delete_if_empty(ctx, o, key);
    reply_int(ctx->out, (long long)removed);
}

static void cmd_ltrim(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    long long start, end, llen, ltrim, rtrim;
    struct object *o;
    int fill = list_fill(ctx);

    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &start) ||
        !cmd_get_ll_or_reply(ctx, &ctx->argv[3], &end))
        return;
    o = cmd_lookup_write(ctx, key);
    if (o == NULL) {
        reply_ok(ctx->out);
        return;
    }
    if (object_type(o) != OBJ_LIST) {
        reply_wrongtype(ctx->out);
        return;
    }
    llen = (long long)list_length(o);
    if (start < 0)
        start += llen;
    if (end < 0)
        end += llen;
    if (start < 0)
        start = 0;
    if (start > end || start >= llen) {
        ltrim = llen; /* out of range: the list empties */
        rtrim = 0;
    } else {
        if (end >= llen)
            end = llen - 1;
        ltrim = start;
        rtrim = llen - end - 1;
    }
    if (ltrim)
        list_delete_range(o, 0, (size_t)ltrim, fill);
    if (rtrim)
        list_delete_range(o, (size_t)(llen - ltrim - rtrim), (size_t)rtrim, fill);
    cmd_notify(ctx, NOTIFY_LIST, "ltrim", key); /* also when nothing went, as Redis */
    delete_if_empty(ctx, o, key);
    cmd_modified_n(ctx, key, ltrim + rtrim);
    reply_ok(ctx->out);
}

/* ---- pop ------------------------------------------------------------------------------ */

/* LPOP RPOP key [count] */
static void pop_generic(struct cmd_ctx *ctx, enum list_where where, const char *name)
{
    const struct resp_arg *key = &ctx->argv[1];
    bool hascount = ctx->argc == 3;
    long long count = 0;
    struct object *o;

    if (ctx->argc > 3) {
        reply_errorf(ctx->out, "ERR wrong number of arguments for '%s' command", name);
        return;
    }
    if (hascount && !get_min_or_reply(ctx, &ctx->argv[2], 0, &count,
                                      "ERR value is out of range, must be positive"))
        return;
    o = cmd_lookup_write(ctx, key);
    if (o == NULL) {
        if (hascount)
            reply_null_array(ctx->out);
        else
            reply_null(ctx->out);
        return;
    }
    if (object_type(o) != OBJ_LIST) {
        reply_wrongtype(ctx->out);
        return;
    }
    if (hascount && count == 0) {
        reply_array(ctx->out, 0);
        return;
    }
    if (!hascount) {
        const char *p;
        size_t n;
        size_t len = list_length(o);
        list_index(o, where == LIST_HEAD ? 0 : -1, &p, &n);
        reply_bulk(ctx->out, p, n);
        list_delete_range(o, where == LIST_HEAD ? 0 : len - 1, 1, list_fill(ctx));
        note_popped(ctx, o, key, where, 1);
        return;
    }
    pop_range_reply(ctx, o, key, where, count);
}

static void cmd_lpop(struct cmd_ctx *ctx)
{
    pop_generic(ctx, LIST_HEAD, "lpop");
}

static void cmd_rpop(struct cmd_ctx *ctx)
{
    pop_generic(ctx, LIST_TAIL, "rpop");
}

/*
 * Redis lmoveGenericCommand: LMOVE and RPOPLPUSH; source == destination
 * rotates.  Reported as Redis does: the push on the destination ("new"
 * first when it creates it), then the pop on the source.
 */
static void lmove_generic(struct cmd_ctx *ctx, enum list_where from, enum list_where to)
{
    const struct resp_arg *skey = &ctx->argv[1];
    const struct resp_arg *dkey = &ctx->argv[2];
    struct object *src, *dst;
    int fill = list_fill(ctx);
    char small[128];
    char *copy = small;
    const char *p;
    size_t n;

    src = cmd_lookup_write(ctx, skey);
    if (src == NULL) {
        reply_null(ctx->out);
        return;
    }
    if (object_type(src) != OBJ_LIST) {
        reply_wrongtype(ctx->out);
        return;
    }
    dst = cmd_lookup_write(ctx, dkey);
    if (dst != NULL && object_type(dst) != OBJ_LIST) {
        reply_wrongtype(ctx->out);
        return;
    }

    /* the element is copied out: popping may move or free the bytes */
    size_t len = list_length(src);
    list_index(src, from == LIST_HEAD ? 0 : -1, &p, &n);
    if (n > sizeof small)
        copy = mem_alloc(n);
    memcpy(copy, p, n);
    list_delete_range(src, from == LIST_HEAD ? 0 : len - 1, 1, fill);

    if (dst == NULL) {
        dst = list_object_create();
        list_push(dst, to, copy, n, fill);
        store_created(ctx, dkey, dst);
    } else {
        list_push(dst, to, copy, n, fill);
    }
    cmd_changed(ctx, NOTIFY_LIST, to == LIST_HEAD ? "lpush" : "rpush", dkey);
    reply_bulk(ctx->out, copy, n);
    if (copy != small)
        mem_release(copy);
    note_popped(ctx, src, skey, from, 0); /* a rotated list is never empty; the move is one change, the push's */
}

static void cmd_lmove(struct cmd_ctx *ctx)
{
    enum list_where from, to;
    if (!get_position_or_reply(ctx, &ctx->argv[3], &from) ||
        !get_position_or_reply(ctx, &ctx->argv[4], &to))
        return;
    lmove_generic(ctx, from, to);
}

static void cmd_rpoplpush(struct cmd_ctx *ctx)
{
    lmove_generic(ctx, LIST_TAIL, LIST_HEAD);
}

/* LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]; BLMPOP timeout numkeys ... (blocking) */
static void lmpop_generic(struct cmd_ctx *ctx, int numkeys_idx, bool blocking)
{
    long long numkeys, count = -1;
    enum list_where where;

    if (!get_min_or_reply(ctx, &ctx->argv[numkeys_idx], 1, &numkeys,
                          "ERR numkeys should be greater than 0"))
        return;
    /* where_idx = numkeys_idx + numkeys + 1 must be an argument */
    if (numkeys >= (long long)ctx->argc - numkeys_idx - 1) {
        reply_syntax_error(ctx->out);
        return;
    }
    int where_idx = numkeys_idx + (int)numkeys + 1;
    if (!get_position_or_reply(ctx, &ctx->argv[where_idx], &where))
        return;
    for (int j = where_idx + 1; j < ctx->argc; j++) {
        int moreargs = ctx->argc - 1 - j;
        if (count == -1 && cmd_arg_is(&ctx->argv[j], "count") && moreargs) {
            j++;
            if (!get_min_or_reply(ctx, &ctx->argv[j], 1, &count,
                                  "ERR count should be greater than 0"))
                return;
        } else {
            reply_syntax_error(ctx->out);
            return;
        }
    }
    if (count == -1)
        count = 1;

    for (int j = 0; j < numkeys; j++) {
        const struct resp_arg *key = &ctx->argv[numkeys_idx + 1 + j];
        struct object *o = cmd_lookup_write(ctx, key);
        if (o == NULL)
            continue;
        if (object_type(o) != OBJ_LIST) {
            reply_wrongtype(ctx->out);
            return;
        }
        if (list_length(o) == 0)
            continue;
        long long popped = count < (long long)list_length(o) ? count : (long long)list_length(o);
        reply_array(ctx->out, 2);
        reply_bulk(ctx->out, key->ptr, key->len);
        pop_range_reply(ctx, o, key, where, count);
        if (cmd_propagating(ctx)) { /* as [LR]POP key count (Redis 7.0's listPopRangeAndReplyWithKey) */
            char num[24];
            struct resp_arg a[3] = {{where == LIST_HEAD ? "LPOP" : "RPOP", 4}, *key,
                                    {num, (size_t)snprintf(num, sizeof num, "%lld", popped)}};
            cmd_propagate(ctx, 3, a);
        }
        return;
    }
    if (blocking)
        cmd_block_or_nil(ctx, false);
    else
        reply_null_array(ctx->out);
}

static void cmd_lmpop(struct cmd_ctx *ctx)
{
    lmpop_generic(ctx, 1, false);
}

static void cmd_blmpop(struct cmd_ctx *ctx)
{
    if (cmd_block_timeout_or_reply(ctx, &ctx->argv[1]))
        lmpop_generic(ctx, 2, true);
}

/* ---- blocking (block.c serves them when their keys get data) ------------------------------- */

/* BLPOP BRPOP key [key ...] timeout: [key, element] from the first non-empty key */
static void bpop_generic(struct cmd_ctx *ctx, enum list_where where)
{
    if (!cmd_block_timeout_or_reply(ctx, &ctx->argv[ctx->argc - 1]))
        return;
    for (int j = 1; j < ctx->argc - 1; j++) {
        bool wrong;
        struct object *o = cmd_lookup_typed(ctx, &ctx->argv[j], OBJ_LIST, true, &wrong);
        if (wrong)
            return;
        if (!o)
            continue;
        const char *p;
        size_t n;
        size_t len = list_length(o);
        list_index(o, where == LIST_HEAD ? 0 : -1, &p, &n);
        reply_array(ctx->out, 2);
        reply_bulk(ctx->out, ctx->argv[j].ptr, ctx->argv[j].len);
        reply_bulk(ctx->out, p, n);
        list_delete_range(o, where == LIST_HEAD ? 0 : len - 1, 1, list_fill(ctx));
        note_popped(ctx, o, &ctx->argv[j], where, 1);
        if (cmd_propagating(ctx)) { /* as LPOP|RPOP key, as Redis 7.0 */
            struct resp_arg a[2] = {{where == LIST_HEAD ? "LPOP" : "RPOP", 4}, ctx->argv[j]};
            cmd_propagate(ctx, 2, a);
        }
        return;
    }
    cmd_block_or_nil(ctx, false);
}

static void cmd_blpop(struct cmd_ctx *ctx)
{
    bpop_generic(ctx, LIST_HEAD);
}

static void cmd_brpop(struct cmd_ctx *ctx)
{
    bpop_generic(ctx, LIST_TAIL);
}

/* BLMOVE / BRPOPLPUSH: LMOVE once the source has an element */
static void blmove_generic(struct cmd_ctx *ctx, enum list_where from, enum list_where to,
                           const struct resp_arg *timeout)
{
    if (!cmd_block_timeout_or_reply(ctx, timeout))
        return;
    bool wrong;
    struct object *src = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_LIST, true, &wrong);
    if (wrong)
        return;
    if (src) {
        lmove_generic(ctx, from, to);
        if (cmd_propagating(ctx)) { /* as LMOVE: never blocks on replay */
            struct resp_arg a[5] = {{"LMOVE", 5}, ctx->argv[1], ctx->argv[2],
                                    {from == LIST_HEAD ? "LEFT" : "RIGHT", from == LIST_HEAD ? 4u : 5u},
                                    {to == LIST_HEAD ? "LEFT" : "RIGHT", to == LIST_HEAD ? 4u : 5u}};
            cmd_propagate(ctx, 5, a);
        }
    } else
        cmd_block_or_nil(ctx, true);
}

static void cmd_blmove(struct cmd_ctx *ctx)
{
    enum list_where from, to;
    if (get_position_or_reply(ctx, &ctx->argv[3], &from) && get_position_or_reply(ctx, &ctx->argv[4], &to))
        blmove_generic(ctx, from, to, &ctx->argv[5]);
}

static void cmd_brpoplpush(struct cmd_ctx *ctx)
{
    blmove_generic(ctx, LIST_TAIL, LIST_HEAD, &ctx->argv[3]);
}

/* ---- table ----------------------------------------------------------------------------- */

/* arity, flags, key positions and ACL categories as Redis 7.0.15's COMMAND
 * INFO reports them; LMPOP's keys are counted by its numkeys argument */
const struct command command_family_list[] = {
    {"lpush", cmd_lpush, -3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @list @fast"},
    {"rpush", cmd_rpush, -3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @list @fast"},
    {"lpushx", cmd_lpushx, -3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @list @fast"},
    {"rpushx", cmd_rpushx, -3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @list @fast"},
    {"lpop", cmd_lpop, -2, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @list @fast"},
    {"rpop", cmd_rpop, -2, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @list @fast"},
    {"llen", cmd_llen, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @list @fast"},
    {"lrange", cmd_lrange, 4, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @list @slow"},
    {"lindex", cmd_lindex, 3, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @list @slow"},
    {"lset", cmd_lset, 4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, ROUTE_OWNER, "@write @list @slow"},
    {"lrem", cmd_lrem, 4, CMD_WRITE, 1, 1, 1, ROUTE_OWNER, "@write @list @slow"},
    {"ltrim", cmd_ltrim, 4, CMD_WRITE, 1, 1, 1, ROUTE_OWNER, "@write @list @slow"},
    {"linsert", cmd_linsert, 5, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, ROUTE_OWNER,
     "@write @list @slow"},
    {"lpos", cmd_lpos, -3, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @list @slow"},
    {"lmove", cmd_lmove, 5, CMD_WRITE | CMD_DENYOOM, 1, 2, 1, ROUTE_GATHER, "@write @list @slow"},
    {"rpoplpush", cmd_rpoplpush, 3, CMD_WRITE | CMD_DENYOOM, 1, 2, 1, ROUTE_GATHER,
     "@write @list @slow"},
    {"lmpop", cmd_lmpop, -4, CMD_WRITE | CMD_NUMKEYS, 1, 0, 0, ROUTE_GATHER, "@write @list @slow"},
    {"blpop", cmd_blpop, -3, CMD_WRITE | CMD_BLOCKING | CMD_BLOCK_LEFT, 1, -2, 1, ROUTE_OWNER, "@write @list @slow @blocking"},
    {"brpop", cmd_brpop, -3, CMD_WRITE | CMD_BLOCKING, 1, -2, 1, ROUTE_OWNER, "@write @list @slow @blocking"},
    {"blmove", cmd_blmove, 6, CMD_WRITE | CMD_DENYOOM | CMD_BLOCKING | CMD_BLOCK_MOVE, 1, 2, 1, ROUTE_OWNER,
     "@write @list @slow @blocking"},
    {"brpoplpush", cmd_brpoplpush, 4, CMD_WRITE | CMD_DENYOOM | CMD_BLOCKING | CMD_BLOCK_MOVE, 1, 2, 1, ROUTE_OWNER,
     "@write @list @slow @blocking"},
    {"blmpop", cmd_blmpop, -5, CMD_WRITE | CMD_BLOCKING | CMD_NUMKEYS, 2, 0, 0, ROUTE_OWNER,
     "@write @list @slow @blocking"},
};

const size_t command_family_list_count = sizeof(command_family_list) / sizeof(command_family_list[0]);
