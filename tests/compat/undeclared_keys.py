#!/usr/bin/python3
"""undeclared_keys.py --candidate SERVER [--threads N] [--redis REDIS]: Lua
scripts and functions that touch keys they did not declare in KEYS (Redis
allows it outside cluster mode), which with several shards live on any of
them, against a real redis-server 7.0 side by side.

- replies: one sequence of EVAL / EVALSHA / EVAL_RO / FCALL that read and
  write undeclared keys -- alone, beside declared keys of one or several
  shards (percore: from a connection of another shard than the declared
  key's, so that the script runs there first and again from its connection's
  shard), after writing a declared or an undeclared key first, in pcall and
  redis.pcall, in loops over many keys, hashes, lists and TTLs, an error
  after a write (the write stands) -- gives Redis's replies, and every key
  ends as Redis's (type, value, whether it has a TTL).
- concurrent: clients at the same time run a script that INCRs sixteen
  undeclared keys spread over the shards, a function doing the same, and a
  transfer between two undeclared keys (reads, then writes), while readers
  sum every account in a script (undeclared keys too) and with MGET: every
  sum seen is the total (no state between two of a script's calls is ever
  seen), and the counters end at the serial result, the same as Redis's
  after the same load.

Standard library and Debian's python3-redis.  Exit 0 when all agree, 1
otherwise, 77 when redis-server is missing."""
import os
import random
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "clients"))
from diff import Server  # noqa: E402
import expect  # noqa: E402
from expect import check, eq  # noqa: E402
from sort_shards import shard_of  # noqa: E402
from busy_script import conn_off_shard  # noqa: E402

import redis  # noqa: E402

DEADLINE_S = 120
INCR_ALL = "local t = {} for i, k in ipairs(ARGV) do t[i] = redis.call('incr', k) end return t"
LIB = ("#!lua name=undeclared\n"
       "redis.register_function('bump', function(keys, args) local n = 0 "
       "for _, k in ipairs(args) do n = n + redis.call('incrby', k, 1) end return n end)\n"
       "redis.register_function{function_name='peek', callback=function(keys, args) "
       "return redis.call('get', args[1]) end, flags={'no-writes'}}")
TRANSFER = ("local a = tonumber(redis.call('get', ARGV[1])) local b = tonumber(redis.call('get', ARGV[2])) "
            "local n = tonumber(ARGV[3]) redis.call('set', ARGV[1], a - n) redis.call('set', ARGV[2], b + n) "
            "return a - n")
SUM = "local s = 0 for _, k in ipairs(ARGV) do s = s + tonumber(redis.call('get', k)) end return s"


def reply(r, *args):
    try:
        got = r.execute_command(*args)
    except redis.RedisError as e:
        return "ERR: %s: %s" % (type(e).__name__, e)
    return got


def both(o):
    return (("redis", o.redis, None), ("candidate", o.candidate, o.threads))


def start(binary, threads, name):
    s = Server(binary, threads=threads, name=name)
    s.start()
    return s


def spread(prefix, n, threads):
    """n keys named prefix:i, with several shards on more than one of them"""
    keys = ["%s:%d" % (prefix, i) for i in range(n)]
    if threads and threads > 1:
        check(len({shard_of(k, threads) for k in keys}) > 1, "%s keys on several shards" % prefix)
    return keys


def state(r, keys):
    out = []
    for k in keys:
        t = r.type(k)
        if t == b"string":
            v = r.get(k)
        elif t == b"hash":
            v = sorted(r.hgetall(k).items())
        elif t == b"list":
            v = r.lrange(k, 0, -1)
        else:
            v = None
        out.append((k, t, v, r.pttl(k) > 0))
    return out


def sequence(threads):
    u = spread("u", 12, threads)
    d = spread("d", 4, threads)
    steps = []
    for i, k in enumerate(u[:8]):
        steps.append(("EVAL", "return redis.call('set', ARGV[1], ARGV[2])", 0, k, "v%d" % i))
    for k in u[:8]:
        steps.append(("EVAL", "return redis.call('get', ARGV[1])", 0, k))
    steps.append(("EVAL", "return redis.call('get', ARGV[1])", 0, "nosuchkey"))
    for k in u[:4]:  # a declared key written first, then an undeclared one
        steps.append(("EVAL", "redis.call('set', KEYS[1], 'd') return redis.call('incr', ARGV[1])", 1, d[0],
                      "n:" + k))
        steps.append(("EVAL", "redis.call('append', ARGV[1], '+') return redis.call('get', ARGV[2])", 0, k,
                      u[11]))
    steps.append(("EVAL", "local v = redis.call('get', KEYS[1]) redis.call('set', ARGV[1], v) "
                          "return redis.call('get', ARGV[1])", 1, u[0], "copy:1"))
    steps.append(("EVAL", "redis.call('set', KEYS[1], 'a') redis.call('set', KEYS[2], 'b') "
                          "return {redis.call('get', ARGV[1]), redis.call('incr', ARGV[2])}",
                  2, d[1], d[2], u[1], "n:multi"))
    for _ in range(2):
        steps.append(("EVAL", INCR_ALL, 0) + tuple("c:" + k for k in u))
    steps.append(("EVAL", "local ok, v = pcall(redis.call, 'get', ARGV[1]) return v", 0, u[2]))
    steps.append(("EVAL", "return redis.pcall('get', ARGV[1])", 0, u[3]))
    steps.append(("EVAL", "local ok = pcall(function() redis.call('set', ARGV[1], 'p') end) "
                          "return redis.call('get', ARGV[1])", 0, u[4]))
    steps.append(("EVAL", "redis.call('hset', ARGV[1], 'f', 'v', 'g', 'w') redis.call('rpush', ARGV[2], 'x', 'y') "
                          "return {redis.call('hget', ARGV[1], 'g'), redis.call('llen', ARGV[2])}",
                  0, "h:" + u[5], "l:" + u[6]))
    steps.append(("EVAL", "redis.call('set', ARGV[1], 'ttl', 'PX', 100000) return redis.call('pttl', ARGV[1]) > 0",
                  0, "t:" + u[7]))
    steps.append(("EVAL", "redis.call('set', ARGV[1], 'x') return redis.call('incr', ARGV[2])", 0,
                  "err:" + u[8], u[9]))  # u[9] holds a non-integer: the error, the write stands
    steps.append(("EVAL", "redis.call('del', ARGV[1]) return redis.call('exists', ARGV[1], ARGV[2])", 0,
                  u[10], u[0]))
    steps.append(("SCRIPT", "LOAD", INCR_ALL))
    steps.append(("EVALSHA", "__sha__", 0) + tuple("c:" + k for k in u[:6]))
    steps.append(("EVAL_RO", "return {redis.call('get', ARGV[1]), redis.call('get', ARGV[2])}", 0, u[1], u[2]))
    steps.append(("FUNCTION", "LOAD", LIB))
    steps.append(("FCALL", "bump", 0) + tuple("c:" + k for k in u))
    steps.append(("FCALL_RO", "peek", 0, u[3]))
    keys = u + d + ["n:" + k for k in u[:4]] + ["copy:1", "n:multi", "h:" + u[5], "l:" + u[6], "t:" + u[7],
                                               "err:" + u[8]] + ["c:" + k for k in u]
    return steps, keys


def replies(o, work):
    got = {}
    for who, binary, threads in both(o):
        s = start(binary, threads, "undeclared-replies-" + who)
        try:
            steps, keys = sequence(o.threads)
            # percore: a connection of another shard than the declared d:0's, so that the scripts declaring it
            # are sent there whole and run again from here
            r = conn_off_shard(s.port, shard_of("d:0", threads)) if threads and threads > 1 else \
                redis.Redis(port=s.port, socket_timeout=DEADLINE_S)
            out, sha = [], None
            for step in steps:
                if step[0] == "EVALSHA":
                    step = (step[0], sha) + step[2:]
                ans = reply(r, *step)
                if step[:2] == ("SCRIPT", "LOAD"):
                    sha = ans
                out.append((step[:2] if step[0] in ("EVAL", "EVAL_RO") else step[:3], ans))
            out.append(("state", state(r, keys)))
            got[who] = out
        finally:
            eq(s.stop(), 0, "%s: exit status" % who)
    for a, b in zip(got["redis"], got["candidate"]):
        eq(b, a, "replies: %r" % (a[0],))
    eq(len(got["candidate"]), len(got["redis"]), "replies: steps")


def concurrent_load(port, threads):
    """the same load against either server: counters and accounts at the end, and what the readers saw"""
    counters = spread("cnt", 16, threads)
    accounts = spread("acct", 8, threads)
    total = 100 * len(accounts)
    r = redis.Redis(port=port, socket_timeout=DEADLINE_S)
    r.mset({k: 0 for k in counters})
    r.mset({k: 100 for k in accounts})
    r.execute_command("FUNCTION", "LOAD", "REPLACE", LIB)
    stop = threading.Event()
    errors, bad_sums = [], []
    runs = {"incr": 0, "bump": 0, "transfer": 0, "sums": 0}
    lock = threading.Lock()

    def incr(seed, fcall):
        c = redis.Redis(port=port, socket_timeout=DEADLINE_S)
        script = c.register_script(INCR_ALL)
        for _ in range(40):
            try:
                if fcall:
                    c.execute_command("FCALL", "bump", 0, *counters)
                else:
                    script(keys=[], args=counters)
            except redis.RedisError as e:
                errors.append(str(e))
                return
            with lock:
                runs["bump" if fcall else "incr"] += 1

    def transfer(seed):
        c = redis.Redis(port=port, socket_timeout=DEADLINE_S)
        rnd = random.Random(seed)
        for _ in range(60):
            a, b = rnd.sample(accounts, 2)
            try:
                c.eval(TRANSFER, 0, a, b, rnd.randint(1, 5))
            except redis.RedisError as e:
                errors.append(str(e))
                return
            with lock:
                runs["transfer"] += 1

    def reader():
        c = redis.Redis(port=port, socket_timeout=DEADLINE_S)
        while not stop.is_set():
            try:
                sums = [c.eval(SUM, 0, *accounts), sum(int(v) for v in c.mget(accounts))]
            except redis.RedisError as e:
                errors.append(str(e))
                return
            if any(x != total for x in sums):
                bad_sums.append(sums)
                return
            with lock:
                runs["sums"] += 1

    workers = [threading.Thread(target=incr, args=(i, i % 2 == 1)) for i in range(4)]
    workers += [threading.Thread(target=transfer, args=(10 + i,)) for i in range(3)]
    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in workers + readers:
        t.start()
    for t in workers:
        t.join(DEADLINE_S)
    finished = not any(t.is_alive() for t in workers)
    stop.set()
    for t in readers:
        t.join(DEADLINE_S)
    return {
        "finished": finished,
        "errors": errors[:3],
        "bad sums": bad_sums[:1],
        "runs": {k: v for k, v in runs.items() if k != "sums"},
        "counters": [int(v) for v in r.mget(counters)],
        "total": sum(int(v) for v in r.mget(accounts)),
        "read": runs["sums"] > 0,
    }


def concurrent(o, work):
    got = {}
    for who, binary, threads in both(o):
        s = start(binary, threads, "undeclared-concurrent-" + who)
        try:
            got[who] = concurrent_load(s.port, o.threads)
        finally:
            eq(s.stop(), 0, "%s: exit status" % who)
    want = got["redis"]
    eq(want["counters"], [2 * 40 + 2 * 40] * 16, "redis: the serial result (the test's own check)")
    eq(got["candidate"], want, "concurrent")


def main():
    return expect.main(globals(), "undeclared_keys", "replies,concurrent")


if __name__ == "__main__":
    sys.exit(main())
