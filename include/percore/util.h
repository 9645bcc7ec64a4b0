/*
 * util: small string helpers with Redis's exact semantics.
 */
#ifndef PERCORE_UTIL_H
#define PERCORE_UTIL_H

#include <stdbool.h>
#include <stddef.h>

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
/* unix time in ms / us */
long long util_ms_time(void);
long long util_us_time(void);
/* CLOCK_MONOTONIC in ns, for intervals */
long long util_mono_ns(void);

#endif
