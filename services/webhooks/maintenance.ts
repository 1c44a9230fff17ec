// Webhook housekeeping, run by the webhookHistoryCleanupWorkflow on a daily Temporal
// Schedule that the worker creates (or updates) when it starts: delivery history older
// than 30 days is deleted. (Deliveries left waiting by a lost wake-up are the dispatch
// reconciler's job: services/webhooks/dispatch.ts.)
import type { Deps } from '../shared/deps';
import { ensureIntervalSchedule } from '../operations/schedules';
import {
  WEBHOOK_HISTORY_CLEANUP_WORKFLOW,
  webhookHistoryCleanupScheduleId,
  WebhookHistoryCleanupInput,
} from '../../workflows/operations/contracts';
import { sqlRows } from '../shared/sql';
import { deleteOldDeliveries } from './delivery-rows';
import { deleteOldSyntheticEvents } from './event-rows';

export const DELIVERY_RETENTION_DAYS = 30;
const BATCH = 1000;

/**
 * Deletes finished deliveries (their attempts go with them) created more than
 * `retentionDays` ago, and the synthetic test/verification events left without deliveries.
 * Business events stay in the event log. Works in batches; `progress` heartbeats.
 */
export async function deleteOldWebhookHistory(
  deps: Deps,
  retentionDays: number,
  progress: () => void = () => undefined,
) {
  let deletedDeliveries = 0;
  for (;;) {
    const rows = await deleteOldDeliveries(deps.db, retentionDays, BATCH);
    deletedDeliveries += rows.length;
    progress();
    if (rows.length < BATCH) break;
  }
  let deletedSyntheticEvents = 0;
  for (;;) {
    const rows = await deleteOldSyntheticEvents(deps.db, retentionDays, BATCH);
    deletedSyntheticEvents += rows.length;
    progress();
    if (rows.length < BATCH) break;
  }
  return { deletedDeliveries, deletedSyntheticEvents };
}

/** Creates or updates the daily clean-up schedule on this deployment's task queue. */
export async function ensureWebhookCleanupSchedule(deps: Deps): Promise<string> {
  const scheduleId = webhookHistoryCleanupScheduleId(deps.config.taskQueue);
  const input: WebhookHistoryCleanupInput = { retentionDays: DELIVERY_RETENTION_DAYS };
  return ensureIntervalSchedule(deps, {
    scheduleId,
    workflowType: WEBHOOK_HISTORY_CLEANUP_WORKFLOW,
    workflowId: `webhook-history-cleanup-${deps.config.taskQueue}`,
    args: [input],
    every: '1 day',
    catchupWindow: '1 hour',
  });
}
