/*
 * keylock: one shard's table of keys locked by multi-shard transactions.
 *
 * A command whose keys live on several shards runs as a transaction
 * (dispatch.c): it first locks its keys on every shard involved, in
 * ascending shard order, then runs, then unlocks.  Here a shard records
 * which transaction holds which of its keys.  Locking is all-or-nothing per
 * shard: keylock_try takes every key given or none, so a transaction never
 * holds part of a shard while waiting on it, and waits only for shards
 * above those it holds -- no cycle, no deadlock.
 *
 * Any other command that names a locked key waits until the key is free
 * (keylock_holds_other); with no lock held that check is one load.
 *
 * A keyspace-wide write across shards (FLUSHALL, FLUSHDB, SWAPDB) locks
 * every key of a shard at once (n = KEYLOCK_ALL): granted once no other
 * transaction holds a key there, and while held every key counts as held.
 *
 * Owned and touched by one shard thread only.
 */
#ifndef PERCORE_KEYLOCK_H
#define PERCORE_KEYLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct keylocks;

/* n for every key of every database of the shard */
#define KEYLOCK_ALL (-1)

/* a key to lock: its bytes (not copied unless the request queues) */
struct keylock_key {
    const char *ptr;
    size_t len;
};

struct keylocks *keylock_create(void);
void keylock_destroy(struct keylocks **kl);

/* a table starts with its head: what every command's check reads, inline */
struct keylocks_head {
    size_t held;              /* keys locked now */
};
/* keys locked now (one load: every command asks) */
static inline size_t keylock_count(const struct keylocks *kl)
{
    return ((const struct keylocks_head *)(const void *)kl)->held;
}
/* bumped by every unlock and every queued request: the shard looks again when it moves */
uint64_t keylock_generation(const struct keylocks *kl);

/* lock keys[0..n) of db for txid, all or none; a key txid already holds counts as taken.  Fails
 * while older requests are queued or new ones are held (keylock_hold_new): queue it then */
bool keylock_try(struct keylocks *kl, uint64_t txid, int db, int n, const struct keylock_key *keys);
/* commands wait on this shard for locked keys: while held, new requests queue, so they go first */
void keylock_hold_new(struct keylocks *kl, bool hold);
/* release the keys txid holds among keys[0..n) of db, and drop a request of txid still queued */
void keylock_release(struct keylocks *kl, uint64_t txid, int db, int n, const struct keylock_key *keys);
/*
 * Keys another transaction holds: queue the request instead (FIFO); it is
 * granted by keylock_grant_waiting once its keys are free.  home: the shard
 * to tell (handed back to the grant callback).
 */
void keylock_enqueue(struct keylocks *kl, uint64_t txid, int home, int db, int n, const struct keylock_key *keys);
/* queued requests waiting */
size_t keylock_waiting(const struct keylocks *kl);
/* lock queued requests in order while the oldest one's keys are free, calling granted(arg, txid, home) for each */
typedef void keylock_granted_fn(void *arg, uint64_t txid, int home);
void keylock_grant_waiting(struct keylocks *kl, keylock_granted_fn *granted, void *arg);

/* told of every unit txid is granted (granted) and of every release call for it, whether it held
 * keys there or not (the AOF's transaction markers, aof.h) */
typedef void keylock_event_fn(void *arg, uint64_t txid, bool granted);
void keylock_set_listener(struct keylocks *kl, keylock_event_fn *fn, void *arg);
/* is key of db held by a transaction other than txid (0: none)? */
bool keylock_holds_other(struct keylocks *kl, uint64_t txid, int db, const char *key, size_t len);

#endif
