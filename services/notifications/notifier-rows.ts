// Every statement that writes the `notification_notifiers` table: the wake-up flag of each
// member's notifier, set by a notice and cleared by the notifier (or a failed signal).
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** Sets the wake-up flag unless it was set less than `refreshSeconds` ago; empty when it was. */
export async function requestNotifierWake(db: Queryable, memberId: string, refreshSeconds: number): Promise<unknown[]> {
  return sqlRows<unknown>(
    db,
    `INSERT INTO notification_notifiers (member_id, wake_requested_at) VALUES ($1, now())
     ON CONFLICT (member_id) DO UPDATE SET wake_requested_at = now()
      WHERE notification_notifiers.wake_requested_at IS NULL
         OR notification_notifiers.wake_requested_at < now() - make_interval(secs => $2)
     RETURNING member_id`,
    [memberId, refreshSeconds],
  );
}

/** Clears the wake-up flag. */
export async function clearNotifierWake(db: Queryable, memberId: string): Promise<void> {
  await sqlRun(db, `UPDATE notification_notifiers SET wake_requested_at = NULL WHERE member_id = $1`, [memberId]);
}
