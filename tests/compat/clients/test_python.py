#!/usr/bin/python3
"""test_python.py SERVER [THREADS]: the Debian python3-redis client (redis-py)
works unchanged against the server: connect, SET/GET, a pipeline (without
MULTI), MGET across shards, EXPIRE/TTL, INFO parsed, SCAN iteration, errors
raised as redis-py exceptions; transactions: a MULTI/EXEC pipeline over many
shards, its errors, WatchError, and r.transaction() retrying after a watched
key changed; worker queues as Celery/RQ/Sidekiq use them: threads looping on
BRPOP over several queues (keys of several shards) while producers LPUSH,
every job taken once, and a reliable queue with BRPOPLPUSH.  Starts its own
server on a free port."""
import os
import sys
import threading
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
                 name="python")
    srv.start()
    print("redis-py %s against %s on port %d" % (redis.__version__, sys.argv[1], srv.port))
    for part in (run, run_transactions, run_worker_queues):
        try:
            part(srv.port)
        except Exception as e:  # a crash of the test is a failure, with the server log
            check(False, "%s: exception: %r" % (part.__name__, e))
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


def run_transactions(port):
    r = redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=10)
    other = redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=10)
    eq(r.flushall(), True, "FLUSHALL")

    # MULTI ... EXEC over keys on many slots (so on every shard)
    keys = ["k%d" % i for i in range(16)] + ["{user%d}.x" % i for i in range(4)] + ["user:1", "user:2"]
    p = r.pipeline(transaction=True)
    for i, k in enumerate(keys):
        p.set(k, str(i))
    p.mget(keys + ["nokey"])
    p.incr(keys[0])
    p.mset({k: "m-" + k for k in keys[10:]})
    p.delete(*keys[:10])
    p.exists(*keys)
    p.rename(keys[10], "{user0}.renamed")
    p.get("{user0}.renamed")
    want = [True] * len(keys) + [[str(i) for i in range(len(keys))] + [None], 1, True, 10,
                                  len(keys) - 10, True, "m-" + keys[10]]
    eq(p.execute(), want, "MULTI/EXEC of %d commands over %d keys" % (len(want), len(keys)))
    eq(r.mget(keys[:2] + keys[11:13]), [None, None, "m-" + keys[11], "m-" + keys[12]],
       "MGET after the transaction")

    # an error at run time is one of EXEC's replies; one at queue time discards it all
    p = r.pipeline(transaction=True)
    p.set("s", "x").incr("s").get("s")
    res = p.execute(raise_on_error=False)
    check(len(res) == 3 and res[0] is True and isinstance(res[1], redis.ResponseError) and res[2] == "x",
          "EXEC with a run-time error in the middle: %r" % (res,))
    p = r.pipeline(transaction=True)
    p.set("s", "discarded").execute_command("NOSUCHCOMMAND").get("s")
    try:
        p.execute()
        check(False, "a transaction with an unknown command must raise")
    except redis.ResponseError as e:
        check("unknown command" in str(e), "queue-time error text: %s" % e)
    eq(r.get("s"), "x", "the discarded transaction's SET did not run")

    # WATCH by hand: another client's write makes EXEC fail with WatchError
    r.set("w1", "1")
    with r.pipeline() as p:
        p.watch("w1", "{user3}.w2")
        eq(p.get("w1"), "1", "GET of a watched key (immediate mode)")
        other.set("{user3}.w2", "changed")
        p.multi()
        p.set("w1", "lost")
        try:
            p.execute()
            check(False, "EXEC after a watched key changed must raise WatchError")
        except redis.WatchError:
            check(True, "WatchError")
    eq(r.get("w1"), "1", "the SET of the failed transaction did not happen")

    # r.transaction(): the first EXEC fails (the other client changed a watched
    # key in between), redis-py runs the function again and that EXEC succeeds
    eq(r.mset({"acct:a": "100", "acct:b": "0"}), True, "MSET of the accounts")
    calls = []

    def move_30(pipe):
        calls.append(1)
        a, b = int(pipe.get("acct:a")), int(pipe.get("acct:b"))
        if len(calls) == 1:
            other.incrby("acct:a", 50)
        pipe.multi()
        pipe.set("acct:a", a - 30)
        pipe.set("acct:b", b + 30)

    eq(r.transaction(move_30, "acct:a", "acct:b"), [True, True], "r.transaction() result")
    eq(len(calls), 2, "transaction function calls (one WatchError retry)")
    eq(r.mget("acct:a", "acct:b"), ["120", "30"], "balances after the retried transaction")
    eq(r.flushall(), True, "FLUSHALL")
    r.close()
    other.close()



def run_worker_queues(port):
    """Workers BRPOP queues with no shared hash tag: with 4 shards queue:high, queue:default and
    queue:low live on shards 2, 1 and 3, jobs and processing on 2 and 0."""
    queues = ["queue:high", "queue:default", "queue:low"]
    jobs = 600
    admin = redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=10)
    eq(admin.flushall(), True, "FLUSHALL")
    eq(admin.brpop(queues, timeout=0.1), None, "BRPOP over 3 queues, all empty: None after the timeout")
    admin.lpush("queue:low", "first")
    eq(admin.brpop(queues, timeout=1), ("queue:low", "first"), "BRPOP finds the one non-empty queue")

    taken, lock, done = [], threading.Lock(), threading.Event()

    def worker():
        r = redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=10)
        while not done.is_set():
            got = r.brpop(queues, timeout=0.2)
            if got is not None:
                with lock:
                    taken.append(got)
        r.close()

    def producer(first):
        r = redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=10)
        for i in range(first, jobs, 2):
            r.lpush(queues[i % 3], "job-%d" % i)
        r.close()

    workers = [threading.Thread(target=worker) for _ in range(4)]
    producers = [threading.Thread(target=producer, args=(f,)) for f in (0, 1)]
    for t in workers + producers:
        t.start()
    for t in producers:
        t.join()
    deadline = time.time() + 30
    while time.time() < deadline:
        with lock:
            if len(taken) >= jobs:
                break
        time.sleep(0.05)
    done.set()
    for t in workers:
        t.join()
    names = sorted(v for _, v in taken)
    eq(len(taken), jobs, "jobs taken by 4 workers BRPOPing 3 queues (keys of several shards)")
    eq(len(set(names)), len(names), "no job taken twice")
    check(all(q == queues[int(v.split("-")[1]) % 3] for q, v in taken), "each job came from its own queue")
    eq(sum(admin.llen(q) for q in queues), 0, "queues empty at the end")

    # a reliable queue: BRPOPLPUSH moves the job to a processing list on another shard
    results = []
    t = threading.Thread(target=lambda: results.append(
        redis.Redis(host="127.0.0.1", port=port, decode_responses=True).brpoplpush("jobs", "processing", 5)))
    t.start()
    time.sleep(0.2)
    admin.lpush("jobs", "job-x")
    t.join()
    eq(results, ["job-x"], "BRPOPLPUSH woken by LPUSH")
    eq(admin.lrange("processing", 0, -1), ["job-x"], "the job is in the processing list")
    eq(admin.llen("jobs"), 0, "and no longer in the queue")
    eq(admin.flushall(), True, "FLUSHALL")
    admin.close()


if __name__ == "__main__":
    sys.exit(main())
