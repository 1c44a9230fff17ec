// Every statement that writes the `waitlist_leads` table: a reservation, the account made
// from it at signup, and the verified email.
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** Records a reservation (stage 'waitlisted'). */
export async function insertLead(
  db: Queryable,
  lead: {
    id: string;
    email: string;
    needs: string | null;
    preferredLocation: string | null;
    callbackUrl: string | null;
    agentId: string | null;
    operatorContact: string | null;
    source: string;
  },
): Promise<void> {
  await sqlRun(
    db,
    `INSERT INTO waitlist_leads (id, email, needs, preferred_location, callback_url, agent_id, operator_contact, source)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      lead.id,
      lead.email,
      lead.needs,
      lead.preferredLocation,
      lead.callbackUrl,
      lead.agentId,
      lead.operatorContact,
      lead.source,
    ],
  );
}

/** The lead's account was made at signup (its needs kept unless the signup gave some). */
export async function markLeadAccountCreated(
  tx: Queryable,
  leadId: string,
  memberId: string,
  needs: string | null,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE waitlist_leads SET member_id = $2, stage = 'account_created', needs = COALESCE($3, needs) WHERE id = $1`,
    [leadId, memberId, needs],
  );
}

/** The member's email was verified: its lead (if any, and not further on) moves to 'email_verified'. */
export async function markLeadEmailVerified(tx: Queryable, memberId: string): Promise<{ id: string }[]> {
  return sqlRows<{ id: string }>(
    tx,
    `WITH l AS (
         UPDATE waitlist_leads SET stage = 'email_verified'
          WHERE member_id = $1 AND stage IN ('waitlisted','account_created') RETURNING id)
       SELECT * FROM l`,
    [memberId],
  );
}
