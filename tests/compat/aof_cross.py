#!/usr/bin/python3
"""aof_cross.py --candidate SERVER [--threads N] [--redis REDIS] [--seed S] [--ops N]:
AOF files written by a real redis-server (7.0, appendonly yes) loaded at
start by the candidate (appendonly yes), compared with Redis.

- A seeded random write load of every type (strings, lists, sets, hashes,
  sorted sets; expiries set, changed and removed; MULTI/EXEC blocks; SELECT
  of several databases; RENAME, MSET, FLUSHDB now and then) against Redis
  with aof-use-rdb-preamble yes and no, with a BGREWRITEAOF in the middle
  (a base file, then incr files) and without one (incr files only).  The
  candidate started on a copy of Redis's directory has every key with the
  same type, contents and expire time (to the second).
- The same directory damaged, each copy given to Redis and to the
  candidate: the last incr file cut inside a command with aof-load-truncated
  yes (both load up to the last whole command and cut the file at the same
  size) and no (both refuse to start); a MULTI left open at the end (dropped,
  the file cut before it); a byte of a command's header changed in the
  middle (both refuse: bad format); a manifest naming a missing file (both
  refuse).
- Function libraries: Redis's AOF with them (its base's, preamble yes and
  no, and FUNCTION LOAD in its incr file) loads here, and the candidate's own
  BGREWRITEAOF keeps them (FUNCTION2 records or FUNCTION LOAD commands).
- Stream trims: Redis propagates XADD / XTRIM with `~` and LIMIT as
  `MAXLEN = <n> LIMIT <m>` (the `~` made exact, the LIMIT kept), which its
  loader takes (the AOF client is exempt from "LIMIT cannot be used without
  the special ~ option"); the candidate loads them to the same streams.
- An old single-file appendonly.aof in dir, no appenddirname (Redis < 7):
  loaded, and moved into appenddirname with a manifest naming it the base,
  as Redis does.

Standard library and Debian's python3-redis.  Exit 0 when all agree, 1
otherwise, 77 when redis-server is missing."""
import os
import random
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "clients"))
from diff import Conn, Server  # noqa: E402
from dump_cross import LIBS, contents, function_list  # noqa: E402
import expect  # noqa: E402
from expect import check, eq  # noqa: E402

import redis  # noqa: E402

DBS = (0, 1, 5)


def writes(rng, n):
    """n random write commands (lists of args), some grouped in MULTI blocks (a list of lists)"""
    out = []
    while len(out) < n:
        k = rng.randrange(40)
        ttl = str(rng.randrange(1000, 9000))
        pick = rng.randrange(30)
        if pick == 0:
            out.append(["SELECT", str(rng.choice(DBS))])
        elif pick == 1 and rng.randrange(8) == 0:
            out.append(["FLUSHDB"])
        elif pick == 2:
            out.append([[c for c in writes(rng, rng.randrange(1, 5)) if not isinstance(c[0], list)
                         and c[0] not in ("SELECT", "FLUSHDB")]])
        elif pick == 3:
            out.append(["SET", "s%d" % k, "v%d" % rng.randrange(1000), "EX", ttl])
        elif pick == 4:
            out.append(["SET", "s%d" % k, "x" * rng.randrange(1, 80)])
        elif pick == 5:
            out.append(["APPEND", "s%d" % k, "ab"])
        elif pick == 6:
            out.append(["INCRBY", "n%d" % k, str(rng.randrange(-50, 50))])
        elif pick == 7:
            out.append(["INCRBYFLOAT", "f%d" % k, "%.2f" % rng.uniform(-5, 5)])
        elif pick == 8:
            out.append(["RPUSH", "l%d" % k] + ["e%d" % rng.randrange(100) for _ in range(rng.randrange(1, 6))])
        elif pick == 9:
            out.append(["LPOP", "l%d" % k])
        elif pick == 10:
            out.append(["LTRIM", "l%d" % k, "0", str(rng.randrange(1, 10))])
        elif pick == 11:
            out.append(["SADD", "t%d" % k] + [str(rng.randrange(300)) for _ in range(rng.randrange(1, 6))])
        elif pick == 12:
            out.append(["SADD", "t%d" % k, "m%d" % rng.randrange(50)])
        elif pick == 13:
            out.append(["SREM", "t%d" % k, str(rng.randrange(300))])
        elif pick == 14:
            out.append(["HSET", "h%d" % k] + sum([["f%d" % rng.randrange(20), "v%d" % rng.randrange(99)]
                                                   for _ in range(rng.randrange(1, 4))], []))
        elif pick == 15:
            out.append(["HDEL", "h%d" % k, "f%d" % rng.randrange(20)])
        elif pick == 16:
            out.append(["HINCRBY", "h%d" % k, "c", str(rng.randrange(10))])
        elif pick == 17:
            out.append(["ZADD", "z%d" % k] + sum([["%d" % rng.randrange(-9, 99), "m%d" % rng.randrange(30)]
                                                   for _ in range(rng.randrange(1, 4))], []))
        elif pick == 18:
            out.append(["ZINCRBY", "z%d" % k, "1.5", "m%d" % rng.randrange(30)])
        elif pick == 19:
            out.append(["ZPOPMIN", "z%d" % k])
        elif pick == 20:
            out.append(["EXPIRE", rng.choice("slthz") + str(k), ttl])
        elif pick == 21:
            out.append(["PEXPIRE", rng.choice("slthz") + str(k), ttl + "000"])
        elif pick == 22:
            out.append(["PERSIST", rng.choice("slthz") + str(k)])
        elif pick == 23:
            out.append(["DEL", rng.choice("slthzn") + str(k)])
        elif pick == 24:
            out.append(["RENAME", "s%d" % k, "s%d" % rng.randrange(40)])
        elif pick == 25:
            out.append(["MSET"] + sum([["s%d" % rng.randrange(40), "m%d" % rng.randrange(99)] for _ in range(3)], []))
        elif pick == 26:
            out.append(["SETEX", "s%d" % k, ttl, "e"])
        elif pick == 27:
            out.append(["GETEX", "s%d" % k, "EX", ttl])
        elif pick == 28:
            out.append(["SPOP", "t%d" % k])
        else:
            out.append(["LPUSH", "l%d" % k, "h%d" % rng.randrange(9)])
    return out


def resp(args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def apply(port, cmds):
    """the commands on one raw connection, pipelined (a MULTI block as one transaction); errors are part
    of the load"""
    c = Conn(port)
    data, replies = [], 0
    for cmd in cmds:
        for q in ([["MULTI"]] + cmd[0] + [["EXEC"]]) if isinstance(cmd[0], list) else [cmd]:
            data.append(resp(q))
            replies += 1
    c.send(b"".join(data))
    for _ in range(replies):
        check(c.read(30) not in (None, b""), "a reply to every command of the load")
    c.sock.close()


def snapshot(port):
    """{(db, key): (type, contents, expire time in s)} of every database"""
    out = {}
    for db in range(16):
        r = redis.Redis(port=port, db=db)
        for key in r.scan_iter(count=1000):
            pt = r.execute_command("PEXPIRETIME", key)
            out[(db, key)] = contents(r, key) + (pt // 1000 if pt > 0 else pt,)
        r.close()
    return out


def same(got, want, what):
    eq(len(got), len(want), "%s: key count" % what)
    bad = sorted(set(k for k in set(want) | set(got) if got.get(k) != want.get(k)))
    check(not bad, "%s: %d keys differ, e.g. %r" % (what, len(bad), [(k, want.get(k), got.get(k)) for k in bad[:2]]))


def wait_loaded(port, what):
    r = redis.Redis(port=port)
    for _ in range(6000):
        try:
            if r.info("persistence")["loading"] == 0:
                return True
        except redis.exceptions.BusyLoadingError:
            pass
        time.sleep(0.01)
    check(False, "%s: still loading" % what)
    return False


def wait_rewrite(r):
    for _ in range(3000):
        i = r.info("persistence")
        if i["aof_rewrite_in_progress"] == 0 and i["aof_rewrite_scheduled"] == 0:
            return True
        time.sleep(0.01)
    return False


def make(o, d, preamble, rewrite, seed):
    """Redis with appendonly yes in d under the write load; its state at the end"""
    ref = Server(o.redis, name="aof-cross-make",
                 extra=["--dir", d, "--aof-use-rdb-preamble", "yes" if preamble else "no",
                        "--auto-aof-rewrite-percentage", "0"])
    ref.is_redis = False  # keep our own --appendonly yes
    ref.extra += ["--appendonly", "yes", "--save", ""]
    ref.start()
    try:
        R = redis.Redis(port=ref.port)
        rng = random.Random(seed)
        apply(ref.port, writes(rng, o.ops))
        if rewrite:
            R.bgrewriteaof()
            check(wait_rewrite(R), "redis BGREWRITEAOF ends")
            apply(ref.port, writes(rng, o.ops // 2))
        want = snapshot(ref.port)
    finally:
        eq(ref.stop(), 0, "redis exit status")
    return want


def start_on(binary, d, threads, extra=()):
    """binary with appendonly yes on d; (Server, None) started, or (None, (rc, log)) when it exits at start"""
    s = Server(binary, threads=threads, name="aof-cross", extra=["--dir", d] + list(extra))
    if s.is_redis:
        s.is_redis = False
        s.extra += ["--save", ""]
    s.extra += ["--appendonly", "yes"]
    try:
        s.start()
    except RuntimeError:
        return None, (s.proc.returncode, open(s.log, "rb").read())
    return s, None


def loaded_state(binary, d, threads, what, extra=()):
    s, failed = start_on(binary, d, threads, extra)
    check(s is not None, "%s: starts (%r)" % (what, failed and failed[1][-400:]))
    if not s:
        return None
    try:
        wait_loaded(s.port, what)
        return snapshot(s.port)
    finally:
        s.stop()


def incr_files(d):
    a = os.path.join(d, "appendonlydir")
    return sorted(f for f in os.listdir(a) if ".incr." in f and not f.startswith("temp-"))


def copy(src, dst):
    shutil.copytree(src, dst)
    return dst


def loads(o, work):
    n = 0
    for preamble in (True, False):
        for rewrite in (True, False):
            n += 1
            what = "preamble %s, rewrite %s" % ("yes" if preamble else "no", "yes" if rewrite else "no")
            d = os.path.join(work, "load%d" % n)
            os.mkdir(d)
            want = make(o, d, preamble, rewrite, o.seed + n)
            check(len(want) > 20, "%s: redis has keys (%d)" % (what, len(want)))
            c = copy(d, d + "-cand")
            got = loaded_state(o.candidate, c, o.threads, what)
            if got is not None:
                same(got, want, "%s: the candidate's keys" % what)
            if n == 1:
                damaged(o, work, d)


def functions(o, work):
    """function libraries in Redis's AOF (its base's FUNCTION2 records or FUNCTION LOAD commands, the incr
    file's FUNCTION LOAD) load here; the candidate's own rewrite keeps them (preamble yes and no)"""
    for preamble in ("yes", "no"):
        d = os.path.join(work, "functions-" + preamble)
        os.mkdir(d)
        ref = Server(o.redis, name="aof-cross-fn", extra=["--dir", d, "--aof-use-rdb-preamble", preamble])
        ref.is_redis = False
        ref.extra += ["--appendonly", "yes", "--save", ""]
        ref.start()
        try:
            R = redis.Redis(port=ref.port)
            R.execute_command("FUNCTION", "LOAD", LIBS[0])
            R.set("fk", "v")
            R.bgrewriteaof()
            check(wait_rewrite(R), "redis BGREWRITEAOF ends")
            R.mset({"fk%d" % i: i for i in range(32)})  # every shard's, just before the FUNCTION LOAD replayed
            for i in range(32):
                R.set("fs%d" % i, i)
            R.execute_command("FUNCTION", "LOAD", LIBS[1])
            want = function_list(R)
        finally:
            eq(ref.stop(), 0, "redis exit status")
        c = copy(d, d + "-cand")
        s, failed = start_on(o.candidate, c, o.threads, ["--aof-use-rdb-preamble", preamble])
        check(s is not None, "preamble %s: the candidate starts on redis's AOF (%r)" % (preamble, failed))
        if not s:
            continue
        try:
            wait_loaded(s.port, "preamble %s" % preamble)
            P = redis.Redis(port=s.port)
            eq(function_list(P), want, "preamble %s: redis's libraries loaded from its AOF" % preamble)
            eq(P.execute_command("FCALL_RO", "a_ro", 1, "fk"), b"v", "preamble %s: FCALL" % preamble)
            P.bgrewriteaof()
            check(wait_rewrite(P), "candidate BGREWRITEAOF ends")
        finally:
            eq(s.stop(), 0, "candidate exit status")
        s, failed = start_on(o.candidate, c, o.threads, ["--aof-use-rdb-preamble", preamble])
        check(s is not None, "preamble %s: the candidate starts on its rewritten AOF (%r)" % (preamble, failed))
        if s:
            try:
                wait_loaded(s.port, "preamble %s, rewritten" % preamble)
                eq(function_list(redis.Redis(port=s.port)), want, "preamble %s: the libraries after the "
                   "candidate's rewrite" % preamble)
            finally:
                eq(s.stop(), 0, "candidate exit status")


def cut_last_incr(d, how):
    a = os.path.join(d, "appendonlydir")
    last = os.path.join(a, incr_files(d)[-1])
    data = open(last, "rb").read()
    if how == "cut":
        # inside the last command: drop its final bytes
        open(last, "wb").write(data[:-5])
    elif how == "multi":
        open(last, "ab").write(b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$6\r\nnever!\r\n$1\r\n1\r\n")
    elif how == "format":
        i = data.index(b"*", len(data) // 2)
        open(last, "wb").write(data[:i] + b"!" + data[i + 1:])
    return last


def damaged(o, work, d):
    for how, truncated in (("cut", "yes"), ("cut", "no"), ("multi", "yes"), ("multi", "no"), ("format", "yes")):
        what = "%s, aof-load-truncated %s" % (how, truncated)
        rd = copy(d, os.path.join(work, "r-%s-%s" % (how, truncated)))
        cd = copy(d, os.path.join(work, "c-%s-%s" % (how, truncated)))
        rlast, clast = cut_last_incr(rd, how), cut_last_incr(cd, how)
        extra = ["--aof-load-truncated", truncated]
        r, rfail = start_on(o.redis, rd, None, extra)
        c, cfail = start_on(o.candidate, cd, o.threads, extra)
        try:
            eq(c is not None, r is not None, "%s: the candidate starts as redis does (%r)" % (
                what, (cfail or rfail or (0, b""))[1][-300:]))
            if r and c:
                wait_loaded(r.port, what)
                wait_loaded(c.port, what)
                same(snapshot(c.port), snapshot(r.port), "%s: keys" % what)
                eq(os.path.getsize(clast), os.path.getsize(rlast), "%s: the file is cut where redis cuts it" % what)
            if cfail:
                check(cfail[0] not in (0, None), "%s: exit status %r" % (what, cfail[0]))
                want = b"Bad file format" if how == "format" else b"Unexpected end of file"
                check(want in cfail[1], "%s: the log says %r: %r" % (what, want, cfail[1][-300:]))
        finally:
            for s in (r, c):
                if s:
                    s.stop()
    # a manifest that names a file that is not there: both refuse
    for binary, name in ((o.redis, "redis"), (o.candidate, "candidate")):
        x = copy(d, os.path.join(work, "missing-%s" % name))
        os.unlink(os.path.join(x, "appendonlydir", incr_files(x)[-1]))
        s, failed = start_on(binary, x, o.threads if name == "candidate" else None)
        check(s is None, "missing incr file: %s refuses to start" % name)
        if s:
            s.stop()
        elif name == "candidate":
            check(b"Unable to obtain the AOF file" in failed[1], "missing file: the log says so: %r" % failed[1][-300:])


def stream_trims(o, work):
    """Redis's AOF records of XADD / XTRIM with `~` and LIMIT (written as `= <n> LIMIT <m>`) load here"""
    d = os.path.join(work, "streams")
    os.mkdir(d)
    ref = Server(o.redis, name="aof-cross-streams", extra=["--dir", d, "--auto-aof-rewrite-percentage", "0"])
    ref.is_redis = False
    ref.extra += ["--appendonly", "yes", "--save", ""]
    ref.start()
    try:
        cmds = [["XADD", "s%d" % (i % 3), "*", "f", str(i)] for i in range(900)]
        cmds += [["XADD", "s0", "MAXLEN", "~", "10", "LIMIT", "100", "*", "f", "x"],
                 ["XTRIM", "s1", "MAXLEN", "~", "5", "LIMIT", "100"],
                 ["XTRIM", "s2", "MINID", "~", "0", "LIMIT", "100"],
                 ["XADD", "s2", "MAXLEN", "~", "3", "*", "f", "y"]]
        apply(ref.port, cmds)
        want = snapshot(ref.port)
    finally:
        eq(ref.stop(), 0, "redis exit status")
    inc = open(os.path.join(d, "appendonlydir", incr_files(d)[0]), "rb").read()
    check(b"$5\r\nLIMIT\r\n" in inc and b"$1\r\n=\r\n" in inc, "Redis wrote `= <n> LIMIT <m>` records")
    got = loaded_state(o.candidate, copy(d, d + "-cand"), o.threads, "stream trims")
    if got is not None:
        same(got, want, "stream trims: the candidate's streams")


def old_style(o, work):
    """an appendonly.aof of before Redis 7 in dir (here: a RESP file of commands), no appendonlydir"""
    d = os.path.join(work, "old")
    os.mkdir(d)
    want = make(o, d, False, False, o.seed + 99)
    inc = os.path.join(d, "appendonlydir", incr_files(d)[0])
    single = os.path.join(work, "single")
    os.mkdir(single)
    shutil.copy(inc, os.path.join(single, "appendonly.aof"))
    got = loaded_state(o.candidate, single, o.threads, "old single file")
    if got is not None:
        same(got, want, "old single file: the candidate's keys")
    check(not os.path.exists(os.path.join(single, "appendonly.aof")), "old single file: moved")
    man = os.path.join(single, "appendonlydir", "appendonly.aof.manifest")
    check(os.path.exists(os.path.join(single, "appendonlydir", "appendonly.aof")), "old file in appendonlydir")
    check(os.path.exists(man) and open(man).read().startswith("file appendonly.aof seq 1 type b\n"),
          "old single file: a manifest naming it the base")


def main():
    return expect.main(globals(), "aof_cross", "loads,functions,stream_trims,old_style",
                       [("--seed", {"type": int, "default": 1}), ("--ops", {"type": int, "default": 3000})])

if __name__ == "__main__":
    sys.exit(main())
