/*
 * test_effects_bitops: what the bitmap commands (server/cmd/bitops.c)
 * report they did -- modified keys and keyspace events, in order -- driven
 * directly on one store (effects_check.h).  The events and their order are
 * redis-server 7.0.15's for the same commands (effects_oracle.py checks
 * them), the modified keys where its bitops.c calls signalModifiedKey
 * (setKey included).
 */
#include "effects_check.h"

static void test_setbit(void)
{
    fx_reset();
    FX(":0\r\n", "n:new@0:b mod@0:b $:setbit@0:b", "setbit", "b", "7", "1");
    FX(":1\r\n", "", "setbit", "b", "7", "1"); /* no change */
    FX(":1\r\n", "mod@0:b $:setbit@0:b", "setbit", "b", "7", "0");
    FX(":0\r\n", "mod@0:b $:setbit@0:b", "setbit", "b", "100", "0"); /* grown */
    FX(":0\r\n", "", "setbit", "b", "100", "0");
    FX("-ERR bit offset is not an integer or out of range\r\n", "", "setbit", "b", "-1", "1");
    FX("-ERR bit offset is not an integer or out of range\r\n", "", "setbit", "b", "4294967296", "1");
    FX("-ERR bit is not an integer or out of range\r\n", "", "setbit", "b", "1", "2");
    FX_RUN("set", "n", "123");
    FX(":1\r\n", "mod@0:n $:setbit@0:n", "setbit", "n", "7", "0");
    FX("$3\r\n023\r\n", "", "get", "n");
    FX_RUN("rpush", "l", "a");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "setbit", "l", "0", "1");
    fx_db = 3;
    FX(":0\r\n", "n:new@3:b mod@3:b $:setbit@3:b", "setbit", "b", "0", "1");
}

static void test_bitfield(void)
{
    fx_reset();
    FX("*2\r\n:0\r\n:0\r\n", "n:new@0:f mod@0:f $:setbit@0:f", "bitfield", "f", "set", "u8", "0", "1", "set", "u8",
       "8", "2");
    FX("*1\r\n:1\r\n", "", "bitfield", "f", "set", "u8", "0", "1"); /* the same value */
    FX("*1\r\n:1\r\n", "", "bitfield", "f", "get", "u8", "0");
    FX("*1\r\n:1\r\n", "", "bitfield_ro", "f", "get", "u8", "0");
    FX("*1\r\n$-1\r\n", "", "bitfield", "f", "overflow", "fail", "incrby", "u8", "0", "255");
    /* a failed write on a missing key: created, nothing else */
    FX("*1\r\n$-1\r\n", "n:new@0:g", "bitfield", "g", "overflow", "fail", "incrby", "u8", "0", "300");
    FX("$1\r\n\x00\r\n", "", "get", "g");
    /* a failed write that grew the string: no change counted */
    FX("*1\r\n$-1\r\n", "", "bitfield", "f", "overflow", "fail", "incrby", "u8", "64", "300");
    FX("*2\r\n:255\r\n:255\r\n", "mod@0:f $:setbit@0:f", "bitfield", "f", "overflow", "sat", "incrby", "u8", "0",
       "255", "incrby", "u8", "0", "255");
    FX("-ERR BITFIELD_RO only supports the GET subcommand\r\n", "", "bitfield_ro", "f", "set", "u8", "0", "1");
    FX("-ERR syntax error\r\n", "", "bitfield", "f", "foo");
    FX_RUN("rpush", "l", "a");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "bitfield", "l", "set", "u8",
       "0", "1");
}

static void test_bitop(void)
{
    fx_reset();
    FX_RUN("set", "a", "\x0f");
    FX_RUN("set", "c", "\xf0");
    FX(":1\r\n", "n:new@0:d mod@0:d $:set@0:d", "bitop", "or", "d", "a", "c");
    FX(":1\r\n", "mod@0:d $:set@0:d", "bitop", "and", "d", "a", "c");
    FX(":1\r\n", "mod@0:d $:set@0:d", "bitop", "not", "d", "a");
    FX(":0\r\n", "mod@0:d g:del@0:d", "bitop", "and", "d", "nokey1", "nokey2");
    FX(":0\r\n", "", "bitop", "and", "d", "nokey1", "nokey2");
    FX(":1\r\n", "mod@0:a $:set@0:a", "bitop", "xor", "a", "a", "c"); /* the destination a source */
    FX("-ERR BITOP NOT must be called with a single source key.\r\n", "", "bitop", "not", "d", "a", "c");
    FX("-ERR syntax error\r\n", "", "bitop", "nand", "d", "a");
    FX_RUN("rpush", "l", "a");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "bitop", "and", "d", "a", "l");
    FX(":1\r\n", "mod@0:l $:set@0:l", "bitop", "or", "l", "a"); /* another type replaced */
}

/* reads report nothing */
static void test_reads(void)
{
    fx_reset();
    FX_RUN("set", "k", "foobar");
    FX(":1\r\n", "", "getbit", "k", "1");
    FX(":26\r\n", "", "bitcount", "k");
    FX(":6\r\n", "", "bitcount", "k", "1", "1");
    FX(":1\r\n", "", "bitpos", "k", "1");
    FX(":0\r\n", "", "bitpos", "k", "0");
}

int main(void)
{
    fx_setup();
    test_setbit();
    test_bitfield();
    test_bitop();
    test_reads();
    fx_teardown();
    return check_done("test_effects_bitops");
}
