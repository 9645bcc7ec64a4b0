#!/usr/bin/python3
"""test_monitor.py SERVER [THREADS]: MONITOR against Redis 7.0 (SERVER redis-server checks the test).

Starts a real redis-server and SERVER (percore with THREADS shard threads,
default 4), opens the same monitoring connections on each (on percore, until
every shard has at least one, 8 at least) and the same clients, and runs the
same steps on both: strings, keys on every shard, MSET/MGET across shards,
MULTI/EXEC (cross-shard, with SELECT, refused, EXECABORT, lower case, WATCH
touched by another client), a BLPOP served by another client and one timing
out, AUTH and HELLO ... AUTH (redacted as Redis redacts them, and not where
Redis does not), requirepass and NOAUTH, admin commands (not shown),
scripts (EVAL's line, then its redis.call lines as "[db lua]"), functions
(FUNCTION LOAD's line, FCALL's and its redis.call lines),
SELECT (the db field), binary and quoted arguments, PING, ECHO, PUBLISH to
a subscriber, unknown commands and wrong arity (not shown), and MONITOR's
own rules (inside MULTI, twice, QUIT from a monitor, a monitor touching the
keyspace, CLIENT LIST flags=O, INFO connected_clients).

Every client's replies must be Redis's bytes, and every monitor must get
Redis's lines: the timestamp (checked to be now) and the client's port
(checked to be that client's) aside, each client's lines exactly once and
in Redis's order.  Lines of different clients may interleave differently
on percore, where they come from different shards.

KNOWN_DIFFERENCES lists the lines percore shows that Redis does not (and why);
they are reported, not failed, and a known difference that went away is
reported too.

Exit status 0 when every check passes, 1 otherwise, 77 without redis-server.
"""
import os
import re
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from diff import Conn, Server, encode, show  # noqa: E402  (tests/compat/diff.py)

REDIS = "/usr/bin/redis-server"
LINE = re.compile(rb"^\+(\d+)\.(\d{6}) \[(\d+) (?:127\.0\.0\.1:(\d+)|lua)\] (.*)\r\n$", re.S)
WAIT_S = 60.0  # how long a reply or the last monitor line may take (a busy machine, ASan)

# (client, line without the timestamp and address) percore shows and Redis does not
# (with one shard there is no other shard: none applies)
KNOWN_DIFFERENCES = {
    ("main", b'[0] "SET" "foo" "oom"'):
        "a command another shard refuses for maxmemory (-OOM) is shown: percore feeds a command bound "
        "for another shard when it is dispatched, and its owner decides on maxmemory later (one run "
        "on its own shard is shown once it ran, unless refused, as Redis)",
}


def b(x):
    return x if isinstance(x, bytes) else x.encode()


def cmd(*args):
    return [b(a) for a in args]


def any_(*args):
    """a command whose reply differs between servers by design (ids, versions): its type is compared"""
    return ("any", cmd(*args))


BIN = b"bin\x00\x01\x07\x08\x1f\x7f\x80\xfe\xff \"q\" 'q' \\ \n\r\t end"

# steps: (client, [commands]) sends them in one write and reads a reply each; ("send", client,
# [commands]) sends only; ("read", client, n) reads n replies; ("connect", client); ("sleep", s)
STEPS = [
    ("main", [cmd("FLUSHALL"), cmd("SET", "foo", "bar"), cmd("GET", "foo"), cmd("PING"),
              cmd("PING", "hello world"), cmd("ECHO", "x y")]),
    ("main", [cmd("SET", "k%d" % i, "v%d" % i) for i in range(24)]),        # every shard
    ("main", [cmd("INCR", "n%d" % (i % 5)) for i in range(40)]),             # a pipeline, in order
    ("main", [cmd("MSET", "a", "1", "b", "2", "c", "3", "d", "4", "{a}e", "5"),
              cmd("MGET", "a", "b", "c", "d", "nope"), cmd("DEL", "a", "b", "zz"), cmd("EXISTS", "c", "d", "a"),
              cmd("MSET", *[x for i in range(20) for x in ("m%d" % i, "v%d" % i)]),
              cmd("DBSIZE"), any_("KEYS", "k1*")]),
    # transactions: EXEC after the commands it ran, with the db they left
    ("main", [cmd("MULTI"), cmd("SET", "{t}x", "1"), cmd("INCR", "{t}x"), cmd("MSET", "a", "9", "b", "8"),
              cmd("MGET", "a", "b", "k3"), cmd("GET", "k7"), cmd("EXEC")]),
    ("main", [cmd("multi"), cmd("set", "lc", "1"), cmd("exec")]),
    ("main", [cmd("MULTI"), cmd("SELECT", "3"), cmd("SET", "z", "1"), cmd("EXEC"), cmd("SET", "in3", "x"),
              cmd("SELECT", "0")]),
    ("main", [cmd("MULTI"), cmd("CONFIG", "GET", "maxmemory"), cmd("PING"), cmd("EXEC")]),
    ("main", [cmd("MULTI"), cmd("EXEC")]),
    ("main", [cmd("MULTI"), cmd("SET", "x"), cmd("EXEC")]),                   # EXECABORT
    ("main", [cmd("MULTI"), cmd("NOSUCHCMD", "a"), cmd("EXEC")]),
    ("main", [cmd("EXEC"), cmd("EXEC", "x"), cmd("MULTI"), cmd("EXEC", "x"), cmd("DISCARD")]),
    ("main", [cmd("MULTI"), cmd("MONITOR"), cmd("SET", "afterm", "1"), cmd("EXEC")]),
    ("main", [cmd("MULTI"), cmd("GET", "foo"), cmd("DISCARD")]),
    ("main", [cmd("WATCH", "w"), cmd("WATCH", "w2")]),
    ("other", [cmd("SET", "w", "theirs")]),
    ("main", [cmd("MULTI"), cmd("SET", "w", "mine"), cmd("EXEC"), cmd("WATCH", "w2"), cmd("MULTI"),
              cmd("SET", "w2", "mine"), cmd("EXEC"), cmd("UNWATCH")]),
    # blocking: served by another client, and timing out
    ("send", "other", [cmd("BLPOP", "bq", "10")]),
    ("sleep", 0.3),
    ("main", [cmd("LPUSH", "bq", "v1")]),
    ("read", "other", 1),
    ("other", [cmd("BLPOP", "bq2", "0.1"), cmd("BLPOP", "bq", "bq2", "k1x", "0.1")]),
    # AUTH and HELLO: secrets redacted where Redis redacts them
    ("main", [cmd("AUTH", "wrong"), cmd("AUTH", "someuser", "pass"), cmd("AUTH", "a", "b", "c"),
              any_("HELLO", "3", "AUTH", "default", "pw"), any_("HELLO", "2"),
              cmd("HELLO", "3", "AUTH", "onlyuser"), cmd("HELLO", "5", "AUTH", "u", "p"),
              cmd("HELLO", "x", "AUTH", "u", "p"), cmd("HELLO", "3", "FOO", "AUTH", "u", "p"),
              any_("HELLO", "2", "SETNAME", "nm", "AUTH", "default", "pw")]),
    # admin commands are not shown; the others are
    ("main", [any_("CONFIG", "GET", "maxmemory"), cmd("CONFIG", "SET", "slowlog-log-slower-than", "10000"),
              any_("CLIENT", "LIST"), cmd("CLIENT", "SETNAME", "mainconn"), cmd("CLIENT", "GETNAME"),
              any_("CLIENT", "ID"), any_("CLIENT", "INFO"), cmd("CLIENT", "NO-EVICT", "off"),
              any_("SLOWLOG", "GET"), cmd("SLOWLOG", "RESET"), any_("INFO", "server"), any_("COMMAND", "COUNT"),
              any_("LATENCY", "LATEST"), any_("TIME")]),
    # scripts: EVAL's line, then each redis.call's as "[db lua]" (declared keys, run on their shard)
    ("main", [cmd("EVAL", "redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])", "1", "sk", "sv"),
              cmd("EVAL", "return redis.call('incrby', KEYS[1], ARGV[1])", "1", "{sk}n", "5"),
              cmd("EVAL", "return redis.call('echo', ARGV[1])", "0", "e"),
              cmd("EVAL", "return redis.call('get', KEYS[1])", "1", "nokey")]),
    # functions: FUNCTION's line; FCALL's, then its redis.call lines as EVAL's
    ("main", [cmd("FUNCTION", "LOAD", "#!lua name=mon\nredis.register_function('setget', function(keys, args) "
                  "redis.call('set', keys[1], args[1]) return redis.call('get', keys[1]) end)"),
              cmd("FCALL", "setget", "1", "fk", "fv"), cmd("FCALL_RO", "setget", "1", "fk", "fv"),
              cmd("FCALL", "nosuch", "0"), cmd("FUNCTION", "DELETE", "mon")]),  # DELETE after the FCALLs
    # the db field
    ("main", [cmd("SELECT", "2"), cmd("SET", "s2", "v"), cmd("GET", "s2"), cmd("SELECT", "0"),
              cmd("GET", "s2")]),
    # quoting: sdscatrepr's escapes and \xHH
    ("main", [cmd("SET", BIN, BIN), cmd("ECHO", BIN), cmd("GET", BIN), cmd("ECHO", ""),
              cmd("SET", "big", "x" * 5000), cmd("ECHO", bytes(range(256)))]),
    # pub/sub
    ("sub", [cmd("SUBSCRIBE", "ch", "ch2")]),
    ("read", "sub", 1),                                                     # ch2's confirmation
    ("main", [cmd("PUBLISH", "ch", "hello"), cmd("PUBLISH", "nobody", "x")]),
    ("read", "sub", 1),
    ("sub", [cmd("PING"), cmd("GET", "foo"), cmd("UNSUBSCRIBE", "ch2")]),
    # never shown: unknown commands, wrong arity, a maxmemory refusal
    ("main", [cmd("NOSUCHCMD"), cmd("nosuch", "a", "b"), cmd("GET"), cmd("SET", "x"), cmd("ECHO"),
              cmd("CONFIG", "SET", "maxmemory", "1")]),
    ("main", [cmd("SET", "foo", "oom"), cmd("GET", "foo")]),  # (a CONFIG SET acts before remote commands
    ("main", [cmd("CONFIG", "SET", "maxmemory", "0"), cmd("SET", "foo", "bar2")]),  # pipelined before it)
    # requirepass: NOAUTH is not shown, an EXEC refused for it is (execCommandAbort); AUTH redacted
    ("main", [cmd("CONFIG", "SET", "requirepass", "s3cret")]),
    ("connect", "na"),
    ("na", [cmd("GET", "foo"), cmd("EXEC"), cmd("AUTH", "wrong"), cmd("HELLO", "3", "AUTH", "default", "bad"),
            cmd("AUTH", "s3cret"), cmd("GET", "foo")]),
    ("main", [cmd("GET", "foo"), cmd("CONFIG", "SET", "requirepass", "")]),
    ("na", [cmd("SET", "na", "1")]),
]


class Client:
    """a connection whose replies are read one by one; on a monitor, the feed's lines are kept aside"""

    def __init__(self, name, port):
        self.name = name
        self.conn = Conn(port, timeout=WAIT_S)
        self.port = self.conn.sock.getsockname()[1]
        self.lines = []          # the feed's lines, as they came
        self.stray = []          # replies that came where only lines were expected
        self.closed = False

    def send(self, cmds):
        self.conn.send(b"".join(encode(c) for c in cmds))

    def next_value(self, timeout):
        v = self.conn.read(timeout)
        if v == b"":
            self.closed = True
        return v

    def reply(self, timeout=WAIT_S):
        """the next reply (None: none in time; b'': closed), feed lines set aside"""
        deadline = time.monotonic() + timeout
        while True:
            v = self.next_value(max(0.0, deadline - time.monotonic()))
            if v is None or v == b"":
                return v
            if LINE.match(v):
                self.lines.append(v)
                continue
            return v

    def collect(self, until, timeout):
        """read feed lines until until(lines) or timeout; True if until() held"""
        deadline = time.monotonic() + timeout
        while not until(self.lines):
            left = deadline - time.monotonic()
            if left <= 0 or self.closed:
                return False
            v = self.next_value(min(left, 1.0))
            if v is None or v == b"":
                continue
            if LINE.match(v):
                self.lines.append(v)
            else:
                self.stray.append(v)
        return True


class Side:
    """one server, its clients and monitors"""

    def __init__(self, srv, nmon, threads):
        self.srv = srv
        self.clients = {}
        self.ports = {}
        self.mons = []
        self.replies = []        # (step, command, reply)
        self.failures = []
        self.t0 = time.time()
        for i in range(nmon):
            self.add_monitor()
        self.main = self.connect("main")
        self.probe = self.connect("probe")  # CLIENT LIST and INFO, polled: its lines are not compared
        if threads:  # percore: a monitor on every shard
            while len(set(self.shards().get(m.name) for m in self.mons)) < threads and len(self.mons) < 64:
                self.add_monitor()
        for name in ("other", "sub"):
            self.connect(name)

    def connect(self, name):
        c = Client(name, self.srv.port)
        self.clients[name] = c
        self.ports[c.port] = name
        return c

    def add_monitor(self):
        m = self.connect("mon%d" % len(self.mons))
        m.send([cmd("MONITOR")])
        r = m.reply()
        if r != b"+OK\r\n":
            raise RuntimeError("MONITOR answered %r" % r)
        self.mons.append(m)
        return m

    def client_list(self):
        """{client name: {field: value}} from CLIENT LIST (an admin command: not shown)"""
        self.probe.send([cmd("CLIENT", "LIST")])
        r = self.probe.reply()
        body = r.split(b"\r\n", 1)[1]
        out = {}
        for line in body.decode().splitlines():
            f = dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv)
            if "addr" not in f:
                continue
            port = int(f["addr"].rsplit(":", 1)[1])
            if port in self.ports:
                out[self.ports[port]] = f
        return out

    def shards(self):
        return {n: f.get("shard") for n, f in self.client_list().items()}

    def connected_clients(self):
        self.probe.send([cmd("INFO", "clients")])
        r = self.probe.reply()
        return int(re.search(rb"connected_clients:(\d+)", r).group(1))

    def run(self, steps):
        for i, st in enumerate(steps):
            if st[0] == "sleep":
                time.sleep(st[1])
                continue
            if st[0] == "connect":
                self.connect(st[1])
                continue
            if st[0] == "send":
                self.clients[st[1]].send([c[1] if isinstance(c, tuple) else c for c in st[2]])
                continue
            if st[0] == "read":
                for _ in range(st[2]):
                    self.replies.append((i, ("exact", [b"(read)"]), self.clients[st[1]].reply()))
                continue
            client, cmds = self.clients[st[0]], st[1]
            cmds = [c if isinstance(c, tuple) else ("exact", c) for c in cmds]
            client.send([c[1] for c in cmds])
            for c in cmds:
                self.replies.append((i, c, client.reply()))


def normalize(side, mon, raw, t_lo, t_hi):
    """(client name, '[db] args') of a feed line; checks its time and address"""
    m = LINE.match(raw)
    ts = int(m.group(1)) + int(m.group(2)) / 1e6
    if not (t_lo - 2 <= ts <= t_hi + 2):
        side.failures.append("%s: timestamp %.6f not between %.0f and %.0f: %s" % (mon.name, ts, t_lo, t_hi,
                                                                               show(raw)))
    if m.group(4) is None:  # a script's redis.call: "[db lua]", as its own client
        return "lua", b"[" + m.group(3) + b"] " + m.group(5)
    port = int(m.group(4))
    name = side.ports.get(port)
    if name is None:
        side.failures.append("%s: a line from a port no client has: %s" % (mon.name, show(raw)))
        name = "port%d" % port
    return name, b"[" + m.group(3) + b"] " + m.group(5)


def per_client(lines, shards=1):
    """each client's lines in order; scripts' lines ("lua") sorted when there are several shards: each
    script's come from the shard it ran on, so the lines of scripts run on different shards interleave"""
    out = {}
    for name, text in lines:
        if name != "probe":
            out.setdefault(name, []).append(text)
    if shards > 1 and "lua" in out:
        out["lua"].sort()
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    if not os.path.exists(REDIS):
        print("SKIP: %s is not installed" % REDIS)
        return 77
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    rs = Server(REDIS, name="monitor-redis")
    ps = Server(sys.argv[1], threads=threads, name="monitor-percore")
    rs.start()
    ps.start()
    failures = []
    notes = []
    try:
        p = Side(ps, 8, None if ps.is_redis else threads)
        r = Side(rs, len(p.mons), None)
        sides = (r, p)
        if threads > 1 and not ps.is_redis:
            spread = sorted(set(p.shards().get(m.name) for m in p.mons))
            notes.append("percore: %d monitors on shards %s" % (len(p.mons), ",".join(spread)))
            if len(spread) < threads:
                failures.append("percore's monitors are on shards %s only" % spread)

        # MONITOR's own rules, before anything is shown: QUIT from a monitor (+OK, then closed, and
        # not its own line), MONITOR again (no reply), a monitor touching the keyspace (refused)
        for s in sides:
            s.t0 = time.time()
            q = s.mons.pop()
            q.send([cmd("QUIT")])
            got = [q.next_value(WAIT_S)]
            while got[-1] not in (None, b""):
                got.append(q.next_value(WAIT_S))
            s.quit_reply = got
            s.mons[0].send([cmd("MONITOR"), cmd("PING"), cmd("GET", "foo"), cmd("SET", "foo", "x"),
                            cmd("PUBLISH", "nobody", "m"), cmd("MULTI"), cmd("GET", "foo"), cmd("EXEC")])
            s.mon_replies = [s.mons[0].reply() for _ in range(7)]
            s.mons[1].send([cmd("SUBSCRIBE", "mch"), cmd("GET", "foo"), cmd("EXEC"), cmd("PUBLISH", "a", "b"),
                            cmd("PING")])  # a subscribed monitor: the subscriber's rules first
            s.mon_replies += [s.mons[1].reply() for _ in range(5)]
        if r.quit_reply != p.quit_reply:
            failures.append("QUIT from a monitor: redis %r, percore %r" % (r.quit_reply, p.quit_reply))
        if r.mon_replies != p.mon_replies:
            failures.append("monitors' replies (MONITOR again, PING, GET, SET, PUBLISH, MULTI, GET, EXEC; "
                            "SUBSCRIBE, GET, EXEC, PUBLISH, PING):\n"
                            "    redis:   %r\n    percore: %r" % (r.mon_replies, p.mon_replies))
        # INFO connected_clients counts the monitors (percore's is summed every stats interval)
        want = r.connected_clients()
        deadline = time.monotonic() + 10
        while p.connected_clients() != want and time.monotonic() < deadline:
            time.sleep(0.1)
        got = p.connected_clients()
        if got != want:
            failures.append("INFO connected_clients: redis %d, percore %d" % (want, got))

        for s in sides:
            s.run(STEPS)
        for (i, (marker, c), rr), (_, _, pr) in zip(r.replies, p.replies):
            same = rr == pr if marker == "exact" else (rr or b"?")[:1] == (pr or b"?")[:1]
            if not same:
                failures.append("step %d %s: replies differ\n    redis:   %s\n    percore: %s" % (
                    i, show(b" ".join(c), 120), show(rr or b"(none)"), show(pr or b"(none)")))

        # CLIENT LIST: a monitor's flags are O (as the other fields compared)
        rl, pl = r.client_list(), p.client_list()
        for name in sorted(rl):
            for field in ("flags", "db", "sub", "psub", "multi", "name"):
                if rl[name].get(field) != pl.get(name, {}).get(field):
                    failures.append("CLIENT LIST %s %s: redis %r, percore %r" % (
                        name, field, rl[name].get(field), pl.get(name, {}).get(field)))

        # the end: every monitor has every line
        for s in sides:
            s.main.send([cmd("ECHO", "the-end")])
            s.main.reply()
            s.t1 = time.time()
        end = b'"ECHO" "the-end"\r\n'
        for m in r.mons:
            if not m.collect(lambda ls: any(x.endswith(end) for x in ls), WAIT_S):
                raise RuntimeError("redis: %s did not get the last line" % m.name)
        want_n = len(r.mons[0].lines)
        for m in p.mons:
            m.collect(lambda ls: len(ls) >= want_n and any(x.endswith(end) for x in ls), WAIT_S)
            m.collect(lambda ls: False, 0.5)  # and nothing more: a line twice would show here
        ref = [normalize(r, r.mons[0], x, r.t0, r.t1) for x in r.mons[0].lines]
        for m in r.mons[1:]:  # the harness: Redis's monitors agree with each other
            if [normalize(r, m, x, r.t0, r.t1) for x in m.lines] != ref:
                failures.append("redis: %s and %s differ (the test is wrong)" % (r.mons[0].name, m.name))
        for m in r.mons + p.mons:
            if m.stray:
                failures.append("%s got replies it should not have: %s" % (m.name, [show(x, 80) for x in m.stray]))
        ref_by = per_client(ref, threads)
        seen_known = set()
        known_differences = KNOWN_DIFFERENCES if threads > 1 else {}
        for m in p.mons:
            got_by = per_client((normalize(p, m, x, p.t0, p.t1) for x in m.lines), threads)
            for name in sorted(set(ref_by) | set(got_by)):
                want_l, got_l = ref_by.get(name, []), got_by.get(name, [])
                known = [x for x in got_l if (name, x) in known_differences]
                seen_known.update((name, x) for x in known)
                got_l = [x for x in got_l if (name, x) not in known_differences]
                if got_l != want_l:
                    failures.append("%s (shard %s): the lines of %s differ from Redis's:\n%s" % (
                        m.name, p.shards().get(m.name), name, diff_lines(want_l, got_l)))
        for k, why in known_differences.items():
            if k in seen_known:
                notes.append("known difference: %s %s: %s" % (k[0], k[1].decode(), why))
            else:
                notes.append("known difference gone (remove it from the list): %s %s" % (k[0], k[1].decode()))
        failures += r.failures + p.failures
        notes.append("%d lines per monitor, %d monitors" % (want_n, len(p.mons)))
    finally:
        status = ps.stop()
        rs.stop()
        if status not in (0, None):
            failures.append("percore exited with %s:\n%s" % (status, ps.tail()))
    for n in notes:
        print(n)
    for f in failures[:30]:
        print("FAIL " + f)
    print("test_monitor: %s (threads %d)" % ("%d failures" % len(failures) if failures else "passed", threads))
    if not failures and not os.environ.get("PC_KEEP_LOGS"):
        for s in (rs, ps):
            try:
                os.unlink(s.log)
            except OSError:
                pass
    return 1 if failures else 0


def diff_lines(want, got):
    out = []
    n = max(len(want), len(got))
    first = next((i for i in range(n) if i >= len(want) or i >= len(got) or want[i] != got[i]), n)
    for i in range(max(0, first - 2), min(n, first + 6)):
        w = show(want[i], 160) if i < len(want) else "(none)"
        g = show(got[i], 160) if i < len(got) else "(none)"
        out.append("    %3d redis:   %s\n        percore: %s" % (i, w, g))
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
