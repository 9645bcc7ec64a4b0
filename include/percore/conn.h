/*
 * conn: one client connection, owned by the shard thread that accepted it.
 *
 * What commands running on the home shard (ROUTE_HOME) may ask of and tell
 * their connection.  Everything here is called only on the owning thread.
 */
#ifndef PERCORE_CONN_H
#define PERCORE_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conn;

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
/* "ip:port" of the peer and of our side */
const char *conn_peer(const struct conn *c);
const char *conn_local(const struct conn *c);
int conn_fd(const struct conn *c);
/* seconds since connect, and since last command */
long long conn_age(const struct conn *c, int64_t now);
long long conn_idle(const struct conn *c, int64_t now);
/* CLIENT INFO / LIST line for this connection (no trailing newline) */
size_t conn_describe(const struct conn *c, int64_t now, char *buf, size_t cap);

#endif
