// Every statement that writes the `notifications` table: recording a notice for its
// recipients, the notifier's queueing and send lease, digests, and giving back abandoned sends.
import type { EmailKind } from '../../domain/notifications/kinds';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** One row of `notifications`, the columns a send reads. */
export interface NotificationRow {
  id: string;
  member_id: string;
  recipient_id: string;
  kind: EmailKind;
  payload: Record<string, string | number | boolean | null>;
  status: string;
  is_digest: boolean;
  message_id: string | null;
  lease_until: Date | null;
}

/**
 * Records a notice for the member's recipients that `recipient` selects ('owner', a recipient
 * id, or null for every confirmed recipient with the kind on); the ids of the new rows.
 */
export async function insertNoticeRows(
  tx: Queryable,
  memberId: string,
  kind: string,
  eventKey: string,
  payloadJson: string,
  recipient: string | null,
): Promise<{ id: string }[]> {
  return sqlRows<{ id: string }>(
    tx,
    `INSERT INTO notifications (member_id, recipient_id, kind, event_key, payload)
     SELECT $1, id, $2, $3, $4 FROM notification_recipients
      WHERE member_id = $1
        AND CASE WHEN $5::text = 'owner' THEN is_owner
                 WHEN $5::text IS NOT NULL THEN id::text = $5 AND removed_at IS NULL
                 ELSE confirmed_at IS NOT NULL AND removed_at IS NULL AND NOT ($2 = ANY(disabled_kinds)) END
     ON CONFLICT (event_key, recipient_id, kind) DO NOTHING
     RETURNING id`,
    [memberId, kind, eventKey, payloadJson, recipient],
  );
}

/** Marks every pending row of the member seen by its notifier. */
export async function markPendingQueued(db: Queryable, memberId: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE notifications SET queued_at = now() WHERE member_id = $1 AND status = 'pending' AND queued_at IS NULL`,
    [memberId],
  );
}

/** Takes the row's send lease (and fixes its Message-ID); undefined when it is not pending or its lease is held. */
export async function claimNotification(
  db: Queryable,
  id: string,
  messageId: string,
  leaseSeconds: number,
): Promise<NotificationRow | undefined> {
  const [row] = await sqlRows<NotificationRow>(
    db,
    `WITH c AS (
       UPDATE notifications
          SET status = 'sending', attempts = attempts + 1, lease_until = now() + make_interval(secs => $3),
              message_id = COALESCE(message_id, $2), updated_at = now()
        WHERE id = $1 AND (status = 'pending' OR (status = 'sending' AND (lease_until IS NULL OR lease_until < now())))
        RETURNING *)
     SELECT * FROM c`,
    [id, messageId, leaseSeconds],
  );
  return row;
}

/** Ends a send: sent, skipped or failed, with the relay's response or the error. */
export async function finishNotification(
  db: Queryable,
  id: string,
  status: 'sent' | 'skipped' | 'failed',
  response: string | null,
  error: string | null,
): Promise<void> {
  await sqlRun(
    db,
    `UPDATE notifications SET status = $2, lease_until = NULL, updated_at = now(),
            sent_at = CASE WHEN $2 = 'sent' THEN now() ELSE sent_at END,
            smtp_response = COALESCE($3, smtp_response), last_error = COALESCE($4, last_error)
      WHERE id = $1 AND status = 'sending'`,
    [id, status, response, error],
  );
}

/** Renews a living send's lease. */
export async function renewNotificationLease(db: Queryable, id: string, leaseSeconds: number): Promise<void> {
  await sqlRun(
    db,
    `UPDATE notifications SET lease_until = now() + make_interval(secs => $2) WHERE id = $1 AND status = 'sending'`,
    [id, leaseSeconds],
  );
}

/** Gives back the lease of a send nothing accepted, with its error. */
export async function releaseNotificationLease(db: Queryable, id: string, error: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE notifications SET lease_until = NULL, last_error = $2, updated_at = now() WHERE id = $1 AND status = 'sending'`,
    [id, error],
  );
}

/** Inserts the digest row of `eventKey` (queued); undefined when it exists already. */
export async function insertDigest(
  tx: Queryable,
  memberId: string,
  recipientId: string,
  kind: string,
  eventKey: string,
): Promise<{ id: string } | undefined> {
  const [created] = await sqlRows<{ id: string }>(
    tx,
    `INSERT INTO notifications (member_id, recipient_id, kind, event_key, is_digest, queued_at)
       VALUES ($1, $2, $3, $4, true, now())
       ON CONFLICT (event_key, recipient_id, kind) DO NOTHING RETURNING id`,
    [memberId, recipientId, kind, eventKey],
  );
  return created;
}

/** Gathers the recipient's pending rows of `kind` into the digest `digestId`. */
export async function markDigested(
  tx: Queryable,
  memberId: string,
  recipientId: string,
  kind: string,
  digestId: string,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE notifications SET status = 'digested', digest_id = $4, updated_at = now()
        WHERE member_id = $1 AND recipient_id = $2 AND kind = $3 AND status = 'pending' AND NOT is_digest`,
    [memberId, recipientId, kind, digestId],
  );
}

/** Rows still `sending` long after their lease (their notifier stopped mid-send) are pending again. */
export async function releaseAbandonedSends(db: Queryable): Promise<void> {
  await sqlRun(
    db,
    `UPDATE notifications SET status = 'pending', queued_at = NULL, updated_at = now()
      WHERE status = 'sending' AND lease_until < now() - interval '10 minutes'`,
  );
}
