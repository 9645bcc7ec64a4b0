#!/usr/bin/env bash
# Instructions per EVALSHA of a two-call script (GET then INCR of one key, the
# shape of rate limiters and counters), at pipeline 1 and 16, under valgrind
# --tool=callgrind: percore (threads 1) against redis-server 7.  An idle run
# (start, SCRIPT LOAD, stop) is subtracted from each.  Writes
# bench/results/script-callgrind.txt.
#   bench/script-callgrind.sh [N_P1] [N_P16]     (default 50000 and 200000 requests)
set -euo pipefail
cd "$(dirname "$0")/.."
N1=${1:-50000}
N16=${2:-200000}
WD=$(mktemp -d)
trap 'rm -rf "$WD"' EXIT
[ -x build/percore-server ] || { cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j"$(nproc)"; }
SCRIPT="local v = redis.call('get', KEYS[1]); return redis.call('incr', KEYS[1])"
# one run: total Ir of a server that loads the script and serves n EVALSHA at pipeline p (n 0: idle)
run() {
    local who=$1 p=$2 n=$3 port cmd
    # idle-poll-us 0: how often a shard polls depends on timing, and its polls are not per-request cost
    if [ "$who" = percore ]; then port=17392; cmd=(build/percore-server --port $port --threads 1 --save "" --appendonly no --idle-poll-us 0)
    else port=17393; cmd=(redis-server --port $port --save "" --appendonly no); fi
    rm -f "$WD"/cg.run.*
    valgrind --tool=callgrind --callgrind-out-file="$WD/cg.run.%p" "${cmd[@]}" >"$WD/$who.log" 2>&1 &
    local pid=$!
    for _ in $(seq 1 200); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.2; done
    local sha
    sha=$(redis-cli -p $port script load "$SCRIPT")
    [ "$n" -eq 0 ] || redis-benchmark -p $port -n "$n" -c 10 -P "$p" -r 100000 evalsha "$sha" 1 key:__rand_int__ >/dev/null
    redis-cli -p $port shutdown nosave >/dev/null 2>&1 || kill $pid
    wait $pid || true
    awk '/^totals:/ {t=$2} /^summary:/ {m=$2} END {printf "%.0f", (t != "" ? t : m)}' "$WD"/cg.run.*
}
declare -A PER
for who in percore redis; do
    idle=$(run $who 1 0)
    p1=$(run $who 1 "$N1")
    p16=$(run $who 16 "$N16")
    PER[$who.p1]=$(( (p1 - idle) / N1 ))
    PER[$who.p16]=$(( (p16 - idle) / N16 ))
    echo "$who: idle $idle Ir, P1 ${PER[$who.p1]} Ir/EVALSHA, P16 ${PER[$who.p16]} Ir/EVALSHA"
done | tee "$WD/summary"
mkdir -p bench/results
{
    echo "# bench/script-callgrind.sh $N1 $N16  $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "# EVALSHA of \"$SCRIPT\" 1 key:__rand_int__, redis-benchmark -c 10 -r 100000"
    echo "# instr/EVALSHA = (total Ir - Ir of an idle start/SCRIPT LOAD/stop) / requests; lower is better"
    cat "$WD/summary"
} >bench/results/script-callgrind.txt
cat bench/results/script-callgrind.txt
