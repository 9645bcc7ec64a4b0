/*
 * test_atomic: multi-shard commands are atomic and isolated.
 *
 * A group of 16 keys spread over every shard (pc_spread_keys).  Writers set
 * the whole group to one value of their own with MSET, or delete it with
 * DEL, over and over; readers read the whole group with MGET and with
 * EXISTS meanwhile.  A reader must see the group all at one value or all
 * missing -- never some keys from one write and some from another (that
 * would be a half-applied MSET or DEL) -- and EXISTS must say 0 or 16.
 * A third kind of client pipelines single-key GETs of the whole group: each
 * must see nil or a value some writer wrote (these wait at the key's owner
 * while a transaction holds it, and their replies must come back in order).
 * A flusher empties the keyspace meanwhile (FLUSHALL, FLUSHDB, a SWAPDB
 * there and back, those in a MULTI/EXEC) and reads the group right after: a keyspace-wide write
 * is atomic too, so no MSET may be half flushed (some keys gone, some
 * kept).  Transactors run MULTI INCR a INCR b EXEC on their own pair of
 * keys of two shards, over and over: both INCRs must answer the same
 * number (the pair moves together, and is flushed together), and EXEC must
 * come back while keyspace-wide writes lock every shard in turn (a home
 * shard locked whole must not hold back the EXEC's commands bound for keys
 * its transaction holds elsewhere: that was a deadlock).  Thousands of iterations with 4 shards (fewer under a sanitizer),
 * then every reply is accounted for.
 */
#include "testclient.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WRITERS 3
#define READERS 3
#define GETTERS 2
#define FLUSHERS 1
#define TRANSACTORS 2

static int port;
static int rounds;
static char keys[PC_SPREAD_KEYS][64];
static char tx_keys[PC_SPREAD_KEYS][64];
static atomic_int writers_left;
static atomic_long mixed, bad_exists, bad_gets, errors, reads, gets, flushes, execs, bad_execs;

static void *writer(void *arg)
{
    long id = (long)arg;
    redisContext *rc = pc_hiredis_connect(port);
    const char *argv[1 + 2 * PC_SPREAD_KEYS];
    char value[32];
    for (int i = 0; rc && i < rounds; i++) {
        redisReply *r;
        if (i % 5 == 4) {
            argv[0] = "DEL";
            for (int k = 0; k < PC_SPREAD_KEYS; k++)
                argv[1 + k] = keys[k];
            r = redisCommandArgv(rc, 1 + PC_SPREAD_KEYS, argv, NULL);
        } else {
            snprintf(value, sizeof value, "w%ld-%d", id, i);
            argv[0] = "MSET";
            for (int k = 0; k < PC_SPREAD_KEYS; k++) {
                argv[1 + 2 * k] = keys[k];
                argv[2 + 2 * k] = value;
            }
            r = redisCommandArgv(rc, 1 + 2 * PC_SPREAD_KEYS, argv, NULL);
        }
        if (!r || r->type == REDIS_REPLY_ERROR)
            atomic_fetch_add(&errors, 1);
        freeReplyObject(r);
    }
    if (rc)
        redisFree(rc);
    atomic_fetch_sub(&writers_left, 1);
    return NULL;
}

/* MGET of the whole group: every key at one writer's value, or every key missing */
static void read_group(redisContext *rc, const char *who)
{
    const char *argv[1 + PC_SPREAD_KEYS] = {"MGET"};
    for (int k = 0; k < PC_SPREAD_KEYS; k++)
        argv[1 + k] = keys[k];
    redisReply *r = redisCommandArgv(rc, 1 + PC_SPREAD_KEYS, argv, NULL);
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != PC_SPREAD_KEYS) {
        atomic_fetch_add(&errors, 1);
    } else {
        const redisReply *first = r->element[0];
        for (size_t k = 1; k < r->elements; k++) {
            const redisReply *e = r->element[k];
            bool same = e->type == first->type && (e->type != REDIS_REPLY_STRING || strcmp(e->str, first->str) == 0);
            if (!same) {
                if (atomic_fetch_add(&mixed, 1) == 0)
                    fprintf(stderr, "MGET (%s) saw a mix: key 0 %s, key %zu %s\n", who,
                            first->type == REDIS_REPLY_STRING ? first->str : "(nil)", k,
                            e->type == REDIS_REPLY_STRING ? e->str : "(nil)");
                break;
            }
        }
    }
    freeReplyObject(r);
}

static void *reader(void *arg)
{
    (void)arg;
    redisContext *rc = pc_hiredis_connect(port);
    const char *argv[1 + PC_SPREAD_KEYS];
    for (int k = 0; k < PC_SPREAD_KEYS; k++)
        argv[1 + k] = keys[k];
    while (rc && atomic_load(&writers_left) > 0) {
        read_group(rc, "a reader");
        redisReply *r;
        argv[0] = "EXISTS";
        r = redisCommandArgv(rc, 1 + PC_SPREAD_KEYS, argv, NULL);
        if (!r || r->type != REDIS_REPLY_INTEGER)
            atomic_fetch_add(&errors, 1);
        else if (r->integer != 0 && r->integer != PC_SPREAD_KEYS)
            atomic_fetch_add(&bad_exists, 1);
        freeReplyObject(r);
        atomic_fetch_add(&reads, 1);
    }
    if (rc)
        redisFree(rc);
    return NULL;
}

/* keyspace-wide writes while the writers run, each followed by a read of the group */
static void *flusher(void *arg)
{
    (void)arg;
    redisContext *rc = pc_hiredis_connect(port);
    /* and in a transaction: SWAPDB there and back, then FLUSHDB, as one */
    static const char *const cmds[] = {"FLUSHALL", "FLUSHDB", "FLUSHALL SYNC", "SWAPDB 0 1", "SWAPDB 0 1", "MULTI"};
    static const char *const multi[] = {"SWAPDB 0 1", "SWAPDB 1 0", "FLUSHDB"};
    for (long i = 0; rc && atomic_load(&writers_left) > 0; i++) {
        const char *cmd = cmds[i % 6];
        redisReply *r = redisCommand(rc, cmd);
        bool ok = r && r->type == REDIS_REPLY_STATUS;
        if (ok && i % 6 == 5) {
            for (int j = 0; j < 3; j++) {
                freeReplyObject(r);
                r = redisCommand(rc, multi[j]);
                ok = ok && r && r->type == REDIS_REPLY_STATUS; /* +QUEUED */
            }
            freeReplyObject(r);
            r = redisCommand(rc, "EXEC");
            ok = ok && r && r->type == REDIS_REPLY_ARRAY && r->elements == 3;
        }
        if (!ok)
            atomic_fetch_add(&errors, 1);
        freeReplyObject(r);
        read_group(rc, cmd);
        atomic_fetch_add(&flushes, 1);
    }
    if (rc)
        redisFree(rc);
    return NULL;
}

/* MULTI INCR a INCR b EXEC on its own pair (keys of two shards) while the writers run: equal counts */
static void *transactor(void *arg)
{
    long id = (long)arg;
    /* keys of the upper shards (slots 8200.. and 12300..: shards 2 and 3 of 4), so that a connection of a
     * lower shard has its home locked whole by a keyspace-wide write while its transaction holds them */
    const char *a = tx_keys[8 + id], *b = tx_keys[12 + id];
    redisContext *rc = pc_hiredis_connect(port);
    while (rc && atomic_load(&writers_left) > 0) {
        redisAppendCommand(rc, "MULTI");
        redisAppendCommand(rc, "INCR %s", a);
        redisAppendCommand(rc, "INCR %s", b);
        redisAppendCommand(rc, "EXEC");
        redisReply *r = NULL;
        bool ok = true;
        for (int i = 0; i < 4; i++) {
            freeReplyObject(r);
            r = NULL;
            if (redisGetReply(rc, (void **)&r) != REDIS_OK || !r) {
                atomic_fetch_add(&errors, 1);
                redisFree(rc);
                return NULL;
            }
        }
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || r->element[0]->type != REDIS_REPLY_INTEGER ||
            r->element[1]->type != REDIS_REPLY_INTEGER)
            ok = false;
        else if (r->element[0]->integer != r->element[1]->integer)
            atomic_fetch_add(&bad_execs, 1);
        if (!ok)
            atomic_fetch_add(&errors, 1);
        freeReplyObject(r);
        atomic_fetch_add(&execs, 1);
    }
    if (rc)
        redisFree(rc);
    return NULL;
}

/* the whole group as one pipeline of GETs: nil or a writer's value ("w<writer>-<round>") each */
static void *getter(void *arg)
{
    (void)arg;
    redisContext *rc = pc_hiredis_connect(port);
    while (rc && atomic_load(&writers_left) > 0) {
        for (int k = 0; k < PC_SPREAD_KEYS; k++)
            redisAppendCommand(rc, "GET %s", keys[k]);
        for (int k = 0; k < PC_SPREAD_KEYS; k++) {
            redisReply *r = NULL;
            if (redisGetReply(rc, (void **)&r) != REDIS_OK || !r) {
                atomic_fetch_add(&errors, 1);
                redisFree(rc);
                return NULL;
            }
            if (r->type != REDIS_REPLY_NIL && (r->type != REDIS_REPLY_STRING || r->str[0] != 'w'))
                atomic_fetch_add(&bad_gets, 1);
            freeReplyObject(r);
        }
        atomic_fetch_add(&gets, PC_SPREAD_KEYS);
    }
    if (rc)
        redisFree(rc);
    return NULL;
}

/* an INFO shards counter over every shard: parked= (batches that waited at an owner for a locked key),
 * lock_queued= (MSET / MGET parts whose lock request queued); *sharded: more than one store (not the
 * global-lock build, where nothing ever waits at an owner) */
static long long shards_total(const char *field, bool *sharded)
{
    int shards = 0;
    redisContext *rc = pc_hiredis_connect(port);
    redisReply *r = rc ? redisCommand(rc, "INFO everything") : NULL;
    long long total = -1;
    if (r && r->type == REDIS_REPLY_STRING) {
        total = 0;
        for (const char *p = strstr(r->str, field); p; p = strstr(p + 1, field)) {
            total += atoll(p + strlen(field));
            shards++;
        }
        *sharded = shards > 1 && !strstr(r->str, "percore_build:global-lock");
    }
    freeReplyObject(r);
    if (rc)
        redisFree(rc);
    return total;
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    port = srv.port;
    rounds = pc_sanitized() ? 300 : 2000;
    pc_spread_keys("atomic:", keys);
    pc_spread_keys("atomic-tx:", tx_keys);
    /* the writers hold a key's lock only for a moment: rounds again (a few times at most) until some GET has
     * met one, so that the wait at an owner is known to have been exercised */
    bool sharded = false;
    long long parked = 0, queued = 0;
    for (int attempt = 0; attempt < 5 && parked == 0; attempt++) {
        atomic_store(&writers_left, WRITERS);
        pthread_t w[WRITERS], r[READERS], g[GETTERS], f[FLUSHERS], t[TRANSACTORS];
        for (long i = 0; i < READERS; i++)
            pthread_create(&r[i], NULL, reader, NULL);
        for (long i = 0; i < GETTERS; i++)
            pthread_create(&g[i], NULL, getter, NULL);
        for (long i = 0; i < FLUSHERS; i++)
            pthread_create(&f[i], NULL, flusher, NULL);
        for (long i = 0; i < TRANSACTORS; i++)
            pthread_create(&t[i], NULL, transactor, (void *)i);
        for (long i = 0; i < WRITERS; i++)
            pthread_create(&w[i], NULL, writer, (void *)i);
        for (int i = 0; i < WRITERS; i++)
            pthread_join(w[i], NULL);
        for (int i = 0; i < READERS; i++)
            pthread_join(r[i], NULL);
        for (int i = 0; i < GETTERS; i++)
            pthread_join(g[i], NULL);
        for (int i = 0; i < FLUSHERS; i++)
            pthread_join(f[i], NULL);
        for (int i = 0; i < TRANSACTORS; i++)
            pthread_join(t[i], NULL);
        parked = shards_total(",parked=", &sharded);
        queued = shards_total(",lock_queued=", &sharded);
        if (srv.is_redis || !sharded)
            break;
    }
    printf("%d writers x %d MSET/DEL of %d keys, %ld MGET+EXISTS reads, %ld pipelined GETs, %ld flushes, "
           "%ld EXECs\n", WRITERS, rounds, PC_SPREAD_KEYS, atomic_load(&reads), atomic_load(&gets),
           atomic_load(&flushes), atomic_load(&execs));
    if (atomic_load(&mixed))
        pc_fail("%ld MGETs saw the group half written", atomic_load(&mixed));
    if (atomic_load(&bad_exists))
        pc_fail("%ld EXISTS saw the group half deleted or half written", atomic_load(&bad_exists));
    if (atomic_load(&bad_gets))
        pc_fail("%ld GETs saw a value no writer wrote", atomic_load(&bad_gets));
    if (atomic_load(&bad_execs))
        pc_fail("%ld EXECs of INCR a INCR b gave two different counts", atomic_load(&bad_execs));
    if (atomic_load(&execs) == 0)
        pc_fail("no transaction ran while the writers ran");
    if (atomic_load(&errors))
        pc_fail("%ld error or missing replies", atomic_load(&errors));
    if (atomic_load(&reads) == 0 || atomic_load(&gets) == 0 || atomic_load(&flushes) == 0)
        pc_fail("the readers read nothing, or nothing was flushed, while the writers ran");
    printf("batches that waited at an owner for a locked key: %lld; parts queued for locks: %lld\n", parked,
           queued);
    if (!srv.is_redis && (parked < 0 || (sharded && parked == 0)))
        pc_fail("no GET ever waited for a locked key: the test did not exercise the wait");
    if (!srv.is_redis && (queued < 0 || (sharded && queued == 0)))
        pc_fail("no MSET or MGET part ever queued for a lock: the test did not exercise lock contention");
    pc_test_teardown(&srv);
    return pc_test_done("test_atomic");
}
