/*
 * test_effects_hash: what the hash write handlers report (keys modified,
 * keyspace events), case by case, as Redis 7.0.15 does for the same
 * commands (effects_check.h says how; tests/compat/effects_oracle.py checks
 * these tables against a real redis-server).
 */
#include "effects_check.h"

static void test_hash(void)
{
    /* HSET HMSET: "hset" whenever it ran, even when no field changed; "new" first for a new key */
    fx_reset();
    FX(":1\r\n", "n:new@0:h mod@0:h h:hset@0:h", "hset", "h", "f", "v");
    fx_reset();
    FX_RUN("hset", "h", "f", "v");
    FX(":1\r\n", "mod@0:h h:hset@0:h", "hset", "h", "g", "w", "f", "v2");
    fx_reset();
    FX_RUN("hset", "h", "f", "v");
    FX(":0\r\n", "mod@0:h h:hset@0:h", "hset", "h", "f", "v");
    fx_reset();
    FX("+OK\r\n", "n:new@0:h mod@0:h h:hset@0:h", "hmset", "h", "f", "v", "g", "w");
    fx_reset();
    FX_RUN("hset", "h", "f", "v");
    FX("+OK\r\n", "mod@0:h h:hset@0:h", "hmset", "h", "f", "w");
    fx_reset();
    FX("-ERR wrong number of arguments for 'hset' command\r\n", "", "hset", "h", "f", "v", "g");
    fx_reset();
    FX_RUN("set", "h", "x");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "hset", "h", "f", "v");
    fx_reset();
    FX_RUN("set", "h", "x");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "hmset", "h", "f", "v");
    fx_reset();
    fx_db = 3;
    FX(":1\r\n", "n:new@3:h mod@3:h h:hset@3:h", "hset", "h", "f", "v");
    /* HSETNX: nothing when the field is there */
    fx_reset();
    FX(":1\r\n", "n:new@0:h mod@0:h h:hset@0:h", "hsetnx", "h", "f", "v");
    fx_reset();
    FX_RUN("hset", "h", "f", "v");
    FX(":1\r\n", "mod@0:h h:hset@0:h", "hsetnx", "h", "g", "w");
    fx_reset();
    FX_RUN("hset", "h", "f", "v");
    FX(":0\r\n", "", "hsetnx", "h", "f", "w");
    fx_reset();
    FX_RUN("set", "h", "x");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "hsetnx", "h", "f", "v");
    /* HDEL: "hdel", then "del" when the hash emptied */
    fx_reset();
    FX(":0\r\n", "", "hdel", "h", "f");
    fx_reset();
    FX_RUN("hset", "h", "f", "v");
    FX(":0\r\n", "", "hdel", "h", "g");
    fx_reset();
    FX_RUN("hset", "h", "f", "v", "g", "w");
    FX(":1\r\n", "mod@0:h h:hdel@0:h", "hdel", "h", "f");
    fx_reset();
    FX_RUN("hset", "h", "f", "v", "g", "w");
    FX(":2\r\n", "mod@0:h h:hdel@0:h g:del@0:h", "hdel", "h", "f", "x", "g");
    fx_reset();
    FX_RUN("set", "h", "x");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "hdel", "h", "f");
    /* HINCRBY */
    fx_reset();
    FX(":5\r\n", "n:new@0:h mod@0:h h:hincrby@0:h", "hincrby", "h", "f", "5");
    fx_reset();
    FX_RUN("hset", "h", "f", "1");
    FX(":-2\r\n", "mod@0:h h:hincrby@0:h", "hincrby", "h", "f", "-3");
    fx_reset();
    FX_RUN("hset", "h", "g", "1");
    FX(":2\r\n", "mod@0:h h:hincrby@0:h", "hincrby", "h", "f", "2");
    fx_reset();
    FX("-ERR value is not an integer or out of range\r\n", "", "hincrby", "h", "f", "x");
    fx_reset();
    FX_RUN("hset", "h", "f", "x");
    FX("-ERR hash value is not an integer\r\n", "", "hincrby", "h", "f", "1");
    fx_reset();
    FX_RUN("hset", "h", "f", "9223372036854775807");
    FX("-ERR increment or decrement would overflow\r\n", "", "hincrby", "h", "f", "1");
    fx_reset();
    FX_RUN("set", "h", "x");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "hincrby", "h", "f", "1");
    /* HINCRBYFLOAT */
    fx_reset();
    FX("$3\r\n1.5\r\n", "n:new@0:h mod@0:h h:hincrbyfloat@0:h", "hincrbyfloat", "h", "f", "1.5");
    fx_reset();
    FX_RUN("hset", "h", "f", "1");
    FX("$3\r\n1.5\r\n", "mod@0:h h:hincrbyfloat@0:h", "hincrbyfloat", "h", "f", "0.5");
    fx_reset();
    FX("-ERR value is not a valid float\r\n", "", "hincrbyfloat", "h", "f", "x");
    fx_reset();
    FX("-ERR value is NaN or Infinity\r\n", "", "hincrbyfloat", "h", "f", "inf");
    fx_reset();
    FX_RUN("hset", "h", "f", "x");
    FX("-ERR hash value is not a float\r\n", "", "hincrbyfloat", "h", "f", "1");
    fx_reset();
    FX_RUN("hset", "h", "f", "1e4932");
    FX("-ERR increment would produce NaN or Infinity\r\n", "", "hincrbyfloat", "h", "f", "1e4932");
    fx_reset();
    FX_RUN("set", "h", "x");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "hincrbyfloat", "h", "f", "1");
}

int main(void)
{
    fx_setup();
    test_hash();
    fx_teardown();
    return check_done("test_effects_hash");
}
