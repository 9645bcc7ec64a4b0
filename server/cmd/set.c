/*
 * set: placeholder until the set commands land.
 */
#include "families.h"

const struct command command_family_set[1];
const size_t command_family_set_count = 0;
