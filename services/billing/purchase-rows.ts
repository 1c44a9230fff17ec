// Every statement that writes the `credit_purchases` table (the row type is PurchaseRow in
// stripe.ts): Checkout purchases and automatic reloads, their payment, failure, refunds,
// disputes and receipt.
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** A Checkout purchase, pending until its session is paid; returns its id. */
export async function insertCheckoutPurchase(
  db: Queryable,
  memberId: string,
  sessionId: string,
  customer: string,
  amountCents: number,
): Promise<{ id: string }> {
  const [row] = await sqlRows<{ id: string }>(
    db,
    `INSERT INTO credit_purchases (member_id, stripe_session_id, customer_id, requested_cents)
     VALUES ($1, $2, $3, $4) RETURNING id`,
    [memberId, sessionId, customer, amountCents],
  );
  return row;
}

/** The purchase of a session seen first in its events (once per session). */
export async function insertSessionPurchase(
  tx: Queryable,
  memberId: string,
  sessionId: string,
  customer: string | null,
  amountCents: number | null,
): Promise<void> {
  await sqlRun(
    tx,
    `INSERT INTO credit_purchases (member_id, stripe_session_id, customer_id, requested_cents)
     VALUES ($1, $2, $3, $4) ON CONFLICT (stripe_session_id) DO NOTHING`,
    [memberId, sessionId, customer, amountCents],
  );
}

/** An automatic reload (once per debit that crossed the threshold); its id, or null when it exists. */
export async function insertAutoReload(tx: Queryable, params: unknown[]): Promise<{ id: string } | null> {
  const [row] = await sqlRows<{ id: string }>(
    tx,
    `INSERT INTO credit_purchases (member_id, kind, customer_id, requested_cents, payment_method_id, threshold_cents, crossed_by)
     VALUES ($1, 'auto_reload', $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING id`,
    params,
  );
  return row ?? null;
}

/** pending -> failed; the ids changed (none when it was settled already). */
export async function failPendingReload(
  tx: Queryable,
  id: string,
  cause: string,
  paymentIntentId: string | null,
): Promise<{ id: string }[]> {
  return sqlRows<{ id: string }>(
    tx,
    `UPDATE credit_purchases
        SET status = 'failed', failure_reason = $2, payment_intent_id = COALESCE(payment_intent_id, $3), updated_at = now()
      WHERE id = $1 AND status = 'pending' RETURNING id`,
    [id, cause, paymentIntentId],
  );
}

/** A pending reload not charged yet is cancelled, with why. */
export async function cancelUnchargedReload(db: Queryable, id: string, reason: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE credit_purchases SET status = 'cancelled', failure_reason = $2, updated_at = now()
          WHERE id = $1 AND status = 'pending' AND payment_intent_id IS NULL`,
    [id, reason],
  );
}

/** Records the purchase's PaymentIntent when it has none yet. */
export async function notePaymentIntent(db: Queryable, id: string, paymentIntentId: string | null): Promise<void> {
  await sqlRun(
    db,
    `UPDATE credit_purchases SET payment_intent_id = COALESCE(payment_intent_id, $2), updated_at = now() WHERE id = $1`,
    [id, paymentIntentId],
  );
}

/** A Checkout purchase is paid. */
export async function markSessionPaid(tx: Queryable, params: unknown[]): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE credit_purchases
        SET status = CASE WHEN status IN ('pending','failed') THEN 'paid' ELSE status END,
            paid_cents = $2, payment_intent_id = COALESCE(payment_intent_id, $3), invoice_id = COALESCE(invoice_id, $4),
            failure_reason = NULL, updated_at = now()
      WHERE id = $1`,
    params,
  );
}

/** A Checkout payment failed. */
export async function markSessionFailed(tx: Queryable, id: string): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE credit_purchases SET status = 'failed', failure_reason = 'the payment failed', updated_at = now() WHERE id = $1`,
    [id],
  );
}

/** Adds a refund (refunded in full unless disputed) and keeps the first receipt URL. */
export async function addPurchaseRefund(
  tx: Queryable,
  id: string,
  delta: number,
  receiptUrl: string | null,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE credit_purchases
        SET refunded_cents = refunded_cents + $2,
            status = CASE WHEN refunded_cents + $2 >= paid_cents AND status <> 'disputed' THEN 'refunded' ELSE status END,
            receipt_url = COALESCE(receipt_url, $3), updated_at = now()
      WHERE id = $1`,
    [id, delta, receiptUrl],
  );
}

/** A dispute opened and took its amount. */
export async function addPurchaseDispute(tx: Queryable, id: string, amount: number): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE credit_purchases SET disputed_cents = disputed_cents + $2, status = 'disputed', updated_at = now() WHERE id = $1`,
    [id, amount],
  );
}

/** A won dispute gives back what it took. */
export async function restorePurchaseDispute(tx: Queryable, id: string, restored: number): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE credit_purchases
        SET disputed_cents = disputed_cents - $2,
            status = CASE WHEN disputed_cents - $2 > 0 THEN 'disputed'
                          WHEN refunded_cents >= paid_cents THEN 'refunded' ELSE 'paid' END,
            updated_at = now()
      WHERE id = $1`,
    [id, restored],
  );
}

/** An automatic reload is paid. */
export async function markReloadPaid(
  tx: Queryable,
  id: string,
  amountCents: number,
  paymentIntentId: string,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE credit_purchases
        SET status = CASE WHEN status IN ('pending','failed','cancelled') THEN 'paid' ELSE status END,
            paid_cents = $2, payment_intent_id = COALESCE(payment_intent_id, $3), failure_reason = NULL, updated_at = now()
      WHERE id = $1`,
    [id, amountCents, paymentIntentId],
  );
}

/** The purchase's receipt URL, when it has none yet. */
export async function setPurchaseReceipt(db: Queryable, purchaseId: string, url: string): Promise<void> {
  await sqlRun(db, `UPDATE credit_purchases SET receipt_url = $2 WHERE id = $1 AND receipt_url IS NULL`, [
    purchaseId,
    url,
  ]);
}
