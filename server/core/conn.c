/*
 * conn: a client connection, owned by the shard thread that accepted it.
 *
 * Read: one read() per readable event into the connection's buffer, then
 * every complete command in it is parsed (zero-copy) and dispatched; the
 * batches this built for other shards are pushed once, at the end.  A
 * connection whose batches wait for credits or inbox space, or has more than
 * CONN_INFLIGHT_PAUSE per shard out (their replies are output to come), or
 * that has a multi-step command in progress, stops parsing and reading
 * until that clears (backpressure: it clears whatever the client does, and
 * the flush after the batches come back goes on).  Write: replies
 * accumulate in `out` and the shard flushes every dirty connection once per
 * loop turn with one write().
 *
 * A client that reads nothing until it has sent all of a big pipeline (as
 * redis-py's pipeline does) must not deadlock with us: past CONN_OUT_PAUSE
 * of pending output its commands stop being run (output_held) but its input
 * is still read, up to client-query-buffer-limit (past it the client is
 * closed, as Redis does), so it finishes sending, starts reading, and once
 * its output has gone out the rest runs.  A pipeline's input is a small
 * fraction of its replies; a client that never reads is held at
 * CONN_OUT_PAUSE of output plus the query buffer limit of input.  The input
 * buffer drops its consumed front only when that copies no more than it
 * frees, and grows by half, so input that piles up is copied O(1) times per
 * byte; an emptied buffer past CONN_IN_SHRINK is given back.
 *
 * End of input (read() gives 0: the client shut its sending side, as nc -N
 * does, or closed): Redis frees the client there, but it ran everything it
 * read before and wrote the replies in between, so a client that sends,
 * shuts down and then reads gets its replies.  Here reading stops
 * (read_eof), what was read still runs, and the connection closes once
 * every reply, those of other shards included, has been written
 * (close_after_reply); a client that closed both ways fails the first write
 * and goes sooner.  A client waiting in a blocking command is dropped at
 * once, as in Redis.
 *
 * A closed connection with batches in flight keeps its memory until the
 * last one comes back (conn_unref).
 *
 * Output limits (client-output-buffer-limit: the pubsub class while the
 * client has a subscription, else normal; Redis's
 * checkClientOutputBufferLimits): before each flush, the pending output
 * (unsent bytes plus the replies held in pending slots) is compared with the
 * hard limit, and with the soft limit for soft_seconds; past either the
 * client is closed.  A hard limit also bounds what piles up before that:
 * parsing stops once the unsent output passes it, and a shard running a
 * cross-shard batch for the client stops once the batch's replies pass it
 * (handoff.c; the rest is not run, as Redis runs nothing more of a client it
 * closes) and the home closes the client when the batch comes back.
 * Without a hard limit a client that does not read stops being run past
 * CONN_OUT_PAUSE of unsent output instead (see above; closed only by the
 * query buffer limit).
 *
 * CLIENT REPLY (Redis 7.0's CLIENT_REPLY_OFF / _SKIP / _SKIP_NEXT in c->reply):
 * the dispatcher steps the state before each client command as Redis's
 * resetClient does after one (a SKIP lasts one command; EXEC's queued commands
 * run under EXEC's), and a command under OFF or SKIP writes its replies to the
 * shard's discard buffer and marks its slots silent (dispatch.c).  Pushes
 * still go out (pubsub.c).
 *
 * CLIENT PAUSE: every shard keeps its own copy of the pause in force (its
 * type and end), set by a fan-out part (conn_pause_local) before CLIENT PAUSE
 * answers, and read by the shard's own thread only (one test of a field per
 * command).  A connection whose next command the pause holds waits on its
 * shard's list, in arrival order, that command left unparsed; it is still
 * read (its disconnection is seen, as Redis reads a postponed client), and
 * each read parses the held command again, which waits again.  The shard's
 * pause timer ends the pause and resumes the waiters from the loop, never
 * from inside another command.  Pauses and unpauses from clients on
 * different shards carry a stamp (the home's clock and index), so every
 * shard ends up with the same, latest one.
 */
#include "percore/conn.h"

#include "conn_internal.h"
#include "shard_internal.h"
#include "reply_slot.h"
#include "dispatch.h"
#include "txn.h"
#include "block.h"
#include "handoff.h"

#include "percore/monitor.h"
#include "percore/config.h"
#include "percore/keylock.h"
#include "percore/log.h"
#include "percore/replica.h"
#include "percore/mem.h"
#include "percore/pubsub.h"
#include "percore/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CONN_READ_CHUNK (16 * 1024)
#define CONN_BIG_ARG (32 * 1024)
#define CONN_OUT_SHRINK (1u << 20)
/* a client that does not read its replies stops being run (it is still read) past this much pending output */
#define CONN_OUT_PAUSE (64u << 20)
/* a client with more than this many batches out per shard stops being read and run until some come back:
 * their replies are output still to come */
#define CONN_INFLIGHT_PAUSE 4
/* an input buffer bigger than this is given back once empty (a big pipeline or argument is over) */
#define CONN_IN_SHRINK (1u << 20)

static uint64_t conn_next_id[CONFIG_MAX_THREADS];

static void conn_on_read(evutil_socket_t fd, short what, void *arg);
static void conn_on_write(evutil_socket_t fd, short what, void *arg);

static void conn_format_addr(const struct sockaddr_storage *ss, char *buf, size_t cap)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
        port = ntohs(a->sin_port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
        port = ntohs(a->sin6_port);
    }
    snprintf(buf, cap, "%s:%d", ip, port);
}

/* Redis 7.0's reply to a non-loopback client in protected mode */
static const char conn_denied[] =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set "
    "for the default user. In this mode connections are only accepted from the loopback interface. If you "
    "want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just "
    "disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface "
    "by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not "
    "publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) "
    "Alternatively you can just disable the protected mode by editing the Redis configuration file, and "
    "setting the protected mode option to 'no', and then restarting the server. 3) If you started the "
    "server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an "
    "authentication password for the default user. NOTE: You only need to do one of the above things in "
    "order for the server to start accepting connections from the outside.\r\n";

/* Redis connIsLocal: a loopback peer ("ip:port" as conn_format_addr writes it) */
static bool conn_peer_is_loopback(const char *peer)
{
    return strncmp(peer, "127.", 4) == 0 || strncmp(peer, "::1:", 4) == 0 || strncmp(peer, "::ffff:127.", 11) == 0;
}

bool conn_is_local(const struct conn *c)
{
    return conn_peer_is_loopback(c->peer);
}

const char *conn_protected_refusal(const struct conn *c, const struct config *cfg)
{
    enum config_protected_action allowed = cfg->enable_debug_command;
    if (allowed == PROTECTED_ACTION_YES || (allowed == PROTECTED_ACTION_LOCAL && c && conn_is_local(c)))
        return NULL;
    return "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it "
           "from a local connection, otherwise you need to set this option in the configuration file, and then "
           "restart the server.";
}

static uint64_t conn_total_clients(void)
{
    uint64_t n = 0;
    for (int i = 0; i < shard_count(); i++)
        n += STATS_GET(shard_stats(i), connected_clients);
    return n;
}

void conn_accept(struct shard *self, int fd, bool cluster_port)
{
    const struct config *cfg = config_current();
    STATS_ADD(&self->stats, total_connections_received, 1);
    if (conn_total_clients() >= (uint64_t)cfg->maxclients) {
        static const char msg[] = "-ERR max number of clients reached\r\n";
        ssize_t rc = write(fd, msg, sizeof(msg) - 1);
        (void)rc;
        close(fd);
        STATS_ADD(&self->stats, rejected_connections, 1);
        return;
    }
    int one = 1;
    evutil_make_socket_nonblocking(fd);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (cfg->tcp_keepalive > 0) {
        int idle = cfg->tcp_keepalive;
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    }
    char peer[64] = "?";
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
        conn_format_addr(&ss, peer, sizeof(peer));
    /* protected mode: no password, so only loopback clients (Redis clientAcceptHandler) */
    if (cfg->protected_mode && !(cfg->requirepass && cfg->requirepass[0]) && !conn_peer_is_loopback(peer)) {
        ssize_t rc = write(fd, conn_denied, sizeof(conn_denied) - 1);
        (void)rc;
        close(fd);
        STATS_ADD(&self->stats, rejected_connections, 1);
        return;
    }
    struct conn *c = conn_adopt(self, fd, peer);
    c->cluster_port = cluster_port;
}

struct conn *conn_adopt(struct shard *self, int fd, const char *peer)
{
    struct conn *c = conn_create(self, fd, NULL, NULL);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (peer)
        snprintf(c->peer, sizeof(c->peer), "%s", peer);
    else if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
        conn_format_addr(&ss, c->peer, sizeof(c->peer));
    sl = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        conn_format_addr(&ss, c->local, sizeof(c->local));
    c->read_ev = event_new(self->base, fd, EV_READ | EV_PERSIST, conn_on_read, c);
    c->write_ev = event_new(self->base, fd, EV_WRITE | EV_PERSIST, conn_on_write, c);
    event_add(c->read_ev, NULL);
    return c;
}

struct conn *conn_create(struct shard *self, int fd, engine_sink_fn *sink, void *sink_arg)
{
    const struct config *cfg = config_current();
    struct conn *c = mem_calloc(1, sizeof(*c));
    c->fd = fd;
    c->sink = sink;
    c->sink_arg = sink_arg;
    c->home = self;
    /* ids are unique across shards: the shard index in the low bits */
    c->id = ++conn_next_id[self->index] * (uint64_t)shard_count() + (uint64_t)self->index;
    c->resp = 2;
    /* as Redis: a client that connects while no password is set is authenticated */
    c->authenticated = !(cfg->requirepass && cfg->requirepass[0]);
    c->ctime = self->now;
    c->last_interaction = self->now;
    resp_parser_init(&c->parser);
    reply_init(&c->out);
    c->next = self->conns;
    if (self->conns)
        self->conns->prev = c;
    self->conns = c;
    self->conn_count++;
    STATS_ADD(&self->stats, connected_clients, 1);
    return c;
}

static void conn_destroy(struct conn *c)
{
    /* still on the shard's dirty, stalled or lock-wait list: the turn's end frees it */
    if (c->in_dirty || c->in_stalled || c->lock_wait) {
        c->dead_next = c->home->dead;
        c->home->dead = c;
        return;
    }
    while (c->slot_head) {
        struct slot *s = c->slot_head;
        c->slot_head = s->next;
        dispatch_slot_release(c->home, s);
    }
    if (c->prev) /* off the shard's list of closed connections */
        c->prev->next = c->next;
    else
        c->home->closing = c->next;
    if (c->next)
        c->next->prev = c->prev;
    txn_conn_freed(c);
    block_conn_freed(c);
    resp_parser_deinit(&c->parser);
    reply_deinit(&c->out);
    mem_release(c->rbuf);
    mem_release(c->name);
    mem_release(c->lib_name);
    mem_release(c->lib_ver);
    mem_release(c);
}

/* c's command is not held any more: off its shard's list of pause waiters */
static void conn_unwait_pause(struct conn *c)
{
    struct shard *self = c->home;
    struct conn *prev = NULL;
    for (struct conn *w = self->pause_head; w != c; w = w->pause_next)
        prev = w;
    if (prev)
        prev->pause_next = c->pause_next;
    else
        self->pause_head = c->pause_next;
    if (self->pause_tail == c)
        self->pause_tail = prev;
    c->pause_next = NULL;
    c->pause_wait = false;
    STATS_ADD(&self->stats, blocked_clients, (uint64_t)-1);
}

void conn_close(struct conn *c)
{
    if (c->closed)
        return;
    struct shard *self = c->home;
    c->closed = true;
    if (__builtin_expect(c->repl_master, 0))
        replica_conn_closed(c); /* before its fd goes: the link's offset is read from c */
    if (c->read_ev) {
        event_free(c->read_ev);
        event_free(c->write_ev);
        c->read_ev = c->write_ev = NULL;
    }
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    if (c->prev)
        c->prev->next = c->next;
    else
        self->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (c->pause_wait)
        conn_unwait_pause(c);
    c->prev = NULL; /* on the list of closed connections until freed */
    c->next = self->closing;
    if (c->next)
        c->next->prev = c;
    self->closing = c;
    self->conn_count--;
    STATS_ADD(&self->stats, connected_clients, (uint64_t)-1);
    /* what it sent is still run (a multi-shard command must finish to free its keys); stalled
     * batches still go out, unless the shard is shutting down (conn_close_all) */
    pubsub_conn_closed(c);
    monitor_conn_closed(c);
    tracking_conn_off(c);
    c->inflight++; /* held while its transaction and blocking state let go (that may answer replies) */
    txn_conn_closed(c);
    block_conn_closed(c);
    handoff_flush(self); /* what those sent (unwatch, cancel) */
    if (c->sink)
        c->sink(c->sink_arg, NULL, 0); /* engine.h: the in-process client is gone */
    conn_unref(c);
}

void conn_unref(struct conn *c)
{
    c->inflight--;
    if (c->closed && c->inflight == 0)
        conn_destroy(c);
}

/* c's client-output-buffer-limit class, as Redis's getClientType: pubsub while subscribed, else normal; a
 * monitor is a replica (as inside Redis), so one that does not read is cut off at that class's limits */
static const struct obuf_limit *conn_obuf_limit(const struct conn *c)
{
    int cls = c->monitor ? OBUF_REPLICA : pubsub_subscribed(c) ? OBUF_PUBSUB : OBUF_NORMAL;
    return &config_current()->obuf[cls];
}

/* unsent output past which parsing stops: the hard limit when set (the flush then closes), else CONN_OUT_PAUSE */
static size_t conn_out_pause(const struct conn *c)
{
    long long hard = conn_obuf_limit(c)->hard;
    return hard > 0 && (unsigned long long)hard < CONN_OUT_PAUSE ? (size_t)hard : CONN_OUT_PAUSE;
}

/* stop parsing and reading until the shards answer, whatever the client does: batches wait for room or
 * too many are out, or a multi-step command is under way */
static inline __attribute__((always_inline)) bool conn_stalled(const struct conn *c)
{
    return c->stalled_head != NULL || c->lock_wait || c->parked ||
           (c->slot_tail && c->slot_tail->barrier && !c->slot_tail->complete) ||
           (c->inflight > CONN_INFLIGHT_PAUSE && c->inflight > CONN_INFLIGHT_PAUSE * shard_count() && !c->exec_input);
}

/* stop parsing but read on (only the client can clear this): output piles up past `pause`, unsent or
 * behind the last pending slot, where local replies go */
static bool conn_output_over(const struct conn *c, size_t pause)
{
    /* EXEC's commands are not held up by output: its locks (the global lock, in that build) are held */
    return !c->exec_input && c->out.len - c->out_sent + (c->slot_tail ? c->slot_tail->after.len : 0) > pause;
}

static bool conn_output_piled(const struct conn *c)
{
    return conn_output_over(c, conn_out_pause(c));
}

void conn_close_output_limit(struct conn *c)
{
    if (c->closed)
        return;
    char info[512];
    conn_describe(c, c->home->now, info, sizeof(info));
    log_warn("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", info);
    conn_close(c);
}

/* output held for this client: unsent bytes and complete replies waiting in slots (Redis's
 * reply_bytes); a merge still in progress (MGET's elements) is not counted */
static size_t conn_pending_output(const struct conn *c)
{
    size_t n = c->out.len - c->out_sent;
    for (const struct slot *s = c->slot_head; s; s = s->next)
        n += (s->silent ? 0 : s->reply.len) + s->after.len;
    return n;
}

bool conn_output_full(const struct conn *c)
{
    long long hard = conn_obuf_limit(c)->hard;
    return hard > 0 && conn_pending_output(c) >= (unsigned long long)hard;
}

/* Redis checkClientOutputBufferLimits, c's class: true when c must be closed */
static bool conn_over_output_limit(struct conn *c)
{
    const struct obuf_limit *lim = conn_obuf_limit(c);
    if (lim->hard <= 0 && lim->soft <= 0)
        return false;
    size_t used = conn_pending_output(c);
    if (lim->hard > 0 && used >= (unsigned long long)lim->hard)
        return true;
    if (lim->soft <= 0 || used < (unsigned long long)lim->soft) {
        c->obuf_soft_since = 0;
        return false;
    }
    int64_t now = c->home->now;
    if (c->obuf_soft_since == 0) {
        c->obuf_soft_since = now;
        return false;
    }
    return (now - c->obuf_soft_since) / 1000 > lim->soft_seconds; /* whole seconds, as Redis counts */
}

static void conn_pause_reading(struct conn *c)
{
    /* a client waiting in a blocking command is still read (up to the query buffer limit), as Redis
     * does, so that its disconnection is seen and its waiter dropped */
    if (!c->read_paused && !c->closed && !c->blocked) {
        if (c->read_ev && !c->read_eof)
            event_del(c->read_ev);
        c->read_paused = true;
    }
}

/* dispatch the next of EXEC's queued commands (whole: each was parsed when queued); false: it waits */
static bool conn_exec_next(struct conn *c, const struct config *cfg)
{
    size_t consumed = 0;
    resp_parse(&c->parser, c->exec_input + c->exec_pos, c->exec_len - c->exec_pos, cfg->proto_max_bulk_len,
               &consumed);
    c->exec_pos += consumed;
    if (c->parser.argc > 0 && !dispatch_command(c, c->parser.argc, c->parser.argv)) {
        c->exec_pos -= consumed;
        return false;
    }
    if (c->exec_pos == c->exec_len) {
        mem_release(c->exec_input);
        c->exec_input = NULL;
        txn_exec_dispatched(c);
        if (c->track.held) /* invalidations that came meanwhile follow EXEC's reply */
            tracking_exec_done(c);
    }
    return true;
}

/* parse and dispatch every complete command buffered */
static void conn_process_input(struct conn *c)
{
    struct shard *self = c->home;
    const struct config *cfg = config_current();
    if (c->processing)
        return;
    c->processing = true;
    c->round_start = c->rpos;
    bool needs_auth = cfg->requirepass && cfg->requirepass[0];
    bool partial = false; /* what is left is the start of a command */
    size_t pause = conn_out_pause(c); /* read once: a SUBSCRIBE in this input takes effect at the flush */
    /* once output has piled up (output_held), nothing runs until the flush that writes it all */
    while ((c->rpos < c->rlen || c->exec_input) && !c->closed && !c->close_after_reply && !conn_stalled(c) &&
           !c->output_held && !conn_output_over(c, pause)) {
        if (c->exec_input) { /* EXEC's queued commands come before the client's next input */
            if (!conn_exec_next(c, cfg))
                break;
            continue;
        }
        size_t consumed = 0;
        c->parser.unauthenticated = needs_auth && !c->authenticated;
        enum resp_status st = resp_parse(&c->parser, c->rbuf + c->rpos, c->rlen - c->rpos,
                                         cfg->proto_max_bulk_len, &consumed);
        if (st == RESP_AGAIN) {
            partial = true;
            break;
        }
        if (st == RESP_ERROR) {
            if (c->reply) /* the error is dropped under CLIENT REPLY OFF|SKIP too */
                conn_reply_step(c);
            reply_errorf(dispatch_reply_target(c), "ERR %s", c->parser.error);
            c->close_after_reply = true;
            c->rpos = c->rlen;
            break;
        }
        c->rpos += consumed;
        if (c->parser.argc > 0 && !dispatch_command(c, c->parser.argc, c->parser.argv)) {
            c->rpos -= consumed; /* it waits for a key lock: parsed again when retried */
            break;
        }
    }
    c->processing = false;
    handoff_flush(self);
    bool drained = !c->exec_input && (partial || c->rpos == c->rlen); /* nothing more to run until more comes */
    if (c->rpos == c->rlen) {
        c->rpos = c->rlen = 0;
        if (c->rcap > CONN_IN_SHRINK) {
            mem_release(c->rbuf);
            c->rbuf = NULL;
            c->rcap = 0;
        }
    }
    if (c->read_eof && drained) /* nothing more will come: close once answered */
        c->close_after_reply = true;
    if (conn_stalled(c))
        conn_pause_reading(c);
    c->output_held = !drained && (c->output_held || conn_output_piled(c));
    shard_mark_dirty(c);
}

void conn_unpause_reading(struct conn *c)
{
    if (c->read_paused && !c->closed) {
        c->read_paused = false;
        if (c->read_ev && !c->read_eof)
            event_add(c->read_ev, NULL);
    }
    /* a client that sent its end and is now blocked: reading it again sees the end and drops it */
    if (c->read_eof && c->blocked && c->read_ev)
        event_add(c->read_ev, NULL);
}

void conn_resume(struct conn *c)
{
    if (c->closed || conn_stalled(c)) /* piled-up output: read on, the flush that empties it resumes */
        return;
    conn_unpause_reading(c);
    conn_process_input(c);
}

/* room in rbuf for want more bytes: the consumed front is dropped when that copies no more than it
 * frees, else the buffer grows, by half at least (each byte of input is copied O(1) times) */
static inline void conn_reserve_input(struct conn *c, size_t want)
{
    if (c->rcap - c->rlen >= want)
        return;
    size_t pending = c->rlen - c->rpos;
    if (c->rpos > 0 && c->rpos >= pending) {
        memmove(c->rbuf, c->rbuf + c->rpos, pending);
        c->rlen = pending;
        c->rpos = 0;
        if (c->rcap - c->rlen >= want)
            return;
    }
    size_t cap = c->rlen + want;
    if (cap < c->rcap + c->rcap / 2)
        cap = c->rcap + c->rcap / 2;
    c->rbuf = mem_realloc(c->rbuf, cap);
    c->rcap = cap;
}

void conn_take_input(struct conn *c, const char *bytes, size_t len)
{
    if (c->closed || len == 0) /* nothing to add, and rbuf may still be NULL */
        return;
    conn_reserve_input(c, len);
    memcpy(c->rbuf + c->rlen, bytes, len);
    c->rlen += len;
    c->last_interaction = c->home->now;
    if (!c->read_paused)
        conn_process_input(c);
}

/* Redis's words when a client's unparsed input passes client-query-buffer-limit: its CLIENT LIST line
 * and its first 64 bytes quoted as sdscatrepr quotes them */
static void conn_close_query_limit(struct conn *c)
{
    char info[512], bytes[64 * 4 + 3];
    conn_describe(c, c->home->now, info, sizeof(info));
    size_t n = 0, len = c->rlen - c->rpos < 64 ? c->rlen - c->rpos : 64;
    bytes[n++] = '"';
    for (const unsigned char *p = (const unsigned char *)c->rbuf + c->rpos; len--; p++) {
        const char *esc = *p == '\\' ? "\\\\" : *p == '"' ? "\\\"" : *p == '\n' ? "\\n" : *p == '\r' ? "\\r"
                        : *p == '\t' ? "\\t" : *p == '\a' ? "\\a" : *p == '\b' ? "\\b" : NULL;
        if (esc) {
            memcpy(bytes + n, esc, 2);
            n += 2;
        } else if (isprint(*p)) {
            bytes[n++] = (char)*p;
        } else {
            n += (size_t)snprintf(bytes + n, sizeof(bytes) - n, "\\x%02x", *p);
        }
    }
    bytes[n++] = '"';
    bytes[n] = '\0';
    log_warn("Closing client that reached max query buffer length: %s (qbuf initial bytes: %s)", info, bytes);
    conn_close(c);
}

/* read() gave 0: the client sent its end (see the top of the file) */
static void conn_read_eof(struct conn *c)
{
    if (c->blocked || c->pause_wait) { /* as Redis frees a blocked or postponed client at its end */
        conn_close(c);
        return;
    }
    c->read_eof = true;
    if (!c->read_paused)
        event_del(c->read_ev);
    conn_process_input(c);
}

static void conn_on_read(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct conn *c = arg;
    struct shard *self = c->home;
    shard_wake_up(self);
    const struct config *cfg = config_current();
    size_t want = CONN_READ_CHUNK;
    size_t pending = c->rlen - c->rpos;
    /* a big argument in progress: make room for all of it at once */
    if (c->parser.need > pending && c->parser.need - pending > want && c->parser.need >= CONN_BIG_ARG)
        want = c->parser.need - pending;
    conn_reserve_input(c, want);
    ssize_t n = read(fd, c->rbuf + c->rlen, want);
    if (n == 0) {
        conn_read_eof(c);
        return;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
        conn_close(c);
        return;
    }
    if (n < 0)
        return;
    c->rlen += (size_t)n;
    c->bytes_in += (uint64_t)n;
    c->last_interaction = self->now;
    STATS_ADD(&self->stats, total_net_input_bytes, (uint64_t)n);
    if ((long long)(c->rlen - c->rpos) > cfg->client_query_buffer_limit && !c->repl_master) { /* Redis's master too */
        conn_close_query_limit(c);
        return;
    }
    conn_process_input(c);
    if (__builtin_expect(c->repl_master, 0))
        replica_master_read(c);
}

void conn_read_ready(struct conn *c)
{
    conn_on_read(c->fd, EV_READ, c);
}

void conn_flush(struct conn *c)
{
    struct shard *self = c->home;
    if (c->closed)
        return;
    if (conn_over_output_limit(c)) {
        conn_close_output_limit(c);
        return;
    }
    if (c->sink && c->out_sent < c->out.len) {
        c->sink(c->sink_arg, c->out.buf + c->out_sent, c->out.len - c->out_sent);
        c->out_sent = c->out.len;
    }
    while (c->out_sent < c->out.len) {
        ssize_t n = write(c->fd, c->out.buf + c->out_sent, c->out.len - c->out_sent);
        if (n > 0) {
            c->out_sent += (size_t)n;
            STATS_ADD(&self->stats, total_net_output_bytes, (uint64_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            if (!c->write_armed) {
                event_add(c->write_ev, NULL);
                c->write_armed = true;
            }
            /* a stall the shards cleared (batches back) lets it go on, whether the client reads or not */
            if (c->read_paused && !conn_stalled(c))
                conn_resume(c);
            return;
        }
        conn_close(c);
        return;
    }
    c->out.len = 0;
    c->out_sent = 0;
    if (c->out.cap > CONN_OUT_SHRINK) {
        reply_deinit(&c->out);
        reply_init(&c->out);
        c->out.resp = c->resp;
    }
    if (c->write_armed) {
        event_del(c->write_ev);
        c->write_armed = false;
    }
    if (c->close_after_reply && !c->slot_head) {
        conn_close(c);
    } else if ((c->read_paused || c->output_held) && !conn_stalled(c) && !conn_output_piled(c)) {
        c->output_held = false;
        conn_resume(c);
    }
}

static void conn_on_write(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct conn *c = arg;
    shard_wake_up(c->home);
    conn_flush(c);
}

void conn_reap_dead(struct shard *self)
{
    struct conn *c = self->dead;
    self->dead = NULL;
    while (c) {
        struct conn *next = c->dead_next;
        conn_destroy(c); /* back on the list if it is still listed somewhere */
        c = next;
    }
}

long long conn_unblock_local(uint64_t id, bool error)
{
    for (struct conn *c = shard_self->conns; c; c = c->next)
        if (c->id == id)
            return block_unblock(c, error);
    return 0;
}

void conn_close_all(struct shard *self)
{
    while (self->conns) {
        handoff_drop_stalled(self->conns);
        conn_close(self->conns);
    }
}

void conn_free_closed(struct shard *self)
{
    while (self->closing) {
        struct conn *c = self->closing;
        handoff_drop_stalled(c);
        c->in_dirty = c->in_stalled = c->lock_wait = false; /* nobody walks those lists any more */
        c->inflight = 0; /* what it waits for (a parked batch's delivery) will never come */
        conn_destroy(c);
    }
}

void conn_wait_for_lock(struct conn *c)
{
    struct shard *self = c->home;
    if (!c->lock_wait) {
        c->lock_wait = true;
        c->lock_wait_next = self->lock_waiters;
        self->lock_waiters = c;
    }
    keylock_hold_new(self->locks, true); /* it goes before lock requests that come after it */
    shard_arm_retry(self);
}

void conn_retry_lock_waiters(struct shard *self)
{
    struct conn *c = self->lock_waiters;
    self->lock_waiters = NULL;
    while (c) {
        struct conn *next = c->lock_wait_next;
        c->lock_wait = false;
        if (!c->closed)
            conn_resume(c); /* waits again, relisted, if the key is still held */
        c = next;
    }
}

void conn_reap_idle(struct shard *self, int timeout_s)
{
    if (timeout_s <= 0)
        return;
    struct conn *c = self->conns;
    while (c) {
        struct conn *next = c->next;
        if (!c->slot_head && !c->pause_wait && !c->repl_master && self->now - c->last_interaction > (int64_t)timeout_s * 1000)
            conn_close(c);
        c = next;
    }
}

/* ---------------------------------------------------------------- conn.h */

uint64_t conn_id(const struct conn *c) { return c->id; }
int conn_db(const struct conn *c) { return c->db; }
void conn_select(struct conn *c, int db) { c->db = db; }
int conn_resp(const struct conn *c) { return c->resp; }
const char *conn_name(const struct conn *c) { return c->name; }
bool conn_authenticated(const struct conn *c) { return c->authenticated; }
void conn_set_authenticated(struct conn *c, bool ok) { c->authenticated = ok; }
void conn_close_after_reply(struct conn *c) { c->close_after_reply = true; }
bool conn_in_exec(const struct conn *c) { return c->exec_input != NULL && c->txid != 0; }
const char *conn_peer(const struct conn *c) { return c->peer; }
const char *conn_local(const struct conn *c) { return c->local; }
int conn_fd(const struct conn *c) { return c->fd; }
long long conn_age(const struct conn *c, int64_t now) { return (now - c->ctime) / 1000; }
long long conn_idle(const struct conn *c, int64_t now) { return (now - c->last_interaction) / 1000; }

void conn_set_resp(struct conn *c, int resp)
{
    c->resp = resp;
}

static void conn_replace_string(char **dst, const char *s, size_t len)
{
    mem_release(*dst);
    *dst = len ? mem_strndup(s, len) : NULL;
}

void conn_set_name(struct conn *c, const char *name, size_t len)
{
    conn_replace_string(&c->name, name, len);
}

void conn_set_lib(struct conn *c, bool version, const char *s, size_t len)
{
    conn_replace_string(version ? &c->lib_ver : &c->lib_name, s, len);
}

/* Redis's PROTO_REPLY_CHUNK_BYTES: a client's reply buffer, and each block of its reply list */
#define CONN_REDIS_REPLY_CHUNK 16384

/*
 * Redis 7.0's catClientInfoString fields, then 7.2's lib-name lib-ver, then
 * the shard.  The figures as Redis counts them: qbuf is the query buffer,
 * while it runs the command being run and the ones before it in this round
 * included (Redis drops what it ran only after the read's last command),
 * else only what is not run yet (rbuf's consumed front is dropped lazily);
 * argv-mem the arguments of the command being run; multi-mem those of the
 * queued ones;
 * the output as Redis would hold it, its reply buffer first (obl bytes), then
 * blocks (oll of them, omem bytes).
 */
size_t conn_describe(const struct conn *c, int64_t now, char *buf, size_t cap)
{
    char events[3];
    int ne = 0;
    if (!c->read_paused && !c->read_eof && !c->closed)
        events[ne++] = 'r';
    if (c->write_armed)
        events[ne++] = 'w';
    events[ne] = '\0';
    char flags[10];
    int nf = 0;
    if (c->repl_master)
        flags[nf++] = 'M';
    if (c->monitor)
        flags[nf++] = 'O';
    if (pubsub_subscribed(c))
        flags[nf++] = 'P';
    if (c->blocked || c->pause_wait)
        flags[nf++] = 'b';
    if (c->in_multi)
        flags[nf++] = 'x';
    nf += tracking_describe_flags(c, flags + nf);
    if (c->close_after_reply)
        flags[nf++] = 'c';
    if (nf == 0)
        flags[nf++] = 'N';
    flags[nf] = '\0';
    size_t argv_mem = 0;
    for (int i = 0; c->processing && i < c->parser.argc; i++)
        argv_mem += c->parser.argv[i].len;
    size_t obl = conn_pending_output(c), omem = 0;
    if (obl > CONN_REDIS_REPLY_CHUNK) {
        omem = obl - CONN_REDIS_REPLY_CHUNK;
        obl = CONN_REDIS_REPLY_CHUNK;
    }
    int n = snprintf(buf, cap,
                     "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=%lld psub=%lld "
                     "ssub=%lld multi=%d qbuf=%zu qbuf-free=%zu argv-mem=%zu multi-mem=%zu rbs=%zu rbp=%zu obl=%zu "
                     "oll=%zu omem=%zu tot-mem=%zu events=%s cmd=%s user=default redir=%lld resp=%d "
                     "lib-name=%s lib-ver=%s shard=%d",
                     (unsigned long long)c->id, c->peer, c->local, c->fd, c->name ? c->name : "",
                     conn_age(c, now), conn_idle(c, now), flags, c->db, pubsub_count(c, PUBSUB_CHANNEL),
                     pubsub_count(c, PUBSUB_PATTERN), pubsub_count(c, PUBSUB_SHARD_CHANNEL),
                     txn_queued(c), c->rlen - (c->processing ? c->round_start : c->rpos), c->rcap - c->rlen, argv_mem, txn_queued_mem(c), c->rcap, c->rcap, obl,
                     (omem + CONN_REDIS_REPLY_CHUNK - 1) / CONN_REDIS_REPLY_CHUNK, omem, c->rcap + c->out.cap + sizeof(*c), events, c->last_cmd ? c->last_cmd->name : "NULL",
                     tracking_redirect_shown(c), c->resp,
                     c->lib_name ? c->lib_name : "", c->lib_ver ? c->lib_ver : "", c->home->index);
    return n < 0 ? 0 : ((size_t)n < cap ? (size_t)n : cap - 1);
}

void conn_set_last_command(struct conn *c, const struct command *cmd)
{
    c->last_cmd = cmd;
}

static bool conn_field_is(const char *have, const char *want, size_t want_len)
{
    return strlen(have) == want_len && memcmp(have, want, want_len) == 0;
}

static enum conn_type conn_type(const struct conn *c)
{
    return c->repl_master ? CONN_TYPE_MASTER : pubsub_subscribed(c) ? CONN_TYPE_PUBSUB : CONN_TYPE_NORMAL;
}

static bool conn_matches(const struct conn *c, const struct conn_filter *f)
{
    if ((f->type != CONN_TYPE_ANY && conn_type(c) != (enum conn_type)f->type) || (f->id && c->id != f->id) ||
        (f->skip_id && c->id == f->skip_id))
        return false;
    if (f->addr && !conn_field_is(c->peer, f->addr, f->addr_len))
        return false;
    return !f->laddr || conn_field_is(c->local, f->laddr, f->laddr_len);
}

void conn_list_local(const struct conn_filter *f, int64_t now, struct reply *out)
{
    char line[1024];
    for (const struct conn *c = shard_self->conns; c; c = c->next) {
        if (!conn_matches(c, f))
            continue;
        size_t n = conn_describe(c, now, line, sizeof(line));
        reply_raw(out, line, n);
        reply_raw(out, "\n", 1);
    }
}

/*
 * As Redis: the others are closed now, the caller (whose reply is still
 * coming) after its reply; so is a connection in the middle of its own
 * input, which cannot be freed under its feet.
 */
long long conn_kill_local(const struct conn_filter *f)
{
    long long killed = 0;
    struct conn *c = shard_self->conns;
    while (c) {
        struct conn *next = c->next;
        if (conn_matches(c, f)) {
            if (c->id == f->caller_id || c->processing)
                c->close_after_reply = true;
            else
                conn_close(c);
            killed++;
        }
        c = next;
    }
    return killed;
}

/* ---------------------------------------------------------------- CLIENT REPLY, RESET */

void conn_reply_step(struct conn *c)
{
    uint8_t r = c->reply;
    if (r & CONN_REPLY_STEP) /* a command ran since the last step: its SKIP is over, a SKIP_NEXT begins */
        r = (uint8_t)((r & CONN_REPLY_OFF) | ((r & CONN_REPLY_SKIP_NEXT) ? CONN_REPLY_SKIP : 0));
    c->reply = r ? (uint8_t)(r | CONN_REPLY_STEP) : 0; /* 0: the dispatcher looks no more */
}

struct reply *conn_set_reply_mode(struct conn *c, enum conn_reply_mode mode)
{
    if (mode == CONN_REPLIES_ON)
        c->reply &= (uint8_t)~CONN_REPLY_SILENT;
    else if (mode == CONN_REPLIES_OFF)
        c->reply |= CONN_REPLY_OFF;
    else if (!(c->reply & CONN_REPLY_OFF))
        c->reply |= CONN_REPLY_SKIP_NEXT;
    if (c->reply)
        c->reply |= CONN_REPLY_STEP;
    return dispatch_reply_target(c);
}

/* Redis 7.0's clearClientConnectionState (no MONITOR, tracking or ACL users here) */
struct reply *conn_reset(struct conn *c)
{
    const struct config *cfg = config_current();
    txn_reset(c);
    pubsub_conn_closed(c);
    monitor_conn_closed(c); /* a monitor is one no more (Redis's clearClientConnectionState) */
    tracking_conn_off(c);
    c->db = 0;
    c->resp = 2;
    c->authenticated = !(cfg->requirepass && cfg->requirepass[0]);
    conn_set_name(c, NULL, 0);
    c->reply &= (uint8_t)~(CONN_REPLY_OFF | CONN_REPLY_SKIP_NEXT); /* a SKIP of RESET itself still holds */
    return dispatch_reply_target(c);
}

/* ---------------------------------------------------------------- CLIENT PAUSE */

/* the longest the pause timer waits at a time (it waits again for the rest) */
#define CONN_PAUSE_TIMER_MAX_MS 3600000

static void conn_arm_pause_timer(struct shard *self, int64_t ms)
{
    if (ms < 0)
        ms = 0;
    if (ms > CONN_PAUSE_TIMER_MAX_MS)
        ms = CONN_PAUSE_TIMER_MAX_MS;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    evtimer_add(self->pause_ev, &tv);
}

/* the pause ended or changed: the waiters try their command again, in order (those it still holds wait again) */
static void conn_on_pause_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct shard *self = arg;
    shard_wake_up(self);
    self->now = util_ms_time();
    if (self->pause && self->now >= self->pause_end)
        self->pause = 0;
    struct conn *c = self->pause_head;
    self->pause_head = self->pause_tail = NULL;
    while (c) {
        struct conn *next = c->pause_next;
        c->pause_next = NULL;
        c->pause_wait = false;
        STATS_ADD(&self->stats, blocked_clients, (uint64_t)-1);
        conn_resume(c);
        c = next;
    }
    if (self->pause)
        conn_arm_pause_timer(self, self->pause_end - self->now);
}

bool conn_wait_if_paused(struct conn *c, const struct command *cmd)
{
    struct shard *self = c->home;
    if (self->now >= self->pause_end && !self->pause_head) { /* over; its timer has not run yet */
        self->pause = 0;
        return false;
    }
    if (c->pause_wait) /* parsed again (more input came): it still waits, where it was */
        return true;
    /* Redis 7.0's processCommand: WRITE holds writes, PUBLISH, and an EXEC that would run one */
    if (self->pause == CONN_PAUSE_WRITE && !(cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)) &&
        !((cmd->flags & CMD_RUNS_QUEUE) && txn_queued_writes(c)))
        return false;
    c->pause_wait = true;
    if (self->pause_tail)
        self->pause_tail->pause_next = c;
    else
        self->pause_head = c;
    self->pause_tail = c;
    STATS_ADD(&self->stats, blocked_clients, 1); /* Redis counts a paused client as blocked */
    return true;
}

static uint64_t pause_stamp_of(int shard)
{
    return (uint64_t)(util_mono_ns() / 1000) * CONFIG_MAX_THREADS + (uint64_t)shard;
}

uint64_t conn_pause_stamp(const struct conn *c) { return pause_stamp_of(c->home->index); }

uint64_t conn_pause_stamp_here(void) { return pause_stamp_of(shard_self->index); }

void conn_pause_local(int type, long long end, uint64_t stamp)
{
    struct shard *self = shard_self;
    if (stamp < self->pause_stamp) /* a later pause or unpause came first */
        return;
    self->pause_stamp = stamp;
    self->pause = type && end > self->now ? type : 0;
    self->pause_end = end;
    if (!self->pause_ev)
        self->pause_ev = evtimer_new(self->base, conn_on_pause_timer, self);
    if (self->pause_head) /* lifted or changed: the waiters look again, from the loop */
        conn_arm_pause_timer(self, 0);
    else if (self->pause)
        conn_arm_pause_timer(self, end - self->now);
    else
        evtimer_del(self->pause_ev);
}
