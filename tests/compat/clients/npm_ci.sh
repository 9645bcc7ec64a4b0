#!/usr/bin/env bash
# npm_ci.sh: installs the Node clients (ioredis, node-redis 4 as redis4, node-redis 5, bee-queue, rate-limiter-flexible, bullmq) from
# the committed package-lock: npm ci in tests/compat/node.  Offline, the
# node_modules already there do if they hold what package.json asks for.
# Skips (exit 77) only when node or npm is absent.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || { echo "SKIP: node is not installed (apt-get install nodejs npm)"; exit 77; }
command -v npm >/dev/null || { echo "SKIP: npm is not installed (apt-get install npm)"; exit 77; }
cd "$HERE/../node" || exit 1
if ! npm ci --no-audit --no-fund --loglevel=error >npm-ci.log 2>&1; then
  if npm ls --depth=0 >/dev/null 2>&1; then
    echo "note: npm ci failed (offline?); using the node_modules already there"
  else
    echo "FAIL: npm ci failed:"; cat npm-ci.log; exit 1
  fi
fi
rm -f npm-ci.log
