/*
 * test_random: the commands that pick at random pick fairly, for every
 * encoding, by chi-square (tests/unit/chisq.h: a fair server fails a check
 * with probability 1e-8, this program's 34 checks together less than once
 * in a million runs).
 *
 * - Repeats allowed (negative counts, and the one-member forms): HRANDFIELD
 *   on a listpack and a hashtable hash of 10 fields, SRANDMEMBER on an intset
 *   and a hashtable set, ZRANDMEMBER on a listpack and a skiplist zset (20000
 *   draws each, 2000 per member), then SPOP without a count; and a hashtable
 *   hash, set and zset of 200 members (100000 draws, 500 per member).
 * - Distinct members (positive counts): HRANDFIELD, SRANDMEMBER and
 *   ZRANDMEMBER with counts 3 and 7 of 10 (Redis uses a different algorithm
 *   for each: random picks until enough distinct ones, or removing from a
 *   copy or selecting in one pass), and SPOP with counts 3 and 9 of 10 (one
 *   pops members one by one, the other keeps the remaining ones), each on a
 *   fresh copy of the set every round: every reply holds distinct members,
 *   and each member is in a reply as often as any other (chisq_subsets).
 * - RANDOMKEY over 10 keys, 1, 2, 3 and 4 of them on each quarter of the
 *   slots (so on shards holding different numbers of them; 20000 draws):
 *   a shard's key is taken with a probability that follows its key count,
 *   not the same for every shard.
 *
 * Runs against redis-server 7.0 too (--server /usr/bin/redis-server), but
 * for the 200-member collections: Redis's dictGetFairRandomKey picks one of
 * 15 consecutive entries, fair only while a table holds 15 or fewer.
 */
#include "testclient.h"

#include "../unit/chisq.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SMALL 10     /* members of the small collections */
#define BIG 200      /* members of the big ones */
#define PIPELINE 200 /* commands in flight at once */

static char pad[101]; /* makes a hash value or a zset member too long for a listpack */

/* the index of member "<letter><i>..." or "<i>" (an intset's), -1 for anything else */
static long index_of(const char *s, size_t len)
{
    if (len == 0)
        return -1;
    const char *p = isdigit((unsigned char)s[0]) ? s : s + 1;
    if (!isdigit((unsigned char)*p))
        return -1;
    return strtol(p, NULL, 10);
}

/*
 * Send the command `reps` times (pipelined) and count the members of its
 * replies (an array, or one bulk string) in hits[0..k).  per: the members a
 * reply must hold (0: any), distinct: they must all differ.
 */
static void draw(redisContext *c, int k, long *hits, long reps, int per, bool distinct, int argc,
                 const char **argv)
{
    long sent = 0, got = 0;
    while (got < reps) {
        while (sent < reps && sent - got < PIPELINE) {
            redisAppendCommandArgv(c, argc, argv, NULL);
            sent++;
        }
        redisReply *r;
        if (redisGetReply(c, (void **)&r) != REDIS_OK) {
            pc_fail("%s %s: no reply (%s)", argv[0], argv[1], c->errstr);
            return;
        }
        got++;
        size_t n = r->type == REDIS_REPLY_ARRAY ? r->elements : 1;
        redisReply **el = r->type == REDIS_REPLY_ARRAY ? r->element : &r;
        if (r->type != REDIS_REPLY_ARRAY && r->type != REDIS_REPLY_STRING)
            n = 0;
        if (per && n != (size_t)per)
            pc_fail("%s %s %s: %zu members, want %d", argv[0], argv[1], argc > 2 ? argv[2] : "", n, per);
        bool seen[BIG] = {false};
        for (size_t i = 0; i < n; i++) {
            long m = el[i]->type == REDIS_REPLY_STRING ? index_of(el[i]->str, el[i]->len) : -1;
            if (m < 0 || m >= k) {
                pc_fail("%s %s: unexpected member", argv[0], argv[1]);
                continue;
            }
            if (distinct && seen[m])
                pc_fail("%s %s %s: member %ld twice in one reply", argv[0], argv[1], argv[2], m);
            seen[m] = true;
            hits[m]++;
        }
        freeReplyObject(r);
    }
}

/* one command, its reply not looked at */
static void run(redisContext *c, int argc, const char **argv)
{
    redisReply *r = redisCommandArgv(c, argc, argv, NULL);
    if (r == NULL || r->type == REDIS_REPLY_ERROR)
        pc_fail("%s %s: %s", argv[0], argv[1], r ? r->str : c->errstr);
    if (r)
        freeReplyObject(r);
}

static void expect_encoding(redisContext *c, const char *key, const char *enc)
{
    redisReply *r = redisCommand(c, "OBJECT ENCODING %s", key);
    if (r == NULL || r->type != REDIS_REPLY_STRING || strcmp(r->str, enc) != 0)
        pc_fail("OBJECT ENCODING %s: want %s, got %s", key, enc, r && r->str ? r->str : "(none)");
    if (r)
        freeReplyObject(r);
}

/*
 * key: a hash (fields f<i>), set (members m<i>, or i for an intset) or zset
 * (members m<i>) of k members in encoding enc; long: too long for a
 * listpack (a long hash value or zset member)
 */
static void make(redisContext *c, char type, const char *key, int k, bool ints, bool longer, const char *enc)
{
    run(c, 2, (const char *[]){"DEL", key});
    for (int i = 0; i < k; i++) {
        char m[160];
        snprintf(m, sizeof m, ints ? "%d" : (type == 'h' ? "f%d" : "m%d"), i);
        if (type == 'z' && longer)
            strcat(m, pad);
        if (type == 'h')
            run(c, 4, (const char *[]){"HSET", key, m, longer ? pad : "v"});
        else if (type == 's')
            run(c, 3, (const char *[]){"SADD", key, m});
        else
            run(c, 4, (const char *[]){"ZADD", key, "1", m});
    }
    expect_encoding(c, key, enc);
}

static void check(const char *what, const long *hits, int k)
{
    if (!chisq_fair(what, chisq_draws(hits, k), k))
        pc_fail("%s: not uniform", what);
}

/* negative count: k members, `draws` draws in replies of 1000, then the one-member form */
static void check_repeats(redisContext *c, const char *cmd, const char *key, int k, long draws, const char *what)
{
    long hits[BIG] = {0};
    draw(c, k, hits, draws / 1000, 1000, false, 3, (const char *[]){cmd, key, "-1000"});
    check(what, hits, k);
    if (k == SMALL) {
        long one[BIG] = {0};
        char w[128];
        snprintf(w, sizeof w, "%s (one member)", what);
        draw(c, k, one, draws / 4, 1, false, 2, (const char *[]){cmd, key});
        check(w, one, k);
    }
}

/* positive counts 3 and 7 of SMALL: distinct members, uniform subsets */
static void check_distinct(redisContext *c, const char *cmd, const char *key, const char *what)
{
    static const int counts[] = {3, 7};
    for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++) {
        long hits[BIG] = {0}, rounds = 3000;
        char n[8], w[128];
        snprintf(n, sizeof n, "%d", counts[j]);
        snprintf(w, sizeof w, "%s count %d", what, counts[j]);
        draw(c, SMALL, hits, rounds, counts[j], true, 3, (const char *[]){cmd, key, n});
        if (!chisq_fair(w, chisq_subsets(hits, SMALL, rounds, counts[j]), SMALL))
            pc_fail("%s: not uniform", w);
    }
}

/* SPOP (count 0: the one-member form) on a fresh copy of a SMALL set every round */
static void check_spop(redisContext *c, const char *key, bool ints, int count, const char *what)
{
    long rounds = count ? 3000 : 20000, sent = 0, got = 0;
    long hits[BIG] = {0};
    const char *sadd[2 + SMALL] = {"SADD", key};
    char members[SMALL][16], n[8];
    for (int i = 0; i < SMALL; i++) {
        snprintf(members[i], sizeof members[i], ints ? "%d" : "m%d", i);
        sadd[2 + i] = members[i];
    }
    snprintf(n, sizeof n, "%d", count);
    /* each round: DEL, SADD, SPOP; only the SPOP replies are counted */
    while (got < rounds) {
        while (sent < rounds && sent - got < PIPELINE) {
            redisAppendCommand(c, "DEL %s", key);
            redisAppendCommandArgv(c, 2 + SMALL, sadd, NULL);
            redisAppendCommandArgv(c, count ? 3 : 2, (const char *[]){"SPOP", key, n}, NULL);
            sent++;
        }
        redisReply *r[3];
        for (int i = 0; i < 3; i++) {
            if (redisGetReply(c, (void **)&r[i]) != REDIS_OK) {
                pc_fail("SPOP rounds: no reply (%s)", c->errstr);
                return;
            }
        }
        got++;
        redisReply *p = r[2];
        size_t m = p->type == REDIS_REPLY_ARRAY ? p->elements : 1;
        redisReply **el = p->type == REDIS_REPLY_ARRAY ? p->element : &p;
        if (m != (size_t)(count ? count : 1))
            pc_fail("SPOP %s %s: %zu members", key, n, m);
        bool seen[SMALL] = {false};
        for (size_t i = 0; i < m; i++) {
            long idx = el[i]->type == REDIS_REPLY_STRING ? index_of(el[i]->str, el[i]->len) : -1;
            if (idx < 0 || idx >= SMALL || seen[idx]) {
                pc_fail("SPOP %s %s: a member unknown or twice", key, n);
                continue;
            }
            seen[idx] = true;
            hits[idx]++;
        }
        for (int i = 0; i < 3; i++)
            freeReplyObject(r[i]);
    }
    double x = count ? chisq_subsets(hits, SMALL, rounds, count) : chisq_draws(hits, SMALL);
    if (!chisq_fair(what, x, SMALL))
        pc_fail("%s: not uniform", what);
}

/* spread keys taken: 1, 2, 3 and 4 of them on the four quarters of the slots */
static const int rk_pick[] = {0, 4, 5, 8, 9, 10, 12, 13, 14, 15};
#define RK_KEYS (int)(sizeof rk_pick / sizeof rk_pick[0])

static void check_randomkey(redisContext *c)
{
    char spread[PC_SPREAD_KEYS][64];
    long hits[RK_KEYS] = {0};
    pc_spread_keys("rk:", spread);
    run(c, 2, (const char *[]){"SELECT", "9"});
    run(c, 1, (const char *[]){"FLUSHDB"});
    for (int i = 0; i < RK_KEYS; i++)
        run(c, 3, (const char *[]){"SET", spread[rk_pick[i]], "v"});
    long sent = 0, got = 0, draws = 20000;
    while (got < draws) {
        while (sent < draws && sent - got < PIPELINE) {
            redisAppendCommand(c, "RANDOMKEY");
            sent++;
        }
        redisReply *r;
        if (redisGetReply(c, (void **)&r) != REDIS_OK) {
            pc_fail("RANDOMKEY: no reply (%s)", c->errstr);
            return;
        }
        got++;
        int i = 0;
        while (i < RK_KEYS && !(r->type == REDIS_REPLY_STRING && strcmp(r->str, spread[rk_pick[i]]) == 0))
            i++;
        if (i < RK_KEYS)
            hits[i]++;
        else
            pc_fail("RANDOMKEY: not one of the keys");
        freeReplyObject(r);
    }
    check("RANDOMKEY, 10 keys on 4 shards", hits, RK_KEYS);
    run(c, 1, (const char *[]){"FLUSHDB"});
    run(c, 2, (const char *[]){"SELECT", "0"});
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    redisContext *c = pc_hiredis_connect(srv.port);
    if (!c)
        return 2;
    memset(pad, 'x', sizeof pad - 1);

    make(c, 'h', "rand:h:lp", SMALL, false, false, "listpack");
    make(c, 'h', "rand:h:ht", SMALL, false, true, "hashtable");
    make(c, 's', "rand:s:is", SMALL, true, false, "intset");
    make(c, 's', "rand:s:ht", SMALL, false, false, "hashtable");
    make(c, 'z', "rand:z:lp", SMALL, false, false, "listpack");
    make(c, 'z', "rand:z:sl", SMALL, false, true, "skiplist");

    check_repeats(c, "HRANDFIELD", "rand:h:lp", SMALL, 20000, "HRANDFIELD listpack");
    check_repeats(c, "HRANDFIELD", "rand:h:ht", SMALL, 20000, "HRANDFIELD hashtable");
    check_repeats(c, "SRANDMEMBER", "rand:s:is", SMALL, 20000, "SRANDMEMBER intset");
    check_repeats(c, "SRANDMEMBER", "rand:s:ht", SMALL, 20000, "SRANDMEMBER hashtable");
    check_repeats(c, "ZRANDMEMBER", "rand:z:lp", SMALL, 20000, "ZRANDMEMBER listpack");
    check_repeats(c, "ZRANDMEMBER", "rand:z:sl", SMALL, 20000, "ZRANDMEMBER skiplist");

    check_distinct(c, "HRANDFIELD", "rand:h:lp", "HRANDFIELD listpack");
    check_distinct(c, "HRANDFIELD", "rand:h:ht", "HRANDFIELD hashtable");
    check_distinct(c, "SRANDMEMBER", "rand:s:is", "SRANDMEMBER intset");
    check_distinct(c, "SRANDMEMBER", "rand:s:ht", "SRANDMEMBER hashtable");
    check_distinct(c, "ZRANDMEMBER", "rand:z:lp", "ZRANDMEMBER listpack");
    check_distinct(c, "ZRANDMEMBER", "rand:z:sl", "ZRANDMEMBER skiplist");

    check_spop(c, "rand:spop", true, 0, "SPOP intset");
    check_spop(c, "rand:spop", false, 0, "SPOP hashtable");
    check_spop(c, "rand:spop", true, 3, "SPOP intset count 3");
    check_spop(c, "rand:spop", false, 3, "SPOP hashtable count 3");
    check_spop(c, "rand:spop", true, 9, "SPOP intset count 9");
    check_spop(c, "rand:spop", false, 9, "SPOP hashtable count 9");

    if (!srv.is_redis) {
        make(c, 'h', "rand:h:big", BIG, false, true, "hashtable");
        make(c, 's', "rand:s:big", BIG, false, false, "hashtable");
        make(c, 'z', "rand:z:big", BIG, false, true, "skiplist");
        check_repeats(c, "HRANDFIELD", "rand:h:big", BIG, 100000, "HRANDFIELD hashtable, 200 fields");
        check_repeats(c, "SRANDMEMBER", "rand:s:big", BIG, 100000, "SRANDMEMBER hashtable, 200 members");
        check_repeats(c, "ZRANDMEMBER", "rand:z:big", BIG, 100000, "ZRANDMEMBER skiplist, 200 members");
    }

    check_randomkey(c);

    redisFree(c);
    pc_test_teardown(&srv);
    return pc_test_done("test_random");
}
