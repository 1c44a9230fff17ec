// `npm run bench`: brings up the test stack (Temporal dev server and object store on free
// ports under .data/test, detached and reused like `npm test`), a fresh Postgres database
// with migrations and one workflow bundle, then runs every bench below in turn, prints a
// table and writes bench/results/<timestamp>.json. A bench is an async function
// returning metrics; add new ones to BENCHES. The HTTP benches share an API process and
// a worker process (bench/services.ts) whose peak RSS is the last bench; the batch bench
// runs API and worker inside this process. BENCH_ONLY=mail,e2e runs a subset;
// BENCH_WEBHOOK_EVENTS sets the fan-out size (default 10,000); BENCH_MAIL_CONCURRENCY=16
// BENCH_MAIL_DRY_RUN=skip|only and BENCH_MAIL_LETTERS=unique|repeated narrow the load bench, BENCH_MAIL_SECONDS=60 lengthens
// its windows (default 10 s: work a window leaves behind shows only in its CPU);
// BENCH_CPU_PROF=1 writes CPU profiles of the API and worker processes to
// bench/results/profiles/<run>/<role>/, summarises them for each load window (and records
// the c=16 windows of the dev server, API and worker with Linux perf when it is there);
// BENCH_COUNT=1 counts per piece what the API and worker ask of Postgres, Temporal and the
// object store (bench/counters.ts). The `baseline` bench (a no-op workflow per request)
// runs before `mail`, which divides its c=16 figures by the baseline's;
// BENCH_BASELINE_CONCURRENCY=16 narrows it. The `payments` bench delivers 1,000 signed Stripe
// events (500 sessions, each twice at once) and checks the ledger is exact. The `letters` bench
// prices HTML letters (Chromium) at c=1 and c=4 and DOCX letters (LibreOffice) with dry runs;
// the `merged` bench renders a 1,000-piece merged batch of one template and prints pieces per second.
// BENCH_STACK=cluster runs the same benches against the cluster profile (scripts/cluster.ts:
// Temporal as four services on Postgres, started or reused) with two API and two worker
// processes; the batch bench still runs its API and worker inside this process.
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
import { runLettersBench } from './letters';
import { runMergedBench } from './merged';
import { runEndToEndBench } from './e2e';
import { runWebhookFanOutBench } from './webhooks';
import { runPaymentBench } from './payments';
import { runBaselineBench } from './baseline';
import { pidListeningOn } from './cpu';
import { countingEnabled, dumpMemory } from './counters';
import { benchDetails } from './details';
import { perfAvailable, PerfRecorder, summariseProfileDir } from './profiles';
import type { StackState } from '../scripts/stack';

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
const profileDir = path.join(ROOT, 'bench', 'results', 'profiles', new Date().toISOString().replace(/[:.]/g, '-'));
const perf =
  process.env.BENCH_CPU_PROF === '1' && perfAvailable()
    ? new PerfRecorder(profileDir, (w) => w.includes('c=16'))
    : null;
const withServices = async () => {
  if (services) return services;
  services = await startBenchServices(log, onCluster ? 2 : 1, { profileDir });
  if (perf) {
    mkdirSync(profileDir, { recursive: true });
    services.marks.onBegin = (name, pids) => perf.begin(name, pids);
    services.marks.onEnd = (name) => perf.end(name);
  }
  return services;
};

/** The stack's Temporal dev server and object store processes, for CPU accounting (null when not on this machine or a cluster). */
let stackPids: { temporal: number | null; s3: number | null } = { temporal: null, s3: null };
let databaseName = '';

function findStackPids(state: StackState): { temporal: number | null; s3: number | null } {
  if (onCluster) return { temporal: null, s3: null };
  const port = (address: string) => Number(address.split(':').pop());
  return {
    temporal: (!state.temporal.external && state.temporal.pid) || pidListeningOn(port(state.temporal.address)),
    s3: (!state.s3.external && state.s3.pid) || pidListeningOn(Number(new URL(state.s3.endpoint).port)),
  };
}

// Order matters: the fan-out and end-to-end benches run on a quiet worker, before the load
// bench leaves thousands of sandbox pieces behind.
const BENCHES: Array<{ name: string; run: () => Promise<BenchMetric[]> }> = [
  { name: 'e2e', run: async () => runEndToEndBench(await withServices(), { log }) },
  {
    name: 'webhooks',
    run: async () =>
      runWebhookFanOutBench(await withServices(), { log, events: Number(process.env.BENCH_WEBHOOK_EVENTS ?? 10000) }),
  },
  {
    name: 'baseline',
    run: async () =>
      runBaselineBench(await withServices(), {
        log,
        temporalPid: stackPids.temporal,
        concurrency: process.env.BENCH_BASELINE_CONCURRENCY?.split(',').map(Number),
      }),
  },
  { name: 'letters', run: async () => runLettersBench(await withServices(), { log }) },
  { name: 'merged', run: () => runMergedBench({ log }) },
  {
    name: 'mail',
    run: async () =>
      runMailBench(await withServices(), {
        log,
        concurrency: process.env.BENCH_MAIL_CONCURRENCY?.split(',').map(Number),
        dryRun: process.env.BENCH_MAIL_DRY_RUN as 'only' | 'skip' | undefined,
        letters: process.env.BENCH_MAIL_LETTERS as 'unique' | 'repeated' | 'both' | undefined,
        durationSeconds: process.env.BENCH_MAIL_SECONDS ? Number(process.env.BENCH_MAIL_SECONDS) : undefined,
        stackPids,
        databaseName,
      }),
  },
  { name: 'batch', run: () => runBatchBench({ log }) },
  { name: 'payments', run: async () => runPaymentBench(await withServices(), { log }) },
  {
    name: 'processes',
    run: async () => {
      if (!services) return [];
      const mb = (kbs: Array<number | null>) => Math.max(...kbs.map((kb) => kb ?? NaN)) / 1024;
      const of = (n: number) => (n > 1 ? `, largest of ${n}` : '');
      const s = services;
      const out = [
        metric(
          'processes',
          `API process peak RSS (VmHWM${of(s.apis.length)})`,
          mb(s.apis.map((a) => a.proc.peakRssKb())),
          'MB',
        ),
        metric(
          'processes',
          `worker process peak RSS (VmHWM${of(s.workers.length)})`,
          mb(s.workers.map((w) => w.peakRssKb())),
          'MB',
        ),
      ];
      // What the worker keeps: its sticky workflow cache (the SDK's metric), and with BENCH_COUNT=1 each process's heap before and after a full collection.
      const cached = await Promise.all(
        s.workerMetricsUrls
          .map(async (url) => {
            const text = await (await fetch(url)).text().catch(() => '');
            return Number(/^temporal_sticky_cache_size(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? NaN);
          })
          .map((p) => p.catch(() => NaN)),
      );
      out.push(
        metric(
          'processes',
          `worker workflow cache: cached workflows${of(s.workers.length)}`,
          Math.max(...cached),
          'workflows',
        ),
      );
      if (countingEnabled()) {
        const memory: Record<string, unknown> = {};
        for (const [role, pid] of [
          ...s.apis.map((a, i) => [`api${i || ''}`, a.proc.pid] as const),
          ...s.workers.map((w, i) => [`worker${i || ''}`, w.pid] as const),
        ]) {
          const m = await dumpMemory(s.countersDir, pid);
          if (!m) continue;
          memory[role] = m;
          log(
            `memory ${role}: before GC ${JSON.stringify(m.before)}, after a full GC ${JSON.stringify(m.after)} (MB; V8 heap limit ${m.heapLimitMb} MB); heap spaces after GC ${JSON.stringify(m.spacesAfterGc)}`,
          );
          for (const [thread, t] of Object.entries(m.threads ?? {})) {
            log(
              `memory ${role} ${thread}: JS heap before GC ${t.before.heapUsed} MB (total ${t.before.heapTotal}), after a full GC ${t.after.heapUsed} MB (total ${t.after.heapTotal}); heap limit ${t.heapLimitMb} MB`,
            );
            out.push(metric('processes', `${role} ${thread}: JS heap used after a full GC`, t.after.heapUsed, 'MB'));
          }
          out.push(
            metric('processes', `${role}: RSS now`, m.before.rss, 'MB'),
            metric('processes', `${role}: JS heap used before a full GC`, m.before.heapUsed, 'MB'),
            metric('processes', `${role}: JS heap used after a full GC`, m.after.heapUsed, 'MB'),
            metric('processes', `${role}: V8 heap limit`, m.heapLimitMb, 'MB'),
          );
        }
        benchDetails.memory = memory;
      }
      return out;
    },
  },
];

function table(metrics: BenchMetric[]): string {
  const rows = metrics.map((m) => [
    m.bench,
    m.metric,
    `${m.value} ${m.unit}`,
    m.target ? `${m.target} ${m.unit}` : '',
    m.ok === undefined ? '' : m.ok ? 'ok' : 'MISSED',
  ]);
  const head = ['bench', 'metric', 'value', 'target', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

async function main() {
  const base = loadConfig({ ...process.env, PORT: '0' });
  const runId = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const dbUrl = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postal_test');
  databaseName = `postal_bench_${runId}`;
  dbUrl.pathname = `/${databaseName}`;
  const databaseUrl = dbUrl.toString();

  // The cluster profile is reused while it runs (its own API and worker processes are not needed here).
  const cluster = onCluster ? (await ensureCluster({ detached: true, apps: false, log })).state : undefined;
  const { state } = await ensureStack({
    profile: cluster ? 'cluster' : 'test',
    databaseUrl,
    s3Bucket: 'postal-mail-test',
    detached: true,
    // As for `npm test`: an external Temporal or object store instead of the local ones.
    temporalAddress: cluster?.frontendAddress ?? process.env.TEST_TEMPORAL_ADDRESS,
    s3Endpoint: cluster?.s3Endpoint ?? process.env.TEST_S3_ENDPOINT,
    stripeApiBase: cluster?.stripeApiBase ?? process.env.TEST_STRIPE_API_BASE,
    smtpUrl: cluster?.smtpUrl ?? process.env.TEST_SMTP_URL,
    s3AccessKeyId: base.s3AccessKeyId,
    s3SecretAccessKey: base.s3SecretAccessKey,
    s3Region: base.s3Region,
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
  stackPids = findStackPids(state);
  log(
    `CPU accounting: Temporal dev server pid ${stackPids.temporal ?? 'unknown (left out)'}, object store pid ${stackPids.s3 ?? 'unknown (left out)'}, Postgres backends of ${databaseName}`,
  );

  // startTestApp reads its configuration from the environment.
  Object.assign(process.env, {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: state.temporal.address,
    S3_ENDPOINT: state.s3.endpoint,
    STRIPE_API_BASE: state.stripe.apiBase,
    SMTP_URL: state.mail.smtpUrl,
    S3_BUCKET: 'postal-mail-test',
    TEMPORAL_TASK_QUEUE: `bench-${runId}`,
    WORKFLOW_BUNDLE_PATH: bundlePath,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
  });

  const metrics: BenchMetric[] = [];
  let failed = false;
  const only = process.env.BENCH_ONLY?.split(',')
    .map((n) => n.trim())
    .filter(Boolean);
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

  // Profiles are written when the processes exit: summarise them for the load windows.
  if (process.env.BENCH_CPU_PROF === '1' && services) {
    const summaries = summariseProfileDir(profileDir, services.marks.windows);
    benchDetails.cpuProfiles = summaries;
    benchDetails.windows = services.marks.windows;
    for (const [role, list] of Object.entries(summaries)) {
      for (const p of list.filter((x) => x.window.includes('c=16'))) {
        log(
          `profile ${role} ${p.window}: ${p.busySamples} busy samples, GC ${p.gc} %, native (program) ${p.program} %; by owner: ${p.byOwner
            .slice(0, 15)
            .map(([k, v]) => `${k} ${v} %`)
            .join(', ')}`,
        );
      }
    }
    if (perf) {
      const perfSummaries = perf.summarise();
      benchDetails.perf = perfSummaries;
      for (const p of perfSummaries) {
        log(
          `perf ${p.process} ${p.window}: ${p.samples} samples; ${(p.byGoPackage ?? p.byThreadAndLibrary)
            .slice(0, 12)
            .map(([k, v]) => `${k} ${v} %`)
            .join(', ')}`,
        );
      }
    }
    log(`profiles in ${path.relative(ROOT, profileDir)}`);
  }

  console.log(`\n${table(metrics)}\n`);
  const resultsDir = path.join(ROOT, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        at: new Date().toISOString(),
        machine: {
          cpus: os.cpus().length,
          cpu: os.cpus()[0]?.model,
          memory_mb: Math.round(os.totalmem() / 1048576),
          node: process.version,
        },
        stack: {
          profile: cluster ? 'cluster' : 'test',
          temporal: state.temporal.address,
          object_store: state.s3.endpoint,
          api_processes: services?.apis.length,
          worker_processes: services?.workers.length,
        },
        metrics,
        details: benchDetails,
      },
      null,
      2,
    ) + '\n',
  );
  log(`results written to ${path.relative(ROOT, file)}`);
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
