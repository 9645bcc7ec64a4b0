#!/usr/bin/env node
// test_node_scripts.js SERVER [THREADS]: Node libraries built on Lua scripts
// work unchanged against the server:
//  - ioredis defineCommand (EVALSHA, and its EVAL fallback after SCRIPT FLUSH),
//    also in a pipeline;
//  - node-redis 4 defineScript and eval/evalSha;
//  - rate-limiter-flexible's RateLimiterRedis with ioredis and with node-redis 4:
//    consume, penalty, reward, block, get, delete; the exact remaining and
//    consumed points are the ones Redis gives (the same test passes against
//    redis-server: compat.node_scripts.redis);
//  - bee-queue: jobs created, processed, retried after a failure, their
//    'succeeded' / 'failed' / 'retrying' events, the queue's job counts;
//    delayed jobs (its addDelayedJob script PUBLISHes to the workers).
//  - BullMQ with a hash-tagged prefix ({bull}, as BullMQ asks for Redis Cluster:
//    its scripts build job keys they do not declare, then on the script's
//    shard) and with a plain one (bull: those keys on any shard): 200 jobs and
//    a delayed one through a worker, retries, QueueEvents over its events
//    stream (XREAD BLOCK), the job counts.
// Starts its own server on a free port (node_harness.js).
'use strict';
const { check, eq, nodeModule, main } = require('./node_harness');
const Redis = nodeModule('ioredis');
const redis4 = nodeModule('redis4');
const { RateLimiterRedis } = nodeModule('rate-limiter-flexible');
const BeeQueue = nodeModule('bee-queue');

function ioredis(port) {
  const r = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, retryStrategy: () => null });
  r.on('error', (e) => console.log('ioredis error event: ' + e.message));
  return r;
}

// resolves with what `fn` resolves or rejects with (rate-limiter-flexible rejects with a RateLimiterRes)
function settle(p) { return p.then((v) => ({ ok: v }), (e) => ({ rejected: e })); }

async function runDefineCommand(port) {
  const r = ioredis(port);
  await r.flushall();
  r.defineCommand('moveAmount', {
    numberOfKeys: 2,
    lua: "local v = redis.call('decrby', KEYS[1], ARGV[1]); redis.call('incrby', KEYS[2], ARGV[1]); " +
         "return {v, tonumber(redis.call('get', KEYS[2]))}",
  });
  eq(await r.moveAmount('acct:a', 'acct:b', 5), [-5, 5], 'defineCommand on two keys (two shards)');
  eq(await r.script('FLUSH'), 'OK', 'SCRIPT FLUSH');
  eq(await r.moveAmount('acct:a', 'acct:b', 1), [-6, 6], 'defineCommand after SCRIPT FLUSH (NOSCRIPT, then EVAL)');
  const res = await r.pipeline().moveAmount('acct:b', 'acct:a', 6).get('acct:a').exec();
  eq(res, [[null, [0, 0]], [null, '0']], 'defineCommand in a pipeline');
  r.defineCommand('fails', { numberOfKeys: 0, lua: "return redis.error_reply('MYERR custom')" });
  let err = null;
  try { await r.fails(); } catch (e) { err = e; }
  check(err && err.name === 'ReplyError' && err.message === 'MYERR custom',
        'a script error is a ReplyError: ' + (err && err.message));
  r.disconnect();
}

async function runDefineScript(port) {
  const c = redis4.createClient({
    socket: { host: '127.0.0.1', port, reconnectStrategy: false },
    scripts: {
      addTo: redis4.defineScript({
        NUMBER_OF_KEYS: 1,
        SCRIPT: "return redis.call('incrby', KEYS[1], ARGV[1])",
        transformArguments(key, n) { return [key, String(n)]; },
        transformReply(reply) { return reply; },
      }),
    },
  });
  c.on('error', (e) => console.log('node-redis error event: ' + e.message));
  await c.connect();
  await c.flushAll();
  eq(await c.addTo('ds', 4), 4, 'defineScript');
  await c.scriptFlush();
  eq(await c.addTo('ds', 3), 7, 'defineScript after SCRIPT FLUSH (NOSCRIPT, then EVAL)');
  eq(await c.eval("return {KEYS[1], ARGV[1]}", { keys: ['k'], arguments: ['v'] }), ['k', 'v'], 'eval');
  const sha = await c.scriptLoad("return redis.call('get', KEYS[1])");
  eq(await c.evalSha(sha, { keys: ['ds'] }), '7', 'scriptLoad + evalSha');
  await c.quit();
}

// the same steps, with the same expected figures, for both clients
async function runLimiter(what, client, opts) {
  const limiter = new RateLimiterRedis({ storeClient: client, points: 5, duration: 60, keyPrefix: 'rl' + what, ...opts });
  const key = 'user1';
  const seen = [];
  for (let i = 0; i < 3; i++) {
    const res = await limiter.consume(key);
    seen.push([res.consumedPoints, res.remainingPoints]);
  }
  eq(seen, [[1, 4], [2, 3], [3, 2]], `${what}: consume x3 (consumed, remaining)`);
  const pen = await limiter.penalty(key, 1);
  eq([pen.consumedPoints, pen.remainingPoints], [4, 1], `${what}: penalty 1`);
  const rew = await limiter.reward(key, 2);
  eq([rew.consumedPoints, rew.remainingPoints], [2, 3], `${what}: reward 2`);
  const two = await limiter.consume(key, 2);
  eq([two.consumedPoints, two.remainingPoints], [4, 1], `${what}: consume 2`);
  const over = await settle(limiter.consume(key, 2));
  check(over.rejected && over.rejected.remainingPoints === 0 && over.rejected.consumedPoints === 6,
        `${what}: over the limit rejects with remaining 0, consumed 6: ${JSON.stringify(over)}`);
  check(over.rejected && over.rejected.msBeforeNext > 50000 && over.rejected.msBeforeNext <= 60000,
        `${what}: msBeforeNext within the 60 s window: ${over.rejected && over.rejected.msBeforeNext}`);
  const got = await limiter.get(key);
  eq(got && got.consumedPoints, 6, `${what}: get`);
  eq(await limiter.delete(key), true, `${what}: delete`);
  eq(await limiter.get(key), null, `${what}: get after delete`);
  const blk = await limiter.block('user2', 30);
  check(blk.msBeforeNext > 25000 && blk.msBeforeNext <= 30000, `${what}: block 30 s: ${blk.msBeforeNext}`);
  const blocked = await settle(limiter.consume('user2'));
  check(blocked.rejected && blocked.rejected.remainingPoints === 0,
        `${what}: a blocked key is rejected: ${JSON.stringify(blocked)}`);
  // many keys (spread over the shards), each consumed once per round, concurrently
  const keys = Array.from({ length: 40 }, (_, i) => 'many' + i);
  for (let round = 1; round <= 3; round++) {
    const rs = await Promise.all(keys.map((k) => limiter.consume(k)));
    check(rs.every((x) => x.consumedPoints === round && x.remainingPoints === 5 - round),
          `${what}: round ${round} over 40 keys: ${JSON.stringify(rs.find((x) => x.consumedPoints !== round))}`);
  }
}

async function runRateLimiter(port) {
  const r = ioredis(port);
  await r.flushall();
  await runLimiter('ioredis', r, {});
  r.disconnect();
  const c = redis4.createClient({ socket: { host: '127.0.0.1', port, reconnectStrategy: false } });
  c.on('error', (e) => console.log('node-redis error event: ' + e.message));
  await c.connect();
  await runLimiter('node-redis', c, { useRedisPackage: true });
  await c.quit();
}

function waitFor(what, cond, ms) {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + ms;
    const t = setInterval(() => {
      if (cond()) { clearInterval(t); resolve(); }
      else if (Date.now() > deadline) { clearInterval(t); reject(new Error('timed out waiting for ' + what)); }
    }, 20);
  });
}

async function runBeeQueue(port) {
  const redisOpts = { host: '127.0.0.1', port };
  const producer = new BeeQueue('bq-test', { redis: redisOpts, isWorker: false });
  const worker = new BeeQueue('bq-test', { redis: redisOpts, activateDelayedJobs: true });
  await producer.ready();
  await worker.ready();
  await producer.destroy().catch(() => {}); // a clean queue: no keys of an earlier run
  const events = { succeeded: {}, failed: {}, retrying: {} };
  const attempts = {};
  worker.process(4, async (job) => {
    attempts[job.data.n] = (attempts[job.data.n] || 0) + 1;
    if (job.data.failTimes >= attempts[job.data.n]) throw new Error('planned failure ' + attempts[job.data.n]);
    return { doubled: job.data.n * 2 };
  });
  const jobs = [];
  for (let n = 0; n < 20; n++) {
    const job = producer.createJob({ n, failTimes: n % 5 === 0 ? 1 : (n === 7 ? 9 : 0) }).retries(n === 7 ? 1 : 2);
    job.on('succeeded', (res) => { events.succeeded[n] = res; });
    job.on('failed', (e) => { events.failed[n] = e.message; });
    job.on('retrying', (e) => { events.retrying[n] = (events.retrying[n] || 0) + 1; });
    jobs.push(await job.save());
  }
  // delayed jobs: bee-queue's addDelayedJob script PUBLISHes the earliest delay to the workers
  for (let n = 20; n < 23; n++) {
    const job = producer.createJob({ n, failTimes: 0 }).delayUntil(Date.now() + 300 + 100 * (n - 20));
    job.on('succeeded', (res) => { events.succeeded[n] = res; });
    jobs.push(await job.save());
  }
  eq(new Set(jobs.map((j) => j.id)).size, 23, 'bee-queue: 23 jobs saved with distinct ids');
  await waitFor('every job done',
                () => Object.keys(events.succeeded).length + Object.keys(events.failed).length === 23, 30000);
  const wantOk = {};
  for (let n = 0; n < 23; n++) if (n !== 7) wantOk[n] = { doubled: n * 2 };
  eq(events.succeeded, wantOk, 'bee-queue: every job but the doomed one succeeded, with its result');
  eq(events.failed, { 7: 'planned failure 2' }, 'bee-queue: the job out of retries failed');
  eq(events.retrying, { 0: 1, 5: 1, 7: 1, 10: 1, 15: 1 }, 'bee-queue: one retry event per failed attempt');
  eq(attempts[0], 2, 'bee-queue: a retried job ran twice');
  const counts = await producer.checkHealth();
  eq([counts.waiting, counts.active, counts.succeeded, counts.failed, counts.delayed], [0, 0, 22, 1, 0],
     'bee-queue: checkHealth counts');
  const fetched = await producer.getJob(jobs[3].id);
  eq(fetched && fetched.status, 'succeeded', 'bee-queue: getJob status');
  await worker.close(10000);
  await producer.destroy();
  await producer.close(10000);
}

// BullMQ with a hash-tagged prefix ({bull}: every key of a queue on one shard, as BullMQ asks for Redis
// Cluster; its scripts build job keys from the prefix, keys they do not declare), and with a plain one (bull:
// those keys on any shard, where such scripts run again over every shard): 200 jobs added, a worker
// runs them 4 at a time, some fail once and are retried, a delayed job; QueueEvents reads the events stream
// with XREAD BLOCK; the job counts and a return value read back
async function runBullmq(port, prefix) {
  const { Queue, Worker, QueueEvents } = nodeModule('bullmq');
  const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
  const queue = new Queue('jobs', { connection, prefix });
  await queue.obliterate({ force: true }).catch(() => {});
  const events = new QueueEvents('jobs', { connection, prefix });
  await events.waitUntilReady();
  let completedEvents = 0;
  events.on('completed', () => { completedEvents++; });
  const N = 200;
  let done = 0, failed = 0;
  const worker = new Worker('jobs', async (job) => {
    if (job.data.i % 50 === 7 && job.attemptsMade === 0) throw new Error('once');
    return job.data.i * 2;
  }, { connection, prefix, concurrency: 4 });
  worker.on('completed', () => { done++; });
  worker.on('failed', () => { failed++; });
  for (let i = 0; i < N; i++) await queue.add('j', { i }, { attempts: 2, backoff: 0 });
  const delayedAt = Date.now();
  const delayed = await queue.add('later', { i: 1000 }, { delay: 300 });
  await waitFor('every BullMQ job done', () => done === N + 1, 60000);
  await waitFor('a completed event for every job', () => completedEvents === N + 1, 30000);
  eq(failed, 4, 'BullMQ: the four jobs that fail once');
  eq(await queue.getJobCounts('completed', 'failed', 'waiting', 'delayed', 'active'),
     { completed: N + 1, failed: 0, waiting: 0, delayed: 0, active: 0 }, 'BullMQ: job counts');
  const job = await queue.getJob(delayed.id);
  eq(job.returnvalue, 2000, 'BullMQ: a return value read back');
  check(job.processedOn - delayedAt >= 290, 'BullMQ: the delayed job ran after its delay');
  await worker.close();
  await events.close();
  await queue.obliterate({ force: true });
  await queue.close();
}

async function run(port) {
  await runDefineCommand(port);
  await runDefineScript(port);
  await runRateLimiter(port);
  await runBeeQueue(port);
  await runBullmq(port, '{bull}');
  await runBullmq(port, 'bull');
}

main('test_node_scripts', run);
