/*
 * command_meta: Redis 7.0.15's COMMAND INFO / COMMAND DOCS entries, as reply
 * bytes, for the commands percore serves.
 *
 * The table lives in server/cmd/command_meta.c, which
 * server/cmd/gen_command_meta.py generates from a real redis-server, so that
 * COMMAND, COMMAND INFO and COMMAND DOCS (key specs, tips, doc arguments and
 * history, which redis-cli turns into hints) match Redis byte for byte.
 *
 * The bytes are RESP3.  For a RESP2 client write every map header %n as *2n
 * and every set header ~n as *n, leaving all else as is: that gives Redis's
 * RESP2 bytes (the generator checked it for every entry).
 */
#ifndef PERCORE_COMMAND_META_H
#define PERCORE_COMMAND_META_H

#include <stddef.h>

/*
 * The COMMAND INFO entry (one element of the reply's array) of the command or
 * subcommand `name`: lower case, "container|sub" for a subcommand, as
 * struct command's name.  Sets *len and returns static storage; NULL when
 * Redis 7.0.15 has no such command.  Any thread.
 */
const char *command_meta_info(const char *name, size_t *len);

/* the same for the COMMAND DOCS doc (the value of the name->doc map) */
const char *command_meta_docs(const char *name, size_t *len);

#endif
