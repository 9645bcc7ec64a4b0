/*
 * digest: DEBUG DIGEST's and DEBUG DIGEST-VALUE's signatures, computed as
 * Redis 7.0's debug.c computes them (xorObjectDigest, computeDatasetDigest),
 * so the same dataset gives the same 40 hex digits in both servers.
 *
 * Order-free parts (keys, set members, hash fields, sorted set members)
 * are xored together; ordered ones (list elements, stream entries) are
 * mixed (digest = SHA1(digest xor SHA1(data))).  A database's part is the
 * xor of its keys' digests, so each shard computes its own keys' xor per
 * database and the home combines them (digest_dataset_add): no shard reads
 * another's keys.
 *
 * Threading: pure functions of what they are given; digest_db reads the
 * calling shard's own store.
 */
#ifndef PERCORE_DIGEST_H
#define PERCORE_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct object;
struct store;

#define DIGEST_LEN 20

/* xorObjectDigest: o's type and value, and whether it expires, mixed into d (zeros for DIGEST-VALUE) */
void digest_value(unsigned char d[DIGEST_LEN], const struct object *o, bool expires);
/* the xor of the SHA1s of db's keys' digests (each: its name, then digest_value), logically expired ones
 * included; false when db has no key */
bool digest_db(struct store *s, int db, unsigned char out[DIGEST_LEN]);
/* computeDatasetDigest's step for database db with keys, keys_xor being digest_db's */
void digest_dataset_add(unsigned char final[DIGEST_LEN], int db, const unsigned char keys_xor[DIGEST_LEN]);
/* 40 lower-case hex digits and a NUL */
void digest_hex(char out[2 * DIGEST_LEN + 1], const unsigned char d[DIGEST_LEN]);

#endif
