/*
 * test_effects_hash: what the hash write handlers report (keys modified,
 * keyspace events), case by case, as Redis 7.0.15 does for the same
 * commands (effects_cases.h says how; tests/compat/effects_oracle.py checks
 * these tables against a real redis-server).
 */
#include "effects_cases.h"

static const struct fx_case hash_cases[] = {
    /* HSET HMSET: "hset" whenever it ran, even when no field changed; "new" first for a new key */
    FX(0, "", "hset h f v", ":1", "n:new:h M:h h:hset:h"),
    FX(0, "hset h f v", "hset h g w f v2", ":1", "M:h h:hset:h"),
    FX(0, "hset h f v", "hset h f v", ":0", "M:h h:hset:h"),
    FX(0, "", "hmset h f v g w", "+OK", "n:new:h M:h h:hset:h"),
    FX(0, "hset h f v", "hmset h f w", "+OK", "M:h h:hset:h"),
    FX(0, "", "hset h f v g", "-ERR wrong number of arguments", ""),
    FX(0, "set h x", "hset h f v", "-WRONGTYPE", ""),
    FX(0, "set h x", "hmset h f v", "-WRONGTYPE", ""),
    FX(3, "", "hset h f v", ":1", "n:new:h M:h h:hset:h"),
    /* HSETNX: nothing when the field is there */
    FX(0, "", "hsetnx h f v", ":1", "n:new:h M:h h:hset:h"),
    FX(0, "hset h f v", "hsetnx h g w", ":1", "M:h h:hset:h"),
    FX(0, "hset h f v", "hsetnx h f w", ":0", ""),
    FX(0, "set h x", "hsetnx h f v", "-WRONGTYPE", ""),
    /* HDEL: "hdel", then "del" when the hash emptied */
    FX(0, "", "hdel h f", ":0", ""),
    FX(0, "hset h f v", "hdel h g", ":0", ""),
    FX(0, "hset h f v g w", "hdel h f", ":1", "M:h h:hdel:h"),
    FX(0, "hset h f v g w", "hdel h f x g", ":2", "M:h h:hdel:h g:del:h"),
    FX(0, "set h x", "hdel h f", "-WRONGTYPE", ""),
    /* HINCRBY */
    FX(0, "", "hincrby h f 5", ":5", "n:new:h M:h h:hincrby:h"),
    FX(0, "hset h f 1", "hincrby h f -3", ":-2", "M:h h:hincrby:h"),
    FX(0, "hset h g 1", "hincrby h f 2", ":2", "M:h h:hincrby:h"),
    FX(0, "", "hincrby h f x", "-ERR value is not an integer", ""),
    FX(0, "hset h f x", "hincrby h f 1", "-ERR hash value is not an integer", ""),
    FX(0, "hset h f 9223372036854775807", "hincrby h f 1", "-ERR increment or decrement would overflow", ""),
    FX(0, "set h x", "hincrby h f 1", "-WRONGTYPE", ""),
    /* HINCRBYFLOAT */
    FX(0, "", "hincrbyfloat h f 1.5", "$3\r\n1.5", "n:new:h M:h h:hincrbyfloat:h"),
    FX(0, "hset h f 1", "hincrbyfloat h f 0.5", "$3\r\n1.5", "M:h h:hincrbyfloat:h"),
    FX(0, "", "hincrbyfloat h f x", "-ERR value is not a valid float", ""),
    FX(0, "", "hincrbyfloat h f inf", "-ERR value is NaN or Infinity", ""),
    FX(0, "hset h f x", "hincrbyfloat h f 1", "-ERR hash value is not a float", ""),
    FX(0, "hset h f 1e4932", "hincrbyfloat h f 1e4932", "-ERR increment would produce NaN or Infinity", ""),
    FX(0, "set h x", "hincrbyfloat h f 1", "-WRONGTYPE", ""),
};

int main(void)
{
    fx_setup();
    fx_check_cases(hash_cases, sizeof hash_cases / sizeof hash_cases[0]);
    fx_teardown();
    return check_done("test_effects_hash");
}
