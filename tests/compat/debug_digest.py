#!/usr/bin/python3
"""debug_digest.py: DEBUG against a real redis-server 7.0.

1. refused: with enable-debug-command at its default (no) DEBUG answers
   Redis's error; with `local`, a loopback client may run it.
2. digest: the same seeded workload (every type and encoding, several
   databases, expiries, MULTI/EXEC, keys of every shard, RENAME and COPY
   across shards; nothing random in the servers' replies, so both hold the
   same data) on both servers with enable-debug-command yes: DEBUG DIGEST
   equal after every step of 200 writes, DEBUG DIGEST-VALUE equal for every
   key (and for a missing one), an empty server's digest all zeros; then
   DEBUG ERROR, LOG, SLEEP 0, SET-ACTIVE-EXPIRE, CHANGE-REPL-ID and the
   unknown-subcommand error answer as Redis's.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diff import free_port  # noqa: E402

import redis  # noqa: E402


def start(binary, *extra):
    port = free_port()
    args = [binary, "--port", str(port), "--save", "", "--appendonly", "no"] + list(extra)
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, cwd=tempfile.gettempdir())
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            if redis.Redis(port=port).ping():
                return p, port
        except redis.exceptions.ConnectionError:
            time.sleep(0.05)
    p.kill()
    raise RuntimeError("server did not start: %s" % args)


def answer(r, *cmd):
    try:
        return r.execute_command(*cmd)
    except redis.exceptions.ResponseError as e:
        return "error: %s" % e


def refused(a):
    for extra, want_ok in (((), False), (("--enable-debug-command", "local"), True)):
        servers = [start(a.redis, *extra), start(a.candidate, "--threads", str(a.threads), *extra)]
        try:
            got = [answer(redis.Redis(port=port), "DEBUG", "DIGEST") for _, port in servers]
            if got[0] != got[1]:
                raise AssertionError("DEBUG with %s: redis %r, percore %r" % (extra or "the default", got[0], got[1]))
            if (not str(got[1]).startswith("error")) != want_ok:
                raise AssertionError("DEBUG with %s answered %r" % (extra or "the default", got[1]))
        finally:
            for p, _ in servers:
                p.terminate()
                p.wait()
    print("refused: DEBUG refused by default with Redis's error, allowed to a loopback client with local")


DBS = 3
SCORES = ["1.5", "-0.25", "inf", "-inf", "3", "1e-7", "12345678901234567890", "0.1"]


def workload(port, seed, n):
    """n writes drawn from seed; every command's effect is fixed by its arguments"""
    rng = random.Random(seed)
    rs = [redis.Redis(port=port, db=db) for db in range(DBS)]
    keys = ["k%d" % i for i in range(30)] + ["{t}%d" % i for i in range(6)]
    for i in range(n):
        r = rs[rng.randrange(DBS)]
        k, k2 = rng.choice(keys), rng.choice(keys)
        v = rng.choice(["", "v%d" % i, str(rng.randrange(-1000, 1000)), "x" * rng.randrange(1, 80)])
        op = rng.randrange(20)
        try:
            if op == 0:
                r.set("s" + k, v)
            elif op == 1:
                r.append("s" + k, v)
            elif op == 2:
                r.incrbyfloat("n" + k, rng.choice([1.5, -2, 1e3]))
            elif op == 3:
                r.rpush("l" + k, *[v] * rng.randrange(1, 4))
            elif op == 4:
                r.lpush("l" + k, rng.randrange(100))
            elif op == 5:
                r.ltrim("l" + k, 1, 40)
            elif op == 6:
                r.sadd("t" + k, *[rng.choice([str(rng.randrange(50)), "m%d" % rng.randrange(50)])
                                  for _ in range(rng.randrange(1, 6))])
            elif op == 7:
                r.srem("t" + k, str(rng.randrange(50)))
            elif op == 8:
                r.execute_command("ZADD", "z" + k, rng.choice(SCORES), "m%d" % rng.randrange(200))
            elif op == 9:
                r.zincrby("z" + k, 2.5, "m%d" % rng.randrange(200))
            elif op == 10:
                r.hset("h" + k, "f%d" % rng.randrange(200), v)
            elif op == 11:
                r.hdel("h" + k, "f%d" % rng.randrange(200))
            elif op == 12:
                r.xadd("x" + k, {"f%d" % rng.randrange(3): v}, id="%d-%d" % (i + 1, rng.randrange(3)))
            elif op == 13:
                r.execute_command("XTRIM", "x" + k, "MAXLEN", 20)
            elif op == 14:
                r.expire(rng.choice("slzht") + k, rng.randrange(100, 1000))
            elif op == 15:
                r.persist(rng.choice("slzht") + k)
            elif op == 16:
                r.mset({"s" + k: v, "s" + k2: i})
            elif op == 17:
                r.rename("s" + k, "s" + k2)
            elif op == 18:
                r.execute_command("COPY", "h" + k, "h" + k2, "REPLACE")
            else:
                with r.pipeline(transaction=True) as m:
                    m.delete("l" + k)
                    m.geoadd("g" + k2, (13.36 + i / 1000, 38.11, "p%d" % i))
                    m.execute()
        except redis.exceptions.ResponseError:
            pass  # WRONGTYPE and the like: the same on both


def big_encodings(port):
    """past every listpack, intset and quicklist-node limit"""
    r = redis.Redis(port=port)
    for i in range(300):
        r.xadd("st", {"f%d" % (i % 3): i, "v": "x" * (i % 7)}, id="%d-%d" % (1000 + i // 5, i % 5))
        r.zadd("bigz", {"m%d" % i: i * 1.5 + 0.1})
        r.hset("bigh", "f%d" % i, "v" * (i % 90))
        r.sadd("bigs", "s%d" % i)
        r.rpush("bigl", i * 7)
    r.xdel("st", "1001-1")
    r.sadd("ints", *range(600))
    r.zadd("ints-z", {str(i): -i for i in range(20)})


def digest(a):
    servers = [start(a.redis, "--enable-debug-command", "yes"),
               start(a.candidate, "--threads", str(a.threads), "--enable-debug-command", "yes")]
    try:
        rs = [redis.Redis(port=port) for _, port in servers]
        empty = [r.execute_command("DEBUG", "DIGEST") for r in rs]
        if empty != [b"0" * 40] * 2:
            raise AssertionError("empty digests: %s" % empty)
        for step in range(5):
            for _, port in servers:
                workload(port, a.seed * 100 + step, 200)
            got = [r.execute_command("DEBUG", "DIGEST") for r in rs]
            if got[0] != got[1]:
                raise AssertionError("DEBUG DIGEST after step %d: redis %s, percore %s" % (step, got[0], got[1]))
        for _, port in servers:
            big_encodings(port)
        got = [r.execute_command("DEBUG", "DIGEST") for r in rs]
        if got[0] != got[1]:
            raise AssertionError("DEBUG DIGEST with streams and big encodings: redis %s, percore %s" % tuple(got))
        checked = 0
        for db in range(DBS):
            dr = [redis.Redis(port=port, db=db) for _, port in servers]
            keys = sorted(dr[0].keys("*")) + [b"no-such-key"]
            for i in range(0, len(keys), 7):
                batch = keys[i:i + 7]
                got = [r.execute_command("DEBUG", "DIGEST-VALUE", *batch) for r in dr]
                if got[0] != got[1]:
                    raise AssertionError("DEBUG DIGEST-VALUE %s in db %d: redis %s, percore %s" %
                                         (batch, db, got[0], got[1]))
                checked += len(batch)
        for cmd in (("DEBUG", "ERROR", "boom x"), ("DEBUG", "LOG", "hello"), ("DEBUG", "SLEEP", "0"),
                    ("DEBUG", "SET-ACTIVE-EXPIRE", "0"), ("DEBUG", "SET-ACTIVE-EXPIRE", "1"),
                    ("DEBUG", "CHANGE-REPL-ID"), ("DEBUG", "NOSUCH"), ("DEBUG", "DIGEST", "x"), ("DEBUG",)):
            got = [answer(r, *cmd) for r in rs]
            if got[0] != got[1]:
                raise AssertionError("%s: redis %r, percore %r" % (" ".join(cmd), got[0], got[1]))
    finally:
        for p, _ in servers:
            p.terminate()
            p.wait()
    print("digest: DEBUG DIGEST equal after 5 x 200 random writes and streams, DIGEST-VALUE equal for %d keys"
          % checked)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--candidate", required=True)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seed", type=int, default=3)
    a = ap.parse_args()
    refused(a)
    digest(a)
    print("OK")


if __name__ == "__main__":
    main()
