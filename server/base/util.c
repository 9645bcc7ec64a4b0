/*
 * util: small string helpers with Redis 7.0's exact semantics.
 *
 * Design: these are the parsing and matching rules that decide reply bytes
 * (what counts as an integer, a float, a glob match), so they follow Redis's
 * util.c step for step rather than libc conveniences.  The one deliberate
 * difference is memory safety: Redis's strings are NUL-terminated sds and
 * its code peeks one byte past the end (pattern[1], *pattern); our arguments
 * point into a read buffer, so every such peek is bounded and reads as NUL,
 * which is exactly what Redis sees there.
 *
 * Threading: every function is pure (no shared state) and may be called by
 * any thread.
 */
#include "percore/util.h"

#include "percore/mem.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

const char util_digits2[201] = "0001020304050607080910111213141516171819"
                                "2021222324252627282930313233343536373839"
                                "4041424344454647484950515253545556575859"
                                "6061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";

/* Redis MAX_LONG_DOUBLE_CHARS: the longest input string2ld accepts, minus one */
#define UTIL_LD_MAX_CHARS (5 * 1024)

/* byte i of a counted string, NUL past the end (what Redis reads from an sds) */
static inline int at(const char *p, int len, int i)
{
    return (i >= 0 && i < len) ? (unsigned char)p[i] : 0;
}

/*
 * Redis stringmatchlen_impl with the nesting limit (CVE-2022-36021) and the
 * skipLongerMatches pruning.  `p`/`plen` and `s`/`slen` walk forward exactly
 * as in Redis.  Bytes are compared as chars (signed on x86) like Redis does
 * for ranges.
 */
static int match_impl(const char *pattern, int patternLen, const char *string, int stringLen,
                      int nocase, int *skipLongerMatches, int nesting)
{
    /* Protection against abusive patterns. */
    if (nesting > 1000)
        return 0;

    while (patternLen && stringLen) {
        switch (pattern[0]) {
        case '*':
            while (patternLen && at(pattern, patternLen, 1) == '*') {
                pattern++;
                patternLen--;
            }
            if (patternLen == 1)
                return 1; /* match */
            while (stringLen) {
                if (match_impl(pattern + 1, patternLen - 1, string, stringLen, nocase,
                               skipLongerMatches, nesting + 1))
                    return 1; /* match */
                if (*skipLongerMatches)
                    return 0; /* no match */
                string++;
                stringLen--;
            }
            *skipLongerMatches = 1;
            return 0; /* no match */
        case '?':
            string++;
            stringLen--;
            break;
        case '[': {
            int not_, match;

            pattern++;
            patternLen--;
            not_ = at(pattern, patternLen, 0) == '^';
            if (not_) {
                pattern++;
                patternLen--;
            }
            match = 0;
            while (1) {
                int c0 = at(pattern, patternLen, 0);
                if (c0 == '\\' && patternLen >= 2) {
                    pattern++;
                    patternLen--;
                    if (pattern[0] == string[0])
                        match = 1;
                } else if (c0 == ']') {
                    break;
                } else if (patternLen == 0) {
                    pattern--;
                    patternLen++;
                    break;
                } else if (patternLen >= 3 && pattern[1] == '-') {
                    int start = pattern[0];
                    int end = pattern[2];
                    int c = string[0];
                    if (start > end) {
                        int t = start;
                        start = end;
                        end = t;
                    }
                    if (nocase) {
                        start = tolower(start);
                        end = tolower(end);
                        c = tolower(c);
                    }
                    pattern += 2;
                    patternLen -= 2;
                    if (c >= start && c <= end)
                        match = 1;
                } else {
                    if (!nocase) {
                        if (pattern[0] == string[0])
                            match = 1;
                    } else {
                        if (tolower((int)pattern[0]) == tolower((int)string[0]))
                            match = 1;
                    }
                }
                pattern++;
                patternLen--;
            }
            if (not_)
                match = !match;
            if (!match)
                return 0; /* no match */
            string++;
            stringLen--;
            break;
        }
        case '\\':
            if (patternLen >= 2) {
                pattern++;
                patternLen--;
            }
            /* fall through */
        default:
            if (!nocase) {
                if (pattern[0] != string[0])
                    return 0; /* no match */
            } else {
                if (tolower((int)pattern[0]) != tolower((int)string[0]))
                    return 0; /* no match */
            }
            string++;
            stringLen--;
            break;
        }
        pattern++;
        patternLen--;
        if (stringLen == 0) {
            while (patternLen > 0 && *pattern == '*') {
                pattern++;
                patternLen--;
            }
            break;
        }
    }
    if (patternLen == 0 && stringLen == 0)
        return 1;
    return 0;
}

bool util_glob_match(const char *pattern, size_t plen, const char *str, size_t slen, bool nocase)
{
    int skip = 0;
    /* Redis takes int lengths; keys and patterns are bounded by proto-max-bulk-len */
    if (plen > INT_MAX || slen > INT_MAX)
        return false;
    return match_impl(pattern, (int)plen, str, (int)slen, nocase, &skip, 0) != 0;
}

bool util_str_to_ll(const char *s, size_t slen, long long *value)
{
    const char *p = s;
    size_t plen = 0;
    int negative = 0;
    unsigned long long v;

    if (plen == slen)
        return false;

    /* Special case: first and only digit is 0. */
    if (slen == 1 && p[0] == '0') {
        if (value != NULL)
            *value = 0;
        return true;
    }

    if (p[0] == '-') {
        negative = 1;
        p++;
        plen++;
        if (plen == slen)
            return false;
    }

    /* First digit should be 1-9, otherwise the string should just be 0. */
    if (p[0] >= '1' && p[0] <= '9') {
        v = (unsigned long long)(p[0] - '0');
        p++;
        plen++;
    } else {
        return false;
    }

    while (plen < slen && p[0] >= '0' && p[0] <= '9') {
        if (v > (ULLONG_MAX / 10)) /* Overflow. */
            return false;
        v *= 10;
        if (v > (ULLONG_MAX - (unsigned long long)(p[0] - '0'))) /* Overflow. */
            return false;
        v += (unsigned long long)(p[0] - '0');
        p++;
        plen++;
    }

    /* Return if not all bytes were used. */
    if (plen < slen)
        return false;

    if (negative) {
        if (v > ((unsigned long long)(-(LLONG_MIN + 1)) + 1)) /* Overflow. */
            return false;
        if (value != NULL)
            *value = (long long)(0ULL - v);
    } else {
        if (v > LLONG_MAX) /* Overflow. */
            return false;
        if (value != NULL)
            *value = (long long)v;
    }
    return true;
}

bool util_str_to_ld(const char *s, size_t slen, long double *dp)
{
    char buf[UTIL_LD_MAX_CHARS];
    long double value;
    char *eptr;

    if (slen == 0 || slen >= sizeof(buf))
        return false;
    memcpy(buf, s, slen);
    buf[slen] = '\0';

    errno = 0;
    value = strtold(buf, &eptr);
    if (isspace((unsigned char)buf[0]) || eptr[0] != '\0' || (size_t)(eptr - buf) != slen ||
        ((errno == ERANGE) &&
         (value == HUGE_VAL || value == -HUGE_VAL || fpclassify(value) == FP_ZERO)) ||
        errno == EINVAL || isnan(value))
        return false;

    if (dp)
        *dp = value;
    return true;
}

int util_ld_to_str(char *buf, size_t len, long double value)
{
    size_t l = 0;

    if (isinf(value)) {
        if (len < 5)
            return 0; /* No room. 5 is "-inf\0" */
        if (value > 0) {
            memcpy(buf, "inf", 3);
            l = 3;
        } else {
            memcpy(buf, "-inf", 4);
            l = 4;
        }
    } else {
        /* 17 digits, then drop trailing zeroes after the '.' (LD_STR_HUMAN) */
        int n = snprintf(buf, len, "%.17Lf", value);
        if (n < 0 || (size_t)n + 1 > len)
            return 0; /* No room. */
        l = (size_t)n;
        if (memchr(buf, '.', l) != NULL) {
            char *p = buf + l - 1;
            while (*p == '0') {
                p--;
                l--;
            }
            if (*p == '.')
                l--;
        }
        if (l == 2 && buf[0] == '-' && buf[1] == '0') {
            buf[0] = '0';
            l = 1;
        }
    }
    buf[l] = '\0';
    return (int)l;
}

bool util_str_to_double(const char *s, size_t slen, double *dp)
{
    char stackbuf[128];
    char *buf = stackbuf;
    char *eptr;
    double v;
    bool ok;

    if (slen == 0 || isspace((unsigned char)s[0]))
        return false;
    if (slen >= sizeof(stackbuf))
        buf = mem_alloc(slen + 1);
    memcpy(buf, s, slen);
    buf[slen] = '\0';

    errno = 0;
    v = strtod(buf, &eptr);
    ok = !((size_t)(eptr - buf) != slen ||
           (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || fpclassify(v) == FP_ZERO)) ||
           isnan(v));
    if (buf != stackbuf)
        mem_release(buf);
    if (ok && dp)
        *dp = v;
    return ok;
}

bool util_eq_nocase(const char *s, size_t len, const char *cstr)
{
    size_t n = strlen(cstr);
    if (n != len)
        return false;
    return strncasecmp(s, cstr, n) == 0;
}

long long util_us_time(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (long long)tv.tv_sec * 1000000 + tv.tv_usec;
}

long long util_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

long long util_ms_time(void)
{
    return util_us_time() / 1000;
}
