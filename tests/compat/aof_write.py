#!/usr/bin/env python3
"""The append-only files percore writes, loaded by a real redis-server 7.0.

1. differential: a seeded random write workload (every type, expiries,
   INCRBYFLOAT, MULTI/EXEC, multi-key MSET/DEL, FLUSHDB, SELECT) on percore
   with appendonly yes; percore is killed (-9) once the writes are in the
   file (appendfsync always: every acknowledged write is); redis-server loads
   percore's appenddirname and every key, value and TTL (to the second) must
   be what percore held; redis-check-aof accepts the directory.
2. shutdown: the same with appendfsync everysec, stopped with SIGTERM.
3. from_rdb: appendonly yes on a directory with dump.rdb and no AOF: the
   keys the start loads are in the base (a copy of the file).
4. reload_race: restarted on its AOF again and again, with multi-shard
   commands sent the moment the load lets them in: every one is answered.
5. functions: FUNCTION LOAD [REPLACE], DELETE, FLUSH, RESTORE, alone and
   inside MULTI, from clients on every shard, some racing for the same
   library; after kill -9 (appendfsync always) percore restarted on its AOF
   and redis-server on the same directory list exactly the libraries
   acknowledged last.
6. crash: clients INCR their own counters concurrently with appendfsync
   always; kill -9 mid-load; redis-server loads the files: no counter is
   below the last value its client was acknowledged, no MSET over shards is
   half there (crash_repeated: 20 times over).  The same with everysec: no counter is below the value
   acknowledged two seconds before the kill.
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diff import free_port  # noqa: E402
from dump_cross import contents  # noqa: E402

import redis  # noqa: E402

DBS = 4


def start(args, port):
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            if redis.Redis(port=port).ping():
                return p
        except redis.exceptions.ConnectionError:
            time.sleep(0.05)
        except redis.exceptions.BusyLoadingError:
            time.sleep(0.05)
    p.kill()
    raise RuntimeError("server did not start: %s" % args)


def percore(binary, threads, d, fsync):
    port = free_port()
    return start([binary, "--port", str(port), "--threads", str(threads), "--save", "", "--appendonly", "yes",
                  "--appendfsync", fsync, "--dir", d], port), port


def redis_on(binary, d):
    port = free_port()
    return start([binary, "--port", str(port), "--save", "", "--appendonly", "yes", "--dir", d], port), port


def redis_snapshot(binary, d):
    """what a redis-server started on directory d holds (snapshot), the server stopped again"""
    rp, rport = redis_on(binary, d)
    try:
        return snapshot(rport)
    finally:
        rp.terminate()
        rp.wait()


def snapshot(port):
    out = {}
    for db in range(DBS):
        r = redis.Redis(port=port, db=db, socket_timeout=60)  # a server that stops answering fails, not hangs
        for k in r.keys("*"):
            when = r.execute_command("PEXPIRETIME", k)  # absolute: the same on both, whenever read
            out[(db, k)] = (contents(r, k), when)
    return out


def workload(port, seed, n):
    rng = random.Random(seed)
    rs = [redis.Redis(port=port, db=db) for db in range(DBS)]
    keys = ["k%d" % i for i in range(40)] + ["{t}%d" % i for i in range(10)]
    for i in range(n):
        r = rs[rng.randrange(DBS)]
        k = rng.choice(keys)
        k2 = rng.choice(keys)
        op = rng.randrange(36)
        try:
            if op == 0:
                r.set(k, "v%d" % i)
            elif op == 1:
                r.set(k, "e%d" % i, ex=rng.randrange(100, 1000))
            elif op == 2:
                r.setex(k, rng.randrange(100, 1000), "x")
            elif op == 3:
                r.expire(k, rng.randrange(100, 1000))
            elif op == 4:
                r.pexpire(k, rng.randrange(100000, 1000000))
            elif op == 5:
                r.incrbyfloat("f" + k, rng.choice(["1.5", "0.1", "-3.25"]))
            elif op == 6:
                r.rpush("l" + k, *["a%d" % j for j in range(rng.randrange(1, 5))])
            elif op == 7:
                r.lpop("l" + k)
            elif op == 8:
                r.sadd("s" + k, *["m%d" % rng.randrange(20) for _ in range(3)])
            elif op == 9:
                r.srem("s" + k, "m%d" % rng.randrange(20))
            elif op == 10:
                r.hset("h" + k, "f%d" % rng.randrange(5), i)
            elif op == 11:
                r.hincrbyfloat("h" + k, "fl", "0.5")
            elif op == 12:
                r.zadd("z" + k, {"m%d" % rng.randrange(10): rng.random()})
            elif op == 13:
                r.zincrby("z" + k, 2, "m1")
            elif op == 14:
                r.mset({k: "m%d" % i, k2: "n%d" % i, "k%d" % rng.randrange(40): "o"})
            elif op == 15:
                r.delete(k, k2, "l" + k)
            elif op == 16:
                p = r.pipeline(transaction=True)
                p.set(k, "t%d" % i)
                p.incr("c" + k)
                p.expire(k, 500)
                p.rpush("l" + k2, "tx")
                p.execute()
            elif op == 17:
                r.getex(k, ex=rng.randrange(100, 1000))
            elif op == 18:
                r.getex(k, persist=True)
            elif op == 19:
                if rng.randrange(30) == 0:
                    r.flushdb()
            elif op == 20:
                r.append(k, "z")
            elif op == 21:
                r.incr("c" + k)
            elif op == 22:
                r.expire(k, -1)  # in the past: a DEL
            elif op == 23:
                r.persist(k)
            elif op == 24:
                r.spop("s" + k)
            elif op == 25:
                r.spop("s" + k, rng.randrange(1, 4))
            elif op == 26:
                r.rename(k, k2) if k != k2 else r.rename(k, k + "x")
            elif op == 27:
                r.smove("s" + k, "s" + k2, "m%d" % rng.randrange(20))
            elif op == 28:
                r.blpop(["l" + k, "l" + k2], timeout=0.01)
            elif op == 29:
                r.execute_command("LMPOP", 2, "l" + k, "l" + k2, "RIGHT", "COUNT", 2)
            elif op == 30:
                r.bzpopmin(["z" + k], timeout=0.01)
            elif op == 31:
                r.execute_command("ZMPOP", 1, "z" + k, "MAX", "COUNT", 2)
            elif op == 32:
                r.sunionstore("s" + k, ["s" + k2, "s" + k])
            elif op == 33:
                r.execute_command("SET", k, "px%d" % i, "PXAT", int(time.time() * 1000) + 600000)
            elif op == 34:  # a script's writes propagate as its commands (one shard, or several: its write-backs)
                r.eval("redis.call('SET', KEYS[1], ARGV[1]); redis.call('EXPIRE', KEYS[1], 700);"
                       "return redis.call('INCRBY', KEYS[2], 3)", 2, k, "c" + k2, "lua%d" % i)
            elif op == 35:  # no KEYS: its keys live on the connection's shard
                r.eval("redis.call('SET', '{t}lua', ARGV[1]); return redis.call('SPOP', '{t}luaset')", 0, i)
        except redis.exceptions.ResponseError:
            pass  # WRONGTYPE and the like: nothing changed


def check_aof(d):
    manifest = os.path.join(d, "appendonlydir", "appendonly.aof.manifest")
    out = subprocess.run(["redis-check-aof", manifest], capture_output=True)
    out.stdout, out.stderr = out.stdout.decode("latin-1"), out.stderr.decode("latin-1")
    if out.returncode != 0 or "valid" not in out.stdout:
        raise AssertionError("redis-check-aof refused the directory:\n" + out.stdout + out.stderr)


def differential(a, d, fsync="always", stop=signal.SIGKILL):
    p, port = percore(a.candidate, a.threads, d, fsync)
    try:
        workload(port, a.seed, a.ops)
        want = snapshot(port)
    finally:
        p.send_signal(stop)
        p.wait()
    if stop == signal.SIGTERM and p.returncode != 0:  # a clean exit (a sanitizer's report fails it)
        raise AssertionError("percore exited with %d after SIGTERM" % p.returncode)
    check_aof(d)
    got = redis_snapshot(a.redis, d)
    bad = []
    for key in sorted(set(want) | set(got)):
        w, g = want.get(key), got.get(key)
        if w is None or g is None or w[0] != g[0] or abs(w[1] - g[1]) > 1000:  # TTL to the second
            bad.append((key, w, g))
    if bad:
        for b in bad[:10]:
            print("MISMATCH %s: percore %s redis %s" % b)
        raise AssertionError("%d keys differ after redis-server loaded percore's AOF" % len(bad))
    print("differential (appendfsync %s, signal %d): %d keys equal, redis-check-aof OK" % (fsync, stop, len(want)))
    reload_once(a, d, want)


RACE_RESTARTS = 30


def answered(r, *cmd):
    """cmd's reply, sent again while the server answers -LOADING"""
    while True:
        try:
            return r.execute_command(*cmd)
        except redis.exceptions.BusyLoadingError:
            pass


def reload_race(a, d):
    """restarted on its AOF, and at once transactions over every shard, as soon as the load lets them in: each
    is answered (a shard that began recording its writes before another, as the load ended, once left the
    AOF writer waiting for a transaction's markers forever, and every reply with it)"""
    p, port = percore(a.candidate, a.threads, d, "always")
    try:
        workload(port, a.seed, 300)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait()
    for i in range(RACE_RESTARTS):
        p, port = percore(a.candidate, a.threads, d, "always")
        try:
            r = redis.Redis(port=port, socket_timeout=20)
            answered(r, "MSET", *["race:%d" % j for j in range(16) for _ in (0, 1)])
            answered(r, "KEYS", "race:*")
            answered(r, "FLUSHDB")
            answered(r, "SET", "race:after", i)
        except redis.exceptions.TimeoutError:
            raise AssertionError("restart %d: a command sent as the load ended had no reply in 20 s" % i)
        finally:
            p.terminate()
            p.wait()
    print("reload_race: %d restarts, every transaction over the shards sent as the load ended answered" %
          RACE_RESTARTS)


def incr_bytes(d):
    aof = os.path.join(d, "appendonlydir")
    return sum(os.path.getsize(os.path.join(aof, f)) for f in os.listdir(aof) if f.endswith(".incr.aof"))


def reload_once(a, d, want):
    """percore loads its own AOF: the same keys, and the replayed commands are not logged again"""
    before = incr_bytes(d)
    p, port = percore(a.candidate, a.threads, d, "always")
    try:
        got = snapshot(port)
    finally:
        p.terminate()
        p.wait()
    after = incr_bytes(d)
    if after != before:
        raise AssertionError("loading the AOF changed its incr files: %d bytes, then %d" % (before, after))
    bad = [k for k in set(want) | set(got)
           if want.get(k) is None or got.get(k) is None or want[k][0] != got[k][0] or abs(want[k][1] - got[k][1]) > 1000]
    if bad:
        raise AssertionError("%d keys differ after percore loaded its own AOF, e.g. %s" % (len(bad), sorted(bad)[:3]))
    print("reload: percore loaded its own AOF, %d keys equal, incr files unchanged (%d bytes)" % (len(got), after))


def shutdown(a, d):
    """everysec, then SIGTERM: the writer writes and fsyncs what is left before the server exits"""
    differential(a, d, "everysec", signal.SIGTERM)


EVERYSEC_LOSS_S = 2  # Redis's promise with appendfsync everysec: at most about two seconds of writes


def library(name, fn, body="return 1"):
    return "#!lua name=%s\nredis.register_function('%s', function(keys, args) %s end)" % (name, fn, body)


def function_list(port):
    libs = redis.Redis(port=port, socket_timeout=60).execute_command("FUNCTION", "LIST", "WITHCODE")
    return sorted(repr(lib) for lib in libs)


def functions(a, d):
    """library changes reach the AOF once each, in the order they were acknowledged, from any shard"""
    p, port = percore(a.candidate, a.threads, d, "always")
    try:
        clients = [redis.Redis(port=port) for _ in range(8)]  # connections land on every shard
        r = clients[0]
        r.execute_command("FUNCTION", "LOAD", library("keep", "keepf", "return redis.call('INCR', keys[1])"))
        r.fcall("keepf", 1, "n")
        dump = r.function_dump()
        r.execute_command("FUNCTION", "LOAD", library("gone", "gonef"))
        r.execute_command("FUNCTION", "DELETE", "gone")
        clients[1].execute_command("FUNCTION", "LOAD", "REPLACE", library("keep", "keepf", "return 2"))
        with clients[2].pipeline(transaction=True) as m:
            m.execute_command("FUNCTION", "LOAD", library("inmulti", "inmultif"))
            m.set("after", 1)
            m.execute()
        clients[3].execute_command("FUNCTION", "FLUSH")
        clients[4].execute_command("FUNCTION", "RESTORE", dump)
        errors = []

        def racer(i):
            c = clients[i]
            for j in range(40):
                try:
                    if (i + j) % 2:
                        c.execute_command("FUNCTION", "LOAD", "REPLACE", library("race", "racef", "return %d" % j))
                    else:
                        c.execute_command("FUNCTION", "DELETE", "race")
                except redis.exceptions.ResponseError as e:
                    if "Library not found" not in str(e):
                        errors.append(e)

        ts = [threading.Thread(target=racer, args=(i,)) for i in range(4, 8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if errors:
            raise AssertionError("FUNCTION changes refused: %s" % errors[:3])
        want = function_list(port)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    check_aof(d)
    for who, start_on in (("percore restarted", lambda: percore(a.candidate, a.threads, d, "always")),
                          ("redis-server", lambda: redis_on(a.redis, d))):
        p, port = start_on()
        try:
            got = function_list(port)
        finally:
            p.terminate()
            p.wait()
        if got != want:
            raise AssertionError("%s on the AOF lists other libraries:\n%s\nacknowledged:\n%s" % (who, got, want))
    print("functions: %d libraries after 160 racing changes, the same in percore and redis-server after kill -9"
          % len(want))


def crash(a, d, fsync="always"):
    p, port = percore(a.candidate, a.threads, d, fsync)
    acked = {}    # key -> the last value acknowledged
    history = {}  # key -> [(monotonic time acknowledged, value)]
    stop = threading.Event()

    def client(i):
        r = redis.Redis(port=port)
        key = "counter:%d" % i
        history[key] = []
        while not stop.is_set():
            try:
                acked[key] = r.incr(key)
                history[key].append((time.monotonic(), acked[key]))
            except (redis.exceptions.ConnectionError, OSError):
                return

    groups = {}

    def mset_client(i):
        r = redis.Redis(port=port)
        keys = ["grp%d:%d" % (i, j) for j in range(8)]  # spread over the shards
        n = 0
        while not stop.is_set():
            n += 1
            try:
                r.mset({k: n for k in keys})
                groups[i] = (keys, n)
            except (redis.exceptions.ConnectionError, OSError):
                return

    ts = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    ts += [threading.Thread(target=mset_client, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    deadline = time.time() + 30
    want_s = EVERYSEC_LOSS_S + 1 if fsync == "everysec" else 0  # writes older than the promise's window
    start = time.monotonic()
    while time.time() < deadline and (sum(acked.values()) < 600 or time.monotonic() - start < want_s):
        time.sleep(0.05)
    killed = time.monotonic()
    p.send_signal(signal.SIGKILL)
    p.wait()
    stop.set()
    for t in ts:
        t.join()
    if fsync == "everysec":  # what must have survived: acknowledged EVERYSEC_LOSS_S before the kill
        acked = {k: max([v for t, v in h if t <= killed - EVERYSEC_LOSS_S] or [0]) for k, h in history.items()}
    rp, rport = redis_on(a.redis, d)
    try:
        r = redis.Redis(port=rport)
        for key, v in acked.items():
            got = int(r.get(key) or 0)
            if got < v:
                raise AssertionError("%s (appendfsync %s): acknowledged %d, the AOF has %d" % (key, fsync, v, got))
        for i, (keys, n) in groups.items():
            vals = r.mget(keys)
            if len(set(vals)) != 1:
                raise AssertionError("MSET over shards half in the file: %s" % vals)
            if fsync == "always" and int(vals[0]) < n:
                raise AssertionError("acknowledged MSET %d, the AOF has %s" % (n, vals[0]))
    finally:
        rp.terminate()
        rp.wait()
    print("crash (appendfsync %s): %d acknowledged INCRs and %d MSET groups whole in the files" %
          (fsync, sum(acked.values()), len(groups)))


CRASH_REPEATS = 20  # a write handed over mid-turn once left its reply unheld about once in 30 runs


def crash_repeated(a, d):
    """the crash above again and again, each on a fresh directory: an acknowledged write missing from the
    files is a race of a few in a hundred, so one run may miss it"""
    for i in range(CRASH_REPEATS):
        sub = os.path.join(d, "r%d" % i)
        os.mkdir(sub)
        crash(a, sub)


def crash_everysec(a, d):
    """kill -9 under load with appendfsync everysec: what was acknowledged two seconds before is there"""
    crash(a, d, "everysec")


def from_rdb(a, d):
    """appendonly yes on a dir with an RDB file and no AOF: as Redis 7.0, the AOF is what loads (none: an
    empty keyspace, an empty base), the RDB file is not read; the writes after the start are in the AOF"""
    port = free_port()
    rp = start([a.redis, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", d], port)
    r = redis.Redis(port=port)
    r.set("from:rdb", "1")
    r.rpush("from:list", "a", "b")
    r.save()
    rp.terminate()
    rp.wait()
    want_dir = tempfile.mkdtemp(prefix="aof_from_rdb_redis_")
    shutil.copy(os.path.join(d, "dump.rdb"), want_dir)
    rp, rport = redis_on(a.redis, want_dir)
    try:
        want = redis.Redis(port=rport).dbsize()
    finally:
        rp.terminate()
        rp.wait()
        shutil.rmtree(want_dir, ignore_errors=True)
    p, pport = percore(a.candidate, a.threads, d, "always")
    try:
        pr = redis.Redis(port=pport)
        got = pr.dbsize()
        pr.set("after", "2")
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    if got != want:
        raise AssertionError("appendonly yes over a lone dump.rdb: %d keys at start, redis-server %d" % (got, want))
    check_aof(d)
    os.unlink(os.path.join(d, "dump.rdb"))
    rp, rport = redis_on(a.redis, d)
    try:
        r = redis.Redis(port=rport)
        if r.get("after") != b"2" or r.dbsize() != want + 1:
            raise AssertionError("the AOF does not hold exactly the start's keys and the write after it")
    finally:
        rp.terminate()
        rp.wait()
    print("from_rdb: %d keys at start, as redis-server; the write after it in the AOF" % got)


def parse_args(seed, ops=3000, threads=1):
    """the arguments every script of this family takes (--redis --candidate --threads --seed --ops); exits 77
    (skipped) when the reference redis-server is missing"""
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--candidate", required=True)
    ap.add_argument("--threads", type=int, default=threads)
    ap.add_argument("--seed", type=int, default=seed)
    ap.add_argument("--ops", type=int, default=ops)
    a = ap.parse_args()
    if not os.path.exists(a.redis):
        print("SKIP: %s is missing" % a.redis)
        sys.exit(77)
    return a


def differential_main(run_workload, name, seed, read_contents=None):
    """main() of a script whose check is differential() (appendfsync always, kill -9) over its own workload
    (run_workload(port, seed, n)) and, for a type snapshot() does not read, its own read_contents(r, key)"""
    global workload, contents
    a = parse_args(seed)
    workload = run_workload
    if read_contents:
        contents = read_contents
    d = tempfile.mkdtemp(prefix=name + ".")
    try:
        differential(a, d, "always", signal.SIGKILL)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print("OK")


def main():
    a = parse_args(7)
    for test in (differential, shutdown, reload_race, functions, crash, crash_repeated, crash_everysec, from_rdb):
        d = tempfile.mkdtemp(prefix="aof_write.")
        try:
            test(a, d)
        finally:
            shutil.rmtree(d, ignore_errors=True)
    print("OK")


if __name__ == "__main__":
    main()
