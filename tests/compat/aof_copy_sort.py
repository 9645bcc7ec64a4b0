#!/usr/bin/python3
"""aof_copy_sort.py --candidate SERVER [--threads N] [--redis REDIS] [--seed S] [--ops N]:
COPY and SORT ... STORE (server/cmd/keys.c, server/cmd/sort.c) in the
append-only file percore writes.  A seeded workload of COPY between keys of
different shards and of one ({tags}), into other databases (DB), with and
without REPLACE, of every type, with expiries; SORT and SORT_RO, with BY and
GET patterns whose keys are on the sorted key's shard or on any (every
shard's keyspace locked), STORE into keys of any shard and
empty results deleting the destination; LCS reads among them; on percore
with appendonly yes and appendfsync always; kill -9; redis-check-aof accepts
the directory, a real redis-server loading it holds every key, value and TTL
percore held, and so does percore reloading its own AOF (aof_write.py's
checks).  Standard library and Debian's python3-redis; exit 0 when all
agree, 77 when redis-server is missing."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import redis  # noqa: E402
except ImportError:
    print("SKIP: python3-redis is not installed")
    sys.exit(77)
import aof_write  # noqa: E402


def fill(r, rng, k):
    """k made a value of a random type (or deleted)"""
    r.delete(k)
    kind = rng.randrange(6)
    members = [str(rng.choice([rng.randrange(-50, 50), "m%d" % rng.randrange(40)])) for _ in range(rng.randrange(1, 12))]
    if kind == 0:
        r.set(k, rng.choice(["123", "hello", "x" * rng.randrange(0, 80), str(rng.random())]))
    elif kind == 1:
        r.rpush(k, *members)
    elif kind == 2:
        r.sadd(k, *members)
    elif kind == 3:
        r.zadd(k, {m: rng.randrange(-5, 5) for m in members})
    elif kind == 4:
        r.hset(k, mapping={m: str(rng.randrange(100)) for m in members})


def workload(port, seed, n):
    rng = random.Random(seed)
    rs = [redis.Redis(port=port, db=db) for db in range(aof_write.DBS)]
    keys = ["k%d" % i for i in range(30)] + ["{t}%d" % i for i in range(10)]
    for i in range(n):
        db = rng.randrange(aof_write.DBS)
        r = rs[db]
        k = rng.choice(keys)
        op = rng.randrange(12)
        try:
            if op <= 2:
                fill(r, rng, k)
            elif op <= 5:
                args = ["COPY", k, rng.choice(keys)]
                if rng.randrange(3) == 0:
                    args += ["DB", str(rng.randrange(aof_write.DBS))]
                if rng.randrange(2) == 0:
                    args.append("REPLACE")
                r.execute_command(*args)
            elif op <= 7:
                args = ["SORT", k]
                if rng.randrange(2) == 0:  # {t} patterns: the sorted key's shard for {t} keys; the others anywhere
                    args += ["BY", rng.choice(["{t}w*", "{t}h*->f", "w*", "h*->f", "nosort"])]
                elif rng.randrange(3) == 0:
                    args += ["BY", "nosort"]
                if rng.randrange(2) == 0:
                    args.append("ALPHA")
                if rng.randrange(3) == 0:
                    args += ["LIMIT", str(rng.randrange(-1, 5)), str(rng.randrange(-1, 8))]
                if rng.randrange(3) == 0:
                    args += ["GET", rng.choice(["#", "{t}w*", "{t}h*->f", "w*"])]
                if rng.randrange(4):
                    args += ["STORE", rng.choice(keys)]
                if rng.randrange(2):
                    args.append("DESC")
                r.execute_command(*args)
            elif op == 8:
                tag = rng.choice(["{t}", ""])
                r.set("%sw%s" % (tag, rng.randrange(-50, 50)), rng.randrange(1000))
                r.hset("%sh%s" % (tag, rng.randrange(-50, 50)), "f", rng.randrange(1000))
            elif op == 9:
                r.execute_command("PEXPIRE", k, rng.randrange(100000, 1000000))
            elif op == 10:
                r.execute_command("LCS", k, rng.choice(keys), "IDX")
            else:
                r.execute_command("SORT_RO", k, "ALPHA")
        except redis.exceptions.ResponseError:
            pass


def main():
    aof_write.differential_main(workload, "aof_copy_sort", 12)


if __name__ == "__main__":
    main()
