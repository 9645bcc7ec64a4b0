#!/usr/bin/python3
"""linearizability.py: a linearizability checker for histories of registers
(GET/SET on keys), after Wing & Gong as improved by Lowe ("Testing for
linearizability", 2017) -- the algorithm Knossos and Porcupine use.

A history is a list of operations, each with a key, a kind (write or read), a
value (None: a read that found no key) and its invocation and response times
from one monotonic clock.  It is linearizable iff every operation can be given
one instant between its invocation and its response such that, in the order of
those instants, every read returns the value of the last write before it (or
None when there was none).

P-compositionality: linearizability is local, so each key is checked on its
own.  Per key, the WGL search walks a list of call and return events ordered
by time: at a call it tries to linearize that operation now (the register
model must accept it), lifting its call and return out of the list; reaching
a return means the operation it ends was not linearized in time, so it
backtracks.  A cache of (set of linearized operations, register value)
prunes every state already explored, which keeps a few hundred operations per
key fast.  A write with no response (its outcome unknown: the client gave up)
may take effect at any point after its call, or never; one whose value no read
returned is dropped (never taking effect explains the history as well as any
other choice, and each such write kept would double the states a failing
search explores); a read with no response constrains nothing and is dropped.  At equal times calls sort before returns:
operations that touch are taken as concurrent, never as ordered.

Usage:
  linearizability.py --self-test     known-good and known-bad histories, and
                                     random small histories cross-checked
                                     against brute force
  linearizability.py HISTORY.jsonl   one operation per line:
      {"client": 3, "key": "k", "op": "w"|"r", "value": "v"|null,
       "call": 123, "ret": 456|null}
Exit status 0: linearizable (self-test passed), 1: not.
"""
import collections
import itertools
import json
import random
import sys

Op = collections.namedtuple("Op", "client key kind value call ret")


def _step(state, op):
    """the register model: (accepted, new state)"""
    if op.kind == "w":
        return True, op.value
    return op.value == state, state


def check_register(ops, initial=None):
    """WGL search over the operations of one key.  Returns (True, None) or
    (False, why), why naming the operation no linearization could get past."""
    seen = {o.value for o in ops if o.kind == "r" and o.ret is not None}
    ops = [o for o in ops if o.ret is not None or (o.kind == "w" and o.value in seen)]
    # entries: (time, 0 = call / 1 = return, op index); calls first at ties
    events = sorted([(o.call, 0, i) for i, o in enumerate(ops)] +
                    [(o.ret, 1, i) for i, o in enumerate(ops) if o.ret is not None])
    n = len(events)
    # a doubly linked list over the entries (-1 ends it), head sentinel at n
    nxt = list(range(1, n)) + [-1, 0 if n else -1]
    prv = [n] + list(range(n - 1)) + [-1]
    ret_entry = {}
    for e, (_, is_ret, i) in enumerate(events):
        if is_ret:
            ret_entry[i] = e

    def lift(e):
        for x in (e, ret_entry.get(events[e][2])):
            if x is not None:
                nxt[prv[x]] = nxt[x]
                if nxt[x] >= 0:
                    prv[nxt[x]] = prv[x]

    def unlift(e):
        for x in (ret_entry.get(events[e][2]), e):
            if x is not None:
                nxt[prv[x]] = x
                if nxt[x] >= 0:
                    prv[nxt[x]] = x

    remaining = len(ret_entry)      # completed operations not yet linearized
    linearized = 0
    state = initial
    cache = set()
    stack = []
    deepest, stuck = -1, None
    e = nxt[n]
    while remaining:
        _, is_ret, i = events[e]
        if not is_ret:
            ok, new = _step(state, ops[i])
            if ok and (linearized | 1 << i, new) not in cache:
                cache.add((linearized | 1 << i, new))
                stack.append((e, state))
                linearized |= 1 << i
                state = new
                lift(e)
                if i in ret_entry:
                    remaining -= 1
                e = nxt[n]
                continue
            e = nxt[e]
        else:
            if len(stack) > deepest:
                deepest, stuck = len(stack), ops[i]
            if not stack:
                break
            e, state = stack.pop()
            i = events[e][2]
            linearized &= ~(1 << i)
            unlift(e)
            if i in ret_entry:
                remaining += 1
            e = nxt[e]
    if not remaining:
        return True, None
    return False, ("no linearization gets past %s (at most %d of %d operations linearized)"
                   % (_show(stuck), deepest, len(ops)))


def _show(op):
    return "client %s %s %r=%r [%s, %s]" % (op.client, "SET" if op.kind == "w" else "GET",
                                            op.key, op.value, op.call, op.ret)


def check_history(ops):
    """check every key on its own; returns {key: (ok, why)}"""
    by_key = collections.defaultdict(list)
    for o in ops:
        by_key[o.key].append(o)
    return {k: check_register(v) for k, v in sorted(by_key.items())}


# ---------------------------------------------------------------- self-test

def _brute_force(ops, initial=None):
    """every order of the operations that respects real time, and every
    subset of the pending writes: exponential, for tiny histories only"""
    done = [o for o in ops if o.ret is not None]
    pending = [o for o in ops if o.ret is None and o.kind == "w"]
    for r in range(len(pending) + 1):
        for extra in itertools.combinations(pending, r):
            chosen = done + list(extra)
            for perm in itertools.permutations(chosen):
                if any(b.ret is not None and b.ret < a.call
                       for x, a in enumerate(perm) for b in perm[x + 1:]):
                    continue
                state, ok = initial, True
                for o in perm:
                    ok, state = _step(state, o)
                    if not ok:
                        break
                if ok:
                    return True
    return False


def _random_history(rng, nops, nclients):
    """a history produced by a real atomic register (linearizable by
    construction): each operation takes effect at a random instant inside
    its interval; some writes lose their response"""
    ops, state, t = [], None, 0
    busy = [0] * nclients
    points = []
    for n in range(nops):
        c = rng.randrange(nclients)
        call = max(busy[c], t) + rng.randrange(3)
        point = call + rng.randrange(1, 4)
        ret = point + rng.randrange(1, 4)
        busy[c] = ret + 1
        t = call
        kind = rng.choice("wr")
        points.append((point, n, c, kind, call, ret))
    for point, n, c, kind, call, ret in sorted(points):
        if kind == "w":
            state = "v%d" % n
            value = state
        else:
            value = state
        if kind == "w" and rng.random() < 0.1:
            ret = None
        ops.append(Op(c, "k", kind, value, call, ret))
    return ops


def _self_test():
    failures = 0

    def expect(name, ops, want):
        nonlocal failures
        ok, why = check_register([Op(*o) for o in ops])
        if ok != want:
            failures += 1
            print("FAIL: %s: checker says %s, want %s" % (name, ok, want))
        else:
            print("ok: %s: %s%s" % (name, "linearizable" if ok else "rejected",
                                     "" if ok else " (" + why + ")"))

    # (client, key, kind, value, call, ret)
    expect("sequential writes and reads", [
        (1, "k", "r", None, 0, 1), (1, "k", "w", "a", 2, 3), (2, "k", "r", "a", 4, 5),
        (2, "k", "w", "b", 6, 7), (1, "k", "r", "b", 8, 9)], True)
    expect("a read concurrent with a write sees the new value", [
        (1, "k", "w", "a", 0, 10), (2, "k", "r", "a", 1, 2)], True)
    expect("a read concurrent with a write sees the old value", [
        (1, "k", "w", "a", 0, 10), (2, "k", "r", None, 1, 2)], True)
    expect("concurrent writes ordered by what later reads see", [
        (1, "k", "w", "a", 0, 5), (2, "k", "w", "b", 1, 6), (3, "k", "r", "a", 7, 8),
        (3, "k", "r", "a", 9, 10)], True)
    expect("a write without response, observed", [
        (1, "k", "w", "a", 0, None), (2, "k", "r", "a", 5, 6)], True)
    expect("a write without response, never applied", [
        (1, "k", "w", "a", 0, None), (2, "k", "r", None, 5, 6), (2, "k", "r", None, 7, 8)], True)
    expect("unobserved writes without response are no obstacle", [
        (1, "k", "w", "a", 0, 1)] + [(3, "k", "w", "p%d" % x, x, None) for x in range(40)] +
        [(2, "k", "r", "a", 50, 51)], True)
    expect("touching intervals count as concurrent", [
        (1, "k", "w", "a", 0, 5), (2, "k", "r", None, 5, 6)], True)
    # known-bad
    expect("lost write: an acknowledged SET, then a read of the old value", [
        (1, "k", "w", "a", 0, 1), (1, "k", "w", "b", 2, 3), (2, "k", "r", "a", 4, 5)], False)
    expect("lost write: an acknowledged SET, then a read of nothing", [
        (1, "k", "w", "a", 0, 1), (2, "k", "r", None, 2, 3)], False)
    expect("new value seen, then the old one (not linearizable)", [
        (1, "k", "w", "a", 0, 10), (2, "k", "r", "a", 1, 2), (3, "k", "r", None, 3, 4)], False)
    expect("two readers disagree on the order of two writes", [
        (1, "k", "w", "a", 0, 10), (2, "k", "w", "b", 0, 10), (3, "k", "r", "a", 1, 2),
        (3, "k", "r", "b", 3, 4), (4, "k", "r", "b", 1, 2), (4, "k", "r", "a", 3, 4)], False)
    expect("lost write among unobserved writes without response", [
        (1, "k", "w", "a", 0, 1)] + [(3, "k", "w", "p%d" % x, x, None) for x in range(40)] +
        [(1, "k", "w", "b", 45, 46), (2, "k", "r", "a", 50, 51)], False)
    expect("a value nobody wrote", [
        (1, "k", "w", "a", 0, 1), (2, "k", "r", "z", 2, 3)], False)
    expect("a read before the write it returns", [
        (2, "k", "r", "a", 0, 1), (1, "k", "w", "a", 2, 3)], False)

    # per key: a good key does not hide a bad one
    both = [Op(1, "x", "w", "a", 0, 1), Op(2, "x", "r", "a", 2, 3),
            Op(1, "y", "w", "a", 0, 1), Op(2, "y", "r", None, 2, 3)]
    res = check_history(both)
    if not (res["x"][0] and not res["y"][0]):
        failures += 1
        print("FAIL: check_history per key: %r" % (res,))

    # random small histories: WGL agrees with brute force; the ones made by a
    # real register pass; mutating one read breaks some of them
    rng = random.Random(12345)
    agree = rejected = 0
    for n in range(600):
        ops = _random_history(rng, rng.randrange(2, 8), rng.randrange(1, 4))
        if n % 2:
            reads = [x for x, o in enumerate(ops) if o.kind == "r"]
            if reads:
                x = rng.choice(reads)
                values = [None] + [o.value for o in ops if o.kind == "w"]
                ops[x] = ops[x]._replace(value=rng.choice(values))
        ok, _ = check_register(ops)
        brute = _brute_force(ops)
        if n % 2 == 0 and not ok:
            failures += 1
            print("FAIL: a real register's history rejected: %r" % (ops,))
        if ok != brute:
            failures += 1
            print("FAIL: WGL %s, brute force %s on %r" % (ok, brute, ops))
        agree += 1
        rejected += not ok
    print("ok: %d random histories, WGL == brute force, %d rejected" % (agree, rejected))
    if rejected == 0:
        failures += 1
        print("FAIL: no random history was rejected: the mutations test nothing")

    # a few hundred operations per key stay fast
    big = _random_history(random.Random(7), 400, 8)
    ok, why = check_register(big)
    if not ok:
        failures += 1
        print("FAIL: 400-operation register history rejected: %s" % why)
    print("self-test: %d failures" % failures)
    return 1 if failures else 0


def load_history(path):
    with open(path) as f:
        return [Op(d["client"], d["key"], d["op"], d["value"], d["call"], d["ret"])
                for d in map(json.loads, f) if d]


def dump_history(ops, path):
    """write ops in the format load_history reads"""
    with open(path, "w") as f:
        for o in ops:
            f.write(json.dumps({"client": o.client, "key": o.key, "op": o.kind,
                                "value": o.value, "call": o.call, "ret": o.ret}) + "\n")


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    if argv[1] == "--self-test":
        return _self_test()
    bad = 0
    for key, (ok, why) in check_history(load_history(argv[1])).items():
        print("%s: %s" % (key, "linearizable" if ok else "NOT linearizable: " + why))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
