/*
 * test_resp: the RESP request parser against Redis 7.0's behaviour
 * (each expectation below was checked on a real redis-server 7.0).
 *
 * Most cases go through feed(), which plays a connection: it delivers the
 * input in chunks (all at once, at every split offset, byte by byte), moves
 * the unconsumed bytes into a fresh buffer before every call (so a parser
 * that kept a pointer instead of an offset reads freed memory under ASan),
 * and writes the commands it gets as text: arguments separated by A and
 * commands ended by C.
 */
#include "percore/resp.h"

#include "check.h"

#include <stdbool.h>
#include <stdlib.h>

#define A "\x02" /* between arguments */
#define C "\x01" /* after each command */
#define MAX_BULK (512LL * 1024 * 1024)

struct out {
    char *buf;
    size_t len, cap;
    char error[64];     /* the error text, "" if none */
    bool pending;       /* input ended in the middle of a command */
    bool need_ok;       /* every RESP_AGAIN asked for more than it had */
};

static void out_add(struct out *o, const void *p, size_t n)
{
    if (n == 0) /* an empty first argument: o->buf may still be NULL */
        return;
    if (o->len + n > o->cap) {
        o->cap = (o->len + n) * 2;
        o->buf = realloc(o->buf, o->cap);
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

static void out_cmd(struct out *o, const struct resp_parser *p)
{
    for (int i = 0; i < p->argc; i++) {
        if (i > 0)
            out_add(o, A, 1);
        out_add(o, p->argv[i].ptr, p->argv[i].len);
    }
    out_add(o, C, 1);
}

/* feed in[0..n): `first` bytes, then chunks of `step` bytes */
static void feed_max(const char *in, size_t n, size_t first, size_t step, long long max_bulk,
                     struct out *o)
{
    struct resp_parser p;
    char *buf = NULL;
    size_t have = 0, fed = 0;

    memset(o, 0, sizeof(*o));
    o->need_ok = true;
    resp_parser_init(&p);
    for (bool start = true;; start = false) {
        size_t chunk = start ? first : step;
        if (chunk > n - fed)
            chunk = n - fed;
        char *nb = malloc(have + chunk + 1);
        if (have > 0)
            memcpy(nb, buf, have);
        memcpy(nb + have, in + fed, chunk);
        free(buf);
        buf = nb;
        have += chunk;
        fed += chunk;
        for (;;) {
            size_t used = 12345;
            enum resp_status st = resp_parse(&p, buf, have, max_bulk, &used);
            if (st == RESP_ERROR) {
                snprintf(o->error, sizeof(o->error), "%s", p.error);
                goto done;
            }
            if (st == RESP_AGAIN) {
                if (used != 0 || p.need <= have)
                    o->need_ok = false;
                break;
            }
            if (used == 0 || used > have)
                o->need_ok = false;
            out_cmd(o, &p);
            memmove(buf, buf + used, have - used);
            have -= used;
        }
        if (fed == n)
            break;
    }
    o->pending = have > 0;
done:
    free(buf);
    resp_parser_deinit(&p);
}

static void feed(const char *in, size_t n, size_t first, size_t step, struct out *o)
{
    feed_max(in, n, first, step, MAX_BULK, o);
}

/* whole, byte by byte and at every split offset: always `want` */
#define CHECK_PARSE(in, want) check_parse(in, sizeof(in) - 1, want, sizeof(want) - 1, "", __LINE__)
#define CHECK_PARSE_ERR(in, want, err) check_parse(in, sizeof(in) - 1, want, sizeof(want) - 1, err, __LINE__)

static void check_one(const struct out *o, const char *want, size_t wlen, const char *err,
                      int line, size_t first, size_t step)
{
    check_count++;
    if (o->len != wlen || memcmp(o->buf ? o->buf : "", want, wlen) != 0 ||
        strcmp(o->error, err) != 0 || !o->need_ok || (!err[0] && o->pending)) {
        check_failures++;
        fprintf(stderr, "line %d (first %zu step %zu): got %zu bytes \"%.*s\" error \"%s\"%s%s\n",
                line, first, step, o->len, (int)(o->len > 100 ? 100 : o->len),
                o->buf ? o->buf : "", o->error, o->need_ok ? "" : " bad need/consumed",
                o->pending ? " pending" : "");
    }
}

static void check_parse(const char *in, size_t n, const char *want, size_t wlen, const char *err,
                        int line)
{
    struct out o;

    feed(in, n, n, n, &o);
    check_one(&o, want, wlen, err, line, n, n);
    free(o.buf);
    feed(in, n, 0, 1, &o);
    check_one(&o, want, wlen, err, line, 0, 1);
    free(o.buf);
    for (size_t k = 1; k < n; k++) {
        feed(in, n, k, n, &o);
        check_one(&o, want, wlen, err, line, k, n);
        free(o.buf);
    }
}

/* the input waits for more (no command, no error) */
static void check_waits(const char *in, size_t n, int line)
{
    struct out o;

    feed(in, n, n, n, &o);
    check_count++;
    if (o.len != 0 || o.error[0] || !o.pending || !o.need_ok) {
        check_failures++;
        fprintf(stderr, "line %d: expected to wait, got \"%.*s\" error \"%s\"\n", line,
                (int)o.len, o.buf ? o.buf : "", o.error);
    }
    free(o.buf);
}
#define CHECK_WAITS(in) check_waits(in, sizeof(in) - 1, __LINE__)

static void test_multibulk(void)
{
    CHECK_PARSE("*1\r\n$4\r\nPING\r\n", "PING" C);
    CHECK_PARSE("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n", "SET" A "k" A C);
    /* the payload is taken by its length: CR, LF and '$' inside are data */
    CHECK_PARSE("*2\r\n$4\r\nECHO\r\n$6\r\n\r\n$1\r\n\r\n", "ECHO" A "\r\n$1\r\n" C);
    /* *0 and negative counts are empty commands, then parsing goes on */
    CHECK_PARSE("*0\r\n*-1\r\n*-5\r\n*1\r\n$4\r\nPING\r\n", C C C "PING" C);
    /* the two bytes after a payload are not checked (Redis reads bulklen+2) */
    CHECK_PARSE("*1\r\n$4\r\nPINGxxPING\r\n", "PING" C "PING" C);
    CHECK_PARSE("*1\r\n$4\r\nPING\rPING\r\n", "PING" C "ING" C);
    /* nor is the byte after a header's CR */
    CHECK_PARSE("*1\rX$4\rYPING\r\n", "PING" C);
    CHECK_WAITS("*1\r\n$4\r\nPINGx");
    CHECK_WAITS("*1\r\n$4\r");
    CHECK_WAITS("*2\r\n$4\r\nPING\r\n");
    /* a NUL before the CR hides it, as strchr() does in Redis: wait */
    CHECK_WAITS("*1\r\n$3\0\r\nfoo\r\n");
    CHECK_WAITS("*1\0\r\n$3\r\nfoo\r\n");
    /* a NUL inside a payload is data */
    CHECK_PARSE("*2\r\n$3\r\na\0b\r\n$1\r\n\0\r\n", "a\0b" A "\0" C);
    /* counts up to INT_MAX are valid (Redis 7.0): they just wait for the args */
    CHECK_WAITS("*2147483647\r\n");
    CHECK_WAITS("*1048577\r\n$4\r\nPING\r\n");
}

static void test_multibulk_errors(void)
{
    static const char *bad_count[] = {"*abc\r\n", "*01\r\n", "*+1\r\n", "*\r\n", "* 1\r\n",
                                      "*-0\r\n", "*2147483648\r\n", "*99999999999999999999\r\n",
                                      "*1 \r\n"};
    static const char *bad_len[] = {"*1\r\n$-1\r\n", "*1\r\n$abc\r\n", "*1\r\n$01\r\n",
                                    "*1\r\n$ 4\r\n", "*1\r\n$+4\r\n", "*1\r\n$\r\n",
                                    "*1\r\n$-0\r\n", "*1\r\n$4x\r\n",
                                    "*1\r\n$536870913\r\n"};
    struct out o;

    for (size_t i = 0; i < sizeof(bad_count) / sizeof(bad_count[0]); i++)
        check_parse(bad_count[i], strlen(bad_count[i]), "", 0,
                    "Protocol error: invalid multibulk length", __LINE__);
    for (size_t i = 0; i < sizeof(bad_len) / sizeof(bad_len[0]); i++)
        check_parse(bad_len[i], strlen(bad_len[i]), "", 0, "Protocol error: invalid bulk length",
                    __LINE__);
    /* the error comes after the commands before it */
    CHECK_PARSE_ERR("PING\r\n*1\r\n$-1\r\n", "PING" C, "Protocol error: invalid bulk length");
    CHECK_PARSE_ERR("*1\r\n+a\r\n", "", "Protocol error: expected '$', got '+'");
    CHECK_PARSE_ERR("*2\r\n$1\r\na\r\n:1\r\n", "", "Protocol error: expected '$', got ':'");
    /* CR or LF in that message become spaces */
    CHECK_PARSE_ERR("*1\r\n\r\n", "", "Protocol error: expected '$', got ' '");
    CHECK_PARSE_ERR("*1\r\n\n\r\n", "", "Protocol error: expected '$', got ' '");

    /* bulk length above proto-max-bulk-len */
    feed_max("*1\r\n$101\r\n", 11, 11, 11, 100, &o);
    CHECK(strcmp(o.error, "Protocol error: invalid bulk length") == 0);
    free(o.buf);
    feed_max("*1\r\n$100\r\n", 11, 11, 11, 100, &o);
    CHECK(o.error[0] == '\0' && o.pending);
    free(o.buf);

    /* header lines: more than 64 KB without a CR */
    size_t n = RESP_INLINE_MAX + 1;
    char *big = malloc(n + 8);
    big[0] = '*';
    memset(big + 1, '1', n - 1);
    feed(big, n, n, n, &o);
    CHECK(strcmp(o.error, "Protocol error: too big mbulk count string") == 0);
    free(o.buf);
    feed(big, n - 1, n - 1, n - 1, &o); /* exactly 64 KB: still waiting */
    CHECK(o.error[0] == '\0' && o.pending);
    free(o.buf);
    feed(big, n, 1000, 1000, &o); /* the limit also holds when it grows by reads */
    CHECK(strcmp(o.error, "Protocol error: too big mbulk count string") == 0);
    free(o.buf);
    memcpy(big, "*1\r\n$", 5);
    memset(big + 5, '1', n);
    feed(big, n + 4, n + 4, n + 4, &o);
    CHECK(strcmp(o.error, "Protocol error: too big bulk count string") == 0);
    free(o.buf);
    feed(big, n + 3, n + 3, n + 3, &o);
    CHECK(o.error[0] == '\0' && o.pending);
    free(o.buf);
    /* a NUL that hides the CR makes a line too big in the end, as in Redis */
    memcpy(big, "*1\r\n$3\0", 7);
    memset(big + 7, '\r', n - 3);
    feed(big, n + 4, n + 4, n + 4, &o);
    CHECK(strcmp(o.error, "Protocol error: too big bulk count string") == 0);
    free(o.buf);
    free(big);
}

static void test_inline(void)
{
    CHECK_PARSE("PING\r\n", "PING" C);
    CHECK_PARSE("PING\n", "PING" C);
    CHECK_PARSE("SET  k\tv \r\n", "SET" A "k" A "v" C);
    /* empty lines are empty commands; only the last CR goes */
    CHECK_PARSE("\r\n\n   \r\nPING\r\r\n", C C C "PING" C);
    CHECK_PARSE("ECHO a\rb\r\n", "ECHO" A "a" A "b" C);
    /* \v and \f are skipped between words but do not end one */
    CHECK_PARSE("ECHO a\vb\r\n", "ECHO" A "a\vb" C);
    CHECK_PARSE("ECHO \va\f\r\n", "ECHO" A "a\f" C);
    /* double quotes: \xHH, \n \r \t \b \a, anything else escaped is itself */
    CHECK_PARSE("ECHO \"a\\x41\\n\\z\"\r\n", "ECHO" A "aA\nz" C);
    CHECK_PARSE("ECHO \"\\r\\t\\b\\a\\\\\\\"\"\r\n", "ECHO" A "\r\t\b\a\\\"" C);
    CHECK_PARSE("ECHO \"\\xff\\xFf\\x0a\\x00\"\r\n", "ECHO" A "\xff\xff\n\0" C);
    CHECK_PARSE("ECHO \"\\x4\"\r\n", "ECHO" A "x4" C);
    CHECK_PARSE("ECHO \"\\xg1\"\r\n", "ECHO" A "xg1" C);
    CHECK_PARSE("ECHO \"\" \"\"\r\n", "ECHO" A A C);
    CHECK_PARSE("ECHO \"a'b\" \"a b\"\r\n", "ECHO" A "a'b" A "a b" C);
    /* single quotes: only \' is an escape */
    CHECK_PARSE("ECHO 'a\\'b'\r\n", "ECHO" A "a'b" C);
    CHECK_PARSE("ECHO 'a\\nb' '\\x41' 'a\"b'\r\n", "ECHO" A "a\\nb" A "\\x41" A "a\"b" C);
    /* a quote inside a word starts quoting; the bytes before it stay */
    CHECK_PARSE("ECHO a\"b c\"\r\n", "ECHO" A "ab c" C);
    /* a closing quote followed by a space, a tab or the end */
    CHECK_PARSE("ECHO \"a\" \r\n", "ECHO" A "a" C);
    CHECK_PARSE("ECHO \"a\"\tb\r\n", "ECHO" A "a" A "b" C);
    CHECK_PARSE("ECHO \"a\"\vb\r\n", "ECHO" A "a" A "b" C);
    /* unquoted backslashes are plain bytes */
    CHECK_PARSE("ECHO \\x41\r\n", "ECHO" A "\\x41" C);
    /* bytes >= 0x80 are neither spaces nor quotes */
    CHECK_PARSE("ECHO \xa0\xff\r\n", "ECHO" A "\xa0\xff" C);
    /* a NUL before the LF hides it: wait (Redis waits until the 64 KB limit) */
    CHECK_WAITS("PING\0\r\nPING\r\n");
}

static void test_inline_errors(void)
{
    static const char *unbalanced[] = {
        "ECHO \"abc\r\n", "ECHO \"a\"b\r\n", "ECHO 'a'b\r\n", "ECHO \"a\\\"\r\n",
        "ECHO \"a\\\r\n", "ECHO 'abc\r\n", "ECHO 'a\\'\r\n", "\"\r\n", "ECHO \"a\"\"b\"\r\n",
    };
    struct out o;

    for (size_t i = 0; i < sizeof(unbalanced) / sizeof(unbalanced[0]); i++)
        check_parse(unbalanced[i], strlen(unbalanced[i]), "", 0,
                    "Protocol error: unbalanced quotes in request", __LINE__);
    CHECK_PARSE_ERR("PING\r\nECHO \"x\r\nPING\r\n", "PING" C,
                    "Protocol error: unbalanced quotes in request");

    size_t n = RESP_INLINE_MAX + 1;
    char *big = malloc(n + 2);
    memset(big, 'a', n);
    feed(big, n, n, n, &o);
    CHECK(strcmp(o.error, "Protocol error: too big inline request") == 0);
    free(o.buf);
    feed(big, n - 1, n - 1, n - 1, &o);
    CHECK(o.error[0] == '\0' && o.pending);
    free(o.buf);
    feed(big, n, 4096, 4096, &o);
    CHECK(strcmp(o.error, "Protocol error: too big inline request") == 0);
    free(o.buf);
    /* a longer line that arrives whole with its LF is fine, as in Redis */
    big[n] = '\n';
    feed(big, n + 1, n + 1, n + 1, &o);
    CHECK(o.error[0] == '\0' && !o.pending && o.len == n + 1);
    free(o.buf);
    /* NUL in an inline line: waits, then too big */
    memcpy(big, "PING\0\r\n", 7);
    feed(big, n, n, n, &o);
    CHECK(strcmp(o.error, "Protocol error: too big inline request") == 0);
    free(o.buf);
    free(big);
}

/* a pipeline of every kind of command, cut at every offset and byte by byte */
static void test_pipeline(void)
{
    CHECK_PARSE("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nva\r\nl\r\n"
                "PING\r\n"
                "ECHO \"hi there\" 'x' \\x41\r\n"
                "*0\r\n"
                "\r\n"
                "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n"
                "  GET   k  \n"
                "*-1\r\n"
                "*1\r\n$4\r\nPINGxx"
                "ECHO a\"b c\" \"\\x00\\x01\"\r\n"
                "*2\r\n$3\r\nDEL\r\n$2\r\n\0\0\r\n"
                "*1\r\n$10\r\n0123456789\r\n",
                "SET" A "key" A "va\r\nl" C
                "PING" C
                "ECHO" A "hi there" A "x" A "\\x41" C
                C
                C
                "ECHO" A C
                "GET" A "k" C
                C
                "PING" C
                "ECHO" A "ab c" A "\0\1" C
                "DEL" A "\0\0" C
                "0123456789" C);
}

/* where argv points, and the need hint */
static void test_zero_copy_and_need(void)
{
    struct resp_parser p;
    size_t used;
    static const char in[] = "SET k \"a b\" v\r\n";
    static const char mb[] = "*2\r\n$3\r\nGET\r\n$100000\r\n";

    resp_parser_init(&p);
    CHECK(resp_parse(&p, in, sizeof(in) - 1, MAX_BULK, &used) == RESP_OK);
    CHECK_EQ_LL(used, sizeof(in) - 1);
    CHECK_EQ_LL(p.argc, 4);
    CHECK(p.argv[0].ptr == in && p.argv[1].ptr == in + 4 && p.argv[3].ptr == in + 12);
    CHECK(p.argv[2].ptr == p.inline_copy);
    CHECK_MEM(p.argv[2].ptr, p.argv[2].len, "a b");

    /* need: the header, then the whole payload and its CRLF */
    CHECK(resp_parse(&p, mb, 3, MAX_BULK, &used) == RESP_AGAIN);
    CHECK_EQ_LL(used, 0);
    CHECK_EQ_LL(p.need, 4);
    CHECK(resp_parse(&p, mb, 7, MAX_BULK, &used) == RESP_AGAIN);
    CHECK_EQ_LL(p.need, 8);
    CHECK(resp_parse(&p, mb, 10, MAX_BULK, &used) == RESP_AGAIN);
    CHECK_EQ_LL(p.need, 13);
    CHECK(resp_parse(&p, mb, sizeof(mb) - 1, MAX_BULK, &used) == RESP_AGAIN);
    CHECK_EQ_LL(p.need, sizeof(mb) - 1 + 100002);
    char *big = malloc(sizeof(mb) - 1 + 100002);
    memcpy(big, mb, sizeof(mb) - 1);
    memset(big + sizeof(mb) - 1, 'v', 100000);
    memcpy(big + sizeof(mb) - 1 + 100000, "\r\n", 2);
    /* half the payload: same need, the bulk length is kept, not rescanned */
    CHECK(resp_parse(&p, big, sizeof(mb) - 1 + 50000, MAX_BULK, &used) == RESP_AGAIN);
    CHECK_EQ_LL(p.need, sizeof(mb) - 1 + 100002);
    CHECK_EQ_LL(p.bulk, 100000);
    CHECK_EQ_LL(p.pos, sizeof(mb) - 1);
    CHECK(resp_parse(&p, big, sizeof(mb) - 1 + 100002, MAX_BULK, &used) == RESP_OK);
    CHECK_EQ_LL(used, sizeof(mb) - 1 + 100002);
    CHECK_EQ_LL(p.argc, 2);
    CHECK(p.argv[1].ptr == big + sizeof(mb) - 1 && p.argv[1].len == 100000);

    /* a long line is searched once, not from its start on every read */
    memset(big, 'a', 60000);
    big[60000] = '\n';
    for (size_t n = 1; n <= 60000; n += 7) {
        CHECK(resp_parse(&p, big, n, MAX_BULK, &used) == RESP_AGAIN);
        if (p.scan != n) {
            CHECK(p.scan == n);
            break;
        }
    }
    CHECK(resp_parse(&p, big, 60001, MAX_BULK, &used) == RESP_OK);
    CHECK_EQ_LL(p.argc, 1);
    CHECK(p.argv[0].ptr == big && p.argv[0].len == 60000);

    /* reset forgets a partial command */
    CHECK(resp_parse(&p, "*2\r\n$3\r\nGET\r\n", 13, MAX_BULK, &used) == RESP_AGAIN);
    resp_parser_reset(&p);
    CHECK(resp_parse(&p, "PING\r\n", 6, MAX_BULK, &used) == RESP_OK);
    CHECK_EQ_LL(p.argc, 1);
    CHECK_MEM(p.argv[0].ptr, p.argv[0].len, "PING");

    free(big);
    resp_parser_deinit(&p);
    resp_parser_deinit(&p); /* idempotent */
}

/* a million arguments: argv grows with the args, not with the count */
static void test_huge_count(void)
{
    const size_t count = 1000000;
    size_t n = 0, used;
    char *in = malloc(16 + count * 7 + 32);
    struct resp_parser p;
    struct out o;

    n += (size_t)sprintf(in, "*%zu\r\n", count);
    for (size_t i = 0; i < count; i++) {
        memcpy(in + n, "$1\r\n", 4);
        in[n + 4] = (char)('a' + i % 26);
        memcpy(in + n + 5, "\r\n", 2);
        n += 7;
    }
    resp_parser_init(&p);
    CHECK(resp_parse(&p, in, 10, MAX_BULK, &used) == RESP_AGAIN);
    CHECK(p.argv_cap <= 1024);
    CHECK(resp_parse(&p, in, n, MAX_BULK, &used) == RESP_OK);
    CHECK_EQ_LL(used, n);
    CHECK_EQ_LL(p.argc, (long long)count);
    bool all = true;
    for (size_t i = 0; i < count; i++)
        all = all && p.argv[i].len == 1 && p.argv[i].ptr[0] == 'a' + (char)(i % 26);
    CHECK(all);
    /* argv shrinks back after the huge command */
    CHECK(resp_parse(&p, "*1\r\n$4\r\nPING\r\n", 14, MAX_BULK, &used) == RESP_OK);
    CHECK(p.argv_cap <= 1024);
    resp_parser_deinit(&p);

    /* the same, delivered in 64 KB reads, to a buffer that moves */
    feed(in, n, 65536, 65536, &o);
    CHECK(o.error[0] == '\0' && !o.pending && o.len == count * 2);
    free(o.buf);
    free(in);

    /* a huge count with few args allocates little */
    resp_parser_init(&p);
    CHECK(resp_parse(&p, "*2147483647\r\n$1\r\nx\r\n", 20, MAX_BULK, &used) == RESP_AGAIN);
    CHECK(p.argv_cap <= 1024);
    resp_parser_deinit(&p);
}

/* a whole command is parsed in one pass (parse_whole) when its counts are short and within the limits,
 * else by the general path: both give Redis's answer at the edges between them */
static void test_one_pass_edges(void)
{
    struct resp_parser p;
    size_t used;
    struct out o;

    /* 9 digits are taken in one pass, 10 only by the general path: the same answer */
    feed_max("*1\r\n$999999999\r\n", 17, 17, 17, 1LL << 40, &o);
    CHECK(o.error[0] == '\0' && o.pending);
    free(o.buf);
    feed_max("*1\r\n$1000000000\r\n", 18, 18, 18, 1LL << 40, &o);
    CHECK(o.error[0] == '\0' && o.pending);
    free(o.buf);
    feed_max("*1\r\n$100\r\n", 11, 11, 11, 99, &o);
    CHECK(strcmp(o.error, "Protocol error: invalid bulk length") == 0);
    free(o.buf);
    CHECK_PARSE("*1\r\n$0\r\n\r\n*1\r\n$1\r\nx\r\n", "" C "x" C);
    CHECK_PARSE_ERR("*1\r\n$00\r\n\r\n", "", "Protocol error: invalid bulk length");
    CHECK_PARSE_ERR("*1\r\n$1 \r\nx\r\n", "", "Protocol error: invalid bulk length");
    CHECK_PARSE_ERR("*1\r\n$\r\n", "", "Protocol error: invalid bulk length");
    CHECK_WAITS("*100000000\r\n$1\r\nx\r\n");

    /* an unauthenticated client: at most 10 arguments, bulks up to 16 KB */
    static const char ten[] = "*10\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n"
                              "$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n";
    resp_parser_init(&p);
    p.unauthenticated = true;
    CHECK(resp_parse(&p, ten, sizeof(ten) - 1, MAX_BULK, &used) == RESP_OK);
    CHECK_EQ_LL(p.argc, 10);
    CHECK_EQ_LL(used, sizeof(ten) - 1);
    CHECK(resp_parse(&p, "*11\r\n$1\r\na\r\n", 14, MAX_BULK, &used) == RESP_ERROR);
    CHECK(strcmp(p.error, "Protocol error: unauthenticated multibulk length") == 0);
    resp_parser_deinit(&p);
    size_t big = 16385 + 32;
    char *in = malloc(big);
    for (int over = 0; over <= 1; over++) {
        size_t n = (size_t)sprintf(in, "*1\r\n$%d\r\n", 16384 + over);
        memset(in + n, 'v', (size_t)(16384 + over));
        n += (size_t)(16384 + over);
        memcpy(in + n, "\r\n", 2);
        n += 2;
        resp_parser_init(&p);
        p.unauthenticated = true;
        enum resp_status st = resp_parse(&p, in, n, MAX_BULK, &used);
        if (over) {
            CHECK(st == RESP_ERROR && strcmp(p.error, "Protocol error: unauthenticated bulk length") == 0);
        } else {
            CHECK(st == RESP_OK && p.argc == 1 && p.argv[0].len == 16384 && used == n);
        }
        resp_parser_deinit(&p);
    }
    free(in);
}

int main(void)
{
    test_multibulk();
    test_multibulk_errors();
    test_inline();
    test_inline_errors();
    test_pipeline();
    test_zero_copy_and_need();
    test_huge_count();
    test_one_pass_edges();
    return check_done("test_resp");
}
