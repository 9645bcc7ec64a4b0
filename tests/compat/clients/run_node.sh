#!/usr/bin/env bash
# run_node.sh TEST.js SERVER [THREADS]: runs a Node client test of this folder
# (test_ioredis.js, test_node_redis4.js, test_node_redis5_cache.js) with the clients npm_ci.sh installed
# in tests/compat/node (ctest runs compat.npm_ci first: a fixture).
# Skips (exit 77) only when node is absent.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || { echo "SKIP: node is not installed (apt-get install nodejs npm)"; exit 77; }
TEST=${1:?usage: run_node.sh TEST.js SERVER [THREADS]}
SERVER=${2:?usage: run_node.sh TEST.js SERVER [THREADS]}
shift 2
case "$SERVER" in /*) ;; *) SERVER="$(cd "$(dirname "$SERVER")" && pwd)/$(basename "$SERVER")" ;; esac
[ -d "$HERE/../node/node_modules" ] || { echo "FAIL: no tests/compat/node/node_modules: run tests/compat/clients/npm_ci.sh"; exit 1; }
exec node "$HERE/$TEST" "$SERVER" "$@"
