/*
 * rread: the one reader of RESP reply bytes.
 *
 * Replies come back to be read where a command's answer is made of other
 * answers: a cross-shard command's parts (sums, concatenations, MGET's
 * elements, SCAN's cursors, __dump's blobs), a blocked client's serving
 * reply, the server commands' merges (CLIENT LIST, SLOWLOG, PUBSUB), the
 * RESP3 bytes COMMAND DOCS turns into RESP2.  Each reads through a cursor:
 * look at the next value's type, take an integer, a bulk string, a simple
 * line or an aggregate's header, or skip a whole value (nested).
 *
 * Every read checks the bytes it takes: a value that is truncated or
 * malformed is refused (false) and the cursor stays where it was, so a
 * reader never runs past the end, whatever the bytes.  Types: RESP2's
 * + - : $ *, and RESP3's _ , # ( = ! % ~ > | (the server emits maps, sets,
 * nulls, doubles, big numbers, verbatim strings and pushes).
 *
 * A cursor is a pair of pointers into bytes the caller owns; no allocation,
 * no state outside it, any thread.
 */
#ifndef PERCORE_RREAD_H
#define PERCORE_RREAD_H

#include <stdbool.h>
#include <stddef.h>

struct rread {
    const char *p;   /* the next value */
    const char *end; /* the end of the bytes */
};

static inline void rread_init(struct rread *r, const char *p, size_t n)
{
    r->p = p;
    r->end = n ? p + n : p; /* no reply at all may have no buffer (NULL): NULL + 0 is undefined */
}
/* bytes left from the cursor */
static inline size_t rread_left(const struct rread *r)
{
    return (size_t)(r->end - r->p);
}
/* the next value's type byte ('*', '$', ':', ...), 0 when nothing is left */
static inline char rread_type(const struct rread *r)
{
    return r->p < r->end ? *r->p : 0;
}
/* an error reply ("-...") next? */
static inline bool rread_is_error(const struct rread *r)
{
    return rread_type(r) == '-';
}

/* an integer ":n" (Redis's string2ll digits): *v */
bool rread_int(struct rread *r, long long *v);
/*
 * A string: a bulk "$n", a verbatim string "=n" (*s past its "txt:"), or a
 * blob error "!n": *s, *n.  A null ("$-1", "_") is taken too, with *s NULL.
 */
bool rread_bulk(struct rread *r, const char **s, size_t *n);
/* a line value: simple string, error, double, boolean, big number or integer
 * ("+OK", "-ERR x", ",1.5", "#t", "(12", ":3"): *s, *n its text after the type byte */
bool rread_line(struct rread *r, const char **s, size_t *n);
/*
 * An aggregate's header: an array "*n", set "~n", push ">n", map "%n" or
 * attribute "|n": its type byte in *type and its count as written in *n
 * (a map's pairs; -1 for a null array "*-1").  The elements follow.
 */
bool rread_agg(struct rread *r, char *type, long long *n);
/* one whole value, nested aggregates and all */
bool rread_skip(struct rread *r);

/* the integers of n replies (the shards' answers to one fan-out), summed; a reply that is not one
 * (an error) adds nothing */
long long rread_int_sum(int n, const char *const *replies, const size_t *lens);

#endif
