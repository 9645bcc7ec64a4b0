/*
 * fuzz_script: libFuzzer target for scripting, on the real shards of
 * fuzz_harness.h: Lua scripts and their arguments through EVAL, EVALSHA,
 * EVAL_RO and FCALL, with redis.call/pcall into the commands, the
 * conversions between Lua and RESP2/RESP3 both ways, and the libraries
 * scripts use (cjson, cmsgpack, struct, bit, redis.sha1hex, redis.setresp,
 * status/error replies).
 *
 * Input: the control byte (fuzz_input.h: the pieces the request stream
 * arrives in; FUZZ_FLAG: the client's home is the last shard), then a
 * program that this file turns into one script: a flags byte, then
 * statements, each an opcode byte and its operands.  An operand string is
 * a length byte (mod 48) and that many bytes, any bytes (written into the
 * Lua source as \ddd escapes); a number is one byte choosing a literal
 * (special values: -0, huge, inf, nan, 2^53, 2^63 ...) or a small integer.
 * Every statement appends what it got to the table t (or changes the reply
 * protocol, or returns early); the script returns t, an element of it, or
 * its length.  The statements have no recursion and no loops but one of
 * constant bound, so every script ends, and none puts a value twice into
 * what it returns (no cycles, no shared subtables), and an encoding kept is
 * cut short (cjson's of cjson's doubles): a reply's size stays that of the
 * script (a table holding itself twice converts, in Redis too,
 * to a reply that doubles with each of 8000 levels).  What the fuzzer
 * explores is values, not control flow (scripts with arbitrary text are
 * fuzz_engine's, whose EVALs are rarely well-formed Lua).
 *
 * The flags byte: bit 0, the client speaks RESP3 (HELLO 3); bit 1, EVAL_RO;
 * bit 2, a `#!lua` shebang, with bit 3 `flags=no-writes`; bit 4, the body
 * is a library's function called with FCALL (FCALL_RO with bit 1); bits
 * 5-6, how many of the four fixed keys are declared (KEYS), spread over the
 * shards.  The stream sends the script twice: as EVAL (or FUNCTION LOAD and
 * FCALL), then by its SHA (EVALSHA, or FCALL again) with other arguments.
 *
 * Threading: libFuzzer's thread only; the harness runs the shards.
 */
#include "percore/sha1.h"

#include "fuzz_harness.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCRIPT_STATEMENTS_MAX 48
#define OPERAND_MAX 48

/* the program's bytes, read front to back; 0 once they run out */
struct program {
    const uint8_t *p;
    size_t left;
};

static uint8_t next_byte(struct program *pr)
{
    if (pr->left == 0)
        return 0;
    pr->left--;
    return *pr->p++;
}

/* a growing byte string */
struct text {
    char *p;
    size_t len, cap;
};

static void put(struct text *t, const void *bytes, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
    }
    memcpy(t->p + t->len, bytes, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void puts_text(struct text *t, const char *s) { put(t, s, strlen(s)); }

/* an operand string as a Lua literal, every byte escaped */
static void put_string(struct text *t, struct program *pr)
{
    size_t n = next_byte(pr) % OPERAND_MAX;
    puts_text(t, "\"");
    for (size_t i = 0; i < n; i++) {
        char esc[8];
        snprintf(esc, sizeof esc, "\\%u", next_byte(pr));
        puts_text(t, esc);
    }
    puts_text(t, "\"");
}

static void put_number(struct text *t, struct program *pr)
{
    static const char *const special[] = {
        "0",  "-0",     "1",       "-1",     "3.7",   "-2.5",     "1e308", "-1e308",     "(1/0)", "(-1/0)",
        "(0/0)", "2^53", "(2^53+1)", "2^63", "-2^63", "4294967296", "0.1",   "1e-320", "2^31",  "-(2^31)",
    };
    uint8_t b = next_byte(pr);
    size_t n = sizeof special / sizeof special[0];
    if (b < n) {
        puts_text(t, special[b]);
    } else {
        char num[16];
        snprintf(num, sizeof num, "%d", (int)b - 128);
        puts_text(t, num);
    }
}

/* a value: a string, a number, a boolean, a KEYS or ARGV element, or t's last element */
static void put_value(struct text *t, struct program *pr)
{
    static const char *const named[] = {"true", "false", "nil", "KEYS[1]", "KEYS[2]", "ARGV[1]", "ARGV[2]", "t[#t]"};
    uint8_t b = next_byte(pr) % 12;
    if (b < 8)
        puts_text(t, named[b]);
    else if (b < 10)
        put_string(t, pr);
    else
        put_number(t, pr);
}

/* a command for redis.call: its name, a key (declared or not), then up to three arguments */
static void put_command(struct text *t, struct program *pr)
{
    static const char *const names[] = {
        "set",     "get",      "incr",     "incrbyfloat", "append",   "hset",     "hget",    "hgetall",
        "hincrby", "lpush",    "rpush",    "lrange",      "lpop",     "sadd",     "smembers", "srem",
        "zadd",    "zrange",   "zscore",   "zincrby",     "del",      "exists",   "expire",  "pttl",
        "type",    "mget",     "mset",     "echo",        "ping",     "publish",  "strlen",  "getrange",
        "setrange", "pfadd",   "pfcount",  "setbit",      "bitcount", "bitfield", "select",  "dbsize",
        "time",    "scan",     "object",   "hrandfield",  "zrangebyscore", "sort", "nosuchcommand", "eval",
        "xadd",    "xrange",   "xlen",     "geoadd",      "geopos",   "copy",     "lcs",
    };
    static const char *const keys[] = {"KEYS[1]", "KEYS[2]", "KEYS[3]", "\"k1\"", "\"{k1}x\"", "\"k9\""};
    puts_text(t, "\"");
    puts_text(t, names[next_byte(pr) % (sizeof names / sizeof names[0])]);
    puts_text(t, "\", ");
    puts_text(t, keys[next_byte(pr) % (sizeof keys / sizeof keys[0])]);
    for (int n = next_byte(pr) % 4; n > 0; n--) {
        puts_text(t, ", ");
        if (next_byte(pr) & 1)
            put_number(t, pr);
        else
            put_string(t, pr);
    }
}

/* one statement of the script */
static void put_statement(struct text *t, struct program *pr)
{
    static const char *const bitops[] = {"band", "bor",  "bxor",  "lshift", "rshift", "arshift",
                                         "rol",  "ror",  "tohex", "tobit",  "bnot",   "bswap"};
    static const char *const tables[] = {"{ok=", "{err=", "{double=", "{map={x=", "{set={", "{big_number=", "{1, nil, "};
    uint8_t op = next_byte(pr) % 16;
    switch (op) {
    case 0: /* a command, its error a value */
    case 1: /* a command, its error the script's */
        puts_text(t, op == 0 ? "t[#t+1] = redis.pcall(" : "t[#t+1] = redis.call(");
        put_command(t, pr);
        puts_text(t, ")\n");
        break;
    case 2:
        puts_text(t, "t[#t+1] = {pcall(cjson.decode, ");
        put_string(t, pr);
        puts_text(t, ")}\n");
        break;
    case 3: /* cut to 256 bytes: encoding an encoding escapes it again, twice as long each time */
        puts_text(t, "do local ok, s = pcall(cjson.encode, ");
        put_value(t, pr);
        puts_text(t, ") t[#t+1] = {ok, type(s) == 'string' and s:sub(1, 256) or s} end\n");
        break;
    case 4:
        puts_text(t, "t[#t+1] = {pcall(cmsgpack.unpack, ");
        put_string(t, pr);
        puts_text(t, ")}\n");
        break;
    case 5:
        puts_text(t, "t[#t+1] = {pcall(cmsgpack.pack, ");
        put_value(t, pr);
        puts_text(t, ", ");
        put_value(t, pr);
        puts_text(t, ")}\n");
        break;
    case 6:
        puts_text(t, "t[#t+1] = {pcall(struct.unpack, ");
        put_string(t, pr);
        puts_text(t, ", ");
        put_string(t, pr);
        puts_text(t, ")}\n");
        break;
    case 7:
        puts_text(t, "t[#t+1] = {pcall(struct.pack, ");
        put_string(t, pr);
        puts_text(t, ", ");
        put_number(t, pr);
        puts_text(t, ", ");
        put_value(t, pr);
        puts_text(t, ")}\n");
        break;
    case 8:
        puts_text(t, "t[#t+1] = {pcall(bit.");
        puts_text(t, bitops[next_byte(pr) % (sizeof bitops / sizeof bitops[0])]);
        puts_text(t, ", ");
        put_number(t, pr);
        puts_text(t, ", ");
        put_number(t, pr);
        puts_text(t, ")}\n");
        break;
    case 9:
        puts_text(t, "t[#t+1] = redis.sha1hex(");
        put_string(t, pr);
        puts_text(t, ")\n");
        break;
    case 10:
        puts_text(t, next_byte(pr) & 1 ? "t[#t+1] = redis.status_reply(" : "t[#t+1] = redis.error_reply(");
        put_string(t, pr);
        puts_text(t, ")\n");
        break;
    case 11: { /* a table Redis converts specially */
        uint8_t b = next_byte(pr) % (sizeof tables / sizeof tables[0]);
        puts_text(t, "t[#t+1] = ");
        puts_text(t, tables[b]);
        put_value(t, pr);
        puts_text(t, b == 3 || b == 4 ? "}}\n" : "}\n");
        break;
    }
    case 12:
        puts_text(t, next_byte(pr) & 1 ? "pcall(redis.setresp, 3)\n" : "pcall(redis.setresp, 2)\n");
        break;
    case 13:
        puts_text(t, "t[#t+1] = ");
        put_value(t, pr);
        puts_text(t, "\n");
        break;
    case 14: { /* nesting: the last value one level down, or a chain past Lua's C stack (8000 levels) */
        uint8_t b = next_byte(pr);
        if (b & 1) {
            puts_text(t, "t[#t+1] = {t[#t]}\n");
        } else {
            char chain[80];
            snprintf(chain, sizeof chain, "do local d = {} for i = 1, %d do d = {d} end t[#t+1] = d end\n", b * 40);
            puts_text(t, chain);
        }
        break;
    }
    default:
        puts_text(t, "do return t[#t] end\n");
        break;
    }
}

/* the script's body from the program */
static void put_body(struct text *t, struct program *pr)
{
    puts_text(t, "local t = {}\n");
    for (int i = 0; i < SCRIPT_STATEMENTS_MAX && pr->left; i++)
        put_statement(t, pr);
    static const char *const ends[] = {"return t\n", "return t[#t]\n", "return t[1]\n", "return #t\n"};
    puts_text(t, ends[next_byte(pr) % 4]);
}

/* one command of the request stream, in RESP */
static void put_request(struct text *s, int argc, const char *const *argv, const size_t *lens)
{
    char head[32];
    snprintf(head, sizeof head, "*%d\r\n", argc);
    puts_text(s, head);
    for (int i = 0; i < argc; i++) {
        snprintf(head, sizeof head, "$%zu\r\n", lens[i]);
        puts_text(s, head);
        put(s, argv[i], lens[i]);
        puts_text(s, "\r\n");
    }
}

/* a call of the script: name (EVAL, EVALSHA, FCALL ...) and what it names, numkeys keys, two arguments */
static void put_call(struct text *s, const char *name, const char *what, size_t what_len, int numkeys,
                     const char *arg1, const char *arg2)
{
    static const char *const keys[] = {"k1", "k2", "{k1}x", "k3"};
    const char *argv[9];
    size_t lens[9];
    char nk[4];
    snprintf(nk, sizeof nk, "%d", numkeys);
    int argc = 0;
    argv[argc] = name, lens[argc++] = strlen(name);
    argv[argc] = what, lens[argc++] = what_len;
    argv[argc] = nk, lens[argc++] = strlen(nk);
    for (int i = 0; i < numkeys; i++)
        argv[argc] = keys[i], lens[argc++] = strlen(keys[i]);
    argv[argc] = arg1, lens[argc++] = strlen(arg1);
    argv[argc] = arg2, lens[argc++] = strlen(arg2);
    put_request(s, argc, argv, lens);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_harness_start("fuzz_script");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    struct program pr = {data + 2, size - 2};
    uint8_t flags = data[1];
    bool resp3 = flags & 1, read_only = flags & 2, shebang = flags & 4, no_writes = flags & 8, function = flags & 16;
    int numkeys = (flags >> 5) & 3;
    struct text body = {0}, script = {0}, stream = {0};
    put_body(&body, &pr);
    if (function) {
        puts_text(&script, "#!lua name=fz\nredis.register_function{function_name='f', callback=function(KEYS, ARGV)\n");
        puts_text(&script, body.p);
        puts_text(&script, no_writes ? "end, flags={'no-writes'}}\n" : "end}\n");
    } else {
        if (shebang)
            puts_text(&script, no_writes ? "#!lua flags=no-writes\n" : "#!lua\n");
        puts_text(&script, body.p);
    }
    if (resp3)
        puts_text(&stream, "HELLO 3\r\n");
    if (function) {
        const char *argv[] = {"FUNCTION", "LOAD", script.p};
        size_t lens[] = {8, 4, script.len};
        put_request(&stream, 3, argv, lens);
        const char *call = read_only ? "FCALL_RO" : "FCALL";
        put_call(&stream, call, "f", 1, numkeys, "1", "x");
        put_call(&stream, call, "f", 1, numkeys, "-2.5", "");
    } else {
        char sha[41];
        sha1_hex(sha, script.p, script.len);
        put_call(&stream, read_only ? "EVAL_RO" : "EVAL", script.p, script.len, numkeys, "1", "x");
        put_call(&stream, read_only ? "EVALSHA_RO" : "EVALSHA", sha, 40, numkeys, "-2.5", "");
    }
    if (getenv("FUZZ_SCRIPT_SHOW")) /* replaying a crash: what it sent */
        fprintf(stderr, "fuzz_script: the request stream:\n%.*s\n", (int)stream.len, stream.p);
    fuzz_harness_run(stream.p, stream.len, data[0], false);
    free(body.p);
    free(script.p);
    free(stream.p);
    return 0;
}
