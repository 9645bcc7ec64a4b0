/*
 * zset: placeholder until the zset type lands (see include/percore/object.h).
 */
#include "percore/object.h"

const struct object_type_ops zset_type_ops = {.name = "zset"};
