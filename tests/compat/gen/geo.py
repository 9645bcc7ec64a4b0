"""geo: seeded random geo commands for diff.py (--gen geo).

lines(rng, n, keys) returns (marker, args) pairs: GEOADD [NX XX CH] with
many points at once, GEOPOS GEOHASH GEODIST in every unit, GEOSEARCH with
FROMMEMBER/FROMLONLAT and BYRADIUS/BYBOX, GEOSEARCHSTORE [STOREDIST],
GEORADIUS and GEORADIUSBYMEMBER with STORE/STOREDIST and their _RO forms,
each with random WITHCOORD/WITHDIST/WITHHASH, ASC/DESC, COUNT [ANY].
Points are drawn anywhere on the map, in clusters around a few centres (so
searches find many members, and members share cells), at a few exact spots
(ties in distance: the order of equal distances is Redis's sort's), on a
few meridians (distances there are arcs), and at the limits (poles at 85.05112878, the antimeridian); radii and boxes run
from 0 to more than the Earth.  Arguments go wrong now and then (bad floats,
out-of-range pairs, unknown units, negative radii, COUNT 0, a syntax error,
a missing member or key, a string key: WRONGTYPE).  The STORE forms write
to a key of the source's hash tag half the time, else to any key (another
shard: the dispatcher gathers both).  ZADD with scores that are no geohash,
ZREM, DEL and EXPIRE change the sets; the listpack threshold goes up and
down (CONFIG SET) and RESP3 on and off (HELLO).  Every write is checked
with !dirty.  A final sweep compares every key's type and contents.
"""


def lines(rng, n, keys):
    out = []

    def add(args, m="exact"):
        out.append((m, [a.encode() if isinstance(a, str) else a for a in args]))

    centres = [(rng.uniform(-180, 180), rng.uniform(-80, 80)) for _ in range(4)]
    centres += [(179.99, 10.0), (-179.99, -10.0), (0.0, 84.9), (13.361389, 38.115556)]
    spots = [(rng.uniform(-180, 180), rng.uniform(-85, 85)) for _ in range(3)]
    members = ["m%d" % i for i in range(30)] + ["12345", "-7", "0", "bin\x00ary", "", "x" * 70]
    units = ["m", "km", "mi", "ft", "KM", "M"]
    per_unit = {"m": 1.0, "km": 1000.0, "mi": 1609.34, "ft": 0.3048}

    geokeys = [k for k in keys if not k.startswith("{")][:4] + [k for k in keys if k.startswith("{user")][:3]

    others = [k for k in keys if k not in geokeys]

    def K():
        return rng.choice(geokeys) if rng.randrange(8) else rng.choice(keys)

    def fmt(v):
        return rng.choice(["%.6f", "%.3f", "%.10f", "%r"]) % v

    def position():
        r = rng.randrange(20)
        if r < 8:
            cx, cy = rng.choice(centres)
            lon = max(-180.0, min(180.0, cx + rng.gauss(0, rng.choice([0.01, 0.1, 1, 5]))))
            lat = max(-85.05112878, min(85.05112878, cy + rng.gauss(0, rng.choice([0.01, 0.1, 1, 5]))))
        elif r < 11:
            lon, lat = rng.choice(spots)
        elif r < 16:
            lon, lat = rng.uniform(-180, 180), rng.uniform(-85.05112878, 85.05112878)
        elif r < 18:  # on a few meridians: distances along one are arcs in Redis 7.0.15, not haversines
            lon, lat = rng.choice([13.5, -100.25, 0.0]), rng.uniform(-85.05112878, 85.05112878)
        else:
            lon = rng.choice([180, -180, 0, 179.9999999, -179.9999999])
            lat = rng.choice([85.05112878, -85.05112878, 0, 85, -85])
            return [repr(lon), repr(lat)]  # "%.6f" would round 85.05112878 past the limit
        return [fmt(lon), fmt(lat)]

    def bad_position():
        return rng.choice([["181", "0"], ["0", "85.06"], ["-180.1", "1"], ["x", "1"], ["1", ""], ["nan", "1"]])

    def centre():
        if rng.randrange(40) == 0:
            return bad_position()
        if rng.randrange(3) == 0:
            return position()
        cx, cy = rng.choice(centres + spots)
        return [fmt(cx), fmt(cy)]

    def distance(unit):
        meters = rng.choice([0, 1, 100, 5000, 50000, 200000, 500000, 1000000, 5000000, 20000000, 50000000,
                             10 ** rng.uniform(3, 7.5), 10 ** rng.uniform(4, 6.5), 10 ** rng.uniform(5, 6.5),
                             10 ** rng.uniform(5, 7), 10 ** rng.uniform(0, 7.5)])
        if rng.randrange(50) == 0:
            return rng.choice(["-1", "abc", "1e400", "inf"])
        return "%.4f" % (meters / per_unit.get(unit.lower(), 1.0))

    def unit():
        if rng.randrange(60) == 0:
            return rng.choice(["parsec", "kms", ""])
        return rng.choice(units)

    def shape():
        u = unit()
        if rng.randrange(2):
            return ["BYRADIUS", distance(u), u]
        return ["BYBOX", distance(u), distance(u), u]

    def options(store):
        a = []
        for opt in rng.sample(["WITHCOORD", "WITHDIST", "WITHHASH", "SORT", "COUNT"], rng.randrange(0, 5)):
            if opt == "SORT":
                a.append(rng.choice(["ASC", "DESC", "asc"]))
            elif opt == "COUNT":
                a += ["COUNT", str(rng.choice([1, 2, 3, 5, 10, 50, rng.randrange(1, 30)]))]
                if rng.randrange(3) == 0:
                    a.append("ANY")
            elif not store or rng.randrange(20) == 0:
                a.append(opt)
        if rng.randrange(40) == 0:
            a.insert(rng.randrange(len(a) + 1), rng.choice(["BOGUS", "ANY", "COUNT", "STOREDIST"]))
        if rng.randrange(40) == 0:
            a += ["COUNT", rng.choice(["0", "-1", "x"])]
        return a

    added = {}  # members GEOADD named, per key (whether or not they got there): FROMMEMBER's choice

    def member_of(key):
        if added.get(key) and rng.randrange(5):
            return rng.choice(added[key])
        return rng.choice(members)

    def dest(src):
        if rng.randrange(2) and src.startswith("{"):
            return src[:src.index("}") + 1] + ".dst"
        if rng.randrange(10) == 0:
            return K()  # a source too, now and then: the result replaces a geo set
        return rng.choice(others)

    for _ in range(n):
        op = rng.randrange(100)
        if op < 22:
            key = K()
            a = ["GEOADD", key]
            a += rng.choice([[], [], [], [], ["NX"], ["XX"], ["CH"], ["NX", "CH"], ["CH", "XX"]])
            if rng.randrange(30) == 0:
                a += ["NX", "XX"]
            for _ in range(rng.choice([1, 1, 2, 3, 5, 10, 20, 30])):
                m = rng.choice(members)
                a += position() + [m]
                added.setdefault(key, []).append(m)
            if rng.randrange(25) == 0:
                a[-3:-1] = bad_position()
            if rng.randrange(60) == 0:
                a.pop()
            add(a, "dirty")
        elif op < 27:
            add(["GEOPOS", K()] + [rng.choice(members) for _ in range(rng.randrange(1, 5))])
        elif op < 31:
            add(["GEOHASH", K()] + [rng.choice(members) for _ in range(rng.randrange(1, 5))])
        elif op < 36:
            a = ["GEODIST", K(), rng.choice(members), rng.choice(members)]
            if rng.randrange(3):
                a.append(unit())
            add(a)
        elif op < 50:
            src = K()
            a = ["GEOSEARCH", src]
            a += ["FROMMEMBER", member_of(src)] if rng.randrange(3) == 0 else ["FROMLONLAT"] + centre()
            a += shape() + options(False)
            add(a)
        elif op < 60:
            src = K()
            a = ["GEOSEARCHSTORE", dest(src), src]
            a += ["FROMMEMBER", member_of(src)] if rng.randrange(3) == 0 else ["FROMLONLAT"] + centre()
            a += shape() + options(True)
            if rng.randrange(2):
                a.append("STOREDIST")
            add(a, "dirty")
        elif op < 76:
            src = K()
            by_member = rng.randrange(3) == 0
            ro = rng.randrange(3) == 0
            name = "GEORADIUSBYMEMBER" if by_member else "GEORADIUS"
            a = [name + ("_RO" if ro else ""), src]
            a += [member_of(src)] if by_member else centre()
            u = unit()
            a += [distance(u), u]
            store = not ro and rng.randrange(2) == 0
            a += options(store)
            if store or rng.randrange(30) == 0:
                a += [rng.choice(["STORE", "STOREDIST", "store"]), dest(src)]
            add(a, "dirty" if not ro else "exact")
        elif op < 80:
            add(["ZADD", K(), rng.choice(["0", "1", "-5", "3.5", "1e300", "4503599627370495", "4503599627370496",
                                          str(rng.randrange(0, 2 ** 52))]), rng.choice(members)], "dirty")
        elif op < 84:
            add(["ZREM", K()] + [rng.choice(members) for _ in range(rng.randrange(1, 4))], "dirty")
        elif op < 88:
            add(["ZRANGE", K(), "0", "-1", "WITHSCORES"])
        elif op < 90:
            add(["OBJECT", "ENCODING", K()])
        elif op < 91:
            add(["DEL", K()], "dirty")
        elif op < 92:
            if rng.randrange(4) == 0:
                add(["SET", K(), "str"], "dirty")
            else:
                add(["TYPE", K()])
        elif op < 93:
            add(["EXPIRE", K(), "1000"], "dirty")
        elif op < 95:
            add(["CONFIG", "SET", "zset-max-listpack-entries", str(rng.choice([0, 1, 4, 16, 128]))])
        elif op < 97:
            add(["HELLO", rng.choice(["2", "3"])], "shape")
        else:
            add(["ZCARD", K()])

    add(["HELLO", "2"], "shape")
    add(["CONFIG", "SET", "zset-max-listpack-entries", "128"])
    for k in keys:
        add(["TYPE", k])
        add(["ZRANGE", k, "0", "-1", "WITHSCORES"])
    return out
