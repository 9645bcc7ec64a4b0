/*
 * set: the set command family (Redis 7.0's t_set.c): SADD SREM SMEMBERS
 * SISMEMBER SMISMEMBER SCARD SPOP SRANDMEMBER SMOVE SINTER SUNION SDIFF
 * SINTERSTORE SUNIONSTORE SDIFFSTORE SINTERCARD SSCAN.
 *
 * Design: every handler follows its Redis 7.0 counterpart in the order of
 * its checks (which decides the error a client sees) and in how it builds
 * results, because that decides what clients can observe: SUNION and SDIFF
 * collect into a fresh set that starts as an intset, so an all-integer
 * result comes back sorted and is stored as an intset; SDIFF picks Redis's
 * algorithm 1 or 2 by the same work estimate, since the two can leave the
 * stored result in different encodings; SINTER walks the smallest set (a
 * stable sort by size) and SPOP with a count near the set's size rebuilds
 * the remaining members into a new set, as Redis does.  RESP3 types follow
 * Redis: sets (~) for SMEMBERS/SINTER/SUNION/SDIFF/SPOP count, arrays for
 * SRANDMEMBER count and SMISMEMBER.
 *
 * Reads of several sets (SINTER, SUNION, SDIFF, SINTERCARD and the STORE
 * forms) only read them (set_is_member never rehashes), so the store's
 * memory accounting of sets looked up earlier stays right; a destination is
 * written only after every source was read.
 *
 * Each write reports what it did where Redis's handler does (command.h), in
 * Redis's order: "new" when it creates a key, the command's event, "del"
 * after it when the set emptied, the key modified only when something
 * changed (SADD of members all there, SREM or SMOVE of a missing member,
 * SPOP of a missing key or a count of 0: nothing).  SMOVE reports "srem" on
 * the source and "sadd" on the destination (none when it held the member);
 * the STORE forms report their destination alone.
 *
 * Threading and routing: a handler runs on the shard thread that owns its
 * keys and touches only ctx->store (ARCHITECTURE.md rule 1).  Multi-key commands
 * are ROUTE_GATHER: they run with every key in ctx->store (their own shard,
 * or the dispatcher's scratch store).
 *
 * Each handler appends exactly one reply to ctx->out.
 */
#include "families.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/dict.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/reply.h"
#include "percore/set.h"
#include "percore/store.h"
#include "percore/util.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SET_MAX_INTSET_ENTRIES 512
#define DEFAULT_SET_MAX_LISTPACK_ENTRIES 128
#define DEFAULT_SET_MAX_LISTPACK_VALUE 64
#define SPOP_MOVE_STRATEGY_MUL 5        /* Redis t_set.c */
#define SRANDMEMBER_SUB_STRATEGY_MUL 3  /* Redis t_set.c */

enum set_op { SET_OP_UNION, SET_OP_DIFF };

/* ---- helpers ------------------------------------------------------------- */

/* the conversion thresholds of the config in force */
static const struct set_limits *limits(const struct cmd_ctx *ctx, struct set_limits *lim)
{
    if (ctx->config)
        *lim = (struct set_limits){ctx->config->set_max_intset_entries, ctx->config->set_max_listpack_entries,
                                   ctx->config->set_max_listpack_value};
    else
        *lim = (struct set_limits){DEFAULT_SET_MAX_INTSET_ENTRIES, DEFAULT_SET_MAX_LISTPACK_ENTRIES,
                                   DEFAULT_SET_MAX_LISTPACK_VALUE};
    return lim;
}

/* a looked-up value that must be a set: false (WRONGTYPE sent) otherwise */
static bool check_set_or_reply(struct cmd_ctx *ctx, const struct object *o)
{
    if (object_type(o) != OBJ_SET) {
        reply_wrongtype(ctx->out);
        return false;
    }
    return true;
}

static void reply_member(struct reply *out, const struct set_member *m)
{
    reply_bulk(out, m->p, m->n);
}

/* a popped member, propagated as the SREM that replays it (Redis's SPOP rewrite) */
static void propagate_srem(struct cmd_ctx *ctx, const struct resp_arg *key, const struct set_member *m)
{
    if (cmd_propagating(ctx)) {
        struct resp_arg a[3] = {{"SREM", 4}, *key, {m->p, m->n}};
        cmd_propagate(ctx, 3, a);
    }
}

/* remove a member set_random() gave: m->p points into the
 * entry being removed, so a string member is copied first */
static void remove_member(struct object *set, const struct set_member *m)
{
    if (m->is_int) {
        set_remove(set, m->buf, m->n);
        return;
    }
    char stackbuf[128];
    char *copy = m->n <= sizeof stackbuf ? stackbuf : mem_alloc(m->n);
    memcpy(copy, m->p, m->n);
    set_remove(set, copy, m->n);
    if (copy != stackbuf)
        mem_release(copy);
}

/* reply every member of o as a RESP set (~ in RESP3) */
static void reply_set_members(struct reply *out, struct object *o)
{
    struct set_iter it;
    struct set_member m;
    reply_set(out, (long long)set_size(o));
    set_iter_init(&it, o);
    while (set_iter_next(&it, &m))
        reply_member(out, &m);
}

static void set_add_member(struct cmd_ctx *ctx, struct object *o, const struct set_member *m)
{
    set_add(o, m->p, m->n, limits(ctx, &(struct set_limits){0}));
}

/* ---- SADD SREM SISMEMBER SMISMEMBER SCARD ---------------------------------- */

static void cmd_sadd(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct object *set = cmd_lookup_write(ctx, key);
    long long added = 0;
    struct set_limits lim;

    bool created = false;

    limits(ctx, &lim);
    if (set == NULL) {
        set = set_create_for(ctx->argv[2].ptr, ctx->argv[2].len, &lim);
        created = true;
    } else if (!check_set_or_reply(ctx, set)) {
        return;
    }
    for (int j = 2; j < ctx->argc; j++)
        added += set_add(set, ctx->argv[j].ptr, ctx->argv[j].len, &lim);
    /* a new set is stored filled, so the store accounts its final size */
    if (created) {
        store_set(ctx->store, ctx->db, key->ptr, key->len, set, 0);
        cmd_notify(ctx, NOTIFY_NEW, "new", key);
    }
    if (added)
        cmd_changed_n(ctx, NOTIFY_SET, "sadd", key, added);
    reply_int(ctx->out, added);
}

static void cmd_srem(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct object *set = cmd_lookup_write(ctx, key);
    long long deleted = 0;
    bool keyremoved = false;

    if (set == NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    if (!check_set_or_reply(ctx, set))
        return;
    for (int j = 2; j < ctx->argc; j++) {
        if (set_remove(set, ctx->argv[j].ptr, ctx->argv[j].len)) {
            deleted++;
            if (set_size(set) == 0) {
                store_delete(ctx->store, ctx->db, key->ptr, key->len, ctx->now);
                keyremoved = true;
                break;
            }
        }
    }
    if (deleted) {
        cmd_changed_n(ctx, NOTIFY_SET, "srem", key, deleted);
        if (keyremoved)
            cmd_notify(ctx, NOTIFY_GENERIC, "del", key);
    }
    reply_int(ctx->out, deleted);
}

static void cmd_sismember(struct cmd_ctx *ctx)
{
    struct object *set = cmd_lookup_read(ctx, &ctx->argv[1]);
    if (set == NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    if (!check_set_or_reply(ctx, set))
        return;
    reply_int(ctx->out, set_is_member(set, ctx->argv[2].ptr, ctx->argv[2].len));
}

static void cmd_smismember(struct cmd_ctx *ctx)
{
    struct object *set = cmd_lookup_read(ctx, &ctx->argv[1]);
    if (set && !check_set_or_reply(ctx, set))
        return;
    reply_array(ctx->out, ctx->argc - 2);
    for (int j = 2; j < ctx->argc; j++)
        reply_int(ctx->out, set && set_is_member(set, ctx->argv[j].ptr, ctx->argv[j].len));
}

static void cmd_scard(struct cmd_ctx *ctx)
{
    struct object *set = cmd_lookup_read(ctx, &ctx->argv[1]);
    if (set == NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    if (!check_set_or_reply(ctx, set))
        return;
    reply_int(ctx->out, (long long)set_size(set));
}

/* ---- SPOP SRANDMEMBER ------------------------------------------------------ */

static void spop_with_count(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    long long l;
    struct object *set;

    if (!cmd_get_positive_ll_or_reply(ctx, &ctx->argv[2], &l, NULL))
        return;
    set = cmd_lookup_write(ctx, key);
    if (set == NULL) {
        reply_set(ctx->out, 0);
        return;
    }
    if (!check_set_or_reply(ctx, set))
        return;
    if (l == 0) {
        reply_set(ctx->out, 0);
        return;
    }

    unsigned long long count = (unsigned long long)l, size = set_size(set);
    struct set_member m;
    cmd_notify(ctx, NOTIFY_SET, "spop", key);

    /* CASE 1: the whole set */
    if (count >= size) {
        struct object *all = set_create(SET_ENC_INTSET);
        struct set_iter it;
        set_iter_init(&it, set);
        while (set_iter_next(&it, &m))
            set_add_member(ctx, all, &m);
        reply_set_members(ctx->out, all);
        object_destroy(&all);
        store_delete(ctx->store, ctx->db, key->ptr, key->len, ctx->now);
        cmd_notify(ctx, NOTIFY_GENERIC, "del", key);
        cmd_modified(ctx, key);
        if (cmd_propagating(ctx))
            cmd_propagate_key(ctx, "DEL", key, NULL);
        return;
    }

    unsigned long long remaining = size - count;
    reply_set(ctx->out, (long long)count);
    /* CASE 2: few to pop: pop random members one by one */
    if (remaining * SPOP_MOVE_STRATEGY_MUL > count) {
        while (count--) {
            set_random(set, &m);
            reply_member(ctx->out, &m);
            propagate_srem(ctx, key, &m);
            remove_member(set, &m);
        }
        cmd_modified(ctx, key);
        return;
    }

    /* CASE 3: most of the set goes: move the remaining members to a new set
     * and reply what is left in the old one */
    struct object *newset = NULL;
    while (remaining--) {
        set_random(set, &m);
        char stackbuf[128];
        char *copy = m.n <= sizeof stackbuf ? stackbuf : mem_alloc(m.n);
        size_t n = m.n;
        memcpy(copy, m.p, n);
        if (newset == NULL)
            newset = set_create_for(copy, n, limits(ctx, &(struct set_limits){0}));
        set_add(newset, copy, n, limits(ctx, &(struct set_limits){0}));
        set_remove(set, copy, n);
        if (copy != stackbuf)
            mem_release(copy);
    }
    struct set_iter it;
    set_iter_init(&it, set);
    while (set_iter_next(&it, &m)) {
        reply_member(ctx->out, &m);
        propagate_srem(ctx, key, &m);
    }
    /* Redis dbOverwrite: the key keeps its TTL */
    store_set(ctx->store, ctx->db, key->ptr, key->len, newset, STORE_KEEPTTL);
    cmd_modified(ctx, key);
}

static void cmd_spop(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct object *set;
    struct set_member m;

    if (ctx->argc == 3) {
        spop_with_count(ctx);
        return;
    }
    if (ctx->argc > 3) {
        reply_syntax_error(ctx->out);
        return;
    }
    set = cmd_lookup_write(ctx, key);
    if (set == NULL) {
        reply_null(ctx->out);
        return;
    }
    if (!check_set_or_reply(ctx, set))
        return;
    set_random(set, &m);
    reply_member(ctx->out, &m);
    propagate_srem(ctx, key, &m);
    remove_member(set, &m);
    cmd_notify(ctx, NOTIFY_SET, "spop", key);
    if (set_size(set) == 0) {
        store_delete(ctx->store, ctx->db, key->ptr, key->len, ctx->now);
        cmd_notify(ctx, NOTIFY_GENERIC, "del", key);
    }
    cmd_modified(ctx, key);
}

static void srandmember_with_count(struct cmd_ctx *ctx)
{
    long long l;
    unsigned long long count, size;
    bool uniq = true;
    struct object *set;
    struct set_member m;

    if (!cmd_get_range_ll_or_reply(ctx, &ctx->argv[2], -LONG_MAX, LONG_MAX, &l, NULL))
        return;
    if (l >= 0) {
        count = (unsigned long long)l;
    } else {
        /* negative: members may repeat */
        count = (unsigned long long)-l;
        uniq = false;
    }
    set = cmd_lookup_read(ctx, &ctx->argv[1]);
    if (set == NULL) {
        reply_array(ctx->out, 0);
        return;
    }
    if (!check_set_or_reply(ctx, set))
        return;
    size = set_size(set);
    if (count == 0) {
        reply_array(ctx->out, 0);
        return;
    }

    /* CASE 1: negative count (or 1): sample the whole set every time */
    if (!uniq || count == 1) {
        size_t start = ctx->out->len;
        reply_array(ctx->out, (long long)count);
        while (count--) {
            set_random(set, &m);
            reply_member(ctx->out, &m);
            if (!cmd_reply_under_cap_or_reply(ctx, start))
                return;
        }
        return;
    }

    /* CASE 2: at least the whole set: all of it */
    if (count >= size) {
        struct set_iter it;
        reply_array(ctx->out, (long long)size);
        set_iter_init(&it, set);
        while (set_iter_next(&it, &m))
            reply_member(ctx->out, &m);
        return;
    }

    struct dict *d = dict_create();
    if (count * SRANDMEMBER_SUB_STRATEGY_MUL > size) {
        /* CASE 3: close to the size: copy all, remove random ones */
        struct set_iter it;
        set_iter_init(&it, set);
        while (set_iter_next(&it, &m))
            dict_add(d, m.p, m.n, NULL);
        while (size > count) {
            struct dict_entry *e = dict_random(d);
            size_t n;
            const char *k = dict_entry_key(e, &n);
            char stackbuf[128];
            char *copy = n <= sizeof stackbuf ? stackbuf : mem_alloc(n);
            memcpy(copy, k, n);
            dict_delete(d, copy, n);
            if (copy != stackbuf)
                mem_release(copy);
            size--;
        }
    } else {
        /* CASE 4: a big set: random members until enough distinct ones */
        unsigned long long added = 0;
        while (added < count) {
            set_random(set, &m);
            if (dict_add(d, m.p, m.n, NULL))
                added++;
        }
    }
    reply_array(ctx->out, (long long)count);
    struct dict_iter it;
    struct dict_entry *e;
    dict_iter_init(&it, d);
    while ((e = dict_iter_next(&it)) != NULL) {
        size_t n;
        const char *k = dict_entry_key(e, &n);
        reply_bulk(ctx->out, k, n);
    }
    dict_destroy(&d);
}

static void cmd_srandmember(struct cmd_ctx *ctx)
{
    struct object *set;
    struct set_member m;

    if (ctx->argc == 3) {
        srandmember_with_count(ctx);
        return;
    }
    if (ctx->argc > 3) {
        reply_syntax_error(ctx->out);
        return;
    }
    set = cmd_lookup_read(ctx, &ctx->argv[1]);
    if (set == NULL) {
        reply_null(ctx->out);
        return;
    }
    if (!check_set_or_reply(ctx, set))
        return;
    set_random(set, &m);
    reply_member(ctx->out, &m);
}

/* ---- SMOVE ----------------------------------------------------------------- */

static void cmd_smove(struct cmd_ctx *ctx)
{
    const struct resp_arg *src = &ctx->argv[1], *dst = &ctx->argv[2], *ele = &ctx->argv[3];
    struct object *srcset = cmd_lookup_write(ctx, src);
    struct object *dstset = cmd_lookup_write(ctx, dst);

    if (srcset == NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    if (!check_set_or_reply(ctx, srcset) || (dstset && !check_set_or_reply(ctx, dstset)))
        return;
    if (srcset == dstset) {
        reply_int(ctx->out, set_is_member(srcset, ele->ptr, ele->len));
        return;
    }
    if (!set_remove(srcset, ele->ptr, ele->len)) {
        reply_int(ctx->out, 0);
        return;
    }
    cmd_notify(ctx, NOTIFY_SET, "srem", src);
    if (set_size(srcset) == 0) {
        store_delete(ctx->store, ctx->db, src->ptr, src->len, ctx->now);
        cmd_notify(ctx, NOTIFY_GENERIC, "del", src);
    }
    bool created = dstset == NULL;
    if (created)
        dstset = set_create_for(ele->ptr, ele->len, limits(ctx, &(struct set_limits){0}));
    bool added = set_add(dstset, ele->ptr, ele->len, limits(ctx, &(struct set_limits){0}));
    if (created) {
        store_set(ctx->store, ctx->db, dst->ptr, dst->len, dstset, 0);
        cmd_notify(ctx, NOTIFY_NEW, "new", dst);
    }
    cmd_modified(ctx, src);
    if (added) /* not when dst had it already */
        cmd_changed(ctx, NOTIFY_SET, "sadd", dst);
    reply_int(ctx->out, 1);
}

/* ---- SINTER SINTERSTORE SINTERCARD SMEMBERS ------------------------------- */

/*
 * Replace dst by result (NULL or empty: delete dst) and reply its size; the
 * destination alone is reported, with `event` (sinterstore...), or "del"
 * when an empty result deleted it (nothing when there was none).
 */
static void store_result(struct cmd_ctx *ctx, const struct resp_arg *dst, struct object *result,
                         const char *event)
{
    size_t n = result ? set_size(result) : 0;
    if (n > 0) {
        /* Redis's setKey: an expired destination is gone first, so the key is new */
        cmd_lookup_write(ctx, dst);
        if (store_set(ctx->store, ctx->db, dst->ptr, dst->len, result, 0))
            cmd_notify(ctx, NOTIFY_NEW, "new", dst);
        cmd_changed(ctx, NOTIFY_SET, event, dst);
    } else {
        object_destroy(&result);
        if (store_delete(ctx->store, ctx->db, dst->ptr, dst->len, ctx->now))
            cmd_changed(ctx, NOTIFY_GENERIC, "del", dst);
    }
    reply_int(ctx->out, (long long)n);
}

/* stable sort of sets by ascending size (Redis qsorts; glibc's is a mergesort) */
static void sort_by_size(struct object **sets, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct object *o = sets[i];
        size_t sz = set_size(o), j = i;
        while (j > 0 && set_size(sets[j - 1]) > sz) {
            sets[j] = sets[j - 1];
            j--;
        }
        sets[j] = o;
    }
}

/*
 * Redis sinterGenericCommand: keys[0..nkeys) intersected; into dst when
 * dst != NULL, a count (stopping at limit, 0 none) when cardinality_only,
 * else the members as a set reply.
 */
static void sinter_generic(struct cmd_ctx *ctx, const struct resp_arg *keys, size_t nkeys,
                           const struct resp_arg *dst, bool cardinality_only, long long limit)
{
    struct object **sets = mem_alloc(nkeys * sizeof *sets);
    size_t empty = 0;

    for (size_t j = 0; j < nkeys; j++) {
        struct object *o = cmd_lookup_read(ctx, &keys[j]);
        if (o == NULL) {
            empty++;
            sets[j] = NULL;
            continue;
        }
        if (!check_set_or_reply(ctx, o)) {
            mem_release(sets);
            return;
        }
        sets[j] = o;
    }
    if (empty > 0) {
        mem_release(sets);
        if (dst)
            store_result(ctx, dst, NULL, "sinterstore");
        else if (cardinality_only)
            reply_int(ctx->out, 0);
        else
            reply_set(ctx->out, 0);
        return;
    }
    sort_by_size(sets, nkeys);

    struct object *dstset = dst ? set_create(SET_ENC_INTSET) : NULL;
    struct reply buf;
    long long cardinality = 0;
    struct set_iter it;
    struct set_member m;

    reply_init(&buf);
    buf.resp = ctx->out->resp;
    set_iter_init(&it, sets[0]);
    while (set_iter_next(&it, &m)) {
        size_t j;
        for (j = 1; j < nkeys; j++) {
            if (sets[j] == sets[0])
                continue;
            if (!set_has_member(sets[j], &m))
                break;
        }
        if (j < nkeys)
            continue;
        if (cardinality_only) {
            cardinality++;
            if (limit && cardinality >= limit)
                break;
        } else if (!dst) {
            reply_member(&buf, &m);
            cardinality++;
        } else {
            set_add_member(ctx, dstset, &m);
        }
    }
    mem_release(sets);

    if (cardinality_only) {
        reply_int(ctx->out, cardinality);
    } else if (dst) {
        store_result(ctx, dst, dstset, "sinterstore");
    } else {
        reply_set(ctx->out, cardinality);
        if (buf.len)
            reply_raw(ctx->out, buf.buf, buf.len);
    }
    reply_deinit(&buf);
}

static void cmd_sinter(struct cmd_ctx *ctx)
{
    sinter_generic(ctx, ctx->argv + 1, (size_t)ctx->argc - 1, NULL, false, 0);
}

static void cmd_sinterstore(struct cmd_ctx *ctx)
{
    sinter_generic(ctx, ctx->argv + 2, (size_t)ctx->argc - 2, &ctx->argv[1], false, 0);
}

static void cmd_sintercard(struct cmd_ctx *ctx)
{
    long long numkeys, limit = 0;

    if (!cmd_get_range_ll_or_reply(ctx, &ctx->argv[1], 1, LONG_MAX, &numkeys,
                                 "ERR numkeys should be greater than 0"))
        return;
    if (numkeys > ctx->argc - 2) {
        reply_error(ctx->out, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)numkeys; j < ctx->argc; j++) {
        int moreargs = ctx->argc - 1 - j;
        if (cmd_arg_is(&ctx->argv[j], "limit") && moreargs) {
            j++;
            if (!cmd_get_positive_ll_or_reply(ctx, &ctx->argv[j], &limit,
                                            "ERR LIMIT can't be negative"))
                return;
        } else {
            reply_syntax_error(ctx->out);
            return;
        }
    }
    sinter_generic(ctx, ctx->argv + 2, (size_t)numkeys, NULL, true, limit);
}

/* ---- SUNION SDIFF and their STORE forms ------------------------------------ */

/* Redis sunionDiffGenericCommand */
static void sunion_diff_generic(struct cmd_ctx *ctx, const struct resp_arg *keys, size_t nkeys,
                                const struct resp_arg *dst, enum set_op op)
{
    struct object **sets = mem_alloc(nkeys * sizeof *sets);
    int diff_algo = 1;

    for (size_t j = 0; j < nkeys; j++) {
        struct object *o = cmd_lookup_read(ctx, &keys[j]);
        if (o == NULL) {
            sets[j] = NULL;
            continue;
        }
        if (!check_set_or_reply(ctx, o)) {
            mem_release(sets);
            return;
        }
        sets[j] = o;
    }

    /* algorithm 1 is O(N*M) (N: first set, M: sets), 2 is O(total members) */
    if (op == SET_OP_DIFF && sets[0]) {
        long long algo_one_work = 0, algo_two_work = 0;
        for (size_t j = 0; j < nkeys; j++) {
            if (sets[j] == NULL)
                continue;
            algo_one_work += (long long)set_size(sets[0]);
            algo_two_work += (long long)set_size(sets[j]);
        }
        algo_one_work /= 2; /* it has better constants */
        diff_algo = algo_one_work <= algo_two_work ? 1 : 2;
        if (diff_algo == 1 && nkeys > 1) {
            /* subtract the biggest sets first (stable, by decreasing size; NULL last) */
            for (size_t i = 2; i < nkeys; i++) {
                struct object *o = sets[i];
                size_t sz = o ? set_size(o) : 0, j = i;
                while (j > 1 && (sets[j - 1] ? set_size(sets[j - 1]) : 0) < sz) {
                    sets[j] = sets[j - 1];
                    j--;
                }
                sets[j] = o;
            }
        }
    }

    struct object *dstset = set_create(SET_ENC_INTSET);
    long long cardinality = 0;
    struct set_iter it;
    struct set_member m;
    struct set_limits lim;
    limits(ctx, &lim);

    if (op == SET_OP_UNION) {
        for (size_t j = 0; j < nkeys; j++) {
            if (sets[j] == NULL)
                continue;
            set_iter_init(&it, sets[j]);
            while (set_iter_next(&it, &m))
                cardinality += set_add(dstset, m.p, m.n, &lim);
        }
    } else if (sets[0] && diff_algo == 1) {
        set_iter_init(&it, sets[0]);
        while (set_iter_next(&it, &m)) {
            size_t j;
            for (j = 1; j < nkeys; j++) {
                if (sets[j] == NULL)
                    continue;
                if (sets[j] == sets[0] || set_has_member(sets[j], &m))
                    break;
            }
            if (j == nkeys) {
                set_add_member(ctx, dstset, &m);
                cardinality++;
            }
        }
    } else if (sets[0] && diff_algo == 2) {
        for (size_t j = 0; j < nkeys; j++) {
            if (sets[j] == NULL)
                continue;
            set_iter_init(&it, sets[j]);
            while (set_iter_next(&it, &m)) {
                if (j == 0)
                    cardinality += set_add(dstset, m.p, m.n, &lim);
                else
                    cardinality -= set_remove(dstset, m.p, m.n);
            }
            if (cardinality == 0)
                break;
        }
    }
    mem_release(sets);

    if (dst) {
        store_result(ctx, dst, dstset, op == SET_OP_UNION ? "sunionstore" : "sdiffstore");
        return;
    }
    reply_set_members(ctx->out, dstset);
    object_destroy(&dstset);
}

static void cmd_sunion(struct cmd_ctx *ctx)
{
    sunion_diff_generic(ctx, ctx->argv + 1, (size_t)ctx->argc - 1, NULL, SET_OP_UNION);
}

static void cmd_sunionstore(struct cmd_ctx *ctx)
{
    sunion_diff_generic(ctx, ctx->argv + 2, (size_t)ctx->argc - 2, &ctx->argv[1], SET_OP_UNION);
}

static void cmd_sdiff(struct cmd_ctx *ctx)
{
    sunion_diff_generic(ctx, ctx->argv + 1, (size_t)ctx->argc - 1, NULL, SET_OP_DIFF);
}

static void cmd_sdiffstore(struct cmd_ctx *ctx)
{
    sunion_diff_generic(ctx, ctx->argv + 2, (size_t)ctx->argc - 2, &ctx->argv[1], SET_OP_DIFF);
}

/* ---- SSCAN ----------------------------------------------------------------- */

struct sscan_collect {
    struct reply buf;       /* bulk replies of the members kept */
    long long seen;         /* members collected (COUNT's budget) */
    long long kept;         /* members in buf */
    struct scan_options so; /* COUNT and the MATCH filter */
};

static void sscan_keep(struct sscan_collect *sc, const char *p, size_t n)
{
    sc->seen++;
    if (!cmd_scan_match(&sc->so, p, n))
        return;
    reply_bulk(&sc->buf, p, n);
    sc->kept++;
}

static void sscan_entry(void *arg, const struct dict_entry *e)
{
    size_t n;
    const char *k = dict_entry_key(e, &n);
    sscan_keep(arg, k, n);
}

static void cmd_sscan(struct cmd_ctx *ctx)
{
    struct sscan_collect sc;
    uint64_t cursor;
    struct object *set;

    if (!cmd_scan_cursor_or_reply(ctx, &ctx->argv[2], &cursor))
        return;
    set = cmd_lookup_read(ctx, &ctx->argv[1]);
    if (set == NULL) {
        cmd_scan_reply(ctx, 0, 0, NULL);
        return;
    }
    if (!check_set_or_reply(ctx, set))
        return;

    memset(&sc, 0, sizeof sc);
    if (!cmd_scan_options_or_reply(ctx, 3, false, &sc.so))
        return;

    reply_init(&sc.buf);
    sc.buf.resp = ctx->out->resp;
    if (set_encoding(set) != SET_ENC_HASHTABLE) {
        /* a small encoding is returned whole, cursor 0 */
        struct set_iter it;
        struct set_member m;
        set_iter_init(&it, set);
        while (set_iter_next(&it, &m))
            sscan_keep(&sc, m.p, m.n);
        cursor = 0;
    } else {
        struct dict *d = set_dict(set);
        long long maxiter = sc.so.count > LLONG_MAX / 10 ? LLONG_MAX : sc.so.count * 10;
        do {
            cursor = dict_scan(d, cursor, sscan_entry, &sc);
        } while (cursor && maxiter-- && sc.seen < sc.so.count);
    }

    cmd_scan_reply(ctx, cursor, sc.kept, &sc.buf);
    reply_deinit(&sc.buf);
}

/* ---- the table -------------------------------------------------------------- */

const struct command command_family_set[] = {
    {"sadd", cmd_sadd, -3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @set @fast"},
    {"srem", cmd_srem, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @set @fast"},
    {"smembers", cmd_sinter, 2, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @set @slow"},
    {"sismember", cmd_sismember, 3, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@read @set @fast"},
    {"smismember", cmd_smismember, -3, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@read @set @fast"},
    {"scard", cmd_scard, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @set @fast"},
    {"spop", cmd_spop, -2, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @set @fast"},
    {"srandmember", cmd_srandmember, -2, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @set @slow"},
    {"smove", cmd_smove, 4, CMD_WRITE | CMD_FAST, 1, 2, 1, ROUTE_GATHER, "@write @set @fast"},
    {"sinter", cmd_sinter, -2, CMD_READONLY, 1, -1, 1, ROUTE_GATHER, "@read @set @slow"},
    {"sunion", cmd_sunion, -2, CMD_READONLY, 1, -1, 1, ROUTE_GATHER, "@read @set @slow"},
    {"sdiff", cmd_sdiff, -2, CMD_READONLY, 1, -1, 1, ROUTE_GATHER, "@read @set @slow"},
    {"sinterstore", cmd_sinterstore, -3, CMD_WRITE | CMD_DENYOOM, 1, -1, 1, ROUTE_GATHER,
     "@write @set @slow"},
    {"sunionstore", cmd_sunionstore, -3, CMD_WRITE | CMD_DENYOOM, 1, -1, 1, ROUTE_GATHER,
     "@write @set @slow"},
    {"sdiffstore", cmd_sdiffstore, -3, CMD_WRITE | CMD_DENYOOM, 1, -1, 1, ROUTE_GATHER,
     "@write @set @slow"},
    {"sintercard", cmd_sintercard, -3, CMD_READONLY | CMD_NUMKEYS, 1, 0, 1, ROUTE_GATHER,
     "@read @set @slow"},
    {"sscan", cmd_sscan, -3, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @set @slow"},
};
const size_t command_family_set_count = sizeof(command_family_set) / sizeof(command_family_set[0]);
