/*
 * load: the RDB file read at start (load.h).
 *
 * Design.  The main thread reads dir/dbfilename whole and parses it once
 * (rdb_file_load) before any shard thread exists; every key still alive
 * goes to its owner's list (dispatch_key_shard, the same hash the server
 * routes by; the one shared store in the global-lock build).  Each shard
 * thread, right after it creates its store and before the start barrier
 * lets anyone be served, moves its list into its store (load_into), so a
 * store is only ever filled by its own thread.  The objects themselves were
 * built on the main thread: mimalloc (and libc) free them from any thread,
 * and a string is re-made in the key's entry by store_set anyway.
 *
 * A file that does not parse stops the start with Redis's log line; a
 * missing file is an empty dataset, as in Redis.
 *
 * Threading: load_setup and load_teardown on the main thread; load_into
 * on shard `index` only, each touching its own list (written before the
 * threads were created, so thread creation orders it).
 */
#include "percore/load.h"

#include "dispatch.h"
#include "shard_internal.h"

#include "percore/config.h"
#include "percore/log.h"
#include "percore/mem.h"
#include "percore/rdb.h"
#include "percore/store.h"
#include "percore/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* a key read from the file, waiting for its shard */
struct loaded {
    int db;
    char *key;          /* its bytes (owned) */
    size_t klen;
    struct object *val; /* owned until the shard's store takes it */
    int64_t expire;     /* ms unix time, -1 none */
    long long idle_s;   /* -1 none */
    int freq;           /* -1 none */
};

/* one shard's keys */
struct load_list {
    struct loaded *v;
    size_t len;
    size_t cap;
};

static struct load_list *lists; /* per shard, NULL when nothing was loaded */
static int list_count;
static long long keys_loaded, keys_expired; /* written before the shards start */

/* what rdb_file_load's callback needs */
struct load_ctx {
    const struct config *cfg;
    int64_t now;
    uint64_t expired;   /* keys skipped as expired */
};

static int load_key(void *arg, struct rdb_file_key *k)
{
    struct load_ctx *lc = arg;
    if (k->db < 0 || k->db >= lc->cfg->databases) {
        object_destroy(&k->val);
        return -1;
    }
    if (k->expire >= 0 && k->expire <= lc->now) { /* Redis: a master skips keys already expired */
        object_destroy(&k->val);
        lc->expired++;
        return 0;
    }
    struct resp_arg key = {k->key, k->klen};
    int shard = SHARD_STORE_SHARED ? 0 : dispatch_key_shard(lc->cfg, &key);
    struct load_list *l = &lists[shard];
    if (l->len == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = mem_realloc(l->v, l->cap * sizeof(*l->v));
    }
    char *copy = mem_alloc(k->klen ? k->klen : 1);
    memcpy(copy, k->key, k->klen);
    l->v[l->len++] = (struct loaded){k->db, copy, k->klen, k->val, k->expire, k->idle_s, k->freq};
    return 0;
}

static void list_release(struct load_list *l)
{
    for (size_t i = 0; i < l->len; i++) {
        object_destroy(&l->v[i].val);
        mem_release(l->v[i].key);
    }
    mem_release(l->v);
    *l = (struct load_list){0};
}

int load_setup(int shards)
{
    const struct config *cfg = config_current();
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", cfg->dir && cfg->dir[0] ? cfg->dir : ".", cfg->dbfilename);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno != ENOENT) {
            log_warn("Fatal error loading the DB: %s. Exiting.", strerror(errno));
            return -1;
        }
        return 0;
    }
    long long start = util_mono_ns();
    struct stat st;
    char *buf = NULL;
    size_t n = 0;
    if (fstat(fileno(f), &st) == 0 && st.st_size > 0) {
        n = (size_t)st.st_size;
        buf = mem_alloc(n);
        if (fread(buf, 1, n, f) != n) {
            log_warn("Fatal error loading the DB: short read of %s. Exiting.", path);
            mem_release(buf);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    list_count = shards;
    lists = mem_calloc((size_t)shards, sizeof(*lists));
    struct rdb_limits lim = config_rdb_limits(cfg);
    struct load_ctx lc = {cfg, util_ms_time(), 0};
    struct rdb_file_info info;
    char err[256];
    int rc = rdb_file_load(buf, n, &lim, load_key, &lc, &info, err, sizeof err);
    mem_release(buf);
    if (rc < 0) {
        log_warn("Short read or OOM loading DB. Unrecoverable error, aborting now.");
        log_warn("Internal error in RDB reading offset 0, function at rdb.c:0 -> %s (file %s)", err, path);
        load_teardown();
        return -1;
    }
    if (info.functions_skipped)
        log_warn("The RDB file holds %u function libraries: percore has no functions, they were not loaded",
                 info.functions_skipped);
    keys_loaded = (long long)(info.keys - lc.expired);
    keys_expired = (long long)lc.expired;
    log_notice("Done loading RDB, keys loaded: %llu, keys expired: %llu.",
               (unsigned long long)(info.keys - lc.expired), (unsigned long long)lc.expired);
    log_notice("DB loaded from disk: %.3f seconds", (double)(util_mono_ns() - start) / 1e9);
    return 0;
}

void load_into(int index, struct store *s, int64_t now)
{
    if (!lists || index >= list_count)
        return;
    struct load_list *l = &lists[index];
    for (size_t i = 0; i < l->len; i++) {
        struct loaded *k = &l->v[i];
        store_set(s, k->db, k->key, k->klen, k->val, 0); /* a key twice in the file: the last wins */
        k->val = NULL;
        if (k->expire >= 0)
            store_set_expire(s, k->db, k->key, k->klen, k->expire, now);
        if (k->idle_s >= 0)
            store_set_idle(s, k->db, k->key, k->klen, k->idle_s, now);
        if (k->freq >= 0)
            store_set_lfu_freq(s, k->db, k->key, k->klen, k->freq, now);
    }
    list_release(l);
}

void load_teardown(void)
{
    for (int i = 0; lists && i < list_count; i++)
        list_release(&lists[i]);
    mem_release(lists);
    lists = NULL;
    list_count = 0;
}

long long load_keys_loaded(void) { return keys_loaded; }
long long load_keys_expired(void) { return keys_expired; }
