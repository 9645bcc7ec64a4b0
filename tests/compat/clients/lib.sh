# lib.sh: helpers for the client compatibility scripts (sourced, bash).
# start_server VAR BIN [args...]: starts BIN on a free port with --save ''
#   --appendonly no (redis-server loses --threads N), waits for PING, and sets
#   VAR_PORT VAR_PID VAR_LOG.  stop_server VAR: SIGTERM, returns its exit status.
# fail MSG: counts a failure.  finish NAME: prints "N passed, M failed", exits.
PASSES=0
FAILS=0
LOGDIR=${PC_LOG_DIR:-$(mktemp -d)}

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
pass() { PASSES=$((PASSES + 1)); }

# a port free now, and port + 10000 too (a Redis Cluster node's bus port, which
# may otherwise be some connection's ephemeral port)
free_port() {
  /usr/bin/python3 - <<'PY'
import random, socket, os, time
rng = random.Random(os.getpid() ^ int(time.time() * 1e6))
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        return True
    except OSError:
        return False
    finally:
        s.close()
for _ in range(2000):
    p = rng.randrange(20000, 32000)
    if free(p) and free(p + 10000):
        print(p)
        break
PY
}

start_server() {
  local var=$1 bin=$2; shift 2
  local args=() is_redis=0
  case "$(basename "$bin")" in *redis-server*) is_redis=1 ;; esac
  while [ $# -gt 0 ]; do
    if [ "$is_redis" = 1 ] && [ "$1" = "--threads" ]; then shift 2; continue; fi
    args+=("$1"); shift
  done
  args+=(--save "" --appendonly no) # either server: no dump.rdb written into the shared cwd
  local try port log pid
  for try in 1 2 3 4; do
    port=$(free_port)
    log="$LOGDIR/$var-$port.log"
    "$bin" --port "$port" --bind 127.0.0.1 "${args[@]}" >"$log" 2>&1 </dev/null &
    pid=$!
    local i
    for i in $(seq 1 400); do
      if ! kill -0 "$pid" 2>/dev/null; then break; fi
      if [ "$(redis-cli -p "$port" ping 2>/dev/null)" = "PONG" ]; then
        printf -v "${var}_PORT" '%s' "$port"
        printf -v "${var}_PID" '%s' "$pid"
        printf -v "${var}_LOG" '%s' "$log"
        return 0
      fi
      sleep 0.05
    done
    if kill -0 "$pid" 2>/dev/null; then
      kill -9 "$pid"; wait "$pid" 2>/dev/null
      echo "server $bin did not answer PING in 20 s; log $log:" >&2; tail -20 "$log" >&2
      return 1
    fi
    wait "$pid" 2>/dev/null
  done
  echo "server $bin exited at start; log $log:" >&2; tail -20 "$log" >&2
  return 1
}

stop_server() {
  local var=$1 pidv="${1}_PID" logv="${1}_LOG"
  local pid=${!pidv} st
  [ -n "$pid" ] || return 0
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid"; st=$?
    fail "$var server (pid $pid) had died already (status $st); log ${!logv}"
    tail -30 "${!logv}" >&2
    return 1
  fi
  kill -TERM "$pid"
  local i
  for i in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid"; wait "$pid" 2>/dev/null
    fail "$var server ignored SIGTERM for 15 s"
    return 1
  fi
  wait "$pid"; st=$?
  if [ "$st" != 0 ]; then
    fail "$var server exit status $st after SIGTERM (want 0); log ${!logv}"
    tail -30 "${!logv}" >&2
    return 1
  fi
  pass
  [ "$FAILS" = 0 ] && [ -z "${PC_KEEP_LOGS:-}" ] && rm -f "${!logv}"
  return 0
}

finish() {
  echo "$1: $PASSES passed, $FAILS failed"
  [ "$FAILS" = 0 ]
  exit $?
}
