/*
 * tracking: client-side caching (see tracking.h for the design).
 *
 * The owner side.  A shard's table maps a key (any database: Redis's
 * TrackingTable has no databases) to the ids of the clients that read it.
 * Its prefixes (sorted, as Redis's PrefixTable walks them) each hold the ids
 * registered for it and the keys modified under it this turn, with the last
 * writer of each (NOLOOP); at the end of the batch or turn each prefix's
 * keys leave, sorted, one message per client, as Redis's beforeSleep sends
 * them.  Registration is a fan-out (`__tracking`), so CLIENT TRACKING BCAST
 * answers +OK only once every shard knows its prefixes; the same fan-out
 * asks every shard whether the REDIRECT client lives there.
 *
 * The home side.  Invalidations arrive as records:
 *
 *   kind u8 | client u64 | other u64 | len u32 | bytes
 *   KEY      client's key was modified by `other` (bytes: the key)
 *   BCAST    keys under one of client's prefixes (bytes: writer u64, len u32, key ...)
 *   FLUSH    the databases were emptied: every tracking client here gets a null
 *   REDIR    for client, the REDIRECT target of `other`: the array to wrap (bytes)
 *   BROKEN   client's REDIRECT target `other` is gone
 *
 * A record for this shard is delivered at once (so a client's own write is
 * followed by its invalidation right after its reply, as Redis's pending
 * keys are), else it joins the shard's outbox for the record's shard.
 *
 * tracking-table-max-keys is shared out like maxmemory: each of the stores
 * holds at most its share (rounded up); over it, random keys are invalidated
 * as Redis's trackingLimitUsedSlots does, with growing effort.
 */
#include "percore/tracking.h"

#include "call.h"
#include "conn_internal.h"
#include "handoff.h"
#include "reply_slot.h"
#include "outbox.h"
#include "shard_internal.h"

#include "percore/config.h"
#include "percore/dict.h"
#include "percore/mem.h"
#include "percore/pubsub.h"
#include "percore/reply.h"
#include "percore/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a key's readers */
struct ids {
    uint32_t n;
    uint32_t cap;
    uint64_t v[];
};

/* a BCAST prefix, as each shard knows it */
struct prefix {
    char *p;
    size_t len;
    uint64_t *clients;       /* ids registered for it */
    int n;
    int cap;
    struct dict *pending;    /* keys modified under it this turn -> their last writer; NULL none */
};

struct tracking {
    size_t busy;             /* keys + prefixes + tracking clients: first (tracking_busy) */
    struct dict *keys;       /* key -> struct ids *; NULL until the first read */
    size_t items;            /* (key, client) pairs */
    struct prefix *prefixes; /* sorted by their bytes */
    int nprefixes;
    int prefixes_cap;
    size_t clients;          /* connections with tracking on whose state this table serves */
    bool bcast_pending;      /* some prefix has keys to send */
    unsigned evict_rounds;   /* consecutive rounds that ended over the limit (Redis's timeout_counter) */
};

/* a connection's BCAST prefixes, sorted */
struct tracking_prefixes {
    int n;
    int cap;
    struct resp_arg *v;      /* each allocated */
};

enum { REC_KEY = 1, REC_BCAST, REC_FLUSH, REC_REDIR, REC_BROKEN };

#define REC_HEAD (1 + 8 + 8 + 4)

static const char push_head[] = ">2\r\n$10\r\ninvalidate\r\n";
static const char message_head[] = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n";

#ifdef PERCORE_GLOBAL_LOCK
static struct tracking shared_table; /* every thread's, under the store lock */
#endif

extern const struct command tracking_deliver_command;
static const struct command tracking_part_command;

static void recount(struct tracking *t)
{
    t->busy = (t->keys ? dict_size(t->keys) : 0) + (size_t)t->nprefixes + t->clients;
}

static int home_of(uint64_t id)
{
    return (int)(id % (uint64_t)shard_count());
}

/* prefixes are counted once: by shard 0 where every shard has them all, by whoever adds them where they are shared */
static bool counts_prefixes(const struct shard *self)
{
    return SHARD_STORE_SHARED || self->index == 0;
}

void tracking_setup_shard(struct shard *self)
{
#ifdef PERCORE_GLOBAL_LOCK
    self->tracking.table = &shared_table;
#else
    self->tracking.table = mem_calloc(1, sizeof(struct tracking));
#endif
}

static void table_clear_keys(struct tracking *t)
{
    if (!t->keys)
        return;
    struct dict_iter it;
    dict_iter_init(&it, t->keys);
    for (struct dict_entry *e; (e = dict_iter_next(&it));)
        mem_release(dict_entry_pointer(e));
    dict_destroy(&t->keys);
    t->items = 0;
}

void tracking_teardown_shard(struct shard *self)
{
    struct tracking *t = self->tracking.table;
    outbox_destroy(&self->tracking.out);
    mem_release(self->tracking.clients);
    self->tracking.clients = NULL;
    if (SHARD_STORE_SHARED && self->index != 0)
        return;
    table_clear_keys(t);
    for (int i = 0; i < t->nprefixes; i++) {
        mem_release(t->prefixes[i].p);
        mem_release(t->prefixes[i].clients);
        dict_destroy(&t->prefixes[i].pending);
    }
    mem_release(t->prefixes);
    if (SHARD_STORE_SHARED)
        memset(t, 0, sizeof(*t));
    else
        mem_release(t);
    self->tracking.table = NULL;
}

/* ---------------------------------------------------------------- the home side */

static struct conn *tracked_conn(struct shard *self, uint64_t id)
{
    for (int i = 0; i < self->tracking.nclients; i++)
        if (self->tracking.clients[i]->id == id)
            return self->tracking.clients[i];
    return NULL;
}

static struct conn *open_conn(struct shard *self, uint64_t id)
{
    for (struct conn *c = self->conns; c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

static void record_append(struct reply *r, int kind, uint64_t client, uint64_t other, const char *p, size_t len)
{
    uint8_t k = (uint8_t)kind;
    uint32_t l = (uint32_t)len;
    reply_raw(r, &k, 1);
    reply_raw(r, &client, 8);
    reply_raw(r, &other, 8);
    reply_raw(r, &l, 4);
    reply_raw(r, p, len);
}

static void deliver(struct shard *self, int kind, uint64_t client, uint64_t other, const char *p, size_t len);

/* a record for the shard that is home to `home`'s clients: here at once, else in the outbox */
static void record_send(struct shard *self, int home, int kind, uint64_t client, uint64_t other, const char *p,
                        size_t len)
{
    if (home == self->index) {
        deliver(self, kind, client, other, p, len);
        return;
    }
    if (!self->tracking.out)
        self->tracking.out = outbox_create(shard_count());
    record_append(outbox_to(self->tracking.out, home), kind, client, other, p, len);
    self->tracking.dirty = true;
}

/* the invalidation (array or null, proto) written to t: a push in RESP3, the pub/sub message to a RESP2
 * redirect target that is subscribed, else nothing (Redis's sendTrackingMessage) */
/* where an invalidation for t goes: its output, or (inside EXEC) held until EXEC's reply is out */
static struct reply *push_target(struct conn *t)
{
    if (!t->exec_input)
        return dispatch_push_target(t);
    if (!t->track.held) {
        t->track.held = mem_alloc(sizeof(struct reply));
        reply_init(t->track.held);
    }
    return t->track.held;
}

static void write_to(struct conn *t, const char *proto, size_t len, bool redirected)
{
    struct reply *r;
    if (t->resp >= 3) {
        r = push_target(t);
        reply_raw(r, push_head, sizeof push_head - 1);
    } else if (redirected && pubsub_subscribed(t)) {
        r = push_target(t);
        reply_raw(r, message_head, sizeof message_head - 1);
    } else {
        return;
    }
    reply_raw(r, proto, len);
    shard_mark_dirty(t);
}

static void held_free(struct conn *c)
{
    if (!c->track.held)
        return;
    reply_deinit(c->track.held);
    mem_release(c->track.held);
    c->track.held = NULL;
}

void tracking_exec_done(struct conn *c)
{
    struct reply *h = c->track.held;
    reply_raw(dispatch_push_target(c), h->buf, h->len);
    held_free(c);
    shard_mark_dirty(c);
}

static void redirect_broken(struct conn *c)
{
    c->track.flags |= TRACKING_BROKEN_REDIR;
    if (c->resp < 3)
        return;
    struct reply *r = push_target(c);
    reply_raw(r, ">2\r\n$21\r\ntracking-redir-broken\r\n", 32);
    reply_int(r, (long long)c->track.redirect);
    shard_mark_dirty(c);
}

/* c (tracking, of this shard) is to get proto: itself, or through its REDIRECT client */
static void send_to_client(struct shard *self, struct conn *c, const char *proto, size_t len)
{
    uint64_t r = c->track.redirect;
    if (!r) {
        write_to(c, proto, len, false);
        return;
    }
    if (home_of(r) != self->index) {
        record_send(self, home_of(r), REC_REDIR, r, c->id, proto, len);
        return;
    }
    struct conn *t = open_conn(self, r);
    if (t)
        write_to(t, proto, len, true);
    else
        redirect_broken(c);
}

static void key_array(struct reply *r, const char *key, size_t len)
{
    reply_raw(r, "*1\r\n", 4);
    reply_bulk(r, key, len);
}

/* BCAST keys for c: the array of those not written by c itself under NOLOOP; false when none is left */
static bool bcast_array(const struct conn *c, const char *p, size_t len, struct reply *out)
{
    bool noloop = c->track.flags & TRACKING_NOLOOP;
    long long n = 0;
    struct reply keys;
    reply_init(&keys);
    for (const char *at = p, *end = p + len; end - at >= 12;) {
        uint64_t writer;
        uint32_t klen;
        memcpy(&writer, at, 8);
        memcpy(&klen, at + 8, 4);
        at += 12;
        if (!(noloop && writer == c->id)) {
            reply_bulk(&keys, at, klen);
            n++;
        }
        at += klen;
    }
    if (n) {
        char head[32];
        reply_raw(out, head, (size_t)snprintf(head, sizeof head, "*%lld\r\n", n));
        reply_raw(out, keys.buf, keys.len);
    }
    reply_deinit(&keys);
    return n != 0;
}

static void deliver(struct shard *self, int kind, uint64_t client, uint64_t other, const char *p, size_t len)
{
    struct conn *c;
    struct reply proto;
    switch (kind) {
    case REC_KEY:
        c = tracked_conn(self, client);
        if (!c || (c->track.flags & TRACKING_BCAST) || ((c->track.flags & TRACKING_NOLOOP) && other == client))
            return;
        reply_init(&proto);
        key_array(&proto, p, len);
        send_to_client(self, c, proto.buf, proto.len);
        reply_deinit(&proto);
        return;
    case REC_BCAST:
        c = tracked_conn(self, client);
        if (!c || !(c->track.flags & TRACKING_BCAST))
            return;
        reply_init(&proto);
        if (bcast_array(c, p, len, &proto))
            send_to_client(self, c, proto.buf, proto.len);
        reply_deinit(&proto);
        return;
    case REC_FLUSH:
        for (int i = 0; i < self->tracking.nclients; i++) {
            c = self->tracking.clients[i];
            send_to_client(self, c, c->resp >= 3 ? "_\r\n" : "$-1\r\n", c->resp >= 3 ? 3 : 5);
        }
        return;
    case REC_REDIR:
        c = open_conn(self, client);
        if (c)
            write_to(c, p, len, true);
        else
            record_send(self, home_of(other), REC_BROKEN, other, client, NULL, 0);
        return;
    case REC_BROKEN:
        c = tracked_conn(self, client);
        if (c && c->track.redirect == other)
            redirect_broken(c);
        return;
    }
}

/* `__track <records>`: invalidations for this shard's clients */
static void cmd_tracking_deliver(struct cmd_ctx *ctx)
{
    const char *at = ctx->argv[1].ptr, *end = at + ctx->argv[1].len;
    while (end - at >= REC_HEAD) {
        uint8_t kind;
        uint64_t client, other;
        uint32_t len;
        memcpy(&kind, at, 1);
        memcpy(&client, at + 1, 8);
        memcpy(&other, at + 9, 8);
        memcpy(&len, at + 17, 4);
        at += REC_HEAD;
        if ((size_t)(end - at) < len)
            break;
        deliver(shard_self, kind, client, other, at, len);
        at += len;
    }
    reply_int(ctx->out, 0);
}

const struct command tracking_deliver_command = {
    "__track", cmd_tracking_deliver, 2, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, "",
};

/* ---------------------------------------------------------------- the owner side */

static void keys_delta(struct shard *self, long long keys, long long items)
{
    STATS_ADD(&self->stats, tracking_total_keys, (uint64_t)keys);
    STATS_ADD(&self->stats, tracking_total_items, (uint64_t)items);
}

/* key's readers are told, and forgotten */
static void table_invalidate(struct shard *self, const char *key, size_t len, uint64_t writer)
{
    struct tracking *t = self->tracking.table;
    if (!t->keys)
        return;
    struct dict_entry *e = dict_find(t->keys, key, len);
    if (!e)
        return;
    struct ids *ids = dict_entry_pointer(e);
    char *copy = mem_alloc(len ? len : 1); /* the entry goes first: a delivery never looks at the table */
    memcpy(copy, key, len);
    dict_delete(t->keys, key, len);
    t->items -= ids->n;
    keys_delta(self, -1, -(long long)ids->n);
    recount(t);
    for (uint32_t i = 0; i < ids->n; i++)
        record_send(self, home_of(ids->v[i]), REC_KEY, ids->v[i], writer, copy, len);
    mem_release(ids);
    mem_release(copy);
}

static size_t max_keys_here(void)
{
    long long max = config_current()->tracking_table_max_keys;
    if (max <= 0)
        return 0;
    int n = shard_store_count();
    return (size_t)((max + n - 1) / n);
}

/* over tracking-table-max-keys: random keys are invalidated (Redis's trackingLimitUsedSlots) */
static void table_limit(struct shard *self)
{
    struct tracking *t = self->tracking.table;
    size_t max = max_keys_here();
    if (!max || !t->keys || dict_size(t->keys) <= max) {
        t->evict_rounds = 0;
        return;
    }
    for (int effort = 100 * (int)(t->evict_rounds + 1); effort > 0; effort--) {
        struct dict_entry *e = dict_random(t->keys);
        if (!e)
            break;
        size_t len;
        const char *k = dict_entry_key(e, &len);
        char *copy = mem_alloc(len ? len : 1);
        memcpy(copy, k, len);
        table_invalidate(self, copy, len, 0);
        mem_release(copy);
        if (dict_size(t->keys) <= max) {
            t->evict_rounds = 0;
            return;
        }
    }
    t->evict_rounds++;
}

void tracking_remember(struct shard *self, const struct command *cmd, int argc, const struct resp_arg *argv,
                       uint64_t client)
{
    if (!(cmd->flags & CMD_READONLY) || (cmd->flags & CMD_PUBSUB))
        return;
    struct tracking *t = self->tracking.table;
    int *pos = mem_alloc((size_t)argc * sizeof(int));
    int n = command_key_positions(cmd, argc, argv, pos);
    if (n > 0 && !t->keys)
        t->keys = dict_create();
    for (int i = 0; i < n; i++) {
        const struct resp_arg *key = &argv[pos[i]];
        struct dict_entry *e = dict_find(t->keys, key->ptr, key->len);
        if (!e) {
            e = dict_add(t->keys, key->ptr, key->len, NULL);
            struct ids *fresh = mem_alloc(sizeof(struct ids) + 2 * sizeof(uint64_t));
            fresh->n = 0;
            fresh->cap = 2;
            dict_entry_set_pointer(t->keys, e, fresh);
            keys_delta(self, 1, 0);
        }
        struct ids *ids = dict_entry_pointer(e);
        bool known = false;
        for (uint32_t j = 0; j < ids->n && !known; j++)
            known = ids->v[j] == client;
        if (known)
            continue;
        if (ids->n == ids->cap) {
            ids->cap *= 2;
            ids = mem_realloc(ids, sizeof(struct ids) + ids->cap * sizeof(uint64_t));
            dict_entry_set_pointer(t->keys, e, ids);
        }
        ids->v[ids->n++] = client;
        t->items++;
        keys_delta(self, 0, 1);
    }
    mem_release(pos);
    recount(t);
    table_limit(self);
}

/* key is one BCAST prefix p watches: noted with its writer, sent at the end of the turn */
static void bcast_note(struct shard *self, const char *key, size_t len, uint64_t writer)
{
    struct tracking *t = self->tracking.table;
    for (int i = 0; i < t->nprefixes; i++) {
        struct prefix *p = &t->prefixes[i];
        if (p->len > len || memcmp(p->p, key, p->len) != 0)
            continue;
        if (!p->pending)
            p->pending = dict_create();
        struct dict_entry *have = NULL;
        struct dict_entry *e = dict_add(p->pending, key, len, &have);
        dict_entry_set_pointer(p->pending, e ? e : have, (void *)(uintptr_t)writer);
        t->bcast_pending = true;
        self->tracking.dirty = true;
    }
}

void tracking_invalidate(struct shard *self, const char *key, size_t len, uint64_t writer)
{
    if (self->tracking.table->nprefixes)
        bcast_note(self, key, len, writer);
    table_invalidate(self, key, len, writer);
}

void tracking_flush_databases(struct shard *self)
{
    struct tracking *t = self->tracking.table;
    self->tracking.flushed = false;
    keys_delta(self, -(long long)(t->keys ? dict_size(t->keys) : 0), -(long long)t->items);
    table_clear_keys(t);
    recount(t);
    if (!SHARD_STORE_SHARED) { /* every shard runs its part of the flush: each tells its own clients */
        deliver(self, REC_FLUSH, 0, 0, NULL, 0);
        return;
    }
    for (int i = 0; i < shard_count(); i++)
        record_send(self, i, REC_FLUSH, 0, 0, NULL, 0);
}

struct pending_key {
    const char *key;
    size_t len;
    uint64_t writer;
};

static int pending_cmp(const void *a, const void *b)
{
    const struct pending_key *x = a, *y = b;
    return util_bytes_cmp(x->key, x->len, y->key, y->len);
}

/* each prefix's keys of this turn, sorted (Redis's rax order), to every client registered for it */
static void bcast_send(struct shard *self)
{
    struct tracking *t = self->tracking.table;
    t->bcast_pending = false;
    for (int i = 0; i < t->nprefixes; i++) {
        struct prefix *p = &t->prefixes[i];
        if (!p->pending)
            continue;
        size_t n = dict_size(p->pending), k = 0;
        struct pending_key *v = mem_alloc((n ? n : 1) * sizeof(*v));
        struct dict_iter it;
        dict_iter_init(&it, p->pending);
        for (struct dict_entry *e; (e = dict_iter_next(&it));) {
            v[k].key = dict_entry_key(e, &v[k].len);
            v[k].writer = (uint64_t)(uintptr_t)dict_entry_pointer(e);
            k++;
        }
        qsort(v, n, sizeof(*v), pending_cmp);
        struct reply bytes;
        reply_init(&bytes);
        for (size_t j = 0; j < n; j++) {
            uint32_t l = (uint32_t)v[j].len;
            reply_raw(&bytes, &v[j].writer, 8);
            reply_raw(&bytes, &l, 4);
            reply_raw(&bytes, v[j].key, v[j].len);
        }
        for (int j = 0; j < p->n; j++)
            record_send(self, home_of(p->clients[j]), REC_BCAST, p->clients[j], 0, bytes.buf, bytes.len);
        reply_deinit(&bytes);
        mem_release(v);
        dict_destroy(&p->pending);
    }
}

void tracking_flush(struct shard *self)
{
    self->tracking.dirty = false;
    shard_store_lock();
    if (self->tracking.table->bcast_pending)
        bcast_send(self);
    shard_store_unlock();
    if (self->tracking.out)
        outbox_flush(self->tracking.out, self, &tracking_deliver_command);
}

/* ---------------------------------------------------------------- prefixes, owner side */

static int prefix_find(const struct tracking *t, const char *p, size_t len, bool *found)
{
    int lo = 0, hi = t->nprefixes;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        const struct prefix *m = &t->prefixes[mid];
        int c = memcmp(m->p, p, m->len < len ? m->len : len);
        if (c == 0)
            c = (m->len > len) - (m->len < len);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static void prefix_add(struct shard *self, uint64_t client, const char *s, size_t len)
{
    struct tracking *t = self->tracking.table;
    bool found;
    int i = prefix_find(t, s, len, &found);
    if (!found) {
        if (t->nprefixes == t->prefixes_cap) {
            t->prefixes_cap = t->prefixes_cap ? 2 * t->prefixes_cap : 4;
            t->prefixes = mem_realloc(t->prefixes, (size_t)t->prefixes_cap * sizeof(*t->prefixes));
        }
        memmove(&t->prefixes[i + 1], &t->prefixes[i], (size_t)(t->nprefixes - i) * sizeof(*t->prefixes));
        struct prefix *p = &t->prefixes[i];
        memset(p, 0, sizeof(*p));
        p->p = mem_alloc(len ? len : 1);
        memcpy(p->p, s, len);
        p->len = len;
        t->nprefixes++;
        if (counts_prefixes(self))
            STATS_ADD(&self->stats, tracking_total_prefixes, 1);
    }
    struct prefix *p = &t->prefixes[i];
    for (int j = 0; j < p->n; j++)
        if (p->clients[j] == client)
            return;
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 2;
        p->clients = mem_realloc(p->clients, (size_t)p->cap * sizeof(uint64_t));
    }
    p->clients[p->n++] = client;
    recount(t);
}

/* client leaves every prefix (every one it holds when prefixes is NULL) */
static void prefix_drop(struct shard *self, uint64_t client, int n, const struct resp_arg *prefixes)
{
    struct tracking *t = self->tracking.table;
    for (int i = t->nprefixes - 1; i >= 0; i--) {
        struct prefix *p = &t->prefixes[i];
        bool listed = !prefixes;
        for (int k = 0; k < n && !listed; k++)
            listed = prefixes[k].len == p->len && memcmp(prefixes[k].ptr, p->p, p->len) == 0;
        if (!listed)
            continue;
        for (int j = 0; j < p->n; j++)
            if (p->clients[j] == client)
                p->clients[j--] = p->clients[--p->n];
        if (p->n)
            continue;
        mem_release(p->p);
        mem_release(p->clients);
        dict_destroy(&p->pending);
        memmove(p, p + 1, (size_t)(t->nprefixes - i - 1) * sizeof(*p));
        t->nprefixes--;
        if (counts_prefixes(self))
            STATS_ADD(&self->stats, tracking_total_prefixes, (uint64_t)-1);
    }
    recount(t);
}

/* ---------------------------------------------------------------- a connection's state */

bool tracking_reads(const struct conn_tracking *ct, const struct command *cmd)
{
    uint8_t f = ct->flags;
    if (!(f & TRACKING_ON) || (f & TRACKING_BCAST) || !(cmd->flags & CMD_READONLY))
        return false;
    bool caching = f & TRACKING_CACHING;
    return !(((f & TRACKING_OPTIN) && !caching) || ((f & TRACKING_OPTOUT) && caching));
}

void tracking_step(struct conn *c, const struct command *cmd)
{
    bool keeps = c->last_cmd && (c->last_cmd->flags & CMD_KEEPS_CACHING);
    if ((c->track.flags & TRACKING_CACHING) && !c->exec_input && !c->in_multi && !keeps)
        c->track.flags &= (uint8_t)~TRACKING_CACHING;
    c->track.reads = cmd && tracking_reads(&c->track, cmd);
}

static void clients_add(struct conn *c)
{
    struct shard *self = c->home;
    struct shard_tracking *st = &self->tracking;
    if (st->nclients == st->clients_cap) {
        st->clients_cap = st->clients_cap ? 2 * st->clients_cap : 4;
        st->clients = mem_realloc(st->clients, (size_t)st->clients_cap * sizeof(*st->clients));
    }
    st->clients[st->nclients++] = c;
    shard_store_lock();
    st->table->clients++;
    recount(st->table);
    shard_store_unlock();
    STATS_ADD(&self->stats, tracking_clients, 1);
}

static void clients_remove(struct conn *c)
{
    struct shard *self = c->home;
    struct shard_tracking *st = &self->tracking;
    for (int i = 0; i < st->nclients; i++) {
        if (st->clients[i] == c) {
            st->clients[i] = st->clients[--st->nclients];
            break;
        }
    }
    shard_store_lock();
    st->table->clients--;
    recount(st->table);
    shard_store_unlock();
    STATS_ADD(&self->stats, tracking_clients, (uint64_t)-1);
}

static void conn_prefixes_free(struct conn *c)
{
    struct tracking_prefixes *tp = c->track.prefixes;
    if (!tp)
        return;
    for (int i = 0; i < tp->n; i++)
        mem_release((void *)tp->v[i].ptr);
    mem_release(tp->v);
    mem_release(tp);
    c->track.prefixes = NULL;
}

static bool conn_has_prefix(const struct conn *c, const struct resp_arg *p)
{
    const struct tracking_prefixes *tp = c->track.prefixes;
    for (int i = 0; tp && i < tp->n; i++)
        if (tp->v[i].len == p->len && memcmp(tp->v[i].ptr, p->ptr, p->len) == 0)
            return true;
    return false;
}

static int arg_cmp(const void *a, const void *b)
{
    const struct resp_arg *x = a, *y = b;
    return util_bytes_cmp(x->ptr, x->len, y->ptr, y->len);
}

static void conn_prefix_add(struct conn *c, const struct resp_arg *p)
{
    if (conn_has_prefix(c, p))
        return;
    struct tracking_prefixes *tp = c->track.prefixes;
    if (!tp)
        tp = c->track.prefixes = mem_calloc(1, sizeof(*tp));
    if (tp->n == tp->cap) {
        tp->cap = tp->cap ? 2 * tp->cap : 2;
        tp->v = mem_realloc(tp->v, (size_t)tp->cap * sizeof(*tp->v));
    }
    char *copy = mem_alloc(p->len ? p->len : 1);
    memcpy(copy, p->ptr, p->len);
    tp->v[tp->n++] = (struct resp_arg){copy, p->len};
    qsort(tp->v, (size_t)tp->n, sizeof(*tp->v), arg_cmp);
}

/* every shard forgets client's prefixes: the n listed, or (n 0) all (a connection that closed) */
static void prefixes_drop_everywhere(struct shard *self, uint64_t client, int n, const struct resp_arg *prefixes)
{
    char id[24];
    struct resp_arg *argv = mem_alloc((size_t)(n + 3) * sizeof(*argv));
    argv[0] = (struct resp_arg){"__tracking", 10};
    argv[1] = (struct resp_arg){"drop", 4};
    argv[2] = (struct resp_arg){id, (size_t)snprintf(id, sizeof id, "%llu", (unsigned long long)client)};
    if (n)
        memcpy(&argv[3], prefixes, (size_t)n * sizeof(*argv));
    shard_store_lock();
    prefix_drop(self, client, n, n ? prefixes : NULL);
    shard_store_unlock();
    for (int i = 0; i < shard_count(); i++)
        if (i != self->index)
            handoff_send_system(self, i, &tracking_part_command, 0, n + 3, argv);
    mem_release(argv);
}

void tracking_conn_off(struct conn *c)
{
    held_free(c);
    if (!(c->track.flags & TRACKING_ON)) {
        conn_prefixes_free(c);
        return;
    }
    if (c->track.flags & TRACKING_BCAST)
        prefixes_drop_everywhere(c->home, c->id, 0, NULL);
    clients_remove(c);
    conn_prefixes_free(c);
    c->track.flags = 0;
    c->track.reads = false;
}

int tracking_describe_flags(const struct conn *c, char *flags)
{
    int n = 0;
    uint8_t f = c->track.flags;
    if (f & TRACKING_ON)
        flags[n++] = 't';
    if (f & TRACKING_BROKEN_REDIR)
        flags[n++] = 'R';
    if (f & TRACKING_BCAST)
        flags[n++] = 'B';
    return n;
}

long long tracking_redirect_shown(const struct conn *c)
{
    return (c->track.flags & TRACKING_ON) ? (long long)c->track.redirect : -1;
}

/* ---------------------------------------------------------------- CLIENT TRACKING */

/* CLIENT TRACKING's arguments, as Redis's parse loop reads them */
struct track_args {
    const char *early;       /* an error found before any REDIRECT was looked up: the answer */
    const char *late;        /* an error found after it: the answer once the REDIRECT client exists */
    char late_buf[512];
    bool redirect_given;     /* a REDIRECT was parsed: its client must exist */
    long long redirect;
    uint8_t options;         /* TRACKING_BCAST OPTIN OPTOUT NOLOOP */
    int nprefix;
    const struct resp_arg *argv;
    int *prefix_pos;         /* argv positions of the prefixes */
    bool on, off;
};

static void args_parse(int argc, const struct resp_arg *argv, struct track_args *a)
{
    memset(a, 0, sizeof(*a));
    a->argv = argv;
    a->prefix_pos = mem_alloc((size_t)argc * sizeof(int));
    const char **err = &a->early;
    for (int j = 3; j < argc; j++) {
        int more = argc - 1 - j;
        const struct resp_arg *o = &argv[j];
        if (cmd_arg_is(o, "redirect") && more) {
            j++;
            if (a->redirect_given) {
                *err = "A client can only redirect to a single other client";
                break;
            }
            if (!util_str_to_ll(argv[j].ptr, argv[j].len, &a->redirect)) {
                *err = "value is not an integer or out of range";
                break;
            }
            a->redirect_given = true;
            err = &a->late;
        } else if (cmd_arg_is(o, "bcast")) {
            a->options |= TRACKING_BCAST;
        } else if (cmd_arg_is(o, "optin")) {
            a->options |= TRACKING_OPTIN;
        } else if (cmd_arg_is(o, "optout")) {
            a->options |= TRACKING_OPTOUT;
        } else if (cmd_arg_is(o, "noloop")) {
            a->options |= TRACKING_NOLOOP;
        } else if (cmd_arg_is(o, "prefix") && more) {
            j++;
            a->prefix_pos[a->nprefix++] = j;
        } else {
            *err = "syntax error";
            break;
        }
    }
    a->on = cmd_arg_is(&argv[2], "on");
    a->off = cmd_arg_is(&argv[2], "off");
}

static const struct resp_arg *arg_prefix(const struct track_args *a, int i)
{
    return &a->argv[a->prefix_pos[i]];
}

static bool prefix_overlaps(const struct resp_arg *x, const struct resp_arg *y)
{
    size_t n = x->len < y->len ? x->len : y->len;
    return memcmp(x->ptr, y->ptr, n) == 0;
}

/* Redis's checks before enableTracking, in its order: the error, or NULL */
static const char *args_check_on(const struct conn *c, struct track_args *a)
{
    uint8_t f = c->track.flags, o = a->options;
    if (!(o & TRACKING_BCAST) && a->nprefix)
        return "PREFIX option requires BCAST mode to be enabled";
    if ((f & TRACKING_ON) && !!(f & TRACKING_BCAST) != !!(o & TRACKING_BCAST))
        return "You can't switch BCAST mode on/off before disabling tracking for this client, and then "
               "re-enabling it with a different mode.";
    if ((o & TRACKING_BCAST) && (o & (TRACKING_OPTIN | TRACKING_OPTOUT)))
        return "OPTIN and OPTOUT are not compatible with BCAST";
    if ((o & TRACKING_OPTIN) && (o & TRACKING_OPTOUT))
        return "You can't specify both OPTIN mode and OPTOUT mode";
    if (((o & TRACKING_OPTIN) && (f & TRACKING_OPTOUT)) || ((o & TRACKING_OPTOUT) && (f & TRACKING_OPTIN)))
        return "You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then "
               "re-enabling it with a different mode.";
    if (!(o & TRACKING_BCAST))
        return NULL;
    /* Redis's checkPrefixCollisionsOrReply, whose failure on any but the first prefix against another
     * given one still counts as success (it returns the index): the error is sent, and then +OK */
    const struct tracking_prefixes *tp = c->track.prefixes;
    for (int i = 0; i < a->nprefix; i++) {
        const struct resp_arg *p = arg_prefix(a, i);
        for (int k = 0; tp && k < tp->n; k++) {
            if (prefix_overlaps(&tp->v[k], p)) {
                snprintf(a->late_buf, sizeof a->late_buf,
                         "Prefix '%.*s' overlaps with an existing prefix '%.*s'. Prefixes for a single client "
                         "must not overlap.",
                         (int)(p->len > 200 ? 200 : p->len), p->ptr, (int)(tp->v[k].len > 200 ? 200 : tp->v[k].len),
                         tp->v[k].ptr);
                return a->late_buf;
            }
        }
        for (int j = i + 1; j < a->nprefix; j++) {
            const struct resp_arg *q = arg_prefix(a, j);
            if (prefix_overlaps(p, q)) {
                snprintf(a->late_buf, sizeof a->late_buf,
                         "Prefix '%.*s' overlaps with another provided prefix '%.*s'. Prefixes for a single "
                         "client must not overlap.",
                         (int)(p->len > 200 ? 200 : p->len), p->ptr, (int)(q->len > 200 ? 200 : q->len), q->ptr);
                if (i == 0)
                    return a->late_buf;
                a->late = a->late_buf; /* shown, then the command goes on (the bug kept) */
                return NULL;
            }
        }
    }
    return NULL;
}

/* the error CLIENT TRACKING answers once the REDIRECT client is known to exist (or none was given) */
static const char *args_verdict(const struct conn *c, struct track_args *a)
{
    if (a->late)
        return a->late;
    if (!a->on && !a->off)
        return "syntax error";
    return a->on ? args_check_on(c, a) : NULL;
}

static void tracking_enable(struct conn *c, const struct track_args *a)
{
    if (!(c->track.flags & TRACKING_ON))
        clients_add(c);
    uint8_t keep = c->track.flags & TRACKING_CACHING;
    c->track.flags = (uint8_t)(TRACKING_ON | keep | a->options);
    c->track.redirect = (uint64_t)a->redirect;
    if (!(a->options & TRACKING_BCAST))
        return;
    if (a->nprefix == 0)
        conn_prefix_add(c, &(struct resp_arg){"", 0});
    for (int i = 0; i < a->nprefix; i++)
        conn_prefix_add(c, arg_prefix(a, i));
}

static void tracking_disable(struct conn *c)
{
    if (!(c->track.flags & TRACKING_ON))
        return;
    clients_remove(c);
    conn_prefixes_free(c);
    c->track.flags = 0;
    c->track.reads = false;
    c->track.redirect = 0;
}

/* the answer, the REDIRECT client's existence known: +OK (after a kept collision error) or the error */
static void tracking_finish(struct conn *c, struct track_args *a, bool exists, struct reply *out)
{
    if (a->redirect_given && !exists) {
        reply_error(out, "ERR The client ID you want redirect to does not exist");
        return;
    }
    const char *late_before = a->late;
    const char *err = args_verdict(c, a);
    if (err) {
        reply_errorf(out, "ERR %s", err);
        return;
    }
    if (a->late && !late_before)
        reply_errorf(out, "ERR %s", a->late);
    if (a->on)
        tracking_enable(c, a);
    else
        tracking_disable(c);
    reply_ok(out);
}

/*
 * `__tracking <caller> <op> <CLIENT TRACKING's argv from ON|OFF on>`, on every shard: op `add` registers the
 * BCAST prefixes (none given: ""), `del` drops the caller from every prefix, `check` changes nothing; each
 * answers :1 when the REDIRECT client is one of its connections.  `__tracking drop <caller>` (a system
 * message) drops the caller's prefixes.
 */
static void cmd_tracking_part(struct cmd_ctx *ctx)
{
    struct shard *self = shard_self;
    long long caller = 0;
    if (cmd_arg_is(&ctx->argv[1], "drop")) {
        util_str_to_ll(ctx->argv[2].ptr, ctx->argv[2].len, &caller);
        prefix_drop(self, (uint64_t)caller, ctx->argc - 3, ctx->argc > 3 ? &ctx->argv[3] : NULL);
        reply_int(ctx->out, 0);
        return;
    }
    util_str_to_ll(ctx->argv[1].ptr, ctx->argv[1].len, &caller);
    struct resp_arg argv[ctx->argc - 1];
    argv[0] = (struct resp_arg){"client", 6};
    argv[1] = (struct resp_arg){"tracking", 8};
    memcpy(&argv[2], &ctx->argv[3], (size_t)(ctx->argc - 3) * sizeof(*argv));
    struct track_args a;
    args_parse(ctx->argc - 1, argv, &a);
    if (cmd_arg_is(&ctx->argv[2], "add")) {
        if (a.nprefix == 0)
            prefix_add(self, (uint64_t)caller, "", 0);
        for (int i = 0; i < a.nprefix; i++)
            prefix_add(self, (uint64_t)caller, arg_prefix(&a, i)->ptr, arg_prefix(&a, i)->len);
    } else if (cmd_arg_is(&ctx->argv[2], "del")) {
        prefix_drop(self, (uint64_t)caller, 0, NULL);
    }
    bool here = a.redirect_given && a.redirect > 0 && home_of((uint64_t)a.redirect) == self->index &&
                open_conn(self, (uint64_t)a.redirect);
    mem_release(a.prefix_pos);
    reply_int(ctx->out, here ? 1 : 0);
}

static const struct command tracking_part_command = {
    "__tracking", cmd_tracking_part, -3, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, "",
};

/* the fan-out's answers: the REDIRECT client found on a shard?  Then the same verdict as at home */
static void tracking_merge(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                           const char *const *parts, const size_t *lens)
{
    bool exists = false;
    for (int i = 0; i < nparts; i++)
        exists = exists || (lens[i] >= 2 && parts[i][0] == ':' && parts[i][1] == '1');
    long long caller = 0;
    util_str_to_ll(argv[1].ptr, argv[1].len, &caller);
    struct conn *c = open_conn(shard_self, (uint64_t)caller);
    struct resp_arg args[argc - 1];
    args[0] = (struct resp_arg){"client", 6};
    args[1] = (struct resp_arg){"tracking", 8};
    memcpy(&args[2], &argv[3], (size_t)(argc - 3) * sizeof(*args));
    struct track_args a;
    args_parse(argc - 1, args, &a);
    bool added = cmd_arg_is(&argv[2], "add");
    if (c && !(a.redirect_given && !exists)) {
        tracking_finish(c, &a, exists, out);
    } else {
        if (c)
            reply_error(out, "ERR The client ID you want redirect to does not exist");
        if (added) { /* registered for nothing: the new ones dropped again */
            struct resp_arg *fresh = mem_alloc((size_t)(a.nprefix + 1) * sizeof(*fresh));
            int n = 0;
            if (a.nprefix == 0)
                fresh[n++] = (struct resp_arg){"", 0};
            for (int i = 0; i < a.nprefix; i++)
                if (!c || !conn_has_prefix(c, arg_prefix(&a, i)))
                    fresh[n++] = *arg_prefix(&a, i);
            prefixes_drop_everywhere(shard_self, (uint64_t)caller, n, fresh);
            mem_release(fresh);
        }
        if (!c)
            reply_ok(out);
    }
    mem_release(a.prefix_pos);
}

void tracking_cmd_tracking(struct cmd_ctx *ctx)
{
    struct conn *c = ctx->conn;
    struct shard *self = c->home;
    struct track_args a;
    args_parse(ctx->argc, ctx->argv, &a);
    if (a.early) {
        reply_errorf(ctx->out, "ERR %s", a.early);
        mem_release(a.prefix_pos);
        return;
    }
    bool remote = a.redirect_given && a.redirect > 0 && home_of((uint64_t)a.redirect) != self->index;
    bool exists = a.redirect_given && a.redirect > 0 && !remote && open_conn(self, (uint64_t)a.redirect);
    const char *op = "check";
    if (!a.redirect_given || exists || remote) {
        struct track_args probe = a;
        const char *err = args_verdict(c, &probe);
        if (!err && a.on && (a.options & TRACKING_BCAST)) {
            bool fresh = a.nprefix == 0 ? !conn_has_prefix(c, &(struct resp_arg){"", 0}) : true;
            if (fresh)
                op = "add";
        } else if (!err && a.off && (c->track.flags & TRACKING_BCAST)) {
            op = "del";
        }
    }
    if (!remote && strcmp(op, "check") == 0) {
        tracking_finish(c, &a, exists, ctx->out);
        mem_release(a.prefix_pos);
        return;
    }
    mem_release(a.prefix_pos);
    /* `__tracking <caller> <op> argv[2..]`: every shard registers, or looks for the REDIRECT client */
    struct resp_arg *argv = mem_alloc((size_t)(ctx->argc + 1) * sizeof(*argv));
    char id[24];
    argv[0] = (struct resp_arg){"__tracking", 10};
    argv[1] = (struct resp_arg){id, (size_t)snprintf(id, sizeof id, "%llu", (unsigned long long)c->id)};
    argv[2] = (struct resp_arg){op, strlen(op)};
    for (int j = 2; j < ctx->argc; j++)
        argv[j + 1] = ctx->argv[j];
    conn_fanout(c, &tracking_part_command, ctx->argc + 1, argv, tracking_merge);
    mem_release(argv);
    if (c->slot_tail && !c->slot_tail->complete) /* the commands behind it see its outcome */
        c->slot_tail->barrier = true;
}

void tracking_cmd_caching(struct cmd_ctx *ctx)
{
    struct conn *c = ctx->conn;
    uint8_t f = c->track.flags;
    if (!(f & TRACKING_ON)) {
        reply_error(ctx->out, "ERR CLIENT CACHING can be called only when the client is in tracking mode with "
                              "OPTIN or OPTOUT mode enabled");
        return;
    }
    const struct resp_arg *opt = &ctx->argv[2];
    if (cmd_arg_is(opt, "yes")) {
        if (!(f & TRACKING_OPTIN)) {
            reply_error(ctx->out, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
            return;
        }
    } else if (cmd_arg_is(opt, "no")) {
        if (!(f & TRACKING_OPTOUT)) {
            reply_error(ctx->out, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
            return;
        }
    } else {
        reply_syntax_error(ctx->out);
        return;
    }
    c->track.flags |= TRACKING_CACHING;
    reply_ok(ctx->out);
}

void tracking_cmd_getredir(struct cmd_ctx *ctx)
{
    reply_int(ctx->out, ctx->conn ? tracking_redirect_shown(ctx->conn) : -1); /* no connection: a unit test's */
}

void tracking_cmd_trackinginfo(struct cmd_ctx *ctx)
{
    const struct conn *c = ctx->conn;
    uint8_t f = c->track.flags;
    const char *names[7];
    int n = 0;
    names[n++] = (f & TRACKING_ON) ? "on" : "off";
    if (f & TRACKING_BCAST)
        names[n++] = "bcast";
    if (f & TRACKING_OPTIN) {
        names[n++] = "optin";
        if (f & TRACKING_CACHING)
            names[n++] = "caching-yes";
    }
    if (f & TRACKING_OPTOUT) {
        names[n++] = "optout";
        if (f & TRACKING_CACHING)
            names[n++] = "caching-no";
    }
    if (f & TRACKING_NOLOOP)
        names[n++] = "noloop";
    if (f & TRACKING_BROKEN_REDIR)
        names[n++] = "broken_redirect";
    struct reply *out = ctx->out;
    reply_map(out, 3);
    reply_bulk_cstr(out, "flags");
    reply_set(out, n);
    for (int i = 0; i < n; i++)
        reply_bulk_cstr(out, names[i]);
    reply_bulk_cstr(out, "redirect");
    reply_int(out, tracking_redirect_shown(c));
    reply_bulk_cstr(out, "prefixes");
    const struct tracking_prefixes *tp = c->track.prefixes;
    reply_array(out, tp ? tp->n : 0);
    for (int i = 0; tp && i < tp->n; i++)
        reply_bulk(out, tp->v[i].ptr, tp->v[i].len);
}
