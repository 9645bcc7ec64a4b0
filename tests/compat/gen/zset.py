"""zset: seeded random sorted set commands for diff.py (--gen zset).

lines(rng, n, keys) returns (marker, args) pairs: every sorted set command
and option (ZADD [NX XX GT LT CH INCR] ZINCRBY ZREM ZSCORE ZMSCORE ZCARD
ZCOUNT ZLEXCOUNT ZRANK ZREVRANK, ZRANGE [BYSCORE BYLEX REV LIMIT WITHSCORES]
and its older forms, ZRANGESTORE, ZPOPMIN ZPOPMAX ZMPOP, ZRANDMEMBER,
ZREMRANGEBY*, ZUNION ZINTER ZDIFF and their STORE forms with WEIGHTS and
AGGREGATE, ZINTERCARD, ZSCAN), valid and invalid arguments, mixed with DEL,
EXPIRE, TTL, TYPE, EXISTS, RENAME, OBJECT ENCODING, string writes and SADD
(sets are sources of the set algebra) on the same keys, over keys spread
across shards.  The listpack thresholds are lowered and raised now and then
(both servers get the same CONFIG SET), so sorted sets cross listpack ->
skiplist at random points; they are put back to Redis's defaults at the end.
RESP3 is switched on and off (HELLO), so nested WITHSCORES pairs and doubles
are compared too.

Multi-key commands take keys sharing a hash tag half the time (one shard),
else any keys (several shards: the dispatcher's ROUTE_GATHER).

Lex ranges are defined only when every member has the same score (else the
answer depends on a skiplist's random levels, in Redis too): lex commands use
their own keys (LEXKEYS), which only ever hold score 0; on the other keys a
lex range is always "- +".

Everything else is deterministic except: ZRANDMEMBER with a count below the size
(compared by length; a count of 1000 covers every set and is exact), and
ZSCAN of a skiplist (asked with a MATCH naming one member and a COUNT
that covers the set, which is exact in both encodings, or iterated to the
end and compared as a set of pairs: !scanall).
"""


def lines(rng, n, keys):
    members = ["a", "b", "c", "d", "e", "f", "g", "h", "aa", "ab", "", "m\x00n", "10", "-1",
               "member-%s" % ("x" * 20)]
    long_member = "long-member-%s" % ("y" * 70)  # over zset-max-listpack-value's default
    scores = ["0", "1", "2", "3", "-1", "-2.5", "1.5", "10", "100", "0.1", "1e3", "-0",
              "inf", "-inf", "+inf", "3.0", "1e17", "123456789.125"]
    bad_scores = ["abc", "nan", "", " 1", "1e400", "1.5.2"]
    bounds = ["-inf", "+inf", "inf", "0", "1", "2", "(1", "(2", "3", "(3", "10", "-1", "(-inf",
              "1.5", "(0.1", "100"]
    lexb = ["-", "+", "[a", "(a", "[b", "(c", "[d", "(e", "[h", "[aa", "(ab", "[", "("]
    ints = ["0", "1", "-1", "2", "-2", "3", "5", "-5", "10", "-10", "100"]
    # keys sharing a hash tag live on one shard
    groups = {}
    for k in keys:
        if "{" in k and "}" in k.split("{", 1)[1]:
            tag = k.split("{", 1)[1].split("}", 1)[0]
            if tag:
                groups.setdefault(tag, []).append(k)
    groups = [g for g in groups.values() if len(g) > 1]

    def K():
        return rng.choice(keys)

    def M():
        return long_member if rng.randrange(120) == 0 else rng.choice(members)

    def S():
        return rng.choice(bad_scores) if rng.randrange(40) == 0 else rng.choice(scores)

    def B():
        return rng.choice(["abc", "nan", "(x"]) if rng.randrange(40) == 0 else rng.choice(bounds)

    def L():
        return rng.choice(["a", "+x", ""]) if rng.randrange(40) == 0 else rng.choice(lexb)

    lexkeys = ["lex{a}", "lex{b}", "{lex}1", "{lex}2", "lex3"]

    def LK():
        return rng.choice(lexkeys)

    def lex_op():
        """an operation on a key that only ever holds score-0 members"""
        r = rng.randrange(12)
        if r < 4:
            add(["ZADD", LK()] + (["NX"] if rng.randrange(5) == 0 else []) +
                sum([["0", M()] for _ in range(rng.randrange(1, 4))], []))
        elif r < 6:
            a = ["ZRANGE", LK(), L(), L(), "BYLEX"]
            if rng.randrange(3) == 0:
                a.append("REV")
            if rng.randrange(3) == 0:
                a += ["LIMIT", I(), I()]
            add(a)
        elif r == 6:
            add([rng.choice(["ZRANGEBYLEX", "ZREVRANGEBYLEX"]), LK(), L(), L()] +
                (["LIMIT", I(), I()] if rng.randrange(3) == 0 else []))
        elif r == 7:
            add(["ZLEXCOUNT", LK(), L(), L()])
        elif r == 8:
            add(["ZREMRANGEBYLEX", LK(), L(), L()])
        elif r == 9:
            add(["ZREM", LK(), M()])
        elif r == 10:
            tag = rng.choice([["{lex}1", "{lex}2"], lexkeys[:2], lexkeys])
            add(["ZRANGESTORE", rng.choice(tag), rng.choice(tag), L(), L(), "BYLEX"] +
                (["REV"] if rng.randrange(3) == 0 else []))
        else:
            add(["ZRANGE", LK(), "0", "-1", "WITHSCORES"])

    def I():
        return rng.choice(["abc", "1.5", ""]) if rng.randrange(40) == 0 else rng.choice(ints)

    def KS(k):
        """k keys: one shard, or several"""
        if groups and rng.randrange(2):
            g = rng.choice(groups)
            return [rng.choice(g) for _ in range(k)]
        return [K() for _ in range(k)]

    out = []
    resp = [2]

    def add(args, m="exact"):
        out.append((m, [a.encode() if isinstance(a, str) else a for a in args]))

    def range_opts(a, kind, store=False):
        """the options of ZRANGE after key min max"""
        if kind == "score":
            a.append("BYSCORE")
        elif kind == "lex":
            a.append("BYLEX")
        if rng.randrange(3) == 0:
            a.append("REV")
        if kind != "rank" and rng.randrange(3) == 0:
            a += ["LIMIT", I(), I()]
        if not store and kind != "lex" and rng.randrange(2) == 0:
            a.append("WITHSCORES")
        if rng.randrange(60) == 0:
            rng.shuffle(a[4:])
        if rng.randrange(80) == 0:
            a.append(rng.choice(["WITHSCORES", "LIMIT", "FOO", "BYSCORE"]))

    for _ in range(n):
        op = rng.randrange(100)
        if rng.randrange(8) == 0:
            lex_op()
        elif op < 18:
            a = ["ZADD", K()]
            opts = []
            for o in ("NX", "XX", "GT", "LT", "CH", "INCR"):
                if rng.randrange(9) == 0:
                    opts.append(o)
            rng.shuffle(opts)
            a += opts
            cnt = 1 if "INCR" in opts and rng.randrange(6) else rng.randrange(1, 6)
            for _ in range(cnt):
                a += [S(), M()]
            if rng.randrange(40) == 0:
                a.append(S())  # odd: syntax error
            add(a)
        elif op < 22:
            add(["ZINCRBY", K(), S(), M()])
        elif op < 26:
            add(["ZREM", K()] + [M() for _ in range(rng.randrange(1, 4))])
        elif op < 30:
            c = rng.choice(["ZSCORE", "ZRANK", "ZREVRANK", "ZCARD"])
            add([c, K()] + ([] if c == "ZCARD" else [M()]))
        elif op < 32:
            add(["ZMSCORE", K()] + [M() for _ in range(rng.randrange(1, 4))])
        elif op < 35:
            add(["ZCOUNT", K(), B(), B()])
        elif op < 37:
            add(["ZLEXCOUNT", K(), "-", "+"])
        elif op < 47:
            kind = rng.choice(["rank", "rank", "score", "lex"])
            if kind == "rank":
                a = ["ZRANGE", K(), I(), I()]
            elif kind == "score":
                a = ["ZRANGE", K(), B(), B()]
            else:
                a = ["ZRANGE", K()] + (["-", "+"] if rng.randrange(4) else ["+", "-"])
            range_opts(a, kind)
            add(a)
        elif op < 53:
            c = rng.choice(["ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "ZRANGEBYLEX", "ZREVRANGEBYLEX",
                            "ZREVRANGE"])
            if c == "ZREVRANGE":
                a = [c, K(), I(), I()]
                if rng.randrange(2):
                    a.append("WITHSCORES")
            elif "LEX" in c:
                a = [c, K()] + (["-", "+"] if c == "ZRANGEBYLEX" else ["+", "-"])
                if rng.randrange(3) == 0:
                    a += ["LIMIT", I(), I()]
            else:
                a = [c, K(), B(), B()]
                if rng.randrange(2):
                    a.append("WITHSCORES")
                if rng.randrange(3) == 0:
                    a += ["LIMIT", I(), I()]
            add(a)
        elif op < 57:
            dst, src = KS(2)
            kind = rng.choice(["rank", "score", "lex"])
            if kind == "rank":
                a = ["ZRANGESTORE", dst, src, I(), I()]
            elif kind == "score":
                a = ["ZRANGESTORE", dst, src, B(), B()]
            else:
                a = ["ZRANGESTORE", dst, src, "-", "+"]
            b = [a[0], a[2], a[3], a[4]]
            range_opts(b, kind, store=True)
            add(a + b[4:])
        elif op < 62:
            c = rng.choice(["ZPOPMIN", "ZPOPMAX"])
            a = [c, K()]
            if rng.randrange(2):
                a.append(rng.choice(["1", "2", "3", "0", "10", "-1", "abc"]))
            add(a)
        elif op < 64:
            k = rng.randrange(1, 4)
            a = ["ZMPOP", str(k)] + KS(k) + [rng.choice(["MIN", "MAX", "min", "max"])]
            if rng.randrange(2):
                a += ["COUNT", rng.choice(["1", "2", "5", "0", "abc"])]
            if rng.randrange(40) == 0:
                a[1] = rng.choice(["0", "-1", "abc", "9"])
            add(a)
        elif op < 67:
            r = rng.randrange(6)
            if r == 0:
                add(["ZRANDMEMBER", K()], "type")
            elif r == 1:
                add(["ZRANDMEMBER", K(), "1000"] + (["WITHSCORES"] if rng.randrange(2) else []))
            elif r == 2:
                add(["ZRANDMEMBER", K(), rng.choice(["-3", "-1", "2", "1", "-10"])] +
                    (["WITHSCORES"] if rng.randrange(2) else []), "len")
            elif r == 3:
                add(["ZRANDMEMBER", K(), "0"])
            else:
                add(["ZRANDMEMBER", K(), "1000", "WITHSCORES"])
        elif op < 71:
            c = rng.choice(["ZREMRANGEBYRANK", "ZREMRANGEBYSCORE", "ZREMRANGEBYLEX"])
            if c == "ZREMRANGEBYRANK":
                add([c, K(), I(), I()])
            elif c == "ZREMRANGEBYSCORE":
                add([c, K(), B(), B()])
            else:
                add([c, K(), "-", "+"])
        elif op < 80:
            c = rng.choice(["ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE",
                            "ZINTERCARD"])
            k = rng.randrange(1, 4)
            ks = KS(k + 1)
            a = [c]
            if c.endswith("STORE"):
                a.append(ks[k])
            a += [str(k)] + ks[:k]
            if c != "ZINTERCARD" and c != "ZDIFF" and c != "ZDIFFSTORE" and rng.randrange(3) == 0:
                a += ["WEIGHTS"] + [rng.choice(["1", "2", "-1", "0.5", "0", "inf", "x"][:6 if rng.randrange(30) else 7])
                                    for _ in range(k)]
            if c != "ZINTERCARD" and c != "ZDIFF" and c != "ZDIFFSTORE" and rng.randrange(3) == 0:
                a += ["AGGREGATE", rng.choice(["SUM", "MIN", "MAX", "min"] + (["AVG"] if rng.randrange(20) == 0 else []))]
            if not c.endswith("STORE") and c != "ZINTERCARD" and rng.randrange(2):
                a.append("WITHSCORES")
            if c == "ZINTERCARD" and rng.randrange(2):
                a += ["LIMIT", rng.choice(["0", "1", "2", "-1"])]
            if rng.randrange(50) == 0:
                a[2 if c.endswith("STORE") else 1] = rng.choice(["0", "-1", "abc", "9"])
            add(a)
        elif op < 82:
            m = M()
            if "*" in m or "?" in m or "[" in m or "\\" in m:
                m = "a"
            if rng.randrange(2):
                add(["ZSCAN", K(), "0", "MATCH", m, "COUNT", "1000"])
            else:
                a = ["ZSCAN", K(), "0"]
                if rng.randrange(2):
                    a += ["MATCH", rng.choice(["*", "a*", "*b*", "?", "[a-c]*"])]
                if rng.randrange(2):
                    a += ["COUNT", rng.choice(["1", "2", "5", "100"])]
                add(a, "scanall")
        elif op < 84:
            add(["SADD", K()] + [M() for _ in range(rng.randrange(1, 4))])
        elif op < 86:
            add(["DEL", K()])
        elif op < 87:
            add(["SET", K(), "v"])
        elif op < 89:
            add(["EXPIRE", K(), str(rng.choice([100, 1000, 10000]))])
        elif op < 90:
            add(["TTL", K()], "approx:3")
        elif op < 92:
            add([rng.choice(["TYPE", "EXISTS"]), K()])
        elif op < 95:
            add(["OBJECT", "ENCODING", K()])
        elif op < 96:
            add([rng.choice(["RENAME", "RENAMENX"]), K(), K()])
        elif op < 98:
            name = rng.choice(["zset-max-listpack-entries", "zset-max-ziplist-entries",
                               "zset-max-listpack-value", "zset-max-ziplist-value"])
            val = rng.choice(["0", "1", "2", "3", "4", "8", "128"]) if "entries" in name else \
                rng.choice(["0", "1", "2", "5", "64"])
            add(["CONFIG", "SET", name, val])
        else:
            resp[0] = 5 - resp[0]
            add(["HELLO", str(resp[0])], "shape")
    add(["HELLO", "2"], "shape")
    add(["CONFIG", "SET", "zset-max-listpack-entries", "128"])
    add(["CONFIG", "SET", "zset-max-listpack-value", "64"])
    for k in keys + lexkeys:
        add(["TYPE", k])
        add(["ZRANGE", k, "0", "-1", "WITHSCORES"])
        add(["ZCARD", k])
        add(["OBJECT", "ENCODING", k])
    return out
