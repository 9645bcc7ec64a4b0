/*
 * test_scan: SCAN cursors stay below 2^53 (the integers a JavaScript number
 * holds exactly: node-redis 4 parses cursors with Number()) and a whole scan
 * returns every key present for all of it, on a keyspace that changes under
 * it.
 *
 *   1. 200k keys (20k under a sanitizer), still: SCAN COUNT 100 and 1000,
 *      every cursor < 2^53, every key returned;
 *   2. 20k keys that stay, while a second connection adds 300k more between
 *      SCAN COUNT 20 calls and then deletes them all, so that every shard's
 *      table grows twice or more and then shrinks mid-scan: every cursor
 *      < 2^53, every key that stayed returned, nothing returned that never
 *      existed;
 *   3. HSCAN, SSCAN and ZSCAN of 50k elements (a single table each): every
 *      cursor < 2^53, every element returned.
 *
 * Passes against redis-server 7.0 too.
 */
#include "testclient.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CURSOR_LIMIT (1ull << 53) /* the first integer a double does not tell from the next */
#define CHUNK 1000                /* commands per pipelined batch */
#define CHURN_STEP 2000           /* churn commands between two SCAN calls */
#define MAX_CALLS 2000000         /* a scan still going after this many calls is lost */

/* the names a scan may return: prefix + index below n, marked in seen */
struct want {
    const char *prefix;  /* the names that must all come back */
    long n;              /* how many */
    unsigned char *seen; /* n flags */
    long churn;          /* "churn:<i>" for i below this may come back too */
    long unknown;        /* names returned that never existed */
};

/* the churn between SCAN calls: SET churn:0..n-1, then DEL them all */
struct churn {
    redisContext *rc; /* its own connection */
    long n;           /* keys it adds, then deletes */
    long next;        /* commands sent so far (0..2n) */
};

static void key_name(char *buf, size_t size, const char *prefix, long i)
{
    snprintf(buf, size, "%s%ld", prefix, i);
}

/* send `fmt` (one %s: prefix + index) for the indexes [from, to), pipelined */
static void pipeline(redisContext *rc, const char *fmt, const char *prefix, long from, long to)
{
    char name[64];
    for (long i = from; i < to; i += CHUNK) {
        long end = i + CHUNK < to ? i + CHUNK : to;
        for (long j = i; j < end; j++) {
            key_name(name, sizeof(name), prefix, j);
            redisAppendCommand(rc, fmt, name);
        }
        for (long j = i; j < end; j++) {
            redisReply *r = NULL;
            if (redisGetReply(rc, (void **)&r) != REDIS_OK || !r || r->type == REDIS_REPLY_ERROR) {
                pc_fail("%s for %s%ld: %s", fmt, prefix, j, r ? r->str : rc->errstr);
                freeReplyObject(r);
                return;
            }
            freeReplyObject(r);
        }
    }
}

static void churn_step(struct churn *ch)
{
    if (!ch || ch->next >= 2 * ch->n)
        return;
    long end = ch->next + CHURN_STEP < 2 * ch->n ? ch->next + CHURN_STEP : 2 * ch->n;
    if (ch->next < ch->n) {
        long to = end < ch->n ? end : ch->n;
        pipeline(ch->rc, "SET %s v", "churn:", ch->next, to);
        ch->next = to;
    } else {
        pipeline(ch->rc, "DEL %s", "churn:", ch->next - ch->n, end - ch->n);
        ch->next = end;
    }
}

static void mark(struct want *w, const char *name, size_t len)
{
    size_t pl = strlen(w->prefix);
    const char *num = NULL;
    long limit = 0;
    if (len > pl && memcmp(name, w->prefix, pl) == 0) {
        num = name + pl;
        limit = w->n;
    } else if (len > 6 && memcmp(name, "churn:", 6) == 0) {
        num = name + 6;
        limit = w->churn;
    }
    char *end;
    long i = num ? strtol(num, &end, 10) : -1;
    if (!num || end != name + len || i < 0 || i >= limit) {
        if (w->unknown++ < 5)
            pc_fail("scan returned %.*s, which never existed", (int)len, name);
        return;
    }
    if (limit == w->n)
        w->seen[i] = 1;
}

/*
 * A whole scan: argv is the command with "0" at argv[at], rewritten with each
 * cursor; the reply's elements are names every `stride` (2: HSCAN/ZSCAN's
 * field-value pairs).  The churn, if any, runs between calls.
 */
static void scan_all(redisContext *rc, int argc, const char **argv, int at, int stride, struct want *w,
                     struct churn *ch, const char *what)
{
    char cursor[32] = "0";
    long calls = 0, big = 0;
    unsigned long long max = 0;
    memset(w->seen, 0, (size_t)w->n);
    w->unknown = 0;
    do {
        argv[at] = cursor;
        redisReply *r = redisCommandArgv(rc, argc, argv, NULL);
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING ||
            r->element[1]->type != REDIS_REPLY_ARRAY) {
            pc_fail("%s: bad reply to cursor %s: %s", what, cursor, r && r->str ? r->str : rc->errstr);
            freeReplyObject(r);
            return;
        }
        char *end;
        errno = 0;
        unsigned long long next = strtoull(r->element[0]->str, &end, 10);
        if (errno || *end || r->element[0]->len >= sizeof(cursor)) {
            pc_fail("%s: cursor %s is not a 64-bit number", what, r->element[0]->str);
            freeReplyObject(r);
            return;
        }
        if (next >= CURSOR_LIMIT && big++ < 3)
            pc_fail("%s: cursor %llu is 2^53 or more", what, next);
        if (next > max)
            max = next;
        memcpy(cursor, r->element[0]->str, r->element[0]->len + 1);
        const redisReply *names = r->element[1];
        for (size_t i = 0; i < names->elements; i += (size_t)stride)
            mark(w, names->element[i]->str, names->element[i]->len);
        freeReplyObject(r);
        churn_step(ch);
    } while (strcmp(cursor, "0") != 0 && ++calls < MAX_CALLS);
    long missing = 0;
    for (long i = 0; i < w->n; i++)
        if (!w->seen[i] && missing++ < 3)
            pc_fail("%s: %s%ld, present throughout, never returned", what, w->prefix, i);
    if (calls >= MAX_CALLS)
        pc_fail("%s: not over after %d calls", what, MAX_CALLS);
    printf("%s: %ld calls, largest cursor %llu, %ld missing, %ld cursors >= 2^53\n", what, calls + 1, max, missing,
           big);
}

static void flushall(redisContext *rc)
{
    redisReply *r = redisCommand(rc, "FLUSHALL");
    if (!r || r->type != REDIS_REPLY_STATUS)
        pc_fail("FLUSHALL: %s", r && r->str ? r->str : rc->errstr);
    freeReplyObject(r);
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    redisContext *rc = pc_hiredis_connect(srv.port);
    struct churn ch = {.rc = pc_hiredis_connect(srv.port)};
    if (!rc || !ch.rc)
        return 2;
    long scale = pc_sanitized() ? 10 : 1;
    long big = 200000 / scale, stay = 20000 / scale, elements = 50000 / scale;
    struct want w = {.prefix = "key:", .n = big, .seen = malloc((size_t)big)};

    /* 1. a big keyspace, still */
    pipeline(rc, "SET %s v", "key:", 0, big);
    scan_all(rc, 4, (const char *[]){"SCAN", "0", "COUNT", "100"}, 1, 1, &w, NULL, "SCAN COUNT 100");
    scan_all(rc, 4, (const char *[]){"SCAN", "0", "COUNT", "1000"}, 1, 1, &w, NULL, "SCAN COUNT 1000");

    /* 2. keys that stay while the table grows and shrinks under the scan */
    flushall(rc);
    pipeline(rc, "SET %s v", "stay:", 0, stay);
    w = (struct want){.prefix = "stay:", .n = stay, .seen = w.seen, .churn = 300000 / scale};
    ch.n = w.churn;
    scan_all(rc, 4, (const char *[]){"SCAN", "0", "COUNT", "20"}, 1, 1, &w, &ch, "SCAN COUNT 20 under churn");
    if (ch.next != 2 * ch.n)
        pc_fail("the scan ended before the churn did: %ld of %ld commands", ch.next, 2 * ch.n);
    redisReply *r = redisCommand(rc, "DBSIZE");
    if (!r || r->type != REDIS_REPLY_INTEGER || r->integer != stay)
        pc_fail("DBSIZE after the churn: %lld, want %ld", r ? r->integer : -1, stay);
    freeReplyObject(r);

    /* 3. one big hash, set and sorted set */
    flushall(rc);
    pipeline(rc, "HSET h %s v", "f", 0, elements);
    pipeline(rc, "SADD s %s", "f", 0, elements);
    pipeline(rc, "ZADD z 1 %s", "f", 0, elements);
    w = (struct want){.prefix = "f", .n = elements, .seen = w.seen};
    scan_all(rc, 5, (const char *[]){"HSCAN", "h", "0", "COUNT", "100"}, 2, 2, &w, NULL, "HSCAN COUNT 100");
    scan_all(rc, 5, (const char *[]){"SSCAN", "s", "0", "COUNT", "100"}, 2, 1, &w, NULL, "SSCAN COUNT 100");
    scan_all(rc, 5, (const char *[]){"ZSCAN", "z", "0", "COUNT", "100"}, 2, 2, &w, NULL, "ZSCAN COUNT 100");

    free(w.seen);
    redisFree(ch.rc);
    redisFree(rc);
    pc_test_teardown(&srv);
    return pc_test_done("test_scan");
}
