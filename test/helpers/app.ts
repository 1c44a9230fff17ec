// Starts the API (on a free port) and a Temporal worker (on a task queue of its own)
// inside the test process, against the stack that scripts/test.ts started.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../config';
import { startServer } from '../../api/server';
import { closeDeps, createDeps } from '../../services/shared/create-deps';
import type { Deps } from '../../services/shared/deps';
import { createWorker } from '../../worker/worker';
import type { Worker } from '@temporalio/worker';
import { client, http, RequestOptions } from './http';
import { recordResponses } from '../contract/recorder';

export interface TestApp {
  deps: Deps;
  /** `{site}/api` */
  baseUrl: string;
  siteUrl: string;
  worker?: Worker;
  close(): Promise<void>;
}

export async function startTestApp(opts: { worker?: boolean; env?: Record<string, string> } = {}): Promise<TestApp> {
  const taskQueue = `${process.env.TEMPORAL_TASK_QUEUE ?? 'test'}-${randomBytes(4).toString('hex')}`;
  const config = loadConfig({ ...process.env, ...opts.env, TEMPORAL_TASK_QUEUE: taskQueue, PORT: '0' });
  const deps = await createDeps(config, { poolSize: 8, name: 'test' });
  const server: Server = await startServer(deps, 0, '127.0.0.1');
  // Every answer is checked against the OpenAPI document when the run ends (test/contract/teardown.ts).
  recordResponses(server);
  const port = (server.address() as AddressInfo).port;
  // Links the API writes into bodies (billing_url, callback_url) use the real port.
  config.port = port;
  config.siteUrl = `http://127.0.0.1:${port}`;
  config.baseUrl = `${config.siteUrl}${config.apiPrefix}`;

  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  let connection: { close(): Promise<void> } | undefined;
  if (opts.worker !== false) {
    const created = await createWorker(deps, { workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH, taskQueue });
    worker = created.worker;
    connection = created.connection;
    running = worker.run();
  }

  return {
    deps,
    baseUrl: config.baseUrl,
    siteUrl: config.siteUrl,
    worker,
    async close() {
      if (worker && worker.getState() === 'RUNNING') worker.shutdown();
      await running?.catch(() => undefined);
      await connection?.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      await closeDeps(deps);
    },
  };
}

/**
 * The usual suite setup: starts the app before the suite's tests and closes it after.
 * `app` reads through to the started app, and `api` is http() bound to its base URL, so
 * both can be destructured at describe time and used once beforeAll has run.
 */
export function useTestApp(opts: Parameters<typeof startTestApp>[0] = {}): {
  app: TestApp;
  api: ReturnType<typeof client>;
} {
  let current: TestApp | undefined;
  const started = (): TestApp => {
    if (!current) throw new Error('the test app is not started yet (use it inside a test or a hook)');
    return current;
  };
  beforeAll(async () => {
    current = await startTestApp(opts);
  });
  afterAll(async () => {
    await started().close();
  });
  const app: TestApp = {
    get deps() {
      return started().deps;
    },
    get baseUrl() {
      return started().baseUrl;
    },
    get siteUrl() {
      return started().siteUrl;
    },
    get worker() {
      return started().worker;
    },
    close: () => started().close(),
  };
  const api = <T = any>(method: string, path: string, requestOpts: RequestOptions = {}) =>
    http<T>(app.baseUrl, method, path, requestOpts);
  return { app, api };
}
