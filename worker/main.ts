// The worker process: runs workflows and activities until SIGINT/SIGTERM.
import 'reflect-metadata';
import { config } from '../config';
import { closeDeps, createDeps } from '../services/deps';
import { createWorker } from './worker';
import { ensureWebhookCleanupSchedule } from '../services/webhook-maintenance';
import { ensureWebhookDispatchReconcilerSchedule } from '../services/webhook-dispatch';
import { ensureMailReconcilerSchedule } from '../services/mail-workflow';
import { ensurePhysicalInboundReconcilerSchedule } from '../services/handling';

async function main() {
  const deps = await createDeps(config, { name: 'worker' });
  const { worker, connection } = await createWorker(deps);
  // Schedules are created (or updated) idempotently on every start.
  await ensureWebhookCleanupSchedule(deps);
  await ensureWebhookDispatchReconcilerSchedule(deps);
  await ensureMailReconcilerSchedule(deps);
  await ensurePhysicalInboundReconcilerSchedule(deps);
  deps.log.info({ taskQueue: config.taskQueue, temporal: config.temporalAddress }, 'worker started');
  const stop = () => worker.shutdown();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await worker.run();
  await connection.close();
  await closeDeps(deps);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
