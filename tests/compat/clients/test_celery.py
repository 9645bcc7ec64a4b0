#!/usr/bin/python3
"""test_celery.py SERVER [THREADS]: Celery (Debian python3-celery, kombu's
Redis transport) with the server as its broker and its result backend, run
unchanged: a worker (a separate process, --pool=solo) takes tasks and
stores results; a task, a group, a chord (the backend's chord counter and
its ordered results), a task that fails and retries, a countdown (an ETA:
kombu's unacked hash and index, the visibility restore under its mutex)
and a worker stopped with a countdown task taken but not run, whose
successor runs it (the unacked message restored at the warm shutdown and
the next worker's start, under kombu's mutex: SET NX EX, WATCH/MULTI).
The broker's keys live on several shards.  Starts its own server on a free
port; SERVER may be redis-server, to check the test itself."""
import gc
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import expect  # noqa: E402
from expect import check, eq  # noqa: E402

try:
    import celery  # noqa: F401
    import redis
except ImportError:
    print("SKIP: python3-celery or python3-redis is not installed (apt-get install python3-celery python3-redis)")
    sys.exit(77)

TIMEOUT = 60  # a result not there by then is a failure (generous: a busy 2-core machine)

# the tasks' module: the worker imports it by name, from a folder of its own
TASKS = '''
import os
import time
from celery import Celery
port = os.environ["PC_CELERY_PORT"]
app = Celery("pc_tasks", broker="redis://127.0.0.1:%s/0" % port, backend="redis://127.0.0.1:%s/1" % port)
app.conf.broker_connection_retry_on_startup = False
app.conf.broker_transport_options = {"visibility_timeout": 2}  # unacked messages come back soon

@app.task
def add(x, y):
    return x + y

@app.task
def tsum(xs):
    return sum(xs)

@app.task(bind=True, max_retries=3)
def flaky(self, key):
    import redis
    r = redis.Redis(port=int(port), db=2)
    if r.incr(key) < 2:
        raise self.retry(countdown=0.2)
    return "ok after %d tries" % int(r.get(key))

@app.task
def stamp():
    return time.time()
'''


def worker(folder, port, name):
    env = dict(os.environ, PC_CELERY_PORT=str(port))
    return subprocess.Popen([sys.executable, "-m", "celery", "-A", "pc_tasks", "worker", "--pool=solo",
                             "--loglevel=warning", "--without-gossip", "--without-mingle", "--without-heartbeat",
                             "-n", "%s@%%h" % name],
                            cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


def stop(w):
    w.terminate()  # a warm shutdown: unacked messages go back to the queue
    try:
        return w.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        w.kill()
        w.wait()
        return "hung"


def run(folder, port):
    os.environ["PC_CELERY_PORT"] = str(port)
    sys.path.insert(0, folder)
    import pc_tasks as t
    from celery import chord, group
    w = worker(folder, port, "w1")
    try:
        eq(t.add.delay(2, 3).get(timeout=TIMEOUT), 5, "a task's result")
        eq(group(t.add.s(i, i) for i in range(20))().get(timeout=TIMEOUT), [2 * i for i in range(20)],
           "a group's results, in order")
        eq(chord((t.add.s(i, 1) for i in range(10)), t.tsum.s())().get(timeout=TIMEOUT), 55,
           "a chord's callback over its header's results")
        eq(t.flaky.delay("flaky:1").get(timeout=TIMEOUT), "ok after 2 tries", "a task that failed once, retried")
        sent = time.time()
        ran = t.stamp.apply_async(countdown=1).get(timeout=TIMEOUT)
        check(ran >= sent + 0.9, "a countdown task ran after its ETA (%.2f s after it was sent)" % (ran - sent))
        late = t.add.apply_async((40, 2), countdown=3)  # taken by w1 (held until its ETA), not run yet
        time.sleep(1)
    finally:
        eq(stop(w), 0, "the first worker's warm shutdown")
    w = worker(folder, port, "w2")
    try:
        eq(late.get(timeout=TIMEOUT), 42, "the countdown task the first worker held ran on the second")
    finally:
        eq(stop(w), 0, "the second worker's warm shutdown")
    r = redis.Redis(port=port)
    eq(r.llen("celery"), 0, "the queue is empty at the end")
    del late
    gc.collect()  # the results unsubscribe from the backend while it still runs


def main():
    return expect.app_main(sys.argv, __doc__, "celery", celery.__version__, "pc_tasks", TASKS, run)


if __name__ == "__main__":
    sys.exit(main())
