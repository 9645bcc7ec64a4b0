/*
 * stream: Redis's stream value (see include/percore/stream.h).
 *
 * Design.  Redis keeps a stream in a radix tree of listpacks keyed by each
 * listpack's master ID; here the nodes sit in one array ordered by master ID
 * (appends go at the end, trims take from the front), found by binary
 * search.  Each node is one listpack (store/listpack.c) in which an entry is
 *
 *     [header] [field 1] [value 1] ... [field n] [value n] [trailer]
 *
 * header: a flags byte (ENTRY_DELETED), then LEB128 varints: the ms part
 * minus the master's, the seq part (minus the master's when the ms parts
 * are equal), and n; trailer: n again, so that the entry is found from its
 * end when reading backwards.  A deleted entry stays in its node, flagged,
 * as in Redis (so node boundaries, and with them `~` trimming, are Redis's);
 * a node whose entries are all deleted goes.  A node is full, as Redis
 * 7.0's streamAppendItem decides, when the size of Redis's listpack for it
 * (kept up to date as entries come: rdb_lp_element_size of each element
 * Redis's layout has, rdb.c) plus the new entry's field and value bytes
 * would reach stream-node-max-bytes, or it holds stream-node-max-entries
 * entries (live and deleted).
 *
 * Serialized form (object_serialize, to move a stream across shards): the
 * metadata (last ID, max deleted ID, entries added, length: u64s little
 * endian), the node count, then each node's master ID, entry counts, size
 * in Redis's layout and listpack bytes; rebuilt node for node, every entry
 * checked; then the consumer groups (stream_group.c), each with its PEL and
 * consumers.
 *
 * Threading: a stream is touched only by the thread of the shard that owns
 * its key.
 */
#include "percore/stream.h"

#include "percore/listpack.h"
#include "percore/stream_group.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/rdb.h"
#include "percore/util.h"

#include <string.h>

enum { ENTRY_DELETED = 1 };

#define STREAM_LISTPACK_MAX_SIZE (1u << 30) /* Redis's cap on a node's bytes */
#define STREAM_HEADER_MAX 31                /* flags + three 10-byte varints */

struct stream_node {
    struct stream_id master; /* the ID of the first entry it was made with (Redis's rax key) */
    uint32_t entries;        /* entries in it, live and deleted */
    uint32_t deleted;        /* of which deleted */
    size_t redis_bytes;      /* the size of Redis's listpack for it but its two counts (redis_node_bytes) */
    struct listpack *lp;     /* the entries */
};

struct stream {
    struct stream_node *nodes; /* ordered by master ID */
    size_t n;                  /* nodes in use */
    size_t cap;                /* nodes allocated */
    uint64_t length;           /* live entries */
    uint64_t entries_added;    /* entries ever added (XSETID may set it) */
    struct stream_id last_id;  /* the last ID generated */
    struct stream_id max_deleted; /* the highest ID XDEL removed */
    size_t lp_bytes;           /* bytes of the nodes' listpacks, for memory accounting */
    struct stream_group_set groups; /* its consumer groups (stream_group.c) */
};

/* ---- IDs ------------------------------------------------------------------------- */

int stream_id_cmp(const struct stream_id *a, const struct stream_id *b)
{
    if (a->ms != b->ms)
        return a->ms > b->ms ? 1 : -1;
    if (a->seq != b->seq)
        return a->seq > b->seq ? 1 : -1;
    return 0;
}

bool stream_id_incr(struct stream_id *id)
{
    if (id->seq != UINT64_MAX) {
        id->seq++;
    } else if (id->ms != UINT64_MAX) {
        id->ms++;
        id->seq = 0;
    } else {
        id->ms = id->seq = 0;
        return false;
    }
    return true;
}

bool stream_id_decr(struct stream_id *id)
{
    if (id->seq != 0) {
        id->seq--;
    } else if (id->ms != 0) {
        id->ms--;
        id->seq = UINT64_MAX;
    } else {
        id->ms = id->seq = UINT64_MAX;
        return false;
    }
    return true;
}

static size_t u64_format(uint64_t v, char *buf)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

/* decimal digits p[*at..n) up to a '-' or the end, into *v: false when none, or past 64 bits */
static bool u64_parse(const char *p, size_t n, size_t *at, uint64_t *v)
{
    size_t start = *at;
    *v = 0;
    for (; *at < n && p[*at] >= '0' && p[*at] <= '9'; (*at)++) {
        uint64_t d = (uint64_t)(p[*at] - '0');
        if (*v > (UINT64_MAX - d) / 10)
            return false;
        *v = *v * 10 + d;
    }
    return *at > start;
}

bool stream_id_parse(const char *p, size_t n, struct stream_id *id)
{
    size_t at = 0;
    if (!u64_parse(p, n, &at, &id->ms))
        return false;
    id->seq = 0;
    if (at == n)
        return true;
    at++; /* the '-' */
    return p[at - 1] == '-' && u64_parse(p, n, &at, &id->seq) && at == n;
}

size_t stream_id_format(const struct stream_id *id, char *buf)
{
    size_t n = u64_format(id->ms, buf);
    buf[n++] = '-';
    n += u64_format(id->seq, buf + n);
    return n;
}

/* ---- entry headers ---------------------------------------------------------------- */

static size_t varint_put(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

/* false when p[*at..n) holds no whole varint */
static bool varint_get(const unsigned char *p, size_t n, size_t *at, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; *at < n && shift < 64; shift += 7) {
        unsigned char c = p[(*at)++];
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

struct entry_header {
    unsigned flags;
    struct stream_id id;
    uint64_t nfields;
};

static size_t header_encode(unsigned char *buf, unsigned flags, const struct stream_id *master,
                            const struct stream_id *id, uint64_t nfields)
{
    size_t n = 0;
    buf[n++] = (unsigned char)flags;
    n += varint_put(buf + n, id->ms - master->ms);
    n += varint_put(buf + n, id->ms == master->ms ? id->seq - master->seq : id->seq);
    n += varint_put(buf + n, nfields);
    return n;
}

static bool header_decode(const char *p, size_t n, const struct stream_id *master, struct entry_header *h)
{
    const unsigned char *u = (const unsigned char *)p;
    size_t at = 1;
    uint64_t dms, seq;
    if (n < 4 || u[0] > ENTRY_DELETED || !varint_get(u, n, &at, &dms) || !varint_get(u, n, &at, &seq) ||
        !varint_get(u, n, &at, &h->nfields) || at != n)
        return false;
    h->flags = u[0];
    h->id.ms = master->ms + dms;
    h->id.seq = dms == 0 ? master->seq + seq : seq;
    return true;
}

static void node_header(const struct stream_node *node, uint32_t pos, struct entry_header *h)
{
    size_t n;
    const char *p = lp_get(node->lp, pos, &n);
    header_decode(p, n, &node->master, h);
}

/* the header after the entry whose header is at pos, LP_NONE at the end */
static uint32_t entry_after(const struct stream_node *node, uint32_t pos, uint64_t nfields)
{
    for (uint64_t i = 0; i < 2 * nfields + 2 && pos != LP_NONE; i++)
        pos = lp_next(node->lp, pos);
    return pos;
}

/* the header of the entry whose trailer is at pos */
static uint32_t entry_from_trailer(const struct stream_node *node, uint32_t pos)
{
    size_t n, at = 0;
    uint64_t nfields = 0;
    const char *p = lp_get(node->lp, pos, &n);
    varint_get((const unsigned char *)p, n, &at, &nfields);
    for (uint64_t i = 0; i < 2 * nfields + 1; i++)
        pos = lp_prev(node->lp, pos);
    return pos;
}

/* ---- the stream -------------------------------------------------------------------- */

static struct stream *stream_create(void)
{
    struct stream *s = mem_calloc(1, sizeof *s);
    return s;
}

static void node_release(struct stream *s, struct stream_node *node)
{
    s->lp_bytes -= lp_bytes(node->lp);
    lp_destroy(&node->lp);
}

static void stream_destroy(struct stream *s)
{
    stream_groups_release(s);
    for (size_t i = 0; i < s->n; i++)
        lp_destroy(&s->nodes[i].lp);
    mem_release(s->nodes);
    mem_release(s);
}

struct object *stream_object_create(void)
{
    return object_collection_create(OBJ_STREAM, 0, stream_create());
}

struct stream_group_set *stream_groups(const struct stream *s)
{
    return (struct stream_group_set *)&s->groups;
}

struct stream *stream_of(const struct object *o)
{
    return object_collection_ptr(o);
}

uint64_t stream_length(const struct stream *s)
{
    return s->length;
}

size_t stream_nodes(const struct stream *s)
{
    return s->n;
}

struct stream_id stream_last_id(const struct stream *s)
{
    return s->last_id;
}

struct stream_id stream_max_deleted_id(const struct stream *s)
{
    return s->max_deleted;
}

uint64_t stream_entries_added(const struct stream *s)
{
    return s->entries_added;
}

void stream_set_meta(struct stream *s, const struct stream_id *last_id, const long long *entries_added,
                     const struct stream_id *max_deleted)
{
    if (last_id)
        s->last_id = *last_id;
    if (entries_added)
        s->entries_added = (uint64_t)*entries_added;
    if (max_deleted)
        s->max_deleted = *max_deleted;
}

static bool edge_entry_id(const struct stream *s, bool last, struct stream_id *id)
{
    struct stream_iter it;
    struct stream_id lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    size_t nfields;
    stream_iter_init(&it, s, &lo, &hi, last);
    if (stream_iter_next(&it, id, &nfields))
        return true;
    id->ms = id->seq = 0;
    return false;
}

bool stream_first_entry_id(const struct stream *s, struct stream_id *id)
{
    return edge_entry_id(s, false, id);
}

bool stream_last_entry_id(const struct stream *s, struct stream_id *id)
{
    return edge_entry_id(s, true, id);
}

static struct stream_node *node_add(struct stream *s, const struct stream_id *master)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1;
        s->nodes = mem_realloc(s->nodes, s->cap * sizeof *s->nodes);
    }
    struct stream_node *node = &s->nodes[s->n++];
    node->master = *master;
    node->entries = node->deleted = 0;
    node->redis_bytes = 0;
    node->lp = lp_create();
    s->lp_bytes += lp_bytes(node->lp);
    return node;
}

/* remove nodes [from, from+count) */
static void nodes_remove(struct stream *s, size_t from, size_t count)
{
    if (count == 0)
        return;
    for (size_t i = from; i < from + count; i++)
        node_release(s, &s->nodes[i]);
    memmove(&s->nodes[from], &s->nodes[from + count], (s->n - from - count) * sizeof *s->nodes);
    s->n -= count;
}

/* the size of Redis's listpack for the node: header and end, the master entry, the entries */
static size_t redis_node_bytes(const struct stream_node *node)
{
    return 7 + node->redis_bytes + rdb_lp_int_size(node->entries - node->deleted) + rdb_lp_int_size(node->deleted);
}

/* the master entry's fields: the node's first entry's pairs, *n of them (at LP_NONE: none yet) */
static uint32_t master_fields(const struct stream_node *node, uint64_t *n)
{
    struct entry_header h;
    uint32_t pos = lp_first(node->lp);
    *n = 0;
    if (pos == LP_NONE)
        return LP_NONE;
    node_header(node, pos, &h);
    *n = h.nfields;
    return lp_next(node->lp, pos);
}

/*
 * Account in node->redis_bytes for the entry about to be added to it (Redis's layout: see rdb.c's
 * save_stream_node): its flags, ID deltas, field count and fields unless they are the master's,
 * values, element count; the first one also makes the master entry (its field count, fields, 0).
 */
static void redis_account_entry(struct stream_node *node, const struct stream_id *id, size_t nfields,
                                const struct stream_str *fields)
{
    uint64_t nmaster;
    uint32_t at = master_fields(node, &nmaster);
    bool same = at == LP_NONE || nmaster == nfields;
    size_t b = 0;
    for (size_t i = 0; same && at != LP_NONE && i < nfields; i++) {
        size_t n;
        const char *p = lp_get(node->lp, at, &n);
        same = n == fields[2 * i].n && memcmp(p, fields[2 * i].p, n) == 0;
        at = lp_next(node->lp, lp_next(node->lp, at));
    }
    if (node->entries == 0) {
        b += rdb_lp_int_size((long long)nfields) + rdb_lp_int_size(0);
        for (size_t i = 0; i < nfields; i++)
            b += rdb_lp_element_size(fields[2 * i].p, fields[2 * i].n);
    }
    b += rdb_lp_int_size(0) + rdb_lp_int_size((long long)(id->ms - node->master.ms)) +
         rdb_lp_int_size((long long)(id->seq - node->master.seq));
    if (!same)
        b += rdb_lp_int_size((long long)nfields);
    for (size_t i = 0; i < nfields; i++) {
        if (!same)
            b += rdb_lp_element_size(fields[2 * i].p, fields[2 * i].n);
        b += rdb_lp_element_size(fields[2 * i + 1].p, fields[2 * i + 1].n);
    }
    node->redis_bytes += b + rdb_lp_int_size((long long)(same ? nfields + 3 : 2 * nfields + 4));
}

/* does the tail node take an entry of `bytes` field and value bytes (Redis 7.0's streamAppendItem) */
static bool tail_has_room(const struct stream *s, size_t bytes, const struct stream_limits *lim)
{
    if (s->n == 0)
        return false;
    const struct stream_node *tail = &s->nodes[s->n - 1];
    size_t max_bytes = (size_t)lim->node_max_bytes;
    if (max_bytes == 0 || max_bytes > STREAM_LISTPACK_MAX_SIZE)
        max_bytes = STREAM_LISTPACK_MAX_SIZE;
    if (redis_node_bytes(tail) + bytes >= max_bytes)
        return false;
    return lim->node_max_entries == 0 || tail->entries < (uint64_t)lim->node_max_entries;
}

static void node_push(struct stream *s, struct stream_node *node, const void *p, size_t n)
{
    s->lp_bytes -= lp_bytes(node->lp);
    lp_append(&node->lp, p, n);
    s->lp_bytes += lp_bytes(node->lp);
}

void stream_append(struct stream *s, const struct stream_id *id, size_t nfields, const struct stream_str *fields,
                   const struct stream_limits *lim)
{
    size_t bytes = 0;
    for (size_t i = 0; i < 2 * nfields; i++)
        bytes += fields[i].n;
    struct stream_node *node = tail_has_room(s, bytes, lim) ? &s->nodes[s->n - 1] : node_add(s, id);
    unsigned char buf[STREAM_HEADER_MAX];
    redis_account_entry(node, id, nfields, fields);
    node_push(s, node, buf, header_encode(buf, 0, &node->master, id, nfields));
    for (size_t i = 0; i < 2 * nfields; i++)
        node_push(s, node, fields[i].p, fields[i].n);
    node_push(s, node, buf, varint_put(buf, nfields));
    node->entries++;
    s->length++;
    s->entries_added++;
    s->last_id = *id;
}

/* the index of the last node whose master ID is <= id, or n when none */
static size_t node_find(const struct stream *s, const struct stream_id *id)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (stream_id_cmp(&s->nodes[mid].master, id) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? s->n : lo - 1;
}

/* flag the live entry whose header is at pos deleted */
static void entry_mark_deleted(struct stream *s, struct stream_node *node, uint32_t pos,
                               const struct entry_header *h)
{
    unsigned char buf[STREAM_HEADER_MAX];
    size_t n = header_encode(buf, ENTRY_DELETED, &node->master, &h->id, h->nfields);
    s->lp_bytes -= lp_bytes(node->lp);
    lp_replace(&node->lp, pos, buf, n);
    s->lp_bytes += lp_bytes(node->lp);
    node->deleted++;
    s->length--;
}

bool stream_delete(struct stream *s, const struct stream_id *id)
{
    size_t i = node_find(s, id);
    if (i == s->n)
        return false;
    struct stream_node *node = &s->nodes[i];
    for (uint32_t pos = lp_first(node->lp); pos != LP_NONE;) {
        struct entry_header h;
        node_header(node, pos, &h);
        int c = stream_id_cmp(&h.id, id);
        if (c > 0)
            return false;
        if (c == 0) {
            if (h.flags & ENTRY_DELETED)
                return false;
            entry_mark_deleted(s, node, pos, &h);
            if (node->deleted == node->entries)
                nodes_remove(s, i, 1);
            return true;
        }
        pos = entry_after(node, pos, h.nfields);
    }
    return false;
}

/* the ID of the node's last entry, deleted or not */
static struct stream_id node_last_id(const struct stream_node *node)
{
    struct entry_header h;
    node_header(node, entry_from_trailer(node, lp_last(node->lp)), &h);
    return h.id;
}

long long stream_trim(struct stream *s, const struct stream_trim *t)
{
    long long deleted = 0;
    size_t gone = 0; /* whole nodes removed from the front */

    if (t->strategy == STREAM_TRIM_NONE)
        return 0;
    for (size_t i = 0; i < s->n; i++) {
        struct stream_node *node = &s->nodes[i];
        uint64_t live = node->entries - node->deleted;
        bool remove;
        if (t->strategy == STREAM_TRIM_MAXLEN && s->length <= (uint64_t)t->maxlen)
            break;
        if (t->limit && deleted + (long long)live > t->limit)
            break;
        if (t->strategy == STREAM_TRIM_MAXLEN) {
            remove = s->length - live >= (uint64_t)t->maxlen;
        } else {
            struct stream_id last = node_last_id(node);
            remove = stream_id_cmp(&last, &t->minid) < 0;
        }
        if (remove) {
            s->length -= live;
            deleted += (long long)live;
            gone++;
            continue;
        }
        if (t->approx)
            break;
        /* entries from within the node */
        for (uint32_t pos = lp_first(node->lp); pos != LP_NONE;) {
            struct entry_header h;
            node_header(node, pos, &h);
            if (t->strategy == STREAM_TRIM_MAXLEN ? s->length <= (uint64_t)t->maxlen
                                                  : stream_id_cmp(&h.id, &t->minid) >= 0)
                break;
            if (!(h.flags & ENTRY_DELETED)) {
                entry_mark_deleted(s, node, pos, &h);
                deleted++;
            }
            pos = entry_after(node, pos, h.nfields);
        }
        break;
    }
    nodes_remove(s, 0, gone);
    return deleted;
}

/* ---- reading --------------------------------------------------------------------- */

/* the node's first (last, rev) entry header */
static uint32_t node_edge(const struct stream_node *node, bool rev)
{
    return rev ? entry_from_trailer(node, lp_last(node->lp)) : lp_first(node->lp);
}

void stream_iter_init(struct stream_iter *it, const struct stream *s, const struct stream_id *start,
                      const struct stream_id *end, bool rev)
{
    memset(it, 0, sizeof *it);
    it->s = s;
    it->start = *start;
    it->end = *end;
    it->rev = rev;
    it->done = s->n == 0 || stream_id_cmp(start, end) > 0;
    if (it->done)
        return;
    size_t i = node_find(s, rev ? end : start);
    if (i == s->n) {
        if (rev) {
            it->done = true;
            return;
        }
        i = 0;
    }
    it->node = i;
    it->pos = node_edge(&s->nodes[i], rev);
}

bool stream_iter_next(struct stream_iter *it, struct stream_id *id, size_t *nfields)
{
    while (!it->done) {
        const struct stream_node *node = &it->s->nodes[it->node];
        if (it->pos == LP_NONE) {
            if (it->rev ? it->node == 0 : it->node + 1 == it->s->n) {
                it->done = true;
                break;
            }
            it->node += it->rev ? -1 : 1;
            it->pos = node_edge(&it->s->nodes[it->node], it->rev);
            continue;
        }
        struct entry_header h;
        uint32_t pos = it->pos;
        node_header(node, pos, &h);
        if (it->rev) {
            uint32_t before = lp_prev(node->lp, pos);
            it->pos = before == LP_NONE ? LP_NONE : entry_from_trailer(node, before);
        } else {
            it->pos = entry_after(node, pos, h.nfields);
        }
        if (h.flags & ENTRY_DELETED)
            continue;
        if (stream_id_cmp(&h.id, it->rev ? &it->start : &it->end) * (it->rev ? -1 : 1) > 0) {
            it->done = true;
            break;
        }
        if (stream_id_cmp(&h.id, it->rev ? &it->end : &it->start) * (it->rev ? -1 : 1) < 0)
            continue;
        *id = h.id;
        *nfields = (size_t)h.nfields;
        it->field = lp_next(node->lp, pos);
        return true;
    }
    return false;
}

void stream_iter_pair(struct stream_iter *it, struct stream_str *field, struct stream_str *value)
{
    const struct listpack *lp = it->s->nodes[it->node].lp;
    field->p = lp_get(lp, it->field, &field->n);
    it->field = lp_next(lp, it->field);
    value->p = lp_get(lp, it->field, &value->n);
    it->field = lp_next(lp, it->field);
}

/* ---- node by node (RDB) ---------------------------------------------------------------- */

void stream_node_info(const struct stream *s, size_t node, struct stream_node_info *info)
{
    info->master = s->nodes[node].master;
    info->entries = s->nodes[node].entries;
    info->deleted = s->nodes[node].deleted;
}

void stream_node_iter_init(struct stream_iter *it, const struct stream *s, size_t node)
{
    memset(it, 0, sizeof *it);
    it->s = s;
    it->node = node;
    it->pos = lp_first(s->nodes[node].lp);
}

bool stream_node_next(struct stream_iter *it, struct stream_id *id, size_t *nfields, bool *deleted)
{
    const struct stream_node *node = &it->s->nodes[it->node];
    struct entry_header h;
    if (it->pos == LP_NONE)
        return false;
    node_header(node, it->pos, &h);
    *id = h.id;
    *nfields = (size_t)h.nfields;
    *deleted = h.flags & ENTRY_DELETED;
    it->field = lp_next(node->lp, it->pos);
    it->pos = entry_after(node, it->pos, h.nfields);
    return true;
}

void stream_load_node(struct stream *s, const struct stream_id *master)
{
    node_add(s, master);
}

bool stream_load_entry(struct stream *s, const struct stream_id *id, bool deleted, size_t nfields,
                       const struct stream_str *fields)
{
    struct stream_node *node = &s->nodes[s->n - 1];
    bool first = node->entries == 0;
    if (nfields == 0 || node->entries == UINT32_MAX || (first && stream_id_cmp(id, &node->master) != 0) ||
        (!first && stream_id_cmp(id, &s->last_id) <= 0) || (first && s->n > 1 && stream_id_cmp(id, &s->last_id) <= 0))
        return false;
    unsigned char buf[STREAM_HEADER_MAX];
    redis_account_entry(node, id, nfields, fields);
    node_push(s, node, buf, header_encode(buf, deleted ? ENTRY_DELETED : 0, &node->master, id, nfields));
    for (size_t i = 0; i < 2 * nfields; i++)
        node_push(s, node, fields[i].p, fields[i].n);
    node_push(s, node, buf, varint_put(buf, nfields));
    node->entries++;
    node->deleted += deleted;
    s->length += !deleted;
    s->last_id = *id; /* the highest so far; stream_load_finish sets the real one */
    return true;
}

bool stream_load_finish(struct stream *s, uint64_t length, const struct stream_id *last_id,
                        const struct stream_id *max_deleted, uint64_t entries_added)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->nodes[i].entries == 0)
            return false;
    if (length != s->length || (s->n && stream_id_cmp(&s->last_id, last_id) > 0))
        return false;
    s->last_id = *last_id;
    s->max_deleted = *max_deleted;
    s->entries_added = entries_added;
    return true;
}

/* ---- object_type_ops --------------------------------------------------------------- */

static const char *stream_encoding_name(unsigned encoding)
{
    (void)encoding;
    return "stream";
}

static size_t stream_ops_length(unsigned encoding, const void *ptr)
{
    (void)encoding;
    return ((const struct stream *)ptr)->length;
}

/* the consumer groups' bytes: each group, consumer and NACK, their names and arrays */
static size_t groups_memory(const struct stream *s)
{
    size_t n = s->groups.cap * sizeof *s->groups.v;
    for (size_t i = 0; i < s->groups.n; i++) {
        const struct stream_group *g = s->groups.v[i];
        n += sizeof *g + g->name.len + 1 + g->pel.cap * sizeof *g->pel.v + g->pel.n * sizeof **g->pel.v +
             g->cap * sizeof *g->consumers;
        for (size_t j = 0; j < g->nconsumers; j++)
            n += sizeof *g->consumers[j] + g->consumers[j]->name.len + 1 +
                 g->consumers[j]->pel.cap * sizeof *g->consumers[j]->pel.v;
    }
    return n;
}

static size_t stream_ops_memory(unsigned encoding, const void *ptr)
{
    (void)encoding;
    const struct stream *s = ptr;
    return sizeof *s + s->cap * sizeof *s->nodes + s->lp_bytes + groups_memory(s);
}

static void stream_ops_destroy(unsigned encoding, void *ptr)
{
    (void)encoding;
    stream_destroy(ptr);
}

/* lazy free: nodes from the end, about `budget` entries at a time */
static bool stream_ops_destroy_step(unsigned encoding, void *ptr, size_t budget)
{
    (void)encoding;
    struct stream *s = ptr;
    size_t freed = 0;
    while (s->n > 0 && freed < budget) {
        struct stream_node *node = &s->nodes[--s->n];
        freed += node->entries;
        node_release(s, node);
    }
    if (s->n > 0)
        return false;
    stream_destroy(s);
    return true;
}

static void put_u64(object_emit_fn *emit, void *arg, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    emit(arg, b, sizeof b);
}

static void put_name(object_emit_fn *emit, void *arg, const struct stream_name *name)
{
    put_u64(emit, arg, name->len);
    emit(arg, name->p, name->len);
}

/* the groups after the nodes: each one's name, last ID, entries read, PEL (ID, delivery time and count),
 * consumers (name, seen time, the IDs they own) */
static void groups_serialize(const struct stream *s, object_emit_fn *emit, void *arg)
{
    put_u64(emit, arg, s->groups.n);
    for (size_t i = 0; i < s->groups.n; i++) {
        const struct stream_group *g = s->groups.v[i];
        put_name(emit, arg, &g->name);
        put_u64(emit, arg, g->last_id.ms);
        put_u64(emit, arg, g->last_id.seq);
        put_u64(emit, arg, (uint64_t)g->entries_read);
        put_u64(emit, arg, g->pel.n);
        for (size_t j = 0; j < g->pel.n; j++) {
            const struct stream_nack *nack = g->pel.v[j];
            put_u64(emit, arg, nack->id.ms);
            put_u64(emit, arg, nack->id.seq);
            put_u64(emit, arg, (uint64_t)nack->delivery_time);
            put_u64(emit, arg, nack->delivery_count);
        }
        put_u64(emit, arg, g->nconsumers);
        for (size_t j = 0; j < g->nconsumers; j++) {
            const struct stream_consumer *c = g->consumers[j];
            put_name(emit, arg, &c->name);
            put_u64(emit, arg, (uint64_t)c->seen_time);
            put_u64(emit, arg, c->pel.n);
            for (size_t k = 0; k < c->pel.n; k++) {
                put_u64(emit, arg, c->pel.v[k]->id.ms);
                put_u64(emit, arg, c->pel.v[k]->id.seq);
            }
        }
    }
}

static void stream_ops_serialize(unsigned encoding, const void *ptr, object_emit_fn *emit, void *arg)
{
    (void)encoding;
    const struct stream *s = ptr;
    const uint64_t meta[] = {s->last_id.ms, s->last_id.seq, s->max_deleted.ms, s->max_deleted.seq,
                             s->entries_added, s->length, s->n};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        put_u64(emit, arg, meta[i]);
    for (size_t i = 0; i < s->n; i++) {
        const struct stream_node *node = &s->nodes[i];
        size_t n;
        const void *data = lp_data(node->lp, &n);
        put_u64(emit, arg, node->master.ms);
        put_u64(emit, arg, node->master.seq);
        put_u64(emit, arg, node->entries);
        put_u64(emit, arg, node->deleted);
        put_u64(emit, arg, node->redis_bytes);
        put_u64(emit, arg, n);
        emit(arg, data, n);
    }
    groups_serialize(s, emit, arg);
}

struct reader {
    const unsigned char *p;
    size_t n;
    bool ok;
};

static uint64_t get_u64(struct reader *r)
{
    uint64_t v = 0;
    if (r->n < 8) {
        r->ok = false;
        return 0;
    }
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += 8;
    r->n -= 8;
    return v;
}

/* a name: its length then its bytes, NULL (and !r->ok) when short */
static const char *get_name(struct reader *r, size_t *len)
{
    uint64_t n = get_u64(r);
    if (!r->ok || n > r->n) {
        r->ok = false;
        return NULL;
    }
    const char *p = (const char *)r->p;
    r->p += n;
    r->n -= n;
    *len = (size_t)n;
    return p;
}

/* groups_serialize's groups into s; false when malformed */
static bool groups_deserialize(struct stream *s, struct reader *r)
{
    uint64_t ngroups = get_u64(r);
    for (uint64_t i = 0; r->ok && i < ngroups; i++) {
        size_t len = 0;
        const char *name = get_name(r, &len);
        struct stream_id last = {get_u64(r), get_u64(r)};
        long long entries_read = (long long)get_u64(r);
        if (!r->ok)
            return false;
        struct stream_group *g = stream_group_create(s, name, len, &last, entries_read);
        uint64_t npel = get_u64(r);
        if (g == NULL || npel > r->n / 32)
            return false;
        for (uint64_t j = 0; j < npel; j++) {
            struct stream_id id = {get_u64(r), get_u64(r)};
            long long time = (long long)get_u64(r);
            if (!stream_nack_load(g, &id, time, get_u64(r)))
                return false;
        }
        uint64_t nconsumers = get_u64(r);
        for (uint64_t j = 0; r->ok && j < nconsumers; j++) {
            const char *cname = get_name(r, &len);
            long long seen = (long long)get_u64(r);
            uint64_t owned = get_u64(r);
            struct stream_consumer *c = r->ok ? stream_consumer_create(g, cname, len, seen) : NULL;
            if (c == NULL || owned > r->n / 16)
                return false;
            for (uint64_t k = 0; k < owned; k++) {
                struct stream_id id = {get_u64(r), get_u64(r)};
                if (!stream_nack_load_owner(g, c, &id))
                    return false;
            }
        }
        if (!r->ok || !stream_group_loaded(g))
            return false;
    }
    return r->ok;
}

/* every entry of the node well formed, in order after *prev, above no last ID, the counts right */
static bool node_valid(const struct stream_node *node, struct stream_id *prev, bool first, uint64_t *live)
{
    uint32_t entries = 0, deleted = 0;
    for (uint32_t pos = lp_first(node->lp); pos != LP_NONE;) {
        struct entry_header h;
        size_t n;
        const char *p = lp_get(node->lp, pos, &n);
        if (!header_decode(p, n, &node->master, &h) || (h.id.ms < node->master.ms) ||
            (entries == 0 && stream_id_cmp(&h.id, &node->master) != 0) ||
            (!(first && entries == 0) && stream_id_cmp(&h.id, prev) <= 0))
            return false;
        *prev = h.id;
        uint32_t trailer = entry_after(node, pos, h.nfields);
        trailer = trailer == LP_NONE ? lp_last(node->lp) : lp_prev(node->lp, trailer);
        if (entry_from_trailer(node, trailer) != pos || h.nfields == 0)
            return false;
        entries++;
        deleted += h.flags & ENTRY_DELETED;
        pos = lp_next(node->lp, trailer);
    }
    *live += entries - deleted;
    return entries > 0 && entries == node->entries && deleted == node->deleted;
}

static void *stream_ops_deserialize(const void *p, size_t n, unsigned *encoding)
{
    struct reader r = {p, n, true};
    struct stream *s = stream_create();
    uint64_t live = 0, nodes;
    struct stream_id prev = {0, 0};

    *encoding = 0;
    s->last_id.ms = get_u64(&r);
    s->last_id.seq = get_u64(&r);
    s->max_deleted.ms = get_u64(&r);
    s->max_deleted.seq = get_u64(&r);
    s->entries_added = get_u64(&r);
    s->length = get_u64(&r);
    nodes = get_u64(&r);
    for (uint64_t i = 0; r.ok && i < nodes; i++) {
        struct stream_id master = {get_u64(&r), get_u64(&r)};
        uint64_t entries = get_u64(&r), deleted = get_u64(&r), redis_bytes = get_u64(&r), bytes = get_u64(&r);
        if (!r.ok || bytes > r.n || entries > UINT32_MAX || deleted > entries)
            break;
        struct listpack *lp = lp_from_data(r.p, (size_t)bytes);
        if (lp == NULL)
            break;
        r.p += bytes;
        r.n -= bytes;
        struct stream_node *node = node_add(s, &master);
        node_release(s, node);
        node->lp = lp;
        s->lp_bytes += lp_bytes(lp);
        node->entries = (uint32_t)entries;
        node->deleted = (uint32_t)deleted;
        node->redis_bytes = (size_t)redis_bytes;
        if (!node_valid(node, &prev, i == 0, &live))
            r.ok = false;
    }
    if (!r.ok || !groups_deserialize(s, &r) || r.n != 0 || s->n != nodes || live != s->length || (s->n && stream_id_cmp(&prev, &s->last_id) > 0)) {
        stream_destroy(s);
        return NULL;
    }
    return s;
}

const struct object_type_ops stream_type_ops = {
    .name = "stream",
    .encoding_name = stream_encoding_name,
    .length = stream_ops_length,
    .memory = stream_ops_memory,
    .destroy = stream_ops_destroy,
    .destroy_step = stream_ops_destroy_step,
    .serialize = stream_ops_serialize,
    .deserialize = stream_ops_deserialize,
};
