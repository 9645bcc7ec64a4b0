/*
 * crc64: Redis's CRC-64 (crc64.h), one table lookup per byte.
 *
 * Design: the reflected form of the Jones polynomial (0x95ac9329ac4bc9b5)
 * drives the classic byte-at-a-time algorithm; the 256-entry table is filled
 * once, on first use (pthread_once), and only read afterwards.
 */
#include "percore/crc64.h"

#include <pthread.h>

#define CRC64_POLY_REFLECTED 0x95ac9329ac4bc9b5ULL

static uint64_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_fill(void)
{
    for (unsigned i = 0; i < 256; i++) {
        uint64_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ CRC64_POLY_REFLECTED : c >> 1;
        table[i] = c;
    }
}

uint64_t crc64(uint64_t crc, const void *p, size_t n)
{
    const unsigned char *s = p;
    pthread_once(&table_once, table_fill);
    for (size_t i = 0; i < n; i++)
        crc = table[(crc ^ s[i]) & 0xff] ^ (crc >> 8);
    return crc;
}
