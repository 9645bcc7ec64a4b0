/*
 * stream: the stream command family (Redis 7.0's t_stream.c): XADD XRANGE
 * XREVRANGE XLEN XDEL XTRIM XSETID XREAD (BLOCK only when there is data)
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
 * XREAD names its keys after STREAMS (CMD_KEYS_STREAMS): keys on several
 * shards are gathered onto one (ROUTE_GATHER) and read there.  BLOCK is
 * parsed as Redis's and served at once when there is something to read;
 * waiting for entries is not done yet, and says so (an error, where Redis
 * would wait, or answer nil inside MULTI).
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
    if (a->limit_given) {
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
    struct stream_id *ids = mem_alloc((size_t)n * sizeof *ids);
    for (int j = 0; j < n; j++) {
        if (!parse_id_or_reply(ctx, &ctx->argv[2 + j], &ids[j], 0, true)) {
            mem_release(ids);
            return;
        }
    }
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

/* ---- XREAD --------------------------------------------------------------------------- */

static void cmd_xread(struct cmd_ctx *ctx)
{
    long long count = 0, timeout;
    int streams_arg = 0, nstreams = 0;
    bool block = false;

    for (int i = 1; i < ctx->argc; i++) {
        bool more = i + 1 < ctx->argc;
        const struct resp_arg *opt = &ctx->argv[i];
        if (cmd_arg_is(opt, "block") && more) {
            /* Redis's getTimeoutFromObjectOrReply in milliseconds */
            if (!cmd_get_range_ll_or_reply(ctx, &ctx->argv[++i], LLONG_MIN, LLONG_MAX, &timeout,
                                           "ERR timeout is not an integer or out of range"))
                return;
            if (timeout < 0) {
                reply_error(ctx->out, "ERR timeout is negative");
                return;
            }
            block = true;
        } else if (cmd_arg_is(opt, "count") && more) {
            if (!cmd_get_ll_or_reply(ctx, &ctx->argv[++i], &count))
                return;
            if (count < 0)
                count = 0;
        } else if (cmd_arg_is(opt, "streams") && more) {
            streams_arg = i + 1;
            nstreams = ctx->argc - streams_arg;
            if (nstreams % 2 != 0) {
                reply_error(ctx->out, "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' "
                                      "must be specified.");
                return;
            }
            nstreams /= 2;
            break;
        } else {
            reply_syntax_error(ctx->out);
            return;
        }
    }
    if (streams_arg == 0) {
        reply_syntax_error(ctx->out);
        return;
    }
    struct stream_id *ids = mem_alloc((size_t)nstreams * sizeof *ids);
    for (int i = 0; i < nstreams; i++) {
        const struct resp_arg *key = &ctx->argv[streams_arg + i], *arg = &ctx->argv[streams_arg + nstreams + i];
        struct object *o = cmd_lookup_read(ctx, key);
        if (o && object_type(o) != OBJ_STREAM) {
            reply_wrongtype(ctx->out);
            goto done;
        }
        if (arg->len == 1 && arg->ptr[0] == '$') {
            ids[i] = o ? stream_last_id(stream_of(o)) : ID_MIN;
        } else if (arg->len == 1 && arg->ptr[0] == '>') {
            reply_error(ctx->out, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
                                  "<group> <consumer> option.");
            goto done;
        } else if (!parse_id_or_reply(ctx, arg, &ids[i], 0, true)) {
            goto done;
        }
    }

    /* the streams with an entry above their ID are answered */
    struct object **serve = mem_calloc((size_t)nstreams, sizeof *serve);
    long long served = 0;
    for (int i = 0; i < nstreams; i++) {
        struct object *o = cmd_lookup_read(ctx, &ctx->argv[streams_arg + i]);
        struct stream_id top;
        if (o && stream_last_entry_id(stream_of(o), &top) && stream_id_cmp(&top, &ids[i]) > 0) {
            serve[i] = o;
            served++;
        }
    }
    if (served == 0 && block)
        reply_error(ctx->out, "ERR XREAD BLOCK found nothing to read now: waiting for entries is not supported yet");
    else if (served == 0)
        reply_null_array(ctx->out);
    else if (ctx->out->resp == 2)
        reply_array(ctx->out, served);
    else
        reply_map(ctx->out, served);
    for (int i = 0; i < nstreams; i++) {
        const struct resp_arg *key = &ctx->argv[streams_arg + i];
        struct stream_id start = ids[i];
        if (serve[i] == NULL)
            continue;
        stream_id_incr(&start);
        if (ctx->out->resp == 2)
            reply_array(ctx->out, 2);
        reply_bulk(ctx->out, key->ptr, key->len);
        reply_range(ctx->out, stream_of(serve[i]), &start, &ID_MAX, count, false);
    }
    mem_release(serve);
done:
    mem_release(ids);
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

/* Redis's xinfoReplyWithStreamInfo */
static void xinfo_stream(struct cmd_ctx *ctx, const struct stream *s)
{
    bool full = false;
    long long count = 10;
    if (ctx->argc > 3) {
        if (!cmd_arg_is(&ctx->argv[3], "full") || (ctx->argc != 4 && ctx->argc != 6) ||
            (ctx->argc == 6 && !cmd_arg_is(&ctx->argv[4], "count"))) {
            reply_errorf(ctx->out, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try XINFO HELP.",
                         (int)(ctx->argv[1].len < 128 ? ctx->argv[1].len : 128), ctx->argv[1].ptr);
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
        reply_array(ctx->out, 0);
        return;
    }
    reply_bulk_cstr(ctx->out, "groups");
    reply_int(ctx->out, 0);
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
    const struct resp_arg *sub = &ctx->argv[1];
    static const struct {
        const char *name;
        int arity;
    } subs[] = {{"consumers", 4}, {"groups", 3}, {"help", 2}, {"stream", -3}};
    int found = -1;
    for (int i = 0; i < (int)(sizeof subs / sizeof subs[0]); i++)
        if (util_eq_nocase(sub->ptr, sub->len, subs[i].name))
            found = i;
    if (found < 0) {
        cmd_reply_unknown_subcommand(ctx->out, ctx->argv);
        return;
    }
    int arity = subs[found].arity;
    if ((arity > 0 && ctx->argc != arity) || (arity < 0 && ctx->argc < -arity)) {
        reply_errorf(ctx->out, "ERR wrong number of arguments for 'xinfo|%s' command", subs[found].name);
        return;
    }
    if (strcmp(subs[found].name, "help") == 0) {
        cmd_reply_help(ctx, xinfo_help);
        return;
    }
    struct stream *s = stream_read_or_reply(ctx, &ctx->argv[2], false, reply_no_such_key);
    if (s == NULL)
        return;
    if (strcmp(subs[found].name, "stream") == 0)
        xinfo_stream(ctx, s);
    else if (strcmp(subs[found].name, "groups") == 0)
        reply_array(ctx->out, 0);
    else
        reply_errorf(ctx->out, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", (int)ctx->argv[3].len,
                     ctx->argv[3].ptr, (int)ctx->argv[2].len, ctx->argv[2].ptr);
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
    {"xread", cmd_xread, -4, CMD_READONLY | CMD_KEYS_STREAMS, 1, -1, 1, ROUTE_GATHER, "@read @stream @slow"},
    {"xinfo", cmd_xinfo, -2, CMD_READONLY, 2, 2, 1, ROUTE_OWNER, "@read @stream @slow"},
};

const size_t command_family_stream_count = sizeof command_family_stream / sizeof command_family_stream[0];
