/*
 * hash: placeholder until the hash commands land.
 */
#include "families.h"

const struct command command_family_hash[1];
const size_t command_family_hash_count = 0;
