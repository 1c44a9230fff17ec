// Every statement that writes the `email_links` table: the one-time links of verification
// and recipient-confirmation emails, made and used.
import { sqlRows, type Queryable } from '../shared/sql';

/** A link that verifies the member's email address; its id. */
export async function insertVerifyEmailLink(tx: Queryable, memberId: string, expires: Date): Promise<{ id: string }> {
  const [link] = await sqlRows<{ id: string }>(
    tx,
    `INSERT INTO email_links (purpose, member_id, expires_at) VALUES ('verify_email', $1, $2) RETURNING id`,
    [memberId, expires],
  );
  return link;
}

/** A link that confirms an extra recipient; its id. */
export async function insertConfirmRecipientLink(
  tx: Queryable,
  memberId: string,
  recipientId: string,
  expires: Date,
): Promise<{ id: string }> {
  const [link] = await sqlRows<{ id: string }>(
    tx,
    `INSERT INTO email_links (purpose, member_id, recipient_id, expires_at) VALUES ('confirm_recipient', $1, $2, $3) RETURNING id`,
    [memberId, recipientId, expires],
  );
  return link;
}

/** Marks an unused, unexpired link of `purpose` used; undefined when there is none. */
export async function markEmailLinkUsed(
  tx: Queryable,
  id: string,
  purpose: string,
): Promise<{ member_id: string; recipient_id: string | null } | undefined> {
  const [link] = await sqlRows<{ member_id: string; recipient_id: string | null }>(
    tx,
    `WITH used AS (
       UPDATE email_links SET used_at = now()
        WHERE id::text = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()
        RETURNING member_id, recipient_id)
     SELECT * FROM used`,
    [id, purpose],
  );
  return link;
}
