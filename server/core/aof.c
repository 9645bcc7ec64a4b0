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
 * as they come.  What spans shards needs more: a multi-shard transaction
 * (EXEC, a split MSET/DEL, a keyspace-wide FLUSHALL; txn.c) must be one
 * MULTI ... EXEC in the file, in an order consistent with the writes around
 * it on every shard.  Without a global sequence number: each shard's stream
 * gets a GRANT marker where the transaction takes a lock unit there and an
 * UNLOCK marker where it lets go of one (keylock.h tells core of both), the
 * transaction's commands on that shard go between them tagged with its id,
 * and its home adds an END record (where it sent unlocks) before it lets go.
 * The writer notes every chunk's transaction records as it takes it, sets
 * the tagged commands aside, and merges: plain commands are written in
 * stream order, a stream stops at an UNLOCK whose transaction is not yet
 * written, and a transaction is written once its END and all its UNLOCKs
 * have come and every participant's stream has gone past all its GRANTs
 * (so whatever preceded its locks there is written).  Writing it at that
 * point is right: on each shard the records between its GRANT and UNLOCK
 * touch none of its keys (it held them).  And it cannot deadlock: a stream
 * stopped at transaction A's UNLOCK before B's GRANT means A let go there
 * before B locked there; if B in turn waited for A, some stream would have
 * B's UNLOCK before A's GRANT -- under strict two-phase locking (every grant
 * of a transaction before any of its unlocks, txn.c) the two orders cannot
 * both hold.  Markers where each part merely ran, or at the unlocks alone,
 * can: two transactions with disjoint keys on two shards let go in either
 * order.  A keyspace-wide write outside a transaction (one store) is a
 * BARRIER: written once every stream has reached it.  In the global-lock
 * build there is one stream, written under the store lock, in the lock's
 * order.
 *
 * Rounds and fsync.  The writer works in rounds: it announces round r
 * (`round_started`), takes every ring, merges what it can, writes, and with
 * appendfsync always fdatasyncs (one fsync covers every shard's writes of
 * the round: group commit), then publishes `round_done`: the last round all
 * of whose chunks are written (a chunk still queued behind a stopped stream,
 * or holding a command of a transaction not yet written, holds it back).  A
 * shard that pushed its chunk and then read round_started = r - 1 knows
 * round r takes the chunk (r is announced after the read, so after the
 * push), so its replies of the turn wait until round_done >= r (shard.c
 * holds the connections; other shards' replies too, their writes having
 * gone to their rings before their replies left).  everysec: the writer
 * fdatasyncs when a second has passed since the last one and something was
 * written, off the shards' loops.  no: write only.  A failed write keeps the
 * bytes for the next round, and rounds are not published until it works.
 *
 * Files, as Redis 7.0: appenddirname/ holds the base (<name>.<seq>.base.rdb,
 * an RDB snapshot, or .base.aof with aof-use-rdb-preamble no), the incr files
 * (<name>.<seq>.incr.aof) and <name>.manifest listing them
 * (aof_manifest.h).  At start with no manifest the keyspace is empty (with
 * appendonly yes nothing else is loaded, as Redis 7.0): an empty base, incr
 * 1 and the manifest are written (temp file, fsync, rename, fsync of the
 * directory), as Redis's "Creating AOF base file ... on server start";
 * with one, the writer appends to its last incr file.
 *
 * Threading: see aof.h.  The writer thread owns the file and the merge
 * state; a stream's chunk and counters belong to its shard.
 */
#include "percore/aof.h"

#include "shard_internal.h"

#include "percore/aof_manifest.h"
#include "percore/config.h"
#include "percore/conn.h"
#include "percore/crc64.h"
#include "percore/fileio.h"
#include "percore/log.h"
#include "percore/mem.h"
#include "percore/primary.h"
#include "percore/rdb.h"
#include "percore/reply.h"
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

#define AOF_RING 1024             /* chunks a shard may have waiting for the writer */
#define AOF_REDIS_VER "7.0.15"    /* the base's redis-ver AUX field (save.c's) */

enum aof_rec_kind {
    REC_CMD,         /* a command: written where its stream is */
    REC_BARRIER,     /* a keyspace-wide write outside a transaction: written once every stream has one */
    REC_TXN_CMD,     /* a command of transaction txid: written with the transaction */
    REC_TXN_FANOUT,  /* a keyspace-wide command's part in transaction txid: written once for all shards */
    REC_TXN_GRANT,   /* txid was granted a lock unit on this shard */
    REC_TXN_UNLOCK,  /* txid let go of a lock unit on this shard */
    REC_TXN_END,     /* txid is over, at its home: where it sent unlocks (int n, then n x {shard, units}) */
    REC_ROTATE,      /* a rewrite's cut on this shard: once every stream has one, a new incr file (below);
                      * db 1: the rewrite turns the AOF on (its incr file is a temp file until the base is in) */
    REC_STOP,        /* the AOF is turned off at this cut: once every stream has one, the file is closed */
    REC_SYNC,        /* a replica's full sync's cut (txid: its generation): once every stream has one, the
                      * replication stream's offset there is where the sync's replicas begin (primary.h) */
};

/* a record's head in a chunk (unaligned there: copied out); its len bytes follow */
struct aof_rec {
    uint32_t kind;  /* enum aof_rec_kind */
    int32_t db;
    uint32_t len;
    uint64_t txid;  /* the transaction of a REC_TXN_*, else 0 */
};

/* records from one shard to the writer */
struct aof_chunk {
    char *p;
    size_t len;
    size_t cap;
    uint64_t round;          /* the writer's round that took it */
    struct aof_chunk *next;  /* the writer's queue of the stream */
};

enum stream_stop { STREAM_RUNS, STREAM_AT_BARRIER, STREAM_AT_UNLOCK };

static bool stops_at_barrier(uint32_t kind) { return kind == REC_BARRIER || kind >= REC_ROTATE; }

/* one shard's stream */
struct aof_stream {
    struct aof_chunk *cur;   /* being filled (the shard) */
    struct ring *ring;       /* chunks to the writer */
    /* the writer's side */
    struct aof_chunk *head, *tail; /* taken, not yet written past */
    size_t pos;              /* in head */
    enum stream_stop stop;   /* why it waits at the record at pos */
    /* the shard waits for a round: its doorbell is rung when one is done */
    _Alignas(128) atomic_bool waiting;
};

/* a byte buffer (the writer's) */
struct outbuf {
    char *p;
    size_t len, cap;
};

/* a transaction as the writer sees it, from its records on every stream (writer thread) */
struct wtxn {
    uint64_t id;
    bool end_seen;           /* its home's REC_TXN_END came: units is known */
    bool emitted;            /* written */
    uint64_t first_round;    /* the oldest round whose chunks held one of its commands (UINT64_MAX none) */
    int *units;              /* per stream: the unlocks its home sent there */
    int *grants_seen;        /* per stream: its grants taken from the rings */
    int *grants_passed;      /* ... and merged past (what came before each is written) */
    int *unlocks_seen;
    int *unlocks_passed;
    struct outbuf *cmds;     /* per stream: its commands there, as {int db, u32 len, u8 fanout, bytes} */
};

static struct aof_stream *streams;
static int nstreams;
/* this thread fed a record since its last turn end: its turn wrote, even when the chunk left before the end
 * (handed over mid-turn, or, in the global-lock build, pushed by another shard's turn end: one shared stream) */
static __thread bool turn_fed;
static atomic_int state;      /* enum aof_state: shard 0's keyspace-wide parts set it, the writer ON once installed */
static int wake_fd = -1;
static pthread_t writer;
static bool writer_running;
static atomic_bool writer_stop;
static _Alignas(128) _Atomic uint64_t round_started;
static _Alignas(128) _Atomic uint64_t round_done;
_Alignas(128) atomic_bool aof_write_ok = true;
static _Atomic int last_write_errno;
static _Atomic long long current_size, base_size, buffer_length;
/* the file and the merge (writer thread, after setup) */
static int fd = -1;
static int file_db = -1;      /* the database the file's last command ran in */
/* the replication stream (primary.h): what a round merged, with SELECTs of its own (writer thread) */
static struct outbuf repl_out;
static int repl_db = -1;
static bool unsynced;         /* written since the last fsync */
static long long incr_size;   /* the bytes of the incr file being appended to */
/* the manifest and where its files are (setup's, then the writer's; the main thread's after teardown) */
static struct aof_manifest manifest;
static char *aof_dir;         /* dir/appenddirname */
static char *aof_name;        /* appendfilename */
/* BGREWRITEAOF (Redis's rewriteAppendOnlyFileBackground): the rewrite numbered rewrite_gen begun by
 * aof_rewrite_begin, its base written by the snapshot's writer (aof_rewrite_base_done), its cut reached by
 * the writer (rotated_gen, rotate_failed_gen): then the writer installs the base (rewrite_conclude) */
static _Atomic uint64_t rewrite_gen;
static _Atomic uint64_t rewrite_cancelled;   /* a rewrite the AOF's stop abandoned */
static uint64_t rotated_gen, rotate_failed_gen; /* the writer's */
static atomic_bool rewrite_running, rewrite_wanted, rewrite_ok = true, rewrite_base_ready;
static _Atomic long long rewrite_count, rewrite_failures, rewrite_began_ms, rewrite_duration = -1;
static _Atomic long long rewrite_base_size; /* aof_current_size at start or after the last rewrite (auto's base) */
static pthread_mutex_t rewrite_lock = PTHREAD_MUTEX_INITIALIZER;
static char *rewrite_tmp;                    /* the base's temp file, once written (under rewrite_lock) */
static bool rewrite_by_writer;               /* begun with the AOF on (or turning on): the writer installs it */
static bool rewrite_preamble;                /* its base is an RDB file (.base.rdb), else commands (.base.aof) */
static void rewrite_conclude(void);
static struct wtxn **txns;    /* transactions not yet written, or whose unlocks are still to pass */
static size_t ntxns, txns_cap;

enum aof_state aof_state(void) { return atomic_load(&state); }
uint64_t aof_round_done(void) { return atomic_load(&round_done); }
bool aof_info_last_write_ok(void) { return atomic_load(&aof_write_ok); }
int aof_last_write_errno(void) { return atomic_load(&last_write_errno); }
long long aof_info_current_size(void) { return atomic_load(&current_size); }
long long aof_info_base_size(void) { return atomic_load(&base_size); }
long long aof_info_buffer_length(void) { return atomic_load(&buffer_length); }

/* ---------------------------------------------------------------- the shards' side */

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

/* "<type><n>\r\n" at p; its length */
static size_t head_at(char *p, char type, long long n)
{
    p[0] = type;
    size_t len = 1 + (size_t)util_ll_to_str(p + 1, n);
    p[len++] = '\r';
    p[len++] = '\n';
    return len;
}

static void put_head(struct aof_chunk *ch, char type, long long n)
{
    char *p = chunk_room(ch, 24);
    ch->len -= 24 - head_at(p, type, n);
}

static void put_bulk(struct aof_chunk *ch, const char *p, size_t n)
{
    put_head(ch, '$', (long long)n);
    put_bytes(ch, p, n);
    put_bytes(ch, "\r\n", 2);
}

/* the command as RESP, its room taken once (the hot path of every write) */
static void put_argv(struct aof_chunk *ch, int argc, const struct resp_arg *argv)
{
    size_t room = 24;
    for (int i = 0; i < argc; i++)
        room += argv[i].len + 26;
    char *start = chunk_room(ch, room), *p = start;
    p += head_at(p, '*', argc);
    for (int i = 0; i < argc; i++) {
        p += head_at(p, '$', (long long)argv[i].len);
        memcpy(p, argv[i].ptr, argv[i].len);
        p += argv[i].len;
        *p++ = '\r';
        *p++ = '\n';
    }
    ch->len -= room - (size_t)(p - start);
}

/* a record of kind in db for txid on the stream's chunk; returns the offset of its head (rec_end fixes its len) */
static size_t rec_begin(struct aof_chunk **chp, int stream, int kind, int db, uint64_t txid)
{
    struct aof_stream *s = &streams[stream];
    if (!s->cur)
        s->cur = mem_calloc(1, sizeof(*s->cur));
    turn_fed = true;
    *chp = s->cur;
    size_t at = s->cur->len;
    struct aof_rec r = {(uint32_t)kind, db, 0, txid};
    put_bytes(s->cur, &r, sizeof r);
    return at;
}

static void rec_end(struct aof_chunk *ch, size_t at)
{
    uint32_t len = (uint32_t)(ch->len - at - sizeof(struct aof_rec));
    memcpy(ch->p + at + offsetof(struct aof_rec, len), &len, sizeof len);
}

void aof_feed(int stream, uint64_t txid, bool fanout, int db, int argc, const struct resp_arg *argv, const char *prop,
              size_t prop_len, int prop_n)
{
    struct aof_chunk *ch;
    size_t at = rec_begin(&ch, stream, txid ? (fanout ? REC_TXN_FANOUT : REC_TXN_CMD) : REC_CMD, db, txid);
    bool wrap = prop_n > 1 && !txid; /* a command propagated as several: MULTI ... EXEC, as Redis's propagatePendingCommands */
    if (wrap)
        put_bytes(ch, "*1\r\n$5\r\nMULTI\r\n", 15);
    if (prop_n > 0)
        put_bytes(ch, prop, prop_len);
    if (wrap)
        put_bytes(ch, "*1\r\n$4\r\nEXEC\r\n", 14);
    if (prop_n == 0)
        put_argv(ch, argc, argv);
    rec_end(ch, at);
}

void aof_feed_barrier(int stream, int db, int argc, const struct resp_arg *argv)
{
    struct aof_chunk *ch;
    size_t at = rec_begin(&ch, stream, REC_BARRIER, db, 0);
    put_argv(ch, argc, argv);
    rec_end(ch, at);
}

void aof_feed_del(int stream, int db, const char *key, size_t len)
{
    struct aof_chunk *ch;
    size_t at = rec_begin(&ch, stream, REC_CMD, db, 0);
    put_head(ch, '*', 2);
    put_bulk(ch, "DEL", 3);
    put_bulk(ch, key, len);
    rec_end(ch, at);
}

void aof_feed_txn_lock(int stream, uint64_t txid, bool granted)
{
    struct aof_chunk *ch;
    size_t at = rec_begin(&ch, stream, granted ? REC_TXN_GRANT : REC_TXN_UNLOCK, 0, txid);
    rec_end(ch, at);
}

void aof_feed_txn_end(int stream, uint64_t txid, int n, const int *shards, const int *units)
{
    struct aof_chunk *ch;
    size_t at = rec_begin(&ch, stream, REC_TXN_END, 0, txid);
    put_bytes(ch, &n, sizeof n);
    for (int i = 0; i < n; i++) {
        put_bytes(ch, &shards[i], sizeof shards[i]);
        put_bytes(ch, &units[i], sizeof units[i]);
    }
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
    bool had = turn_fed;
    turn_fed = false;
    bool pushed = stream_push(s);
    if (had)
        wake_writer();
    if (!cover && !had)
        return 0;
    if (!pushed) /* the writer is behind: the next turn tries again, and takes a ticket then */
        return UINT64_MAX;
    return atomic_load(&round_started) + 1;
}

uint64_t aof_next_round(void) { return atomic_load(&round_started) + 1; }

void aof_wake(void) { wake_writer(); }

void aof_wait_round(int stream, bool waiting)
{
    if (atomic_load_explicit(&streams[stream].waiting, memory_order_relaxed) != waiting)
        atomic_store(&streams[stream].waiting, waiting);
    if (waiting)
        wake_writer(); /* a round even if nothing is left to write: it covers what came before */
}

void aof_hand_over(int stream)
{
    struct aof_stream *s = &streams[stream];
    bool had = s->cur && s->cur->len; /* turn_fed stays: the turn's end still holds its replies for the round */
    while (!stream_push(s)) { /* the writer takes every ring's chunks each round: room comes */
        wake_writer();
        usleep(50);
    }
    if (had)
        wake_writer();
}

void aof_shard_stop(int stream)
{
    aof_hand_over(stream);
    wake_writer();
}

/* ---------------------------------------------------------------- the writer */

static void out_put(struct outbuf *o, const void *p, size_t n)
{
    if (o->len + n > o->cap) {
        o->cap = (o->len + n) * 2 + 4096;
        o->p = mem_realloc(o->p, o->cap);
    }
    memcpy(o->p + o->len, p, n);
    o->len += n;
}

static void out_select(struct outbuf *o, int db)
{
    char sel[64], num[16];
    int dl = snprintf(num, sizeof num, "%d", db);
    int sl = snprintf(sel, sizeof sel, "*2\r\n$6\r\nSELECT\r\n$%d\r\n%s\r\n", dl, num);
    out_put(o, sel, (size_t)sl);
}

/* bytes of the merged stream: to the file's buffer, and to the replicas' once a full sync has begun */
static void out_merged(struct outbuf *o, const char *p, size_t n)
{
    out_put(o, p, n);
    if (primary_feeding())
        out_put(&repl_out, p, n);
}

static void out_command(struct outbuf *o, int db, const char *p, size_t n)
{
    if (db != file_db) {
        out_select(o, db);
        file_db = db;
    }
    if (primary_feeding() && db != repl_db) {
        out_select(&repl_out, db);
        repl_db = db;
    }
    out_merged(o, p, n);
}

static struct wtxn *txn_find(uint64_t id, bool create)
{
    for (size_t i = 0; i < ntxns; i++)
        if (txns[i]->id == id)
            return txns[i];
    if (!create)
        return NULL;
    if (ntxns == txns_cap) {
        txns_cap = txns_cap ? txns_cap * 2 : 16;
        txns = mem_realloc(txns, txns_cap * sizeof(*txns));
    }
    struct wtxn *t = mem_calloc(1, sizeof(*t));
    t->id = id;
    t->first_round = UINT64_MAX;
    int *ints = mem_calloc((size_t)nstreams * 5, sizeof(int));
    t->units = ints;
    t->grants_seen = ints + nstreams;
    t->grants_passed = ints + 2 * nstreams;
    t->unlocks_seen = ints + 3 * nstreams;
    t->unlocks_passed = ints + 4 * nstreams;
    t->cmds = mem_calloc((size_t)nstreams, sizeof(*t->cmds));
    txns[ntxns++] = t;
    return t;
}

static void txn_destroy(struct wtxn *t)
{
    for (int i = 0; i < nstreams; i++)
        mem_release(t->cmds[i].p);
    mem_release(t->cmds);
    mem_release(t->units);
    mem_release(t);
}

/* written, and every unlock passed: forgotten */
static void txn_forget_done(void)
{
    for (size_t i = 0; i < ntxns;) {
        struct wtxn *t = txns[i];
        bool done = t->emitted;
        for (int s = 0; done && s < nstreams; s++)
            done = t->unlocks_passed[s] >= t->units[s];
        if (!done) {
            i++;
            continue;
        }
        txn_destroy(t);
        txns[i] = txns[--ntxns];
    }
}

static struct aof_rec rec_at(const char *p)
{
    struct aof_rec r;
    memcpy(&r, p, sizeof r);
    return r;
}

/* a chunk the writer just took: its transactions' records noted, their commands set aside */
static void prescan(int stream, const struct aof_chunk *ch)
{
    for (size_t pos = 0; pos < ch->len;) {
        struct aof_rec r = rec_at(ch->p + pos);
        const char *body = ch->p + pos + sizeof r;
        pos += sizeof r + r.len;
        if (r.kind < REC_TXN_CMD || r.kind >= REC_ROTATE)
            continue;
        struct wtxn *t = txn_find(r.txid, true);
        switch (r.kind) {
        case REC_TXN_CMD:
        case REC_TXN_FANOUT: {
            struct outbuf *b = &t->cmds[stream];
            uint8_t fanout = r.kind == REC_TXN_FANOUT;
            out_put(b, &r.db, sizeof r.db);
            out_put(b, &r.len, sizeof r.len);
            out_put(b, &fanout, 1);
            out_put(b, body, r.len);
            if (ch->round < t->first_round)
                t->first_round = ch->round;
            break;
        }
        case REC_TXN_GRANT: t->grants_seen[stream]++; break;
        case REC_TXN_UNLOCK: t->unlocks_seen[stream]++; break;
        case REC_TXN_END: {
            int n;
            memcpy(&n, body, sizeof n);
            for (int i = 0; i < n; i++) {
                int sh, units;
                memcpy(&sh, body + sizeof n + (size_t)i * 2 * sizeof(int), sizeof sh);
                memcpy(&units, body + sizeof n + (size_t)i * 2 * sizeof(int) + sizeof(int), sizeof units);
                if (sh >= 0 && sh < nstreams)
                    t->units[sh] += units;
            }
            t->end_seen = true;
            break;
        }
        }
    }
}

/* every participant's unlocks have come and its stream is past its grants: what came before them there
 * is written, what comes after them waits at the unlocks (strict two-phase locking, see the top) */
static bool txn_ready(const struct wtxn *t)
{
    if (!t->end_seen || t->emitted)
        return false;
    for (int s = 0; s < nstreams; s++)
        if (t->unlocks_seen[s] < t->units[s] || t->grants_passed[s] < t->grants_seen[s])
            return false;
    return true;
}

/* its commands: one alone as it is, more as MULTI ... EXEC (Redis's propagation of a transaction); a
 * keyspace-wide command's parts once, from the first stream that has them */
static void txn_emit(struct outbuf *o, struct wtxn *t)
{
    int count = 0, fanout_stream = -1;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && count > 1)
            out_merged(o, "*1\r\n$5\r\nMULTI\r\n", 15);
        for (int s = 0; s < nstreams; s++) {
            const struct outbuf *b = &t->cmds[s];
            for (size_t at = 0; at < b->len;) {
                int db;
                uint32_t len;
                memcpy(&db, b->p + at, sizeof db);
                memcpy(&len, b->p + at + sizeof db, sizeof len);
                bool fanout = b->p[at + sizeof db + sizeof len] != 0;
                const char *cmd = b->p + at + sizeof db + sizeof len + 1;
                at += sizeof db + sizeof len + 1 + len;
                if (fanout) {
                    if (fanout_stream == -1)
                        fanout_stream = s;
                    if (fanout_stream != s)
                        continue;
                }
                if (pass == 0)
                    count++;
                else
                    out_command(o, db, cmd, len);
            }
        }
        fanout_stream = -1;
    }
    if (count > 1)
        out_merged(o, "*1\r\n$4\r\nEXEC\r\n", 14);
    t->emitted = true;
    for (int s = 0; s < nstreams; s++) {
        mem_release(t->cmds[s].p);
        t->cmds[s] = (struct outbuf){0};
    }
}

static bool stream_peek(struct aof_stream *s, struct aof_rec *r, const char **body)
{
    while (s->head && s->pos >= s->head->len) {
        struct aof_chunk *done = s->head;
        s->head = done->next;
        if (!s->head)
            s->tail = NULL;
        s->pos = 0;
        chunk_destroy(done);
    }
    if (!s->head)
        return false;
    *r = rec_at(s->head->p + s->pos);
    *body = s->head->p + s->pos + sizeof *r;
    return true;
}

static void stream_skip(struct aof_stream *s, const struct aof_rec *r)
{
    s->pos += sizeof(*r) + r->len;
}

/* one stream as far as it goes now; true when it moved */
static bool merge_stream(struct outbuf *o, int i)
{
    struct aof_stream *s = &streams[i];
    struct aof_rec r;
    const char *body;
    bool moved = false;
    while (s->stop != STREAM_AT_BARRIER && stream_peek(s, &r, &body)) {
        if (stops_at_barrier(r.kind)) {
            s->stop = STREAM_AT_BARRIER;
            return true;
        }
        /* a transaction's record (a rewrite's cut or a stop is none: its txid field is the rewrite's
         * generation, and made a transaction of it that never ended) */
        struct wtxn *t = r.kind >= REC_TXN_CMD ? txn_find(r.txid, true) : NULL;
        if (r.kind == REC_TXN_UNLOCK) {
            if (!t->emitted) {
                moved |= s->stop != STREAM_AT_UNLOCK;
                s->stop = STREAM_AT_UNLOCK;
                return moved;
            }
            t->unlocks_passed[i]++;
        } else if (r.kind == REC_TXN_GRANT) {
            t->grants_passed[i]++;
        } else if (r.kind == REC_CMD) {
            out_command(o, r.db, body, r.len);
        }
        s->stop = STREAM_RUNS;
        stream_skip(s, &r);
        moved = true;
    }
    return moved;
}

static bool rotate_at(struct outbuf *o, uint64_t gen, bool turning_on);
static bool close_at(struct outbuf *o);

/* the merged replication bytes so far go to the replicas' stream */
static void repl_hand_on(void)
{
    if (repl_out.len)
        primary_feed(repl_out.p, repl_out.len);
    repl_out.len = 0;
}

/* every stream is at full sync gen's cut: the replicas' stream there, its next command SELECTing */
static void repl_cut(uint64_t gen)
{
    repl_hand_on();
    primary_cut(gen);
    repl_db = -1;
}

/* every stream as far as it goes; true when one still waits */
static bool merge(struct outbuf *o)
{
    for (;;) {
        bool moved = false;
        for (int i = 0; i < nstreams; i++)
            moved |= merge_stream(o, i);
        int at_barrier = 0;
        for (int i = 0; i < nstreams; i++)
            at_barrier += streams[i].stop == STREAM_AT_BARRIER;
        if (at_barrier == nstreams) { /* the same record on every stream: written (or done) once */
            for (int i = 0; i < nstreams; i++) {
                struct aof_rec r;
                const char *body;
                stream_peek(&streams[i], &r, &body);
                if (i == 0 && r.kind == REC_ROTATE && !rotate_at(o, r.txid, r.db == 1))
                    return true; /* the old file could not take what precedes the cut: the next round */
                if (i == 0 && r.kind == REC_STOP && !close_at(o))
                    return true;
                if (i == 0 && r.kind == REC_BARRIER)
                    out_command(o, r.db, body, r.len);
                if (i == 0 && r.kind == REC_SYNC)
                    repl_cut(r.txid);
                stream_skip(&streams[i], &r);
                streams[i].stop = STREAM_RUNS;
            }
            moved = true;
        }
        for (size_t k = 0; k < ntxns; k++) {
            if (txn_ready(txns[k])) {
                txn_emit(o, txns[k]);
                moved = true;
            }
        }
        txn_forget_done();
        if (!moved)
            break;
    }
    for (int i = 0; i < nstreams; i++)
        if (streams[i].stop != STREAM_RUNS)
            return true;
    return false;
}

/* the last round all of whose chunks are written: every chunk of a later round is still queued, or holds a
 * command of a transaction not yet written */
static uint64_t rounds_written(uint64_t r)
{
    uint64_t oldest = r + 1;
    for (int i = 0; i < nstreams; i++)
        if (streams[i].head && streams[i].head->round < oldest)
            oldest = streams[i].head->round;
    for (size_t k = 0; k < ntxns; k++)
        if (!txns[k]->emitted && txns[k]->first_round < oldest)
            oldest = txns[k]->first_round;
    return oldest - 1;
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

/* o's bytes to the file; what could not be written stays in o for the next round */
static bool out_write(struct outbuf *o)
{
    if (fd < 0) { /* the AOF is off: nothing is recorded (a stream's last records before its STOP are) */
        o->len = 0;
        return true;
    }
    size_t done = 0;
    bool ok = true;
    while (done < o->len) {
        ssize_t w = write(fd, o->p + done, o->len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            ok = false;
            break;
        }
        done += (size_t)w;
    }
    if (!ok && done > 0) { /* a short write: cut back to the last whole round, as Redis's flushAppendOnlyFile */
        log_warn("Short write while writing to the AOF file: (nwritten=%zu, expected=%zu)", done, o->len);
        if (ftruncate(fd, (off_t)incr_size) == 0)
            done = 0;
        errno = ENOSPC; /* what Redis reports for a short write */
    }
    atomic_fetch_add(&current_size, (long long)done);
    incr_size += (long long)done;
    memmove(o->p, o->p + done, o->len - done);
    o->len -= done;
    atomic_store(&buffer_length, (long long)o->len);
    return ok;
}

static void *writer_main(void *arg)
{
    (void)arg;
    struct outbuf o = {0};
    int64_t last_fsync = util_ms_time();
    unsynced = false;
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
                ch->round = r;
                prescan(i, ch);
                if (s->tail)
                    s->tail->next = ch;
                else
                    s->head = ch;
                s->tail = ch;
            }
        }
        merge(&o);
        repl_hand_on();
        primary_writer_tick(); /* between rounds: a command boundary */
        enum config_appendfsync policy = config_current()->appendfsync;
        bool was_ok = atomic_load(&aof_write_ok);
        if (o.len) {
            bool ok = out_write(&o);
            int err = errno;
            unsynced = fd >= 0;
            if (ok && !was_ok)
                log_warn("AOF write error looks solved, Redis can write again.");
            else if (!ok && was_ok)
                log_warn("Error writing to the AOF file: %s", strerror(err));
            if (!ok)
                atomic_store(&last_write_errno, err);
            atomic_store(&aof_write_ok, ok);
        }
        int64_t now = util_ms_time();
        if (unsynced && (policy == APPENDFSYNC_ALWAYS || (policy == APPENDFSYNC_EVERYSEC && now - last_fsync >= 1000) ||
                         stop)) {
            if (fdatasync(fd) != 0) {
                log_warn("Can't persist AOF for fsync error: %s", strerror(errno));
                atomic_store(&last_write_errno, errno);
                atomic_store(&aof_write_ok, false);
            }
            unsynced = o.len != 0;
            last_fsync = now;
        }
        if (atomic_load(&aof_write_ok) && o.len == 0) {
            uint64_t done = rounds_written(r);
            if (done > atomic_load(&round_done)) { /* only then: a shard that waits for more sleeps */
                atomic_store(&round_done, done);
                wake_waiting_shards();
                primary_round_done();
            }
        }
        if (atomic_load(&rewrite_base_ready) && rotated_gen == atomic_load(&rewrite_gen))
            rewrite_conclude();
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
    if (o.len)
        log_warn("AOF: %zu bytes could not be written at shutdown", o.len);
    if (ntxns)
        log_warn("AOF: %zu transactions were not over at shutdown: not written", ntxns);
    rcu_unregister_thread();
    mem_release(o.p);
    mem_release(repl_out.p);
    repl_out = (struct outbuf){0};
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
        bool ok = fileio_write_all(tfd, p, n) && fsync(tfd) == 0;
        close(tfd);
        if (ok && rename(tmp, path) == 0 && fileio_fsync_dir(dir) == 0)
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
        struct rdb_save_opts opts = {cfg->rdbcompression, cfg->list_max_listpack_size, cfg->list_compress_depth, true};
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

/* the manifest of dir (an empty one when it has none): 0, or -1 (logged) when it cannot be parsed */
static int manifest_read(const char *dir, struct aof_manifest *am)
{
    aof_manifest_init(am);
    char *mname = aof_manifest_file_name(aof_name);
    char *mpath = path_join(dir, mname);
    size_t mlen = 0;
    char *text = read_whole(mpath, &mlen);
    int rc = 0;
    struct aof_manifest_error err;
    if (text && aof_manifest_parse(am, text, mlen, &err) < 0) {
        log_warn("*** FATAL AOF MANIFEST FILE ERROR *** %s (line %d)", err.msg, err.line);
        rc = -1;
    }
    mem_release(text);
    mem_release(mpath);
    mem_release(mname);
    return rc;
}

/* am written to dir's manifest (temp file, fsync, rename, fsync of the directory): 0 ok, -1 (logged) */
static int manifest_persist(const char *dir, const struct aof_manifest *am)
{
    char *mname = aof_manifest_file_name(aof_name);
    size_t n;
    char *text = aof_manifest_format(am, &n);
    int rc = write_file_atomic(dir, mname, text, n);
    mem_release(text);
    mem_release(mname);
    return rc;
}

/* the manifest and the incr file to append to, in aof_dir (made when missing), opened */
static int open_files(const struct config *cfg)
{
    struct aof_manifest *am = &manifest;
    bool changed = false;
    int rc = -1;
    if (manifest_read(aof_dir, am) < 0)
        return -1;
    if (!am->base && am->incr_len == 0) { /* a new directory: the keyspace is empty at start (load.h) */
        const char *base = aof_manifest_new_base(am, aof_name, cfg->aof_use_rdb_preamble);
        if (write_empty_base(aof_dir, base, cfg) < 0)
            goto out;
        changed = true;
    } else if (am->base) {
        atomic_store(&base_size, file_size(aof_dir, am->base->name));
    }
    size_t incr_before = am->incr_len;
    const char *incr = aof_manifest_last_incr(am, aof_name);
    changed |= am->incr_len != incr_before;
    char *ipath = path_join(aof_dir, incr);
    fd = open(ipath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        log_warn("Can't open the append-only file %s: %s", ipath, strerror(errno));
    mem_release(ipath);
    if (fd < 0)
        goto out;
    for (size_t i = 0; i < am->incr_len; i++)
        atomic_fetch_add(&current_size, file_size(aof_dir, am->incr[i].name));
    incr_size = file_size(aof_dir, incr);
    atomic_fetch_add(&current_size, atomic_load(&base_size));
    atomic_store(&rewrite_base_size, atomic_load(&current_size)); /* Redis's, once the AOF is loaded */
    if (changed && (fileio_fsync_dir(aof_dir) < 0 || manifest_persist(aof_dir, am) < 0))
        goto out;
    rc = 0;
out:
    if (rc < 0)
        aof_manifest_deinit(am);
    return rc;
}

/* ---------------------------------------------------------------- BGREWRITEAOF */

/* a copy of am (through its text): 0, or -1 when it cannot be made */
static int manifest_copy(const struct aof_manifest *am, struct aof_manifest *to)
{
    if (!am->base && !am->incr_len && !am->history_len) { /* no text parses to that ("empty manifest") */
        aof_manifest_init(to);
        to->base_seq = am->base_seq;
        to->incr_seq = am->incr_seq;
        return 0;
    }
    size_t n;
    char *text = aof_manifest_format(am, &n);
    struct aof_manifest_error err;
    int rc = aof_manifest_parse(to, text, n, &err);
    mem_release(text);
    return rc;
}

/* what precedes a cut, written and (but with appendfsync no) fsynced; false: the file cannot take it */
static bool flush_for_cut(struct outbuf *o)
{
    if (o->len && !out_write(o))
        return false;
    if (unsynced && config_current()->appendfsync != APPENDFSYNC_NO && fdatasync(fd) != 0) {
        log_warn("Can't persist AOF for fsync error: %s", strerror(errno));
        return false;
    }
    unsynced = false;
    return true;
}

static char *temp_incr_path(void)
{
    char name[512];
    snprintf(name, sizeof name, "temp-%s.incr", aof_name); /* Redis's getTempIncrAofName */
    return path_join(aof_dir, name);
}

/*
 * Every stream is at the cut of rewrite `gen`: what precedes it goes to the
 * incr file being written (fsynced), what follows to a new incr file, listed
 * in the manifest before anything is written there (Redis's
 * openNewIncrAofForAppend).  A crash from here on replays the old base, the
 * old incr files and the new one: whole.  false: the old file cannot take
 * what precedes the cut (a failing disk), so the cut waits for the next
 * round.  A new file that cannot be made fails the rewrite, not the writes.
 */
static bool rotate_at(struct outbuf *o, uint64_t gen, bool turning_on)
{
    if (!flush_for_cut(o))
        return false;
    if (turning_on) { /* what follows the cut goes to a temp incr file until the base is in (Redis's
                       * AOF_WAIT_REWRITE); a rewrite tried again starts it afresh */
        char *path = temp_incr_path();
        int nfd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (nfd < 0)
            log_warn("Can't open the append-only file %s: %s", path, strerror(errno));
        mem_release(path);
        if (nfd < 0) {
            rotate_failed_gen = gen;
            return true;
        }
        if (fd >= 0)
            close(fd);
        fd = nfd;
        file_db = -1;
        incr_size = 0;
        atomic_store(&current_size, 0);
        rotated_gen = gen;
        return true;
    }
    struct aof_manifest next;
    int nfd = -1;
    char *path = NULL;
    if (manifest_copy(&manifest, &next) == 0) {
        path = path_join(aof_dir, aof_manifest_new_incr(&next, aof_name));
        nfd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (nfd < 0)
            log_warn("Can't open the append-only file %s: %s", path, strerror(errno));
        if (nfd >= 0 && manifest_persist(aof_dir, &next) < 0) {
            close(nfd);
            unlink(path);
            nfd = -1;
        }
        if (nfd < 0)
            aof_manifest_deinit(&next);
    }
    mem_release(path);
    if (nfd < 0) {
        rotate_failed_gen = gen;
        return true;
    }
    close(fd);
    fd = nfd;
    file_db = -1; /* the new file begins with a SELECT */
    incr_size = 0;
    aof_manifest_deinit(&manifest);
    manifest = next;
    rotated_gen = gen;
    return true;
}

/* every stream is at the cut of CONFIG SET appendonly no: what precedes it is written and fsynced, the
 * file closed (Redis's stopAppendOnly); false: the file cannot take it yet */
static bool close_at(struct outbuf *o)
{
    if (!flush_for_cut(o))
        return false;
    if (fd >= 0)
        close(fd);
    fd = -1;
    return true;
}

/* how a rewrite's base is installed: after the cut's new incr file (ON), with the AOF off (OFF), or turning
 * it on (WAIT: the temp incr file becomes the only incr file) */
enum install_how { INSTALL_ON, INSTALL_OFF, INSTALL_WAIT };

/* Redis's backgroundRewriteDoneHandler: the base written at tmp becomes am's base in dir, the incr files
 * before the cut history, then deleted (aofDelHistoryFiles); false (logged) when it cannot be done, am as
 * it was */
static bool rewrite_install(struct aof_manifest *am, const char *tmp, enum install_how how)
{
    struct aof_manifest next;
    if (manifest_copy(am, &next) < 0)
        return false;
    const char *base = aof_manifest_new_base(&next, aof_name, rewrite_preamble);
    char *path = path_join(aof_dir, base);
    bool ok = rename(tmp, path) == 0;
    if (!ok)
        log_warn("Error trying to rename the temporary AOF file %s into %s: %s", tmp, base, strerror(errno));
    mem_release(path);
    if (ok) {
        log_notice("Successfully renamed the temporary AOF base file %s into %s", tmp, base);
        aof_manifest_incr_to_history(&next, how == INSTALL_ON);
    }
    if (ok && how == INSTALL_WAIT) { /* Redis's "Successfully renamed the temporary AOF incr file" */
        char *from = temp_incr_path(), *to = path_join(aof_dir, aof_manifest_new_incr(&next, aof_name));
        ok = rename(from, to) == 0;
        if (!ok)
            log_warn("Error trying to rename the temporary AOF incr file %s into %s: %s", from, to, strerror(errno));
        mem_release(from);
        mem_release(to);
    }
    if (ok)
        ok = manifest_persist(aof_dir, &next) == 0;
    if (!ok) {
        aof_manifest_deinit(&next);
        return false;
    }
    aof_manifest_deinit(am);
    *am = next;
    for (size_t i = 0; i < am->history_len; i++) {
        log_notice("Removing the history file %s in the background", am->history[i].name);
        char *hpath = path_join(aof_dir, am->history[i].name);
        unlink(hpath);
        mem_release(hpath);
    }
    if (am->history_len) {
        aof_manifest_clear_history(am);
        manifest_persist(aof_dir, am); /* a failure leaves history lines naming gone files: harmless */
    }
    return true;
}

static void rewrite_end(bool ok)
{
    atomic_store(&rewrite_duration, (util_ms_time() - atomic_load(&rewrite_began_ms)) / 1000);
    atomic_store(&rewrite_ok, ok);
    if (ok) {
        atomic_store(&rewrite_failures, 0);
        log_notice("Background AOF rewrite finished successfully");
    } else {
        atomic_fetch_add(&rewrite_failures, 1);
        log_warn("Background AOF rewrite failed");
    }
    atomic_store(&rewrite_running, false);
}

/* the writer (or teardown, the writer gone): the base is written and the cut reached */
static void rewrite_conclude(void)
{
    pthread_mutex_lock(&rewrite_lock);
    char *tmp = rewrite_tmp;
    rewrite_tmp = NULL;
    atomic_store(&rewrite_base_ready, false);
    pthread_mutex_unlock(&rewrite_lock);
    bool waiting = atomic_load(&state) == AOF_WAIT_REWRITE, ok = false;
    uint64_t gen = atomic_load(&rewrite_gen);
    if (rotate_failed_gen != gen && atomic_load(&rewrite_cancelled) != gen) {
        if (waiting) { /* what the directory holds now (the AOF was off) */
            aof_manifest_deinit(&manifest);
            ok = manifest_read(aof_dir, &manifest) == 0;
        }
        ok = (ok || !waiting) && rewrite_install(&manifest, tmp, waiting ? INSTALL_WAIT : INSTALL_ON);
    }
    if (ok && waiting)
        atomic_store(&state, AOF_ON);
    else if (waiting) /* Redis: a rewrite turning the AOF on is tried again */
        atomic_store(&rewrite_wanted, true);
    if (ok) {
        atomic_store(&base_size, file_size(aof_dir, manifest.base->name));
        atomic_store(&current_size, atomic_load(&base_size) + incr_size);
        atomic_store(&rewrite_base_size, atomic_load(&current_size));
    } else {
        unlink(tmp);
    }
    mem_release(tmp);
    rewrite_end(ok);
}

int aof_rewrite_begin(bool turn_on, bool rdb_preamble)
{
    if (mkdir(aof_dir, 0755) != 0 && errno != EEXIST) {
        log_warn("Can't open or create append-only dir %s: %s", aof_dir, strerror(errno));
        return -1;
    }
    if (turn_on)
        atomic_store(&state, AOF_WAIT_REWRITE);
    rewrite_by_writer = atomic_load(&state) != AOF_OFF;
    rewrite_preamble = rdb_preamble;
    atomic_fetch_add(&rewrite_gen, 1);
    atomic_store(&rewrite_running, true);
    atomic_store(&rewrite_wanted, false);
    atomic_fetch_add(&rewrite_count, 1);
    atomic_store(&rewrite_began_ms, util_ms_time());
    log_notice("Background append only file rewriting started");
    return 0;
}

void aof_feed_sync(int stream, uint64_t gen)
{
    struct aof_chunk *ch;
    size_t at = rec_begin(&ch, stream, REC_SYNC, 0, gen);
    rec_end(ch, at);
}

void aof_feed_rotate(int stream)
{
    struct aof_chunk *ch;
    size_t at = rec_begin(&ch, stream, REC_ROTATE, atomic_load(&state) == AOF_WAIT_REWRITE,
                          atomic_load(&rewrite_gen));
    rec_end(ch, at);
}

/* __aofstop's part, under the shard's keyspace lock: the shard records nothing from here on; shard 0's
 * (the first) turns the AOF off, and a rewrite under way is abandoned (Redis's killAppendOnlyChild) */
static void cmd_aof_stop_part(struct cmd_ctx *ctx)
{
    int stream = SHARD_STORE_SHARED ? 0 : ctx->shard;
    struct shard *self = shard_at(ctx->shard);
    if (stream == 0) {
        atomic_store(&state, AOF_OFF);
        if (atomic_load(&rewrite_running))
            atomic_store(&rewrite_cancelled, atomic_load(&rewrite_gen));
    }
    if (self->propagating) {
        struct aof_chunk *ch;
        size_t at = rec_begin(&ch, stream, REC_STOP, 0, 0);
        rec_end(ch, at);
    }
    shard_set_recording(self, primary_feeding()); /* replicas still take the stream */
    reply_ok(ctx->out);
}

static const struct command aof_stop_command = {
    "__aofstop", cmd_aof_stop_part, 1, CMD_INTERNAL | CMD_LOCKS_ALL, 0, 0, 0, ROUTE_FANOUT_OK, "",
};

void aof_stop_all(struct conn *c)
{
    struct resp_arg name = {aof_stop_command.name, strlen(aof_stop_command.name)};
    conn_fanout_locked(c, &aof_stop_command, 1, &name);
}

void aof_rewrite_base_done(const char *tmp, bool ok)
{
    if (ok)
        log_notice("Successfully created the temporary AOF base file %s", tmp);
    if (ok && rewrite_by_writer) { /* the writer installs it once it has reached the cut */
        pthread_mutex_lock(&rewrite_lock);
        rewrite_tmp = mem_strndup(tmp, strlen(tmp));
        atomic_store(&rewrite_base_ready, true);
        pthread_mutex_unlock(&rewrite_lock);
        wake_writer();
        return;
    }
    if (ok) { /* the AOF is off: the directory gets the base and a manifest of it alone (Redis 7.0) */
        struct aof_manifest am;
        ok = manifest_read(aof_dir, &am) == 0 && rewrite_install(&am, tmp, INSTALL_OFF);
        aof_manifest_deinit(&am);
    }
    if (!ok)
        unlink(tmp);
    if (!ok && rewrite_by_writer && atomic_load(&state) == AOF_WAIT_REWRITE)
        atomic_store(&rewrite_wanted, true);
    rewrite_end(ok);
}

bool aof_rewrite_in_progress(void) { return atomic_load(&rewrite_running); }
void aof_rewrite_schedule(void) { atomic_store(&rewrite_wanted, true); }
bool aof_rewrite_scheduled(void) { return atomic_load(&rewrite_wanted); }

long long aof_rewrite_growth(const struct config *cfg)
{
    long long size = atomic_load(&current_size);
    if (atomic_load(&state) != AOF_ON || atomic_load(&rewrite_running) || !cfg->auto_aof_rewrite_percentage ||
        size <= cfg->auto_aof_rewrite_min_size)
        return -1;
    long long base = atomic_load(&rewrite_base_size);
    long long growth = size * 100 / (base ? base : 1) - 100;
    return growth >= cfg->auto_aof_rewrite_percentage ? growth : -1;
}

void aof_rewrite_info(struct aof_rewrite_info *out)
{
    bool running = atomic_load(&rewrite_running);
    *out = (struct aof_rewrite_info){
        .in_progress = running,
        .scheduled = atomic_load(&rewrite_wanted),
        .last_ok = atomic_load(&rewrite_ok),
        .last_seconds = atomic_load(&rewrite_duration),
        .current_seconds = running ? (util_ms_time() - atomic_load(&rewrite_began_ms)) / 1000 : -1,
        .count = atomic_load(&rewrite_count),
        .failures = atomic_load(&rewrite_failures),
    };
}

int aof_setup(int shards, const struct config *cfg)
{
    const char *dir = cfg->dir && cfg->dir[0] ? cfg->dir : ".";
    aof_dir = path_join(dir, cfg->appenddirname); /* a rewrite with the AOF off writes there too */
    aof_name = mem_strndup(cfg->appendfilename, strlen(cfg->appendfilename));
    if (cfg->appendonly) {
        if (mkdir(aof_dir, 0755) != 0 && errno != EEXIST) {
            log_warn("Can't open or create append-only dir %s: %s", aof_dir, strerror(errno));
            return -1;
        }
        if (open_files(cfg) < 0)
            return -1;
    }
    /* the streams and the writer, also with the AOF off: CONFIG SET appendonly yes turns them on */
    nstreams = SHARD_STORE_SHARED ? 1 : shards;
    streams = mem_calloc_aligned((size_t)nstreams, sizeof(*streams), _Alignof(struct aof_stream));
    for (int i = 0; i < nstreams; i++)
        streams[i].ring = ring_create(AOF_RING);
    wake_fd = eventfd(0, EFD_CLOEXEC);
    file_db = -1;
    repl_db = -1;
    atomic_store(&writer_stop, false);
    if (pthread_create(&writer, NULL, writer_main, NULL) != 0) {
        log_warn("Can't start the append-only file's writer thread");
        return -1;
    }
    writer_running = true;
    atomic_store(&state, cfg->appendonly ? AOF_ON : AOF_OFF);
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
    if (atomic_load(&rewrite_base_ready)) { /* the writer is gone: the cut it reached, or none */
        if (rotated_gen != atomic_load(&rewrite_gen))
            rotate_failed_gen = atomic_load(&rewrite_gen);
        rewrite_conclude();
    }
    aof_manifest_deinit(&manifest);
    mem_release(aof_dir);
    mem_release(aof_name);
    aof_dir = aof_name = NULL;
    for (size_t k = 0; k < ntxns; k++)
        txn_destroy(txns[k]);
    mem_release(txns);
    txns = NULL;
    ntxns = txns_cap = 0;
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
    atomic_store(&state, AOF_OFF);
}
