/*
 * config: every config key in one table, one immutable struct config
 * published with urcu-qsbr (see include/percore/config.h).
 *
 * The table gives each key its type, default, bounds and whether CONFIG SET
 * may change it at runtime; the same table drives the conf-file loader, the
 * `--key value` command line, CONFIG GET/SET and --help.  CONFIG SET copies
 * the current struct, applies every pair to the copy (all-or-nothing), and
 * publishes the copy; the old one is freed by call_rcu after every shard
 * thread has passed a quiescent state.
 */
#include "percore/config.h"

#include "percore/mem.h"
#include "percore/rdb.h"
#include "percore/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <urcu-qsbr.h>
#include <urcu/rculist.h>

enum config_type {
    CT_INT,         /* int */
    CT_SIZE,        /* long long, plain integer */
    CT_MEMORY,      /* long long, with b/k/kb/m/mb/g/gb units */
    CT_STRING,      /* char *, "" allowed */
    CT_BIND,        /* the bind list */
    CT_ENUM,        /* an enum or bool, names from config_enum_names() */
    CT_OBUF,        /* client-output-buffer-limit */
    CT_PERCENTILES, /* latency-tracking-info-percentiles */
    CT_SAVE,        /* save: the save points */
    CT_NOTIFY,      /* notify-keyspace-events: Redis's class letters */
};

struct config_key {
    const char *name;
    enum config_type type;
    size_t offset;        /* field in struct config */
    const char *dflt;     /* default, in conf-file syntax */
    long long min, max;   /* numeric bounds */
    bool runtime;         /* CONFIG SET allowed */
    const char *help;
};

#define OFF(f) offsetof(struct config, f)
static const struct config_key config_keys[] = {
    {"bind", CT_BIND, OFF(bind), "127.0.0.1", 0, 0, true, "addresses to listen on"},
    {"port", CT_INT, OFF(port), "6379", 1, 65535, false, "TCP port"},
    {"tcp-backlog", CT_INT, OFF(tcp_backlog), "511", 0, INT_MAX, false, "listen() backlog"},
    {"tcp-keepalive", CT_INT, OFF(tcp_keepalive), "300", 0, INT_MAX, true, "TCP keepalive, seconds"},
    {"cluster-ports", CT_ENUM, OFF(cluster_ports), "no", 0, 0, false,
     "shard i also listens on cluster-port-base + i, speaking Redis Cluster"},
    {"cluster-port-base", CT_INT, OFF(cluster_port_base), "0", 0, 65535, false,
     "first cluster port, 0 = port + 1"},
    {"threads", CT_INT, OFF(threads), "0", 0, CONFIG_MAX_THREADS, false,
     "shard threads, 0 = one per cpu (one in all on 2 cpus or fewer)"},
    {"cpu-list", CT_STRING, OFF(cpu_list), "", 0, 0, false, "cpus to pin shards to, e.g. 0-3,8"},
    {"databases", CT_INT, OFF(databases), "16", 1, INT_MAX, false, "number of databases"},
    {"proto-max-bulk-len", CT_MEMORY, OFF(proto_max_bulk_len), "512mb", 1024 * 1024, LLONG_MAX, true,
     "largest bulk string accepted"},
    {"client-query-buffer-limit", CT_MEMORY, OFF(client_query_buffer_limit), "1gb", 1024 * 1024,
     LONG_MAX, true, "largest unprocessed input per client"},
    {"maxclients", CT_INT, OFF(maxclients), "10000", 1, INT_MAX, true, "connections at once"},
    {"timeout", CT_INT, OFF(timeout), "0", 0, INT_MAX, true, "close idle clients after N s, 0 never"},
    {"hz", CT_INT, OFF(hz), "10", 0, INT_MAX, true, "shard timer frequency (kept within 1..500)"},
    {"requirepass", CT_STRING, OFF(requirepass), "", 0, 0, true, "password for AUTH"},
    {"maxmemory", CT_MEMORY, OFF(maxmemory), "0", 0, LLONG_MAX, true, "memory limit, 0 none"},
    {"replicaof", CT_STRING, OFF(replicaof), "", 0, 0, false,
     "<host> <port>: replicate that master (REPLICAOF changes it), \"\" or no one: be a master"},
    {"slaveof", CT_STRING, OFF(replicaof), "", 0, 0, false, "old name of replicaof"},
    {"masterauth", CT_STRING, OFF(masterauth), "", 0, 0, true, "password a replica gives its master"},
    {"masteruser", CT_STRING, OFF(masteruser), "", 0, 0, true, "... with this user (AUTH user password)"},
    {"replica-read-only", CT_ENUM, OFF(replica_read_only), "yes", 0, 0, true,
     "a replica refuses clients' writes with -READONLY"},
    {"slave-read-only", CT_ENUM, OFF(replica_read_only), "yes", 0, 0, true, "old name of replica-read-only"},
    {"replica-serve-stale-data", CT_ENUM, OFF(replica_serve_stale_data), "yes", 0, 0, true,
     "no: while its master's link is down a replica answers -MASTERDOWN but to INFO, REPLICAOF and the like"},
    {"slave-serve-stale-data", CT_ENUM, OFF(replica_serve_stale_data), "yes", 0, 0, true,
     "old name of replica-serve-stale-data"},
    {"replica-priority", CT_INT, OFF(replica_priority), "100", 0, INT_MAX, true,
     "INFO slave_priority: Sentinel promotes the replica with the lowest, never one with 0"},
    {"slave-priority", CT_INT, OFF(replica_priority), "100", 0, INT_MAX, true, "old name of replica-priority"},
    {"replica-ignore-maxmemory", CT_ENUM, OFF(replica_ignore_maxmemory), "yes", 0, 0, true,
     "a replica neither evicts nor refuses writes past maxmemory: its master's DELs free memory"},
    {"slave-ignore-maxmemory", CT_ENUM, OFF(replica_ignore_maxmemory), "yes", 0, 0, true,
     "old name of replica-ignore-maxmemory"},
    {"repl-timeout", CT_INT, OFF(repl_timeout), "60", 1, INT_MAX, true,
     "s of silence from the master before a replica drops its link (a master: from a replica, its ACKs)"},
    {"repl-backlog-size", CT_MEMORY, OFF(repl_backlog_size), "1mb", 16384, LLONG_MAX, true,
     "a master keeps this much of its replication stream for replicas that reconnect (PSYNC +CONTINUE)"},
    {"repl-ping-replica-period", CT_INT, OFF(repl_ping_replica_period), "10", 1, INT_MAX, true,
     "s between the PINGs a master puts in its stream to its replicas"},
    {"repl-ping-slave-period", CT_INT, OFF(repl_ping_replica_period), "10", 1, INT_MAX, true,
     "old name of repl-ping-replica-period"},
    {"min-replicas-to-write", CT_INT, OFF(min_replicas_to_write), "0", 0, INT_MAX, true,
     "a master refuses writes (-NOREPLICAS) unless this many replicas acknowledged within min-replicas-max-lag"},
    {"min-slaves-to-write", CT_INT, OFF(min_replicas_to_write), "0", 0, INT_MAX, true,
     "old name of min-replicas-to-write"},
    {"min-replicas-max-lag", CT_INT, OFF(min_replicas_max_lag), "10", 0, INT_MAX, true,
     "s since a replica's last ACK for min-replicas-to-write to count it"},
    {"min-slaves-max-lag", CT_INT, OFF(min_replicas_max_lag), "10", 0, INT_MAX, true,
     "old name of min-replicas-max-lag"},
    {"repl-diskless-sync", CT_ENUM, OFF(repl_diskless_sync), "yes", 0, 0, true,
     "accepted as in Redis's configs, no effect: a full sync's RDB is always the snapshot written to disk first"},
    {"repl-diskless-sync-delay", CT_INT, OFF(repl_diskless_sync_delay), "5", 0, INT_MAX, true,
     "accepted as in Redis's configs, no effect (no diskless sync)"},
    {"tracking-table-max-keys", CT_SIZE, OFF(tracking_table_max_keys), "1000000", 0, LONG_MAX, true,
     "keys client-side caching remembers, 0 no limit"},
    {"hash-max-listpack-entries", CT_SIZE, OFF(hash_max_listpack_entries), "512", 0, LONG_MAX, true,
     "hashes up to this many fields use a listpack"},
    {"hash-max-ziplist-entries", CT_SIZE, OFF(hash_max_listpack_entries), "512", 0, LONG_MAX, true,
     "old name of hash-max-listpack-entries"},
    {"hash-max-listpack-value", CT_MEMORY, OFF(hash_max_listpack_value), "64", 0, LONG_MAX, true,
     "... and fields and values up to this many bytes"},
    {"hash-max-ziplist-value", CT_MEMORY, OFF(hash_max_listpack_value), "64", 0, LONG_MAX, true,
     "old name of hash-max-listpack-value"},
    {"list-max-listpack-size", CT_INT, OFF(list_max_listpack_size), "-2", INT_MIN, INT_MAX, true,
     "list node size: > 0 entries, -1..-5 = 4..64 KB"},
    {"list-max-ziplist-size", CT_INT, OFF(list_max_listpack_size), "-2", INT_MIN, INT_MAX, true,
     "old name of list-max-listpack-size"},
    {"list-compress-depth", CT_INT, OFF(list_compress_depth), "0", 0, INT_MAX, true,
     "accepted for compatibility; list nodes are not compressed"},
    {"set-max-intset-entries", CT_SIZE, OFF(set_max_intset_entries), "512", 0, LONG_MAX, true,
     "sets of integers up to this size use an intset"},
    {"set-max-listpack-entries", CT_SIZE, OFF(set_max_listpack_entries), "128", 0, LONG_MAX, true,
     "other sets up to this many members use a listpack (Redis 7.2's)"},
    {"set-max-listpack-value", CT_MEMORY, OFF(set_max_listpack_value), "64", 0, LONG_MAX, true,
     "... and members up to this many bytes"},
    {"zset-max-listpack-entries", CT_SIZE, OFF(zset_max_listpack_entries), "128", 0, LONG_MAX, true,
     "sorted sets up to this many members use a listpack"},
    {"zset-max-ziplist-entries", CT_SIZE, OFF(zset_max_listpack_entries), "128", 0, LONG_MAX, true,
     "old name of zset-max-listpack-entries"},
    {"zset-max-listpack-value", CT_MEMORY, OFF(zset_max_listpack_value), "64", 0, LONG_MAX, true,
     "... and members up to this many bytes"},
    {"zset-max-ziplist-value", CT_MEMORY, OFF(zset_max_listpack_value), "64", 0, LONG_MAX, true,
     "old name of zset-max-listpack-value"},
    {"hll-sparse-max-bytes", CT_MEMORY, OFF(hll_sparse_max_bytes), "3000", 0, LONG_MAX, true,
     "a sparse HyperLogLog growing past this many bytes (header included) turns dense"},
    {"stream-node-max-bytes", CT_MEMORY, OFF(stream_node_max_bytes), "4096", 0, LONG_MAX, true,
     "a stream node (listpack) takes no new entry that would bring it to this many bytes, 0 no limit"},
    {"stream-node-max-entries", CT_SIZE, OFF(stream_node_max_entries), "100", 0, LLONG_MAX, true,
     "... nor more than this many entries, live and deleted, 0 no limit"},
    {"idle-poll-us", CT_INT, OFF(idle_poll_us), "50", 0, 10000, true,
     "a busy pinned shard polls this long before it sleeps, 0 never"},
    {"inbox-size", CT_INT, OFF(inbox_size), "1024", 2, 1 << 20, false,
     "batches a shard inbox holds (power of two)"},
    {"handoff-credits", CT_INT, OFF(handoff_credits), "256", 1, 1 << 20, false,
     "cross-shard batches a shard may have in flight"},
    {"loglevel", CT_ENUM, OFF(loglevel), "notice", 0, 0, true, "debug verbose notice warning"},
    {"maxmemory-policy", CT_ENUM, OFF(maxmemory_policy), "noeviction", 0, 0, true,
     "what to evict at maxmemory"},
    {"maxmemory-samples", CT_INT, OFF(maxmemory_samples), "5", 1, INT_MAX, true,
     "keys sampled per eviction (at most 64 a round are used)"},
    {"lfu-log-factor", CT_INT, OFF(lfu_log_factor), "10", 0, INT_MAX, true,
     "LFU: how slowly a key's access counter grows"},
    {"lfu-decay-time", CT_INT, OFF(lfu_decay_time), "1", 0, INT_MAX, true,
     "LFU: idle minutes per counter decrement, 0 never"},
    {"client-output-buffer-limit", CT_OBUF, OFF(obuf), "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
     0, 0, true, "class hard soft seconds"},
    {"protected-mode", CT_ENUM, OFF(protected_mode), "yes", 0, 0, true,
     "refuse non-loopback clients when no password is set"},
    {"enable-debug-command", CT_ENUM, OFF(enable_debug_command), "no", 0, 0, false,
     "who may run DEBUG: no, yes, local (loopback clients)"},
    {"slowlog-log-slower-than", CT_SIZE, OFF(slowlog_log_slower_than), "10000", -1, LLONG_MAX, true,
     "microseconds; -1 off, 0 every command"},
    {"slowlog-max-len", CT_SIZE, OFF(slowlog_max_len), "128", 0, LONG_MAX, true, "entries kept"},
    {"busy-reply-threshold", CT_SIZE, OFF(busy_reply_threshold), "5000", 0, LLONG_MAX, true,
     "ms a script may run before its shard answers -BUSY and SCRIPT KILL may end it"},
    {"lua-time-limit", CT_SIZE, OFF(busy_reply_threshold), "5000", 0, LLONG_MAX, true,
     "old name of busy-reply-threshold"},
    {"stats-interval", CT_INT, OFF(stats_interval), "100", 1, 60000, true,
     "ms between merges of the per-shard stats"},
    {"notify-keyspace-events", CT_NOTIFY, OFF(notify_keyspace_events), "", 0, 0, true,
     "keyspace events published (K E g $ l s h z x e t m d n A, as Redis)"},
    {"latency-tracking", CT_ENUM, OFF(latency_tracking), "yes", 0, 0, true, "per-command latency histograms"},
    {"latency-tracking-info-percentiles", CT_PERCENTILES, OFF(latency_percentiles), "50 99 99.9", 0, 0, true,
     "percentiles INFO latencystats shows"},
    {"metrics-port", CT_INT, OFF(metrics_port), "0", 0, 65535, false, "Prometheus text endpoint, 0 off"},
    {"logfile", CT_STRING, OFF(logfile), "", 0, 0, false, "log file, empty = stdout"},
    {"pidfile", CT_STRING, OFF(pidfile), "", 0, 0, false, "pid file, empty = none"},
    {"dir", CT_STRING, OFF(dir), ".", 0, 0, false, "working directory"},
    {"rdbcompression", CT_ENUM, OFF(rdbcompression), "yes", 0, 0, true,
     "LZF-compress strings over 20 bytes in DUMP payloads"},
    {"dbfilename", CT_STRING, OFF(dbfilename), "dump.rdb", 0, 0, false,
     "the RDB file in dir loaded at start"},
    {"rdbchecksum", CT_ENUM, OFF(rdbchecksum), "yes", 0, 0, false,
     "RDB files end with a CRC64 of their bytes (no: 0, not checked on load)"},
    {"save", CT_SAVE, OFF(save_points), "3600 1 300 100 60 10000", 0, 0, true,
     "save points, <seconds> <changes> pairs: BGSAVE once both are reached; \"\" none"},
    {"stop-writes-on-bgsave-error", CT_ENUM, OFF(stop_writes_on_bgsave_error), "yes", 0, 0, true,
     "with save points set, writes get -MISCONF after a failed BGSAVE"},
    {"appendonly", CT_ENUM, OFF(appendonly), "no", 0, 0, true,
     "record every write in the AOF (appenddirname), loaded at start instead of the RDB file"},
    {"appenddirname", CT_STRING, OFF(appenddirname), "appendonlydir", 0, 0, false,
     "the folder in dir that holds the AOF files and their manifest"},
    {"appendfilename", CT_STRING, OFF(appendfilename), "appendonly.aof", 0, 0, false,
     "the AOF files' base name (<name>.manifest, <name>.<seq>.base.rdb, <name>.<seq>.incr.aof)"},
    {"aof-load-truncated", CT_ENUM, OFF(aof_load_truncated), "yes", 0, 0, true,
     "an AOF cut short at its end is loaded up to its last whole command (no: refuse to start)"},
    {"appendfsync", CT_ENUM, OFF(appendfsync), "everysec", 0, 0, true,
     "always: a write's reply waits for its fsync; everysec: an fsync a second; no: the kernel's"},
    {"aof-use-rdb-preamble", CT_ENUM, OFF(aof_use_rdb_preamble), "yes", 0, 0, true,
     "the AOF's base file is an RDB snapshot (no: commands)"},
    {"auto-aof-rewrite-percentage", CT_INT, OFF(auto_aof_rewrite_percentage), "100", 0, INT_MAX, true,
     "BGREWRITEAOF by itself once the AOF grew this many % over its size after the last rewrite; 0 never"},
    {"auto-aof-rewrite-min-size", CT_MEMORY, OFF(auto_aof_rewrite_min_size), "64mb", 0, LLONG_MAX, true,
     "... and is over this size"},
};
#undef OFF
#define CONFIG_KEY_COUNT (sizeof(config_keys) / sizeof(config_keys[0]))

struct config *config_published;

/* publication: rcu_ptr.h (readers: config_current, config.h) */
#define config_publish(p) rcu_ptr_publish(&config_published, (p))
static pthread_mutex_t config_writer = PTHREAD_MUTEX_INITIALIZER;

struct config_box {
    struct rcu_head rcu;
    struct config config;
};

static const struct config_key *config_find(const char *name, size_t len)
{
    for (size_t i = 0; i < CONFIG_KEY_COUNT; i++)
        if (strlen(config_keys[i].name) == len && util_eq_nocase(name, len, config_keys[i].name))
            return &config_keys[i];
    return NULL;
}

static const struct config_key *config_canonical(const struct config_key *k);

/* a key's own string field (an alias shares its first spelling's) */
static bool config_owns_string(const struct config_key *k)
{
    return k->type == CT_STRING && config_canonical(k) == k;
}

static void config_free_strings(struct config *c)
{
    for (int i = 0; i < c->bind_count; i++)
        mem_release(c->bind[i]);
    c->bind_count = 0;
    for (size_t i = 0; i < CONFIG_KEY_COUNT; i++) {
        if (config_owns_string(&config_keys[i])) {
            char **s = (char **)((char *)c + config_keys[i].offset);
            mem_release(*s);
            *s = NULL;
        }
    }
    mem_release(c->config_file);
    c->config_file = NULL;
}

/* deep copy: strings duplicated so each published struct owns its own */
static struct config_box *config_copy(const struct config *src)
{
    struct config_box *box = mem_calloc(1, sizeof(*box));
    box->config = *src;
    struct config *c = &box->config;
    for (int i = 0; i < c->bind_count; i++)
        c->bind[i] = mem_strndup(src->bind[i], strlen(src->bind[i]));
    for (size_t i = 0; i < CONFIG_KEY_COUNT; i++) {
        if (config_owns_string(&config_keys[i])) {
            char **s = (char **)((char *)c + config_keys[i].offset);
            if (*s)
                *s = mem_strndup(*s, strlen(*s));
        }
    }
    if (src->config_file)
        c->config_file = mem_strndup(src->config_file, strlen(src->config_file));
    return box;
}

static void config_box_free(struct config_box *box)
{
    config_free_strings(&box->config);
    mem_release(box);
}

static void config_box_destroy(struct rcu_head *head)
{
    rcu_ptr_reclaiming();
    config_box_free(caa_container_of(head, struct config_box, rcu));
}

/* called with config_writer held: box becomes the current config, the writer is let go, and the config it
 * replaced is freed after a grace period */
static void config_box_publish(struct config_box *box)
{
    struct config *old = config_published;
    config_publish(&box->config);
    pthread_mutex_unlock(&config_writer);
    call_rcu(&caa_container_of(old, struct config_box, config)->rcu, config_box_destroy);
}

/* Redis memtoull: digits with an optional b k kb m mb g gb suffix */
static bool config_parse_memory(const char *s, size_t len, long long *out)
{
    size_t i = 0;
    while (i < len && isdigit((unsigned char)s[i]))
        i++;
    if (i == 0 || i > 19)
        return false;
    long long mul = 1;
    const char *unit = s + i;
    size_t ulen = len - i;
    if (ulen == 0 || util_eq_nocase(unit, ulen, "b")) mul = 1;
    else if (util_eq_nocase(unit, ulen, "k")) mul = 1000;
    else if (util_eq_nocase(unit, ulen, "kb")) mul = 1024;
    else if (util_eq_nocase(unit, ulen, "m")) mul = 1000LL * 1000;
    else if (util_eq_nocase(unit, ulen, "mb")) mul = 1024LL * 1024;
    else if (util_eq_nocase(unit, ulen, "g")) mul = 1000LL * 1000 * 1000;
    else if (util_eq_nocase(unit, ulen, "gb")) mul = 1024LL * 1024 * 1024;
    else return false;
    long long v;
    if (!util_str_to_ll(s, i, &v) && !(i > 1 && s[0] == '0'))
        return false;
    if (i > 1 && s[0] == '0') { /* leading zeros: accept like strtoull */
        char tmp[24];
        memcpy(tmp, s, i);
        tmp[i] = '\0';
        errno = 0;
        v = strtoll(tmp, NULL, 10);
        if (errno)
            return false;
    }
    if (v > LLONG_MAX / mul)
        return false;
    *out = v * mul;
    return true;
}

static const char *const loglevel_names[] = {"debug", "verbose", "notice", "warning"};
static const char *const policy_names[] = {"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
                                           "allkeys-lru",  "allkeys-lfu",  "allkeys-random",  "noeviction"};
static const char *const bool_names[] = {"no", "yes"};
static const char *const appendfsync_names[] = {"always", "everysec", "no"};
static const char *const obuf_class_names[] = {"normal", "slave", "pubsub"};
static const char *const protected_action_names[] = {"no", "yes", "local"};

/* the names of an enum key's values, in value order */
static const char *const *config_enum_names(const struct config_key *k, int *count)
{
    if (k->offset == offsetof(struct config, loglevel)) {
        *count = 4;
        return loglevel_names;
    }
    if (k->offset == offsetof(struct config, maxmemory_policy)) {
        *count = 8;
        return policy_names;
    }
    if (k->offset == offsetof(struct config, appendfsync)) {
        *count = 3;
        return appendfsync_names;
    }
    if (k->offset == offsetof(struct config, enable_debug_command)) {
        *count = 3;
        return protected_action_names;
    }
    *count = 2;
    return bool_names;
}

static size_t nonneg(long long v)
{
    return v > 0 ? (size_t)v : 0;
}

struct rdb_limits config_rdb_limits(const struct config *c)
{
    return (struct rdb_limits){
        .hash = {nonneg(c->hash_max_listpack_entries), nonneg(c->hash_max_listpack_value)},
        .set = {c->set_max_intset_entries, c->set_max_listpack_entries, c->set_max_listpack_value},
        .zset_max_entries = nonneg(c->zset_max_listpack_entries),
        .zset_max_value = nonneg(c->zset_max_listpack_value),
        .list_fill = c->list_max_listpack_size,
    };
}

const char *config_maxmemory_policy_name(const struct config *c)
{
    return policy_names[c->maxmemory_policy];
}

/* "normal 0 0 0 slave ... pubsub ..." (any subset of classes) into c->obuf */
static const char *config_parse_obuf(struct config *c, const char *v, size_t vlen)
{
    char buf[512], *words[24];
    int n = 0;
    if (vlen >= sizeof(buf))
        return "Wrong number of arguments in buffer limit configuration.";
    memcpy(buf, v, vlen);
    buf[vlen] = '\0';
    for (char *save = NULL, *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (n == 24)
            return "Wrong number of arguments in buffer limit configuration.";
        words[n++] = w;
    }
    if (n == 0 || n % 4 != 0)
        return "Wrong number of arguments in buffer limit configuration.";
    struct obuf_limit next[OBUF_CLASSES];
    memcpy(next, c->obuf, sizeof(next));
    for (int i = 0; i < n; i += 4) {
        int cls = -1;
        for (int j = 0; j < OBUF_CLASSES; j++)
            if (strcasecmp(words[i], obuf_class_names[j]) == 0 || (j == OBUF_REPLICA && strcasecmp(words[i], "replica") == 0))
                cls = j;
        long long hard, soft, secs;
        if (cls < 0)
            return "Invalid client class specified in buffer limit configuration.";
        if (!config_parse_memory(words[i + 1], strlen(words[i + 1]), &hard) ||
            !config_parse_memory(words[i + 2], strlen(words[i + 2]), &soft) ||
            !util_str_to_ll(words[i + 3], strlen(words[i + 3]), &secs) || secs < 0)
            return "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
        next[cls] = (struct obuf_limit){hard, soft, secs};
    }
    memcpy(c->obuf, next, sizeof(next));
    return NULL;
}

static const char *config_parse_percentiles(struct config *c, const char *v, size_t vlen)
{
    char buf[512];
    double p[CONFIG_MAX_PERCENTILES];
    int n = 0;
    if (vlen >= sizeof(buf))
        return "latency-tracking-info-percentiles: too long";
    memcpy(buf, v, vlen);
    buf[vlen] = '\0';
    for (char *save = NULL, *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (n == CONFIG_MAX_PERCENTILES)
            return "latency-tracking-info-percentiles: too many percentiles";
        if (!util_str_to_double(w, strlen(w), &p[n]))
            return "Invalid latency-tracking-info-percentiles parameters";
        if (p[n] < 0 || p[n] > 100)
            return "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
        n++;
    }
    memcpy(c->latency_percentiles, p, (size_t)n * sizeof(double));
    c->latency_percentiles_count = n;
    return NULL;
}

/*
 * Redis's setConfigSaveOption on the words w[0..n): pairs of integers (strtoll
 * over the whole word), seconds >= 1, changes >= 0, that replace c's save
 * points or, append, follow them (the conf file's later `save` lines).
 */
static const char *config_save_set(struct config *c, const struct resp_arg *w, int n, bool append)
{
    if (n % 2)
        return "Invalid save parameters";
    long long v[2 * CONFIG_MAX_SAVE_POINTS];
    int have = append ? c->save_points_count : 0;
    if (have + n / 2 > CONFIG_MAX_SAVE_POINTS)
        return "Invalid save parameters: more than 64 save points";
    for (int i = 0; i < n; i++) {
        char buf[64], *end;
        if (w[i].len >= sizeof buf || memchr(w[i].ptr, '\0', w[i].len))
            return "Invalid save parameters";
        memcpy(buf, w[i].ptr, w[i].len);
        buf[w[i].len] = '\0';
        v[i] = strtoll(buf, &end, 10);
        if (*end != '\0' || v[i] < (i % 2 == 0 ? 1 : 0))
            return "Invalid save parameters";
    }
    for (int i = 0; i < n; i += 2)
        c->save_points[have++] = (struct config_save_point){v[i], (int)v[i + 1]};
    c->save_points_count = have;
    return NULL;
}

/* CONFIG SET's (and the default's) one value, split at every single space as Redis's sdssplitlen */
static const char *config_save_set_value(struct config *c, const char *v, size_t vlen)
{
    struct resp_arg w[2 * CONFIG_MAX_SAVE_POINTS + 1];
    int n = 0;
    for (size_t start = 0, j = 0; vlen && j <= vlen; j++) {
        if (j < vlen && v[j] != ' ')
            continue;
        if (n == (int)(sizeof w / sizeof w[0]))
            return "Invalid save parameters: more than 64 save points";
        w[n++] = (struct resp_arg){v + start, j - start};
        start = j + 1;
    }
    return config_save_set(c, w, n, false);
}

/* Redis's keyspaceEventsStringToFlags: the classes, or -1 for a letter that names none */
static int config_notify_flags(const char *v, size_t vlen)
{
    static const char letters[] = "g$lshzxeKEtmdn";
    static const int classes[] = {NOTIFY_GENERIC, NOTIFY_STRING, NOTIFY_LIST, NOTIFY_SET, NOTIFY_HASH,
                                  NOTIFY_ZSET, NOTIFY_EXPIRED, NOTIFY_EVICTED, NOTIFY_KEYSPACE,
                                  NOTIFY_KEYEVENT, NOTIFY_STREAM, NOTIFY_KEY_MISS, NOTIFY_MODULE, NOTIFY_NEW};
    int flags = 0;
    for (size_t i = 0; i < vlen && v[i]; i++) { /* Redis reads it as a C string: a NUL ends it */
        const char *at = v[i] == 'A' ? NULL : memchr(letters, v[i], sizeof letters - 1);
        if (v[i] == 'A')
            flags |= NOTIFY_ALL;
        else if (at)
            flags |= classes[at - letters];
        else
            return -1;
    }
    return flags;
}

/* Redis's keyspaceEventsFlagsToString */
static void config_notify_format(unsigned flags, char *buf, size_t cap)
{
    static const char letters[] = "g$lshzxetdn";
    static const unsigned classes[] = {NOTIFY_GENERIC, NOTIFY_STRING, NOTIFY_LIST, NOTIFY_SET, NOTIFY_HASH,
                                       NOTIFY_ZSET, NOTIFY_EXPIRED, NOTIFY_EVICTED, NOTIFY_STREAM,
                                       NOTIFY_MODULE, NOTIFY_NEW};
    size_t n = 0;
    if ((flags & NOTIFY_ALL) == NOTIFY_ALL) /* as Redis 7.0, 'n' is not shown beside 'A' */
        buf[n++] = 'A';
    else
        for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
            if (flags & classes[i])
                buf[n++] = letters[i];
    if (flags & NOTIFY_KEYSPACE)
        buf[n++] = 'K';
    if (flags & NOTIFY_KEYEVENT)
        buf[n++] = 'E';
    if (flags & NOTIFY_KEY_MISS)
        buf[n++] = 'm';
    (void)cap; /* at most 15 letters */
    buf[n] = '\0';
}

/* replicaof: `host port` (two values, or one "host port" as CONFIG REWRITE quotes it), `no one` or ""
 * (none); stored as "host port" or "" */
static const char *config_parse_replicaof(struct config *c, const struct resp_arg *vals, int nvals)
{
    char joined[1024];
    size_t off = 0;
    for (int i = 0; i < nvals && off < sizeof(joined); i++)
        off += (size_t)snprintf(joined + off, sizeof(joined) - off, "%s%.*s", i ? " " : "", (int)vals[i].len,
                                vals[i].ptr);
    if (off >= sizeof(joined))
        return "wrong number of arguments";
    char *space = strchr(joined, ' ');
    if (off == 0 || strcasecmp(joined, "no one") == 0) {
        joined[0] = '\0';
    } else {
        long long port;
        if (!space || space == joined || strchr(space + 1, ' ') ||
            !util_str_to_ll(space + 1, strlen(space + 1), &port) || port < 0 || port > 65535)
            return "wrong number of arguments";
    }
    mem_release(c->replicaof);
    c->replicaof = mem_strndup(joined, strlen(joined));
    return NULL;
}

/* apply one value to c; NULL ok, else the reason (Redis's wording) */
static const char *config_apply(struct config *c, const struct config_key *k, const struct resp_arg *vals,
                                int nvals, char *errbuf, size_t errlen)
{
    void *field = (char *)c + k->offset;
    if (k->offset == offsetof(struct config, replicaof))
        return config_parse_replicaof(c, vals, nvals);
    if (k->type != CT_BIND && k->type != CT_OBUF && k->type != CT_PERCENTILES && nvals != 1)
        return "wrong number of arguments";
    const char *v = vals[0].ptr;
    size_t vlen = vals[0].len;
    switch (k->type) {
    case CT_INT:
    case CT_SIZE:
    case CT_MEMORY: {
        long long n;
        if (k->type != CT_MEMORY) {
            if (!util_str_to_ll(v, vlen, &n))
                return "argument couldn't be parsed into an integer";
        } else if (!config_parse_memory(v, vlen, &n)) {
            return "argument must be a memory value";
        }
        if (n < k->min || n > k->max) {
            snprintf(errbuf, errlen, "argument must be between %lld and %lld inclusive", k->min, k->max);
            return errbuf;
        }
        if (k->type == CT_INT)
            *(int *)field = (int)n;
        else if (k->type == CT_SIZE)
            *(long long *)field = n;
        else
            *(long long *)field = n;
        if (strcmp(k->name, "inbox-size") == 0 && (n & (n - 1)) != 0)
            return "argument must be a power of two";
        if (strcmp(k->name, "hz") == 0) /* Redis keeps it within CONFIG_MIN_HZ..CONFIG_MAX_HZ */
            *(int *)field = n < 1 ? 1 : n > 500 ? 500 : (int)n;
        return NULL;
    }
    case CT_STRING: {
        bool aof_name = strcmp(k->name, "appendfilename") == 0, aof_dir = strcmp(k->name, "appenddirname") == 0;
        if ((aof_name || aof_dir) && vlen == 0) /* Redis isValidAOFfilename / isValidAOFdirname */
            return aof_name ? "appendfilename can't be empty" : "appenddirname can't be empty";
        if ((aof_name || aof_dir) && (memchr(v, '/', vlen) || memchr(v, '\\', vlen)))
            return aof_name ? "appendfilename can't be a path, just a filename"
                            : "appenddirname can't be a path, just a dirname";
        char **s = field;
        mem_release(*s);
        *s = mem_strndup(v, vlen);
        return NULL;
    }
    case CT_ENUM: {
        int count;
        const char *const *names = config_enum_names(k, &count);
        for (int i = 0; i < count; i++) {
            if (util_eq_nocase(v, vlen, names[i])) {
                if (names == bool_names)
                    *(bool *)field = i == 1;
                else
                    *(int *)field = i; /* enums are int-sized */
                return NULL;
            }
        }
        if (names == bool_names)
            return "argument must be 'yes' or 'no'";
        size_t off = (size_t)snprintf(errbuf, errlen, "argument(s) must be one of the following: ");
        for (int i = 0; i < count && off < errlen; i++)
            off += (size_t)snprintf(errbuf + off, errlen - off, "%s%s", i ? ", " : "", names[i]);
        return errbuf;
    }
    case CT_OBUF: {
        if (nvals == 1)
            return config_parse_obuf(c, v, vlen);
        char joined[512];
        size_t off = 0;
        for (int i = 0; i < nvals && off < sizeof(joined); i++)
            off += (size_t)snprintf(joined + off, sizeof(joined) - off, "%s%.*s", i ? " " : "",
                                    (int)vals[i].len, vals[i].ptr);
        return config_parse_obuf(c, joined, off < sizeof(joined) ? off : sizeof(joined) - 1);
    }
    case CT_PERCENTILES:
        return config_parse_percentiles(c, v, vlen);
    case CT_BIND: {
        /* CONFIG SET's one value is split at every space (Redis's sdssplitlen: two spaces make an empty
         * address, which cannot be bound); "" alone is no address at all */
        struct resp_arg words[CONFIG_MAX_BIND];
        int nw = 0;
        for (int i = 0; i < nvals; i++) {
            size_t start = 0;
            for (size_t j = 0; j <= vals[i].len && (nvals > 1 || vals[i].len > 0); j++) {
                if (j < vals[i].len && (nvals > 1 || vals[i].ptr[j] != ' '))
                    continue;
                if (nw == CONFIG_MAX_BIND)
                    return "Too many bind addresses specified.";
                words[nw++] = (struct resp_arg){vals[i].ptr + start, j - start};
                start = j + 1;
            }
        }
        for (int i = 0; i < c->bind_count; i++)
            mem_release(c->bind[i]);
        c->bind_count = 0;
        for (int i = 0; i < nw; i++)
            c->bind[c->bind_count++] = mem_strndup(words[i].ptr, words[i].len);
        return NULL;
    }
    case CT_NOTIFY: {
        int flags = config_notify_flags(v, vlen);
        if (flags < 0)
            return "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
        *(unsigned *)field = (unsigned)flags;
        return NULL;
    }
    case CT_SAVE:
        return config_save_set_value(c, v, vlen);
    }
    return "unknown type";
}

/* value of a key as CONFIG GET prints it */
static void config_format(const struct config *c, const struct config_key *k, char *buf, size_t cap)
{
    const void *field = (const char *)c + k->offset;
    switch (k->type) {
    case CT_INT: snprintf(buf, cap, "%d", *(const int *)field); break;
    case CT_SIZE:
    case CT_MEMORY: snprintf(buf, cap, "%lld", *(const long long *)field); break;
    case CT_STRING: {
        const char *v = *(char *const *)field ? *(char *const *)field : "";
        char path[PATH_MAX];
        if (strcmp(k->name, "dir") == 0 && realpath(v, path)) /* Redis answers with its getcwd() */
            v = path;
        size_t n = strlen(v) < cap ? strlen(v) : cap - 1;
        memcpy(buf, v, n);
        buf[n] = '\0';
        break;
    }
    case CT_ENUM: {
        int count;
        const char *const *names = config_enum_names(k, &count);
        int v = names == bool_names ? *(const bool *)field : *(const int *)field;
        snprintf(buf, cap, "%s", names[v]);
        break;
    }
    case CT_OBUF: {
        size_t off = 0;
        for (int i = 0; i < OBUF_CLASSES && off < cap; i++)
            off += (size_t)snprintf(buf + off, cap - off, "%s%s %lld %lld %lld", i ? " " : "", obuf_class_names[i],
                                    c->obuf[i].hard, c->obuf[i].soft, c->obuf[i].soft_seconds);
        break;
    }
    case CT_PERCENTILES: {
        size_t off = 0;
        buf[0] = '\0';
        for (int i = 0; i < c->latency_percentiles_count && off < cap; i++)
            off += (size_t)snprintf(buf + off, cap - off, "%s%g", i ? " " : "", c->latency_percentiles[i]);
        break;
    }
    case CT_SAVE: {
        size_t off = 0;
        buf[0] = '\0';
        for (int i = 0; i < c->save_points_count && off < cap; i++)
            off += (size_t)snprintf(buf + off, cap - off, "%s%lld %d", i ? " " : "", c->save_points[i].seconds,
                                    c->save_points[i].changes);
        break;
    }
    case CT_NOTIFY: config_notify_format(*(const unsigned *)field, buf, cap); break;
    case CT_BIND: {
        size_t off = 0;
        buf[0] = '\0';
        for (int i = 0; i < c->bind_count && off < cap; i++)
            off += (size_t)snprintf(buf + off, cap - off, "%s%s", i ? " " : "", c->bind[i]);
        break;
    }
    }
}

/* split a conf line into words: "double quotes" with \ escapes, 'single quotes' */
static int config_split_line(const char *line, char words[][1024], int max, bool *bad_quotes)
{
    int n = 0;
    const char *p = line;
    *bad_quotes = false;
    for (;;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            return n;
        if (n == max)
            return -1;
        size_t len = 0;
        char *w = words[n];
        char quote = 0;
        if (*p == '"' || *p == '\'')
            quote = *p++;
        for (;;) {
            if (quote) {
                if (!*p) {
                    *bad_quotes = true;
                    return -1;
                }
                if (*p == quote) {
                    p++;
                    if (*p && !isspace((unsigned char)*p)) {
                        *bad_quotes = true;
                        return -1;
                    }
                    break;
                }
                if (quote == '"' && *p == '\\' && p[1]) {
                    p++;
                    char ch = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == 'r' ? '\r' : *p;
                    if (len < 1023) w[len++] = ch;
                    p++;
                    continue;
                }
            } else if (!*p || isspace((unsigned char)*p)) {
                break;
            }
            if (len < 1023) w[len++] = *p;
            p++;
        }
        w[len] = '\0';
        n++;
    }
}

/*
 * A `save` line, as Redis reads its config: one non-empty value is split
 * into words (`save "3600 1 300 100"`), "" alone means none; the first
 * `save` line (of the file and the command line together) replaces the
 * default points, each later one adds its own.
 */
static int config_save_directive(struct config *c, char words[][1024], int n, bool *save_seen, char *err,
                                 size_t errlen)
{
    struct resp_arg w[2 * CONFIG_MAX_SAVE_POINTS + 1];
    int nw = 0;
    bool none = n == 2 && words[1][0] == '\0';
    for (int i = 1; i < n && nw < (int)(sizeof w / sizeof w[0]); i++) {
        if (n > 2) { /* several words: each is one */
            w[nw++] = (struct resp_arg){words[i], strlen(words[i])};
            continue;
        }
        for (const char *p = words[i]; *p && nw < (int)(sizeof w / sizeof w[0]);) { /* one: split at spaces */
            while (isspace((unsigned char)*p))
                p++;
            const char *e = p;
            while (*e && !isspace((unsigned char)*e))
                e++;
            if (e > p)
                w[nw++] = (struct resp_arg){p, (size_t)(e - p)};
            p = e;
        }
    }
    if (none)
        c->save_points_count = 0;
    const char *why = config_save_set(c, w, nw, *save_seen);
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    *save_seen = true;
    return 0;
}

static int config_directive(struct config *c, char words[][1024], int n, bool *save_seen, char *err,
                            size_t errlen)
{
    const struct config_key *k = config_find(words[0], strlen(words[0]));
    if (!k) {
        snprintf(err, errlen, "Bad directive or wrong number of arguments");
        return -1;
    }
    if (k->type == CT_SAVE && n >= 2)
        return config_save_directive(c, words, n, save_seen, err, errlen);
    struct resp_arg vals[CONFIG_MAX_BIND + 1];
    int nvals = n - 1;
    if (nvals < 1 || nvals > CONFIG_MAX_BIND) {
        snprintf(err, errlen, "wrong number of arguments for '%s'", k->name);
        return -1;
    }
    for (int i = 0; i < nvals; i++) {
        vals[i].ptr = words[i + 1];
        vals[i].len = strlen(words[i + 1]);
    }
    char buf[160];
    const char *why = config_apply(c, k, vals, nvals, buf, sizeof(buf));
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}

static void config_fatal_line(char *err, size_t errlen, const char *where, int lineno, const char *line,
                              const char *why)
{
    snprintf(err, errlen,
             "\n*** FATAL CONFIG FILE ERROR (percore %s) ***\n"
             "Reading the configuration %s, at line %d\n>>> '%s'\n%s",
             PERCORE_VERSION, where, lineno, line, why);
}

static int config_load_text(struct config *c, FILE *f, const char *where, bool *save_seen, char *err,
                            size_t errlen)
{
    static char words[CONFIG_MAX_BIND + 2][1024];
    char line[4096];
    int lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        const char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '#' || *p == '\0')
            continue;
        bool bad_quotes;
        int n = config_split_line(p, words, CONFIG_MAX_BIND + 2, &bad_quotes);
        char why[256];
        if (n < 0) {
            config_fatal_line(err, errlen, where, lineno, line,
                              bad_quotes ? "Unbalanced quotes in configuration line"
                                         : "Too many arguments");
            return -1;
        }
        if (config_directive(c, words, n, save_seen, why, sizeof(why)) < 0) {
            config_fatal_line(err, errlen, where, lineno, line, why);
            return -1;
        }
    }
    return 0;
}

static void config_defaults(struct config *c)
{
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < CONFIG_KEY_COUNT; i++) {
        const struct config_key *k = &config_keys[i];
        struct resp_arg v = {k->dflt, strlen(k->dflt)};
        char buf[160];
        config_apply(c, k, &v, 1, buf, sizeof(buf));
    }
}

static void config_default_slot_table(struct config *c)
{
    for (unsigned s = 0; s < SLOT_COUNT; s++)
        c->slot_shard[s] = (uint16_t)((unsigned long)s * (unsigned long)c->threads / SLOT_COUNT);
}

/*
 * threads 0: one shard per cpu this process may run on, except on a machine
 * of AUTO_THREADS_SMALL cpus or fewer, which gets one shard.  There the
 * clients, and the kernel's work for their sockets, run on the shards' cores,
 * and a hop to a second shard costs more than that shard's core gives: a
 * cross-shard request wakes a thread on the other cpu (measured on 2 cpus:
 * twice the server CPU per GET, 0.6-0.8x Redis's req/s; one shard is ahead
 * of Redis).  Per-core shards pay where each has a core to itself.
 */
#define AUTO_THREADS_SMALL 2
int config_threads_for_cpus(int cpus)
{
    if (cpus <= AUTO_THREADS_SMALL)
        return 1;
    return cpus > CONFIG_MAX_THREADS ? CONFIG_MAX_THREADS : cpus;
}

/* threads 0 here: the cpus this process may run on, and the shards for them */
static int config_auto_threads(int *cpus)
{
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
    *cpus = n < 1 ? 1 : (int)n;
    return config_threads_for_cpus(*cpus);
}

int config_setup(int argc, char **argv, char *err, size_t errlen)
{
    struct config_box *box = mem_calloc(1, sizeof(*box));
    struct config *c = &box->config;
    config_defaults(c);
    bool save_seen = false; /* a `save` line was read: the next ones add to it */
    int i = 1;
    if (argc > 1 && argv[1][0] != '-') {
        FILE *f = fopen(argv[1], "r");
        if (!f) {
            snprintf(err, errlen, "Fatal error, can't open config file '%s': %s", argv[1], strerror(errno));
            goto fail;
        }
        int rc = config_load_text(c, f, "file", &save_seen, err, errlen);
        fclose(f);
        if (rc < 0)
            goto fail;
        char *abs = realpath(argv[1], NULL);
        c->config_file = mem_strndup(abs ? abs : argv[1], strlen(abs ? abs : argv[1]));
        free(abs);
        i = 2;
    }
    /* --key value [value...] pairs become conf lines, as redis-server does */
    char line[8192];
    size_t off = 0;
    line[0] = '\0';
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] == '-' && a[2]) {
            if (off)
                off += (size_t)snprintf(line + off, sizeof(line) - off, "\n");
            off += (size_t)snprintf(line + off, sizeof(line) - off, "%s", a + 2);
        } else {
            if (!off) {
                snprintf(err, errlen, "Invalid option '%s': options are --key value", a);
                goto fail;
            }
            /* quote each value so spaces survive */
            off += (size_t)snprintf(line + off, sizeof(line) - off, " \"");
            for (const char *q = a; *q && off < sizeof(line) - 4; q++) {
                if (*q == '"' || *q == '\\')
                    line[off++] = '\\';
                line[off++] = *q;
            }
            off += (size_t)snprintf(line + off, sizeof(line) - off, "\"");
        }
        if (off >= sizeof(line) - 8) {
            snprintf(err, errlen, "command line too long");
            goto fail;
        }
    }
    if (off) {
        FILE *f = fmemopen(line, off, "r");
        int rc = config_load_text(c, f, "command line", &save_seen, err, errlen);
        fclose(f);
        if (rc < 0)
            goto fail;
    }
    if (c->threads == 0)
        c->threads = config_auto_threads(&c->threads_auto_cpus);
    if (c->cluster_ports && config_cluster_port(c, c->threads - 1) > 65535) {
        snprintf(err, errlen, "cluster ports %d..%d: past 65535 (lower cluster-port-base or threads)",
                 config_cluster_port(c, 0), config_cluster_port(c, c->threads - 1));
        goto fail;
    }
    config_default_slot_table(c);
    config_publish(c);
    return 0;
fail:
    config_box_free(box);
    return -1;
}

void config_teardown(void)
{
    struct config *c = config_published;
    if (!c)
        return;
    config_publish(NULL);
    config_box_free(caa_container_of(c, struct config_box, config));
}

int config_cluster_port(const struct config *cfg, int shard)
{
    return (cfg->cluster_port_base ? cfg->cluster_port_base : cfg->port + 1) + shard;
}

/*
 * As Redis 7.0: a pattern without glob characters is looked up directly and
 * answered under the name as the client wrote it; a glob matches the
 * canonical names; each key is answered once.
 */
void config_get_reply(struct reply *out, const struct resp_arg *patterns, int n)
{
    const struct config *c = config_current();
    const struct resp_arg *shown[CONFIG_KEY_COUNT] = {NULL};
    bool matched[CONFIG_KEY_COUNT] = {false};
    size_t count = 0;
    for (int p = 0; p < n; p++) {
        const struct resp_arg *pat = &patterns[p];
        bool glob = memchr(pat->ptr, '*', pat->len) || memchr(pat->ptr, '?', pat->len) ||
                    memchr(pat->ptr, '[', pat->len);
        for (size_t i = 0; i < CONFIG_KEY_COUNT; i++) {
            const char *name = config_keys[i].name;
            if (matched[i])
                continue;
            if (glob ? util_glob_match(pat->ptr, pat->len, name, strlen(name), true)
                     : (strlen(name) == pat->len && util_eq_nocase(pat->ptr, pat->len, name))) {
                matched[i] = true;
                shown[i] = glob ? NULL : pat;
                count++;
            }
        }
    }
    reply_map(out, (long long)count);
    char buf[1024];
    for (size_t i = 0; i < CONFIG_KEY_COUNT; i++) {
        if (!matched[i])
            continue;
        if (shown[i])
            reply_bulk(out, shown[i]->ptr, shown[i]->len);
        else
            reply_bulk_cstr(out, config_keys[i].name);
        config_format(c, &config_keys[i], buf, sizeof(buf));
        reply_bulk_cstr(out, buf);
    }
}

/* the same list of addresses */
static bool config_bind_equal(const struct config *a, const struct config *b)
{
    if (a->bind_count != b->bind_count)
        return false;
    for (int i = 0; i < a->bind_count; i++)
        if (strcmp(a->bind[i], b->bind[i]) != 0)
            return false;
    return true;
}

bool config_set_reply(struct reply *out, const struct resp_arg *args, int n, config_apply_fn *apply, void *arg)
{
    const struct config_key *keys[CONFIG_KEY_COUNT];
    int npairs = n / 2;
    for (int i = 0; i < npairs; i++) {
        const struct config_key *k = config_find(args[2 * i].ptr, args[2 * i].len);
        if (!k) {
            reply_errorf(out, "ERR Unknown option or number of arguments for CONFIG SET - '%.*s'",
                         (int)args[2 * i].len, args[2 * i].ptr);
            return false;
        }
        for (int j = 0; j < i; j++) {
            if (keys[j] == k) {
                reply_errorf(out, "ERR CONFIG SET failed (possibly related to argument '%.*s') - "
                                  "duplicate parameter",
                             (int)args[2 * i].len, args[2 * i].ptr);
                return false;
            }
        }
        if (!k->runtime) {
            reply_errorf(out, "ERR CONFIG SET failed (possibly related to argument '%.*s') - "
                              "can't set %s config",
                         (int)args[2 * i].len, args[2 * i].ptr, strcmp(k->name, "dir") == 0 || strcmp(k->name, "dbfilename") == 0 ? "protected" : "immutable");
            return false;
        }
        keys[i] = k;
    }
    pthread_mutex_lock(&config_writer);
    struct config_box *box = config_copy(config_current());
    const char *why = NULL;
    char buf[160]; /* why may be in it */
    int failed = 0; /* the pair why is about */
    for (int i = 0; i < npairs && !why; i++) {
        why = config_apply(&box->config, keys[i], &args[2 * i + 1], 1, buf, sizeof(buf));
        failed = i;
    }
    bool applied = false;
    for (int i = 0; i < npairs && !why && apply; i++) {
        if (keys[i]->type == CT_BIND && !config_bind_equal(config_published, &box->config)) {
            why = apply(config_published, &box->config, arg);
            applied = why == NULL;
            failed = i;
        }
    }
    if (why) {
        pthread_mutex_unlock(&config_writer);
        reply_errorf(out, "ERR CONFIG SET failed (possibly related to argument '%.*s') - %s",
                     (int)args[2 * failed].len, args[2 * failed].ptr, why);
        config_box_free(box);
        return false;
    }
    config_box_publish(box);
    if (!applied)
        reply_ok(out);
    return applied;
}

int config_set_internal(const char *name, const char *value)
{
    const struct config_key *k = config_find(name, strlen(name));
    if (!k)
        return -1;
    struct resp_arg v = {value, strlen(value)};
    char buf[160];
    pthread_mutex_lock(&config_writer);
    struct config_box *box = config_copy(config_current());
    if (config_apply(&box->config, k, &v, 1, buf, sizeof(buf)) != NULL) {
        pthread_mutex_unlock(&config_writer);
        config_box_free(box);
        return -1;
    }
    config_box_publish(box);
    return 0;
}

/* ---------------------------------------------------------------- CONFIG REWRITE */

#define CONFIG_REWRITE_SIGNATURE "# Generated by CONFIG REWRITE"

/* the key a file name stands for: an alias (hash-max-ziplist-*) is its first spelling in the table */
static const struct config_key *config_canonical(const struct config_key *k)
{
    for (size_t i = 0; i < CONFIG_KEY_COUNT; i++)
        if (config_keys[i].offset == k->offset && config_keys[i].type == k->type)
            return &config_keys[i];
    return k;
}

/* `name value` as a conf line; strings quoted and escaped (Redis sdscatrepr), so they read back */
static void config_rewrite_line(struct reply *line, const struct config *c, const struct config_key *k)
{
    char value[1024];
    config_format(c, k, value, sizeof(value));
    reply_clear(line);
    if (k->type == CT_SAVE) { /* as Redis's rewriteConfigSaveOption: a line per point, or save "" */
        char one[64];
        for (int i = 0; i < c->save_points_count; i++)
            reply_raw(line, one, (size_t)snprintf(one, sizeof one, "%ssave %lld %d", i ? "\n" : "",
                                                  c->save_points[i].seconds, c->save_points[i].changes));
        if (c->save_points_count == 0)
            reply_raw(line, "save \"\"", 7);
        return;
    }
    reply_raw(line, k->name, strlen(k->name));
    reply_raw(line, " ", 1);
    if (k->type != CT_STRING) {
        reply_raw(line, value, strlen(value));
        return;
    }
    reply_raw(line, "\"", 1);
    for (const char *p = value; *p; p++) {
        const char *esc = *p == '\\' ? "\\\\" : *p == '"' ? "\\\"" : *p == '\n' ? "\\n" : *p == '\r' ? "\\r"
                        : *p == '\t' ? "\\t" : NULL;
        if (esc)
            reply_raw(line, esc, 2);
        else
            reply_raw(line, p, 1);
    }
    reply_raw(line, "\"", 1);
}

/* content -> a temporary file beside path -> fsync -> rename over path */
static int config_rewrite_write(const char *path, const char *content, size_t len, char *err, size_t errlen)
{
    size_t plen = strlen(path);
    char *tmp = mem_alloc(plen + 16);
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp-XXXXXX", 12);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        mem_release(tmp);
        return -1;
    }
    struct stat st;
    mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
    size_t off = 0;
    int rc = 0;
    while (off < len && rc == 0) {
        ssize_t n = write(fd, content + off, len - off);
        if (n < 0 && errno != EINTR)
            rc = -1;
        else if (n > 0)
            off += (size_t)n;
    }
    if (rc == 0 && (fchmod(fd, mode) < 0 || fsync(fd) < 0))
        rc = -1;
    if (rc < 0)
        snprintf(err, errlen, "%s", strerror(errno));
    close(fd);
    if (rc == 0 && rename(tmp, path) < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        rc = -1;
    }
    if (rc < 0)
        unlink(tmp);
    mem_release(tmp);
    return rc;
}

/*
 * As Redis's rewriteConfig: every line of the old file is kept in its place
 * (comments, blank lines, lines this server cannot read) except the lines of
 * known keys, which take the current value (a repeated key's extra lines
 * are dropped); keys not in the file whose value differs from the default
 * are appended after the "# Generated by CONFIG REWRITE" line.  Runs of
 * empty lines shrink to one.
 */
int config_rewrite(char *err, size_t errlen)
{
    static char words[CONFIG_MAX_BIND + 2][1024];
    pthread_mutex_lock(&config_writer); /* one rewrite at a time, of the latest config */
    const struct config *c = config_current();
    if (!c->config_file || !c->config_file[0]) {
        pthread_mutex_unlock(&config_writer);
        snprintf(err, errlen, "The server is running without a config file");
        return -1;
    }
    struct config *dflt = mem_calloc(1, sizeof(*dflt));
    config_defaults(dflt);
    bool done[CONFIG_KEY_COUNT] = {false};
    bool signature = false, was_empty = false;
    struct reply out, line;
    reply_init(&out);
    reply_init(&line);
    FILE *f = fopen(c->config_file, "r");
    char buf[4096];
    while (f && fgets(buf, sizeof(buf), f)) {
        buf[strcspn(buf, "\r\n")] = '\0';
        const char *p = buf;
        while (isspace((unsigned char)*p))
            p++;
        bool bad;
        const struct config_key *k = NULL;
        if (*p && *p != '#' && config_split_line(p, words, CONFIG_MAX_BIND + 2, &bad) > 0)
            k = config_find(words[0], strlen(words[0]));
        if (k) {
            k = config_canonical(k);
            size_t i = (size_t)(k - config_keys);
            if (done[i])
                continue; /* a repeated key: its first line has the value */
            done[i] = true;
            config_rewrite_line(&line, c, k);
            p = line.buf;
        } else {
            signature |= strcmp(buf, CONFIG_REWRITE_SIGNATURE) == 0;
            p = buf;
        }
        bool empty = !k && *p == '\0';
        if (empty && was_empty)
            continue;
        was_empty = empty;
        reply_raw(&out, p, k ? line.len : strlen(p));
        reply_raw(&out, "\n", 1);
    }
    if (f)
        fclose(f);
    char now[1024], was[1024];
    for (size_t i = 0; i < CONFIG_KEY_COUNT; i++) {
        const struct config_key *k = &config_keys[i];
        if (done[i] || config_canonical(k) != k)
            continue;
        config_format(c, k, now, sizeof(now));
        config_format(dflt, k, was, sizeof(was));
        if (strcmp(now, was) == 0 && k->type != CT_SAVE) /* Redis always writes its save lines */
            continue;
        if (!signature) {
            reply_raw(&out, CONFIG_REWRITE_SIGNATURE "\n", sizeof(CONFIG_REWRITE_SIGNATURE));
            signature = true;
        }
        config_rewrite_line(&line, c, k);
        reply_raw(&out, line.buf, line.len);
        reply_raw(&out, "\n", 1);
    }
    int rc = config_rewrite_write(c->config_file, out.buf ? out.buf : "", out.len, err, errlen);
    pthread_mutex_unlock(&config_writer);
    reply_deinit(&out);
    reply_deinit(&line);
    config_free_strings(dflt);
    mem_release(dflt);
    return rc;
}

void config_print_help(void)
{
    printf("Usage: percore-server [/path/to/percore.conf] [--key value ...]\n"
           "       percore-server --version | --help\n\n"
           "Config keys (conf file `key value`, or `--key value`); * = CONFIG SET works at runtime:\n");
    for (size_t i = 0; i < CONFIG_KEY_COUNT; i++) {
        const struct config_key *k = &config_keys[i];
        printf("  %-27s %c default %-11s %s\n", k->name, k->runtime ? '*' : ' ',
               k->dflt[0] ? k->dflt : "\"\"", k->help);
    }
}
