#!/usr/bin/env bash
# test_load.sh LOAD SERVER [REDIS_SERVER]: percore-load (client/load.c) against
# real servers.  Counts and keys are checked, speed never.
#   1. percore --threads 4, a fixed --requests count, pipelined, GET:SET 1:1:
#      exit 0, exactly that many replies counted, no errors, the keys it wrote
#      are there (0 < DBSIZE <= keyspace, named key:NNNNNNNNN, --data-size
#      bytes), and the --csv row says the same; then a --duration run, Zipf.
#   2. percore with requirepass: every request gets -NOAUTH; it is counted,
#      printed and makes the exit status non-zero.  A port nobody listens on:
#      connection failures, non-zero.
#   3. --cluster against a 3-node Redis Cluster: zero errors, every master
#      got keys; then slots moved to another master while it runs: the
#      -MOVED replies are followed, still zero errors, and SIGTERM ends the
#      run with a report.
#   4. --cluster against percore with `cluster-ports yes`, once the server
#      has that key and answers CLUSTER SLOTS; another target is one
#      cluster_load call.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../compat/clients/lib.sh"
LOAD=${1:?usage: test_load.sh LOAD SERVER [REDIS_SERVER]}
SERVER=${2:?usage: test_load.sh LOAD SERVER [REDIS_SERVER]}
REDIS=${3:-$(command -v redis-server)}
command -v redis-cli >/dev/null || { echo "SKIP: redis-cli not installed (apt-get install redis-tools)"; exit 77; }

OUT=$LOGDIR/load-$$.out
ERR=$LOGDIR/load-$$.err
CSV=$LOGDIR/load-$$.csv
rm -f "$CSV"

# run_load ARGS...: runs percore-load, sets ST, output in $OUT and $ERR
run_load() {
  timeout 120 "$LOAD" "$@" >"$OUT" 2>"$ERR"; ST=$?
}
# field NAME: the number after "NAME: " in the last run's output
field() { sed -n "s/^$1: \([0-9]*\)\$/\1/p" "$OUT"; }
expect_field() {
  local got; got=$(field "$1")
  if [ "$got" = "$2" ]; then pass; else fail "$3: '$1' is '$got', want $2"; cat "$OUT" "$ERR" >&2; fi
}
expect_status() {
  if [ "$ST" = "$1" ]; then pass; else fail "$2: exit status $ST, want $1"; cat "$OUT" "$ERR" >&2; fi
}

# cluster_load NAME SEED_PORT: a clean --cluster run through that seed
cluster_load() {
  run_load --port "$2" --cluster --threads 2 --clients 2 --pipeline 8 --keyspace 3000 --requests 12000
  expect_status 0 "$1 --cluster"
  expect_field requests 12000 "$1 --cluster"
  expect_field errors 0 "$1 --cluster"
  expect_field "connection failures" 0 "$1 --cluster"
}

# ---- 1. percore, counted requests -------------------------------------------
start_server PC "$SERVER" --threads 4 || exit 1
echo "percore on $PC_PORT (threads 4)"
run_load --port "$PC_PORT" --threads 2 --clients 3 --pipeline 8 --ratio 1:1 \
  --keyspace 5000 --data-size 24 --requests 20000 --csv "$CSV"
expect_status 0 "percore run"
expect_field requests 20000 "percore run"
expect_field errors 0 "percore run"
expect_field "failed (no reply)" 0 "percore run"
n=$(redis-cli -p "$PC_PORT" dbsize)
if [ "${n:-0}" -gt 0 ] 2>/dev/null && [ "$n" -le 5000 ]; then pass
else fail "DBSIZE after the run is '$n', want 1..5000"; fi
bad=$(redis-cli -p "$PC_PORT" --scan | grep -cvE '^key:[0-9]{9}$')
if [ "$bad" = 0 ]; then pass; else fail "$bad keys not named key:NNNNNNNNN"; fi
key=$(redis-cli -p "$PC_PORT" randomkey)
len=$(redis-cli -p "$PC_PORT" strlen "$key")
if [ "$len" = 24 ]; then pass; else fail "STRLEN $key is '$len', want --data-size 24"; fi
row=$(sed -n 2p "$CSV")
if [ "$(sed -n 1p "$CSV" | cut -d, -f1-3)" = clients,threads,pipeline ] &&
   [ "$(echo "$row" | cut -d, -f1-4)" = 3,2,8,1:1 ] &&
   [ "$(echo "$row" | awk -F, '{print $(NF-1), $NF}')" = "0 20000" ]; then pass
else fail "CSV rows: $(cat "$CSV")"; fi

run_load --port "$PC_PORT" --duration 1 --distribution zipf:0.99 --ratio 9:1 --quiet
expect_status 0 "percore --duration run"
if grep -Eq '^requests [1-9][0-9]* errors 0 ' "$OUT"; then pass
else fail "--duration --quiet summary: $(cat "$OUT" "$ERR")"; fi
stop_server PC

# ---- 2. errors are counted and fail the run --------------------------------
start_server PA "$SERVER" --threads 4 || exit 1
redis-cli -p "$PA_PORT" config set requirepass secret >/dev/null
run_load --port "$PA_PORT" --clients 2 --pipeline 4 --requests 1000
expect_status 1 "requirepass run"
expect_field requests 1000 "requirepass run"
expect_field errors 1000 "requirepass run"
if grep -q 'first: NOAUTH' "$ERR"; then pass; else fail "first error not printed: $(cat "$ERR")"; fi
stop_server PA

run_load --port "$(free_port)" --requests 100
expect_status 1 "run against a closed port"
n=$(field "connection failures")
if [ "${n:-0}" -gt 0 ] 2>/dev/null; then pass; else fail "closed port: connection failures '$n'"; fi

# ---- 3. --cluster: a 3-node Redis Cluster ----------------------------------
if [ -z "$REDIS" ] || [ ! -x "$REDIS" ]; then
  echo "redis-server not installed: Redis Cluster part skipped"
else
  for i in 1 2 3; do
    start_server "R$i" "$REDIS" --cluster-enabled yes \
      --cluster-config-file "$LOGDIR/nodes-$$-$i.conf" || exit 1
  done
  if ! redis-cli --cluster create "127.0.0.1:$R1_PORT" "127.0.0.1:$R2_PORT" "127.0.0.1:$R3_PORT" \
       --cluster-yes >"$LOGDIR/cluster-create-$$.log" 2>&1; then
    fail "redis-cli --cluster create"; cat "$LOGDIR/cluster-create-$$.log" >&2
  fi
  for port in "$R1_PORT" "$R2_PORT" "$R3_PORT"; do
    for _ in $(seq 1 200); do
      redis-cli -p "$port" cluster info | grep -q cluster_state:ok && break
      sleep 0.05
    done
  done
  cluster_load redis "$R1_PORT"
  for port in "$R1_PORT" "$R2_PORT" "$R3_PORT"; do
    n=$(redis-cli -p "$port" dbsize)
    if [ "${n:-0}" -gt 0 ] 2>/dev/null; then pass; else fail "master $port got no keys (DBSIZE '$n')"; fi
  done

  # -MOVED: slots 0..2999 pass from the first master to the second while
  # GETs run (no keys, so CLUSTER SETSLOT needs no migration)
  for port in "$R1_PORT" "$R2_PORT" "$R3_PORT"; do redis-cli -p "$port" flushall >/dev/null; done
  r1_id=$(redis-cli -p "$R1_PORT" cluster myid)
  r2_id=$(redis-cli -p "$R2_PORT" cluster myid)
  if [ "$(redis-cli -p "$R1_PORT" cluster countkeysinslot 0)" != 0 ] || [ -z "$r2_id" ]; then
    fail "cluster not ready for the MOVED part"
  fi
  # CLUSTER SLOTS calls R1 served: the load's seed map, then its refresh
  # after the first -MOVED; waiting for them (not for time) orders the steps
  slots_calls() { redis-cli -p "$R1_PORT" info commandstats | sed -n 's/^cmdstat_cluster|slots:calls=\([0-9]*\),.*/\1/p'; }
  wait_slots_calls() {
    for _ in $(seq 1 400); do [ "$(slots_calls)" -ge "$1" ] 2>/dev/null && return; sleep 0.05; done
  }
  before=$(slots_calls)
  "$LOAD" --port "$R1_PORT" --cluster --ratio 1:0 --keyspace 1000 --duration 60 >"$OUT" 2>"$ERR" &
  load_pid=$!
  wait_slots_calls $((${before:-0} + 1))
  setslots() { for s in $(seq 0 2999); do echo "CLUSTER SETSLOT $s NODE $r2_id"; done | redis-cli -p "$1"; }
  moved=$( (setslots "$R2_PORT"; setslots "$R1_PORT") | sort | uniq -c)
  if [ "$(echo "$moved" | awk '{print $1, $2}')" = "6000 OK" ]; then pass
  else fail "CLUSTER SETSLOT replies: $moved"; fi
  wait_slots_calls $((${before:-0} + 2))
  kill -TERM "$load_pid"
  wait "$load_pid"; ST=$?
  expect_status 0 "redis --cluster with slots moving"
  expect_field errors 0 "redis --cluster with slots moving"
  n=$(field "redirects (MOVED)")
  if [ "${n:-0}" -gt 0 ] 2>/dev/null; then pass
  else fail "no -MOVED followed (redirects '$n'); first master $r1_id"; cat "$OUT" "$ERR" >&2; fi
  for i in 1 2 3; do stop_server "R$i"; done
fi

# percore's shard-aware cluster ports (shard i on port+1+i), when it has them
if "$SERVER" --help 2>&1 | grep -q cluster-ports; then
  start_server PCC "$SERVER" --threads 4 --cluster-ports yes || exit 1
  if redis-cli -p "$PCC_PORT" cluster slots | grep -q ERR; then
    echo "percore-server answers no CLUSTER SLOTS yet: its --cluster part skipped"
  else
    cluster_load percore "$PCC_PORT"
  fi
  stop_server PCC
else
  echo "percore-server has no cluster-ports yet: its --cluster part skipped"
fi

[ "$FAILS" = 0 ] && rm -f "$OUT" "$ERR" "$CSV" "$LOGDIR"/nodes-$$-*.conf "$LOGDIR/cluster-create-$$.log"
finish test_load
