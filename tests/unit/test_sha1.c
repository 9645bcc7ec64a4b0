/*
 * test_sha1: sha1_hex against known digests (FIPS 180-1 examples, and
 * lengths around the 55/56/64-byte padding boundaries, digests from Python's
 * hashlib), as EVAL names scripts.
 */
#include "percore/sha1.h"

#include "check.h"

#include <string.h>

static const struct {
    const char *text;
    size_t len;
    const char *hex;
} texts[] = {
    {"", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
    {"abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d"},
    {"The quick brown fox jumps over the lazy dog", 43, "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12"},
};

/* bytes (i * 7 + 3) & 0xff, i < len */
static const struct {
    size_t len;
    const char *hex;
} patterns[] = {
    {55, "ddf57317ef34bfee3b6df83d359098930eb278bc"},
    {56, "a0d492bb0fc889d0eca3bc137066ab6f4f74f369"},
    {63, "c55856749bef509bdfe6bfebfc7bf4e793e82132"},
    {64, "bede92be29c3874e1b54ddc77988d606fc857a8e"},
    {65, "b05a80522b053d6dc7e0a517d0e70212c7dad11f"},
    {119, "504e27376a6e0f0dba8295b85cb25dc4dfa17d23"},
    {120, "82134b02fb3f702491be9bed581eeab59334acb2"},
    {1000, "4231a8a50a10fa9758db8ec71fdef855b751048a"},
};

int main(void)
{
    char hex[41];
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        sha1_hex(hex, texts[i].text, texts[i].len);
        CHECK(strcmp(hex, texts[i].hex) == 0);
    }
    unsigned char buf[1000];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)((i * 7 + 3) & 0xff);
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        sha1_hex(hex, buf, patterns[i].len);
        CHECK(strcmp(hex, patterns[i].hex) == 0);
    }
    return check_done("test_sha1");
}
