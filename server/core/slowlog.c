/*
 * slowlog: per-shard logs of slow commands (see include/percore/slowlog.h).
 *
 * Each shard thread keeps its log in thread-local storage: a doubly linked
 * list, newest first.  An entry stores its argv, addr and name already
 * encoded as RESP (arrays and bulk strings read the same in RESP2 and RESP3),
 * so answering SLOWLOG GET is a copy.  The shard's part of SLOWLOG GET
 * (slowlog_reply_local) sends, per entry, one leading field more than Redis:
 * the unix time in microseconds, by which slowlog_merge_get orders the
 * entries of all shards before it drops it.
 *
 * Threading: everything but slowlog_merge_get runs on a shard thread, on
 * that thread's log only; the merge runs on the home shard over reply bytes.
 */
#include "percore/slowlog.h"

#include "percore/conn.h"
#include "percore/mem.h"
#include "percore/reply.h"
#include "percore/rread.h"
#include "percore/shard.h"
#include "percore/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOWLOG_ENTRY_MAX_ARGC 32
#define SLOWLOG_ENTRY_MAX_STRING 128

struct slowlog_entry {
    struct slowlog_entry *newer;
    struct slowlog_entry *older;
    long long time_us;      /* unix time of the record, microseconds */
    uint64_t id;
    long long duration;     /* microseconds */
    size_t len;             /* bytes in tail */
    char tail[];            /* RESP: *argc $arg..., $addr, $name */
};

struct slowlog_state {
    struct slowlog_entry *newest;
    struct slowlog_entry *oldest;
    long long len;
    uint64_t seq;           /* entries ever recorded by this shard */
};

static __thread struct slowlog_state slowlog;

/* set once by setup, before the shards run; only read afterwards */
static slowlog_redact_fn *slowlog_redactor;

void slowlog_set_redactor(slowlog_redact_fn *fn)
{
    slowlog_redactor = fn;
}

void slowlog_redactions(const struct command *cmd, int argc, const struct resp_arg *argv, bool *redact)
{
    if ((cmd->flags & CMD_REDACTS) && slowlog_redactor)
        slowlog_redactor(cmd, argc, argv, redact);
}

static void slowlog_trim(long long max)
{
    while (slowlog.len > max && slowlog.oldest) {
        struct slowlog_entry *e = slowlog.oldest;
        slowlog.oldest = e->newer;
        if (slowlog.oldest)
            slowlog.oldest->older = NULL;
        else
            slowlog.newest = NULL;
        mem_release(e);
        slowlog.len--;
    }
}

void slowlog_record(const struct cmd_ctx *ctx, const struct command *cmd, long long duration_us,
                    const struct conn *c)
{
    if (cmd->flags & (CMD_INTERNAL | CMD_SKIP_SLOWLOG))
        return;
    int argc = ctx->argc;
    int slargc = argc > SLOWLOG_ENTRY_MAX_ARGC ? SLOWLOG_ENTRY_MAX_ARGC : argc;
    bool redact[SLOWLOG_ENTRY_MAX_ARGC + 1] = {false};
    slowlog_redactions(cmd, slargc, ctx->argv, redact);
    struct reply tail;
    reply_init(&tail);
    reply_array(&tail, slargc);
    for (int j = 0; j < slargc; j++) {
        const struct resp_arg *a = &ctx->argv[j];
        char more[64];
        if (slargc != argc && j == slargc - 1) {
            int n = snprintf(more, sizeof(more), "... (%d more arguments)", argc - slargc + 1);
            reply_bulk(&tail, more, (size_t)n);
        } else if (redact[j]) {
            reply_bulk_cstr(&tail, "(redacted)");
        } else if (a->len > SLOWLOG_ENTRY_MAX_STRING) {
            int n = snprintf(more, sizeof(more), "... (%lu more bytes)",
                             (unsigned long)(a->len - SLOWLOG_ENTRY_MAX_STRING));
            char head[24];
            int h = snprintf(head, sizeof(head), "$%zu\r\n", (size_t)SLOWLOG_ENTRY_MAX_STRING + (size_t)n);
            reply_raw(&tail, head, (size_t)h);
            reply_raw(&tail, a->ptr, SLOWLOG_ENTRY_MAX_STRING);
            reply_raw(&tail, more, (size_t)n);
            reply_raw(&tail, "\r\n", 2);
        } else {
            reply_bulk(&tail, a->ptr, a->len);
        }
    }
    const char *name = c ? conn_name(c) : NULL;
    reply_bulk_cstr(&tail, c ? conn_peer(c) : "");
    reply_bulk_cstr(&tail, name ? name : "");

    struct slowlog_entry *e = mem_alloc(sizeof(*e) + tail.len);
    e->time_us = util_us_time();
    e->id = slowlog.seq++ * (uint64_t)shard_count() + (uint64_t)ctx->shard;
    e->duration = duration_us;
    e->len = tail.len;
    memcpy(e->tail, tail.buf, tail.len);
    reply_deinit(&tail);
    e->older = slowlog.newest;
    e->newer = NULL;
    if (slowlog.newest)
        slowlog.newest->newer = e;
    else
        slowlog.oldest = e;
    slowlog.newest = e;
    slowlog.len++;
    slowlog_trim(ctx->config->slowlog_max_len);
}

void slowlog_reply_local(struct reply *out, long long count)
{
    if (count < 0 || count > slowlog.len)
        count = slowlog.len;
    reply_array(out, count);
    struct slowlog_entry *e = slowlog.newest;
    for (long long i = 0; i < count; i++, e = e->older) {
        reply_array(out, 7);
        reply_int(out, e->time_us);
        reply_int(out, (long long)e->id);
        reply_int(out, e->time_us / 1000000);
        reply_int(out, e->duration);
        reply_raw(out, e->tail, e->len);
    }
}

long long slowlog_len_local(void)
{
    return slowlog.len;
}

void slowlog_reset_local(void)
{
    slowlog_trim(0);
}

void slowlog_thread_teardown(void)
{
    slowlog_trim(0);
}

/* ---------------------------------------------------------------- merge */

struct slowlog_item {
    long long time_us;
    long long id;
    const char *rest;       /* the entry from its id on: Redis's six fields */
    size_t rest_len;
};

static int slowlog_item_cmp(const void *a, const void *b)
{
    const struct slowlog_item *x = a, *y = b;
    if (x->time_us != y->time_us)
        return x->time_us > y->time_us ? -1 : 1;
    return x->id > y->id ? -1 : x->id < y->id ? 1 : 0;
}

void slowlog_merge_get(struct reply *out, long long count, int nparts, const char *const *parts,
                       const size_t *lens)
{
    size_t cap = 16, n = 0;
    struct slowlog_item *items = mem_alloc(cap * sizeof(*items));
    for (int i = 0; i < nparts; i++) {
        struct rread r;
        char t;
        long long k;
        rread_init(&r, parts[i], lens[i]);
        if (rread_is_error(&r)) { /* a shard's error: pass the first one on */
            reply_raw(out, parts[i], lens[i]);
            mem_release(items);
            return;
        }
        if (!rread_agg(&r, &t, &k) || t != '*')
            continue;
        for (long long j = 0; j < k; j++) {
            struct rread e = r; /* the entry: *7, its time, then Redis's six fields from its id */
            long long fields;
            struct slowlog_item it;
            if (!rread_skip(&r) || !rread_agg(&e, &t, &fields) || t != '*' || fields != 7 ||
                !rread_int(&e, &it.time_us))
                break;
            it.rest = e.p;
            it.rest_len = (size_t)(r.p - e.p);
            if (!rread_int(&e, &it.id))
                break;
            if (n == cap) {
                cap *= 2;
                items = mem_realloc(items, cap * sizeof(*items));
            }
            items[n++] = it;
        }
    }
    qsort(items, n, sizeof(*items), slowlog_item_cmp);
    if (count >= 0 && (size_t)count < n)
        n = (size_t)count;
    reply_array(out, (long long)n);
    for (size_t i = 0; i < n; i++) {
        reply_array(out, 6);
        reply_raw(out, items[i].rest, items[i].rest_len);
    }
    mem_release(items);
}
