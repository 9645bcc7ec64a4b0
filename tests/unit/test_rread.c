/*
 * test_rread: the RESP reply reader.  Each kind of value read (integers,
 * bulk, verbatim and blob-error strings, nulls, simple lines, aggregate
 * headers) and skipped whole (nested arrays, maps, sets, pushes,
 * attributes); what the encoder writes in RESP2 and RESP3 read back;
 * malformed and truncated input refused with the cursor left in place, for
 * every proper prefix of a valid value.
 */
#include "percore/reply.h"
#include "percore/rread.h"

#include "check.h"

#include <string.h>

static struct rread at(const char *s)
{
    struct rread r;
    rread_init(&r, s, strlen(s));
    return r;
}

static void test_scalars(void)
{
    struct rread r = at(":42\r\n:-7\r\n+OK\r\n-ERR no\r\n,1.5\r\n#t\r\n(123456789012345678901\r\n");
    long long v;
    const char *s;
    size_t n;
    CHECK(rread_type(&r) == ':');
    CHECK(!rread_bulk(&r, &s, &n)); /* the wrong kind: refused, not moved */
    CHECK(rread_int(&r, &v) && v == 42);
    CHECK(rread_int(&r, &v) && v == -7);
    CHECK(!rread_int(&r, &v));
    CHECK(rread_line(&r, &s, &n));
    CHECK_MEM(s, n, "OK");
    CHECK(rread_is_error(&r));
    CHECK(rread_line(&r, &s, &n));
    CHECK_MEM(s, n, "ERR no");
    CHECK(rread_line(&r, &s, &n));
    CHECK_MEM(s, n, "1.5");
    CHECK(rread_line(&r, &s, &n));
    CHECK_MEM(s, n, "t");
    CHECK(rread_line(&r, &s, &n));
    CHECK_MEM(s, n, "123456789012345678901");
    CHECK(rread_type(&r) == 0 && rread_left(&r) == 0);
    CHECK(!rread_line(&r, &s, &n) && !rread_skip(&r));

    /* integers are Redis's string2ll: no "+", no leading zeros, no overflow */
    r = at(":+1\r\n");
    CHECK(!rread_int(&r, &v));
    r = at(":01\r\n");
    CHECK(!rread_int(&r, &v));
    r = at(":9223372036854775808\r\n");
    CHECK(!rread_int(&r, &v));
    r = at(":-9223372036854775808\r\n");
    CHECK(rread_int(&r, &v) && v == -9223372036854775807LL - 1);

    const char *parts[] = {":3\r\n", "-ERR x\r\n", ":-1\r\n", "$1\r\n5\r\n", ":10\r\n"};
    size_t lens[5];
    for (int i = 0; i < 5; i++)
        lens[i] = strlen(parts[i]);
    CHECK_EQ_LL(rread_int_sum(5, parts, lens), 12);
}

static void test_strings(void)
{
    static const char bin[] = "$6\r\na\r\nb\0c\r\n$0\r\n\r\n$-1\r\n_\r\n=8\r\ntxt:some\r\n!5\r\nERR x\r\n";
    struct rread r;
    rread_init(&r, bin, sizeof bin - 1);
    const char *s;
    size_t n;
    CHECK(rread_bulk(&r, &s, &n) && n == 6 && memcmp(s, "a\r\nb\0c", 6) == 0); /* CRLF inside: by length */
    CHECK(rread_bulk(&r, &s, &n) && s && n == 0);
    CHECK(rread_bulk(&r, &s, &n) && s == NULL);
    CHECK(rread_bulk(&r, &s, &n) && s == NULL);
    CHECK(rread_bulk(&r, &s, &n));
    CHECK_MEM(s, n, "some");
    CHECK(rread_bulk(&r, &s, &n));
    CHECK_MEM(s, n, "ERR x");
    CHECK(rread_left(&r) == 0);

    /* a length that is not one, or a payload without its CRLF */
    static const char *bad[] = {"$-2\r\n", "$x\r\n", "$1234567890123456789\r\n", "$3\r\nabcd\r\n",
                                "$3\r\nab\r\n", "=-1\r\n", "_x\r\n", "$2\r\nab", "$2\nab\r\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = at(bad[i]);
        CHECK(!rread_bulk(&r, &s, &n));
        CHECK(!rread_skip(&r));
        CHECK(r.p == bad[i]);
    }
}

static void test_aggregates(void)
{
    struct rread r = at("*2\r\n*-1\r\n%1\r\n~0\r\n>3\r\n|1\r\n");
    char t;
    long long n;
    CHECK(rread_agg(&r, &t, &n) && t == '*' && n == 2);
    CHECK(rread_agg(&r, &t, &n) && t == '*' && n == -1);
    CHECK(rread_agg(&r, &t, &n) && t == '%' && n == 1);
    CHECK(rread_agg(&r, &t, &n) && t == '~' && n == 0);
    CHECK(rread_agg(&r, &t, &n) && t == '>' && n == 3);
    CHECK(rread_agg(&r, &t, &n) && t == '|' && n == 1);
    r = at("%-1\r\n");
    CHECK(!rread_agg(&r, &t, &n)); /* only an array is null */
    r = at("$1\r\nx\r\n");
    CHECK(!rread_agg(&r, &t, &n) && r.p[0] == '$');
}

/* the whole of s is one value: skipped exactly; every proper prefix is refused and leaves the cursor */
static void check_whole(const char *s, size_t n, int line)
{
    struct rread r;
    rread_init(&r, s, n);
    if (!rread_skip(&r) || rread_left(&r) != 0) {
        CHECK(!"a whole value skipped");
        fprintf(stderr, "line %d: left %zu\n", line, rread_left(&r));
    }
    for (size_t k = 0; k < n; k++) {
        rread_init(&r, s, k);
        if (rread_skip(&r) || r.p != s) {
            CHECK(!"a truncated value refused");
            fprintf(stderr, "line %d: prefix %zu taken\n", line, k);
            break;
        }
    }
}
#define WHOLE(lit) check_whole(lit, sizeof(lit) - 1, __LINE__)

static void test_skip(void)
{
    WHOLE("*3\r\n*2\r\n:1\r\n$1\r\na\r\n*0\r\n*1\r\n*1\r\n_\r\n");
    WHOLE("%2\r\n+k\r\n~2\r\n,1.5\r\n#f\r\n$1\r\nq\r\n>2\r\n$7\r\nmessage\r\n(1\r\n");
    WHOLE("|1\r\n+key\r\n+attr\r\n*1\r\n:5\r\n"); /* an attribute, then the value it describes */
    WHOLE("*2\r\n*-1\r\n$-1\r\n");
    WHOLE("=8\r\ntxt:a\r\nb\r\n");

    /* two values back to back: one at a time */
    struct rread r = at("*1\r\n:1\r\n+OK\r\n");
    CHECK(rread_skip(&r) && rread_type(&r) == '+');
    CHECK(rread_skip(&r) && rread_left(&r) == 0);

    /* deep nesting costs no stack */
    static char deep[4 * 100000 + 4];
    size_t n = 0;
    for (int i = 0; i < 100000; i++) {
        memcpy(deep + n, "*1\r\n", 4);
        n += 4;
    }
    memcpy(deep + n, ":1\r\n", 4);
    rread_init(&r, deep, n + 4);
    CHECK(rread_skip(&r) && rread_left(&r) == 0);
    rread_init(&r, deep, n + 3);
    CHECK(!rread_skip(&r));

    /* a header announcing more than the bytes could hold, unknown types */
    r = at("*9223372036854775807\r\n:1\r\n");
    CHECK(!rread_skip(&r));
    r = at("*99999999999999999999\r\n");
    CHECK(!rread_skip(&r));
    r = at("?\r\n");
    CHECK(!rread_skip(&r));
    r = at("+no CRLF");
    CHECK(!rread_skip(&r));
}

/* what the encoder writes, RESP2 and RESP3, reads back value by value */
static void test_encoded(void)
{
    for (int resp = 2; resp <= 3; resp++) {
        struct reply out;
        reply_init(&out);
        out.resp = resp;
        reply_map(&out, 2);
        reply_bulk(&out, "k", 1);
        reply_double(&out, 2.5);
        reply_bulk(&out, "s", 1);
        reply_set(&out, 2);
        reply_int(&out, -3);
        reply_null(&out);
        reply_null_array(&out);
        reply_bool(&out, 1);
        reply_verbatim(&out, "hello", 5, "txt");
        reply_error(&out, "ERR bad");
        struct rread r;
        rread_init(&r, out.buf, out.len);
        char t;
        long long n, v;
        const char *s;
        size_t len;
        CHECK(rread_agg(&r, &t, &n) && t == (resp == 3 ? '%' : '*') && n == (resp == 3 ? 2 : 4));
        CHECK(rread_bulk(&r, &s, &len));
        CHECK_MEM(s, len, "k");
        if (resp == 3) {
            CHECK(rread_line(&r, &s, &len));
        } else {
            CHECK(rread_bulk(&r, &s, &len));
        }
        CHECK_MEM(s, len, "2.5");
        CHECK(rread_skip(&r)); /* "s" */
        CHECK(rread_agg(&r, &t, &n) && t == (resp == 3 ? '~' : '*') && n == 2);
        CHECK(rread_int(&r, &v) && v == -3);
        CHECK(rread_bulk(&r, &s, &len) && s == NULL);
        struct rread before = r;
        CHECK(rread_skip(&r) && (resp == 3 ? before.p[0] == '_' : before.p[0] == '*'));
        CHECK(rread_skip(&r)); /* the boolean: #t or :1 */
        CHECK(rread_bulk(&r, &s, &len));
        CHECK_MEM(s, len, "hello");
        CHECK(rread_is_error(&r) && rread_line(&r, &s, &len));
        CHECK_MEM(s, len, "ERR bad");
        CHECK(rread_left(&r) == 0);
        struct rread whole;
        rread_init(&whole, out.buf, out.len);
        CHECK(rread_skip(&whole)); /* the map, its pairs and all */
        CHECK_EQ_LL(reply_value_len(out.buf, out.len), whole.p - out.buf);
        reply_deinit(&out);
    }
}

int main(void)
{
    test_scalars();
    test_strings();
    test_aggregates();
    test_skip();
    test_encoded();
    return check_done("test_rread");
}
