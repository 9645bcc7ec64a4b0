/*
 * families: each data-type family (one file, like Redis's t_string.c) exports
 * its slice of the command table; command_setup() joins them into one lookup.
 * The families sit below the core: they see a store and a cmd_ctx, never a
 * connection or a shard (the admin layer's commands do, admin_families.h).
 */
#ifndef PERCORE_CMD_FAMILIES_H
#define PERCORE_CMD_FAMILIES_H

#include <stddef.h>

#include "percore/command.h"

extern const struct command command_family_string[];
extern const size_t command_family_string_count;
extern const struct command command_family_keys[];
extern const size_t command_family_keys_count;
extern const struct command command_family_list[];
extern const size_t command_family_list_count;
extern const struct command command_family_set[];
extern const size_t command_family_set_count;
extern const struct command command_family_zset[];
extern const size_t command_family_zset_count;
extern const struct command command_family_hash[];
extern const size_t command_family_hash_count;
extern const struct command command_family_bitops[];
extern const size_t command_family_bitops_count;
extern const struct command command_family_hyperloglog[];
extern const size_t command_family_hyperloglog_count;
extern const struct command command_family_stream[];
extern const size_t command_family_stream_count;
extern const struct command command_family_geo[];
extern const size_t command_family_geo_count;
extern const struct command command_family_sort[];
extern const size_t command_family_sort_count;

/* the containers' subcommands of this folder (OBJECT MEMORY; XGROUP XINFO) */
extern const struct subcommand command_subs_keys[];
extern const size_t command_subs_keys_count;
extern const struct subcommand command_subs_stream[];
extern const size_t command_subs_stream_count;

#endif
