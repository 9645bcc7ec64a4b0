/*
 * lua_struct: binary packing for scripts, as the struct library 0.2
 * (Roberto Ierusalimschy) that Redis 7.0 bundles behaves (written here from
 * its documentation; Redis's replies are the test, tests/compat).
 *
 * A format is a string of options: '>' big-endian, '<' little-endian, '!n'
 * the largest alignment (a power of 2; '!' alone: the native one), ' '
 * ignored; 'b'/'B' char, 'h'/'H' short, 'l'/'L' long, 'T' size_t, 'i'/'I'
 * [n] an int of n bytes (up to 32, default sizeof(int)), lower case signed;
 * 'f' float, 'd' double; 's' a zero-terminated string; 'cn' n bytes, 'c0'
 * (unpack: the length is the value before it; pack: the whole string);
 * 'x' one zero byte of padding.  Elements are aligned to min(size, '!').
 *
 * Integers follow the C library on x86-64: a number is converted to the
 * 64-bit word the same way (negatives through a signed long, out-of-range
 * values as cvttsd2si saturates them), its low bytes are written, and a
 * signed read of more than 8 bytes masks as the hardware shift does.
 */
#include "lua_struct.h"

#include <ctype.h>
#include <lauxlib.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define STRUCT_MAX_INT_SIZE 32
#define STRUCT_BIG 0
#define STRUCT_LITTLE 1

struct align_probe {
    char c;
    double d;
};
#define STRUCT_PADDING (offsetof(struct align_probe, d))
#define STRUCT_MAX_ALIGN (STRUCT_PADDING > sizeof(int) ? STRUCT_PADDING : sizeof(int))

struct header {
    int endian;
    int align;
};

static int native_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first ? STRUCT_LITTLE : STRUCT_BIG;
}

static void header_init(struct header *h)
{
    h->endian = native_endian();
    h->align = 1;
}

static int read_count(lua_State *L, const char **fmt, int fallback)
{
    if (!isdigit((unsigned char)**fmt))
        return fallback;
    int a = 0;
    do {
        if (a > INT_MAX / 10 || a * 10 > INT_MAX - (**fmt - '0'))
            luaL_error(L, "integral size overflow");
        a = a * 10 + *(*fmt)++ - '0';
    } while (isdigit((unsigned char)**fmt));
    return a;
}

/* the size of option `opt` (reading its count from fmt); 0 for options without one */
static size_t option_size(lua_State *L, char opt, const char **fmt)
{
    switch (opt) {
    case 'B': case 'b': return sizeof(char);
    case 'H': case 'h': return sizeof(short);
    case 'L': case 'l': return sizeof(long);
    case 'T': return sizeof(size_t);
    case 'f': return sizeof(float);
    case 'd': return sizeof(double);
    case 'x': return 1;
    case 'c': return (size_t)read_count(L, fmt, 1);
    case 'i': case 'I': {
        int size = read_count(L, fmt, sizeof(int));
        if (size > STRUCT_MAX_INT_SIZE)
            luaL_error(L, "integral size %d is larger than limit of %d", size, STRUCT_MAX_INT_SIZE);
        return (size_t)size;
    }
    default: return 0;
    }
}

/* the padding before an element of `size` at offset `len` */
static size_t padding(size_t len, const struct header *h, int opt, size_t size)
{
    if (size == 0 || opt == 'c')
        return 0;
    if (size > (size_t)h->align)
        size = (size_t)h->align;
    return (size - (len & (size - 1))) & (size - 1);
}

/* the options that change the header; any other is an error */
static void control_option(lua_State *L, int opt, const char **fmt, struct header *h)
{
    switch (opt) {
    case ' ':
        return;
    case '>':
        h->endian = STRUCT_BIG;
        return;
    case '<':
        h->endian = STRUCT_LITTLE;
        return;
    case '!': {
        int a = read_count(L, fmt, (int)STRUCT_MAX_ALIGN);
        if (a <= 0 || (a & (a - 1)) != 0)
            luaL_error(L, "alignment %d is not a power of 2", a);
        h->align = a;
        return;
    }
    default:
        luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
    }
}

/* double -> uint64 as gcc compiles the conversion on x86-64 */
static uint64_t to_uint64(double d)
{
    if (!(d >= 9223372036854775808.0))
        return (uint64_t)lua_number_to_int64(d);
    return (uint64_t)lua_number_to_int64(d - 9223372036854775808.0) ^ ((uint64_t)1 << 63);
}

static void pack_integer(lua_State *L, luaL_Buffer *b, int arg, int endian, size_t size)
{
    lua_Number n = luaL_checknumber(L, arg);
    uint64_t value = n < 0 ? (uint64_t)lua_number_to_int64(n) : to_uint64(n);
    char bytes[STRUCT_MAX_INT_SIZE];
    for (size_t i = 0; i < size; i++) {
        bytes[endian == STRUCT_LITTLE ? i : size - 1 - i] = (char)(value & 0xff);
        value >>= 8;
    }
    luaL_addlstring(b, bytes, size);
}

/* reverses the bytes of a native value when `endian` is not the native order */
static void to_endian(char *bytes, size_t size, int endian)
{
    if (endian == native_endian() || size == 0)
        return;
    for (size_t i = 0, j = size - 1; i < j; i++, j--) {
        char t = bytes[i];
        bytes[i] = bytes[j];
        bytes[j] = t;
    }
}

/* 'f' (size of a float) or 'd' (of a double), in `endian` order */
static void pack_float(luaL_Buffer *b, lua_Number v, size_t size, int endian)
{
    float f = (float)v;
    double d = v;
    char *bytes = size == sizeof f ? (char *)&f : (char *)&d;
    to_endian(bytes, size, endian);
    luaL_addlstring(b, bytes, size);
}

static lua_Number unpack_float(const char *data, size_t size, int endian)
{
    float f;
    double d;
    char *bytes = size == sizeof f ? (char *)&f : (char *)&d;
    memcpy(bytes, data, size);
    to_endian(bytes, size, endian);
    return size == sizeof f ? f : d;
}

static int struct_pack(lua_State *L)
{
    const char *fmt = luaL_checkstring(L, 1);
    struct header h;
    header_init(&h);
    int arg = 2;
    size_t total = 0;
    luaL_Buffer b;
    lua_pushnil(L); /* keeps the arguments apart from the buffer's stack slots */
    luaL_buffinit(L, &b);
    while (*fmt != '\0') {
        int opt = *fmt++;
        size_t size = option_size(L, (char)opt, &fmt);
        size_t pad = padding(total, &h, opt, size);
        total += pad;
        while (pad-- > 0)
            luaL_addchar(&b, '\0');
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I':
            pack_integer(L, &b, arg++, h.endian, size);
            break;
        case 'x':
            luaL_addchar(&b, '\0');
            break;
        case 'f': case 'd':
            pack_float(&b, luaL_checknumber(L, arg++), size, h.endian);
            break;
        case 'c': case 's': {
            size_t len;
            const char *s = luaL_checklstring(L, arg++, &len);
            if (size == 0)
                size = len;
            luaL_argcheck(L, len >= size, arg, "string too short");
            luaL_addlstring(&b, s, size);
            if (opt == 's') {
                luaL_addchar(&b, '\0');
                size++;
            }
            break;
        }
        default:
            control_option(L, opt, &fmt, &h);
        }
        total += size;
    }
    luaL_pushresult(&b);
    return 1;
}

/* the integer of `size` bytes at p */
static lua_Number unpack_integer(const char *p, int endian, int is_signed, size_t size)
{
    uint64_t v = 0;
    for (size_t i = 0; i < size; i++) {
        v <<= 8;
        v |= (unsigned char)p[endian == STRUCT_BIG ? i : size - 1 - i];
    }
    if (!is_signed)
        return (lua_Number)v;
    uint64_t mask = ~(uint64_t)0 << ((size * 8 - 1) & 63); /* the shift as x86 counts it */
    if (v & mask)
        v |= mask;
    return (lua_Number)(int64_t)v;
}

static int struct_unpack(lua_State *L)
{
    const char *fmt = luaL_checkstring(L, 1);
    size_t len;
    const char *data = luaL_checklstring(L, 2, &len);
    size_t pos = (size_t)luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
    pos--;
    struct header h;
    header_init(&h);
    int n = 0;
    while (*fmt) {
        int opt = *fmt++;
        size_t size = option_size(L, (char)opt, &fmt);
        pos += padding(pos, &h, opt, size);
        luaL_argcheck(L, size <= len && pos <= len - size, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I':
            lua_pushnumber(L, unpack_integer(data + pos, h.endian, islower(opt), size));
            n++;
            break;
        case 'x':
            break;
        case 'f': case 'd':
            lua_pushnumber(L, unpack_float(data + pos, size, h.endian));
            n++;
            break;
        case 'c':
            if (size == 0) {
                if (n == 0 || !lua_isnumber(L, -1))
                    luaL_error(L, "format 'c0' needs a previous size");
                size = to_uint64(lua_tonumber(L, -1));
                lua_pop(L, 1);
                n--;
                luaL_argcheck(L, size <= len && pos <= len - size, 2, "data string too short");
            }
            lua_pushlstring(L, data + pos, size);
            n++;
            break;
        case 's': {
            const char *end = memchr(data + pos, '\0', len - pos);
            if (end == NULL)
                luaL_error(L, "unfinished string in data");
            size = (size_t)(end - (data + pos)) + 1;
            lua_pushlstring(L, data + pos, size - 1);
            n++;
            break;
        }
        default:
            control_option(L, opt, &fmt, &h);
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)(pos + 1));
    return n + 1;
}

static int struct_size(lua_State *L)
{
    const char *fmt = luaL_checkstring(L, 1);
    struct header h;
    header_init(&h);
    size_t pos = 0;
    while (*fmt) {
        int opt = *fmt++;
        size_t size = option_size(L, (char)opt, &fmt);
        pos += padding(pos, &h, opt, size);
        if (opt == 's')
            luaL_argerror(L, 1, "option 's' has no fixed size");
        else if (opt == 'c' && size == 0)
            luaL_argerror(L, 1, "option 'c0' has no fixed size");
        if (!isalnum(opt))
            control_option(L, opt, &fmt, &h);
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

int lua_struct_open(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"pack", struct_pack},
        {"unpack", struct_unpack},
        {"size", struct_size},
        {NULL, NULL},
    };
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
