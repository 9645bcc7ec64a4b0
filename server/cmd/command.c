/*
 * command: joins the families' tables into one case-insensitive lookup.
 *
 * Each layer registers its families at setup (command_setup() the data-type
 * families of this folder, admin_setup() the admin layer's), and its
 * containers' subcommands (OBJECT MEMORY XGROUP XINFO here; CONFIG CLIENT
 * ... SCRIPT FUNCTION there) as tables of `container|sub` entries with
 * Redis's arity and flags, so the table names no layer above it.
 * command_register() fills an open-addressed table of pointers keyed by the
 * lower-cased name, with each name's length and its first 8 bytes in one
 * word (most names are shorter): a lookup lower-cases that much of the name
 * into a word, hashes it with the length and compares words, then the bytes
 * past 8 of a longer name, so it costs one short loop, one multiply and one
 * or two compares, with no copy and no allocation.
 * Internal commands (CMD_INTERNAL) are kept apart: clients can never call
 * them by name.  Also the few helpers every family's handlers share.
 */
#include "percore/command.h"

#include "families.h"
#include "percore/config.h"
#include "percore/mem.h"
#include "percore/object.h"
#include "percore/rdb.h"
#include "percore/reply.h"
#include "percore/store.h"
#include "percore/util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMMAND_MAX 512
#define COMMAND_HASH_SIZE 1024 /* power of two, > 2x COMMAND_MAX */
#define COMMAND_NAME_MAX 32

static const struct command *command_list[COMMAND_MAX];
static size_t command_list_len;

struct command_slot {
    const struct command *cmd; /* NULL: empty */
    uint64_t head;             /* command_head of its name */
    size_t len;                /* strlen(cmd->name) */
};
static struct command_slot command_hash[COMMAND_HASH_SIZE];

/* ASCII lower case, as the names are registered */
static inline unsigned char command_lower(unsigned char ch)
{
    return (unsigned)(ch - 'A') < 26u ? (unsigned char)(ch | 0x20) : ch;
}

/* the first 8 bytes of a name, lower-cased, in one word (zero past the end: no name holds a NUL) */
static inline uint64_t command_head(const char *name, size_t len)
{
    uint64_t w = 0;
    for (size_t i = 0; i < len && i < 8; i++)
        w |= (uint64_t)command_lower((unsigned char)name[i]) << (8 * i);
    return w;
}

static inline unsigned command_hash_name(uint64_t head, size_t len)
{
    return (unsigned)(((head ^ len) * 0x9E3779B97F4A7C15ull) >> 54) & (COMMAND_HASH_SIZE - 1);
}

static const struct command *command_steps[CMD_S_COUNT];
#define SUBCOMMAND_TABLES 8

/* the registered subcommand tables (each container's subcommands in one of them) */
static struct {
    const struct subcommand *table; /* a family's or the admin layer's, each container's contiguous */
    size_t len;                     /* its entries */
} subcommand_tables[SUBCOMMAND_TABLES];
static size_t subcommand_tables_len; /* tables registered */

void command_register(const struct command *family, size_t n)
{
    for (size_t i = 0; i < n && command_list_len < COMMAND_MAX; i++) {
        const struct command *c = &family[i];
        if (c->flags & CMD_INTERNAL)
            continue;
        command_list[command_list_len++] = c;
        size_t len = strlen(c->name);
        uint64_t head = command_head(c->name, len);
        unsigned h = command_hash_name(head, len);
        while (command_hash[h].cmd)
            h = (h + 1) & (COMMAND_HASH_SIZE - 1);
        command_hash[h] = (struct command_slot){c, head, len};
    }
}

void command_setup(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    command_register(command_family_string, command_family_string_count);
    command_register(command_family_keys, command_family_keys_count);
    command_register(command_family_list, command_family_list_count);
    command_register(command_family_set, command_family_set_count);
    command_register(command_family_zset, command_family_zset_count);
    command_register(command_family_hash, command_family_hash_count);
    command_register(command_family_bitops, command_family_bitops_count);
    command_register(command_family_hyperloglog, command_family_hyperloglog_count);
    command_register(command_family_stream, command_family_stream_count);
    command_register(command_family_geo, command_family_geo_count);
    command_register(command_family_sort, command_family_sort_count);
    command_register_subcommands(command_subs_keys, command_subs_keys_count);
    command_register_subcommands(command_subs_stream, command_subs_stream_count);
    static const char *const names[CMD_S_COUNT] = {
        [CMD_S_TOUCH] = "touch", [CMD_S_MSET] = "mset", [CMD_S_LPOP] = "lpop", [CMD_S_RPOP] = "rpop",
        [CMD_S_LPUSH] = "lpush", [CMD_S_RPUSH] = "rpush", [CMD_S_ZADD] = "zadd",
    };
    for (int i = 0; i < CMD_S_COUNT; i++)
        command_steps[i] = command_lookup(names[i], strlen(names[i]));
}

const struct command *command_step(enum command_step_id id)
{
    return command_steps[id];
}

struct resp_arg command_name_arg(const struct command *cmd)
{
    return (struct resp_arg){cmd->name, strlen(cmd->name)};
}

void command_register_subcommands(const struct subcommand *table, size_t n)
{
    if (subcommand_tables_len == SUBCOMMAND_TABLES) {
        fprintf(stderr, "percore: more than %d subcommand tables\n", SUBCOMMAND_TABLES);
        exit(1);
    }
    subcommand_tables[subcommand_tables_len].table = table;
    subcommand_tables[subcommand_tables_len++].len = n;
}

const struct subcommand *command_subcommand_find(const char *parent, const char *sub, size_t len)
{
    for (size_t t = 0; t < subcommand_tables_len; t++)
        for (size_t i = 0; i < subcommand_tables[t].len; i++) {
            const struct subcommand *s = &subcommand_tables[t].table[i];
            if (strcmp(s->parent, parent) == 0 && util_eq_nocase(sub, len, s->sub))
                return s;
        }
    return NULL;
}

size_t command_subcommands_of(const char *parent, const struct subcommand **first)
{
    *first = NULL;
    for (size_t t = 0; t < subcommand_tables_len; t++) {
        size_t n = 0;
        for (size_t i = 0; i < subcommand_tables[t].len; i++)
            if (strcmp(subcommand_tables[t].table[i].parent, parent) == 0) {
                if (!*first)
                    *first = &subcommand_tables[t].table[i];
                n++;
            }
        if (n)
            return n;
    }
    return 0;
}

bool command_subcommand_or_reply(const char *parent, int argc, const struct resp_arg *argv, struct reply *out,
                                 const struct subcommand **found)
{
    const struct subcommand *s = *found = command_subcommand_find(parent, argv[1].ptr, argv[1].len);
    if (!s) {
        cmd_reply_unknown_subcommand(out, argv);
        return false;
    }
    if ((s->cmd.arity > 0 && argc != s->cmd.arity) || argc < -s->cmd.arity) {
        reply_errorf(out, "ERR wrong number of arguments for '%s' command", s->cmd.name);
        return false;
    }
    return true;
}

bool command_subcommand_ok_or_reply(const struct command *cmd, int argc, const struct resp_arg *argv,
                                    struct reply *out)
{
    const struct subcommand *first, *found;
    return argc < 2 || command_subcommands_of(cmd->name, &first) == 0 ||
           command_subcommand_or_reply(cmd->name, argc, argv, out, &found);
}

const struct command *command_resolve_subcommand(const struct command *cmd, int argc, const struct resp_arg *argv)
{
    const struct subcommand *first;
    if (command_subcommands_of(cmd->name, &first) == 0)
        return cmd;
    const struct subcommand *s = argc >= 2 ? command_subcommand_find(cmd->name, argv[1].ptr, argv[1].len) : NULL;
    if (!s || (s->cmd.arity > 0 && argc != s->cmd.arity) || argc < -s->cmd.arity)
        return NULL;
    return &s->cmd;
}

const struct command *command_lookup(const char *name, size_t len)
{
    if (len == 0 || len > COMMAND_NAME_MAX)
        return NULL;
    uint64_t head = command_head(name, len);
    for (unsigned h = command_hash_name(head, len); command_hash[h].cmd; h = (h + 1) & (COMMAND_HASH_SIZE - 1)) {
        if (command_hash[h].head != head || command_hash[h].len != len)
            continue;
        const char *n = command_hash[h].cmd->name;
        size_t i = 8;
        while (i < len && command_lower((unsigned char)name[i]) == (unsigned char)n[i])
            i++;
        if (i >= len)
            return command_hash[h].cmd;
    }
    return NULL;
}

size_t command_count(void)
{
    return command_list_len;
}

const struct command *command_at(size_t i)
{
    return i < command_list_len ? command_list[i] : NULL;
}

static struct object *lookup_read(struct cmd_ctx *ctx, const struct resp_arg *key, bool touch)
{
    struct object *o = touch ? store_lookup(ctx->store, ctx->db, key->ptr, key->len, ctx->now)
                             : store_peek(ctx->store, ctx->db, key->ptr, key->len, ctx->now, NULL);
    if (ctx->stats) {
        if (o)
            ctx->stats->keyspace_hits++;
        else
            ctx->stats->keyspace_misses++;
    }
    return o;
}

struct object *cmd_lookup_read(struct cmd_ctx *ctx, const struct resp_arg *key)
{
    return lookup_read(ctx, key, true);
}

const struct object *cmd_lookup_read_notouch(struct cmd_ctx *ctx, const struct resp_arg *key)
{
    return lookup_read(ctx, key, false);
}

void cmd_reply_unknown_subcommand(struct reply *out, const struct resp_arg *argv)
{
    char upper[64];
    size_t n = strnlen(argv[0].ptr, argv[0].len < sizeof upper - 1 ? argv[0].len : sizeof upper - 1);
    for (size_t i = 0; i < n; i++)
        upper[i] = (char)toupper((unsigned char)argv[0].ptr[i]);
    upper[n] = '\0';
    size_t sn = strnlen(argv[1].ptr, argv[1].len < 128 ? argv[1].len : 128); /* Redis's %.128s */
    reply_errorf(out, "ERR unknown subcommand '%.*s'. Try %s HELP.", (int)sn, argv[1].ptr, upper);
}

struct object *cmd_lookup_write(struct cmd_ctx *ctx, const struct resp_arg *key)
{
    return store_lookup(ctx->store, ctx->db, key->ptr, key->len, ctx->now);
}

struct object *cmd_lookup_typed(struct cmd_ctx *ctx, const struct resp_arg *key, int type, bool write,
                                bool *wrongtype)
{
    struct object *o = write ? cmd_lookup_write(ctx, key) : cmd_lookup_read(ctx, key);
    *wrongtype = o != NULL && (int)object_type(o) != type;
    if (*wrongtype) {
        reply_wrongtype(ctx->out);
        return NULL;
    }
    return o;
}

bool cmd_arg_is(const struct resp_arg *a, const char *name)
{
    return util_eq_nocase(a->ptr, strnlen(a->ptr, a->len), name);
}

bool cmd_get_ll_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, long long *v)
{
    if (!util_str_to_ll(a->ptr, a->len, v)) {
        reply_not_integer(ctx->out);
        return false;
    }
    return true;
}

bool cmd_get_double_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, double *v, const char *msg)
{
    if (!util_str_to_double(a->ptr, a->len, v)) {
        reply_error(ctx->out, msg ? msg : "ERR value is not a valid float");
        return false;
    }
    return true;
}

bool cmd_get_range_ll_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, long long min,
                               long long max, long long *v, const char *msg)
{
    long long ll;
    if (!util_str_to_ll(a->ptr, a->len, &ll)) {
        if (msg)
            reply_error(ctx->out, msg);
        else
            reply_not_integer(ctx->out);
        return false;
    }
    if (ll < min || ll > max) {
        if (msg)
            reply_error(ctx->out, msg);
        else
            reply_errorf(ctx->out, "ERR value is out of range, value must between %lld and %lld",
                         min, max);
        return false;
    }
    *v = ll;
    return true;
}

bool cmd_get_positive_ll_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, long long *v,
                                  const char *msg)
{
    return cmd_get_range_ll_or_reply(ctx, a, 0, LONG_MAX, v,
                                     msg ? msg : "ERR value is out of range, must be positive");
}

/*
 * Redis 7.0 builds a count-sized reply element by element and stops once the
 * client is flagged CLOSE_ASAP, which happens when its output passes the
 * client-output-buffer-limit hard limit; with no hard limit (the default
 * "normal 0 0 0") it builds all of it, and one SRANDMEMBER key -1000000000000
 * takes the server's memory.  percore stops at the hard limit too, leaving
 * the part built, so that the output limit closes the client as Redis does
 * (and logs why).  Without a hard limit the cap is proto-max-bulk-len (512mb
 * by default): the largest value the server takes from a client in one piece
 * is also the largest reply it builds for one sampling command.  The part
 * built is dropped and the client gets the error Redis gives for a string
 * that would pass the same limit (SETRANGE, APPEND); the connection stays.
 * Replies under the cap are Redis's, byte for byte.
 */
bool cmd_reply_under_cap_or_reply(struct cmd_ctx *ctx, size_t start)
{
    long long hard = ctx->config->obuf[OBUF_NORMAL].hard;
    size_t cap = (size_t)(hard > 0 ? hard : ctx->config->proto_max_bulk_len);
    if (ctx->out->len - start <= cap)
        return true;
    if (hard <= 0) {
        ctx->out->len = start;
        reply_error(ctx->out, "ERR reply exceeds maximum allowed size (proto-max-bulk-len)");
    }
    return false;
}

bool cmd_scan_cursor_parse(const struct resp_arg *a, uint64_t *cursor)
{
    char stackbuf[64];
    char *buf = stackbuf, *eptr;
    size_t n = strnlen(a->ptr, a->len); /* Redis reads the sds as a C string */
    unsigned long long v;
    bool ok;

    if (n >= sizeof(stackbuf))
        buf = mem_alloc(n + 1);
    memcpy(buf, a->ptr, n);
    buf[n] = '\0';
    errno = 0;
    v = strtoull(buf, &eptr, 10);
    ok = !(isspace((unsigned char)buf[0]) || eptr[0] != '\0' || errno == ERANGE);
    if (buf != stackbuf)
        mem_release(buf);
    if (ok)
        *cursor = v;
    return ok;
}

bool cmd_scan_cursor_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a, uint64_t *cursor)
{
    if (!cmd_scan_cursor_parse(a, cursor)) {
        reply_error(ctx->out, "ERR invalid cursor");
        return false;
    }
    return true;
}

bool cmd_scan_options_or_reply(struct cmd_ctx *ctx, int first, bool allow_type,
                               struct scan_options *o)
{
    memset(o, 0, sizeof(*o));
    o->count = 10;
    for (int i = first; i < ctx->argc;) {
        int left = ctx->argc - i;
        const struct resp_arg *opt = &ctx->argv[i];
        const struct resp_arg *val = &ctx->argv[i + 1];
        if (cmd_arg_is(opt, "count") && left >= 2) {
            if (!cmd_get_ll_or_reply(ctx, val, &o->count))
                return false;
            if (o->count < 1) {
                reply_syntax_error(ctx->out);
                return false;
            }
        } else if (cmd_arg_is(opt, "match") && left >= 2) {
            /* the pattern is a no-op iff == "*" */
            if (val->len == 1 && val->ptr[0] == '*') {
                o->pattern = NULL;
            } else {
                o->pattern = val->ptr;
                o->plen = val->len;
            }
        } else if (allow_type && cmd_arg_is(opt, "type") && left >= 2) {
            o->type = val->ptr;
            o->tlen = strnlen(val->ptr, val->len);
        } else {
            reply_syntax_error(ctx->out);
            return false;
        }
        i += 2;
    }
    return true;
}

bool cmd_scan_match(const struct scan_options *o, const char *p, size_t n)
{
    return o->pattern == NULL || util_glob_match(o->pattern, o->plen, p, n, false);
}

void cmd_scan_reply(struct cmd_ctx *ctx, uint64_t cursor, long long n, const struct reply *items)
{
    char num[24];
    int numlen = snprintf(num, sizeof(num), "%llu", (unsigned long long)cursor);

    reply_array(ctx->out, 2);
    reply_bulk(ctx->out, num, (size_t)numlen);
    reply_array(ctx->out, n);
    if (items && items->len)
        reply_raw(ctx->out, items->buf, items->len);
}

/* the position of the argument after the first `word` from argv[from] on, 0 when there is none */
static int keyword_key(int argc, const struct resp_arg *argv, int from, const char *word)
{
    for (int i = from; i + 1 < argc; i++)
        if (cmd_arg_is(&argv[i], word))
            return i + 1;
    return 0;
}

int command_key_positions(const struct command *cmd, int argc, const struct resp_arg *argv, int *pos)
{
    int n = 0;
    if (cmd->flags & CMD_SORT_STORE_KEY) {
        int store = 0;
        for (int i = 2; i < argc; i++) {
            if (cmd_arg_is(&argv[i], "limit"))
                i += 2;
            else if (cmd_arg_is(&argv[i], "get") || cmd_arg_is(&argv[i], "by"))
                i += 1;
            else if (cmd_arg_is(&argv[i], "store") && i + 1 < argc)
                store = i + 1; /* the last one counts, as SORT's own parsing */
        }
        if (argc > 1)
            pos[n++] = 1;
        if (store)
            pos[n++] = store;
        return n;
    }
    if (cmd->flags & CMD_NUMKEYS) {
        int at = cmd->first_key;
        long long nk;
        if (at >= argc || !util_str_to_ll(argv[at].ptr, argv[at].len, &nk) || nk < 0 || nk > argc - at - 1)
            return -1;
        if (cmd->flags & CMD_NUMKEYS_ZERO_OK) {
            for (long long i = 0; i < nk; i++)
                pos[n++] = at + 1 + (int)i;
            return n;
        }
        if (nk == 0)
            return -1;
        for (int i = 1; i < at && !(cmd->flags & CMD_BLOCKING); i++) /* BLMPOP's timeout is no key */
            pos[n++] = i;
        for (long long i = 0; i < nk; i++)
            pos[n++] = at + 1 + (int)i;
        return n;
    }
    if (cmd->flags & CMD_KEYS_STREAMS) {
        int at = 1;
        while (at < argc && !util_eq_nocase(argv[at].ptr, argv[at].len, "streams"))
            at++;
        int nk = argc - at - 1;
        if (at >= argc || nk == 0 || nk % 2 != 0)
            return -1;
        for (int i = 0; i < nk / 2; i++)
            pos[n++] = at + 1 + i;
        return n;
    }
    if (cmd->flags & CMD_STORE_KEY) {
        /* Redis 7.0's key specs: argv[1], the arguments after the first STORE and the first STOREDIST from
         * the options on (argv[-arity]); and georadiusGetKeys's, the one the command writes: after the last
         * STORE or STOREDIST from argv[5] on */
        int store = keyword_key(argc, argv, -cmd->arity, "store");
        int storedist = keyword_key(argc, argv, -cmd->arity, "storedist");
        int written = 0;
        for (int i = 5; i + 1 < argc; i++)
            if (cmd_arg_is(&argv[i], "store") || cmd_arg_is(&argv[i], "storedist"))
                written = ++i;
        if (argc > 1)
            pos[n++] = 1;
        if (store)
            pos[n++] = store;
        if (storedist)
            pos[n++] = storedist;
        if (written && written != store && written != storedist)
            pos[n++] = written;
        return n;
    }
    if (cmd->first_key <= 0 || cmd->first_key >= argc)
        return 0;
    int last = cmd->last_key < 0 ? argc + cmd->last_key : cmd->last_key;
    if (last >= argc)
        last = argc - 1;
    for (int i = cmd->first_key; i <= last; i += cmd->key_step > 0 ? cmd->key_step : 1)
        pos[n++] = i;
    return n;
}

bool cmd_parse_block_timeout(const struct resp_arg *a, long long *ms, const char **err)
{
    char buf[128];
    long double v;
    char *end = NULL;
    bool ok = a->len > 0 && a->len < sizeof buf && !isspace((unsigned char)a->ptr[0]);
    if (ok) {
        memcpy(buf, a->ptr, a->len);
        buf[a->len] = 0;
        errno = 0;
        v = strtold(buf, &end);
        ok = end == buf + a->len && errno != ERANGE && !isnan(v);
    }
    if (!ok) {
        if (err)
            *err = "ERR timeout is not a float or out of range";
        return false;
    }
    /* seconds to ms, rounded up as Redis 7.0 does: 0.0001 waits 1 ms, -0.0001 forever; what does not
     * fit a long long (inf too) turns negative there */
    v = ceill(v * 1000);
    long long t = v >= -(long double)LLONG_MIN || v < (long double)LLONG_MIN ? LLONG_MIN : (long long)v;
    if (t < 0) {
        if (err)
            *err = "ERR timeout is negative";
        return false;
    }
    if (t > LLONG_MAX - util_ms_time()) {
        if (err)
            *err = "ERR timeout is out of range";
        return false;
    }
    *ms = t;
    return true;
}

bool cmd_block_timeout_or_reply(struct cmd_ctx *ctx, const struct resp_arg *a)
{
    long long ms;
    const char *err;
    if (cmd_parse_block_timeout(a, &ms, &err))
        return true;
    reply_error(ctx->out, err);
    return false;
}

bool command_monitored(const struct command *cmd, int argc, const struct resp_arg *argv)
{
    const struct command *run = command_resolve_subcommand(cmd, argc, argv);
    return !((run ? run : cmd)->flags & CMD_ADMIN);
}

void cmd_effect_record(struct cmd_ctx *ctx, int kind, int type, const char *event, int db, const char *key,
                       size_t len)
{
    struct cmd_effects *fx = ctx->effects;
    if (kind == CMD_EFFECT_MODIFIED)
        fx->changes++;
    if (kind != CMD_EFFECT_EVENT && fx->keys_unwanted)
        return;
    if (fx->n == fx->cap) {
        fx->cap = fx->cap ? fx->cap * 2 : 16;
        fx->v = mem_realloc(fx->v, (size_t)fx->cap * sizeof(*fx->v));
    }
    if (fx->len + len > fx->bytes_cap) {
        fx->bytes_cap = (fx->len + len) * 2 + 64;
        fx->bytes = mem_realloc(fx->bytes, fx->bytes_cap);
    }
    struct cmd_effect *e = &fx->v[fx->n++];
    e->kind = (uint8_t)kind;
    e->type = type;
    e->event = event;
    e->db = db;
    e->key_off = (uint32_t)fx->len;
    e->key_len = (uint32_t)len;
    memcpy(fx->bytes + fx->len, key, len);
    fx->len += len;
}

/* Redis addReplyHelp: header with argv[0] upper-cased, the lines, the HELP footer */
void cmd_reply_help(struct cmd_ctx *ctx, const char *const *help)
{
    const struct resp_arg *name = &ctx->argv[0];
    char upper[64];
    const char *nul = memchr(name->ptr, 0, name->len);
    size_t n = nul ? (size_t)(nul - name->ptr) : name->len, lines = 0;

    if (n >= sizeof(upper))
        n = sizeof(upper) - 1;
    for (size_t i = 0; i < n; i++)
        upper[i] = (char)toupper((unsigned char)name->ptr[i]);
    upper[n] = '\0';
    while (help[lines])
        lines++;
    reply_array(ctx->out, (long long)lines + 3);
    {
        char head[160];
        snprintf(head, sizeof(head), "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                 upper);
        reply_simple(ctx->out, head);
    }
    for (size_t i = 0; i < lines; i++)
        reply_simple(ctx->out, help[i]);
    reply_simple(ctx->out, "HELP");
    reply_simple(ctx->out, "    Prints this help.");
}

void cmd_propagate(struct cmd_ctx *ctx, int argc, const struct resp_arg *argv)
{
    struct cmd_effects *fx = ctx->effects;
    if (!fx || !fx->propagating)
        return;
    reply_array(&fx->prop, argc);
    for (int i = 0; i < argc; i++)
        reply_bulk(&fx->prop, argv[i].ptr, argv[i].len);
    fx->prop_n++;
}

void cmd_propagate_restore(struct cmd_ctx *ctx, const struct resp_arg *key, const struct object *o, long long expire)
{
    if (!o)
        return;
    const struct config *c = ctx->config;
    struct rdb_save_opts opts = {c ? c->rdbcompression : true, c ? c->list_max_listpack_size : -2,
                                 c ? c->list_compress_depth : 0, false};
    struct rdb_buf b = {0};
    rdb_dump_payload(&b, o, &opts);
    char ttl[24];
    struct resp_arg a[6] = {{"RESTORE", 7}, *key, {ttl, (size_t)snprintf(ttl, sizeof ttl, "%lld", expire < 0 ? 0 : expire)},
                            {b.p, b.len}, {"REPLACE", 7}, {"ABSTTL", 6}};
    cmd_propagate(ctx, 6, a);
    rdb_buf_release(&b);
}

void cmd_propagate_key(struct cmd_ctx *ctx, const char *name, const struct resp_arg *key, const long long *ms)
{
    char num[24];
    struct resp_arg a[3] = {{name, strlen(name)}, *key, {num, 0}};
    if (ms)
        a[2].len = (size_t)snprintf(num, sizeof num, "%lld", *ms);
    cmd_propagate(ctx, ms ? 3 : 2, a);
}

void cmd_block_or_nil(struct cmd_ctx *ctx, bool bulk)
{
    if (ctx->may_block)
        ctx->blocked = true;
    else if (bulk)
        reply_null(ctx->out);
    else
        reply_null_array(ctx->out);
}
