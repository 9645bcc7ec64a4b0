/*
 * stream: the stream command family (Redis 7.0's t_stream.c): XADD XRANGE
 * XREVRANGE XLEN XDEL XTRIM XSETID XREAD XREADGROUP (BLOCK: core/block.c)
 * XINFO (STREAM, and GROUPS/CONSUMERS of a stream without groups).
 *
 * Design: the value is store/stream.c's; this file parses and answers as
 * Redis 7.0 does, in the same order of checks, so that errors match (an ID
 * is parsed as Redis's streamGenericParseIDOrReply: a C string of at most
 * 127 bytes, "ms" or "ms-seq" through string2ull, which takes what
 * strtoull takes).  XADD and XTRIM trim as streamTrim; with `~` they are
 * propagated with `=` and the trim's actual outcome (the length left for
 * MAXLEN, the first entry's ID for MINID) and without LIMIT, so that a
 * replay trims the same entries; XADD's generated ID is propagated in place
 * of `*` or `ms-*`.  Effects as Redis's: "xadd" (and "new" when it creates
 * the key), "xtrim" after a trim that removed something, "xdel", "xsetid";
 * one change per entry added or removed.
 *
 * XREAD and XREADGROUP name their keys after STREAMS (CMD_KEYS_STREAMS):
 * keys on several shards are gathered onto one (ROUTE_GATHER) and read
 * there.  They are CMD_BLOCKING: with BLOCK and nothing to read they wait at
 * their keys' owner (core/block.c, which resolves `$` as it registers the
 * waiter and serves it when an entry comes; over keys of several shards,
 * after the gathered run found nothing, at each owner); inside MULTI and
 * scripts they answer nil at once.
 *
 * Threading: handlers run on the shard that owns (or gathered) the keys and
 * touch only ctx->store.
 */
#include "families.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/reply.h"
#include "percore/store.h"
#include "percore/stream.h"
#include "percore/stream_group.h"
#include "percore/util.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_ID_INVALID "ERR Invalid stream ID specified as stream command argument"
#define STREAM_ELEMENTS_MAX (1u << 30) /* Redis's STREAM_LISTPACK_MAX_SIZE: an entry's bytes */

static const struct stream_id ID_MIN = {0, 0};
static const struct stream_id ID_MAX = {UINT64_MAX, UINT64_MAX};

/* ---- parsing ------------------------------------------------------------------------ */

/* Redis's string2ull: string2ll when it fits and is not negative, else strtoull's whole-string parse */
static bool parse_ull(const char *s, uint64_t *v)
{
    long long ll;
    if (util_str_to_ll(s, strlen(s), &ll)) {
        if (ll < 0)
            return false;
        *v = (uint64_t)ll;
        return true;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long u = strtoull(s, &end, 10);
    if (errno == EINVAL || errno == ERANGE || *s == '\0' || *end != '\0')
        return false;
    *v = u;
    return true;
}

/*
 * Redis's streamGenericParseIDOrReply: "-" and "+" (unless strict), "ms"
 * (seq missing_seq), "ms-seq", and with seq_given "ms-*" (*seq_given false).
 */
static bool parse_id(const struct resp_arg *a, struct stream_id *id, uint64_t missing_seq, bool strict,
                     bool *seq_given)
{
    char buf[128];
    if (a->len > sizeof buf - 1)
        return false;
    memcpy(buf, a->ptr, a->len);
    buf[a->len] = '\0';
    if (strict && (buf[0] == '-' || buf[0] == '+') && buf[1] == '\0')
        return false;
    if (seq_given)
        *seq_given = true;
    if (buf[0] == '-' && buf[1] == '\0') {
        *id = ID_MIN;
        return true;
    }
    if (buf[0] == '+' && buf[1] == '\0') {
        *id = ID_MAX;
        return true;
    }
    char *dash = strchr(buf, '-');
    if (dash)
        *dash = '\0';
    if (!parse_ull(buf, &id->ms))
        return false;
    if (dash == NULL) {
        id->seq = missing_seq;
    } else if (seq_given && strcmp(dash + 1, "*") == 0) {
        id->seq = 0;
        *seq_given = false;
    } else if (!parse_ull(dash + 1, &id->seq)) {
        return false;
    }
    return true;
}

static bool parse_id_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, struct stream_id *id,
                              uint64_t missing_seq, bool strict)
{
    if (parse_id(a, id, missing_seq, strict, NULL))
        return true;
    reply_error(ctx->out, STREAM_ID_INVALID);
    return false;
}

/* Redis's streamParseIntervalIDOrReply: "(id" is exclusive (then strict) */
static bool parse_interval_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, struct stream_id *id,
                                    bool *exclude, uint64_t missing_seq)
{
    *exclude = a->len > 1 && a->ptr[0] == '(';
    if (*exclude) {
        struct resp_arg rest = {a->ptr + 1, a->len - 1};
        return parse_id_or_reply(ctx, &rest, id, missing_seq, true);
    }
    return parse_id_or_reply(ctx, a, id, missing_seq, false);
}

/* ---- replies ------------------------------------------------------------------------ */

static void reply_id(struct reply *out, const struct stream_id *id)
{
    char buf[48];
    reply_bulk(out, buf, stream_id_format(id, buf));
}

/* one entry: [id, [field, value, ...]] (the entry just read from it) */
static void reply_entry(struct reply *out, struct stream_iter *it, const struct stream_id *id, size_t nfields)
{
    reply_array(out, 2);
    reply_id(out, id);
    reply_array(out, (long long)nfields * 2);
    for (size_t i = 0; i < nfields; i++) {
        struct stream_str f, v;
        stream_iter_pair(it, &f, &v);
        reply_bulk(out, f.p, f.n);
        reply_bulk(out, v.p, v.n);
    }
}

/* Redis's streamReplyWithRange without a group: the entries of [start, end], count at most (0: all) */
static long long reply_range(struct reply *out, const struct stream *s, const struct stream_id *start,
                             const struct stream_id *end, long long count, bool rev)
{
    struct stream_iter it;
    struct stream_id id;
    size_t nfields;
    long long n = 0;

    stream_iter_init(&it, s, start, end, rev);
    while ((count == 0 || n < count) && stream_iter_next(&it, &id, &nfields))
        n++;
    reply_array(out, n);
    stream_iter_init(&it, s, start, end, rev);
    for (long long i = 0; i < n && stream_iter_next(&it, &id, &nfields); i++)
        reply_entry(out, &it, &id, nfields);
    return n;
}

/* ---- lookups ----------------------------------------------------------------------- */

static struct stream_limits limits_of(const struct cmd_ctx *ctx)
{
    struct stream_limits lim = {ctx->config->stream_node_max_bytes, ctx->config->stream_node_max_entries};
    return lim;
}

/* the stream under key to read, NULL (and reply `missing`, when not NULL) if none or (WRONGTYPE) of another type */
static struct stream *stream_read_or_reply(struct cmd_ctx *ctx, const struct resp_arg *key, bool write,
                                           void (*missing)(struct cmd_ctx *))
{
    bool wrongtype;
    struct object *o = cmd_lookup_typed(ctx, key, OBJ_STREAM, write, &wrongtype);
    if (o == NULL && !wrongtype && missing)
        missing(ctx);
    return o ? stream_of(o) : NULL;
}

static void reply_zero(struct cmd_ctx *ctx)
{
    reply_int(ctx->out, 0);
}

static void reply_empty_array(struct cmd_ctx *ctx)
{
    reply_array(ctx->out, 0);
}

static void reply_no_such_key(struct cmd_ctx *ctx)
{
    reply_error(ctx->out, "ERR no such key");
}

/* ---- XADD XTRIM ------------------------------------------------------------------- */

/* what streamParseAddOrTrimArgsOrReply finds */
struct add_args {
    struct stream_trim trim;
    int trim_arg;          /* argv index of the MAXLEN/MINID threshold, 0 none */
    int limit_arg;         /* argv index of LIMIT, 0 none */
    bool limit_given;
    bool nomkstream;
    bool id_given;
    bool seq_given;
    struct stream_id id;
};

/* Redis's streamParseAddOrTrimArgsOrReply: the index of XADD's ID argument, -1 replied */
static int parse_add_trim_or_reply(struct cmd_ctx *ctx, struct add_args *a, bool xadd)
{
    int i = 2;
    memset(a, 0, sizeof *a);
    a->trim.maxlen = -1;
    for (; i < ctx->argc; i++) {
        int more = ctx->argc - 1 - i;
        const struct resp_arg *opt = &ctx->argv[i];
        bool maxlen = cmd_arg_is(opt, "maxlen"), minid = cmd_arg_is(opt, "minid");
        if (xadd && opt->len == 1 && opt->ptr[0] == '*') {
            break;
        } else if ((maxlen || minid) && more) {
            if (a->trim.strategy != STREAM_TRIM_NONE) {
                reply_error(ctx->out, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
                return -1;
            }
            const struct resp_arg *next = &ctx->argv[i + 1];
            a->trim.approx = false;
            if (more >= 2 && next->len == 1 && (next->ptr[0] == '~' || next->ptr[0] == '=')) {
                a->trim.approx = next->ptr[0] == '~';
                i++;
            }
            if (maxlen) {
                if (!cmd_get_ll_or_reply(ctx, &ctx->argv[i + 1], &a->trim.maxlen))
                    return -1;
                if (a->trim.maxlen < 0) {
                    reply_error(ctx->out, "ERR The MAXLEN argument must be >= 0.");
                    return -1;
                }
            } else if (!parse_id_or_reply(ctx, &ctx->argv[i + 1], &a->trim.minid, 0, true)) {
                return -1;
            }
            i++;
            a->trim.strategy = maxlen ? STREAM_TRIM_MAXLEN : STREAM_TRIM_MINID;
            a->trim_arg = i;
        } else if (cmd_arg_is(opt, "limit") && more) {
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[i + 1], &a->trim.limit))
                return -1;
            if (a->trim.limit < 0) {
                reply_error(ctx->out, "ERR The LIMIT argument must be >= 0.");
                return -1;
            }
            a->limit_given = true;
            a->limit_arg = i;
            i++;
        } else if (xadd && cmd_arg_is(opt, "nomkstream")) {
            a->nomkstream = true;
        } else if (xadd) {
            if (!parse_id(opt, &a->id, 0, true, &a->seq_given)) {
                reply_error(ctx->out, STREAM_ID_INVALID);
                return -1;
            }
            a->id_given = true;
            break;
        } else {
            reply_syntax_error(ctx->out);
            return -1;
        }
    }
    if (a->trim.limit && a->trim.strategy == STREAM_TRIM_NONE) {
        reply_error(ctx->out, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return -1;
    }
    if (!xadd && a->trim.strategy == STREAM_TRIM_NONE) {
        reply_error(ctx->out, "ERR syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if (ctx->replaying) { /* Redis's AOF client: its `= <n> LIMIT <m>` records (its own rewrite of `~`) trim
                           * exactly, without a limit */
        a->trim.limit = 0;
    } else if (a->limit_given) {
        if (!a->trim.approx) {
            reply_error(ctx->out, "ERR syntax error, LIMIT cannot be used without the special ~ option");
            return -1;
        }
    } else if (a->trim.approx) { /* 100 nodes' worth, 10000 without a node size, 10^6 at most */
        long long max_entries = ctx->config->stream_node_max_entries;
        a->trim.limit = max_entries == 0 ? 10000 : max_entries > 10000 ? 1000000 : 100 * max_entries;
    } else {
        a->trim.limit = 0;
    }
    return i;
}

/*
 * The command as it is propagated: argv with `~` made `=`, the threshold made
 * the trim's outcome and LIMIT dropped (approx), and the ID argument idpos
 * (when > 0) made id.
 */
static void propagate_rewritten(struct cmd_ctx *ctx, const struct add_args *a, const struct stream *s, int idpos,
                                const struct stream_id *id)
{
    if (!cmd_propagating(ctx))
        return;
    struct resp_arg *v = mem_alloc((size_t)ctx->argc * sizeof *v);
    char idbuf[48], threshold[48];
    int n = 0;
    for (int i = 0; i < ctx->argc; i++) {
        v[n] = ctx->argv[i];
        if (idpos > 0 && i == idpos) {
            v[n].ptr = idbuf;
            v[n].len = stream_id_format(id, idbuf);
        } else if (a->trim.approx && i == a->trim_arg - 1) {
            v[n].ptr = "=";
            v[n].len = 1;
        } else if (a->trim.approx && i == a->trim_arg) {
            struct stream_id first;
            v[n].ptr = threshold;
            if (a->trim.strategy == STREAM_TRIM_MAXLEN) {
                v[n].len = (size_t)util_ll_to_str(threshold, (long long)stream_length(s));
            } else {
                stream_first_entry_id(s, &first);
                v[n].len = stream_id_format(&first, threshold);
            }
        } else if (a->limit_given && i == a->limit_arg) {
            i++; /* LIMIT n: not needed to replay the outcome */
            continue;
        }
        n++;
    }
    cmd_propagate(ctx, n, v);
    mem_release(v);
}

static void cmd_xadd(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct add_args a;
    int idpos = parse_add_trim_or_reply(ctx, &a, true);
    if (idpos < 0)
        return;
    int field_pos = idpos + 1, nargs = ctx->argc - field_pos;
    if (nargs < 2 || nargs % 2 == 1) {
        reply_error(ctx->out, "ERR wrong number of arguments for 'xadd' command");
        return;
    }
    if (a.id_given && a.seq_given && a.id.ms == 0 && a.id.seq == 0) {
        reply_error(ctx->out, "ERR The ID specified in XADD must be greater than 0-0");
        return;
    }
    bool wrongtype, created = false;
    struct object *o = cmd_lookup_typed(ctx, key, OBJ_STREAM, true, &wrongtype);
    if (wrongtype)
        return;
    if (o == NULL) {
        if (a.nomkstream) {
            reply_null(ctx->out);
            return;
        }
        o = stream_object_create();
        created = true;
    }
    struct stream *s = stream_of(o);
    struct stream_id last = stream_last_id(s), id;
    size_t bytes = 0;
    for (int i = field_pos; i < ctx->argc; i++)
        bytes += ctx->argv[i].len;
    const char *err = NULL;
    if (last.ms == UINT64_MAX && last.seq == UINT64_MAX) {
        err = "ERR The stream has exhausted the last possible ID, unable to add more items";
    } else if (bytes > STREAM_ELEMENTS_MAX) {
        err = "ERR Elements are too large to be stored";
    } else if (!a.id_given) {
        id.ms = (uint64_t)ctx->now;
        if (id.ms > last.ms) {
            id.seq = 0;
        } else {
            id = last;
            stream_id_incr(&id);
        }
    } else if (!a.seq_given && a.id.ms == last.ms) {
        id = last;
        if (last.seq == UINT64_MAX)
            err = "ERR The ID specified in XADD is equal or smaller than the target stream top item";
        id.seq++;
    } else {
        id = a.id;
    }
    if (err == NULL && stream_id_cmp(&id, &last) <= 0)
        err = "ERR The ID specified in XADD is equal or smaller than the target stream top item";
    if (err) {
        reply_error(ctx->out, err);
        if (created)
            object_destroy(&o);
        return;
    }

    struct stream_str *fields = mem_alloc((size_t)nargs * sizeof *fields);
    for (int i = 0; i < nargs; i++) {
        fields[i].p = ctx->argv[field_pos + i].ptr;
        fields[i].n = ctx->argv[field_pos + i].len;
    }
    struct stream_limits lim = limits_of(ctx);
    stream_append(s, &id, (size_t)nargs / 2, fields, &lim);
    mem_release(fields);
    reply_id(ctx->out, &id);
    if (created) {
        store_set(ctx->store, ctx->db, key->ptr, key->len, o, 0);
        o = cmd_lookup_write(ctx, key);
        s = stream_of(o);
        cmd_notify(ctx, NOTIFY_NEW, "new", key);
    }
    cmd_changed(ctx, NOTIFY_STREAM, "xadd", key);
    if (a.trim.strategy != STREAM_TRIM_NONE && stream_trim(s, &a.trim))
        cmd_notify(ctx, NOTIFY_STREAM, "xtrim", key);
    if (a.trim.approx || !a.id_given || !a.seq_given)
        propagate_rewritten(ctx, &a, s, idpos, &id);
    store_settle(ctx->store, ctx->db, key->ptr, key->len, o);
}

static void cmd_xtrim(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct add_args a;
    if (parse_add_trim_or_reply(ctx, &a, false) < 0)
        return;
    bool wrongtype;
    struct object *o = cmd_lookup_typed(ctx, key, OBJ_STREAM, true, &wrongtype);
    if (o == NULL) {
        if (!wrongtype)
            reply_int(ctx->out, 0);
        return;
    }
    struct stream *s = stream_of(o);
    long long deleted = stream_trim(s, &a.trim);
    if (deleted) {
        cmd_changed_n(ctx, NOTIFY_STREAM, "xtrim", key, deleted);
        if (a.trim.approx)
            propagate_rewritten(ctx, &a, s, 0, NULL);
        store_settle(ctx->store, ctx->db, key->ptr, key->len, o);
    }
    reply_int(ctx->out, deleted);
}

/* ---- XRANGE XREVRANGE XLEN ------------------------------------------------------------ */

static void xrange_generic(struct cmd_ctx *ctx, bool rev)
{
    const struct resp_arg *startarg = &ctx->argv[rev ? 3 : 2], *endarg = &ctx->argv[rev ? 2 : 3];
    struct stream_id start, end;
    bool startex, endex;
    long long count = -1;

    if (!parse_interval_or_reply(ctx, startarg, &start, &startex, 0))
        return;
    if (startex && !stream_id_incr(&start)) {
        reply_error(ctx->out, "ERR invalid start ID for the interval");
        return;
    }
    if (!parse_interval_or_reply(ctx, endarg, &end, &endex, UINT64_MAX))
        return;
    if (endex && !stream_id_decr(&end)) {
        reply_error(ctx->out, "ERR invalid end ID for the interval");
        return;
    }
    for (int j = 4; j < ctx->argc; j++) {
        if (cmd_arg_is(&ctx->argv[j], "count") && j + 1 < ctx->argc) {
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[++j], &count))
                return;
            if (count < 0)
                count = 0;
        } else {
            reply_syntax_error(ctx->out);
            return;
        }
    }
    struct stream *s = stream_read_or_reply(ctx, &ctx->argv[1], false, reply_empty_array);
    if (s == NULL)
        return;
    if (count == 0)
        reply_null_array(ctx->out);
    else
        reply_range(ctx->out, s, &start, &end, count < 0 ? 0 : count, rev);
}

static void cmd_xrange(struct cmd_ctx *ctx)
{
    xrange_generic(ctx, false);
}

static void cmd_xrevrange(struct cmd_ctx *ctx)
{
    xrange_generic(ctx, true);
}

static void cmd_xlen(struct cmd_ctx *ctx)
{
    struct stream *s = stream_read_or_reply(ctx, &ctx->argv[1], false, reply_zero);
    if (s)
        reply_int(ctx->out, (long long)stream_length(s));
}

/* the n IDs from argv[first] on (strict, as XDEL's and XACK's), or NULL with the error replied; the caller
 * releases them */
static struct stream_id *parse_ids_or_reply(struct cmd_ctx *ctx, int first, int n)
{
    struct stream_id *ids = mem_alloc((size_t)n * sizeof *ids);
    for (int j = 0; j < n; j++) {
        if (!parse_id_or_reply(ctx, &ctx->argv[first + j], &ids[j], 0, true)) {
            mem_release(ids);
            return NULL;
        }
    }
    return ids;
}

/* ---- XDEL XSETID --------------------------------------------------------------------- */

static void cmd_xdel(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    bool wrongtype;
    struct object *o = cmd_lookup_typed(ctx, key, OBJ_STREAM, true, &wrongtype);
    if (o == NULL) {
        if (!wrongtype)
            reply_int(ctx->out, 0);
        return;
    }
    int n = ctx->argc - 2;
    struct stream_id *ids = parse_ids_or_reply(ctx, 2, n);
    if (!ids)
        return;
    struct stream *s = stream_of(o);
    long long deleted = 0;
    for (int j = 0; j < n; j++) {
        if (stream_delete(s, &ids[j])) {
            struct stream_id max = stream_max_deleted_id(s);
            if (stream_id_cmp(&ids[j], &max) > 0)
                stream_set_meta(s, NULL, NULL, &ids[j]);
            deleted++;
        }
    }
    mem_release(ids);
    if (deleted) {
        cmd_changed_n(ctx, NOTIFY_STREAM, "xdel", key, deleted);
        store_settle(ctx->store, ctx->db, key->ptr, key->len, o);
    }
    reply_int(ctx->out, deleted);
}

static void cmd_xsetid(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct stream_id id, max_deleted = {0, 0};
    long long entries_added = -1;

    if (!parse_id_or_reply(ctx, &ctx->argv[2], &id, 0, true))
        return;
    for (int i = 3; i < ctx->argc; i += 2) {
        bool more = i + 1 < ctx->argc;
        if (cmd_arg_is(&ctx->argv[i], "entriesadded") && more) {
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[i + 1], &entries_added))
                return;
            if (entries_added < 0) {
                reply_error(ctx->out, "ERR entries_added must be positive");
                return;
            }
        } else if (cmd_arg_is(&ctx->argv[i], "maxdeletedid") && more) {
            if (!parse_id_or_reply(ctx, &ctx->argv[i + 1], &max_deleted, 0, true))
                return;
            if (stream_id_cmp(&id, &max_deleted) < 0) {
                reply_error(ctx->out, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
                return;
            }
        } else {
            reply_syntax_error(ctx->out);
            return;
        }
    }
    bool wrongtype;
    struct object *o = cmd_lookup_typed(ctx, key, OBJ_STREAM, true, &wrongtype);
    if (o == NULL) {
        if (!wrongtype)
            reply_no_such_key(ctx);
        return;
    }
    struct stream *s = stream_of(o);
    struct stream_id top;
    if (stream_length(s) > 0) {
        stream_last_entry_id(s, &top);
        if (stream_id_cmp(&id, &top) < 0) {
            reply_error(ctx->out, "ERR The ID specified in XSETID is smaller than the target stream top item");
            return;
        }
        if (entries_added != -1 && stream_length(s) > (uint64_t)entries_added) {
            reply_error(ctx->out, "ERR The entries_added specified in XSETID is smaller than the target stream length");
            return;
        }
    }
    bool max_given = max_deleted.ms != 0 || max_deleted.seq != 0;
    stream_set_meta(s, &id, entries_added != -1 ? &entries_added : NULL, max_given ? &max_deleted : NULL);
    reply_ok(ctx->out);
    cmd_changed_server(ctx); /* as Redis 7.0's: WATCH and tracking do not see it */
    cmd_notify(ctx, NOTIFY_STREAM, "xsetid", key);
}

/* ---- group helpers ----------------------------------------------------------------------- */

/* a change Redis counts in server.dirty that is not propagated as sent (Redis's preventCommandPropagation) */
static void count_unpropagated(struct cmd_ctx *ctx, long long n)
{
    ctx->dirty += n;
}

/* one command propagated in place of the handler's; counted as a change so the log takes it */
static void propagate_group_command(struct cmd_ctx *ctx, int argc, const struct resp_arg *argv)
{
    if (!cmd_propagating(ctx))
        return;
    cmd_propagate(ctx, argc, argv);
    if (ctx->effects)
        ctx->effects->changes++;
}

static struct resp_arg arg_of(const char *p, size_t n)
{
    struct resp_arg a = {p, n};
    return a;
}

/* Redis's streamPropagateXCLAIM: XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID LASTID last */
static void propagate_xclaim(struct cmd_ctx *ctx, const struct resp_arg *key, const struct stream_group *g,
                             const struct stream_nack *nack)
{
    if (!cmd_propagating(ctx))
        return;
    char id[48], last[48], time[24], count[24];
    struct resp_arg v[] = {
        arg_of("XCLAIM", 6), *key, arg_of(g->name.p, g->name.len),
        arg_of(nack->consumer->name.p, nack->consumer->name.len), arg_of("0", 1),
        arg_of(id, stream_id_format(&nack->id, id)), arg_of("TIME", 4),
        arg_of(time, (size_t)util_ll_to_str(time, nack->delivery_time)), arg_of("RETRYCOUNT", 10),
        arg_of(count, (size_t)util_ll_to_str(count, (long long)nack->delivery_count)), arg_of("FORCE", 5),
        arg_of("JUSTID", 6), arg_of("LASTID", 6), arg_of(last, stream_id_format(&g->last_id, last)),
    };
    propagate_group_command(ctx, (int)(sizeof v / sizeof v[0]), v);
}

/* Redis's streamPropagateGroupID: XGROUP SETID key group last ENTRIESREAD n */
static void propagate_group_id(struct cmd_ctx *ctx, const struct resp_arg *key, const struct stream_group *g)
{
    if (!cmd_propagating(ctx))
        return;
    char last[48], read[24];
    struct resp_arg v[] = {
        arg_of("XGROUP", 6), arg_of("SETID", 5), *key, arg_of(g->name.p, g->name.len),
        arg_of(last, stream_id_format(&g->last_id, last)), arg_of("ENTRIESREAD", 11),
        arg_of(read, (size_t)util_ll_to_str(read, g->entries_read)),
    };
    propagate_group_command(ctx, (int)(sizeof v / sizeof v[0]), v);
}

/* Redis's streamPropagateConsumerCreation: XGROUP CREATECONSUMER key group consumer */
static void propagate_consumer_creation(struct cmd_ctx *ctx, const struct resp_arg *key,
                                        const struct stream_group *g, const struct resp_arg *consumer)
{
    struct resp_arg v[] = {arg_of("XGROUP", 6), arg_of("CREATECONSUMER", 14), *key, arg_of(g->name.p, g->name.len),
                           *consumer};
    propagate_group_command(ctx, (int)(sizeof v / sizeof v[0]), v);
}

/* Redis's streamCreateConsumer with SCC_DEFAULT: counted and notified */
static struct stream_consumer *consumer_create(struct cmd_ctx *ctx, struct stream_group *g,
                                               const struct resp_arg *key, const struct resp_arg *name)
{
    struct stream_consumer *c = stream_consumer_create(g, name->ptr, name->len, ctx->now);
    if (c) {
        count_unpropagated(ctx, 1);
        cmd_notify(ctx, NOTIFY_STREAM, "xgroup-createconsumer", key);
    }
    return c;
}

/* the consumer named name (its seen time now), created when missing */
static struct stream_consumer *consumer_seen(struct cmd_ctx *ctx, struct stream_group *g, const struct resp_arg *key,
                                             const struct resp_arg *name)
{
    struct stream_consumer *c = stream_consumer_find(g, name->ptr, name->len);
    if (c == NULL)
        c = consumer_create(ctx, g, key, name);
    c->seen_time = ctx->now;
    return c;
}

/* the entry id as [id, [field, value...]] (Redis's STREAM_RWR_RAWENTRIES), false when it is gone */
static bool reply_entry_by_id(struct reply *out, const struct stream *s, const struct stream_id *id)
{
    struct stream_iter it;
    struct stream_id found;
    size_t nfields;
    stream_iter_init(&it, s, id, id, false);
    if (!stream_iter_next(&it, &found, &nfields))
        return false;
    reply_entry(out, &it, &found, nfields);
    return true;
}

/* the group named argv[i] of the stream under key, NULL (and reply -NOGROUP, the XPENDING form) */
static struct stream_group *group_or_nogroup(struct cmd_ctx *ctx, struct stream *s, const struct resp_arg *key,
                                             const struct resp_arg *group)
{
    struct stream_group *g = s ? stream_group_find(s, group->ptr, group->len) : NULL;
    if (g == NULL)
        reply_errorf(ctx->out, "NOGROUP No such key '%.*s' or consumer group '%.*s'", (int)key->len, key->ptr,
                     (int)group->len, group->ptr);
    return g;
}

/* Redis's addReplySubcommandSyntaxError */
static void reply_subcommand_syntax_error(struct cmd_ctx *ctx, const char *family)
{
    reply_errorf(ctx->out, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try %s HELP.",
                 (int)(ctx->argv[1].len < 128 ? ctx->argv[1].len : 128), ctx->argv[1].ptr, family);
}

/* ---- XREAD XREADGROUP ------------------------------------------------------------------------ */

/*
 * Redis's streamReplyWithRange for a group reading new entries (`>`): the
 * entries above the group's last ID, each added to the group's and the
 * consumer's PEL (unless noack) and propagated as XCLAIM, the group's last
 * ID and entries read advanced as 7.0 does.
 */
static void reply_group_new(struct cmd_ctx *ctx, const struct resp_arg *key, struct stream *s,
                            struct stream_group *g, struct stream_consumer *c, long long count, bool noack)
{
    struct stream_iter it;
    struct stream_id id, start = g->last_id;
    size_t nfields;
    long long n = 0;
    bool propagate_last_id = false;

    stream_id_incr(&start);
    stream_iter_init(&it, s, &start, &ID_MAX, false);
    while ((count == 0 || n < count) && stream_iter_next(&it, &id, &nfields))
        n++;
    reply_array(ctx->out, n);
    stream_iter_init(&it, s, &start, &ID_MAX, false);
    for (long long i = 0; i < n && stream_iter_next(&it, &id, &nfields); i++) {
        if (stream_id_cmp(&id, &g->last_id) > 0) {
            if (g->entries_read != STREAM_ENTRIES_READ_UNKNOWN && !stream_range_has_tombstones(s, &id))
                g->entries_read++;
            else if (stream_entries_added(s))
                g->entries_read = stream_estimate_entries_read(s, &id);
            g->last_id = id;
            propagate_last_id = noack;
        }
        reply_entry(ctx->out, &it, &id, nfields);
        if (noack)
            continue;
        struct stream_nack *nack = stream_pel_find(&g->pel, &id);
        if (nack) { /* delivered before (XGROUP SETID went back): it moves to c, as new */
            stream_nack_move(nack, c);
            nack->delivery_time = ctx->now;
            nack->delivery_count = 1;
        } else {
            nack = stream_nack_add(g, c, &id, ctx->now, 1);
        }
        propagate_xclaim(ctx, key, g, nack);
    }
    if (propagate_last_id)
        propagate_group_id(ctx, key, g);
}

/* Redis's streamReplyWithRangeFromConsumerPEL: the consumer's pending entries above start */
static void reply_group_history(struct cmd_ctx *ctx, const struct stream *s, struct stream_consumer *c,
                                const struct stream_id *start, long long count)
{
    size_t from = stream_pel_lower_bound(&c->pel, start);
    size_t n = c->pel.n - from;
    if (count > 0 && (size_t)count < n)
        n = (size_t)count;
    reply_array(ctx->out, (long long)n);
    for (size_t i = from; i < from + n; i++) {
        struct stream_nack *nack = c->pel.v[i];
        if (reply_entry_by_id(ctx->out, s, &nack->id)) {
            nack->delivery_time = ctx->now;
            nack->delivery_count++;
        } else {
            reply_array(ctx->out, 2);
            reply_id(ctx->out, &nack->id);
            reply_null_array(ctx->out);
        }
    }
}

/* what XREAD and XREADGROUP were asked */
struct xread_args {
    long long count;
    bool block;
    bool noack;
    int streams_arg;                 /* argv index of the first key */
    int nstreams;
    const struct resp_arg *group;    /* XREADGROUP's GROUP group consumer, else NULL */
    const struct resp_arg *consumer;
};

/* Redis's xreadCommand's options, false replied */
static bool parse_xread_or_reply(struct cmd_ctx *ctx, struct xread_args *a, bool xreadgroup)
{
    long long timeout;
    memset(a, 0, sizeof *a);
    for (int i = 1; i < ctx->argc; i++) {
        int more = ctx->argc - i - 1;
        const struct resp_arg *opt = &ctx->argv[i];
        if (cmd_arg_is(opt, "block") && more) {
            /* Redis's getTimeoutFromObjectOrReply in milliseconds */
            if (!cmd_get_range_ll_or_reply(ctx, &ctx->argv[++i], LLONG_MIN, LLONG_MAX, &timeout,
                                           "ERR timeout is not an integer or out of range"))
                return false;
            if (timeout < 0) {
                reply_error(ctx->out, "ERR timeout is negative");
                return false;
            }
            a->block = true;
        } else if (cmd_arg_is(opt, "count") && more) {
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[++i], &a->count))
                return false;
            if (a->count < 0)
                a->count = 0;
        } else if (cmd_arg_is(opt, "streams") && more) {
            a->streams_arg = i + 1;
            a->nstreams = ctx->argc - a->streams_arg;
            if (a->nstreams % 2 != 0) {
                reply_error(ctx->out, "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' "
                                      "must be specified.");
                return false;
            }
            a->nstreams /= 2;
            break;
        } else if (cmd_arg_is(opt, "group") && more >= 2) {
            if (!xreadgroup) {
                reply_error(ctx->out, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
                return false;
            }
            a->group = &ctx->argv[i + 1];
            a->consumer = &ctx->argv[i + 2];
            i += 2;
        } else if (cmd_arg_is(opt, "noack")) {
            if (!xreadgroup) {
                reply_error(ctx->out, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
                return false;
            }
            a->noack = true;
        } else {
            reply_syntax_error(ctx->out);
            return false;
        }
    }
    if (a->streams_arg == 0) {
        reply_syntax_error(ctx->out);
        return false;
    }
    if (xreadgroup && a->group == NULL) {
        reply_error(ctx->out, "ERR Missing GROUP option for XREADGROUP");
        return false;
    }
    return true;
}

static const struct stream_id ID_NEW = {UINT64_MAX, UINT64_MAX}; /* XREADGROUP's `>` */

static void xread_generic(struct cmd_ctx *ctx, bool xreadgroup)
{
    struct xread_args a;
    if (!parse_xread_or_reply(ctx, &a, xreadgroup))
        return;
    int nstreams = a.nstreams;
    struct stream_id *ids = mem_alloc((size_t)nstreams * sizeof *ids);
    struct stream_group **groups = mem_calloc((size_t)nstreams, sizeof *groups);
    for (int i = 0; i < nstreams; i++) {
        const struct resp_arg *key = &ctx->argv[a.streams_arg + i], *arg = &ctx->argv[a.streams_arg + nstreams + i];
        struct object *o = cmd_lookup_read(ctx, key);
        if (o && object_type(o) != OBJ_STREAM) {
            reply_wrongtype(ctx->out);
            goto done;
        }
        if (a.group) {
            groups[i] = o ? stream_group_find(stream_of(o), a.group->ptr, a.group->len) : NULL;
            if (groups[i] == NULL) {
                reply_errorf(ctx->out,
                             "NOGROUP No such key '%.*s' or consumer group '%.*s' in XREADGROUP with GROUP option",
                             (int)key->len, key->ptr, (int)a.group->len, a.group->ptr);
                goto done;
            }
        }
        if (arg->len == 1 && arg->ptr[0] == '$') {
            if (xreadgroup) {
                reply_error(ctx->out, "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
                                      "history of this consumer by specifying a proper ID, or use the > ID to get "
                                      "new messages. The $ ID would just return an empty result set.");
                goto done;
            }
            ids[i] = o ? stream_last_id(stream_of(o)) : ID_MIN;
        } else if (arg->len == 1 && arg->ptr[0] == '>') {
            if (!xreadgroup) {
                reply_error(ctx->out, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
                                      "<group> <consumer> option.");
                goto done;
            }
            ids[i] = ID_NEW;
        } else if (!parse_id_or_reply(ctx, arg, &ids[i], 0, true)) {
            goto done;
        }
    }

    /* the streams with something to serve: history, or an entry above the ID (the group's last for `>`) */
    struct object **serve = mem_calloc((size_t)nstreams, sizeof *serve);
    long long served = 0;
    for (int i = 0; i < nstreams; i++) {
        struct object *o = cmd_lookup_read(ctx, &ctx->argv[a.streams_arg + i]);
        struct stream_id top;
        if (o == NULL)
            continue;
        bool history = groups[i] && stream_id_cmp(&ids[i], &ID_NEW) != 0;
        const struct stream_id *above = groups[i] && !history ? &groups[i]->last_id : &ids[i];
        if (history || (stream_last_entry_id(stream_of(o), &top) && stream_id_cmp(&top, above) > 0)) {
            serve[i] = o;
            served++;
        }
    }
    if (served == 0 && a.block)
        cmd_block_or_nil(ctx, false); /* waits at this shard (core/block.c), or nil inside MULTI and scripts */
    else if (served == 0)
        reply_null_array(ctx->out);
    else if (ctx->out->resp == 2)
        reply_array(ctx->out, served);
    else
        reply_map(ctx->out, served);
    for (int i = 0; i < nstreams; i++) {
        const struct resp_arg *key = &ctx->argv[a.streams_arg + i];
        struct stream_id start = ids[i];
        if (serve[i] == NULL)
            continue;
        if (ctx->out->resp == 2)
            reply_array(ctx->out, 2);
        reply_bulk(ctx->out, key->ptr, key->len);
        struct stream *s = stream_of(serve[i]);
        if (groups[i] == NULL) {
            stream_id_incr(&start);
            reply_range(ctx->out, s, &start, &ID_MAX, a.count, false);
            continue;
        }
        bool created = stream_consumer_find(groups[i], a.consumer->ptr, a.consumer->len) == NULL;
        struct stream_consumer *c = consumer_seen(ctx, groups[i], key, a.consumer);
        if (created && a.noack) /* else the XCLAIMs make it, or (as in 7.0) nothing does */
            propagate_consumer_creation(ctx, key, groups[i], a.consumer);
        if (stream_id_cmp(&start, &ID_NEW) == 0) {
            reply_group_new(ctx, key, s, groups[i], c, a.count, a.noack);
        } else {
            stream_id_incr(&start);
            reply_group_history(ctx, s, c, &start, a.count);
        }
        count_unpropagated(ctx, 1);
    }
    mem_release(serve);
done:
    mem_release(groups);
    mem_release(ids);
}

static void cmd_xread(struct cmd_ctx *ctx)
{
    xread_generic(ctx, false);
}

static void cmd_xreadgroup(struct cmd_ctx *ctx)
{
    xread_generic(ctx, true);
}

/* ---- XGROUP ----------------------------------------------------------------------------------- */

static const char *const xgroup_help[] = {
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    NULL,
};

/* XGROUP's options after the ID (MKSTREAM for CREATE, ENTRIESREAD), false replied */
static bool parse_xgroup_options_or_reply(struct cmd_ctx *ctx, bool create, bool *mkstream, long long *entries_read)
{
    for (int i = 5; i < ctx->argc;) {
        if (create && cmd_arg_is(&ctx->argv[i], "mkstream")) {
            *mkstream = true;
            i++;
        } else if (cmd_arg_is(&ctx->argv[i], "entriesread") && i + 1 < ctx->argc) {
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[i + 1], entries_read))
                return false;
            if (*entries_read < 0 && *entries_read != STREAM_ENTRIES_READ_UNKNOWN) {
                reply_error(ctx->out, "ERR value for ENTRIESREAD must be positive or -1");
                return false;
            }
            i += 2;
        } else {
            reply_subcommand_syntax_error(ctx, "XGROUP");
            return false;
        }
    }
    return true;
}

static void cmd_xgroup(struct cmd_ctx *ctx)
{
    const struct subcommand *found;
    if (!command_subcommand_or_reply("xgroup", ctx->argc, ctx->argv, ctx->out, &found))
        return;
    const struct resp_arg *sub = &ctx->argv[1], *key = &ctx->argv[2], *name = &ctx->argv[3];
    bool create = cmd_arg_is(sub, "create"), setid = cmd_arg_is(sub, "setid");
    bool createconsumer = cmd_arg_is(sub, "createconsumer"), delconsumer = cmd_arg_is(sub, "delconsumer");
    bool mkstream = false;
    long long entries_read = STREAM_ENTRIES_READ_UNKNOWN;
    struct object *o = NULL;
    struct stream *s = NULL;
    struct stream_group *g = NULL;

    if (ctx->argc >= 4) {
        if ((create || setid) && ctx->argc >= 5 && !parse_xgroup_options_or_reply(ctx, create, &mkstream, &entries_read))
            return;
        bool wrongtype;
        o = cmd_lookup_typed(ctx, key, OBJ_STREAM, true, &wrongtype);
        if (wrongtype)
            return;
        s = o ? stream_of(o) : NULL;
        if (!mkstream) {
            if (s == NULL) {
                reply_error(ctx->out, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you "
                                      "may want to use the MKSTREAM option to create an empty stream automatically.");
                return;
            }
            g = stream_group_find(s, name->ptr, name->len);
            if (g == NULL && (setid || createconsumer || delconsumer)) {
                reply_errorf(ctx->out, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", (int)name->len,
                             name->ptr, (int)key->len, key->ptr);
                return;
            }
        }
    }

    if (ctx->argc == 2 && cmd_arg_is(sub, "help")) {
        cmd_reply_help(ctx, xgroup_help);
    } else if (create && ctx->argc >= 5 && ctx->argc <= 8) {
        struct stream_id id;
        const struct resp_arg *idarg = &ctx->argv[4];
        if (idarg->len == 1 && idarg->ptr[0] == '$')
            id = s ? stream_last_id(s) : ID_MIN;
        else if (!parse_id_or_reply(ctx, idarg, &id, 0, true))
            return;
        bool created;
        if (s == NULL) { /* MKSTREAM */
            o = stream_object_create();
            created = stream_group_create(stream_of(o), name->ptr, name->len, &id, entries_read) != NULL;
            store_set(ctx->store, ctx->db, key->ptr, key->len, o, 0);
            cmd_notify(ctx, NOTIFY_NEW, "new", key);
            cmd_modified_n(ctx, key, 0);
        } else {
            created = stream_group_create(s, name->ptr, name->len, &id, entries_read) != NULL;
        }
        if (created) {
            reply_ok(ctx->out);
            cmd_changed_server(ctx);
            cmd_notify(ctx, NOTIFY_STREAM, "xgroup-create", key);
        } else {
            reply_error(ctx->out, "BUSYGROUP Consumer Group name already exists");
        }
    } else if (setid && (ctx->argc == 5 || ctx->argc == 7)) {
        struct stream_id id;
        const struct resp_arg *idarg = &ctx->argv[4];
        if (idarg->len == 1 && idarg->ptr[0] == '$')
            id = stream_last_id(s);
        else if (!parse_id_or_reply(ctx, idarg, &id, 0, false))
            return;
        g->last_id = id;
        g->entries_read = entries_read;
        reply_ok(ctx->out);
        cmd_changed_server(ctx);
        cmd_notify(ctx, NOTIFY_STREAM, "xgroup-setid", key);
    } else if (cmd_arg_is(sub, "destroy") && ctx->argc == 4) {
        if (g) {
            stream_group_destroy(s, g);
            reply_int(ctx->out, 1);
            cmd_changed_server(ctx);
            cmd_notify(ctx, NOTIFY_STREAM, "xgroup-destroy", key);
            cmd_key_ready(ctx, key); /* its XREADGROUP clients get -NOGROUP */
        } else {
            reply_int(ctx->out, 0);
        }
    } else if (createconsumer && ctx->argc == 5) {
        bool created = consumer_create(ctx, g, key, &ctx->argv[4]) != NULL;
        if (created && ctx->effects)
            ctx->effects->changes++;
        reply_int(ctx->out, created);
    } else if (delconsumer && ctx->argc == 5) {
        struct stream_consumer *c = stream_consumer_find(g, ctx->argv[4].ptr, ctx->argv[4].len);
        long long pending = 0;
        if (c) {
            pending = (long long)c->pel.n;
            stream_consumer_delete(g, c);
            cmd_changed_server(ctx);
            cmd_notify(ctx, NOTIFY_STREAM, "xgroup-delconsumer", key);
        }
        reply_int(ctx->out, pending);
    } else {
        reply_subcommand_syntax_error(ctx, "XGROUP");
    }
}

/* ---- XACK XPENDING ----------------------------------------------------------------------------- */

static void cmd_xack(struct cmd_ctx *ctx)
{
    bool wrongtype;
    struct object *o = cmd_lookup_typed(ctx, &ctx->argv[1], OBJ_STREAM, false, &wrongtype);
    if (wrongtype)
        return;
    struct stream_group *g = o ? stream_group_find(stream_of(o), ctx->argv[2].ptr, ctx->argv[2].len) : NULL;
    if (g == NULL) {
        reply_int(ctx->out, 0);
        return;
    }
    int n = ctx->argc - 3;
    struct stream_id *ids = parse_ids_or_reply(ctx, 3, n);
    if (!ids)
        return;
    long long acked = 0;
    for (int j = 0; j < n; j++) {
        struct stream_nack *nack = stream_pel_find(&g->pel, &ids[j]);
        if (nack) {
            stream_nack_remove(g, nack);
            acked++;
            cmd_changed_server(ctx);
        }
    }
    mem_release(ids);
    reply_int(ctx->out, acked);
}

static void xpending_summary(struct cmd_ctx *ctx, const struct stream_group *g)
{
    reply_array(ctx->out, 4);
    reply_int(ctx->out, (long long)g->pel.n);
    if (g->pel.n == 0) {
        reply_null(ctx->out);
        reply_null(ctx->out);
        reply_null_array(ctx->out);
        return;
    }
    reply_id(ctx->out, &g->pel.v[0]->id);
    reply_id(ctx->out, &g->pel.v[g->pel.n - 1]->id);
    long long owners = 0;
    for (size_t i = 0; i < g->nconsumers; i++)
        owners += g->consumers[i]->pel.n > 0;
    reply_array(ctx->out, owners);
    for (size_t i = 0; i < g->nconsumers; i++) {
        const struct stream_consumer *c = g->consumers[i];
        if (c->pel.n == 0)
            continue;
        reply_array(ctx->out, 2);
        reply_bulk(ctx->out, c->name.p, c->name.len);
        reply_bulk_ll(ctx->out, (long long)c->pel.n);
    }
}

static void cmd_xpending(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    struct stream_id start = ID_MIN, end = ID_MAX;
    long long count = -1, minidle = 0;
    const struct resp_arg *consumer = NULL;
    bool startex, endex;

    if (ctx->argc != 3 && (ctx->argc < 6 || ctx->argc > 9)) {
        reply_syntax_error(ctx->out);
        return;
    }
    if (ctx->argc >= 6) {
        int at = 3;
        if (cmd_arg_is(&ctx->argv[3], "idle")) {
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[4], &minidle))
                return;
            if (ctx->argc < 8) {
                reply_syntax_error(ctx->out);
                return;
            }
            at += 2;
        }
        if (!cmd_get_ll_or_reply(ctx, &ctx->argv[at + 2], &count))
            return;
        if (count < 0)
            count = 0;
        if (!parse_interval_or_reply(ctx, &ctx->argv[at], &start, &startex, 0))
            return;
        if (startex && !stream_id_incr(&start)) {
            reply_error(ctx->out, "ERR invalid start ID for the interval");
            return;
        }
        if (!parse_interval_or_reply(ctx, &ctx->argv[at + 1], &end, &endex, UINT64_MAX))
            return;
        if (endex && !stream_id_decr(&end)) {
            reply_error(ctx->out, "ERR invalid end ID for the interval");
            return;
        }
        if (at + 3 < ctx->argc)
            consumer = &ctx->argv[at + 3];
    }
    bool wrongtype;
    struct object *o = cmd_lookup_typed(ctx, key, OBJ_STREAM, false, &wrongtype);
    if (wrongtype)
        return;
    struct stream_group *g = group_or_nogroup(ctx, o ? stream_of(o) : NULL, key, &ctx->argv[2]);
    if (g == NULL)
        return;
    if (ctx->argc == 3) {
        xpending_summary(ctx, g);
        return;
    }
    const struct stream_pel *pel = &g->pel;
    if (consumer) {
        const struct stream_consumer *c = stream_consumer_find(g, consumer->ptr, consumer->len);
        if (c == NULL) {
            reply_array(ctx->out, 0);
            return;
        }
        pel = &c->pel;
    }
    /* two passes: the count, then the entries */
    for (int pass = 0; pass < 2; pass++) {
        long long n = 0;
        for (size_t i = stream_pel_lower_bound(pel, &start);
             n < count && i < pel->n && stream_id_cmp(&pel->v[i]->id, &end) <= 0; i++) {
            const struct stream_nack *nack = pel->v[i];
            long long idle = ctx->now - nack->delivery_time;
            if (minidle && idle < minidle)
                continue;
            n++;
            if (pass == 0)
                continue;
            reply_array(ctx->out, 4);
            reply_id(ctx->out, &nack->id);
            reply_bulk(ctx->out, nack->consumer->name.p, nack->consumer->name.len);
            reply_int(ctx->out, idle < 0 ? 0 : idle);
            reply_int(ctx->out, (long long)nack->delivery_count);
        }
        if (pass == 0)
            reply_array(ctx->out, n);
    }
}

/* ---- XCLAIM XAUTOCLAIM ------------------------------------------------------------------------- */

/* the NACK of an entry no longer in the stream goes (propagated as the XCLAIM that removes it) */
static void nack_drop_deleted(struct cmd_ctx *ctx, const struct resp_arg *key, struct stream_group *g,
                              struct stream_nack *nack)
{
    propagate_xclaim(ctx, key, g, nack);
    count_unpropagated(ctx, 1);
    stream_nack_remove(g, nack);
}

/* the claimed NACK in a reply: its ID (justid) or its entry (null when gone) */
static void reply_claimed(struct reply *out, const struct stream *s, const struct stream_id *id, bool justid)
{
    if (justid)
        reply_id(out, id);
    else if (!reply_entry_by_id(out, s, id))
        reply_null(out);
}

static void cmd_xclaim(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    long long minidle, delivery_time = -1, retrycount = -1;
    bool force = false, justid = false;
    struct stream_id last_id = ID_MIN;

    bool wrongtype;
    struct object *o = cmd_lookup_typed(ctx, key, OBJ_STREAM, false, &wrongtype);
    if (wrongtype)
        return;
    struct stream *s = o ? stream_of(o) : NULL;
    struct stream_group *g = group_or_nogroup(ctx, s, key, &ctx->argv[2]);
    if (g == NULL)
        return;
    if (!cmd_get_range_ll_or_reply(ctx, &ctx->argv[4], LLONG_MIN, LLONG_MAX, &minidle,
                                   "ERR Invalid min-idle-time argument for XCLAIM"))
        return;
    if (minidle < 0)
        minidle = 0;
    int j = 5;
    struct stream_id id;
    while (j < ctx->argc && parse_id(&ctx->argv[j], &id, 0, true, NULL))
        j++;
    int ids_end = j;
    for (; j < ctx->argc; j++) {
        bool more = j + 1 < ctx->argc;
        const struct resp_arg *opt = &ctx->argv[j];
        if (cmd_arg_is(opt, "force")) {
            force = true;
        } else if (cmd_arg_is(opt, "justid")) {
            justid = true;
        } else if (cmd_arg_is(opt, "idle") && more) {
            if (!cmd_get_range_ll_or_reply(ctx, &ctx->argv[++j], LLONG_MIN, LLONG_MAX, &delivery_time,
                                           "ERR Invalid IDLE option argument for XCLAIM"))
                return;
            delivery_time = ctx->now - delivery_time;
        } else if (cmd_arg_is(opt, "time") && more) {
            if (!cmd_get_range_ll_or_reply(ctx, &ctx->argv[++j], LLONG_MIN, LLONG_MAX, &delivery_time,
                                           "ERR Invalid TIME option argument for XCLAIM"))
                return;
        } else if (cmd_arg_is(opt, "retrycount") && more) {
            if (!cmd_get_range_ll_or_reply(ctx, &ctx->argv[++j], LLONG_MIN, LLONG_MAX, &retrycount,
                                           "ERR Invalid RETRYCOUNT option argument for XCLAIM"))
                return;
        } else if (cmd_arg_is(opt, "lastid") && more) {
            if (!parse_id_or_reply(ctx, &ctx->argv[++j], &last_id, 0, true))
                return;
        } else {
            reply_errorf(ctx->out, "ERR Unrecognized XCLAIM option '%.*s'", (int)opt->len, opt->ptr);
            return;
        }
    }
    bool propagate_last_id = false;
    if (stream_id_cmp(&last_id, &g->last_id) > 0) {
        g->last_id = last_id;
        propagate_last_id = true;
    }
    if (delivery_time < 0 || delivery_time > ctx->now)
        delivery_time = ctx->now;

    struct stream_nack **claimed = mem_alloc((size_t)(ids_end - 5 + 1) * sizeof *claimed);
    size_t nclaimed = 0;
    struct stream_consumer *c = NULL;
    for (j = 5; j < ids_end; j++) {
        parse_id(&ctx->argv[j], &id, 0, true, NULL);
        struct stream_nack *nack = stream_pel_find(&g->pel, &id);
        if (!stream_entry_exists(s, &id)) {
            if (nack) {
                nack_drop_deleted(ctx, key, g, nack);
                propagate_last_id = false;
            }
            continue;
        }
        bool forced = false;
        if (nack == NULL) {
            if (!force)
                continue;
            forced = true;
        } else if (minidle && ctx->now - nack->delivery_time < minidle) {
            continue;
        }
        if (c == NULL)
            c = consumer_seen(ctx, g, key, &ctx->argv[3]);
        if (forced)
            nack = stream_nack_add(g, c, &id, ctx->now, 1);
        else
            stream_nack_move(nack, c);
        nack->delivery_time = delivery_time;
        if (retrycount >= 0)
            nack->delivery_count = (uint64_t)retrycount;
        else if (!justid)
            nack->delivery_count++;
        claimed[nclaimed++] = nack;
        propagate_xclaim(ctx, key, g, nack);
        propagate_last_id = false;
        count_unpropagated(ctx, 1);
    }
    if (propagate_last_id) {
        propagate_group_id(ctx, key, g);
        count_unpropagated(ctx, 1);
    }
    reply_array(ctx->out, (long long)nclaimed);
    for (size_t i = 0; i < nclaimed; i++)
        reply_claimed(ctx->out, s, &claimed[i]->id, justid);
    mem_release(claimed);
}

#define XAUTOCLAIM_ATTEMPTS_FACTOR 10 /* Redis's attempts_factor: PEL entries looked at per COUNT */

static void cmd_xautoclaim(struct cmd_ctx *ctx)
{
    const struct resp_arg *key = &ctx->argv[1];
    long long minidle, count = 100;
    bool justid = false, startex;
    struct stream_id start;

    if (!cmd_get_range_ll_or_reply(ctx, &ctx->argv[4], LLONG_MIN, LLONG_MAX, &minidle,
                                   "ERR Invalid min-idle-time argument for XAUTOCLAIM"))
        return;
    if (minidle < 0)
        minidle = 0;
    if (!parse_interval_or_reply(ctx, &ctx->argv[5], &start, &startex, 0))
        return;
    if (startex && !stream_id_incr(&start)) {
        reply_error(ctx->out, "ERR invalid start ID for the interval");
        return;
    }
    for (int j = 6; j < ctx->argc; j++) {
        if (cmd_arg_is(&ctx->argv[j], "count") && j + 1 < ctx->argc) {
            if (!cmd_get_range_ll_or_reply(ctx, &ctx->argv[++j], 1, LONG_MAX / 16, &count, "ERR COUNT must be > 0"))
                return;
        } else if (cmd_arg_is(&ctx->argv[j], "justid")) {
            justid = true;
        } else {
            reply_syntax_error(ctx->out);
            return;
        }
    }
    /* as 7.0.15: the arguments before the key's type; the consumer made only when it claims something */
    bool wrongtype;
    struct object *o = cmd_lookup_typed(ctx, key, OBJ_STREAM, false, &wrongtype);
    if (wrongtype)
        return;
    struct stream *s = o ? stream_of(o) : NULL;
    struct stream_group *g = group_or_nogroup(ctx, s, key, &ctx->argv[2]);
    if (g == NULL)
        return;
    struct stream_consumer *c = NULL;
    long long attempts = count * XAUTOCLAIM_ATTEMPTS_FACTOR;
    struct stream_id *claimed = mem_alloc((size_t)(count < 1024 ? count : 1024) * sizeof *claimed);
    size_t nclaimed = 0, claimed_cap = (size_t)(count < 1024 ? count : 1024);
    struct stream_id *deleted = NULL;
    size_t ndeleted = 0, deleted_cap = 0;
    size_t i = stream_pel_lower_bound(&g->pel, &start);
    while (attempts-- && count && i < g->pel.n) {
        struct stream_nack *nack = g->pel.v[i];
        if (!stream_entry_exists(s, &nack->id)) {
            if (ndeleted == deleted_cap) {
                deleted_cap = deleted_cap ? 2 * deleted_cap : 16;
                deleted = mem_realloc(deleted, deleted_cap * sizeof *deleted);
            }
            deleted[ndeleted++] = nack->id;
            nack_drop_deleted(ctx, key, g, nack);
            continue; /* the next NACK is now at i */
        }
        i++;
        if (minidle && ctx->now - nack->delivery_time < minidle)
            continue;
        if (c == NULL)
            c = consumer_seen(ctx, g, key, &ctx->argv[3]);
        stream_nack_move(nack, c);
        nack->delivery_time = ctx->now;
        if (!justid)
            nack->delivery_count++;
        if (nclaimed == claimed_cap) {
            claimed_cap *= 2;
            claimed = mem_realloc(claimed, claimed_cap * sizeof *claimed);
        }
        claimed[nclaimed++] = nack->id;
        count--;
        propagate_xclaim(ctx, key, g, nack);
        count_unpropagated(ctx, 1);
    }
    reply_array(ctx->out, 3);
    if (i < g->pel.n)
        reply_id(ctx->out, &g->pel.v[i]->id);
    else
        reply_id(ctx->out, &ID_MIN);
    reply_array(ctx->out, (long long)nclaimed);
    for (size_t k = 0; k < nclaimed; k++)
        reply_claimed(ctx->out, s, &claimed[k], justid);
    reply_array(ctx->out, (long long)ndeleted);
    for (size_t k = 0; k < ndeleted; k++)
        reply_id(ctx->out, &deleted[k]);
    mem_release(claimed);
    mem_release(deleted);
}

/* ---- XINFO ---------------------------------------------------------------------------- */

static const char *const xinfo_help[] = {
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    NULL,
};

/* Redis's streamReplyWithCGLag: the entries the group has not read, null when unknown */
static void reply_group_lag(struct reply *out, const struct stream *s, const struct stream_group *g)
{
    long long added = (long long)stream_entries_added(s), read = g->entries_read;
    if (added == 0) {
        reply_int(out, 0);
        return;
    }
    if (read == STREAM_ENTRIES_READ_UNKNOWN || stream_range_has_tombstones(s, &g->last_id))
        read = stream_estimate_entries_read(s, &g->last_id);
    if (read == STREAM_ENTRIES_READ_UNKNOWN)
        reply_null(out);
    else
        reply_int(out, added - read);
}

static void reply_entries_read(struct reply *out, const struct stream_group *g)
{
    if (g->entries_read != STREAM_ENTRIES_READ_UNKNOWN)
        reply_int(out, g->entries_read);
    else
        reply_null(out);
}

/* the first count (0: all) NACKs of pel: [id, consumer, delivery time, count], without the consumer (!owner) */
static void reply_full_pel(struct reply *out, const struct stream_pel *pel, long long count, bool owner)
{
    size_t n = count > 0 && (size_t)count < pel->n ? (size_t)count : pel->n;
    reply_array(out, (long long)n);
    for (size_t i = 0; i < n; i++) {
        const struct stream_nack *nack = pel->v[i];
        reply_array(out, owner ? 4 : 3);
        reply_id(out, &nack->id);
        if (owner)
            reply_bulk(out, nack->consumer->name.p, nack->consumer->name.len);
        reply_int(out, nack->delivery_time);
        reply_int(out, (long long)nack->delivery_count);
    }
}

/* a group in XINFO STREAM FULL */
static void xinfo_full_group(struct cmd_ctx *ctx, const struct stream *s, const struct stream_group *g,
                             long long count)
{
    reply_map(ctx->out, 7);
    reply_bulk_cstr(ctx->out, "name");
    reply_bulk(ctx->out, g->name.p, g->name.len);
    reply_bulk_cstr(ctx->out, "last-delivered-id");
    reply_id(ctx->out, &g->last_id);
    reply_bulk_cstr(ctx->out, "entries-read");
    reply_entries_read(ctx->out, g);
    reply_bulk_cstr(ctx->out, "lag");
    reply_group_lag(ctx->out, s, g);
    reply_bulk_cstr(ctx->out, "pel-count");
    reply_int(ctx->out, (long long)g->pel.n);
    reply_bulk_cstr(ctx->out, "pending");
    reply_full_pel(ctx->out, &g->pel, count, true);
    reply_bulk_cstr(ctx->out, "consumers");
    reply_array(ctx->out, (long long)g->nconsumers);
    for (size_t i = 0; i < g->nconsumers; i++) {
        const struct stream_consumer *c = g->consumers[i];
        reply_map(ctx->out, 4);
        reply_bulk_cstr(ctx->out, "name");
        reply_bulk(ctx->out, c->name.p, c->name.len);
        reply_bulk_cstr(ctx->out, "seen-time");
        reply_int(ctx->out, c->seen_time);
        reply_bulk_cstr(ctx->out, "pel-count");
        reply_int(ctx->out, (long long)c->pel.n);
        reply_bulk_cstr(ctx->out, "pending");
        reply_full_pel(ctx->out, &c->pel, count, false);
    }
}

static void xinfo_groups(struct cmd_ctx *ctx, const struct stream *s)
{
    reply_array(ctx->out, (long long)stream_group_count(s));
    for (size_t i = 0; i < stream_group_count(s); i++) {
        const struct stream_group *g = stream_group_at(s, i);
        reply_map(ctx->out, 6);
        reply_bulk_cstr(ctx->out, "name");
        reply_bulk(ctx->out, g->name.p, g->name.len);
        reply_bulk_cstr(ctx->out, "consumers");
        reply_int(ctx->out, (long long)g->nconsumers);
        reply_bulk_cstr(ctx->out, "pending");
        reply_int(ctx->out, (long long)g->pel.n);
        reply_bulk_cstr(ctx->out, "last-delivered-id");
        reply_id(ctx->out, &g->last_id);
        reply_bulk_cstr(ctx->out, "entries-read");
        reply_entries_read(ctx->out, g);
        reply_bulk_cstr(ctx->out, "lag");
        reply_group_lag(ctx->out, s, g);
    }
}

static void xinfo_consumers(struct cmd_ctx *ctx, const struct stream *s)
{
    const struct resp_arg *key = &ctx->argv[2], *name = &ctx->argv[3];
    const struct stream_group *g = stream_group_find(s, name->ptr, name->len);
    if (g == NULL) {
        reply_errorf(ctx->out, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", (int)name->len,
                     name->ptr, (int)key->len, key->ptr);
        return;
    }
    reply_array(ctx->out, (long long)g->nconsumers);
    for (size_t i = 0; i < g->nconsumers; i++) {
        const struct stream_consumer *c = g->consumers[i];
        long long idle = ctx->now - c->seen_time;
        reply_map(ctx->out, 3);
        reply_bulk_cstr(ctx->out, "name");
        reply_bulk(ctx->out, c->name.p, c->name.len);
        reply_bulk_cstr(ctx->out, "pending");
        reply_int(ctx->out, (long long)c->pel.n);
        reply_bulk_cstr(ctx->out, "idle");
        reply_int(ctx->out, idle < 0 ? 0 : idle);
    }
}

/* Redis's xinfoReplyWithStreamInfo */
static void xinfo_stream(struct cmd_ctx *ctx, const struct stream *s)
{
    bool full = false;
    long long count = 10;
    if (ctx->argc > 3) {
        if (!cmd_arg_is(&ctx->argv[3], "full") || (ctx->argc != 4 && ctx->argc != 6) ||
            (ctx->argc == 6 && !cmd_arg_is(&ctx->argv[4], "count"))) {
            reply_subcommand_syntax_error(ctx, "XINFO");
            return;
        }
        full = true;
        if (ctx->argc == 6) {
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[5], &count))
                return;
            if (count < 0)
                count = 10;
        }
    }
    struct stream_id last = stream_last_id(s), max_deleted = stream_max_deleted_id(s), first;
    stream_first_entry_id(s, &first);
    reply_map(ctx->out, full ? 9 : 10);
    reply_bulk_cstr(ctx->out, "length");
    reply_int(ctx->out, (long long)stream_length(s));
    reply_bulk_cstr(ctx->out, "radix-tree-keys");
    reply_int(ctx->out, (long long)stream_nodes(s));
    reply_bulk_cstr(ctx->out, "radix-tree-nodes");
    reply_int(ctx->out, (long long)stream_nodes(s) + 1);
    reply_bulk_cstr(ctx->out, "last-generated-id");
    reply_id(ctx->out, &last);
    reply_bulk_cstr(ctx->out, "max-deleted-entry-id");
    reply_id(ctx->out, &max_deleted);
    reply_bulk_cstr(ctx->out, "entries-added");
    reply_int(ctx->out, (long long)stream_entries_added(s));
    reply_bulk_cstr(ctx->out, "recorded-first-entry-id");
    reply_id(ctx->out, &first);
    if (full) {
        reply_bulk_cstr(ctx->out, "entries");
        reply_range(ctx->out, s, &ID_MIN, &ID_MAX, count, false);
        reply_bulk_cstr(ctx->out, "groups");
        reply_array(ctx->out, (long long)stream_group_count(s));
        for (size_t i = 0; i < stream_group_count(s); i++)
            xinfo_full_group(ctx, s, stream_group_at(s, i), count);
        return;
    }
    reply_bulk_cstr(ctx->out, "groups");
    reply_int(ctx->out, (long long)stream_group_count(s));
    for (int rev = 0; rev < 2; rev++) {
        struct stream_iter it;
        struct stream_id id;
        size_t nfields;
        reply_bulk_cstr(ctx->out, rev ? "last-entry" : "first-entry");
        stream_iter_init(&it, s, &ID_MIN, &ID_MAX, rev);
        if (stream_iter_next(&it, &id, &nfields))
            reply_entry(ctx->out, &it, &id, nfields);
        else
            reply_null(ctx->out);
    }
}

static void cmd_xinfo(struct cmd_ctx *ctx)
{
    const struct subcommand *found;
    if (!command_subcommand_or_reply("xinfo", ctx->argc, ctx->argv, ctx->out, &found))
        return;
    if (strcmp(found->sub, "help") == 0) {
        cmd_reply_help(ctx, xinfo_help);
        return;
    }
    struct stream *s = stream_read_or_reply(ctx, &ctx->argv[2], false, reply_no_such_key);
    if (s == NULL)
        return;
    if (strcmp(found->sub, "stream") == 0)
        xinfo_stream(ctx, s);
    else if (strcmp(found->sub, "groups") == 0)
        xinfo_groups(ctx, s);
    else
        xinfo_consumers(ctx, s);
}

const struct command command_family_stream[] = {
    {"xadd", cmd_xadd, -5, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @stream @fast"},
    {"xrange", cmd_xrange, -4, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @stream @slow"},
    {"xrevrange", cmd_xrevrange, -4, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @stream @slow"},
    {"xlen", cmd_xlen, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@read @stream @fast"},
    {"xdel", cmd_xdel, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @stream @fast"},
    {"xtrim", cmd_xtrim, -4, CMD_WRITE, 1, 1, 1, ROUTE_OWNER, "@write @stream @slow"},
    {"xsetid", cmd_xsetid, -3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, ROUTE_OWNER,
     "@write @stream @fast"},
    {"xread", cmd_xread, -4, CMD_READONLY | CMD_BLOCKING | CMD_KEYS_STREAMS, 1, -1, 1, ROUTE_GATHER,
     "@read @stream @slow @blocking"},
    {"xreadgroup", cmd_xreadgroup, -7, CMD_WRITE | CMD_BLOCKING | CMD_KEYS_STREAMS, 1, -1, 1, ROUTE_GATHER,
     "@write @stream @slow @blocking"},
    {"xgroup", cmd_xgroup, -2, CMD_WRITE | CMD_SUBCOMMANDS, 2, 2, 1, ROUTE_OWNER, "@slow"}, /* containers: "@slow" alone */
    {"xack", cmd_xack, -4, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @stream @fast"},
    {"xpending", cmd_xpending, -3, CMD_READONLY, 1, 1, 1, ROUTE_OWNER, "@read @stream @slow"},
    {"xclaim", cmd_xclaim, -6, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @stream @fast"},
    {"xautoclaim", cmd_xautoclaim, -6, CMD_WRITE | CMD_FAST, 1, 1, 1, ROUTE_OWNER, "@write @stream @fast"},
    {"xinfo", cmd_xinfo, -2, CMD_READONLY | CMD_SUBCOMMANDS, 2, 2, 1, ROUTE_OWNER, "@slow"},
};

const size_t command_family_stream_count = sizeof command_family_stream / sizeof command_family_stream[0];

/* XGROUP's and XINFO's subcommands, as Redis 7.0's table has them (their handlers parse the subcommand) */
const struct subcommand command_subs_stream[] = {
    COMMAND_SUB("xgroup", "create", cmd_xgroup, -5, CMD_WRITE | CMD_DENYOOM, 2, 2, 1, ROUTE_OWNER,
                "@write @stream @slow"),
    COMMAND_SUB("xgroup", "createconsumer", cmd_xgroup, 5, CMD_WRITE | CMD_DENYOOM, 2, 2, 1, ROUTE_OWNER,
                "@write @stream @slow"),
    COMMAND_SUB("xgroup", "delconsumer", cmd_xgroup, 5, CMD_WRITE, 2, 2, 1, ROUTE_OWNER,
                "@write @stream @slow"),
    COMMAND_SUB("xgroup", "destroy", cmd_xgroup, 4, CMD_WRITE, 2, 2, 1, ROUTE_OWNER,
                "@write @stream @slow"),
    COMMAND_SUB("xgroup", "help", cmd_xgroup, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, ROUTE_OWNER,
                "@stream @slow"),
    COMMAND_SUB("xgroup", "setid", cmd_xgroup, -5, CMD_WRITE, 2, 2, 1, ROUTE_OWNER,
                "@write @stream @slow"),
    COMMAND_SUB("xinfo", "consumers", cmd_xinfo, 4, CMD_READONLY, 2, 2, 1, ROUTE_OWNER,
                "@read @stream @slow"),
    COMMAND_SUB("xinfo", "groups", cmd_xinfo, 3, CMD_READONLY, 2, 2, 1, ROUTE_OWNER,
                "@read @stream @slow"),
    COMMAND_SUB("xinfo", "help", cmd_xinfo, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, ROUTE_OWNER,
                "@stream @slow"),
    COMMAND_SUB("xinfo", "stream", cmd_xinfo, -3, CMD_READONLY, 2, 2, 1, ROUTE_OWNER,
                "@read @stream @slow"),
};
const size_t command_subs_stream_count = sizeof command_subs_stream / sizeof command_subs_stream[0];
