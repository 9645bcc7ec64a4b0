/*
 * watch: the keys of one shard that clients WATCH (watch.h).
 *
 * A dict from db + key bytes to a small array of watchers: the client's id,
 * whether the watch was touched, whether the key existed when watched.  A
 * watched key is a handful of clients at most in practice, so the arrays
 * are scanned.  The table is empty unless someone WATCHes, and callers test
 * watch_count() before anything else.
 */
#include "percore/watch.h"

#include "percore/dict.h"
#include "percore/mem.h"

#include <string.h>

struct watcher {
    uint64_t client;
    bool touched;
    bool existed;
};

struct watcher_list {
    int n;
    int cap;
    struct watcher *v;
};

struct watches {
    struct watches_head head; /* first: watch_count() reads it */
    struct dict *keys; /* db (int32) + key -> struct watcher_list * */
};

static struct watcher_list *entry_list(const struct dict_entry *e) { return dict_entry_pointer(e); }

struct watches *watch_create(void)
{
    struct watches *w = mem_calloc(1, sizeof *w);
    w->keys = dict_create();
    return w;
}

static void list_free(struct watcher_list *l)
{
    mem_release(l->v);
    mem_release(l);
}

void watch_destroy(struct watches **w)
{
    if (!w || !*w)
        return;
    struct dict_iter it;
    dict_iter_init(&it, (*w)->keys);
    for (struct dict_entry *e; (e = dict_iter_next(&it));)
        list_free(entry_list(e));
    dict_destroy(&(*w)->keys);
    mem_release(*w);
    *w = NULL;
}


void watch_add(struct watches *w, uint64_t client, int db, const char *key, size_t len, bool existed)
{
    struct dict_dbkey k;
    dict_dbkey_make(&k, db, key, len);
    struct dict_entry *existing = NULL;
    struct dict_entry *e = dict_add(w->keys, k.p, k.len, &existing);
    dict_dbkey_done(&k);
    struct watcher_list *l;
    if (e) {
        l = mem_calloc(1, sizeof *l);
        dict_entry_set_pointer(w->keys, e, l);
    } else {
        l = entry_list(existing);
        for (int i = 0; i < l->n; i++)
            if (l->v[i].client == client)
                return; /* watched already: WATCH again keeps what it saw (Redis) */
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 2;
        l->v = mem_realloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    l->v[l->n++] = (struct watcher){.client = client, .touched = false, .existed = existed};
    w->head.keys = dict_size(w->keys);
}

void watch_remove(struct watches *w, uint64_t client, int db, const char *key, size_t len)
{
    struct dict_dbkey k;
    dict_dbkey_make(&k, db, key, len);
    struct dict_entry *e = dict_find(w->keys, k.p, k.len);
    if (e) {
        struct watcher_list *l = entry_list(e);
        for (int i = 0; i < l->n; i++) {
            if (l->v[i].client == client) {
                l->v[i] = l->v[--l->n];
                break;
            }
        }
        if (l->n == 0) {
            list_free(l);
            dict_delete(w->keys, k.p, k.len);
            w->head.keys = dict_size(w->keys);
        }
    }
    dict_dbkey_done(&k);
}

void watch_touch(struct watches *w, int db, const char *key, size_t len)
{
    struct dict_dbkey k;
    dict_dbkey_make(&k, db, key, len);
    struct dict_entry *e = dict_find(w->keys, k.p, k.len);
    dict_dbkey_done(&k);
    if (!e)
        return;
    struct watcher_list *l = entry_list(e);
    for (int i = 0; i < l->n; i++)
        l->v[i].touched = true;
}

void watch_touch_existing(struct watches *w, int db, watch_exists_fn *exists, void *arg)
{
    struct dict_iter it;
    dict_iter_init(&it, w->keys);
    for (struct dict_entry *e; (e = dict_iter_next(&it));) {
        const char *key;
        size_t len;
        size_t klen;
        const char *k = dict_entry_key(e, &klen);
        int kdb = dict_dbkey_split(k, klen, &key, &len);
        if ((db < 0 || kdb == db) && exists(arg, kdb, key, len)) {
            struct watcher_list *l = entry_list(e);
            for (int i = 0; i < l->n; i++)
                l->v[i].touched = true;
        }
    }
}

bool watch_touched(struct watches *w, uint64_t client, int db, const char *key, size_t len, bool exists_now)
{
    struct dict_dbkey k;
    dict_dbkey_make(&k, db, key, len);
    struct dict_entry *e = dict_find(w->keys, k.p, k.len);
    dict_dbkey_done(&k);
    struct watcher_list *l = e ? entry_list(e) : NULL;
    for (int i = 0; l && i < l->n; i++)
        if (l->v[i].client == client)
            return l->v[i].touched || (l->v[i].existed && !exists_now);
    return false;
}
