/*
 * test_effects_set: what the set write handlers report (keys modified,
 * keyspace events), case by case, as Redis 7.0.15 does for the same
 * commands (effects_check.h says how; tests/compat/effects_oracle.py checks
 * these tables against a real redis-server).
 */
#include "effects_check.h"

static void test_set(void)
{
    /* SADD: only when a member was added */
    fx_reset();
    FX(":2\r\n", "n:new@0:s mod@0:s s:sadd@0:s", "sadd", "s", "a", "b");
    fx_reset();
    FX_RUN("sadd", "s", "a");
    FX(":1\r\n", "mod@0:s s:sadd@0:s", "sadd", "s", "a", "b");
    fx_reset();
    FX_RUN("sadd", "s", "a", "b");
    FX(":0\r\n", "", "sadd", "s", "b", "a");
    fx_reset();
    FX_RUN("set", "s", "x");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "sadd", "s", "a");
    fx_reset();
    fx_db = 5;
    FX(":2\r\n", "n:new@5:s mod@5:s s:sadd@5:s", "sadd", "s", "1", "2");
    /* SREM: only when a member went; "del" after it when the set emptied */
    fx_reset();
    FX(":0\r\n", "", "srem", "s", "a");
    fx_reset();
    FX_RUN("sadd", "s", "a", "b");
    FX(":0\r\n", "", "srem", "s", "c");
    fx_reset();
    FX_RUN("sadd", "s", "a", "b");
    FX(":1\r\n", "mod@0:s s:srem@0:s", "srem", "s", "a", "c");
    fx_reset();
    FX_RUN("sadd", "s", "a", "b");
    FX(":2\r\n", "mod@0:s s:srem@0:s g:del@0:s", "srem", "s", "a", "b", "c");
    fx_reset();
    FX_RUN("set", "s", "x");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "srem", "s", "a");
    /* SPOP: "spop", "del" when emptied, then the key modified */
    fx_reset();
    FX("$-1\r\n", "", "spop", "s");
    fx_reset();
    FX_RUN("sadd", "s", "a", "b");
    FX_STARTS("$1", "s:spop@0:s mod@0:s", "spop", "s");
    fx_reset();
    FX_RUN("sadd", "s", "a");
    FX("$1\r\na\r\n", "s:spop@0:s g:del@0:s mod@0:s", "spop", "s");
    fx_reset();
    FX_RUN("sadd", "s", "7");
    FX("$1\r\n7\r\n", "s:spop@0:s g:del@0:s mod@0:s", "spop", "s");
    fx_reset();
    FX_RUN("set", "s", "x");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "spop", "s");
    fx_reset();
    FX_RUN("sadd", "s", "a");
    FX("-ERR syntax error\r\n", "", "spop", "s", "1", "2");
    /* SPOP with a count: each of Redis's three ways */
    fx_reset();
    FX("*0\r\n", "", "spop", "s", "2");
    fx_reset();
    FX_RUN("sadd", "s", "a");
    FX("*0\r\n", "", "spop", "s", "0");
    fx_reset();
    FX_RUN("sadd", "s", "a");
    FX("-ERR value is out of range, must be positive\r\n", "", "spop", "s", "-1");
    fx_reset();
    FX_RUN("set", "s", "x");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "spop", "s", "2");
    fx_reset();
    FX_RUN("sadd", "s", "a", "b");
    FX_STARTS("*2", "s:spop@0:s g:del@0:s mod@0:s", "spop", "s", "5");
    fx_reset();
    FX_RUN("sadd", "s", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j");
    FX_STARTS("*2", "s:spop@0:s mod@0:s", "spop", "s", "2");
    fx_reset();
    FX_RUN("sadd", "s", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j");
    FX_STARTS("*9", "s:spop@0:s mod@0:s", "spop", "s", "9");
    fx_reset();
    FX_RUN("sadd", "s", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10");
    FX_STARTS("*9", "s:spop@0:s mod@0:s", "spop", "s", "9");
    /* SMOVE: "srem" on the source (and "del"), "new" for a new destination, "sadd" when it was added */
    fx_reset();
    FX(":0\r\n", "", "smove", "a", "b", "x");
    fx_reset();
    FX_RUN("sadd", "a", "y");
    FX(":0\r\n", "", "smove", "a", "b", "x");
    fx_reset();
    FX_RUN("sadd", "a", "x", "y");
    FX(":1\r\n", "s:srem@0:a n:new@0:b mod@0:a mod@0:b s:sadd@0:b", "smove", "a", "b", "x");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX_RUN("sadd", "b", "y");
    FX(":1\r\n", "s:srem@0:a g:del@0:a mod@0:a mod@0:b s:sadd@0:b", "smove", "a", "b", "x");
    fx_reset();
    FX_RUN("sadd", "a", "x", "y");
    FX_RUN("sadd", "b", "x");
    FX(":1\r\n", "s:srem@0:a mod@0:a", "smove", "a", "b", "x");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX(":1\r\n", "s:srem@0:a g:del@0:a n:new@0:b mod@0:a mod@0:b s:sadd@0:b", "smove", "a", "b", "x");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX(":1\r\n", "", "smove", "a", "a", "x");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX(":0\r\n", "", "smove", "a", "a", "y");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX_RUN("set", "b", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "smove", "a", "b", "x");
    fx_reset();
    FX_RUN("set", "a", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "smove", "a", "b", "x");
    /* the STORE forms: the destination alone; "del" for an empty result when it existed */
    fx_reset();
    FX_RUN("sadd", "a", "x", "y");
    FX_RUN("sadd", "b", "y");
    FX(":1\r\n", "n:new@0:d mod@0:d s:sinterstore@0:d", "sinterstore", "d", "a", "b");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX_RUN("set", "d", "v");
    FX(":1\r\n", "mod@0:d s:sinterstore@0:d", "sinterstore", "d", "a", "a");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX_RUN("sadd", "b", "y");
    FX(":0\r\n", "", "sinterstore", "d", "a", "b");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX_RUN("sadd", "b", "y");
    FX_RUN("sadd", "d", "z");
    FX(":0\r\n", "mod@0:d g:del@0:d", "sinterstore", "d", "a", "b");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX_RUN("sadd", "d", "z");
    FX(":0\r\n", "mod@0:d g:del@0:d", "sinterstore", "d", "a", "nokey");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX(":0\r\n", "", "sinterstore", "d", "a", "nokey");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX_RUN("set", "b", "v");
    FX_RUN("sadd", "d", "z");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "sinterstore", "d", "a", "b");
    fx_reset();
    FX_RUN("sadd", "a", "x", "y");
    FX_RUN("sadd", "b", "y");
    FX(":1\r\n", "mod@0:a s:sinterstore@0:a", "sinterstore", "a", "a", "b");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX_RUN("sadd", "b", "y");
    FX(":2\r\n", "n:new@0:d mod@0:d s:sunionstore@0:d", "sunionstore", "d", "a", "b");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX_RUN("sadd", "d", "z");
    FX(":1\r\n", "mod@0:d s:sunionstore@0:d", "sunionstore", "d", "a");
    fx_reset();
    FX_RUN("sadd", "d", "z");
    FX(":0\r\n", "mod@0:d g:del@0:d", "sunionstore", "d", "n1", "n2");
    fx_reset();
    FX(":0\r\n", "", "sunionstore", "d", "n1", "n2");
    fx_reset();
    FX_RUN("set", "a", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "sunionstore", "d", "a");
    fx_reset();
    FX_RUN("sadd", "a", "x", "y");
    FX_RUN("sadd", "b", "y");
    FX_RUN("sadd", "d", "z");
    FX(":1\r\n", "mod@0:d s:sdiffstore@0:d", "sdiffstore", "d", "a", "b");
    fx_reset();
    FX_RUN("sadd", "a", "x", "y");
    FX_RUN("sadd", "b", "y");
    FX(":1\r\n", "n:new@0:d mod@0:d s:sdiffstore@0:d", "sdiffstore", "d", "a", "b");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX_RUN("sadd", "b", "x");
    FX(":0\r\n", "", "sdiffstore", "d", "a", "b");
    fx_reset();
    FX_RUN("sadd", "a", "x");
    FX_RUN("sadd", "b", "x");
    FX_RUN("sadd", "d", "z");
    FX(":0\r\n", "mod@0:d g:del@0:d", "sdiffstore", "d", "a", "b");
    fx_reset();
    FX_RUN("sadd", "a", "x", "y");
    FX_RUN("sadd", "b", "y");
    FX(":1\r\n", "mod@0:a s:sdiffstore@0:a", "sdiffstore", "a", "a", "b");
    fx_reset();
    fx_db = 2;
    FX_RUN("sadd", "a", "x");
    FX(":1\r\n", "n:new@2:d mod@2:d s:sunionstore@2:d", "sunionstore", "d", "a");
}

int main(void)
{
    fx_setup();
    test_set();
    fx_teardown();
    return check_done("test_effects_set");
}
