/*
 * fuzz_harness: what the libFuzzer targets over the whole command path
 * (fuzz_engine, fuzz_script) share: FUZZ_SHARDS real shard threads in one
 * process, driven through engine.h, and a request stream run on a fresh
 * client of one of them.
 *
 * A stream runs on a fresh in-process client: its pieces (fuzz_input.h's
 * control byte) are sent one loop turn apart (as reads would arrive), and
 * it is finished when the server closes the client (a protocol error, QUIT,
 * CLIENT KILL, an output limit) or, every piece sent, the client is idle
 * (engine_client_idle: all it could parse is answered, looked at after each
 * batch of replies and every CHECK_US while it is not: some work ends with no
 * reply, as EXEC's release of its keys' locks); the harness then closes it.
 * A client found blocked for BLOCKED_MS (BLPOP k 0 with nothing to pop: the
 * scripts the seeds come from filled their keys in earlier pipelines; theirs
 * time out within 0.1 s) is closed as it waits, as a client that gives up;
 * any other client that never comes to idle is a hang (libFuzzer's
 * -timeout).  Every batch of replies the sink receives must be whole,
 * well-formed RESP2/RESP3 values, and a client closed idle must owe none of
 * a reply's: an aggregate's head may come in one batch and its elements in
 * later ones (EXEC's array is flushed before the queued commands run on
 * other shards; on a socket the bytes are the same as Redis's).
 *
 * Nothing here can end or wedge the process or touch the filesystem: the
 * engine runs without a config file (CONFIG REWRITE only answers an error),
 * the settable config keys hold no paths (logfile, dir and pidfile are
 * start-up only), and logging goes to /dev/null.  The targets keep SHUTDOWN
 * out of what they send.
 *
 * What a stream leaves behind, and what is reset.  After every stream each
 * shard ends the CLIENT PAUSE the stream may have left (it outlives its
 * client) without a command, which a pause of ALL would hold as any
 * client's (engine_unpause, a job on every shard); then an authenticated
 * harness client sends FLUSHALL (every database, SWAPDB's effects included), SLOWLOG RESET,
 * SCRIPT FLUSH and FUNCTION FLUSH, and, when the stream may have changed the
 * config, a CONFIG SET of every runtime-settable key back to its start-up
 * value (found at start-up by setting each to its own value); each must
 * answer +OK.  Connection state (SELECT, HELLO 3, names, AUTH) dies with the
 * client.  Kept across inputs, on purpose: INFO's counters (CONFIG RESETSTAT
 * merges every histogram, milliseconds per input under ASan, while counters
 * only change the numbers INFO prints), the shards' random state (SPOP,
 * RANDOMKEY), the clock (expiry), connection ids and the allocator's history
 * -- a crash therefore replays from its input alone in practice, not with
 * certainty.
 *
 * Limits: proto-max-bulk-len and client-query-buffer-limit at their floor
 * (1 MB) and a hard client-output-buffer-limit, so that legal giant
 * requests and replies stay far below libFuzzer's -rss_limit_mb.
 *
 * Threading: the target's thread posts a job to the home shard (a
 * mutex-guarded pointer and the runner's eventfd, whose read event the
 * driver registered on the shard's loop) and waits on a condition variable
 * until the shard says the job is done.  Everything that touches a client
 * runs on the shard thread.  The shards run until the process exits.
 */
#include "percore/admin.h"
#include "percore/command.h"
#include "percore/config.h"
#include "percore/conn.h"
#include "percore/engine.h"
#include "percore/shard.h"
#include "percore/util.h"

#include "fuzz_harness.h"
#include "fuzz_input.h"

#include <errno.h>
#include <event2/event.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>


#define CHECK_US 1000 /* how often a client that is not idle, every piece sent, is looked at again */
#define BLOCKED_MS 250  /* how long a client may stay blocked before it is closed */

/* one request stream, run on a fresh client of a shard */
struct job {
    const char *bytes;
    size_t len;
    uint8_t control;        /* fuzz_input.h: how the stream is cut into pieces */
    bool admin;             /* the harness's own: authenticated whatever requirepass says */
    bool unpause;           /* no client: the shard ends the pause in force (engine_unpause) */
    char *replies;          /* admin jobs: every reply byte (malloc'd, the caller frees) */
    size_t replies_len;
    /* the shard's side */
    struct conn *client;    /* NULL once closed */
    size_t sent;
    struct fuzz_chunks chunks;
    bool done;              /* under job_lock: the client is closed */
    unsigned long long owed; /* values the reply under way still owes (aggregates' elements to come) */
    long long blocked_at;   /* CLOCK_MONOTONIC ms since when the looks find it blocked; 0: not at the last */
};

/* a shard's end of the hand-off; written by its thread only, but `fd` and `ready` */
struct runner {
    int fd;                 /* eventfd: a job was posted */
    struct event *post_ev;
    struct event *send_ev;  /* sends the next piece */
    struct event *check_ev; /* closes the client once every piece is sent and it is idle (else looks again) */
    struct job *job;        /* the job under way, NULL between jobs */
};

static struct runner runners[FUZZ_SHARDS];
static atomic_int runners_ready;
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_done = PTHREAD_COND_INITIALIZER;
static struct job *posted[FUZZ_SHARDS]; /* under job_lock */

/* the resets after an input (each command answers +OK) */
static const char *reset_always;
static char *reset_config;
static size_t reset_config_count;

/* ---- replies --------------------------------------------------------------------- */

/* a RESP integer: optional '-', decimal digits, in range */
static bool reply_integer(const char *s, size_t n, long long *out)
{
    char buf[24];
    char *end;
    if (n == 0 || n >= sizeof(buf) || (s[0] != '-' && (s[0] < '0' || s[0] > '9')))
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    *out = strtoll(buf, &end, 10);
    return end == buf + n && errno == 0;
}

/* the length of one value's own line (and bulk body) at p[0..len), its element count (aggregates) in
 * *elements; 0: malformed or cut short */
static size_t value_head_length(const char *p, size_t len, unsigned long long *elements)
{
    const char *nl = len ? memchr(p, '\n', len) : NULL;
    *elements = 0;
    if (!nl || nl - p < 2 || nl[-1] != '\r')
        return 0;
    size_t line = (size_t)(nl - p) + 1;
    const char *text = p + 1;
    size_t text_len = line - 3;
    long long n;
    if (memchr(text, '\r', text_len))
        return 0;
    switch (p[0]) {
    case '+':
    case '-':
        return line;
    case ':':
        return reply_integer(text, text_len, &n) ? line : 0;
    case '_':
        return text_len == 0 ? line : 0;
    case '#':
        return text_len == 1 && (text[0] == 't' || text[0] == 'f') ? line : 0;
    case ',':
    case '(':
        return text_len > 0 ? line : 0;
    case '$':
    case '=':
    case '!':
        if (!reply_integer(text, text_len, &n) || n < -1 || (n == -1 && p[0] != '$'))
            return 0;
        if (n == -1)
            return line;
        if ((unsigned long long)n > len - line || len - line - (size_t)n < 2 || p[line + n] != '\r' ||
            p[line + n + 1] != '\n')
            return 0;
        return line + (size_t)n + 2;
    case '*':
    case '~':
    case '>':
    case '%':
        if (!reply_integer(text, text_len, &n) || n < -1 || (n == -1 && p[0] != '*'))
            return 0;
        *elements = n == -1 ? 0 : (unsigned long long)n * (p[0] == '%' ? 2 : 1);
        return line;
    default:
        return 0;
    }
}

/* the length of the one whole RESP2/RESP3 reply at p[0..len); 0: malformed or cut short.  Counted, not
 * recursed: a script's reply nests as deep as Lua's C stack lets it (8000 levels, as Redis's) */
static size_t reply_length(const char *p, size_t len)
{
    unsigned long long values_left = 1; /* in the reply: an aggregate's elements join those still to read */
    size_t at = 0;
    while (values_left > 0) {
        unsigned long long elements;
        size_t n = value_head_length(p + at, len - at, &elements);
        if (n == 0)
            return 0;
        at += n;
        values_left += elements - 1;
        if (values_left > len - at)
            return 0; /* more values to come than bytes left (each takes 3 or more): cut short */
    }
    return at;
}

/* whether p[0..len) is whole values, each well-formed; *owed: the values the reply under way still owes
 * (0 between replies), carried from batch to batch */
static bool values_whole(const char *p, size_t len, unsigned long long *owed)
{
    for (size_t at = 0; at < len;) {
        unsigned long long elements;
        size_t n = value_head_length(p + at, len - at, &elements);
        unsigned long long left = *owed ? *owed - 1 : 0; /* once this value is read (0: it starts a reply) */
        if (n == 0 || elements > ULLONG_MAX - left)
            return false;
        at += n;
        *owed = left + elements;
    }
    return true;
}

/* ---- the shard's side -------------------------------------------------------------- */

static void job_finish(struct runner *r)
{
    struct job *j = r->job;
    r->job = NULL;
    pthread_mutex_lock(&job_lock);
    j->done = true;
    pthread_cond_broadcast(&job_done);
    pthread_mutex_unlock(&job_lock);
}

/* the sink: whole values, or (bytes NULL) the client is closed */
static void on_replies(void *arg, const char *bytes, size_t len)
{
    struct runner *r = arg;
    struct job *j = r->job;
    if (!bytes) {
        j->client = NULL;
        job_finish(r);
        return;
    }
    bool whole = values_whole(bytes, len, &j->owed);
    if (!whole)
        fprintf(stderr, "fuzz_harness: malformed reply bytes: %.*s\n", (int)(len < 200 ? len : 200), bytes);
    FUZZ_CHECK(whole);
    if (j->admin) {
        j->replies = realloc(j->replies, j->replies_len + len);
        memcpy(j->replies + j->replies_len, bytes, len);
        j->replies_len += len;
    }
    event_active(r->check_ev, EV_TIMEOUT, 0);
}

static void on_send(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct runner *r = arg;
    struct job *j = r->job;
    if (!j || !j->client)
        return;
    size_t n = fuzz_chunks_next(&j->chunks, j->len - j->sent);
    engine_client_send(j->client, j->bytes + j->sent, n);
    j->sent += n;
    event_active(j->sent < j->len ? r->send_ev : r->check_ev, EV_TIMEOUT, 0);
}

static void on_check(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct runner *r = arg;
    struct job *j = r->job;
    static const struct timeval again = {0, CHECK_US};
    if (!j || !j->client || j->sent < j->len)
        return;
    if (!engine_client_idle(j->client)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long long now = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        if (!engine_client_blocked(j->client))
            j->blocked_at = 0;
        else if (!j->blocked_at)
            j->blocked_at = now;
        else if (now - j->blocked_at >= BLOCKED_MS) {
            engine_client_close(j->client); /* gives up waiting */
            return;
        }
        event_add(r->check_ev, &again);
        return;
    }
    if (j->owed)
        fprintf(stderr, "fuzz_harness: an idle client's reply owes %llu values\n", j->owed);
    FUZZ_CHECK(j->owed == 0);
    engine_client_close(j->client); /* the sink hears of it and finishes the job */
}

static void on_post(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct runner *r = arg;
    uint64_t count;
    FUZZ_CHECK(read(fd, &count, sizeof(count)) == (ssize_t)sizeof(count));
    pthread_mutex_lock(&job_lock);
    struct job *j = posted[r - runners];
    posted[r - runners] = NULL;
    pthread_mutex_unlock(&job_lock);
    r->job = j;
    if (j->unpause) {
        engine_unpause();
        job_finish(r);
        return;
    }
    fuzz_chunks_init(&j->chunks, j->control);
    j->client = engine_client_open(on_replies, r);
    if (j->admin)
        conn_set_authenticated(j->client, true);
    on_send(-1, 0, r);
}

static void start_runner(int shard, void *arg)
{
    (void)arg;
    struct runner *r = &runners[shard];
    struct event_base *base = engine_event_base();
    r->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    FUZZ_CHECK(r->fd >= 0);
    r->post_ev = event_new(base, r->fd, EV_READ | EV_PERSIST, on_post, r);
    r->send_ev = event_new(base, -1, 0, on_send, r);
    r->check_ev = event_new(base, -1, 0, on_check, r);
    event_add(r->post_ev, NULL);
    atomic_fetch_add(&runners_ready, 1);
}

/* ---- libFuzzer's side ------------------------------------------------------------ */

static void run_job(struct job *j, int home)
{
    uint64_t one = 1;
    pthread_mutex_lock(&job_lock);
    posted[home] = j;
    pthread_mutex_unlock(&job_lock);
    FUZZ_CHECK(write(runners[home].fd, &one, sizeof(one)) == (ssize_t)sizeof(one));
    pthread_mutex_lock(&job_lock);
    while (!j->done)
        pthread_cond_wait(&job_done, &job_lock);
    pthread_mutex_unlock(&job_lock);
}

/* an admin job on shard 0: its replies (malloc'd, NUL-terminated) */
static char *run_admin(const char *script, size_t *replies_len)
{
    struct job j = {.bytes = script, .len = strlen(script), .admin = true};
    run_job(&j, 0);
    j.replies = realloc(j.replies, j.replies_len + 1);
    j.replies[j.replies_len] = '\0';
    *replies_len = j.replies_len;
    return j.replies;
}

static void append(char **s, size_t *len, const char *bytes, size_t n)
{
    *s = realloc(*s, *len + n + 1);
    memcpy(*s + *len, bytes, n);
    *len += n;
    (*s)[*len] = '\0';
}

/* "*3\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n" then the two bulk strings at p (name, value), to *script */
static const char *append_config_set(char **script, size_t *len, const char *p)
{
    static const char head[] = "*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n";
    append(script, len, head, sizeof(head) - 1);
    for (int i = 0; i < 2; i++) {
        size_t n = reply_length(p, strlen(p));
        FUZZ_CHECK(n > 0 && p[0] == '$');
        append(script, len, p, n);
        p += n;
    }
    return p;
}

/* every error-free `CONFIG SET key <its start-up value>`, one per runtime-settable key */
static void build_config_reset(void)
{
    size_t got_len, tried_len = 0, reset_len = 0;
    char *got = run_admin("CONFIG GET *\r\n", &got_len);
    long long pairs;
    const char *nl = strchr(got, '\r');
    FUZZ_CHECK(got[0] == '*' && nl && reply_integer(got + 1, (size_t)(nl - got - 1), &pairs) && pairs % 2 == 0);
    char *tried = NULL;
    const char *p = nl + 2;
    for (long long i = 0; i < pairs / 2; i++)
        p = append_config_set(&tried, &tried_len, p);
    char *answers = run_admin(tried, &got_len);
    const char *a = answers;
    p = tried;
    for (long long i = 0; i < pairs / 2; i++) {
        size_t command = reply_length(p, strlen(p)), answer = reply_length(a, strlen(a));
        FUZZ_CHECK(command > 0 && answer > 0);
        if (strncmp(a, "+OK\r\n", answer) == 0) {
            append(&reset_config, &reset_len, p, command);
            reset_config_count++;
        }
        p += command;
        a += answer;
    }
    free(got);
    free(tried);
    free(answers);
}

static void run_reset(const char *script, size_t commands)
{
    size_t len;
    char *replies = run_admin(script, &len);
    for (size_t i = 0; i < commands; i++)
        FUZZ_CHECK(len >= 5 * (i + 1) && memcmp(replies + 5 * i, "+OK\r\n", 5) == 0);
    FUZZ_CHECK(len == 5 * commands);
    free(replies);
}

void fuzz_harness_start(const char *name)
{
    static const char *const limits[] = {"--loglevel", "warning", "--logfile", "/dev/null",
                                         "--proto-max-bulk-len", "1mb", "--client-query-buffer-limit", "1mb",
                                         "--client-output-buffer-limit", "normal 64mb 16mb 10", NULL};
    admin_setup();
    if (engine_start(name, FUZZ_SHARDS, limits, start_runner, NULL) < 0)
        exit(1);
    while (atomic_load(&runners_ready) < FUZZ_SHARDS)
        usleep(1000);
    build_config_reset();
    reset_always = "FLUSHALL\r\nSLOWLOG RESET\r\nSCRIPT FLUSH\r\nFUNCTION FLUSH\r\n";
}

void fuzz_harness_run(const char *stream, size_t len, uint8_t control, bool config)
{
    struct job j = {.bytes = stream, .len = len, .control = control};
    run_job(&j, control & FUZZ_FLAG ? FUZZ_SHARDS - 1 : 0);
    for (int shard = 0; shard < FUZZ_SHARDS; shard++) { /* before any command: a pause of ALL would hold it */
        struct job unpause = {.unpause = true};
        run_job(&unpause, shard);
    }
    if (config)
        run_reset(reset_config, reset_config_count);
    run_reset(reset_always, 4);
}
