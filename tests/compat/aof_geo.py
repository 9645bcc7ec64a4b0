#!/usr/bin/python3
"""aof_geo.py --candidate SERVER [--threads N] [--redis REDIS] [--seed S] [--ops N]:
the geo commands (server/cmd/geo.c) in the append-only file percore writes.

1. propagation: one client runs the same seeded sequence of GEOADD [NX XX CH],
   GEOSEARCHSTORE [STOREDIST], GEORADIUS/GEORADIUSBYMEMBER STORE/STOREDIST
   (destinations on the source's shard and on others), searches that store
   nothing, failed commands, GEOADD from a script, over several databases, on a redis-server and
   on percore, both with appendonly yes; the commands each AOF holds must be
   the same, argument for argument: GEOADD written as the ZADD Redis rewrites
   it to (its scores the 52-bit geohashes), a STORE form as itself, nothing
   for a command that changed nothing.  One exception, percore's for every
   gathered command: a STORE form whose source and destination live on
   different shards is logged as the write of its result to the
   destination's owner (RESTORE ... REPLACE ABSTTL, or DEL).
2. the workload again on percore alone, kill -9: redis-check-aof accepts the
   directory, a real redis-server loading it holds every key, value and TTL
   percore held, and so does percore reloading its own AOF (aof_write.py's
   checks).

Standard library and Debian's python3-redis; exit 0 when all agree, 77 when
redis-server is missing."""
import os
import random
import shutil
import signal
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import redis  # noqa: E402
except ImportError:
    print("SKIP: python3-redis is not installed")
    sys.exit(77)
import aof_write  # noqa: E402


def commands(seed, n):
    """the seeded sequence: (db, argv) pairs"""
    rng = random.Random(seed)
    srcs = ["g%d" % i for i in range(4)] + ["{t}g%d" % i for i in range(2)]
    dsts = ["d%d" % i for i in range(6)] + ["{t}d%d" % i for i in range(2)]
    members = ["m%d" % i for i in range(25)] + ["12345", "bin\x00ary"]
    centres = [(rng.uniform(-180, 180), rng.uniform(-80, 80)) for _ in range(3)]

    def position():
        cx, cy = rng.choice(centres)
        lon = max(-180.0, min(180.0, cx + rng.gauss(0, 1)))
        lat = max(-85.0, min(85.0, cy + rng.gauss(0, 1)))
        return ["%.6f" % lon, "%.6f" % lat]

    def centre():
        cx, cy = rng.choice(centres)
        return ["%.4f" % cx, "%.4f" % cy]

    def search_options():
        a = []
        if rng.randrange(2):
            a += ["COUNT", str(rng.randrange(1, 20))] + (["ANY"] if rng.randrange(3) == 0 else [])
        if rng.randrange(2):
            a.append(rng.choice(["ASC", "DESC"]))
        return a

    out = []
    for _ in range(n):
        db = rng.randrange(aof_write.DBS)
        src = rng.choice(srcs)
        dst = rng.choice(dsts)
        op = rng.randrange(12)
        if op <= 4:
            a = ["GEOADD", src] + rng.choice([[], [], ["NX"], ["XX"], ["CH"], ["XX", "CH"]])
            for _ in range(rng.randrange(1, 6)):
                a += position() + [rng.choice(members)]
            if rng.randrange(20) == 0:
                a += ["200", "1", "bad"]  # fails whole
        elif op <= 6:
            a = ["GEOSEARCHSTORE", dst, src, "FROMLONLAT"] + centre()
            u = rng.choice(["km", "mi"])
            a += rng.choice([["BYRADIUS", str(rng.randrange(0, 400)), u],
                             ["BYBOX", str(rng.randrange(0, 600)), str(rng.randrange(0, 600)), u]])
            a += search_options() + (["STOREDIST"] if rng.randrange(2) else [])
        elif op <= 8:
            a = ["GEORADIUS", src] + centre() + [str(rng.randrange(0, 400)), "km"] + search_options()
            if rng.randrange(4):
                a += [rng.choice(["STORE", "STOREDIST"]), dst]
        elif op == 9:
            a = ["GEORADIUSBYMEMBER", src, rng.choice(members), str(rng.randrange(0, 400)), "km"]
            a += search_options() + [rng.choice(["STORE", "STOREDIST"]), dst]
        elif op == 10:
            if rng.randrange(2):
                a = ["ZREM", src, rng.choice(members)]
            else:  # a script's GEOADD: Redis logs the effect, the ZADD, inside MULTI/EXEC
                a = ["EVAL", "return redis.call('GEOADD', KEYS[1], ARGV[1], ARGV[2], ARGV[3])", "1", src]
                a += position() + [rng.choice(members)]
        else:
            a = rng.choice([["DEL", dst], ["EXPIRE", dst, str(rng.randrange(100, 1000))], ["DEL", src]])
        out.append((db, a))
    return out


def run(port, seed, n):
    rs = [redis.Redis(port=port, db=db) for db in range(aof_write.DBS)]
    for r in rs:
        r.response_callbacks = {}  # raw replies (redis-py's geo parsers want its own options)
    for db, a in commands(seed, n):
        try:
            rs[db].execute_command(*a)
        except redis.exceptions.ResponseError:
            pass


def parse_aof(data):
    """the RESP commands of an AOF file, as lists of bytes"""
    cmds, i = [], 0
    while i < len(data):
        assert data[i:i + 1] == b"*", "not a RESP array at byte %d" % i
        j = data.index(b"\r\n", i)
        argc, i = int(data[i + 1:j]), j + 2
        argv = []
        for _ in range(argc):
            j = data.index(b"\r\n", i)
            n = int(data[i + 1:j])
            argv.append(data[j + 2:j + 2 + n])
            i = j + 2 + n + 2
        cmds.append(argv)
    return cmds


def logged(d):
    """the data commands of d's incremental AOF files, each with the database it ran in"""
    aof = os.path.join(d, "appendonlydir")
    out, db = [], 0
    for f in sorted(x for x in os.listdir(aof) if x.endswith(".incr.aof")):
        with open(os.path.join(aof, f), "rb") as fh:
            for argv in parse_aof(fh.read()):
                name = argv[0].lower()
                if name == b"select":
                    db = int(argv[1])
                elif name not in (b"multi", b"exec"):
                    out.append((db, [name] + argv[1:]))
    return out


def destination(argv):
    """the key a STORE form writes, None for other commands"""
    if argv[0] == b"geosearchstore":
        return argv[1]
    if argv[0] in (b"georadius", b"georadiusbymember"):
        at = [i for i, x in enumerate(argv[:-1]) if i >= 5 and x.lower() in (b"store", b"storedist")]
        return argv[at[-1] + 1] if at else None
    return None


def written_back(w, g):
    """a STORE form whose keys span shards: percore's gather writes its result back to the destination's
    owner, and logs that write (RESTORE ... REPLACE ABSTTL, or DEL of an emptied key), as for every gathered
    command, where Redis logs the command"""
    dst = destination(w[1])
    return w[0] == g[0] and dst is not None and len(g[1]) > 1 and g[1][1] == dst and \
        (g[1][0] == b"del" or (g[1][0] == b"restore" and g[1][-2:] == [b"REPLACE", b"ABSTTL"]))


def stop(p):
    p.send_signal(signal.SIGTERM)
    p.wait()


def propagation(a, root):
    rdir, pdir = os.path.join(root, "redis"), os.path.join(root, "percore")
    os.mkdir(rdir)
    os.mkdir(pdir)
    rp, rport = aof_write.redis_on(a.redis, rdir)
    try:
        run(rport, a.seed, a.ops)
    finally:
        stop(rp)
    pp, pport = aof_write.percore(a.candidate, a.threads, pdir, "always")
    try:
        run(pport, a.seed, a.ops)
    finally:
        stop(pp)
    want, got = logged(rdir), logged(pdir)
    if [w for w in want if w[1][0] == b"geoadd"]:
        raise AssertionError("redis-server logged a GEOADD: the check is wrong")
    # EXPIRE is logged as PEXPIREAT with a time of its own on each server
    norm = lambda cs: [(db, argv[:2] if argv[0] == b"pexpireat" else argv) for db, argv in cs]
    want, got = norm(want), norm(got)
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g and not written_back(w, g):
            raise AssertionError("AOF command %d: redis-server logged %r, percore %r" % (i, w, g))
    if len(want) != len(got):
        raise AssertionError("redis-server logged %d commands, percore %d" % (len(want), len(got)))
    names = sorted(set(argv[0].decode() for _, argv in want))
    print("propagation: %d commands as redis-server logs them (%s)" % (len(want), " ".join(names)))


def main():
    a = aof_write.parse_args(11, 2000, 1)
    d = tempfile.mkdtemp(prefix="aof_geo.")
    try:
        propagation(a, d)
        aof_write.workload = lambda port, seed, n: run(port, seed, n)
        os.mkdir(os.path.join(d, "crash"))
        aof_write.differential(a, os.path.join(d, "crash"), "always", signal.SIGKILL)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print("OK")


if __name__ == "__main__":
    main()
