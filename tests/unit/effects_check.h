/*
 * effects_check: the harness of the test_effects_* tests.  They drive
 * command handlers directly on one store, with a struct cmd_effects sink on
 * the ctx (command.h), and compare what a handler reported -- cmd_modified,
 * cmd_notify, cmd_replacing_databases -- with what Redis 7.0 does for the
 * same command, written as text:
 *
 *   mod@DB:key          the key was modified (Redis's signalModifiedKey)
 *   C:event@DB:key      keyspace event `event` of class C, the class's
 *                       notify-keyspace-events letter (g $ l s h z x e t m n d)
 *   replace:DB,DB2(N)   the handler is about to empty DB (-1: all) or swap it
 *                       with DB2; N: the keys DB still held then (all dbs for -1)
 *
 * separated by one space, in the order reported; "" when nothing was.
 *
 * A test is a sequence of steps on one keyspace, each a statement that
 * tests/compat/effects_oracle.py also reads and replays against a real
 * redis-server (it checks the replies and the events; modified keys and
 * replaced databases cannot be seen from a client):
 *
 *   FX(reply, effects, "cmd", "arg", ...)         run; the reply bytes and effects must be these
 *   FX_STARTS(prefix, effects, "cmd", "arg", ...) the same, the reply starting with prefix
 *                                                 (a random pick: SPOP)
 *   FX_RUN("cmd", "arg", ...)                     run; its reply in fx_out, its effects in fx_text
 *   fx_reset();       an empty keyspace, db 0, FX_NOW, every class recorded, no blocking
 *   fx_db = N;        the database of the next commands
 *   fx_now += MS;     the clock (the oracle sleeps)
 *   fx.notify = ...;  the classes recorded (NOTIFY_* | ...; ~0u all): the oracle checks
 *                     a line in its runs with one class that the line records
 *   fx_may_block = true/false;  a blocking command may wait (else it answers as in MULTI)
 *   fx_cfg.proto_max_bulk_len = ...;  (the oracle skips to the next fx_reset)
 *
 * FX checks each command three ways: as written, then again on the same
 * keyspace (rebuilt by replaying every command since fx_reset() into an
 * emptied store) with no class recorded (the mod@, ready@ and replace: tokens alone,
 * as cmd_notify filters), and once more without a sink (ctx.effects NULL,
 * the usual path: the same reply).  The replays run with the fx_cfg of the
 * moment (change it right after an fx_reset()); a replayed command whose
 * reply differs from the first time fails the test.
 *
 * One test binary includes it: everything is static.  Single-threaded.
 */
#ifndef PERCORE_TEST_EFFECTS_CHECK_H
#define PERCORE_TEST_EFFECTS_CHECK_H

#include "percore/admin.h"
#include "percore/command.h"
#include "percore/config.h"
#include "percore/mem.h"
#include "percore/reply.h"
#include "percore/store.h"

#include "check.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_NOW 1700000000000LL
#define FX_DATABASES 16
#define FX_MAX_ARGS 32

/* an effects text */
struct fx_text {
    char buf[8192];
    size_t len;
};

/* a command run since fx_reset(), to replay */
struct fx_step {
    size_t off;          /* its arguments in fx_args: each a uint32_t length, then the bytes */
    int argc;
    int db;
    int64_t now;
    bool may_block;
    uint64_t reply_hash; /* of the reply it got */
};

static struct store *fx_store;
static struct reply fx_out;        /* the last command's reply */
static struct reply fx_pass_out;   /* the replies of the replays and the extra passes */
static struct config fx_cfg;       /* Redis's defaults; a test may change a field */
static struct cmd_stats fx_stats;
static struct cmd_effects fx;      /* the sink; fx.notify says which classes are recorded */
static struct fx_text fx_text;     /* the last command's effects */
static struct fx_text fx_pass_text;
static struct fx_text *fx_into = &fx_text; /* where the replacing hook writes */
static int fx_db;                  /* the selected database */
static int64_t fx_now = FX_NOW;
static bool fx_may_block;          /* a blocking command may wait (outside MULTI) */
static bool fx_blocked;            /* the last command set ctx->blocked */
static struct fx_step *fx_steps;
static int fx_nsteps, fx_steps_cap;
static char *fx_args;
static size_t fx_args_len, fx_args_cap;

/* one more effect in t, a space before it unless it is the first */
static void fx_textf(struct fx_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fx_textf(struct fx_text *t, const char *fmt, ...)
{
    va_list ap;
    if (t->len && t->len < sizeof(t->buf) - 1)
        t->buf[t->len++] = ' ';
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, sizeof(t->buf) - t->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n < sizeof(t->buf) - t->len ? (size_t)n : sizeof(t->buf) - t->len - 1;
}

static char fx_class_letter(int type)
{
    static const struct {
        int type;
        char letter;
    } classes[] = {
        {NOTIFY_GENERIC, 'g'}, {NOTIFY_STRING, '$'},  {NOTIFY_LIST, 'l'},    {NOTIFY_SET, 's'},
        {NOTIFY_HASH, 'h'},    {NOTIFY_ZSET, 'z'},    {NOTIFY_EXPIRED, 'x'}, {NOTIFY_EVICTED, 'e'},
        {NOTIFY_STREAM, 't'},  {NOTIFY_KEY_MISS, 'm'}, {NOTIFY_NEW, 'n'},    {NOTIFY_MODULE, 'd'},
    };
    for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
        if (classes[i].type == type)
            return classes[i].letter;
    return '?';
}

/* cmd_replacing_databases' hook: notes the call and what the database still holds */
static void fx_replacing(void *arg, int db, int db2)
{
    (void)arg;
    size_t keys = 0;
    for (int i = 0; i < FX_DATABASES; i++)
        if (db == -1 || i == db)
            keys += store_size(fx_store, i);
    fx_textf(fx_into, "replace:%d,%d(%zu)", db, db2, keys);
}

static uint64_t fx_hash(const char *p, size_t n)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 1099511628211ULL;
    return h;
}

/* run a command (an internal one when its name starts with "__") with the sink `sink` (NULL: none),
 * its reply into out, the hook's notes and the effects recorded into text; returns ctx.blocked */
static bool fx_exec(const struct resp_arg *argv, int argc, int db, int64_t now, bool may_block,
                    struct cmd_effects *sink, struct reply *out, struct fx_text *text)
{
    char name[64];
    size_t n = argv[0].len < sizeof(name) - 1 ? argv[0].len : sizeof(name) - 1;
    memcpy(name, argv[0].ptr, n);
    name[n] = '\0';
    const struct command *c = command_lookup(name, n);
    for (int i = 0; i < CMD_I_COUNT && !c; i++)
        if (strcmp(command_internal_table[i].name, name) == 0)
            c = command_internal(i);
    if (c == NULL) {
        fprintf(stderr, "no such command %s\n", name);
        exit(2);
    }
    struct cmd_ctx ctx = {
        .store = fx_store, .out = out, .argv = argv, .argc = argc, .db = db,
        .now = now, .config = &fx_cfg, .stats = &fx_stats, .may_block = may_block, .effects = sink,
    };
    reply_clear(out);
    text->len = 0;
    if (sink) {
        sink->n = 0;
        sink->len = 0;
    }
    fx_into = text;
    c->proc(&ctx);
    for (int i = 0; sink && i < sink->n; i++) {
        const struct cmd_effect *e = &sink->v[i];
        const char *key = sink->bytes + e->key_off;
        if (e->kind == CMD_EFFECT_MODIFIED)
            fx_textf(text, "mod@%d:%.*s", e->db, (int)e->key_len, key);
        else if (e->kind == CMD_EFFECT_READY)
            fx_textf(text, "ready@%d:%.*s", e->db, (int)e->key_len, key);
        else
            fx_textf(text, "%c:%s@%d:%.*s", fx_class_letter(e->type), e->event, e->db, (int)e->key_len, key);
    }
    text->buf[text->len] = '\0';
    return ctx.blocked;
}

/* the first n steps since fx_reset() again, into an emptied store */
static void fx_replay(int n)
{
    store_flush(fx_store, -1);
    for (int i = 0; i < n; i++) {
        const struct fx_step *s = &fx_steps[i];
        struct resp_arg a[FX_MAX_ARGS];
        const char *p = fx_args + s->off;
        for (int j = 0; j < s->argc; j++) {
            uint32_t len;
            memcpy(&len, p, sizeof(len));
            a[j].ptr = p + sizeof(len);
            a[j].len = len;
            p += sizeof(len) + len;
        }
        fx_exec(a, s->argc, s->db, s->now, s->may_block, NULL, &fx_pass_out, &fx_pass_text);
        if (fx_hash(fx_pass_out.buf, fx_pass_out.len) != s->reply_hash) {
            check_failures++;
            fprintf(stderr, "replaying step %d (%.*s): another reply than the first time: %.*s\n", i,
                    (int)a[0].len, a[0].ptr, (int)(fx_pass_out.len > 200 ? 200 : fx_pass_out.len),
                    fx_pass_out.buf);
        }
    }
}

/* run a command; its reply in fx_out, its effects in fx_text; noted for the replays */
static void fx_run_args(const struct resp_arg *argv, int argc)
{
    if (argc > FX_MAX_ARGS) {
        fprintf(stderr, "more than %d arguments\n", FX_MAX_ARGS);
        exit(2);
    }
    fx_blocked = fx_exec(argv, argc, fx_db, fx_now, fx_may_block, &fx, &fx_out, &fx_text);
    size_t need = fx_args_len;
    for (int i = 0; i < argc; i++)
        need += sizeof(uint32_t) + argv[i].len;
    if (need > fx_args_cap || fx_nsteps == fx_steps_cap) {
        fx_args_cap = need * 2 + 4096;
        fx_steps_cap = fx_steps_cap * 2 + 64;
        fx_args = realloc(fx_args, fx_args_cap);
        fx_steps = realloc(fx_steps, (size_t)fx_steps_cap * sizeof(*fx_steps));
        if (fx_args == NULL || fx_steps == NULL)
            abort();
    }
    fx_steps[fx_nsteps++] = (struct fx_step){
        .off = fx_args_len, .argc = argc, .db = fx_db, .now = fx_now, .may_block = fx_may_block,
        .reply_hash = fx_hash(fx_out.buf, fx_out.len),
    };
    for (int i = 0; i < argc; i++) {
        uint32_t len = (uint32_t)argv[i].len;
        memcpy(fx_args + fx_args_len, &len, sizeof(len));
        memcpy(fx_args + fx_args_len + sizeof(len), argv[i].ptr, len);
        fx_args_len += sizeof(len) + len;
    }
}

static void fx_run_v(int argc, const char **argv)
{
    struct resp_arg a[FX_MAX_ARGS];
    for (int i = 0; i < argc && i < FX_MAX_ARGS; i++) {
        a[i].ptr = argv[i];
        a[i].len = strlen(argv[i]);
    }
    fx_run_args(a, argc);
}

/* the mod@, ready@ and replace: tokens of effects alone: what a sink that asks for no class gets */
static void fx_unfiltered(const char *effects, struct fx_text *t)
{
    t->len = 0;
    for (const char *p = effects; *p;) {
        const char *e = strchr(p, ' ');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (strncmp(p, "mod@", 4) == 0 || strncmp(p, "ready@", 6) == 0 || strncmp(p, "replace:", 8) == 0)
            fx_textf(t, "%.*s", (int)n, p);
        p += n + (e != NULL);
    }
    t->buf[t->len] = '\0';
}

static bool fx_reply_is(const struct reply *out, const char *reply, size_t len, bool prefix)
{
    return (prefix ? out->len >= len : out->len == len) && memcmp(out->buf, reply, len) == 0;
}

static void fx_reply_check(const char *file, int line, const char *pass, const struct reply *out,
                           const char *reply, size_t len, bool prefix)
{
    check_count++;
    if (!fx_reply_is(out, reply, len, prefix)) {
        check_failures++;
        fprintf(stderr, "%s:%d: %s: reply %.*s, want %s%s\n", file, line, pass,
                (int)(out->len > 200 ? 200 : out->len), out->buf, prefix ? "it to start with " : "", reply);
    }
}

static void fx_effects_check(const char *file, int line, const char *pass, const char *got, const char *want)
{
    check_count++;
    if (strcmp(got, want) != 0) {
        check_failures++;
        fprintf(stderr, "%s:%d: %s: effects \"%s\", want \"%s\"\n", file, line, pass, got, want);
    }
}

/* FX and FX_STARTS: the three passes (see the top of this file) */
static void fx_check(const char *file, int line, const char *reply, size_t reply_len, bool prefix,
                     const char *effects, int argc, const char **argv)
{
    struct resp_arg a[FX_MAX_ARGS];
    for (int i = 0; i < argc && i < FX_MAX_ARGS; i++) {
        a[i].ptr = argv[i];
        a[i].len = strlen(argv[i]);
    }
    fx_run_args(a, argc);
    fx_reply_check(file, line, argv[0], &fx_out, reply, reply_len, prefix);
    fx_effects_check(file, line, argv[0], fx_text.buf, effects);

    struct cmd_effects none = {.replacing = fx_replacing};
    struct fx_text want;
    fx_replay(fx_nsteps - 1);
    fx_exec(a, argc, fx_db, fx_now, fx_may_block, &none, &fx_pass_out, &fx_pass_text);
    fx_reply_check(file, line, "no class recorded", &fx_pass_out, reply, reply_len, prefix);
    fx_unfiltered(effects, &want);
    fx_effects_check(file, line, "no class recorded", fx_pass_text.buf, want.buf);
    mem_release(none.v);
    mem_release(none.bytes);

    fx_replay(fx_nsteps - 1);
    fx_exec(a, argc, fx_db, fx_now, fx_may_block, NULL, &fx_pass_out, &fx_pass_text);
    fx_reply_check(file, line, "no sink", &fx_pass_out, reply, reply_len, prefix);
}

#define FX_ARGC_(...) ((int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)))

#define FX_RUN(...) fx_run_v(FX_ARGC_(__VA_ARGS__), (const char *[]){__VA_ARGS__})

/* run, then check the reply bytes (a string literal) and the effects, three ways */
#define FX(reply_lit, effects, ...)                                                                \
    fx_check(__FILE__, __LINE__, reply_lit, sizeof(reply_lit) - 1, false, effects, FX_ARGC_(__VA_ARGS__), \
             (const char *[]){__VA_ARGS__})

/* the same, the reply only starting with prefix_lit */
#define FX_STARTS(prefix_lit, effects, ...)                                                        \
    fx_check(__FILE__, __LINE__, prefix_lit, sizeof(prefix_lit) - 1, true, effects, FX_ARGC_(__VA_ARGS__), \
             (const char *[]){__VA_ARGS__})

/* an empty keyspace in db 0 at FX_NOW, every class recorded, Redis's default config */
static void fx_reset(void)
{
    store_flush(fx_store, -1);
    fx_db = 0;
    fx_now = FX_NOW;
    fx.notify = ~0u;
    fx_may_block = false;
    fx_cfg = *config_current();
    fx_nsteps = 0;
    fx_args_len = 0;
}

/* the process's setup for a test_effects_* main: Redis's default config, every command */
static void fx_setup(void)
{
    char err[256];
    char *args[] = {"test_effects", NULL};
    uint8_t seed[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    if (config_setup(1, args, err, sizeof err) != 0) {
        fprintf(stderr, "config_setup: %s\n", err);
        exit(1);
    }
    store_set_seed(seed);
    admin_setup();
    fx_store = store_create(FX_DATABASES);
    reply_init(&fx_out);
    reply_init(&fx_pass_out);
    fx.replacing = fx_replacing;
    fx_reset();
}

static void fx_teardown(void)
{
    mem_release(fx.v);
    mem_release(fx.bytes);
    free(fx_steps);
    free(fx_args);
    reply_deinit(&fx_out);
    reply_deinit(&fx_pass_out);
    store_destroy(&fx_store);
    config_teardown();
}

#endif
