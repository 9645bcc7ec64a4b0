/*
 * list: placeholder until the list type lands (see include/percore/object.h).
 */
#include "percore/object.h"

const struct object_type_ops list_type_ops = {.name = "list"};
