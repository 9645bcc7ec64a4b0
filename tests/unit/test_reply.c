/*
 * test_reply: the reply encoder, byte for byte against what Redis 7.0 sends
 * (the doubles were checked with ZSCORE on a real redis-server 7.0), and
 * reply_value_len on complete, nested and incomplete values.
 */
#include "percore/reply.h"

#include "check.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

#define CHECK_REPLY(r, lit)          \
    do {                             \
        CHECK_MEM((r)->buf, (r)->len, lit); \
        reply_clear(r);              \
    } while (0)

static void test_scalars(void)
{
    struct reply r;

    reply_init(&r);
    CHECK_EQ_LL(r.resp, 2);
    reply_ok(&r);
    CHECK_REPLY(&r, "+OK\r\n");
    reply_simple(&r, "PONG");
    CHECK_REPLY(&r, "+PONG\r\n");
    reply_error(&r, "ERR syntax error");
    CHECK_REPLY(&r, "-ERR syntax error\r\n");
    reply_error(&r, "ERR bad\r\nthing\n");
    CHECK_REPLY(&r, "-ERR bad  thing \r\n");
    reply_errorf(&r, "ERR unknown command '%s', with args beginning with: ", "fo\ro");
    CHECK_REPLY(&r, "-ERR unknown command 'fo o', with args beginning with: \r\n");
    /* longer than the first formatting attempt */
    char longarg[1000];
    memset(longarg, 'x', sizeof(longarg) - 1);
    longarg[sizeof(longarg) - 1] = '\0';
    reply_errorf(&r, "ERR %s!", longarg);
    CHECK(r.len == 1 + 4 + 999 + 1 + 2 && memcmp(r.buf, "-ERR xxx", 8) == 0 &&
          memcmp(r.buf + r.len - 4, "x!\r\n", 4) == 0);
    reply_clear(&r);
    reply_wrongtype(&r);
    CHECK_REPLY(&r, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    reply_syntax_error(&r);
    CHECK_REPLY(&r, "-ERR syntax error\r\n");
    reply_not_integer(&r);
    CHECK_REPLY(&r, "-ERR value is not an integer or out of range\r\n");

    reply_int(&r, 0);
    CHECK_REPLY(&r, ":0\r\n");
    reply_int(&r, 1);
    CHECK_REPLY(&r, ":1\r\n");
    reply_int(&r, -1);
    CHECK_REPLY(&r, ":-1\r\n");
    reply_int(&r, 1234567890);
    CHECK_REPLY(&r, ":1234567890\r\n");
    reply_int(&r, LLONG_MAX);
    CHECK_REPLY(&r, ":9223372036854775807\r\n");
    reply_int(&r, LLONG_MIN);
    CHECK_REPLY(&r, ":-9223372036854775808\r\n");
    reply_int(&r, 100);
    CHECK_REPLY(&r, ":100\r\n");
    reply_int(&r, 10);
    CHECK_REPLY(&r, ":10\r\n");

    reply_bulk(&r, "hello", 5);
    CHECK_REPLY(&r, "$5\r\nhello\r\n");
    reply_bulk(&r, "", 0);
    CHECK_REPLY(&r, "$0\r\n\r\n");
    reply_bulk(&r, "a\0\r\n", 4);
    CHECK_REPLY(&r, "$4\r\na\0\r\n\r\n");
    reply_bulk_cstr(&r, "abc");
    CHECK_REPLY(&r, "$3\r\nabc\r\n");
    reply_bulk_cstr(&r, NULL);
    CHECK_REPLY(&r, "$-1\r\n");
    reply_bulk_ll(&r, -42);
    CHECK_REPLY(&r, "$3\r\n-42\r\n");
    reply_bulk_ll(&r, LLONG_MIN);
    CHECK_REPLY(&r, "$20\r\n-9223372036854775808\r\n");
    reply_raw(&r, "*1\r\n", 4);
    CHECK_REPLY(&r, "*1\r\n");

    /* a big bulk, and appends accumulate */
    size_t n = 1 << 20;
    char *big = malloc(n);
    memset(big, 'z', n);
    reply_simple(&r, "a");
    reply_bulk(&r, big, n);
    reply_int(&r, 7);
    CHECK(r.len == 4 + 10 + n + 2 + 4 && r.cap >= r.len);
    CHECK(memcmp(r.buf, "+a\r\n$1048576\r\nzz", 16) == 0);
    CHECK(memcmp(r.buf + r.len - 6, "\r\n:7\r\n", 6) == 0);
    free(big);

    /* reserve: room for n, amortised growth */
    reply_clear(&r);
    char *w = reply_reserve(&r, 3);
    memcpy(w, "+x\r", 3);
    r.len += 3;
    w = reply_reserve(&r, 1);
    *w = '\n';
    r.len++;
    CHECK_REPLY(&r, "+x\r\n");
    reply_deinit(&r);
    reply_deinit(&r);
}

static void test_resp2_resp3(void)
{
    struct reply r;

    reply_init(&r);
    reply_null(&r);
    reply_null_array(&r);
    reply_array(&r, 3);
    reply_array(&r, 0);
    reply_map(&r, 2);
    reply_set(&r, 5);
    reply_bool(&r, 1);
    reply_bool(&r, 0);
    reply_verbatim(&r, "hi", 2, "txt");
    CHECK_REPLY(&r, "$-1\r\n*-1\r\n*3\r\n*0\r\n*4\r\n*5\r\n:1\r\n:0\r\n$2\r\nhi\r\n");

    r.resp = 3;
    reply_null(&r);
    reply_null_array(&r);
    reply_array(&r, 3);
    reply_map(&r, 2);
    reply_set(&r, 5);
    reply_bool(&r, 1);
    reply_bool(&r, 0);
    reply_verbatim(&r, "hi", 2, "txt");
    reply_verbatim(&r, "", 0, "m");
    CHECK_REPLY(&r, "_\r\n_\r\n*3\r\n%2\r\n~5\r\n#t\r\n#f\r\n=6\r\ntxt:hi\r\n=4\r\nm  :\r\n");
    reply_bulk_cstr(&r, NULL);
    CHECK_REPLY(&r, "_\r\n");
    reply_deinit(&r);
}

static void test_double(void)
{
    static const struct {
        double d;
        const char *resp2, *resp3;
    } cases[] = {
        {0.1, "$19\r\n0.10000000000000001\r\n", ",0.10000000000000001\r\n"},
        {1.5, "$3\r\n1.5\r\n", ",1.5\r\n"},
        {1e300, "$23\r\n1.0000000000000001e+300\r\n", ",1.0000000000000001e+300\r\n"},
        {1e-300, "$6\r\n1e-300\r\n", ",1e-300\r\n"},
        {0.0, "$1\r\n0\r\n", ",0\r\n"},
        {-0.0, "$2\r\n-0\r\n", ",-0\r\n"},
        {3.0, "$1\r\n3\r\n", ",3\r\n"},
        {-2.5, "$4\r\n-2.5\r\n", ",-2.5\r\n"},
        {123456789012345678.0, "$22\r\n1.2345678901234568e+17\r\n", ",1.2345678901234568e+17\r\n"},
        {INFINITY, "$3\r\ninf\r\n", ",inf\r\n"},
        {-INFINITY, "$4\r\n-inf\r\n", ",-inf\r\n"},
    };
    struct reply r;

    reply_init(&r);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        r.resp = 2;
        reply_double(&r, cases[i].d);
        CHECK(r.len == strlen(cases[i].resp2) && memcmp(r.buf, cases[i].resp2, r.len) == 0);
        reply_clear(&r);
        r.resp = 3;
        reply_double(&r, cases[i].d);
        CHECK(r.len == strlen(cases[i].resp3) && memcmp(r.buf, cases[i].resp3, r.len) == 0);
        reply_clear(&r);
    }
    reply_deinit(&r);
}

/* the whole of `s` is one value; every proper prefix is incomplete */
static void check_value(const char *s, size_t n, int line)
{
    check_count++;
    if (reply_value_len(s, n) != n) {
        check_failures++;
        fprintf(stderr, "line %d: reply_value_len = %zu, want %zu\n", line,
                reply_value_len(s, n), n);
    }
    for (size_t k = 0; k < n; k++) {
        if (reply_value_len(s, k) != 0) {
            check_count++;
            check_failures++;
            fprintf(stderr, "line %d: prefix %zu reported complete\n", line, k);
            return;
        }
    }
}
#define CHECK_VALUE(lit) check_value(lit, sizeof(lit) - 1, __LINE__)

static void test_value_len(void)
{
    CHECK_VALUE("+OK\r\n");
    CHECK_VALUE("-ERR x\r\n");
    CHECK_VALUE(":-12\r\n");
    CHECK_VALUE("$5\r\nhe\r\nl\r\n");
    CHECK_VALUE("$0\r\n\r\n");
    CHECK_VALUE("$-1\r\n");
    CHECK_VALUE("*-1\r\n");
    CHECK_VALUE("*0\r\n");
    CHECK_VALUE("_\r\n");
    CHECK_VALUE("#t\r\n");
    CHECK_VALUE(",1.5\r\n");
    CHECK_VALUE("(12345678901234567890\r\n");
    CHECK_VALUE("!3\r\nERR\r\n");
    CHECK_VALUE("=6\r\ntxt:hi\r\n");
    CHECK_VALUE("*3\r\n:1\r\n$-1\r\n*2\r\n+a\r\n*1\r\n$1\r\nx\r\n");
    CHECK_VALUE("%2\r\n+a\r\n:1\r\n+b\r\n~2\r\n_\r\n#f\r\n");
    CHECK_VALUE(">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$3\r\nmsg\r\n");
    CHECK_VALUE("|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n");

    /* only the first value counts */
    CHECK_EQ_LL(reply_value_len("+OK\r\n:1\r\n", 9), 5);
    CHECK_EQ_LL(reply_value_len("*1\r\n:1\r\n:2\r\n", 12), 8);

    /* deep nesting costs no stack */
    size_t depth = 200000, n = 0;
    char *deep = malloc(depth * 4 + 8);
    for (size_t i = 0; i < depth; i++, n += 4)
        memcpy(deep + n, "*1\r\n", 4);
    memcpy(deep + n, ":1\r\n", 4);
    CHECK_EQ_LL(reply_value_len(deep, n + 4), n + 4);
    CHECK_EQ_LL(reply_value_len(deep, n + 3), 0);
    free(deep);

    /* a huge count with few bytes is incomplete, and malformed input is 0 */
    CHECK_EQ_LL(reply_value_len("*9223372036854775807\r\n:1\r\n", 26), 0);
    CHECK_EQ_LL(reply_value_len("*99999999999999999999\r\n", 23), 0);
    CHECK_EQ_LL(reply_value_len("$-2\r\n", 5), 0);
    CHECK_EQ_LL(reply_value_len("$x\r\n", 4), 0);
    CHECK_EQ_LL(reply_value_len("?\r\n", 3), 0);
    CHECK_EQ_LL(reply_value_len("", 0), 0);

    /* what the encoder writes, it measures */
    struct reply r;
    reply_init(&r);
    for (int resp = 2; resp <= 3; resp++) {
        r.resp = resp;
        reply_clear(&r);
        reply_map(&r, 2);
        reply_bulk(&r, "k\r\n", 3);
        reply_double(&r, 2.5);
        reply_bulk_cstr(&r, "k2");
        reply_set(&r, 3);
        reply_null(&r);
        reply_bool(&r, 1);
        reply_verbatim(&r, "x", 1, "txt");
        size_t len = r.len;
        reply_int(&r, 5);
        CHECK_EQ_LL(reply_value_len(r.buf, r.len), len);
    }
    reply_deinit(&r);
}

int main(void)
{
    test_scalars();
    test_resp2_resp3();
    test_double();
    test_value_len();
    return check_done("test_reply");
}
