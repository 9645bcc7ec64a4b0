#!/usr/bin/python3
"""Memory per key: percore (threads 1) against Redis 7, same data.

Loads, into a fresh server each time, 1M 16-byte strings, 1M small hashes
(5 fields) and 1M small sets (5 members) through redis-cli --pipe, then
reads INFO used_memory and the process RSS, net of the empty server's.
Prints a table and writes bench/results/memory.csv and memory.png.

    bench/memory.py [--keys N] [--percore build/percore-server]
    bench/memory.py --kinds stream,bitmap,hll      (results/memory-types.*)

The other kinds, per unit: stream, per entry of 3 fields (N entries in one
stream, XADD *); bitmap, per 1M-bit bitmap (N/1000 keys, SETBIT 999999);
hll, per HyperLogLog of 5000 elements, dense (N/1000 keys).
"""
import argparse
import csv
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def units(kind, n):
    """how many of what a kind counts: keys, or a stream's entries"""
    return n // 1000 if kind in ("bitmap", "hll") else n


def dataset(kind, n):
    if kind == "stream":
        for i in range(n):
            yield resp("XADD", "stream", "*", "name", "user%d" % i, "score", i, "kind", "event")
        return
    if kind in ("bitmap", "hll"):
        for i in range(units(kind, n)):
            if kind == "bitmap":
                yield resp("SETBIT", "bitmap:%06d" % i, 999999, 1)
            else:
                yield resp("PFADD", "hll:%06d" % i, *["e%d" % j for j in range(5000)])
        return
    for i in range(n):
        if kind == "string":
            yield resp("SET", "key:%012d" % i, "v" * 16)
        elif kind == "hash":
            yield resp("HSET", "hash:%012d" % i, *sum((["f%d" % j, "value%d" % j] for j in range(5)), []))
        else:
            yield resp("SADD", "set:%012d" % i, *["member%d" % j for j in range(5)])


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def used_memory(port):
    out = subprocess.run(["redis-cli", "-p", str(port), "info", "memory"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    return 0


def measure(name, cmd, kind, n):
    port = free_port()
    proc = subprocess.Popen(cmd + ["--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True, text=True).stdout.strip() == "PONG":
                break
            time.sleep(0.05)
        base_rss, base_used = rss_kb(proc.pid), used_memory(port)
        pipe = subprocess.Popen(["redis-cli", "-p", str(port), "--pipe"], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL)
        chunk = []
        for c in dataset(kind, n):
            chunk.append(c)
            if len(chunk) == 10000:
                pipe.stdin.write(b"".join(chunk))
                chunk = []
        pipe.stdin.write(b"".join(chunk))
        pipe.stdin.close()
        pipe.wait()
        time.sleep(0.5)
        keys = units(kind, n) if kind == "stream" else \
            int(subprocess.run(["redis-cli", "-p", str(port), "dbsize"], capture_output=True, text=True).stdout)
        rss = (rss_kb(proc.pid) - base_rss) * 1024
        used = used_memory(port) - base_used
        return {"server": name, "data": kind, "keys": keys, "rss_per_key": rss / max(keys, 1),
                "used_per_key": used / max(keys, 1)}
    finally:
        proc.terminate()
        proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--percore", default=os.path.join(ROOT, "build", "percore-server"))
    ap.add_argument("--kinds", default="string,hash,set", help="string hash set stream bitmap hll")
    o = ap.parse_args()
    kinds = o.kinds.split(",")
    out = "memory" if kinds == ["string", "hash", "set"] else "memory-types"
    servers = [("percore", [o.percore, "--threads", "1", "--save", ""]),
               ("redis", ["redis-server", "--save", "", "--appendonly", "no"])]
    rows = []
    for kind in kinds:
        for name, cmd in servers:
            rows.append(measure(name, cmd, kind, o.keys))
            r = rows[-1]
            print("%-8s %-7s %8d keys  used_memory %6.1f B/key  RSS %6.1f B/key" % (
                r["server"], r["data"], r["keys"], r["used_per_key"], r["rss_per_key"]), flush=True)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", out + ".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print("\n%-7s %14s %14s %8s" % ("data", "percore RSS/k", "redis RSS/k", "ratio"))
    for kind in kinds:
        p = next(r for r in rows if r["server"] == "percore" and r["data"] == kind)
        r = next(r for r in rows if r["server"] == "redis" and r["data"] == kind)
        print("%-7s %14.1f %14.1f %8.2f" % (kind, p["rss_per_key"], r["rss_per_key"],
                                            p["rss_per_key"] / r["rss_per_key"]))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4))
        for i, (name, _) in enumerate(servers):
            vals = [next(r["rss_per_key"] for r in rows if r["server"] == name and r["data"] == k) for k in kinds]
            ax.bar([x + i * 0.38 for x in range(len(kinds))], vals, width=0.38, label=name)
        ax.set_xticks([x + 0.19 for x in range(len(kinds))])
        labels = {"string": "16-byte strings", "hash": "hashes (5 fields)", "set": "sets (5 members)",
                  "stream": "stream entries (3 fields)", "bitmap": "1M-bit bitmaps", "hll": "HyperLogLogs"}
        ax.set_xticklabels([labels[k] for k in kinds])
        ax.set_ylabel("RSS bytes per key (stream: per entry)")
        ax.set_title("Memory per key, %d keys, one shard vs Redis 7" % o.keys)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(HERE, "results", out + ".png"), dpi=100)
    except ImportError:
        print("(no matplotlib: apt-get install python3-matplotlib for the plot)", file=sys.stderr)


if __name__ == "__main__":
    main()
