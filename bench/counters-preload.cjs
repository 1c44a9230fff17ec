// Bench-only instrumentation preloaded (`node --require`) into the API and worker
// processes when BENCH_COUNT=1 (bench/services.ts): counts what a process asks of others,
// without touching the project's code. Postgres statements by text (node-postgres
// Client#query, so TypeORM's too) and new connections; Temporal client calls by gRPC method
// (grpc-js unary calls: the API's client; the worker's core is native and not seen);
// outgoing HTTP requests and new TCP connections by host:port (the S3 client), with the
// checksum and Expect headers the S3 client sent. On SIGWINCH it writes the running totals
// to $BENCH_COUNTERS_DIR/<pid>.json (seq increases by one per dump); the bench diffs two
// dumps around a load window. Plain CommonJS: it loads before tsx.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const http = require('node:http');
const v8 = require('node:v8');
const vm = require('node:vm');

const { isMainThread, threadId } = require('node:worker_threads');

const dir = process.env.BENCH_COUNTERS_DIR;
const mb = (n) => Math.round((n / 1048576) * 10) / 10;
const memory = () => {
  const m = process.memoryUsage();
  return {
    rss: mb(m.rss),
    heapTotal: mb(m.heapTotal),
    heapUsed: mb(m.heapUsed),
    external: mb(m.external),
    arrayBuffers: mb(m.arrayBuffers),
  };
};
/** Memory of this isolate before and after a full collection, written atomically to `file`. */
function writeMemory(gc, file) {
  const before = memory();
  gc();
  const after = memory();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((sp) => [sp.space_name, mb(sp.space_used_size)]));
  fs.writeFileSync(
    `${file}.tmp`,
    JSON.stringify({
      at: Date.now(),
      before,
      after,
      heapLimitMb: mb(v8.getHeapStatistics().heap_size_limit),
      spacesAfterGc: spaces,
    }),
  );
  fs.renameSync(`${file}.tmp`, file);
}

if (dir && !isMainThread) {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const request = path.join(dir, `${process.pid}.gc-request`);
  let handled = Date.now();
  setInterval(() => {
    let at = 0;
    try {
      at = fs.statSync(request).mtimeMs;
    } catch {
      return;
    }
    if (at <= handled) return;
    handled = at;
    writeMemory(gc, path.join(dir, `${process.pid}.thread-${threadId}.mem.json`));
  }, 1000).unref();
}

if (dir && isMainThread) {
  const counts = {
    seq: 0,
    pid: process.pid,
    script: process.argv[1] || '',
    pg: { statements: {}, connects: 0 },
    grpc: {},
    http: { requests: {}, connections: {}, headers: {} },
  };
  const bump = (obj, key, n = 1) => {
    obj[key] = (obj[key] || 0) + n;
  };
  const sqlKey = (text) => String(text).replace(/\s+/g, ' ').trim().slice(0, 110);

  const pg = require('pg');
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function countedQuery(config, ...rest) {
    bump(counts.pg.statements, sqlKey(typeof config === 'string' ? config : config && config.text));
    return query.call(this, config, ...rest);
  };
  const connect = pg.Client.prototype.connect;
  pg.Client.prototype.connect = function countedConnect(...args) {
    counts.pg.connects++;
    return connect.apply(this, args);
  };

  // The grpc-js copy that @temporalio/client loads (there may be several in node_modules).
  try {
    const clientDir = path.dirname(require.resolve('@temporalio/client'));
    const grpc = require(require.resolve('@grpc/grpc-js', { paths: [clientDir] }));
    const unary = grpc.Client.prototype.makeUnaryRequest;
    grpc.Client.prototype.makeUnaryRequest = function countedUnary(method, ...rest) {
      bump(counts.grpc, String(method).split('/').pop());
      return unary.call(this, method, ...rest);
    };
  } catch {
    /* no Temporal client in this process */
  }

  const request = http.request;
  http.request = function countedRequest(...args) {
    const opts =
      typeof args[0] === 'object' && !(args[0] instanceof URL) ? args[0] : typeof args[1] === 'object' ? args[1] : {};
    const where = `${opts.hostname || opts.host || '?'}:${opts.port || ''}`;
    bump(counts.http.requests, `${opts.method || 'GET'} ${where}`);
    for (const h of Object.keys(opts.headers || {})) {
      const lower = h.toLowerCase();
      if (
        lower.startsWith('x-amz-checksum') ||
        lower === 'x-amz-sdk-checksum-algorithm' ||
        lower === 'expect' ||
        lower === 'content-md5'
      )
        bump(counts.http.headers, lower);
    }
    return request.apply(this, args);
  };
  const createConnection = http.Agent.prototype.createConnection;
  http.Agent.prototype.createConnection = function countedConnection(options, ...rest) {
    bump(counts.http.connections, `${options.host || options.hostname || '?'}:${options.port || ''}`);
    return createConnection.call(this, options, ...rest);
  };

  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  process.on('SIGURG', () => {
    fs.writeFileSync(path.join(dir, `${process.pid}.gc-request`), String(Date.now()));
    writeMemory(gc, path.join(dir, `${process.pid}.mem.json`));
  });

  process.on('SIGWINCH', () => {
    counts.seq++;
    const file = path.join(dir, `${process.pid}.json`);
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(counts));
    fs.renameSync(`${file}.tmp`, file);
  });
}
