#!/usr/bin/python3
"""Replication, percore and Redis 7 as masters and as replicas, in every pairing.

For each pair (a Redis master with a Redis replica and with percore replicas;
a percore master with a Redis replica and a percore replica):
1. Full sync: the master holds N keys (key:<i>, 16-byte values, written
   through redis-cli --pipe);
   the replica (a fresh process) is told REPLICAOF, and the time until its
   link is up at the master's offset is measured -- the master's RDB (a fork
   for Redis, the forkless snapshot for percore), the transfer, the load.
2. Lag under load: redis-benchmark writes SETs of random keys to the master
   at full speed for --load-seconds; every 50 ms the master's offset minus
   the replica's (bytes not yet applied) is sampled, and turned into ms at
   the stream's rate; after the load, the time the replica takes to catch up.
3. WAIT 1 latency: one client, SET then WAIT 1 1000, --waits times: the
   median and 99th percentile of the WAIT.

Prints a table and writes bench/results/replica-sync.csv and .png.

    bench/replica-sync.py [--keys N] [--percore build/percore-server] [--threads 1,2] [--master-threads 2]

Wall-clock figures on a shared machine are noisy: compare the rows of one run.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from memory import free_port  # noqa: E402  (bench/memory.py)


def cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port)] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=600).stdout.strip()


def info(port, section):
    out = {}
    for line in cli(port, "INFO", section).splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k] = v
    return out


def start(cmd, port, logdir, name):
    log = open(os.path.join(logdir, name + ".log"), "wb")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=logdir)
    for _ in range(200):
        if cli(port, "PING") == "PONG":
            return p
        time.sleep(0.05)
    raise RuntimeError("%s did not start" % name)


def synced(master, replica):
    r = info(replica, "replication")
    return r.get("master_link_status") == "up" and \
        r.get("slave_repl_offset") == info(master, "replication")["master_repl_offset"]


def populate(port, n):
    """n keys key:<i> with 16-byte values, as DEBUG POPULATE n key 16 makes them, through redis-cli --pipe
    (percore has no DEBUG POPULATE)"""
    p = subprocess.Popen(["redis-cli", "-p", str(port), "--pipe"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    batch = []
    for i in range(n):
        k, v = b"key:%d" % i, (b"value:%d" % i).ljust(16, b"x")
        batch.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$16\r\n%s\r\n" % (len(k), k, v))
        if len(batch) == 10000:
            p.stdin.write(b"".join(batch))
            batch = []
    p.stdin.write(b"".join(batch))
    p.stdin.close()
    p.wait()
    if int(cli(port, "DBSIZE")) != n:
        raise RuntimeError("populate: DBSIZE %s, not %d" % (cli(port, "DBSIZE"), n))


def measure(name, cmd, port, master, keys, load_s, waits, logdir):
    """one replica, in a folder of its own, of a master holding `keys` keys again"""
    cli(master, "FLUSHALL")
    populate(master, keys)
    logdir = os.path.join(logdir, name.replace(" ", "-"))
    os.makedirs(logdir)
    p = start(cmd + ["--dir", logdir], port, logdir, "server")
    try:
        t0 = time.monotonic()
        cli(port, "REPLICAOF", "127.0.0.1", master)
        while not synced(master, port):
            time.sleep(0.01)
        full = time.monotonic() - t0
        bench = subprocess.Popen(["redis-benchmark", "-p", str(master), "-t", "set", "-r", "1000000", "-d", "16",
                                  "-P", "16", "-c", "20", "-n", "100000000", "-q"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lags, end = [], time.monotonic() + load_s
        off0 = int(info(master, "replication")["master_repl_offset"])
        cmds0 = int(info(master, "stats")["total_commands_processed"])
        while time.monotonic() < end:
            m = int(info(master, "replication")["master_repl_offset"])
            r = int(info(port, "replication").get("slave_repl_offset", "0"))
            lags.append(max(0, m - r))
            time.sleep(0.05)
        bench.terminate()
        bench.wait()
        stream_bytes = int(info(master, "replication")["master_repl_offset"]) - off0
        writes = int(info(master, "stats")["total_commands_processed"]) - cmds0
        t1 = time.monotonic()
        while not synced(master, port):
            time.sleep(0.01)
        catch_up = time.monotonic() - t1
        rate = stream_bytes / load_s  # bytes a second
        lat = wait_latencies(master, waits)
        return {"pair": name, "full_sync_s": round(full, 3), "writes_per_s": int(writes / load_s),
                "stream_mb_per_s": round(rate / 1e6, 2), "lag_median_bytes": int(statistics.median(lags)),
                "lag_max_bytes": max(lags), "lag_median_ms": round(statistics.median(lags) / rate * 1000, 2),
                "catch_up_s": round(catch_up, 3), "wait1_median_us": int(statistics.median(lat) * 1e6),
                "wait1_p99_us": int(lat[int(len(lat) * 0.99) - 1] * 1e6)}
    finally:
        p.terminate()
        p.wait()


def wait_latencies(master, n):
    """SET then WAIT 1 1000 over one connection, n times: each WAIT's seconds, sorted"""
    import socket
    s = socket.create_connection(("127.0.0.1", master))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    out = []
    for i in range(n):
        s.sendall(b"*3\r\n$3\r\nSET\r\n$4\r\nwait\r\n$%d\r\n%d\r\n" % (len(str(i)), i))
        got = b""
        while not got.endswith(b"\r\n"):
            got += s.recv(64)
        t = time.monotonic()
        s.sendall(b"*3\r\n$4\r\nWAIT\r\n$1\r\n1\r\n$4\r\n1000\r\n")
        got = b""
        while not got.endswith(b"\r\n"):
            got += s.recv(64)
        out.append(time.monotonic() - t)
        if got != b":1\r\n":
            raise RuntimeError("WAIT 1 answered %r" % got)
    s.close()
    return sorted(out)


def run_master(name, cmd, port, logdir):
    return start(cmd + ["--port", str(port), "--save", "", "--appendonly", "no", "--dir", logdir,
                        "--enable-debug-command", "yes", "--repl-backlog-size", "256mb"], port, logdir, name)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--percore", default=os.path.join(ROOT, "build", "percore-server"))
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--load-seconds", type=float, default=5)
    ap.add_argument("--master-threads", type=int, default=2)
    ap.add_argument("--waits", type=int, default=2000)
    o = ap.parse_args()
    logdir = tempfile.mkdtemp(prefix="replica-sync-")
    rows = []
    print("masters: %d keys (key:<i>, 16-byte values, again before each replica), the RDB sent disk-based" % o.keys)
    masters = [("redis", [o.redis, "--repl-diskless-sync", "no"]),
               ("percore t%d" % o.master_threads, [o.percore, "--threads", str(o.master_threads)])]
    for mname, mcmd in masters:
        mport = free_port()
        mdir = os.path.join(logdir, "master-" + mname.replace(" ", "-"))
        os.makedirs(mdir)
        master = run_master("master", mcmd, mport, mdir)
        try:
            replicas = [("redis", [o.redis, "--save", ""])]
            for t in [int(x) for x in o.threads.split(",")] if mname == "redis" else [o.master_threads]:
                replicas.append(("percore t%d" % t, [o.percore, "--threads", str(t), "--save", ""]))
            for rname, rcmd in replicas:
                port = free_port()
                rows.append(measure("%s -> %s" % (mname, rname), rcmd + ["--port", str(port)], port, mport, o.keys,
                                    o.load_seconds, o.waits, mdir))
        finally:
            master.terminate()
            master.wait()
    cols = ["pair", "full_sync_s", "writes_per_s", "stream_mb_per_s", "lag_median_bytes", "lag_max_bytes",
            "lag_median_ms", "catch_up_s", "wait1_median_us", "wait1_p99_us"]
    fmt = "%-26s" + " %15s" * (len(cols) - 1)
    print(fmt % tuple(cols))
    for r in rows:
        print(fmt % tuple(r[c] for c in cols))
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "replica-sync.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(1, 3, figsize=(15, 4.5))
        names = [r["pair"] for r in rows]
        ax[0].bar(names, [r["full_sync_s"] for r in rows])
        ax[0].set_title("full sync of %d keys, master -> replica (s)" % o.keys)
        ax[1].bar(names, [r["lag_median_bytes"] for r in rows])
        ax[1].set_title("median lag under SET load (bytes)")
        ax[2].bar(names, [r["wait1_median_us"] for r in rows])
        ax[2].set_title("WAIT 1 after a SET, median (us)")
        for a in ax:
            a.tick_params(axis="x", labelrotation=20)
        fig.tight_layout()
        fig.savefig(os.path.join(HERE, "results", "replica-sync.png"), dpi=100)
    except ImportError:
        print("(no matplotlib: apt-get install python3-matplotlib for the plot)", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
