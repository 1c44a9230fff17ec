// The `stripe_card_setups` table: its row type, and every statement that writes it: a
// card-saving Checkout Session opened, and the card it saved.
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** One row of `stripe_card_setups`. */
export interface CardSetupRow {
  id: string;
  member_id: string;
  stripe_session_id: string;
  customer_id: string;
  status: 'pending' | 'saved';
  payment_method_id: string | null;
  created_at: Date;
}

/** Records a card-saving Checkout Session opened for the member; its id. */
export async function insertCardSetup(
  db: Queryable,
  memberId: string,
  sessionId: string,
  customerId: string,
): Promise<Pick<CardSetupRow, 'id'>> {
  const [row] = await sqlRows<Pick<CardSetupRow, 'id'>>(
    db,
    `INSERT INTO stripe_card_setups (member_id, stripe_session_id, customer_id) VALUES ($1, $2, $3) RETURNING id`,
    [memberId, sessionId, customerId],
  );
  return row;
}

/** The setup's session saved the card `paymentMethodId`. */
export async function markCardSetupSaved(tx: Queryable, id: string, paymentMethodId: string): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE stripe_card_setups SET status = 'saved', payment_method_id = $2, saved_at = now() WHERE id = $1`,
    [id, paymentMethodId],
  );
}

/** A setup session this service did not record (opened elsewhere) saved a card: recorded as saved. */
export async function insertSavedCardSetup(
  tx: Queryable,
  s: { memberId: string; sessionId: string; customerId: string | null; paymentMethodId: string; startedAt: Date },
): Promise<void> {
  await sqlRun(
    tx,
    `INSERT INTO stripe_card_setups (member_id, stripe_session_id, customer_id, status, payment_method_id, created_at, saved_at)
       VALUES ($1, $2, $3, 'saved', $4, $5, now()) ON CONFLICT (stripe_session_id) DO NOTHING`,
    [s.memberId, s.sessionId, s.customerId, s.paymentMethodId, s.startedAt],
  );
}
