/*
 * test_lostwrites: nothing acknowledged is lost, nothing is applied twice,
 * nothing appears that nobody wrote -- under concurrent pipelined load on
 * every shard while other clients keep dying with pipelines in flight.
 *
 * Writers (WRITERS threads, one hiredis connection each, never killed) send
 * `rounds` pipelines of 1..PIPELINE commands (the long ones fill the shards'
 * inboxes: back-pressure), a random mix of
 *   - INCR on their own counters, one per spread key (16, on every shard):
 *     each reply must be exactly the previous one + 1;
 *   - INCR on shared counters, one per spread key: each writer sees its own
 *     replies strictly increase, and no reply value is handed out twice
 *     (a bitmap over all writers);
 *   - MSET of a group of 4 keys on 4 different shards, all to one version
 *     "g<group>.w<writer>.s<seq>", and MGET of a group: every value read must
 *     belong to that group and key slot and be a version some client had sent
 *     by then; nil is wrong once any MSET of the group had been acknowledged
 *     before the MGET was sent (or sits earlier in the same pipeline);
 *   - RPUSH of unique elements "w<writer>.<seq>" to a list on every shard.
 * A writer counts an operation as acknowledged only when it has read its reply.
 *
 * Churners (CHURNERS threads) meanwhile connect, write a pipeline (INCR on
 * their own counters, RPUSH "c<churner>.<seq>", MSET of the groups as writer
 * WRITERS+churner), read a random number of its replies (maybe none) and
 * disconnect abruptly (RST or FIN), CHURN times each.  What they sent but did
 * not read may or may not have been applied, so their counters are checked
 * with that tolerance: acknowledged <= final <= sent (and >= the largest INCR
 * reply read), their unacknowledged list elements may be present at most once.
 *
 * At the end (one fresh connection): every writer counter equals its
 * acknowledged INCRs, every shared counter equals the acknowledged INCRs of
 * all writers (churners do not touch them), every acknowledged element is in
 * its list exactly once and each client's elements keep their send order,
 * every group key holds a written version, and no list holds an element nobody
 * sent.  lost_writes in the RELIABILITY line counts acknowledged writes that
 * are missing (counter deficits, missing elements, nil reads after an
 * acknowledged MSET).  PC_LOSTWRITES_ROUNDS / PC_LOSTWRITES_CHURN scale it.
 *
 * Threading: one connection per thread; the shared tallies are atomics.
 */
#include "testclient.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define WRITERS 8
#define CHURNERS 2
#define CLIENTS (WRITERS + CHURNERS) /* writer ids of the MSET versions */
#define PIPELINE 160          /* a writer's pipelines hold 1..PIPELINE commands */
#define CHURN_PIPELINE 40
#define GROUPS 8
#define GROUP_KEYS 4
#define NKEYS PC_SPREAD_KEYS

#ifdef PERCORE_SANITIZE_THREAD /* TSan runs it ~20x slower: the same paths, fewer times */
static int rounds = 60;       /* pipelines per writer */
static int churn = 200;       /* connections per churner */
#else
static int rounds = 200;
static int churn = 600;
#endif
static int port;
static char spread[NKEYS][64];

static char shared_ctr[NKEYS][80];
static char own_ctr[CLIENTS][NKEYS][80];
static char list_key[NKEYS][80];
static char group_key[GROUPS][GROUP_KEYS][80];

/* versions of MSET sent per client: seq < mset_sent[w] were sent */
static atomic_int mset_sent[CLIENTS];
/* 1 once some MSET of the group has been acknowledged */
static atomic_int group_acked[GROUPS];
/* shared counter values handed out: bit v of shared_seen[i] */
static atomic_uchar *shared_seen[NKEYS];
static long shared_seen_max;
static atomic_long lost;      /* acknowledged writes found missing */

/* the RPUSHes of one client: element "<w|c><id>.<seq>" is p[seq] */
struct push_log {
    struct push {
        int conn;             /* the client's connection number that sent it */
        unsigned char acked;  /* its reply was read */
        unsigned char seen;   /* times found in the lists at the end */
    } *p;
    int n, cap;
};

static int push_log_add(struct push_log *l, int conn)
{
    if (l->n == l->cap) {
        l->cap = 2 * l->cap + 64;
        l->p = realloc(l->p, (size_t)l->cap * sizeof(*l->p));
    }
    l->p[l->n] = (struct push){ conn, 0, 0 };
    return l->n++;
}

/* per writer: acknowledged own and shared INCRs, pushes */
struct writer {
    int id;
    unsigned rng;
    long own[NKEYS];          /* acknowledged INCRs = expected value */
    long shared[NKEYS];       /* acknowledged INCRs on shared counters */
    long shared_last[NKEYS];  /* last reply seen per shared counter */
    struct push_log pushes;   /* all on connection 0 */
};

/* per churner: what was sent and what was acknowledged */
struct churner {
    int id;
    unsigned rng;
    long ctr_sent[NKEYS], ctr_acked[NKEYS], ctr_max_reply[NKEYS];
    struct push_log pushes;   /* connection numbers 0..churn-1 */
    int disconnects;
};

static struct writer writers[WRITERS];
static struct churner churners[CHURNERS];

static unsigned next_rand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

/* group g's keys: index k*4 + (g+k)%4, so slot/1024 gives blocks 0..3 and
 * slot%4 four distinct residues: 4 shards under either slot->shard mapping */
static void make_keys(void)
{
    pc_spread_keys("lw:", spread);
    for (int i = 0; i < NKEYS; i++) {
        snprintf(shared_ctr[i], sizeof(shared_ctr[i]), "{%.60s}shared", spread[i]);
        snprintf(list_key[i], sizeof(list_key[i]), "{%.60s}list", spread[i]);
        for (int w = 0; w < CLIENTS; w++)
            snprintf(own_ctr[w][i], sizeof(own_ctr[w][i]), "{%.60s}own:%d", spread[i], w);
    }
    for (int g = 0; g < GROUPS; g++)
        for (int k = 0; k < GROUP_KEYS; k++)
            snprintf(group_key[g][k], sizeof(group_key[g][k]), "{%.60s}grp:%d",
                     spread[(k * 4 + (g + k) % 4) % NKEYS], g);
}

/* a group value: "g<g>.w<w>.s<seq>" written by a client that had sent it */
static int valid_version(const char *v, size_t len, int g)
{
    int vg, vw, vs, n = 0;
    if (sscanf(v, "g%d.w%d.s%d%n", &vg, &vw, &vs, &n) != 3 || (size_t)n != len)
        return 0;
    return vg == g && vw >= 0 && vw < CLIENTS && vs >= 0 && vs < atomic_load(&mset_sent[vw]);
}

static void encode_mset(char **req, size_t *len, size_t *cap, int g, int w, int seq)
{
    char val[48];
    snprintf(val, sizeof(val), "g%d.w%d.s%d", g, w, seq);
    const char *a[1 + 2 * GROUP_KEYS];
    a[0] = "MSET";
    for (int k = 0; k < GROUP_KEYS; k++) {
        a[1 + 2 * k] = group_key[g][k];
        a[2 + 2 * k] = val;
    }
    pc_resp_encode(req, len, cap, 1 + 2 * GROUP_KEYS, a, NULL);
}

/* ---- writers ------------------------------------------------------------ */

enum op { OP_OWN, OP_SHARED, OP_MSET, OP_MGET, OP_PUSH };

/* a writer's command in flight, for checking its reply */
struct sent {
    enum op op;
    int arg;                  /* counter or list index, group, or push seq */
    int group_nil_ok;         /* MGET: no MSET of the group acknowledged or ahead of it */
};

static void check_mget(struct writer *w, const redisReply *r, const struct sent *s)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != GROUP_KEYS) {
        pc_fail("writer %d: MGET group %d: bad reply type %d", w->id, s->arg, r->type);
        return;
    }
    for (int k = 0; k < GROUP_KEYS; k++) {
        const redisReply *e = r->element[k];
        if (e->type == REDIS_REPLY_NIL) {
            if (!s->group_nil_ok) {
                atomic_fetch_add(&lost, 1);
                pc_fail("writer %d: MGET %s is nil after an acknowledged MSET", w->id,
                        group_key[s->arg][k]);
            }
        } else if (e->type != REDIS_REPLY_STRING || !valid_version(e->str, e->len, s->arg)) {
            pc_fail("writer %d: MGET %s returned %.*s, which nobody wrote there", w->id,
                    group_key[s->arg][k], e->type == REDIS_REPLY_STRING ? (int)e->len : 6,
                    e->type == REDIS_REPLY_STRING ? e->str : "(type)");
        }
    }
}

static void check_reply(struct writer *w, const redisReply *r, const struct sent *s)
{
    int i = s->arg;
    switch (s->op) {
    case OP_OWN:
        if (r->type != REDIS_REPLY_INTEGER || r->integer != w->own[i] + 1)
            pc_fail("writer %d: INCR %s replied %lld, want %ld", w->id, own_ctr[w->id][i],
                    r->type == REDIS_REPLY_INTEGER ? r->integer : -1LL, w->own[i] + 1);
        else
            w->own[i]++;
        break;
    case OP_SHARED:
        if (r->type != REDIS_REPLY_INTEGER || r->integer <= w->shared_last[i] ||
            r->integer > shared_seen_max) {
            pc_fail("writer %d: INCR %s replied %lld after %ld", w->id, shared_ctr[i],
                    r->type == REDIS_REPLY_INTEGER ? r->integer : -1LL, w->shared_last[i]);
            break;
        }
        w->shared_last[i] = (long)r->integer;
        w->shared[i]++;
        if (atomic_exchange(&shared_seen[i][r->integer], 1))
            pc_fail("INCR %s handed out %lld twice", shared_ctr[i], r->integer);
        break;
    case OP_MSET:
        if (r->type != REDIS_REPLY_STATUS || strcmp(r->str, "OK") != 0)
            pc_fail("writer %d: MSET group %d: not +OK", w->id, i);
        else
            atomic_store(&group_acked[i], 1);
        break;
    case OP_MGET:
        check_mget(w, r, s);
        break;
    case OP_PUSH:
        if (r->type != REDIS_REPLY_INTEGER || r->integer < 1)
            pc_fail("writer %d: RPUSH: bad reply", w->id);
        else
            w->pushes.p[i].acked = 1;
        break;
    }
}

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    redisContext *ctx = pc_hiredis_connect(port);
    if (!ctx) {
        pc_fail("writer %d: cannot connect", w->id);
        return NULL;
    }
    struct sent sent[PIPELINE];
    for (int round = 0; round < rounds && pc_failures() == 0; round++) {
        int mset_in_pipeline[GROUPS] = { 0 };
        int plen = 1 + (int)(next_rand(&w->rng) % PIPELINE);
        for (int j = 0; j < plen; j++) {
            unsigned x = next_rand(&w->rng);
            int i = (int)(x / 8 % NKEYS), g = (int)(x / 8 % GROUPS);
            struct sent *s = &sent[j];
            switch (x % 8) {
            case 0: case 1:
                *s = (struct sent){ OP_OWN, i, 0 };
                redisAppendCommand(ctx, "INCR %s", own_ctr[w->id][i]);
                break;
            case 2: case 3:
                *s = (struct sent){ OP_SHARED, i, 0 };
                redisAppendCommand(ctx, "INCR %s", shared_ctr[i]);
                break;
            case 4: {
                *s = (struct sent){ OP_MSET, g, 0 };
                char *req = NULL;
                size_t len = 0, cap = 0;
                encode_mset(&req, &len, &cap, g, w->id, atomic_fetch_add(&mset_sent[w->id], 1));
                redisAppendFormattedCommand(ctx, req, len);
                free(req);
                mset_in_pipeline[g] = 1;
                break;
            }
            case 5:
                *s = (struct sent){ OP_MGET, g,
                                    !atomic_load(&group_acked[g]) && !mset_in_pipeline[g] };
                redisAppendCommand(ctx, "MGET %s %s %s %s", group_key[g][0], group_key[g][1],
                                   group_key[g][2], group_key[g][3]);
                break;
            default: {
                int seq = push_log_add(&w->pushes, 0);
                *s = (struct sent){ OP_PUSH, seq, 0 };
                redisAppendCommand(ctx, "RPUSH %s w%d.%d", list_key[i], w->id, seq);
                break;
            }
            }
        }
        for (int j = 0; j < plen; j++) {
            redisReply *r = NULL;
            if (redisGetReply(ctx, (void **)&r) != REDIS_OK || !r) {
                pc_fail("writer %d round %d: no reply %d: %s", w->id, round, j, ctx->errstr);
                redisFree(ctx);
                return NULL;
            }
            if (r->type == REDIS_REPLY_ERROR)
                pc_fail("writer %d: error reply %s", w->id, r->str);
            else
                check_reply(w, r, &sent[j]);
            freeReplyObject(r);
        }
    }
    redisFree(ctx);
    return NULL;
}

/* ---- churners ----------------------------------------------------------- */

enum churn_op { C_INCR, C_PUSH, C_MSET };

static void *churner_main(void *arg)
{
    struct churner *c = arg;
    int wid = WRITERS + c->id;
    for (int it = 0; it < churn && pc_failures() == 0; it++) {
        struct pc_conn *conn = pc_conn_open(port);
        if (!conn) {
            pc_fail("churner %d: cannot connect", c->id);
            return NULL;
        }
        char *req = NULL;
        size_t len = 0, cap = 0;
        struct { enum churn_op op; int arg; } sent[CHURN_PIPELINE];
        for (int j = 0; j < CHURN_PIPELINE; j++) {
            unsigned x = next_rand(&c->rng);
            int i = (int)(x / 4 % NKEYS);
            if (x % 4 < 2) {
                sent[j].op = C_INCR;
                sent[j].arg = i;
                c->ctr_sent[i]++;
                const char *a[] = { "INCR", own_ctr[wid][i] };
                pc_resp_encode(&req, &len, &cap, 2, a, NULL);
            } else if (x % 4 == 2) {
                char el[32];
                sent[j].op = C_PUSH;
                sent[j].arg = push_log_add(&c->pushes, it);
                snprintf(el, sizeof(el), "c%d.%d", c->id, sent[j].arg);
                const char *a[] = { "RPUSH", list_key[i], el };
                pc_resp_encode(&req, &len, &cap, 3, a, NULL);
            } else {
                sent[j].op = C_MSET;
                sent[j].arg = (int)(x / 4 % GROUPS);
                encode_mset(&req, &len, &cap, sent[j].arg, wid,
                            atomic_fetch_add(&mset_sent[wid], 1));
            }
        }
        pc_conn_write(conn, req, len);
        free(req);
        int nread = (int)(next_rand(&c->rng) % (CHURN_PIPELINE + 1));
        for (int j = 0; j < nread; j++) {
            char *r;
            size_t rl;
            if (pc_conn_read_reply(conn, &r, &rl, pc_reply_timeout_ms) != 1) {
                pc_fail("churner %d: no reply %d before the disconnect", c->id, j);
                break;
            }
            long long v = r[0] == ':' ? strtoll(r + 1, NULL, 10) : -1;
            if (sent[j].op == C_INCR && v > 0) {
                c->ctr_acked[sent[j].arg]++;
                if (v > c->ctr_max_reply[sent[j].arg])
                    c->ctr_max_reply[sent[j].arg] = v;
            } else if (sent[j].op == C_PUSH && v > 0) {
                c->pushes.p[sent[j].arg].acked = 1;
            } else if (sent[j].op == C_MSET && strcmp(r, "+OK\r\n") == 0) {
                atomic_store(&group_acked[sent[j].arg], 1);
            } else {
                pc_fail("churner %d: unexpected reply %s", c->id, r);
            }
            free(r);
        }
        if (it % 2)
            pc_conn_abort(&conn);
        else
            pc_conn_close(&conn);
        c->disconnects++;
    }
    return NULL;
}

/* ---- the final state ---------------------------------------------------- */

static long get_counter(redisContext *ctx, const char *key)
{
    redisReply *r = redisCommand(ctx, "GET %s", key);
    long v = r && r->type == REDIS_REPLY_STRING ? strtol(r->str, NULL, 10) : 0;
    if (!r || (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_NIL))
        pc_fail("GET %s: bad reply", key);
    freeReplyObject(r);
    return v;
}

static void check_counters(redisContext *ctx)
{
    for (int i = 0; i < NKEYS; i++) {
        long want = 0;
        for (int w = 0; w < WRITERS; w++) {
            long v = get_counter(ctx, own_ctr[w][i]);
            want += writers[w].shared[i];
            if (v != writers[w].own[i]) {
                if (v < writers[w].own[i])
                    atomic_fetch_add(&lost, writers[w].own[i] - v);
                pc_fail("%s = %ld, acknowledged INCRs %ld", own_ctr[w][i], v, writers[w].own[i]);
            }
        }
        long v = get_counter(ctx, shared_ctr[i]);
        if (v != want) {
            if (v < want)
                atomic_fetch_add(&lost, want - v);
            pc_fail("%s = %ld, acknowledged INCRs of all writers %ld", shared_ctr[i], v, want);
        }
        for (int c = 0; c < CHURNERS; c++) {
            const struct churner *ch = &churners[c];
            long lo = ch->ctr_acked[i] > ch->ctr_max_reply[i] ? ch->ctr_acked[i]
                                                              : ch->ctr_max_reply[i];
            v = get_counter(ctx, own_ctr[WRITERS + c][i]);
            if (v < lo)
                atomic_fetch_add(&lost, lo - v);
            if (v < lo || v > ch->ctr_sent[i])
                pc_fail("%s = %ld, want %ld..%ld (acknowledged..sent)", own_ctr[WRITERS + c][i],
                        v, lo, ch->ctr_sent[i]);
        }
    }
}

/* every element present at most once and nothing unknown; every
 * acknowledged one present; one connection's elements in send order, and an
 * acknowledged one before any of the client's later connections */
static void check_lists(redisContext *ctx)
{
    struct push_log *logs[CLIENTS];
    for (int w = 0; w < WRITERS; w++)
        logs[w] = &writers[w].pushes;
    for (int c = 0; c < CHURNERS; c++)
        logs[WRITERS + c] = &churners[c].pushes;
    for (int i = 0; i < NKEYS; i++) {
        redisReply *r = redisCommand(ctx, "LRANGE %s 0 -1", list_key[i]);
        if (!r || r->type != REDIS_REPLY_ARRAY) {
            pc_fail("LRANGE %s: bad reply", list_key[i]);
            freeReplyObject(r);
            continue;
        }
        int last[CLIENTS], max_conn[CLIENTS];
        memset(last, -1, sizeof(last));
        memset(max_conn, -1, sizeof(max_conn));
        for (size_t e = 0; e < r->elements; e++) {
            const redisReply *el = r->element[e];
            char kind = 0;
            int who = -1, seq = -1, n = 0;
            if (el->type == REDIS_REPLY_STRING)
                sscanf(el->str, "%c%d.%d%n", &kind, &who, &seq, &n);
            int client = kind == 'w' && who >= 0 && who < WRITERS     ? who
                         : kind == 'c' && who >= 0 && who < CHURNERS ? WRITERS + who
                                                                      : -1;
            if (client < 0 || seq < 0 || seq >= logs[client]->n || (size_t)n != el->len) {
                pc_fail("%s holds %.*s, which nobody pushed", list_key[i],
                        el->type == REDIS_REPLY_STRING ? (int)el->len : 6,
                        el->type == REDIS_REPLY_STRING ? el->str : "(type)");
                continue;
            }
            struct push *p = &logs[client]->p[seq];
            if (p->seen++)
                pc_fail("%s holds %s twice", list_key[i], el->str);
            if (last[client] >= 0 && logs[client]->p[last[client]].conn == p->conn &&
                seq <= last[client])
                pc_fail("%s: %s after %c%d.%d, sent later on the same connection", list_key[i],
                        el->str, kind, who, last[client]);
            if (p->acked && p->conn < max_conn[client])
                pc_fail("%s: acknowledged %s after an element of a later connection", list_key[i],
                        el->str);
            last[client] = seq;
            if (p->conn > max_conn[client])
                max_conn[client] = p->conn;
        }
        freeReplyObject(r);
    }
    for (int c = 0; c < CLIENTS; c++) {
        for (int seq = 0; seq < logs[c]->n; seq++)
            if (logs[c]->p[seq].acked && !logs[c]->p[seq].seen) {
                atomic_fetch_add(&lost, 1);
                pc_fail("acknowledged RPUSH %c%d.%d is missing", c < WRITERS ? 'w' : 'c',
                        c < WRITERS ? c : c - WRITERS, seq);
            }
        free(logs[c]->p);
    }
}

static void check_groups(redisContext *ctx)
{
    for (int g = 0; g < GROUPS; g++)
        for (int k = 0; k < GROUP_KEYS; k++) {
            redisReply *r = redisCommand(ctx, "GET %s", group_key[g][k]);
            int nil_ok = !atomic_load(&group_acked[g]);
            if (!r || (r->type == REDIS_REPLY_NIL && !nil_ok) ||
                (r->type != REDIS_REPLY_NIL &&
                 (r->type != REDIS_REPLY_STRING || !valid_version(r->str, r->len, g)))) {
                if (r && r->type == REDIS_REPLY_NIL)
                    atomic_fetch_add(&lost, 1);
                pc_fail("final GET %s: not a written version", group_key[g][k]);
            }
            freeReplyObject(r);
        }
}

static int env_int(const char *name, int def)
{
    const char *v = getenv(name);
    return v && atoi(v) > 0 ? atoi(v) : def;
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    /* the scenario: the shard count and any server options after -- */
    char scenario[256];
    int sl = snprintf(scenario, sizeof(scenario), "lost writes");
    for (int i = 1, server_args = 0; i < argc && sl < (int)sizeof(scenario) - 64; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc && !server_args)
            sl += snprintf(scenario + sl, sizeof(scenario) - (size_t)sl, ", threads %.16s",
                           argv[++i]);
        else if (server_args)
            sl += snprintf(scenario + sl, sizeof(scenario) - (size_t)sl, " %.60s", argv[i]);
        else if (strcmp(argv[i], "--") == 0) {
            server_args = 1;
            sl += snprintf(scenario + sl, sizeof(scenario) - (size_t)sl, ",");
        }
    }
    rounds = env_int("PC_LOSTWRITES_ROUNDS", rounds);
    churn = env_int("PC_LOSTWRITES_CHURN", churn);
    port = srv.port;
    make_keys();
    /* no shared counter can exceed every writer INCRing it every time */
    shared_seen_max = (long)WRITERS * rounds * PIPELINE;
    for (int i = 0; i < NKEYS; i++)
        shared_seen[i] = calloc((size_t)shared_seen_max + 1, sizeof(atomic_uchar));

    pthread_t tw[WRITERS], tc[CHURNERS];
    for (int w = 0; w < WRITERS; w++) {
        writers[w].id = w;
        writers[w].rng = 0x9e3779b9u * (unsigned)(w + 1);
        pthread_create(&tw[w], NULL, writer_main, &writers[w]);
    }
    for (int c = 0; c < CHURNERS; c++) {
        churners[c].id = c;
        churners[c].rng = 0x85ebca6bu * (unsigned)(c + 1);
        pthread_create(&tc[c], NULL, churner_main, &churners[c]);
    }
    for (int w = 0; w < WRITERS; w++)
        pthread_join(tw[w], NULL);
    for (int c = 0; c < CHURNERS; c++)
        pthread_join(tc[c], NULL);

    redisContext *ctx = pc_hiredis_connect(port);
    int disconnects = 0;
    if (ctx) {
        check_counters(ctx);
        check_lists(ctx);
        check_groups(ctx);
        redisFree(ctx);
    } else {
        pc_fail("cannot connect for the final check");
    }
    for (int c = 0; c < CHURNERS; c++)
        disconnects += churners[c].disconnects;
    for (int i = 0; i < NKEYS; i++)
        free(shared_seen[i]);
    printf("%d writers x %d pipelines of 1..%d commands; %d churn disconnects; lost %ld\n",
           WRITERS, rounds, PIPELINE, disconnects, atomic_load(&lost));

    pc_test_teardown(&srv);
    char load[256], faults[128];
    snprintf(load, sizeof(load),
             "%d clients x %d pipelines of 1..%d (INCR own/shared, MSET/MGET 4 shards, RPUSH) "
             "+ %d churners x %d", WRITERS, rounds, PIPELINE, CHURNERS, churn);
    snprintf(faults, sizeof(faults), "%d abrupt disconnects (RST/FIN) with pipelines in flight",
             disconnects);
    pc_reliability_line(&srv, scenario, load, faults, 0, atomic_load(&lost));
    return pc_test_done("test_lostwrites");
}
