/*
 * families: each command family (one file, like Redis's t_string.c) exports
 * its slice of the command table; command.c joins them into one lookup.
 */
#ifndef PERCORE_CMD_FAMILIES_H
#define PERCORE_CMD_FAMILIES_H

#include <stddef.h>

#include "percore/command.h"

extern const struct command command_family_string[];
extern const size_t command_family_string_count;
extern const struct command command_family_keys[];
extern const size_t command_family_keys_count;
extern const struct command command_family_server[];
extern const size_t command_family_server_count;
extern const struct command command_family_list[];
extern const size_t command_family_list_count;
extern const struct command command_family_set[];
extern const size_t command_family_set_count;
extern const struct command command_family_zset[];
extern const size_t command_family_zset_count;
extern const struct command command_family_hash[];
extern const size_t command_family_hash_count;
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
/* the PUBSUB container's subcommands (pubsub.c), listed in server.c's subcommand table */
cmd_handler cmd_pubsub_channels, cmd_pubsub_numsub, cmd_pubsub_numpat;
/*
 * What Redis's lookupCommand finds for argv (server.c): cmd itself when it
 * is not a container; a container's subcommand named by argv[1] when its
 * arity fits argc; NULL when there is no such subcommand or its arity does
 * not fit (the container's handler then answers Redis's error).
 */
const struct command *command_resolve_subcommand(const struct command *cmd, int argc, const struct resp_arg *argv);
/* slowlog.h's redactor for AUTH HELLO CONFIG SET (server.c) */
void server_redactions(const struct command *cmd, int argc, const struct resp_arg *argv, bool *redact);
/* MULTI EXEC DISCARD WATCH UNWATCH (multi.c) */
extern const struct command command_family_multi[];
extern const size_t command_family_multi_count;

#endif
