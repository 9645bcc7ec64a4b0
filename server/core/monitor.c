/*
 * monitor: MONITOR's feed (see monitor.h).
 *
 * A line is built once, on the client's home shard, as Redis's
 * replicationFeedMonitors writes it: "+", the time with microseconds,
 * "[db addr]", then every argument quoted as sdscatrepr does.  It is appended
 * to this shard's monitors' output at once and to the outbox of every other
 * shard (outbox.h), whose `__monitor` message appends it to theirs.
 */
#include "percore/monitor.h"

#include "shard_internal.h"
#include "conn_internal.h"
#include "dispatch.h"
#include "outbox.h"

#include "percore/command.h"
#include "percore/mem.h"
#include "percore/reply.h"
#include "percore/slowlog.h"

#include <stdio.h>
#include <string.h>
#include <sys/time.h>

struct monitor_census monitor_census;

void monitor_start(struct conn *c, struct reply *out)
{
    struct shard *self = c->home;
    if (c->exec_input) { /* queued in MULTI: Redis's EXEC runs its commands as a DENY_BLOCKING client */
        reply_error(out, "ERR MONITOR isn't allowed for DENY BLOCKING client");
        return;
    }
    if (c->monitor) /* Redis ignores it, without a reply */
        return;
    if (self->monitor_count == self->monitor_cap) {
        self->monitor_cap = self->monitor_cap ? self->monitor_cap * 2 : 4;
        self->monitors = mem_realloc(self->monitors, (size_t)self->monitor_cap * sizeof(*self->monitors));
    }
    self->monitors[self->monitor_count++] = c;
    c->monitor = true;
    atomic_fetch_add_explicit(&monitor_census.open, 1, memory_order_relaxed);
    reply_ok(out);
}

void monitor_conn_closed(struct conn *c)
{
    if (!c->monitor)
        return;
    struct shard *self = c->home;
    for (int i = 0; i < self->monitor_count; i++)
        if (self->monitors[i] == c) {
            self->monitors[i] = self->monitors[--self->monitor_count];
            break;
        }
    c->monitor = false;
    atomic_fetch_sub_explicit(&monitor_census.open, 1, memory_order_relaxed);
}

/* sdscatrepr: "..." with \\ \" \n \r \t \a \b escaped and other unprintable bytes as \xHH */
static void append_repr(struct reply *r, const char *p, size_t len)
{
    char buf[8];
    reply_raw(r, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)p[i];
        const char *esc = NULL;
        switch (ch) {
        case '\\': esc = "\\\\"; break;
        case '"': esc = "\\\""; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\a': esc = "\\a"; break;
        case '\b': esc = "\\b"; break;
        default: break;
        }
        if (esc) {
            reply_raw(r, esc, strlen(esc));
        } else if (ch >= 0x20 && ch < 0x7f) {
            reply_raw(r, (const char *)&ch, 1);
        } else {
            snprintf(buf, sizeof buf, "\\x%02x", ch);
            reply_raw(r, buf, 4);
        }
    }
    reply_raw(r, "\"", 1);
}

/* one line to each of this shard's monitors (a full one is closed by its next flush; one that sent QUIT
 * gets nothing after its +OK, as Redis adds nothing to a CLOSE_AFTER_REPLY client) */
static void deliver_local(struct shard *self, const char *line, size_t len)
{
    for (int i = 0; i < self->monitor_count; i++) {
        struct conn *m = self->monitors[i];
        if (m->closed || m->close_after_reply || conn_output_full(m))
            continue;
        reply_raw(dispatch_reply_target(m), line, len);
        shard_mark_dirty(m);
    }
}

void monitor_feed(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv)
{
    monitor_feed_as(c->home, c->db, c->peer, cmd, argc, argv);
}

void monitor_feed_as(struct shard *self, int db, const char *who, const struct command *cmd, int argc,
                     const struct resp_arg *argv)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    char head[128];
    int n = snprintf(head, sizeof head, "+%ld.%06ld [%d %s] ", (long)tv.tv_sec, (long)tv.tv_usec, db, who);
    struct reply line;
    reply_init(&line);
    reply_raw(&line, head, (size_t)n);
    bool redact_small[16];
    bool *redact = argc <= 16 ? redact_small : mem_alloc((size_t)argc * sizeof(bool));
    memset(redact, 0, (size_t)argc * sizeof(bool));
    slowlog_redactions(cmd, argc, argv, redact);
    for (int j = 0; j < argc; j++) {
        if (redact[j])
            reply_raw(&line, "\"(redacted)\"", 12);
        else
            append_repr(&line, argv[j].ptr, argv[j].len);
        if (j != argc - 1)
            reply_raw(&line, " ", 1);
    }
    reply_raw(&line, "\r\n", 2);
    if (redact != redact_small)
        mem_release(redact);
    deliver_local(self, line.buf, line.len);
    int shards = shard_count();
    if (shards > 1) {
        if (!self->monitor_out)
            self->monitor_out = outbox_create(shards);
        for (int sh = 0; sh < shards; sh++)
            if (sh != self->index)
                reply_raw(outbox_to(self->monitor_out, sh), line.buf, line.len);
    }
    reply_deinit(&line);
}

void monitor_flush(struct shard *self)
{
    outbox_flush(self->monitor_out, self, &monitor_deliver_command);
}

void monitor_teardown_shard(struct shard *self)
{
    outbox_destroy(&self->monitor_out);
    mem_release(self->monitors);
    self->monitors = NULL;
    self->monitor_count = self->monitor_cap = 0;
}

/* `__monitor <lines>`: every line to this shard's monitors (lines end in CRLF, arguments are quoted) */
static void cmd_monitor_deliver(struct cmd_ctx *ctx)
{
    struct shard *self = shard_self;
    if (self->monitor_count)
        deliver_local(self, ctx->argv[1].ptr, ctx->argv[1].len);
    reply_ok(ctx->out);
}

const struct command monitor_deliver_command = {
    "__monitor", cmd_monitor_deliver, 2, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, "",
};
