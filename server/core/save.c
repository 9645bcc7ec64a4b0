/*
 * save: SAVE and BGSAVE without a fork (save.h).
 *
 * Design.  One save at a time, its phase in `phase`: IDLE, STARTING
 * (shard 0's part has claimed it and started the writer; the other parts
 * begin in turn), RUNNING (every shard has begun).  The parts of one
 * keyspace-wide command run one after another in shard order, and shard
 * 0's lock is held until the last part is done, so no other save's part can
 * run between them: a part that finds the phase other than STARTING (or
 * shard 0's, other than IDLE) belongs to a save refused as "in progress".
 *
 * Per shard (struct save_shard, touched by its own thread only, the ring
 * excepted): the chunk being filled, the database its last record is in
 * (every chunk opens with its own SELECTDB, so chunks of different shards
 * may interleave in the file), and a ring of SAVE_RING chunks to the
 * writer, and its databases' key counts at its cut.  save_step walks the
 * snapshot SAVE_STEP_BUCKETS buckets at a time while the ring has room, for
 * at most SAVE_STEP_NS or SAVE_STEP_BYTES serialized (one clock read per
 * few buckets), so a client of the shard waits for no more than that
 * before its loop serves it; a chunk leaves once it holds SAVE_CHUNK bytes,
 * the last one (maybe empty) with `last` set.
 *
 * The writer thread, one per save: writes the header and, once every shard
 * has begun, per database with keys a SELECTDB and RESIZEDB of the totals
 * at the cut (a loader presizes its table, as with Redis's own file), then
 * every chunk as it pops it (the CRC64 kept over the bytes in the order written), sleeping
 * on an eventfd the shards ring after a push, and rings a sleeping shard's
 * doorbell after taking from its ring; after every shard's last chunk: EOF
 * and checksum, fsync, rename, fsync of the directory.  A write error is
 * logged once; the chunks still coming are taken and dropped, the temp file
 * removed, the old file kept.  The next save's shard-0 part (or teardown)
 * joins the finished thread, and it rings every shard once it is done.
 *
 * SAVE's client (several stores): its home's merge frees the locks and
 * puts the connection (held: inflight) on its shard's waiter list with the
 * number of the save it began; the shard's loop answers it once done_gen
 * has reached that number.  save_pending counts saves under way and
 * waiters, so that an idle server's loop turn costs one load for all this.
 *
 * Save points and the shutdown's save (Redis's serverCron and
 * finishShutdown).  Shard 0's timer (save_cron) checks the points: the
 * changes since the last successful save against each point's, and the
 * seconds since it; after a failed BGSAVE, not before
 * SAVE_BGSAVE_RETRY_DELAY seconds.  A save it starts is an ordinary BGSAVE
 * sent by an in-process client of shard 0 (engine.h: no socket), so it
 * takes the same keyspace-wide lock round as a client's, without any loop
 * waiting.  A FLUSHALL with save points (Redis's flushAllDataAndResetRDB)
 * asks the timer for the same save at its next tick (flush_save_wanted),
 * which, begun by that client, is counted and fails as Redis's rdbSave
 * there.  The shutdown's save (save_final, on the main thread) is the same
 * client's CLIENT PAUSE WRITE then SAVE (as Redis's, its failure leaves
 * rdb_last_bgsave_status): writes wait from before its cut
 * until the process exits (none is acknowledged and lost), or, when the
 * file cannot be written and the shutdown is refused, until its CLIENT
 * UNPAUSE.  final_state steps between the two threads.  A SHUTDOWN whose
 * save failed is answered by its home (save_serve), as a SAVE's client.
 */
#include "percore/save.h"

#include "conn_internal.h"
#include "dispatch.h"
#include "reply_slot.h"
#include "shard_internal.h"
#include "aof_base.h"

#include "percore/aof.h"
#include "percore/command.h"
#include "percore/engine.h"
#include "percore/config.h"
#include "percore/crc64.h"
#include "percore/fileio.h"
#include "percore/function.h"
#include "percore/load.h"
#include "percore/log.h"
#include "percore/mem.h"
#include "percore/primary.h"
#include "percore/rdb.h"
#include "percore/reply.h"
#include "percore/ring.h"
#include "percore/store.h"
#include "percore/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define SAVE_CHUNK (64 * 1024)   /* bytes a chunk holds before it leaves for the writer */
#define SAVE_RING 8              /* chunks a shard may have waiting for the writer */
#define SAVE_STEP_BUCKETS 8      /* snapshot buckets walked between two looks at the clock */
#define SAVE_STEP_NS 30000       /* a step ends after this long (a client of the shard waits no more)... */
#define SAVE_STEP_BYTES 4096     /* ...or once it has serialized this much */
#define SAVE_REDIS_VER "7.0.15"  /* the redis-ver AUX field: the release whose format this is */

enum { PHASE_IDLE, PHASE_STARTING, PHASE_RUNNING };
enum { JOB_RDB, JOB_AOF_BASE }; /* what the snapshot is written as: dbfilename, or a BGREWRITEAOF's base */

/* a piece of the file, from one shard to the writer */
struct save_chunk {
    struct rdb_buf b;
    bool last;  /* the shard's last: its walk is over */
};

/* one shard's side of the save under way (its thread only; `ring` shared with the writer) */
struct save_shard {
    struct ring *ring;          /* its chunks to the writer (SAVE_RING) */
    struct rdb_buf chunk;       /* being filled */
    int chunk_db;               /* the database of chunk's last record, -1 none yet */
    bool active;                /* its snapshot is being written */
    bool walked;                /* every key is out: only the last chunk is left to send */
    uint64_t writes_at_begin;   /* the shard's dirty at its cut */
    uint64_t *db_keys;          /* per database, its keys at the cut (job_databases) */
    uint64_t *db_expires;       /* and those of them with a TTL */
    struct rdb_save_opts opts;  /* how values are laid out */
};

static struct save_shard *parts;
static int nparts;              /* shards taking part: every store */
static atomic_int phase;
static atomic_int job_kind;     /* the save under way's (set while phase is IDLE, by shard 0's part) */
static int wake_fd = -1;        /* the writer sleeps on it */
static pthread_t writer;
static bool writer_joinable;    /* shard 0's part (under its lock) and teardown only */
static bool job_checksum;       /* the save under way: rdbchecksum */
static bool job_commands;       /* ... is an AOF base in commands (aof-use-rdb-preamble no), not an RDB file */
static int job_databases;       /* its stores' databases */
static char *job_dir, *job_file; /* its dir and dbfilename (copies) */
static struct rdb_buf job_functions; /* the function libraries at its cut (FUNCTION2 records, or FUNCTION LOAD
                                      * commands): the writer's */
static int64_t job_start_ms;
static uint64_t job_sync_gen;   /* the save under way is a replica's full sync (primary.h), 0 not */
static _Atomic long long last_time, last_duration = -1, saves, start_ms;
_Alignas(128) atomic_bool save_bgsave_ok = true; /* Redis's lastbgsave_status: the write path reads it */
static _Alignas(128) atomic_bool last_job_ok = true; /* the last save, SAVE or BGSAVE, succeeded */
static bool job_blocking;             /* the save under way is a SAVE's: its failure leaves save_bgsave_ok */
static bool job_counted;              /* and it counts in rdb_saves (FLUSHALL's does not, as Redis's rdbSave) */
static _Atomic long long last_try;    /* unix s the last BGSAVE began (Redis's lastbgsave_try) */
static _Atomic uint64_t saved_writes; /* write commands in the last successful save (sum of its cuts) */
static _Atomic uint64_t save_gen;     /* saves begun */
atomic_int save_pending;
static _Atomic uint64_t done_gen;     /* the last save over (its outcome set) */

/* a SAVE's client waiting for its file (on its home shard's list, touched by that shard only) */
struct save_waiter {
    struct conn *c;
    struct slot *s;
    uint64_t gen;               /* the save it waits for; a SHUTDOWN's: the refusals before it */
    bool shutdown;              /* a SHUTDOWN's, answered only if the shutdown is refused */
    struct save_waiter *next;
};
static struct save_waiter **waiters; /* per shard */
static int nwaiters;
static atomic_bool job_abandoned; /* shutdown came first: the temp file is not renamed */
static _Atomic uint64_t shutdown_refusals; /* shutdowns refused for a failed save (their SHUTDOWNs answered) */

#define SAVE_BGSAVE_RETRY_DELAY 5 /* s after a failed BGSAVE before a save point tries again (Redis's) */

/* the shutdown's save, between the main thread (save_final) and shard 0 (save_cron) */
enum {
    FINAL_NONE,
    FINAL_WANTED,    /* main: save if save points are set (or always); shard 0 starts it once no save runs */
    FINAL_FIRED,     /* shard 0 sent CLIENT PAUSE WRITE and SAVE */
    FINAL_SAVED,     /* main reads the outcome */
    FINAL_FAILED,
    FINAL_SKIPPED,   /* no save points: nothing to save */
    FINAL_UNPAUSE,   /* main: the shutdown is refused, writes go on */
};
static atomic_int final_state;
static atomic_bool final_always; /* SHUTDOWN SAVE: even without save points */
/* shard 0's thread only */
static struct conn *cron_client; /* the in-process client that sends the timer's BGSAVE */
static int cron_final_replies;   /* replies to the shutdown's CLIENT PAUSE and SAVE so far */
static atomic_bool scheduled;    /* a BGSAVE waits for its turn (BGSAVE inside EXEC) */
static bool part0_began;         /* shard 0's part of the keyspace-wide command under way began a save (the
                                  * other parts, after it under its lock, follow it) */

static _Atomic uint64_t cron_client_id; /* its connection id, 0 none */
static atomic_bool flush_save_wanted; /* a FLUSHALL with save points ran: the timer's next save is its (below) */

static bool send_chunk(struct save_shard *p, bool last);
static void pause_briefly(void);
static void job_over(void);
static bool busy(void) { return atomic_load(&phase) != PHASE_IDLE; }

void save_setup(int shards)
{
    nparts = SHARD_STORE_SHARED ? 1 : shards;
    parts = mem_calloc((size_t)nparts, sizeof(*parts));
    nwaiters = shards;
    waiters = mem_calloc((size_t)shards, sizeof(*waiters));
    for (int i = 0; i < nparts; i++)
        parts[i].ring = ring_create(SAVE_RING);
    wake_fd = eventfd(0, EFD_CLOEXEC);
    atomic_store(&last_time, util_ms_time() / 1000);
    cmd_on_flushall(save_after_flushall);
}

static void chunk_release(struct save_chunk *ch)
{
    rdb_buf_release(&ch->b);
    mem_release(ch);
}

void save_teardown(void)
{
    if (busy()) { /* the shards stopped mid-walk: end the writer, keep the old file */
        atomic_store(&job_abandoned, true);
        for (int i = 0; i < nparts; i++) {
            while (parts[i].active && !send_chunk(&parts[i], true))
                pause_briefly();
            parts[i].active = false;
        }
    }
    if (writer_joinable)
        pthread_join(writer, NULL);
    writer_joinable = false;
    rdb_buf_release(&job_functions);
    for (int i = 0; parts && i < nparts; i++) {
        struct save_chunk *ch;
        while ((ch = ring_pop(parts[i].ring)))
            chunk_release(ch);
        ring_destroy(&parts[i].ring);
        rdb_buf_release(&parts[i].chunk);
        mem_release(parts[i].db_keys);
        mem_release(parts[i].db_expires);
    }
    mem_release(parts);
    parts = NULL;
    for (int i = 0; waiters && i < nwaiters; i++) { /* their connections went with their shards */
        while (waiters[i]) {
            struct save_waiter *w = waiters[i];
            waiters[i] = w->next;
            mem_release(w);
        }
    }
    mem_release(waiters);
    waiters = NULL;
    if (wake_fd >= 0)
        close(wake_fd);
    wake_fd = -1;
    mem_release(job_dir);
    mem_release(job_file);
    job_dir = job_file = NULL;
}

bool save_in_progress(void) { return busy() && atomic_load(&job_kind) == JOB_RDB; }
long long save_last_time(void) { return atomic_load(&last_time); }
bool save_last_ok(void) { return atomic_load(&save_bgsave_ok); }
long long save_last_duration(void) { return atomic_load(&last_duration); }
long long save_count(void) { return atomic_load(&saves); }
long long save_changes_since(void)
{
    uint64_t writes = 0;
    for (int i = 0; i < shard_count(); i++)
        writes += STATS_GET(shard_stats(i), dirty);
    uint64_t saved = atomic_load(&saved_writes);
    return writes > saved ? (long long)(writes - saved) : 0;
}

long long save_current_duration(void)
{
    return save_in_progress() ? (util_ms_time() - atomic_load(&start_ms)) / 1000 : -1;
}

/* ---------------------------------------------------------------- the writer */

/* the file's bytes b go out (unless it already failed), the CRC kept */
static void writer_put(int fd, bool *ok, uint64_t *crc, const struct rdb_buf *b)
{
    if (!*ok || b->len == 0)
        return;
    *crc = crc64(*crc, b->p, b->len);
    if (!fileio_write_all(fd, b->p, b->len)) {
        log_warn("Write error saving DB on disk: %s", strerror(errno));
        *ok = false;
    }
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

static void *writer_main(void *arg)
{
    (void)arg;
    char tmp[4096], path[4096];
    bool rdb = atomic_load(&job_kind) == JOB_RDB;
    if (rdb)
        snprintf(tmp, sizeof tmp, "%s/temp-%d.rdb", job_dir, (int)getpid());
    else /* Redis's child's name; the AOF's writer renames it into appenddirname */
        snprintf(tmp, sizeof tmp, "%s/temp-rewriteaof-bg-%d.aof", job_dir, (int)getpid());
    snprintf(path, sizeof path, "%s/%s", job_dir, job_file);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    bool ok = fd >= 0;
    if (!ok)
        log_warn("Failed opening the temp RDB file %s (in server root dir %s) for saving: %s", tmp, job_dir,
                 strerror(errno));
    uint64_t crc = 0;
    struct rdb_buf b = {0};
    struct rdb_save_opts opts = parts[0].opts;
    if (!job_commands) /* Redis's rdbSaveRio: the AUX fields, the functions, then the databases */
        rdb_file_begin(&b, SAVE_REDIS_VER, util_ms_time() / 1000, 0, &opts);
    rdb_buf_put(&b, job_functions.p, job_functions.len); /* FUNCTION2 records, or FUNCTION LOAD commands */
    while (atomic_load(&phase) == PHASE_STARTING && !atomic_load(&job_abandoned)) { /* every cut taken */
        uint64_t v;
        ssize_t rc = read(wake_fd, &v, sizeof v);
        (void)rc;
    }
    for (int db = 0; db < job_databases; db++) { /* Redis's rdbSaveDb: SELECTDB, RESIZEDB */
        uint64_t keys = 0, expires = 0;
        for (int i = 0; i < nparts; i++) {
            keys += parts[i].db_keys[db];
            expires += parts[i].db_expires[db];
        }
        if (keys && !job_commands)
            rdb_file_select(&b, db, keys, expires);
    }
    writer_put(fd, &ok, &crc, &b);
    int done = 0;
    while (done < nparts) {
        bool got = false;
        for (int i = 0; i < nparts; i++) {
            struct save_chunk *ch;
            while ((ch = ring_pop(parts[i].ring))) {
                got = true;
                writer_put(fd, &ok, &crc, &ch->b);
                done += ch->last;
                chunk_release(ch);
                wake_shard(SHARD_STORE_SHARED ? 0 : i);
            }
        }
        if (!got && done < nparts) {
            uint64_t v;
            ssize_t rc = read(wake_fd, &v, sizeof v);
            (void)rc;
        }
    }
    b.len = 0;
    if (!job_commands)
        rdb_file_end(&b, crc, job_checksum);
    if (ok) {
        ok = fileio_write_all(fd, b.p, b.len);
        if (!ok)
            log_warn("Write error saving DB on disk: %s", strerror(errno));
    }
    rdb_buf_release(&b);
    if (ok && fsync(fd) != 0) {
        log_warn("Write error saving DB on disk: %s", strerror(errno));
        ok = false;
    }
    if (fd >= 0)
        close(fd);
    if (atomic_load(&job_abandoned)) {
        log_warn("Background saving terminated by the shutdown: %s kept", rdb ? path : "the AOF");
        ok = false;
    }
    if (!rdb) { /* a BGREWRITEAOF's base: the AOF's to install (or remove); the RDB's figures stay */
        aof_rewrite_base_done(tmp, ok && fd >= 0);
        job_over();
        return NULL;
    }
    if (ok && rename(tmp, path) != 0) {
        log_warn("Error moving temp DB file %s on the final destination %s (in server root dir %s): %s", tmp,
                 path, job_dir, strerror(errno));
        ok = false;
    }
    if (ok) {
        if (fileio_fsync_dir(job_dir) != 0)
            log_warn("Failed to fsync the directory %s: %s", job_dir, strerror(errno));
        log_notice("DB saved on disk");
    } else if (fd >= 0) {
        unlink(tmp);
    }
    int64_t now = util_ms_time();
    if (ok) {
        uint64_t writes = 0;
        for (int i = 0; i < nparts; i++)
            writes += parts[i].writes_at_begin; /* written before the shard's last chunk came */
        atomic_store(&saved_writes, writes);
        atomic_store(&last_time, now / 1000);
        if (job_counted)
            atomic_fetch_add(&saves, 1);
    }
    if (job_sync_gen)
        primary_rdb_done(job_sync_gen, path, ok);
    atomic_store(&last_duration, (now - job_start_ms) / 1000);
    atomic_store(&last_job_ok, ok);
    if (ok || !job_blocking) /* as Redis: a failed SAVE leaves the BGSAVE status */
        atomic_store(&save_bgsave_ok, ok);
    job_over();
    return NULL;
}

/* the writer's last act: the next save may begin */
static void job_over(void)
{
    atomic_store(&done_gen, atomic_load(&save_gen));
    atomic_store(&phase, PHASE_IDLE);
    atomic_fetch_sub(&save_pending, 1);
    for (int i = 0; i < nwaiters; i++) /* SAVE's clients are answered on their shards' next turn */
        wake_shard(i);
}

/* ---------------------------------------------------------------- the shards */

static void save_key(void *arg, const struct store_snapshot_key *k)
{
    struct save_shard *p = arg;
    if (p->chunk_db != k->db) {
        if (job_commands)
            aof_base_select(&p->chunk, k->db);
        else
            rdb_file_select(&p->chunk, k->db, 0, 0);
        p->chunk_db = k->db;
    }
    if (job_commands)
        aof_base_key(&p->chunk, k->key, k->klen, k->expire, k->val);
    else
        rdb_file_key(&p->chunk, k->key, k->klen, k->expire, k->val, &p->opts);
}

/* the chunk to the writer; false when its ring is full (the chunk stays) */
static bool send_chunk(struct save_shard *p, bool last)
{
    struct save_chunk *ch = mem_alloc(sizeof(*ch));
    ch->b = p->chunk;
    ch->last = last;
    if (!ring_push(p->ring, ch)) {
        mem_release(ch);
        return false;
    }
    p->chunk = (struct rdb_buf){0};
    p->chunk_db = -1;
    uint64_t one = 1;
    ssize_t rc = write(wake_fd, &one, sizeof one);
    (void)rc;
    return true;
}

bool save_step(int shard, struct store *s)
{
    if (!parts)
        return false;
    struct save_shard *p = &parts[SHARD_STORE_SHARED ? 0 : shard];
    if (!p->active)
        return false;
    if (p->chunk.len >= SAVE_CHUNK && !send_chunk(p, false))
        return false; /* the writer is behind: walk on once it has taken some */
    if (!p->walked) {
        long long start = util_mono_ns();
        size_t stop_at = p->chunk.len + SAVE_STEP_BYTES;
        do {
            if (!store_snapshot_step(s, SAVE_STEP_BUCKETS)) {
                p->walked = true;
                break;
            }
        } while (p->chunk.len < stop_at && util_mono_ns() - start < SAVE_STEP_NS);
    }
    if (p->walked) {
        if (!send_chunk(p, true))
            return false;
        p->active = false;
    }
    return p->active;
}

static void begin_shard(struct save_shard *p, int shard, struct store *s, const struct config *cfg)
{
    if (SHARD_STORE_SHARED) { /* one store: its cut covers every thread's writes (under the one lock) */
        p->writes_at_begin = 0;
        for (int i = 0; i < shard_count(); i++)
            p->writes_at_begin += STATS_GET(shard_stats(i), dirty);
    } else {
        p->writes_at_begin = STATS_GET(shard_stats(shard), dirty);
    }
    p->opts = (struct rdb_save_opts){cfg->rdbcompression, cfg->list_max_listpack_size, cfg->list_compress_depth,
                                     atomic_load(&job_kind) == JOB_AOF_BASE};
    p->db_keys = mem_realloc(p->db_keys, (size_t)job_databases * sizeof(*p->db_keys));
    p->db_expires = mem_realloc(p->db_expires, (size_t)job_databases * sizeof(*p->db_expires));
    for (int db = 0; db < job_databases; db++) {
        p->db_keys[db] = store_size(s, db);
        p->db_expires[db] = store_expires_size(s, db);
    }
    p->chunk_db = -1;
    p->walked = false;
    p->active = true;
    store_snapshot_begin(s, save_key, p);
}

static void pause_briefly(void)
{
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
}

/* shard 0's part of a save that begins: the job's settings (shard 0's lock holds off every other part) */
static void job_begin(struct cmd_ctx *ctx, int kind, bool blocking, bool counted)
{
    part0_began = true;
    job_sync_gen = 0;
    atomic_store(&job_kind, kind);
    job_blocking = blocking;
    job_counted = counted;
    if (writer_joinable)
        pthread_join(writer, NULL);
    writer_joinable = false;
    mem_release(job_dir);
    mem_release(job_file);
    const char *dir = ctx->config->dir && ctx->config->dir[0] ? ctx->config->dir : ".";
    job_dir = mem_strndup(dir, strlen(dir));
    job_file = mem_strndup(ctx->config->dbfilename, strlen(ctx->config->dbfilename));
    job_checksum = ctx->config->rdbchecksum;
    job_commands = kind == JOB_AOF_BASE && !ctx->config->aof_use_rdb_preamble;
    job_databases = store_databases(ctx->store);
    rdb_buf_release(&job_functions);
    if (job_commands)
        function_aof_save(&job_functions);
    else
        function_rdb_save(&job_functions, ctx->config->rdbcompression);
    atomic_fetch_add(&save_gen, 1);
    atomic_fetch_add(&save_pending, 1); /* until the writer is done */
    job_start_ms = util_ms_time();
    atomic_store(&job_abandoned, false);
    if (kind == JOB_RDB) {
        if (!job_blocking)
            atomic_store(&last_try, job_start_ms / 1000);
        atomic_store(&start_ms, job_start_ms);
        if (!job_blocking)
            log_notice("Background saving started");
    }
}

/* every part of a save that began: the shard's cut (shard 0's also starts the writer); false when the
 * save cannot go on (answered) */
static bool part_begin(struct cmd_ctx *ctx, int idx)
{
    struct save_shard *p = &parts[idx];
    begin_shard(p, ctx->shard, ctx->store, ctx->config);
    if (idx == 0) { /* the writer reads parts[0].opts */
        if (pthread_create(&writer, NULL, writer_main, NULL) == 0) {
            writer_joinable = true;
        } else {
            log_warn("Can't save in background: cannot start the writer thread");
            store_snapshot_abort(ctx->store);
            p->active = false;
            part0_began = false;
            if (atomic_load(&job_kind) == JOB_AOF_BASE)
                aof_rewrite_base_done("", false);
            atomic_store(&phase, PHASE_IDLE);
            atomic_fetch_sub(&save_pending, 1);
            reply_error(ctx->out, "ERR");
            return false;
        }
    }
    if (idx == nparts - 1) { /* every shard has begun (before this one's last chunk can end the save) */
        atomic_store(&phase, PHASE_RUNNING);
        uint64_t one = 1; /* the writer waits for every cut before the RESIZEDBs */
        ssize_t rc = write(wake_fd, &one, sizeof one);
        (void)rc;
    }
    return true;
}

void save_part(struct cmd_ctx *ctx, bool blocking, bool schedule)
{
    int idx = SHARD_STORE_SHARED ? 0 : ctx->shard;
    if (idx == 0) {
        part0_began = false;
        int expect = PHASE_IDLE;
        if (!blocking && (aof_rewrite_in_progress() || (busy() && atomic_load(&job_kind) == JOB_AOF_BASE))) {
            if (schedule) { /* Redis's bgsaveCommand with an AOF child */
                save_schedule();
                reply_simple(ctx->out, "Background saving scheduled");
            } else {
                reply_error(ctx->out, "ERR Another child process is active (AOF?): can't BGSAVE right now. Use "
                                      "BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.");
            }
            return;
        }
        if (!atomic_compare_exchange_strong(&phase, &expect, PHASE_STARTING)) {
            reply_error(ctx->out, "ERR Background save already in progress");
            return;
        }
        /* the timer's save for a FLUSHALL is Redis's rdbSave there: no BGSAVE (its failure leaves the
         * BGSAVE status), not in rdb_saves */
        bool flush = ctx->client && ctx->client == atomic_load(&cron_client_id) &&
                     atomic_exchange(&flush_save_wanted, false);
        job_begin(ctx, JOB_RDB, blocking || flush, !flush);
    } else if (!part0_began) { /* shard 0's part answered */
        reply_ok(ctx->out);
        return;
    }
    if (!part_begin(ctx, idx))
        return;
    if (!blocking || nparts > 1) { /* SAVE over several shards: its home waits for the file (save_wait) */
        reply_simple(ctx->out, blocking ? "OK" : "Background saving started");
        return;
    }
    /* SAVE with one store: it runs inline, walks and waits here, as Redis's (the global-lock build's
     * other threads wait for the store's lock) */
    struct save_shard *p = &parts[idx];
    while (p->active) /* SAVE: this shard's keys now (Redis's SAVE blocks the whole server) */
        if (!save_step(ctx->shard, ctx->store) && p->active)
            pause_briefly();
    while (atomic_load(&phase) != PHASE_IDLE)
        pause_briefly();
    if (atomic_load(&last_job_ok))
        reply_ok(ctx->out);
    else
        reply_error(ctx->out, "ERR");
}

bool save_sync_part(struct cmd_ctx *ctx, uint64_t gen)
{
    int idx = SHARD_STORE_SHARED ? 0 : ctx->shard;
    struct shard *self = shard_at(ctx->shard);
    if (idx == 0) {
        part0_began = false;
        int expect = PHASE_IDLE;
        if (aof_rewrite_in_progress() || !atomic_compare_exchange_strong(&phase, &expect, PHASE_STARTING)) {
            reply_error(ctx->out, "ERR Background save already in progress"); /* the sync waits for its end */
            return false;
        }
        job_begin(ctx, JOB_RDB, false, true);
        job_sync_gen = gen;
    } else if (!part0_began) {
        reply_ok(ctx->out);
        return true;
    }
    if (!part_begin(ctx, idx))
        return idx != 0;
    if (!self->propagating) /* the replicas' stream: recorded from the cut on */
        shard_set_recording(self, true);
    aof_feed_sync(idx, gen);
    reply_ok(ctx->out);
    return true;
}

void save_rewrite_part(struct cmd_ctx *ctx)
{
    int idx = SHARD_STORE_SHARED ? 0 : ctx->shard;
    struct shard *self = shard_at(ctx->shard);
    if (idx == 0) { /* Redis's bgrewriteaofCommand */
        part0_began = false;
        int expect = PHASE_IDLE;
        if (aof_rewrite_in_progress()) {
            reply_error(ctx->out, "ERR Background append only file rewriting already in progress");
            return;
        }
        if (!atomic_compare_exchange_strong(&phase, &expect, PHASE_STARTING)) { /* after the save under way */
            aof_rewrite_schedule();
            reply_simple(ctx->out, "Background append only file rewriting scheduled");
            return;
        }
        if (aof_rewrite_begin(ctx->config->appendonly && aof_state() == AOF_OFF, ctx->config->aof_use_rdb_preamble) < 0) {
            atomic_store(&phase, PHASE_IDLE);
            reply_error(ctx->out, "ERR Can't execute an AOF background rewriting. Please check the server logs "
                                  "for more information.");
            return;
        }
        job_begin(ctx, JOB_AOF_BASE, false, false);
    } else if (!part0_began) {
        reply_ok(ctx->out);
        return;
    }
    if (!part_begin(ctx, idx))
        return;
    if (aof_state() == AOF_WAIT_REWRITE && !self->propagating) /* it turns the AOF on: recorded from here */
        shard_set_recording(self, true);
    if (self->propagating) /* the cut in the AOF: what follows goes to the rewrite's new incr file */
        aof_feed_rotate(idx);
    reply_simple(ctx->out, "Background append only file rewriting started");
}

void save_after_flushall(struct cmd_ctx *ctx)
{
    if (ctx->config->save_points_count > 0)
        atomic_store(&flush_save_wanted, true);
}

void save_wait(struct conn *c, struct slot *s)
{
    struct save_waiter *w = mem_alloc(sizeof(*w));
    *w = (struct save_waiter){c, s, atomic_load(&save_gen), false, waiters[c->home->index]};
    waiters[c->home->index] = w;
    c->inflight++; /* held until it is answered (conn_unref) */
    atomic_fetch_add(&save_pending, 1);
}

void save_serve(struct shard *self)
{
    if (!waiters || !waiters[self->index])
        return;
    uint64_t done = atomic_load(&done_gen), refusals = atomic_load(&shutdown_refusals);
    struct save_waiter **at = &waiters[self->index];
    while (*at) {
        struct save_waiter *w = *at;
        if (w->shutdown ? w->gen >= refusals : w->gen > done) {
            at = &w->next;
            continue;
        }
        *at = w->next;
        if (!w->c->closed) {
            if (w->shutdown)
                reply_error(&w->s->reply, "ERR Errors trying to SHUTDOWN. Check logs.");
            else if (atomic_load(&last_job_ok))
                reply_ok(&w->s->reply);
            else
                reply_error(&w->s->reply, "ERR");
            dispatch_slot_complete(w->c, w->s);
        }
        conn_unref(w->c);
        mem_release(w);
        atomic_fetch_sub(&save_pending, 1);
    }
}

void save_shutdown_wait(struct conn *c)
{
    struct slot *s = dispatch_slot_create(c, command_internal(CMD_I_UNLOCK)); /* a marker: no stats */
    s->barrier = true; /* as Redis's blocked client: nothing more is read from it meanwhile */
    struct save_waiter *w = mem_alloc(sizeof(*w));
    *w = (struct save_waiter){c, s, atomic_load(&shutdown_refusals), true, waiters[c->home->index]};
    waiters[c->home->index] = w;
    c->inflight++;
    atomic_fetch_add(&save_pending, 1);
}

/* ---------------------------------------------------------------- save points, the shutdown's save */

/* each of the timer's client's replies: one line (+status or -error) */
static void cron_reply(const char *line, size_t len)
{
    if (atomic_load(&final_state) == FINAL_FIRED && cron_final_replies++ == 1) { /* SAVE's, after PAUSE's */
        if (len >= 3 && memcmp(line, "+OK", 3) == 0)
            atomic_store(&final_state, FINAL_SAVED);
        else if (memmem(line, len, "in progress", 11)) /* another save began first: ours after it */
            atomic_store(&final_state, FINAL_WANTED);
        else
            atomic_store(&final_state, FINAL_FAILED);
    } else if (len && line[0] == '-') {
        log_warn("Background saving could not start: %.*s", (int)len - 1, line + 1);
    }
}

static void cron_sink(void *arg, const char *bytes, size_t len)
{
    (void)arg;
    if (!bytes) { /* closed (CLIENT KILL, teardown): a shutdown's save waiting for its reply is sent again */
        cron_client = NULL;
        int fired = FINAL_FIRED;
        atomic_compare_exchange_strong(&final_state, &fired, FINAL_WANTED);
        return;
    }
    for (const char *end; len && (end = memchr(bytes, '\n', len));) { /* whole replies only (engine.h) */
        size_t n = (size_t)(end - bytes) + 1;
        cron_reply(bytes, n >= 2 ? n - 2 : 0);
        bytes += n;
        len -= n;
    }
}

/* commands (RESP) from the timer's own client */
static struct conn *cron_conn(struct shard *self)
{
    if (!cron_client) {
        cron_client = conn_create(self, -1, cron_sink, NULL);
        cron_client->authenticated = true;
        atomic_store(&cron_client_id, cron_client->id);
        snprintf(cron_client->peer, sizeof(cron_client->peer), "save-points");
    }
    return cron_client;
}

static void cron_send(struct shard *self, const char *resp)
{
    conn_take_input(cron_conn(self), resp, strlen(resp));
}

#define RESP_BGSAVE "*1\r\n$6\r\nBGSAVE\r\n"
#define RESP_BGREWRITEAOF "*1\r\n$12\r\nBGREWRITEAOF\r\n"

/* true: the shutdown's save, or its undoing, took this turn */
static bool cron_final(struct shard *self, const struct config *cfg)
{
    switch (atomic_load(&final_state)) {
    case FINAL_WANTED:
        if (!atomic_load(&final_always) && cfg->save_points_count == 0) {
            atomic_store(&final_state, FINAL_SKIPPED);
        } else if (!busy()) {
            log_notice("Saving the final RDB snapshot before exiting.");
            atomic_store(&final_state, FINAL_FIRED);
            cron_final_replies = 0;
            cron_send(self, "*4\r\n$6\r\nCLIENT\r\n$5\r\nPAUSE\r\n$10\r\n2147483647\r\n$5\r\nWRITE\r\n"
                            "*1\r\n$4\r\nSAVE\r\n");
        }
        return true;
    case FINAL_UNPAUSE:
        cron_send(self, "*2\r\n$6\r\nCLIENT\r\n$7\r\nUNPAUSE\r\n");
        atomic_store(&final_state, FINAL_NONE);
        return true;
    case FINAL_NONE:
        return false;
    default: /* the main thread's turn */
        return true;
    }
}

void save_cron(struct shard *self, const struct config *cfg)
{
    if (cron_client && atomic_load(&final_state) == FINAL_NONE && engine_client_idle(cron_client))
        conn_close(cron_client); /* its sink's last call clears cron_client */
    if (cron_final(self, cfg) || busy() || aof_rewrite_in_progress() ||
        load_in_progress()) /* no save of a half-loaded dataset */
        return;
    /* Redis's serverCron: a scheduled rewrite first; CONFIG SET appendonly yes's (Redis's startAppendOnly);
     * and no's cut, when CONFIG SET could not make it (it does, but with a new bind too) */
    if (aof_rewrite_scheduled() || (cfg->appendonly && aof_state() == AOF_OFF)) {
        cron_send(self, RESP_BGREWRITEAOF);
        return;
    }
    if (!cfg->appendonly && aof_state() != AOF_OFF) {
        aof_stop_all(cron_conn(self));
        return;
    }
    if (atomic_load(&flush_save_wanted)) { /* a FLUSHALL's empty dataset, whatever the last save's outcome */
        cron_send(self, RESP_BGSAVE);
        return;
    }
    long long now = util_ms_time() / 1000;
    if (!atomic_load(&save_bgsave_ok) && now - atomic_load(&last_try) <= SAVE_BGSAVE_RETRY_DELAY)
        return;
    if (atomic_exchange(&scheduled, false)) {
        cron_send(self, RESP_BGSAVE);
        return;
    }
    long long changes = cfg->save_points_count ? save_changes_since() : 0, since = now - atomic_load(&last_time);
    for (int i = 0; i < cfg->save_points_count; i++) {
        const struct config_save_point *sp = &cfg->save_points[i];
        if (changes >= sp->changes && since > sp->seconds) {
            log_notice("%d changes in %lld seconds. Saving...", sp->changes, sp->seconds);
            cron_send(self, RESP_BGSAVE);
            return;
        }
    }
    long long growth = aof_rewrite_growth(cfg);
    if (growth >= 0) {
        log_notice("Starting automatic rewriting of AOF on %lld%% growth", growth);
        cron_send(self, RESP_BGREWRITEAOF);
    }
}

void save_schedule(void) { atomic_store(&scheduled, true); }

int save_final(bool always)
{
    atomic_store(&final_always, always);
    atomic_store(&final_state, FINAL_WANTED);
    int st;
    while ((st = atomic_load(&final_state)) != FINAL_SAVED && st != FINAL_FAILED && st != FINAL_SKIPPED) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (st != FINAL_FAILED) {
        atomic_store(&final_state, FINAL_NONE); /* the shards stop next: writes stay paused */
        return st == FINAL_SAVED ? 1 : 0;
    }
    return -1;
}

void save_final_refused(void)
{
    atomic_store(&final_state, FINAL_UNPAUSE);
    atomic_fetch_add(&shutdown_refusals, 1);
    for (int i = 0; i < nwaiters; i++) /* the SHUTDOWNs waiting are answered on their shards' next turn */
        wake_shard(i);
}

bool save_denies_writes_now(const struct config *cfg)
{
    return cfg->stop_writes_on_bgsave_error && cfg->save_points_count > 0 && !atomic_load(&save_bgsave_ok);
}
