/*
 * stats: per-shard counters, one block per shard thread, and the aggregator
 * thread that merges them into the snapshot INFO and /metrics read.
 *
 * Each block is written only by its shard thread (relaxed atomic stores, so
 * readers on other threads see whole values) and sits on its own cache lines,
 * so no two threads' hot counters share a line (ARCHITECTURE.md rule 8).  The
 * ACTION tables give the struct fields and their INFO names from one list:
 * STATS_COUNTERS only grow (CONFIG RESETSTAT resets what INFO shows of them),
 * STATS_GAUGES are levels.
 *
 * Per command, a block holds calls, time, rejected and failed calls and a
 * latency histogram (log buckets: powers of two split in 16 sub-buckets, in
 * ns, so any value is known to 1/16).  The entry of a command is found by
 * hashing its struct command pointer into the block's own table; it is made
 * on the command's first use by the shard and published with a release
 * store, so the aggregator may walk the table at any time.
 *
 * The aggregator (stats.c) sums every block each stats-interval ms into an
 * immutable snapshot published with urcu-qsbr.  CONFIG RESETSTAT does not
 * touch any counter: it publishes a baseline (the sums at that moment) that
 * readers subtract.
 */
#ifndef PERCORE_STATS_H
#define PERCORE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct command;

#define STATS_MAX_DB 64 /* INFO keyspace covers the first 64 databases */

#define STATS_COUNTERS(ACTION)                                                    \
    ACTION(total_commands_processed, "commands executed on this shard")           \
    ACTION(total_connections_received, "connections accepted")                   \
    ACTION(rejected_connections, "connections refused (maxclients)")             \
    ACTION(keyspace_hits, "key lookups that found the key")                      \
    ACTION(keyspace_misses, "key lookups that did not")                          \
    ACTION(expired_keys, "keys expired (lazily or actively)")                    \
    ACTION(evicted_keys, "keys evicted at maxmemory")                            \
    ACTION(total_net_input_bytes, "bytes read from clients")                     \
    ACTION(total_net_output_bytes, "bytes written to clients")                   \
    ACTION(total_error_replies, "error replies sent")                            \
    ACTION(handoff_batches_sent, "cross-shard batches sent to other shards")     \
    ACTION(handoff_commands_sent, "commands sent to other shards")               \
    ACTION(handoff_batches_received, "cross-shard batches executed for others")  \
    ACTION(handoff_inbox_full, "sends refused by a full inbox (backpressure)")   \
    ACTION(handoff_credit_waits, "sends delayed for want of credits")            \
    ACTION(handoff_parked, "batches that waited at their owner for a locked key") \
    ACTION(handoff_lock_queued, "multi-shard commands' parts that queued here for their keys' locks") \
    ACTION(idle_poll_hits, "sleeps saved: work came while the shard polled (idle-poll-us)") \
    ACTION(dirty, "changes to this shard's store, as Redis's server.dirty counts them")

#define STATS_GAUGES(ACTION)                                                      \
    ACTION(connected_clients, "connections open now")                            \
    ACTION(blocked_clients, "connections waiting in a blocking command")         \
    ACTION(clients_in_timeout_table, "of those, the ones with a timeout")         \
    ACTION(used_memory, "bytes held by this shard's store")                      \
    ACTION(tracking_clients, "connections with CLIENT TRACKING on")              \
    ACTION(tracking_total_keys, "keys tracked for client-side caching")          \
    ACTION(tracking_total_items, "(key, client) pairs tracked")                  \
    ACTION(tracking_total_prefixes, "BCAST prefixes (counted on shard 0)")       \
    ACTION(pubsub_channels, "channels with a subscriber (each counted on one shard)") \
    ACTION(pubsub_patterns, "patterns with a subscriber (the same)")             \
    ACTION(pubsubshard_channels, "shard channels with a subscriber (the same)")

/* ---- latency histogram: bucket i of a value v in ns -------------------- */
#define STATS_HIST_SUB_BITS 4
#define STATS_HIST_SUB (1u << STATS_HIST_SUB_BITS)
#define STATS_HIST_MAX_EXP 40 /* 2^41 ns (about 37 min) and above share the last bucket */
#define STATS_HIST_BUCKETS ((STATS_HIST_MAX_EXP - STATS_HIST_SUB_BITS + 2) * STATS_HIST_SUB)

static inline unsigned stats_hist_index(uint64_t v)
{
    if (v < STATS_HIST_SUB)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v);
    if (e > STATS_HIST_MAX_EXP)
        return STATS_HIST_BUCKETS - 1;
    return (e - STATS_HIST_SUB_BITS + 1) * STATS_HIST_SUB + (unsigned)(v >> (e - STATS_HIST_SUB_BITS)) -
           STATS_HIST_SUB;
}
/* the smallest and largest value of bucket i */
uint64_t stats_hist_lowest(unsigned i);
uint64_t stats_hist_highest(unsigned i);
/*
 * The value at percentile p (0..100) of a histogram holding `total` values:
 * the highest value of the bucket where the count reaches p% of total
 * (rounded, at least 1), as HdrHistogram's hdr_value_at_percentile.  0 when
 * empty.
 */
uint64_t stats_hist_percentile(const uint64_t *hist, uint64_t total, double p);

/*
 * LATENCY HISTOGRAM's cumulative buckets.  Redis walks its hdr histogram
 * (ns, 2 significant digits) with a log-2 iterator from 1024 ns, and at
 * level k reports the count of values up to the top of the hdr bucket that
 * holds 2^(10+k) ns, labelled by that top in usec: 1, 2, 4, 8, 16, 33, 66,
 * 132 ... (the top is 2^(10+k) + 2^(3+k) - 1 ns).  Our buckets split each
 * power of two in 16, so they cannot stop at Redis's tops; level k counts
 * the values under 2^(10+k) ns exactly (Redis's level adds those in the
 * next 1/128 above), under Redis's label.  Redis clamps values above 1 s to
 * 1 s, which lands in level 20: so the last level counts every value.
 */
#define STATS_CDF_LEVELS 21
/* the usec label Redis prints for level k */
uint64_t stats_cdf_label_usec(unsigned level);

/* ---- a shard's block ---------------------------------------------------- */

/* one command's figures on one shard, made on first use */
struct stats_cmd {
    uint64_t calls;                      /* client calls counted here */
    uint64_t nsec;                       /* time inside the handler */
    uint64_t rejected;                   /* refused before running (arity, NOAUTH, OOM) */
    uint64_t failed;                     /* ran and replied with an error */
    uint64_t samples;                    /* values in hist */
    uint64_t hist[STATS_HIST_BUCKETS];   /* execution times, ns */
};

struct stats_cmd_slot {
    const struct command *cmd;   /* key: set once, last, with a release store */
    struct stats_cmd *st;        /* owned by the block */
};

#define STATS_CMD_SLOTS 1024       /* power of two, over twice the commands there are */
#define STATS_MAX_ERRORS 32        /* error prefixes counted per shard */
#define STATS_ERROR_NAME 32

struct stats_error {
    char name[STATS_ERROR_NAME]; /* "ERR", "WRONGTYPE": written before nerrors grows */
    uint64_t count;
};

struct stats {
#define STATS_FIELD(name, desc) uint64_t name;
    STATS_COUNTERS(STATS_FIELD)
    STATS_GAUGES(STATS_FIELD)
#undef STATS_FIELD
    uint64_t db_keys[STATS_MAX_DB];
    uint64_t db_expires[STATS_MAX_DB];
    uint32_t ncmds;                         /* entries made in cmds */
    uint32_t nerrors;                       /* entries of errors in use (release store) */
    struct stats_error errors[STATS_MAX_ERRORS];
    struct stats_cmd *overflow;             /* commands past the table's load limit */
    struct stats_cmd_slot cmds[STATS_CMD_SLOTS];
} __attribute__((aligned(128)));

_Static_assert(sizeof(struct stats) % 128 == 0, "stats block must fill whole cache-line pairs");

/* owner thread: a relaxed store so readers see whole values */
#define STATS_ADD(st, field, n) \
    __atomic_store_n(&(st)->field, (st)->field + (n), __ATOMIC_RELAXED)
#define STATS_SET(st, field, v) __atomic_store_n(&(st)->field, (v), __ATOMIC_RELAXED)
#define STATS_GET(st, field) __atomic_load_n(&(st)->field, __ATOMIC_RELAXED)

/* owner thread: the block's entry of cmd, made on its first use */
struct stats_cmd *stats_cmd_create(struct stats *st, const struct command *cmd);
static inline struct stats_cmd *stats_cmd_of(struct stats *st, const struct command *cmd)
{
    size_t h = (size_t)(((uintptr_t)cmd * 0x9E3779B97F4A7C15ull) >> 54) & (STATS_CMD_SLOTS - 1);
    for (;;) {
        const struct stats_cmd_slot *s = &st->cmds[h];
        if (s->cmd == cmd)
            return s->st;
        if (!s->cmd)
            return stats_cmd_create(st, cmd);
        h = (h + 1) & (STATS_CMD_SLOTS - 1);
    }
}

/* a cheap monotonic clock (vDSO), ns */
static inline uint64_t stats_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * A container command (CONFIG, CLIENT, COMMAND) names the subcommand that
 * runs, so that the stats go to "config|get" as in Redis: set by the
 * container's handler on the shard thread, taken by the stats_cmd_done of
 * the container's whole call (calls 1; containers run whole, on their home).
 */
struct stats_sub {
    const struct command *cmd;   /* the subcommand; NULL: unknown, counted for no command (not rejected: this
                                  * call is counted nowhere, a script that runs again elsewhere) */
    const struct command *container; /* whose call it is (NULL: the next counted); another's ignores it */
    bool active;
    bool rejected;               /* its arity check refused it */
};
extern __thread struct stats_sub stats_sub;
static inline void stats_subcommand(const struct command *sub, bool rejected)
{
    stats_sub.cmd = sub;
    stats_sub.container = NULL;
    stats_sub.rejected = rejected;
    stats_sub.active = true;
}
/* the next counted call of container is its subcommand sub's (dispatch.c: a CMD_SUBCOMMANDS container run
 * on its home); a call of another command counts as its own, and drops this */
static inline void stats_subcommand_of(const struct command *container, const struct command *sub)
{
    stats_subcommand(sub, false);
    stats_sub.container = container;
}

/* owner thread: an error reply (its first word counts in errorstats) */
void stats_error_reply(struct stats *st, const char *reply, size_t len);
/* owner thread: cmd refused before running (NULL: unknown command) with an error reply */
void stats_cmd_rejected(struct stats *st, const struct command *cmd, const char *reply, size_t len);
void stats_cmd_done_sub(struct stats *st, const struct command *cmd, uint64_t ns, const char *reply, size_t len,
                        bool track);

/*
 * Owner thread: one run of cmd took ns and wrote reply[0..len); `calls` is
 * 1 where the client's call ran inline and is counted with its outcome
 * (failed, errorstats); 0 for a part run for another shard's client, or on
 * the client's home for a command that did not run inline (remote, split,
 * fan-out, gathered): only its time counts, as the home counts the call and
 * its outcome once the whole reply is there (stats_cmd_outcome).
 * `track`: latency-tracking.
 */
/* always_inline: on the command path a call would cost a quarter more (callgrind) */
static inline __attribute__((always_inline)) void stats_cmd_account(struct stats *st, const struct command *cmd,
                                                                    int calls, uint64_t ns, const char *reply,
                                                                    size_t len, bool track)
{
    struct stats_cmd *c = stats_cmd_of(st, cmd);
    STATS_ADD(c, calls, (uint64_t)calls);
    STATS_ADD(c, nsec, ns);
    if (__builtin_expect(calls && len && reply[0] == '-', 0)) {
        STATS_ADD(c, failed, 1);
        stats_error_reply(st, reply, len);
    }
    if (track) {
        unsigned b = stats_hist_index(ns);
        STATS_ADD(c, samples, 1);
        STATS_ADD(c, hist[b], 1);
    }
}


/* owner thread: cmd ran from `start` (stats_clock_ns) to now; as stats_cmd_account; returns now */
static inline __attribute__((always_inline)) uint64_t stats_cmd_done(struct stats *st, const struct command *cmd,
                                                                     int calls, uint64_t start, const char *reply,
                                                                     size_t len, bool track)
{
    uint64_t now = stats_clock_ns();
    /* the subcommand is the container's whole call, not a part it ran here meanwhile (conn_fanout's) */
    if (__builtin_expect(stats_sub.active, 0) && calls)
        stats_cmd_done_sub(st, cmd, now - start, reply, len, track);
    else
        stats_cmd_account(st, cmd, calls, now - start, reply, len, track);
    return now;
}

/*
 * Home shard: the reply of a client's call of cmd that did not run inline
 * is complete: count the call, failed if the reply is an error, as Redis
 * counts one call (the parts only added their time).  Redis's OOM error is
 * a refusal before anything ran: a rejected call, not a call; so is an
 * error reply with `rejected` (-BUSY: refused unrun for a busy script).
 * `sample`: and its one latency sample, the ns its handler ran in all (its
 * parts).
 */
void stats_cmd_outcome(struct stats *st, const struct command *cmd, const char *reply, size_t len, bool rejected,
                       bool sample, uint64_t ns);

/* main thread, at teardown once no thread runs: free a block's entries */
void stats_block_deinit(struct stats *st);

/* ---- the aggregator and its snapshot ------------------------------------ */

/* main thread, before shard_setup: the aggregator's event_base and the metrics listener; 0 ok, -1 */
int stats_setup(void);
/* main thread, after shard_setup: the first snapshot, then the aggregator thread; 0 ok, -1 */
int stats_start(void);
/* main thread, after the shard threads stopped and before shard_teardown */
void stats_teardown(void);

/* what INFO and /metrics show: counters since the last CONFIG RESETSTAT */
struct stats_totals {
#define STATS_FIELD(name, desc) uint64_t name;
    STATS_COUNTERS(STATS_FIELD)
    STATS_GAUGES(STATS_FIELD)
#undef STATS_FIELD
    uint64_t db_keys[STATS_MAX_DB];
    uint64_t db_expires[STATS_MAX_DB];
};

#define STATS_MAX_PERCENTILES 16

struct stats_cmd_view {
    const char *name;            /* "get", "config|get" (static) */
    uint64_t calls;
    uint64_t usec;
    uint64_t rejected;
    uint64_t failed;
    uint64_t samples;            /* latency values; 0: no latencystats line */
    double pct_usec[STATS_MAX_PERCENTILES]; /* at the percentiles asked for */
    uint64_t cdf[STATS_CDF_LEVELS]; /* values at each LATENCY HISTOGRAM level (cumulative) */
};

struct stats_error_view {
    char name[STATS_ERROR_NAME];
    uint64_t count;
};

struct stats_shard_view {
    int cpu;
    int node;
    uint64_t keys;               /* live */
    uint64_t used_memory;        /* live: bytes held by the shard's store */
    uint64_t commands;
    uint64_t handoff_batches_sent;
    uint64_t handoff_batches_received;
    uint64_t handoff_inbox_full;
    uint64_t handoff_parked;     /* batches that waited here for a key a multi-shard command held */
    uint64_t handoff_lock_queued; /* split commands' parts that queued here for their keys' locks */
    uint64_t idle_poll_hits;     /* work came while the shard polled before sleeping */
};

struct stats_view {
    struct stats_totals t;       /* counters from the snapshot; gauges and keys live */
    double ops_per_sec;          /* instantaneous: mean of the last 16 intervals */
    double input_kbps;
    double output_kbps;
    size_t ncmds;                /* commands with a call, rejection or failure; by name */
    struct stats_cmd_view *cmds;
    size_t nerrors;              /* by name */
    struct stats_error_view *errors;
    int nshards;
    struct stats_shard_view *shards;
};

/*
 * Fill v from the latest snapshot less the baseline of the last CONFIG
 * RESETSTAT; the key counts and gauges are read live from the blocks (the
 * shards publish them before their replies leave, so SET then INFO agrees).
 * Percentiles pct[0..npct) of each command's latency, in usec.  Caller: an
 * online urcu-qsbr reader (a shard thread in a command, the aggregator).
 */
void stats_view_take(struct stats_view *v, const double *pct, int npct);
void stats_view_release(struct stats_view *v);
/* CONFIG RESETSTAT, from a shard thread (online reader) */
void stats_reset(void);

#endif
