// Every statement that writes the `auto_reload_settings` table: the owner's settings, the saved
// card, arming after a reload starts, and turning reload off when one fails.
import { sqlRun, type Queryable } from '../shared/sql';

/** First settings of a member with no row yet (off, no card); a concurrent first save may have made it already. */
export async function insertReloadSettings(
  tx: Queryable,
  memberId: string,
  thresholdCents: number,
  amountCents: number,
): Promise<void> {
  await sqlRun(
    tx,
    `INSERT INTO auto_reload_settings (member_id, threshold_cents, amount_cents) VALUES ($1, $2, $3)
         ON CONFLICT (member_id) DO UPDATE SET threshold_cents = $2, amount_cents = $3, updated_at = now()`,
    [memberId, thresholdCents, amountCents],
  );
}

/** The owner's settings: on or off (armed with it), threshold and amount; clears why it was turned off. */
export async function updateReloadSettings(
  tx: Queryable,
  memberId: string,
  enabled: boolean,
  thresholdCents: number,
  amountCents: number,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE auto_reload_settings
            SET enabled = $2, threshold_cents = $3, amount_cents = $4, armed = $2,
                disabled_reason = NULL, disabled_at = NULL, updated_at = now()
          WHERE member_id = $1`,
    [memberId, enabled, thresholdCents, amountCents],
  );
}

/** A reload started: no other starts until the balance is topped up again. */
export async function disarmReload(tx: Queryable, memberId: string): Promise<void> {
  await sqlRun(tx, `UPDATE auto_reload_settings SET armed = false WHERE member_id = $1`, [memberId]);
}

/** A reload failed: reload is off, with why. */
export async function turnReloadOff(tx: Queryable, memberId: string, reason: string): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE auto_reload_settings
        SET enabled = false, armed = false, disabled_reason = $2, disabled_at = now(), updated_at = now()
      WHERE member_id = $1`,
    [memberId, reason],
  );
}

/** The member's saved card for reloads (the latest one saved). */
export async function saveReloadCard(
  tx: Queryable,
  memberId: string,
  paymentMethodId: string,
  brand: string | null,
  last4: string | null,
): Promise<void> {
  await sqlRun(
    tx,
    `INSERT INTO auto_reload_settings (member_id, payment_method_id, card_brand, card_last4, card_saved_at)
     VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (member_id) DO UPDATE
       SET payment_method_id = $2, card_brand = $3, card_last4 = $4, card_saved_at = now(), updated_at = now()`,
    [memberId, paymentMethodId, brand, last4],
  );
}
