#!/usr/bin/env node
// test_ioredis.js SERVER [THREADS]: the Node client ioredis works unchanged
// against the server.  ioredis sends INFO at connect and waits for loading:0
// (its ready check), then: SET/GET, a pipeline, MGET across shards,
// EXPIRE/TTL, INFO, errors as ReplyError.  Starts its own server on a free
// port (node_harness.js); needs tests/compat/node/node_modules (npm_ci.sh).
'use strict';
const { check, eq, sleep, nodeModule, main } = require('./node_harness');
const Redis = nodeModule('ioredis');

async function run(port) {
  const r = new Redis({ host: '127.0.0.1', port, enableReadyCheck: true, lazyConnect: true,
                        maxRetriesPerRequest: 1, retryStrategy: () => null, connectTimeout: 10000 });
  r.on('error', (e) => console.log('client error event: ' + e.message));
  await r.connect();
  eq(r.status, 'ready', 'ready check passed (INFO with loading:0)');
  eq(await r.ping(), 'PONG', 'PING');
  eq(await r.flushall(), 'OK', 'FLUSHALL');
  eq(await r.set('a', '1'), 'OK', 'SET');
  eq(await r.get('a'), '1', 'GET');
  eq(await r.get('nokey'), null, 'GET missing');
  eq(await r.set('a', '2', 'NX'), null, 'SET NX on existing');
  eq(await r.incr('n'), 1, 'INCR');
  eq(await r.incrby('n', 9), 10, 'INCRBY');
  eq(await r.incrbyfloat('f', '1.5'), '1.5', 'INCRBYFLOAT');
  let err = null;
  await r.set('a2', 'abc');
  try { await r.incr('a2'); } catch (e) { err = e; }
  check(err && err.name === 'ReplyError' && err.message === 'ERR value is not an integer or out of range',
        'INCR on a non-integer raises ReplyError: ' + (err && err.message));

  // MGET / MSET across shards
  const keys = [];
  for (let i = 0; i < 32; i++) keys.push('k' + i);
  for (let i = 0; i < 8; i++) keys.push(`{user${i}}.x`);
  const flat = [];
  for (const k of keys) flat.push(k, 'v-' + k);
  eq(await r.mset(...flat), 'OK', 'MSET 40 keys');
  eq(await r.mget(...keys, 'nokey'), keys.map((k) => 'v-' + k).concat([null]), 'MGET 40 keys + missing');
  eq(await r.exists(...keys), keys.length, 'EXISTS all');
  eq((await r.keys('k*')).sort(), keys.filter((k) => k.startsWith('k')).sort(), 'KEYS k*');

  // pipeline: replies in order across shards
  const p = r.pipeline();
  keys.forEach((k, i) => { p.set(k, String(i)); p.incr(k); p.get(k); });
  p.mget(...keys.slice(0, 10));
  p.del(...keys.slice(0, 20));
  const res = await p.exec();
  const want = [];
  keys.forEach((k, i) => { want.push([null, 'OK'], [null, i + 1], [null, String(i + 1)]); });
  want.push([null, keys.slice(0, 10).map((k, i) => String(i + 1))], [null, 20]);
  eq(res, want, `pipeline of ${want.length} commands`);
  const p2 = await r.pipeline().get('k0').incr('a2').get('k21').exec();
  check(p2[0][1] === null && p2[1][0] && p2[1][0].name === 'ReplyError' && p2[2][1] === '22',
        'pipeline with an error in the middle');

  // SCAN stream across shards
  const scanned = await new Promise((resolve, reject) => {
    const out = [];
    const s = r.scanStream({ match: '*', count: 7 });
    s.on('data', (ks) => out.push(...ks));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
  eq([...new Set(scanned)].sort(), keys.slice(20).concat(['n', 'f', 'a', 'a2']).sort(), 'SCAN stream');

  // EXPIRE / TTL
  eq(await r.expire('k21', 1000), 1, 'EXPIRE');
  const ttl = await r.ttl('k21');
  check(ttl >= 998 && ttl <= 1000, 'TTL after EXPIRE 1000: ' + ttl);
  eq(await r.persist('k21'), 1, 'PERSIST');
  eq(await r.ttl('k21'), -1, 'TTL after PERSIST');
  eq(await r.ttl('nokey'), -2, 'TTL missing');
  eq(await r.set('short', 'v', 'PX', 100), 'OK', 'SET PX 100');
  await sleep(250);
  eq(await r.get('short'), null, 'expired after 250 ms');

  // INFO
  const info = await r.info();
  check(/^# \w+/m.test(info), 'INFO has sections');
  check(/\r\nloading:0\r\n/.test('\r\n' + info), 'INFO has loading:0');
  const ks = await r.info('keyspace');
  const dbsize = await r.dbsize();
  check(new RegExp(`db0:keys=${dbsize},`).test(ks), `INFO keyspace matches DBSIZE ${dbsize}: ${JSON.stringify(ks)}`);

  // SELECT via a db option, CLIENT SETNAME via connectionName
  const r2 = new Redis({ host: '127.0.0.1', port, db: 2, connectionName: 'ioredis-test',
                         retryStrategy: () => null, maxRetriesPerRequest: 1 });
  r2.on('error', (e) => console.log('client 2 error event: ' + e.message));
  eq(await r2.set('in2', 'v'), 'OK', 'SET in db 2');
  eq(await r2.client('GETNAME'), 'ioredis-test', 'connectionName');
  eq(await r2.dbsize(), 1, 'DBSIZE db 2');
  eq(await r.get('in2'), null, 'db 0 does not see db 2');
  r2.disconnect();
  eq(await r.quit(), 'OK', 'QUIT');
}

main('test_ioredis', run);
