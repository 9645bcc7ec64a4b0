"""set: seeded random set commands for diff.py (--gen set).

lines(rng, n, keys) returns (marker, args) pairs: every set command and
option mixed with DEL, EXPIRE, TTL, TYPE, RENAME, OBJECT ENCODING and string
writes on the same keys (so WRONGTYPE comes up), over keys spread across
shards (multi-key commands mix keys of different shards and hash-tagged keys
of one shard).  set-max-intset-entries is lowered and raised now and then
(both servers get the same CONFIG SET), so sets cross intset -> hashtable at
random points; it is put back to Redis's default at the end.

Members are mostly integers (intsets) with some strings, non-canonical
integers ("01", "+1") and binary bytes.  Replies whose order is a
hashtable's are compared sorted; random picks by length or type.  A random
SPOP leaves the two servers' sets different, so the popped key is deleted
right after (its SCARD checked first); SPOP with a count that covers the
whole set is deterministic and compared sorted.  SSCAN is used with a MATCH
that selects at most one member and a COUNT that covers the set (exact in
both encodings) or with shape-only comparison.
"""


def lines(rng, n, keys):
    tagged = ["{st}a", "{st}b", "{st}c", "{st}d"]
    allkeys = keys + tagged
    ints = [str(i) for i in range(16)] + ["-1", "-32768", "32768", "100000", "-5000000000",
                                          "9223372036854775807", "-9223372036854775808"]
    strs = ["a", "b", "c", "x y", "", "01", "+1", "1.5", "a\x00b", "member-%s" % ("m" * 40)]
    counts = ["0", "1", "2", "3", "5", "10", "100", "-1", "-3", "-20", "abc", "1.5",
              "9223372036854775807", "-9223372036854775808"]

    def K():
        return rng.choice(allkeys)

    def KS(lo=1, hi=4):
        if rng.randrange(2):
            return [rng.choice(tagged) for _ in range(rng.randrange(lo, hi + 1))]
        return [K() for _ in range(rng.randrange(lo, hi + 1))]

    def M():
        return rng.choice(strs) if rng.randrange(6) == 0 else rng.choice(ints)

    out = []

    def add(args, m="exact"):
        out.append((m, [a.encode() if isinstance(a, str) else a for a in args]))

    for _ in range(n):
        op = rng.randrange(100)
        if op < 20:
            add(["SADD", K()] + [M() for _ in range(rng.randrange(1, 6))])
        elif op < 27:
            add(["SREM", K()] + [M() for _ in range(rng.randrange(1, 4))])
        elif op < 31:
            add(["SISMEMBER", K(), M()])
        elif op < 33:
            add(["SMISMEMBER", K()] + [M() for _ in range(rng.randrange(1, 4))])
        elif op < 37:
            add([rng.choice(["SCARD", "TYPE", "EXISTS"]), K()])
        elif op < 41:
            add(["SMEMBERS", K()], "sort")
        elif op < 46:
            k = K()
            r = rng.randrange(4)
            if r == 0:
                # a count covering the whole set: deterministic, the key goes
                add(["SPOP", k, "1000"], "sort")
            else:
                if r == 1:
                    add(["SPOP", k], "type")
                else:
                    add(["SPOP", k, rng.choice(counts)], "len")
                add(["SCARD", k])
                # (no OBJECT ENCODING: a rebuilt rest's encoding depends on what was left)
                add(["DEL", k])
        elif op < 51:
            k = K()
            r = rng.randrange(4)
            if r == 0:
                add(["SRANDMEMBER", k], "type")
            elif r == 1:
                add(["SRANDMEMBER", k, "1000"], "sort")
            else:
                add(["SRANDMEMBER", k, rng.choice(counts)], "len")
        elif op < 56:
            ks = KS(2, 2)
            add(["SMOVE", ks[0], ks[1], M()])
        elif op < 63:
            add([rng.choice(["SINTER", "SUNION", "SDIFF"])] + KS(), "sort")
        elif op < 70:
            add([rng.choice(["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"])] + KS(2, 4))
        elif op < 73:
            ks = KS()
            a = ["SINTERCARD", str(len(ks))] + ks
            r = rng.randrange(6)
            if r == 0:
                a += ["LIMIT", rng.choice(["0", "1", "2", "5", "-1", "x"])]
            elif r == 1:
                a[1] = rng.choice(["0", "-1", str(len(ks) + 1), "abc"])
            add(a)
        elif op < 77:
            k = K()
            r = rng.randrange(4)
            if r == 0:
                add(["SSCAN", k, "0", "MATCH", M(), "COUNT", "1000"])
            elif r == 1:
                add(["SSCAN", k, "0"], "shape")
            elif r == 2:
                add(["SSCAN", k, rng.choice(["0", "abc", "-1"]), "COUNT", rng.choice(["0", "x", "5"])],
                    "shape")
            else:
                add(["SSCAN", k, "0", rng.choice(["TYPE", "FOO", "MATCH"])], "shape")
        elif op < 83:
            add(["OBJECT", "ENCODING", K()])
        elif op < 85:
            add(["DEL"] + KS(1, 2))
        elif op < 87:
            add(["EXPIRE", K(), str(rng.choice([1000, 5000, 100000]))])
            add(["TTL", K()], "approx:3")
        elif op < 89:
            add(["SET", K(), rng.choice(["v", "12"])])
        elif op < 91:
            ks = KS(2, 2)
            add(["RENAME", ks[0], ks[1]])
        elif op < 93:
            add(["CONFIG", "SET", "set-max-intset-entries", rng.choice(["0", "1", "3", "5", "8", "512"])])
        elif op < 94:
            add(["SCAN", "0", "TYPE", "set"], "scanall")
        elif op < 96:
            # arity errors
            c = rng.choice(["SADD", "SREM", "SISMEMBER", "SCARD", "SMOVE", "SINTERSTORE", "SPOP",
                            "SRANDMEMBER", "SSCAN"])
            add([c])
        else:
            add([rng.choice(["SPOP", "SRANDMEMBER"]), K(), "1", "2"])

    add(["CONFIG", "SET", "set-max-intset-entries", "512"])
    for k in allkeys:
        add(["TYPE", k])
        add(["SMEMBERS", k], "sort")
        add(["OBJECT", "ENCODING", k])
    return out
