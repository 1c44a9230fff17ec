// The lookups behind outbound mail's safeguards: live spend over the last 24 hours, the
// pieces a key created in the last 24 hours, and an earlier copy of the same letter
// (duplicate protection). Each takes a Queryable so it can run under the member lock.
import type { EntityManager } from 'typeorm';
import { DUPLICATE_IGNORED_STATUSES, DUPLICATE_WINDOW_HOURS } from '../../domain/workflow-safe/mail-rules';

type Queryable = Pick<EntityManager, 'query'>;

/** Net live spend (debits minus refunds) of the member over the last 24 hours, never negative. */
export async function spentLast24h(db: Queryable, memberId: string): Promise<number> {
  const [row] = await db.query(
    `SELECT COALESCE(-SUM(amount_cents), 0)::bigint AS spent FROM credits_ledger
      WHERE member_id = $1 AND kind IN ('debit','refund') AND created_at > now() - interval '24 hours'`, [memberId]);
  return Math.max(0, Number(row.spent));
}

/** Pieces (any status, sandbox or live) the key created in the last 24 hours. */
export async function piecesLast24h(db: Queryable, ownerKey: string): Promise<number> {
  const [row] = await db.query(
    `SELECT count(*)::int AS n FROM outbound_mail WHERE owner_key = $1 AND created_at > now() - interval '24 hours'`, [ownerKey]);
  return row.n;
}

export interface DuplicateProbe {
  memberId: string;
  agentId: string | null;
  recipientFingerprint: string;
  documentSha256: string;
  mailClass: string;
  testMode: boolean;
}

/**
 * The newest earlier piece that is the same letter: same member, agent, normalised
 * recipient, document bytes, mail class and environment, created within 24 hours and
 * not cancelled or failed.
 */
export async function findDuplicate(db: Queryable, p: DuplicateProbe): Promise<string | null> {
  const [row] = await db.query(
    `SELECT id FROM outbound_mail
      WHERE member_id = $1 AND agent_id IS NOT DISTINCT FROM $2 AND recipient_fingerprint = $3 AND document_sha256 = $4
        AND mail_class = $5 AND test_mode = $6 AND status <> ALL($7::text[])
        AND created_at > now() - ($8 || ' hours')::interval
      ORDER BY created_at DESC LIMIT 1`,
    [p.memberId, p.agentId, p.recipientFingerprint, p.documentSha256, p.mailClass, p.testMode, [...DUPLICATE_IGNORED_STATUSES], String(DUPLICATE_WINDOW_HOURS)]);
  return row?.id ?? null;
}
