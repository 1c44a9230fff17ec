// Webhook sending (worker only): a dispatcher pass over a receiver's due deliveries, and
// the single attempt of a synthetic delivery; each attempt signs with a fresh timestamp,
// sends and records.
import type { Deps } from '../../services/shared/deps';
import { heartbeat } from '@temporalio/activity';
import { attemptDelivery, failDelivery } from '../../services/webhooks/deliveries';
import { dispatchDueDeliveries, wakeOverdueDispatchers } from '../../services/webhooks/dispatch';
import type {
  AttemptInput,
  AttemptOutcome,
  DispatchPassResult,
  ReconcileWebhookDispatchInput,
} from '../../workflows/webhooks/contracts';

export function createWebhookDeliveryActivities(deps: Deps) {
  return {
    async attemptWebhookDelivery(input: AttemptInput): Promise<AttemptOutcome> {
      return attemptDelivery(deps, input);
    },
    /** One pass of a receiver's dispatcher: every due delivery, one attempt each. */
    async dispatchWebhookDeliveries(input: { dispatchKey: string }): Promise<DispatchPassResult> {
      return dispatchDueDeliveries(deps, input.dispatchKey, () => heartbeat());
    },
    async wakeOverdueWebhookDispatchers(input: ReconcileWebhookDispatchInput): Promise<number> {
      return wakeOverdueDispatchers(deps, input.overdueSeconds);
    },
    async failWebhookDelivery(input: { deliveryId: string; series: number; error: string }): Promise<void> {
      await failDelivery(deps, input);
    },
  };
}
