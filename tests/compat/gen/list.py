"""list: seeded random list commands for diff.py (--gen list).

lines(rng, n, keys) returns (marker, args) pairs: every list command and
option (LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP [count] LLEN LRANGE LINDEX LSET
LREM LTRIM LINSERT LPOS [RANK COUNT MAXLEN] LMOVE RPOPLPUSH LMPOP), valid and
invalid arguments, mixed with DEL, EXPIRE, TTL, TYPE, EXISTS, RENAME, OBJECT
ENCODING and string writes on the same keys (so WRONGTYPE comes up), over
keys spread across shards.  list-max-listpack-size is changed now and then
(both servers get the same CONFIG SET), among entry counts, 0 and byte sizes,
so lists span one node or many at random points; it is put back to Redis's
default (-2) at the end.  Bulk pushes make lists long enough for that.

LMOVE, RPOPLPUSH and LMPOP name several keys: half the time keys that share
a hash tag (one shard), else any keys (several shards: the dispatcher's
ROUTE_GATHER) unless CROSS_SHARD is off.  Every list reply is
deterministic, so everything but TTL is compared exactly.
"""

CROSS_SHARD = True


def lines(rng, n, keys):
    vals = ["a", "b", "c", "", "0", "1", "-1", "x y", "a\x00b", "12345678901234567890"]
    long_val = "L" * 700  # a few of these fill a 4 KB node
    ints = ["0", "1", "-1", "2", "-2", "3", "5", "-5", "10", "100", "-100",
            "9223372036854775807", "-9223372036854775808", "abc", "1.5", ""]
    fills = ["-2", "-1", "-5", "1", "2", "3", "4", "8", "0", "128", "-2"]
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

    def V():
        return long_val if rng.randrange(40) == 0 else rng.choice(vals)

    def I(lo=-12, hi=12):
        r = rng.randrange(10)
        if r == 0:
            return rng.choice(ints)
        return str(rng.randrange(lo, hi))

    def KK():
        """two keys for one command: one shard, or (CROSS_SHARD) maybe several"""
        if not groups or (CROSS_SHARD and rng.randrange(2)):
            return K(), K()
        g = rng.choice(groups)
        return rng.choice(g), rng.choice(g)

    def side():
        return rng.choice(["LEFT", "RIGHT", "left", "Right"] + (["UP"] if rng.randrange(30) == 0 else []))

    out = []

    def add(args, m="exact"):
        out.append((m, [a.encode() if isinstance(a, str) else a for a in args]))

    for _ in range(n):
        op = rng.randrange(100)
        if op < 14:
            c = rng.choice(["LPUSH", "RPUSH"])
            cnt = rng.randrange(1, 5) if rng.randrange(6) else rng.randrange(10, 40)
            add([c, K()] + [V() for _ in range(cnt)])
        elif op < 17:
            add([rng.choice(["LPUSHX", "RPUSHX"]), K()] + [V() for _ in range(rng.randrange(1, 4))])
        elif op < 27:
            a = [rng.choice(["LPOP", "RPOP"]), K()]
            r = rng.randrange(4)
            if r == 1:
                a.append(str(rng.randrange(0, 6)))
            elif r == 2:
                a.append(rng.choice(ints))
            add(a)
        elif op < 30:
            add(["LLEN", K()])
        elif op < 39:
            add(["LRANGE", K(), I(), I(-5, 60)])
        elif op < 43:
            add(["LINDEX", K(), I()])
        elif op < 47:
            add(["LSET", K(), I(), V()])
        elif op < 51:
            add(["LREM", K(), I(-3, 4), V()])
        elif op < 54:
            add(["LTRIM", K(), I(-4, 4), I(-4, 40)])
        elif op < 58:
            w = rng.choice(["BEFORE", "AFTER", "before", "after"] + (["MIDDLE"] if rng.randrange(20) == 0 else []))
            add(["LINSERT", K(), w, V(), V()])
        elif op < 64:
            a = ["LPOS", K(), V()]
            for _ in range(rng.randrange(0, 3)):
                o = rng.choice(["RANK", "COUNT", "MAXLEN"])
                if o == "RANK":
                    a += [o, rng.choice(["1", "2", "-1", "-2", "3", "0", "abc",
                                         "-9223372036854775808"])]
                elif o == "COUNT":
                    a += [o, rng.choice(["0", "1", "2", "5", "-1"])]
                else:
                    a += [o, rng.choice(["0", "1", "3", "10", "-1"])]
            if rng.randrange(25) == 0:
                a.append("BOGUS")
            add(a)
        elif op < 70:
            s, d = KK()
            if rng.randrange(3) == 0:
                add(["RPOPLPUSH", s, d])
            else:
                add(["LMOVE", s, d, side(), side()])
        elif op < 74:
            s, d = KK()
            ks = [s] if rng.randrange(2) else [s, d]
            a = ["LMPOP", str(len(ks))] + ks + [side()]
            r = rng.randrange(4)
            if r == 1:
                a += ["COUNT", str(rng.randrange(1, 8))]
            elif r == 2:
                a += ["COUNT", rng.choice(["0", "-1", "abc"])]
            elif r == 3 and rng.randrange(4) == 0:
                a[1] = rng.choice(["0", "-1", "abc", "5"])
            add(a)
        elif op < 77:
            add(["DEL", K()])
        elif op < 79:
            add(["SET", K(), V()])
        elif op < 82:
            add(["EXPIRE", K(), str(rng.choice([100, 1000, 10000]))])
        elif op < 84:
            add(["TTL", K()], "approx:3")
        elif op < 87:
            add(["TYPE", K()])
        elif op < 89:
            add(["EXISTS", K()])
        elif op < 92:
            add(["OBJECT", "ENCODING", K()])
        elif op < 94:
            add([rng.choice(["RENAME", "RENAMENX"]), K(), K()])
        elif op < 96:
            add(["CONFIG", "SET", rng.choice(["list-max-listpack-size", "list-max-ziplist-size"]),
                 rng.choice(fills)])
        else:
            # a whole list, every so often
            add(["LRANGE", K(), "0", "-1"])
    add(["CONFIG", "SET", "list-max-listpack-size", "-2"])
    for k in keys:
        add(["TYPE", k])
        add(["LRANGE", k, "0", "-1"])
        add(["LLEN", k])
    return out
