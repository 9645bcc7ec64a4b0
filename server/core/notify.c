/*
 * notify: keyspace notifications published to every shard's subscribers
 * (see notify.h).
 *
 * The events a shard publishes in one loop turn for shard T are appended to
 * one buffer for T, as pairs of length-prefixed strings (channel, message),
 * and leave as one connection-less batch (`__notify <pairs>`) at the end of
 * the turn; T delivers them in order to its own subscribers.  A batch that
 * finds no credit waits behind the earlier ones (handoff_send_system), so the
 * order holds.  Redis's receivers count is not asked for: nothing answers a
 * keyspace event.
 */
#include "notify.h"

#include "core.h"

#include "percore/config.h"
#include "percore/mem.h"
#include "percore/pubsub.h"
#include "percore/reply.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct notify_pending {
    struct reply *to;  /* per shard: the pairs bound for it this turn */
    uint64_t *targets; /* bitmap of shards with some */
};

static struct notify_pending *pending_of(struct shard *self)
{
    if (!self->notify) {
        int n = shard_count();
        self->notify = mem_calloc(1, sizeof(*self->notify));
        self->notify->to = mem_calloc((size_t)n, sizeof(struct reply));
        for (int i = 0; i < n; i++)
            reply_init(&self->notify->to[i]);
        self->notify->targets = mem_calloc((size_t)(n + 63) / 64, sizeof(uint64_t));
    }
    return self->notify;
}

static void pair_append(struct reply *r, const char *a, size_t alen, const char *b, size_t blen)
{
    uint32_t la = (uint32_t)alen, lb = (uint32_t)blen;
    reply_raw(r, (const char *)&la, sizeof la);
    reply_raw(r, a, alen);
    reply_raw(r, (const char *)&lb, sizeof lb);
    reply_raw(r, b, blen);
}

/* deliver here, and queue for every other shard */
static void publish(struct shard *self, const char *chan, size_t clen, const char *msg, size_t mlen)
{
    struct resp_arg c = {chan, clen}, m = {msg, mlen};
    pubsub_publish_local(&c, &m);
    int n = shard_count();
    if (n == 1)
        return;
    struct notify_pending *p = pending_of(self);
    for (int sh = 0; sh < n; sh++) {
        if (sh == self->index)
            continue;
        pair_append(&p->to[sh], chan, clen, msg, mlen);
        p->targets[sh / 64] |= 1ull << (sh % 64);
    }
}

void notify_publish(struct shard *self, int type, const char *event, int db, const char *key, size_t len)
{
    unsigned flags = config_current()->notify_keyspace_events;
    if (!(flags & (unsigned)type))
        return;
    size_t elen = strlen(event);
    char *chan = mem_alloc(32 + (len > elen ? len : elen));
    int head;
    if (flags & NOTIFY_KEYSPACE) {
        head = snprintf(chan, 32, "__keyspace@%d__:", db);
        memcpy(chan + head, key, len);
        publish(self, chan, (size_t)head + len, event, elen);
    }
    if (flags & NOTIFY_KEYEVENT) {
        head = snprintf(chan, 32, "__keyevent@%d__:", db);
        memcpy(chan + head, event, elen);
        publish(self, chan, (size_t)head + elen, key, len);
    }
    mem_release(chan);
}

void notify_flush(struct shard *self)
{
    struct notify_pending *p = self->notify;
    if (!p)
        return;
    int n = shard_count();
    for (int w = 0; w < (n + 63) / 64; w++) {
        while (p->targets[w]) {
            int sh = w * 64 + __builtin_ctzll(p->targets[w]);
            p->targets[w] &= p->targets[w] - 1;
            struct resp_arg argv[2] = {{"__notify", 8}, {p->to[sh].buf, p->to[sh].len}};
            handoff_send_system(self, sh, &notify_deliver_command, 0, 2, argv);
            reply_clear(&p->to[sh]);
        }
    }
}

void notify_teardown_shard(struct shard *self)
{
    struct notify_pending *p = self->notify;
    if (!p)
        return;
    for (int i = 0; i < shard_count(); i++)
        reply_deinit(&p->to[i]);
    mem_release(p->to);
    mem_release(p->targets);
    mem_release(p);
    self->notify = NULL;
}

/* a string of a pair at *at in [p, end): false when the bytes end first */
static bool pair_read(const char **at, const char *end, struct resp_arg *s)
{
    uint32_t len;
    if ((size_t)(end - *at) < sizeof len)
        return false;
    memcpy(&len, *at, sizeof len);
    *at += sizeof len;
    if ((size_t)(end - *at) < len)
        return false;
    s->ptr = *at;
    s->len = len;
    *at += len;
    return true;
}

static void cmd_notify_deliver(struct cmd_ctx *ctx)
{
    const char *at = ctx->argv[1].ptr, *end = at + ctx->argv[1].len;
    struct resp_arg chan, msg;
    long long delivered = 0;
    while (pair_read(&at, end, &chan) && pair_read(&at, end, &msg))
        delivered += pubsub_publish_local(&chan, &msg);
    reply_int(ctx->out, delivered);
}

const struct command notify_deliver_command = {
    "__notify", cmd_notify_deliver, 2, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, "",
};
