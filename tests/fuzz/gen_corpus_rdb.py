#!/usr/bin/python3
"""gen_corpus_rdb.py: fuzz_rdb's seed corpus, from a real redis-server 7.0.

    tests/fuzz/gen_corpus_rdb.py [--redis /usr/bin/redis-server]
                                            # rewrites tests/fuzz/corpus-rdb/

Starts redis-server in a temporary directory, makes one key of every type in
each of its encodings (strings raw, int and LZF-compressible; lists of one
and several quicklist nodes, compressed inner nodes; intset, listpack and
hashtable sets; listpack and skiplist sorted sets; listpack and hashtable
hashes), and writes:

  value-NAME    DUMP's payload without its 10-byte footer (version and
                CRC64), after fuzz_rdb's control byte for "a value of RDB
                version 10" (0x24); every other one with the tiny limits too
                (0x26), so loading converts it;
  file-NAME     the whole dump.rdb Redis saved of all of them, with expiries
                (control 0x01), and of none (an empty file).

Standard library only (talks RESP itself).
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus-rdb")
VALUE_V10 = 0x24     # fuzz_rdb.c: bit 0 clear (a value), version bits (9 % 11) + 1 = 10
TINY = 0x02          # fuzz_rdb.c: CTL_TINY
FILE = 0x01          # fuzz_rdb.c: CTL_FILE


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.s.recv(65536)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _reply(self):
        line = self._line()
        if line[:1] == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(65536)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if line[:1] == b"*":
            return [self._reply() for _ in range(int(line[1:]))]
        if line[:1] == b"-":
            raise RuntimeError(line.decode())
        return line[1:]

    def cmd(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self._reply()


def keys(c):
    """name -> key, each in one encoding"""
    c.cmd("CONFIG", "SET", "list-compress-depth", "1")
    c.cmd("SET", "str-raw", "hello world")
    c.cmd("SET", "str-int", "123456789")
    c.cmd("SET", "str-lzf", "a" * 200)
    c.cmd("SET", "str-bin", bytes(range(256)))
    c.cmd("RPUSH", "list-small", "a", "b", "1", "-2", "70000")
    c.cmd("RPUSH", "list-nodes", *["element-%d" % i for i in range(2000)])
    c.cmd("SADD", "set-intset", "1", "2", "-3", "70000", "5000000000")
    c.cmd("SADD", "set-listpack-ish", "a", "b", "c")  # a hashtable in 7.0
    c.cmd("SADD", "set-big", *["m%d" % i for i in range(600)])
    c.cmd("ZADD", "zset-listpack", "1", "a", "2.5", "b", "-inf", "c", "inf", "d")
    c.cmd("ZADD", "zset-skiplist", *sum((["%d.5" % i, "m%d" % i] for i in range(200)), []))
    c.cmd("HSET", "hash-listpack", "f1", "v1", "f2", "2", "f3", "v" * 30)
    c.cmd("HSET", "hash-table", *sum((["field%d" % i, "value%d" % i] for i in range(200)), []))
    c.cmd("HSET", "hash-longvalue", "f", "x" * 100)
    c.cmd("PEXPIRE", "str-raw", "100000000")
    return [k.decode() for k in c.cmd("KEYS", "*")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    o = ap.parse_args()
    work = tempfile.mkdtemp(prefix="percore-corpus-rdb-")
    port = 20000 + os.getpid() % 20000
    p = subprocess.Popen([o.redis, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", work],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                c = Conn(port)
                break
            except OSError:
                time.sleep(0.05)
        shutil.rmtree(CORPUS, ignore_errors=True)
        os.mkdir(CORPUS)
        c.cmd("SAVE")
        with open(os.path.join(work, "dump.rdb"), "rb") as f:
            empty = f.read()
        for i, name in enumerate(sorted(keys(c))):
            payload = c.cmd("DUMP", name)[:-10]
            with open(os.path.join(CORPUS, "value-" + name), "wb") as f:
                f.write(bytes([VALUE_V10 | (TINY if i % 2 else 0)]) + payload)
        c.cmd("SAVE")
        with open(os.path.join(work, "dump.rdb"), "rb") as f:
            full = f.read()
        for name, data in (("file-all", full), ("file-empty", empty)):
            with open(os.path.join(CORPUS, name), "wb") as f:
                f.write(bytes([FILE]) + data)
    finally:
        p.kill()
        p.wait()
        shutil.rmtree(work, ignore_errors=True)
    print("gen_corpus_rdb.py: %d seeds in %s" % (len(os.listdir(CORPUS)), CORPUS))


if __name__ == "__main__":
    sys.exit(main())
