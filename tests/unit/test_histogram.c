/*
 * test_histogram: the latency histogram of stats.h and the per-command
 * recording a shard does.
 *
 * Buckets: every value falls in the bucket whose bounds hold it, the buckets
 * tile the range with no gap or overlap, values under 16 are exact and any
 * bucket is at most 1/16 of its lowest value wide.  Percentiles follow
 * HdrHistogram's rule (rank = p% of the count, rounded, at least 1; the
 * answer is the highest value of the bucket that reaches it).  Recording:
 * calls, time, failures (a reply starting with '-'), error prefixes,
 * rejections and the container redirect (config|get).
 */
#include "percore/command.h"
#include "percore/stats.h"

#include "check.h"

#include <stdlib.h>

static void test_buckets(void)
{
    for (uint64_t v = 0; v < STATS_HIST_SUB; v++) {
        CHECK_EQ_LL(stats_hist_index(v), v);
        CHECK_EQ_LL(stats_hist_lowest((unsigned)v), v);
        CHECK_EQ_LL(stats_hist_highest((unsigned)v), v);
    }
    for (unsigned i = 0; i + 1 < STATS_HIST_BUCKETS; i++) {
        uint64_t lo = stats_hist_lowest(i), hi = stats_hist_highest(i);
        CHECK(lo <= hi);
        CHECK_EQ_LL(stats_hist_index(lo), i);
        CHECK_EQ_LL(stats_hist_index(hi), i);
        CHECK_EQ_LL(hi + 1, stats_hist_lowest(i + 1)); /* no gap, no overlap */
        if (i >= STATS_HIST_SUB)
            CHECK((hi - lo + 1) * STATS_HIST_SUB <= lo); /* width <= lowest / 16 */
    }
    /* a pseudo-random spread of values lands in the bucket that holds it */
    uint64_t x = 88172645463325252ull;
    for (int k = 0; k < 100000; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t v = x >> (x % 40 + 20); /* values from 0 to about 2^44 */
        unsigned i = stats_hist_index(v);
        CHECK(i < STATS_HIST_BUCKETS);
        CHECK(stats_hist_lowest(i) <= v && v <= stats_hist_highest(i));
    }
    CHECK_EQ_LL(stats_hist_index(UINT64_MAX), STATS_HIST_BUCKETS - 1);
    CHECK_EQ_LL(stats_hist_index(1ull << 41), STATS_HIST_BUCKETS - 1);
    CHECK_EQ_LL(stats_hist_index((1ull << 41) - 1), STATS_HIST_BUCKETS - 1); /* the top of 2^40.. shares it */
}

static uint64_t hist[STATS_HIST_BUCKETS];

static void add(uint64_t v, uint64_t n)
{
    hist[stats_hist_index(v)] += n;
}

static void test_percentiles(void)
{
    memset(hist, 0, sizeof hist);
    CHECK_EQ_LL(stats_hist_percentile(hist, 0, 50), 0);
    /* one value: every percentile is its bucket's top, within 1/16 above it */
    add(3000, 1);
    for (double p = 0; p <= 100; p += 12.5) {
        uint64_t v = stats_hist_percentile(hist, 1, p);
        CHECK(v >= 3000 && v < 3000 + 3000 / 16 + 1);
    }
    CHECK_EQ_LL(stats_hist_percentile(hist, 1, 50), stats_hist_highest(stats_hist_index(3000)));
    /* 99 fast + 1 slow: p99 is fast, p99.9 rounds up to the 100th value, slow */
    memset(hist, 0, sizeof hist);
    add(1000, 99);
    add(1000000, 1);
    CHECK_EQ_LL(stats_hist_percentile(hist, 100, 50), stats_hist_highest(stats_hist_index(1000)));
    CHECK_EQ_LL(stats_hist_percentile(hist, 100, 99), stats_hist_highest(stats_hist_index(1000)));
    CHECK_EQ_LL(stats_hist_percentile(hist, 100, 99.9), stats_hist_highest(stats_hist_index(1000000)));
    CHECK_EQ_LL(stats_hist_percentile(hist, 100, 100), stats_hist_highest(stats_hist_index(1000000)));
    /* 1..1000: p50 holds the 500th value, p0 the first */
    memset(hist, 0, sizeof hist);
    for (uint64_t v = 1; v <= 1000; v++)
        add(v, 1);
    uint64_t p50 = stats_hist_percentile(hist, 1000, 50);
    CHECK(p50 >= 500 && p50 <= 500 + 500 / 16);
    CHECK_EQ_LL(stats_hist_percentile(hist, 1000, 0), 1);
    uint64_t p90 = stats_hist_percentile(hist, 1000, 90);
    CHECK(p90 >= 900 && p90 <= 900 + 900 / 16);
    CHECK_EQ_LL(stats_hist_percentile(hist, 1000, 100), stats_hist_highest(stats_hist_index(1000)));
}

static void proc_nop(struct cmd_ctx *ctx) { (void)ctx; }
static const struct command get_cmd = {"get", proc_nop, 2, 0, 1, 1, 1, ROUTE_OWNER, "@read"};
static const struct command config_cmd = {"config", proc_nop, -2, 0, 0, 0, 0, ROUTE_HOME, "@slow"};
static const struct command config_get_cmd = {"config|get", proc_nop, -3, 0, 0, 0, 0, ROUTE_HOME, "@slow"};

static struct stats block;

static uint32_t error_count(const char *name)
{
    for (uint32_t i = 0; i < block.nerrors; i++)
        if (strcmp(block.errors[i].name, name) == 0)
            return (uint32_t)block.errors[i].count;
    return 0;
}

static void test_recording(void)
{
    static const char ok[] = "$1\r\nv\r\n";
    static const char wrongtype[] = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
    for (int i = 0; i < 10; i++)
        stats_cmd_account(&block, &get_cmd, 1, 1000 + (uint64_t)i, ok, sizeof ok - 1, true);
    stats_cmd_account(&block, &get_cmd, 1, 5000, wrongtype, sizeof wrongtype - 1, true);
    stats_cmd_account(&block, &get_cmd, 0, 100, ok, sizeof ok - 1, false); /* a part: time only */
    stats_cmd_rejected(&block, &get_cmd, "-ERR", 4);
    stats_cmd_rejected(&block, NULL, "-ERR", 4);
    struct stats_cmd *c = stats_cmd_of(&block, &get_cmd);
    CHECK_EQ_LL(c->calls, 11);
    CHECK_EQ_LL(c->failed, 1);
    CHECK_EQ_LL(c->rejected, 1);
    CHECK_EQ_LL(c->samples, 11);
    CHECK_EQ_LL(c->nsec, 10 * 1000 + 45 + 5000 + 100);
    CHECK_EQ_LL(c->hist[stats_hist_index(5000)], 1);
    CHECK_EQ_LL(error_count("WRONGTYPE"), 1);
    CHECK_EQ_LL(error_count("ERR"), 2);
    CHECK_EQ_LL(block.total_error_replies, 3);
    CHECK_EQ_LL(block.ncmds, 1);
    CHECK(stats_cmd_of(&block, &get_cmd) == c); /* found again, not made twice */

    /* a container's subcommand takes the stats: config|get, never config */
    uint64_t t0 = stats_clock_ns();
    stats_subcommand(&config_get_cmd, false);
    uint64_t t1 = stats_cmd_done(&block, &config_cmd, 1, t0, "*0\r\n", 4, true);
    CHECK(t1 >= t0);
    stats_subcommand(&config_get_cmd, true); /* its arity check refused it */
    stats_cmd_done(&block, &config_cmd, 1, stats_clock_ns(), "-ERR x", 6, true);
    stats_subcommand(NULL, true); /* unknown subcommand: no command's stats */
    stats_cmd_done(&block, &config_cmd, 1, stats_clock_ns(), "-ERR y", 6, true);
    struct stats_cmd *cg = stats_cmd_of(&block, &config_get_cmd);
    CHECK_EQ_LL(cg->calls, 1);
    CHECK_EQ_LL(cg->rejected, 1);
    CHECK_EQ_LL(cg->failed, 0);
    CHECK_EQ_LL(block.ncmds, 2); /* get and config|get: no entry for config */
    CHECK_EQ_LL(error_count("ERR"), 4);
    CHECK(!stats_sub.active);
    stats_block_deinit(&block);
    CHECK_EQ_LL(block.ncmds, 0);
}

int main(void)
{
    test_buckets();
    test_percentiles();
    test_recording();
    return check_done("test_histogram");
}
