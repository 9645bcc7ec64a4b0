/*
 * test_chaos_randcount: SRANDMEMBER, HRANDFIELD and ZRANDMEMBER with a huge
 * negative count (members repeat, so -1000000000000 asks for 10^12 of them,
 * terabytes of reply) cannot take the server's memory
 * (command.c cmd_reply_under_cap_or_reply).
 *
 * - Normal counts keep Redis's bytes: on one-member collections the reply is
 *   deterministic (-3: the member three times), compared byte for byte, and
 *   100000 repeats (700 KB) are all sent.
 * - With client-output-buffer-limit "normal 1mb 0 0", each of the three on a
 *   key of each shard (so the inline and the cross-shard path both run)
 *   gets its client closed after about a megabyte, as Redis 7.0 does, with
 *   Redis's log line; another client keeps working.
 * - With no hard limit, past proto-max-bulk-len (lowered to its minimum,
 *   1mb) the client gets "-ERR reply exceeds maximum allowed size
 *   (proto-max-bulk-len)" and its connection stays usable (percore only:
 *   Redis would build the whole reply).
 * - The server's peak RSS (VmHWM) grows by less than 64 MB in all: the
 *   replies are capped at 1 MB each, and one is built at a time (not
 *   checked under a sanitizer, whose allocator holds freed memory back).
 *
 * Runs against redis-server too (--server /usr/bin/redis-server), all but the
 * percore-only part.  Prints the RELIABILITY line of the scenario.
 */
#include "testclient.h"

#include <stdlib.h>
#include <string.h>

#define HUGE_COUNT "-1000000000000"
#define REPEATS 100000
/* spread keys 0, 4, 8, 12: one on each shard of 4 (and of 2) */
#define HUGE_KEY_STEP 4

static char keys[PC_SPREAD_KEYS][64];

/* key "{<spread key i>}<suffix>": on the same shard as spread key i */
static void tagged(char *buf, size_t cap, int i, const char *suffix)
{
    snprintf(buf, cap, "{%.60s}%.8s", keys[i], suffix);
}

/* the three commands with a huge negative count on spread key i's collections */
static void huge_command(int i, int which, const char *argv[4], int *argc, char keybuf[80])
{
    static const char *const names[] = {"SRANDMEMBER", "HRANDFIELD", "ZRANDMEMBER"};
    static const char *const suffixes[] = {"s", "h", "z"};
    tagged(keybuf, 80, i, suffixes[which]);
    argv[0] = names[which];
    argv[1] = keybuf;
    argv[2] = HUGE_COUNT;
    argv[3] = "WITHVALUES";
    *argc = which == 1 ? 4 : 3;
}

static void check_normal_counts(struct pc_conn *c)
{
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        char k[80];
        tagged(k, sizeof(k), i, "s");
        pc_expect(c, "*3\r\n$1\r\nm\r\n$1\r\nm\r\n$1\r\nm\r\n", "SRANDMEMBER", k, "-3", NULL);
        tagged(k, sizeof(k), i, "h");
        pc_expect(c, "*4\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\nf\r\n$1\r\nv\r\n", "HRANDFIELD", k, "-2", "WITHVALUES",
                  NULL);
        tagged(k, sizeof(k), i, "z");
        pc_expect(c, "*4\r\n$1\r\nm\r\n$3\r\n1.5\r\n$1\r\nm\r\n$3\r\n1.5\r\n", "ZRANDMEMBER", k, "-2",
                  "WITHSCORES", NULL);
    }
    /* 100000 repeats is a normal count: every one of them arrives */
    for (int i = 0; i < 2; i++) {
        char k[80];
        tagged(k, sizeof(k), i, "s");
        size_t len;
        char *r = pc_conn_cmdl(c, &len, "SRANDMEMBER", k, "-100000", NULL);
        const char *head = "*100000\r\n";
        size_t want = strlen(head) + (size_t)REPEATS * 7;
        int ok = r && len == want && memcmp(r, head, strlen(head)) == 0;
        for (size_t off = strlen(head); ok && off < len; off += 7)
            ok = memcmp(r + off, "$1\r\nm\r\n", 7) == 0;
        if (!ok)
            pc_fail("SRANDMEMBER %s -100000: want %zu bytes of one member repeated, got %zu", k, want,
                    r ? len : 0);
        free(r);
    }
}

/* hard limit 1mb: each huge command's client is closed after about that much */
static int check_hard_limit(struct pc_server *srv, struct pc_conn *ctl)
{
    int sent = 0;
    pc_expect(ctl, "+OK\r\n", "CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 0 0", NULL);
    for (int i = 0; i < PC_SPREAD_KEYS; i += HUGE_KEY_STEP) {
        for (int which = 0; which < 3; which++) {
            const char *argv[4];
            int argc;
            char k[80];
            huge_command(i, which, argv, &argc, k);
            struct pc_conn *c = pc_conn_open(srv->port);
            if (!c || pc_conn_send(c, argc, argv, NULL) != 0) {
                pc_fail("%s %s: cannot send", argv[0], k);
                pc_conn_close(&c);
                continue;
            }
            sent++;
            long long got = pc_conn_drain_until_closed(c, 20000);
            if (got < 0)
                pc_fail("%s %s %s at hard limit 1mb: the client was not closed", argv[0], k, HUGE_COUNT);
            else if (got > 4 << 20)
                pc_fail("%s %s %s at hard limit 1mb: %lld bytes sent before the close", argv[0], k, HUGE_COUNT,
                        got);
            pc_conn_close(&c);
            pc_expect(ctl, "+PONG\r\n", "PING", NULL);
        }
    }
    if (!srv->external &&
        pc_server_log_has(srv, "scheduled to be closed ASAP for overcoming of output buffer limits") != 1)
        pc_fail("the server log does not say why the clients were closed");
    pc_expect(ctl, "+OK\r\n", "CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0", NULL);
    return sent;
}

/* no hard limit: refused past proto-max-bulk-len, the connection stays */
static int check_bulk_cap(struct pc_conn *ctl)
{
    int sent = 0;
    pc_expect(ctl, "+OK\r\n", "CONFIG", "SET", "proto-max-bulk-len", "1mb", NULL);
    static const char err[] = "-ERR reply exceeds maximum allowed size (proto-max-bulk-len)\r\n";
    for (int i = 0; i < PC_SPREAD_KEYS; i += HUGE_KEY_STEP) {
        for (int which = 0; which < 3; which++) {
            const char *argv[4];
            int argc;
            char k[80];
            huge_command(i, which, argv, &argc, k);
            pc_expectv(ctl, err, strlen(err), argc, argv, NULL);
            sent++;
        }
        pc_expect(ctl, "+PONG\r\n", "PING", NULL);
    }
    pc_expect(ctl, "+OK\r\n", "CONFIG", "SET", "proto-max-bulk-len", "512mb", NULL);
    return sent;
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    struct pc_conn *ctl = pc_conn_open(srv.port);
    if (!ctl)
        return 2;
    pc_spread_keys("rc:", keys);
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        char k[80];
        tagged(k, sizeof(k), i, "s");
        pc_expect(ctl, ":1\r\n", "SADD", k, "m", NULL);
        tagged(k, sizeof(k), i, "h");
        pc_expect(ctl, ":1\r\n", "HSET", k, "f", "v", NULL);
        tagged(k, sizeof(k), i, "z");
        pc_expect(ctl, ":1\r\n", "ZADD", k, "1.5", "m", NULL);
    }
    long long shards = srv.is_redis ? 1 : pc_info_ll(ctl, "shard_threads");
    long hwm_before = pc_server_status_kb(&srv, "VmHWM");

    check_normal_counts(ctl);
    int huge = check_hard_limit(&srv, ctl);
    if (!srv.is_redis) /* Redis would build all 10^12 elements */
        huge += check_bulk_cap(ctl);
    check_normal_counts(ctl);

    long hwm_after = pc_server_status_kb(&srv, "VmHWM");
    fprintf(stderr, "peak RSS %ld kB before the huge counts, %ld kB after\n", hwm_before, hwm_after);
    if (hwm_before > 0 && !pc_sanitized() && hwm_after - hwm_before > 64 * 1024)
        pc_fail("peak RSS grew by %ld kB for replies capped at 1 MB", hwm_after - hwm_before);
    pc_conn_close(&ctl);
    pc_test_teardown(&srv);
    char load[200];
    snprintf(load, sizeof(load),
             "%d SRANDMEMBER/HRANDFIELD/ZRANDMEMBER key %s on keys over %lld shard threads; 2 x 100000 repeats", huge,
             HUGE_COUNT, shards);
    pc_reliability_line(&srv, "huge random counts", load,
                        "about 10^13 reply bytes asked for; output hard limit 1mb, then none with "
                        "proto-max-bulk-len 1mb",
                        huge, -1);
    return pc_test_done("test_chaos_randcount");
}
