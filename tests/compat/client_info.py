#!/usr/bin/python3
"""client_info.py --candidate SERVER [--threads N] [--redis REDIS]: the fields
of CLIENT INFO and CLIENT LIST lines that say what a client is doing, compared
with a real redis-server 7.0 in the same situations: the command being run
(qbuf holds it, and the commands before it in the same read; argv-mem its
arguments), replies not yet sent (obl oll omem), queued MULTI commands
(multi multi-mem flags), a blocked client with input behind its command.
Figures that depend on the allocator or on Redis's cron (qbuf-free, rbs,
rbp, tot-mem) and identities (id, addr, fd) are not compared.  Exit 0 when
every field agrees, 1 otherwise, 77 when redis-server is missing."""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "clients"))
from diff import Conn, Server  # noqa: E402
import expect  # noqa: E402
from expect import check, eq  # noqa: E402

FIELDS = ("flags", "db", "sub", "psub", "multi", "qbuf", "argv-mem", "multi-mem", "obl", "oll", "omem",
          "events", "cmd", "resp")


def resp(*args):
    return b"".join([b"*%d\r\n" % len(args)] + [b"$%d\r\n%s\r\n" % (len(a), a) for a in args])


def bulk_text(reply):
    """the text of a bulk or verbatim reply"""
    head, _, body = reply.partition(b"\r\n")
    check(head[:1] in (b"$", b"="), "a bulk reply: %r" % reply[:60])
    text = body[:-2].decode()
    return text[4:] if head[:1] == b"=" else text


def fields(line):
    return dict(kv.split("=", 1) for kv in line.split() if "=" in kv)


def line_of(text, client_id):
    for line in text.splitlines():
        if fields(line).get("id") == client_id:
            return fields(line)
    return None


def client_id(c):
    c.send(resp(b"CLIENT", b"ID"))
    return c.read()[1:-2].decode()


def scenarios(port):
    """what each situation shows on this server: {situation: {field: value}}"""
    out = {}
    a, b = Conn(port), Conn(port)
    b_id = client_id(b)

    a.send(resp(b"CLIENT", b"INFO"))
    out["CLIENT INFO alone"] = fields(bulk_text(a.read()))
    a.send(b"CLIENT INFO\r\n")
    out["CLIENT INFO inline"] = fields(bulk_text(a.read()))
    # one write: PING's reply is still unsent, and both commands are in the query buffer
    a.send(resp(b"PING") + resp(b"CLIENT", b"INFO"))
    a.read()
    out["PING then CLIENT INFO"] = fields(bulk_text(a.read()))
    a.send(resp(b"CLIENT", b"LIST", b"ID", client_id(a).encode()))
    self_line = line_of(bulk_text(a.read()), client_id(a))
    for f in ("qbuf", "argv-mem"):  # the id's own digits are in both: ids differ between the servers
        if self_line and f in self_line:
            self_line[f] = str(int(self_line[f]) - len(client_id(a)))
    out["CLIENT LIST ID self"] = self_line

    # b between MULTI and EXEC, seen by a
    b.send(resp(b"MULTI"))
    b.read()
    b.send(resp(b"SET", b"k", b"hello"))
    b.read()
    b.send(resp(b"GET", b"k"))
    b.read()
    a.send(resp(b"CLIENT", b"LIST", b"ID", b_id.encode()))
    out["a client in MULTI"] = line_of(bulk_text(a.read()), b_id)
    b.send(resp(b"DISCARD"))
    b.read()

    # b blocked, with a PING behind its BLPOP in the same write
    b.send(resp(b"BLPOP", b"nosuchlist", b"0") + resp(b"PING"))
    deadline = time.monotonic() + 10
    while True:
        a.send(resp(b"CLIENT", b"LIST", b"ID", b_id.encode()))
        got = line_of(bulk_text(a.read()), b_id)
        if (got and got.get("flags") == "b") or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    got.pop("argv-mem", None)  # Redis keeps a blocked command's arguments; percore has them at the owner
    out["a blocked client"] = got
    a.close()
    b.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--candidate", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--threads", type=int, default=4)
    args = ap.parse_args()
    if not os.access(args.redis, os.X_OK):
        print("SKIP: %s not found" % args.redis)
        return 77
    servers = [Server(args.redis, name="client-info-redis"),
               Server(args.candidate, threads=args.threads, name="client-info")]
    for s in servers:
        s.start()
    try:
        want, got = (scenarios(s.port) for s in servers)
        for situation in want:
            check(got.get(situation) is not None, "%s: no line" % situation)
            if got.get(situation) is None:
                continue
            for f in FIELDS:
                if f in want[situation]:
                    eq(got[situation].get(f), want[situation][f], "%s: %s" % (situation, f))
    finally:
        for s in servers:
            s.stop()
    return expect.done("client_info")


if __name__ == "__main__":
    sys.exit(main())
