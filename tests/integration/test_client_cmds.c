/*
 * test_client_cmds: CLIENT REPLY, CLIENT PAUSE / UNPAUSE and RESET between
 * connections and across shards, with Redis 7.0's reply bytes.  Keys come
 * from pc_spread_keys, so at --threads 4 most commands run on a shard other
 * than their connection's, and their replies come back through the handoff.
 *
 * 1. CLIENT REPLY.  Pipelines written at once: under OFF, SETs, MSETs, MGETs,
 *    DELs and a cross-shard RENAME answer nothing, their writes happen, and
 *    ON's +OK then the MGET come back in order; SKIP drops exactly the next
 *    command's reply, whichever shard computes it; 300 such rounds in one
 *    write (run under ASan: every dropped reply's slot is released).  A
 *    BLPOP under SKIP is served but answers nothing.  Pub/sub messages and
 *    (un)subscribe confirmations still arrive under OFF, in RESP2 and RESP3
 *    (Redis 7.0 pushes them past CLIENT REPLY).  A CLIENT REPLY queued in
 *    MULTI cuts EXEC's array short, byte for byte as Redis does.
 * 2. CLIENT PAUSE.  The clients are on different shards where possible
 *    (CLIENT INFO shard=).  WRITE: reads, MULTIs of reads and admin commands
 *    run; writes, PUBLISH and an EXEC of a queued write wait, holding their
 *    connection's later commands, shown as flags=b and in blocked_clients;
 *    UNPAUSE answers them in order.  A waiting client that closes (FIN or
 *    RST) or is killed goes (connected_clients), its command never runs.
 *    A pause's timeout ends it, not before.  ALL: every command waits, CLIENT
 *    UNPAUSE from another client too, errors found before a command runs are
 *    answered; all go on at the timeout.  percore only: CLIENT UNBLOCK of a
 *    paused client answers 0 and leaves it paused (Redis 7.0.15 crashes).
 * 3. RESET.  CLIENT LIST's name, db, flags, sub, psub, multi and resp before
 *    and after, as Redis prints them; the subscriptions are gone from every
 *    shard (PUBSUB NUMSUB, PUBLISH's count), the watches too (another
 *    client's writes to the 16 keys no longer abort EXEC); with requirepass
 *    the connection must AUTH again.
 * 4. COMMAND LIST names each of them once.
 *
 * Every part passes against a real redis-server 7.0 too (test_client_cmds.redis).
 * Threading: one thread; raw connections (exact bytes).
 */
#include "testclient.h"

#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NKEYS PC_SPREAD_KEYS
#define QUIET_MS 300          /* nothing may arrive for this long where nothing is due */
#define ROUNDS 300            /* CLIENT REPLY rounds in one write */
#define PAUSE_TIMEOUT_MS 800  /* a pause that ends by itself */
#define PAUSE_ALL_MS 3000     /* an ALL pause (nothing ends it sooner) */
#define PAUSE_SLACK_MS 150    /* its end is the pausing shard's cached clock plus the timeout */

static int port;
static bool is_redis;
static char keys[NKEYS][64];

/* ---- bytes to send and to expect ------------------------------------------ */

struct text {
    char *buf;
    size_t len;
    size_t cap;
};

static void text_add(struct text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->buf = realloc(t->buf, t->cap);
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

static void text_printf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_printf(struct text *t, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    text_add(t, tmp, n < 0 ? 0 : (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void text_bulk(struct text *t, const char *s)
{
    text_printf(t, "$%zu\r\n%s\r\n", strlen(s), s);
}

static void text_free(struct text *t)
{
    free(t->buf);
    memset(t, 0, sizeof(*t));
}

/* append one command (NULL-terminated arguments) to a pipeline */
static void pipe_cmd(struct text *p, const char *arg0, ...)
{
    const char *argv[64];
    int argc = 0;
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && argc < 64; a = va_arg(ap, const char *))
        argv[argc++] = a;
    va_end(ap);
    pc_resp_encode(&p->buf, &p->len, &p->cap, argc, argv, NULL);
}

/* append a command with every key (and, when values is not NULL, its value after each) */
static void pipe_keys(struct text *p, const char *cmd, const char *const *values)
{
    const char *argv[1 + 2 * NKEYS];
    int argc = 0;
    argv[argc++] = cmd;
    for (int i = 0; i < NKEYS; i++) {
        argv[argc++] = keys[i];
        if (values)
            argv[argc++] = values[i];
    }
    pc_resp_encode(&p->buf, &p->len, &p->cap, argc, argv, NULL);
}

static void pipe_send(struct pc_conn *c, struct text *p)
{
    if (pc_conn_write(c, p->buf, p->len) != 0)
        pc_fail("write failed");
    text_free(p);
}

/* read replies until exp's length is reached, compare exactly */
static void expect_replies(struct pc_conn *c, const char *what, const struct text *exp)
{
    struct text got = {0};
    while (got.len < exp->len) {
        char *r;
        size_t n;
        if (pc_conn_read_reply(c, &r, &n, 10000) != 1)
            break;
        text_add(&got, r, n);
        free(r);
    }
    pc_expect_bytes_n(what, got.buf ? got.buf : "", got.len, exp->buf ? exp->buf : "", exp->len);
    text_free(&got);
}

/* nothing arrives for QUIET_MS */
static void expect_quiet(struct pc_conn *c, const char *what)
{
    char *r = NULL;
    size_t n = 0;
    int rc = pc_conn_read_reply(c, &r, &n, QUIET_MS);
    if (rc != 0) {
        pc_fail("%s: expected nothing, got %s", what, rc == 1 ? "a reply:" : "the connection closed or bad bytes");
        if (rc == 1)
            pc_print_escaped(stderr, r, n, 300), fputc('\n', stderr);
    }
    free(r);
}

/* every byte that arrives until the connection is quiet for QUIET_MS (RESP or not) */
static void read_raw(struct pc_conn *c, struct text *out)
{
    text_add(out, c->buf ? c->buf : "", c->len);
    c->len = 0;
    char buf[4096];
    struct pollfd p = {c->fd, POLLIN, 0};
    while (poll(&p, 1, QUIET_MS) > 0) {
        ssize_t n = read(c->fd, buf, sizeof buf);
        if (n <= 0)
            break;
        text_add(out, buf, (size_t)n);
    }
}

static void cmd_expect(struct pc_conn *c, const char *exp, const char *arg0, ...)
{
    const char *argv[32];
    int argc = 0;
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && argc < 32; a = va_arg(ap, const char *))
        argv[argc++] = a;
    va_end(ap);
    pc_expectv(c, exp, strlen(exp), argc, argv, NULL);
}

static struct pc_conn *open_conn(void)
{
    struct pc_conn *c = pc_conn_open(port);
    if (!c) {
        pc_fail("cannot connect");
        exit(pc_test_done("test_client_cmds"));
    }
    return c;
}

/* ---- 1. CLIENT REPLY ------------------------------------------------------ */

static void reply_off_pipeline(void)
{
    struct pc_conn *a = open_conn();
    const char *vals[NKEYS], *vals2[NKEYS];
    char vbuf[NKEYS][16], vbuf2[NKEYS][16];
    for (int i = 0; i < NKEYS; i++) {
        snprintf(vbuf[i], sizeof vbuf[i], "v%d", i);
        snprintf(vbuf2[i], sizeof vbuf2[i], "w%d", i);
        vals[i] = vbuf[i];
        vals2[i] = vbuf2[i];
    }
    /* OFF: single-key writes on every shard, a split MSET, MGET, DEL, a cross-shard RENAME, errors */
    struct text p = {0}, exp = {0};
    pipe_cmd(&p, "CLIENT", "REPLY", "OFF", NULL);
    for (int i = 0; i < NKEYS; i++)
        pipe_cmd(&p, "SET", keys[i], vals[i], NULL);
    pipe_keys(&p, "MGET", NULL);
    pipe_cmd(&p, "DEL", keys[0], keys[5], NULL);
    pipe_cmd(&p, "RENAME", keys[1], keys[0], NULL);
    pipe_cmd(&p, "GET", NULL);
    pipe_cmd(&p, "NOSUCHCOMMAND", NULL);
    pipe_cmd(&p, "CLIENT", "REPLY", "ON", NULL);
    pipe_keys(&p, "MGET", NULL);
    pipe_send(a, &p);
    text_printf(&exp, "+OK\r\n*%d\r\n", NKEYS);
    for (int i = 0; i < NKEYS; i++) {
        if (i == 1 || i == 5)
            text_printf(&exp, "$-1\r\n");
        else
            text_bulk(&exp, i == 0 ? vals[1] : vals[i]);
    }
    expect_replies(a, "REPLY OFF: only ON's +OK and the MGET after it", &exp);
    text_free(&exp);
    expect_quiet(a, "REPLY OFF: nothing more");

    /* SKIP: of each pair of GETs, the first (on any shard) is dropped */
    pipe_keys(&p, "MSET", vals2);
    for (int i = 0; i < NKEYS; i++) {
        pipe_cmd(&p, "CLIENT", "REPLY", "SKIP", NULL);
        pipe_cmd(&p, "GET", keys[i], NULL);
        pipe_cmd(&p, "GET", keys[(i + 1) % NKEYS], NULL);
    }
    /* a skipped MGET and EXISTS (split over the shards), a skipped MSET */
    pipe_cmd(&p, "CLIENT", "REPLY", "SKIP", NULL);
    pipe_keys(&p, "MGET", NULL);
    pipe_cmd(&p, "CLIENT", "REPLY", "SKIP", NULL);
    pipe_keys(&p, "MSET", vals);
    pipe_keys(&p, "EXISTS", NULL);
    pipe_send(a, &p);
    text_printf(&exp, "+OK\r\n");
    for (int i = 0; i < NKEYS; i++)
        text_bulk(&exp, vals2[(i + 1) % NKEYS]);
    text_printf(&exp, ":%d\r\n", NKEYS);
    expect_replies(a, "REPLY SKIP: the second GET of each pair, then EXISTS", &exp);
    text_free(&exp);
    expect_quiet(a, "REPLY SKIP: nothing more");

    /* ROUNDS rounds in one write: the dropped replies keep their place and release their slots */
    for (int r = 0; r < ROUNDS; r++) {
        char rv[16];
        snprintf(rv, sizeof rv, "r%d", r);
        pipe_cmd(&p, "CLIENT", "REPLY", "OFF", NULL);
        pipe_cmd(&p, "SET", keys[r % NKEYS], rv, NULL);
        pipe_keys(&p, "MGET", NULL);
        pipe_cmd(&p, "GET", keys[(r + 7) % NKEYS], NULL);
        pipe_cmd(&p, "CLIENT", "REPLY", "ON", NULL);
        pipe_cmd(&p, "GET", keys[r % NKEYS], NULL);
        pipe_cmd(&p, "CLIENT", "REPLY", "SKIP", NULL);
        pipe_keys(&p, "EXISTS", NULL);
        pipe_cmd(&p, "ECHO", rv, NULL);
        text_printf(&exp, "+OK\r\n");
        text_bulk(&exp, rv);
        text_bulk(&exp, rv);
    }
    pipe_send(a, &p);
    expect_replies(a, "REPLY OFF/ON/SKIP rounds in one pipeline", &exp);
    text_free(&exp);
    expect_quiet(a, "REPLY rounds: nothing more");

    /* a CLIENT REPLY run by EXEC cuts its array short, as in Redis */
    cmd_expect(a, "+OK\r\n", "SET", keys[3], vals[3], NULL);
    pipe_cmd(&p, "MULTI", NULL);
    pipe_cmd(&p, "CLIENT", "REPLY", "SKIP", NULL);
    pipe_cmd(&p, "GET", keys[3], NULL);
    pipe_cmd(&p, "EXEC", NULL);
    pipe_cmd(&p, "PING", "skipped", NULL);
    pipe_cmd(&p, "MULTI", NULL);
    pipe_cmd(&p, "GET", keys[3], NULL);
    pipe_cmd(&p, "CLIENT", "REPLY", "OFF", NULL);
    pipe_cmd(&p, "GET", keys[4], NULL);
    pipe_cmd(&p, "EXEC", NULL);
    pipe_cmd(&p, "PING", "off", NULL);
    pipe_cmd(&p, "CLIENT", "REPLY", "ON", NULL);
    pipe_send(a, &p);
    struct text got = {0};
    read_raw(a, &got);
    text_printf(&exp, "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n");
    text_bulk(&exp, vals[3]);
    text_printf(&exp, "+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n");
    text_bulk(&exp, vals[3]);
    text_printf(&exp, "+OK\r\n");
    pc_expect_bytes_n("CLIENT REPLY SKIP / OFF inside EXEC", got.buf, got.len, exp.buf, exp.len);
    text_free(&got);
    text_free(&exp);
    pc_conn_close(&a);
}

static void reply_skip_blocking(void)
{
    struct pc_conn *a = open_conn(), *b = open_conn();
    char q[80];
    snprintf(q, sizeof q, "{%s}q", keys[9]);
    cmd_expect(a, ":0\r\n", "DEL", q, NULL);
    struct text p = {0};
    pipe_cmd(&p, "CLIENT", "REPLY", "SKIP", NULL);
    pipe_cmd(&p, "BLPOP", q, "0", NULL);
    pipe_cmd(&p, "PING", "after", NULL);
    pipe_send(a, &p);
    expect_quiet(a, "BLPOP under SKIP, waiting");
    long long deadline = pc_now_ms() + 10000;
    for (bool served = false; !served && pc_now_ms() < deadline; pc_sleep_ms(50)) {
        /* the push serves a; one that came before BLPOP waited stays in the list: taken back */
        cmd_expect(b, ":1\r\n", "RPUSH", q, "x", NULL);
        char *r = pc_conn_cmdl(b, NULL, "RPOP", q, NULL);
        served = r && strcmp(r, "$-1\r\n") == 0;
        free(r);
    }
    struct text exp = {0};
    text_bulk(&exp, "after");
    expect_replies(a, "a served BLPOP under SKIP answers nothing", &exp);
    text_free(&exp);
    expect_quiet(a, "BLPOP under SKIP: nothing more");
    pc_conn_close(&a);
    pc_conn_close(&b);
}

static void reply_off_pubsub(void)
{
    struct pc_conn *s2 = open_conn(), *s3 = open_conn(), *b = open_conn();
    /* RESP2: OFF first (CLIENT REPLY is refused in subscriber mode), then subscribe */
    struct text p = {0}, exp = {0};
    pipe_cmd(&p, "CLIENT", "REPLY", "OFF", NULL);
    pipe_cmd(&p, "SUBSCRIBE", "chan", NULL);
    pipe_send(s2, &p);
    cmd_expect(s2, "*3\r\n$9\r\nsubscribe\r\n$4\r\nchan\r\n:1\r\n", NULL);
    /* RESP3: subscribed, then OFF */
    char *hello = pc_conn_cmdl(s3, NULL, "HELLO", "3", NULL);
    free(hello);
    cmd_expect(s3, ">3\r\n$9\r\nsubscribe\r\n$4\r\nchan\r\n:1\r\n", "SUBSCRIBE", "chan", NULL);
    pipe_cmd(&p, "CLIENT", "REPLY", "OFF", NULL);
    pipe_send(s3, &p);
    expect_quiet(s3, "RESP3 CLIENT REPLY OFF");
    cmd_expect(b, ":2\r\n", "PUBLISH", "chan", "m1", NULL);
    text_printf(&exp, "*3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n$2\r\nm1\r\n");
    expect_replies(s2, "a message under OFF (RESP2)", &exp);
    text_free(&exp);
    text_printf(&exp, ">3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n$2\r\nm1\r\n");
    expect_replies(s3, "a message under OFF (RESP3)", &exp);
    text_free(&exp);
    /* PING's answer is no push: dropped; the unsubscribe confirmation is one */
    pipe_cmd(&p, "PING", NULL);
    pipe_cmd(&p, "UNSUBSCRIBE", "chan", NULL);
    pipe_cmd(&p, "CLIENT", "REPLY", "ON", NULL);
    pipe_send(s2, &p);
    text_printf(&exp, "*3\r\n$11\r\nunsubscribe\r\n$4\r\nchan\r\n:0\r\n+OK\r\n");
    expect_replies(s2, "RESP2: PING dropped, UNSUBSCRIBE confirmed, ON", &exp);
    text_free(&exp);
    pipe_cmd(&p, "PING", NULL);
    pipe_cmd(&p, "CLIENT", "REPLY", "ON", NULL);
    pipe_send(s3, &p);
    cmd_expect(b, ":1\r\n", "PUBLISH", "chan", "m2", NULL);
    text_printf(&exp, "+OK\r\n>3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n$2\r\nm2\r\n");
    expect_replies(s3, "RESP3: PING dropped, ON, the next message", &exp);
    text_free(&exp);
    expect_quiet(s2, "unsubscribed: no message");
    pc_conn_close(&s2);
    pc_conn_close(&s3);
    pc_conn_close(&b);
}

/* ---- 2. CLIENT PAUSE ------------------------------------------------------ */

#define SPREAD_TRIES 24

/* n connections, each homed on a shard none of the others (nor avoid) is on, as far as a few tries
 * find (the kernel picks the shard; a real redis-server has none) */
static void open_spread(struct pc_conn **out, int n, int avoid)
{
    struct pc_conn *spare[SPREAD_TRIES];
    int nspare = 0, used[64] = {0};
    if (avoid >= 0 && avoid < 64)
        used[avoid] = 1;
    for (int i = 0; i < n; i++) {
        out[i] = NULL;
        for (int tries = 0; !out[i]; tries++) {
            struct pc_conn *c = open_conn();
            int sh = pc_conn_home_shard(c);
            if (sh < 0 || sh >= 64 || !used[sh] || tries == SPREAD_TRIES - 1 || nspare == SPREAD_TRIES) {
                if (sh >= 0 && sh < 64)
                    used[sh] = 1;
                out[i] = c;
            } else {
                spare[nspare++] = c;
            }
        }
    }
    while (nspare > 0)
        pc_conn_close(&spare[--nspare]);
}

static long long conn_client_id(struct pc_conn *c)
{
    char *r = pc_conn_cmdl(c, NULL, "CLIENT", "ID", NULL);
    long long id = r && r[0] == ':' ? atoll(r + 1) : -1;
    free(r);
    return id;
}

/* CLIENT LIST ID <id>'s flags= holds flag */
static bool client_has_flag(struct pc_conn *admin, long long id, char flag)
{
    char ids[24];
    snprintf(ids, sizeof ids, "%lld", id);
    char *r = pc_conn_cmdl(admin, NULL, "CLIENT", "LIST", "ID", ids, NULL);
    const char *f = r ? strstr(r, " flags=") : NULL;
    bool has = false;
    for (f = f ? f + 7 : NULL; f && *f && *f != ' '; f++)
        has |= *f == flag;
    free(r);
    return has;
}

static void pause_write(void)
{
    struct pc_conn *p = open_conn();
    struct pc_conn *w[3];
    open_spread(w, 3, pc_conn_home_shard(p));
    struct pc_conn *r = open_conn();
    long long wid[3];
    for (int i = 0; i < 3; i++)
        wid[i] = conn_client_id(w[i]);
    for (int i = 0; i < NKEYS; i++)
        cmd_expect(p, "+OK\r\n", "SET", keys[i], "old", NULL);
    char xkey[80]; /* written by w2's EXEC alone (waiters on several shards resume in no set order) */
    snprintf(xkey, sizeof xkey, "{%s}exec", keys[2]);
    cmd_expect(p, ":0\r\n", "EXISTS", xkey, NULL);
    cmd_expect(w[2], "+OK\r\n", "MULTI", NULL);
    cmd_expect(w[2], "+QUEUED\r\n", "SET", xkey, "from-exec", NULL);
    cmd_expect(p, "+OK\r\n", "CLIENT", "PAUSE", "100000", "WRITE", NULL);
    /* w0: a read runs, the write after it waits, and so does the read after that */
    struct text q = {0}, exp = {0};
    pipe_cmd(&q, "GET", keys[0], NULL);
    pipe_cmd(&q, "SET", keys[0], "new", NULL);
    pipe_cmd(&q, "GET", keys[0], NULL);
    pipe_send(w[0], &q);
    cmd_expect(w[0], "$3\r\nold\r\n", NULL);
    expect_quiet(w[0], "a SET under CLIENT PAUSE WRITE");
    /* w1: every key's SET, and a PUBLISH */
    for (int i = 0; i < NKEYS; i++)
        pipe_cmd(&q, "SET", keys[i], "new", NULL);
    pipe_cmd(&q, "PUBLISH", "chan", "m", NULL);
    pipe_send(w[1], &q);
    expect_quiet(w[1], "SETs and PUBLISH under CLIENT PAUSE WRITE");
    /* w2: its EXEC would write */
    pipe_cmd(&q, "EXEC", NULL);
    pipe_send(w[2], &q);
    expect_quiet(w[2], "an EXEC of a write under CLIENT PAUSE WRITE");
    /* reads, a MULTI of reads, admin commands, errors: at once */
    pipe_keys(&q, "MGET", NULL);
    pipe_cmd(&q, "MULTI", NULL);
    pipe_cmd(&q, "GET", keys[1], NULL);
    pipe_cmd(&q, "EXEC", NULL);
    pipe_cmd(&q, "CLIENT", "SETNAME", "reader", NULL);
    pipe_cmd(&q, "SET", NULL);
    pipe_send(r, &q);
    text_printf(&exp, "*%d\r\n", NKEYS);
    for (int i = 0; i < NKEYS; i++)
        text_printf(&exp, "$3\r\nold\r\n");
    text_printf(&exp, "+OK\r\n+QUEUED\r\n*1\r\n$3\r\nold\r\n+OK\r\n-ERR wrong number of arguments for 'set' command\r\n");
    expect_replies(r, "reads under CLIENT PAUSE WRITE", &exp);
    text_free(&exp);
    /* the waiters show as blocked */
    long long blocked = pc_info_wait_for(p, "blocked_clients", 3, 10000);
    if (blocked != 3)
        pc_fail("blocked_clients under CLIENT PAUSE WRITE: %lld, want 3", blocked);
    for (int i = 0; i < 3; i++)
        if (!client_has_flag(p, wid[i], 'b'))
            pc_fail("client %d paused: CLIENT LIST shows no flags=b", i);
    /* percore: CLIENT UNBLOCK does not release a paused client (Redis 7.0.15 crashes on it) */
    if (!is_redis) {
        struct pc_conn *probe = open_conn();
        long long id = conn_client_id(probe);
        pipe_cmd(&q, "SET", keys[3], "probe", NULL);
        pipe_send(probe, &q);
        pc_sleep_ms(100);
        char ids[24];
        snprintf(ids, sizeof ids, "%lld", id);
        cmd_expect(p, ":0\r\n", "CLIENT", "UNBLOCK", ids, NULL);
        expect_quiet(probe, "a paused client after CLIENT UNBLOCK");
        if (!client_has_flag(p, id, 'b'))
            pc_fail("a paused client shows no flags=b");
        cmd_expect(p, ":1\r\n", "CLIENT", "KILL", "ID", ids, NULL);
        if (pc_conn_wait_closed(probe, 5000) != 1)
            pc_fail("a paused client killed: its connection stays open");
        pc_conn_close(&probe);
    }
    cmd_expect(p, "+OK\r\n", "CLIENT", "UNPAUSE", NULL);
    text_printf(&exp, "+OK\r\n$3\r\nnew\r\n");
    expect_replies(w[0], "after UNPAUSE: the SET, then the GET behind it", &exp);
    text_free(&exp);
    for (int i = 0; i < NKEYS; i++)
        text_printf(&exp, "+OK\r\n");
    text_printf(&exp, ":0\r\n");
    expect_replies(w[1], "after UNPAUSE: every SET and the PUBLISH, in order", &exp);
    text_free(&exp);
    cmd_expect(w[2], "*1\r\n+OK\r\n", NULL);
    cmd_expect(r, "$9\r\nfrom-exec\r\n", "GET", xkey, NULL);
    if (pc_info_wait_for(p, "blocked_clients", 0, 10000) != 0)
        pc_fail("blocked_clients after UNPAUSE is not 0");
    for (int i = 0; i < 3; i++)
        pc_conn_close(&w[i]);
    pc_conn_close(&r);
    pc_conn_close(&p);
}

static void pause_closing_clients(void)
{
    struct pc_conn *p = open_conn();
    struct pc_conn *w[2];
    open_spread(w, 2, pc_conn_home_shard(p));
    cmd_expect(p, "+OK\r\n", "SET", keys[6], "kept", NULL);
    long long wid[2] = {conn_client_id(w[0]), conn_client_id(w[1])};
    cmd_expect(p, "+OK\r\n", "CLIENT", "PAUSE", "100000", "WRITE", NULL);
    struct text q = {0};
    for (int i = 0; i < 2; i++) {
        pipe_cmd(&q, "SET", keys[6], "lost", NULL);
        pipe_send(w[i], &q);
    }
    if (pc_info_wait_for(p, "blocked_clients", 2, 10000) != 2)
        pc_fail("two clients paused: blocked_clients is not 2");
    pc_conn_close(&w[0]); /* FIN */
    pc_conn_abort(&w[1]); /* RST */
    /* by their ids: connected_clients may still count a connection an earlier step closed */
    for (int i = 0; i < 2; i++) {
        char ids[24];
        snprintf(ids, sizeof ids, "%lld", wid[i]);
        bool gone = false;
        for (long long t0 = pc_now_ms(); !gone && pc_now_ms() - t0 < 10000; pc_sleep_ms(gone ? 0 : 20)) {
            char *r = pc_conn_cmdl(p, NULL, "CLIENT", "LIST", "ID", ids, NULL);
            gone = r && strstr(r, "id=") == NULL;
            free(r);
        }
        if (!gone)
            pc_fail("paused client %lld that closed (%s) is still listed", wid[i], i ? "RST" : "FIN");
    }
    if (pc_info_wait_for(p, "blocked_clients", 0, 10000) != 0)
        pc_fail("paused clients that closed are still counted as blocked");
    cmd_expect(p, "+OK\r\n", "CLIENT", "UNPAUSE", NULL);
    pc_sleep_ms(100);
    cmd_expect(p, "$4\r\nkept\r\n", "GET", keys[6], NULL);
    pc_conn_close(&p);
}

static void pause_timeout(void)
{
    struct pc_conn *p = open_conn();
    struct pc_conn *w[1];
    open_spread(w, 1, pc_conn_home_shard(p));
    char ms[16];
    snprintf(ms, sizeof ms, "%d", PAUSE_TIMEOUT_MS);
    long long t0 = pc_now_ms();
    cmd_expect(p, "+OK\r\n", "CLIENT", "PAUSE", ms, "WRITE", NULL);
    cmd_expect(w[0], "+OK\r\n", "SET", keys[7], "after-timeout", NULL);
    long long waited = pc_now_ms() - t0;
    if (waited < PAUSE_TIMEOUT_MS - PAUSE_SLACK_MS)
        pc_fail("a SET under CLIENT PAUSE %d WRITE answered after %lld ms", PAUSE_TIMEOUT_MS, waited);
    pc_conn_close(&w[0]);
    pc_conn_close(&p);
}

/* c has sent nothing back while the pause surely holds (before held_until); looked at too late (a slow
 * machine), nothing is concluded; nothing is read */
static void expect_held(struct pc_conn *c, const char *what, long long held_until)
{
    struct pollfd p = {c->fd, POLLIN, 0};
    bool arrived = c->len > 0 || poll(&p, 1, 0) > 0;
    if (arrived && pc_now_ms() < held_until)
        pc_fail("%s: answered during the pause", what);
}

static void pause_all(void)
{
    struct pc_conn *p = open_conn();
    struct pc_conn *o[3];
    open_spread(o, 3, pc_conn_home_shard(p));
    cmd_expect(p, "+OK\r\n", "SET", keys[8], "v8", NULL);
    char ms[16];
    snprintf(ms, sizeof ms, "%d", PAUSE_ALL_MS);
    long long t0 = pc_now_ms();
    cmd_expect(p, "+OK\r\n", "CLIENT", "PAUSE", ms, "ALL", NULL);
    long long held_until = t0 + PAUSE_ALL_MS - PAUSE_SLACK_MS;
    /* errors found before a command runs are answered at once, during the pause */
    struct text q = {0}, exp = {0};
    pipe_cmd(&q, "GET", NULL);
    pipe_send(o[2], &q);
    char *r = NULL;
    size_t n = 0;
    long long left = held_until - pc_now_ms();
    if (left > 0 && pc_conn_read_reply(o[2], &r, &n, (int)left) == 1)
        pc_expect_bytes("an arity error under CLIENT PAUSE ALL", r, n,
                        "-ERR wrong number of arguments for 'get' command\r\n");
    else if (left > 0)
        pc_fail("an arity error under CLIENT PAUSE ALL: not answered during the pause");
    free(r);
    pipe_cmd(&q, "GET", keys[8], NULL);
    pipe_cmd(&q, "PING", NULL);
    pipe_send(o[0], &q);
    pipe_cmd(&q, "CLIENT", "UNPAUSE", NULL);
    pipe_send(o[1], &q);
    pipe_cmd(&q, "PING", "p", NULL);
    pipe_send(p, &q);
    pc_sleep_ms(QUIET_MS);
    expect_held(o[0], "a GET under CLIENT PAUSE ALL", held_until);
    expect_held(o[1], "CLIENT UNPAUSE under CLIENT PAUSE ALL", held_until);
    expect_held(p, "the pausing client's PING under CLIENT PAUSE ALL", held_until);
    text_printf(&exp, "$2\r\nv8\r\n+PONG\r\n");
    expect_replies(o[0], "after the ALL pause: GET, PING", &exp);
    text_free(&exp);
    cmd_expect(o[1], "+OK\r\n", NULL);
    cmd_expect(p, "$1\r\np\r\n", NULL);
    if (pc_now_ms() - t0 < PAUSE_ALL_MS - PAUSE_SLACK_MS)
        pc_fail("CLIENT PAUSE %d ALL ended after %lld ms", PAUSE_ALL_MS, pc_now_ms() - t0);
    for (int i = 0; i < 3; i++)
        pc_conn_close(&o[i]);
    pc_conn_close(&p);
}

/* ---- 3. RESET ------------------------------------------------------------- */

/* the CLIENT LIST fields of client id that RESET changes, "name=.. db=.. flags=.. sub=.. psub=.. multi=..
 * resp=.." (asked from another connection: the client may be in MULTI) */
static void client_state(struct pc_conn *admin, long long id, char *out, size_t cap)
{
    static const char *const fields[] = {"name", "db", "flags", "sub", "psub", "multi", "resp"};
    char ids[24];
    snprintf(ids, sizeof ids, "%lld", id);
    char *r = pc_conn_cmdl(admin, NULL, "CLIENT", "LIST", "ID", ids, NULL);
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; r && i < sizeof fields / sizeof fields[0]; i++) {
        char pat[16];
        snprintf(pat, sizeof pat, " %s=", fields[i]);
        const char *f = strstr(r, pat);
        size_t n = f ? strcspn(f + 1, " \r\n") : 0;
        int w = snprintf(out + used, cap - used, "%s%.*s", used ? " " : "", (int)n, f ? f + 1 : "");
        if (w > 0 && (size_t)w < cap - used)
            used += (size_t)w;
    }
    free(r);
}

static void expect_state(struct pc_conn *admin, long long id, const char *what, const char *want)
{
    char got[256];
    client_state(admin, id, got, sizeof got);
    pc_expect_bytes(what, got, strlen(got), want);
}

static void reset_everything(void)
{
    struct pc_conn *a = open_conn(), *b = open_conn();
    long long id = conn_client_id(a);
    expect_state(b, id, "CLIENT LIST at connect", "name= db=0 flags=N sub=0 psub=0 multi=-1 resp=2");
    cmd_expect(a, "+OK\r\n", "CLIENT", "SETNAME", "before-reset", NULL);
    cmd_expect(a, "+OK\r\n", "SELECT", "2", NULL);
    char *hello = pc_conn_cmdl(a, NULL, "HELLO", "3", NULL);
    free(hello);
    cmd_expect(a, ">3\r\n$9\r\nsubscribe\r\n$2\r\nc1\r\n:1\r\n", "SUBSCRIBE", "c1", NULL);
    cmd_expect(a, ">3\r\n$9\r\nsubscribe\r\n$2\r\nc2\r\n:2\r\n", "SUBSCRIBE", "c2", NULL);
    cmd_expect(a, ">3\r\n$10\r\npsubscribe\r\n$2\r\np*\r\n:3\r\n", "PSUBSCRIBE", "p*", NULL);
    cmd_expect(a, "+OK\r\n", "SELECT", "0", NULL);
    struct text q = {0};
    pipe_keys(&q, "WATCH", NULL);
    pipe_send(a, &q);
    cmd_expect(a, "+OK\r\n", NULL);
    cmd_expect(a, "+OK\r\n", "SELECT", "2", NULL);
    cmd_expect(a, "+OK\r\n", "MULTI", NULL);
    cmd_expect(a, "+QUEUED\r\n", "SET", keys[0], "never", NULL);
    expect_state(b, id, "CLIENT LIST before RESET", "name=before-reset db=2 flags=Px sub=2 psub=1 multi=1 resp=3");
    cmd_expect(a, "+RESET\r\n", "RESET", NULL);
    expect_state(b, id, "CLIENT LIST after RESET", "name= db=0 flags=N sub=0 psub=0 multi=-1 resp=2");
    cmd_expect(b, "*4\r\n$2\r\nc1\r\n:0\r\n$2\r\nc2\r\n:0\r\n", "PUBSUB", "NUMSUB", "c1", "c2", NULL);
    cmd_expect(b, ":0\r\n", "PUBSUB", "NUMPAT", NULL);
    cmd_expect(b, ":0\r\n", "PUBLISH", "c1", "m", NULL);
    cmd_expect(b, ":0\r\n", "PUBLISH", "px", "m", NULL);
    /* the watches are gone: b's writes to all 16 keys abort nothing */
    for (int i = 0; i < NKEYS; i++)
        cmd_expect(b, "+OK\r\n", "SET", keys[i], "touched", NULL);
    cmd_expect(a, "+OK\r\n", "MULTI", NULL);
    cmd_expect(a, "+QUEUED\r\n", "GET", keys[0], NULL);
    cmd_expect(a, "*1\r\n$7\r\ntouched\r\n", "EXEC", NULL);
    expect_quiet(a, "after RESET: no message");
    /* with a password, RESET leaves the connection unauthenticated */
    cmd_expect(b, "+OK\r\n", "CONFIG", "SET", "requirepass", "pw", NULL);
    cmd_expect(a, "+OK\r\n", "AUTH", "pw", NULL);
    cmd_expect(a, "+RESET\r\n", "RESET", NULL);
    cmd_expect(a, "-NOAUTH Authentication required.\r\n", "GET", keys[0], NULL);
    cmd_expect(a, "+RESET\r\n", "RESET", NULL);
    cmd_expect(a, "+OK\r\n", "AUTH", "pw", NULL);
    cmd_expect(a, "$7\r\ntouched\r\n", "GET", keys[0], NULL);
    cmd_expect(b, "+OK\r\n", "CONFIG", "SET", "requirepass", "", NULL);
    pc_conn_close(&a);
    pc_conn_close(&b);
}

/* COMMAND LIST names each CLIENT subcommand once (the table kept them apart once: some came twice, some not) */
static void command_list_once(void)
{
    static const char *const names[] = {"client|pause", "client|reply", "client|unpause", "client|unblock",
                                        "client|kill", "slowlog|get", "reset"};
    struct pc_conn *c = open_conn();
    char *r = pc_conn_cmdl(c, NULL, "COMMAND", "LIST", NULL);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char pat[64];
        int n = 0;
        snprintf(pat, sizeof pat, "\r\n%s\r\n", names[i]);
        for (const char *p = r ? strstr(r, pat) : NULL; p; p = strstr(p + 1, pat))
            n++;
        if (n != 1)
            pc_fail("COMMAND LIST names %s %d times", names[i], n);
    }
    free(r);
    pc_conn_close(&c);
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    port = srv.port;
    is_redis = srv.is_redis;
    pc_spread_keys("cc", keys);
    reply_off_pipeline();
    reply_skip_blocking();
    reply_off_pubsub();
    pause_write();
    pause_closing_clients();
    pause_timeout();
    pause_all();
    reset_everything();
    command_list_once();
    pc_test_teardown(&srv);
    return pc_test_done("test_client_cmds");
}
