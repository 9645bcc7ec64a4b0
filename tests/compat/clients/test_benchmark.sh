#!/usr/bin/env bash
# test_benchmark.sh SERVER [THREADS]: redis-benchmark runs cleanly against the
# server (default --threads 2): every requested test prints its result line,
# no line mentions an error, and the server exits 0 on SIGTERM afterwards.
# Speed is printed, never judged.
#   1. the brief's command: -t set,get,incr,mset -n 100000 -P 16 -q (one key)
#   2. the same with -r 100000: random keys over every shard
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
SERVER=${1:?usage: test_benchmark.sh SERVER [THREADS]}
THREADS=${2:-2}
command -v redis-benchmark >/dev/null || { echo "SKIP: redis-benchmark not installed (apt-get install redis-tools)"; exit 77; }

start_server PC "$SERVER" --threads "$THREADS" || exit 1
echo "server on $PC_PORT (threads $THREADS)"

run_bench() {
  local desc=$1; shift
  local out st
  out=$(timeout 240 redis-benchmark -p "$PC_PORT" -t set,get,incr,mset -n 100000 -P 16 -q "$@" 2>&1); st=$?
  # -q prints progress with \r; keep the final lines
  local full
  full=$(printf '%s\n' "$out" | tr '\r' '\n' | sed 's/^ *//' | grep -v '^$')
  echo "$desc:"
  printf '%s\n' "$full" | grep -E 'requests per second' | sed 's/^/  /'
  if [ "$st" != 0 ]; then fail "$desc: redis-benchmark exit status $st"; fi
  if printf '%s\n' "$full" | grep -Eiq 'err|warn|could not|refused|reset|closed'; then
    fail "$desc: error output:"; printf '%s\n' "$full" | grep -Ei 'err|warn|could not|refused|reset|closed' | head -10 >&2
  else
    pass
  fi
  local t
  for t in SET GET INCR 'MSET (10 keys)'; do
    if printf '%s\n' "$full" | grep -q "^$t: .*requests per second"; then pass
    else fail "$desc: no result line for $t"; fi
  done
}

run_bench "single key"
run_bench "random keys (-r 100000)" -r 100000

# the server still answers on every shard and its data is sane
for k in a b c d e f g h "{x}1" "{y}2"; do
  if [ "$(redis-cli -p "$PC_PORT" set "$k" v)" = OK ] && [ "$(redis-cli -p "$PC_PORT" get "$k")" = v ]; then pass
  else fail "SET/GET $k after the benchmark"; fi
done
n=$(redis-cli -p "$PC_PORT" dbsize)
if [ "${n:-0}" -gt 1000 ] 2>/dev/null; then pass; else fail "DBSIZE after -r 100000 run is '$n', want > 1000"; fi

stop_server PC
finish test_benchmark
