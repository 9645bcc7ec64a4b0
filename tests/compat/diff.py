#!/usr/bin/python3
"""diff.py: differential tester, percore against a real redis-server 7.0.

Starts `redis-server --port P --save '' --appendonly no` (the reference) and
the candidate (percore-server --threads T with the same two, or another
redis-server to validate this harness) on free ports, sends both the same commands over raw RESP in
lockstep and compares the reply bytes.  Standard library only.

    diff.py --candidate build/percore-server --threads 4 [SCRIPT.txt ...]
    diff.py --candidate build/percore-server --threads 1 --random 2000 --seed 7
    diff.py --candidate /usr/bin/redis-server            # harness self-check

Scripts (tests/compat/scripts/*.txt by default): one command per line, split
like redis-cli does (double quotes with \\xHH \\n \\r \\t escapes, single
quotes), '#' starts a comment line.  Each file runs on a fresh connection
after FLUSHALL.  A line may start with a marker saying how to compare:

    !exact CMD...      the default: reply bytes must be equal
    !any CMD...        read a reply from both, ignore it
    !type CMD...       same RESP type (first byte) only
    !len CMD...        same type, and same length (bulk) / element count
    !sort CMD...       arrays compared with their elements sorted (KEYS);
                       RESP3 maps with their pairs sorted
    !pairs CMD...      a RESP2 array of field/value pairs, pairs sorted
                       (CONFIG GET with several patterns)
    !approx:N CMD...   integers within N of each other, at any depth (TTL of relative expiry,
                       XPENDING's idle times)
    !shape CMD...      same type and element count (HELLO, COMMAND DOCS)
    !info CMD...       both bulk strings in INFO format; section list reported
    !scanall CMD...    CMD is a SCAN, SSCAN, HSCAN or ZSCAN: iterate to cursor 0
                       on both, compare the sets of elements (pairs for
                       HSCAN/ZSCAN) returned
    !slow CMD...       exact, but the reply may take as long as each server
                       keeps using CPU (up to 15 minutes), not just 10 s: a
                       512 MB string zeroed or freed under TSan on a busy
                       machine; so may the FLUSHALL that starts each script
    !noreply CMD...    neither may answer (CLIENT REPLY OFF / SKIP): nothing
                       within 100 ms; a late reply shows on the next line
    !dirty CMD...      exact, and CMD moves INFO's rdb_changes_since_last_save
                       (Redis's server.dirty) by as much on both
    !sleep MS          pause both
    !push              send nothing, read one more value from both and compare
                       exactly: a RESP3 push (or pub/sub message) that follows
                       the last reply (CLIENT TRACKING's invalidations)
    !inline TEXT       send TEXT + CRLF as an inline command, compare exactly
    !rawclose ESCAPED  send the bytes (escapes as in quotes), compare the
                       reply, require that both close the connection, reconnect

Exit status: 0 when no differences, 1 otherwise, 77 when redis-server is
missing (ctest marks that skipped).  The last line is "N passed, M failed".
"""

import argparse
import importlib.util
import glob
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPLY_S = 10.0       # how long a reply may take
SLOW_MAX_S = 900.0   # a slow one (!slow): while its server keeps using CPU, up to this


# ---------------------------------------------------------------- arguments

def split_args(line):
    """Port of Redis sdssplitargs(): returns a list of bytes, or raises."""
    args = []
    i, n = 0, len(line)
    hexd = "0123456789abcdefABCDEF"
    while True:
        while i < n and line[i].isspace():
            i += 1
        if i >= n:
            return args
        inq = insq = False
        cur = bytearray()
        while True:
            c = line[i] if i < n else None
            if inq:
                if c is None:
                    raise ValueError("unbalanced quotes")
                if (c == "\\" and i + 3 < n and line[i + 1] == "x"
                        and line[i + 2] in hexd and line[i + 3] in hexd):
                    cur.append(int(line[i + 2:i + 4], 16))
                    i += 3
                elif c == "\\" and i + 1 < n:
                    i += 1
                    e = line[i]
                    cur += {"n": b"\n", "r": b"\r", "t": b"\t", "b": b"\b",
                            "a": b"\a"}.get(e, e.encode())
                elif c == '"':
                    if i + 1 < n and not line[i + 1].isspace():
                        raise ValueError("closing quote must be followed by a space")
                    i += 1
                    break
                else:
                    cur += c.encode()
            elif insq:
                if c is None:
                    raise ValueError("unbalanced quotes")
                if c == "\\" and i + 1 < n and line[i + 1] == "'":
                    i += 1
                    cur += b"'"
                elif c == "'":
                    if i + 1 < n and not line[i + 1].isspace():
                        raise ValueError("closing quote must be followed by a space")
                    i += 1
                    break
                else:
                    cur += c.encode()
            else:
                if c is None or c in " \n\r\t\0":
                    break
                if c == '"':
                    inq = True
                elif c == "'":
                    insq = True
                else:
                    cur += c.encode()
            i += 1
        args.append(bytes(cur))


def unescape(s):
    """bytes of s with \\r \\n \\t \\\\ \\xHH escapes decoded; all else literal"""
    out, i = bytearray(), 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            e = s[i + 1]
            if e == "x" and i + 3 < len(s):
                out.append(int(s[i + 2:i + 4], 16))
                i += 4
                continue
            out += {"r": b"\r", "n": b"\n", "t": b"\t", "\\": b"\\", "0": b"\0"}.get(e, ("\\" + e).encode())
            i += 2
            continue
        out += c.encode()
        i += 1
    return bytes(out)


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def show(b, limit=400):
    s = repr(bytes(b))[2:-1]
    return s if len(s) <= limit else s[:limit] + "...(%d bytes)" % len(b)


def show_cmd(args):
    parts = []
    for a in args:
        s = a.decode("utf-8", "backslashreplace")
        if not s or any(ch in s for ch in " \"'\\") or any(ord(ch) < 32 for ch in s):
            s = '"' + repr(a)[2:-1].replace('"', '\\"') + '"'
        parts.append(s)
    line = " ".join(parts)
    return line if len(line) < 300 else line[:300] + "..."


# ---------------------------------------------------------------- RESP

class Incomplete(Exception):
    pass


def value_end(buf, pos=0, depth=0):
    """index just past the RESP value at buf[pos:]; raises Incomplete/ValueError"""
    if depth > 64:
        raise ValueError("too deep")
    if pos >= len(buf):
        raise Incomplete()
    t = buf[pos:pos + 1]
    le = buf.find(b"\r\n", pos)
    if le < 0:
        raise Incomplete()
    body = buf[pos + 1:le]
    after = le + 2
    if t in b"+-:_,#(" and len(t) == 1:
        return after
    if t in (b"$", b"!", b"="):
        n = int(body)
        if n < 0:
            return after
        if len(buf) < after + n + 2:
            raise Incomplete()
        return after + n + 2
    if t in (b"*", b"~", b">", b"%", b"|"):
        n = int(body)
        if n < 0:
            return after
        items = n * 2 if t in (b"%", b"|") else n
        p = after
        for _ in range(items):
            p = value_end(buf, p, depth + 1)
        if t == b"|":
            return value_end(buf, p, depth + 1)
        return p
    raise ValueError("not RESP: %r" % buf[pos:pos + 40])


def parse(buf, pos=0):
    """(type char, scalar bytes or None, children list, end index)"""
    t = chr(buf[pos])
    le = buf.find(b"\r\n", pos)
    body = buf[pos + 1:le]
    after = le + 2
    if t in "$!=":
        n = int(body)
        if n < 0:
            return t, None, [], after
        return t, buf[after:after + n], [], after + n + 2
    if t in "*~>%":
        n = int(body)
        if n < 0:
            return t, None, [], after
        items = n * 2 if t == "%" else n
        kids, p = [], after
        for _ in range(items):
            k = parse(buf, p)
            kids.append((k[0], k[1], k[2], buf[p:k[3]]))
            p = k[3]
        return t, body, kids, p
    return t, body, [], after


class Conn:
    def __init__(self, port, timeout=REPLY_S, host="127.0.0.1"):
        self.port = port
        self.timeout = timeout
        self.sock = socket.create_connection((host, port), timeout=5)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.closed = False

    def send(self, data):
        self.sock.sendall(data)

    def read(self, timeout=None, busy=None):
        """one RESP value's bytes; None on timeout, b'' if the peer closed.  With busy
        (a function giving the server's CPU time so far), the wait goes on past the
        timeout, REPLY_S at a time, for as long as busy() grows, up to SLOW_MAX_S."""
        start = time.monotonic()
        deadline = start + (self.timeout if timeout is None else timeout)
        work = busy() if busy else None
        while True:
            if self.buf:
                try:
                    e = value_end(self.buf)
                    v, self.buf = self.buf[:e], self.buf[e:]
                    return v
                except Incomplete:
                    pass
            left = deadline - time.monotonic()
            if left <= 0:
                done = busy() if busy else None
                if done is None or done == work or time.monotonic() - start >= SLOW_MAX_S:
                    return None
                work, deadline = done, time.monotonic() + REPLY_S
                continue
            self.sock.settimeout(left)
            try:
                d = self.sock.recv(65536)
            except socket.timeout:
                continue  # the deadline, or more time while busy
            except OSError:
                d = b""
            if not d:
                self.closed = True
                return b""
            self.buf += d

    def wait_closed(self, timeout=5.0):
        if self.buf:
            return False
        r = self.read(timeout)
        return r == b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# ---------------------------------------------------------------- servers

def free_port(rng=random.Random(os.getpid() ^ int(time.time() * 1000))):
    for _ in range(2000):
        p = rng.randrange(20000, 32000)
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", p))
            return p
        except OSError:
            continue
        finally:
            s.close()
    raise RuntimeError("no free port")


FREE_PORT_ARG = "@free-port"
STARTED = []  # every Server started in this process, for show_logs_on_crash


def show_logs_on_crash(kind, value, tb):
    """sys.excepthook: a test that dies of an exception (a broken pipe, a reply that never came) shows
    the tail of each server's log after its traceback, where a crash or a sanitizer's report is"""
    sys.__excepthook__(kind, value, tb)
    for srv in STARTED:
        status = srv.proc.poll() if srv.proc else None
        sys.stderr.write("---- %s (%s), log %s:\n%s\n" % (
            srv.name, "running" if status is None else "exit status %s" % status, srv.log, srv.tail(8000)))


sys.excepthook = show_logs_on_crash


class Server:
    """extra: more arguments; FREE_PORT_ARG among them becomes a fresh free
    port at each start attempt (self.aux_port), as PC_FREE_PORT_ARG does for
    the C tests"""

    def __init__(self, binary, threads=None, name="server", logdir=None, extra=()):
        self.binary = binary
        self.threads = threads
        self.extra = list(extra)  # more --key value arguments (percore only)
        self.name = name
        self.logdir = logdir or os.environ.get("PC_LOG_DIR", tempfile.gettempdir())
        self.is_redis = "redis-server" in os.path.basename(binary)
        self.extra = list(extra)
        self.aux_port = 0
        self.proc = None

    def start(self):
        for _ in range(4):
            self.port = free_port()
            # no save points for either: no dump.rdb written into the shared cwd
            args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
            if not self.is_redis and self.threads:
                args += ["--threads", str(self.threads)]
            if FREE_PORT_ARG in self.extra:
                self.aux_port = free_port()
            args += [str(self.aux_port) if a == FREE_PORT_ARG else a for a in self.extra]
            os.makedirs(self.logdir, exist_ok=True)  # PC_LOG_DIR may name a folder not made yet
            self.log = os.path.join(self.logdir, "%s-%d.log" % (self.name, self.port))
            self.logf = open(self.log, "wb")
            self.proc = subprocess.Popen(args, stdout=self.logf, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
            if self not in STARTED:
                STARTED.append(self)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    c = Conn(self.port)
                    c.send(b"*1\r\n$4\r\nPING\r\n")
                    ok = c.read(2) == b"+PONG\r\n"
                    c.close()
                    if ok:
                        return
                except OSError:
                    pass
                time.sleep(0.02)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
                raise RuntimeError("%s did not answer PING in 20 s (log %s)" % (self.name, self.log))
        raise RuntimeError("%s exited at start, status %s (log %s):\n%s" % (
            self.name, self.proc.returncode, self.log, self.tail()))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def cpu_ticks(self):
        """user + system CPU time the server has used, in clock ticks; None if unknown"""
        try:
            with open("/proc/%d/stat" % self.proc.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return int(fields[11]) + int(fields[12])
        except (AttributeError, OSError, IndexError, ValueError):
            return None

    def tail(self, n=3000):
        try:
            with open(self.log, "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self):
        """SIGTERM; returns the exit status (negative: killed by that signal)"""
        if not self.proc:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return "hung (SIGKILLed after 15 s)"
        self.logf.close()
        return self.proc.returncode


# ---------------------------------------------------------------- comparing

def approx_equal(pr, pg, tol):
    """the same reply but that integers at any depth (XPENDING's idle times) may be up to tol apart
    (negative ones equal)"""
    if pr[0] != pg[0]:
        return False
    if pr[0] == ":":
        a, b = int(pr[1]), int(pg[1])
        return a == b if a < 0 or b < 0 else abs(a - b) <= tol
    if pr[0] in "*~%>":
        return pr[1] == pg[1] and len(pr[2]) == len(pg[2]) and \
            all(approx_equal(x, y, tol) for x, y in zip(pr[2], pg[2]))
    return pr[1] == pg[1]


def cmp_reply(marker, ref, got):
    """(ok, note)"""
    if marker in ("exact", "slow"):
        return ref == got, ""
    if marker == "any":
        return True, ""
    if not got:
        return False, "no reply"
    if marker == "type":
        return ref[:1] == got[:1], "type differs"
    pr, pg = parse(ref), parse(got)
    if marker == "len":
        if pr[0] != pg[0]:
            return False, "type differs"
        if pr[0] in "$=!":
            return (pr[1] is None) == (pg[1] is None) and len(pr[1] or b"") == len(pg[1] or b""), \
                "length differs"
        if pr[0] in "*~%>":
            return len(pr[2]) == len(pg[2]), "element count differs"
        return ref == got, ""
    if marker in ("sort", "pairs"):
        if pr[0] != pg[0] or pr[1] != pg[1]:
            return False, "type or count differs"
        if marker == "pairs" or pr[0] == "%":
            pairs = lambda kids: sorted((kids[i][3], kids[i + 1][3]) for i in range(0, len(kids) - 1, 2))
            return pairs(pr[2]) == pairs(pg[2]), "pairs differ"
        return sorted(k[3] for k in pr[2]) == sorted(k[3] for k in pg[2]), "elements differ"
    if marker.startswith("approx:"):
        return approx_equal(pr, pg, int(marker.split(":")[1])), "differs beyond integers within the tolerance"
    if marker == "shape":
        if pr[0] != pg[0]:
            return False, "type differs"
        return len(pr[2]) == len(pg[2]), "element count differs"
    if marker == "info":
        return check_info(ref, got)
    raise ValueError("unknown marker " + marker)


def info_sections(body):
    return [ln[2:].strip() for ln in body.split(b"\r\n") if ln.startswith(b"# ")]


def check_info(ref, got):
    pr, pg = parse(ref), parse(got)
    if pg[0] not in "$=" or pg[1] is None:
        return False, "not a bulk string"
    body = pg[1]
    if pg[0] == "=":
        body = body[4:]
    for ln in body.split(b"\r\n"):
        if ln and not ln.startswith(b"# ") and b":" not in ln:
            return False, "line not 'field:value' or '# Section': %r" % ln[:80]
    if b"\n" in body.replace(b"\r\n", b""):
        return False, "bare LF in INFO text"
    rs = info_sections(pr[1] or b"")
    gs = info_sections(body)
    missing = [s.decode() for s in rs if s not in gs]
    extra = [s.decode() for s in gs if s not in rs]
    note = ""
    if missing or extra:
        note = "sections missing: %s; extra: %s" % (missing, extra)
    return True, note


# ---------------------------------------------------------------- running

class Result:
    def __init__(self, max_show):
        self.passed = 0
        self.failed = 0
        self.notes = []
        self.max_show = max_show
        self.shown = 0

    def fail(self, where, args, ref, got, note=""):
        self.failed += 1
        if self.shown >= self.max_show:
            return
        self.shown += 1
        print("DIFF %s\n  command:  %s\n  redis:    %s\n  got:      %s%s" % (
            where, show_cmd(args) if isinstance(args, list) else args,
            show(ref) if ref is not None else "(no reply: timeout)",
            show(got) if got is not None else "(no reply: timeout)",
            ("\n  note:     " + note) if note else ""), flush=True)


class Pair:
    """a connection to each server, kept in step"""

    def __init__(self, ref_srv, cand_srv):
        self.ref_srv, self.cand_srv = ref_srv, cand_srv
        self.ref = self.cand = None
        self.reconnect()

    def reconnect(self):
        for c in (self.ref, self.cand):
            if c:
                c.close()
        self.ref = Conn(self.ref_srv.port)
        self.cand = Conn(self.cand_srv.port)

    def both(self, data, slow=False):
        """send data to each, read each one's reply; slow: as long as it works on it"""
        self.ref.send(data)
        r = self.ref.read(busy=self.ref_srv.cpu_ticks if slow else None)
        try:
            self.cand.send(data)
            g = self.cand.read(busy=self.cand_srv.cpu_ticks if slow else None)
        except OSError:
            g = b""
        return r, g

    def close(self):
        self.ref.close()
        self.cand.close()


def scan_all(conn, args):
    """run a SCAN/SSCAN/HSCAN/ZSCAN to the end; returns (sorted elements, error bytes).
    The cursor is argument 1 of SCAN and argument 2 of the others; HSCAN and
    ZSCAN elements are compared as (field, value) pairs."""
    name = (args[0] if isinstance(args[0], bytes) else args[0].encode()).lower()
    at = 1 if name == b"scan" else 2
    pairs = name in (b"hscan", b"zscan")
    found = set()
    cursor = b"0"
    for _ in range(100000):
        a = list(args)
        a[at] = cursor
        conn.send(encode(a))
        r = conn.read()
        if not r or not r.startswith(b"*2\r\n"):
            return None, r
        p = parse(r)
        cursor = p[2][0][1]
        items = [k[1] for k in p[2][1][2]]
        if pairs:
            found.update(zip(items[0::2], items[1::2]))
        else:
            found.update(items)
        if cursor == b"0":
            return sorted(found), None
    return None, b"(SCAN did not finish)"


NOREPLY_WAIT = 0.1  # s: how long !noreply listens for a reply that must not come


def dirty_of(srv):
    """INFO's rdb_changes_since_last_save on srv (asked on a connection of its own: the line's may be in a
    MULTI)"""
    conn = Conn(srv.port)
    try:
        conn.send(encode([b"INFO", b"persistence"]))
        m = re.search(rb"rdb_changes_since_last_save:(\d+)", conn.read() or b"")
    finally:
        conn.close()
    if not m:
        raise RuntimeError("no rdb_changes_since_last_save in INFO persistence on port %d" % srv.port)
    return int(m.group(1))


def run_line(pair, res, where, marker, args, raw=None, expect_close=False):
    if marker == "dirty":
        before = (dirty_of(pair.ref_srv), dirty_of(pair.cand_srv))
        run_line(pair, res, where, "exact", args, raw)
        r, g = dirty_of(pair.ref_srv) - before[0], dirty_of(pair.cand_srv) - before[1]
        if r == g:
            res.passed += 1
        else:
            res.fail(where, args, b"rdb_changes_since_last_save +%d" % r, b"rdb_changes_since_last_save +%d" % g,
                     "the changes the command counts (Redis's dirty) differ")
        return
    if marker == "scanall":
        rk, rerr = scan_all(pair.ref, args)
        gk, gerr = scan_all(pair.cand, args)
        if rk is None and gk is None:
            ok = rerr == gerr
        else:
            ok = rk == gk
        if ok:
            res.passed += 1
        else:
            res.fail(where, args, repr(rk).encode() if rk is not None else rerr,
                     repr(gk).encode() if gk is not None else gerr, "SCAN iteration key sets differ")
        return
    if marker == "push":
        r, g = pair.ref.read(), pair.cand.read()
        if r is None or r == b"":
            raise RuntimeError("%s: the reference redis-server sent no push" % where)
        if r == g:
            res.passed += 1
        else:
            res.fail(where, "(push)", r, g if g is not None else b"(nothing)", "pushes differ")
        return
    data = raw if raw is not None else encode(args)
    if marker == "noreply":
        pair.ref.send(data)
        pair.cand.send(data)
        r = pair.ref.read(NOREPLY_WAIT)
        g = pair.cand.read(0.01)  # it had the same time to answer
        if r is not None:
            raise RuntimeError("%s: the reference redis-server answered %s to %s" % (where, show(r), show_cmd(args)))
        if g is None:
            res.passed += 1
        else:
            res.fail(where, args, b"(no reply)", g, "a reply where Redis sends none")
        return
    r, g = pair.both(data, slow=marker == "slow")
    if r is None or r == b"":
        raise RuntimeError("%s: the reference redis-server gave no reply to %s" % (
            where, show_cmd(args) if args else show(data)))
    if g is None or g == b"":
        res.fail(where, args if args else show(data), r, g,
                 "connection closed by the server" if g == b"" else "timeout")
        pair.reconnect()
        return
    ok, note = cmp_reply(marker, r, g)
    if ok:
        res.passed += 1
        if note and marker == "info":
            res.notes.append("%s: %s: %s" % (where, show_cmd(args) if args else "", note))
    else:
        res.fail(where, args if args else show(data), r, g, note)
    if expect_close:
        rc = pair.ref.wait_closed()
        gc = pair.cand.wait_closed()
        if not rc:
            raise RuntimeError("%s: reference did not close the connection" % where)
        if not gc:
            res.fail(where, show(data), b"(connection closed)", b"(connection still open)",
                     "protocol error must close the connection")
        pair.reconnect()


def parse_script_line(line):
    """(marker, args, raw, expect_close) or None for blank/comment, or ('sleep', ms)"""
    s = line.strip()
    if not s or s.startswith("#"):
        return None
    marker = "exact"
    if s.startswith("!"):
        head, _, rest = s.partition(" ")
        marker = head[1:]
        s = rest
        if marker == "sleep":
            return ("sleep", int(s), None, False)
        if marker == "inline":
            return ("exact", None, s.encode() + b"\r\n", False)
        if marker == "rawclose":
            return ("exact", None, unescape(s), True)
    return (marker, split_args(s), None, False)


def run_lines(pair, res, name, lines):
    pair.both(encode([b"FLUSHALL"]), slow=True)
    for lineno, line in lines:
        where = "%s:%s" % (name, lineno)
        try:
            p = parse_script_line(line)
        except ValueError as e:
            raise RuntimeError("%s: cannot parse line: %s" % (where, e))
        if p is None:
            continue
        marker, args, raw, close = p
        if marker == "sleep":
            time.sleep(args / 1000.0)
            continue
        run_line(pair, res, where, marker, args, raw, close)


# ---------------------------------------------------------------- random

def spread_keys(rng):
    """keys on many slots (so on every shard), some sharing hash tags"""
    keys = ["k%d" % i for i in range(12)]
    keys += ["{user%d}.a" % i for i in range(4)] + ["{user%d}.b" % i for i in range(4)]
    keys += ["{}empty", "x{y}z", "sp ace", "\u00e9t\u00e9"]
    return keys


def random_lines(n, seed):
    rng = random.Random(seed)
    keys = spread_keys(rng)
    far = lambda: str(rng.choice([10000, 20000, 50000, 86400, 100000, 1000000]))
    abs_s = lambda: str(4102444800 + rng.randrange(0, 10) * 1000)  # year 2100: beyond any relative one
    ints = ["0", "1", "-1", "10", "100", "9223372036854775806", "-9223372036854775807", "12x", "3.5", ""]
    vals = ["v", "hello", "", "123", "-5", "1.5", "00", " 1", "x" * 50, "abc\r\ndef"]

    def K():
        return rng.choice(keys)

    def V():
        return rng.choice(vals + ints)

    out = []
    for i in range(n):
        op = rng.randrange(100)
        m = "exact"
        if op < 10:
            a = ["SET", K(), V()]
            opt = rng.randrange(12)
            if opt == 0:
                a += ["EX", far()]
            elif opt == 1:
                a += ["PX", far() + "000"]
            elif opt == 2:
                a += ["NX"]
            elif opt == 3:
                a += ["XX"]
            elif opt == 4:
                a += ["GET"]
            elif opt == 5:
                a += ["KEEPTTL"]
            elif opt == 6:
                a += ["EXAT", abs_s()]
            elif opt == 7:
                a += ["XX", "GET", "PXAT", abs_s() + "000"]
            elif opt == 8:
                a += ["NX", "GET"]
        elif op < 20:
            a = ["GET", K()]
        elif op < 24:
            a = ["MGET"] + [K() for _ in range(rng.randrange(1, 6))]
        elif op < 27:
            a = ["MSET"]
            for _ in range(rng.randrange(1, 4)):
                a += [K(), V()]
        elif op < 29:
            a = ["MSETNX"]
            for _ in range(rng.randrange(1, 4)):
                a += [K(), V()]
        elif op < 37:
            c = rng.choice(["INCR", "DECR", "INCRBY", "DECRBY", "INCRBYFLOAT"])
            a = [c, K()]
            if c in ("INCRBY", "DECRBY"):
                a.append(rng.choice(ints[:6] + ["5", "-3"]))
            elif c == "INCRBYFLOAT":
                a.append(rng.choice(["1.5", "-0.25", "10", "3e2", "abc", "0.1"]))
        elif op < 41:
            a = rng.choice([["APPEND", K(), V()], ["STRLEN", K()],
                            ["GETRANGE", K(), str(rng.randrange(-8, 8)), str(rng.randrange(-8, 8))],
                            ["SETRANGE", K(), str(rng.randrange(0, 12)), V()]])
        elif op < 46:
            a = [rng.choice(["DEL", "UNLINK", "EXISTS", "TOUCH"])] + [K() for _ in range(rng.randrange(1, 5))]
        elif op < 49:
            a = [rng.choice(["TYPE", "GETDEL", "GETSET"]), K()]
            if a[0] == "GETSET":
                a.append(V())
        elif op < 53:
            a = ["GETEX", K()]
            opt = rng.randrange(5)
            if opt == 0:
                a += ["EX", far()]
            elif opt == 1:
                a += ["PERSIST"]
            elif opt == 2:
                a += ["EXAT", abs_s()]
        elif op < 60:
            c = rng.choice(["EXPIRE", "PEXPIRE"])
            a = [c, K(), far() + ("000" if c == "PEXPIRE" else "")]
            a += rng.choice([[], [], ["NX"], ["XX"]])
        elif op < 64:
            c = rng.choice(["EXPIREAT", "PEXPIREAT"])
            a = [c, K(), abs_s() + ("000" if c == "PEXPIREAT" else "")]
            a += rng.choice([[], ["NX"], ["XX"], ["GT"], ["LT"], ["NX", "XX"], ["GT", "LT"]])
        elif op < 70:
            c = rng.choice(["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"])
            a = [c, K()]
            m = "approx:%d" % (3 if c in ("TTL", "EXPIRETIME") else 3000)
        elif op < 72:
            a = ["PERSIST", K()]
        elif op < 76:
            a = [rng.choice(["RENAME", "RENAMENX"]), K(), K()]
        elif op < 78:
            a = ["DBSIZE"]
        elif op < 80:
            a = ["KEYS", rng.choice(["*", "k*", "{user*", "*.a", "k?", "[a-k]*"])]
            m = "sort"
        elif op < 82:
            a = ["SCAN", "0", "MATCH", rng.choice(["*", "k*", "{*"]), "COUNT", str(rng.randrange(1, 20))]
            m = "scanall"
        elif op < 84:
            a = ["RANDOMKEY"]
            m = "type"
        elif op < 86:
            a = ["SELECT", rng.choice(["0", "0", "1"])]
        elif op < 88:
            a = ["MOVE", K(), rng.choice(["0", "1"])]
        elif op < 89:
            a = ["SWAPDB", "0", "1"]
        elif op < 93:
            a = ["OBJECT", "ENCODING", K()]
        elif op < 94:
            a = ["SETNX", K(), V()]
        elif op < 96:
            a = [rng.choice(["SETEX", "PSETEX"]), K(), rng.choice([far(), "0", "-5", "abc"]), V()]
        elif op < 97:
            a = ["FLUSHDB"] if rng.randrange(4) == 0 else ["PING"]
        else:
            a = ["ECHO", V()]
        out.append((m, [x.encode() for x in a]))
    # final sweep over every key, both databases
    for db in ("0", "1"):
        out.append(("exact", [b"SELECT", db.encode()]))
        out.append(("exact", [b"DBSIZE"]))
        for k in keys:
            out.append(("exact", [b"GET", k.encode()]))
            out.append(("approx:3", [b"TTL", k.encode()]))
    return out


def generator_lines(name, n, seed):
    """random lines from tests/compat/gen/<name>.py: lines(rng, n, keys) -> [(marker, args)]"""
    if name == "strings":
        return random_lines(n, seed)
    spec = importlib.util.spec_from_file_location("gen_" + name, os.path.join(HERE, "gen", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rng = random.Random(seed)
    return mod.lines(rng, n, spread_keys(rng))


def run_random(pair, res, n, seed, gen="strings"):
    pair.both(encode([b"FLUSHALL"]), slow=True)
    for i, (m, args) in enumerate(generator_lines(gen, n, seed)):
        run_line(pair, res, "random(seed=%d)#%d" % (seed, i), m, args)


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scripts", nargs="*", help="script files (default: scripts/*.txt)")
    ap.add_argument("--candidate", default=os.environ.get("PERCORE_SERVER"),
                    help="server under test (percore-server, or redis-server to self-check)")
    ap.add_argument("--redis", default="/usr/bin/redis-server", help="reference redis-server")
    ap.add_argument("--threads", type=int, default=4, help="percore --threads")
    ap.add_argument("--random", type=int, default=0, metavar="N", help="also N random ops")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gen", default="strings",
                    help="random generator: strings, or NAME for tests/compat/gen/NAME.py")
    ap.add_argument("--no-scripts", action="store_true", help="random ops only")
    ap.add_argument("--max-show", type=int, default=60, help="differences printed")
    ap.add_argument("--logdir", help="server logs (default: $PC_LOG_DIR, else the temp folder)")
    o = ap.parse_args()

    if not os.access(o.redis, os.X_OK):
        print("SKIP: reference %s not found (apt-get install redis-server)" % o.redis)
        return 77
    if not o.candidate or not os.access(o.candidate, os.X_OK):
        print("FAIL: candidate server %r is not an executable (pass --candidate)" % o.candidate)
        return 1

    files = o.scripts or ([] if o.no_scripts else sorted(glob.glob(os.path.join(HERE, "scripts", "*.txt"))))
    ref = Server(o.redis, name="redis-ref", logdir=o.logdir)
    cand = Server(o.candidate, threads=o.threads, name="candidate", logdir=o.logdir)
    res = Result(o.max_show)
    status = 0
    try:
        ref.start()
        cand.start()
        print("reference %s on %d; candidate %s%s on %d" % (
            o.redis, ref.port, o.candidate,
            "" if cand.is_redis else " --threads %d" % o.threads, cand.port), flush=True)
        pair = Pair(ref, cand)
        for f in files:
            before = res.failed
            with open(f, encoding="utf-8") as fh:
                lines = list(enumerate(fh.read().split("\n"), 1))
            pair.reconnect()
            run_lines(pair, res, os.path.basename(f), lines)
            if not cand.alive():
                res.fail(os.path.basename(f), "(after the script)", b"(alive)", b"(server died)")
                break
            print("%-28s %s" % (os.path.basename(f),
                                "ok" if res.failed == before else "%d differences" % (res.failed - before)),
                  flush=True)
        if o.random and cand.alive():
            before = res.failed
            pair.reconnect()
            run_random(pair, res, o.random, o.seed, o.gen)
            print("%-28s %s" % ("random %s %d ops seed %d" % (o.gen, o.random, o.seed),
                                "ok" if res.failed == before else "%d differences" % (res.failed - before)),
                  flush=True)
        pair.close()
    except (RuntimeError, OSError) as e:
        print("ERROR: %s" % e)
        status = 1
    finally:
        alive = cand.alive()
        st = cand.stop()
        ref.stop()
    if res.failed > res.shown:
        print("(%d more differences not shown)" % (res.failed - res.shown))
    for n in res.notes[:20]:
        print("note: " + n)
    if not alive:
        print("FAIL: the candidate server died during the run; log %s:\n%s" % (cand.log, cand.tail()))
        res.failed += 1
    elif st != 0:
        print("FAIL: candidate exit status after SIGTERM: %s (want 0); log %s:\n%s" % (st, cand.log, cand.tail()))
        res.failed += 1
    else:
        res.passed += 1
    print("%d passed, %d failed" % (res.passed, res.failed))
    if not (res.failed or status) and not os.environ.get("PC_KEEP_LOGS"):
        for s in (ref, cand):
            if getattr(s, "log", None) and os.path.exists(s.log):
                os.unlink(s.log)
    return 1 if (res.failed or status) else 0


if __name__ == "__main__":
    sys.exit(main())
