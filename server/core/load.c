/*
 * load: the RDB file read at start while the server serves (load.h).
 *
 * Design.  As Redis 7.0, the server listens and answers while the file
 * loads: every command without Redis's "loading" flag gets -LOADING (the
 * table's CMD_LOADING, of the subcommand for a container), INFO
 * persistence says loading:1 with the progress, and the log has Redis's
 * lines.  load_setup (main thread, before the shards exist) maps the file
 * and raises load_active; load_start (once every shard runs) starts the
 * loader thread, which parses the file once (rdb_file_load) and hands each
 * live key to its owner shard (the config's slot table, copied: the hash
 * the server routes by; shard 0, the one store, in the global-lock build) in batches
 * of LOAD_BATCH keys through that shard's own bounded ring of LOAD_RING
 * batches.  A full ring makes the loader wait (it sleeps: it is no shard);
 * a push to a sleeping shard rings its doorbell.  Each shard, on its loop
 * turns, takes LOAD_STEP batches at most and puts their keys in its own
 * store (so a store is only ever filled by its own thread, and clients are
 * answered between batches), and counts itself done at the batch marked
 * last.  When every shard is done the loader logs Redis's "Done loading" /
 * "DB loaded from disk" lines and lowers load_active.  The objects were
 * built on the loader thread: mimalloc (and libc) free them from any
 * thread, and a string is re-made in the key's entry by store_set anyway.
 *
 * A file that does not parse (corrupt, truncated, a bad checksum) stops
 * the process as Redis's does: its log lines say what and at which offset,
 * and it exits 1 at once, saving nothing (the file is only ever read); a
 * missing file is an empty dataset.
 *
 * Threading: load_setup, load_start, load_teardown on the main thread; the
 * loader thread owns the parse and the batches it fills; load_step and
 * load_queued on the shard whose ring it is (its single consumer); the
 * progress and flag readers anywhere (atomics, each written by one thread).
 */
#include "percore/load.h"

#include "shard_internal.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/log.h"
#include "percore/mem.h"
#include "percore/rdb.h"
#include "percore/resp.h"
#include "percore/ring.h"
#include "percore/slot.h"
#include "percore/store.h"
#include "percore/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOAD_BATCH 512 /* keys per batch */
#define LOAD_RING 64   /* batches queued per shard */
#define LOAD_STEP 8    /* batches a shard takes per loop turn */

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

/* keys for one shard, filled by the loader, emptied and freed by the shard */
struct load_batch {
    size_t len;
    bool last;          /* the loader's last batch for this shard */
    struct loaded keys[LOAD_BATCH];
};

_Alignas(128) atomic_bool load_active;

/* written by the loader (or the main thread before it starts), read by INFO */
static struct {
    _Alignas(128) atomic_llong loaded_bytes;
    atomic_llong total_bytes;
    atomic_llong start_time;
    atomic_llong rdb_used_mem;
    atomic_llong keys_loaded;
    atomic_llong keys_expired;
} progress;

static _Alignas(128) atomic_int shards_done; /* shards that took their last batch */
static atomic_bool loader_stop;              /* teardown: the loader gives up */

/* the loader's world, set up on the main thread before it starts */
static struct ring **rings;        /* per shard, its batches */
static struct load_batch **filling; /* per shard, the batch being filled (loader's) */
static int ring_count;
static const char *map;            /* the file, mapped */
static size_t map_len;
static char path[4096];
static struct rdb_limits limits;
static int databases;
static uint16_t slot_shard[SLOT_COUNT]; /* the config's slot -> shard table (the loader reads no config) */
static pthread_t loader;
static bool loader_started;
static long long start_ns;

/* free what a batch still holds (keys not put in a store) */
static void batch_destroy(struct load_batch *b)
{
    for (size_t i = 0; i < b->len; i++) {
        object_destroy(&b->keys[i].val);
        mem_release(b->keys[i].key);
    }
    mem_release(b);
}

static void wake_shard(int i)
{
    struct shard *s = shard_at(i);
    if (s && atomic_load(&s->asleep)) {
        uint64_t one = 1;
        ssize_t rc = write(s->doorbell_fd, &one, sizeof one);
        (void)rc;
    }
}

static void nap(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

/* loader: the shard's batch goes to its ring (waiting for room); false: asked to stop */
static bool batch_send(int shard, bool last)
{
    struct load_batch *b = filling[shard];
    filling[shard] = NULL;
    if (!b)
        b = mem_calloc(1, sizeof(*b));
    b->last = last;
    while (!ring_push(rings[shard], b)) {
        wake_shard(shard);
        if (atomic_load_explicit(&loader_stop, memory_order_relaxed)) {
            batch_destroy(b);
            return false;
        }
        nap(50 * 1000);
    }
    wake_shard(shard);
    return true;
}

/* what rdb_file_load's callback needs */
struct load_ctx {
    const struct rdb_file_info *info; /* filled as the file is read */
    bool announced;                   /* the AUX lines were logged */
    int64_t now;
    uint64_t expired;                 /* keys skipped as expired */
};

/* Redis's lines about the file, once its AUX fields are read */
static void announce(struct load_ctx *lc)
{
    if (lc->announced)
        return;
    lc->announced = true;
    const struct rdb_file_info *info = lc->info;
    if (info->redis_ver[0])
        log_notice("Loading RDB produced by version %s", info->redis_ver);
    if (info->ctime >= 0) {
        long long age = util_ms_time() / 1000 - info->ctime;
        log_notice("RDB age %lld seconds", age < 0 ? 0 : age);
    }
    if (info->used_mem >= 0) {
        log_notice("RDB memory usage when created %.2f Mb", (double)info->used_mem / (1024 * 1024));
        atomic_store_explicit(&progress.rdb_used_mem, info->used_mem, memory_order_relaxed);
    }
}

static int load_key(void *arg, struct rdb_file_key *k)
{
    struct load_ctx *lc = arg;
    announce(lc);
    atomic_store_explicit(&progress.loaded_bytes, (long long)k->offset, memory_order_relaxed);
    if (atomic_load_explicit(&loader_stop, memory_order_relaxed) || k->db < 0 || k->db >= databases) {
        object_destroy(&k->val);
        return -1;
    }
    if (k->expire >= 0 && k->expire <= lc->now) { /* Redis: a master skips keys already expired */
        object_destroy(&k->val);
        lc->expired++;
        return 0;
    }
    struct resp_arg key = {k->key, k->klen};
    int shard = SHARD_STORE_SHARED ? 0 : slot_shard[slot_of_key(key.ptr, key.len)]; /* dispatch_key_shard's */
    struct load_batch *b = filling[shard];
    if (!b)
        b = filling[shard] = mem_calloc(1, sizeof(*b));
    char *copy = mem_alloc(k->klen ? k->klen : 1);
    memcpy(copy, k->key, k->klen);
    b->keys[b->len++] = (struct loaded){k->db, copy, k->klen, k->val, k->expire, k->idle_s, k->freq};
    if (b->len == LOAD_BATCH && !batch_send(shard, false))
        return -1;
    return 0;
}

/* Redis's exit on a file it cannot load: nothing is saved, the file stays as it is */
static void load_fatal(const char *err)
{
    log_warn("Short read or OOM loading DB. Unrecoverable error, aborting now.");
    log_warn("Internal error in RDB reading offset 0, function at rdb.c:0 -> %s (file %s)", err, path);
    _exit(1);
}

static void *loader_main(void *arg)
{
    (void)arg;
    struct load_ctx lc = {0};
    struct rdb_file_info info;
    char err[256];
    lc.info = &info;
    lc.now = util_ms_time();
    int rc = rdb_file_load(map, map_len, &limits, load_key, &lc, &info, err, sizeof err);
    bool stopping = atomic_load(&loader_stop);
    if (rc < 0 && !stopping)
        load_fatal(err);
    announce(&lc);
    for (int i = 0; i < ring_count && !stopping; i++)
        stopping = !batch_send(i, true);
    while (!stopping && atomic_load(&shards_done) < ring_count) {
        nap(1000 * 1000);
        stopping = atomic_load(&loader_stop);
    }
    if (stopping)
        return NULL;
    atomic_store(&progress.loaded_bytes, (long long)map_len);
    if (info.functions_skipped)
        log_warn("The RDB file holds %u function libraries: percore has no functions, they were not loaded",
                 info.functions_skipped);
    atomic_store(&progress.keys_loaded, (long long)(info.keys - lc.expired));
    atomic_store(&progress.keys_expired, (long long)lc.expired);
    log_notice("Done loading RDB, keys loaded: %llu, keys expired: %llu.",
               (unsigned long long)(info.keys - lc.expired), (unsigned long long)lc.expired);
    log_notice("DB loaded from disk: %.3f seconds", (double)(util_mono_ns() - start_ns) / 1e9);
    atomic_store_explicit(&load_active, false, memory_order_release);
    return NULL;
}

int load_setup(int shards)
{
    const struct config *cfg = config_current();
    snprintf(path, sizeof path, "%s/%s", cfg->dir && cfg->dir[0] ? cfg->dir : ".", cfg->dbfilename);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT) {
            log_warn("Fatal error loading the DB: %s. Exiting.", strerror(errno));
            return -1;
        }
        return 0;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        log_warn("Fatal error loading the DB: %s. Exiting.", strerror(errno));
        close(fd);
        return -1;
    }
    map_len = (size_t)st.st_size;
    if (map_len > 0) {
        void *m = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            log_warn("Fatal error loading the DB: %s. Exiting.", strerror(errno));
            close(fd);
            return -1;
        }
        madvise(m, map_len, MADV_SEQUENTIAL);
        map = m;
    }
    close(fd);
    limits = config_rdb_limits(cfg);
    databases = cfg->databases;
    memcpy(slot_shard, cfg->slot_shard, sizeof(slot_shard));
    ring_count = shards;
    rings = mem_calloc((size_t)shards, sizeof(*rings));
    filling = mem_calloc((size_t)shards, sizeof(*filling));
    for (int i = 0; i < shards; i++)
        rings[i] = ring_create(LOAD_RING);
    start_ns = util_mono_ns();
    atomic_store(&progress.start_time, util_ms_time() / 1000);
    atomic_store(&progress.total_bytes, (long long)map_len);
    atomic_store(&progress.loaded_bytes, 0);
    atomic_store(&load_active, true);
    return 0;
}

void load_start(void)
{
    if (!rings || loader_started)
        return;
    if (pthread_create(&loader, NULL, loader_main, NULL) != 0) {
        log_warn("Fatal error loading the DB: cannot start the loader thread. Exiting.");
        _exit(1);
    }
    loader_started = true;
}

bool load_refuses(const struct command *cmd, int argc, const struct resp_arg *argv)
{
    const struct subcommand *first;
    if (argc >= 2 && command_subcommands_of(cmd->name, &first) > 0) {
        const struct subcommand *sub = command_subcommand_find(cmd->name, argv[1].ptr, argv[1].len);
        if (!sub)
            return false; /* Redis's lookup refuses it first: unknown subcommand */
        cmd = &sub->cmd;
    }
    return !(cmd->flags & CMD_LOADING);
}

/* one batch into the shard's store */
static void batch_insert(struct shard *self, struct load_batch *b)
{
    struct store *s = self->store;
    int64_t now = self->now;
    shard_store_lock();
    for (size_t i = 0; i < b->len; i++) {
        struct loaded *k = &b->keys[i];
        store_set(s, k->db, k->key, k->klen, k->val, 0); /* a key twice in the file: the last wins */
        k->val = NULL;
        if (k->expire >= 0)
            store_set_expire(s, k->db, k->key, k->klen, k->expire, now);
        if (k->idle_s >= 0)
            store_set_idle(s, k->db, k->key, k->klen, k->idle_s, now);
        if (k->freq >= 0)
            store_set_lfu_freq(s, k->db, k->key, k->klen, k->freq, now);
        if (k->db < 64)
            self->dirty_dbs |= 1ull << k->db;
    }
    shard_store_unlock();
    bool last = b->last;
    batch_destroy(b);
    if (last)
        atomic_fetch_add(&shards_done, 1);
}

bool load_step(struct shard *self)
{
    if (!rings || self->index >= ring_count)
        return false;
    struct ring *r = rings[self->index];
    for (int i = 0; i < LOAD_STEP; i++) {
        struct load_batch *b = ring_pop(r);
        if (!b)
            return false;
        batch_insert(self, b);
    }
    return !ring_empty(r);
}

bool load_queued(const struct shard *self)
{
    return rings && self->index < ring_count && !ring_empty(rings[self->index]);
}

void load_teardown(void)
{
    atomic_store(&loader_stop, true);
    if (loader_started)
        pthread_join(loader, NULL);
    loader_started = false;
    for (int i = 0; rings && i < ring_count; i++) {
        struct load_batch *b;
        while ((b = ring_pop(rings[i])) != NULL)
            batch_destroy(b);
        ring_destroy(&rings[i]);
        if (filling[i])
            batch_destroy(filling[i]);
    }
    mem_release(rings);
    mem_release(filling);
    rings = NULL;
    filling = NULL;
    ring_count = 0;
    if (map)
        munmap((void *)map, map_len);
    map = NULL;
    map_len = 0;
    atomic_store(&load_active, false);
}

long long load_keys_loaded(void) { return atomic_load_explicit(&progress.keys_loaded, memory_order_relaxed); }
long long load_keys_expired(void) { return atomic_load_explicit(&progress.keys_expired, memory_order_relaxed); }

void load_progress(struct load_progress *p)
{
    p->start_time = atomic_load_explicit(&progress.start_time, memory_order_relaxed);
    p->total_bytes = atomic_load_explicit(&progress.total_bytes, memory_order_relaxed);
    p->loaded_bytes = atomic_load_explicit(&progress.loaded_bytes, memory_order_relaxed);
    p->rdb_used_mem = atomic_load_explicit(&progress.rdb_used_mem, memory_order_relaxed);
}
