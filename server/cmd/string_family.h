/*
 * string_family: the string family's helpers that other families writing
 * strings share (bitops.c), so that a string is stored and reported the one
 * way string.c does it.  Shard thread of the store only, as any handler.
 */
#ifndef PERCORE_CMD_STRING_FAMILY_H
#define PERCORE_CMD_STRING_FAMILY_H

#include "percore/command.h"

struct object;

/* Redis's setKey: store val (the store takes it) under key, "new" when that
 * created it, the key modified (one change) */
void string_set_key(struct cmd_ctx *ctx, const struct resp_arg *key, struct object *val, int store_flags);
/* proto-max-bulk-len: the largest string a command may build */
long long string_max_bulk_len(const struct cmd_ctx *ctx);

#endif
