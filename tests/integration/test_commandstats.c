/*
 * test_commandstats: INFO commandstats's calls, rejected_calls and
 * failed_calls against Redis 7.0's for the same commands.
 *
 * The test starts a reference redis-server next to the server under test,
 * sends both the same sequence (replies compared byte for byte), then
 * compares every cmdstat_<name> line of the commands sent, without usec,
 * and the errorstat_<name> lines of the errors they gave.
 * The sequence holds what each counter is about: errors from a command that
 * ran (SCAN with a bad cursor or option, INCR on a non-integer, MSET with a
 * key missing its value, WRONGTYPE in a gathered SINTERSTORE, FLUSHALL's
 * syntax error fanned out, RENAME of a missing key across shards), and
 * refusals before running (arity, NOAUTH, and OOM at maxmemory for a
 * split MSET, a gathered SUNIONSTORE, MSETNX across shards and a SET; inside
 * MULTI, every command as it is queued -- MULTI and WATCH too, not DISCARD --
 * and EXEC of a queue holding a deny-oom command, XGROUP CREATE's too), and
 * commands whose handler sends parts of its own: WATCH on keys of several
 * shards, and containers fanned out to every shard (SLOWLOG RESET, PUBSUB
 * NUMSUB), counted as their subcommand only -- no line for the container,
 * as the containers with keys whose subcommands run on the keys' owner
 * (OBJECT MEMORY XINFO XGROUP, here and on other shards) and FUNCTION and
 * SCRIPT; an unknown subcommand is counted for no command, one of the
 * wrong arity is its subcommand's rejected call.  DEBUG, while
 * enable-debug-command refuses it, is a rejected call, and inside MULTI
 * refused as it is queued.
 * With 4 shards most of these cross shards, where the call is counted
 * once, on the home shard, by its whole reply.  percore's figures come from
 * the aggregator's snapshot: its INFO is polled (3 s at most) until they
 * match.  Skipped (passes) when /usr/bin/redis-server is missing.
 */
#include "testclient.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REDIS_BIN "/usr/bin/redis-server"

/* the commands whose lines are compared */
static const char *const compared[] = {
    "set", "get", "scan", "incr", "mset", "msetnx", "sunionstore", "sinterstore", "sadd",
    "flushall", "rename", "auth", "mget", "dbsize", "config|set", "del", "exists",
    "watch", "unwatch", "slowlog|reset", "pubsub|numsub", "multi", "exec", "discard", "ping", "xgroup|create",
    "object|encoding", "object|freq", "object|help", "memory|usage", "xinfo|stream", "xgroup|destroy",
    "function|list", "script|load", "script|exists", "script|flush", "debug",
};
#define NCOMPARED (sizeof compared / sizeof compared[0])
/* the containers of those subcommands: Redis counts no call of theirs */
static const char *const uncounted[] = {"slowlog", "pubsub", "object", "memory", "xinfo", "xgroup", "function",
                                        "script"};
/* and the errorstat_<name> lines: each error reply counted once, refused or not (NOAUTH last:
 * Redis 7.0 has no line for it) */
static const char *const compared_errors[] = {"ERR", "OOM", "WRONGTYPE", "EXECABORT", "NOAUTH"};
#define NERRORS (sizeof compared_errors / sizeof compared_errors[0])

struct pair {
    struct pc_conn *ref, *cand;
};

/* the same command to both; their replies must be equal */
static void both(struct pair *p, const char *arg0, ...)
{
    const char *argv[64];
    int argc = 0;
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && argc < 64; a = va_arg(ap, const char *))
        argv[argc++] = a;
    va_end(ap);
    size_t rl, cl;
    char *r = pc_conn_cmd(p->ref, &rl, argc, argv);
    char *c = pc_conn_cmd(p->cand, &cl, argc, argv);
    char what[128];
    snprintf(what, sizeof what, "%s %s: percore's reply against Redis's", argv[0], argc > 1 ? argv[1] : "");
    if (!r)
        pc_fail("%s: the reference gave no reply", what);
    else
        pc_expect_bytes_n(what, c, cl, r, rl);
    free(r);
    free(c);
}

/* the same command to both, their replies not compared (MEMORY USAGE: the sizes differ) */
static void both_any(struct pair *p, const char *arg0, ...)
{
    const char *argv[64];
    int argc = 0;
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && argc < 64; a = va_arg(ap, const char *))
        argv[argc++] = a;
    va_end(ap);
    size_t rl, cl;
    free(pc_conn_cmd(p->ref, &rl, argc, argv));
    free(pc_conn_cmd(p->cand, &cl, argc, argv));
}

/* "calls=..,rejected_calls=..,failed_calls=.." of cmdstat_<name>, "" when there is none */
static void counts_of(const char *info, const char *name, char *out, size_t size)
{
    char head[64];
    snprintf(head, sizeof head, "\r\ncmdstat_%s:", name);
    const char *p = info ? strstr(info, head) : NULL;
    out[0] = '\0';
    if (!p)
        return;
    p += strlen(head);
    const char *end = strstr(p, "\r\n");
    const char *calls = strstr(p, "calls="), *rej = strstr(p, ",rejected_calls=");
    if (!end || !calls || !rej || rej > end)
        return;
    snprintf(out, size, "calls=%lld,rejected_calls=%lld,failed_calls=%lld", atoll(calls + 6), atoll(rej + 16),
             atoll(strstr(rej, ",failed_calls=") + 14));
}

/* "count=N" of errorstat_<name>, "" when there is none */
static void error_count_of(const char *info, const char *name, char *out, size_t size)
{
    char head[64];
    snprintf(head, sizeof head, "\r\nerrorstat_%s:count=", name);
    const char *p = info ? strstr(info, head) : NULL;
    out[0] = '\0';
    if (p)
        snprintf(out, size, "count=%lld", atoll(p + strlen(head)));
}

/* line i of what is compared: the commands', then the errors' */
static void compared_line(const char *info, size_t i, char *out, size_t size)
{
    if (i < NCOMPARED)
        counts_of(info, compared[i], out, size);
    else
        error_count_of(info, compared_errors[i - NCOMPARED], out, size);
}

static const char *compared_name(size_t i)
{
    static char name[64];
    if (i < NCOMPARED)
        snprintf(name, sizeof name, "cmdstat_%s", compared[i]);
    else
        snprintf(name, sizeof name, "errorstat_%s", compared_errors[i - NCOMPARED]);
    return name;
}

static char *commandstats(struct pc_conn *c)
{
    size_t len;
    return pc_conn_cmdl(c, &len, "INFO", "commandstats", "errorstats", NULL);
}

static void sequence(struct pair *p, struct pc_conn *ref2, struct pc_conn *cand2)
{
    char k[PC_SPREAD_KEYS][64];
    pc_spread_keys("cs:", k);
    /* ran, and failed */
    both(p, "SET", k[0], "1", NULL);
    both(p, "SCAN", "x", NULL);
    both(p, "SCAN", "0", "COUNT", "0", NULL);
    both(p, "SCAN", "0", "MATCH", NULL);
    both(p, "INCR", k[0], NULL);
    both(p, "SET", k[1], "x", NULL);
    both(p, "INCR", k[1], NULL);
    both(p, "MSET", k[2], "v", k[3], "v", k[4], NULL);
    both(p, "SADD", k[5], "a", NULL);
    both(p, "SINTERSTORE", k[6], k[5], k[1], NULL);
    both(p, "SINTERSTORE", k[7], k[5], k[8], NULL);
    both(p, "WATCH", k[0], k[5], k[9], NULL);
    both(p, "UNWATCH", NULL);
    both(p, "SLOWLOG", "RESET", NULL);
    both(p, "PUBSUB", "NUMSUB", "cs:channel", NULL);
    both(p, "SCRIPT", "LOAD", "return 1", NULL);
    both(p, "SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", NULL);
    both(p, "SCRIPT", "NOSUCH", NULL);
    both(p, "FUNCTION", "LIST", NULL);
    both(p, "FLUSHALL", "foo", NULL);
    both(p, "RENAME", k[9], k[10], NULL);
    both(p, "RENAME", k[0], k[10], NULL);
    both(p, "MGET", k[0], k[10], k[11], NULL);
    both(p, "EXISTS", k[0], k[10], k[11], NULL);
    /* refused: arity */
    both(p, "GET", NULL);
    both(p, "MGET", NULL);
    both(p, "DBSIZE", "x", NULL);
    /* refused: OOM, in every route */
    both(p, "CONFIG", "SET", "maxmemory-policy", "noeviction", NULL);
    both(p, "CONFIG", "SET", "maxmemory", "1", NULL);
    both(p, "MSET", k[0], "v", k[1], "v", k[2], "v", k[3], "v", k[12], "v", NULL);
    both(p, "MSETNX", k[13], "v", k[14], "v", k[15], "v", NULL);
    both(p, "SUNIONSTORE", k[6], k[5], k[1], k[2], NULL);
    for (int i = 0; i < 4; i++)
        both(p, "SET", k[i], "v", NULL);
    both(p, "DEL", k[0], k[1], k[2], k[3], NULL); /* not denyoom: runs */
    both(p, "CONFIG", "SET", "maxmemory", "0", NULL);
    /* refused inside MULTI past maxmemory (every shard holds a key: each is past its share) */
    struct pair second = {ref2, cand2};
    both(p, "MSET", k[0], "v", k[4], "v", k[8], "v", k[12], "v", NULL);
    both(p, "MULTI", NULL);
    both(p, "SET", k[0], "w", NULL);
    both(p, "GET", k[0], NULL);
    both(&second, "CONFIG", "SET", "maxmemory", "1", NULL);
    both(p, "EXEC", NULL); /* a deny-oom command queued: EXECABORT ... because of: OOM ... */
    both(p, "GET", k[0], NULL); /* outside MULTI a read runs */
    both(p, "MULTI", NULL);
    both(p, "GET", k[0], NULL);
    both(p, "PING", NULL);
    both(p, "MULTI", NULL);
    both(p, "WATCH", k[0], NULL);
    both(p, "CONFIG", "NOSUCH", NULL); /* the lookup's error first */
    both(p, "SAVE", NULL);             /* and no-multi's */
    both(p, "GET", NULL);
    both(p, "XGROUP", "CREATE", k[4], "g", "$", "MKSTREAM", NULL);
    both(p, "DISCARD", NULL);
    both(p, "MULTI", NULL);
    both(p, "GET", k[0], NULL);
    both(&second, "CONFIG", "SET", "maxmemory", "0", NULL);
    both(p, "EXEC", NULL); /* EXECABORT: previous errors */
    both(p, "MULTI", NULL);
    both(p, "GET", k[0], NULL);
    both(&second, "CONFIG", "SET", "maxmemory", "1", NULL);
    both(p, "EXEC", NULL); /* reads only: it runs */
    both(&second, "CONFIG", "SET", "maxmemory", "0", NULL);
    both(p, "MULTI", NULL);
    both(p, "XGROUP", "CREATE", k[4], "g", "$", "MKSTREAM", NULL);
    both(&second, "CONFIG", "SET", "maxmemory", "1", NULL);
    both(p, "EXEC", NULL); /* XGROUP CREATE is deny-oom */
    both(p, "MULTI", NULL);
    both(p, "RESET", NULL);
    both(&second, "CONFIG", "SET", "maxmemory", "0", NULL);
    both(p, "EXISTS", k[4], NULL);
    /* containers with one handler for their subcommands, here and on other shards */
    for (int i = 0; i < 16; i += 4) {
        both(p, "OBJECT", "ENCODING", k[i], NULL);
        both_any(p, "MEMORY", "USAGE", k[i], NULL);
        both(p, "XINFO", "STREAM", k[i], NULL);
    }
    both(p, "OBJECT", "FREQ", k[8], NULL);
    both(p, "OBJECT", "ENCODING", NULL);
    both(p, "OBJECT", "ENCODING", k[0], k[4], NULL);
    both(p, "OBJECT", "NOSUCH", NULL);
    both(p, "OBJECT", "HELP", NULL);
    both(p, "MEMORY", "NOSUCH", k[0], NULL);
    both(p, "XGROUP", "DESTROY", k[12], "g", NULL);
    both(p, "XINFO", "NOSUCH", NULL);
    both(p, "FUNCTION", "LIST", NULL);
    both(p, "FUNCTION", "NOSUCH", NULL);
    both(p, "SCRIPT", "EXISTS", "abc", NULL);
    both(p, "SCRIPT", "FLUSH", NULL);
    both(p, "MULTI", NULL);
    both(p, "OBJECT", "ENCODING", k[4], NULL);
    both(p, "SCRIPT", "EXISTS", "abc", NULL);
    both(p, "EXEC", NULL);
    /* DEBUG while enable-debug-command says no: refused before it runs (or is queued: EXEC aborts) */
    both(p, "DEBUG", "SLEEP", "0", NULL);
    both(p, "MULTI", NULL);
    both(p, "DEBUG", "SLEEP", "0", NULL);
    both(p, "PING", NULL);
    both(p, "EXEC", NULL);
    /* refused: NOAUTH, on a second connection while a password is set */
    both(p, "CONFIG", "SET", "requirepass", "pw", NULL);
    both(&second, "GET", k[0], NULL);
    both(&second, "AUTH", "pw", NULL);
    both(&second, "CONFIG", "SET", "requirepass", "", NULL);
    both(p, "DBSIZE", NULL);
}

int main(int argc, char **argv)
{
    struct pc_server srv, ref;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    if (access(REDIS_BIN, X_OK) != 0) {
        printf("no %s: nothing to compare against\n", REDIS_BIN);
        pc_test_teardown(&srv);
        return pc_test_done("test_commandstats");
    }
    if (pc_server_start(&ref, REDIS_BIN, NULL) != 0)
        return 2;
    struct pair p = {pc_conn_open(ref.port), pc_conn_open(srv.port)};
    struct pc_conn *ref2 = pc_conn_open(ref.port), *cand2 = pc_conn_open(srv.port);
    if (!p.ref || !p.cand || !ref2 || !cand2)
        return 2;
    both(&p, "FLUSHALL", NULL);
    both(&p, "CONFIG", "RESETSTAT", NULL);
    sequence(&p, ref2, cand2);

    char *want = commandstats(p.ref);
    char *got = NULL;
    long long deadline = pc_now_ms() + 3000;
    for (int settled = 0; !settled;) {
        free(got);
        got = commandstats(p.cand);
        settled = 1;
        for (size_t i = 0; i < NCOMPARED + NERRORS && settled; i++) {
            char w[128], g[128];
            compared_line(want, i, w, sizeof w);
            compared_line(got, i, g, sizeof g);
            settled = strcmp(w, g) == 0;
        }
        if (!settled && pc_now_ms() > deadline)
            break;
        if (!settled)
            pc_sleep_ms(50);
    }
    for (size_t i = 0; i < NCOMPARED + NERRORS; i++) {
        char w[128], g[128];
        compared_line(want, i, w, sizeof w);
        compared_line(got, i, g, sizeof g);
        if (!w[0] && i < NCOMPARED + NERRORS - 1) /* Redis 7.0 counts no NOAUTH: neither may we */
            pc_fail("the reference shows no %s: the sequence no longer exercises it", compared_name(i));
        else if (strcmp(w, g) != 0)
            pc_fail("%s: %s, Redis 7.0 says %s", compared_name(i), g[0] ? g : "(no line)", w);
    }
    for (size_t i = 0; i < sizeof uncounted / sizeof uncounted[0]; i++) {
        char w[128], g[128];
        counts_of(want, uncounted[i], w, sizeof w);
        counts_of(got, uncounted[i], g, sizeof g);
        if (w[0] || g[0])
            pc_fail("cmdstat_%s: %s, Redis 7.0 says %s", uncounted[i], g[0] ? g : "(no line)", w[0] ? w : "(no line)");
    }
    free(want);
    free(got);

    pc_conn_close(&ref2);
    pc_conn_close(&cand2);
    pc_conn_close(&p.ref);
    pc_conn_close(&p.cand);
    if (pc_server_stop(&ref, 15000) != 0)
        pc_fail("the reference redis-server did not stop cleanly");
    pc_test_teardown(&srv);
    return pc_test_done("test_commandstats");
}
