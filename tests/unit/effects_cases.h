/*
 * effects_cases: the harness of the test_effects_* tests, which drive write
 * handlers directly on one store and check what they report (command.h's
 * cmd_modified / cmd_notify) against what Redis 7.0 does.
 *
 * A case runs its setup commands (separated by ';') with nothing recorded,
 * then its command with a struct cmd_effects sink on the ctx, and compares
 * the start of the reply and the effects, written as tokens separated by
 * single spaces, in the order they happened:
 *
 *   C:EVENT:KEY   keyspace event EVENT on KEY, C its class's
 *                 notify-keyspace-events letter (g $ l s h z x e t m d n)
 *   M:KEY         KEY modified (Redis's signalModifiedKey)
 *
 * Every effect must name the case's database.  Each case runs three times:
 * with every class asked for (fx.notify = ~0u: all the tokens), with none
 * (fx.notify = 0: the M: tokens alone, as cmd_notify filters), and with no
 * sink at all (ctx.effects NULL, the usual path: the same reply).
 *
 * The tables are written one FX(db, setup, command, reply, effects) per line
 * with plain string literals: tests/compat/effects_oracle.py reads them and
 * runs the same cases against a real redis-server, checking the events
 * (everything but the M: tokens, which a subscriber cannot see) and the
 * replies.  Words are separated by single spaces and hold none.
 */
#ifndef PERCORE_TEST_EFFECTS_CASES_H
#define PERCORE_TEST_EFFECTS_CASES_H

#include "percore/command.h"
#include "percore/config.h"
#include "percore/mem.h"
#include "percore/reply.h"
#include "percore/store.h"

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_NOW 1700000000000LL
#define FX_MAX_ARGS 32

struct fx_case {
    int db;              /* the database it runs in */
    const char *setup;   /* commands run first, unrecorded, separated by ';' ("" none) */
    const char *cmd;     /* the command whose effects are checked */
    const char *reply;   /* what its reply starts with */
    const char *effects; /* the tokens expected ("" nothing) */
};
#define FX(db, setup, cmd, reply, effects) {db, setup, cmd, reply, effects}

static struct store *fx_store;
static struct reply fx_out;

/* run one command (words separated by single spaces) with the sink fx (NULL: none) */
static void fx_run(int db, const char *line, struct cmd_effects *fx)
{
    struct resp_arg argv[FX_MAX_ARGS];
    int argc = 0;
    for (const char *p = line; *p && argc < FX_MAX_ARGS;) {
        const char *e = strchr(p, ' ');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        argv[argc].ptr = p;
        argv[argc++].len = n;
        p += n + (e != NULL);
    }
    const struct command *c = command_lookup(argv[0].ptr, argv[0].len);
    if (c == NULL) {
        fprintf(stderr, "no such command: %s\n", line);
        exit(2);
    }
    struct cmd_stats stats = {0};
    struct cmd_ctx ctx = {
        .store = fx_store, .out = &fx_out, .argv = argv, .argc = argc, .db = db, .now = FX_NOW,
        .config = config_current(), .stats = &stats, .effects = fx,
    };
    reply_clear(&fx_out);
    c->proc(&ctx);
}

static char fx_class_letter(int type)
{
    static const struct {
        int type;
        char letter;
    } letters[] = {
        {NOTIFY_GENERIC, 'g'}, {NOTIFY_STRING, '$'}, {NOTIFY_LIST, 'l'},    {NOTIFY_SET, 's'},
        {NOTIFY_HASH, 'h'},    {NOTIFY_ZSET, 'z'},   {NOTIFY_EXPIRED, 'x'}, {NOTIFY_EVICTED, 'e'},
        {NOTIFY_STREAM, 't'},  {NOTIFY_KEY_MISS, 'm'}, {NOTIFY_MODULE, 'd'}, {NOTIFY_NEW, 'n'},
    };
    for (size_t i = 0; i < sizeof letters / sizeof letters[0]; i++)
        if (letters[i].type == type)
            return letters[i].letter;
    return '?';
}

/* the recorded effects as tokens into buf; false when one names another database than db */
static bool fx_format(const struct cmd_effects *fx, int db, char *buf, size_t size)
{
    size_t len = 0;
    bool same_db = true;
    buf[0] = '\0';
    for (int i = 0; i < fx->n && len < size; i++) {
        const struct cmd_effect *e = &fx->v[i];
        const char *key = fx->bytes + e->key_off;
        same_db = same_db && e->db == db;
        if (e->kind == CMD_EFFECT_MODIFIED)
            len += (size_t)snprintf(buf + len, size - len, "%sM:%.*s", i ? " " : "", (int)e->key_len, key);
        else
            len += (size_t)snprintf(buf + len, size - len, "%s%c:%s:%.*s", i ? " " : "",
                                    fx_class_letter(e->type), e->event, (int)e->key_len, key);
    }
    return same_db;
}

/* the M: tokens of effects alone */
static void fx_modified_only(const char *effects, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (const char *p = effects; *p;) {
        const char *e = strchr(p, ' ');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n > 2 && p[0] == 'M' && p[1] == ':' && len + n + 2 < size) {
            if (len)
                buf[len++] = ' ';
            memcpy(buf + len, p, n);
            len += n;
            buf[len] = '\0';
        }
        p += n + (e != NULL);
    }
}

/* an empty store with the case's setup done */
static void fx_prepare(const struct fx_case *c)
{
    char line[512];
    store_flush(fx_store, -1);
    for (const char *p = c->setup; *p;) {
        const char *e = strchr(p, ';');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n >= sizeof line) {
            fprintf(stderr, "setup command too long: %s\n", p);
            exit(2);
        }
        memcpy(line, p, n);
        line[n] = '\0';
        fx_run(c->db, line, NULL);
        if (fx_out.len > 0 && fx_out.buf[0] == '-') {
            fprintf(stderr, "setup of '%s' failed: %s: %.*s\n", c->cmd, line, (int)fx_out.len, fx_out.buf);
            check_failures++;
        }
        p += n + (e != NULL);
    }
}

static bool fx_reply_starts(const char *want)
{
    size_t n = strlen(want);
    return fx_out.len >= n && memcmp(fx_out.buf, want, n) == 0;
}

/* run every case of a table (see the top of this file) */
static void fx_check_cases(const struct fx_case *cases, size_t n)
{
    struct cmd_effects fx = {0};
    char got[2048], want_m[2048];
    for (size_t i = 0; i < n; i++) {
        const struct fx_case *c = &cases[i];
        static const unsigned notify[] = {~0u, 0};
        for (int pass = 0; pass < 3; pass++) {
            fx_prepare(c);
            fx.n = 0;
            fx.len = 0;
            if (pass < 2)
                fx.notify = notify[pass];
            fx_run(c->db, c->cmd, pass < 2 ? &fx : NULL);
            check_count++;
            if (!fx_reply_starts(c->reply)) {
                check_failures++;
                fprintf(stderr, "%s (pass %d): reply %.*s, want it to start with %s\n", c->cmd, pass,
                        (int)(fx_out.len > 200 ? 200 : fx_out.len), fx_out.buf, c->reply);
            }
            if (pass == 2)
                continue;
            bool same_db = fx_format(&fx, c->db, got, sizeof got);
            const char *want = c->effects;
            if (pass == 1) {
                fx_modified_only(c->effects, want_m, sizeof want_m);
                want = want_m;
            }
            check_count++;
            if (strcmp(got, want) != 0 || !same_db) {
                check_failures++;
                fprintf(stderr, "%s (after %s, db %d, notify %s):\n  got  \"%s\"%s\n  want \"%s\"\n", c->cmd,
                        *c->setup ? c->setup : "nothing", c->db, pass ? "none" : "all", got,
                        same_db ? "" : " (an effect in another db)", want);
            }
        }
    }
    mem_release(fx.v);
    mem_release(fx.bytes);
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
    command_setup();
    store_set_seed(seed);
    fx_store = store_create(16);
    reply_init(&fx_out);
}

static void fx_teardown(void)
{
    reply_deinit(&fx_out);
    store_destroy(&fx_store);
    config_teardown();
}

#endif
