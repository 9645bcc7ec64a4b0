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
 * send from its callback.  When the connection closes (engine_client_close,
 * QUIT, a protocol error, CLIENT KILL, an output limit) the sink is called
 * once more with bytes NULL and len 0; the client is gone after that call.
 *
 * Threading: every call but engine_set_driver() on the client's shard thread.
 */
#ifndef PERCORE_ENGINE_H
#define PERCORE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

struct conn;
struct event_base;

typedef void engine_sink_fn(void *arg, const char *bytes, size_t len);
typedef void engine_driver_fn(int shard, void *arg);

/*
 * The main thread of a program that is not the server (a benchmark, a fuzz
 * target): start `threads` real shards in this process, configured as by
 * `name --threads N --port <free loopback port> --bind 127.0.0.1 extra...`
 * (extra NULL-terminated, may be NULL), with fn(shard, arg) run on every
 * shard thread as it starts.  SIGTERM and SIGINT are blocked in the caller.
 * The command table is the caller's to set up first (admin_setup(), admin.h:
 * the core does not name the layer above it).  0 ok, -1 (said on stderr or
 * in the log).
 */
int engine_start(const char *name, int threads, const char *const *extra, engine_driver_fn *fn, void *arg);
/* the same thread, later: stop every shard (their clients are closed) and free it all */
void engine_stop(void);

/* before shard_setup(): fn(shard, arg) runs on each shard thread as it starts */
void engine_set_driver(engine_driver_fn *fn, void *arg);
/* shard.c: run the driver, if any, on the calling shard thread */
void engine_start_driver(int shard);

/* a client of the calling shard; its replies go to sink(arg, ...) */
struct conn *engine_client_open(engine_sink_fn *sink, void *arg);
void engine_client_send(struct conn *c, const char *bytes, size_t len);
void engine_client_close(struct conn *c);
/*
 * c waits for input: everything it could parse is answered and handed to the
 * sink (no reply pending, no batch in flight or waiting, reading not paused).
 * Bytes of an incomplete command may still be buffered.
 */
bool engine_client_idle(const struct conn *c);
/* c waits in a blocking command (BLPOP, XREAD BLOCK ...) for data or its timeout */
bool engine_client_blocked(const struct conn *c);
/* end the CLIENT PAUSE in force on the calling shard, as CLIENT UNPAUSE's part there does -- which a
 * pause of ALL would hold as any client's command (a driver's reset: call it on every shard) */
void engine_unpause(void);
/* the calling shard's event loop */
struct event_base *engine_event_base(void);

#endif
