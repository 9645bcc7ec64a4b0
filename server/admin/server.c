/*
 * server: the connection and server commands (Redis's server.c, networking.c
 * and config.c command procs): PING ECHO QUIT SELECT AUTH HELLO RESET, COMMAND,
 * CONFIG, INFO, TIME LASTSAVE SHUTDOWN WAIT, CLIENT, SLOWLOG, LATENCY, and
 * the CLUSTER and PUBSUB containers (their subcommands are in cluster.c and
 * pubsub.c).
 *
 * Replies follow Redis 7.0.15 byte for byte where percore has the feature,
 * including the exact error texts and the shape of COMMAND INFO / DOCS, so
 * that clients which probe the server at connect (redis-cli's COMMAND DOCS,
 * redis-benchmark's CONFIG GET, ioredis's INFO loading:0, HELLO) work
 * unchanged.
 *
 * The container commands (COMMAND, CONFIG, CLIENT, ...) keep their
 * subcommands in a table here that admin_setup registers (command.h's
 * command_register_subcommands): the public command table has one entry per
 * top-level name, and the container's handler looks the subcommand up, checks
 * its arity ("wrong number of arguments for 'config|get' command") and calls
 * it.  The data families' containers (OBJECT MEMORY XGROUP XINFO, SCRIPT
 * FUNCTION) register theirs the same way; all of them feed COMMAND LIST /
 * INFO / DOCS / GETKEYS by their `container|sub` names, as Redis lists them.
 *
 * COMMAND, COMMAND INFO and COMMAND DOCS send Redis's own entries, which
 * gen_command_meta.py took from a real redis-server (command_meta.h): key
 * specs, tips, doc arguments and history match Redis byte for byte, in RESP2
 * and RESP3.  The entries cover every command percore serves; COMMAND COUNT
 * and the no-argument forms still list percore's commands, not Redis's, but
 * a container's entry lists all of Redis's subcommands, those percore lacks
 * (CLIENT TRACKING) too, as Redis prints it.  A name Redis 7.0.15 lacks (CLIENT
 * SETINFO) gets what Redis answers for an unknown name.
 *
 * Threading: every command here is ROUTE_HOME; it runs on the connection's
 * own shard thread with ctx->conn set, touches only that connection (CLIENT
 * LIST/KILL/UNBLOCK/PAUSE/UNPAUSE and SLOWLOG fan out to every shard, see conn_fanout), the
 * RCU-protected config snapshot in ctx->config, and INFO reads the stats
 * aggregator's RCU-published snapshot (stats.h), never another shard's data.  The
 * process-wide run_id is made once under pthread_once (the replication id is replica.c's).
 */
#include "admin_families.h"

#include "percore/cluster.h"
#include "percore/command.h"
#include "percore/command_meta.h"
#include "percore/config.h"
#include "percore/conn.h"
#include "percore/load.h"
#include "percore/log.h"
#include "percore/monitor.h"
#include "percore/mem.h"
#include "percore/pubsub.h"
#include "percore/primary.h"
#include "percore/replica.h"
#include "percore/reply.h"
#include "percore/aof.h"
#include "percore/save.h"
#include "percore/script.h"
#include "percore/rread.h"
#include "percore/shard.h"
#include "percore/slowlog.h"
#include "percore/stats.h"
#include "percore/store.h"
#include "percore/tracking.h"
#include "percore/util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define REDIS_COMPAT_VERSION "7.0.15"
#ifndef PERCORE_VERSION
#define PERCORE_VERSION "0.0.0"
#endif

/* ------------------------------------------------------------------------ */
/* small helpers                                                            */

/* length of an argument as Redis's "%s" would print it: up to a NUL, capped */
static int arg_print_len(const struct resp_arg *a, size_t cap)
{
    size_t n = a->len < cap ? a->len : cap;
    const char *z = memchr(a->ptr, '\0', n);
    return (int)(z ? (size_t)(z - a->ptr) : n);
}

static bool arg_is(const struct resp_arg *a, const char *s)
{
    return util_eq_nocase(a->ptr, a->len, s);
}

static bool arg_to_ll(const struct resp_arg *a, long long *v)
{
    return util_str_to_ll(a->ptr, a->len, v);
}

/* Redis addReplyHelp: the header names the command as sent, upper-cased */
static void reply_help(struct cmd_ctx *ctx, const char *const *lines)
{
    char head[96];
    int n = arg_print_len(&ctx->argv[0], 32);
    for (int i = 0; i < n; i++) {
        char ch = ctx->argv[0].ptr[i];
        head[i] = (ch >= 'a' && ch <= 'z') ? (char)(ch - 32) : ch;
    }
    snprintf(head + n, sizeof head - (size_t)n,
             " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
    long long count = 0;
    while (lines[count])
        count++;
    reply_array(ctx->out, count + 3);
    reply_simple(ctx->out, head);
    for (long long i = 0; i < count; i++)
        reply_simple(ctx->out, lines[i]);
    reply_simple(ctx->out, "HELP");
    reply_simple(ctx->out, "    Prints this help.");
}

/* a scratch text buffer (INFO, CLIENT LIST) built on struct reply */
static void text_printf(struct reply *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void text_printf(struct reply *t, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof buf)
        n = sizeof buf - 1;
    reply_raw(t, buf, (size_t)n);
}

/* Redis bytesToHuman */
static void bytes_to_human(char *s, size_t cap, unsigned long long n)
{
    double d;
    if (n < 1024) {
        snprintf(s, cap, "%lluB", n);
    } else if (n < (1024ULL * 1024)) {
        d = (double)n / 1024;
        snprintf(s, cap, "%.2fK", d);
    } else if (n < (1024ULL * 1024 * 1024)) {
        d = (double)n / (1024 * 1024);
        snprintf(s, cap, "%.2fM", d);
    } else if (n < (1024ULL * 1024 * 1024 * 1024)) {
        d = (double)n / (1024ULL * 1024 * 1024);
        snprintf(s, cap, "%.2fG", d);
    } else if (n < (1024ULL * 1024 * 1024 * 1024 * 1024)) {
        d = (double)n / (1024ULL * 1024 * 1024 * 1024);
        snprintf(s, cap, "%.2fT", d);
    } else if (n < (1024ULL * 1024 * 1024 * 1024 * 1024 * 1024)) {
        d = (double)n / (1024ULL * 1024 * 1024 * 1024 * 1024);
        snprintf(s, cap, "%.2fP", d);
    } else {
        snprintf(s, cap, "%lluB", n);
    }
}

static bool password_configured(const struct config *cfg)
{
    return cfg && cfg->requirepass && cfg->requirepass[0];
}

/* compare without an early exit on the first differing byte */
static bool password_matches(const struct config *cfg, const struct resp_arg *pass)
{
    const char *want = cfg->requirepass;
    size_t wlen = strlen(want);
    unsigned diff = (unsigned)(wlen ^ pass->len);
    for (size_t i = 0; i < pass->len; i++)
        diff |= (unsigned char)pass->ptr[i] ^ (unsigned char)(wlen ? want[i % wlen] : 0);
    return diff == 0;
}

/* Redis ACLAuthenticateUser with only the default user: nopass when no
 * requirepass is set, else the one password */
static bool auth_check(const struct config *cfg, const struct resp_arg *user,
                       const struct resp_arg *pass)
{
    if (!(user->len == 7 && memcmp(user->ptr, "default", 7) == 0))
        return false;
    if (!password_configured(cfg))
        return true;
    return password_matches(cfg, pass);
}

static bool conn_is_authenticated(struct cmd_ctx *ctx)
{
    return !password_configured(ctx->config) || conn_authenticated(ctx->conn);
}

static void reply_wrongpass(struct reply *out)
{
    reply_error(out, "WRONGPASS invalid username-password pair or user is disabled.");
}

/* Redis clientSetName's charset rule (also CLIENT SETINFO's) */
static bool client_attr_valid(const struct resp_arg *a)
{
    for (size_t i = 0; i < a->len; i++) {
        unsigned char ch = (unsigned char)a->ptr[i];
        if (ch < '!' || ch > '~')
            return false;
    }
    return true;
}

static bool client_setname_or_reply(struct cmd_ctx *ctx, const struct resp_arg *name)
{
    if (!client_attr_valid(name)) {
        reply_error(ctx->out, "ERR Client names cannot contain spaces, newlines or special characters.");
        return false;
    }
    conn_set_name(ctx->conn, name->ptr, name->len); /* len 0 removes the name */
    return true;
}

/* ------------------------------------------------------------------------ */
/* subcommand tables                                                        */

/* runs the subcommand named by argv[1], or replies Redis's errors */
static void container_dispatch(struct cmd_ctx *ctx, const char *parent)
{
    const struct subcommand *s;
    bool ok = command_subcommand_or_reply(parent, ctx->argc, ctx->argv, ctx->out, &s);
    if (s && ctx->conn)
        conn_set_last_command(ctx->conn, &s->cmd);
    if (!ok) {
        stats_subcommand(s ? &s->cmd : NULL, true); /* as Redis: rejected, an unknown one counted for no command */
        return;
    }
    stats_subcommand(&s->cmd, false); /* commandstats count "config|get", not "config" */
    s->cmd.proc(ctx);
}

/* Redis addReplySubcommandSyntaxError: argv[1] as sent, the container upper-cased */
static void reply_subcommand_syntax_error(struct cmd_ctx *ctx, const char *container)
{
    reply_errorf(ctx->out, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try %s HELP.",
                 arg_print_len(&ctx->argv[1], 128), ctx->argv[1].ptr, container);
}

/* ------------------------------------------------------------------------ */
/* PING ECHO QUIT SELECT AUTH HELLO RESET                                   */

static void cmd_ping(struct cmd_ctx *ctx)
{
    if (ctx->argc > 2) {
        reply_error(ctx->out, "ERR wrong number of arguments for 'ping' command");
        return;
    }
    if (ctx->conn && pubsub_subscriber_mode(ctx->conn)) { /* Redis: *2 pong, the argument or "" */
        reply_array(ctx->out, 2);
        reply_bulk(ctx->out, "pong", 4);
        reply_bulk(ctx->out, ctx->argc == 2 ? ctx->argv[1].ptr : "", ctx->argc == 2 ? ctx->argv[1].len : 0);
        return;
    }
    if (ctx->argc == 1)
        reply_simple(ctx->out, "PONG");
    else
        reply_bulk(ctx->out, ctx->argv[1].ptr, ctx->argv[1].len);
}

static void cmd_echo(struct cmd_ctx *ctx)
{
    reply_bulk(ctx->out, ctx->argv[1].ptr, ctx->argv[1].len);
}

static void cmd_quit(struct cmd_ctx *ctx)
{
    reply_ok(ctx->out);
    if (ctx->conn)
        conn_close_after_reply(ctx->conn);
}

/* MONITOR: every command any client runs from now on, as Redis's lines (core/monitor.h) */
static void cmd_monitor(struct cmd_ctx *ctx)
{
    monitor_start(ctx->conn, ctx->out);
}

static void cmd_select(struct cmd_ctx *ctx)
{
    long long id;
    if (!arg_to_ll(&ctx->argv[1], &id)) {
        reply_not_integer(ctx->out);
        return;
    }
    if (id < -2147483648LL || id > 2147483647LL) { /* Redis getIntFromObjectOrReply */
        reply_error(ctx->out, "ERR value is out of range, value must between -2147483648 and 2147483647");
        return;
    }
    if (id < 0 || id >= ctx->config->databases) {
        reply_error(ctx->out, "ERR DB index is out of range");
        return;
    }
    conn_select(ctx->conn, (int)id);
    ctx->db = (int)id;
    reply_ok(ctx->out);
}

static void cmd_auth(struct cmd_ctx *ctx)
{
    static const struct resp_arg default_user = {"default", 7};
    const struct resp_arg *user, *pass;
    if (ctx->argc > 3) {
        reply_syntax_error(ctx->out);
        return;
    }
    if (ctx->argc == 2) {
        if (!password_configured(ctx->config)) {
            reply_error(ctx->out, "ERR AUTH <password> called without any password configured "
                                  "for the default user. Are you sure your configuration is correct?");
            return;
        }
        user = &default_user;
        pass = &ctx->argv[1];
    } else {
        user = &ctx->argv[1];
        pass = &ctx->argv[2];
    }
    if (!auth_check(ctx->config, user, pass)) {
        reply_wrongpass(ctx->out);
        return;
    }
    conn_set_authenticated(ctx->conn, true);
    reply_ok(ctx->out);
}

static void cmd_hello(struct cmd_ctx *ctx)
{
    long long ver = 0;
    int next = 1;
    if (ctx->argc >= 2) {
        if (!arg_to_ll(&ctx->argv[next++], &ver)) {
            reply_error(ctx->out, "ERR Protocol version is not an integer or out of range");
            return;
        }
        if (ver < 2 || ver > 3) {
            reply_error(ctx->out, "NOPROTO unsupported protocol version");
            return;
        }
    }
    const struct resp_arg *user = NULL, *pass = NULL, *name = NULL;
    for (int j = next; j < ctx->argc; j++) {
        int more = (ctx->argc - 1) - j;
        const struct resp_arg *opt = &ctx->argv[j];
        if (arg_is(opt, "auth") && more >= 2) {
            user = &ctx->argv[j + 1];
            pass = &ctx->argv[j + 2];
            j += 2;
        } else if (arg_is(opt, "setname") && more) {
            name = &ctx->argv[j + 1];
            j++;
        } else {
            reply_errorf(ctx->out, "ERR Syntax error in HELLO option '%.*s'",
                         arg_print_len(opt, 256), opt->ptr);
            return;
        }
    }
    if (user) {
        if (!auth_check(ctx->config, user, pass)) {
            reply_wrongpass(ctx->out);
            return;
        }
        conn_set_authenticated(ctx->conn, true);
    }
    if (!conn_is_authenticated(ctx)) {
        reply_error(ctx->out, "NOAUTH HELLO must be called with the client already authenticated, "
                              "otherwise the HELLO AUTH <user> <pass> option can be used to "
                              "authenticate the client and select the RESP protocol version at the "
                              "same time");
        return;
    }
    if (name && !client_setname_or_reply(ctx, name))
        return;
    if (ver) {
        conn_set_resp(ctx->conn, (int)ver);
        ctx->out->resp = (int)ver; /* this reply already speaks the new protocol */
    }
    reply_map(ctx->out, 7);
    reply_bulk_cstr(ctx->out, "server");
    reply_bulk_cstr(ctx->out, "redis");
    reply_bulk_cstr(ctx->out, "version");
    reply_bulk_cstr(ctx->out, REDIS_COMPAT_VERSION);
    reply_bulk_cstr(ctx->out, "proto");
    reply_int(ctx->out, ver ? ver : conn_resp(ctx->conn));
    reply_bulk_cstr(ctx->out, "id");
    reply_int(ctx->out, (long long)conn_id(ctx->conn));
    reply_bulk_cstr(ctx->out, "mode");
    reply_bulk_cstr(ctx->out, "standalone");
    reply_bulk_cstr(ctx->out, "role");
    reply_bulk_cstr(ctx->out, replica_now() ? "replica" : "master");
    reply_bulk_cstr(ctx->out, "modules");
    reply_array(ctx->out, 0);
}

/* RESET: the connection as it was at connect (conn_reset), answered +RESET */
static void cmd_reset(struct cmd_ctx *ctx)
{
    reply_simple(conn_reset(ctx->conn), "RESET");
}

/* ------------------------------------------------------------------------ */
/* COMMAND                                                                  */

/* Redis's ACL categories (acl.c ACLCommandCategories), for COMMAND LIST FILTERBY ACLCAT */
static const char *const acl_categories[] = {
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
    "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
    "blocking", "dangerous", "connection", "transaction", "scripting", NULL,
};

/* does the space-separated list hold the word w (after an optional '@')? */
static bool word_in(const char *list, const char *w, size_t wlen)
{
    if (!list)
        return false;
    const char *p = list;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *s = p;
        while (*p && *p != ' ')
            p++;
        const char *t = s;
        if (*t == '@')
            t++;
        if ((size_t)(p - t) == wlen && strncasecmp(t, w, wlen) == 0)
            return true;
    }
    return false;
}

/*
 * Appends Redis's bytes from command_meta (RESP3) in out's protocol: for
 * RESP2 every map header %n becomes *2n and every set header ~n becomes *n
 * (command_meta.h).  The bytes are generated, so they are well formed.
 */
static void reply_meta(struct reply *out, const char *p, size_t n)
{
    if (out->resp == 3) {
        reply_raw(out, p, n);
        return;
    }
    struct rread r;
    rread_init(&r, p, n);
    while (rread_left(&r)) {
        const char *v = r.p;
        char t;
        long long k;
        if (rread_agg(&r, &t, &k)) {
            if (t == '%' || t == '~') {
                reply_array(out, t == '%' ? 2 * k : k);
                continue;
            }
        } else if (!rread_skip(&r)) { /* a string or a number: as it is */
            break;
        }
        reply_raw(out, v, (size_t)(r.p - v));
    }
}

/* c's COMMAND INFO entry; a null for a name Redis 7.0.15 lacks, as Redis
 * answers for an unknown name */
static void reply_command_info(struct reply *out, const struct command *c)
{
    size_t n;
    const char *p = command_meta_info(c->name, &n);
    if (p)
        reply_meta(out, p, n);
    else
        reply_null(out);
}

/* c's COMMAND DOCS name and doc; false (nothing sent) for a name Redis 7.0.15
 * lacks, which Redis leaves out of the map */
static bool reply_command_docs(struct reply *out, const struct command *c, bool send)
{
    size_t n;
    const char *p = command_meta_docs(c->name, &n);
    if (!p)
        return false;
    if (send) {
        reply_bulk_cstr(out, c->name);
        reply_meta(out, p, n);
    }
    return true;
}

/* Redis lookupCommandBySds: "name" or "container|sub"; NULL when unknown */
static const struct command *command_by_fullname(const struct resp_arg *a)
{
    const char *bar = memchr(a->ptr, '|', a->len);
    if (!bar)
        return command_lookup(a->ptr, a->len);
    const struct command *parent = command_lookup(a->ptr, (size_t)(bar - a->ptr));
    if (!parent)
        return NULL;
    const char *rest = bar + 1;
    size_t rlen = a->len - (size_t)(rest - a->ptr);
    if (memchr(rest, '|', rlen))
        return NULL;
    const struct subcommand *sub = command_subcommand_find(parent->name, rest, rlen);
    return sub ? &sub->cmd : NULL;
}

static void reply_command_info_all(struct reply *out)
{
    size_t n = command_count();
    reply_array(out, (long long)n);
    for (size_t i = 0; i < n; i++)
        reply_command_info(out, command_at(i));
}

static void cmd_command(struct cmd_ctx *ctx)
{
    if (ctx->argc == 1) {
        reply_command_info_all(ctx->out);
        return;
    }
    container_dispatch(ctx, "command");
}

static void cmd_command_count(struct cmd_ctx *ctx)
{
    reply_int(ctx->out, (long long)command_count());
}

static void cmd_command_info(struct cmd_ctx *ctx)
{
    if (ctx->argc == 2) {
        reply_command_info_all(ctx->out);
        return;
    }
    reply_array(ctx->out, ctx->argc - 2);
    for (int i = 2; i < ctx->argc; i++) {
        const struct command *c = command_by_fullname(&ctx->argv[i]);
        if (c)
            reply_command_info(ctx->out, c);
        else
            reply_null(ctx->out);
    }
}

/* two passes, as the map's length comes first: count, then send */
static void cmd_command_docs(struct cmd_ctx *ctx)
{
    for (int send = 0; send < 2; send++) {
        long long found = 0;
        if (ctx->argc == 2) {
            for (size_t i = 0; i < command_count(); i++)
                found += reply_command_docs(ctx->out, command_at(i), send);
        } else {
            for (int i = 2; i < ctx->argc; i++) {
                const struct command *c = command_by_fullname(&ctx->argv[i]);
                found += c && reply_command_docs(ctx->out, c, send);
            }
        }
        if (!send)
            reply_map(ctx->out, found);
    }
}

enum list_filter { FILTER_NONE, FILTER_MODULE, FILTER_ACLCAT, FILTER_PATTERN };

static bool command_list_match(const struct command *c, enum list_filter f,
                               const struct resp_arg *arg)
{
    switch (f) {
    case FILTER_NONE:
        return true;
    case FILTER_MODULE:
        return false; /* no modules */
    case FILTER_ACLCAT:
        for (int i = 0; acl_categories[i]; i++)
            if (util_eq_nocase(arg->ptr, arg->len, acl_categories[i]))
                return word_in(c->categories, acl_categories[i], strlen(acl_categories[i]));
        return false;
    case FILTER_PATTERN:
        return util_glob_match(arg->ptr, arg->len, c->name, strlen(c->name), true);
    }
    return false;
}

static void cmd_command_list(struct cmd_ctx *ctx)
{
    enum list_filter f = FILTER_NONE;
    const struct resp_arg *farg = NULL;
    for (int i = 2; i < ctx->argc; i++) {
        int more = (ctx->argc - 1) - i;
        if (arg_is(&ctx->argv[i], "filterby") && more == 2) {
            const struct resp_arg *t = &ctx->argv[i + 1];
            if (arg_is(t, "module"))
                f = FILTER_MODULE;
            else if (arg_is(t, "aclcat"))
                f = FILTER_ACLCAT;
            else if (arg_is(t, "pattern"))
                f = FILTER_PATTERN;
            else {
                reply_syntax_error(ctx->out);
                return;
            }
            farg = &ctx->argv[i + 2];
            i += 2;
        } else {
            reply_syntax_error(ctx->out);
            return;
        }
    }
    /* two passes: count, then emit */
    for (int pass = 0; pass < 2; pass++) {
        long long n = 0;
        for (size_t i = 0; i < command_count(); i++) {
            const struct command *c = command_at(i);
            if (command_list_match(c, f, farg)) {
                if (pass)
                    reply_bulk_cstr(ctx->out, c->name);
                n++;
            }
            const struct subcommand *subs;
            size_t nsubs = command_subcommands_of(c->name, &subs);
            for (size_t j = 0; j < nsubs; j++)
                if (command_list_match(&subs[j].cmd, f, farg)) {
                    if (pass)
                        reply_bulk_cstr(ctx->out, subs[j].cmd.name);
                    n++;
                }
        }
        if (!pass)
            reply_array(ctx->out, n);
    }
}

static void cmd_command_getkeys(struct cmd_ctx *ctx)
{
    const struct resp_arg *av = ctx->argv + 2;
    int n = ctx->argc - 2;
    const struct command *c = command_lookup(av[0].ptr, av[0].len);
    const struct subcommand *subs;
    if (c && n >= 2 && command_subcommands_of(c->name, &subs)) {
        const struct subcommand *s = command_subcommand_find(c->name, av[1].ptr, av[1].len);
        c = s ? &s->cmd : NULL;
    }
    if (!c) {
        reply_error(ctx->out, "ERR Invalid command specified");
        return;
    }
    if (c->first_key <= 0) {
        reply_error(ctx->out, "ERR The command has no key arguments");
        return;
    }
    if ((c->arity > 0 && c->arity != n) || n < -c->arity) {
        reply_error(ctx->out, "ERR Invalid number of arguments specified for command");
        return;
    }
    int last = c->last_key >= 0 ? c->last_key : n + c->last_key;
    int *pos = mem_alloc((size_t)n * sizeof(int));
    int nkeys = command_key_positions(c, n, av, pos);
    if (nkeys <= 0 || (!(c->flags & (CMD_NUMKEYS | CMD_KEYS_STREAMS)) && (last >= n || c->first_key >= n))) {
        reply_error(ctx->out, "ERR Invalid arguments specified for command");
    } else {
        reply_array(ctx->out, nkeys);
        for (int i = 0; i < nkeys; i++)
            reply_bulk(ctx->out, av[pos[i]].ptr, av[pos[i]].len);
    }
    mem_release(pos);
}

static void cmd_command_help(struct cmd_ctx *ctx)
{
    static const char *const help[] = {
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        NULL,
    };
    reply_help(ctx, help);
}

/* ------------------------------------------------------------------------ */
/* CONFIG                                                                   */

static void cmd_config(struct cmd_ctx *ctx)
{
    container_dispatch(ctx, "config");
}

static void cmd_config_get(struct cmd_ctx *ctx)
{
    config_get_reply(ctx->out, ctx->argv + 2, ctx->argc - 2);
}

/* CONFIG SET bind: every shard's sockets on the new addresses, bound before the config changes */
static const char *config_set_bind(const struct config *now, const struct config *next, void *arg)
{
    (void)now;
    struct shard_listeners **l = arg;
    *l = shard_listeners_open(next);
    return *l ? NULL : "Failed to bind to specified addresses.";
}

static struct shard_listeners *listen_plan_arg(const struct resp_arg *a)
{
    uint64_t p = 0;
    memcpy(&p, a->ptr, a->len < sizeof p ? a->len : sizeof p);
    return (struct shard_listeners *)(uintptr_t)p;
}

/* a shard's part: `__listen <plan>`, it takes its sockets of the plan */
static void cmd_listen_part(struct cmd_ctx *ctx)
{
    shard_listeners_adopt(listen_plan_arg(&ctx->argv[1]));
    reply_ok(ctx->out);
}

static const struct command listen_part_command = {
    "__listen", cmd_listen_part, 2, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, "",
};

/* every shard listens where bind says, and no longer elsewhere: CONFIG SET answers */
static void listen_merge(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                         const char *const *parts, const size_t *lens)
{
    (void)argc, (void)nparts, (void)parts, (void)lens;
    struct shard_listeners *l = listen_plan_arg(&argv[1]);
    shard_listeners_destroy(&l);
    reply_ok(out);
}

static void cmd_config_set(struct cmd_ctx *ctx)
{
    if (ctx->argc & 1) { /* name value pairs */
        reply_syntax_error(ctx->out);
        return;
    }
    struct shard_listeners *l = NULL;
    size_t before = ctx->out->len;
    bool rebind = config_set_reply(ctx->out, ctx->argv + 2, ctx->argc - 2, ctx->conn ? config_set_bind : NULL, &l);
    log_config_changed(config_current()); /* the log's level, if loglevel changed */
    if (!rebind && ctx->conn && ctx->config->appendonly && !config_current()->appendonly &&
        aof_state() != AOF_OFF && ctx->out->len == before + 5) {
        /* appendonly no: answered once every shard has stopped recording (Redis's stopAppendOnly is done
         * before its +OK), so no write acknowledged after the +OK is in the file */
        ctx->out->len = before;
        aof_stop_all(ctx->conn);
    }
    if (rebind) { /* the shards take their new sockets, then +OK */
        uint64_t p = (uint64_t)(uintptr_t)l;
        char bits[sizeof p];
        memcpy(bits, &p, sizeof p);
        struct resp_arg argv[2] = {{"__listen", 8}, {bits, sizeof bits}};
        conn_fanout(ctx->conn, &listen_part_command, 2, argv, listen_merge);
    }
}

static void cmd_config_resetstat(struct cmd_ctx *ctx)
{
    stats_reset();
    reply_ok(ctx->out);
}

static void cmd_config_rewrite(struct cmd_ctx *ctx)
{
    const char *file = ctx->config->config_file;
    if (!file || !file[0]) {
        reply_error(ctx->out, "ERR The server is running without a config file");
        return;
    }
    char err[256];
    if (config_rewrite(err, sizeof(err)) < 0) {
        log_warn("CONFIG REWRITE failed: %s", err);
        reply_errorf(ctx->out, "ERR Rewriting config file: %s", err);
        return;
    }
    log_notice("CONFIG REWRITE executed with success.");
    reply_ok(ctx->out);
}

static void cmd_config_help(struct cmd_ctx *ctx)
{
    static const char *const help[] = {
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
        NULL,
    };
    reply_help(ctx, help);
}

/* ------------------------------------------------------------------------ */
/* CLIENT                                                                   */

static void cmd_client(struct cmd_ctx *ctx)
{
    container_dispatch(ctx, "client");
}

static void cmd_client_id(struct cmd_ctx *ctx)
{
    reply_int(ctx->out, (long long)conn_id(ctx->conn));
}

static void client_describe_line(struct cmd_ctx *ctx, struct reply *t)
{
    char line[1024];
    size_t n = conn_describe(ctx->conn, ctx->now, line, sizeof line);
    if (n >= sizeof line)
        n = sizeof line - 1;
    reply_raw(t, line, n);
    reply_raw(t, "\n", 1);
}

static void cmd_client_info(struct cmd_ctx *ctx)
{
    struct reply t;
    reply_init(&t);
    client_describe_line(ctx, &t);
    reply_verbatim(ctx->out, t.buf, t.len, "txt");
    reply_deinit(&t);
}

/*
 * CLIENT LIST and CLIENT KILL concern the connections of every shard, each
 * owned by its shard's thread: the home checks the arguments, then fans
 * `__clients list|kill <caller id> <the arguments from argv[2]>` out to every
 * shard (conn_fanout); each shard parses the same arguments again and lists
 * or closes its own connections; the home merges.
 */
static const char *const client_type_names[] = {"normal", "slave", "replica", "pubsub", "master"};

/* Redis getClientTypeByName: a CONN_TYPE_*, -1 unknown */
static int client_type_by_name(const struct resp_arg *a)
{
    static const enum conn_type types[] = {CONN_TYPE_NORMAL, CONN_TYPE_REPLICA, CONN_TYPE_REPLICA, CONN_TYPE_PUBSUB,
                                           CONN_TYPE_MASTER};
    for (int i = 0; i < 5; i++)
        if (arg_is(a, client_type_names[i]))
            return types[i];
    return -1;
}

static bool client_bad_type_or_reply(struct cmd_ctx *ctx, const struct resp_arg *t)
{
    if (client_type_by_name(t) >= 0)
        return false;
    reply_errorf(ctx->out, "ERR Unknown client type '%.*s'", arg_print_len(t, 256), t->ptr);
    return true;
}

/*
 * CLIENT KILL's filters from argv[first..argc) into f (Redis clientCommand):
 * the old form is one addr:port (SKIPME no); the new one option/value pairs.
 * Writes Redis's error and returns false when they are not valid.
 */
static bool client_kill_filter_or_reply(struct cmd_ctx *ctx, const struct resp_arg *argv, int argc, int first,
                                        uint64_t caller, struct conn_filter *f)
{
    memset(f, 0, sizeof(*f));
    f->type = CONN_TYPE_ANY;
    f->caller_id = caller;
    if (argc - first == 1) {
        f->addr = argv[first].ptr;
        f->addr_len = argv[first].len;
        return true;
    }
    if (argc - first < 2 || (argc - first) % 2 != 0) {
        reply_syntax_error(ctx->out);
        return false;
    }
    f->skip_id = caller;
    for (int i = first; i < argc; i += 2) {
        const struct resp_arg *opt = &argv[i], *val = &argv[i + 1];
        if (arg_is(opt, "id")) {
            long long id;
            if (!arg_to_ll(val, &id) || id < 1) {
                reply_error(ctx->out, "ERR client-id should be greater than 0");
                return false;
            }
            f->id = (uint64_t)id;
        } else if (arg_is(opt, "type")) {
            if (client_bad_type_or_reply(ctx, val))
                return false;
            f->type = client_type_by_name(val);
        } else if (arg_is(opt, "addr")) {
            f->addr = val->ptr;
            f->addr_len = val->len;
        } else if (arg_is(opt, "laddr")) {
            f->laddr = val->ptr;
            f->laddr_len = val->len;
        } else if (arg_is(opt, "user")) {
            if (!(val->len == 7 && memcmp(val->ptr, "default", 7) == 0)) {
                reply_errorf(ctx->out, "ERR No such user '%.*s'", arg_print_len(val, 256), val->ptr);
                return false;
            }
        } else if (arg_is(opt, "skipme")) {
            if (arg_is(val, "yes")) {
                f->skip_id = caller;
            } else if (arg_is(val, "no")) {
                f->skip_id = 0;
            } else {
                reply_syntax_error(ctx->out);
                return false;
            }
        } else {
            reply_syntax_error(ctx->out);
            return false;
        }
    }
    return true;
}

/* "id=<n> ...": the line's id */
static uint64_t client_line_id(const char *line)
{
    return strncmp(line, "id=", 3) == 0 ? strtoull(line + 3, NULL, 10) : 0;
}

struct client_line {
    uint64_t id;
    const char *p;
    size_t len; /* with its '\n' */
};

static int client_line_cmp(const void *a, const void *b)
{
    const struct client_line *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* the bulk (or verbatim) string of one shard's part */
static bool client_part_text(const char *p, size_t len, const char **text, size_t *tlen)
{
    struct rread r;
    rread_init(&r, p, len);
    return (rread_type(&r) == '$' || rread_type(&r) == '=') && rread_bulk(&r, text, tlen) && *text;
}

/* every shard's lines, by id (the order of connection); for LIST ID, in the order of the ids asked */
static void client_list_merge(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                              const char *const *parts, const size_t *lens)
{
    size_t n = 0, cap = 64;
    struct client_line *lines = mem_alloc(cap * sizeof(*lines));
    for (int i = 0; i < nparts; i++) {
        const char *text;
        size_t tlen;
        if (!client_part_text(parts[i], lens[i], &text, &tlen))
            continue;
        for (const char *p = text, *end = text + tlen; p < end;) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
            if (n == cap) {
                cap *= 2;
                lines = mem_realloc(lines, cap * sizeof(*lines));
            }
            lines[n++] = (struct client_line){client_line_id(p), p, len};
            p += len;
        }
    }
    qsort(lines, n, sizeof(*lines), client_line_cmp);
    struct reply t;
    reply_init(&t);
    if (argc > 4 && arg_is(&argv[3], "id")) {
        for (int j = 4; j < argc; j++) {
            long long id = 0;
            arg_to_ll(&argv[j], &id);
            struct client_line key = {(uint64_t)id, NULL, 0};
            const struct client_line *l = bsearch(&key, lines, n, sizeof(*lines), client_line_cmp);
            if (l)
                reply_raw(&t, l->p, l->len);
        }
    } else {
        for (size_t i = 0; i < n; i++)
            reply_raw(&t, lines[i].p, lines[i].len);
    }
    reply_verbatim(out, t.buf ? t.buf : "", t.len, "txt");
    reply_deinit(&t);
    mem_release(lines);
}

/* the old form answers +OK or "No such client", the new one the count */
static void client_kill_merge(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                              const char *const *parts, const size_t *lens)
{
    (void)argv;
    long long killed = rread_int_sum(nparts, parts, lens);
    if (argc == 4) {
        if (killed == 0)
            reply_error(out, "ERR No such client");
        else
            reply_ok(out);
    } else {
        reply_int(out, killed);
    }
}

/* a shard's part: `__clients list|kill <caller id> <CLIENT's argv[2..]>` */
static void cmd_clients_part(struct cmd_ctx *ctx)
{
    long long caller = 0;
    arg_to_ll(&ctx->argv[2], &caller);
    struct conn_filter f;
    if (arg_is(&ctx->argv[1], "kill")) {
        if (!client_kill_filter_or_reply(ctx, ctx->argv, ctx->argc, 3, (uint64_t)caller, &f))
            return;
        long long killed = conn_kill_local(&f);
        /* replicas are the sender thread's, not a shard's connections: shard 0's part drops them */
        if (ctx->shard == 0 && f.type == CONN_TYPE_REPLICA && !f.id && !f.addr && !f.laddr)
            killed += primary_kill_replicas();
        reply_int(ctx->out, killed);
        return;
    }
    if (arg_is(&ctx->argv[1], "pause")) { /* `__clients pause <caller> <type> <end> <stamp>` */
        long long type = 0, end = 0, stamp = 0;
        if (ctx->argc == 6) {
            arg_to_ll(&ctx->argv[3], &type);
            arg_to_ll(&ctx->argv[4], &end);
            arg_to_ll(&ctx->argv[5], &stamp); /* below 2^63 (conn_pause_stamp) */
        }
        conn_pause_local((int)type, end, (uint64_t)stamp);
        reply_ok(ctx->out);
        return;
    }
    if (arg_is(&ctx->argv[1], "unblock")) { /* `__clients unblock <caller> <id> [TIMEOUT|ERROR]` */
        long long id = 0;
        arg_to_ll(&ctx->argv[3], &id);
        reply_int(ctx->out, conn_unblock_local((uint64_t)id, ctx->argc == 5 && arg_is(&ctx->argv[4], "error")));
        return;
    }
    memset(&f, 0, sizeof(f));
    f.type = CONN_TYPE_ANY;
    struct reply t;
    reply_init(&t);
    if (ctx->argc == 5 && arg_is(&ctx->argv[3], "type")) {
        f.type = client_type_by_name(&ctx->argv[4]);
        conn_list_local(&f, ctx->now, &t);
    } else if (ctx->argc > 4 && arg_is(&ctx->argv[3], "id")) {
        for (int j = 4; j < ctx->argc; j++) {
            long long id;
            bool dup = false;
            for (int k = 4; k < j && !dup; k++)
                dup = ctx->argv[k].len == ctx->argv[j].len &&
                      memcmp(ctx->argv[k].ptr, ctx->argv[j].ptr, ctx->argv[j].len) == 0;
            if (!dup && arg_to_ll(&ctx->argv[j], &id) && id > 0) {
                f.id = (uint64_t)id;
                conn_list_local(&f, ctx->now, &t);
            }
        }
    } else {
        conn_list_local(&f, ctx->now, &t);
    }
    reply_bulk(ctx->out, t.buf ? t.buf : "", t.len);
    reply_deinit(&t);
}

static const struct command client_part_command = {
    "__clients", cmd_clients_part, -4, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, "",
};

/* fan `__clients <what> <caller id> argv[2..]` out */
static void client_fanout(struct cmd_ctx *ctx, const char *what, conn_merge_fn *merge)
{
    struct resp_arg *argv = mem_alloc((size_t)(ctx->argc + 1) * sizeof(*argv));
    char id[24];
    argv[0] = (struct resp_arg){"__clients", 9};
    argv[1] = (struct resp_arg){what, strlen(what)};
    argv[2] = (struct resp_arg){id, (size_t)snprintf(id, sizeof(id), "%llu", (unsigned long long)conn_id(ctx->conn))};
    for (int j = 2; j < ctx->argc; j++)
        argv[j + 1] = ctx->argv[j];
    conn_fanout(ctx->conn, &client_part_command, ctx->argc + 1, argv, merge);
    mem_release(argv);
}

static void cmd_client_list(struct cmd_ctx *ctx)
{
    if (ctx->argc == 4 && arg_is(&ctx->argv[2], "type")) {
        if (client_bad_type_or_reply(ctx, &ctx->argv[3]))
            return;
    } else if (ctx->argc > 3 && arg_is(&ctx->argv[2], "id")) {
        for (int j = 3; j < ctx->argc; j++) {
            long long id;
            if (!arg_to_ll(&ctx->argv[j], &id)) {
                reply_error(ctx->out, "ERR Invalid client ID");
                return;
            }
        }
    } else if (ctx->argc != 2) {
        reply_syntax_error(ctx->out);
        return;
    }
    client_fanout(ctx, "list", client_list_merge);
}

static void cmd_client_kill(struct cmd_ctx *ctx)
{
    struct conn_filter f;
    if (client_kill_filter_or_reply(ctx, ctx->argv, ctx->argc, 2, ctx->conn ? conn_id(ctx->conn) : 0, &f))
        client_fanout(ctx, "kill", client_kill_merge);
}

/* the shards' answers summed: 1 when the client was blocked somewhere */
static void client_unblock_merge(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                                 const char *const *parts, const size_t *lens)
{
    (void)argc;
    (void)argv;
    reply_int(out, rread_int_sum(nparts, parts, lens));
}

/* CLIENT UNBLOCK id [TIMEOUT|ERROR] */
static void cmd_client_unblock(struct cmd_ctx *ctx)
{
    long long id;
    if (ctx->argc > 4) {
        reply_subcommand_syntax_error(ctx, "CLIENT");
        return;
    }
    if (ctx->argc == 4 && !arg_is(&ctx->argv[3], "timeout") && !arg_is(&ctx->argv[3], "error")) {
        reply_error(ctx->out, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
        return;
    }
    if (!cmd_get_ll_or_reply(ctx, &ctx->argv[2], &id))
        return;
    client_fanout(ctx, "unblock", client_unblock_merge);
}

static void cmd_client_getname(struct cmd_ctx *ctx)
{
    const char *name = conn_name(ctx->conn);
    if (name)
        reply_bulk_cstr(ctx->out, name);
    else
        reply_null(ctx->out);
}

static void cmd_client_setname(struct cmd_ctx *ctx)
{
    if (client_setname_or_reply(ctx, &ctx->argv[2]))
        reply_ok(ctx->out);
}

/* CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2 semantics) */
static void cmd_client_setinfo(struct cmd_ctx *ctx)
{
    const struct resp_arg *attr = &ctx->argv[2], *val = &ctx->argv[3];
    bool version;
    if (arg_is(attr, "lib-name")) {
        version = false;
    } else if (arg_is(attr, "lib-ver")) {
        version = true;
    } else {
        reply_errorf(ctx->out, "ERR Unrecognized option '%.*s'", arg_print_len(attr, 256),
                     attr->ptr);
        return;
    }
    if (!client_attr_valid(val)) {
        reply_errorf(ctx->out, "ERR %.*s cannot contain spaces, newlines or special characters.",
                     arg_print_len(attr, 256), attr->ptr);
        return;
    }
    conn_set_lib(ctx->conn, version, val->ptr, val->len);
    reply_ok(ctx->out);
}

static void cmd_client_no_evict(struct cmd_ctx *ctx)
{
    if (arg_is(&ctx->argv[2], "on") || arg_is(&ctx->argv[2], "off"))
        reply_ok(ctx->out); /* no client eviction in percore: nothing to protect from */
    else
        reply_syntax_error(ctx->out);
}

/* CLIENT REPLY ON|OFF|SKIP: OFF and SKIP answer nothing (conn_set_reply_mode) */
static void cmd_client_reply(struct cmd_ctx *ctx)
{
    const struct resp_arg *mode = &ctx->argv[2];
    if (arg_is(mode, "on"))
        reply_ok(conn_set_reply_mode(ctx->conn, CONN_REPLIES_ON));
    else if (arg_is(mode, "off"))
        conn_set_reply_mode(ctx->conn, CONN_REPLIES_OFF);
    else if (arg_is(mode, "skip"))
        conn_set_reply_mode(ctx->conn, CONN_REPLIES_SKIP);
    else
        reply_syntax_error(ctx->out);
}

/*
 * CLIENT PAUSE and UNPAUSE reach every shard before they answer: the home
 * fans `__clients pause <caller> <type> <end ms> <stamp>` out (type 0:
 * unpause), each shard applies it to its own connections (conn_pause_local),
 * and the merge answers +OK.
 */
static void client_ok_merge(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                            const char *const *parts, const size_t *lens)
{
    (void)argc, (void)argv, (void)nparts, (void)parts, (void)lens;
    reply_ok(out);
}

static void client_pause_fanout(struct cmd_ctx *ctx, int type, long long end)
{
    char id[24], t[8], e[24], st[24];
    struct resp_arg argv[6] = {
        {"__clients", 9},
        {"pause", 5},
        {id, (size_t)snprintf(id, sizeof id, "%llu", (unsigned long long)conn_id(ctx->conn))},
        {t, (size_t)snprintf(t, sizeof t, "%d", type)},
        {e, (size_t)snprintf(e, sizeof e, "%lld", end)},
        {st, (size_t)snprintf(st, sizeof st, "%llu", (unsigned long long)conn_pause_stamp(ctx->conn))},
    };
    conn_fanout(ctx->conn, &client_part_command, 6, argv, client_ok_merge);
}

/* CLIENT PAUSE timeout [WRITE|ALL]: Redis checks the mode before the timeout */
static void cmd_client_pause(struct cmd_ctx *ctx)
{
    int type = CONN_PAUSE_ALL;
    long long ms;
    if (ctx->argc > 4) {
        reply_subcommand_syntax_error(ctx, "CLIENT");
        return;
    }
    if (ctx->argc == 4 && arg_is(&ctx->argv[3], "write")) {
        type = CONN_PAUSE_WRITE;
    } else if (ctx->argc == 4 && !arg_is(&ctx->argv[3], "all")) {
        reply_error(ctx->out, "ERR CLIENT PAUSE mode must be WRITE or ALL");
        return;
    }
    if (!arg_to_ll(&ctx->argv[2], &ms)) {
        reply_error(ctx->out, "ERR timeout is not an integer or out of range");
        return;
    }
    if (ms < 0) {
        reply_error(ctx->out, "ERR timeout is negative");
        return;
    }
    /* Redis 7.0 adds the time unchecked: an end past LLONG_MAX wraps into the past, and 0 is no pause */
    client_pause_fanout(ctx, type, ms > 0 ? (long long)((unsigned long long)ctx->now + (unsigned long long)ms) : 0);
}

static void cmd_client_unpause(struct cmd_ctx *ctx)
{
    client_pause_fanout(ctx, 0, 0);
}

static void cmd_client_help(struct cmd_ctx *ctx)
{
    static const char *const help[] = {
        "GETNAME",
        "    Return the name of the current connection.",
        "GETREDIR",
        "    Return the client ID we are redirecting to when tracking is enabled.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "KILL <ip:port>",
        "    Kill connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are:",
        "    * ADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made from the specified address",
        "    * LADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made to specified local address",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Kill connections by type.",
        "    * USER <username>",
        "      Kill connections authenticated by <username>.",
        "    * SKIPME (YES|NO)",
        "      Skip killing current connection (default: yes).",
        "LIST [options ...]",
        "    Return information about client connections. Options:",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Return clients of specified type.",
        "UNPAUSE",
        "    Stop the current client pause, resuming traffic.",
        "PAUSE <timeout> [WRITE|ALL]",
        "    Suspend all, or just write, clients for <timeout> milliseconds.",
        "REPLY (ON|OFF|SKIP)",
        "    Control the replies sent to the current connection.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "    Unblock the specified blocked client.",
        "SETINFO <option> <value>",
        "    Set client meta attr. Options are:",
        "    * LIB-NAME: the client lib name.",
        "    * LIB-VER: the client lib version.",
        "NO-EVICT (ON|OFF)",
        "    Protect current client connection from eviction.",
        NULL,
    };
    reply_help(ctx, help);
}

/* ------------------------------------------------------------------------ */
/* SLOWLOG                                                                  */

/*
 * Every shard keeps the slowlog of the commands it ran (slowlog.h); the
 * subcommands fan `__slowlog get <count>|len|reset` out to all of them and
 * merge: GET newest first, LEN summed, RESET +OK.  Each shard keeps its
 * newest slowlog-max-len entries, so the newest slowlog-max-len of all
 * shards are there: GET and LEN show no more, as Redis's one log would.
 */
static void cmd_slowlog_part(struct cmd_ctx *ctx)
{
    if (arg_is(&ctx->argv[1], "get")) {
        long long count = -1;
        arg_to_ll(&ctx->argv[2], &count);
        slowlog_reply_local(ctx->out, count);
    } else if (arg_is(&ctx->argv[1], "len")) {
        reply_int(ctx->out, slowlog_len_local());
    } else {
        slowlog_reset_local();
        reply_ok(ctx->out);
    }
}

static const struct command slowlog_part_command = {
    "__slowlog", cmd_slowlog_part, -2, CMD_INTERNAL, 0, 0, 0, ROUTE_HOME, "",
};

static void slowlog_get_merge(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                              const char *const *parts, const size_t *lens)
{
    (void)argc;
    long long count = -1, max = config_current()->slowlog_max_len;
    arg_to_ll(&argv[2], &count);
    slowlog_merge_get(out, count < 0 || count > max ? max : count, nparts, parts, lens);
}

static void slowlog_len_merge(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                              const char *const *parts, const size_t *lens)
{
    (void)argc, (void)argv;
    long long sum = rread_int_sum(nparts, parts, lens);
    long long max = config_current()->slowlog_max_len;
    reply_int(out, sum < max ? sum : max);
}

static void slowlog_reset_merge(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                                const char *const *parts, const size_t *lens)
{
    (void)argc, (void)argv, (void)nparts, (void)parts, (void)lens;
    reply_ok(out);
}

static void slowlog_fanout(struct cmd_ctx *ctx, const char *what, const char *count, conn_merge_fn *merge)
{
    struct resp_arg argv[3] = {{"__slowlog", 9}, {what, strlen(what)}, {count, count ? strlen(count) : 0}};
    conn_fanout(ctx->conn, &slowlog_part_command, count ? 3 : 2, argv, merge);
}

static void cmd_slowlog(struct cmd_ctx *ctx)
{
    container_dispatch(ctx, "slowlog");
}

static void cmd_slowlog_get(struct cmd_ctx *ctx)
{
    long long count = 10;
    if (ctx->argc > 3) { /* Redis addReplySubcommandSyntaxError */
        reply_errorf(ctx->out, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try SLOWLOG HELP.",
                     arg_print_len(&ctx->argv[1], 128), ctx->argv[1].ptr);
        return;
    }
    if (ctx->argc == 3 && (!arg_to_ll(&ctx->argv[2], &count) || count < -1)) {
        reply_error(ctx->out, "ERR count should be greater than or equal to -1");
        return;
    }
    char buf[24];
    snprintf(buf, sizeof(buf), "%lld", count);
    slowlog_fanout(ctx, "get", buf, slowlog_get_merge);
}

static void cmd_slowlog_len(struct cmd_ctx *ctx)
{
    slowlog_fanout(ctx, "len", NULL, slowlog_len_merge);
}

static void cmd_slowlog_reset(struct cmd_ctx *ctx)
{
    slowlog_fanout(ctx, "reset", NULL, slowlog_reset_merge);
}

static void cmd_slowlog_help(struct cmd_ctx *ctx)
{
    static const char *const help[] = {
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        NULL,
    };
    reply_help(ctx, help);
}

/* ------------------------------------------------------------------------ */
/* LATENCY                                                                  */

/*
 * LATENCY HISTOGRAM comes from the per-command histograms the aggregator
 * merges (stats.h: the levels and how they relate to Redis's hdr buckets).
 * "calls" is the histogram's count of values, as in Redis; a command split
 * over shards records one value per part.  Redis's latency monitor is off
 * by default (latency-monitor-threshold 0) and percore has none: LATEST,
 * HISTORY, RESET, GRAPH and DOCTOR answer what Redis answers with it off.
 */
static void cmd_latency(struct cmd_ctx *ctx)
{
    container_dispatch(ctx, "latency");
}

static const struct stats_cmd_view *latency_view_of(const struct stats_view *v, const char *name)
{
    for (size_t i = 0; i < v->ncmds; i++)
        if (strcmp(v->cmds[i].name, name) == 0)
            return v->cmds[i].samples ? &v->cmds[i] : NULL;
    return NULL;
}

/* name -> {calls, histogram_usec -> {level label: cumulative count}}, only the levels that grew */
static void latency_reply_cdf(struct reply *out, const struct stats_cmd_view *c)
{
    reply_bulk_cstr(out, c->name);
    reply_map(out, 2);
    reply_bulk_cstr(out, "calls");
    reply_int(out, (long long)c->samples);
    reply_bulk_cstr(out, "histogram_usec");
    long long levels = 0;
    for (unsigned k = 0; k < STATS_CDF_LEVELS; k++)
        levels += c->cdf[k] > (k ? c->cdf[k - 1] : 0);
    reply_map(out, levels);
    for (unsigned k = 0; k < STATS_CDF_LEVELS; k++)
        if (c->cdf[k] > (k ? c->cdf[k - 1] : 0)) {
            reply_int(out, (long long)stats_cdf_label_usec(k));
            reply_int(out, (long long)c->cdf[k]);
        }
}

/* the histograms of cmd and of its subcommands (Redis latencySpecificCommandsFillCDF) */
static long long latency_reply_command(struct reply *out, const struct stats_view *v, const struct command *cmd,
                                       bool send)
{
    long long n = 0;
    const struct subcommand *subs;
    size_t nsubs = command_subcommands_of(cmd->name, &subs);
    for (size_t j = 0; j <= nsubs; j++) { /* the command, then its subcommands */
        const struct stats_cmd_view *c = latency_view_of(v, j ? subs[j - 1].cmd.name : cmd->name);
        if (!c)
            continue;
        n++;
        if (send)
            latency_reply_cdf(out, c);
    }
    return n;
}

/* two passes, as the map's length comes first: count, then send */
static void cmd_latency_histogram(struct cmd_ctx *ctx)
{
    struct stats_view v;
    stats_view_take(&v, NULL, 0);
    for (int send = 0; send < 2; send++) {
        long long found = 0;
        if (ctx->argc == 2) {
            for (size_t i = 0; i < v.ncmds; i++) {
                if (!v.cmds[i].samples)
                    continue;
                found++;
                if (send)
                    latency_reply_cdf(ctx->out, &v.cmds[i]);
            }
        } else {
            for (int i = 2; i < ctx->argc; i++) {
                const struct command *c = command_by_fullname(&ctx->argv[i]);
                if (c) /* an unknown name is skipped, as in Redis */
                    found += latency_reply_command(ctx->out, &v, c, send);
            }
        }
        if (!send)
            reply_map(ctx->out, found);
    }
    stats_view_release(&v);
}

static void cmd_latency_latest(struct cmd_ctx *ctx)
{
    reply_array(ctx->out, 0);
}

static void cmd_latency_history(struct cmd_ctx *ctx)
{
    reply_array(ctx->out, 0);
}

static void cmd_latency_reset(struct cmd_ctx *ctx)
{
    reply_int(ctx->out, 0); /* the events reset: none was recorded */
}

static void cmd_latency_graph(struct cmd_ctx *ctx)
{
    reply_errorf(ctx->out, "ERR No samples available for event '%.*s'", arg_print_len(&ctx->argv[2], SIZE_MAX),
                 ctx->argv[2].ptr);
}

static void cmd_latency_doctor(struct cmd_ctx *ctx)
{
    static const char report[] =
        "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may "
        "use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't "
        "in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n";
    reply_verbatim(ctx->out, report, sizeof report - 1, "txt");
}

static void cmd_latency_help(struct cmd_ctx *ctx)
{
    static const char *const help[] = {
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "GRAPH <event>",
        "    Return an ASCII latency graph for the <event> class.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for the specified "
        "command names.",
        "    If no commands are specified then all histograms are replied.",
        NULL,
    };
    reply_help(ctx, help);
}

/* ------------------------------------------------------------------------ */
/* INFO                                                                     */

enum {
    SEC_SERVER = 1u << 0,
    SEC_CLIENTS = 1u << 1,
    SEC_MEMORY = 1u << 2,
    SEC_PERSISTENCE = 1u << 3,
    SEC_STATS = 1u << 4,
    SEC_REPLICATION = 1u << 5,
    SEC_CPU = 1u << 6,
    SEC_MODULES = 1u << 7,
    SEC_CLUSTER = 1u << 8,
    SEC_KEYSPACE = 1u << 9,
    SEC_SHARDS = 1u << 10,
    SEC_COMMANDSTATS = 1u << 11,
    SEC_ERRORSTATS = 1u << 12,
    SEC_LATENCYSTATS = 1u << 13,
    SEC_ALL = (1u << 14) - 1,
    /* as Redis 7.0: the per-command sections only when asked for (or all) */
    SEC_DEFAULT = SEC_ALL & ~(SEC_COMMANDSTATS | SEC_LATENCYSTATS),
};

static const struct {
    const char *name;
    unsigned bit;
} info_section_names[] = {
    {"server", SEC_SERVER},       {"clients", SEC_CLIENTS},   {"memory", SEC_MEMORY},
    {"persistence", SEC_PERSISTENCE}, {"stats", SEC_STATS},   {"replication", SEC_REPLICATION},
    {"cpu", SEC_CPU},             {"modules", SEC_MODULES},   {"module_list", SEC_MODULES},
    {"cluster", SEC_CLUSTER},     {"keyspace", SEC_KEYSPACE}, {"shards", SEC_SHARDS},
    {"commandstats", SEC_COMMANDSTATS}, {"errorstats", SEC_ERRORSTATS}, {"latencystats", SEC_LATENCYSTATS},
};

static pthread_once_t ids_once = PTHREAD_ONCE_INIT;
static char run_id[41];

static void random_hex(char *dst, size_t nhex)
{
    unsigned char raw[32];
    size_t nraw = nhex / 2;
    if (getrandom(raw, nraw, 0) != (ssize_t)nraw) {
        /* fall back to a mix of time and pid: unique enough for an id */
        unsigned long long x = (unsigned long long)util_us_time() ^ ((unsigned long long)getpid() << 32);
        for (size_t i = 0; i < nraw; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            raw[i] = (unsigned char)(x >> 56);
        }
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < nraw; i++) {
        dst[2 * i] = hex[raw[i] >> 4];
        dst[2 * i + 1] = hex[raw[i] & 15];
    }
    dst[nhex] = '\0';
}

static void ids_init(void)
{
    random_hex(run_id, 40);
}

/*
 * INFO prints the stats view (stats.h): counters from the aggregator's
 * latest snapshot less the CONFIG RESETSTAT baseline, levels live.  Copied
 * into unsigned long long for the formats.
 */
struct info_totals {
#define TOTAL_FIELD(name, desc) unsigned long long name;
    STATS_COUNTERS(TOTAL_FIELD)
    STATS_GAUGES(TOTAL_FIELD)
#undef TOTAL_FIELD
    unsigned long long db_keys[STATS_MAX_DB];
    unsigned long long db_expires[STATS_MAX_DB];
};

static void info_sum(struct info_totals *t, const struct stats_view *v)
{
#define TOTAL_COPY(name, desc) t->name = v->t.name;
    STATS_COUNTERS(TOTAL_COPY)
    STATS_GAUGES(TOTAL_COPY)
#undef TOTAL_COPY
    for (int db = 0; db < STATS_MAX_DB; db++) {
        t->db_keys[db] = v->t.db_keys[db];
        t->db_expires[db] = v->t.db_expires[db];
    }
}

static void info_server(struct cmd_ctx *ctx, struct reply *t)
{
    const struct config *cfg = ctx->config;
    struct utsname name;
    if (uname(&name) != 0) {
        strcpy(name.sysname, "Linux");
        name.release[0] = name.machine[0] = '\0';
    }
    char exe[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    long long now_us = util_us_time();
    long long uptime = (now_us / 1000 - shard_start_time_ms()) / 1000;
    if (uptime < 0)
        uptime = 0;
    text_printf(t,
                "# Server\r\n"
                "redis_version:" REDIS_COMPAT_VERSION "\r\n"
                "redis_git_sha1:00000000\r\n"
                "redis_git_dirty:0\r\n"
                "redis_build_id:0\r\n"
                "redis_mode:standalone\r\n"
                "os:%s %s %s\r\n"
                "arch_bits:%d\r\n"
                "monotonic_clock:POSIX clock_gettime\r\n"
                "multiplexing_api:epoll\r\n"
                "atomicvar_api:c11-builtin\r\n"
                "gcc_version:%d.%d.%d\r\n"
                "process_id:%ld\r\n"
                "process_supervised:no\r\n",
                name.sysname, name.release, name.machine, (int)sizeof(long) * 8,
#ifdef __GNUC__
                __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__,
#else
                0, 0, 0,
#endif
                (long)getpid());
    text_printf(t,
                "run_id:%s\r\n"
                "tcp_port:%d\r\n"
                "server_time_usec:%lld\r\n"
                "uptime_in_seconds:%lld\r\n"
                "uptime_in_days:%lld\r\n"
                "hz:%d\r\n"
                "configured_hz:%d\r\n"
                "lru_clock:%lld\r\n",
                run_id, cfg->port, now_us, uptime, uptime / 86400, cfg->hz, cfg->hz,
                (now_us / 1000000) & ((1LL << 24) - 1));
    text_printf(t, "executable:%s\r\n", exe);
    text_printf(t, "config_file:%s\r\n", cfg->config_file ? cfg->config_file : "");
    text_printf(t,
                "io_threads_active:0\r\n"
                "percore_version:" PERCORE_VERSION "\r\n"
                "percore_build:%s\r\n"
                "shard_threads:%d\r\n",
                shard_build_name(), shard_count());
}

static void info_clients(struct cmd_ctx *ctx, struct reply *t, const struct info_totals *s)
{
    text_printf(t,
                "# Clients\r\n"
                "connected_clients:%llu\r\n"
                "cluster_connections:0\r\n"
                "maxclients:%d\r\n"
                "client_recent_max_input_buffer:0\r\n"
                "client_recent_max_output_buffer:0\r\n"
                "blocked_clients:%llu\r\n"
                "tracking_clients:%llu\r\n"
                "clients_in_timeout_table:%llu\r\n",
                s->connected_clients, ctx->config->maxclients, s->blocked_clients, s->tracking_clients,
                s->clients_in_timeout_table);
}

static unsigned long long process_rss(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%llu %llu", &size, &resident) != 2)
        resident = 0;
    fclose(f);
    return resident * (unsigned long long)sysconf(_SC_PAGESIZE);
}

static void info_memory(struct cmd_ctx *ctx, struct reply *t, const struct info_totals *s)
{
    char used_h[32], rss_h[32], sys_h[32], max_h[32];
    unsigned long long rss = process_rss();
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    unsigned long long sys = pages > 0 && psize > 0 ? (unsigned long long)pages * (unsigned long long)psize : 0;
    unsigned long long maxmem = ctx->config->maxmemory > 0 ? (unsigned long long)ctx->config->maxmemory : 0;
    bytes_to_human(used_h, sizeof used_h, s->used_memory);
    bytes_to_human(rss_h, sizeof rss_h, rss);
    bytes_to_human(sys_h, sizeof sys_h, sys);
    bytes_to_human(max_h, sizeof max_h, maxmem);
    text_printf(t,
                "# Memory\r\n"
                "used_memory:%llu\r\n"
                "used_memory_human:%s\r\n"
                "used_memory_rss:%llu\r\n"
                "used_memory_rss_human:%s\r\n"
                "total_system_memory:%llu\r\n"
                "total_system_memory_human:%s\r\n"
                "maxmemory:%llu\r\n"
                "maxmemory_human:%s\r\n"
                "maxmemory_policy:%s\r\n"
                "mem_allocator:mimalloc\r\n"
                "lazyfree_pending_objects:0\r\n",
                s->used_memory, used_h, rss, rss_h, sys, sys_h, maxmem, max_h,
                config_maxmemory_policy_name(ctx->config));
}

/* Redis's loading_* lines, with its percentage and ETA arithmetic */
static void info_loading(struct reply *t)
{
    struct load_progress p;
    load_progress(&p);
    double perc = 0;
    long long remaining = 1;
    if (p.total_bytes) {
        perc = (double)p.loaded_bytes / (double)p.total_bytes * 100;
        remaining = p.total_bytes - p.loaded_bytes;
    }
    long long elapsed = util_ms_time() / 1000 - p.start_time;
    long long eta = elapsed == 0 ? 1 : elapsed * remaining / (p.loaded_bytes + 1); /* 1: a fake figure */
    text_printf(t,
                "loading_start_time:%lld\r\n"
                "loading_total_bytes:%lld\r\n"
                "loading_rdb_used_mem:%lld\r\n"
                "loading_loaded_bytes:%lld\r\n"
                "loading_loaded_perc:%.2f\r\n"
                "loading_eta_seconds:%lld\r\n",
                p.start_time, p.total_bytes, p.rdb_used_mem, p.loaded_bytes, perc, eta);
}

static void info_persistence(struct reply *t)
{
    bool loading = load_in_progress();
    struct aof_rewrite_info rw;
    aof_rewrite_info(&rw);
    const struct config *cfg = config_current();
    text_printf(t,
                "# Persistence\r\n"
                "loading:%d\r\n"
                "async_loading:0\r\n"
                "current_cow_peak:0\r\n"
                "current_cow_size:0\r\n"
                "current_cow_size_age:0\r\n"
                "current_fork_perc:0.00\r\n"
                "current_save_keys_processed:0\r\n"
                "current_save_keys_total:0\r\n"
                "rdb_changes_since_last_save:%lld\r\n"
                "rdb_bgsave_in_progress:%d\r\n"
                "rdb_last_save_time:%lld\r\n",
                loading, save_changes_since(), save_in_progress(), save_last_time());
    text_printf(t,
                "rdb_last_bgsave_status:%s\r\n"
                "rdb_last_bgsave_time_sec:%lld\r\n"
                "rdb_current_bgsave_time_sec:%lld\r\n"
                "rdb_saves:%lld\r\n",
                save_last_ok() ? "ok" : "err", save_last_duration(), save_current_duration(), save_count());
    text_printf(t,
                "rdb_last_cow_size:0\r\n"
                "rdb_last_load_keys_expired:%lld\r\n"
                "rdb_last_load_keys_loaded:%lld\r\n"
                "aof_enabled:%d\r\n"
                "aof_rewrite_in_progress:%d\r\n"
                "aof_rewrite_scheduled:%d\r\n"
                "aof_last_rewrite_time_sec:%lld\r\n"
                "aof_current_rewrite_time_sec:%lld\r\n"
                "aof_last_bgrewrite_status:%s\r\n"
                "aof_rewrites:%lld\r\n"
                "aof_rewrites_consecutive_failures:%lld\r\n"
                "aof_last_write_status:%s\r\n"
                "aof_last_cow_size:0\r\n"
                "module_fork_in_progress:0\r\n"
                "module_fork_last_cow_size:0\r\n",
                load_keys_expired(), load_keys_loaded(), cfg->appendonly, rw.in_progress, rw.scheduled, rw.last_seconds,
                rw.current_seconds, rw.last_ok ? "ok" : "err", rw.count, rw.failures,
                aof_info_last_write_ok() ? "ok" : "err");
    if (cfg->appendonly) /* Redis 7.0 adds these with the AOF on */
        text_printf(t,
                    "aof_current_size:%lld\r\n"
                    "aof_base_size:%lld\r\n"
                    "aof_pending_rewrite:%d\r\n"
                    "aof_buffer_length:%lld\r\n"
                    "aof_pending_bio_fsync:0\r\n"
                    "aof_delayed_fsync:0\r\n",
                    aof_info_current_size(), aof_info_base_size(), rw.scheduled, aof_info_buffer_length());
    if (loading)
        info_loading(t);
}

static void info_stats(struct reply *t, const struct info_totals *s, const struct stats_view *v)
{
    struct primary_backlog backlog;
    primary_backlog(&backlog);
    text_printf(t,
                "# Stats\r\n"
                "total_connections_received:%llu\r\n"
                "total_commands_processed:%llu\r\n"
                "instantaneous_ops_per_sec:%lld\r\n"
                "total_net_input_bytes:%llu\r\n"
                "total_net_output_bytes:%llu\r\n"
                "total_net_repl_input_bytes:0\r\n"
                "total_net_repl_output_bytes:0\r\n"
                "instantaneous_input_kbps:%.2f\r\n"
                "instantaneous_output_kbps:%.2f\r\n"
                "instantaneous_input_repl_kbps:0.00\r\n"
                "instantaneous_output_repl_kbps:0.00\r\n"
                "rejected_connections:%llu\r\n"
                "sync_full:%lld\r\n"
                "sync_partial_ok:%lld\r\n"
                "sync_partial_err:%lld\r\n"
                "expired_keys:%llu\r\n",
                s->total_connections_received, s->total_commands_processed, (long long)(v->ops_per_sec + 0.5),
                s->total_net_input_bytes, s->total_net_output_bytes, v->input_kbps, v->output_kbps,
                s->rejected_connections, backlog.sync_full, backlog.sync_partial_ok, backlog.sync_partial_err,
                s->expired_keys);
    text_printf(t,
                "evicted_keys:%llu\r\n"
                "evicted_clients:0\r\n"
                "keyspace_hits:%llu\r\n"
                "keyspace_misses:%llu\r\n"
                "pubsub_channels:%llu\r\n"
                "pubsub_patterns:%llu\r\n"
                "pubsubshard_channels:%llu\r\n"
                "latest_fork_usec:0\r\n"
                "total_forks:0\r\n"
                "migrate_cached_sockets:0\r\n"
                "slave_expires_tracked_keys:0\r\n"
                "tracking_total_keys:%llu\r\n"
                "tracking_total_items:%llu\r\n"
                "tracking_total_prefixes:%llu\r\n"
                "unexpected_error_replies:0\r\n"
                "total_error_replies:%llu\r\n",
                s->evicted_keys, s->keyspace_hits, s->keyspace_misses, s->pubsub_channels, s->pubsub_patterns,
                s->pubsubshard_channels, s->tracking_total_keys,
                s->tracking_total_items, s->tracking_total_prefixes, s->total_error_replies);
}

static void info_replication(struct reply *t)
{
    char buf[16384];
    replica_info(buf, sizeof buf);
    text_printf(t, "%s", buf);
}

static void info_cpu(struct reply *t)
{
    struct rusage self, children;
    memset(&self, 0, sizeof self);
    memset(&children, 0, sizeof children);
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    text_printf(t,
                "# CPU\r\n"
                "used_cpu_sys:%ld.%06ld\r\n"
                "used_cpu_user:%ld.%06ld\r\n"
                "used_cpu_sys_children:%ld.%06ld\r\n"
                "used_cpu_user_children:%ld.%06ld\r\n",
                (long)self.ru_stime.tv_sec, (long)self.ru_stime.tv_usec,
                (long)self.ru_utime.tv_sec, (long)self.ru_utime.tv_usec,
                (long)children.ru_stime.tv_sec, (long)children.ru_stime.tv_usec,
                (long)children.ru_utime.tv_sec, (long)children.ru_utime.tv_usec);
}

static void info_keyspace(struct cmd_ctx *ctx, struct reply *t, const struct info_totals *s)
{
    text_printf(t, "# Keyspace\r\n");
    /* a cluster node (cluster.h) counts its own keys: this shard's store */
    bool node = ctx->conn && cluster_conn_node(ctx->conn) >= 0;
    int dbs = ctx->config->databases < STATS_MAX_DB ? ctx->config->databases : STATS_MAX_DB;
    for (int db = 0; db < dbs; db++) {
        unsigned long long keys = node ? store_size(ctx->store, db) : s->db_keys[db];
        unsigned long long expires = node ? store_expires_size(ctx->store, db) : s->db_expires[db];
        if (keys)
            text_printf(t, "db%d:keys=%llu,expires=%llu,avg_ttl=0\r\n", db, keys, expires);
    }
}

static void info_shards(struct reply *t, const struct stats_view *v)
{
    text_printf(t, "# Shards\r\n");
    for (int i = 0; i < v->nshards; i++) {
        const struct stats_shard_view *sv = &v->shards[i];
        text_printf(t,
                    "shard%d:cpu=%d,node=%d,keys=%llu,used_memory=%llu,commands=%llu,handoff_sent=%llu,"
                    "handoff_received=%llu,inbox_full=%llu,parked=%llu,lock_queued=%llu,poll_hits=%llu\r\n",
                    i, sv->cpu, sv->node, (unsigned long long)sv->keys, (unsigned long long)sv->used_memory,
                    (unsigned long long)sv->commands,
                    (unsigned long long)sv->handoff_batches_sent,
                    (unsigned long long)sv->handoff_batches_received,
                    (unsigned long long)sv->handoff_inbox_full, (unsigned long long)sv->handoff_parked,
                    (unsigned long long)sv->handoff_lock_queued, (unsigned long long)sv->idle_poll_hits);
    }
}

/* Redis 7.0's formats: cmdstat_get:calls=..,usec=..,usec_per_call=..,rejected_calls=..,failed_calls=.. */
static void info_commandstats(struct reply *t, const struct stats_view *v)
{
    text_printf(t, "# Commandstats\r\n");
    for (size_t i = 0; i < v->ncmds; i++) {
        const struct stats_cmd_view *c = &v->cmds[i];
        text_printf(t, "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,failed_calls=%llu\r\n",
                    c->name, (unsigned long long)c->calls, (unsigned long long)c->usec,
                    c->calls ? (double)c->usec / (double)c->calls : 0.0, (unsigned long long)c->rejected,
                    (unsigned long long)c->failed);
    }
}

static void info_errorstats(struct reply *t, const struct stats_view *v)
{
    text_printf(t, "# Errorstats\r\n");
    for (size_t i = 0; i < v->nerrors; i++)
        text_printf(t, "errorstat_%s:count=%llu\r\n", v->errors[i].name, (unsigned long long)v->errors[i].count);
}

/* a percentile's name as Redis writes it: %f with the trailing zeros (and dot) cut */
static void percentile_name(char *buf, size_t size, double p)
{
    int n = snprintf(buf, size, "%f", p);
    while (n > 1 && buf[n - 1] == '0')
        buf[--n] = '\0';
    if (n > 1 && buf[n - 1] == '.')
        buf[--n] = '\0';
}

static void info_latencystats(struct cmd_ctx *ctx, struct reply *t, const struct stats_view *v)
{
    const struct config *cfg = ctx->config;
    int npct = cfg->latency_percentiles_count < STATS_MAX_PERCENTILES ? cfg->latency_percentiles_count
                                                                      : STATS_MAX_PERCENTILES;
    text_printf(t, "# Latencystats\r\n");
    for (size_t i = 0; i < v->ncmds; i++) {
        const struct stats_cmd_view *c = &v->cmds[i];
        if (!c->samples)
            continue;
        text_printf(t, "latency_percentiles_usec_%s:", c->name);
        for (int p = 0; p < npct; p++) {
            char name[64];
            percentile_name(name, sizeof name, cfg->latency_percentiles[p]);
            text_printf(t, "%sp%s=%.3f", p ? "," : "", name, c->pct_usec[p]);
        }
        text_printf(t, "\r\n");
    }
}

static void cmd_info(struct cmd_ctx *ctx)
{
    unsigned sections = 0;
    if (ctx->argc == 1)
        sections = SEC_DEFAULT;
    for (int i = 1; i < ctx->argc; i++) {
        const struct resp_arg *a = &ctx->argv[i];
        if (arg_is(a, "all") || arg_is(a, "everything")) {
            sections |= SEC_ALL;
            continue;
        }
        if (arg_is(a, "default")) {
            sections |= SEC_DEFAULT;
            continue;
        }
        for (size_t j = 0; j < sizeof info_section_names / sizeof info_section_names[0]; j++)
            if (arg_is(a, info_section_names[j].name))
                sections |= info_section_names[j].bit;
    }
    pthread_once(&ids_once, ids_init);
    struct stats_view v;
    stats_view_take(&v, ctx->config->latency_percentiles, ctx->config->latency_percentiles_count);
    struct info_totals s;
    info_sum(&s, &v);
    struct reply t;
    reply_init(&t);
    int done = 0;
#define SECTION(bit, call)              \
    if (sections & (bit)) {            \
        if (done++)                    \
            reply_raw(&t, "\r\n", 2);  \
        call;                          \
    }
    SECTION(SEC_SERVER, info_server(ctx, &t));
    SECTION(SEC_CLIENTS, info_clients(ctx, &t, &s));
    SECTION(SEC_MEMORY, info_memory(ctx, &t, &s));
    SECTION(SEC_PERSISTENCE, info_persistence(&t));
    SECTION(SEC_STATS, info_stats(&t, &s, &v));
    SECTION(SEC_REPLICATION, info_replication(&t));
    SECTION(SEC_CPU, info_cpu(&t));
    SECTION(SEC_MODULES, text_printf(&t, "# Modules\r\n"));
    SECTION(SEC_COMMANDSTATS, info_commandstats(&t, &v));
    SECTION(SEC_ERRORSTATS, info_errorstats(&t, &v));
    SECTION(SEC_LATENCYSTATS, info_latencystats(ctx, &t, &v));
    SECTION(SEC_CLUSTER, text_printf(&t, "# Cluster\r\ncluster_enabled:%d\r\n", ctx->config->cluster_ports));
    SECTION(SEC_KEYSPACE, info_keyspace(ctx, &t, &s));
    SECTION(SEC_SHARDS, info_shards(&t, &v));
#undef SECTION
    stats_view_release(&v);
    reply_verbatim(ctx->out, t.len ? t.buf : "", t.len, "txt");
    reply_deinit(&t);
}

/* ------------------------------------------------------------------------ */
/* CLUSTER (its subcommands are in cluster.c)                               */

static void cmd_cluster(struct cmd_ctx *ctx)
{
    container_dispatch(ctx, "cluster");
}

static void cmd_cluster_help(struct cmd_ctx *ctx)
{
    static const char *const help[] = { /* Redis 7.0's lines for the subcommands percore has */
        "COUNTKEYSINSLOT <slot>",
        "    Return the number of keys in <slot>.",
        "GETKEYSINSLOT <slot> <count>",
        "    Return key names stored by current node in a slot.",
        "INFO",
        "    Return information about the cluster.",
        "KEYSLOT <key>",
        "    Return the hash slot for <key>.",
        "MYID",
        "    Return the node id.",
        "NODES",
        "    Return cluster configuration seen by node. Output format:",
        "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
        "SLOTS",
        "    Return information about slots range mappings. Each range is made of:",
        "    start, end, master and replicas IP addresses, ports and ids",
        "SHARDS",
        "    Return information about slot range mappings and the nodes associated with them.",
        NULL,
    };
    if (cluster_enabled_or_reply(ctx))
        reply_help(ctx, help);
}

/* the PUBSUB container (its subcommands are in pubsub.c) */
static void cmd_pubsub(struct cmd_ctx *ctx)
{
    container_dispatch(ctx, "pubsub");
}

static void cmd_pubsub_help(struct cmd_ctx *ctx)
{
    static const char *const help[] = { /* Redis 7.0's lines for the subcommands percore has */
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
        NULL,
    };
    reply_help(ctx, help);
}

/* ------------------------------------------------------------------------ */
/* TIME LASTSAVE SHUTDOWN WAIT                                              */

/* ROLE: a master (with no replica), or a replica and its link (replica.h) */
static void cmd_role(struct cmd_ctx *ctx)
{
    replica_role_reply(ctx->out);
}

static void cmd_time(struct cmd_ctx *ctx)
{
    long long us = util_us_time();
    reply_array(ctx->out, 2);
    reply_bulk_ll(ctx->out, us / 1000000);
    reply_bulk_ll(ctx->out, us % 1000000);
}

static void cmd_lastsave(struct cmd_ctx *ctx)
{
    reply_int(ctx->out, save_last_time());
}

/* SAVE, BGSAVE [SCHEDULE]: a part on every shard, each under its keyspace's lock (save.h) */
static void cmd_save(struct cmd_ctx *ctx)
{
    save_part(ctx, true, false);
}

static void cmd_bgsave(struct cmd_ctx *ctx)
{
    if (ctx->argc > 2 || (ctx->argc == 2 && !arg_is(&ctx->argv[1], "schedule"))) {
        reply_syntax_error(ctx->out);
        return;
    }
    /* as Redis 7.0's bgsaveCommand: inside EXEC it is scheduled (the shard 0 timer starts it); SCHEDULE
     * schedules it while an AOF rewrite runs */
    if (ctx->conn && conn_in_exec(ctx->conn)) {
        if (save_in_progress()) {
            reply_error(ctx->out, "ERR Background save already in progress");
        } else {
            save_schedule();
            reply_simple(ctx->out, "Background saving scheduled");
        }
        return;
    }
    save_part(ctx, false, ctx->argc == 2);
}

/* BGREWRITEAOF: a part on every shard, as BGSAVE's (save.h, aof.h) */
static void cmd_bgrewriteaof(struct cmd_ctx *ctx)
{
    if (ctx->conn && conn_in_exec(ctx->conn)) { /* Redis's bgrewriteaofCommand in EXEC: scheduled */
        if (aof_rewrite_in_progress()) {
            reply_error(ctx->out, "ERR Background append only file rewriting already in progress");
        } else {
            aof_rewrite_schedule();
            reply_simple(ctx->out, "Background append only file rewriting scheduled");
        }
        return;
    }
    save_rewrite_part(ctx);
}

static void cmd_shutdown(struct cmd_ctx *ctx)
{
    bool nosave = false, save = false, now = false, force = false, abort_it = false;
    for (int i = 1; i < ctx->argc; i++) {
        const struct resp_arg *a = &ctx->argv[i];
        if (arg_is(a, "nosave"))
            nosave = true;
        else if (arg_is(a, "save"))
            save = true;
        else if (arg_is(a, "now"))
            now = true;
        else if (arg_is(a, "force"))
            force = true;
        else if (arg_is(a, "abort"))
            abort_it = true;
        else {
            reply_syntax_error(ctx->out);
            return;
        }
    }
    if ((abort_it && (nosave || save || now || force)) || (nosave && save)) {
        reply_syntax_error(ctx->out);
        return;
    }
    if (abort_it) {
        reply_error(ctx->out, "ERR No shutdown in progress.");
        return;
    }
    if (!nosave && atomic_load(&script_busy_shards)) { /* Redis: a busy script allows SHUTDOWN NOSAVE only */
        reply_error(ctx->out, script_busy_error(-1));
        return;
    }
    /* like Redis, no reply on success: the connection closes as the server stops; with a final save
     * (save points set and not NOSAVE, or SAVE) its reply waits: -ERR if that save fails without FORCE */
    int flags = (nosave ? SHARD_SHUTDOWN_NOSAVE : 0) | (save ? SHARD_SHUTDOWN_SAVE : 0) |
                (force ? SHARD_SHUTDOWN_FORCE : 0);
    bool saves = save || (!nosave && ctx->config->save_points_count > 0);
    if (ctx->conn && saves)
        save_shutdown_wait(ctx->conn);
    else if (ctx->conn)
        conn_close_after_reply(ctx->conn);
    shard_request_shutdown(flags);
}

/* ------------------------------------------------------------------------ */
/* tables                                                                   */

#define SUB(parent_, sub_, proc_, arity_, flags_, cats_) \
    COMMAND_SUB(parent_, sub_, proc_, arity_, flags_, 0, 0, 0, ROUTE_HOME, cats_)

#define LS (CMD_LOADING | CMD_STALE)
#define NLS (CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
#define ANLS (CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)

const struct subcommand server_subcommands[] = {
    SUB("command", "count", cmd_command_count, 2, LS, "@slow @connection"),
    SUB("command", "list", cmd_command_list, -2, LS, "@slow @connection"),
    SUB("command", "getkeys", cmd_command_getkeys, -4, LS, "@slow @connection"),
    SUB("command", "docs", cmd_command_docs, -2, LS, "@slow @connection"),
    SUB("command", "info", cmd_command_info, -2, LS, "@slow @connection"),
    SUB("command", "help", cmd_command_help, 2, LS, "@slow @connection"),

    SUB("config", "rewrite", cmd_config_rewrite, 2, ANLS, "@admin @slow @dangerous"),
    SUB("config", "resetstat", cmd_config_resetstat, 2, ANLS, "@admin @slow @dangerous"),
    SUB("config", "help", cmd_config_help, 2, LS, "@slow"),
    SUB("config", "get", cmd_config_get, -3, ANLS, "@admin @slow @dangerous"),
    SUB("config", "set", cmd_config_set, -4, ANLS, "@admin @slow @dangerous"),

    SUB("client", "getredir", tracking_cmd_getredir, 2, NLS | CMD_KEEPS_CACHING, "@slow @connection"),
    SUB("client", "tracking", tracking_cmd_tracking, -3, NLS | CMD_KEEPS_CACHING, "@slow @connection"),
    SUB("client", "caching", tracking_cmd_caching, 3, NLS | CMD_KEEPS_CACHING, "@slow @connection"),
    SUB("client", "trackinginfo", tracking_cmd_trackinginfo, 2, NLS | CMD_KEEPS_CACHING, "@slow @connection"),
    SUB("client", "help", cmd_client_help, 2, LS | CMD_KEEPS_CACHING, "@slow @connection"),
    SUB("client", "getname", cmd_client_getname, 2, NLS | CMD_KEEPS_CACHING, "@slow @connection"),
    SUB("client", "setname", cmd_client_setname, 3, NLS | CMD_KEEPS_CACHING, "@slow @connection"),
    SUB("client", "setinfo", cmd_client_setinfo, 4, NLS | CMD_KEEPS_CACHING, "@slow @connection"),
    SUB("client", "no-evict", cmd_client_no_evict, 3, ANLS | CMD_KEEPS_CACHING, "@admin @slow @dangerous @connection"),
    SUB("client", "id", cmd_client_id, 2, NLS | CMD_KEEPS_CACHING, "@slow @connection"),
    SUB("client", "info", cmd_client_info, 2, NLS | CMD_KEEPS_CACHING, "@slow @connection"),
    SUB("client", "list", cmd_client_list, -2, ANLS | CMD_KEEPS_CACHING, "@admin @slow @dangerous @connection"),
    SUB("client", "kill", cmd_client_kill, -3, ANLS | CMD_KEEPS_CACHING, "@admin @slow @dangerous @connection"),
    SUB("client", "unpause", cmd_client_unpause, 2, ANLS | CMD_KEEPS_CACHING, "@admin @slow @dangerous @connection"),
    SUB("client", "pause", cmd_client_pause, -3, ANLS | CMD_KEEPS_CACHING, "@admin @slow @dangerous @connection"),
    SUB("client", "reply", cmd_client_reply, 3, NLS | CMD_KEEPS_CACHING, "@slow @connection"),
    SUB("client", "unblock", cmd_client_unblock, -3, ANLS | CMD_KEEPS_CACHING, "@admin @slow @dangerous @connection"),

    SUB("slowlog", "get", cmd_slowlog_get, -2, ANLS, "@admin @slow @dangerous"),
    SUB("slowlog", "len", cmd_slowlog_len, 2, ANLS, "@admin @slow @dangerous"),
    SUB("slowlog", "reset", cmd_slowlog_reset, 2, ANLS, "@admin @slow @dangerous"),
    SUB("slowlog", "help", cmd_slowlog_help, 2, LS, "@slow"),

    SUB("latency", "doctor", cmd_latency_doctor, 2, ANLS, "@admin @slow @dangerous"),
    SUB("latency", "graph", cmd_latency_graph, 3, ANLS, "@admin @slow @dangerous"),
    SUB("latency", "help", cmd_latency_help, 2, LS, "@slow"),
    SUB("latency", "histogram", cmd_latency_histogram, -2, ANLS, "@admin @slow @dangerous"),
    SUB("latency", "history", cmd_latency_history, 3, ANLS, "@admin @slow @dangerous"),
    SUB("latency", "latest", cmd_latency_latest, 2, ANLS, "@admin @slow @dangerous"),
    SUB("latency", "reset", cmd_latency_reset, -2, ANLS, "@admin @slow @dangerous"),

    SUB("cluster", "countkeysinslot", cmd_cluster_countkeysinslot, 3, CMD_STALE, "@slow"),
    SUB("cluster", "getkeysinslot", cmd_cluster_getkeysinslot, 4, CMD_STALE, "@slow"),
    SUB("cluster", "help", cmd_cluster_help, 2, LS, "@slow"),
    SUB("cluster", "info", cmd_cluster_info, 2, CMD_STALE, "@slow"),
    SUB("cluster", "keyslot", cmd_cluster_keyslot, 3, CMD_STALE, "@slow"),
    SUB("cluster", "myid", cmd_cluster_myid, 2, CMD_STALE, "@slow"),
    SUB("cluster", "nodes", cmd_cluster_nodes, 2, CMD_STALE, "@slow"),
    SUB("cluster", "shards", cmd_cluster_shards, 2, CMD_STALE, "@slow"),
    SUB("cluster", "slots", cmd_cluster_slots, 2, CMD_STALE, "@slow"),

    SUB("pubsub", "channels", cmd_pubsub_channels, -2, CMD_PUBSUB | LS, "@pubsub @slow"),
    SUB("pubsub", "help", cmd_pubsub_help, 2, LS, "@slow"),
    SUB("pubsub", "numpat", cmd_pubsub_numpat, 2, CMD_PUBSUB | LS, "@pubsub @slow"),
    SUB("pubsub", "numsub", cmd_pubsub_numsub, -2, CMD_PUBSUB | LS, "@pubsub @slow"),
    SUB("pubsub", "shardchannels", cmd_pubsub_shardchannels, -2, CMD_PUBSUB | LS, "@pubsub @slow"),
    SUB("pubsub", "shardnumsub", cmd_pubsub_shardnumsub, -2, CMD_PUBSUB | LS, "@pubsub @slow"),
};

const size_t server_subcommands_count = sizeof server_subcommands / sizeof server_subcommands[0];

/*
 * The arguments Redis 7.0 shows as "(redacted)" (slowlog.h's redactor, for
 * the CMD_REDACTS commands): passwords, where its parser redacts them.
 * authCommand redacts all but with more than two; helloCommand only a valid
 * protocol version's, and only the AUTH options before the first syntax
 * error (it also stops at a failed AUTH or a bad SETNAME, where the later
 * secrets are still redacted here); CONFIG SET requirepass and masterauth.
 */
void server_redactions(const struct command *cmd, int argc, const struct resp_arg *argv, bool *redact)
{
    if (cmd->proc == cmd_auth) {
        for (int j = 1; j < argc && argc <= 3; j++)
            redact[j] = true;
    } else if (cmd->proc == cmd_hello) {
        long long ver;
        if (argc >= 2 && !(util_str_to_ll(argv[1].ptr, argv[1].len, &ver) && ver >= 2 && ver <= 3))
            return;
        for (int j = 2; j < argc; j++) {
            int more = argc - 1 - j;
            if (arg_is(&argv[j], "auth") && more >= 2) {
                redact[j + 1] = redact[j + 2] = true;
                j += 2;
            } else if (arg_is(&argv[j], "setname") && more >= 1) {
                j++;
            } else {
                return;
            }
        }
    } else if (cmd->proc == cmd_config && argc > 3 && arg_is(&argv[1], "set")) {
        for (int j = 2; j + 1 < argc; j += 2)
            if (arg_is(&argv[j], "requirepass") || arg_is(&argv[j], "masterauth"))
                redact[j + 1] = true;
    }
}

#define CMD(name_, proc_, arity_, flags_, cats_) \
    {name_, proc_, arity_, flags_, 0, 0, 0, ROUTE_HOME, cats_}

const struct command command_family_server[] = {
    CMD("ping", cmd_ping, -1, CMD_FAST | CMD_SUBSCRIBER_OK | CMD_DENIED_ON_DISK_ERROR, "@fast @connection"),
    CMD("echo", cmd_echo, 2, LS | CMD_FAST, "@fast @connection"),
    CMD("quit", cmd_quit, -1, NLS | CMD_FAST | CMD_NO_AUTH | CMD_NO_QUEUE | CMD_ENDS_TXN | CMD_SUBSCRIBER_OK |
        CMD_ALLOW_BUSY, "@fast @connection"),
    CMD("select", cmd_select, 2, LS | CMD_FAST | CMD_SELECTS_DB | CMD_NO_CLUSTER, "@fast @connection"),
    /* allow-busy, as Redis's: they change the connection alone */
    CMD("auth", cmd_auth, -2, NLS | CMD_FAST | CMD_NO_AUTH | CMD_REDACTS | CMD_ALLOW_BUSY, "@fast @connection"),
    CMD("hello", cmd_hello, -1, NLS | CMD_FAST | CMD_NO_AUTH | CMD_REDACTS | CMD_ALLOW_BUSY, "@fast @connection"),
    CMD("reset", cmd_reset, 1, NLS | CMD_FAST | CMD_NO_AUTH | CMD_NO_QUEUE | CMD_ENDS_TXN | CMD_SUBSCRIBER_OK |
        CMD_ALLOW_BUSY | CMD_BUSY_WATCHES, "@fast @connection"),
    CMD("client", cmd_client, -2, CMD_KEEPS_CACHING, "@slow"),
    CMD("command", cmd_command, -1, LS, "@slow @connection"),
    CMD("config", cmd_config, -2, CMD_REDACTS, "@slow"),
    CMD("slowlog", cmd_slowlog, -2, 0, "@slow"),
    CMD("latency", cmd_latency, -2, 0, "@slow"),
    CMD("cluster", cmd_cluster, -2, 0, "@slow"),
    CMD("pubsub", cmd_pubsub, -2, 0, "@slow"),
    CMD("info", cmd_info, -1, LS, "@slow @dangerous"),
    CMD("time", cmd_time, 1, LS | CMD_FAST, "@fast"),
    CMD("role", cmd_role, 1, NLS | CMD_FAST, "@admin @fast @dangerous"),
    CMD("lastsave", cmd_lastsave, 1, LS | CMD_FAST, "@admin @fast @dangerous"),
    {"save", cmd_save, 1, CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_MULTI | CMD_LOCKS_ALL | CMD_REPLIES_AFTER_SAVE, 0, 0, 0,
     ROUTE_FANOUT_OK,
     "@admin @slow @dangerous"},
    {"bgsave", cmd_bgsave, -1, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOCKS_ALL | CMD_HOME_IN_EXEC, 0, 0, 0, ROUTE_FANOUT_OK,
     "@admin @slow @dangerous"},
    {"bgrewriteaof", cmd_bgrewriteaof, 1, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOCKS_ALL | CMD_HOME_IN_EXEC, 0, 0, 0,
     ROUTE_FANOUT_OK, "@admin @slow @dangerous"},
    CMD("shutdown", cmd_shutdown, -1, ANLS | CMD_NO_MULTI | CMD_ALLOW_BUSY, "@admin @slow @dangerous"),
    CMD("monitor", cmd_monitor, 1, ANLS, "@admin @slow @dangerous"),
};

const size_t command_family_server_count =
    sizeof command_family_server / sizeof command_family_server[0];
