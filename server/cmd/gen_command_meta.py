#!/usr/bin/python3
"""gen_command_meta.py: writes server/cmd/command_meta.c from a real redis-server.

COMMAND, COMMAND INFO and COMMAND DOCS must answer what Redis 7.0.15 answers
(key specs with all their flags, tips, doc arguments and history, which
redis-cli turns into hints).  Rather than rebuild all that from struct command,
this script asks the real server and stores its reply bytes:

    gen_command_meta.py                      # start /usr/bin/redis-server itself
    gen_command_meta.py --port 6379          # use a running one
    gen_command_meta.py get set config|get   # only these names

Without names it reads percore's command names from the C tables in
server/cmd/*.c, server/admin/*.c, server/core/script.c, function.c, replica.c and primary.c: `{"get", cmd_get, ...}` and `CMD("ping", cmd_ping, ...)`
entries, and `SUB("config", "get", cmd_config_get, ...)` or `COMMAND_SUB("object", "encoding", ...)`
(any handler) as "config|get".
Internal commands ("__take") are skipped.

For every name it asks COMMAND INFO and COMMAND DOCS on a RESP2 and on a RESP3
(HELLO 3) connection.  The two differ only in aggregate types: RESP3 has maps
(%n) and sets (~n) where RESP2 has arrays (*2n, *n).  The script checks that
exactly this rewrite turns each RESP3 reply into the RESP2 one, and stores the
RESP3 bytes; server.c does the same rewrite for RESP2 clients.  It keeps the entry itself (COMMAND INFO's one
array element; the value of COMMAND DOCS's name->doc map).  A container's
subcommands come in Redis's dict order, which changes with each process's hash
seed; they are sorted by name so that the file is the same on every run.
A name Redis does not know is reported and left out (percore then answers
like Redis 7.0.15 does for it).

Standard library only; run with Debian's /usr/bin/python3.
"""

import argparse
import glob
import os
import re
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REDIS_VERSION = "7.0.15"


# ---------------------------------------------------------------- RESP

def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Incomplete(Exception):
    pass


def parse(buf, pos=0):
    """(value, end): value is (type, scalar bytes, [children]); maps give 2n children"""
    le = buf.find(b"\r\n", pos)
    if le < 0:
        raise Incomplete()
    t = buf[pos:pos + 1].decode()
    body = buf[pos + 1:le]
    after = le + 2
    if t in "$=!":
        n = int(body)
        if n < 0:
            return (t, body, None), after
        if len(buf) < after + n + 2:
            raise Incomplete()
        return (t, body, buf[after:after + n]), after + n + 2
    if t in "*~%>":
        n = int(body)
        if n < 0:
            return (t, body, None), after
        kids, p = [], after
        for _ in range(n * 2 if t == "%" else n):
            k, p = parse(buf, p)
            kids.append(k)
        return (t, body, kids), p
    if t in "+-:_,#(":
        return (t, body, None), after
    raise ValueError("not RESP: %r" % buf[pos:pos + 40])


def serialize(v):
    t, body, x = v
    if t in "$=!" and x is not None:
        return b"%s%d\r\n%s\r\n" % (t.encode(), len(x), x)
    if t in "*~%>" and x is not None:
        n = len(x) // 2 if t == "%" else len(x)
        return b"%s%d\r\n" % (t.encode(), n) + b"".join(serialize(k) for k in x)
    return t.encode() + body + b"\r\n"


def resp3_to_resp2(v):
    """the rewrite server.c does: %n -> *2n, ~n -> *n, all else unchanged"""
    t, body, x = v
    if t in "%~" and x is not None:
        return ("*", b"%d" % len(x), [resp3_to_resp2(k) for k in x])
    if t in "*>" and x is not None:
        return (t, body, [resp3_to_resp2(k) for k in x])
    return v


def pairs(v):
    """the key/value pairs of a RESP3 map or a RESP2 flat array"""
    kids = v[2]
    return [(kids[i], kids[i + 1]) for i in range(0, len(kids), 2)]


def with_kids(v, kids):
    return (v[0], v[1], kids)


class Conn:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.buf = b""

    def call(self, *args):
        self.sock.sendall(encode(args))
        while True:
            try:
                v, end = parse(self.buf)
                raw, self.buf = self.buf[:end], self.buf[end:]
                return v, raw
            except Incomplete:
                d = self.sock.recv(1 << 20)
                if not d:
                    raise RuntimeError("redis-server closed the connection")
                self.buf += d

    def close(self):
        self.sock.close()


# ---------------------------------------------------------------- entries

def sort_info_subcommands(entry):
    """COMMAND INFO entry with its subcommand array (element 10) sorted by name"""
    kids = list(entry[2])
    subs = kids[9]
    if subs[2]:
        kids[9] = with_kids(subs, sorted(subs[2], key=lambda e: e[2][0][2]))
    return with_kids(entry, kids)


def sort_docs_subcommands(doc):
    """COMMAND DOCS value with its "subcommands" map sorted by name"""
    kids = []
    for k, v in pairs(doc):
        if k[2] == b"subcommands":
            sp = sorted(pairs(v), key=lambda kv: kv[0][2])
            v = with_kids(v, [x for kv in sp for x in kv])
        kids += [k, v]
    return with_kids(doc, kids)


def fetch(conn, name):
    """(info entry or None, docs value or None) of one name on this connection"""
    v, _ = conn.call("COMMAND", "INFO", name)
    entry = v[2][0]
    info = None
    if entry[2] is not None and entry[0] in "*":
        if entry[2][0][2] != name.encode():
            raise RuntimeError("COMMAND INFO %s answered for %r" % (name, entry[2][0][2]))
        info = sort_info_subcommands(entry)
    v, _ = conn.call("COMMAND", "DOCS", name)
    docs = None
    if v[2]:
        (k, doc), = pairs(v)
        if k[2] != name.encode():
            raise RuntimeError("COMMAND DOCS %s answered for %r" % (name, k[2]))
        docs = sort_docs_subcommands(doc)
    return info, docs


# ---------------------------------------------------------------- names

TOP_RE = re.compile(r'(?:\bCMD\(|\{)"([a-z][a-z0-9_-]*)",\s*cmd_[a-z0-9_]+\s*,')
SUB_RE = re.compile(r'\b(?:COMMAND_)?SUB\("([a-z][a-z0-9_-]*)",\s*"([a-z][a-z0-9_-]*)",\s*[a-z][a-z0-9_]*\s*,')


def names_from_tables():
    names = set()
    tables = glob.glob(os.path.join(HERE, "*.c")) + glob.glob(os.path.join(HERE, "..", "admin", "*.c")) + glob.glob(os.path.join(HERE, "..", "core", "script.c")) + glob.glob(os.path.join(HERE, "..", "core", "function.c")) + glob.glob(os.path.join(HERE, "..", "core", "replica.c")) + glob.glob(os.path.join(HERE, "..", "core", "primary.c"))
    for path in sorted(tables):
        if os.path.basename(path) == "command_meta.c":
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        names.update(TOP_RE.findall(text))
        names.update("%s|%s" % m for m in SUB_RE.findall(text))
    return sorted(names)


# ---------------------------------------------------------------- server

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start_redis(binary):
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("%s exited at start (status %s)" % (binary, proc.returncode))
        try:
            c = Conn("127.0.0.1", port)
            c.call("PING")
            c.close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("%s did not answer PING in 20 s" % binary)


# ---------------------------------------------------------------- C output

def c_escape(b):
    s = []
    for ch in b:
        if ch == 0x0d:
            s.append("\\r")
        elif ch == 0x0a:
            s.append("\\n")
        elif ch in (0x22, 0x5c, 0x3f):  # " \ ? (no trigraphs under -std=c11)
            s.append("\\" + chr(ch))
        elif 0x20 <= ch < 0x7f:
            s.append(chr(ch))
        else:
            s.append("\\%03o" % ch)
    return "".join(s)


def c_string(b, indent="        ", width=100):
    """bytes as C string literals, broken after a RESP line near width columns"""
    lines, cur = [], ""
    for part in b.split(b"\r\n")[:-1]:
        e = c_escape(part + b"\r\n")
        if cur and len(indent) + len(cur) + len(e) + 2 > width:
            lines.append(indent + '"' + cur + '"')
            cur = ""
        cur += e
    if cur:
        lines.append(indent + '"' + cur + '"')
    return "\n".join(lines)


def c_entry(b):
    if b is None:
        return "        NULL, 0,"
    return "%s,\n        %d," % (c_string(b), len(b))


HEAD = """/*
 * command_meta: Redis %(v)s's COMMAND INFO and COMMAND DOCS entries for the
 * commands percore serves, as RESP3 reply bytes.
 *
 * GENERATED by server/cmd/gen_command_meta.py from redis-server %(v)s; do not
 * edit.  Rerun the script after adding a command or subcommand to one of the
 * command tables in server/cmd/.
 *
 * A row holds a command's (or "container|sub"'s) COMMAND INFO entry (the one
 * element of the COMMAND INFO reply) and its COMMAND DOCS doc (the value of
 * the name->doc map) as a RESP3 connection gets them.  A RESP2 connection
 * gets the same with every map %%n written *2n and every set ~n written *n
 * (the script checked that this gives Redis's RESP2 bytes).  A container's
 * subcommands are sorted by name: Redis lists them in its dict order, which
 * changes with each process's hash seed.  Rows are sorted by name (strcmp)
 * for bsearch.%(skipped)s
 *
 * Threading: read-only static data; any thread.
 */
#include "percore/command_meta.h"

#include <stdlib.h>
#include <string.h>

struct command_meta {
    const char *name; /* lower case; "container|sub" for a subcommand */
    const char *info; /* COMMAND INFO entry, RESP3; NULL if Redis has none */
    size_t info_len;
    const char *docs; /* COMMAND DOCS doc, RESP3; NULL if Redis has none */
    size_t docs_len;
};

static const struct command_meta command_meta_table[] = {"""

TAIL = """};

static int command_meta_cmp(const void *key, const void *elem)
{
    return strcmp(key, ((const struct command_meta *)elem)->name);
}

static const struct command_meta *command_meta_find(const char *name)
{
    return bsearch(name, command_meta_table,
                   sizeof command_meta_table / sizeof command_meta_table[0],
                   sizeof command_meta_table[0], command_meta_cmp);
}

const char *command_meta_info(const char *name, size_t *len)
{
    const struct command_meta *m = command_meta_find(name);
    if (!m || !m->info)
        return NULL;
    *len = m->info_len;
    return m->info;
}

const char *command_meta_docs(const char *name, size_t *len)
{
    const struct command_meta *m = command_meta_find(name);
    if (!m || !m->docs)
        return NULL;
    *len = m->docs_len;
    return m->docs;
}
"""


def write_c(path, rows, version, skipped):
    note = ""
    if skipped:
        note = ("\n *\n * Unknown to Redis %s, so left out (percore answers for them as Redis"
                "\n * does for an unknown name): %s." % (version, " ".join(skipped)))
    out = [HEAD % {"v": version, "skipped": note}]
    for name, info, docs in rows:
        out.append("    {\"%s\"," % name)
        out.append(c_entry(info))
        out.append(c_entry(docs))
        out.append("    },")
    out.append(TAIL)
    with open(path, "w", encoding="ascii") as f:
        f.write("\n".join(out))


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help="command names (default: from server/cmd/*.c)")
    ap.add_argument("--redis-server", default="/usr/bin/redis-server")
    ap.add_argument("--port", type=int, help="use the redis-server listening here")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--out", default=os.path.join(HERE, "command_meta.c"))
    ap.add_argument("--any-version", action="store_true",
                    help="accept a redis-server other than %s" % REDIS_VERSION)
    a = ap.parse_args()

    names = sorted(set(n.lower() for n in a.names)) if a.names else names_from_tables()
    if not names:
        sys.exit("no command names found")
    proc = None
    port = a.port
    if port is None:
        proc, port = start_redis(a.redis_server)
    try:
        c2 = Conn(a.host, port)
        c3 = Conn(a.host, port)
        v, _ = c3.call("HELLO", "3")
        version = dict((k[2], x[2]) for k, x in pairs(v))[b"version"].decode()
        if version != REDIS_VERSION and not a.any_version:
            sys.exit("redis-server is %s, want %s (or --any-version)" % (version, REDIS_VERSION))
        rows, skipped = [], []
        for name in names:
            i2, d2 = fetch(c2, name)
            i3, d3 = fetch(c3, name)
            for what, r2, r3 in (("COMMAND INFO", i2, i3), ("COMMAND DOCS", d2, d3)):
                if (r2 is None) != (r3 is None) or (
                        r3 is not None and serialize(resp3_to_resp2(r3)) != serialize(r2)):
                    sys.exit("%s %s: RESP2 is not RESP3 with maps and sets as arrays"
                             % (what, name))
            if i3 is None and d3 is None:
                skipped.append(name)
                print("%s: unknown to redis-server %s, left out" % (name, version),
                      file=sys.stderr)
                continue
            rows.append((name, i3 and serialize(i3), d3 and serialize(d3)))
        c2.close()
        c3.close()
    finally:
        if proc:
            proc.terminate()
            proc.wait(10)
    rows.sort(key=lambda r: r[0].encode())
    write_c(a.out, rows, version, skipped)
    print("%s: %d names, %d bytes" % (os.path.relpath(a.out), len(rows), os.path.getsize(a.out)))


if __name__ == "__main__":
    main()
