#!/usr/bin/env bash
# test_cluster.sh SERVER [THREADS]: cluster-aware clients, unchanged, against
# a server with --cluster-ports yes (default --threads 4; shard i listens on
# port + 1 + i):
#   1. redis-cli -c, seeded with one shard's port, sets and gets keys that
#      live on every shard by following MOVED; each key then exists on exactly
#      one shard port, the one CLUSTER SLOTS names for its slot.
#   2. redis-cli --cluster check finds every slot covered.
#   3. redis-benchmark --cluster -t set,get -n 100000 (seeded with a shard
#      port, then the main port) prints its result lines and no error, and its
#      keys land on every shard (with 3 shards or more: redis-benchmark
#      refuses a cluster of fewer masters).
#   4. redis-py's RedisCluster (test_cluster.py): SET/GET across all shards,
#      MGET of {tag}ged keys, the nodes it discovers.
# Speed is printed, never judged.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
SERVER=${1:?usage: test_cluster.sh SERVER [THREADS]}
THREADS=${2:-4}
command -v redis-cli >/dev/null || { echo "SKIP: redis-cli not installed (apt-get install redis-tools)"; exit 77; }
command -v redis-benchmark >/dev/null || { echo "SKIP: redis-benchmark not installed (apt-get install redis-tools)"; exit 77; }

start_server PC "$SERVER" --threads "$THREADS" --cluster-ports yes || exit 1
FIRST=$((PC_PORT + 1))
LAST=$((PC_PORT + THREADS))
echo "server on $PC_PORT (threads $THREADS), shard ports $FIRST..$LAST"

# 1. redis-cli -c follows MOVED from one shard's port to every other
keys=()
for i in $(seq 0 31); do keys+=("cl:$i"); done
for k in "${keys[@]}"; do
  if [ "$(redis-cli -c -p "$FIRST" set "$k" "v-$k")" = OK ]; then pass; else fail "redis-cli -c -p $FIRST set $k"; fi
done
for k in "${keys[@]}"; do
  got=$(redis-cli -c -p "$LAST" get "$k")
  if [ "$got" = "v-$k" ]; then pass; else fail "redis-cli -c -p $LAST get $k: '$got'"; fi
done
# the owner CLUSTER SLOTS names holds it, and only it
slots=$(redis-cli -p "$PC_PORT" cluster slots)
for k in "${keys[@]}"; do
  slot=$(redis-cli -p "$PC_PORT" cluster keyslot "$k")
  owner=$(printf '%s\n' "$slots" | awk -v s="$slot" 'NR % 6 == 1 { a = $1 } NR % 6 == 2 { b = $1 } NR % 6 == 4 && s >= a && s <= b { print $1 }')
  holders=""
  for p in $(seq "$FIRST" "$LAST"); do
    [ "$(redis-cli -p "$p" exists "$k")" = 1 ] && holders="$holders $p"
  done
  if [ "$holders" = " $owner" ]; then pass; else fail "$k (slot $slot): held by ports '$holders', CLUSTER SLOTS says $owner"; fi
done
used=0
for p in $(seq "$FIRST" "$LAST"); do [ "$(redis-cli -p "$p" dbsize)" -gt 0 ] && used=$((used + 1)); done
if [ "$used" = "$THREADS" ]; then pass; else fail "the 32 keys live on $used of $THREADS shards"; fi

# 2. redis-cli --cluster check
out=$(timeout 60 redis-cli --cluster check "127.0.0.1:$FIRST" 2>&1)
if printf '%s\n' "$out" | grep -q "All 16384 slots covered" && ! printf '%s\n' "$out" | grep -q ERR; then pass
else fail "redis-cli --cluster check:"; printf '%s\n' "$out" | tail -20 >&2; fi

# 3. redis-benchmark --cluster
run_bench() {
  local seed=$1 out st full
  redis-cli -p "$PC_PORT" flushall >/dev/null
  out=$(timeout 240 redis-benchmark --cluster -p "$seed" -t set,get -n 100000 -q 2>&1); st=$?
  full=$(printf '%s\n' "$out" | tr '\r' '\n' | sed 's/^ *//' | grep -v '^$')
  echo "redis-benchmark --cluster -p $seed:"
  printf '%s\n' "$full" | grep -E 'requests per second' | sed 's/^/  /'
  if [ "$st" != 0 ]; then fail "redis-benchmark --cluster -p $seed: exit status $st"; fi
  if printf '%s\n' "$full" | grep -Eiq 'err|warn|could not|refused|reset|closed|moved|crossslot'; then
    fail "redis-benchmark --cluster -p $seed: error output:"
    printf '%s\n' "$full" | grep -Ei 'err|warn|could not|refused|reset|closed|moved|crossslot' | head -10 >&2
  else
    pass
  fi
  local t
  for t in SET GET; do
    if printf '%s\n' "$full" | grep -q "^$t: .*requests per second"; then pass
    else fail "redis-benchmark --cluster -p $seed: no result line for $t"; fi
  done
  local p empty=""
  for p in $(seq "$FIRST" "$LAST"); do [ "$(redis-cli -p "$p" dbsize)" -gt 0 ] || empty="$empty $p"; done
  if [ -z "$empty" ]; then pass; else fail "redis-benchmark --cluster -p $seed: no keys on shard ports$empty"; fi
}
if [ "$THREADS" -ge 3 ]; then
  run_bench "$FIRST"
  run_bench "$PC_PORT"
else
  echo "note: redis-benchmark --cluster wants 3 masters or more; not run with $THREADS shards"
fi

# 4. redis-py
if /usr/bin/python3 -c "import redis.cluster" 2>/dev/null; then
  if /usr/bin/python3 "$HERE/test_cluster.py" "$PC_PORT" "$THREADS"; then pass; else fail "test_cluster.py"; fi
else
  echo "note: python3-redis with redis.cluster is not installed; RedisCluster not tested"
fi

stop_server PC
finish test_cluster
