"""hash: seeded random hash commands for diff.py (--gen hash).

lines(rng, n, keys) returns (marker, args) pairs: every hash command and
option mixed with DEL, EXPIRE, TTL, TYPE, RENAME, OBJECT ENCODING and string
writes on the same keys (so WRONGTYPE comes up), over keys spread across
shards.  The conversion thresholds are lowered and raised now and then (both
servers get the same CONFIG SET), so hashes cross listpack -> hashtable at
random points; they are put back to Redis's defaults at the end.

Replies whose order is a hashtable's (HGETALL, HKEYS, HVALS, HRANDFIELD with
a count covering the hash) are compared sorted; random picks by length or
type; HSCAN only with a MATCH that selects at most one field (then the reply
is exact in both encodings).
"""


def lines(rng, n, keys):
    fields = ["f%d" % i for i in range(12)] + ["", "a\x00b", "12"]
    vals = ["v", "", "0", "1", "-7", "42", "1.5", "3e2", "abc", "9223372036854775807",
            "-9223372036854775808", " 1", "hello world"]
    long_field = "long-field-name-%s" % ("x" * 70)  # over hash-max-listpack-value's default
    long_val = "x" * 80
    incrs = ["1", "-1", "0", "5", "100", "-9223372036854775808", "9223372036854775807", "x", "1.5", ""]
    fincrs = ["1.5", "-0.25", "10", "3e2", "0.1", "-1e-3", "abc", "inf", "nan", "", "1e308"]

    def K():
        return rng.choice(keys)

    def F():
        return long_field if rng.randrange(200) == 0 else rng.choice(fields)

    def V():
        return long_val if rng.randrange(150) == 0 else rng.choice(vals)

    out = []
    resp = [2]  # the protocol after the last HELLO (RESP3 pairs are nested arrays)

    def add(args, m="exact"):
        out.append((m, [a.encode() if isinstance(a, str) else a for a in args]))

    for _ in range(n):
        op = rng.randrange(100)
        if op < 16:
            a = ["HSET", K()]
            for _ in range(rng.randrange(1, 5)):
                a += [F(), V()]
            if rng.randrange(20) == 0:
                a.append(F())  # odd: arity error
            add(a)
        elif op < 19:
            add(["HSETNX", K(), F(), V()])
        elif op < 21:
            a = ["HMSET", K()]
            for _ in range(rng.randrange(1, 4)):
                a += [F(), V()]
            add(a)
        elif op < 29:
            add(["HGET", K(), F()])
        elif op < 32:
            add(["HMGET", K()] + [F() for _ in range(rng.randrange(1, 5))])
        elif op < 38:
            add(["HDEL", K()] + [F() for _ in range(rng.randrange(1, 4))])
        elif op < 41:
            add([rng.choice(["HLEN", "TYPE", "EXISTS"]), K()])
        elif op < 44:
            add([rng.choice(["HEXISTS", "HSTRLEN"]), K(), F()])
        elif op < 49:
            c = rng.choice(["HGETALL", "HKEYS", "HVALS"])
            add([c, K()], "pairs" if c == "HGETALL" else "sort")
        elif op < 55:
            add(["HINCRBY", K(), F(), rng.choice(incrs)])
        elif op < 60:
            add(["HINCRBYFLOAT", K(), F(), rng.choice(fincrs)])
        elif op < 66:
            k = K()
            r = rng.randrange(8)
            if r == 0:
                add(["HRANDFIELD", k], "type")
            elif r == 1:
                add(["HRANDFIELD", k, str(rng.randrange(-6, 7))], "len")
            elif r == 2:
                add(["HRANDFIELD", k, str(rng.randrange(-6, 7)), "WITHVALUES"], "len")
            elif r == 3:
                add(["HRANDFIELD", k, "100"], "sort")
            elif r == 4:
                add(["HRANDFIELD", k, "100", "WITHVALUES"], "pairs" if resp[0] == 2 else "sort")
            elif r == 5:
                add(["HRANDFIELD", k, rng.choice(["0", "x", "1.5", "-9223372036854775808"])])
            elif r == 6:
                add(["HRANDFIELD", k, "2", rng.choice(["bogus", "WITHVALUES", "withvalues"])], "len")
            else:
                add(["HRANDFIELD", k, "4611686018427387904", "WITHVALUES"])
        elif op < 71:
            k = K()
            r = rng.randrange(5)
            if r == 0:
                add(["HSCAN", k, "0", "MATCH", F() or "f1", "COUNT", "1000"])
            elif r == 1:
                add(["HSCAN", k, "0", "MATCH", "nomatch*", "COUNT", str(rng.randrange(1, 2000))])
            elif r == 2:
                if rng.randrange(2):  # a bad cursor
                    add(["HSCAN", k, rng.choice(["x", "-", " 1", "1 "]), "COUNT", rng.choice(["0", "5"])])
                else:  # a bad COUNT
                    add(["HSCAN", k, "0", "COUNT", rng.choice(["0", "x", "-1", ""])])
            elif r == 3:
                add(["HSCAN", k, "0", rng.choice(["TYPE", "NOSUCH", "MATCH"]), "x"] + rng.choice([[], ["COUNT"]]))
            else:
                add(["HSCAN", k, "0", "MATCH", "f1[0-1]", "COUNT", "1000"], "len")
        elif op < 75:
            add(["OBJECT", "ENCODING", K()])
        elif op < 78:
            add([rng.choice(["DEL", "UNLINK"])] + [K() for _ in range(rng.randrange(1, 3))])
        elif op < 81:
            add(["EXPIRE", K(), str(rng.choice([1000, 5000, 100000]))])
        elif op < 83:
            add(["TTL", K()], "approx:3")
        elif op < 85:
            add(["PERSIST", K()])
        elif op < 88:
            add([rng.choice(["RENAME", "RENAMENX"]), K(), K()])
        elif op < 91:
            add(["SET", K(), V()])
        elif op < 92:
            add(["GET", K()])
        elif op < 94:
            add(["CONFIG", "SET", "hash-max-listpack-entries", rng.choice(["0", "1", "2", "4", "8", "128", "128", "128"])])
        elif op < 95:
            add(["CONFIG", "SET", "hash-max-listpack-value", rng.choice(["0", "2", "8", "64", "64", "64"])])
        elif op < 97:
            add(["DBSIZE"] if rng.randrange(2) else ["FLUSHDB"])
        else:
            resp[0] = rng.choice([2, 3])
            add(["HELLO", str(resp[0])], "shape")

    # final sweep: every key's contents, type and encoding
    add(["HELLO", "2"], "shape")
    for k in keys:
        add(["TYPE", k])
        add(["OBJECT", "ENCODING", k])
        add(["HLEN", k])
        add(["HGETALL", k], "pairs")
    add(["CONFIG", "SET", "hash-max-listpack-entries", "128"])
    add(["CONFIG", "SET", "hash-max-listpack-value", "64"])
    return out
