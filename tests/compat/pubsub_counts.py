#!/usr/bin/python3
"""pubsub_counts.py --candidate SERVER [--threads N] [--redis REDIS]: INFO's
pubsub_channels, pubsub_patterns and pubsubshard_channels against a real
redis-server 7.0's.

The same steps on both servers, with many subscriber connections (spread over
percore's shards by the kernel): SUBSCRIBE, PSUBSCRIBE and SSUBSCRIBE of names
that several connections share and of names of one connection only, then
UNSUBSCRIBE of some, PUNSUBSCRIBE and SUNSUBSCRIBE of all, RESET, and
connections closed.  After each step the three fields are Redis's: a name
counts once however many connections (and shards) have subscribers of it.
percore's counts of a name may lag a subscription made on another shard by
one hop (core/pubsub.c), so its INFO is read again for up to 2 s until it
agrees.

Standard library.  Exit 0 when all agree, 1 otherwise, 77 when redis-server
is missing."""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "clients"))
from diff import Conn, Server  # noqa: E402
import expect  # noqa: E402
from expect import check, eq  # noqa: E402

FIELDS = ("pubsub_channels", "pubsub_patterns", "pubsubshard_channels")
SUBSCRIBERS = 16


def resp(*args):
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in args)


def send(c, replies, *args):
    """args to c, and its replies (a SUBSCRIBE's confirmation per name) read"""
    c.send(resp(*args))
    for _ in range(replies):
        check(c.read() not in (None, b""), "%s: a reply" % " ".join(args))


def counts(port):
    c = Conn(port)
    c.send(resp("INFO", "stats"))
    text = c.read().decode()
    c.close()
    fields = dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)
    return tuple(int(fields[f]) for f in FIELDS)


class Side:
    """one server and its subscriber connections"""

    def __init__(self, server):
        self.server = server
        server.start()
        self.subs = [Conn(server.port) for _ in range(SUBSCRIBERS)]

    def each(self, pick, replies, *args):
        for i, c in enumerate(self.subs):
            if c and pick(i):
                send(c, replies(i) if callable(replies) else replies, *[a % i if "%" in a else a for a in args])

    def close(self, pick):
        for i, c in enumerate(self.subs):
            if c and pick(i):
                c.close()
                self.subs[i] = None


def steps(side):
    """the steps, each run on side before its counts are compared"""
    yield "subscribe", lambda: (side.each(lambda i: True, 2, "SUBSCRIBE", "news", "own%d"),
                                side.each(lambda i: i % 2 == 0, 2, "PSUBSCRIBE", "n*", "p%d*"),
                                side.each(lambda i: i % 3 == 0, 2, "SSUBSCRIBE", "shared", "sown%d"))
    yield "unsubscribe own", lambda: side.each(lambda i: i < 8, 1, "UNSUBSCRIBE", "own%d")
    yield "unsubscribe news from half", lambda: side.each(lambda i: i % 2 == 1, 1, "UNSUBSCRIBE", "news")
    yield "punsubscribe all", lambda: side.each(lambda i: i % 4 == 0, 2, "PUNSUBSCRIBE")
    yield "sunsubscribe shared", lambda: side.each(lambda i: i % 3 == 0, 1, "SUNSUBSCRIBE", "shared")
    yield "reset", lambda: side.each(lambda i: i % 5 == 0, 1, "RESET")
    yield "close half", lambda: side.close(lambda i: i >= 8)
    yield "close all", lambda: side.close(lambda i: True)


def agree(o, work):
    ref = Side(Server(o.redis, name="pubsub-counts-redis"))
    cand = Side(Server(o.candidate, threads=o.threads, name="pubsub-counts"))
    try:
        eq(counts(cand.server.port), (0, 0, 0), "no subscriber: counts")
        for (name, run_ref), (_, run_cand) in zip(steps(ref), steps(cand)):
            run_ref()
            run_cand()
            want = counts(ref.server.port)
            deadline = time.monotonic() + 2
            got = counts(cand.server.port)
            while got != want and time.monotonic() < deadline:
                time.sleep(0.01)
                got = counts(cand.server.port)
            eq(got, want, "%s: %s" % (name, ", ".join(FIELDS)))
        check(want == (0, 0, 0), "Redis's counts end at 0")
    finally:
        cand.server.stop()
        ref.server.stop()


def main():
    return expect.main(globals(), "pubsub_counts", "agree")


if __name__ == "__main__":
    sys.exit(main())
