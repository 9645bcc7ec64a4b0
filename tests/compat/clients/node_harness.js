// node_harness.js: what the Node client tests (test_*.js here) share.
// check/eq count results; main(name, run) takes `SERVER [THREADS]` from the
// command line, starts SERVER on a free port (with --save '' --appendonly no;
// a redis-server gets no --threads), runs `await run(port)` under a 120 s
// limit, requires the server to exit 0 on SIGTERM, prints the tally and
// exits 1 on any failure.  Clients load from tests/compat/node/node_modules
// (npm ci there: tests/compat/clients/npm_ci.sh) with nodeModule(name).
'use strict';
const path = require('path');
const net = require('net');
const fs = require('fs');
const { spawn } = require('child_process');

let passed = 0, failed = 0;
function check(cond, what) {
  if (cond) passed++;
  else { failed++; console.log('FAIL: ' + what); }
}
function eq(got, want, what) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  check(g === w, `${what}: got ${g}, want ${w}`);
}
function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }
function nodeModule(name) { return require(path.join(__dirname, '..', 'node', 'node_modules', name)); }

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

async function startServer(name, bin, threads) {
  const isRedis = path.basename(bin).includes('redis-server');
  for (let attempt = 0; attempt < 4; attempt++) {
    const port = await freePort();
    // either server: no save points, no dump.rdb written into the shared cwd
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    if (!isRedis) args.push('--threads', String(threads));
    const logPath = path.join(process.env.PC_LOG_DIR || '.', `${name}-${port}.log`);
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

async function main(name, run) {
  const bin = process.argv[2] && path.resolve(process.argv[2]);
  if (!bin) { console.log(`usage: ${name}.js SERVER [THREADS]`); process.exit(2); }
  try { fs.accessSync(bin, fs.constants.X_OK); } catch (e) {
    console.log(`FAIL: server binary ${bin} is not executable`); process.exit(1);
  }
  const threads = process.argv[3] || '4';
  const srv = await startServer(name, bin, threads);
  console.log(`${name} against ${bin} (threads ${threads}) on port ${srv.port}`);
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
  console.log(`${name}: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

module.exports = { check, eq, sleep, nodeModule, main };
