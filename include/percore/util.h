/*
 * util: small string helpers with Redis's exact semantics, and the random
 * numbers of the store's draws.
 */
#ifndef PERCORE_UTIL_H
#define PERCORE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* glob match as Redis stringmatchlen (*, ?, [a-z], [^x], \x); nocase for CONFIG GET */
bool util_glob_match(const char *pattern, size_t plen, const char *str, size_t slen, bool nocase);
/* Redis string2ll: strict decimal, no spaces, no '+', no leading zeros; true on success */
bool util_str_to_ll(const char *s, size_t len, long long *out);
/* Redis string2ld/strtold rules for INCRBYFLOAT (no spaces, no nan/inf) */
bool util_str_to_ld(const char *s, size_t len, long double *out);
/* Redis ld2string in LD_STR_HUMAN mode (INCRBYFLOAT output); returns length, 0 on failure */
int util_ld_to_str(char *buf, size_t cap, long double v);
/* Redis string2d-like strict double parse (for later types) */
bool util_str_to_double(const char *s, size_t len, double *out);
/* case-insensitive compare of a counted string with a C string */
bool util_eq_nocase(const char *s, size_t len, const char *cstr);
/* byte strings in memcmp order, a prefix first (qsort comparators of keys, names and prefixes) */
static inline int util_bytes_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}
/* "00".."99": the two digits of each value below 100, side by side */
extern const char util_digits2[201];

/* Redis ll2string: v in decimal at dst (room for 20 bytes), no NUL; returns the length.  Inline: every
 * reply's integer and header is written with it, two digits at a time */
static inline int util_ll_to_str(char *dst, long long v)
{
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    char tmp[20];
    char *p = tmp + sizeof(tmp);
    while (u >= 100) {
        unsigned i = (unsigned)(u % 100) * 2;
        u /= 100;
        p -= 2;
        memcpy(p, util_digits2 + i, 2);
    }
    if (u >= 10) {
        p -= 2;
        memcpy(p, util_digits2 + u * 2, 2);
    } else {
        *--p = (char)('0' + u);
    }
    if (v < 0)
        *--p = '-';
    int n = (int)(tmp + sizeof(tmp) - p);
    memcpy(dst, p, (size_t)n);
    return n;
}
/* unix time in ms / us */
long long util_ms_time(void);
long long util_us_time(void);
/* CLOCK_MONOTONIC in ns, for intervals */
long long util_mono_ns(void);

/* xorshift64*: the next number of the generator whose state (not 0) is *state */
static inline uint64_t util_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* uniform in [0, n), n > 0: the high half of util_rand * n (Lemire), no division;
 * each value's probability is within n / 2^64 of 1/n */
static inline uint64_t util_rand_below(uint64_t *state, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)util_rand(state) * n) >> 64);
}

#endif
