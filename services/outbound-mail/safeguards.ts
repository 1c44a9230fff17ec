// The lookups behind outbound mail's safeguards: live spend over the last 24 hours, the
// pieces a key created in the last 24 hours, and an earlier copy of the same letter
// (duplicate protection). Each takes a Queryable so it can run under the member lock.
// Also the refusals a submission answers with when a safeguard stops it.
import { ApiError, errors } from '../../domain/shared/errors';
import { DUPLICATE_IGNORED_STATUSES, DUPLICATE_WINDOW_HOURS, Refusal } from '../../domain/workflow-safe/mail-rules';
import type { MailRow } from './rows';
import { sqlRows, type Queryable } from '../shared/sql';

/** Net live spend (debits minus refunds) of the member over the last 24 hours, never negative. */
export async function spentLast24h(db: Queryable, memberId: string): Promise<number> {
  const [row] = await sqlRows<{ spent: string }>(
    db,
    `SELECT COALESCE(-SUM(amount_cents), 0)::bigint AS spent FROM credits_ledger
      WHERE member_id = $1 AND kind IN ('debit','refund') AND created_at > now() - interval '24 hours'`,
    [memberId],
  );
  return Math.max(0, Number(row.spent));
}

/** Pieces (any status, sandbox or live) the key created in the last 24 hours. */
export async function piecesLast24h(db: Queryable, ownerKey: string): Promise<number> {
  const [row] = await sqlRows<{ n: number }>(
    db,
    `SELECT count(*)::int AS n FROM outbound_mail WHERE owner_key = $1 AND created_at > now() - interval '24 hours'`,
    [ownerKey],
  );
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
 * recipient, document bytes as sent (an HTML, Markdown or DOCX letter's are its source's,
 * the PDF it was laid out to differs every time), mail class and environment, created
 * within 24 hours and not cancelled or failed.
 */
export async function findDuplicate(db: Queryable, p: DuplicateProbe): Promise<string | null> {
  const [row] = await sqlRows<Pick<MailRow, 'id'>>(
    db,
    `SELECT id FROM outbound_mail
      WHERE member_id = $1 AND agent_id IS NOT DISTINCT FROM $2 AND recipient_fingerprint = $3
        AND (document_sha256 = $4 OR source_sha256 = $4)
        AND mail_class = $5 AND test_mode = $6 AND status <> ALL($7::text[])
        AND created_at > now() - ($8 || ' hours')::interval
      ORDER BY created_at DESC LIMIT 1`,
    [
      p.memberId,
      p.agentId,
      p.recipientFingerprint,
      p.documentSha256,
      p.mailClass,
      p.testMode,
      [...DUPLICATE_IGNORED_STATUSES],
      String(DUPLICATE_WINDOW_HOURS),
    ],
  );
  return row?.id ?? null;
}

/** Duplicate protection's lookup; an unavailable check refuses (503) rather than risk a double send. */
export async function checkDuplicate(db: Queryable, probe: DuplicateProbe): Promise<string | null> {
  try {
    return await findDuplicate(db, probe);
  } catch (err) {
    throw errors.unavailable(
      'DUPLICATE_PROTECTION_UNAVAILABLE',
      `Duplicate protection is unavailable right now (${(err as Error).message}); nothing was charged.`,
    );
  }
}

export function duplicateRefusal(existingId: string): ApiError {
  return errors.conflict(
    'DUPLICATE_OUTBOUND_MAIL',
    'The same letter was already sent to this recipient in the last 24 hours; nothing was charged.',
    {
      details: { existing_outbound_mail_id: existingId },
      suggestedAction:
        'Check the existing piece. To send the same letter again on purpose, resend with allow_duplicate=true.',
    },
  );
}

/** A spending or daily-pieces safeguard's refusal (422). */
export function safeguardRefusal(r: Refusal): ApiError {
  return errors.unprocessable(r.code, `${r.message} Nothing was charged.`, {
    details: r.details,
    suggestedAction:
      'Lower the cost (fewer pages, black-and-white, another mail_class) or ask your human to change the limit.',
  });
}
