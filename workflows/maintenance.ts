// Maintenance run by a Temporal Schedule (created idempotently when the worker starts):
// deletes webhook delivery history older than 30 days and restarts deliveries whose
// workflow never started (a process died between the insert and the start).
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { WebhookHistoryCleanupInput, WebhookHistoryCleanupResult } from './contracts/maintenance';

const { deleteOldWebhookHistory, restartStalledWebhookDeliveries } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});

export async function webhookHistoryCleanupWorkflow(input: WebhookHistoryCleanupInput): Promise<WebhookHistoryCleanupResult> {
  const deleted = await deleteOldWebhookHistory({ retentionDays: input.retentionDays });
  const restarted = await restartStalledWebhookDeliveries({ stalledAfterSeconds: input.stalledAfterSeconds });
  return { ...deleted, restartedDeliveries: restarted };
}
