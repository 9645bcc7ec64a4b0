/*
 * rread: the RESP reply reader (include/percore/rread.h).
 *
 * Design.  Every value starts with a line: its type byte, a text, CRLF.  A
 * read finds the line's CR within the bytes left (a bulk's payload is never
 * searched: it is skipped by its length, and its CRLF checked), checks the
 * text for its type (a length is "-1" or at most 18 digits, an integer is
 * Redis's string2ll), and moves the cursor only when all of it is there.
 *
 * rread_skip walks nested values with a count of those still expected
 * instead of recursing, so deep nesting costs no stack; every value takes at
 * least 3 bytes ("_\r\n"), which bounds the count by the bytes left (a
 * header announcing more elements than could fit is refused at once).
 */
#include "percore/rread.h"

#include "percore/util.h"

#include <string.h>

/* t is one of the type bytes in set */
static bool one_of(char t, const char *set)
{
    return t != 0 && strchr(set, t) != NULL;
}

/* the line at the cursor: *text (after the type byte), *n, and *next past its CRLF */
static bool line_at(const struct rread *r, const char **text, size_t *n, const char **next)
{
    if (r->p >= r->end)
        return false;
    const char *cr = memchr(r->p, '\r', (size_t)(r->end - r->p));
    if (!cr || r->end - cr < 2 || cr[1] != '\n')
        return false;
    *text = r->p + 1;
    *n = (size_t)(cr - r->p - 1);
    *next = cr + 2;
    return true;
}

/* a length field: "-1" or up to 18 digits */
static bool len_field(const char *s, size_t n, long long *out)
{
    bool neg = n > 0 && s[0] == '-';
    long long v = 0;
    size_t i = neg;
    if (i == n || n - i > 18)
        return false;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return !neg || v == 1;
}

bool rread_int(struct rread *r, long long *v)
{
    const char *text, *next;
    size_t n;
    if (rread_type(r) != ':' || !line_at(r, &text, &n, &next) || !util_str_to_ll(text, n, v))
        return false;
    r->p = next;
    return true;
}

bool rread_bulk(struct rread *r, const char **s, size_t *n)
{
    char t = rread_type(r);
    const char *text, *next;
    size_t tlen;
    long long len;
    if (!one_of(t, "$=!_") || !line_at(r, &text, &tlen, &next))
        return false;
    if (t == '_') {
        if (tlen != 0)
            return false;
        *s = NULL;
        *n = 0;
        r->p = next;
        return true;
    }
    if (!len_field(text, tlen, &len) || (len < 0 && t != '$'))
        return false;
    if (len < 0) {
        *s = NULL;
        *n = 0;
        r->p = next;
        return true;
    }
    if ((size_t)(r->end - next) < (size_t)len + 2 || next[len] != '\r' || next[len + 1] != '\n')
        return false;
    *s = next;
    *n = (size_t)len;
    if (t == '=' && len >= 4) { /* "txt:" */
        *s += 4;
        *n -= 4;
    }
    r->p = next + len + 2;
    return true;
}

bool rread_line(struct rread *r, const char **s, size_t *n)
{
    const char *next;
    if (!one_of(rread_type(r), "+-,#(:") || !line_at(r, s, n, &next))
        return false;
    r->p = next;
    return true;
}

bool rread_agg(struct rread *r, char *type, long long *n)
{
    char t = rread_type(r);
    const char *text, *next;
    size_t tlen;
    if (!one_of(t, "*~>%|") || !line_at(r, &text, &tlen, &next) || !len_field(text, tlen, n) ||
        (*n < 0 && t != '*'))
        return false;
    *type = t;
    r->p = next;
    return true;
}

long long rread_int_sum(int n, const char *const *replies, const size_t *lens)
{
    long long sum = 0;
    for (int i = 0; i < n; i++) {
        struct rread r;
        long long v;
        rread_init(&r, replies[i], lens[i]);
        if (rread_int(&r, &v))
            sum += v;
    }
    return sum;
}

bool rread_skip(struct rread *r)
{
    struct rread c = *r;
    unsigned long long pending = 1;
    while (pending > 0) {
        const char *s;
        size_t n;
        char t;
        long long k;
        pending--;
        switch (rread_type(&c)) {
        case '$': case '=': case '!': case '_':
            if (!rread_bulk(&c, &s, &n))
                return false;
            break;
        case '*': case '~': case '>': case '%': case '|':
            if (!rread_agg(&c, &t, &k))
                return false;
            if (k > 0)
                pending += (unsigned long long)k * (t == '%' || t == '|' ? 2 : 1);
            if (t == '|') /* an attribute describes the value after it */
                pending++;
            break;
        default:
            if (!rread_line(&c, &s, &n))
                return false;
            break;
        }
        if (pending > rread_left(&c) / 3)
            return false;
    }
    *r = c;
    return true;
}
