/*
 * test_stats: INFO commandstats / latencystats / errorstats, CONFIG
 * RESETSTAT and the Prometheus endpoint, with keys on every shard.
 *
 * Exactly 1000 GETs go out over keys that cover every shard, some of them
 * on list keys (WRONGTYPE); a few GETs with the wrong arity are rejected
 * before they run.  The figures are merged by the aggregator every
 * stats-interval, so INFO is polled (up to 2 s) until cmdstat_get shows the
 * 1000 calls; then failed_calls must be exactly the WRONGTYPE count and
 * rejected_calls the arity errors.  The same numbers must come out of GET
 * /metrics (a raw HTTP/1.0 request), in parseable Prometheus text.  CONFIG
 * RESETSTAT must clear what INFO shows at once.  No assertion on speed.
 *
 * Against a real redis-server (--server /usr/bin/redis-server) the INFO part
 * passes too; the metrics part is skipped.
 */
#include "testclient.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define GETS 1000
#define WRONGTYPE_GETS 7
#define ARITY_ERRORS 3

static char *info(struct pc_conn *c, const char *section)
{
    size_t len;
    char *r = pc_conn_cmdl(c, &len, "INFO", section, NULL);
    if (!r)
        pc_fail("INFO %s: no reply", section);
    return r;
}

/* the value of field `name` in a "k=v,k=v" INFO line that starts with `line` ("cmdstat_get:") */
static int line_field(const char *text, const char *line, const char *name, double *v)
{
    const char *p = strstr(text, line);
    if (!p)
        return 0;
    const char *end = strstr(p, "\r\n");
    char key[64];
    snprintf(key, sizeof key, "%s=", name);
    const char *f = strstr(p, key);
    if (!f || (end && f > end))
        return 0;
    *v = strtod(f + strlen(key), NULL);
    return 1;
}

struct want {
    const char *line; /* "cmdstat_get:" */
    const char *name; /* "calls" */
    double value;
};

/* poll INFO commandstats until every field shows its value (3 s at most): a
 * snapshot may be taken between two of the commands counted */
static char *wait_fields(struct pc_conn *c, const struct want *w, int n)
{
    long long deadline = pc_now_ms() + 3000;
    for (;;) {
        char *r = info(c, "commandstats");
        int all = r != NULL;
        for (int i = 0; all && i < n; i++) {
            double v = -1;
            all = line_field(r, w[i].line, w[i].name, &v) && v == w[i].value;
        }
        if (!r || all || pc_now_ms() > deadline)
            return r;
        free(r);
        pc_sleep_ms(20);
    }
}

static char *wait_calls(struct pc_conn *c, const char *line, double calls)
{
    const struct want w = {line, "calls", calls};
    return wait_fields(c, &w, 1);
}

static void expect_field(const char *text, const char *line, const char *name, double want)
{
    double v = -1;
    if (!line_field(text, line, name, &v))
        pc_fail("%s%s= missing", line, name);
    else if (v != want)
        pc_fail("%s%s=%g, want %g", line, name, v, want);
}

/* ---- metrics ------------------------------------------------------------ */

/* GET path over HTTP/1.0; the whole response (headers and body), malloc'd */
static char *http_get(int port, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        pc_fail("metrics: cannot connect to port %d", port);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return NULL;
    }
    size_t len = 0, cap = 65536;
    char *buf = malloc(cap);
    ssize_t r;
    while ((r = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)r;
        if (cap - len < 4096)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    close(fd);
    return buf;
}

/*
 * Check the body is Prometheus text: every line a comment (# HELP / # TYPE)
 * or `name[{labels}] value`, every sample's name announced by a # TYPE line
 * before it.  1 ok, 0 (failures counted).
 */
static int prom_parse(const char *body)
{
    int ok = 1;
    char typed[64][96];
    int ntyped = 0;
    const char *p = body;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), p);
        if (line[0] == '#') {
            char name[96], type[32];
            if (strncmp(line, "# TYPE ", 7) == 0) {
                if (sscanf(line + 7, "%95s %31s", name, type) != 2 ||
                    (strcmp(type, "counter") && strcmp(type, "gauge"))) {
                    pc_fail("metrics: bad TYPE line '%s'", line);
                    ok = 0;
                } else if (ntyped < 64) {
                    strcpy(typed[ntyped++], name);
                }
            } else if (strncmp(line, "# HELP ", 7) != 0) {
                pc_fail("metrics: bad comment '%s'", line);
                ok = 0;
            }
        } else if (line[0]) {
            size_t nlen = strcspn(line, "{ ");
            const char *rest = line + nlen;
            if (*rest == '{') {
                rest = strchr(rest, '}');
                rest = rest ? rest + 1 : NULL;
            }
            char *end = NULL;
            if (rest && *rest == ' ')
                strtod(rest + 1, &end);
            int known = 0;
            for (int i = 0; i < ntyped; i++)
                known |= strlen(typed[i]) == nlen && strncmp(typed[i], line, nlen) == 0;
            if (!rest || *rest != ' ' || !end || *end || !known) {
                pc_fail("metrics: not a sample line (or no TYPE before it): '%s'", line);
                ok = 0;
            }
        }
        p += n + (nl ? 1 : 0);
    }
    return ok;
}

/* the value of the sample `series` ("name" or "name{labels}"), -1 when absent */
static double prom_value(const char *body, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    return -1;
}

static const char *http_body(const char *resp)
{
    const char *b = resp ? strstr(resp, "\r\n\r\n") : NULL;
    return b ? b + 4 : "";
}

static void check_metrics(int port, int threads, double keys)
{
    char *r = http_get(port, "/metrics");
    if (!r)
        return;
    if (strncmp(r, "HTTP/1.", 7) != 0 || strncmp(r + 8, " 200", 4) != 0)
        pc_fail("GET /metrics: status line '%.40s'", r);
    if (!strstr(r, "Content-Type: text/plain; version=0.0.4"))
        pc_fail("GET /metrics: no Prometheus 0.0.4 content type");
    const char *body = http_body(r);
    prom_parse(body);
    struct {
        const char *series;
        double want; /* -1: present, any value */
    } want[] = {
        {"percore_commands_total{cmd=\"get\"}", GETS},
        {"percore_command_failed_total{cmd=\"get\"}", WRONGTYPE_GETS},
        {"percore_command_rejected_total{cmd=\"get\"}", ARITY_ERRORS},
        {"percore_errors_total{error=\"WRONGTYPE\"}", WRONGTYPE_GETS},
        {"percore_command_duration_seconds_total{cmd=\"get\"}", -1},
        {"percore_commands_processed_total", -1},
        {"percore_connected_clients", -1},
        {"percore_keyspace_hits_total", -1},
        {"percore_keyspace_misses_total", -1},
        {"percore_used_memory_bytes", -1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        double v = prom_value(body, want[i].series);
        if (v < 0)
            pc_fail("metrics: %s missing", want[i].series);
        else if (want[i].want >= 0 && v != want[i].want)
            pc_fail("metrics: %s = %g, want %g", want[i].series, v, want[i].want);
    }
    if (prom_value(body, "percore_connected_clients") < 1)
        pc_fail("metrics: percore_connected_clients < 1 with a client connected");
    if (prom_value(body, "percore_keyspace_hits_total") < GETS - WRONGTYPE_GETS)
        pc_fail("metrics: percore_keyspace_hits_total below the GETs that found their key");
    double sum_keys = 0, sum_cmds = 0;
    for (int i = 0; i < threads; i++) {
        char s[96];
        snprintf(s, sizeof s, "percore_shard_keys{shard=\"%d\"}", i);
        double k = prom_value(body, s);
        snprintf(s, sizeof s, "percore_shard_commands_total{shard=\"%d\"}", i);
        double c = prom_value(body, s);
        snprintf(s, sizeof s, "percore_shard_handoff_batches_sent_total{shard=\"%d\"}", i);
        double h = prom_value(body, s);
        snprintf(s, sizeof s, "percore_shard_inbox_full_total{shard=\"%d\"}", i);
        double f = prom_value(body, s);
        if (k < 0 || c < 0 || h < 0 || f < 0)
            pc_fail("metrics: shard %d figures missing", i);
        sum_keys += k;
        sum_cmds += c;
    }
    if (sum_keys != keys)
        pc_fail("metrics: shard keys sum to %g, want %g", sum_keys, keys);
    if (sum_cmds != prom_value(body, "percore_commands_processed_total"))
        pc_fail("metrics: shard commands sum to %g, not percore_commands_processed_total", sum_cmds);
    free(r);
    r = http_get(port, "/nope");
    if (r && (strncmp(r, "HTTP/1.", 7) != 0 || strncmp(r + 8, " 404", 4) != 0))
        pc_fail("GET /nope: status line '%.40s', want 404", r);
    free(r);
}

int main(int argc, char **argv)
{
    /* a metrics port, unless the server is a real redis-server or an external one */
    const char *bin = getenv("PERCORE_SERVER");
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--server") == 0)
            bin = argv[i + 1];
    int threads = 1;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--threads") == 0)
            threads = atoi(argv[i + 1]);
    char *args[64];
    int n = 0;
    for (int i = 0; i < argc && n < 56; i++)
        args[n++] = argv[i];
    if (!(bin && strstr(bin, "redis-server")) && !getenv("PC_SERVER_PORT")) {
        args[n++] = "--";
        args[n++] = "--metrics-port";
        args[n++] = PC_FREE_PORT_ARG; /* chosen again if the server cannot bind it */
    }
    args[n] = NULL;
    struct pc_server srv;
    if (pc_test_setup(n, args, &srv) != 0)
        return 1;
    int metrics_port = srv.aux_port;
    struct pc_conn *c = pc_conn_open(srv.port);
    if (!c)
        return 1;
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);
    pc_expect(c, "+OK\r\n", "CONFIG", "RESETSTAT", NULL);

    char keys[PC_SPREAD_KEYS][64], lists[PC_SPREAD_KEYS][64];
    pc_spread_keys("stats:str:", keys);
    pc_spread_keys("stats:list:", lists);
    for (int i = 0; i < PC_SPREAD_KEYS; i++)
        pc_expect(c, "+OK\r\n", "SET", keys[i], "v", NULL);
    for (int i = 0; i < WRONGTYPE_GETS; i++)
        pc_expect(c, ":1\r\n", "RPUSH", lists[i], "x", NULL);

    /* 1000 GETs, pipelined 100 at a time: WRONGTYPE_GETS on the lists, the rest on strings */
    static const char wrongtype[] = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
    for (int sent = 0; sent < GETS; sent += 100) {
        for (int i = sent; i < sent + 100; i++) {
            const char *key = i < WRONGTYPE_GETS ? lists[i] : keys[i % PC_SPREAD_KEYS];
            const char *a[2] = {"GET", key};
            pc_conn_send(c, 2, a, NULL);
        }
        for (int i = sent; i < sent + 100; i++)
            pc_expect_reply(c, "GET", i < WRONGTYPE_GETS ? wrongtype : "$1\r\nv\r\n",
                            i < WRONGTYPE_GETS ? strlen(wrongtype) : 7);
    }
    static const char arity[] = "-ERR wrong number of arguments for 'get' command\r\n";
    pc_expect(c, arity, "GET", NULL);
    pc_expect(c, arity, "GET", "a", "b", NULL);
    pc_expect(c, arity, "get", "a", "b", "c", NULL);
    pc_expect(c, "-ERR wrong number of arguments for 'config|get' command\r\n", "CONFIG", "GET", NULL);
    size_t len;
    free(pc_conn_cmdl(c, &len, "CONFIG", "GET", "maxmemory", NULL));

    /* commandstats */
    const struct want counted[] = {
        {"cmdstat_get:", "calls", GETS},
        {"cmdstat_get:", "failed_calls", WRONGTYPE_GETS},
        {"cmdstat_get:", "rejected_calls", ARITY_ERRORS},
        {"cmdstat_set:", "calls", PC_SPREAD_KEYS},
        {"cmdstat_rpush:", "calls", WRONGTYPE_GETS},
        {"cmdstat_config|get:", "rejected_calls", 1},
    };
    int ncounted = (int)(sizeof counted / sizeof counted[0]);
    char *r = wait_fields(c, counted, ncounted);
    if (r) {
        for (int i = 0; i < ncounted; i++)
            expect_field(r, counted[i].line, counted[i].name, counted[i].value);
        double usec = -1, per = -1;
        if (!line_field(r, "cmdstat_get:", "usec", &usec) || !line_field(r, "cmdstat_get:", "usec_per_call", &per) ||
            usec < 0 || per < 0)
            pc_fail("cmdstat_get: usec / usec_per_call not numbers");
        if (strstr(r, "cmdstat_config:"))
            pc_fail("commandstats: CONFIG GET counted as 'config', want 'config|get'");
        free(r);
    }
    r = wait_calls(c, "cmdstat_config|get:", 1);
    if (r) {
        expect_field(r, "cmdstat_config|get:", "calls", 1);
        free(r);
    }

    /* latencystats: the get line with ordered percentiles */
    r = info(c, "latencystats");
    if (r) {
        double p50 = -1, p99 = -1, p999 = -1;
        if (!line_field(r, "latency_percentiles_usec_get:", "p50", &p50) ||
            !line_field(r, "latency_percentiles_usec_get:", "p99", &p99) ||
            !line_field(r, "latency_percentiles_usec_get:", "p99.9", &p999))
            pc_fail("latencystats: no latency_percentiles_usec_get:p50=..,p99=..,p99.9=.. line");
        else if (!(p50 > 0 && p50 <= p99 && p99 <= p999))
            pc_fail("latencystats: get p50=%g p99=%g p99.9=%g not ordered", p50, p99, p999);
        free(r);
    }
    /* errorstats */
    r = info(c, "errorstats");
    if (r) {
        expect_field(r, "errorstat_WRONGTYPE:", "count", WRONGTYPE_GETS);
        double err = 0;
        if (!line_field(r, "errorstat_ERR:", "count", &err) || err < ARITY_ERRORS + 1)
            pc_fail("errorstats: errorstat_ERR count %g, want at least %d", err, ARITY_ERRORS + 1);
        free(r);
    }
    /* default INFO: no commandstats (Redis 7.0), errorstats yes; INFO all: every section */
    r = pc_conn_cmdl(c, &len, "INFO", NULL);
    if (r && (strstr(r, "# Commandstats") || strstr(r, "# Latencystats") || !strstr(r, "# Errorstats")))
        pc_fail("INFO (default): want Errorstats and neither Commandstats nor Latencystats");
    free(r);
    r = pc_conn_cmdl(c, &len, "INFO", "all", NULL);
    if (r && (!strstr(r, "# Commandstats") || !strstr(r, "# Latencystats") || !strstr(r, "# Errorstats")))
        pc_fail("INFO all: want Commandstats, Errorstats and Latencystats");
    free(r);
    /* instantaneous_ops_per_sec: a number */
    r = info(c, "stats");
    if (r) {
        const char *p = strstr(r, "instantaneous_ops_per_sec:");
        char *end = NULL;
        if (p)
            strtoll(p + 26, &end, 10);
        if (!p || !end || end == p + 26 || strncmp(end, "\r\n", 2) != 0)
            pc_fail("INFO stats: instantaneous_ops_per_sec is not a number");
        free(r);
    }

    if (metrics_port)
        check_metrics(metrics_port, threads, PC_SPREAD_KEYS + WRONGTYPE_GETS);

    /* CONFIG RESETSTAT: gone at once */
    pc_expect(c, "+OK\r\n", "CONFIG", "RESETSTAT", NULL);
    r = pc_conn_cmdl(c, &len, "INFO", "commandstats", NULL);
    if (r && strstr(r, "cmdstat_get:"))
        pc_fail("CONFIG RESETSTAT: cmdstat_get still shown");
    free(r);
    r = pc_conn_cmdl(c, &len, "INFO", "latencystats", NULL);
    if (r && strstr(r, "latency_percentiles_usec_get:"))
        pc_fail("CONFIG RESETSTAT: get latency still shown");
    free(r);
    r = pc_conn_cmdl(c, &len, "INFO", "errorstats", NULL);
    if (r && strstr(r, "errorstat_WRONGTYPE"))
        pc_fail("CONFIG RESETSTAT: errorstat_WRONGTYPE still shown");
    free(r);
    r = pc_conn_cmdl(c, &len, "INFO", "stats", NULL);
    if (r) {
        const char *p = strstr(r, "total_commands_processed:");
        if (!p || strtoll(p + 25, NULL, 10) > 10)
            pc_fail("CONFIG RESETSTAT: total_commands_processed not reset");
    }
    free(r);
    /* and counting starts again */
    pc_expect(c, "$1\r\nv\r\n", "GET", keys[0], NULL);
    r = wait_calls(c, "cmdstat_get:", 1);
    if (r) {
        expect_field(r, "cmdstat_get:", "calls", 1);
        expect_field(r, "cmdstat_get:", "failed_calls", 0);
        free(r);
    }
    if (metrics_port) {
        r = http_get(metrics_port, "/metrics");
        if (r && prom_value(http_body(r), "percore_commands_total{cmd=\"get\"}") != 1)
            pc_fail("metrics after CONFIG RESETSTAT: get calls not 1");
        free(r);
    }

    pc_conn_close(&c);
    pc_test_teardown(&srv);
    return pc_test_done("test_stats");
}
