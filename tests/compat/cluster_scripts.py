#!/usr/bin/python3
"""cluster_scripts.py: scripts and functions on a cluster port against a real Redis Cluster.

The reference is a Redis Cluster of two redis-server 7.0 nodes, node 1 owning
slots 0-8191 and node 2 8192-16383, exactly the slots of percore's two shards;
percore runs --threads 2 --cluster-ports yes.  The lines of cluster/*.txt go to
node 1 and to shard 0's cluster port over raw RESP, and the reply bytes are
compared as diff.py compares them: Redis Cluster's errors for keys of another
node, the no-cluster flag, the redirections of declared keys.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from diff import FREE_PORT_ARG, Conn, Pair, Result, Server, encode, run_lines  # noqa: E402

SLOTS = ((0, 8191), (8192, 16383))


def command(port, *args):
    c = Conn(port)
    c.send(encode([a.encode() if isinstance(a, str) else a for a in args]))
    r = c.read()
    c.close()
    return r


class ClusterNode(Server):
    """a redis-server with cluster-enabled, its nodes.conf in its own directory"""

    def __init__(self, binary, d, name):
        super().__init__(binary, name=name, logdir=d)
        self.extra = ["--cluster-enabled", "yes", "--cluster-config-file", os.path.join(d, name + ".conf"),
                      "--cluster-port", FREE_PORT_ARG, "--dir", d]  # its bus on a free port too


def start_cluster(binary, d):
    nodes = [ClusterNode(binary, d, "node%d" % i) for i in (1, 2)]
    for n in nodes:
        n.start()
    for n, (lo, hi) in zip(nodes, SLOTS):
        if command(n.port, "CLUSTER", "ADDSLOTSRANGE", str(lo), str(hi)) != b"+OK\r\n":
            raise RuntimeError("CLUSTER ADDSLOTSRANGE refused")
    command(nodes[0].port, "CLUSTER", "MEET", "127.0.0.1", str(nodes[1].port), str(nodes[1].aux_port))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if all(b"cluster_state:ok" in command(n.port, "CLUSTER", "INFO") for n in nodes):
            return nodes
        time.sleep(0.1)
    raise RuntimeError("the reference cluster did not come up")


class Port:
    """a server's other port, seen as a Server by Pair"""

    def __init__(self, srv, port):
        self.srv, self.port = srv, port

    def cpu_ticks(self):
        return self.srv.cpu_ticks()


class ClusterPair(Pair):
    """Pair whose replies name the other node as OTHER (a MOVED's address)"""

    def __init__(self, ref_srv, cand_srv, ref_other, cand_other):
        self.others = (b"127.0.0.1:%d" % ref_other, b"127.0.0.1:%d" % cand_other)
        super().__init__(ref_srv, cand_srv)

    def both(self, data, slow=False):
        r, g = super().both(data, slow)
        return (r.replace(self.others[0], b"127.0.0.1:OTHER") if r else r,
                g.replace(self.others[1], b"127.0.0.1:OTHER") if g else g)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--candidate", required=True)
    o = ap.parse_args()
    if not os.access(o.redis, os.X_OK):
        print("SKIP: reference %s not found" % o.redis)
        return 77
    d = tempfile.mkdtemp(prefix="cluster_scripts.")
    nodes = []
    cand = Server(o.candidate, threads=2, name="candidate", logdir=d, extra=["--cluster-ports", "yes"])
    res = Result(60)
    try:
        nodes = start_cluster(o.redis, d)
        cand.start()
        pair = ClusterPair(nodes[0], Port(cand, cand.port + 1), nodes[1].port, cand.port + 2)
        for f in sorted(glob.glob(os.path.join(HERE, "cluster", "*.txt"))):
            before = res.failed
            with open(f, encoding="utf-8") as fh:
                lines = list(enumerate(fh.read().split("\n"), 1))
            pair.reconnect()
            run_lines(pair, res, os.path.basename(f), lines)
            print("%-28s %s" % (os.path.basename(f), "ok" if res.failed == before else
                                "%d differences" % (res.failed - before)), flush=True)
        pair.close()
        if not cand.alive():
            res.fail("cluster", "(after the scripts)", b"(alive)", b"(server died)")
    finally:
        cand.stop()
        for n in nodes:
            n.stop()
        shutil.rmtree(d, ignore_errors=True)
    print("%d passed, %d failed" % (res.passed, res.failed))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
