/*
 * slot: key -> hash slot, exactly as Redis Cluster computes it.
 *
 * slot = CRC16-XMODEM(key) mod 16384, where only the part between the first
 * '{' and the next '}' is hashed when that part is non-empty (hash tags).
 */
#ifndef PERCORE_SLOT_H
#define PERCORE_SLOT_H

#include <stddef.h>
#include <stdint.h>

#define SLOT_COUNT 16384

uint16_t slot_crc16(const char *buf, size_t len);
unsigned slot_of_key(const char *key, size_t len);

#endif
