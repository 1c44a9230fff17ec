// Maintenance activities: webhook delivery history clean-up and the restart of
// deliveries whose workflow never started.
import { heartbeat } from '@temporalio/activity';
import type { Deps } from '../services/deps';
import { deleteOldWebhookHistory, restartStalledWebhookDeliveries } from '../services/webhook-maintenance';

export function createMaintenanceActivities(deps: Deps) {
  return {
    async deleteOldWebhookHistory(input: { retentionDays: number }) {
      return deleteOldWebhookHistory(deps, input.retentionDays, () => heartbeat());
    },
    async restartStalledWebhookDeliveries(input: { stalledAfterSeconds: number }): Promise<number> {
      return restartStalledWebhookDeliveries(deps, input.stalledAfterSeconds);
    },
  };
}
