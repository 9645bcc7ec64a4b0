/*
 * test_aof_manifest: Redis 7.0's AOF manifest.  The manifest of Redis's own
 * comment (aof.c) parsed and written back byte for byte; names that need
 * quotes written as sdscatrepr writes them and read back; comments, extra
 * keys, keys in any case and order; every refusal with Redis's text and
 * line (empty file, a line over 1024 bytes or without its '\n', a blank
 * line, too few or an odd number of words, unbalanced quotes, a path, a
 * missing or zero seq, a missing type, two bases, incr seqs not
 * increasing, an unknown type); file names and what a rewrite does to the
 * list (new base, new incr, incr files to history).
 */
#include "percore/aof_manifest.h"

#include "percore/mem.h"

#include "check.h"

#include <string.h>

static int parse(struct aof_manifest *am, const char *text, struct aof_manifest_error *err)
{
    return aof_manifest_parse(am, text, strlen(text), err);
}

/* text is refused with msg at line (0: no line) */
static void check_refused(const char *text, size_t len, const char *msg, int line)
{
    struct aof_manifest am;
    struct aof_manifest_error err;
    CHECK_EQ_LL(aof_manifest_parse(&am, text, len, &err), -1);
    CHECK(err.msg && strcmp(err.msg, msg) == 0);
    if (!err.msg || strcmp(err.msg, msg) != 0)
        fprintf(stderr, "  got \"%s\" for \"%.*s\"\n", err.msg ? err.msg : "(none)", (int)len, text);
    CHECK_EQ_LL(err.line, line);
    CHECK(am.base == NULL && am.incr_len == 0 && am.history_len == 0);
}

static void refused(const char *text, const char *msg, int line)
{
    check_refused(text, strlen(text), msg, line);
}

static void test_redis_example(void)
{
    static const char text[] = "file appendonly.aof.2.base.rdb seq 2 type b\n"
                               "file appendonly.aof.1.incr.aof seq 1 type h\n"
                               "file appendonly.aof.2.incr.aof seq 2 type h\n"
                               "file appendonly.aof.3.incr.aof seq 3 type h\n"
                               "file appendonly.aof.4.incr.aof seq 4 type i\n"
                               "file appendonly.aof.5.incr.aof seq 5 type i\n";
    struct aof_manifest am;
    struct aof_manifest_error err;
    CHECK_EQ_LL(parse(&am, text, &err), 0);
    CHECK(am.base && strcmp(am.base->name, "appendonly.aof.2.base.rdb") == 0);
    CHECK_EQ_LL(am.base->seq, 2);
    CHECK_EQ_LL(am.base_seq, 2);
    CHECK_EQ_LL(am.history_len, 3);
    CHECK_EQ_LL(am.incr_len, 2);
    CHECK(strcmp(am.incr[0].name, "appendonly.aof.4.incr.aof") == 0);
    CHECK(strcmp(am.incr[1].name, "appendonly.aof.5.incr.aof") == 0);
    CHECK_EQ_LL(am.incr_seq, 5);
    CHECK_EQ_LL(am.history[2].seq, 3);
    CHECK_EQ_LL(am.history[2].type, 'h');
    size_t n;
    char *out = aof_manifest_format(&am, &n);
    CHECK_MEM(out, n, text);
    mem_release(out);
    aof_manifest_deinit(&am);
    CHECK(am.base == NULL);
}

static void test_lenient(void)
{
    struct aof_manifest am;
    struct aof_manifest_error err;
    /* comments, keys in any case and order, unknown pairs, blanks around, CRLF, no base */
    CHECK_EQ_LL(parse(&am,
                      "# a comment\n"
                      "  TYPE i SEQ 7 FILE a.7.incr.aof  \r\n"
                      "#\n"
                      "file a.9.incr.aof seq 9 type i future yes\n",
                      &err),
                0);
    CHECK(am.base == NULL);
    CHECK_EQ_LL(am.incr_len, 2);
    CHECK(strcmp(am.incr[0].name, "a.7.incr.aof") == 0);
    CHECK_EQ_LL(am.incr[1].seq, 9);
    size_t n;
    char *out = aof_manifest_format(&am, &n);
    CHECK_MEM(out, n, "file a.7.incr.aof seq 7 type i\nfile a.9.incr.aof seq 9 type i\n");
    mem_release(out);
    aof_manifest_deinit(&am);

    /* only comments: an empty manifest, not an error (Redis only refuses a 0-line file) */
    CHECK_EQ_LL(parse(&am, "# nothing\n", &err), 0);
    CHECK(am.base == NULL && am.incr_len == 0);
    aof_manifest_deinit(&am);
    /* the last '#' line needs no '\n' */
    CHECK_EQ_LL(parse(&am, "file b seq 1 type b\n# end", &err), 0);
    CHECK(am.base && am.base->seq == 1);
    aof_manifest_deinit(&am);
    /* a type's first letter counts; a negative base seq is not zero */
    CHECK_EQ_LL(parse(&am, "file b seq -3 type base\n", &err), 0);
    CHECK(am.base && am.base->seq == -3);
    aof_manifest_deinit(&am);
    /* the last "file" of a line wins */
    CHECK_EQ_LL(parse(&am, "file x seq 1 type b file y\n", &err), 0);
    CHECK(am.base && strcmp(am.base->name, "y") == 0);
    aof_manifest_deinit(&am);
}

static void test_quoted_names(void)
{
    struct aof_manifest am;
    struct aof_manifest_error err;
    aof_manifest_init(&am);
    const char *names[] = {"my file.aof", "q\"uote", "back\\slash", "tab\there", "nl\nx", "\x01\xfe", "plain"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        struct aof_file f = {mem_strndup(names[i], strlen(names[i])), (long long)i + 1, AOF_FILE_INCR};
        am.incr = mem_realloc(am.incr, (am.incr_len + 1) * sizeof(f));
        am.incr[am.incr_len++] = f;
    }
    size_t n;
    char *out = aof_manifest_format(&am, &n);
    CHECK_MEM(out, n,
              "file \"my file.aof\" seq 1 type i\n"
              "file \"q\\\"uote\" seq 2 type i\n"
              "file \"back\\\\slash\" seq 3 type i\n"
              "file \"tab\\there\" seq 4 type i\n"
              "file \"nl\\nx\" seq 5 type i\n"
              "file \"\\x01\\xfe\" seq 6 type i\n"
              "file plain seq 7 type i\n");
    struct aof_manifest back;
    CHECK_EQ_LL(aof_manifest_parse(&back, out, n, &err), -1); /* "back\\slash" holds a '\\': not a base name */
    CHECK(err.msg && strcmp(err.msg, "File can't be a path, just a filename") == 0);
    CHECK_EQ_LL(err.line, 3);
    mem_release(out);
    /* without that one, every name reads back as it was */
    mem_release(am.incr[2].name);
    memmove(&am.incr[2], &am.incr[3], 4 * sizeof(am.incr[0]));
    am.incr_len--;
    out = aof_manifest_format(&am, &n);
    CHECK_EQ_LL(aof_manifest_parse(&back, out, n, &err), 0);
    CHECK_EQ_LL(back.incr_len, 6);
    for (size_t i = 0; i < back.incr_len && i < am.incr_len; i++)
        CHECK(strcmp(back.incr[i].name, am.incr[i].name) == 0);
    aof_manifest_deinit(&back);
    mem_release(out);
    aof_manifest_deinit(&am);
    /* single quotes, \x escapes on input */
    CHECK_EQ_LL(parse(&am, "file 'a b' seq 1 type b\nfile \"\\x41\" seq 1 type i\n", &err), 0);
    CHECK(am.base && strcmp(am.base->name, "a b") == 0);
    CHECK(am.incr_len == 1 && strcmp(am.incr[0].name, "A") == 0);
    aof_manifest_deinit(&am);
}

static void test_refused(void)
{
    refused("", "Found an empty AOF manifest", 0);
    refused("file a seq 1 type b", "The AOF manifest file contains too long line", 0); /* no '\n' */
    char big[1100];
    memset(big, 'x', sizeof(big));
    memcpy(big, "file ", 5);
    big[sizeof(big) - 1] = '\n';
    check_refused(big, sizeof(big), "The AOF manifest file contains too long line", 0);
    /* 1024 bytes through the '\n' is still one line */
    char edge[1024];
    memset(edge, ' ', sizeof(edge));
    memcpy(edge, "file a seq 1 type b", 19);
    edge[1023] = '\n';
    struct aof_manifest am;
    struct aof_manifest_error err;
    CHECK_EQ_LL(aof_manifest_parse(&am, edge, sizeof(edge), &err), 0);
    aof_manifest_deinit(&am);
    /* a NUL byte hides the line's end from strchr */
    check_refused("file a seq 1 type b\0\n", 21, "The AOF manifest file contains too long line", 0);

    refused("file a seq 1 type b\n\n", "Invalid AOF manifest file format", 2);
    refused("file a seq 1 type b\n  \t \n", "Invalid AOF manifest file format", 2);
    refused("file a seq 1\n", "Invalid AOF manifest file format", 1);
    refused("file a seq 1 type b x\n", "Invalid AOF manifest file format", 1);
    refused("file \"a seq 1 type b\n", "Invalid AOF manifest file format", 1);
    refused("file \"a\"b seq 1 type b\n", "Invalid AOF manifest file format", 1);
    refused("file dir/a seq 1 type b\n", "File can't be a path, just a filename", 1);
    refused("file a\\b seq 1 type b\n", "File can't be a path, just a filename", 1); /* unquoted, a backslash is itself */
    refused("file a seq 0 type b\n", "Invalid AOF manifest file format", 1);
    refused("file a seq x type b\n", "Invalid AOF manifest file format", 1);
    refused("name a seq 1 type b\n", "Invalid AOF manifest file format", 1);
    refused("file a seq 1 kind b\n", "Invalid AOF manifest file format", 1);
    refused("file a seq 1 type ''\n", "Invalid AOF manifest file format", 1);
    refused("file a seq 1 type b\nfile c seq 2 type b\n", "Found duplicate base file information", 2);
    refused("file a seq 2 type i\nfile c seq 2 type i\n", "Found a non-monotonic sequence number", 2);
    refused("file a seq -1 type i\n", "Found a non-monotonic sequence number", 1);
    refused("# c\nfile a seq 1 type x\n", "Unknown AOF file type", 2);

    /* the refused line is reported trimmed, as Redis's ">>> '%s'" */
    CHECK_EQ_LL(parse(&am, "file a seq 1 type b\n  file b seq 1 type z \r\n", &err), -1);
    CHECK(strcmp(err.text, "file b seq 1 type z") == 0);
}

static void test_names(void)
{
    char *m = aof_manifest_file_name("appendonly.aof");
    CHECK(strcmp(m, "appendonly.aof.manifest") == 0);
    mem_release(m);

    struct aof_manifest am;
    aof_manifest_init(&am);
    CHECK(strcmp(aof_manifest_last_incr(&am, "appendonly.aof"), "appendonly.aof.1.incr.aof") == 0);
    CHECK(strcmp(aof_manifest_last_incr(&am, "appendonly.aof"), "appendonly.aof.1.incr.aof") == 0);
    CHECK(strcmp(aof_manifest_new_base(&am, "appendonly.aof", true), "appendonly.aof.1.base.rdb") == 0);
    CHECK(strcmp(aof_manifest_new_incr(&am, "appendonly.aof"), "appendonly.aof.2.incr.aof") == 0);
    /* a rewrite: a new base, the old one to history, the incr files but the current one too */
    CHECK(strcmp(aof_manifest_new_base(&am, "appendonly.aof", false), "appendonly.aof.2.base.aof") == 0);
    CHECK(strcmp(aof_manifest_new_incr(&am, "appendonly.aof"), "appendonly.aof.3.incr.aof") == 0);
    aof_manifest_incr_to_history(&am, true);
    size_t n;
    char *out = aof_manifest_format(&am, &n);
    CHECK_MEM(out, n,
              "file appendonly.aof.2.base.aof seq 2 type b\n"
              "file appendonly.aof.1.incr.aof seq 1 type h\n"
              "file appendonly.aof.2.incr.aof seq 2 type h\n"
              "file appendonly.aof.1.base.rdb seq 1 type h\n"
              "file appendonly.aof.3.incr.aof seq 3 type i\n");
    mem_release(out);
    aof_manifest_clear_history(&am);
    aof_manifest_incr_to_history(&am, false);
    out = aof_manifest_format(&am, &n);
    CHECK_MEM(out, n,
              "file appendonly.aof.2.base.aof seq 2 type b\n"
              "file appendonly.aof.3.incr.aof seq 3 type h\n");
    /* what was written reads back the same */
    struct aof_manifest back;
    struct aof_manifest_error err;
    CHECK_EQ_LL(aof_manifest_parse(&back, out, n, &err), 0);
    size_t n2;
    char *again = aof_manifest_format(&back, &n2);
    CHECK(n2 == n && memcmp(again, out, n) == 0);
    mem_release(again);
    mem_release(out);
    aof_manifest_deinit(&back);
    aof_manifest_deinit(&am);
}

int main(void)
{
    test_redis_example();
    test_lenient();
    test_quoted_names();
    test_refused();
    test_names();
    return check_done("test_aof_manifest");
}
