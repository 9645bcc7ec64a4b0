#!/usr/bin/python3
"""busy_script.py --candidate SERVER [--threads N] [--redis REDIS]: a script
that runs past busy-reply-threshold, against a real redis-server (7.0) side by
side.

- config: busy-reply-threshold and its old name lua-time-limit, CONFIG GET of
  both after CONFIG SET of either, the same as Redis's.
- busy (percore with one shard: with several, a keyless command runs on the
  connection's shard, which need not be the busy one): a script loops
  forever (no writes); once its server answers -BUSY,
  PING, GET, SET, SCRIPT LOAD, SCRIPT FLUSH, SHUTDOWN (without NOSAVE),
  AUTH and HELLO (allow-busy), MULTI's commands and EXEC give Redis's replies; SCRIPT KILL answers +OK and
  the script's client gets Redis's error; the server then serves as before.
  A script that catches errors with pcall is still killed.
- unkillable (one shard): a script that wrote, then loops: SCRIPT KILL answers
  -UNKILLABLE; SHUTDOWN NOSAVE stops the server (exit status 0).
- functions (one shard): the same for a function (FCALL): Redis's -BUSY
  text naming FUNCTION KILL, FUNCTION STATS's running_script, SCRIPT KILL
  refused, FUNCTION KILL ends it; an EVAL is FUNCTION KILL's (and FUNCTION
  STATS's) -BUSY; a function that wrote is -UNKILLABLE.
- shards (percore, threads > 1, not the global-lock build): while the script is busy on its key's
  shard, keys of the other shards are served, the busy shard's keys get
  -BUSY, from a connection of any shard, FUNCTION LOAD (which needs every
  shard's lock) and FUNCTION STATS get -BUSY from any connection as from
  Redis, and SCRIPT KILL from any connection ends it; then a function busy on
  a key's shard is named by FUNCTION STATS from every connection and
  FUNCTION KILL from any ends it.
- queued (percore, threads > 1, not the global-lock build; Redis the same):
  a connection of another shard sends commands on the script's key before
  it turns busy (percore: they wait in its shard's inbox); once busy they
  get -BUSY, as Redis answers what it reads while busy.
- elsewhere (percore, threads > 1, not the global-lock build; Redis the same):
  while busy, from connections of other shards, an EXEC and split commands
  (MSET MGET DEL) that need the script's shard are refused whole at once.
- answered (percore, threads > 1, not the global-lock build): a GET that a
  connection of the script's shard sent to another shard just before the
  script began (that shard was running a short script of its own) is
  answered while the script is busy, as Redis would have answered it then,
  not once the script ended.
- transactions (one shard): WATCH UNWATCH MULTI DISCARD RESET (Redis 7.0's
  allow-busy) answered while busy, a command queued in MULTI then and EXEC
  as Redis; the watch taken while busy holds after; RESET reset.
- written (one shard): WATCH and UNWATCH while a script that wrote is busy
  leave the script's write its effect on the other watches of its key.

busy, functions, queued, elsewhere and transactions also compare INFO
commandstats (calls, rejected_calls, failed_calls) and errorstats after
their steps: a command refused with -BUSY (on its shard, waiting in a busy
shard's inbox, a split command, an EXEC's -EXECABORT) is a rejected call and
an errorstat_BUSY (EXECABORT) as in Redis, and what runs while busy (SCRIPT
KILL, FUNCTION STATS) is counted under its subcommand.

Every check polls; none asserts on timing (the threshold is 200 ms, and the
test waits for the first -BUSY before it looks).  Standard library and
Debian's python3-redis.  Exit 0 when all agree, 1 otherwise, 77 when
redis-server is missing."""
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "clients"))
from diff import Server  # noqa: E402
import expect  # noqa: E402
from expect import check, eq  # noqa: E402
from sort_shards import shard_of  # noqa: E402

import redis  # noqa: E402

LOOP = "local i = 0 while true do i = i + 1 end"
PCALL_LOOP = "while true do pcall(function() local i = 0 while true do i = i + 1 end end) end"
WRITE_LOOP = "redis.call('set', KEYS[1], 'written') local i = 0 while true do i = i + 1 end"
THRESHOLD_MS = 200
DEADLINE_S = 60


def reply(r, *args):
    try:
        return r.execute_command(*args)
    except redis.RedisError as e:
        return "ERR: %s: %s" % (type(e).__name__, e)


def both(o):
    return (("redis", o.redis, None), ("candidate", o.candidate, o.threads))


def start(binary, threads, name, threshold_ms=THRESHOLD_MS):
    s = Server(binary, threads=threads, name=name, extra=["--busy-reply-threshold", str(threshold_ms)])
    s.start()
    return s


def start_one_shard(binary, threads, name):
    """percore with one shard (threads given), as Redis is one: keyless commands run on the connection's
    shard, which must be the busy one, and the global-lock build's other threads would wait for the store
    lock the busy script holds"""
    return start(binary, 1 if threads else None, name)


class Runner:
    """a script run in its own thread, on its own connection; .result once it ended"""

    def __init__(self, port, body, keys=(), cmd="EVAL"):
        self.result = None
        self.done = threading.Event()
        self.t = threading.Thread(target=self._run, args=(port, cmd, body, keys), daemon=True)
        self.t.start()

    def _run(self, port, cmd, body, keys):
        r = redis.Redis(port=port, socket_timeout=DEADLINE_S * 2)
        self.result = reply(r, cmd, body, len(keys), *keys)
        self.done.set()


class Asker:
    """commands sent now on connection c (several: one pipeline), answered in a thread; .result once in"""

    def __init__(self, c, *cmds):
        self.result = None
        self.done = threading.Event()
        threading.Thread(target=self._run, args=(c, cmds), daemon=True).start()

    def _run(self, c, cmds):
        if len(cmds) == 1:
            self.result = reply(c, *cmds[0])
        else:
            p = c.pipeline(transaction=False)
            for cmd in cmds:
                p.execute_command(*cmd)
            self.result = [str(x) for x in p.execute(raise_on_error=False)]
        self.done.set()


def wait_busy(r):
    """until the server (the connection's shard) answers -BUSY"""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        got = reply(r, "PING")
        if isinstance(got, str) and "BUSY" in got:
            return True
        time.sleep(0.02)
    return False


def counts(r):
    """INFO commandstats without times, errorstats and total_error_replies; PING's calls left out (wait_busy
    sends PING until the first -BUSY, as many as it takes), and INFO, CLIENT INFO (conn_off_shard) and CONFIG
    RESETSTAT, the test's own"""
    out = {}
    for name, d in r.info("commandstats").items():
        if name in ("cmdstat_info", "cmdstat_client|info", "cmdstat_config|resetstat"):
            continue
        out[name] = (None if name == "cmdstat_ping" else d["calls"], d["rejected_calls"], d["failed_calls"])
    for name, d in r.info("errorstats").items():
        out[name] = d["count"] if isinstance(d, dict) else d  # redis-py: {"count": n}, or "count=n"
    out["total_error_replies"] = r.info("stats")["total_error_replies"]
    return out


def counts_like(r, want):
    """counts(r), polled until they are `want` (3 s at most: percore's INFO shows the aggregator's sum,
    taken every stats-interval); want None: at once (the reference)"""
    deadline = time.monotonic() + 3
    while True:
        got = counts(r)
        if want is None or got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def wait_slow_logged(s, times=1):
    """until the server logged its script slow (both write Redis's line), without a request to its shard:
    percore's other shards send a command bound for a busy shard -BUSY at once, but one they sent before
    the script turned busy waits in that shard's inbox until the script ends"""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if s.tail(100000).count("Slow script detected") >= times:
            return True
        time.sleep(0.02)
    return False


def config(o, work):
    got = {}
    for who, binary, threads in both(o):
        s = start(binary, threads, "busy-config-" + who)
        try:
            r = redis.Redis(port=s.port)
            out = [r.config_get("busy-reply-threshold"), r.config_get("lua-time-limit")]
            out.append(reply(r, "CONFIG", "SET", "lua-time-limit", "1234"))
            out += [r.config_get("busy-reply-threshold"), r.config_get("lua-time-limit")]
            out.append(reply(r, "CONFIG", "SET", "busy-reply-threshold", "-1"))
            out.append(reply(r, "CONFIG", "SET", "busy-reply-threshold", "abc"))
            got[who] = out
        finally:
            s.stop()
    eq(got["candidate"], got["redis"], "config: busy-reply-threshold / lua-time-limit")


def busy(o, work):
    got = {}
    for who, binary, threads in both(o):
        s = start_one_shard(binary, threads, "busy-" + who)
        out = []
        try:
            r = redis.Redis(port=s.port)
            r.set("k", "v")
            for n, body in enumerate((LOOP, PCALL_LOOP)):
                run = Runner(s.port, body)
                check(wait_slow_logged(s, n + 1) and wait_busy(r), "%s: busy" % who)
                for cmd in (("PING",), ("GET", "k"), ("SET", "k", "w"), ("SCRIPT", "LOAD", "return 1"),
                            ("SCRIPT", "FLUSH"), ("SHUTDOWN",), ("INCR", "n"), ("AUTH", "nopass"),
                            ("HELLO", "2", "SETNAME", "busyconn"), ("HELLO", "4"), ("CLIENT", "GETNAME")):
                    ans = reply(r, *cmd)
                    if cmd[0] == "HELLO" and isinstance(ans, list):  # the connection's id is each server's
                        ans = [0 if i and ans[i - 1] == b"id" else v for i, v in enumerate(ans)]
                    out.append((cmd, ans))
                p = r.pipeline(transaction=False)
                for cmd in (("MULTI",), ("GET", "k"), ("EXEC",)):
                    p.execute_command(*cmd)
                out.append(("pipeline", [str(x) for x in p.execute(raise_on_error=False)]))
                out.append(("kill", reply(r, "SCRIPT", "KILL")))
                check(run.done.wait(DEADLINE_S), "%s: the script ended" % who)
                out.append(("script's reply", run.result))
                out.append(("after", reply(r, "GET", "k"), reply(r, "SCRIPT", "KILL")))
            out.append(("counts", counts_like(r, got["redis"][-1][1] if "redis" in got else None)))
            got[who] = out
        finally:
            eq(s.stop(), 0, "%s: exit status" % who)
    for a, b in zip(got["redis"], got["candidate"]):
        eq(b, a, "busy: %r" % (a[0],))
    eq(len(got["candidate"]), len(got["redis"]), "busy: steps")


def unkillable(o, work):
    got = {}
    for who, binary, threads in both(o):
        s = start_one_shard(binary, threads, "busy-unkillable-" + who)
        out = []
        try:
            r = redis.Redis(port=s.port)
            run = Runner(s.port, WRITE_LOOP, ("w",))
            check(wait_slow_logged(s), "%s: busy" % who)
            out.append(("kill", reply(r, "SCRIPT", "KILL")))
            out.append(("get", reply(r, "GET", "w")))
            try:
                r.execute_command("SHUTDOWN", "NOSAVE")
                out.append(("shutdown nosave", "answered"))
            except redis.ConnectionError:
                out.append(("shutdown nosave", "closed"))
            try:
                out.append(("exit status", s.proc.wait(DEADLINE_S)))
            except Exception:  # noqa: BLE001 (still running: reported as such)
                out.append(("exit status", "running"))
            run.done.wait(5)
            got[who] = out
        finally:
            s.stop()
    eq(got["candidate"], got["redis"], "unkillable")


LOOP_LIB = ("#!lua name=busy\n"
            "redis.register_function('loop', function() local i = 0 while true do i = i + 1 end end)\n"
            "redis.register_function('wloop', function(keys) redis.call('set', keys[1], 'w') "
            "local i = 0 while true do i = i + 1 end end)")


def functions(o, work):
    got = {}
    for who, binary, threads in both(o):
        s = start_one_shard(binary, threads, "busy-functions-" + who)
        out = []
        try:
            r = redis.Redis(port=s.port)
            out.append(("load", reply(r, "FUNCTION", "LOAD", LOOP_LIB)))
            run = Runner(s.port, "loop", cmd="FCALL")
            check(wait_slow_logged(s) and wait_busy(r), "%s: busy function" % who)
            stats = reply(r, "FUNCTION", "STATS")  # the running function, its duration aside
            out.append(("stats", stats[:1] + [stats[1][:5]] + stats[2:]))
            for cmd in (("PING",), ("GET", "k"), ("FCALL", "loop", "0"), ("FUNCTION", "LOAD", LOOP_LIB),
                        ("FUNCTION", "FLUSH"), ("SCRIPT", "KILL"), ("SHUTDOWN",), ("FUNCTION", "KILL")):
                out.append((cmd, reply(r, *cmd)))
            check(run.done.wait(DEADLINE_S), "%s: the function ended" % who)
            out.append(("function's reply", run.result))
            out.append(("after", reply(r, "FUNCTION", "KILL"), reply(r, "FCALL_RO", "loop", "0")))
            run = Runner(s.port, LOOP)  # an EVAL: FUNCTION KILL does not kill it
            check(wait_slow_logged(s, 2) and wait_busy(r), "%s: busy script" % who)
            out += [("eval busy", reply(r, "PING"), reply(r, "FUNCTION", "STATS"), reply(r, "FUNCTION", "KILL"),
                     reply(r, "SCRIPT", "KILL"))]
            check(run.done.wait(DEADLINE_S), "%s: the script ended" % who)
            out.append(("counts", counts_like(r, got["redis"][-1][1] if "redis" in got else None)))
            run = Runner(s.port, "wloop", ("w",), cmd="FCALL")
            check(wait_slow_logged(s, 3), "%s: busy function that wrote" % who)
            out.append(("unkillable", reply(r, "FUNCTION", "KILL")))
            try:
                r.execute_command("SHUTDOWN", "NOSAVE")
            except redis.ConnectionError:
                pass
            s.proc.wait(DEADLINE_S)
            run.done.wait(5)
            got[who] = out
        finally:
            s.stop()
    for a, b in zip(got["redis"], got["candidate"]):
        eq(b, a, "functions: %r" % (a[0],))
    eq(len(got["candidate"]), len(got["redis"]), "functions: steps")


def shards(o, work):
    if o.threads is None or o.threads < 2:
        print("SKIP shards: one shard")
        return
    s = start(o.candidate, o.threads, "busy-shards")
    try:
        r = redis.Redis(port=s.port)
        if r.info("server").get("percore_build") == "global-lock":  # one store: a busy script holds it all
            print("SKIP shards: the global-lock build")
            return
        keys = ["key:%d" % i for i in range(64)]
        r.mset({k: k for k in keys})
        run = Runner(s.port, LOOP, (keys[0],))
        check(wait_slow_logged(s), "the script is busy")
        served = busy_keys = 0
        for conn_i in range(8):  # connections land on different shards
            c = redis.Redis(port=s.port)
            for k in keys:
                got = reply(c, "GET", k)
                if got == k.encode():
                    served += 1
                elif isinstance(got, str) and "BUSY" in got:
                    busy_keys += 1
                else:
                    check(False, "GET %s while busy: %r" % (k, got))
            c.close()
        check(served > 0, "keys of the other shards are served while a script is busy (%d)" % served)
        check(busy_keys > 0, "keys of the busy shard get -BUSY (%d)" % busy_keys)
        busy_err = "ERR: ResponseError: BUSY Redis is busy running a script. You can only call SCRIPT KILL or " \
                   "SHUTDOWN NOSAVE."
        for conn_i in range(8):  # a library change needs every shard's lock: -BUSY from any connection, not a wait
            c = redis.Redis(port=s.port, socket_timeout=DEADLINE_S)
            eq(reply(c, "FUNCTION", "LOAD", LOOP_LIB), busy_err, "FUNCTION LOAD while a script is busy (%d)" % conn_i)
            eq(reply(c, "FUNCTION", "STATS"), busy_err, "FUNCTION STATS while a script is busy (%d)" % conn_i)
            c.close()
        killer = redis.Redis(port=s.port)
        eq(reply(killer, "SCRIPT", "KILL"), b"OK", "SCRIPT KILL from any connection")
        check(run.done.wait(DEADLINE_S), "the script ended")
        check(isinstance(run.result, str) and "Script killed by user with SCRIPT KILL" in run.result,
              "the script's client: %r" % (run.result,))
        eq(reply(r, "GET", keys[0]), keys[0].encode(), "the busy shard serves again")
        r.execute_command("FUNCTION", "LOAD", LOOP_LIB)
        run = Runner(s.port, "loop", (keys[0],), cmd="FCALL")  # a function busy on keys[0]'s shard
        check(wait_slow_logged(s, 2), "the function is busy")
        for conn_i in range(8):  # FUNCTION STATS from a connection of any shard names it
            c = redis.Redis(port=s.port, socket_timeout=DEADLINE_S)
            stats = c.execute_command("FUNCTION", "STATS")
            running = dict(zip(stats[1][0::2], stats[1][1::2])) if stats[1] else {}
            eq((running.get(b"name"), running.get(b"command")), (b"loop", [b"FCALL", b"loop", b"1", keys[0].encode()]),
               "FUNCTION STATS's running_script from connection %d" % conn_i)
            c.close()
        eq(reply(killer, "FUNCTION", "KILL"), b"OK", "FUNCTION KILL from any connection")
        check(run.done.wait(DEADLINE_S), "the function ended")
    finally:
        eq(s.stop(), 0, "exit status")


QUEUED_THRESHOLD_MS = 2000


def conn_off_shard(port, shard):
    """a connection homed on a shard other than `shard` (percore's CLIENT INFO says which)"""
    for _ in range(256):
        c = redis.Redis(port=port, socket_timeout=DEADLINE_S * 2)
        if "shard=%d" % shard not in c.execute_command("CLIENT", "INFO").decode().split():
            return c
        c.close()
    raise AssertionError("no connection landed off shard %d" % shard)


def queued(o, work):
    """commands for the script's shard that a connection of another shard sent before the script turned
    busy (they wait in its inbox) get -BUSY once it is, as Redis answers a command read while busy (not
    a split command's part that locks its keys first: it waits for the script's end, as the parts before
    it have run)"""
    if o.threads is None or o.threads < 2:
        print("SKIP queued: one shard")
        return
    key = "qkey"
    got = {}
    for who, binary, threads in both(o):
        s = start(binary, threads, "busy-queued-" + who, QUEUED_THRESHOLD_MS)
        try:
            r = redis.Redis(port=s.port)
            if r.info("server").get("percore_build") == "global-lock":  # one store: a busy script holds it all
                print("SKIP queued: the global-lock build")
                return
            r.set(key, "v")
            conns = [conn_off_shard(s.port, shard_of(key, threads)) if threads else redis.Redis(port=s.port)
                     for _ in range(2)]
            run = Runner(s.port, LOOP, (key,))
            time.sleep(0.5)  # the script runs, not yet past the threshold (a command sent later gets -BUSY too)
            askers = [Asker(conns[0], ("GET", key)),
                      Asker(conns[1], ("GET", key), ("STRLEN", key), ("SET", key, "w"), ("EXISTS", key, key))]
            check(wait_slow_logged(s), "%s: busy" % who)
            for a in askers:
                a.done.wait(DEADLINE_S / 2)  # answered while busy (else once killed: a value, reported)
            out = [("kill", reply(r, "SCRIPT", "KILL"))]
            check(run.done.wait(DEADLINE_S), "%s: the script ended" % who)
            for a in askers:
                check(a.done.wait(DEADLINE_S), "%s: answered" % who)
                out.append(a.result)
            out.append(reply(conns[0], "GET", key))
            out.append(counts_like(r, got["redis"][-1] if "redis" in got else None))
            got[who] = out
        finally:
            eq(s.stop(), 0, "%s: exit status" % who)
    eq(got["candidate"], got["redis"], "queued")


def conn_on_shard(port, shard):
    """a connection homed on `shard` (percore's CLIENT INFO says which)"""
    for _ in range(256):
        c = redis.Redis(port=port, socket_timeout=DEADLINE_S * 2)
        if "shard=%d" % shard in c.execute_command("CLIENT", "INFO").decode().split():
            return c
        c.close()
    raise AssertionError("no connection landed on shard %d" % shard)


TIMED_READ = ("local t = redis.call('time') local start = t[1] * 1000 + math.floor(t[2] / 1000) "
              "while true do t = redis.call('time') "
              "if t[1] * 1000 + math.floor(t[2] / 1000) - start > tonumber(ARGV[1]) then return 1 end end")


def answered(o, work):
    """a reply that comes back to a connection of the busy shard is answered from the script's hook"""
    if o.threads is None or o.threads < 2:
        print("SKIP answered: one shard")
        return
    s = start(o.candidate, o.threads, "busy-answered", QUEUED_THRESHOLD_MS)
    try:
        r = redis.Redis(port=s.port)
        if r.info("server").get("percore_build") == "global-lock":  # no handoff: every key is its thread's
            print("SKIP answered: the global-lock build")
            return
        akey, bkey = "akey", "bkey:0"
        while shard_of(bkey, o.threads) == shard_of(akey, o.threads):
            bkey = "bkey:%d" % (int(bkey.split(":")[1]) + 1)
        r.set(bkey, "bv")
        x, script_conn = (conn_on_shard(s.port, shard_of(akey, o.threads)) for _ in range(2))
        other = Asker(redis.Redis(port=s.port, socket_timeout=DEADLINE_S), ("EVAL", TIMED_READ, 1, bkey,
                                                                             QUEUED_THRESHOLD_MS // 2))
        time.sleep(0.2)  # bkey's shard runs that script: the GET below waits there
        get = Asker(x, ("GET", bkey))
        time.sleep(0.2)  # the GET sent, the script on akey's shard begins (it ends after bkey's shard's)
        run = Asker(script_conn, ("EVAL", LOOP, 1, akey))  # from akey's shard too: it runs there at once
        check(wait_slow_logged(s), "busy")
        check(get.done.wait(DEADLINE_S / 2), "the GET sent before the script began is answered while it is busy")
        eq(get.result, b"bv", "its reply")
        check(not run.done.is_set(), "the script was still running")
        check(other.done.wait(DEADLINE_S), "the other shard's script ended")
        eq(reply(r, "SCRIPT", "KILL"), b"OK", "SCRIPT KILL")
        check(run.done.wait(DEADLINE_S), "the script ended")
        eq(reply(x, "GET", bkey), b"bv", "the connection after")
    finally:
        eq(s.stop(), 0, "exit status")


def elsewhere(o, work):
    """while the script is busy, connections of other shards: an EXEC of a transaction begun before, and
    commands split over shards, that need the script's shard (a key, a watched key) get Redis's -EXECABORT
    / -BUSY, none of it run (not a wait for the script's end, and no part run on the other shards; one
    that needs no key of the busy shard runs, unlike Redis's, so none is here)"""
    if o.threads is None or o.threads < 2:
        print("SKIP elsewhere: one shard")
        return
    key, other = "ekey", "eother:0"
    while shard_of(other, o.threads) == shard_of(key, o.threads):
        other = "eother:%d" % (int(other.split(":")[1]) + 1)
    got = {}
    for who, binary, threads in both(o):
        s = start(binary, threads, "busy-elsewhere-" + who)
        try:
            r = redis.Redis(port=s.port)
            if r.info("server").get("percore_build") == "global-lock":  # one store: a busy script holds it all
                print("SKIP elsewhere: the global-lock build")
                return
            r.mset({key: "v", other: "w"})
            conns = [conn_off_shard(s.port, shard_of(key, threads)) if threads else redis.Redis(port=s.port)
                     for _ in range(4)]
            conns[0].execute_command("MULTI")  # one key on the script's shard, one on another
            conns[0].execute_command("SET", other, "changed")
            conns[0].execute_command("SET", key, "changed")
            conns[1].execute_command("WATCH", key)  # watched there, queued elsewhere
            conns[1].execute_command("MULTI")
            conns[1].execute_command("SET", other, "changed")
            run = Runner(s.port, LOOP, (key,))
            check(wait_slow_logged(s), "%s: busy" % who)
            askers = [Asker(conns[0], ("EXEC",)), Asker(conns[1], ("EXEC",)),
                      Asker(conns[2], ("MSET", other, "changed", key, "changed")),
                      Asker(conns[3], ("MGET", other, key), ("DEL", other, key))]
            for a in askers:
                a.done.wait(DEADLINE_S / 2)  # answered while busy (else once killed, reported)
            out = [("kill", reply(r, "SCRIPT", "KILL"))]
            check(run.done.wait(DEADLINE_S), "%s: the script ended" % who)
            for a in askers:
                check(a.done.wait(DEADLINE_S), "%s: answered" % who)
                out.append(a.result)
            out.append(reply(r, "MGET", key, other))
            out.append(counts_like(r, got["redis"][-1] if "redis" in got else None))
            got[who] = out
        finally:
            eq(s.stop(), 0, "%s: exit status" % who)
    eq(got["candidate"], got["redis"], "elsewhere")


def transactions(o, work):
    """WATCH UNWATCH MULTI DISCARD RESET (allow-busy in Redis 7.0) while a script is busy, a command queued
    in MULTI then (-BUSY, EXEC aborts), an EXEC of a transaction begun before; the watch taken while busy
    holds once it ended"""
    got = {}
    for who, binary, threads in both(o):
        s = start_one_shard(binary, threads, "busy-transactions-" + who)
        out = []
        try:
            r, named, early = (redis.Redis(port=s.port) for _ in range(3))
            r.set("k", "v")
            named.execute_command("CLIENT", "SETNAME", "before")
            named.execute_command("WATCH", "k")
            early.execute_command("MULTI")
            early.execute_command("SET", "e", "1")
            run = Runner(s.port, LOOP)
            check(wait_slow_logged(s) and wait_busy(r), "%s: busy" % who)
            for cmd in (("WATCH", "k"), ("UNWATCH",), ("MULTI",), ("WATCH", "k"), ("GET", "k"), ("MULTI",),
                        ("DISCARD",), ("DISCARD",), ("MULTI",), ("EXEC",), ("EXEC",), ("WATCH", "k", "w")):
                out.append((cmd, reply(r, *cmd)))
            out.append(("early exec", reply(early, "EXEC")))
            out.append(("reset", reply(named, "RESET")))
            out.append(("kill", reply(r, "SCRIPT", "KILL")))
            check(run.done.wait(DEADLINE_S), "%s: the script ended" % who)
            out.append(("after", reply(named, "CLIENT", "GETNAME"), reply(early, "GET", "e")))
            redis.Redis(port=s.port).set("k", "changed")  # the watch taken while busy sees it
            p = r.pipeline(transaction=False)
            for cmd in (("MULTI",), ("GET", "k"), ("EXEC",)):
                p.execute_command(*cmd)
            out.append(("watched exec", [str(x) for x in p.execute(raise_on_error=False)]))
            named.execute_command("MULTI")  # RESET dropped its watch
            named.execute_command("GET", "k")
            out.append(("unwatched exec", reply(named, "EXEC")))
            out.append(("counts", counts_like(r, got["redis"][-1][1] if "redis" in got else None)))
            got[who] = out
        finally:
            eq(s.stop(), 0, "%s: exit status" % who)
    for a, b in zip(got["redis"], got["candidate"]):
        eq(b, a, "transactions: %r" % (a[0],))
    eq(len(got["candidate"]), len(got["redis"]), "transactions: steps")


TIMED_WRITE = ("redis.call('set', KEYS[1], 'x') local t = redis.call('time') "
               "local start = t[1] * 1000 + math.floor(t[2] / 1000) "
               "while true do t = redis.call('time') "
               "if t[1] * 1000 + math.floor(t[2] / 1000) - start > tonumber(ARGV[1]) then return 1 end end")


def written(o, work):
    """WATCH and UNWATCH while a script that wrote is busy: the script's write still touches the watches of
    its key (its record of what it did is not lost to theirs)"""
    got = {}
    for who, binary, threads in both(o):
        s = start_one_shard(binary, threads, "busy-written-" + who)
        try:
            watcher, other = redis.Redis(port=s.port), redis.Redis(port=s.port)
            watcher.execute_command("WATCH", "wk")
            r = redis.Redis(port=s.port, socket_timeout=DEADLINE_S * 2)
            run = Asker(r, ("EVAL", TIMED_WRITE, 1, "wk", THRESHOLD_MS * 10))
            check(wait_slow_logged(s), "%s: busy" % who)
            out = [reply(other, "WATCH", "wk", "ok"), reply(other, "UNWATCH"), reply(other, "WATCH", "ok")]
            check(run.done.wait(DEADLINE_S), "%s: the script ended" % who)
            watcher.execute_command("MULTI")
            watcher.execute_command("GET", "wk")
            other.execute_command("MULTI")
            other.execute_command("GET", "wk")
            got[who] = out + [run.result, reply(watcher, "EXEC"), reply(other, "EXEC")]
        finally:
            eq(s.stop(), 0, "%s: exit status" % who)
    eq(got["candidate"], got["redis"], "written")


def main():
    return expect.main(globals(), "busy_script", "config,busy,unkillable,functions,shards,queued,answered,elsewhere,transactions,written")

if __name__ == "__main__":
    sys.exit(main())
