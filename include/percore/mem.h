/*
 * mem: the allocator for everything (mimalloc).
 *
 * Every allocation goes through these wrappers so that each shard thread
 * allocates from its own thread-local mimalloc heap (mimalloc's default heap
 * is per thread).  Allocation failure aborts with a message: like Redis, an
 * in-memory server out of address space has no useful way to go on, and
 * maxmemory is the mechanism that keeps it from getting there.
 */
#ifndef PERCORE_MEM_H
#define PERCORE_MEM_H

#include <stddef.h>

void *mem_alloc(size_t size);
void *mem_calloc(size_t n, size_t size);
void *mem_realloc(void *ptr, size_t size);
/* mem_realloc that, shrinking, moves to a smaller block whenever one would do (mimalloc's realloc
 * keeps a block down to half its size): what an owner that shrinks often gets back */
void *mem_resize(void *ptr, size_t size);
void  mem_release(void *ptr);
/* zeroed, aligned to align (a power of two): for structs with _Alignas members (a line of their own) */
void *mem_calloc_aligned(size_t n, size_t size, size_t align);
char *mem_strndup(const char *s, size_t n);
/* usable size of a block, for memory accounting */
size_t mem_usable(const void *ptr);

#endif
