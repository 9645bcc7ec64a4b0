/*
 * admin: the layer of the admin commands (CLIENT, INFO, CONFIG, SLOWLOG,
 * CLUSTER, PUBSUB and SUBSCRIBE, MULTI/EXEC, COMMAND, LATENCY, MONITOR,
 * SHUTDOWN ...), above the core (docs/ARCHITECTURE.md, "The layers").
 *
 * The core never names these commands nor calls into this layer: it runs
 * them through the command table like any other, and admin_setup() is what
 * puts them there.
 */
#ifndef PERCORE_ADMIN_H
#define PERCORE_ADMIN_H

/*
 * The whole command table: the data-type families (command_setup), then the
 * admin commands, the containers' subcommands and the slowlog's redactor.
 * Main thread, at setup, before the shards run; a second call does nothing.
 */
void admin_setup(void);

#endif
