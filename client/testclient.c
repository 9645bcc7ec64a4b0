/*
 * testclient: servers as child processes, raw RESP connections and the
 * expect helpers of the integration tests.  See testclient.h.
 *
 * Design: everything is blocking with poll()-bounded waits, so a test never
 * hangs longer than its timeouts; reply bytes are kept exactly as received so
 * tests can compare them with Redis 7.0's byte for byte.  The RESP framer
 * (pc_resp_value_len) only finds where one value ends; it never interprets.
 *
 * Threading: one pc_conn per thread; the failure counters are atomic.
 */
#include "testclient.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int pc_reply_timeout_ms = 10000;
long pc_server_nofile;

static atomic_int pc_fail_count;
static atomic_int pc_pass_count;

/* ---- time ---------------------------------------------------------------- */

long long pc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void pc_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

/* ---- ports --------------------------------------------------------------- */

static int port_bindable(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
    close(fd);
    return ok;
}

/*
 * Claim a port among the test processes: an exclusive flock on
 * PC_PORT_LOCK_DIR/<port>, kept (the fd stays open) until this process
 * exits, when the kernel drops it.  Two tests running at once can thus never
 * both hand out a port that was free for both of them a moment ago (and
 * start two SO_REUSEPORT servers on it, or a metrics endpoint on another
 * test's server port).  A second claim by the same process fails too: flock
 * locks belong to the open file, so no port is handed out twice.
 */
#define PC_PORT_LOCK_DIR "/tmp/percore-test-ports"

static int port_claim(int port)
{
    char path[128];
    mkdir(PC_PORT_LOCK_DIR, 01777);
    snprintf(path, sizeof(path), "%s/%d", PC_PORT_LOCK_DIR, port);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return 1; /* no lock directory to share: the bind probe alone decides */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return 0;
    }
    return 1;
}

int pc_free_port(void)
{
    /* Ports below the kernel's ephemeral range (32768+), so an outgoing
     * connection of another test cannot take the port between our check and
     * the server's bind, and below 20000, where tests/compat/diff.py picks
     * its servers' ports; random start so parallel tests rarely meet on one,
     * and the claim settles it when they do. */
    static unsigned next;
    static int seeded;
    if (!seeded) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        next = (unsigned)(getpid() * 7919u) ^ (unsigned)ts.tv_nsec;
        seeded = 1;
    }
    for (int tries = 0; tries < 2000; tries++) {
        next = next * 1103515245u + 12345u;
        int port = 10000 + (int)((next >> 8) % 10000u);
        if (port_claim(port) && port_bindable(port))
            return port;
    }
    return -1;
}

/* ---- servers ------------------------------------------------------------- */

static int is_redis_binary(const char *bin)
{
    const char *base = strrchr(bin, '/');
    base = base ? base + 1 : bin;
    return strstr(base, "redis-server") != NULL;
}

static int ping_ok(int port)
{
    struct pc_conn *c = pc_conn_open_quiet(port);
    if (!c)
        return 0;
    int ok = 0;
    if (pc_conn_write(c, "*1\r\n$4\r\nPING\r\n", 14) == 0) {
        char *r = NULL;
        size_t rl = 0;
        if (pc_conn_read_reply(c, &r, &rl, 2000) == 1 && rl == 7 && memcmp(r, "+PONG\r\n", 7) == 0)
            ok = 1;
        free(r);
    }
    pc_conn_close(&c);
    return ok;
}

void pc_server_dump_log(const struct pc_server *s, size_t max)
{
    if (!s->log_path[0])
        return;
    FILE *f = fopen(s->log_path, "rb");
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    long from = size > (long)max ? size - (long)max : 0;
    fseek(f, from, SEEK_SET);
    fprintf(stderr, "---- server log %s (last %ld bytes) ----\n", s->log_path, size - from);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        fwrite(buf, 1, n, stderr);
    fprintf(stderr, "---- end of server log ----\n");
    fclose(f);
}

static int start_once(struct pc_server *s, const char *bin, const char *const *extra)
{
    memset(s, 0, sizeof(*s));
    s->is_redis = is_redis_binary(bin);
    s->port = pc_free_port();
    if (s->port < 0) {
        fprintf(stderr, "testclient: no free port\n");
        return -1;
    }
    const char *dir = getenv("PC_LOG_DIR");
    snprintf(s->log_path, sizeof(s->log_path), "%s/server-%d-%d.log", dir ? dir : ".",
             (int)getpid(), s->port);

    const char *args[256];
    int n = 0;
    char portbuf[16];
    snprintf(portbuf, sizeof(portbuf), "%d", s->port);
    args[n++] = bin;
    int first_extra = 0;
    if (extra && extra[0] && extra[0][0] != '-') /* a config file: the first argument, as Redis takes it */
        args[n++] = extra[first_extra++];
    args[n++] = "--port";
    args[n++] = portbuf;
    args[n++] = "--bind";
    args[n++] = "127.0.0.1";
    /* no save points for either: a test's server writes no dump.rdb into the shared cwd (at its
     * SHUTDOWN or SIGTERM, or meanwhile); a test that wants them passes --save in extra */
    args[n++] = "--save";
    args[n++] = "";
    args[n++] = "--appendonly";
    args[n++] = "no";
    char auxbuf[16];
    for (int i = first_extra; extra && extra[i] && n < 250; i++) {
        if (s->is_redis && strcmp(extra[i], "--threads") == 0 && extra[i + 1]) {
            i++;
            continue;
        }
        if (strcmp(extra[i], PC_FREE_PORT_ARG) == 0) { /* a fresh one per attempt, as the server's own */
            s->aux_port = pc_free_port();
            snprintf(auxbuf, sizeof(auxbuf), "%d", s->aux_port);
            args[n++] = auxbuf;
            continue;
        }
        args[n++] = extra[i];
    }
    args[n] = NULL;

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("testclient: fork");
        return -1;
    }
    if (pid == 0) {
        int fd = open(s->log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, 0);
            close(devnull);
        }
        if (pc_server_nofile > 0) {
            struct rlimit rl = { (rlim_t)pc_server_nofile, (rlim_t)pc_server_nofile };
            if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
                fprintf(stderr, "setrlimit(RLIMIT_NOFILE, %ld): %s\n", pc_server_nofile, strerror(errno));
        }
        execv(bin, (char *const *)args);
        fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
        _exit(127);
    }
    s->pid = pid;
    long long deadline = pc_now_ms() + 20000;
    while (pc_now_ms() < deadline) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            s->pid = 0;
            fprintf(stderr, "testclient: %s on port %d exited before answering PING (status %d)\n",
                    bin, s->port, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
            return -2; /* maybe the port was taken: the caller retries */
        }
        if (ping_ok(s->port))
            return 0;
        pc_sleep_ms(20);
    }
    fprintf(stderr, "testclient: %s on port %d did not answer PING within 20 s\n", bin, s->port);
    pc_server_dump_log(s, 4000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    s->pid = 0;
    return -1;
}

int pc_server_start(struct pc_server *s, const char *bin, const char *const *extra)
{
    if (access(bin, X_OK) != 0) {
        fprintf(stderr, "testclient: server binary %s is not executable: %s\n", bin, strerror(errno));
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    for (int attempt = 0; attempt < 4; attempt++) {
        int r = start_once(s, bin, extra);
        if (r == 0)
            return 0;
        if (r == -1)
            return -1;
        if (attempt == 3)
            pc_server_dump_log(s, 4000);
    }
    return -1;
}

int pc_server_alive(struct pc_server *s)
{
    if (s->external)
        return 1;
    if (s->pid <= 0)
        return 0;
    int st;
    pid_t w = waitpid(s->pid, &st, WNOHANG);
    if (w == s->pid) {
        fprintf(stderr, "testclient: server pid %d died (%s %d)\n", (int)s->pid,
                WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        s->pid = 0;
        return 0;
    }
    return 1;
}

int pc_server_stop(struct pc_server *s, int timeout_ms)
{
    if (s->external)
        return 0;
    if (s->pid <= 0)
        return -1;
    kill(s->pid, SIGTERM);
    long long deadline = pc_now_ms() + timeout_ms;
    for (;;) {
        int st;
        pid_t w = waitpid(s->pid, &st, WNOHANG);
        if (w == s->pid) {
            s->pid = 0;
            if (WIFEXITED(st))
                return WEXITSTATUS(st);
            return 128 + WTERMSIG(st);
        }
        if (w < 0) {
            s->pid = 0;
            return -1;
        }
        if (pc_now_ms() >= deadline)
            break;
        pc_sleep_ms(10);
    }
    fprintf(stderr, "testclient: server pid %d ignored SIGTERM for %d ms; SIGKILL\n", (int)s->pid,
            timeout_ms);
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
    return -1;
}

int pc_test_setup(int argc, char **argv, struct pc_server *s)
{
    return pc_test_setup_extra(argc, argv, s, NULL);
}

int pc_test_setup_extra(int argc, char **argv, struct pc_server *s, const char *const *more)
{
    const char *bin = getenv("PERCORE_SERVER");
    const char *threads = NULL;
    const char *extra[128];
    int ne = 0;
    int after_dashes = 0;
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        if (after_dashes) {
            if (ne < 120)
                extra[ne++] = argv[i];
        } else if (strcmp(argv[i], "--") == 0) {
            after_dashes = 1;
        } else if (strcmp(argv[i], "--server") == 0 && i + 1 < argc) {
            bin = argv[++i];
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--server PATH] [--threads N] [-- server args]\n", argv[0]);
            return -1;
        }
    }
    if (threads) {
        extra[ne++] = "--threads";
        extra[ne++] = threads;
    }
    for (int i = 0; more && more[i] && ne < 126; i++)
        extra[ne++] = more[i];
    extra[ne] = NULL;
    const char *ext = getenv("PC_SERVER_PORT");
    if (ext && *ext) {
        memset(s, 0, sizeof(*s));
        s->port = atoi(ext);
        s->external = 1;
        printf("using the running server on port %d (PC_SERVER_PORT)\n", s->port);
        return 0;
    }
    if (!bin) {
        fprintf(stderr, "%s: no server: pass --server PATH or set PERCORE_SERVER\n", argv[0]);
        return -1;
    }
    if (pc_server_start(s, bin, extra) != 0)
        return -1;
    printf("server %s%s%s on port %d, log %s\n", bin, threads ? " --threads " : "",
           threads ? threads : "", s->port, s->log_path);
    return 0;
}

void pc_test_teardown(struct pc_server *s)
{
    if (s->external)
        return;
    s->max_rss_kb = pc_server_max_rss_kb(s);
    if (!pc_server_alive(s)) {
        s->exit_status = PC_SERVER_DIED;
        pc_fail("server died during the test");
        pc_server_dump_log(s, 8000);
        return;
    }
    int st = pc_server_stop(s, 15000);
    s->exit_status = st;
    if (st != 0) {
        pc_fail("server exit status after SIGTERM: %d (want 0)", st);
        pc_server_dump_log(s, 8000);
    } else {
        atomic_fetch_add(&pc_pass_count, 1);
        if (pc_failures() == 0 && !getenv("PC_KEEP_LOGS"))
            unlink(s->log_path); /* kept when something failed */
    }
}

long pc_server_max_rss_kb(const struct pc_server *s)
{
    return pc_server_status_kb(s, "VmHWM");
}

/* lines of the server log that start with (leaks) or contain (errors) the
 * sanitizer markers; 0 when the log is gone (a clean run removes it) */
static void log_sanitizer_findings(const struct pc_server *s, long *errors, long *leaks)
{
    static const char *const error_marks[] = { "ERROR: AddressSanitizer", "runtime error:",
                                               "WARNING: ThreadSanitizer", NULL };
    *errors = *leaks = 0;
    FILE *f = s->log_path[0] ? fopen(s->log_path, "r") : NULL;
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "Direct leak of", 14) == 0 || strncmp(line, "Indirect leak of", 16) == 0)
            (*leaks)++;
        for (int i = 0; error_marks[i]; i++)
            if (strstr(line, error_marks[i]))
                (*errors)++;
    }
    fclose(f);
}

void pc_reliability_line(const struct pc_server *s, const char *scenario, const char *load,
                         const char *faults, long bad_inputs, long lost_writes)
{
    long errors, leaks;
    log_sanitizer_findings(s, &errors, &leaks);
    long crashes = errors;
    if (s->exit_status != 0 && !s->external && crashes == 0 && leaks == 0)
        crashes = 1; /* died, killed or a non-zero exit without a sanitizer report */
    char lost[24];
    if (lost_writes < 0)
        snprintf(lost, sizeof(lost), "n/a");
    else
        snprintf(lost, sizeof(lost), "%ld", lost_writes);
    printf("RELIABILITY scenario=\"%s\" load=\"%s\" faults=\"%s\" bad_inputs=%ld crashes=%ld "
           "leaks=%ld lost_writes=%s max_rss_kb=%ld\n",
           scenario, load, faults, bad_inputs, crashes, leaks, lost, s->max_rss_kb);
}

/* ---- raw connections ----------------------------------------------------- */

static struct pc_conn *conn_open(int port, int quiet)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        if (!quiet)
            perror("testclient: socket");
        return NULL;
    }
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        if (!quiet)
            fprintf(stderr, "testclient: connect 127.0.0.1:%d: %s\n", port, strerror(errno));
        close(fd);
        return NULL;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct pc_conn *c = calloc(1, sizeof(*c));
    c->fd = fd;
    return c;
}

struct pc_conn *pc_conn_open(int port)
{
    return conn_open(port, 0);
}

struct pc_conn *pc_conn_open_quiet(int port)
{
    return conn_open(port, 1);
}

void pc_conn_close(struct pc_conn **c)
{
    if (!c || !*c)
        return;
    if ((*c)->fd >= 0)
        close((*c)->fd);
    free((*c)->buf);
    free(*c);
    *c = NULL;
}

void pc_conn_abort(struct pc_conn **c)
{
    if (!c || !*c)
        return;
    struct linger lg = { 1, 0 };
    setsockopt((*c)->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    pc_conn_close(c);
}

int pc_conn_write(struct pc_conn *c, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                struct pollfd pfd = { c->fd, POLLOUT, 0 };
                poll(&pfd, 1, 1000);
                continue;
            }
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void buf_append(char **out, size_t *len, size_t *cap, const char *p, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t nc = *cap ? *cap : 256;
        while (nc < *len + n + 1)
            nc *= 2;
        *out = realloc(*out, nc);
        *cap = nc;
    }
    memcpy(*out + *len, p, n);
    *len += n;
    (*out)[*len] = '\0';
}

void pc_resp_encode(char **out, size_t *len, size_t *cap, int argc,
                    const char *const *argv, const size_t *argvlen)
{
    char hdr[32];
    int h = snprintf(hdr, sizeof(hdr), "*%d\r\n", argc);
    buf_append(out, len, cap, hdr, (size_t)h);
    for (int i = 0; i < argc; i++) {
        size_t al = argvlen ? argvlen[i] : strlen(argv[i]);
        h = snprintf(hdr, sizeof(hdr), "$%zu\r\n", al);
        buf_append(out, len, cap, hdr, (size_t)h);
        buf_append(out, len, cap, argv[i], al);
        buf_append(out, len, cap, "\r\n", 2);
    }
}

int pc_conn_send(struct pc_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    char *out = NULL;
    size_t len = 0, cap = 0;
    pc_resp_encode(&out, &len, &cap, argc, argv, argvlen);
    int r = pc_conn_write(c, out, len);
    free(out);
    return r;
}

/* the line at buf[pos..] up to CRLF: returns the index after CRLF, 0 if
 * incomplete, -1 if bad */
static long line_end(const char *buf, size_t len, size_t pos)
{
    for (size_t i = pos; i + 1 < len; i++) {
        if (buf[i] == '\r') {
            if (buf[i + 1] != '\n')
                return -1;
            return (long)(i + 2);
        }
    }
    return 0;
}

static int parse_ll(const char *p, const char *end, long long *v)
{
    if (p >= end)
        return -1;
    char tmp[32];
    size_t n = (size_t)(end - p);
    if (n >= sizeof(tmp))
        return -1;
    memcpy(tmp, p, n);
    tmp[n] = '\0';
    char *e;
    errno = 0;
    *v = strtoll(tmp, &e, 10);
    if (*e || errno)
        return -1;
    return 0;
}

static long value_end(const char *buf, size_t len, size_t pos, int depth)
{
    if (depth > 64)
        return -1;
    if (pos >= len)
        return 0;
    char t = buf[pos];
    long le = line_end(buf, len, pos + 1);
    if (le <= 0)
        return le;
    const char *numstart = buf + pos + 1, *numend = buf + le - 2;
    long long n;
    switch (t) {
    case '+': case '-': case ':': case '_': case ',': case '#': case '(':
        return le;
    case '$': case '!': case '=':
        if (parse_ll(numstart, numend, &n) != 0)
            return -1;
        if (n < 0)
            return le; /* $-1 null bulk */
        if ((size_t)le + (size_t)n + 2 > len)
            return 0;
        if (buf[le + n] != '\r' || buf[le + n + 1] != '\n')
            return -1;
        return le + (long)n + 2;
    case '*': case '~': case '>': case '%': case '|': {
        if (parse_ll(numstart, numend, &n) != 0)
            return -1;
        if (n < 0)
            return le; /* *-1 null array */
        long long items = (t == '%' || t == '|') ? n * 2 : n;
        size_t p = (size_t)le;
        for (long long i = 0; i < items; i++) {
            long e = value_end(buf, len, p, depth + 1);
            if (e <= 0)
                return e;
            p = (size_t)e;
        }
        if (t == '|') /* attribute: followed by the real value */
            return value_end(buf, len, p, depth + 1);
        return (long)p;
    }
    default:
        return -1;
    }
}

long pc_resp_value_len(const char *buf, size_t len)
{
    return value_end(buf, len, 0, 0);
}

/* read what is available, waiting up to timeout_ms for the first byte:
 * 1 got bytes, 0 timeout, -1 eof/error */
static int fill(struct pc_conn *c, int timeout_ms)
{
    if (c->eof)
        return -1;
    struct pollfd pfd = { c->fd, POLLIN, 0 };
    int pr;
    do {
        pr = poll(&pfd, 1, timeout_ms);
    } while (pr < 0 && errno == EINTR);
    if (pr == 0)
        return 0;
    if (c->len + 65536 + 1 > c->cap) {
        size_t nc = c->cap ? c->cap : 65536;
        while (nc < c->len + 65536 + 1)
            nc *= 2;
        c->buf = realloc(c->buf, nc);
        c->cap = nc;
    }
    ssize_t n;
    do {
        n = recv(c->fd, c->buf + c->len, 65536, 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
        c->eof = 1;
        return -1;
    }
    c->len += (size_t)n;
    return 1;
}

int pc_conn_read_reply(struct pc_conn *c, char **out, size_t *outlen, int timeout_ms)
{
    long long deadline = pc_now_ms() + timeout_ms;
    *out = NULL;
    *outlen = 0;
    for (;;) {
        if (c->len > 0) {
            long e = pc_resp_value_len(c->buf, c->len);
            if (e < 0)
                return -2;
            if (e > 0) {
                *out = malloc((size_t)e + 1);
                memcpy(*out, c->buf, (size_t)e);
                (*out)[e] = '\0';
                *outlen = (size_t)e;
                memmove(c->buf, c->buf + e, c->len - (size_t)e);
                c->len -= (size_t)e;
                return 1;
            }
        }
        long long left = deadline - pc_now_ms();
        if (left <= 0)
            return 0;
        int r = fill(c, (int)left);
        if (r < 0)
            return -1;
    }
}

int pc_conn_wait_closed(struct pc_conn *c, int timeout_ms)
{
    if (c->len > 0)
        return -1;
    long long deadline = pc_now_ms() + timeout_ms;
    for (;;) {
        long long left = deadline - pc_now_ms();
        if (left <= 0)
            return 0;
        int r = fill(c, (int)left);
        if (r < 0)
            return 1;
        if (r > 0)
            return -1;
    }
}

char *pc_conn_cmd(struct pc_conn *c, size_t *outlen, int argc, const char *const *argv)
{
    size_t dummy;
    if (!outlen)
        outlen = &dummy;
    if (pc_conn_send(c, argc, argv, NULL) != 0)
        return NULL;
    char *r;
    if (pc_conn_read_reply(c, &r, outlen, pc_reply_timeout_ms) != 1)
        return NULL;
    return r;
}

char *pc_conn_cmdl(struct pc_conn *c, size_t *outlen, const char *arg0, ...)
{
    const char *argv[256];
    int argc = 0;
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && argc < 256; a = va_arg(ap, const char *))
        argv[argc++] = a;
    va_end(ap);
    return pc_conn_cmd(c, outlen, argc, argv);
}

/* ---- hiredis ------------------------------------------------------------- */

redisContext *pc_hiredis_connect(int port)
{
    struct timeval tv = { 10, 0 };
    redisContext *ctx = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!ctx || ctx->err) {
        fprintf(stderr, "testclient: hiredis connect :%d: %s\n", port, ctx ? ctx->errstr : "oom");
        if (ctx)
            redisFree(ctx);
        return NULL;
    }
    redisSetTimeout(ctx, tv);
    return ctx;
}

/* ---- expectations -------------------------------------------------------- */

void pc_print_escaped(FILE *f, const char *buf, size_t len, size_t max)
{
    fputc('"', f);
    for (size_t i = 0; i < len && i < max; i++) {
        unsigned char ch = (unsigned char)buf[i];
        if (ch == '\r')
            fputs("\\r", f);
        else if (ch == '\n')
            fputs("\\n", f);
        else if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 32 || ch >= 127)
            fprintf(f, "\\x%02x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
    if (len > max)
        fprintf(f, "... (%zu bytes)", len);
}

void pc_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("FAIL: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    atomic_fetch_add(&pc_fail_count, 1);
}

int pc_failures(void)
{
    return atomic_load(&pc_fail_count);
}

int pc_expect_bytes_n(const char *what, const char *got, size_t gotlen, const char *exp,
                      size_t explen)
{
    if (got && gotlen == explen && memcmp(got, exp, explen) == 0) {
        atomic_fetch_add(&pc_pass_count, 1);
        return 1;
    }
    atomic_fetch_add(&pc_fail_count, 1);
    fprintf(stderr, "FAIL: %s\n  expected: ", what);
    pc_print_escaped(stderr, exp, explen, 300);
    fprintf(stderr, "\n  got:      ");
    if (!got) {
        fprintf(stderr, "(no reply: timeout or connection closed)\n");
        return 0;
    }
    pc_print_escaped(stderr, got, gotlen, 300);
    size_t i = 0;
    while (i < gotlen && i < explen && got[i] == exp[i])
        i++;
    fprintf(stderr, "\n  first difference at byte %zu\n", i);
    return 0;
}

int pc_expect_bytes(const char *what, const char *got, size_t gotlen, const char *exp)
{
    return pc_expect_bytes_n(what, got, gotlen, exp, strlen(exp));
}

static void describe_cmd(char *out, size_t outsz, int argc, const char *const *argv,
                         const size_t *argvlen)
{
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < argc && o + 8 < outsz; i++) {
        size_t al = argvlen ? argvlen[i] : strlen(argv[i]);
        if (i)
            out[o++] = ' ';
        for (size_t j = 0; j < al && o + 8 < outsz; j++) {
            unsigned char ch = (unsigned char)argv[i][j];
            if (ch < 32 || ch >= 127)
                o += (size_t)snprintf(out + o, outsz - o, "\\x%02x", ch);
            else
                out[o++] = (char)ch;
        }
        if (al > 60 && o + 8 < outsz) {
            /* long args are cut by the loop bound; fine for a message */
        }
    }
    if (o >= outsz)
        o = outsz - 1;
    out[o] = '\0';
    if (strlen(out) > 200)
        strcpy(out + 190, "...");
}

int pc_expectv(struct pc_conn *c, const char *exp, size_t explen, int argc,
               const char *const *argv, const size_t *argvlen)
{
    char what[512];
    describe_cmd(what, sizeof(what), argc, argv, argvlen);
    char *r = NULL;
    size_t rl = 0;
    if (pc_conn_send(c, argc, argv, argvlen) == 0)
        pc_conn_read_reply(c, &r, &rl, pc_reply_timeout_ms);
    int ok = pc_expect_bytes_n(what, r, rl, exp, explen);
    free(r);
    return ok;
}

int pc_expect(struct pc_conn *c, const char *exp, const char *arg0, ...)
{
    const char *argv[256];
    int argc = 0;
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && argc < 256; a = va_arg(ap, const char *))
        argv[argc++] = a;
    va_end(ap);
    return pc_expectv(c, exp, strlen(exp), argc, argv, NULL);
}

int pc_expect_reply(struct pc_conn *c, const char *what, const char *exp, size_t explen)
{
    char *r = NULL;
    size_t rl = 0;
    pc_conn_read_reply(c, &r, &rl, pc_reply_timeout_ms);
    int ok = pc_expect_bytes_n(what, r, rl, exp, explen);
    free(r);
    return ok;
}

int pc_test_done(const char *name)
{
    int f = pc_failures(), p = atomic_load(&pc_pass_count);
    printf("%s: %d passed, %d failed\n", name, p, f);
    return f ? 1 : 0;
}

/* ---- keys and slots ------------------------------------------------------ */

static uint16_t crc16_xmodem(const char *buf, size_t len)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)((unsigned char)buf[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

unsigned pc_key_slot(const char *key, size_t len)
{
    size_t s, e;
    for (s = 0; s < len; s++)
        if (key[s] == '{')
            break;
    if (s < len) {
        for (e = s + 1; e < len; e++)
            if (key[e] == '}')
                break;
        if (e < len && e != s + 1)
            return crc16_xmodem(key + s + 1, e - s - 1) & 16383;
    }
    return crc16_xmodem(key, len) & 16383;
}

size_t pc_key_for_slot(const char *prefix, unsigned slot, char *buf, size_t bufsize)
{
    for (unsigned long n = 0;; n++) {
        int l = snprintf(buf, bufsize, "%s%lu", prefix, n);
        if (pc_key_slot(buf, (size_t)l) == slot)
            return (size_t)l;
    }
}

void pc_spread_keys(const char *prefix, char keys[PC_SPREAD_KEYS][64])
{
    for (unsigned i = 0; i < PC_SPREAD_KEYS; i++)
        pc_key_for_slot(prefix, i * 1024 + i, keys[i], 64);
}

/* ---- chaos and fault tests ----------------------------------------------- */

long pc_server_status_kb(const struct pc_server *s, const char *field)
{
    if (s->external || s->pid <= 0)
        return -1;
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)s->pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t flen = strlen(field);
    long kb = -1;
    while (kb < 0 && fgets(line, sizeof(line), f))
        if (strncmp(line, field, flen) == 0 && line[flen] == ':')
            kb = atol(line + flen + 1);
    fclose(f);
    return kb;
}

long long pc_server_cpu_ms(const struct pc_server *s)
{
    if (s->external || s->pid <= 0)
        return -1;
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)s->pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* after "pid (comm) ": state is field 3, utime and stime fields 14 and 15 */
    const char *p = strrchr(buf, ')');
    unsigned long long utime, stime;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
        return -1;
    return (long long)(utime + stime) * 1000 / sysconf(_SC_CLK_TCK);
}

int pc_server_log_has(const struct pc_server *s, const char *needle)
{
    FILE *f = s->log_path[0] ? fopen(s->log_path, "r") : NULL;
    if (!f)
        return -1;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof(line), f))
        found = strstr(line, needle) != NULL;
    fclose(f);
    return found;
}

long long pc_info_ll(struct pc_conn *c, const char *field)
{
    char *r = pc_conn_cmdl(c, NULL, "INFO", "everything", NULL);
    char pat[96];
    snprintf(pat, sizeof(pat), "\r\n%s:", field);
    const char *p = r ? strstr(r, pat) : NULL;
    long long v = p ? atoll(p + strlen(pat)) : -1;
    free(r);
    return v;
}

/* field on the INFO shards line of shard (all shards summed when shard < 0) */
static long long info_shards(struct pc_conn *c, int shard, const char *field)
{
    char *r = pc_conn_cmdl(c, NULL, "INFO", "shards", NULL);
    if (!r)
        return -1;
    char pat[96], first[96]; /* "shardN:cpu=0,node=0,...": the first field follows the colon */
    snprintf(pat, sizeof(pat), ",%s=", field);
    snprintf(first, sizeof(first), ":%s=", field);
    long long sum = -1;
    for (const char *line = strstr(r, "\nshard"); line; line = strstr(line + 1, "\nshard")) {
        const char *end = strchr(line + 1, '\n'), *p = strstr(line, pat);
        if (!p || (end && p > end))
            p = strstr(line, first);
        if (!p || (end && p > end) || (shard >= 0 && atoi(line + 6) != shard))
            continue;
        sum = (sum < 0 ? 0 : sum) + atoll(p + strlen(pat));
    }
    free(r);
    return sum;
}

long long pc_info_shards_sum(struct pc_conn *c, const char *field)
{
    return info_shards(c, -1, field);
}

long long pc_info_shard_field(struct pc_conn *c, int shard, const char *field)
{
    return info_shards(c, shard, field);
}

long long pc_info_wait_for(struct pc_conn *c, const char *field, long long want, int timeout_ms)
{
    long long deadline = pc_now_ms() + timeout_ms, v;
    while ((v = pc_info_ll(c, field)) != want && pc_now_ms() < deadline)
        pc_sleep_ms(50);
    return v;
}

int pc_conn_home_shard(struct pc_conn *c)
{
    char *r = pc_conn_cmdl(c, NULL, "CLIENT", "INFO", NULL);
    const char *p = r ? strstr(r, " shard=") : NULL;
    int shard = p ? atoi(p + 7) : -1;
    free(r);
    return shard;
}

int pc_slot_shard(unsigned slot, int nshards)
{
    return (int)((unsigned long)slot * (unsigned long)nshards / 16384u);
}

long long pc_conn_drain_until_closed(struct pc_conn *c, int timeout_ms)
{
    static _Thread_local char buf[1 << 16];
    long long total = (long long)c->len, deadline = pc_now_ms() + timeout_ms;
    c->len = 0;
    if (c->eof)
        return total;
    while (pc_now_ms() < deadline) {
        struct pollfd p = { c->fd, POLLIN, 0 };
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
            c->eof = 1;
            return total;
        }
        if (n > 0)
            total += n;
    }
    return -1;
}

long pc_raise_nofile(long want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return -1;
    if (rl.rlim_cur < (rlim_t)want) {
        rl.rlim_cur = (rlim_t)want;
        if (rl.rlim_max < (rlim_t)want)
            rl.rlim_max = (rlim_t)want; /* root only */
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0) {
            rl.rlim_cur = rl.rlim_max; /* not root: as far as the hard limit goes */
            setrlimit(RLIMIT_NOFILE, &rl);
        }
    }
    return (long)rl.rlim_cur;
}

int pc_sanitized(void)
{
#if defined(PERCORE_SANITIZE_ADDRESS) || defined(PERCORE_SANITIZE_THREAD)
    return 1;
#else
    return 0;
#endif
}
