/*
 * listpack: a compact packed array of byte strings, the small encoding of
 * lists, hashes and sorted sets (Redis's listpack plays the same part).
 *
 * One allocation: a small header and then the entries, each
 *     [length: 1-5 bytes varint] [bytes] [back-length: 1-5 bytes]
 * so it can be walked both ways.  An entry is named by its byte offset (a
 * uint32_t position); LP_NONE means "past either end".  Positions stay valid
 * until the next change; a change returns what callers need to go on.
 * Functions that may move the listpack take `struct listpack **`.
 *
 * Cost model: lookups by index or by value walk entries (O(n)): listpacks
 * are kept small by the collection thresholds (hash-max-listpack-entries ...).
 */
#ifndef PERCORE_LISTPACK_H
#define PERCORE_LISTPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LP_NONE UINT32_MAX

struct listpack;

struct listpack *lp_create(void);
void lp_destroy(struct listpack **lp);

size_t lp_count(const struct listpack *lp);   /* entries (walked when 65535 or more) */
size_t lp_bytes(const struct listpack *lp);   /* bytes allocated, for memory accounting (a heap listpack) */

/* walking */
uint32_t lp_first(const struct listpack *lp);
uint32_t lp_last(const struct listpack *lp);
uint32_t lp_next(const struct listpack *lp, uint32_t pos);
uint32_t lp_prev(const struct listpack *lp, uint32_t pos);
/* the entry at index (negative: from the end), LP_NONE when out of range */
uint32_t lp_seek(const struct listpack *lp, long index);
/* the bytes of the entry at pos */
const char *lp_get(const struct listpack *lp, uint32_t pos, size_t *len);
/*
 * The first entry from `pos` on equal to p[0..n), looking only at every
 * (skip+1)-th entry (skip 1: the fields of field/value pairs); LP_NONE if none.
 */
uint32_t lp_find(const struct listpack *lp, uint32_t pos, const void *p, size_t n, unsigned skip);
/* no two of every (skip+1)-th entry from the first are equal (validating a set's members or a
 * hash's fields) */
bool lp_unique(const struct listpack *lp, unsigned skip);

/* changes */
void lp_append(struct listpack **lp, const void *p, size_t n);
void lp_prepend(struct listpack **lp, const void *p, size_t n);
/* insert before the entry at pos (LP_NONE: append); returns the new entry's position */
uint32_t lp_insert(struct listpack **lp, uint32_t pos, const void *p, size_t n);
/* replace the entry at pos; returns its position (unchanged) */
uint32_t lp_replace(struct listpack **lp, uint32_t pos, const void *p, size_t n);
/* delete the entry at pos; returns the position of the entry that followed it, or LP_NONE */
uint32_t lp_delete(struct listpack **lp, uint32_t pos);
/* delete `count` entries starting at index (negative: from the end) */
void lp_delete_range(struct listpack **lp, long index, size_t count);

/* the whole listpack as bytes (to serialize, or to keep inline elsewhere: 2-aligned), and back
 * (validated; NULL if malformed) */
const void *lp_data(const struct listpack *lp, size_t *len);
struct listpack *lp_from_data(const void *p, size_t n);
/* a copy of lp (one kept inline elsewhere, to change it) in an allocation of its own */
struct listpack *lp_dup(const struct listpack *lp);

#endif
