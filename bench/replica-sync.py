#!/usr/bin/python3
"""Replication from a Redis 7 master: percore replicas against a Redis replica.

1. Full sync: a Redis master holds N keys (DEBUG POPULATE, 16-byte-ish
   values); each replica in turn (a fresh process) is told REPLICAOF, and the
   time until its link is up at the master's offset is measured -- the
   master's RDB, the transfer, and the load into the replica.
2. Lag under load: redis-benchmark writes SETs of random keys to the master
   at full speed for --load-seconds; every 50 ms the master's offset minus
   the replica's (bytes not yet applied) is sampled; after the load, the time
   the replica takes to catch up.

Prints a table and writes bench/results/replica-sync.csv and .png.

    bench/replica-sync.py [--keys N] [--percore build/percore-server] [--threads 1,2]

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


def measure(name, cmd, port, master, keys, load_s, logdir):
    """one replica, in a folder of its own, of a master holding `keys` keys again"""
    cli(master, "FLUSHALL")
    cli(master, "DEBUG", "POPULATE", keys, "key", 16)
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
        while time.monotonic() < end:
            m = int(info(master, "replication")["master_repl_offset"])
            r = int(info(port, "replication").get("slave_repl_offset", "0"))
            lags.append(max(0, m - r))
            time.sleep(0.05)
        bench.terminate()
        bench.wait()
        stream_bytes = int(info(master, "replication")["master_repl_offset"]) - off0
        t1 = time.monotonic()
        while not synced(master, port):
            time.sleep(0.01)
        catch_up = time.monotonic() - t1
        return {"replica": name, "full_sync_s": round(full, 3), "lag_median_bytes": int(statistics.median(lags)),
                "lag_max_bytes": max(lags), "stream_mb_per_s": round(stream_bytes / load_s / 1e6, 2),
                "catch_up_s": round(catch_up, 3)}
    finally:
        p.terminate()
        p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--percore", default=os.path.join(ROOT, "build", "percore-server"))
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--load-seconds", type=float, default=5)
    o = ap.parse_args()
    logdir = tempfile.mkdtemp(prefix="replica-sync-")
    mport = free_port()
    master = start([o.redis, "--port", str(mport), "--save", "", "--appendonly", "no", "--dir", logdir,
                    "--repl-diskless-sync", "no", "--enable-debug-command", "yes", "--repl-backlog-size", "256mb"],
                   mport, logdir, "master")
    rows = []
    try:
        print("master: %d keys (DEBUG POPULATE, again before each replica), RDB transfer disk-based" % o.keys)
        port = free_port()  # a Redis replica, then percore at each thread count
        rows.append(measure("redis replica", [o.redis, "--port", str(port), "--save", ""],
                            port, mport, o.keys, o.load_seconds, logdir))
        for t in [int(x) for x in o.threads.split(",")]:
            port = free_port()
            rows.append(measure("percore threads %d" % t,
                                [o.percore, "--port", str(port), "--threads", str(t), "--save", ""],
                                port, mport, o.keys, o.load_seconds, logdir))
    finally:
        master.terminate()
        master.wait()
    cols = ["replica", "full_sync_s", "stream_mb_per_s", "lag_median_bytes", "lag_max_bytes", "catch_up_s"]
    print("%-20s %12s %16s %18s %16s %11s" % tuple(cols))
    for r in rows:
        print("%-20s %12s %16s %18s %16s %11s" % tuple(r[c] for c in cols))
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "replica-sync.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(1, 2, figsize=(10, 4))
        names = [r["replica"] for r in rows]
        ax[0].bar(names, [r["full_sync_s"] for r in rows])
        ax[0].set_title("full sync of %d keys from Redis (s)" % o.keys)
        ax[1].bar(names, [r["lag_median_bytes"] for r in rows])
        ax[1].set_title("median lag under SET load (bytes)")
        for a in ax:
            a.tick_params(axis="x", labelrotation=20)
        fig.tight_layout()
        fig.savefig(os.path.join(HERE, "results", "replica-sync.png"), dpi=100)
    except ImportError:
        print("(no matplotlib: apt-get install python3-matplotlib for the plot)", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
