/*
 * list: placeholder until the list commands land.
 */
#include "families.h"

const struct command command_family_list[1];
const size_t command_family_list_count = 0;
