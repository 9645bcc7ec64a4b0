/*
 * test_slot: CRC16-XMODEM and the hash-tag rules of Redis Cluster's
 * keyHashSlot (slot values from an independent bitwise CRC16, which the
 * table-driven CRC is also checked against for every length up to 64).
 */
#include "percore/slot.h"

#include "check.h"

#define SLOT(s) slot_of_key(s, sizeof(s) - 1)

/* CRC16-XMODEM one bit at a time: the definition the table-driven code must match */
static uint16_t crc16_bitwise(const unsigned char *p, size_t len)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)(p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

int main(void)
{
    /* every length 0..64 (odd and even: the code takes two bytes a step), pseudo-random bytes */
    unsigned char buf[64];
    uint32_t x = 2463534242u;
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < sizeof buf; i++) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            buf[i] = (unsigned char)x;
        }
        for (size_t len = 0; len <= sizeof buf; len++)
            CHECK_EQ_LL(slot_crc16((const char *)buf, len), crc16_bitwise(buf, len));
    }
    CHECK_EQ_LL(slot_crc16("123456789", 9), 0x31C3);
    CHECK_EQ_LL(slot_crc16("", 0), 0);
    CHECK_EQ_LL(slot_crc16("\xff\x00\x80", 3), 0x5eeb);

    CHECK_EQ_LL(SLOT("foo"), 12182);
    CHECK_EQ_LL(SLOT("bar"), 5061);
    CHECK_EQ_LL(SLOT("user1000"), 3443);
    CHECK_EQ_LL(SLOT("somekey"), 11058);
    CHECK_EQ_LL(SLOT(""), 0);
    CHECK_EQ_LL(SLOT("123456789"), 0x31C3 & 0x3FFF);

    /* a tag: only what is between the first '{' and the next '}' */
    CHECK_EQ_LL(SLOT("{user1000}.following"), SLOT("user1000"));
    CHECK_EQ_LL(SLOT("{user1000}.followers"), SLOT("user1000"));
    CHECK_EQ_LL(SLOT("foo{bar}{zap}"), SLOT("bar"));
    CHECK_EQ_LL(SLOT("foo{{bar}}zap"), SLOT("{bar"));
    CHECK_EQ_LL(SLOT("a{b}"), SLOT("b"));
    /* an empty tag or no closing brace: the whole key */
    CHECK_EQ_LL(SLOT("foo{}{bar}"), slot_crc16("foo{}{bar}", 10) & 0x3FFF);
    CHECK(SLOT("foo{}{bar}") != SLOT("bar"));
    CHECK_EQ_LL(SLOT("foo{bar"), slot_crc16("foo{bar", 7) & 0x3FFF);
    CHECK_EQ_LL(SLOT("}foo{"), slot_crc16("}foo{", 5) & 0x3FFF);
    CHECK_EQ_LL(SLOT("{}"), slot_crc16("{}", 2) & 0x3FFF);
    /* binary keys, and slots stay in range */
    CHECK_EQ_LL(SLOT("a\0{b}"), SLOT("b"));
    unsigned max = 0;
    char key[8];
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(key, sizeof(key), "k%d", i);
        unsigned s = slot_of_key(key, (size_t)n);
        max = s > max ? s : max;
    }
    CHECK(max < SLOT_COUNT && max > SLOT_COUNT - 100);
    return check_done("test_slot");
}
