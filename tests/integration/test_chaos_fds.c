/*
 * test_chaos_fds: the server runs out of file descriptors on accept.
 *
 * The server starts with RLIMIT_NOFILE = NOFILE (pc_server_nofile, set in the
 * child before exec).  Clients connect one at a time and PING until one gets
 * no answer: the server has no descriptor left to accept it with, and the
 * connection waits in the kernel's backlog.  EXCESS more join it.  Then:
 * - the server does not spin: over one second while they wait, it uses less
 *   than CPU_BOUND_MS of CPU time (/proc/<pid>/stat).  A thread spinning on a
 *   readable listener whose accept() fails with EMFILE burns a whole core,
 *   1000 ms a second; the server pauses its accepts instead (shard.c);
 * - it logs the accept error (Redis's "Error accepting a client connection");
 * - the clients it had accepted are still served;
 * - when they close (all but one), every waiting client gets its PONG within
 *   a bounded wait, and every shard still answers.
 * Prints the RELIABILITY line of the scenario.
 */
#include "testclient.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>

#define NOFILE 64
#define EXCESS 10
#define MAX_CONNS 200
#define CPU_BOUND_MS 300

static const char ping[] = "*1\r\n$4\r\nPING\r\n";

/* wait up to timeout_ms for c's PONG: 1 got it, 0 not (yet), -1 anything else */
static int pong(struct pc_conn *c, int timeout_ms)
{
    char *r;
    size_t rl;
    int st = pc_conn_read_reply(c, &r, &rl, timeout_ms);
    if (st == 0)
        return 0;
    int ok = st == 1 && strcmp(r, "+PONG\r\n") == 0;
    if (!ok)
        pc_fail("a waiting client got %s instead of +PONG", st == 1 ? r : "a closed connection");
    free(st == 1 ? r : NULL);
    return ok ? 1 : -1;
}

int main(int argc, char **argv)
{
    struct pc_server srv;
    pc_server_nofile = NOFILE;
    if (pc_test_setup(argc, argv, &srv) != 0)
        return 2;
    if (srv.external) {
        printf("test_chaos_fds: needs a server of its own (not PC_SERVER_PORT); skipped\n");
        return 0;
    }
    static struct pc_conn *conns[MAX_CONNS];
    int n = 0, served = 0;
    /* fill the server's descriptor table: the first client not answered waits in the backlog */
    while (n < MAX_CONNS) {
        struct pc_conn *c = pc_conn_open(srv.port);
        if (!c || pc_conn_write(c, ping, sizeof(ping) - 1) != 0) {
            pc_fail("client %d: cannot connect or send", n);
            pc_conn_close(&c);
            break;
        }
        conns[n++] = c;
        if (pong(c, 500) != 1)
            break;
        served++;
    }
    for (int i = 0; i < EXCESS && n < MAX_CONNS; i++) {
        struct pc_conn *c = pc_conn_open(srv.port);
        if (c && pc_conn_write(c, ping, sizeof(ping) - 1) == 0)
            conns[n++] = c;
        else
            pc_conn_close(&c);
    }
    int waiting = n - served;
    fprintf(stderr, "RLIMIT_NOFILE %d: %d clients accepted, %d waiting\n", NOFILE, served, waiting);
    if (served < 2 || served == n || waiting <= EXCESS / 2)
        pc_fail("with %d descriptors the server accepted %d of %d clients: the limit did not bite", NOFILE,
                served, n);
    long long shards = pc_info_ll(conns[0], "shard_threads");

    long long cpu0 = pc_server_cpu_ms(&srv);
    pc_sleep_ms(1000);
    long long cpu1 = pc_server_cpu_ms(&srv);
    fprintf(stderr, "server CPU over 1 s with %d clients waiting: %lld ms\n", waiting, cpu1 - cpu0);
    if (cpu0 < 0 || cpu1 - cpu0 >= CPU_BOUND_MS)
        pc_fail("the server used %lld ms of CPU in 1 s while out of descriptors (bound %d): it spins",
                cpu1 - cpu0, CPU_BOUND_MS);
    if (pc_server_log_has(&srv, "Error accepting a client connection") != 1)
        pc_fail("the server log does not report the failed accept");
    for (int i = 0; i < served; i++)
        pc_expect(conns[i], "+PONG\r\n", "PING", NULL);
    for (int i = n - waiting; i < n; i++)
        if (pong(conns[i], 0) != 0)
            pc_fail("waiting client %d was answered while the server had no descriptor for it", i);

    /* the accepted ones go (but conns[0]): the waiting ones are accepted and answered */
    for (int i = 1; i < served; i++)
        pc_conn_close(&conns[i]);
    int answered = 0;
    long long deadline = pc_now_ms() + 10000;
    for (int i = served; i < n; i++) {
        long long left = deadline - pc_now_ms();
        if (pong(conns[i], left > 0 ? (int)left : 1) == 1)
            answered++;
    }
    if (answered != waiting)
        pc_fail("%d of %d waiting clients were answered within 10 s of descriptors being freed", answered,
                waiting);
    char keys[PC_SPREAD_KEYS][64];
    pc_spread_keys("fd:", keys);
    for (int i = 0; i < PC_SPREAD_KEYS; i++) {
        pc_expect(conns[0], "+OK\r\n", "SET", keys[i], "after", NULL);
        pc_expect(conns[0], "$5\r\nafter\r\n", "GET", keys[i], NULL);
    }
    for (int i = 0; i < n; i++)
        pc_conn_close(&conns[i]);
    pc_test_teardown(&srv);
    char load[160], faults[160];
    snprintf(load, sizeof(load), "%d clients, %d of them past the descriptors (%lld shard threads)", n, waiting,
             shards);
    snprintf(faults, sizeof(faults), "RLIMIT_NOFILE %d: accept fails with EMFILE; server CPU %lld ms/s meanwhile",
             NOFILE, cpu1 - cpu0);
    pc_reliability_line(&srv, "out of file descriptors", load, faults, 0, -1);
    return pc_test_done("test_chaos_fds");
}
