/*
 * test_effects_hyperloglog: what the HyperLogLog commands (server/cmd/
 * hyperloglog.c) report they did -- modified keys and keyspace events, in
 * order -- driven directly on one store (effects_check.h).  The events and
 * their order are redis-server 7.0.15's (notify-keyspace-events KAn), the
 * modified keys where its hyperloglog.c calls signalModifiedKey.
 */
#include "effects_check.h"

static void test_pfadd(void)
{
    fx_reset();
    FX(":1\r\n", "n:new@0:h mod@0:h $:pfadd@0:h", "pfadd", "h");
    FX(":0\r\n", "", "pfadd", "h");
    FX(":1\r\n", "mod@0:h $:pfadd@0:h", "pfadd", "h", "a", "b", "c");
    FX(":0\r\n", "", "pfadd", "h", "a", "b", "c");
    FX(":1\r\n", "n:new@0:h2 mod@0:h2 $:pfadd@0:h2", "pfadd", "h2", "x");
    FX_RUN("set", "s", "foo");
    FX("-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n", "", "pfadd", "s", "a");
    FX_RUN("rpush", "l", "a");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "pfadd", "l", "a");
    fx_db = 3;
    FX(":1\r\n", "n:new@3:h mod@3:h $:pfadd@3:h", "pfadd", "h", "a");
}

static void test_pfcount(void)
{
    fx_reset();
    FX(":0\r\n", "", "pfcount", "h");
    FX_RUN("pfadd", "h", "a", "b", "c");
    FX(":3\r\n", "mod@0:h", "pfcount", "h"); /* the count stored in the header */
    FX(":3\r\n", "", "pfcount", "h");
    FX_RUN("pfadd", "h2", "c", "d");
    FX(":4\r\n", "", "pfcount", "h", "h2", "nosuch");
    FX(":2\r\n", "mod@0:h2", "pfcount", "h2");
    FX_RUN("set", "s", "foo");
    FX("-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n", "", "pfcount", "s");
    FX("-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n", "", "pfcount", "h", "s");
}

static void test_pfmerge(void)
{
    fx_reset();
    FX_RUN("pfadd", "a", "1", "2");
    FX_RUN("pfadd", "b", "3");
    FX("+OK\r\n", "n:new@0:d mod@0:d $:pfadd@0:d", "pfmerge", "d", "a", "b");
    FX("+OK\r\n", "mod@0:d $:pfadd@0:d", "pfmerge", "d", "a");
    FX("+OK\r\n", "mod@0:d $:pfadd@0:d", "pfmerge", "d");
    FX("+OK\r\n", "n:new@0:e mod@0:e $:pfadd@0:e", "pfmerge", "e");
    FX(":3\r\n", "mod@0:d", "pfcount", "d");
    FX_RUN("set", "s", "foo");
    FX("-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n", "", "pfmerge", "d", "s");
    FX("-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n", "", "pfmerge", "s", "a");
}

int main(void)
{
    fx_setup();
    test_pfadd();
    test_pfcount();
    test_pfmerge();
    fx_teardown();
    return check_done("test_effects_hyperloglog");
}
