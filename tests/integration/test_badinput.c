/*
 * test_badinput: every kind of malformed request gets Redis 7.0's exact reply;
 * protocol (framing) errors close that connection and only that one, other
 * errors leave it open; a second client keeps working throughout.
 *
 * The expected bytes below were captured from redis-server 7.0.15 (Debian
 * 7.0.15-1~deb12u10); ctest also runs this program against a real
 * redis-server (integration.test_badinput.redis) so the table stays honest.
 */
#include "testclient.h"

#include <stdlib.h>
#include <string.h>

enum after { OPEN, CLOSED, SILENT_OPEN };

struct bad_case {
    const char *name;
    const char *send;      /* bytes sent (send_len, or strlen) */
    size_t send_len;
    const char *expect;    /* the reply bytes, "" for none */
    enum after after;      /* OPEN: the connection must still answer PING;
                              CLOSED: closed after the reply;
                              SILENT_OPEN: no reply, stays open (incomplete
                              request); the client then closes it */
    size_t expect_len;     /* 0: strlen(expect); set when it holds NUL bytes */
};

#define S(lit) lit, sizeof(lit) - 1

static const struct bad_case cases[] = {
    { "multibulk length not a number", S("*abc\r\n"),
      "-ERR Protocol error: invalid multibulk length\r\n", CLOSED, 0 },
    { "multibulk length with a space", S("*1 \r\n$4\r\nPING\r\n"),
      "-ERR Protocol error: invalid multibulk length\r\n", CLOSED, 0 },
    { "multibulk length with a plus sign", S("*+1\r\n$4\r\nPING\r\n"),
      "-ERR Protocol error: invalid multibulk length\r\n", CLOSED, 0 },
    { "multibulk length > INT_MAX", S("*2147483648\r\n"),
      "-ERR Protocol error: invalid multibulk length\r\n", CLOSED, 0 },
    { "multibulk count line > 64KB", NULL, 0,
      "-ERR Protocol error: too big mbulk count string\r\n", CLOSED, 0 },
    { "bulk length -5", S("*1\r\n$-5\r\n"),
      "-ERR Protocol error: invalid bulk length\r\n", CLOSED, 0 },
    { "bulk length not a number", S("*1\r\n$abc\r\n"),
      "-ERR Protocol error: invalid bulk length\r\n", CLOSED, 0 },
    { "bulk length 600MB > proto-max-bulk-len", S("*1\r\n$600000000\r\n"),
      "-ERR Protocol error: invalid bulk length\r\n", CLOSED, 0 },
    { "bulk length 512MB+1 > proto-max-bulk-len", S("*1\r\n$536870913\r\n"),
      "-ERR Protocol error: invalid bulk length\r\n", CLOSED, 0 },
    { "bulk count line > 64KB", NULL, 1,
      "-ERR Protocol error: too big bulk count string\r\n", CLOSED, 0 },
    { "missing $", S("*1\r\nPING\r\n"),
      "-ERR Protocol error: expected '$', got 'P'\r\n", CLOSED, 0 },
    { "missing $ in second argument", S("*2\r\n$4\r\nECHO\r\n:12\r\n"),
      "-ERR Protocol error: expected '$', got ':'\r\n", CLOSED, 0 },
    { "inline > 64KB with no newline", NULL, 2,
      "-ERR Protocol error: too big inline request\r\n", CLOSED, 0 },
    { "inline unbalanced double quote", S("set \"a b\r\n"),
      "-ERR Protocol error: unbalanced quotes in request\r\n", CLOSED, 0 },
    { "inline unbalanced single quote", S("set a 'b\r\n"),
      "-ERR Protocol error: unbalanced quotes in request\r\n", CLOSED, 0 },
    { "inline closing quote not followed by space", S("set a \"b\"c\r\n"),
      "-ERR Protocol error: unbalanced quotes in request\r\n", CLOSED, 0 },
    { "wrong arity", S("*1\r\n$3\r\nGET\r\n"),
      "-ERR wrong number of arguments for 'get' command\r\n", OPEN, 0 },
    { "wrong arity (too many)", S("*3\r\n$3\r\nGET\r\n$1\r\na\r\n$1\r\nb\r\n"),
      "-ERR wrong number of arguments for 'get' command\r\n", OPEN, 0 },
    { "wrong arity inline", S("set onlykey\r\n"),
      "-ERR wrong number of arguments for 'set' command\r\n", OPEN, 0 },
    { "unknown command", S("*3\r\n$3\r\nfoo\r\n$1\r\nx\r\n$1\r\ny\r\n"),
      "-ERR unknown command 'foo', with args beginning with: 'x' 'y' \r\n", OPEN, 0 },
    { "unknown command no args", S("*1\r\n$6\r\nNOSUCH\r\n"),
      "-ERR unknown command 'NOSUCH', with args beginning with: \r\n", OPEN, 0 },
    { "unknown command inline", S("foo x y\r\n"),
      "-ERR unknown command 'foo', with args beginning with: 'x' 'y' \r\n", OPEN, 0 },
    { "empty lines, *0 and *-1 are ignored", S("\r\n*0\r\n*-1\r\n*-5\r\nPING\r\n"),
      "+PONG\r\n", OPEN, 0 },
    { "inline with bare LF", S("\n\nPING\n"), "+PONG\r\n", OPEN, 0 },
    { "inline escapes in double quotes", S("ECHO \"\\x41\\n\"\r\n"), "$2\r\nA\n\r\n", OPEN, 0 },
    { "NUL bytes in a key", S("*3\r\n$3\r\nSET\r\n$3\r\na\0b\r\n$2\r\nv\0\r\n"
                              "*2\r\n$3\r\nGET\r\n$3\r\na\0b\r\n"
                              "*2\r\n$6\r\nEXISTS\r\n$1\r\na\r\n"
                              "*2\r\n$3\r\nDEL\r\n$3\r\na\0b\r\n"),
      "+OK\r\n$2\r\nv\0\r\n:0\r\n:1\r\n", OPEN, sizeof("+OK\r\n$2\r\nv\0\r\n:0\r\n:1\r\n") - 1 },
    { "2,000,000-argument header then close", S("*2000000\r\n"), "", SILENT_OPEN, 0 },
    { "1,000,000-argument header then close", S("*1000000\r\n$3\r\nSET\r\n"), "", SILENT_OPEN, 0 },
    { "INT_MAX-argument header then close", S("*2147483647\r\n"), "", SILENT_OPEN, 0 },
    { "512MB bulk header (allowed) then close", S("*1\r\n$536870912\r\nabc"), "", SILENT_OPEN, 0 },
    { "bulk shorter than announced then close", S("*1\r\n$5\r\nPING\r\n"), "", SILENT_OPEN, 0 },
};

static char *big_case(size_t which, size_t *len)
{
    /* 0: "*" + 70000 digits; 1: "*1\r\n$" + 70000 digits; 2: 70000 'x' */
    size_t n = 70000;
    char *b = malloc(n + 16);
    size_t o = 0;
    if (which == 0) {
        b[o++] = '*';
    } else if (which == 1) {
        memcpy(b, "*1\r\n$", 5);
        o = 5;
    }
    memset(b + o, which == 2 ? 'x' : '1', n);
    *len = o + n;
    return b;
}

static void check_other_client(struct pc_conn *other, const char *after)
{
    char what[256];
    snprintf(what, sizeof(what), "second client PING after \"%s\"", after);
    char *r = pc_conn_cmdl(other, NULL, "PING", NULL);
    pc_expect_bytes(what, r, r ? strlen(r) : 0, "+PONG\r\n");
    free(r);
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    struct pc_conn *other = pc_conn_open(srv.port);
    if (!other)
        return 2;
    pc_expect(other, "+OK\r\n", "SET", "{other}k", "kept", NULL);

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct bad_case *tc = &cases[i];
        struct pc_conn *c = pc_conn_open(srv.port);
        if (!c) {
            pc_fail("%s: cannot connect", tc->name);
            continue;
        }
        size_t len = tc->send_len;
        char *big = NULL;
        const char *data = tc->send;
        if (!data) {
            big = big_case(tc->send_len, &len);
            data = big;
        }
        if (pc_conn_write(c, data, len) != 0 && tc->after != CLOSED)
            pc_fail("%s: write failed", tc->name);
        free(big);

        char what[256];
        snprintf(what, sizeof(what), "%s: reply", tc->name);
        if (tc->expect[0] || tc->after != SILENT_OPEN) {
            /* read the expected number of bytes as consecutive RESP values */
            size_t explen = tc->expect_len ? tc->expect_len : strlen(tc->expect);
            char *got = malloc(explen + 1);
            size_t gl = 0;
            while (gl < explen) {
                char *r;
                size_t rl;
                if (pc_conn_read_reply(c, &r, &rl, pc_reply_timeout_ms) != 1)
                    break;
                if (gl + rl > explen) {
                    got = realloc(got, gl + rl + 1);
                }
                memcpy(got + gl, r, rl);
                gl += rl;
                free(r);
            }
            pc_expect_bytes_n(what, got, gl, tc->expect, explen);
            free(got);
        } else {
            /* nothing may come back within a moment */
            char *r;
            size_t rl;
            int rr = pc_conn_read_reply(c, &r, &rl, 300);
            if (rr == 1) {
                pc_fail("%s: expected no reply, got:", tc->name);
                pc_print_escaped(stderr, r, rl, 200);
                fputc('\n', stderr);
                free(r);
            } else if (rr == -1) {
                pc_fail("%s: server closed the connection (Redis keeps it open waiting for the rest)",
                        tc->name);
            }
        }

        snprintf(what, sizeof(what), "%s: connection state after the reply", tc->name);
        if (tc->after == CLOSED) {
            int cl = pc_conn_wait_closed(c, 5000);
            if (cl != 1)
                pc_fail("%s: connection should be closed after a protocol error (%s)", tc->name,
                        cl == 0 ? "still open after 5 s" : "more bytes arrived");
        } else if (tc->after == OPEN) {
            snprintf(what, sizeof(what), "%s: same connection PING afterwards", tc->name);
            char *r = pc_conn_cmdl(c, NULL, "PING", NULL);
            pc_expect_bytes(what, r, r ? strlen(r) : 0, "+PONG\r\n");
            free(r);
        }
        if (i % 2)
            pc_conn_abort(&c);
        else
            pc_conn_close(&c);
        check_other_client(other, tc->name);
    }

    /* the kept key survived everything */
    pc_expect(other, "$4\r\nkept\r\n", "GET", "{other}k", NULL);
    /* every shard still answers */
    char keys[PC_SPREAD_KEYS][64];
    pc_spread_keys("bad:", keys);
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        pc_expect(other, "+OK\r\n", "SET", keys[i], "x", NULL);
        pc_expect(other, "$1\r\nx\r\n", "GET", keys[i], NULL);
    }
    pc_conn_close(&other);
    pc_test_teardown(&srv);
    return pc_test_done("test_badinput");
}
