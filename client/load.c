/*
 * percore-load: an asynchronous load generator for percore and Redis.
 *
 * What.  --threads N threads, each with its own libevent event_base and
 * --clients C clients (hiredis async connections, libevent adapter).  Every
 * client keeps --pipeline P requests in flight: GET and SET (--ratio) on keys
 * key:NNNNNNNNN drawn uniformly or from a Zipf law (--distribution), until
 * --requests are done or --duration has passed.  Replies on one connection
 * come back in request order, so a ring of P pending records per connection
 * pairs each reply with its request: its latency goes into the thread's
 * log-bucket histogram, an error reply is counted (and the first one kept).
 * At the end main merges the threads: ops/s, p50/p99/p99.9/max, errors, and
 * optionally one CSV row.  Every request sent is counted exactly once: as a
 * reply (error replies included) or, when its connection broke, as failed.
 *
 * Cluster mode (--cluster).  CLUSTER SLOTS from the seed node gives the
 * masters; each client connects to every one of them and routes a request by
 * its key's hash slot (slot_of_key, the server's own function).  A -MOVED
 * reply updates that slot, resends the request to the new owner (its
 * latency keeps counting from the first send) and asks the node for a fresh
 * CLUSTER SLOTS; masters not seen before are connected to on first use.
 *
 * SIGINT or SIGTERM ends a run early: no new requests, the ones in flight
 * are waited for and counted, the report is printed (a second one kills).
 *
 * Failures.  A connection that cannot connect or breaks fails its client
 * (which stops sending); a worker with requests in flight and no reply for
 * REPLY_TIMEOUT_S seconds gives up on all of them.  Either makes the exit
 * status 1, as any error reply does; 2 is a usage error.
 *
 * Threading.  Workers share only what main set up before starting them and
 * never changes afterwards (opt, zipf_cdf, seed_map; each worker copies the
 * map), and the stop_requested flag (a relaxed atomic).  Everything else (connections, counters, histogram, slot map) is
 * owned by one worker; main reads it after pthread_join.
 */
#include "percore/slot.h"

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <event2/event.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#define KEY_PREFIX "key:"
#define KEY_DIGITS 9                    /* key:000000123 */
#define KEY_LEN (sizeof(KEY_PREFIX) - 1 + KEY_DIGITS)
#define KEYSPACE_MAX 1000000000u        /* what KEY_DIGITS can name */
#define ZIPF_KEYSPACE_MAX 100000000u    /* the CDF table: 8 bytes per key */
#define DATA_SIZE_MAX (64u << 20)
#define MAX_CPUS 1024
#define MAX_NODES 256                   /* cluster masters one run can know */
#define MAX_REDIRECTS 5                 /* -MOVED hops before it is an error */
#define REPLY_TIMEOUT_S 10              /* no reply for this long: give up */
#define ERROR_TEXT_MAX 256

/* ---- options: set by main before the workers start, then read-only ---- */

struct options {
    const char *host;          /* seed address */
    int port;                  /* seed port */
    unsigned threads;          /* worker threads */
    int cpus[MAX_CPUS];        /* --cpus: worker i runs on cpus[i % ncpus] */
    unsigned ncpus;            /* 0: no pinning */
    unsigned clients;          /* clients per thread */
    unsigned pipeline;         /* requests in flight per client */
    unsigned reads;            /* --ratio R:W, GET share */
    unsigned writes;           /* --ratio R:W, SET share */
    uint32_t keyspace;         /* keys key:0 .. key:keyspace-1 */
    double zipf_s;             /* Zipf exponent; 0 with uniform */
    const char *distribution;  /* as given, for the report */
    size_t data_size;          /* SET value bytes */
    double duration;           /* seconds, used when requests == 0 */
    uint64_t requests;         /* total over all threads; 0: use duration */
    int cluster;               /* route by hash slot over the masters */
    const char *csv;           /* append a result row here; NULL: none */
    int quiet;                 /* one summary line only */
};

static struct options opt = {
    .host = "127.0.0.1", .port = 6379, .threads = 1, .clients = 4, .pipeline = 1,
    .reads = 1, .writes = 1, .keyspace = 100000, .distribution = "uniform",
    .data_size = 16, .duration = 10,
};

/* set by SIGINT / SIGTERM: stop sending, count what is in flight, report */
static atomic_int stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    atomic_store_explicit(&stop_requested, 1, memory_order_relaxed);
}

/* Zipf: zipf_cdf[i] = P(rank <= i), rank 0 being key:000000000; NULL when
 * the distribution is uniform.  Read-only once the workers run. */
static double *zipf_cdf;

/* ---- time, random numbers ------------------------------------------------ */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* splitmix64: small state, good enough for picking keys */
static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* uniform in [0, n), n <= 2^32 (multiply-shift) */
static uint32_t rng_below(uint64_t *state, uint32_t n)
{
    return (uint32_t)(((rng_next(state) >> 32) * n) >> 32);
}

static uint32_t pick_key(uint64_t *state)
{
    if (zipf_cdf == NULL)
        return rng_below(state, opt.keyspace);
    double u = (double)(rng_next(state) >> 11) * 0x1.0p-53;
    uint32_t lo = 0, hi = opt.keyspace - 1;
    while (lo < hi) {                   /* first rank whose CDF exceeds u */
        uint32_t mid = lo + (hi - lo) / 2;
        if (zipf_cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static int zipf_setup(double s, uint32_t n)
{
    zipf_cdf = malloc(sizeof(*zipf_cdf) * n);
    if (zipf_cdf == NULL)
        return -1;
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        sum += pow((double)i + 1, -s);
        zipf_cdf[i] = sum;
    }
    for (uint32_t i = 0; i < n; i++)
        zipf_cdf[i] /= sum;
    zipf_cdf[n - 1] = 1.0;
    return 0;
}

/* ---- latency histogram -----------------------------------------------------
 * HdrHistogram-like, in nanoseconds: values below 2*HIST_SUB have a bucket
 * each; above, every power of two [2^m, 2^(m+1)) is split into HIST_SUB
 * equal sub-buckets, so a bucket is at most 1/HIST_SUB (6%) wide. */

#define HIST_SUB_BITS 4
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS ((64 - HIST_SUB_BITS + 1) * HIST_SUB)

struct histogram {
    uint64_t count;                  /* values recorded */
    uint64_t max;                    /* largest value, exact */
    uint64_t bucket[HIST_BUCKETS];   /* counts per bucket */
};

static unsigned hist_index(uint64_t v)
{
    if (v < 2 * HIST_SUB)
        return (unsigned)v;
    unsigned major = 63u - (unsigned)__builtin_clzll(v);
    unsigned shift = major - HIST_SUB_BITS;
    return (major - HIST_SUB_BITS + 1) * HIST_SUB + (unsigned)((v >> shift) & (HIST_SUB - 1));
}

/* the largest value that falls in bucket i */
static uint64_t hist_bucket_top(unsigned i)
{
    if (i < 2 * HIST_SUB)
        return i;
    unsigned major = i / HIST_SUB + HIST_SUB_BITS - 1;
    unsigned shift = major - HIST_SUB_BITS;
    uint64_t low = (uint64_t)(HIST_SUB + i % HIST_SUB) << shift;
    return low + ((uint64_t)1 << shift) - 1;
}

static void hist_record(struct histogram *h, uint64_t v)
{
    h->bucket[hist_index(v)]++;
    h->count++;
    if (v > h->max)
        h->max = v;
}

static void hist_merge(struct histogram *into, const struct histogram *from)
{
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        into->bucket[i] += from->bucket[i];
    into->count += from->count;
    if (from->max > into->max)
        into->max = from->max;
}

/* value at quantile q (0 < q <= 1): the top of the bucket holding it */
static uint64_t hist_quantile(const struct histogram *h, double q)
{
    if (h->count == 0)
        return 0;
    uint64_t rank = (uint64_t)ceil(q * (double)h->count), seen = 0;
    if (rank == 0)
        rank = 1;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank)
            return hist_bucket_top(i) < h->max ? hist_bucket_top(i) : h->max;
    }
    return h->max;
}

/* ---- slot map: hash slot -> master ---------------------------------------- */

struct node {
    char host[64];             /* address as CLUSTER SLOTS / MOVED gave it */
    int port;
};

struct slot_map {
    unsigned nnodes;                  /* masters known */
    struct node nodes[MAX_NODES];     /* index = node number */
    uint16_t owner[SLOT_COUNT];       /* slot -> node number */
};

/* The map main builds from the seed (one node owning every slot without
 * --cluster); each worker starts from a copy.  Read-only once they run. */
static struct slot_map seed_map;

/* the number of host:port, added when new; -1 when the map is full */
static int slot_map_node(struct slot_map *map, const char *host, size_t hostlen, int port)
{
    if (hostlen == 0) {                 /* "" means: the address you asked */
        host = opt.host;
        hostlen = strlen(host);
    }
    if (hostlen >= sizeof(map->nodes[0].host))
        return -1;
    for (unsigned i = 0; i < map->nnodes; i++)
        if (map->nodes[i].port == port && strlen(map->nodes[i].host) == hostlen &&
            memcmp(map->nodes[i].host, host, hostlen) == 0)
            return (int)i;
    if (map->nnodes == MAX_NODES)
        return -1;
    struct node *n = &map->nodes[map->nnodes];
    memcpy(n->host, host, hostlen);
    n->host[hostlen] = '\0';
    n->port = port;
    return (int)map->nnodes++;
}

/* Apply a CLUSTER SLOTS reply: [[start, end, [host, port, ...], replicas...]...].
 * Slots it does not mention keep their owner.  0 ok, -1 malformed. */
static int slot_map_update(struct slot_map *map, const redisReply *r)
{
    if (r->type != REDIS_REPLY_ARRAY)
        return -1;
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *range = r->element[i];
        if (range->type != REDIS_REPLY_ARRAY || range->elements < 3 ||
            range->element[0]->type != REDIS_REPLY_INTEGER ||
            range->element[1]->type != REDIS_REPLY_INTEGER ||
            range->element[2]->type != REDIS_REPLY_ARRAY || range->element[2]->elements < 2)
            return -1;
        const redisReply *master = range->element[2];
        long long first = range->element[0]->integer, last = range->element[1]->integer;
        if (master->element[0]->type != REDIS_REPLY_STRING ||
            master->element[1]->type != REDIS_REPLY_INTEGER ||
            first < 0 || last >= SLOT_COUNT || first > last)
            return -1;
        int node = slot_map_node(map, master->element[0]->str, master->element[0]->len,
                                 (int)master->element[1]->integer);
        if (node < 0)
            return -1;
        for (long long s = first; s <= last; s++)
            map->owner[s] = (uint16_t)node;
    }
    return 0;
}

/* "MOVED <slot> <host>:<port>": point the slot at that node.  0 ok, -1 not
 * a MOVED reply this map can follow. */
static int slot_map_moved(struct slot_map *map, const char *err)
{
    unsigned slot;
    int hostpos;
    if (sscanf(err, "MOVED %u %n", &slot, &hostpos) != 1 || slot >= SLOT_COUNT)
        return -1;
    const char *host = err + hostpos, *colon = strrchr(host, ':');
    if (colon == NULL)
        return -1;
    int node = slot_map_node(map, host, (size_t)(colon - host), atoi(colon + 1));
    if (node < 0)
        return -1;
    map->owner[slot] = (uint16_t)node;
    return 0;
}

/* ---- workers, clients, connections ----------------------------------------- */

struct pending {
    uint64_t start_ns;         /* when the request was first sent */
    uint32_t key;              /* key number */
    uint8_t is_set;            /* SET, else GET */
    uint8_t redirects;         /* -MOVED hops so far */
};

struct client;

struct conn {
    redisAsyncContext *ac;     /* NULL once closed, lost or handed to hiredis to close */
    struct client *client;     /* owner */
    int lost;                  /* counted as a connection failure */
    unsigned head;             /* oldest pending request */
    unsigned count;            /* requests in flight on this connection */
    struct pending ring[];     /* opt.pipeline slots, in send order */
};

struct client {
    struct worker *worker;         /* owner */
    unsigned in_flight;            /* over all its connections, <= opt.pipeline */
    int failed;                    /* a connection broke: sends nothing more */
    int finished;                  /* idle for good; counted off clients_active */
    struct conn *conns[MAX_NODES]; /* by node number; NULL until first used */
};

struct worker {
    unsigned index;                /* thread number */
    pthread_t thread;
    struct event_base *base;
    struct event *watchdog;        /* 1 s timer: REPLY_TIMEOUT_S without replies */
    struct client *clients;        /* opt.clients */
    unsigned clients_active;       /* not finished yet */
    int finished;                  /* all clients done, connections closing */
    uint64_t remaining;            /* requests still to send (--requests) */
    uint64_t deadline_ns;          /* no new request after this (--duration) */
    uint64_t last_reply_ns;        /* progress, for the watchdog */
    uint64_t rng;                  /* key and operation choice */
    int refreshing;                /* a CLUSTER SLOTS is in flight */
    struct slot_map map;           /* this worker's view of the cluster */
    char *get_cmd, *set_cmd;       /* RESP templates; the key digits are rewritten */
    size_t get_len, set_len;
    size_t key_offset;             /* where the key starts in both templates */
    /* results, read by main after join */
    uint64_t start_ns, end_ns;
    uint64_t replies;              /* replies counted, error replies included */
    uint64_t errors;               /* error replies */
    uint64_t failed;               /* requests that got no reply (connection lost) */
    uint64_t conn_failures;        /* connections that failed or broke */
    uint64_t redirects;            /* -MOVED replies followed */
    char first_error[ERROR_TEXT_MAX];
    struct histogram hist;
};

static void client_fill(struct client *cl);

static void worker_note_error(struct worker *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* keep the first error text the worker saw */
static void worker_note_error(struct worker *w, const char *fmt, ...)
{
    va_list ap;
    if (w->first_error[0] != '\0')
        return;
    va_start(ap, fmt);
    vsnprintf(w->first_error, sizeof(w->first_error), fmt, ap);
    va_end(ap);
}

/* may a new request start now? */
static int worker_may_send(const struct worker *w)
{
    if (w->finished || atomic_load_explicit(&stop_requested, memory_order_relaxed))
        return 0;
    if (opt.requests > 0)
        return w->remaining > 0;
    return now_ns() < w->deadline_ns;
}

/* All clients are done: close every connection gracefully; the event loop
 * returns once the last one is gone. */
static void worker_finish(struct worker *w)
{
    w->finished = 1;
    w->end_ns = now_ns();
    event_del(w->watchdog);
    for (unsigned i = 0; i < opt.clients; i++)
        for (unsigned n = 0; n < MAX_NODES; n++) {
            struct conn *c = w->clients[i].conns[n];
            if (c != NULL && c->ac != NULL) {
                redisAsyncContext *ac = c->ac;
                c->ac = NULL;
                redisAsyncDisconnect(ac);
            }
        }
}

static void client_check_finished(struct client *cl)
{
    struct worker *w = cl->worker;
    if (cl->finished || cl->in_flight > 0 || (!cl->failed && worker_may_send(w)))
        return;
    cl->finished = 1;
    if (--w->clients_active == 0 && !w->finished)
        worker_finish(w);
}

/* the connection failed or broke: count it once, stop its client */
static void conn_lost(struct conn *c, const char *why)
{
    struct client *cl = c->client;
    struct worker *w = cl->worker;
    c->ac = NULL;
    cl->failed = 1;
    if (!c->lost) {
        c->lost = 1;
        w->conn_failures++;
        worker_note_error(w, "connection failed: %s", why[0] ? why : "closed");
    }
}

static void on_connect(const redisAsyncContext *ac, int status)
{
    struct conn *c = ac->data;
    if (status != REDIS_OK) {
        conn_lost(c, ac->errstr);
        client_check_finished(c->client);
    }
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    struct conn *c = ac->data;
    if (status != REDIS_OK) {
        conn_lost(c, ac->errstr);
        client_check_finished(c->client);
    }
    c->ac = NULL;
}

/* the client's connection to node n, connecting on first use; NULL when it
 * cannot be had (the client is failed then) */
static struct conn *client_conn(struct client *cl, unsigned n)
{
    struct worker *w = cl->worker;
    struct conn *c = cl->conns[n];
    if (c != NULL)
        return c->ac != NULL ? c : NULL;
    c = calloc(1, sizeof(*c) + sizeof(c->ring[0]) * opt.pipeline);
    if (c == NULL) {
        cl->failed = 1;
        worker_note_error(w, "%s", "out of memory");
        return NULL;
    }
    c->client = cl;
    cl->conns[n] = c;
    c->ac = redisAsyncConnect(w->map.nodes[n].host, w->map.nodes[n].port);
    if (c->ac == NULL || c->ac->err) {
        char why[ERROR_TEXT_MAX];
        snprintf(why, sizeof(why), "%s:%d: %s", w->map.nodes[n].host, w->map.nodes[n].port,
                 c->ac != NULL ? c->ac->errstr : "out of memory");
        if (c->ac != NULL)
            redisAsyncFree(c->ac);
        conn_lost(c, why);
        return NULL;
    }
    c->ac->data = c;
    redisLibeventAttach(c->ac, w->base);
    redisAsyncSetConnectCallback(c->ac, on_connect);
    redisAsyncSetDisconnectCallback(c->ac, on_disconnect);
    return c;
}

static void on_reply(redisAsyncContext *ac, void *reply, void *privdata);

/* write key number k's digits into a command template */
static void format_key(char *digits, uint32_t k)
{
    for (int i = KEY_DIGITS - 1; i >= 0; i--, k /= 10)
        digits[i] = (char)('0' + k % 10);
}

/* Send one request (a new one, or one being redirected).  0 sent, -1 the
 * client could not (it is failed). */
static int client_send(struct client *cl, struct pending p)
{
    struct worker *w = cl->worker;
    char *cmd = p.is_set ? w->set_cmd : w->get_cmd;
    size_t len = p.is_set ? w->set_len : w->get_len;
    char *key = cmd + w->key_offset;
    format_key(key + sizeof(KEY_PREFIX) - 1, p.key);
    unsigned node = opt.cluster ? w->map.owner[slot_of_key(key, KEY_LEN)] : 0;
    struct conn *c = client_conn(cl, node);
    if (c == NULL || redisAsyncFormattedCommand(c->ac, on_reply, c, cmd, len) != REDIS_OK) {
        cl->failed = 1;
        return -1;
    }
    c->ring[(c->head + c->count) % opt.pipeline] = p;
    c->count++;
    cl->in_flight++;
    return 0;
}

static void on_slots(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct worker *w = privdata;
    const redisReply *r = reply;
    (void)ac;
    w->refreshing = 0;
    if (r != NULL && slot_map_update(&w->map, r) < 0)
        worker_note_error(w, "%s", "CLUSTER SLOTS reply not understood");
}

/* a -MOVED reply: re-point the slot, resend, refresh the whole map */
static int client_follow_moved(struct client *cl, redisAsyncContext *ac, const redisReply *r,
                               struct pending p)
{
    struct worker *w = cl->worker;
    if (!opt.cluster || p.redirects >= MAX_REDIRECTS || strncmp(r->str, "MOVED ", 6) != 0 ||
        slot_map_moved(&w->map, r->str) < 0)
        return -1;
    w->redirects++;
    if (!w->refreshing &&
        redisAsyncCommand(ac, on_slots, w, "CLUSTER SLOTS") == REDIS_OK)
        w->refreshing = 1;
    p.redirects++;
    if (client_send(cl, p) < 0)
        w->failed++;
    return 0;
}

static void on_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    struct conn *c = privdata;
    struct client *cl = c->client;
    struct worker *w = cl->worker;
    const redisReply *r = reply;
    struct pending p = c->ring[c->head];

    c->head = (c->head + 1) % opt.pipeline;
    c->count--;
    cl->in_flight--;
    if (r == NULL) {                    /* the connection went away */
        w->failed++;
        conn_lost(c, ac->errstr);
    } else if (r->type == REDIS_REPLY_ERROR && client_follow_moved(cl, ac, r, p) == 0) {
        /* resent; its reply will be counted */
    } else {
        uint64_t now = now_ns();
        hist_record(&w->hist, now - p.start_ns);
        w->last_reply_ns = now;
        w->replies++;
        if (r->type == REDIS_REPLY_ERROR) {
            w->errors++;
            worker_note_error(w, "%s", r->str);
        }
    }
    client_fill(cl);
}

/* keep opt.pipeline requests in flight while the run lasts */
static void client_fill(struct client *cl)
{
    struct worker *w = cl->worker;
    while (!cl->failed && cl->in_flight < opt.pipeline && worker_may_send(w)) {
        struct pending p = {
            .start_ns = now_ns(),
            .key = pick_key(&w->rng),
            .is_set = rng_below(&w->rng, opt.reads + opt.writes) >= opt.reads,
        };
        if (client_send(cl, p) < 0)
            break;
        if (opt.requests > 0)
            w->remaining--;
    }
    client_check_finished(cl);
}

/* No reply for REPLY_TIMEOUT_S while requests are in flight: give up on all
 * of them (freeing a connection calls back its pending requests with NULL). */
static void on_watchdog(evutil_socket_t fd, short what, void *arg)
{
    struct worker *w = arg;
    (void)fd;
    (void)what;
    if (now_ns() - w->last_reply_ns < (uint64_t)REPLY_TIMEOUT_S * 1000000000u)
        return;
    worker_note_error(w, "no reply for %d s", REPLY_TIMEOUT_S);
    for (unsigned i = 0; i < opt.clients; i++) {
        struct client *cl = &w->clients[i];
        cl->failed = 1;
        for (unsigned n = 0; n < MAX_NODES; n++) {
            struct conn *c = cl->conns[n];
            if (c != NULL && c->ac != NULL) {
                redisAsyncContext *ac = c->ac;
                c->ac = NULL;
                redisAsyncFree(ac);
            }
        }
        client_check_finished(cl);
    }
}

/* "*2\r\n$3\r\nGET\r\n$13\r\nkey:000000000\r\n", and SET with a value */
static int worker_build_commands(struct worker *w)
{
    char head[128];
    int n = snprintf(head, sizeof(head), "*3\r\n$3\r\nSET\r\n$%zu\r\n%s%0*d\r\n$%zu\r\n",
                     KEY_LEN, KEY_PREFIX, KEY_DIGITS, 0, opt.data_size);
    w->set_len = (size_t)n + opt.data_size + 2;
    w->set_cmd = malloc(w->set_len + 1);
    w->get_cmd = malloc(64);
    if (w->set_cmd == NULL || w->get_cmd == NULL)
        return -1;
    memcpy(w->set_cmd, head, (size_t)n);
    memset(w->set_cmd + n, 'x', opt.data_size);
    memcpy(w->set_cmd + n + opt.data_size, "\r\n", 3);
    w->get_len = (size_t)snprintf(w->get_cmd, 64, "*2\r\n$3\r\nGET\r\n$%zu\r\n%s%0*d\r\n",
                                  KEY_LEN, KEY_PREFIX, KEY_DIGITS, 0);
    w->key_offset = (size_t)(strstr(w->get_cmd, KEY_PREFIX) - w->get_cmd);
    assert(strncmp(w->set_cmd + w->key_offset, KEY_PREFIX, sizeof(KEY_PREFIX) - 1) == 0);
    return 0;
}

static void worker_release(struct worker *w)
{
    if (w->clients != NULL)
        for (unsigned i = 0; i < opt.clients; i++)
            for (unsigned n = 0; n < MAX_NODES; n++)
                free(w->clients[i].conns[n]);
    free(w->clients);
    free(w->set_cmd);
    free(w->get_cmd);
    if (w->watchdog != NULL)
        event_free(w->watchdog);
    if (w->base != NULL)
        event_base_free(w->base);
}

static void *worker_run(void *arg)
{
    struct worker *w = arg;
    struct timeval second = { 1, 0 };

    if (opt.ncpus > 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(opt.cpus[w->index % opt.ncpus], &set);
        if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
            fprintf(stderr, "percore-load: thread %u: cannot pin to cpu %d\n", w->index,
                    opt.cpus[w->index % opt.ncpus]);
    }
    w->map = seed_map;
    w->rng = 0x5eed0000u + w->index;
    w->base = event_base_new();
    w->clients = calloc(opt.clients, sizeof(*w->clients));
    if (w->base == NULL || w->clients == NULL || worker_build_commands(w) < 0 ||
        (w->watchdog = event_new(w->base, -1, EV_PERSIST, on_watchdog, w)) == NULL) {
        worker_note_error(w, "%s", "out of memory");
        w->conn_failures++;
        worker_release(w);
        return NULL;
    }
    event_add(w->watchdog, &second);
    w->start_ns = w->last_reply_ns = now_ns();
    w->deadline_ns = w->start_ns + (uint64_t)(opt.duration * 1e9);
    w->clients_active = opt.clients;
    for (unsigned i = 0; i < opt.clients; i++) {
        struct client *cl = &w->clients[i];
        cl->worker = w;
        for (unsigned n = 0; n < (opt.cluster ? w->map.nnodes : 1) && !cl->failed; n++)
            client_conn(cl, n);
        client_fill(cl);
    }
    event_base_dispatch(w->base);
    if (w->end_ns == 0)
        w->end_ns = now_ns();
    worker_release(w);
    return NULL;
}

/* ---- options ------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: percore-load [options]\n"
        "  --host H             server address (default 127.0.0.1)\n"
        "  --port P             server port (default 6379)\n"
        "  --threads N          threads, each with its own event loop (default 1)\n"
        "  --cpus LIST          pin thread i to the i-th cpu of LIST, e.g. 2-3 or 0,2\n"
        "  --clients C          clients per thread (default 4): one connection each,\n"
        "                       with --cluster one to every master\n"
        "  --pipeline P         requests in flight per client (default 1); with\n"
        "                       --cluster spread over its connections to the masters\n"
        "  --ratio R:W          GET:SET mix, e.g. 1:1, 9:1, 0:1 (default 1:1)\n"
        "  --keyspace K         keys key:000000000 .. K-1 (default 100000)\n"
        "  --distribution D     uniform, or zipf:S with exponent S (default uniform)\n"
        "  --data-size B        SET value bytes (default 16)\n"
        "  --duration S         run S seconds (default 10) ...\n"
        "  --requests N         ... or send exactly N requests over all threads\n"
        "  --cluster            CLUSTER SLOTS from host:port, connect to every master,\n"
        "                       route each key by its hash slot, follow -MOVED\n"
        "                       (-ASK counts as an error)\n"
        "  --csv FILE           append a result row (a header first when FILE is new)\n"
        "  --quiet              print one summary line only\n"
        "SIGINT/SIGTERM end the run early: in-flight requests are counted, then the report.\n"
        "  --help\n"
        "Prints requests, errors, ops/s and latency percentiles.  Exit status 1 when\n"
        "any request got an error reply or no reply, or a connection failed.\n");
}

static void die_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "percore-load: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    exit(2);
}

static unsigned long long parse_number(const char *s, unsigned long long min,
                                       unsigned long long max, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < min || v > max)
        die_usage("bad %s", what);
    return v;
}

/* "0-3,8" -> opt.cpus */
static void parse_cpus(const char *list)
{
    const char *p = list;
    while (*p != '\0') {
        char *end;
        long first = strtol(p, &end, 10), last = first;
        if (end == p || first < 0)
            die_usage("bad --cpus list '%s'", list);
        if (*end == '-') {
            p = end + 1;
            last = strtol(p, &end, 10);
            if (end == p || last < first)
                die_usage("bad --cpus list '%s'", list);
        }
        for (long c = first; c <= last; c++) {
            if (opt.ncpus == MAX_CPUS || c >= CPU_SETSIZE)
                die_usage("too many cpus in '%s'", list);
            opt.cpus[opt.ncpus++] = (int)c;
        }
        if (*end == ',')
            end++;
        else if (*end != '\0')
            die_usage("bad --cpus list '%s'", list);
        p = end;
    }
    if (opt.ncpus == 0)
        die_usage("empty --cpus list '%s'", list);
}

static void parse_options(int argc, char **argv)
{
    enum { O_HOST = 256, O_PORT, O_THREADS, O_CPUS, O_CLIENTS, O_PIPELINE, O_RATIO, O_KEYSPACE,
           O_DISTRIBUTION, O_DATA_SIZE, O_DURATION, O_REQUESTS, O_CLUSTER, O_CSV, O_QUIET, O_HELP };
    static const struct option longopts[] = {
        { "host", required_argument, NULL, O_HOST },
        { "port", required_argument, NULL, O_PORT },
        { "threads", required_argument, NULL, O_THREADS },
        { "cpus", required_argument, NULL, O_CPUS },
        { "clients", required_argument, NULL, O_CLIENTS },
        { "pipeline", required_argument, NULL, O_PIPELINE },
        { "ratio", required_argument, NULL, O_RATIO },
        { "keyspace", required_argument, NULL, O_KEYSPACE },
        { "distribution", required_argument, NULL, O_DISTRIBUTION },
        { "data-size", required_argument, NULL, O_DATA_SIZE },
        { "duration", required_argument, NULL, O_DURATION },
        { "requests", required_argument, NULL, O_REQUESTS },
        { "cluster", no_argument, NULL, O_CLUSTER },
        { "csv", required_argument, NULL, O_CSV },
        { "quiet", no_argument, NULL, O_QUIET },
        { "help", no_argument, NULL, O_HELP },
        { NULL, 0, NULL, 0 },
    };
    int o, n;
    char *end;

    while ((o = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (o) {
        case O_HOST: opt.host = optarg; break;
        case O_PORT: opt.port = (int)parse_number(optarg, 1, 65535, "--port"); break;
        case O_THREADS: opt.threads = (unsigned)parse_number(optarg, 1, 1024, "--threads"); break;
        case O_CPUS: parse_cpus(optarg); break;
        case O_CLIENTS: opt.clients = (unsigned)parse_number(optarg, 1, 10000, "--clients"); break;
        case O_PIPELINE:
            opt.pipeline = (unsigned)parse_number(optarg, 1, 100000, "--pipeline");
            break;
        case O_RATIO:
            n = -1;
            if (sscanf(optarg, "%u:%u%n", &opt.reads, &opt.writes, &n) != 2 || optarg[n] != '\0' ||
                opt.reads + opt.writes == 0 || opt.reads > 1000000 || opt.writes > 1000000)
                die_usage("bad --ratio '%s' (want R:W, e.g. 9:1)", optarg);
            break;
        case O_KEYSPACE:
            opt.keyspace = (uint32_t)parse_number(optarg, 1, KEYSPACE_MAX, "--keyspace");
            break;
        case O_DISTRIBUTION:
            opt.distribution = optarg;
            if (strcmp(optarg, "uniform") == 0) {
                opt.zipf_s = 0;
            } else if (strncmp(optarg, "zipf:", 5) == 0) {
                opt.zipf_s = strtod(optarg + 5, &end);
                if (end == optarg + 5 || *end != '\0' || !(opt.zipf_s > 0 && opt.zipf_s <= 10))
                    die_usage("bad Zipf exponent in '%s' (want 0 < S <= 10)", optarg);
            } else {
                die_usage("bad --distribution '%s' (uniform or zipf:S)", optarg);
            }
            break;
        case O_DATA_SIZE:
            opt.data_size = (size_t)parse_number(optarg, 0, DATA_SIZE_MAX, "--data-size");
            break;
        case O_DURATION:
            opt.duration = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(opt.duration > 0 && opt.duration <= 86400))
                die_usage("bad --duration '%s'", optarg);
            break;
        case O_REQUESTS:
            opt.requests = parse_number(optarg, 1, UINT64_MAX / 2, "--requests");
            break;
        case O_CLUSTER: opt.cluster = 1; break;
        case O_CSV: opt.csv = optarg; break;
        case O_QUIET: opt.quiet = 1; break;
        case O_HELP: usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (optind < argc)
        die_usage("unexpected argument '%s'", argv[optind]);
    if (opt.zipf_s > 0 && opt.keyspace > ZIPF_KEYSPACE_MAX)
        die_usage("--keyspace too large for %s (at most 100000000)", opt.distribution);
}

/* ---- setup and report ------------------------------------------------------ */

/* the slot map the workers start from; -1 (with a message) on failure */
static int seed_map_setup(void)
{
    if (!opt.cluster) {
        seed_map.nnodes = 1;        /* node 0 owns every slot */
        snprintf(seed_map.nodes[0].host, sizeof(seed_map.nodes[0].host), "%s", opt.host);
        seed_map.nodes[0].port = opt.port;
        return 0;
    }
    struct timeval timeout = { 5, 0 };
    redisContext *c = redisConnectWithTimeout(opt.host, opt.port, timeout);
    if (c == NULL || c->err) {
        fprintf(stderr, "percore-load: connect to %s:%d: %s\n", opt.host, opt.port,
                c != NULL ? c->errstr : "out of memory");
        redisFree(c);
        return -1;
    }
    redisReply *r = redisCommand(c, "CLUSTER SLOTS");
    int rc = -1;
    if (r == NULL)
        fprintf(stderr, "percore-load: CLUSTER SLOTS: %s\n", c->errstr);
    else if (r->type == REDIS_REPLY_ERROR)
        fprintf(stderr, "percore-load: CLUSTER SLOTS: %s\n", r->str);
    else if (slot_map_update(&seed_map, r) < 0 || seed_map.nnodes == 0)
        fprintf(stderr, "percore-load: CLUSTER SLOTS: no usable slot ranges in the reply\n");
    else
        rc = 0;
    freeReplyObject(r);
    redisFree(c);
    return rc;
}

struct totals {
    uint64_t replies, errors, failed, conn_failures, redirects;
    double seconds;
    const char *first_error;   /* NULL: none */
    struct histogram hist;
};

static void totals_merge(struct totals *t, const struct worker *ws)
{
    uint64_t first_start = 0, last_end = 0;
    memset(t, 0, sizeof(*t));
    for (unsigned i = 0; i < opt.threads; i++) {
        const struct worker *w = &ws[i];
        t->replies += w->replies;
        t->errors += w->errors;
        t->failed += w->failed;
        t->conn_failures += w->conn_failures;
        t->redirects += w->redirects;
        hist_merge(&t->hist, &w->hist);
        if (t->first_error == NULL && w->first_error[0] != '\0')
            t->first_error = w->first_error;
        if (w->start_ns != 0 && (first_start == 0 || w->start_ns < first_start))
            first_start = w->start_ns;
        if (w->end_ns > last_end)
            last_end = w->end_ns;
    }
    t->seconds = last_end > first_start ? (double)(last_end - first_start) / 1e9 : 0;
}

static double us(uint64_t ns)
{
    return (double)ns / 1000.0;
}

static void report(const struct totals *t)
{
    double ops = t->seconds > 0 ? (double)t->replies / t->seconds : 0;
    if (opt.quiet) {
        printf("requests %" PRIu64 " errors %" PRIu64 " ops/s %.0f p50_us %.1f p99_us %.1f"
               " p999_us %.1f max_us %.1f\n", t->replies, t->errors + t->failed, ops,
               us(hist_quantile(&t->hist, 0.5)), us(hist_quantile(&t->hist, 0.99)),
               us(hist_quantile(&t->hist, 0.999)), us(t->hist.max));
    } else {
        printf("percore-load: %s:%d%s, %u threads x %u clients, pipeline %u, GET:SET %u:%u, "
               "%u keys %s, %zu-byte values\n", opt.host, opt.port,
               opt.cluster ? " (cluster)" : "", opt.threads, opt.clients, opt.pipeline,
               opt.reads, opt.writes, opt.keyspace, opt.distribution, opt.data_size);
        printf("requests: %" PRIu64 "\n", t->replies);
        printf("errors: %" PRIu64 "\n", t->errors);
        printf("failed (no reply): %" PRIu64 "\n", t->failed);
        printf("connection failures: %" PRIu64 "\n", t->conn_failures);
        if (opt.cluster)
            printf("redirects (MOVED): %" PRIu64 "\n", t->redirects);
        printf("seconds: %.3f\n", t->seconds);
        printf("ops/s: %.0f\n", ops);
        printf("latency us: p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n",
               us(hist_quantile(&t->hist, 0.5)), us(hist_quantile(&t->hist, 0.99)),
               us(hist_quantile(&t->hist, 0.999)), us(t->hist.max));
    }
    if (t->first_error != NULL)
        fprintf(stderr, "percore-load: %" PRIu64 " error replies, %" PRIu64 " failed requests, "
                "%" PRIu64 " connection failures; first: %s\n", t->errors, t->failed,
                t->conn_failures, t->first_error);
}

/* append one row to opt.csv, with the header first when the file is new */
static int write_csv(const struct totals *t)
{
    struct stat st;
    int is_new = stat(opt.csv, &st) != 0 || st.st_size == 0;
    FILE *f = fopen(opt.csv, "a");
    if (f == NULL) {
        fprintf(stderr, "percore-load: %s: %s\n", opt.csv, strerror(errno));
        return -1;
    }
    if (is_new)
        fprintf(f, "clients,threads,pipeline,ratio,keyspace,distribution,data_size,cluster,"
                   "ops_per_sec,p50_us,p99_us,p999_us,max_us,errors,requests\n");
    fprintf(f, "%u,%u,%u,%u:%u,%u,%s,%zu,%d,%.0f,%.1f,%.1f,%.1f,%.1f,%" PRIu64 ",%" PRIu64 "\n",
            opt.clients, opt.threads, opt.pipeline, opt.reads, opt.writes, opt.keyspace,
            opt.distribution, opt.data_size, opt.cluster,
            t->seconds > 0 ? (double)t->replies / t->seconds : 0,
            us(hist_quantile(&t->hist, 0.5)), us(hist_quantile(&t->hist, 0.99)),
            us(hist_quantile(&t->hist, 0.999)), us(t->hist.max),
            t->errors + t->failed + t->conn_failures, t->replies);
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    parse_options(argc, argv);
    if (opt.zipf_s > 0 && zipf_setup(opt.zipf_s, opt.keyspace) < 0) {
        fprintf(stderr, "percore-load: no memory for the Zipf table\n");
        return 1;
    }
    if (seed_map_setup() < 0)
        return 1;

    struct sigaction stop = { .sa_handler = on_stop_signal, .sa_flags = SA_RESETHAND };
    sigemptyset(&stop.sa_mask);
    sigaction(SIGINT, &stop, NULL);
    sigaction(SIGTERM, &stop, NULL);

    struct worker *ws = calloc(opt.threads, sizeof(*ws));
    if (ws == NULL) {
        fprintf(stderr, "percore-load: out of memory\n");
        return 1;
    }
    for (unsigned i = 0; i < opt.threads; i++) {
        ws[i].index = i;
        ws[i].remaining = opt.requests / opt.threads + (i < opt.requests % opt.threads);
        if (pthread_create(&ws[i].thread, NULL, worker_run, &ws[i]) != 0) {
            fprintf(stderr, "percore-load: cannot start thread %u\n", i);
            return 1;
        }
    }
    for (unsigned i = 0; i < opt.threads; i++)
        pthread_join(ws[i].thread, NULL);

    struct totals *t = malloc(sizeof(*t));
    if (t == NULL) {
        fprintf(stderr, "percore-load: out of memory\n");
        return 1;
    }
    totals_merge(t, ws);
    report(t);
    int csv_failed = opt.csv != NULL && write_csv(t) < 0;
    int status = t->errors + t->failed + t->conn_failures > 0 || csv_failed ? 1 : 0;
    free(t);
    free(ws);
    free(zipf_cdf);
    return status;
}
