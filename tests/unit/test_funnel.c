/*
 * test_funnel: every hook of call() (server/core/call.h) and the MONITOR
 * feed fire once per client command, wherever the command runs.
 *
 * Real shards in this process (engine.h), 2 and then 4 of them (one child
 * process each: the engine starts once per process).  In-process clients:
 * the writer W on shard 0, the monitor M on shard 1, the subscriber S and
 * the other client O on other shards.  W sends commands whose keys are on
 * its own shard (inline), on one other shard (a remote part), on every shard
 * (split: MSET MGET EXISTS DEL; gathered: SMOVE SUNIONSTORE; RENAME across
 * shards), a fan-out (DBSIZE), a transaction with local, remote and split
 * commands, BLPOPs that block on a key of another shard and of its own,
 * served by O's RPUSH, WATCH with a key O modifies from another shard (EXEC
 * answers null, its commands never run) or keys nobody touches, and, over
 * maxmemory, writes refused inline, remote, split and gathered.  The test
 * keeps the tally of what ran and then checks:
 *   - MONITOR: exactly one line per non-admin command that ran (argv, db and
 *     the client's shard), W's in the order Redis 7.0 writes them (MULTI,
 *     the queued commands, EXEC), once the closing ECHO of W and of O have
 *     arrived (a shard's lines arrive in order, so none can still come);
 *   - INFO commandstats: calls= and rejected_calls= of every command sent
 *     are the tally (one per client command, not per part), no line names a
 *     command not sent, and LATENCY HISTOGRAM has one sample per command --
 *     polled until the aggregator's snapshot has them (a count above the
 *     tally never matches);
 *   - INFO keyspace: the key count the shards publish is DBSIZE's, at once;
 *   - SLOWLOG (slowlog-log-slower-than 0): one entry per command with all
 *     its arguments, wherever its parts ran, EXEC none (Redis's
 *     skip_slowlog) -- compared as multisets of argv;
 *   - keyspace events (CONFIG SET notify-keyspace-events KEA, PSUBSCRIBE
 *     __key*__:*): every event the commands cause, on __keyspace@0__ and on
 *     __keyevent@0__, exactly once (`set` per key of a split MSET, `srem`
 *     and `sadd` of a gathered SMOVE, `rename_from`/`rename_to`, the served
 *     BLPOP's `lpop` and `del`, `expired` for keys set with PX 1) -- a
 *     multiset, once a closing SET on every shard has come.
 * Every wait has a generous deadline
 * (a busy 2-core machine, ASan); nothing is asserted on time.
 *
 * Threading: the test runs on the main thread; everything that touches a
 * client runs on its shard's thread, posted there as an op (one mutex-guarded
 * queue per shard and an eventfd whose read event is on the shard's loop).
 * Replies come back through the sink into the client's inbox, under the same
 * mutex.
 */
#include "percore/admin.h"
#include "percore/config.h"
#include "percore/engine.h"
#include "percore/reply.h"
#include "percore/slot.h"

#include "check.h"

#include <ctype.h>
#include <errno.h>
#include <event2/event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SHARDS 4
#define KEYS_PER_SHARD 32
#define DEADLINE_S 60       /* for any one reply: generous on purpose */
#define STATS_DEADLINE_S 20 /* for the aggregator's snapshot to show every call */
#define MAX_ARGS 16

/* ---------------------------------------------------------------- the harness */

/* an in-process client */
struct tclient {
    int shard;         /* its home */
    struct conn *conn; /* its shard's thread only */
    char *in;          /* reply bytes received, under lock */
    size_t len, cap;   /* of in */
    size_t pos;        /* what the main thread has taken */
    bool open;         /* under lock: conn is set */
    bool closed;       /* under lock: the sink heard the close */
};

/* what the main thread asks of a shard */
enum op_kind {
    OP_OPEN,   /* a client */
    OP_SEND,   /* request bytes to a client */
    OP_CLOSE,  /* a client */
    OP_FINISH, /* the runner frees its event: the shard is about to stop */
};

struct op {
    enum op_kind kind;
    struct tclient *client;
    char *bytes;       /* OP_SEND: a copy */
    size_t len;
    struct op *next;   /* the shard's queue */
};

/* a shard's end of the ops */
struct runner {
    int fd;                 /* eventfd: ops were posted */
    struct event *ev;       /* its read, on the shard's loop */
    struct op *head, *tail; /* under lock */
    bool finished;          /* under lock: OP_FINISH done */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct runner runners[MAX_SHARDS];
static int runners_ready; /* under lock */
static int nshards;

/* keys by owner, found on shard 0 from the slot table */
static char keys[MAX_SHARDS][KEYS_PER_SHARD][16];
static int keys_used[MAX_SHARDS];

static void fatal(const char *what)
{
    fprintf(stderr, "test_funnel (%d shards): %s\n", nshards, what);
    fflush(stderr);
    _exit(2);
}

static struct timespec deadline(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += DEADLINE_S;
    return ts;
}

/* wait on `changed` (lock held); false once the deadline passed */
static bool wait_changed(const struct timespec *until)
{
    return pthread_cond_timedwait(&changed, &lock, until) != ETIMEDOUT;
}

static void on_replies(void *arg, const char *bytes, size_t len)
{
    struct tclient *cl = arg;
    pthread_mutex_lock(&lock);
    if (!bytes) {
        cl->closed = true;
    } else {
        if (cl->len + len > cl->cap) {
            cl->cap = (cl->len + len) * 2;
            cl->in = realloc(cl->in, cl->cap);
        }
        memcpy(cl->in + cl->len, bytes, len);
        cl->len += len;
    }
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void on_post(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct runner *r = arg;
    uint64_t count;
    if (read(fd, &count, sizeof count) != (ssize_t)sizeof count)
        return;
    pthread_mutex_lock(&lock);
    struct op *o = r->head;
    r->head = r->tail = NULL;
    pthread_mutex_unlock(&lock);
    bool finish = false;
    while (o) {
        struct op *next = o->next;
        switch (o->kind) {
        case OP_OPEN:
            o->client->conn = engine_client_open(on_replies, o->client);
            pthread_mutex_lock(&lock);
            o->client->open = true;
            pthread_cond_broadcast(&changed);
            pthread_mutex_unlock(&lock);
            break;
        case OP_SEND: engine_client_send(o->client->conn, o->bytes, o->len); break;
        case OP_CLOSE: engine_client_close(o->client->conn); break;
        case OP_FINISH: finish = true; break;
        }
        free(o->bytes);
        free(o);
        o = next;
    }
    if (finish) { /* the event frees itself here, on its loop's thread (its last use) */
        event_free(r->ev);
        close(r->fd);
        pthread_mutex_lock(&lock);
        r->finished = true;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
    }
}

static void start_runner(int shard, void *arg)
{
    (void)arg;
    struct runner *r = &runners[shard];
    r->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    r->ev = event_new(engine_event_base(), r->fd, EV_READ | EV_PERSIST, on_post, r);
    event_add(r->ev, NULL);
    if (shard == 0) { /* the slot table is the running config's */
        const struct config *cfg = config_current();
        int found[MAX_SHARDS] = {0}, total = 0;
        for (int n = 0; total < nshards * KEYS_PER_SHARD; n++) {
            char k[16];
            int len = snprintf(k, sizeof k, "fk:%d", n);
            int owner = cfg->slot_shard[slot_of_key(k, (size_t)len)];
            if (found[owner] < KEYS_PER_SHARD) {
                memcpy(keys[owner][found[owner]++], k, (size_t)len + 1);
                total++;
            }
        }
    }
    pthread_mutex_lock(&lock);
    runners_ready++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void post(int shard, enum op_kind kind, struct tclient *cl, const char *bytes, size_t len)
{
    struct op *o = calloc(1, sizeof *o);
    o->kind = kind;
    o->client = cl;
    if (bytes) {
        o->bytes = malloc(len);
        memcpy(o->bytes, bytes, len);
        o->len = len;
    }
    struct runner *r = &runners[shard];
    pthread_mutex_lock(&lock);
    if (r->tail)
        r->tail->next = o;
    else
        r->head = o;
    r->tail = o;
    pthread_mutex_unlock(&lock);
    uint64_t one = 1;
    if (write(r->fd, &one, sizeof one) != (ssize_t)sizeof one)
        fatal("eventfd write");
}

static struct tclient *client_open(int shard)
{
    struct tclient *cl = calloc(1, sizeof *cl);
    cl->shard = shard;
    post(shard, OP_OPEN, cl, NULL, 0);
    struct timespec until = deadline();
    pthread_mutex_lock(&lock);
    while (!cl->open)
        if (!wait_changed(&until))
            fatal("a client did not open");
    pthread_mutex_unlock(&lock);
    return cl;
}

static void client_close(struct tclient *cl)
{
    post(cl->shard, OP_CLOSE, cl, NULL, 0);
    struct timespec until = deadline();
    pthread_mutex_lock(&lock);
    while (!cl->closed)
        if (!wait_changed(&until))
            fatal("a client did not close");
    pthread_mutex_unlock(&lock);
    free(cl->in);
    free(cl);
}

/* the next whole reply of cl (malloc'd, NUL-terminated), waiting for it */
static char *client_next(struct tclient *cl, size_t *len)
{
    struct timespec until = deadline();
    pthread_mutex_lock(&lock);
    size_t n;
    while ((n = cl->len > cl->pos ? reply_value_len(cl->in + cl->pos, cl->len - cl->pos) : 0) == 0) {
        if (cl->closed || !wait_changed(&until)) {
            fprintf(stderr, "client of shard %d: %zu unread bytes: %.*s\n", cl->shard, cl->len - cl->pos,
                    (int)(cl->len - cl->pos > 300 ? 300 : cl->len - cl->pos), cl->in + cl->pos);
            fatal(cl->closed ? "a client was closed" : "no reply before the deadline");
        }
    }
    char *r = malloc(n + 1);
    memcpy(r, cl->in + cl->pos, n);
    r[n] = '\0';
    cl->pos += n;
    pthread_mutex_unlock(&lock);
    *len = n;
    return r;
}

/* nothing unread on cl (a reply too many would show here) */
static size_t client_unread(struct tclient *cl)
{
    pthread_mutex_lock(&lock);
    size_t n = cl->len - cl->pos;
    pthread_mutex_unlock(&lock);
    return n;
}

static void send_argv(struct tclient *cl, int argc, const char *const *argv)
{
    char buf[4096];
    size_t n = (size_t)snprintf(buf, sizeof buf, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    if (n >= sizeof buf)
        fatal("command too long");
    post(cl->shard, OP_SEND, cl, buf, n);
}

/* the next reply is `want` */
static void expect_reply(struct tclient *cl, const char *want, const char *what)
{
    size_t len;
    char *got = client_next(cl, &len);
    check_count++;
    if (len != strlen(want) || memcmp(got, want, len) != 0) {
        check_failures++;
        fprintf(stderr, "test_funnel (%d shards): %s: want %s, got %s\n", nshards, what, want, got);
    }
    free(got);
}

/* ---------------------------------------------------------------- replies */

/* a RESP2 value, pointing into the bytes it was parsed from */
struct val {
    char type;          /* + - : $ * */
    long long n;        /* ':' the integer, '*' / '$' the count (-1 null) */
    const char *s;      /* + - $: the text */
    size_t len;         /* of s */
    struct val *elem;   /* '*': n elements */
};

/* one whole RESP2 value at p (reply_value_len said so); returns its length */
static size_t val_parse(const char *p, struct val *v)
{
    const char *nl = strstr(p, "\r\n");
    size_t line = (size_t)(nl - p) + 2;
    memset(v, 0, sizeof *v);
    v->type = p[0];
    switch (p[0]) {
    case '+':
    case '-':
        v->s = p + 1;
        v->len = line - 3;
        return line;
    case ':': v->n = strtoll(p + 1, NULL, 10); return line;
    case '$':
        v->n = strtoll(p + 1, NULL, 10);
        if (v->n < 0)
            return line;
        v->s = p + line;
        v->len = (size_t)v->n;
        return line + v->len + 2;
    case '*': {
        v->n = strtoll(p + 1, NULL, 10);
        size_t at = line;
        if (v->n > 0)
            v->elem = calloc((size_t)v->n, sizeof *v->elem);
        for (long long i = 0; i < v->n; i++)
            at += val_parse(p + at, &v->elem[i]);
        return at;
    }
    default: fatal("unexpected reply type"); return 0;
    }
}

static void val_free(struct val *v)
{
    for (long long i = 0; v->type == '*' && i < v->n; i++)
        val_free(&v->elem[i]);
    free(v->elem);
}

/* ---------------------------------------------------------------- multisets of strings */

struct strs {
    char **v;           /* malloc'd strings */
    int n, cap;
};

static void strs_add(struct strs *s, const char *str)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->v = realloc(s->v, (size_t)s->cap * sizeof *s->v);
    }
    s->v[s->n++] = strdup(str);
}

static void strs_clear(struct strs *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

static int strs_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* want and got hold the same strings as often (each is sorted); says the differences */
static void check_same_multiset(struct strs *want, struct strs *got, const char *what)
{
    qsort(want->v, (size_t)want->n, sizeof *want->v, strs_cmp);
    qsort(got->v, (size_t)got->n, sizeof *got->v, strs_cmp);
    int i = 0, j = 0, diffs = 0;
    while (i < want->n || j < got->n) {
        int c = i == want->n ? 1 : j == got->n ? -1 : strcmp(want->v[i], got->v[j]);
        if (c == 0) {
            i++;
            j++;
            continue;
        }
        if (diffs++ < 20)
            fprintf(stderr, "test_funnel (%d shards): %s: %s %s\n", nshards, what, c < 0 ? "missing" : "extra",
                    c < 0 ? want->v[i] : got->v[j]);
        if (c < 0)
            i++;
        else
            j++;
    }
    check_count++;
    if (diffs) {
        check_failures++;
        fprintf(stderr, "test_funnel (%d shards): %s: %d differences (%d wanted, %d got)\n", nshards, what, diffs,
                want->n, got->n);
    }
}

/* ---------------------------------------------------------------- the tally of what ran */

struct counted {
    char name[32];      /* as INFO commandstats names it: "set", "config|set" */
    long long calls;
    long long rejected; /* refused before they ran (maxmemory) */
    long long samples;  /* latency samples: one per command, as the slowlog's entries */
};

static struct counted counts[64];
static int ncounts;
static struct strs monitor_want;   /* lines without their time: `[0 engine:0] "SET" "k" "v"` */
static struct strs monitor_order;  /* W's, in the order they must arrive */
static struct strs slowlog_want;   /* argv joined by spaces */
static struct strs events_want;    /* keyspace events: "channel message" */
static struct tclient *W;          /* the writer, on shard 0 */

static struct counted *counted_of(const char *name)
{
    for (int i = 0; i < ncounts; i++)
        if (strcmp(counts[i].name, name) == 0)
            return &counts[i];
    if (ncounts == (int)(sizeof counts / sizeof counts[0]))
        fatal("too many command names");
    snprintf(counts[ncounts].name, sizeof counts[ncounts].name, "%s", name);
    return &counts[ncounts++];
}

/* a command that ran in one place and is neither shown nor compared in the slowlog */
static void count_call(const char *name)
{
    struct counted *c = counted_of(name);
    c->calls++;
    c->samples++;
}

static void lower(char *dst, const char *src, size_t cap)
{
    size_t i = 0;
    for (; src[i] && i + 1 < cap; i++)
        dst[i] = (char)tolower((unsigned char)src[i]);
    dst[i] = '\0';
}

/* a command that ran caused keyspace event `ev` on key (on __keyspace@0__ and __keyevent@0__) */
static void event(const char *ev, const char *key)
{
    char line[128];
    snprintf(line, sizeof line, "__keyspace@0__:%s %s", key, ev);
    strs_add(&events_want, line);
    snprintf(line, sizeof line, "__keyevent@0__:%s %s", ev, key);
    strs_add(&events_want, line);
}

/* the next unused key owned by shard s */
static const char *key_of(int s)
{
    if (keys_used[s] == KEYS_PER_SHARD)
        fatal("out of keys");
    return keys[s][keys_used[s]++];
}

/* the commands whose slowlog entries are not compared: the test's own questions and settings */
static bool slowlog_ignored(const char *name)
{
    return strcmp(name, "info") == 0 || strcmp(name, "slowlog") == 0 || strcmp(name, "config") == 0;
}

enum {
    F_UNSHOWN = 1 << 0,  /* no MONITOR line: an admin command, or sent before the monitor started */
    F_UNLOGGED = 1 << 1, /* no slowlog entry: Redis's skip_slowlog (EXEC) */
};

/*
 * cl's command argv ran once: one call (under `stat`, NULL: its lower-case
 * name), one MONITOR line, one latency sample and one slowlog entry with
 * all its arguments, wherever its parts ran (as Redis records a command
 * once: the parts' time goes home, call.h's CALL_TIME_HOME).
 */
static void ran(struct tclient *cl, int flags, const char *stat, int argc, const char *const *argv)
{
    char name[32];
    lower(name, argv[0], sizeof name);
    struct counted *c = counted_of(stat ? stat : name);
    c->calls++;
    bool logged = !(flags & F_UNLOGGED) && !slowlog_ignored(name);
    char line[2048];
    size_t n;
    if (!(flags & F_UNSHOWN)) {
        n = (size_t)snprintf(line, sizeof line, "[0 engine:%d]", cl->shard);
        for (int i = 0; i < argc; i++)
            n += (size_t)snprintf(line + n, sizeof line - n, " \"%s\"", argv[i]);
        strs_add(&monitor_want, line);
        if (cl == W)
            strs_add(&monitor_order, line);
    }
    n = 0;
    for (int i = 0; i < argc; i++)
        n += (size_t)snprintf(line + n, sizeof line - n, "%s%s", i ? " " : "", argv[i]);
    c->samples++;
    if (logged)
        strs_add(&slowlog_want, line);
}

#define ARGV(...) ((const char *const[]){__VA_ARGS__})
#define NARGS(...) ((int)(sizeof(ARGV(__VA_ARGS__)) / sizeof(const char *)))

/* cl runs the command, which answers `want`; tallied as ran() says */
static void run_cmd(struct tclient *cl, const char *want, int flags, const char *stat, int argc,
                    const char *const *argv)
{
    send_argv(cl, argc, argv);
    expect_reply(cl, want, argv[0]);
    ran(cl, flags, stat, argc, argv);
}
#define RUN(cl, want, ...) run_cmd(cl, want, 0, NULL, NARGS(__VA_ARGS__), ARGV(__VA_ARGS__))
/* an admin command (CONFIG SET, SLOWLOG RESET): counted under stat, not shown by MONITOR */
#define ADMIN(cl, want, stat, ...) run_cmd(cl, want, F_UNSHOWN, stat, NARGS(__VA_ARGS__), ARGV(__VA_ARGS__))

/* W's transaction: the commands queued since MULTI (they run, and are tallied, at EXEC) */
struct queued {
    int argc;
    const char *argv[MAX_ARGS]; /* static strings and keys */
};
static struct queued txq[16];
static int ntxq;

static void queue_cmd(int argc, const char *const *argv)
{
    if (ntxq == (int)(sizeof txq / sizeof txq[0]) || argc > MAX_ARGS)
        fatal("a transaction too long");
    send_argv(W, argc, argv);
    expect_reply(W, "+QUEUED\r\n", argv[0]);
    txq[ntxq].argc = argc;
    memcpy(txq[ntxq].argv, argv, (size_t)argc * sizeof *argv);
    ntxq++;
}
#define QUEUE(...) queue_cmd(NARGS(__VA_ARGS__), ARGV(__VA_ARGS__))

/* W's EXEC answers want; `runs`: its queued commands ran (else WATCH made it null) */
static void exec_cmd(const char *want, bool runs)
{
    send_argv(W, 1, ARGV("EXEC"));
    expect_reply(W, want, "EXEC");
    for (int i = 0; runs && i < ntxq; i++)
        ran(W, 0, NULL, txq[i].argc, txq[i].argv);
    ntxq = 0;
    ran(W, F_UNLOGGED, NULL, 1, ARGV("EXEC"));
}

/* ---------------------------------------------------------------- INFO */

/* "INFO section" through cl, tallied: the reply, malloc'd */
static char *info(struct tclient *cl, const char *section)
{
    send_argv(cl, 2, ARGV("INFO", section));
    size_t len;
    char *r = client_next(cl, &len);
    ran(cl, 0, NULL, 2, ARGV("INFO", section));
    if (r[0] != '$')
        fatal("INFO did not answer a bulk string");
    return r;
}

/* the number after `field` in text, -1 if absent */
static long long info_field(const char *text, const char *field)
{
    const char *p = strstr(text, field);
    return p ? strtoll(p + strlen(field), NULL, 10) : -1;
}

static void sleep_ms(int ms) { usleep((useconds_t)ms * 1000); }

/* INFO clients through cl until the aggregator says n clients are blocked */
static void wait_blocked(struct tclient *cl, long long n)
{
    for (int tries = 0;; tries++) {
        char *text = info(cl, "clients");
        long long got = info_field(text, "blocked_clients:");
        free(text);
        if (got == n)
            return;
        if (tries > DEADLINE_S * 100)
            fatal("blocked_clients never reached its count");
        sleep_ms(10);
    }
}

/* ---------------------------------------------------------------- the commands */

static struct tclient *M, *S, *O; /* the monitor, the subscriber, the other client */

static void setup(void)
{
    ADMIN(W, "+OK\r\n", "config|set", "CONFIG", "SET", "slowlog-log-slower-than", "0", "slowlog-max-len", "100000",
          "notify-keyspace-events", "KEA");
    send_argv(S, 2, ARGV("PSUBSCRIBE", "__key*__:*"));
    expect_reply(S, "*3\r\n$10\r\npsubscribe\r\n$10\r\n__key*__:*\r\n:1\r\n", "PSUBSCRIBE");
    count_call("psubscribe");
    send_argv(M, 1, ARGV("MONITOR"));
    expect_reply(M, "+OK\r\n", "MONITOR");
    count_call("monitor");
    ADMIN(W, "+OK\r\n", "slowlog|reset", "SLOWLOG", "RESET");
}

/* inline, remote, split, gathered and fanned-out commands of W */
static void plain_commands(void)
{
    int last = nshards - 1;
    RUN(W, ":0\r\n", "DBSIZE");
    const char *a = key_of(0), *b = key_of(last), *c = key_of(1);
    RUN(W, "+OK\r\n", "SET", a, "v-a");
    event("set", a);
    RUN(W, "$3\r\nv-a\r\n", "GET", a);
    RUN(W, "+OK\r\n", "SET", b, "v-b");
    event("set", b);
    RUN(W, "$3\r\nv-b\r\n", "GET", b);
    RUN(W, ":1\r\n", "INCR", c);
    event("incrby", c);
    RUN(W, "$5\r\nhello\r\n", "ECHO", "hello");

    const char *m[MAX_SHARDS];
    for (int s = 0; s < nshards; s++)
        m[s] = key_of(s);
    if (nshards == 2) {
        RUN(W, "+OK\r\n", "MSET", m[0], "x0", m[1], "x1");
        RUN(W, "*2\r\n$2\r\nx0\r\n$2\r\nx1\r\n", "MGET", m[0], m[1]);
        RUN(W, ":2\r\n", "EXISTS", m[1], m[0]);
        RUN(W, ":2\r\n", "DEL", m[0], m[1]);
    } else {
        RUN(W, "+OK\r\n", "MSET", m[0], "x0", m[1], "x1", m[2], "x2", m[3], "x3");
        RUN(W, "*4\r\n$2\r\nx0\r\n$2\r\nx1\r\n$2\r\nx2\r\n$2\r\nx3\r\n", "MGET", m[0], m[1], m[2], m[3]);
        RUN(W, ":3\r\n", "EXISTS", m[3], m[0], m[1]);
        RUN(W, ":4\r\n", "DEL", m[0], m[1], m[2], m[3]);
    }
    for (int s = 0; s < nshards; s++) {
        event("set", m[s]);
        event("del", m[s]);
    }

    const char *s0 = key_of(0), *s1 = key_of(1), *dst = key_of(last);
    RUN(W, ":2\r\n", "SADD", s0, "x", "y");
    event("sadd", s0);
    RUN(W, ":1\r\n", "SADD", s1, "z");
    event("sadd", s1);
    RUN(W, ":1\r\n", "SMOVE", s0, s1, "x");
    event("srem", s0);
    event("sadd", s1);
    RUN(W, ":3\r\n", "SUNIONSTORE", dst, s0, s1);
    event("sunionstore", dst);
    RUN(W, ":1\r\n", "SCARD", s0);
    const char *to = key_of(0);
    run_cmd(W, "+OK\r\n", 0, NULL, 3, ARGV("RENAME", b, to));
    event("rename_from", b);
    event("rename_to", to);
}

/* a transaction of local, remote and split commands */
static void transaction(void)
{
    const char *a = key_of(0), *b = key_of(1), *c = key_of(0), *d = key_of(nshards - 1);
    RUN(W, "+OK\r\n", "MULTI");
    QUEUE("SET", a, "t-a");
    QUEUE("INCR", b);
    QUEUE("MSET", c, "t-c", d, "t-d");
    QUEUE("GET", d);
    exec_cmd("*4\r\n+OK\r\n:1\r\n+OK\r\n$3\r\nt-d\r\n", true);
    event("set", a);
    event("incrby", b);
    event("set", c);
    event("set", d);
}

/* W blocks on a key of shard `on`; O's RPUSH serves it */
static void blocked_pop(int on)
{
    const char *list = key_of(on);
    send_argv(W, 3, ARGV("BLPOP", list, "0"));
    wait_blocked(O, 1);
    check_count++;
    if (client_unread(W)) {
        check_failures++;
        fprintf(stderr, "test_funnel (%d shards): BLPOP answered before the push\n", nshards);
    }
    RUN(O, ":1\r\n", "RPUSH", list, "e");
    event("rpush", list);
    event("lpop", list); /* the push served W: popped, and the list emptied */
    event("del", list);
    char want[64];
    snprintf(want, sizeof want, "*2\r\n$%zu\r\n%s\r\n$1\r\ne\r\n", strlen(list), list);
    expect_reply(W, want, "BLPOP");
    ran(W, 0, NULL, 3, ARGV("BLPOP", list, "0"));
    wait_blocked(O, 0);
}

/* WATCH: a key O modifies on another shard makes EXEC null; untouched keys let it run */
static void watches(void)
{
    const char *own = key_of(0), *remote = key_of(1), *untouched = key_of(0), *neighbour = key_of(1);
    /* a watched key of another shard, written by O */
    RUN(W, "+OK\r\n", "WATCH", own, remote);
    RUN(O, "+OK\r\n", "SET", remote, "o");
    event("set", remote);
    RUN(W, "+OK\r\n", "MULTI");
    QUEUE("SET", own, "never");
    exec_cmd("*-1\r\n", false);
    RUN(W, "$-1\r\n", "GET", own);
    /* a watched key of W's own shard, written by O from its shard */
    RUN(W, "+OK\r\n", "WATCH", own);
    RUN(O, ":1\r\n", "INCR", own);
    event("incrby", own);
    RUN(W, "+OK\r\n", "MULTI");
    QUEUE("SET", neighbour, "never");
    exec_cmd("*-1\r\n", false);
    /* nothing watched is touched (O writes a key next to them) */
    RUN(W, "+OK\r\n", "WATCH", untouched, neighbour);
    const char *next_door = key_of(1);
    RUN(O, "+OK\r\n", "SET", next_door, "o");
    event("set", next_door);
    RUN(W, "+OK\r\n", "MULTI");
    QUEUE("SET", untouched, "yes");
    QUEUE("GET", neighbour);
    exec_cmd("*2\r\n+OK\r\n$-1\r\n", true);
    event("set", untouched);
    RUN(W, "$3\r\nyes\r\n", "GET", untouched);
}

/* ---------------------------------------------------------------- the checks */

/* M's lines until W's and O's closing ECHO have come: lines as in monitor_want */
static void check_monitor(void)
{
    RUN(W, "$5\r\nw-end\r\n", "ECHO", "w-end");
    RUN(O, "$5\r\no-end\r\n", "ECHO", "o-end");
    char w_end[64], o_end[64];
    snprintf(w_end, sizeof w_end, "[0 engine:%d] \"ECHO\" \"w-end\"", W->shard);
    snprintf(o_end, sizeof o_end, "[0 engine:%d] \"ECHO\" \"o-end\"", O->shard);
    struct strs got = {0}, got_w = {0};
    bool seen_w = false, seen_o = false;
    while (!seen_w || !seen_o) {
        size_t len;
        char *line = client_next(M, &len);
        const char *at = strchr(line, '[');
        if (line[0] != '+' || !at || len < 2)
            fatal("a monitor line without its [db addr]");
        line[len - 2] = '\0';
        strs_add(&got, at);
        char prefix[32];
        snprintf(prefix, sizeof prefix, "[0 engine:%d]", W->shard);
        if (strncmp(at, prefix, strlen(prefix)) == 0)
            strs_add(&got_w, at);
        seen_w |= strcmp(at, w_end) == 0;
        seen_o |= strcmp(at, o_end) == 0;
        free(line);
    }
    /* W's lines in order (before the multiset check sorts them) */
    check_count++;
    bool same = got_w.n == monitor_order.n;
    for (int i = 0; same && i < got_w.n; i++)
        same = strcmp(got_w.v[i], monitor_order.v[i]) == 0;
    if (!same) {
        check_failures++;
        fprintf(stderr, "test_funnel (%d shards): W's MONITOR lines out of order:\n", nshards);
        for (int i = 0; i < got_w.n || i < monitor_order.n; i++)
            fprintf(stderr, "  want %-60s got %s\n", i < monitor_order.n ? monitor_order.v[i] : "-",
                    i < got_w.n ? got_w.v[i] : "-");
    }
    check_same_multiset(&monitor_want, &got, "MONITOR line");
    strs_clear(&got);
    strs_clear(&got_w);
}

/* the probes themselves: each is counted once it answered, so the figures it reads lag one behind */
static bool lagging(const char *name)
{
    return strcmp(name, "info") == 0 || strcmp(name, "latency|histogram") == 0;
}

/* LATENCY HISTOGRAM through W: each tallied command's latency samples (its "calls") into got[] */
static void latency_samples(long long *got)
{
    send_argv(W, 2, ARGV("LATENCY", "HISTOGRAM"));
    size_t len;
    char *raw = client_next(W, &len);
    ran(W, F_UNSHOWN, "latency|histogram", 2, ARGV("LATENCY", "HISTOGRAM"));
    struct val v;
    val_parse(raw, &v);
    if (v.type != '*')
        fatal("LATENCY HISTOGRAM did not answer an array");
    for (int i = 0; i < ncounts; i++)
        got[i] = 0;
    for (long long j = 0; j + 1 < v.n; j += 2) {
        const struct val *name = &v.elem[j], *detail = &v.elem[j + 1];
        for (int i = 0; i < ncounts; i++)
            if (name->len == strlen(counts[i].name) && memcmp(name->s, counts[i].name, name->len) == 0 &&
                detail->n >= 2)
                got[i] = detail->elem[1].n;
    }
    val_free(&v);
    free(raw);
}

/*
 * The tallied commands whose calls=, rejected_calls= (INFO commandstats text)
 * or latency samples differ from the tally, and the commands INFO names that
 * were not sent (a container counted besides its subcommand), said when `say`.
 */
static int stats_wrong(const char *text, const long long *samples, bool say)
{
    int wrong = 0;
    for (const char *p = strstr(text, "cmdstat_"); p; p = strstr(p + 1, "\ncmdstat_")) {
        p += *p == '\n';
        const char *name = p + 8, *colon = strchr(name, ':');
        bool known = false;
        for (int i = 0; colon && i < ncounts; i++)
            known |= strlen(counts[i].name) == (size_t)(colon - name) &&
                     memcmp(counts[i].name, name, (size_t)(colon - name)) == 0;
        if (!known) {
            wrong++;
            if (say)
                fprintf(stderr, "test_funnel (%d shards): a line for a command not sent: %.*s\n", nshards,
                        (int)(strcspn(p, "\r\n")), p);
        }
    }
    for (int i = 0; i < ncounts; i++) {
        const struct counted *c = &counts[i];
        char field[128];
        snprintf(field, sizeof field, "cmdstat_%.32s:calls=", c->name);
        long long calls = info_field(text, field);
        const char *line = strstr(text, field);
        const char *rej = line ? strstr(line, ",rejected_calls=") : NULL;
        long long rejected = rej ? strtoll(rej + 16, NULL, 10) : -1;
        if (lagging(c->name) ||
            (calls == c->calls && rejected == c->rejected && samples[i] == c->samples))
            continue;
        if (calls == -1 && c->calls == 0 && c->rejected == 0 && samples[i] == 0)
            continue; /* never ran: no line */
        wrong++;
        if (say)
            fprintf(stderr,
                    "test_funnel (%d shards): %s: calls=%lld rejected_calls=%lld latency samples %lld, want %lld %lld "
                    "%lld\n",
                    nshards, c->name, calls, rejected, samples[i], c->calls, c->rejected, c->samples);
    }
    return wrong;
}

/* INFO commandstats and LATENCY HISTOGRAM until they agree with the tally (the snapshot lags behind) */
static void check_commandstats(void)
{
    long long samples[sizeof counts / sizeof counts[0]];
    char *text = NULL;
    for (int tries = 0;; tries++) {
        free(text);
        text = info(W, "commandstats");
        latency_samples(samples);
        if (!stats_wrong(text, samples, false) || tries >= STATS_DEADLINE_S * 20)
            break;
        sleep_ms(50);
    }
    check_count++;
    if (stats_wrong(text, samples, true))
        check_failures++;
    free(text);
}

/* DBSIZE (every store's count) and INFO keyspace (the counts the shards publish) agree at once */
static void check_key_counts(void)
{
    send_argv(W, 1, ARGV("DBSIZE"));
    size_t len;
    char *r = client_next(W, &len);
    ran(W, 0, NULL, 1, ARGV("DBSIZE"));
    long long dbsize = r[0] == ':' ? strtoll(r + 1, NULL, 10) : -1;
    free(r);
    char *text = info(W, "keyspace");
    char want[64];
    snprintf(want, sizeof want, "db0:keys=%lld,expires=0,", dbsize);
    check_count++;
    if (dbsize <= 0 || !strstr(text, want)) {
        check_failures++;
        fprintf(stderr, "test_funnel (%d shards): DBSIZE %lld, INFO keyspace: %s\n", nshards, dbsize, text);
    }
    free(text);
}

/* cl's command is refused before it runs (maxmemory): a rejected call, nothing else */
static void refuse_cmd(struct tclient *cl, int argc, const char *const *argv)
{
    send_argv(cl, argc, argv);
    expect_reply(cl, "-OOM command not allowed when used memory > 'maxmemory'.\r\n", argv[0]);
    char name[32];
    lower(name, argv[0], sizeof name);
    counted_of(name)->rejected++;
}
#define REFUSE(cl, ...) refuse_cmd(cl, NARGS(__VA_ARGS__), ARGV(__VA_ARGS__))

/* over maxmemory on every shard (noeviction): writes refused inline, remote, split and gathered */
static void refused_commands(void)
{
    const char *k[MAX_SHARDS];
    for (int s = 0; s < nshards; s++) /* every shard holds a key: over its share of 1 byte */
        k[s] = key_of(s);
    if (nshards == 2)
        RUN(W, "+OK\r\n", "MSET", k[0], "b", k[1], "b");
    else
        RUN(W, "+OK\r\n", "MSET", k[0], "b", k[1], "b", k[2], "b", k[3], "b");
    for (int s = 0; s < nshards; s++)
        event("set", k[s]);
    ADMIN(W, "+OK\r\n", "config|set", "CONFIG", "SET", "maxmemory", "1");
    REFUSE(W, "SET", key_of(0), "x");
    REFUSE(W, "SET", key_of(nshards - 1), "x");
    REFUSE(W, "MSET", key_of(0), "x", key_of(1), "x");
    REFUSE(W, "SUNIONSTORE", key_of(0), k[0], k[1]);
    REFUSE(O, "SET", key_of(0), "x");
    RUN(W, "$1\r\nb\r\n", "GET", k[1]);
    ADMIN(W, "+OK\r\n", "config|set", "CONFIG", "SET", "maxmemory", "0");
}

/* SLOWLOG GET -1: the argv of every entry, but the test's own questions, as slowlog_want */
static void check_slowlog(void)
{
    send_argv(W, 3, ARGV("SLOWLOG", "GET", "-1"));
    size_t len;
    char *raw = client_next(W, &len);
    struct val v;
    val_parse(raw, &v);
    if (v.type != '*')
        fatal("SLOWLOG GET did not answer an array");
    struct strs got = {0};
    for (long long i = 0; i < v.n; i++) {
        const struct val *argv = &v.elem[i].elem[3];
        char line[2048], name[32];
        size_t n = 0;
        for (long long j = 0; j < argv->n; j++)
            n += (size_t)snprintf(line + n, sizeof line - n, "%s%.*s", j ? " " : "", (int)argv->elem[j].len,
                                  argv->elem[j].s);
        snprintf(name, sizeof name, "%.*s", (int)argv->elem[0].len, argv->elem[0].s);
        lower(name, name, sizeof name);
        if (!slowlog_ignored(name))
            strs_add(&got, line);
    }
    val_free(&v);
    free(raw);
    check_same_multiset(&slowlog_want, &got, "SLOWLOG entry");
    strs_clear(&got);
}

/*
 * S's next event message: "pmessage" "__key*__:*" channel message, as "channel message".
 */
static char *next_event(void)
{
    size_t len;
    char *raw = client_next(S, &len);
    struct val v;
    val_parse(raw, &v);
    if (v.type != '*' || v.n != 4 || v.elem[0].len != 8 || memcmp(v.elem[0].s, "pmessage", 8) != 0)
        fatal("the subscriber got something other than a pmessage");
    char *ev = malloc(v.elem[2].len + v.elem[3].len + 2);
    sprintf(ev, "%.*s %.*s", (int)v.elem[2].len, v.elem[2].s, (int)v.elem[3].len, v.elem[3].s);
    val_free(&v);
    free(raw);
    return ev;
}

/* W sets a key of shard s with PX 1 and reads it until it is gone (it expired) */
static void expire_one(int s)
{
    const char *k = key_of(s);
    RUN(W, "+OK\r\n", "SET", k, "gone", "PX", "1");
    event("set", k);
    event("expire", k);
    event("expired", k);
    for (int tries = 0;; tries++) { /* the read that finds it expired deletes it, unless the cycle did */
        send_argv(W, 2, ARGV("EXISTS", k));
        size_t len;
        char *r = client_next(W, &len);
        ran(W, 0, NULL, 2, ARGV("EXISTS", k));
        bool gone = strcmp(r, ":0\r\n") == 0;
        free(r);
        if (gone)
            return;
        if (tries > DEADLINE_S * 100)
            fatal("a key set with PX 1 did not expire");
        sleep_ms(2);
    }
}

/*
 * Keyspace events: a key of every shard expires (`expired`, from the
 * store), then a client on every shard sets a key of its shard, the last
 * events that shard publishes.  Once S has those, every event published
 * before them has come (a shard's events reach S in order, and before the
 * replies of the command that caused them): S's must be the events the
 * commands caused, each once.
 */
static void check_events(void)
{
    for (int s = 0; s < nshards; s++)
        expire_one(s);
    struct strs closing = {0}, got = {0};
    for (int s = 0; s < nshards; s++) {
        struct tclient *last = client_open(s);
        const char *k = key_of(s);
        RUN(last, "+OK\r\n", "SET", k, "last");
        event("set", k);
        char line[64];
        snprintf(line, sizeof line, "__keyevent@0__:set %s", k);
        strs_add(&closing, line);
        client_close(last);
    }
    for (int pending = closing.n; pending;) {
        char *ev = next_event();
        for (int i = 0; i < closing.n; i++)
            if (closing.v[i][0] && strcmp(closing.v[i], ev) == 0) {
                closing.v[i][0] = '\0'; /* come */
                pending--;
            }
        strs_add(&got, ev);
        free(ev);
    }
    check_same_multiset(&events_want, &got, "keyspace event");
    strs_clear(&closing);
    strs_clear(&got);
}

/* ---------------------------------------------------------------- a run */

static int run(int shards)
{
    nshards = shards;
    static const char *const quiet[] = {"--loglevel", "warning", "--logfile", "/dev/stderr", NULL};
    admin_setup();
    if (engine_start("test_funnel", shards, quiet, start_runner, NULL) < 0)
        return 2;
    struct timespec until = deadline();
    pthread_mutex_lock(&lock);
    while (runners_ready < shards)
        if (!wait_changed(&until))
            fatal("the shards did not start");
    pthread_mutex_unlock(&lock);

    W = client_open(0);
    M = client_open(1);
    S = client_open(shards > 2 ? 2 : 1);
    O = client_open(shards - 1);
    setup();
    plain_commands();
    transaction();
    blocked_pop(1);
    blocked_pop(0);
    watches();
    check_monitor();
    refused_commands();
    check_key_counts();
    check_commandstats();
    check_slowlog();
    check_events();
    check_count++;
    if (client_unread(W) || client_unread(O)) {
        check_failures++;
        fprintf(stderr, "test_funnel (%d shards): replies nobody asked for\n", nshards);
    }

    struct tclient *all[] = {W, M, S, O};
    for (int i = 0; i < 4; i++)
        client_close(all[i]);
    for (int s = 0; s < shards; s++)
        post(s, OP_FINISH, NULL, NULL, 0);
    until = deadline();
    pthread_mutex_lock(&lock);
    for (int s = 0; s < shards; s++)
        while (!runners[s].finished)
            if (!wait_changed(&until))
                fatal("a runner did not finish");
    pthread_mutex_unlock(&lock);
    engine_stop();
    strs_clear(&monitor_want);
    strs_clear(&monitor_order);
    strs_clear(&slowlog_want);
    strs_clear(&events_want);
    char name[48];
    snprintf(name, sizeof name, "test_funnel (%d shards)", shards);
    return check_done(name);
}

/* each shard count in a process of its own: the engine starts once per process */
int main(void)
{
    static const int shard_counts[] = {2, 4};
    int failed = 0;
    for (size_t i = 0; i < sizeof shard_counts / sizeof shard_counts[0]; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
            return 2;
        if (pid == 0)
            exit(run(shard_counts[i])); /* exit: stdout flushed, and ASan's leak check runs */
        int status;
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed = 1;
    }
    return failed;
}
