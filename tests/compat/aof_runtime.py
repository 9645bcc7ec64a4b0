#!/usr/bin/python3
"""aof_runtime.py --candidate SERVER [--threads N] [--redis REDIS] [--only a,b] [--seed S] [--ops N]:
the AOF turned on and off at runtime, and a failing AOF write, against a real
redis-server (7.0) side by side (the same steps against each, the outcomes
compared step by step).

- toggle: started with appendonly no (appendfsync always); a seeded write
  workload (aof_write.workload); CONFIG SET appendonly yes (+OK, then writes
  while its rewrite may run); once INFO persistence shows the rewrite over
  (aof_rewrite_in_progress:0, aof_rewrites:1) and appenddirname holds just
  the manifest and the files it names: the dir and appenddirname listings and
  the manifest text are Redis's (appendonly.aof.1.base.rdb,
  appendonly.aof.1.incr.aof); CONFIG SET appendonly yes again changes
  nothing; more writes; CONFIG SET appendonly no (+OK, aof_enabled:0, the
  files left as they are), again, and an invalid value; writes while off; a
  copy of the directory then; CONFIG SET appendonly yes again (seq 2, the seq
  1 files removed); more writes; kill -9.  CONFIG GET appendonly and INFO
  persistence's aof_* fields after each step are Redis's.  redis-check-aof
  accepts the directory; redis-server loading it holds every key, value and
  TTL the server held before the kill (for Redis's own directory too), and
  the copy made while off holds what the server held when the AOF was turned
  off (neither a SET acknowledged right after the +OK of CONFIG SET
  appendonly no nor any write while off is in it); the candidate restarted
  with appendonly yes on its own directory holds the same
  (aof_write.reload_once).
- misconf: appendonly yes, appendfsync everysec; RLIMIT_FSIZE (prlimit on
  the running server, as save_points.py's disk) a little above the incr
  file's size, a value bigger than the room written: a short write, which
  Redis reports as ENOSPC ("No space left on device", its errno for a short
  write, the partial write truncated away); once INFO shows
  aof_last_write_status:err the replies of SET, PING, GET (an old key),
  DBSIZE, INCR and MULTI/SET/EXEC are Redis's (-MISCONF Errors writing to
  the AOF file: ... for writes and PING, EXECABORT; reads work).  The limit lifted:
  writes succeed again and aof_last_write_status:ok, as Redis; after a
  SIGTERM, redis-check-aof accepts the directory and redis-server loading it
  holds what the server held.
- misconf_at_limit: the same with the limit at the file's size: the write
  fails outright (EFBIG: "File too large").
- auto_off: appendonly no with auto-aof-rewrite-min-size 64kb and
  auto-aof-rewrite-percentage 10: writing far past the size starts no rewrite
  (aof_rewrites:0, no appenddirname); CONFIG SET appendonly yes then makes
  one, and only one.

Real redis-server dies of SIGXFSZ on a write past RLIMIT_FSIZE (its write loop
goes on after the short write), so both servers are started with SIGXFSZ
ignored (percore ignores it itself): the limit then stands in for a full disk.
Never a timing assertion: every wait polls with a generous deadline.  Standard
library and Debian's python3-redis.  Exit 0 when all agree, 1 otherwise, 77
when redis-server is missing."""
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "clients"))
from aof_write import check_aof, redis_snapshot, reload_once, snapshot, workload  # noqa: E402
import expect  # noqa: E402
from expect import check, eq  # noqa: E402
from save_points import both, poll, prlimit, raw_start, reply, start_in  # noqa: E402

import redis  # noqa: E402

AOFDIR = "appendonlydir"
MANIFEST = "appendonly.aof.manifest"
TIMEOUT = 60  # a reply that never comes is a failure (redis.TimeoutError), not a hung test
FIELDS = ("aof_enabled", "aof_rewrite_in_progress", "aof_rewrite_scheduled", "aof_rewrites",
          "aof_last_bgrewrite_status", "aof_last_write_status")


# ---------------------------------------------------------------- helpers

def files(d):
    """(the dir's listing, appenddirname's listing or None, the manifest's text or None)"""
    top = sorted(f for f in os.listdir(d) if f != "server.log")
    aof = os.path.join(d, AOFDIR)
    sub = sorted(os.listdir(aof)) if os.path.isdir(aof) else None
    try:
        with open(os.path.join(aof, MANIFEST)) as f:
            text = f.read()
    except OSError:
        text = None
    return top, sub, text


def named(text):
    """the files a manifest names"""
    return [line.split()[1] for line in text.splitlines() if line.startswith("file ")]


def settled(d):
    """appenddirname holds the manifest and the files it names, nothing else, no temp file in the dir"""
    top, sub, text = files(d)
    return (sub is not None and text is not None and sorted(named(text) + [MANIFEST]) == sub
            and not any(f.startswith("temp-") for f in top))


def persistence(r):
    info = r.info("persistence")
    return {f: info.get(f) for f in FIELDS}


def rewritten(r, d, n):
    """the rewrite that makes aof_rewrites n is over and its files are in place"""
    def over():
        p = persistence(r)
        return (p["aof_rewrite_in_progress"] == 0 and p["aof_rewrite_scheduled"] == 0 and p["aof_rewrites"] >= n
                and settled(d))
    return poll(over, 30)


def differ(want, got):
    """the keys whose value or TTL (to the second) differ between two aof_write.snapshot()s"""
    return [k for k in sorted(set(want) | set(got))
            if k not in want or k not in got or want[k][0] != got[k][0] or abs(want[k][1] - got[k][1]) > 1000]


def loads(o, who, what, d, want):
    """redis-check-aof accepts d; redis-server started on it holds want"""
    try:
        check_aof(d)
    except AssertionError as e:
        check(False, "%s: %s: %s" % (who, what, e))
    got = redis_snapshot(o.redis, d)
    bad = differ(want, got)
    extra = [k for k in bad if k not in want]
    missing = [k for k in bad if k not in got]
    check(not bad, "%s: %s: redis-server loading the directory: %d of %d keys differ from what the server held "
          "(%d there that it did not hold, %d it held missing, %d other values), e.g. %s"
          % (who, what, len(bad), len(want), len(extra), len(missing), len(bad) - len(extra) - len(missing),
             [(k, want.get(k), got.get(k)) for k in bad[:3]]))
    if not bad:
        print("  %s: %s: redis-server loads %d keys, as the server held" % (who, what, len(got)))
    return got


def compare(got, label):
    """the steps' outcomes (tuples led by the step's name), candidate against redis"""
    for a, b in zip(got["redis"], got["candidate"]):
        eq(b, a, "%s: %s" % (label, a[0]))
    eq(len(got["candidate"]), len(got["redis"]), "%s: steps" % label)


def is_redis(binary):
    """redis-server as the candidate (the test checked against itself): no --threads"""
    return "redis-server" in os.path.basename(binary)


def ignore_sigxfsz():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def incr_path(d):
    """the last incr file the manifest names"""
    text = files(d)[2] or ""
    incr = [line.split()[1] for line in text.splitlines() if line.startswith("file ") and line.endswith(" type i")]
    return os.path.join(d, AOFDIR, incr[-1]) if incr else None


def holds(path, needles):
    """the file holds every one of needles (the records of several shards reach it in any order: a write on
    one shard may follow a later one of another's in the file, as they touch different keys)"""
    try:
        with open(path, "rb") as f:
            text = f.read()
    except (OSError, TypeError):
        return False
    return all(n in text for n in needles)


# ---------------------------------------------------------------- scenarios

def toggle(o, work):
    got = {}
    for who, binary, threads in both(o):
        d, s = start_in(work, "toggle-" + who, binary, threads, "aofrt-toggle-" + who,
                        ["--appendonly", "no", "--appendfsync", "always"])
        copy = os.path.join(work, "toggle-off-copy-" + who)
        out = []
        r = redis.Redis(port=s.port, socket_timeout=TIMEOUT)

        def step(name):
            out.append((name, r.config_get("appendonly"), persistence(r), files(d)))

        def config_set(name, value):
            out.append((name, reply(r, "CONFIG", "SET", "appendonly", value), r.config_get("appendonly")))
        try:
            step("start (appendonly no)")
            workload(s.port, o.seed, o.ops)
            config_set("CONFIG SET appendonly yes", "yes")
            workload(s.port, o.seed + 1, 100)  # while the rewrite runs, or after it
            check(rewritten(r, d, 1), "%s: the rewrite of appendonly yes ends, its files in place" % who)
            step("on")
            try:
                check_aof(d)
            except AssertionError as e:
                check(False, "%s: after appendonly yes: %s" % (who, e))
            config_set("CONFIG SET appendonly yes (already yes)", "yes")
            step("on, set again")
            workload(s.port, o.seed + 2, o.ops // 3)
            want_off = snapshot(s.port)
            config_set("CONFIG SET appendonly no", "no")
            r.set("written:after:off", "1")  # acknowledged after the +OK: not in the files
            step("off")
            config_set("CONFIG SET appendonly no (already no)", "no")
            config_set("CONFIG SET appendonly maybe", "maybe")
            workload(s.port, o.seed + 3, o.ops // 3)
            step("off, written")
            shutil.copytree(d, copy)
            config_set("CONFIG SET appendonly yes (again)", "yes")
            workload(s.port, o.seed + 4, 100)
            check(rewritten(r, d, 2), "%s: the second appendonly yes's rewrite ends, its files in place" % who)
            step("on again")
            workload(s.port, o.seed + 5, o.ops // 3)
            step("on again, written")
            want = snapshot(s.port)
        finally:
            s.proc.kill()
            s.proc.wait()
            s.stop()
        print("  %s: %d keys held at the kill, %d when the AOF was turned off" % (who, len(want), len(want_off)))
        loads(o, who, "kill -9 after appendonly yes again", d, want)
        off = loads(o, who, "the copy made while appendonly no", copy, want_off)
        check((0, b"written:after:off") not in off,
              "%s: a SET acknowledged after CONFIG SET appendonly no's +OK is in the files" % who)
        if who == "candidate" and not is_redis(binary):
            try:
                reload_once(o, d, want)
            except AssertionError as e:
                check(False, "candidate: restarted on its own directory: %s" % e)
        got[who] = out
    for x in got["redis"]:
        print("  redis: %s: %s" % (x[0], x[1:]))
    compare(got, "toggle")


def misconf_run(o, work, label, room):
    if not shutil.which("prlimit"):
        print("SKIP %s: no prlimit" % label)
        return
    got = {}
    for who, binary, threads in both(o):
        d = os.path.join(work, "%s-%s" % (label, who))
        os.mkdir(d)
        p, port = raw_start(binary, None if is_redis(binary) else threads,
                            ["--save", "", "--appendonly", "yes", "--appendfsync", "everysec"], d,
                            preexec_fn=ignore_sigxfsz)
        out = []
        try:
            r = redis.Redis(port=port, socket_timeout=TIMEOUT)
            r.ping()
            r.set("old", "1")
            for i in range(20):  # the incr file ~200 kB: far more than the server's log, under the same limit
                r.set("fill:%d" % i, "x" * 10000)
            r.set("last", "written")
            path = incr_path(d)
            records = [b"$7\r\nwritten\r\n"] + [b"\r\nfill:%d\r\n" % i for i in range(20)]
            check(poll(lambda: holds(path, records)), "%s: the writes reached %s" % (who, path))
            size = os.path.getsize(path)
            prlimit(p.pid, size + room)
            out.append(("SET big (%d bytes, room %d)" % (1 << 16, room), reply(r, "SET", "big", "y" * (1 << 16))))
            check(poll(lambda: r.info("persistence")["aof_last_write_status"] == "err"),
                  "%s: aof_last_write_status:err" % who)
            out.append(("aof_last_write_status", r.info("persistence")["aof_last_write_status"]))
            for cmd in (("SET", "x", "1"), ("PING",), ("GET", "old"), ("DBSIZE",), ("INCR", "n")):
                out.append((cmd, reply(r, *cmd)))
            pipe = r.pipeline(transaction=False)
            for cmd in (("MULTI",), ("SET", "x", "1"), ("EXEC",)):
                pipe.execute_command(*cmd)
            out.append(("MULTI SET EXEC", [str(x) for x in pipe.execute(raise_on_error=False)]))
            out.append(("still err", r.info("persistence")["aof_last_write_status"]))
            prlimit(p.pid, "unlimited")
            check(poll(lambda: reply(r, "SET", "x", "2") is True), "%s: writes succeed once the limit is lifted" % who)
            check(poll(lambda: r.info("persistence")["aof_last_write_status"] == "ok"),
                  "%s: aof_last_write_status:ok once the limit is lifted" % who)
            out.append(("lifted", reply(r, "SET", "after", "1"), reply(r, "PING"),
                        r.info("persistence")["aof_last_write_status"]))
            want = snapshot(port)
            p.terminate()
            try:
                out.append(("SIGTERM: exit status", p.wait(30)))
            except subprocess.TimeoutExpired:
                out.append(("SIGTERM: exit status", "running"))
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        loads(o, who, label + ": after the limit was lifted, SIGTERM", d, want)
        got[who] = out
    for x in got["redis"]:
        print("  redis: %s: %s" % (x[0], x[1:]))
    compare(got, label)


def misconf(o, work):
    misconf_run(o, work, "misconf", 4096)


def misconf_at_limit(o, work):
    misconf_run(o, work, "misconf_at_limit", 0)


def auto_off(o, work):
    got = {}
    for who, binary, threads in both(o):
        d, s = start_in(work, "auto-off-" + who, binary, threads, "aofrt-auto-off-" + who,
                        ["--appendonly", "no", "--auto-aof-rewrite-min-size", "64kb",
                         "--auto-aof-rewrite-percentage", "10"])
        out = []
        try:
            r = redis.Redis(port=s.port, socket_timeout=TIMEOUT)
            out.append(("config", r.config_get("auto-aof-rewrite-min-size"),
                        r.config_get("auto-aof-rewrite-percentage"), r.config_get("appendonly")))
            for i in range(20):
                r.set("a:%d" % i, "x" * 50000)  # 1 MB, far past 64kb
            time.sleep(3)  # a rewrite, were there one, would have started (checked every 100 ms)
            out.append(("written, appendonly no", persistence(r), files(d)))
            out.append(("CONFIG SET appendonly yes", reply(r, "CONFIG", "SET", "appendonly", "yes")))
            check(rewritten(r, d, 1), "%s: the rewrite of appendonly yes ends" % who)
            time.sleep(2)  # nor a second one after it
            out.append(("on", persistence(r), files(d)))
        finally:
            eq(s.stop(), 0, "%s: exit status" % who)
        got[who] = out
    compare(got, "auto_off")


SCENARIOS = {"toggle": toggle, "misconf": misconf, "misconf_at_limit": misconf_at_limit, "auto_off": auto_off}


def main():
    return expect.main(SCENARIOS, "aof_runtime", ",".join(SCENARIOS),
                       [("--seed", {"type": int, "default": 11}), ("--ops", {"type": int, "default": 1500})])

if __name__ == "__main__":
    sys.exit(main())
