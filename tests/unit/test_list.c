/*
 * test_list: the list type (store/list.c) against a plain array model.
 *
 * Random pushes, pops, range deletes, replaces, iterator deletes and inserts
 * run on a list object and on the model under several node limits (entries,
 * zero, bytes); after every step the list must hold the model's elements in
 * order (walked both ways), pass list_check (links, counts, the running
 * byte count) and be in the encoding its size calls for.  Then: encoding
 * changes both ways, serialize/deserialize round trips and malformed input,
 * and freeing in steps.
 */
#include "percore/list.h"

#include "percore/listpack.h"
#include "percore/mem.h"
#include "percore/object.h"

#include "check.h"

#include <stdint.h>
#include <stdlib.h>

/* ---- the model ------------------------------------------------------------ */

struct elem {
    char *p;
    size_t n;
};

struct model {
    struct elem *e;
    size_t len;
    size_t cap;
};

static void model_insert(struct model *m, size_t at, const char *p, size_t n)
{
    if (m->len == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->e = realloc(m->e, m->cap * sizeof(*m->e));
    }
    memmove(m->e + at + 1, m->e + at, (m->len - at) * sizeof(*m->e));
    m->e[at].p = malloc(n ? n : 1);
    memcpy(m->e[at].p, p, n);
    m->e[at].n = n;
    m->len++;
}

static void model_delete(struct model *m, size_t at, size_t count)
{
    for (size_t i = at; i < at + count; i++)
        free(m->e[i].p);
    memmove(m->e + at, m->e + at + count, (m->len - at - count) * sizeof(*m->e));
    m->len -= count;
}

static void model_free(struct model *m)
{
    model_delete(m, 0, m->len);
    free(m->e);
    memset(m, 0, sizeof(*m));
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* a value: mostly short, sometimes long enough to fill a byte-bounded node */
static size_t make_value(char *buf, long tag)
{
    size_t n;
    switch (rnd() % 10) {
    case 0: n = 0; break;
    case 1: n = 1000 + rnd() % 3000; break;
    default: n = (size_t)snprintf(buf, 32, "v%ld", tag); return n;
    }
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)('a' + (tag + (long)i) % 26);
    return n;
}

/* the list equals the model, walked forward and backward and by index */
static bool same(struct object *o, const struct model *m)
{
    struct list_iter it;
    const char *p;
    size_t n, i = 0;

    if (list_length(o) != m->len || object_length(o) != m->len)
        return false;
    list_iter_init(&it, o, 0, true);
    while (list_iter_next(&it, &p, &n)) {
        if (i >= m->len || n != m->e[i].n || memcmp(p, m->e[i].p, n) != 0)
            return false;
        i++;
    }
    if (i != m->len)
        return false;
    if (m->len) {
        list_iter_init(&it, o, m->len - 1, false);
        while (list_iter_next(&it, &p, &n)) {
            i--;
            if (n != m->e[i].n || memcmp(p, m->e[i].p, n) != 0)
                return false;
        }
        if (i != 0)
            return false;
        size_t k = (size_t)(rnd() % m->len);
        if (!list_index(o, (long)k, &p, &n) || n != m->e[k].n || memcmp(p, m->e[k].p, n) != 0)
            return false;
        if (!list_index(o, (long)k - (long)m->len, &p, &n) || n != m->e[k].n)
            return false;
    }
    return !list_index(o, (long)m->len, &p, &n) && !list_index(o, -(long)m->len - 1, &p, &n);
}

/* ---- random operations against the model ------------------------------------------ */

static void random_ops(int fill, int steps)
{
    struct object *o = list_object_create();
    struct model m = {0};
    char *buf = malloc(8192);
    int bad_same = 0, bad_check = 0, multi = 0, back = 0;
    size_t longest = 0;
    unsigned last_enc = LIST_ENC_LISTPACK;

    for (int step = 0; step < steps; step++) {
        size_t n = make_value(buf, step);
        unsigned op = (unsigned)(rnd() % 100);
        /* grow at first, shrink later, so lists span many nodes and then few */
        bool grow = op < (step < steps / 2 ? 75u : 30u);
        op = (unsigned)(rnd() % 100); /* which change, when not a push */
        if (grow && op % 2 == 0) {
            list_push(o, LIST_HEAD, buf, n, fill);
            model_insert(&m, 0, buf, n);
        } else if (grow) {
            list_push(o, LIST_TAIL, buf, n, fill);
            model_insert(&m, m.len, buf, n);
        } else if (m.len == 0) {
            continue;
        } else if (op < 70) {
            /* a range from anywhere: mostly short, sometimes to the end */
            size_t start = (size_t)(rnd() % m.len);
            size_t count = 1 + (size_t)(rnd() % (op < 66 ? 3 : m.len - start));
            if (count > m.len - start)
                count = m.len - start;
            list_delete_range(o, start, count, fill);
            model_delete(&m, start, count);
        } else if (op < 78) {
            size_t at = (size_t)(rnd() % m.len);
            CHECK(list_replace(o, (long)at, buf, n, fill));
            model_delete(&m, at, 1);
            model_insert(&m, at, buf, n);
        } else if (op < 82) {
            /* iterator delete of every k-th element, forward or backward */
            bool forward = rnd() % 2;
            size_t k = 1 + (size_t)(rnd() % 16), i = 0, idx;
            struct list_iter it;
            const char *p;
            size_t len;
            idx = forward ? 0 : m.len - 1;
            list_iter_init(&it, o, idx, forward);
            while (list_iter_next(&it, &p, &len)) {
                if (i++ % k == 0) {
                    list_iter_delete(&it);
                    model_delete(&m, idx, 1);
                    if (!forward)
                        idx--;
                } else {
                    idx = forward ? idx + 1 : idx - 1;
                }
            }
            list_iter_finish(&it, fill);
        } else {
            /* insert before or after a random element */
            size_t at = (size_t)(rnd() % m.len), i = 0;
            bool after = rnd() % 2;
            struct list_iter it;
            const char *p;
            size_t len;
            list_iter_init(&it, o, 0, true);
            while (list_iter_next(&it, &p, &len)) {
                if (i++ == at) {
                    list_iter_insert(&it, after, buf, n, fill);
                    break;
                }
            }
            list_iter_finish(&it, fill);
            model_insert(&m, after ? at + 1 : at, buf, n);
        }
        if (!same(o, &m))
            bad_same++;
        if (list_check(o, fill) != 0)
            bad_check++;
        unsigned enc = object_collection_encoding(o);
        multi += enc == LIST_ENC_QUICKLIST;
        back += enc == LIST_ENC_LISTPACK && last_enc == LIST_ENC_QUICKLIST;
        last_enc = enc;
        longest = m.len > longest ? m.len : longest;
    }
    if (multi <= 100 || back == 0)
        fprintf(stderr, "fill %d: multi %d back %d longest %zu\n", fill, multi, back, longest);
    /* the walk crossed the encoding threshold both ways */
    CHECK(multi > 100);
    CHECK(back > 0);
    CHECK(longest > 100);
    if (bad_same || bad_check)
        fprintf(stderr, "fill %d: %d mismatches, %d check failures\n", fill, bad_same, bad_check);
    CHECK(bad_same == 0);
    CHECK(bad_check == 0);
    object_destroy(&o);
    model_free(&m);
    free(buf);
}

/* ---- encodings ---------------------------------------------------------------------- */

static void test_encodings(void)
{
    struct object *o = list_object_create();
    CHECK_EQ_LL(object_collection_encoding(o), LIST_ENC_LISTPACK);
    CHECK(strcmp(object_encoding_name(o), "quicklist") == 0);
    CHECK(strcmp(object_type_name(o), "list") == 0);

    /* fill 4: four entries per node; the fifth makes a quicklist */
    for (int i = 0; i < 4; i++)
        list_push(o, LIST_TAIL, "abc", 3, 4);
    CHECK_EQ_LL(object_collection_encoding(o), LIST_ENC_LISTPACK);
    list_push(o, LIST_TAIL, "abc", 3, 4);
    CHECK_EQ_LL(object_collection_encoding(o), LIST_ENC_QUICKLIST);
    CHECK_EQ_LL(list_check(o, 4), 0);
    CHECK(strcmp(object_encoding_name(o), "quicklist") == 0);
    size_t mem_ql = object_memory(o);

    /* back to one node, but not small enough: stays a quicklist */
    list_delete_range(o, 4, 1, 4);
    CHECK_EQ_LL(list_length(o), 4);
    CHECK_EQ_LL(object_collection_encoding(o), LIST_ENC_QUICKLIST);
    /* half full: a listpack again */
    list_delete_range(o, 0, 2, 4);
    CHECK_EQ_LL(object_collection_encoding(o), LIST_ENC_LISTPACK);
    CHECK(object_memory(o) < mem_ql);
    object_destroy(&o);

    /* fill -1: 4 KB nodes */
    o = list_object_create();
    char big[1000];
    memset(big, 'x', sizeof big);
    for (int i = 0; i < 3; i++)
        list_push(o, LIST_HEAD, big, sizeof big, -1);
    CHECK_EQ_LL(object_collection_encoding(o), LIST_ENC_LISTPACK);
    for (int i = 0; i < 3; i++)
        list_push(o, LIST_HEAD, big, sizeof big, -1);
    CHECK_EQ_LL(object_collection_encoding(o), LIST_ENC_QUICKLIST);
    CHECK_EQ_LL(list_check(o, -1), 0);
    object_destroy(&o);

    /* a 10 KB element gets a node of its own, even in a listpack */
    o = list_object_create();
    char *huge = malloc(10000);
    memset(huge, 'y', 10000);
    list_push(o, LIST_TAIL, huge, 10000, -2);
    CHECK_EQ_LL(object_collection_encoding(o), LIST_ENC_LISTPACK);
    list_push(o, LIST_TAIL, "a", 1, -2);
    CHECK_EQ_LL(object_collection_encoding(o), LIST_ENC_QUICKLIST);
    list_push(o, LIST_HEAD, "b", 1, -2);
    CHECK_EQ_LL(list_check(o, -2), 0);
    const char *p;
    size_t n;
    CHECK(list_index(o, 1, &p, &n) && n == 10000 && p[9999] == 'y');
    CHECK(list_index(o, -1, &p, &n) && n == 1 && p[0] == 'a');
    free(huge);
    object_destroy(&o);

    /* emptied by an iterator: one empty node remains until the caller deletes the key */
    o = list_object_create();
    for (int i = 0; i < 20; i++)
        list_push(o, LIST_TAIL, "z", 1, 3);
    struct list_iter it;
    list_iter_init(&it, o, 0, true);
    while (list_iter_next(&it, &p, &n))
        list_iter_delete(&it);
    list_iter_finish(&it, 3);
    CHECK_EQ_LL(list_length(o), 0);
    CHECK_EQ_LL(list_check(o, 3), 0);
    list_push(o, LIST_TAIL, "again", 5, 3);
    CHECK(list_index(o, 0, &p, &n) && n == 5);
    object_destroy(&o);
}

/* ---- serialize / deserialize --------------------------------------------------------- */

struct buf {
    unsigned char *p;
    size_t n;
    size_t cap;
};

static void emit(void *arg, const void *p, size_t n)
{
    struct buf *b = arg;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static bool same_lists(struct object *a, struct object *b)
{
    struct list_iter ia, ib;
    const char *pa, *pb;
    size_t na, nb;
    if (list_length(a) != list_length(b))
        return false;
    list_iter_init(&ia, a, 0, true);
    list_iter_init(&ib, b, 0, true);
    while (list_iter_next(&ia, &pa, &na)) {
        if (!list_iter_next(&ib, &pb, &nb) || na != nb || memcmp(pa, pb, na) != 0)
            return false;
    }
    return true;
}

static void test_serialize(void)
{
    int sizes[] = {1, 3, 50, 1000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        struct object *o = list_object_create();
        char v[32];
        for (int i = 0; i < sizes[s]; i++) {
            int n = snprintf(v, sizeof v, "item-%d", i);
            list_push(o, LIST_TAIL, v, (size_t)n, 8);
        }
        struct buf b = {0};
        object_serialize(o, emit, &b);
        struct object *c = object_deserialize(b.p, b.n);
        CHECK(c != NULL);
        if (c) {
            CHECK(object_type(c) == OBJ_LIST);
            CHECK(same_lists(o, c));
            CHECK_EQ_LL(list_check(c, 8), 0);
            CHECK_EQ_LL(object_collection_encoding(c), object_collection_encoding(o));
            object_destroy(&c);
        }
        /* every truncation is rejected */
        size_t bad = 0;
        for (size_t cut = 0; cut < b.n; cut += (b.n > 400 ? 37 : 1)) {
            struct object *t = object_deserialize(b.p, cut);
            if (t) {
                bad++;
                object_destroy(&t);
            }
        }
        CHECK_EQ_LL(bad, 0);
        /* flipped bytes: rejected, or a valid list (never a crash or a broken one) */
        for (int k = 0; k < 300; k++) {
            unsigned char *copy = malloc(b.n);
            memcpy(copy, b.p, b.n);
            size_t at = (size_t)(rnd() % b.n);
            copy[at] ^= (unsigned char)(1 + rnd() % 255);
            struct object *t = object_deserialize(copy, b.n);
            if (t) {
                CHECK_EQ_LL(list_check(t, 8), 0);
                object_destroy(&t);
            }
            free(copy);
        }
        /* trailing garbage and zero nodes */
        unsigned char *longer = malloc(b.n + 1);
        memcpy(longer, b.p, b.n);
        longer[b.n] = 0;
        CHECK(object_deserialize(longer, b.n + 1) == NULL);
        free(longer);
        unsigned char zero[2 + 8] = {OBJ_LIST, 0};
        CHECK(object_deserialize(zero, sizeof zero) == NULL);
        free(b.p);
        object_destroy(&o);
    }
}

/* ---- lazy free ------------------------------------------------------------------------ */

static void test_destroy_step(void)
{
    struct object *o = list_object_create();
    for (int i = 0; i < 100000; i++)
        list_push(o, LIST_TAIL, "0123456789", 10, -2);
    CHECK_EQ_LL(object_collection_encoding(o), LIST_ENC_QUICKLIST);
    int steps = 0;
    while (!object_destroy_step(&o, 1000))
        steps++;
    CHECK(o == NULL);
    /* whole nodes of ~680 elements: one or two per step of 1000 */
    CHECK(steps >= 100 && steps <= 200);

    /* a small list goes in one step */
    o = list_object_create();
    list_push(o, LIST_TAIL, "a", 1, -2);
    CHECK(object_destroy_step(&o, 1));
    CHECK(o == NULL);
}

/* ---- iteration cost: a walk never seeks per element ---------------------------------- */

static void test_long_walk(void)
{
    struct object *o = list_object_create();
    char v[32];
    for (int i = 0; i < 200000; i++) {
        int n = snprintf(v, sizeof v, "%d", i);
        list_push(o, LIST_TAIL, v, (size_t)n, -2);
    }
    struct list_iter it;
    const char *p;
    size_t n;
    long i = 150000, bad = 0;
    list_iter_init(&it, o, 150000, true);
    while (list_iter_next(&it, &p, &n)) {
        int k = snprintf(v, sizeof v, "%ld", i++);
        if ((size_t)k != n || memcmp(v, p, n) != 0)
            bad++;
    }
    CHECK_EQ_LL(bad, 0);
    CHECK_EQ_LL(i, 200000);
    CHECK(list_index(o, 123456, &p, &n) && n == 6 && memcmp(p, "123456", 6) == 0);
    CHECK_EQ_LL(list_check(o, -2), 0);
    /* memory is about what the elements take, and O(1) to ask */
    size_t mem = object_memory(o);
    CHECK(mem > 200000 * 7 && mem < 200000 * 20);
    object_destroy(&o);
}

int main(void)
{
    int fills[] = {1, 2, 4, 16, 0, -1, -2, -5, 128};
    for (size_t i = 0; i < sizeof fills / sizeof fills[0]; i++)
        random_ops(fills[i], fills[i] == -5 ? 8000 : 3000);
    test_encodings();
    test_serialize();
    test_destroy_step();
    test_long_walk();
    return check_done("test_list");
}
