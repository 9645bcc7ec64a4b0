"""expect: the pass/fail tally the Python client tests share (test_python.py,
test_cluster.py): check() and eq() count, done() prints the tally and gives
the exit status."""

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what, flush=True)


def eq(got, want, what):
    check(got == want, "%s: got %r, want %r" % (what, got, want))


def done(name):
    print("%s: %d passed, %d failed" % (name, passed, failed))
    return 1 if failed else 0
