// Buying credits with Stripe. The billing page starts a Checkout Session for the signed-in
// member (their Stripe Customer made once and reused) and records it as a pending purchase;
// the money only moves when Stripe's signed webhook says so. The webhook records each event
// under Stripe's event id and starts one workflow per event (its id from the event id);
// that workflow's activity applies the event here, in one transaction, with a ledger key per
// session, automatic reload's PaymentIntent, refund level and dispute step, so redeliveries,
// concurrent deliveries and events out of order move money once. The same events save the
// card of automatic reload (a setup session) and settle its charges (auto-reload.ts).
// Agents never reach any of this: no API key route reads or starts purchases (they read the
// balance only).
import Stripe from 'stripe';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import { lockMemberRow, providerAdjustment, topUp } from './credits';
import { refundDelta, stripeEntryKeys } from '../../domain/billing/purchases';
import { chargeFailureCause } from '../../domain/billing/auto-reload';
import { CardSetupRow, failReloadIn } from './auto-reload';
import { formatCents } from '../../domain/shared/money';
import {
  STRIPE_EVENT_WORKFLOW,
  stripeEventWorkflowId,
  type StripeEventInput,
  type StripeEventOutcome,
} from '../../workflows/billing/contracts';
import { ObjectId } from '../../workflows/shared/search-attributes';
import { customerFor, stripeClient, StripeUnavailable, type PurchaseRow } from './stripe';
import { noteCreditsMovement } from '../notifications/notices';
import { sqlRows, sqlRun } from '../shared/sql';
import { insertSavedCardSetup, markCardSetupSaved } from './card-setup-rows';
import { saveReloadCard } from './auto-reload-settings-rows';
import {
  addPurchaseDispute,
  addPurchaseRefund,
  insertCheckoutPurchase,
  insertSessionPurchase,
  markReloadPaid,
  markSessionFailed,
  markSessionPaid,
  notePaymentIntent,
  restorePurchaseDispute,
  setPurchaseReceipt,
} from './purchase-rows';

export { stripeClient, StripeUnavailable, type PurchaseRow } from './stripe';

/** The event types the fulfilment acts on; any other type is recorded and answered 200. */
export const HANDLED_STRIPE_EVENTS = [
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'checkout.session.async_payment_failed',
  'charge.refunded',
  'charge.dispute.created',
  'charge.dispute.closed',
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
] as const;
const HANDLED = new Set<string>(HANDLED_STRIPE_EVENTS);

/**
 * Fault hooks for tests (faults a real service cannot produce on demand):
 * `beforeEventWorkflowStart` throwing stands for Temporal refusing the start of a recorded
 * event's workflow (the webhook answers 500; the payments reconciler applies it later).
 */
export const paymentFaults: { beforeEventWorkflowStart?: (eventId: string) => void } = {};

/**
 * Hooks another change can attach to (emails, owner notifications): called after the
 * transaction that moved the money committed, once per movement (not per delivery).
 */
export interface PaymentHooks {
  creditsBought?: (p: { memberId: string; purchaseId: string; amountCents: number }) => Promise<void> | void;
  creditsRefunded?: (p: { memberId: string; purchaseId: string; amountCents: number }) => Promise<void> | void;
  creditsDisputed?: (p: {
    memberId: string;
    purchaseId: string;
    amountCents: number;
    outcome: 'opened' | 'won';
  }) => Promise<void> | void;
}
export const paymentHooks: PaymentHooks = {};

/**
 * Starts a Checkout Session for `amountCents` (already within the bounds) and records the
 * pending purchase. Answers where to send the browser: Stripe's hosted page, or outside
 * production with the Stripe API mocked, the local checkout page.
 */
export async function startCheckout(
  deps: Deps,
  memberId: string,
  amountCents: number,
): Promise<{ purchaseId: string; redirectUrl: string }> {
  const billing = `${deps.config.siteUrl}/console/billing`;
  let session: Stripe.Checkout.Session;
  let customer: string;
  try {
    customer = await customerFor(deps, memberId);
    session = await stripeClient(deps).checkout.sessions.create({
      mode: 'payment',
      customer,
      client_reference_id: memberId,
      metadata: { member_id: memberId },
      line_items: [
        {
          quantity: 1,
          price_data: {
            currency: 'usd',
            unit_amount: amountCents,
            product_data: {
              name: 'Postal Mail credits',
              description: `${formatCents(amountCents)} of prepaid credits`,
            },
          },
        },
      ],
      payment_intent_data: { metadata: { member_id: memberId } },
      invoice_creation: { enabled: true },
      success_url: `${billing}?checkout=success#purchases`,
      cancel_url: `${billing}?checkout=cancelled#purchases`,
    });
  } catch (err) {
    if (err instanceof Stripe.errors.StripeError) {
      deps.log.warn({ err: { type: err.type, message: err.message } }, 'stripe checkout session not created');
      throw new StripeUnavailable(err.message);
    }
    throw err;
  }
  const row = await insertCheckoutPurchase(deps.db, memberId, session.id, customer, amountCents);
  const redirectUrl = deps.config.stripe.localCheckout
    ? `${deps.config.siteUrl}/console/billing/checkout/${row.id}`
    : session.url;
  if (!redirectUrl) throw new StripeUnavailable('Stripe answered a Checkout Session without a URL');
  return { purchaseId: row.id, redirectUrl };
}

export async function listPurchases(deps: Deps, memberId: string, limit = 50): Promise<PurchaseRow[]> {
  return sqlRows<PurchaseRow>(
    deps.db,
    `SELECT id, member_id, kind, stripe_session_id, customer_id, requested_cents, paid_cents, status, payment_intent_id,
            receipt_url, refunded_cents, disputed_cents, failure_reason, payment_method_id, threshold_cents, created_at
       FROM credit_purchases WHERE member_id = $1 ORDER BY created_at DESC LIMIT $2`,
    [memberId, limit],
  );
}

export async function getPurchase(deps: Deps, memberId: string, id: string): Promise<PurchaseRow | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const [row] = await sqlRows<PurchaseRow>(deps.db, `SELECT * FROM credit_purchases WHERE id = $1 AND member_id = $2`, [
    id,
    memberId,
  ]);
  return row;
}

/** stripe_events: every signed event Stripe delivered, and what applying it did. */
interface StripeEventRow {
  id: string;
  type: string;
  payload: Stripe.Event;
  processed_at: Date | null;
  outcome: string | null;
}

export type WebhookAnswer =
  | { status: 200; body: { received: true; duplicate?: true; ignored?: true } }
  | {
      status: 400;
      body: { error: string };
    };

/**
 * The webhook: verifies the signature (Stripe's tolerance, 300 s), records the event once
 * and starts its workflow. Answers 200 only once the event is recorded and its workflow
 * exists, so a failure here makes Stripe deliver again instead of losing the event.
 */
export async function receiveStripeWebhook(
  deps: Deps,
  rawBody: Buffer,
  signature: string | undefined,
): Promise<WebhookAnswer> {
  let event: Stripe.Event;
  try {
    if (!signature) throw new Error('no Stripe-Signature header');
    event = stripeClient(deps).webhooks.constructEvent(rawBody, signature, deps.config.stripe.webhookSecret);
  } catch (err) {
    return { status: 400, body: { error: `signature verification failed: ${(err as Error).message}` } };
  }
  const inserted = await sqlRows<Pick<StripeEventRow, 'id'>>(
    deps.db,
    `INSERT INTO stripe_events (id, type, payload, processed_at, outcome) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (id) DO NOTHING RETURNING id`,
    [
      event.id,
      event.type,
      JSON.stringify(event),
      HANDLED.has(event.type) ? null : new Date(),
      HANDLED.has(event.type) ? null : 'ignored: event type not used',
    ],
  );
  if (!HANDLED.has(event.type)) return { status: 200, body: { received: true, ignored: true } };
  // Started again on a redelivery too: the first delivery may have been recorded by a
  // process that stopped before it started the workflow. The id makes it one workflow.
  // A start that fails answers 500 (Stripe delivers again); the payments reconciler starts
  // it as well, so a recorded event is applied even if Stripe gives up.
  paymentFaults.beforeEventWorkflowStart?.(event.id);
  await startStripeEventWorkflow(deps, event.id);
  return { status: 200, body: inserted.length ? { received: true } : { received: true, duplicate: true } };
}

/** Starts the event's workflow (one per event). `restartFailed`: the reconciler runs one whose earlier run failed or was terminated. */
export async function startStripeEventWorkflow(
  deps: Deps,
  eventId: string,
  opts: { restartFailed?: boolean } = {},
): Promise<void> {
  const input: StripeEventInput = { eventId };
  try {
    await deps.temporal.workflow.start(STRIPE_EVENT_WORKFLOW, {
      taskQueue: deps.config.taskQueue,
      workflowId: stripeEventWorkflowId(eventId),
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: opts.restartFailed ? 'ALLOW_DUPLICATE_FAILED_ONLY' : 'REJECT_DUPLICATE',
      typedSearchAttributes: [{ key: ObjectId, value: eventId }],
    });
  } catch (err) {
    // A closed workflow with this id applied the event already.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/** The event's purchase is not known yet (its session's event has not been applied): try again later. */
export class PurchaseNotKnownYet extends Error {
  override name = 'PurchaseNotKnownYet';
}

type Notify = () => Promise<void> | void;

/**
 * Applies one recorded event, in one transaction with marking it processed. Throws
 * PurchaseNotKnownYet for a reversal whose purchase is not recorded yet (the workflow
 * retries, then records it as ignored).
 */
export async function applyStripeEvent(deps: Deps, eventId: string): Promise<StripeEventOutcome> {
  const after: Notify[] = [];
  // What the event needs from Stripe's API is read before the transaction, never inside it.
  const card = await savedCardOf(deps, eventId);
  const outcome = await deps.db.transaction(async (tx) => {
    const [row] = await sqlRows<Pick<StripeEventRow, 'type' | 'payload' | 'outcome' | 'processed_at'>>(
      tx,
      `SELECT type, payload, outcome, processed_at FROM stripe_events WHERE id = $1 FOR UPDATE`,
      [eventId],
    );
    if (!row) return { outcome: 'ignored: event not recorded' };
    if (row.processed_at) return { outcome: row.outcome as string };
    const event = row.payload as Stripe.Event;
    const result = await applyEvent(tx, event, after, card);
    await sqlRun(tx, `UPDATE stripe_events SET processed_at = now(), outcome = $2 WHERE id = $1`, [eventId, result]);
    return { outcome: result };
  });
  for (const hook of after) {
    try {
      await hook();
    } catch (err) {
      deps.log.warn({ err, eventId }, 'payment hook failed');
    }
  }
  return outcome;
}

/** The workflow gave up waiting for the event's purchase: recorded as ignored. */
export async function markStripeEventIgnored(deps: Deps, eventId: string, reason: string): Promise<void> {
  await sqlRun(
    deps.db,
    `UPDATE stripe_events SET processed_at = now(), outcome = $2 WHERE id = $1 AND processed_at IS NULL`,
    [eventId, `ignored: ${reason}`],
  );
}

async function applyEvent(
  tx: EntityManager,
  event: Stripe.Event,
  after: Notify[],
  card: SavedCard | null,
): Promise<string> {
  switch (event.type) {
    case 'checkout.session.completed':
      if (event.data.object.mode === 'setup') return saveCard(tx, event.data.object, card);
      return event.data.object.payment_status === 'paid'
        ? fulfilSession(tx, event.data.object, after)
        : noteSession(tx, event.data.object);
    case 'checkout.session.async_payment_succeeded':
      return fulfilSession(tx, event.data.object, after);
    case 'checkout.session.async_payment_failed':
      return failSession(tx, event.data.object);
    case 'charge.refunded':
      return refundCharge(tx, event.data.object, after);
    case 'charge.dispute.created':
      return disputeOpened(tx, event.data.object, after);
    case 'charge.dispute.closed':
      return disputeClosed(tx, event.data.object, after);
    case 'payment_intent.succeeded':
      return reloadSucceeded(tx, event.data.object, after);
    case 'payment_intent.payment_failed':
      return reloadFailed(tx, event.data.object);
    default:
      return 'ignored: event type not used';
  }
}

const idOf = (v: string | { id: string } | null | undefined): string | null =>
  v == null ? null : typeof v === 'string' ? v : v.id;

/**
 * The session's purchase, locked. A session this deployment did not record (its row was
 * lost between Stripe's answer and the insert) is taken when it names a member of ours
 * whose Stripe Customer it carries; any other is someone else's and is left alone.
 */
async function sessionPurchase(tx: EntityManager, s: Stripe.Checkout.Session): Promise<PurchaseRow | null> {
  const [found] = await sqlRows<PurchaseRow>(
    tx,
    `SELECT * FROM credit_purchases WHERE stripe_session_id = $1 FOR UPDATE`,
    [s.id],
  );
  if (found) return found;
  if (!(s.amount_total && s.amount_total > 0)) return null;
  const memberId = await memberOfSession(tx, s);
  if (!memberId) return null;
  const customer = idOf(s.customer);
  await insertSessionPurchase(tx, memberId, s.id, customer, s.amount_total);
  const [row] = await sqlRows<PurchaseRow>(
    tx,
    `SELECT * FROM credit_purchases WHERE stripe_session_id = $1 FOR UPDATE`,
    [s.id],
  );
  return row;
}

/** The member a session names (client_reference_id or metadata) when it carries that member's own Stripe Customer; null for anyone else's. */
async function memberOfSession(tx: EntityManager, s: Stripe.Checkout.Session): Promise<string | null> {
  const memberId = s.client_reference_id ?? s.metadata?.member_id ?? null;
  const customer = idOf(s.customer);
  if (!memberId || !customer || !/^[0-9a-f-]{36}$/i.test(memberId)) return null;
  const [known] = await sqlRows<{ '?column?': number }>(
    tx,
    `SELECT 1 FROM stripe_customers WHERE member_id = $1 AND customer_id = $2`,
    [memberId, customer],
  );
  return known ? memberId : null;
}

/** A paid session: its one top-up, for the amount Stripe's session says was paid. */
async function fulfilSession(tx: EntityManager, s: Stripe.Checkout.Session, after: Notify[]): Promise<string> {
  if (s.mode !== 'payment') return 'ignored: not a payment session';
  const purchase = await sessionPurchase(tx, s);
  if (!purchase) return 'ignored: session of an unknown member or customer';
  if (s.currency !== 'usd' || !s.amount_total || s.amount_total <= 0)
    return `ignored: session amount ${s.amount_total} ${s.currency} is not a USD payment`;
  const lock = await lockMemberRow(tx, purchase.member_id);
  const added = await topUp(lock.tx, {
    memberId: purchase.member_id,
    amountCents: s.amount_total,
    entryKey: stripeEntryKeys.session(s.id),
    referenceType: 'credit_purchase',
    referenceId: purchase.id,
    description: `Credits bought with Stripe Checkout (${formatCents(s.amount_total)})`,
  });
  await markSessionPaid(tx, [purchase.id, s.amount_total, idOf(s.payment_intent), idOf(s.invoice)]);
  if (!added) return 'already fulfilled';
  await noteCreditsMovement(tx, purchase, 'bought', s.amount_total, stripeEntryKeys.session(s.id));
  const amountCents = s.amount_total;
  after.push(() =>
    paymentHooks.creditsBought?.({ memberId: purchase.member_id, purchaseId: purchase.id, amountCents }),
  );
  return `credited ${amountCents}`;
}

/** A completed session still waiting for its (asynchronous) payment: remember its payment intent. */
async function noteSession(tx: EntityManager, s: Stripe.Checkout.Session): Promise<string> {
  const purchase = await sessionPurchase(tx, s);
  if (!purchase) return 'ignored: session of an unknown member or customer';
  await notePaymentIntent(tx, purchase.id, idOf(s.payment_intent));
  return `awaiting payment (${s.payment_status})`;
}

async function failSession(tx: EntityManager, s: Stripe.Checkout.Session): Promise<string> {
  const purchase = await sessionPurchase(tx, s);
  if (!purchase) return 'ignored: session of an unknown member or customer';
  if (purchase.status !== 'pending') return `payment failed: purchase left ${purchase.status}`;
  await markSessionFailed(tx, purchase.id);
  return 'marked failed';
}

async function purchaseOfPaymentIntent(tx: EntityManager, paymentIntent: string | null): Promise<PurchaseRow> {
  const [row] = paymentIntent
    ? await sqlRows<PurchaseRow>(tx, `SELECT * FROM credit_purchases WHERE payment_intent_id = $1 FOR UPDATE`, [
        paymentIntent,
      ])
    : [];
  if (!row || row.paid_cents === null)
    throw new PurchaseNotKnownYet(`no paid purchase for payment intent ${paymentIntent}`);
  return row;
}

/** charge.refunded: takes back what was refunded beyond what the ledger took already. */
async function refundCharge(tx: EntityManager, charge: Stripe.Charge, after: Notify[]): Promise<string> {
  const purchase = await purchaseOfPaymentIntent(tx, idOf(charge.payment_intent));
  const delta = refundDelta(charge.amount_refunded, purchase.refunded_cents, purchase.paid_cents!);
  if (delta === 0) return 'refund already taken';
  const lock = await lockMemberRow(tx, purchase.member_id);
  const added = await providerAdjustment(lock, {
    amountCents: -delta,
    entryKey: stripeEntryKeys.refund(charge.id, charge.amount_refunded),
    referenceType: 'credit_purchase',
    referenceId: purchase.id,
    description: `Stripe refund of bought credits (${formatCents(delta)})`,
  });
  if (!added) return 'refund already taken';
  await noteCreditsMovement(tx, purchase, 'refunded', delta, stripeEntryKeys.refund(charge.id, charge.amount_refunded));
  await addPurchaseRefund(tx, purchase.id, delta, charge.receipt_url ?? null);
  after.push(() =>
    paymentHooks.creditsRefunded?.({ memberId: purchase.member_id, purchaseId: purchase.id, amountCents: delta }),
  );
  return `refunded ${delta}`;
}

async function disputeOpened(tx: EntityManager, dispute: Stripe.Dispute, after: Notify[]): Promise<string> {
  const purchase = await purchaseOfPaymentIntent(tx, idOf(dispute.payment_intent));
  const lock = await lockMemberRow(tx, purchase.member_id);
  const added = await providerAdjustment(lock, {
    amountCents: -dispute.amount,
    entryKey: stripeEntryKeys.disputeOpened(dispute.id),
    referenceType: 'credit_purchase',
    referenceId: purchase.id,
    description: `Stripe dispute opened on bought credits (${formatCents(dispute.amount)})`,
  });
  if (!added) return 'dispute already taken';
  await noteCreditsMovement(tx, purchase, 'dispute_opened', dispute.amount, stripeEntryKeys.disputeOpened(dispute.id));
  await addPurchaseDispute(tx, purchase.id, dispute.amount);
  after.push(() =>
    paymentHooks.creditsDisputed?.({
      memberId: purchase.member_id,
      purchaseId: purchase.id,
      amountCents: dispute.amount,
      outcome: 'opened',
    }),
  );
  return `dispute opened: took ${dispute.amount}`;
}

/** charge.dispute.closed: a won dispute gives back what its opening took; a lost one leaves it taken. */
async function disputeClosed(tx: EntityManager, dispute: Stripe.Dispute, after: Notify[]): Promise<string> {
  const purchase = await purchaseOfPaymentIntent(tx, idOf(dispute.payment_intent));
  if (dispute.status !== 'won') return `dispute closed ${dispute.status}: nothing restored`;
  const [opened] = await sqlRows<{ amount_cents: number }>(
    tx,
    `SELECT amount_cents FROM credits_ledger WHERE entry_key = $1`,
    [stripeEntryKeys.disputeOpened(dispute.id)],
  );
  // Its opening was not applied yet (events out of order): restore only after taking.
  if (!opened) throw new PurchaseNotKnownYet(`dispute ${dispute.id} closed before its opening was applied`);
  const restored = -Number(opened.amount_cents);
  const lock = await lockMemberRow(tx, purchase.member_id);
  const added = await providerAdjustment(lock, {
    amountCents: restored,
    entryKey: stripeEntryKeys.disputeWon(dispute.id),
    referenceType: 'credit_purchase',
    referenceId: purchase.id,
    description: `Stripe dispute won: bought credits restored (${formatCents(restored)})`,
  });
  if (!added) return 'dispute already restored';
  await noteCreditsMovement(tx, purchase, 'dispute_won', restored, stripeEntryKeys.disputeWon(dispute.id));
  await restorePurchaseDispute(tx, purchase.id, restored);
  after.push(() =>
    paymentHooks.creditsDisputed?.({
      memberId: purchase.member_id,
      purchaseId: purchase.id,
      amountCents: restored,
      outcome: 'won',
    }),
  );
  return `dispute won: restored ${restored}`;
}

/** The card a setup session saved, read from its SetupIntent; `refused` when Stripe says there is none. */
type SavedCard = { paymentMethodId: string; brand: string | null; last4: string | null } | { refused: string };

/**
 * For a recorded, unapplied checkout.session.completed of a setup session: the saved
 * payment method, from the session's SetupIntent (Stripe's event names only its id). A
 * Stripe outage throws, and the activity tries again.
 */
async function savedCardOf(deps: Deps, eventId: string): Promise<SavedCard | null> {
  const [row] = await sqlRows<{ setup_intent: string | null }>(
    deps.db,
    `SELECT payload->'data'->'object'->>'setup_intent' AS setup_intent FROM stripe_events
      WHERE id = $1 AND processed_at IS NULL AND type = 'checkout.session.completed'
        AND payload->'data'->'object'->>'mode' = 'setup'`,
    [eventId],
  );
  if (!row) return null;
  const setupIntent = row.setup_intent;
  if (!setupIntent) return { refused: 'the setup session names no SetupIntent' };
  try {
    const intent = await stripeClient(deps).setupIntents.retrieve(setupIntent, { expand: ['payment_method'] });
    const method = intent.payment_method;
    if (!method) return { refused: `SetupIntent ${setupIntent} saved no payment method` };
    if (typeof method === 'string') return { paymentMethodId: method, brand: null, last4: null };
    return { paymentMethodId: method.id, brand: method.card?.brand ?? method.type, last4: method.card?.last4 ?? null };
  } catch (err) {
    if (err instanceof Stripe.errors.StripeInvalidRequestError)
      return { refused: `SetupIntent ${setupIntent}: ${err.message}` };
    throw err;
  }
}

/**
 * A setup session completed: its card becomes the member's card for automatic reload
 * (reload itself is turned on by the owner). A card saved from an older session arriving
 * late does not replace a newer one.
 */
async function saveCard(tx: EntityManager, s: Stripe.Checkout.Session, card: SavedCard | null): Promise<string> {
  const [setup] = await sqlRows<CardSetupRow>(
    tx,
    `SELECT * FROM stripe_card_setups WHERE stripe_session_id = $1 FOR UPDATE`,
    [s.id],
  );
  const memberId: string | null = setup ? setup.member_id : await memberOfSession(tx, s);
  if (!memberId || (setup && idOf(s.customer) !== setup.customer_id))
    return 'ignored: setup session of an unknown member or customer';
  if (!card) return 'ignored: no card read for the setup session';
  if ('refused' in card) return `ignored: ${card.refused}`;
  if (setup?.status === 'saved') return 'card already saved';
  const startedAt: Date = setup?.created_at ?? (s.created ? new Date(s.created * 1000) : new Date());
  const [newer] = await sqlRows<{ '?column?': number }>(
    tx,
    `SELECT 1 FROM stripe_card_setups WHERE member_id = $1 AND status = 'saved' AND created_at > $2 LIMIT 1`,
    [memberId, startedAt],
  );
  if (setup) await markCardSetupSaved(tx, setup.id, card.paymentMethodId);
  else
    await insertSavedCardSetup(tx, {
      memberId,
      sessionId: s.id,
      customerId: idOf(s.customer),
      paymentMethodId: card.paymentMethodId,
      startedAt,
    });
  if (newer) return 'card saved, not used: a card saved later is in use';
  await saveReloadCard(tx, memberId, card.paymentMethodId, card.brand, card.last4);
  return `card saved (${card.brand ?? 'card'} ${card.last4 ?? card.paymentMethodId})`;
}

/**
 * The automatic reload a PaymentIntent's metadata names, locked, when it is this member's
 * with their Customer; otherwise why the event is ignored (a Checkout payment's intent is
 * applied from its session's events; another integration's intents are not ours).
 */
async function reloadOfIntent(tx: EntityManager, pi: Stripe.PaymentIntent): Promise<PurchaseRow | string> {
  const meta = pi.metadata ?? {};
  if (meta.purpose !== 'auto_reload') return 'ignored: not an automatic reload';
  const id = meta.credit_purchase_id;
  if (!id || !/^[0-9a-f-]{36}$/i.test(id)) return 'ignored: automatic reload of an unknown purchase';
  const [row] = await sqlRows<PurchaseRow>(
    tx,
    `SELECT * FROM credit_purchases WHERE id = $1 AND kind = 'auto_reload' FOR UPDATE`,
    [id],
  );
  if (!row || row.member_id !== meta.member_id || (row.customer_id && idOf(pi.customer) !== row.customer_id))
    return 'ignored: automatic reload of an unknown member or customer';
  return row;
}

/** payment_intent.succeeded of a reload: its one top-up (per PaymentIntent), for the amount Stripe received. */
async function reloadSucceeded(tx: EntityManager, pi: Stripe.PaymentIntent, after: Notify[]): Promise<string> {
  const reload = await reloadOfIntent(tx, pi);
  if (typeof reload === 'string') return reload;
  const amountCents = pi.amount_received;
  if (pi.currency !== 'usd' || !(amountCents > 0))
    return `ignored: received ${amountCents} ${pi.currency} is not a USD payment`;
  const lock = await lockMemberRow(tx, reload.member_id);
  const added = await topUp(lock.tx, {
    memberId: reload.member_id,
    amountCents,
    entryKey: stripeEntryKeys.paymentIntent(pi.id),
    referenceType: 'credit_purchase',
    referenceId: reload.id,
    description: `Automatic reload with Stripe (${formatCents(amountCents)})`,
  });
  // Paid even when an earlier answer failed it: the money was received.
  await markReloadPaid(tx, reload.id, amountCents, pi.id);
  if (!added) return 'already credited';
  await noteCreditsMovement(tx, reload, 'bought', amountCents, stripeEntryKeys.paymentIntent(pi.id));
  after.push(() => paymentHooks.creditsBought?.({ memberId: reload.member_id, purchaseId: reload.id, amountCents }));
  return `reloaded ${amountCents}`;
}

/** payment_intent.payment_failed of a reload: the reload fails and automatic reload is turned off, with Stripe's reason. */
async function reloadFailed(tx: EntityManager, pi: Stripe.PaymentIntent): Promise<string> {
  const reload = await reloadOfIntent(tx, pi);
  if (typeof reload === 'string') return reload;
  const cause = chargeFailureCause(pi.last_payment_error ?? {});
  if (!(await failReloadIn(tx, reload, cause, pi.id))) return `payment failed: reload left ${reload.status}`;
  return `reload failed (${cause}): automatic reload turned off`;
}

/**
 * The receipt link of a paid purchase, once Stripe has one: the hosted page of the invoice
 * Stripe issued for a checkout (invoice_creation), else the receipt of its charge; for an
 * automatic reload, its charge's receipt. Best effort, after the credit: a Stripe outage
 * leaves the link empty. The local stand-in issues neither (stripe-mock keeps no invoices
 * or charges), so locally there is no receipt link.
 */
export async function recordReceipt(deps: Deps, eventId: string): Promise<void> {
  const [event] = await sqlRows<
    Pick<StripeEventRow, 'type'> & {
      /** The event's object: a PaymentIntent or a Checkout Session, of which these fields are read. */
      object: { id: string; latest_charge?: string | { id: string } | null; metadata?: Record<string, string> | null };
    }
  >(deps.db, `SELECT type, payload->'data'->'object' AS object FROM stripe_events WHERE id = $1`, [eventId]);
  if (!event) return;
  try {
    const stripe = stripeClient(deps);
    if (event.type === 'payment_intent.succeeded') {
      const charge = idOf(event.object.latest_charge);
      const [reload] = await sqlRows<Pick<PurchaseRow, 'id'>>(
        deps.db,
        `SELECT id FROM credit_purchases
          WHERE id::text = $1 AND kind = 'auto_reload' AND status <> 'pending' AND receipt_url IS NULL`,
        [event.object.metadata?.credit_purchase_id ?? ''],
      );
      if (!reload || !charge) return;
      const { receipt_url } = await stripe.charges.retrieve(charge);
      if (receipt_url) await setReceipt(deps, reload.id, receipt_url);
      return;
    }
    if (!String(event.type).startsWith('checkout.session.')) return;
    const [row] = await sqlRows<Pick<PurchaseRow, 'id' | 'payment_intent_id'> & { invoice_id: string }>(
      deps.db,
      `SELECT id, invoice_id, payment_intent_id FROM credit_purchases
        WHERE stripe_session_id = $1 AND invoice_id IS NOT NULL AND receipt_url IS NULL`,
      [event.object.id],
    );
    if (!row) return;
    const invoice = await stripe.invoices.retrieve(row.invoice_id);
    if (invoice.hosted_invoice_url) return setReceipt(deps, row.id, invoice.hosted_invoice_url);
    if (!row.payment_intent_id) return;
    const intent = await stripe.paymentIntents.retrieve(row.payment_intent_id, { expand: ['latest_charge'] });
    const charge = intent.latest_charge;
    if (charge && typeof charge !== 'string' && charge.receipt_url) await setReceipt(deps, row.id, charge.receipt_url);
  } catch (err) {
    deps.log.warn({ err, eventId }, 'receipt link not read from Stripe');
  }
}

async function setReceipt(deps: Deps, purchaseId: string, url: string): Promise<void> {
  await setPurchaseReceipt(deps.db, purchaseId, url);
}
