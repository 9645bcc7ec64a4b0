#!/usr/bin/python3
"""stream_blocking.py --candidate SERVER [--threads N] [--redis REDIS]: XREAD and
XREADGROUP BLOCK with several clients, against Redis 7.0 (server/core/block.c).

Each scenario runs on a fresh redis-server and on the candidate with the same
steps: clients block (their command sent, no reply within a short wait), other
clients write, and every client's reply bytes must equal Redis's, in the order
they come:
- XREAD BLOCK 0 on `$` woken by an XADD; `$` is the last ID when the client
  blocked (an entry added before does not wake it; one added later does);
- several XREAD clients on one stream: each gets the entry;
- XREADGROUP `>` clients of one group, COUNT 1: served in the order they
  blocked, one entry each, the rest waiting on; NOACK; the PEL afterwards;
- a client blocked on two streams whose keys are on different shards of one
  hash tag's owner ({t}), woken by the second: only that stream in the reply;
- BLOCK with a timeout: the null reply once it passes (RESP2 and RESP3);
- CLIENT UNBLOCK (nil) and CLIENT UNBLOCK ... ERROR (-UNBLOCKED) of a waiting
  XREAD;
- a stream deleted and made again under a waiting XREAD; XREADGROUP's
  group destroyed (-NOGROUP), its stream deleted or overwritten (-UNBLOCKED);
- XREAD and XREADGROUP clients waiting on one stream: one entry serves the
  first group reader and the XREAD behind the second;
- XREAD BLOCK inside MULTI answers nil at once; a script's XREAD BLOCK is
  refused with Redis's error;
- the same over streams whose keys live on several shards (a b c d: four
  shards at threads 4): `$` resolved as the client blocks, woken by the first
  stream written (that stream alone in the reply), several clients over
  overlapping keys, timeouts (RESP2 and RESP3), XREADGROUP `>` in the order
  clients blocked and its PEL, a stream deleted (-UNBLOCKED) or a group
  destroyed (-NOGROUP) under XREADGROUP, CLIENT UNBLOCK, MULTI, clients
  that close while they wait (nothing delivered to them, nothing pending).

Standard library only; exit 0 when all agree, 1 otherwise, 77 when
redis-server is missing."""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diff import Conn, Server, encode  # noqa: E402

BLOCKED_S = 0.3  # a blocked client answers nothing within this


def scenario_steps():
    """(name, steps); a step: (client, command) sent and its reply read, (client, command, "block") sent,
    nothing may come within BLOCKED_S, ("read", client) its reply read now, ("close", client) its
    connection closed, ("sleep", s)"""
    return [
        ("dollar", [
            (0, "XADD s 1-0 a 1"),
            (1, "XREAD BLOCK 0 STREAMS s $", "block"),
            (0, "XADD s 2-0 b 2"),
            ("read", 1),
            (1, "XREAD BLOCK 0 STREAMS s $", "block"),
            (0, "XADD other 1-0 x y"),
            (0, "XADD s 3-0 c 3"),
            ("read", 1),
        ]),
        ("missing-key", [
            (1, "XREAD BLOCK 0 STREAMS nokey $", "block"),
            (0, "XADD nokey 1-1 a 1"),
            ("read", 1),
        ]),
        ("many-readers", [
            (1, "XREAD BLOCK 0 STREAMS s $", "block"),
            (2, "XREAD COUNT 5 BLOCK 0 STREAMS s 0", "block"),
            (3, "XREAD BLOCK 0 STREAMS s $", "block"),
            (0, "XADD s 7-0 f v"),
            ("read", 1), ("read", 2), ("read", 3),
        ]),
        ("group-fifo", [
            (0, "XGROUP CREATE s g $ MKSTREAM"),
            (1, "XREADGROUP GROUP g alice COUNT 1 BLOCK 0 STREAMS s >", "block"),
            (2, "XREADGROUP GROUP g bob COUNT 1 BLOCK 0 STREAMS s >", "block"),
            (3, "XREADGROUP GROUP g carol COUNT 1 NOACK BLOCK 0 STREAMS s >", "block"),
            (0, "XADD s 1-0 a 1"),
            ("read", 1),
            (0, "XADD s 2-0 b 2"),
            ("read", 2),
            (0, "XADD s 3-0 c 3"),
            ("read", 3),
            (0, "XPENDING s g"),
            (0, "XREADGROUP GROUP g x STREAMS s 0"),
            (0, "XINFO GROUPS s"),
        ]),
        ("group-batch", [
            (0, "XGROUP CREATE s g $ MKSTREAM"),
            (1, "XREADGROUP GROUP g alice BLOCK 0 STREAMS s >", "block"),
            (2, "XREADGROUP GROUP g bob BLOCK 0 STREAMS s >", "block"),
            (0, "MULTI"), (0, "XADD s 1-0 a 1"), (0, "XADD s 2-0 b 2"), (0, "EXEC"),
            ("read", 1),
            (0, "XADD s 3-0 c 3"),
            ("read", 2),
            (0, "XPENDING s g"),
        ]),
        ("mixed-waiters", [
            (0, "XGROUP CREATE s g $ MKSTREAM"),
            (1, "XREADGROUP GROUP g alice COUNT 1 BLOCK 0 STREAMS s >", "block"),
            (2, "XREADGROUP GROUP g bob COUNT 1 BLOCK 0 STREAMS s >", "block"),
            (3, "XREAD BLOCK 0 STREAMS s $", "block"),
            (0, "XADD s 1-0 a 1"),
            ("read", 1), ("read", 3),
            (0, "XADD s 2-0 b 2"),
            ("read", 2),
        ]),
        ("group-gone", [
            (0, "XGROUP CREATE s g $ MKSTREAM"),
            (1, "XREADGROUP GROUP g alice BLOCK 0 STREAMS s >", "block"),
            (2, "XREAD BLOCK 0 STREAMS s $", "block"),
            (0, "XGROUP DESTROY s g"),
            ("read", 1),
            (0, "XGROUP CREATE s g $"),
            (1, "XREADGROUP GROUP g alice BLOCK 0 STREAMS s >", "block"),
            (0, "DEL s"),
            ("read", 1),
            (0, "XADD s 1-0 a 1"),
            ("read", 2),
            (0, "XGROUP CREATE s g $"),
            (1, "XREADGROUP GROUP g alice BLOCK 0 STREAMS s >", "block"),
            (0, "SET s x"),
            ("read", 1),
        ]),
        ("two-keys", [
            (1, "XREAD BLOCK 0 STREAMS {t}a {t}b $ $", "block"),
            (0, "XADD {t}b 5-0 f v"),
            ("read", 1),
        ]),
        ("timeout", [
            (1, "XREAD BLOCK 100 STREAMS s $", "block"),
            ("sleep", 0.3),
            ("read", 1),
            (2, "HELLO 3"),
            (2, "XREADGROUP GROUP nog c BLOCK 50 STREAMS nokey >"),
            (0, "XGROUP CREATE s g $ MKSTREAM"),
            (2, "XREADGROUP GROUP g c BLOCK 100 STREAMS s >", "block"),
            ("sleep", 0.3),
            ("read", 2),
        ]),
        ("unblock", [
            (1, "CLIENT ID"),
            (1, "XREAD BLOCK 0 STREAMS s $", "block"),
            (0, "CLIENT UNBLOCK {id1}"),
            ("read", 1),
            (1, "XREAD BLOCK 0 STREAMS s $", "block"),
            (0, "CLIENT UNBLOCK {id1} ERROR"),
            ("read", 1),
            (0, "CLIENT UNBLOCK {id1}"),
        ]),
        ("deleted", [
            (0, "XADD s 5-0 a 1"),
            (1, "XREAD BLOCK 0 STREAMS s $", "block"),
            (0, "DEL s"),
            (0, "XADD s 1-0 b 2"),
            (0, "XADD s 6-0 c 3"),
            ("read", 1),
        ]),
        # keys a b c d live on four shards (threads 4): the waits below span shards
        ("shards-dollar", [
            (0, "XADD a 1-0 x 1"),
            (0, "XADD c 1-0 x 1"),
            (0, "XREAD STREAMS a b c d 0 0 0 0"),
            (0, "XREAD COUNT 1 BLOCK 0 STREAMS a b c 0 0 0"),
            (1, "XREAD BLOCK 0 STREAMS a b c d $ $ $ $", "block"),
            (0, "XADD other 1-0 x y"),
            (0, "XADD b 5-0 y 2"),
            ("read", 1),
            (1, "XREAD BLOCK 0 STREAMS a b c d $ $ $ $", "block"),
            (0, "XADD a 2-0 z 3"),
            ("read", 1),
            (1, "XREAD COUNT 2 BLOCK 0 STREAMS a b 2-0 5-0", "block"),
            (0, "XADD b 6-0 w 4"),
            ("read", 1),
        ]),
        ("shards-many", [
            (1, "XREAD BLOCK 0 STREAMS a b $ $", "block"),
            (2, "XREAD BLOCK 0 STREAMS b c $ $", "block"),
            (3, "XREAD BLOCK 0 STREAMS c d $ $", "block"),
            (0, "XADD b 1-0 f v"),
            ("read", 1), ("read", 2),
            (0, "XADD d 1-0 f v"),
            ("read", 3),
        ]),
        ("shards-timeout", [
            (1, "XREAD BLOCK 100 STREAMS a b c $ $ $", "block"),
            ("sleep", 0.3),
            ("read", 1),
            (2, "HELLO 3"),
            (2, "XREAD BLOCK 100 STREAMS a d 0 0", "block"),
            ("sleep", 0.3),
            ("read", 2),
            (0, "XADD a 1-0 f v"),
            (2, "XREAD BLOCK 0 STREAMS a d $ $", "block"),
            (0, "XADD d 1-0 f v"),
            ("read", 2),
            (0, "XGROUP CREATE a g $"),
            (0, "XGROUP CREATE d g $"),
            (2, "XREADGROUP GROUP g c BLOCK 100 STREAMS a d > >", "block"),
            ("sleep", 0.3),
            ("read", 2),
        ]),
        ("shards-group", [
            (0, "XGROUP CREATE a g $ MKSTREAM"),
            (0, "XGROUP CREATE b g $ MKSTREAM"),
            (1, "XREADGROUP GROUP g alice COUNT 1 BLOCK 0 STREAMS a b > >", "block"),
            (2, "XREADGROUP GROUP g bob COUNT 1 BLOCK 0 STREAMS a b > >", "block"),
            (3, "XREADGROUP GROUP g carol NOACK BLOCK 0 STREAMS b a > >", "block"),
            (0, "XADD b 1-0 f 1"),
            ("read", 1),
            (0, "XADD a 1-0 f 2"),
            ("read", 2),
            (0, "XADD b 2-0 f 3"),
            ("read", 3),
            (0, "XPENDING a g"),
            (0, "XPENDING b g"),
            (0, "XINFO GROUPS a"),
            (0, "XINFO GROUPS b"),
            (0, "XREADGROUP GROUP g alice STREAMS a b 0 0"),
        ]),
        ("shards-group-gone", [
            (0, "XGROUP CREATE a g $ MKSTREAM"),
            (0, "XGROUP CREATE b g $ MKSTREAM"),
            (1, "XREADGROUP GROUP g alice BLOCK 0 STREAMS a b > >", "block"),
            (2, "XREAD BLOCK 0 STREAMS a b $ $", "block"),
            (0, "DEL b"),
            ("read", 1),
            (0, "XGROUP CREATE b g $ MKSTREAM"),
            (1, "XREADGROUP GROUP g alice BLOCK 0 STREAMS a b > >", "block"),
            (0, "XGROUP DESTROY a g"),
            ("read", 1),
            (0, "XADD b 1-0 f v"),
            ("read", 2),
        ]),
        ("shards-unblock", [
            (1, "CLIENT ID"),
            (1, "XREAD BLOCK 0 STREAMS a b c $ $ $", "block"),
            (0, "CLIENT UNBLOCK {id1}"),
            ("read", 1),
            (1, "XREAD BLOCK 0 STREAMS a b $ $", "block"),
            (0, "CLIENT UNBLOCK {id1} ERROR"),
            ("read", 1),
            (0, "CLIENT UNBLOCK {id1}"),
            (0, "XADD a 1-0 f v"),
            (1, "PING"),
        ]),
        ("shards-multi", [
            (0, "MULTI"), (0, "XREAD BLOCK 0 STREAMS a b $ $"), (0, "XREAD BLOCK 0 STREAMS a b 0 0"),
            (0, "XREADGROUP GROUP g c BLOCK 0 STREAMS a b > >"), (0, "EXEC"),
            (0, "XADD b 1-0 f v"),
            (0, "MULTI"), (0, "XREAD BLOCK 0 STREAMS a b 0 0"), (0, "EXEC"),
            (1, "XREAD BLOCK 0 STREAMS a b c $ $ $", "block"),
            (0, "MULTI"), (0, "XADD c 1-0 f v"), (0, "DEL d"), (0, "EXEC"),
            ("read", 1),
        ]),
        ("shards-gone", [
            (0, "XGROUP CREATE a g $ MKSTREAM"),
            (0, "XGROUP CREATE b g $ MKSTREAM"),
            (1, "XREAD BLOCK 0 STREAMS a b c $ $ $", "block"),
            (2, "XREADGROUP GROUP g c BLOCK 0 STREAMS a b > >", "block"),
            (3, "XREAD BLOCK 100 STREAMS c d $ $", "block"),
            ("close", 1), ("close", 2), ("close", 3),
            ("sleep", 0.3),
            (0, "XADD a 1-0 f v"),
            (0, "XADD b 1-0 f v"),
            (0, "XADD c 1-0 f v"),
            (0, "XPENDING a g"),
            (0, "XPENDING b g"),
            (0, "XINFO GROUPS b"),
            (4, "CLIENT LIST TYPE PUBSUB"),
            (4, "XREAD BLOCK 0 STREAMS a b $ $", "block"),
            (0, "XADD a 2-0 f v"),
            ("read", 4),
        ]),
        ("multi-script", [
            (0, "XADD s 1-0 a 1"),
            (0, "MULTI"), (0, "XREAD BLOCK 0 STREAMS s $"), (0, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
            (0, "EXEC"),
            (0, "EVAL \"return redis.call('xread','block','0','streams',KEYS[1],'0')\" 1 s"),
            (0, "EVAL \"return redis.call('XREAD','streams',KEYS[1],'0')\" 1 s"),
        ]),
    ]


def split(line):
    out, cur, quoted = [], "", False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == " " and not quoted:
            if cur:
                out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def run(port, steps):
    """the replies in the order read, each labelled by its client"""
    conns, ids, got = {}, {}, []

    def conn(i):
        if i not in conns:
            conns[i] = Conn(port)
        return conns[i]

    for step in steps:
        if step[0] == "sleep":
            time.sleep(step[1])
        elif step[0] == "close":
            conns.pop(step[1]).close()
        elif step[0] == "read":
            got.append((step[1], conn(step[1]).read(5.0)))
        else:
            c = conn(step[0])
            line = step[1].replace("{id1}", ids.get(1, "0"))
            c.send(encode([a.encode() for a in split(line)]))
            if len(step) == 3:
                early = c.read(BLOCKED_S)
                got.append((step[0], "blocked" if early is None else early))
            else:
                reply = c.read(5.0)
                if step[1] == "CLIENT ID":
                    ids[step[0]] = reply[1:-2].decode()
                    reply = b":<id>"
                elif step[1].startswith("HELLO"):
                    reply = reply[:1]  # the map's type; it holds the connection's id
                got.append((step[0], reply))
    for c in conns.values():
        c.close()
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--candidate", required=True)
    ap.add_argument("--threads", type=int, default=4)
    a = ap.parse_args()
    if not os.path.exists(a.redis):
        print("SKIP: %s is missing" % a.redis)
        sys.exit(77)
    failed = 0
    for name, steps in scenario_steps():
        results = []
        for binary in (a.redis, a.candidate):
            srv = Server(binary, threads=a.threads, name="stream_blocking")
            srv.start()
            try:
                results.append(run(srv.port, steps))
            finally:
                srv.stop()
        if results[0] != results[1]:
            failed += 1
            print("DIFF %s" % name)
            for i, (r, c) in enumerate(zip(results[0], results[1])):
                if r != c:
                    print("  reply %d: redis %r\n           got   %r" % (i, r, c))
        else:
            print("%-14s ok (%d replies)" % (name, len(results[0])))
    print("stream_blocking: %d of %d scenarios as Redis" % (len(scenario_steps()) - failed, len(scenario_steps())))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
