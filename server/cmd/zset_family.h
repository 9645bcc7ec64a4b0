/*
 * zset_family: the sorted set family's helpers that other families writing
 * sorted sets share (geo.c), so that a STORE command's result is stored and
 * reported the one way zset.c does it.  Shard thread of the store only, as
 * any handler.
 */
#ifndef PERCORE_CMD_ZSET_FAMILY_H
#define PERCORE_CMD_ZSET_FAMILY_H

#include "percore/command.h"

struct zset;

/*
 * A STORE command's result dst (the store takes it) into dstkey, as Redis's
 * setKey puts it ("new" when the key is created, the key modified, `dirty`
 * changes) followed by event; an empty result deletes the destination
 * instead ("del" and one change when it existed).  Replies the result's
 * length.
 */
void zset_put_destination(struct cmd_ctx *ctx, const struct resp_arg *dstkey, struct zset *dst, const char *event,
                          long long dirty);

#endif
