/*
 * zset: placeholder until the zset commands land.
 */
#include "families.h"

const struct command command_family_zset[1];
const size_t command_family_zset_count = 0;
