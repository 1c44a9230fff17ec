// The worker process: runs workflows and activities until SIGINT/SIGTERM, then drains:
// it stops polling, lets in-flight tasks finish (activities get WORKER_SHUTDOWN_GRACE_SECONDS
// before they are cancelled) and exits.
import { config } from '../config';
import { closeDeps, createDeps } from '../services/shared/create-deps';
import { createWorker } from './worker';
import { ensureWebhookCleanupSchedule } from '../services/webhooks/maintenance';
import { ensureWebhookDispatchReconcilerSchedule } from '../services/webhooks/dispatch';
import { ensureMailReconcilerSchedule } from '../services/outbound-mail/workflow';
import { ensureDryRunProofCleanupSchedule } from '../services/outbound-mail/print-proofs';
import { ensurePhysicalInboundReconcilerSchedule } from '../services/physical-inbound/inbound-reconciler';
import { ensureClosedWorkflowReconcilerSchedule } from '../services/operations/workflow-reconciler';
import { ensurePaymentsReconcilerSchedule } from '../services/billing/reconciler';
import { ensureNotificationsReconcilerSchedule } from '../services/notifications/reconciler';

async function main() {
  const deps = await createDeps(config, { name: 'worker' });
  const { worker, connection } = await createWorker(deps);
  // Schedules are created (or updated) idempotently on every start.
  await ensureWebhookCleanupSchedule(deps);
  await ensureWebhookDispatchReconcilerSchedule(deps);
  await ensureMailReconcilerSchedule(deps);
  await ensureDryRunProofCleanupSchedule(deps);
  await ensurePhysicalInboundReconcilerSchedule(deps);
  await ensureClosedWorkflowReconcilerSchedule(deps);
  await ensurePaymentsReconcilerSchedule(deps);
  await ensureNotificationsReconcilerSchedule(deps);
  deps.log.info({ taskQueue: config.taskQueue, temporal: config.temporalAddress }, 'worker started');
  // Ctrl-C reaches the process group, and a supervisor may send SIGTERM as well: drain once.
  let draining = false;
  const stop = (signal: NodeJS.Signals) => {
    if (draining) return;
    draining = true;
    deps.log.info({ signal, graceSeconds: config.worker.shutdownGraceSeconds }, 'worker draining');
    worker.shutdown();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await worker.run();
  await connection.close();
  await closeDeps(deps);
  deps.log.info('worker stopped');
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
