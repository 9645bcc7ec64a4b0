/*
 * test_set: the set type through its object: encodings and conversion
 * (by a string member, by size), membership, iteration, random members,
 * OBJECT ENCODING names, memory, lazy free and the cross-shard form
 * (round trip in both encodings, malformed input rejected).
 */
#include "percore/set.h"

#include "percore/object.h"
#include "percore/siphash.h"

#include "check.h"

#include <stdlib.h>

static bool add(struct object *o, const char *s, long long max)
{
    return set_add(o, s, strlen(s), max);
}

static bool has(struct object *o, const char *s)
{
    return set_is_member(o, s, strlen(s));
}

static void test_intset_to_hashtable(void)
{
    struct object *o = set_create_for("12", 2);
    CHECK(object_type(o) == OBJ_SET);
    CHECK(strcmp(object_type_name(o), "set") == 0);
    CHECK(set_encoding(o) == SET_ENC_INTSET);
    CHECK(strcmp(object_encoding_name(o), "intset") == 0);
    CHECK(add(o, "12", 512));
    CHECK(!add(o, "12", 512));
    CHECK(add(o, "-7", 512));
    CHECK(add(o, "9223372036854775807", 512));
    CHECK(set_encoding(o) == SET_ENC_INTSET);
    CHECK(has(o, "-7") && !has(o, "7") && !has(o, "a") && !has(o, "012"));
    /* non-canonical integers are strings: conversion */
    CHECK(add(o, "012", 512));
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    CHECK(strcmp(object_encoding_name(o), "hashtable") == 0);
    CHECK(set_size(o) == 4);
    CHECK(object_length(o) == 4);
    CHECK(has(o, "12") && has(o, "-7") && has(o, "012") && has(o, "9223372036854775807"));
    CHECK(!has(o, "+12"));
    /* never back, even when only integers remain */
    CHECK(set_remove(o, "012", 3));
    CHECK(!set_remove(o, "012", 3));
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    object_destroy(&o);

    o = set_create_for("a", 1);
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    object_destroy(&o);
    o = set_create_for("", 0);
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    object_destroy(&o);
}

static void test_threshold(void)
{
    struct object *o = set_create(SET_ENC_INTSET);
    for (int i = 0; i < 4; i++) {
        char b[16];
        snprintf(b, sizeof b, "%d", i);
        CHECK(add(o, b, 4));
    }
    CHECK(set_encoding(o) == SET_ENC_INTSET);
    CHECK(!add(o, "3", 4)); /* a duplicate doesn't convert */
    CHECK(set_encoding(o) == SET_ENC_INTSET);
    CHECK(add(o, "4", 4));
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    CHECK(set_size(o) == 5);
    for (int i = 0; i < 5; i++) {
        char b[16];
        snprintf(b, sizeof b, "%d", i);
        CHECK(has(o, b));
    }
    object_destroy(&o);
    o = set_create(SET_ENC_INTSET);
    CHECK(add(o, "1", 0));
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    object_destroy(&o);
}

static void test_iter_random(void)
{
    for (int enc = 0; enc < 2; enc++) {
        struct object *o = set_create(SET_ENC_INTSET);
        for (int i = 0; i < 100; i++) {
            char b[16];
            snprintf(b, sizeof b, "%d", i * 3);
            add(o, b, 512);
        }
        if (enc == 1)
            set_convert_to_hashtable(o);
        CHECK(set_encoding(o) == (enc ? SET_ENC_HASHTABLE : SET_ENC_INTSET));
        int seen[100] = {0};
        long prev = -1;
        bool ascending = true;
        struct set_iter it;
        struct set_member m;
        set_iter_init(&it, o);
        int count = 0;
        while (set_iter_next(&it, &m)) {
            char b[24];
            memcpy(b, m.p, m.n);
            b[m.n] = '\0';
            long v = strtol(b, NULL, 10);
            CHECK(v % 3 == 0 && v >= 0 && v < 300);
            CHECK(m.is_int == (enc == 0));
            if (m.is_int)
                CHECK(m.v == v);
            if (v <= prev)
                ascending = false;
            prev = v;
            seen[v / 3]++;
            count++;
            CHECK(set_has_member(o, &m));
        }
        CHECK(count == 100);
        if (enc == 0)
            CHECK(ascending);
        for (int i = 0; i < 100; i++)
            CHECK(seen[i] == 1);
        memset(seen, 0, sizeof seen);
        for (int r = 0; r < 5000; r++) {
            set_random(o, &m);
            CHECK(set_is_member(o, m.p, m.n));
            char b[24];
            memcpy(b, m.p, m.n);
            b[m.n] = '\0';
            long v = strtol(b, NULL, 10);
            if (v >= 0 && v < 300)
                seen[v / 3]++;
        }
        int never = 0;
        for (int i = 0; i < 100; i++)
            never += seen[i] == 0;
        CHECK(never == 0);
        object_destroy(&o);
    }
}

struct buf {
    char *p;
    size_t n, cap;
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

static void test_serialize(void)
{
    struct object *s[2];
    s[0] = set_create(SET_ENC_INTSET);
    add(s[0], "5", 512);
    add(s[0], "-70000", 512);
    add(s[0], "3", 512);
    s[1] = set_create(SET_ENC_INTSET);
    add(s[1], "7", 512);
    set_add(s[1], "a\0b", 3, 512);
    add(s[1], "", 512);
    for (int i = 0; i < 2; i++) {
        struct buf b = {0};
        object_serialize(s[i], emit, &b);
        struct object *c = object_deserialize(b.p, b.n);
        CHECK(c != NULL);
        if (c) {
            CHECK(object_type(c) == OBJ_SET);
            CHECK(set_encoding(c) == set_encoding(s[i]));
            CHECK(set_size(c) == 3);
            struct set_iter it;
            struct set_member m;
            set_iter_init(&it, s[i]);
            while (set_iter_next(&it, &m))
                CHECK(set_is_member(c, m.p, m.n));
            object_destroy(&c);
        }
        /* every truncation is rejected or at least yields a valid smaller set */
        for (size_t cut = 0; cut < b.n; cut++) {
            c = object_deserialize(b.p, cut);
            if (c) {
                CHECK(object_type(c) == OBJ_SET);
                CHECK(set_size(c) < 3);
                object_destroy(&c);
            }
        }
        free(b.p);
    }
    /* a duplicate member in a hashtable form is malformed */
    struct buf b = {0};
    object_serialize(s[1], emit, &b);
    size_t first = b.n;
    struct object *one = set_create(SET_ENC_HASHTABLE);
    add(one, "7", 512);
    struct buf b1 = {0};
    object_serialize(one, emit, &b1);
    /* b1 = header + enc + [len "7"]: append its member bytes to b */
    emit(&b, b1.p + (b1.n - 5), 5);
    CHECK(b.n == first + 5);
    CHECK(object_deserialize(b.p, b.n) == NULL);
    /* a bad encoding byte */
    b1.p[b1.n - 6] = 9;
    CHECK(object_deserialize(b1.p, b1.n) == NULL);
    free(b.p);
    free(b1.p);
    object_destroy(&one);
    object_destroy(&s[0]);
    object_destroy(&s[1]);
}

static void test_memory_and_lazy_free(void)
{
    struct object *o = set_create(SET_ENC_INTSET);
    size_t m0 = object_memory(o);
    for (int i = 0; i < 400; i++) {
        char b[12];
        snprintf(b, sizeof b, "%d", i);
        add(o, b, 512);
    }
    size_t m1 = object_memory(o);
    CHECK(m1 >= m0 + 400 * 2);
    set_convert_to_hashtable(o);
    for (int i = 0; i < 20000; i++) {
        char b[16];
        snprintf(b, sizeof b, "m%d", i);
        add(o, b, 512);
    }
    size_t m2 = object_memory(o);
    CHECK(m2 > m1 + 20000 * 16);
    for (int i = 0; i < 20000; i++) {
        char b[16];
        snprintf(b, sizeof b, "m%d", i);
        CHECK(set_remove(o, b, strlen(b)));
    }
    /* removals shrink the table (each moves a bucket of the shrink) */
    for (int r = 0; r < 5000; r++) {
        add(o, "x", 512);
        set_remove(o, "x", 1);
    }
    CHECK(object_memory(o) < m2 / 4);
    for (int i = 0; i < 20000; i++) {
        char b[16];
        snprintf(b, sizeof b, "m%d", i);
        add(o, b, 512);
    }
    int steps = 0;
    while (!object_destroy_step(&o, 1000))
        steps++;
    CHECK(o == NULL);
    CHECK(steps >= 19);

    o = set_create(SET_ENC_INTSET);
    add(o, "1", 512);
    CHECK(object_destroy_step(&o, 1));
    CHECK(o == NULL);
}

int main(void)
{
    uint8_t seed[16];
    for (int i = 0; i < 16; i++)
        seed[i] = (uint8_t)(i * 13 + 1);
    siphash_set_seed(seed);
    test_intset_to_hashtable();
    test_threshold();
    test_iter_random();
    test_serialize();
    test_memory_and_lazy_free();
    return check_done("test_set");
}
