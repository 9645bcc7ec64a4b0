#!/usr/bin/python3
"""aof_streams.py --candidate SERVER [--threads N] [--redis REDIS] [--seed S] [--ops N]:
the stream commands (server/cmd/stream.c) in the append-only file percore
writes.  A seeded workload of XADD (`*`, `ms-*`, explicit IDs, NOMKSTREAM,
MAXLEN and MINID with `=` and `~`, LIMIT), XTRIM, XDEL, XSETID (ENTRIESADDED,
MAXDELETEDID), streams emptied by XDEL, RENAME across shards, EXPIRE, and
BGREWRITEAOF now and then (the base file's XADD/XSETID per stream), with
stream-node-max-entries small so that `~` trims whole nodes; on percore with
appendonly yes and appendfsync always; kill -9; redis-check-aof accepts the
directory, a real redis-server loading it holds every stream percore held
(entries, length, last, first and max deleted IDs, entries added), and so
does percore reloading its own AOF (aof_write.py's checks).  XINFO STREAM's
radix-tree-keys and -nodes are left out: a rewritten AOF drops deleted
entries, and with them where nodes were cut.  Standard library and Debian's
python3-redis; exit 0 when all agree, 77 when redis-server is missing."""
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
import dump_cross  # noqa: E402

NODE_KEYS = (b"radix-tree-keys", b"radix-tree-nodes", "radix-tree-keys", "radix-tree-nodes")


def contents(r, key):
    """dump_cross's contents without where the nodes are cut"""
    t, body = dump_cross.contents(r, key)
    if t == b"stream":
        body = (body[0], body[1], [(k, v) for k, v in body[2] if k not in NODE_KEYS])
    return t, body


def workload(port, seed, n):
    rng = random.Random(seed)
    rs = [redis.Redis(port=port, db=db) for db in range(aof_write.DBS)]
    rs[0].config_set("stream-node-max-entries", 5)
    keys = ["x%d" % i for i in range(20)] + ["{t}%d" % i for i in range(6)]
    for i in range(n):
        r = rs[rng.randrange(aof_write.DBS)]
        k = rng.choice(keys)
        op = rng.randrange(14)
        try:
            if op <= 5:
                trim = []
                if rng.randrange(3) == 0:
                    how = rng.choice(["MAXLEN", "MINID"])
                    trim = [how] + ([rng.choice(["~", "="])] if rng.randrange(2) else [])
                    trim.append(str(rng.randrange(0, 30)) if how == "MAXLEN" else "%d-0" % rng.randrange(i + 1))
                    if "~" in trim and rng.randrange(2):
                        trim += ["LIMIT", str(rng.randrange(0, 20))]
                if rng.randrange(8) == 0:
                    trim = ["NOMKSTREAM"] + trim
                ident = rng.choice(["*", "*", "%d-*" % (i + 1), "%d-%d" % (i + 1, rng.randrange(3))])
                fields = sum([["f%d" % rng.randrange(3), rng.choice(["v", str(i), "-7", "x" * rng.randrange(40)])]
                              for _ in range(rng.randrange(1, 4))], [])
                r.execute_command("XADD", k, *trim, ident, *fields)
            elif op == 6:
                how = rng.choice(["MAXLEN", "MINID"])
                arg = str(rng.randrange(0, 20)) if how == "MAXLEN" else "%d" % rng.randrange(i + 1)
                approx = rng.choice([["~"], ["="], []])
                limit = ["LIMIT", str(rng.randrange(1, 15))] if approx == ["~"] and rng.randrange(2) else []
                r.execute_command("XTRIM", k, how, *approx, arg, *limit)
            elif op <= 8:
                got = r.execute_command("XRANGE", k, "-", "+", "COUNT", 10)
                if got:
                    ids = [e[0] for e in got]
                    r.execute_command("XDEL", k, *rng.sample(ids, rng.randrange(1, len(ids) + 1)))
            elif op == 9:
                last = r.execute_command("XINFO", "STREAM", k)
                last = dict(zip(last[::2], last[1::2]))[b"last-generated-id"].decode()
                ms, seq = map(int, last.split("-"))
                extra = []
                if rng.randrange(2):
                    extra += ["ENTRIESADDED", str(r.xlen(k) + rng.randrange(100))]
                if rng.randrange(2):
                    extra += ["MAXDELETEDID", "%d-%d" % (ms, seq)]
                r.execute_command("XSETID", k, "%d-%d" % (ms + rng.randrange(3), seq + 1), *extra)
            elif op == 10:
                r.rename(k, rng.choice(keys))
            elif op == 11:
                r.expire(k, rng.randrange(100, 1000))
            elif op == 12:
                if rng.randrange(4) == 0:
                    r.delete(k)
            elif rng.randrange(10) == 0:
                rs[0].bgrewriteaof()
        except redis.exceptions.ResponseError:
            pass


def main():
    aof_write.differential_main(workload, "aof_streams", 12, contents)


if __name__ == "__main__":
    main()
