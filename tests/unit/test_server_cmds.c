/*
 * test_server_cmds: the connection and server commands that need no
 * connection or running shards (PING ECHO WAIT TIME, COMMAND and its
 * subcommands, CONFIG's subcommand errors), called through the command table
 * as the dispatcher would, replies compared with Redis 7.0.15's bytes, and
 * the coverage of the generated COMMAND INFO / DOCS entries (command_meta.h).
 */
#include "percore/admin.h"
#include "percore/command.h"
#include "percore/command_meta.h"
#include "percore/config.h"
#include "percore/reply.h"

#include "check.h"

#include <stdlib.h>
#include <string.h>

static struct reply out;

/* run "a b c" (space separated, no quoting) through the table; returns the reply */
static const char *run(const char *line, int resp)
{
    static char copy[512];
    struct resp_arg argv[32];
    int argc = 0;
    snprintf(copy, sizeof copy, "%s", line);
    for (char *p = strtok(copy, " "); p && argc < 32; p = strtok(NULL, " ")) {
        argv[argc].ptr = p;
        argv[argc].len = strlen(p);
        argc++;
    }
    reply_clear(&out);
    out.resp = resp;
    const struct command *c = command_lookup(argv[0].ptr, argv[0].len);
    if (!c)
        return NULL;
    struct cmd_ctx ctx = {
        .out = &out, .argv = argv, .argc = argc, .config = config_current(),
    };
    c->proc(&ctx);
    reply_raw(&out, "", 1); /* NUL for strstr, not counted below */
    out.len--;
    return out.buf;
}

#define CHECK_REPLY(line, lit)                           \
    do {                                                 \
        run(line, 2);                                    \
        CHECK_MEM(out.buf, out.len, lit);                \
    } while (0)

static void test_connection(void)
{
    CHECK_REPLY("PING", "+PONG\r\n");
    CHECK_REPLY("ping hello", "$5\r\nhello\r\n");
    CHECK_REPLY("PING a b", "-ERR wrong number of arguments for 'ping' command\r\n");
    CHECK_REPLY("ECHO x", "$1\r\nx\r\n");
    CHECK_REPLY("WAIT 0 0", ":0\r\n");
    CHECK_REPLY("WAIT x 0", "-ERR value is not an integer or out of range\r\n");
    CHECK_REPLY("WAIT 0 x", "-ERR timeout is not an integer or out of range\r\n");
    CHECK_REPLY("WAIT 0 -1", "-ERR timeout is negative\r\n");
    run("TIME", 2);
    CHECK(strncmp(out.buf, "*2\r\n$10\r\n", 9) == 0);
    CHECK_EQ_LL(reply_value_len(out.buf, out.len), out.len);
}

static void test_command(void)
{
    char want[32];
    snprintf(want, sizeof want, ":%zu\r\n", command_count());
    run("COMMAND COUNT", 2);
    CHECK(out.len == strlen(want) && memcmp(out.buf, want, out.len) == 0);
    CHECK(command_count() > 10);

    CHECK_REPLY("COMMAND INFO nosuch", "*1\r\n$-1\r\n");
    CHECK_REPLY("COMMAND INFO echo",
                "*1\r\n*10\r\n$4\r\necho\r\n:2\r\n*3\r\n+loading\r\n+stale\r\n+fast\r\n"
                ":0\r\n:0\r\n:0\r\n*2\r\n+@fast\r\n+@connection\r\n*0\r\n*0\r\n*0\r\n");
    run("COMMAND INFO echo", 3);
    CHECK_MEM(out.buf, out.len,
              "*1\r\n*10\r\n$4\r\necho\r\n:2\r\n~3\r\n+loading\r\n+stale\r\n+fast\r\n"
              ":0\r\n:0\r\n:0\r\n~2\r\n+@fast\r\n+@connection\r\n~0\r\n~0\r\n~0\r\n");
    CHECK_REPLY("COMMAND INFO config|set",
                "*1\r\n*10\r\n$10\r\nconfig|set\r\n:-4\r\n*4\r\n+admin\r\n+noscript\r\n"
                "+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n"
                "+@dangerous\r\n*2\r\n$24\r\nrequest_policy:all_nodes\r\n$29\r\n"
                "response_policy:all_succeeded\r\n*0\r\n*0\r\n");
    /* key specs with all their flags (command_meta.c), sets and maps in RESP3 */
    CHECK_REPLY("COMMAND INFO get",
                "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n"
                "*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n"
                "+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n"
                "$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n"
                "$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n"
                "$5\r\nlimit\r\n:0\r\n*0\r\n");
    run("COMMAND INFO get", 3);
    CHECK_MEM(out.buf, out.len,
              "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n"
              "~3\r\n+@read\r\n+@string\r\n+@fast\r\n~0\r\n~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n"
              "+RO\r\n+access\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n"
              "$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n"
              "$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n"
              "$5\r\nlimit\r\n:0\r\n~0\r\n");
    CHECK_REPLY("COMMAND DOCS nosuch", "*0\r\n");
    CHECK_REPLY("COMMAND DOCS echo",
                "*2\r\n$4\r\necho\r\n*10\r\n$7\r\nsummary\r\n$21\r\nEcho the given string\r\n"
                "$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$10\r\nconnection\r\n"
                "$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*1\r\n*4\r\n$4\r\nname\r\n"
                "$7\r\nmessage\r\n$4\r\ntype\r\n$6\r\nstring\r\n");
    run("COMMAND DOCS echo", 3);
    CHECK_MEM(out.buf, out.len,
              "%1\r\n$4\r\necho\r\n%5\r\n$7\r\nsummary\r\n$21\r\nEcho the given string\r\n"
              "$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$10\r\nconnection\r\n"
              "$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*1\r\n%2\r\n$4\r\nname\r\n"
              "$7\r\nmessage\r\n$4\r\ntype\r\n$6\r\nstring\r\n");
    /* CLIENT SETINFO came in Redis 7.2: 7.0.15 answers as for an unknown name */
    CHECK_REPLY("COMMAND INFO client|setinfo", "*1\r\n$-1\r\n");
    CHECK_REPLY("COMMAND DOCS client|setinfo nosuch", "*0\r\n");
    /* the no-argument forms list percore's commands, every one with an entry */
    for (int resp = 2; resp <= 3; resp++) {
        run("COMMAND DOCS", resp);
        CHECK(out.buf[0] == (resp == 3 ? '%' : '*'));
        CHECK_EQ_LL(strtoll(out.buf + 1, NULL, 10), (long long)command_count() * (resp == 3 ? 1 : 2));
        CHECK_EQ_LL(reply_value_len(out.buf, out.len), out.len);
        run("COMMAND", resp);
        CHECK_EQ_LL(strtoll(out.buf + 1, NULL, 10), (long long)command_count());
        CHECK_EQ_LL(reply_value_len(out.buf, out.len), out.len);
        CHECK(strstr(out.buf, "\r\n$-1\r\n") == NULL && strstr(out.buf, "\r\n_\r\n") == NULL);
    }
    /* every name COMMAND LIST gives (subcommands too) has Redis's entries */
    run("COMMAND LIST", 2);
    long long names = strtoll(out.buf + 1, NULL, 10);
    int missing = 0;
    const char *p = strchr(out.buf, '\n') + 1;
    for (long long i = 0; i < names; i++) {
        char name[64];
        size_t len = strtoull(p + 1, NULL, 10), n;
        p = strchr(p, '\n') + 1;
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        p += len + 2;
        if (strcmp(name, "client|setinfo") != 0 &&
            (!command_meta_info(name, &n) || !command_meta_docs(name, &n))) {
            fprintf(stderr, "no command_meta for %s\n", name);
            missing++;
        }
    }
    CHECK(names > (long long)command_count() && p == out.buf + out.len);
    CHECK(missing == 0);
    run("COMMAND LIST", 2);
    CHECK(strstr(out.buf, "$10\r\nconfig|get\r\n") != NULL);
    CHECK_REPLY("COMMAND LIST FILTERBY PATTERN conf*",
                "*6\r\n$6\r\nconfig\r\n$14\r\nconfig|rewrite\r\n$16\r\nconfig|resetstat\r\n"
                "$11\r\nconfig|help\r\n$10\r\nconfig|get\r\n$10\r\nconfig|set\r\n");
    CHECK_REPLY("COMMAND LIST FILTERBY MODULE x", "*0\r\n");
    CHECK_REPLY("COMMAND LIST foo", "-ERR syntax error\r\n");
    CHECK_REPLY("COMMAND GETKEYS ping x", "-ERR The command has no key arguments\r\n");
    CHECK_REPLY("COMMAND GETKEYS nosuch x", "-ERR Invalid command specified\r\n");
    CHECK_REPLY("COMMAND GETKEYS config foo", "-ERR Invalid command specified\r\n");
    CHECK_REPLY("COMMAND GETKEYS get", "-ERR wrong number of arguments for 'command|getkeys' command\r\n");
    CHECK_REPLY("COMMAND COUNT x", "-ERR wrong number of arguments for 'command|count' command\r\n");
    CHECK_REPLY("command foo", "-ERR unknown subcommand 'foo'. Try COMMAND HELP.\r\n");
    run("command help", 2);
    const char *head = "*19\r\n+COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n";
    CHECK(strncmp(out.buf, head, strlen(head)) == 0);
    CHECK_EQ_LL(reply_value_len(out.buf, out.len), out.len);
}

static void test_config_client_errors(void)
{
    CHECK_REPLY("CONFIG GET", "-ERR wrong number of arguments for 'config|get' command\r\n");
    CHECK_REPLY("CONFIG SET a", "-ERR wrong number of arguments for 'config|set' command\r\n");
    CHECK_REPLY("CONFIG SET a b c", "-ERR syntax error\r\n");
    CHECK_REPLY("CONFIG RESETSTAT x", "-ERR wrong number of arguments for 'config|resetstat' command\r\n");
    CHECK_REPLY("CONFIG RESETSTAT", "+OK\r\n");
    CHECK_REPLY("config Foo", "-ERR unknown subcommand 'Foo'. Try CONFIG HELP.\r\n");
    run("config help", 2);
    CHECK(strncmp(out.buf, "*11\r\n+CONFIG <subcommand>", 24) == 0);
    CHECK_REPLY("CLIENT foo", "-ERR unknown subcommand 'foo'. Try CLIENT HELP.\r\n");
    CHECK_REPLY("CLIENT SETNAME", "-ERR wrong number of arguments for 'client|setname' command\r\n");
    CHECK_REPLY("CLIENT ID x", "-ERR wrong number of arguments for 'client|id' command\r\n");
    CHECK_REPLY("CLIENT NO-EVICT x", "-ERR syntax error\r\n");
    CHECK_REPLY("CLIENT GETREDIR", ":-1\r\n");
    CHECK_REPLY("SHUTDOWN foo", "-ERR syntax error\r\n");
    CHECK_REPLY("SHUTDOWN ABORT", "-ERR No shutdown in progress.\r\n");
    CHECK_REPLY("SHUTDOWN SAVE NOSAVE", "-ERR syntax error\r\n");
}

/* the flag the core refuses -LOADING by is Redis's "loading" flag (COMMAND INFO), for every command and
 * subcommand percore has */
static bool meta_has_loading(const char *name)
{
    size_t n;
    const char *info = command_meta_info(name, &n);
    if (!info)
        return false;
    /* *10, $len name, :arity, then the flags set ~k and its k simple strings (a container's entry
     * ends with its subcommands' entries: their flags are not its own) */
    const char *p = info, *end = info + n;
    for (int line = 0; line < 4 && p < end; line++)
        p = memchr(p, '\n', (size_t)(end - p)) + 1;
    long k = strtol(p + 1, NULL, 10);
    for (long i = 0; i < k && p < end; i++) {
        p = memchr(p, '\n', (size_t)(end - p)) + 1;
        if (strncmp(p, "+loading\r\n", 10) == 0)
            return true;
    }
    return false;
}

static void test_loading_flags(void)
{
    for (size_t i = 0; i < command_count(); i++) {
        const struct command *c = command_at(i);
        size_t len;
        if (command_meta_info(c->name, &len)) {
            bool same = ((c->flags & CMD_LOADING) != 0) == meta_has_loading(c->name);
            CHECK(same);
            if (!same)
                fprintf(stderr, "  %s: CMD_LOADING %d, Redis's loading flag %d\n", c->name,
                        (c->flags & CMD_LOADING) != 0, meta_has_loading(c->name));
        }
        const struct subcommand *first;
        size_t subs = command_subcommands_of(c->name, &first);
        for (size_t j = 0; j < subs; j++) {
            const struct command *sc = &first[j].cmd;
            if (!command_meta_info(sc->name, &len))
                continue;
            bool same = ((sc->flags & CMD_LOADING) != 0) == meta_has_loading(sc->name);
            CHECK(same);
            if (!same)
                fprintf(stderr, "  %s: CMD_LOADING %d, Redis's loading flag %d\n", sc->name,
                        (sc->flags & CMD_LOADING) != 0, meta_has_loading(sc->name));
        }
    }
}

int main(void)
{
    char err[256];
    char *args[] = {"test_server_cmds", NULL};
    if (config_setup(1, args, err, sizeof err) != 0) {
        fprintf(stderr, "config_setup: %s\n", err);
        return 1;
    }
    admin_setup();
    reply_init(&out);
    test_connection();
    test_command();
    test_config_client_errors();
    test_loading_flags();
    reply_deinit(&out);
    config_teardown();
    return check_done("test_server_cmds");
}
