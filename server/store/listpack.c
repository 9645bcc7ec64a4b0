/*
 * listpack: a packed array of byte strings (see include/percore/listpack.h).
 *
 * Layout: a 6-byte header, struct listpack { used bytes, entry count }, then
 * the entries:
 *
 *     [len: LEB128, 1-5 bytes] [len bytes] [back: 1-5 bytes]
 *
 * `back` is the size of the first two parts, written so that it can be read
 * from its last byte backwards: the last byte holds the lowest 7 bits, and a
 * set high bit means more bytes precede.  So an entry can be found from the
 * one after it (lp_prev) without an index.  A position is the entry's offset
 * from the start of the entries.
 *
 * The header is 6 bytes, 2-aligned (a small hash keeps its listpack inline in
 * its key's entry, object.c, 2 bytes into the object): `used` as two 16-bit
 * halves and a 16-bit count that saturates, as Redis's listpack's does: at
 * LP_COUNT_UNKNOWN the entries are counted by walking (lp_count), and a
 * delete from a saturated listpack recounts them, so the count comes back
 * once it fits again.
 *
 * Every change reallocates to the exact size (mimalloc often grows in
 * place), as Redis's listpack does: small collections stay small.
 */
#include "percore/listpack.h"

#include "percore/dict.h"
#include "percore/mem.h"

#include <string.h>

struct listpack {
    uint16_t used_lo; /* bytes of entries: low and high halves */
    uint16_t used_hi;
    uint16_t count;   /* entries, LP_COUNT_UNKNOWN when that many or more */
    unsigned char data[];
};

_Static_assert(sizeof(struct listpack) == 6, "a listpack's header is 6 bytes");

#define LP_COUNT_UNKNOWN UINT16_MAX

static size_t lp_used(const struct listpack *lp)
{
    return (size_t)lp->used_lo | (size_t)lp->used_hi << 16;
}

static void lp_set_used(struct listpack *lp, size_t used)
{
    lp->used_lo = (uint16_t)used;
    lp->used_hi = (uint16_t)(used >> 16);
}

#define LP_VARINT_MAX 5

static size_t varint_size(size_t v)
{
    size_t n = 1;
    while (v >= 128) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t varint_put(unsigned char *b, size_t v)
{
    size_t n = 0;
    while (v >= 128) {
        b[n++] = (unsigned char)((v & 127) | 128);
        v >>= 7;
    }
    b[n++] = (unsigned char)v;
    return n;
}

/* read a LEB128 length at p (at most `room` bytes); 0 when malformed */
static size_t varint_get(const unsigned char *p, size_t room, size_t *v)
{
    size_t val = 0;
    for (size_t i = 0; i < LP_VARINT_MAX && i < room; i++) {
        val |= (size_t)(p[i] & 127) << (7 * i);
        if (!(p[i] & 128)) {
            *v = val;
            return i + 1;
        }
    }
    return 0;
}

/* back-length: written so that its last byte carries the lowest 7 bits */
static size_t back_put(unsigned char *b, size_t v)
{
    size_t n = varint_size(v);
    for (size_t i = 0; i < n; i++) {
        unsigned char digit = (unsigned char)((v >> (7 * i)) & 127);
        b[n - 1 - i] = (unsigned char)(digit | (i + 1 < n ? 128 : 0));
    }
    return n;
}

/* read a back-length ending at p[-1]; sets *bytes to its size; 0 when malformed */
static size_t back_get(const unsigned char *end, size_t room, size_t *bytes)
{
    size_t val = 0;
    for (size_t i = 0; i < LP_VARINT_MAX && i < room; i++) {
        unsigned char b = end[-1 - (long)i];
        val |= (size_t)(b & 127) << (7 * i);
        if (!(b & 128)) {
            *bytes = i + 1;
            return val;
        }
    }
    *bytes = 0;
    return 0;
}

static size_t entry_size_for(size_t n)
{
    size_t head = varint_size(n) + n;
    return head + varint_size(head);
}

static size_t entry_size(const struct listpack *lp, uint32_t pos)
{
    size_t len = 0;
    varint_get(lp->data + pos, lp_used(lp) - pos, &len);
    return entry_size_for(len);
}

static void entry_write(unsigned char *b, const void *p, size_t n)
{
    size_t h = varint_put(b, n);
    if (n)
        memcpy(b + h, p, n);
    back_put(b + h + n, h + n);
}

struct listpack *lp_create(void)
{
    struct listpack *lp = mem_alloc(sizeof(*lp));
    lp_set_used(lp, 0);
    lp->count = 0;
    return lp;
}

void lp_destroy(struct listpack **lp)
{
    if (!lp || !*lp)
        return;
    mem_release(*lp);
    *lp = NULL;
}

/* entries counted by walking */
static size_t lp_walk_count(const struct listpack *lp)
{
    size_t n = 0, used = lp_used(lp);
    for (size_t pos = 0; pos < used; pos += entry_size(lp, (uint32_t)pos))
        n++;
    return n;
}

size_t lp_count(const struct listpack *lp)
{
    return lp->count != LP_COUNT_UNKNOWN ? lp->count : lp_walk_count(lp);
}

/* the count after n entries were added (n > 0) or removed (n < 0) */
static void lp_count_add(struct listpack *lp, long n)
{
    if (lp->count == LP_COUNT_UNKNOWN) {
        if (n < 0) {
            size_t c = lp_walk_count(lp);
            lp->count = c < LP_COUNT_UNKNOWN ? (uint16_t)c : LP_COUNT_UNKNOWN;
        }
        return;
    }
    long c = (long)lp->count + n;
    lp->count = c < LP_COUNT_UNKNOWN ? (uint16_t)c : LP_COUNT_UNKNOWN;
}
size_t lp_bytes(const struct listpack *lp) { return mem_usable(lp); }

uint32_t lp_first(const struct listpack *lp)
{
    return lp->count ? 0 : LP_NONE;
}

uint32_t lp_next(const struct listpack *lp, uint32_t pos)
{
    if (pos == LP_NONE)
        return LP_NONE;
    size_t next = pos + entry_size(lp, pos);
    return next < lp_used(lp) ? (uint32_t)next : LP_NONE;
}

/* the entry that ends where `end` begins */
static uint32_t lp_before(const struct listpack *lp, size_t end)
{
    if (end == 0)
        return LP_NONE;
    size_t bytes;
    size_t head = back_get(lp->data + end, end, &bytes);
    return (uint32_t)(end - bytes - head);
}

uint32_t lp_prev(const struct listpack *lp, uint32_t pos)
{
    return pos == LP_NONE ? LP_NONE : lp_before(lp, pos);
}

uint32_t lp_last(const struct listpack *lp)
{
    return lp->count ? lp_before(lp, lp_used(lp)) : LP_NONE;
}

uint32_t lp_seek(const struct listpack *lp, long index)
{
    long count = (long)lp_count(lp);
    if (index < 0)
        index += count;
    if (index < 0 || index >= count)
        return LP_NONE;
    uint32_t pos;
    if (index < count / 2) {
        pos = lp_first(lp);
        while (index-- > 0)
            pos = lp_next(lp, pos);
    } else {
        pos = lp_last(lp);
        for (long i = count - 1; i > index; i--)
            pos = lp_prev(lp, pos);
    }
    return pos;
}

const char *lp_get(const struct listpack *lp, uint32_t pos, size_t *len)
{
    *len = 0;
    size_t h = varint_get(lp->data + pos, lp_used(lp) - pos, len);
    return (const char *)lp->data + pos + h;
}

/* the entry skip+1 entries after pos */
static uint32_t lp_skip(const struct listpack *lp, uint32_t pos, unsigned skip)
{
    for (unsigned i = 0; i <= skip && pos != LP_NONE; i++)
        pos = lp_next(lp, pos);
    return pos;
}

uint32_t lp_find(const struct listpack *lp, uint32_t pos, const void *p, size_t n, unsigned skip)
{
    while (pos != LP_NONE) {
        size_t len;
        const char *e = lp_get(lp, pos, &len);
        if (len == n && (n == 0 || memcmp(e, p, n) == 0))
            return pos;
        pos = lp_skip(lp, pos, skip);
    }
    return LP_NONE;
}

#define LP_UNIQUE_PAIRWISE 32 /* up to this many entries: compared pairwise, no dict */

bool lp_unique(const struct listpack *lp, unsigned skip)
{
    if (lp_count(lp) <= LP_UNIQUE_PAIRWISE * (skip + 1)) {
        for (uint32_t a = lp_first(lp); a != LP_NONE; a = lp_skip(lp, a, skip)) {
            size_t len;
            const char *e = lp_get(lp, a, &len);
            uint32_t later = lp_skip(lp, a, skip);
            if (later != LP_NONE && lp_find(lp, later, e, len, skip) != LP_NONE)
                return false;
        }
        return true;
    }
    struct dict *seen = dict_create();
    bool ok = true;
    for (uint32_t a = lp_first(lp); a != LP_NONE && ok; a = lp_skip(lp, a, skip)) {
        size_t len;
        const char *e = lp_get(lp, a, &len);
        ok = dict_add(seen, e, len, NULL) != NULL;
    }
    dict_destroy(&seen);
    return ok;
}

/* open a gap of `grow` bytes at offset at (shrink when negative); returns the new lp */
static struct listpack *lp_resize_at(struct listpack *lp, size_t at, long grow)
{
    size_t used = lp_used(lp);
    if (grow > 0) {
        lp = mem_realloc(lp, sizeof(*lp) + used + (size_t)grow);
        memmove(lp->data + at + (size_t)grow, lp->data + at, used - at);
    } else if (grow < 0) {
        size_t shrink = (size_t)-grow;
        memmove(lp->data + at, lp->data + at + shrink, used - at - shrink);
        lp = mem_realloc(lp, sizeof(*lp) + used - shrink);
    }
    lp_set_used(lp, (size_t)((long)used + grow));
    return lp;
}

uint32_t lp_insert(struct listpack **lp, uint32_t pos, const void *p, size_t n)
{
    size_t at = pos == LP_NONE ? lp_used(*lp) : pos;
    size_t size = entry_size_for(n);
    *lp = lp_resize_at(*lp, at, (long)size);
    entry_write((*lp)->data + at, p, n);
    lp_count_add(*lp, 1);
    return (uint32_t)at;
}

void lp_append(struct listpack **lp, const void *p, size_t n)
{
    lp_insert(lp, LP_NONE, p, n);
}

void lp_prepend(struct listpack **lp, const void *p, size_t n)
{
    lp_insert(lp, lp_first(*lp), p, n);
}

uint32_t lp_replace(struct listpack **lp, uint32_t pos, const void *p, size_t n)
{
    size_t old = entry_size(*lp, pos);
    long delta = (long)entry_size_for(n) - (long)old;
    size_t tail = pos + old; /* where the next entry starts now */
    if (delta > 0)
        *lp = lp_resize_at(*lp, tail, delta); /* room at the end of this entry */
    else if (delta < 0)
        *lp = lp_resize_at(*lp, tail - (size_t)(-delta), delta);
    entry_write((*lp)->data + pos, p, n);
    return pos;
}

uint32_t lp_delete(struct listpack **lp, uint32_t pos)
{
    size_t size = entry_size(*lp, pos);
    *lp = lp_resize_at(*lp, pos, -(long)size);
    lp_count_add(*lp, -1);
    return pos < lp_used(*lp) ? pos : LP_NONE;
}

void lp_delete_range(struct listpack **lp, long index, size_t count)
{
    uint32_t start = lp_seek(*lp, index);
    if (start == LP_NONE || count == 0)
        return;
    uint32_t end = start;
    size_t n = 0;
    while (end != LP_NONE && n < count) {
        end = lp_next(*lp, end);
        n++;
    }
    size_t stop = end == LP_NONE ? lp_used(*lp) : end;
    *lp = lp_resize_at(*lp, start, -(long)(stop - start));
    lp_count_add(*lp, -(long)n);
}

const void *lp_data(const struct listpack *lp, size_t *len)
{
    *len = sizeof(*lp) + lp_used(lp);
    return lp;
}

struct listpack *lp_dup(const struct listpack *lp)
{
    size_t n = sizeof(*lp) + lp_used(lp);
    struct listpack *c = mem_alloc(n);
    memcpy(c, lp, n);
    return c;
}

struct listpack *lp_from_data(const void *p, size_t n)
{
    struct listpack head;
    if (n < sizeof(head))
        return NULL;
    memcpy(&head, p, sizeof(head));
    size_t used = lp_used(&head);
    if (used != n - sizeof(head))
        return NULL;
    const unsigned char *d = (const unsigned char *)p + sizeof(head);
    size_t off = 0, count = 0;
    while (off < used) {
        size_t len, bytes;
        size_t h = varint_get(d + off, used - off, &len);
        if (h == 0 || len > used - off - h)
            return NULL;
        size_t end = off + h + len;
        size_t want = varint_size(h + len);
        if (want > used - end)
            return NULL;
        if (back_get(d + end + want, want, &bytes) != h + len || bytes != want)
            return NULL;
        off = end + want;
        count++;
    }
    if (count < LP_COUNT_UNKNOWN ? count != head.count : head.count != LP_COUNT_UNKNOWN)
        return NULL;
    struct listpack *lp = mem_alloc(n);
    memcpy(lp, p, n);
    return lp;
}
