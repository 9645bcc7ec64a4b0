#!/usr/bin/python3
"""dump_cross.py --candidate SERVER [--threads N] [--redis REDIS] [--fuzz N] [--seed S]:
DUMP and RESTORE between a real redis-server (7.0) and the candidate.

Every kind of value (strings: ints, short, long compressible and not; lists
small and of many nodes; intset, listpack-sized and hashtable sets; listpack
and hashtable hashes; listpack and skiplist sorted sets) is made in Redis,
DUMPed, RESTOREd into the candidate, and read back there: its type, its
contents and its encoding must be Redis's.  Then the reverse: the candidate
DUMPs each, Redis RESTOREs it, and Redis must show the same contents; where
the encoding's layout is deterministic (all but hashtables, whose order is
each process's own, and a list built at its head, which Redis cut into nodes
as its history did where percore cuts as RPUSH would), the two DUMPs must be
the same bytes.

Function libraries too: FUNCTION DUMP in Redis, FUNCTION RESTORE here with
each policy (the same answers), FUNCTION LIST WITHCODE and FCALL after it,
the reverse, the same DUMP bytes for one library, and mutated payloads.

--fuzz N: then N random mutations and truncations of the valid payloads are
RESTOREd into the candidate: each must answer +OK or an error, and the server
must still answer PING and exit cleanly (run it with an ASan build).

Streams (one entry, hundreds over several nodes with fields like the master
entry's and not, integer-looking fields and values, deleted entries, an
emptied stream with its metadata, a trimmed one, large values cut into nodes
by stream-node-max-bytes, consumer groups with PELs and consumers, one
without consumers on an empty stream) go the same ways: contents (XRANGE,
XINFO STREAM FULL but its radix-tree-nodes, a count of the radix tree's own,
so groups, PELs, delivery and seen times) and DUMP bytes equal.

HyperLogLogs (PFADD's strings, sparse and dense, their count cached or not)
go both ways too: the same bytes, counts and DUMP bytes, before and after
one more PFADD, and PFCOUNT/PFMERGE over the restored keys.

Standard library and Debian's python3-redis.  Exit 0 when all agree, 1
otherwise, 77 when redis-server is missing."""
import argparse
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "clients"))
from diff import Server  # noqa: E402
import expect  # noqa: E402
from expect import check, eq  # noqa: E402

import redis  # noqa: E402


def values():
    """(key, [command args that build it], deterministic DUMP bytes)"""
    v = [
        ("s:short", ["SET", "s:short", "hello"], True),
        ("s:int8", ["SET", "s:int8", "-12"], True),
        ("s:int16", ["SET", "s:int16", "12345"], True),
        ("s:int32", ["SET", "s:int32", "-2147483648"], True),
        ("s:int64", ["SET", "s:int64", "9223372036854775807"], True),
        ("s:leadzero", ["SET", "s:leadzero", "0123"], True),
        ("s:float", ["INCRBYFLOAT", "s:float", "1.25"], True),
        ("s:appended", ["APPEND", "s:appended", "123456789012345"], True),
        ("s:compressible", ["SET", "s:compressible", "abc" * 400], True),
        ("s:incompressible", ["SET", "s:incompressible", "".join(chr(33 + (i * 7919) % 90) for i in range(60))],
         True),
        ("s:empty", ["SET", "s:empty", ""], True),
        ("s:binary", ["SET", "s:binary", bytes(range(256))], True),
        ("l:small", ["RPUSH", "l:small", "a", "1", "-1", "300", "-5000", "70000", "-9000000", "4294967296",
                     "x" * 70, "y" * 5000], True),
        ("l:big", ["RPUSH", "l:big"] + ["item-%d" % i for i in range(6000)], True),
        ("l:ints", ["RPUSH", "l:ints"] + [str(i * 37) for i in range(4000)], True),
        # pushed at the head: Redis's nodes are cut where its history cut them, DUMP's as RPUSH would
        ("l:lpushed", ["LPUSH", "l:lpushed"] + [("v%d" % i) * (i % 13) for i in range(2000)], False),
        ("set:int16", ["SADD", "set:int16", "1", "2", "-3", "100"], True),
        ("set:int64", ["SADD", "set:int64", "1", "5000000000", "-7"], True),
        ("set:intbig", ["SADD", "set:intbig"] + [str(i) for i in range(600)], False),
        ("set:str", ["SADD", "set:str", "a", "b", "c"], False),
        ("set:hashtable", ["SADD", "set:hashtable"] + ["m%d" % i for i in range(300)], False),
        ("h:listpack", ["HSET", "h:listpack", "f1", "v1", "n", "42", "neg", "-100000", "f" * 20, "v" * 60], True),
        ("h:hashtable", ["HSET", "h:hashtable"] + sum([["f%d" % i, "v%d" % i] for i in range(200)], []), False),
        ("h:longvalue", ["HSET", "h:longvalue", "f", "x" * 100], False),
        ("z:listpack", ["ZADD", "z:listpack", "1", "a", "2.5", "b", "-3", "c", "1e300", "d", "inf", "e", "-inf", "f",
                        "0", "g", "123456789", "h"], True),
        ("z:skiplist", ["ZADD", "z:skiplist"] + sum([[str(i * 0.75 - 40), "m%d" % i] for i in range(300)], []), True),
        ("z:longmember", ["ZADD", "z:longmember", "1", "x" * 100, "2", "y"], True),
        ("st:one", ["XADD", "st:one", "1-1", "a", "1", "b", "-2"], True),
        ("st:many", [["XADD", "st:many", "%d-%d" % (1000 + i // 3, i % 3)] +
                     (["f", "v%d" % i, "n", str(i * 1000 - 70000)] if i % 7 else ["f", str(i), "other", "x" * (i % 90)])
                     for i in range(260)] +
         [["XDEL", "st:many"] + ["%d-%d" % (1000 + i // 3, i % 3) for i in range(0, 260, 4)],
          ["XDEL", "st:many", "1000-0", "1000-1", "1000-2", "1001-0", "1001-1"]], True),
        ("st:empty", [["XADD", "st:empty", "5-5", "a", "b"], ["XADD", "st:empty", "6-0", "a", "b"],
                      ["XDEL", "st:empty", "5-5", "6-0"], ["XSETID", "st:empty", "9-9", "ENTRIESADDED", "40"]], True),
        ("st:trimmed", [["XADD", "st:trimmed", str(i), "k", "v"] for i in range(1, 400)] +
         [["XTRIM", "st:trimmed", "MAXLEN", "~", "150"], ["XTRIM", "st:trimmed", "MINID", "320"]], True),
        ("st:bigvalues", [["XADD", "st:bigvalues", str(i), "blob", "%05d" % i * (200 + i * 13)] for i in range(1, 60)],
         True),
        ("st:ids", [["XADD", "st:ids", "18446744073709551614-5", "a", "b"],
                    ["XADD", "st:ids", "18446744073709551615-0", "a", "b"],
                    ["XADD", "st:ids", "18446744073709551615-18446744073709551615", "z", "1"]], True),
        ("st:groups", [["XADD", "st:groups", "%d-0" % i, "f", str(i)] for i in range(1, 9)] +
         [["XGROUP", "CREATE", "st:groups", "g1", "0"], ["XGROUP", "CREATE", "st:groups", "g2", "$"],
          ["XGROUP", "CREATE", "st:groups", "a-group-name-long-enough-to-compress-" * 3, "3-0", "ENTRIESREAD", "-1"],
          ["XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "st:groups", ">"],
          ["XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", "st:groups", ">"],
          ["XGROUP", "CREATECONSUMER", "st:groups", "g1", "carol"],
          ["XGROUP", "CREATECONSUMER", "st:groups", "g2", "c" * 60],
          ["XACK", "st:groups", "g1", "2-0", "5-0"], ["XDEL", "st:groups", "4-0"],
          ["XCLAIM", "st:groups", "g1", "carol", "0", "6-0", "RETRYCOUNT", "9", "TIME", "123456"]], True),
        ("st:emptygroup", ["XGROUP", "CREATE", "st:emptygroup", "g", "$", "MKSTREAM"], True),
    ]
    return v


def build(r, args):
    """run the command, or the commands, that make a value"""
    for cmd in (args if isinstance(args[0], list) else [args]):
        r.execute_command(*cmd)


def contents(r, key):
    t = r.type(key)
    if t == b"string":
        body = r.get(key)
    elif t == b"list":
        body = r.lrange(key, 0, -1)
    elif t == b"set":
        body = sorted(r.smembers(key))
    elif t == b"hash":
        body = sorted(r.hgetall(key).items())
    elif t == b"zset":
        body = r.zrange(key, 0, -1, withscores=True)
    elif t == b"stream":
        info = r.execute_command("XINFO", "STREAM", key, "FULL", "COUNT", "0")
        pairs = list(info.items()) if isinstance(info, dict) else list(zip(info[::2], info[1::2]))
        info = [(k, v) for k, v in pairs if k not in ("radix-tree-nodes", b"radix-tree-nodes")]
        body = (r.xrange(key), r.xlen(key), info)
    else:
        body = None
    return t, body


def cross(R, P):
    for key, args, deterministic in values():
        build(R, args)
        payload = R.dump(key)
        check(payload is not None, "%s: redis DUMP" % key)
        # Redis -> candidate
        eq(P.restore(key, 0, payload), b"OK", "%s: candidate RESTOREs redis's payload" % key)
        eq(contents(P, key), contents(R, key), "%s: contents after RESTORE into the candidate" % key)
        eq(P.object("encoding", key), R.object("encoding", key), "%s: encoding" % key)
        # candidate -> Redis
        mine = P.dump(key)
        if deterministic:
            check(mine == payload, "%s: DUMP bytes (%d and %d bytes)" % (key, len(mine), len(payload)))
        R.restore(key + ":back", 0, mine)
        eq(contents(R, key + ":back"), contents(P, key), "%s: contents after RESTORE into redis" % key)
        eq(R.object("encoding", key + ":back"), R.object("encoding", key), "%s: encoding in redis" % key)


FOREIGN = {"hash-max-listpack-value": 200, "zset-max-listpack-value": 200, "hash-max-listpack-entries": 1000,
           "zset-max-listpack-entries": 300, "set-max-intset-entries": 1000, "list-max-listpack-size": 5}


def foreign(R, P):
    """payloads of a Redis configured otherwise: each server converts them by its own thresholds"""
    saved = {k: R.config_get(k)[k] for k in FOREIGN}
    for k, v in FOREIGN.items():
        R.config_set(k, v)
    R.hset("f:h-longvalue", "f", "x" * 100)
    R.hset("f:h-many", mapping={"f%d" % i: "v" for i in range(700)})
    R.zadd("f:z-longmember", {"x" * 100: 1})
    R.zadd("f:z-many", {"m%d" % i: i for i in range(200)})
    R.sadd("f:s-ints", *range(800))
    R.rpush("f:l-fill5", *["e%d" % i for i in range(23)])
    payloads = {k.decode(): R.dump(k) for k in R.keys("f:*")}
    for k, v in saved.items():
        R.config_set(k, v)
    for k, v in sorted(payloads.items()):
        R.restore(k + ":r", 0, v)
        eq(P.restore(k + ":r", 0, v), b"OK", "%s: RESTORE" % k)
        eq(P.object("encoding", k + ":r"), R.object("encoding", k + ":r"), "%s: encoding after RESTORE" % k)
        eq(contents(P, k + ":r"), contents(R, k + ":r"), "%s: contents after RESTORE" % k)


LIBS = [
    "#!lua name=cross_a\n"
    "local function pad(s) return s .. string.rep('-', 40) end\n"  # long code: LZF-compressed in the payload
    "redis.register_function{function_name='a_ro', callback=function(keys) return redis.call('get', keys[1]) end,"
    " flags={'no-writes', 'allow-stale'}, description='reads a key'}\n"
    "redis.register_function('a_pad', function(keys, args) return pad(args[1]) end)\n",
    "#!lua name=cross_b\nredis.register_function('b1', function() return 'b' end)\n",
]


def function_list(r):
    """FUNCTION LIST WITHCODE, libraries and their functions sorted (Redis lists them in its dicts' order)"""
    out = []
    for lib in r.execute_command("FUNCTION", "LIST", "WITHCODE"):
        d = dict(zip(lib[::2], lib[1::2]))
        fns = sorted(tuple(map(repr, f)) for f in d[b"functions"])
        out.append((d[b"library_name"], d[b"engine"], d[b"library_code"], fns))
    return sorted(out)


def functions(R, P):
    """FUNCTION DUMP in Redis, FUNCTION RESTORE here (every policy), and back"""
    for code in LIBS:
        R.execute_command("FUNCTION", "LOAD", code)
    payload = R.execute_command("FUNCTION", "DUMP")
    eq(P.execute_command("FUNCTION", "RESTORE", payload), b"OK", "candidate FUNCTION RESTOREs redis's payload")
    eq(function_list(P), function_list(R), "FUNCTION LIST WITHCODE after FUNCTION RESTORE")
    P.set("fk", "v")
    eq(P.execute_command("FCALL_RO", "a_ro", 1, "fk"), b"v", "FCALL_RO of a restored function")
    eq(P.execute_command("FCALL", "a_pad", 0, "x"), b"x" + b"-" * 40, "FCALL of a restored function")
    exists = ("Library cross_a already exists", "Library cross_b already exists")  # the first Redis meets
    for policy, want in ((None, exists), ("APPEND", exists), ("REPLACE", None), ("FLUSH", None)):
        args = ["FUNCTION", "RESTORE", payload] + ([policy] if policy else [])
        got = []
        for r in (R, P):
            try:
                got.append(r.execute_command(*args))
            except redis.ResponseError as e:
                got.append(str(e))
        check(got[0] in want if want else got[0] == b"OK", "FUNCTION RESTORE %s: redis %r" % (policy, got[0]))
        check(got[1] in want if want else got[1] == b"OK", "FUNCTION RESTORE %s: candidate %r" % (policy, got[1]))
    mine = P.execute_command("FUNCTION", "DUMP")
    eq(R.execute_command("FUNCTION", "RESTORE", mine, "FLUSH"), b"OK", "redis FUNCTION RESTOREs the candidate's")
    eq(function_list(R), function_list(P), "FUNCTION LIST WITHCODE in redis after FUNCTION RESTORE")
    for r in (R, P):
        r.execute_command("FUNCTION", "DELETE", "cross_b")
    eq(P.execute_command("FUNCTION", "DUMP"), R.execute_command("FUNCTION", "DUMP"), "FUNCTION DUMP bytes, one library")
    rng = random.Random(7)
    for i in range(300):  # mutated payloads: an answer, never a crash
        bad = refooter(mutate(rng, payload)) if i % 4 else mutate(rng, payload)
        try:
            P.execute_command("FUNCTION", "RESTORE", bad, "REPLACE")
        except redis.ResponseError:
            pass
    eq(P.ping(), True, "PING after mutated FUNCTION RESTOREs")
    for r in (R, P):
        r.execute_command("FUNCTION", "FLUSH")


HLLS = [  # (key, elements): an empty one, sparse ones, dense ones (past hll-sparse-max-bytes)
    ("hll:empty", 0), ("hll:small", 5), ("hll:sparse", 400), ("hll:dense", 3000), ("hll:big", 30000)]


def hll_state(r, key):
    """a HyperLogLog's bytes, its count, and its bytes once the count is cached"""
    before = r.get(key)
    n = r.pfcount(key)
    return before, n, r.get(key), r.object("encoding", key)


def hll(R, P):
    """HyperLogLogs (strings in Redis's layout): made in one server, DUMPed, RESTOREd in the other, they
    count the same and keep the same bytes; both ways, with the count cached and not"""
    for made, other, name in ((R, P, "redis->candidate"), (P, R, "candidate->redis")):
        tag = "r" if made is R else "p"
        for key, n in HLLS:
            k = "%s:%s" % (key, tag)
            made.pfadd(k, *["%s-%d" % (key, i) for i in range(n)])
            for cached in (False, True):
                if cached:
                    made.pfcount(k)
                payload = made.dump(k)
                kk = "%s:%d" % (k, cached)
                eq(other.restore(kk, 0, payload), b"OK", "%s %s: RESTORE" % (name, kk))
                made.restore(kk, 0, payload)
                eq(hll_state(other, kk), hll_state(made, kk), "%s %s: bytes, count, cached bytes" % (name, kk))
                eq(other.dump(kk), made.dump(kk), "%s %s: DUMP bytes" % (name, kk))
                other.pfadd(kk, "one", "more")
                made.pfadd(kk, "one", "more")
                eq(hll_state(other, kk), hll_state(made, kk), "%s %s: after PFADD" % (name, kk))
        keys = ["%s:%s:0" % (key, tag) for key, _ in HLLS]
        eq(other.pfcount(*keys), made.pfcount(*keys), "%s: PFCOUNT of the restored" % name)
        for r in (R, P):
            r.pfmerge("hll:merged:" + tag, *keys)
        eq(other.get("hll:merged:" + tag), made.get("hll:merged:" + tag), "%s: PFMERGE of the restored" % name)


def events(r, payload):
    """the keyevent notifications of RESTORE's cases, per key in order"""
    r.config_set("notify-keyspace-events", "KEAn")
    sub = r.pubsub()
    sub.psubscribe("__keyevent@0__:*")
    sub.subscribe("dump-cross-sentinel")
    r.set("ev:a", "x")
    r.restore("ev:a", 0, payload, replace=True)
    r.restore("ev:b", 0, payload)
    r.restore("ev:c", 1000, payload, absttl=True)
    r.set("ev:d", "x")
    r.restore("ev:d", 1000, payload, absttl=True, replace=True)
    r.restore("ev:e", 100000, payload, idletime=5)
    r.restore("ev:f", 0, payload, replace=True)
    r.publish("dump-cross-sentinel", "end")
    per_key = {}
    while True:
        m = sub.get_message(timeout=10)
        if m is None:
            per_key["timeout"] = True
            break
        if m["type"] == "message":
            break
        if m["type"] == "pmessage":
            per_key.setdefault(m["data"], []).append(m["channel"])
    sub.close()
    r.config_set("notify-keyspace-events", "")
    return per_key


def mutate(rng, p):
    p = bytearray(p)
    how = rng.randrange(4)
    if how == 0 and p:  # truncate
        return bytes(p[:rng.randrange(len(p))])
    if how == 1 and p:  # flip bytes in the value
        for _ in range(rng.randrange(1, 4)):
            i = rng.randrange(len(p))
            p[i] = rng.randrange(256)
    elif how == 2:  # insert junk
        i = rng.randrange(len(p) + 1)
        p[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
    else:  # delete a run
        if p:
            i = rng.randrange(len(p))
            del p[i:i + rng.randrange(1, 8)]
    return bytes(p)


def refooter(p):
    """the value of p with a valid version and CRC, so the reader itself is exercised"""
    body = p[:-10] if len(p) >= 10 else p
    body = body + b"\x0a\x00"
    return body + crc64(body).to_bytes(8, "little")


_TABLE = []


def crc64(data):
    """Redis's CRC-64 (not in the standard library)"""
    if not _TABLE:
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x95AC9329AC4BC9B5 if c & 1 else c >> 1
            _TABLE.append(c)
    crc = 0
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def fuzz(R, P, n, seed):
    rng = random.Random(seed)
    payloads = [R.dump(key) for key, _, _ in values()]
    ok = errors = 0
    for i in range(n):
        base = rng.choice(payloads)
        bad = mutate(rng, base)
        if rng.randrange(4):  # mostly with a good footer, or the checksum stops it first
            bad = refooter(bad)
        try:
            P.restore("fuzz", 0, bad, replace=True)
            ok += 1
            contents(P, "fuzz")
        except redis.ResponseError as e:
            errors += 1
            msg = str(e)
            check(msg in ("Bad data format", "DUMP payload version or checksum are wrong"),
                  "fuzz %d: error %r" % (i, msg))
    eq(P.ping(), True, "PING after %d fuzzed RESTOREs (%d accepted, %d refused)" % (n, ok, errors))
    check(errors > n // 2, "most fuzzed payloads refused (%d of %d)" % (errors, n))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--candidate", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--fuzz", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if not os.access(args.redis, os.X_OK):
        print("SKIP: %s not found" % args.redis)
        return 77
    ref = Server(args.redis, name="dump-cross-redis")
    cand = Server(args.candidate, threads=args.threads, name="dump-cross")
    ref.start()
    cand.start()
    try:
        R = redis.Redis(port=ref.port)
        P = redis.Redis(port=cand.port)
        if args.fuzz:
            for key, cmd, _ in values():
                build(R, cmd)
            fuzz(R, P, args.fuzz, args.seed)
        else:
            cross(R, P)
            foreign(R, P)
            functions(R, P)
            hll(R, P)
            payload = R.dump("s:short")
            want = events(R, payload)
            check(b"restore" in str(want).encode(), "redis's events: %r" % want)
            eq(events(P, payload), want, "keyspace events of RESTORE")
    except (OSError, redis.RedisError) as e:
        check(False, "exception: %r" % e)
    finally:
        ref.stop()
        eq(cand.stop(), 0, "candidate exit status")
    return expect.done("dump_cross")


if __name__ == "__main__":
    sys.exit(main())
