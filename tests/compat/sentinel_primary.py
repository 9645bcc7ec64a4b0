#!/usr/bin/python3
"""sentinel_primary.py PERCORE [THREADS]: a deployment of percore nodes alone
that Redis Sentinel runs: a percore master, two percore replicas, three
sentinels (redis-server --sentinel).  Checked:
  - the sentinels find both replicas through the master's INFO and see them
    healthy;
  - a client that finds the master through Sentinel (redis-py's Sentinel)
    writes, each write followed by WAIT 1 100; kill -9 of the master: the
    sentinels promote a percore replica (REPLICAOF NO ONE inside their
    MULTI ... EXEC) within their timeouts, the other replica follows it (a
    full sync from the new percore master), the client keeps writing;
  - every write that WAIT 1 acknowledged is on the new master, and both
    survivors hold the same data (DEBUG DIGEST);
  - the old master, restarted, is made a replica of the new one and syncs.
"""
import os
import shutil
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from diff import free_port  # noqa: E402

try:
    import redis
    import redis.sentinel
    from redis.sentinel import Sentinel
except ImportError:
    print("SKIP: python3-redis is not installed (apt-get install python3-redis)")
    sys.exit(77)

import sentinel_replica as base  # noqa: E402  the processes, polling and checks

REDIS, WAIT_S, Proc, poll, check, info = base.REDIS, base.WAIT_S, base.Proc, base.poll, base.check, base.info
failures = base.failures


def replicas_seen(s, want):
    rows = s.execute_command("SENTINEL", "REPLICAS", "mymaster")
    seen = {}
    for row in rows:
        d = dict(zip(row[::2], row[1::2])) if isinstance(row, list) else row
        d = {k.decode() if isinstance(k, bytes) else k: v.decode() if isinstance(v, bytes) else v for k, v in d.items()}
        seen[int(d["port"])] = d
    return all(p in seen and "s_down" not in seen[p]["flags"] and "disconnected" not in seen[p]["flags"]
               and seen[p].get("master-link-status") == "ok" for p in want), seen


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    if not os.path.exists(REDIS):
        print("SKIP: %s is not installed" % REDIS)
        return 77
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    work = tempfile.mkdtemp(prefix="sentinel-primary-")
    names = ("m", "a", "b", "s1", "s2", "s3")
    ports = {n: free_port() for n in names}
    for d in names:
        os.makedirs(os.path.join(work, d))
    nodes = {}
    for n in ("m", "a", "b"):
        conf = os.path.join(work, n, "percore.conf")
        with open(conf, "w") as f:
            f.write("port %d\nbind 127.0.0.1\nthreads %d\ndir %s\nsave \"\"\nenable-debug-command yes\n"
                    % (ports[n], threads, os.path.join(work, n)))
            if n != "m":
                f.write("replicaof 127.0.0.1 %d\n" % ports["m"])
        nodes[n] = Proc("percore-" + n, [sys.argv[1], conf], ports[n], work)
    # down-after 3 s, not 1: a sentinel's new link to a just-promoted node sends its first PING a second after
    # the link is made and counts the wait from then, so at 1 s a busy machine's sentinels see the new master
    # down for a moment and fail over again
    sentinels = []
    for n in ("s1", "s2", "s3"):
        conf = os.path.join(work, n, "sentinel.conf")
        with open(conf, "w") as f:
            f.write("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor mymaster 127.0.0.1 %d 2\n"
                    "sentinel down-after-milliseconds mymaster 3000\nsentinel failover-timeout mymaster 10000\n"
                    "sentinel parallel-syncs mymaster 1\n" % (ports[n], os.path.join(work, n), ports["m"]))
        sentinels.append(Proc("sentinel-" + n, [REDIS, conf, "--sentinel"], ports[n], work))
    procs = list(nodes.values()) + sentinels
    try:
        conns = {n: nodes[n].start() for n in ("m", "a", "b")}
        ss = [s.start() for s in sentinels]
        check(poll(lambda: all(replicas_seen(s, [ports["a"], ports["b"]])[0] for s in ss)),
              "the sentinels see both percore replicas healthy: %r" % (replicas_seen(ss[0], [])[1],))

        sentinel = Sentinel([("127.0.0.1", ports[n]) for n in ("s1", "s2", "s3")], socket_timeout=2)
        client = sentinel.master_for("mymaster", socket_timeout=2)
        acked = []  # writes WAIT 1 acknowledged

        def write(i):
            client.set("k:%d" % i, i)
            if client.execute_command("WAIT", 1, 100) >= 1:
                acked.append(i)

        for i in range(300):
            write(i)
        check(len(acked) >= 250, "WAIT 1 acknowledged most writes before the failover (%d of 300)" % len(acked))

        # the master dies: a percore replica is promoted, the other follows it
        nodes["m"].kill()
        i, errors, deadline, new_port = 300, 0, time.monotonic() + WAIT_S, None
        while time.monotonic() < deadline:
            try:
                write(i)
            except (redis.RedisError, OSError):
                errors += 1
                time.sleep(0.1)
            i += 1
            try:
                addr = sentinel.discover_master("mymaster")
            except redis.sentinel.MasterNotFoundError:  # during the failover
                continue
            if addr[1] in (ports["a"], ports["b"]) and len(acked) >= 400:
                new_port = addr[1]
                break
        check(new_port in (ports["a"], ports["b"]), "Sentinel promoted a percore replica (master now %r)" % (new_port,))
        if new_port is None:
            raise RuntimeError("no failover")
        new = "a" if new_port == ports["a"] else "b"
        other = "b" if new == "a" else "a"
        nm, om = conns[new], conns[other]
        check(info(nm, "replication")["role"] == "master", "the promoted node says role:master")
        check(poll(lambda: info(om, "replication")["master_port"] == new_port and
                   info(om, "replication")["master_link_status"] == "up"),
              "the other replica follows the new master: %r" % {
                  k: v for k, v in info(om, "replication").items() if k.startswith("master")})
        for j in range(i, i + 200):
            write(j)
        missing = [k for k in acked if nm.get("k:%d" % k) != str(k).encode()]
        check(not missing, "every write WAIT 1 acknowledged is on the new master (%d of %d missing: %r)" % (
            len(missing), len(acked), missing[:10]))
        check(poll(lambda: nm.execute_command("DEBUG", "DIGEST") == om.execute_command("DEBUG", "DIGEST")),
              "both survivors hold the same data")
        with open(os.path.join(work, other, "percore.conf")) as f:
            conf = f.read()
        check(str(new_port) in conf, "CONFIG REWRITE put the new master in the other replica's config")

        # the old master comes back: made a replica of the new one, synced from it
        om2 = nodes["m"].start()
        check(poll(lambda: info(om2, "replication")["role"] == "slave" and
                   info(om2, "replication")["master_port"] == new_port and
                   info(om2, "replication")["master_link_status"] == "up"),
              "the old master rejoins as a replica of the new one: %r" % {
                  k: v for k, v in info(om2, "replication").items() if k.startswith("master") or k == "role"})
        check(poll(lambda: om2.execute_command("DEBUG", "DIGEST") == nm.execute_command("DEBUG", "DIGEST")),
              "the old master, a replica now, holds the new master's data")
        check(poll(lambda: info(nm, "replication")["connected_slaves"] == 2), "the new master serves two replicas")
    finally:
        statuses = [nodes[n].kill(signal.SIGTERM) for n in ("a", "b")]
        for p in procs:
            p.kill(signal.SIGTERM)
        check(all(st == 0 for st in statuses), "the replicas' exit status after SIGTERM: %s" % statuses)
    if failures:
        for p in list(nodes.values()) + [sentinels[0]]:
            print("---- %s:\n%s" % (p.name, p.tail()))
    else:
        shutil.rmtree(work, ignore_errors=True)
    print("sentinel_primary: %s (threads %d)" % ("%d failures" % len(failures) if failures else "passed", threads))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
