/*
 * sort: SORT and SORT_RO (Redis 7.0's sort.c): the elements of a list, set
 * or sorted set, sorted numerically or (ALPHA) as strings, by themselves or
 * by the values of other keys (BY pattern, `*` replaced by the element,
 * `->field` reading a hash field; a pattern without `*` sorts nothing),
 * LIMIT offset count, GET patterns (`#` the element itself), ASC/DESC, and
 * STORE destination (a list; an empty result deletes it).
 *
 * Design: the handler follows sortCommandGeneric step for step, so the same
 * input gets the same reply and the same error: options parsed first (the
 * first bad one answers), then the key's type; a set sorted by nothing is
 * sorted as strings when stored (its order would otherwise be the table's);
 * a sorted set converted to a skiplist for good, as Redis converts it
 * (where SORT runs on its shard's store);
 * LIMIT clamped as Redis clamps it; numeric values parsed with strtod as
 * Redis parses them ("One or more scores can't be converted into double",
 * answered only once every element was looked at; a missing BY value counts
 * as 0, or sorts first with ALPHA); ties of numeric values broken by the
 * elements' bytes, ALPHA compared with strcoll (memcmp-like when STORE),
 * all with libc's qsort as Redis does, on the elements in the order Redis
 * collects them, so equal ALPHA BY values keep that order in both.  The
 * elements are copied out of the sorted value first: looking up pattern keys
 * may delete expired keys, and no pointer into the store survives that.
 *
 * Threading and routing: a handler reads one store (ARCHITECTURE.md rule 1).
 * The declared keys are the sorted key and STORE's destination
 * (CMD_SORT_STORE_KEY).  The keys BY and GET patterns form are known only once
 * the sorted value is read, and may live on any shard (CMD_PATTERN_KEYS):
 *
 *   - every pattern names a {hash tag} before its `*` that puts all its keys
 *     on the declared keys' shard (cmd_sort_pattern_slots, read by the
 *     dispatcher's keys_owner): SORT runs there, inline on its home, as fast
 *     as any single-shard command;
 *   - else (a pattern whose keys depend on the element, or on another shard):
 *     the dispatcher locks every shard's keyspace in ascending order, as a
 *     keyspace-wide write does (txn.c; asynchronous, no loop ever waits),
 *     gathers copies of the declared keys, then of every key the patterns
 *     form for the sorted value's copy (cmd_sort_pattern_keys), and runs the
 *     handler on those copies (dispatch.c's pattern gather; STORE's result
 *     is written back to its owner).  Nothing can change in between, so no
 *     client sees a state between the reads, and the reply is Redis's;
 *     Between MULTI and EXEC the same: EXEC locks every shard's keyspace
 *     when it queued such a SORT, which then runs as above;
 *   - where it runs on copies of its declared keys only (a script whose keys
 *     span shards) or on a shard's own store with a formed key owned by
 *     another shard (a script on one shard), a key it cannot read makes it
 *     answer an error naming the option, before reading any, as Redis
 *     Cluster refuses BY and GET patterns -- never a result assembled from
 *     missing keys.
 *
 * The handler tells which keys it can read with key_readable_here: on a
 * shard's store, those whose slot is the shard's; on copies, all of them
 * when the store holds every key it reads (store_holds_every_key), else
 * none.  The global-lock build has one store: every key is there.
 *
 * Effects: SORT ... STORE reports as Redis's setKey then "sortstore" and
 * counts one change per element stored; an empty result deletes the
 * destination ("del", one change) when it existed.  It propagates its
 * result (RESTORE ... REPLACE, or DEL), not itself: elements that sort equal
 * keep the order they were read in, and a set's order is its table's, which
 * another server's differs from, so the SORT would not replay the same.
 */
#include "families.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/hash.h"
#include "percore/list.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/reply.h"
#include "percore/set.h"
#include "percore/slot.h"
#include "percore/store.h"
#include "percore/zset.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* one element to sort; offsets into the sort's byte arena until it is complete */
struct sort_elem {
    size_t off, len;     /* the element: arena bytes, NUL-terminated */
    double score;        /* numeric: its value, or its BY value's */
    size_t cmp_off;      /* ALPHA BY: the BY value (NUL-terminated), when has_cmp */
    size_t cmp_len;
    bool has_cmp;
};

struct sort_options {
    bool desc, alpha, dontsort;
    long long limit_start, limit_count;
    const struct resp_arg *by;    /* BY pattern, NULL none */
    const struct resp_arg *store; /* STORE destination, NULL none */
    const struct resp_arg **gets; /* GET patterns in order */
    int ngets;
};

/* what the comparator reads: Redis keeps it in globals; a thread's own here */
static _Thread_local struct {
    const char *arena;
    bool desc, alpha, bypattern, store;
} sort_by;

static int list_fill(const struct cmd_ctx *ctx)
{
    return ctx->config ? ctx->config->list_max_listpack_size : -2;
}

/* a C string's length within a (Redis reads patterns and options as C strings) */
static size_t cstr_len(const struct resp_arg *a)
{
    return strnlen(a->ptr, a->len);
}

static void arena_add(struct reply *arena, const char *p, size_t n, size_t *off)
{
    *off = arena->len;
    reply_raw(arena, p, n);
    reply_raw(arena, "", 1);
}

/* Redis compareStringObjects: bytes, then length */
static int compare_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c)
        return c;
    return alen < blen ? -1 : alen > blen;
}

static int sort_compare(const void *x, const void *y)
{
    const struct sort_elem *a = x, *b = y;
    const char *ar = sort_by.arena;
    int cmp;
    if (!sort_by.alpha) {
        if (a->score > b->score)
            cmp = 1;
        else if (a->score < b->score)
            cmp = -1;
        else
            cmp = compare_bytes(ar + a->off, a->len, ar + b->off, b->len);
    } else if (sort_by.bypattern) {
        if (!a->has_cmp || !b->has_cmp)
            cmp = a->has_cmp == b->has_cmp ? 0 : a->has_cmp ? 1 : -1;
        else if (sort_by.store)
            cmp = compare_bytes(ar + a->cmp_off, a->cmp_len, ar + b->cmp_off, b->cmp_len);
        else
            cmp = strcoll(ar + a->cmp_off, ar + b->cmp_off);
    } else if (sort_by.store) {
        cmp = compare_bytes(ar + a->off, a->len, ar + b->off, b->len);
    } else {
        cmp = strcoll(ar + a->off, ar + b->off);
    }
    return sort_by.desc ? -cmp : cmp;
}

/* ---- patterns ------------------------------------------------------------- */

/*
 * Redis lookupKeyByPattern, split in two: the key a pattern names for an
 * element (pattern_key: false when the pattern has no `*`, or is `#`), and
 * its value.  The key is built in buf (the caller releases it); field and flen are
 * the hash field after `->`, when there is one.
 */
static bool pattern_key(const struct resp_arg *pat, const char *ele, size_t elen, struct reply *buf,
                        const char **field, size_t *flen)
{
    size_t clen = cstr_len(pat);
    const char *star = memchr(pat->ptr, '*', clen);
    if (!star)
        return false;
    size_t fieldlen = 0;
    *field = NULL;
    const char *after = star + 1;
    size_t after_len = clen - (size_t)(after - pat->ptr);
    for (size_t i = 0; i + 1 < after_len; i++) {
        if (after[i] == '-' && after[i + 1] == '>') {
            if (i + 2 < after_len) { /* "->" then at least one byte */
                *field = after + i + 2;
                fieldlen = pat->len - (size_t)(*field - pat->ptr);
            }
            break;
        }
    }
    *flen = fieldlen;
    size_t prefix = (size_t)(star - pat->ptr);
    size_t postfix = pat->len - (prefix + 1) - (fieldlen ? fieldlen + 2 : 0);
    reply_raw(buf, "", 1); /* buf->buf is never NULL, even for an empty key */
    reply_clear(buf);
    reply_raw(buf, pat->ptr, prefix);
    reply_raw(buf, ele, elen);
    reply_raw(buf, star + 1, postfix);
    return true;
}

static bool is_hash_pattern(const struct resp_arg *pat)
{
    return pat->len >= 1 && pat->ptr[0] == '#' && (pat->len == 1 || pat->ptr[1] == '\0');
}

/* the value pat names for the element, in v and vlen (valid until the store changes); false when none */
static bool pattern_value(struct cmd_ctx *ctx, const struct resp_arg *pat, const char *ele, size_t elen,
                          struct reply *buf, const char **v, size_t *vlen)
{
    if (is_hash_pattern(pat)) {
        *v = ele;
        *vlen = elen;
        return true;
    }
    const char *field;
    size_t flen;
    if (!pattern_key(pat, ele, elen, buf, &field, &flen))
        return false;
    struct resp_arg key = {buf->buf, buf->len};
    const struct object *o = cmd_lookup_read(ctx, &key);
    if (!o)
        return false;
    if (field) {
        if (object_type(o) != OBJ_HASH)
            return false;
        return hash_get(o, field, flen, v, vlen);
    }
    if (object_type(o) != OBJ_STRING)
        return false;
    *v = object_string_ptr(o, vlen);
    return true;
}

/* is the key in the store the handler reads? */
static bool key_readable_here(const struct cmd_ctx *ctx, const char *k, size_t n)
{
#ifdef PERCORE_GLOBAL_LOCK
    (void)ctx, (void)k, (void)n;
    return true; /* one store holds every key */
#else
    if (store_holds_copies(ctx->store)) /* copies of its declared keys, or of every key it reads */
        return store_holds_every_key(ctx->store);
    return !ctx->config || ctx->config->slot_shard[slot_of_key(k, n)] == ctx->shard;
#endif
}

/* every key pat names for the elements is readable here, or the error replied */
static bool pattern_here_or_reply(struct cmd_ctx *ctx, const struct resp_arg *pat, const char *option,
                                  const char *arena, const struct sort_elem *v, long long n, struct reply *buf)
{
    if (is_hash_pattern(pat))
        return true;
    for (long long j = 0; j < n; j++) {
        const char *field;
        size_t flen;
        if (pattern_key(pat, arena + v[j].off, v[j].len, buf, &field, &flen) &&
            !key_readable_here(ctx, buf->buf, buf->len)) {
            reply_errorf(ctx->out,
                         "ERR %s option of SORT denied here: the keys its pattern forms are on another shard than "
                         "the sorted key's (give them its {hash tag})",
                         option);
            return false;
        }
    }
    return true;
}

/* ---- SORT ----------------------------------------------------------------- */

/* the options from argv[2] on, as Redis parses them; false when one was refused (replied) */
static bool sort_options_or_reply(struct cmd_ctx *ctx, bool readonly, struct sort_options *o)
{
    memset(o, 0, sizeof(*o));
    o->limit_count = -1;
    o->gets = mem_alloc((size_t)ctx->argc * sizeof(*o->gets));
    for (int j = 2; j < ctx->argc; j++) {
        int left = ctx->argc - j - 1;
        const struct resp_arg *a = &ctx->argv[j];
        if (cmd_arg_is(a, "asc")) {
            o->desc = false;
        } else if (cmd_arg_is(a, "desc")) {
            o->desc = true;
        } else if (cmd_arg_is(a, "alpha")) {
            o->alpha = true;
        } else if (cmd_arg_is(a, "limit") && left >= 2) {
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[j + 1], &o->limit_start) ||
                !cmd_get_ll_or_reply(ctx, &ctx->argv[j + 2], &o->limit_count))
                return false;
            j += 2;
        } else if (!readonly && cmd_arg_is(a, "store") && left >= 1) {
            o->store = &ctx->argv[++j];
        } else if (cmd_arg_is(a, "by") && left >= 1) {
            o->by = &ctx->argv[++j];
            if (!memchr(o->by->ptr, '*', cstr_len(o->by)))
                o->dontsort = true; /* only a pattern sorts; a later BY does not undo it, as in Redis */
        } else if (cmd_arg_is(a, "get") && left >= 1) {
            o->gets[o->ngets++] = &ctx->argv[++j];
        } else {
            reply_syntax_error(ctx->out);
            return false;
        }
    }
    return true;
}

/* the elements Redis loads, in its order, into v (room for the value's length); returns how many */
static long long sort_load(struct object *val, const struct sort_options *o, long long start, long long count,
                           int fill, struct sort_elem *v, struct reply *arena)
{
    long long n = 0;
    int type = object_type(val);
    if (type == OBJ_LIST) {
        long long len = (long long)list_length(val);
        if (o->dontsort && count <= 0)
            return 0;
        struct list_iter it;
        const char *p;
        size_t plen;
        if (o->dontsort)
            list_iter_init(&it, val, (size_t)(o->desc ? len - start - 1 : start), !o->desc);
        else
            list_iter_init(&it, val, 0, true);
        while ((!o->dontsort || n < count) && list_iter_next(&it, &p, &plen))
            arena_add(arena, p, plen, &v[n++].off), v[n - 1].len = plen;
        list_iter_finish(&it, fill);
    } else if (type == OBJ_SET) {
        struct set_iter it;
        struct set_member m;
        set_iter_init(&it, val);
        while (set_iter_next(&it, &m))
            arena_add(arena, m.p, m.n, &v[n++].off), v[n - 1].len = m.n;
    } else {
        struct zset *z = object_collection_ptr(val);
        long long len = (long long)zset_length(z);
        long long first = o->dontsort ? start : 0;
        long long want = o->dontsort ? count : len;
        bool reverse = o->dontsort && o->desc;
        if (want <= 0 || first >= len)
            return 0;
        struct zset_iter it;
        zset_iter_rank(z, (size_t)first, reverse, &it);
        while (n < want && it.valid) {
            size_t mlen;
            const char *mp = zset_iter_member(&it, &mlen);
            arena_add(arena, mp, mlen, &v[n++].off), v[n - 1].len = mlen;
            zset_iter_step(&it, reverse);
        }
    }
    return n;
}

/* ---- the pattern keys, for the dispatcher ----------------------------------- */

/* SORT's BY and GET patterns, each with its option's argument position, as sortGetKeys skips them */
static int sort_patterns(int argc, const struct resp_arg *argv, const struct resp_arg **pats)
{
    int n = 0;
    for (int i = 2; i < argc; i++) {
        if (cmd_arg_is(&argv[i], "limit")) {
            i += 2;
        } else if ((cmd_arg_is(&argv[i], "by") || cmd_arg_is(&argv[i], "get")) && i + 1 < argc) {
            const struct resp_arg *p = &argv[++i];
            if (!is_hash_pattern(p) && memchr(p->ptr, '*', cstr_len(p)))
                pats[n++] = p;
        } else if (cmd_arg_is(&argv[i], "store")) {
            i++;
        }
    }
    return n;
}

int cmd_sort_pattern_slots(int argc, const struct resp_arg *argv, int *slots)
{
    const struct resp_arg **pats = mem_alloc((size_t)argc * sizeof(*pats));
    int n = sort_patterns(argc, argv, pats);
    for (int i = 0; i < n; i++) {
        /* the key is prefix + element + rest: its slot is the prefix's when a {tag} closes inside it */
        size_t prefix = (size_t)((const char *)memchr(pats[i]->ptr, '*', cstr_len(pats[i])) - pats[i]->ptr);
        const char *open = memchr(pats[i]->ptr, '{', prefix);
        const char *close = open ? memchr(open + 1, '}', prefix - (size_t)(open + 1 - pats[i]->ptr)) : NULL;
        slots[i] = close && close > open + 1 ? (int)slot_of_key(pats[i]->ptr, prefix) : -1;
    }
    mem_release(pats);
    return n;
}

void cmd_sort_pattern_keys(int argc, const struct resp_arg *argv, struct object *sorted, cmd_key_fn *fn,
                           void *arg)
{
    int type = object_type(sorted);
    if (type != OBJ_LIST && type != OBJ_SET && type != OBJ_ZSET)
        return;
    const struct resp_arg **pats = mem_alloc((size_t)argc * sizeof(*pats));
    int npats = sort_patterns(argc, argv, pats);
    size_t total = object_length(sorted);
    struct sort_elem *v = mem_calloc(total ? total : 1, sizeof(*v));
    struct reply arena, key;
    reply_init(&arena);
    reply_init(&key);
    struct sort_options all = {0}; /* every element, in any order */
    long long n = sort_load(sorted, &all, 0, (long long)total, -2, v, &arena);
    for (int p = 0; p < npats; p++) {
        for (long long j = 0; j < n; j++) {
            const char *field;
            size_t flen;
            if (pattern_key(pats[p], arena.buf + v[j].off, v[j].len, &key, &field, &flen))
                fn(arg, key.buf, key.len);
        }
    }
    reply_deinit(&key);
    reply_deinit(&arena);
    mem_release(v);
    mem_release(pats);
}

/* SORT's values: numeric ones parsed (*conversion_error when one is no double), ALPHA BY ones copied */
static void sort_values(struct cmd_ctx *ctx, const struct sort_options *o, struct sort_elem *v, long long n,
                        struct reply *arena, bool *conversion_error)
{
    struct reply keybuf, num;
    reply_init(&keybuf);
    reply_init(&num);
    for (long long j = 0; j < n; j++) {
        const char *bv = arena->buf + v[j].off;
        size_t blen = v[j].len;
        if (o->by && !pattern_value(ctx, o->by, arena->buf + v[j].off, v[j].len, &keybuf, &bv, &blen))
            continue;
        if (o->alpha) {
            if (o->by) {
                struct reply copy; /* bv may point into the arena, which grows */
                reply_init(&copy);
                reply_raw(&copy, bv, blen);
                arena_add(arena, copy.buf ? copy.buf : "", copy.len, &v[j].cmp_off);
                reply_deinit(&copy);
                v[j].cmp_len = blen;
                v[j].has_cmp = true;
            }
            continue;
        }
        reply_clear(&num); /* strtod over a C string: Redis's value up to its first NUL */
        reply_raw(&num, bv, blen);
        reply_raw(&num, "", 1);
        char *end;
        errno = 0;
        v[j].score = strtod(num.buf, &end);
        if (*end != '\0' || errno == ERANGE || isnan(v[j].score))
            *conversion_error = true;
    }
    reply_deinit(&keybuf);
    reply_deinit(&num);
}

/* SORT ... STORE: the result as a list at the destination (Redis's setKey), or the destination deleted */
static void sort_store(struct cmd_ctx *ctx, const struct sort_options *o, const struct sort_elem *v,
                       const char *arena, long long start, long long end, long long outputlen)
{
    const struct resp_arg *dst = o->store;
    int fill = list_fill(ctx);
    struct reply keybuf;
    reply_init(&keybuf);
    struct object *list = list_object_create();
    for (long long j = start; j <= end; j++) {
        if (!o->ngets) {
            list_push(list, LIST_TAIL, arena + v[j].off, v[j].len, fill);
            continue;
        }
        for (int g = 0; g < o->ngets; g++) {
            const char *gv;
            size_t glen;
            if (pattern_value(ctx, o->gets[g], arena + v[j].off, v[j].len, &keybuf, &gv, &glen))
                list_push(list, LIST_TAIL, gv, glen, fill);
            else
                list_push(list, LIST_TAIL, "", 0, fill);
        }
    }
    reply_deinit(&keybuf);
    if (outputlen) {
        cmd_lookup_write(ctx, dst); /* an expired destination is gone first: the key is new */
        if (store_set(ctx->store, ctx->db, dst->ptr, dst->len, list, 0))
            cmd_notify(ctx, NOTIFY_NEW, "new", dst);
        cmd_modified_n(ctx, dst, outputlen);
        cmd_notify(ctx, NOTIFY_LIST, "sortstore", dst);
        if (cmd_propagating(ctx)) /* the result, not the SORT: equal elements of a set come in table order */
            cmd_propagate_restore(ctx, dst, store_peek(ctx->store, ctx->db, dst->ptr, dst->len, ctx->now, NULL), -1);
    } else {
        object_destroy(&list);
        if (store_delete(ctx->store, ctx->db, dst->ptr, dst->len, ctx->now)) {
            cmd_changed(ctx, NOTIFY_GENERIC, "del", dst);
            if (cmd_propagating(ctx))
                cmd_propagate_key(ctx, "DEL", dst, NULL);
        }
    }
    reply_int(ctx->out, outputlen);
}

static void sort_generic(struct cmd_ctx *ctx, bool readonly)
{
    struct sort_options o;
    if (!sort_options_or_reply(ctx, readonly, &o)) {
        mem_release(o.gets);
        return;
    }
    struct object *val = cmd_lookup_read(ctx, &ctx->argv[1]);
    int type = val ? object_type(val) : OBJ_LIST;
    if (type != OBJ_LIST && type != OBJ_SET && type != OBJ_ZSET) {
        reply_wrongtype(ctx->out);
        mem_release(o.gets);
        return;
    }
    /* Redis converts a sorted set for SORT, and leaves it so; not a copy, which would then be written back to
     * its owner as a change (a WATCH touched, a RESTORE in the AOF) */
    if (val && type == OBJ_ZSET && !store_holds_copies(ctx->store)) {
        const struct resp_arg *key = &ctx->argv[1];
        struct zset *z;
        object_collection_own(val);
        zset_convert(z = object_collection_ptr(val), ZSET_ENC_SKIPLIST);
        object_collection_set(val, ZSET_ENC_SKIPLIST, z);
        store_settle(ctx->store, ctx->db, key->ptr, key->len, val);
        val = store_peek(ctx->store, ctx->db, key->ptr, key->len, ctx->now, NULL);
    }
    if (o.dontsort && type == OBJ_SET && o.store) { /* a stored set is sorted, not left in table order */
        o.dontsort = false;
        o.alpha = true;
        o.by = NULL;
    }
    long long vectorlen = !val ? 0 : type == OBJ_LIST ? (long long)list_length(val)
                                   : type == OBJ_SET  ? (long long)set_size(val)
                                                      : (long long)zset_length(object_collection_ptr(val));
    long long total = vectorlen;
    long long start = o.limit_start < 0 ? 0 : o.limit_start;
    long long end = o.limit_count < 0 ? vectorlen - 1 : start + o.limit_count - 1;
    if (start >= vectorlen) {
        start = vectorlen - 1;
        end = vectorlen - 2;
    }
    if (end >= vectorlen)
        end = vectorlen - 1;
    bool direct = (type == OBJ_ZSET || type == OBJ_LIST) && o.dontsort; /* the range read as it is */
    if (direct && (start != 0 || end != vectorlen - 1))
        vectorlen = end - start + 1;
    struct sort_elem *v = mem_calloc((size_t)(total ? total : 1), sizeof(*v));
    struct reply arena, keybuf;
    reply_init(&arena);
    reply_init(&keybuf);
    long long n = val ? sort_load(val, &o, start, vectorlen, list_fill(ctx), v, &arena) : 0;
    if (direct) {
        end -= start;
        start = 0;
    }
    bool ok = (o.dontsort || !o.by || pattern_here_or_reply(ctx, o.by, "BY", arena.buf, v, n, &keybuf));
    for (int g = 0; ok && g < o.ngets; g++)
        ok = pattern_here_or_reply(ctx, o.gets[g], "GET", arena.buf, v, n, &keybuf);
    bool conversion_error = false;
    if (ok && !o.dontsort) {
        sort_values(ctx, &o, v, n, &arena, &conversion_error);
        sort_by.arena = arena.buf;
        sort_by.desc = o.desc;
        sort_by.alpha = o.alpha;
        sort_by.bypattern = o.by != NULL;
        sort_by.store = o.store != NULL;
        qsort(v, (size_t)n, sizeof(*v), sort_compare);
    }
    long long outputlen = o.ngets ? o.ngets * (end - start + 1) : end - start + 1;
    if (!ok) {
        /* the error is replied */
    } else if (conversion_error) {
        reply_error(ctx->out, "ERR One or more scores can't be converted into double");
    } else if (o.store) {
        sort_store(ctx, &o, v, arena.buf, start, end, outputlen);
    } else {
        reply_array(ctx->out, outputlen);
        for (long long j = start; j <= end; j++) {
            if (!o.ngets)
                reply_bulk(ctx->out, arena.buf + v[j].off, v[j].len);
            for (int g = 0; g < o.ngets; g++) {
                const char *gv;
                size_t glen;
                if (pattern_value(ctx, o.gets[g], arena.buf + v[j].off, v[j].len, &keybuf, &gv, &glen))
                    reply_bulk(ctx->out, gv, glen);
                else
                    reply_null(ctx->out);
            }
        }
    }
    reply_deinit(&keybuf);
    reply_deinit(&arena);
    mem_release(v);
    mem_release(o.gets);
}

static void cmd_sort(struct cmd_ctx *ctx)
{
    sort_generic(ctx, false);
}

static void cmd_sort_ro(struct cmd_ctx *ctx)
{
    sort_generic(ctx, true);
}

/* ---- table ---------------------------------------------------------------- */

/* arity, flags, key positions and ACL categories as Redis 7.0.15's COMMAND INFO reports them; SORT's
 * keys are the sorted key and STORE's destination (CMD_SORT_STORE_KEY) */
const struct command command_family_sort[] = {
    {"sort", cmd_sort, -2, CMD_WRITE | CMD_DENYOOM | CMD_SORT_STORE_KEY | CMD_PATTERN_KEYS, 1, 1, 1, ROUTE_OWNER,
     "@write @set @sortedset @list @slow @dangerous"},
    {"sort_ro", cmd_sort_ro, -2, CMD_READONLY | CMD_PATTERN_KEYS, 1, 1, 1, ROUTE_OWNER, "@read @set @sortedset @list @slow @dangerous"},
};

const size_t command_family_sort_count = sizeof(command_family_sort) / sizeof(command_family_sort[0]);
