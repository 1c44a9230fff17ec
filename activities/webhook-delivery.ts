// The webhook delivery attempt: sign with a fresh timestamp, send, record (worker only).
import type { Deps } from '../services/deps';
import { attemptDelivery, failDelivery } from '../services/webhook-deliveries';
import type { AttemptInput, AttemptOutcome } from '../workflows/contracts/webhook-delivery';

export function createWebhookDeliveryActivities(deps: Deps) {
  return {
    async attemptWebhookDelivery(input: AttemptInput): Promise<AttemptOutcome> {
      return attemptDelivery(deps, input);
    },
    async failWebhookDelivery(input: { deliveryId: string; series: number; error: string }): Promise<void> {
      await failDelivery(deps, input);
    },
  };
}
