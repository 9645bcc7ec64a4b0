#!/usr/bin/python3
"""aof_streams.py --candidate SERVER [--threads N] [--redis REDIS] [--seed S] [--ops N]:
the stream commands (server/cmd/stream.c) in the append-only file percore
writes.  A seeded workload of XADD (`*`, `ms-*`, explicit IDs, NOMKSTREAM,
MAXLEN and MINID with `=` and `~`, LIMIT), XTRIM, XDEL, XSETID (ENTRIESADDED,
MAXDELETEDID), streams emptied by XDEL, consumer groups (XGROUP, XREADGROUP,
XACK, XCLAIM, XAUTOCLAIM: the XCLAIM/XGROUP SETID forms they propagate),
RENAME across shards, EXPIRE, and BGREWRITEAOF now and then (the base file's
XADD/XSETID per stream, XGROUP CREATE and XCLAIM per group), with
stream-node-max-entries small so that `~` trims whole nodes; on percore with
appendonly yes and appendfsync always; kill -9; redis-check-aof accepts the
directory, a real redis-server loading it holds every stream percore held
(entries, length, last, first and max deleted IDs, entries added, groups,
PELs with delivery times and counts, consumers but their seen times), and so
does percore reloading its own AOF (aof_write.py's checks).  XINFO STREAM's
radix-tree-keys and -nodes are left out: a rewritten AOF drops deleted
entries, and with them where nodes were cut.  Standard library and Debian's
python3-redis; exit 0 when all agree, 77 when redis-server is missing.

First, PROPAGATION's group commands on both servers with appendonly yes: the
incremental AOFs hold the same commands (delivery times masked), so XREADGROUP,
XCLAIM and XAUTOCLAIM propagate the forms Redis 7.0 does."""
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import redis  # noqa: E402
except ImportError:
    print("SKIP: python3-redis is not installed")
    sys.exit(77)
import aof_write  # noqa: E402
import dump_cross  # noqa: E402

NODE_KEYS = (b"radix-tree-keys", b"radix-tree-nodes", "radix-tree-keys", "radix-tree-nodes")


def without_seen_times(v):
    """a consumer's seen-time is when the server loading the AOF made it: left out"""
    if isinstance(v, dict):
        return {k: without_seen_times(x) for k, x in v.items() if k not in (b"seen-time", "seen-time")}
    if isinstance(v, (list, tuple)):
        return [without_seen_times(x) for x in v]
    return v


def contents(r, key):
    """dump_cross's contents without where the nodes are cut and the consumers' seen times"""
    t, body = dump_cross.contents(r, key)
    if t == b"stream":
        body = (body[0], body[1], without_seen_times([(k, v) for k, v in body[2] if k not in NODE_KEYS]))
    return t, body


def group_op(r, rng, k):
    """one consumer-group command on k: XGROUP (CREATE, SETID, CREATECONSUMER, DELCONSUMER, DESTROY),
    XREADGROUP (new entries, NOACK, history), XACK, XCLAIM, XAUTOCLAIM"""
    g = rng.choice(["g0", "g1"])
    c = rng.choice(["c0", "c1", "c2"])
    op = rng.randrange(12)
    if op == 0:
        r.execute_command("XGROUP", "CREATE", k, g, rng.choice(["$", "0", "5-0"]),
                          *(["MKSTREAM"] if rng.randrange(2) else []))
    elif op <= 4:
        r.execute_command("XREADGROUP", "GROUP", g, c, "COUNT", rng.randrange(1, 6),
                          *(["NOACK"] if rng.randrange(5) == 0 else []), "STREAMS", k,
                          ">" if rng.randrange(4) else "0")
    elif op <= 6:
        ids = [p["message_id"] for p in r.xpending_range(k, g, "-", "+", 10)]
        if ids:
            r.execute_command("XACK", k, g, *rng.sample(ids, rng.randrange(1, len(ids) + 1)))
    elif op == 7:
        ids = [p["message_id"] for p in r.xpending_range(k, g, "-", "+", 10)]
        if ids:
            r.execute_command("XCLAIM", k, g, c, 0, *rng.sample(ids, rng.randrange(1, len(ids) + 1)),
                              *rng.choice([[], ["JUSTID"], ["RETRYCOUNT", "4"], ["LASTID", "999999-0"]]))
    elif op == 8:
        r.execute_command("XAUTOCLAIM", k, g, c, 0, "0", "COUNT", rng.randrange(1, 5),
                          *(["JUSTID"] if rng.randrange(2) else []))
    elif op == 9:
        r.execute_command("XGROUP", "SETID", k, g, rng.choice(["$", "0"]),
                          *(["ENTRIESREAD", "3"] if rng.randrange(2) else []))
    elif op == 10:
        r.execute_command("XGROUP", rng.choice(["CREATECONSUMER", "DELCONSUMER"]), k, g, c)
    elif rng.randrange(3) == 0:
        r.execute_command("XGROUP", "DESTROY", k, g)


def workload(port, seed, n):
    rng = random.Random(seed)
    rs = [redis.Redis(port=port, db=db) for db in range(aof_write.DBS)]
    rs[0].config_set("stream-node-max-entries", 5)
    keys = ["x%d" % i for i in range(20)] + ["{t}%d" % i for i in range(6)]
    for i in range(n):
        r = rs[rng.randrange(aof_write.DBS)]
        k = rng.choice(keys)
        op = rng.randrange(20)
        try:
            if op >= 14:
                group_op(r, rng, k)
            elif op <= 5:
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


# the group commands' propagation, each form Redis 7.0 writes: XREADGROUP as XCLAIM ... LASTID per entry
# delivered (NOACK: XGROUP CREATECONSUMER and SETID, MULTI ... EXEC around them), XCLAIM's and XAUTOCLAIM's
# XCLAIMs (an entry gone: the XCLAIM that drops it), LASTID alone as XGROUP SETID, the rest as sent
PROPAGATION = [
    "XADD s 1-0 a 1", "XADD s 2-0 b 2", "XADD s 3-0 c 3", "XGROUP CREATE s g 0",
    "XREADGROUP GROUP g alice COUNT 1 STREAMS s >", "XREADGROUP GROUP g bob NOACK STREAMS s >",
    "XREADGROUP GROUP g carol STREAMS s 0", "XGROUP SETID s g 0", "XREADGROUP GROUP g bob COUNT 1 STREAMS s >",
    "XCLAIM s g dave 0 1-0 JUSTID", "XCLAIM s g dave 0 9-0 LASTID 10-0", "XCLAIM s g dave 3600000 1-0",
    "XDEL s 1-0", "XAUTOCLAIM s g erin 0 0", "XACK s g 1-0", "XACK s g 1-0",
    "XGROUP CREATECONSUMER s g zed", "XGROUP CREATECONSUMER s g zed", "XGROUP DELCONSUMER s g zed",
    "XGROUP SETID s g 0", "XREADGROUP GROUP g f STREAMS s >", "XGROUP CREATE s2 g $ MKSTREAM",
    "XGROUP DESTROY s g", "XGROUP DESTROY s g",
]


def aof_commands(d):
    """the commands of the incremental AOF under d, delivery times masked"""
    base = os.path.join(d, "appendonlydir")
    data = b"".join(open(os.path.join(base, f), "rb").read() for f in sorted(os.listdir(base)) if ".incr." in f)
    cmds, pos = [], 0
    while pos < len(data):
        argv, pos = [], data.index(b"\r\n", pos)
        n, pos = int(data[data.rindex(b"*", 0, pos) + 1:pos]), pos + 2
        for _ in range(n):
            le = data.index(b"\r\n", pos)
            ln = int(data[pos + 1:le])
            argv.append(data[le + 2:le + 2 + ln])
            pos = le + 4 + ln
        cmds.append([b"T" if i > 0 and argv[i - 1] == b"TIME" else x for i, x in enumerate(argv)])
    return cmds


def propagation(a, d):
    import diff  # noqa: E402
    got = {}
    for name, binary in (("redis", a.redis), ("candidate", a.candidate)):
        sub = os.path.join(d, "prop-" + name)
        os.makedirs(sub)
        srv = diff.Server(binary, threads=a.threads, name="aof_streams-" + name,
                          extra=["--appendonly", "yes", "--appendfsync", "always", "--dir", sub])
        srv.start()
        try:
            r = redis.Redis(port=srv.port)
            r.response_callbacks.clear()  # the replies are not looked at
            for line in PROPAGATION:
                r.execute_command(*line.split())
        finally:
            srv.stop()
        got[name] = aof_commands(sub)
    if got["redis"] != got["candidate"]:
        for i, (x, y) in enumerate(zip(got["redis"] + [None] * 99, got["candidate"] + [None] * 99)):
            if x != y:
                print("propagation differs at command %d: redis %r, candidate %r" % (i, x, y))
                break
        sys.exit(1)
    print("propagation: %d commands as redis-server's" % len(got["redis"]))


def main():
    a = aof_write.parse_args(12)
    d = tempfile.mkdtemp(prefix="aof_streams-propagation.")
    try:
        propagation(a, d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    aof_write.differential_main(workload, "aof_streams", 12, contents)


if __name__ == "__main__":
    main()
