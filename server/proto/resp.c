/*
 * resp: the incremental, zero-copy RESP request parser (include/percore/resp.h).
 *
 * What.  resp_parse() turns the front of a connection's read buffer into one
 * command, with Redis 7.0's processMultibulkBuffer / processInlineBuffer
 * semantics (networking.c) and their exact error texts:
 *  - the request kind is chosen by the first byte ('*' multibulk, else inline);
 *  - a count of 0 or less ("*0", "*-1") is an empty command, counts above
 *    INT_MAX are invalid (Redis 7.0 no longer stops at 1024*1024);
 *  - a header line is found by its '\r' and only needs *some* byte after it,
 *    and a bulk payload is followed by two bytes that are never checked: Redis
 *    reads bulklen+2 and takes the data, and so do we;
 *  - Redis searches line ends with strchr() on its NUL-terminated buffer, so a
 *    NUL byte before the end of a line hides the line end: the request waits
 *    for more input until the 64 KB limit fails it.  find_line() keeps that;
 *  - inline lines end at '\n' (one '\r' before it is dropped) and are split
 *    with sdssplitargs rules (quotes, \xHH and \n-style escapes, a closing
 *    quote must be followed by a space or the end).
 *
 * Why this shape.  Arguments point into the caller's buffer: a multibulk
 * command costs no copy and no allocation once argv has grown to fit (it is
 * reused, grown geometrically, and shrunk back after a huge command).  Plain
 * inline words point into the buffer too; only words with quotes are
 * unescaped, into p->inline_copy.  A command split across reads resumes where
 * it stopped: parsed arguments are kept as offsets (the buffer may move
 * between calls) and turned into pointers on RESP_OK, the current bulk length
 * is kept, and p->scan remembers how far a line end was searched for, so
 * neither a huge bulk nor a long line is rescanned per read.  p->need says
 * how many bytes of the command must be in the buffer to go on, so the
 * connection can reserve a big bulk's space once.  A fresh multibulk
 * command wholly in the buffer, with short counts and within the limits (as
 * nearly every pipelined request is), is parsed in one pass without the
 * resumable state (parse_whole); anything else, errors included, takes the
 * general path from the command's start, which gives the same result.
 *
 * Threading.  A parser belongs to one connection and is used only by the
 * thread that owns the connection.
 */
#include "percore/resp.h"

#include "percore/mem.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { KIND_NONE = 0, KIND_MULTIBULK = 1, KIND_INLINE = 2 };

#define ARGV_PREALLOC 1024      /* Redis: argv_len = min(multibulklen, 1024) */
#define ARGV_KEEP (64 * 1024)   /* above this, a small command shrinks argv back */
#define LONG_STR_SIZE 21        /* Redis: string2ll refuses this many chars */

static const char err_inline_big[] = "Protocol error: too big inline request";
static const char err_quotes[] = "Protocol error: unbalanced quotes in request";
static const char err_mbulk_len[] = "Protocol error: invalid multibulk length";
static const char err_mbulk_big[] = "Protocol error: too big mbulk count string";
static const char err_bulk_big[] = "Protocol error: too big bulk count string";
static const char err_bulk_len[] = "Protocol error: invalid bulk length";
static const char err_unauth_mbulk[] = "Protocol error: unauthenticated multibulk length";
static const char err_unauth_bulk[] = "Protocol error: unauthenticated bulk length";

void resp_parser_init(struct resp_parser *p)
{
    memset(p, 0, sizeof(*p));
    p->bulk = -1;
}

void resp_parser_deinit(struct resp_parser *p)
{
    mem_release(p->argv);
    mem_release(p->inline_copy);
    resp_parser_init(p);
}

/* the state between commands; argv/argc keep the last command */
static void state_clear(struct resp_parser *p)
{
    p->kind = KIND_NONE;
    p->multibulk = 0;
    p->bulk = -1;
    p->pos = 0;
    p->scan = 0;
    p->need = 0;
}

void resp_parser_reset(struct resp_parser *p)
{
    state_clear(p);
    p->argc = 0;
    p->error = NULL;
}

/* Redis string2ll: strict decimal, optional '-', no '+', no leading zeros */
static bool str_to_ll(const char *s, size_t len, long long *out)
{
    unsigned long long v;
    size_t i = 0;
    bool neg = false;

    if (len == 0 || len >= LONG_STR_SIZE)
        return false;
    if (len == 1 && s[0] == '0') {
        *out = 0;
        return true;
    }
    if (s[0] == '-') {
        neg = true;
        if (++i == len)
            return false;
    }
    if (s[i] < '1' || s[i] > '9')
        return false;
    v = (unsigned long long)(s[i++] - '0');
    for (; i < len; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9 || v > (ULLONG_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1)
            return false;
        *out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
    } else {
        if (v > (unsigned long long)LLONG_MAX)
            return false;
        *out = (long long)v;
    }
    return true;
}

/*
 * strchr(buf + from, c) on Redis's NUL-terminated query buffer: true with
 * *at = the offset of c when c comes before any NUL byte; false otherwise,
 * with *at = where a later search may resume (the NUL, or len).
 */
static bool find_line(const char *buf, size_t from, size_t len, char c, size_t *at)
{
    /* header lines are a few bytes: one plain loop beats two memchr calls */
    size_t near = len - from > 32 ? from + 32 : len;
    for (size_t i = from; i < near; i++) {
        if (buf[i] == c || buf[i] == '\0') {
            *at = i;
            return buf[i] == c;
        }
    }
    if (near == len) {
        *at = len;
        return false;
    }
    from = near;
    const char *start = buf + from;
    const char *hit = memchr(start, c, len - from);
    const char *lim = hit ? hit : buf + len;
    const char *nul = memchr(start, '\0', (size_t)(lim - start));

    if (nul) {
        *at = (size_t)(nul - buf);
        return false;
    }
    *at = (size_t)(lim - buf);
    return hit != NULL;
}

static enum resp_status fail(struct resp_parser *p, const char *text)
{
    p->error = text;
    return RESP_ERROR;
}

static void argv_resize(struct resp_parser *p, long long cap)
{
    p->argv = mem_realloc(p->argv, (size_t)cap * sizeof(*p->argv));
    p->argv_cap = (int)cap;
}

/* room for one more argument; `total` bounds how many the command can have */
static void argv_grow(struct resp_parser *p, long long total)
{
    long long cap = p->argv_cap ? (long long)p->argv_cap * 2 : 8;

    argv_resize(p, cap < total ? cap : total);
}

/* Multibulk */

static enum resp_status bad_dollar(struct resp_parser *p, char got)
{
    /* addReplyErrorFormat turns CR and LF into spaces */
    if (got == '\r' || got == '\n')
        got = ' ';
    snprintf(p->errbuf, sizeof(p->errbuf), "Protocol error: expected '$', got '%c'", got);
    return fail(p, p->errbuf);
}

static enum resp_status parse_multibulk(struct resp_parser *p, const char *buf, size_t len,
                                        long long max_bulk, size_t *consumed)
{
    size_t nl;
    long long ll;

    if (p->multibulk == 0) { /* the "*<count>\r\n" header */
        if (!find_line(buf, p->scan, len, '\r', &nl)) {
            p->scan = nl;
            if (len > RESP_INLINE_MAX)
                return fail(p, err_mbulk_big);
            p->need = len + 1;
            return RESP_AGAIN;
        }
        if (nl + 2 > len) { /* the byte after '\r' (not checked to be '\n') */
            p->scan = nl;
            p->need = nl + 2;
            return RESP_AGAIN;
        }
        if (!str_to_ll(buf + 1, nl - 1, &ll) || ll > INT_MAX)
            return fail(p, err_mbulk_len);
        if (ll > 10 && p->unauthenticated)
            return fail(p, err_unauth_mbulk);
        p->pos = nl + 2;
        if (ll <= 0) {
            *consumed = p->pos;
            state_clear(p);
            return RESP_OK;
        }
        p->multibulk = ll;
        long long want = ll < ARGV_PREALLOC ? ll : ARGV_PREALLOC;
        if (p->argv_cap < want)
            argv_resize(p, want < 8 ? 8 : want);
        else if (p->argv_cap > ARGV_KEEP && ll <= ARGV_PREALLOC)
            argv_resize(p, ARGV_PREALLOC); /* give back what a huge command took */
    }

    while (p->multibulk > 0) {
        if (p->bulk == -1) { /* the "$<len>\r\n" line */
            if (!find_line(buf, p->scan > p->pos ? p->scan : p->pos, len, '\r', &nl)) {
                p->scan = nl;
                if (len - p->pos > RESP_INLINE_MAX)
                    return fail(p, err_bulk_big);
                p->need = len + 1;
                return RESP_AGAIN;
            }
            if (nl + 2 > len) {
                p->scan = nl;
                p->need = nl + 2;
                return RESP_AGAIN;
            }
            if (buf[p->pos] != '$')
                return bad_dollar(p, buf[p->pos]);
            if (!str_to_ll(buf + p->pos + 1, nl - p->pos - 1, &ll) || ll < 0 || ll > max_bulk)
                return fail(p, err_bulk_len);
            if (ll > 16384 && p->unauthenticated)
                return fail(p, err_unauth_bulk);
            p->pos = nl + 2;
            p->bulk = ll;
        }
        if (len - p->pos < (size_t)p->bulk + 2) { /* payload + 2 unchecked bytes */
            p->need = p->pos + (size_t)p->bulk + 2;
            return RESP_AGAIN;
        }
        if (p->argc == p->argv_cap)
            argv_grow(p, p->argc + p->multibulk);
        /* an offset until RESP_OK: the buffer may move before the next call */
        p->argv[p->argc].ptr = (const char *)(uintptr_t)p->pos;
        p->argv[p->argc].len = (size_t)p->bulk;
        p->argc++;
        p->pos += (size_t)p->bulk + 2;
        p->bulk = -1;
        p->multibulk--;
    }

    for (int i = 0; i < p->argc; i++)
        p->argv[i].ptr = buf + (uintptr_t)p->argv[i].ptr;
    *consumed = p->pos;
    state_clear(p);
    return RESP_OK;
}

/* Inline (sdssplitargs) */

/* C isspace() in the C locale */
static bool is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* what ends an unquoted word (sdssplitargs: not \v nor \f) */
static bool ends_word(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static int hex_val(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void inline_push(struct resp_parser *p, const char *s, size_t n, long long total)
{
    if (p->argc == p->argv_cap)
        argv_grow(p, total);
    p->argv[p->argc].ptr = s;
    p->argv[p->argc].len = n;
    p->argc++;
}

/* s[*i] is the opening '"'; unescape up to the closing one into *out */
static bool unquote_double(const char *s, size_t n, size_t *i, char **out)
{
    size_t j = *i + 1;
    char *o = *out;

    for (;;) {
        if (j == n)
            return false; /* unterminated */
        char c = s[j];
        if (c == '\\' && j + 3 < n && s[j + 1] == 'x' && hex_val(s[j + 2]) >= 0 &&
            hex_val(s[j + 3]) >= 0) {
            *o++ = (char)(hex_val(s[j + 2]) * 16 + hex_val(s[j + 3]));
            j += 4;
        } else if (c == '\\' && j + 1 < n) {
            switch (s[j + 1]) {
            case 'n': *o++ = '\n'; break;
            case 'r': *o++ = '\r'; break;
            case 't': *o++ = '\t'; break;
            case 'b': *o++ = '\b'; break;
            case 'a': *o++ = '\a'; break;
            default: *o++ = s[j + 1]; break;
            }
            j += 2;
        } else if (c == '"') {
            if (j + 1 < n && !is_space(s[j + 1]))
                return false; /* closing quote must be followed by a space */
            *i = j + 1;
            *out = o;
            return true;
        } else {
            *o++ = c;
            j++;
        }
    }
}

/* s[*i] is the opening '\''; only \' is an escape */
static bool unquote_single(const char *s, size_t n, size_t *i, char **out)
{
    size_t j = *i + 1;
    char *o = *out;

    for (;;) {
        if (j == n)
            return false;
        if (s[j] == '\\' && j + 1 < n && s[j + 1] == '\'') {
            *o++ = '\'';
            j += 2;
        } else if (s[j] == '\'') {
            if (j + 1 < n && !is_space(s[j + 1]))
                return false;
            *i = j + 1;
            *out = o;
            return true;
        } else {
            *o++ = s[j++];
        }
    }
}

/* sdssplitargs over s[0..n), which holds no NUL byte (find_line saw to it) */
static bool split_inline(struct resp_parser *p, const char *s, size_t n)
{
    long long most = (long long)(n / 2 + 1); /* words are separated */
    char *out = NULL;                        /* free space in inline_copy */
    size_t i = 0;

    p->argc = 0;
    for (;;) {
        while (i < n && is_space(s[i]))
            i++;
        if (i == n)
            return true;
        size_t start = i;
        while (i < n && !ends_word(s[i]) && s[i] != '"' && s[i] != '\'')
            i++;
        if (i == n || ends_word(s[i])) {
            inline_push(p, s + start, i - start, most);
            continue;
        }
        /* A quote: this word is unescaped (the bytes before the quote too).
         * The copy never outgrows the line, so sizing it once keeps the
         * words already copied in place. */
        if (out == NULL) {
            if (p->inline_cap < n) {
                p->inline_copy = mem_realloc(p->inline_copy, n);
                p->inline_cap = n;
            }
            out = p->inline_copy;
        }
        char *word = out;
        memcpy(out, s + start, i - start);
        out += i - start;
        if (!(s[i] == '"' ? unquote_double(s, n, &i, &out) : unquote_single(s, n, &i, &out)))
            return false;
        inline_push(p, word, (size_t)(out - word), most);
    }
}

bool resp_split_words(struct resp_parser *p, const char *s, size_t n)
{
    return split_inline(p, s, n);
}

static enum resp_status parse_inline(struct resp_parser *p, const char *buf, size_t len,
                                     size_t *consumed)
{
    size_t nl, end;

    if (!find_line(buf, p->scan, len, '\n', &nl)) {
        p->scan = nl;
        if (len > RESP_INLINE_MAX)
            return fail(p, err_inline_big);
        p->need = len + 1;
        return RESP_AGAIN;
    }
    end = nl > 0 && buf[nl - 1] == '\r' ? nl - 1 : nl;
    if (!split_inline(p, buf, end))
        return fail(p, err_quotes);
    *consumed = nl + 1;
    state_clear(p);
    return RESP_OK;
}

/* Whole commands in one pass */

/*
 * A count at buf[*i]: 1 to 9 digits without a leading zero, or a lone "0",
 * then '\r' and some byte after it, as find_line and str_to_ll would take it
 * (a digit is neither '\r' nor NUL, so the first '\r' is right after them);
 * *i moves past the "\r?".  False for anything else, nothing changed.
 */
static inline bool short_count(const char *buf, size_t len, size_t *i, size_t *v)
{
    size_t j = *i;
    if (len - j >= 4) { /* one or two digits, the usual case, with one bounds test */
        unsigned d0 = (unsigned)(unsigned char)buf[j] - '0', d1 = (unsigned)(unsigned char)buf[j + 1] - '0';
        if (d0 <= 9 && buf[j + 1] == '\r') {
            *i = j + 3;
            *v = d0;
            return true;
        }
        if (d0 - 1 < 9 && d1 <= 9 && buf[j + 2] == '\r') {
            *i = j + 4;
            *v = d0 * 10 + d1;
            return true;
        }
    }
    if (j >= len)
        return false;
    unsigned d = (unsigned)(unsigned char)buf[j] - '0';
    if (d > 9)
        return false;
    size_t n = d;
    j++;
    if (d != 0) {
        size_t end = len - j > 8 ? j + 8 : len;
        while (j < end && (d = (unsigned)(unsigned char)buf[j] - '0') <= 9) {
            n = n * 10 + d;
            j++;
        }
    }
    if (j + 1 >= len || buf[j] != '\r')
        return false;
    *i = j + 2;
    *v = n;
    return true;
}

/*
 * The common request at the start of a command: a multibulk one wholly in
 * buf, its counts short (short_count) and within the limits.  Then the
 * command is parsed in one pass, with the result parse_multibulk would give;
 * otherwise false, with nothing changed but argv (its entries, and its size
 * as parse_multibulk sets it once it has the header), and the general parser
 * starts over (a partial command at the end of a read pays both).
 */
static inline bool parse_whole(struct resp_parser *p, const char *buf, size_t len, long long max_bulk,
                               size_t *consumed)
{
    size_t i = 1, n, bulk;
    if (!short_count(buf, len, &i, &n) || n == 0 || n > ARGV_PREALLOC || p->argv_cap > ARGV_KEEP ||
        (n > 10 && p->unauthenticated))
        return false;
    if ((size_t)p->argv_cap < n) /* as parse_multibulk sizes it after the header */
        argv_resize(p, n < 8 ? 8 : (long long)n);
    for (size_t k = 0; k < n; k++) {
        if (i >= len || buf[i] != '$')
            return false;
        i++;
        if (!short_count(buf, len, &i, &bulk) || (long long)bulk > max_bulk ||
            (bulk > 16384 && p->unauthenticated) || len - i < bulk + 2)
            return false;
        p->argv[k].ptr = buf + i;
        p->argv[k].len = bulk;
        i += bulk + 2;
    }
    p->argc = (int)n;
    p->need = 0;
    *consumed = i;
    return true;
}

enum resp_status resp_parse(struct resp_parser *p, const char *buf, size_t len,
                            long long max_bulk, size_t *consumed)
{
    *consumed = 0;
    if (p->kind == KIND_NONE) {
        if (len == 0) {
            p->need = 1;
            return RESP_AGAIN;
        }
        p->argc = 0;
        p->error = NULL;
        if (buf[0] == '*' && parse_whole(p, buf, len, max_bulk, consumed))
            return RESP_OK;
        p->kind = buf[0] == '*' ? KIND_MULTIBULK : KIND_INLINE;
    }
    if (p->kind == KIND_MULTIBULK)
        return parse_multibulk(p, buf, len, max_bulk, consumed);
    return parse_inline(p, buf, len, consumed);
}
