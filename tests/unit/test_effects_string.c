/*
 * test_effects_string: what the string commands (server/cmd/string.c)
 * report they did -- modified keys and keyspace events, in order -- driven
 * directly on one store (effects_check.h).  The events and their order are
 * redis-server 7.0.15's for the same commands (notify-keyspace-events KAn,
 * psubscribe __keyspace@*__:*), the modified keys where its t_string.c calls
 * signalModifiedKey (setKey included).
 */
#include "effects_check.h"

static void test_set(void)
{
    fx_reset();
    FX("+OK\r\n", "n:new@0:k mod@0:k $:set@0:k", "set", "k", "v");
    FX("+OK\r\n", "mod@0:k $:set@0:k", "set", "k", "v2");
    FX("$-1\r\n", "", "set", "k", "v3", "nx");
    FX("+OK\r\n", "mod@0:k $:set@0:k", "set", "k", "v4", "xx");
    FX("$-1\r\n", "", "set", "nk", "v", "xx");
    FX("$2\r\nv4\r\n", "mod@0:k $:set@0:k", "set", "k", "v5", "get");
    FX("$-1\r\n", "n:new@0:nk2 mod@0:nk2 $:set@0:nk2", "set", "nk2", "v", "get");
    FX("$2\r\nv5\r\n", "", "set", "k", "v6", "nx", "get");
    FX("+OK\r\n", "mod@0:k $:set@0:k g:expire@0:k", "set", "k", "v", "ex", "100");
    FX("$1\r\nv\r\n", "mod@0:k $:set@0:k g:expire@0:k", "set", "k", "v", "px", "100000", "get");
    FX("+OK\r\n", "mod@0:k $:set@0:k", "set", "k", "v", "keepttl");
    /* an absolute time in the past: set and expire, the key goes when it is next looked at */
    FX("+OK\r\n", "mod@0:k $:set@0:k g:expire@0:k", "set", "k", "v", "exat", "1");
    FX("+OK\r\n", "n:new@0:k mod@0:k $:set@0:k g:expire@0:k", "set", "k", "v", "pxat", "1");
    /* errors: nothing */
    FX_RUN("rpush", "l", "a");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "set", "l", "v", "get");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "set", "l", "v", "nx", "get");
    FX("-ERR syntax error\r\n", "", "set", "k", "v", "nx", "xx");
    FX("-ERR invalid expire time in 'set' command\r\n", "", "set", "k", "v", "ex", "0");
    FX("-ERR value is not an integer or out of range\r\n", "", "set", "k", "v", "ex", "x");
    /* a plain SET over another type replaces it */
    FX("+OK\r\n", "mod@0:l $:set@0:l", "set", "l", "v");
    /* another database */
    fx_db = 5;
    FX("+OK\r\n", "n:new@5:k mod@5:k $:set@5:k", "set", "k", "v");
}

static void test_setnx_setex_getset(void)
{
    fx_reset();
    FX(":1\r\n", "n:new@0:k mod@0:k $:set@0:k", "setnx", "k", "v");
    FX(":0\r\n", "", "setnx", "k", "v");
    FX("+OK\r\n", "mod@0:k $:set@0:k g:expire@0:k", "setex", "k", "100", "v");
    FX("+OK\r\n", "n:new@0:k2 mod@0:k2 $:set@0:k2 g:expire@0:k2", "psetex", "k2", "100000", "v");
    FX("-ERR invalid expire time in 'setex' command\r\n", "", "setex", "k", "0", "v");
    FX("-ERR invalid expire time in 'psetex' command\r\n", "", "psetex", "k", "-1", "v");
    FX("$1\r\nv\r\n", "mod@0:k $:set@0:k", "getset", "k", "v9");
    FX("$-1\r\n", "n:new@0:g1 mod@0:g1 $:set@0:g1", "getset", "g1", "v");
    FX_RUN("rpush", "l", "a");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "getset", "l", "v");
    /* a key past its TTL is gone: SETNX creates it again */
    FX_RUN("set", "t", "v", "px", "10");
    fx_now += 20;
    FX(":1\r\n", "n:new@0:t mod@0:t $:set@0:t", "setnx", "t", "v");
}

static void test_getdel_getex(void)
{
    fx_reset();
    FX_RUN("set", "k", "v");
    FX("$1\r\nv\r\n", "mod@0:k g:del@0:k", "getdel", "k");
    FX("$-1\r\n", "", "getdel", "k");
    FX_RUN("rpush", "l", "a");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "getdel", "l");

    FX_RUN("set", "k", "v");
    FX("$1\r\nv\r\n", "", "getex", "k");
    FX("$1\r\nv\r\n", "mod@0:k g:expire@0:k", "getex", "k", "ex", "100");
    FX("$1\r\nv\r\n", "mod@0:k g:persist@0:k", "getex", "k", "persist");
    FX("$1\r\nv\r\n", "", "getex", "k", "persist"); /* no TTL to remove */
    FX("$1\r\nv\r\n", "mod@0:k g:expire@0:k", "getex", "k", "px", "100000");
    FX("$1\r\nv\r\n", "mod@0:k g:expire@0:k", "getex", "k", "exat", "99999999999");
    FX("$1\r\nv\r\n", "mod@0:k g:expire@0:k", "getex", "k", "pxat", "99999999999000");
    FX("$1\r\nv\r\n", "mod@0:k g:del@0:k", "getex", "k", "exat", "1"); /* in the past: deleted */
    FX("$-1\r\n", "", "getex", "k", "ex", "10");
    FX_RUN("set", "k", "v");
    FX("$1\r\nv\r\n", "mod@0:k g:del@0:k", "getex", "k", "pxat", "1");
    FX("$-1\r\n", "", "getex", "nokey", "ex", "10");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "getex", "l", "ex", "10");
    FX_RUN("set", "k", "v");
    FX("-ERR invalid expire time in 'getex' command\r\n", "", "getex", "k", "ex", "-5");
    FX("-ERR syntax error\r\n", "", "getex", "k", "ex", "10", "persist");
}

static void test_mset(void)
{
    fx_reset();
    FX("+OK\r\n", "n:new@0:a mod@0:a $:set@0:a n:new@0:b mod@0:b $:set@0:b mod@0:a $:set@0:a", "mset", "a",
       "1", "b", "2", "a", "3");
    FX(":1\r\n", "n:new@0:c mod@0:c $:set@0:c n:new@0:d mod@0:d $:set@0:d", "msetnx", "c", "1", "d", "2");
    FX(":0\r\n", "", "msetnx", "c", "1", "e", "2");
    FX("-ERR wrong number of arguments for 'mset' command\r\n", "", "mset", "x", "1", "y");
    FX("-ERR wrong number of arguments for 'msetnx' command\r\n", "", "msetnx", "x", "1", "y");
    /* a key past its TTL expires first (setKey's lookup): MSET adds it anew */
    FX_RUN("set", "t", "v", "px", "10");
    fx_now += 20;
    FX("+OK\r\n", "n:new@0:t mod@0:t $:set@0:t", "mset", "t", "w");
}

static void test_incr(void)
{
    fx_reset();
    FX(":1\r\n", "n:new@0:i mod@0:i $:incrby@0:i", "incr", "i");
    FX(":2\r\n", "mod@0:i $:incrby@0:i", "incr", "i");
    FX(":1\r\n", "mod@0:i $:incrby@0:i", "decr", "i");
    FX(":6\r\n", "mod@0:i $:incrby@0:i", "incrby", "i", "5");
    FX(":1\r\n", "mod@0:i $:incrby@0:i", "decrby", "i", "5");
    FX(":-3\r\n", "n:new@0:j mod@0:j $:incrby@0:j", "decrby", "j", "3");
    FX("-ERR decrement would overflow\r\n", "", "decrby", "i", "-9223372036854775808");
    FX("-ERR value is not an integer or out of range\r\n", "", "incrby", "i", "x");
    FX_RUN("rpush", "l", "a");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "incr", "l");
    FX_RUN("set", "s", "abc");
    FX("-ERR value is not an integer or out of range\r\n", "", "incr", "s");
    FX_RUN("set", "big", "9223372036854775807");
    FX("-ERR increment or decrement would overflow\r\n", "", "incr", "big");

    FX("$3\r\n1.5\r\n", "n:new@0:f mod@0:f $:incrbyfloat@0:f", "incrbyfloat", "f", "1.5");
    FX("$1\r\n3\r\n", "mod@0:f $:incrbyfloat@0:f", "incrbyfloat", "f", "1.5");
    FX("-ERR value is not a valid float\r\n", "", "incrbyfloat", "s", "1");
    FX("-ERR value is not a valid float\r\n", "", "incrbyfloat", "f", "abc");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "incrbyfloat", "l", "1");
    FX("-ERR increment would produce NaN or Infinity\r\n", "", "incrbyfloat", "f", "inf");
}

static void test_append_setrange(void)
{
    fx_reset();
    FX(":1\r\n", "n:new@0:ap mod@0:ap $:append@0:ap", "append", "ap", "x");
    FX(":2\r\n", "mod@0:ap $:append@0:ap", "append", "ap", "y");
    FX(":2\r\n", "mod@0:ap $:append@0:ap", "append", "ap", ""); /* Redis signals even an empty append */
    FX(":0\r\n", "n:new@0:e mod@0:e $:append@0:e", "append", "e", "");
    FX_RUN("rpush", "l", "a");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "append", "l", "x");

    FX(":0\r\n", "", "setrange", "sr", "0", "");
    FX(":4\r\n", "n:new@0:sr mod@0:sr $:setrange@0:sr", "setrange", "sr", "2", "ab");
    FX(":4\r\n", "", "setrange", "sr", "0", "");
    FX(":4\r\n", "mod@0:sr $:setrange@0:sr", "setrange", "sr", "0", "X");
    FX(":6\r\n", "mod@0:sr $:setrange@0:sr", "setrange", "sr", "5", "Y");
    FX("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", "", "setrange", "l", "0", "x");
    FX("-ERR offset is out of range\r\n", "", "setrange", "sr", "-1", "x");
    FX("-ERR value is not an integer or out of range\r\n", "", "setrange", "sr", "x", "x");

    /* a smaller proto-max-bulk-len (Redis cannot go under 1mb: the oracle skips to the next fx_reset) */
    fx_reset();
    FX_RUN("append", "ap", "xy");
    fx_cfg.proto_max_bulk_len = 4;
    FX("-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n", "", "append", "ap", "xyz");
    FX("-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n", "", "setrange", "ap", "3", "xy");
}

/* reads report nothing */
static void test_reads(void)
{
    fx_reset();
    FX_RUN("set", "k", "abc");
    FX("$3\r\nabc\r\n", "", "get", "k");
    FX("*2\r\n$3\r\nabc\r\n$-1\r\n", "", "mget", "k", "nk");
    FX(":3\r\n", "", "strlen", "k");
    FX("$1\r\nb\r\n", "", "getrange", "k", "1", "1");
    FX("$1\r\nb\r\n", "", "substr", "k", "1", "1");
}

/* only the classes notify-keyspace-events asks for are recorded; modified keys always are */
static void test_classes(void)
{
    fx_reset();
    fx.notify = NOTIFY_GENERIC;
    FX("+OK\r\n", "mod@0:k g:expire@0:k", "set", "k", "v", "ex", "10");
    fx.notify = NOTIFY_STRING | NOTIFY_NEW;
    FX("+OK\r\n", "n:new@0:k2 mod@0:k2 $:set@0:k2", "set", "k2", "v", "ex", "10");
    fx.notify = 0;
    FX(":1\r\n", "mod@0:i", "incr", "i");
}

int main(void)
{
    fx_setup();
    test_set();
    test_setnx_setex_getset();
    test_getdel_getex();
    test_mset();
    test_incr();
    test_append_setrange();
    test_reads();
    test_classes();
    fx_teardown();
    return check_done("test_effects_string");
}
