"""expect: the pass/fail tally the Python tests share (test_python.py,
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


def scenarios(scope, o, names, label):
    """run each scenario scope[name](o, work) of the comma-separated names in one temp dir, an exception
    counting as a failure; the tally's exit status (rdb_cross.py, aof_cross.py, save_points.py)"""
    import shutil
    import subprocess
    import tempfile
    import redis
    work = tempfile.mkdtemp(prefix=label.replace("_", "-") + "-")
    try:
        for name in names.split(","):
            before = failed
            try:
                scope[name](o, work)
            except (OSError, redis.RedisError, subprocess.SubprocessError) as e:
                check(False, "%s: exception: %r" % (name, e))
            print("%-12s %s" % (name, "ok" if failed == before else "FAILED"), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return done(label)
