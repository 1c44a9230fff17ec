// Payment activities (worker only): adapters over services/billing/payments.ts (Stripe
// events), auto-reload.ts (a reload's charge) and reconciler.ts.
import { Context } from '@temporalio/activity';
import type { Deps } from '../../services/shared/deps';
import {
  applyStripeEvent,
  markStripeEventIgnored,
  PurchaseNotKnownYet,
  recordReceipt,
} from '../../services/billing/payments';
import { chargeAutoReload, giveUpAutoReload } from '../../services/billing/auto-reload';
import { reconcilePayments } from '../../services/billing/reconciler';
import type {
  AutoReloadInput,
  AutoReloadOutcome,
  PaymentsReconcileInput,
  PaymentsReconcileResult,
  StripeEventInput,
  StripeEventOutcome,
} from '../../workflows/billing/contracts';

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
    async chargeAutoReloadActivity(input: AutoReloadInput): Promise<AutoReloadOutcome> {
      return chargeAutoReload(deps, input.purchaseId);
    },
    async giveUpAutoReloadActivity(input: AutoReloadInput & { cause: string }): Promise<AutoReloadOutcome> {
      return giveUpAutoReload(deps, input.purchaseId, input.cause);
    },
    async reconcilePaymentsActivity(input: PaymentsReconcileInput): Promise<PaymentsReconcileResult> {
      return reconcilePayments(deps, input.graceSeconds);
    },
  };
}
