#!/usr/bin/python3
"""aof_bitops.py --candidate SERVER [--threads N] [--redis REDIS] [--seed S] [--ops N]:
the bitmap commands (server/cmd/bitops.c) in the append-only file percore
writes.  A seeded workload of SETBIT, BITFIELD (SET/INCRBY with every
OVERFLOW, `#` offsets, failed writes), BITOP over keys of several shards and
of one ({tags}), on integer-encoded strings, with expiries, on percore with
appendonly yes and appendfsync always; kill -9; redis-check-aof accepts the
directory, a real redis-server loading it holds every key, value and TTL
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


def workload(port, seed, n):
    rng = random.Random(seed)
    rs = [redis.Redis(port=port, db=db) for db in range(aof_write.DBS)]
    keys = ["b%d" % i for i in range(30)] + ["{t}%d" % i for i in range(10)]
    types = ["u1", "u3", "u8", "i8", "i5", "u16", "i32", "u63", "i64"]
    for i in range(n):
        r = rs[rng.randrange(aof_write.DBS)]
        k = rng.choice(keys)
        op = rng.randrange(10)
        try:
            if op <= 2:
                r.setbit(k, rng.randrange(0, 2000), rng.randrange(2))
            elif op <= 4:
                args = []
                for _ in range(rng.randrange(1, 5)):
                    if rng.randrange(4) == 0:
                        args += ["OVERFLOW", rng.choice(["WRAP", "SAT", "FAIL"])]
                    t = rng.choice(types)
                    off = rng.choice([str(rng.randrange(0, 500)), "#%d" % rng.randrange(0, 20)])
                    sub = rng.choice(["SET", "INCRBY", "GET"])
                    if sub == "GET":
                        args += [sub, t, off]
                    else:
                        args += [sub, t, off, str(rng.choice([1, -1, 100, -100, 2 ** 62, -2 ** 63, 255, 7]))]
                r.execute_command("BITFIELD", k, *args)
            elif op == 5:
                if k.startswith("{t}"):
                    srcs = ["{t}%d" % rng.randrange(10) for _ in range(rng.randrange(1, 4))]
                else:
                    srcs = [rng.choice(keys) for _ in range(rng.randrange(1, 4))]
                bop = rng.choice(["AND", "OR", "XOR", "NOT"])
                r.execute_command("BITOP", bop, k, *(srcs[:1] if bop == "NOT" else srcs))
            elif op == 6:
                r.set(k, rng.choice(["123", "0", "-5", "hello", str(i)]))
            elif op == 7:
                r.expire(k, rng.randrange(100, 1000))
            elif op == 8:
                if rng.randrange(5) == 0:
                    r.delete(k)
            else:
                r.execute_command("BITOP", "AND", k, "nokey%d" % rng.randrange(3), k)  # empty: k deleted
        except redis.exceptions.ResponseError:
            pass


def main():
    aof_write.differential_main(workload, "aof_bitops", 11)


if __name__ == "__main__":
    main()
