#!/usr/bin/python3
"""test_rq.py SERVER [THREADS]: RQ (Debian python3-rq), unchanged, with the
server as its only store: jobs enqueued on two queues, a worker (a separate
`rq worker --burst` process) runs them, and their results are read back
from the server: return values (RQ 1.12+ keeps each run's result in a
stream, XADD with MAXLEN, read back with XREVRANGE), a failing job's
exception and its failed registry, a job that depends on another, a job
retried once, job metadata, and the registries emptied once done.  RQ's
keys (the queues, the jobs' hashes, the registries' sorted sets, the result
streams) live on several shards.  Starts its own server on a free port;
SERVER may be redis-server, to check the test itself."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import expect  # noqa: E402
from expect import check, eq  # noqa: E402

try:
    import redis
    import rq
    from rq import Queue, Retry
    from rq.job import Job
except ImportError:
    print("SKIP: python3-rq or python3-redis is not installed (apt-get install python3-rq python3-redis)")
    sys.exit(77)

TIMEOUT = 120  # the burst worker's whole run (a busy 2-core machine)

# the jobs' module: the worker imports it by name, from a folder of its own
JOBS = '''
import redis
import os

def add(x, y):
    return x + y

def fail(msg):
    raise ValueError(msg)

def flaky(key):
    r = redis.Redis(port=int(os.environ["PC_RQ_PORT"]), db=3)
    if r.incr(key) < 2:
        raise RuntimeError("first try fails")
    return "ok after %d tries" % int(r.get(key))

def big(n):
    return {"items": list(range(n)), "text": "x" * n}
'''


def run(folder, port):
    sys.path.insert(0, folder)
    import pc_jobs as jobs
    r = redis.Redis(port=port)
    high, low = Queue("high", connection=r), Queue("low", connection=r)
    sums = [low.enqueue(jobs.add, i, i) for i in range(30)]
    failing = high.enqueue(jobs.fail, "boom")
    first = high.enqueue(jobs.add, 20, 1)
    after = low.enqueue(jobs.add, 40, 2, depends_on=first)
    retried = high.enqueue(jobs.flaky, "flaky:1", retry=Retry(max=2))
    large = low.enqueue(jobs.big, 5000, meta={"owner": "test"})
    eq(high.count, 3, "jobs waiting on the high queue")
    env = dict(os.environ, PC_RQ_PORT=str(port), PYTHONPATH=folder)
    w = subprocess.run([sys.executable, "-m", "rq.cli", "worker", "--burst", "--url", "redis://127.0.0.1:%d/0" % port,
                        "high", "low"], cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=TIMEOUT, text=True)
    check(w.returncode == 0, "the burst worker's exit status: %s\n%s" % (w.returncode, w.stdout[-3000:]))
    eq([j.return_value() for j in sums], [2 * i for i in range(30)], "30 jobs' return values (result streams)")
    eq(Job.fetch(sums[3].id, connection=r).latest_result().return_value, 6, "a result read back by job id")
    eq(failing.get_status(refresh=True), "failed", "the failing job's status")
    check("ValueError: boom" in (failing.latest_result().exc_string or ""),
          "the failing job's exception: %r" % failing.latest_result().exc_string)
    eq(high.failed_job_registry.get_job_ids(), [failing.id], "the failed registry")
    eq(after.return_value(), 42, "a job run after the job it depends on")
    eq(retried.return_value(), "ok after 2 tries", "a job retried once")
    eq(large.return_value()["items"][-1], 4999, "a large return value")
    eq(Job.fetch(large.id, connection=r).meta.get("owner"), "test", "job metadata")
    eq((high.count, low.count), (0, 0), "the queues are empty")
    eq(low.finished_job_registry.count, 32, "the low queue's finished registry")
    eq(r.type("rq:results:%s" % sums[0].id), b"stream", "a result is a stream")


def main():
    return expect.app_main(sys.argv, __doc__, "rq", rq.__version__, "pc_jobs", JOBS, run)


if __name__ == "__main__":
    sys.exit(main())
