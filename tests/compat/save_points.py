#!/usr/bin/python3
"""save_points.py --candidate SERVER [--threads N] [--redis REDIS] [--only a,b]:
save points, SHUTDOWN's and SIGTERM's save, and a disk that fails, against a
real redis-server (7.0) side by side.

- config: the built-in default of `save`, CONFIG SET save's replies and
  CONFIG GET's value for valid and invalid values, `save` lines of a conf
  file and the command line (they accumulate), CONFIG REWRITE's save lines:
  all the same bytes as Redis's.
- fires: `save 1 1` writes the file by itself once a key changed, and not
  again without changes.
- flushall: with save points FLUSHALL (also inside EXEC) rewrites the
  file with the empty dataset, rdb_changes_since_last_save 0 and
  rdb_saves unchanged after it, as Redis's flushAllDataAndResetRDB;
  without save points the file stays.
- multi: BGSAVE [SCHEDULE] inside MULTI/EXEC answers "Background saving
  scheduled" and runs after EXEC; SAVE is refused there.
- shutdown: SHUTDOWN, SHUTDOWN SAVE / NOSAVE and SIGTERM, with and without
  save points, leave (or do not leave) the file Redis leaves.
- kill9: kill -9 while a BGSAVE runs leaves the old dump.rdb, whole.
- disk: RLIMIT_FSIZE (prlimit) below the file's size: BGSAVE fails,
  rdb_last_bgsave_status:err, writes and PING get Redis's -MISCONF (also
  inside MULTI), reads work, the old file is kept, nothing crashes;
  stop-writes-on-bgsave-error no lifts it; freeing the space and a BGSAVE
  clear it.  A final save that cannot be written (its temp file blocked):
  SHUTDOWN answers Redis's error and the server keeps running, SIGTERM is
  logged and the server keeps running, SHUTDOWN FORCE exits.
- retry: after a save point's BGSAVE failed, the next try waits 5 s.

Every server runs in its own temporary directory.  Standard library and
Debian's python3-redis.  Exit 0 when all agree, 1 otherwise, 77 when
redis-server (or prlimit, for `disk`) is missing."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "clients"))
from diff import Server, free_port  # noqa: E402
import expect  # noqa: E402
from expect import check, eq  # noqa: E402

import redis  # noqa: E402


def poll(cond, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def both(o):
    return (("redis", o.redis, None), ("candidate", o.candidate, o.threads))


def start_in(work, sub, binary, threads, name, extra=()):
    """binary started in a fresh directory work/sub (its dir)"""
    d = os.path.join(work, sub)
    os.mkdir(d)
    s = Server(binary, threads=threads, name=name, extra=["--dir", d] + list(extra))
    s.start()
    return d, s


def raw_start(binary, threads, args, cwd, preexec_fn=None):
    """binary ARGS with no --save added (its built-in default, or a conf file's); (proc, port)"""
    port = free_port()
    cmd = [binary] + args + ["--port", str(port), "--bind", "127.0.0.1", "--dir", cwd]
    if threads:
        cmd += ["--threads", str(threads)]
    log = open(os.path.join(cwd, "server.log"), "wb")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd,
                         preexec_fn=preexec_fn)
    log.close()

    def up():
        try:
            return redis.Redis(port=port).ping()
        except redis.RedisError:
            return p.poll() is not None
    poll(up, 20)
    return p, port


def reply(r, *args):
    try:
        return r.execute_command(*args)
    except redis.ResponseError as e:
        return "ERR: " + str(e)


SAVE_VALUES = ["", "3600 1", "3600 1 300 100", "1 0", "0 1", "3600", "a b", "3600 -1", "-1 1", "+5 3",
               "007 1", "3600  1", "3600 1 ", " 3600 1", "99999999999999999999 1", "1 4294967297",
               "1 1 2", "1 1x", "3600 1 300 100 60 10000", "100\t1"]


def config(o, work):
    got = {}
    for who, binary, threads in both(o):
        d = os.path.join(work, "config-" + who)
        os.mkdir(d)
        out = []
        p, port = raw_start(binary, threads, [], d)  # the built-in default
        try:
            r = redis.Redis(port=port)
            out.append(("default", r.config_get("save")))
            out.append(("stop-writes default", r.config_get("stop-writes-on-bgsave-error")))
            for v in SAVE_VALUES:
                out.append((v, reply(r, "CONFIG", "SET", "save", v), r.config_get("save")))
            out.append(("dup", reply(r, "CONFIG", "SET", "save", "1 1", "save", "2 2")))
            out.append(("multi", reply(r, "CONFIG", "SET", "save", "5 5", "stop-writes-on-bgsave-error", "no"),
                        r.config_get("save"), r.config_get("stop-writes-on-bgsave-error")))
            out.append(("bad bool", reply(r, "CONFIG", "SET", "stop-writes-on-bgsave-error", "maybe")))
            r.execute_command("SHUTDOWN", "NOSAVE")
        except redis.ConnectionError:
            pass
        finally:
            p.wait(15)
        # conf file lines and the command line accumulate; the first replaces the default
        for i, (lines, args) in enumerate([
                ("save 900 1\nsave 300 10\n", []),
                ("save 900 1\n", ["--save", "60", "5"]),
                ("save \"\"\nsave 100 1\n", []),
                ("save 100 1\nsave \"\"\n", []),
                ("save \"900 1 300 10\"\n", ["--save", "7 7"]),
                ("port 1\n", ["--save", ""]),
                ("port 1\n", ["--save", "1 2", "--save", "3 4"])]):
            conf = os.path.join(d, "c%d.conf" % i)
            with open(conf, "w") as f:
                f.write(lines)
            p, port = raw_start(binary, threads, [conf] + args, d)
            try:
                r = redis.Redis(port=port)
                out.append(("conf %d" % i, r.config_get("save")))
                if i == 0:  # CONFIG REWRITE writes a line per point, and save "" for none
                    r.config_set("save", "100 1 200 2")
                    r.config_rewrite()
                    out.append(("rewrite", [x for x in open(conf).read().splitlines() if x.startswith("save")]))
                    r.config_set("save", "")
                    r.config_rewrite()
                    out.append(("rewrite none", [x for x in open(conf).read().splitlines() if x.startswith("save")]))
                r.execute_command("SHUTDOWN", "NOSAVE")
            except redis.ConnectionError:
                pass
            finally:
                p.wait(15)
        got[who] = out
    for a, b in zip(got["redis"], got["candidate"]):
        eq(b, a, "config: %r" % (a[0],))
    eq(len(got["candidate"]), len(got["redis"]), "config: steps")


def fires(o, work):
    for who, binary, threads in both(o):
        d, s = start_in(work, "fires-" + who, binary, threads, "sp-fires-" + who, ["--save", "1 1"])
        try:
            r = redis.Redis(port=s.port)
            eq(r.config_get("save"), {"save": "1 1"}, "%s: save 1 1" % who)
            path = os.path.join(d, "dump.rdb")
            time.sleep(2.5)
            check(not os.path.exists(path), "%s: no change, no save" % who)
            r.set("k", "v")
            check(poll(lambda: os.path.exists(path) and r.info("persistence")["rdb_changes_since_last_save"] == 0),
                  "%s: the save point wrote the file" % who)
            saves = r.info("persistence")["rdb_saves"]
            time.sleep(3)
            eq(r.info("persistence")["rdb_saves"], saves, "%s: no save without changes" % who)
            r.set("k", "w")
            check(poll(lambda: r.info("persistence")["rdb_saves"] > saves), "%s: saved again after a change" % who)
        finally:
            eq(s.stop(), 0, "%s: exit status" % who)


def flushall(o, work):
    """with save points FLUSHALL writes the empty dataset to the file (Redis's flushAllDataAndResetRDB),
    inside EXEC too, leaving rdb_changes_since_last_save 0 and rdb_saves as they were; without, the
    file is left as it is"""
    marker = b"flushall:key:"
    for who, binary, threads in both(o):
        d, s = start_in(work, "flushall-" + who, binary, threads, "sp-flushall-" + who, ["--save", "3600 1"])
        path = os.path.join(d, "dump.rdb")

        def holds_keys():
            with open(path, "rb") as f:
                return marker in f.read()
        try:
            r = redis.Redis(port=s.port)
            for how in ("FLUSHALL", "EXEC"):
                for db in (0, 5):
                    r.execute_command("SELECT", db)
                    for i in range(50):
                        r.set(marker + b"%d" % i, "v", px=3600 * 1000 if i % 2 else None)
                r.execute_command("SELECT", 0)
                eq(r.save(), True, "%s: SAVE" % who)
                check(holds_keys(), "%s: the keys are in the file" % who)
                saves = r.info("persistence")["rdb_saves"]
                if how == "EXEC":
                    p = r.pipeline(transaction=True)
                    p.set(marker + b"x", "y")
                    p.flushall()
                    eq(p.execute(), [True, True], "%s: MULTI SET FLUSHALL EXEC" % who)
                else:
                    eq(r.flushall(), True, "%s: FLUSHALL" % who)
                check(poll(lambda: not holds_keys() and r.info("persistence")["rdb_bgsave_in_progress"] == 0),
                      "%s: %s rewrote the file" % (who, how))
                check(not has_key(o, path, marker + b"0"), "%s: %s: redis loads an empty file" % (who, how))
                info = r.info("persistence")
                eq(info["rdb_changes_since_last_save"], 0, "%s: %s: rdb_changes_since_last_save" % (who, how))
                eq(info["rdb_saves"], saves, "%s: %s: rdb_saves" % (who, how))
                eq(info["rdb_last_bgsave_status"], "ok", "%s: %s: rdb_last_bgsave_status" % (who, how))
            eq(r.config_set("save", ""), True, "%s: CONFIG SET save ''" % who)
            r.set(marker + b"0", "v")
            eq(r.save(), True, "%s: SAVE without save points" % who)
            eq(r.flushall(), True, "%s: FLUSHALL without save points" % who)
            time.sleep(1.5)  # a rewrite would have come by now: FLUSHALL's own is done before its reply
            check(holds_keys(), "%s: without save points FLUSHALL leaves the file" % who)
            check(r.info("persistence")["rdb_changes_since_last_save"] > 0,
                  "%s: changes after FLUSHALL without save points" % who)
        finally:
            eq(s.stop(), 0, "%s: exit status" % who)


def has_key(o, path, key):
    """the file at path, loaded by redis-server, has key"""
    ref = Server(o.redis, name="sp-check", extra=["--dir", os.path.dirname(path), "--dbfilename",
                                                 os.path.basename(path)])
    ref.start()
    try:
        return redis.Redis(port=ref.port).exists(key) == 1
    finally:
        ref.stop()


def shutdown(o, work):
    cases = [("SHUTDOWN", "3600 1", True), ("SHUTDOWN NOSAVE", "3600 1", False),
             ("SHUTDOWN SAVE", "", True), ("SHUTDOWN", "", False), ("SHUTDOWN NOW", "3600 1", True),
             ("SIGTERM", "3600 1", True), ("SIGTERM", "", False), ("SIGINT", "3600 1", True)]
    for i, (how, points, want) in enumerate(cases):
        for who, binary, threads in both(o):
            d, s = start_in(work, "shut%d-%s" % (i, who), binary, threads, "sp-shut-" + who, ["--save", points])
            r = redis.Redis(port=s.port)
            r.set("k%d" % i, "v")
            if how.startswith("SIG"):
                s.proc.send_signal(signal.SIGTERM if how == "SIGTERM" else signal.SIGINT)
            else:
                try:
                    r.execute_command(*how.split())
                    check(False, "%s %s: no reply" % (who, how))
                except redis.ConnectionError:
                    pass
            try:
                rc = s.proc.wait(30)
            except subprocess.TimeoutExpired:
                rc = "running"
            eq(rc, 0, "%s: %s (save %r) exits 0" % (who, how, points))
            s.stop()
            path = os.path.join(d, "dump.rdb")
            eq(os.path.exists(path), want, "%s: %s (save %r): the file" % (who, how, points))
            if want and os.path.exists(path):
                check(has_key(o, path, "k%d" % i), "%s: %s: the key is in the file" % (who, how))
    # started with SIGINT ignored (a shell's background job): SIGINT still saves and stops it, as Redis
    for who, binary, threads in both(o):
        d = os.path.join(work, "sigint-ignored-" + who)
        os.mkdir(d)
        p, port = raw_start(binary, threads, ["--save", "3600 1"], d,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        redis.Redis(port=port).set("k", "v")
        p.send_signal(signal.SIGINT)
        try:
            rc = p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = "running"
            p.wait()
        eq(rc, 0, "%s: SIGINT inherited ignored: exits 0" % who)
        check(os.path.exists(os.path.join(d, "dump.rdb")), "%s: SIGINT inherited ignored: the file" % who)


def multi(o, work):
    """BGSAVE inside EXEC is scheduled (the file has what EXEC wrote), SAVE is refused there"""
    got = {}
    for who, binary, threads in both(o):
        d, s = start_in(work, "multi-" + who, binary, threads, "sp-multi-" + who)
        out = []
        try:
            r = redis.Redis(port=s.port)
            for seq in ((("BGSAVE",), ("SET", "a", "1")), (("SAVE",),), (("BGSAVE", "SCHEDULE"), ("BGSAVE",))):
                p = r.pipeline(transaction=False)
                p.execute_command("MULTI")
                for cmd in seq:
                    p.execute_command(*cmd)
                p.execute_command("EXEC")
                out.append([str(x) for x in p.execute(raise_on_error=False)])
            path = os.path.join(d, "dump.rdb")
            check(poll(lambda: os.path.exists(path) and r.info("persistence")["rdb_bgsave_in_progress"] == 0),
                  "%s: the scheduled BGSAVE ran" % who)
        finally:
            eq(s.stop(), 0, "%s: exit status" % who)
        check(has_key(o, os.path.join(d, "dump.rdb"), "a"), "%s: EXEC's write is in the file" % who)
        got[who] = out
    eq(got["candidate"], got["redis"], "multi: replies")


def kill9(o, work):
    """kill -9 while a BGSAVE runs: the old file stays, whole.  A BGSAVE may end between the INFO that says
    it runs and the kill (a busy machine): that try shows the new file whole, and the next one, with more
    data on a fresh server, tries again"""
    caught = False
    for attempt in range(6):
        d, s = start_in(work, "kill9-%d" % attempt, o.candidate, o.threads, "sp-kill9", ["--save", "3600 1"])
        path = os.path.join(d, "dump.rdb")
        try:
            r = redis.Redis(port=s.port)
            r.set("old", "1")
            eq(r.save(), True, "SAVE")
            old = open(path, "rb").read()
            for i in range(0, 20000 << attempt, 10000):
                r.mset({"n:%d" % j: "v" * 100 for j in range(i, i + 10000)})
            eq(r.bgsave(), True, "BGSAVE")
            if r.info("persistence")["rdb_bgsave_in_progress"] != 1:
                continue  # over already: more data next time
            s.proc.kill()
            s.proc.wait()
            if open(path, "rb").read() == old:
                caught = True
                check(has_key(o, path, "old"), "the old file loads")
                break
            check(has_key(o, path, "n:0"), "a BGSAVE that ended just before the kill: its file whole")
        finally:
            s.stop()
    check(caught, "kill -9 while the BGSAVE ran: the old file, intact")


MISCONF = ("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. "
           "Commands that may modify the data set are disabled, because this instance is configured to report "
           "errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check "
           "the Redis logs for details about the RDB error.")


def prlimit(pid, soft):
    subprocess.run(["prlimit", "--pid", str(pid), "--fsize=%s:unlimited" % soft], check=True)


def disk(o, work):
    if not shutil.which("prlimit"):
        print("SKIP disk: no prlimit")
        return
    got = {}
    for who, binary, threads in both(o):
        d, s = start_in(work, "disk-" + who, binary, threads, "sp-disk-" + who, ["--save", "3600 1"])
        path = os.path.join(d, "dump.rdb")
        out = []
        try:
            r = redis.Redis(port=s.port)
            for i in range(0, 20000, 5000):
                r.mset({"d:%d" % j: os.urandom(50).hex() for j in range(i, i + 5000)})
            eq(r.save(), True, "%s: SAVE" % who)
            old = open(path, "rb").read()
            r.set("late", "1")
            prlimit(s.proc.pid, 64 * 1024)  # the file is ~2 MB
            out.append(("bgsave", reply(r, "BGSAVE")))
            check(poll(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0), "%s: BGSAVE ends" % who)
            out.append(("status", r.info("persistence")["rdb_last_bgsave_status"]))
            for cmd in (("SET", "x", "1"), ("PING",), ("GET", "late"), ("DEL", "late"), ("INCR", "n"),
                        ("DBSIZE",), ("BGSAVE", "SCHEDULE")):
                out.append((cmd, reply(r, *cmd)))
            poll(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0)
            p = r.pipeline(transaction=False)
            for cmd in (("MULTI",), ("GET", "late"), ("SET", "x", "1"), ("EXEC",)):
                p.execute_command(*cmd)
            out.append(("multi", [str(x) for x in p.execute(raise_on_error=False)]))
            p = r.pipeline(transaction=False)
            r2 = redis.Redis(port=s.port)
            r2.config_set("stop-writes-on-bgsave-error", "no")
            out.append(("stop-writes no", reply(r, "SET", "x", "2")))
            r2.config_set("stop-writes-on-bgsave-error", "yes")
            out.append(("stop-writes yes", reply(r, "SET", "x", "3")))
            r2.config_set("save", "")
            out.append(("no save points", reply(r, "SET", "x", "4")))
            r2.config_set("save", "3600 1")
            out.append(("save points again", reply(r, "SET", "x", "5")))
            eq(open(path, "rb").read(), old, "%s: the old file is kept" % who)
            prlimit(s.proc.pid, "unlimited")
            out.append(("bgsave freed", reply(r, "BGSAVE")))
            check(poll(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0), "%s: BGSAVE ends" % who)
            out.append(("status freed", r.info("persistence")["rdb_last_bgsave_status"]))
            out.append(("set freed", reply(r, "SET", "x", "6")))
            check(open(path, "rb").read() != old, "%s: the new file" % who)
            # the final save cannot create its temp file (a directory in its place, even for root)
            blocker = os.path.join(d, "temp-%d.rdb" % s.proc.pid)
            os.mkdir(blocker)
            out.append(("shutdown", reply(r, "SHUTDOWN")))
            out.append(("alive", reply(r, "PING")))
            out.append(("shutdown nosave+save", reply(r, "SHUTDOWN", "NOSAVE", "SAVE")))
            out.append(("shutdown abort", reply(r, "SHUTDOWN", "ABORT")))
            s.proc.send_signal(signal.SIGTERM)
            check(poll(lambda: s.tail(100000).count("Error trying to save the DB, can't exit.") == 2),
                  "%s: SIGTERM's failed save is logged" % who)
            out.append(("alive after SIGTERM", reply(r, "PING"), s.alive()))
            out.append(("set after", reply(r, "SET", "x", "7")))
            if who == "candidate":  # Redis's own final save would die of SIGXFSZ here
                os.rmdir(blocker)
                prlimit(s.proc.pid, 64 * 1024)
                eq(reply(r, "SHUTDOWN"), "ERR: Errors trying to SHUTDOWN. Check logs.", "SHUTDOWN, disk full")
                eq(r.ping(), True, "alive after a SHUTDOWN on a full disk")
                prlimit(s.proc.pid, "unlimited")
                os.mkdir(blocker)
            try:
                r.execute_command("SHUTDOWN", "FORCE")
                check(False, "%s: SHUTDOWN FORCE: no reply" % who)
            except redis.ConnectionError:
                pass
            try:
                out.append(("force exits", s.proc.wait(30)))
            except subprocess.TimeoutExpired:
                out.append(("force exits", "running"))
            eq(open(path, "rb").read() != old, True, "%s: the file of the last good save" % who)
        finally:
            if s.alive():
                s.proc.kill()
            s.stop()
        got[who] = out
    for a, b in zip(got["redis"], got["candidate"]):
        eq(b, a, "disk: %r" % (a[0],))
    eq(len(got["candidate"]), len(got["redis"]), "disk: steps")
    eq(dict(x[:2] for x in got["candidate"]).get(("SET", "x", "1")), "ERR: " + MISCONF, "the MISCONF text")


LOG_TIME = re.compile(r"^\d+:\w (\d+ \w+ \d+ \d+:\d+:\d+\.\d+) . (.*)$")


def log_times(log, text):
    """the times (s since the epoch) of the log lines (Redis's format) that have text"""
    out = []
    for line in log.splitlines():
        m = LOG_TIME.match(line)
        if m and text in m.group(2):
            day, ms = m.group(1).rsplit(".", 1)
            out.append(time.mktime(time.strptime(day, "%d %b %Y %H:%M:%S")) + int(ms) / 1000)
    return out


def retry(o, work):
    """a save point whose BGSAVE failed tries again only after 5 s (CONFIG_BGSAVE_RETRY_DELAY), then does"""
    if not shutil.which("prlimit"):
        print("SKIP retry: no prlimit")
        return
    for who, binary, threads in both(o):
        d, s = start_in(work, "retry-" + who, binary, threads, "sp-retry-" + who)
        try:
            r = redis.Redis(port=s.port)
            for i in range(0, 20000, 5000):
                r.mset({"d:%d" % j: os.urandom(50).hex() for j in range(i, i + 5000)})
            prlimit(s.proc.pid, 64 * 1024)

            def tries():
                return log_times(s.tail(100000), "Background saving started")
            r.config_set("save", "1 1")
            check(poll(lambda: len(tries()) >= 1 and r.info("persistence")["rdb_last_bgsave_status"] == "err"),
                  "%s: the save point's BGSAVE failed" % who)
            first = len(tries())
            check(poll(lambda: len(tries()) > first), "%s: a retry" % who)
            # when, by the log's clock: the retry waits until the whole seconds since the failed try's start
            # exceed 5, so it starts more than 5 s after it (whenever this test gets to look)
            t = tries()
            check(t[first] - t[first - 1] > 4.9, "%s: the retry %.3f s after the failed try, not within 5 s"
                  % (who, t[first] - t[first - 1]))
            prlimit(s.proc.pid, "unlimited")
            check(poll(lambda: r.info("persistence")["rdb_last_bgsave_status"] == "ok"),
                  "%s: a retry succeeds once there is room" % who)
            r.config_set("save", "")
        finally:
            eq(s.stop(), 0, "%s: exit status" % who)


def main():
    return expect.main(globals(), "save_points", "config,fires,flushall,multi,shutdown,kill9,disk,retry")

if __name__ == "__main__":
    sys.exit(main())
