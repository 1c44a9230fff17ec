// Money invariants the fault tests check after every injected failure: for each member,
// balance = top-ups - debits + refunds; every object (piece, batch) has at most one debit
// and at most one refund per refund key, never refunds more than it was charged, and is
// charged exactly what its record says; no ledger row points at an object that does not
// exist; every piece or batch of a live member that should be paid is paid.
import type { Deps } from '../../services/shared/deps';

type Db = Pick<Deps['db'], 'query'>;

export async function ledgerProblems(db: Db, memberIds: string[]): Promise<string[]> {
  const problems: string[] = [];

  const balances: Array<{ member_id: string; total: string; top_ups: string; debits: string; refunds: string }> =
    await db.query(
      `SELECT member_id, sum(amount_cents) AS total,
            COALESCE(sum(amount_cents) FILTER (WHERE kind = 'top_up'), 0) AS top_ups,
            COALESCE(-sum(amount_cents) FILTER (WHERE kind = 'debit'), 0) AS debits,
            COALESCE(sum(amount_cents) FILTER (WHERE kind = 'refund'), 0) AS refunds
       FROM credits_ledger WHERE member_id = ANY($1) GROUP BY member_id`,
      [memberIds],
    );
  for (const b of balances) {
    if (Number(b.total) !== Number(b.top_ups) - Number(b.debits) + Number(b.refunds)) {
      problems.push(
        `member ${b.member_id}: balance ${b.total} != top-ups ${b.top_ups} - debits ${b.debits} + refunds ${b.refunds}`,
      );
    }
    if (Number(b.total) < 0) problems.push(`member ${b.member_id}: negative balance ${b.total}`);
  }

  const perObject: Array<{
    reference_type: string;
    reference_id: string;
    debits: number;
    debited: string;
    refunds: number;
    refunded: string;
    refund_keys: number;
  }> = await db.query(
    `SELECT reference_type, reference_id,
            count(*) FILTER (WHERE kind = 'debit')::int AS debits, COALESCE(-sum(amount_cents) FILTER (WHERE kind = 'debit'), 0) AS debited,
            count(*) FILTER (WHERE kind = 'refund')::int AS refunds, COALESCE(sum(amount_cents) FILTER (WHERE kind = 'refund'), 0) AS refunded,
            count(DISTINCT entry_key) FILTER (WHERE kind = 'refund')::int AS refund_keys
       FROM credits_ledger WHERE member_id = ANY($1) AND reference_id IS NOT NULL GROUP BY reference_type, reference_id`,
    [memberIds],
  );
  for (const o of perObject) {
    const what = `${o.reference_type} ${o.reference_id}`;
    if (o.debits > 1) problems.push(`${what}: ${o.debits} debits`);
    if (o.refunds !== o.refund_keys) problems.push(`${what}: a refund key used twice`);
    if (o.reference_type === 'outbound_mail' && o.refunds > 1) problems.push(`${what}: ${o.refunds} refunds`);
    if (Number(o.refunded) > Number(o.debited))
      problems.push(`${what}: refunded ${o.refunded} of ${o.debited} charged`);
  }

  // Pieces: charged what the record says, refunded in full when cancelled or failed before mailing.
  const mail: Array<{
    id: string;
    status: string;
    cost_cents: number;
    test_mode: boolean;
    debited: string | null;
    refunded: string | null;
    carrier_delivery_failed: boolean;
  }> = await db.query(
    `SELECT m.id, m.status, m.cost_cents, m.test_mode, m.carrier_delivery_failed,
            (SELECT -sum(amount_cents) FROM credits_ledger WHERE entry_key = 'debit:mail:' || m.id) AS debited,
            (SELECT sum(amount_cents) FROM credits_ledger WHERE reference_type = 'outbound_mail' AND reference_id = m.id::text AND kind = 'refund') AS refunded
       FROM outbound_mail m WHERE m.member_id = ANY($1)`,
    [memberIds],
  );
  for (const m of mail) {
    const debited = Number(m.debited ?? 0);
    const refunded = Number(m.refunded ?? 0);
    if (m.test_mode) {
      if (debited || refunded) problems.push(`test piece ${m.id} moved money`);
      continue;
    }
    if (m.status === 'pending_approval' && debited) problems.push(`piece ${m.id} awaiting approval is debited`);
    if (['submitted', 'ready', 'mailed', 'delivered'].includes(m.status) && (debited !== m.cost_cents || refunded)) {
      problems.push(`piece ${m.id} (${m.status}, cost ${m.cost_cents}): debited ${debited}, refunded ${refunded}`);
    }
    if (m.status === 'cancelled' && refunded !== debited)
      problems.push(`cancelled piece ${m.id}: debited ${debited}, refunded ${refunded}`);
  }

  // Batches: charged their total once paid, never refunded beyond the charge.
  const batches: Array<{
    id: string;
    status: string;
    test_mode: boolean;
    total_cents: number;
    credits_charged_cents: number;
    refunded_cents: number;
    debited: string | null;
    refunded: string | null;
  }> = await db.query(
    `SELECT b.id, b.status, b.test_mode, b.total_cents, b.credits_charged_cents, b.refunded_cents,
            (SELECT -sum(amount_cents) FROM credits_ledger WHERE entry_key = 'debit:batch:' || b.id) AS debited,
            (SELECT sum(amount_cents) FROM credits_ledger WHERE reference_type = 'batch' AND reference_id = b.id AND kind = 'refund') AS refunded
       FROM batches b WHERE b.member_id = ANY($1)`,
    [memberIds],
  );
  for (const b of batches) {
    const debited = Number(b.debited ?? 0);
    const refunded = Number(b.refunded ?? 0);
    if (b.test_mode) {
      if (debited || refunded) problems.push(`test batch ${b.id} moved money`);
      continue;
    }
    if (b.status === 'draft' && debited) problems.push(`draft batch ${b.id} is debited`);
    if (!['draft', 'cancelled'].includes(b.status) && debited !== b.total_cents)
      problems.push(`batch ${b.id} (${b.status}): debited ${debited} of ${b.total_cents}`);
    if (debited !== b.credits_charged_cents)
      problems.push(`batch ${b.id}: ledger debit ${debited} != credits_charged_cents ${b.credits_charged_cents}`);
    if (refunded !== b.refunded_cents)
      problems.push(`batch ${b.id}: ledger refunds ${refunded} != refunded_cents ${b.refunded_cents}`);
    if (b.status === 'cancelled' && refunded !== debited)
      problems.push(`cancelled batch ${b.id}: debited ${debited}, refunded ${refunded}`);
  }

  // No ledger row without its object.
  const orphans: Array<{ entry_key: string }> = await db.query(
    `SELECT l.entry_key FROM credits_ledger l
      WHERE l.member_id = ANY($1) AND (
        (l.reference_type = 'outbound_mail' AND NOT EXISTS (SELECT 1 FROM outbound_mail m WHERE m.id::text = l.reference_id)) OR
        (l.reference_type = 'batch' AND NOT EXISTS (SELECT 1 FROM batches b WHERE b.id = l.reference_id)))`,
    [memberIds],
  );
  for (const o of orphans) problems.push(`ledger entry ${o.entry_key} has no object`);

  return problems;
}

export async function until<T>(
  what: string,
  fn: () => Promise<T | null | undefined | false>,
  timeoutMs = 60000,
  everyMs = 250,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
