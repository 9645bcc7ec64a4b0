/*
 * cluster (connection side): what makes a cluster-port connection talk to
 * its shard as a Redis Cluster node (include/percore/cluster.h).
 *
 * cluster_refuse runs before routing, for cluster-port connections only,
 * and follows Redis 7.0's getNodeByQuery: the keys' slots first (keys of two
 * slots: -CROSSSLOT), then the owner (another shard: -MOVED to its cluster
 * port, at the address the client used to reach us).  A command it lets
 * through runs on the home shard whatever its route, so the keyspace-wide
 * ones act on this shard's keys only (in the global-lock control build on
 * the one store all threads share, ARCHITECTURE.md rule 10).  Redis Cluster has
 * only database 0, hence SELECT n, SWAPDB and MOVE are refused with Redis's
 * texts.
 *
 * Node ids are SipHash values of the shard index under the process's random
 * hash seed: nothing to store or initialise, different in every process,
 * stable while it runs, and the seed stays secret (SipHash is a PRF).
 *
 * Threading: all of it runs on the connection's thread and reads only the
 * connection, the RCU config snapshot it is given and the immutable seed.
 */
#include "percore/cluster.h"

#include "conn_internal.h"
#include "shard_internal.h"
#include "percore/command.h"
#include "percore/config.h"
#include "percore/mem.h"
#include "percore/reply.h"
#include "percore/siphash.h"
#include "percore/slot.h"
#include "percore/util.h"

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* key positions of commands with up to this many arguments stay on the stack */
#define CLUSTER_STACK_ARGS 16

void cluster_node_id(int shard, char id[CLUSTER_NODE_ID_LEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    int n = 0;
    for (uint64_t word = 0; n < CLUSTER_NODE_ID_LEN; word++) {
        uint64_t in[2] = {(uint64_t)shard, word};
        uint64_t h = siphash_seeded(in, sizeof(in));
        for (int i = 0; i < 16 && n < CLUSTER_NODE_ID_LEN; i++, h >>= 4)
            id[n++] = hex[h & 15];
    }
    id[n] = '\0';
}

int cluster_conn_node(const struct conn *c)
{
    return c->cluster_port ? c->home->index : -1;
}

void cluster_conn_ip(const struct conn *c, char *ip, size_t cap)
{
    const char *colon = strrchr(c->local, ':'); /* "ip:port", the ip may hold colons (IPv6) */
    size_t len = colon ? (size_t)(colon - c->local) : strlen(c->local);
    snprintf(ip, cap, "%.*s", (int)len, c->local);
}

/*
 * CMD_NO_CLUSTER (SWAPDB, MOVE; SELECT n for an int n other than 0): Redis
 * Cluster's refusal, its name upper-cased into buf; NULL for the rest
 */
static const char *cluster_db_refusal(const struct command *cmd, int argc, const struct resp_arg *argv, char *buf,
                                      size_t cap)
{
    if (!(cmd->flags & CMD_NO_CLUSTER))
        return NULL;
    long long db;
    /* a bad index gets SELECT's own error, as Redis parses it first */
    if ((cmd->flags & CMD_SELECTS_DB) &&
        !(argc == 2 && util_str_to_ll(argv[1].ptr, argv[1].len, &db) && db >= INT_MIN && db <= INT_MAX && db != 0))
        return NULL;
    int n = snprintf(buf, cap, "ERR %s is not allowed in cluster mode", cmd->name);
    for (int i = 4; i < n && i < (int)cap && buf[i] != ' '; i++)
        buf[i] = (char)toupper((unsigned char)buf[i]);
    return buf;
}

bool cluster_refuse(const struct conn *c, const struct config *cfg, const struct command *cmd, int argc,
                    const struct resp_arg *argv, struct reply *out)
{
    int slot = -1;
    bool cross = false;
    if (cmd->first_key > 0 || (cmd->flags & CMD_SHARD_CHANNELS)) {
        int stack[CLUSTER_STACK_ARGS];
        int *pos = argc <= CLUSTER_STACK_ARGS ? stack : mem_alloc((size_t)argc * sizeof(int));
        int n = 0;
        if (cmd->flags & CMD_SHARD_CHANNELS) /* SPUBLISH's channel, or every one */
            for (int i = 1; i < (cmd->arity == 3 ? 2 : argc); i++)
                pos[n++] = i;
        else
            n = command_key_positions(cmd, argc, argv, pos);
        for (int i = 0; i < n && !cross; i++) {
            int s = (int)slot_of_key(argv[pos[i]].ptr, argv[pos[i]].len);
            cross = slot >= 0 && s != slot;
            slot = s;
        }
        if (pos != stack)
            mem_release(pos);
    }
    if (cross) {
        reply_error(out, "CROSSSLOT Keys in request don't hash to the same slot");
        return true;
    }
    if (slot >= 0 && cfg->slot_shard[slot] != c->home->index) {
        char ip[64];
        cluster_conn_ip(c, ip, sizeof(ip));
        reply_errorf(out, "MOVED %d %s:%d", slot, ip, config_cluster_port(cfg, cfg->slot_shard[slot]));
        return true;
    }
    char buf[80];
    const char *refusal = cluster_db_refusal(cmd, argc, argv, buf, sizeof buf);
    if (refusal) {
        reply_error(out, refusal);
        return true;
    }
    return false;
}
