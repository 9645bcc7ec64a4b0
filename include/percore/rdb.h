/*
 * rdb: one value in Redis's RDB format, written and read (Redis's rdb.c
 * rdbSaveObject / rdbLoadObject), and DUMP's payload around it.
 *
 * The writer produces exactly what Redis 7.0 (RDB version 10) writes for
 * the same value: strings int-encoded when Redis would and LZF-compressed
 * over 20 bytes when compression is on; lists as QUICKLIST_2 nodes of
 * listpacks cut where Redis 7.0's quicklist cuts them; integer sets as
 * INTSET, other sets as SET; small hashes and sorted sets as listpacks (Redis's
 * listpack format, built here), big ones as HASH and ZSET_2.
 *
 * The reader takes every value encoding of RDB versions 1 to 11 (zipmaps,
 * ziplists, intsets, quicklists of ziplists or listpacks, 7.2's set
 * listpack) and builds percore's objects with its own thresholds
 * (struct rdb_limits, from the config).  Nothing in the input is trusted:
 * every length is bounded by what is left of the input, every packed
 * structure is validated whole before use, duplicate set members, hash
 * fields and sorted-set members are errors (Redis's deep sanitization), and
 * an empty collection is an error, as in Redis.
 *
 * No threads, no replies: the command layer calls these on the shard that
 * owns the object.
 */
#ifndef PERCORE_RDB_H
#define PERCORE_RDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "percore/hash.h"
#include "percore/object.h"
#include "percore/set.h"

#define RDB_VERSION 10      /* what DUMP writes and RESTORE accepts at most (Redis 7.0) */
#define RDB_VERSION_MAX 11  /* the newest value encodings the reader knows (7.2's set listpack) */

/* percore's encoding thresholds, for the objects the reader builds */
struct rdb_limits {
    struct hash_limits hash;  /* hash-max-listpack-entries / -value */
    struct set_limits set;    /* set-max-intset-entries, set-max-listpack-* */
    size_t zset_max_entries;  /* zset-max-listpack-entries */
    size_t zset_max_value;    /* zset-max-listpack-value */
    int list_fill;            /* list-max-listpack-size */
};

/* how the writer lays a value out (Redis's config of the same names) */
struct rdb_save_opts {
    bool compress;            /* rdbcompression: LZF for strings over 20 bytes */
    int list_fill;            /* list-max-listpack-size: where list nodes are cut */
    int list_compress_depth;  /* list-compress-depth: inner nodes LZF-compressed */
    bool aof_base;            /* the file is an AOF's base (its aof-base AUX field) */
};

/* a growing byte buffer the writer appends to (mem_alloc'ed; release with rdb_buf_release) */
struct rdb_buf {
    char *p;      /* the bytes, NULL while empty */
    size_t len;   /* bytes written */
    size_t cap;   /* bytes allocated */
};
void rdb_buf_release(struct rdb_buf *b);
/* append p[0..n) */
void rdb_buf_put(struct rdb_buf *b, const void *p, size_t n);

/* append o's RDB type byte and value */
void rdb_save_value(struct rdb_buf *b, const struct object *o, const struct rdb_save_opts *opts);
/* append DUMP's payload: the value, RDB_VERSION (2 bytes LE), CRC64 of all that (8 bytes LE) */
void rdb_dump_payload(struct rdb_buf *b, const struct object *o, const struct rdb_save_opts *opts);

/* the bytes p[0..n) takes as an element of Redis's listpack (encoding, data, back-length; a canonical
 * integer stored as one), what Redis's lpBytes counts: a stream node is cut by it.  Any thread */
size_t rdb_lp_element_size(const char *p, size_t n);
/* the same for the integer v */
size_t rdb_lp_int_size(long long v);

/* append DUMP's footer to the payload that starts at b->p[start]: RDB_VERSION (2 bytes LE), CRC64 of the
 * payload and the version (8 bytes LE) */
void rdb_payload_footer(struct rdb_buf *b, size_t start);

/* a function library's record (FUNCTION DUMP, RDB files): RDB_OPCODE_FUNCTION2, then its code as a string
 * (LZF-compressed when compress, as rdbSaveRawString) */
void rdb_save_function(struct rdb_buf *b, const char *code, size_t len, bool compress);
/* the FUNCTION2 record at p[*off..n): its code into *code (mem_alloc'ed, NUL-terminated, the caller's), *off
 * past it; 0 ok, -2 the byte at *off is no FUNCTION2 opcode, -1 a bad record */
int rdb_load_function(const void *p, size_t n, size_t *off, char **code, size_t *len);

/* Redis verifyDumpPayload: at least the 10-byte footer, a version <= RDB_VERSION and a matching
 * CRC64; 0 ok (*version set), -1 not */
int rdb_verify_payload(const void *p, size_t n, unsigned *version);

/*
 * The value at p[0..n) (type byte first) written by RDB version `version`
 * (the reader refuses encodings newer than it); a new object the caller
 * owns, or NULL when the bytes are not a valid value.  *used, if asked, is
 * the bytes the value took (what follows is not looked at).
 */
struct object *rdb_load_value(const void *p, size_t n, unsigned version, const struct rdb_limits *lim,
                              size_t *used);

/*
 * Whole RDB files, as Redis 7.0 writes them (rdbSaveRio): the magic and AUX
 * fields, then per database a SELECTDB (and RESIZEDB when the count is
 * known), then each key as [EXPIRETIME_MS] type key value, then EOF and the
 * CRC64 of every byte before it.  A file may be written in chunks, each
 * starting with its own SELECTDB (a loader only switches database), so
 * several writers may interleave theirs; the caller keeps the CRC over the
 * chunks in the order they are written.
 */
/* "REDIS0010", then the AUX fields redis-ver, redis-bits, ctime, used-mem, aof-base */
void rdb_file_begin(struct rdb_buf *b, const char *redis_ver, long long ctime_s, long long used_mem,
                    const struct rdb_save_opts *opts);
/* SELECTDB db, and RESIZEDB keys expires when keys > 0 */
void rdb_file_select(struct rdb_buf *b, int db, uint64_t keys, uint64_t expires);
/* one key: its expire (ms unix time, -1 none), type, key, value */
void rdb_file_key(struct rdb_buf *b, const char *key, size_t klen, int64_t expire_ms, const struct object *val,
                  const struct rdb_save_opts *opts);
/* EOF and the checksum: crc is crc64 of every byte of the file before this call (it adds the EOF's);
 * !checksum writes 0 (rdbchecksum no) */
void rdb_file_end(struct rdb_buf *b, uint64_t crc, bool checksum);

/* a key read from a file: key bytes valid for the call, val the callee's to keep or destroy */
struct rdb_file_key {
    int db;             /* the last SELECTDB */
    const char *key;
    size_t klen;
    struct object *val;
    int64_t expire;     /* ms unix time, -1 none (EXPIRETIME / EXPIRETIME_MS) */
    long long idle_s;   /* IDLE, -1 none */
    int freq;           /* FREQ, -1 none */
    size_t offset;      /* bytes of the file read so far (through this key) */
};
/* 0 go on, -1 refuse the key (the load fails: its database is out of range) */
typedef int rdb_file_fn(void *arg, struct rdb_file_key *k);
/* a function library's code (a FUNCTION2 record), valid for the call: 0 go on, -1 the load fails */
typedef int rdb_function_fn(void *arg, const char *code, size_t len);
struct rdb_file_info {
    unsigned version;           /* the file's RDB version */
    uint64_t keys;              /* keys handed to fn */
    unsigned functions_skipped; /* FUNCTION2 records (libraries) skipped: no rdb_function_fn */
    /* the AUX fields Redis logs at load, filled as they are read (fn may look at them) */
    char redis_ver[32];         /* "redis-ver", "" none */
    long long ctime;            /* "ctime", unix s, -1 none */
    long long used_mem;         /* "used-mem", bytes, -1 none */
    size_t used;                /* bytes the file took through its checksum (an AOF's tail may follow) */
};
/*
 * Read the RDB file p[0..n) of any version 1..11 (Redis rdbLoadRioWithLoadingCtx): every key to fn
 * and every function library to ffn (NULL: skipped), with arg, in file order (info is filled as the file is
 * read); the checksum checked when the file has a non-zero one.  0 ok; -1 not a valid file (err says why
 * and where), keys handed out before stay handed.
 */
int rdb_file_load(const void *p, size_t n, const struct rdb_limits *lim, rdb_file_fn *fn, rdb_function_fn *ffn,
                  void *arg, struct rdb_file_info *info, char *err, size_t errcap);

#endif
