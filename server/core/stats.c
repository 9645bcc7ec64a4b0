/*
 * stats: the shards' per-command figures, and the aggregator thread that
 * merges every shard's block into one snapshot (ARCHITECTURE.md rule 8).
 *
 * Writers: each shard thread writes only its own block (stats.h), with
 * relaxed atomic stores; a command's entry and an error name are made by
 * the shard and published with a release store of the field that makes them
 * visible (the slot's cmd, nerrors).  Nothing on the command path is shared.
 *
 * The aggregator thread wakes every stats-interval ms, sums every block
 * with relaxed loads into an immutable snapshot (totals, per-command totals
 * and merged histograms, per-shard figures, error counts, and the rates
 * computed from the previous snapshot) and publishes it (rcu_ptr.h), then
 * call_rcu frees the one it replaced.  It is a
 * registered QSBR thread, online only while it works.  Its event_base also
 * serves /metrics (metrics.c).
 *
 * CONFIG RESETSTAT never writes a shard's counters: the thread that runs it
 * sums the blocks itself into a baseline and publishes that the same way;
 * readers show snapshot - baseline, so the reset shows at once, even before
 * the next snapshot (a counter older than the baseline shows as 0).
 *
 * Readers (INFO on a shard thread, /metrics on the aggregator) take a view
 * inside their RCU read-side section.  Key counts, connected clients and
 * memory are levels, not counters: the view reads them live from the
 * blocks, since shards publish them before their replies leave (SET then
 * INFO keyspace agrees, as in Redis).
 */
#include "percore/stats.h"

#include "percore/command.h"
#include "percore/config.h"
#include "percore/log.h"
#include "percore/mem.h"
#include "percore/metrics.h"
#include "percore/rcu_ptr.h"
#include "percore/shard.h"

#include <event2/event.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <urcu-qsbr.h>

__thread struct stats_sub stats_sub;

/* ------------------------------------------------------------------ histogram */

uint64_t stats_hist_lowest(unsigned i)
{
    if (i < STATS_HIST_SUB)
        return i;
    unsigned e = i / STATS_HIST_SUB + STATS_HIST_SUB_BITS - 1;
    uint64_t m = i % STATS_HIST_SUB + STATS_HIST_SUB;
    return m << (e - STATS_HIST_SUB_BITS);
}

uint64_t stats_hist_highest(unsigned i)
{
    if (i < STATS_HIST_SUB)
        return i;
    if (i == STATS_HIST_BUCKETS - 1)
        return UINT64_MAX;
    return stats_hist_lowest(i + 1) - 1;
}

uint64_t stats_hist_percentile(const uint64_t *hist, uint64_t total, double p)
{
    if (total == 0)
        return 0;
    if (p > 100)
        p = 100;
    uint64_t want = (uint64_t)(p / 100.0 * (double)total + 0.5);
    if (want < 1)
        want = 1;
    uint64_t seen = 0;
    unsigned last = 0;
    for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
        if (!hist[i])
            continue;
        seen += hist[i];
        last = i;
        if (seen >= want)
            break;
    }
    return stats_hist_highest(last);
}

uint64_t stats_cdf_label_usec(unsigned level)
{
    return ((1ull << (10 + level)) + (1ull << (3 + level)) - 1) / 1000;
}

/* the cumulative LATENCY HISTOGRAM levels of hist (stats.h) */
static void hist_cdf(const uint64_t *hist, uint64_t cdf[STATS_CDF_LEVELS])
{
    uint64_t seen = 0;
    unsigned level = 0;
    for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
        while (level < STATS_CDF_LEVELS - 1 && stats_hist_lowest(i) >= 1ull << (10 + level))
            cdf[level++] = seen;
        seen += hist[i];
    }
    while (level < STATS_CDF_LEVELS)
        cdf[level++] = seen;
}

/* ------------------------------------------------------------------ a shard's block */

struct stats_cmd *stats_cmd_create(struct stats *st, const struct command *cmd)
{
    if (st->ncmds >= STATS_CMD_SLOTS / 2) { /* never with today's table; keeps probes short */
        if (!st->overflow)
            st->overflow = mem_calloc(1, sizeof(*st->overflow));
        return st->overflow;
    }
    struct stats_cmd *c = mem_calloc(1, sizeof(*c));
    size_t h = (size_t)(((uintptr_t)cmd * 0x9E3779B97F4A7C15ull) >> 54) & (STATS_CMD_SLOTS - 1);
    while (st->cmds[h].cmd)
        h = (h + 1) & (STATS_CMD_SLOTS - 1);
    __atomic_store_n(&st->cmds[h].st, c, __ATOMIC_RELAXED);
    __atomic_store_n(&st->cmds[h].cmd, cmd, __ATOMIC_RELEASE);
    st->ncmds++;
    return c;
}

void stats_error_reply(struct stats *st, const char *reply, size_t len)
{
    STATS_ADD(st, total_error_replies, 1);
    /* the first word after '-', as Redis's errorstats */
    size_t n = 0;
    const char *p = reply + 1;
    while (n + 1 < len && n < STATS_ERROR_NAME - 1 && p[n] != ' ' && p[n] != '\r' && p[n] != '\n')
        n++;
    if (n == 0)
        return;
    uint32_t count = st->nerrors;
    for (uint32_t i = 0; i < count; i++) {
        struct stats_error *e = &st->errors[i];
        if (strncmp(e->name, p, n) == 0 && e->name[n] == '\0') {
            STATS_ADD(e, count, 1);
            return;
        }
    }
    if (count == STATS_MAX_ERRORS)
        return;
    struct stats_error *e = &st->errors[count];
    memcpy(e->name, p, n);
    e->name[n] = '\0';
    STATS_SET(e, count, 1);
    __atomic_store_n(&st->nerrors, count + 1, __ATOMIC_RELEASE);
}

void stats_cmd_rejected(struct stats *st, const struct command *cmd, const char *reply, size_t len)
{
    stats_error_reply(st, reply, len);
    if (cmd) {
        struct stats_cmd *c = stats_cmd_of(st, cmd);
        STATS_ADD(c, rejected, 1);
    }
}

void stats_cmd_outcome(struct stats *st, const struct command *cmd, const char *reply, size_t len, bool rejected,
                       bool sample, uint64_t ns)
{
    static const char oom[] = "-OOM ";
    if (len && reply[0] == '-' &&
        (rejected || (len >= sizeof oom - 1 && memcmp(reply, oom, sizeof oom - 1) == 0))) {
        stats_cmd_rejected(st, cmd, reply, len);
        return;
    }
    struct stats_cmd *c = stats_cmd_of(st, cmd);
    STATS_ADD(c, calls, 1);
    if (sample) {
        STATS_ADD(c, samples, 1);
        STATS_ADD(c, hist[stats_hist_index(ns)], 1);
    }
    if (len && reply[0] == '-') {
        STATS_ADD(c, failed, 1);
        stats_error_reply(st, reply, len);
    }
}

void stats_cmd_done_sub(struct stats *st, const struct command *cmd, uint64_t ns, const char *reply, size_t len,
                        bool track)
{
    struct stats_sub sub = stats_sub;
    stats_sub.active = false;
    stats_sub.cmd = NULL;
    if (sub.container && sub.container != cmd) { /* left by a container that did not run after all */
        stats_cmd_account(st, cmd, 1, ns, reply, len, track);
        return;
    }
    if (!sub.cmd && !sub.rejected) /* no call: a script that runs again elsewhere (script.c) */
        return;
    if (sub.rejected || !sub.cmd) {
        stats_cmd_rejected(st, sub.cmd, reply, len);
        return;
    }
    stats_cmd_account(st, sub.cmd, 1, ns, reply, len, track);
}

void stats_block_deinit(struct stats *st)
{
    for (size_t i = 0; i < STATS_CMD_SLOTS; i++) {
        mem_release(st->cmds[i].st);
        st->cmds[i].st = NULL;
        st->cmds[i].cmd = NULL;
    }
    mem_release(st->overflow);
    st->overflow = NULL;
    st->ncmds = 0;
}

/* ------------------------------------------------------------------ snapshots */

struct snap_cmd {
    const char *name;
    uint64_t calls;
    uint64_t nsec;
    uint64_t rejected;
    uint64_t failed;
    uint64_t *hist;              /* NULL: no latency values */
};

struct snap_shard {
    uint64_t commands;
    uint64_t handoff_batches_sent;
    uint64_t handoff_batches_received;
    uint64_t handoff_inbox_full;
    uint64_t handoff_parked;
    uint64_t handoff_lock_queued;
    uint64_t idle_poll_hits;
};

struct stats_snapshot {
    struct rcu_head rcu;
    uint64_t taken_ns;
    struct stats_totals t;       /* raw sums (counters since start) */
    double ops_per_sec;
    double input_kbps;
    double output_kbps;
    size_t ncmds;                /* sorted by name */
    struct snap_cmd *cmds;
    size_t nerrors;              /* sorted by name */
    struct stats_error_view *errors;
    int nshards;
    struct snap_shard *shards;
};

static void snapshot_destroy(struct stats_snapshot *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ncmds; i++)
        mem_release(s->cmds[i].hist);
    mem_release(s->cmds);
    mem_release(s->errors);
    mem_release(s->shards);
    mem_release(s);
}

static void snapshot_destroy_rcu(struct rcu_head *head)
{
    rcu_ptr_reclaiming();
    snapshot_destroy(caa_container_of(head, struct stats_snapshot, rcu));
}

struct cmd_pair {
    const struct command *cmd;
    const struct stats_cmd *st;
};

static int pair_by_name(const void *a, const void *b)
{
    return strcmp(((const struct cmd_pair *)a)->cmd->name, ((const struct cmd_pair *)b)->cmd->name);
}

static int error_by_name(const void *a, const void *b)
{
    return strcmp(((const struct stats_error_view *)a)->name, ((const struct stats_error_view *)b)->name);
}

/* sum every shard's block: any thread, while the shards exist */
static struct stats_snapshot *snapshot_collect(void)
{
    struct stats_snapshot *s = mem_calloc(1, sizeof(*s));
    int n = shard_count();
    s->taken_ns = stats_clock_ns();
    s->nshards = n;
    s->shards = mem_calloc((size_t)(n ? n : 1), sizeof(*s->shards));
    size_t npairs = 0, cap = 64;
    struct cmd_pair *pairs = mem_alloc(cap * sizeof(*pairs));
    size_t ecap = 16;
    s->errors = mem_alloc(ecap * sizeof(*s->errors));
    for (int i = 0; i < n; i++) {
        const struct stats *st = shard_stats(i);
#define SUM(name, desc) s->t.name += STATS_GET(st, name);
        STATS_COUNTERS(SUM)
        STATS_GAUGES(SUM)
#undef SUM
        for (int db = 0; db < STATS_MAX_DB; db++) {
            s->t.db_keys[db] += STATS_GET(st, db_keys[db]);
            s->t.db_expires[db] += STATS_GET(st, db_expires[db]);
        }
        s->shards[i].commands = STATS_GET(st, total_commands_processed);
        s->shards[i].handoff_batches_sent = STATS_GET(st, handoff_batches_sent);
        s->shards[i].handoff_batches_received = STATS_GET(st, handoff_batches_received);
        s->shards[i].handoff_inbox_full = STATS_GET(st, handoff_inbox_full);
        s->shards[i].handoff_parked = STATS_GET(st, handoff_parked);
        s->shards[i].handoff_lock_queued = STATS_GET(st, handoff_lock_queued);
        s->shards[i].idle_poll_hits = STATS_GET(st, idle_poll_hits);
        for (size_t k = 0; k < STATS_CMD_SLOTS; k++) {
            const struct command *cmd = __atomic_load_n(&st->cmds[k].cmd, __ATOMIC_ACQUIRE);
            if (!cmd)
                continue;
            if (npairs == cap) {
                cap *= 2;
                pairs = mem_realloc(pairs, cap * sizeof(*pairs));
            }
            pairs[npairs].cmd = cmd;
            pairs[npairs].st = __atomic_load_n(&st->cmds[k].st, __ATOMIC_RELAXED);
            npairs++;
        }
        uint32_t ne = __atomic_load_n(&st->nerrors, __ATOMIC_ACQUIRE);
        for (uint32_t k = 0; k < ne; k++) {
            const struct stats_error *e = &st->errors[k];
            size_t j = 0;
            while (j < s->nerrors && strcmp(s->errors[j].name, e->name) != 0)
                j++;
            if (j == s->nerrors) {
                if (s->nerrors == ecap) {
                    ecap *= 2;
                    s->errors = mem_realloc(s->errors, ecap * sizeof(*s->errors));
                }
                memcpy(s->errors[j].name, e->name, STATS_ERROR_NAME);
                s->errors[j].count = 0;
                s->nerrors++;
            }
            s->errors[j].count += STATS_GET(e, count);
        }
    }
    qsort(s->errors, s->nerrors, sizeof(*s->errors), error_by_name);
    qsort(pairs, npairs, sizeof(*pairs), pair_by_name);
    s->cmds = mem_calloc(npairs ? npairs : 1, sizeof(*s->cmds));
    for (size_t i = 0; i < npairs;) {
        struct snap_cmd *c = &s->cmds[s->ncmds++];
        c->name = pairs[i].cmd->name;
        for (; i < npairs && strcmp(pairs[i].cmd->name, c->name) == 0; i++) {
            const struct stats_cmd *sc = pairs[i].st;
            c->calls += STATS_GET(sc, calls);
            c->nsec += STATS_GET(sc, nsec);
            c->rejected += STATS_GET(sc, rejected);
            c->failed += STATS_GET(sc, failed);
            if (!STATS_GET(sc, samples))
                continue;
            if (!c->hist)
                c->hist = mem_calloc(STATS_HIST_BUCKETS, sizeof(uint64_t));
            for (unsigned b = 0; b < STATS_HIST_BUCKETS; b++)
                c->hist[b] += STATS_GET(sc, hist[b]);
        }
    }
    mem_release(pairs);
    return s;
}

static const struct snap_cmd *snapshot_find_cmd(const struct stats_snapshot *s, const char *name)
{
    size_t lo = 0, hi = s ? s->ncmds : 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(s->cmds[mid].name, name);
        if (c == 0)
            return &s->cmds[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ------------------------------------------------------------------ publication */

static struct stats_snapshot *published; /* the latest snapshot */
static struct stats_snapshot *baseline;  /* sums at the last CONFIG RESETSTAT, or NULL */

static uint64_t minus(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

void stats_reset(void)
{
    struct stats_snapshot *old = rcu_ptr_swap(&baseline, snapshot_collect());
    if (old)
        call_rcu(&old->rcu, snapshot_destroy_rcu);
}

void stats_view_take(struct stats_view *v, const double *pct, int npct)
{
    const struct stats_snapshot *s = rcu_ptr_read(&published);
    const struct stats_snapshot *b = rcu_ptr_read(&baseline);
    memset(v, 0, sizeof(*v));
    if (npct > STATS_MAX_PERCENTILES)
        npct = STATS_MAX_PERCENTILES;
    if (s) {
#define DIFF(name, desc) v->t.name = minus(s->t.name, b ? b->t.name : 0);
        STATS_COUNTERS(DIFF)
#undef DIFF
        v->ops_per_sec = s->ops_per_sec;
        v->input_kbps = s->input_kbps;
        v->output_kbps = s->output_kbps;
        v->cmds = mem_calloc(s->ncmds ? s->ncmds : 1, sizeof(*v->cmds));
        uint64_t *hist = mem_alloc(STATS_HIST_BUCKETS * sizeof(uint64_t));
        for (size_t i = 0; i < s->ncmds; i++) {
            const struct snap_cmd *c = &s->cmds[i];
            const struct snap_cmd *bc = snapshot_find_cmd(b, c->name);
            struct stats_cmd_view *cv = &v->cmds[v->ncmds];
            cv->name = c->name;
            cv->calls = minus(c->calls, bc ? bc->calls : 0);
            cv->usec = minus(c->nsec, bc ? bc->nsec : 0) / 1000;
            cv->rejected = minus(c->rejected, bc ? bc->rejected : 0);
            cv->failed = minus(c->failed, bc ? bc->failed : 0);
            if (!cv->calls && !cv->rejected && !cv->failed)
                continue;
            v->ncmds++;
            if (!c->hist)
                continue;
            for (unsigned k = 0; k < STATS_HIST_BUCKETS; k++) {
                hist[k] = minus(c->hist[k], bc && bc->hist ? bc->hist[k] : 0);
                cv->samples += hist[k];
            }
            for (int p = 0; p < npct; p++)
                cv->pct_usec[p] = (double)stats_hist_percentile(hist, cv->samples, pct[p]) / 1000.0;
            hist_cdf(hist, cv->cdf);
        }
        mem_release(hist);
        v->errors = mem_calloc(s->nerrors ? s->nerrors : 1, sizeof(*v->errors));
        for (size_t i = 0; i < s->nerrors; i++) {
            uint64_t before = 0;
            for (size_t j = 0; b && j < b->nerrors; j++)
                if (strcmp(b->errors[j].name, s->errors[i].name) == 0)
                    before = b->errors[j].count;
            if (s->errors[i].count > before) {
                v->errors[v->nerrors] = s->errors[i];
                v->errors[v->nerrors++].count -= before;
            }
        }
    }
    int n = shard_count();
    v->nshards = n;
    v->shards = mem_calloc((size_t)(n ? n : 1), sizeof(*v->shards));
    for (int i = 0; i < n; i++) {
        const struct stats *st = shard_stats(i);
        struct stats_shard_view *sv = &v->shards[i];
        sv->cpu = shard_cpu(i);
        sv->node = shard_numa_node(i);
#define LIVE(name, desc) v->t.name += STATS_GET(st, name);
        STATS_GAUGES(LIVE)
#undef LIVE
        sv->used_memory = STATS_GET(st, used_memory);
        for (int db = 0; db < STATS_MAX_DB; db++) {
            uint64_t keys = STATS_GET(st, db_keys[db]);
            sv->keys += keys;
            v->t.db_keys[db] += keys;
            v->t.db_expires[db] += STATS_GET(st, db_expires[db]);
        }
        if (s && i < s->nshards) {
            const struct snap_shard *ss = &s->shards[i], *bs = b && i < b->nshards ? &b->shards[i] : NULL;
            sv->commands = minus(ss->commands, bs ? bs->commands : 0);
            sv->handoff_batches_sent = minus(ss->handoff_batches_sent, bs ? bs->handoff_batches_sent : 0);
            sv->handoff_batches_received =
                minus(ss->handoff_batches_received, bs ? bs->handoff_batches_received : 0);
            sv->handoff_inbox_full = minus(ss->handoff_inbox_full, bs ? bs->handoff_inbox_full : 0);
            sv->handoff_parked = minus(ss->handoff_parked, bs ? bs->handoff_parked : 0);
            sv->handoff_lock_queued = minus(ss->handoff_lock_queued, bs ? bs->handoff_lock_queued : 0);
            sv->idle_poll_hits = minus(ss->idle_poll_hits, bs ? bs->idle_poll_hits : 0);
        }
    }
}

void stats_view_release(struct stats_view *v)
{
    mem_release(v->cmds);
    mem_release(v->errors);
    mem_release(v->shards);
    memset(v, 0, sizeof(*v));
}

/* ------------------------------------------------------------------ the aggregator */

#define RATE_SAMPLES 16 /* as Redis's STATS_METRIC_SAMPLES */

struct rate {
    double samples[RATE_SAMPLES];
    int next;
    int count;
};

static struct {
    pthread_t thread;
    bool running;
    struct event_base *base;
    struct event *timer;
    struct event *stop_ev;
    int stop_fd;                 /* eventfd: the main thread asks the loop to end */
    struct rate ops, in, out;    /* per second, from successive snapshots */
} agg;

static double rate_add(struct rate *r, double v)
{
    r->samples[r->next] = v;
    r->next = (r->next + 1) % RATE_SAMPLES;
    if (r->count < RATE_SAMPLES)
        r->count++;
    double sum = 0;
    for (int i = 0; i < r->count; i++)
        sum += r->samples[i];
    return sum / r->count;
}

/* aggregator thread (or setup, before it starts): a new snapshot replaces the old */
static void aggregate(void)
{
    struct stats_snapshot *s = snapshot_collect();
    struct stats_snapshot *prev = published;
    if (prev && s->taken_ns > prev->taken_ns) {
        double secs = (double)(s->taken_ns - prev->taken_ns) / 1e9;
        s->ops_per_sec = rate_add(&agg.ops, (double)minus(s->t.total_commands_processed,
                                                          prev->t.total_commands_processed) / secs);
        s->input_kbps = rate_add(&agg.in, (double)minus(s->t.total_net_input_bytes,
                                                        prev->t.total_net_input_bytes) / secs / 1024);
        s->output_kbps = rate_add(&agg.out, (double)minus(s->t.total_net_output_bytes,
                                                          prev->t.total_net_output_bytes) / secs / 1024);
    }
    rcu_ptr_publish(&published, s);
    if (prev)
        call_rcu(&prev->rcu, snapshot_destroy_rcu);
}

static void stats_arm_timer(int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(agg.timer, &tv);
}

/*
 * The timer ticks when the next snapshot is due (stats-interval after the
 * last), but at least every STATS_CONFIG_POLL_MS, so that a stats-interval
 * lowered by CONFIG SET applies at once rather than after the long wait it
 * replaces; a tick aggregates only when a snapshot is due.
 */
#define STATS_CONFIG_POLL_MS 100

/* aggregator thread (or setup): ms until the next tick */
static int stats_next_tick_ms(int interval_ms)
{
    uint64_t since_ms = published ? (stats_clock_ns() - published->taken_ns) / 1000000u : 0;
    uint64_t left = since_ms < (uint64_t)interval_ms ? (uint64_t)interval_ms - since_ms : 1;
    return left < STATS_CONFIG_POLL_MS ? (int)left : STATS_CONFIG_POLL_MS;
}

static void stats_on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what, (void)arg;
    rcu_thread_online();
    int ms = config_current()->stats_interval;
    if (stats_clock_ns() - published->taken_ns >= (uint64_t)ms * 1000000u)
        aggregate();
    rcu_ptr_quiescent();
    rcu_thread_offline();
    stats_arm_timer(stats_next_tick_ms(ms));
}

static void stats_on_stop(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what, (void)arg;
    event_base_loopbreak(agg.base);
}

static void *stats_main(void *arg)
{
    (void)arg;
    rcu_register_thread();
    rcu_thread_offline();
    event_base_dispatch(agg.base);
    rcu_thread_online();
    metrics_teardown();
    rcu_ptr_quiescent();
    rcu_unregister_thread();
    return NULL;
}

int stats_setup(void)
{
    const struct config *cfg = config_current();
    agg.base = event_base_new();
    agg.stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!agg.base || agg.stop_fd < 0) {
        log_warn("Cannot set up the stats aggregator");
        return -1;
    }
    agg.timer = evtimer_new(agg.base, stats_on_timer, NULL);
    agg.stop_ev = event_new(agg.base, agg.stop_fd, EV_READ | EV_PERSIST, stats_on_stop, NULL);
    event_add(agg.stop_ev, NULL);
    stats_arm_timer(stats_next_tick_ms(cfg->stats_interval));
    if (cfg->metrics_port &&
        metrics_setup(agg.base, cfg->bind_count ? cfg->bind[0] : "127.0.0.1", cfg->metrics_port) < 0)
        return -1;
    return 0;
}

int stats_start(void)
{
    aggregate();
    if (pthread_create(&agg.thread, NULL, stats_main, NULL) != 0) {
        log_warn("Cannot start the stats aggregator thread");
        return -1;
    }
    agg.running = true;
    return 0;
}

void stats_teardown(void)
{
    if (agg.running) {
        uint64_t one = 1;
        ssize_t rc = write(agg.stop_fd, &one, sizeof(one));
        (void)rc;
        pthread_join(agg.thread, NULL);
        agg.running = false;
    }
    if (agg.timer)
        event_free(agg.timer);
    if (agg.stop_ev)
        event_free(agg.stop_ev);
    if (agg.base)
        event_base_free(agg.base);
    if (agg.stop_fd > 0)
        close(agg.stop_fd);
    agg.timer = agg.stop_ev = NULL;
    agg.base = NULL;
    agg.stop_fd = -1;
    /* no reader is left: the shards and the aggregator have stopped */
    snapshot_destroy(published);
    snapshot_destroy(baseline);
    published = baseline = NULL;
}
