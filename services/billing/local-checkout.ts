// LOCAL STAND-IN ONLY (outside production, with the Stripe API mocked by stripe-mock, which
// keeps no state and sends no events): what Stripe's hosted pages and Stripe itself would
// do, as signed events posted to this site's own POST /webhooks/stripe, signed with
// STRIPE_WEBHOOK_SECRET exactly as Stripe signs them. The local checkout page pays a
// purchase, and refunds or disputes a paid one as the Stripe Dashboard or a card holder
// would; the local card setup page saves a card; an automatic reload's charge is answered
// with the event Stripe sends for it. None of it touches the ledger: the webhook's
// fulfilment does. Every entry point refuses to run unless config.stripe.localCheckout,
// which is never true in production.
import { randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import type { Deps } from '../shared/deps';
import { stripeClient, type PurchaseRow } from './stripe';
import { sqlRows } from '../shared/sql';

/** card: paid at once; delayed_ok / delayed_fail: an asynchronous payment (a bank debit) that succeeds or fails. */
export type LocalPayment = 'card' | 'delayed_ok' | 'delayed_fail';

const localId = (prefix: string) => `${prefix}_local_${randomBytes(12).toString('hex')}`;

/** The Checkout Session object Stripe would put in its events for this purchase. */
export function localSessionObject(
  purchase: Pick<PurchaseRow, 'stripe_session_id' | 'member_id' | 'requested_cents' | 'customer_id'>,
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
export async function payLocally(deps: Deps, purchase: PurchaseRow, payment: LocalPayment): Promise<void> {
  assertLocal(deps);
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
  await postAndWait(deps, events);
}

function assertLocal(deps: Deps): void {
  if (!deps.config.stripe.localCheckout) throw new Error('the local Stripe stand-in exists only outside production');
}

/**
 * Posts the events in order, then waits a few seconds for the last one's fulfilment so the
 * billing page the browser returns to usually shows it applied already.
 */
async function postAndWait(deps: Deps, events: Array<[string, Stripe.Event.Type, Record<string, unknown>]>) {
  for (const [id, type, object] of events) {
    const status = await postSignedEvent(deps, stripeEventBody(type, object, id));
    if (status !== 200) throw new Error(`the webhook answered ${status} to the local stand-in's ${type}`);
  }
  const last = events[events.length - 1][0];
  for (let waited = 0; waited < 5000; waited += 100) {
    const [row] = await sqlRows<{ processed_at: Date | null }>(
      deps.db,
      `SELECT processed_at FROM stripe_events WHERE id = $1`,
      [last],
    );
    if (row?.processed_at) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What the local checkout page can do to a paid purchase, as the Stripe Dashboard (refunds) or the card holder's bank (disputes) would. */
export type LocalReversal = 'refund' | 'refund_half' | 'dispute' | 'dispute_won' | 'dispute_lost';

/** The reversals that make sense for the purchase as it stands (a closed dispute is not closed again). */
export async function localReversalsOf(deps: Deps, purchase: PurchaseRow): Promise<LocalReversal[]> {
  if (!purchase.payment_intent_id || purchase.paid_cents === null) return [];
  const out: LocalReversal[] = [];
  const left = purchase.paid_cents - purchase.refunded_cents;
  if (left > 0 && purchase.disputed_cents === 0) out.push('refund', ...(left > 1 ? (['refund_half'] as const) : []));
  const [dispute] = await sqlRows<{ closed: boolean | null }>(
    deps.db,
    `SELECT bool_or(type = 'charge.dispute.closed') AS closed FROM stripe_events
      WHERE type LIKE 'charge.dispute.%' AND payload->'data'->'object'->>'id' = $1`,
    [localDisputeId(purchase)],
  );
  if (purchase.status === 'disputed' && !dispute?.closed) out.push('dispute_won', 'dispute_lost');
  else if (purchase.status === 'paid' && left > 0 && dispute?.closed === null) out.push('dispute');
  return out;
}

const compact = (id: string) => id.replace(/-/g, '');
const localChargeId = (p: Pick<PurchaseRow, 'id'>) => `ch_local_${compact(p.id)}`;
const localDisputeId = (p: Pick<PurchaseRow, 'id'>) => `du_local_${compact(p.id)}`;

/**
 * Sends what Stripe sends when the purchase's charge is refunded (charge.refunded with the
 * charge's new amount_refunded) or disputed (charge.dispute.created, then .closed won or lost).
 */
export async function reverseLocally(deps: Deps, purchase: PurchaseRow, reversal: LocalReversal): Promise<void> {
  assertLocal(deps);
  const paid = purchase.paid_cents ?? 0;
  const charge = {
    id: localChargeId(purchase),
    object: 'charge',
    amount: paid,
    currency: 'usd',
    payment_intent: purchase.payment_intent_id,
    // stripe-mock issues no receipts: the stand-in gives no receipt link either.
    receipt_url: null,
    livemode: false,
  };
  if (reversal === 'refund' || reversal === 'refund_half') {
    const left = paid - purchase.refunded_cents;
    const amountRefunded = purchase.refunded_cents + (reversal === 'refund' ? left : Math.floor(left / 2));
    await postAndWait(deps, [
      [
        localId('evt'),
        'charge.refunded',
        { ...charge, amount_refunded: amountRefunded, refunded: amountRefunded >= paid },
      ],
    ]);
    return;
  }
  const dispute = {
    id: localDisputeId(purchase),
    object: 'dispute',
    charge: charge.id,
    payment_intent: purchase.payment_intent_id,
    currency: 'usd',
    livemode: false,
  };
  if (reversal === 'dispute') {
    const amount = paid - purchase.refunded_cents;
    await postAndWait(deps, [
      [localId('evt'), 'charge.dispute.created', { ...dispute, amount, status: 'needs_response' }],
    ]);
    return;
  }
  await postAndWait(deps, [
    [
      localId('evt'),
      'charge.dispute.closed',
      { ...dispute, amount: purchase.disputed_cents, status: reversal === 'dispute_won' ? 'won' : 'lost' },
    ],
  ]);
}

/** The Checkout Session (setup mode) Stripe would put in checkout.session.completed once the card is saved. */
export function localSetupSessionObject(
  setup: { stripe_session_id: string; member_id: string; customer_id: string; created_at: Date },
  setupIntentId: string,
): Record<string, unknown> {
  return {
    id: setup.stripe_session_id,
    object: 'checkout.session',
    mode: 'setup',
    status: 'complete',
    payment_status: 'no_payment_required',
    amount_total: null,
    currency: 'usd',
    client_reference_id: setup.member_id,
    metadata: { member_id: setup.member_id, purpose: 'auto_reload_card' },
    customer: setup.customer_id,
    setup_intent: setupIntentId,
    payment_intent: null,
    created: Math.floor(setup.created_at.getTime() / 1000),
    livemode: false,
  };
}

/**
 * The card holder saves the card on the stand-in: Stripe sends checkout.session.completed
 * for the setup session; the fulfilment reads the saved payment method from its
 * SetupIntent (stripe-mock answers a fixture card, Visa ending 4242).
 */
export async function saveCardLocally(
  deps: Deps,
  setup: { stripe_session_id: string; member_id: string; customer_id: string; created_at: Date },
): Promise<void> {
  assertLocal(deps);
  await postAndWait(deps, [
    [localId('evt'), 'checkout.session.completed', localSetupSessionObject(setup, localId('seti'))],
  ]);
}

/** The PaymentIntent Stripe would put in the event about an automatic reload's off-session charge. */
export function localPaymentIntentObject(
  reload: Pick<PurchaseRow, 'id' | 'member_id' | 'requested_cents' | 'customer_id' | 'payment_method_id'> & {
    payment_intent_id: string;
  },
  outcome: 'succeeded' | 'failed',
): Record<string, unknown> {
  return {
    id: reload.payment_intent_id,
    object: 'payment_intent',
    amount: reload.requested_cents,
    amount_received: outcome === 'succeeded' ? reload.requested_cents : 0,
    currency: 'usd',
    customer: reload.customer_id,
    payment_method: reload.payment_method_id,
    status: outcome === 'succeeded' ? 'succeeded' : 'requires_payment_method',
    metadata: { member_id: reload.member_id, credit_purchase_id: reload.id, purpose: 'auto_reload' },
    // stripe-mock issues no receipts: no charge to read a receipt link from.
    latest_charge: null,
    last_payment_error:
      outcome === 'succeeded'
        ? null
        : {
            type: 'card_error',
            code: 'card_declined',
            decline_code: 'generic_decline',
            message: 'Your card was declined.',
          },
    livemode: false,
  };
}

/**
 * Answers an automatic reload's charge as Stripe would, with the outcome
 * STRIPE_LOCAL_RELOAD_OUTCOME names (succeeded by default; none sends nothing).
 */
export async function sendLocalReloadEvent(
  deps: Deps,
  reload: Pick<PurchaseRow, 'id' | 'member_id' | 'requested_cents' | 'customer_id' | 'payment_method_id'> & {
    payment_intent_id: string;
  },
): Promise<void> {
  assertLocal(deps);
  const outcome = deps.config.stripe.localReloadOutcome;
  if (outcome === 'none') return;
  const type = outcome === 'succeeded' ? 'payment_intent.succeeded' : 'payment_intent.payment_failed';
  const status = await postSignedEvent(deps, stripeEventBody(type, localPaymentIntentObject(reload, outcome)));
  if (status !== 200) throw new Error(`the webhook answered ${status} to the local stand-in's ${type}`);
}
