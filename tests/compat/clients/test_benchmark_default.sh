#!/usr/bin/env bash
# test_benchmark_default.sh SERVER THREADS: the whole default redis-benchmark
# run (redis-benchmark -q -n N, PING_INLINE ... LRANGE_600, MSET) completes
# against percore with no error, and leaves the same data a real
# redis-server 7 leaves after the same run: every key, its type, and its size
# (LLEN mylist, SCARD myset, ZCARD myzset, HLEN myhash, the strings' values).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
SERVER=${1:?usage: test_benchmark_default.sh SERVER THREADS [REQUESTS]}
THREADS=${2:-1}
N=${3:-100000}
command -v redis-benchmark >/dev/null || { echo "SKIP: redis-benchmark not installed (apt-get install redis-tools)"; exit 77; }
command -v redis-server >/dev/null || { echo "SKIP: redis-server not installed"; exit 77; }

# the data a run leaves: one line per key, "key type size value-or-nothing"
snapshot() {
  local port=$1 k t size
  redis-cli -p "$port" --scan | LC_ALL=C sort | while IFS= read -r k; do
    t=$(redis-cli -p "$port" type "$k")
    case "$t" in
      string) size=$(redis-cli -p "$port" get "$k") ;;
      list) size=$(redis-cli -p "$port" llen "$k") ;;
      set) size=$(redis-cli -p "$port" scard "$k") ;;
      zset) size=$(redis-cli -p "$port" zcard "$k") ;;
      hash) size=$(redis-cli -p "$port" hlen "$k") ;;
      *) size=? ;;
    esac
    printf '%s %s %s\n' "$k" "$t" "$size"
  done
}

run_default() {
  local who=$1 port=$2 out st full
  out=$(timeout 900 redis-benchmark -p "$port" -q -n "$N" 2>&1); st=$?
  full=$(printf '%s\n' "$out" | tr '\r' '\n' | sed 's/^ *//' | grep -v '^$' | grep -v 'rps=')
  printf '%s\n' "$full" | sed "s/^/  $who: /"
  if [ "$st" != 0 ]; then fail "$who: redis-benchmark exit status $st"; fi
  if printf '%s\n' "$full" | grep -Eiq 'err|warn|could not|refused|reset|closed'; then
    fail "$who: error output"
  else
    pass
  fi
  local t
  for t in PING_INLINE PING_MBULK SET GET INCR LPUSH RPUSH LPOP RPOP SADD HSET SPOP ZADD ZPOPMIN \
           'LPUSH (needed to benchmark LRANGE)' 'LRANGE_100 (first 100 elements)' \
           'LRANGE_300 (first 300 elements)' 'LRANGE_500 (first 500 elements)' \
           'LRANGE_600 (first 600 elements)' 'MSET (10 keys)'; do
    if printf '%s\n' "$full" | grep -qF "$t: "; then pass; else fail "$who: no result line for $t"; fi
  done
}

start_server REF redis-server || exit 1
start_server PC "$SERVER" --threads "$THREADS" || exit 1
echo "redis on $REF_PORT, percore on $PC_PORT (threads $THREADS), -n $N"
run_default redis "$REF_PORT"
run_default percore "$PC_PORT"
want=$(snapshot "$REF_PORT")
got=$(snapshot "$PC_PORT")
if [ "$want" = "$got" ]; then
  pass
  printf '%s\n' "$got" | sed 's/^/  data: /'
else
  fail "the data left differs from Redis's"
  diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -20 >&2
fi
if stop_server PC; then pass; else fail "percore did not exit 0 on SIGTERM"; fi
stop_server REF >/dev/null
finish test_benchmark_default
