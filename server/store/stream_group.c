/*
 * stream_group: a stream's consumer groups (see include/percore/stream_group.h).
 *
 * Design.  Redis keeps groups, consumers and PELs in radix trees; here each
 * is a sorted array of pointers found by binary search (names in the order
 * of Redis's rax: bytes, then the shorter first; NACKs by ID).  A NACK is
 * owned by its group's PEL and referenced from its consumer's, so a move
 * between consumers is one removal and one insertion.  Insertions in the
 * middle of an array are memmove's: PELs are read and acknowledged mostly in
 * ID order, so the common case appends or takes from near the front.
 *
 * Threading: touched only by the thread of the shard that owns the stream.
 */
#include "percore/stream_group.h"

#include "percore/mem.h"

#include <string.h>

/* ---- sorted pointer arrays ------------------------------------------------------------ */

static void array_insert(void ***v, size_t *n, size_t *cap, size_t at, void *item)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 4;
        *v = mem_realloc(*v, *cap * sizeof **v);
    }
    memmove(*v + at + 1, *v + at, (*n - at) * sizeof **v);
    (*v)[at] = item;
    (*n)++;
}

static void array_remove(void **v, size_t *n, size_t at)
{
    memmove(v + at, v + at + 1, (*n - at - 1) * sizeof *v);
    (*n)--;
}

/* rax order of two names */
static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c != 0)
        return c;
    return alen < blen ? -1 : alen > blen;
}

/* the index of the first of the n groups or consumers (each starting with its name) not below name */
static size_t name_lower_bound(void *const *v, size_t n, const char *name, size_t len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct stream_name *at = v[mid];
        if (name_cmp(at->p, at->len, name, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* the one named name, NULL (and *at where it would go) */
static void *name_find(void *const *v, size_t n, const char *name, size_t len, size_t *at)
{
    *at = name_lower_bound(v, n, name, len);
    if (*at < n) {
        const struct stream_name *found = v[*at];
        if (name_cmp(found->p, found->len, name, len) == 0)
            return v[*at];
    }
    return NULL;
}

static void name_init(struct stream_name *n, const char *name, size_t len)
{
    n->p = mem_alloc(len + 1);
    memcpy(n->p, name, len);
    n->p[len] = '\0';
    n->len = len;
}

/* ---- PELs ---------------------------------------------------------------------------- */

size_t stream_pel_lower_bound(const struct stream_pel *p, const struct stream_id *id)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (stream_id_cmp(&p->v[mid]->id, id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct stream_nack *stream_pel_find(const struct stream_pel *p, const struct stream_id *id)
{
    size_t at = stream_pel_lower_bound(p, id);
    return at < p->n && stream_id_cmp(&p->v[at]->id, id) == 0 ? p->v[at] : NULL;
}

static void pel_insert(struct stream_pel *p, struct stream_nack *nack)
{
    array_insert((void ***)&p->v, &p->n, &p->cap, stream_pel_lower_bound(p, &nack->id), nack);
}

static void pel_remove(struct stream_pel *p, const struct stream_id *id)
{
    array_remove((void **)p->v, &p->n, stream_pel_lower_bound(p, id));
}

/* a pending entry of consumer c (NULL: none yet, a loaded group's PEL before its consumers) */
static struct stream_nack *nack_new(struct stream_consumer *c, const struct stream_id *id, long long time,
                                    uint64_t count)
{
    struct stream_nack *nack = mem_alloc(sizeof *nack);
    nack->id = *id;
    nack->delivery_time = time;
    nack->delivery_count = count;
    nack->consumer = c;
    return nack;
}

struct stream_nack *stream_nack_add(struct stream_group *g, struct stream_consumer *c, const struct stream_id *id,
                                    long long time, uint64_t count)
{
    struct stream_nack *nack = nack_new(c, id, time, count);
    pel_insert(&g->pel, nack);
    pel_insert(&c->pel, nack);
    return nack;
}

void stream_nack_move(struct stream_nack *nack, struct stream_consumer *c)
{
    if (nack->consumer == c)
        return;
    pel_remove(&nack->consumer->pel, &nack->id);
    nack->consumer = c;
    pel_insert(&c->pel, nack);
}

void stream_nack_remove(struct stream_group *g, struct stream_nack *nack)
{
    pel_remove(&nack->consumer->pel, &nack->id);
    pel_remove(&g->pel, &nack->id);
    mem_release(nack);
}

bool stream_nack_load(struct stream_group *g, const struct stream_id *id, long long time, uint64_t count)
{
    if (stream_pel_find(&g->pel, id))
        return false;
    pel_insert(&g->pel, nack_new(NULL, id, time, count));
    return true;
}

bool stream_nack_load_owner(struct stream_group *g, struct stream_consumer *c, const struct stream_id *id)
{
    struct stream_nack *nack = stream_pel_find(&g->pel, id);
    if (nack == NULL || nack->consumer != NULL)
        return false;
    nack->consumer = c;
    pel_insert(&c->pel, nack);
    return true;
}

bool stream_group_loaded(const struct stream_group *g)
{
    for (size_t i = 0; i < g->pel.n; i++)
        if (g->pel.v[i]->consumer == NULL)
            return false;
    return true;
}

/* ---- consumers ------------------------------------------------------------------------ */

struct stream_consumer *stream_consumer_find(const struct stream_group *g, const char *name, size_t len)
{
    size_t at;
    return name_find((void *const *)g->consumers, g->nconsumers, name, len, &at);
}

struct stream_consumer *stream_consumer_create(struct stream_group *g, const char *name, size_t len, long long now)
{
    size_t at;
    if (name_find((void *const *)g->consumers, g->nconsumers, name, len, &at))
        return NULL;
    struct stream_consumer *c = mem_calloc(1, sizeof *c);
    name_init(&c->name, name, len);
    c->seen_time = now;
    array_insert((void ***)&g->consumers, &g->nconsumers, &g->cap, at, c);
    return c;
}

static void consumer_release(struct stream_consumer *c)
{
    mem_release(c->pel.v);
    mem_release(c->name.p);
    mem_release(c);
}

void stream_consumer_delete(struct stream_group *g, struct stream_consumer *c)
{
    while (c->pel.n > 0)
        stream_nack_remove(g, c->pel.v[c->pel.n - 1]);
    size_t at = name_lower_bound((void *const *)g->consumers, g->nconsumers, c->name.p, c->name.len);
    array_remove((void **)g->consumers, &g->nconsumers, at);
    consumer_release(c);
}

/* ---- groups --------------------------------------------------------------------------- */

size_t stream_group_count(const struct stream *s)
{
    return stream_groups(s)->n;
}

struct stream_group *stream_group_at(const struct stream *s, size_t i)
{
    return stream_groups(s)->v[i];
}

struct stream_group *stream_group_find(const struct stream *s, const char *name, size_t len)
{
    const struct stream_group_set *set = stream_groups(s);
    size_t at;
    return name_find((void *const *)set->v, set->n, name, len, &at);
}

struct stream_group *stream_group_create(struct stream *s, const char *name, size_t len,
                                         const struct stream_id *last_id, long long entries_read)
{
    struct stream_group_set *set = stream_groups(s);
    size_t at;
    if (name_find((void *const *)set->v, set->n, name, len, &at))
        return NULL;
    struct stream_group *g = mem_calloc(1, sizeof *g);
    name_init(&g->name, name, len);
    g->last_id = *last_id;
    g->entries_read = entries_read;
    array_insert((void ***)&set->v, &set->n, &set->cap, at, g);
    return g;
}

static void group_release(struct stream_group *g)
{
    for (size_t i = 0; i < g->pel.n; i++)
        mem_release(g->pel.v[i]);
    mem_release(g->pel.v);
    for (size_t i = 0; i < g->nconsumers; i++)
        consumer_release(g->consumers[i]);
    mem_release(g->consumers);
    mem_release(g->name.p);
    mem_release(g);
}

void stream_group_destroy(struct stream *s, struct stream_group *g)
{
    struct stream_group_set *set = stream_groups(s);
    array_remove((void **)set->v, &set->n, name_lower_bound((void *const *)set->v, set->n, g->name.p, g->name.len));
    group_release(g);
}

void stream_groups_release(struct stream *s)
{
    struct stream_group_set *set = stream_groups(s);
    for (size_t i = 0; i < set->n; i++)
        group_release(set->v[i]);
    mem_release(set->v);
    memset(set, 0, sizeof *set);
}

/* ---- Redis 7.0's entries-read arithmetic --------------------------------------------------- */

static bool id_is_zero(const struct stream_id *id)
{
    return id->ms == 0 && id->seq == 0;
}

bool stream_range_has_tombstones(const struct stream *s, const struct stream_id *start)
{
    struct stream_id max_deleted = stream_max_deleted_id(s), first;
    if (stream_length(s) == 0 || id_is_zero(&max_deleted))
        return false;
    stream_first_entry_id(s, &first);
    if (stream_id_cmp(&first, &max_deleted) > 0)
        return false;
    return stream_id_cmp(start, &max_deleted) <= 0;
}

long long stream_estimate_entries_read(const struct stream *s, const struct stream_id *id)
{
    uint64_t added = stream_entries_added(s), length = stream_length(s);
    struct stream_id last = stream_last_id(s), max_deleted = stream_max_deleted_id(s), first;
    if (added == 0)
        return 0;
    int cmp_last = stream_id_cmp(id, &last);
    if (length == 0 && cmp_last < 1)
        return (long long)added;
    if (cmp_last == 0)
        return (long long)added;
    if (cmp_last > 0)
        return STREAM_ENTRIES_READ_UNKNOWN;
    stream_first_entry_id(s, &first);
    int cmp_id_first = stream_id_cmp(id, &first);
    if (id_is_zero(&max_deleted) || stream_id_cmp(&max_deleted, &first) < 0) {
        if (cmp_id_first < 0)
            return (long long)(added - length);
        if (cmp_id_first == 0)
            return (long long)(added - length + 1);
    }
    return STREAM_ENTRIES_READ_UNKNOWN;
}

bool stream_entry_exists(const struct stream *s, const struct stream_id *id)
{
    struct stream_iter it;
    struct stream_id found;
    size_t nfields;
    stream_iter_init(&it, s, id, id, false);
    return stream_iter_next(&it, &found, &nfields);
}
