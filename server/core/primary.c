/*
 * primary: this server as a master (see percore/primary.h).
 *
 * The stream.  The AOF writer already merges every shard's propagation
 * stream into one ordered RESP stream (aof.c: a cross-shard transaction as
 * one MULTI ... EXEC, keyspace-wide writes once, expiries and evictions as
 * DELs).  Once a full sync has begun, the writer also hands each round's
 * merged bytes, with SELECTs of their own, to primary_feed: they go to one
 * buffer, `stream`, holding the bytes from offset stream.base + 1 to
 * stream.base + stream.len (the master_repl_offset).  It keeps at least
 * repl-backlog-size bytes (the backlog of partial resyncs), and whatever a
 * replica has not been sent yet; a replica that falls more than the
 * replica class's client-output-buffer-limit behind is dropped.
 *
 * A full sync is a cut, as a BGREWRITEAOF's: shard 0's timer sends
 * `__replsync <gen>`, a keyspace-wide command whose part on every shard,
 * under that shard's keyspace lock, begins the shard's snapshot (a BGSAVE
 * to dbfilename, save.c, as Redis's disk-based sync) and puts the sync's
 * cut in its stream (the shard records from then on, even with the AOF
 * off).  When every stream has reached the cut the writer calls
 * primary_cut: the offset there is where the replicas waiting for this sync
 * begin (+FULLRESYNC <replid> <offset>); once the RDB is written they are
 * sent "$<size>" and the file, then the stream from the cut.  A replica
 * that asks while a sync's file is still being written joins it; one that
 * asks after waits for the next.  PSYNC with our replication id and an
 * offset the buffer still holds, past the first cut since this server
 * became a master, continues (+CONTINUE) instead.
 *
 * The sender thread, started when the first replica asks, owns the
 * replicas' sockets (never a shard: a shard's
 * loop does not wait on a replica): it writes what each is owed
 * (keepalive newlines while a sync is prepared, the RDB by sendfile, the
 * stream), reads their REPLCONF ACKs, drops the silent ones past
 * repl-timeout, and publishes each online replica's acknowledged offset in
 * `acks`, which WAIT and min-replicas-to-write read without a lock.
 *
 * WAIT: its home pushes its stream's chunk to the writer and notes the
 * writer's next round; once that round is written, every write the client
 * made before (on any shard: a cross-shard write's chunk reaches the
 * writer before its reply does) is at or before the stream's offset then,
 * the target.  The writer feeds REPLCONF GETACK * at its next tick, and
 * the home answers once enough replicas acknowledged the target, or at the
 * timeout.  Shards with WAITs are rung by the sender when an ACK comes and
 * by the writer when a round is done.
 *
 * Threading: `lock` guards the stream, the replicas and the sync's state
 * (the writer, the save's writer, the sender, a shard in SYNC/PSYNC, INFO,
 * ROLE: none of them holds it across a wait); shard 0's timer and the
 * shards' WAITs use atomics only.  A shard's WAITs are its own.
 */
#include "percore/primary.h"

#include "conn_internal.h"
#include "dispatch.h"
#include "reply_slot.h"
#include "shard_internal.h"

#include "percore/aof.h"
#include "percore/config.h"
#include "percore/log.h"
#include "percore/mem.h"
#include "percore/replica.h"
#include "percore/reply.h"
#include "percore/save.h"
#include "percore/util.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>
#include <urcu-qsbr.h>

#define PRIMARY_MAX_REPLICAS 64  /* replicas served at once */
#define KEEPALIVE_MS 1000        /* a newline to a replica waiting for its sync's file */
#define SENDER_TICK_MS 100

enum peer_state { PEER_WAIT_SYNC, PEER_WAIT_RDB, PEER_SEND_RDB, PEER_ONLINE };
static const char *const peer_state_names[] = {"wait_bgsave", "wait_bgsave", "send_bulk", "online"};

/* a replica (the sender's; under lock) */
struct peer {
    int fd;
    enum peer_state state;
    bool old_sync;         /* SYNC: no +FULLRESYNC line */
    bool dead;
    uint64_t gen;          /* the full sync it waits for, 0 none yet */
    long long sent;        /* the offset of the last stream byte it was sent (or its sync's cut) */
    long long ack;         /* REPLCONF ACK's offset */
    int64_t ack_ms;        /* when it last acknowledged (or came) */
    int64_t io_ms;         /* when it last took bytes */
    int64_t keepalive_ms;
    int rdb_fd;
    off_t rdb_off, rdb_size;
    char head[160];        /* a line for it before anything else (+FULLRESYNC, $size, newline) */
    size_t head_len, head_sent;
    char ip[64];
    int port;              /* REPLCONF listening-port */
    char in[1024];
    size_t in_len;
    int slot;              /* its acks[] entry */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char *p;
    size_t len, cap;
    long long base;        /* the offset of the byte before p[0] */
} stream;
static long long continue_from = LLONG_MAX; /* partial resyncs may start at or after this offset */
static char replid[41] = "0000000000000000000000000000000000000000";
static struct peer *peers[PRIMARY_MAX_REPLICAS];
static int npeers;
static uint64_t rdb_gen;           /* the last sync whose RDB is done */
static bool rdb_ok;
static int rdb_fd = -1;            /* its file (replicas sending it dup it) */
static off_t rdb_size;
static uint64_t cut_gen_locked;    /* the last sync whose cut came */
static long long cut_off;          /* and its offset */
static long long sync_full, sync_partial_ok, sync_partial_err;

atomic_bool primary_feed_on;
static _Alignas(128) atomic_llong fed_off;  /* stream.base + stream.len, for lock-free readers */
static atomic_bool getack_wanted;
static atomic_bool demoted;                 /* a replica now: nothing is fed, no replica served */
/* shard 0's timer and the sync's cut (atomics: no lock on a shard's loop) */
static _Alignas(128) atomic_bool sync_wanted; /* replicas wait for a sync no cut will serve */
static _Atomic uint64_t asked_gen, cut_gen;   /* the last __replsync sent, the last cut come */
static atomic_int online_replicas;

/* what WAIT and min-replicas read: per replica slot, its ack (-1 free) and when */
static struct ack_slot {
    _Alignas(64) _Atomic long long ack;
    _Atomic long long ack_ms;
} acks[PRIMARY_MAX_REPLICAS] = {[0 ... PRIMARY_MAX_REPLICAS - 1] = {-1, 0}};

/* WAIT */
struct waiter {
    struct conn *c;
    struct slot *s;
    uint64_t round;        /* the writer round that covers the client's writes */
    long long target;      /* the stream offset they end at, -1 not known yet */
    long long need;
    bool timed_out;
    struct event *timer;
    struct waiter *next;
};
_Alignas(128) atomic_int primary_waits;
static struct waiter **waits;     /* per shard, its own */
static struct wait_flag {
    _Alignas(64) atomic_int n;    /* the shard's WAITs: ring it on an ACK or a round */
} *wait_flags;
static int nshards;

static int wake_fd = -1;
static pthread_t sender;
static bool sender_running;       /* under lock: started by the first replica */
static atomic_bool sender_stop;

/* ---------------------------------------------------------------- helpers */

static void wake_sender(void)
{
    uint64_t one = 1;
    ssize_t rc = write(wake_fd, &one, sizeof one);
    (void)rc;
}

static void ring_waiting_shards(void)
{
    for (int i = 0; wait_flags && i < nshards; i++) {
        if (!atomic_load_explicit(&wait_flags[i].n, memory_order_relaxed))
            continue;
        struct shard *sh = shard_at(i);
        if (sh) {
            uint64_t one = 1;
            ssize_t rc = write(sh->doorbell_fd, &one, sizeof one);
            (void)rc;
        }
    }
}

static const char *peer_name(const struct peer *p, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s:%d", p->ip, p->port);
    return buf;
}

static void peer_line(struct peer *p, const char *line)
{
    size_t n = strlen(line);
    if (p->head_len + n <= sizeof p->head) {
        memcpy(p->head + p->head_len, line, n);
        p->head_len += n;
    }
}

/* under lock: the offset a replica still needs from, LLONG_MAX none */
static long long peer_hold(const struct peer *p)
{
    return p->state == PEER_WAIT_SYNC ? LLONG_MAX : p->sent;
}

static void peer_drop(struct peer *p, const char *why)
{
    char name[96];
    if (!p->dead)
        log_warn("%s %s", why, peer_name(p, name, sizeof name));
    p->dead = true;
}

/* under lock: bytes no replica needs and the backlog does not keep are let go */
static void stream_trim(const struct config *cfg)
{
    long long master = stream.base + (long long)stream.len;
    long long keep = master - cfg->repl_backlog_size;
    long long hard = cfg->obuf[OBUF_REPLICA].hard;
    for (int i = 0; i < npeers; i++) {
        long long h = peer_hold(peers[i]);
        if (h == LLONG_MAX || peers[i]->dead)
            continue;
        if (hard > 0 && master - h > hard) {
            peer_drop(peers[i], "Client scheduled to be closed ASAP for overcoming of output buffer limits: replica");
            continue;
        }
        if (h < keep)
            keep = h;
    }
    if (rdb_gen < cut_gen_locked && cut_off < keep) /* the sync under way's replicas start there */
        keep = cut_off;
    if (keep <= stream.base)
        return;
    size_t drop = (size_t)(keep - stream.base);
    if (drop > stream.len)
        drop = stream.len;
    if (drop < 65536 && drop * 2 < stream.len)
        return; /* let it pile up a little: one move for many rounds */
    memmove(stream.p, stream.p + drop, stream.len - drop);
    stream.len -= drop;
    stream.base += (long long)drop;
}

/* ---------------------------------------------------------------- the writer's side */

void primary_feed(const char *p, size_t n)
{
    if (atomic_load(&demoted) || n == 0)
        return;
    pthread_mutex_lock(&lock);
    if (stream.len + n > stream.cap) {
        stream.cap = (stream.len + n) * 2 + 65536;
        stream.p = mem_realloc(stream.p, stream.cap);
    }
    memcpy(stream.p + stream.len, p, n);
    stream.len += n;
    atomic_store(&fed_off, stream.base + (long long)stream.len);
    stream_trim(config_current());
    bool any = npeers > 0;
    pthread_mutex_unlock(&lock);
    if (any)
        wake_sender();
}

/* under lock: replicas waiting for a sync join the last one whose cut came, while the stream still holds
 * what followed its cut and its file is to come or was written (it may be written before the writer
 * reaches the cut): its RDB and the stream from its cut are the dataset now */
static void assign_waiting(void)
{
    bool unserved = false;
    bool joinable = cut_gen_locked != 0 && cut_off >= stream.base &&
                    (rdb_gen < cut_gen_locked || (rdb_gen == cut_gen_locked && rdb_ok));
    for (int i = 0; i < npeers; i++) {
        struct peer *p = peers[i];
        if (p->state != PEER_WAIT_SYNC || p->dead)
            continue;
        if (!joinable) {
            unserved = true;
            continue;
        }
        p->gen = cut_gen_locked;
        p->sent = cut_off;
        p->state = PEER_WAIT_RDB;
        if (!p->old_sync) {
            char line[128];
            snprintf(line, sizeof line, "+FULLRESYNC %s %lld\r\n", replid, cut_off);
            peer_line(p, line);
        }
    }
    if (unserved)
        atomic_store(&sync_wanted, true);
}

void primary_cut(uint64_t gen)
{
    pthread_mutex_lock(&lock);
    cut_gen_locked = gen;
    cut_off = stream.base + (long long)stream.len;
    if (continue_from == LLONG_MAX) /* the stream is whole from here on */
        continue_from = cut_off;
    atomic_store(&sync_wanted, false);
    assign_waiting();
    pthread_mutex_unlock(&lock);
    atomic_store(&cut_gen, gen);
    wake_sender();
}

void primary_writer_tick(void)
{
    static int64_t last_ping;
    if (!primary_feeding())
        return;
    int64_t now = util_ms_time();
    const struct config *cfg = config_current();
    if (atomic_load(&online_replicas) > 0 && now - last_ping >= (int64_t)cfg->repl_ping_replica_period * 1000) {
        static const char ping[] = "*1\r\n$4\r\nPING\r\n";
        primary_feed(ping, sizeof ping - 1);
        last_ping = now;
    }
    if (atomic_exchange(&getack_wanted, false)) {
        static const char getack[] = "*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n";
        primary_feed(getack, sizeof getack - 1);
    }
}

void primary_round_done(void)
{
    if (atomic_load_explicit(&primary_waits, memory_order_relaxed))
        ring_waiting_shards();
}

void primary_rdb_done(uint64_t gen, const char *path, bool ok)
{
    pthread_mutex_lock(&lock);
    if (rdb_fd >= 0)
        close(rdb_fd);
    rdb_fd = ok ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat st;
    rdb_ok = rdb_fd >= 0 && fstat(rdb_fd, &st) == 0;
    rdb_size = rdb_ok ? st.st_size : 0;
    rdb_gen = gen;
    pthread_mutex_unlock(&lock);
    wake_sender();
}

/* ---------------------------------------------------------------- the sender */

/* under lock: bytes owed to p now */
static bool peer_has_output(const struct peer *p)
{
    return p->head_sent < p->head_len || p->state == PEER_SEND_RDB ||
           (p->state == PEER_ONLINE && p->sent < stream.base + (long long)stream.len);
}

/* false: the socket failed (p is dropped) */
static bool write_some(struct peer *p, const char *b, size_t n, size_t *done)
{
    ssize_t w = write(p->fd, b, n);
    if (w > 0) {
        *done = (size_t)w;
        return true;
    }
    *done = 0;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return true;
    peer_drop(p, "Connection with replica lost (write error):");
    return false;
}

/* under lock: write what p is owed while its socket takes it */
static void peer_flush(struct peer *p, int64_t now)
{
    size_t done;
    while (p->head_sent < p->head_len) {
        if (!write_some(p, p->head + p->head_sent, p->head_len - p->head_sent, &done) || done == 0)
            return;
        p->head_sent += done;
        p->io_ms = now;
    }
    p->head_len = p->head_sent = 0;
    if (p->state == PEER_WAIT_RDB && rdb_gen >= p->gen) {
        char name[96];
        if (rdb_gen != p->gen || !rdb_ok) {
            peer_drop(p, "SYNC failed. BGSAVE child returned an error; replica");
            return;
        }
        p->rdb_fd = dup(rdb_fd);
        p->rdb_off = 0;
        p->rdb_size = rdb_size;
        p->state = PEER_SEND_RDB;
        char line[48];
        snprintf(line, sizeof line, "$%lld\r\n", (long long)rdb_size);
        peer_line(p, line);
        log_notice("Synchronization with replica %s: sending the RDB (%lld bytes)", peer_name(p, name, sizeof name),
                   (long long)rdb_size);
        peer_flush(p, now);
        return;
    }
    if (p->state == PEER_SEND_RDB) {
        while (p->rdb_off < p->rdb_size) {
            ssize_t w = sendfile(p->fd, p->rdb_fd, &p->rdb_off, (size_t)(p->rdb_size - p->rdb_off));
            if (w > 0) {
                p->io_ms = now;
                continue;
            }
            if (w < 0 && (errno == EAGAIN || errno == EINTR))
                return;
            peer_drop(p, "Connection with replica lost (sending the RDB):");
            return;
        }
        close(p->rdb_fd);
        p->rdb_fd = -1;
        p->state = PEER_ONLINE;
        p->ack_ms = now;
        char name[96];
        log_notice("Synchronization with replica %s succeeded", peer_name(p, name, sizeof name));
    }
    if (p->state != PEER_ONLINE)
        return;
    long long master = stream.base + (long long)stream.len;
    while (p->sent < master) {
        size_t at = (size_t)(p->sent - stream.base);
        if (!write_some(p, stream.p + at, stream.len - at, &done) || done == 0)
            return;
        p->sent += (long long)done;
        p->io_ms = now;
    }
}

/* one command from p's input at in[0..len): its argc and args (pointers into in); bytes used, 0 not
 * whole yet, -1 not RESP */
static long parse_command(const char *in, size_t len, int *argc, const char **argv, size_t *argl, int max)
{
    const char *end = in + len, *p = in;
    if (len == 0)
        return 0;
    if (*p == '\n' || *p == '\r') /* an empty line */
        return 1;
    if (*p != '*')
        return -1;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
        return len > 32 ? -1 : 0;
    long n = strtol(p + 1, NULL, 10);
    if (n < 0 || n > max)
        return -1;
    p = nl + 1;
    for (long i = 0; i < n; i++) {
        if (p >= end)
            return 0;
        if (*p != '$')
            return -1;
        nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return 0;
        long l = strtol(p + 1, NULL, 10);
        if (l < 0 || l > 256)
            return -1;
        p = nl + 1;
        if (end - p < l + 2)
            return 0;
        argv[i] = p;
        argl[i] = (size_t)l;
        p += l + 2;
    }
    *argc = (int)n;
    return p - in;
}

/* under lock: p's socket is readable: its REPLCONF ACKs */
static void peer_read(struct peer *p, int64_t now)
{
    ssize_t r = read(p->fd, p->in + p->in_len, sizeof p->in - p->in_len);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
        peer_drop(p, "Connection with replica lost:");
        return;
    }
    if (r < 0)
        return;
    p->in_len += (size_t)r;
    size_t pos = 0;
    for (;;) {
        int argc = 0;
        const char *argv[8];
        size_t argl[8];
        long used = parse_command(p->in + pos, p->in_len - pos, &argc, argv, argl, 8);
        if (used < 0) {
            peer_drop(p, "Protocol error from replica, closing it:");
            return;
        }
        if (used == 0)
            break;
        pos += (size_t)used;
        if (argc >= 3 && util_eq_nocase(argv[0], argl[0], "replconf") && util_eq_nocase(argv[1], argl[1], "ack")) {
            long long off;
            if (util_str_to_ll(argv[2], argl[2], &off) && off > p->ack) {
                p->ack = off;
                if (p->slot >= 0)
                    atomic_store(&acks[p->slot].ack, off);
            }
            p->ack_ms = now;
            if (p->slot >= 0)
                atomic_store(&acks[p->slot].ack_ms, now);
        }
    }
    memmove(p->in, p->in + pos, p->in_len - pos);
    p->in_len -= pos;
    if (p->in_len == sizeof p->in) {
        peer_drop(p, "Protocol error from replica (too long), closing it:");
        return;
    }
}

static void peer_free(struct peer *p)
{
    if (p->slot >= 0) {
        atomic_store(&acks[p->slot].ack, -1);
        atomic_store(&acks[p->slot].ack_ms, 0);
    }
    if (p->rdb_fd >= 0)
        close(p->rdb_fd);
    if (p->fd >= 0)
        close(p->fd);
    mem_release(p);
}

/* under lock: timeouts, keepalives, the dead let go; the online counted */
static void peers_upkeep(const struct config *cfg, int64_t now)
{
    int online = 0;
    for (int i = 0; i < npeers; i++) {
        struct peer *p = peers[i];
        if (p->dead)
            continue;
        if (p->state == PEER_ONLINE && now - p->ack_ms > (int64_t)cfg->repl_timeout * 1000)
            peer_drop(p, "Disconnecting timedout replica (streaming sync):");
        else if (p->state == PEER_SEND_RDB && now - p->io_ms > (int64_t)cfg->repl_timeout * 1000)
            peer_drop(p, "Disconnecting timedout replica (full sync):");
        else if (p->state <= PEER_WAIT_RDB && now - p->keepalive_ms >= KEEPALIVE_MS && p->head_len == 0) {
            peer_line(p, "\n"); /* Redis's replicationCron: newlines while the RDB is made */
            p->keepalive_ms = now;
        }
        if (p->state == PEER_ONLINE)
            online++;
    }
    int kept = 0;
    for (int i = 0; i < npeers; i++) {
        if (peers[i]->dead)
            peer_free(peers[i]);
        else
            peers[kept++] = peers[i];
    }
    npeers = kept;
    atomic_store(&online_replicas, online);
}

static void *sender_main(void *arg)
{
    (void)arg;
    rcu_register_thread(); /* it reads repl-timeout and the backlog's size */
    struct pollfd fds[PRIMARY_MAX_REPLICAS + 1];
    struct peer *polled[PRIMARY_MAX_REPLICAS];
    while (!atomic_load(&sender_stop)) {
        rcu_quiescent_state();
        const struct config *cfg = config_current();
        int64_t now = util_ms_time();
        pthread_mutex_lock(&lock);
        assign_waiting();
        for (int i = 0; i < npeers; i++)
            if (!peers[i]->dead)
                peer_flush(peers[i], now);
        peers_upkeep(cfg, now);
        stream_trim(cfg);
        int n = 0;
        fds[n++] = (struct pollfd){wake_fd, POLLIN, 0};
        for (int i = 0; i < npeers; i++) {
            polled[n - 1] = peers[i];
            fds[n++] = (struct pollfd){peers[i]->fd, (short)(POLLIN | (peer_has_output(peers[i]) ? POLLOUT : 0)), 0};
        }
        pthread_mutex_unlock(&lock);
        rcu_thread_offline();
        int ready = poll(fds, (nfds_t)n, SENDER_TICK_MS);
        rcu_thread_online();
        if (ready <= 0)
            continue;
        if (fds[0].revents) {
            uint64_t v;
            ssize_t rc = read(wake_fd, &v, sizeof v);
            (void)rc;
        }
        bool acked = false;
        now = util_ms_time();
        pthread_mutex_lock(&lock);
        for (int i = 1; i < n; i++) {
            struct peer *p = polled[i - 1];
            if (!p->dead && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                long long before = p->ack;
                peer_read(p, now);
                acked |= p->ack != before;
            }
        }
        pthread_mutex_unlock(&lock);
        if (acked && atomic_load(&primary_waits))
            ring_waiting_shards();
    }
    rcu_unregister_thread();
    return NULL;
}

/* a shard's SYNC/PSYNC: the replica's socket fd is the sender's from now on */
static void adopt(int fd, const char *ip, int port, bool psync, const char *id, size_t idlen, long long offset)
{
    struct peer *p = mem_calloc(1, sizeof(*p));
    p->fd = fd;
    p->rdb_fd = -1;
    p->slot = -1;
    p->ack = -1;
    p->port = port;
    p->old_sync = !psync;
    snprintf(p->ip, sizeof p->ip, "%s", ip);
    int64_t now = util_ms_time();
    p->ack_ms = p->io_ms = p->keepalive_ms = now;
    char name[96];
    peer_name(p, name, sizeof name);
    pthread_mutex_lock(&lock);
    if (npeers == PRIMARY_MAX_REPLICAS) {
        pthread_mutex_unlock(&lock);
        log_warn("Replica %s refused: %d replicas are served already", name, PRIMARY_MAX_REPLICAS);
        close(fd);
        mem_release(p);
        return;
    }
    for (int i = 0; i < PRIMARY_MAX_REPLICAS; i++) {
        long long free_slot = -1;
        if (atomic_compare_exchange_strong(&acks[i].ack, &free_slot, -2)) { /* taken: -2 until it acks */
            p->slot = i;
            atomic_store(&acks[i].ack_ms, now);
            break;
        }
    }
    if (!sender_running) { /* the first replica starts the sender (the thread waits for this lock) */
        atomic_store(&sender_stop, false);
        if (pthread_create(&sender, NULL, sender_main, NULL) != 0) {
            pthread_mutex_unlock(&lock);
            log_warn("Cannot start the replication sender thread: replica %s refused", name);
            if (p->slot >= 0)
                atomic_store(&acks[p->slot].ack, -1);
            close(fd);
            mem_release(p);
            return;
        }
        sender_running = true;
    }
    log_notice("Replica %s asks for synchronization", name);
    long long master = stream.base + (long long)stream.len;
    bool ours = psync && idlen == 40 && memcmp(id, replid, 40) == 0;
    if (ours && offset - 1 >= continue_from && offset - 1 >= stream.base && offset - 1 <= master) {
        char line[128];
        snprintf(line, sizeof line, "+CONTINUE %s\r\n", replid);
        peer_line(p, line);
        p->state = PEER_ONLINE;
        p->sent = offset - 1;
        sync_partial_ok++;
        log_notice("Partial resynchronization request from %s accepted. Sending %lld bytes of backlog starting "
                   "from offset %lld.",
                   name, master - (offset - 1), offset);
    } else {
        if (psync && !(idlen == 1 && id[0] == '?'))
            sync_partial_err++;
        sync_full++;
        if (psync)
            log_notice("Full resync requested by replica %s", name);
        p->state = PEER_WAIT_SYNC;
        atomic_store(&primary_feed_on, true); /* from here on every round is fed */
    }
    peers[npeers++] = p;
    assign_waiting();
    pthread_mutex_unlock(&lock);
    wake_sender();
}

/* ---------------------------------------------------------------- shard 0's timer: the sync's cut */

/* __replsync gen: a shard's part (save.c begins its snapshot and puts the cut in its stream) */
static void cmd_replsync_part(struct cmd_ctx *ctx)
{
    long long gen = 0;
    util_str_to_ll(ctx->argv[1].ptr, ctx->argv[1].len, &gen); /* argv is not NUL-terminated */
    atomic_store(&primary_feed_on, true);
    if (!save_sync_part(ctx, (uint64_t)gen)) /* a save under way: shard 0's timer asks again */
        atomic_store(&asked_gen, atomic_load(&cut_gen));
}

static const struct command replsync_command = {
    "__replsync", cmd_replsync_part, 2, CMD_INTERNAL | CMD_LOCKS_ALL, 0, 0, 0, ROUTE_FANOUT_OK, "",
};

static struct conn *cron_client;  /* shard 0's in-process client that sends __replsync (its replies dropped) */

static void cron_sink(void *arg, const char *bytes, size_t len)
{
    (void)arg;
    (void)len;
    if (!bytes) /* closed */
        cron_client = NULL;
}

void primary_cron(struct shard *self)
{
    /* one at a time: a sync whose first part began reaches its cut; one refused rolls asked_gen back */
    if (!atomic_load(&sync_wanted) || atomic_load(&asked_gen) != atomic_load(&cut_gen) || atomic_load(&demoted))
        return;
    if (!cron_client) {
        cron_client = conn_create(self, -1, cron_sink, NULL);
        cron_client->authenticated = true;
        snprintf(cron_client->peer, sizeof(cron_client->peer), "replication");
    }
    uint64_t gen = atomic_load(&asked_gen) + 1;
    atomic_store(&asked_gen, gen);
    char num[24];
    int nl = snprintf(num, sizeof num, "%llu", (unsigned long long)gen);
    log_notice("Starting BGSAVE for SYNC with target: disk");
    struct resp_arg argv[2] = {{replsync_command.name, strlen(replsync_command.name)}, {num, (size_t)nl}};
    conn_fanout_locked(cron_client, &replsync_command, 2, argv);
}


/* ---------------------------------------------------------------- SYNC, PSYNC */

static void cmd_sync(struct cmd_ctx *ctx)
{
    struct conn *c = ctx->conn;
    if (replica_now()) {
        reply_error(ctx->out, replica_link_up() ? "ERR Serving replicas while replicating a master is not supported: "
                                                  "replicate the master itself"
                                                : "NOMASTERLINK Can't SYNC while not connected with my master");
        return;
    }
    if (!c || c->fd < 0) {
        reply_error(ctx->out, "ERR SYNC needs a network connection");
        return;
    }
    long long offset = -1;
    bool psync = ctx->argc == 3;
    if (psync && !util_str_to_ll(ctx->argv[2].ptr, ctx->argv[2].len, &offset)) {
        reply_not_integer(ctx->out);
        return;
    }
    int fd = dup(c->fd);
    if (fd < 0) {
        reply_error(ctx->out, "ERR can't take the replica's socket");
        return;
    }
    char ip[64];
    snprintf(ip, sizeof ip, "%s", c->peer);
    char *colon = strrchr(ip, ':');
    if (colon)
        *colon = '\0';
    adopt(fd, ip, c->repl_port ? c->repl_port : 0, psync, psync ? ctx->argv[1].ptr : NULL,
          psync ? ctx->argv[1].len : 0, offset);
    conn_close_after_reply(c); /* no reply of its own: the sender answers on its copy of the socket */
}

void primary_note_listening_port(struct conn *c, int port)
{
    if (c)
        c->repl_port = port;
}

/* ---------------------------------------------------------------- WAIT */

static int acked_at(long long target)
{
    int n = 0;
    for (int i = 0; i < PRIMARY_MAX_REPLICAS; i++)
        if (atomic_load_explicit(&acks[i].ack, memory_order_relaxed) >= target)
            n++;
    return n;
}

bool primary_too_few_replicas(int to_write, int max_lag)
{
    if (to_write <= 0 || max_lag <= 0 || replica_now())
        return false;
    long long since = util_ms_time() - (long long)max_lag * 1000;
    int good = 0;
    for (int i = 0; i < PRIMARY_MAX_REPLICAS; i++)
        if (atomic_load_explicit(&acks[i].ack, memory_order_relaxed) >= 0 &&
            atomic_load_explicit(&acks[i].ack_ms, memory_order_relaxed) >= since)
            good++;
    return good < to_write;
}

static void waiter_free(struct shard *self, struct waiter *w)
{
    if (w->timer)
        event_free(w->timer);
    conn_unref(w->c);
    mem_release(w);
    atomic_fetch_sub(&wait_flags[self->index].n, 1);
    atomic_fetch_sub(&primary_waits, 1);
}

void primary_serve(struct shard *self)
{
    struct waiter **at = &waits[self->index];
    uint64_t done = aof_round_done();
    while (*at) {
        struct waiter *w = *at;
        if (w->target < 0 && (done >= w->round || w->timed_out)) {
            w->target = primary_offset();
            atomic_store(&getack_wanted, true);
            aof_wake();
        }
        int n = w->target >= 0 ? acked_at(w->target) : 0;
        if (!w->c->closed && !w->timed_out && (w->target < 0 || n < w->need)) {
            at = &w->next;
            continue;
        }
        *at = w->next;
        if (!w->c->closed) {
            reply_int(&w->s->reply, n);
            dispatch_slot_complete(w->c, w->s);
        }
        waiter_free(self, w);
    }
}

static void wait_timed_out(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct waiter *w = arg;
    w->timed_out = true;
    primary_serve(w->c->home);
}

static void cmd_wait(struct cmd_ctx *ctx)
{
    long long need, timeout;
    if (!util_str_to_ll(ctx->argv[1].ptr, ctx->argv[1].len, &need)) {
        reply_not_integer(ctx->out);
        return;
    }
    if (!util_str_to_ll(ctx->argv[2].ptr, ctx->argv[2].len, &timeout)) {
        reply_error(ctx->out, "ERR timeout is not an integer or out of range");
        return;
    }
    if (timeout < 0) {
        reply_error(ctx->out, "ERR timeout is negative");
        return;
    }
    if (replica_now()) {
        reply_error(ctx->out, "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 "
                              "if a replica is configured to be writable (which is not the default) writes to "
                              "replicas are just local and are not propagated.");
        return;
    }
    struct conn *c = ctx->conn;
    struct shard *self = c ? c->home : NULL;
    uint64_t round = 0;
    if (self && primary_feeding() && self->propagating) { /* its writes go to the writer now: their round */
        aof_hand_over(SHARD_STORE_SHARED ? 0 : ctx->shard);
        round = aof_next_round();
        aof_wake();
    }
    /* what is acknowledged already (Redis answers at once when it is enough, or inside a transaction) */
    long long known = round && aof_round_done() < round ? -1 : primary_offset();
    int n = known >= 0 ? acked_at(known) : 0;
    if (!c || conn_in_exec(c) || (known >= 0 && n >= need)) {
        reply_int(ctx->out, n);
        return;
    }
    struct waiter *w = mem_calloc(1, sizeof(*w));
    w->c = c;
    w->round = round;
    w->target = known;
    w->need = need;
    w->s = dispatch_slot_create(c, command_internal(CMD_I_UNLOCK)); /* its reply: a marker, no stats */
    w->s->barrier = true; /* as Redis's blocked client: nothing more is read meanwhile */
    c->inflight++;        /* held until answered (conn_unref) */
    if (timeout > 0) {
        w->timer = event_new(self->base, -1, 0, wait_timed_out, w);
        struct timeval tv = {timeout / 1000, (timeout % 1000) * 1000};
        event_add(w->timer, &tv);
    }
    w->next = waits[self->index];
    waits[self->index] = w;
    atomic_fetch_add(&wait_flags[self->index].n, 1);
    atomic_fetch_add(&primary_waits, 1);
    atomic_store(&getack_wanted, true);
    aof_wake();
}

/* ---------------------------------------------------------------- role, INFO, ROLE */

long long primary_offset(void) { return atomic_load(&fed_off); }

void primary_demote(void)
{
    atomic_store(&demoted, true);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < npeers; i++)
        peer_drop(peers[i], "Connection with replica closed: this server becomes a replica;");
    pthread_mutex_unlock(&lock);
    wake_sender();
}

long long primary_kill_replicas(void)
{
    long long n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < npeers; i++) {
        n += !peers[i]->dead;
        peer_drop(peers[i], "Replica dropped by CLIENT KILL:");
    }
    pthread_mutex_unlock(&lock);
    wake_sender();
    return n;
}

void primary_promote(long long offset)
{
    char id[41];
    replica_replid(id);
    pthread_mutex_lock(&lock);
    memcpy(replid, id, sizeof replid);
    stream.len = 0;
    stream.base = offset;
    continue_from = LLONG_MAX; /* shards may not have recorded all along: the next sync's cut */
    atomic_store(&fed_off, offset);
    pthread_mutex_unlock(&lock);
    atomic_store(&demoted, false);
}

size_t primary_info(char *buf, size_t cap)
{
    int64_t now = util_ms_time();
    size_t n = 0;
#define OUT(...) (n += (size_t)snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, __VA_ARGS__))
    pthread_mutex_lock(&lock);
    int shown = 0;
    for (int i = 0; i < npeers; i++)
        shown += !peers[i]->dead;
    OUT("connected_slaves:%d\r\n", shown);
    shown = 0;
    for (int i = 0; i < npeers; i++) {
        const struct peer *p = peers[i];
        if (p->dead)
            continue;
        OUT("slave%d:ip=%s,port=%d,state=%s,offset=%lld,lag=%lld\r\n", shown++, p->ip, p->port,
            peer_state_names[p->state], p->ack < 0 ? 0 : p->ack, (long long)(now - p->ack_ms) / 1000);
    }
    pthread_mutex_unlock(&lock);
#undef OUT
    return n < cap ? n : cap;
}

void primary_backlog(struct primary_backlog *out)
{
    pthread_mutex_lock(&lock);
    long long size = config_current()->repl_backlog_size;
    long long hist = (long long)stream.len < size ? (long long)stream.len : size;
    *out = (struct primary_backlog){
        .active = primary_feeding(),
        .size = size,
        .first_byte = primary_feeding() ? stream.base + (long long)stream.len - hist + 1 : 0,
        .histlen = primary_feeding() ? hist : 0,
        .sync_full = sync_full,
        .sync_partial_ok = sync_partial_ok,
        .sync_partial_err = sync_partial_err,
    };
    pthread_mutex_unlock(&lock);
}

void primary_role_replicas(struct reply *out)
{
    pthread_mutex_lock(&lock);
    int shown = 0;
    for (int i = 0; i < npeers; i++)
        shown += peers[i]->state == PEER_ONLINE && !peers[i]->dead;
    reply_array(out, shown);
    for (int i = 0; i < npeers; i++) {
        const struct peer *p = peers[i];
        if (p->state != PEER_ONLINE || p->dead)
            continue;
        char port[16], off[24];
        snprintf(port, sizeof port, "%d", p->port);
        snprintf(off, sizeof off, "%lld", p->ack < 0 ? 0 : p->ack);
        reply_array(out, 3);
        reply_bulk_cstr(out, p->ip);
        reply_bulk_cstr(out, port);
        reply_bulk_cstr(out, off);
    }
    pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------- setup */

int primary_setup(int shards)
{
    nshards = shards;
    waits = mem_calloc((size_t)shards, sizeof(*waits));
    wait_flags = mem_calloc_aligned((size_t)shards, sizeof(*wait_flags), _Alignof(struct wait_flag));
    for (int i = 0; i < PRIMARY_MAX_REPLICAS; i++) {
        atomic_store(&acks[i].ack, -1);
        atomic_store(&acks[i].ack_ms, 0);
    }
    atomic_store(&primary_feed_on, false);
    atomic_store(&primary_waits, 0);
    atomic_store(&sync_wanted, false);
    atomic_store(&asked_gen, 0);
    atomic_store(&cut_gen, 0);
    cut_gen_locked = rdb_gen = 0;
    sync_full = sync_partial_ok = sync_partial_err = 0;
    primary_promote(0);
    atomic_store(&demoted, replica_now());
    wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); /* the sender starts with the first replica (adopt) */
    return wake_fd >= 0 ? 0 : -1;
}

void primary_teardown(void)
{
    pthread_mutex_lock(&lock);
    bool running = sender_running;
    sender_running = false;
    pthread_mutex_unlock(&lock);
    if (running) {
        atomic_store(&sender_stop, true);
        wake_sender();
        pthread_join(sender, NULL);
    }
    for (int i = 0; i < npeers; i++)
        peer_free(peers[i]);
    npeers = 0;
    if (rdb_fd >= 0)
        close(rdb_fd);
    rdb_fd = -1;
    mem_release(stream.p);
    stream.p = NULL;
    stream.len = stream.cap = 0;
    for (int i = 0; waits && i < nshards; i++) { /* their connections went with their shards */
        while (waits[i]) {
            struct waiter *w = waits[i];
            waits[i] = w->next;
            mem_release(w);
        }
    }
    mem_release(waits);
    waits = NULL;
    mem_release(wait_flags);
    wait_flags = NULL;
    if (wake_fd >= 0)
        close(wake_fd);
    wake_fd = -1;
}

#define SYNC_FLAGS (CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_MULTI)

const struct command command_family_primary[] = {
    {"sync", cmd_sync, 1, SYNC_FLAGS, 0, 0, 0, ROUTE_HOME, "@admin @slow @dangerous"},
    {"psync", cmd_sync, -3, SYNC_FLAGS, 0, 0, 0, ROUTE_HOME, "@admin @slow @dangerous"},
    {"wait", cmd_wait, 3, CMD_NOSCRIPT, 0, 0, 0, ROUTE_HOME, "@slow @connection"},
};
const size_t command_family_primary_count = sizeof command_family_primary / sizeof command_family_primary[0];
