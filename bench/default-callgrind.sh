#!/usr/bin/env bash
# Instructions for the whole default redis-benchmark list (PING_INLINE ...
# LRANGE_600, MSET; redis-benchmark -q -n N) under valgrind --tool=callgrind,
# percore (threads 1) against redis-server 7: the repeatable per-request cost
# over every test of the list, where wall-clock req/s on a 2-core machine is
# noise.  Writes bench/results/default-callgrind.txt.
#   bench/default-callgrind.sh [N]     (default 20000 requests per test)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20000}
WD=$(mktemp -d)
trap 'rm -rf "$WD"' EXIT
[ -x build/percore-server ] || { cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j"$(nproc)"; }
declare -A IR
for who in percore redis; do
    # idle-poll-us 0: how often a shard polls depends on timing, and its polls are not per-request cost
    if [ $who = percore ]; then port=17390; cmd=(build/percore-server --port $port --threads 1 --idle-poll-us 0 --save "")
    else port=17391; cmd=(redis-server --port $port --save "" --appendonly no); fi
    valgrind --tool=callgrind --callgrind-out-file="$WD/cg.$who.%p" "${cmd[@]}" >"$WD/$who.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 200); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.2; done
    redis-benchmark -p $port -q -n "$N" >"$WD/$who.bench" 2>&1
    tests=$(tr '\r' '\n' <"$WD/$who.bench" | grep -c "requests per second" || true)
    redis-cli -p $port shutdown nosave >/dev/null 2>&1 || kill $pid
    wait $pid || true
    IR[$who]=$(awk '/^totals:/ {t=$2} /^summary:/ {m=$2} END {printf "%.0f", (t != "" ? t : m)}' "$WD"/cg.$who.*)
    echo "$who: ${IR[$who]} Ir over $tests tests of $N requests"
done | tee "$WD/summary"
mkdir -p bench/results
{
    echo "# bench/default-callgrind.sh $N  $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "# total instructions (callgrind, user space) for redis-benchmark -q -n $N (the default list)"
    cat "$WD/summary"
    awk '/^percore:/ {p=$2} /^redis:/ {r=$2} END {printf "ratio percore/redis: %.2f (lower is better)\n", p / r}' "$WD/summary"
} | tee bench/results/default-callgrind.txt
