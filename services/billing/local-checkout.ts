// The local stand-in for Stripe's hosted checkout page (outside production, with the Stripe
// API mocked by stripe-mock, which keeps no state and sends no events). Paying here does
// what Stripe does when a customer pays: it sends the signed events Stripe would send, signed
// with STRIPE_WEBHOOK_SECRET exactly as Stripe signs them, to this site's own
// POST /webhooks/stripe. It never touches the ledger itself: the webhook's fulfilment does.
import { randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import type { Deps } from '../shared/deps';
import { stripeClient, type PurchaseRow } from './payments';

/** card: paid at once; delayed_ok / delayed_fail: an asynchronous payment (a bank debit) that succeeds or fails. */
export type LocalPayment = 'card' | 'delayed_ok' | 'delayed_fail';

const localId = (prefix: string) => `${prefix}_local_${randomBytes(12).toString('hex')}`;

/** The Checkout Session object Stripe would put in its events for this purchase. */
export function localSessionObject(
  purchase: Pick<PurchaseRow, 'stripe_session_id' | 'member_id' | 'requested_cents'> & { customer_id: string | null },
  paymentIntent: string,
  paymentStatus: 'paid' | 'unpaid',
): Record<string, unknown> {
  return {
    id: purchase.stripe_session_id,
    object: 'checkout.session',
    mode: 'payment',
    status: 'complete',
    payment_status: paymentStatus,
    amount_total: purchase.requested_cents,
    amount_subtotal: purchase.requested_cents,
    currency: 'usd',
    client_reference_id: purchase.member_id,
    metadata: { member_id: purchase.member_id },
    customer: purchase.customer_id,
    payment_intent: paymentIntent,
    // stripe-mock keeps no invoices, so the stand-in issues none (no receipt link locally).
    invoice: null,
    livemode: false,
  };
}

/** A Stripe event around `object`, as Stripe's webhook body has it. */
export function stripeEventBody(type: string, object: Record<string, unknown>, id = localId('evt')): string {
  return JSON.stringify({
    id,
    object: 'event',
    api_version: '2025-01-01',
    created: Math.floor(Date.now() / 1000),
    type,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object },
  });
}

/** Posts one signed event to this site's webhook route; answers the HTTP status. */
export async function postSignedEvent(deps: Deps, body: string, opts: { secret?: string; timestamp?: number } = {}) {
  const header = stripeClient(deps).webhooks.generateTestHeaderString({
    payload: body,
    secret: opts.secret ?? deps.config.stripe.webhookSecret,
    timestamp: opts.timestamp,
  });
  const res = await fetch(`${deps.config.siteUrl}/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': header },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

/**
 * Pays the purchase on the stand-in: the events Stripe sends for that kind of payment.
 * Waits a few seconds for their fulfilment so the billing page the browser returns to
 * usually shows the credit already (it says so when it does not yet).
 */
export async function payLocally(
  deps: Deps,
  purchase: PurchaseRow & { customer_id: string | null },
  payment: LocalPayment,
): Promise<void> {
  if (!deps.config.stripe.localCheckout) throw new Error('the local checkout exists only outside production');
  const paymentIntent = purchase.payment_intent_id ?? localId('pi');
  const events: Array<[string, Stripe.Event.Type, Record<string, unknown>]> =
    payment === 'card'
      ? [[localId('evt'), 'checkout.session.completed', localSessionObject(purchase, paymentIntent, 'paid')]]
      : [
          [localId('evt'), 'checkout.session.completed', localSessionObject(purchase, paymentIntent, 'unpaid')],
          [
            localId('evt'),
            payment === 'delayed_ok'
              ? 'checkout.session.async_payment_succeeded'
              : 'checkout.session.async_payment_failed',
            localSessionObject(purchase, paymentIntent, payment === 'delayed_ok' ? 'paid' : 'unpaid'),
          ],
        ];
  for (const [id, type, object] of events) {
    const status = await postSignedEvent(deps, stripeEventBody(type, object, id));
    if (status !== 200) throw new Error(`the webhook answered ${status} to the local checkout's ${type}`);
  }
  const last = events[events.length - 1][0];
  for (let waited = 0; waited < 5000; waited += 100) {
    const [row] = await deps.db.query(`SELECT processed_at FROM stripe_events WHERE id = $1`, [last]);
    if (row?.processed_at) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
