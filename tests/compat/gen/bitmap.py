"""bitmap: seeded random bitmap commands for diff.py (--gen bitmap).

lines(rng, n, keys) returns (marker, args) pairs: SETBIT GETBIT BITCOUNT
BITPOS BITOP BITFIELD BITFIELD_RO with ranges in bytes and bits (negative,
out of range, reversed), field types at and past their limits, `#` offsets,
every OVERFLOW, bad arguments, mixed with SET (integer-encoded and binary
strings), APPEND, SETRANGE, DEL, EXPIRE, a list (WRONGTYPE) over keys spread
across shards, so BITOP gathers its keys from several shards.  Every write
is checked with !dirty (Redis's change counter).  A final sweep compares
every key's type and bytes.
"""


def lines(rng, n, keys):
    out = []

    def add(args, m="exact"):
        out.append((m, [a.encode() if isinstance(a, str) else a for a in args]))

    def K():
        return rng.choice(keys)

    def off():
        return str(rng.choice([0, 1, 7, 8, 9, 15, 16, 31, 63, 64, 100, 255, rng.randrange(0, 400),
                               rng.randrange(0, 400), -1, "x", 80000 if rng.randrange(50) == 0 else 3]))

    def idx():
        return str(rng.choice([0, 1, 2, 3, -1, -2, -3, 5, 10, 100, -100, rng.randrange(-60, 60),
                               rng.randrange(-60, 60), "a" if rng.randrange(30) == 0 else 0]))

    def ftype():
        s = rng.choice("iu")
        b = rng.choice([1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 31, 32, 33, 63, 64, rng.randrange(1, 65)])
        if rng.randrange(40) == 0:
            return rng.choice(["u64", "i65", "u0", "x8", "I8", ""])
        return "%s%d" % (s, b)

    def foff():
        if rng.randrange(4) == 0:
            return "#%d" % rng.randrange(0, 12)
        return str(rng.randrange(0, 200)) if rng.randrange(40) else rng.choice(["-1", "#-1", "abc", "#"])

    def fval():
        return str(rng.choice([0, 1, -1, 2, 5, 100, -100, 127, 128, -128, 255, 256, 1000, -1000, 65535,
                               2 ** 31, -2 ** 31, 2 ** 62, 2 ** 63 - 1, -2 ** 63, rng.randrange(-300, 300)]))

    binvals = [b"\x00\xff", b"foobar", b"123", b"-5", b"0", b"\xff\xf0\x00", b"\x00" * 9 + b"\x01",
               b"\xff" * 17, b"", b"hello world"]

    for _ in range(n):
        op = rng.randrange(100)
        if op < 20:
            add(["SETBIT", K(), off(), rng.choice(["0", "1", "1", "0", "2" if rng.randrange(20) == 0 else "1"])],
                "dirty")
        elif op < 28:
            add(["GETBIT", K(), off()])
        elif op < 38:
            a = ["BITCOUNT", K()]
            r = rng.randrange(6)
            if r > 0:
                a += [idx(), idx()]
            if r > 2:
                a.append(rng.choice(["BIT", "BYTE", "bit", "byte", "BITS"]) if rng.randrange(15) else "x")
            add(a)
        elif op < 48:
            a = ["BITPOS", K(), rng.choice(["0", "1", "1", "0", "2" if rng.randrange(20) == 0 else "1"])]
            r = rng.randrange(5)
            if r > 0:
                a.append(idx())
            if r > 1:
                a.append(idx())
            if r > 2:
                a.append(rng.choice(["BIT", "BYTE", "bit"]) if rng.randrange(15) else "bytes")
            add(a)
        elif op < 58:
            bop = rng.choice(["AND", "OR", "XOR", "NOT", "and", "xor"])
            srcs = [K() for _ in range(1 if bop == "NOT" and rng.randrange(10) else rng.randrange(1, 5))]
            add(["BITOP", bop, K()] + srcs, "dirty")
        elif op < 72:
            ro = rng.randrange(6) == 0
            a = ["BITFIELD_RO" if ro else "BITFIELD", K()]
            for _ in range(rng.randrange(1, 5)):
                if rng.randrange(4) == 0:
                    a += ["OVERFLOW", rng.choice(["WRAP", "SAT", "FAIL", "sat", "fail"])]
                sub = rng.choice(["GET", "GET"] if ro and rng.randrange(5) else ["GET", "SET", "INCRBY"])
                a += [sub, ftype(), foff()]
                if sub != "GET":
                    a.append(fval())
            add(a, "dirty")
        elif op < 78:
            add(["SET", K(), rng.choice(binvals)])
        elif op < 80:
            add(["APPEND", K(), rng.choice(binvals)], "dirty")
        elif op < 82:
            add(["SETRANGE", K(), str(rng.randrange(0, 20)), rng.choice(binvals)], "dirty")
        elif op < 88:
            add(["GET", K()])
        elif op < 90:
            add(["OBJECT", "ENCODING", K()])
        elif op < 92:
            add(["DEL", K()], "dirty")
        elif op < 94:
            add(["EXPIRE", K(), "1000"])
        elif op < 96:
            add(["RPUSH", K(), "a"])
        else:
            add(["STRLEN", K()])

    for k in keys:
        add(["TYPE", k])
        add(["GET", k])
    return out
