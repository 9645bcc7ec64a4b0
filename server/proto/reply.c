/*
 * reply: the RESP2/RESP3 reply encoder (include/percore/reply.h).
 *
 * What.  Appends encoded replies to a growable byte buffer, byte for byte as
 * Redis 7.0's addReply* functions write them (networking.c), in RESP2 or
 * RESP3 per r->resp.  reply_value_len() measures one encoded value, so
 * replies gathered from several shards can be split and merged.
 *
 * Why this shape.  Every command ends here, so the common paths do one
 * bounds check and no formatting: integers and headers are written with a
 * two-digits-at-a-time ll2string, and a header plus its payload is reserved
 * in one go.  The buffer grows geometrically, so appends are amortised O(1).
 * Only doubles (which must match "%.17g" exactly) and reply_errorf() use the
 * printf family.
 *
 * Threading.  A struct reply is owned by one thread at a time (a connection's
 * thread, or the shard filling a cross-shard batch); no locking inside.
 */
#include "percore/reply.h"

#include "percore/mem.h"
#include "percore/rread.h"
#include "percore/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define REPLY_MIN_CAP 256
#define HDR_MAX 24 /* prefix, 20 digits, CRLF */

void reply_init(struct reply *r)
{
    r->buf = NULL;
    r->len = 0;
    r->cap = 0;
    r->resp = 2;
}

void reply_deinit(struct reply *r)
{
    mem_release(r->buf);
    reply_init(r);
}

static void reply_grow(struct reply *r, size_t n)
{
    size_t cap = r->cap ? r->cap * 2 : REPLY_MIN_CAP;

    if (cap - r->len < n)
        cap = r->len + n;
    r->buf = mem_realloc(r->buf, cap);
    r->cap = cap;
}

char *reply_reserve(struct reply *r, size_t n)
{
    if (r->cap - r->len < n)
        reply_grow(r, n);
    return r->buf + r->len;
}

/* "<prefix><v>\r\n" at dst (HDR_MAX bytes of room); returns its length */
static size_t put_hdr(char *dst, char prefix, long long v)
{
    size_t n;

    dst[0] = prefix;
    n = 1 + (size_t)util_ll_to_str(dst + 1, v);
    dst[n] = '\r';
    dst[n + 1] = '\n';
    return n + 2;
}

static void reply_hdr(struct reply *r, char prefix, long long v)
{
    char *dst = reply_reserve(r, HDR_MAX);
    r->len += put_hdr(dst, prefix, v);
}

void reply_raw(struct reply *r, const void *p, size_t n)
{
    if (n == 0)
        return;
    memcpy(reply_reserve(r, n), p, n);
    r->len += n;
}

/* prefix, s[0..n), CRLF */
static void reply_line(struct reply *r, char prefix, const char *s, size_t n)
{
    char *dst = reply_reserve(r, n + 3);

    dst[0] = prefix;
    memcpy(dst + 1, s, n);
    dst[n + 1] = '\r';
    dst[n + 2] = '\n';
    r->len += n + 3;
}

void reply_simple(struct reply *r, const char *s)
{
    reply_line(r, '+', s, strlen(s));
}

void reply_ok(struct reply *r)
{
    reply_raw(r, "+OK\r\n", 5);
}

/* an error line already at r->buf[from..len): CR/LF inside become spaces */
static void error_finish(struct reply *r, size_t from)
{
    for (size_t i = from; i < r->len; i++)
        if (r->buf[i] == '\r' || r->buf[i] == '\n')
            r->buf[i] = ' ';
    reply_raw(r, "\r\n", 2);
}

void reply_error(struct reply *r, const char *msg)
{
    size_t n = strlen(msg);
    char *dst = reply_reserve(r, 1 + n + 2);

    dst[0] = '-';
    memcpy(dst + 1, msg, n);
    r->len += 1 + n;
    error_finish(r, r->len - n);
}

void reply_errorf(struct reply *r, const char *fmt, ...)
{
    size_t room = 256;
    va_list ap;
    int n;

    for (;;) {
        char *dst = reply_reserve(r, 1 + room);
        va_start(ap, fmt);
        n = vsnprintf(dst + 1, room, fmt, ap);
        va_end(ap);
        if (n < 0)
            n = 0;
        if ((size_t)n < room)
            break;
        room = (size_t)n + 1;
    }
    r->buf[r->len] = '-';
    r->len += 1 + (size_t)n;
    error_finish(r, r->len - (size_t)n);
}

void reply_int(struct reply *r, long long v)
{
    reply_hdr(r, ':', v);
}

void reply_bulk(struct reply *r, const void *p, size_t n)
{
    char *dst = reply_reserve(r, HDR_MAX + n + 2);
    size_t h = put_hdr(dst, '$', (long long)n);

    memcpy(dst + h, p, n);
    dst[h + n] = '\r';
    dst[h + n + 1] = '\n';
    r->len += h + n + 2;
}

void reply_bulk_cstr(struct reply *r, const char *s)
{
    if (s == NULL)
        reply_null(r);
    else
        reply_bulk(r, s, strlen(s));
}

void reply_bulk_ll(struct reply *r, long long v)
{
    char digits[20];
    int n = util_ll_to_str(digits, v);

    reply_bulk(r, digits, (size_t)n);
}

void reply_double(struct reply *r, double d)
{
    char dbuf[40];
    int n;

    if (isinf(d)) { /* spelled out, as Redis does, whatever libc prints */
        if (r->resp == 2)
            reply_bulk(r, d > 0 ? "inf" : "-inf", d > 0 ? 3 : 4);
        else
            reply_raw(r, d > 0 ? ",inf\r\n" : ",-inf\r\n", d > 0 ? 6 : 7);
        return;
    }
    n = snprintf(dbuf, sizeof(dbuf), "%.17g", d);
    if (r->resp == 2)
        reply_bulk(r, dbuf, (size_t)n);
    else
        reply_line(r, ',', dbuf, (size_t)n);
}

void reply_null(struct reply *r)
{
    if (r->resp == 2)
        reply_raw(r, "$-1\r\n", 5);
    else
        reply_raw(r, "_\r\n", 3);
}

void reply_null_array(struct reply *r)
{
    if (r->resp == 2)
        reply_raw(r, "*-1\r\n", 5);
    else
        reply_raw(r, "_\r\n", 3);
}

void reply_array(struct reply *r, long long n)
{
    reply_hdr(r, '*', n);
}

void reply_map(struct reply *r, long long n)
{
    if (r->resp == 2)
        reply_hdr(r, '*', n * 2);
    else
        reply_hdr(r, '%', n);
}

void reply_set(struct reply *r, long long n)
{
    reply_hdr(r, r->resp == 2 ? '*' : '~', n);
}

void reply_bool(struct reply *r, int v)
{
    if (r->resp == 2)
        reply_raw(r, v ? ":1\r\n" : ":0\r\n", 4);
    else
        reply_raw(r, v ? "#t\r\n" : "#f\r\n", 4);
}

void reply_verbatim(struct reply *r, const char *p, size_t n, const char *ext)
{
    char *dst;
    size_t h;

    if (r->resp == 2) {
        reply_bulk(r, p, n);
        return;
    }
    /* "=<n+4>\r\n" + 3-byte format (space padded, as Redis) + ':' + text */
    dst = reply_reserve(r, HDR_MAX + 4 + n + 2);
    h = put_hdr(dst, '=', (long long)n + 4);
    for (int i = 0; i < 3; i++)
        dst[h + (size_t)i] = *ext ? *ext++ : ' ';
    dst[h + 3] = ':';
    memcpy(dst + h + 4, p, n);
    dst[h + 4 + n] = '\r';
    dst[h + 4 + n + 1] = '\n';
    r->len += h + 4 + n + 2;
}

void reply_wrongtype(struct reply *r)
{
    reply_raw(r, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", 68);
}

void reply_syntax_error(struct reply *r)
{
    reply_raw(r, "-ERR syntax error\r\n", 19);
}

void reply_not_integer(struct reply *r)
{
    reply_raw(r, "-ERR value is not an integer or out of range\r\n", 46);
}

size_t reply_value_len(const char *p, size_t n)
{
    struct rread r;
    rread_init(&r, p, n);
    return rread_skip(&r) ? (size_t)(r.p - p) : 0;
}
