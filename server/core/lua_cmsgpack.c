/*
 * lua_cmsgpack: MessagePack for scripts, byte for byte what Redis 7.0's
 * bundled lua-cmsgpack 0.4.0 writes and reads (written here from its
 * documented behaviour; Redis's output is the test, tests/compat).
 *
 * Encoding.  Numbers that are whole and fit an int64 take the smallest
 * integer form (fixnum, int/uint 8..64); other numbers are float32 when the
 * value survives the round trip through a float, else float64.  Strings are
 * fixstr / str8 / str16 / str32, booleans and nil their one byte; any other
 * type (functions, userdata) encodes as nil.  A table whose keys are exactly
 * 1..n is an array (the empty table too), any other a map (in lua_next's
 * order); tables nested 16 deep encode as nil, which also ends cycles.
 *
 * Decoding.  Every type above plus the unsigned/signed widths it does not
 * write; anything else is "Bad data format in input.", a cut value "Missing
 * bytes in input.".  unpack returns every value, unpack_one and unpack_limit
 * return the offset to continue at (-1 at the end) before the values.
 *
 * The output grows in a userdata on the Lua stack, so a Lua error in the
 * middle (a table's __index, a full stack) leaks nothing.
 */
#include "lua_cmsgpack.h"

#include <lauxlib.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MSGPACK_MAX_NESTING 16

/* ---- the output buffer: a userdata at a fixed stack index, replaced as it grows */
struct out {
    lua_State *L;
    int index;       /* the userdata's absolute stack index */
    unsigned char *bytes;
    size_t len, cap;
};

static void out_init(struct out *o, lua_State *L)
{
    o->L = L;
    o->cap = 64;
    o->len = 0;
    o->bytes = lua_newuserdata(L, o->cap);
    o->index = lua_gettop(L);
}

static void out_put(struct out *o, const void *p, size_t n)
{
    if (o->cap - o->len < n) {
        size_t cap = o->cap;
        while (cap - o->len < n)
            cap *= 2;
        unsigned char *bigger = lua_newuserdata(o->L, cap);
        memcpy(bigger, o->bytes, o->len);
        lua_replace(o->L, o->index);
        o->bytes = bigger;
        o->cap = cap;
    }
    memcpy(o->bytes + o->len, p, n);
    o->len += n;
}

/* a type byte then `width` bytes of v, big-endian */
static void out_typed(struct out *o, unsigned char type, uint64_t v, int width)
{
    unsigned char b[9];
    b[0] = type;
    for (int i = width; i >= 1; i--, v >>= 8)
        b[i] = (unsigned char)(v & 0xff);
    out_put(o, b, (size_t)width + 1);
}

static void encode_int(struct out *o, int64_t n)
{
    if (n >= 0) {
        if (n <= 127)
            out_typed(o, (unsigned char)n, 0, 0);
        else if (n <= 0xff)
            out_typed(o, 0xcc, (uint64_t)n, 1);
        else if (n <= 0xffff)
            out_typed(o, 0xcd, (uint64_t)n, 2);
        else if (n <= 0xffffffffLL)
            out_typed(o, 0xce, (uint64_t)n, 4);
        else
            out_typed(o, 0xcf, (uint64_t)n, 8);
    } else {
        if (n >= -32)
            out_typed(o, (unsigned char)(int8_t)n, 0, 0);
        else if (n >= -128)
            out_typed(o, 0xd0, (uint64_t)n, 1);
        else if (n >= -32768)
            out_typed(o, 0xd1, (uint64_t)n, 2);
        else if (n >= -2147483648LL)
            out_typed(o, 0xd2, (uint64_t)n, 4);
        else
            out_typed(o, 0xd3, (uint64_t)n, 8);
    }
}

static void encode_number(struct out *o, double d)
{
    if (isfinite(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0 && (double)(int64_t)d == d) {
        encode_int(o, (int64_t)d);
        return;
    }
    float f = (float)d;
    if ((double)f == d) {
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        out_typed(o, 0xca, bits, 4);
    } else {
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        out_typed(o, 0xcb, bits, 8);
    }
}

static void encode_string(struct out *o, const char *s, size_t len)
{
    if (len < 32)
        out_typed(o, (unsigned char)(0xa0 | len), 0, 0);
    else if (len <= 0xff)
        out_typed(o, 0xd9, len, 1);
    else if (len <= 0xffff)
        out_typed(o, 0xda, len, 2);
    else
        out_typed(o, 0xdb, len, 4);
    out_put(o, s, len);
}

/* an array or map header: fix form up to 15 entries, then 16 or 32 bits */
static void encode_container(struct out *o, unsigned char fix, unsigned char type16, size_t n)
{
    if (n <= 15)
        out_typed(o, (unsigned char)(fix | n), 0, 0);
    else if (n <= 0xffff)
        out_typed(o, type16, n, 2);
    else
        out_typed(o, (unsigned char)(type16 + 1), n, 4);
}

/* the table at the top: are its keys exactly the integers 1..n (each fitting an int)? */
static int table_is_sequence(lua_State *L)
{
    int top = lua_gettop(L);
    int count = 0, max = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        lua_Number n;
        if (lua_type(L, -1) != LUA_TNUMBER || (n = lua_tonumber(L, -1)) <= 0 || n > INT_MAX ||
            (double)(int)n != n) {
            lua_settop(L, top);
            return 0;
        }
        if (n > max)
            max = (int)n;
        count++;
    }
    lua_settop(L, top);
    return max == count;
}

static void encode_value(lua_State *L, struct out *o, int level);

static void encode_table(lua_State *L, struct out *o, int level)
{
    if (table_is_sequence(L)) {
        size_t n = lua_objlen(L, -1);
        encode_container(o, 0x90, 0xdc, n);
        luaL_checkstack(L, 1, "in function mp_encode_lua_table_as_array");
        for (size_t i = 1; i <= n; i++) {
            lua_pushnumber(L, (lua_Number)i);
            lua_gettable(L, -2);
            encode_value(L, o, level + 1);
        }
        return;
    }
    luaL_checkstack(L, 3, "in function mp_encode_lua_table_as_map");
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        n++;
    }
    encode_container(o, 0x80, 0xde, n);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2);
        encode_value(L, o, level + 1); /* the key */
        encode_value(L, o, level + 1); /* the value */
    }
}

/* encodes the value at the top and pops it */
static void encode_value(lua_State *L, struct out *o, int level)
{
    int type = lua_type(L, -1);
    if (type == LUA_TTABLE && level == MSGPACK_MAX_NESTING)
        type = LUA_TNIL;
    switch (type) {
    case LUA_TBOOLEAN:
        out_typed(o, lua_toboolean(L, -1) ? 0xc3 : 0xc2, 0, 0);
        break;
    case LUA_TNUMBER:
        encode_number(o, lua_tonumber(L, -1));
        break;
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        encode_string(o, s, len);
        break;
    }
    case LUA_TTABLE:
        encode_table(L, o, level);
        break;
    default:
        out_typed(o, 0xc0, 0, 0);
        break;
    }
    lua_pop(L, 1);
}

static int msgpack_pack(lua_State *L)
{
    int nargs = lua_gettop(L);
    if (nargs == 0)
        return luaL_argerror(L, 0, "MessagePack pack needs input.");
    if (!lua_checkstack(L, nargs))
        return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
    struct out o;
    out_init(&o, L);
    for (int i = 1; i <= nargs; i++) {
        luaL_checkstack(L, 1, "in function mp_check");
        lua_pushvalue(L, i);
        encode_value(L, &o, 0);
    }
    lua_pushlstring(L, (const char *)o.bytes, o.len);
    return 1;
}

/* ---- decoding */
enum { DECODE_OK, DECODE_EOF, DECODE_BADFMT };

struct in {
    const unsigned char *p;
    size_t left;
    int err;
};

/* the big-endian unsigned integer of `width` bytes after the type byte */
static uint64_t in_uint(const struct in *c, int width)
{
    uint64_t v = 0;
    for (int i = 1; i <= width; i++)
        v = v << 8 | c->p[i];
    return v;
}

static void decode_value(lua_State *L, struct in *c);

static void decode_array(lua_State *L, struct in *c, size_t n)
{
    lua_newtable(L);
    luaL_checkstack(L, 1, "in function mp_decode_to_lua_array");
    for (size_t i = 1; i <= n; i++) {
        lua_pushnumber(L, (lua_Number)i);
        decode_value(L, c);
        if (c->err)
            return;
        lua_settable(L, -3);
    }
}

static void decode_map(lua_State *L, struct in *c, size_t n)
{
    lua_newtable(L);
    while (n--) {
        decode_value(L, c);
        if (c->err)
            return;
        decode_value(L, c);
        if (c->err)
            return;
        lua_settable(L, -3);
    }
}

/* needs `n` bytes: else the input is cut */
#define NEED(c, n)                                                                   \
    do {                                                                             \
        if ((c)->left < (n)) {                                                       \
            (c)->err = DECODE_EOF;                                                   \
            return;                                                                  \
        }                                                                            \
    } while (0)

static void consume(struct in *c, size_t n)
{
    c->p += n;
    c->left -= n;
}

/* a type byte with a `width`-byte length, then that many bytes of string */
static void decode_string(lua_State *L, struct in *c, int width, size_t len)
{
    NEED(c, (size_t)width + 1 + len);
    lua_pushlstring(L, (const char *)c->p + width + 1, len);
    consume(c, (size_t)width + 1 + len);
}

/* an integer of `width` bytes after the type byte, signed or not */
static void decode_int(lua_State *L, struct in *c, int width, int is_signed)
{
    NEED(c, (size_t)width + 1);
    uint64_t v = in_uint(c, width);
    int64_t n = (int64_t)v; /* uint64 past INT64_MAX wraps, as lua_pushinteger does there */
    if (is_signed && width < 8 && (v >> (width * 8 - 1)) & 1)
        n = (int64_t)(v | ~(uint64_t)0 << (width * 8));
    lua_pushinteger(L, (lua_Integer)n);
    consume(c, (size_t)width + 1);
}

static void decode_value(lua_State *L, struct in *c)
{
    NEED(c, 1);
    luaL_checkstack(L, 1, "too many return values at once; use unpack_one or unpack_limit instead.");
    unsigned char t = c->p[0];
    switch (t) {
    case 0xcc: decode_int(L, c, 1, 0); return;
    case 0xcd: decode_int(L, c, 2, 0); return;
    case 0xce: decode_int(L, c, 4, 0); return;
    case 0xcf: decode_int(L, c, 8, 0); return;
    case 0xd0: decode_int(L, c, 1, 1); return;
    case 0xd1: decode_int(L, c, 2, 1); return;
    case 0xd2: decode_int(L, c, 4, 1); return;
    case 0xd3: decode_int(L, c, 8, 1); return;
    case 0xc0: lua_pushnil(L); consume(c, 1); return;
    case 0xc2: lua_pushboolean(L, 0); consume(c, 1); return;
    case 0xc3: lua_pushboolean(L, 1); consume(c, 1); return;
    case 0xca: {
        NEED(c, 5);
        uint32_t bits = (uint32_t)in_uint(c, 4);
        float f;
        memcpy(&f, &bits, sizeof f);
        lua_pushnumber(L, (lua_Number)f);
        consume(c, 5);
        return;
    }
    case 0xcb: {
        NEED(c, 9);
        uint64_t bits = in_uint(c, 8);
        double d;
        memcpy(&d, &bits, sizeof d);
        lua_pushnumber(L, d);
        consume(c, 9);
        return;
    }
    case 0xd9: NEED(c, 2); decode_string(L, c, 1, in_uint(c, 1)); return;
    case 0xda: NEED(c, 3); decode_string(L, c, 2, in_uint(c, 2)); return;
    case 0xdb: NEED(c, 5); decode_string(L, c, 4, in_uint(c, 4)); return;
    case 0xdc: case 0xdd: case 0xde: case 0xdf: {
        int width = (t == 0xdc || t == 0xde) ? 2 : 4;
        NEED(c, (size_t)width + 1);
        size_t n = in_uint(c, width);
        consume(c, (size_t)width + 1);
        if (t <= 0xdd)
            decode_array(L, c, n);
        else
            decode_map(L, c, n);
        return;
    }
    default:
        break;
    }
    if ((t & 0x80) == 0) {
        lua_pushinteger(L, t);
        consume(c, 1);
    } else if ((t & 0xe0) == 0xe0) {
        lua_pushinteger(L, (int8_t)t);
        consume(c, 1);
    } else if ((t & 0xe0) == 0xa0) {
        decode_string(L, c, 0, t & 0x1f);
    } else if ((t & 0xf0) == 0x90) {
        consume(c, 1);
        decode_array(L, c, t & 0xf);
    } else if ((t & 0xf0) == 0x80) {
        consume(c, 1);
        decode_map(L, c, t & 0xf);
    } else {
        c->err = DECODE_BADFMT;
    }
}

/* decodes up to `limit` values (0 with offset 0: all, and no offset returned) from `offset` */
static int unpack_from(lua_State *L, int limit, int offset)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    int all = !limit && !offset;
    if (offset < 0 || limit < 0)
        return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", offset, (int)len);
    if ((size_t)offset > len)
        return luaL_error(L, "Start offset %d greater than input length %d.", offset, (int)len);
    if (all)
        limit = INT_MAX;
    struct in c = {(const unsigned char *)s + offset, len - (size_t)offset, DECODE_OK};
    int count;
    for (count = 0; c.left > 0 && count < limit; count++) {
        decode_value(L, &c);
        if (c.err == DECODE_EOF)
            return luaL_error(L, "Missing bytes in input.");
        if (c.err == DECODE_BADFMT)
            return luaL_error(L, "Bad data format in input.");
    }
    if (all)
        return count;
    luaL_checkstack(L, 1, "in function mp_unpack_full");
    lua_pushinteger(L, c.left == 0 ? -1 : (lua_Integer)(int)(len - c.left));
    lua_insert(L, 2);
    return count + 1;
}

static int msgpack_unpack(lua_State *L) { return unpack_from(L, 0, 0); }

static int msgpack_unpack_one(lua_State *L)
{
    int offset = (int)luaL_optinteger(L, 2, 0);
    lua_settop(L, 1);
    return unpack_from(L, 1, offset);
}

static int msgpack_unpack_limit(lua_State *L)
{
    int limit = (int)luaL_checkinteger(L, 2);
    int offset = (int)luaL_optinteger(L, 3, 0);
    lua_settop(L, 1);
    return unpack_from(L, limit, offset);
}

int lua_cmsgpack_open(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"pack", msgpack_pack},
        {"unpack", msgpack_unpack},
        {"unpack_one", msgpack_unpack_one},
        {"unpack_limit", msgpack_unpack_limit},
        {NULL, NULL},
    };
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    lua_pushliteral(L, "cmsgpack");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "lua-cmsgpack 0.4.0");
    lua_setfield(L, -2, "_VERSION");
    lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
    lua_setfield(L, -2, "_COPYRIGHT");
    lua_pushliteral(L, "MessagePack C implementation for Lua");
    lua_setfield(L, -2, "_DESCRIPTION");
    return 1;
}
