/*
 * test_slowlog: SLOWLOG GET / LEN / RESET / HELP with the commands of every
 * shard in one log.
 *
 * With slowlog-log-slower-than 0 every command is recorded by its client's
 * shard (the time of the parts run elsewhere goes home with their replies);
 * SLOWLOG answers from all shards merged:
 *  1. SETs of keys on every shard all show up in GET -1 (6 fields each,
 *     unique ids, newest first by timestamp), LEN agrees, RESET empties.
 *  2. An entry as Redis 7.0 writes it (argv as sent): at most 32 arguments ("... (N more
 *     arguments)"), arguments cut at 128 bytes ("... (N more bytes)"),
 *     AUTH's argument "(redacted)" (but not in AUTH a b c or HELLO 9 AUTH u p, which
 *     Redis refuses before it redacts), the client's addr and name.
 *  3. wherever a command ran, one entry with the client's addr and name: a
 *     split MSET or MGET is one entry, with all its arguments.
 *  4. slowlog-max-len caps GET and LEN over all shards; -1 turns it off;
 *     GET 0 and GET n; the error texts and HELP of Redis 7.0.
 *
 * Passes against redis-server 7.0.15 too.
 */
#include "testclient.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static char keys[PC_SPREAD_KEYS][64];

/* a parsed RESP value: just what the slowlog needs */
struct val {
    char type;
    long long n;          /* integer, or element count, or bulk length */
    const char *s;        /* bulk bytes */
    struct val *elem;     /* array elements */
    char *raw;            /* the reply bytes s points into (the top value only) */
};

static const char *parse(const char *p, struct val *v)
{
    v->type = *p;
    v->n = strtoll(p + 1, NULL, 10);
    v->elem = NULL;
    v->raw = NULL;
    p = strchr(p, '\n') + 1;
    if (v->type == '$' && v->n >= 0) {
        v->s = p;
        return p + v->n + 2;
    }
    if (v->type == '*' && v->n > 0) {
        v->elem = calloc((size_t)v->n, sizeof(*v->elem));
        for (long long i = 0; i < v->n; i++)
            p = parse(p, &v->elem[i]);
    }
    return p;
}

static void release(struct val *v)
{
    if (v->type == '*')
        for (long long i = 0; i < v->n && v->elem; i++)
            release(&v->elem[i]);
    free(v->elem);
    free(v->raw);
}

static int bulk_is(const struct val *v, const char *s)
{
    return v->type == '$' && v->n == (long long)strlen(s) && memcmp(v->s, s, strlen(s)) == 0;
}

/* SLOWLOG GET <count>: the parsed array (caller releases), raw reply kept in *raw */
static struct val slowlog_get(struct pc_conn *c, const char *count)
{
    size_t rl;
    char *r = pc_conn_cmdl(c, &rl, "SLOWLOG", "GET", count, NULL); /* count NULL: the default */
    struct val v = {0};
    if (!r || r[0] != '*') {
        pc_fail("SLOWLOG GET %s: %s", count, r ? r : "(nothing)");
    } else {
        char *copy = malloc(rl + 1); /* parse() points into it: keep it for the val's life */
        memcpy(copy, r, rl + 1);
        parse(copy, &v);
        v.raw = copy;
    }
    free(r);
    return v;
}

static long long slowlog_len(struct pc_conn *c)
{
    size_t rl;
    char *r = pc_conn_cmdl(c, &rl, "SLOWLOG", "LEN", NULL);
    long long n = r && r[0] == ':' ? strtoll(r + 1, NULL, 10) : -1;
    free(r);
    return n;
}

/* the entry whose argv[0] is cmd and argv[1] is arg1 (NULL: any), or NULL */
static const struct val *find_entry(const struct val *log, const char *cmd, const char *arg1)
{
    for (long long i = 0; i < log->n; i++) {
        const struct val *argv = &log->elem[i].elem[3];
        if (argv->n >= 1 && bulk_is(&argv->elem[0], cmd) && (!arg1 || (argv->n >= 2 && bulk_is(&argv->elem[1], arg1))))
            return &log->elem[i];
    }
    return NULL;
}

static void phase_every_shard(struct pc_conn *c)
{
    pc_expect(c, "+OK\r\n", "CONFIG", "SET", "slowlog-log-slower-than", "0", NULL);
    pc_expect(c, "+OK\r\n", "SLOWLOG", "RESET", NULL);
    for (int i = 0; i < PC_SPREAD_KEYS; i++)
        pc_expect(c, "+OK\r\n", "SET", keys[i], "v", NULL);
    long long len = slowlog_len(c);
    /* RESET itself, the SETs (LEN is recorded after it answers) */
    if (len != PC_SPREAD_KEYS + 1)
        pc_fail("SLOWLOG LEN %lld, expected %d", len, PC_SPREAD_KEYS + 1);
    struct val log = slowlog_get(c, "-1");
    if (log.n != len + 1)
        pc_fail("SLOWLOG GET -1: %lld entries, expected %lld", log.n, len + 1);
    for (int i = 0; i < PC_SPREAD_KEYS; i++)
        if (!find_entry(&log, "SET", keys[i]))
            pc_fail("no slowlog entry for SET %s", keys[i]);
    for (long long i = 0; i < log.n; i++) {
        const struct val *e = &log.elem[i];
        if (e->type != '*' || e->n != 6 || e->elem[0].type != ':' || e->elem[1].type != ':' ||
            e->elem[2].type != ':' || e->elem[3].type != '*' || e->elem[4].type != '$' || e->elem[5].type != '$') {
            pc_fail("entry %lld is not [id, time, duration, argv, addr, name]", i);
            continue;
        }
        if (i > 0 && e->elem[1].n > log.elem[i - 1].elem[1].n)
            pc_fail("entry %lld is newer than the one before it", i);
        for (long long j = 0; j < i; j++)
            if (log.elem[j].elem[0].n == e->elem[0].n)
                pc_fail("entries %lld and %lld share id %lld", j, i, e->elem[0].n);
    }
    if (log.n > 0 && !bulk_is(&log.elem[0].elem[3].elem[0], "SLOWLOG"))
        pc_fail("the newest entry is not SLOWLOG LEN");
    release(&log);
    log = slowlog_get(c, "3");
    if (log.n != 3)
        pc_fail("SLOWLOG GET 3: %lld entries", log.n);
    release(&log);
    pc_expect(c, "*0\r\n", "SLOWLOG", "GET", "0", NULL);
    log = slowlog_get(c, NULL);
    if (log.n != 10)
        pc_fail("SLOWLOG GET: %lld entries, expected the default 10", log.n);
    release(&log);
    pc_expect(c, "+OK\r\n", "SLOWLOG", "RESET", NULL);
    pc_expect(c, ":1\r\n", "SLOWLOG", "LEN", NULL); /* the RESET */
}

/* the connection's addr=, as CLIENT INFO shows it ("" if it does not) */
static void client_addr(struct pc_conn *c, char *addr, size_t cap)
{
    char *info = pc_conn_cmdl(c, NULL, "CLIENT", "INFO", NULL);
    const char *a = info ? strstr(info, " addr=") : NULL;
    snprintf(addr, cap, "%.*s", a ? (int)strcspn(a + 6, " ") : 0, a ? a + 6 : "");
    free(info);
}

/*
 * Wherever a command ran, its entry is the client's, once, as Redis writes
 * it: a SET of a key on every shard has the client's addr and name, and one
 * MSET and one MGET over keys on every shard are one entry each, with all
 * their arguments in the order sent (not one per shard's part).
 */
static void phase_where_it_ran(struct pc_conn *c)
{
    pc_expect(c, "+OK\r\n", "CLIENT", "SETNAME", "far", NULL);
    pc_expect(c, "+OK\r\n", "SLOWLOG", "RESET", NULL);
    const char *mset[1 + 2 * PC_SPREAD_KEYS], *mget[1 + PC_SPREAD_KEYS];
    mset[0] = "MSET";
    mget[0] = "MGET";
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        pc_expect(c, "+OK\r\n", "SET", keys[i], "v", NULL);
        mset[1 + 2 * i] = keys[i];
        mset[2 + 2 * i] = "w";
        mget[1 + i] = keys[i];
    }
    free(pc_conn_cmd(c, NULL, 1 + 2 * PC_SPREAD_KEYS, mset));
    free(pc_conn_cmd(c, NULL, 1 + PC_SPREAD_KEYS, mget));
    /* a gathered SUNIONSTORE (its keys fetched by internal steps, which are no entries) is one entry too,
     * after reads of every shard whose batch entries the steps reuse */
    const char *gather[1 + PC_SPREAD_KEYS];
    memcpy(gather, mget, sizeof gather);
    gather[0] = "DEL";
    free(pc_conn_cmd(c, NULL, 1 + PC_SPREAD_KEYS, gather));
    gather[0] = "SUNIONSTORE";
    for (int i = 0; i < PC_SPREAD_KEYS; i++)
        free(pc_conn_cmdl(c, NULL, "SADD", keys[i], "m", NULL));
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < PC_SPREAD_KEYS; i++)
            free(pc_conn_cmdl(c, NULL, "SCARD", keys[i], NULL));
        free(pc_conn_cmd(c, NULL, 1 + PC_SPREAD_KEYS, gather));
    }
    char addr[64];
    client_addr(c, addr, sizeof addr);
    struct val log = slowlog_get(c, "-1");
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        const struct val *e = find_entry(&log, "SET", keys[i]);
        if (!e || !bulk_is(&e->elem[4], addr) || !bulk_is(&e->elem[5], "far"))
            pc_fail("SET %s entry: missing, or not the client's addr %s and name far", keys[i], addr);
    }
    const char *const *cmds[2] = {mset, mget};
    const int argcs[2] = {1 + 2 * PC_SPREAD_KEYS, 1 + PC_SPREAD_KEYS};
    for (int k = 0; k < 2; k++) {
        int found = 0;
        for (long long i = 0; i < log.n; i++) {
            const struct val *e = &log.elem[i], *argv = &e->elem[3];
            if (argv->n < 1 || !bulk_is(&argv->elem[0], cmds[k][0]))
                continue;
            found++;
            int shown = argcs[k] > 32 ? 31 : argcs[k]; /* past 32: 31 and "... (N more arguments)" */
            bool same = argv->n == (argcs[k] > 32 ? 32 : argcs[k]) && bulk_is(&e->elem[4], addr);
            for (int j = 1; same && j < shown; j++)
                same = bulk_is(&argv->elem[j], cmds[k][j]);
            if (!same)
                pc_fail("%s entry: not the command as sent (%lld arguments) with the client's addr", cmds[k][0],
                        argv->n);
        }
        if (found != 1)
            pc_fail("%s over every shard: %d slowlog entries, want 1", cmds[k][0], found);
    }
    int gathered = 0;
    for (long long i = 0; i < log.n; i++)
        gathered += log.elem[i].elem[3].n > 0 && bulk_is(&log.elem[i].elem[3].elem[0], "SUNIONSTORE");
    if (gathered != 4)
        pc_fail("4 SUNIONSTOREs over every shard: %d slowlog entries", gathered);
    release(&log);
}

static void phase_entry_format(struct pc_conn *c)
{
    pc_expect(c, "+OK\r\n", "CLIENT", "SETNAME", "slowpoke", NULL);
    pc_expect(c, "+OK\r\n", "SLOWLOG", "RESET", NULL);
    char big[201];
    memset(big, 'a', 200);
    big[200] = '\0';
    const char *argv[42];
    argv[0] = "ping"; /* PING's handler refuses 42 arguments: still recorded, as in Redis */
    argv[1] = big;
    for (int i = 2; i < 42; i++)
        argv[i] = "x";
    char *r = pc_conn_cmd(c, NULL, 42, argv);
    free(r);
    pc_expect(c, "+PONG\r\n", "PING", NULL);
    r = pc_conn_cmdl(c, NULL, "AUTH", "secret", NULL);
    free(r);
    r = pc_conn_cmdl(c, NULL, "AUTH", "a", "b", "c", NULL); /* a syntax error: nothing redacted */
    free(r);
    r = pc_conn_cmdl(c, NULL, "HELLO", "9", "AUTH", "u", "p", NULL); /* NOPROTO: nothing either */
    free(r);
    r = pc_conn_cmdl(c, NULL, "HELLO", "2", "SETNAME", "n", "AUTH", "u", "p", NULL); /* WRONGPASS */
    free(r);
    char addr[64];
    client_addr(c, addr, sizeof addr);
    struct val log = slowlog_get(c, "10");
    const struct val *e = find_entry(&log, "ping", NULL);
    if (!e) {
        pc_fail("no slowlog entry for the 42-argument ping");
    } else {
        const struct val *v = &e->elem[3];
        char want[160];
        snprintf(want, sizeof want, "%.128s... (72 more bytes)", big);
        if (v->n != 32 || !bulk_is(&v->elem[1], want) || !bulk_is(&v->elem[31], "... (11 more arguments)"))
            pc_fail("ping entry: %lld arguments, or the markers differ", v->n);
    }
    e = find_entry(&log, "PING", NULL);
    if (!e || !bulk_is(&e->elem[4], addr) || !bulk_is(&e->elem[5], "slowpoke"))
        pc_fail("PING entry: not the client's addr %s and name slowpoke", addr);
    e = find_entry(&log, "AUTH", "(redacted)");
    if (!e || e->elem[3].n != 2)
        pc_fail("AUTH entry: its argument is not (redacted)");
    e = find_entry(&log, "AUTH", "a");
    if (!e || e->elem[3].n != 4 || !bulk_is(&e->elem[3].elem[3], "c"))
        pc_fail("AUTH a b c entry: its arguments are not as sent (Redis redacts nothing before the syntax error)");
    e = find_entry(&log, "HELLO", "9");
    if (!e || e->elem[3].n != 5 || !bulk_is(&e->elem[3].elem[4], "p"))
        pc_fail("HELLO 9 AUTH u p entry: not as sent (Redis redacts nothing for a bad protocol version)");
    e = find_entry(&log, "HELLO", "2");
    if (!e || e->elem[3].n != 7 || !bulk_is(&e->elem[3].elem[3], "n") ||
        !bulk_is(&e->elem[3].elem[5], "(redacted)") || !bulk_is(&e->elem[3].elem[6], "(redacted)"))
        pc_fail("HELLO 2 SETNAME n AUTH u p entry: not the name as sent and the secrets (redacted)");
    release(&log);
}

static void phase_limits(struct pc_conn *c)
{
    pc_expect(c, "+OK\r\n", "CONFIG", "SET", "slowlog-max-len", "5", NULL);
    for (int i = 0; i < PC_SPREAD_KEYS; i++)
        pc_expect(c, ":1\r\n", "EXISTS", keys[i], NULL);
    pc_expect(c, ":5\r\n", "SLOWLOG", "LEN", NULL);
    struct val log = slowlog_get(c, "-1");
    if (log.n != 5)
        pc_fail("slowlog-max-len 5: GET -1 gave %lld entries", log.n);
    /* the newest: SLOWLOG LEN, then the last EXISTS calls */
    if (log.n == 5 && (!bulk_is(&log.elem[1].elem[3].elem[1], keys[PC_SPREAD_KEYS - 1]) ||
                       !bulk_is(&log.elem[4].elem[3].elem[1], keys[PC_SPREAD_KEYS - 4])))
        pc_fail("slowlog-max-len 5: not the newest entries");
    release(&log);
    pc_expect(c, "+OK\r\n", "CONFIG", "SET", "slowlog-max-len", "128", NULL);
    pc_expect(c, "+OK\r\n", "CONFIG", "SET", "slowlog-log-slower-than", "-1", NULL);
    pc_expect(c, "+OK\r\n", "SLOWLOG", "RESET", NULL);
    for (int i = 0; i < PC_SPREAD_KEYS; i++)
        pc_expect(c, ":1\r\n", "EXISTS", keys[i], NULL);
    pc_expect(c, ":0\r\n", "SLOWLOG", "LEN", NULL);
    pc_expect(c, "+OK\r\n", "CONFIG", "SET", "slowlog-log-slower-than", "10000000", NULL);
    pc_expect(c, "+OK\r\n", "SET", keys[0], "w", NULL);
    pc_expect(c, ":0\r\n", "SLOWLOG", "LEN", NULL);

    pc_expect(c, "-ERR count should be greater than or equal to -1\r\n", "SLOWLOG", "GET", "-2", NULL);
    pc_expect(c, "-ERR count should be greater than or equal to -1\r\n", "SLOWLOG", "GET", "x", NULL);
    pc_expect(c, "-ERR unknown subcommand or wrong number of arguments for 'get'. Try SLOWLOG HELP.\r\n",
              "SLOWLOG", "get", "1", "2", NULL);
    pc_expect(c, "-ERR unknown subcommand 'foo'. Try SLOWLOG HELP.\r\n", "SLOWLOG", "foo", NULL);
    pc_expect(c, "-ERR wrong number of arguments for 'slowlog' command\r\n", "SLOWLOG", NULL);
    pc_expect(c, "-ERR wrong number of arguments for 'slowlog|len' command\r\n", "SLOWLOG", "LEN", "x", NULL);
    pc_expect(c,
              "*12\r\n+SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+GET [<count>]\r\n"
              "+    Return top <count> entries from the slowlog (default: 10, -1 mean all).\r\n"
              "+    Entries are made of:\r\n"
              "+    id, timestamp, time in microseconds, arguments array, client IP and port,\r\n"
              "+    client name\r\n+LEN\r\n+    Return the length of the slowlog.\r\n+RESET\r\n"
              "+    Reset the slowlog.\r\n+HELP\r\n+    Prints this help.\r\n",
              "SLOWLOG", "HELP", NULL);
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 1;
    pc_spread_keys("slow:", keys);
    struct pc_conn *c = pc_conn_open(srv.port);
    if (!c)
        return 1;
    phase_every_shard(c);
    phase_entry_format(c);
    phase_where_it_ran(c);
    phase_limits(c);
    pc_expect(c, "+OK\r\n", "CONFIG", "SET", "slowlog-log-slower-than", "10000", NULL);
    pc_conn_close(&c);
    pc_test_teardown(&srv);
    return pc_test_done("test_slowlog");
}
