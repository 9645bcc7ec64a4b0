/*
 * digest: DEBUG DIGEST's signatures, as Redis 7.0's debug.c (digest.h).
 */
#include "percore/digest.h"

#include "percore/hash.h"
#include "percore/list.h"
#include "percore/object.h"
#include "percore/set.h"
#include "percore/sha1.h"
#include "percore/store.h"
#include "percore/stream.h"
#include "percore/util.h"
#include "percore/zset.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/* xorDigest: d ^= SHA1(p) (order-free) */
static void digest_xor(unsigned char d[DIGEST_LEN], const void *p, size_t n)
{
    unsigned char h[DIGEST_LEN];
    sha1_raw(h, p, n);
    for (int i = 0; i < DIGEST_LEN; i++)
        d[i] ^= h[i];
}

/* mixDigest: d = SHA1(d ^ SHA1(p)) (ordered) */
static void digest_mix(unsigned char d[DIGEST_LEN], const void *p, size_t n)
{
    digest_xor(d, p, n);
    unsigned char h[DIGEST_LEN];
    sha1_raw(h, d, DIGEST_LEN);
    memcpy(d, h, DIGEST_LEN);
}

/* an element with its score (a sorted set member) or value (a hash field), xored in as one digest */
static void digest_xor_pair(unsigned char d[DIGEST_LEN], const char *a, size_t an, const char *b, size_t bn)
{
    unsigned char e[DIGEST_LEN] = {0};
    digest_mix(e, a, an);
    digest_mix(e, b, bn);
    digest_xor(d, e, DIGEST_LEN);
}

static void digest_stream(unsigned char d[DIGEST_LEN], const struct stream *s)
{
    struct stream_iter it;
    struct stream_id id;
    size_t nfields;
    struct stream_id first = {0, 0}, last = {UINT64_MAX, UINT64_MAX};
    stream_iter_init(&it, s, &first, &last, false);
    while (stream_iter_next(&it, &id, &nfields)) {
        char buf[48];
        int n = snprintf(buf, sizeof buf, "%llu.%llu", (unsigned long long)id.ms, (unsigned long long)id.seq);
        digest_mix(d, buf, (size_t)n);
        while (nfields--) {
            struct stream_str field, value;
            stream_iter_pair(&it, &field, &value);
            digest_mix(d, field.p, field.n);
            digest_mix(d, value.p, value.n);
        }
    }
}

void digest_value(unsigned char d[DIGEST_LEN], const struct object *o, bool expires)
{
    /* Redis's type numbers: its OBJ_MODULE (5) comes before OBJ_STREAM (6) */
    uint32_t type = htonl(object_type(o) == OBJ_STREAM ? 6u : (uint32_t)object_type(o));
    digest_mix(d, &type, sizeof type);
    switch (object_type(o)) {
    case OBJ_STRING: {
        size_t n;
        const char *p = object_string_ptr(o, &n);
        digest_mix(d, p, n);
        break;
    }
    case OBJ_LIST: {
        struct list_iter it;
        const char *p;
        size_t n;
        list_iter_init(&it, (struct object *)o, 0, true);
        while (list_iter_next(&it, &p, &n))
            digest_mix(d, p, n);
        break;
    }
    case OBJ_SET: {
        struct set_iter it;
        struct set_member m;
        set_iter_init(&it, (struct object *)o);
        while (set_iter_next(&it, &m))
            digest_xor(d, m.p, m.n);
        break;
    }
    case OBJ_ZSET: {
        struct zset *z = object_collection_ptr(o);
        struct zset_iter it;
        size_t len = zset_length(z);
        zset_iter_rank(z, 0, false, &it);
        for (size_t i = 0; i < len && it.valid; i++, zset_iter_step(&it, false)) {
            size_t n;
            const char *member = zset_iter_member(&it, &n);
            char score[64];
            int sn = snprintf(score, sizeof score, "%.17g", zset_iter_scoreval(&it));
            digest_xor_pair(d, member, n, score, (size_t)sn);
        }
        break;
    }
    case OBJ_HASH: {
        struct hash_iter it;
        const char *f, *v;
        size_t fn, vn;
        hash_iter_init(&it, o);
        while (hash_iter_next(&it, &f, &fn, &v, &vn))
            digest_xor_pair(d, f, fn, v, vn);
        break;
    }
    case OBJ_STREAM:
        digest_stream(d, object_collection_ptr(o));
        break;
    }
    if (expires)
        digest_xor(d, "!!expire!!", 10);
}

struct db_walk {
    unsigned char *out;
    bool any;
};

static void digest_key(void *arg, const char *key, size_t klen, const struct object *val, int64_t expire)
{
    struct db_walk *w = arg;
    unsigned char d[DIGEST_LEN] = {0};
    digest_mix(d, key, klen);
    digest_value(d, val, expire != -1);
    digest_xor(w->out, d, DIGEST_LEN); /* the key's digest is hashed into the db's, as every xored part */
    w->any = true;
}

bool digest_db(struct store *s, int db, unsigned char out[DIGEST_LEN])
{
    struct db_walk w = {out, false};
    memset(out, 0, DIGEST_LEN);
    store_each(s, db, digest_key, &w);
    return w.any;
}

void digest_dataset_add(unsigned char final[DIGEST_LEN], int db, const unsigned char keys_xor[DIGEST_LEN])
{
    uint32_t id = htonl((uint32_t)db);
    digest_mix(final, &id, sizeof id);
    for (int i = 0; i < DIGEST_LEN; i++)
        final[i] ^= keys_xor[i];
}

void digest_hex(char out[2 * DIGEST_LEN + 1], const unsigned char d[DIGEST_LEN])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < DIGEST_LEN; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
    out[2 * DIGEST_LEN] = 0;
}
