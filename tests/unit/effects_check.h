/*
 * effects_check: drive command handlers directly on one store with a
 * struct cmd_effects sink on the ctx (command.h), and compare what they
 * reported -- keys modified, keyspace events, databases replaced -- with a
 * sequence taken from Redis 7.0.15 (redis-server --notify-keyspace-events
 * KEAn and PSUBSCRIBE '__keyevent@*' show the events in order; the
 * signalModifiedKey calls are placed where t_zset.c / db.c make them).
 *
 * A sequence is written as the effects joined by "; ":
 *   "M 0 k"         the handler modified key k of db 0 (cmd_modified)
 *   "z zadd 0 k"    keyspace event "zadd" of class z (NOTIFY_ZSET) on k of db 0
 *   "R 0 -1 keys=2" databases 0 (and -1: none) about to be replaced while db 0
 *                   still held 2 keys (cmd_replacing_databases, before the change)
 * Class letters are the notify-keyspace-events ones (g $ l s h z x e t m d n).
 *
 * Single-threaded test code: one store, one sink, used by one test binary.
 */
#ifndef PERCORE_TEST_EFFECTS_CHECK_H
#define PERCORE_TEST_EFFECTS_CHECK_H

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

static struct store *fx_store;
static struct reply fx_out;
static struct config fx_cfg;
static struct cmd_stats fx_stats;
static struct cmd_effects fx_sink;
static int64_t fx_now = FX_NOW;
static int fx_db;              /* the selected database of the next command */
static bool fx_may_block;      /* the next command may block (outside MULTI) */
static bool fx_blocked;        /* the last command set ctx->blocked */
static char fx_seen[2048];     /* the last command's effects, rendered */
static size_t fx_seen_len;

static void fx_appendf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fx_appendf(const char *fmt, ...)
{
    va_list ap;
    if (fx_seen_len)
        fx_seen_len += (size_t)snprintf(fx_seen + fx_seen_len, sizeof(fx_seen) - fx_seen_len, "; ");
    va_start(ap, fmt);
    fx_seen_len += (size_t)vsnprintf(fx_seen + fx_seen_len, sizeof(fx_seen) - fx_seen_len, fmt, ap);
    va_end(ap);
    if (fx_seen_len >= sizeof(fx_seen))
        fx_seen_len = sizeof(fx_seen) - 1;
}

static char fx_class_letter(int type)
{
    static const char letters[] = "KEg$lshzxetm?dn"; /* bit i of NOTIFY_* is letters[i] */
    for (int i = 0; letters[i]; i++)
        if (type == 1 << i)
            return letters[i];
    return '?';
}

/* the replacing hook: renders the call and how many keys the first database holds at that moment */
static void fx_replacing(void *arg, int db, int db2)
{
    (void)arg;
    size_t keys = 0;
    for (int i = 0; i < store_databases(fx_store); i++)
        if (db < 0 || i == db)
            keys += store_size(fx_store, i);
    fx_appendf("R %d %d keys=%zu", db, db2, keys);
}

static void fx_setup(void)
{
    uint8_t seed[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    store_set_seed(seed);
    command_setup();
    fx_cfg.databases = 16;
    fx_cfg.proto_max_bulk_len = 512LL * 1024 * 1024;
    fx_cfg.zset_max_listpack_entries = 128;
    fx_cfg.zset_max_listpack_value = 64;
    fx_store = store_create(16);
    reply_init(&fx_out);
    fx_sink.notify = ~0u;
    fx_sink.replacing = fx_replacing;
}

static void fx_teardown(void)
{
    reply_deinit(&fx_out);
    mem_release(fx_sink.v);
    mem_release(fx_sink.bytes);
    store_destroy(&fx_store);
}

/* run one command, its arguments split on spaces; its reply is in fx_out, its effects in fx_seen */
static void fx_run(const char *line)
{
    char buf[512];
    struct resp_arg argv[32];
    int argc = 0;
    snprintf(buf, sizeof(buf), "%s", line);
    for (char *save, *t = strtok_r(buf, " ", &save); t && argc < 32; t = strtok_r(NULL, " ", &save)) {
        argv[argc].ptr = t;
        argv[argc].len = strlen(t);
        argc++;
    }
    const struct command *c = command_lookup(argv[0].ptr, argv[0].len);
    if (c == NULL) {
        fprintf(stderr, "no such command %s\n", argv[0].ptr);
        exit(2);
    }
    struct cmd_ctx ctx = {
        .store = fx_store, .out = &fx_out, .argv = argv, .argc = argc, .db = fx_db, .now = fx_now,
        .config = &fx_cfg, .stats = &fx_stats, .may_block = fx_may_block, .effects = &fx_sink,
    };
    reply_clear(&fx_out);
    fx_sink.n = 0;
    fx_sink.len = 0;
    fx_seen_len = 0;
    fx_seen[0] = '\0';
    c->proc(&ctx);
    fx_blocked = ctx.blocked;
    for (int i = 0; i < fx_sink.n; i++) {
        const struct cmd_effect *e = &fx_sink.v[i];
        const char *key = fx_sink.bytes + e->key_off;
        if (e->kind == CMD_EFFECT_MODIFIED)
            fx_appendf("M %d %.*s", e->db, (int)e->key_len, key);
        else
            fx_appendf("%c %s %d %.*s", fx_class_letter(e->type), e->event, e->db, (int)e->key_len, key);
    }
}

/* run line; its reply must be the RESP bytes reply and its effects the sequence effects */
#define FX(line, reply, effects)                                                                      \
    do {                                                                                              \
        fx_run(line);                                                                                 \
        CHECK_MEM(fx_out.buf, fx_out.len, reply);                                                     \
        check_count++;                                                                                \
        if (strcmp(fx_seen, effects) != 0) {                                                          \
            check_failures++;                                                                         \
            fprintf(stderr, "%s:%d: %s: effects \"%s\", expected \"%s\"\n", __FILE__, __LINE__, line, \
                    fx_seen, effects);                                                                \
        }                                                                                             \
    } while (0)

#endif
