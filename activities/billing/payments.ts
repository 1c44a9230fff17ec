// Stripe event activities (worker only): adapters over services/billing/payments.ts.
import { Context } from '@temporalio/activity';
import type { Deps } from '../../services/shared/deps';
import {
  applyStripeEvent,
  markStripeEventIgnored,
  PurchaseNotKnownYet,
  recordReceipt,
} from '../../services/billing/payments';
import type { StripeEventInput, StripeEventOutcome } from '../../workflows/billing/contracts';

/**
 * Attempts a reversal waits for its purchase (1 s doubling to 1 min between them: about
 * ten minutes; Stripe sends a payment's events within seconds). After that the charge is
 * taken to be another deployment's and the event is recorded as ignored.
 */
const PURCHASE_WAIT_ATTEMPTS = 13;

export function createPaymentActivities(deps: Deps) {
  return {
    async applyStripeEventActivity(input: StripeEventInput): Promise<StripeEventOutcome> {
      try {
        return await applyStripeEvent(deps, input.eventId);
      } catch (err) {
        if (!(err instanceof PurchaseNotKnownYet) || Context.current().info.attempt < PURCHASE_WAIT_ATTEMPTS) throw err;
        await markStripeEventIgnored(deps, input.eventId, err.message);
        return { outcome: `ignored: ${err.message}` };
      }
    },
    async recordStripeReceiptActivity(input: StripeEventInput): Promise<void> {
      await recordReceipt(deps, input.eventId);
    },
  };
}
