/*
 * resp: the incremental, zero-copy RESP request parser (multibulk and inline).
 *
 * resp_parse() is handed the unconsumed bytes of a connection's read buffer
 * and parses at most one command.  On success the command's arguments point
 * into that buffer (no copy): they are valid until the caller compacts or
 * grows the buffer, i.e. until it reads again.  A command split across reads
 * returns RESP_AGAIN and the parser remembers how far it got (header counts,
 * current bulk length) as offsets, so a 500 MB value is not rescanned per
 * read.  Errors carry Redis 7.0's exact "Protocol error: ..." text; the
 * caller replies "-ERR <text>" and closes the connection.
 */
#ifndef PERCORE_RESP_H
#define PERCORE_RESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct resp_arg {
    const char *ptr;
    size_t len;
};

enum resp_status {
    RESP_OK = 0,      /* one command parsed (argc may be 0: an empty line / *0) */
    RESP_AGAIN = 1,   /* incomplete: read more; p->need says how many bytes at least */
    RESP_ERROR = -1,  /* protocol error: p->error is the text */
};

#define RESP_INLINE_MAX (64 * 1024)      /* PROTO_INLINE_MAX_SIZE */

struct resp_parser {
    /* output of the last RESP_OK */
    struct resp_arg *argv;
    int argc;
    int argv_cap;
    /* set by the caller: the client has not authenticated yet, so (as Redis)
     * more than 10 arguments or a bulk over 16 KB is a protocol error */
    bool unauthenticated;
    /* resumable state (private to the parser) */
    int kind;              /* 0 unknown, 1 multibulk, 2 inline */
    long long multibulk;   /* args still expected */
    long long bulk;        /* length of the bulk being read, -1 none */
    size_t pos;            /* bytes of the current command already parsed */
    size_t need;           /* hint: total bytes needed for the current command to make progress */
    const char *error;     /* static text on RESP_ERROR */
    char *inline_copy;     /* inline commands with quotes are unescaped into here */
    size_t inline_cap;
    size_t scan;           /* a line end was searched for up to here, in vain */
    char errbuf[48];       /* error texts with a variable part ("expected '$'...") */
};

void resp_parser_init(struct resp_parser *p);
void resp_parser_deinit(struct resp_parser *p);
/* forget any partial command (after the caller discarded its bytes) */
void resp_parser_reset(struct resp_parser *p);

/*
 * Parse one command from buf[0..len).  On RESP_OK, *consumed is the number of
 * bytes the command took (the caller advances its buffer by that much before
 * the next call) and argv/argc describe it.  On RESP_AGAIN, *consumed is 0 and
 * the same bytes (plus more) must be passed next time, starting at the same
 * place.  max_bulk is proto-max-bulk-len.
 */
enum resp_status resp_parse(struct resp_parser *p, const char *buf, size_t len,
                            long long max_bulk, size_t *consumed);

/*
 * Split the line s[0..n) into words as an inline command is split (Redis
 * sdssplitargs: blanks between words, "double quotes" with \xHH and \n-style
 * escapes, 'single quotes' with \' only, a closing quote followed by a blank
 * or the end), whatever its first byte; s holds no NUL byte.  The words are
 * p->argv[0..p->argc), valid until the next call on p and while s lives.
 * False: unbalanced quotes.
 */
bool resp_split_words(struct resp_parser *p, const char *s, size_t n);

#endif
