#!/usr/bin/python3
"""test_python.py SERVER [THREADS]: the Debian python3-redis client (redis-py)
works unchanged against the server: connect, SET/GET, a pipeline (without
MULTI), MGET across shards, EXPIRE/TTL, INFO parsed, SCAN iteration, errors
raised as redis-py exceptions.  Starts its own server on a free port."""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from diff import Server  # noqa: E402  (tests/compat/diff.py)
import expect  # noqa: E402
from expect import check, eq  # noqa: E402

try:
    import redis
except ImportError:
    print("SKIP: python3-redis is not installed (apt-get install python3-redis)")
    sys.exit(77)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    srv = Server(sys.argv[1], threads=int(sys.argv[2]) if len(sys.argv) > 2 else 4,
                 name="python", logdir=os.environ.get("PC_LOG_DIR", "."))
    srv.start()
    print("redis-py %s against %s on port %d" % (redis.__version__, sys.argv[1], srv.port))
    try:
        run(srv.port)
    except Exception as e:  # a crash of the test is a failure, with the server log
        check(False, "exception: %r" % (e,))
    alive = srv.alive()
    st = srv.stop()
    check(alive, "server still running at the end")
    eq(st, 0, "server exit status after SIGTERM")
    if expect.failed:
        print(srv.tail())
    elif not os.environ.get("PC_KEEP_LOGS"):
        os.unlink(srv.log)
    return expect.done("test_python")


def run(port):
    r = redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=10)
    eq(r.ping(), True, "PING")
    eq(r.flushall(), True, "FLUSHALL")
    eq(r.set("a", "1"), True, "SET")
    eq(r.get("a"), "1", "GET")
    eq(r.get("nokey"), None, "GET missing")
    eq(r.set("a", "2", nx=True), None, "SET NX on existing")
    eq(r.set("a", "3", xx=True, get=True), "1", "SET XX GET")
    eq(r.incr("n"), 1, "INCR")
    eq(r.incrby("n", 41), 42, "INCRBY")
    eq(r.incrbyfloat("f", 1.5), 1.5, "INCRBYFLOAT")
    eq(r.append("a", "x"), 2, "APPEND")
    eq(r.strlen("a"), 2, "STRLEN")
    eq(r.getrange("a", 0, 0), "3", "GETRANGE")
    eq(r.getdel("a"), "3x", "GETDEL")
    eq(r.exists("a"), 0, "EXISTS after GETDEL")
    try:
        r.incr("f2" if r.set("f2", "abc") else "f2")
        check(False, "INCR on a non-integer must raise")
    except redis.ResponseError as e:
        eq(str(e), "value is not an integer or out of range", "INCR error text")
    try:
        r.execute_command("NOSUCHCOMMAND", "x")
        check(False, "unknown command must raise")
    except redis.ResponseError as e:
        check(str(e).startswith("unknown command 'NOSUCHCOMMAND'"), "unknown command text: %s" % e)

    # MSET / MGET across shards (keys chosen on many slots, some hash-tagged)
    keys = ["k%d" % i for i in range(32)] + ["{user%d}.x" % i for i in range(8)]
    mapping = {k: "v-" + k for k in keys}
    eq(r.mset(mapping), True, "MSET 40 keys")
    eq(r.mget(keys + ["nokey"]), [mapping[k] for k in keys] + [None], "MGET 40 keys + missing")
    eq(r.exists(*keys), len(keys), "EXISTS all")
    eq(sorted(r.keys("k*")), sorted(k for k in keys if k.startswith("k")), "KEYS k*")
    eq(sorted(r.scan_iter(match="*", count=7)), sorted(keys + ["n", "f", "f2"]), "SCAN iteration")
    eq(r.dbsize(), len(keys) + 3, "DBSIZE")

    # pipeline without MULTI: replies in order, across shards
    p = r.pipeline(transaction=False)
    for i, k in enumerate(keys):
        p.set(k, str(i))
        p.incr(k)
        p.get(k)
    p.mget(keys[:10])
    p.delete(*keys[:20])
    res = p.execute()
    want = []
    for i, k in enumerate(keys):
        want += [True, i + 1, str(i + 1)]
    want += [[str(i + 1) for i in range(10)], 20]
    eq(res, want, "pipeline of %d commands" % len(want))
    p = r.pipeline(transaction=False)
    p.get("k0").incr("f2").get("k21")
    res = p.execute(raise_on_error=False)
    check(res[0] is None and isinstance(res[1], redis.ResponseError) and res[2] == "22",
          "pipeline with an error in the middle: %r" % (res,))

    # EXPIRE / TTL / PERSIST
    eq(r.expire("k21", 1000), True, "EXPIRE")
    check(998 <= r.ttl("k21") <= 1000, "TTL after EXPIRE 1000")
    check(990000 <= r.pttl("k21") <= 1000000, "PTTL after EXPIRE 1000")
    eq(r.persist("k21"), True, "PERSIST")
    eq(r.ttl("k21"), -1, "TTL after PERSIST")
    eq(r.ttl("nokey"), -2, "TTL of a missing key")
    eq(r.set("short", "v", px=100), True, "SET PX 100")
    time.sleep(0.25)
    eq(r.get("short"), None, "GET after PX 100 expired")
    eq(r.setex("sx", 100, "v"), True, "SETEX")
    check(98 <= r.ttl("sx") <= 100, "TTL after SETEX")

    # RENAME across shards keeps value and TTL
    eq(r.rename("sx", "{other}.renamed"), True, "RENAME")
    eq(r.get("{other}.renamed"), "v", "GET renamed")
    check(98 <= r.ttl("{other}.renamed") <= 100, "TTL moved with RENAME")

    # INFO parsed by redis-py
    info = r.info()
    check(isinstance(info, dict) and len(info) > 5, "INFO parses into a dict (%d fields)" % len(info))
    check("redis_version" in info, "INFO has redis_version (clients read it)")
    eq(info.get("loading"), 0, "INFO loading:0")
    ks = r.info("keyspace")
    check(isinstance(ks.get("db0"), dict) and ks["db0"].get("keys") == r.dbsize(),
          "INFO keyspace db0 keys = DBSIZE: %r" % (ks,))
    srvinfo = r.info("server")
    check("tcp_port" not in srvinfo or srvinfo["tcp_port"] == port, "INFO server tcp_port")

    # CONFIG GET as redis-py parses it, CLIENT names, SELECT via a new client
    eq(r.config_get("maxmemory"), {"maxmemory": "0"}, "CONFIG GET maxmemory")
    eq(r.client_setname("pytest"), True, "CLIENT SETNAME")
    eq(r.client_getname(), "pytest", "CLIENT GETNAME")
    check(isinstance(r.client_id(), int), "CLIENT ID is an integer")
    r2 = redis.Redis(host="127.0.0.1", port=port, db=3, decode_responses=True)
    eq(r2.set("in3", "v"), True, "SET in db 3")
    eq(r2.dbsize(), 1, "DBSIZE in db 3")
    eq(r.get("in3"), None, "db 0 does not see db 3")
    eq(r.move("k30", 3), True, "MOVE to db 3")
    eq(r2.get("k30"), "31", "moved key in db 3")
    eq(r.swapdb(0, 3), True, "SWAPDB")
    eq(r.dbsize(), 2, "DBSIZE after SWAPDB")
    eq(r.flushall(), True, "FLUSHALL")
    eq(r2.dbsize(), 0, "db 3 empty after FLUSHALL")
    eq(isinstance(r.time(), tuple), True, "TIME")
    r.close()
    r2.close()


if __name__ == "__main__":
    sys.exit(main())
