/*
 * test_expiry: keys really expire.
 *
 * - Active expiry: 48 keys with PX 100 on every shard and in two databases,
 *   never touched again, are gone from DBSIZE 300 ms later (Redis 7.0's
 *   active cycle at hz 10 reclaims them by then).  Under heavy machine load
 *   we allow up to 2 s before failing, and say so; this is not a speed test.
 * - Lazy expiry: a key past its deadline reads as missing even if the
 *   active cycle has not reached it (GET/EXISTS/TTL/MGET right after).
 * - MSET over keys past their TTL counts each in expired_keys once (setKey's lookup).
 * - TTL/PTTL ranges, PERSIST, SET without KEEPTTL clears a TTL, KEEPTTL keeps
 *   it, GETEX PX, EXPIRE in the past deletes, RENAME keeps the TTL.
 */
#include "testclient.h"

#include <stdlib.h>
#include <string.h>

static char keys[PC_SPREAD_KEYS][64];

static long long int_reply(struct pc_conn *c, const char *cmd, const char *k)
{
    size_t rl;
    char *r = pc_conn_cmdl(c, &rl, cmd, k, NULL);
    long long v = -999;
    if (r && r[0] == ':')
        v = atoll(r + 1);
    else
        pc_fail("%s %s: not an integer reply: %s", cmd, k, r ? r : "(none)");
    free(r);
    return v;
}

static void check_range(const char *what, long long v, long long lo, long long hi)
{
    if (v < lo || v > hi)
        pc_fail("%s = %lld, want within [%lld, %lld]", what, v, lo, hi);
}

/* an INFO counter once two reads a few snapshots apart agree (counters are published on a timer);
 * gives up after 10 tries rather than hang, and the caller's check then reports what it saw */
static long long settled_info(struct pc_conn *c, const char *field)
{
    long long v = pc_info_ll(c, field), prev;
    int tries = 0;
    do {
        prev = v;
        pc_sleep_ms(400);
        v = pc_info_ll(c, field);
    } while (v != prev && ++tries < 10);
    return v;
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    struct pc_conn *c = pc_conn_open(srv.port);
    if (!c)
        return 2;
    pc_spread_keys("exp:", keys);

    /* ---- active expiry, checked through DBSIZE only */
    pc_expect(c, "+OK\r\n", "SET", "exp:forever", "x", NULL);
    for (int db = 0; db < 2; db++) {
        pc_expect(c, "+OK\r\n", "SELECT", db ? "3" : "0", NULL);
        for (int i = 0; i < PC_SPREAD_KEYS; i++) {
            pc_expect(c, "+OK\r\n", "SET", keys[i], "v", "PX", "100", NULL);
            char k2[80];
            snprintf(k2, sizeof(k2), "{%.60s}b", keys[i]);
            if (db == 0)
                pc_expect(c, "+OK\r\n", "PSETEX", k2, "100", "v", NULL);
        }
    }
    pc_expect(c, "+OK\r\n", "SELECT", "0", NULL);
    long long t0 = pc_now_ms();
    pc_sleep_ms(300);
    long long n0 = int_reply(c, "DBSIZE", NULL);
    if (n0 != 1) {
        fprintf(stderr, "note: DBSIZE is %lld 300 ms after PX 100 (want 1); waiting up to 2 s\n", n0);
        while (pc_now_ms() - t0 < 2000 && n0 != 1) {
            pc_sleep_ms(50);
            n0 = int_reply(c, "DBSIZE", NULL);
        }
        if (n0 != 1)
            pc_fail("db 0: DBSIZE %lld %lld ms after 32 keys were set with PX 100 and never "
                    "touched; want 1 (active expiry is not reclaiming them)", n0, pc_now_ms() - t0);
        else
            fprintf(stderr, "note: gone after %lld ms\n", pc_now_ms() - t0);
    }
    pc_expect(c, "+OK\r\n", "SELECT", "3", NULL);
    long long n3 = int_reply(c, "DBSIZE", NULL);
    while (n3 != 0 && pc_now_ms() - t0 < 2000) {
        pc_sleep_ms(50);
        n3 = int_reply(c, "DBSIZE", NULL);
    }
    if (n3 != 0)
        pc_fail("db 3: DBSIZE %lld after PX 100 keys expired; want 0", n3);
    pc_expect(c, "+OK\r\n", "SELECT", "0", NULL);
    pc_expect(c, "$1\r\nx\r\n", "GET", "exp:forever", NULL);

    /* ---- lazy expiry: read right after the deadline */
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < PC_SPREAD_KEYS; i++)
            pc_expect(c, "+OK\r\n", "SET", keys[i], "v", "PX", "30", NULL);
        pc_sleep_ms(60);
        for (int i = 0; i < PC_SPREAD_KEYS; i++) {
            switch (round) {
            case 0: pc_expect(c, "$-1\r\n", "GET", keys[i], NULL); break;
            case 1: pc_expect(c, ":0\r\n", "EXISTS", keys[i], NULL); break;
            default: pc_expect(c, ":-2\r\n", "PTTL", keys[i], NULL); break;
            }
        }
    }
    for (int i = 0; i < PC_SPREAD_KEYS; i++)
        pc_expect(c, "+OK\r\n", "SET", keys[i], "v", "PX", "30", NULL);
    pc_sleep_ms(60);
    {
        const char *argv2[1 + PC_SPREAD_KEYS];
        argv2[0] = "MGET";
        char exp[512];
        size_t o = (size_t)snprintf(exp, sizeof(exp), "*%d\r\n", PC_SPREAD_KEYS);
        for (int i = 0; i < PC_SPREAD_KEYS; i++) {
            argv2[1 + i] = keys[i];
            o += (size_t)snprintf(exp + o, sizeof(exp) - o, "$-1\r\n");
        }
        pc_expectv(c, exp, o, 1 + PC_SPREAD_KEYS, argv2, NULL);
    }

    /*
     * ---- MSET over keys past their TTL: each counts once in expired_keys, as Redis's setKey
     * looks the key up (and expires it) before it writes.  Many long-TTL keys make the active
     * cycle unlikely to reach the short ones first; either way each expires exactly once.
     */
    {
        char pad[48];
        for (int i = 0; i < 512; i++) {
            snprintf(pad, sizeof(pad), "exp:pad:%d", i);
            pc_expect(c, "+OK\r\n", "SET", pad, "v", "EX", "1000", NULL);
        }
        long long e0 = settled_info(c, "expired_keys"); /* earlier lazy expiries published */
        const char *argv2[1 + 2 * PC_SPREAD_KEYS];
        argv2[0] = "MSET";
        for (int i = 0; i < PC_SPREAD_KEYS; i++) {
            pc_expect(c, "+OK\r\n", "SET", keys[i], "old", "PX", "20", NULL);
            argv2[1 + 2 * i] = keys[i];
            argv2[2 + 2 * i] = "new";
        }
        pc_sleep_ms(60);
        pc_expectv(c, "+OK\r\n", 5, 1 + 2 * PC_SPREAD_KEYS, argv2, NULL);
        long long e1 = pc_info_wait_for(c, "expired_keys", e0 + PC_SPREAD_KEYS, 3000);
        if (e1 - e0 != PC_SPREAD_KEYS)
            pc_fail("MSET over %d keys past their TTL: expired_keys grew by %lld, want %d", PC_SPREAD_KEYS,
                    e1 - e0, PC_SPREAD_KEYS);
        for (int i = 0; i < PC_SPREAD_KEYS; i++) {
            pc_expect(c, "$3\r\nnew\r\n", "GET", keys[i], NULL);
            pc_expect(c, ":-1\r\n", "TTL", keys[i], NULL);
            pc_expect(c, ":1\r\n", "DEL", keys[i], NULL);
        }
        for (int i = 0; i < 512; i++) {
            snprintf(pad, sizeof(pad), "exp:pad:%d", i);
            pc_expect(c, ":1\r\n", "DEL", pad, NULL);
        }
    }

    /* ---- TTL bookkeeping (values far from any deadline: deterministic) */
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        const char *k = keys[i];
        pc_expect(c, ":-2\r\n", "TTL", k, NULL);
        pc_expect(c, "+OK\r\n", "SET", k, "v", "EX", "100", NULL);
        check_range("TTL after EX 100", int_reply(c, "TTL", k), 99, 100);
        check_range("PTTL after EX 100", int_reply(c, "PTTL", k), 95000, 100000);
        pc_expect(c, "+OK\r\n", "SET", k, "v2", "KEEPTTL", NULL);
        check_range("TTL after KEEPTTL", int_reply(c, "TTL", k), 99, 100);
        pc_expect(c, "+OK\r\n", "SET", k, "v3", NULL);
        pc_expect(c, ":-1\r\n", "TTL", k, NULL);
        pc_expect(c, "$2\r\nv3\r\n", "GETEX", k, "PX", "500000", NULL);
        check_range("PTTL after GETEX PX 500000", int_reply(c, "PTTL", k), 495000, 500000);
        pc_expect(c, "$2\r\nv3\r\n", "GETEX", k, "PERSIST", NULL);
        pc_expect(c, ":-1\r\n", "PTTL", k, NULL);
        pc_expect(c, ":1\r\n", "PEXPIRE", k, "100000", NULL);
        pc_expect(c, ":1\r\n", "PERSIST", k, NULL);
        pc_expect(c, ":0\r\n", "PERSIST", k, NULL);
        pc_expect(c, ":1\r\n", "EXPIREAT", k, "1000", NULL); /* in the past: deleted */
        pc_expect(c, ":0\r\n", "EXISTS", k, NULL);
        pc_expect(c, "+OK\r\n", "SET", k, "v", NULL);
        pc_expect(c, ":1\r\n", "EXPIRE", k, "-1", NULL);
        pc_expect(c, "$-1\r\n", "GET", k, NULL);
        pc_expect(c, "+OK\r\n", "SETEX", k, "1000", "v", NULL);
        char k2[80];
        snprintf(k2, sizeof(k2), "%.60s:moved", keys[(i + 3) % PC_SPREAD_KEYS]);
        pc_expect(c, "+OK\r\n", "RENAME", k, k2, NULL);
        check_range("TTL after RENAME across shards", int_reply(c, "TTL", k2), 999, 1000);
        pc_expect(c, ":1\r\n", "DEL", k2, NULL);
    }
    pc_expect(c, ":1\r\n", "DBSIZE", NULL);

    pc_conn_close(&c);
    pc_test_teardown(&srv);
    return pc_test_done("test_expiry");
}
