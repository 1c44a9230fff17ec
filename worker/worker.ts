// Builds a Temporal Worker for this project's workflows and activities. Used by the
// worker process and by tests, which pass a prebuilt workflow bundle to start fast.
import path from 'node:path';
import { DefaultLogger, LogLevel, NativeConnection, Runtime, Worker, WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { Deps } from '../services/deps';

export const WORKFLOWS_PATH = path.join(__dirname, '..', 'workflows', 'index.ts');

let runtimeInstalled = false;

/** The SDK's runtime logs at INFO by default; keep it to warnings unless LOG_LEVEL says more. */
function installRuntime(level: string): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const map: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', silent: 'ERROR' };
  try {
    Runtime.install({ logger: new DefaultLogger(map[level] ?? 'WARN') });
  } catch {
    // Already installed by an earlier worker in this process.
  }
}

export async function createWorker(deps: Deps, opts: { workflowBundlePath?: string; taskQueue?: string; extra?: Partial<WorkerOptions> } = {}) {
  installRuntime(deps.config.logLevel === 'info' ? 'warn' : deps.config.logLevel);
  const connection = await NativeConnection.connect({ address: deps.config.temporalAddress });
  const worker = await Worker.create({
    connection,
    namespace: deps.config.temporalNamespace,
    taskQueue: opts.taskQueue ?? deps.config.taskQueue,
    activities: createActivities(deps),
    ...(opts.workflowBundlePath ? { workflowBundle: { codePath: opts.workflowBundlePath } } : { workflowsPath: WORKFLOWS_PATH }),
    ...opts.extra,
  });
  return { worker, connection };
}
