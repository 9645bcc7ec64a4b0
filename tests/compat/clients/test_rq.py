#!/usr/bin/python3
"""test_rq.py SERVER [THREADS]: RQ (Debian's python3-rq) with the server as its store: jobs
enqueued, run by a SimpleWorker in burst mode, their results stored as RQ 1.12+ stores them
(XADD to rq:results:<id>, read back with XREVRANGE), a failed job's result and exception, and the
queue and registries afterwards.  Exit 0 when every check holds, 77 when python3-rq or
python3-redis is missing."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
try:
    import redis
    import rq
    from rq.results import Result
except ImportError:
    print("SKIP: python3-rq or python3-redis is not installed")
    sys.exit(77)
from diff import Server  # noqa: E402
from expect import check, eq  # noqa: E402
import expect  # noqa: E402


def main():
    binary = sys.argv[1]
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    srv = Server(binary, threads=threads, name="rq")
    srv.start()
    try:
        r = redis.Redis(port=srv.port)
        q = rq.Queue("default", connection=r)
        ok_jobs = [q.enqueue("operator.add", i, 10 * i) for i in range(5)]
        bad = q.enqueue("operator.truediv", 1, 0)
        eq(q.count, 6, "six jobs queued")
        rq.SimpleWorker([q], connection=r).work(burst=True)
        for i, job in enumerate(ok_jobs):
            job.refresh()
            eq(job.get_status(), "finished", "job %d finished" % i)
            eq(job.return_value(), 11 * i, "job %d's return value" % i)
            latest = job.latest_result()
            check(latest is not None and latest.type == Result.Type.SUCCESSFUL, "job %d's latest result" % i)
            eq(len(job.results()), 1, "job %d: one result in its stream" % i)
            eq(r.xlen("rq:results:%s" % job.id), 1, "job %d's results stream" % i)
        bad.refresh()
        eq(bad.get_status(), "failed", "the failing job failed")
        latest = bad.latest_result()
        check(latest is not None and latest.type == Result.Type.FAILED and "ZeroDivisionError" in latest.exc_string,
              "the failed job's result holds its exception")
        eq(q.count, 0, "the queue is empty")
        eq(q.finished_job_registry.count, 5, "five in the finished registry")
        eq(q.failed_job_registry.count, 1, "one in the failed registry")
    finally:
        srv.stop()
    sys.exit(expect.done("test_rq"))


if __name__ == "__main__":
    main()
