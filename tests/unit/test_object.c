/*
 * test_object: string objects (contents, in-place growth, encoding names as
 * Redis 7.0 reports them, memory), embedding in an owner's memory and back,
 * and the cross-shard serialized form.
 */
#include "percore/object.h"

#include "percore/mem.h"
#include "percore/set.h"

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

/* an object in its owner's room: it works as any other, its memory leaves the room out, destroy
 * leaves the room alone, and a copy of its own takes its payload */
static void test_embed(void)
{
    _Alignas(8) char room[256];
    /* a short string: header and bytes in the room */
    CHECK_EQ_LL(object_string_embed_size(16), 8 + 16);
    CHECK_EQ_LL(object_string_embed_size(3), 16);
    CHECK_EQ_LL(object_string_embed_size(64), 8 + 64);
    CHECK_EQ_LL(object_string_embed_size(65), 16); /* longer: header and a pointer */
    struct object *o = object_string_embed(room, 24, "0123456789abcdef", 16);
    CHECK((void *)o == (void *)room);
    CHECK(object_embedded(o));
    CHECK_EQ_LL(object_memory(o), 0);
    CHECK_EQ_LL(object_embed_room(o), 24);
    size_t len;
    const char *p = object_string_ptr(o, &len);
    CHECK_MEM(p, len, "0123456789abcdef");
    CHECK(p == room + 8);
    CHECK(strcmp(object_encoding_name(o), "embstr") == 0);
    /* growth past the room moves the bytes out, and counts them */
    object_string_append(o, "xyz", 3);
    CHECK(object_memory(o) >= 19);
    p = object_string_ptr(o, &len);
    CHECK_MEM(p, len, "0123456789abcdefxyz");
    CHECK(strcmp(object_encoding_name(o), "raw") == 0);
    /* a copy of its own takes the external buffer */
    struct object *c = object_unembed(o);
    CHECK(!object_embedded(c));
    p = object_string_ptr(c, &len);
    CHECK_MEM(p, len, "0123456789abcdefxyz");
    CHECK(strcmp(object_encoding_name(c), "raw") == 0);
    CHECK(object_memory(c) >= 16 + 19);
    object_destroy(&c);

    /* a long string is made with its bytes apart, so embedding moves 16 bytes */
    char big[300];
    memset(big, 'b', sizeof big);
    o = object_string_create(big, sizeof big);
    CHECK_EQ_LL(object_embed_size(o), 16);
    size_t m = object_memory(o);
    CHECK(m >= 16 + sizeof big);
    struct object *e = object_embed(room, 16, o); /* o's block is freed */
    CHECK(object_embedded(e) && object_embed_room(e) == 16);
    CHECK_EQ_LL(object_memory(e), m - 16);
    p = object_string_ptr(e, &len);
    CHECK(len == sizeof big && memcmp(p, big, len) == 0);
    CHECK(strcmp(object_encoding_name(e), "raw") == 0);
    object_destroy(&e); /* frees the bytes, not the room (ASan: no bad free) */
    CHECK(e == NULL);

    /* a short standalone string (flags kept) embedded in more room than it needs */
    o = object_string_create("1.5", 3);
    object_string_mark_float(o);
    e = object_embed(room, 64, o);
    CHECK_EQ_LL(object_embed_room(e), 64);
    CHECK_EQ_LL(object_memory(e), 0);
    object_string_set(e, "12345678901234567890123456789012345678901234567890", 50); /* fits the room */
    CHECK_EQ_LL(object_memory(e), 0);
    CHECK(strcmp(object_encoding_name(e), "raw") == 0);
    c = object_unembed(e);
    p = object_string_ptr(c, &len);
    CHECK(len == 50 && memcmp(p, "1234567890", 10) == 0);
    CHECK(object_memory(c) >= 8 + 50);
    object_destroy(&c);

    /* a collection: its 16-byte header embedded, its structure kept */
    const struct set_limits lim = {512, 128, 64};
    o = set_create_for("a", 1, &lim);
    set_add(o, "a", 1, &lim);
    set_add(o, "b", 1, &lim);
    size_t sm = object_memory(o);
    CHECK_EQ_LL(object_embed_size(o), 16);
    e = object_embed(room, 16, o);
    CHECK(object_type(e) == OBJ_SET && set_size(e) == 2 && set_is_member(e, "b", 1));
    CHECK_EQ_LL(object_memory(e), sm - 16);
    set_add(e, "c", 1, &lim);
    CHECK(set_size(e) == 3);
    c = object_unembed(e);
    CHECK(object_type(c) == OBJ_SET && set_size(c) == 3 && set_is_member(c, "c", 1));
    CHECK(object_destroy_step(&c, 1));
}

int main(void)
{
    test_create();
    test_encoding();
    test_append();
    test_setrange();
    test_set();
    test_serialize();
    test_embed();
    return check_done("test_object");
}
