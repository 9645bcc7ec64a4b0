/*
 * effects_check: drive command handlers directly on one store, with a
 * struct cmd_effects sink on the ctx, and compare what they reported
 * (cmd_modified, cmd_notify, cmd_replacing_databases) with the sequence
 * Redis 7.0 gives for the same command, written as text:
 *
 *   mod@DB:key          the key was modified (Redis's signalModifiedKey)
 *   C:event@DB:key      keyspace event `event` of class C, the class's
 *                       notify-keyspace-events letter (g $ l s h z x e t m n d)
 *   replace:DB,DB2(N)   the handler is about to empty DB (-1: all) or swap it
 *                       with DB2; N: the keys DB still held then (all dbs for -1)
 *
 * separated by one space, in the order reported; "" when nothing was.
 *
 * One test binary includes it: everything is static.  Single-threaded.
 */
#ifndef PERCORE_TEST_EFFECTS_LOG_H
#define PERCORE_TEST_EFFECTS_LOG_H

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

static struct store *fx_store;
static struct reply fx_out;                     /* the last command's reply */
static struct config fx_cfg;
static struct cmd_stats fx_stats;
static struct cmd_effects fx;                   /* the sink; fx.notify says which classes are recorded */
static char fx_log[8192];                       /* the last command's effects, as text */
static size_t fx_log_len;
static int fx_db;                               /* the selected database */
static int64_t fx_now = FX_NOW;

/* one more effect in fx_log, a space before it unless it is the first */
static void fx_logf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fx_logf(const char *fmt, ...)
{
    va_list ap;
    if (fx_log_len && fx_log_len < sizeof(fx_log) - 1)
        fx_log[fx_log_len++] = ' ';
    va_start(ap, fmt);
    int n = vsnprintf(fx_log + fx_log_len, sizeof(fx_log) - fx_log_len, fmt, ap);
    va_end(ap);
    if (n > 0)
        fx_log_len += (size_t)n < sizeof(fx_log) - fx_log_len ? (size_t)n : sizeof(fx_log) - fx_log_len - 1;
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
    fx_logf("replace:%d,%d(%zu)", db, db2, keys);
}

/* the effects recorded, appended to fx_log after whatever the hook wrote while the handler ran */
static void fx_render(void)
{
    for (int i = 0; i < fx.n; i++) {
        const struct cmd_effect *e = &fx.v[i];
        const char *key = fx.bytes + e->key_off;
        if (e->kind == CMD_EFFECT_MODIFIED)
            fx_logf("mod@%d:%.*s", e->db, (int)e->key_len, key);
        else
            fx_logf("%c:%s@%d:%.*s", fx_class_letter(e->type), e->event, e->db, (int)e->key_len, key);
    }
}

static void fx_setup(void)
{
    uint8_t seed[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    store_set_seed(seed);
    fx_cfg.databases = FX_DATABASES;
    fx_cfg.proto_max_bulk_len = 512LL * 1024 * 1024;
    fx_store = store_create(FX_DATABASES);
    reply_init(&fx_out);
    command_setup();
    fx.notify = ~0u;
    fx.replacing = fx_replacing;
}

static void fx_teardown(void)
{
    mem_release(fx.v);
    mem_release(fx.bytes);
    reply_deinit(&fx_out);
    store_destroy(&fx_store);
}

/* an empty keyspace in db 0 at FX_NOW, every class recorded */
static void fx_reset(void)
{
    store_flush(fx_store, -1);
    fx_db = 0;
    fx_now = FX_NOW;
    fx.notify = ~0u;
}

/* run a command (an internal one when its name starts with "__"); its reply in fx_out, its effects in fx_log */
static void fx_run_args(const struct resp_arg *argv, int argc)
{
    char name[64];
    size_t n = argv[0].len < sizeof(name) - 1 ? argv[0].len : sizeof(name) - 1;
    memcpy(name, argv[0].ptr, n);
    name[n] = '\0';
    const struct command *c = n > 2 && name[0] == '_' && name[1] == '_' ? command_internal(name)
                                                                          : command_lookup(name, n);
    if (c == NULL) {
        fprintf(stderr, "no such command %s\n", name);
        exit(2);
    }
    struct cmd_ctx ctx = {
        .store = fx_store, .out = &fx_out, .argv = argv, .argc = argc, .db = fx_db,
        .now = fx_now, .config = &fx_cfg, .stats = &fx_stats, .effects = &fx,
    };
    reply_clear(&fx_out);
    fx.n = 0;
    fx.len = 0;
    fx_log_len = 0;
    fx_log[0] = '\0';
    c->proc(&ctx);
    fx_render();
    fx_log[fx_log_len] = '\0';
}

static void fx_run_v(int argc, const char **argv)
{
    struct resp_arg a[32];
    for (int i = 0; i < argc; i++) {
        a[i].ptr = argv[i];
        a[i].len = strlen(argv[i]);
    }
    fx_run_args(a, argc);
}

#define FX_RUN(...)                                                           \
    do {                                                                      \
        const char *fx_argv_[] = {__VA_ARGS__};                               \
        fx_run_v((int)(sizeof(fx_argv_) / sizeof(fx_argv_[0])), fx_argv_);    \
    } while (0)

/* run, then check the reply bytes and the effects */
#define FX(reply_lit, effects_lit, ...)                                       \
    do {                                                                      \
        FX_RUN(__VA_ARGS__);                                                  \
        CHECK_MEM(fx_out.buf, fx_out.len, reply_lit);                         \
        CHECK_MEM(fx_log, fx_log_len, effects_lit);                           \
    } while (0)

#endif
