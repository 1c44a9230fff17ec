// Every statement that writes the `notification_recipients` table: the owner's row, extra
// recipients (added, confirmed, removed) and the kinds each one has switched off.
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** Makes the member's owner recipient row on first use (every member has one from then on). */
export async function ensureOwnerRecipient(db: Queryable, memberId: string): Promise<void> {
  await sqlRun(
    db,
    `INSERT INTO notification_recipients (member_id, is_owner, confirmed_at) VALUES ($1, true, now())
     ON CONFLICT (member_id) WHERE is_owner DO NOTHING`,
    [memberId],
  );
}

/** Adds an extra (unconfirmed) recipient; its id. */
export async function insertRecipient(tx: Queryable, memberId: string, email: string): Promise<{ id: string }> {
  const [r] = await sqlRows<{ id: string }>(
    tx,
    `INSERT INTO notification_recipients (member_id, email) VALUES ($1, $2) RETURNING id`,
    [memberId, email],
  );
  return r;
}

/** Sets the kinds the recipient has switched off. */
export async function setRecipientDisabledKinds(db: Queryable, id: string, disabledKinds: string[]): Promise<void> {
  await sqlRun(db, `UPDATE notification_recipients SET disabled_kinds = $2, updated_at = now() WHERE id = $1`, [
    id,
    disabledKinds,
  ]);
}

/** Removes an extra recipient. */
export async function markRecipientRemoved(db: Queryable, id: string): Promise<void> {
  await sqlRun(db, `UPDATE notification_recipients SET removed_at = now(), updated_at = now() WHERE id = $1`, [id]);
}

/** Switches one kind off for the recipient (an unsubscribe link), if it is not off already. */
export async function disableRecipientKind(db: Queryable, id: string, kind: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE notification_recipients SET disabled_kinds = array_append(disabled_kinds, $2), updated_at = now()
      WHERE id = $1 AND NOT ($2 = ANY(disabled_kinds))`,
    [id, kind],
  );
}

/** Confirms a recipient (keeping the first time); empty when it was removed. */
export async function markRecipientConfirmed(tx: Queryable, id: string): Promise<{ email: string }[]> {
  return sqlRows<{ email: string }>(
    tx,
    `WITH c AS (
         UPDATE notification_recipients SET confirmed_at = COALESCE(confirmed_at, now()), updated_at = now()
          WHERE id = $1 AND removed_at IS NULL RETURNING email)
       SELECT * FROM c`,
    [id],
  );
}
