// Pure rules of buying credits: reading the amount an owner typed on the billing page and
// the ledger movements that Stripe's reversals make (what a refund or a dispute moves,
// keyed so that Stripe's redeliveries and out-of-order events move money once).
import { formatCents } from '../shared/money';

/** The presets offered on the billing page, in cents (those outside the configured bounds are left out). */
export const PURCHASE_PRESETS_CENTS = [2_500, 5_000, 10_000, 25_000] as const;

export type AmountReading = { ok: true; cents: number } | { ok: false; message: string };

/** A dollar amount as typed ("50", "50.00", "$1,250.5") within [minCents, maxCents]. */
export function readDollarAmount(text: string | null, minCents: number, maxCents: number): AmountReading {
  const bounds = `between ${formatCents(minCents)} and ${formatCents(maxCents)}`;
  const cleaned = (text ?? '').trim().replace(/^\$/, '').replace(/,/g, '');
  if (!/^\d{1,9}(\.\d{1,2})?$/.test(cleaned)) return { ok: false, message: `Enter an amount in dollars ${bounds}.` };
  const [whole, frac = ''] = cleaned.split('.');
  const cents = Number(whole) * 100 + Number(frac.padEnd(2, '0'));
  if (cents < minCents || cents > maxCents) return { ok: false, message: `The amount must be ${bounds}.` };
  return { ok: true, cents };
}

/**
 * A refund event carries the charge's cumulative amount_refunded. What the ledger takes
 * now is what is above the part already taken (never negative: an older event arriving
 * after a newer one moves nothing), and never more than was paid.
 */
export function refundDelta(amountRefunded: number, alreadyTaken: number, paid: number): number {
  return Math.max(0, Math.min(amountRefunded, paid) - alreadyTaken);
}

/** The ledger entry keys of Stripe's movements: one per session, per reload's PaymentIntent, per refund level, per dispute step. */
export const stripeEntryKeys = {
  session: (sessionId: string) => `stripe:session:${sessionId}`,
  paymentIntent: (paymentIntentId: string) => `stripe:payment_intent:${paymentIntentId}`,
  refund: (chargeId: string, amountRefunded: number) => `stripe:refund:${chargeId}:${amountRefunded}`,
  disputeOpened: (disputeId: string) => `stripe:dispute:${disputeId}:opened`,
  disputeWon: (disputeId: string) => `stripe:dispute:${disputeId}:won`,
};
