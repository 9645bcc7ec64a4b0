#!/usr/bin/python3
"""command_list.py --candidate SERVER [--threads N] [--redis REDIS]: the
command table percore shows against a real redis-server 7.0's.

- COMMAND LIST, both sorted: the same names, top-level commands and
  `container|sub` subcommands alike, but for the ones below that percore
  lacks on purpose (LACKS, each with its reason) or has and Redis 7.0 does not
  (EXTRA).  COMMAND LIST FILTERBY PATTERN and ACLCAT the same way.
- COMMAND COUNT: Redis's less the top-level names percore lacks.
- COMMAND INFO and COMMAND DOCS of every name listed (a subcommand by its
  `container|sub` name): the same bytes as Redis's (percore sends Redis's
  own entries), a container's entry aside, whose subcommands Redis lists in
  its dict's order.

Standard library and Debian's python3-redis.  Exit 0 when all agree, 1
otherwise, 77 when redis-server is missing."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "clients"))
from diff import Conn, Server, parse  # noqa: E402
import expect  # noqa: E402
from expect import check, eq  # noqa: E402

# Redis 7.0's commands percore does not have, and why
LACKS = {
    "acl": "one default user: no ACL",
    "failover": "no replication",
    "migrate": "no MIGRATE between servers",
    "restore-asking": "no MIGRATE between servers",
    "module": "no modules",
    "lolwut": "no LOLWUT art",
    "command|getkeysandflags": "no key-spec flags per key",
    "memory|doctor": "no allocator report (mimalloc)",
    "memory|malloc-stats": "no allocator report (mimalloc)",
    "memory|purge": "no allocator report (mimalloc)",
    "memory|stats": "no allocator report (mimalloc)",
    "script|debug": "no Lua debugger",
}
# cluster subcommands that manage a cluster's nodes and slots: percore's cluster ports map slots to
# shards from its config, there is nothing to meet, forget, fail over or move
for sub in ("addslots", "addslotsrange", "bumpepoch", "count-failure-reports", "delslots", "delslotsrange",
            "failover", "flushslots", "forget", "links", "meet", "replicas", "replicate", "reset",
            "saveconfig", "set-config-epoch", "setslot", "slaves"):
    LACKS["cluster|" + sub] = "no cluster management: slots map to shards by config"
# percore's names that Redis 7.0 lacks, and why
EXTRA = {
    "client|setinfo": "Redis 7.2's, sent by clients at connect (redis-py, node-redis)",
}


def lacked(n):
    """a name of LACKS, or a subcommand of a container there"""
    return n in LACKS or n.split("|")[0] in LACKS


def raw(c, *args):
    """the reply's bytes"""
    c.send(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in args))
    return c.read()


def names(c, *filt):
    """COMMAND LIST's names, sorted"""
    return sorted(k[1].decode() for k in parse(raw(c, "COMMAND", "LIST", *filt))[2])


def count(c):
    return int(parse(raw(c, "COMMAND", "COUNT"))[1])


def listing(o, work):
    ref = Server(o.redis, name="command-list-redis")
    cand = Server(o.candidate, threads=o.threads, name="command-list")
    ref.start()
    cand.start()
    try:
        rc, cc = Conn(ref.port), Conn(cand.port)
        want, got = names(rc), names(cc)
        eq(sorted(set(got) - set(want)), sorted(EXTRA), "COMMAND LIST: percore's names Redis lacks")
        eq(sorted(set(want) - set(got)), sorted(n for n in want if lacked(n)), "COMMAND LIST: Redis's names percore lacks")
        check(all(n in want for n in LACKS), "LACKS names only Redis's commands")
        for filt in (("FILTERBY", "PATTERN", "x*"), ("FILTERBY", "PATTERN", "*|*"), ("FILTERBY", "ACLCAT", "stream"),
                     ("FILTERBY", "ACLCAT", "scripting"), ("FILTERBY", "ACLCAT", "keyspace")):
            w, g = names(rc, *filt), names(cc, *filt)
            eq(sorted(set(g) - set(EXTRA)), sorted(n for n in w if not lacked(n)), "COMMAND LIST %s" % " ".join(filt))
        eq(count(cc), count(rc) - len([n for n in LACKS if "|" not in n]), "COMMAND COUNT")
        containers = set(n.split("|")[0] for n in want if "|" in n)
        for n in got:
            if n in EXTRA or n in containers:
                continue
            for what in ("INFO", "DOCS"):
                eq(raw(cc, "COMMAND", what, n), raw(rc, "COMMAND", what, n), "COMMAND %s %s" % (what, n))
    finally:
        cand.stop()
        ref.stop()


def main():
    return expect.main(globals(), "command_list", "listing")


if __name__ == "__main__":
    sys.exit(main())
