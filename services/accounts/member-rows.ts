// Every statement that writes the `members` table (the row type is MemberRow in rows.ts):
// opening an account, verifying its email, and the operator's and member's settings.
import type { MemberRow } from './rows';
import { sqlRows, type Queryable } from '../shared/sql';

/** The account columns createMember sets (an operator or seed opening an account). */
export interface NewMemberColumns {
  email: string;
  fullName: string;
  passwordHash: string | null;
  business: boolean;
  rateLimitPerMinute: number | null;
  returnName: string | null;
  returnCompany: string | null;
  returnLine1: string | null;
  returnLine2: string | null;
  returnCity: string | null;
  returnState: string | null;
  returnZip: string | null;
}

/** Opens an account with its default return address; returns its id. */
export async function insertMember(tx: Queryable, m: NewMemberColumns): Promise<{ id: string }> {
  const [member] = await sqlRows<{ id: string }>(
    tx,
    `INSERT INTO members (email, full_name, password_hash, business, rate_limit_per_minute,
                            return_name, return_company, return_line1, return_line2, return_city, return_state, return_zip)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
    [
      m.email,
      m.fullName,
      m.passwordHash,
      m.business,
      m.rateLimitPerMinute,
      m.returnName,
      m.returnCompany,
      m.returnLine1,
      m.returnLine2,
      m.returnCity,
      m.returnState,
      m.returnZip,
    ],
  );
  return member;
}

/** Opens a self-service signup's account; throws the unique violation when the address is taken. */
export async function insertSignupMember(
  tx: Queryable,
  email: string,
  fullName: string,
  passwordHash: string,
  needs: string | null,
): Promise<{ id: string }> {
  const [member] = await sqlRows<{ id: string }>(
    tx,
    `INSERT INTO members (email, full_name, password_hash, needs) VALUES ($1, $2, $3, $4) RETURNING id`,
    [email, fullName, passwordHash, needs],
  );
  return member;
}

/** Sets the member's status; the returned rows are empty when it already had that status. */
export async function updateMemberStatus(
  db: Queryable,
  memberId: string,
  status: 'active' | 'suspended',
  reason: string,
): Promise<{ id: string }[]> {
  return sqlRows<{ id: string }>(
    db,
    `UPDATE members SET status = $2, status_reason = $3, status_changed_at = now() WHERE id = $1 AND status <> $2 RETURNING id`,
    [memberId, status, reason],
  );
}

/** Marks the member's email verified (keeping the first time); empty when there is no such member. */
export async function markMemberEmailVerified(tx: Queryable, memberId: string): Promise<{ email: string }[]> {
  return sqlRows<{ email: string }>(
    tx,
    `WITH v AS (
         UPDATE members SET email_verified = true, email_verified_at = COALESCE(email_verified_at, now())
          WHERE id = $1 RETURNING email)
       SELECT * FROM v`,
    [memberId],
  );
}

/** The operator's Business status and Agent Auto-Fill authorisation (null leaves one as it is). */
export async function updateMemberRunSettings(
  db: Queryable,
  memberId: string,
  business: boolean | null,
  agentAutoFill: boolean | null,
): Promise<Pick<MemberRow, 'id' | 'business' | 'agent_auto_fill'> | undefined> {
  const [row] = await sqlRows<Pick<MemberRow, 'id' | 'business' | 'agent_auto_fill'>>(
    db,
    `UPDATE members SET business = COALESCE($2, business), agent_auto_fill = COALESCE($3, agent_auto_fill) WHERE id = $1
     RETURNING id, business, agent_auto_fill`,
    [memberId, business, agentAutoFill],
  );
  return row;
}

/** Turns package custody on or off for the member; empty when there is no such member. */
export async function setMemberPackagesEnabled(
  db: Queryable,
  memberId: string,
  enabled: boolean,
): Promise<Pick<MemberRow, 'id' | 'packages_enabled'>[]> {
  return sqlRows<Pick<MemberRow, 'id' | 'packages_enabled'>>(
    db,
    `UPDATE members SET packages_enabled = $2 WHERE id = $1 RETURNING id, packages_enabled`,
    [memberId, enabled],
  );
}
