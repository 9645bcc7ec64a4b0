/*
 * keylock: a shard's locked keys (include/percore/keylock.h).
 *
 * A dict keyed by the 4-byte database number followed by the key's bytes,
 * each entry's value the holder's 8-byte transaction id.  Transactions lock
 * a handful of keys for a few handoff hops, so the table stays tiny and is
 * empty almost always.  Requests that find a key taken wait in a FIFO
 * queue, granted in order as keys come free (a later one may pass an
 * earlier one whose keys are still taken).
 */
#include "percore/keylock.h"

#include "percore/dict.h"
#include "percore/mem.h"

#include <string.h>

/* a lock request that found a key taken, waiting its turn */
struct lock_wait {
    struct lock_wait *next;
    uint64_t txid;
    int home;
    int db;
    int n;
    struct keylock_key *keys; /* copies, in bytes */
    char *bytes;
};

struct keylocks {
    struct keylocks_head head; /* first: keylock_count() reads it */
    struct dict *held;
    uint64_t all_by;          /* the transaction holding every key (KEYLOCK_ALL), 0 none */
    uint64_t generation;
    bool hold_new;            /* others wait here for locked keys: new requests queue behind them */
    struct lock_wait *queue;  /* oldest first */
    struct lock_wait **queue_tail;
    size_t waiting;
    keylock_event_fn *listener; /* told of every grant and release (the AOF's transaction markers), NULL none */
    void *listener_arg;
};

static void lock_wait_free(struct lock_wait *w)
{
    mem_release(w->keys);
    mem_release(w->bytes);
    mem_release(w);
}

/* the dict key: db then the key bytes, on the stack when small */
static uint64_t entry_holder(const struct dict_entry *e)
{
    size_t len;
    const char *v = dict_entry_value(e, &len);
    uint64_t txid = 0;
    if (len == sizeof txid)
        memcpy(&txid, v, sizeof txid);
    return txid;
}

struct keylocks *keylock_create(void)
{
    struct keylocks *kl = mem_calloc(1, sizeof *kl);
    kl->held = dict_create();
    kl->queue_tail = &kl->queue;
    return kl;
}

void keylock_destroy(struct keylocks **kl)
{
    if (!kl || !*kl)
        return;
    dict_destroy(&(*kl)->held);
    while ((*kl)->queue) {
        struct lock_wait *w = (*kl)->queue;
        (*kl)->queue = w->next;
        lock_wait_free(w);
    }
    mem_release(*kl);
    *kl = NULL;
}

uint64_t keylock_generation(const struct keylocks *kl) { return kl->generation; }

/* what keylock_count reads: the keys held, and the whole keyspace as one more */
static void count_held(struct keylocks *kl)
{
    kl->head.held = dict_size(kl->held) + (kl->all_by != 0);
}

bool keylock_holds_other(struct keylocks *kl, uint64_t txid, int db, const char *key, size_t len)
{
    if (kl->all_by != 0 && kl->all_by != txid)
        return true;
    if (dict_size(kl->held) == 0)
        return false;
    struct dict_dbkey k;
    dict_dbkey_make(&k, db, key, len);
    struct dict_entry *e = dict_find(kl->held, k.p, k.len);
    dict_dbkey_done(&k);
    return e && entry_holder(e) != txid;
}

/* take keys[0..n) (KEYLOCK_ALL: every key) for txid if none is held by another */
static bool take(struct keylocks *kl, uint64_t txid, int db, int n, const struct keylock_key *keys)
{
    if (kl->all_by != 0 && kl->all_by != txid)
        return false;
    if (n == KEYLOCK_ALL) {
        if (dict_size(kl->held) != 0)
            return false;
        kl->all_by = txid;
        count_held(kl);
        return true;
    }
    for (int i = 0; i < n; i++)
        if (keylock_holds_other(kl, txid, db, keys[i].ptr, keys[i].len))
            return false;
    for (int i = 0; i < n; i++) {
        struct dict_dbkey k;
        dict_dbkey_make(&k, db, keys[i].ptr, keys[i].len);
        struct dict_entry *e = dict_add(kl->held, k.p, k.len, NULL);
        if (e) /* NULL: txid holds it already (a key named twice) */
            dict_entry_set_value(kl->held, e, &txid, sizeof txid);
        dict_dbkey_done(&k);
    }
    count_held(kl);
    return true;
}

void keylock_set_listener(struct keylocks *kl, keylock_event_fn *fn, void *arg)
{
    kl->listener = fn;
    kl->listener_arg = arg;
}

bool keylock_try(struct keylocks *kl, uint64_t txid, int db, int n, const struct keylock_key *keys)
{
    bool held = !kl->hold_new && kl->waiting == 0 && take(kl, txid, db, n, keys);
    if (held && kl->listener)
        kl->listener(kl->listener_arg, txid, true);
    return held;
}

void keylock_hold_new(struct keylocks *kl, bool hold) { kl->hold_new = hold; }

void keylock_release(struct keylocks *kl, uint64_t txid, int db, int n, const struct keylock_key *keys)
{
    if (kl->listener)
        kl->listener(kl->listener_arg, txid, false);
    if (n == KEYLOCK_ALL && kl->all_by == txid)
        kl->all_by = 0;
    for (int i = 0; i < n; i++) {
        struct dict_dbkey k;
        dict_dbkey_make(&k, db, keys[i].ptr, keys[i].len);
        struct dict_entry *e = dict_find(kl->held, k.p, k.len);
        if (e && entry_holder(e) == txid)
            dict_delete(kl->held, k.p, k.len);
        dict_dbkey_done(&k);
    }
    count_held(kl);
    kl->generation++;
    dict_compact(kl->held);
    for (struct lock_wait **p = &kl->queue; *p;) {
        struct lock_wait *w = *p;
        if (w->txid != txid) {
            p = &w->next;
            continue;
        }
        *p = w->next;
        if (kl->queue_tail == &w->next)
            kl->queue_tail = p;
        kl->waiting--;
        lock_wait_free(w);
    }
}

void keylock_enqueue(struct keylocks *kl, uint64_t txid, int home, int db, int n, const struct keylock_key *keys)
{
    struct lock_wait *w = mem_calloc(1, sizeof *w);
    w->txid = txid;
    w->home = home;
    w->db = db;
    w->n = n;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += keys[i].len;
    w->keys = mem_alloc((size_t)(n > 0 ? n : 1) * sizeof *w->keys);
    w->bytes = mem_alloc(total ? total : 1);
    size_t off = 0;
    for (int i = 0; i < n; off += keys[i].len, i++) {
        memcpy(w->bytes + off, keys[i].ptr, keys[i].len);
        w->keys[i].ptr = w->bytes + off;
        w->keys[i].len = keys[i].len;
    }
    *kl->queue_tail = w;
    kl->queue_tail = &w->next;
    kl->waiting++;
    kl->generation++; /* the shard looks at its queue again (txn_locks_changed) */
}

size_t keylock_waiting(const struct keylocks *kl) { return kl->waiting; }

void keylock_grant_waiting(struct keylocks *kl, keylock_granted_fn *granted, void *arg)
{
    while (kl->queue && take(kl, kl->queue->txid, kl->queue->db, kl->queue->n, kl->queue->keys)) {
        struct lock_wait *w = kl->queue; /* strictly in order: a request waits for every older one */
        kl->queue = w->next;
        if (!kl->queue)
            kl->queue_tail = &kl->queue;
        kl->waiting--;
        if (kl->listener)
            kl->listener(kl->listener_arg, w->txid, true);
        granted(arg, w->txid, w->home);
        lock_wait_free(w);
    }
}
