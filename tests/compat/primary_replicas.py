#!/usr/bin/python3
"""primary_replicas.py PERCORE [THREADS]: percore as the master of a real
Redis replica and of a percore replica, side by side.

A seeded random write load of every type (expiries, MULTI/EXEC, SELECT,
multi-shard MSET, streams, bitmaps, HLL) runs on the percore master; both
replicas must reach its offset and hold its data (DEBUG DIGEST, keys per
database), after:
  1. the first full sync (the master's forkless snapshot as a disk-based
     RDB, the stream from its cut), then the stream;
  2. a link break the backlog covers (PSYNC +CONTINUE: sync_partial_ok);
  3. a full sync with writes going on through it (the Redis replica
     restarted empty; the percore replica made a master and back);
  4. keys expiring on the master: the replicas get its DELs and expire
     nothing of their own.
Also: WAIT counts real acknowledgements (and times out when asked for more
replicas than there are), min-replicas-to-write refuses writes with Redis's
-NOREPLICAS, INFO replication lists the replicas, ROLE, and hostile
replicas (PSYNC then gone, garbage after PSYNC, a replica that never reads)
harm nobody: the master stays up, says why in its log, and the others keep
their stream."""
import os
import random
import shutil
import socket
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from diff import Server  # noqa: E402

try:
    import redis
except ImportError:
    print("SKIP: python3-redis is not installed (apt-get install python3-redis)")
    sys.exit(77)

import replica_of_redis as base  # noqa: E402  the load and the comparisons

REDIS = os.environ.get("REDIS_SERVER", "/usr/bin/redis-server")
check = base.check


def compare(m, replicas, what):
    """the master's expiry paused (its DELs would race the digests), the replicas caught up, the same data"""
    m.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        base.wait_synced(m, replicas, what)
        base.compare_now(m, replicas, what)
    finally:
        m.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def replica_rows(m):
    return [v for k, v in m.info("replication").items() if k.startswith("slave") and isinstance(v, dict)]


def log_has(server, text, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(server.log, "rb") as f:
            if text in f.read():
                return True
        time.sleep(0.1)
    return False


def raw_psync(port, then):
    """a hostile replica: PSYNC, then `then` (bytes to send, or None to vanish at once)"""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"*3\r\n$5\r\nPSYNC\r\n$1\r\n?\r\n$2\r\n-1\r\n")
    if then is not None:
        time.sleep(0.3)
        s.sendall(then)
        time.sleep(0.3)
    s.close()


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    if not os.path.exists(REDIS):
        print("SKIP: %s is not installed" % REDIS)
        return 77
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    tmp = tempfile.mkdtemp(prefix="primary-replicas-")
    common = ["--enable-debug-command", "yes"]
    for d in ("m", "r", "p"):
        os.makedirs(os.path.join(tmp, d))
    master = Server(sys.argv[1], threads=threads, name="primary-master",
                    extra=common + ["--dir", os.path.join(tmp, "m"), "--repl-backlog-size", "10mb"])
    master.start()
    rrep = Server(REDIS, name="primary-redis-replica",
                  extra=common + ["--dir", os.path.join(tmp, "r"), "--replicaof", "127.0.0.1", str(master.port)])
    prep = Server(sys.argv[1], threads=threads, name="primary-percore-replica",
                  extra=common + ["--dir", os.path.join(tmp, "p"), "--replicaof", "127.0.0.1 %d" % master.port])
    try:
        m = redis.Redis(port=master.port, socket_timeout=20)
        rng = random.Random(20261207)
        check(m.execute_command("WAIT", "0", "0") == 0, "WAIT 0 0 with no replica")
        t0 = time.monotonic()
        check(m.execute_command("WAIT", "1", "300") == 0, "WAIT 1 300 with no replica: 0")
        check(time.monotonic() - t0 >= 0.25, "WAIT 1 300 with no replica waits its timeout")
        base.write_load(m, rng, 3000, "pre")  # the first full sync carries these
        rrep.start()
        prep.start()
        rr = redis.Redis(port=rrep.port, socket_timeout=20)
        pc = redis.Redis(port=prep.port, socket_timeout=20)
        replicas = [("redis replica", rr), ("percore replica", pc)]

        # 1. the first full sync, then the stream
        base.wait_synced(m, replicas, "first full sync")
        base.write_load(m, rng, 3000, "stream")
        compare(m, replicas, "after the first full sync and the stream")
        mi = m.info("replication")
        rows = replica_rows(m)
        check(mi["role"] == "master" and mi["connected_slaves"] == 2 and len(rows) == 2,
              "INFO replication lists two replicas: %r" % mi)
        check(sorted(r["port"] for r in rows) == sorted([rrep.port, prep.port]) and
              all(r["state"] == "online" and r["ip"] == "127.0.0.1" for r in rows),
              "INFO's replica rows (ip, listening port, state): %r" % rows)
        check(mi["repl_backlog_active"] == 1 and mi["repl_backlog_histlen"] > 0, "the backlog is active: %r" % mi)
        role = m.execute_command("ROLE")
        check(role[0] == b"master" and len(role[2]) == 2 and
              sorted(int(r[1]) for r in role[2]) == sorted([rrep.port, prep.port]), "ROLE of the master: %r" % role)
        check(rr.info("replication")["master_link_status"] == "up", "the Redis replica's link is up")

        # WAIT: real acknowledgements
        m.set("w", "1")
        check(m.execute_command("WAIT", "2", "10000") == 2, "WAIT 2 after a write: both replicas acknowledged")
        check(rr.get("w") == b"1" and pc.get("w") == b"1", "what WAIT 2 acknowledged is on both replicas")
        m.mset({"wa%d" % i: i for i in range(20)})  # several shards' writes
        check(m.execute_command("WAIT", "2", "10000") == 2, "WAIT 2 after a multi-shard MSET")
        check(all(r.get("wa19") == b"19" for _, r in replicas), "the MSET is on both replicas after WAIT")
        t0 = time.monotonic()
        check(m.execute_command("WAIT", "3", "400") == 2, "WAIT 3 400: the two replicas there are")
        check(time.monotonic() - t0 >= 0.35, "WAIT 3 waited for its timeout")
        t = m.pipeline(transaction=True)
        t.set("w2", "1")
        t.execute_command("WAIT", "5", "0")
        check(t.execute()[1] in (0, 1, 2), "WAIT inside MULTI answers at once")
        try:
            pc.execute_command("WAIT", "1", "10")
            check(False, "WAIT on a replica is refused")
        except redis.ResponseError as e:
            check(str(e).startswith("WAIT cannot be used with replica instances"), "WAIT on a replica: %s" % e)

        # min-replicas-to-write: -NOREPLICAS below it, as Redis
        m.config_set("min-replicas-to-write", "3")
        try:
            m.set("nr", "1")
            check(False, "min-replicas-to-write 3 with two replicas: SET refused")
        except redis.ResponseError as e:
            check(str(e) == "NOREPLICAS Not enough good replicas to write.", "-NOREPLICAS's text: %r" % str(e))
        check(m.get("nr") is None and m.execute_command("PING"), "reads still served under -NOREPLICAS")
        m.config_set("min-replicas-to-write", "2")
        check(m.set("nr", "1"), "min-replicas-to-write 2 with two good replicas: SET runs")
        m.config_set("min-replicas-to-write", "0")

        # 2. breaks the backlog covers: PSYNC +CONTINUE (the replicas drop their master's link, then the
        # master its replicas)
        before = m.info("stats")["sync_partial_ok"]
        for name, r in replicas:
            check(r.execute_command("CLIENT", "KILL", "TYPE", "master") == 1, "%s: CLIENT KILL TYPE master" % name)
        base.write_load(m, rng, 1500, "partial")
        base.wait_synced(m, replicas, "partial resync")
        check(m.execute_command("CLIENT", "KILL", "TYPE", "replica") == 2, "the master's CLIENT KILL TYPE replica")
        base.write_load(m, rng, 500, "partial2")
        base.wait_synced(m, replicas, "partial resync")
        check(m.info("stats")["sync_partial_ok"] >= before + 4,
              "the master counted no partial resync for both replicas (sync_partial_ok %d -> %d)" % (
                  before, m.info("stats")["sync_partial_ok"]))
        compare(m, replicas, "after a partial resync")

        # hostile replicas: PSYNC then gone, garbage after PSYNC, one that never reads its stream
        raw_psync(master.port, None)
        raw_psync(master.port, b"this is no RESP at all\r\n")
        check(log_has(master, b"Protocol error from replica"), "the master logs a replica's garbage")
        sloth = socket.create_connection(("127.0.0.1", master.port), timeout=10)
        sloth.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sloth.sendall(b"*3\r\n$5\r\nPSYNC\r\n$1\r\n?\r\n$2\r\n-1\r\n")
        m.config_set("client-output-buffer-limit", "replica 2mb 1mb 60")
        # its sync's cut taken (its RDB sent or being sent): what follows is owed to it in the stream
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(r["port"] == 0 and r["state"] != "wait_bgsave"
                                                      for r in replica_rows(m)):
            time.sleep(0.05)
        blob = "x" * 50000
        for i in range(400):  # 20 MB of stream the sloth never reads
            m.set("blob:%d" % (i % 10), blob)
        check(log_has(master, b"overcoming of output buffer limits"), "a replica that does not read is dropped")
        sloth.close()
        m.config_set("client-output-buffer-limit", "replica 256mb 64mb 60")
        check(master.alive(), "the master survived its hostile replicas")
        compare(m, replicas, "after the hostile replicas")

        # 3. full syncs with writes going on: the Redis replica restarted empty, the percore one made a master
        # (its own id) and pointed back
        full_before = m.info("stats")["sync_full"]
        stop = threading.Event()
        wrng = random.Random(7)
        writer = threading.Thread(target=lambda: [base.write_load(redis.Redis(port=master.port, socket_timeout=20),
                                                                  wrng, 300, "during") for _ in iter(stop.is_set, True)])
        writer.start()
        rrep.stop()
        rrep.start()
        rr = redis.Redis(port=rrep.port, socket_timeout=20)
        check(pc.execute_command("REPLICAOF", "NO", "ONE") == b"OK", "the percore replica: REPLICAOF NO ONE")
        check(pc.execute_command("ROLE")[0] == b"master", "ROLE: a master")
        check(pc.execute_command("REPLICAOF", "127.0.0.1", master.port) == b"OK", "and back to the master")
        time.sleep(1.0)
        stop.set()
        writer.join(60)
        replicas = [("redis replica", rr), ("percore replica", pc)]
        base.write_load(m, rng, 1500, "full")
        base.wait_synced(m, replicas, "full syncs under writes")
        check(m.info("stats")["sync_full"] >= full_before + 2,
              "the master counted no new full syncs (sync_full %d -> %d)" % (full_before, m.info("stats")["sync_full"]))
        compare(m, replicas, "after full syncs with writes going on")

        # 4. expiry: the master's DELs reach the replicas; they expire nothing themselves -- a client's read
        # of an expired key on a replica hides it and keeps it, as on Redis's replica
        m.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        for i in range(200):
            m.set("ttl:%d" % i, i, px=200 + i)
        base.wait_synced(m, replicas, "keys with a TTL")
        time.sleep(0.6)
        sizes = [r.dbsize() for _, r in replicas]
        for name, r in replicas:
            got = [r.get("ttl:%d" % i) for i in range(200)] + [r.exists("ttl:%d" % i) for i in range(200)]
            check(not any(got), "%s: expired keys read as absent: %r" % (name, [g for g in got if g][:5]))
            check(not list(r.scan_iter("ttl:*")), "%s: SCAN hides expired keys" % name)
        check([r.dbsize() for _, r in replicas] == sizes and sizes[0] == sizes[1],
              "the replicas' reads deleted nothing (DBSIZE before %r, after %r)" % (
                  sizes, [r.dbsize() for _, r in replicas]))
        m.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        time.sleep(1.0)  # every one of them expired; the master's active expiry deletes some
        for i in range(200):
            m.get("ttl:%d" % i)  # a lookup deletes an expired key on the master: a DEL in the stream
        base.wait_synced(m, replicas, "after the expiries")
        for name, r in replicas:
            left = [k for k in r.scan_iter("ttl:*")]
            check(not left, "%s still holds %d keys the master expired" % (name, len(left)))
        compare(m, replicas, "after expiries")
        check(master.alive() and prep.alive(), "master and percore replica still running")
    finally:
        st = master.stop()
        rrep.stop()
        prep.stop()
        check(st == 0, "the master's exit status after SIGTERM: %s" % st)
    if base.failures:
        print(master.tail(6000))
    else:
        shutil.rmtree(tmp, ignore_errors=True)
        for s in (master, rrep, prep):
            try:
                os.unlink(s.log)
            except OSError:
                pass
    print("primary_replicas: %s (threads %d)" % ("%d failures" % len(base.failures) if base.failures else "passed",
                                                  threads))
    return 1 if base.failures else 0


if __name__ == "__main__":
    sys.exit(main())
