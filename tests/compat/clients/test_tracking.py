#!/usr/bin/python3
"""test_tracking.py SERVER [THREADS]: client-side caching (CLIENT TRACKING)
with several clients, as Redis 7.0 does it.  Starts SERVER (percore with
THREADS shard threads, or redis-server itself, which checks the test) and
runs each scenario on raw RESP connections: readers that track keys on
every shard (16 keys span them; each connection lives on the shard the
kernel gave it), writers on other connections, and what each reader must
get: RESP3 invalidation pushes, RESP2 `__redis__:invalidate` messages to a
REDIRECT client, BCAST prefixes, OPTIN/OPTOUT with CLIENT CACHING, NOLOOP,
FLUSHALL's null, expired keys, MULTI, a REDIRECT client that went away
(tracking-redir-broken), a tracked client that disconnects, keys of
multi-shard commands, and tracking-table-max-keys.  Pushes are waited for (they may come from another
shard), and "nothing" is checked with a PING after a pause."""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from diff import Conn, Server, encode, parse  # noqa: E402  (tests/compat/diff.py)

KEYS = ["k%d" % i for i in range(16)]
QUIET_S = 0.3  # how long "no push" is listened for


class Client:
    def __init__(self, port, resp3=True):
        self.c = Conn(port, timeout=30)
        self.pushes = []  # decoded pushes / pub-sub messages not yet taken
        if resp3:
            self.cmd("HELLO", "3")

    def send(self, *args):
        self.c.send(encode([a if isinstance(a, bytes) else str(a).encode() for a in args]))

    def read(self, timeout=30):
        """the next value that is not a push (pushes go to self.pushes)"""
        while True:
            v = self.c.read(timeout)
            if v is None:
                raise RuntimeError("no reply within %s s" % timeout)
            if v == b"":
                raise RuntimeError("connection closed")
            if v.startswith(b">"):
                self.pushes.append(decode(v))
                continue
            return v

    def cmd(self, *args):
        self.send(*args)
        return self.read()

    def id(self):
        return int(self.cmd("CLIENT", "ID")[1:-2])

    def take_pushes(self, want, timeout=15.0):
        """pushes until `want` have come (or the timeout): returns them all"""
        deadline = time.monotonic() + timeout
        while len(self.pushes) < want and time.monotonic() < deadline:
            v = self.c.read(0.2)
            if v is None:
                continue
            if v == b"":
                raise RuntimeError("connection closed")
            self.pushes.append(decode(v))
        got, self.pushes = self.pushes, []
        return got

    def quiet(self):
        """no push within QUIET_S, and none before a PING's reply"""
        time.sleep(QUIET_S)
        assert self.cmd("PING") in (b"+PONG\r\n",), "PING"
        got, self.pushes = self.pushes, []
        return got

    def close(self):
        self.c.close()


def decode(v):
    """a push or pub/sub message: (kind, keys list or None for a null, raw)"""
    t, _, kids, _ = parse(v)
    kind = kids[0][1].decode()
    if kind == "message":  # RESP2 pub/sub: message, channel, keys
        assert kids[1][1] == b"__redis__:invalidate", v
        payload = kids[2]
    else:
        payload = kids[1]
    if kind == "tracking-redir-broken":
        return (kind, int(payload[1]), v)
    if payload[0] == "_" or (payload[0] == "$" and payload[1] is None):
        return (kind, None, v)
    return (kind, [k[1].decode() for k in payload[2]], v)


def keys_of(pushes, kind="invalidate"):
    out = []
    for p in pushes:
        assert p[0] == kind, p
        out += p[1] or []
    return out


def info_field(c, name):
    text = c.cmd("INFO", "everything").decode(errors="replace")
    for line in text.split("\r\n"):
        if line.startswith(name + ":"):
            return int(line.split(":")[1])
    raise RuntimeError("no %s in INFO" % name)


def wait_info(c, name, value, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        v = info_field(c, name)
        if v == value or time.monotonic() > deadline:
            assert v == value, "%s is %d, not %d" % (name, v, value)
            return
        time.sleep(0.1)


def test_default_mode(port):
    r, w = Client(port), Client(port)
    assert r.cmd("CLIENT", "TRACKING", "ON") == b"+OK\r\n"
    for k in KEYS:
        r.cmd("GET", k)
    wait_info(w, "tracking_clients", 1)
    wait_info(w, "tracking_total_keys", len(KEYS))
    wait_info(w, "tracking_total_items", len(KEYS))
    for k in KEYS:
        assert w.cmd("SET", k, "v") == b"+OK\r\n"
    got = r.take_pushes(len(KEYS))
    assert sorted(keys_of(got)) == sorted(KEYS), got
    assert all(len(p[1]) == 1 for p in got), got
    wait_info(w, "tracking_total_keys", 0)
    # forgotten once invalidated: a second write sends nothing
    w.cmd("SET", KEYS[0], "again")
    assert r.quiet() == []
    # every read command's keys, and a key read by two clients tells both once
    r2 = Client(port)
    r2.cmd("CLIENT", "TRACKING", "ON")
    r.cmd("MGET", *KEYS[:8])
    r2.cmd("STRLEN", KEYS[3])
    w.cmd("DEL", *KEYS[:8])
    assert sorted(keys_of(r.take_pushes(8))) == sorted(KEYS[:8])
    assert keys_of(r2.take_pushes(1)) == [KEYS[3]]
    # tracking off: nothing more (what it read before is still told, as in Redis)
    r.cmd("GET", KEYS[9])
    r.cmd("CLIENT", "TRACKING", "OFF")
    r.cmd("GET", KEYS[10])
    w.cmd("SET", KEYS[9], "x")
    w.cmd("SET", KEYS[10], "x")
    assert r.quiet() == []
    wait_info(w, "tracking_clients", 1)
    for c in (r, r2, w):
        c.close()


def test_redirect_resp2(port):
    """RESP2 readers redirect to subscribed RESP2 clients (several pairs: some on different shards)"""
    w = Client(port)
    pairs = []
    for i in range(4):
        s = Client(port, resp3=False)
        sid = s.id()
        s.send("SUBSCRIBE", "__redis__:invalidate")
        assert s.c.read(10).startswith(b"*3\r\n$9\r\nsubscribe"), "subscribe"
        r = Client(port, resp3=False)
        assert r.cmd("CLIENT", "TRACKING", "ON", "REDIRECT", sid) == b"+OK\r\n"
        assert r.cmd("CLIENT", "GETREDIR") == b":%d\r\n" % sid
        mine = ["r%d:%s" % (i, k) for k in KEYS[:6]]
        for k in mine:
            r.cmd("GET", k)
        pairs.append((s, r, mine))
    for s, r, mine in pairs:
        w.cmd("MSET", *sum(([k, "1"] for k in mine), []))
    for s, r, mine in pairs:
        msgs = []
        deadline = time.monotonic() + 15
        while len(msgs) < len(mine) and time.monotonic() < deadline:
            v = s.c.read(0.2)
            if v:
                msgs.append(decode(v))
        assert sorted(keys_of(msgs, "message")) == sorted(mine), msgs
        assert r.c.read(0.2) is None, "the reader itself gets nothing in RESP2"
    # FLUSHALL: the null, as the tracking client's RESP2 null
    w.cmd("FLUSHALL")
    for s, r, mine in pairs:
        v = s.c.read(15)
        assert v == b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n", v
    for s, r, _ in pairs:
        s.close()
        r.close()
    w.close()


def test_redirect_broken(port):
    r, w = Client(port), Client(port)
    t = Client(port)  # RESP3 target
    tid = t.id()
    assert r.cmd("CLIENT", "TRACKING", "ON", "REDIRECT", tid) == b"+OK\r\n"
    for k in KEYS[:4]:
        r.cmd("GET", k)
    w.cmd("SET", KEYS[0], "1")
    got = t.take_pushes(1)
    assert keys_of(got) == [KEYS[0]], got
    assert r.quiet() == []
    t.close()
    # the server has seen the close (a fixed pause was too short for a busy machine under TSan)
    deadline = time.monotonic() + 30
    while b"id=%d " % tid in w.cmd("CLIENT", "LIST", "ID", tid) and time.monotonic() < deadline:
        time.sleep(0.05)
    w.cmd("SET", KEYS[1], "1")
    got = r.take_pushes(1)
    assert got and got[0][0] == "tracking-redir-broken" and got[0][1] == tid, got
    info = r.cmd("CLIENT", "TRACKINGINFO")
    assert b"broken_redirect" in info, info
    assert b" flags=tR " in r.cmd("CLIENT", "INFO")
    # a REDIRECT to a client that does not exist is refused, whichever shard its id names
    for bad in (tid, tid + 1000, tid + 1001, tid + 1002, tid + 1003):
        e = r.cmd("CLIENT", "TRACKING", "ON", "REDIRECT", bad)
        assert e == b"-ERR The client ID you want redirect to does not exist\r\n", e
    r.close()
    w.close()


def test_bcast(port):
    b, w = Client(port), Client(port)
    assert b.cmd("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:", "PREFIX", "obj:") == b"+OK\r\n"
    assert b" flags=tB " in b.cmd("CLIENT", "INFO")
    wait_info(w, "tracking_total_prefixes", 2)
    want = ["user:%d" % i for i in range(8)] + ["obj:%d" % i for i in range(8)]
    for k in want + ["other:%d" % i for i in range(8)]:
        w.cmd("SET", k, "v")
    got = b.take_pushes(len(want))
    seen = keys_of(got)
    assert sorted(set(seen)) == sorted(want), got
    # a second client on one of the prefixes; NOLOOP spares a client its own writes
    b2 = Client(port)
    b2.cmd("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:", "NOLOOP")
    b2.cmd("SET", "user:1", "mine")
    assert keys_of(b.take_pushes(1)) == ["user:1"]
    assert b2.quiet() == []
    w.cmd("SET", "user:2", "theirs")
    assert keys_of(b2.take_pushes(1)) == ["user:2"]
    assert keys_of(b.take_pushes(1)) == ["user:2"]
    b.cmd("CLIENT", "TRACKING", "OFF")
    wait_info(w, "tracking_total_prefixes", 1)
    w.cmd("SET", "obj:1", "v")
    assert b.quiet() == []
    b2.close()
    wait_info(w, "tracking_total_prefixes", 0)
    b.close()
    w.close()


def test_optin_optout(port):
    o, w = Client(port), Client(port)
    o.cmd("CLIENT", "TRACKING", "ON", "OPTIN")
    o.cmd("GET", "a")
    o.cmd("CLIENT", "CACHING", "YES")
    o.cmd("GET", "b")
    o.cmd("GET", "c")  # CACHING lasted one command
    for k in "abc":
        w.cmd("SET", k, "1")
    assert keys_of(o.take_pushes(1)) == ["b"]
    assert o.quiet() == []
    # inside MULTI: CACHING YES covers the whole transaction
    o.cmd("CLIENT", "CACHING", "YES")
    o.cmd("MULTI")
    for k in KEYS[:6]:
        o.cmd("GET", k)
    o.cmd("EXEC")
    w.cmd("MSET", *sum(([k, "1"] for k in KEYS[:6]), []))
    assert sorted(keys_of(o.take_pushes(6))) == sorted(KEYS[:6])
    o.cmd("CLIENT", "TRACKING", "OFF")
    o.cmd("CLIENT", "TRACKING", "ON", "OPTOUT")
    o.cmd("CLIENT", "CACHING", "NO")
    o.cmd("GET", "a")
    o.cmd("GET", "b")
    w.cmd("SET", "a", "2")
    w.cmd("SET", "b", "2")
    assert keys_of(o.take_pushes(1)) == ["b"]
    assert o.quiet() == []
    o.close()
    w.close()


def test_noloop(port):
    n, w = Client(port), Client(port)
    n.cmd("CLIENT", "TRACKING", "ON", "NOLOOP")
    for k in KEYS:
        n.cmd("GET", k)
    for k in KEYS:
        n.cmd("SET", k, "mine")  # its own writes: nothing, and the keys are forgotten
    assert n.quiet() == []
    for k in KEYS:
        w.cmd("SET", k, "theirs")
    assert n.quiet() == []
    n.cmd("GET", KEYS[5])
    w.cmd("SET", KEYS[5], "theirs")
    assert keys_of(n.take_pushes(1)) == [KEYS[5]]
    n.close()
    w.close()


def test_flush_expire_multi(port):
    f, w = Client(port), Client(port)
    f.cmd("CLIENT", "TRACKING", "ON")
    w.cmd("FLUSHALL")
    got = f.take_pushes(1)
    assert got == [("invalidate", None, b">2\r\n$10\r\ninvalidate\r\n_\r\n")], got
    # expiry: a key read before it expires is invalidated when it goes (active expiry)
    for k in KEYS[:4]:
        w.cmd("SET", k, "v", "PX", "100")
        f.cmd("GET", k)
    got = f.take_pushes(4, timeout=15)
    assert sorted(keys_of(got)) == sorted(KEYS[:4]), got
    # MULTI: the reads of a transaction are remembered
    f.cmd("MULTI")
    for k in KEYS[4:10]:
        f.cmd("GET", k)
    f.cmd("EXEC")
    w.cmd("MULTI")
    for k in KEYS[4:10]:
        w.cmd("INCR", k)
    w.cmd("EXEC")
    assert sorted(keys_of(f.take_pushes(6))) == sorted(KEYS[4:10])
    f.close()
    w.close()


def test_multi_shard_commands(port):
    """keys written back by gathered commands (SUNIONSTORE, RENAME across shards) and read by one
    (SINTER over sets of several shards) are tracked and invalidated like any"""
    r, w = Client(port), Client(port)
    r.cmd("CLIENT", "TRACKING", "ON")
    dst = ["dst%d" % i for i in range(8)]
    for k in dst:
        r.cmd("GET", k)
    w.cmd("SADD", "src1", "a")
    for k in dst[:4]:
        w.cmd("SUNIONSTORE", k, "src1")
    for k in dst[4:]:
        w.cmd("SET", "src2", "v")
        w.cmd("RENAME", "src2", k)
    assert sorted(keys_of(r.take_pushes(len(dst)))) == dst
    sets = ["set%d" % i for i in range(6)]
    for k in sets:
        w.cmd("SADD", k, "m")
    r.cmd("SINTER", *sets)
    for k in sets:
        w.cmd("SADD", k, "n")
    assert sorted(keys_of(r.take_pushes(len(sets)))) == sets
    r.close()
    w.close()


def test_disconnect(port):
    w = Client(port)
    # the earlier tests' tracking clients are closed, but a server may still be letting them go
    # (a read of the count at once could take one of them as a lasting client)
    wait_info(w, "tracking_clients", 0)
    ds = []
    for i in range(4):
        d = Client(port)
        d.cmd("CLIENT", "TRACKING", "ON")
        for k in KEYS:
            d.cmd("GET", k)
        ds.append(d)
    wait_info(w, "tracking_clients", 4)
    for d in ds:
        d.close()
    wait_info(w, "tracking_clients", 0)
    for k in KEYS:
        assert w.cmd("SET", k, "after") == b"+OK\r\n"
    wait_info(w, "tracking_total_keys", 0)
    assert w.cmd("PING") == b"+PONG\r\n"
    w.close()


def test_max_keys(port):
    m, w = Client(port), Client(port)
    w.cmd("CONFIG", "SET", "tracking-table-max-keys", "1")
    m.cmd("CLIENT", "TRACKING", "ON")
    m.cmd("GET", "{m}1")
    m.cmd("GET", "{m}2")  # over the limit: one of the two is invalidated (a random one, as in Redis)
    m.cmd("PING")
    got = m.take_pushes(1)
    assert len(got) == 1 and got[0][1] in (["{m}1"], ["{m}2"]), got
    w.cmd("CONFIG", "SET", "tracking-table-max-keys", "1000000")
    m.close()
    w.close()


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    srv = Server(sys.argv[1], threads=threads, name="tracking")
    srv.start()
    failed = 0
    try:
        for name, fn in sorted(globals().items()):
            if not name.startswith("test_"):
                continue
            try:
                fn(srv.port)
                print("ok   %s" % name)
            except Exception as e:  # noqa: BLE001 (report every scenario)
                failed += 1
                print("FAIL %s: %r" % (name, e))
    finally:
        status = srv.stop()
    if status not in (0, None):
        failed += 1
        print("FAIL the server exited with %s:\n%s" % (status, srv.tail()))
    print("%s" % ("all passed" if not failed else "%d failed" % failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
