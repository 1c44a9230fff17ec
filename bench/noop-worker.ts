// The worker process of the baseline bench: the project's worker (worker/worker.ts:
// createWorker, the same connection, runtime, activities, interceptors and
// WORKER_* tuning as worker/main.ts) on its own task queue (TEMPORAL_TASK_QUEUE), with the
// bench's no-op workflow (bench/noop-workflow.ts) as its only workflow. Its own process,
// so its CPU can be read from /proc like the real worker's. Stops on SIGTERM/SIGINT.
import 'reflect-metadata';
import path from 'node:path';
import { config } from '../config';
import { closeDeps, createDeps } from '../services/shared/create-deps';
import { createWorker } from '../worker/worker';

async function main() {
  const deps = await createDeps(config, { name: 'bench-noop-worker' });
  const { worker, connection } = await createWorker(deps, { workflowsPath: path.join(__dirname, 'noop-workflow.ts') });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    worker.shutdown();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await worker.run();
  await connection.close();
  await closeDeps(deps);
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
