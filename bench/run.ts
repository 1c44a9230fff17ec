// `npm run bench`: brings up the test stack (Temporal dev server and object store on free
// ports under .data/test, detached and reused like `npm test`), a fresh Postgres database
// with migrations and one workflow bundle, then runs every bench below in turn, prints a
// table and writes bench/results/<timestamp>.json. A bench is an async function
// returning metrics; add new ones to BENCHES.
import 'reflect-metadata';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { loadConfig } from '../config';
import { ensureStack, ROOT } from '../scripts/stack';
import { runBatchBench } from './batch';

export interface BenchMetric {
  bench: string;
  metric: string;
  value: number;
  unit: string;
  target?: string;
  ok?: boolean;
}

const log = (m: string) => console.log(`[bench] ${m}`);

const BENCHES: Array<{ name: string; run: () => Promise<BenchMetric[]> }> = [
  { name: 'batch', run: () => runBatchBench({ log }) },
];

async function dropDatabase(url: string): Promise<void> {
  const u = new URL(url);
  const name = u.pathname.slice(1);
  u.pathname = '/postgres';
  const c = new Client({ connectionString: u.toString() });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
  await c.end();
}

function table(metrics: BenchMetric[]): string {
  const rows = metrics.map((m) => [m.bench, m.metric, `${m.value} ${m.unit}`, m.target ? `${m.target} ${m.unit}` : '', m.ok === undefined ? '' : m.ok ? 'ok' : 'MISSED']);
  const head = ['bench', 'metric', 'value', 'target', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

async function main() {
  const base = loadConfig({ ...process.env, PORT: '0' });
  const runId = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const dbUrl = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postal_test');
  dbUrl.pathname = `/postal_bench_${runId}`;
  const databaseUrl = dbUrl.toString();

  const { state } = await ensureStack({
    profile: 'test', databaseUrl, s3Bucket: 'postal-mail-test', detached: true,
    s3AccessKeyId: base.s3AccessKeyId, s3SecretAccessKey: base.s3SecretAccessKey, s3Region: base.s3Region,
  });

  const bundleDir = path.join(ROOT, '.data', 'test', 'bundles');
  mkdirSync(bundleDir, { recursive: true });
  const bundlePath = path.join(bundleDir, `workflows-bench-${runId}.js`);
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  const bundle = await bundleWorkflowCode({
    workflowsPath: path.join(ROOT, 'workflows', 'index.ts'),
    logger: { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} } as never,
  });
  writeFileSync(bundlePath, bundle.code);

  // startTestApp reads its configuration from the environment.
  Object.assign(process.env, {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: state.temporal.address,
    S3_ENDPOINT: state.s3.endpoint,
    S3_BUCKET: 'postal-mail-test',
    TEMPORAL_TASK_QUEUE: `bench-${runId}`,
    WORKFLOW_BUNDLE_PATH: bundlePath,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
  });

  const metrics: BenchMetric[] = [];
  let failed = false;
  try {
    for (const b of BENCHES) {
      log(`running ${b.name} ...`);
      try {
        metrics.push(...(await b.run()));
      } catch (err) {
        failed = true;
        console.error(`[bench] ${b.name} failed:`, err);
      }
    }
  } finally {
    rmSync(bundlePath, { force: true });
    await dropDatabase(databaseUrl);
  }

  console.log(`\n${table(metrics)}\n`);
  const resultsDir = path.join(ROOT, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memory_mb: Math.round(os.totalmem() / 1048576), node: process.version },
    stack: { temporal: state.temporal.address, object_store: state.s3.endpoint },
    metrics,
  }, null, 2) + '\n');
  log(`results written to ${path.relative(ROOT, file)}`);
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
