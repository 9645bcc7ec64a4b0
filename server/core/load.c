/*
 * load: the dataset read at start while the server serves (load.h).
 *
 * Design.  As Redis 7.0, the server listens and answers while the data
 * loads: every command without Redis's "loading" flag gets -LOADING (the
 * table's CMD_LOADING, of the subcommand for a container), INFO
 * persistence says loading:1 with the progress, and the log has Redis's
 * lines.  load_setup (main thread, before the shards exist) finds what to
 * load and raises load_active; load_start (once every shard runs) starts
 * the loader thread, which parses it once and hands each live key to its
 * owner shard (the config's slot table, copied: the hash the server routes
 * by; shard 0, the one store, in the global-lock build) in batches of
 * LOAD_BATCH keys through that shard's own bounded ring of LOAD_RING
 * batches.  A full ring makes the loader wait (it sleeps: it is no shard);
 * a push to a sleeping shard rings its doorbell.  Each shard, on its loop
 * turns, takes LOAD_STEP batches at most and puts their keys in its own
 * store (so a store is only ever filled by its own thread, and clients are
 * answered between batches).  A marker batch to every shard (shards_sync)
 * is counted by each once all before it is in.  After the last one, a
 * record marker turns each shard's AOF recording on (appendonly yes), on
 * its own thread, and only once every shard has, the loader logs Redis's
 * "Done loading" / "DB loaded from ..." lines and lowers load_active: no
 * shard records before the last replayed command has run everywhere (it
 * would be logged again), and no client's transaction, let in once the
 * flag is down, meets a shard that does not record yet (its lock markers
 * in one stream and not another: the writer would wait for it forever).  The objects were built on the loader thread:
 * mimalloc (and libc) free them from any thread, and a string is re-made in
 * the key's entry by store_set anyway.
 *
 * The RDB file (appendonly no): mapped and parsed by rdb_file_load.  A file
 * that does not parse (corrupt, truncated, a bad checksum) stops the
 * process as Redis's does: its log lines say what and at which offset, and
 * it exits 1 at once, saving nothing (the file is only ever read); a
 * missing file is an empty dataset.  Its function libraries are registered
 * as the loader meets them (function_load_library), before any client runs.
 *
 * The AOF (appendonly yes; Redis's loadAppendOnlyFiles): the manifest in
 * appenddirname (an old dir/appendfilename is moved in first, as Redis
 * upgrades it), then the base and incr files in order.  An RDB part (a
 * base .rdb, an old file's preamble) goes as keys, then a marker, so every
 * key is in before any command runs.  Commands are checked as Redis reads
 * them (annotations, bad format, a short read, unknown commands) and go,
 * re-encoded, in 64 KB chunks to one pseudo-client of shard 0 (engine.h: a
 * connection without a socket, exempt from -LOADING) that runs them through
 * the real dispatch: SELECT is its own, a cross-shard command takes the
 * handoff, MULTI/EXEC is one transaction.  Shard 0 gives it the next chunk
 * (or counts a marker) only once it has run all it was given; the last
 * marker closes it, dropping a MULTI the file left open.  A short read
 * truncates the file at its last whole command and goes on with
 * aof-load-truncated yes (the last file only), else stops the start.
 *
 * Threading: load_setup, load_start, load_teardown on the main thread; the
 * loader thread owns the parse and the batches it fills; load_step and
 * load_queued on the shard whose ring it is (its single consumer); the
 * progress and flag readers anywhere (atomics, each written by one thread).
 */
#include "percore/load.h"

#include "shard_internal.h"
#include "conn_internal.h"

#include "percore/aof_manifest.h"
#include "percore/command.h"
#include "percore/engine.h"
#include "percore/config.h"
#include "percore/function.h"
#include "percore/log.h"
#include "percore/mem.h"
#include "percore/rdb.h"
#include "percore/replica.h"
#include "percore/resp.h"
#include "percore/ring.h"
#include "percore/script.h"
#include "percore/slot.h"
#include "percore/store.h"
#include "percore/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <urcu-qsbr.h>
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

/* keys for one shard, or AOF commands for shard 0's pseudo-client, filled by the loader, emptied and
 * freed by the shard */
enum load_mark {
    MARK_NONE,   /* keys or commands */
    MARK_SYNC,   /* the shard counts itself in shards_done once all before it is in */
    MARK_LAST,   /* the same, the last: the AOF pseudo-client closes */
    MARK_RECORD, /* the load is over everywhere: the shard begins recording its writes (appendonly yes) */
};

struct load_batch {
    size_t len;
    enum load_mark mark;
    char *cmds;         /* AOF commands (RESP, whole), NULL none */
    size_t cmds_len;
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
/* the AOF's files in load order (aof_count 0: the RDB file is loaded) */
struct aof_part {
    char path[8192];
    char name[1024];
    bool old_style;   /* dir/appendfilename itself, an AOF of before Redis 7 */
};
static struct aof_part *aof_files;
static int aof_count;
static bool aof_load_truncated;
static bool aof_has_base;  /* aof_files[0] is the manifest's base file */
/* shard 0's own (its thread only): the pseudo-client that runs the AOF's commands, and a batch that
 * waits for it */
static struct conn *aof_client;
static struct load_batch *aof_held;
static bool loader_wanted;  /* the start has something to load */
static bool loader_started;
static long long start_ns;

/* free what a batch still holds (keys not put in a store) */
static void batch_destroy(struct load_batch *b)
{
    for (size_t i = 0; i < b->len; i++) {
        object_destroy(&b->keys[i].val);
        mem_release(b->keys[i].key);
    }
    mem_release(b->cmds);
    mem_release(b);
}

static void wake_shard(int i)
{
    struct shard *s = shard_at(i);
    atomic_thread_fence(memory_order_seq_cst); /* the push before the look at asleep (the shard: the reverse) */
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
static bool batch_push(int shard, struct load_batch *b)
{
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

/* loader: the batch being filled for shard goes out (with a mark: as a marker) */
static bool batch_send(int shard, enum load_mark mark)
{
    struct load_batch *b = filling[shard];
    filling[shard] = NULL;
    if (!b)
        b = mem_calloc(1, sizeof(*b));
    b->mark = mark;
    return batch_push(shard, b);
}

/* loader: every shard has taken the marker, so put in all it was sent before it (the AOF pseudo-client has
 * run all its commands); false: asked to stop */
static bool shards_sync(enum load_mark mark)
{
    atomic_store(&shards_done, 0);
    for (int i = 0; i < ring_count; i++)
        if (!batch_send(i, mark))
            return false;
    while (atomic_load(&shards_done) < ring_count) {
        if (atomic_load(&loader_stop))
            return false;
        nap(1000 * 1000);
    }
    return true;
}

/* what rdb_file_load's callback needs */
struct load_ctx {
    const struct rdb_file_info *info; /* filled as the file is read */
    bool announced;                   /* the AUX lines were logged */
    bool keep_expired;                /* an AOF's RDB part: Redis loads keys already expired too */
    int64_t now;
    uint64_t expired;                 /* keys skipped as expired */
    long long base_offset;            /* progress: bytes of the files before this one */
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
    atomic_store_explicit(&progress.loaded_bytes, lc->base_offset + (long long)k->offset, memory_order_relaxed);
    if (atomic_load_explicit(&loader_stop, memory_order_relaxed) || k->db < 0 || k->db >= databases) {
        object_destroy(&k->val);
        return -1;
    }
    if (!lc->keep_expired && k->expire >= 0 && k->expire <= lc->now) { /* a master skips keys already expired */
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
    if (b->len == LOAD_BATCH && !batch_send(shard, MARK_NONE))
        return -1;
    return 0;
}

/* a function library of the file: registered now (the loading thread -- the loader, or a replica's link
 * thread -- is a registered RCU thread, offline but meanwhile; the Lua state its code ran in goes with
 * the call) */
static int load_function(void *arg, const char *code, size_t len)
{
    (void)arg;
    rcu_thread_online();
    int rc = function_load_library(code, len);
    script_thread_teardown();
    rcu_thread_offline();
    return rc;
}

/* Redis's exit on a file it cannot load: nothing is saved, the file stays as it is */
static void load_fatal(const char *err)
{
    log_warn("Short read or OOM loading DB. Unrecoverable error, aborting now.");
    log_warn("Internal error in RDB reading offset 0, function at rdb.c:0 -> %s (file %s)", err, path);
    _exit(1);
}

/* ---- the AOF (appendonly yes): Redis 7.0's loadAppendOnlyFiles and loadSingleAppendOnlyFile ---- */

enum { AOF_OK, AOF_EMPTY, AOF_TRUNCATED, AOF_FAILED };

#define AOF_LINE_MAX 1024             /* Redis AOF_ANNOTATION_LINE_MAX_LEN: fgets' buffer */
#define AOF_CHUNK (64 * 1024)         /* command bytes per batch to the pseudo-client */

static bool file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* Redis aofUpgradePrepare: dir/appendfilename (an AOF of before 7.0) becomes the base file of a new
 * manifest in the AOF folder; 0 ok, -1 (logged) */
static int aof_upgrade(const char *adir, const char *name, const char *old, struct aof_manifest *am)
{
    if (mkdir(adir, 0755) < 0 && errno != EEXIST) {
        log_warn("Can't open or create append-only dir %s: %s", adir, strerror(errno));
        return -1;
    }
    aof_manifest_deinit(am);
    am->base = mem_alloc(sizeof(*am->base));
    *am->base = (struct aof_file){mem_strndup(name, strlen(name)), 1, AOF_FILE_BASE};
    am->base_seq = 1;
    size_t len;
    char *text = aof_manifest_format(am, &len);
    char *mname = aof_manifest_file_name(name);
    char tmp[8192], final[8192], moved[8192];
    snprintf(tmp, sizeof tmp, "%s/temp-%s", adir, mname);
    snprintf(final, sizeof final, "%s/%s", adir, mname);
    snprintf(moved, sizeof moved, "%s/%s", adir, name);
    int fd = open(tmp, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
    bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    if (!ok || rename(tmp, final) != 0) {
        log_warn("Error trying to write the AOF manifest file %s: %s", mname, strerror(errno));
        ok = false;
    }
    mem_release(text);
    mem_release(mname);
    if (!ok)
        return -1;
    if (rename(old, moved) == -1) {
        log_warn("Error trying to move the old AOF file %s into dir %s: %s", name, adir, strerror(errno));
        return -1;
    }
    log_notice("Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).", name, adir);
    return 0;
}

/* the manifest (Redis aofLoadManifestFromDisk), logged as Redis on a bad one; 0 ok, -1 */
static int aof_read_manifest(const char *mpath, struct aof_manifest *am)
{
    FILE *f = fopen(mpath, "r");
    if (!f) {
        log_warn("Fatal error: can't open the AOF manifest file %s for reading: %s", mpath, strerror(errno));
        return -1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + 4096 > cap)
            text = mem_realloc(text, cap = (len + 4096) * 2);
        got = fread(text + len, 1, 4096, f);
        len += got;
    } while (got > 0);
    fclose(f);
    struct aof_manifest_error err;
    int rc = aof_manifest_parse(am, text, len, &err);
    mem_release(text);
    if (rc == 0)
        return 0;
    log_warn("\n*** FATAL AOF MANIFEST FILE ERROR ***\n");
    if (err.line) {
        log_warn("Reading the manifest file, at line %d\n", err.line);
        log_warn(">>> '%s'\n", err.text);
    }
    log_warn("%s\n", err.msg);
    return -1;
}

/* main thread, appendonly yes: the files to load, in order (Redis loadAppendOnlyFiles up to
 * startLoading); 1 files to load (*total their bytes), 0 none, -1 refused (logged) */
static int aof_plan(const struct config *cfg, long long *total)
{
    const char *dir = cfg->dir && cfg->dir[0] ? cfg->dir : ".";
    char adir[4096], mpath[8192], old[8192];
    char *mname = aof_manifest_file_name(cfg->appendfilename);
    snprintf(adir, sizeof adir, "%s/%s", dir, cfg->appenddirname);
    snprintf(mpath, sizeof mpath, "%s/%s", adir, mname);
    snprintf(old, sizeof old, "%s/%s", dir, cfg->appendfilename);
    mem_release(mname);
    struct aof_manifest am;
    aof_manifest_init(&am);
    struct stat st;
    bool dir_exists = stat(adir, &st) == 0 && S_ISDIR(st.st_mode);
    if (dir_exists && file_exists(mpath) && aof_read_manifest(mpath, &am) < 0)
        return -1;
    char inside[8192];
    snprintf(inside, sizeof inside, "%s/%s", adir, cfg->appendfilename);
    if (file_exists(old) &&
        (!dir_exists || (!am.base && !am.incr_len) ||
         (am.base && !am.incr_len && strcmp(am.base->name, cfg->appendfilename) == 0 && !file_exists(inside))) &&
        aof_upgrade(adir, cfg->appendfilename, old, &am) < 0) {
        aof_manifest_deinit(&am);
        return -1;
    }
    int n = (am.base ? 1 : 0) + (int)am.incr_len;
    if (n == 0) {
        aof_manifest_deinit(&am);
        return 0;
    }
    aof_files = mem_calloc((size_t)n, sizeof(*aof_files));
    *total = 0;
    for (int i = 0; i < n; i++) {
        const struct aof_file *f = am.base ? (i == 0 ? am.base : &am.incr[i - 1]) : &am.incr[i];
        struct aof_part *part = &aof_files[i];
        snprintf(part->name, sizeof part->name, "%s", f->name);
        snprintf(part->path, sizeof part->path, "%s/%s", adir, f->name);
        part->old_style = strcmp(f->name, cfg->appendfilename) == 0;
        if (stat(part->path, &st) == -1) {
            log_warn("Unable to obtain the AOF file %s length. stat: %s", f->name, strerror(errno));
            aof_manifest_deinit(&am);
            return -1;
        }
        *total += st.st_size;
    }
    aof_count = n;
    aof_has_base = am.base != NULL;
    aof_load_truncated = cfg->aof_load_truncated;
    aof_manifest_deinit(&am);
    return *total > 0 ? 1 : 0;
}

/* fgets(buf, AOF_LINE_MAX) over p[*pos..n): through a '\n', at most AOF_LINE_MAX - 1 bytes; false at
 * the end */
static bool aof_line(const char *p, size_t n, size_t *pos, char *buf)
{
    if (*pos >= n)
        return false;
    size_t take = n - *pos < AOF_LINE_MAX - 1 ? n - *pos : AOF_LINE_MAX - 1;
    const char *nl = memchr(p + *pos, '\n', take);
    if (nl)
        take = (size_t)(nl - (p + *pos)) + 1;
    memcpy(buf, p + *pos, take);
    buf[take] = '\0';
    *pos += take;
    return true;
}

/* the commands parsed, bound for shard 0's pseudo-client */
struct aof_chunk {
    char *p;
    size_t len, cap;
};

static void chunk_add(struct aof_chunk *c, const char *s, size_t n)
{
    if (c->len + n > c->cap)
        c->p = mem_realloc(c->p, c->cap = (c->len + n) * 2 + 256);
    memcpy(c->p + c->len, s, n);
    c->len += n;
}

static void chunk_add_header(struct aof_chunk *c, char kind, size_t n)
{
    char h[32];
    int hl = snprintf(h, sizeof h, "%c%zu\r\n", kind, n);
    chunk_add(c, h, (size_t)hl);
}

/* the commands parsed so far go to the pseudo-client; false: asked to stop */
static bool chunk_send(struct aof_chunk *c)
{
    if (!c->len)
        return true;
    struct load_batch *b = mem_calloc(1, sizeof(*b));
    b->cmds = c->p;
    b->cmds_len = c->len;
    *c = (struct aof_chunk){0};
    return batch_push(0, b);
}

/* the RDB part of an AOF file (a base, or an old AOF's preamble): its keys to their shards; the offset
 * after it, or -1 (logged) */
static long long aof_rdb_part(const struct aof_part *f, const char *p, size_t n, long long before)
{
    log_notice(f->old_style ? "Reading RDB preamble from AOF file..." : "Reading RDB base file on AOF loading...");
    struct load_ctx lc = {0};
    struct rdb_file_info info;
    char err[256];
    lc.info = &info;
    lc.keep_expired = true;
    lc.now = util_ms_time();
    lc.base_offset = before;
    if (rdb_file_load(p, n, &limits, load_key, load_function, &lc, &info, err, sizeof err) < 0) {
        if (atomic_load(&loader_stop))
            return -1;
        log_warn(f->old_style ? "Error reading the RDB preamble of the AOF file %s, AOF loading aborted"
                              : "Error reading the RDB base file %s, AOF loading aborted",
                 f->name);
        log_warn("Internal error in RDB reading offset 0, function at rdb.c:0 -> %s", err);
        return -1;
    }
    announce(&lc);
    atomic_fetch_add(&progress.keys_loaded, (long long)info.keys);
    log_notice("Done loading RDB, keys loaded: %llu, keys expired: 0.", (unsigned long long)info.keys);
    if (f->old_style)
        log_notice("Reading the remaining AOF tail...");
    return (long long)info.used;
}

/* one AOF file, its commands through shard 0's pseudo-client (Redis loadSingleAppendOnlyFile) */
static int aof_load_file(const struct aof_part *f, long long before)
{
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        log_warn("Fatal error: can't open the append log file %s for reading: %s", f->name, strerror(errno));
        return AOF_FAILED;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size == 0) {
        close(fd);
        return AOF_EMPTY;
    }
    size_t n = (size_t)st.st_size;
    const char *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        log_warn("Unrecoverable error reading the append only file %s: %s", f->name, strerror(errno));
        return AOF_FAILED;
    }
    madvise((void *)p, n, MADV_SEQUENTIAL);
    int ret = AOF_OK;
    size_t pos = 0, valid_up_to = 0, valid_before_multi = 0;
    bool in_multi = false;
    struct aof_chunk chunk = {0};
    struct resp_arg *argv = NULL;
    size_t argv_cap = 0;
    char buf[AOF_LINE_MAX];
    if (n >= 5 && memcmp(p, "REDIS", 5) == 0) {
        long long used = aof_rdb_part(f, p, n, before);
        if (used < 0 || !shards_sync(MARK_SYNC)) { /* its keys are in before any command runs */
            ret = AOF_FAILED;
            goto done;
        }
        pos = (size_t)used;
    }
    for (unsigned long loops = 0;; loops++) {
        if (!(loops % 1024)) {
            atomic_store_explicit(&progress.loaded_bytes, before + (long long)pos, memory_order_relaxed);
            if (atomic_load(&loader_stop)) {
                ret = AOF_FAILED;
                goto done;
            }
        }
        if (!aof_line(p, n, &pos, buf))
            break;
        if (buf[0] == '#')
            continue; /* an annotation */
        if (buf[0] != '*')
            goto fmterr;
        if (buf[1] == '\0')
            goto uxeof;
        int argc = atoi(buf + 1);
        if (argc < 1)
            goto fmterr;
        for (int j = 0; j < argc; j++) {
            if (!aof_line(p, n, &pos, buf))
                goto uxeof;
            if (buf[0] != '$')
                goto fmterr;
            unsigned long len = (unsigned long)strtol(buf + 1, NULL, 10);
            if (len > n - pos || n - pos - len < 2)
                goto uxeof; /* the bytes, or the CRLF after them, are not all there */
            if ((size_t)j == argv_cap)
                argv = mem_realloc(argv, (argv_cap = argv_cap ? argv_cap * 2 : 16) * sizeof(*argv));
            argv[j] = (struct resp_arg){p + pos, len};
            pos += len + 2;
        }
        const struct command *cmd = command_lookup(argv[0].ptr, argv[0].len);
        if (!cmd) {
            log_warn("Unknown command '%.*s' reading the append only file %s", (int)strnlen(argv[0].ptr, argv[0].len),
                     argv[0].ptr, f->name);
            ret = AOF_FAILED;
            goto done;
        }
        if (cmd->flags & CMD_OPENS_TXN) {
            valid_before_multi = valid_up_to;
            in_multi = true;
        } else if (cmd->flags & CMD_RUNS_QUEUE) {
            in_multi = false;
        }
        chunk_add_header(&chunk, '*', (size_t)argc);
        for (int j = 0; j < argc; j++) {
            chunk_add_header(&chunk, '$', argv[j].len);
            chunk_add(&chunk, argv[j].ptr, argv[j].len);
            chunk_add(&chunk, "\r\n", 2);
        }
        if (chunk.len >= AOF_CHUNK && !chunk_send(&chunk)) {
            ret = AOF_FAILED;
            goto done;
        }
        if (aof_load_truncated)
            valid_up_to = pos;
    }
    if (in_multi) { /* a MULTI the file ends in: dropped, as a short read */
        log_warn("Revert incomplete MULTI/EXEC transaction in AOF file %s", f->name);
        valid_up_to = valid_before_multi;
        goto uxeof;
    }
    goto done;

uxeof: /* the file ends inside a command */
    if (aof_load_truncated) {
        log_warn("!!! Warning: short read while loading the AOF file %s!!!", f->name);
        log_warn("!!! Truncating the AOF %s at offset %llu !!!", f->name, (unsigned long long)valid_up_to);
        if (truncate(f->path, (off_t)valid_up_to) == -1) {
            log_warn("Error truncating the AOF file %s: %s", f->name, strerror(errno));
        } else {
            log_warn("AOF %s loaded anyway because aof-load-truncated is enabled", f->name);
            ret = AOF_TRUNCATED;
            goto done;
        }
    }
    log_warn("Unexpected end of file reading the append only file %s. You can: 1) Make a backup of your AOF "
             "file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the "
             "'aof-load-truncated' configuration option to yes and restart the server.",
             f->name);
    ret = AOF_FAILED;
    goto done;

fmterr:
    log_warn("Bad file format reading the append only file %s: make a backup of your AOF file, then use "
             "./redis-check-aof --fix <filename.manifest>",
             f->name);
    ret = AOF_FAILED;

done:
    if (ret != AOF_FAILED && !chunk_send(&chunk))
        ret = AOF_FAILED;
    mem_release(chunk.p);
    mem_release(argv);
    munmap((void *)p, n);
    return ret;
}

/* the loader thread, appendonly yes: every file in order, each whole before the next (Redis
 * loadAppendOnlyFiles); a file it cannot load ends the process (exit 1) */
static void aof_load_all(void)
{
    long long before = 0;
    for (int i = 0; i < aof_count; i++) {
        const struct aof_part *f = &aof_files[i];
        bool last_file = i == aof_count - 1;
        long long start = util_mono_ns();
        int ret = aof_load_file(f, before);
        if (atomic_load(&loader_stop))
            return;
        if (ret != AOF_FAILED && !shards_sync(last_file ? MARK_LAST : MARK_SYNC))
            return;
        if (ret == AOF_OK || (ret == AOF_TRUNCATED && last_file))
            log_notice("DB loaded from %s file %s: %.3f seconds", i == 0 && aof_has_base ? "base" : "incr", f->name,
                       (double)(util_mono_ns() - start) / 1e9);
        if (ret == AOF_TRUNCATED && !last_file) {
            log_warn("Fatal error: the truncated file is not the last file");
            ret = AOF_FAILED;
        }
        if (ret == AOF_FAILED)
            _exit(1);
        struct stat st;
        before += stat(f->path, &st) == 0 ? st.st_size : 0;
    }
    if (!shards_sync(MARK_RECORD))
        return;
    atomic_store(&progress.loaded_bytes, atomic_load(&progress.total_bytes));
    log_notice("DB loaded from append only file: %.3f seconds", (double)(util_mono_ns() - start_ns) / 1e9);
    atomic_store_explicit(&load_active, false, memory_order_release);
}

static void loader_run(void)
{
    if (aof_count) {
        aof_load_all();
        return;
    }
    struct load_ctx lc = {0};
    struct rdb_file_info info;
    char err[256];
    lc.info = &info;
    lc.now = util_ms_time();
    int rc = rdb_file_load(map, map_len, &limits, load_key, load_function, &lc, &info, err, sizeof err);
    bool stopping = atomic_load(&loader_stop);
    if (rc < 0 && !stopping)
        load_fatal(err);
    announce(&lc);
    if (stopping || !shards_sync(MARK_LAST) || !shards_sync(MARK_RECORD))
        return;
    atomic_store(&progress.loaded_bytes, (long long)map_len);
    atomic_store(&progress.keys_loaded, (long long)(info.keys - lc.expired));
    atomic_store(&progress.keys_expired, (long long)lc.expired);
    log_notice("Done loading RDB, keys loaded: %llu, keys expired: %llu.",
               (unsigned long long)(info.keys - lc.expired), (unsigned long long)lc.expired);
    log_notice("DB loaded from disk: %.3f seconds", (double)(util_mono_ns() - start_ns) / 1e9);
    atomic_store_explicit(&load_active, false, memory_order_release);
}

static void *loader_main(void *arg)
{
    (void)arg;
    rcu_register_thread(); /* offline but while it registers a function library (load_function) */
    rcu_thread_offline();
    loader_run();
    rcu_unregister_thread();
    return NULL;
}

/* the loading state and what the loader needs of the config (the queues are made by load_setup) */
static void load_begin(const struct config *cfg, long long total)
{
    limits = config_rdb_limits(cfg);
    databases = cfg->databases;
    memcpy(slot_shard, cfg->slot_shard, sizeof(slot_shard));
    start_ns = util_mono_ns();
    atomic_store(&progress.start_time, util_ms_time() / 1000);
    atomic_store(&progress.total_bytes, total);
    atomic_store(&progress.loaded_bytes, 0);
    atomic_store(&progress.rdb_used_mem, 0);
    atomic_store(&load_active, true);
}

/* path mapped into map / map_len (an empty file: none); 0 ok, -1 with errno */
static int map_file(const char *file)
{
    snprintf(path, sizeof path, "%s", file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return -1;
    }
    map_len = (size_t)st.st_size;
    if (map_len > 0) {
        void *m = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            close(fd);
            return -1;
        }
        madvise(m, map_len, MADV_SEQUENTIAL);
        map = m;
    }
    close(fd);
    return 0;
}

static void unmap_file(void)
{
    if (map)
        munmap((void *)map, map_len);
    map = NULL;
    map_len = 0;
}

int load_setup(int shards)
{
    const struct config *cfg = config_current();
    ring_count = shards; /* the queues, also for a replica's full syncs later (load_replace) */
    rings = mem_calloc((size_t)shards, sizeof(*rings));
    filling = mem_calloc((size_t)shards, sizeof(*filling));
    for (int i = 0; i < shards; i++)
        rings[i] = ring_create(LOAD_RING);
    if (cfg->appendonly) { /* Redis 7: the AOF, when enabled, is what the start loads (never the RDB file) */
        long long total = 0;
        int rc = aof_plan(cfg, &total);
        if (rc > 0) {
            load_begin(cfg, total);
            loader_wanted = true;
        }
        return rc < 0 ? -1 : 0;
    }
    char file[sizeof path];
    snprintf(file, sizeof file, "%s/%s", cfg->dir && cfg->dir[0] ? cfg->dir : ".", cfg->dbfilename);
    if (map_file(file) < 0) {
        if (errno == ENOENT)
            return 0;
        log_warn("Fatal error loading the DB: %s. Exiting.", strerror(errno));
        return -1;
    }
    load_begin(cfg, (long long)map_len);
    loader_wanted = true;
    return 0;
}

void load_start(void)
{
    if (!loader_wanted || loader_started)
        return;
    if (pthread_create(&loader, NULL, loader_main, NULL) != 0) {
        log_warn("Fatal error loading the DB: cannot start the loader thread. Exiting.");
        _exit(1);
    }
    loader_started = true;
}

/* loader: commands for shard 0's pseudo-client, and every shard past them (they ran) */
static bool run_commands(const char *resp)
{
    struct aof_chunk chunk = {0};
    chunk_add(&chunk, resp, strlen(resp));
    return chunk_send(&chunk) && shards_sync(MARK_SYNC);
}

int load_replace(const char *file, bool rewrite_aof)
{
    if (map_file(file) < 0) {
        log_warn("Failed trying to load the MASTER synchronization DB from disk: %s", strerror(errno));
        return -1;
    }
    rcu_thread_online();
    load_begin(config_current(), (long long)map_len);
    rcu_thread_offline();
    for (int i = 0; i < ring_count; i++) /* each notices the flag on its next loop turn (shard_loop) */
        wake_shard(i);
    /* Redis's emptyData, then its functions gone too (the file brings the master's) */
    static const char empty[] = "*1\r\n$8\r\nFLUSHALL\r\n*2\r\n$8\r\nFUNCTION\r\n$5\r\nFLUSH\r\n";
    int rc = -1;
    if (!run_commands(empty))
        goto out;
    struct load_ctx lc = {0};
    struct rdb_file_info info;
    char err[256];
    lc.info = &info;
    lc.keep_expired = true; /* a replica keeps them: its master's DELs remove them */
    lc.now = util_ms_time();
    if (rdb_file_load(map, map_len, &limits, load_key, load_function, &lc, &info, err, sizeof err) < 0) {
        if (atomic_load(&loader_stop))
            goto out;
        log_warn("Failed trying to load the MASTER synchronization DB from disk: %s (file %s)", err, path);
        for (int i = 0; i < ring_count; i++) /* what the file had so far goes too */
            if (!batch_send(i, MARK_NONE))
                goto out;
        run_commands(empty);
        goto out;
    }
    announce(&lc);
    if (!shards_sync(MARK_SYNC)) /* every key in */
        goto out;
    /* the keys came in without the AOF seeing them: a rewrite makes it whole again (Redis restarts its AOF) */
    if (rewrite_aof && !run_commands("*1\r\n$12\r\nBGREWRITEAOF\r\n"))
        goto out;
    if (!shards_sync(MARK_LAST))
        goto out;
    atomic_store(&progress.loaded_bytes, (long long)map_len);
    atomic_store(&progress.keys_loaded, (long long)info.keys);
    atomic_store(&progress.keys_expired, 0);
    log_notice("Done loading RDB, keys loaded: %llu, keys expired: 0.", (unsigned long long)info.keys);
    rc = 0;
out:
    unmap_file();
    atomic_store_explicit(&load_active, false, memory_order_release);
    return rc;
}

void load_cancel(void)
{
    atomic_store(&loader_stop, true);
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
    batch_destroy(b);
}

/* the AOF pseudo-client's replies: dropped (Redis's fake client has none to send) */
static void aof_sink(void *arg, const char *bytes, size_t len)
{
    (void)arg;
    (void)len;
    if (!bytes) {
        aof_client = NULL; /* closed */
        obey_client(UINT64_MAX);
    }
}

/* the pseudo-client has work left: replies to come, or commands not yet run (waiting for a key lock) */
static bool aof_client_busy(void)
{
    return aof_client && (!engine_client_idle(aof_client) || aof_client->rpos < aof_client->rlen);
}

/* one batch on its shard: false when it must wait (AOF commands, or a marker, while the pseudo-client
 * still works on what it was given) */
static bool batch_apply(struct shard *self, struct load_batch *b)
{
    if (self->index == 0 && (b->cmds_len || b->mark != MARK_NONE) && aof_client_busy()) /* shard 0's client */
        return false;
    if (b->cmds_len) {
        if (!aof_client) {
            aof_client = engine_client_open(aof_sink, NULL);
            aof_client->loads_aof = true;
            obey_client(aof_client->id); /* nothing expires while loading, as Redis */
        }
        engine_client_send(aof_client, b->cmds, b->cmds_len);
        batch_destroy(b);
        return true;
    }
    if (b->mark == MARK_LAST && self->index == 0 && aof_client)
        engine_client_close(aof_client); /* a MULTI the file left open is dropped with it */
    if (b->mark == MARK_RECORD)
        shard_loaded(self);
    bool sync = b->mark != MARK_NONE;
    batch_insert(self, b);
    if (sync)
        atomic_fetch_add(&shards_done, 1);
    return true;
}

bool load_step(struct shard *self)
{
    if (!rings || self->index >= ring_count)
        return false;
    struct ring *r = rings[self->index];
    for (int i = 0; i < LOAD_STEP; i++) {
        struct load_batch *b;
        if (self->index == 0 && aof_held) { /* only shard 0 runs AOF commands: aof_held is its own */
            b = aof_held;
            aof_held = NULL;
        } else if (!(b = ring_pop(r))) {
            return false;
        }
        if (!batch_apply(self, b)) {
            aof_held = b;
            return false;
        }
    }
    return !ring_empty(r);
}

bool load_queued(const struct shard *self)
{
    if (!rings || self->index >= ring_count)
        return false;
    if (self->index == 0 && aof_held)
        return !aof_client_busy();
    return !ring_empty(rings[self->index]);
}

void load_teardown(void)
{
    atomic_store(&loader_stop, true);
    if (loader_started)
        pthread_join(loader, NULL);
    loader_started = false;
    if (aof_held)
        batch_destroy(aof_held);
    aof_held = NULL;
    mem_release(aof_files);
    aof_files = NULL;
    aof_count = 0;
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
    unmap_file();
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
