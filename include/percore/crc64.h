/*
 * crc64: Redis's CRC-64 (the Jones polynomial 0xad93d23594c935a9, reflected
 * input and output, initial value 0, no final xor), the checksum of DUMP
 * payloads and RDB files.  crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9ca.
 *
 * Pure function over a table built at compile time: any thread may call it.
 */
#ifndef PERCORE_CRC64_H
#define PERCORE_CRC64_H

#include <stddef.h>
#include <stdint.h>

/* crc continued over p[0..n) (start with 0) */
uint64_t crc64(uint64_t crc, const void *p, size_t n);

#endif
