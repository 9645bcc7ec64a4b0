#!/usr/bin/python3
"""sort_shards.py --candidate SERVER [--threads N] [--redis REDIS] [--seed S] [--ops N]:
SORT's BY and GET patterns against Redis 7.0 where the keys they form may
live on other shards than the sorted key (server/cmd/sort.c, dispatch.c's
pattern gather).  A seeded
workload of lists, sets and sorted sets with weights, names and hashes under
keys with and without the sorted key's {tag}; each SORT is sent to both
servers.  Where every key a pattern forms for the elements is on the sorted
key's shard (always at --threads 1), percore must answer Redis's bytes;
where one is not (or STORE's destination is on another shard, so that
SORT runs on gathered copies of its two keys), it must refuse the option ("ERR BY option of SORT
denied ..." / "ERR GET option ...") and change nothing.  Standard library
and Debian's python3-redis; exit 0 when all agree, 1 otherwise, 77 when
redis-server is missing."""
import argparse
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


def fixed_shard(pat, threads):
    """the shard of every key pat forms when a {tag} closes before its *, else None"""
    prefix = pat[:pat.index("*")]
    o = prefix.find("{")
    if o < 0:
        return None
    e = prefix.find("}", o + 1)
    return shard_of(prefix, threads) if e > o + 1 else None


def runs_inline(k, store, pats, threads):
    """percore's dispatcher: the sorted key, STORE's destination and every forming pattern's fixed shard agree"""
    home = shard_of(k, threads)
    if store and shard_of(store, threads) != home:
        return not any(pattern_key(p, "x") is not None for _, p in pats)
    return all(pattern_key(p, "x") is None or fixed_shard(p, threads) == home for _, p in pats)


def run_one(conn, args, in_exec):
    """the reply, or "error: ..."; in_exec: sent between MULTI and EXEC"""
    try:
        if not in_exec:
            return conn.execute_command(*args)
        p = conn.pipeline(transaction=True)
        p.execute_command(*args)
        return p.execute(raise_on_error=True)[0]
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
            in_exec = rng.randrange(8) == 0
            elems = [e.decode() for e in r.execute_command("SORT", k, "BY", "nosort")] if r.exists(k) else []
            refused = None
            if in_exec and a.threads > 1 and not runs_inline(k, store, pats, a.threads):
                # inside EXEC a SORT whose patterns may name keys of any shard runs on copies of its
                # declared keys only: percore refuses the first option that forms keys, if any is formed
                for opt, pat in pats:
                    if elems and pattern_key(pat, elems[0]) is not None:
                        refused = opt
                        break
            want = run_one(r, args, in_exec)
            before = c.execute_command("DUMP", store) if store else None
            got = run_one(c, args, in_exec)
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
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--candidate", required=True)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--ops", type=int, default=1500)
    a = ap.parse_args()
    if not os.path.exists(a.redis):
        print("SKIP: %s is missing" % a.redis)
        sys.exit(77)
    sys.exit(1 if run(a) else 0)


if __name__ == "__main__":
    main()
