/*
 * engine: in-process clients (include/percore/engine.h).  A client is an
 * ordinary struct conn with no socket (fd -1) whose flush hands its output
 * to a sink instead of write(); everything between its input and its output
 * is the server's own path: parser, dispatch, handoff, store.
 */
#include "percore/engine.h"

#include "core.h"

#include <stdio.h>

static engine_driver_fn *engine_driver;
static void *engine_driver_arg;

void engine_set_driver(engine_driver_fn *fn, void *arg)
{
    engine_driver = fn;
    engine_driver_arg = arg;
}

void engine_start_driver(int shard)
{
    if (engine_driver)
        engine_driver(shard, engine_driver_arg);
}

struct conn *engine_client_open(engine_sink_fn *sink, void *arg)
{
    struct conn *c = conn_create(shard_self, -1, sink, arg);
    snprintf(c->peer, sizeof(c->peer), "engine:%d", shard_self->index);
    return c;
}

void engine_client_send(struct conn *c, const char *bytes, size_t len) { conn_take_input(c, bytes, len); }

void engine_client_close(struct conn *c) { conn_close(c); }

struct event_base *engine_event_base(void) { return shard_self->base; }
