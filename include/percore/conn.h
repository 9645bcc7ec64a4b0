/*
 * conn: one client connection, owned by the shard thread that accepted it.
 *
 * What commands running on the home shard (ROUTE_HOME) may ask of and tell
 * their connection.  Everything here is called only on the owning thread.
 *
 * Commands that concern every connection (CLIENT LIST / KILL) or every
 * shard's private state (SLOWLOG) fan out: conn_fanout runs an internal
 * command on every shard, and each shard answers for its own connections
 * (conn_list_local, conn_kill_local) or state, never touching another's.
 */
#ifndef PERCORE_CONN_H
#define PERCORE_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conn;
struct config;
struct command;
struct reply;
struct resp_arg;

uint64_t conn_id(const struct conn *c);
int conn_db(const struct conn *c);
void conn_select(struct conn *c, int db);
int conn_resp(const struct conn *c);
void conn_set_resp(struct conn *c, int resp);
/* NULL when no name was set */
const char *conn_name(const struct conn *c);
void conn_set_name(struct conn *c, const char *name, size_t len);
/* CLIENT SETINFO LIB-NAME / LIB-VER */
void conn_set_lib(struct conn *c, bool version, const char *s, size_t len);
bool conn_authenticated(const struct conn *c);
void conn_set_authenticated(struct conn *c, bool ok);
/* reply, then close (QUIT) */
void conn_close_after_reply(struct conn *c);
/* c's command runs as one of the commands EXEC runs (Redis's server.in_exec) */
bool conn_in_exec(const struct conn *c);
/* "ip:port" of the peer and of our side */
const char *conn_peer(const struct conn *c);
const char *conn_local(const struct conn *c);
/* Redis's connIsLocal: the peer is on loopback */
bool conn_is_local(const struct conn *c);
/* Redis's refusal of a CMD_PROTECTED command (DEBUG) to c under cfg's enable-debug-command, NULL: allowed */
const char *conn_protected_refusal(const struct conn *c, const struct config *cfg);
int conn_fd(const struct conn *c);
/* seconds since connect, and since last command */
long long conn_age(const struct conn *c, int64_t now);
long long conn_idle(const struct conn *c, int64_t now);
/* CLIENT INFO / LIST line for this connection (no trailing newline) */
size_t conn_describe(const struct conn *c, int64_t now, char *buf, size_t cap);
/* the command CLIENT LIST shows as cmd= (a container sets its subcommand) */
void conn_set_last_command(struct conn *c, const struct command *cmd);

/*
 * CLIENT REPLY ON|OFF|SKIP, as Redis 7.0: OFF drops the replies of c's
 * commands from this one on, SKIP those of the next command only (not under
 * OFF), ON ends both.  Pushes (pub/sub messages, subscribe confirmations)
 * still go out.  Returns where the running command's own reply goes now:
 * ON's +OK is sent even when OFF or SKIP held this command.
 */
enum conn_reply_mode { CONN_REPLIES_ON, CONN_REPLIES_OFF, CONN_REPLIES_SKIP };
struct reply *conn_set_reply_mode(struct conn *c, enum conn_reply_mode mode);
/*
 * RESET (Redis 7.0's clearClientConnectionState): the MULTI in progress is
 * discarded, every WATCH dropped, every subscription too (unconfirmed), tracking off,
 * database 0, RESP2, authenticated only when no password is set, no name,
 * CLIENT REPLY OFF and a pending SKIP ended.  Returns where +RESET goes.
 */
struct reply *conn_reset(struct conn *c);

/*
 * CLIENT PAUSE / UNPAUSE.  Each shard holds the pause in force for its own
 * connections: none, WRITE (commands that write, PUBLISH, an EXEC that
 * would write wait; the rest run) or ALL (every command waits, errors found
 * before it runs excepted, as Redis 7.0).  A command that waits holds its
 * connection's later input behind it; the pause ends at its end time or at
 * the next CLIENT UNPAUSE, the last pause replacing the one before.
 */
enum { CONN_PAUSE_WRITE = 1, CONN_PAUSE_ALL = 2 };
/* the stamp of a pause or unpause asked on c's shard now: later ones win on every shard */
uint64_t conn_pause_stamp(const struct conn *c);
/* the same, asked on the calling shard thread */
uint64_t conn_pause_stamp_here(void);
/* the calling shard thread's part of a pause (type CONN_PAUSE_*, until end, unix ms) or unpause (type 0):
 * applied unless one with a later stamp was; the waiters resume from the shard's loop */
void conn_pause_local(int type, long long end, uint64_t stamp);

/*
 * Writes the reply of a fan-out from the replies of every shard: parts[i]
 * (lens[i] bytes, one RESP value) is shard i's.  argv is the fanned-out
 * command.  Runs on the home shard.
 */
typedef void conn_merge_fn(struct reply *out, int argc, const struct resp_arg *argv, int nparts,
                           const char *const *parts, const size_t *lens);
/*
 * Run `cmd` (an internal command, never in the public table) with argv on
 * every shard, this one included, and answer merge(...) in the place of the
 * command being handled: a ROUTE_HOME handler calls it and writes no reply
 * itself.  argv is copied.  Home thread only.
 */
void conn_fanout(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv,
                 conn_merge_fn *merge);
/*
 * The same for an internal keyspace-wide command (ROUTE_FANOUT_OK,
 * CMD_LOCKS_ALL): its part runs on every shard under that shard's whole
 * keyspace lock, taken in turn and held until every part ran, so the parts
 * are one cut (as BGSAVE's); the answer is +OK or the first error.
 */
void conn_fanout_locked(struct conn *c, const struct command *cmd, int argc, const struct resp_arg *argv);

/* which of a shard's connections CLIENT LIST / KILL mean (Redis's filters) */
/* Redis's client types (getClientType): a replica's master client, a subscriber, or normal (a monitor too;
 * percore serves no replica yet) */
enum conn_type { CONN_TYPE_ANY = -1, CONN_TYPE_NORMAL, CONN_TYPE_REPLICA, CONN_TYPE_PUBSUB, CONN_TYPE_MASTER };

struct conn_filter {
    uint64_t id;              /* 0: any */
    const char *addr;         /* peer "ip:port", NULL: any */
    size_t addr_len;
    const char *laddr;        /* local "ip:port", NULL: any */
    size_t laddr_len;
    int type;                 /* TYPE: a CONN_TYPE_*, CONN_TYPE_ANY none given */
    uint64_t skip_id;         /* SKIPME yes: the caller's id, else 0 */
    uint64_t caller_id;       /* killing the caller closes it after its reply */
};
/* the calling shard thread's connections matching f, one CLIENT LIST line + "\n" each, into out */
void conn_list_local(const struct conn_filter *f, int64_t now, struct reply *out);
/* CLIENT UNBLOCK: the calling shard thread's connection id, if blocked, is answered its timeout reply
 * (error: UNBLOCKED instead); 1 when it was blocked */
long long conn_unblock_local(uint64_t id, bool error);
/* close the calling shard thread's connections matching f (the caller after its reply); how many */
long long conn_kill_local(const struct conn_filter *f);

#endif
