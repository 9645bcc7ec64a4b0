/*
 * testclient: the small client library the integration tests (and later the
 * load tools) are built on.
 *
 * - servers: pick a free TCP port, start a percore-server (or a real
 *   redis-server, to validate a test against the reference) as a child
 *   process with its output captured to a log file, wait until it answers
 *   PING, stop it with SIGTERM and return how it exited.
 * - raw connections (struct pc_conn): write any bytes, read back exactly one
 *   RESP value as the bytes the server sent, for byte-exact comparisons with
 *   Redis 7.0.  hiredis (pc_hiredis_connect) is there for convenience where
 *   parsed replies are enough.
 * - expectations: pc_expect_* compare and, on mismatch, print what was sent,
 *   the expected and the received bytes (escaped), and count a failure;
 *   pc_test_done() prints the tally and gives the exit status.
 *
 * Threading: none of this is thread-safe except distinct pc_conn objects used
 * from distinct threads (the failure counter is atomic).
 */
#ifndef PERCORE_TESTCLIENT_H
#define PERCORE_TESTCLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

/* ---- servers ----------------------------------------------------------- */

struct pc_server {
    pid_t pid;            /* child pid, 0 when not running */
    int port;             /* TCP port it listens on (127.0.0.1) */
    int is_redis;         /* 1 when the binary is a real redis-server */
    int external;         /* 1 when PC_SERVER_PORT pointed us at a running server */
    int aux_port;         /* the port given for PC_FREE_PORT_ARG in extra, 0 if none */
    char log_path[512];   /* stdout+stderr of the child */
    int exit_status;      /* set by pc_test_teardown: pc_server_stop's result, or
                             PC_SERVER_DIED when it had died before */
    long max_rss_kb;      /* set by pc_test_teardown: peak RSS (VmHWM) just before
                             the stop, -1 unknown */
};

/* exit_status of a server found dead at teardown */
#define PC_SERVER_DIED (-2)

/* A TCP port on 127.0.0.1 (10000..19999) that was free a moment ago and
 * that no other test process holds: each port handed out is claimed with a
 * lock file until this process exits, so concurrent tests never get the same
 * one, and this process never gets one twice.  -1 on error. */
int pc_free_port(void);

/* in extra: replaced by a fresh pc_free_port() at each start attempt (s->aux_port) */
#define PC_FREE_PORT_ARG "@free-port"

/* Start `bin [CONF] --port P --bind 127.0.0.1 [extra...]` (extra is
 * NULL-terminated, may be NULL; CONF is extra[0] when that is not an option,
 * a config file, which both servers take only as their first argument).  `--save "" --appendonly no` are added
 * before extra (no dump.rdb in the cwd; a later --save adds save points), and for a redis-server binary
 * `--threads N` pairs in extra are dropped.  Waits up to 20 s for
 * PING; a server that exits first (a port taken after all) is started again
 * on fresh ports, up to 4 times.  0 ok, -1 (with a message on stderr and the
 * log tail) on failure. */
int pc_server_start(struct pc_server *s, const char *bin, const char *const *extra);

/* SIGTERM, wait up to timeout_ms, then SIGKILL.  Returns the exit status
 * (0..255), 128+signal if killed by a signal, -1 if it had to be SIGKILLed
 * after the timeout or was not running. */
int pc_server_stop(struct pc_server *s, int timeout_ms);

/* 1 when the child is still running */
int pc_server_alive(struct pc_server *s);

/* print the last `max` bytes of the server log to stderr */
void pc_server_dump_log(const struct pc_server *s, size_t max);

/*
 * The common command line of the integration tests:
 *   test_x [--server PATH] [--threads N] [extra server args after --]
 * PATH defaults to $PERCORE_SERVER; with PC_SERVER_PORT set, no server is
 * started and the test talks to that port.  Returns 0 and a started server.
 */
int pc_test_setup(int argc, char **argv, struct pc_server *s);
/* stop the server and require exit status 0; counts a failure otherwise
 * (records s->exit_status and s->max_rss_kb first) */
void pc_test_teardown(struct pc_server *s);

/* peak resident set (VmHWM) of the running server in KB, -1 if unknown */
long pc_server_max_rss_kb(const struct pc_server *s);

/*
 * After pc_test_teardown, print the results-table line (tests/RELIABILITY.md,
 * made by tests/reliability/report.py) for this server run, on stdout:
 *   RELIABILITY scenario="S" load="L" faults="F" bad_inputs=N crashes=N
 *               leaks=N lost_writes=N|n/a max_rss_kb=N
 * crashes: 1 when the server died, was killed or exited non-zero, plus each
 * further sanitizer error report in its log; leaks: the LeakSanitizer leak
 * records in its log (a run that exits 0 has neither: the log is clean).
 * lost_writes < 0 prints n/a (a scenario that cannot count them).
 */
void pc_reliability_line(const struct pc_server *s, const char *scenario, const char *load,
                         const char *faults, long bad_inputs, long lost_writes);

/* ---- raw connections --------------------------------------------------- */

struct pc_conn {
    int fd;
    char *buf;            /* bytes received, not yet returned */
    size_t len;
    size_t cap;
    int eof;              /* peer closed (read returned 0 or ECONNRESET) */
};

/* connect to 127.0.0.1:port; NULL on error (message on stderr) */
struct pc_conn *pc_conn_open(int port);
/* same, silent on failure (for polling a server that is starting) */
struct pc_conn *pc_conn_open_quiet(int port);
void pc_conn_close(struct pc_conn **c);
/* close with SO_LINGER {1,0}: the kernel sends RST instead of FIN */
void pc_conn_abort(struct pc_conn **c);

/* write all bytes (blocking); 0 ok, -1 error */
int pc_conn_write(struct pc_conn *c, const void *buf, size_t len);
/* append the RESP encoding of argv to a growing buffer *out (malloc'd) */
void pc_resp_encode(char **out, size_t *len, size_t *cap, int argc,
                    const char *const *argv, const size_t *argvlen);
/* send one command as a RESP array (argvlen NULL: strlen) */
int pc_conn_send(struct pc_conn *c, int argc, const char *const *argv, const size_t *argvlen);

/*
 * Read exactly one complete RESP value (RESP2 or RESP3), waiting up to
 * timeout_ms.  On success *out is a malloc'd NUL-terminated copy of its
 * bytes, *outlen its length, and the result is 1.  0: timed out, -1: the
 * connection closed (or broke) before a whole value arrived, -2: the bytes
 * are not RESP.
 */
int pc_conn_read_reply(struct pc_conn *c, char **out, size_t *outlen, int timeout_ms);

/* 1 if the peer closes the connection within timeout_ms with no more bytes
 * arriving first, 0 if it stays open, -1 if unexpected bytes arrived */
int pc_conn_wait_closed(struct pc_conn *c, int timeout_ms);

/* send argv, read one reply; returns the malloc'd reply or NULL */
char *pc_conn_cmd(struct pc_conn *c, size_t *outlen, int argc, const char *const *argv);
/* same, argv as a NULL-terminated list of C strings */
char *pc_conn_cmdl(struct pc_conn *c, size_t *outlen, const char *arg0, ...);

/* length of the complete RESP value at buf: >0 complete, 0 incomplete, -1 bad */
long pc_resp_value_len(const char *buf, size_t len);

/* ---- hiredis ----------------------------------------------------------- */

/* hiredis context with a 10 s timeout; NULL on error */
redisContext *pc_hiredis_connect(int port);

/* ---- expectations ------------------------------------------------------ */

/* timeout used by the expect helpers for one reply, ms (default 10000) */
extern int pc_reply_timeout_ms;

/* print bytes escaped (\r \n \xNN), at most max bytes then "..." */
void pc_print_escaped(FILE *f, const char *buf, size_t len, size_t max);

/* count a failure with a printf-style message */
void pc_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int pc_failures(void);

/* compare got with expected (exp NUL-terminated); 1 equal, 0 mismatch
 * (printed with `what` and the first differing offset) */
int pc_expect_bytes(const char *what, const char *got, size_t gotlen, const char *exp);
int pc_expect_bytes_n(const char *what, const char *got, size_t gotlen,
                      const char *exp, size_t explen);

/* send the NULL-terminated command, expect the reply bytes exactly */
int pc_expect(struct pc_conn *c, const char *exp, const char *arg0, ...);
/* same with argv/argvlen (binary-safe) */
int pc_expectv(struct pc_conn *c, const char *exp, size_t explen, int argc,
               const char *const *argv, const size_t *argvlen);
/* read one reply (already sent) and expect it */
int pc_expect_reply(struct pc_conn *c, const char *what, const char *exp, size_t explen);

/* print "N passed, M failed" and return the process exit status */
int pc_test_done(const char *name);

/* ---- keys and slots ---------------------------------------------------- */

/* Redis Cluster slot of a key (CRC16-XMODEM mod 16384, {hash tags}) */
unsigned pc_key_slot(const char *key, size_t len);
/* write "<prefix><n>" for the smallest n >= 0 whose key hashes to `slot`
 * into buf; returns its length (prefix must hold no hash tag) */
size_t pc_key_for_slot(const char *prefix, unsigned slot, char *buf, size_t bufsize);
/*
 * PC_SPREAD_KEYS keys that cover every shard for any shard count dividing 16
 * under either slot->shard mapping (contiguous ranges or slot mod N): key i
 * has slot i*1024 + i, so slot/1024 and slot%16 both take every value 0..15.
 */
#define PC_SPREAD_KEYS 16
void pc_spread_keys(const char *prefix, char keys[PC_SPREAD_KEYS][64]);

/* monotonic milliseconds */
long long pc_now_ms(void);
void pc_sleep_ms(int ms);

/* ---- chaos and fault tests ---------------------------------------------- */

/* when > 0, servers started from now on run with RLIMIT_NOFILE (soft and
 * hard) set to this many descriptors (set in the child before exec) */
extern long pc_server_nofile;

/* as pc_test_setup, with `more` (NULL-terminated) added to the server's
 * arguments after those of the command line */
int pc_test_setup_extra(int argc, char **argv, struct pc_server *s, const char *const *more);

/* a field of the running server's /proc/<pid>/status in kB ("VmRSS",
 * "VmHWM"), -1 if unknown (not our child, or gone) */
long pc_server_status_kb(const struct pc_server *s, const char *field);
/* user + system CPU time the server has used, ms (/proc/<pid>/stat), -1 if unknown */
long long pc_server_cpu_ms(const struct pc_server *s);
/* 1 if a line of the server log contains needle, 0 if none, -1 without a log */
int pc_server_log_has(const struct pc_server *s, const char *needle);

/* a numeric field of INFO everything ("connected_clients"), -1 when absent */
long long pc_info_ll(struct pc_conn *c, const char *field);
/* the sum of a field ("inbox_full", "keys") over INFO shards' lines, -1 on error */
long long pc_info_shards_sum(struct pc_conn *c, const char *field);
/* the same field on one shard's line, -1 when absent */
long long pc_info_shard_field(struct pc_conn *c, int shard, const char *field);
/* poll INFO until field equals want, up to timeout_ms (the stats are merged
 * every stats-interval); returns the last value read */
long long pc_info_wait_for(struct pc_conn *c, const char *field, long long want, int timeout_ms);

/* the shard a connection is homed on (CLIENT INFO's shard=), -1 if unknown */
int pc_conn_home_shard(struct pc_conn *c);
/* the shard owning a slot with n shards: contiguous ranges, as config.c lays them out */
int pc_slot_shard(unsigned slot, int nshards);

/* read and drop until the peer closes: the bytes read, or -1 if it is still
 * open after timeout_ms */
long long pc_conn_drain_until_closed(struct pc_conn *c, int timeout_ms);

/* raise this process's RLIMIT_NOFILE soft limit (and the hard one, as root
 * may) to at least want; returns the soft limit now */
long pc_raise_nofile(long want);

/* 1 in an ASan or TSan build (PERCORE_SANITIZE), where tests scale down */
int pc_sanitized(void);

#endif
