#!/usr/bin/env node
// test_node_redis4.js SERVER [THREADS]: node-redis 4 (npm alias redis4) scans
// the keyspace with its iterators unchanged.  node-redis 4 parses a cursor
// with Number(), so a cursor at or above 2^53 comes back rounded and the scan
// goes on from the wrong place: scanIterator over 500 keys on 4 shards gave
// 605 keys, 474 distinct, when the shard number sat in the cursor's high
// bits.  Checks, for 500 and 5000 keys: scanIterator (default COUNT, COUNT 3
// and 1000, MATCH, MATCH with COUNT, TYPE) yields every key exactly once (a
// keyspace that does not change gives no duplicates, in Redis too), every
// cursor the server sends is below 2^53, and hScanIterator, sScanIterator and
// zScanIterator over 5000 elements each yield every element once.  Passes
// against redis-server 7.0 too.  Starts its own server (node_harness.js);
// needs tests/compat/node/node_modules (npm_ci.sh).
'use strict';
const { check, eq, nodeModule, main } = require('./node_harness');
const { createClient } = nodeModule('redis4');

const LIMIT = 2n ** 53n;

// every element the iterator yields exactly once, and nothing else (an
// iterator that goes on past twice as many is stopped: a rounded cursor can
// send the scan round in a loop)
async function exactlyOnce(iter, want, what) {
  const got = [];
  for await (const k of iter) {
    got.push(k);
    if (got.length > 2 * want.length + 10) break;
  }
  const distinct = new Set(got), wanted = new Set(want);
  const missing = want.filter((k) => !distinct.has(k));
  const extra = [...distinct].filter((k) => !wanted.has(k));
  check(got.length === want.length && distinct.size === want.length && !missing.length && !extra.length,
        `${what}: ${got.length} yielded, ${distinct.size} distinct, of ${want.length}` +
        ` (missing ${missing.slice(0, 5)}, extra ${extra.slice(0, 5)})`);
}

// the raw cursors of a whole SCAN (strings, as the server sent them)
async function rawCursors(client, args) {
  const cursors = [];
  let cursor = '0';
  do {
    const reply = await client.sendCommand(['SCAN', cursor, ...args]);
    cursor = reply[0];
    cursors.push(cursor);
  } while (cursor !== '0' && cursors.length < 100000);
  return cursors;
}

async function load(client, keys) {
  for (let i = 0; i < keys.length; i += 1000)
    await Promise.all(keys.slice(i, i + 1000).map((k) => client.set(k, 'v')));
}

async function scanKeyspace(client, n) {
  eq(await client.flushAll(), 'OK', 'FLUSHALL');
  const keys = [];
  for (let i = 0; i < n; i++) keys.push('key:' + i);
  await load(client, keys);
  eq(await client.dbSize(), n, `DBSIZE after loading ${n} keys`);
  await exactlyOnce(client.scanIterator(), keys, `scanIterator over ${n} keys`);
  await exactlyOnce(client.scanIterator({ COUNT: 3 }), keys, `scanIterator COUNT 3 over ${n} keys`);
  await exactlyOnce(client.scanIterator({ COUNT: 1000 }), keys, `scanIterator COUNT 1000 over ${n} keys`);
  await exactlyOnce(client.scanIterator({ MATCH: 'key:1*' }), keys.filter((k) => k.startsWith('key:1')),
                    `scanIterator MATCH key:1* over ${n} keys`);
  await exactlyOnce(client.scanIterator({ MATCH: 'key:*7', COUNT: 50 }), keys.filter((k) => k.endsWith('7')),
                    `scanIterator MATCH key:*7 COUNT 50 over ${n} keys`);
  const cursors = await rawCursors(client, ['COUNT', '7']);
  const big = cursors.filter((c) => BigInt(c) >= LIMIT);
  check(cursors[cursors.length - 1] === '0' && !big.length,
        `SCAN COUNT 7 over ${n} keys: ${cursors.length} calls, cursors >= 2^53: ${big.slice(0, 3)}`);
}

async function scanTypes(client) {
  eq(await client.flushAll(), 'OK', 'FLUSHALL');
  const fields = [];
  for (let i = 0; i < 5000; i++) fields.push('f' + i);
  for (let i = 0; i < fields.length; i += 1000) {
    const part = fields.slice(i, i + 1000);
    await client.hSet('bighash', part.flatMap((f) => [f, 'v']));
    await client.sAdd('bigset', part);
    await client.zAdd('bigzset', part.map((f, j) => ({ score: i + j, value: f })));
  }
  await load(client, ['s1', 's2', 's3']);
  await exactlyOnce(client.scanIterator({ TYPE: 'hash' }), ['bighash'], 'scanIterator TYPE hash');
  await exactlyOnce(client.scanIterator({ TYPE: 'string', COUNT: 1 }), ['s1', 's2', 's3'], 'scanIterator TYPE string');
  const fieldsOf = async function* (iter, name) { for await (const t of iter) yield t[name]; };
  await exactlyOnce(fieldsOf(client.hScanIterator('bighash'), 'field'), fields, 'hScanIterator over 5000 fields');
  await exactlyOnce(client.sScanIterator('bigset', { COUNT: 100 }), fields, 'sScanIterator over 5000 members');
  await exactlyOnce(fieldsOf(client.zScanIterator('bigzset', { MATCH: 'f1*' }), 'value'),
                    fields.filter((f) => f.startsWith('f1')), 'zScanIterator MATCH f1* over 5000 members');
}

async function run(port) {
  const client = createClient({ socket: { host: '127.0.0.1', port, reconnectStrategy: false, connectTimeout: 10000 } });
  client.on('error', (e) => console.log('client error event: ' + e.message));
  await client.connect();
  await scanKeyspace(client, 500);
  await scanKeyspace(client, 5000);
  await scanTypes(client);
  eq(await client.quit(), 'OK', 'QUIT');
}

main('test_node_redis4', run);
