/*
 * watch: one shard's table of its keys that clients WATCH, and whether
 * each watch has been touched since (Redis's watched_keys and
 * CLIENT_DIRTY_CAS, kept where the key lives).
 *
 * The client's home shard registers a watch on the key's owner (WATCH),
 * the owner marks it touched whenever a command modifies the key, and
 * EXEC, once it holds the key's lock, asks the owner whether any of its
 * client's watches here was touched -- or whether a key that existed at
 * WATCH has since expired or been evicted (Redis 7.0 aborts EXEC then
 * too).  Watches are dropped by EXEC, DISCARD, UNWATCH and disconnection.
 *
 * With nothing watched, the owner's check after a write is one load.
 * Owned and touched by one shard thread only.
 */
#ifndef PERCORE_WATCH_H
#define PERCORE_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct watches;

struct watches *watch_create(void);
void watch_destroy(struct watches **w);

/* a table starts with its head: what every write's check reads, inline */
struct watches_head {
    size_t keys;              /* keys watched here now (by anyone) */
};
static inline size_t watch_count(const struct watches *w)
{
    return ((const struct watches_head *)(const void *)w)->keys;
}
/* client watches key of db; existed: the key was live then (its expiry or eviction touches it) */
void watch_add(struct watches *w, uint64_t client, int db, const char *key, size_t len, bool existed);
/* the client watches none of these keys any more */
void watch_remove(struct watches *w, uint64_t client, int db, const char *key, size_t len);
/* key of db was modified: every watch of it is touched */
void watch_touch(struct watches *w, int db, const char *key, size_t len);
/* db was emptied (-1: every db): the watches of keys that exist(arg, db, key) says existed are touched */
typedef bool watch_exists_fn(void *arg, int db, const char *key, size_t len);
void watch_touch_existing(struct watches *w, int db, watch_exists_fn *exists, void *arg);
/* was the client's watch of key touched, or did the key exist at WATCH and is gone now (expired, evicted)? */
bool watch_touched(struct watches *w, uint64_t client, int db, const char *key, size_t len, bool exists_now);

#endif
