// Applies one recorded Stripe event. The ledger work is one idempotent activity (a key per
// session, refund level and dispute step), so a worker killed mid-way retries it without
// moving money twice; it retries until it succeeds (a database outage delays the credit,
// never drops it). The receipt link is read afterwards, best effort.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { StripeEventInput, StripeEventOutcome } from './contracts';
import { STRIPE_EVENT } from '../shared/activity-options';

const { applyStripeEventActivity, recordStripeReceiptActivity } = proxyActivities<Activities>(STRIPE_EVENT);

export async function stripeEventWorkflow(input: StripeEventInput): Promise<StripeEventOutcome> {
  const result = await applyStripeEventActivity(input);
  await recordStripeReceiptActivity(input);
  return result;
}
