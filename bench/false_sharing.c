/*
 * false_sharing: why every shard's counters sit on cache lines of their own
 * (ARCHITECTURE.md rule 8), measured.
 *
 * N threads (default: the online cpus), each pinned to its own cpu, count
 * as fast as they can for a fixed time, four ways:
 *
 *   packed   each thread its own counter, the counters side by side in one
 *            cache line: logically private, physically shared
 *   padded   each counter alone in its own 128-byte block (what struct
 *            stats does)
 *   atomic   one shared counter, atomic_fetch_add (what a "global" counter
 *            on the hot path costs)
 *   local    a thread-local counter, for reference
 *
 * Every increment is a real store (relaxed atomic), so the compiler cannot
 * keep the counter in a register.  The modes run in turn for several
 * rounds and each keeps its best round (a busy machine only slows a run
 * down).  Prints ops/s per thread and the ratio to padded, and writes
 * results/false_sharing.csv and .txt (and a PNG when /usr/bin/python3 has
 * matplotlib).  Not a test: wall-clock numbers.
 *
 *     false_sharing [--threads N] [--ms MS_PER_RUN] [--rounds R] [--out DIR]
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_RESULTS_DIR
#define BENCH_RESULTS_DIR "bench/results"
#endif

#define MAX_THREADS 256
#define LINE 128

enum mode { PACKED, PADDED, ATOMIC, LOCAL, MODES };
static const char *const mode_name[MODES] = {"packed", "padded", "atomic", "local"};
static const char *const mode_what[MODES] = {
    "own counters side by side in one cache line",
    "own counters, each on its own 128-byte line",
    "one shared counter, atomic_fetch_add",
    "thread-local counters (reference)",
};

struct padded {
    _Alignas(LINE) uint64_t n;
};

static _Alignas(LINE) uint64_t packed[MAX_THREADS];
static struct padded padded[MAX_THREADS];
static _Alignas(LINE) atomic_uint_fast64_t shared;
static __thread uint64_t local;
static _Alignas(LINE) atomic_int stop;
static pthread_barrier_t barrier;

struct worker {
    pthread_t thread;
    int index;
    int cpu;
    enum mode mode;
    uint64_t ops;
};

#define BURST 1024

static void *work(void *arg)
{
    struct worker *w = arg;
    if (w->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(w->cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    uint64_t *mine = w->mode == PACKED ? &packed[w->index] : w->mode == PADDED ? &padded[w->index].n : &local;
    uint64_t ops = 0;
    pthread_barrier_wait(&barrier);
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        if (w->mode == ATOMIC) {
            for (int k = 0; k < BURST; k++)
                atomic_fetch_add_explicit(&shared, 1, memory_order_relaxed);
        } else {
            for (int k = 0; k < BURST; k++)
                __atomic_store_n(mine, *mine + 1, __ATOMIC_RELAXED);
        }
        ops += BURST;
    }
    w->ops = ops;
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ops per second per thread, mean over the threads */
static double run(enum mode m, int n, const int *cpus, int ms)
{
    struct worker w[MAX_THREADS];
    memset(packed, 0, sizeof packed);
    memset(padded, 0, sizeof padded);
    atomic_store(&shared, 0);
    atomic_store(&stop, 0);
    pthread_barrier_init(&barrier, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; i++) {
        w[i] = (struct worker){.index = i, .cpu = cpus[i], .mode = m};
        pthread_create(&w[i].thread, NULL, work, &w[i]);
    }
    pthread_barrier_wait(&barrier);
    double t0 = now_s();
    struct timespec d = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&d, NULL);
    atomic_store(&stop, 1);
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(w[i].thread, NULL);
        total += w[i].ops;
    }
    double secs = now_s() - t0;
    pthread_barrier_destroy(&barrier);
    return (double)total / secs / n;
}

static void plot(const char *dir, int n)
{
    if (access("/usr/bin/python3", X_OK) != 0)
        return;
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 - <<'EOF' 2>/dev/null\n"
             "import csv\n"
             "import matplotlib\n"
             "matplotlib.use('Agg')\n"
             "import matplotlib.pyplot as plt\n"
             "rows = list(csv.DictReader(open('%s/false_sharing.csv')))\n"
             "names = [r['mode'] for r in rows]\n"
             "vals = [float(r['ops_per_sec_per_thread']) / 1e6 for r in rows]\n"
             "fig, ax = plt.subplots(figsize=(6, 3.5))\n"
             "ax.bar(names, vals, color=['#d62728', '#2ca02c', '#ff7f0e', '#1f77b4'])\n"
             "ax.set_ylabel('M increments/s per thread')\n"
             "ax.set_title('false sharing, %d threads')\n"
             "for i, v in enumerate(vals):\n"
             "    ax.text(i, v, '%%.0f' %% v, ha='center', va='bottom')\n"
             "fig.tight_layout()\n"
             "fig.savefig('%s/false_sharing.png', dpi=100)\n"
             "EOF",
             dir, n, dir);
    if (system(cmd) != 0)
        fprintf(stderr, "false_sharing: no plot (python3 matplotlib missing?)\n");
}

int main(int argc, char **argv)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int n = online > 1 ? (int)online : 2;
    int ms = 500, rounds = 5;
    const char *dir = BENCH_RESULTS_DIR;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc)
            ms = atoi(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            dir = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--threads N] [--ms MS_PER_RUN] [--rounds R] [--out DIR]\n", argv[0]);
            return 2;
        }
    }
    if (n < 1 || n > MAX_THREADS || ms < 1 || rounds < 1) {
        fprintf(stderr, "false_sharing: threads 1..%d, ms >= 1, rounds >= 1\n", MAX_THREADS);
        return 2;
    }
    /* thread i on the i-th cpu we may run on (unpinned when there are fewer cpus than threads) */
    int cpus[MAX_THREADS], ncpu = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE && ncpu < MAX_THREADS; c++)
            if (CPU_ISSET(c, &set))
                cpus[ncpu++] = c;
    for (int i = 0; i < n; i++)
        cpus[i] = ncpu >= n ? cpus[i] : -1;

    double r[MODES] = {0};
    for (int round = 0; round < rounds; round++)
        for (int m = 0; m < MODES; m++) {
            double v = run((enum mode)m, n, cpus, ms);
            if (v > r[m])
                r[m] = v;
        }

    mkdir(dir, 0755);
    char path[1024];
    snprintf(path, sizeof path, "%s/false_sharing.csv", dir);
    FILE *csv = fopen(path, "w");
    snprintf(path, sizeof path, "%s/false_sharing.txt", dir);
    FILE *txt = fopen(path, "w");
    FILE *outs[2] = {stdout, txt};
    time_t t = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&t));
    for (int o = 0; o < 2; o++) {
        FILE *f = outs[o];
        if (!f)
            continue;
        fprintf(f, "# false_sharing  %s  %d threads%s, %ld online cpus, best of %d runs of %d ms per mode\n",
                when, n, ncpu >= n ? " (pinned)" : " (not pinned: fewer cpus than threads)", online, rounds, ms);
        fprintf(f, "%-8s %16s %16s %10s  %s\n", "mode", "ops/s/thread", "ops/s total", "vs padded", "what");
        for (int m = 0; m < MODES; m++)
            fprintf(f, "%-8s %16.0f %16.0f %9.2fx  %s\n", mode_name[m], r[m], r[m] * n, r[m] / r[PADDED],
                    mode_what[m]);
    }
    if (csv) {
        fprintf(csv, "mode,threads,ops_per_sec_per_thread,ops_per_sec_total,ratio_to_padded\n");
        for (int m = 0; m < MODES; m++)
            fprintf(csv, "%s,%d,%.0f,%.0f,%.3f\n", mode_name[m], n, r[m], r[m] * n, r[m] / r[PADDED]);
        fclose(csv);
    }
    if (txt)
        fclose(txt);
    if (!csv || !txt)
        fprintf(stderr, "false_sharing: cannot write results under %s\n", dir);
    else
        plot(dir, n);
    return 0;
}
