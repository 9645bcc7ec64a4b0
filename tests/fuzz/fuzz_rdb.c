/*
 * fuzz_rdb: libFuzzer target for the RDB reader (server/store/rdb.c): the
 * values RESTORE takes (a DUMP payload past its checksum) and whole files
 * (dump.rdb, an AOF's base) as the start loads them.  No server.
 *
 * Input: a control byte, then the bytes.  Control bit 0: 0 the bytes are one
 * value (type byte first), 1 a whole file.  Bit 1: the encoding limits are
 * Redis's defaults, or tiny (2 entries, 4 bytes), so that a loaded value
 * converts between encodings as it grows.  Bits 2-5: for a value, the RDB
 * version it was "written by" (1..11; the reader refuses encodings newer
 * than that).  The checksum is not what stops bad bytes here: a value
 * skips it (RESTORE checks it first, arbitrary bytes would rarely pass), and
 * a file whose checksum is 0 is not checked, as Redis's.
 *
 * Checked: every input is refused or loaded without a crash, a leak or a
 * read out of bounds (ASan, UBSan); a value that loads takes no more bytes
 * than it was given, and saved again it is a valid value whose load and
 * second save give the same bytes (what a RESTORE of our own DUMP would do;
 * of a hash table, the same type: its order may change).
 * A file's keys are each handed out once and destroyed.
 *
 * Threading: libFuzzer's thread only.
 */
#include "percore/object.h"
#include "percore/rdb.h"

#include "fuzz_input.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define CTL_FILE 0x01
#define CTL_TINY 0x02

static struct rdb_limits limits(uint8_t control)
{
    if (control & CTL_TINY)
        return (struct rdb_limits){{2, 4}, {2, 2, 4}, 2, 4, 2};
    return (struct rdb_limits){{128, 64}, {512, 128, 64}, 128, 64, -2}; /* Redis 7.0's defaults */
}

static int drop_key(void *arg, struct rdb_file_key *k)
{
    size_t *keys = arg;
    FUZZ_CHECK(k->val != NULL);
    object_destroy(&k->val);
    (*keys)++;
    return 0;
}

static void one_file(const uint8_t *p, size_t n, const struct rdb_limits *lim)
{
    struct rdb_file_info info;
    char err[256];
    size_t keys = 0;
    int rc = rdb_file_load(p, n, lim, drop_key, NULL, &keys, &info, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == -1);
    if (rc == 0) {
        FUZZ_CHECK(info.keys == keys);
        FUZZ_CHECK(info.used <= n);
    }
}

static void one_value(const uint8_t *p, size_t n, unsigned version, const struct rdb_limits *lim)
{
    size_t used = 0;
    struct object *o = rdb_load_value(p, n, version, lim, &used);
    if (!o)
        return;
    FUZZ_CHECK(used > 0 && used <= n);
    struct rdb_save_opts opts = {true, lim->list_fill, 1, false};
    struct rdb_buf first = {0}, second = {0};
    rdb_save_value(&first, o, &opts);
    object_destroy(&o);
    size_t again = 0;
    struct object *back = rdb_load_value(first.p, first.len, RDB_VERSION, lim, &again);
    FUZZ_CHECK(back != NULL);
    FUZZ_CHECK(again == first.len);
    rdb_save_value(&second, back, &opts);
    object_destroy(&back);
    /* a hash table's order may differ once rebuilt (RDB_TYPE_SET 2, RDB_TYPE_HASH 4); nothing else may */
    FUZZ_CHECK(second.len > 0 && second.p[0] == first.p[0]);
    if (first.p[0] != 2 && first.p[0] != 4)
        FUZZ_CHECK(second.len == first.len && memcmp(second.p, first.p, first.len) == 0);
    rdb_buf_release(&first);
    rdb_buf_release(&second);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t control = data[0];
    struct rdb_limits lim = limits(control);
    if (control & CTL_FILE)
        one_file(data + 1, size - 1, &lim);
    else
        one_value(data + 1, size - 1, (unsigned)((control >> 2) & 0x0f) % RDB_VERSION_MAX + 1, &lim);
    return 0;
}
