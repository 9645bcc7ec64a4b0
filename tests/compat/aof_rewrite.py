#!/usr/bin/python3
"""aof_rewrite.py --candidate SERVER [--threads N] [--redis REDIS] [--only a,b] [--seed S] [--ops N] [--keys N]:
BGREWRITEAOF and the automatic rewrite against a real redis-server (7.0),
side by side ("both": the same steps against each, the outcomes compared).

- replies (both): with appendonly yes, the replies of BGREWRITEAOF (started;
  inside MULTI: scheduled, run after EXEC), of a second one while the rewrite
  runs (already in progress), of BGSAVE (Redis's "Another child process is
  active (AOF?)" error) and BGSAVE SCHEDULE (scheduled, run once the rewrite
  is over) while it runs, and of BGREWRITEAOF while a BGSAVE runs (scheduled,
  and it then happens); INFO persistence's aof_rewrite_in_progress,
  aof_rewrite_scheduled, aof_last_bgrewrite_status, aof_rewrites (counted
  at the start) at each step.  Each step is one pipeline; its replies are
  compared only when both servers were caught in the state it needs (a
  dataset of --keys 100-byte values, doubled until they are), never on timing.
- files (both): a seeded write workload (aof_write.workload), BGREWRITEAOF,
  more writes, BGREWRITEAOF: after each, the dir and appenddirname listings
  and the manifest text are Redis's (appendonly.aof.2.base.rdb,
  appendonly.aof.2.incr.aof, then seq 3; the history files removed);
  redis-check-aof accepts the directory; after kill -9, redis-server and the
  candidate loading it hold every key, value and TTL it held.
- during (both): clients INCR their own counters, MSET 8 keys over several
  hash slots to one value, and MULTI INCR two keys, with appendfsync always,
  while a rewrite runs and after it; kill -9 a little after it ended;
  redis-server and the candidate loading the directory have every counter at
  least at its last acknowledged value, every MSET whole, every transaction
  whole.
- kill9 (candidate): kill -9 while a rewrite runs (writes acknowledged with
  appendfsync always after it started); the directory (a temp-rewriteaof-*
  file may be left over) loads in redis-server with every key the candidate
  held, and in the candidate again.
- auto (both): --auto-aof-rewrite-min-size 1mb --auto-aof-rewrite-percentage
  100: CONFIG GET and CONFIG SET of both as Redis; no rewrite below the
  size; past it, a rewrite starts by itself (aof_rewrites, the log line
  "Starting automatic rewriting of AOF on ... growth") and leaves Redis's files.
- off (both): appendonly no: BGREWRITEAOF writes appenddirname with a base
  and a manifest naming only it (seq 1, then 2, no incr file), as Redis 7.0
  does; redis-server with appendonly yes loads the keys from it.

Standard library and Debian's python3-redis.  Exit 0 when all agree, 1
otherwise, 77 when redis-server is missing."""
import os
import random
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "clients"))
from aof_cross import wait_loaded  # noqa: E402
from aof_write import check_aof, snapshot, workload  # noqa: E402
from diff import Server  # noqa: E402
import expect  # noqa: E402
from expect import check, eq  # noqa: E402
from save_points import both, poll  # noqa: E402

import redis  # noqa: E402

try:
    from redis.client import parse_info  # redis-py 4
except ImportError:  # redis-py 5
    from redis._parsers.helpers import parse_info

FIELDS = ("aof_enabled", "aof_rewrite_in_progress", "aof_rewrite_scheduled", "aof_last_bgrewrite_status",
          "aof_rewrites", "rdb_bgsave_in_progress")
STARTED = "Background append only file rewriting started"
IN_PROGRESS = "ERR: Background append only file rewriting already in progress"
SCHEDULED = "Background append only file rewriting scheduled"
LIVE = []  # the servers a scenario started: killed at its end whatever happened
TIMEOUT = 60  # a client's wait for a reply: a server that hangs fails the scenario


# ---------------------------------------------------------------- servers, replies, files

def up(binary, threads, d, appendonly="yes", extra=(), name="aofrw"):
    """binary on dir d (--save "" and no --threads for redis-server: diff.Server)"""
    os.makedirs(d, exist_ok=True)
    s = Server(binary, threads=threads, name=name, extra=["--dir", d, "--appendonly", appendonly] + list(extra))
    LIVE.append(s)
    s.start()
    s.r = redis.Redis(port=s.port, socket_timeout=TIMEOUT)
    return s


def kill9(s):
    s.proc.kill()
    s.proc.wait()
    s.stop()


def loaded(binary, threads, d, what):
    """binary started on d with appendonly yes, its load over"""
    s = up(binary, threads, d, name="aofrw-load")
    wait_loaded(s.port, what)
    return s


def no_auto(s):
    """no automatic rewrite in the way (a server without the key has none)"""
    try:
        s.r.config_set("auto-aof-rewrite-percentage", 0)
    except redis.ResponseError:
        pass


def norm(x):
    if isinstance(x, redis.ResponseError):
        return "ERR: " + str(x)
    if isinstance(x, bytes):
        return x.decode("latin-1")
    if isinstance(x, list):
        return [norm(y) for y in x]
    return x


def pipe(s, *cmds, transaction=False):
    """the replies as sent (no redis-py callbacks), errors as 'ERR: text', INFO parsed"""
    r = redis.Redis(port=s.port, socket_timeout=TIMEOUT)
    r.response_callbacks.clear()
    p = r.pipeline(transaction=transaction)
    for c in cmds:
        p.execute_command(*c)
    try:
        out = [norm(x) for x in p.execute(raise_on_error=False)]
    except redis.ResponseError as e:  # EXEC's own error
        out = [norm(e)]
    finally:
        r.close()
    return [fields(parse_info(x)) if c[0] == "INFO" and isinstance(x, str) else x for c, x in zip(cmds, out)]


def fields(info):
    return {f: info.get(f) for f in FIELDS}


def info(s):
    return s.r.info("persistence")


def quiet(s, saves=0):
    """no rewrite running or scheduled, no BGSAVE running, rdb_saves at least saves"""
    i = info(s)
    return (i.get("aof_rewrite_in_progress", 0) == 0 and i.get("aof_rewrite_scheduled", 0) == 0
            and i.get("rdb_bgsave_in_progress", 0) == 0 and i.get("rdb_saves", 0) >= saves)


def rewrites(s):
    return info(s).get("aof_rewrites", 0)


def manifest_names(d):
    try:
        with open(os.path.join(d, "appendonlydir", "appendonly.aof.manifest")) as f:
            return {line.split()[1] for line in f if line.startswith("file ")}
    except OSError:
        return None


def settled(d):
    """appenddirname holds exactly the manifest and the files it names (history files removed)"""
    names = manifest_names(d)
    return names is not None and set(os.listdir(os.path.join(d, "appendonlydir"))) == names | {
        "appendonly.aof.manifest"}


def listing(d):
    """(dir's names, appenddirname's names, the manifest's text)"""
    a = os.path.join(d, "appendonlydir")
    man = os.path.join(a, "appendonly.aof.manifest")
    return (sorted(os.listdir(d)), sorted(os.listdir(a)) if os.path.isdir(a) else None,
            open(man).read() if os.path.exists(man) else None)


def rewritten(s, d, n, seconds=120):
    """the n-th rewrite over, nothing else running, the history files gone"""
    ok = poll(lambda: rewrites(s) >= n and quiet(s), seconds)
    return ok and poll(lambda: settled(d), 10)


def same(want, got, what):
    """snapshots (aof_write.snapshot) equal, expire times to the second"""
    bad = [k for k in sorted(set(want) | set(got)) if want.get(k) is None or got.get(k) is None
           or want[k][0] != got[k][0] or abs(want[k][1] - got[k][1]) > 1000]
    for k in bad[:5]:
        print("  %s: %r: held %r, loaded %r" % (what, k, want.get(k), got.get(k)))
    check(not bad, "%s: %d of %d keys differ" % (what, len(bad), len(want)))


RNG = random.Random(1)
POOL = [(b"%x" % RNG.getrandbits(360)).rjust(90, b"0") for _ in range(97)]  # LZF does not shrink them


def value(j):
    return b"%010d" % j + POOL[j % 97]


def fill(port, lo, hi, db=0):
    """big:lo .. big:hi-1 = value(j) (100 bytes)"""
    p = redis.Redis(port=port, db=db, socket_timeout=TIMEOUT).pipeline(transaction=False)
    for i in range(lo, hi, 1000):
        p.mset({b"big:%d" % j: value(j) for j in range(i, min(hi, i + 1000))})
        if i % 20000 == 0:
            p.execute()
    p.execute()


def bad_big(port, n, db=0):
    """how many of big:0 .. big:n-1 do not hold value(j)"""
    r = redis.Redis(port=port, db=db, socket_timeout=TIMEOUT)
    bad = 0
    for i in range(0, n, 10000):
        js = range(i, min(n, i + 10000))
        bad += sum(1 for j, v in zip(js, r.mget([b"big:%d" % j for j in js])) if v != value(j))
    return bad


# ---------------------------------------------------------------- scenarios

def replies(o, work):
    srv = {who: up(binary, threads, os.path.join(work, "replies-" + who), name="aofrw-replies-" + who)
           for who, binary, threads in both(o)}
    got = {who: [] for who in srv}
    saves = {who: 0 for who in srv}
    for who, s in srv.items():
        no_auto(s)
        got[who].append(("start", fields(info(s))))
        got[who].append(("MULTI BGREWRITEAOF EXEC", pipe(s, ("BGREWRITEAOF",), transaction=True)))
        check(poll(lambda: rewrites(s) >= 1 and quiet(s)), "%s: the rewrite scheduled by EXEC ran" % who)
        got[who].append(("after EXEC", fields(info(s))))

    filled = [0]

    def rounds(step, cmds, caught, after):
        """cmds against both, the dataset doubled until both were caught (caught(replies)); then compared"""
        n, size = filled[0], max(o.keys, filled[0])
        for attempt in range(3):
            for s in srv.values():
                fill(s.port, n, size)
            filled[0] = n = size
            outs = {}
            for who, s in srv.items():
                outs[who] = pipe(s, *cmds)
                saves[who] += sum(1 for x in outs[who] if x in ("Background saving started",
                                                                "Background saving scheduled"))
            for who, s in srv.items():
                check(poll(lambda: quiet(s, saves[who]), 120), "%s: %s: the rewrite and saves end" % (who, step))
            if all(caught(x) for x in outs.values()):
                print("%s: both caught with %d keys" % (step, size))
                for who, x in outs.items():
                    got[who].append((step, x))
                    got[who].append((step + ": after", fields(info(srv[who]))))
                after()
                return
            print("%s: %d keys: not caught (%s), doubling" % (step, size, {w: x[:2] for w, x in outs.items()}))
            size *= 2
        check(False, "%s: never caught both in the state needed (%d keys)" % (step, n))

    # while a rewrite runs: BGREWRITEAOF again, BGSAVE, BGSAVE SCHEDULE; the last INFO still sees it running
    rounds("during a rewrite",
           [("BGREWRITEAOF",), ("BGREWRITEAOF",), ("INFO", "persistence"), ("BGSAVE",), ("BGSAVE", "SCHEDULE"),
            ("INFO", "persistence")],
           lambda x: x[1] == IN_PROGRESS and isinstance(x[5], dict) and x[5]["aof_rewrite_in_progress"] == 1,
           lambda: None)
    # while a BGSAVE runs: BGREWRITEAOF (twice) scheduled, and the rewrite then happens
    before = {who: rewrites(s) for who, s in srv.items()}
    rounds("during a BGSAVE",
           [("BGSAVE",), ("BGREWRITEAOF",), ("BGREWRITEAOF",), ("INFO", "persistence")],
           lambda x: x[0] == "Background saving started" and isinstance(x[3], dict)
           and x[3]["rdb_bgsave_in_progress"] == 1,
           lambda: [check(rewrites(s) > before[who], "%s: the rewrite scheduled during BGSAVE ran" % who)
                    for who, s in srv.items()])
    for who, s in srv.items():
        got[who].append(("end", fields(info(s))))
    for a, b in zip(got["redis"], got["candidate"]):
        eq(b, a, "replies: %s" % a[0])
    eq(len(got["candidate"]), len(got["redis"]), "replies: steps")
    eq(dict(got["redis"]).get("during a rewrite", [None, None])[:2], [STARTED, IN_PROGRESS], "redis: the replies")
    for who, s in srv.items():
        eq(s.stop(), 0, "%s: exit status" % who)
        # the rewrites' cuts left no transaction open in the writer (it took a cut for one once)
        check("were not over at shutdown" not in s.tail(1 << 20), "%s: the log says a transaction was not over" % who)


def files(o, work):
    rec = {}
    for who, binary, threads in both(o):
        d = os.path.join(work, "files-" + who)
        s = up(binary, threads, d, extra=["--appendfsync", "always"], name="aofrw-files-" + who)
        out = rec[who] = [("start", listing(d))]
        workload(s.port, o.seed, o.ops)
        for n in (1, 2):
            out.append(("BGREWRITEAOF %d" % n, pipe(s, ("BGREWRITEAOF",))))
            eq(out[-1][1], [STARTED], "%s: BGREWRITEAOF %d" % (who, n))
            check(out[-1][1] == [STARTED] and rewritten(s, d, n),
                  "%s: rewrite %d over, the history files removed" % (who, n))
            out.append(("after rewrite %d" % n, listing(d), fields(info(s))))
            if n == 1:
                workload(s.port, o.seed + 1, o.ops // 2)
        want = snapshot(s.port)
        try:
            check_aof(d)
        except AssertionError as e:
            check(False, "%s: %s" % (who, e))
        kill9(s)
        for lwho, lbinary, lthreads in both(o):
            ls = loaded(lbinary, lthreads, d, "%s's files in %s" % (who, lwho))
            same(want, snapshot(ls.port), "%s's files loaded by %s" % (who, lwho))
            eq(ls.stop(), 0, "%s: exit status" % lwho)
        out.append(("after the loads", listing(d)))
        print("files: %s: %d keys" % (who, len(want)))
    for a, b in zip(rec["redis"], rec["candidate"]):
        eq(b, a, "files: %s" % a[0])
    eq(len(rec["candidate"]), len(rec["redis"]), "files: steps")
    eq(rec["redis"][2][1][1], ["appendonly.aof.2.base.rdb", "appendonly.aof.2.incr.aof", "appendonly.aof.manifest"],
       "redis: the files after a rewrite")


class Writers:
    """clients writing until the server goes away: INCR of their own counter, MSET of 8 keys (several hash
    slots) to one value, MULTI INCR a INCR b; what each was last acknowledged"""

    def __init__(self, port):
        self.port = port
        self.stop = threading.Event()
        self.incr, self.mset, self.tx = {}, {}, {}
        self.acks = 0
        self.threads = [threading.Thread(target=f, args=(i,)) for f in (self.incr_loop, self.mset_loop, self.tx_loop)
                        for i in range(2)]
        for t in self.threads:
            t.start()

    def loop(self, step):
        r = redis.Redis(port=self.port, socket_timeout=TIMEOUT)
        n = 0
        while not self.stop.is_set():
            n += 1
            try:
                step(r, n)
                self.acks += 1
            except (redis.ConnectionError, redis.TimeoutError, OSError):
                return

    def incr_loop(self, i):
        key = "ctr:%d" % i
        self.loop(lambda r, n: self.incr.__setitem__(key, r.incr(key)))

    def mset_loop(self, i):
        keys = ["grp%d:%d" % (i, j) for j in range(8)]

        def step(r, n):
            r.mset({k: n for k in keys})
            self.mset[i] = (keys, n)
        self.loop(step)

    def tx_loop(self, i):
        keys = ("txa:%d" % i, "txb:%d" % i)

        def step(r, n):
            p = r.pipeline(transaction=True)
            p.incr(keys[0])
            p.incr(keys[1])
            self.tx[keys] = p.execute()[0]
        self.loop(step)

    def wait_acks(self, n, seconds=60):
        return poll(lambda: self.acks >= n, seconds)

    def end(self):
        self.stop.set()
        for t in self.threads:
            t.join()

    def problems(self, port):
        r = redis.Redis(port=port, socket_timeout=TIMEOUT)
        out = []
        for key, v in self.incr.items():
            if int(r.get(key) or 0) < v:
                out.append("%s: acknowledged %d, loaded %s" % (key, v, r.get(key)))
        for keys, n in self.mset.values():
            vals = r.mget(keys)
            if len(set(vals)) != 1 or int(vals[0] or 0) < n:
                out.append("MSET %d: loaded %s" % (n, vals))
        for keys, n in self.tx.items():
            vals = r.mget(keys)
            if vals[0] != vals[1] or int(vals[0] or 0) < n:
                out.append("MULTI INCR %s (acknowledged %d): loaded %s" % (keys, n, vals))
        return out


def during(o, work):
    for who, binary, threads in both(o):
        d = os.path.join(work, "during-" + who)
        s = up(binary, threads, d, extra=["--appendfsync", "always"], name="aofrw-during-" + who)
        no_auto(s)
        fill(s.port, 0, o.keys // 3)
        w = Writers(s.port)
        try:
            check(w.wait_acks(100), "%s: writes before the rewrite" % who)
            a0 = w.acks
            rep = pipe(s, ("BGREWRITEAOF",))
            eq(rep, [STARTED], "%s: BGREWRITEAOF under writes" % who)
            check(rep == [STARTED] and rewritten(s, d, 1), "%s: the rewrite ends under writes" % who)
            a1 = w.acks
            check(w.wait_acks(a1 + 100), "%s: writes after the rewrite" % who)
        finally:
            kill9(s)
            w.end()
        print("during: %s: %d writes acknowledged while the rewrite ran, %d in all" % (who, a1 - a0, w.acks))
        for lwho, lbinary, lthreads in both(o):
            ls = loaded(lbinary, lthreads, d, "%s's files in %s" % (who, lwho))
            bad = w.problems(ls.port)
            check(not bad, "%s's files loaded by %s: %s" % (who, lwho, bad[:5]))
            eq(ls.stop(), 0, "%s: exit status" % lwho)


def kill9_scenario(o, work):
    d = os.path.join(work, "kill9")
    s = up(o.candidate, o.threads, d, extra=["--appendfsync", "always"], name="aofrw-kill9")
    no_auto(s)
    workload(s.port, o.seed, o.ops // 2)
    want = snapshot(s.port)
    r9 = redis.Redis(port=s.port, db=9, socket_timeout=TIMEOUT)
    late = {}
    n, size, caught = 0, o.keys, False
    for attempt in range(3):
        fill(s.port, n, size, db=9)
        n = size
        rep = pipe(s, ("BGREWRITEAOF",))
        eq(rep, [STARTED], "BGREWRITEAOF with %d keys" % n)
        if rep != [STARTED]:
            break
        for i in range(20):  # written while it runs (when caught): in the new incr file
            k, v = b"late:%d:%d" % (attempt, i), b"%d" % random.randrange(1 << 30)
            r9.set(k, v)
            late[k] = v
        if info(s).get("aof_rewrite_in_progress") == 1:
            kill9(s)
            caught = True
            break
        check(rewritten(s, d, attempt + 1), "the rewrite with %d keys ends" % n)
        size *= 2
    check(caught, "kill -9 while the rewrite ran (%d keys)" % n)
    if not caught:
        kill9(s)
    lst = listing(d)
    print("kill9: %d keys; after kill -9: dir %s, appenddirname %s, manifest:\n%s" % (n, lst[0], lst[1], lst[2]))
    for lwho, lbinary, lthreads in both(o):
        ls = loaded(lbinary, lthreads, d, "the files in %s" % lwho)
        same(want, snapshot(ls.port), "kill -9 mid-rewrite, loaded by %s" % lwho)
        r = redis.Redis(port=ls.port, db=9)
        eq(r.dbsize(), n + len(late), "kill -9 mid-rewrite, loaded by %s: db 9 keys" % lwho)
        eq(bad_big(ls.port, n, 9), 0, "kill -9 mid-rewrite, loaded by %s: big values differing" % lwho)
        eq({k: v for k, v in zip(late, r.mget(list(late)))}, late,
           "kill -9 mid-rewrite, loaded by %s: the writes acknowledged during the rewrite" % lwho)
        eq(ls.stop(), 0, "%s: exit status" % lwho)


AUTO_SETS = [("auto-aof-rewrite-min-size", v) for v in ("2mb", "1gb", "100", "0", "1.5mb", "-1", "abc", "64MB",
                                                         "1k", "1mb")] + \
            [("auto-aof-rewrite-percentage", v) for v in ("0", "200", "-1", "abc", "100")]
AUTO_LINE = "Starting automatic rewriting of AOF on"


def auto(o, work):
    rec = {}
    for who, binary, threads in both(o):
        d = os.path.join(work, "auto-" + who)
        s = up(binary, threads, d, extra=["--auto-aof-rewrite-min-size", "1mb", "--auto-aof-rewrite-percentage",
                                          "100"], name="aofrw-auto-" + who)
        out = rec[who] = []
        get = ("CONFIG", "GET", "auto-aof-rewrite-*")
        out.append(("CONFIG GET", sorted(map(str, pipe(s, get)[0]))))
        for k, v in AUTO_SETS:
            out.append(("CONFIG SET %s %s" % (k, v), pipe(s, ("CONFIG", "SET", k, v))[0],
                        pipe(s, ("CONFIG", "GET", k))[0]))
        rng = random.Random(o.seed)
        r = s.r
        for i in range(300):  # ~300 KB: under 1mb
            r.set("auto:%d" % i, b"%x" % rng.getrandbits(4000))
        time.sleep(1.5)  # serverCron looks every 100 ms
        out.append(("under the size", rewrites(s)))
        for i in range(300, 1500):  # ~1.5 MB
            r.set("auto:%d" % i, b"%x" % rng.getrandbits(4000))
        ok = poll(lambda: rewrites(s) >= 1 and AUTO_LINE in s.tail(1 << 20), 60)
        check(ok, "%s: an automatic rewrite (aof_rewrites %s, log line %s)" % (
            who, rewrites(s), AUTO_LINE in s.tail(1 << 20)))
        out.append(("past the size", ok))
        check(poll(lambda: quiet(s), 60) and poll(lambda: settled(d), 10), "%s: the rewrite ends" % who)
        out.append(("files", listing(d)))
        eq(s.stop(), 0, "%s: exit status" % who)
    for a, b in zip(rec["redis"], rec["candidate"]):
        eq(b, a, "auto: %s" % a[0])
    eq(len(rec["candidate"]), len(rec["redis"]), "auto: steps")


def off(o, work):
    rec = {}
    for who, binary, threads in both(o):
        d = os.path.join(work, "off-" + who)
        s = up(binary, threads, d, appendonly="no", name="aofrw-off-" + who)
        r = s.r
        r.set("off:a", "1")
        r.set("off:t", "2", ex=1000)
        r.rpush("off:l", "x", "y")
        out = rec[who] = [("start", listing(d), fields(info(s)))]
        for n in (1, 2):
            out.append(("BGREWRITEAOF %d" % n, pipe(s, ("BGREWRITEAOF",))))
            check(out[-1][1] == [STARTED] and rewritten(s, d, n, 30),
                  "%s: rewrite %d with appendonly no ends" % (who, n))
            out.append(("after rewrite %d" % n, listing(d), fields(info(s))))
        eq(s.stop(), 0, "%s: exit status" % who)
        ls = loaded(o.redis, None, d, "%s's appendonly no files in redis" % who)
        got = redis.Redis(port=ls.port)
        eq((got.get("off:a"), got.lrange("off:l", 0, -1), got.ttl("off:t") > 900), (b"1", [b"x", b"y"], True),
           "%s's base (appendonly no) loaded by redis-server" % who)
        ls.stop()
    for a, b in zip(rec["redis"], rec["candidate"]):
        eq(b, a, "off: %s" % a[0])
    eq(len(rec["candidate"]), len(rec["redis"]), "off: steps")


def guarded(fn):
    """fn(o, work) (its exception a failure, expect.scenarios's), then the log of the candidates it started
    when it failed, and every server it started killed"""
    def run(o, work):
        before = expect.failed
        try:
            fn(o, work)
        finally:
            if expect.failed != before or sys.exc_info()[0]:
                for s in LIVE:
                    if s.binary == o.candidate:
                        print("--- %s (pid %d, %s) log tail:\n%s" % (s.name, s.proc.pid, s.log, s.tail(1500)))
            for s in LIVE:
                if s.alive():
                    s.proc.kill()
                    s.proc.wait()
                try:
                    s.stop()
                except (OSError, ValueError):
                    pass
            LIVE.clear()
    return run


SCENARIOS = {"replies": replies, "files": files, "during": during, "kill9": kill9_scenario, "auto": auto,
             "off": off}


def main():
    return expect.main({k: guarded(f) for k, f in SCENARIOS.items()}, "aof_rewrite", ",".join(SCENARIOS),
                       [("--seed", {"type": int, "default": 7}),
                        ("--ops", {"type": int, "default": 1500, "help": "the seeded workload's writes"}),
                        ("--keys", {"type": int, "default": 300000,
                                    "help": "the dataset that keeps a rewrite running"})])

if __name__ == "__main__":
    sys.exit(main())
