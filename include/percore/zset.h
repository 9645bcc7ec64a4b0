/*
 * zset: the sorted set type (Redis's t_zset.c data structures).
 *
 * A sorted set holds unique members (binary strings), each with a double
 * score, ordered by score and then by member bytes (memcmp, shorter first).
 * Two encodings, named as Redis 7.0's OBJECT ENCODING names them:
 *
 *   "listpack"  a listpack of member, score pairs in order; the score is the
 *               8 raw bytes of the double.  Used while the set has at most
 *               zset-max-listpack-entries members of at most
 *               zset-max-listpack-value bytes.  O(n) lookups, tiny.
 *   "skiplist"  a skiplist with span counts (rank and range-by-rank in
 *               O(log n)) plus a dict member -> score (O(1) ZSCORE).
 *
 * The conversions follow Redis 7.0 exactly (the observable encoding must
 * match): zset_add converts listpack -> skiplist when a new member would
 * cross a threshold; nothing converts back except an explicit
 * zset_convert() (ZUNIONSTORE and friends, via zset_maybe_shrink()).
 *
 * A struct zset is owned by one object on one shard thread, never shared.
 * Every function that takes thresholds takes them from the caller's config.
 */
#ifndef PERCORE_ZSET_H
#define PERCORE_ZSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum zset_encoding {
    ZSET_ENC_LISTPACK = 0,
    ZSET_ENC_SKIPLIST = 1,
};

struct zset;

/* an empty sorted set in the given encoding */
struct zset *zset_create(enum zset_encoding enc);
void zset_destroy(struct zset **z);
/* lazy free: release up to `budget` members; true (and *z freed) once done */
bool zset_destroy_step(struct zset **z, size_t budget);

enum zset_encoding zset_encoding(const struct zset *z);
size_t zset_length(const struct zset *z);
/* bytes held, O(1) */
size_t zset_memory(const struct zset *z);
/* change the encoding (no-op when already there) */
void zset_convert(struct zset *z, enum zset_encoding enc);
/* Redis zsetConvertToListpackIfNeeded: skiplist -> listpack when it fits */
void zset_maybe_shrink(struct zset *z, size_t maxelelen, size_t max_entries, size_t max_value);

/* ---- single members -------------------------------------------------- */

/* zset_add input flags (Redis ZADD_IN_*) */
enum {
    ZADD_IN_NX = 1 << 0,
    ZADD_IN_XX = 1 << 1,
    ZADD_IN_GT = 1 << 2,
    ZADD_IN_LT = 1 << 3,
    ZADD_IN_INCR = 1 << 4,
};
/* zset_add output flags (Redis ZADD_OUT_*) */
enum {
    ZADD_OUT_NOP = 1 << 0,     /* nothing done (NX/XX/GT/LT said no) */
    ZADD_OUT_NAN = 1 << 1,     /* the (resulting) score is NaN: nothing done */
    ZADD_OUT_ADDED = 1 << 2,   /* a new member */
    ZADD_OUT_UPDATED = 1 << 3, /* an existing member's score changed */
};
/*
 * Redis zsetAdd: add or update ele with score under in_flags.  Returns false
 * only for NaN (ZADD_OUT_NAN set).  *newscore (may be NULL) is the member's
 * score afterwards when something was done.  max_entries/max_value are the
 * listpack thresholds (conversion to skiplist as Redis does it).
 */
bool zset_add(struct zset *z, double score, const char *ele, size_t len, int in_flags,
              int *out_flags, double *newscore, size_t max_entries, size_t max_value);
/* the member's score; false when absent */
bool zset_score(struct zset *z, const char *ele, size_t len, double *score);
/* true if the member was there and is now gone */
bool zset_delete(struct zset *z, const char *ele, size_t len);
/* 0-based rank (from the highest score when reverse), -1 when absent */
long zset_rank(struct zset *z, const char *ele, size_t len, bool reverse);

/* ---- ranges ---------------------------------------------------------- */

/* a score interval; ex: the bound itself is excluded */
struct zset_range {
    double min, max;
    bool minex, maxex;
};

/* a lex bound: '-' (below everything), '+' (above everything) or a value */
enum zset_lex_kind { ZLEX_MIN = 0, ZLEX_VALUE = 1, ZLEX_MAX = 2 };
struct zset_lex_bound {
    enum zset_lex_kind kind;
    const char *p; /* ZLEX_VALUE: the bytes (borrowed) */
    size_t n;
    bool ex;       /* '(' : excluded */
};
struct zset_lex_range {
    struct zset_lex_bound min, max;
};

/* Redis zslParseRange on two arguments (C-string strtod rules); false if invalid */
bool zset_parse_range(const char *min, size_t minlen, const char *max, size_t maxlen,
                      struct zset_range *r);
/* Redis zslParseLexRange ('[x' '(x' '-' '+'); the range borrows the arguments */
bool zset_parse_lex_range(const char *min, size_t minlen, const char *max, size_t maxlen,
                          struct zset_lex_range *r);

/*
 * A cursor on one member.  Valid until the zset changes.  `pos` is the
 * member's listpack position (listpack encoding), `node` the skiplist node.
 */
struct zset_iter {
    struct zset *z;
    uint32_t pos;
    void *node;
    bool valid;
};
/* the member at 0-based rank (counted from the end when reverse) */
void zset_iter_rank(struct zset *z, size_t rank, bool reverse, struct zset_iter *it);
/* the first member in range (the last one when reverse) */
void zset_iter_score(struct zset *z, const struct zset_range *r, bool reverse, struct zset_iter *it);
void zset_iter_lex(struct zset *z, const struct zset_lex_range *r, bool reverse, struct zset_iter *it);
/* move one member towards the end (reverse: towards the start) */
void zset_iter_step(struct zset_iter *it, bool reverse);
/* the member's bytes (valid until the zset changes) and score */
const char *zset_iter_member(const struct zset_iter *it, size_t *len);
double zset_iter_scoreval(const struct zset_iter *it);

bool zset_value_gte_min(double v, const struct zset_range *r);
bool zset_value_lte_max(double v, const struct zset_range *r);
bool zset_lex_gte_min(const char *p, size_t n, const struct zset_lex_range *r);
bool zset_lex_lte_max(const char *p, size_t n, const struct zset_lex_range *r);

/* members in range */
size_t zset_count_score(struct zset *z, const struct zset_range *r);
size_t zset_count_lex(struct zset *z, const struct zset_lex_range *r);
/* removals; start/end 0-based inclusive, already clamped to the length */
size_t zset_delete_rank(struct zset *z, size_t start, size_t end);
size_t zset_delete_score(struct zset *z, const struct zset_range *r);
size_t zset_delete_lex(struct zset *z, const struct zset_lex_range *r);

/* ---- random and scan ------------------------------------------------ */

/* a uniformly random member (the set must not be empty) */
void zset_random(struct zset *z, const char **ele, size_t *len, double *score);

/*
 * ZSCAN step: calls fn for some members and returns the next cursor, 0 when
 * done.  A listpack is returned whole in one call (cursor 0), as Redis does;
 * a skiplist is scanned through its dict with Redis's reverse-binary cursor.
 */
typedef void zset_scan_fn(void *arg, const char *ele, size_t len, double score);
uint64_t zset_scan(struct zset *z, uint64_t cursor, zset_scan_fn *fn, void *arg);

/* for tests: check every internal invariant (order, spans, dict); true if sound */
bool zset_check(struct zset *z);

#endif
