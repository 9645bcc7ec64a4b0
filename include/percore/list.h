/*
 * list: the list type (Redis's t_list.c data side and quicklist.c).
 *
 * Two encodings, one interface.  A small list is a single listpack
 * (LIST_ENC_LISTPACK); once it outgrows one node (list-max-listpack-size:
 * > 0 entries, -1..-5 = 4/8/16/32/64 KB of bytes) it becomes a quicklist
 * (LIST_ENC_QUICKLIST): a doubly linked list of listpack nodes, each bounded
 * by the same limit, so pushes and pops at either end stay O(1) however long
 * the list grows.  Converting either way is O(1): the listpack becomes (or
 * stops being) the quicklist's only node.  A quicklist left with one small
 * node (at most half the limit) turns back into a listpack.  Redis 7.0
 * reports "quicklist" for every list, so OBJECT ENCODING says "quicklist"
 * for both.  list-compress-depth is accepted and ignored (no compression).
 *
 * Mutating functions take the list object and may switch its encoding
 * (object_collection_set), so callers never hold the structure pointer.
 * `fill` is the current list-max-listpack-size.  Element bytes returned by
 * reads point into the list and are valid until its next change.
 *
 * Threading: a list object belongs to the shard that owns its key and is
 * touched only by that shard's thread (ARCHITECTURE.md rule 1).
 */
#ifndef PERCORE_LIST_H
#define PERCORE_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "percore/object.h"

struct listpack;
struct ql_node;

enum list_encoding {
    LIST_ENC_LISTPACK = 0, /* ptr is a struct listpack * */
    LIST_ENC_QUICKLIST = 1, /* ptr is a struct quicklist * (list.c) */
};

enum list_where { LIST_HEAD = 0, LIST_TAIL = 1 };

#define LIST_FILL_DEFAULT (-2) /* Redis's default list-max-listpack-size: 8 KB nodes */

/* a quicklist: nodes of listpacks (fields private to list.c, here for the iterator) */
struct quicklist {
    struct ql_node *head;      /* first node; never NULL (an empty list keeps one empty node) */
    struct ql_node *tail;      /* last node */
    size_t count;              /* elements in all nodes */
    size_t nodes;              /* nodes linked */
    size_t bytes;              /* memory held: header, nodes, listpacks (running total) */
    struct ql_node *borrowed;  /* a listpack list seen as a quicklist: its on-stack node */
};

struct ql_node {
    struct ql_node *prev;      /* towards the head, NULL at the head */
    struct ql_node *next;      /* towards the tail, NULL at the tail */
    struct listpack *lp;       /* the node's elements, never NULL */
};

/*
 * A list seen as a quicklist whatever its encoding: a listpack list becomes a
 * one-node quicklist on the caller's stack.  Private to list.c; exposed so an
 * iterator can live on the stack.
 */
struct list_view {
    struct object *o;          /* the list object */
    struct quicklist *ql;      /* what operations act on: &local or the object's own */
    struct quicklist local;    /* the listpack encoding seen as a quicklist */
    struct ql_node node;       /* local's one node, borrowing the object's listpack */
};

/* a new empty list object (listpack encoding); the caller stores it */
struct object *list_object_create(void);
/* elements, O(1) */
size_t list_length(struct object *o);
/* push one element at the head or the tail */
void list_push(struct object *o, enum list_where where, const void *p, size_t n, int fill);
/* the element at index (negative: from the end); false when out of range */
bool list_index(struct object *o, long index, const char **p, size_t *n);
/* replace the element at index (negative: from the end); false when out of range */
bool list_replace(struct object *o, long index, const void *p, size_t n, int fill);
/* delete `count` elements from index start on (0 <= start, start + count <= length) */
void list_delete_range(struct object *o, size_t start, size_t count, int fill);

/*
 * Iteration from index (0 <= index < length) towards the tail (forward) or
 * the head.  Each step is O(1): LRANGE walks nodes in order, never seeking
 * per element.  The iterator may delete the element it last returned and go
 * on, or insert next to it (and then stop).  list_iter_finish() must be
 * called after a change (it settles the encoding); it is harmless otherwise.
 */
struct list_iter {
    struct list_view view;     /* the list being walked */
    struct ql_node *node;      /* node of the next element; NULL when done */
    uint32_t pos;              /* its position in node->lp; LP_NONE: go to the next node */
    uint32_t cur;              /* position of the element last returned */
    struct ql_node *cur_node;  /* its node */
    bool forward;              /* towards the tail */
};

void list_iter_init(struct list_iter *it, struct object *o, size_t index, bool forward);
/* the next element; false at the end */
bool list_iter_next(struct list_iter *it, const char **p, size_t *n);
/* delete the element last returned; iteration goes on with the one after it */
void list_iter_delete(struct list_iter *it);
/* insert before or after the element last returned; iteration must stop */
void list_iter_insert(struct list_iter *it, bool after, const void *p, size_t n, int fill);
void list_iter_finish(struct list_iter *it, int fill);

/* internal consistency check for tests: 0 when every invariant holds */
int list_check(struct object *o, int fill);

#endif
