#!/usr/bin/env node
// test_ioredis.js SERVER [THREADS]: the Node client ioredis works unchanged
// against the server.  ioredis sends INFO at connect and waits for loading:0
// (its ready check), then: SET/GET, a pipeline, MGET across shards,
// EXPIRE/TTL, INFO, errors as ReplyError.  Starts its own server on a free
// port; needs tests/compat/node/node_modules (run_ioredis.sh does `npm ci`).
'use strict';
const path = require('path');
const net = require('net');
const fs = require('fs');
const { spawn } = require('child_process');
const Redis = require(path.join(__dirname, '..', 'node', 'node_modules', 'ioredis'));

let passed = 0, failed = 0;
function check(cond, what) {
  if (cond) passed++;
  else { failed++; console.log('FAIL: ' + what); }
}
function eq(got, want, what) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  check(g === w, `${what}: got ${g}, want ${w}`);
}

function bindable(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}
async function freePort() {
  for (let i = 0; i < 2000; i++) {
    const p = 20000 + Math.floor(Math.random() * 12000);
    if (await bindable(p)) return p;
  }
  throw new Error('no free port');
}
function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

function pingOnce(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let buf = '';
    const done = (v) => { s.destroy(); resolve(v); };
    s.setTimeout(1000, () => done(false));
    s.on('error', () => done(false));
    s.on('connect', () => s.write('*1\r\n$4\r\nPING\r\n'));
    s.on('data', (d) => { buf += d; if (buf.includes('\r\n')) done(buf === '+PONG\r\n'); });
  });
}

async function startServer(bin, threads) {
  const isRedis = path.basename(bin).includes('redis-server');
  for (let attempt = 0; attempt < 4; attempt++) {
    const port = await freePort();
    const args = ['--port', String(port), '--bind', '127.0.0.1'];
    if (isRedis) args.push('--save', '', '--appendonly', 'no');
    else args.push('--threads', String(threads));
    const logPath = path.join(process.env.PC_LOG_DIR || '.', `ioredis-${port}.log`);
    const log = fs.openSync(logPath, 'w');
    const child = spawn(bin, args, { stdio: ['ignore', log, log] });
    let exited = null;
    child.on('exit', (code, sig) => { exited = { code, sig }; });
    const deadline = Date.now() + 20000;
    while (Date.now() < deadline && !exited) {
      if (await pingOnce(port)) return { port, child, logPath, exited: () => exited };
      await sleep(50);
    }
    if (!exited) { child.kill('SIGKILL'); throw new Error('server did not answer PING in 20 s, log ' + logPath); }
  }
  throw new Error('server exited at start');
}

function stopServer(srv) {
  return new Promise((resolve) => {
    if (srv.exited()) { resolve(srv.exited()); return; }
    const t = setTimeout(() => { srv.child.kill('SIGKILL'); }, 15000);
    srv.child.on('exit', (code, sig) => { clearTimeout(t); resolve({ code, sig }); });
    srv.child.kill('SIGTERM');
  });
}

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

async function main() {
  const bin = process.argv[2] && path.resolve(process.argv[2]);
  if (!bin) { console.log('usage: test_ioredis.js SERVER [THREADS]'); process.exit(2); }
  try { fs.accessSync(bin, fs.constants.X_OK); } catch (e) {
    console.log(`FAIL: server binary ${bin} is not executable`); process.exit(1);
  }
  const threads = process.argv[3] || '4';
  const srv = await startServer(bin, threads);
  console.log(`ioredis against ${bin} on port ${srv.port}`);
  try {
    await Promise.race([run(srv.port), sleep(120000).then(() => { throw new Error('test timed out after 120 s'); })]);
  } catch (e) {
    check(false, 'exception: ' + (e && e.stack || e));
  }
  check(!srv.exited(), 'server still running at the end');
  const st = await stopServer(srv);
  check(st.code === 0, `server exit after SIGTERM: ${JSON.stringify(st)} (want code 0)`);
  if (failed) console.log(fs.readFileSync(srv.logPath, 'utf8').slice(-3000));
  else if (!process.env.PC_KEEP_LOGS) fs.unlinkSync(srv.logPath);
  console.log(`test_ioredis: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
main();
