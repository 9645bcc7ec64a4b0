/*
 * load: the RDB file read at start (dir/dbfilename), its keys handed to
 * the shards that own them.
 */
#ifndef PERCORE_LOAD_H
#define PERCORE_LOAD_H

#include <stdint.h>

struct store;

/* main thread, before the shards start: read the file when it exists, each live key set aside for
 * its owner shard (of `shards`); 0 ok (or no file), -1 the file is not valid (logged: do not start) */
int load_setup(int shards);
/* shard `index`'s thread, on its new store before it serves anyone: put in the keys set aside for it */
void load_into(int index, struct store *s, int64_t now);
/* main thread, after the shards stopped: release what is left (a start that failed) */
void load_teardown(void);

/* INFO rdb_last_load_keys_loaded / _expired: what the start loaded and skipped (any thread, once the
 * shards run) */
long long load_keys_loaded(void);
long long load_keys_expired(void);

#endif
