/*
 * test_effects_list: what the list write handlers report (keys modified,
 * keyspace events), the blocking ones included when they pop at once (a
 * blocked client is served by running its handler again, core/block.c),
 * case by case, as Redis 7.0.15 does for the same commands
 * (effects_check.h says how; tests/compat/effects_oracle.py checks these
 * tables against a real redis-server).
 */
#include "effects_check.h"

static void test_list(void)
{
    /* pushes: "new" first for a new key, then the key and "lpush"/"rpush" */
    fx_reset();
    FX(":2\r\n", "n:new@0:l mod@0:l l:lpush@0:l", "lpush", "l", "a", "b");
    fx_reset();
    FX_RUN("rpush", "l", "a");
    FX(":2\r\n", "mod@0:l l:rpush@0:l", "rpush", "l", "b");
    fx_reset();
    FX_RUN("set", "l", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "lpush", "l", "a");
    fx_reset();
    FX(":0\r\n", "", "lpushx", "l", "a");
    fx_reset();
    FX(":0\r\n", "", "rpushx", "l", "a");
    fx_reset();
    FX_RUN("rpush", "l", "a");
    FX(":3\r\n", "mod@0:l l:rpush@0:l", "rpushx", "l", "b", "c");
    fx_reset();
    FX_RUN("rpush", "l", "a");
    FX(":2\r\n", "mod@0:l l:lpush@0:l", "lpushx", "l", "b");
    fx_reset();
    FX_RUN("set", "l", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "lpushx", "l", "a");
    fx_reset();
    fx_db = 4;
    FX(":1\r\n", "n:new@4:l mod@4:l l:rpush@4:l", "rpush", "l", "a");
    /* LINSERT: only when the pivot was there */
    fx_reset();
    FX(":0\r\n", "", "linsert", "l", "before", "p", "x");
    fx_reset();
    FX_RUN("rpush", "l", "a");
    FX(":-1\r\n", "", "linsert", "l", "before", "p", "x");
    fx_reset();
    FX_RUN("rpush", "l", "a", "p");
    FX(":3\r\n", "mod@0:l l:linsert@0:l", "linsert", "l", "after", "p", "x");
    fx_reset();
    FX_RUN("rpush", "l", "a");
    FX("-ERR syntax error\r\n", "", "linsert", "l", "middle", "a", "x");
    fx_reset();
    FX_RUN("set", "l", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "linsert", "l", "before", "a", "x");
    /* LSET */
    fx_reset();
    FX_RUN("rpush", "l", "a", "b");
    FX("+OK\r\n", "mod@0:l l:lset@0:l", "lset", "l", "1", "x");
    fx_reset();
    FX_RUN("rpush", "l", "a");
    FX("-ERR index out of range\r\n", "", "lset", "l", "5", "x");
    fx_reset();
    FX("-ERR no such key\r\n", "", "lset", "l", "0", "x");
    fx_reset();
    FX_RUN("rpush", "l", "a");
    FX("-ERR value is not an integer or out of range\r\n", "", "lset", "l", "x", "x");
    fx_reset();
    FX_RUN("set", "l", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "lset", "l", "0", "x");
    /* LREM: "lrem" when it removed, "del" after it when the list emptied */
    fx_reset();
    FX(":0\r\n", "", "lrem", "l", "0", "a");
    fx_reset();
    FX_RUN("rpush", "l", "a", "b");
    FX(":0\r\n", "", "lrem", "l", "0", "c");
    fx_reset();
    FX_RUN("rpush", "l", "a", "b", "a");
    FX(":2\r\n", "mod@0:l l:lrem@0:l", "lrem", "l", "0", "a");
    fx_reset();
    FX_RUN("rpush", "l", "a", "b", "a");
    FX(":1\r\n", "mod@0:l l:lrem@0:l", "lrem", "l", "-1", "a");
    fx_reset();
    FX_RUN("rpush", "l", "a", "a");
    FX(":2\r\n", "mod@0:l l:lrem@0:l g:del@0:l", "lrem", "l", "0", "a");
    fx_reset();
    FX_RUN("set", "l", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "lrem", "l", "0", "a");
    /* LTRIM: "ltrim" whenever the list exists, even if nothing went */
    fx_reset();
    FX("+OK\r\n", "", "ltrim", "l", "0", "1");
    fx_reset();
    FX_RUN("rpush", "l", "a", "b");
    FX("+OK\r\n", "l:ltrim@0:l mod@0:l", "ltrim", "l", "0", "-1");
    fx_reset();
    FX_RUN("rpush", "l", "a", "b", "c");
    FX("+OK\r\n", "l:ltrim@0:l mod@0:l", "ltrim", "l", "1", "1");
    fx_reset();
    FX_RUN("rpush", "l", "a", "b");
    FX("+OK\r\n", "l:ltrim@0:l g:del@0:l mod@0:l", "ltrim", "l", "5", "10");
    fx_reset();
    FX_RUN("rpush", "l", "a");
    FX("-ERR value is not an integer or out of range\r\n", "", "ltrim", "l", "x", "1");
    fx_reset();
    FX_RUN("set", "l", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "ltrim", "l", "0", "1");
    /* LPOP RPOP, with and without a count */
    fx_reset();
    FX_RUN("rpush", "l", "a", "b");
    FX("$1\r\na\r\n", "l:lpop@0:l mod@0:l", "lpop", "l");
    fx_reset();
    FX_RUN("rpush", "l", "a");
    FX("$1\r\na\r\n", "l:rpop@0:l g:del@0:l mod@0:l", "rpop", "l");
    fx_reset();
    FX("$-1\r\n", "", "lpop", "l");
    fx_reset();
    FX("*-1\r\n", "", "lpop", "l", "2");
    fx_reset();
    FX_RUN("rpush", "l", "a");
    FX("*0\r\n", "", "lpop", "l", "0");
    fx_reset();
    FX_RUN("rpush", "l", "a", "b", "c");
    FX("*2\r\n$1\r\na\r\n$1\r\nb\r\n", "l:lpop@0:l mod@0:l", "lpop", "l", "2");
    fx_reset();
    FX_RUN("rpush", "l", "a", "b");
    FX("*2\r\n$1\r\nb\r\n$1\r\na\r\n", "l:rpop@0:l g:del@0:l mod@0:l", "rpop", "l", "5");
    fx_reset();
    FX_RUN("rpush", "l", "a");
    FX("-ERR value is out of range, must be positive\r\n", "", "lpop", "l", "-1");
    fx_reset();
    FX_RUN("rpush", "l", "a");
    FX("-ERR wrong number of arguments for 'lpop' command\r\n", "", "lpop", "l", "1", "2");
    fx_reset();
    FX_RUN("set", "l", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "rpop", "l");
    /* LMOVE RPOPLPUSH: the push on the destination first, then the pop on the source */
    fx_reset();
    FX_RUN("rpush", "s", "a", "b");
    FX("$1\r\na\r\n", "n:new@0:d mod@0:d l:rpush@0:d l:lpop@0:s mod@0:s", "lmove", "s", "d", "left", "right");
    fx_reset();
    FX_RUN("rpush", "s", "a");
    FX_RUN("rpush", "d", "b");
    FX("$1\r\na\r\n", "mod@0:d l:lpush@0:d l:rpop@0:s g:del@0:s mod@0:s", "lmove", "s", "d", "right", "left");
    fx_reset();
    FX_RUN("rpush", "l", "a");
    FX("$1\r\na\r\n", "mod@0:l l:rpush@0:l l:lpop@0:l mod@0:l", "lmove", "l", "l", "left", "right");
    fx_reset();
    FX_RUN("rpush", "l", "a", "b");
    FX("$1\r\nb\r\n", "mod@0:l l:lpush@0:l l:rpop@0:l mod@0:l", "lmove", "l", "l", "right", "left");
    fx_reset();
    FX_RUN("rpush", "s", "a", "b");
    FX("$1\r\nb\r\n", "n:new@0:d mod@0:d l:lpush@0:d l:rpop@0:s mod@0:s", "rpoplpush", "s", "d");
    fx_reset();
    FX("$-1\r\n", "", "lmove", "s", "d", "left", "left");
    fx_reset();
    FX("$-1\r\n", "", "rpoplpush", "s", "d");
    fx_reset();
    FX_RUN("rpush", "s", "a");
    FX_RUN("set", "d", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "lmove", "s", "d", "left", "left");
    fx_reset();
    FX_RUN("set", "s", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "rpoplpush", "s", "d");
    fx_reset();
    FX_RUN("rpush", "s", "a");
    FX("-ERR syntax error\r\n", "", "lmove", "s", "d", "up", "left");
    /* LMPOP: the key it popped from */
    fx_reset();
    FX_RUN("rpush", "a", "x", "y");
    FX("*2\r\n$1\r\na\r\n*2\r\n$1\r\nx\r\n$1\r\ny\r\n", "l:lpop@0:a g:del@0:a mod@0:a", "lmpop", "2", "nokey", "a", "left", "count", "5");
    fx_reset();
    FX_RUN("rpush", "a", "x");
    FX_RUN("rpush", "b", "y", "z");
    FX("*2\r\n$1\r\na\r\n*1\r\n$1\r\nx\r\n", "l:rpop@0:a g:del@0:a mod@0:a", "lmpop", "2", "a", "b", "right");
    fx_reset();
    FX_RUN("rpush", "b", "y", "z");
    FX("*2\r\n$1\r\nb\r\n*1\r\n$1\r\nz\r\n", "l:rpop@0:b mod@0:b", "lmpop", "2", "a", "b", "right");
    fx_reset();
    FX("*-1\r\n", "", "lmpop", "2", "a", "b", "right");
    fx_reset();
    FX_RUN("set", "a", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "lmpop", "1", "a", "left");
    fx_reset();
    FX_RUN("rpush", "a", "x");
    FX("-ERR count should be greater than 0\r\n", "", "lmpop", "1", "a", "left", "count", "0");
    /* the blocking forms when they can pop at once: as the pops above */
    fx_reset();
    FX_RUN("rpush", "b", "x", "y");
    FX("*2\r\n$1\r\nb\r\n$1\r\nx\r\n", "l:lpop@0:b mod@0:b", "blpop", "a", "b", "0");
    fx_reset();
    FX_RUN("rpush", "a", "x");
    FX("*2\r\n$1\r\na\r\n$1\r\nx\r\n", "l:rpop@0:a g:del@0:a mod@0:a", "brpop", "a", "0");
    fx_reset();
    FX("*-1\r\n", "", "blpop", "a", "0.01");
    fx_reset();
    FX_RUN("set", "a", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "blpop", "a", "0");
    fx_reset();
    FX_RUN("rpush", "a", "x");
    FX("-ERR timeout is negative\r\n", "", "blpop", "a", "-1");
    fx_reset();
    FX_RUN("rpush", "s", "a");
    FX("$1\r\na\r\n", "n:new@0:d mod@0:d l:lpush@0:d l:rpop@0:s g:del@0:s mod@0:s", "blmove", "s", "d", "right", "left", "0");
    fx_reset();
    FX_RUN("rpush", "s", "a", "b");
    FX("$1\r\nb\r\n", "mod@0:s l:lpush@0:s l:rpop@0:s mod@0:s", "brpoplpush", "s", "s", "0");
    fx_reset();
    FX_RUN("rpush", "s", "a");
    FX_RUN("set", "d", "v");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "blmove", "s", "d", "left", "left", "0");
    fx_reset();
    FX_RUN("rpush", "a", "x", "y");
    FX("*2\r\n$1\r\na\r\n*1\r\n$1\r\ny\r\n", "l:rpop@0:a mod@0:a", "blmpop", "0", "1", "a", "right", "count", "1");
    fx_reset();
    FX_RUN("rpush", "a", "x", "y");
    FX("*2\r\n$1\r\na\r\n*2\r\n$1\r\nx\r\n$1\r\ny\r\n", "l:lpop@0:a g:del@0:a mod@0:a", "blmpop", "0", "1", "a", "left", "count", "3");
    fx_reset();
    FX("*-1\r\n", "", "blmpop", "0.01", "1", "a", "left");
}

int main(void)
{
    fx_setup();
    test_list();
    fx_teardown();
    return check_done("test_effects_list");
}
