/*
 * aof_manifest: Redis 7.0's multi-part AOF manifest (appenddirname/
 * <appendfilename>.manifest), parsed and written as Redis's aof.c does
 * (aofLoadManifestFromFile, getAofManifestAsString), and the names of the
 * files it lists.
 *
 * A manifest is one line per file, `file <name> seq <n> type b|h|i`: at most
 * one base (b, the snapshot of the last rewrite: <appendfilename>.<seq>.base.rdb
 * or .base.aof), history files (h, the previous base and incr files, to be
 * deleted), and incr files (i, <appendfilename>.<seq>.incr.aof, the commands
 * since the base, in ascending seq).  A name that needs it is written in
 * double quotes with Redis's escapes (sdscatrepr) and read back with
 * sdssplitargs rules.  Parsing checks what Redis checks, with Redis's error
 * texts.
 *
 * No threads, no files: the caller reads and writes the bytes.  A manifest
 * belongs to whoever holds it.
 */
#ifndef PERCORE_AOF_MANIFEST_H
#define PERCORE_AOF_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>

#define AOF_MANIFEST_SUFFIX ".manifest"
#define AOF_MANIFEST_MAX_LINE 1024  /* Redis MANIFEST_MAX_LINE: longer lines are refused */

enum aof_file_type {
    AOF_FILE_BASE = 'b',
    AOF_FILE_HISTORY = 'h',
    AOF_FILE_INCR = 'i',
};

/* one file of the manifest */
struct aof_file {
    char *name;     /* its name in appenddirname, never a path (owned, NUL-terminated) */
    long long seq;  /* its sequence number (never 0) */
    char type;      /* enum aof_file_type */
};

struct aof_manifest {
    struct aof_file *base;      /* the base file, NULL: none (owned) */
    struct aof_file *history;   /* history files, in manifest order */
    size_t history_len;
    struct aof_file *incr;      /* incr files, ascending seq: the order to replay them in */
    size_t incr_len;
    long long base_seq;         /* the last base seq handed out (Redis curr_base_file_seq) */
    long long incr_seq;         /* the last incr seq handed out (curr_incr_file_seq) */
};

/* why a manifest was refused, as Redis logs it (after "*** FATAL AOF MANIFEST FILE ERROR ***") */
struct aof_manifest_error {
    const char *msg;                        /* Redis's text, e.g. "Invalid AOF manifest file format" */
    int line;                               /* 1-based line, 0: not about a line (Redis prints none) */
    char text[AOF_MANIFEST_MAX_LINE + 1];   /* the line, trimmed (Redis ">>> '%s'"), when line > 0 */
};

/* an empty manifest (no base, no files) */
void aof_manifest_init(struct aof_manifest *am);
/* free its files; it is empty again */
void aof_manifest_deinit(struct aof_manifest *am);

/*
 * Parse a manifest file's bytes text[0..len) into am (initialized by the
 * call).  0 ok; -1 refused, err filled and am left empty.  Lines starting
 * with '#' are skipped; unknown key/value pairs after the three are ignored
 * (Redis's forward compatibility).
 */
int aof_manifest_parse(struct aof_manifest *am, const char *text, size_t len, struct aof_manifest_error *err);

/* the manifest's text: the base, then history, then incr files, one line each; a new buffer
 * (mem_release it), *len its length */
char *aof_manifest_format(const struct aof_manifest *am, size_t *len);

/* "<appendfilename>.manifest", a new string (mem_release it) */
char *aof_manifest_file_name(const char *appendfilename);

/* Redis getNewBaseFileNameAndMarkPreAsHistory: the base (if any) becomes the first history file;
 * a new base <appendfilename>.<seq>.base.rdb (rdb_preamble) or .base.aof; its name (am's) */
const char *aof_manifest_new_base(struct aof_manifest *am, const char *appendfilename, bool rdb_preamble);
/* Redis getNewIncrAofName: a new last incr file <appendfilename>.<seq>.incr.aof; its name (am's) */
const char *aof_manifest_new_incr(struct aof_manifest *am, const char *appendfilename);
/* Redis getLastIncrAofName: the last incr file's name, a new one when there is none */
const char *aof_manifest_last_incr(struct aof_manifest *am, const char *appendfilename);
/* Redis markRewrittenIncrAofAsHistory: the incr files (all but the last when keep_last, the one
 * being written) become history files, ahead of the others */
void aof_manifest_incr_to_history(struct aof_manifest *am, bool keep_last);
/* forget the history files (once they are deleted) */
void aof_manifest_clear_history(struct aof_manifest *am);

#endif
