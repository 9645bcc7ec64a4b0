/*
 * test_basic: strings and keys, byte for byte, with keys on every shard.
 *
 * The command-by-command coverage lives in tests/compat (differential against
 * a real redis-server); this program checks the paths that only show with
 * several shards: multi-key commands whose keys live on different shards
 * (MSET/MGET/DEL/EXISTS/TOUCH/UNLINK/MSETNX), RENAME across shards, and the
 * keyspace-wide fan-outs (DBSIZE, KEYS, SCAN, RANDOMKEY, FLUSHDB) across
 * databases (SELECT/MOVE/SWAPDB).  Reply bytes are Redis 7.0's (this program
 * passes against redis-server 7.0.15).
 */
#include "testclient.h"

#include <stdlib.h>
#include <string.h>

static char keys[PC_SPREAD_KEYS][64];

static char *bulk(const char *s)
{
    static char buf[8][256];
    static int n;
    char *b = buf[n++ % 8];
    snprintf(b, 256, "$%zu\r\n%s\r\n", strlen(s), s);
    return b;
}

static char *integer(long long v)
{
    static char buf[8][64];
    static int n;
    char *b = buf[n++ % 8];
    snprintf(b, 64, ":%lld\r\n", v);
    return b;
}

/* send argv (all spread keys after a fixed prefix of args) */
static int expect_allkeys(struct pc_conn *c, const char *exp, const char *cmd, int with_values)
{
    const char *argv[1 + 2 * PC_SPREAD_KEYS];
    int argc = 0;
    argv[argc++] = cmd;
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        argv[argc++] = keys[i];
        if (with_values)
            argv[argc++] = keys[i]; /* value = the key's name */
    }
    return pc_expectv(c, exp, strlen(exp), argc, argv, NULL);
}

/* collect a flat array of bulk strings from a reply (hiredis not needed) */
static int parse_bulk_array(const char *r, size_t rl, char ***out)
{
    (void)rl;
    if (r[0] != '*')
        return -1;
    int n = atoi(r + 1);
    const char *p = strchr(r, '\n') + 1;
    char **v = calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
    for (int i = 0; i < n; i++) {
        if (*p != '$') {
            free(v);
            return -1;
        }
        int l = atoi(p + 1);
        p = strchr(p, '\n') + 1;
        v[i] = strndup(p, (size_t)l);
        p += l + 2;
    }
    *out = v;
    return n;
}

static void free_strv(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int has_key(char **v, int n, const char *k)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v[i], k) == 0)
            return 1;
    return 0;
}

static void check_keys_cmd(struct pc_conn *c, const char *pattern, int expect_all)
{
    size_t rl;
    char *r = pc_conn_cmdl(c, &rl, "KEYS", pattern, NULL);
    char **v = NULL;
    int n = r ? parse_bulk_array(r, rl, &v) : -1;
    if (n != (expect_all ? PC_SPREAD_KEYS : 0)) {
        pc_fail("KEYS %s: expected %d keys, got %d", pattern, expect_all ? PC_SPREAD_KEYS : 0, n);
    } else {
        for (int i = 0; expect_all && i < PC_SPREAD_KEYS; i++)
            if (!has_key(v, n, keys[i]))
                pc_fail("KEYS %s: %s missing", pattern, keys[i]);
    }
    if (n >= 0)
        free_strv(v, n);
    free(r);
}

/* full SCAN iteration: every key present throughout must come back */
static void check_scan(struct pc_conn *c, const char *count, const char *match)
{
    char cursor[64] = "0";
    int seen[PC_SPREAD_KEYS] = { 0 };
    int rounds = 0, total = 0;
    do {
        const char *argv[8] = { "SCAN", cursor, "COUNT", count };
        int argc = 4;
        if (match) {
            argv[argc++] = "MATCH";
            argv[argc++] = match;
        }
        size_t rl;
        char *r = pc_conn_cmd(c, &rl, argc, argv);
        if (!r || strncmp(r, "*2\r\n$", 5) != 0) {
            pc_fail("SCAN %s COUNT %s: bad reply", cursor, count);
            if (r)
                pc_print_escaped(stderr, r, rl, 200), fputc('\n', stderr);
            free(r);
            return;
        }
        int cl = atoi(r + 5);
        const char *p = strchr(r + 5, '\n') + 1;
        snprintf(cursor, sizeof(cursor), "%.*s", cl, p);
        p += cl + 2;
        char **v;
        int n = parse_bulk_array(p, rl - (size_t)(p - r), &v);
        for (int i = 0; i < n; i++) {
            int found = 0;
            for (int k = 0; k < PC_SPREAD_KEYS; k++)
                if (strcmp(v[i], keys[k]) == 0)
                    seen[k] = found = 1;
            if (!found)
                pc_fail("SCAN returned a key that does not exist: %s", v[i]);
            total++;
        }
        if (n >= 0)
            free_strv(v, n);
        free(r);
    } while (strcmp(cursor, "0") != 0 && ++rounds < 10000);
    for (int k = 0; k < PC_SPREAD_KEYS; k++)
        if (!seen[k] && (!match || strcmp(match, "*") == 0))
            pc_fail("SCAN COUNT %s: key %s never returned", count, keys[k]);
    if (rounds >= 10000)
        pc_fail("SCAN COUNT %s did not finish in 10000 calls", count);
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    struct pc_conn *c = pc_conn_open(srv.port);
    if (!c)
        return 2;
    pc_spread_keys("basic:", keys);

    pc_expect(c, "+PONG\r\n", "PING", NULL);
    pc_expect(c, "$5\r\nhello\r\n", "PING", "hello", NULL);
    pc_expect(c, "$3\r\nabc\r\n", "ECHO", "abc", NULL);
    pc_expect(c, ":0\r\n", "DBSIZE", NULL);

    /* single-key commands on every shard */
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        const char *k = keys[i];
        pc_expect(c, "$-1\r\n", "GET", k, NULL);
        pc_expect(c, "+OK\r\n", "SET", k, "10", NULL);
        pc_expect(c, "$2\r\n10\r\n", "GET", k, NULL);
        pc_expect(c, ":11\r\n", "INCR", k, NULL);
        pc_expect(c, ":1\r\n", "DECRBY", k, "10", NULL);
        pc_expect(c, "$3\r\n1.5\r\n", "INCRBYFLOAT", k, "0.5", NULL);
        pc_expect(c, ":5\r\n", "APPEND", k, "xy", NULL);
        pc_expect(c, ":5\r\n", "STRLEN", k, NULL);
        pc_expect(c, "$3\r\n.5x\r\n", "GETRANGE", k, "1", "3", NULL);
        pc_expect(c, ":7\r\n", "SETRANGE", k, "5", "zz", NULL);
        pc_expect(c, "$7\r\n1.5xyzz\r\n", "GETSET", k, k, NULL);
        pc_expect(c, "+string\r\n", "TYPE", k, NULL);
        pc_expect(c, "$-1\r\n", "SET", k, "v", "NX", NULL);
        pc_expect(c, bulk(k), "SET", k, k, "XX", "GET", NULL);
        pc_expect(c, ":-1\r\n", "TTL", k, NULL);
        pc_expect(c, ":1\r\n", "EXPIRE", k, "1000", NULL);
        pc_expect(c, ":1000\r\n", "TTL", k, NULL);
        pc_expect(c, ":1\r\n", "PERSIST", k, NULL);
        pc_expect(c, ":-1\r\n", "TTL", k, NULL);
        pc_expect(c, "$-1\r\n", "GETDEL", "basic:absent", NULL);
        pc_expect(c, "$6\r\nembstr\r\n", "OBJECT", "ENCODING", k, NULL);
    }
    pc_expect(c, integer(PC_SPREAD_KEYS), "DBSIZE", NULL);

    /* multi-key commands across shards (each key's value is its name) */
    char exp[4096];
    size_t o = (size_t)snprintf(exp, sizeof(exp), "*%d\r\n", PC_SPREAD_KEYS);
    for (int i = 0; i < PC_SPREAD_KEYS; i++)
        o += (size_t)snprintf(exp + o, sizeof(exp) - o, "%s", bulk(keys[i]));
    expect_allkeys(c, exp, "MGET", 0);
    expect_allkeys(c, "+OK\r\n", "MSET", 1);
    expect_allkeys(c, exp, "MGET", 0);
    expect_allkeys(c, integer(PC_SPREAD_KEYS), "EXISTS", 0);
    expect_allkeys(c, integer(PC_SPREAD_KEYS), "TOUCH", 0);
    expect_allkeys(c, ":0\r\n", "MSETNX", 1);
    pc_expect(c, "*3\r\n$-1\r\n$-1\r\n$-1\r\n", "MGET", "nokey1", "nokey2", "{x}nokey3", NULL);
    {
        char e2[512];
        snprintf(e2, sizeof(e2), "*4\r\n%s$-1\r\n%s%s", bulk(keys[1]), bulk(keys[6]), bulk(keys[1]));
        pc_expect(c, e2, "MGET", keys[1], "nokey", keys[6], keys[1], NULL);
    }
    pc_expect(c, ":3\r\n", "EXISTS", keys[2], keys[2], keys[9], NULL);

    /* keyspace-wide fan-outs */
    check_keys_cmd(c, "*", 1);
    check_keys_cmd(c, "nomatch*", 0);
    check_scan(c, "1", NULL);
    check_scan(c, "3", NULL);
    check_scan(c, "1000", NULL);
    check_scan(c, "10", "basic:*");
    {
        size_t rl;
        char *r = pc_conn_cmdl(c, &rl, "RANDOMKEY", NULL);
        int ok = 0;
        for (int i = 0; r && i < PC_SPREAD_KEYS; i++)
            if (strcmp(r, bulk(keys[i])) == 0)
                ok = 1;
        if (!ok)
            pc_fail("RANDOMKEY returned %s, not one of the keys", r ? r : "(nothing)");
        free(r);
    }

    /* RENAME/RENAMENX between keys on different shards */
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        int j = (i + 5) % PC_SPREAD_KEYS;
        char tmp[80];
        snprintf(tmp, sizeof(tmp), "%.63s:renamed", keys[i]);
        pc_expect(c, ":0\r\n", "RENAMENX", keys[i], keys[j], NULL);
        pc_expect(c, ":1\r\n", "EXPIRE", keys[i], "5000", NULL);
        pc_expect(c, "+OK\r\n", "RENAME", keys[i], tmp, NULL);
        pc_expect(c, ":0\r\n", "EXISTS", keys[i], NULL);
        pc_expect(c, bulk(keys[i]), "GET", tmp, NULL);
        pc_expect(c, ":5000\r\n", "TTL", tmp, NULL); /* the TTL moves with the value */
        pc_expect(c, ":1\r\n", "RENAMENX", tmp, keys[i], NULL);
        pc_expect(c, ":1\r\n", "PERSIST", keys[i], NULL);
    }
    pc_expect(c, "-ERR no such key\r\n", "RENAME", "basic:nokey", keys[3], NULL);
    pc_expect(c, "+OK\r\n", "RENAME", keys[4], keys[4], NULL);
    pc_expect(c, integer(PC_SPREAD_KEYS), "DBSIZE", NULL);

    /* databases: SELECT, MOVE, SWAPDB, FLUSHDB per db, DBSIZE per db */
    pc_expect(c, "+OK\r\n", "SELECT", "1", NULL);
    pc_expect(c, ":0\r\n", "DBSIZE", NULL);
    pc_expect(c, "$-1\r\n", "GET", keys[0], NULL);
    pc_expect(c, "+OK\r\n", "SELECT", "0", NULL);
    for (int i = 0; i < 4; i++)
        pc_expect(c, ":1\r\n", "MOVE", keys[i], "1", NULL);
    pc_expect(c, ":0\r\n", "MOVE", "basic:nokey", "1", NULL);
    pc_expect(c, integer(PC_SPREAD_KEYS - 4), "DBSIZE", NULL);
    pc_expect(c, "+OK\r\n", "SELECT", "1", NULL);
    pc_expect(c, ":4\r\n", "DBSIZE", NULL);
    pc_expect(c, bulk(keys[2]), "GET", keys[2], NULL);
    pc_expect(c, "+OK\r\n", "SWAPDB", "0", "1", NULL);
    pc_expect(c, integer(PC_SPREAD_KEYS - 4), "DBSIZE", NULL);
    pc_expect(c, bulk(keys[9]), "GET", keys[9], NULL);
    pc_expect(c, "+OK\r\n", "FLUSHDB", NULL);
    pc_expect(c, ":0\r\n", "DBSIZE", NULL);
    pc_expect(c, "+OK\r\n", "SELECT", "0", NULL);
    pc_expect(c, ":4\r\n", "DBSIZE", NULL);

    /* DEL / UNLINK across shards, duplicates counted once */
    pc_expect(c, "+OK\r\n", "SELECT", "0", NULL);
    expect_allkeys(c, "+OK\r\n", "MSET", 1);
    pc_expect(c, ":3\r\n", "DEL", keys[0], keys[7], keys[0], keys[12], "basic:nokey", NULL);
    pc_expect(c, ":2\r\n", "UNLINK", keys[1], keys[8], keys[1], NULL);
    expect_allkeys(c, integer(PC_SPREAD_KEYS - 5), "DEL", 0);
    pc_expect(c, ":0\r\n", "DBSIZE", NULL);

    /* FLUSHALL empties every db on every shard */
    expect_allkeys(c, "+OK\r\n", "MSET", 1);
    pc_expect(c, "+OK\r\n", "SELECT", "5", NULL);
    expect_allkeys(c, "+OK\r\n", "MSET", 1);
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);
    pc_expect(c, ":0\r\n", "DBSIZE", NULL);
    pc_expect(c, "+OK\r\n", "SELECT", "0", NULL);
    pc_expect(c, ":0\r\n", "DBSIZE", NULL);
    check_keys_cmd(c, "*", 0);

    pc_conn_close(&c);
    pc_test_teardown(&srv);
    return pc_test_done("test_basic");
}
