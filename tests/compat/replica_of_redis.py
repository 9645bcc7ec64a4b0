#!/usr/bin/python3
"""replica_of_redis.py PERCORE [THREADS]: percore as the replica of a real
Redis master, beside a real Redis replica of the same master.

A seeded random write load of every type (expiries, MULTI/EXEC, SELECT)
runs on the master; both replicas must reach the master's offset and hold
the same data as the master (DEBUG DIGEST, and DBSIZE per database), after:
  1. the first full sync (a diskless master: the RDB between EOF marks),
     percore made a replica by `replicaof` at start;
  2. a link break the master's backlog covers (a partial resync: the
     master's sync_partial_ok counts it);
  3. a link break after the master's replication id changed (a full sync
     again, the RDB sent with its length: disk-based);
  4. REPLICAOF of a master that is not there, then back (the REPLICAOF
     command path).
Between them: a replica refuses clients' writes with Redis's -READONLY
bytes, ROLE and INFO replication say what Redis's replica says, REPLCONF
GETACK is answered with the offset.  At the end REPLICAOF NO ONE: a master
with the data, the old replication id as its second, writable.  Then a fake
master that sends garbage as its RDB, and one that stops mid-command: the
server stays up, says why in its log, and serves clients."""
import os
import random
import re
import shutil
import socket
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from diff import Server, free_port  # noqa: E402

try:
    import redis
except ImportError:
    print("SKIP: python3-redis is not installed (apt-get install python3-redis)")
    sys.exit(77)

REDIS = os.environ.get("REDIS_SERVER", "/usr/bin/redis-server")
SYNC_S = 60  # a sanitizer build under load is slow
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL " + what)
    return ok


def info(r, section):
    return r.info(section)


def wait_synced(master, replicas, what):
    """every replica's link up at the master's offset"""
    deadline = time.monotonic() + SYNC_S
    while time.monotonic() < deadline:
        want = info(master, "replication")["master_repl_offset"]
        states = []
        for name, r in replicas:
            i = info(r, "replication")
            states.append((name, i.get("master_link_status"), i.get("slave_repl_offset")))
        if all(s[1] == "up" and s[2] == want for s in states):
            return True
        time.sleep(0.1)
    return check(False, "%s: replicas not at the master's offset %s in %d s: %s" % (what, want, SYNC_S, states))


def poll_sync_started(master):
    """both replicas reconnected and the master syncs them again (or already did)"""
    deadline = time.monotonic() + SYNC_S
    while time.monotonic() < deadline:
        if info(master, "replication").get("connected_slaves", 0) >= 2:
            return True
        time.sleep(0.05)
    return False


def compare(master, replicas, what):
    """the same data: the master's expiry paused (its DELs would race the digests), the replicas caught up"""
    master.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        wait_synced(master, replicas, what)
        compare_now(master, replicas, what)
    finally:
        master.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def compare_now(master, replicas, what):
    want = master.execute_command("DEBUG", "DIGEST")
    sizes = {db: v["keys"] for db, v in info(master, "keyspace").items()}
    for name, r in replicas:
        got = r.execute_command("DEBUG", "DIGEST")
        check(got == want, "%s: %s's DEBUG DIGEST %s, the master's %s" % (what, name, got, want))
        gsizes = {db: v["keys"] for db, v in info(r, "keyspace").items()}
        check(gsizes == sizes, "%s: %s's keys per db %s, the master's %s" % (what, name, gsizes, sizes))
        if got != want:  # which keys: DIGEST-VALUE per key of db 0
            for k in sorted(master.keys("*"))[:2000]:
                a = master.execute_command("DEBUG", "DIGEST-VALUE", k)
                b = r.execute_command("DEBUG", "DIGEST-VALUE", k)
                if a != b:
                    print("   %s: key %r differs (type %s)" % (name, k, master.type(k)))
                    break


def write_load(m, rng, n, tag):
    """n seeded random writes of every type on the master, pipelined, some in MULTI/EXEC and other dbs"""
    p = m.pipeline(transaction=False)
    for i in range(n):
        k = "%s:%d" % (rng.choice("sxhlzSe"), rng.randrange(300))
        op = rng.randrange(22)
        v = "%s-%d" % (tag, rng.randrange(1000))
        if op == 0:
            p.set(k, v)
        elif op == 1:
            p.set(k, v, px=rng.randrange(50, 200000))
        elif op == 2:
            p.incrby("n:%d" % rng.randrange(50), rng.randrange(-5, 10))
        elif op == 3:
            p.append("s:%d" % rng.randrange(300), v)
        elif op == 4:
            p.hset("h:%d" % rng.randrange(100), mapping={"f%d" % rng.randrange(20): v, "g": i})
        elif op == 5:
            p.hdel("h:%d" % rng.randrange(100), "f%d" % rng.randrange(20))
        elif op == 6:
            p.rpush("l:%d" % rng.randrange(100), *[v] * rng.randrange(1, 4))
        elif op == 7:
            p.lpop("l:%d" % rng.randrange(100))
        elif op == 8:
            p.sadd("S:%d" % rng.randrange(100), *["m%d" % rng.randrange(200) for _ in range(3)])
        elif op == 9:
            p.srem("S:%d" % rng.randrange(100), "m%d" % rng.randrange(200))
        elif op == 10:
            p.zadd("z:%d" % rng.randrange(100), {"m%d" % rng.randrange(200): rng.random() * 100})
        elif op == 11:
            p.zincrby("z:%d" % rng.randrange(100), 2.5, "m%d" % rng.randrange(200))
        elif op == 12:
            p.delete(k, "x:%d" % rng.randrange(300))
        elif op == 13:
            p.expire(k, rng.randrange(100, 10000))
        elif op == 14:
            p.persist(k)
        elif op == 15:
            p.xadd("x:%d" % rng.randrange(20), {"f": v, "i": i}, maxlen=50, approximate=False)
            # `~` with LIMIT: the master sends `MAXLEN = <n> LIMIT <m>`, which only a master's client may
            p.execute_command("XADD", "y:%d" % rng.randrange(5), "MAXLEN", "~", 30, "LIMIT", 10, "*", "f", v)
        elif op == 16:
            p.mset({"m:%d" % rng.randrange(300): v for _ in range(4)})
        elif op == 17:
            p.execute_command("SELECT", rng.randrange(1, 4))
            p.set(k, v)
            p.execute_command("SELECT", 0)
        elif op == 18:
            p.execute(raise_on_error=False)  # a MULTI/EXEC of its own, in order with the rest
            t = m.pipeline(transaction=True)
            t.incr("n:%d" % rng.randrange(50))
            t.rpush("l:%d" % rng.randrange(100), v)
            t.set("s:%d" % rng.randrange(300), v)
            t.execute(raise_on_error=False)
        elif op == 19:
            p.setbit("b:%d" % rng.randrange(30), rng.randrange(4000), 1)
        elif op == 20:
            p.pfadd("p:%d" % rng.randrange(10), *["e%d" % rng.randrange(10000) for _ in range(5)])
        else:
            p.pexpire("e:%d" % rng.randrange(300), rng.randrange(1, 30))  # some expire during the run
            p.set("e:%d" % rng.randrange(300), v, px=rng.randrange(1, 40))
        if i % 200 == 199:
            p.execute(raise_on_error=False)  # WRONGTYPE and the like are part of the load
    p.execute(raise_on_error=False)


def run_fake(pc, payload, logfile, expect_line, what):
    """percore made a replica of a fake master sending payload: it stays up, logs expect_line"""
    holder, done = [], threading.Event()
    t = threading.Thread(target=fake_handshake_master, args=(payload, holder, done), daemon=True)
    t.start()
    while not holder:
        time.sleep(0.01)
    pc.execute_command("REPLICAOF", "127.0.0.1", holder[0])
    deadline = time.monotonic() + 20
    seen = False
    while time.monotonic() < deadline and not seen:
        with open(logfile, "rb") as f:
            seen = expect_line in f.read()
        time.sleep(0.1)
    check(seen, "%s: the log never said %r" % (what, expect_line))
    check(pc.ping(), "%s: the server answers PING" % what)
    pc.execute_command("REPLICAOF", "NO", "ONE")
    done.set()
    t.join(15)


def fake_handshake_master(payload, port_holder, done):
    """answers PING +PONG, REPLCONF +OK, PSYNC with payload, then holds the socket until done"""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)
    ls.settimeout(30)
    port_holder.append(ls.getsockname()[1])
    try:
        c, _ = ls.accept()
        c.settimeout(15)
        buf = b""
        while True:
            chunk = c.recv(4096)
            if not chunk:
                return
            buf += chunk
            while True:  # whole RESP commands
                m = re.match(rb"\*(\d+)\r\n", buf)
                if not m:
                    break
                pos, args, ok = m.end(), [], True
                for _ in range(int(m.group(1))):
                    mm = re.match(rb"\$(\d+)\r\n", buf[pos:])
                    if not mm or len(buf) < pos + mm.end() + int(mm.group(1)) + 2:
                        ok = False
                        break
                    start = pos + mm.end()
                    args.append(buf[start:start + int(mm.group(1))])
                    pos = start + int(mm.group(1)) + 2
                if not ok:
                    break
                buf = buf[pos:]
                name = args[0].upper()
                if name == b"PSYNC":
                    c.sendall(payload)
                    done.wait(20)
                    c.close()
                    return
                c.sendall(b"+PONG\r\n" if name == b"PING" else b"+OK\r\n")
    except OSError:
        pass
    finally:
        ls.close()


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    if not os.path.exists(REDIS):
        print("SKIP: %s is not installed" % REDIS)
        return 77
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    tmp = tempfile.mkdtemp(prefix="replica-of-redis-")
    common = ["--enable-debug-command", "yes"]
    master = Server(REDIS, name="repl-master",
                    extra=common + ["--dir", tmp, "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
                                    "--repl-backlog-size", "10mb"])
    master.start()
    os.makedirs(os.path.join(tmp, "r"))
    os.makedirs(os.path.join(tmp, "p"))
    rrep = Server(REDIS, name="repl-redis-replica",
                  extra=common + ["--dir", os.path.join(tmp, "r"), "--replicaof", "127.0.0.1", str(master.port)])
    prep = Server(sys.argv[1], threads=threads, name="repl-percore-replica",
                  extra=common + ["--dir", os.path.join(tmp, "p"), "--replicaof", "127.0.0.1 %d" % master.port])
    try:
        m = redis.Redis(port=master.port, socket_timeout=20)
        rng = random.Random(20261207)
        write_load(m, rng, 3000, "pre")  # the first full sync carries these
        rrep.start()
        prep.start()
        rr = redis.Redis(port=rrep.port, socket_timeout=20)
        pc = redis.Redis(port=prep.port, socket_timeout=20)
        replicas = [("redis replica", rr), ("percore", pc)]

        # 1. the first full sync (diskless), then the stream
        wait_synced(m, replicas, "first full sync")
        write_load(m, rng, 3000, "stream")
        wait_synced(m, replicas, "stream")
        compare(m, replicas, "after the first full sync and the stream")
        check(os.path.exists(os.path.join(tmp, "p", "dump.rdb")), "the full sync's RDB kept as dir/dump.rdb")

        # a replica's rules, as Redis's replica has them
        # scripts: a write inside one is refused (the script's earlier reads stand), a script whose flags
        # say it writes is refused whole, a no-writes one runs
        m.execute_command("FUNCTION", "LOAD", "REPLACE", "#!lua name=rlib\n"
                          "redis.register_function('w', function(k) return redis.call('set', k[1], 'x') end)\n"
                          "redis.register_function{function_name='r', callback=function(k) "
                          "return redis.call('get', k[1]) end, flags={'no-writes'}}")
        wait_synced(m, replicas, "a function library loaded")
        for cmd in (["SET", "k", "v"], ["DEL", "s:1"], ["MULTI"], ["INCR", "n:1"], ["EXEC"],
                    ["EVAL", "return redis.call('set', KEYS[1], 'x')", 1, "s:1"],
                    ["EVAL", "local v = redis.call('get', KEYS[1]) return redis.pcall('incr', KEYS[1])", 1, "n:1"],
                    ["EVAL", "#!lua\nreturn redis.call('get', KEYS[1])", 1, "s:1"],
                    ["EVAL", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", 1, "s:1"],
                    ["EVAL_RO", "return redis.call('get', KEYS[1])", 1, "s:1"],
                    ["FCALL", "w", 1, "s:2"], ["FCALL", "r", 1, "s:2"], ["FCALL_RO", "r", 1, "s:2"],
                    ["FUNCTION", "DELETE", "rlib"], ["SCRIPT", "LOAD", "return 1"]):
            a = b = None
            try:
                a = rr.execute_command(*cmd)
            except redis.ResponseError as e:
                a = "error: %s" % e
            try:
                b = pc.execute_command(*cmd)
            except redis.ResponseError as e:
                b = "error: %s" % e
            check(a == b, "%s on a replica: redis %r, percore %r" % (cmd, a, b))
        rrole, prole = rr.execute_command("ROLE"), pc.execute_command("ROLE")
        check(rrole[:4] == prole[:4] and isinstance(prole[4], int),
              "ROLE: redis %r, percore %r" % (rrole, prole))
        ri, pi = info(rr, "replication"), info(pc, "replication")
        for r in (rr, pc):
            r.config_set("replica-priority", "7")
        ri, pi = info(rr, "replication"), info(pc, "replication")
        for f in ("role", "master_host", "master_port", "master_link_status", "master_sync_in_progress",
                  "slave_read_only", "master_replid", "slave_repl_offset", "master_repl_offset", "slave_priority"):
            check(ri.get(f) == pi.get(f), "INFO replication %s: redis %r, percore %r" % (f, ri.get(f), pi.get(f)))
        hello = socket.create_connection(("127.0.0.1", prep.port), timeout=10)
        hello.sendall(b"*2\r\n$5\r\nHELLO\r\n$1\r\n2\r\n")
        time.sleep(0.2)
        got = hello.recv(65536)
        hello.close()
        check(b"$4\r\nrole\r\n$7\r\nreplica\r\n" in got, "HELLO's role on a replica: %r" % got)

        # the master client: CLIENT LIST TYPE master shows it (flags M), TYPE normal and pubsub do not
        for name, r in replicas:
            lines = r.execute_command("CLIENT", "LIST", "TYPE", "master").decode().strip().splitlines()
            check(len(lines) == 1 and " flags=M " in lines[0], "%s: CLIENT LIST TYPE master: %r" % (name, lines))
            normal = r.execute_command("CLIENT", "LIST", "TYPE", "normal").decode()
            check(" flags=M " not in normal, "%s: the master client listed as TYPE normal" % name)

        # busy read-only scripts on the replicas (on several shards of percore's) while the master writes:
        # the master's stream waits for them, as Redis's replica reads nothing of its master meanwhile
        busy_lua = "local t0 = redis.call('TIME') local n = 0 repeat n = n + 1 " \
                   "local t = redis.call('TIME') until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 1200000 return n"
        for r in (rr, pc):
            r.config_set("busy-reply-threshold", "100")
        busy = []
        for r in [rr] + [redis.Redis(port=prep.port, socket_timeout=30) for _ in range(6)]:
            t = threading.Thread(target=r.execute_command, args=("EVAL_RO", busy_lua, 0), daemon=True)
            t.start()
            busy.append(t)
        time.sleep(0.3)
        write_load(m, rng, 1000, "busy")
        for t in busy:
            t.join(60)
        for r in (rr, pc):
            r.config_set("busy-reply-threshold", "5000")
        compare(m, replicas, "after the master wrote while scripts were busy on the replicas")

        # 2. a break the backlog covers: a partial resync (the replicas drop their master clients)
        before = info(m, "stats")["sync_partial_ok"]
        for name, r in replicas:  # past maxmemory too: a replica evicts nothing, refuses none of it
            r.config_set("maxmemory-policy", "allkeys-lru")
            r.config_set("maxmemory", "100kb")
            check(r.execute_command("CLIENT", "KILL", "TYPE", "master") == 1, "%s: CLIENT KILL TYPE master" % name)
        write_load(m, rng, 1500, "partial")
        wait_synced(m, replicas, "partial resync")
        check(info(m, "stats")["sync_partial_ok"] >= before + 2,
              "the master counted no partial resync for both replicas (sync_partial_ok %d -> %d)" % (
                  before, info(m, "stats")["sync_partial_ok"]))
        compare(m, replicas, "after a partial resync (and past maxmemory)")
        for name, r in replicas:
            r.config_set("maxmemory", "0")

        # REPLCONF GETACK in the stream: the master's view of our offset moves to its own at once
        m.set("before-wait", "1")
        check(m.execute_command("WAIT", "2", "10000") == 2, "WAIT 2 answered by both replicas")
        rows = [v for k, v in info(m, "replication").items() if k.startswith("slave") and isinstance(v, dict)]
        check(len(rows) == 2 and rows[0]["offset"] == rows[1]["offset"],
              "after WAIT: both replicas ACKed the same offset (GETACK's own bytes not counted): %r" % rows)

        # 3. a new replication id: a full sync again, the RDB sent with its length (disk-based)
        full_before = info(m, "stats")["sync_full"]
        m.config_set("repl-diskless-sync", "no")
        m.execute_command("DEBUG", "CHANGE-REPL-ID")
        m.execute_command("CLIENT", "KILL", "TYPE", "replica")
        # writes all through the resync (while the RDB is made, sent and loaded): they reach the replicas
        # after the RDB, from the master's buffer
        stop = threading.Event()
        wrng = random.Random(7)
        writer = threading.Thread(target=lambda: [write_load(redis.Redis(port=master.port, socket_timeout=20),
                                                             wrng, 300, "during") for _ in iter(stop.is_set, True)])
        writer.start()
        check(poll_sync_started(m), "the replicas began a full sync while the writes went on")
        time.sleep(0.5)
        stop.set()
        writer.join(60)
        write_load(m, rng, 1500, "full")
        wait_synced(m, replicas, "second full sync")
        check(info(m, "stats")["sync_full"] >= full_before + 2,
              "the master counted no new full syncs (sync_full %d -> %d)" % (full_before, info(m, "stats")["sync_full"]))
        compare(m, replicas, "after a disk-based full sync")

        # 4. REPLICAOF a master that is not there: the link retries; back to the master: synced again
        gone = free_port()
        check(pc.execute_command("REPLICAOF", "127.0.0.1", gone) == b"OK", "REPLICAOF another master")
        time.sleep(1.5)
        pi = info(pc, "replication")
        check(pi.get("master_port") == gone and pi.get("master_link_status") == "down",
              "a replica of nobody: port %r, link %r" % (pi.get("master_port"), pi.get("master_link_status")))
        # replica-serve-stale-data no, the link down: -MASTERDOWN but for the stale-ok commands (a Redis
        # replica of the same nobody says the same)
        rr.execute_command("REPLICAOF", "127.0.0.1", gone)
        time.sleep(1.5)
        for r in (rr, pc):
            r.config_set("replica-serve-stale-data", "no")
        for cmd in (["GET", "s:1"], ["DBSIZE"], ["SET", "k", "v"], ["PING"], ["ECHO", "x"], ["INFO", "server"],
                    ["CONFIG", "GET", "port"], ["MULTI"], ["GET", "x"], ["EXEC"]):
            got = []
            for r in (rr, pc):
                try:
                    v = r.execute_command(*cmd)
                    got.append("ok" if cmd[0] in ("INFO", "CONFIG") else v)
                except redis.ResponseError as e:
                    got.append("error: %s" % e)
            check(got[0] == got[1], "stale data off, link down, %s: redis %r, percore %r" % (cmd, got[0], got[1]))
        for r in (rr, pc):
            r.config_set("replica-serve-stale-data", "yes")
        rr.execute_command("REPLICAOF", "127.0.0.1", master.port)
        check(pc.execute_command("REPLICAOF", "127.0.0.1", master.port) == b"OK", "REPLICAOF the master again")
        check(pc.execute_command("REPLICAOF", "127.0.0.1", master.port) == b"OK Already connected to specified master",
              "REPLICAOF the same master twice")
        check(pc.config_get("replicaof").get("replicaof") == "127.0.0.1 %d" % master.port,
              "CONFIG GET replicaof: %r" % pc.config_get("replicaof"))
        write_load(m, rng, 1000, "back")
        wait_synced(m, replicas, "back to the master")
        compare(m, replicas, "back to the master")

        # REPLICAOF NO ONE: a master with the data, the old id as its second
        old_id = info(m, "replication")["master_replid"]
        m.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")  # no DEL in flight while the link goes
        wait_synced(m, replicas, "before REPLICAOF NO ONE")
        digest = m.execute_command("DEBUG", "DIGEST")
        pc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")  # a master expires keys: not before the digest
        check(pc.execute_command("REPLICAOF", "NO", "ONE") == b"OK", "REPLICAOF NO ONE")
        m.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        pi = info(pc, "replication")
        check(pi["role"] == "master" and pi["master_replid2"] == old_id and pi["master_replid"] != old_id,
              "after REPLICAOF NO ONE: %r" % pi)
        check(pc.execute_command("DEBUG", "DIGEST") == digest, "REPLICAOF NO ONE keeps the data")
        pc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        check(pc.set("after", "1") and pc.get("after") == b"1", "a master again: writable")
        check(pc.execute_command("ROLE")[0] == b"master", "ROLE a master again")
        check(pc.config_get("replicaof").get("replicaof") == "", "CONFIG GET replicaof after NO ONE")

        # a replica with appendonly yes: the full sync's keys reach its AOF (the rewrite that follows the
        # load), then the stream's; restarted from its AOF alone, it has the master's data
        os.makedirs(os.path.join(tmp, "a"))
        arep = Server(sys.argv[1], threads=threads, name="repl-percore-aof",
                      extra=common + ["--dir", os.path.join(tmp, "a"), "--appendonly", "yes",
                                      "--replicaof", "127.0.0.1 %d" % master.port])
        arep.start()
        try:
            ac = redis.Redis(port=arep.port, socket_timeout=20)
            write_load(m, rng, 1000, "aof")
            m.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
            wait_synced(m, [("percore aof", ac)], "a replica with appendonly yes")
            deadline = time.monotonic() + SYNC_S  # the rewrite after the full sync, done
            while time.monotonic() < deadline and (info(ac, "persistence")["aof_rewrite_in_progress"] or
                                                   info(ac, "persistence")["aof_rewrite_scheduled"]):
                time.sleep(0.1)
            digest = m.execute_command("DEBUG", "DIGEST")
            check(ac.execute_command("DEBUG", "DIGEST") == digest, "a replica with appendonly yes: synced")
            ac.execute_command("REPLICAOF", "NO", "ONE")
            ac.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
            check(arep.stop() == 0, "the AOF replica's exit status")
            arep.extra = [a for a in arep.extra if a not in ("--replicaof", "127.0.0.1 %d" % master.port)]
            arep.extra += ["--enable-debug-command", "yes"]
            arep.start()
            ac = redis.Redis(port=arep.port, socket_timeout=20)
            # a master again, it expires the keys whose time passed, as the master does once its expiry runs
            # again: the two agree when both are done (the keys with a TTL still to come stay on both)
            m.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
            deadline, same = time.monotonic() + SYNC_S, False
            while time.monotonic() < deadline and not same:
                time.sleep(0.2)
                if info(ac, "persistence")["loading"]:
                    continue
                # keys with a TTL keep expiring on both sides: the master's digest just before and just after
                # the replica's, so a slow read (a sanitizer build) does not straddle an expiry
                before, got, after = (m.execute_command("DEBUG", "DIGEST"), ac.execute_command("DEBUG", "DIGEST"),
                                      m.execute_command("DEBUG", "DIGEST"))
                same = got in (before, after)
            if not check(same, "a replica with appendonly yes, restarted from its AOF: the master's data"):
                compare_now(m, [("percore from its AOF", ac)], "restarted from its AOF")
        finally:
            m.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
            arep.stop()

        # hostile masters: garbage as the RDB, a stream that stops mid-command
        run_fake(pc, b"+FULLRESYNC " + b"a" * 40 + b" 0\r\n$24\r\nREDIS0010garbagegarbage!", prep.log,
                 b"Failed trying to load the MASTER synchronization DB", "a garbage RDB")
        check(pc.get("after") == b"1" or pc.dbsize() == 0, "after a garbage RDB: the server serves")
        run_fake(pc, b"+CONTINUE\r\n*3\r\n$3\r\nSET\r\n$2\r\nzz\r\n$5\r\nhal", prep.log,
                 b"Successful partial resynchronization", "a stream cut mid-command")
        check(pc.get("zz") is None, "a command cut short is not run")
        check(prep.alive(), "percore still running")
    finally:
        st = prep.stop()
        rrep.stop()
        master.stop()
        check(st == 0, "percore exit status after SIGTERM: %s" % st)
    if failures:
        print(prep.tail(6000))
    else:
        shutil.rmtree(tmp, ignore_errors=True)
        for s in (master, rrep, prep):
            try:
                os.unlink(s.log)
            except OSError:
                pass
    print("replica_of_redis: %s (threads %d)" % ("%d failures" % len(failures) if failures else "passed", threads))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
