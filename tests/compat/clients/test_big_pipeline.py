#!/usr/bin/python3
"""test_big_pipeline.py SERVER [THREADS]: clients that send a lot before they
read, and clients that shut their sending side.

- big pipeline: redis-py's pipeline of 600,000 GETs of a 1 KB value (600 MB
  of replies, 12 MB of requests) returns every reply.  redis-py sends the
  whole pipeline before it reads a byte, so a server that stops reading a
  client whose replies pile up deadlocks with it (the send then times out).
- never reads (not against Redis, whose normal class has no output limit): a
  raw socket sends the same 600,000 GETs and never reads.  All of it is
  accepted (nobody deadlocks), the server's peak RSS stays under half the
  600 MB of replies asked for (not checked in a sanitizer build), and
  another client is served meanwhile.  With
  client-query-buffer-limit 4mb the same client is closed, with Redis's log
  line, once its unparsed input passes 4 MB.
- half-close: commands sent, then shutdown(SHUT_WR), then read to the end:
  every reply comes back, in order, before the connection ends (so does
  Redis: it runs what it read and writes those replies before its next read
  sees the end), including commands of other shards and multi-key commands
  across shards; a client blocked in BLPOP that shuts down is dropped (its
  BLPOP never takes an element); a subscriber gets its confirmation, then the
  end.  Against percore only, also 1,000 GETs of a 10 KB value (10 MB of
  replies, more than the socket holds: Redis drops what it had not written
  when it sees the end).

Runs against percore (THREADS 1 and 4) and against redis-server (the test's
own check).  Starts its own servers on free ports."""
import os
import socket
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from diff import Server, encode  # noqa: E402  (tests/compat/diff.py)
import expect  # noqa: E402
from expect import check, eq  # noqa: E402

try:
    import redis
except ImportError:
    print("SKIP: python3-redis is not installed (apt-get install python3-redis)")
    sys.exit(77)

N = 600000
VALUE = b"x" * 1024
TIMEOUT = 180  # seconds a single socket operation may take (the old code hung for ever)


def resp(*args):
    return encode([a if isinstance(a, bytes) else str(a).encode() for a in args])


def stop_checked(srv, what):
    """stop srv: it must still be running and exit 0 on SIGTERM; its log shown on a failure, else removed"""
    alive = srv.alive()
    st = srv.stop()
    check(alive, "%s still running at the end" % what)
    eq(st, 0, "%s exit status after SIGTERM" % what)
    if expect.failed:
        print(srv.tail())
    elif not os.environ.get("PC_KEEP_LOGS"):
        os.unlink(srv.log)


def bulk(v):
    return b"$-1\r\n" if v is None else b"$%d\r\n%s\r\n" % (len(v), v)


def eq_bytes(got, want, what):
    """eq() for long replies: says where they part instead of printing them whole"""
    if got == want:
        return check(True, what)
    at = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
    check(False, "%s: got %d bytes, want %d; they part at byte %d: got %r, want %r"
          % (what, len(got), len(want), at, got[at:at + 40], want[at:at + 40]))


def wait_for(fn, want, seconds=10):
    """fn() once it equals want, or its last value after `seconds` (INFO's counters lag a little)"""
    deadline = time.monotonic() + seconds
    got = fn()
    while got != want and time.monotonic() < deadline:
        time.sleep(0.02)
        got = fn()
    return got


def sanitized(binary):
    """an ASan or TSan build: its allocator holds freed memory back, RSS says nothing"""
    with open(binary, "rb") as f:
        data = f.read()
    return b"__asan_init" in data or b"__tsan_init" in data


def peak_rss_kb(srv):
    with open("/proc/%d/status" % srv.proc.pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def big_pipeline(srv):
    r = redis.Redis(host="127.0.0.1", port=srv.port, socket_timeout=TIMEOUT)
    r.set("v", VALUE)
    p = r.pipeline(transaction=False)
    for _ in range(N):
        p.get("v")
    t = time.monotonic()
    res = p.execute()
    print("pipeline of %d GETs of 1 KB: %.1f s" % (N, time.monotonic() - t))
    eq(len(res), N, "replies to the pipeline of %d GETs" % N)
    check(all(x == VALUE for x in res), "every reply of the pipeline is the 1 KB value")
    eq(r.ping(), True, "PING on the same connection after the pipeline")
    r.close()


class Sender(threading.Thread):
    """sends payload on sock and never reads; .sent, .error when done"""

    def __init__(self, sock, payload):
        super().__init__(daemon=True)
        self.sock, self.payload, self.sent, self.error = sock, memoryview(payload), 0, None

    def run(self):
        try:
            while self.sent < len(self.payload):
                self.sent += self.sock.send(self.payload[self.sent:self.sent + 65536])
        except OSError as e:
            self.error = e


def never_reader(binary, threads):
    srv = Server(binary, threads=threads, name="big_pipeline_never_reads")
    srv.start()
    try:
        r = redis.Redis(host="127.0.0.1", port=srv.port, socket_timeout=30)
        r.set("v", VALUE)
        base_kb = peak_rss_kb(srv)
        gets = resp("GET", "v") * N
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.settimeout(TIMEOUT)
        sender = Sender(s, gets)
        sender.start()
        sender.join(TIMEOUT)
        eq(sender.error, None, "a client that never reads: sending its %d GETs" % N)
        eq(sender.sent, len(gets), "a client that never reads: its %d bytes of GETs all accepted" % len(gets))
        eq(r.get("v"), VALUE, "another client is served while one never reads")
        eq(r.ping(), True, "PING from another client while one never reads")
        grown_mb = (peak_rss_kb(srv) - base_kb) / 1024.0
        print("never-reading client: peak RSS grew by %.0f MB (%d MB of replies asked for)"
              % (grown_mb, N * len(VALUE) >> 20))
        # held: 64 MB of output (in a buffer that grows by doubling), the 12 MB of input (in
        # one that grows by half), the replies of the batches out at other shards: nothing
        # like the whole 586 MB asked for
        check(sanitized(binary) or grown_mb < N * len(VALUE) / 2 / 2**20,
              "a client that never reads: peak RSS grew by %.0f MB, under half the replies" % grown_mb)
        s.close()

        eq(r.config_set("client-query-buffer-limit", "4mb"), True, "CONFIG SET client-query-buffer-limit 4mb")
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.settimeout(TIMEOUT)
        sender = Sender(s, gets)
        sender.start()
        sender.join(TIMEOUT)
        check(sender.error is not None and sender.sent < len(gets),
              "client-query-buffer-limit 4mb: a client that never reads is closed (sent %d of %d, %r)"
              % (sender.sent, len(gets), sender.error))
        s.close()
        deadline = time.monotonic() + 10
        line = "Closing client that reached max query buffer length: id="
        while line not in srv.tail(100000) and time.monotonic() < deadline:
            time.sleep(0.1)
        check(line in srv.tail(100000), "the log says why the client was closed: %r" % line)
        check('(qbuf initial bytes: "*2\\r\\n$3\\r\\nGET\\r\\n$1\\r\\nv\\r\\n' in srv.tail(100000),
              "the log line quotes the query buffer's first bytes as Redis does")
        eq(r.config_set("client-query-buffer-limit", "1gb"), True, "CONFIG SET client-query-buffer-limit 1gb")
        eq(r.get("v"), VALUE, "GET after the client was closed")
        r.close()
    finally:
        stop_checked(srv, "the never-reads server")


def half_close_run(port, payload):
    """send payload, shutdown(SHUT_WR), read until the server ends the connection"""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(60)
    s.sendall(payload)
    s.shutdown(socket.SHUT_WR)
    got = []
    try:
        while True:
            d = s.recv(1 << 20)
            if not d:
                break
            got.append(d)
    except OSError as e:
        got.append(("<%r>" % e).encode())
    s.close()
    return b"".join(got)


def half_close(srv, is_redis):
    port = srv.port
    r = redis.Redis(host="127.0.0.1", port=port, socket_timeout=30)
    r.flushall()
    eq_bytes(half_close_run(port, b"SET a 1\r\nGET a\r\n"), b"+OK\r\n$1\r\n1\r\n", "SET, GET, then half-close")

    # keys of every shard, each SET followed by a GET of a key set just before
    n = 10000
    req, want = [], []
    for i in range(n):
        req.append(resp("SET", "k%d" % i, "v%d" % i))
        want.append(b"+OK\r\n")
        req.append(resp("GET", "k%d" % (i // 2)))
        want.append(bulk(b"v%d" % (i // 2)))
    eq_bytes(half_close_run(port, b"".join(req)), b"".join(want),
       "%d SETs and GETs over many shards, then half-close" % n)

    # multi-key commands across shards
    keys = ["m%d" % i for i in range(64)]
    mset = resp("MSET", *[x for k in keys for x in (k, "val-" + k)])
    mget = resp("MGET", *(keys + ["nokey"]))
    want = b"+OK\r\n" + b"*65\r\n" + b"".join(bulk(b"val-" + k.encode()) for k in keys) + bulk(None)
    want += b":64\r\n"
    eq_bytes(half_close_run(port, mset + mget + resp("DEL", *keys)), want, "MSET, MGET, DEL across shards, then half-close")

    # a blocked client that shuts down is dropped: its BLPOP never takes the element (shut down
    # once it is seen blocked, or at once, when its end may come before it blocks)
    blocked = lambda: r.info("clients")["blocked_clients"]  # noqa: E731
    for q, wait in (("q1", True), ("q2", True), ("q3", False), ("q4", False)):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(resp("BLPOP", q, "0"))
        if wait:
            eq(wait_for(blocked, 1), 1, "BLPOP %s: the client is blocked" % q)
        s.shutdown(socket.SHUT_WR)
        s.settimeout(30)
        try:
            rest = s.recv(100)
        except OSError as e:
            rest = ("<%r>" % e).encode()
        eq(rest, b"", "BLPOP %s, then half-close: the connection ends with no reply" % q)
        s.close()
        eq(wait_for(blocked, 0), 0, "BLPOP %s, half-closed: no longer blocked" % q)
        eq(r.lpush(q, "job"), 1, "LPUSH %s after its waiter went" % q)
        eq(r.lrange(q, 0, -1), [b"job"], "the element is still in %s" % q)
        r.delete(q)

    # a subscriber that shuts down gets its confirmation, then the end
    eq_bytes(half_close_run(port, resp("SUBSCRIBE", "ch1", "ch2")),
       b"*3\r\n$9\r\nsubscribe\r\n$3\r\nch1\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$3\r\nch2\r\n:2\r\n",
       "SUBSCRIBE, then half-close")
    # a command not finished when the end comes is not run
    eq_bytes(half_close_run(port, b"SET a 2\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n"), b"+OK\r\n",
       "a complete and a partial command, then half-close")
    eq(r.get("a"), b"2", "the partial SET did not run")

    if not is_redis:  # more replies than the socket holds: Redis drops those it has not written
        big = b"y" * 10240
        r.set("big", big)
        eq_bytes(half_close_run(port, resp("GET", "big") * 1000), bulk(big) * 1000,
                 "1000 GETs of 10 KB, then half-close")
    eq(r.ping(), True, "PING after the half-closed clients")
    r.close()


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    srv = Server(sys.argv[1], threads=threads, name="big_pipeline")
    srv.start()
    print("redis-py %s against %s on port %d" % (redis.__version__, sys.argv[1], srv.port))
    for part in (half_close, big_pipeline):
        try:
            if part is half_close:
                part(srv, srv.is_redis)
            else:
                part(srv)
        except Exception as e:  # a crash of the test is a failure, with the server log
            check(False, "%s: exception: %r" % (part.__name__, e))
    stop_checked(srv, "server")
    if not srv.is_redis:
        try:
            never_reader(sys.argv[1], threads)
        except Exception as e:
            check(False, "never_reader: exception: %r" % (e,))
    return expect.done("test_big_pipeline")


if __name__ == "__main__":
    sys.exit(main())
