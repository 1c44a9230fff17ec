// Pure rules of automatic reload: when a debit starts a reload (a crossing of the owner's
// threshold), what the settings form accepts, and the words the billing page shows when a
// reload's charge failed. docs/decisions/0080-auto-reload-crossing-in-the-debit.md says why
// a crossing is decided inside the debit's transaction.
import { formatCents } from '../shared/money';
import { readDollarAmount } from './purchases';

export interface ReloadTrigger {
  enabled: boolean;
  thresholdCents: number | null;
  hasCard: boolean;
  /** Set when the owner turns reload on: the first debit leaving the balance below the threshold reloads, even if it was below already. */
  armed: boolean;
  /** A reload of this member is not settled yet (its charge not created, or created and not confirmed by Stripe). */
  reloadOpen: boolean;
}

/**
 * Whether a debit that moved the balance from `beforeCents` to `afterCents` starts a
 * reload. One per crossing: the balance must go from at or above the threshold to below
 * it (or reload was just turned on), and no reload may be open, so concurrent debits,
 * a letter refunded and debited again, or a reload that did not lift the balance above
 * the threshold start no second charge. A reload that settled and lifted the balance
 * lets the next crossing reload again.
 */
export function reloadDue(t: ReloadTrigger, beforeCents: number, afterCents: number): boolean {
  if (!t.enabled || !t.hasCard || t.thresholdCents === null || t.reloadOpen) return false;
  if (afterCents >= t.thresholdCents) return false;
  return t.armed || beforeCents >= t.thresholdCents;
}

/** The smallest threshold the form accepts ($1.00): below that a debit could never cross it. */
export const MIN_RELOAD_THRESHOLD_CENTS = 100;

export type ReloadSettingsReading =
  | { ok: true; thresholdCents: number; amountCents: number }
  | { ok: false; fields: Array<{ path: 'threshold' | 'amount'; message: string }> };

/** The threshold and the amount typed on the billing page: the amount within the purchase bounds, the threshold from $1.00 to the largest purchase. */
export function readReloadSettings(
  threshold: string | null,
  amount: string | null,
  bounds: { minCents: number; maxCents: number },
): ReloadSettingsReading {
  const t = readDollarAmount(threshold, MIN_RELOAD_THRESHOLD_CENTS, bounds.maxCents);
  const a = readDollarAmount(amount, bounds.minCents, bounds.maxCents);
  const fields: Array<{ path: 'threshold' | 'amount'; message: string }> = [];
  if (!t.ok) fields.push({ path: 'threshold', message: t.message.replace(/^The amount/, 'The threshold') });
  if (!a.ok) fields.push({ path: 'amount', message: a.message });
  if (!t.ok || !a.ok) return { ok: false, fields };
  return { ok: true, thresholdCents: t.cents, amountCents: a.cents };
}

/** Why reload was turned off, as the billing page says it. */
export function reloadFailureReason(amountCents: number, cause: string): string {
  const said = cause.trim().replace(/\.$/, '') || 'the payment failed';
  return `The automatic reload of ${formatCents(amountCents)} could not be charged: ${said}. Automatic reload was turned off; check the card (or save another) and turn it on again.`;
}

/** Stripe's words for a failed charge: its message, with the decline code when there is one. */
export function chargeFailureCause(e: { message?: string | null; code?: string | null; decline_code?: string | null }) {
  const message = e.message?.trim() || 'the payment failed';
  const code = e.decline_code || e.code;
  return code && !message.includes(code) ? `${message} (${code})` : message;
}
