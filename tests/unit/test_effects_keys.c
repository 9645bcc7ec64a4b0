/*
 * test_effects_keys: what the keyspace commands (server/cmd/keys.c) and
 * RENAME's cross-shard steps __take and __put (server/cmd/internal.c) report
 * they did -- modified keys, keyspace events, databases about to be replaced
 * -- driven directly on one store (effects_check.h).  The events and their
 * order are redis-server 7.0.15's for the same commands
 * (notify-keyspace-events KAn, psubscribe __keyspace@*__:*), the modified
 * keys where its db.c and expire.c call signalModifiedKey.
 */
#include "effects_check.h"

static void test_del(void)
{
    fx_reset();
    FX_RUN("set", "a", "1");
    FX_RUN("set", "b", "2");
    FX(":2\r\n", "mod@0:a g:del@0:a mod@0:b g:del@0:b", "del", "a", "b", "c", "a");
    FX(":0\r\n", "", "unlink", "b");
    FX_RUN("set", "a", "1");
    FX(":1\r\n", "mod@0:a g:del@0:a", "unlink", "a", "nx", "a");
    FX(":0\r\n", "", "del", "nx");
    /* reads report nothing, TOUCH included (no event in Redis) */
    FX_RUN("set", "m", "v");
    FX(":1\r\n", "", "touch", "m", "nk");
    FX(":1\r\n", "", "exists", "m", "nk");
    FX("+string\r\n", "", "type", "m");
    FX(":-1\r\n", "", "ttl", "m");
}

static void test_expire(void)
{
    fx_reset();
    FX_RUN("set", "k", "v");
    FX(":1\r\n", "mod@0:k g:expire@0:k", "expire", "k", "100");
    FX(":0\r\n", "", "expire", "k", "100", "nx");
    FX(":1\r\n", "mod@0:k g:expire@0:k", "expire", "k", "200", "xx");
    FX(":0\r\n", "", "expire", "k", "50", "gt");
    FX(":1\r\n", "mod@0:k g:expire@0:k", "expire", "k", "500", "gt");
    FX(":1\r\n", "mod@0:k g:expire@0:k", "expire", "k", "50", "lt");
    FX(":0\r\n", "", "expire", "k", "60", "lt");
    FX(":0\r\n", "", "expire", "nokey", "10");
    FX("-ERR Unsupported option foo\r\n", "", "expire", "k", "10", "foo");
    FX("-ERR NX and XX, GT or LT options at the same time are not compatible\r\n", "", "expire", "k", "10", "nx",
       "xx");
    FX("-ERR value is not an integer or out of range\r\n", "", "expire", "k", "abc");
    FX("-ERR invalid expire time in 'expire' command\r\n", "", "expire", "k", "9223372036854775807");
    FX(":1\r\n", "mod@0:k g:expire@0:k", "pexpire", "k", "100000");
    FX(":1\r\n", "mod@0:k g:expire@0:k", "expireat", "k", "99999999999");
    FX(":1\r\n", "mod@0:k g:expire@0:k", "pexpireat", "k", "99999999999000");
    FX(":1\r\n", "mod@0:k g:persist@0:k", "persist", "k");
    FX(":0\r\n", "", "persist", "k");
    FX(":0\r\n", "", "persist", "nokey");
    /* a time in the past deletes the key: "del", not "expire" */
    FX(":1\r\n", "mod@0:k g:del@0:k", "expire", "k", "-1");
    FX(":0\r\n", "", "exists", "k");
    FX_RUN("set", "k", "v");
    FX(":1\r\n", "mod@0:k g:del@0:k", "pexpireat", "k", "1");
    FX_RUN("set", "k", "v");
    FX(":1\r\n", "mod@0:k g:del@0:k", "expire", "k", "0");
    FX_RUN("set", "k", "v");
    FX(":0\r\n", "", "expire", "k", "10", "xx");
    FX(":0\r\n", "", "expire", "k", "10", "gt");
    FX(":1\r\n", "mod@0:k g:expire@0:k", "expire", "k", "10", "lt");
}

static void test_rename(void)
{
    fx_reset();
    FX_RUN("set", "src", "v");
    FX("+OK\r\n", "n:new@0:dst mod@0:src mod@0:dst g:rename_from@0:src g:rename_to@0:dst", "rename", "src", "dst");
    FX("+OK\r\n", "", "rename", "dst", "dst"); /* the same key: nothing changes */
    FX("-ERR no such key\r\n", "", "rename", "nokey", "x");
    /* over an existing destination: Redis deletes it, then adds the key ("new" all the same) */
    FX_RUN("set", "src", "v");
    FX("+OK\r\n", "n:new@0:dst mod@0:src mod@0:dst g:rename_from@0:src g:rename_to@0:dst", "rename", "src", "dst");
    FX_RUN("set", "src2", "v");
    FX(":0\r\n", "", "renamenx", "src2", "dst");
    FX(":1\r\n", "n:new@0:dst2 mod@0:src2 mod@0:dst2 g:rename_from@0:src2 g:rename_to@0:dst2", "renamenx", "src2",
       "dst2");
    FX("-ERR no such key\r\n", "", "renamenx", "src2", "src2");
    FX(":0\r\n", "", "renamenx", "dst2", "dst2");
    FX_RUN("set", "src3", "v", "ex", "100");
    FX("+OK\r\n", "n:new@0:ttl mod@0:src3 mod@0:ttl g:rename_from@0:src3 g:rename_to@0:ttl", "rename", "src3",
       "ttl");
    FX(":100\r\n", "", "ttl", "ttl");
}

static void test_move(void)
{
    fx_reset();
    FX_RUN("set", "m", "v");
    FX(":1\r\n", "n:new@1:m mod@0:m mod@1:m g:move_from@0:m g:move_to@1:m", "move", "m", "1");
    FX(":0\r\n", "", "move", "m", "1"); /* gone from db 0 */
    FX_RUN("set", "m", "v");
    FX(":0\r\n", "", "move", "m", "1"); /* db 1 has it */
    FX("-ERR source and destination objects are the same\r\n", "", "move", "m", "0");
    FX("-ERR DB index is out of range\r\n", "", "move", "m", "99");
    FX("-ERR value is not an integer or out of range\r\n", "", "move", "m", "x");
    fx_db = 3;
    FX_RUN("set", "m3", "v");
    FX(":1\r\n", "n:new@0:m3 mod@3:m3 mod@0:m3 g:move_from@3:m3 g:move_to@0:m3", "move", "m3", "0");
}

/* no events: the databases about to be emptied or swapped, announced while they still hold their keys */
static void test_flush_swap(void)
{
    fx_reset();
    FX_RUN("set", "a", "1");
    FX_RUN("set", "b", "1");
    fx_db = 2;
    FX_RUN("set", "c", "1");
    FX("+OK\r\n", "replace:2,-1(1)", "flushdb");
    FX(":0\r\n", "", "dbsize");
    FX("+OK\r\n", "replace:2,-1(0)", "flushdb", "async");
    FX("-ERR syntax error\r\n", "", "flushdb", "bogus");
    FX_RUN("set", "c", "1");
    fx_db = 0;
    FX("+OK\r\n", "replace:0,1(2)", "swapdb", "0", "1");
    FX(":0\r\n", "", "dbsize");
    FX("+OK\r\n", "", "swapdb", "0", "0");
    FX("-ERR DB index is out of range\r\n", "", "swapdb", "0", "99");
    FX("-ERR invalid first DB index\r\n", "", "swapdb", "x", "1");
    FX("-ERR syntax error\r\n", "", "flushall", "bogus");
    FX("+OK\r\n", "replace:-1,-1(3)", "flushall");
    FX("+OK\r\n", "replace:-1,-1(0)", "flushall", "sync");
}

/* the value of key as __dump gives it, into a buffer the caller frees */
static char *dump_blob(const char *key, size_t *len)
{
    FX_RUN("__dump", key);
    CHECK(fx_out.len > 5 && memcmp(fx_out.buf, "*3\r\n$", 5) == 0);
    const char *p = fx_out.buf + 5;
    *len = (size_t)atoi(p);
    p = strchr(p, '\n') + 1;
    char *blob = malloc(*len);
    memcpy(blob, p, *len);
    return blob;
}

static void put(const char *key, const char *blob, size_t len, const char *expire, const char *nx,
                const char *event)
{
    struct resp_arg a[7] = {{"__put", 5}, {key, strlen(key)}, {blob, len}, {expire, strlen(expire)},
                            {nx, strlen(nx)}, {"-1", 2}, {event, event ? strlen(event) : 0}};
    fx_run_args(a, event ? 7 : 6);
}

/* RENAME across shards: __take on the source's owner, __put on the destination's */
static void test_take_put(void)
{
    size_t len;
    fx_reset();
    FX_RUN("set", "k", "v", "ex", "100");
    FX("$-1\r\n", "", "__take", "nokey");
    FX("$-1\r\n", "", "__take", "nokey", "rename_from");
    char *blob = dump_blob("k", &len);
    FX("-ERR unknown event\r\n", "", "__take", "k", "set");
    FX("-ERR syntax error\r\n", "", "__take", "k", "rename_from", "x");
    FX(":1\r\n", "", "exists", "k"); /* refused before anything changed */
    FX_RUN("__take", "k", "rename_from");
    CHECK(fx_out.len > 5 && memcmp(fx_out.buf, "*3\r\n$", 5) == 0);
    CHECK_MEM(fx_text.buf, fx_text.len, "mod@0:k g:rename_from@0:k");
    FX(":0\r\n", "", "exists", "k");
    FX_RUN("set", "k", "v");
    FX_RUN("__take", "k"); /* no event: the change only */
    CHECK_MEM(fx_text.buf, fx_text.len, "mod@0:k");

    put("d", blob, len, "99999999999000", "0", "rename_to");
    CHECK_MEM(fx_out.buf, fx_out.len, ":1\r\n");
    CHECK_MEM(fx_text.buf, fx_text.len, "n:new@0:d mod@0:d g:rename_to@0:d");
    put("d", blob, len, "-1", "0", "rename_to"); /* over an existing key: "new" as in Redis's RENAME */
    CHECK_MEM(fx_text.buf, fx_text.len, "n:new@0:d mod@0:d g:rename_to@0:d");
    put("d", blob, len, "-1", "1", "rename_to"); /* nx and d exists: nothing */
    CHECK_MEM(fx_out.buf, fx_out.len, ":0\r\n");
    CHECK_MEM(fx_text.buf, fx_text.len, "");
    put("w", blob, len, "-1", "0", NULL); /* a gathered command's write-back: the change only */
    CHECK_MEM(fx_out.buf, fx_out.len, ":1\r\n");
    CHECK_MEM(fx_text.buf, fx_text.len, "mod@0:w");
    put("e", blob, len, "-1", "0", "expired"); /* not a generic event */
    CHECK_MEM(fx_out.buf, fx_out.len, "-ERR unknown event\r\n");
    CHECK_MEM(fx_text.buf, fx_text.len, "");
    put("e", "", 0, "-1", "0", "rename_to");
    CHECK_MEM(fx_out.buf, fx_out.len, "-ERR corrupt value\r\n");
    CHECK_MEM(fx_text.buf, fx_text.len, "");
    put("e", blob, len, "x", "0", "rename_to");
    CHECK_MEM(fx_out.buf, fx_out.len, "-ERR value is not an integer or out of range\r\n");
    CHECK_MEM(fx_text.buf, fx_text.len, "");
    FX(":0\r\n", "", "exists", "e");
    FX_RUN("__dump", "d"); /* a read */
    CHECK_MEM(fx_text.buf, fx_text.len, "");
    free(blob);
}

int main(void)
{
    fx_setup();
    test_del();
    test_expire();
    test_rename();
    test_move();
    test_flush_swap();
    test_take_put();
    fx_teardown();
    return check_done("test_effects_keys");
}
