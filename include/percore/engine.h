/*
 * engine: in-process clients of the real server, for benchmarks (and, later,
 * fuzzing) that drive the engine without a network.
 *
 * A driver registered before shard_setup() is called once on every shard
 * thread when the shards start.  On its own thread it may open clients that
 * have no socket, send them request bytes -- parsed and dispatched exactly as
 * bytes read from a socket, cross-shard handoff included -- and receive their
 * reply bytes through a sink, whole replies in request order, when the shard
 * flushes its connections (once per loop turn).  A sink must not send: it
 * runs inside the flush; make an event active on engine_event_base() and
 * send from its callback.
 *
 * Threading: every call but engine_set_driver() on the client's shard thread.
 */
#ifndef PERCORE_ENGINE_H
#define PERCORE_ENGINE_H

#include <stddef.h>

struct conn;
struct event_base;

typedef void engine_sink_fn(void *arg, const char *bytes, size_t len);
typedef void engine_driver_fn(int shard, void *arg);

/* before shard_setup(): fn(shard, arg) runs on each shard thread as it starts */
void engine_set_driver(engine_driver_fn *fn, void *arg);
/* shard.c: run the driver, if any, on the calling shard thread */
void engine_start_driver(int shard);

/* a client of the calling shard; its replies go to sink(arg, ...) */
struct conn *engine_client_open(engine_sink_fn *sink, void *arg);
void engine_client_send(struct conn *c, const char *bytes, size_t len);
void engine_client_close(struct conn *c);
/* the calling shard's event loop */
struct event_base *engine_event_base(void);

#endif
