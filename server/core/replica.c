/*
 * replica: this server as a replica of a Redis master (see percore/replica.h).
 *
 * The link thread.  One thread, made at start, sleeps until REPLICAOF (or
 * `replicaof` in the config) names a master.  It then owns the link while
 * it is set up, with blocking reads under time limits (it is no shard: a
 * shard's loop never waits for the network or the disk): connect, PING,
 * AUTH (masterauth, masteruser), REPLCONF listening-port and capa eof
 * psync2, then PSYNC with the master's replication id and the offset it
 * reached (a partial resync, +CONTINUE) or `? -1` (+FULLRESYNC).  A full
 * sync's RDB, sent with a length or between EOF markers (a diskless
 * master), goes to temp-<time>.<pid>.rdb in dir; load_replace() empties
 * every shard and loads it, each key into its owner shard's store, with
 * Redis's -LOADING meanwhile; the file then becomes dbfilename, as Redis
 * keeps it.
 *
 * The stream.  The socket, with any bytes read past the RDB, is then handed
 * to shard 0 (`handover`, and its doorbell), whose replica_cron makes it a
 * connection, the master client: its commands run through the funnel as any
 * client's (a cross-shard one through the handoff, MULTI/EXEC as one
 * transaction), exempt from -READONLY, -LOADING and AUTH, their replies
 * dropped (CLIENT REPLY OFF).  Its offset is the stream bytes whose
 * commands were dispatched: the master's offset when it was handed over,
 * plus what was read, less what is still buffered.  Shard 0 sends REPLCONF
 * ACK <offset> every second and on REPLCONF GETACK (whose own bytes it
 * does not count yet, as Redis), and drops a link silent past repl-timeout.
 * When the connection closes, shard 0 records the offset and wakes the link
 * thread, which connects again and asks to continue from there.
 *
 * A replica does not expire keys on its own clock: shards skip active
 * expiry while replica_active is up (shard.c); its master's DELs remove
 * them.  REPLICAOF NO ONE keeps the data, and the server becomes a master
 * with a new replication id, the old one as its second (Redis's
 * shiftReplicationId), so a replica of it could continue.
 *
 * Threading: `repl` is under `lock` (REPLICAOF and INFO on any shard thread,
 * the link thread, shard 0); `cond` wakes the link thread.  The master
 * client is shard 0's alone; INFO reads its offset from `live_offset` (an
 * atomic shard 0 stores after each read) and its last read time from `repl`
 * (copied on shard 0's timer).  replica_active is read on the command path
 * (a relaxed load of a flag on its own cache line, written by REPLICAOF).
 */
#include "percore/replica.h"

#include "conn_internal.h"
#include "shard_internal.h"

#include "percore/config.h"
#include "percore/load.h"
#include "percore/log.h"
#include "percore/mem.h"
#include "percore/primary.h"
#include "percore/reply.h"
#include "percore/store.h"
#include "percore/util.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <urcu-qsbr.h>

#define LINK_BUF (64 * 1024)
#define LINK_STEP_MS 100     /* a blocking wait looks at whether the link is still wanted this often */
#define LINK_RETRY_MS 1000   /* between two attempts to reach the master */
#define ACK_PERIOD_MS 1000   /* REPLCONF ACK, as Redis's replicationCron */

_Alignas(128) atomic_bool replica_active;
atomic_uint_least64_t obeyed_client = UINT64_MAX; /* beside it: all three read-mostly */
atomic_bool replica_link;
const char replica_readonly_error[] = "-READONLY You can't write against a read only replica.";

enum link_state { /* ROLE's words */
    LINK_NONE,       /* a master */
    LINK_CONNECT,    /* to connect */
    LINK_CONNECTING, /* connecting, or the handshake */
    LINK_SYNC,       /* receiving or loading the full sync */
    LINK_CONNECTED,  /* the stream flows */
};
static const char *const state_names[] = {"none", "connect", "connecting", "sync", "connected"};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct {
    char host[256];
    int port;                 /* 0: a master */
    uint64_t epoch;           /* bumped by every REPLICAOF: a link of an older one is dropped */
    enum link_state state;
    char replid[41];          /* ours as a master; the master's as a replica */
    char replid2[41];         /* the one before (REPLICAOF NO ONE), "000..." none */
    long long offset;         /* the stream offset reached (a replica's, last recorded) */
    long long second_offset;  /* where replid2 ends, -1 none */
    bool have_master;         /* replid/offset are a master's we synced with: PSYNC may continue */
    bool lost;                /* shard 0: the master client closed */
    long long down_since_ms;  /* the link went down (INFO master_link_down_since_seconds), 0 never up */
    long long last_io_ms;     /* the master client's last read, as shard 0 last saw it */
    long long sync_total;     /* a full sync's size (-1: EOF-delimited), bytes received so far */
    long long sync_read;
    long long sync_last_io_ms;
    bool stopping;
} repl = {.second_offset = -1};

/* the link the link thread handed to shard 0, taken by replica_cron (under lock) */
static struct {
    int fd;                   /* -1 none */
    uint64_t epoch;
    long long offset;
    char *bytes;              /* read past the RDB: the stream's first bytes */
    size_t len;
} handover = {.fd = -1};

/* the master client's offset, as shard 0 last read its input (INFO, ROLE: any thread) */
static _Alignas(128) atomic_llong live_offset;

/* something for shard 0 to do at once (a link handed over, a master no longer wanted): its doorbell looks */
static _Alignas(128) atomic_bool poke;

/* shard 0's own */
static struct conn *master;          /* the master client, NULL none */
static uint64_t master_epoch;
static long long master_base;        /* the offset when it was handed over */
static long long last_ack_ms;

static pthread_t link_thread;
static bool link_started;

static const char zero_id[] = "0000000000000000000000000000000000000000";

static void random_id(char out[41])
{
    unsigned char raw[20];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
        unsigned long long x = (unsigned long long)util_mono_ns() ^ ((unsigned long long)getpid() << 32);
        for (size_t i = 0; i < sizeof raw; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            raw[i] = (unsigned char)(x >> 56);
        }
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

static void ring_shard0(void)
{
    atomic_store(&poke, true);
    struct shard *s = shard_at(0);
    if (s) {
        uint64_t one = 1;
        ssize_t rc = write(s->doorbell_fd, &one, sizeof one);
        (void)rc;
    }
}

/* ---------------------------------------------------------------- the link thread's I/O */

struct link {
    int fd;
    uint64_t epoch;
    char buf[LINK_BUF];
    size_t pos, len;
};

/* the link thread's link is still the one wanted */
static bool link_wanted(uint64_t epoch)
{
    pthread_mutex_lock(&lock);
    bool ok = !repl.stopping && repl.epoch == epoch && repl.port != 0;
    pthread_mutex_unlock(&lock);
    return ok;
}

/* wait for fd to be ready for `events`, up to ms; 1 ready, 0 timed out or no longer wanted, -1 error */
static int link_wait(struct link *l, short events, long long ms)
{
    long long deadline = util_ms_time() + ms;
    for (;;) {
        if (!link_wanted(l->epoch))
            return 0;
        long long left = deadline - util_ms_time();
        if (left <= 0)
            return 0;
        struct pollfd p = {l->fd, events, 0};
        int rc = poll(&p, 1, (int)(left < LINK_STEP_MS ? left : LINK_STEP_MS));
        if (rc > 0)
            return 1;
        if (rc < 0 && errno != EINTR)
            return -1;
    }
}

/* more bytes into buf; false: closed, an error, silence past timeout_ms, or no longer wanted */
static bool link_fill(struct link *l, long long timeout_ms)
{
    if (l->pos > 0 && l->pos == l->len)
        l->pos = l->len = 0;
    if (l->len == sizeof l->buf) {
        memmove(l->buf, l->buf + l->pos, l->len - l->pos);
        l->len -= l->pos;
        l->pos = 0;
    }
    if (link_wait(l, POLLIN, timeout_ms) != 1)
        return false;
    ssize_t n = read(l->fd, l->buf + l->len, sizeof l->buf - l->len);
    if (n <= 0)
        return false;
    l->len += (size_t)n;
    pthread_mutex_lock(&lock);
    repl.sync_last_io_ms = util_ms_time();
    pthread_mutex_unlock(&lock);
    return true;
}

/* the next line without its CRLF into out; false as link_fill */
static bool link_line(struct link *l, char *out, size_t cap, long long timeout_ms)
{
    for (;;) {
        char *nl = memchr(l->buf + l->pos, '\n', l->len - l->pos);
        if (nl) {
            size_t n = (size_t)(nl - (l->buf + l->pos));
            size_t take = n > 0 && nl[-1] == '\r' ? n - 1 : n;
            if (take >= cap)
                take = cap - 1;
            memcpy(out, l->buf + l->pos, take);
            out[take] = '\0';
            l->pos += n + 1;
            return true;
        }
        if (l->len - l->pos >= sizeof l->buf / 2) /* no line is that long */
            return false;
        if (!link_fill(l, timeout_ms))
            return false;
    }
}

static bool link_write(struct link *l, const char *p, size_t n, long long timeout_ms)
{
    while (n > 0) {
        if (link_wait(l, POLLOUT, timeout_ms) != 1)
            return false;
        ssize_t w = write(l->fd, p, n);
        if (w < 0 && errno != EINTR && errno != EAGAIN)
            return false;
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        }
    }
    return true;
}

/* argv as a RESP command, then its one-line reply into reply; false: the link failed */
static bool link_command(struct link *l, int argc, const char *const *argv, char *reply, size_t cap,
                         long long timeout_ms)
{
    char cmd[2048];
    size_t off = (size_t)snprintf(cmd, sizeof cmd, "*%d\r\n", argc);
    for (int i = 0; i < argc && off < sizeof cmd; i++)
        off += (size_t)snprintf(cmd + off, sizeof cmd - off, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    if (off >= sizeof cmd)
        return false;
    return link_write(l, cmd, off, timeout_ms) && link_line(l, reply, cap, timeout_ms);
}

/* a TCP connection to host:port, or -1 (logged) */
static int link_connect(const char *host, int port, uint64_t epoch, long long timeout_ms)
{
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        log_warn("Unable to connect to MASTER: %s", gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) {
            struct link probe = {.fd = fd, .epoch = epoch};
            int err = 0;
            socklen_t el = sizeof err;
            if (link_wait(&probe, POLLOUT, timeout_ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 &&
                err == 0)
                break;
            errno = err ? err : ETIMEDOUT;
        }
        log_warn("Unable to connect to MASTER: %s", strerror(errno));
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    }
    return fd;
}

/* ---------------------------------------------------------------- the link thread */

/* what the link needs of the config, copied while online */
struct link_conf {
    char host[256];
    int port;
    char auth[512];
    char user[256];
    char dir[4096];
    char dbfilename[1024];
    int my_port;
    long long timeout_ms;
    bool appendonly;
};

static void link_conf_read(struct link_conf *lc)
{
    rcu_thread_online();
    const struct config *cfg = config_current();
    snprintf(lc->auth, sizeof lc->auth, "%s", cfg->masterauth ? cfg->masterauth : "");
    snprintf(lc->user, sizeof lc->user, "%s", cfg->masteruser ? cfg->masteruser : "");
    snprintf(lc->dir, sizeof lc->dir, "%s", cfg->dir && cfg->dir[0] ? cfg->dir : ".");
    snprintf(lc->dbfilename, sizeof lc->dbfilename, "%s", cfg->dbfilename);
    lc->my_port = cfg->port;
    lc->timeout_ms = (long long)cfg->repl_timeout * 1000;
    lc->appendonly = cfg->appendonly;
    rcu_thread_offline();
}

static void set_state(uint64_t epoch, enum link_state st)
{
    pthread_mutex_lock(&lock);
    if (repl.epoch == epoch)
        repl.state = st;
    pthread_mutex_unlock(&lock);
}

/* the full sync's payload into a temp file, then into the shards; false: the link goes */
static bool link_full_sync(struct link *l, const struct link_conf *lc)
{
    char line[256];
    do { /* a master preparing the RDB sends newlines to keep the link alive */
        if (!link_line(l, line, sizeof line, lc->timeout_ms)) {
            log_warn("I/O error reading bulk count from MASTER: %s", "connection lost or timed out");
            return false;
        }
    } while (line[0] == '\0');
    if (line[0] == '-') {
        log_warn("MASTER aborted replication with an error: %s", line + 1);
        return false;
    }
    char eof_mark[41] = "";
    long long total = -1;
    if (strncmp(line, "$EOF:", 5) == 0 && strlen(line + 5) == 40) {
        memcpy(eof_mark, line + 5, 41);
        log_notice("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk");
    } else if (line[0] == '$' && (total = strtoll(line + 1, NULL, 10)) >= 0) {
        log_notice("MASTER <-> REPLICA sync: receiving %lld bytes from master to disk", total);
    } else {
        log_warn("Bad protocol from MASTER, the first byte is not '$' (we received '%s'), are you sure the host "
                 "and port are right?",
                 line);
        return false;
    }
    char tmp[8192], final[8192];
    snprintf(tmp, sizeof tmp, "%s/temp-%lld.%d.rdb", lc->dir, util_ms_time() / 1000, (int)getpid());
    snprintf(final, sizeof final, "%s/%s", lc->dir, lc->dbfilename);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_warn("Opening the temp file needed for MASTER <-> REPLICA synchronization: %s", strerror(errno));
        return false;
    }
    pthread_mutex_lock(&lock);
    repl.sync_total = total;
    repl.sync_read = 0;
    pthread_mutex_unlock(&lock);
    long long got = 0;
    char tail[40];     /* EOF-delimited: the last 40 bytes written, to find the mark */
    size_t tail_len = 0;
    bool ok = true, done = false;
    while (ok && !done) {
        if (l->pos == l->len && !link_fill(l, lc->timeout_ms)) {
            log_warn("I/O error trying to sync with MASTER: connection lost or timed out");
            ok = false;
            break;
        }
        size_t n = l->len - l->pos;
        if (total >= 0 && (long long)n > total - got)
            n = (size_t)(total - got);
        if (write(fd, l->buf + l->pos, n) != (ssize_t)n) {
            log_warn("Write error or short write writing to the DB dump file needed for MASTER <-> REPLICA "
                     "synchronization: %s",
                     strerror(errno));
            ok = false;
            break;
        }
        if (n >= sizeof tail) { /* the last 40 bytes so far */
            memcpy(tail, l->buf + l->pos + n - sizeof tail, sizeof tail);
            tail_len = sizeof tail;
        } else {
            size_t keep = tail_len + n > sizeof tail ? sizeof tail - n : tail_len;
            memmove(tail, tail + tail_len - keep, keep);
            memcpy(tail + keep, l->buf + l->pos, n);
            tail_len = keep + n;
        }
        l->pos += n;
        got += (long long)n;
        pthread_mutex_lock(&lock);
        repl.sync_read = got;
        pthread_mutex_unlock(&lock);
        done = total >= 0 ? got == total : tail_len == 40 && memcmp(tail, eof_mark, 40) == 0;
    }
    if (ok && total < 0 && ftruncate(fd, (off_t)(got - 40)) != 0)
        ok = false;
    if (ok && fsync(fd) != 0)
        ok = false;
    close(fd);
    if (!ok) {
        unlink(tmp);
        return false;
    }
    log_notice("MASTER <-> REPLICA sync: Flushing old data");
    log_notice("MASTER <-> REPLICA sync: Loading DB in memory");
    int rc = load_replace(tmp, lc->appendonly);
    if (rc < 0) {
        unlink(tmp);
        return false;
    }
    if (rename(tmp, final) != 0) {
        log_warn("Failed trying to rename the temp DB into %s in MASTER <-> REPLICA synchronization: %s",
                 lc->dbfilename, strerror(errno));
        unlink(tmp);
    }
    log_notice("MASTER <-> REPLICA sync: Finished with success");
    return true;
}

/* one session with the master: handshake, sync, handover; returns when the link is lost or unwanted */
static void link_session(uint64_t epoch)
{
    struct link_conf lc;
    link_conf_read(&lc);
    pthread_mutex_lock(&lock);
    snprintf(lc.host, sizeof lc.host, "%s", repl.host);
    lc.port = repl.port;
    char replid[41];
    memcpy(replid, repl.replid, sizeof replid);
    long long offset = repl.offset;
    bool have_master = repl.have_master;
    pthread_mutex_unlock(&lock);

    set_state(epoch, LINK_CONNECTING);
    log_notice("Connecting to MASTER %s:%d", lc.host, lc.port);
    struct link *l = mem_calloc(1, sizeof(*l));
    l->epoch = epoch;
    l->fd = link_connect(lc.host, lc.port, epoch, lc.timeout_ms);
    if (l->fd < 0)
        goto fail;
    log_notice("MASTER <-> REPLICA sync started");
    char reply[512];
    const char *ping[] = {"PING"};
    if (!link_command(l, 1, ping, reply, sizeof reply, lc.timeout_ms))
        goto io_error;
    if (reply[0] == '-' && strncmp(reply, "-NOAUTH", 7) != 0 && strncmp(reply, "-NOPERM", 7) != 0 &&
        strncmp(reply, "-ERR operation not permitted", 28) != 0) {
        log_warn("Error reply to PING from master: '%s'", reply);
        goto fail;
    }
    log_notice("Master replied to PING, replication can continue...");
    if (lc.auth[0]) {
        const char *auth_user[] = {"AUTH", lc.user, lc.auth}, *auth_default[] = {"AUTH", lc.auth};
        if (!link_command(l, lc.user[0] ? 3 : 2, lc.user[0] ? auth_user : auth_default, reply, sizeof reply,
                          lc.timeout_ms))
            goto io_error;
        if (reply[0] == '-') {
            log_warn("Unable to AUTH to MASTER: %s", reply);
            goto fail;
        }
    }
    char port[16];
    snprintf(port, sizeof port, "%d", lc.my_port);
    const char *lp[] = {"REPLCONF", "listening-port", port};
    if (!link_command(l, 3, lp, reply, sizeof reply, lc.timeout_ms))
        goto io_error;
    if (reply[0] == '-')
        log_notice("(Non critical) Master does not understand REPLCONF listening-port: %s", reply);
    const char *capa[] = {"REPLCONF", "capa", "eof", "capa", "psync2"};
    if (!link_command(l, 5, capa, reply, sizeof reply, lc.timeout_ms))
        goto io_error;
    if (reply[0] == '-')
        log_notice("(Non critical) Master does not understand REPLCONF capa: %s", reply);
    char off[32];
    snprintf(off, sizeof off, "%lld", have_master ? offset + 1 : -1);
    const char *psync[] = {"PSYNC", have_master ? replid : "?", off};
    if (have_master)
        log_notice("Trying a partial resynchronization (request %s:%s).", replid, off);
    else
        log_notice("Partial resynchronization not possible (no cached master)");
    if (!link_command(l, 3, psync, reply, sizeof reply, lc.timeout_ms))
        goto io_error;
    while (reply[0] == '\0') /* newlines keep the link alive until the master replies */
        if (!link_line(l, reply, sizeof reply, lc.timeout_ms))
            goto io_error;
    set_state(epoch, LINK_SYNC);
    if (strncmp(reply, "+FULLRESYNC ", 12) == 0) {
        char id[41] = "";
        long long moff = -1;
        if (sscanf(reply + 12, "%40s %lld", id, &moff) != 2 || strlen(id) != 40) {
            log_warn("Master replied with wrong +FULLRESYNC syntax.");
            goto fail;
        }
        log_notice("Full resync from master: %s:%lld", id, moff);
        if (!link_full_sync(l, &lc) || !link_wanted(epoch))
            goto fail;
        pthread_mutex_lock(&lock);
        memcpy(repl.replid, id, sizeof id);
        memcpy(repl.replid2, zero_id, sizeof zero_id);
        repl.second_offset = -1;
        repl.offset = offset = moff;
        repl.have_master = true;
        pthread_mutex_unlock(&lock);
    } else if (strncmp(reply, "+CONTINUE", 9) == 0) {
        char id[41] = "";
        if (sscanf(reply + 9, " %40s", id) == 1 && strlen(id) == 40 && strcmp(id, replid) != 0) {
            pthread_mutex_lock(&lock); /* the master's id changed (a failover): the old one is our second */
            memcpy(repl.replid2, repl.replid, sizeof repl.replid2);
            repl.second_offset = offset + 1;
            memcpy(repl.replid, id, sizeof id);
            pthread_mutex_unlock(&lock);
            log_notice("Master replication ID changed to %s", id);
        }
        log_notice("Successful partial resynchronization with master.");
        log_notice("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
    } else {
        if (strncmp(reply, "-NOMASTERLINK", 13) == 0 || strncmp(reply, "-LOADING", 8) == 0)
            log_notice("Master is currently unable to PSYNC but should be in the future: %s", reply);
        else
            log_warn("Unexpected reply to PSYNC from master: %s", reply);
        goto fail;
    }
    /* the first ACK now: a diskless master puts the replica online on it */
    char ack[64];
    snprintf(ack, sizeof ack, "%lld", offset);
    const char *ackv[] = {"REPLCONF", "ACK", ack};
    char cmd[128];
    int cl = snprintf(cmd, sizeof cmd, "*3\r\n$8\r\n%s\r\n$3\r\n%s\r\n$%zu\r\n%s\r\n", ackv[0], ackv[1], strlen(ack), ack);
    if (!link_write(l, cmd, (size_t)cl, lc.timeout_ms))
        goto io_error;
    pthread_mutex_lock(&lock);
    if (repl.epoch != epoch || repl.stopping) {
        pthread_mutex_unlock(&lock);
        goto fail;
    }
    handover.fd = l->fd;
    handover.epoch = epoch;
    handover.offset = offset;
    handover.len = l->len - l->pos;
    handover.bytes = handover.len ? mem_alloc(handover.len) : NULL;
    if (handover.len)
        memcpy(handover.bytes, l->buf + l->pos, handover.len);
    l->fd = -1;
    repl.lost = false;
    pthread_mutex_unlock(&lock);
    ring_shard0();
    mem_release(l);
    /* the stream is shard 0's now: wait until it is lost or no longer wanted */
    pthread_mutex_lock(&lock);
    while (!repl.lost && repl.epoch == epoch && !repl.stopping)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return;

io_error:
    log_warn("Master did not respond to the handshake or closed the connection: %s", strerror(errno));
fail:
    if (l->fd >= 0)
        close(l->fd);
    mem_release(l);
    pthread_mutex_lock(&lock);
    if (repl.epoch == epoch && !repl.stopping) {
        repl.state = LINK_CONNECT;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += LINK_RETRY_MS / 1000;
        pthread_cond_timedwait(&cond, &lock, &ts);
    }
    pthread_mutex_unlock(&lock);
}

static void *link_main(void *arg)
{
    (void)arg;
    rcu_register_thread();
    rcu_thread_offline();
    pthread_mutex_lock(&lock);
    while (!repl.stopping) {
        if (repl.port == 0 || load_in_progress()) { /* a master; or the start's load first */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += LINK_STEP_MS * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&cond, &lock, &ts);
            continue;
        }
        uint64_t epoch = repl.epoch;
        pthread_mutex_unlock(&lock);
        link_session(epoch);
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    rcu_unregister_thread();
    return NULL;
}

/* ---------------------------------------------------------------- shard 0: the master client */

static long long master_offset(const struct conn *c)
{
    return master_base + (long long)c->bytes_in - (long long)(c->rlen - c->rpos);
}

static void master_ack(struct conn *c, long long offset)
{
    char num[32], cmd[96];
    int nl = snprintf(num, sizeof num, "%lld", offset);
    int n = snprintf(cmd, sizeof cmd, "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$%d\r\n%s\r\n", nl, num);
    reply_raw(&c->out, cmd, (size_t)n);
    shard_mark_dirty(c);
}

void replica_poked(struct shard *self)
{
    if (self->index == 0 && atomic_load_explicit(&poke, memory_order_relaxed) && atomic_exchange(&poke, false))
        replica_cron(self);
}

void replica_cron(struct shard *self)
{
    if (self->index != 0)
        return;
    int64_t now = self->now;
    pthread_mutex_lock(&lock);
    int fd = handover.fd; /* the link thread handed the stream over */
    uint64_t epoch = handover.epoch;
    long long offset = handover.offset;
    char *bytes = handover.bytes;
    size_t len = handover.len;
    handover.fd = -1;
    handover.bytes = NULL;
    handover.len = 0;
    pthread_mutex_unlock(&lock);
    if (fd >= 0) {
        if (master) /* an older link (replica_conn_closed takes the lock) */
            conn_close(master);
        struct conn *c = conn_adopt(self, fd, NULL);
        c->repl_master = true;
        c->authenticated = true;
        c->reply = CONN_REPLY_OFF;
        c->bytes_in = len; /* the bytes read past the RDB count as read */
        master = c;
        obey_client(c->id);
        atomic_store_explicit(&replica_link, true, memory_order_relaxed);
        master_epoch = epoch;
        master_base = offset;
        last_ack_ms = 0;
        pthread_mutex_lock(&lock);
        repl.state = LINK_CONNECTED;
        repl.last_io_ms = now;
        atomic_store_explicit(&live_offset, offset, memory_order_relaxed);
        pthread_mutex_unlock(&lock);
        conn_take_input(c, bytes, len);
        replica_master_read(c);
    }
    mem_release(bytes);
    pthread_mutex_lock(&lock);
    struct conn *c = master;
    bool unwanted = c && (repl.epoch != master_epoch || repl.stopping);
    if (c)
        repl.last_io_ms = c->last_interaction;
    pthread_mutex_unlock(&lock);
    if (!c)
        return;
    if (unwanted) {
        conn_close(c);
        return;
    }
    const struct config *cfg = config_current();
    if (now - c->last_interaction > (int64_t)cfg->repl_timeout * 1000) {
        log_warn("MASTER timeout: no data nor PING received...");
        conn_close(c);
        return;
    }
    if (now - last_ack_ms >= ACK_PERIOD_MS) {
        last_ack_ms = now;
        master_ack(c, master_offset(c));
    }
}

void replica_master_read(struct conn *c)
{
    if (c == master)
        atomic_store_explicit(&live_offset, master_offset(c), memory_order_relaxed);
}

void replica_conn_closed(struct conn *c)
{
    if (c != master)
        return;
    long long off = master_offset(c);
    master = NULL;
    obey_client(UINT64_MAX);
    atomic_store_explicit(&replica_link, false, memory_order_relaxed);
    bool shutting_down = atomic_load_explicit(&c->home->stopping, memory_order_relaxed);
    pthread_mutex_lock(&lock);
    if (master_epoch == repl.epoch && !shutting_down) { /* shutting down: the link thread connects no more */
        repl.offset = off;
        repl.lost = true;
        repl.state = repl.port ? LINK_CONNECT : LINK_NONE;
        repl.down_since_ms = util_ms_time();
        if (repl.port)
            log_notice("Connection with master lost.");
        pthread_cond_broadcast(&cond);
    }
    pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------- commands and INFO */

/* under lock: become a replica of host:port (port 0: a master again) */
static void become(const char *host, int port, const char *who)
{
    bool was_replica = repl.port != 0;
    if (repl.state == LINK_CONNECTED) /* where the stream stopped for us (the closing link records no more) */
        repl.offset = atomic_load(&live_offset);
    repl.epoch++;
    if (port) {
        snprintf(repl.host, sizeof repl.host, "%s", host);
        repl.port = port;
        repl.state = LINK_CONNECT;
        repl.down_since_ms = 0;
        if (!was_replica) { /* our own history becomes a cached master: PSYNC may continue it (Redis's
                             * replicationCacheMasterUsingMyself) */
            repl.have_master = true;
        }
        log_notice("REPLICAOF %s:%d enabled (user request from '%s')", host, port, who);
    } else {
        repl.host[0] = '\0';
        repl.port = 0;
        repl.state = LINK_NONE;
        /* Redis's shiftReplicationId: a new history that continues the old one */
        memcpy(repl.replid2, repl.replid, sizeof repl.replid2);
        repl.second_offset = repl.offset + 1;
        random_id(repl.replid);
        log_notice("Setting secondary replication ID to %s, valid up to offset: %lld. New replication ID is %s",
                   repl.replid2, repl.second_offset, repl.replid);
        log_notice("MASTER MODE enabled (user request from '%s')", who);
    }
    atomic_store_explicit(&replica_active, port != 0, memory_order_relaxed);
    store_keep_expired(port != 0); /* its master's DELs remove expired keys, its clients' reads do not */
    pthread_cond_broadcast(&cond);
}

/* REPLICAOF host port | NO ONE (SLAVEOF the same) */
static void cmd_replicaof(struct cmd_ctx *ctx)
{
    char who[128];
    snprintf(who, sizeof who, "id=%llu", (unsigned long long)ctx->client);
    if (util_eq_nocase(ctx->argv[1].ptr, ctx->argv[1].len, "no") &&
        util_eq_nocase(ctx->argv[2].ptr, ctx->argv[2].len, "one")) {
        pthread_mutex_lock(&lock);
        bool was = repl.port != 0;
        if (was)
            become(NULL, 0, who);
        long long offset = repl.offset;
        pthread_mutex_unlock(&lock);
        if (was) /* our stream continues the master's offsets, under our new id */
            primary_promote(offset);
        config_set_internal("replicaof", "");
        ring_shard0(); /* its master client goes now */
        reply_ok(ctx->out);
        return;
    }
    long long port;
    if (!util_str_to_ll(ctx->argv[2].ptr, ctx->argv[2].len, &port) || port < 0 || port > 65535) {
        reply_error(ctx->out, port < 0 || port > 65535 ? "ERR Invalid master port" :
                                                         "ERR value is not an integer or out of range");
        return;
    }
    if (ctx->argv[1].len >= sizeof repl.host) {
        reply_error(ctx->out, "ERR Invalid master host");
        return;
    }
    char host[256];
    memcpy(host, ctx->argv[1].ptr, ctx->argv[1].len);
    host[ctx->argv[1].len] = '\0';
    pthread_mutex_lock(&lock);
    bool same = repl.port == port && strcasecmp(repl.host, host) == 0;
    if (!same)
        become(host, (int)port, who);
    pthread_mutex_unlock(&lock);
    if (!same) /* our replicas go: a replica serves none */
        primary_demote();
    if (same) {
        log_notice("REPLICAOF would result into synchronization with the master we are already connected with. "
                   "No operation performed.");
        reply_simple(ctx->out, "OK Already connected to specified master");
        return;
    }
    char value[300];
    snprintf(value, sizeof value, "%s %lld", host, port);
    config_set_internal("replicaof", value);
    ring_shard0(); /* a master client of the old master goes now */
    reply_ok(ctx->out);
}

/* REPLCONF: GETACK from our master; the options a replica sends its master before its SYNC/PSYNC
 * (listening-port kept for INFO's replica list; its ACKs go to primary.c's sender once it syncs) */
static void cmd_replconf(struct cmd_ctx *ctx)
{
    if (ctx->argc % 2 == 0) {
        reply_error(ctx->out, "ERR syntax error");
        return;
    }
    struct conn *c = ctx->conn;
    for (int i = 1; i < ctx->argc; i += 2) {
        const struct resp_arg *opt = &ctx->argv[i];
        if (util_eq_nocase(opt->ptr, opt->len, "getack")) {
            if (c && c == master) { /* its own bytes are not counted yet, as Redis */
                size_t own = 0;
                for (int j = 0; j < ctx->argc; j++) {
                    char h[24];
                    own += (size_t)snprintf(h, sizeof h, "$%zu\r\n", ctx->argv[j].len) + ctx->argv[j].len + 2;
                }
                char h[24];
                own += (size_t)snprintf(h, sizeof h, "*%d\r\n", ctx->argc);
                master_ack(c, master_offset(c) - (long long)own);
            }
            return; /* no reply of its own */
        }
        if (util_eq_nocase(opt->ptr, opt->len, "ack"))
            return; /* from a replica: no reply */
        long long port;
        if (util_eq_nocase(opt->ptr, opt->len, "listening-port") &&
            util_str_to_ll(ctx->argv[i + 1].ptr, ctx->argv[i + 1].len, &port) && port >= 0 && port <= 65535)
            primary_note_listening_port(c, (int)port);
        if (!util_eq_nocase(opt->ptr, opt->len, "listening-port") && !util_eq_nocase(opt->ptr, opt->len, "ip-address") &&
            !util_eq_nocase(opt->ptr, opt->len, "capa") && !util_eq_nocase(opt->ptr, opt->len, "rdb-only")) {
            reply_errorf(ctx->out, "ERR Unrecognized REPLCONF option: %.*s", (int)opt->len, opt->ptr);
            return;
        }
    }
    reply_ok(ctx->out);
}

void replica_replid(char out[41])
{
    pthread_mutex_lock(&lock);
    memcpy(out, repl.replid, 41);
    pthread_mutex_unlock(&lock);
}

void replica_role_reply(struct reply *out)
{
    pthread_mutex_lock(&lock);
    if (!repl.port) {
        pthread_mutex_unlock(&lock);
        reply_array(out, 3);
        reply_bulk_cstr(out, "master");
        reply_int(out, primary_offset());
        primary_role_replicas(out);
        return;
    }
    char host[256];
    snprintf(host, sizeof host, "%s", repl.host);
    int port = repl.port;
    const char *state = state_names[repl.state];
    long long offset = repl.state == LINK_CONNECTED ? atomic_load(&live_offset) : -1;
    pthread_mutex_unlock(&lock);
    reply_array(out, 5);
    reply_bulk_cstr(out, "slave");
    reply_bulk_cstr(out, host);
    reply_int(out, port);
    reply_bulk_cstr(out, state);
    reply_int(out, offset);
}

void replica_info(char *buf, size_t cap)
{
    const struct config *cfg = config_current();
    long long now = util_ms_time();
    char replicas[8192];
    primary_info(replicas, sizeof replicas);
    struct primary_backlog backlog;
    primary_backlog(&backlog);
    pthread_mutex_lock(&lock);
    long long offset = !repl.port ? primary_offset() : repl.state == LINK_CONNECTED ? atomic_load(&live_offset) : repl.offset;
    size_t n = 0;
#define OUT(...) (n += (size_t)snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, __VA_ARGS__))
    OUT("# Replication\r\n");
    if (repl.port) {
        bool up = repl.state == LINK_CONNECTED;
        OUT("role:slave\r\nmaster_host:%s\r\nmaster_port:%d\r\nmaster_link_status:%s\r\n"
            "master_last_io_seconds_ago:%lld\r\nmaster_sync_in_progress:%d\r\n"
            "slave_read_repl_offset:%lld\r\nslave_repl_offset:%lld\r\n",
            repl.host, repl.port, up ? "up" : "down", up ? (now - repl.last_io_ms) / 1000 : -1,
            repl.state == LINK_SYNC, offset, offset);
        if (repl.state == LINK_SYNC)
            OUT("master_sync_total_bytes:%lld\r\nmaster_sync_read_bytes:%lld\r\nmaster_sync_left_bytes:%lld\r\n"
                "master_sync_perc:%.2f\r\nmaster_sync_last_io_seconds_ago:%lld\r\n",
                repl.sync_total, repl.sync_read, repl.sync_total >= 0 ? repl.sync_total - repl.sync_read : -1,
                repl.sync_total > 0 ? 100.0 * (double)repl.sync_read / (double)repl.sync_total : 0.0,
                (now - repl.sync_last_io_ms) / 1000);
        if (!up)
            OUT("master_link_down_since_seconds:%lld\r\n",
                repl.down_since_ms ? (now - repl.down_since_ms) / 1000 : -1);
        OUT("slave_priority:%d\r\nslave_read_only:%d\r\nreplica_announced:1\r\n", cfg->replica_priority,
            cfg->replica_read_only ? 1 : 0);
    } else {
        OUT("role:master\r\n");
    }
    OUT("%s", repl.port ? "connected_slaves:0\r\n" : replicas);
    OUT("master_failover_state:no-failover\r\nmaster_replid:%s\r\nmaster_replid2:%s\r\n"
        "master_repl_offset:%lld\r\nsecond_repl_offset:%lld\r\nrepl_backlog_active:%d\r\n"
        "repl_backlog_size:%lld\r\nrepl_backlog_first_byte_offset:%lld\r\nrepl_backlog_histlen:%lld\r\n",
        repl.replid, repl.replid2, offset, repl.second_offset, backlog.active && !repl.port, backlog.size,
        repl.port ? 0 : backlog.first_byte, repl.port ? 0 : backlog.histlen);
#undef OUT
    pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------- setup */

void replica_setup(void)
{
    repl.stopping = false; /* an engine started again in one process (engine.h) */
    random_id(repl.replid);
    memcpy(repl.replid2, zero_id, sizeof zero_id);
    const struct config *cfg = config_current();
    if (cfg->replicaof && cfg->replicaof[0]) {
        char host[256];
        int port;
        if (sscanf(cfg->replicaof, "%255s %d", host, &port) == 2) {
            pthread_mutex_lock(&lock);
            repl.epoch++;
            snprintf(repl.host, sizeof repl.host, "%s", host);
            repl.port = port;
            repl.state = LINK_CONNECT;
            atomic_store_explicit(&replica_active, true, memory_order_relaxed);
            store_keep_expired(true);
            pthread_mutex_unlock(&lock);
        }
    }
}

int replica_start(void)
{
    if (pthread_create(&link_thread, NULL, link_main, NULL) != 0) {
        log_warn("Cannot start the replication link thread");
        return -1;
    }
    link_started = true;
    return 0;
}

void replica_teardown(void)
{
    pthread_mutex_lock(&lock);
    repl.stopping = true;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    load_cancel(); /* a full sync loading gives up */
    if (link_started)
        pthread_join(link_thread, NULL);
    link_started = false;
    if (handover.fd >= 0)
        close(handover.fd);
    handover.fd = -1;
    mem_release(handover.bytes);
    handover.bytes = NULL;
}

#define REPL_CMD (CMD_ADMIN | CMD_NOSCRIPT | CMD_STALE)

const struct command command_family_replica[] = {
    {"replicaof", cmd_replicaof, 3, REPL_CMD, 0, 0, 0, ROUTE_HOME, "@admin @slow @dangerous"},
    {"slaveof", cmd_replicaof, 3, REPL_CMD, 0, 0, 0, ROUTE_HOME, "@admin @slow @dangerous"},
    {"replconf", cmd_replconf, -1, REPL_CMD | CMD_LOADING | CMD_ALLOW_BUSY, 0, 0, 0, ROUTE_HOME,
     "@admin @slow @dangerous"},
};
const size_t command_family_replica_count = sizeof command_family_replica / sizeof command_family_replica[0];
