/*
 * aof_manifest: Redis 7.0's AOF manifest, parsed and written (aof_manifest.h).
 *
 * Design.  Parsing follows aofLoadManifestFromFile step by step, so that
 * every file Redis takes is taken and every file it refuses is refused with
 * its text: the bytes are cut as fgets() into a 1025-byte buffer cuts them
 * (a line is at most 1024 bytes through its '\n'; a C string, so a NUL byte
 * ends it); a chunk starting with '#' is a comment; a chunk without its
 * '\n' is "too long" (the last line of a file needs its '\n' too, as in
 * Redis); the line is trimmed of " \t\r\n", split into words with
 * sdssplitargs rules (the RESP parser's inline splitter, the same rules),
 * and read as key/value pairs compared without case.  Words are used as C
 * strings (Redis's strcasecmp, atoll and sdsnew stop at a NUL byte).
 * Writing is getAofManifestAsString: the base, the history files, the incr
 * files, each "file <name> seq <n> type <c>\n", the name in sdscatrepr's
 * quotes when sdsneedsrepr says so.
 *
 * Threading: none; a manifest is its holder's.
 */
#include "percore/aof_manifest.h"

#include "percore/mem.h"
#include "percore/resp.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASE_SUFFIX ".base"
#define INCR_SUFFIX ".incr"
#define RDB_SUFFIX ".rdb"
#define AOF_SUFFIX ".aof"

static const char err_empty[] = "Found an empty AOF manifest";
static const char err_long[] = "The AOF manifest file contains too long line";
static const char err_format[] = "Invalid AOF manifest file format";
static const char err_path[] = "File can't be a path, just a filename";
static const char err_dup_base[] = "Found duplicate base file information";
static const char err_seq[] = "Found a non-monotonic sequence number";
static const char err_type[] = "Unknown AOF file type";

void aof_manifest_init(struct aof_manifest *am)
{
    memset(am, 0, sizeof(*am));
}

static void file_list_release(struct aof_file *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mem_release(v[i].name);
    mem_release(v);
}

void aof_manifest_deinit(struct aof_manifest *am)
{
    if (am->base)
        mem_release(am->base->name);
    mem_release(am->base);
    file_list_release(am->history, am->history_len);
    file_list_release(am->incr, am->incr_len);
    aof_manifest_init(am);
}

/* append f to the list *v of *n files (at the front when front) */
static void file_list_add(struct aof_file **v, size_t *n, struct aof_file f, bool front)
{
    *v = mem_realloc(*v, (*n + 1) * sizeof(**v));
    if (front) {
        memmove(*v + 1, *v, *n * sizeof(**v));
        (*v)[0] = f;
    } else {
        (*v)[*n] = f;
    }
    (*n)++;
}

/* Redis's strcasecmp(word, key) on a word that may hold a NUL byte */
static bool word_is(const struct resp_arg *w, const char *key)
{
    size_t n = strnlen(w->ptr, w->len);
    return n == strlen(key) && strncasecmp(w->ptr, key, n) == 0;
}

static bool is_trim_char(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* one line's words into *f (its name owned); NULL ok, or the error's text */
static const char *parse_words(const struct resp_arg *argv, int argc, struct aof_file *f)
{
    if (argc < 6 || argc % 2) /* 'argc < 6' leaves room for keys of later versions */
        return err_format;
    for (int i = 0; i < argc; i += 2) {
        const struct resp_arg *v = &argv[i + 1];
        size_t vlen = strnlen(v->ptr, v->len);
        if (word_is(&argv[i], "file")) {
            mem_release(f->name);
            f->name = mem_strndup(v->ptr, vlen);
            if (strchr(f->name, '/') || strchr(f->name, '\\'))
                return err_path;
        } else if (word_is(&argv[i], "seq")) {
            char num[64];
            size_t n = vlen < sizeof(num) - 1 ? vlen : sizeof(num) - 1;
            memcpy(num, v->ptr, n);
            num[n] = '\0';
            f->seq = strtoll(num, NULL, 10); /* atoll */
        } else if (word_is(&argv[i], "type")) {
            f->type = vlen ? v->ptr[0] : '\0';
        }
    }
    if (!f->name || !f->seq || !f->type)
        return err_format;
    return NULL;
}

/* file f (owned) into am, in its place; NULL ok, or the error's text */
static const char *manifest_add(struct aof_manifest *am, struct aof_file f)
{
    switch (f.type) {
    case AOF_FILE_BASE:
        if (am->base)
            return err_dup_base;
        am->base = mem_alloc(sizeof(*am->base));
        *am->base = f;
        am->base_seq = f.seq;
        return NULL;
    case AOF_FILE_HISTORY:
        file_list_add(&am->history, &am->history_len, f, false);
        return NULL;
    case AOF_FILE_INCR:
        if (f.seq <= (am->incr_len ? am->incr[am->incr_len - 1].seq : 0))
            return err_seq;
        file_list_add(&am->incr, &am->incr_len, f, false);
        am->incr_seq = f.seq;
        return NULL;
    default:
        return err_type;
    }
}

int aof_manifest_parse(struct aof_manifest *am, const char *text, size_t len, struct aof_manifest_error *err)
{
    struct resp_parser words;
    const char *msg = NULL;
    int line = 0;

    aof_manifest_init(am);
    resp_parser_init(&words);
    memset(err, 0, sizeof(*err));
    if (len == 0)
        msg = err_empty;
    for (size_t pos = 0; !msg && pos < len;) {
        /* fgets(buf, MANIFEST_MAX_LINE + 1): through the '\n', at most 1024 bytes */
        size_t take = len - pos < AOF_MANIFEST_MAX_LINE ? len - pos : AOF_MANIFEST_MAX_LINE;
        const char *nl = memchr(text + pos, '\n', take);
        if (nl)
            take = (size_t)(nl - (text + pos)) + 1;
        const char *chunk = text + pos;
        size_t clen = strnlen(chunk, take); /* what strchr and sdsnew see */
        pos += take;
        line++;
        if (clen > 0 && chunk[0] == '#')
            continue;
        if (!memchr(chunk, '\n', clen)) {
            msg = err_long;
            break;
        }
        size_t a = 0, b = clen;
        while (a < b && is_trim_char(chunk[a]))
            a++;
        while (b > a && is_trim_char(chunk[b - 1]))
            b--;
        memcpy(err->text, chunk + a, b - a);
        err->text[b - a] = '\0';
        err->line = line;
        if (a == b || !resp_split_words(&words, chunk + a, b - a)) {
            msg = err_format;
            break;
        }
        struct aof_file f = {0};
        msg = parse_words(words.argv, words.argc, &f);
        if (!msg)
            msg = manifest_add(am, f);
        if (msg) {
            mem_release(f.name);
        } else {
            err->line = 0;
            err->text[0] = '\0';
        }
    }
    resp_parser_deinit(&words);
    if (!msg)
        return 0;
    err->msg = msg;
    aof_manifest_deinit(am);
    return -1;
}

/* Redis sdsneedsrepr */
static bool name_needs_quotes(const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\\' || c == '"' || !isprint(c) || isspace(c))
            return true;
    }
    return false;
}

/* a growing text */
struct text {
    char *p;
    size_t len, cap;
};

static void text_add(struct text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->p = mem_realloc(t->p, t->cap);
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

/* Redis sdscatrepr */
static void text_add_quoted(struct text *t, const char *s)
{
    text_add(t, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        switch (c) {
        case '\\': text_add(t, "\\\\", 2); break;
        case '"': text_add(t, "\\\"", 2); break;
        case '\n': text_add(t, "\\n", 2); break;
        case '\r': text_add(t, "\\r", 2); break;
        case '\t': text_add(t, "\\t", 2); break;
        case '\a': text_add(t, "\\a", 2); break;
        case '\b': text_add(t, "\\b", 2); break;
        default:
            if (isprint(c)) {
                text_add(t, s, 1);
            } else {
                snprintf(esc, sizeof(esc), "\\x%02x", c);
                text_add(t, esc, 4);
            }
        }
    }
    text_add(t, "\"", 1);
}

static void text_add_file(struct text *t, const struct aof_file *f)
{
    char tail[64];
    text_add(t, "file ", 5);
    if (name_needs_quotes(f->name))
        text_add_quoted(t, f->name);
    else
        text_add(t, f->name, strlen(f->name));
    int n = snprintf(tail, sizeof(tail), " seq %lld type %c\n", f->seq, f->type);
    text_add(t, tail, (size_t)n);
}

char *aof_manifest_format(const struct aof_manifest *am, size_t *len)
{
    struct text t = {0};
    text_add(&t, "", 0);
    if (am->base)
        text_add_file(&t, am->base);
    for (size_t i = 0; i < am->history_len; i++)
        text_add_file(&t, &am->history[i]);
    for (size_t i = 0; i < am->incr_len; i++)
        text_add_file(&t, &am->incr[i]);
    *len = t.len;
    return t.p;
}

/* "<appendfilename><mid><suffix>" */
static char *name_join(const char *appendfilename, const char *mid, const char *suffix)
{
    size_t a = strlen(appendfilename), m = strlen(mid), s = strlen(suffix);
    char *p = mem_alloc(a + m + s + 1);
    memcpy(p, appendfilename, a);
    memcpy(p + a, mid, m);
    memcpy(p + a + m, suffix, s + 1);
    return p;
}

char *aof_manifest_file_name(const char *appendfilename)
{
    return name_join(appendfilename, "", AOF_MANIFEST_SUFFIX);
}

/* "<appendfilename>.<seq><kind><format>" */
static char *seq_name(const char *appendfilename, long long seq, const char *kind, const char *format)
{
    char mid[64];
    snprintf(mid, sizeof(mid), ".%lld%s%s", seq, kind, format);
    return name_join(appendfilename, mid, "");
}

const char *aof_manifest_new_base(struct aof_manifest *am, const char *appendfilename, bool rdb_preamble)
{
    if (am->base) {
        am->base->type = AOF_FILE_HISTORY;
        file_list_add(&am->history, &am->history_len, *am->base, true);
    } else {
        am->base = mem_alloc(sizeof(*am->base));
    }
    am->base_seq++;
    *am->base = (struct aof_file){seq_name(appendfilename, am->base_seq, BASE_SUFFIX,
                                           rdb_preamble ? RDB_SUFFIX : AOF_SUFFIX),
                                  am->base_seq, AOF_FILE_BASE};
    return am->base->name;
}

const char *aof_manifest_new_incr(struct aof_manifest *am, const char *appendfilename)
{
    am->incr_seq++;
    struct aof_file f = {seq_name(appendfilename, am->incr_seq, INCR_SUFFIX, AOF_SUFFIX), am->incr_seq,
                         AOF_FILE_INCR};
    file_list_add(&am->incr, &am->incr_len, f, false);
    return am->incr[am->incr_len - 1].name;
}

const char *aof_manifest_last_incr(struct aof_manifest *am, const char *appendfilename)
{
    if (!am->incr_len)
        return aof_manifest_new_incr(am, appendfilename);
    return am->incr[am->incr_len - 1].name;
}

void aof_manifest_incr_to_history(struct aof_manifest *am, bool keep_last)
{
    size_t moved = keep_last && am->incr_len ? am->incr_len - 1 : am->incr_len;
    if (!moved)
        return;
    /* Redis walks them from the last one back, each to the history's head: they keep their order */
    struct aof_file *h = mem_alloc((moved + am->history_len) * sizeof(*h));
    for (size_t i = 0; i < moved; i++) {
        h[i] = am->incr[i];
        h[i].type = AOF_FILE_HISTORY;
    }
    if (am->history_len)
        memcpy(h + moved, am->history, am->history_len * sizeof(*h));
    mem_release(am->history);
    am->history = h;
    am->history_len += moved;
    memmove(am->incr, am->incr + moved, (am->incr_len - moved) * sizeof(*am->incr));
    am->incr_len -= moved;
}

void aof_manifest_clear_history(struct aof_manifest *am)
{
    file_list_release(am->history, am->history_len);
    am->history = NULL;
    am->history_len = 0;
}
