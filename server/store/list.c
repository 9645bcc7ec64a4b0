/*
 * list: the list type's structures (see include/percore/list.h).
 *
 * Design.  Every operation is written once, against a quicklist: a doubly
 * linked list of listpack nodes (Redis's quicklist.c without compression).
 * A list in the listpack encoding is opened as a "view": a one-node
 * quicklist on the caller's stack whose node borrows the object's listpack
 * (view_open).  When the operation is done, view_close settles the encoding:
 *
 *   - a view still holding one node writes its (maybe moved) listpack back:
 *     the list stays a listpack;
 *   - a view that grew a second node becomes a heap quicklist, the borrowed
 *     node copied to the heap: listpack -> quicklist costs two allocations,
 *     never a copy of the elements;
 *   - a heap quicklist left with one node at most half full turns back into
 *     a listpack (the half gives hysteresis: a list at the boundary does not
 *     flip on every push and pop).
 *
 * Node limits follow Redis 7.0's _quicklistNodeAllowInsert: fill < 0 bounds
 * a node's bytes (4 KB << (-fill - 1), fill clamped to -5), fill >= 0 its
 * entries (and 8 KB of bytes as a safety limit).  A node is never empty
 * unless the whole list is: an emptied node is unlinked, except the last one,
 * which stays so that head and tail are never NULL.
 *
 * Memory: a quicklist keeps a running byte count (header + nodes + each
 * listpack's allocation), adjusted around every listpack change, so
 * memory() is O(1).  Length is O(1) (the count, or the listpack's).
 *
 * Lazy free: destroy_step frees whole nodes from the head, about `budget`
 * elements per step, keeping the quicklist consistent in between.
 *
 * Serialized form (cross-shard moves): nodes:u64 LE, then per node
 * len:u64 LE and the listpack's lp_data bytes.  deserialize validates every
 * listpack (lp_from_data) and rejects empty nodes and trailing bytes.
 *
 * Threading: a list is touched only by the thread of the shard that owns
 * its key; serialize/deserialize is how it crosses to another thread.
 */
#include "percore/list.h"

#include "percore/listpack.h"
#include "percore/mem.h"
#include "percore/object.h"

#include <string.h>

#define QL_MEM sizeof(struct quicklist)
#define NODE_MEM sizeof(struct ql_node)
#define FILL_MAX 32768          /* Redis FILL_MAX: 1 << 15 */
#define FILL_MIN (-5)           /* -5: 64 KB nodes */
#define SIZE_SAFETY_LIMIT 8192  /* bytes, for fill >= 0 (Redis SIZE_SAFETY_LIMIT) */
#define ENTRY_OVERHEAD 11       /* worst-case listpack entry header + back-length */

/* ---- node limits ------------------------------------------------------- */

static int clamp_fill(int fill)
{
    return fill > FILL_MAX ? FILL_MAX : fill < FILL_MIN ? FILL_MIN : fill;
}

static size_t lp_used(const struct listpack *lp)
{
    size_t n;
    lp_data(lp, &n);
    return n;
}

/* Redis _quicklistNodeAllowInsert: may `node` take one more element of n bytes? */
static bool node_allows(const struct ql_node *node, size_t n, int fill)
{
    size_t count = lp_count(node->lp);
    if (count == 0)
        return true;
    size_t sz = lp_used(node->lp) + n + ENTRY_OVERHEAD;
    fill = clamp_fill(fill);
    if (fill < 0)
        return sz <= ((size_t)4096 << (-fill - 1));
    return sz <= SIZE_SAFETY_LIMIT && count < (size_t)fill;
}

/* at most half the node limit: a lone node this small becomes a listpack again */
static bool node_small(const struct ql_node *node, int fill)
{
    fill = clamp_fill(fill);
    if (fill < 0)
        return lp_used(node->lp) * 2 <= ((size_t)4096 << (-fill - 1));
    return lp_count(node->lp) * 2 <= (size_t)fill && lp_used(node->lp) * 2 <= SIZE_SAFETY_LIMIT;
}

/* ---- nodes --------------------------------------------------------------- */

/* run a listpack change on node's listpack, keeping ql->bytes right */
#define NODE_CHANGE(ql, node, stmt)                     \
    do {                                                \
        (ql)->bytes -= lp_bytes((node)->lp);            \
        stmt;                                           \
        (ql)->bytes += lp_bytes((node)->lp);            \
    } while (0)

/* a new node holding lp (counted in ql->bytes), not linked yet */
static struct ql_node *node_create(struct quicklist *ql, struct listpack *lp)
{
    struct ql_node *node = mem_alloc(sizeof(*node));
    node->prev = node->next = NULL;
    node->lp = lp ? lp : lp_create();
    ql->bytes += NODE_MEM + lp_bytes(node->lp);
    return node;
}

/* link node right after `at` (at NULL: as the new head) */
static void node_link_after(struct quicklist *ql, struct ql_node *at, struct ql_node *node)
{
    node->prev = at;
    node->next = at ? at->next : ql->head;
    if (node->next)
        node->next->prev = node;
    else
        ql->tail = node;
    if (at)
        at->next = node;
    else
        ql->head = node;
    ql->nodes++;
}

/* unlink node and free it with its listpack (the borrowed node is only forgotten) */
static void node_remove(struct quicklist *ql, struct ql_node *node)
{
    if (node->prev)
        node->prev->next = node->next;
    else
        ql->head = node->next;
    if (node->next)
        node->next->prev = node->prev;
    else
        ql->tail = node->prev;
    ql->nodes--;
    ql->bytes -= NODE_MEM + lp_bytes(node->lp);
    lp_destroy(&node->lp);
    if (node == ql->borrowed)
        ql->borrowed = NULL;
    else
        mem_release(node);
}

/* the node holding element `index` (< count) and the index within it */
static struct ql_node *ql_locate(const struct quicklist *ql, size_t index, size_t *local)
{
    struct ql_node *node;
    if (index < ql->count / 2) {
        for (node = ql->head;; node = node->next) {
            size_t c = lp_count(node->lp);
            if (index < c)
                break;
            index -= c;
        }
        *local = index;
    } else {
        size_t back = ql->count - 1 - index;
        size_t c;
        for (node = ql->tail;; node = node->prev) {
            c = lp_count(node->lp);
            if (back < c)
                break;
            back -= c;
        }
        *local = c - 1 - back;
    }
    return node;
}

static void ql_free_all(struct quicklist *ql)
{
    struct ql_node *node = ql->head;
    while (node) {
        struct ql_node *next = node->next;
        lp_destroy(&node->lp);
        mem_release(node);
        node = next;
    }
    mem_release(ql);
}

/* ---- views ----------------------------------------------------------------- */

static struct quicklist *view_open(struct list_view *v, struct object *o)
{
    void *ptr = object_collection_ptr(o);
    v->o = o;
    if (object_collection_encoding(o) == LIST_ENC_QUICKLIST) {
        v->ql = ptr;
        return v->ql;
    }
    v->node.prev = v->node.next = NULL;
    v->node.lp = ptr;
    v->local.head = v->local.tail = &v->node;
    v->local.count = lp_count(ptr);
    v->local.nodes = 1;
    v->local.bytes = QL_MEM + NODE_MEM + lp_bytes(ptr);
    v->local.borrowed = &v->node;
    v->ql = &v->local;
    return v->ql;
}

static void view_close(struct list_view *v, int fill)
{
    struct quicklist *ql = v->ql;
    if (ql == &v->local) {
        if (ql->nodes == 1) {
            struct ql_node *node = ql->head;
            struct listpack *lp = node->lp;
            if (node != &v->node)
                mem_release(node);
            object_collection_set(v->o, LIST_ENC_LISTPACK, lp);
            return;
        }
        /* outgrew one node: a quicklist on the heap from now on */
        struct quicklist *h = mem_alloc(sizeof(*h));
        *h = *ql;
        h->borrowed = NULL;
        if (ql->borrowed) {
            struct ql_node *node = mem_alloc(sizeof(*node));
            *node = v->node;
            if (node->prev)
                node->prev->next = node;
            else
                h->head = node;
            if (node->next)
                node->next->prev = node;
            else
                h->tail = node;
        }
        v->ql = h;
        object_collection_set(v->o, LIST_ENC_QUICKLIST, h);
        return;
    }
    if (ql->nodes == 1 && node_small(ql->head, fill)) {
        struct listpack *lp = ql->head->lp;
        mem_release(ql->head);
        mem_release(ql);
        object_collection_set(v->o, LIST_ENC_LISTPACK, lp);
    }
}

/* ---- operations on a quicklist ----------------------------------------------- */

static void ql_push(struct quicklist *ql, enum list_where where, const void *p, size_t n, int fill)
{
    struct ql_node *node = where == LIST_HEAD ? ql->head : ql->tail;
    if (!node_allows(node, n, fill)) {
        struct ql_node *fresh = node_create(ql, NULL);
        node_link_after(ql, where == LIST_HEAD ? NULL : ql->tail, fresh);
        node = fresh;
    }
    if (where == LIST_HEAD)
        NODE_CHANGE(ql, node, lp_prepend(&node->lp, p, n));
    else
        NODE_CHANGE(ql, node, lp_append(&node->lp, p, n));
    ql->count++;
}

static void ql_delete_range(struct quicklist *ql, size_t start, size_t count)
{
    size_t local;
    struct ql_node *node;
    if (count == 0 || start >= ql->count)
        return;
    if (count > ql->count - start)
        count = ql->count - start;
    node = ql_locate(ql, start, &local);
    while (count > 0) {
        struct ql_node *next = node->next;
        size_t c = lp_count(node->lp);
        size_t take = c - local < count ? c - local : count;
        if (take == c && ql->nodes > 1)
            node_remove(ql, node);
        else
            NODE_CHANGE(ql, node, lp_delete_range(&node->lp, (long)local, take));
        ql->count -= take;
        count -= take;
        node = next;
        local = 0;
    }
}

/* ---- the list interface ------------------------------------------------------- */

struct object *list_object_create(void)
{
    return object_collection_create(OBJ_LIST, LIST_ENC_LISTPACK, lp_create());
}

size_t list_length(struct object *o)
{
    void *ptr = object_collection_ptr(o);
    if (object_collection_encoding(o) == LIST_ENC_LISTPACK)
        return lp_count(ptr);
    return ((struct quicklist *)ptr)->count;
}

/* ql_locate for an index that counts from the tail when negative: NULL when
 * out of range */
static struct ql_node *ql_locate_signed(const struct quicklist *ql, long index, size_t *local)
{
    if (index < 0)
        index += (long)ql->count;
    if (index < 0 || (size_t)index >= ql->count)
        return NULL;
    return ql_locate(ql, (size_t)index, local);
}

void list_push(struct object *o, enum list_where where, const void *p, size_t n, int fill)
{
    struct list_view v;
    ql_push(view_open(&v, o), where, p, n, fill);
    view_close(&v, fill);
}

bool list_index(struct object *o, long index, const char **p, size_t *n)
{
    struct list_view v;
    struct quicklist *ql = view_open(&v, o);
    size_t local;
    struct ql_node *node = ql_locate_signed(ql, index, &local);
    if (node == NULL)
        return false;
    *p = lp_get(node->lp, lp_seek(node->lp, (long)local), n);
    return true;
}

bool list_replace(struct object *o, long index, const void *p, size_t n, int fill)
{
    struct list_view v;
    struct quicklist *ql = view_open(&v, o);
    size_t local;
    struct ql_node *node = ql_locate_signed(ql, index, &local);
    if (node == NULL)
        return false;
    NODE_CHANGE(ql, node, lp_replace(&node->lp, lp_seek(node->lp, (long)local), p, n));
    view_close(&v, fill);
    return true;
}

void list_delete_range(struct object *o, size_t start, size_t count, int fill)
{
    struct list_view v;
    ql_delete_range(view_open(&v, o), start, count);
    view_close(&v, fill);
}

/* ---- iteration --------------------------------------------------------------------- */

void list_iter_init(struct list_iter *it, struct object *o, size_t index, bool forward)
{
    struct quicklist *ql = view_open(&it->view, o);
    size_t local;
    it->forward = forward;
    it->cur_node = NULL;
    it->cur = LP_NONE;
    if (index >= ql->count) {
        it->node = NULL;
        it->pos = LP_NONE;
        return;
    }
    it->node = ql_locate(ql, index, &local);
    it->pos = lp_seek(it->node->lp, (long)local);
}

bool list_iter_next(struct list_iter *it, const char **p, size_t *n)
{
    while (it->node && it->pos == LP_NONE) {
        it->node = it->forward ? it->node->next : it->node->prev;
        if (it->node)
            it->pos = it->forward ? lp_first(it->node->lp) : lp_last(it->node->lp);
    }
    if (!it->node)
        return false;
    const struct listpack *lp = it->node->lp;
    it->cur_node = it->node;
    it->cur = it->pos;
    *p = lp_get(lp, it->pos, n);
    it->pos = it->forward ? lp_next(lp, it->pos) : lp_prev(lp, it->pos);
    return true;
}

void list_iter_delete(struct list_iter *it)
{
    struct quicklist *ql = it->view.ql;
    struct ql_node *node = it->cur_node;
    uint32_t following;
    NODE_CHANGE(ql, node, following = lp_delete(&node->lp, it->cur));
    ql->count--;
    /* forward: what followed now sits where the deleted entry was; backward:
     * the entry before it did not move */
    if (it->forward)
        it->pos = following;
    if (lp_count(node->lp) == 0 && ql->nodes > 1) {
        struct ql_node *go = it->forward ? node->next : node->prev;
        node_remove(ql, node);
        it->node = go;
        it->pos = go ? (it->forward ? lp_first(go->lp) : lp_last(go->lp)) : LP_NONE;
    }
    it->cur_node = NULL;
    it->cur = LP_NONE;
}

/* move the entries of node from position `from` on into a new node after it */
static struct ql_node *node_split(struct quicklist *ql, struct ql_node *node, uint32_t from)
{
    struct listpack *moved = lp_create();
    size_t n = 0;
    for (uint32_t pos = from; pos != LP_NONE; pos = lp_next(node->lp, pos)) {
        size_t len;
        const char *e = lp_get(node->lp, pos, &len);
        lp_append(&moved, e, len);
        n++;
    }
    long keep = (long)(lp_count(node->lp) - n);
    NODE_CHANGE(ql, node, lp_delete_range(&node->lp, keep, n));
    struct ql_node *fresh = node_create(ql, moved);
    node_link_after(ql, node, fresh);
    return fresh;
}

void list_iter_insert(struct list_iter *it, bool after, const void *p, size_t n, int fill)
{
    struct quicklist *ql = it->view.ql;
    struct ql_node *node = it->cur_node;
    uint32_t pos = it->cur;

    if (node_allows(node, n, fill)) {
        uint32_t at = after ? lp_next(node->lp, pos) : pos;
        NODE_CHANGE(ql, node, lp_insert(&node->lp, at, p, n));
    } else {
        bool edge = after ? lp_next(node->lp, pos) == LP_NONE : lp_prev(node->lp, pos) == LP_NONE;
        struct ql_node *side = after ? node->next : node->prev;
        if (edge && side && node_allows(side, n, fill)) {
            if (after)
                NODE_CHANGE(ql, side, lp_prepend(&side->lp, p, n));
            else
                NODE_CHANGE(ql, side, lp_append(&side->lp, p, n));
        } else if (edge) {
            struct ql_node *fresh = node_create(ql, NULL);
            node_link_after(ql, after ? node : node->prev, fresh);
            NODE_CHANGE(ql, fresh, lp_append(&fresh->lp, p, n));
        } else {
            /* in the middle of a full node: split it where the element goes */
            struct ql_node *right = node_split(ql, node, after ? lp_next(node->lp, pos) : pos);
            if (node_allows(node, n, fill)) {
                NODE_CHANGE(ql, node, lp_append(&node->lp, p, n));
            } else if (node_allows(right, n, fill)) {
                NODE_CHANGE(ql, right, lp_prepend(&right->lp, p, n));
            } else {
                struct ql_node *fresh = node_create(ql, NULL);
                node_link_after(ql, node, fresh);
                NODE_CHANGE(ql, fresh, lp_append(&fresh->lp, p, n));
            }
        }
    }
    ql->count++;
    it->node = NULL; /* positions moved: the walk is over */
    it->pos = LP_NONE;
    it->cur_node = NULL;
    it->cur = LP_NONE;
}

void list_iter_finish(struct list_iter *it, int fill)
{
    view_close(&it->view, fill);
}

/* ---- consistency check (tests) ---------------------------------------------------- */

int list_check(struct object *o, int fill)
{
    (void)fill;
    if (object_type(o) != OBJ_LIST)
        return -1;
    void *ptr = object_collection_ptr(o);
    if (object_collection_encoding(o) == LIST_ENC_LISTPACK)
        return ptr ? 0 : -2;
    if (object_collection_encoding(o) != LIST_ENC_QUICKLIST)
        return -3;
    const struct quicklist *ql = ptr;
    size_t count = 0, nodes = 0, bytes = QL_MEM;
    const struct ql_node *prev = NULL;
    if (ql->borrowed != NULL || ql->head == NULL || ql->head->prev != NULL)
        return -4;
    for (const struct ql_node *node = ql->head; node; node = node->next) {
        if (node->prev != prev || node->lp == NULL)
            return -5;
        if (lp_count(node->lp) == 0 && ql->count != 0)
            return -6; /* an empty node only in an empty list */
        count += lp_count(node->lp);
        bytes += NODE_MEM + lp_bytes(node->lp);
        nodes++;
        prev = node;
    }
    if (prev != ql->tail)
        return -7;
    if (count != ql->count || nodes != ql->nodes)
        return -8;
    if (bytes != ql->bytes)
        return -9;
    return 0;
}

/* ---- object_type_ops ---------------------------------------------------------------- */

static const char *list_encoding_name(unsigned encoding)
{
    (void)encoding;
    return "quicklist"; /* Redis 7.0's answer for every list */
}

static size_t list_ops_length(unsigned encoding, const void *ptr)
{
    if (encoding == LIST_ENC_LISTPACK)
        return lp_count(ptr);
    return ((const struct quicklist *)ptr)->count;
}

static size_t list_ops_memory(unsigned encoding, const void *ptr)
{
    if (encoding == LIST_ENC_LISTPACK)
        return lp_bytes(ptr);
    return ((const struct quicklist *)ptr)->bytes;
}

static void list_ops_destroy(unsigned encoding, void *ptr)
{
    if (encoding == LIST_ENC_LISTPACK) {
        struct listpack *lp = ptr;
        lp_destroy(&lp);
        return;
    }
    ql_free_all(ptr);
}

static bool list_ops_destroy_step(unsigned encoding, void *ptr, size_t budget)
{
    if (encoding == LIST_ENC_LISTPACK) {
        list_ops_destroy(encoding, ptr);
        return true;
    }
    struct quicklist *ql = ptr;
    size_t freed = 0;
    while (ql->head && (freed == 0 || freed + lp_count(ql->head->lp) <= budget)) {
        struct ql_node *node = ql->head;
        size_t c = lp_count(node->lp);
        ql->head = node->next;
        if (ql->head)
            ql->head->prev = NULL;
        else
            ql->tail = NULL;
        ql->nodes--;
        ql->count -= c;
        ql->bytes -= NODE_MEM + lp_bytes(node->lp);
        lp_destroy(&node->lp);
        mem_release(node);
        freed += c ? c : 1;
    }
    if (ql->head)
        return false;
    mem_release(ql);
    return true;
}

static void put_u64(unsigned char *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)b[i] << (8 * i);
    return v;
}

static void emit_lp(const struct listpack *lp, object_emit_fn *emit, void *arg)
{
    size_t len;
    const void *d = lp_data(lp, &len);
    unsigned char h[8];
    put_u64(h, len);
    emit(arg, h, sizeof h);
    emit(arg, d, len);
}

static void list_ops_serialize(unsigned encoding, const void *ptr, object_emit_fn *emit, void *arg)
{
    unsigned char h[8];
    if (encoding == LIST_ENC_LISTPACK) {
        put_u64(h, 1);
        emit(arg, h, sizeof h);
        emit_lp(ptr, emit, arg);
        return;
    }
    const struct quicklist *ql = ptr;
    put_u64(h, ql->nodes);
    emit(arg, h, sizeof h);
    for (const struct ql_node *node = ql->head; node; node = node->next)
        emit_lp(node->lp, emit, arg);
}

static void *list_ops_deserialize(const void *p, size_t n, unsigned *encoding)
{
    const unsigned char *b = p;
    if (n < 8)
        return NULL;
    uint64_t nodes = get_u64(b);
    size_t off = 8;
    /* every node takes at least its 8-byte length */
    if (nodes == 0 || nodes > (n - off) / 8)
        return NULL;
    struct quicklist *ql = mem_alloc(sizeof(*ql));
    memset(ql, 0, sizeof(*ql));
    ql->bytes = QL_MEM;
    for (uint64_t i = 0; i < nodes; i++) {
        if (n - off < 8)
            goto bad;
        uint64_t len = get_u64(b + off);
        off += 8;
        if (len > n - off)
            goto bad;
        struct listpack *lp = lp_from_data(b + off, (size_t)len);
        off += (size_t)len;
        if (lp == NULL)
            goto bad;
        if (lp_count(lp) == 0) {
            lp_destroy(&lp);
            goto bad;
        }
        struct ql_node *node = node_create(ql, lp);
        node_link_after(ql, ql->tail, node);
        ql->count += lp_count(lp);
    }
    if (off != n)
        goto bad;
    if (ql->nodes == 1) {
        struct listpack *lp = ql->head->lp;
        mem_release(ql->head);
        mem_release(ql);
        *encoding = LIST_ENC_LISTPACK;
        return lp;
    }
    *encoding = LIST_ENC_QUICKLIST;
    return ql;
bad:
    ql_free_all(ql);
    return NULL;
}

const struct object_type_ops list_type_ops = {
    .name = "list",
    .encoding_name = list_encoding_name,
    .length = list_ops_length,
    .memory = list_ops_memory,
    .destroy = list_ops_destroy,
    .destroy_step = list_ops_destroy_step,
    .serialize = list_ops_serialize,
    .deserialize = list_ops_deserialize,
};
