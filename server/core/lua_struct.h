/*
 * lua_struct: the `struct` library of Redis's scripts (Roberto Ierusalimschy's struct 0.2).
 */
#ifndef PERCORE_LUA_STRUCT_H
#define PERCORE_LUA_STRUCT_H

#include <lua.h>
#include <stdint.h>

/* pushes the library's table (pack, unpack, size); sets no global */
int lua_struct_open(lua_State *L);

/* a Lua number as an integer the way Redis's C casts turn it into one on x86-64 (cvttsd2si): truncated,
 * and INT64_MIN when out of range or NaN (a script returning 1e308 answers -9223372036854775808) */
static inline int64_t lua_number_to_int64(double d)
{
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        return INT64_MIN;
    return (int64_t)d;
}

/* the same into an int (cvttsd2si's 32-bit form: INT32_MIN when out of range or NaN) */
static inline int lua_number_to_int(double d)
{
    if (!(d > -2147483649.0 && d < 2147483648.0))
        return INT32_MIN;
    return (int)d;
}

#endif
