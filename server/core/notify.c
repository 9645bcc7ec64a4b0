/*
 * notify: keyspace notifications published to every shard's subscribers
 * (see notify.h).
 *
 * The events a shard publishes in one loop turn for shard T are appended to
 * its outbox for T (outbox.h), as pairs of length-prefixed strings (channel,
 * message; a script's SPUBLISH has SHARD_CHANNEL_BIT in the channel's
 * length), and leave as one message (`__notify <pairs>`) at the end of the
 * turn or of the batch that caused them; T delivers them in order to its own
 * subscribers.  Redis's receivers count is not asked for: nothing answers a
 * keyspace event.
 */
#include "notify.h"

#include "shard_internal.h"
#include "outbox.h"

#include "percore/config.h"
#include "percore/mem.h"
#include "percore/pubsub.h"
#include "percore/reply.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SHARD_CHANNEL_BIT 0x80000000u /* in a channel's length: a shard channel (lengths stay below 2^31) */

static void pair_append(struct reply *r, uint32_t abit, const char *a, size_t alen, const char *b, size_t blen)
{
    uint32_t la = (uint32_t)alen | abit, lb = (uint32_t)blen;
    reply_raw(r, (const char *)&la, sizeof la);
    reply_raw(r, a, alen);
    reply_raw(r, (const char *)&lb, sizeof lb);
    reply_raw(r, b, blen);
}

/* deliver here, and queue for every other shard; the receivers here */
static long long publish(struct shard *self, bool shard, const char *chan, size_t clen, const char *msg, size_t mlen)
{
    struct resp_arg c = {chan, clen}, m = {msg, mlen};
    long long here = pubsub_publish_local(shard, &c, &m);
    int n = shard_count();
    if (n == 1)
        return here;
    if (!self->notify)
        self->notify = outbox_create(n);
    for (int sh = 0; sh < n; sh++)
        if (sh != self->index)
            pair_append(outbox_to(self->notify, sh), shard ? SHARD_CHANNEL_BIT : 0, chan, clen, msg, mlen);
    return here;
}

long long notify_publish_message(struct shard *self, bool shard, const struct resp_arg *channel,
                                 const struct resp_arg *message)
{
    return publish(self, shard, channel->ptr, channel->len, message->ptr, message->len);
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
        publish(self, false, chan, (size_t)head + len, event, elen);
    }
    if (flags & NOTIFY_KEYEVENT) {
        head = snprintf(chan, 32, "__keyevent@%d__:", db);
        memcpy(chan + head, event, elen);
        publish(self, false, chan, (size_t)head + elen, key, len);
    }
    mem_release(chan);
}

void notify_flush(struct shard *self)
{
    outbox_flush(self->notify, self, &notify_deliver_command);
}

void notify_teardown_shard(struct shard *self)
{
    outbox_destroy(&self->notify);
}

/* a string of a pair at *at in [p, end): false when the bytes end first; *bit: its length's SHARD_CHANNEL_BIT */
static bool pair_read(const char **at, const char *end, struct resp_arg *s, uint32_t *bit)
{
    uint32_t len;
    if ((size_t)(end - *at) < sizeof len)
        return false;
    memcpy(&len, *at, sizeof len);
    *bit = len & SHARD_CHANNEL_BIT;
    len &= ~SHARD_CHANNEL_BIT;
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
    uint32_t shard, unused;
    long long delivered = 0;
    while (pair_read(&at, end, &chan, &shard) && pair_read(&at, end, &msg, &unused))
        delivered += pubsub_publish_local(shard != 0, &chan, &msg);
    reply_int(ctx->out, delivered);
}

const struct command notify_deliver_command = {
    "__notify", cmd_notify_deliver, 2, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, "",
};
