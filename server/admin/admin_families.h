/*
 * admin_families: what the admin layer's files (server.c, cluster.c,
 * pubsub.c, multi.c, admin.c) share among themselves and nobody else
 * includes.  Their commands read and steer the core's state (connections,
 * shards, stats, config, transactions): they sit above the core, which
 * reaches them only through the command table that admin_setup() fills.
 */
#ifndef PERCORE_ADMIN_FAMILIES_H
#define PERCORE_ADMIN_FAMILIES_H

#include <stdbool.h>
#include <stddef.h>

#include "percore/command.h"

/* PING ... CLIENT CONFIG INFO SLOWLOG ... (server.c) */
extern const struct command command_family_server[];
extern const size_t command_family_server_count;
/* every container's subcommands (server.c): CONFIG GET, CLIENT LIST, CLUSTER SLOTS, PUBSUB NUMSUB ... */
extern const struct subcommand server_subcommands[];
extern const size_t server_subcommands_count;
/* slowlog.h's redactor for AUTH HELLO CONFIG SET (server.c) */
void server_redactions(const struct command *cmd, int argc, const struct resp_arg *argv, bool *redact);
/* READONLY READWRITE ASKING (cluster.c) */
extern const struct command command_family_cluster[];
extern const size_t command_family_cluster_count;
/* the CLUSTER container's subcommands (cluster.c), listed in server.c's subcommand table */
cmd_handler cmd_cluster_slots, cmd_cluster_shards, cmd_cluster_nodes, cmd_cluster_info, cmd_cluster_myid,
    cmd_cluster_keyslot, cmd_cluster_countkeysinslot, cmd_cluster_getkeysinslot;
/* true with cluster-ports on; else Redis's "cluster support disabled" error sent, false */
bool cluster_enabled_or_reply(struct cmd_ctx *ctx);
/* SUBSCRIBE PUBLISH ... (pubsub.c) */
extern const struct command command_family_pubsub[];
extern const size_t command_family_pubsub_count;
extern const struct command command_family_debug[];
extern const size_t command_family_debug_count;
/* the PUBSUB container's subcommands (pubsub.c), listed in server.c's subcommand table */
cmd_handler cmd_pubsub_channels, cmd_pubsub_numsub, cmd_pubsub_numpat, cmd_pubsub_shardchannels,
    cmd_pubsub_shardnumsub;
/* MULTI EXEC DISCARD WATCH UNWATCH (multi.c) */
extern const struct command command_family_multi[];
extern const size_t command_family_multi_count;

#endif
