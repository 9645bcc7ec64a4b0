/*
 * config: the server's configuration, read-mostly, published with userspace
 * RCU (urcu-qsbr).
 *
 * One immutable struct config is current at any time.  Shard threads read it
 * with config_current() (an rcu_ptr_read; no lock) and may keep the
 * pointer until their next quiescent state, i.e. for the rest of the loop
 * turn.  CONFIG SET builds a modified copy under a writer mutex (never on the
 * command path), publishes it (rcu_ptr.h) and frees the old one
 * after a grace period (call_rcu).
 *
 * Keys follow redis.conf: `name value...` lines, '#' comments, quoted
 * values; the same keys work as `--name value` on the command line.
 */
#ifndef PERCORE_CONFIG_H
#define PERCORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "percore/rcu_ptr.h"
#include "percore/reply.h"
#include "percore/resp.h"
#include "percore/slot.h"

#define CONFIG_MAX_BIND 16
#define CONFIG_MAX_THREADS 1024

enum loglevel { LOG_DEBUG = 0, LOG_VERBOSE, LOG_NOTICE, LOG_WARNING };

/* maxmemory-policy, in the order Redis 7.0 lists the names */
enum maxmemory_policy {
    MAXMEMORY_VOLATILE_LRU = 0,
    MAXMEMORY_VOLATILE_LFU,
    MAXMEMORY_VOLATILE_RANDOM,
    MAXMEMORY_VOLATILE_TTL,
    MAXMEMORY_ALLKEYS_LRU,
    MAXMEMORY_ALLKEYS_LFU,
    MAXMEMORY_ALLKEYS_RANDOM,
    MAXMEMORY_NOEVICTION,
};

/* client-output-buffer-limit classes */
enum obuf_class { OBUF_NORMAL = 0, OBUF_REPLICA, OBUF_PUBSUB, OBUF_CLASSES };

struct obuf_limit {
    long long hard;        /* bytes, 0 = none: past it the client is disconnected */
    long long soft;        /* bytes, 0 = none ... */
    long long soft_seconds; /* ... when over it for this long */
};

#define CONFIG_MAX_PERCENTILES 16
/* save points a config holds (Redis has no limit; more than this is refused with a clear error) */
#define CONFIG_MAX_SAVE_POINTS 64

/* one `save <seconds> <changes>` point: a BGSAVE once both are reached (Redis's struct saveparam) */
struct config_save_point {
    long long seconds;
    int changes;
};

/* Redis's keyspace event classes, the same bits (notify-keyspace-events letters) */
enum {
    NOTIFY_KEYSPACE = 1 << 0,  /* K */
    NOTIFY_KEYEVENT = 1 << 1,  /* E */
    NOTIFY_GENERIC = 1 << 2,   /* g */
    NOTIFY_STRING = 1 << 3,    /* $ */
    NOTIFY_LIST = 1 << 4,      /* l */
    NOTIFY_SET = 1 << 5,       /* s */
    NOTIFY_HASH = 1 << 6,      /* h */
    NOTIFY_ZSET = 1 << 7,      /* z */
    NOTIFY_EXPIRED = 1 << 8,   /* x */
    NOTIFY_EVICTED = 1 << 9,   /* e */
    NOTIFY_STREAM = 1 << 10,   /* t */
    NOTIFY_KEY_MISS = 1 << 11, /* m */
    NOTIFY_LOADED = 1 << 12,   /* (modules only) */
    NOTIFY_MODULE = 1 << 13,   /* d */
    NOTIFY_NEW = 1 << 14,      /* n */
    NOTIFY_ALL = NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH | NOTIFY_ZSET |
                 NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE, /* A */
};

/* appendfsync, in Redis's names' order */
enum config_appendfsync { APPENDFSYNC_ALWAYS, APPENDFSYNC_EVERYSEC, APPENDFSYNC_NO };
/* enable-debug-command (Redis's PROTECTED_ACTION_ALLOWED_*) */
enum config_protected_action { PROTECTED_ACTION_NO, PROTECTED_ACTION_YES, PROTECTED_ACTION_LOCAL };

struct config {
    /* network */
    char *bind[CONFIG_MAX_BIND];
    int bind_count;
    int port;
    int tcp_backlog;
    int tcp_keepalive;          /* seconds, 0 off */
    bool cluster_ports;         /* shard i also listens on its own port and speaks Redis Cluster there */
    int cluster_port_base;      /* shard i's cluster port is base + i; 0: port + 1 */
    /* threads and placement */
    int threads;                /* shard threads */
    int threads_auto_cpus;      /* threads 0: the cpus it was chosen for (0: threads was set) */
    char *cpu_list;             /* "0-3,8" or NULL: pin shard i to the i-th allowed cpu */
    /* keyspace */
    int databases;
    /* limits */
    long long proto_max_bulk_len;
    long long client_query_buffer_limit;
    int maxclients;
    int timeout;                /* idle client timeout, seconds, 0 off */
    int hz;                     /* shard timer frequency (active expiry) */
    char *requirepass;          /* NULL: no AUTH needed */
    /* replication (replica.h) */
    char *replicaof;            /* "host port" of the master, "" none (REPLICAOF sets it too) */
    char *masterauth;           /* the master's password, "" none */
    char *masteruser;           /* ... and user (AUTH user password), "" the default user */
    bool replica_read_only;     /* a replica refuses clients' writes (-READONLY) */
    bool replica_serve_stale_data; /* no: while its master's link is down, only "stale" commands run */
    int repl_timeout;           /* s without a byte from the master before its link is dropped */
    int replica_priority;       /* INFO slave_priority: Sentinel promotes the lowest, never 0 */
    bool replica_ignore_maxmemory; /* a replica neither evicts nor refuses past maxmemory */
    /* serving replicas (primary.h) */
    long long repl_backlog_size;   /* stream bytes kept for partial resyncs */
    int repl_ping_replica_period;  /* s between PINGs in the stream to the replicas */
    int min_replicas_to_write;     /* writes refused -NOREPLICAS with fewer good replicas, 0 off */
    int min_replicas_max_lag;      /* s since its last ACK for a replica to be good, 0 off */
    bool repl_diskless_sync;       /* Redis's; kept, unused: the RDB is always written first */
    int repl_diskless_sync_delay;  /* Redis's; kept, unused */
    long long maxmemory;        /* bytes over all shards, 0 no limit */
    enum maxmemory_policy maxmemory_policy;
    int maxmemory_samples;
    int lfu_log_factor;         /* LFU counter growth: 1 / ((counter - 5) * factor + 1) per access */
    int lfu_decay_time;         /* LFU: idle minutes per counter decrement, 0 never */
    struct obuf_limit obuf[OBUF_CLASSES];
    bool protected_mode;
    enum config_protected_action enable_debug_command; /* who may run DEBUG */
    /* observability */
    long long slowlog_log_slower_than; /* microseconds, -1 off, 0 every command */
    long long slowlog_max_len;
    long long busy_reply_threshold; /* ms a script runs before its shard answers -BUSY (lua-time-limit) */
    int stats_interval;         /* ms between two merges of the shards' stats */
    bool latency_tracking;
    unsigned notify_keyspace_events; /* NOTIFY_* classes (command.h) published as keyspace events, 0 none */
    long long tracking_table_max_keys; /* keys CLIENT TRACKING remembers (all shards), 0 no limit */
    double latency_percentiles[CONFIG_MAX_PERCENTILES];
    int latency_percentiles_count;
    int metrics_port;           /* Prometheus text endpoint, 0 off */
    /* collection encodings: compact below these sizes (Redis's names and defaults) */
    long long hash_max_listpack_entries;
    long long hash_max_listpack_value;
    int list_max_listpack_size;   /* > 0 entries per node, < 0 node size class (-2 = 8 KB) */
    int list_compress_depth;
    long long set_max_intset_entries;
    long long set_max_listpack_entries; /* Redis 7.2's listpack sets (7.0 has none) */
    long long set_max_listpack_value;
    long long zset_max_listpack_entries;
    long long zset_max_listpack_value;
    long long stream_node_max_bytes;   /* a stream node takes no entry that would bring it to this size */
    long long stream_node_max_entries; /* ... nor more entries than this (live and deleted) */
    long long hll_sparse_max_bytes; /* a sparse HyperLogLog past this many bytes turns dense (Redis's) */
    bool rdbcompression;        /* DUMP (RDB) strings over 20 bytes LZF-compressed when it pays */
    /* handoff */
    int inbox_size;             /* batches per shard inbox (power of two) */
    int handoff_credits;        /* remote batches a shard may have in flight */
    int idle_poll_us;           /* a busy shard pinned to its own cpu polls this long before sleeping */
    /* logging */
    enum loglevel loglevel;
    char *logfile;              /* "" or NULL: stdout */
    char *pidfile;
    char *dir;
    char *dbfilename;           /* the RDB file in dir, loaded at start */
    bool rdbchecksum;           /* RDB files carry a CRC64 (checked on load when non-zero) */
    struct config_save_point save_points[CONFIG_MAX_SAVE_POINTS]; /* `save`, in the order given */
    int save_points_count;      /* 0: no automatic saves (save "") */
    bool stop_writes_on_bgsave_error; /* with save points set, a failed BGSAVE refuses writes (-MISCONF) */
    bool appendonly;            /* the AOF (appenddirname) is what the start loads, not dbfilename */
    char *appenddirname;        /* the AOF folder in dir (a name, never a path) */
    char *appendfilename;       /* the AOF files' base name (a name, never a path) */
    bool aof_load_truncated;    /* an AOF cut short at its end loads up to its last whole command */
    enum config_appendfsync appendfsync; /* when the AOF's writes are fsynced (aof.h) */
    bool aof_use_rdb_preamble;  /* the AOF's base file is an RDB snapshot, else commands */
    int auto_aof_rewrite_percentage;     /* a rewrite once the AOF grew this many % (0 never)... */
    long long auto_aof_rewrite_min_size; /* ... and is over this many bytes */
    /* where the config was loaded from (CONFIG REWRITE, INFO config_file) */
    char *config_file;
    /* slot -> shard */
    uint16_t slot_shard[SLOT_COUNT];
};

/* load defaults, then the file (if any), then --key value pairs; 0 ok, -1 with err filled */
int config_setup(int argc, char **argv, char *err, size_t errlen);
void config_teardown(void);
/* threads 0 on a machine where this process may run on `cpus` cpus: one shard per cpu, but one in all on
 * 2 cpus or fewer (there the clients share the shards' cores and a hop costs more than a second shard gives) */
int config_threads_for_cpus(int cpus);

/* what config_current() reads: written only by config.c (rcu_ptr_publish) */
extern struct config *config_published;
/*
 * The current config; caller is an online RCU thread (or the main thread at
 * setup).  Inline, as the command path reads it a few times per request.
 */
static inline const struct config *config_current(void)
{
    return rcu_ptr_read(&config_published);
}
/* the cluster port (cluster-ports, cluster-port-base) of shard `shard` under cfg.  Any thread. */
int config_cluster_port(const struct config *cfg, int shard);

/* the server's own setting of a key (REPLICAOF's replicaof), whether or not CONFIG SET may change it;
 * 0 ok, -1 value refused.  Any RCU reader thread. */
int config_set_internal(const char *name, const char *value);
/* CONFIG GET pattern [pattern ...]: appends the map reply */
void config_get_reply(struct reply *out, const struct resp_arg *patterns, int n);
/*
 * CONFIG SET name value [name value ...]: all-or-nothing; appends +OK or the
 * error.  bind acts outside the config (Redis's apply functions): when its
 * addresses change, apply(now, next, arg) runs under the writer lock before
 * next is published, and answers NULL to go on, else the reason, and nothing
 * changes.  True when apply went on: the new config is out, and the caller
 * finishes what apply began and answers (nothing is appended).  apply NULL:
 * bind changes the config alone.
 */
typedef const char *config_apply_fn(const struct config *now, const struct config *next, void *arg);
bool config_set_reply(struct reply *out, const struct resp_arg *args, int n, config_apply_fn *apply, void *arg);
/*
 * CONFIG REWRITE: the current config into the file it was loaded from, in
 * place (Redis's rules: comments and order kept, changed keys' lines
 * replaced, new ones appended), through a temporary file renamed over it.
 * 0 ok; -1 with err = why ("The server is running without a config file",
 * or strerror).  Any RCU reader thread.
 */
int config_rewrite(char *err, size_t errlen);


/* "allkeys-lru", ... as CONFIG GET and INFO print it */
const char *config_maxmemory_policy_name(const struct config *c);
/* the encoding thresholds an RDB value is loaded with (RESTORE, the file at start) */
struct rdb_limits config_rdb_limits(const struct config *c);

/* --help text: every key with its default */
void config_print_help(void);

#endif
