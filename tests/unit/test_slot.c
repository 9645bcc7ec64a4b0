/*
 * test_slot: CRC16-XMODEM and the hash-tag rules of Redis Cluster's
 * keyHashSlot (slot values from an independent bitwise CRC16).
 */
#include "percore/slot.h"

#include "check.h"

#define SLOT(s) slot_of_key(s, sizeof(s) - 1)

int main(void)
{
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
