#!/usr/bin/python3
"""sentinel_replica.py PERCORE [THREADS]: percore as a replica in a Redis
deployment that Redis Sentinel runs.

A Redis master, a Redis replica and a percore replica (replica-priority 0:
Sentinel never promotes it, since percore does not serve replicas of its
own yet), watched by three sentinels (redis-server --sentinel).  Checked:
  - the sentinels find the percore replica through the master and see it
    healthy (INFO, PING, the __sentinel__:hello channel);
  - a client that finds the master through Sentinel (redis-py's Sentinel)
    writes; kill -9 of the master: the sentinels promote the Redis replica and
    tell the percore replica (MULTI, SLAVEOF, CONFIG REWRITE, CLIENT KILL,
    EXEC) to follow it; the client keeps writing, to the new master;
  - the percore replica syncs from the new master and holds its data
    (DEBUG DIGEST), its config file names the new master (CONFIG REWRITE);
  - the old master, restarted, is made a replica of the new one.
"""
import os
import shutil
import signal
import subprocess
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

REDIS = os.environ.get("REDIS_SERVER", "/usr/bin/redis-server")
WAIT_S = 90  # sentinel timeouts, and a sanitizer build on a busy machine
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL " + what)
    return ok


def poll(fn, timeout=WAIT_S, step=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if fn():
                return True
        except (redis.RedisError, OSError):
            pass
        time.sleep(step)
    return False


class Proc:
    def __init__(self, name, args, port, workdir):
        self.name, self.args, self.port, self.workdir = name, args, port, workdir
        self.log = os.path.join(workdir, name + ".log")
        self.p = None

    def start(self):
        self.p = subprocess.Popen(self.args, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, cwd=self.workdir)
        if not poll(lambda: redis.Redis(port=self.port, socket_timeout=2).ping(), 30, 0.05):
            raise RuntimeError("%s did not start (log %s)" % (self.name, self.log))
        return redis.Redis(port=self.port, socket_timeout=20)

    def kill(self, sig=signal.SIGKILL):
        if self.p and self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        return self.p.returncode if self.p else None

    def tail(self, n=3000):
        try:
            with open(self.log, "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""


def info(r, section):
    return r.info(section)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    if not os.path.exists(REDIS):
        print("SKIP: %s is not installed" % REDIS)
        return 77
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    work = tempfile.mkdtemp(prefix="sentinel-replica-")
    ports = {n: free_port() for n in ("m", "r", "p", "s1", "s2", "s3")}
    for d in ("m", "r", "p", "s1", "s2", "s3"):
        os.makedirs(os.path.join(work, d))
    common = ["--save", "", "--appendonly", "no", "--bind", "127.0.0.1", "--enable-debug-command", "yes"]
    master = Proc("master", [REDIS, "--port", str(ports["m"]), "--dir", os.path.join(work, "m")] + common,
                  ports["m"], work)
    rrep = Proc("redis-replica", [REDIS, "--port", str(ports["r"]), "--dir", os.path.join(work, "r"),
                                  "--replicaof", "127.0.0.1", str(ports["m"])] + common, ports["r"], work)
    pconf = os.path.join(work, "p", "percore.conf")
    with open(pconf, "w") as f:
        f.write("port %d\nbind 127.0.0.1\nthreads %d\ndir %s\nsave \"\"\nenable-debug-command yes\n"
                "replicaof 127.0.0.1 %d\nreplica-priority 0\n" % (ports["p"], threads, os.path.join(work, "p"),
                                                                   ports["m"]))
    prep = Proc("percore-replica", [sys.argv[1], pconf], ports["p"], work)
    sentinels = []
    for n in ("s1", "s2", "s3"):
        conf = os.path.join(work, n, "sentinel.conf")
        with open(conf, "w") as f:
            f.write("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor mymaster 127.0.0.1 %d 2\n"
                    "sentinel down-after-milliseconds mymaster 1000\nsentinel failover-timeout mymaster 10000\n"
                    "sentinel parallel-syncs mymaster 1\n" % (ports[n], os.path.join(work, n), ports["m"]))
        sentinels.append(Proc("sentinel-" + n, [REDIS, conf, "--sentinel"], ports[n], work))
    procs = [master, rrep, prep] + sentinels
    try:
        m = master.start()
        rr = rrep.start()
        pc = prep.start()
        ss = [s.start() for s in sentinels]

        def replicas_seen(s, want):
            rows = s.execute_command("SENTINEL", "REPLICAS", "mymaster")
            seen = {}
            for row in rows:
                d = dict(zip(row[::2], row[1::2])) if isinstance(row, list) else row
                d = {k.decode() if isinstance(k, bytes) else k: v.decode() if isinstance(v, bytes) else v
                     for k, v in d.items()}
                seen[int(d["port"])] = d
            return all(p in seen and "s_down" not in seen[p]["flags"] and "disconnected" not in seen[p]["flags"]
                       for p in want), seen

        check(poll(lambda: all(replicas_seen(s, [ports["r"], ports["p"]])[0] for s in ss)),
              "the sentinels see both replicas healthy: %r" % (replicas_seen(ss[0], [])[1],))
        view = lambda: replicas_seen(ss[0], [])[1].get(ports["p"], {})  # noqa: E731
        check(poll(lambda: view().get("slave-priority") == "0" and view().get("master-link-status") == "ok"),
              "the sentinels' view of the percore replica: %r" % view())

        sentinel = Sentinel([("127.0.0.1", ports[n]) for n in ("s1", "s2", "s3")], socket_timeout=2)
        client = sentinel.master_for("mymaster", socket_timeout=2)
        for i in range(500):
            client.set("before:%d" % i, i)
        check(poll(lambda: pc.get("before:499") == b"499"), "the percore replica has the writes")

        # the master dies: the Redis replica is promoted, the percore replica follows it
        master.kill()
        acked, errors, deadline = [], 0, time.monotonic() + WAIT_S
        new_port = None
        while time.monotonic() < deadline:
            try:
                client.set("after:%d" % len(acked), len(acked))
                acked.append(len(acked))
            except (redis.RedisError, OSError):
                errors += 1
                time.sleep(0.1)
            try:
                addr = sentinel.discover_master("mymaster")
            except redis.sentinel.MasterNotFoundError:  # during the failover
                continue
            if addr[1] == ports["r"] and len(acked) >= 200:
                new_port = addr[1]
                break
        check(new_port == ports["r"], "Sentinel promoted the Redis replica (master now %r)" % (new_port,))
        check(poll(lambda: info(pc, "replication")["master_port"] == ports["r"] and
                   info(pc, "replication")["master_link_status"] == "up"),
              "the percore replica follows the new master: %r" % {
                  k: v for k, v in info(pc, "replication").items() if k.startswith("master")})
        for i in range(len(acked), len(acked) + 300):
            client.set("after:%d" % i, i)
        total = len(acked) + 300
        check(poll(lambda: pc.get("after:%d" % (total - 1)) == str(total - 1).encode()),
              "the percore replica has the new master's writes")
        check(all(rr.get("after:%d" % i) == str(i).encode() for i in range(total)),
              "every write acknowledged through Sentinel is on the new master")
        rr.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        check(poll(lambda: pc.execute_command("DEBUG", "DIGEST") == rr.execute_command("DEBUG", "DIGEST")),
              "the percore replica holds the new master's data")
        with open(pconf) as f:
            conf = f.read()
        check("replicaof" in conf and str(ports["r"]) in conf.split("replicaof", 1)[1].splitlines()[0],
              "CONFIG REWRITE put the new master in the percore replica's config:\n%s" % conf)

        # the old master comes back: made a replica of the new one
        m = master.start()
        check(poll(lambda: info(m, "replication")["role"] == "slave" and
                   info(m, "replication")["master_port"] == ports["r"] and
                   info(m, "replication")["master_link_status"] == "up"),
              "the old master rejoins as a replica of the new one")
        check(prep.p.poll() is None, "the percore replica still running")
    finally:
        st = prep.kill(signal.SIGTERM)
        for p in procs:
            p.kill(signal.SIGTERM)
        check(st == 0, "percore exit status after SIGTERM: %s" % st)
    if failures:
        for p in (prep, sentinels[0]):
            print("---- %s:\n%s" % (p.name, p.tail()))
    else:
        shutil.rmtree(work, ignore_errors=True)
    print("sentinel_replica: %s (threads %d)" % ("%d failures" % len(failures) if failures else "passed", threads))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
