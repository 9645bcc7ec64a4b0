/*
 * test_util: util.c against the behaviour of Redis 7.0's util.c
 * (stringmatchlen, string2ll, string2ld, ld2string human mode, string2d, ll2string).
 */
#include "percore/util.h"

#include "check.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool gm(const char *p, const char *s)
{
    return util_glob_match(p, strlen(p), s, strlen(s), false);
}

static bool ll(const char *s, long long *v)
{
    return util_str_to_ll(s, strlen(s), v);
}

static void test_glob(void)
{
    CHECK(gm("*", "anything"));
    CHECK(gm("h?llo", "hello"));
    CHECK(gm("h?llo", "hallo"));
    CHECK(!gm("h?llo", "hllo"));
    CHECK(gm("h*llo", "hllo"));
    CHECK(gm("h*llo", "heeeello"));
    CHECK(gm("h[ae]llo", "hello"));
    CHECK(!gm("h[ae]llo", "hillo"));
    CHECK(gm("h[^e]llo", "hallo"));
    CHECK(!gm("h[^e]llo", "hello"));
    CHECK(gm("h[a-b]llo", "hbllo"));
    CHECK(gm("h[b-a]llo", "hallo")); /* reversed range */
    CHECK(!gm("h[a-b]llo", "hcllo"));
    CHECK(gm("h\\*llo", "h*llo"));
    CHECK(!gm("h\\*llo", "hello"));
    CHECK(gm("[\\]]", "]"));
    CHECK(gm("a*", "a"));
    CHECK(gm("a**", "a"));
    CHECK(gm("*a*b*", "xxaxxbxx"));
    CHECK(!gm("*a*b*", "xxbxxaxx"));
    /* Redis 7.0: a non-empty pattern never matches the empty string */
    CHECK(!gm("*", ""));
    CHECK(!gm("**", ""));
    CHECK(gm("", ""));
    CHECK(!gm("", "a"));
    /* unterminated class: '[' at the end */
    CHECK(!gm("[", "a"));
    CHECK(!gm("a[", "a"));
    CHECK(!gm("[abc", "d"));
    CHECK(gm("[abc", "a"));
    /* trailing backslash matches itself */
    CHECK(gm("a\\", "a\\"));
    /* nocase */
    CHECK(util_glob_match("HeLLo", 5, "hello", 5, true));
    CHECK(!util_glob_match("HeLLo", 5, "hello", 5, false));
    CHECK(util_glob_match("[A-C]x", 6, "bx", 2, true));
    /* binary safe, bounded: pattern bytes past plen are never read */
    {
        char pat[4] = {'a', '*', 'x', 'x'};
        CHECK(util_glob_match(pat, 2, "abc", 3, false));
        char pat2[3] = {'[', ']', ']'};
        CHECK(!util_glob_match(pat2, 1, "]", 1, false));
        CHECK(util_glob_match("a\0b", 3, "a\0b", 3, false));
    }
    /* abusive pattern: the nesting limit and pruning keep this fast */
    {
        char pat[4001], str[4001];
        for (int i = 0; i < 4000; i++) {
            pat[i] = (i % 2) ? 'a' : '*';
            str[i] = 'a';
        }
        pat[4000] = str[4000] = 0;
        pat[3999] = 'b';
        CHECK(!util_glob_match(pat, 4000, str, 4000, false));
    }
}

static void test_ll(void)
{
    long long v = 42;
    CHECK(!ll("+1", &v));
    CHECK(!ll(" 1", &v));
    CHECK(!ll("1 ", &v));
    CHECK(!ll("01", &v));
    CHECK(!ll("", &v));
    CHECK(!ll("-", &v));
    CHECK(!ll("-0", &v));
    CHECK(!ll("1.0", &v));
    CHECK(ll("0", &v) && v == 0);
    CHECK(ll("-1", &v) && v == -1);
    CHECK(ll("99", &v) && v == 99);
    CHECK(ll("-9223372036854775808", &v) && v == LLONG_MIN);
    CHECK(!ll("-9223372036854775809", &v));
    CHECK(ll("9223372036854775807", &v) && v == LLONG_MAX);
    CHECK(!ll("9223372036854775808", &v));
    CHECK(!ll("18446744073709551616", &v));
    CHECK(!util_str_to_ll("12\0", 3, &v));
    CHECK(util_str_to_ll("123", 2, &v) && v == 12);
}

/* util_ll_to_str writes v in decimal, exactly printf's %lld, and nothing past it */
static void test_ll_to_str(void)
{
    static const long long edges[] = {0, -9, 9, 10, -10, 99, 100, -100, 1000000007, LLONG_MAX, LLONG_MIN, LLONG_MIN + 1};
    char buf[24], want[32];
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        memset(buf, 'x', sizeof buf);
        int n = snprintf(want, sizeof want, "%lld", edges[i]);
        CHECK_EQ_LL(util_ll_to_str(buf, edges[i]), n);
        CHECK(memcmp(buf, want, (size_t)n) == 0);
        CHECK(buf[n] == 'x');
    }
    for (long long v = -100000; v <= 100000; v += 7) {
        int n = snprintf(want, sizeof want, "%lld", v);
        if (util_ll_to_str(buf, v) != n || memcmp(buf, want, (size_t)n) != 0) {
            CHECK(memcmp(buf, want, (size_t)n) == 0);
            break;
        }
    }
}

static void test_ld(void)
{
    long double v;
    char buf[5200];
    int n;

    CHECK(util_str_to_ld("1.5", 3, &v) && v == 1.5L);
    CHECK(util_str_to_ld("0x10", 4, &v) && v == 16.0L);
    CHECK(util_str_to_ld("5.0e3", 5, &v) && v == 5000.0L);
    CHECK(!util_str_to_ld(" 1", 2, &v));
    CHECK(!util_str_to_ld("1 ", 2, &v));
    CHECK(!util_str_to_ld("", 0, &v));
    CHECK(!util_str_to_ld("abc", 3, &v));
    CHECK(!util_str_to_ld("nan", 3, &v));
    CHECK(util_str_to_ld("inf", 3, &v) && isinf(v)); /* INCRBYFLOAT rejects it later */
    CHECK(!util_str_to_ld("1e5000", 6, &v));          /* overflow */
    CHECK(!util_str_to_ld("1e-5000", 7, &v));         /* underflow to zero */

    n = util_ld_to_str(buf, sizeof(buf), 3.0L);
    CHECK_MEM(buf, (size_t)n, "3");
    n = util_ld_to_str(buf, sizeof(buf), 10.5L);
    CHECK_MEM(buf, (size_t)n, "10.5");
    n = util_ld_to_str(buf, sizeof(buf), 5000.0L);
    CHECK_MEM(buf, (size_t)n, "5000");
    n = util_ld_to_str(buf, sizeof(buf), -0.0L);
    CHECK_MEM(buf, (size_t)n, "0");
    n = util_ld_to_str(buf, sizeof(buf), 0.1L + 0.2L);
    CHECK_MEM(buf, (size_t)n, "0.3");
    n = util_ld_to_str(buf, sizeof(buf), 1.0L / 0.0L);
    CHECK_MEM(buf, (size_t)n, "inf");
    n = util_ld_to_str(buf, sizeof(buf), -1.0L / 0.0L);
    CHECK_MEM(buf, (size_t)n, "-inf");
    n = util_ld_to_str(buf, 4, 123456.0L);
    CHECK_EQ_LL(n, 0); /* no room */
    {
        long double a, b;
        CHECK(util_str_to_ld("10.50", 5, &a) && util_str_to_ld("0.1", 3, &b));
        n = util_ld_to_str(buf, sizeof(buf), a + b);
        CHECK_MEM(buf, (size_t)n, "10.6");
    }
}

static void test_double(void)
{
    double d;
    CHECK(util_str_to_double("1.5", 3, &d) && d == 1.5);
    CHECK(util_str_to_double("-inf", 4, &d) && isinf(d) && d < 0);
    CHECK(util_str_to_double("1e10", 4, &d) && d == 1e10);
    CHECK(!util_str_to_double("nan", 3, &d));
    CHECK(!util_str_to_double(" 1", 2, &d));
    CHECK(!util_str_to_double("1x", 2, &d));
    CHECK(!util_str_to_double("", 0, &d));
    CHECK(!util_str_to_double("1e400", 5, &d));
    CHECK(util_str_to_double("1.5junk", 3, &d) && d == 1.5); /* counted, not NUL-terminated */
    {
        /* longer than the stack buffer */
        char big[300];
        memset(big, '0', sizeof(big));
        big[0] = '1';
        big[1] = '.';
        CHECK(util_str_to_double(big, sizeof(big), &d) && d == 1.0);
    }
}

static void test_misc(void)
{
    /* memcmp order, a prefix before what it prefixes, bytes unsigned */
    CHECK(util_bytes_cmp("ab", 2, "ab", 2) == 0);
    CHECK(util_bytes_cmp("ab", 2, "abc", 3) < 0 && util_bytes_cmp("abc", 3, "ab", 2) > 0);
    CHECK(util_bytes_cmp("abd", 3, "abc", 3) > 0 && util_bytes_cmp("", 0, "a", 1) < 0);
    CHECK(util_bytes_cmp("\xff", 1, "a", 1) > 0 && util_bytes_cmp("a\0b", 3, "a\0c", 3) < 0);
    CHECK(util_eq_nocase("GeT", 3, "get"));
    CHECK(!util_eq_nocase("GeT", 2, "get"));
    CHECK(!util_eq_nocase("gets", 4, "get"));
    CHECK(!util_eq_nocase("g\0t", 3, "get"));
    {
        long long a = util_ms_time(), b = util_us_time();
        CHECK(a > 1600000000000LL);
        CHECK(b / 1000 >= a);
    }
}

int main(void)
{
    test_glob();
    test_ll();
    test_ld();
    test_ll_to_str();
    test_double();
    test_misc();
    return check_done("test_util");
}
