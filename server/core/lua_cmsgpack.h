/*
 * lua_cmsgpack: the `cmsgpack` library of Redis's scripts (lua-cmsgpack 0.4.0's behaviour).
 */
#ifndef PERCORE_LUA_CMSGPACK_H
#define PERCORE_LUA_CMSGPACK_H

#include <lua.h>

/* pushes the library's table (pack, unpack, unpack_one, unpack_limit); sets no global */
int lua_cmsgpack_open(lua_State *L);

#endif
