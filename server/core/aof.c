/*
 * aof: the propagation stream and the append-only file's writer (aof.h).
 *
 * Design.  Each shard appends records to its own chunk, touched by its
 * thread only: a record is {kind, db, len} and len bytes of RESP, the
 * command as Redis propagates it (call.h hands a write here once its
 * handler reports a change; the handler's cmd_propagate rewrites replace
 * its argv).  At the end of its loop turn the shard pushes the chunk into
 * its bounded ring to the writer thread; with the ring full it keeps
 * filling the same chunk, so a shard never waits for the disk.  No counter
 * is shared by the shards: the only shared words are the writer's round
 * numbers, which the shards read.
 *
 * One file from several streams.  Writes on different shards touch
 * different keys, so any interleaving of the streams that keeps each
 * stream's order replays to the same keyspace; the writer takes the chunks
 * as they come.  A keyspace-wide write (FLUSHALL FLUSHDB SWAPDB) is not
 * independent of the others: each shard runs its part under the lock of its
 * whole keyspace, every such command in the same order on every shard
 * (txn.c: strict two-phase, ascending shards), so the k-th barrier record of
 * every stream is the same command.  A stream that reaches a barrier stops
 * there until every stream has reached its k-th barrier; then the command is
 * written once and all go on.  No cycle can form: barriers are totally
 * ordered and every stream holds them in that order.  No global sequence
 * number is needed.
 *
 * Rounds and fsync.  The writer works in rounds: it announces round r
 * (`round_started`), takes every ring, merges what it can, writes, and with
 * appendfsync always fdatasyncs (one fsync covers every shard's writes of
 * the round: group commit), then publishes `round_done` = r -- only when no
 * stream is stopped at a barrier, since a record behind one is not written
 * yet.  A shard that pushed its chunk and then read round_started = r - 1
 * knows round r takes the chunk (r is announced after the read, so after
 * the push), so its replies of the turn wait until round_done >= r
 * (shard.c holds the connections).  everysec: the writer fdatasyncs when a
 * second has passed since the last one and something was written, off the
 * shards' loops.  no: write only.
 *
 * Files, as Redis 7.0: appenddirname/ holds the base (<name>.<seq>.base.rdb,
 * an RDB snapshot, or .base.aof with aof-use-rdb-preamble no), the incr files
 * (<name>.<seq>.incr.aof) and <name>.manifest listing them
 * (aof_manifest.h).  At start with no manifest the keyspace is empty (with
 * appendonly yes nothing else is loaded): an empty base, incr 1 and the
 * manifest are written (temp file, fsync, rename, fsync of the directory);
 * with one, the writer appends to its last incr file.
 *
 * Threading: see aof.h.  The writer thread owns the file and the merge
 * state; a stream's chunk and counters belong to its shard.
 */
#include "percore/aof.h"

#include "shard_internal.h"

#include "percore/aof_manifest.h"
#include "percore/config.h"
#include "percore/crc64.h"
#include "percore/log.h"
#include "percore/mem.h"
#include "percore/rdb.h"
#include "percore/resp.h"
#include "percore/ring.h"
#include "percore/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <urcu-qsbr.h>

#define AOF_RING 256              /* chunks a shard may have waiting for the writer */
#define AOF_REDIS_VER "7.0.15"    /* the base's redis-ver AUX field (save.c's) */

enum aof_rec_kind { REC_CMD, REC_BARRIER };

/* a record's head in a chunk; its len bytes of RESP follow */
struct aof_rec {
    uint32_t kind;  /* enum aof_rec_kind */
    int32_t db;
    uint32_t len;
};

/* records from one shard to the writer */
struct aof_chunk {
    char *p;
    size_t len;
    size_t cap;
    struct aof_chunk *next;  /* the writer's queue of the stream */
};

/* one shard's stream */
struct aof_stream {
    struct aof_chunk *cur;   /* being filled (the shard) */
    struct ring *ring;       /* chunks to the writer */
    /* the writer's side */
    struct aof_chunk *head, *tail; /* taken, not yet written past */
    size_t pos;              /* in head */
    bool at_barrier;         /* stopped at a barrier record at pos */
    /* the shard waits for a round: its doorbell is rung when one is done */
    _Alignas(128) atomic_bool waiting;
};

static struct aof_stream *streams;
static int nstreams;
static bool enabled;
static int wake_fd = -1;
static pthread_t writer;
static bool writer_running;
static atomic_bool writer_stop;
static _Alignas(128) _Atomic uint64_t round_started;
static _Alignas(128) _Atomic uint64_t round_done;
static _Alignas(128) atomic_bool last_write_ok = true;
static _Atomic long long current_size, base_size;
/* the file (writer thread, after setup) */
static int fd = -1;
static int file_db = -1;      /* the database the file's last command ran in */

bool aof_enabled(void) { return enabled; }
uint64_t aof_round_done(void) { return atomic_load(&round_done); }
bool aof_info_last_write_ok(void) { return atomic_load(&last_write_ok); }
long long aof_info_current_size(void) { return atomic_load(&current_size); }
long long aof_info_base_size(void) { return atomic_load(&base_size); }
long long aof_info_delayed_fsync(void) { return 0; }

/* ---------------------------------------------------------------- the shards' side */

static struct aof_chunk *chunk_create(void)
{
    struct aof_chunk *ch = mem_calloc(1, sizeof(*ch));
    return ch;
}

static void chunk_destroy(struct aof_chunk *ch)
{
    mem_release(ch->p);
    mem_release(ch);
}

static char *chunk_room(struct aof_chunk *ch, size_t n)
{
    if (ch->len + n > ch->cap) {
        ch->cap = (ch->len + n) * 2 + 256;
        ch->p = mem_realloc(ch->p, ch->cap);
    }
    char *at = ch->p + ch->len;
    ch->len += n;
    return at;
}

static void put_bytes(struct aof_chunk *ch, const void *p, size_t n)
{
    memcpy(chunk_room(ch, n), p, n);
}

static void put_head(struct aof_chunk *ch, char type, long long n)
{
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%c%lld\r\n", type, n);
    put_bytes(ch, buf, (size_t)len);
}

static void put_bulk(struct aof_chunk *ch, const char *p, size_t n)
{
    put_head(ch, '$', (long long)n);
    put_bytes(ch, p, n);
    put_bytes(ch, "\r\n", 2);
}

/* a record of kind in db; returns the offset of its head, whose len the caller fixes */
static size_t rec_begin(struct aof_chunk *ch, int kind, int db)
{
    size_t at = ch->len;
    struct aof_rec r = {(uint32_t)kind, db, 0};
    put_bytes(ch, &r, sizeof r);
    return at;
}

static void rec_end(struct aof_chunk *ch, size_t at)
{
    uint32_t len = (uint32_t)(ch->len - at - sizeof(struct aof_rec));
    memcpy(ch->p + at + offsetof(struct aof_rec, len), &len, sizeof len);
}

static struct aof_chunk *stream_chunk(int stream)
{
    struct aof_stream *s = &streams[stream];
    if (!s->cur)
        s->cur = chunk_create();
    return s->cur;
}

static void put_argv(struct aof_chunk *ch, int argc, const struct resp_arg *argv)
{
    put_head(ch, '*', argc);
    for (int i = 0; i < argc; i++)
        put_bulk(ch, argv[i].ptr, argv[i].len);
}

void aof_feed(int stream, int db, int argc, const struct resp_arg *argv, const char *prop, size_t prop_len,
              int prop_n)
{
    struct aof_chunk *ch = stream_chunk(stream);
    size_t at = rec_begin(ch, REC_CMD, db);
    if (prop_n > 0)
        put_bytes(ch, prop, prop_len);
    else
        put_argv(ch, argc, argv);
    rec_end(ch, at);
}

void aof_feed_barrier(int stream, int db, int argc, const struct resp_arg *argv)
{
    struct aof_chunk *ch = stream_chunk(stream);
    size_t at = rec_begin(ch, REC_BARRIER, db);
    put_argv(ch, argc, argv);
    rec_end(ch, at);
}

void aof_feed_del(int stream, int db, const char *key, size_t len)
{
    struct aof_chunk *ch = stream_chunk(stream);
    size_t at = rec_begin(ch, REC_CMD, db);
    put_head(ch, '*', 2);
    put_bulk(ch, "DEL", 3);
    put_bulk(ch, key, len);
    rec_end(ch, at);
}

static void wake_writer(void)
{
    uint64_t one = 1;
    ssize_t rc = write(wake_fd, &one, sizeof one);
    (void)rc;
}

/* the stream's chunk to the writer: false when its ring is full (it stays, and grows) */
static bool stream_push(struct aof_stream *s)
{
    if (!s->cur || s->cur->len == 0)
        return true;
    if (!ring_push(s->ring, s->cur))
        return false;
    s->cur = NULL;
    return true;
}

uint64_t aof_turn_end(int stream, bool cover)
{
    struct aof_stream *s = &streams[stream];
    bool had = s->cur && s->cur->len;
    bool pushed = stream_push(s);
    if (had)
        wake_writer();
    if (!cover && !had)
        return 0;
    if (!pushed) /* the writer is behind: the next turn tries again, and takes a ticket then */
        return UINT64_MAX;
    return atomic_load(&round_started) + 1;
}

void aof_wait_round(int stream, bool waiting)
{
    atomic_store(&streams[stream].waiting, waiting);
    if (waiting)
        wake_writer(); /* a round even if nothing is left to write: it covers what came before */
}

void aof_shard_stop(int stream)
{
    if (!enabled)
        return;
    struct aof_stream *s = &streams[stream];
    while (!stream_push(s)) {
        wake_writer();
        usleep(100);
    }
    wake_writer();
}

/* ---------------------------------------------------------------- the writer */

static bool write_all(const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* the file's next bytes, gathered for one write per round */
struct outbuf {
    char *p;
    size_t len, cap;
};

static void out_put(struct outbuf *o, const void *p, size_t n)
{
    if (o->len + n > o->cap) {
        o->cap = (o->len + n) * 2 + 4096;
        o->p = mem_realloc(o->p, o->cap);
    }
    memcpy(o->p + o->len, p, n);
    o->len += n;
}

static void out_command(struct outbuf *o, int db, const char *p, size_t n)
{
    if (db != file_db) {
        char sel[64], num[16];
        int dl = snprintf(num, sizeof num, "%d", db);
        int sl = snprintf(sel, sizeof sel, "*2\r\n$6\r\nSELECT\r\n$%d\r\n%s\r\n", dl, num);
        out_put(o, sel, (size_t)sl);
        file_db = db;
    }
    out_put(o, p, n);
}

static const struct aof_rec *stream_peek(struct aof_stream *s)
{
    while (s->head && s->pos >= s->head->len) {
        struct aof_chunk *done = s->head;
        s->head = done->next;
        if (!s->head)
            s->tail = NULL;
        s->pos = 0;
        chunk_destroy(done);
    }
    return s->head ? (const struct aof_rec *)(const void *)(s->head->p + s->pos) : NULL;
}

static void stream_skip(struct aof_stream *s, const struct aof_rec *r)
{
    s->pos += sizeof(*r) + r->len;
}

/* every stream's records up to its next barrier; the barrier once all are there.  True when
 * some stream still waits at one */
static bool merge(struct outbuf *o)
{
    for (;;) {
        int at_barrier = 0;
        for (int i = 0; i < nstreams; i++) {
            struct aof_stream *s = &streams[i];
            const struct aof_rec *r;
            while (!s->at_barrier && (r = stream_peek(s))) {
                if (r->kind == REC_BARRIER) {
                    s->at_barrier = true;
                    break;
                }
                out_command(o, r->db, (const char *)(r + 1), r->len);
                stream_skip(s, r);
            }
            at_barrier += s->at_barrier;
        }
        if (at_barrier == 0)
            return false;
        if (at_barrier < nstreams)
            return true;
        for (int i = 0; i < nstreams; i++) { /* the same command on every stream: written once */
            struct aof_stream *s = &streams[i];
            const struct aof_rec *r = stream_peek(s);
            if (i == 0)
                out_command(o, r->db, (const char *)(r + 1), r->len);
            stream_skip(s, r);
            s->at_barrier = false;
        }
    }
}

static void wake_waiting_shards(void)
{
    for (int i = 0; i < nstreams; i++) {
        if (!atomic_load(&streams[i].waiting))
            continue;
        int n = SHARD_STORE_SHARED ? shard_count() : 1;
        for (int j = 0; j < n; j++) {
            struct shard *sh = shard_at(SHARD_STORE_SHARED ? j : i);
            if (sh) {
                uint64_t one = 1;
                ssize_t rc = write(sh->doorbell_fd, &one, sizeof one);
                (void)rc;
            }
        }
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    struct outbuf o = {0};
    int64_t last_fsync = util_ms_time();
    bool unsynced = false;
    bool write_failed_logged = false;
    rcu_register_thread(); /* it reads appendfsync (CONFIG SET may change it) */
    for (;;) {
        rcu_quiescent_state();
        bool stop = atomic_load(&writer_stop);
        uint64_t r = atomic_load(&round_started) + 1;
        atomic_store(&round_started, r);
        bool got = false;
        for (int i = 0; i < nstreams; i++) {
            struct aof_stream *s = &streams[i];
            struct aof_chunk *ch;
            while ((ch = ring_pop(s->ring))) {
                got = true;
                ch->next = NULL;
                if (s->tail)
                    s->tail->next = ch;
                else
                    s->head = ch;
                s->tail = ch;
            }
        }
        o.len = 0;
        bool blocked = merge(&o);
        enum config_appendfsync policy = config_current()->appendfsync;
        if (o.len) {
            if (write_all(o.p, o.len)) {
                atomic_fetch_add(&current_size, (long long)o.len);
                unsynced = true;
                if (!atomic_load(&last_write_ok)) {
                    log_warn("AOF write error looks solved, Redis can write again.");
                    atomic_store(&last_write_ok, true);
                }
                write_failed_logged = false;
            } else {
                if (!write_failed_logged)
                    log_warn("Error writing to the AOF file: %s", strerror(errno));
                write_failed_logged = true;
                atomic_store(&last_write_ok, false);
            }
        }
        int64_t now = util_ms_time();
        if (unsynced && (policy == APPENDFSYNC_ALWAYS || (policy == APPENDFSYNC_EVERYSEC && now - last_fsync >= 1000) ||
                         stop)) {
            if (fdatasync(fd) != 0) {
                log_warn("Can't persist AOF for fsync error: %s", strerror(errno));
                atomic_store(&last_write_ok, false);
            }
            unsynced = false;
            last_fsync = now;
        }
        if (!blocked && atomic_load(&last_write_ok)) {
            atomic_store(&round_done, r);
            wake_waiting_shards();
        }
        if (stop && !got)
            break;
        if (!got) {
            struct pollfd p = {wake_fd, POLLIN, 0};
            int timeout = unsynced && policy == APPENDFSYNC_EVERYSEC ? 1000 - (int)(util_ms_time() - last_fsync) : 1000;
            rcu_thread_offline();
            int ready = poll(&p, 1, timeout < 1 ? 1 : timeout);
            rcu_thread_online();
            if (ready > 0) {
                uint64_t v;
                ssize_t rc = read(wake_fd, &v, sizeof v);
                (void)rc;
            }
        }
    }
    rcu_unregister_thread();
    mem_release(o.p);
    return NULL;
}

/* ---------------------------------------------------------------- the files */

static char *path_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = mem_alloc(n);
    snprintf(p, n, "%s/%s", a, b);
    return p;
}

static int fsync_dir(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    int rc = fsync(dfd);
    close(dfd);
    return rc;
}

/* bytes written to dir/name through a temp file, fsynced, renamed, the directory fsynced; 0 ok */
static int write_file_atomic(const char *dir, const char *name, const char *p, size_t n)
{
    char *path = path_join(dir, name);
    size_t tn = strlen(path) + 32;
    char *tmp = mem_alloc(tn);
    snprintf(tmp, tn, "%s.temp-%d", path, (int)getpid());
    int rc = -1;
    int tfd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (tfd >= 0) {
        int saved = fd;
        fd = tfd;
        bool ok = write_all(p, n) && fsync(tfd) == 0;
        fd = saved;
        close(tfd);
        if (ok && rename(tmp, path) == 0 && fsync_dir(dir) == 0)
            rc = 0;
        else
            unlink(tmp);
    }
    if (rc < 0)
        log_warn("Can't write %s: %s", path, strerror(errno));
    mem_release(tmp);
    mem_release(path);
    return rc;
}

/* an empty base: an RDB with no key (or, RESP, no command) */
static int write_empty_base(const char *dir, const char *name, const struct config *cfg)
{
    struct rdb_buf b = {0};
    if (cfg->aof_use_rdb_preamble) {
        struct rdb_save_opts opts = {cfg->rdbcompression, cfg->list_max_listpack_size, cfg->list_compress_depth};
        rdb_file_begin(&b, AOF_REDIS_VER, util_ms_time() / 1000, 0, &opts);
        rdb_file_end(&b, crc64(0, b.p, b.len), cfg->rdbchecksum);
    }
    int rc = write_file_atomic(dir, name, b.p ? b.p : "", b.len);
    atomic_store(&base_size, (long long)b.len);
    rdb_buf_release(&b);
    return rc;
}

static char *read_whole(const char *path, size_t *len)
{
    int rfd = open(path, O_RDONLY | O_CLOEXEC);
    if (rfd < 0)
        return NULL;
    struct stat st;
    char *p = NULL;
    if (fstat(rfd, &st) == 0) {
        p = mem_alloc((size_t)st.st_size + 1);
        ssize_t n = read(rfd, p, (size_t)st.st_size);
        *len = n > 0 ? (size_t)n : 0;
    }
    close(rfd);
    return p;
}

static long long file_size(const char *dir, const char *name)
{
    char *path = path_join(dir, name);
    struct stat st;
    long long n = stat(path, &st) == 0 ? (long long)st.st_size : 0;
    mem_release(path);
    return n;
}

/* the manifest in aof_dir (made when missing) and the incr file to append to, opened */
static int open_files(const char *aof_dir, const struct config *cfg)
{
    struct aof_manifest am;
    aof_manifest_init(&am);
    char *mname = aof_manifest_file_name(cfg->appendfilename);
    char *mpath = path_join(aof_dir, mname);
    size_t mlen = 0;
    char *text = read_whole(mpath, &mlen);
    bool changed = false;
    int rc = -1;
    if (text) {
        struct aof_manifest_error err;
        if (aof_manifest_parse(&am, text, mlen, &err) < 0) {
            log_warn("*** FATAL AOF MANIFEST FILE ERROR *** %s (line %d)", err.msg, err.line);
            goto out;
        }
    }
    if (!am.base && am.incr_len == 0) { /* a new directory: the keyspace is empty at start */
        const char *base = aof_manifest_new_base(&am, cfg->appendfilename, cfg->aof_use_rdb_preamble);
        if (write_empty_base(aof_dir, base, cfg) < 0)
            goto out;
        changed = true;
    } else if (am.base) {
        atomic_store(&base_size, file_size(aof_dir, am.base->name));
    }
    size_t incr_before = am.incr_len;
    const char *incr = aof_manifest_last_incr(&am, cfg->appendfilename);
    changed |= am.incr_len != incr_before;
    char *ipath = path_join(aof_dir, incr);
    fd = open(ipath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        log_warn("Can't open the append-only file %s: %s", ipath, strerror(errno));
    mem_release(ipath);
    if (fd < 0)
        goto out;
    for (size_t i = 0; i < am.incr_len; i++)
        atomic_fetch_add(&current_size, file_size(aof_dir, am.incr[i].name));
    atomic_fetch_add(&current_size, atomic_load(&base_size));
    if (changed) {
        if (fsync_dir(aof_dir) < 0)
            goto out;
        size_t n;
        char *mtext = aof_manifest_format(&am, &n);
        int wrc = write_file_atomic(aof_dir, mname, mtext, n);
        mem_release(mtext);
        if (wrc < 0)
            goto out;
    }
    rc = 0;
out:
    mem_release(text);
    mem_release(mpath);
    mem_release(mname);
    aof_manifest_deinit(&am);
    return rc;
}

int aof_setup(int shards, const struct config *cfg)
{
    if (!cfg->appendonly)
        return 0;
    const char *dir = cfg->dir && cfg->dir[0] ? cfg->dir : ".";
    char *aof_dir = path_join(dir, cfg->appenddirname);
    if (mkdir(aof_dir, 0755) != 0 && errno != EEXIST) {
        log_warn("Can't open or create append-only dir %s: %s", aof_dir, strerror(errno));
        mem_release(aof_dir);
        return -1;
    }
    int rc = open_files(aof_dir, cfg);
    mem_release(aof_dir);
    if (rc < 0)
        return -1;
    nstreams = SHARD_STORE_SHARED ? 1 : shards;
    streams = mem_calloc((size_t)nstreams, sizeof(*streams));
    for (int i = 0; i < nstreams; i++)
        streams[i].ring = ring_create(AOF_RING);
    wake_fd = eventfd(0, EFD_CLOEXEC);
    file_db = -1;
    atomic_store(&writer_stop, false);
    if (pthread_create(&writer, NULL, writer_main, NULL) != 0) {
        log_warn("Can't start the append-only file's writer thread");
        return -1;
    }
    writer_running = true;
    enabled = true;
    return 0;
}

void aof_teardown(void)
{
    if (writer_running) {
        atomic_store(&writer_stop, true);
        wake_writer();
        pthread_join(writer, NULL);
        writer_running = false;
    }
    for (int i = 0; streams && i < nstreams; i++) {
        struct aof_stream *s = &streams[i];
        struct aof_chunk *ch;
        while ((ch = ring_pop(s->ring)))
            chunk_destroy(ch);
        while (s->head) {
            ch = s->head;
            s->head = ch->next;
            chunk_destroy(ch);
        }
        if (s->cur)
            chunk_destroy(s->cur);
        ring_destroy(&s->ring);
    }
    mem_release(streams);
    streams = NULL;
    if (fd >= 0)
        close(fd);
    fd = -1;
    if (wake_fd >= 0)
        close(wake_fd);
    wake_fd = -1;
    enabled = false;
}
