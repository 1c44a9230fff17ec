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
