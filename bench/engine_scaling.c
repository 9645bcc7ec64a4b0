/*
 * engine_scaling: the server's engine in one process, no network.
 *
 * Starts the real shards (store, dispatch, handoff, stats, RCU config) and
 * on every shard thread one generator (engine.h) with --clients in-process
 * clients, each keeping --pipeline requests in flight: GET and SET in equal
 * parts on keys drawn uniformly from --keyspace keys.  Workload
 * `cross-shard` draws from every key, so (threads-1)/threads of the
 * requests go to another shard through the handoff; `shard-local` draws
 * only keys whose slots the generator's own shard owns.  The same source
 * built with -DPERCORE_GLOBAL_LOCK=ON runs the same requests on the one
 * shared store under its lock (there the workload only changes the keys).
 *
 * After a warm-up it counts replies for --seconds (or, with --requests N,
 * sends N requests per generator from the start and waits for every reply:
 * a fixed amount of work, for instruction counts) and prints one CSV row:
 *   build,threads,workload,ops_per_sec
 * Error replies are counted and fail the run.  bench/engine-scaling runs it
 * over thread counts and builds and plots the result.
 */
#include "percore/admin.h"
#include "percore/config.h"
#include "percore/engine.h"
#include "percore/slot.h"

#include <event2/event.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef PERCORE_GLOBAL_LOCK
#define BUILD_NAME "global-lock"
#else
#define BUILD_NAME "sharded"
#endif

#define VALUE "0123456789abcdef" /* 16 bytes, redis-benchmark's default -d */

struct options {
    int threads;
    double seconds;
    bool shard_local;
    int clients;
    int pipeline;
    unsigned keyspace;
    unsigned long long requests; /* per generator, no warm-up (0: timed run) */
};

static struct options opt = {.threads = 1, .seconds = 3, .clients = 16, .pipeline = 16, .keyspace = 100000};

struct gen;

struct client {
    struct gen *gen;
    struct conn *conn;
    int outstanding; /* requests sent whose replies have not come back */
};

/* one per shard thread, written only by it; the counters sit on their own line */
struct gen {
    struct event *refill_ev;
    struct client *clients;
    unsigned *keys; /* the key numbers this generator draws from */
    unsigned nkeys;
    uint64_t rng;
    char *req;
    size_t req_cap;
    unsigned long long sent;
    _Alignas(64) _Atomic uint64_t replies;
    _Atomic uint64_t errors;
    char first_error[128];
};

static _Atomic(struct gen *) gens[CONFIG_MAX_THREADS];

static uint64_t rng_next(uint64_t *s) /* xorshift64* */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* replies in bytes (whole replies: simple, error, integer, bulk); errors counted */
static int count_replies(struct gen *g, const char *p, size_t len)
{
    const char *end = p + len;
    int n = 0;
    while (p < end) {
        const char *eol = memchr(p, '\r', (size_t)(end - p));
        if (!eol)
            break;
        if (*p == '-') {
            uint64_t errors = atomic_load_explicit(&g->errors, memory_order_relaxed);
            if (errors == 0)
                snprintf(g->first_error, sizeof g->first_error, "%.*s", (int)(eol - p), p);
            atomic_store_explicit(&g->errors, errors + 1, memory_order_relaxed);
        }
        if (*p == '$') {
            long blen = strtol(p + 1, NULL, 10);
            if (blen >= 0)
                eol += blen + 2;
        }
        p = eol + 2;
        n++;
    }
    return n;
}

static void on_replies(void *arg, const char *bytes, size_t len)
{
    struct client *cl = arg;
    struct gen *g = cl->gen;
    if (!bytes) /* closed: only at shutdown */
        return;
    int n = count_replies(g, bytes, len);
    cl->outstanding -= n;
    atomic_store_explicit(&g->replies, atomic_load_explicit(&g->replies, memory_order_relaxed) + (uint64_t)n,
                          memory_order_relaxed);
    if (cl->outstanding == 0)
        event_active(g->refill_ev, EV_TIMEOUT, 0);
}

/* "key:" and 9 digits, as KEY_LEN bytes (no printf per request) */
#define KEY_LEN 13
static void format_key(char *buf, unsigned key)
{
    memcpy(buf, "key:", 4);
    for (int i = KEY_LEN - 1; i >= 4; i--, key /= 10)
        buf[i] = (char)('0' + key % 10);
}

static const char get_request[] = "*2\r\n$3\r\nGET\r\n$13\r\nkey:XXXXXXXXX\r\n";
static const char set_request[] = "*3\r\n$3\r\nSET\r\n$13\r\nkey:XXXXXXXXX\r\n$16\r\n" VALUE "\r\n";
#define REQUEST_KEY_AT 18 /* where the key starts in both */

static size_t append_command(char *buf, bool set, unsigned key)
{
    size_t len = set ? sizeof set_request - 1 : sizeof get_request - 1;
    memcpy(buf, set ? set_request : get_request, len);
    format_key(buf + REQUEST_KEY_AT, key);
    return len;
}

/* every client with nothing in flight gets a new pipeline */
static void on_refill(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct gen *g = arg;
    for (int i = 0; i < opt.clients; i++) {
        struct client *cl = &g->clients[i];
        if (cl->outstanding || (opt.requests && g->sent >= opt.requests))
            continue;
        size_t len = 0;
        for (int j = 0; j < opt.pipeline; j++) {
            uint64_t r = rng_next(&g->rng);
            len += append_command(g->req + len, r & 1, g->keys[(r >> 1) % g->nkeys]);
        }
        cl->outstanding = opt.pipeline;
        g->sent += (unsigned long long)opt.pipeline;
        engine_client_send(cl->conn, g->req, len);
    }
}

static void start_generator(int shard, void *arg)
{
    (void)arg;
    struct gen *g = aligned_alloc(64, sizeof(*g));
    memset(g, 0, sizeof(*g));
    g->rng = 0x9e3779b97f4a7c15ull * (uint64_t)(shard + 1);
    g->keys = malloc(opt.keyspace * sizeof(unsigned));
    const struct config *cfg = config_current();
    for (unsigned k = 0; k < opt.keyspace; k++) {
        char key[KEY_LEN];
        format_key(key, k);
        if (!opt.shard_local || cfg->slot_shard[slot_of_key(key, KEY_LEN)] == shard)
            g->keys[g->nkeys++] = k;
    }
    g->req_cap = (size_t)opt.pipeline * 96;
    g->req = malloc(g->req_cap);
    g->clients = calloc((size_t)opt.clients, sizeof(*g->clients));
    for (int i = 0; i < opt.clients; i++) {
        g->clients[i].gen = g;
        g->clients[i].conn = engine_client_open(on_replies, &g->clients[i]);
    }
    g->refill_ev = event_new(engine_event_base(), -1, 0, on_refill, g);
    event_active(g->refill_ev, EV_TIMEOUT, 0);
    atomic_store(&gens[shard], g);
}

static uint64_t total_replies(void)
{
    uint64_t n = 0;
    for (int i = 0; i < opt.threads; i++)
        n += atomic_load_explicit(&atomic_load(&gens[i])->replies, memory_order_relaxed);
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: engine_scaling [--threads N] [--seconds S] [--workload cross-shard|shard-local]\n"
               "                      [--clients C] [--pipeline P] [--keyspace K] [--requests N]\n"
               "prints build,threads,workload,ops_per_sec (" BUILD_NAME " build)\n");
}

static int parse_options(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"threads", required_argument, NULL, 't'}, {"seconds", required_argument, NULL, 's'},
        {"workload", required_argument, NULL, 'w'}, {"clients", required_argument, NULL, 'c'},
        {"pipeline", required_argument, NULL, 'P'}, {"keyspace", required_argument, NULL, 'k'},
        {"requests", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "t:s:w:c:P:k:n:h", longopts, NULL)) != -1) {
        switch (ch) {
        case 't': opt.threads = atoi(optarg); break;
        case 's': opt.seconds = atof(optarg); break;
        case 'c': opt.clients = atoi(optarg); break;
        case 'P': opt.pipeline = atoi(optarg); break;
        case 'k': opt.keyspace = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'n': opt.requests = strtoull(optarg, NULL, 10); break;
        case 'w':
            if (strcmp(optarg, "shard-local") != 0 && strcmp(optarg, "cross-shard") != 0)
                return -1;
            opt.shard_local = strcmp(optarg, "shard-local") == 0;
            break;
        case 'h': usage(stdout); exit(0);
        default: return -1;
        }
    }
    if (opt.threads < 1 || opt.threads > CONFIG_MAX_THREADS || opt.seconds <= 0 || opt.clients < 1 ||
        opt.pipeline < 1 || opt.keyspace < (unsigned)opt.threads * 16)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_options(argc, argv) < 0) {
        usage(stderr);
        return 2;
    }
    static const char *const quiet[] = {"--loglevel", "warning", "--logfile", "/dev/stderr", NULL};
    admin_setup();
    if (engine_start("engine_scaling", opt.threads, quiet, start_generator, NULL) < 0)
        return 1;
    for (int i = 0; i < opt.threads; i++)
        while (!atomic_load(&gens[i]))
            usleep(1000);

    uint64_t r0 = 0, r1;
    double t0 = now_s(), t1;
    if (opt.requests) { /* every request from the start, till the last reply (for instruction counts) */
        uint64_t per_gen = (opt.requests + (unsigned)opt.pipeline - 1) / (unsigned)opt.pipeline * (unsigned)opt.pipeline;
        while (total_replies() < per_gen * (uint64_t)opt.threads)
            usleep(1000);
    } else {
        usleep(500 * 1000); /* warm-up: keys created, tables grown */
        r0 = total_replies();
        t0 = now_s();
        usleep((useconds_t)(opt.seconds * 1e6));
    }
    r1 = total_replies();
    t1 = now_s();

    printf("%s,%d,%s,%.0f\n", BUILD_NAME, opt.threads, opt.shard_local ? "shard-local" : "cross-shard",
           (double)(r1 - r0) / (t1 - t0));
    fflush(stdout);
    engine_stop();
    uint64_t errors = 0;
    for (int i = 0; i < opt.threads; i++) { /* the shard threads are gone: their counters are still */
        struct gen *g = atomic_load(&gens[i]);
        if (g->errors && !errors)
            fprintf(stderr, "engine_scaling: %llu error replies, the first: %s\n",
                    (unsigned long long)g->errors, g->first_error);
        errors += g->errors;
    }
    uint64_t all = 0;
    for (int i = 0; i < opt.threads; i++)
        all += atomic_load(&gens[i])->replies;
    fprintf(stderr, "engine_scaling: %llu replies in all (warm-up included)\n", (unsigned long long)all);
    return errors ? 1 : 0;
}
