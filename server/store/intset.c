/*
 * intset: sorted integers at the narrowest common width (see
 * include/percore/intset.h).
 *
 * Design.  Redis's intset.c: a header {width, count} and a packed array.
 * Adding a value that needs a wider type upgrades every value in place,
 * back to front, and the new value goes to one end (it is outside the old
 * range, so it is the new minimum or maximum).  The array never narrows
 * again (Redis doesn't either).  Values are read and written with memcpy, so
 * nothing relies on alignment.  Every change reallocates to the exact size.
 *
 * Threading: an intset belongs to the shard thread that owns its object.
 */
#include "percore/intset.h"

#include "percore/mem.h"

#include <assert.h>
#include <string.h>

struct intset {
    uint32_t width;   /* bytes per value: 2, 4 or 8 */
    uint32_t length;  /* values */
    char contents[];  /* length values of `width` bytes, ascending */
};

static unsigned width_of(int64_t v)
{
    if (v < INT32_MIN || v > INT32_MAX)
        return 8;
    if (v < INT16_MIN || v > INT16_MAX)
        return 4;
    return 2;
}

static int64_t get_at(const struct intset *is, size_t pos, unsigned width)
{
    const char *p = is->contents + pos * width;
    if (width == 8) {
        int64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    if (width == 4) {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    int16_t v;
    memcpy(&v, p, 2);
    return v;
}

static void set_at(struct intset *is, size_t pos, int64_t value)
{
    char *p = is->contents + pos * is->width;
    if (is->width == 8) {
        memcpy(p, &value, 8);
    } else if (is->width == 4) {
        int32_t v = (int32_t)value;
        memcpy(p, &v, 4);
    } else {
        int16_t v = (int16_t)value;
        memcpy(p, &v, 2);
    }
}

struct intset *intset_create(void)
{
    struct intset *is = mem_alloc(sizeof *is);
    is->width = 2;
    is->length = 0;
    return is;
}

void intset_destroy(struct intset **is)
{
    if (is == NULL || *is == NULL)
        return;
    mem_release(*is);
    *is = NULL;
}

static struct intset *resize(struct intset *is, size_t len)
{
    return mem_realloc(is, sizeof *is + len * is->width);
}

/* binary search: true and *pos = index if found, else false and *pos = insert point */
static bool search(const struct intset *is, int64_t v, size_t *pos)
{
    size_t lo = 0, hi = is->length;
    if (is->length == 0) {
        *pos = 0;
        return false;
    }
    /* the common append/prepend cases without a search */
    if (v > get_at(is, is->length - 1, is->width)) {
        *pos = is->length;
        return false;
    }
    if (v < get_at(is, 0, is->width)) {
        *pos = 0;
        return false;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t cur = get_at(is, mid, is->width);
        if (cur < v) {
            lo = mid + 1;
        } else if (cur > v) {
            hi = mid;
        } else {
            *pos = mid;
            return true;
        }
    }
    *pos = lo;
    return false;
}

bool intset_add(struct intset **isp, int64_t v)
{
    struct intset *is = *isp;
    unsigned w = width_of(v);
    assert(is->length < UINT32_MAX);
    if (w > is->width) {
        /* upgrade back to front; v is beyond every value, so it goes at an end */
        unsigned old = is->width;
        size_t n = is->length, prepend = v < 0 ? 1 : 0;
        is->width = w;
        is = resize(is, n + 1);
        while (n--)
            set_at(is, n + prepend, get_at(is, n, old));
        set_at(is, prepend ? 0 : is->length, v);
        is->length++;
        *isp = is;
        return true;
    }
    size_t pos;
    if (search(is, v, &pos))
        return false;
    is = resize(is, (size_t)is->length + 1);
    memmove(is->contents + (pos + 1) * is->width, is->contents + pos * is->width,
            (is->length - pos) * is->width);
    set_at(is, pos, v);
    is->length++;
    *isp = is;
    return true;
}

bool intset_remove(struct intset **isp, int64_t v)
{
    struct intset *is = *isp;
    size_t pos;
    if (width_of(v) > is->width || !search(is, v, &pos))
        return false;
    memmove(is->contents + pos * is->width, is->contents + (pos + 1) * is->width,
            (is->length - pos - 1) * is->width);
    is->length--;
    *isp = resize(is, is->length);
    return true;
}

bool intset_find(const struct intset *is, int64_t v)
{
    size_t pos;
    return width_of(v) <= is->width && search(is, v, &pos);
}

size_t intset_len(const struct intset *is)
{
    return is->length;
}

int64_t intset_get(const struct intset *is, size_t i)
{
    assert(i < is->length);
    return get_at(is, i, is->width);
}

unsigned intset_width(const struct intset *is)
{
    return is->width;
}

size_t intset_bytes(const struct intset *is)
{
    return mem_usable(is);
}

const void *intset_data(const struct intset *is, size_t *len)
{
    *len = sizeof *is + (size_t)is->length * is->width;
    return is;
}

struct intset *intset_from_data(const void *p, size_t n)
{
    struct intset h;
    if (n < sizeof h)
        return NULL;
    memcpy(&h, p, sizeof h);
    if (h.width != 2 && h.width != 4 && h.width != 8)
        return NULL;
    if ((n - sizeof h) % h.width != 0 || (n - sizeof h) / h.width != h.length)
        return NULL;
    struct intset *is = mem_alloc(n);
    memcpy(is, p, n);
    /* the width may exceed what the values need (intsets never narrow) */
    for (size_t i = 1; i < is->length; i++) {
        if (get_at(is, i - 1, is->width) >= get_at(is, i, is->width)) {
            mem_release(is);
            return NULL;
        }
    }
    return is;
}
