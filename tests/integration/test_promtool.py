#!/usr/bin/python3
"""test_promtool.py --server BIN [--threads N]: GET /metrics passes
Prometheus's own lint, `promtool check metrics` (Debian package
`prometheus`).

Starts percore-server with a metrics port, sends commands that fill every
metric family (SETs and GETs on keys of every shard, a WRONGTYPE error, an
arity error, an unknown command), waits until the aggregator has merged them
(the GETs show in /metrics), then pipes the body to promtool: it must exit 0
and print nothing.  promtool catches what a scraper would trip on or a
dashboard would misread: a malformed line, a counter without `_total`, a gauge
with it, abbreviated units (`_sec`), non-base units, missing HELP.  Exits 77
(skipped) only when promtool is not installed.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compat"))
from diff import FREE_PORT_ARG, Conn, Server, encode, spread_keys  # noqa: E402  (tests/compat/diff.py)

GETS = 50


def fetch(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        return r.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", required=True, help="percore-server")
    ap.add_argument("--threads", type=int, default=4)
    o = ap.parse_args()
    promtool = shutil.which("promtool")
    if not promtool:
        print("SKIP: promtool is not installed (apt-get install --no-install-recommends prometheus)")
        return 77

    srv = Server(o.server, threads=o.threads, name="promtool",
                 extra=["--metrics-port", FREE_PORT_ARG])
    srv.start()
    failed = 0
    try:
        c = Conn(srv.port)
        keys = spread_keys(None)
        cmds = [["SET", k, "v"] for k in keys]
        cmds += [["GET", keys[i % len(keys)]] for i in range(GETS)]
        cmds += [["RPUSH", "promtool:list", "x"], ["GET", "promtool:list"], ["GET"], ["NOSUCHCOMMAND"]]
        for cmd in cmds:
            c.send(encode([a.encode() for a in cmd]))
            if not c.read():
                raise RuntimeError("no reply to %s" % cmd)
        c.close()
        want = b'percore_commands_total{cmd="get"} %d\n' % (GETS + 1)
        deadline = time.monotonic() + 30
        body = fetch(srv.aux_port)
        while want not in body and time.monotonic() < deadline:
            time.sleep(0.1)
            body = fetch(srv.aux_port)
        if want not in body:
            print("FAIL: /metrics never showed %r:\n%s" % (want, body.decode(errors="replace")))
            failed += 1
        p = subprocess.run([promtool, "check", "metrics"], input=body,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        out = p.stdout.decode(errors="replace").strip()
        if p.returncode != 0 or out:
            print("FAIL: promtool check metrics exited %d:\n%s" % (p.returncode, out))
            failed += 1
        else:
            print("promtool check metrics: clean (%d lines)" % body.count(b"\n"))
    finally:
        st = srv.stop()
    if st != 0:
        print("FAIL: server exit status %s (log %s):\n%s" % (st, srv.log, srv.tail()))
        failed += 1
    print("%d passed, %d failed" % (0 if failed else 1, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
