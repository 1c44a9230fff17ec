// Maintenance workflows: the periodic clean-up of webhook delivery history.

export const WEBHOOK_HISTORY_CLEANUP_WORKFLOW = 'webhookHistoryCleanupWorkflow';

/** One schedule per task queue, so deployments (and test runs) sharing a namespace stay apart. */
export function webhookHistoryCleanupScheduleId(taskQueue: string): string {
  return `webhook-history-cleanup-${taskQueue}`;
}

export interface WebhookHistoryCleanupInput {
  /** Deliveries (with their attempts) older than this are deleted; the spec says 30. */
  retentionDays: number;
}

export interface WebhookHistoryCleanupResult {
  deletedDeliveries: number;
  deletedSyntheticEvents: number;
}
