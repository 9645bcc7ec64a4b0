/*
 * cluster: the shards seen through the Redis Cluster protocol
 * (`cluster-ports yes`).
 *
 * Every shard is presented as a cluster master: it serves the slots the
 * slot table gives it, has a node id, and has a port of its own (its
 * cluster port, cluster-port-base + index) on which only it listens.  A
 * connection accepted there talks to that shard as to a cluster node: a
 * command whose key another shard owns gets `-MOVED slot ip:port` naming
 * that shard's cluster port, keys of several slots get -CROSSSLOT, and
 * everything else runs on the shard itself, never through the handoff; the
 * keyspace-wide commands (DBSIZE, KEYS, SCAN, FLUSHALL, INFO keyspace, ...)
 * see that shard's keys only, as a node sees its own.  A cluster-aware
 * client thus sends every command straight to the core that owns its keys.
 *
 * The main port stays an ordinary server (any key from any connection).
 * CLUSTER SLOTS / SHARDS / NODES answer there too, so a cluster client
 * seeded with it finds the shard ports; as its `myself` it names shard 0.
 *
 * core/cluster.c holds the connection side (the redirect, node ids, ports),
 * cmd/cluster.c the CLUSTER command and READONLY / READWRITE / ASKING.
 */
#ifndef PERCORE_CLUSTER_H
#define PERCORE_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>

struct command;
struct config;
struct conn;
struct reply;
struct resp_arg;

#define CLUSTER_NODE_ID_LEN 40

/*
 * The node id of shard `shard` (CLUSTER_NODE_ID_LEN hex digits and a NUL
 * into id): random for each process, the same for its whole life.  Any
 * thread.
 */
void cluster_node_id(int shard, char id[CLUSTER_NODE_ID_LEN + 1]);

/* the shard a connection talks to as a cluster node: its home on a cluster
 * port, -1 on the main port.  The connection's thread. */
int cluster_conn_node(const struct conn *c);

/* the address the client connected to, without the port ("127.0.0.1"),
 * which the cluster replies give as every node's ip.  The connection's thread. */
void cluster_conn_ip(const struct conn *c, char *ip, size_t cap);

/*
 * Before a command from a cluster-port connection runs (dispatch.c): the
 * redirect or refusal a Redis Cluster node would answer instead of running
 * it (-CROSSSLOT, -MOVED, SELECT/SWAPDB/MOVE not allowed), written to out,
 * and true; false when the command runs here, on the connection's shard.
 * The connection's thread.
 */
bool cluster_refuse(const struct conn *c, const struct config *cfg, const struct command *cmd, int argc,
                    const struct resp_arg *argv, struct reply *out);

#endif
