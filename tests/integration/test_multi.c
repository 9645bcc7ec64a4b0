/*
 * test_multi: MULTI / EXEC / WATCH between connections and across shards.
 * Keys come from pc_spread_keys, so every part touches every shard.
 *
 * 1. Transfers: 16 counters start at 1000.  TRANSFER_THREADS clients move
 *    random amounts between two counters with optimistic locking -- WATCH src
 *    dst, GET both, then MULTI / DECRBY src / INCRBY dst / INCR <own done
 *    counter> / EXEC, retried while EXEC answers null (a watched key changed).
 *    A successful EXEC must answer exactly the balances read minus / plus the
 *    amount (nothing can have changed them in between).  An auditor meanwhile
 *    reads all 16 in one MULTI of GETs or one MGET: the sum is always 16000.
 *    At the end each counter is 1000 plus its net transfers and each client's
 *    done counter equals the transfers it counted.
 * 2. WATCH across connections: A sets and WATCHes a key, B writes it (SET,
 *    SET of the same value, DEL, INCR, EXPIRE, a transaction of its own,
 *    FLUSHALL), then A's MULTI / SET / EXEC answers null and the SET never
 *    happens -- for each of the 16 keys (A's home shard and the others), and
 *    with all 16 watched while B writes one.  Controls: B reads the key, or
 *    writes another one: EXEC runs.  A key A made expire between its WATCH
 *    and EXEC aborts the EXEC too (what Redis 7.0 does).
 * 3. Isolation: writers set all 16 keys to one value of their own in one
 *    pipelined MULTI ... EXEC, readers MGET them: never a mix.
 *
 * Threading: one hiredis connection per thread; the tallies are atomics.
 */
#include "testclient.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NKEYS PC_SPREAD_KEYS
#define START_BALANCE 1000
#define TOTAL_BALANCE (NKEYS * START_BALANCE)
#define TRANSFER_THREADS 4
#define MAX_AMOUNT 20
#define MAX_RETRIES_IN_A_ROW 10000 /* a transfer that never gets through: WATCH is broken */
#define ISO_WRITERS 3
#define ISO_READERS 3

static int port;

static unsigned next_rand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static const char *reply_text(const redisReply *r)
{
    if (!r)
        return "(no reply)";
    if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_ERROR)
        return r->str;
    if (r->type == REDIS_REPLY_NIL)
        return "(nil)";
    if (r->type == REDIS_REPLY_ARRAY)
        return "(array)";
    return r->type == REDIS_REPLY_INTEGER ? "(integer)" : "(other)";
}

static bool is_status(const redisReply *r, const char *status)
{
    return r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, status) == 0;
}

/* read the next pipelined reply; NULL when the connection broke */
static redisReply *next_reply(redisContext *c)
{
    redisReply *r = NULL;
    if (redisGetReply(c, (void **)&r) != REDIS_OK)
        return NULL;
    return r;
}

/* read the replies of a pipelined MULTI, `queued` commands, EXEC: +OK, +QUEUED
 * each, then EXEC's reply, which is returned.  NULL (and a failure counted)
 * when one of the others is wrong or the connection broke; every reply is
 * read even then, so the connection stays in step. */
static redisReply *read_transaction(redisContext *c, int queued, const char *who)
{
    bool ok = true;
    for (int i = 0; i <= queued; i++) {
        redisReply *r = next_reply(c);
        if (ok && !is_status(r, i == 0 ? "OK" : "QUEUED")) {
            pc_fail("%s: reply %d of the transaction: %s, want %s", who, i, reply_text(r),
                    i == 0 ? "+OK" : "+QUEUED");
            ok = false;
        }
        freeReplyObject(r);
    }
    redisReply *exec = next_reply(c);
    if (!ok || !exec) {
        if (ok)
            pc_fail("%s: no reply to EXEC", who);
        freeReplyObject(exec);
        return NULL;
    }
    return exec;
}

/* the balance in a GET reply; false if it is not an integer string */
static bool parse_balance(const redisReply *r, long *out)
{
    if (!r || r->type != REDIS_REPLY_STRING)
        return false;
    char *end;
    *out = strtol(r->str, &end, 10);
    return end != r->str && *end == '\0';
}

/* ---- 1. transfers ------------------------------------------------------- */

static char counters[NKEYS][64];
static char done_keys[TRANSFER_THREADS][64];
static int transfers_per_thread;
static atomic_int transferers_left;
static atomic_long audits, bad_sums, stale_execs;

struct transferer {
    int id;
    unsigned rng;
    long done, retries;
    long net[NKEYS]; /* what this client moved into (+) or out of (-) each counter */
};

static struct transferer transferers[TRANSFER_THREADS];

/* one attempt: 1 transferred, 0 EXEC answered null, -1 broken (failure counted) */
static int try_transfer(redisContext *c, struct transferer *t, int src, int dst)
{
    redisReply *r = redisCommand(c, "WATCH %s %s", counters[src], counters[dst]);
    bool ok = is_status(r, "OK");
    if (!ok)
        pc_fail("client %d: WATCH: %s", t->id, reply_text(r));
    freeReplyObject(r);
    if (!ok)
        return -1;
    redisAppendCommand(c, "GET %s", counters[src]);
    redisAppendCommand(c, "GET %s", counters[dst]);
    long have_src, have_dst;
    redisReply *rs = next_reply(c), *rd = next_reply(c);
    ok = parse_balance(rs, &have_src) && parse_balance(rd, &have_dst);
    if (!ok)
        pc_fail("client %d: GET of the counters: %s, %s", t->id, reply_text(rs), reply_text(rd));
    freeReplyObject(rs);
    freeReplyObject(rd);
    if (!ok)
        return -1;
    long amount = 1 + (long)(next_rand(&t->rng) % MAX_AMOUNT);
    if (amount > have_src)
        amount = have_src; /* balances never go negative; 0 is a valid transfer too */
    redisAppendCommand(c, "MULTI");
    redisAppendCommand(c, "DECRBY %s %ld", counters[src], amount);
    redisAppendCommand(c, "INCRBY %s %ld", counters[dst], amount);
    redisAppendCommand(c, "INCR %s", done_keys[t->id]);
    redisAppendCommand(c, "EXEC");
    r = read_transaction(c, 3, "transfer");
    if (!r)
        return -1;
    int result = -1;
    if (r->type == REDIS_REPLY_NIL) {
        result = 0;
    } else if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
               r->element[0]->type == REDIS_REPLY_INTEGER && r->element[1]->type == REDIS_REPLY_INTEGER &&
               r->element[2]->type == REDIS_REPLY_INTEGER) {
        long long got_src = r->element[0]->integer, got_dst = r->element[1]->integer;
        long long got_done = r->element[2]->integer;
        if ((got_src != have_src - amount || got_dst != have_dst + amount || got_done != t->done + 1) &&
            atomic_fetch_add(&stale_execs, 1) < 5)
            fprintf(stderr, "client %d: EXEC ran on changed keys: %s %ld-%ld -> %lld, %s %ld+%ld -> %lld, "
                    "done %lld (want %ld)\n", t->id, counters[src], have_src, amount, got_src,
                    counters[dst], have_dst, amount, got_dst, got_done, t->done + 1);
        t->net[src] -= amount;
        t->net[dst] += amount;
        result = 1;
    } else {
        pc_fail("client %d: EXEC of a transfer: %s", t->id, reply_text(r));
    }
    freeReplyObject(r);
    return result;
}

static void *transferer_main(void *arg)
{
    struct transferer *t = arg;
    redisContext *c = pc_hiredis_connect(port);
    if (!c)
        pc_fail("client %d: cannot connect", t->id);
    long in_a_row = 0;
    while (c && t->done < transfers_per_thread) {
        int src = (int)(next_rand(&t->rng) % NKEYS);
        int dst = (int)(next_rand(&t->rng) % (NKEYS - 1));
        if (dst >= src)
            dst++;
        int result = try_transfer(c, t, src, dst);
        if (result < 0)
            break;
        if (result == 0) {
            t->retries++;
            if (++in_a_row == MAX_RETRIES_IN_A_ROW) {
                pc_fail("client %d: %d EXECs in a row answered null", t->id, MAX_RETRIES_IN_A_ROW);
                break;
            }
        } else {
            t->done++;
            in_a_row = 0;
        }
    }
    if (c)
        redisFree(c);
    atomic_fetch_sub(&transferers_left, 1);
    return NULL;
}

/* the sum of the 16 balances in an array reply, or -1 if one is not a number */
static long sum_balances(const redisReply *r)
{
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != NKEYS)
        return -1;
    long sum = 0;
    for (size_t i = 0; i < r->elements; i++) {
        long v;
        if (!parse_balance(r->element[i], &v))
            return -1;
        sum += v;
    }
    return sum;
}

/* read all counters, alternately in one MULTI of GETs and with one MGET */
static void *auditor_main(void *arg)
{
    (void)arg;
    redisContext *c = pc_hiredis_connect(port);
    const char *mget[1 + NKEYS] = { "MGET" };
    for (int i = 0; i < NKEYS; i++)
        mget[1 + i] = counters[i];
    for (long n = 0; c && atomic_load(&transferers_left) > 0; n++) {
        redisReply *r;
        const char *how = n % 2 ? "MGET" : "MULTI of GETs";
        if (n % 2) {
            r = redisCommandArgv(c, 1 + NKEYS, mget, NULL);
        } else {
            redisAppendCommand(c, "MULTI");
            for (int i = 0; i < NKEYS; i++)
                redisAppendCommand(c, "GET %s", counters[i]);
            redisAppendCommand(c, "EXEC");
            r = read_transaction(c, NKEYS, "audit");
            if (!r)
                break;
        }
        long sum = sum_balances(r);
        if (sum < 0)
            pc_fail("audit %s: %s", how, reply_text(r));
        else if (sum != TOTAL_BALANCE && atomic_fetch_add(&bad_sums, 1) < 5)
            fprintf(stderr, "audit %s: the counters sum to %ld, want %d\n", how, sum, TOTAL_BALANCE);
        freeReplyObject(r);
        if (sum < 0)
            break;
        atomic_fetch_add(&audits, 1);
    }
    if (c)
        redisFree(c);
    return NULL;
}

static void check_final_balances(redisContext *c)
{
    long total = 0;
    for (int i = 0; i < NKEYS; i++) {
        long want = START_BALANCE, got;
        for (int t = 0; t < TRANSFER_THREADS; t++)
            want += transferers[t].net[i];
        redisReply *r = redisCommand(c, "GET %s", counters[i]);
        if (!parse_balance(r, &got))
            pc_fail("GET %s at the end: %s", counters[i], reply_text(r));
        else if (got != want)
            pc_fail("%s is %ld at the end, want %ld (1000 + its net transfers)", counters[i], got, want);
        else
            total += got;
        freeReplyObject(r);
    }
    if (total != TOTAL_BALANCE)
        pc_fail("the counters sum to %ld at the end, want %d", total, TOTAL_BALANCE);
    for (int t = 0; t < TRANSFER_THREADS; t++) {
        long got;
        redisReply *r = redisCommand(c, "GET %s", done_keys[t]);
        if (!parse_balance(r, &got) || got != transferers[t].done)
            pc_fail("%s is %s, want %ld (the client's successful EXECs)", done_keys[t], reply_text(r),
                    transferers[t].done);
        freeReplyObject(r);
    }
}

static void test_transfers(redisContext *c)
{
    pc_spread_keys("xfer:", counters);
    const char *mset[1 + 2 * NKEYS] = { "MSET" };
    char start[16];
    snprintf(start, sizeof start, "%d", START_BALANCE);
    for (int i = 0; i < NKEYS; i++) {
        mset[1 + 2 * i] = counters[i];
        mset[2 + 2 * i] = start;
    }
    redisReply *r = redisCommandArgv(c, 1 + 2 * NKEYS, mset, NULL);
    if (!is_status(r, "OK"))
        pc_fail("MSET of the counters: %s", reply_text(r));
    freeReplyObject(r);
    transfers_per_thread = pc_sanitized() ? 200 : 2000;
    atomic_store(&transferers_left, TRANSFER_THREADS);
    pthread_t threads[TRANSFER_THREADS], auditor;
    pthread_create(&auditor, NULL, auditor_main, NULL);
    for (int t = 0; t < TRANSFER_THREADS; t++) {
        snprintf(done_keys[t], sizeof done_keys[t], "xfer:done:%d", t);
        transferers[t] = (struct transferer){ .id = t, .rng = 7919u * (unsigned)(t + 1) };
        pthread_create(&threads[t], NULL, transferer_main, &transferers[t]);
    }
    for (int t = 0; t < TRANSFER_THREADS; t++)
        pthread_join(threads[t], NULL);
    pthread_join(auditor, NULL);
    long done = 0, retries = 0;
    for (int t = 0; t < TRANSFER_THREADS; t++) {
        done += transferers[t].done;
        retries += transferers[t].retries;
    }
    printf("transfers: %ld done by %d clients, %ld retried after a null EXEC, %ld audits\n", done,
           TRANSFER_THREADS, retries, atomic_load(&audits));
    if (atomic_load(&stale_execs))
        pc_fail("%ld EXECs ran although a watched key had changed since it was read",
                atomic_load(&stale_execs));
    if (atomic_load(&bad_sums))
        pc_fail("%ld audits saw a sum other than %d", atomic_load(&bad_sums), TOTAL_BALANCE);
    if (atomic_load(&audits) == 0)
        pc_fail("the auditor read nothing while the transfers ran");
    check_final_balances(c);
}

/* ---- 2. WATCH across connections ---------------------------------------- */

/* what connection B does between A's WATCH and A's EXEC */
enum touch { TOUCH_SET, TOUCH_SET_SAME, TOUCH_DEL, TOUCH_INCR, TOUCH_EXPIRE, TOUCH_MULTI, TOUCH_FLUSHALL,
             TOUCH_READ, TOUCH_OTHER_KEY };

static const struct touch_case {
    enum touch touch;
    const char *name;
    bool aborts;            /* A's EXEC must answer null */
    const char *value_after; /* the key's value after B, when A's SET did not run (NULL: missing) */
} touch_cases[] = {
    { TOUCH_SET, "SET", true, "from-b" },
    { TOUCH_SET_SAME, "SET of the same value", true, "10" },
    { TOUCH_DEL, "DEL", true, NULL },
    { TOUCH_INCR, "INCR", true, "11" },
    { TOUCH_EXPIRE, "EXPIRE", true, "10" },
    { TOUCH_MULTI, "MULTI/SET/EXEC", true, "from-b-multi" },
    { TOUCH_FLUSHALL, "FLUSHALL", true, NULL },
    { TOUCH_READ, "GET (control)", false, NULL },
    { TOUCH_OTHER_KEY, "SET of another key (control)", false, NULL },
};

static char watch_keys[NKEYS][64];

/* send one command and require a reply that is not an error */
static void must_run(redisContext *c, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (!r || r->type == REDIS_REPLY_ERROR)
        pc_fail("%s: %s", what, reply_text(r));
    freeReplyObject(r);
}

static void touch(redisContext *b, enum touch how, const char *key, const char *other_key)
{
    switch (how) {
    case TOUCH_SET:
        must_run(b, "B: SET", "SET %s from-b", key);
        break;
    case TOUCH_SET_SAME:
        must_run(b, "B: SET same", "SET %s 10", key);
        break;
    case TOUCH_DEL:
        must_run(b, "B: DEL", "DEL %s", key);
        break;
    case TOUCH_INCR:
        must_run(b, "B: INCR", "INCR %s", key);
        break;
    case TOUCH_EXPIRE:
        must_run(b, "B: EXPIRE", "EXPIRE %s 1000", key);
        break;
    case TOUCH_MULTI:
        must_run(b, "B: MULTI", "MULTI");
        must_run(b, "B: SET queued", "SET %s from-b-multi", key);
        must_run(b, "B: EXEC", "EXEC");
        break;
    case TOUCH_FLUSHALL:
        must_run(b, "B: FLUSHALL", "FLUSHALL");
        break;
    case TOUCH_READ:
        must_run(b, "B: GET", "GET %s", key);
        break;
    case TOUCH_OTHER_KEY:
        must_run(b, "B: SET other", "SET %s from-b", other_key);
        break;
    }
}

/* A: MULTI / SET key from-a / EXEC; then the key must hold from-a (aborts false)
 * or value_after (aborts true: EXEC answered null).  false on a failure. */
static bool exec_and_check(redisContext *a, const char *key, bool aborts, const char *value_after,
                           const char *what)
{
    redisAppendCommand(a, "MULTI");
    redisAppendCommand(a, "SET %s from-a", key);
    redisAppendCommand(a, "EXEC");
    redisReply *r = read_transaction(a, 1, what);
    if (!r)
        return false;
    bool ok = aborts ? r->type == REDIS_REPLY_NIL
                     : r->type == REDIS_REPLY_ARRAY && r->elements == 1 && is_status(r->element[0], "OK");
    if (!ok)
        pc_fail("%s, key %s: EXEC answered %s, want %s", what, key, reply_text(r),
                aborts ? "a null array" : "[OK]");
    freeReplyObject(r);
    const char *want = aborts ? value_after : "from-a";
    r = redisCommand(a, "GET %s", key);
    bool value_ok = r && (want ? r->type == REDIS_REPLY_STRING && strcmp(r->str, want) == 0
                               : r->type == REDIS_REPLY_NIL);
    if (!value_ok)
        pc_fail("%s, key %s: GET after EXEC: %s, want %s", what, key, reply_text(r), want ? want : "(nil)");
    freeReplyObject(r);
    return ok && value_ok;
}

static void test_watch_one_key(redisContext *a, redisContext *b)
{
    for (size_t n = 0; n < sizeof touch_cases / sizeof touch_cases[0]; n++) {
        const struct touch_case *tc = &touch_cases[n];
        char what[96];
        snprintf(what, sizeof what, "A WATCHes, B %s", tc->name);
        for (int i = 0; i < NKEYS; i++) {
            const char *key = watch_keys[i], *other = watch_keys[(i + 1) % NKEYS];
            must_run(a, "A: SET before WATCH", "SET %s 10", key);
            must_run(a, "A: WATCH", "WATCH %s", key);
            touch(b, tc->touch, key, other);
            if (!exec_and_check(a, key, tc->aborts, tc->value_after, what))
                break; /* one key per case is enough to report */
        }
    }
}

/* all 16 watched, B writes one of them */
static void test_watch_all_keys(redisContext *a, redisContext *b)
{
    const char *watch[1 + NKEYS] = { "WATCH" };
    for (int i = 0; i < NKEYS; i++)
        watch[1 + i] = watch_keys[i];
    for (int i = 0; i < NKEYS; i++) {
        must_run(a, "A: SET before WATCH", "SET %s 10", watch_keys[i]);
        redisReply *r = redisCommandArgv(a, 1 + NKEYS, watch, NULL);
        bool ok = is_status(r, "OK");
        if (!ok)
            pc_fail("A: WATCH of 16 keys: %s", reply_text(r));
        freeReplyObject(r);
        touch(b, TOUCH_SET, watch_keys[i], NULL);
        if (!ok || !exec_and_check(a, watch_keys[i], true, "from-b", "A WATCHes 16 keys, B SETs one"))
            break;
    }
}

/* A gives the key a 100 ms TTL, WATCHes it, waits until it expired: EXEC answers null */
static void test_watch_expiry(redisContext *a)
{
    for (int i = 0; i < NKEYS; i++) {
        must_run(a, "A: SET before WATCH", "SET %s 10", watch_keys[i]);
        must_run(a, "A: PEXPIRE", "PEXPIRE %s 100", watch_keys[i]);
        must_run(a, "A: WATCH", "WATCH %s", watch_keys[i]);
        pc_sleep_ms(250);
        if (!exec_and_check(a, watch_keys[i], true, NULL, "A WATCHes a key that then expires"))
            break;
    }
}

/*
 * Writes that change nothing touch no WATCH, as Redis signals only real
 * changes; the *STORE commands touch their destination, not the sources they
 * read.  %1$s is the watched key, %2$s another key (on another shard with
 * --threads 4).  Each no-op has a control beside it that does change the key.
 */
static const struct noop_case {
    const char *setup; /* A runs it before WATCH */
    const char *write; /* B runs it between WATCH and EXEC */
    bool aborts;
} noop_cases[] = {
    { "ZADD %1$s 1 a", "ZADD %1$s 1 a", false },
    { "ZADD %1$s 1 a", "ZADD %1$s 2 a", true },
    { "ZADD %1$s 1 a", "ZINCRBY %1$s 0 a", false },
    { "ZADD %1$s 1 a", "ZINCRBY %1$s 1 a", true },
    { "ZADD %1$s 1 a", "ZADD %1$s XX 1 b", false },
    { "ZADD %1$s 1 a", "ZADD %1$s NX INCR 1 a", false },
    { "SADD %1$s m", "SMOVE %1$s %1$s m", false },
    { "SADD %1$s m", "SMOVE %1$s %2$s m", true },
    { "SADD %1$s m", "SINTERSTORE %2$s %1$s", false },
    { "SADD %1$s m", "SINTERSTORE %1$s %2$s", true },
    { "DEL %1$s", "SUNIONSTORE %1$s %2$s", false },
    { "ZADD %1$s 1 a", "ZUNIONSTORE %2$s 1 %1$s", false },
    { "ZADD %1$s 1 a", "ZRANGESTORE %2$s %1$s 0 -1", false },
    { "DEL %1$s", "ZRANGESTORE %1$s %2$s 0 -1", false },
    { "RPUSH %1$s a", "LINSERT %1$s BEFORE zz q", false },
    { "RPUSH %1$s a", "LINSERT %1$s BEFORE a q", true },
    { "ZADD %1$s 1 a", "ZREMRANGEBYSCORE %1$s 5 6", false },
    { "ZADD %1$s 1 a", "ZREMRANGEBYSCORE %1$s 0 6", true },
    { "SET %1$s v", "RENAME %1$s %1$s", false },
    { "DEL %1$s", "LMOVE %1$s %2$s LEFT LEFT", false },
};

static void test_watch_noop_writes(redisContext *a, redisContext *b)
{
    for (size_t n = 0; n < sizeof noop_cases / sizeof noop_cases[0]; n++) {
        const struct noop_case *nc = &noop_cases[n];
        for (int i = 0; i < NKEYS; i++) {
            const char *key = watch_keys[i], *other = watch_keys[(i + 1) % NKEYS];
            char setup[160], write[160], what[1400];
            must_run(a, "A: DEL", "DEL %s %s", key, other);
            snprintf(setup, sizeof setup, nc->setup, key, other);
            snprintf(write, sizeof write, nc->write, key, other);
            snprintf(what, sizeof what, "A: %s, WATCH %s; B: %s", setup, key, write);
            must_run(a, what, setup);
            must_run(a, what, "WATCH %s", key);
            must_run(b, what, write);
            redisAppendCommand(a, "MULTI");
            redisAppendCommand(a, "PING");
            redisAppendCommand(a, "EXEC");
            redisReply *r = read_transaction(a, 1, what);
            bool aborted = r && r->type == REDIS_REPLY_NIL;
            if (!r || aborted != nc->aborts)
                pc_fail("%s: EXEC answered %s, want %s", what, reply_text(r), nc->aborts ? "null" : "[PONG]");
            freeReplyObject(r);
            if (!r || aborted != nc->aborts)
                break; /* one key per case is enough to report */
        }
    }
    must_run(a, "A: FLUSHALL", "FLUSHALL");
}

static void test_watch(void)
{
    pc_spread_keys("watch:", watch_keys);
    redisContext *a = pc_hiredis_connect(port), *b = pc_hiredis_connect(port);
    if (!a || !b) {
        pc_fail("cannot connect A and B");
    } else {
        int before = pc_failures();
        test_watch_one_key(a, b);
        test_watch_all_keys(a, b);
        test_watch_expiry(a);
        test_watch_noop_writes(a, b);
        printf("WATCH across connections: %zu cases x %d keys, 16 watched at once, expiry, %zu no-op writes: %s\n",
               sizeof touch_cases / sizeof touch_cases[0], NKEYS, sizeof noop_cases / sizeof noop_cases[0],
               pc_failures() == before ? "ok" : "FAILED");
    }
    if (a)
        redisFree(a);
    if (b)
        redisFree(b);
}

/* ---- 3. isolation ------------------------------------------------------- */

static char iso_keys[NKEYS][64];
static int iso_rounds;
static atomic_int iso_writers_left;
static atomic_long iso_mixed, iso_reads;

static void *iso_writer(void *arg)
{
    long id = (long)arg;
    redisContext *c = pc_hiredis_connect(port);
    char value[32];
    for (int round = 0; c && round < iso_rounds; round++) {
        snprintf(value, sizeof value, "w%ld-%d", id, round);
        redisAppendCommand(c, "MULTI");
        for (int i = 0; i < NKEYS; i++)
            redisAppendCommand(c, "SET %s %s", iso_keys[i], value);
        redisAppendCommand(c, "EXEC");
        redisReply *r = read_transaction(c, NKEYS, "isolation writer");
        if (!r)
            break;
        bool ok = r->type == REDIS_REPLY_ARRAY && r->elements == NKEYS;
        for (size_t i = 0; ok && i < r->elements; i++)
            ok = is_status(r->element[i], "OK");
        if (!ok)
            pc_fail("writer %ld: EXEC of 16 SETs: %s", id, reply_text(r));
        freeReplyObject(r);
        if (!ok)
            break;
    }
    if (c)
        redisFree(c);
    atomic_fetch_sub(&iso_writers_left, 1);
    return NULL;
}

static void *iso_reader(void *arg)
{
    (void)arg;
    redisContext *c = pc_hiredis_connect(port);
    const char *mget[1 + NKEYS] = { "MGET" };
    for (int i = 0; i < NKEYS; i++)
        mget[1 + i] = iso_keys[i];
    while (c && atomic_load(&iso_writers_left) > 0) {
        redisReply *r = redisCommandArgv(c, 1 + NKEYS, mget, NULL);
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != NKEYS) {
            pc_fail("reader: MGET: %s", reply_text(r));
            freeReplyObject(r);
            break;
        }
        const redisReply *first = r->element[0];
        for (size_t i = 1; i < r->elements; i++) {
            const redisReply *e = r->element[i];
            bool same = e->type == first->type &&
                        (e->type != REDIS_REPLY_STRING || strcmp(e->str, first->str) == 0);
            if (!same) {
                if (atomic_fetch_add(&iso_mixed, 1) < 5)
                    fprintf(stderr, "MGET saw a mix: %s = %s, %s = %s\n", iso_keys[0], reply_text(first),
                            iso_keys[i], reply_text(e));
                break;
            }
        }
        freeReplyObject(r);
        atomic_fetch_add(&iso_reads, 1);
    }
    if (c)
        redisFree(c);
    return NULL;
}

static void test_isolation(void)
{
    pc_spread_keys("iso:", iso_keys);
    iso_rounds = pc_sanitized() ? 200 : 2000;
    atomic_store(&iso_writers_left, ISO_WRITERS);
    pthread_t writers[ISO_WRITERS], readers[ISO_READERS];
    for (long i = 0; i < ISO_READERS; i++)
        pthread_create(&readers[i], NULL, iso_reader, NULL);
    for (long i = 0; i < ISO_WRITERS; i++)
        pthread_create(&writers[i], NULL, iso_writer, (void *)i);
    for (int i = 0; i < ISO_WRITERS; i++)
        pthread_join(writers[i], NULL);
    for (int i = 0; i < ISO_READERS; i++)
        pthread_join(readers[i], NULL);
    printf("isolation: %d writers x %d MULTI of %d SETs, %ld MGETs\n", ISO_WRITERS, iso_rounds, NKEYS,
           atomic_load(&iso_reads));
    if (atomic_load(&iso_mixed))
        pc_fail("%ld MGETs saw the keys half written by a transaction", atomic_load(&iso_mixed));
    if (atomic_load(&iso_reads) == 0)
        pc_fail("the readers read nothing while the writers ran");
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    port = srv.port;
    redisContext *c = pc_hiredis_connect(port);
    if (!c) {
        pc_fail("cannot connect");
    } else {
        test_transfers(c);
        redisFree(c);
    }
    test_watch();
    test_isolation();
    pc_test_teardown(&srv);
    return pc_test_done("test_multi");
}
