#!/usr/bin/env bash
# Build percore and run the whole test suite:
#   1. the release build: unit, integration (threads 1 and 4), compat
#      (differential against a real redis-server 7, and real clients:
#      redis-cli, redis-benchmark, python3-redis, Celery, ioredis);
#   2. the global-lock control build (-DPERCORE_GLOBAL_LOCK=ON): integration
#      and differential, with several threads;
#   3. an AddressSanitizer + UBSan build: unit, integration and the
#      differential runs again, with several threads;
#   4. a ThreadSanitizer build: the same with several threads (cross-shard handoff, gathered
#      commands, disconnects in flight, RCU config, the MPSC ring);
#   5. the libFuzzer build (clang, -DPERCORE_FUZZ=ON): a smoke run of each
#      fuzz target over the seed corpus and the kept crash inputs (tests/fuzz).
# Installs the Debian packages (and the npm test client) it needs when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need_pkgs=()
for p in build-essential cmake pkg-config libevent-dev liburcu-dev libnuma-dev libmimalloc-dev \
         libhiredis-dev liblzf-dev liblua5.1-0-dev lua-cjson-dev lua-bitop-dev redis-server redis-tools python3 python3-redis python3-celery python3-rq clang libclang-rt-14-dev; do
    dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
command -v npm >/dev/null 2>&1 || need_pkgs+=(nodejs npm)
# promtool (tests/integration/test_promtool.py) comes only with Debian's prometheus
# package; installed without its recommends (the node exporter)
lean_pkgs=()
command -v promtool >/dev/null 2>&1 || lean_pkgs+=(prometheus)
if [ ${#need_pkgs[@]} -gt 0 ] || [ ${#lean_pkgs[@]} -gt 0 ]; then
    echo "tests/run.sh: installing ${need_pkgs[*]} ${lean_pkgs[*]}"
    apt-get update -qq
    [ ${#need_pkgs[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
    [ ${#lean_pkgs[@]} -eq 0 ] ||
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${lean_pkgs[@]}" >/dev/null
fi
if [ -f tests/compat/node/package.json ]; then
    (cd tests/compat/node && npm ci --silent --no-audit --no-fund)
fi

jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

# the global-lock control build (ARCHITECTURE.md rule 10) passes the same integration and differential tests,
# with several threads (its one-thread runs, *.t1, would be the release build's one shard again)
cmake -S . -B build-global-lock -DCMAKE_BUILD_TYPE=Release -DPERCORE_GLOBAL_LOCK=ON >/dev/null
cmake --build build-global-lock -j"$jobs"
(cd build-global-lock && ctest --output-on-failure -j"$jobs" -L 'integration|differential' -E '\.t1$')

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPERCORE_SANITIZE=address >/dev/null
cmake --build build-asan -j"$jobs"
# several threads only, as TSan below: a several-shard run takes the inline paths a one-shard run takes
# (a quarter of its keys are the connection's shard's) and the cross-shard ones besides
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ctest --output-on-failure -j"$jobs" -L 'unit|integration|differential' -E '\.t1$')

cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DPERCORE_SANITIZE=thread >/dev/null
cmake --build build-tsan -j"$jobs"
# several threads only: the one-shard runs (*.t1) have no thread the several-shard runs lack
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/../tests/tsan.supp" ctest --output-on-failure -j"$jobs" -L 'unit|integration|differential' -E '\.t1$')

# libFuzzer targets: a few seconds each; every run prints its RELIABILITY line
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release -DPERCORE_FUZZ=ON >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_resp fuzz_engine fuzz_rdb fuzz_script
(cd build-fuzz && ctest -V -L fuzz)
