/*
 * reply: the RESP reply encoder.
 *
 * A struct reply is a growable byte buffer that handlers append encoded
 * replies to.  It is embedded (not opaque) because it sits on the hot path of
 * every command: a connection's output, a cross-shard batch's reply area.
 * `resp` selects the protocol version (2 or 3) for the types that differ
 * (null, map, double, set, ...); RESP2 is the default.
 *
 * reply_error() takes the whole error text without the leading '-', e.g.
 * "ERR syntax error" or "WRONGTYPE Operation against a key holding the wrong
 * kind of value".  Any CR or LF inside is replaced by a space, as Redis does.
 */
#ifndef PERCORE_REPLY_H
#define PERCORE_REPLY_H

#include <stddef.h>
#include <stdint.h>

struct reply {
    char *buf;
    size_t len;
    size_t cap;
    int resp; /* 2 or 3 */
};

void reply_init(struct reply *r);
void reply_deinit(struct reply *r);
/* forget the contents, keep the storage */
static inline void reply_clear(struct reply *r) { r->len = 0; }
/* make room for n more bytes; returns a pointer to the free space */
char *reply_reserve(struct reply *r, size_t n);

void reply_raw(struct reply *r, const void *p, size_t n);
void reply_simple(struct reply *r, const char *s);          /* +s   */
void reply_ok(struct reply *r);                             /* +OK  */
void reply_error(struct reply *r, const char *msg);         /* -msg */
void reply_errorf(struct reply *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void reply_int(struct reply *r, long long v);               /* :v   */
void reply_bulk(struct reply *r, const void *p, size_t n);  /* $n   */
void reply_bulk_cstr(struct reply *r, const char *s);
void reply_bulk_ll(struct reply *r, long long v);           /* integer as bulk */
/* a double as Redis prints it: bulk "%.17g"-style in RESP2, ',' in RESP3 */
void reply_double(struct reply *r, double d);
void reply_null(struct reply *r);                           /* $-1 | _ */
void reply_null_array(struct reply *r);                     /* *-1 | _ */
void reply_array(struct reply *r, long long n);             /* *n   */
void reply_map(struct reply *r, long long n);               /* *2n | %n */
void reply_set(struct reply *r, long long n);               /* *n | ~n */
void reply_bool(struct reply *r, int v);                    /* :0/1 | #f/#t */
/* verbatim string: bulk in RESP2, "=len\r\ntxt:..." in RESP3 */
void reply_verbatim(struct reply *r, const char *p, size_t n, const char *ext);

/* common errors, exact Redis texts */
void reply_wrongtype(struct reply *r);
void reply_syntax_error(struct reply *r);
void reply_not_integer(struct reply *r);  /* ERR value is not an integer or out of range */

/*
 * Length of the one complete RESP value (any type, nested) at p[0..n), or 0
 * when it is not complete or malformed (rread_skip: rread.h reads replies).
 */
size_t reply_value_len(const char *p, size_t n);

#endif
