"""stream: seeded random stream commands for diff.py (--gen stream).

lines(rng, n, keys) returns (marker, args) pairs: XADD (explicit IDs, `ms-*`,
NOMKSTREAM, MAXLEN/MINID with `=` and `~`, LIMIT), XRANGE/XREVRANGE (COUNT,
exclusive bounds, `-`/`+`, bad IDs), XLEN, XDEL, XTRIM, XSETID
(ENTRIESADDED, MAXDELETEDID), XREAD (COUNT, `$`, several keys, of several
shards and of one), XINFO STREAM [FULL], the group commands (XGROUP, XREADGROUP
with `>`, history and NOACK, XACK, XPENDING, XCLAIM with its options,
XAUTOCLAIM, XINFO GROUPS/CONSUMERS; idle times !approx) mixed with DEL, EXPIRE, RENAME, TYPE,
OBJECT ENCODING and string writes on the same keys (so WRONGTYPE comes up).
IDs are drawn near a moving clock so that most are new and some are not
(Redis's errors); `*` is never used (the clock is each server's).
stream-node-max-entries and -bytes are lowered and raised now and then (both
servers get the same CONFIG SET), so `~` trims at node boundaries of
different sizes; they are put back to Redis's defaults at the end.  XINFO STREAM is compared by its
shape (radix-tree-nodes counts Redis's radix tree) and FULL's entries by
XRANGE.
"""


def lines(rng, n, keys):
    tagged = ["{xs}a", "{xs}b", "{xs}c"]
    allkeys = keys + tagged
    clock = [1]
    fields = ["f", "g", "h", "1", "-5", "x y", "", "a\x00b"]
    values = ["v", "1", "-1", "12345678901", "", "w" * 50, "0x10", "128", "-4097", "32768", "8388608", "w" * 130]

    def K():
        return rng.choice(allkeys)

    def ID():
        r = rng.randrange(10)
        if r < 6:
            clock[0] += rng.randrange(0, 3)
            return "%d-%d" % (clock[0], rng.randrange(0, 3))
        if r < 8:
            return "%d-*" % max(0, clock[0] - rng.randrange(0, 3))
        if r < 9:
            return str(max(0, clock[0] - rng.randrange(0, 5)))
        return rng.choice(["0-0", "0", "0-*", "abc", "-", "+", "1-x", "18446744073709551615-18446744073709551615"])

    def RID():
        r = rng.randrange(10)
        if r < 2:
            return rng.choice(["-", "+"])
        v = "%d-%d" % (max(0, clock[0] - rng.randrange(0, 40)), rng.randrange(0, 3))
        if r < 5:
            return v.split("-")[0]
        if r < 7:
            return "(" + v
        if r < 8:
            return rng.choice(["abc", "(", "(-", "(+", "1--1", "-1"])
        return v

    def TRIM():
        how = rng.choice(["MAXLEN", "MINID"])
        out = [how]
        if rng.randrange(2):
            out.append(rng.choice(["~", "="]))
        out.append(str(rng.randrange(0, 20)) if how == "MAXLEN" else str(max(0, clock[0] - rng.randrange(0, 30))))
        if "~" in out and rng.randrange(3) == 0:
            out += ["LIMIT", str(rng.randrange(0, 30))]
        if rng.randrange(20) == 0:
            out += ["LIMIT", "5"]
        return out

    out = []

    def add(args, m="exact"):
        out.append((m, [a.encode() if isinstance(a, str) else a for a in args]))

    def G():
        return rng.choice(["g1", "g2", "g3"])

    def C():
        return rng.choice(["c1", "c2", "c3"])

    def PID():
        """an ID for the group commands: a recent entry's, or one of RID's"""
        return rng.choice(["%d-%d" % (max(0, clock[0] - rng.randrange(0, 15)), rng.randrange(0, 3)), RID().lstrip("(")])

    def group_command():
        r = rng.randrange(30)
        if r < 4:
            args = ["XGROUP", "CREATE", K(), G(), rng.choice(["$", "0", PID()])]
            if rng.randrange(3) == 0:
                args.append("MKSTREAM")
            if rng.randrange(5) == 0:
                args += ["ENTRIESREAD", rng.choice(["-1", "0", "3", "-2"])]
            add(args, "dirty")
        elif r < 5:
            add(["XGROUP", "SETID", K(), G(), rng.choice(["$", "0", PID()])] +
                (["ENTRIESREAD", rng.choice(["-1", "2", "x"])] if rng.randrange(2) else []), "dirty")
        elif r < 6:
            add(["XGROUP", rng.choice(["CREATECONSUMER", "DELCONSUMER"]), K(), G(), C()], "dirty")
        elif r < 7:
            add(["XGROUP", "DESTROY", K(), G()], "dirty")
        elif r < 14:
            ks = [K() for _ in range(rng.randrange(1, 3))] if rng.randrange(2) else [rng.choice(tagged)]
            args = ["XREADGROUP", "GROUP", G(), C()]
            if rng.randrange(2):
                args += ["COUNT", rng.choice(["1", "2", "0", "-1"])]
            if rng.randrange(5) == 0:
                args.append("NOACK")
            add(args + ["STREAMS"] + ks + [rng.choice([">", ">", ">", "0", PID()]) for _ in ks], "dirty")
        elif r < 17:
            add(["XACK", K(), G()] + [PID() for _ in range(rng.randrange(1, 4))], "dirty")
        elif r < 20:
            k, g = K(), G()
            if rng.randrange(2):
                add(["XPENDING", k, g])
            else:
                args = ["XPENDING", k, g] + (["IDLE", rng.choice(["0", "1", "100000"])] if rng.randrange(3) == 0 else [])
                args += [RID(), RID(), rng.choice(["10", "1", "0", "-1"])] + ([C()] if rng.randrange(2) else [])
                add(args, "approx:1000")
        elif r < 23:
            args = ["XCLAIM", K(), G(), C(), rng.choice(["0", "0", "100000", "-1"])]
            args += [PID() for _ in range(rng.randrange(1, 4))]
            for opt in rng.sample([["JUSTID"], ["FORCE"], ["RETRYCOUNT", "3"], ["IDLE", "10"], ["TIME", "1"],
                                   ["LASTID", PID()]], rng.randrange(0, 3)):
                args += opt
            add(args, "dirty")
        elif r < 26:
            args = ["XAUTOCLAIM", K(), G(), C(), rng.choice(["0", "0", "100000"]), rng.choice(["0", "-", PID()])]
            if rng.randrange(2):
                args += ["COUNT", rng.choice(["1", "2", "10", "0"])]
            if rng.randrange(3) == 0:
                args.append("JUSTID")
            add(args, "dirty")
        elif r < 28:
            add(["XINFO", "GROUPS", K()])
        elif r < 29:
            add(["XINFO", "CONSUMERS", K(), G()], "approx:1000")
        else:
            add(["XINFO", "STREAM", K(), "FULL"], "shape")

    for _ in range(n):
        op = rng.randrange(130)
        if op >= 100:
            group_command()
        elif op < 30:
            args = ["XADD", K()]
            if rng.randrange(10) == 0:
                args.append("NOMKSTREAM")
            if rng.randrange(4) == 0:
                args += TRIM()
            args.append(ID())
            for _ in range(rng.randrange(1, 4)):
                args += [rng.choice(fields), rng.choice(values)]
            if rng.randrange(30) == 0:
                args.pop()
            add(args, "dirty")
        elif op < 42:
            c = rng.choice(["XRANGE", "XREVRANGE"])
            a, b = RID(), RID()
            args = [c, K(), a, b]
            if rng.randrange(2):
                args += ["COUNT", rng.choice(["0", "1", "2", "5", "-1", "x"])]
            add(args)
        elif op < 46:
            add([rng.choice(["XLEN", "TYPE", "EXISTS"]), K()])
        elif op < 53:
            add(["XDEL", K()] + [RID().lstrip("(") for _ in range(rng.randrange(1, 4))], "dirty")
        elif op < 59:
            add(["XTRIM", K()] + TRIM(), "dirty")
        elif op < 63:
            args = ["XSETID", K(), "%d-%d" % (clock[0] + rng.randrange(-3, 4), rng.randrange(0, 3))]
            if rng.randrange(2):
                args += ["ENTRIESADDED", str(rng.randrange(-1, 60))]
            if rng.randrange(2):
                args += ["MAXDELETEDID", "%d-0" % max(0, clock[0] + rng.randrange(-5, 2))]
            add(args, "dirty")
        elif op < 73:
            ks = [K() for _ in range(rng.randrange(1, 4))] if rng.randrange(2) else \
                [rng.choice(tagged) for _ in range(rng.randrange(1, 3))]
            args = ["XREAD"]
            if rng.randrange(2):
                args += ["COUNT", rng.choice(["1", "2", "0", "-1"])]
            ids = [rng.choice(["$", "0", "0-0", RID().lstrip("(")]) for _ in ks]
            add(args + ["STREAMS"] + ks + ids)
        elif op < 77:
            k = K()
            r = rng.randrange(3)
            if r == 0:
                add(["XINFO", "STREAM", k], "shape")
            elif r == 1:
                add(["XINFO", "STREAM", k, "FULL", "COUNT", "0"], "shape")
            else:
                add(["XINFO", rng.choice(["GROUPS", "HELP", "FOO"]), k])
        elif op < 81:
            add(["OBJECT", "ENCODING", K()])
        elif op < 84:
            add(["DEL", K()])
        elif op < 86:
            add(["EXPIRE", K(), str(rng.choice([1000, 5000, 100000]))])
            add(["TTL", K()], "approx:3")
        elif op < 88:
            add(["SET", K(), "v"])
        elif op < 91:
            add(["RENAME", K(), K()])
        elif op < 94:
            if rng.randrange(2):
                add(["CONFIG", "SET", "stream-node-max-entries", rng.choice(["0", "1", "2", "3", "5", "100"])])
            else:
                add(["CONFIG", "SET", "stream-node-max-bytes", rng.choice(["0", "1", "60", "120", "300", "4096"])])
        elif op < 95:
            add(["SCAN", "0", "TYPE", "stream"], "scanall")
        else:
            add([rng.choice(["XADD", "XRANGE", "XREVRANGE", "XLEN", "XDEL", "XTRIM", "XSETID", "XREAD", "XINFO"])])

    add(["CONFIG", "SET", "stream-node-max-entries", "100"])
    add(["CONFIG", "SET", "stream-node-max-bytes", "4096"])
    for k in allkeys:
        add(["TYPE", k])
        add(["XRANGE", k, "-", "+"])
        add(["XINFO", "STREAM", k], "shape")
        add(["XINFO", "GROUPS", k])
    return out
