#!/usr/bin/python3
"""effects_oracle.py: the handler-effects unit tests checked against redis-server 7.0.

The unit tests tests/unit/test_effects_*.c that use tests/unit/effects_log.h
state, for each command, the reply bytes and the effects the handler reports,
e.g.

    FX("+OK\\r\\n", "n:new@0:k mod@0:k $:set@0:k", "set", "k", "v");

This script replays those files, in order, against a real redis-server with
notify-keyspace-events KAn and a psubscribe to __keyspace@*__:*, and checks
that Redis gives the same reply bytes and the same keyspace events (name,
database, key, order).  Modified keys ("mod@") and replaced databases
("replace:") cannot be seen from a client and are not compared; neither are
Redis's "expired" events, which the core reports, not the handler.

It follows the test's other steps: fx_reset() is FLUSHALL + SELECT 0,
fx_db = N is SELECT N, fx_now += MS sleeps MS (and a little more).  Lines
Redis cannot mirror are not compared (counted as skipped), up to the next
fx_reset(): after a class filter (fx.notify = ...), a proto_max_bulk_len
change, or an internal command (__take, __put), which Redis does not have.

    effects_oracle.py --redis /usr/bin/redis-server tests/unit/test_effects_*.c

Exit status: 0 when every line agrees, 1 otherwise, 77 when redis-server is
missing.  Files that do not include effects_log.h are ignored.
"""
import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diff import Conn, Server, encode  # noqa: E402

STEP = re.compile(r'\bFX(_RUN)?\(((?:"(?:[^"\\]|\\.)*"|[^;])*?)\);'
                  r'|fx_reset\(\);|fx_now \+= (\d+);|fx_db = (\d+);|fx\.notify = [^;]+;'
                  r'|fx_cfg\.proto_max_bulk_len = ([^;]+);')
LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"')


def c_string(tok):
    return tok[1:-1].encode().decode("unicode_escape").encode("latin-1")


def steps(src):
    """the test's steps in order: ('reset',), ('sleep', ms), ('select', db), ('unmirrored',),
    ('run', reply or None, effects or None, args, line)"""
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
            if "~0u" not in text:
                yield ("unmirrored",)
        elif text.startswith("fx_cfg"):
            if not m.group(5).startswith("512"):
                yield ("unmirrored",)
        else:
            lits = [c_string(t) for t in LITERAL.findall(m.group(2))]
            if m.group(1):
                yield ("run", None, None, lits, line)
            else:
                yield ("run", lits[0], lits[1].decode(), lits[2:], line)


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
        self.cmd(b"config", b"set", b"notify-keyspace-events", b"KAn")
        self.sub.send(encode([b"psubscribe", b"__keyspace@*__:*"]))
        self.sub.read()

    def cmd(self, *args):
        self.c.send(encode(list(args)))
        r = self.c.read()
        if r is None:
            raise RuntimeError("redis-server did not answer %r" % (args,))
        return r

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


def check_file(o, path):
    checked = differ = skipped = 0
    mirrored = True
    name = os.path.basename(path)
    with open(path) as f:
        src = f.read()
    if '#include "effects_log.h"' not in src:
        return 0, 0, 0
    for st in steps(src):
        if st[0] == "reset":
            o.cmd(b"flushall")
            o.cmd(b"select", b"0")
            o.events()
            mirrored = True
        elif st[0] == "sleep":
            time.sleep(st[1] / 1000.0 + 0.05)
        elif st[0] == "select":
            o.cmd(b"select", st[1].encode())
        elif st[0] == "unmirrored":
            mirrored = False
        else:
            _, reply, fx, args, line = st
            if args[0].startswith(b"__"):
                mirrored = False
            if not mirrored:
                skipped += reply is not None
                continue
            r = o.cmd(*args)
            evs = [e for e in o.events() if not e.startswith("expired@")]
            if reply is None:
                continue
            want = [e.split(":", 1)[1] for e in fx.split() if not e.startswith(("mod@", "replace:"))]
            checked += 1
            if r != reply or evs != want:
                differ += 1
                print("%s:%d: %s\n    redis-server: %r %s\n    the test:     %r %s" % (
                    name, line, b" ".join(args).decode("latin-1"), r, " ".join(evs), reply, " ".join(want)))
    print("%s: %d lines agree with redis-server, %d differ, %d not comparable" % (
        name, checked - differ, differ, skipped))
    return checked, differ, skipped


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
            c, d, _ = check_file(o, path)
            total += c
            differ += d
    finally:
        srv.stop()
    if total == 0:
        print("no FX lines found")
        return 1
    print("%d passed, %d failed" % (total - differ, differ))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
