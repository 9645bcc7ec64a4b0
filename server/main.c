/*
 * percore-server: options in, setup in dependency order, teardown out.
 *
 *   config (RCU) -> hash seed -> command table -> stats (metrics listener)
 *   -> shards (listeners, threads) -> stats aggregator thread
 *   ... wait for SIGTERM/SIGINT (or SHUTDOWN) ...
 *   shards stop and free their own memory -> aggregator stops -> rcu_barrier -> config
 */
#include "percore/admin.h"
#include "percore/config.h"
#include "percore/function.h"
#include "percore/log.h"
#include "percore/script.h"
#include "percore/shard.h"
#include "percore/stats.h"
#include "percore/store.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <urcu-qsbr.h>

static int write_pidfile(const char *path)
{
    if (!path || !path[0])
        return 0;
    FILE *f = fopen(path, "w");
    if (!f) {
        log_warn("Failed to write PID file %s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    return 0;
}

/* one line: which cpu and NUMA node each shard thread runs on */
static void log_placement(int threads)
{
    char buf[768];
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < threads && off < sizeof(buf) - 32; i++) {
        int cpu = shard_cpu(i);
        if (cpu < 0)
            off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%d:-", i ? " " : "", i);
        else
            off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%d:cpu%d/node%d", i ? " " : "", i, cpu,
                                    shard_numa_node(i));
    }
    if (off >= sizeof(buf) - 32)
        snprintf(buf + off, sizeof(buf) - off, " ...");
    log_notice("Shard placement (shard:cpu/node, - = not pinned): %s", buf);
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        config_print_help();
        return 0;
    }
    if (argc > 1 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-v") == 0)) {
        printf("percore-server v=%s (%s build, Redis 7.0 protocol subset)\n", PERCORE_VERSION, shard_build_name());
        return 0;
    }
    char err[2048];
    if (config_setup(argc, argv, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    const struct config *cfg = config_current();
    if (log_setup() < 0)
        return 1;
    uint8_t seed[16];
    if (getrandom(seed, sizeof(seed), 0) != sizeof(seed)) {
        log_warn("getrandom failed: %s", strerror(errno));
        return 1;
    }
    store_set_seed(seed);
    admin_setup();

    /* as Redis's own handlers: a SIGINT or SIGTERM ignored by whoever started us (a shell's background
     * job) still stops us, saving first (shard_run_until_signal's sigwait takes them) */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    /* shard threads inherit this mask: only the main thread takes the signals */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN); /* a file over RLIMIT_FSIZE fails its write (EFBIG), as a full disk does */

    /* once the shards run, CONFIG SET may replace cfg: this thread is no RCU reader */
    int threads = cfg->threads, port = cfg->port;
    log_notice("percore %s starting (Redis 7.0 protocol), pid=%d: %d shard threads, port %d", PERCORE_VERSION,
               (int)getpid(), threads, port);
    if (cfg->threads_auto_cpus > 1 && threads == 1) /* the small machine's one shard (config_threads_for_cpus) */
        log_notice("threads 0 on %d cpus: 1 shard thread, the clients and the kernel's network work share these "
                   "cores and a hop to another shard costs more than its core gives (set threads to choose)",
                   cfg->threads_auto_cpus);
    if (write_pidfile(cfg->pidfile) < 0 || stats_setup() < 0 || shard_setup() < 0 || stats_start() < 0)
        return 1;
    log_placement(threads);
    log_notice("Ready to accept connections tcp");
    shard_run_until_signal();
    log_notice("percore is now ready to exit, bye bye...");
    stats_teardown();
    shard_teardown();
    rcu_barrier();
    script_teardown();
    function_teardown();
    if (config_current()->pidfile && config_current()->pidfile[0])
        unlink(config_current()->pidfile);
    log_teardown();
    config_teardown();
    return 0;
}
