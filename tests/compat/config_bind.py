#!/usr/bin/python3
"""config_bind.py --candidate SERVER [--threads N] [--redis REDIS]: CONFIG SET
bind rebinds the listeners as Redis 7.0 does.  The same steps run against a
real redis-server and the candidate, and what each step shows is compared:
the reply, CONFIG GET bind, and on which addresses a new client gets in (the
new ones at once, the old ones no longer, the client that sent CONFIG SET
still served).  An address that cannot be bound (not on this host, a name,
an empty one, twice the same, more than 16) gets Redis's error and changes
nothing; "-" marks one that may be missing; CONFIG SET is all-or-nothing
with bind among its pairs, also inside MULTI; bind "" listens nowhere.
Then, percore alone: every shard thread listens on the new address (the
connections of one address reach every shard), and with cluster-ports the
shards' own ports move too.  Exit 0 when all agree, 1 otherwise, 77 when
redis-server is missing."""
import argparse
import os
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "clients"))
from diff import Conn, Server  # noqa: E402
import expect  # noqa: E402
from expect import check, eq  # noqa: E402

NOT_HERE = "192.0.2.1"  # TEST-NET-1: no host has it


def resp(*args):
    args = [a.encode() if isinstance(a, str) else a for a in args]
    return b"".join([b"*%d\r\n" % len(args)] + [b"$%d\r\n%s\r\n" % (len(a), a) for a in args])


def cmd(c, *args):
    c.send(resp(*args))
    return c.read()


def gets_in(host, port):
    """a new client on host:port gets an answer"""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect((host, port))
        s.sendall(resp("PING"))
        return s.recv(64) == b"+PONG\r\n"
    except OSError:
        return False
    finally:
        s.close()


def steps(port):
    """what each step shows on the server at port: [(step, what)]"""
    out = []
    c = Conn(port)

    def step(name, *args, where=()):
        got = cmd(c, *args) if args else None
        out.append((name, got, cmd(c, "CONFIG", "GET", "bind"), tuple(gets_in(h, port) for h in where),
                    cmd(c, "PING")))

    hosts = ("127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "::1")
    step("at start", where=hosts)
    step("add ::1 (optional)", "CONFIG", "SET", "bind", "127.0.0.1 -::1", where=hosts)
    step("move to .2 and .3", "CONFIG", "SET", "bind", "127.0.0.2 127.0.0.3", where=hosts)
    for bad in ("127.0.0.2 " + NOT_HERE, "foo", "127.0.0.2  127.0.0.3", "127.0.0.2 ", "127.0.0.2 127.0.0.2",
                "127.0.0.2 -127.0.0.2", "0.0.0.0 127.0.0.3", " ".join("127.0.0.%d" % i for i in range(1, 18))):
        step("refused: %r" % bad, "CONFIG", "SET", "bind", bad, where=("127.0.0.2", "127.0.0.3"))
    step("optional address missing", "CONFIG", "SET", "bind", "127.0.0.2 -" + NOT_HERE, where=hosts)
    step("with a bad pair: nothing", "CONFIG", "SET", "bind", "127.0.0.4", "maxmemory-policy", "foo", where=hosts)
    step("with a bad bind: nothing", "CONFIG", "SET", "maxmemory", "12345", "bind", NOT_HERE, where=hosts)
    out.append(("maxmemory unchanged", cmd(c, "CONFIG", "GET", "maxmemory")))
    cmd(c, "MULTI")
    cmd(c, "CONFIG", "SET", "bind", "127.0.0.4")
    step("inside MULTI", "EXEC", where=hosts)
    step("nowhere", "CONFIG", "SET", "bind", "", where=hosts)
    step("back", "CONFIG", "SET", "bind", "127.0.0.1", where=hosts)
    c.close()
    return out


def every_shard_listens(port, threads):
    """64 clients on a new address reach every shard thread"""
    c = Conn(port)
    eq(cmd(c, "CONFIG", "SET", "bind", "127.0.0.1 127.0.0.2"), b"+OK\r\n", "CONFIG SET bind (spread)")
    seen = set()
    clients = []
    for _ in range(64):
        d = Conn(port, host="127.0.0.2")
        clients.append(d)
        info = cmd(d, "CLIENT", "INFO").decode()
        seen.update(f[len("shard="):] for f in info.split() if f.startswith("shard="))
    eq(len(seen), threads, "shards reached by 64 clients on the new address (%s)" % sorted(seen))
    for d in clients:
        d.close()
    c.close()


def cluster_ports_move(binary, threads):
    srv = Server(binary, threads=threads, name="config-bind-cluster", extra=["--cluster-ports", "yes"])
    srv.start()
    try:
        c = Conn(srv.port)
        shard_port = srv.port + 1
        check(gets_in("127.0.0.1", shard_port), "cluster port on 127.0.0.1 at start")
        eq(cmd(c, "CONFIG", "SET", "bind", "127.0.0.2"), b"+OK\r\n", "CONFIG SET bind with cluster-ports")
        check(gets_in("127.0.0.2", shard_port), "cluster port on 127.0.0.2")
        check(gets_in("127.0.0.2", srv.port + threads), "last shard's cluster port on 127.0.0.2")
        check(not gets_in("127.0.0.1", shard_port), "cluster port no longer on 127.0.0.1")
        c.close()
    finally:
        eq(srv.stop(), 0, "cluster-ports server exit status")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--candidate", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--threads", type=int, default=4)
    args = ap.parse_args()
    if not os.access(args.redis, os.X_OK):
        print("SKIP: %s not found" % args.redis)
        return 77
    ref = Server(args.redis, name="config-bind-redis")
    cand = Server(args.candidate, threads=args.threads, name="config-bind")
    ref.start()
    cand.start()
    try:
        want, got = steps(ref.port), steps(cand.port)
        for w, g in zip(want, got):
            eq(g, w, "step %s" % w[0])
        eq(len(got), len(want), "steps")
        if not cand.is_redis:
            every_shard_listens(cand.port, args.threads)
            cluster_ports_move(args.candidate, args.threads)
    except OSError as e:  # a server that did not listen where it said: a failure, with the rest told
        check(False, "exception: %r" % e)
    finally:
        ref.stop()
        eq(cand.stop(), 0, "exit status")
    return expect.done("config_bind")


if __name__ == "__main__":
    sys.exit(main())
