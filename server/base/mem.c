/*
 * mem: thin wrappers over mimalloc (see include/percore/mem.h).  mimalloc's
 * default heap is thread-local, so a shard thread's allocations come from
 * its own heap without any per-call heap argument.  Sanitizer builds
 * (PERCORE_LIBC_MALLOC) use libc's allocator so that ASan and TSan see
 * every allocation.
 */
#include "percore/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PERCORE_LIBC_MALLOC
#include <malloc.h>
#define mi_malloc malloc
#define mi_calloc calloc
#define mi_realloc realloc
#define mi_free free
#define mi_usable_size malloc_usable_size
#define mi_good_size(n) (n)
#else
#include <mimalloc.h>
#endif

static void mem_oom(size_t size)
{
    fprintf(stderr, "percore: out of memory allocating %zu bytes\n", size);
    abort();
}

void *mem_alloc(size_t size)
{
    void *p = mi_malloc(size);
    if (p == NULL && size != 0)
        mem_oom(size);
    return p;
}

void *mem_calloc(size_t n, size_t size)
{
    void *p = mi_calloc(n, size);
    if (p == NULL && n != 0 && size != 0)
        mem_oom(n * size);
    return p;
}

void *mem_realloc(void *ptr, size_t size)
{
    void *p = mi_realloc(ptr, size);
    if (p == NULL && size != 0)
        mem_oom(size);
    return p;
}

void *mem_resize(void *ptr, size_t size)
{
    size_t have = mi_usable_size(ptr);
    if (size >= have || mi_good_size(size) >= have)
        return mem_realloc(ptr, size);
    void *p = mem_alloc(size);
    memcpy(p, ptr, size);
    mi_free(ptr);
    return p;
}

void mem_release(void *ptr)
{
    mi_free(ptr);
}

void *mem_calloc_aligned(size_t n, size_t size, size_t align)
{
#ifdef PERCORE_LIBC_MALLOC
    size_t total = n * size;
    void *p = aligned_alloc(align, (total + align - 1) / align * align);
    if (p)
        memset(p, 0, total);
#else
    void *p = mi_calloc_aligned(n, size, align);
#endif
    if (p == NULL && n != 0 && size != 0)
        mem_oom(n * size);
    return p;
}

char *mem_strndup(const char *s, size_t n)
{
    char *p = mem_alloc(n + 1);
    for (size_t i = 0; i < n; i++)
        p[i] = s[i];
    p[n] = '\0';
    return p;
}

size_t mem_usable(const void *ptr)
{
    return ptr ? mi_usable_size((void *)ptr) : 0;
}
