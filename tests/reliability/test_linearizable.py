#!/usr/bin/python3
"""test_linearizable.py --server BIN [--threads N]: percore's GET/SET are
linearizable, per key, across shards, under concurrent clients.

CLIENTS threads (redis-py, one connection each, a fresh one every RECONNECT
operations so they land on different home shards) run OPS operations each on
4 keys that live on 4 different shards: GET, SET of a value no one else
writes, MGET and MSET of 2-4 of the keys (each key of a multi-key command is
recorded as one GET/SET with the command's interval: its part on that key's
shard took effect somewhere inside it).  Every operation is timed with
time.monotonic_ns() just before it is sent and just after its reply is read.
A churner meanwhile connects, pipelines SETs of unique values on the same
keys and resets the connection without reading: writes with no response,
which may take effect any time after they were sent, or never.  After all
clients are done one last GET per key closes each history, so a lost final
write shows too.  The history is checked with linearizability.py (the WGL
search per key); on failure it is written to $PC_LOG_DIR as JSON lines for
`linearizability.py FILE`.  PC_LIN_OPS scales the operations per client.
Prints a RELIABILITY line (tests/reliability/report.py).
"""
import argparse
import os
import random
import socket
import struct
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compat"))
from diff import Server, encode  # noqa: E402  (tests/compat/diff.py)
from linearizability import Op, check_history, dump_history  # noqa: E402
import reliability  # noqa: E402

try:
    import redis
except ImportError:
    print("SKIP: python3-redis is not installed (apt-get install python3-redis)")
    sys.exit(77)

CLIENTS = 6
RECONNECT = 40
CHURN_CONNS = 30
CHURN_SETS = 4


def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def shard_keys():
    """key s for s = 0..3 has slot // 4096 == s and slot % 4 == s: 4 shards
    under either slot -> shard mapping (contiguous ranges or slot mod N)"""
    keys = []
    for s in range(4):
        n = 0
        while True:
            k = "lin:%d:%d" % (s, n)
            slot = crc16(k.encode()) % 16384
            if slot // 4096 == s and slot % 4 == s:
                keys.append(k)
                break
            n += 1
    return keys


def client(cid, port, keys, nops, history, errors):
    rng = random.Random(cid)
    conn = None
    try:
        for n in range(nops):
            if n % RECONNECT == 0:
                if conn:
                    conn.close()
                conn = redis.Redis(port=port, decode_responses=True,
                                   single_connection_client=True, socket_timeout=30)
            x = rng.random()
            many = rng.sample(keys, rng.randrange(2, len(keys) + 1))
            value = "c%d.%d" % (cid, n)
            call = time.monotonic_ns()
            if x < 0.4:
                got = [conn.get(many[0])]
                kind, many = "r", many[:1]
            elif x < 0.8:
                conn.set(many[0], value)
                got, kind, many = [value], "w", many[:1]
            elif x < 0.9:
                got, kind = conn.mget(many), "r"
            else:
                got = ["%s.%d" % (value, i) for i in range(len(many))]
                conn.mset(dict(zip(many, got)))
                kind = "w"
            ret = time.monotonic_ns()
            history.extend(Op(cid, k, kind, v, call, ret) for k, v in zip(many, got))
    except Exception as e:  # the history is incomplete: the test fails
        errors.append("client %d: %r" % (cid, e))
    finally:
        if conn:
            conn.close()


def churner(port, keys, history, errors):
    """pipelines of SETs, then a reset: writes without response"""
    rng = random.Random(99)
    try:
        for n in range(CHURN_CONNS):
            s = socket.create_connection(("127.0.0.1", port))
            req = b""
            for i in range(CHURN_SETS):
                k = rng.choice(keys)
                v = "churn.%d.%d" % (n, i)
                req += encode([b"SET", k.encode(), v.encode()])
                history.append(Op("churn", k, "w", v, time.monotonic_ns(), None))
            s.sendall(req)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
            time.sleep(0.002)
    except Exception as e:  # the history is incomplete: the test fails
        errors.append("churner: %r" % (e,))


def make_stale(history):
    """a copy of the history with one read turned stale, as if a write were
    lost: it returns the value of a write w that a later write w2 (called
    after w returned) had replaced before the read was called; None when the
    history has no such triple"""
    writes = sorted((o for o in history if o.kind == "w" and o.ret is not None),
                    key=lambda o: o.call)
    for x, r in enumerate(history):
        if r.kind != "r" or r.ret is None:
            continue
        for w2 in writes:
            if w2.key != r.key or w2.ret >= r.call:
                continue
            for w in writes:
                if w.key == r.key and w.ret < w2.call and w.value != r.value:
                    return history[:x] + [r._replace(value=w.value)] + history[x + 1:]
    return None


def run(port, nops):
    keys = shard_keys()
    history, errors = [], []
    threads = [threading.Thread(target=client, args=(c, port, keys, nops, history, errors))
               for c in range(CLIENTS)]
    threads.append(threading.Thread(target=churner, args=(port, keys, history, errors)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    final = redis.Redis(port=port, decode_responses=True)
    for k in keys:
        call = time.monotonic_ns()
        v = final.get(k)
        history.append(Op("final", k, "r", v, call, time.monotonic_ns()))
    final.close()
    return history, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", required=True)
    ap.add_argument("--threads", type=int, default=4)
    args = ap.parse_args()
    nops = int(os.environ.get("PC_LIN_OPS", "250"))
    logdir = os.environ.get("PC_LOG_DIR", ".")
    srv = Server(args.server, threads=args.threads, name="linearizable", logdir=logdir)
    srv.start()
    print("server %s --threads %d on port %d" % (args.server, args.threads, srv.port))
    failed = 0
    try:
        history, errors = run(srv.port, nops)
    except Exception as e:
        history, errors = [], ["%r" % (e,)]
    for e in errors:
        print("FAIL: " + e)
        failed += 1
    t0 = time.monotonic()
    results = check_history(history)
    for key, (ok, why) in results.items():
        n = sum(1 for o in history if o.key == key)
        print("%s: %d operations, %s" % (key, n, "linearizable" if ok else
                                          "NOT linearizable: " + why))
        failed += not ok
    print("checked %d operations in %.2f s" % (len(history), time.monotonic() - t0))
    stale = make_stale(history)
    if stale is None or all(ok for ok, _ in check_history(stale).values()):
        print("FAIL: the checker does not reject the history with a stale read%s" %
              (" (none made)" if stale is None else ""))
        failed += 1
    else:
        print("the same history with one read made stale (a lost write): rejected")
    if failed:
        path = os.path.join(logdir, "linearizable-history-%d.jsonl" % srv.port)
        dump_history(history, path)
        print("history written to %s (check it: linearizability.py FILE)" % path)
    alive = srv.alive()
    rss = reliability.max_rss_kb(srv.proc.pid)
    status = srv.stop()
    if not alive or status != 0:
        print("FAIL: server exit status %s after SIGTERM (want 0)\n%s" % (status, srv.tail()))
        failed += 1
    elif not failed and not os.environ.get("PC_KEEP_LOGS"):
        os.unlink(srv.log)
    print(reliability.line(
        "linearizable GET/SET/MGET/MSET, threads %d" % args.threads,
        "%d clients x %d ops on 4 keys (4 shards), reconnect every %d" % (CLIENTS, nops, RECONNECT),
        "%d resets with %d SETs in flight" % (CHURN_CONNS, CHURN_SETS),
        status if alive else "died", srv.log, rss))
    print("test_linearizable: %s" % ("FAILED" if failed else "passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
