// The Stripe event workflow's contract: one workflow per Stripe event, its id derived from
// Stripe's event id, so a redelivered or concurrently delivered event cannot start a second.
export const STRIPE_EVENT_WORKFLOW = 'stripeEventWorkflow';

export const stripeEventWorkflowId = (eventId: string) => `stripe-event-${eventId}`;

export interface StripeEventInput {
  eventId: string;
}

export interface StripeEventOutcome {
  /** What the event did, as recorded on its row (e.g. `credited 5000`, `already fulfilled`). */
  outcome: string;
}

// Automatic reload: one workflow per reload (a credit purchase of kind auto_reload, made by
// the debit that crossed the threshold), so the debit's path and the reconciler start the
// same one. The reload's Stripe idempotency key is derived from the same id.
export const AUTO_RELOAD_WORKFLOW = 'autoReloadWorkflow';

export const autoReloadWorkflowId = (purchaseId: string) => `auto-reload-${purchaseId}`;

export interface AutoReloadInput {
  purchaseId: string;
}

export interface AutoReloadOutcome {
  /** What the charge did: `charge created`, `failed: ...`, `cancelled: ...`, `already paid`. */
  outcome: string;
}

// The payments reconciler (a Schedule): starts what a failed start left behind.
export const PAYMENTS_RECONCILE_WORKFLOW = 'paymentsReconcileWorkflow';

export const paymentsReconcilerScheduleId = (taskQueue: string) => `payments-reconciler-${taskQueue}`;

export interface PaymentsReconcileInput {
  /** Only events and reloads recorded longer ago than this (their own start may still be on its way). */
  graceSeconds: number;
}

export interface PaymentsReconcileResult {
  events: number;
  reloads: number;
}
