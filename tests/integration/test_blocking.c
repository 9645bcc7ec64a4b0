/*
 * test_blocking: the blocking commands (BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP
 * BZPOPMIN BZPOPMAX BZMPOP) and CLIENT UNBLOCK between connections.
 *
 * The queues' hash tags are pc_spread_keys names ("{<spread key>}queue"), so
 * with 4 shards the keys live on every shard and most clients block on a
 * key owned by a shard other than their connection's home.  In parts a-h
 * all the keys of one blocking command share one tag; part i gives them
 * different tags, so that one command waits on keys of several shards.
 *
 * a. Producer / consumer: per tag, consumers loop on BLPOP while producers
 *    RPUSH numbered items in batches of 1..5; each item arrives exactly once.
 * b. FIFO: three clients block one after the other on one key; RPUSH a b c
 *    serves them in that order.
 * c. Timeouts: the null reply, not before the timeout (no tight upper bound);
 *    a timed-out client consumes nothing pushed later.  Short timeouts
 *    (1..50 ms, BLPOP BRPOP BZPOPMIN, keys on every shard, some on two)
 *    fire at their time: percore arms a timer per blocked client, so the
 *    median lateness of 60 of them is within SHORT_MEDIAN_MS and nine in
 *    ten within SHORT_P90_MS -- bounds a loaded 2-core machine keeps, which
 *    a timeout checked on a tick (Redis checks at hz: 100 ms) does not;
 *    against Redis the figures are printed only.
 * d. Disconnects (FIN, RST, CLIENT KILL) while blocked: a push after the
 *    server has dropped the client stays in the list; CLIENT LIST, INFO
 *    connected_clients and blocked_clients come back down.
 * e. CLIENT UNBLOCK [TIMEOUT|ERROR] of blocked clients, :0 for others.
 * f. A served BLMOVE's push serves the destination's waiter (chains).
 * g. One push of several elements serves several waiters, in order; one
 *    push of 20 serves 20 waiters once each; commands pipelined behind a
 *    blocked BLPOP wait for it.
 * h. BZPOPMIN / BZPOPMAX / BZMPOP / BLMPOP / BRPOP / BRPOPLPUSH woken from
 *    another connection by ZADD, RPUSH, LPUSH, LMOVE, RENAME, ZUNIONSTORE;
 *    MULTI / EXEC serves waiters after the whole EXEC (a key pushed and
 *    emptied in one EXEC serves nobody); a waiter keeps its database (SELECT,
 *    SWAPDB wakes it) and its protocol (RESP3 replies).
 * i. Keys on several shards (one tag each) in one command: data there
 *    answers at once from the first key in order (a key of another type
 *    before it: WRONGTYPE); woken by a push to any of them, the push serving
 *    before the pusher's next command (a string written meanwhile at another
 *    of the keys is passed over, as Redis 7.0 serves); FIFO with one-key
 *    waiters on a shared key; BLMOVE / BRPOPLPUSH between shards, chains of
 *    them; BZPOPMIN, BZPOPMAX, BLMPOP, BZMPOP; MULTI (a nil, no blocking);
 *    timeouts; disconnects, CLIENT KILL, CLIENT UNBLOCK; 10 waiters on three
 *    shards served by 10 pushes once each; consumers BRPOP four keys (four
 *    shards) while producers LPUSH to any: each item exactly once.
 * At the end the server is stopped with a client still blocked (exit 0).
 *
 * "Blocked" is read from CLIENT LIST ID <id>: flags=b (Redis, and percore
 * since blocking landed).  A server that never shows flags=b but shows
 * cmd=<command> once it took the command in counts the client as blocked
 * BLOCK_GRACE_MS after its cmd= shows (a heuristic: see wait_blocked).
 * INFO blocked_clients must count the blocked clients and come back to 0.
 *
 * Every part passes against a real redis-server 7.0 too (test_blocking.redis).
 * Threading: one hiredis connection per thread; tallies are atomics.
 */
#include "testclient.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTAGS 4                /* spread keys 0, 5, 10, 15: four shards under any mapping */
#define CONSUMERS_PER_TAG 3
#define PRODUCERS_PER_TAG 2
#define CONSUMER_DEADLINE_MS 30000
#define BLOCK_WAIT_MS 5000     /* how long a client may take to show as blocked */
#define BLOCK_GRACE_MS 50      /* see wait_blocked */
#define FLAG_PROBE_MS 300      /* cmd= shown this long without flags=b: no flag */
#define MANY_DISCONNECTS 40
#define MANY_WAITERS 20

static int port;
static bool server_is_redis;
static char tags[NTAGS][48];
static int flag_b_shown = -1; /* 1: the server shows flags=b, 0: it does not, -1: not known yet */

/* ---- replies ------------------------------------------------------------ */

/* printf at buf + *used, never past size */
static void append(char *buf, size_t size, size_t *used, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    if (*used + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used = *used + (size_t)n < size ? *used + (size_t)n : size - 1;
}

static void render(char *buf, size_t size, size_t *used, const redisReply *r)
{
    if (!r) {
        append(buf, size, used, "(no reply)");
    } else if (r->type == REDIS_REPLY_NIL) {
        append(buf, size, used, "(nil)");
    } else if (r->type == REDIS_REPLY_INTEGER) {
        append(buf, size, used, ":%lld", r->integer);
    } else if (r->type == REDIS_REPLY_ERROR) {
        append(buf, size, used, "-%s", r->str);
    } else if (r->type == REDIS_REPLY_STATUS) {
        append(buf, size, used, "+%s", r->str);
    } else if (r->type == REDIS_REPLY_STRING) {
        append(buf, size, used, "%s", r->str);
    } else if (r->type == REDIS_REPLY_ARRAY) {
        append(buf, size, used, "[");
        for (size_t i = 0; i < r->elements; i++) {
            if (i > 0)
                append(buf, size, used, ", ");
            render(buf, size, used, r->element[i]);
        }
        append(buf, size, used, "]");
    } else {
        append(buf, size, used, "(type %d)", r->type);
    }
}

/* the reply as text: strings bare, [a, b] arrays, :1, -ERR .., +OK, (nil) */
static const char *describe(const redisReply *r)
{
    static _Thread_local char buf[1024];
    size_t used = 0;
    buf[0] = '\0';
    render(buf, sizeof buf, &used, r);
    return buf;
}

/* compare describe(r) with want, count a failure if they differ; frees r */
static bool expect_reply(redisReply *r, const char *want, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool expect_reply(redisReply *r, const char *want, const char *fmt, ...)
{
    const char *got = describe(r);
    bool ok = strcmp(got, want) == 0;
    if (!ok) {
        char what[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        pc_fail("%s: got %s, want %s", what, got, want);
    }
    freeReplyObject(r);
    return ok;
}

static redisReply *command(redisContext *c, const char *fmt, ...)
{
    if (!c)
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    return r;
}

/* send a command without waiting for its reply (read it with next_reply) */
static void send_command(redisContext *c, const char *fmt, ...)
{
    if (!c)
        return;
    va_list ap;
    va_start(ap, fmt);
    redisvAppendCommand(c, fmt, ap);
    va_end(ap);
    int done = 0;
    while (!done)
        if (redisBufferWrite(c, &done) != REDIS_OK) {
            pc_fail("write failed: %s", c->errstr);
            return;
        }
}

/* the next reply; NULL when the connection broke (or timed out: 10 s) */
static redisReply *next_reply(redisContext *c)
{
    redisReply *r = NULL;
    if (!c || redisGetReply(c, (void **)&r) != REDIS_OK)
        return NULL;
    return r;
}

/* a command line split at its spaces (no quoting: the keys here have none) */
static int split_line(const char *line, char *buf, size_t size, const char **argv, int max)
{
    snprintf(buf, size, "%s", line);
    int argc = 0;
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok && argc < max; tok = strtok_r(NULL, " ", &save))
        argv[argc++] = tok;
    return argc;
}

static redisReply *command_line(redisContext *c, const char *line)
{
    char buf[512];
    const char *argv[32];
    int argc = split_line(line, buf, sizeof buf, argv, 32);
    return c ? redisCommandArgv(c, argc, argv, NULL) : NULL;
}

static void send_line(redisContext *c, const char *line)
{
    char buf[512];
    const char *argv[32];
    int argc = split_line(line, buf, sizeof buf, argv, 32);
    if (!c)
        return;
    redisAppendCommandArgv(c, argc, argv, NULL);
    int done = 0;
    while (!done)
        if (redisBufferWrite(c, &done) != REDIS_OK) {
            pc_fail("write failed: %s", c->errstr);
            return;
        }
}

static redisContext *connect_client(const char *who)
{
    redisContext *c = pc_hiredis_connect(port);
    if (!c)
        pc_fail("%s: cannot connect", who);
    return c;
}

static long long client_id(redisContext *c)
{
    redisReply *r = command(c, "CLIENT ID");
    long long id = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (id < 0)
        pc_fail("CLIENT ID: %s", describe(r));
    freeReplyObject(r);
    return id;
}

static long long raw_client_id(struct pc_conn *c)
{
    char *r = c ? pc_conn_cmdl(c, NULL, "CLIENT", "ID", NULL) : NULL;
    long long id = r && r[0] == ':' ? atoll(r + 1) : -1;
    if (id < 0)
        pc_fail("CLIENT ID on a raw connection: %s", r ? r : "(no reply)");
    free(r);
    return id;
}

/* run a command that must answer `want` (describe's text) */
static void must(redisContext *c, const char *want, const char *fmt, ...)
{
    char what[256];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    vsnprintf(what, sizeof what, fmt, ap2);
    va_end(ap2);
    redisReply *r = c ? redisvCommand(c, fmt, ap) : NULL;
    va_end(ap);
    expect_reply(r, want, "%s", what);
}

/* ---- who is blocked ----------------------------------------------------- */

/* a field of a CLIENT LIST line ("flags", "cmd") into out; false if absent */
static bool client_field(const char *line, const char *end, const char *field, char *out, size_t size)
{
    char pat[32];
    snprintf(pat, sizeof pat, " %s=", field);
    const char *p = strstr(line, pat);
    if (!p || p >= end)
        return false;
    p += strlen(pat);
    size_t n = 0;
    while (p + n < end && p[n] != ' ' && p[n] != '\r' && p[n] != '\n')
        n++;
    if (n >= size)
        n = size - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    return true;
}

/* the state of client `id`: 0 gone, 1 connected but not (yet) seen blocked,
 * 2 cmd=<cmd> shown without flags=b, 3 flags=b */
static int client_state(redisContext *admin, long long id, const char *cmd)
{
    redisReply *r = command(admin, "CLIENT LIST ID %lld", id);
    int state = 0;
    if (r && r->type == REDIS_REPLY_STRING && r->len > 0) {
        const char *end = r->str + r->len;
        char flags[32] = "", last[64] = "";
        client_field(r->str, end, "flags", flags, sizeof flags);
        client_field(r->str, end, "cmd", last, sizeof last);
        state = strchr(flags, 'b') ? 3 : strcmp(last, cmd) == 0 ? 2 : 1;
    } else if (!r || r->type != REDIS_REPLY_STRING) {
        pc_fail("CLIENT LIST ID %lld: %s", id, describe(r));
    }
    freeReplyObject(r);
    return state;
}

/*
 * Wait until each of the n clients is blocked in `cmd` (its lower-case
 * name).  With Redis that is flags=b.  percore shows no flags=b (nor INFO
 * blocked_clients) yet, only cmd=<cmd> once the home shard took the command
 * in: the first wait learns that (FLAG_PROBE_MS of cmd= without flags=b),
 * and from then on cmd= plus BLOCK_GRACE_MS, the time for the command to
 * reach the owner of the key and register as a waiter, counts as blocked.
 * false (and a failure counted) when one is not blocked after BLOCK_WAIT_MS.
 */
static bool wait_blocked(redisContext *admin, const long long *ids, int n, const char *cmd)
{
    long long start = pc_now_ms(), all_cmd_since = -1;
    for (;;) {
        int flagged = 0, by_cmd = 0;
        for (int i = 0; i < n; i++) {
            int st = client_state(admin, ids[i], cmd);
            flagged += st == 3;
            by_cmd += st >= 2;
        }
        if (flagged > 0)
            flag_b_shown = 1;
        if (flagged == n)
            return true;
        long long now = pc_now_ms();
        if (by_cmd == n && flag_b_shown != 1) {
            if (all_cmd_since < 0)
                all_cmd_since = now;
            if (flag_b_shown == 0 || now - all_cmd_since >= FLAG_PROBE_MS) {
                flag_b_shown = 0;
                pc_sleep_ms(BLOCK_GRACE_MS);
                return true;
            }
        } else {
            all_cmd_since = -1;
        }
        if (now - start > BLOCK_WAIT_MS) {
            pc_fail("%d of %d clients not blocked in %s after %d ms (first id %lld)", n - flagged, n, cmd,
                    BLOCK_WAIT_MS, ids[0]);
            return false;
        }
        pc_sleep_ms(5);
    }
}

static bool wait_blocked1(redisContext *admin, long long id, const char *cmd)
{
    return wait_blocked(admin, &id, 1, cmd);
}

/* wait until the server has dropped client id (it closed its connection) */
static bool wait_gone(redisContext *admin, long long id)
{
    long long deadline = pc_now_ms() + BLOCK_WAIT_MS;
    while (client_state(admin, id, "") != 0) {
        if (pc_now_ms() > deadline) {
            pc_fail("client %lld still listed %d ms after it closed", id, BLOCK_WAIT_MS);
            return false;
        }
        pc_sleep_ms(5);
    }
    return true;
}

static long count_clients(redisContext *admin)
{
    redisReply *r = command(admin, "CLIENT LIST");
    long lines = -1;
    if (r && r->type == REDIS_REPLY_STRING) {
        lines = 0;
        for (const char *p = r->str; (p = strstr(p, "id=")) != NULL; p += 3)
            if (p == r->str || p[-1] == '\n')
                lines++;
    }
    freeReplyObject(r);
    return lines;
}

/* poll an INFO clients field ("connected_clients", "blocked_clients") until
 * it equals want (percore merges its stats now and then); the last value read */
static long long wait_info_clients(redisContext *admin, const char *field, long long want)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\r\n%s:", field);
    long long deadline = pc_now_ms() + BLOCK_WAIT_MS, n = -1;
    do {
        redisReply *r = command(admin, "INFO clients");
        const char *p = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, pat) : NULL;
        n = p ? atoll(p + strlen(pat)) : -1;
        freeReplyObject(r);
        if (n != want)
            pc_sleep_ms(20);
    } while (n != want && pc_now_ms() < deadline);
    return n;
}

/* "{tag}name" */
static void tagged(char *out, size_t size, int tag, const char *name)
{
    snprintf(out, size, "{%.47s}%.40s", tags[tag], name);
}

/* ---- a. producer / consumer --------------------------------------------- */

static atomic_long received_total, bad_items, consumer_errors;

/*
 * A consumer pops (cmd: BLPOP, BRPOP) from its keys until it gets "stop"; a
 * producer pushes (cmd: RPUSH, LPUSH) items "p<index>:<seq>" in batches of
 * 1..5, each batch to one of its keys picked at random.
 */
struct worker {
    const char *cmd;
    const char *timeout;   /* consumers: the pop's timeout */
    int nkeys;
    char keys[NTAGS][96];
    int index;
    int items;             /* per producer */
    int producers;         /* consumers: the items come from producers 0..producers-1 */
    atomic_int *received;  /* per item (producer * items + seq): how many times a consumer got it */
    unsigned seed;         /* producers */
    pthread_t thread;
};

/* the index of key among w's keys, -1 if none */
static int worker_key(const struct worker *w, const redisReply *key)
{
    if (key->type != REDIS_REPLY_STRING)
        return -1;
    for (int k = 0; k < w->nkeys; k++)
        if (strcmp(key->str, w->keys[k]) == 0)
            return k;
    return -1;
}

static void *consumer(void *arg)
{
    const struct worker *w = arg;
    const char *argv[2 + NTAGS] = { w->cmd };
    for (int k = 0; k < w->nkeys; k++)
        argv[1 + k] = w->keys[k];
    argv[1 + w->nkeys] = w->timeout;
    redisContext *c = pc_hiredis_connect(port);
    long long deadline = pc_now_ms() + CONSUMER_DEADLINE_MS;
    bool stopped = false;
    while (c && !stopped && pc_now_ms() < deadline) {
        redisReply *r = redisCommandArgv(c, 2 + w->nkeys, argv, NULL);
        if (!r) {
            atomic_fetch_add(&consumer_errors, 1);
            break;
        }
        if (r->type == REDIS_REPLY_NIL) {
            freeReplyObject(r); /* no item before the timeout: keep waiting until the deadline */
            continue;
        }
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || worker_key(w, r->element[0]) < 0 ||
            r->element[1]->type != REDIS_REPLY_STRING) {
            if (atomic_fetch_add(&consumer_errors, 1) < 5)
                pc_fail("consumer %s (of %d keys)/%d: %s answered %s", w->keys[0], w->nkeys, w->index, w->cmd,
                        describe(r));
            freeReplyObject(r);
            break;
        }
        const char *item = r->element[1]->str;
        int producer, seq;
        if (strcmp(item, "stop") == 0) {
            stopped = true;
        } else if (sscanf(item, "p%d:%d", &producer, &seq) == 2 && producer >= 0 && producer < w->producers &&
                   seq >= 0 && seq < w->items) {
            atomic_fetch_add(&w->received[producer * w->items + seq], 1);
            atomic_fetch_add(&received_total, 1);
        } else {
            atomic_fetch_add(&bad_items, 1);
        }
        freeReplyObject(r);
    }
    if (!stopped)
        pc_fail("consumer %s (of %d keys)/%d never got its stop item", w->keys[0], w->nkeys, w->index);
    if (c)
        redisFree(c);
    return NULL;
}

static void *producer(void *arg)
{
    const struct worker *w = arg;
    char items[5][32];
    redisContext *c = pc_hiredis_connect(port);
    unsigned rng = w->seed;
    for (int seq = 0; c && seq < w->items;) {
        rng = rng * 1103515245u + 12345u;
        int batch = 1 + (int)((rng >> 16) % 5);
        if (batch > w->items - seq)
            batch = w->items - seq;
        const char *key = w->keys[(rng >> 4) % (unsigned)w->nkeys];
        const char *argv[7] = { w->cmd, key };
        for (int i = 0; i < batch; i++) {
            snprintf(items[i], sizeof items[i], "p%d:%d", w->index, seq + i);
            argv[2 + i] = items[i];
        }
        redisReply *r = redisCommandArgv(c, 2 + batch, argv, NULL);
        if (!r || r->type != REDIS_REPLY_INTEGER) {
            pc_fail("producer %s/%d: %s answered %s", key, w->index, w->cmd, describe(r));
            freeReplyObject(r);
            break;
        }
        freeReplyObject(r);
        seq += batch;
        if ((rng >> 8) % 16 == 0)
            pc_sleep_ms(1); /* now and then let the consumers drain the lists and block */
    }
    if (c)
        redisFree(c);
    return NULL;
}

static void start_workers(struct worker *w, int n, void *(*fn)(void *))
{
    for (int i = 0; i < n; i++)
        pthread_create(&w[i].thread, NULL, fn, &w[i]);
}

static void join_workers(struct worker *w, int n)
{
    for (int i = 0; i < n; i++)
        pthread_join(w[i].thread, NULL);
}

static void reset_tallies(void)
{
    atomic_store(&received_total, 0);
    atomic_store(&bad_items, 0);
    atomic_store(&consumer_errors, 0);
}

/* count (into *lost, *duplicated) the items of `received` not received once;
 * a failure for each of the first few */
static void tally_items(const char *what, atomic_int *received, int producers, int items, long *lost,
                        long *duplicated)
{
    for (int i = 0; i < producers * items; i++) {
        int n = atomic_load(&received[i]);
        *lost += n == 0;
        *duplicated += n > 1;
        if (n != 1 && *lost + *duplicated <= 5)
            pc_fail("%s: item p%d:%d received %d times", what, i / items, i % items, n);
    }
}

static void check_totals(const char *what, long expected, long lost, long duplicated)
{
    if (atomic_load(&received_total) != expected || lost || duplicated || atomic_load(&bad_items) ||
        atomic_load(&consumer_errors))
        pc_fail("%s: received %ld of %ld items: %ld lost, %ld duplicated, %ld unknown, %ld errors", what,
                atomic_load(&received_total), expected, lost, duplicated, atomic_load(&bad_items),
                atomic_load(&consumer_errors));
}

static void test_producer_consumer(redisContext *admin)
{
    int items = pc_sanitized() ? 150 : 1500, per_tag = PRODUCERS_PER_TAG * items;
    atomic_int *received[NTAGS];
    struct worker consumers[NTAGS][CONSUMERS_PER_TAG], producers[NTAGS][PRODUCERS_PER_TAG];
    reset_tallies();
    for (int t = 0; t < NTAGS; t++) {
        received[t] = calloc((size_t)per_tag, sizeof(atomic_int));
        for (int i = 0; i < CONSUMERS_PER_TAG; i++) {
            consumers[t][i] = (struct worker){ .cmd = "BLPOP", .timeout = "5", .nkeys = 1, .index = i,
                                               .items = items, .producers = PRODUCERS_PER_TAG,
                                               .received = received[t] };
            tagged(consumers[t][i].keys[0], sizeof consumers[t][i].keys[0], t, "queue");
        }
        for (int i = 0; i < PRODUCERS_PER_TAG; i++) {
            producers[t][i] = (struct worker){ .cmd = "RPUSH", .nkeys = 1, .index = i, .items = items,
                                               .seed = (unsigned)(t * 31 + i + 1) };
            tagged(producers[t][i].keys[0], sizeof producers[t][i].keys[0], t, "queue");
        }
    }
    for (int t = 0; t < NTAGS; t++)
        start_workers(consumers[t], CONSUMERS_PER_TAG, consumer);
    for (int t = 0; t < NTAGS; t++)
        start_workers(producers[t], PRODUCERS_PER_TAG, producer);
    for (int t = 0; t < NTAGS; t++)
        join_workers(producers[t], PRODUCERS_PER_TAG);
    /* every real item is in the lists now, ahead of one stop item per consumer */
    for (int t = 0; t < NTAGS; t++)
        for (int i = 0; i < CONSUMERS_PER_TAG; i++)
            freeReplyObject(command(admin, "RPUSH %s stop", consumers[t][0].keys[0]));
    for (int t = 0; t < NTAGS; t++)
        join_workers(consumers[t], CONSUMERS_PER_TAG);

    long expected = (long)NTAGS * per_tag, lost = 0, duplicated = 0;
    for (int t = 0; t < NTAGS; t++) {
        const char *key = consumers[t][0].keys[0];
        tally_items(key, received[t], PRODUCERS_PER_TAG, items, &lost, &duplicated);
        expect_reply(command(admin, "LLEN %s", key), ":0", "producer/consumer: LLEN %s at the end", key);
        free(received[t]);
    }
    check_totals("producer/consumer", expected, lost, duplicated);
    printf("a. producer/consumer: %ld items over %d tags, %d consumers each: received %ld\n", expected, NTAGS,
           CONSUMERS_PER_TAG, atomic_load(&received_total));
}

/* ---- b. FIFO ------------------------------------------------------------ */

static void test_fifo(redisContext *admin)
{
    for (int t = 0; t < NTAGS; t++) {
        char key[96];
        tagged(key, sizeof key, t, "fifo");
        redisContext *waiters[3];
        long long ids[3];
        for (int i = 0; i < 3; i++) {
            waiters[i] = connect_client("fifo waiter");
            ids[i] = client_id(waiters[i]);
            send_command(waiters[i], "BLPOP %s 0", key);
            wait_blocked1(admin, ids[i], "blpop"); /* before the next one blocks */
        }
        must(admin, ":3", "RPUSH %s a b c", key);
        const char *want[3] = { "a", "b", "c" };
        for (int i = 0; i < 3; i++) {
            char exp[160];
            snprintf(exp, sizeof exp, "[%s, %s]", key, want[i]);
            expect_reply(next_reply(waiters[i]), exp, "fifo %s: waiter %d (blocked %s)", key, i + 1,
                         i == 0 ? "first" : i == 1 ? "second" : "third");
            if (waiters[i])
                redisFree(waiters[i]);
        }
        must(admin, ":0", "EXISTS %s", key);
    }
    printf("b. FIFO: 3 waiters on each of %d keys served in the order they blocked\n", NTAGS);
}

/* ---- c. timeouts -------------------------------------------------------- */

/* run the command line, expect a nil after at least min_ms (and at most 5 s) */
static void expect_timeout(redisContext *c, int min_ms, const char *line)
{
    long long start = pc_now_ms();
    redisReply *r = command_line(c, line);
    long long took = pc_now_ms() - start;
    expect_reply(r, "(nil)", "%s", line);
    if (took < min_ms || took > 5000)
        pc_fail("%s: answered after %lld ms, want %d..5000", line, took, min_ms);
}

/* INFO clients_in_timeout_table counts the blocked clients that have a timeout (one tag, and tags of
 * several shards), blocked_clients all of them; both come back to 0 */
static void test_timeout_table(redisContext *admin)
{
    redisContext *forever = connect_client("no-timeout"), *timed = connect_client("timeout"),
                 *timed_multi = connect_client("timeout-multi");
    char a[96], b[96];
    tagged(a, sizeof a, 1, "tt");
    tagged(b, sizeof b, 2, "tt");
    long long id_forever = client_id(forever), id_timed = client_id(timed), id_multi = client_id(timed_multi);
    send_command(forever, "BLPOP %s 0", a);
    wait_blocked1(admin, id_forever, "blpop");
    send_command(timed, "BRPOP %s 30", a);
    wait_blocked1(admin, id_timed, "brpop");
    send_command(timed_multi, "BLPOP %s %s 30", a, b);
    wait_blocked1(admin, id_multi, "blpop");
    long long n = wait_info_clients(admin, "clients_in_timeout_table", 2);
    if (n != 2)
        pc_fail("clients_in_timeout_table is %lld with 2 of 3 blocked clients timed, want 2", n);
    n = wait_info_clients(admin, "blocked_clients", 3);
    if (n != 3)
        pc_fail("blocked_clients is %lld with 3 clients blocked, want 3", n);
    must(admin, ":3", "RPUSH %s 1 2 3", a);
    char exp[128];
    snprintf(exp, sizeof exp, "[%s, 1]", a);
    expect_reply(next_reply(forever), exp, "BLPOP without a timeout served first");
    snprintf(exp, sizeof exp, "[%s, 3]", a);
    expect_reply(next_reply(timed), exp, "BRPOP with a timeout served second");
    snprintf(exp, sizeof exp, "[%s, 2]", a);
    expect_reply(next_reply(timed_multi), exp, "BLPOP of two shards with a timeout served third");
    n = wait_info_clients(admin, "clients_in_timeout_table", 0);
    if (n != 0)
        pc_fail("clients_in_timeout_table is %lld once every client was served, want 0", n);
    must(admin, ":0", "EXISTS %s", a);
    redisFree(forever);
    redisFree(timed);
    redisFree(timed_multi);
}

#define SHORT_TIMEOUTS 60
#define SHORT_MEDIAN_MS 40
#define SHORT_P90_MS 250

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* short timeouts fire at their time: how late each nil came, its median and 90th percentile */
static void test_short_timeouts(void)
{
    static const char *const cmds[] = { "BLPOP", "BRPOP", "BZPOPMIN" };
    static const int ms[] = { 1, 5, 10, 20, 50 };
    long long late[SHORT_TIMEOUTS];
    redisContext *c = connect_client("short-timeouts");
    if (!c)
        return;
    for (int i = 0; i < SHORT_TIMEOUTS; i++) {
        char key[96], other[96], line[256];
        tagged(key, sizeof key, i % NTAGS, "short");
        tagged(other, sizeof other, (i + 1) % NTAGS, "short"); /* every fourth waits on two shards */
        int t = ms[i % 5];
        snprintf(line, sizeof line, "%s %s %s %d.%03d", cmds[i % 3], key, i % 4 == 3 ? other : "", t / 1000, t % 1000);
        long long start = pc_now_ms();
        expect_reply(command_line(c, line), "(nil)", "%s", line);
        late[i] = pc_now_ms() - start - t;
    }
    redisFree(c);
    qsort(late, SHORT_TIMEOUTS, sizeof late[0], cmp_ll);
    long long median = late[SHORT_TIMEOUTS / 2], p90 = late[SHORT_TIMEOUTS * 9 / 10];
    printf("c. %d timeouts of 1..50 ms came late by: median %lld ms, 90th percentile %lld ms, at most %lld ms\n",
           SHORT_TIMEOUTS, median, p90, late[SHORT_TIMEOUTS - 1]);
    if (!server_is_redis && (median > SHORT_MEDIAN_MS || p90 > SHORT_P90_MS))
        pc_fail("short timeouts fire late: median %lld ms (want <= %d), 90th percentile %lld ms (want <= %d)", median,
                SHORT_MEDIAN_MS, p90, SHORT_P90_MS);
}

static void test_timeouts(redisContext *admin)
{
    /* each format takes one or two empty keys of one tag; the tags vary over the shards */
    static const struct {
        const char *fmt;
        int min_ms;
    } cases[] = {
        { "BLPOP %s 0.2", 150 },
        { "BZPOPMIN %s 0.2", 150 },
        { "BLMOVE %s %s LEFT RIGHT 0.2", 150 },
        { "BRPOP %s %s 0.1", 70 },
        { "BRPOPLPUSH %s %s 0.1", 70 },
        { "BLMPOP 0.1 2 %s %s LEFT COUNT 2", 70 },
        { "BZPOPMAX %s 0.1", 70 },
        { "BZMPOP 0.1 2 %s %s MAX", 70 },
    };
    redisContext *c = connect_client("timeouts");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int tag = (int)(i % NTAGS);
        char a[96], b[96], cmd[256];
        tagged(a, sizeof a, tag, "empty");
        tagged(b, sizeof b, tag, "empty2");
        snprintf(cmd, sizeof cmd, cases[i].fmt, a, b); /* a format with one %s ignores b */
        expect_timeout(c, cases[i].min_ms, cmd);
        /* the timed-out client is no waiter any more: a later push stays */
        must(admin, ":1", "RPUSH %s x", a);
        must(admin, ":1", "LLEN %s", a);
        must(admin, ":1", "DEL %s", a);
        must(admin, ":0", "EXISTS %s", b);
    }
    must(c, "+PONG", "PING");
    if (c)
        redisFree(c);
    test_timeout_table(admin);
    test_short_timeouts();
    printf("c. timeouts: nil after the timeout for each blocking command; clients_in_timeout_table\n");
}

/* ---- d. disconnect while blocked ---------------------------------------- */

/* open n raw connections, block each in BLPOP <the nkeys keys> 0, close them
 * (RST when abort), wait until the server has dropped them, then push one
 * element to the last key: nobody may take it */
static void block_and_disconnect(redisContext *admin, const char *const *keys, int nkeys, int n, bool abort_conn)
{
    const char *key = keys[nkeys - 1];
    const char *argv[2 + NTAGS] = { "BLPOP" };
    for (int k = 0; k < nkeys; k++)
        argv[1 + k] = keys[k];
    argv[1 + nkeys] = "0";
    struct pc_conn **conns = calloc((size_t)n, sizeof(*conns));
    long long *ids = calloc((size_t)n, sizeof(*ids));
    int opened = 0;
    for (int i = 0; i < n; i++) {
        conns[i] = pc_conn_open(port);
        if (!conns[i]) {
            pc_fail("disconnect: cannot open connection %d", i);
            break;
        }
        ids[i] = raw_client_id(conns[i]);
        pc_conn_send(conns[i], 2 + nkeys, argv, NULL);
        opened++;
    }
    wait_blocked(admin, ids, opened, "blpop");
    long long blocked = wait_info_clients(admin, "blocked_clients", opened);
    if (blocked != opened)
        pc_fail("disconnect: INFO blocked_clients is %lld with %d clients blocked", blocked, opened);
    for (int i = 0; i < opened; i++) {
        if (abort_conn)
            pc_conn_abort(&conns[i]);
        else
            pc_conn_close(&conns[i]);
    }
    for (int i = 0; i < opened; i++)
        if (!wait_gone(admin, ids[i]))
            break;
    must(admin, ":1", "RPUSH %s survivor", key);
    expect_reply(command(admin, "LLEN %s", key), ":1", "disconnect (%d clients on %d keys, %s): LLEN %s after the push",
                 n, nkeys, abort_conn ? "RST" : "FIN", key);
    must(admin, ":1", "DEL %s", key);
    free(conns);
    free(ids);
}

/* poll CLIENT LIST until it lists `want` clients; the count last seen */
static long wait_client_count(redisContext *admin, long want)
{
    long long deadline = pc_now_ms() + BLOCK_WAIT_MS;
    long n;
    while ((n = count_clients(admin)) != want && pc_now_ms() < deadline)
        pc_sleep_ms(10);
    return n;
}

static void test_disconnect(redisContext *admin)
{
    /* the earlier parts' clients are closed: wait until only admin is left */
    long before = wait_client_count(admin, 1);
    if (before != 1)
        pc_fail("disconnect: %ld clients listed before, want 1 (admin)", before);
    int rounds = pc_sanitized() ? 2 : 4;
    for (int round = 0; round < rounds; round++)
        for (int t = 0; t < NTAGS; t++) {
            char key[96];
            tagged(key, sizeof key, t, "gone");
            block_and_disconnect(admin, (const char *[]){ key }, 1, 1, (round + t) % 2 == 1);
        }
    /* killed by CLIENT KILL ID while blocked: the same */
    for (int t = 0; t < NTAGS; t++) {
        char key[96];
        tagged(key, sizeof key, t, "killed");
        redisContext *victim = connect_client("killed");
        long long id = client_id(victim);
        send_command(victim, "BLPOP %s 0", key);
        wait_blocked1(admin, id, "blpop");
        must(admin, ":1", "CLIENT KILL ID %lld", id);
        wait_gone(admin, id);
        must(admin, ":1", "RPUSH %s survivor", key);
        expect_reply(command(admin, "LLEN %s", key), ":1", "CLIENT KILL of a client blocked on %s: LLEN", key);
        must(admin, ":1", "DEL %s", key);
        if (victim)
            redisFree(victim);
    }
    int many = pc_sanitized() ? 10 : MANY_DISCONNECTS;
    for (int t = 0; t < NTAGS; t++) {
        char key[96];
        tagged(key, sizeof key, t, "gone-many");
        block_and_disconnect(admin, (const char *[]){ key }, 1, many, t % 2 == 0);
    }
    must(admin, "+PONG", "PING");
    long after = wait_client_count(admin, before);
    if (after != before)
        pc_fail("disconnect: CLIENT LIST has %ld clients after, %ld before", after, before);
    long long connected = wait_info_clients(admin, "connected_clients", 1);
    if (connected != 1)
        pc_fail("disconnect: INFO connected_clients is %lld, want 1", connected);
    long long blocked = wait_info_clients(admin, "blocked_clients", 0);
    if (blocked != 0)
        pc_fail("disconnect: INFO blocked_clients is %lld, want 0", blocked);
    printf("d. disconnect while blocked: no element taken by a closed client; %ld clients before and after\n",
           before);
}

/* ---- e. CLIENT UNBLOCK -------------------------------------------------- */

/* a blocks with `block_cmd` (its first word lower-cased in `name`), admin
 * unblocks it with the reason, a must answer want */
static void unblock_case(redisContext *admin, redisContext *a, long long id, const char *name, const char *block_cmd,
                         const char *reason, const char *want)
{
    send_line(a, block_cmd);
    if (!wait_blocked1(admin, id, name)) {
        next_reply(a);
        return;
    }
    char unblock[96];
    snprintf(unblock, sizeof unblock, "CLIENT UNBLOCK %lld%s%s", id, reason ? " " : "", reason ? reason : "");
    expect_reply(command_line(admin, unblock), ":1", "%s of a client in %s", unblock, name);
    expect_reply(next_reply(a), want, "%s, unblocked by %s", name, unblock);
}

static void test_client_unblock(redisContext *admin)
{
    redisContext *a = connect_client("unblock");
    long long id = client_id(a);
    char key[96], zkey[96], dst[96], cmd[256];
    tagged(key, sizeof key, 2, "unblock");
    tagged(zkey, sizeof zkey, 2, "unblock-z");
    tagged(dst, sizeof dst, 2, "unblock-dst");
    const char *unblocked_error = "-UNBLOCKED client unblocked via CLIENT UNBLOCK";

    snprintf(cmd, sizeof cmd, "BLPOP %s 0", key);
    unblock_case(admin, a, id, "blpop", cmd, NULL, "(nil)");
    unblock_case(admin, a, id, "blpop", cmd, "TIMEOUT", "(nil)");
    unblock_case(admin, a, id, "blpop", cmd, "ERROR", unblocked_error);
    snprintf(cmd, sizeof cmd, "BLMOVE %s %s LEFT RIGHT 0", key, dst);
    unblock_case(admin, a, id, "blmove", cmd, "timeout", "(nil)");
    snprintf(cmd, sizeof cmd, "BZPOPMIN %s 0", zkey);
    unblock_case(admin, a, id, "bzpopmin", cmd, "error", unblocked_error);
    snprintf(cmd, sizeof cmd, "BZMPOP 0 1 %s MAX COUNT 2", zkey);
    unblock_case(admin, a, id, "bzmpop", cmd, NULL, "(nil)");
    /* an unblocked client is no waiter any more */
    must(admin, ":1", "RPUSH %s x", key);
    must(admin, ":1", "LLEN %s", key);
    must(admin, ":1", "ZADD %s 1 m", zkey);
    must(admin, ":1", "ZCARD %s", zkey);
    must(admin, ":0", "EXISTS %s", dst);
    must(a, "+PONG", "PING");
    /* not blocked (now idle), and no such client */
    char unblock[96];
    snprintf(unblock, sizeof unblock, "CLIENT UNBLOCK %lld", id);
    expect_reply(command_line(admin, unblock), ":0", "%s of an idle client", unblock);
    expect_reply(command(admin, "CLIENT UNBLOCK %lld ERROR", id), ":0", "%s ERROR of an idle client", unblock);
    expect_reply(command(admin, "CLIENT UNBLOCK %lld", id + 100000), ":0", "CLIENT UNBLOCK of no client");
    expect_reply(command_line(a, unblock), ":0", "CLIENT UNBLOCK of itself");
    must(admin, ":2", "DEL %s %s", key, zkey);
    /* after the unblocks it still blocks and is served like any client */
    send_command(a, "BLPOP %s 0", key);
    wait_blocked1(admin, id, "blpop");
    must(admin, ":1", "RPUSH %s y", key);
    char exp[160];
    snprintf(exp, sizeof exp, "[%s, y]", key);
    expect_reply(next_reply(a), exp, "BLPOP after the unblocks");
    if (a)
        redisFree(a);
    printf("e. CLIENT UNBLOCK: nil for TIMEOUT, UNBLOCKED for ERROR, :0 when not blocked\n");
}

/* ---- f. BLMOVE chains --------------------------------------------------- */

static void test_blmove_chain(redisContext *admin)
{
    for (int t = 0; t < NTAGS; t++) {
        char src[96], mid[96], dst[96], exp[200];
        tagged(src, sizeof src, t, "src");
        tagged(mid, sizeof mid, t, "mid");
        tagged(dst, sizeof dst, t, "dst");
        /* A: BLMOVE src dst; B: BLPOP dst; RPUSH src x serves A, A's push serves B */
        redisContext *a = connect_client("chain A"), *b = connect_client("chain B");
        long long ida = client_id(a), idb = client_id(b);
        send_command(a, "BLMOVE %s %s LEFT RIGHT 0", src, dst);
        wait_blocked1(admin, ida, "blmove");
        send_command(b, "BLPOP %s 0", dst);
        wait_blocked1(admin, idb, "blpop");
        must(admin, ":1", "RPUSH %s x", src);
        expect_reply(next_reply(a), "x", "chain %s: BLMOVE", src);
        snprintf(exp, sizeof exp, "[%s, x]", dst);
        expect_reply(next_reply(b), exp, "chain %s: BLPOP of BLMOVE's destination", src);
        must(admin, ":0", "EXISTS %s %s", src, dst);

        /* three links: A moves src->mid, B (BRPOPLPUSH) mid->dst, C pops dst */
        redisContext *c = connect_client("chain C");
        long long idc = client_id(c);
        send_command(a, "BLMOVE %s %s RIGHT LEFT 0", src, mid);
        wait_blocked1(admin, ida, "blmove");
        send_command(b, "BRPOPLPUSH %s %s 0", mid, dst);
        wait_blocked1(admin, idb, "brpoplpush");
        send_command(c, "BRPOP %s 0", dst);
        wait_blocked1(admin, idc, "brpop");
        must(admin, ":2", "RPUSH %s first last", src);
        expect_reply(next_reply(a), "last", "chain %s: link 1 (BLMOVE RIGHT LEFT)", src);
        expect_reply(next_reply(b), "last", "chain %s: link 2 (BRPOPLPUSH)", src);
        snprintf(exp, sizeof exp, "[%s, last]", dst);
        expect_reply(next_reply(c), exp, "chain %s: link 3 (BRPOP)", src);
        snprintf(exp, sizeof exp, "[first]");
        expect_reply(command(admin, "LRANGE %s 0 -1", src), exp, "chain %s: what is left", src);
        must(admin, ":0", "EXISTS %s %s", mid, dst);
        must(admin, ":1", "DEL %s", src);
        /* a client blocked in BLMOVE on a key it also pushes to (rotation) */
        send_command(a, "BLMOVE %s %s LEFT RIGHT 0", src, src);
        wait_blocked1(admin, ida, "blmove");
        must(admin, ":1", "RPUSH %s r", src);
        expect_reply(next_reply(a), "r", "chain %s: BLMOVE src src", src);
        expect_reply(command(admin, "LRANGE %s 0 -1", src), "[r]", "chain %s: after the rotation", src);
        must(admin, ":1", "DEL %s", src);
        redisFree(a);
        redisFree(b);
        redisFree(c);
    }
    printf("f. BLMOVE chains: a served move serves the destination's waiter\n");
}

/* ---- g. one push, several waiters --------------------------------------- */

/* MANY_WAITERS clients block on one key (in no particular order); one RPUSH
 * of MANY_WAITERS elements serves each exactly once */
static void test_one_push_all_waiters(redisContext *admin)
{
    char key[96];
    tagged(key, sizeof key, 1, "all");
    redisContext *w[MANY_WAITERS];
    long long ids[MANY_WAITERS];
    for (int i = 0; i < MANY_WAITERS; i++) {
        w[i] = connect_client("one of many waiters");
        ids[i] = client_id(w[i]);
        send_command(w[i], "BLPOP %s 0", key);
    }
    wait_blocked(admin, ids, MANY_WAITERS, "blpop");
    const char *argv[2 + MANY_WAITERS] = { "RPUSH", key };
    char items[MANY_WAITERS][16];
    for (int i = 0; i < MANY_WAITERS; i++) {
        snprintf(items[i], sizeof items[i], "e%d", i);
        argv[2 + i] = items[i];
    }
    freeReplyObject(redisCommandArgv(admin, 2 + MANY_WAITERS, argv, NULL));
    int got[MANY_WAITERS] = { 0 };
    for (int i = 0; i < MANY_WAITERS; i++) {
        redisReply *r = next_reply(w[i]);
        int n;
        if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[1]->type == REDIS_REPLY_STRING &&
            sscanf(r->element[1]->str, "e%d", &n) == 1 && n >= 0 && n < MANY_WAITERS)
            got[n]++;
        else
            pc_fail("one push for %d waiters: waiter %d got %s", MANY_WAITERS, i, describe(r));
        freeReplyObject(r);
        if (w[i])
            redisFree(w[i]);
    }
    for (int i = 0; i < MANY_WAITERS; i++)
        if (got[i] != 1)
            pc_fail("one push for %d waiters: element e%d served %d times", MANY_WAITERS, i, got[i]);
    must(admin, ":0", "EXISTS %s", key);
}

/* commands pipelined behind a blocking one wait for it: nothing answers
 * while it is blocked, then its reply comes first */
static void test_pipelined_behind_block(redisContext *admin)
{
    char key[96], want[256];
    tagged(key, sizeof key, 3, "pipelined");
    struct pc_conn *c = pc_conn_open(port);
    if (!c) {
        pc_fail("pipelined: cannot connect");
        return;
    }
    long long id = raw_client_id(c);
    char blpop[160];
    snprintf(blpop, sizeof blpop, "*3\r\n$5\r\nBLPOP\r\n$%zu\r\n%s\r\n$1\r\n0\r\n", strlen(key), key);
    char pipeline[512];
    snprintf(pipeline, sizeof pipeline, "%s*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nLLEN\r\n$%zu\r\n%s\r\n%s", blpop,
             strlen(key), key, blpop);
    pc_conn_write(c, pipeline, strlen(pipeline)); /* BLPOP, PING, LLEN, BLPOP */
    wait_blocked1(admin, id, "blpop");
    char *got = NULL;
    size_t gotlen = 0;
    if (pc_conn_read_reply(c, &got, &gotlen, 200) != 0)
        pc_fail("pipelined: a reply while BLPOP is blocked: %s", got ? got : "(closed)");
    free(got);
    must(admin, ":2", "RPUSH %s a b", key);
    snprintf(want, sizeof want, "*2\r\n$%zu\r\n%s\r\n$1\r\na\r\n", strlen(key), key);
    pc_expect_reply(c, "pipelined: the first BLPOP", want, strlen(want));
    pc_expect_reply(c, "pipelined: PING behind it", "+PONG\r\n", 7);
    pc_expect_reply(c, "pipelined: LLEN behind it", ":1\r\n", 4);
    snprintf(want, sizeof want, "*2\r\n$%zu\r\n%s\r\n$1\r\nb\r\n", strlen(key), key);
    pc_expect_reply(c, "pipelined: the second BLPOP, data there", want, strlen(want));
    must(admin, ":0", "EXISTS %s", key);
    pc_conn_close(&c);
}

/* a served client's pipelined push serves another waiter: with one shard the serving runs again from inside
 * itself (the served client's next command runs as its reply goes out), which must not take the outer
 * round's keys from under it */
static void test_served_client_pushes(redisContext *admin)
{
    char q[96], r[96], want[256], pipeline[512];
    tagged(q, sizeof q, 1, "served-q");
    tagged(r, sizeof r, 1, "served-r");
    struct pc_conn *a = pc_conn_open(port);
    redisContext *b = connect_client("served-pushes waiter");
    if (!a || !b) {
        pc_fail("served client pushes: cannot connect");
        pc_conn_close(&a);
        if (b)
            redisFree(b);
        return;
    }
    long long id_a = raw_client_id(a), id_b = client_id(b);
    send_command(b, "BLPOP %s 0", r);
    wait_blocked1(admin, id_b, "blpop");
    snprintf(pipeline, sizeof pipeline, "*3\r\n$5\r\nBLPOP\r\n$%zu\r\n%s\r\n$1\r\n0\r\n"
             "*3\r\n$5\r\nRPUSH\r\n$%zu\r\n%s\r\n$1\r\ny\r\n", strlen(q), q, strlen(r), r);
    pc_conn_write(a, pipeline, strlen(pipeline)); /* BLPOP q 0, then RPUSH r y */
    wait_blocked1(admin, id_a, "blpop");
    must(admin, ":1", "RPUSH %s x", q);
    snprintf(want, sizeof want, "*2\r\n$%zu\r\n%s\r\n$1\r\nx\r\n", strlen(q), q);
    pc_expect_reply(a, "served client pushes: its BLPOP", want, strlen(want));
    pc_expect_reply(a, "served client pushes: its pipelined RPUSH", ":1\r\n", 4);
    snprintf(want, sizeof want, "[%s, y]", r);
    expect_reply(next_reply(b), want, "served client pushes: the waiter its push served");
    must(admin, ":0", "EXISTS %s %s", q, r);
    pc_conn_close(&a);
    redisFree(b);
}

static void test_one_push_many_waiters(redisContext *admin)
{
    for (int t = 0; t < NTAGS; t++) {
        char key[96], exp[160];
        tagged(key, sizeof key, t, "shared");
        redisContext *w[3];
        long long ids[3];
        for (int i = 0; i < 3; i++) {
            w[i] = connect_client("shared waiter");
            ids[i] = client_id(w[i]);
        }
        send_command(w[0], "BLPOP %s 0", key);
        wait_blocked1(admin, ids[0], "blpop");
        send_command(w[1], "BRPOP %s 0", key);
        wait_blocked1(admin, ids[1], "brpop");
        must(admin, ":2", "RPUSH %s a b", key);
        snprintf(exp, sizeof exp, "[%s, a]", key);
        expect_reply(next_reply(w[0]), exp, "one push %s: first waiter (BLPOP)", key);
        snprintf(exp, sizeof exp, "[%s, b]", key);
        expect_reply(next_reply(w[1]), exp, "one push %s: second waiter (BRPOP)", key);
        must(admin, ":0", "EXISTS %s", key);
        /* three waiters, two elements: the third stays blocked until the next push */
        for (int i = 0; i < 3; i++) {
            send_command(w[i], "BLPOP %s 0", key);
            wait_blocked1(admin, ids[i], "blpop");
        }
        must(admin, ":2", "LPUSH %s b a", key);
        snprintf(exp, sizeof exp, "[%s, a]", key);
        expect_reply(next_reply(w[0]), exp, "one push %s: 1 of 3", key);
        snprintf(exp, sizeof exp, "[%s, b]", key);
        expect_reply(next_reply(w[1]), exp, "one push %s: 2 of 3", key);
        must(admin, ":0", "EXISTS %s", key);
        if (client_state(admin, ids[2], "blpop") < 2)
            pc_fail("one push %s: the third waiter is no longer blocked", key);
        must(admin, ":1", "RPUSH %s c", key);
        snprintf(exp, sizeof exp, "[%s, c]", key);
        expect_reply(next_reply(w[2]), exp, "one push %s: 3 of 3, next push", key);
        must(admin, ":0", "EXISTS %s", key);
        for (int i = 0; i < 3; i++)
            redisFree(w[i]);
    }
    test_one_push_all_waiters(admin);
    test_pipelined_behind_block(admin);
    test_served_client_pushes(admin);
    printf("g. one push of two elements serves two waiters, in order; one of %d serves %d\n", MANY_WAITERS,
           MANY_WAITERS);
}

/* ---- h. the other commands, woken by other writers ---------------------- */

/* the expected raw RESP bytes of `what` on the raw connection */
static void expect_raw(struct pc_conn *c, const char *want, const char *what)
{
    if (c)
        pc_expect_reply(c, what, want, strlen(want));
}

/* waiters remember their database and protocol */
static void test_wakeups_db_and_resp3(redisContext *admin)
{
    char l[96], z[96], want[256];
    tagged(l, sizeof l, 3, "db");
    tagged(z, sizeof z, 3, "resp3");
    struct pc_conn *w = pc_conn_open(port);
    if (!w) {
        pc_fail("db waiter: cannot connect");
        return;
    }
    long long id = raw_client_id(w);
    const char *blpop[] = { "BLPOP", l, "0" };
    /* a waiter in db 1 is not served by a push to db 0, is by one to db 1 */
    free(pc_conn_cmdl(w, NULL, "SELECT", "1", NULL));
    pc_conn_send(w, 3, blpop, NULL);
    wait_blocked1(admin, id, "blpop");
    must(admin, ":1", "RPUSH %s db0", l);
    must(admin, "+OK", "SELECT 1");
    must(admin, ":1", "RPUSH %s db1", l);
    must(admin, "+OK", "SELECT 0");
    snprintf(want, sizeof want, "*2\r\n$%zu\r\n%s\r\n$3\r\ndb1\r\n", strlen(l), l);
    expect_raw(w, want, "BLPOP in db 1, pushes to db 0 and db 1");
    must(admin, ":1", "LLEN %s", l);
    /* SWAPDB brings db 0's list into db 1: it serves the waiter there */
    pc_conn_send(w, 3, blpop, NULL);
    wait_blocked1(admin, id, "blpop");
    must(admin, "+OK", "SWAPDB 0 1");
    snprintf(want, sizeof want, "*2\r\n$%zu\r\n%s\r\n$3\r\ndb0\r\n", strlen(l), l);
    char *got = NULL;
    size_t gotlen = 0;
    if (pc_conn_read_reply(w, &got, &gotlen, 2000) == 1) {
        pc_expect_bytes("BLPOP in db 1 woken by SWAPDB", got, gotlen, want);
    } else {
        redisReply *unblocked = command(admin, "CLIENT UNBLOCK %lld", id);
        pc_fail("BLPOP in db 1 woken by SWAPDB: no reply after 2 s (CLIENT UNBLOCK then answers %s)",
                describe(unblocked));
        freeReplyObject(unblocked);
        pc_conn_read_reply(w, &got, &gotlen, 2000); /* the unblocked nil */
    }
    free(got);
    must(admin, "+OK", "SWAPDB 0 1");
    freeReplyObject(command(admin, "DEL %s", l)); /* only there when SWAPDB served nobody */
    must(admin, "+OK", "SELECT 1");
    freeReplyObject(command(admin, "DEL %s", l));
    must(admin, "+OK", "SELECT 0");
    pc_conn_close(&w);

    /* a RESP3 waiter gets RESP3 replies: the score a double, the timeout _ */
    struct pc_conn *r3 = pc_conn_open(port);
    if (!r3) {
        pc_fail("resp3: cannot connect");
        return;
    }
    long long rid = raw_client_id(r3);
    free(pc_conn_cmdl(r3, NULL, "HELLO", "3", NULL));
    const char *bz[] = { "BZPOPMIN", z, "0" };
    pc_conn_send(r3, 3, bz, NULL);
    wait_blocked1(admin, rid, "bzpopmin");
    must(admin, ":1", "ZADD %s 2.5 m", z);
    snprintf(want, sizeof want, "*3\r\n$%zu\r\n%s\r\n$1\r\nm\r\n,2.5\r\n", strlen(z), z);
    expect_raw(r3, want, "BZPOPMIN of a RESP3 client woken by ZADD");
    const char *bl[] = { "BLPOP", l, "0.1" };
    pc_conn_send(r3, 3, bl, NULL);
    expect_raw(r3, "_\r\n", "BLPOP timeout of a RESP3 client");
    const char *bm[] = { "BLMPOP", "0", "1", l, "LEFT", "COUNT", "2" };
    pc_conn_send(r3, 7, bm, NULL);
    wait_blocked1(admin, rid, "blmpop");
    must(admin, ":3", "RPUSH %s a b c", l);
    snprintf(want, sizeof want, "*2\r\n$%zu\r\n%s\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n", strlen(l), l);
    expect_raw(r3, want, "BLMPOP of a RESP3 client woken by RPUSH");
    must(admin, ":1", "DEL %s", l);
    pc_conn_close(&r3);
}

/*
 * MULTI / EXEC: waiters are served after the whole EXEC, on what the keys
 * hold then (as Redis does), never between two of its commands: a key
 * pushed and emptied inside one EXEC serves nobody, the client stays
 * blocked (and takes the next push).  Each case starts with a fresh wait.
 */
static void test_exec_serves_after(redisContext *admin, redisContext *w, long long id, const char *l,
                                   const char *l2)
{
    char exp[256];
    /* pushed then deleted */
    send_command(w, "BRPOPLPUSH %s %s 0", l, l2);
    wait_blocked1(admin, id, "brpoplpush");
    must(admin, "+OK", "MULTI");
    must(admin, "+QUEUED", "RPUSH %s gone", l);
    must(admin, "+QUEUED", "DEL %s", l);
    must(admin, "[:1, :1]", "EXEC");
    must(admin, ":1", "LPUSH %s next", l);
    expect_reply(next_reply(w), "next", "BRPOPLPUSH %s: after an EXEC of RPUSH + DEL, the next LPUSH", l);
    freeReplyObject(command(admin, "DEL %s %s", l, l2));
    /* pushed then popped */
    send_command(w, "BLPOP %s 0", l);
    wait_blocked1(admin, id, "blpop");
    must(admin, "+OK", "MULTI");
    must(admin, "+QUEUED", "RPUSH %s gone", l);
    must(admin, "+QUEUED", "LPOP %s", l);
    must(admin, "[:1, gone]", "EXEC");
    must(admin, ":1", "RPUSH %s next", l);
    snprintf(exp, sizeof exp, "[%s, next]", l);
    expect_reply(next_reply(w), exp, "BLPOP %s: after an EXEC of RPUSH + LPOP, the next RPUSH", l);
    freeReplyObject(command(admin, "DEL %s", l));
    /* two pushes: served once, after both */
    send_command(w, "BRPOPLPUSH %s %s 0", l, l2);
    wait_blocked1(admin, id, "brpoplpush");
    must(admin, "+OK", "MULTI");
    must(admin, "+QUEUED", "LPUSH %s m1", l);
    must(admin, "+QUEUED", "LPUSH %s m2", l);
    must(admin, "[:1, :2]", "EXEC");
    expect_reply(next_reply(w), "m1", "BRPOPLPUSH %s woken by an EXEC of two LPUSHes", l);
    expect_reply(command(admin, "LRANGE %s 0 -1", l2), "[m1]", "BRPOPLPUSH %s: destination", l);
    expect_reply(command(admin, "LRANGE %s 0 -1", l), "[m2]", "BRPOPLPUSH %s: source", l);
    must(admin, ":2", "DEL %s %s", l, l2);
}

static void test_wakeups(redisContext *admin)
{
    redisContext *w = connect_client("wakeups");
    long long id = client_id(w);
    for (int t = 0; t < NTAGS; t++) {
        char z[96], z2[96], l[96], l2[96], exp[256];
        tagged(z, sizeof z, t, "z");
        tagged(z2, sizeof z2, t, "z2");
        tagged(l, sizeof l, t, "l");
        tagged(l2, sizeof l2, t, "l2");

        send_command(w, "BZPOPMIN %s %s 0", z2, z);
        wait_blocked1(admin, id, "bzpopmin");
        must(admin, ":2", "ZADD %s 2 b 1.5 a", z);
        snprintf(exp, sizeof exp, "[%s, a, 1.5]", z);
        expect_reply(next_reply(w), exp, "BZPOPMIN woken by ZADD");

        /* b is still there: answered at once */
        send_command(w, "BZPOPMAX %s 0", z);
        snprintf(exp, sizeof exp, "[%s, b, 2]", z);
        expect_reply(next_reply(w), exp, "BZPOPMAX with data there");
        send_command(w, "BZPOPMAX %s 0", z);
        wait_blocked1(admin, id, "bzpopmax");
        must(admin, ":3", "ZADD %s 1 x 3 y -1 w", z);
        snprintf(exp, sizeof exp, "[%s, y, 3]", z);
        expect_reply(next_reply(w), exp, "BZPOPMAX woken by ZADD");
        must(admin, ":1", "DEL %s", z);

        send_command(w, "BZMPOP 0 2 %s %s MIN COUNT 2", z, z2);
        wait_blocked1(admin, id, "bzmpop");
        must(admin, ":3", "ZADD %s 3 c 1 a 2 b", z2);
        snprintf(exp, sizeof exp, "[%s, [[a, 1], [b, 2]]]", z2);
        expect_reply(next_reply(w), exp, "BZMPOP woken by ZADD");
        must(admin, ":1", "ZCARD %s", z2);
        must(admin, ":1", "DEL %s", z2);

        /* a zset made by ZUNIONSTORE wakes BZPOPMIN */
        must(admin, ":1", "ZADD %s 7 u", z2);
        send_command(w, "BZPOPMIN %s 0", z);
        wait_blocked1(admin, id, "bzpopmin");
        must(admin, ":1", "ZUNIONSTORE %s 1 %s", z, z2);
        snprintf(exp, sizeof exp, "[%s, u, 7]", z);
        expect_reply(next_reply(w), exp, "BZPOPMIN woken by ZUNIONSTORE");
        must(admin, ":1", "DEL %s", z2);

        send_command(w, "BLMPOP 0 2 %s %s RIGHT COUNT 2", l, l2);
        wait_blocked1(admin, id, "blmpop");
        must(admin, ":3", "RPUSH %s a b c", l2);
        snprintf(exp, sizeof exp, "[%s, [c, b]]", l2);
        expect_reply(next_reply(w), exp, "BLMPOP woken by RPUSH");
        snprintf(exp, sizeof exp, "[a]");
        expect_reply(command(admin, "LRANGE %s 0 -1", l2), exp, "BLMPOP: what is left");

        /* LMOVE from another list wakes BLPOP; a waiter on several keys */
        send_command(w, "BLPOP %s 0", l);
        wait_blocked1(admin, id, "blpop");
        must(admin, "a", "LMOVE %s %s LEFT LEFT", l2, l);
        snprintf(exp, sizeof exp, "[%s, a]", l);
        expect_reply(next_reply(w), exp, "BLPOP woken by LMOVE");
        must(admin, ":0", "EXISTS %s %s", l, l2);

        /* RENAME of a list onto the key wakes BRPOP */
        must(admin, ":2", "RPUSH %s r1 r2", l2);
        send_command(w, "BRPOP %s 0", l);
        wait_blocked1(admin, id, "brpop");
        must(admin, "+OK", "RENAME %s %s", l2, l);
        snprintf(exp, sizeof exp, "[%s, r2]", l);
        expect_reply(next_reply(w), exp, "BRPOP woken by RENAME");
        must(admin, ":1", "DEL %s", l);

        test_exec_serves_after(admin, w, id, l, l2);

        /* a write of the wrong type does not serve a list waiter */
        send_command(w, "BLPOP %s 0", l);
        wait_blocked1(admin, id, "blpop");
        must(admin, ":1", "ZADD %s 1 m", l2);
        must(admin, "+OK", "SET %s str", l);
        must(admin, ":1", "DEL %s", l);
        must(admin, ":1", "LPUSH %s last", l);
        snprintf(exp, sizeof exp, "[%s, last]", l);
        expect_reply(next_reply(w), exp, "BLPOP after a SET / DEL of its key");
        must(admin, ":1", "DEL %s", l2);
    }
    if (w)
        redisFree(w);
    test_wakeups_db_and_resp3(admin);
    printf("h. BZPOPMIN/BZPOPMAX/BZMPOP/BLMPOP/BLPOP/BRPOP/BRPOPLPUSH woken by ZADD, RPUSH, LPUSH, LMOVE, "
           "ZUNIONSTORE, RENAME, EXEC\n");
}

/* ---- i. keys on several shards ------------------------------------------ */

#define WRONGTYPE "-WRONGTYPE Operation against a key holding the wrong kind of value"
#define SPREAD_WAITERS 10
#define SPREAD_CONSUMERS 4
#define SPREAD_PRODUCERS 3

/* k[t] = "{tags[t]}name": with 4 shards, one key per shard */
static void spread_names(char k[NTAGS][96], const char *name)
{
    for (int t = 0; t < NTAGS; t++)
        tagged(k[t], sizeof k[t], t, name);
}

/* "[key, item]" */
static const char *pair(char *buf, size_t size, const char *key, const char *item)
{
    snprintf(buf, size, "[%s, %s]", key, item);
    return buf;
}

/* the tag whose keys live on c's home shard (CLIENT INFO shard=); 0 when
 * the server shows none (Redis) */
static int home_tag(redisContext *c)
{
    redisReply *r = command(c, "CLIENT INFO");
    const char *p = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, " shard=") : NULL;
    int home = p ? atoi(p + 7) : -1, tag = 0;
    freeReplyObject(r);
    for (int t = 0; t < NTAGS && home >= 0; t++)
        if (pc_slot_shard(pc_key_slot(tags[t], strlen(tags[t])), NTAGS) == home)
            tag = t;
    return tag;
}

/* data there: the first key in the command's order that holds some answers
 * at once; a key of another type before it answers WRONGTYPE */
static void several_at_once(redisContext *admin, redisContext *c)
{
    char k[NTAGS][96], z[NTAGS][96], exp[400];
    spread_names(k, "now");
    spread_names(z, "now-z");
    must(admin, ":2", "RPUSH %s first second", k[1]);
    must(admin, ":1", "RPUSH %s z", k[2]);
    must(c, pair(exp, sizeof exp, k[1], "first"), "BLPOP %s %s %s 0", k[0], k[1], k[2]);
    must(c, pair(exp, sizeof exp, k[2], "z"), "BRPOP %s %s %s 0", k[2], k[1], k[0]);
    must(c, pair(exp, sizeof exp, k[1], "second"), "BRPOP %s %s %s %s 0", k[3], k[0], k[2], k[1]);
    must(admin, ":0", "EXISTS %s %s %s %s", k[0], k[1], k[2], k[3]);

    /* a string before the key with data: WRONGTYPE, nothing popped; after it: not looked at */
    must(admin, "+OK", "SET %s str", k[0]);
    must(admin, ":1", "RPUSH %s x", k[1]);
    must(c, WRONGTYPE, "BLPOP %s %s 0", k[0], k[1]);
    must(c, WRONGTYPE, "BRPOP %s %s %s 0", k[3], k[0], k[1]);
    must(c, WRONGTYPE, "BLMPOP 0 3 %s %s %s LEFT", k[3], k[0], k[1]);
    must(admin, ":1", "LLEN %s", k[1]);
    must(c, pair(exp, sizeof exp, k[1], "x"), "BLPOP %s %s 0", k[1], k[0]);
    must(admin, ":1", "DEL %s", k[0]);

    must(admin, ":2", "ZADD %s 1 a 2 b", z[1]);
    must(admin, ":1", "ZADD %s 5 e", z[3]);
    snprintf(exp, sizeof exp, "[%s, b, 2]", z[1]);
    must(c, exp, "BZPOPMAX %s %s %s 0", z[0], z[1], z[3]);
    snprintf(exp, sizeof exp, "[%s, e, 5]", z[3]);
    must(c, exp, "BZPOPMIN %s %s %s 0", z[2], z[3], z[1]);
    must(admin, ":1", "RPUSH %s l", z[0]);
    must(c, WRONGTYPE, "BZPOPMIN %s %s 0", z[0], z[1]);
    must(c, WRONGTYPE, "BZMPOP 0 2 %s %s MIN", z[0], z[1]);
    snprintf(exp, sizeof exp, "[%s, [[a, 1]]]", z[1]);
    must(c, exp, "BZMPOP 0 3 %s %s %s MAX COUNT 5", z[2], z[1], z[0]);
    must(admin, ":1", "DEL %s", z[0]);
    must(admin, ":3", "RPUSH %s a b c", k[2]);
    snprintf(exp, sizeof exp, "[%s, [c, b]]", k[2]);
    must(c, exp, "BLMPOP 0 3 %s %s %s RIGHT COUNT 2", k[0], k[2], k[1]);
    must(admin, ":1", "DEL %s", k[2]);
    must(admin, ":0", "EXISTS %s %s %s %s", k[0], k[1], k[2], k[3]);
    must(admin, ":0", "EXISTS %s %s %s %s", z[0], z[1], z[2], z[3]);
}

/* blocked on keys of three shards, woken from another connection */
static void several_woken(redisContext *admin)
{
    char k[NTAGS][96], exp[400];
    spread_names(k, "woken");
    redisContext *c = connect_client("several shards: woken");
    long long id = client_id(c);
    send_command(c, "BLPOP %s %s %s 0", k[0], k[1], k[2]);
    wait_blocked1(admin, id, "blpop");
    /* the push serves the waiter before the pusher's next command (pipelined behind it) runs */
    send_command(admin, "RPUSH %s item", k[2]);
    send_command(admin, "LLEN %s", k[2]);
    expect_reply(next_reply(admin), ":1", "RPUSH %s item, a client blocked on 3 shards", k[2]);
    expect_reply(next_reply(admin), ":0", "LLEN %s pipelined behind the RPUSH that serves a client blocked on 3 shards",
                 k[2]);
    expect_reply(next_reply(c), pair(exp, sizeof exp, k[2], "item"), "BLPOP of 3 shards, RPUSH to the last key");
    send_command(c, "BRPOP %s %s %s 0", k[0], k[1], k[2]);
    wait_blocked1(admin, id, "brpop");
    must(admin, ":2", "LPUSH %s a b", k[0]);
    expect_reply(next_reply(c), pair(exp, sizeof exp, k[0], "a"), "BRPOP of 3 shards, LPUSH a b to the first key");
    must(c, "[b]", "LRANGE %s 0 -1", k[0]);
    must(admin, ":1", "DEL %s", k[0]);

    /* the key of the client's own home shard, first and last */
    int h = home_tag(c), o = (h + 1) % NTAGS;
    send_command(c, "BLPOP %s %s 0", k[o], k[h]);
    wait_blocked1(admin, id, "blpop");
    must(admin, ":1", "RPUSH %s home", k[h]);
    expect_reply(next_reply(c), pair(exp, sizeof exp, k[h], "home"), "BLPOP %s %s (home last), push to home", k[o],
                 k[h]);
    send_command(c, "BLPOP %s %s 0", k[h], k[o]);
    wait_blocked1(admin, id, "blpop");
    must(admin, ":1", "RPUSH %s other", k[o]);
    expect_reply(next_reply(c), pair(exp, sizeof exp, k[o], "other"), "BLPOP %s %s (home first), push to the other",
                 k[h], k[o]);
    send_command(c, "BLPOP %s %s 0", k[o], k[h]);
    wait_blocked1(admin, id, "blpop");
    must(admin, ":1", "RPUSH %s home2", k[h]);
    expect_reply(next_reply(c), pair(exp, sizeof exp, k[h], "home2"), "BLPOP %s %s again, push to home", k[o],
                 k[h]);

    /* a string written at one key serves nobody; a push to another does */
    send_command(c, "BLPOP %s %s 0", k[0], k[1]);
    wait_blocked1(admin, id, "blpop");
    must(admin, "+OK", "SET %s str", k[0]);
    must(admin, ":1", "RPUSH %s v", k[1]);
    expect_reply(next_reply(c), pair(exp, sizeof exp, k[1], "v"), "BLPOP %s %s: SET of the first, RPUSH of the second",
                 k[0], k[1]);
    must(admin, ":1", "DEL %s", k[0]);
    must(admin, ":0", "EXISTS %s %s %s %s", k[0], k[1], k[2], k[3]);
    if (c)
        redisFree(c);
}

/* waiters on one key, some of them blocked on keys of other shards too, are
 * served in the order they blocked */
static void several_fifo(redisContext *admin)
{
    char k[NTAGS][96], exp[400];
    spread_names(k, "fifo");
    redisContext *w[3];
    long long ids[3];
    for (int i = 0; i < 3; i++) {
        w[i] = connect_client("several shards: fifo");
        ids[i] = client_id(w[i]);
    }
    send_command(w[0], "BLPOP %s %s 0", k[0], k[1]);
    wait_blocked1(admin, ids[0], "blpop");
    send_command(w[1], "BLPOP %s 0", k[1]);
    wait_blocked1(admin, ids[1], "blpop");
    send_command(w[2], "BLPOP %s %s 0", k[1], k[2]);
    wait_blocked1(admin, ids[2], "blpop");
    must(admin, ":3", "RPUSH %s a b c", k[1]);
    expect_reply(next_reply(w[0]), pair(exp, sizeof exp, k[1], "a"), "fifo: 1st (BLPOP k0 k1), RPUSH k1 a b c");
    expect_reply(next_reply(w[1]), pair(exp, sizeof exp, k[1], "b"), "fifo: 2nd (BLPOP k1), RPUSH k1 a b c");
    expect_reply(next_reply(w[2]), pair(exp, sizeof exp, k[1], "c"), "fifo: 3rd (BLPOP k1 k2), RPUSH k1 a b c");
    must(admin, ":0", "EXISTS %s", k[1]);

    /* one element at a time: the one blocked first takes it, the others wait */
    send_command(w[2], "BRPOP %s %s %s 0", k[3], k[1], k[0]);
    wait_blocked1(admin, ids[2], "brpop");
    send_command(w[0], "BLPOP %s 0", k[1]);
    wait_blocked1(admin, ids[0], "blpop");
    send_command(w[1], "BLPOP %s %s 0", k[2], k[1]);
    wait_blocked1(admin, ids[1], "blpop");
    must(admin, ":1", "RPUSH %s x", k[1]);
    expect_reply(next_reply(w[2]), pair(exp, sizeof exp, k[1], "x"), "fifo one by one: 1st (BRPOP k3 k1 k0)");
    must(admin, ":0", "EXISTS %s", k[1]);
    if (client_state(admin, ids[0], "blpop") < 2 || client_state(admin, ids[1], "blpop") < 2)
        pc_fail("fifo one by one: the 2nd or 3rd waiter is no longer blocked after one element");
    must(admin, ":1", "RPUSH %s y", k[1]);
    expect_reply(next_reply(w[0]), pair(exp, sizeof exp, k[1], "y"), "fifo one by one: 2nd (BLPOP k1)");
    must(admin, ":1", "RPUSH %s z", k[1]);
    expect_reply(next_reply(w[1]), pair(exp, sizeof exp, k[1], "z"), "fifo one by one: 3rd (BLPOP k2 k1)");
    must(admin, ":0", "EXISTS %s %s %s %s", k[0], k[1], k[2], k[3]);
    for (int i = 0; i < 3; i++)
        if (w[i])
            redisFree(w[i]);
}

/* BLMOVE / BRPOPLPUSH from one shard to another */
static void several_move(redisContext *admin)
{
    char k[NTAGS][96], exp[400];
    spread_names(k, "move");
    const char *src = k[0], *dst = k[1];
    must(admin, ":2", "RPUSH %s a b", src);
    must(admin, "a", "BLMOVE %s %s LEFT RIGHT 0", src, dst);
    must(admin, "[a]", "LRANGE %s 0 -1", dst);
    must(admin, "[b]", "LRANGE %s 0 -1", src);
    must(admin, "b", "BRPOPLPUSH %s %s 0", src, dst);
    must(admin, "[b, a]", "LRANGE %s 0 -1", dst);
    must(admin, ":0", "EXISTS %s", src);
    must(admin, ":1", "DEL %s", dst);
    /* a destination of another type: WRONGTYPE and nothing moves */
    must(admin, ":2", "RPUSH %s a b", src);
    must(admin, "+OK", "SET %s str", dst);
    must(admin, WRONGTYPE, "BLMOVE %s %s LEFT RIGHT 0", src, dst);
    must(admin, WRONGTYPE, "BRPOPLPUSH %s %s 0", src, dst);
    must(admin, "[a, b]", "LRANGE %s 0 -1", src);
    must(admin, "str", "GET %s", dst);
    must(admin, ":2", "DEL %s %s", src, dst);

    redisContext *x = connect_client("several shards: move X"), *y = connect_client("several shards: move Y"),
                 *z = connect_client("several shards: move Z");
    long long idx = client_id(x), idy = client_id(y), idz = client_id(z);
    send_command(x, "BLMOVE %s %s LEFT RIGHT 0", src, dst);
    wait_blocked1(admin, idx, "blmove");
    must(admin, ":1", "LPUSH %s v", src);
    expect_reply(next_reply(x), "v", "BLMOVE %s %s woken by LPUSH", src, dst);
    must(admin, "[v]", "LRANGE %s 0 -1", dst);
    must(admin, ":0", "EXISTS %s", src);
    must(admin, ":1", "DEL %s", dst);
    send_command(x, "BRPOPLPUSH %s %s 0", dst, src);
    wait_blocked1(admin, idx, "brpoplpush");
    must(admin, ":2", "RPUSH %s w1 w2", dst);
    expect_reply(next_reply(x), "w2", "BRPOPLPUSH %s %s woken by RPUSH", dst, src);
    must(admin, "[w2]", "LRANGE %s 0 -1", src);
    must(admin, "[w1]", "LRANGE %s 0 -1", dst);
    must(admin, ":2", "DEL %s %s", src, dst);

    /* a chain: X moves s1 -> s2, Y pops s2 */
    const char *s1 = k[2], *s2 = k[3];
    send_command(x, "BLMOVE %s %s RIGHT LEFT 0", s1, s2);
    wait_blocked1(admin, idx, "blmove");
    send_command(y, "BLPOP %s 0", s2);
    wait_blocked1(admin, idy, "blpop");
    must(admin, ":1", "RPUSH %s v", s1);
    expect_reply(next_reply(x), "v", "chain of shards: BLMOVE %s %s", s1, s2);
    expect_reply(next_reply(y), pair(exp, sizeof exp, s2, "v"), "chain of shards: BLPOP of BLMOVE's destination");
    must(admin, ":0", "EXISTS %s %s", s1, s2);
    /* three links over four shards; the last waiter on two shards */
    send_command(x, "BLMOVE %s %s RIGHT LEFT 0", k[0], k[1]);
    wait_blocked1(admin, idx, "blmove");
    send_command(y, "BRPOPLPUSH %s %s 0", k[1], k[2]);
    wait_blocked1(admin, idy, "brpoplpush");
    send_command(z, "BRPOP %s %s 0", k[3], k[2]);
    wait_blocked1(admin, idz, "brpop");
    must(admin, ":2", "RPUSH %s first last", k[0]);
    expect_reply(next_reply(x), "last", "chain of shards: link 1 (BLMOVE k0 k1)");
    expect_reply(next_reply(y), "last", "chain of shards: link 2 (BRPOPLPUSH k1 k2)");
    expect_reply(next_reply(z), pair(exp, sizeof exp, k[2], "last"), "chain of shards: link 3 (BRPOP k3 k2)");
    must(admin, "[first]", "LRANGE %s 0 -1", k[0]);
    must(admin, ":1", "DEL %s", k[0]);
    must(admin, ":0", "EXISTS %s %s %s %s", k[0], k[1], k[2], k[3]);
    redisFree(x);
    redisFree(y);
    redisFree(z);
}

/* BZPOPMIN / BZPOPMAX / BLMPOP / BZMPOP on keys of several shards, woken */
static void several_other_commands(redisContext *admin)
{
    char k[NTAGS][96], exp[400];
    spread_names(k, "other");
    redisContext *c = connect_client("several shards: other commands");
    long long id = client_id(c);
    send_command(c, "BZPOPMIN %s %s 0", k[0], k[1]);
    wait_blocked1(admin, id, "bzpopmin");
    must(admin, ":2", "ZADD %s 1.5 m 3 n", k[1]);
    snprintf(exp, sizeof exp, "[%s, m, 1.5]", k[1]);
    expect_reply(next_reply(c), exp, "BZPOPMIN k0 k1 woken by ZADD k1");
    must(admin, ":1", "ZCARD %s", k[1]);
    send_command(c, "BZPOPMAX %s %s %s 0", k[0], k[2], k[3]);
    wait_blocked1(admin, id, "bzpopmax");
    must(admin, ":2", "ZADD %s 1 a 2 b", k[3]);
    snprintf(exp, sizeof exp, "[%s, b, 2]", k[3]);
    expect_reply(next_reply(c), exp, "BZPOPMAX k0 k2 k3 woken by ZADD k3");
    must(admin, ":2", "DEL %s %s", k[1], k[3]);

    send_command(c, "BLMPOP 0 2 %s %s LEFT", k[0], k[1]);
    wait_blocked1(admin, id, "blmpop");
    must(admin, ":1", "RPUSH %s a", k[1]);
    snprintf(exp, sizeof exp, "[%s, [a]]", k[1]);
    expect_reply(next_reply(c), exp, "BLMPOP 0 2 k0 k1 LEFT woken by RPUSH k1");
    must(admin, ":0", "EXISTS %s", k[1]);
    send_command(c, "BLMPOP 0 2 %s %s RIGHT COUNT 2", k[2], k[0]);
    wait_blocked1(admin, id, "blmpop");
    must(admin, ":3", "RPUSH %s a b c", k[0]);
    snprintf(exp, sizeof exp, "[%s, [c, b]]", k[0]);
    expect_reply(next_reply(c), exp, "BLMPOP 0 2 k2 k0 RIGHT COUNT 2 woken by RPUSH k0");
    must(admin, "[a]", "LRANGE %s 0 -1", k[0]);
    must(admin, ":1", "DEL %s", k[0]);

    send_command(c, "BZMPOP 0 2 %s %s MIN", k[0], k[1]);
    wait_blocked1(admin, id, "bzmpop");
    must(admin, ":2", "ZADD %s 2 b 1 a", k[0]);
    snprintf(exp, sizeof exp, "[%s, [[a, 1]]]", k[0]);
    expect_reply(next_reply(c), exp, "BZMPOP 0 2 k0 k1 MIN woken by ZADD k0");
    must(admin, ":1", "ZCARD %s", k[0]);
    must(admin, ":1", "DEL %s", k[0]);
    send_command(c, "BZMPOP 0 3 %s %s %s MAX COUNT 5", k[0], k[1], k[2]);
    wait_blocked1(admin, id, "bzmpop");
    must(admin, ":2", "ZADD %s 1 a 2 b", k[2]);
    snprintf(exp, sizeof exp, "[%s, [[b, 2], [a, 1]]]", k[2]);
    expect_reply(next_reply(c), exp, "BZMPOP 0 3 k0 k1 k2 MAX COUNT 5 woken by ZADD k2");
    must(admin, ":0", "EXISTS %s %s %s %s", k[0], k[1], k[2], k[3]);

    /* inside MULTI nothing blocks: a nil in EXEC's array, or the data */
    must(c, "+OK", "MULTI");
    must(c, "+QUEUED", "BLPOP %s %s 0", k[0], k[1]);
    must(c, "+QUEUED", "BLMOVE %s %s LEFT RIGHT 0", k[2], k[3]);
    must(c, "+QUEUED", "BZPOPMIN %s %s 0", k[0], k[3]);
    must(c, "[(nil), (nil), (nil)]", "EXEC");
    must(admin, ":1", "RPUSH %s item", k[1]);
    must(admin, ":1", "RPUSH %s m", k[2]);
    must(c, "+OK", "MULTI");
    must(c, "+QUEUED", "BLPOP %s %s 0", k[0], k[1]);
    must(c, "+QUEUED", "BLMOVE %s %s LEFT RIGHT 0", k[2], k[3]);
    must(c, "+QUEUED", "LRANGE %s 0 -1", k[3]);
    snprintf(exp, sizeof exp, "[[%s, item], m, [m]]", k[1]);
    must(c, exp, "EXEC");
    must(admin, ":1", "DEL %s", k[3]);
    must(admin, ":0", "EXISTS %s %s %s %s", k[0], k[1], k[2], k[3]);
    if (c)
        redisFree(c);
}

/* timeouts: nil, not before the timeout; the timed-out client takes nothing later */
static void several_timeouts(redisContext *admin)
{
    static const struct {
        const char *fmt;
        int min_ms;
    } cases[] = {
        { "BLPOP %s %s 0.2", 150 },
        { "BRPOP %s %s %s 0.1", 70 },
        { "BLMOVE %s %s LEFT RIGHT 0.2", 150 },
        { "BRPOPLPUSH %s %s 0.1", 70 },
        { "BLMPOP 0.1 3 %s %s %s LEFT", 70 },
        { "BZPOPMIN %s %s 0.1", 70 },
        { "BZPOPMAX %s %s %s 0.1", 70 },
        { "BZMPOP 0.1 2 %s %s MIN COUNT 3", 70 },
    };
    char k[NTAGS][96];
    spread_names(k, "timeout");
    redisContext *c = connect_client("several shards: timeouts");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int t = (int)i % NTAGS; /* the first key's shard varies */
        const char *a = k[t], *b = k[(t + 1) % NTAGS], *d = k[(t + 2) % NTAGS];
        char cmd[400];
        snprintf(cmd, sizeof cmd, cases[i].fmt, a, b, d); /* a format with fewer %s ignores the rest */
        expect_timeout(c, cases[i].min_ms, cmd);
        must(admin, ":1", "RPUSH %s x", a);
        must(admin, ":1", "LLEN %s", a);
        must(admin, ":1", "RPUSH %s y", b);
        must(admin, ":1", "LLEN %s", b);
        must(admin, ":2", "DEL %s %s", a, b);
        must(admin, ":0", "EXISTS %s %s %s %s", k[0], k[1], k[2], k[3]);
    }
    must(c, "+PONG", "PING");
    if (c)
        redisFree(c);
}

/* disconnected, killed or unblocked while blocked on several shards */
static void several_gone_and_unblocked(redisContext *admin)
{
    char k[NTAGS][96], cmd[400];
    spread_names(k, "gone");
    const char *keys[] = { k[0], k[1], k[2] };
    block_and_disconnect(admin, keys, 3, 1, false);
    block_and_disconnect(admin, keys, 3, 1, true);
    block_and_disconnect(admin, keys, 2, 5, false);
    block_and_disconnect(admin, keys, 3, 5, true);

    redisContext *a = connect_client("several shards: killed");
    long long id = client_id(a);
    send_command(a, "BLPOP %s %s %s 0", k[0], k[1], k[3]);
    wait_blocked1(admin, id, "blpop");
    must(admin, ":1", "CLIENT KILL ID %lld", id);
    wait_gone(admin, id);
    must(admin, ":1", "RPUSH %s survivor", k[3]);
    must(admin, ":1", "LLEN %s", k[3]);
    must(admin, ":1", "DEL %s", k[3]);
    if (a)
        redisFree(a);
    /* gone at once: the command sent and the connection closed right after (FIN or RST), whatever step the
     * command had reached: nothing stays waiting */
    long before = count_clients(admin);
    for (int i = 0; i < 40; i++) {
        struct pc_conn *raw = pc_conn_open(port);
        const char *blpop[] = { "BLPOP", k[0], k[1], k[2], "0" };
        if (raw)
            pc_conn_send(raw, 5, blpop, NULL);
        if (i % 2)
            pc_conn_abort(&raw);
        else
            pc_conn_close(&raw);
    }
    long left = wait_client_count(admin, before);
    if (left != before)
        pc_fail("several shards, gone at once: %ld clients listed, want %ld", left, before);
    for (int t = 0; t < 3; t++) {
        must(admin, ":1", "RPUSH %s survivor", k[t]);
        must(admin, ":1", "LLEN %s", k[t]);
        must(admin, ":1", "DEL %s", k[t]);
    }
    long long blocked = wait_info_clients(admin, "blocked_clients", 0);
    if (blocked != 0)
        pc_fail("several shards, disconnects: INFO blocked_clients is %lld, want 0", blocked);

    a = connect_client("several shards: unblocked");
    id = client_id(a);
    const char *unblocked_error = "-UNBLOCKED client unblocked via CLIENT UNBLOCK";
    snprintf(cmd, sizeof cmd, "BLPOP %s %s %s 0", k[0], k[1], k[2]);
    unblock_case(admin, a, id, "blpop", cmd, NULL, "(nil)");
    unblock_case(admin, a, id, "blpop", cmd, "ERROR", unblocked_error);
    snprintf(cmd, sizeof cmd, "BLMOVE %s %s LEFT RIGHT 0", k[3], k[0]);
    unblock_case(admin, a, id, "blmove", cmd, "TIMEOUT", "(nil)");
    snprintf(cmd, sizeof cmd, "BZPOPMAX %s %s 0", k[1], k[2]);
    unblock_case(admin, a, id, "bzpopmax", cmd, "ERROR", unblocked_error);
    snprintf(cmd, sizeof cmd, "BLMPOP 0 2 %s %s LEFT", k[2], k[3]);
    unblock_case(admin, a, id, "blmpop", cmd, NULL, "(nil)");
    /* no waiter left behind */
    for (int t = 0; t < NTAGS; t++) {
        must(admin, ":1", "RPUSH %s x", k[t]);
        must(admin, ":1", "LLEN %s", k[t]);
    }
    must(admin, ":4", "DEL %s %s %s %s", k[0], k[1], k[2], k[3]);
    snprintf(cmd, sizeof cmd, "CLIENT UNBLOCK %lld", id);
    expect_reply(command_line(admin, cmd), ":0", "%s of an idle client (after several shards)", cmd);
    /* and it blocks and is served again */
    send_command(a, "BLPOP %s %s 0", k[2], k[1]);
    wait_blocked1(admin, id, "blpop");
    must(admin, ":1", "RPUSH %s y", k[1]);
    char exp[400];
    expect_reply(next_reply(a), pair(exp, sizeof exp, k[1], "y"), "BLPOP of several shards after the unblocks");
    must(admin, ":0", "EXISTS %s %s %s %s", k[0], k[1], k[2], k[3]);
    if (a)
        redisFree(a);
    blocked = wait_info_clients(admin, "blocked_clients", 0);
    if (blocked != 0)
        pc_fail("several shards, unblocks: INFO blocked_clients is %lld, want 0", blocked);
}

/* SPREAD_WAITERS clients blocked on keys of three shards, as many pushes of
 * one element spread over the three: each client gets one, each element goes once */
static void several_many_waiters(redisContext *admin)
{
    char k[NTAGS][96];
    spread_names(k, "many");
    redisContext *w[SPREAD_WAITERS];
    long long ids[SPREAD_WAITERS];
    for (int i = 0; i < SPREAD_WAITERS; i++) {
        w[i] = connect_client("several shards: one of many");
        ids[i] = client_id(w[i]);
        send_command(w[i], "BLPOP %s %s %s 0", k[0], k[1], k[2]);
    }
    wait_blocked(admin, ids, SPREAD_WAITERS, "blpop");
    for (int i = 0; i < SPREAD_WAITERS; i++)
        must(admin, ":1", "RPUSH %s item-%d", k[i % 3], i);
    int got[SPREAD_WAITERS] = { 0 };
    for (int i = 0; i < SPREAD_WAITERS; i++) {
        redisReply *r = next_reply(w[i]);
        int n;
        if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[0]->type == REDIS_REPLY_STRING &&
            r->element[1]->type == REDIS_REPLY_STRING && sscanf(r->element[1]->str, "item-%d", &n) == 1 &&
            n >= 0 && n < SPREAD_WAITERS && strcmp(r->element[0]->str, k[n % 3]) == 0)
            got[n]++;
        else
            pc_fail("%d waiters on 3 shards: waiter %d got %s", SPREAD_WAITERS, i, describe(r));
        freeReplyObject(r);
        if (w[i])
            redisFree(w[i]);
    }
    for (int i = 0; i < SPREAD_WAITERS; i++)
        if (got[i] != 1)
            pc_fail("%d waiters on 3 shards: item-%d served %d times", SPREAD_WAITERS, i, got[i]);
    must(admin, ":0", "EXISTS %s %s %s %s", k[0], k[1], k[2], k[3]);
}

/* consumers BRPOP from four keys (four shards), producers LPUSH to any of
 * them: each item arrives exactly once */
/* CLIENT UNBLOCK every blocked client, over and over, until told to stop (the consumers see nils) */
static atomic_bool unblocker_stop;
static atomic_long unblocked_total;

static void *unblocker(void *arg)
{
    (void)arg;
    redisContext *c = pc_hiredis_connect(port);
    while (c && !atomic_load(&unblocker_stop)) {
        redisReply *r = redisCommand(c, "CLIENT LIST");
        if (!r)
            break;
        for (const char *line = r->type == REDIS_REPLY_STRING ? r->str : ""; *line;) {
            const char *end = strchr(line, '\n');
            long long id;
            if (strstr(line, " flags=b ") && (!end || strstr(line, " flags=b ") < end) && sscanf(line, "id=%lld", &id) == 1)
                freeReplyObject(redisCommand(c, "CLIENT UNBLOCK %lld", id)), atomic_fetch_add(&unblocked_total, 1);
            line = end ? end + 1 : line + strlen(line);
        }
        freeReplyObject(r);
        pc_sleep_ms(1);
    }
    if (c)
        redisFree(c);
    return NULL;
}

/*
 * Consumers BRPOP keys of 4 shards while producers LPUSH to them: every item
 * arrives exactly once.  timeout: the consumers' ("0.01": most pops time out
 * while pushes serve their parts, so timed-out parts give back what they
 * took); unblock: a thread CLIENT UNBLOCKs blocked consumers all along.
 */
static void several_producer_consumer(redisContext *admin, const char *timeout, bool unblock)
{
    int items = pc_sanitized() ? 150 : 667;
    long expected = (long)SPREAD_PRODUCERS * items, lost = 0, duplicated = 0;
    atomic_int *received = calloc((size_t)expected, sizeof(atomic_int));
    struct worker consumers[SPREAD_CONSUMERS], producers[SPREAD_PRODUCERS];
    reset_tallies();
    for (int i = 0; i < SPREAD_CONSUMERS; i++) {
        consumers[i] = (struct worker){ .cmd = "BRPOP", .timeout = timeout, .nkeys = NTAGS, .index = i,
                                        .items = items, .producers = SPREAD_PRODUCERS, .received = received };
        spread_names(consumers[i].keys, "spread-queue");
    }
    for (int i = 0; i < SPREAD_PRODUCERS; i++) {
        producers[i] = (struct worker){ .cmd = "LPUSH", .nkeys = NTAGS, .index = i, .items = items,
                                        .seed = (unsigned)(i * 7919 + 17) };
        spread_names(producers[i].keys, "spread-queue");
    }
    pthread_t unblock_thread;
    atomic_store(&unblocker_stop, false);
    atomic_store(&unblocked_total, 0);
    if (unblock)
        pthread_create(&unblock_thread, NULL, unblocker, NULL);
    start_workers(consumers, SPREAD_CONSUMERS, consumer);
    start_workers(producers, SPREAD_PRODUCERS, producer);
    join_workers(producers, SPREAD_PRODUCERS);
    /* a stop item could overtake real items of other keys: wait for every item first */
    long long deadline = pc_now_ms() + CONSUMER_DEADLINE_MS;
    while (atomic_load(&received_total) < expected && atomic_load(&consumer_errors) == 0 && pc_now_ms() < deadline)
        pc_sleep_ms(10);
    atomic_store(&unblocker_stop, true);
    if (unblock)
        pthread_join(unblock_thread, NULL);
    const char *const *keys = (const char *const[]){ consumers[0].keys[0], consumers[0].keys[1],
                                                     consumers[0].keys[2], consumers[0].keys[3] };
    for (int i = 0; i < SPREAD_CONSUMERS; i++)
        freeReplyObject(command(admin, "RPUSH %s stop", keys[i % NTAGS]));
    join_workers(consumers, SPREAD_CONSUMERS);
    tally_items("producer/consumer on 4 shards", received, SPREAD_PRODUCERS, items, &lost, &duplicated);
    for (int t = 0; t < NTAGS; t++)
        expect_reply(command(admin, "LLEN %s", keys[t]), ":0", "producer/consumer on 4 shards: LLEN %s at the end",
                     keys[t]);
    freeReplyObject(command(admin, "DEL %s %s %s %s", keys[0], keys[1], keys[2], keys[3]));
    check_totals("producer/consumer on 4 shards", expected, lost, duplicated);
    free(received);
    printf("i. producer/consumer on 4 shards (timeout %s, %ld CLIENT UNBLOCKs): %ld items, %d consumers on all 4 keys: "
           "received %ld\n", timeout, atomic_load(&unblocked_total), expected, SPREAD_CONSUMERS,
           atomic_load(&received_total));
}

static void test_several_shards(redisContext *admin)
{
    static const char *const names[] = { "now", "now-z", "woken", "fifo", "move", "other", "timeout", "gone", "many" };
    redisContext *c = connect_client("several shards");
    several_at_once(admin, c);
    if (c)
        redisFree(c);
    several_woken(admin);
    several_fifo(admin);
    several_move(admin);
    several_other_commands(admin);
    several_timeouts(admin);
    several_gone_and_unblocked(admin);
    several_many_waiters(admin);
    /* whatever a failed check left behind (each part checked its keys): DBSIZE 0 at the end stays meaningful */
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char k[NTAGS][96];
        spread_names(k, names[i]);
        freeReplyObject(command(admin, "DEL %s %s %s %s", k[0], k[1], k[2], k[3]));
    }
    printf("i. keys on several shards: served at once in key order (WRONGTYPE first), woken, FIFO with one-key "
           "waiters, BLMOVE chains, timeouts, disconnects, CLIENT UNBLOCK, %d waiters\n", SPREAD_WAITERS);
    several_producer_consumer(admin, "2", false);
    several_producer_consumer(admin, "0.01", true);
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    port = srv.port;
    server_is_redis = srv.is_redis;
    char spread[PC_SPREAD_KEYS][64];
    pc_spread_keys("blk:", spread);
    for (int t = 0; t < NTAGS; t++)
        snprintf(tags[t], sizeof tags[t], "%.47s", spread[t * 5]); /* 0 5 10 15 */
    long long start = pc_now_ms();
    redisContext *admin = connect_client("admin");
    if (admin) {
        test_fifo(admin);
        test_timeouts(admin);
        test_client_unblock(admin);
        test_blmove_chain(admin);
        test_one_push_many_waiters(admin);
        test_wakeups(admin);
        test_disconnect(admin);
        test_several_shards(admin);
        test_producer_consumer(admin);
        must(admin, "+PONG", "PING");
        must(admin, ":0", "DBSIZE");
    }
    /* the server is stopped (SIGTERM, must exit 0) with a client still blocked */
    struct pc_conn *left_blocked = pc_conn_open(port);
    char key[96];
    tagged(key, sizeof key, 2, "at-shutdown");
    if (left_blocked && admin) {
        long long id = raw_client_id(left_blocked);
        const char *blpop[] = { "BLPOP", key, "0" };
        pc_conn_send(left_blocked, 3, blpop, NULL);
        wait_blocked1(admin, id, "blpop");
    }
    if (admin)
        redisFree(admin);
    printf("%s blocking flag: %s; %lld ms\n", srv.is_redis ? "redis" : "server",
           flag_b_shown == 1 ? "flags=b" : flag_b_shown == 0 ? "none (cmd= and a grace)" : "not probed",
           pc_now_ms() - start);
    pc_test_teardown(&srv);
    pc_conn_close(&left_blocked);
    return pc_test_done("test_blocking");
}
