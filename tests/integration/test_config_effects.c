/*
 * test_config_effects: the runtime config keys that no other test sets,
 * reads back and sees act (maxclients, timeout and requirepass are in
 * test_limits.c, slowlog-* in test_slowlog.c, client-output-buffer-limit in
 * test_outbuf.c, maxmemory and its policies in test_maxmemory.c).  Each key
 * here is set with CONFIG SET, read back with CONFIG GET (exact bytes, as
 * Redis 7.0 prints them) and checked through an effect:
 *
 *   maxmemory / maxmemory-samples  a flood at samples 1 stays under maxmemory
 *   client-query-buffer-limit      a 2 MB argument closes the connection at 1mb
 *   proto-max-bulk-len             a bulk header over it: protocol error
 *   hz                             INFO server's hz fields; keys expire actively
 *   latency-tracking-info-percentiles  INFO latencystats's fields follow
 *   stats-interval (percore's)     at 60000 the snapshot stays still, at 50 it
 *                                  catches up (no speed asserted: just "still"
 *                                  over 0.5 s of a minute's interval, then a
 *                                  generous deadline)
 *   idle-poll-us (percore's)       a busy pinned shard polls (INFO shards
 *                                  poll_hits), an idle one costs no CPU
 *   loglevel                       CONFIG REWRITE's notice line in the log at
 *                                  notice, absent at warning (Redis logs it
 *                                  as a warning: not checked against Redis)
 *
 * and CONFIG SET with several pairs is all-or-nothing, bad values get
 * Redis's error texts, CONFIG REWRITE keeps the file's comments.  The server
 * starts with a config file (CONFIG REWRITE needs one).  Against a real
 * redis-server it passes too, less the percore-only parts.
 */
#include "testclient.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONF_COMMENT "# test_config_effects: this comment must survive CONFIG REWRITE"

static struct pc_server srv;

/* "*2\r\n$<n>\r\n<key>\r\n$<m>\r\n<value>\r\n" */
static void expect_get(struct pc_conn *c, const char *key, const char *value)
{
    char want[512];
    snprintf(want, sizeof want, "*2\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n", strlen(key), key, strlen(value), value);
    pc_expect(c, want, "CONFIG", "GET", key, NULL);
}

static void set_and_read_back(struct pc_conn *c, const char *key, const char *value, const char *shown)
{
    pc_expect(c, "+OK\r\n", "CONFIG", "SET", key, value, NULL);
    expect_get(c, key, shown);
}

/* an INFO field's text, malloc'd, NULL when absent */
static char *info_field(struct pc_conn *c, const char *section, const char *field)
{
    size_t len;
    char *r = pc_conn_cmdl(c, &len, "INFO", section, NULL);
    char pat[128];
    snprintf(pat, sizeof pat, "\r\n%s:", field);
    const char *p = r ? strstr(r, pat) : NULL;
    char *v = NULL;
    if (p) {
        p += strlen(pat);
        v = strndup(p, strcspn(p, "\r"));
    }
    free(r);
    return v;
}

static long long info_ll(struct pc_conn *c, const char *section, const char *field)
{
    char *v = info_field(c, section, field);
    long long n = v ? atoll(v) : -1;
    free(v);
    return n;
}

static void check_maxmemory_samples(struct pc_conn *c)
{
    set_and_read_back(c, "maxmemory-samples", "1", "1");
    set_and_read_back(c, "maxmemory-policy", "allkeys-lru", "allkeys-lru");
    set_and_read_back(c, "maxmemory", "1mb", "1048576");
    static char value[1001];
    memset(value, 'x', 1000);
    for (int i = 0; i < 4000; i++) { /* 4 MB through 1 MB, pipelined */
        char key[32];
        snprintf(key, sizeof key, "mm:%d", i);
        const char *argv[] = {"SET", key, value};
        pc_conn_send(c, 3, argv, NULL);
        if (i % 200 == 199)
            for (int j = 0; j < 200; j++)
                pc_expect_reply(c, "SET under maxmemory at samples 1", "+OK\r\n", 5);
    }
    long long used = -1, deadline = pc_now_ms() + 3000;
    do { /* the shards publish their memory on their timer */
        pc_sleep_ms(100);
        used = info_ll(c, "memory", "used_memory");
    } while ((used < 0 || used > (1 << 20)) && pc_now_ms() < deadline);
    if (!srv.is_redis && (used < 0 || used > (1 << 20)))
        pc_fail("maxmemory-samples 1: used_memory %lld after 4 MB written at maxmemory 1mb", used);
    set_and_read_back(c, "maxmemory", "0", "0");
    set_and_read_back(c, "maxmemory-samples", "5", "5");
    set_and_read_back(c, "maxmemory-policy", "noeviction", "noeviction");
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);
}

static void check_query_buffer_limit(struct pc_conn *c)
{
    set_and_read_back(c, "client-query-buffer-limit", "1mb", "1048576");
    struct pc_conn *victim = pc_conn_open(srv.port);
    /* a 2 MB argument, sent whole: the query buffer passes 1 MB */
    size_t big = 2u << 20;
    char head[64];
    int n = snprintf(head, sizeof head, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%zu\r\n", big);
    char *payload = malloc(big);
    memset(payload, 'q', big);
    pc_conn_write(victim, head, (size_t)n);
    pc_conn_write(victim, payload, big); /* may fail once the server closed: that is the point */
    free(payload);
    char *r = NULL;
    size_t rl;
    int got = pc_conn_read_reply(victim, &r, &rl, 5000);
    if (got == 1 && r[0] == '+')
        pc_fail("client-query-buffer-limit 1mb: a 2 MB argument was accepted (%s)", r);
    free(r);
    if (got != -1 && pc_conn_wait_closed(victim, 5000) != 1)
        pc_fail("client-query-buffer-limit 1mb: the connection stays open after a 2 MB query");
    pc_conn_close(&victim);
    set_and_read_back(c, "client-query-buffer-limit", "1gb", "1073741824");
    pc_expect(c, "$-1\r\n", "GET", "k", NULL);
}

static void check_proto_max_bulk_len(struct pc_conn *c)
{
    set_and_read_back(c, "proto-max-bulk-len", "1mb", "1048576");
    struct pc_conn *victim = pc_conn_open(srv.port);
    static const char req[] = "*2\r\n$4\r\nECHO\r\n$1048577\r\n";
    pc_conn_write(victim, req, sizeof req - 1);
    static const char error[] = "-ERR Protocol error: invalid bulk length\r\n";
    pc_expect_reply(victim, "a bulk of 1048577 at proto-max-bulk-len 1mb", error, sizeof error - 1);
    if (pc_conn_wait_closed(victim, 5000) != 1)
        pc_fail("proto-max-bulk-len: the connection stays open after the protocol error");
    pc_conn_close(&victim);
    set_and_read_back(c, "proto-max-bulk-len", "512mb", "536870912");
}

static void check_hz(struct pc_conn *c)
{
    set_and_read_back(c, "hz", "50", "50");
    char *hz = info_field(c, "server", "hz"), *configured = info_field(c, "server", "configured_hz");
    if (!hz || strcmp(hz, "50") != 0 || !configured || strcmp(configured, "50") != 0)
        pc_fail("hz 50: INFO server shows hz:%s configured_hz:%s", hz ? hz : "-", configured ? configured : "-");
    free(hz);
    free(configured);
    /* keys with a short TTL, never touched again, go by active expiry alone */
    char keys[PC_SPREAD_KEYS][64];
    pc_spread_keys("hz:", keys);
    for (int i = 0; i < PC_SPREAD_KEYS; i++)
        pc_expect(c, "+OK\r\n", "SET", keys[i], "v", "PX", "50", NULL);
    long long expired = 0, deadline = pc_now_ms() + 5000;
    while ((expired = info_ll(c, "stats", "expired_keys")) < PC_SPREAD_KEYS && pc_now_ms() < deadline)
        pc_sleep_ms(50);
    if (expired < PC_SPREAD_KEYS)
        pc_fail("hz 50: %lld of %d keys expired actively within 5 s", expired, PC_SPREAD_KEYS);
    set_and_read_back(c, "hz", "10", "10");
}

static void check_percentiles(struct pc_conn *c)
{
    set_and_read_back(c, "latency-tracking-info-percentiles", "50 99.99", "50 99.99");
    pc_expect(c, "$-1\r\n", "GET", "nokey", NULL);
    long long deadline = pc_now_ms() + 3000;
    char *line = NULL;
    while (!(line = info_field(c, "latencystats", "latency_percentiles_usec_get")) && pc_now_ms() < deadline)
        pc_sleep_ms(50);
    if (!line || strncmp(line, "p50=", 4) != 0 || !strstr(line, ",p99.99=") || strstr(line, "p99="))
        pc_fail("latency-tracking-info-percentiles 50 99.99: latencystats get line '%s'", line ? line : "(none)");
    free(line);
    set_and_read_back(c, "latency-tracking-info-percentiles", "50 99 99.9", "50 99 99.9");
}

static long long get_calls(struct pc_conn *c)
{
    char *line = info_field(c, "commandstats", "cmdstat_get");
    long long calls = line && strncmp(line, "calls=", 6) == 0 ? atoll(line + 6) : 0;
    free(line);
    return calls;
}

static void check_stats_interval(struct pc_conn *c)
{
    long long seen = get_calls(c), deadline = pc_now_ms() + 3000;
    pc_expect(c, "$-1\r\n", "GET", "nokey", NULL);
    while (get_calls(c) <= seen && pc_now_ms() < deadline) /* the snapshot holds every GET so far */
        pc_sleep_ms(20);
    set_and_read_back(c, "stats-interval", "60000", "60000");
    pc_sleep_ms(200); /* a tick that began under the old interval is over */
    long long before = get_calls(c);
    for (int i = 0; i < 5; i++)
        pc_expect(c, "$-1\r\n", "GET", "nokey", NULL);
    pc_sleep_ms(500);
    if (get_calls(c) != before)
        pc_fail("stats-interval 60000: INFO commandstats changed within 0.5 s");
    set_and_read_back(c, "stats-interval", "50", "50");
    deadline = pc_now_ms() + 3000;
    while (get_calls(c) != before + 5 && pc_now_ms() < deadline)
        pc_sleep_ms(20);
    if (get_calls(c) != before + 5)
        pc_fail("stats-interval 50: INFO commandstats get calls %lld, want %lld", get_calls(c), before + 5);
    set_and_read_back(c, "stats-interval", "100", "100");
}

/* the server process's CPU time, user + system over every thread, in ms */
static long long server_cpu_ms(void)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)srv.pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* fields 14 and 15 (utime stime), counted after the name */
    unsigned long long utime = 0, stime = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
        pc_fail("cannot read %s", path);
    return (long long)(utime + stime) * 1000 / sysconf(_SC_CLK_TCK);
}

/* one PING every 2 ms for 600 ms: the shard is busy (sleeps of ~2 ms); returns the sleeps polling saved */
static long long ping_every_2ms(struct pc_conn *c)
{
    long long hits = pc_info_shards_sum(c, "poll_hits");
    for (int i = 0; i < 300; i++) {
        pc_expect(c, "+PONG\r\n", "PING", NULL);
        pc_sleep_ms(2);
    }
    pc_sleep_ms(250); /* two stats merges */
    return pc_info_shards_sum(c, "poll_hits") - hits;
}

/*
 * idle-poll-us (percore's): a shard pinned to its own cpu whose last sleep
 * was shorter than the window polls that long before sleeping, counted in
 * INFO shards' poll_hits.  With a 10 ms window a PING every 2 ms comes while
 * the shard polls; at 0 none does; unpinned shards never poll.  What it must
 * never do is burn the cpu of an idle server: a quiet second costs little
 * CPU with the widest window.  (Counts and CPU time, no speed asserted.)
 */
static void check_idle_poll(struct pc_conn *c)
{
    expect_get(c, "idle-poll-us", "50");
    bool pinned = pc_info_shard_field(c, pc_conn_home_shard(c), "cpu") >= 0;
    set_and_read_back(c, "idle-poll-us", "10000", "10000");
    long long hits = ping_every_2ms(c);
    if (pinned && hits < 30)
        pc_fail("idle-poll-us 10000: %lld of 300 PINGs 2 ms apart came while the shard polled, want >= 30", hits);
    if (!pinned && hits != 0)
        pc_fail("idle-poll-us 10000: an unpinned shard polled (%lld hits)", hits);
    pc_sleep_ms(100);
    long long cpu0 = server_cpu_ms(), t0 = pc_now_ms();
    pc_sleep_ms(1000);
    long long cpu = server_cpu_ms() - cpu0, elapsed = pc_now_ms() - t0;
    if (cpu * 4 > elapsed)
        pc_fail("idle-poll-us 10000: an idle server used %lld ms of CPU in %lld ms", cpu, elapsed);
    set_and_read_back(c, "idle-poll-us", "0", "0");
    hits = ping_every_2ms(c);
    if (hits != 0)
        pc_fail("idle-poll-us 0: %lld PINGs came while the shard polled", hits);
    pc_expect(c, "-ERR CONFIG SET failed (possibly related to argument 'idle-poll-us') - argument must be between 0 and 10000 inclusive\r\n",
              "CONFIG", "SET", "idle-poll-us", "10001", NULL);
    set_and_read_back(c, "idle-poll-us", "50", "50");
}

/* the server log holds `line`; polled, as the server writes it after replying */
static int log_has(const char *line)
{
    long long deadline = pc_now_ms() + 1000;
    do {
        FILE *f = fopen(srv.log_path, "r");
        char buf[1024];
        int found = 0;
        while (f && !found && fgets(buf, sizeof buf, f))
            found = strstr(buf, line) != NULL;
        if (f)
            fclose(f);
        if (found)
            return 1;
        pc_sleep_ms(50);
    } while (pc_now_ms() < deadline);
    return 0;
}

static void check_loglevel_and_rewrite(struct pc_conn *c, const char *conf)
{
    static const char done[] = "CONFIG REWRITE executed with success.";
    set_and_read_back(c, "loglevel", "warning", "warning");
    pc_expect(c, "+OK\r\n", "CONFIG", "REWRITE", NULL);
    if (!srv.is_redis && log_has(done)) /* Redis logs it as a warning; percore as a notice */
        pc_fail("loglevel warning: the notice '%s' was logged", done);
    set_and_read_back(c, "loglevel", "notice", "notice");
    pc_expect(c, "+OK\r\n", "CONFIG", "REWRITE", NULL);
    if (!log_has(done))
        pc_fail("loglevel notice: no '%s' in %s", done, srv.log_path);
    FILE *f = fopen(conf, "r");
    char buf[512];
    int comment = 0, level = 0;
    while (f && fgets(buf, sizeof buf, f)) {
        comment |= strncmp(buf, CONF_COMMENT, strlen(CONF_COMMENT)) == 0;
        level |= strcmp(buf, "loglevel notice\n") == 0;
    }
    if (f)
        fclose(f);
    if (!comment || !level)
        pc_fail("CONFIG REWRITE: %s lost its comment (%d) or lacks 'loglevel notice' (%d)", conf, comment, level);
}

static void check_errors(struct pc_conn *c)
{
    /* all or nothing: the good pair before the bad one is not applied */
    pc_expect(c, "-ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into "
                 "an integer\r\n",
              "CONFIG", "SET", "maxmemory-samples", "7", "hz", "abc", NULL);
    expect_get(c, "maxmemory-samples", "5");
    pc_expect(c, "-ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be one of "
                 "the following: debug, verbose, notice, warning\r\n",
              "CONFIG", "SET", "timeout", "7", "loglevel", "loud", NULL);
    expect_get(c, "timeout", "0");
    pc_expect(c, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be "
                 "one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, "
                 "allkeys-lfu, allkeys-random, noeviction\r\n",
              "CONFIG", "SET", "maxmemory-policy", "sometimes", NULL);
    pc_expect(c, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory "
                 "value\r\n",
              "CONFIG", "SET", "maxmemory", "lots", NULL);
    pc_expect(c, "-ERR CONFIG SET failed (possibly related to argument 'hz') - duplicate parameter\r\n", "CONFIG",
              "SET", "hz", "5", "hz", "6", NULL);
    expect_get(c, "hz", "10");
    /* several good pairs: all applied */
    pc_expect(c, "+OK\r\n", "CONFIG", "SET", "maxmemory-samples", "9", "slowlog-max-len", "77", NULL);
    expect_get(c, "maxmemory-samples", "9");
    expect_get(c, "slowlog-max-len", "77");
}

int main(int argc, char **argv)
{
    char conf[256];
    snprintf(conf, sizeof conf, "%s/config-effects-%d.conf", getenv("PC_LOG_DIR") ? getenv("PC_LOG_DIR") : ".",
             (int)getpid());
    FILE *f = fopen(conf, "w");
    if (!f) {
        perror(conf);
        return 2;
    }
    fprintf(f, CONF_COMMENT "\n\nloglevel notice\n");
    fclose(f);
    const char *server_args[64];
    int n = 0;
    for (int i = 0; i < argc && n < 60; i++)
        server_args[n++] = argv[i];
    server_args[n++] = "--";
    server_args[n++] = conf;
    server_args[n] = NULL;
    if (pc_test_setup(n, (char **)server_args, &srv) != 0)
        return 2;
    struct pc_conn *c = pc_conn_open(srv.port);
    if (!c)
        return 2;
    pc_expect(c, "+OK\r\n", "FLUSHALL", NULL);
    pc_expect(c, "+OK\r\n", "CONFIG", "RESETSTAT", NULL);

    check_errors(c);
    check_maxmemory_samples(c);
    check_query_buffer_limit(c);
    check_proto_max_bulk_len(c);
    check_hz(c);
    check_percentiles(c);
    if (!srv.is_redis) /* a percore key */
        check_stats_interval(c);
    if (!srv.is_redis) /* a percore key */
        check_idle_poll(c);
    check_loglevel_and_rewrite(c, conf);

    pc_conn_close(&c);
    pc_test_teardown(&srv);
    if (pc_failures() == 0)
        unlink(conf);
    return pc_test_done("test_config_effects");
}
