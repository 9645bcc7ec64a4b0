/*
 * lua_struct: the `struct` library of Redis's scripts (Roberto Ierusalimschy's struct 0.2).
 */
#ifndef PERCORE_LUA_STRUCT_H
#define PERCORE_LUA_STRUCT_H

#include <lua.h>

/* pushes the library's table (pack, unpack, size); sets no global */
int lua_struct_open(lua_State *L);

#endif
