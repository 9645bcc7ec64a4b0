#!/usr/bin/env node
// test_node_streams.js SERVER [THREADS]: a consumer group over streams with
// node-redis 4 (npm alias redis4) unchanged, the shape of a work queue:
//  - xGroupCreate with MKSTREAM on three streams ({a} {b} {c}: three shards
//    with --threads 4), BUSYGROUP the second time;
//  - six consumers, two per stream, each on its own connection (so on any
//    shard, mostly not its stream's), blocked in xReadGroup (BLOCK, COUNT,
//    id '>'), are woken by xAdd from another connection, one entry each;
//  - 300 entries added while the consumers loop, each read exactly once
//    across the consumers; every one acked with xAck but every tenth (the
//    consumer "crashed" on it);
//  - xPending: the count, first and last ids and the consumers holding the
//    unacked ones; xAutoClaim by a fourth consumer takes them all over
//    (min idle time, COUNT, next id), xAck clears them, xPending is empty.
// A consumer blocks on one stream: XREADGROUP BLOCK over keys of several
// shards does not wait yet (README, streams).  The same script passes against
// redis-server 7.0 (compat.node_streams.redis).
// Starts its own server (node_harness.js); needs tests/compat/node/node_modules.
'use strict';
const { check, eq, sleep, nodeModule, main } = require('./node_harness');
const { createClient } = nodeModule('redis4');

const STREAMS = ['jobs{a}', 'jobs{b}', 'jobs{c}'];
const GROUP = 'workers';
const ENTRIES = 300;
const CONSUMERS = 6; /* consumer i reads STREAMS[i % 3] */

async function connect(port) {
  const client = createClient({ socket: { host: '127.0.0.1', port, reconnectStrategy: false, connectTimeout: 10000 } });
  client.on('error', (e) => console.log('client error event: ' + e.message));
  await client.connect();
  return client;
}

function read(client, i, block) {
  return client.xReadGroup(GROUP, 'c' + i, { key: STREAMS[i % STREAMS.length], id: '>' }, { COUNT: 10, BLOCK: block });
}

// the entries of an xReadGroup reply as [stream, id, n]
function entries(reply) {
  return (reply || []).flatMap((s) => s.messages.map((m) => [s.name, m.id, Number(m.message.n)]));
}

async function createGroups(producer) {
  for (const key of STREAMS)
    eq(await producer.xGroupCreate(key, GROUP, '$', { MKSTREAM: true }), 'OK', `xGroupCreate ${key} MKSTREAM`);
  let err = '';
  try { await producer.xGroupCreate(STREAMS[0], GROUP, '$'); } catch (e) { err = e.message; }
  check(err.startsWith('BUSYGROUP'), `xGroupCreate twice: ${err}`);
  eq(await producer.type(STREAMS[1]), 'stream', 'MKSTREAM made the stream');
}

// every consumer blocked at once, each woken by one entry (two waiters per stream: an entry each)
async function wakeBlocked(producer, consumers) {
  const reads = consumers.map((c, i) => read(c, i, 10000));
  await sleep(200); /* all blocked before the first entry */
  for (let i = 0; i < consumers.length; i++)
    await producer.xAdd(STREAMS[i % STREAMS.length], '*', { n: String(-1 - i) });
  const got = (await Promise.all(reads)).map(entries);
  eq(got.map((e) => e.length), consumers.map(() => 1), 'blocked consumers woken, one entry each');
  eq(got.flat().map((e) => e[2]).sort((x, y) => y - x), consumers.map((c, i) => -1 - i), 'the entries they got');
  for (const [key, id] of got.flat())
    eq(await producer.xAck(key, GROUP, id), 1, `xAck ${key} ${id}`);
}

// consumer i loops until `state.remaining` reaches 0, acking all but every tenth
async function work(client, i, state, seen) {
  while (state.remaining > 0) {
    for (const [key, id, n] of entries(await read(client, i, 200))) {
      seen.push(n);
      state.remaining--;
      if (n % 10 !== 0) await client.xAck(key, GROUP, id);
      else state.unacked.push([key, id]);
    }
  }
}

async function workQueue(producer, consumers) {
  const state = { remaining: ENTRIES, unacked: [] }, seen = [];
  const workers = consumers.map((c, i) => work(c, i, state, seen));
  for (let n = 0; n < ENTRIES; n++) {
    await producer.xAdd(STREAMS[n % STREAMS.length], '*', { n: String(n), payload: 'job' + n });
    if (n % 50 === 49) await sleep(20);
  }
  await Promise.all(workers);
  const distinct = new Set(seen);
  check(seen.length === ENTRIES && distinct.size === ENTRIES,
        `${ENTRIES} entries read exactly once: ${seen.length} read, ${distinct.size} distinct`);
  return state.unacked;
}

async function pendingAndClaim(producer, rescuer, unacked) {
  for (const key of STREAMS) {
    const mine = unacked.filter((u) => u[0] === key).map((u) => u[1]).sort(cmpId);
    const p = await producer.xPending(key, GROUP);
    check(p.pending === mine.length && p.firstId === mine[0] && p.lastId === mine[mine.length - 1],
          `xPending ${key}: ${JSON.stringify(p)}, want ${mine.length} from ${mine[0]} to ${mine[mine.length - 1]}`);
    const held = (p.consumers || []).reduce((sum, c) => sum + Number(c.deliveriesCounter), 0);
    check(held === mine.length && p.consumers.every((c) => /^c[0-5]$/.test(c.name)),
          `xPending ${key} consumers: ${JSON.stringify(p.consumers)}`);
  }
  await sleep(20);
  for (const key of STREAMS) {
    const mine = unacked.filter((u) => u[0] === key).map((u) => u[1]).sort(cmpId);
    const claimed = [];
    let start = '0-0';
    do {
      const r = await rescuer.xAutoClaim(key, GROUP, 'rescuer', 10, start, { COUNT: 4 });
      claimed.push(...r.messages.map((m) => m.id));
      start = r.nextId;
    } while (start !== '0-0');
    eq(claimed, mine, `xAutoClaim ${key} COUNT 4 until next id 0-0`);
    const p = await producer.xPending(key, GROUP);
    eq([p.pending, (p.consumers || []).map((c) => c.name)], [mine.length, ['rescuer']], `xPending ${key} after xAutoClaim`);
    eq(await rescuer.xAck(key, GROUP, claimed), mine.length, `xAck ${key} of the claimed ids`);
    eq((await producer.xPending(key, GROUP)).pending, 0, `xPending ${key} after xAck`);
  }
}

function cmpId(a, b) {
  const [am, as] = a.split('-').map(BigInt), [bm, bs] = b.split('-').map(BigInt);
  return am !== bm ? (am < bm ? -1 : 1) : as < bs ? -1 : as > bs ? 1 : 0;
}

async function run(port) {
  const producer = await connect(port);
  eq(await producer.flushAll(), 'OK', 'FLUSHALL');
  const consumers = [];
  for (let i = 0; i < CONSUMERS; i++) consumers.push(await connect(port));
  const rescuer = await connect(port);
  await createGroups(producer);
  await wakeBlocked(producer, consumers);
  const unacked = await workQueue(producer, consumers);
  eq(unacked.length, ENTRIES / 10, 'entries left unacked');
  await pendingAndClaim(producer, rescuer, unacked);
  for (const key of STREAMS)
    eq(await producer.xLen(key), (ENTRIES + CONSUMERS) / STREAMS.length, `xLen ${key}`);
  for (const c of [producer, rescuer, ...consumers]) await c.quit();
}

main('test_node_streams', run);
