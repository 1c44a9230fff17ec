// Maintenance activities: webhook delivery history clean-up.
import { heartbeat } from '@temporalio/activity';
import type { Deps } from '../../services/shared/deps';
import { deleteOldWebhookHistory } from '../../services/webhooks/maintenance';

export function createMaintenanceActivities(deps: Deps) {
  return {
    async deleteOldWebhookHistory(input: { retentionDays: number }) {
      return deleteOldWebhookHistory(deps, input.retentionDays, () => heartbeat());
    },
  };
}
