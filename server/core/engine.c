/*
 * engine: in-process clients (include/percore/engine.h).  A client is an
 * ordinary struct conn with no socket (fd -1) whose flush hands its output
 * to a sink instead of write(); everything between its input and its output
 * is the server's own path: parser, dispatch, handoff, store.
 */
#include "percore/engine.h"

#include "shard_internal.h"
#include "conn_internal.h"
#include "reply_slot.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/log.h"
#include "percore/shard.h"
#include "percore/stats.h"
#include "percore/store.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>
#include <urcu-qsbr.h>

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

/* a driver's callbacks are events of the shard's loop, which may have gone
 * offline for RCU before running them (shard.c): come back first */
struct conn *engine_client_open(engine_sink_fn *sink, void *arg)
{
    shard_wake_up(shard_self);
    struct conn *c = conn_create(shard_self, -1, sink, arg);
    snprintf(c->peer, sizeof(c->peer), "engine:%d", shard_self->index);
    return c;
}

void engine_client_send(struct conn *c, const char *bytes, size_t len)
{
    shard_wake_up(shard_self);
    conn_take_input(c, bytes, len);
}

void engine_client_close(struct conn *c) { conn_close(c); }

bool engine_client_idle(const struct conn *c)
{
    return !c->closed && !c->slot_head && c->inflight == 0 && !c->stalled_head && !c->read_paused &&
           c->out_sent == c->out.len;
}

bool engine_client_blocked(const struct conn *c) { return c->blocked != NULL; }

void engine_unpause(void)
{
    shard_wake_up(shard_self);
    conn_pause_local(0, 0, conn_pause_stamp_here());
}

struct event_base *engine_event_base(void) { return shard_self->base; }

/* a loopback port nobody listens on (the shards need one; no client uses it) */
static int engine_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &al) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

int engine_start(const char *name, int threads, const char *const *extra, engine_driver_fn *fn, void *arg)
{
    char threads_arg[16], port_arg[16], err[1024];
    snprintf(threads_arg, sizeof threads_arg, "%d", threads);
    snprintf(port_arg, sizeof port_arg, "%d", engine_free_port());
    /* no save points: a benchmark writes no dump.rdb, at its end or meanwhile (extra may set some) */
    const char *argv[64] = {name, "--threads", threads_arg, "--port", port_arg, "--bind", "127.0.0.1", "--save", ""};
    int argc = 9;
    for (int i = 0; extra && extra[i] && argc < 63; i++)
        argv[argc++] = extra[i];
    argv[argc] = NULL;
    if (config_setup(argc, (char **)argv, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        return -1;
    }
    if (log_setup() < 0)
        return -1;
    uint8_t seed[16] = {1}; /* the same tables run to run */
    store_set_seed(seed);
    sigset_t set; /* as in main.c: the shard threads inherit it, engine_stop's sigwait takes the signal */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    engine_set_driver(fn, arg);
    return stats_setup() < 0 || shard_setup() < 0 || stats_start() < 0 ? -1 : 0;
}

void engine_stop(void)
{
    kill(getpid(), SIGTERM);
    shard_run_until_signal(); /* every shard thread has stopped */
    stats_teardown();
    shard_teardown();
    rcu_barrier();
    log_teardown();
    config_teardown();
}
