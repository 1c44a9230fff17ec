// Helpers of the payment tests: a purchase started against stripe-mock (as the billing
// page starts it), a card saved through a setup session, Stripe's events about them signed
// as Stripe signs them and posted to the webhook route, and waiting for their workflows.
import { randomBytes } from 'node:crypto';
import type { TestApp } from '../helpers/app';
import { startCheckout } from '../../services/billing/payments';
import { startCardSetup } from '../../services/billing/auto-reload';
import {
  localPaymentIntentObject,
  localSessionObject,
  localSetupSessionObject,
  postSignedEvent,
  stripeEventBody,
} from '../../services/billing/local-checkout';
import type { PurchaseRow } from '../../services/billing/stripe';
import { waitFor } from './mail-helpers';

export const evtId = () => `evt_test_${randomBytes(10).toString('hex')}`;

export interface TestPurchase {
  id: string;
  member_id: string;
  stripe_session_id: string;
  customer_id: string | null;
  requested_cents: number;
  paymentIntent: string;
}

export async function newPurchase(app: TestApp, memberId: string, cents: number): Promise<TestPurchase> {
  const { purchaseId } = await startCheckout(app.deps, memberId, cents);
  const [row] = await app.deps.db.query(`SELECT * FROM credit_purchases WHERE id = $1`, [purchaseId]);
  return { ...row, paymentIntent: `pi_test_${randomBytes(10).toString('hex')}` };
}

/** A session event body for the purchase (amount overridable: the event, not the purchase, decides). */
export function sessionEvent(
  type: string,
  p: TestPurchase,
  opts: { paymentStatus?: 'paid' | 'unpaid'; amount?: number; id?: string } = {},
) {
  const object = localSessionObject(p, p.paymentIntent, opts.paymentStatus ?? 'paid');
  if (opts.amount !== undefined) object.amount_total = opts.amount;
  const id = opts.id ?? evtId();
  return { id, body: stripeEventBody(type, object, id) };
}

export function chargeRefundedEvent(p: TestPurchase, amountRefunded: number, chargeId: string) {
  const id = evtId();
  const charge = {
    id: chargeId,
    object: 'charge',
    amount: p.requested_cents,
    amount_refunded: amountRefunded,
    refunded: amountRefunded >= p.requested_cents,
    payment_intent: p.paymentIntent,
    receipt_url: `https://pay.stripe.com/receipts/test/${chargeId}`,
    currency: 'usd',
  };
  return { id, body: stripeEventBody('charge.refunded', charge, id) };
}

export function disputeEvent(
  type: 'charge.dispute.created' | 'charge.dispute.closed',
  p: TestPurchase,
  disputeId: string,
  amount: number,
  status: string,
) {
  const id = evtId();
  const dispute = {
    id: disputeId,
    object: 'dispute',
    amount,
    charge: `ch_${disputeId}`,
    payment_intent: p.paymentIntent,
    status,
    currency: 'usd',
  };
  return { id, body: stripeEventBody(type, dispute, id) };
}

export async function deliver(app: TestApp, e: { body: string }, opts: { secret?: string; timestamp?: number } = {}) {
  return postSignedEvent(app.deps, e.body, opts);
}

export async function processed(app: TestApp, eventId: string, timeoutMs = 30000): Promise<string> {
  return waitFor(
    async () => {
      const [row] = await app.deps.db.query(`SELECT processed_at, outcome FROM stripe_events WHERE id = $1`, [eventId]);
      return row?.processed_at ? (row.outcome as string) : null;
    },
    `Stripe event ${eventId} to be applied`,
    timeoutMs,
  );
}

export async function ledgerOf(app: TestApp, memberId: string) {
  return (
    (await app.deps.db.query(
      `SELECT amount_cents, kind, entry_key, description FROM credits_ledger WHERE member_id = $1 ORDER BY created_at, id`,
      [memberId],
    )) as { amount_cents: number; kind: string; entry_key: string; description: string }[]
  ).map((r) => ({ ...r, amount_cents: Number(r.amount_cents) }));
}

export async function purchaseRow(app: TestApp, id: string) {
  const [row] = await app.deps.db.query(`SELECT * FROM credit_purchases WHERE id = $1`, [id]);
  return row;
}

/** A setup session started as the billing page starts it, and the signed completion Stripe sends once the card is saved. */
export async function newCardSetup(app: TestApp, memberId: string) {
  const { redirectUrl } = await startCardSetup(app.deps, memberId);
  const [setup] = await app.deps.db.query(
    `SELECT * FROM stripe_card_setups WHERE member_id = $1 ORDER BY created_at DESC LIMIT 1`,
    [memberId],
  );
  const completed = (opts: { customer?: string } = {}) => {
    const id = evtId();
    const object = localSetupSessionObject(setup, `seti_test_${randomBytes(8).toString('hex')}`);
    if (opts.customer) object.customer = opts.customer;
    return { id, body: stripeEventBody('checkout.session.completed', object, id) };
  };
  return { setup, redirectUrl, completed };
}

/** Saves a card for the member (setup session, its signed completion applied); answers the outcome. */
export async function saveCard(app: TestApp, memberId: string): Promise<string> {
  const { completed } = await newCardSetup(app, memberId);
  const e = completed();
  const status = await deliver(app, e);
  if (status !== 200) throw new Error(`the webhook answered ${status}`);
  return processed(app, e.id);
}

export type ReloadRow = PurchaseRow & { payment_intent_id: string };

/** The member's automatic reloads, oldest first. */
export async function reloadsOf(app: TestApp, memberId: string): Promise<PurchaseRow[]> {
  return app.deps.db.query(
    `SELECT * FROM credit_purchases WHERE member_id = $1 AND kind = 'auto_reload' ORDER BY created_at`,
    [memberId],
  );
}

/** Waits until the member has `count` reloads and the newest has its PaymentIntent created; answers it. */
export async function chargedReload(app: TestApp, memberId: string, count = 1): Promise<ReloadRow> {
  return waitFor(
    async () => {
      const rows = await reloadsOf(app, memberId);
      const last = rows[rows.length - 1];
      return rows.length === count && last.payment_intent_id ? (last as ReloadRow) : null;
    },
    `reload ${count} to be charged`,
    60_000,
  );
}

/** Stripe's event about a reload's off-session charge. */
export function reloadEvent(
  reload: ReloadRow,
  outcome: 'succeeded' | 'failed',
  opts: { latestCharge?: string; paymentIntent?: string } = {},
) {
  const id = evtId();
  const object = localPaymentIntentObject(
    { ...reload, payment_intent_id: opts.paymentIntent ?? reload.payment_intent_id },
    outcome,
  );
  if (opts.latestCharge) object.latest_charge = opts.latestCharge;
  const type = outcome === 'succeeded' ? 'payment_intent.succeeded' : 'payment_intent.payment_failed';
  return { id, body: stripeEventBody(type, object, id) };
}
