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
    FX("zadd k 1 a 2 b", ":2\r\n", "n new 0 k; M 0 k; z zadd 0 k");
    FX("zadd k 1 a", ":0\r\n", "");
    FX("zadd k 5 a", ":0\r\n", "M 0 k; z zadd 0 k");
    FX("zadd k nx 9 a", ":0\r\n", "");
    FX("zadd k nx 3 c", ":1\r\n", "M 0 k; z zadd 0 k");
    FX("zadd k xx 9 a", ":0\r\n", "M 0 k; z zadd 0 k");
    FX("zadd k xx 1 nope", ":0\r\n", "");
    FX("zadd missing xx 1 a", ":0\r\n", "");
    FX("zadd k gt 1 a", ":0\r\n", "");
    FX("zadd k lt 1 a", ":0\r\n", "M 0 k; z zadd 0 k");
    FX("zadd k ch 1 a", ":0\r\n", "");
    FX("zadd k ch 7 a 8 d", ":2\r\n", "M 0 k; z zadd 0 k");
    FX("zadd k incr 2 a", "$1\r\n9\r\n", "M 0 k; z zincr 0 k");
    FX("zadd k incr nx 2 a", "$-1\r\n", "");
    FX("zadd k xx incr 1 nothere", "$-1\r\n", "");
    FX("zincrby k 0 a", "$1\r\n9\r\n", "");
    FX("zincrby k 1 a", "$2\r\n10\r\n", "M 0 k; z zincr 0 k");
    FX("zincrby k2 1 m", "$1\r\n1\r\n", "n new 0 k2; M 0 k2; z zincr 0 k2");
    fx_run("set s v");
    FX("zadd s 1 a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "");
    FX("zincrby s 1 a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "");
    FX("zadd k nan a", "-ERR value is not a valid float\r\n", "");
    FX("zadd k incr 1 a 2 b", "-ERR INCR option supports a single increment-element pair\r\n", "");
    FX("zadd k nx xx 1 a", "-ERR XX and NX options at the same time are not compatible\r\n", "");
    FX("zadd inf 0 m", ":1\r\n", "n new 0 inf; M 0 inf; z zadd 0 inf");
    FX("zadd inf +inf m", ":0\r\n", "M 0 inf; z zadd 0 inf");
    FX("zincrby inf -inf m", "-ERR resulting score is not a number (NaN)\r\n", "");
}

/* ZREM: "zrem", "del" when the set emptied, then the signal; nothing when nothing was removed */
static void test_zrem(void)
{
    FX("zrem k nope", ":0\r\n", "");
    FX("zrem k a", ":1\r\n", "z zrem 0 k; M 0 k");
    FX("zrem nokey a", ":0\r\n", "");
    FX("zrem s a", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "");
    FX("zrem k b c d x", ":3\r\n", "z zrem 0 k; g del 0 k; M 0 k");
    FX("zrem k x", ":0\r\n", "");
}

/* ZREMRANGEBYRANK/SCORE/LEX: the signal, the range event, "del" when emptied */
static void test_zremrange(void)
{
    FX("zadd r 1 a 2 b 3 c 4 d", ":4\r\n", "n new 0 r; M 0 r; z zadd 0 r");
    FX("zremrangebyrank r 5 9", ":0\r\n", "");
    FX("zremrangebyrank r 0 0", ":1\r\n", "M 0 r; z zremrangebyrank 0 r");
    FX("zremrangebyscore r 100 200", ":0\r\n", "");
    FX("zremrangebyscore r 2 2", ":1\r\n", "M 0 r; z zremrangebyscore 0 r");
    FX("zremrangebylex r [x [z", ":0\r\n", "");
    FX("zremrangebyscore r x y", "-ERR min or max is not a float\r\n", "");
    FX("zremrangebyrank r 0 -1", ":2\r\n", "M 0 r; z zremrangebyrank 0 r; g del 0 r");
    FX("zremrangebyrank nokey 0 -1", ":0\r\n", "");
    FX("zremrangebyrank s 0 -1", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "");
    FX("zadd r2 0 a 0 b", ":2\r\n", "n new 0 r2; M 0 r2; z zadd 0 r2");
    FX("zremrangebylex r2 - +", ":2\r\n", "M 0 r2; z zremrangebylex 0 r2; g del 0 r2");
    FX("zadd r3 1 a 2 b", ":2\r\n", "n new 0 r3; M 0 r3; z zadd 0 r3");
    FX("zremrangebyscore r3 -inf +inf", ":2\r\n", "M 0 r3; z zremrangebyscore 0 r3; g del 0 r3");
}

/* the pops: "zpopmin"/"zpopmax", the signal, "del" when emptied; nothing for a count of 0,
 * a missing key or an error */
static void test_pops(void)
{
    FX("zadd p 1 a 2 b 3 c", ":3\r\n", "n new 0 p; M 0 p; z zadd 0 p");
    FX("zpopmin p", "*2\r\n$1\r\na\r\n$1\r\n1\r\n", "z zpopmin 0 p; M 0 p");
    FX("zpopmax p 0", "*0\r\n", "");
    FX("zpopmax p", "*2\r\n$1\r\nc\r\n$1\r\n3\r\n", "z zpopmax 0 p; M 0 p");
    FX("zpopmin p 5", "*2\r\n$1\r\nb\r\n$1\r\n2\r\n", "z zpopmin 0 p; M 0 p; g del 0 p");
    FX("zpopmin p", "*0\r\n", "");
    FX("zpopmin s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "");
    FX("zpopmax p -1", "-ERR value is out of range, must be positive\r\n", "");
    FX("zadd p 1 a 2 b 3 c", ":3\r\n", "n new 0 p; M 0 p; z zadd 0 p");
    FX("zmpop 2 nokey p min count 2", "*2\r\n$1\r\np\r\n*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n", "z zpopmin 0 p; M 0 p");
    FX("zmpop 1 p max", "*2\r\n$1\r\np\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n", "z zpopmax 0 p; M 0 p; g del 0 p");
    FX("zmpop 1 p max", "*-1\r\n", "");
    FX("zmpop 2 s p min", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "");
    FX("zadd p 1 a 2 b", ":2\r\n", "n new 0 p; M 0 p; z zadd 0 p");
    FX("bzpopmin nokey p 0", "*3\r\n$1\r\np\r\n$1\r\na\r\n$1\r\n1\r\n", "z zpopmin 0 p; M 0 p");
    FX("bzpopmax p 0", "*3\r\n$1\r\np\r\n$1\r\nb\r\n$1\r\n2\r\n", "z zpopmax 0 p; M 0 p; g del 0 p");
    FX("zadd p 1 a 2 b", ":2\r\n", "n new 0 p; M 0 p; z zadd 0 p");
    FX("bzmpop 0 1 p max count 5", "*2\r\n$1\r\np\r\n*2\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n", "z zpopmax 0 p; M 0 p; g del 0 p");
    FX("bzpopmin s 0", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "");
}

/* the STORE commands report their destination only: "new" when created, the signal and the
 * command's event; an empty result deletes an existing destination (signal, "del") */
static void test_store(void)
{
    FX("zadd a 1 x 2 y", ":2\r\n", "n new 0 a; M 0 a; z zadd 0 a");
    FX("zadd b 2 y 3 w", ":2\r\n", "n new 0 b; M 0 b; z zadd 0 b");
    FX("zunionstore d 2 a b", ":3\r\n", "n new 0 d; M 0 d; z zunionstore 0 d");
    FX("zunionstore d 2 a b weights 2 1 aggregate max", ":3\r\n", "M 0 d; z zunionstore 0 d");
    FX("zinterstore d 2 a b", ":1\r\n", "M 0 d; z zinterstore 0 d");
    FX("zdiffstore d 2 a b", ":1\r\n", "M 0 d; z zdiffstore 0 d");
    FX("zinterstore d 2 a nokey", ":0\r\n", "M 0 d; g del 0 d");
    FX("zinterstore d 2 a nokey", ":0\r\n", "");
    FX("zunionstore d 1 nokey", ":0\r\n", "");
    FX("zdiffstore d 1 a", ":2\r\n", "n new 0 d; M 0 d; z zdiffstore 0 d");
    FX("zdiffstore d 2 a a", ":0\r\n", "M 0 d; g del 0 d");
    FX("zunionstore d2 2 a b weights 1", "-ERR syntax error\r\n", "");
    FX("zunionstore d2 2 a s", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "");
    FX("zunionstore d2 0 a", "-ERR at least 1 input key is needed for 'zunionstore' command\r\n", "");
    FX("zrangestore d3 a 0 -1", ":2\r\n", "n new 0 d3; M 0 d3; z zrangestore 0 d3");
    FX("zrangestore d3 a 0 -1", ":2\r\n", "M 0 d3; z zrangestore 0 d3");
    FX("zrangestore d3 a 5 6", ":0\r\n", "M 0 d3; g del 0 d3");
    FX("zrangestore d3 a 5 6", ":0\r\n", "");
    FX("zrangestore d3 nokey 0 -1", ":0\r\n", "");
    FX("zrangestore d3 s 0 -1", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "");
    FX("zrangestore d3 b (2 +inf byscore", ":1\r\n", "n new 0 d3; M 0 d3; z zrangestore 0 d3");
    FX("zrangestore d3 a 0 -1 withscores", "-ERR syntax error\r\n", "");
    FX("zrangestore a a 0 0", ":1\r\n", "M 0 a; z zrangestore 0 a");
    FX("zunionstore s 1 b", ":2\r\n", "M 0 s; z zunionstore 0 s");
}
/* another database: the effects carry it */
static void test_other_db(void)
{
    fx_db = 3;
    FX("zadd k 1 a", ":1\r\n", "n new 3 k; M 3 k; z zadd 3 k");
    FX("zpopmax k", "*2\r\n$1\r\na\r\n$1\r\n1\r\n", "z zpopmax 3 k; M 3 k; g del 3 k");
    FX("zunionstore d 1 b", ":0\r\n", "");
    fx_db = 0;
}

/* a destination that expired is gone before the result goes in: the key is new again */
static void test_expired_destination(void)
{
    fx_run("zadd e 1 a");
    fx_run("zadd e2 1 a");
    fx_run("pexpire e 100");
    fx_run("pexpire e2 100");
    fx_now += 1000;
    FX("zunionstore e 1 b", ":2\r\n", "n new 0 e; M 0 e; z zunionstore 0 e");
    FX("zrangestore e2 b 0 0", ":1\r\n", "n new 0 e2; M 0 e2; z zrangestore 0 e2");
    fx_now = FX_NOW;
}

/* a blocking pop that finds nothing waits (or times out in MULTI) and reports nothing */
static void test_blocking_waits(void)
{
    fx_may_block = true;
    FX("bzpopmin nokey 0", "", "");
    CHECK(fx_blocked);
    FX("bzmpop 0 1 nokey min", "", "");
    CHECK(fx_blocked);
    fx_may_block = false;
    FX("bzpopmax nokey 0", "*-1\r\n", "");
    CHECK(!fx_blocked);
}

/* events are recorded only for the classes asked for; the signals always */
static void test_notify_classes(void)
{
    fx_sink.notify = NOTIFY_ZSET;
    FX("zadd c 1 a", ":1\r\n", "M 0 c; z zadd 0 c");
    FX("zrem c a", ":1\r\n", "z zrem 0 c; M 0 c");
    fx_sink.notify = NOTIFY_NEW | NOTIFY_GENERIC;
    FX("zadd c 1 a", ":1\r\n", "n new 0 c; M 0 c");
    FX("zpopmin c", "*2\r\n$1\r\na\r\n$1\r\n1\r\n", "M 0 c; g del 0 c");
    fx_sink.notify = 0;
    FX("zadd c 1 a", ":1\r\n", "M 0 c");
    fx_sink.notify = ~0u;
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
