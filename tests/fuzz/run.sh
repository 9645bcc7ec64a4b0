#!/usr/bin/env bash
# tests/fuzz/run.sh [SECONDS] [OUT]: fuzz fuzz_resp, fuzz_engine, fuzz_rdb, then fuzz_script, for
# SECONDS each (default 600), from the seed corpus (corpus-rdb, corpus-script for theirs)
# and the kept regressions,
# with the dictionary.  Builds build-fuzz (clang) first.  What each target
# found lands in OUT (default build-fuzz/fuzz-out): OUT/corpus-TARGET (new
# interesting inputs) and OUT/crashes (crash-*, leak-*, timeout-*, oom-*;
# replay one with `build-fuzz/TARGET FILE`).  Exit status 1 when a target
# found something.  See tests/fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-600}
out=${2:-build-fuzz/fuzz-out}
CC=clang cmake -S . -B build-fuzz -DPERCORE_FUZZ=ON >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz_resp fuzz_engine fuzz_rdb fuzz_script

status=0
mkdir -p "$out/crashes"
for target in fuzz_resp fuzz_engine fuzz_rdb fuzz_script; do
    mkdir -p "$out/corpus-$target"
    seeds=tests/fuzz/corpus
    [ -d "tests/fuzz/corpus-${target#fuzz_}" ] && seeds="tests/fuzz/corpus-${target#fuzz_}"
    echo "tests/fuzz/run.sh: $target for ${seconds}s"
    if ! "build-fuzz/$target" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
            -dict=tests/fuzz/percore.dict -artifact_prefix="$out/crashes/$target-" \
            "$out/corpus-$target" "$seeds" tests/fuzz/regressions; then
        status=1
    fi
done
if [ "$status" -ne 0 ]; then
    echo "tests/fuzz/run.sh: found inputs in $out/crashes; keep each in tests/fuzz/regressions once fixed" >&2
fi
exit "$status"
