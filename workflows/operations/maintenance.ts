// Maintenance run by a Temporal Schedule (created idempotently when the worker starts):
// deletes webhook delivery history older than 30 days.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { WebhookHistoryCleanupInput, WebhookHistoryCleanupResult } from './contracts';
import { CLOSED_WORKFLOWS_PASS, HOUSEKEEPING } from '../shared/activity-options';

const { deleteOldWebhookHistory } = proxyActivities<Activities>(HOUSEKEEPING);

export async function webhookHistoryCleanupWorkflow(
  input: WebhookHistoryCleanupInput,
): Promise<WebhookHistoryCleanupResult> {
  return deleteOldWebhookHistory({ retentionDays: input.retentionDays });
}

const ops = proxyActivities<Activities>(CLOSED_WORKFLOWS_PASS);

/** Started by the closed-workflow reconciler schedule: restarts or reports records whose workflow closed while they were open. */
export async function reconcileClosedWorkflowsWorkflow(input: { lookbackHours: number }): Promise<number> {
  return ops.reconcileClosedWorkflows(input);
}
