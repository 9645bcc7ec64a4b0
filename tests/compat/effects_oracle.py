#!/usr/bin/python3
"""effects_oracle.py: the handler-effects unit tests checked against redis-server 7.0.

The unit tests tests/unit/test_effects_*.c (harness: tests/unit/effects_check.h)
state, for each command, the reply and the effects the handler reports, e.g.

    FX("+OK\\r\\n", "n:new@0:k mod@0:k $:set@0:k", "set", "k", "v");

This script replays those files, step by step, against a real redis-server
subscribed to __keyspace@*__:*, and checks that Redis gives the same reply
(FX: the bytes; FX_STARTS: their start) and the same keyspace events (name,
database, key, order).  Modified keys ("mod@"), keys made ready for blocked
clients ("ready@") and replaced databases ("replace:") cannot be seen from a
client and are not compared; neither are
Redis's "expired" events, which the core reports, not the handler.

Each file is replayed once with notify-keyspace-events KAn, where a line must
show all its events, then once per class letter (K and the letter), where it
must show its events of that class alone: which checks each token's class.
A line under fx.notify = NOTIFY_X | ... is compared in the runs of its classes.

The other steps: fx_reset() is FLUSHALL + SELECT 0, fx_db = N is SELECT N,
fx_now += MS sleeps MS (and a little more).  With fx_may_block false a
blocking command runs in MULTI/EXEC (it answers at once there, as the
handler does); with it true a line whose reply is "" (it blocked) is not run.
Lines Redis cannot mirror are not compared (counted as not comparable), up to
the next fx_reset(): after an fx_cfg change or an internal command (__take,
__put, __dump), which Redis does not have.

    effects_oracle.py --redis /usr/bin/redis-server tests/unit/test_effects_*.c

Exit status: 0 when every line agrees, 1 otherwise, 77 when redis-server is
missing.  Standard library only (and diff.py, next to it).
"""
import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diff import Conn, Server, encode  # noqa: E402  (tests/compat/diff.py)

STEP = re.compile(r'\bFX(_RUN|_STARTS)?\(((?:"(?:[^"\\]|\\.)*"|[^;])*?)\);'
                  r'|fx_reset\(\);|fx_now \+= (\d+);|fx_db = (\d+);|fx\.notify = ([^;]+);'
                  r'|fx_cfg\.\w+ = [^;]+;|fx_may_block = (true|false);')
LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"')
ALL = "g$lshzxetmnd"  # the class letters a token may carry
CLASSES = "g$lshzetdn"  # the runs with one class (x: expired events are not compared; m: no write has one)
NOTIFY = {"NOTIFY_GENERIC": "g", "NOTIFY_STRING": "$", "NOTIFY_LIST": "l", "NOTIFY_SET": "s",
          "NOTIFY_HASH": "h", "NOTIFY_ZSET": "z", "NOTIFY_EXPIRED": "x", "NOTIFY_EVICTED": "e",
          "NOTIFY_STREAM": "t", "NOTIFY_KEY_MISS": "m", "NOTIFY_NEW": "n", "NOTIFY_MODULE": "d"}
BLOCKING = {b"blpop", b"brpop", b"brpoplpush", b"blmove", b"blmpop", b"bzpopmin", b"bzpopmax", b"bzmpop"}


def c_string(tok):
    return tok[1:-1].encode().decode("unicode_escape").encode("latin-1")


def classes_of(expr):
    """the class letters of an fx.notify expression"""
    expr = expr.strip()
    if expr == "~0u":
        return ALL
    if expr == "0":
        return ""
    return "".join(NOTIFY[name.strip()] for name in expr.split("|"))


def steps(src):
    """the test's steps in order: ('reset',), ('sleep', ms), ('select', db), ('notify', letters),
    ('block', bool), ('unmirrored',), ('run', kind, reply or None, effects or None, args, line)"""
    src = re.sub(r"/\*.*?\*/", lambda c: "\n" * c.group(0).count("\n"), src, flags=re.S)  # lines kept
    for m in STEP.finditer(src):
        text = m.group(0)
        line = src.count("\n", 0, m.start()) + 1
        if text.startswith("fx_reset"):
            yield ("reset",)
        elif text.startswith("fx_now"):
            yield ("sleep", int(m.group(3)))
        elif text.startswith("fx_db"):
            yield ("select", m.group(4))
        elif text.startswith("fx.notify"):
            yield ("notify", classes_of(m.group(5)))
        elif text.startswith("fx_may_block"):
            yield ("block", m.group(6) == "true")
        elif text.startswith("fx_cfg"):
            yield ("unmirrored",)
        else:
            lits = [c_string(t) for t in LITERAL.findall(m.group(2))]
            if m.group(1) == "_RUN":
                yield ("run", "run", None, None, lits, line)
            else:
                yield ("run", "starts" if m.group(1) else "exact", lits[0], lits[1].decode(), lits[2:], line)


def elements(raw):
    """the bulk strings of a flat RESP2 array of bulks"""
    out, p = [], raw.index(b"\r\n") + 2
    while p < len(raw):
        e = raw.index(b"\r\n", p)
        n = int(raw[p + 1:e])
        out.append(raw[e + 2:e + 2 + n])
        p = e + 2 + n + 2
    return out


class Oracle:
    def __init__(self, srv):
        self.c = Conn(srv.port)
        self.sub = Conn(srv.port)
        self.sub.send(encode([b"psubscribe", b"__keyspace@*__:*"]))
        self.sub.read()

    def cmd(self, *args):
        self.c.send(encode(list(args)))
        r = self.c.read()
        if r is None:
            raise RuntimeError("redis-server did not answer %r" % (args,))
        return r

    def run(self, args, may_block):
        """a blocking command that may not block runs in MULTI, as the handler answers there"""
        if may_block or args[0].lower() not in BLOCKING:
            return self.cmd(*args)
        self.cmd(b"multi")
        queued = self.cmd(*args)
        done = self.cmd(b"exec")
        if queued != b"+QUEUED\r\n":
            return queued
        return done[len(b"*1\r\n"):]

    def events(self):
        """the events published since the last call: a PING on the subscriber comes back after them"""
        self.sub.send(encode([b"ping"]))
        evs = []
        while True:
            r = self.sub.read()
            if r is None:
                raise RuntimeError("no PONG from the subscriber")
            items = elements(r)
            if items[0] == b"pong":
                return evs
            ch = items[2].decode("latin-1")  # __keyspace@DB__:key
            db, key = ch[len("__keyspace@"):].split("__:", 1)
            evs.append("%s@%s:%s" % (items[3].decode(), db, key))


def replay(o, name, src, run_classes, result):
    """one run of a file with notify-keyspace-events K + run_classes; result[line]: its problems
    (a list, empty when it agreed) for the lines compared"""
    o.cmd(b"config", b"set", b"notify-keyspace-events", ("K" + run_classes).encode())
    o.cmd(b"flushall")
    o.cmd(b"select", b"0")
    o.events()
    mirrored, recorded, may_block = True, ALL, False
    for st in steps(src):
        if st[0] == "reset":
            o.cmd(b"flushall")
            o.cmd(b"select", b"0")
            o.events()
            mirrored, recorded, may_block = True, ALL, False
        elif st[0] == "sleep":
            time.sleep(st[1] / 1000.0 + 0.05)
        elif st[0] == "select":
            o.cmd(b"select", st[1].encode())
        elif st[0] == "notify":
            recorded = st[1]
        elif st[0] == "block":
            may_block = st[1]
        elif st[0] == "unmirrored":
            mirrored = False
        else:
            _, kind, reply, fx, args, line = st
            if args[0].startswith(b"__"):
                mirrored = False
            if not mirrored or (may_block and reply == b""):
                continue
            r = o.run(args, may_block)
            evs = [e for e in o.events() if not e.startswith("expired@")]
            # a run with every class compares the lines that record them all; a run with one, those recording it
            if kind == "run" or not all(c in recorded for c in run_classes.replace("A", ALL) if c in CLASSES):
                continue
            want = [t.split(":", 1)[1] for t in fx.split()
                    if not t.startswith(("mod@", "ready@", "replace:")) and (t[0] in run_classes or "A" in run_classes)]
            problems = result.setdefault(line, [])
            if (r != reply) if kind == "exact" else not r.startswith(reply):
                problems.append("%s: reply %r, the test says %r" % (name, r, reply))
            if evs != want:
                problems.append("notify-keyspace-events K%s: events %s, the test says %s" % (
                    run_classes, " ".join(evs) or "none", " ".join(want) or "none"))


def check_file(o, path):
    name = os.path.basename(path)
    with open(path) as f:
        src = f.read()
    result = {}
    for run_classes in ["An"] + list(CLASSES):
        replay(o, name, src, run_classes, result)
    lines = [st for st in steps(src) if st[0] == "run" and st[1] != "run"]
    differ = 0
    for line in sorted(result):
        if result[line]:
            differ += 1
            print("%s:%d:\n    %s" % (name, line, "\n    ".join(sorted(set(result[line])))))
    print("%s: %d lines agree with redis-server, %d differ, %d not comparable" % (
        name, len(result) - differ, differ, len(lines) - len(result)), flush=True)
    return len(result), differ


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    if not os.access(a.redis, os.X_OK):
        print("redis-server not found: skipped")
        return 77
    srv = Server(a.redis, name="effects-redis")
    srv.start()
    total = differ = 0
    try:
        o = Oracle(srv)
        for path in a.files:
            c, d = check_file(o, path)
            if c == 0:
                print("%s: no FX line compared" % os.path.basename(path))
                d += 1
            total += c
            differ += d
    finally:
        srv.stop()
    print("%d passed, %d failed" % (total - differ, differ))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
