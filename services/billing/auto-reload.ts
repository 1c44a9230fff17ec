// Automatic reload of credits (opt-in on the billing page). The owner saves a card through
// a Checkout Session in setup mode (the card is recorded from Stripe's signed
// checkout.session.completed, in payments.ts) and sets a threshold and an amount. The
// ledger's debit() calls noteDebitForAutoReload inside its own transaction, under the
// member row lock: when the debit crosses the threshold, a reload (a credit purchase of
// kind auto_reload) is inserted in that same transaction, at most one pending per member,
// and its workflow `auto-reload-<purchase id>` is started once the transaction commits
// (the payments reconciler starts it if that start is lost). The workflow creates one
// off-session PaymentIntent under the Stripe idempotency key of the reload; the credit is
// added only by Stripe's signed payment_intent.succeeded (payments.ts), one ledger entry per
// PaymentIntent. A declined charge turns reload off with the reason the billing page shows.
// docs/decisions/0080-auto-reload-crossing-in-the-debit.md says why it is built this way.
import Stripe from 'stripe';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import { afterCommit } from '../shared/after-commit';
import { customerFor, stripeClient, StripeUnavailable, type PurchaseRow } from './stripe';
import { sendLocalReloadEvent } from './local-checkout';
import { chargeFailureCause, reloadDue, reloadFailureReason } from '../../domain/billing/auto-reload';
import { formatCents } from '../../domain/shared/money';
import {
  AUTO_RELOAD_WORKFLOW,
  autoReloadWorkflowId,
  type AutoReloadInput,
  type AutoReloadOutcome,
} from '../../workflows/billing/contracts';
import { MemberId, ObjectId } from '../../workflows/shared/search-attributes';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';
import { type CardSetupRow, insertCardSetup } from './card-setup-rows';
import { cancelUnchargedReload, failPendingReload, insertAutoReload, notePaymentIntent } from './purchase-rows';
import { disarmReload, insertReloadSettings, turnReloadOff, updateReloadSettings } from './auto-reload-settings-rows';

/**
 * Fault hooks for tests (faults a real service cannot produce on demand): `beforeStart`
 * throwing stands for a process that stopped between the debit's commit and the start of
 * the reload's workflow.
 */
export const autoReloadFaults: { beforeStart?: (purchaseId: string) => void } = {};

export interface AutoReloadSettings {
  member_id: string;
  enabled: boolean;
  threshold_cents: number | null;
  amount_cents: number | null;
  /** Turned on since the last reload: the next debit leaving the balance below the threshold reloads. */
  armed: boolean;
  payment_method_id: string | null;
  card_brand: string | null;
  card_last4: string | null;
  card_saved_at: Date | null;
  disabled_reason: string | null;
  disabled_at: Date | null;
}

/** The Stripe idempotency key of a reload's PaymentIntent: every attempt of its charge is one charge. */
export const autoReloadIdempotencyKey = (purchaseId: string) => `postal-auto-reload:${purchaseId}`;

/** What the billing page shows: the settings and saved card, and the reload not settled yet. */
export async function getAutoReload(
  deps: Deps,
  memberId: string,
): Promise<{ settings: AutoReloadSettings | null; open: PurchaseRow | null }> {
  const [[settings], [open]] = await Promise.all([
    sqlRows<AutoReloadSettings>(deps.db, `SELECT * FROM auto_reload_settings WHERE member_id = $1`, [memberId]),
    sqlRows<PurchaseRow>(
      deps.db,
      `SELECT * FROM credit_purchases WHERE member_id = $1 AND kind = 'auto_reload' AND status = 'pending'`,
      [memberId],
    ),
  ]);
  return { settings: settings ?? null, open: open ?? null };
}

/** Saving needs a card when reload is turned on. */
export class NoCardSaved extends Error {}

/**
 * Saves the owner's settings (amount and threshold already within their bounds). Turning
 * reload on (or saving it on) clears a failure's reason and arms it: the next debit that
 * leaves the balance below the threshold reloads, even if the balance is below it already.
 */
export async function saveAutoReloadSettings(
  deps: Deps,
  memberId: string,
  s: { enabled: boolean; thresholdCents: number; amountCents: number },
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const [current] = await sqlRows<Pick<AutoReloadSettings, 'payment_method_id'>>(
      tx,
      `SELECT payment_method_id FROM auto_reload_settings WHERE member_id = $1 FOR UPDATE`,
      [memberId],
    );
    if (s.enabled && !current?.payment_method_id) throw new NoCardSaved('save a card before turning reload on');
    // Off (no card yet): an insert, which a concurrent first save may have made already.
    if (!current) await insertReloadSettings(tx, memberId, s.thresholdCents, s.amountCents);
    else await updateReloadSettings(tx, memberId, s.enabled, s.thresholdCents, s.amountCents);
  });
}

/**
 * Starts a Checkout Session in setup mode for the member's Stripe Customer, so the owner
 * saves a card for automatic reload. Answers where to send the browser: Stripe's hosted
 * page, or outside production with the Stripe API mocked, the local stand-in.
 */
export async function startCardSetup(deps: Deps, memberId: string): Promise<{ redirectUrl: string }> {
  const billing = `${deps.config.siteUrl}/console/billing`;
  let session: Stripe.Checkout.Session;
  let customer: string;
  try {
    customer = await customerFor(deps, memberId);
    session = await stripeClient(deps).checkout.sessions.create({
      mode: 'setup',
      customer,
      currency: 'usd',
      client_reference_id: memberId,
      metadata: { member_id: memberId, purpose: 'auto_reload_card' },
      setup_intent_data: {
        metadata: { member_id: memberId },
        description: 'Postal Mail: card for the automatic reload of credits',
      },
      success_url: `${billing}?card=sent#auto-reload`,
      cancel_url: `${billing}?card=cancelled#auto-reload`,
    });
  } catch (err) {
    if (err instanceof Stripe.errors.StripeError) {
      deps.log.warn({ err: { type: err.type, message: err.message } }, 'stripe setup session not created');
      throw new StripeUnavailable(err.message);
    }
    throw err;
  }
  const row = await insertCardSetup(deps.db, memberId, session.id, customer);
  const redirectUrl = deps.config.stripe.localCheckout
    ? `${deps.config.siteUrl}/console/billing/card-setup/${row.id}`
    : session.url;
  if (!redirectUrl) throw new StripeUnavailable('Stripe answered a Checkout Session without a URL');
  return { redirectUrl };
}

export type { CardSetupRow } from './card-setup-rows';

export async function getCardSetup(deps: Deps, memberId: string, id: string): Promise<CardSetupRow | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const [row] = await sqlRows<CardSetupRow>(
    deps.db,
    `SELECT * FROM stripe_card_setups WHERE id = $1 AND member_id = $2`,
    [id, memberId],
  );
  return row;
}

/**
 * Called by the ledger's debit() inside its transaction, with the member row locked, after
 * a live debit moved the balance from `beforeCents` to `afterCents`. When the debit crosses
 * the owner's threshold (domain/billing/auto-reload.ts), records the reload in the same
 * transaction and starts its workflow once the transaction commits. Answers the reload's id.
 */
export async function noteDebitForAutoReload(
  deps: Deps,
  tx: EntityManager,
  d: { memberId: string; beforeCents: number; afterCents: number; debitKey: string },
): Promise<string | null> {
  const [s] = await sqlRows<
    Pick<AutoReloadSettings, 'enabled' | 'threshold_cents' | 'amount_cents' | 'armed' | 'payment_method_id'> & {
      customer_id: string | null;
      open: boolean;
    }
  >(
    tx,
    `SELECT s.enabled, s.threshold_cents, s.amount_cents, s.armed, s.payment_method_id, c.customer_id,
            EXISTS (SELECT 1 FROM credit_purchases p
                     WHERE p.member_id = s.member_id AND p.kind = 'auto_reload' AND p.status = 'pending') AS open
       FROM auto_reload_settings s LEFT JOIN stripe_customers c ON c.member_id = s.member_id
      WHERE s.member_id = $1 AND s.enabled`,
    [d.memberId],
  );
  if (!s || !s.customer_id) return null;
  const due = reloadDue(
    {
      enabled: s.enabled,
      thresholdCents: s.threshold_cents,
      hasCard: Boolean(s.payment_method_id),
      armed: s.armed,
      reloadOpen: s.open,
    },
    d.beforeCents,
    d.afterCents,
  );
  if (!due) return null;
  const row = await insertAutoReload(tx, [
    d.memberId,
    s.customer_id,
    s.amount_cents,
    s.payment_method_id,
    s.threshold_cents,
    d.debitKey,
  ]);
  if (!row) return null;
  await disarmReload(tx, d.memberId);
  const purchaseId: string = row.id;
  afterCommit(tx, () => {
    startAutoReloadWorkflow(deps, purchaseId, d.memberId).catch((err) =>
      deps.log.warn({ err, purchaseId }, 'auto-reload workflow start left to the payments reconciler'),
    );
  });
  return purchaseId;
}

/** Starts the reload's workflow (one per reload). `restartFailed`: the reconciler runs one whose earlier run failed or was terminated. */
export async function startAutoReloadWorkflow(
  deps: Deps,
  purchaseId: string,
  memberId: string,
  opts: { restartFailed?: boolean } = {},
): Promise<void> {
  autoReloadFaults.beforeStart?.(purchaseId);
  const input: AutoReloadInput = { purchaseId };
  try {
    await deps.temporal.workflow.start(AUTO_RELOAD_WORKFLOW, {
      taskQueue: deps.config.taskQueue,
      workflowId: autoReloadWorkflowId(purchaseId),
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: opts.restartFailed ? 'ALLOW_DUPLICATE_FAILED_ONLY' : 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: ObjectId, value: purchaseId },
        { key: MemberId, value: memberId },
      ],
    });
  } catch (err) {
    // A closed run of this reload charged it (or found nothing to charge) already.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * A reload's charge failed: the reload is failed with Stripe's reason and reload is
 * turned off with the words the billing page shows (the owner turns it on again). In the
 * caller's transaction; false when the reload was settled already.
 */
export async function failReloadIn(
  tx: Queryable,
  reload: Pick<PurchaseRow, 'id' | 'member_id' | 'requested_cents'>,
  cause: string,
  paymentIntentId: string | null,
): Promise<boolean> {
  // Through sqlRows: a raw UPDATE answers [rows, count], whose length was always 2, so a
  // reload settled already was failed again and turned reload off.
  const failed = await failPendingReload(tx, reload.id, cause, paymentIntentId);
  if (!failed.length) return false;
  await turnReloadOff(tx, reload.member_id, reloadFailureReason(reload.requested_cents, cause));
  return true;
}

/** Stripe answers that cannot change by asking again: the charge failed. Anything else (network, 5xx, rate limit) is retried. */
function chargeRefused(err: unknown): err is Stripe.errors.StripeError {
  return (
    err instanceof Stripe.errors.StripeCardError ||
    err instanceof Stripe.errors.StripeInvalidRequestError ||
    err instanceof Stripe.errors.StripeIdempotencyError
  );
}

/**
 * The reload workflow's activity: creates the reload's one off-session PaymentIntent
 * (the Stripe idempotency key makes every retry the same charge) and records its id. The
 * credit comes from Stripe's signed event, never from this answer. Outside production
 * with stripe-mock, the local stand-in then posts the event Stripe would send.
 */
export async function chargeAutoReload(deps: Deps, purchaseId: string): Promise<AutoReloadOutcome> {
  const [reload] = await sqlRows<PurchaseRow & { enabled: boolean | null }>(
    deps.db,
    `SELECT p.*, s.enabled FROM credit_purchases p LEFT JOIN auto_reload_settings s ON s.member_id = p.member_id
      WHERE p.id = $1 AND p.kind = 'auto_reload'`,
    [purchaseId],
  );
  if (!reload) return { outcome: 'no such reload' };
  if (reload.status !== 'pending') return { outcome: `already ${reload.status}` };
  let paymentIntentId = reload.payment_intent_id;
  if (!paymentIntentId) {
    if (!reload.enabled) {
      await cancelUnchargedReload(deps.db, reload.id, 'not charged: automatic reload was turned off before the charge');
      return { outcome: 'cancelled: automatic reload was turned off' };
    }
    try {
      const intent = await stripeClient(deps).paymentIntents.create(
        {
          amount: reload.requested_cents,
          currency: 'usd',
          customer: reload.customer_id!,
          payment_method: reload.payment_method_id!,
          off_session: true,
          confirm: true,
          description: `Postal Mail credits: automatic reload (${formatCents(reload.requested_cents)})`,
          metadata: { member_id: reload.member_id, credit_purchase_id: reload.id, purpose: 'auto_reload' },
        },
        { idempotencyKey: autoReloadIdempotencyKey(reload.id) },
      );
      paymentIntentId = intent.id;
    } catch (err) {
      if (!chargeRefused(err)) throw err;
      const cause = chargeFailureCause(err);
      await deps.db.transaction((tx) => failReloadIn(tx, reload, cause, err.payment_intent?.id ?? null));
      return { outcome: `failed: ${cause}` };
    }
    await notePaymentIntent(deps.db, reload.id, paymentIntentId);
  }
  // LOCAL STAND-IN, never in production (localCheckout is false there): stripe-mock sends no events.
  if (deps.config.stripe.localCheckout)
    await sendLocalReloadEvent(deps, { ...reload, payment_intent_id: paymentIntentId });
  return { outcome: 'charge created' };
}

/**
 * The charge could not be created for an hour (Stripe or the network down): the reload is
 * failed and reload turned off, so the owner sees it. A charge Stripe made behind those
 * errors still arrives as payment_intent.succeeded and is credited then.
 */
export async function giveUpAutoReload(deps: Deps, purchaseId: string, cause: string): Promise<AutoReloadOutcome> {
  const failed = await deps.db.transaction(async (tx) => {
    const [reload] = await sqlRows<Pick<PurchaseRow, 'id' | 'member_id' | 'requested_cents'>>(
      tx,
      `SELECT id, member_id, requested_cents FROM credit_purchases
        WHERE id = $1 AND kind = 'auto_reload' AND status = 'pending' AND payment_intent_id IS NULL FOR UPDATE`,
      [purchaseId],
    );
    return reload ? failReloadIn(tx, reload, cause, null) : false;
  });
  return { outcome: failed ? `failed: ${cause}` : 'settled already' };
}
