/*
 * test_object: string objects (contents, in-place growth, encoding names as
 * Redis 7.0 reports them, memory) and the cross-shard serialized form.
 */
#include "percore/object.h"

#include "check.h"

#include <limits.h>
#include <stdlib.h>

static const char *enc_of(const char *s)
{
    static char name[16];
    struct object *o = object_string_create(s, strlen(s));
    snprintf(name, sizeof name, "%s", object_encoding_name(o));
    object_destroy(&o);
    return name;
}

static void test_create(void)
{
    struct object *o = object_string_create("a\0b", 3);
    size_t len = 0;
    const char *p = object_string_ptr(o, &len);
    CHECK_MEM(p, len, "a\0b");
    CHECK_EQ_LL(object_string_len(o), 3);
    CHECK(object_type(o) == OBJ_STRING);
    CHECK(strcmp(object_type_name(o), "string") == 0);
    CHECK(object_memory(o) >= 8 + 3);
    object_destroy(&o);
    CHECK(o == NULL);
    object_destroy(&o);
    object_destroy(NULL);

    o = object_string_create(NULL, 0);
    CHECK_EQ_LL(object_string_len(o), 0);
    CHECK(strcmp(object_encoding_name(o), "embstr") == 0);
    object_destroy(&o);

    o = object_string_from_ll(LLONG_MIN);
    p = object_string_ptr(o, &len);
    CHECK_MEM(p, len, "-9223372036854775808");
    CHECK(strcmp(object_encoding_name(o), "int") == 0);
    object_destroy(&o);
}

static void test_encoding(void)
{
    CHECK(strcmp(enc_of("0"), "int") == 0);
    CHECK(strcmp(enc_of("123"), "int") == 0);
    CHECK(strcmp(enc_of("-5"), "int") == 0);
    CHECK(strcmp(enc_of("9223372036854775807"), "int") == 0);
    CHECK(strcmp(enc_of("-9223372036854775808"), "int") == 0);
    CHECK(strcmp(enc_of("9223372036854775808"), "embstr") == 0);
    CHECK(strcmp(enc_of("-9223372036854775809"), "embstr") == 0);
    CHECK(strcmp(enc_of("-0"), "embstr") == 0);
    CHECK(strcmp(enc_of("007"), "embstr") == 0);
    CHECK(strcmp(enc_of("+1"), "embstr") == 0);
    CHECK(strcmp(enc_of(" 1"), "embstr") == 0);
    CHECK(strcmp(enc_of("1 "), "embstr") == 0);
    CHECK(strcmp(enc_of("-"), "embstr") == 0);
    CHECK(strcmp(enc_of("hello"), "embstr") == 0);
    CHECK(strcmp(enc_of("12345678901234567890123"), "embstr") == 0);
    CHECK(strcmp(enc_of("12345678901234567890123456789012345678901234"), "embstr") == 0);
    CHECK(strcmp(enc_of("123456789012345678901234567890123456789012345"), "raw") == 0);

    /* APPEND/SETRANGE make it raw, whatever it looks like (Redis unshares to raw) */
    struct object *o = object_string_create("12", 2);
    object_string_append(o, "3", 1);
    CHECK(strcmp(object_encoding_name(o), "raw") == 0);
    /* INCR's result replaces the contents: "int" again */
    object_string_set(o, "124", 3);
    CHECK(strcmp(object_encoding_name(o), "int") == 0);
    object_string_set(o, "1.5", 3);
    CHECK(strcmp(object_encoding_name(o), "embstr") == 0);
    object_string_setrange(o, 0, "2", 1);
    CHECK(strcmp(object_encoding_name(o), "raw") == 0);
    object_destroy(&o);

    /* an empty APPEND still unshares; an empty SETRANGE changes nothing */
    o = object_string_create("ab", 2);
    CHECK_EQ_LL(object_string_setrange(o, 10, "", 0), 2);
    CHECK(strcmp(object_encoding_name(o), "embstr") == 0);
    CHECK_EQ_LL(object_string_append(o, "", 0), 2);
    CHECK(strcmp(object_encoding_name(o), "raw") == 0);
    object_destroy(&o);
}

static void test_append(void)
{
    struct object *o = object_string_create("x", 1);
    size_t before = object_memory(o);
    char *expect = malloc(1 << 20);
    expect[0] = 'x';
    size_t n = 1;
    for (int i = 0; n + 7 <= (1 << 20); i++) {
        char chunk[7] = {'a', '\0', 'b', 'c', 'd', 'e', (char)i};
        memcpy(expect + n, chunk, 7);
        n += 7;
        CHECK_EQ_LL(object_string_append(o, chunk, 7), n);
    }
    size_t len;
    const char *p = object_string_ptr(o, &len);
    CHECK_EQ_LL(len, n);
    CHECK(memcmp(p, expect, n) == 0);
    CHECK(object_memory(o) >= before + n);
    /* greedy growth: the capacity is bounded by about twice the length */
    CHECK(object_memory(o) <= 2 * n + 4096);
    object_destroy(&o);
    free(expect);
}

static void test_setrange(void)
{
    struct object *o = object_string_create("hello", 5);
    CHECK_EQ_LL(object_string_setrange(o, 1, "EL", 2), 5);
    size_t len;
    const char *p = object_string_ptr(o, &len);
    CHECK_MEM(p, len, "hELlo");
    CHECK_EQ_LL(object_string_setrange(o, 8, "!", 1), 9);
    p = object_string_ptr(o, &len);
    CHECK_MEM(p, len, "hELlo\0\0\0!");
    CHECK_EQ_LL(object_string_setrange(o, 3, "LOWORLD", 7), 10);
    p = object_string_ptr(o, &len);
    CHECK_MEM(p, len, "hELLOWORLD");
    /* far past the inline room: the bytes move out, padding stays zero */
    CHECK_EQ_LL(object_string_setrange(o, 100000, "z", 1), 100001);
    p = object_string_ptr(o, &len);
    CHECK(memcmp(p, "hELLOWORLD", 10) == 0);
    int zero = 1;
    for (size_t i = 10; i < 100000; i++)
        zero &= p[i] == 0;
    CHECK(zero);
    CHECK(p[100000] == 'z');
    object_destroy(&o);

    /* SETRANGE on a missing key: Redis creates an empty raw string */
    o = object_string_create(NULL, 0);
    CHECK_EQ_LL(object_string_setrange(o, 2, "ab", 2), 4);
    p = object_string_ptr(o, &len);
    CHECK_MEM(p, len, "\0\0ab");
    CHECK(strcmp(object_encoding_name(o), "raw") == 0);
    object_destroy(&o);
}

static void test_set(void)
{
    struct object *o = object_string_create("1", 1);
    char big[200];
    memset(big, 'q', sizeof big);
    object_string_set(o, big, sizeof big);
    size_t len;
    const char *p = object_string_ptr(o, &len);
    CHECK_EQ_LL(len, sizeof big);
    CHECK(memcmp(p, big, sizeof big) == 0);
    CHECK(strcmp(object_encoding_name(o), "raw") == 0);
    object_string_set(o, "-42", 3);
    p = object_string_ptr(o, &len);
    CHECK_MEM(p, len, "-42");
    CHECK(strcmp(object_encoding_name(o), "int") == 0);
    /* setting from its own bytes */
    p = object_string_ptr(o, &len);
    object_string_set(o, p + 1, 2);
    p = object_string_ptr(o, &len);
    CHECK_MEM(p, len, "42");
    object_destroy(&o);
}

struct buf {
    char *p;
    size_t n;
};

static void emit(void *arg, const void *p, size_t n)
{
    struct buf *b = arg;
    b->p = realloc(b->p, b->n + n);
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static struct object *round_trip(const struct object *o, struct buf *b)
{
    b->p = NULL;
    b->n = 0;
    object_serialize(o, emit, b);
    return object_deserialize(b->p, b->n);
}

static void test_serialize(void)
{
    struct buf b;
    struct object *o = object_string_create("k\0v", 3);
    struct object *r = round_trip(o, &b);
    size_t len;
    const char *p;
    CHECK(r != NULL);
    p = object_string_ptr(r, &len);
    CHECK_MEM(p, len, "k\0v");
    CHECK(strcmp(object_encoding_name(r), "embstr") == 0);
    object_destroy(&r);

    /* malformed: every truncation, a byte too many, bad type, bad flags */
    for (size_t n = 0; n < b.n; n++)
        CHECK(object_deserialize(b.p, n) == NULL);
    char *more = malloc(b.n + 1);
    memcpy(more, b.p, b.n);
    more[b.n] = 'x';
    CHECK(object_deserialize(more, b.n + 1) == NULL);
    more[0] = 9;
    CHECK(object_deserialize(more, b.n) == NULL);
    more[0] = b.p[0];
    more[1] = (char)0x80;
    CHECK(object_deserialize(more, b.n) == NULL);
    memset(more + 2, 0xff, 8);
    more[1] = b.p[1];
    CHECK(object_deserialize(more, b.n) == NULL);
    CHECK(object_deserialize(NULL, 0) == NULL);
    free(more);
    free(b.p);

    /* the raw-ness and big values survive; empty strings too */
    object_string_append(o, "!", 1);
    r = round_trip(o, &b);
    CHECK(r && strcmp(object_encoding_name(r), "raw") == 0);
    p = object_string_ptr(r, &len);
    CHECK_MEM(p, len, "k\0v!");
    object_destroy(&r);
    free(b.p);
    object_destroy(&o);

    o = object_string_create(NULL, 0);
    r = round_trip(o, &b);
    CHECK(r && object_string_len(r) == 0);
    object_destroy(&r);
    free(b.p);
    object_destroy(&o);

    size_t big = 3 << 20;
    char *bytes = malloc(big);
    for (size_t i = 0; i < big; i++)
        bytes[i] = (char)(i * 31);
    o = object_string_create(bytes, big);
    r = round_trip(o, &b);
    CHECK(r && object_string_len(r) == big);
    CHECK(r && memcmp(object_string_ptr(r, NULL), bytes, big) == 0);
    object_destroy(&r);
    free(b.p);
    object_destroy(&o);
    free(bytes);
}

int main(void)
{
    test_create();
    test_encoding();
    test_append();
    test_setrange();
    test_set();
    test_serialize();
    return check_done("test_object");
}
