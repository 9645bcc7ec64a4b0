/*
 * sha1: the SHA-1 digest (FIPS 180-1) of a byte string, as the 40 lower-case
 * hex digits Redis names scripts by (EVALSHA, SCRIPT LOAD, redis.sha1hex).
 * Pure function, any thread.
 */
#ifndef PERCORE_SHA1_H
#define PERCORE_SHA1_H

#include <stddef.h>

/* hex receives 40 digits and a NUL */
void sha1_hex(char hex[41], const void *p, size_t n);
/* the 20 bytes of the digest */
void sha1_raw(unsigned char out[20], const void *p, size_t n);

#endif
