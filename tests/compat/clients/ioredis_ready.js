#!/usr/bin/env node
// ioredis_ready.js PORT KEY: connects ioredis (its ready check on) to a server
// already running on PORT, maybe still loading its dataset; once ioredis says
// ready, prints one JSON line {"dbsize": N, "value": GET KEY, "ms": wait}.
// ioredis's ready check sends INFO and, while it says loading:1, waits and asks
// again (loading_eta_seconds): a DBSIZE right after ready gets the whole count,
// never -LOADING.  Used by tests/compat/load_cross.py.
'use strict';
const { nodeModule } = require('./node_harness');
const Redis = nodeModule('ioredis');

async function run() {
  const port = Number(process.argv[2]), key = process.argv[3];
  const start = Date.now();
  const r = new Redis({ host: '127.0.0.1', port, enableReadyCheck: true, lazyConnect: true,
                        maxRetriesPerRequest: 1, connectTimeout: 10000 });
  r.on('error', (e) => console.log('client error event: ' + e.message));
  await r.connect();
  const dbsize = await r.dbsize();
  const value = await r.get(key);
  console.log(JSON.stringify({ dbsize, value, ms: Date.now() - start }));
  r.disconnect();
}

run().then(() => process.exit(0), (e) => { console.log('FAIL: ' + (e && e.stack || e)); process.exit(1); });
