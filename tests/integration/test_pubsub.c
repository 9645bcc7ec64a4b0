/*
 * test_pubsub: Pub/Sub across shards.
 *
 * Connections land on shards as the kernel spreads them (SO_REUSEPORT);
 * the test opens connections until it has the ones it wants on every shard
 * (CLIENT INFO's shard=) and closes the rest.
 *
 * 1. Order and counts: two subscribers per shard (channel "news", pattern
 *    "ne*", one of the two also "*s"), one publisher thread per shard (at
 *    least two) publishing pipelined windows at once.  Every PUBLISH answers
 *    the number of receivers across all shards; every subscriber gets every
 *    message once per subscription (message, pmessage ne*, pmessage *s), in
 *    each publisher's order, and nothing else.
 * 2. RESP3: a subscriber on one shard gets Redis's push bytes for a message
 *    published on another.
 * 3. PUBSUB NUMSUB / NUMPAT / CHANNELS merge the shards (a channel or
 *    pattern with subscribers on several shards counts once); CLIENT LIST
 *    shows flags=P sub= psub=.
 * 4. A subscriber that disconnects is removed: NUMSUB and PUBLISH's count
 *    drop, and reach 0 when all are gone.
 * 6. Shard channels: a subscriber per shard (SSUBSCRIBE), and one more that
 *    SUBSCRIBEs the same name: SPUBLISH from every shard answers the shard
 *    subscribers' count and each of them gets every smessage in order; the
 *    channel subscriber gets none (only the PUBLISH after them); PUBSUB
 *    SHARDNUMSUB / SHARDCHANNELS merge the shards; CLIENT LIST shows ssub=1.
 * 5. A subscriber that stops reading is disconnected at the pubsub hard limit
 *    ("pubsub 256kb 0 0") while the publisher goes on (every PUBLISH is
 *    answered) and a reading subscriber on another shard gets every message
 *    in order.
 */
#include "testclient.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHARDS 16
#define SUBS_PER_SHARD 2
#define MAX_SUBS (MAX_SHARDS * SUBS_PER_SHARD)
#define MAX_PUBS MAX_SHARDS
#define MSGS 300   /* per publisher, phase 1 */
#define WINDOW 50  /* PUBLISHes in flight per publisher */
#define FLOOD 800  /* phase 5 messages: 12.8 MB, ~3x what loopback socket buffers take before the server holds any */
#define FLOOD_SIZE (16 * 1024)

static int port;
static int nshards;

/* how many shards the server has (INFO shards), 1 for a server without them */
static int count_shards(struct pc_conn *c)
{
    int n = 0;
    while (n < MAX_SHARDS && pc_info_shard_field(c, n, "keys") >= 0)
        n++;
    return n ? n : 1;
}

static int home_shard(struct pc_conn *c)
{
    int s = pc_conn_home_shard(c);
    return s < 0 ? 0 : s;
}

/* n connections, out[i] on shard i % nshards; false (and a failure) if the kernel never gave some */
static bool open_spread(int n, struct pc_conn **out)
{
    int missing = n;
    for (int tries = 0; missing > 0 && tries < 64 * n; tries++) {
        struct pc_conn *c = pc_conn_open(port);
        if (!c)
            break;
        int s = home_shard(c), i = s;
        while (i < n && out[i])
            i += nshards;
        if (i >= n) {
            pc_conn_close(&c);
            continue;
        }
        out[i] = c;
        missing--;
    }
    if (missing > 0)
        pc_fail("could not spread %d connections over %d shards", n, nshards);
    return missing == 0;
}

static void close_all(struct pc_conn **cs, int n)
{
    for (int i = 0; i < n; i++)
        pc_conn_close(&cs[i]);
}

/* the integer reply of a command, LLONG_MIN when it is not one */
static long long cmd_int(struct pc_conn *c, int argc, const char *const *argv)
{
    char *r = pc_conn_cmd(c, NULL, argc, argv);
    long long v = r && r[0] == ':' ? atoll(r + 1) : -999999;
    if (!r || r[0] != ':')
        pc_fail("%s: expected an integer, got %s", argv[0], r ? r : "(nothing)");
    free(r);
    return v;
}

/* PUBSUB NUMSUB <channel>'s count (RESP2: *2 $ch :n) */
static long long numsub(struct pc_conn *c, const char *channel)
{
    char *r = pc_conn_cmdl(c, NULL, "PUBSUB", "NUMSUB", channel, NULL);
    const char *p = r ? strrchr(r, ':') : NULL;
    long long v = p ? atoll(p + 1) : -1;
    free(r);
    return v;
}

/* poll NUMSUB until it is want (closing is seen by the shard a moment later) */
static long long numsub_wait(struct pc_conn *c, const char *channel, long long want)
{
    long long v = numsub(c, channel);
    for (long long t0 = pc_now_ms(); v != want && pc_now_ms() - t0 < 10000; v = numsub(c, channel))
        pc_sleep_ms(20);
    return v;
}

/* the next bulk string of a reply at *p into dst (NUL-terminated, at most cap-1 bytes); false if none */
static bool next_bulk(const char **p, char *dst, size_t cap, size_t *len)
{
    const char *s = strchr(*p, '$');
    if (!s)
        return false;
    long n = atol(s + 1);
    const char *data = strstr(s, "\r\n");
    if (!data || n < 0)
        return false;
    data += 2;
    size_t copy = (size_t)n < cap - 1 ? (size_t)n : cap - 1;
    memcpy(dst, data, copy);
    dst[copy] = '\0';
    *len = (size_t)n;
    *p = data + n + 2;
    return true;
}

/* one message: its kind ("message" or "pmessage"), pattern ("" for message), channel and payload */
struct msg {
    char kind[16];
    char pattern[16];
    char channel[16];
    char payload[64];
    size_t payload_len;
};

static bool parse_msg(const char *r, struct msg *m)
{
    const char *p = r;
    size_t len;
    memset(m, 0, sizeof(*m));
    if (!next_bulk(&p, m->kind, sizeof(m->kind), &len))
        return false;
    if (strcmp(m->kind, "pmessage") == 0 && !next_bulk(&p, m->pattern, sizeof(m->pattern), &len))
        return false;
    return next_bulk(&p, m->channel, sizeof(m->channel), &len) &&
           next_bulk(&p, m->payload, sizeof(m->payload), &m->payload_len);
}

static void subscribe(struct pc_conn *c, bool pattern, const char *name, int count)
{
    char exp[128];
    const char *kind = pattern ? "psubscribe" : "subscribe";
    snprintf(exp, sizeof(exp), "*3\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n:%d\r\n", strlen(kind), kind, strlen(name), name,
             count);
    pc_expect(c, exp, pattern ? "PSUBSCRIBE" : "SUBSCRIBE", name, NULL);
}

/* ---------------------------------------------------------------- 1. order and counts */

struct publisher {
    pthread_t thread;
    struct pc_conn *conn;
    int index;
    long long receivers; /* what every PUBLISH must answer */
};

static void *publish_all(void *arg)
{
    struct publisher *p = arg;
    char *req = NULL;
    size_t len = 0, cap = 0;
    char want[32];
    snprintf(want, sizeof(want), ":%lld\r\n", p->receivers);
    for (int first = 0; first < MSGS; first += WINDOW) {
        len = 0;
        for (int i = first; i < first + WINDOW && i < MSGS; i++) {
            char payload[64];
            snprintf(payload, sizeof(payload), "p%d:%d", p->index, i);
            const char *argv[] = {"PUBLISH", "news", payload};
            pc_resp_encode(&req, &len, &cap, 3, argv, NULL);
        }
        if (pc_conn_write(p->conn, req, len) != 0) {
            pc_fail("publisher %d: write failed", p->index);
            break;
        }
        for (int i = first; i < first + WINDOW && i < MSGS; i++)
            if (!pc_expect_reply(p->conn, "PUBLISH news (receivers on every shard)", want, strlen(want)))
                goto out;
    }
out:
    free(req);
    return NULL;
}

/* read a subscriber's messages: each publisher's in order, once per subscription */
static void check_subscriber(struct pc_conn *c, int sub, int npubs, bool star_s)
{
    enum { MESSAGE, NE, STAR_S, KINDS };
    int next[MAX_PUBS][KINDS];
    memset(next, 0, sizeof(next));
    int kinds = star_s ? 3 : 2;
    long total = (long)npubs * MSGS * kinds;
    for (long got = 0; got < total; got++) {
        char *r;
        size_t rl;
        struct msg m;
        if (pc_conn_read_reply(c, &r, &rl, 10000) != 1) {
            pc_fail("subscriber %d: %ld of %ld messages arrived", sub, got, total);
            return;
        }
        int pub, seq, kind = -1;
        bool ok = parse_msg(r, &m) && strcmp(m.channel, "news") == 0 && sscanf(m.payload, "p%d:%d", &pub, &seq) == 2 &&
                  pub >= 0 && pub < npubs;
        if (ok && strcmp(m.kind, "message") == 0 && r[1] == '3')
            kind = MESSAGE;
        else if (ok && strcmp(m.kind, "pmessage") == 0 && strcmp(m.pattern, "ne*") == 0)
            kind = NE;
        else if (ok && strcmp(m.kind, "pmessage") == 0 && strcmp(m.pattern, "*s") == 0 && star_s)
            kind = STAR_S;
        if (kind < 0) {
            pc_fail("subscriber %d: unexpected %s", sub, r);
            free(r);
            return;
        }
        if (seq != next[pub][kind]) {
            pc_fail("subscriber %d: publisher %d's message %d (%s %s) arrived when %d was due", sub, pub, seq, m.kind,
                    m.pattern, next[pub][kind]);
            free(r);
            return;
        }
        next[pub][kind]++;
        free(r);
    }
    char *r;
    size_t rl;
    if (pc_conn_read_reply(c, &r, &rl, 100) != 0) {
        pc_fail("subscriber %d: more than %ld messages", sub, total);
        free(r);
    }
}

static void phase_order(struct pc_conn **subs, int nsubs, struct pc_conn *ctl)
{
    for (int i = 0; i < nsubs; i++) {
        subscribe(subs[i], false, "news", 1);
        subscribe(subs[i], true, "ne*", 2);
        if (i < nshards)
            subscribe(subs[i], true, "*s", 3);
    }
    const char *probe[] = {"PUBLISH", "nobody", "x"};
    long long zero = cmd_int(ctl, 3, probe);
    if (zero != 0)
        pc_fail("PUBLISH to a channel nobody listens to: %lld receivers", zero);

    int npubs = nshards < 2 ? 2 : nshards;
    struct publisher pubs[MAX_PUBS];
    struct pc_conn *pconns[MAX_PUBS] = {0};
    if (!open_spread(npubs, pconns))
        return;
    long long receivers = nsubs + nsubs + nshards;
    for (int i = 0; i < npubs; i++) {
        pubs[i] = (struct publisher){.conn = pconns[i], .index = i, .receivers = receivers};
        pthread_create(&pubs[i].thread, NULL, publish_all, &pubs[i]);
    }
    for (int i = 0; i < npubs; i++)
        pthread_join(pubs[i].thread, NULL);
    for (int i = 0; i < nsubs; i++)
        check_subscriber(subs[i], i, npubs, i < nshards);
    close_all(pconns, npubs);
    printf("order: %d publishers x %d messages, %d subscribers on %d shards, %lld receivers each\n", npubs, MSGS,
           nsubs, nshards, receivers);
}

/* ---------------------------------------------------------------- 2. RESP3 pushes */

static void phase_resp3(void)
{
    struct pc_conn *cs[2] = {0};
    if (!open_spread(2, cs))
        return;
    struct pc_conn *sub = cs[0], *pub = cs[1]; /* on another shard when there are several */
    char *r = pc_conn_cmdl(sub, NULL, "HELLO", "3", NULL);
    free(r);
    pc_expect(sub, ">3\r\n$9\r\nsubscribe\r\n$2\r\nr3\r\n:1\r\n", "SUBSCRIBE", "r3", NULL);
    pc_expect(sub, ">3\r\n$10\r\npsubscribe\r\n$2\r\nr*\r\n:2\r\n", "PSUBSCRIBE", "r*", NULL);
    pc_expect(pub, ":2\r\n", "PUBLISH", "r3", "hello", NULL);
    const char m[] = ">3\r\n$7\r\nmessage\r\n$2\r\nr3\r\n$5\r\nhello\r\n";
    const char pm[] = ">4\r\n$8\r\npmessage\r\n$2\r\nr*\r\n$2\r\nr3\r\n$5\r\nhello\r\n";
    pc_expect_reply(sub, "RESP3 message push from another shard", m, sizeof(m) - 1);
    pc_expect_reply(sub, "RESP3 pmessage push from another shard", pm, sizeof(pm) - 1);
    /* RESP3 has no subscriber mode: any command runs */
    pc_expect(sub, "+PONG\r\n", "PING", NULL);
    pc_expect(sub, "_\r\n", "GET", "nokey", NULL);
    close_all(cs, 2);
}

/* ---------------------------------------------------------------- 6. shard channels */

static void phase_shard_channels(struct pc_conn *ctl)
{
    struct pc_conn *cs[MAX_SHARDS + 1] = {0};
    int n = nshards + 1; /* cs[i] on shard i; cs[nshards] on shard 0 too: the channel subscriber */
    if (!open_spread(n, cs))
        return;
    for (int i = 0; i < nshards; i++)
        pc_expect(cs[i], "*3\r\n$10\r\nssubscribe\r\n$2\r\nsc\r\n:1\r\n", "SSUBSCRIBE", "sc", NULL);
    struct pc_conn *plain = cs[nshards];
    pc_expect(plain, "*3\r\n$9\r\nsubscribe\r\n$2\r\nsc\r\n:1\r\n", "SUBSCRIBE", "sc", NULL);
    char exp[160];
    snprintf(exp, sizeof(exp), "*2\r\n$2\r\nsc\r\n:%d\r\n", nshards);
    pc_expect(ctl, exp, "PUBSUB", "SHARDNUMSUB", "sc", NULL);
    pc_expect(ctl, "*1\r\n$2\r\nsc\r\n", "PUBSUB", "SHARDCHANNELS", NULL);
    pc_expect(ctl, "*2\r\n$2\r\nsc\r\n:1\r\n", "PUBSUB", "NUMSUB", "sc", NULL);
    struct pc_conn *pubs[MAX_SHARDS] = {0};
    if (!open_spread(nshards, pubs))
        return;
    snprintf(exp, sizeof(exp), ":%d\r\n", nshards);
    for (int i = 0; i < nshards; i++) { /* one SPUBLISH from each shard, in turn */
        char msg[16];
        snprintf(msg, sizeof(msg), "m%d", i);
        pc_expect(pubs[i], exp, "SPUBLISH", "sc", msg, NULL);
    }
    for (int s = 0; s < nshards; s++) {
        for (int i = 0; i < nshards; i++) {
            char want[96];
            int len = snprintf(want, sizeof(want), "*3\r\n$8\r\nsmessage\r\n$2\r\nsc\r\n$2\r\nm%d\r\n", i);
            pc_expect_reply(cs[s], "smessage from every shard, in order", want, (size_t)len);
        }
    }
    pc_expect(pubs[0], ":1\r\n", "PUBLISH", "sc", "plain", NULL);
    const char m[] = "*3\r\n$7\r\nmessage\r\n$2\r\nsc\r\n$5\r\nplain\r\n";
    pc_expect_reply(plain, "the channel subscriber: PUBLISH's message, no smessage before it", m, sizeof(m) - 1);
    char *list = pc_conn_cmdl(ctl, NULL, "CLIENT", "LIST", NULL);
    int ssub = 0;
    for (const char *p = list; p && (p = strstr(p, " ssub=1 ")); p++)
        ssub++;
    free(list);
    if (ssub != nshards)
        pc_fail("CLIENT LIST: %d clients with ssub=1, want %d", ssub, nshards);
    close_all(pubs, nshards);
    close_all(cs, n);
}

/* ---------------------------------------------------------------- 3. introspection */

static void phase_introspection(struct pc_conn *ctl, int nsubs)
{
    char exp[128];
    snprintf(exp, sizeof(exp), "*4\r\n$4\r\nnews\r\n:%d\r\n$4\r\nnone\r\n:0\r\n", nsubs);
    pc_expect(ctl, exp, "PUBSUB", "NUMSUB", "news", "none", NULL);
    pc_expect(ctl, ":2\r\n", "PUBSUB", "NUMPAT", NULL); /* ne* and *s, on every shard: each once */
    pc_expect(ctl, "*1\r\n$4\r\nnews\r\n", "PUBSUB", "CHANNELS", NULL);
    pc_expect(ctl, "*1\r\n$4\r\nnews\r\n", "PUBSUB", "CHANNELS", "n?ws", NULL);
    pc_expect(ctl, "*0\r\n", "PUBSUB", "CHANNELS", "x*", NULL);
    char *list = pc_conn_cmdl(ctl, NULL, "CLIENT", "LIST", NULL);
    int with3 = 0, with2 = 0;
    for (const char *p = list; p && (p = strstr(p, "flags=P ")); p++) {
        const char *sub = strstr(p, " sub=");
        with3 += sub && strncmp(sub, " sub=1 psub=2 ", 14) == 0;
        with2 += sub && strncmp(sub, " sub=1 psub=1 ", 14) == 0;
    }
    free(list);
    if (with3 != nshards || with2 != nsubs - nshards)
        pc_fail("CLIENT LIST: %d clients with flags=P sub=1 psub=2 and %d with psub=1, want %d and %d", with3, with2,
                nshards, nsubs - nshards);
}

/* ---------------------------------------------------------------- 4. disconnects */

static void phase_disconnect(struct pc_conn **subs, int nsubs, struct pc_conn *ctl)
{
    /* the second group (psub=1), one on every shard, goes */
    for (int i = nshards; i < nsubs; i++)
        pc_conn_close(&subs[i]);
    int left = nshards;
    long long n = numsub_wait(ctl, "news", left);
    if (n != left)
        pc_fail("NUMSUB news is %lld after %d of %d subscribers left, want %d", n, nsubs - left, nsubs, left);
    const char *pub[] = {"PUBLISH", "news", "after"};
    long long r = cmd_int(ctl, 3, pub);
    if (r != 3LL * left)
        pc_fail("PUBLISH after disconnects: %lld receivers, want %d", r, 3 * left);
    close_all(subs, nsubs);
    if ((n = numsub_wait(ctl, "news", 0)) != 0)
        pc_fail("NUMSUB news is %lld after every subscriber left", n);
    pc_expect(ctl, ":0\r\n", "PUBSUB", "NUMPAT", NULL);
    pc_expect(ctl, "*0\r\n", "PUBSUB", "CHANNELS", NULL);
    pc_expect(ctl, ":0\r\n", "PUBLISH", "news", "nobody", NULL);
}

/* ---------------------------------------------------------------- 5. a slow subscriber */

static void phase_slow(struct pc_server *srv, struct pc_conn *ctl)
{
    pc_expect(ctl, "+OK\r\n", "CONFIG", "SET", "client-output-buffer-limit", "pubsub 256kb 0 0", NULL);
    struct pc_conn *cs[3] = {0};
    if (!open_spread(3, cs))
        return;
    /* the slow one, the reader and the publisher, on different shards when there are 3 */
    struct pc_conn *slow = cs[0], *reader = cs[1], *pub = cs[2];
    subscribe(slow, false, "flood", 1);
    subscribe(reader, false, "flood", 1);
    char *payload = malloc(FLOOD_SIZE + 1);
    char *req = NULL;
    size_t len = 0, cap = 0;
    long long last = 2, drops = 0;
    int next = 0;
    for (int i = 0; i < FLOOD; i++) {
        memset(payload, 'a' + i % 26, FLOOD_SIZE);
        int n = snprintf(payload, 16, "%d:", i);
        payload[n] = 'x';
        const char *argv[] = {"PUBLISH", "flood", payload};
        size_t lens[] = {7, 5, FLOOD_SIZE};
        len = 0;
        pc_resp_encode(&req, &len, &cap, 3, argv, lens);
        if (pc_conn_write(pub, req, len) != 0) {
            pc_fail("the publisher could not write PUBLISH %d", i);
            break;
        }
        char *r;
        size_t rl;
        if (pc_conn_read_reply(pub, &r, &rl, 10000) != 1 || r[0] != ':') {
            pc_fail("PUBLISH %d: no integer reply", i);
            free(r);
            break;
        }
        long long count = atoll(r + 1);
        free(r);
        if (count > last || count < 1)
            pc_fail("PUBLISH %d: %lld receivers after %lld", i, count, last);
        drops += count < last;
        last = count;
        /* the reader keeps up: every message, in order */
        for (; next <= i; next++) {
            if (pc_conn_read_reply(reader, &r, &rl, 10000) != 1) {
                pc_fail("the reading subscriber did not get message %d", next);
                break;
            }
            char head[32];
            snprintf(head, sizeof(head), "$%d\r\n%d:x", FLOOD_SIZE, next);
            if (!strstr(r, head))
                pc_fail("the reading subscriber got the wrong message where %d was due", next);
            free(r);
        }
    }
    if (last != 1)
        pc_fail("the subscriber that does not read was never cut off (PUBLISH still reaches %lld)", last);
    long long got = pc_conn_drain_until_closed(slow, 20000);
    printf("slow subscriber: closed after %lld bytes of %d messages of %d bytes\n", got, FLOOD, FLOOD_SIZE);
    if (got < 0)
        pc_fail("the subscriber that does not read is still connected");
    pc_expect(ctl, "*2\r\n$5\r\nflood\r\n:1\r\n", "PUBSUB", "NUMSUB", "flood", NULL);
    if (!srv->external &&
        pc_server_log_has(srv, "scheduled to be closed ASAP for overcoming of output buffer limits") != 1)
        pc_fail("the server log does not say why the subscriber was closed");
    free(payload);
    free(req);
    close_all(cs, 3);
    pc_expect(ctl, "+OK\r\n", "CONFIG", "SET", "client-output-buffer-limit", "pubsub 32mb 8mb 60", NULL);
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 1;
    port = srv.port;
    struct pc_conn *ctl = pc_conn_open(port);
    nshards = count_shards(ctl);
    struct pc_conn *subs[MAX_SUBS] = {0};
    int nsubs = nshards * SUBS_PER_SHARD;
    if (open_spread(nsubs, subs)) {
        phase_order(subs, nsubs, ctl);
        phase_resp3();
        phase_introspection(ctl, nsubs);
        phase_disconnect(subs, nsubs, ctl);
    }
    phase_shard_channels(ctl);
    phase_slow(&srv, ctl);
    pc_expect(ctl, "+PONG\r\n", "PING", NULL);
    pc_conn_close(&ctl);
    pc_test_teardown(&srv);
    return pc_test_done("test_pubsub");
}
