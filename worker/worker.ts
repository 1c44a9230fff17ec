// Builds a Temporal Worker for this project's workflows and activities. Used by the
// worker process and by tests. The workflows always come as a prebuilt bundle (given, or
// built in a child process: worker/bundle.ts), never bundled inside this process.
import { DefaultLogger, LogLevel, NativeConnection, Runtime, Worker, WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import { IllegalStateError } from '@temporalio/common';
import { activityFailureMetrics } from './metrics';
import type { Deps } from '../services/shared/deps';
import type { WorkerTuning } from '../config';
import { workflowBundle } from './bundle';
import { WORKFLOWS_PATH } from './bundle-workflows';

let runtimeInstalled = false;

/**
 * The SDK's runtime logs at INFO by default; keep it to warnings unless LOG_LEVEL says more.
 * With a metrics address its Prometheus exporter serves /metrics there. The runtime is
 * installed once per process, before the first worker; later workers (tests create several
 * in one process) use it as it is, so only the first one's metrics address counts.
 */
function installRuntime(level: string, metricsAddress: string | null): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const map: Record<string, LogLevel> = {
    trace: 'TRACE',
    debug: 'DEBUG',
    info: 'INFO',
    warn: 'WARN',
    error: 'ERROR',
    silent: 'ERROR',
  };
  try {
    Runtime.install({
      logger: new DefaultLogger(map[level] ?? 'WARN'),
      ...(metricsAddress
        ? {
            telemetryOptions: {
              metrics: {
                prometheus: { bindAddress: metricsAddress, countersTotalSuffix: true, useSecondsForDurations: true },
              },
            },
          }
        : {}),
    });
  } catch (err) {
    // Already installed by an earlier worker in this process; anything else (say, the metrics port is taken) stops the start.
    if (!(err instanceof IllegalStateError)) throw err;
  }
}

/**
 * The configured slots, cache and shutdown grace as Worker options. An unset slot count
 * is left out (not passed as undefined) so the SDK's default applies. After the
 * grace, in-flight activities are cancelled; 5 s later the worker gives up waiting
 * (run() rejects) and the process exits, leaving what is left to Temporal's retries.
 */
export function tuningOptions(t: WorkerTuning): Partial<WorkerOptions> {
  const slots: Partial<WorkerOptions> = {
    maxConcurrentWorkflowTaskExecutions: t.maxConcurrentWorkflowTaskExecutions,
    maxConcurrentActivityTaskExecutions: t.maxConcurrentActivityTaskExecutions,
    maxConcurrentLocalActivityExecutions: t.maxConcurrentLocalActivityExecutions,
    maxCachedWorkflows: t.maxCachedWorkflows,
  };
  return {
    ...Object.fromEntries(Object.entries(slots).filter(([, v]) => v !== undefined)),
    shutdownGraceTime: t.shutdownGraceSeconds * 1000,
    shutdownForceTime: (t.shutdownGraceSeconds + 5) * 1000,
  };
}

/**
 * `workflowBundlePath` (tests pass the run's bundle) or else WORKFLOW_BUNDLE_PATH is loaded
 * as it is; it must hold the project's workflows, so with another `workflowsPath` (the
 * bench's no-op worker) the bundle is built from that module instead.
 */
export async function createWorker(
  deps: Deps,
  opts: {
    workflowBundlePath?: string;
    workflowsPath?: string;
    taskQueue?: string;
    extra?: Partial<WorkerOptions>;
  } = {},
) {
  installRuntime(deps.config.logLevel === 'info' ? 'warn' : deps.config.logLevel, deps.config.worker.metricsAddress);
  const bundle = await workflowBundle({
    prebuiltPath: opts.workflowBundlePath ?? (opts.workflowsPath ? null : deps.config.worker.workflowBundlePath),
    workflowsPath: opts.workflowsPath ?? WORKFLOWS_PATH,
  });
  try {
    const connection = await NativeConnection.connect({ address: deps.config.temporalAddress });
    try {
      const worker = await Worker.create({
        connection,
        namespace: deps.config.temporalNamespace,
        taskQueue: opts.taskQueue ?? deps.config.taskQueue,
        activities: createActivities(deps),
        interceptors: { activity: [activityFailureMetrics] },
        ...tuningOptions(deps.config.worker),
        workflowBundle: { codePath: bundle.codePath },
        ...opts.extra,
      });
      return { worker, connection };
    } catch (err) {
      await connection.close().catch(() => undefined);
      throw err;
    }
  } finally {
    // Worker.create has read the file by now (or failed).
    bundle.release();
  }
}
