/*
 * set: placeholder until the set type lands (see include/percore/object.h).
 */
#include "percore/object.h"

const struct object_type_ops set_type_ops = {.name = "set"};
