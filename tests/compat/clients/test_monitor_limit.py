#!/usr/bin/python3
"""test_monitor_limit.py SERVER [THREADS]: a monitor that does not read is cut off.

Starts SERVER (percore with THREADS shard threads, default 4) with
`client-output-buffer-limit replica 1mb 256kb 10` (percore cuts a monitor off
at the replica class's limits), opens a MONITOR connection with a small
receive buffer that never reads, then has 4 writers run 100,000 SETs of
100-byte values on keys of every shard, pipelined.  Checks:

  - every SET answers +OK (the monitor slows nobody down to a stop);
  - the monitor is disconnected: INFO connected_clients drops back, its socket
    reaches EOF, and the log says why in Redis's words ("Client ... flags=O ...
    scheduled to be closed ASAP for overcoming of output buffer limits.");
  - the server's peak RSS (VmHWM) stays under 200 MB (more under ASan, whose
    quarantine keeps freed memory: PC_RSS_LIMIT_MB sets the bound);
  - a new monitor afterwards gets the lines of new commands, and the server
    exits cleanly.

With SERVER a redis-server the same runs against Redis 7.0, which cuts
monitors off at the normal class's limits instead (its getClientType calls
a monitor a normal client): the test then sets those, which checks the test.

Exit status 0 when every check passes, 1 otherwise.
"""
import os
import re
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from diff import Conn, Server, encode  # noqa: E402  (tests/compat/diff.py)

TOTAL_SETS = 100000
BATCH = 500
WRITERS = 4
VALUE = b"v" * 100
WAIT_S = 60.0
LOG_WORDS = "scheduled to be closed ASAP for overcoming of output buffer limits."


def rss_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def command(conn, *args):
    conn.send(encode([a if isinstance(a, bytes) else a.encode() for a in args]))
    r = conn.read(WAIT_S)
    if r is None:
        raise RuntimeError("no reply to %r in %.0f s" % (args, WAIT_S))
    return r


def connected_clients(conn):
    return int(re.search(rb"connected_clients:(\d+)", command(conn, "INFO", "clients")).group(1))


def wait_clients(conn, want, timeout=WAIT_S):
    """percore sums connected_clients every stats interval: poll"""
    deadline = time.monotonic() + timeout
    while True:
        n = connected_clients(conn)
        if n == want or time.monotonic() > deadline:
            return n
        time.sleep(0.1)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    limit_mb = int(os.environ.get("PC_RSS_LIMIT_MB", "200"))
    srv = Server(sys.argv[1], threads=threads, name="monitor-limit")
    cls = "normal" if srv.is_redis else "replica"
    failures = []
    srv.start()
    try:
        probe = Conn(srv.port, timeout=WAIT_S)
        r = command(probe, "CONFIG", "SET", "client-output-buffer-limit", "%s 1mb 256kb 10" % cls)
        if r != b"+OK\r\n":
            raise RuntimeError("CONFIG SET client-output-buffer-limit: %r" % r)
        base_clients = 1  # the probe (once Server.start's PING connection is counted out)
        if wait_clients(probe, base_clients) != base_clients:
            failures.append("connected_clients is not 1 with one client connected")
        base_rss = rss_kb(srv.proc.pid, "VmRSS")

        mon = socket.socket()
        mon.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the kernel holds little for it
        mon.connect(("127.0.0.1", srv.port))
        mon.sendall(encode([b"MONITOR"]))
        if wait_clients(probe, base_clients + 1) != base_clients + 1:
            failures.append("the monitor is not counted in connected_clients")

        writers = [Conn(srv.port, timeout=WAIT_S) for _ in range(WRITERS)]
        peak = 0
        bad = 0
        cut_at = None
        done = 0
        while done < TOTAL_SETS:
            for w in writers:
                n = min(BATCH, TOTAL_SETS - done)
                w.send(b"".join(encode([b"SET", b"key:%d" % (done + i), VALUE]) for i in range(n)))
                for _ in range(n):
                    if w.read(WAIT_S) != b"+OK\r\n":
                        bad += 1
                done += n
            peak = max(peak, rss_kb(srv.proc.pid, "VmRSS"))
            if cut_at is None and done % (BATCH * WRITERS * 10) == 0 and \
                    connected_clients(probe) == base_clients + WRITERS:
                cut_at = done
        if bad:
            failures.append("%d of %d SETs did not answer +OK" % (bad, TOTAL_SETS))

        # the monitor is gone: counted out, its socket closed, the reason logged
        want = base_clients + WRITERS
        got = wait_clients(probe, want)
        if got != want:
            failures.append("connected_clients is %d, not %d: the monitor was not cut off" % (got, want))
        mon.settimeout(WAIT_S)
        received = 0
        try:
            while True:
                d = mon.recv(1 << 20)
                if not d:
                    break
                received += len(d)
        except socket.timeout:
            failures.append("the monitor's socket is still open after %.0f s" % WAIT_S)
        except OSError:
            pass  # reset: closed too
        mon.close()
        logged = [line for line in srv.tail(1 << 20).splitlines() if LOG_WORDS in line]
        if not logged:
            failures.append("no log line says '%s'" % LOG_WORDS)
        elif "flags=O" not in logged[0]:
            failures.append("the client cut off is not the monitor: %s" % logged[0])

        hwm = rss_kb(srv.proc.pid, "VmHWM")
        if hwm > limit_mb * 1024:
            failures.append("peak RSS %d MB over %d MB" % (hwm // 1024, limit_mb))

        # a new monitor works, and gets a new command's line
        m2 = Conn(srv.port, timeout=WAIT_S)
        if command(m2, "MONITOR") != b"+OK\r\n":
            failures.append("a second MONITOR did not answer +OK")
        command(writers[0], "SET", "after-cut", "1")
        line = m2.read(WAIT_S) or b""
        if not re.match(rb'^\+\d+\.\d{6} \[0 127\.0\.0\.1:\d+\] "SET" "after-cut" "1"\r\n$', line):
            failures.append("a new monitor got %r" % line)
        print("monitor cut off %s; it received %d bytes; %d SETs; RSS %d MB at the start, %d MB at most "
              "(VmHWM %d MB)" % ("after about %d SETs" % cut_at if cut_at else "by the end", received,
                                 TOTAL_SETS, base_rss // 1024, peak // 1024, hwm // 1024))
        if logged:
            print("log: " + logged[0].strip()[:300])
    finally:
        status = srv.stop()
        if status not in (0, None):
            failures.append("the server exited with %s:\n%s" % (status, srv.tail()))
    for f in failures:
        print("FAIL " + f)
    print("test_monitor_limit: %s (threads %d, %s class)" % (
        "%d failures" % len(failures) if failures else "passed", threads, cls))
    if not failures and not os.environ.get("PC_KEEP_LOGS"):
        try:
            os.unlink(srv.log)
        except OSError:
            pass
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
