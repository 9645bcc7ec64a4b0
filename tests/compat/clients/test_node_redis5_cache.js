#!/usr/bin/env node
// test_node_redis5_cache.js SERVER [THREADS]: node-redis 5's client-side cache
// (createClient({RESP: 3, clientSideCache})) unchanged: it turns CLIENT
// TRACKING on at connect, serves a second read of a key from its cache, and
// drops the entry when the server's invalidation push comes.  For 16 keys
// (on every shard): the first GET misses and reaches the server, the second
// is a cache hit (the cache's stats, and the server's count of GET calls:
// one per key); another client then changes each key, and the cached client
// sees every new value (the invalidation arrived: a miss, and a GET the
// server counts).  Passes against redis-server 7.0 too.  Starts its own
// server (node_harness.js); needs tests/compat/node/node_modules (npm_ci.sh).
'use strict';
const { check, eq, sleep, nodeModule, main } = require('./node_harness');
const { createClient, BasicClientSideCache } = nodeModule('redis');

const KEYS = Array.from({ length: 16 }, (_, i) => 'csc:' + i);

// GET calls the server has counted (INFO commandstats; percore merges the shards' counts every
// stats-interval ms: waited for until it reaches want)
async function getCalls(client, want) {
  let calls = -1;
  for (let i = 0; i < 100; i++) {
    const m = /cmdstat_get:calls=(\d+)/.exec(await client.info('commandstats'));
    calls = m ? Number(m[1]) : 0;
    if (calls >= want) break;
    await sleep(100);
  }
  return calls;
}

async function run(port) {
  const socket = { host: '127.0.0.1', port, reconnectStrategy: false, connectTimeout: 10000 };
  const cache = new BasicClientSideCache({ ttl: 0, maxEntries: 0 });
  const cached = createClient({ socket, RESP: 3, clientSideCache: cache });
  const other = createClient({ socket });
  for (const c of [cached, other]) {
    c.on('error', (e) => console.log('client error event: ' + e.message));
    await c.connect();
  }
  await other.configResetStat();
  for (const k of KEYS) eq(await other.set(k, 'v1'), 'OK', `SET ${k}`);
  for (const k of KEYS) {
    eq(await cached.get(k), 'v1', `first GET ${k}`);
    eq(await cached.get(k), 'v1', `second GET ${k} (from the cache)`);
  }
  let st = cache.stats();
  eq([st.hitCount, st.missCount], [KEYS.length, KEYS.length], 'cache hits and misses after two reads of each key');
  eq(await getCalls(other, KEYS.length), KEYS.length, 'GET calls the server saw (one per key)');
  for (const k of KEYS) eq(await other.set(k, 'v2'), 'OK', `SET ${k} v2 from another client`);
  // each invalidation comes as a push on the cached client's connection: wait until every key reads anew
  const deadline = Date.now() + 15000;
  const seen = new Map();
  while (Date.now() < deadline && seen.size < KEYS.length) {
    for (const k of KEYS) if (!seen.has(k) && (await cached.get(k)) === 'v2') seen.set(k, true);
    if (seen.size < KEYS.length) await sleep(50);
  }
  eq(seen.size, KEYS.length, 'keys whose new value the cached client saw');
  st = cache.stats();
  check(st.missCount >= 2 * KEYS.length, `a miss per invalidated key: ${st.missCount} misses`);
  check(await getCalls(other, 2 * KEYS.length) >= 2 * KEYS.length, 'the new values were read from the server');
  const info = await other.sendCommand(['CLIENT', 'LIST']);
  check(/ flags=t /.test(info), 'the cached client shows flags=t in CLIENT LIST');
  for (const c of [cached, other]) await c.quit();
}

main('test_node_redis5_cache', run);
