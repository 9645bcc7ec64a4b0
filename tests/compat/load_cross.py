#!/usr/bin/python3
"""load_cross.py --candidate SERVER [--threads N] [--redis REDIS] [--keys N]:
the dataset loaded at start, against a real redis-server (7.0) loading the
same files.

- A big RDB file (N keys of DEBUG POPULATE, and every kind of value of
  dump_cross.py in three databases, some with TTLs), made and SAVEd by Redis.
  Both servers are started on it and, while they load, answer the same
  commands with the same bytes (PING, SELECT, CONFIG GET, CLIENT SETNAME,
  MULTI/EXEC: allowed; GET, SET, DBSIZE, KEYS, SCAN, a queued GET: -LOADING,
  EXECABORT; an unknown command or subcommand, a wrong arity: their own
  errors first); INFO persistence has the same fields in the same order
  (loading:1 and the loading_* lines; the file's size and used-mem); redis-py
  raises BusyLoadingError; ioredis (when tests/compat/node has it) waits in
  its ready check and then sees every key.  Once loaded (loading:0, Redis's
  "Done loading RDB" / "DB loaded from disk" log lines): the same DBSIZE, and
  the values and TTLs of the typed keys and a sample of the others.
- Broken files (cut at several places, a flipped byte, a bad checksum, a
  wrong signature, empty): like Redis, the candidate does not start (exit
  status non-zero), its log says what and at which offset, and the file is
  left as it was.

Standard library and Debian's python3-redis.  Exit 0 when all agree, 1
otherwise, 77 when redis-server is missing."""
import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "clients"))
from diff import Conn, Server, free_port  # noqa: E402
from dump_cross import values, contents  # noqa: E402
from rdb_cross import DBS, fill  # noqa: E402
import expect  # noqa: E402
from expect import check, eq  # noqa: E402

import redis  # noqa: E402

# what both servers are asked while they load: (argv..., ) in order, on one connection
DURING = [
    ("PING",),
    ("ECHO", "hi"),
    ("SELECT", "3"),
    ("SELECT", "0"),
    ("GET", "key:1"),
    ("SET", "x", "y"),
    ("DBSIZE",),
    ("KEYS", "nomatch*"),
    ("SCAN", "0"),
    ("EXISTS", "key:1"),
    ("FLUSHALL",),
    ("GET",),
    ("NOSUCHCOMMAND", "a"),
    ("CONFIG", "GET", "appendonly"),
    ("CONFIG", "NOSUCH"),
    ("CLIENT", "SETNAME", "loader"),
    ("CLIENT", "GETNAME"),
    ("PUBLISH", "ch", "m"),
    ("WATCH", "key:1"),
    ("UNWATCH",),
    ("MULTI",),
    ("GET", "key:1"),
    ("EXEC",),
    ("MULTI",),
    ("PING",),
    ("EXEC",),
    ("OBJECT", "ENCODING", "key:1"),
    ("TYPE", "key:1"),
    ("TTL", "key:1"),
    ("SLOWLOG", "GET", "0"),
    ("PING",),
]


def resp(args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def info_fields(port):
    """[(field, value)] of INFO persistence, in order, on a raw connection"""
    c = Conn(port)
    c.send(resp(("INFO", "persistence")))
    r = c.read(10)
    c.sock.close()
    body = r.split(b"\r\n", 1)[1].decode()
    return [tuple(line.split(":", 1)) for line in body.split("\r\n") if ":" in line]


class LoadingServer(Server):
    """a Server whose start waits for any INFO reply, not +PONG: PING is refused while loading"""

    def start(self):
        self.port = free_port()
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1"] + self.extra
        if self.is_redis:
            args += ["--save", "", "--appendonly", "no"]
        elif self.threads:
            args += ["--threads", str(self.threads)]
        self.log = os.path.join(self.logdir, "%s-%d.log" % (self.name, self.port))
        self.logf = open(self.log, "wb")
        self.proc = subprocess.Popen(args, stdout=self.logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                info_fields(self.port)
                return
            except (OSError, AttributeError, IndexError):
                time.sleep(0.005)
        raise RuntimeError("%s did not answer INFO in 20 s (log %s)" % (self.name, self.log))


def loading(port):
    return dict(info_fields(port)).get("loading") == "1"


def wait_loaded(port, what, deadline_s=300):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            if not loading(port):
                return True
        except OSError:
            pass
        time.sleep(0.05)
    check(False, "%s: still loading after %d s" % (what, deadline_s))
    return False


def make_big(o, d):
    """dump.rdb in d made by Redis: o.keys DEBUG POPULATE keys and fill()'s; returns the typed keys"""
    ref = Server(o.redis, name="load-cross-make", extra=["--dir", d, "--enable-debug-command", "yes"])
    ref.start()
    try:
        R = redis.Redis(port=ref.port)
        fill(R)
        R.execute_command("DEBUG", "POPULATE", o.keys, "key", 24)
        eq(R.save(), True, "redis SAVE")
    finally:
        ref.stop()
    typed = [(db, k) for db in DBS for k in [v[0] for v in values()] + ["big:%d" % db]]
    return typed


def during(port):
    """the replies to DURING while loading (raw bytes), and whether it was loading before and after"""
    before = loading(port)
    c = Conn(port)
    got = []
    for args in DURING:
        c.send(resp(args))
        got.append(c.read(10))
    c.sock.close()
    return before, got, loading(port)


def sample(port, keys):
    out = {}
    for db, key in keys:
        r = redis.Redis(port=port, db=db)
        ttl = r.execute_command("PEXPIRETIME", key)
        out[(db, key)] = contents(r, key) + (ttl,)
        r.close()
    return out


def node_ready(port):
    """starts ioredis_ready.js against port (None when node or its modules are missing)"""
    script = os.path.join(HERE, "clients", "ioredis_ready.js")
    if not shutil.which("node") or not os.path.isdir(os.path.join(HERE, "node", "node_modules", "ioredis")):
        print("note: ioredis not installed (tests/compat/clients/npm_ci.sh): its ready check is not tried")
        return None
    return subprocess.Popen(["node", script, str(port), "key:1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def note(what, t0=time.monotonic()):
    print("  %6.1f s  %s" % (time.monotonic() - t0, what), flush=True)


def big(o, work):
    d = os.path.join(work, "big")
    os.mkdir(d)
    typed = make_big(o, d)
    note("the file is made")
    path = os.path.join(d, "dump.rdb")
    size = os.path.getsize(path)
    rng = random.Random(7)
    keys = typed + [(0, "key:%d" % rng.randrange(o.keys)) for _ in range(2000)]

    # Redis loads faster than the checks take: its hidden key-load-delay (a 1 us sleep every 20 keys) and
    # events processed every 1 KB of the file keep it loading through them
    ref = LoadingServer(o.redis, name="load-cross-redis", extra=["--dir", d, "--key-load-delay", "-20",
                                                               "--loading-process-events-interval-bytes", "1024"])
    ref.start()
    note("redis started")
    try:
        ref_before, ref_during, ref_after = during(ref.port)
        ref_info = info_fields(ref.port)
        check(ref_before and ref_after and dict(ref_info).get("loading") == "1",
              "redis was loading through the checks (make the file bigger: --keys)")
        wait_loaded(ref.port, "redis")
        want_size = redis.Redis(port=ref.port).dbsize()
        want = sample(ref.port, keys)
    finally:
        ref.stop()

    cand = LoadingServer(o.candidate, threads=o.threads, name="load-cross", extra=["--dir", d])
    cand.start()
    note("candidate started")
    node = node_ready(cand.port)
    try:
        try:
            redis.Redis(port=cand.port).get("key:1")
            check(False, "redis-py: no BusyLoadingError while loading")
        except redis.exceptions.BusyLoadingError as e:
            eq(str(e), "Redis is loading the dataset in memory", "redis-py BusyLoadingError")
        before, got, after = during(cand.port)
        info = info_fields(cand.port)
        check(before and after and dict(info).get("loading") == "1",
              "the candidate was loading through the checks (make the file bigger: --keys)")
        for args, r, g in zip(DURING, ref_during, got):
            eq(g, r, "while loading: %s" % " ".join(args))
        eq([f for f, _ in info], [f for f, _ in ref_info], "INFO persistence fields while loading")
        iv, rv = dict(info), dict(ref_info)
        for f in ("loading", "async_loading", "loading_total_bytes", "loading_rdb_used_mem"):
            eq(iv.get(f), rv.get(f), "INFO %s while loading" % f)
        eq(iv.get("loading_total_bytes"), str(size), "loading_total_bytes is the file's size")
        check(abs(int(iv.get("loading_start_time", 0)) - time.time()) < 600, "loading_start_time is now")
        check(0 <= float(iv.get("loading_loaded_perc", -1)) <= 100, "loading_loaded_perc")
        check(int(iv.get("loading_loaded_bytes", -1)) <= size, "loading_loaded_bytes")
        note("candidate checked while loading")
        wait_loaded(cand.port, "candidate")
        note("candidate loaded")
        P = redis.Redis(port=cand.port)
        eq(P.dbsize(), want_size, "DBSIZE once loaded")
        got_keys = sample(cand.port, keys)
        bad = [k for k in keys if got_keys.get(k) != want.get(k)]
        check(not bad, "%d of %d sampled keys differ from Redis's, e.g. %r" % (len(bad), len(keys), bad[:3]))
        pinfo = P.info("persistence")
        eq(pinfo["loading"], 0, "INFO loading:0 once loaded")
        check("loading_start_time" not in pinfo, "no loading_* lines once loaded")
        total = sum(v["keys"] for k, v in P.info("keyspace").items())
        eq(pinfo["rdb_last_load_keys_loaded"], total, "rdb_last_load_keys_loaded")
        if node:
            out, _ = node.communicate(timeout=300)
            line = out.decode().strip().splitlines()
            res = json.loads(line[-1]) if line and line[-1].startswith("{") else None
            check(res is not None, "ioredis: %r" % out[-500:])
            if res:
                eq(res["dbsize"], P.dbsize(), "ioredis after its ready check: DBSIZE of the whole file")
                eq(res["value"], P.get("key:1").decode(), "ioredis GET")
    finally:
        if node and node.poll() is None:
            node.kill()
        eq(cand.stop(), 0, "candidate exit status")
    log = open(cand.log, "rb").read()
    check(b"Done loading RDB, keys loaded: %d, keys expired:" % total in log, "log: Done loading RDB")
    check(b"DB loaded from disk: " in log, "log: DB loaded from disk")
    shutdown_while_loading(o, d)


def shutdown_while_loading(o, d):
    """SIGTERM while loading: a clean exit (status 0) that saves nothing, the file as it was"""
    path = os.path.join(d, "dump.rdb")
    before = sha(path)
    cand = LoadingServer(o.candidate, threads=o.threads, name="load-cross-stop", extra=["--dir", d])
    cand.start()
    was_loading = loading(cand.port)
    eq(cand.stop(), 0, "SIGTERM while loading: exit status")
    if was_loading:
        check(b"Received shutdown signal during loading" in open(cand.log, "rb").read(),
              "SIGTERM while loading: the log says so")
    eq(sha(path), before, "SIGTERM while loading: the file is left as it was")
    check(not any(f.startswith("temp-") for f in os.listdir(d)), "SIGTERM while loading: no temp file")


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def run_on(binary, d, name, threads=None):
    """binary started on d/name; (exit status, log) once it exits (None: still running after 120 s)"""
    args = [binary, "--port", str(free_port()), "--dir", d, "--dbfilename", name]
    if "redis-server" in os.path.basename(binary):
        args += ["--save", "", "--appendonly", "no"]
    elif threads:
        args += ["--threads", str(threads)]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        out, _ = p.communicate(timeout=120)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        return None, out


def broken(o, work):
    d = os.path.join(work, "broken")
    os.mkdir(d)
    ref = Server(o.redis, name="load-cross-small", extra=["--dir", d])
    ref.start()
    try:
        R = redis.Redis(port=ref.port)
        fill(R)
        eq(R.save(), True, "redis SAVE")
    finally:
        ref.stop()
    data = open(os.path.join(d, "dump.rdb"), "rb").read()
    cases = {
        "cut-half.rdb": data[:len(data) // 2],
        "cut-9.rdb": data[:9],
        "cut-crc.rdb": data[:-3],
        "cut-eof.rdb": data[:-9],
        "flipped.rdb": data[:len(data) // 3] + bytes([data[len(data) // 3] ^ 0x5a]) + data[len(data) // 3 + 1:],
        "bad-crc.rdb": data[:-1] + bytes([data[-1] ^ 1]),
        "signature.rdb": b"REDIX" + data[5:],
        "empty.rdb": b"",
    }
    for name, body in sorted(cases.items()):
        path = os.path.join(d, name)
        open(path, "wb").write(body)
        before = sha(path)
        rrc, rlog = run_on(o.redis, d, name)
        check(rrc not in (0, None), "%s: redis refuses it too (rc %r)" % (name, rrc))
        crc, clog = run_on(o.candidate, d, name, o.threads)
        check(crc not in (0, None), "%s: the candidate does not start (rc %r)" % (name, crc))
        check(b"loading DB" in clog or b"RDB" in clog, "%s: a log line says why: %r" % (name, clog[-300:]))
        check(b"offset" in clog or b"signature" in clog or b"version" in clog,
              "%s: the log says where: %r" % (name, clog[-300:]))
        check(b"Ready to accept" not in clog or b"Internal error in RDB" in clog,
              "%s: the log says why it stopped: %r" % (name, clog[-300:]))
        eq(sha(path), before, "%s: the file is left as it was" % name)
        check(not any(f.startswith("temp-") for f in os.listdir(d)), "%s: no temp file written" % name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--candidate", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--only", default="big,broken")
    o = ap.parse_args()
    if not os.access(o.redis, os.X_OK):
        print("SKIP: %s not found" % o.redis)
        return 77
    work = tempfile.mkdtemp(prefix="load-cross-")
    try:
        for name in o.only.split(","):
            before = expect.failed
            try:
                globals()[name](o, work)
            except (OSError, redis.RedisError, subprocess.SubprocessError, ValueError) as e:
                check(False, "%s: exception: %r" % (name, e))
            print("%-12s %s" % (name, "ok" if expect.failed == before else "FAILED"), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return expect.done("load_cross")


if __name__ == "__main__":
    sys.exit(main())
