/*
 * outbox: per-target byte buffers a shard fills during a loop turn and
 * sends as one internal message each (see outbox.h).
 */
#include "outbox.h"

#include "shard_internal.h"
#include "handoff.h"

#include "percore/mem.h"
#include "percore/reply.h"

#include <string.h>

struct outbox {
    int nshards;
    struct reply *to;  /* per shard */
    uint64_t *targets; /* bitmap of shards with bytes to send */
};

struct outbox *outbox_create(int nshards)
{
    struct outbox *o = mem_calloc(1, sizeof(*o));
    o->nshards = nshards;
    o->to = mem_calloc((size_t)nshards, sizeof(struct reply));
    for (int i = 0; i < nshards; i++)
        reply_init(&o->to[i]);
    o->targets = mem_calloc((size_t)(nshards + 63) / 64, sizeof(uint64_t));
    return o;
}

void outbox_destroy(struct outbox **op)
{
    struct outbox *o = *op;
    if (!o)
        return;
    for (int i = 0; i < o->nshards; i++)
        reply_deinit(&o->to[i]);
    mem_release(o->to);
    mem_release(o->targets);
    mem_release(o);
    *op = NULL;
}

struct reply *outbox_to(struct outbox *o, int target)
{
    o->targets[target / 64] |= 1ull << (target % 64);
    return &o->to[target];
}

void outbox_flush(struct outbox *o, struct shard *self, const struct command *cmd)
{
    for (int w = 0; w < (o->nshards + 63) / 64; w++) {
        while (o->targets[w]) {
            int sh = w * 64 + __builtin_ctzll(o->targets[w]);
            o->targets[w] &= o->targets[w] - 1;
            struct resp_arg argv[2] = {{cmd->name, strlen(cmd->name)}, {o->to[sh].buf, o->to[sh].len}};
            handoff_send_system(self, sh, cmd, 0, 2, argv);
            reply_clear(&o->to[sh]);
        }
    }
}
