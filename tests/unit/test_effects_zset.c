/*
 * test_effects_zset: what the sorted set handlers (server/cmd/zset.c)
 * report -- keys modified, keyspace events, in order -- for each write,
 * driven directly on one store with an effects sink (effects_check.h).
 * The replies and the event sequences are Redis 7.0.15's for the same
 * commands run in the same order (redis-server --notify-keyspace-events
 * KEAn, PSUBSCRIBE '__keyevent@*'); the signals ("M") sit where t_zset.c
 * calls signalModifiedKey.  The sections share one keyspace, in order, as
 * the Redis session that gave them did.
 */
#include "effects_check.h"

/* ZADD and ZINCRBY: "new" when the key is created, then the signal and "zadd"/"zincr" --
 * only when a member was added or its score changed (NX/XX/GT/LT/CH/INCR) */
static void test_zadd_zincrby(void)
{
    FX(":2\r\n", "n:new@0:k mod@0:k z:zadd@0:k", "zadd", "k", "1", "a", "2", "b");
    FX(":0\r\n", "", "zadd", "k", "1", "a");
    FX(":0\r\n", "mod@0:k z:zadd@0:k", "zadd", "k", "5", "a");
    FX(":0\r\n", "", "zadd", "k", "nx", "9", "a");
    FX(":1\r\n", "mod@0:k z:zadd@0:k", "zadd", "k", "nx", "3", "c");
    FX(":0\r\n", "mod@0:k z:zadd@0:k", "zadd", "k", "xx", "9", "a");
    FX(":0\r\n", "", "zadd", "k", "xx", "1", "nope");
    FX(":0\r\n", "", "zadd", "missing", "xx", "1", "a");
    FX(":0\r\n", "", "zadd", "k", "gt", "1", "a");
    FX(":0\r\n", "mod@0:k z:zadd@0:k", "zadd", "k", "lt", "1", "a");
    FX(":0\r\n", "", "zadd", "k", "ch", "1", "a");
    FX(":2\r\n", "mod@0:k z:zadd@0:k", "zadd", "k", "ch", "7", "a", "8", "d");
    FX("$1\r\n9\r\n", "mod@0:k z:zincr@0:k", "zadd", "k", "incr", "2", "a");
    FX("$-1\r\n", "", "zadd", "k", "incr", "nx", "2", "a");
    FX("$-1\r\n", "", "zadd", "k", "xx", "incr", "1", "nothere");
    FX("$1\r\n9\r\n", "", "zincrby", "k", "0", "a");
    FX("$2\r\n10\r\n", "mod@0:k z:zincr@0:k", "zincrby", "k", "1", "a");
    FX("$1\r\n1\r\n", "n:new@0:k2 mod@0:k2 z:zincr@0:k2", "zincrby", "k2", "1", "m");
    FX_RUN("set", "s", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "zadd", "s", "1", "a");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "zincrby", "s", "1", "a");
    FX("-ERR value is not a valid float\r\n", "", "zadd", "k", "nan", "a");
    FX("-ERR INCR option supports a single increment-element pair\r\n", "", "zadd", "k", "incr", "1", "a", "2", "b");
    FX("-ERR XX and NX options at the same time are not compatible\r\n", "", "zadd", "k", "nx", "xx", "1", "a");
    FX(":1\r\n", "n:new@0:inf mod@0:inf z:zadd@0:inf", "zadd", "inf", "0", "m");
    FX(":0\r\n", "mod@0:inf z:zadd@0:inf", "zadd", "inf", "+inf", "m");
    FX("-ERR resulting score is not a number (NaN)\r\n", "", "zincrby", "inf", "-inf", "m");
}

/* ZREM: "zrem", "del" when the set emptied, then the signal; nothing when nothing was removed */
static void test_zrem(void)
{
    FX(":0\r\n", "", "zrem", "k", "nope");
    FX(":1\r\n", "z:zrem@0:k mod@0:k", "zrem", "k", "a");
    FX(":0\r\n", "", "zrem", "nokey", "a");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "zrem", "s", "a");
    FX(":3\r\n", "z:zrem@0:k g:del@0:k mod@0:k", "zrem", "k", "b", "c", "d", "x");
    FX(":0\r\n", "", "zrem", "k", "x");
}

/* ZREMRANGEBYRANK/SCORE/LEX: the signal, the range event, "del" when emptied */
static void test_zremrange(void)
{
    FX(":4\r\n", "n:new@0:r mod@0:r z:zadd@0:r", "zadd", "r", "1", "a", "2", "b", "3", "c", "4", "d");
    FX(":0\r\n", "", "zremrangebyrank", "r", "5", "9");
    FX(":1\r\n", "mod@0:r z:zremrangebyrank@0:r", "zremrangebyrank", "r", "0", "0");
    FX(":0\r\n", "", "zremrangebyscore", "r", "100", "200");
    FX(":1\r\n", "mod@0:r z:zremrangebyscore@0:r", "zremrangebyscore", "r", "2", "2");
    FX(":0\r\n", "", "zremrangebylex", "r", "[x", "[z");
    FX("-ERR min or max is not a float\r\n", "", "zremrangebyscore", "r", "x", "y");
    FX(":2\r\n", "mod@0:r z:zremrangebyrank@0:r g:del@0:r", "zremrangebyrank", "r", "0", "-1");
    FX(":0\r\n", "", "zremrangebyrank", "nokey", "0", "-1");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "zremrangebyrank", "s", "0", "-1");
    FX(":2\r\n", "n:new@0:r2 mod@0:r2 z:zadd@0:r2", "zadd", "r2", "0", "a", "0", "b");
    FX(":2\r\n", "mod@0:r2 z:zremrangebylex@0:r2 g:del@0:r2", "zremrangebylex", "r2", "-", "+");
    FX(":2\r\n", "n:new@0:r3 mod@0:r3 z:zadd@0:r3", "zadd", "r3", "1", "a", "2", "b");
    FX(":2\r\n", "mod@0:r3 z:zremrangebyscore@0:r3 g:del@0:r3", "zremrangebyscore", "r3", "-inf", "+inf");
}

/* the pops: "zpopmin"/"zpopmax", the signal, "del" when emptied; nothing for a count of 0,
 * a missing key or an error */
static void test_pops(void)
{
    FX(":3\r\n", "n:new@0:p mod@0:p z:zadd@0:p", "zadd", "p", "1", "a", "2", "b", "3", "c");
    FX("*2\r\n$1\r\na\r\n$1\r\n1\r\n", "z:zpopmin@0:p mod@0:p", "zpopmin", "p");
    FX("*0\r\n", "", "zpopmax", "p", "0");
    FX("*2\r\n$1\r\nc\r\n$1\r\n3\r\n", "z:zpopmax@0:p mod@0:p", "zpopmax", "p");
    FX("*2\r\n$1\r\nb\r\n$1\r\n2\r\n", "z:zpopmin@0:p mod@0:p g:del@0:p", "zpopmin", "p", "5");
    FX("*0\r\n", "", "zpopmin", "p");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "zpopmin", "s");
    FX("-ERR value is out of range, must be positive\r\n", "", "zpopmax", "p", "-1");
    FX(":3\r\n", "n:new@0:p mod@0:p z:zadd@0:p", "zadd", "p", "1", "a", "2", "b", "3", "c");
    FX("*2\r\n$1\r\np\r\n*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n", "z:zpopmin@0:p mod@0:p", "zmpop", "2", "nokey", "p", "min", "count", "2");
    FX("*2\r\n$1\r\np\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n", "z:zpopmax@0:p mod@0:p g:del@0:p", "zmpop", "1", "p", "max");
    FX("*-1\r\n", "", "zmpop", "1", "p", "max");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "zmpop", "2", "s", "p", "min");
    FX(":2\r\n", "n:new@0:p mod@0:p z:zadd@0:p", "zadd", "p", "1", "a", "2", "b");
    FX("*3\r\n$1\r\np\r\n$1\r\na\r\n$1\r\n1\r\n", "z:zpopmin@0:p mod@0:p", "bzpopmin", "nokey", "p", "0");
    FX("*3\r\n$1\r\np\r\n$1\r\nb\r\n$1\r\n2\r\n", "z:zpopmax@0:p mod@0:p g:del@0:p", "bzpopmax", "p", "0");
    FX(":2\r\n", "n:new@0:p mod@0:p z:zadd@0:p", "zadd", "p", "1", "a", "2", "b");
    FX("*2\r\n$1\r\np\r\n*2\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n", "z:zpopmax@0:p mod@0:p g:del@0:p", "bzmpop", "0", "1", "p", "max", "count", "5");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "bzpopmin", "s", "0");
}

/* the STORE commands report their destination only: "new" when created, the signal and the
 * command's event; an empty result deletes an existing destination (signal, "del") */
static void test_store(void)
{
    FX(":2\r\n", "n:new@0:a mod@0:a z:zadd@0:a", "zadd", "a", "1", "x", "2", "y");
    FX(":2\r\n", "n:new@0:b mod@0:b z:zadd@0:b", "zadd", "b", "2", "y", "3", "w");
    FX(":3\r\n", "n:new@0:d mod@0:d z:zunionstore@0:d", "zunionstore", "d", "2", "a", "b");
    FX(":3\r\n", "mod@0:d z:zunionstore@0:d", "zunionstore", "d", "2", "a", "b", "weights", "2", "1", "aggregate", "max");
    FX(":1\r\n", "mod@0:d z:zinterstore@0:d", "zinterstore", "d", "2", "a", "b");
    FX(":1\r\n", "mod@0:d z:zdiffstore@0:d", "zdiffstore", "d", "2", "a", "b");
    FX(":0\r\n", "mod@0:d g:del@0:d", "zinterstore", "d", "2", "a", "nokey");
    FX(":0\r\n", "", "zinterstore", "d", "2", "a", "nokey");
    FX(":0\r\n", "", "zunionstore", "d", "1", "nokey");
    FX(":2\r\n", "n:new@0:d mod@0:d z:zdiffstore@0:d", "zdiffstore", "d", "1", "a");
    FX(":0\r\n", "mod@0:d g:del@0:d", "zdiffstore", "d", "2", "a", "a");
    FX("-ERR syntax error\r\n", "", "zunionstore", "d2", "2", "a", "b", "weights", "1");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "zunionstore", "d2", "2", "a", "s");
    FX("-ERR at least 1 input key is needed for 'zunionstore' command\r\n", "", "zunionstore", "d2", "0", "a");
    FX(":2\r\n", "n:new@0:d3 mod@0:d3 z:zrangestore@0:d3", "zrangestore", "d3", "a", "0", "-1");
    FX(":2\r\n", "mod@0:d3 z:zrangestore@0:d3", "zrangestore", "d3", "a", "0", "-1");
    FX(":0\r\n", "mod@0:d3 g:del@0:d3", "zrangestore", "d3", "a", "5", "6");
    FX(":0\r\n", "", "zrangestore", "d3", "a", "5", "6");
    FX(":0\r\n", "", "zrangestore", "d3", "nokey", "0", "-1");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "zrangestore", "d3", "s", "0", "-1");
    FX(":1\r\n", "n:new@0:d3 mod@0:d3 z:zrangestore@0:d3", "zrangestore", "d3", "b", "(2", "+inf", "byscore");
    FX("-ERR syntax error\r\n", "", "zrangestore", "d3", "a", "0", "-1", "withscores");
    FX(":1\r\n", "mod@0:a z:zrangestore@0:a", "zrangestore", "a", "a", "0", "0");
    FX(":2\r\n", "mod@0:s z:zunionstore@0:s", "zunionstore", "s", "1", "b");
}
/* another database: the effects carry it */
static void test_other_db(void)
{
    fx_db = 3;
    FX(":1\r\n", "n:new@3:k mod@3:k z:zadd@3:k", "zadd", "k", "1", "a");
    FX("*2\r\n$1\r\na\r\n$1\r\n1\r\n", "z:zpopmax@3:k mod@3:k g:del@3:k", "zpopmax", "k");
    FX(":0\r\n", "", "zunionstore", "d", "1", "b");
    fx_db = 0;
}

/* a destination that expired is gone before the result goes in: the key is new again */
static void test_expired_destination(void)
{
    FX_RUN("zadd", "e", "1", "a");
    FX_RUN("zadd", "e2", "1", "a");
    FX_RUN("pexpire", "e", "100");
    FX_RUN("pexpire", "e2", "100");
    fx_now += 1000;
    FX(":2\r\n", "n:new@0:e mod@0:e z:zunionstore@0:e", "zunionstore", "e", "1", "b");
    FX(":1\r\n", "n:new@0:e2 mod@0:e2 z:zrangestore@0:e2", "zrangestore", "e2", "b", "0", "0");
}

/* a blocking pop that finds nothing waits (or times out in MULTI) and reports nothing */
static void test_blocking_waits(void)
{
    fx_may_block = true;
    FX("", "", "bzpopmin", "nokey", "0");
    CHECK(fx_blocked);
    FX("", "", "bzmpop", "0", "1", "nokey", "min");
    CHECK(fx_blocked);
    fx_may_block = false;
    FX("*-1\r\n", "", "bzpopmax", "nokey", "0");
    CHECK(!fx_blocked);
}

/* events are recorded only for the classes asked for; the signals always */
static void test_notify_classes(void)
{
    fx.notify = NOTIFY_ZSET;
    FX(":1\r\n", "mod@0:c z:zadd@0:c", "zadd", "c", "1", "a");
    FX(":1\r\n", "z:zrem@0:c mod@0:c", "zrem", "c", "a");
    fx.notify = NOTIFY_NEW | NOTIFY_GENERIC;
    FX(":1\r\n", "n:new@0:c mod@0:c", "zadd", "c", "1", "a");
    FX("*2\r\n$1\r\na\r\n$1\r\n1\r\n", "mod@0:c g:del@0:c", "zpopmin", "c");
    fx.notify = 0;
    FX(":1\r\n", "mod@0:c", "zadd", "c", "1", "a");
    fx.notify = ~0u;
}

int main(void)
{
    fx_setup();
    test_zadd_zincrby();
    test_zrem();
    test_zremrange();
    test_pops();
    test_store();
    test_other_db();
    test_expired_destination();
    test_blocking_waits();
    test_notify_classes();
    fx_teardown();
    return check_done("test_effects_zset");
}
