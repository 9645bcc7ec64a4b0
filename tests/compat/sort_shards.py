#!/usr/bin/python3
"""sort_shards.py --candidate SERVER [--threads N] [--redis REDIS] [--seed S] [--ops N]:
SORT's BY and GET patterns against Redis 7.0 where the keys they form may
live on other shards than the sorted key (server/cmd/sort.c, dispatch.c's
pattern gather).  A seeded workload of lists, sets and sorted sets with
weights, names and hashes under keys with and without the sorted key's
{tag}; each SORT (with LIMIT, GET, STORE into keys of any shard) is sent to
both servers, as a command, between MULTI and EXEC, or from a script.
Where every key a pattern forms is on the sorted key's shard (always at
--threads 1) percore runs it inline, and where one is not it runs it with
every shard's keyspace locked on copies of every key it reads: either way,
and in EXEC, it must answer Redis's reply.  A script reads its shard's keys
only: where a formed key is on another shard, percore must refuse the
option ("ERR BY option of SORT denied ..." / "ERR GET option ...") and
change nothing (not in the global-lock build, whose one store holds every
key).  Standard library and Debian's python3-redis; exit 0 when all agree,
1 otherwise, 77 when redis-server is missing."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import redis  # noqa: E402
except ImportError:
    print("SKIP: python3-redis is not installed")
    sys.exit(77)
from diff import Server  # noqa: E402
import aof_write  # noqa: E402


def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def shard_of(key, threads):
    """Redis Cluster's slot, honouring {tags}; percore's contiguous slot -> shard table"""
    s = key.find("{")
    if s >= 0:
        e = key.find("}", s + 1)
        if e > s + 1:
            key = key[s + 1:e]
    return (crc16(key.encode()) % 16384) * threads // 16384


def pattern_key(pat, ele):
    """the key a BY/GET pattern forms for an element (None: # or no *)"""
    if pat == "#" or "*" not in pat:
        return None
    star = pat.index("*")
    rest = pat[star + 1:]
    arrow = rest.find("->")
    if arrow >= 0 and arrow + 2 < len(rest):
        rest = rest[:arrow]
    return pat[:star] + ele + rest


def run_one(conn, args, mode):
    """the reply, or "error: ..."; mode: plain, exec (between MULTI and EXEC) or script (EVAL, the
    sorted key and STORE's destination declared)"""
    try:
        if mode == "exec":
            p = conn.pipeline(transaction=True)
            p.execute_command(*args)
            return p.execute(raise_on_error=True)[0]
        if mode == "script":
            keys = [args[1]] + ([args[args.index("STORE") + 1]] if "STORE" in args else [])
            return conn.eval("return redis.call(unpack(ARGV))", len(keys), *keys, *args)
        return conn.execute_command(*args)
    except redis.exceptions.ResponseError as e:
        return "error: %s" % e


def run(a):
    rng = random.Random(a.seed)
    ref = Server(a.redis, name="redis")
    cand = Server(a.candidate, threads=a.threads, name="percore")
    ref.start()
    cand.start()
    failures = 0
    checked = {"same": 0, "refused": 0}
    try:
        r = redis.Redis(port=ref.port)
        c = redis.Redis(port=cand.port)
        # the global-lock build has one store: a script reads every key, as Redis's does
        one_store = c.info("server").get("percore_build") == "global-lock"
        sources = ["{s}src%d" % i for i in range(4)] + ["src%d" % i for i in range(4)]
        prefixes = ["{s}w_", "w_", "wb_", "{s}h_", "h_"]
        elements = ["e%d" % i for i in range(12)]
        for side in (r, c):
            side.flushall()
        for i in range(a.ops):
            op = rng.randrange(6)
            if op <= 1:
                k = rng.choice(sources)
                members = rng.sample(elements, rng.randrange(1, 8))
                kind = rng.randrange(3)
                for side in (r, c):
                    side.delete(k)
                    if kind == 0:
                        side.rpush(k, *members)
                    elif kind == 1:
                        side.sadd(k, *members)
                    else:
                        side.zadd(k, {m: j for j, m in enumerate(members)})
                continue
            if op == 2:
                p = rng.choice(prefixes)
                e = rng.choice(elements)
                v = str(rng.randrange(-1000, 1000))
                for side in (r, c):
                    if "h_" in p:
                        side.hset(p + e, "f", v)
                    else:
                        side.set(p + e, v)
                continue
            k = rng.choice(sources)
            args = ["SORT", k]
            pats = []
            by = rng.choice(["{s}w_*", "w_*", "wb_*", "{s}h_*->f", "h_*->f"])
            args += ["BY", by]
            pats.append(("BY", by))
            for _ in range(rng.randrange(0, 3)):
                g = rng.choice(["#", "{s}w_*", "w_*", "{s}h_*->f", "h_*->f"])
                args += ["GET", g]
                pats.append(("GET", g))
            if rng.randrange(3) == 0:
                args += ["LIMIT", str(rng.randrange(0, 4)), str(rng.randrange(1, 6))]
            store = None
            if rng.randrange(3) == 0:
                store = k.replace("src", "dst")
                args += ["STORE", store]
            mode = rng.choice(["plain"] * 6 + ["exec", "script"])
            elems = [e.decode() for e in r.execute_command("SORT", k, "BY", "nosort")] if r.exists(k) else []
            refused = None
            if mode == "script" and a.threads > 1 and not one_store:
                # a script runs on its declared keys' shard and reads that shard's keys only: percore refuses
                # the first option that forms a key of another shard
                home = shard_of(k, a.threads)
                if store and shard_of(store, a.threads) != home:
                    store = None  # the script declares one key: no STORE elsewhere
                    args = args[:args.index("STORE")]
                for opt, pat in pats:
                    if any(pattern_key(pat, e) is not None and shard_of(pattern_key(pat, e), a.threads) != home
                           for e in elems):
                        refused = opt
                        break
            want = run_one(r, args, mode)
            before = c.execute_command("DUMP", store) if store else None
            got = run_one(c, args, mode)
            if refused:
                ok = isinstance(got, str) and ("%s option of SORT denied" % refused) in got
                if store and c.execute_command("DUMP", store) != before:
                    ok = False
                if ok and store:  # keep the two servers' destinations alike
                    r.delete(store)
                    c.delete(store)
                checked["refused"] += 1
            else:
                ok = want == got
                checked["same"] += 1
            if not ok:
                failures += 1
                if failures <= 10:
                    print("DIFF %r\n  redis:   %r\n  percore: %r (refusal expected: %s)" % (args, want, got, refused))
    finally:
        cand.stop()
        ref.stop()
    print("sort_shards: %d as Redis, %d refused, %d failed (threads %d)"
          % (checked["same"], checked["refused"], failures, a.threads))
    return failures


def main():
    a = aof_write.parse_args(13, 1500, 4)
    sys.exit(1 if run(a) else 0)


if __name__ == "__main__":
    main()
