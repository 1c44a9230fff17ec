// What buying credits and automatic reload share: the Stripe client of this deployment
// (STRIPE_API_BASE points it at stripe-mock locally), the member's one Stripe Customer,
// and the credit purchase row (a Checkout Session, or an automatic reload's PaymentIntent).
import Stripe from 'stripe';
import type { MemberRow } from '../accounts/rows';
import type { Deps } from '../shared/deps';
import type { Config } from '../../config';
import { sqlRows, sqlRun } from '../shared/sql';

const clients = new WeakMap<Config['stripe'], Stripe>();

/** The Stripe client of this configuration (STRIPE_API_BASE points it at stripe-mock locally). */
export function stripeClient(deps: Pick<Deps, 'config'>): Stripe {
  const settings = deps.config.stripe;
  let client = clients.get(settings);
  if (!client) {
    const base = settings.apiBase ? new URL(settings.apiBase) : null;
    client = new Stripe(settings.secretKey, {
      maxNetworkRetries: 2,
      timeout: 10_000,
      ...(base
        ? {
            host: base.hostname,
            port: Number(base.port || (base.protocol === 'https:' ? 443 : 80)),
            protocol: base.protocol.replace(':', '') as 'http' | 'https',
          }
        : {}),
    });
    clients.set(settings, client);
  }
  return client;
}

/** Stripe (or the network to it) failed: the page says so, and nothing was recorded. */
export class StripeUnavailable extends Error {}

export interface PurchaseRow {
  id: string;
  member_id: string;
  /** checkout: bought on the billing page through a Checkout Session; auto_reload: charged off-session to the saved card. */
  kind: 'checkout' | 'auto_reload';
  /** The Checkout Session (null for an automatic reload). */
  stripe_session_id: string | null;
  customer_id: string | null;
  requested_cents: number;
  paid_cents: number | null;
  /** cancelled: an automatic reload not charged because reload was turned off before its charge. */
  status: 'pending' | 'paid' | 'failed' | 'refunded' | 'disputed' | 'cancelled';
  payment_intent_id: string | null;
  receipt_url: string | null;
  refunded_cents: number;
  disputed_cents: number;
  failure_reason: string | null;
  /** An automatic reload's saved card and the threshold its debit crossed. */
  payment_method_id: string | null;
  threshold_cents: number | null;
  created_at: Date;
}

/** The customer id a stripe_customers row holds for its member (the column these reads select). */
interface StripeCustomerRow {
  customer_id: string;
}

/** The member's Stripe Customer: made once (Stripe's idempotency key covers a concurrent first checkout) and reused. */
export async function customerFor(deps: Deps, memberId: string): Promise<string> {
  const [known] = await sqlRows<StripeCustomerRow>(
    deps.db,
    `SELECT customer_id FROM stripe_customers WHERE member_id = $1`,
    [memberId],
  );
  if (known) return known.customer_id;
  const [member] = await sqlRows<Pick<MemberRow, 'email' | 'full_name'>>(
    deps.db,
    `SELECT email, full_name FROM members WHERE id = $1`,
    [memberId],
  );
  const customer = await stripeClient(deps).customers.create(
    { email: member?.email ?? undefined, name: member?.full_name ?? undefined, metadata: { member_id: memberId } },
    { idempotencyKey: `postal-customer:${memberId}` },
  );
  await sqlRun(
    deps.db,
    `INSERT INTO stripe_customers (member_id, customer_id) VALUES ($1, $2) ON CONFLICT (member_id) DO NOTHING`,
    [memberId, customer.id],
  );
  const [row] = await sqlRows<StripeCustomerRow>(
    deps.db,
    `SELECT customer_id FROM stripe_customers WHERE member_id = $1`,
    [memberId],
  );
  return row.customer_id;
}
