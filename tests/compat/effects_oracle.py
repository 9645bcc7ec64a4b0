#!/usr/bin/python3
"""effects_oracle.py: the test_effects_* tables checked against a real redis-server 7.0.

The unit tests tests/unit/test_effects_*.c drive percore's write handlers
and compare what they report with tables of FX(db, setup, command, reply,
effects) cases (tests/unit/effects_cases.h).  This script runs the same
cases against redis-server, so that the tables say what Redis does:

  - the reply must start with the case's reply;
  - with notify-keyspace-events "EAn" a subscriber to __keyevent@*__:* must
    see exactly the case's events (its C:EVENT:KEY tokens, in order, in the
    case's database; the M:KEY tokens are WATCH's business, not visible here);
  - with one class at a time ("E" and a letter), the events of that class
    alone, which checks each token's class letter.

    effects_oracle.py [--redis /usr/bin/redis-server] [test_effects_x.c ...]

Exit status: 0 when every case agrees, 1 otherwise, 77 when redis-server is
missing.  Standard library only (and diff.py, next to it).
"""

import argparse
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from diff import Conn, Server, encode, parse  # noqa: E402  (tests/compat/diff.py)

CLASSES = "g$lshzxetdn"  # notify-keyspace-events letters a handler's events may have
STR = r'"((?:[^"\\]|\\.)*)"'
CASE = re.compile(r"FX\(\s*(\d+)\s*,\s*" + r"\s*,\s*".join([STR] * 4) + r"\s*\)")
C_ESCAPES = {"r": "\r", "n": "\n", "t": "\t", "\\": "\\", '"': '"'}


def c_string(s):
    return re.sub(r"\\(.)", lambda m: C_ESCAPES[m.group(1)], s)


def read_cases(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return [(int(db), c_string(setup), c_string(cmd), c_string(reply), c_string(effects))
            for db, setup, cmd, reply, effects in CASE.findall(text)]


class Oracle:
    """a redis-server, a connection for the commands and one subscribed to every keyevent"""

    def __init__(self, binary):
        self.server = Server(binary, name="redis-effects")
        self.server.start()
        self.cmd = Conn(self.server.port)
        self.sub = Conn(self.server.port)
        self.sub.send(encode([b"PSUBSCRIBE", b"__keyevent@*__:*"]) + encode([b"SUBSCRIBE", b"fx-mark"]))
        for _ in range(2):
            self.sub.read()
        self.marks = 0

    def call(self, *args):
        self.cmd.send(encode([a if isinstance(a, bytes) else a.encode() for a in args]))
        r = self.cmd.read()
        if r is None:
            raise RuntimeError("no reply to %s" % " ".join(map(str, args)))
        return r

    def events(self):
        """the keyevents since the last call, as (db, event, key), up to a mark published now"""
        self.marks += 1
        mark = str(self.marks).encode()
        self.call("PUBLISH", "fx-mark", mark)
        got = []
        while True:
            m = self.sub.read()
            if not m:
                raise RuntimeError("subscriber got nothing (mark %s)" % mark)
            _, _, kids, _ = parse(m)
            kind = kids[0][1]
            if kind == b"message" and kids[2][1] == mark:
                return got
            if kind == b"pmessage":
                chan = kids[2][1].decode()
                db, event = re.match(r"__keyevent@(\d+)__:(.*)", chan).groups()
                got.append((int(db), event, kids[3][1].decode()))

    def run_case(self, case, classes):
        db, setup, cmd, _, _ = case
        self.call("CONFIG", "SET", "notify-keyspace-events", "E" + classes)
        self.call("SELECT", "0")
        self.call("FLUSHALL")
        self.call("SELECT", str(db))
        for line in filter(None, setup.split(";")):
            r = self.call(*line.split(" "))
            if r.startswith(b"-"):
                raise RuntimeError("setup %r of %r failed: %r" % (line, cmd, r))
        self.events()
        reply = self.call(*cmd.split(" "))
        return reply, self.events()

    def close(self):
        self.cmd.close()
        self.sub.close()
        self.server.stop()


def expected(case, classes):
    """the case's event tokens of the given classes, as (db, event, key)"""
    db, _, _, _, effects = case
    out = []
    for tok in filter(None, effects.split(" ")):
        cls, rest = tok.split(":", 1)
        if cls == "M":
            continue
        event, key = rest.split(":", 1)
        if cls in classes:
            out.append((db, event, key))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tables", nargs="*", help="test_effects_*.c files (default: all of tests/unit)")
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    o = ap.parse_args()
    if not os.access(o.redis, os.X_OK):
        print("SKIP: %s not found (apt-get install redis-server)" % o.redis)
        return 77
    tables = o.tables or sorted(glob.glob(os.path.join(HERE, "..", "unit", "test_effects_*.c")))
    if not tables:
        print("FAIL: no test_effects_*.c tables")
        return 1
    oracle = Oracle(o.redis)
    failed = passed = 0
    try:
        for path in tables:
            cases = read_cases(path)
            if not cases:
                print("FAIL: %s: no FX(...) cases read" % path)
                failed += 1
                continue
            bad = 0
            for case in cases:
                problems = []
                reply, events = oracle.run_case(case, "A" + "n")
                if not reply.startswith(case[3].encode()):
                    problems.append("reply %r, table says it starts with %r" % (reply[:80], case[3]))
                if events != expected(case, CLASSES):
                    problems.append("events %s, table says %s" % (events, expected(case, CLASSES)))
                for cls in CLASSES:
                    _, events = oracle.run_case(case, cls)
                    if events != expected(case, cls):
                        problems.append("class %s: events %s, table says %s" % (cls, events, expected(case, cls)))
                if problems:
                    bad += 1
                    print("%s: %s (after %r, db %d):\n  %s" % (os.path.basename(path), case[2], case[1], case[0],
                                                               "\n  ".join(problems)))
            print("%-28s %d cases, %s" % (os.path.basename(path), len(cases), "ok" if not bad else "%d differ" % bad),
                  flush=True)
            failed += bad
            passed += len(cases) - bad
    finally:
        oracle.close()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
