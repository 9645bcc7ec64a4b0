/*
 * aof_base: a key as the commands that rebuild it (aof_base.h).
 *
 * Design.  Redis's rewriteAppendOnlyFileRio, type by type: a collection of
 * n elements is ceil(n / 64) commands (AOF_REWRITE_ITEMS_PER_CMD), each
 * announcing its own argument count, so the element count is read first and
 * the elements are written as they are iterated, never gathered.  Scores are
 * written as Redis's rioWriteBulkDouble does ("%.17g"); a value held as an
 * integer as its digits.
 */
#include "aof_base.h"

#include "percore/hash.h"
#include "percore/list.h"
#include "percore/object.h"
#include "percore/rdb.h"
#include "percore/set.h"
#include "percore/stream.h"
#include "percore/stream_group.h"
#include "percore/util.h"
#include "percore/zset.h"

#include <stdio.h>

#define ITEMS_PER_CMD 64  /* Redis's AOF_REWRITE_ITEMS_PER_CMD */

static void put_count(struct rdb_buf *b, char type, long long n)
{
    char head[32];
    head[0] = type;
    int len = 1 + util_ll_to_str(head + 1, n);
    head[len++] = '\r';
    head[len++] = '\n';
    rdb_buf_put(b, head, (size_t)len);
}

static void put_bulk(struct rdb_buf *b, const char *p, size_t n)
{
    put_count(b, '$', (long long)n);
    rdb_buf_put(b, p, n);
    rdb_buf_put(b, "\r\n", 2);
}

static void put_str(struct rdb_buf *b, const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    put_bulk(b, s, n);
}

static void put_ll(struct rdb_buf *b, long long v)
{
    char num[24];
    put_bulk(b, num, (size_t)util_ll_to_str(num, v));
}

/* a batch of a collection's elements: before its first element, the command's head */
struct batch {
    struct rdb_buf *b;
    const char *cmd, *key;
    size_t klen;
    size_t left;     /* elements (pairs, for a hash) still to write */
    int per_item;    /* arguments per element */
    int in_cmd;      /* elements written in the current command */
};

static void batch_item(struct batch *bt)
{
    if (bt->in_cmd == 0) {
        size_t n = bt->left < ITEMS_PER_CMD ? bt->left : ITEMS_PER_CMD;
        put_count(bt->b, '*', 2 + (long long)n * bt->per_item);
        put_str(bt->b, bt->cmd);
        put_bulk(bt->b, bt->key, bt->klen);
    }
    if (++bt->in_cmd == ITEMS_PER_CMD)
        bt->in_cmd = 0;
    bt->left--;
}

static void put_id(struct rdb_buf *b, const struct stream_id *id)
{
    char buf[48];
    put_bulk(b, buf, stream_id_format(id, buf));
}

/* a group as Redis's rewriteStreamObject writes it: XGROUP CREATE with its last ID and ENTRIESREAD, then per
 * consumer XGROUP CREATECONSUMER (owning nothing) or an XCLAIM ... JUSTID FORCE per entry it owns
 * (rioWriteStreamPendingEntry) */
static void put_stream_group(struct rdb_buf *b, const char *key, size_t klen, const struct stream_group *g)
{
    put_count(b, '*', 7);
    put_str(b, "XGROUP");
    put_str(b, "CREATE");
    put_bulk(b, key, klen);
    put_bulk(b, g->name.p, g->name.len);
    put_id(b, &g->last_id);
    put_str(b, "ENTRIESREAD");
    put_ll(b, g->entries_read);
    for (size_t i = 0; i < g->nconsumers; i++) {
        const struct stream_consumer *c = g->consumers[i];
        if (c->pel.n == 0) {
            put_count(b, '*', 5);
            put_str(b, "XGROUP");
            put_str(b, "CREATECONSUMER");
            put_bulk(b, key, klen);
            put_bulk(b, g->name.p, g->name.len);
            put_bulk(b, c->name.p, c->name.len);
        }
        for (size_t j = 0; j < c->pel.n; j++) {
            const struct stream_nack *nack = c->pel.v[j];
            put_count(b, '*', 12);
            put_str(b, "XCLAIM");
            put_bulk(b, key, klen);
            put_bulk(b, g->name.p, g->name.len);
            put_bulk(b, c->name.p, c->name.len);
            put_str(b, "0");
            put_id(b, &nack->id);
            put_str(b, "TIME");
            put_ll(b, nack->delivery_time);
            put_str(b, "RETRYCOUNT");
            put_ll(b, (long long)nack->delivery_count);
            put_str(b, "JUSTID");
            put_str(b, "FORCE");
        }
    }
}

/* Redis's rewriteStreamObject: an XADD per entry (an empty stream: XADD MAXLEN 0 of 0-1), then XSETID
 * with the last ID, entries added and max deleted ID, then the consumer groups */
static void put_stream(struct rdb_buf *b, const char *key, size_t klen, const struct stream *s)
{
    struct stream_id lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX}, id, last = stream_last_id(s),
                     max_deleted = stream_max_deleted_id(s);
    struct stream_iter it;
    size_t nfields;
    if (stream_length(s) == 0) {
        static const struct stream_id one = {0, 1};
        put_count(b, '*', 7);
        put_str(b, "XADD");
        put_bulk(b, key, klen);
        put_str(b, "MAXLEN");
        put_str(b, "0");
        put_id(b, &one);
        put_str(b, "x");
        put_str(b, "y");
    }
    stream_iter_init(&it, s, &lo, &hi, false);
    while (stream_iter_next(&it, &id, &nfields)) {
        put_count(b, '*', 3 + 2 * (long long)nfields);
        put_str(b, "XADD");
        put_bulk(b, key, klen);
        put_id(b, &id);
        for (size_t i = 0; i < nfields; i++) {
            struct stream_str f, v;
            stream_iter_pair(&it, &f, &v);
            put_bulk(b, f.p, f.n);
            put_bulk(b, v.p, v.n);
        }
    }
    put_count(b, '*', 7);
    put_str(b, "XSETID");
    put_bulk(b, key, klen);
    put_id(b, &last);
    put_str(b, "ENTRIESADDED");
    put_ll(b, (long long)stream_entries_added(s));
    put_str(b, "MAXDELETEDID");
    put_id(b, &max_deleted);
    for (size_t i = 0; i < stream_group_count(s); i++)
        put_stream_group(b, key, klen, stream_group_at(s, i));
}

void aof_base_select(struct rdb_buf *b, int db)
{
    put_count(b, '*', 2);
    put_str(b, "SELECT");
    put_ll(b, db);
}

void aof_base_key(struct rdb_buf *b, const char *key, size_t klen, int64_t expire_ms, const struct object *val)
{
    struct object *o = (struct object *)val; /* the iterators take it writable; nothing is changed */
    struct batch bt = {b, NULL, key, klen, 0, 1, 0};
    const char *p, *v;
    size_t n, vn;
    switch (object_type(o)) {
    case OBJ_STRING:
        put_count(b, '*', 3);
        put_str(b, "SET");
        put_bulk(b, key, klen);
        p = object_string_ptr(o, &n);
        put_bulk(b, p, n);
        break;
    case OBJ_LIST: {
        struct list_iter it;
        bt.cmd = "RPUSH";
        bt.left = list_length(o);
        list_iter_init(&it, o, 0, true);
        while (list_iter_next(&it, &p, &n)) {
            batch_item(&bt);
            put_bulk(b, p, n);
        }
        break;
    }
    case OBJ_SET: {
        struct set_iter it;
        struct set_member m;
        bt.cmd = "SADD";
        bt.left = set_size(o);
        set_iter_init(&it, o);
        while (set_iter_next(&it, &m)) {
            batch_item(&bt);
            put_bulk(b, m.p, m.n);
        }
        break;
    }
    case OBJ_ZSET: {
        struct zset *z = object_collection_ptr(o);
        struct zset_iter it;
        char score[64];
        bt.cmd = "ZADD";
        bt.per_item = 2;
        bt.left = zset_length(z);
        zset_iter_rank(z, 0, false, &it);
        for (size_t len = bt.left; len > 0 && it.valid; len--) {
            batch_item(&bt);
            put_bulk(b, score, (size_t)snprintf(score, sizeof score, "%.17g", zset_iter_scoreval(&it)));
            p = zset_iter_member(&it, &n);
            put_bulk(b, p, n);
            zset_iter_step(&it, false);
        }
        break;
    }
    case OBJ_HASH: {
        struct hash_iter it;
        bt.cmd = "HMSET";
        bt.per_item = 2;
        bt.left = hash_length(o);
        hash_iter_init(&it, o);
        while (hash_iter_next(&it, &p, &n, &v, &vn)) {
            batch_item(&bt);
            put_bulk(b, p, n);
            put_bulk(b, v, vn);
        }
        break;
    }
    case OBJ_STREAM:
        put_stream(b, key, klen, stream_of(o));
        break;
    }
    if (expire_ms >= 0) {
        put_count(b, '*', 3);
        put_str(b, "PEXPIREAT");
        put_bulk(b, key, klen);
        put_ll(b, expire_ms);
    }
}
