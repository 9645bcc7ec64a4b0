/*
 * fuzz_resp: libFuzzer target for the RESP request parser alone
 * (server/proto/resp.c): no connection, no server.
 *
 * Input: the control byte (fuzz_input.h; FUZZ_FLAG: the client has not
 * authenticated, so the 10-argument and 16 KB limits apply), then a request
 * stream.  The stream is parsed twice with fresh parsers:
 *  - whole: the buffer holds every byte from the start;
 *  - in pieces, as a connection reads: a piece arrives and every command
 *    then complete is parsed.  Before each piece the unconsumed bytes move to
 *    a new allocation, so an argument or resume state that still points into
 *    the old buffer is a use-after-free ASan reports.
 * Checked on every call: RESP_OK consumes at least one byte and no more than
 * it was given, with argc <= argv_cap and every argument inside the
 * command's bytes or the parser's unescape copy; RESP_AGAIN consumes nothing
 * and asks (`need`) for more than it was given; RESP_ERROR has a text.  Both
 * ways must give the same commands and end the same way (all consumed,
 * waiting for more, or the same error) -- except for streams longer than
 * RESP_INLINE_MAX, whose "too big" errors depend on the read sizes, in Redis
 * too.  Finally each parser, reset, must still parse a PING.
 *
 * Threading: libFuzzer's thread only.
 */
#include "percore/resp.h"

#include "fuzz_input.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BULK (1024 * 1024) /* proto-max-bulk-len's smallest value, as the engine target runs */

/* what a parse of the whole stream produced */
struct outcome {
    uint64_t digest;           /* FNV-1a over each command's argc, argument lengths and bytes */
    size_t commands;
    enum resp_status end;      /* RESP_OK: every byte consumed; RESP_AGAIN: a partial command left */
    const char *error;         /* the text when end is RESP_ERROR */
    char error_copy[64];       /* the parser's errbuf dies with it */
};

static void digest_add(uint64_t *h, const void *bytes, size_t n)
{
    const unsigned char *b = bytes;
    for (size_t i = 0; i < n; i++)
        *h = (*h ^ b[i]) * 0x100000001b3ull;
}

static bool inside(const char *ptr, size_t len, const char *base, size_t cap)
{
    return base && ptr >= base && len <= cap && (size_t)(ptr - base) <= cap - len;
}

/* one resp_parse call on buf[0..len), its result's invariants checked */
static enum resp_status parse_checked(struct resp_parser *p, const char *buf, size_t len, size_t *consumed,
                                      struct outcome *o)
{
    enum resp_status st = resp_parse(p, buf, len, MAX_BULK, consumed);
    switch (st) {
    case RESP_OK:
        FUZZ_CHECK(*consumed > 0 && *consumed <= len);
        FUZZ_CHECK(p->argc >= 0 && (p->argc == 0 || p->argc <= p->argv_cap));
        digest_add(&o->digest, &p->argc, sizeof(p->argc));
        for (int i = 0; i < p->argc; i++) {
            const struct resp_arg *a = &p->argv[i];
            FUZZ_CHECK(inside(a->ptr, a->len, buf, *consumed) || inside(a->ptr, a->len, p->inline_copy, p->inline_cap));
            digest_add(&o->digest, &a->len, sizeof(a->len));
            digest_add(&o->digest, a->ptr, a->len);
        }
        o->commands++;
        break;
    case RESP_AGAIN:
        FUZZ_CHECK(*consumed == 0 && p->need > len);
        break;
    case RESP_ERROR:
        FUZZ_CHECK(*consumed == 0 && p->error != NULL);
        snprintf(o->error_copy, sizeof(o->error_copy), "%s", p->error);
        o->error = o->error_copy;
        break;
    default:
        FUZZ_CHECK(!"resp_parse returned no status");
    }
    return st;
}

/* after whatever came before, a reset parser parses both kinds of PING */
static void check_reusable(struct resp_parser *p)
{
    static const char *const pings[] = {"*1\r\n$4\r\nPING\r\n", "PING\r\n"};
    for (size_t i = 0; i < sizeof(pings) / sizeof(pings[0]); i++) {
        size_t consumed;
        resp_parser_reset(p);
        FUZZ_CHECK(resp_parse(p, pings[i], strlen(pings[i]), MAX_BULK, &consumed) == RESP_OK);
        FUZZ_CHECK(consumed == strlen(pings[i]) && p->argc == 1 && p->argv[0].len == 4 &&
                   memcmp(p->argv[0].ptr, "PING", 4) == 0);
    }
}

static void parse_whole(const char *s, size_t len, bool unauthenticated, struct outcome *o)
{
    struct resp_parser p;
    resp_parser_init(&p);
    p.unauthenticated = unauthenticated;
    size_t pos = 0;
    o->end = RESP_OK;
    while (pos < len) {
        size_t consumed;
        enum resp_status st = parse_checked(&p, s + pos, len - pos, &consumed, o);
        if (st != RESP_OK) {
            o->end = st;
            break;
        }
        pos += consumed;
    }
    check_reusable(&p);
    resp_parser_deinit(&p);
}

static void parse_in_pieces(const char *s, size_t len, uint8_t control, struct outcome *o)
{
    struct resp_parser p;
    struct fuzz_chunks chunks;
    char *buf = NULL;
    size_t have = 0; /* unconsumed bytes at buf */
    size_t fed = 0;
    resp_parser_init(&p);
    p.unauthenticated = control & FUZZ_FLAG;
    fuzz_chunks_init(&chunks, control);
    o->end = RESP_OK;
    while (fed < len && o->end != RESP_ERROR) {
        size_t n = fuzz_chunks_next(&chunks, len - fed);
        char *fresh = malloc(have + n);
        if (have)
            memcpy(fresh, buf, have);
        memcpy(fresh + have, s + fed, n);
        free(buf);
        buf = fresh;
        have += n;
        fed += n;
        size_t pos = 0;
        o->end = RESP_OK;
        while (pos < have) {
            size_t consumed;
            enum resp_status st = parse_checked(&p, buf + pos, have - pos, &consumed, o);
            if (st != RESP_OK) {
                o->end = st;
                break;
            }
            pos += consumed;
        }
        memmove(buf, buf + pos, have - pos);
        have -= pos;
    }
    free(buf);
    check_reusable(&p);
    resp_parser_deinit(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *stream = (const char *)data + 1;
    size_t len = size - 1;
    struct outcome whole = {.digest = 0xcbf29ce484222325ull};
    struct outcome pieces = {.digest = 0xcbf29ce484222325ull};
    parse_whole(stream, len, data[0] & FUZZ_FLAG, &whole);
    parse_in_pieces(stream, len, data[0], &pieces);
    if (len <= RESP_INLINE_MAX) {
        FUZZ_CHECK(whole.commands == pieces.commands && whole.digest == pieces.digest);
        FUZZ_CHECK(whole.end == pieces.end);
        FUZZ_CHECK(whole.end != RESP_ERROR || strcmp(whole.error, pieces.error) == 0);
    }
    return 0;
}
