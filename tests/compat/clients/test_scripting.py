#!/usr/bin/python3
"""test_scripting.py SERVER [THREADS]: Lua scripts with redis-py (python3-redis),
what a differential script cannot show:

 - the script cache is the server's, not a shard's: a script loaded on one
   connection runs by SHA from every other, on keys of every shard, and
   SCRIPT FLUSH forgets it everywhere;
 - isolation: threads moving amounts between keys of different shards with a
   script while readers MGET every key: the total never changes; scripts on
   overlapping key sets (three keys each, in random order) all finish (no
   deadlock) and keep the total;
 - redis-py's Lock (its scripts: acquire, release, extend, reacquire), held
   against a second client, released, taken again;
 - a script's keyspace events are published once each; a client blocked on
   a key the script pushes to is served after the script; WATCH sees it;
 - PUBLISH inside a script reaches subscribers on every shard, in order;
 - a key a script did not declare works, wherever it lives (the script
   runs again with every shard's keyspace locked when it is on another
   shard; undeclared_keys.py compares these scripts with Redis).
Starts its own server on a free port."""
import hashlib
import os
import random
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
    from redis.exceptions import LockError, ResponseError
except ImportError:
    print("SKIP: python3-redis is not installed (apt-get install python3-redis)")
    sys.exit(77)

TRANSFER = """
local from = tonumber(redis.call('get', KEYS[1]))
local to = tonumber(redis.call('get', KEYS[2]))
local n = tonumber(ARGV[1])
redis.call('set', KEYS[1], from - n)
redis.call('set', KEYS[2], to + n)
return from - n
"""

# three keys: the first gives to the two others, and a read in between
ROTATE = """
local a = tonumber(redis.call('get', KEYS[1]))
redis.call('decrby', KEYS[1], 2)
redis.call('incrby', KEYS[2], 1)
redis.call('incrby', KEYS[3], 1)
return a
"""

ACCOUNTS = ["acct:%d" % i for i in range(16)]
START = 1000
DEADLINE_S = 120  # generous: a busy 2-core machine, maybe under ASan


def client(port):
    return redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=60)


def run_cache(port, threads):
    a, b = client(port), client(port)
    a.flushall()
    a.script_flush()
    sha = a.script_load("return redis.call('incr', KEYS[1])")
    # one key per shard at least: 64 keys spread over every shard
    for i in range(64):
        eq(b.evalsha(sha, 1, "k%d" % i), 1, "EVALSHA of a script loaded on another connection, key k%d" % i)
    eq(b.script_exists(sha), [True], "SCRIPT EXISTS from another connection")
    b.script_flush()
    eq(a.script_exists(sha), [False], "SCRIPT EXISTS after SCRIPT FLUSH on another connection")
    for i in range(64):
        try:
            a.evalsha(sha, 1, "k%d" % i)
            check(False, "EVALSHA after SCRIPT FLUSH: NOSCRIPT for k%d" % i)
            break
        except ResponseError as e:
            check(str(e).startswith("No matching script"), "NOSCRIPT after SCRIPT FLUSH (%s)" % e)
    # EVAL on one connection caches the script for EVALSHA on every shard
    a.eval("return redis.call('get', KEYS[1])", 1, "k0")
    sha2 = hashlib.sha1(b"return redis.call('get', KEYS[1])").hexdigest()
    eq([b.evalsha(sha2, 1, "k%d" % i) for i in range(64)], ["1"] * 64, "EVALSHA of a script run by EVAL")
    # pipelined: EVALSHAs on keys of every shard, then SCRIPT FLUSH on the same connection: every EVALSHA
    # runs before the flush, as in Redis (each command runs in the order the connection sent it)
    sha3 = a.script_load("return redis.call('incr', KEYS[1])")
    with a.pipeline(transaction=False) as pipe:
        for i in range(64):
            pipe.evalsha(sha3, 1, "p%d" % i)
        pipe.script_flush()
        got = pipe.execute(raise_on_error=False)
    eq(got, [1] * 64 + [True], "pipelined EVALSHAs before a SCRIPT FLUSH all run")


def run_isolation(port, threads):
    r = client(port)
    r.flushall()
    r.mset({k: START for k in ACCOUNTS})
    total = START * len(ACCOUNTS)
    stop = threading.Event()
    bad = []
    counts = {"moves": 0, "reads": 0, "rotates": 0}
    lock = threading.Lock()

    def mover(seed):
        c = client(port)
        transfer = c.register_script(TRANSFER)
        rnd = random.Random(seed)
        n = 0
        while not stop.is_set() and n < 400:
            k1, k2 = rnd.sample(ACCOUNTS, 2)
            transfer(keys=[k1, k2], args=[rnd.randint(1, 9)])
            n += 1
        with lock:
            counts["moves"] += n

    def rotator(seed):
        c = client(port)
        rotate = c.register_script(ROTATE)
        rnd = random.Random(seed)
        n = 0
        while not stop.is_set() and n < 300:
            rotate(keys=rnd.sample(ACCOUNTS, 3))
            n += 1
        with lock:
            counts["rotates"] += n

    def reader():
        c = client(port)
        n = 0
        while not stop.is_set():
            vals = c.mget(ACCOUNTS)
            s = sum(int(v) for v in vals)
            if s != total:
                bad.append((s, vals))
                break
            n += 1
        with lock:
            counts["reads"] += n

    workers = [threading.Thread(target=mover, args=(i,)) for i in range(3)]
    workers += [threading.Thread(target=rotator, args=(100 + i,)) for i in range(2)]
    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in workers + readers:
        t.start()
    deadline = time.time() + DEADLINE_S
    for t in workers:
        t.join(max(0.1, deadline - time.time()))
    finished = not any(t.is_alive() for t in workers)
    stop.set()
    for t in readers + workers:
        t.join(30)
    check(finished, "every script finished within %d s (no deadlock): %r" % (DEADLINE_S, counts))
    check(not bad, "MGET never saw a total other than %d: %r" % (total, bad[:1]))
    eq(sum(int(v) for v in r.mget(ACCOUNTS)), total, "the total after %r" % counts)
    check(counts["reads"] > 0, "the readers read (%r)" % counts)


def run_lock(port, threads):
    a, b = client(port), client(port)
    a.flushall()
    for name in ("lock:one", "lock:two", "lock:{x}three"):
        la = a.lock(name, timeout=30, blocking_timeout=0)
        lb = b.lock(name, timeout=30, blocking_timeout=0)
        eq(la.acquire(), True, "%s: acquire" % name)
        eq(lb.acquire(), False, "%s: a second client cannot acquire it" % name)
        check(la.owned(), "%s: owned" % name)
        eq(la.extend(20), True, "%s: extend" % name)
        ttl = a.pttl(name)
        check(30000 < ttl <= 50000, "%s: extended TTL %d ms in (30000, 50000]" % (name, ttl))
        eq(la.reacquire(), True, "%s: reacquire" % name)
        ttl = a.pttl(name)
        check(20000 < ttl <= 30000, "%s: reacquired TTL %d ms in (20000, 30000]" % (name, ttl))
        la.release()
        eq(a.exists(name), 0, "%s: released (the key is gone)" % name)
        try:
            la.release()
            check(False, "%s: releasing a lock not held raises" % name)
        except LockError:
            pass
        eq(lb.acquire(), True, "%s: the second client acquires it once released" % name)
        try:
            la.extend(10)
            check(False, "%s: extending a lock another client holds raises" % name)
        except LockError:
            pass
        lb.release()


def run_effects(port, threads):
    """A script's keyspace events are published once each, in order; a client blocked on a key the
    script pushes to is served after the script, not between two of its calls; WATCH sees it."""
    r = client(port)
    r.flushall()
    r.config_set("notify-keyspace-events", "KA")
    sub = r.pubsub()
    sub.psubscribe("__keyspace@0__:ev*")
    deadline = time.time() + 30
    while sub.get_message(timeout=1) is None and time.time() < deadline:  # the psubscribe confirmation
        pass
    r.eval("redis.call('set', KEYS[1], 'a'); redis.call('append', KEYS[1], 'b'); redis.call('del', KEYS[1])",
           1, "ev1")
    r.eval("redis.call('set', KEYS[1], 'a'); redis.call('set', KEYS[2], 'b'); redis.call('incr', KEYS[3])",
           3, "ev2", "ev3", "ev4")
    want = [("ev1", "set"), ("ev1", "append"), ("ev1", "del"), ("ev2", "set"), ("ev3", "set"), ("ev4", "incrby")]
    got = []
    while len(got) < len(want) + 1 and time.time() < deadline:
        m = sub.get_message(timeout=0.5)
        if m and m["type"] == "pmessage":
            got.append((m["channel"].split(":", 1)[1], m["data"]))
        elif m is None and len(got) >= len(want):
            break
    # one script's events keep their order; events of keys on different shards may interleave
    eq(sorted(got), sorted(want), "each event of the scripts once")
    eq([g for g in got if g[0] == "ev1"], want[:3], "one key's events in order")
    sub.close()
    r.config_set("notify-keyspace-events", "")

    # BLPOP waiting on q: the script pushes a, b and pops a itself; the waiter gets b, after the script
    popped = []
    waiter = threading.Thread(target=lambda: popped.append(client(port).blpop("q", 30)))
    waiter.start()
    deadline = time.time() + 30
    while time.time() < deadline and r.info("clients").get("blocked_clients") != 1:
        time.sleep(0.02)
    own = r.eval("redis.call('rpush', KEYS[1], 'a'); redis.call('rpush', KEYS[1], 'b'); "
                 "return redis.call('lpop', KEYS[1])", 1, "q")
    waiter.join(30)
    eq(own, "a", "the script pops its own first push")
    eq(popped, [("q", "b")], "the blocked client is served after the script")

    # WATCH on another connection: a script's write aborts the EXEC
    w = client(port)
    w.set("wk", "1")
    with w.pipeline() as pipe:
        pipe.watch("wk")
        r.eval("return redis.call('incr', KEYS[1])", 1, "wk")
        pipe.multi()
        pipe.get("wk")
        try:
            pipe.execute()
            check(False, "EXEC after a script wrote a watched key fails")
        except redis.exceptions.WatchError:
            pass


def run_publish(port, threads):
    """PUBLISH inside a script (bee-queue's delayed jobs do it) reaches subscribers on every connection,
    each script's messages in order; its reply counts receivers (percore: those on the script's shard)"""
    subs = []
    for i in range(6):  # connections land on different shards
        p = client(port).pubsub()
        p.subscribe("script:ch")
        subs.append(p)
    deadline = time.time() + 30
    for p in subs:
        while p.get_message(timeout=1) is None and time.time() < deadline:  # the subscribe confirmation
            pass
    r = client(port)
    counts = [r.eval("return redis.call('publish', 'script:ch', ARGV[1])", 0, "m%d" % i) for i in range(3)]
    check(all(isinstance(c, int) and 0 <= c <= len(subs) for c in counts), "PUBLISH's reply: %r" % counts)
    for i, p in enumerate(subs):
        got = []
        while len(got) < 3 and time.time() < deadline:
            m = p.get_message(timeout=0.5)
            if m and m["type"] == "message":
                got.append(m["data"])
        eq(got, ["m0", "m1", "m2"], "subscriber %d: the scripts' messages, in order" % i)
        p.close()


def run_undeclared(port, threads):
    r = client(port)
    r.flushall()
    # a hash tag puts the undeclared key on the declared key's shard: that always works
    eq(r.eval("redis.call('set', 'u{t}', 'x'); return redis.call('get', 'u{t}')", 1, "d{t}"), "x",
       "an undeclared key on the declared key's shard")
    if threads == 1:
        eq(r.eval("return redis.call('set', 'anywhere', 'y')", 0), "OK", "one shard: any key")
        return
    # most of these keys live on another shard than d{t}: each is written, after d{t} was
    for i in range(32):
        eq(r.eval("redis.call('set', KEYS[1], ARGV[1]) return redis.call('set', 'x' .. ARGV[1], 'y')", 1, "d{t}",
                  str(i)), "OK", "undeclared key x%d" % i)
    eq(r.exists(*["x%d" % i for i in range(32)]), 32, "every undeclared key was written")
    eq(r.get("d{t}"), "31", "the declared key, written first each time")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    srv = Server(sys.argv[1], threads=threads, name="scripting")
    srv.start()
    print("redis-py %s against %s --threads %d on port %d" % (redis.__version__, sys.argv[1], threads, srv.port))
    for part in (run_cache, run_isolation, run_lock, run_effects, run_publish, run_undeclared):
        try:
            part(srv.port, threads)
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
    return expect.done("test_scripting")


if __name__ == "__main__":
    sys.exit(main())
