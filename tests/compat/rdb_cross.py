#!/usr/bin/python3
"""rdb_cross.py --candidate SERVER [--threads N] [--redis REDIS] [--check-rdb TOOL]:
RDB files between the candidate and a real redis-server (7.0).

- candidate -> Redis: every kind of value (dump_cross.py's list: every type
  and encoding, big values) in several databases, some with TTLs, written by
  SAVE and by BGSAVE; redis-check-rdb accepts the file, which begins (as
  Redis's) with a RESIZEDB of every database's keys and keys with a TTL,
  and a redis-server started on it has every key with the same type,
  contents and expire time.
- Redis -> candidate: the same made in Redis, SAVEd; the candidate started on
  that file has the same (and refuses to start on a corrupted copy).
- Functions: Redis's file with function libraries loads here (FUNCTION
  LIST WITHCODE, FCALL), and a file of SAVE and BGSAVE here with libraries
  passes redis-check-rdb and loads in Redis and here with the same.
- The cut: writers MSET groups of keys spread over every shard, all to one
  value, while BGSAVEs run; in every file a group is whole (one value) or
  absent.
- During a BGSAVE: keys written after it began are not in the file, keys
  deleted or overwritten after it began are, as they were.
- SAVE: its client waits for the file while other clients are served
  (several stores; with one, it blocks the server as Redis's does); a
  client gone before its reply harms nothing.
- A failed save (its temp file cannot be created) keeps the old file,
  replies -ERR to SAVE (which leaves rdb_last_bgsave_status, as Redis's),
  and a failed BGSAVE sets rdb_last_bgsave_status:err; a shutdown
  during a BGSAVE exits cleanly and leaves a whole file, no temp file.

Standard library and Debian's python3-redis.  Exit 0 when all agree, 1
otherwise, 77 when redis-server is missing."""
import os
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "clients"))
from diff import Server, free_port  # noqa: E402
from dump_cross import LIBS, build, function_list, values, contents  # noqa: E402
import expect  # noqa: E402
from expect import check, eq  # noqa: E402

import redis  # noqa: E402

DBS = (0, 3, 15)
TTL_MS = 3600 * 1000


def fill(r):
    """every value of dump_cross.py in each of DBS, every third with a TTL; a 1 MB string too"""
    for db in DBS:
        r.execute_command("SELECT", db)
        for i, (key, args, _) in enumerate(values()):
            build(r, args)
            if i % 3 == 0:
                r.pexpire(key, TTL_MS + i)
        r.set("big:%d" % db, os.urandom(1 << 20))
    r.execute_command("SELECT", 0)


def everything(port):
    """{(db, key): (type, contents, pexpiretime)} of a server"""
    out = {}
    for db in range(16):
        r = redis.Redis(port=port, db=db)
        for key in r.scan_iter(count=1000):
            out[(db, key)] = contents(r, key) + (r.execute_command("PEXPIRETIME", key),)
        r.close()
    return out


def same(got, want, what):
    eq(len(got), len(want), "%s: key count" % what)
    bad = [k for k in want if got.get(k) != want[k]]
    check(not bad, "%s: %d keys differ, e.g. %r" % (what, len(bad), bad[:3]))


def wait_idle(r):
    for _ in range(3000):
        if r.info("persistence")["rdb_bgsave_in_progress"] == 0:
            return True
        time.sleep(0.01)
    return False


def candidate_in(o, work, sub, name):
    """a fresh directory work/sub, and the candidate started with it as its dir"""
    d = os.path.join(work, sub)
    os.mkdir(d)
    cand = Server(o.candidate, threads=o.threads, name=name, extra=["--dir", d])
    cand.start()
    return d, cand


def load_in(binary, path, name, threads=None):
    """a server of binary started on the file at path"""
    s = Server(binary, threads=threads, name=name,
               extra=["--dir", os.path.dirname(path), "--dbfilename", os.path.basename(path)])
    s.start()
    return s


def check_rdb(tool, path, what):
    if tool and os.access(tool, os.X_OK):
        p = subprocess.run([tool, path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        check(p.returncode == 0 and b"RDB looks OK" in p.stdout, "%s: redis-check-rdb: %r" % (what, p.stdout[-300:]))


def rdb_len(b, i):
    """an RDB length at b[i]: (value, next index, special encoding?)"""
    t = b[i] >> 6
    if t == 0:
        return b[i] & 0x3F, i + 1, False
    if t == 1:
        return ((b[i] & 0x3F) << 8) | b[i + 1], i + 2, False
    if t == 3:
        return b[i] & 0x3F, i + 1, True
    n = 4 if b[i] == 0x80 else 8
    return int.from_bytes(b[i + 1:i + 1 + n], "big"), i + 1 + n, False


def rdb_skip_string(b, i):
    v, i, special = rdb_len(b, i)
    if not special:
        return i + v
    if v < 3:
        return i + (1, 2, 4)[v]
    clen, i, _ = rdb_len(b, i)  # LZF: compressed length, then the plain length
    _, i, _ = rdb_len(b, i)
    return i + clen


def resizedb_records(path):
    """{db: (keys, expires)} of the RESIZEDB records after the AUX fields, before the first key"""
    with open(path, "rb") as f:
        b = f.read()
    out, i, db = {}, 9, None
    while True:
        op = b[i]
        if op == 0xFA:  # AUX
            i = rdb_skip_string(b, rdb_skip_string(b, i + 1))
        elif op == 0xFE:  # SELECTDB
            db, i, _ = rdb_len(b, i + 1)
        elif op == 0xFB:  # RESIZEDB
            keys, i, _ = rdb_len(b, i + 1)
            expires, i, _ = rdb_len(b, i)
            out[db] = (keys, expires)
        else:
            return out


def key_counts(r):
    """{db: (keys, expires)} from INFO keyspace"""
    return {int(name[2:]): (v["keys"], v["expires"]) for name, v in r.info("keyspace").items()}


def to_redis(o, work):
    d, cand = candidate_in(o, work, "c2r", "rdb-cross")
    try:
        P = redis.Redis(port=cand.port)
        fill(P)
        want = everything(cand.port)
        check(P.info("persistence")["rdb_changes_since_last_save"] > 0, "changes before a save")
        for how in ("SAVE", "BGSAVE"):
            os.path.exists(os.path.join(d, "dump.rdb")) and os.unlink(os.path.join(d, "dump.rdb"))
            reply = P.execute_command(how)
            eq(reply, True, "%s reply (+OK, +Background saving started)" % how)
            check(wait_idle(P), "%s: the save ends" % how)
            eq(P.info("persistence")["rdb_last_bgsave_status"], "ok", "%s: status" % how)
            path = os.path.join(d, "dump.rdb")
            check(os.path.exists(path), "%s: the file is there" % how)
            check_rdb(o.check_rdb, path, how)
            eq(resizedb_records(path), key_counts(P), "%s: RESIZEDB of every database with keys, first" % how)
            ref = load_in(o.redis, path, "rdb-cross-redis")
            try:
                same(everything(ref.port), want, "%s file loaded by redis" % how)
            finally:
                ref.stop()
            back = load_in(o.candidate, path, "rdb-cross-back", o.threads)
            try:
                same(everything(back.port), want, "%s file loaded by the candidate" % how)
            finally:
                eq(back.stop(), 0, "exit status")
        eq(P.info("persistence")["rdb_changes_since_last_save"], 0, "changes after a save")
        P.set("one:more", "x")
        eq(P.info("persistence")["rdb_changes_since_last_save"], 1, "changes after a SET")
        eq(P.execute_command("BGSAVE", "SCHEDULE"), True, "BGSAVE SCHEDULE")
        check(wait_idle(P), "BGSAVE SCHEDULE ends")
        check(abs(P.lastsave().timestamp() - time.time()) < 3600, "LASTSAVE is recent")
        eq(P.info("persistence")["rdb_changes_since_last_save"], 0, "changes after BGSAVE SCHEDULE")
        eq(P.info("persistence")["rdb_saves"], 3, "rdb_saves")
    finally:
        eq(cand.stop(), 0, "candidate exit status")


def from_redis(o, work):
    d = os.path.join(work, "r2c")
    os.mkdir(d)
    ref = Server(o.redis, name="rdb-cross-redis", extra=["--dir", d, "--enable-debug-command", "yes"])
    ref.start()
    try:
        R = redis.Redis(port=ref.port)
        fill(R)
        want = everything(ref.port)
        del want[(0, b"s:short")]
        # in the file past its TTL, so the load skips it: no active expiry and no read reaps it first (a
        # TTL of 1 s set before everything() above could run out, and be reaped, before the SAVE)
        R.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        R.pexpire("s:short", 1)
        time.sleep(0.05)
        eq(R.save(), True, "redis SAVE")
        counts = key_counts(R)
    finally:
        ref.stop()
    path = os.path.join(d, "dump.rdb")
    # Redis's has each before its db's keys: the reader, which stops at the first key, sees db 0's
    eq(resizedb_records(path), {0: counts[0]}, "redis's file: its first RESIZEDB (the test's reader)")
    cand = load_in(o.candidate, path, "rdb-cross-load", o.threads)
    try:
        same(everything(cand.port), want, "redis's file loaded by the candidate")
        info = redis.Redis(port=cand.port).info("persistence")
        eq((info["rdb_last_load_keys_loaded"], info["rdb_last_load_keys_expired"]), (len(want), 1),
           "INFO: keys loaded, expired")
    finally:
        eq(cand.stop(), 0, "candidate exit status")
    # a corrupted copy: the candidate refuses to start, saying why
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0x55
    bad = os.path.join(d, "bad.rdb")
    open(bad, "wb").write(bytes(data))
    p = subprocess.run([o.candidate, "--port", str(free_port()), "--threads", str(o.threads), "--dir", d, "--dbfilename",
                        "bad.rdb"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    check(p.returncode != 0, "corrupt file: the candidate does not start (rc %d)" % p.returncode)
    check(b"RDB" in p.stdout, "corrupt file: a log line says why: %r" % p.stdout[-300:])


def functions(o, work):
    """function libraries in the file (FUNCTION2 records before the keys, as Redis 7.0's), both ways"""
    d = os.path.join(work, "fr2c")
    os.mkdir(d)
    ref = Server(o.redis, name="rdb-cross-fredis", extra=["--dir", d])
    ref.start()
    try:
        R = redis.Redis(port=ref.port)
        for code in LIBS:
            R.execute_command("FUNCTION", "LOAD", code)
        R.set("fk", "v")
        want = function_list(R)
        eq(R.save(), True, "redis SAVE")
    finally:
        ref.stop()
    cand = load_in(o.candidate, os.path.join(d, "dump.rdb"), "rdb-cross-fload", o.threads)
    try:
        P = redis.Redis(port=cand.port)
        eq(function_list(P), want, "redis's libraries loaded by the candidate")
        eq(P.execute_command("FCALL_RO", "a_ro", 1, "fk"), b"v", "FCALL of a loaded function")
        eq(P.execute_command("FCALL", "b1", 0), b"b", "FCALL of another")
    finally:
        eq(cand.stop(), 0, "candidate exit status")
    d, cand = candidate_in(o, work, "fc2r", "rdb-cross-fc")
    try:
        P = redis.Redis(port=cand.port)
        for code in LIBS:
            P.execute_command("FUNCTION", "LOAD", code)
        P.set("fk", "v")
        want = function_list(P)
        for how in ("SAVE", "BGSAVE"):
            eq(P.execute_command(how), True, "%s reply" % how)
            check(wait_idle(P), "%s: the save ends" % how)
            path = os.path.join(d, "dump.rdb")
            check_rdb(o.check_rdb, path, "%s with functions" % how)
            for binary, threads, who in ((o.redis, None, "redis"), (o.candidate, o.threads, "the candidate")):
                s = load_in(binary, path, "rdb-cross-fback", threads)
                try:
                    r = redis.Redis(port=s.port)
                    eq(function_list(r), want, "%s file with functions loaded by %s" % (how, who))
                    eq(r.get("fk"), b"v", "%s file: its key, after the functions, loaded by %s" % (how, who))
                finally:
                    eq(s.stop(), 0, "exit status")
        P.execute_command("FUNCTION", "FLUSH")
        eq(P.execute_command("SAVE"), True, "SAVE after FUNCTION FLUSH")
        s = load_in(o.candidate, os.path.join(d, "dump.rdb"), "rdb-cross-fnone", o.threads)
        try:
            eq(function_list(redis.Redis(port=s.port)), [], "no functions after FUNCTION FLUSH and SAVE")
        finally:
            eq(s.stop(), 0, "exit status")
    finally:
        eq(cand.stop(), 0, "candidate exit status")


def cut(o, work):
    """groups MSET whole by writers while BGSAVEs run: every file has each group whole or absent"""
    d, cand = candidate_in(o, work, "cut", "rdb-cut")
    groups, width = 64, 16  # 16 keys with different hash slots: over every shard
    stop = threading.Event()
    errors = []

    def writer(w):
        c = redis.Redis(port=cand.port)
        n = 0
        try:
            while not stop.is_set():
                g = (n * 7 + w) % groups
                c.mset({"g%d:k%d" % (g, i): "w%d-%d" % (w, n) for i in range(width)})
                n += 1
        except redis.RedisError as e:
            errors.append(e)

    try:
        P = redis.Redis(port=cand.port)
        P.mset({"pad:%d" % i: "x" * 100 for i in range(20000)})  # something to walk while they write
        ws = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
        for t in ws:
            t.start()
        for rnd in range(4):
            eq(P.bgsave(), True, "BGSAVE %d" % rnd)
            check(wait_idle(P), "BGSAVE %d ends" % rnd)
            snap = os.path.join(d, "snap%d.rdb" % rnd)
            shutil.copy(os.path.join(d, "dump.rdb"), snap)
        stop.set()
        for t in ws:
            t.join()
        check(not errors, "writers: %r" % errors[:2])
    finally:
        stop.set()
        eq(cand.stop(), 0, "candidate exit status")
    for rnd in range(4):
        ref = load_in(o.redis, os.path.join(d, "snap%d.rdb" % rnd), "rdb-cut-redis")
        try:
            R = redis.Redis(port=ref.port)
            torn = 0
            for g in range(groups):
                vals = R.mget(["g%d:k%d" % (g, i) for i in range(width)])
                torn += len(set(vals)) != 1
            eq(torn, 0, "file %d: groups torn" % rnd)
            eq(R.dbsize() >= 20000, True, "file %d: the padding is there" % rnd)
        finally:
            ref.stop()


def during(o, work):
    """keys written after a BGSAVE began are not in its file; keys deleted or changed after, are as they were"""
    d, cand = candidate_in(o, work, "during", "rdb-during")
    try:
        P = redis.Redis(port=cand.port)
        n = 50000
        seen = False
        for attempt in range(6):  # until the writes land while the save still runs
            P.flushall()
            for i in range(0, n, 5000):
                P.mset({"old:%d" % j: "v%d" % j for j in range(i, i + 5000)})
            saves = P.info("persistence")["rdb_saves"]
            pipe = P.pipeline(transaction=False)
            pipe.bgsave()
            for j in range(0, n, n // 50):
                pipe.set("new:%d" % j, "x")
                pipe.delete("old:%d" % j)
                pipe.set("old:%d" % (j + 1), "changed")
            pipe.bgsave()
            pipe.info("persistence")
            res = pipe.execute(raise_on_error=False)
            seen = res[-1]["rdb_bgsave_in_progress"] == 1
            check(wait_idle(P), "BGSAVE ends")
            if isinstance(res[-2], redis.ResponseError):
                eq(str(res[-2]), "Background save already in progress", "a second BGSAVE meanwhile")
                eq(P.info("persistence")["rdb_saves"], saves + 1, "one save")
            else:  # the first was over already: the second is a save of its own
                eq(P.info("persistence")["rdb_saves"], saves + 2, "two saves")
                seen = False
            if seen:
                break
            n *= 2
        check(seen, "the writes came while the save ran (at %d keys)" % n)
    finally:
        eq(cand.stop(), 0, "candidate exit status")
    ref = load_in(o.redis, os.path.join(d, "dump.rdb"), "rdb-during-redis")
    try:
        R = redis.Redis(port=ref.port)
        eq(R.dbsize(), n, "the file has the keys of the start")
        eq(len(list(R.scan_iter(match="new:*"))), 0, "keys written during the save are not in it")
        for j in range(0, n, n // 50):
            eq(R.get("old:%d" % j), b"v%d" % j, "deleted during the save: in it")
            eq(R.get("old:%d" % (j + 1)), b"v%d" % (j + 1), "changed during the save: the old value")
    finally:
        ref.stop()


def failed_save(o, work):
    d, cand = candidate_in(o, work, "fail", "rdb-fail")
    try:
        P = redis.Redis(port=cand.port)
        P.set("k", "first")
        eq(P.save(), True, "SAVE")
        path = os.path.join(d, "dump.rdb")
        old = open(path, "rb").read()
        P.set("k", "second")
        blocker = os.path.join(d, "temp-%d.rdb" % cand.proc.pid)
        os.mkdir(blocker)  # the temp file cannot be created, even by root
        try:
            P.save()
            check(False, "SAVE with no temp file: an error")
        except redis.ResponseError as e:
            check(str(e) in ("", "ERR"), "SAVE's error is Redis's bare -ERR: %r" % str(e))
        eq(P.info("persistence")["rdb_last_bgsave_status"], "ok", "a failed SAVE leaves the BGSAVE status (as Redis)")
        eq(P.bgsave(), True, "BGSAVE")
        check(wait_idle(P), "BGSAVE ends")
        eq(P.info("persistence")["rdb_last_bgsave_status"], "err", "status after a failed BGSAVE")
        eq(open(path, "rb").read(), old, "the old file is kept")
        os.rmdir(blocker)
        eq(P.save(), True, "SAVE once it can")
        eq(P.info("persistence")["rdb_last_bgsave_status"], "ok", "status after a SAVE")
        check(open(path, "rb").read() != old, "the file is the new one")
        check(not os.path.exists(blocker), "no temp file left")
        # a shutdown while a BGSAVE runs: a clean exit, a whole file (the old or the new), no temp file
        for i in range(0, 100000, 10000):
            P.mset({"s:%d" % j: "v" * 50 for j in range(i, i + 10000)})
        eq(P.bgsave(), True, "BGSAVE before the shutdown")
    finally:
        eq(cand.stop(), 0, "candidate exit status")
    check(not [f for f in os.listdir(d) if f.startswith("temp-")], "no temp file after the shutdown")
    check_rdb(o.check_rdb, os.path.join(d, "dump.rdb"), "the file after the shutdown")


def save_waits(o, work):
    """SAVE's client waits for the file while others are served; a client gone meanwhile harms nothing"""
    import socket
    d, cand = candidate_in(o, work, "waits", "rdb-waits")
    try:
        P = redis.Redis(port=cand.port)
        one_store = o.threads == 1 or b"global-lock" in subprocess.run([o.candidate, "--version"],
                                                                        stdout=subprocess.PIPE).stdout
        n, served = 50000, False
        for attempt in range(1 if one_store else 6):  # one store: SAVE blocks it, nobody else is served
            for i in range(0, n, 10000):
                P.mset({"w:%d:%d" % (attempt, j): "v" * 50 for j in range(i, i + 10000)})
            a = socket.create_connection(("127.0.0.1", cand.port))
            a.sendall(b"*1\r\n$4\r\nSAVE\r\n")
            a.settimeout(0.0)
            got = b""
            for _ in range(100000):
                info = P.info("persistence")
                try:
                    got += a.recv(100)
                except BlockingIOError:
                    pass
                if info["rdb_bgsave_in_progress"] == 1 and not got:
                    served = True  # another client answered while SAVE's waited
                if got.endswith(b"\r\n"):
                    break
            a.settimeout(60)
            while not got.endswith(b"\r\n"):
                got += a.recv(100)
            a.close()
            eq(got, b"+OK\r\n", "SAVE's reply")
            if served:
                break
            n *= 2
        check(served or one_store, "another client is served while SAVE waits for its file")
        # the client of a SAVE goes away before its reply
        saves = P.info("persistence")["rdb_saves"]
        a = socket.create_connection(("127.0.0.1", cand.port))
        a.sendall(b"*1\r\n$4\r\nSAVE\r\n")
        a.close()
        for _ in range(3000):
            if P.info("persistence")["rdb_saves"] == saves + 1:
                break
            time.sleep(0.01)
        eq(P.info("persistence")["rdb_saves"], saves + 1, "the save of a gone client is done")
        eq(P.ping(), True, "PING after")
        eq(P.save(), True, "SAVE after")
    finally:
        eq(cand.stop(), 0, "candidate exit status")


def main():
    return expect.main(globals(), "rdb_cross", "to_redis,from_redis,functions,cut,during,failed_save,save_waits",
                       [("--check-rdb", {"default": "/usr/bin/redis-check-rdb"})])

if __name__ == "__main__":
    sys.exit(main())
