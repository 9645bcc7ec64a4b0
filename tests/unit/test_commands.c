/*
 * test_commands: the string, keys and internal command handlers driven
 * directly on one store, checking exact reply bytes (taken from Redis 7.0.15
 * for the same inputs).
 */
#include "percore/command.h"
#include "percore/config.h"
#include "percore/object.h"
#include "percore/reply.h"
#include "percore/slot.h"
#include "percore/store.h"

#include "../../server/cmd/families.h"
#include "check.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOW 1700000000000LL

static struct store *st;
static struct reply out;
static struct config cfg;
static struct cmd_stats stats;
static int64_t now_ms = NOW;
static int cur_db;

static const struct command *find(const char *name)
{
    const struct command *tabs[] = {command_family_string, command_family_keys,
                                    command_internal_table};
    size_t counts[] = {command_family_string_count, command_family_keys_count,
                       CMD_I_COUNT};
    for (int t = 0; t < 3; t++)
        for (size_t i = 0; i < counts[t]; i++)
            if (strcmp(tabs[t][i].name, name) == 0)
                return &tabs[t][i];
    return NULL;
}

/* run a command given as (ptr, len) pairs; the reply is in `out` */
static void run_args(const struct resp_arg *argv, int argc)
{
    char name[64];
    size_t n = argv[0].len < sizeof(name) - 1 ? argv[0].len : sizeof(name) - 1;
    for (size_t i = 0; i < n; i++)
        name[i] = (argv[0].ptr[i] >= 'A' && argv[0].ptr[i] <= 'Z') ? (char)(argv[0].ptr[i] | 0x20) : argv[0].ptr[i];
    name[n] = '\0';
    const struct command *c = find(name);
    if (c == NULL) {
        fprintf(stderr, "no such command %s\n", name);
        exit(2);
    }
    struct cmd_ctx ctx = {
        .store = st, .out = &out, .argv = argv, .argc = argc, .db = cur_db,
        .now = now_ms, .config = &cfg, .stats = &stats, .conn = NULL, .shard = 0,
    };
    reply_clear(&out);
    c->proc(&ctx);
}

static void run_v(int argc, const char **argv)
{
    struct resp_arg a[32];
    for (int i = 0; i < argc; i++) {
        a[i].ptr = argv[i];
        a[i].len = strlen(argv[i]);
    }
    run_args(a, argc);
}

#define RUN(...)                                                     \
    do {                                                             \
        const char *run_argv_[] = {__VA_ARGS__};                     \
        run_v((int)(sizeof(run_argv_) / sizeof(run_argv_[0])), run_argv_); \
    } while (0)

/* run and compare the reply bytes */
#define EXPECT(lit, ...)                       \
    do {                                       \
        RUN(__VA_ARGS__);                      \
        CHECK_MEM(out.buf, out.len, lit);      \
    } while (0)

static void reset(void)
{
    store_flush(st, -1);
    cur_db = 0;
    now_ms = NOW;
    memset(&stats, 0, sizeof(stats));
}

/* SORT's keys: argv[1] and its last STORE's destination, its options skipped as Redis's sortGetKeys skips
 * them; the slots of the keys its patterns form, when a {tag} fixes them */
static void test_sort_keys(void)
{
    const struct command *sort = &command_family_sort[0];
    CHECK(strcmp(sort->name, "sort") == 0 && (sort->flags & CMD_SORT_STORE_KEY) && (sort->flags & CMD_PATTERN_KEYS));
    struct resp_arg a[] = {{"sort", 4}, {"l", 1}, {"limit", 5}, {"store", 5}, {"1", 1}, {"by", 2}, {"store", 5},
                           {"store", 5}, {"d1", 2}, {"STORE", 5}, {"d2", 2}};
    int pos[11];
    CHECK(command_key_positions(sort, 11, a, pos) == 2 && pos[0] == 1 && pos[1] == 10);
    CHECK(command_key_positions(sort, 8, a, pos) == 1 && pos[0] == 1); /* a STORE with nothing after it */
    CHECK(command_key_positions(&command_family_sort[1], 11, a, pos) == 1); /* SORT_RO: its key only */
    struct resp_arg p[] = {{"sort", 4}, {"l", 1}, {"by", 2}, {"{t}w_*", 6}, {"get", 3}, {"x*", 2}, {"get", 3},
                           {"#", 1}, {"get", 3}, {"x{a}*->f", 8}, {"get", 3}, {"{*}", 3}, {"by", 2}, {"nosort", 6}};
    int slots[14];
    CHECK(cmd_sort_pattern_slots(14, p, slots) == 4);
    CHECK(slots[0] == (int)slot_of_key("t", 1) && slots[1] == -1 && slots[2] == (int)slot_of_key("a", 1) &&
          slots[3] == -1);
}

static void test_table(void)
{
    const struct command *c;
    CHECK((c = find("get")) && c->arity == 2 && c->route == ROUTE_OWNER);
    CHECK((c = find("mget")) && c->route == ROUTE_SPLIT_MGET && c->last_key == -1);
    CHECK((c = find("mset")) && c->route == ROUTE_SPLIT_OK && c->key_step == 2);
    CHECK((c = find("msetnx")) && c->route == ROUTE_MSETNX);
    CHECK((c = find("del")) && c->route == ROUTE_SPLIT_SUM);
    CHECK((c = find("keys")) && c->route == ROUTE_FANOUT_CONCAT && c->first_key == 0);
    CHECK((c = find("scan")) && c->route == ROUTE_SCAN);
    CHECK((c = find("dbsize")) && c->route == ROUTE_FANOUT_SUM);
    CHECK((c = find("flushall")) && c->route == ROUTE_FANOUT_OK);
    CHECK((c = find("object")) && c->first_key == 2);
    CHECK((c = find("__take")) && (c->flags & CMD_INTERNAL));
    CHECK((c = find("__put")) && (c->flags & CMD_INTERNAL) && c->arity == -6);
    /* every entry is complete */
    const struct command *tabs[] = {command_family_string, command_family_keys,
                                    command_internal_table};
    size_t counts[] = {command_family_string_count, command_family_keys_count,
                       CMD_I_COUNT};
    for (int t = 0; t < 3; t++)
        for (size_t i = 0; i < counts[t]; i++) {
            c = &tabs[t][i];
            CHECK(c->name && c->proc && c->arity != 0 && c->categories);
            for (const char *p = c->name; *p; p++)
                CHECK(!(*p >= 'A' && *p <= 'Z'));
        }
}

/* what the core knows of a command comes from the table: the steps it sends resolve, the shapes are sound */
static void test_core_knowledge(void)
{
    command_setup();
    for (int i = 0; i < CMD_S_COUNT; i++) {
        const struct command *c = command_step(i);
        CHECK(c && !(c->flags & CMD_INTERNAL));
        struct resp_arg name = command_name_arg(c);
        CHECK(c && command_lookup(name.ptr, name.len) == c);
    }
    CHECK(strcmp(command_step(CMD_S_LPUSH)->name, "lpush") == 0);
    CHECK(strcmp(command_step(CMD_S_ZADD)->name, "zadd") == 0);
    int blocking = 0;
    for (size_t i = 0; i < command_count(); i++) {
        const struct command *c = command_at(i);
        uint32_t shape = c->flags & (CMD_BLOCK_MOVE | CMD_BLOCK_LEFT | CMD_BLOCK_ZSET);
        CHECK(!shape || (c->flags & CMD_BLOCKING));
        if (c->flags & CMD_BLOCK_MOVE)
            CHECK(c->first_key == 1 && c->last_key == 2 && !(c->flags & (CMD_BLOCK_LEFT | CMD_BLOCK_ZSET)));
        blocking += (c->flags & CMD_BLOCKING) != 0;
        if ((c->flags & CMD_BLOCKING) && (c->flags & CMD_KEYS_STREAMS)) /* XREAD XREADGROUP: no pop shape */
            CHECK(!shape);
    }
    CHECK(blocking == 10); /* BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP BZPOPMIN BZPOPMAX BZMPOP XREAD XREADGROUP */
    const struct command *c = command_lookup("blmove", 6);
    CHECK(c && (c->flags & CMD_BLOCK_MOVE));
    CHECK((c = command_lookup("blpop", 5)) && (c->flags & CMD_BLOCK_LEFT));
    CHECK((c = command_lookup("brpop", 5)) && !(c->flags & (CMD_BLOCK_LEFT | CMD_BLOCK_ZSET | CMD_BLOCK_MOVE)));
    CHECK((c = command_lookup("bzmpop", 6)) && (c->flags & CMD_BLOCK_ZSET) && (c->flags & CMD_NUMKEYS));
    CHECK(command_lookup("exec", 4) == NULL); /* an admin command: registered by admin_setup, not here */
    /* every command by its name in any case; a name's prefix, extension or NUL-padded copy is none */
    for (size_t i = 0; i < command_count(); i++) {
        const struct command *k = command_at(i);
        char name[64];
        size_t n = strlen(k->name);
        for (size_t j = 0; j < n; j++)
            name[j] = (char)(j % 2 ? toupper((unsigned char)k->name[j]) : k->name[j]);
        CHECK(command_lookup(name, n) == k);
        CHECK(command_lookup(name, n - 1) != k);
        name[n] = 'x';
        CHECK(command_lookup(name, n + 1) != k);
        name[n] = '\0';
        CHECK(command_lookup(name, n + 1) == NULL);
        name[n - 1] = '\0';
        CHECK(command_lookup(name, n) == NULL);
    }
    CHECK((c = command_lookup("ZRANGEBYSCORE", 13)) && strcmp(c->name, "zrangebyscore") == 0);
    CHECK(command_lookup("zrangebyscorx", 13) == NULL);
    CHECK(command_lookup("zrangebyscor", 12) == NULL);
}

static void test_get_set(void)
{
    reset();
    EXPECT("$-1\r\n", "get", "k");
    EXPECT("+OK\r\n", "set", "k", "v");
    EXPECT("$1\r\nv\r\n", "get", "k");
    CHECK_EQ_LL(stats.keyspace_hits, 1);
    CHECK_EQ_LL(stats.keyspace_misses, 1);
    EXPECT("$-1\r\n", "set", "k", "v2", "nx");
    EXPECT("$1\r\nv\r\n", "set", "k", "v2", "nx", "get");
    EXPECT("$1\r\nv\r\n", "set", "k", "v3", "get");
    EXPECT("$2\r\nv3\r\n", "get", "k");
    EXPECT("$-1\r\n", "set", "nokey", "v", "xx");
    EXPECT("$-1\r\n", "get", "nokey");
    EXPECT("+OK\r\n", "set", "k", "v4", "xx");
    EXPECT("-ERR syntax error\r\n", "set", "k", "v", "xx", "nx");
    EXPECT("-ERR syntax error\r\n", "set", "k", "v", "nx", "xx");
    EXPECT("-ERR syntax error\r\n", "set", "k", "v", "keepttl", "ex", "10");
    EXPECT("-ERR syntax error\r\n", "set", "k", "v", "ex", "10", "px", "10");
    EXPECT("-ERR syntax error\r\n", "set", "k", "v", "ex");
    EXPECT("-ERR syntax error\r\n", "set", "k", "v", "foo");
    EXPECT("-ERR value is not an integer or out of range\r\n", "set", "k", "v", "ex", "1x");
    EXPECT("-ERR invalid expire time in 'set' command\r\n", "set", "k", "v", "ex", "0");
    EXPECT("-ERR invalid expire time in 'set' command\r\n", "set", "k", "v", "px", "-5");
    EXPECT("-ERR invalid expire time in 'set' command\r\n", "set", "k", "v", "ex",
           "9223372036854776");
    EXPECT("-ERR invalid expire time in 'set' command\r\n", "set", "k", "v", "ex",
           "9223372036854775");
    EXPECT("-ERR invalid expire time in 'set' command\r\n", "set", "k", "v", "px",
           "9223372036854775807");
    EXPECT("+OK\r\n", "set", "k", "v", "exat", "9223372036854775");
    EXPECT("+OK\r\n", "set", "k", "v", "EX", "10", "ex", "20");
    EXPECT(":20\r\n", "ttl", "k");
    EXPECT("+OK\r\n", "set", "k", "v", "px", "1500");
    EXPECT(":1500\r\n", "pttl", "k");
    EXPECT(":2\r\n", "ttl", "k");
    EXPECT("+OK\r\n", "set", "k", "w", "keepttl");
    EXPECT(":1500\r\n", "pttl", "k");
    EXPECT("+OK\r\n", "set", "k", "w");
    EXPECT(":-1\r\n", "pttl", "k");
    EXPECT("+OK\r\n", "set", "k", "w", "pxat", "1700000005000");
    EXPECT(":5000\r\n", "pttl", "k");
    EXPECT(":1700000005\r\n", "expiretime", "k");
    EXPECT(":1700000005000\r\n", "pexpiretime", "k");
    now_ms += 5001;
    EXPECT("$-1\r\n", "get", "k");
    now_ms = NOW;
    /* SET ... GET on a wrong type is tested where other types exist; binary */
    {
        struct resp_arg a[3] = {{"set", 3}, {"b\0k", 3}, {"v\0\r\n", 4}};
        run_args(a, 3);
        CHECK_MEM(out.buf, out.len, "+OK\r\n");
        struct resp_arg g[2] = {{"get", 3}, {"b\0k", 3}};
        run_args(g, 2);
        CHECK_MEM(out.buf, out.len, "$4\r\nv\0\r\n\r\n");
    }
}

static void test_setnx_setex(void)
{
    reset();
    EXPECT(":1\r\n", "setnx", "a", "1");
    EXPECT(":0\r\n", "setnx", "a", "2");
    EXPECT("$1\r\n1\r\n", "get", "a");
    EXPECT("-ERR invalid expire time in 'setex' command\r\n", "setex", "k", "0", "v");
    EXPECT("-ERR invalid expire time in 'psetex' command\r\n", "psetex", "k", "-1", "v");
    EXPECT("-ERR value is not an integer or out of range\r\n", "setex", "k", "x", "v");
    EXPECT("+OK\r\n", "setex", "k", "100", "v");
    EXPECT(":100\r\n", "ttl", "k");
    EXPECT("+OK\r\n", "psetex", "k", "100", "v");
    EXPECT(":100\r\n", "pttl", "k");
    EXPECT("$-1\r\n", "getset", "new", "x");
    EXPECT("$1\r\nx\r\n", "getset", "new", "y");
    EXPECT("$1\r\nv\r\n", "getset", "k", "z");
    EXPECT(":-1\r\n", "ttl", "k"); /* GETSET clears the TTL */
    EXPECT("$1\r\nz\r\n", "getdel", "k");
    EXPECT("$-1\r\n", "getdel", "k");
    EXPECT(":0\r\n", "exists", "k");
}

static void test_getex(void)
{
    reset();
    EXPECT("$-1\r\n", "getex", "nokey", "ex", "abc");
    EXPECT("+OK\r\n", "set", "k", "v");
    EXPECT("-ERR value is not an integer or out of range\r\n", "getex", "k", "ex", "abc");
    EXPECT("-ERR syntax error\r\n", "getex", "k", "persist", "ex", "1");
    EXPECT("-ERR syntax error\r\n", "getex", "k", "nx");
    EXPECT("-ERR syntax error\r\n", "getex", "k", "ex");
    EXPECT("-ERR invalid expire time in 'getex' command\r\n", "getex", "k", "ex", "0");
    EXPECT("$1\r\nv\r\n", "getex", "k", "ex", "50");
    EXPECT(":50\r\n", "ttl", "k");
    EXPECT("$1\r\nv\r\n", "getex", "k", "persist");
    EXPECT(":-1\r\n", "ttl", "k");
    EXPECT("$1\r\nv\r\n", "getex", "k", "pxat", "1700000000500");
    EXPECT(":500\r\n", "pttl", "k");
    EXPECT("$1\r\nv\r\n", "getex", "k");
    EXPECT(":500\r\n", "pttl", "k");
    /* an absolute time in the past deletes the key after replying */
    EXPECT("$1\r\nv\r\n", "getex", "k", "exat", "1");
    EXPECT(":0\r\n", "exists", "k");
}

static void test_mget_mset(void)
{
    reset();
    EXPECT("-ERR wrong number of arguments for 'mset' command\r\n", "mset", "a", "1", "b");
    EXPECT("-ERR wrong number of arguments for 'msetnx' command\r\n", "msetnx", "a", "1", "b");
    EXPECT("+OK\r\n", "mset", "a", "1", "b", "2");
    EXPECT("*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n", "mget", "a", "zz", "b");
    EXPECT(":0\r\n", "msetnx", "c", "3", "a", "9");
    EXPECT(":0\r\n", "exists", "c");
    EXPECT(":1\r\n", "msetnx", "c", "3", "d", "4", "c", "5");
    EXPECT("$1\r\n5\r\n", "get", "c");
    EXPECT("+OK\r\n", "setex", "a", "100", "x");
    EXPECT("+OK\r\n", "mset", "a", "1");
    EXPECT(":-1\r\n", "ttl", "a"); /* MSET clears the TTL */
}

static void test_incr(void)
{
    reset();
    EXPECT(":1\r\n", "incr", "n");
    EXPECT(":0\r\n", "decr", "n");
    EXPECT(":10\r\n", "incrby", "n", "10");
    EXPECT(":-5\r\n", "decrby", "n", "15");
    EXPECT("-ERR value is not an integer or out of range\r\n", "incrby", "n", "1.5");
    EXPECT("-ERR value is not an integer or out of range\r\n", "incrby", "n", " 1");
    EXPECT("-ERR decrement would overflow\r\n", "decrby", "n", "-9223372036854775808");
    EXPECT("+OK\r\n", "set", "n", "9223372036854775807");
    EXPECT("-ERR increment or decrement would overflow\r\n", "incr", "n");
    EXPECT("+OK\r\n", "set", "n", "-9223372036854775808");
    EXPECT("-ERR increment or decrement would overflow\r\n", "decr", "n");
    EXPECT("+OK\r\n", "set", "s", "abc");
    EXPECT("-ERR value is not an integer or out of range\r\n", "incr", "s");
    EXPECT("+OK\r\n", "set", "s", "01");
    EXPECT("-ERR value is not an integer or out of range\r\n", "incr", "s");
    EXPECT("+OK\r\n", "setex", "t", "100", "5");
    EXPECT(":6\r\n", "incr", "t");
    EXPECT(":100\r\n", "ttl", "t"); /* INCR keeps the TTL */
    EXPECT("$3\r\nint\r\n", "object", "encoding", "t");

    EXPECT("$3\r\n1.5\r\n", "incrbyfloat", "f", "1.5");
    EXPECT("$1\r\n3\r\n", "incrbyfloat", "f", "1.5");
    EXPECT("$3\r\n4.1\r\n", "incrbyfloat", "f", "1.1");
    EXPECT("$4\r\n5000\r\n", "incrbyfloat", "g", "5.0e3");
    EXPECT("$2\r\n16\r\n", "incrbyfloat", "h", "0x10");
    EXPECT("-ERR value is not a valid float\r\n", "incrbyfloat", "f", "abc");
    EXPECT("-ERR value is not a valid float\r\n", "incrbyfloat", "f", " 1");
    EXPECT("-ERR value is not a valid float\r\n", "incrbyfloat", "f", "1e5000");
    EXPECT("-ERR increment would produce NaN or Infinity\r\n", "incrbyfloat", "f", "inf");
    EXPECT("$1\r\n2\r\n", "incrbyfloat", "s", "1"); /* "01" parses as a float */
    EXPECT("$3\r\n4.1\r\n", "get", "f");
}

static void test_append_range(void)
{
    reset();
    EXPECT(":5\r\n", "append", "k", "hello");
    EXPECT(":11\r\n", "append", "k", " world");
    EXPECT("$11\r\nhello world\r\n", "get", "k");
    EXPECT(":11\r\n", "strlen", "k");
    EXPECT(":0\r\n", "strlen", "nokey");
    EXPECT("$5\r\nhello\r\n", "getrange", "k", "0", "4");
    EXPECT("$5\r\nworld\r\n", "getrange", "k", "-5", "-1");
    EXPECT("$11\r\nhello world\r\n", "getrange", "k", "0", "-1");
    EXPECT("$11\r\nhello world\r\n", "getrange", "k", "-100", "100");
    EXPECT("$0\r\n\r\n", "getrange", "k", "-1", "-5");
    EXPECT("$0\r\n\r\n", "getrange", "k", "5", "3");
    EXPECT("$0\r\n\r\n", "getrange", "nokey", "0", "-1");
    EXPECT("$3\r\nell\r\n", "substr", "k", "1", "3");
    EXPECT("-ERR value is not an integer or out of range\r\n", "getrange", "k", "a", "1");
    EXPECT(":11\r\n", "setrange", "k", "6", "WORLD");
    EXPECT("$11\r\nhello WORLD\r\n", "get", "k");
    EXPECT(":11\r\n", "setrange", "k", "1", "");
    EXPECT(":0\r\n", "setrange", "nk", "5", "");
    EXPECT(":0\r\n", "exists", "nk");
    EXPECT(":6\r\n", "setrange", "nk", "3", "abc");
    {
        RUN("get", "nk");
        CHECK_MEM(out.buf, out.len, "$6\r\n\0\0\0abc\r\n");
    }
    EXPECT("-ERR offset is out of range\r\n", "setrange", "k", "-1", "x");
    EXPECT("-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n", "setrange", "k",
           "536870911", "xx");
    EXPECT("-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n", "setrange", "k",
           "9223372036854775807", "xx");
    cfg.proto_max_bulk_len = 12;
    EXPECT("-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n", "append", "k",
           "xx");
    EXPECT(":12\r\n", "append", "k", "x");
    cfg.proto_max_bulk_len = 512LL * 1024 * 1024;
    EXPECT("+OK\r\n", "setex", "t", "100", "5");
    EXPECT(":2\r\n", "append", "t", "5");
    EXPECT(":100\r\n", "ttl", "t"); /* APPEND keeps the TTL */
    EXPECT("+OK\r\n", "set", "i", "12");
    EXPECT(":3\r\n", "append", "i", "3");
    EXPECT("$3\r\n123\r\n", "get", "i");
}

static void test_keys_generic(void)
{
    reset();
    EXPECT("+OK\r\n", "mset", "a", "1", "b", "2", "c", "3");
    EXPECT(":2\r\n", "del", "a", "b", "zz");
    EXPECT(":0\r\n", "unlink", "a");
    EXPECT(":2\r\n", "exists", "c", "c", "a");
    EXPECT(":1\r\n", "touch", "c", "a");
    EXPECT("+string\r\n", "type", "c");
    EXPECT("+none\r\n", "type", "a");
    EXPECT(":1\r\n", "dbsize");
    EXPECT(":-2\r\n", "ttl", "a");
    EXPECT(":-2\r\n", "pexpiretime", "a");
    EXPECT(":-1\r\n", "ttl", "c");
    EXPECT(":0\r\n", "expire", "a", "10");
    EXPECT(":1\r\n", "expire", "c", "10");
    EXPECT(":10\r\n", "ttl", "c");
    EXPECT(":1\r\n", "persist", "c");
    EXPECT(":0\r\n", "persist", "c");
    EXPECT(":0\r\n", "persist", "nokey");
    EXPECT(":-1\r\n", "ttl", "c");
    EXPECT(":1\r\n", "pexpire", "c", "1500");
    EXPECT(":2\r\n", "ttl", "c"); /* rounded */
    EXPECT(":1\r\n", "expireat", "c", "1700000100");
    EXPECT(":100\r\n", "ttl", "c");
    EXPECT(":1\r\n", "pexpireat", "c", "1700000100500");
    EXPECT(":100500\r\n", "pttl", "c");

    /* NX XX GT LT */
    EXPECT("-ERR NX and XX, GT or LT options at the same time are not compatible\r\n",
           "expire", "c", "10", "nx", "xx");
    EXPECT("-ERR NX and XX, GT or LT options at the same time are not compatible\r\n",
           "expire", "c", "10", "nx", "gt");
    EXPECT("-ERR GT and LT options at the same time are not compatible\r\n",
           "expire", "c", "10", "gt", "lt");
    EXPECT("-ERR Unsupported option foo\r\n", "expire", "c", "10", "foo");
    EXPECT("-ERR value is not an integer or out of range\r\n", "expire", "c", "ten");
    EXPECT("-ERR invalid expire time in 'expire' command\r\n", "expire", "c", "9223372036854776");
    EXPECT("-ERR invalid expire time in 'expire' command\r\n", "expire", "c", "-9223372036854776");
    EXPECT("-ERR invalid expire time in 'pexpire' command\r\n", "pexpire", "c",
           "9223372036854775807");
    EXPECT(":0\r\n", "expire", "c", "10", "nx");
    EXPECT(":0\r\n", "expire", "c", "1000", "lt");
    EXPECT(":1\r\n", "expire", "c", "50", "lt");
    EXPECT(":0\r\n", "expire", "c", "40", "gt");
    EXPECT(":1\r\n", "expire", "c", "60", "GT");
    EXPECT(":60\r\n", "ttl", "c");
    EXPECT(":1\r\n", "expire", "c", "70", "xx");
    EXPECT(":1\r\n", "persist", "c");
    EXPECT(":0\r\n", "expire", "c", "70", "xx");
    EXPECT(":0\r\n", "expire", "c", "70", "gt"); /* no TTL: GT fails */
    EXPECT(":1\r\n", "expire", "c", "70", "lt"); /* no TTL: LT succeeds */
    EXPECT(":1\r\n", "persist", "c");
    EXPECT(":1\r\n", "expire", "c", "70", "nx");
    /* an expire in the past deletes */
    EXPECT(":1\r\n", "expire", "c", "-1");
    EXPECT(":0\r\n", "exists", "c");
    EXPECT("+OK\r\n", "set", "c", "v");
    EXPECT(":1\r\n", "pexpireat", "c", "1");
    EXPECT(":0\r\n", "dbsize");
    /* lazy expiry */
    EXPECT("+OK\r\n", "set", "c", "v", "px", "10");
    now_ms += 10;
    EXPECT(":1\r\n", "exists", "c");
    now_ms += 1;
    EXPECT(":0\r\n", "exists", "c");
    EXPECT(":-2\r\n", "pttl", "c");
}

static int count_elems(const char *p)
{
    return atoi(p + 1);
}

static void test_keys_scan(void)
{
    reset();
    EXPECT("*0\r\n", "keys", "*");
    EXPECT("+OK\r\n", "mset", "one", "1", "two", "2", "three", "3", "", "e");
    EXPECT("*1\r\n$3\r\none\r\n", "keys", "o*");
    RUN("keys", "t*");
    CHECK_EQ_LL(count_elems(out.buf), 2);
    RUN("keys", "*");
    CHECK_EQ_LL(count_elems(out.buf), 4);
    RUN("keys", "**");
    CHECK_EQ_LL(count_elems(out.buf), 3); /* Redis 7.0: "**" does not match "" */
    EXPECT("+OK\r\n", "set", "tmp", "v", "px", "5");
    now_ms += 6;
    RUN("keys", "t*");
    CHECK_EQ_LL(count_elems(out.buf), 2); /* expired keys are skipped */

    EXPECT("-ERR invalid cursor\r\n", "scan", "abc");
    EXPECT("-ERR invalid cursor\r\n", "scan", " 1");
    EXPECT("-ERR invalid cursor\r\n", "scan", "18446744073709551616");
    EXPECT("-ERR syntax error\r\n", "scan", "0", "count", "0");
    EXPECT("-ERR value is not an integer or out of range\r\n", "scan", "0", "count", "x");
    EXPECT("-ERR syntax error\r\n", "scan", "0", "type");
    EXPECT("-ERR syntax error\r\n", "scan", "0", "foo", "bar");
    EXPECT("*2\r\n$1\r\n0\r\n*1\r\n$3\r\none\r\n", "scan", "0", "match", "o*");
    EXPECT("*2\r\n$1\r\n0\r\n*0\r\n", "scan", "0", "type", "list");
    RUN("scan", "0", "type", "STRING", "count", "100");
    CHECK(out.len > 12 && memcmp(out.buf, "*2\r\n$1\r\n0\r\n*4\r\n", 15) == 0);

    /* a full scan with a small COUNT returns every key exactly once here */
    reset();
    for (int i = 0; i < 300; i++) {
        char k[16];
        snprintf(k, sizeof(k), "key:%d", i);
        RUN("set", k, "v");
    }
    {
        char seen[300] = {0};
        char cur[32] = "0";
        int total = 0, rounds = 0;
        do {
            RUN("scan", cur, "count", "7");
            /* *2\r\n$n\r\n<cursor>\r\n*m\r\n ... */
            const char *p = out.buf + 4;
            int clen = atoi(p + 1);
            p = strchr(p, '\n') + 1;
            memcpy(cur, p, (size_t)clen);
            cur[clen] = '\0';
            p += clen + 2;
            int m = atoi(p + 1);
            p = strchr(p, '\n') + 1;
            for (int j = 0; j < m; j++) {
                int klen = atoi(p + 1);
                p = strchr(p, '\n') + 1;
                int idx = atoi(p + 4);
                if (klen > 4 && idx >= 0 && idx < 300) {
                    if (!seen[idx])
                        total++;
                    seen[idx] = 1;
                }
                p += klen + 2;
            }
            rounds++;
        } while (strcmp(cur, "0") != 0 && rounds < 10000);
        CHECK_EQ_LL(total, 300);
        CHECK(rounds > 1);
    }

    reset();
    EXPECT("$-1\r\n", "randomkey");
    EXPECT("+OK\r\n", "set", "only", "1");
    EXPECT("$4\r\nonly\r\n", "randomkey");
}

static void test_rename_move(void)
{
    reset();
    EXPECT("-ERR no such key\r\n", "rename", "zz", "zz");
    EXPECT("-ERR no such key\r\n", "renamenx", "zz", "yy");
    EXPECT("+OK\r\n", "set", "a", "1", "ex", "100");
    EXPECT("+OK\r\n", "rename", "a", "a");
    EXPECT(":0\r\n", "renamenx", "a", "a");
    EXPECT("+OK\r\n", "rename", "a", "b");
    EXPECT(":0\r\n", "exists", "a");
    EXPECT("$1\r\n1\r\n", "get", "b");
    EXPECT(":100\r\n", "ttl", "b"); /* the TTL moves with the value */
    EXPECT("+OK\r\n", "set", "c", "3");
    EXPECT(":0\r\n", "renamenx", "b", "c");
    EXPECT("+OK\r\n", "rename", "c", "b");
    EXPECT(":-1\r\n", "ttl", "b"); /* the destination's TTL is gone */
    EXPECT("$1\r\n3\r\n", "get", "b");
    EXPECT(":1\r\n", "renamenx", "b", "d");
    EXPECT(":1\r\n", "dbsize");

    EXPECT("-ERR value is out of range, value must between -2147483648 and 2147483647\r\n",
           "move", "d", "99999999999");
    EXPECT("-ERR value is not an integer or out of range\r\n", "move", "d", "x");
    EXPECT("-ERR source and destination objects are the same\r\n", "move", "d", "0");
    EXPECT("-ERR DB index is out of range\r\n", "move", "d", "16");
    EXPECT("-ERR DB index is out of range\r\n", "move", "d", "-1");
    EXPECT(":0\r\n", "move", "nokey", "1");
    EXPECT(":1\r\n", "move", "d", "1");
    EXPECT(":0\r\n", "exists", "d");
    cur_db = 1;
    EXPECT("$1\r\n3\r\n", "get", "d");
    EXPECT("+OK\r\n", "set", "e", "x");
    cur_db = 0;
    EXPECT("+OK\r\n", "set", "e", "y");
    EXPECT(":0\r\n", "move", "e", "1"); /* exists in the target */

    EXPECT("-ERR invalid first DB index\r\n", "swapdb", "x", "1");
    EXPECT("-ERR invalid second DB index\r\n", "swapdb", "0", "x");
    EXPECT("-ERR invalid first DB index\r\n", "swapdb", "99999999999", "1");
    EXPECT("-ERR DB index is out of range\r\n", "swapdb", "0", "16");
    EXPECT("+OK\r\n", "swapdb", "0", "0");
    EXPECT("+OK\r\n", "swapdb", "0", "1");
    EXPECT("$1\r\n3\r\n", "get", "d");
    EXPECT("$1\r\nx\r\n", "get", "e");

    EXPECT("-ERR syntax error\r\n", "flushdb", "foo");
    EXPECT("-ERR syntax error\r\n", "flushdb", "async", "x");
    EXPECT("-ERR syntax error\r\n", "flushall", "now");
    EXPECT("+OK\r\n", "flushdb", "ASYNC");
    EXPECT(":0\r\n", "dbsize");
    cur_db = 1;
    EXPECT(":1\r\n", "dbsize");
    EXPECT("+OK\r\n", "flushall", "sync");
    EXPECT(":0\r\n", "dbsize");
    cur_db = 0;
}

static void test_object(void)
{
    reset();
    EXPECT("+OK\r\n", "mset", "a", "1", "big", "12345678", "s", "hello",
           "r", "hello world 12345678901234567890123456789012345678901234567890");
    EXPECT("$3\r\nint\r\n", "object", "encoding", "a");
    EXPECT("$6\r\nembstr\r\n", "object", "encoding", "s");
    EXPECT("$3\r\nraw\r\n", "object", "encoding", "r");
    EXPECT("$-1\r\n", "object", "encoding", "zz");
    EXPECT(":2147483647\r\n", "object", "refcount", "a");
    EXPECT(":1\r\n", "object", "refcount", "big");
    EXPECT(":0\r\n", "object", "idletime", "a");
    /* idle time counts from the last access; OBJECT itself does not touch */
    now_ms += 7000;
    EXPECT(":7\r\n", "object", "idletime", "a");
    EXPECT(":7\r\n", "object", "idletime", "a");
    RUN("get", "a");
    EXPECT(":0\r\n", "object", "idletime", "a");
    now_ms += 2500;
    EXPECT(":2\r\n", "object", "idletime", "a");
    /* EXISTS and TYPE do not count as an access (LOOKUP_NOTOUCH), TOUCH does (Redis's lookupKeyRead) */
    EXPECT(":2\r\n", "exists", "a", "big");
    EXPECT("+string\r\n", "type", "a");
    EXPECT(":2\r\n", "object", "idletime", "a");
    EXPECT(":2\r\n", "touch", "a", "nosuchkey", "a");
    EXPECT(":0\r\n", "object", "idletime", "a");
    EXPECT(":9\r\n", "object", "idletime", "big");
    now_ms = NOW;
    EXPECT("-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please "
           "note that when switching between policies at runtime LRU and LFU data will take "
           "some time to adjust.\r\n",
           "object", "freq", "a");
    EXPECT("-ERR unknown subcommand 'foo'. Try OBJECT HELP.\r\n", "object", "foo", "a");
    EXPECT("-ERR wrong number of arguments for 'object|encoding' command\r\n", "object",
           "encoding");
    EXPECT("-ERR wrong number of arguments for 'object|help' command\r\n", "object", "help", "x");
    EXPECT("*15\r\n+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"
           "+ENCODING <key>\r\n"
           "+    Return the kind of internal representation used in order to store the value\r\n"
           "+    associated with a <key>.\r\n"
           "+FREQ <key>\r\n"
           "+    Return the access frequency index of the <key>. The returned integer is\r\n"
           "+    proportional to the logarithm of the recent access frequency of the key.\r\n"
           "+IDLETIME <key>\r\n"
           "+    Return the idle time of the <key>, that is the approximated number of\r\n"
           "+    seconds elapsed since the last access to the key.\r\n"
           "+REFCOUNT <key>\r\n"
           "+    Return the number of references of the value associated with the specified\r\n"
           "+    <key>.\r\n"
           "+HELP\r\n"
           "+    Prints this help.\r\n",
           "object", "help");
}

static void test_internal(void)
{
    reset();
    EXPECT("$-1\r\n", "__take", "nokey");
    EXPECT("+OK\r\n", "set", "k", "value", "pxat", "1700000009000");
    RUN("__take", "k");
    CHECK(out.len > 4 && memcmp(out.buf, "*3\r\n$", 5) == 0);
    CHECK(out.len > 20 && memcmp(out.buf + out.len - 20, ":1700000009000\r\n:5\r\n", 20) == 0); /* a new key's counter */
    EXPECT(":0\r\n", "exists", "k");
    /* pull the blob out of the reply and put it back under another name */
    RUN("set", "k", "value", "pxat", "1700000009000");
    RUN("__take", "k");
    {
        const char *p = out.buf + 5;
        int blen = atoi(p);
        p = strchr(p, '\n') + 1;
        char *blob = malloc((size_t)blen + 1);
        memcpy(blob, p, (size_t)blen);
        struct resp_arg a[6] = {{"__put", 5}, {"k2", 2}, {blob, (size_t)blen},
                                {"1700000009000", 13}, {"1", 1}, {"42", 2}};
        run_args(a, 6);
        CHECK_MEM(out.buf, out.len, ":1\r\n");
        EXPECT("$5\r\nvalue\r\n", "get", "k2");
        EXPECT(":9000\r\n", "pttl", "k2");
        RUN("__dump", "k2"); /* the counter it came with */
        CHECK(out.len > 5 && memcmp(out.buf + out.len - 5, ":42\r\n", 5) == 0);
        run_args(a, 6); /* nx: exists now */
        CHECK_MEM(out.buf, out.len, ":0\r\n");
        a[1].ptr = "k3";
        a[3].ptr = "-1";
        a[3].len = 2;
        a[4].ptr = "0";
        a[5].ptr = "-1";
        run_args(a, 6);
        CHECK_MEM(out.buf, out.len, ":1\r\n");
        EXPECT(":-1\r\n", "pttl", "k3");
        a[1].ptr = "k2"; /* replace, no nx */
        run_args(a, 6);
        CHECK_MEM(out.buf, out.len, ":1\r\n");
        EXPECT(":-1\r\n", "pttl", "k2");
        free(blob);
    }
    EXPECT("-ERR value is not an integer or out of range\r\n", "__put", "k4", "x", "abc", "0", "-1");
    EXPECT("-ERR value is not an integer or out of range\r\n", "__put", "k4", "x", "-1", "0", "abc");
    EXPECT("-ERR corrupt value\r\n", "__put", "k4", "", "-1", "0", "-1");
    EXPECT(":0\r\n", "exists", "k4");
}

static void test_stats(void)
{
    reset();
    RUN("set", "a", "1");
    RUN("exists", "a", "zz");
    RUN("type", "zz");
    RUN("incr", "a");
    RUN("mget", "a", "zz");
    RUN("getrange", "zz", "0", "1");
    CHECK_EQ_LL(stats.keyspace_hits, 2);
    CHECK_EQ_LL(stats.keyspace_misses, 4);
}

int main(void)
{
    uint8_t seed[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    store_set_seed(seed);
    cfg.databases = 16;
    cfg.proto_max_bulk_len = 512LL * 1024 * 1024;
    st = store_create(16);
    reply_init(&out);

    test_table();
    test_sort_keys();
    test_core_knowledge();
    test_get_set();
    test_setnx_setex();
    test_getex();
    test_mget_mset();
    test_incr();
    test_append_range();
    test_keys_generic();
    test_keys_scan();
    test_rename_move();
    test_object();
    test_internal();
    test_stats();

    reply_deinit(&out);
    store_destroy(&st);
    return check_done("test_commands");
}
