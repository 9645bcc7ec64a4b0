/*
 * admin: assembles the server's command table from every layer's families.
 *
 * The data-type families register themselves (command_setup, cmd/); this
 * layer adds its own tables, the containers' subcommands, and the hook the
 * slowlog and MONITOR use to redact secrets.  It runs once on the main
 * thread before any shard starts; everything it registers is read-only
 * afterwards, so the shards read it without synchronisation.
 */
#include "percore/admin.h"

#include "admin_families.h"
#include "percore/command.h"
#include "percore/function.h"
#include "percore/primary.h"
#include "percore/replica.h"
#include "percore/script.h"
#include "percore/slowlog.h"

#include <stdbool.h>

void admin_setup(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    command_register(command_family_server, command_family_server_count);
    command_register(command_family_multi, command_family_multi_count);
    command_setup();
    command_register(command_family_cluster, command_family_cluster_count);
    command_register(command_family_pubsub, command_family_pubsub_count);
    command_register(command_family_script, command_family_script_count);
    command_register(command_family_replica, command_family_replica_count);
    command_register(command_family_primary, command_family_primary_count);
    command_register(command_family_function, command_family_function_count);
    command_register(command_family_debug, command_family_debug_count);
    command_register_subcommands(server_subcommands, server_subcommands_count);
    command_register_subcommands(command_subs_script, command_subs_script_count);
    command_register_subcommands(command_subs_function, command_subs_function_count);
    slowlog_set_redactor(server_redactions);
}
