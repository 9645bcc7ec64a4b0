#!/usr/bin/env bash
# Per-core comparison with Redis 7 on this machine: percore with `threads 1`
# and a reference redis-server pinned to the same cpu, redis-benchmark on the
# other (bench/bench-vs-redis does the work).  Writes the tables to
# bench/results/vs-redis.txt and bench/results/vs-redis-callgrind.txt.
#   bench/vs-redis.sh [--quick] [--no-callgrind]
set -euo pipefail
cd "$(dirname "$0")/.."
tool=bench/bench-vs-redis
quick=""; callgrind=1
for a in "$@"; do
    case "$a" in
        --quick) quick=--quick ;;
        --no-callgrind) callgrind=0 ;;
        *) echo "usage: $0 [--quick] [--no-callgrind]" >&2; exit 2 ;;
    esac
done
[ -x build/percore-server ] || { cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j"$(nproc)"; }
mkdir -p bench/results
cand="$PWD/build/percore-server --port 16390 --threads 1 --save '' --appendonly no"
"$tool" --candidate "$cand" --port 16390 --suites p1,p16 $quick | tee bench/results/vs-redis.txt
if [ "$callgrind" = 1 ]; then
    # idle-poll-us 0: how often a shard polls depends on timing, and its polls are not per-request cost
    "$tool" --candidate "$cand --idle-poll-us 0" --port 16390 --callgrind | tee bench/results/vs-redis-callgrind.txt
fi
