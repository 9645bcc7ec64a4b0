"""copy_sort: seeded random COPY, LCS, SORT and SORT_RO for diff.py (--gen copy_sort).

lines(rng, n, keys) returns (marker, args) pairs over keys spread across
shards: lists, sets, sorted sets, hashes and strings written at random, COPY
between any two keys (other shards, DB 1, REPLACE, the same key, bad
options), LCS of any two keys with every option (and WRONGTYPE), and SORT /
SORT_RO with BY and GET patterns whose keys live on any shard (weights w:*,
names n:*, hashes h:*->f, and {tag}ged ones), LIMIT, ALPHA, DESC and STORE
into any key; the stored lists, the copies and their TTLs are read back.

OBJECT ENCODING is compared by type only: Redis converts a sorted set SORT
reads to a skiplist, percore too where SORT runs on the set's shard, not
where it runs on a copy (which would be written back as a change).
Orders that are a hash table's are not compared exactly, nor stored: a set
read BY nosort (compared sorted, or by shape), and ALPHA BY values that tie
(equal or missing: a set's table order, or Redis's partial quicksort under
LIMIT), by shape.
"""


def lines(rng, n, keys):
    tagged = ["{cs}a", "{cs}b", "{cs}c"]
    allkeys = keys + tagged
    elems = [str(i) for i in range(-3, 12)] + ["a", "b", "x y", "1.5", "abc", "01"]
    strs = ["", "ohmytext", "mynewtext", "abcabc", "12345", "a\x00b", "x" * 50]
    pats = ["w:*", "n:*", "h:*->f", "{cs}w:*", "nosort", "w:*->f", "n*", "*"]
    gets = ["#", "n:*", "w:*", "h:*->f", "{cs}n:*", "h:*->g", "nokey"]

    def K():
        return rng.choice(allkeys)

    out = []

    def add(args, m="exact"):
        out.append((m, [a.encode() if isinstance(a, str) else a for a in args]))

    def members(lo=1, hi=8):
        return [rng.choice(elems) for _ in range(rng.randrange(lo, hi + 1))]

    for _ in range(n):
        op = rng.randrange(100)
        if op < 8:
            add(["RPUSH", K()] + members())
        elif op < 14:
            add(["SADD", K()] + members())
        elif op < 19:
            k = K()
            args = ["ZADD", k]
            for m in members():
                args += [str(rng.randrange(-3, 4)), m]
            add(args)
        elif op < 23:
            add(["SET", K(), rng.choice(strs)])
        elif op < 29:
            e = rng.choice(elems)
            r = rng.randrange(4)
            if r == 0:
                add(["SET", "w:" + e, rng.choice(["1", "2", "3", "-1", "2.5", "abc", "10"])])
            elif r == 1:
                add(["SET", "n:" + e, rng.choice(["alpha", "beta", "gamma", "b", "a"])])
            elif r == 2:
                add(["HSET", "h:" + e, "f", str(rng.randrange(-5, 20)), "g", rng.choice(["p", "q"])])
            else:
                add(["SET", "{cs}" + rng.choice(["w:", "n:"]) + e, str(rng.randrange(10))])
        elif op < 43:
            args = ["COPY", K(), K()]
            r = rng.randrange(8)
            if r == 0:
                args += ["DB", rng.choice(["1", "0", "x", "16", "-1"])]
            elif r == 1:
                args += ["DB", "1", "REPLACE"]
            elif r < 5:
                args.append("REPLACE")
            elif r == 5:
                args.append(rng.choice(["FOO", "DB"]))
            add(args)
            add(["TYPE", args[2]])
        elif op < 46:
            add(["SELECT", "1"])
            k = K()
            add(["TYPE", k])
            add(["COPY", k, K(), "DB", "0", "REPLACE"])
            add(["SELECT", "0"])
        elif op < 56:
            args = ["LCS", K(), K()]
            for _ in range(rng.randrange(0, 3)):
                r = rng.randrange(5)
                if r == 0:
                    args.append("LEN")
                elif r == 1:
                    args.append("IDX")
                elif r == 2:
                    args.append("WITHMATCHLEN")
                elif r == 3:
                    args += ["MINMATCHLEN", rng.choice(["0", "2", "-1", "x"])]
                else:
                    args.append("FOO")
            add(args)
        elif op < 90:
            k = K()
            ro = rng.randrange(5) == 0
            args = ["SORT_RO" if ro else "SORT", k]
            by = rng.choice(pats) if rng.randrange(2) else None
            alpha = rng.randrange(3) == 0
            limit = rng.randrange(3) == 0
            ngets = rng.randrange(0, 3)
            nosort = by is not None and "*" not in by
            # what Redis's order leaves open (the key's type is the servers' to know): a set read in
            # table order (BY nosort), ALPHA BY values that tie; such a line is not stored (the two
            # servers' keys would part) and is compared sorted (the elements alone) or by shape
            uncertain = nosort or (alpha and by is not None)
            store = None if ro or uncertain or rng.randrange(3) else K()
            if by:
                args += ["BY", by]
            if alpha:
                args.append("ALPHA")
            if rng.randrange(2):
                args.append("DESC")
            if limit:
                args += ["LIMIT", str(rng.randrange(-1, 5)), str(rng.randrange(-1, 6))]
            for _ in range(ngets):
                args += ["GET", rng.choice(gets)]
            if store:
                args += ["STORE", store]
            if not uncertain:
                add(args)
            else:
                add(args, "sort" if nosort and not limit and not ngets else "shape")
            if store:
                add(["LRANGE", store, "0", "-1"])
        elif op < 93:
            add(["PEXPIREAT", K(), str(4102444800000 + rng.randrange(1000))])
            add(["PEXPIRETIME", K()])
        elif op < 96:
            add(["DEL", K()])
        else:  # a sorted set SORT read on copies (its keys on several shards) keeps its encoding here
            add(["OBJECT", "ENCODING", K()], "type")

    for k in allkeys:
        add(["TYPE", k])
        add(["PEXPIRETIME", k])
    add(["SELECT", "1"])
    for k in allkeys:
        add(["TYPE", k])
    add(["FLUSHDB"])
    add(["SELECT", "0"])
    return out
