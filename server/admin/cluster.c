/*
 * cluster (commands): CLUSTER SLOTS / SHARDS / NODES / INFO / MYID / KEYSLOT /
 * COUNTKEYSINSLOT / GETKEYSINSLOT, and READONLY / READWRITE / ASKING, in
 * Redis 7.0's reply formats (include/percore/cluster.h).
 *
 * The cluster they describe is the shards: shard i is a master with node id
 * cluster_node_id(i), config epoch i + 1, reached at the address the client
 * used and port config_cluster_port(i), serving the slot ranges the slot table
 * gives it, every link up, no replicas.  The answering node (`myself`) is
 * the connection's shard on a cluster port, shard 0 on the main port.  There
 * is no cluster bus: NODES gives the bus port as 0 and INFO counts no bus
 * messages.  With cluster-ports no every one of them answers Redis's
 * "cluster support disabled".
 *
 * The handlers are the subcommands of server.c's CLUSTER container (whose
 * table gives arity and flags), so they run on the home shard (ROUTE_HOME).
 * COUNTKEYSINSLOT and GETKEYSINSLOT read keys: on a cluster port those of
 * the connection's own shard, as a node answers for itself; on the main port
 * the owner's, through a fan-out (conn_fanout) in which only the slot's
 * owner looks and the others answer empty.  Both walk the owner's whole
 * database 0, O(keys of that shard), as KEYS does: percore keeps no per-slot
 * key index (it would cost a CRC16 and a list update on every insert and
 * delete), and these are admin commands of resharding, which percore does
 * not do.
 */
#include "percore/cluster.h"

#include "admin_families.h"
#include "percore/command.h"
#include "percore/config.h"
#include "percore/conn.h"
#include "percore/reply.h"
#include "percore/shard.h"
#include "percore/slot.h"
#include "percore/store.h"
#include "percore/util.h"

#include <stdio.h>

bool cluster_enabled_or_reply(struct cmd_ctx *ctx)
{
    if (ctx->config->cluster_ports)
        return true;
    reply_error(ctx->out, "ERR This instance has cluster support disabled");
    return false;
}

/* the node answering: the connection's shard on a cluster port, else shard 0 */
static int cluster_myself(const struct cmd_ctx *ctx)
{
    int node = cluster_conn_node(ctx->conn);
    return node >= 0 ? node : 0;
}

/* the slot ranges of one shard, or of all in slot order: fn(arg, shard, first, last) for each */
typedef void slot_range_fn(void *arg, int shard, int first, int last);

static long long for_each_range(const struct config *cfg, int only_shard, slot_range_fn *fn, void *arg)
{
    long long n = 0;
    int first = 0;
    for (int s = 1; s <= SLOT_COUNT; s++) {
        if (s < SLOT_COUNT && cfg->slot_shard[s] == cfg->slot_shard[first])
            continue;
        int shard = cfg->slot_shard[first];
        if (only_shard < 0 || shard == only_shard) {
            if (fn)
                fn(arg, shard, first, s - 1);
            n++;
        }
        first = s;
    }
    return n;
}

/* what the slot-range writers need */
struct range_out {
    struct cmd_ctx *ctx;
    struct reply *out;
    const char *ip;
};

/* ---------------------------------------------------------------- SLOTS */

static void slots_range(void *arg, int shard, int first, int last)
{
    struct range_out *r = arg;
    char id[CLUSTER_NODE_ID_LEN + 1];
    cluster_node_id(shard, id);
    reply_array(r->out, 3);
    reply_int(r->out, first);
    reply_int(r->out, last);
    reply_array(r->out, 4); /* ip, port, id, metadata (Redis 7.0 clusterReplyMultiBulkSlots) */
    reply_bulk_cstr(r->out, r->ip);
    reply_int(r->out, config_cluster_port(r->ctx->config, shard));
    reply_bulk(r->out, id, CLUSTER_NODE_ID_LEN);
    reply_map(r->out, 0);
}

void cmd_cluster_slots(struct cmd_ctx *ctx)
{
    if (!cluster_enabled_or_reply(ctx))
        return;
    char ip[64];
    cluster_conn_ip(ctx->conn, ip, sizeof(ip));
    struct range_out r = {ctx, ctx->out, ip};
    reply_array(ctx->out, for_each_range(ctx->config, -1, NULL, NULL));
    for_each_range(ctx->config, -1, slots_range, &r);
}

/* ---------------------------------------------------------------- SHARDS */

static void shards_range(void *arg, int shard, int first, int last)
{
    struct range_out *r = arg;
    (void)shard;
    reply_int(r->out, first);
    reply_int(r->out, last);
}

void cmd_cluster_shards(struct cmd_ctx *ctx)
{
    if (!cluster_enabled_or_reply(ctx))
        return;
    char ip[64];
    cluster_conn_ip(ctx->conn, ip, sizeof(ip));
    struct range_out r = {ctx, ctx->out, ip};
    int n = shard_count();
    reply_array(ctx->out, n);
    for (int shard = 0; shard < n; shard++) {
        char id[CLUSTER_NODE_ID_LEN + 1];
        cluster_node_id(shard, id);
        reply_map(ctx->out, 2);
        reply_bulk_cstr(ctx->out, "slots");
        reply_array(ctx->out, 2 * for_each_range(ctx->config, shard, NULL, NULL));
        for_each_range(ctx->config, shard, shards_range, &r);
        reply_bulk_cstr(ctx->out, "nodes");
        reply_array(ctx->out, 1);
        reply_map(ctx->out, 7); /* Redis 7.0 addNodeDetailsToShardReply, no hostname */
        reply_bulk_cstr(ctx->out, "id");
        reply_bulk(ctx->out, id, CLUSTER_NODE_ID_LEN);
        reply_bulk_cstr(ctx->out, "port");
        reply_int(ctx->out, config_cluster_port(ctx->config, shard));
        reply_bulk_cstr(ctx->out, "ip");
        reply_bulk_cstr(ctx->out, ip);
        reply_bulk_cstr(ctx->out, "endpoint");
        reply_bulk_cstr(ctx->out, ip);
        reply_bulk_cstr(ctx->out, "role");
        reply_bulk_cstr(ctx->out, "master");
        reply_bulk_cstr(ctx->out, "replication-offset");
        reply_int(ctx->out, 0);
        reply_bulk_cstr(ctx->out, "health");
        reply_bulk_cstr(ctx->out, "online");
    }
}

/* ---------------------------------------------------------------- NODES */

static void nodes_range(void *arg, int shard, int first, int last)
{
    struct range_out *r = arg;
    (void)shard;
    char buf[32];
    int n = first == last ? snprintf(buf, sizeof(buf), " %d", first)
                          : snprintf(buf, sizeof(buf), " %d-%d", first, last);
    reply_raw(r->out, buf, (size_t)n);
}

void cmd_cluster_nodes(struct cmd_ctx *ctx)
{
    if (!cluster_enabled_or_reply(ctx))
        return;
    char ip[64];
    cluster_conn_ip(ctx->conn, ip, sizeof(ip));
    struct reply text;
    reply_init(&text);
    struct range_out r = {ctx, &text, ip};
    int myself = cluster_myself(ctx);
    for (int shard = 0; shard < shard_count(); shard++) {
        char id[CLUSTER_NODE_ID_LEN + 1], line[256];
        cluster_node_id(shard, id);
        /* <id> <ip:port@cport> <flags> <master> <ping-sent> <pong-recv> <config-epoch> <link-state> <slot>... */
        int n = snprintf(line, sizeof(line), "%s %s:%d@0 %s - 0 %lld %d connected", id, ip,
                         config_cluster_port(ctx->config, shard), shard == myself ? "myself,master" : "master",
                         (long long)ctx->now, shard + 1);
        reply_raw(&text, line, (size_t)n);
        for_each_range(ctx->config, shard, nodes_range, &r);
        reply_raw(&text, "\n", 1);
    }
    reply_verbatim(ctx->out, text.buf ? text.buf : "", text.len, "txt");
    reply_deinit(&text);
}

/* ---------------------------------------------------------------- INFO MYID KEYSLOT */

void cmd_cluster_info(struct cmd_ctx *ctx)
{
    if (!cluster_enabled_or_reply(ctx))
        return;
    int nodes = shard_count();
    int serving = 0;
    for (int shard = 0; shard < nodes; shard++)
        serving += for_each_range(ctx->config, shard, NULL, NULL) > 0;
    char text[1024];
    int n = snprintf(text, sizeof(text),
                     "cluster_state:ok\r\n"
                     "cluster_slots_assigned:%d\r\n"
                     "cluster_slots_ok:%d\r\n"
                     "cluster_slots_pfail:0\r\n"
                     "cluster_slots_fail:0\r\n"
                     "cluster_known_nodes:%d\r\n"
                     "cluster_size:%d\r\n"
                     "cluster_current_epoch:%d\r\n"
                     "cluster_my_epoch:%d\r\n"
                     "cluster_stats_messages_sent:0\r\n"
                     "cluster_stats_messages_received:0\r\n"
                     "total_cluster_links_buffer_limit_exceeded:0\r\n",
                     SLOT_COUNT, SLOT_COUNT, nodes, serving, nodes, cluster_myself(ctx) + 1);
    reply_verbatim(ctx->out, text, (size_t)n, "txt");
}

void cmd_cluster_myid(struct cmd_ctx *ctx)
{
    if (!cluster_enabled_or_reply(ctx))
        return;
    char id[CLUSTER_NODE_ID_LEN + 1];
    cluster_node_id(cluster_myself(ctx), id);
    reply_bulk(ctx->out, id, CLUSTER_NODE_ID_LEN);
}

void cmd_cluster_keyslot(struct cmd_ctx *ctx)
{
    if (!cluster_enabled_or_reply(ctx))
        return;
    reply_int(ctx->out, slot_of_key(ctx->argv[2].ptr, ctx->argv[2].len));
}

/* ---------------------------------------------------------------- COUNTKEYSINSLOT GETKEYSINSLOT */

struct slot_keys {
    unsigned slot;
    long long max;       /* keys wanted, -1: count them only */
    long long found;
    struct reply keys;   /* the bulk strings of the keys found */
};

static void slot_keys_collect(void *arg, const char *key, size_t klen, struct object *val)
{
    (void)val;
    struct slot_keys *sk = arg;
    if ((sk->max < 0 || sk->found < sk->max) && slot_of_key(key, klen) == sk->slot) {
        sk->found++;
        if (sk->max >= 0)
            reply_bulk(&sk->keys, key, klen);
    }
}

/* the running shard's keys of `slot` in database 0: their count (max -1) or up to max of them */
static void reply_slot_keys(struct cmd_ctx *ctx, unsigned slot, long long max)
{
    struct slot_keys sk = {.slot = slot, .max = max};
    reply_init(&sk.keys);
    sk.keys.resp = ctx->out->resp;
    if (ctx->config->slot_shard[slot] == ctx->shard) { /* another's slot: none of its keys are here */
        uint64_t cursor = 0;
        do
            cursor = store_scan(ctx->store, 0, cursor, 1024, ctx->now, slot_keys_collect, &sk);
        while (cursor != 0 && (max < 0 || sk.found < max));
    }
    if (max < 0) {
        reply_int(ctx->out, sk.found);
    } else {
        reply_array(ctx->out, sk.found);
        reply_raw(ctx->out, sk.keys.buf, sk.keys.len);
    }
    reply_deinit(&sk.keys);
}

/* `__slotkeys <slot> <max>` on every shard: the owner answers, the others an empty reply */
static void cmd_slotkeys_part(struct cmd_ctx *ctx)
{
    long long slot = 0, max = 0;
    util_str_to_ll(ctx->argv[1].ptr, ctx->argv[1].len, &slot);
    util_str_to_ll(ctx->argv[2].ptr, ctx->argv[2].len, &max);
    reply_slot_keys(ctx, (unsigned)slot, max);
}

static const struct command slotkeys_part_command = {
    "__slotkeys", cmd_slotkeys_part, 3, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, "",
};

/* the fan-out's reply is the owner's part */
static void slotkeys_merge(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                           const char *const *parts, const size_t *lens)
{
    (void)argc, (void)nparts;
    long long slot = 0;
    util_str_to_ll(argv[1].ptr, argv[1].len, &slot);
    int owner = config_current()->slot_shard[slot];
    reply_raw(out, parts[owner], lens[owner]);
}

/* on a cluster port this shard's keys, on the main port the owner's */
static void slot_keys(struct cmd_ctx *ctx, long long slot, long long max)
{
    if (cluster_conn_node(ctx->conn) >= 0) {
        reply_slot_keys(ctx, (unsigned)slot, max);
        return;
    }
    char slot_arg[24], max_arg[24];
    struct resp_arg argv[3] = {
        {"__slotkeys", 10},
        {slot_arg, (size_t)util_ll_to_str(slot_arg, slot)},
        {max_arg, (size_t)util_ll_to_str(max_arg, max)},
    };
    conn_fanout(ctx->conn, &slotkeys_part_command, 3, argv, slotkeys_merge);
}

void cmd_cluster_countkeysinslot(struct cmd_ctx *ctx)
{
    if (!cluster_enabled_or_reply(ctx))
        return;
    long long slot;
    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &slot))
        return;
    if (slot < 0 || slot >= SLOT_COUNT) {
        reply_error(ctx->out, "ERR Invalid slot");
        return;
    }
    slot_keys(ctx, slot, -1);
}

void cmd_cluster_getkeysinslot(struct cmd_ctx *ctx)
{
    if (!cluster_enabled_or_reply(ctx))
        return;
    long long slot, max;
    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &slot) || !cmd_get_ll_or_reply(ctx, &ctx->argv[3], &max))
        return;
    if (slot < 0 || slot >= SLOT_COUNT || max < 0) {
        reply_error(ctx->out, "ERR Invalid slot or number of keys");
        return;
    }
    slot_keys(ctx, slot, max);
}

/* ---------------------------------------------------------------- READONLY READWRITE ASKING */

/*
 * Replica reads and slot migration do not exist here (every node is a
 * master that owns its slots for good): acknowledged, as cluster clients
 * send them on connect.
 */
static void cmd_cluster_ack(struct cmd_ctx *ctx)
{
    if (cluster_enabled_or_reply(ctx))
        reply_ok(ctx->out);
}

const struct command command_family_cluster[] = {
    {"readonly", cmd_cluster_ack, 1, CMD_FAST | CMD_LOADING | CMD_STALE, 0, 0, 0, ROUTE_HOME, "@fast @connection"},
    {"readwrite", cmd_cluster_ack, 1, CMD_FAST | CMD_LOADING | CMD_STALE, 0, 0, 0, ROUTE_HOME, "@fast @connection"},
    {"asking", cmd_cluster_ack, 1, CMD_FAST, 0, 0, 0, ROUTE_HOME, "@fast @connection"},
};

const size_t command_family_cluster_count = sizeof command_family_cluster / sizeof command_family_cluster[0];
