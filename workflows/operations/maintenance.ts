// Maintenance run by a Temporal Schedule (created idempotently when the worker starts):
// deletes webhook delivery history older than 30 days.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { WebhookHistoryCleanupInput, WebhookHistoryCleanupResult } from './contracts';

const { deleteOldWebhookHistory } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});

export async function webhookHistoryCleanupWorkflow(
  input: WebhookHistoryCleanupInput,
): Promise<WebhookHistoryCleanupResult> {
  return deleteOldWebhookHistory({ retentionDays: input.retentionDays });
}

const ops = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 3 },
});

/** Started by the closed-workflow reconciler schedule: restarts or reports records whose workflow closed while they were open. */
export async function reconcileClosedWorkflowsWorkflow(input: { lookbackHours: number }): Promise<number> {
  return ops.reconcileClosedWorkflows(input);
}
