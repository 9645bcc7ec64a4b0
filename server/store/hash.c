/*
 * hash: placeholder until the hash type lands (see include/percore/object.h).
 */
#include "percore/object.h"

const struct object_type_ops hash_type_ops = {.name = "hash"};
