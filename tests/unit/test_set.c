/*
 * test_set: the set type through its object: encodings and conversion
 * (by a string member, by size; intset, listpack and hashtable, each
 * threshold of set-max-intset-entries and set-max-listpack-entries/-value),
 * membership, iteration, random members,
 * OBJECT ENCODING names, memory, lazy free and the cross-shard form
 * (round trip in both encodings, malformed input rejected).
 */
#include "percore/set.h"

#include "percore/object.h"
#include "percore/siphash.h"

#include "check.h"

#include <stdlib.h>

/* the limits of Redis 7.0, which has no listpack sets */
static const struct set_limits NOLP = {512, 0, 0};
/* Redis 7.2's defaults */
static const struct set_limits LP = {512, 128, 64};

static bool add(struct object *o, const char *s, long long max)
{
    struct set_limits lim = {max, 0, 0};
    return set_add(o, s, strlen(s), &lim);
}

static bool add_lim(struct object *o, const char *s, const struct set_limits *lim)
{
    return set_add(o, s, strlen(s), lim);
}

static bool has(struct object *o, const char *s)
{
    return set_is_member(o, s, strlen(s));
}

static void test_intset_to_hashtable(void)
{
    struct object *o = set_create_for("12", 2, &NOLP);
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

    o = set_create_for("a", 1, &NOLP);
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    object_destroy(&o);
    o = set_create_for("", 0, &NOLP);
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    object_destroy(&o);
}

static void test_listpack(void)
{
    /* a string member starts a listpack, which OBJECT ENCODING calls what Redis 7.0 has */
    struct object *o = set_create_for("a", 1, &LP);
    CHECK(set_encoding(o) == SET_ENC_LISTPACK);
    CHECK(strcmp(object_encoding_name(o), "hashtable") == 0);
    const char *in[] = {"member0", "member1", "", "a\0b", "12"};
    for (int i = 0; i < 5; i++)
        CHECK(set_add(o, in[i], i == 3 ? 3 : strlen(in[i]), &LP));
    CHECK(!add_lim(o, "member1", &LP));
    CHECK(!set_add(o, "a\0b", 3, &LP));
    CHECK(set_size(o) == 5 && object_length(o) == 5);
    CHECK(has(o, "member0") && has(o, "") && has(o, "12") && !has(o, "member") && !has(o, "a"));
    CHECK(set_is_member(o, "a\0b", 3));
    /* insertion order */
    struct set_iter it;
    struct set_member m;
    set_iter_init(&it, o);
    for (int i = 0; i < 5; i++) {
        CHECK(set_iter_next(&it, &m));
        CHECK(!m.is_int && m.n == (i == 3 ? 3 : strlen(in[i])) && memcmp(m.p, in[i], m.n) == 0);
        CHECK(set_has_member(o, &m));
    }
    CHECK(!set_iter_next(&it, &m));
    CHECK(set_remove(o, "", 0));
    CHECK(!set_remove(o, "", 0));
    CHECK(!set_remove(o, "nope", 4));
    CHECK(set_size(o) == 4 && !has(o, ""));
    /* one allocation: 4 short members cost far less than a dict */
    CHECK(object_memory(o) <= 16 + 64);
    set_convert_to_hashtable(o);
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    CHECK(set_size(o) == 4 && has(o, "member0") && has(o, "12") && set_is_member(o, "a\0b", 3));
    object_destroy(&o);

    /* past set-max-listpack-entries: hashtable (the 5th member of 4) */
    const struct set_limits four = {512, 4, 64};
    o = set_create_for("x", 1, &four);
    CHECK(add_lim(o, "a", &four) && add_lim(o, "b", &four) && add_lim(o, "c", &four) && add_lim(o, "d", &four));
    CHECK(set_encoding(o) == SET_ENC_LISTPACK);
    CHECK(!add_lim(o, "d", &four)); /* a duplicate doesn't convert */
    CHECK(set_encoding(o) == SET_ENC_LISTPACK);
    CHECK(add_lim(o, "e", &four));
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    CHECK(set_size(o) == 5 && has(o, "a") && has(o, "e"));
    object_destroy(&o);

    /* a member longer than set-max-listpack-value: hashtable, at creation or later */
    const struct set_limits short3 = {512, 128, 3};
    o = set_create_for("abcd", 4, &short3);
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    object_destroy(&o);
    o = set_create_for("abc", 3, &short3);
    CHECK(set_encoding(o) == SET_ENC_LISTPACK);
    CHECK(add_lim(o, "abc", &short3));
    CHECK(set_encoding(o) == SET_ENC_LISTPACK);
    CHECK(add_lim(o, "abcd", &short3));
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    CHECK(has(o, "abc") && has(o, "abcd"));
    object_destroy(&o);
    /* set-max-listpack-entries 0: never a listpack */
    const struct set_limits none = {512, 0, 64};
    o = set_create_for("a", 1, &none);
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    object_destroy(&o);

    /* intset + a string member: a listpack holding the integers' decimal forms */
    o = set_create_for("3", 1, &LP);
    CHECK(add_lim(o, "3", &LP) && add_lim(o, "-20", &LP) && add_lim(o, "100", &LP));
    CHECK(set_encoding(o) == SET_ENC_INTSET);
    CHECK(add_lim(o, "x", &LP));
    CHECK(set_encoding(o) == SET_ENC_LISTPACK);
    CHECK(strcmp(object_encoding_name(o), "hashtable") == 0);
    CHECK(set_size(o) == 4 && has(o, "-20") && has(o, "3") && has(o, "100") && has(o, "x"));
    CHECK(!add_lim(o, "100", &LP));
    object_destroy(&o);
    /* ... a hashtable when the intset already has set-max-listpack-entries members */
    o = set_create(SET_ENC_INTSET);
    for (int i = 0; i < 4; i++) {
        char b[8];
        snprintf(b, sizeof b, "%d", i);
        CHECK(add_lim(o, b, &four));
    }
    CHECK(add_lim(o, "x", &four));
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    CHECK(set_size(o) == 5);
    object_destroy(&o);
    /* ... or when an integer is longer than set-max-listpack-value */
    o = set_create(SET_ENC_INTSET);
    CHECK(add_lim(o, "1", &short3) && add_lim(o, "-1000", &short3));
    CHECK(add_lim(o, "x", &short3));
    CHECK(set_encoding(o) == SET_ENC_HASHTABLE);
    object_destroy(&o);
    /* ... and an intset past set-max-intset-entries is a hashtable (Redis 7.2) */
    const struct set_limits int2 = {2, 128, 64};
    o = set_create(SET_ENC_INTSET);
    CHECK(add_lim(o, "1", &int2) && add_lim(o, "2", &int2) && add_lim(o, "3", &int2));
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
    for (int enc = 0; enc < 3; enc++) {
        struct object *o = set_create(enc == 2 ? SET_ENC_LISTPACK : SET_ENC_INTSET);
        for (int i = 0; i < 100; i++) {
            char b[16];
            snprintf(b, sizeof b, "%d", i * 3);
            add_lim(o, b, &LP);
        }
        if (enc == 1)
            set_convert_to_hashtable(o);
        CHECK(set_encoding(o) == (enum set_encoding)enc);
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
    struct object *s[3];
    s[0] = set_create(SET_ENC_INTSET);
    add(s[0], "5", 512);
    add(s[0], "-70000", 512);
    add(s[0], "3", 512);
    s[1] = set_create(SET_ENC_INTSET);
    add(s[1], "7", 512);
    set_add(s[1], "a\0b", 3, &NOLP);
    add(s[1], "", 512);
    s[2] = set_create_for("x", 1, &LP);
    add_lim(s[2], "x", &LP);
    set_add(s[2], "a\0b", 3, &LP);
    add_lim(s[2], "7", &LP);
    CHECK(set_encoding(s[2]) == SET_ENC_LISTPACK);
    for (int i = 0; i < 3; i++) {
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
    /* a listpack form with a member twice is malformed: "x","y" with the y made an x */
    struct object *twice = set_create(SET_ENC_LISTPACK);
    add_lim(twice, "x", &LP);
    add_lim(twice, "y", &LP);
    struct buf tb = {0};
    object_serialize(twice, emit, &tb);
    char *y = memchr(tb.p + 3, 'y', tb.n - 3);
    CHECK(y != NULL);
    struct object *ok = object_deserialize(tb.p, tb.n);
    CHECK(ok != NULL && set_encoding(ok) == SET_ENC_LISTPACK && set_size(ok) == 2);
    object_destroy(&ok);
    if (y)
        *y = 'x';
    CHECK(object_deserialize(tb.p, tb.n) == NULL);
    free(tb.p);
    object_destroy(&twice);
    object_destroy(&s[0]);
    object_destroy(&s[1]);
    object_destroy(&s[2]);
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
    test_listpack();
    test_iter_random();
    test_serialize();
    test_memory_and_lazy_free();
    return check_done("test_set");
}
