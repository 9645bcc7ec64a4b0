/*
 * zset: the sorted set type (see include/percore/zset.h).
 *
 * Design.  Redis 7.0's t_zset.c data structures, function for function, so
 * that every observable order and every encoding change is the same:
 *
 *   listpack  member, score, member, score, ... in (score, member) order.  A
 *             score entry is the 8 raw bytes of the double (no strtod on the
 *             way back).  -0 is stored as 0, because Redis 7.0 stores an
 *             integral score as an integer in its listpack (ZSCORE of a
 *             listpack member added with -0 says "0"; a skiplist keeps "-0").
 *   skiplist  William Pugh's skiplist with Redis's changes: duplicate scores
 *             ordered by member, a span per level (rank in O(log n)), a
 *             backward pointer on level 0.  The member bytes live inline
 *             after the node's levels.  A dict maps member -> score for O(1)
 *             ZSCORE and for finding a member's node (score + member).
 *
 * Memory accounting is a running byte count (mem_usable of every node) plus
 * dict_memory() and lp_bytes(), all O(1).
 *
 * Threading: a zset belongs to the shard thread that owns its key; the
 * skiplist's random level generator is thread-local.
 */
#include "percore/zset.h"

#include "percore/dict.h"
#include "percore/listpack.h"
#include "percore/mem.h"
#include "percore/object.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ZSL_MAXLEVEL 32       /* Redis ZSKIPLIST_MAXLEVEL */
#define ZSL_P 0.25            /* Redis ZSKIPLIST_P */
#define LP_SAFETY_SIZE (1u << 30) /* Redis LISTPACK_MAX_SAFETY_SIZE */

struct zsl_node;

struct zsl_level {
    struct zsl_node *forward; /* next node on this level */
    size_t span;              /* nodes skipped to reach forward (rank distance) */
};

struct zsl_node {
    double score;              /* the member's score */
    struct zsl_node *backward; /* previous node on level 0, NULL for the first */
    size_t len;                /* member bytes, stored after level[levels] */
    int levels;                /* entries in level[] */
    struct zsl_level level[];
};

struct zset {
    uint8_t enc;               /* enum zset_encoding */
    struct listpack *lp;       /* listpack encoding: member/score pairs */
    struct zsl_node *header;   /* skiplist: the header node (no member) */
    struct zsl_node *tail;     /* skiplist: last node, NULL when empty */
    size_t length;             /* skiplist: nodes */
    int level;                 /* skiplist: levels in use (>= 1) */
    struct dict *dict;         /* skiplist: member -> score */
    size_t sl_mem;             /* skiplist: bytes of all nodes, header included */
};

static inline char *node_ele(const struct zsl_node *x)
{
    return (char *)&x->level[x->levels];
}

/* sdscmp: memcmp of the common prefix, then shorter first */
static inline int member_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    size_t m = an < bn ? an : bn;
    int c = m ? memcmp(a, b, m) : 0;
    if (c)
        return c;
    return an < bn ? -1 : (an > bn ? 1 : 0);
}

/* ---- random level ------------------------------------------------------- */

static _Thread_local uint64_t zsl_rng;

static uint32_t zsl_rand16(void)
{
    uint64_t x = zsl_rng;
    if (x == 0)
        x = ((uint64_t)(uintptr_t)&zsl_rng * 0x9E3779B97F4A7C15ULL) | 1;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    zsl_rng = x;
    return (uint32_t)(x >> 32) & 0xFFFF;
}

static int zsl_random_level(void)
{
    int level = 1;
    while (zsl_rand16() < (uint32_t)(ZSL_P * 0xFFFF))
        level++;
    return level < ZSL_MAXLEVEL ? level : ZSL_MAXLEVEL;
}

/* ---- skiplist ----------------------------------------------------------- */

static struct zsl_node *zsl_node_create(struct zset *z, int levels, double score, const char *ele,
                                        size_t len)
{
    struct zsl_node *x = mem_alloc(sizeof(*x) + (size_t)levels * sizeof(struct zsl_level) + len);
    x->score = score;
    x->backward = NULL;
    x->len = len;
    x->levels = levels;
    if (len)
        memcpy(node_ele(x), ele, len);
    z->sl_mem += mem_usable(x);
    return x;
}

static void zsl_node_release(struct zset *z, struct zsl_node *x)
{
    z->sl_mem -= mem_usable(x);
    mem_release(x);
}

static void zsl_init(struct zset *z)
{
    z->header = zsl_node_create(z, ZSL_MAXLEVEL, 0, NULL, 0);
    for (int j = 0; j < ZSL_MAXLEVEL; j++) {
        z->header->level[j].forward = NULL;
        z->header->level[j].span = 0;
    }
    z->tail = NULL;
    z->length = 0;
    z->level = 1;
    z->dict = dict_create();
}

/* Redis zslInsert: ele must not be in the list */
static struct zsl_node *zsl_insert(struct zset *z, double score, const char *ele, size_t len)
{
    struct zsl_node *update[ZSL_MAXLEVEL], *x = z->header;
    size_t rank[ZSL_MAXLEVEL];
    int i, level;

    for (i = z->level - 1; i >= 0; i--) {
        rank[i] = i == z->level - 1 ? 0 : rank[i + 1];
        while (x->level[i].forward &&
               (x->level[i].forward->score < score ||
                (x->level[i].forward->score == score &&
                 member_cmp(node_ele(x->level[i].forward), x->level[i].forward->len, ele, len) < 0))) {
            rank[i] += x->level[i].span;
            x = x->level[i].forward;
        }
        update[i] = x;
    }
    level = zsl_random_level();
    if (level > z->level) {
        for (i = z->level; i < level; i++) {
            rank[i] = 0;
            update[i] = z->header;
            update[i]->level[i].span = z->length;
        }
        z->level = level;
    }
    x = zsl_node_create(z, level, score, ele, len);
    for (i = 0; i < level; i++) {
        x->level[i].forward = update[i]->level[i].forward;
        update[i]->level[i].forward = x;
        x->level[i].span = update[i]->level[i].span - (rank[0] - rank[i]);
        update[i]->level[i].span = (rank[0] - rank[i]) + 1;
    }
    for (i = level; i < z->level; i++)
        update[i]->level[i].span++;
    x->backward = (update[0] == z->header) ? NULL : update[0];
    if (x->level[0].forward)
        x->level[0].forward->backward = x;
    else
        z->tail = x;
    z->length++;
    return x;
}

/* Redis zslDeleteNode: unlink x, update[] being its predecessors per level */
static void zsl_unlink(struct zset *z, struct zsl_node *x, struct zsl_node **update)
{
    for (int i = 0; i < z->level; i++) {
        if (update[i]->level[i].forward == x) {
            update[i]->level[i].span += x->level[i].span - 1;
            update[i]->level[i].forward = x->level[i].forward;
        } else {
            update[i]->level[i].span -= 1;
        }
    }
    if (x->level[0].forward)
        x->level[0].forward->backward = x->backward;
    else
        z->tail = x->backward;
    while (z->level > 1 && z->header->level[z->level - 1].forward == NULL)
        z->level--;
    z->length--;
}

/* predecessors of (score, ele) on every level */
static struct zsl_node *zsl_seek(struct zset *z, double score, const char *ele, size_t len,
                                 struct zsl_node **update)
{
    struct zsl_node *x = z->header;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward &&
               (x->level[i].forward->score < score ||
                (x->level[i].forward->score == score &&
                 member_cmp(node_ele(x->level[i].forward), x->level[i].forward->len, ele, len) < 0)))
            x = x->level[i].forward;
        update[i] = x;
    }
    return x->level[0].forward;
}

/* Redis zslDelete; true when found (and freed) */
static bool zsl_delete(struct zset *z, double score, const char *ele, size_t len)
{
    struct zsl_node *update[ZSL_MAXLEVEL];
    struct zsl_node *x = zsl_seek(z, score, ele, len, update);
    if (x && x->score == score && member_cmp(node_ele(x), x->len, ele, len) == 0) {
        zsl_unlink(z, x, update);
        zsl_node_release(z, x);
        return true;
    }
    return false;
}

/* Redis zslUpdateScore: the member exists with curscore */
static void zsl_update_score(struct zset *z, double curscore, const char *ele, size_t len,
                             double newscore)
{
    struct zsl_node *update[ZSL_MAXLEVEL];
    struct zsl_node *x = zsl_seek(z, curscore, ele, len, update);

    if ((x->backward == NULL || x->backward->score < newscore) &&
        (x->level[0].forward == NULL || x->level[0].forward->score > newscore)) {
        x->score = newscore;
        return;
    }
    zsl_unlink(z, x, update);
    zsl_insert(z, newscore, node_ele(x), x->len);
    zsl_node_release(z, x);
}

/* Redis zslGetRank: 1-based, 0 when absent */
static size_t zsl_get_rank(struct zset *z, double score, const char *ele, size_t len)
{
    struct zsl_node *x = z->header;
    size_t rank = 0;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward &&
               (x->level[i].forward->score < score ||
                (x->level[i].forward->score == score &&
                 member_cmp(node_ele(x->level[i].forward), x->level[i].forward->len, ele, len) <= 0))) {
            rank += x->level[i].span;
            x = x->level[i].forward;
        }
        if (x != z->header && x->score == score && member_cmp(node_ele(x), x->len, ele, len) == 0)
            return rank;
    }
    return 0;
}

/* Redis zslGetElementByRank: 1-based */
static struct zsl_node *zsl_by_rank(struct zset *z, size_t rank)
{
    struct zsl_node *x = z->header;
    size_t traversed = 0;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward && traversed + x->level[i].span <= rank) {
            traversed += x->level[i].span;
            x = x->level[i].forward;
        }
        if (traversed == rank)
            return x == z->header ? NULL : x;
    }
    return NULL;
}

/* ---- ranges --------------------------------------------------------------- */

bool zset_value_gte_min(double v, const struct zset_range *r)
{
    return r->minex ? v > r->min : v >= r->min;
}

bool zset_value_lte_max(double v, const struct zset_range *r)
{
    return r->maxex ? v < r->max : v <= r->max;
}

static bool range_empty(const struct zset_range *r)
{
    return r->min > r->max || (r->min == r->max && (r->minex || r->maxex));
}

/* Redis sdscmplex between a value and a bound */
static int lex_cmp_value(const char *p, size_t n, const struct zset_lex_bound *b)
{
    if (b->kind == ZLEX_MIN)
        return 1;
    if (b->kind == ZLEX_MAX)
        return -1;
    return member_cmp(p, n, b->p, b->n);
}

/* Redis sdscmplex(range->min, range->max) */
static int lex_cmp_bounds(const struct zset_lex_bound *a, const struct zset_lex_bound *b)
{
    if (a->kind != ZLEX_VALUE && a->kind == b->kind)
        return 0;
    if (a->kind == ZLEX_MIN || b->kind == ZLEX_MAX)
        return -1;
    if (a->kind == ZLEX_MAX || b->kind == ZLEX_MIN)
        return 1;
    return member_cmp(a->p, a->n, b->p, b->n);
}

bool zset_lex_gte_min(const char *p, size_t n, const struct zset_lex_range *r)
{
    int c = lex_cmp_value(p, n, &r->min);
    return r->min.ex ? c > 0 : c >= 0;
}

bool zset_lex_lte_max(const char *p, size_t n, const struct zset_lex_range *r)
{
    int c = lex_cmp_value(p, n, &r->max);
    return r->max.ex ? c < 0 : c <= 0;
}

static bool lex_range_empty(const struct zset_lex_range *r)
{
    int c = lex_cmp_bounds(&r->min, &r->max);
    return c > 0 || (c == 0 && (r->min.ex || r->max.ex));
}

/* strtod on the argument as a C string (up to its first NUL), as Redis does */
static bool parse_score_bound(const char *p, size_t n, double *v, bool *ex)
{
    char stackbuf[128];
    char *buf = stackbuf, *eptr;
    size_t len = strnlen(p, n);
    bool ok;

    if (len >= sizeof(stackbuf))
        buf = mem_alloc(len + 1);
    memcpy(buf, p, len);
    buf[len] = '\0';
    *ex = false;
    if (buf[0] == '(') {
        *v = strtod(buf + 1, &eptr);
        *ex = true;
    } else {
        *v = strtod(buf, &eptr);
    }
    ok = eptr[0] == '\0' && !isnan(*v);
    if (buf != stackbuf)
        mem_release(buf);
    return ok;
}

bool zset_parse_range(const char *min, size_t minlen, const char *max, size_t maxlen,
                      struct zset_range *r)
{
    return parse_score_bound(min, minlen, &r->min, &r->minex) &&
           parse_score_bound(max, maxlen, &r->max, &r->maxex);
}

/* Redis zslParseLexRangeItem (the argument is an sds: a NUL follows it) */
static bool parse_lex_item(const char *p, size_t n, struct zset_lex_bound *b)
{
    if (n == 0)
        return false;
    switch (p[0]) {
    case '+':
    case '-':
        if (n > 1 && p[1] != '\0')
            return false;
        b->kind = p[0] == '+' ? ZLEX_MAX : ZLEX_MIN;
        b->ex = true;
        b->p = NULL;
        b->n = 0;
        return true;
    case '(':
    case '[':
        b->kind = ZLEX_VALUE;
        b->ex = p[0] == '(';
        b->p = p + 1;
        b->n = n - 1;
        return true;
    default:
        return false;
    }
}

bool zset_parse_lex_range(const char *min, size_t minlen, const char *max, size_t maxlen,
                          struct zset_lex_range *r)
{
    return parse_lex_item(min, minlen, &r->min) && parse_lex_item(max, maxlen, &r->max);
}

/* ---- listpack helpers ------------------------------------------------------- */

static inline double lp_score(const struct listpack *lp, uint32_t spos)
{
    size_t n;
    const char *p = lp_get(lp, spos, &n);
    double d;
    memcpy(&d, p, sizeof(d));
    return d;
}

/* the member at pos's score */
static inline double lp_member_score(const struct listpack *lp, uint32_t epos)
{
    return lp_score(lp, lp_next(lp, epos));
}

static inline uint32_t lp_next_member(const struct listpack *lp, uint32_t epos)
{
    uint32_t s = lp_next(lp, epos);
    return s == LP_NONE ? LP_NONE : lp_next(lp, s);
}

static inline uint32_t lp_prev_member(const struct listpack *lp, uint32_t epos)
{
    uint32_t s = lp_prev(lp, epos);
    return s == LP_NONE ? LP_NONE : lp_prev(lp, s);
}

static uint32_t zzl_find(const struct listpack *lp, const char *ele, size_t len, double *score)
{
    uint32_t e = lp_first(lp);
    if (e == LP_NONE)
        return LP_NONE;
    e = lp_find(lp, e, ele, len, 1);
    if (e != LP_NONE && score)
        *score = lp_member_score(lp, e);
    return e;
}

static void zzl_delete(struct zset *z, uint32_t e)
{
    uint32_t s = lp_delete(&z->lp, e);
    lp_delete(&z->lp, s);
}

/* Redis zzlInsertAt: before the member at e (LP_NONE: at the end) */
static void zzl_insert_at(struct zset *z, uint32_t e, const char *ele, size_t len, double score)
{
    if (score == 0)
        score = 0.0; /* Redis stores an integral score as an integer: -0 becomes 0 */
    if (e == LP_NONE) {
        lp_append(&z->lp, ele, len);
        lp_append(&z->lp, &score, sizeof(score));
    } else {
        uint32_t ne = lp_insert(&z->lp, e, ele, len);
        lp_insert(&z->lp, lp_next(z->lp, ne), &score, sizeof(score));
    }
}

/* Redis zzlInsert: at its place in order */
static void zzl_insert(struct zset *z, const char *ele, size_t len, double score)
{
    const struct listpack *lp = z->lp;
    uint32_t e = lp_first(lp);
    while (e != LP_NONE) {
        uint32_t s = lp_next(lp, e);
        double cur = lp_score(lp, s);
        if (cur > score)
            break;
        if (cur == score) {
            size_t n;
            const char *p = lp_get(lp, e, &n);
            if (member_cmp(p, n, ele, len) > 0)
                break;
        }
        e = lp_next(lp, s);
    }
    zzl_insert_at(z, e, ele, len, score);
}

static bool zzl_in_range(const struct listpack *lp, const struct zset_range *r)
{
    if (range_empty(r))
        return false;
    uint32_t p = lp_last(lp);
    if (p == LP_NONE || !zset_value_gte_min(lp_score(lp, p), r))
        return false;
    p = lp_seek(lp, 1);
    return zset_value_lte_max(lp_score(lp, p), r);
}

static uint32_t zzl_first_in_range(const struct listpack *lp, const struct zset_range *r)
{
    if (!zzl_in_range(lp, r))
        return LP_NONE;
    for (uint32_t e = lp_first(lp); e != LP_NONE; e = lp_next_member(lp, e)) {
        double s = lp_member_score(lp, e);
        if (zset_value_gte_min(s, r))
            return zset_value_lte_max(s, r) ? e : LP_NONE;
    }
    return LP_NONE;
}

static uint32_t zzl_last_in_range(const struct listpack *lp, const struct zset_range *r)
{
    if (!zzl_in_range(lp, r))
        return LP_NONE;
    for (uint32_t e = lp_seek(lp, -2); e != LP_NONE; e = lp_prev_member(lp, e)) {
        double s = lp_member_score(lp, e);
        if (zset_value_lte_max(s, r))
            return zset_value_gte_min(s, r) ? e : LP_NONE;
    }
    return LP_NONE;
}

static bool lp_lex_gte_min(const struct listpack *lp, uint32_t e, const struct zset_lex_range *r)
{
    size_t n;
    const char *p = lp_get(lp, e, &n);
    return zset_lex_gte_min(p, n, r);
}

static bool lp_lex_lte_max(const struct listpack *lp, uint32_t e, const struct zset_lex_range *r)
{
    size_t n;
    const char *p = lp_get(lp, e, &n);
    return zset_lex_lte_max(p, n, r);
}

static bool zzl_in_lex_range(const struct listpack *lp, const struct zset_lex_range *r)
{
    if (lex_range_empty(r))
        return false;
    uint32_t p = lp_seek(lp, -2);
    if (p == LP_NONE || !lp_lex_gte_min(lp, p, r))
        return false;
    return lp_lex_lte_max(lp, lp_first(lp), r);
}

static uint32_t zzl_first_in_lex(const struct listpack *lp, const struct zset_lex_range *r)
{
    if (!zzl_in_lex_range(lp, r))
        return LP_NONE;
    for (uint32_t e = lp_first(lp); e != LP_NONE; e = lp_next_member(lp, e))
        if (lp_lex_gte_min(lp, e, r))
            return lp_lex_lte_max(lp, e, r) ? e : LP_NONE;
    return LP_NONE;
}

static uint32_t zzl_last_in_lex(const struct listpack *lp, const struct zset_lex_range *r)
{
    if (!zzl_in_lex_range(lp, r))
        return LP_NONE;
    for (uint32_t e = lp_seek(lp, -2); e != LP_NONE; e = lp_prev_member(lp, e))
        if (lp_lex_lte_max(lp, e, r))
            return lp_lex_gte_min(lp, e, r) ? e : LP_NONE;
    return LP_NONE;
}

/* ---- skiplist ranges --------------------------------------------------------- */

static bool zsl_in_range(struct zset *z, const struct zset_range *r)
{
    if (range_empty(r))
        return false;
    if (z->tail == NULL || !zset_value_gte_min(z->tail->score, r))
        return false;
    struct zsl_node *x = z->header->level[0].forward;
    return x != NULL && zset_value_lte_max(x->score, r);
}

static struct zsl_node *zsl_first_in_range(struct zset *z, const struct zset_range *r)
{
    if (!zsl_in_range(z, r))
        return NULL;
    struct zsl_node *x = z->header;
    for (int i = z->level - 1; i >= 0; i--)
        while (x->level[i].forward && !zset_value_gte_min(x->level[i].forward->score, r))
            x = x->level[i].forward;
    x = x->level[0].forward;
    return x && zset_value_lte_max(x->score, r) ? x : NULL;
}

static struct zsl_node *zsl_last_in_range(struct zset *z, const struct zset_range *r)
{
    if (!zsl_in_range(z, r))
        return NULL;
    struct zsl_node *x = z->header;
    for (int i = z->level - 1; i >= 0; i--)
        while (x->level[i].forward && zset_value_lte_max(x->level[i].forward->score, r))
            x = x->level[i].forward;
    return x != z->header && zset_value_gte_min(x->score, r) ? x : NULL;
}

static bool zsl_in_lex_range(struct zset *z, const struct zset_lex_range *r)
{
    if (lex_range_empty(r))
        return false;
    if (z->tail == NULL || !zset_lex_gte_min(node_ele(z->tail), z->tail->len, r))
        return false;
    struct zsl_node *x = z->header->level[0].forward;
    return x != NULL && zset_lex_lte_max(node_ele(x), x->len, r);
}

static struct zsl_node *zsl_first_in_lex(struct zset *z, const struct zset_lex_range *r)
{
    if (!zsl_in_lex_range(z, r))
        return NULL;
    struct zsl_node *x = z->header;
    for (int i = z->level - 1; i >= 0; i--)
        while (x->level[i].forward &&
               !zset_lex_gte_min(node_ele(x->level[i].forward), x->level[i].forward->len, r))
            x = x->level[i].forward;
    x = x->level[0].forward;
    return x && zset_lex_lte_max(node_ele(x), x->len, r) ? x : NULL;
}

static struct zsl_node *zsl_last_in_lex(struct zset *z, const struct zset_lex_range *r)
{
    if (!zsl_in_lex_range(z, r))
        return NULL;
    struct zsl_node *x = z->header;
    for (int i = z->level - 1; i >= 0; i--)
        while (x->level[i].forward &&
               zset_lex_lte_max(node_ele(x->level[i].forward), x->level[i].forward->len, r))
            x = x->level[i].forward;
    return x != z->header && zset_lex_gte_min(node_ele(x), x->len, r) ? x : NULL;
}

/* ---- lifecycle --------------------------------------------------------------- */

struct zset *zset_create(enum zset_encoding enc)
{
    struct zset *z = mem_calloc(1, sizeof(*z));
    z->enc = (uint8_t)enc;
    if (enc == ZSET_ENC_LISTPACK)
        z->lp = lp_create();
    else
        zsl_init(z);
    return z;
}

static void zsl_release_all(struct zset *z)
{
    struct zsl_node *x = z->header->level[0].forward;
    while (x) {
        struct zsl_node *next = x->level[0].forward;
        zsl_node_release(z, x);
        x = next;
    }
    zsl_node_release(z, z->header);
    z->header = z->tail = NULL;
    z->length = 0;
    dict_destroy(&z->dict);
}

void zset_destroy(struct zset **zp)
{
    struct zset *z = *zp;
    if (z == NULL)
        return;
    if (z->enc == ZSET_ENC_LISTPACK)
        lp_destroy(&z->lp);
    else
        zsl_release_all(z);
    mem_release(z);
    *zp = NULL;
}

bool zset_destroy_step(struct zset **zp, size_t budget)
{
    struct zset *z = *zp;
    if (z == NULL)
        return true;
    if (z->enc == ZSET_ENC_SKIPLIST) {
        /* free nodes from the front; the list is no longer a valid skiplist */
        struct zsl_node *x = z->header->level[0].forward;
        while (x && budget) {
            struct zsl_node *next = x->level[0].forward;
            zsl_node_release(z, x);
            x = next;
            budget--;
        }
        z->header->level[0].forward = x;
        if (x)
            return false;
        if (z->dict && !dict_destroy_step(&z->dict, budget ? budget : 1))
            return false;
        zsl_node_release(z, z->header);
    } else {
        lp_destroy(&z->lp);
    }
    mem_release(z);
    *zp = NULL;
    return true;
}

enum zset_encoding zset_encoding(const struct zset *z)
{
    return (enum zset_encoding)z->enc;
}

size_t zset_length(const struct zset *z)
{
    return z->enc == ZSET_ENC_LISTPACK ? lp_count(z->lp) / 2 : z->length;
}

size_t zset_memory(const struct zset *z)
{
    size_t m = mem_usable(z);
    if (z->enc == ZSET_ENC_LISTPACK)
        return m + lp_bytes(z->lp);
    return m + z->sl_mem + (z->dict ? dict_memory(z->dict) : 0);
}

void zset_convert(struct zset *z, enum zset_encoding enc)
{
    if (z->enc == enc)
        return;
    if (enc == ZSET_ENC_SKIPLIST) {
        struct listpack *lp = z->lp;
        z->lp = NULL;
        zsl_init(z);
        for (uint32_t e = lp_first(lp); e != LP_NONE;) {
            size_t n;
            const char *p = lp_get(lp, e, &n);
            uint32_t s = lp_next(lp, e);
            double score = lp_score(lp, s);
            zsl_insert(z, score, p, n);
            struct dict_entry *de = dict_add(z->dict, p, n, NULL);
            dict_entry_set_double(de, score);
            e = lp_next(lp, s);
        }
        lp_destroy(&lp);
    } else {
        struct listpack *lp = lp_create();
        struct zsl_node *x = z->header->level[0].forward;
        z->lp = lp;
        for (; x; x = x->level[0].forward)
            zzl_insert_at(z, LP_NONE, node_ele(x), x->len, x->score);
        lp = z->lp;
        z->lp = NULL;
        zsl_release_all(z);
        z->lp = lp;
    }
    z->enc = (uint8_t)enc;
}

void zset_maybe_shrink(struct zset *z, size_t maxelelen, size_t max_entries, size_t max_value)
{
    if (z->enc == ZSET_ENC_LISTPACK)
        return;
    if (z->length <= max_entries && maxelelen <= max_value)
        zset_convert(z, ZSET_ENC_LISTPACK);
}

/* ---- single members ----------------------------------------------------------- */

bool zset_score(struct zset *z, const char *ele, size_t len, double *score)
{
    if (z->enc == ZSET_ENC_LISTPACK)
        return zzl_find(z->lp, ele, len, score) != LP_NONE;
    struct dict_entry *de = dict_peek(z->dict, ele, len);
    if (de == NULL)
        return false;
    *score = dict_entry_double(de);
    return true;
}

/*
 * ZADD's NX/INCR/GT/LT against a member that exists at curscore: *score
 * becomes the score to store (INCR adds curscore), also into *newscore.
 * Returns > 0 to store it, 0 when nothing is to be done (NOP or the same
 * score), < 0 when INCR made it NaN (nothing done).
 */
static int zadd_existing(int in_flags, double curscore, double *score, int *out_flags,
                         double *newscore)
{
    if (in_flags & ZADD_IN_NX) {
        *out_flags |= ZADD_OUT_NOP;
        return 0;
    }
    if (in_flags & ZADD_IN_INCR) {
        *score += curscore;
        if (isnan(*score)) {
            *out_flags |= ZADD_OUT_NAN;
            return -1;
        }
    }
    if (((in_flags & ZADD_IN_LT) && *score >= curscore) ||
        ((in_flags & ZADD_IN_GT) && *score <= curscore)) {
        *out_flags |= ZADD_OUT_NOP;
        return 0;
    }
    if (newscore)
        *newscore = *score;
    return *score != curscore;
}

bool zset_add(struct zset *z, double score, const char *ele, size_t len, int in_flags,
              int *out_flags, double *newscore, size_t max_entries, size_t max_value)
{
    bool xx = in_flags & ZADD_IN_XX;
    double curscore;

    *out_flags = 0;
    if (isnan(score)) {
        *out_flags = ZADD_OUT_NAN;
        return false;
    }

    if (z->enc == ZSET_ENC_LISTPACK) {
        uint32_t e = zzl_find(z->lp, ele, len, &curscore);
        if (e != LP_NONE) {
            int r = zadd_existing(in_flags, curscore, &score, out_flags, newscore);
            if (r > 0) {
                zzl_delete(z, e);
                zzl_insert(z, ele, len, score);
                *out_flags |= ZADD_OUT_UPDATED;
            }
            return r >= 0;
        } else if (!xx) {
            if (lp_count(z->lp) / 2 + 1 > max_entries || len > max_value ||
                lp_bytes(z->lp) + len > LP_SAFETY_SIZE) {
                zset_convert(z, ZSET_ENC_SKIPLIST);
            } else {
                zzl_insert(z, ele, len, score);
                if (newscore)
                    *newscore = score;
                *out_flags |= ZADD_OUT_ADDED;
                return true;
            }
        } else {
            *out_flags |= ZADD_OUT_NOP;
            return true;
        }
    }

    /* skiplist: without XX, one hash both finds an existing member and adds a new one */
    struct dict_entry *de = NULL, *added;
    if (xx) {
        de = dict_find(z->dict, ele, len);
    } else if ((added = dict_add(z->dict, ele, len, &de)) != NULL) {
        dict_entry_set_double(added, score);
        zsl_insert(z, score, ele, len);
        *out_flags |= ZADD_OUT_ADDED;
        if (newscore)
            *newscore = score;
        return true;
    }
    if (de != NULL) {
        curscore = dict_entry_double(de);
        int r = zadd_existing(in_flags, curscore, &score, out_flags, newscore);
        if (r > 0) {
            zsl_update_score(z, curscore, ele, len, score);
            dict_entry_set_double(de, score);
            *out_flags |= ZADD_OUT_UPDATED;
        }
        return r >= 0;
    }
    *out_flags |= ZADD_OUT_NOP;
    return true;
}

bool zset_delete(struct zset *z, const char *ele, size_t len)
{
    if (z->enc == ZSET_ENC_LISTPACK) {
        uint32_t e = zzl_find(z->lp, ele, len, NULL);
        if (e == LP_NONE)
            return false;
        zzl_delete(z, e);
        return true;
    }
    struct dict_entry *de = dict_find(z->dict, ele, len);
    if (de == NULL)
        return false;
    double score = dict_entry_double(de);
    dict_delete(z->dict, ele, len);
    zsl_delete(z, score, ele, len);
    return true;
}

long zset_rank(struct zset *z, const char *ele, size_t len, bool reverse)
{
    size_t llen = zset_length(z);
    if (z->enc == ZSET_ENC_LISTPACK) {
        size_t rank = 1;
        uint32_t e;
        for (e = lp_first(z->lp); e != LP_NONE; e = lp_next_member(z->lp, e)) {
            size_t n;
            const char *p = lp_get(z->lp, e, &n);
            if (n == len && (n == 0 || memcmp(p, ele, n) == 0))
                break;
            rank++;
        }
        if (e == LP_NONE)
            return -1;
        return reverse ? (long)(llen - rank) : (long)(rank - 1);
    }
    struct dict_entry *de = dict_peek(z->dict, ele, len);
    if (de == NULL)
        return -1;
    size_t rank = zsl_get_rank(z, dict_entry_double(de), ele, len);
    if (rank == 0)
        return -1;
    return reverse ? (long)(llen - rank) : (long)(rank - 1);
}

/* ---- iteration ------------------------------------------------------------------ */

static void iter_set_lp(struct zset *z, struct zset_iter *it, uint32_t pos)
{
    it->z = z;
    it->pos = pos;
    it->node = NULL;
    it->valid = pos != LP_NONE;
}

static void iter_set_node(struct zset *z, struct zset_iter *it, struct zsl_node *x)
{
    it->z = z;
    it->pos = LP_NONE;
    it->node = x;
    it->valid = x != NULL;
}

void zset_iter_rank(struct zset *z, size_t rank, bool reverse, struct zset_iter *it)
{
    size_t llen = zset_length(z);
    if (rank >= llen) {
        iter_set_node(z, it, NULL);
        return;
    }
    if (z->enc == ZSET_ENC_LISTPACK) {
        long idx = reverse ? -2 - 2 * (long)rank : 2 * (long)rank;
        iter_set_lp(z, it, lp_seek(z->lp, idx));
        return;
    }
    struct zsl_node *x;
    if (reverse)
        x = rank == 0 ? z->tail : zsl_by_rank(z, llen - rank);
    else
        x = rank == 0 ? z->header->level[0].forward : zsl_by_rank(z, rank + 1);
    iter_set_node(z, it, x);
}

void zset_iter_score(struct zset *z, const struct zset_range *r, bool reverse, struct zset_iter *it)
{
    if (z->enc == ZSET_ENC_LISTPACK)
        iter_set_lp(z, it, reverse ? zzl_last_in_range(z->lp, r) : zzl_first_in_range(z->lp, r));
    else
        iter_set_node(z, it, reverse ? zsl_last_in_range(z, r) : zsl_first_in_range(z, r));
}

void zset_iter_lex(struct zset *z, const struct zset_lex_range *r, bool reverse, struct zset_iter *it)
{
    if (z->enc == ZSET_ENC_LISTPACK)
        iter_set_lp(z, it, reverse ? zzl_last_in_lex(z->lp, r) : zzl_first_in_lex(z->lp, r));
    else
        iter_set_node(z, it, reverse ? zsl_last_in_lex(z, r) : zsl_first_in_lex(z, r));
}

void zset_iter_step(struct zset_iter *it, bool reverse)
{
    if (!it->valid)
        return;
    if (it->z->enc == ZSET_ENC_LISTPACK) {
        it->pos = reverse ? lp_prev_member(it->z->lp, it->pos) : lp_next_member(it->z->lp, it->pos);
        it->valid = it->pos != LP_NONE;
    } else {
        struct zsl_node *x = it->node;
        it->node = reverse ? x->backward : x->level[0].forward;
        it->valid = it->node != NULL;
    }
}

const char *zset_iter_member(const struct zset_iter *it, size_t *len)
{
    if (it->z->enc == ZSET_ENC_LISTPACK)
        return lp_get(it->z->lp, it->pos, len);
    const struct zsl_node *x = it->node;
    *len = x->len;
    return node_ele(x);
}

double zset_iter_scoreval(const struct zset_iter *it)
{
    if (it->z->enc == ZSET_ENC_LISTPACK)
        return lp_member_score(it->z->lp, it->pos);
    return ((const struct zsl_node *)it->node)->score;
}

/* ---- counts and range removals ---------------------------------------------------- */

/* elements from first to last (NULL: to the end) in the skiplist, by rank */
static size_t zsl_count_span(struct zset *z, struct zsl_node *first, struct zsl_node *last)
{
    size_t rank = zsl_get_rank(z, first->score, node_ele(first), first->len);
    size_t count = z->length - (rank - 1);
    if (last) {
        rank = zsl_get_rank(z, last->score, node_ele(last), last->len);
        count -= z->length - rank;
    }
    return count;
}

size_t zset_count_score(struct zset *z, const struct zset_range *r)
{
    size_t count = 0;
    if (z->enc == ZSET_ENC_LISTPACK) {
        for (uint32_t e = zzl_first_in_range(z->lp, r); e != LP_NONE; e = lp_next_member(z->lp, e)) {
            if (!zset_value_lte_max(lp_member_score(z->lp, e), r))
                break;
            count++;
        }
        return count;
    }
    struct zsl_node *x = zsl_first_in_range(z, r);
    return x ? zsl_count_span(z, x, zsl_last_in_range(z, r)) : 0;
}

size_t zset_count_lex(struct zset *z, const struct zset_lex_range *r)
{
    size_t count = 0;
    if (z->enc == ZSET_ENC_LISTPACK) {
        for (uint32_t e = zzl_first_in_lex(z->lp, r); e != LP_NONE; e = lp_next_member(z->lp, e)) {
            if (!lp_lex_lte_max(z->lp, e, r))
                break;
            count++;
        }
        return count;
    }
    struct zsl_node *x = zsl_first_in_lex(z, r);
    return x ? zsl_count_span(z, x, zsl_last_in_lex(z, r)) : 0;
}

/* unlink and free x (its dict entry too); update[] are its predecessors */
static void zsl_remove_node(struct zset *z, struct zsl_node *x, struct zsl_node **update)
{
    zsl_unlink(z, x, update);
    dict_delete(z->dict, node_ele(x), x->len);
    zsl_node_release(z, x);
}

size_t zset_delete_rank(struct zset *z, size_t start, size_t end)
{
    if (start > end || end >= zset_length(z))
        return 0;
    size_t num = end - start + 1;
    if (z->enc == ZSET_ENC_LISTPACK) {
        lp_delete_range(&z->lp, 2 * (long)start, 2 * num);
        return num;
    }
    /* Redis zslDeleteRangeByRank, 1-based start and end */
    struct zsl_node *update[ZSL_MAXLEVEL], *x = z->header;
    size_t traversed = 0, removed = 0, s1 = start + 1, e1 = end + 1;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward && traversed + x->level[i].span < s1) {
            traversed += x->level[i].span;
            x = x->level[i].forward;
        }
        update[i] = x;
    }
    traversed++;
    x = x->level[0].forward;
    while (x && traversed <= e1) {
        struct zsl_node *next = x->level[0].forward;
        zsl_remove_node(z, x, update);
        removed++;
        traversed++;
        x = next;
    }
    return removed;
}

size_t zset_delete_score(struct zset *z, const struct zset_range *r)
{
    size_t removed = 0;
    if (z->enc == ZSET_ENC_LISTPACK) {
        uint32_t e = zzl_first_in_range(z->lp, r);
        while (e != LP_NONE && zset_value_lte_max(lp_member_score(z->lp, e), r)) {
            uint32_t s = lp_delete(&z->lp, e);
            e = lp_delete(&z->lp, s);
            removed++;
        }
        return removed;
    }
    struct zsl_node *update[ZSL_MAXLEVEL], *x = z->header;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward && !zset_value_gte_min(x->level[i].forward->score, r))
            x = x->level[i].forward;
        update[i] = x;
    }
    x = x->level[0].forward;
    while (x && zset_value_lte_max(x->score, r)) {
        struct zsl_node *next = x->level[0].forward;
        zsl_remove_node(z, x, update);
        removed++;
        x = next;
    }
    return removed;
}

size_t zset_delete_lex(struct zset *z, const struct zset_lex_range *r)
{
    size_t removed = 0;
    if (z->enc == ZSET_ENC_LISTPACK) {
        uint32_t e = zzl_first_in_lex(z->lp, r);
        while (e != LP_NONE && lp_lex_lte_max(z->lp, e, r)) {
            uint32_t s = lp_delete(&z->lp, e);
            e = lp_delete(&z->lp, s);
            removed++;
        }
        return removed;
    }
    struct zsl_node *update[ZSL_MAXLEVEL], *x = z->header;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward &&
               !zset_lex_gte_min(node_ele(x->level[i].forward), x->level[i].forward->len, r))
            x = x->level[i].forward;
        update[i] = x;
    }
    x = x->level[0].forward;
    while (x && zset_lex_lte_max(node_ele(x), x->len, r)) {
        struct zsl_node *next = x->level[0].forward;
        zsl_remove_node(z, x, update);
        removed++;
        x = next;
    }
    return removed;
}

/* ---- random and scan ------------------------------------------------------------------ */

void zset_random(struct zset *z, const char **ele, size_t *len, double *score)
{
    if (z->enc == ZSET_ENC_LISTPACK) {
        size_t n = lp_count(z->lp) / 2;
        uint64_t r = ((uint64_t)zsl_rand16() << 48) ^ ((uint64_t)zsl_rand16() << 32) ^
                     ((uint64_t)zsl_rand16() << 16) ^ zsl_rand16();
        uint32_t e = lp_seek(z->lp, 2 * (long)(r % n));
        *ele = lp_get(z->lp, e, len);
        if (score)
            *score = lp_member_score(z->lp, e);
        return;
    }
    struct dict_entry *de = dict_random(z->dict);
    *ele = dict_entry_key(de, len);
    if (score)
        *score = dict_entry_double(de);
}

struct scan_wrap {
    zset_scan_fn *fn;
    void *arg;
};

static void scan_entry(void *arg, const struct dict_entry *de)
{
    struct scan_wrap *w = arg;
    size_t n;
    const char *k = dict_entry_key(de, &n);
    w->fn(w->arg, k, n, dict_entry_double(de));
}

uint64_t zset_scan(struct zset *z, uint64_t cursor, zset_scan_fn *fn, void *arg)
{
    if (z->enc == ZSET_ENC_LISTPACK) {
        for (uint32_t e = lp_first(z->lp); e != LP_NONE; e = lp_next_member(z->lp, e)) {
            size_t n;
            const char *p = lp_get(z->lp, e, &n);
            fn(arg, p, n, lp_member_score(z->lp, e));
        }
        return 0;
    }
    struct scan_wrap w = {fn, arg};
    return dict_scan(z->dict, cursor, scan_entry, &w);
}

/* ---- invariants (tests) ----------------------------------------------------------------- */

bool zset_check(struct zset *z)
{
    if (z->enc == ZSET_ENC_LISTPACK) {
        if (lp_count(z->lp) % 2)
            return false;
        const char *prev = NULL;
        size_t prevn = 0;
        double prevs = 0;
        for (uint32_t e = lp_first(z->lp); e != LP_NONE; e = lp_next_member(z->lp, e)) {
            size_t n, sn;
            const char *p = lp_get(z->lp, e, &n);
            uint32_t s = lp_next(z->lp, e);
            if (s == LP_NONE)
                return false;
            lp_get(z->lp, s, &sn);
            if (sn != sizeof(double))
                return false;
            double sc = lp_score(z->lp, s);
            if (isnan(sc))
                return false;
            if (prev && (sc < prevs || (sc == prevs && member_cmp(prev, prevn, p, n) >= 0)))
                return false;
            prev = p;
            prevn = n;
            prevs = sc;
        }
        return true;
    }
    /* level 0 order, backward links, dict agreement */
    size_t count = 0;
    struct zsl_node *prev = NULL;
    for (struct zsl_node *x = z->header->level[0].forward; x; x = x->level[0].forward) {
        if (x->backward != prev)
            return false;
        if (prev && (x->score < prev->score ||
                     (x->score == prev->score &&
                      member_cmp(node_ele(prev), prev->len, node_ele(x), x->len) >= 0)))
            return false;
        struct dict_entry *de = dict_find(z->dict, node_ele(x), x->len);
        if (de == NULL || !(dict_entry_double(de) == x->score))
            return false;
        prev = x;
        count++;
    }
    if (prev != z->tail || count != z->length || dict_size(z->dict) != count)
        return false;
    /* spans: each level's spans add up to the rank of the node they reach */
    for (int i = 0; i < z->level; i++) {
        size_t rank = 0;
        struct zsl_node *x = z->header;
        while (x->level[i].forward) {
            rank += x->level[i].span;
            x = x->level[i].forward;
            if (zsl_by_rank(z, rank) != x)
                return false;
        }
    }
    for (int i = z->level; i < ZSL_MAXLEVEL; i++)
        if (z->header->level[i].forward != NULL)
            return false;
    return true;
}

/* ---- object type ops ---------------------------------------------------------------------- */

static const char *ops_encoding_name(unsigned encoding)
{
    return encoding == ZSET_ENC_LISTPACK ? "listpack" : "skiplist";
}

static size_t ops_length(unsigned encoding, const void *ptr)
{
    (void)encoding;
    return zset_length(ptr);
}

static size_t ops_memory(unsigned encoding, const void *ptr)
{
    (void)encoding;
    return zset_memory(ptr);
}

static void ops_destroy(unsigned encoding, void *ptr)
{
    (void)encoding;
    struct zset *z = ptr;
    zset_destroy(&z);
}

static bool ops_destroy_step(unsigned encoding, void *ptr, size_t budget)
{
    (void)encoding;
    struct zset *z = ptr;
    return zset_destroy_step(&z, budget);
}

/*
 * Serialized form: [u8 encoding][u64 count] then per member in order
 * [u32 length][bytes][8 bytes score], all little-endian host order (the
 * bytes never leave the process).
 */
static void emit_member(object_emit_fn *emit, void *arg, const char *p, size_t n, double score)
{
    uint32_t len = (uint32_t)n;
    emit(arg, &len, sizeof(len));
    if (n)
        emit(arg, p, n);
    emit(arg, &score, sizeof(score));
}

static void ops_serialize(unsigned encoding, const void *ptr, object_emit_fn *emit, void *arg)
{
    (void)encoding;
    struct zset *z = (struct zset *)ptr;
    uint8_t enc = z->enc;
    uint64_t count = zset_length(z);
    struct zset_iter it;

    emit(arg, &enc, sizeof(enc));
    emit(arg, &count, sizeof(count));
    for (zset_iter_rank(z, 0, false, &it); it.valid; zset_iter_step(&it, false)) {
        size_t n;
        const char *p = zset_iter_member(&it, &n);
        emit_member(emit, arg, p, n, zset_iter_scoreval(&it));
    }
}

static void *ops_deserialize(const void *data, size_t size, unsigned *encoding)
{
    const unsigned char *p = data, *end = p + size;
    uint8_t enc;
    uint64_t count;

    if (size < 1 + sizeof(count))
        return NULL;
    enc = p[0];
    memcpy(&count, p + 1, sizeof(count));
    p += 1 + sizeof(count);
    if (enc > ZSET_ENC_SKIPLIST || count == 0 || count > (size_t)(end - p) / 12)
        return NULL;

    struct zset *z = zset_create(ZSET_ENC_SKIPLIST);
    const char *prev = NULL;
    size_t prevn = 0;
    double prevs = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t len;
        double score;
        if ((size_t)(end - p) < sizeof(len))
            goto bad;
        memcpy(&len, p, sizeof(len));
        p += sizeof(len);
        if ((size_t)(end - p) < (size_t)len + sizeof(score))
            goto bad;
        const char *ele = (const char *)p;
        p += len;
        memcpy(&score, p, sizeof(score));
        p += sizeof(score);
        if (isnan(score))
            goto bad;
        /* strictly increasing (score, member): no duplicate pair, and the order kept */
        if (prev && (score < prevs || (score == prevs && member_cmp(prev, prevn, ele, len) >= 0)))
            goto bad;
        if (dict_find(z->dict, ele, len) != NULL)
            goto bad;
        zsl_insert(z, score, ele, len);
        dict_entry_set_double(dict_add(z->dict, ele, len, NULL), score);
        prev = ele;
        prevn = len;
        prevs = score;
    }
    if (p != end)
        goto bad;
    if (enc == ZSET_ENC_LISTPACK)
        zset_convert(z, ZSET_ENC_LISTPACK);
    *encoding = enc;
    return z;
bad:
    zset_destroy(&z);
    return NULL;
}

const struct object_type_ops zset_type_ops = {
    .name = "zset",
    .encoding_name = ops_encoding_name,
    .length = ops_length,
    .memory = ops_memory,
    .destroy = ops_destroy,
    .destroy_step = ops_destroy_step,
    .serialize = ops_serialize,
    .deserialize = ops_deserialize,
};
