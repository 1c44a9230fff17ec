// The prepaid credits ledger. Append-only; the balance is the sum of entries. A debit
// locks the member row (or is shown that its transaction holds that lock already), checks
// the balance and inserts under a unique entry key, all in the caller's transaction, so
// concurrent debits never overdraw and retries never repeat. Every live debit passes
// through debit(), which is therefore where automatic reload learns of a crossing of the
// owner's threshold (services/billing/auto-reload.ts).
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import { ApiError, codedError } from '../../domain/shared/errors';
import { insufficientCreditsError } from '../../domain/shared/workflow-failures';
import { formatCents } from '../../domain/shared/money';
import { billingUrlOf } from '../../domain/billing/billing-url';
import { noteDebitForAutoReload } from './auto-reload';
import { noteLowBalance } from '../notifications/notices';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';
import type { MemberRow } from '../accounts/rows';

export interface Balance {
  balance_cents: number;
  balance_display: string;
  currency: 'usd';
  billing_url: string;
}

export function billingUrl(deps: Deps): string {
  return billingUrlOf(deps.config.siteUrl);
}

/** The id of a credits_ledger row (a lookup by entry key, or an insert's RETURNING id). */
interface LedgerIdRow {
  id: string;
}

export async function balanceCents(db: Queryable, memberId: string): Promise<number> {
  const [row] = await sqlRows<{ balance: string }>(
    db,
    `SELECT COALESCE(SUM(amount_cents), 0)::bigint AS balance FROM credits_ledger WHERE member_id = $1`,
    [memberId],
  );
  return Number(row.balance);
}

export async function getBalance(deps: Deps, memberId: string): Promise<Balance> {
  const cents = await balanceCents(deps.db, memberId);
  return { balance_cents: cents, balance_display: formatCents(cents), currency: 'usd', billing_url: billingUrl(deps) };
}

export function insufficientCredits(deps: Deps, required: number, balance: number): ApiError {
  return insufficientCreditsError(billingUrl(deps), required, balance);
}

export interface LedgerMovement {
  memberId: string;
  amountCents: number;
  /** Unique per movement, e.g. `debit:mail:<id>`; a second insert with it is a no-op. */
  entryKey: string;
  referenceType?: string;
  referenceId?: string;
  description?: string;
}

/**
 * Proof that a transaction holds the member row's lock (FOR UPDATE), which serialises the
 * member's debits and spend checks. Only lockMemberRow makes one.
 */
export interface MemberLock {
  readonly tx: EntityManager;
  readonly memberId: string;
}
const memberLocks = new WeakSet<MemberLock>();

/** Member columns a caller may read in the statement that takes the lock. */
type MemberColumn = 'id' | 'per_transaction_limit_cents' | 'daily_spend_limit_cents' | 'business' | 'agent_auto_fill';

/** Locks the member row in `tx` until it ends; a later debit() in `tx` may be given the result instead of locking again. */
export async function lockMemberRow(tx: EntityManager, memberId: string): Promise<MemberLock> {
  return (await lockMemberRowReading(tx, memberId, ['id'])).lock;
}

/** lockMemberRow that also reads `columns` of the row in the same statement (`member` is undefined when there is no such member). */
export async function lockMemberRowReading<T extends Partial<Record<MemberColumn, unknown>>>(
  tx: EntityManager,
  memberId: string,
  columns: readonly MemberColumn[],
): Promise<{ lock: MemberLock; member: T | undefined }> {
  const [member] = await sqlRows<T>(tx, `SELECT ${columns.join(', ')} FROM members WHERE id = $1 FOR UPDATE`, [
    memberId,
  ]);
  const lock = Object.freeze({ tx, memberId });
  memberLocks.add(lock);
  return { lock, member };
}

/**
 * Debits inside `tx`. Returns the balance after the debit. Throws 402 when short.
 * If a debit with the same entry key exists already, nothing more is taken.
 * Locks the member row first, unless `opts.memberLock` shows that `tx` holds it already
 * (a lock from another transaction or for another member is a programming error).
 * A debit that takes the balance below the owner's automatic reload threshold records the
 * reload in `tx` and starts it once `tx` commits.
 */
export async function debit(
  deps: Deps,
  tx: EntityManager,
  m: LedgerMovement,
  opts: { memberLock?: MemberLock } = {},
): Promise<{ balanceCents: number; alreadyDebited: boolean }> {
  if (m.amountCents < 0) throw new Error('debit amount must be >= 0');
  const held = opts.memberLock;
  if (!held) await lockMemberRow(tx, m.memberId);
  else if (!memberLocks.has(held) || held.tx !== tx || held.memberId !== m.memberId) {
    throw new Error("debit: memberLock is not this transaction's lock on this member");
  }
  const [existing] = await sqlRows<LedgerIdRow>(tx, `SELECT id FROM credits_ledger WHERE entry_key = $1`, [m.entryKey]);
  const balance = await balanceCents(tx, m.memberId);
  if (existing) return { balanceCents: balance, alreadyDebited: true };
  if (balance < m.amountCents) throw insufficientCredits(deps, m.amountCents, balance);
  if (m.amountCents > 0) {
    await sqlRun(
      tx,
      `INSERT INTO credits_ledger (member_id, amount_cents, kind, entry_key, reference_type, reference_id, description)
       VALUES ($1, $2, 'debit', $3, $4, $5, $6)`,
      [m.memberId, -m.amountCents, m.entryKey, m.referenceType ?? null, m.referenceId ?? null, m.description ?? null],
    );
    // Both under the member lock, so two debits cannot both see a crossing (or both miss it).
    await noteDebitForAutoReload(deps, tx, {
      memberId: m.memberId,
      beforeCents: balance,
      afterCents: balance - m.amountCents,
      debitKey: m.entryKey,
    });
    await noteLowBalance(tx, {
      memberId: m.memberId,
      entryKey: m.entryKey,
      before: balance,
      after: balance - m.amountCents,
    });
  }
  return { balanceCents: balance - m.amountCents, alreadyDebited: false };
}

/** Credits back exactly once per entry key. Returns the amount actually refunded now (0 on repeats). */
export async function refund(tx: Queryable, m: LedgerMovement): Promise<number> {
  if (m.amountCents <= 0) return 0;
  const rows = await sqlRows<LedgerIdRow>(
    tx,
    `INSERT INTO credits_ledger (member_id, amount_cents, kind, entry_key, reference_type, reference_id, description)
     VALUES ($1, $2, 'refund', $3, $4, $5, $6) ON CONFLICT (entry_key) DO NOTHING RETURNING id`,
    [m.memberId, m.amountCents, m.entryKey, m.referenceType ?? null, m.referenceId ?? null, m.description ?? null],
  );
  return rows.length ? m.amountCents : 0;
}

/** Adds purchased or granted credits (operator CLI, billing). True when added now, false when the key existed. */
export async function topUp(db: Queryable, m: LedgerMovement): Promise<boolean> {
  const rows = await sqlRows<LedgerIdRow>(
    db,
    `INSERT INTO credits_ledger (member_id, amount_cents, kind, entry_key, reference_type, reference_id, description)
     VALUES ($1, $2, 'top_up', $3, $4, $5, $6) ON CONFLICT (entry_key) DO NOTHING RETURNING id`,
    [m.memberId, m.amountCents, m.entryKey, m.referenceType ?? null, m.referenceId ?? null, m.description ?? null],
  );
  return rows.length > 0;
}

/**
 * A movement the payment provider decides (a refund or dispute of bought credits, or a
 * won dispute giving them back): one 'adjustment' entry with its reason, once per key. It
 * may take the balance below zero (the money has left already); live spending is then
 * refused with 402 until the balance is positive again. Needs the member row lock, so it
 * is serialised with the member's debits. True when added now.
 */
export async function providerAdjustment(lock: MemberLock, m: Omit<LedgerMovement, 'memberId'>): Promise<boolean> {
  if (!memberLocks.has(lock)) throw new Error('providerAdjustment: not a lock from lockMemberRow');
  if (m.amountCents === 0) return false;
  const rows = await sqlRows<LedgerIdRow>(
    lock.tx,
    `INSERT INTO credits_ledger (member_id, amount_cents, kind, entry_key, reference_type, reference_id, description)
     VALUES ($1, $2, 'adjustment', $3, $4, $5, $6) ON CONFLICT (entry_key) DO NOTHING RETURNING id`,
    [lock.memberId, m.amountCents, m.entryKey, m.referenceType ?? null, m.referenceId ?? null, m.description ?? null],
  );
  return rows.length > 0;
}

/**
 * An operator's correction: one 'adjustment' ledger entry with the reason (entries are never
 * edited). Refuses to take the balance below zero. The same reference applies once; reusing it
 * for a different amount is refused.
 */
export async function adjustCredits(
  deps: Deps,
  m: { memberId: string; amountCents: number; reason: string; reference: string },
) {
  return deps.db.transaction(async (tx) => {
    const [member] = await sqlRows<Pick<MemberRow, 'id'>>(tx, `SELECT id FROM members WHERE id = $1 FOR UPDATE`, [
      m.memberId,
    ]);
    if (!member) return null;
    const entryKey = `adjustment:admin:${m.memberId}:${m.reference}`;
    const [existing] = await sqlRows<{ amount_cents: number; description: string | null }>(
      tx,
      `SELECT amount_cents, description FROM credits_ledger WHERE entry_key = $1`,
      [entryKey],
    );
    const balance = await balanceCents(tx, m.memberId);
    if (existing) {
      if (Number(existing.amount_cents) !== m.amountCents) {
        throw codedError(
          409,
          'ADJUSTMENT_REFERENCE_USED',
          `reference ${m.reference} was already used for an adjustment of ${existing.amount_cents} cents`,
          {
            suggestedAction: 'Use a new --reference for a different adjustment.',
          },
        );
      }
      return { member_id: m.memberId, adjusted_cents: m.amountCents, already_applied: true, balance_cents: balance };
    }
    if (balance + m.amountCents < 0) {
      throw codedError(
        409,
        'ADJUSTMENT_WOULD_GO_NEGATIVE',
        `the balance is ${formatCents(balance)}; adjusting by ${m.amountCents} cents would make it negative`,
        {
          suggestedAction: `Adjust by at most -${balance} cents.`,
          details: { balance_cents: balance },
        },
      );
    }
    await sqlRun(
      tx,
      `INSERT INTO credits_ledger (member_id, amount_cents, kind, entry_key, reference_type, reference_id, description)
       VALUES ($1, $2, 'adjustment', $3, 'operator', $4, $5)`,
      [m.memberId, m.amountCents, entryKey, m.reference, m.reason],
    );
    return {
      member_id: m.memberId,
      adjusted_cents: m.amountCents,
      already_applied: false,
      balance_cents: balance + m.amountCents,
    };
  });
}
