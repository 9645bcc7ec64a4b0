/*
 * percore-server: options in, setup in dependency order, teardown out.
 *
 *   config (RCU) -> hash seed -> command table -> shards (listeners, threads)
 *   ... wait for SIGTERM/SIGINT (or SHUTDOWN) ...
 *   shards stop and free their own memory -> rcu_barrier -> config
 */
#include "percore/command.h"
#include "percore/config.h"
#include "percore/shard.h"
#include "percore/store.h"

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
        fprintf(stderr, "percore: cannot write pidfile %s\n", path);
        return -1;
    }
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        config_print_help();
        return 0;
    }
    if (argc > 1 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-v") == 0)) {
        printf("percore-server v=%s (sharded build, Redis 7.0 protocol subset)\n", PERCORE_VERSION);
        return 0;
    }
    char err[2048];
    if (config_setup(argc, argv, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    const struct config *cfg = config_current();
    if (cfg->logfile && cfg->logfile[0] && !freopen(cfg->logfile, "a", stderr)) {
        fprintf(stdout, "percore: cannot open logfile %s\n", cfg->logfile);
        return 1;
    }
    uint8_t seed[16];
    if (getrandom(seed, sizeof(seed), 0) != sizeof(seed)) {
        fprintf(stderr, "percore: getrandom failed\n");
        return 1;
    }
    store_set_seed(seed);
    command_setup();

    /* shard threads inherit this mask: only the main thread takes the signals */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    /* once the shards run, CONFIG SET may replace cfg: this thread is no RCU reader */
    int threads = cfg->threads, port = cfg->port;
    if (write_pidfile(cfg->pidfile) < 0 || shard_setup() < 0)
        return 1;
    fprintf(stderr, "percore %s ready: %d shard threads, port %d\n", PERCORE_VERSION, threads, port);
    fflush(stderr);
    shard_run_until_signal();
    shard_teardown();
    rcu_barrier();
    if (config_current()->pidfile && config_current()->pidfile[0])
        unlink(config_current()->pidfile);
    config_teardown();
    return 0;
}
