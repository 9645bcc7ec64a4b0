"""expect: the pass/fail tally the Python tests share (test_python.py,
test_cluster.py): check() and eq() count, done() prints the tally and gives
the exit status; app_main() runs an application test (Celery, RQ) against a
server of its own."""

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
    """run each scenario scope[name](o, work) of the comma-separated names in one temp dir, any exception
    counting as a failure (where it came from printed); the tally's exit status (rdb_cross.py,
    aof_cross.py, save_points.py, aof_rewrite.py, ...)"""
    import shutil
    import tempfile
    import traceback
    work = tempfile.mkdtemp(prefix=label.replace("_", "-") + "-")
    try:
        for name in names.split(","):
            before = failed
            try:
                scope[name](o, work)
            except Exception as e:  # noqa: BLE001 (a scenario's error of any kind is its failure)
                where = "\n  ".join("%s:%d %s" % (f.filename.rsplit("/", 1)[-1], f.lineno, f.line)
                                     for f in traceback.extract_tb(e.__traceback__))
                check(False, "%s: exception: %r at\n  %s" % (name, e, where))
            print("%-12s %s" % (name, "ok" if failed == before else "FAILED"), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return done(label)


def main(scope, label, only, extra=()):
    """the command line of a differential scenario script -- --candidate SERVER [--redis REDIS] [--threads N]
    [--only a,b] and each (flag, add_argument keywords) of extra -- then scenarios() of scope; 77 (skip)
    when redis-server is missing"""
    import argparse
    import os
    ap = argparse.ArgumentParser()
    ap.add_argument("--candidate", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--only", default=only)
    for flag, kw in extra:
        ap.add_argument(flag, **kw)
    o = ap.parse_args()
    o.candidate = os.path.abspath(o.candidate)
    if not os.access(o.redis, os.X_OK):
        print("SKIP: %s not found" % o.redis)
        return 77
    return scenarios(scope, o, o.only, label)


def app_main(argv, doc, label, version, module, source, run):
    """main() of a test of an application that imports a module of its own (Celery's tasks, RQ's jobs):
    argv is SERVER [THREADS]; starts SERVER on a free port, writes `source` as `module`.py into a temp
    folder, calls run(folder, port), and counts an exception, a dead server or a bad exit status as
    failures (the server log printed then); the tally's exit status"""
    import os
    import tempfile
    from diff import Server  # tests/compat/diff.py, on the caller's path
    if len(argv) < 2:
        print(doc)
        return 2
    srv = Server(argv[1], threads=int(argv[2]) if len(argv) > 2 else 4, name=label)
    srv.start()
    print("%s %s against %s on port %d" % (label, version, argv[1], srv.port))
    with tempfile.TemporaryDirectory(prefix="pc_%s_" % label) as folder:
        with open(os.path.join(folder, module + ".py"), "w") as f:
            f.write(source)
        try:
            run(folder, srv.port)
        except Exception as e:  # noqa: BLE001 (a crash of the test is a failure, with the server log)
            check(False, "exception: %r" % (e,))
    alive = srv.alive()
    st = srv.stop()
    check(alive, "server still running at the end")
    eq(st, 0, "server exit status after SIGTERM")
    if failed:
        print(srv.tail())
    elif not os.environ.get("PC_KEEP_LOGS"):
        os.unlink(srv.log)
    return done("test_" + label)
