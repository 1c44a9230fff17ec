// The API and the worker as separate child processes (`node --import tsx`, no wrapper
// process in between), so fault tests can SIGKILL and restart them, the log test can read
// their output, and the benchmark can sample their peak memory (VmHWM) from /proc.
import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { freePort } from '../../scripts/stack';

export const ROOT = path.resolve(__dirname, '..', '..');

export type ServiceScript = 'api/server.ts' | 'worker/main.ts';

export interface ServiceOptions {
  /** Environment on top of this process's (DATABASE_URL, TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE, ...). */
  env: Record<string, string | undefined>;
  /** Extra node flags, e.g. ['--cpu-prof', '--cpu-prof-dir=...']. */
  nodeArgs?: string[];
  /** Keep stdout and stderr in memory (otherwise they are discarded). */
  capture?: boolean;
}

export class ServiceProcess {
  readonly child: ChildProcess;
  readonly output: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private done = false;

  constructor(
    readonly script: ServiceScript,
    opts: ServiceOptions,
  ) {
    const env = { ...process.env, ...opts.env };
    this.child = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', script], {
      cwd: ROOT,
      env: env as NodeJS.ProcessEnv,
      stdio: ['ignore', opts.capture ? 'pipe' : 'ignore', opts.capture ? 'pipe' : 'ignore'],
    });
    if (opts.capture) {
      this.child.stdout!.on('data', (c: Buffer) => this.output.push(c.toString('utf8')));
      this.child.stderr!.on('data', (c: Buffer) => this.output.push(c.toString('utf8')));
    }
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        this.done = true;
        resolve({ code, signal });
      }),
    );
    // A test that times out (Jest's forceExit) or a bench that throws must not leave it behind.
    const reap = () => {
      if (!this.done) this.child.kill('SIGKILL');
    };
    process.once('exit', reap);
    void this.exited.then(() => process.removeListener('exit', reap));
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return !this.done;
  }

  /** Peak resident memory (VmHWM) in kB while the process is alive. */
  peakRssKb(): number | null {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'));
      return m ? Number(m[1]) : null;
    } catch {
      return null;
    }
  }

  text(): string {
    return this.output.join('');
  }

  kill9(): Promise<unknown> {
    if (this.done) return Promise.resolve();
    this.child.kill('SIGKILL');
    return this.exited;
  }

  /** SIGTERM, then SIGKILL if the process has not exited within `graceMs`. */
  async stop(graceMs = 10000): Promise<void> {
    if (this.done) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

async function until(
  what: string,
  proc: ServiceProcess,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (!proc.running) throw new Error(`${what}: the process exited before it was ready\n${proc.text().slice(-4000)}`);
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} was not ready within ${timeoutMs / 1000}s\n${proc.text().slice(-4000)}`);
}

export interface ApiProcess {
  proc: ServiceProcess;
  siteUrl: string;
  /** `{site}/api` */
  baseUrl: string;
}

/** Starts `api/server.ts` on a free port and waits until /healthz answers 200. */
export async function startApiProcess(opts: ServiceOptions & { port?: number }): Promise<ApiProcess> {
  const port = opts.port ?? (await freePort());
  const siteUrl = `http://127.0.0.1:${port}`;
  const proc = new ServiceProcess('api/server.ts', {
    ...opts,
    env: { ...opts.env, PORT: String(port), HOST: '127.0.0.1', SITE_URL: siteUrl },
  });
  await until('API', proc, async () => (await fetch(`${siteUrl}/healthz`)).status === 200, 90000);
  return { proc, siteUrl, baseUrl: `${siteUrl}/api` };
}

/**
 * Starts `worker/main.ts` and waits until this very process polls its workflow task
 * queue (a killed predecessor may still be listed as a poller for a while).
 */
export async function startWorkerProcess(
  temporal: Client,
  opts: ServiceOptions & { taskQueue: string },
): Promise<ServiceProcess> {
  const proc = new ServiceProcess('worker/main.ts', {
    ...opts,
    env: { ...opts.env, TEMPORAL_TASK_QUEUE: opts.taskQueue },
  });
  await until(
    'worker',
    proc,
    async () => {
      const res = await temporal.workflowService.describeTaskQueue({
        namespace: temporal.options.namespace,
        taskQueue: { name: opts.taskQueue },
        taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
      });
      return (res.pollers ?? []).some((p) => (p.identity ?? '').startsWith(`${proc.pid}@`));
    },
    180000,
  );
  return proc;
}

/**
 * Removes the schedules a worker process created for its task queue at start (mail
 * reconciler, webhook clean-up, ...), so the shared dev server does not keep firing them.
 */
export async function deleteSchedulesOf(temporal: Client, taskQueue: string): Promise<void> {
  for await (const s of temporal.schedule.list()) {
    if (s.scheduleId.includes(taskQueue))
      await temporal.schedule
        .getHandle(s.scheduleId)
        .delete()
        .catch(() => undefined);
  }
}

/** The stack settings a child needs, taken from this (test) process's environment. */
export function stackEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    NODE_ENV: 'test',
    DATABASE_URL: process.env.DATABASE_URL,
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
    S3_ENDPOINT: process.env.S3_ENDPOINT,
    S3_BUCKET: process.env.S3_BUCKET,
    STRIPE_API_BASE: process.env.STRIPE_API_BASE,
    SMTP_URL: process.env.SMTP_URL,
    WEBHOOKS_ALLOW_INSECURE_LOCAL: 'true',
    LOG_LEVEL: 'warn',
    // The worker's reconcilers sweep the whole database; other test files share it, so the
    // child's schedules must not start their lost workflows on this task queue.
    MAIL_RECONCILE_EVERY_SECONDS: '3600',
    INBOUND_RECONCILE_EVERY_SECONDS: '3600',
    NOTIFICATION_RECONCILE_EVERY_SECONDS: '3600',
    ...extra,
  };
}
