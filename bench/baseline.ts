// The baseline for the submission bench: the least Temporal work a piece can cost. This
// process (the client, one Temporal connection like the API's) starts a no-op workflow
// and waits for it to complete (`workflow.execute`), at 1, 16 and 64 at a time for 10 s
// each, against the same dev server, with the bench's no-op worker process
// (bench/noop-worker.ts: the project's createWorker and WORKER_* tuning on its own task
// queue) while the API and worker processes of the other benches stand by. Reports
// workflows/s, p50/p99 and the CPU ms per workflow summed over the dev server, the no-op
// worker and this client (/proc, bench/cpu.ts); the mail bench divides its own figures at
// c=16 by these (baselineResults).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { BenchMetric } from './run';
import { BenchServices, metric, percentile } from './services';
import { CpuMeter, cpuPerUnit } from './cpu';
import type { benchNoopWorkflow } from './noop-workflow';
import { ROOT } from '../scripts/stack';

export interface BaselineLevel {
  concurrency: number;
  workflowsPerSecond: number;
  p50: number;
  p99: number;
  completed: number;
  errors: number;
  /** CPU ms per workflow over the dev server, the no-op worker and the client. */
  cpuMsPerWorkflow: number;
  cpuByProcess: Record<string, number>;
}

/** Filled by runBaselineBench; the mail bench reads the level it compares with. */
export const baselineResults = new Map<number, BaselineLevel>();

/** The processes whose CPU makes up a bare workflow (and, with the API in the client's place, a piece). */
export const BASELINE_PROCESSES = ['temporal', 'worker', 'client'];

export interface BaselineOptions {
  durationSeconds?: number;
  concurrency?: number[];
  log?: (m: string) => void;
  /** The dev server's pid (null: not known, its CPU is left out and the ratio says so). */
  temporalPid: number | null;
}

/** Starts bench/noop-worker.ts on its own task queue and waits until it polls. */
async function startNoopWorker(s: BenchServices, taskQueue: string, nodeArgs: string[]) {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join('bench', 'noop-worker.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...s.env, TEMPORAL_TASK_QUEUE: taskQueue },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  const end = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error('the no-op worker exited before it polled');
    const res = await s.deps.temporal.workflowService
      .describeTaskQueue({
        namespace: s.deps.temporal.options.namespace,
        taskQueue: { name: taskQueue },
        taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
      })
      .catch(() => undefined);
    if ((res?.pollers ?? []).some((p) => (p.identity ?? '').startsWith(`${child.pid}@`))) break;
    if (Date.now() > end) throw new Error('the no-op worker did not poll within 180 s');
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      process.removeListener('exit', reap);
    },
  };
}

/** `concurrency` loops, each executing one no-op workflow after another until the time is up. */
async function load(s: BenchServices, taskQueue: string, concurrency: number, durationSeconds: number) {
  const prefix = `bench-noop-${randomBytes(4).toString('hex')}`;
  const latencies: number[] = [];
  let errors = 0;
  let n = 0;
  const started = performance.now();
  const until = started + durationSeconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        try {
          await s.deps.temporal.workflow.execute<typeof benchNoopWorkflow>('benchNoopWorkflow', {
            taskQueue,
            workflowId: `${prefix}-${n++}`,
            args: [],
          });
          latencies.push(performance.now() - t0);
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    completed: latencies.length,
    errors,
  };
}

export async function runBaselineBench(s: BenchServices, opts: BaselineOptions): Promise<BenchMetric[]> {
  const duration = opts.durationSeconds ?? 10;
  const levels = opts.concurrency ?? [1, 16, 64];
  const log = opts.log ?? (() => undefined);
  const taskQueue = `${s.taskQueue}-noop`;
  const worker = await startNoopWorker(s, taskQueue, s.nodeArgs('noop-worker'));
  log(`no-op worker pid ${worker.pid} on ${taskQueue}`);
  const meter = new CpuMeter({ pids: { temporal: opts.temporalPid, worker: worker.pid, client: process.pid } });
  const metrics: BenchMetric[] = [];
  try {
    // Warm-up: JIT, the client's channel, the worker's workflow cache.
    await load(s, taskQueue, 4, 2);
    for (const c of levels) {
      const before = await meter.settled();
      const pids: Record<string, number> = {
        'noop-worker': worker.pid,
        client: process.pid,
        ...(opts.temporalPid ? { temporal: opts.temporalPid } : {}),
      };
      s.marks.begin(`baseline c=${c}`, pids);
      const r = await load(s, taskQueue, c, duration);
      await s.marks.end(`baseline c=${c}`);
      const after = await meter.settled();
      const d = meter.delta(before, after);
      const cpu = cpuPerUnit(
        d,
        r.completed,
        BASELINE_PROCESSES.filter((p) => p in d.processes),
      );
      const level: BaselineLevel = {
        concurrency: c,
        workflowsPerSecond: r.perSecond,
        p50: r.p50,
        p99: r.p99,
        completed: r.completed,
        errors: r.errors,
        cpuMsPerWorkflow: cpu.total,
        cpuByProcess: cpu.byProcess,
      };
      baselineResults.set(c, level);
      const parts = Object.entries(cpu.byProcess)
        .filter(([name]) => name !== 'postgres')
        .map(([name, ms]) => `${name} ${ms.toFixed(2)}`)
        .join(', ');
      log(
        `baseline c=${c}: ${r.perSecond.toFixed(1)} workflows/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ${r.completed} completed, ${r.errors} errors; ` +
          `CPU ${cpu.total.toFixed(2)} ms/workflow (${parts}); machine ${(d.machineBusyShare * 100).toFixed(0)} % busy`,
      );
      const bench = `baseline no-op workflow c=${c}`;
      metrics.push(
        metric(bench, 'workflows/s (start + complete)', r.perSecond, 'workflows/s'),
        metric(bench, 'p50 latency', r.p50, 'ms'),
        metric(bench, 'p99 latency', r.p99, 'ms'),
        metric(
          bench,
          `CPU per workflow (${BASELINE_PROCESSES.filter((p) => p in d.processes).join(' + ')})`,
          cpu.total,
          'ms',
        ),
        ...Object.entries(cpu.byProcess)
          .filter(([name]) => name !== 'postgres')
          .map(([name, ms]) => metric(bench, `CPU per workflow: ${name}`, ms, 'ms')),
        metric(bench, 'machine busy during the window', d.machineBusyShare * 100, '%'),
        metric(bench, 'errors', r.errors, 'errors', { text: '0', ok: r.errors === 0 }),
      );
    }
  } finally {
    await worker.stop();
  }
  return metrics;
}
