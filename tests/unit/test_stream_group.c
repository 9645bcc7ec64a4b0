/*
 * test_stream_group: a stream's consumer groups (store/stream_group.c): names
 * in Redis's radix-tree order, the group's and the consumers' PELs kept in
 * step through adds, moves, acknowledgements and consumer deletion (against
 * a reference of who owns what), the entries-read estimate of Redis 7.0, the
 * loading checks, and the groups carried by object_serialize (a stream moved
 * across shards), truncated forms refused.
 */
#include "percore/object.h"
#include "percore/stream.h"
#include "percore/stream_group.h"

#include "check.h"

#include <stdlib.h>

struct buf {
    char *p;
    size_t len, cap;
};

static void buf_emit(void *arg, const void *p, size_t n)
{
    struct buf *b = arg;
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 16;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void add_entries(struct stream *s, int n)
{
    struct stream_limits lim = {4096, 100};
    struct stream_str fv[2] = {{"f", 1}, {"v", 1}};
    for (int i = 1; i <= n; i++) {
        struct stream_id id = {(uint64_t)i, 0};
        stream_append(s, &id, 1, fv, &lim);
    }
}

/* every NACK of the group's PEL in its owner's PEL, ordered, and no other */
static bool pels_consistent(const struct stream_group *g)
{
    size_t owned = 0;
    for (size_t i = 0; i < g->pel.n; i++) {
        const struct stream_nack *n = g->pel.v[i];
        if (i && stream_id_cmp(&g->pel.v[i - 1]->id, &n->id) >= 0)
            return false;
        if (!n->consumer || stream_pel_find(&n->consumer->pel, &n->id) != n)
            return false;
    }
    for (size_t c = 0; c < g->nconsumers; c++) {
        const struct stream_pel *p = &g->consumers[c]->pel;
        for (size_t i = 0; i < p->n; i++)
            if (p->v[i]->consumer != g->consumers[c] || stream_pel_find(&g->pel, &p->v[i]->id) != p->v[i])
                return false;
        owned += p->n;
    }
    return owned == g->pel.n;
}

static void test_names(void)
{
    struct object *o = stream_object_create();
    struct stream *s = stream_of(o);
    struct stream_id zero = {0, 0};
    const char *names[] = {"b", "a", "ab", "B", "", "a\0b"};
    size_t lens[] = {1, 1, 2, 1, 0, 3};
    for (int i = 0; i < 6; i++)
        CHECK(stream_group_create(s, names[i], lens[i], &zero, STREAM_ENTRIES_READ_UNKNOWN) != NULL);
    CHECK(stream_group_create(s, "a", 1, &zero, 0) == NULL);
    CHECK_EQ_LL(stream_group_count(s), 6);
    /* "" < "B" < "a" < "a\0b" < "ab" < "b" (bytes, a prefix first) */
    const char *order[] = {"", "B", "a", "a\0b", "ab", "b"};
    size_t olens[] = {0, 1, 1, 3, 2, 1};
    for (size_t i = 0; i < 6; i++) {
        const struct stream_group *g = stream_group_at(s, i);
        CHECK(g->name.len == olens[i] && memcmp(g->name.p, order[i], olens[i]) == 0);
    }
    struct stream_group *g = stream_group_find(s, "a\0b", 3);
    CHECK(g != NULL && g->name.len == 3);
    CHECK(stream_group_find(s, "a\0", 2) == NULL);
    stream_group_destroy(s, g);
    CHECK(stream_group_find(s, "a\0b", 3) == NULL);
    CHECK_EQ_LL(stream_group_count(s), 5);
    g = stream_group_find(s, "a", 1);
    CHECK(stream_consumer_create(g, "zz", 2, 5) != NULL);
    CHECK(stream_consumer_create(g, "z", 1, 5) != NULL);
    CHECK(stream_consumer_create(g, "z", 1, 5) == NULL);
    CHECK(g->nconsumers == 2 && g->consumers[0]->name.len == 1 && g->consumers[1]->name.len == 2);
    object_destroy(&o);
}

static void test_pels(void)
{
    struct object *o = stream_object_create();
    struct stream *s = stream_of(o);
    struct stream_id zero = {0, 0};
    add_entries(s, 200);
    struct stream_group *g = stream_group_create(s, "g", 1, &zero, 0);
    struct stream_consumer *c[3];
    for (int i = 0; i < 3; i++) {
        char name[2] = {(char)('x' + i), 0};
        c[i] = stream_consumer_create(g, name, 1, 0);
    }
    int owner[201]; /* the reference: -1 not pending */
    for (int i = 0; i <= 200; i++)
        owner[i] = -1;
    srand(7);
    for (int step = 0; step < 5000; step++) {
        int e = 1 + rand() % 200, who = rand() % 3, op = rand() % 3;
        struct stream_id id = {(uint64_t)e, 0};
        struct stream_nack *n = stream_pel_find(&g->pel, &id);
        CHECK((n != NULL) == (owner[e] >= 0));
        if (op == 0 && !n) {
            stream_nack_add(g, c[who], &id, step, 1);
            owner[e] = who;
        } else if (op == 1 && n) {
            stream_nack_move(n, c[who]);
            owner[e] = who;
        } else if (op == 2 && n) {
            stream_nack_remove(g, n);
            owner[e] = -1;
        }
    }
    CHECK(pels_consistent(g));
    size_t want = 0;
    for (int i = 1; i <= 200; i++) {
        struct stream_id id = {(uint64_t)i, 0};
        struct stream_nack *n = stream_pel_find(&g->pel, &id);
        want += owner[i] == 1;
        CHECK(owner[i] < 0 ? n == NULL : n != NULL && n->consumer == c[owner[i]]);
    }
    CHECK_EQ_LL(c[1]->pel.n, want);
    size_t before = g->pel.n;
    stream_consumer_delete(g, c[1]);
    CHECK_EQ_LL(g->pel.n, before - want);
    CHECK(g->nconsumers == 2 && pels_consistent(g));
    struct stream_id id50 = {50, 0};
    size_t at = stream_pel_lower_bound(&g->pel, &id50);
    CHECK(at == g->pel.n || stream_id_cmp(&g->pel.v[at]->id, &id50) >= 0);
    CHECK(at == 0 || stream_id_cmp(&g->pel.v[at - 1]->id, &id50) < 0);

    /* carried across shards: the same groups, PELs and times */
    struct buf b = {0};
    object_serialize(o, buf_emit, &b);
    struct object *copy = object_deserialize(b.p, b.len);
    CHECK(copy != NULL);
    if (copy) {
        struct stream_group *h = stream_group_find(stream_of(copy), "g", 1);
        CHECK(h != NULL && h->pel.n == g->pel.n && h->nconsumers == 2 && pels_consistent(h));
        for (size_t i = 0; h && i < h->pel.n; i++)
            CHECK(stream_id_cmp(&h->pel.v[i]->id, &g->pel.v[i]->id) == 0 &&
                  h->pel.v[i]->delivery_time == g->pel.v[i]->delivery_time &&
                  h->pel.v[i]->consumer->name.p[0] == g->pel.v[i]->consumer->name.p[0]);
        object_destroy(&copy);
    }
    for (size_t cut = 0; cut < b.len; cut += 1 + b.len / 97) {
        struct object *bad = object_deserialize(b.p, cut);
        CHECK(bad == NULL);
        object_destroy(&bad);
    }
    free(b.p);
    object_destroy(&o);
}

static void test_loading(void)
{
    struct object *o = stream_object_create();
    struct stream *s = stream_of(o);
    struct stream_id zero = {0, 0}, one = {1, 0}, two = {2, 0};
    add_entries(s, 3);
    struct stream_group *g = stream_group_create(s, "g", 1, &zero, 0);
    CHECK(stream_nack_load(g, &one, 10, 2));
    CHECK(!stream_nack_load(g, &one, 10, 2));
    CHECK(stream_nack_load(g, &two, 10, 2));
    CHECK(!stream_group_loaded(g));
    struct stream_consumer *c = stream_consumer_create(g, "c", 1, 0), *d = stream_consumer_create(g, "d", 1, 0);
    CHECK(stream_nack_load_owner(g, c, &one));
    CHECK(!stream_nack_load_owner(g, d, &one));
    struct stream_id nine = {9, 0};
    CHECK(!stream_nack_load_owner(g, d, &nine));
    CHECK(!stream_group_loaded(g));
    CHECK(stream_nack_load_owner(g, d, &two));
    CHECK(stream_group_loaded(g) && pels_consistent(g));
    object_destroy(&o);
}

static void test_entries_read(void)
{
    struct object *o = stream_object_create();
    struct stream *s = stream_of(o);
    struct stream_id zero = {0, 0}, id;
    CHECK_EQ_LL(stream_estimate_entries_read(s, &zero), 0);
    add_entries(s, 10);
    id = (struct stream_id){10, 0};
    CHECK_EQ_LL(stream_estimate_entries_read(s, &id), 10);
    id = (struct stream_id){1, 0};
    CHECK_EQ_LL(stream_estimate_entries_read(s, &id), 1);
    CHECK_EQ_LL(stream_estimate_entries_read(s, &zero), 0);
    id = (struct stream_id){11, 0};
    CHECK_EQ_LL(stream_estimate_entries_read(s, &id), STREAM_ENTRIES_READ_UNKNOWN);
    id = (struct stream_id){5, 0};
    CHECK_EQ_LL(stream_estimate_entries_read(s, &id), STREAM_ENTRIES_READ_UNKNOWN); /* in the middle */
    CHECK(!stream_range_has_tombstones(s, &zero));
    struct stream_id six = {6, 0};
    CHECK(stream_delete(s, &six));
    stream_set_meta(s, NULL, NULL, &six);
    CHECK(stream_range_has_tombstones(s, &zero));
    struct stream_id seven = {7, 0};
    CHECK(!stream_range_has_tombstones(s, &seven));
    CHECK(stream_entry_exists(s, &seven) && !stream_entry_exists(s, &six));
    object_destroy(&o);
}

int main(void)
{
    test_names();
    test_pels();
    test_loading();
    test_entries_read();
    return check_done("test_stream_group");
}
