/*
 * test_build: the server says which build it is, and the build is what it
 * says.  Both builds run this test (the sharded one in every ctest run, the
 * global-lock control build in tests/run.sh's extra pass):
 *
 *   - INFO server shows percore_build:sharded or percore_build:global-lock,
 *     matching how this test was compiled (the same PERCORE_GLOBAL_LOCK);
 *   - keys written to every shard (cross-shard MSET, MGET, DEL, INCRs) read
 *     back right, and DBSIZE, INFO keyspace and the sum of INFO shards'
 *     keys= all count each key once (the control build has one store that
 *     every thread shares: it must not be counted once per thread);
 *   - the handoff: with several threads the sharded build sends batches to
 *     other shards (handoff_sent > 0) and the global-lock build sends none:
 *     it runs every command where it arrives, under its one lock.
 *
 * INFO figures come from the aggregator, so they are polled (2 s at most).
 */
#include "testclient.h"

#include <stdlib.h>
#include <string.h>

#ifdef PERCORE_GLOBAL_LOCK
#define EXPECTED_BUILD "global-lock"
#else
#define EXPECTED_BUILD "sharded"
#endif

/* sum of `field`=N over every "shardK:" line of INFO shards; -1 when there is none */
static long long sum_shard_field(const char *info, const char *field)
{
    long long sum = -1;
    char key[64];
    snprintf(key, sizeof key, ",%s=", field);
    for (const char *p = strstr(info, "\r\nshard"); p; p = strstr(p + 2, "\r\nshard")) {
        const char *end = strstr(p + 2, "\r\n");
        const char *f = strstr(p, key);
        if (!f || (end && f > end))
            continue;
        sum = (sum < 0 ? 0 : sum) + strtoll(f + strlen(key), NULL, 10);
    }
    return sum;
}

static long long info_number(const char *info, const char *field)
{
    const char *p = strstr(info, field);
    return p ? strtoll(p + strlen(field), NULL, 10) : -1;
}

/* poll INFO <section> until pred(reply) or 2 s; returns the last reply */
static char *poll_info(struct pc_conn *c, const char *section, int (*pred)(const char *))
{
    long long deadline = pc_now_ms() + 2000;
    for (;;) {
        size_t len;
        char *r = pc_conn_cmdl(c, &len, "INFO", section, NULL);
        if (!r || pred(r) || pc_now_ms() > deadline)
            return r;
        free(r);
        pc_sleep_ms(20);
    }
}

static int keyspace_has_16(const char *r) { return strstr(r, "db0:keys=16,") != NULL; }
/* the snapshot holds this test's 20 commands (keys= is published at once, the rest every interval) */
static int shards_counted(const char *r) { return sum_shard_field(r, "commands") >= 20; }

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    struct pc_conn *c = pc_conn_open(srv.port);
    if (!c)
        return 2;

    size_t len;
    char *server = pc_conn_cmdl(c, &len, "INFO", "server", NULL);
    if (!server || !strstr(server, "\r\npercore_build:" EXPECTED_BUILD "\r\n"))
        pc_fail("INFO server does not say percore_build:" EXPECTED_BUILD);
    long long threads = server ? info_number(server, "\r\nshard_threads:") : -1;
    free(server);
    if (threads < 1)
        pc_fail("INFO server has no shard_threads: field");

    char keys[PC_SPREAD_KEYS][64];
    pc_spread_keys("build:", keys);
    const char *mset[1 + 2 * PC_SPREAD_KEYS], *mget[1 + PC_SPREAD_KEYS];
    mset[0] = "MSET";
    mget[0] = "MGET";
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        mset[1 + 2 * i] = keys[i];
        mset[2 + 2 * i] = "7";
        mget[1 + i] = keys[PC_SPREAD_KEYS - 1 - i];
    }
    char *r = pc_conn_cmd(c, &len, 1 + 2 * PC_SPREAD_KEYS, mset);
    pc_expect_bytes("cross-shard MSET", r, r ? len : 0, "+OK\r\n");
    free(r);
    for (int i = 0; i < PC_SPREAD_KEYS; i++)
        pc_expect(c, ":8\r\n", "INCR", keys[i], NULL);
    char mget_exp[512] = "*16\r\n";
    for (int i = 0; i < PC_SPREAD_KEYS; i++)
        strcat(mget_exp, "$1\r\n8\r\n");
    r = pc_conn_cmd(c, &len, 1 + PC_SPREAD_KEYS, mget);
    pc_expect_bytes("cross-shard MGET", r, r ? len : 0, mget_exp);
    free(r);
    pc_expect(c, ":16\r\n", "DBSIZE", NULL);
    pc_expect(c, ":2\r\n", "EXISTS", keys[0], keys[PC_SPREAD_KEYS - 1], NULL);

    r = poll_info(c, "keyspace", keyspace_has_16);
    if (!r || !keyspace_has_16(r))
        pc_fail("INFO keyspace does not count the 16 keys once: %s", r ? r : "(none)");
    free(r);

    r = poll_info(c, "shards", shards_counted);
    if (!r || !shards_counted(r) || sum_shard_field(r, "keys") != 16) {
        pc_fail("INFO shards: commands= short of 20 or keys= not adding up to 16: %s", r ? r : "(none)");
    } else {
        long long sent = sum_shard_field(r, "handoff_sent");
#ifdef PERCORE_GLOBAL_LOCK
        if (sent != 0)
            pc_fail("global-lock build: %lld handoff batches sent, expected none", sent);
#else
        if (threads > 1 && sent <= 0)
            pc_fail("sharded build with %lld threads: no handoff batch sent for cross-shard keys", threads);
        if (threads == 1 && sent != 0)
            pc_fail("one shard: %lld handoff batches sent, expected none", sent);
#endif
    }
    free(r);

    pc_conn_close(&c);
    pc_test_teardown(&srv);
    return pc_test_done("test_build");
}
