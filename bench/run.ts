// `npm run bench`: brings up the test stack (Temporal dev server and object store on free
// ports under .data/test, detached and reused like `npm test`), a fresh Postgres database
// with migrations and one workflow bundle, then runs every bench below in turn, prints a
// table and writes bench/results/<timestamp>.json. A bench is an async function
// returning metrics; add new ones to BENCHES. The HTTP benches share an API process and
// a worker process (bench/services.ts) whose peak RSS is the last bench; the batch bench
// runs API and worker inside this process. BENCH_ONLY=mail,e2e runs a subset;
// BENCH_WEBHOOK_EVENTS sets the fan-out size (default 10,000); BENCH_MAIL_CONCURRENCY=16
// and BENCH_MAIL_DRY_RUN=skip|only narrow the load bench;
// BENCH_CPU_PROF=1 writes CPU profiles of the API and worker to bench/results/profiles/.
// BENCH_STACK=cluster runs the same benches against the cluster profile (scripts/cluster.ts:
// Temporal as four services on Postgres, started or reused) with two API and two worker
// processes; the batch bench still runs its API and worker inside this process.
import 'reflect-metadata';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../config';
import { dropDatabase, ensureStack, ROOT } from '../scripts/stack';
import { ensureCluster } from '../scripts/cluster';
import { runBatchBench } from './batch';
import { BenchServices, metric, startBenchServices } from './services';
import { runMailBench } from './mail';
import { runEndToEndBench } from './e2e';
import { runWebhookFanOutBench } from './webhooks';

export interface BenchMetric {
  bench: string;
  metric: string;
  value: number;
  unit: string;
  target?: string;
  ok?: boolean;
}

const log = (m: string) => console.log(`[bench] ${m}`);

const onCluster = process.env.BENCH_STACK === 'cluster';

/** The API and worker processes (two of each on the cluster), started by the first bench that needs them. */
let services: BenchServices | undefined;
const withServices = async () => (services ??= await startBenchServices(log, onCluster ? 2 : 1));

// Order matters: the fan-out and end-to-end benches run on a quiet worker, before the load
// bench leaves thousands of sandbox pieces behind.
const BENCHES: Array<{ name: string; run: () => Promise<BenchMetric[]> }> = [
  { name: 'e2e', run: async () => runEndToEndBench(await withServices(), { log }) },
  { name: 'webhooks', run: async () => runWebhookFanOutBench(await withServices(), { log, events: Number(process.env.BENCH_WEBHOOK_EVENTS ?? 10000) }) },
  {
    name: 'mail',
    run: async () => runMailBench(await withServices(), {
      log, concurrency: process.env.BENCH_MAIL_CONCURRENCY?.split(',').map(Number), dryRun: process.env.BENCH_MAIL_DRY_RUN as 'only' | 'skip' | undefined,
    }),
  },
  { name: 'batch', run: () => runBatchBench({ log }) },
  {
    name: 'processes',
    run: async () => {
      if (!services) return [];
      const mb = (kbs: Array<number | null>) => Math.max(...kbs.map((kb) => kb ?? NaN)) / 1024;
      const of = (n: number) => (n > 1 ? `, largest of ${n}` : '');
      return [
        metric('processes', `API process peak RSS (VmHWM${of(services.apis.length)})`, mb(services.apis.map((a) => a.proc.peakRssKb())), 'MB'),
        metric('processes', `worker process peak RSS (VmHWM${of(services.workers.length)})`, mb(services.workers.map((w) => w.peakRssKb())), 'MB'),
      ];
    },
  },
];

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

  // The cluster profile is reused while it runs (its own API and worker processes are not needed here).
  const cluster = onCluster ? (await ensureCluster({ detached: true, apps: false, log })).state : undefined;
  const { state } = await ensureStack({
    profile: cluster ? 'cluster' : 'test', databaseUrl, s3Bucket: 'postal-mail-test', detached: true,
    // As for `npm test`: an external Temporal or object store instead of the local ones.
    temporalAddress: cluster?.frontendAddress ?? process.env.TEST_TEMPORAL_ADDRESS, s3Endpoint: cluster?.s3Endpoint ?? process.env.TEST_S3_ENDPOINT,
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
  const only = process.env.BENCH_ONLY?.split(',').map((n) => n.trim()).filter(Boolean);
  try {
    for (const b of BENCHES) {
      if (only && !only.includes(b.name) && b.name !== 'processes') continue;
      log(`running ${b.name} ...`);
      try {
        metrics.push(...(await b.run()));
      } catch (err) {
        failed = true;
        console.error(`[bench] ${b.name} failed:`, err);
      }
    }
  } finally {
    await services?.stop().catch((err) => console.error('[bench] stopping the API and worker failed:', err));
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
    stack: { profile: cluster ? 'cluster' : 'test', temporal: state.temporal.address, object_store: state.s3.endpoint, api_processes: services?.apis.length, worker_processes: services?.workers.length },
    metrics,
  }, null, 2) + '\n');
  log(`results written to ${path.relative(ROOT, file)}`);
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
