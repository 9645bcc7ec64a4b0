"""hyperloglog: seeded random HyperLogLog commands for diff.py (--gen hyperloglog).

lines(rng, n, keys) returns (marker, args) pairs: PFADD (of a few or a few
hundred elements), PFCOUNT of one key and of several, PFMERGE, PFDEBUG,
mixed with GET of the strings' bytes, hand-made HLL strings (a header and
random sparse opcodes: ZERO, XZERO, VAL, runs that do not add up to 16384
registers, a stale or valid cached count) and
SETRANGE of random bytes into HLLs, so corrupt HLLs, their errors and what
each command leaves in them come up; string and list writes on the same keys
(WRONGTYPE).  hll-sparse-max-bytes is changed now and then (both servers get
the same CONFIG SET), so sparse HLLs turn dense at random points; it is put
back to Redis's default at the end.

No sparse code made here ends in an XZERO's first byte (SETRANGE rarely
makes one): Redis reads the byte after its string there, which a change of
the string may have left nonzero for later commands; percore reads 0 once
the command is done (server/cmd/hyperloglog.c's xzero_len).
"""


def lines(rng, n, keys):
    tagged = ["{hl}a", "{hl}b", "{hl}c", "{hl}d"]
    allkeys = keys + tagged

    def K():
        return rng.choice(allkeys)

    def KS(lo=1, hi=4):
        if rng.randrange(2):
            return [rng.choice(tagged) for _ in range(rng.randrange(lo, hi + 1))]
        return [K() for _ in range(rng.randrange(lo, hi + 1))]

    def E():
        return "e%d" % rng.randrange(rng.choice([10, 1000, 100000]))

    def opcode():
        r = rng.randrange(10)
        if r < 4:
            return bytes([rng.randrange(64)])                         # ZERO
        if r < 6:
            return bytes([0x40 | rng.randrange(64), rng.randrange(256)])  # XZERO
        return bytes([0x80 | rng.randrange(128)])                     # VAL

    def hand_made():
        enc = 1 if rng.randrange(10) else rng.randrange(3)
        card = bytes(rng.randrange(256) for _ in range(7)) + bytes([rng.choice([0, 0x80, 0x7f])])
        body = b"".join(opcode() for _ in range(rng.randrange(0, 30)))
        if rng.randrange(3) == 0:  # a valid sparse code: zero runs adding up to 16384
            body = rng.choice([b"\x7f\xff", b"\x7f\xfe\x00", b"\x7f\xfe\x90", b"\x7f\xbf\x3f"])
        return b"HYLL" + bytes([enc, 0, 0, 0]) + card + body

    out = []

    def add(args, m="exact"):
        out.append((m, [a.encode() if isinstance(a, str) else a for a in args]))

    for _ in range(n):
        op = rng.randrange(100)
        if op < 25:
            add(["PFADD", K()] + [E() for _ in range(rng.randrange(0, 6))])
        elif op < 32:
            add(["PFADD", K()] + [E() for _ in range(rng.randrange(50, 600))])
        elif op < 42:
            add(["PFCOUNT", K()])
        elif op < 50:
            add(["PFCOUNT"] + KS(2, 4))
        elif op < 58:
            add(["PFMERGE"] + KS(1, 4))
        elif op < 70:
            add(["GET", K()])
        elif op < 76:
            add(["SET", K(), hand_made()])
        elif op < 80:
            add(["SETRANGE", K(), str(rng.randrange(0, 40)), bytes([rng.randrange(256)])])
        elif op < 85:
            add(["PFDEBUG", rng.choice(["GETREG", "DECODE", "ENCODING", "TODENSE"]), K()])
        elif op < 88:
            add(["OBJECT", "ENCODING", K()])
        elif op < 90:
            add(["DEL", K()])
        elif op < 92:
            add(["SET", K(), rng.choice(["foo", "12345", "HYLL", ""])])
        elif op < 93:
            add(["RPUSH", K(), "a"])
        elif op < 97:
            add(["CONFIG", "SET", "hll-sparse-max-bytes", rng.choice(["0", "20", "60", "200", "3000", "20000"])])
        else:
            c = rng.choice(["PFADD", "PFCOUNT", "PFMERGE", "PFDEBUG"])
            add([c])

    add(["CONFIG", "SET", "hll-sparse-max-bytes", "3000"])
    for k in allkeys:
        add(["TYPE", k])
        add(["GET", k])
        add(["PFCOUNT", k])
    return out
