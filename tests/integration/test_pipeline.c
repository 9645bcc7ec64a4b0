/*
 * test_pipeline: 1,000 mixed commands (SET GET INCR MGET DEL EXISTS APPEND)
 * on keys whose slots land on every shard, written as one pipeline; the
 * replies must come back in request order and equal what a simple model of
 * Redis predicts, byte for byte.  Then the same with the pipeline cut into
 * random-sized writes (commands split across reads), then a deep pipeline of
 * 20,000 commands written while nothing is read (the server must not lose
 * or reorder replies when its output backs up).
 */
#include "testclient.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define NKEYS 64
#define NCMDS 1000

static char keys[NKEYS][64];
static char *model[NKEYS]; /* value or NULL */
static unsigned long long rng = 88172645463325252ULL;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

struct buf {
    char *p;
    size_t len, cap;
};

static void bappend(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    bappend(b, tmp, (size_t)n);
}

static void bbulk(struct buf *b, const char *v)
{
    if (!v)
        bappend(b, "$-1\r\n", 5);
    else
        bprintf(b, "$%zu\r\n%s\r\n", strlen(v), v);
}

static int is_int(const char *v, long long *out)
{
    if (!v || !*v || strlen(v) > 20)
        return 0;
    char *e;
    long long x = strtoll(v, &e, 10);
    if (*e)
        return 0;
    char back[32];
    snprintf(back, sizeof(back), "%lld", x);
    if (strcmp(back, v) != 0)
        return 0;
    *out = x;
    return 1;
}

/* one generated command: its RESP bytes appended to req, its expected reply
 * to the replies list, and a description */
struct expected {
    char *reply;
    size_t len;
    char desc[200];
};

static void gen(struct buf *req, struct expected *e, int i)
{
    const char *argv[8];
    int argc = 0;
    struct buf rep = { 0 };
    unsigned op = rnd(100);
    int k = (int)rnd(NKEYS), k2 = (int)rnd(NKEYS), k3 = (int)rnd(NKEYS);
    char val[64];
    if (op < 25) {
        if (rnd(2))
            snprintf(val, sizeof(val), "%u", rnd(1000));
        else
            snprintf(val, sizeof(val), "v%d-%u", i, rnd(100000));
        argv[argc++] = "SET", argv[argc++] = keys[k], argv[argc++] = val;
        free(model[k]);
        model[k] = strdup(val);
        bappend(&rep, "+OK\r\n", 5);
    } else if (op < 45) {
        argv[argc++] = "GET", argv[argc++] = keys[k];
        bbulk(&rep, model[k]);
    } else if (op < 65) {
        argv[argc++] = "INCR", argv[argc++] = keys[k];
        long long v = 0;
        if (!model[k] || is_int(model[k], &v)) {
            v++;
            snprintf(val, sizeof(val), "%lld", v);
            free(model[k]);
            model[k] = strdup(val);
            bprintf(&rep, ":%lld\r\n", v);
        } else {
            bprintf(&rep, "-ERR value is not an integer or out of range\r\n");
        }
    } else if (op < 80) {
        argv[argc++] = "MGET", argv[argc++] = keys[k], argv[argc++] = keys[k2],
        argv[argc++] = keys[k3];
        bprintf(&rep, "*3\r\n");
        bbulk(&rep, model[k]);
        bbulk(&rep, model[k2]);
        bbulk(&rep, model[k3]);
    } else if (op < 90) {
        argv[argc++] = "DEL", argv[argc++] = keys[k], argv[argc++] = keys[k2];
        int n = 0;
        if (model[k]) {
            free(model[k]);
            model[k] = NULL;
            n++;
        }
        if (model[k2]) {
            free(model[k2]);
            model[k2] = NULL;
            n++;
        }
        bprintf(&rep, ":%d\r\n", n);
    } else if (op < 95) {
        argv[argc++] = "EXISTS", argv[argc++] = keys[k], argv[argc++] = keys[k2],
        argv[argc++] = keys[k];
        bprintf(&rep, ":%d\r\n", (model[k] ? 2 : 0) + (model[k2] ? 1 : 0));
    } else {
        argv[argc++] = "APPEND", argv[argc++] = keys[k], argv[argc++] = "ab";
        size_t old = model[k] ? strlen(model[k]) : 0;
        char *nv = malloc(old + 3);
        snprintf(nv, old + 3, "%s%s", model[k] ? model[k] : "", "ab");
        free(model[k]);
        model[k] = nv;
        bprintf(&rep, ":%zu\r\n", old + 2);
    }
    pc_resp_encode(&req->p, &req->len, &req->cap, argc, argv, NULL);
    e->reply = rep.p;
    e->len = rep.len;
    int o = snprintf(e->desc, sizeof(e->desc), "pipeline command #%d:", i);
    for (int a = 0; a < argc && o < (int)sizeof(e->desc) - 2; a++)
        o += snprintf(e->desc + o, sizeof(e->desc) - (size_t)o, " %s", argv[a]);
}

/* send `req` (in chunks of random size when chunked), read n replies */
static void run_pipeline(int port, struct buf *req, struct expected *exp, int n, int chunked)
{
    struct pc_conn *c = pc_conn_open(port);
    if (!c) {
        pc_fail("connect");
        return;
    }
    if (!chunked) {
        pc_conn_write(c, req->p, req->len);
    } else {
        size_t off = 0;
        while (off < req->len) {
            size_t chunk = 1 + rnd(rnd(4) == 0 ? 7 : 300);
            if (chunk > req->len - off)
                chunk = req->len - off;
            pc_conn_write(c, req->p + off, chunk);
            off += chunk;
            if (rnd(8) == 0)
                pc_sleep_ms(1);
        }
    }
    int bad = 0;
    for (int i = 0; i < n; i++) {
        char *r = NULL;
        size_t rl = 0;
        int rr = pc_conn_read_reply(c, &r, &rl, pc_reply_timeout_ms);
        if (rr != 1) {
            pc_fail("%s: no reply (%s) after %d of %d replies", exp[i].desc,
                    rr == 0 ? "timeout" : rr == -1 ? "connection closed" : "not RESP", i, n);
            bad = 1;
            break;
        }
        if (!pc_expect_bytes_n(exp[i].desc, r, rl, exp[i].reply, exp[i].len) && ++bad >= 5) {
            free(r);
            fprintf(stderr, "(stopping after 5 mismatches)\n");
            break;
        }
        free(r);
    }
    pc_conn_close(&c);
}

static void verify_model(int port)
{
    struct pc_conn *c = pc_conn_open(port);
    if (!c)
        return;
    const char *argv[NKEYS + 1];
    argv[0] = "MGET";
    for (int i = 0; i < NKEYS; i++)
        argv[i + 1] = keys[i];
    struct buf rep = { 0 };
    bprintf(&rep, "*%d\r\n", NKEYS);
    for (int i = 0; i < NKEYS; i++)
        bbulk(&rep, model[i]);
    pc_expectv(c, rep.p, rep.len, NKEYS + 1, argv, NULL);
    free(rep.p);
    pc_conn_close(&c);
}

static void one_round(int port, int chunked)
{
    struct buf req = { 0 };
    struct expected *exp = calloc(NCMDS, sizeof(*exp));
    for (int i = 0; i < NCMDS; i++)
        gen(&req, &exp[i], i);
    run_pipeline(port, &req, exp, NCMDS, chunked);
    verify_model(port);
    for (int i = 0; i < NCMDS; i++)
        free(exp[i].reply);
    free(exp);
    free(req.p);
}

static void deep_pipeline(int port)
{
    /* 20,000 INCRs on 16 counters across the shards plus GETs, one write */
    enum { N = 20000 };
    struct pc_conn *c = pc_conn_open(port);
    if (!c)
        return;
    char ctr[PC_SPREAD_KEYS][64];
    pc_spread_keys("deep:", ctr);
    long long counts[PC_SPREAD_KEYS] = { 0 };
    struct buf req = { 0 };
    struct expected *exp = calloc(N, sizeof(*exp));
    for (int i = 0; i < N; i++) {
        int k = (int)rnd(PC_SPREAD_KEYS);
        struct buf rep = { 0 };
        const char *argv[2] = { i % 5 == 4 ? "GET" : "INCR", ctr[k] };
        if (i % 5 == 4) {
            char v[32];
            snprintf(v, sizeof(v), "%lld", counts[k]);
            bbulk(&rep, counts[k] ? v : NULL);
        } else {
            bprintf(&rep, ":%lld\r\n", ++counts[k]);
        }
        pc_resp_encode(&req.p, &req.len, &req.cap, 2, argv, NULL);
        exp[i].reply = rep.p;
        exp[i].len = rep.len;
        snprintf(exp[i].desc, sizeof(exp[i].desc), "deep pipeline #%d: %s %s", i, argv[0], argv[1]);
    }
    pc_conn_write(c, req.p, req.len); /* the server's replies pile up meanwhile */
    int bad = 0;
    for (int i = 0; i < N; i++) {
        char *r = NULL;
        size_t rl = 0;
        if (pc_conn_read_reply(c, &r, &rl, pc_reply_timeout_ms) != 1) {
            pc_fail("%s: no reply", exp[i].desc);
            break;
        }
        if (!pc_expect_bytes_n(exp[i].desc, r, rl, exp[i].reply, exp[i].len) && ++bad >= 5) {
            free(r);
            break;
        }
        free(r);
    }
    for (int i = 0; i < N; i++)
        free(exp[i].reply);
    free(exp);
    free(req.p);
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);
    pc_conn_close(&c);
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    /* 64 keys: 16 spread over the shards, and with hash tags, 4 keys sharing
     * each of 16 spread tags (same shard within a tag) */
    char spread[PC_SPREAD_KEYS][64];
    pc_spread_keys("p:", spread);
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        snprintf(keys[i], 64, "%s", spread[i]);
        for (int j = 1; j < 4; j++)
            snprintf(keys[i + PC_SPREAD_KEYS * j], 64, "{%s}:%d", spread[i], j);
    }
    one_round(srv.port, 0);
    one_round(srv.port, 1);
    one_round(srv.port, 0);
    deep_pipeline(srv.port);
    pc_test_teardown(&srv);
    for (int i = 0; i < NKEYS; i++)
        free(model[i]);
    return pc_test_done("test_pipeline");
}
