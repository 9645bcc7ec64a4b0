/*
 * test_client: CLIENT LIST / INFO / KILL across shards, and protected mode.
 *
 * The connections of a server with several shards live on different shard
 * threads (the kernel spreads them with SO_REUSEPORT); CLIENT LIST must
 * still show all of them, and CLIENT KILL find and close any of them:
 *
 * 1. 8 named connections; CLIENT LIST from one of them lists all 9 lines
 *    in id order with Redis 7.0's fields in Redis's order, cmd= the last
 *    command (client|list for the caller); LIST ID (in the order asked),
 *    LIST TYPE, CLIENT INFO; Redis's error texts.
 * 2. CLIENT KILL, new form by ID, ADDR, LADDR+ID, TYPE; old form addr:port
 *    (+OK / "No such client"); each victim sees its connection closed;
 *    SKIPME yes spares the caller, SKIPME no and the old form close it
 *    after the reply (a command pipelined behind it gets no answer);
 *    filter errors are Redis's.
 * 3. protected-mode: a server bound to 127.0.0.1 and this host's
 *    non-loopback address refuses a client coming from that address with
 *    Redis's -DENIED text, unless a password is set or protected-mode is
 *    off; loopback clients always get in.  Skipped when the host has only
 *    loopback, or against an external server.
 *
 * Passes against redis-server 7.0.15 too (--server /usr/bin/redis-server).
 */
#include "testclient.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define NCONN 8

static int port;

static long long cmd_int(struct pc_conn *c, const char *what, const char *arg0, ...)
    __attribute__((sentinel));

/* send a NULL-terminated command, expect an integer reply */
static long long cmd_int(struct pc_conn *c, const char *what, const char *arg0, ...)
{
    const char *argv[16];
    int argc = 0;
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && argc < 16; a = va_arg(ap, const char *))
        argv[argc++] = a;
    va_end(ap);
    size_t rl;
    char *r = pc_conn_cmd(c, &rl, argc, argv);
    long long v = -1;
    if (!r || r[0] != ':')
        pc_fail("%s: expected an integer, got %s", what, r ? r : "(nothing)");
    else
        v = strtoll(r + 1, NULL, 10);
    free(r);
    return v;
}

/* the text of a bulk reply (CLIENT LIST / INFO in RESP2), malloc'd */
static char *cmd_text(struct pc_conn *c, const char *arg0, ...) __attribute__((sentinel));
static char *cmd_text(struct pc_conn *c, const char *arg0, ...)
{
    const char *argv[16];
    int argc = 0;
    va_list ap;
    va_start(ap, arg0);
    for (const char *a = arg0; a && argc < 16; a = va_arg(ap, const char *))
        argv[argc++] = a;
    va_end(ap);
    size_t rl;
    char *r = pc_conn_cmd(c, &rl, argc, argv);
    if (!r || r[0] != '$') {
        pc_fail("%s: expected a bulk reply, got %s", arg0, r ? r : "(nothing)");
        free(r);
        return strdup("");
    }
    char *body = strdup(strchr(r, '\n') + 1);
    body[strtol(r + 1, NULL, 10)] = '\0';
    free(r);
    return body;
}

/* value of field `name` in a CLIENT LIST line (up to the next space or newline) */
static void field(const char *line, const char *name, char *out, size_t cap)
{
    char key[64];
    snprintf(key, sizeof key, " %s=", name);
    const char *p = strncmp(line, key + 1, strlen(key) - 1) == 0 ? line - 1 : strstr(line, key);
    out[0] = '\0';
    if (!p)
        return;
    p += strlen(key);
    size_t n = strcspn(p, " \n");
    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
}

static int count_lines(const char *text)
{
    int n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    return n;
}

/* the line of client id in text, or NULL */
static const char *line_of(const char *text, long long id)
{
    char key[32];
    snprintf(key, sizeof key, "id=%lld ", id);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, key, strlen(key)) == 0)
            return p;
    return NULL;
}

static void check_field_order(const char *line)
{
    static const char *const names[] = {
        "id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub", "ssub", "multi",
        "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll", "omem", "tot-mem",
        "events", "cmd", "user", "redir", "resp"};
    const char *p = line;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(p, names[i], n) != 0 || p[n] != '=') {
            pc_fail("CLIENT LIST field %zu: expected %s= at \"%.40s\"", i, names[i], p);
            return;
        }
        p += strcspn(p, " \n");
        if (*p == ' ')
            p++;
    }
}

static void phase_list(struct pc_conn **cs, long long *ids)
{
    char *list = cmd_text(cs[0], "CLIENT", "LIST", NULL);
    if (count_lines(list) != NCONN)
        pc_fail("CLIENT LIST: %d lines, expected %d:\n%s", count_lines(list), NCONN, list);
    long long last = 0;
    char shards_seen[64] = "";
    for (const char *p = list; *p; p = strchr(p, '\n') + 1) {
        long long id = strtoll(p + 3, NULL, 10);
        if (id <= last)
            pc_fail("CLIENT LIST: ids not increasing (%lld after %lld)", id, last);
        last = id;
        check_field_order(p);
        char shard[16];
        field(p, "shard", shard, sizeof shard);
        if (shard[0] && !strstr(shards_seen, shard) && strlen(shards_seen) < 48) {
            strcat(shards_seen, shard);
            strcat(shards_seen, " ");
        }
    }
    printf("CLIENT LIST: %d connections on shards %s\n", count_lines(list), shards_seen[0] ? shards_seen : "-");
    for (int i = 0; i < NCONN; i++) {
        const char *l = line_of(list, ids[i]);
        char name[32], want[32], cmd[32];
        if (!l) {
            pc_fail("CLIENT LIST misses client %d (id %lld)", i, ids[i]);
            continue;
        }
        field(l, "name", name, sizeof name);
        snprintf(want, sizeof want, "conn%d", i);
        if (strcmp(name, want) != 0)
            pc_fail("client %d: name=%s, expected %s", i, name, want);
        field(l, "cmd", cmd, sizeof cmd);
        if (strcmp(cmd, i == 0 ? "client|list" : "client|id") != 0)
            pc_fail("client %d: cmd=%s", i, cmd);
    }
    free(list);

    char a[24], b[24];
    snprintf(a, sizeof a, "%lld", ids[5]);
    snprintf(b, sizeof b, "%lld", ids[2]);
    list = cmd_text(cs[1], "CLIENT", "LIST", "ID", a, "999999", b, NULL);
    if (count_lines(list) != 2 || line_of(list, ids[5]) != list || !line_of(list, ids[2]))
        pc_fail("CLIENT LIST ID %s 999999 %s:\n%s", a, b, list);
    free(list);
    list = cmd_text(cs[1], "CLIENT", "LIST", "TYPE", "normal", NULL);
    if (count_lines(list) != NCONN)
        pc_fail("CLIENT LIST TYPE normal: %d lines", count_lines(list));
    free(list);
    pc_expect(cs[1], "$0\r\n\r\n", "CLIENT", "LIST", "TYPE", "pubsub", NULL); /* no subscriber yet */
    pc_expect(cs[1], "-ERR Unknown client type 'foo'\r\n", "CLIENT", "LIST", "TYPE", "foo", NULL);
    pc_expect(cs[1], "-ERR Invalid client ID\r\n", "CLIENT", "LIST", "ID", "x", NULL);
    pc_expect(cs[1], "-ERR syntax error\r\n", "CLIENT", "LIST", "foo", NULL);
    pc_expect(cs[1], "-ERR syntax error\r\n", "CLIENT", "LIST", "ID", NULL);

    char *info = cmd_text(cs[3], "CLIENT", "INFO", NULL);
    char id[24], cmd[32];
    field(info, "id", id, sizeof id);
    field(info, "cmd", cmd, sizeof cmd);
    if (strtoll(id, NULL, 10) != ids[3] || strcmp(cmd, "client|info") != 0 || count_lines(info) != 1)
        pc_fail("CLIENT INFO: %s", info);
    check_field_order(info);
    free(info);
}

/* the addr= / laddr= of a connection, from its own CLIENT INFO */
static void own_addr(struct pc_conn *c, const char *name, char *out, size_t cap)
{
    char *info = cmd_text(c, "CLIENT", "INFO", NULL);
    field(info, name, out, cap);
    free(info);
}

static void expect_closed(struct pc_conn **c, const char *what)
{
    if (pc_conn_wait_closed(*c, 5000) != 1)
        pc_fail("%s: the connection was not closed", what);
    pc_conn_close(c);
}

static void phase_kill(struct pc_conn **cs, long long *ids)
{
    char id[24], addr[64], laddr[64];
    struct pc_conn *admin = cs[0];

    pc_expect(admin, "-ERR wrong number of arguments for 'client|kill' command\r\n", "CLIENT", "KILL", NULL);
    pc_expect(admin, "-ERR No such client\r\n", "CLIENT", "KILL", "1.2.3.4:5", NULL);
    pc_expect(admin, "-ERR No such client\r\n", "CLIENT", "KILL", "id", NULL);
    pc_expect(admin, "-ERR client-id should be greater than 0\r\n", "CLIENT", "KILL", "ID", "x", NULL);
    pc_expect(admin, "-ERR client-id should be greater than 0\r\n", "CLIENT", "KILL", "ID", "0", NULL);
    pc_expect(admin, "-ERR syntax error\r\n", "CLIENT", "KILL", "SKIPME", "maybe", NULL);
    pc_expect(admin, "-ERR syntax error\r\n", "CLIENT", "KILL", "USER", "default", "x", NULL);
    pc_expect(admin, "-ERR syntax error\r\n", "CLIENT", "KILL", "foo", "bar", NULL);
    pc_expect(admin, "-ERR No such user 'nobody'\r\n", "CLIENT", "KILL", "USER", "nobody", NULL);
    pc_expect(admin, "-ERR Unknown client type 'foo'\r\n", "CLIENT", "KILL", "TYPE", "foo", NULL);
    pc_expect(admin, ":0\r\n", "CLIENT", "KILL", "ID", "999999", NULL);
    pc_expect(admin, ":0\r\n", "CLIENT", "KILL", "TYPE", "pubsub", NULL);
    pc_expect(admin, ":0\r\n", "CLIENT", "KILL", "ADDR", "1.2.3.4:5", NULL);

    /* new form, by ID */
    snprintf(id, sizeof id, "%lld", ids[1]);
    if (cmd_int(admin, "KILL ID", "CLIENT", "KILL", "ID", id, NULL) != 1)
        pc_fail("CLIENT KILL ID %s did not kill 1", id);
    expect_closed(&cs[1], "KILL ID");
    /* old form, addr:port */
    own_addr(cs[2], "addr", addr, sizeof addr);
    pc_expect(admin, "+OK\r\n", "CLIENT", "KILL", addr, NULL);
    expect_closed(&cs[2], "KILL addr:port");
    /* ADDR, and LADDR with ID (filters AND together) */
    own_addr(cs[3], "addr", addr, sizeof addr);
    if (cmd_int(admin, "KILL ADDR", "CLIENT", "KILL", "ADDR", addr, "SKIPME", "yes", NULL) != 1)
        pc_fail("CLIENT KILL ADDR %s did not kill 1", addr);
    expect_closed(&cs[3], "KILL ADDR");
    own_addr(cs[4], "laddr", laddr, sizeof laddr);
    snprintf(id, sizeof id, "%lld", ids[4]);
    if (cmd_int(admin, "KILL LADDR", "CLIENT", "KILL", "LADDR", laddr, "ID", id, NULL) != 1)
        pc_fail("CLIENT KILL LADDR %s ID %s did not kill 1", laddr, id);
    expect_closed(&cs[4], "KILL LADDR ID");

    /* the caller: spared by default, closed after its reply with SKIPME no */
    snprintf(id, sizeof id, "%lld", ids[5]);
    pc_expect(cs[5], ":0\r\n", "CLIENT", "KILL", "ID", id, NULL);
    pc_expect(cs[5], "+PONG\r\n", "PING", NULL);
    char *req = NULL;
    size_t len = 0, cap = 0;
    const char *kill[] = {"CLIENT", "KILL", "ID", id, "SKIPME", "no"};
    const char *ping[] = {"PING"};
    pc_resp_encode(&req, &len, &cap, 6, kill, NULL);
    pc_resp_encode(&req, &len, &cap, 1, ping, NULL);
    pc_conn_write(cs[5], req, len);
    free(req);
    pc_expect_reply(cs[5], "KILL self SKIPME no", ":1\r\n", 4);
    expect_closed(&cs[5], "KILL self (the pipelined PING must get no reply)");
    /* old form on oneself */
    own_addr(cs[6], "addr", addr, sizeof addr);
    pc_expect(cs[6], "+OK\r\n", "CLIENT", "KILL", addr, NULL);
    expect_closed(&cs[6], "KILL own addr");

    /* everyone else */
    if (cmd_int(admin, "KILL TYPE normal", "CLIENT", "KILL", "TYPE", "normal", NULL) != 1)
        pc_fail("CLIENT KILL TYPE normal: expected 1 (conn7)");
    expect_closed(&cs[7], "KILL TYPE normal");
    char *list = cmd_text(admin, "CLIENT", "LIST", NULL);
    if (count_lines(list) != 1 || !line_of(list, ids[0]))
        pc_fail("after the kills CLIENT LIST is:\n%s", list);
    free(list);
}

/* this host's first non-loopback IPv4 address, or 0 */
static int local_ipv4(char *buf, size_t cap)
{
    struct ifaddrs *ifs, *i;
    int found = 0;
    if (getifaddrs(&ifs) != 0)
        return 0;
    for (i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        struct in_addr a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        if ((ntohl(a.s_addr) >> 24) == 127)
            continue;
        found = inet_ntop(AF_INET, &a, buf, (socklen_t)cap) != NULL;
    }
    freeifaddrs(ifs);
    return found;
}

/* connect to ip:port; the first reply line to PING, or "" when closed with nothing */
static char *ping_from(const char *ip, int p)
{
    static char line[2048];
    line[0] = '\0';
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p)};
    inet_pton(AF_INET, ip, &sa.sin_addr);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        snprintf(line, sizeof line, "connect failed");
        close(fd);
        return line;
    }
    ssize_t w = write(fd, "PING\r\n", 6);
    (void)w;
    size_t got = 0;
    for (;;) {
        ssize_t n = read(fd, line + got, sizeof line - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
        line[got] = '\0';
        if (strstr(line, "\r\n"))
            break;
    }
    close(fd);
    return line;
}

static const char denied[] =
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

/* TYPE pubsub is a subscriber (SUBSCRIBE or PSUBSCRIBE), TYPE normal the others, as Redis's getClientType */
static void phase_types(void)
{
    struct pc_conn *sub = pc_conn_open(port), *psub = pc_conn_open(port), *admin = pc_conn_open(port);
    if (!sub || !psub || !admin) {
        pc_fail("TYPE phase: connections did not open");
        return;
    }
    pc_expect(sub, "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n", "SUBSCRIBE", "ch", NULL);
    pc_expect(psub, "*3\r\n$10\r\npsubscribe\r\n$2\r\nx*\r\n:1\r\n", "PSUBSCRIBE", "x*", NULL);
    char *list = cmd_text(admin, "CLIENT", "LIST", "TYPE", "pubsub", NULL);
    if (count_lines(list) != 2 || !strstr(list, "flags=P"))
        pc_fail("CLIENT LIST TYPE pubsub, two subscribers:\n%s", list);
    free(list);
    list = cmd_text(admin, "CLIENT", "LIST", "TYPE", "normal", NULL);
    if (strstr(list, "flags=P"))
        pc_fail("CLIENT LIST TYPE normal lists a subscriber:\n%s", list);
    free(list);
    pc_expect(admin, "$0\r\n\r\n", "CLIENT", "LIST", "TYPE", "master", NULL); /* no master: not a replica */
    pc_expect(admin, ":2\r\n", "CLIENT", "KILL", "TYPE", "pubsub", NULL);
    expect_closed(&sub, "CLIENT KILL TYPE pubsub");
    expect_closed(&psub, "CLIENT KILL TYPE pubsub");
    pc_conn_close(&admin);
}

static void phase_protected(const char *bin, const char *threads)
{
    char ip[64];
    if (!bin || !local_ipv4(ip, sizeof ip)) {
        printf("protected-mode: skipped (no non-loopback address, or an external server)\n");
        return;
    }
    struct pc_server s;
    const char *extra[] = {"--bind", "127.0.0.1", ip, "--threads", threads ? threads : "1", NULL};
    if (pc_server_start(&s, bin, extra) != 0) {
        pc_fail("protected-mode: server bound to 127.0.0.1 %s did not start", ip);
        return;
    }
    printf("protected-mode: server on 127.0.0.1 and %s port %d\n", ip, s.port);
    char *r;
    for (int i = 0; i < 4; i++) { /* several connections: they land on different shards */
        r = ping_from(ip, s.port);
        pc_expect_bytes("protected-mode, non-loopback client", r, strlen(r), denied);
    }
    r = ping_from("127.0.0.1", s.port);
    pc_expect_bytes("protected-mode, loopback client", r, strlen(r), "+PONG\r\n");
    struct pc_conn *local = pc_conn_open(s.port);
    if (local) {
        pc_expect(local, "+OK\r\n", "CONFIG", "SET", "requirepass", "secret", NULL);
        r = ping_from(ip, s.port);
        pc_expect_bytes("protected-mode with a password", r, strlen(r),
                        "-NOAUTH Authentication required.\r\n");
        pc_expect(local, "+OK\r\n", "AUTH", "secret", NULL);
        pc_expect(local, "+OK\r\n", "CONFIG", "SET", "requirepass", "", NULL);
        pc_expect(local, "+OK\r\n", "CONFIG", "SET", "protected-mode", "no", NULL);
        r = ping_from(ip, s.port);
        pc_expect_bytes("protected-mode no", r, strlen(r), "+PONG\r\n");
        pc_conn_close(&local);
    }
    if (pc_server_stop(&s, 10000) != 0)
        pc_fail("protected-mode server did not exit cleanly");
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 1;
    port = srv.port;
    const char *bin = getenv("PERCORE_SERVER"), *threads = NULL;
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--server") == 0)
            bin = argv[i + 1];
        if (strcmp(argv[i], "--threads") == 0)
            threads = argv[i + 1];
    }

    struct pc_conn *cs[NCONN];
    long long ids[NCONN];
    for (int i = 0; i < NCONN; i++) {
        char name[32];
        cs[i] = pc_conn_open(port);
        if (!cs[i]) {
            pc_fail("connection %d did not open", i);
            return pc_test_done("test_client");
        }
        snprintf(name, sizeof name, "conn%d", i);
        pc_expect(cs[i], "+OK\r\n", "CLIENT", "SETNAME", name, NULL);
        ids[i] = cmd_int(cs[i], "CLIENT ID", "CLIENT", "ID", NULL);
    }
    phase_list(cs, ids);
    phase_kill(cs, ids);
    phase_types();
    for (int i = 0; i < NCONN; i++)
        if (cs[i])
            pc_conn_close(&cs[i]);
    if (!srv.external)
        phase_protected(bin, threads);
    pc_test_teardown(&srv);
    return pc_test_done("test_client");
}
