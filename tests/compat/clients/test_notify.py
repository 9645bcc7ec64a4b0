#!/usr/bin/python3
"""test_notify.py SERVER [THREADS] [EVENTS.txt ...]: keyspace notifications
against Redis 7.0.  Starts a real redis-server and SERVER (with THREADS shard
threads), sets notify-keyspace-events on both, and runs the command lines of
tests/compat/notify/*.txt (or the files given) on a writer connection while
a subscriber (PSUBSCRIBE *) listens.  After each command the writer
publishes a sentinel (after EXEC for the commands it queued); every message the subscriber got before it is that
command's events.  They must be Redis's: the same channels and messages,
and for each key the same events in the same order (events of different keys
may arrive in another order when the keys live on different shards).

Lines: one command, words split as a shell does; `#` starts a comment;
`!config notify-keyspace-events <classes>` sets the classes on both (the
default is KEA); `!sleep <ms>` waits (expiry); `!expect-none` says the
command must cause no event on either server (a check of the script)."""
import glob
import os
import shlex
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from diff import Server  # noqa: E402  (tests/compat/diff.py)

try:
    import redis
except ImportError:
    print("SKIP: python3-redis is not installed (apt-get install python3-redis)")
    sys.exit(77)

SENTINEL = "notify-test-sentinel"


class Side:
    """one server: a writer and a subscriber of every channel"""

    def __init__(self, port):
        self.w = redis.Redis(port=port, socket_timeout=30)
        self.w.response_callbacks = {}  # raw replies (a queued EXISTS answers QUEUED, not an integer)
        self.sub = redis.Redis(port=port, socket_timeout=30).pubsub()
        self.sub.psubscribe("*")
        self.wait_for(lambda m: m["type"] == "psubscribe")
        self.seq = 0
        self.in_multi = False

    def wait_for(self, pred, timeout=30.0):
        got = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = self.sub.get_message(timeout=0.5)
            if m is None:
                continue
            if pred(m):
                return got
            got.append(m)
        raise RuntimeError("no sentinel within %.0f s; got %r" % (timeout, got))

    def run(self, args):
        """the reply (or error text) and the events the command caused"""
        try:
            reply = self.w.execute_command(*args)
        except redis.ResponseError as e:
            reply = "ERR:" + str(e)
        name = args[0].upper()
        if name == "MULTI" or (self.in_multi and name not in ("EXEC", "DISCARD")):
            # queued: nothing runs, and the sentinel cannot be published from here until EXEC
            self.in_multi = True
            return reply, []
        self.in_multi = False
        self.seq += 1
        tag = str(self.seq).encode()
        # from the writer itself: its sentinel reaches each shard behind the events its commands
        # caused there (a second connection's could overtake them)
        self.w.publish(SENTINEL, tag)
        got = self.wait_for(lambda m: m["type"] == "pmessage" and m["channel"] == SENTINEL.encode()
                            and m["data"] == tag)
        events = [(m["channel"], m["data"]) for m in got if m["type"] == "pmessage"]
        return reply, events


def event_key(ev):
    chan, data = ev
    if chan.startswith(b"__keyspace@"):
        return chan.split(b"__:", 1)[1]
    return data


def per_key(events):
    keys = {}
    for ev in events:
        keys.setdefault(event_key(ev), []).append(ev)
    return keys


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    files = sys.argv[3:] or sorted(glob.glob(os.path.join(os.path.dirname(HERE), "notify", "*.txt")))
    rs = Server("/usr/bin/redis-server", name="notify-redis")
    ps = Server(sys.argv[1], threads=threads, name="notify-percore")
    rs.start()
    ps.start()
    failures = 0
    total = 0
    try:
        sides = [Side(rs.port), Side(ps.port)]
        for s in sides:
            s.w.config_set("notify-keyspace-events", "KEA")
        for path in files:
            for lineno, line in enumerate(open(path), 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                words = shlex.split(line)
                where = "%s:%d: %s" % (os.path.basename(path), lineno, line)
                if words[0] == "!config":
                    for s in sides:
                        s.w.config_set(words[1], words[2] if len(words) > 2 else "")
                    continue
                if words[0] == "!sleep":
                    time.sleep(int(words[1]) / 1000.0)
                    continue
                expect_none = words[0] == "!expect-none"
                if expect_none:
                    words = words[1:]
                total += 1
                (rr, rev), (pr, pev) = [s.run(words) for s in sides]
                bad = []
                if expect_none and rev:
                    bad.append("Redis emitted events for a line marked !expect-none: %r" % rev)
                if sorted(rev) != sorted(pev):
                    bad.append("events differ:\n    redis:   %r\n    percore: %r" % (rev, pev))
                elif per_key(rev) != per_key(pev):
                    bad.append("order per key differs:\n    redis:   %r\n    percore: %r" % (rev, pev))
                if rr != pr:
                    bad.append("replies differ: redis %r, percore %r" % (rr, pr))
                if bad:
                    failures += 1
                    print("FAIL %s\n  %s" % (where, "\n  ".join(bad)))
        # a percore-only check: the CONFIG GET form of what was set
        for cls in ("KEA", "Kx", "Eg$", "AKEmn", "KEt", ""):
            vals = []
            for s in sides:
                s.w.config_set("notify-keyspace-events", cls)
                vals.append(s.w.config_get("notify-keyspace-events"))
            total += 1
            if vals[0] != vals[1]:
                failures += 1
                print("FAIL CONFIG GET after SET %r: redis %r, percore %r" % (cls, vals[0], vals[1]))
        errs = []
        for s in sides:
            try:
                s.w.config_set("notify-keyspace-events", "KEAq")
                errs.append(None)
            except redis.ResponseError as e:
                errs.append(str(e))
        total += 1
        if errs[0] != errs[1]:
            failures += 1
            print("FAIL bad class: redis %r, percore %r" % (errs[0], errs[1]))
    finally:
        for srv in (rs, ps):
            status = srv.stop()
            if srv is ps and status not in (0, None):
                failures += 1
                print("FAIL percore exited with %s:\n%s" % (status, srv.tail()))
    print("test_notify: %d of %d lines as Redis (threads %d)" % (total - failures, total, threads))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
