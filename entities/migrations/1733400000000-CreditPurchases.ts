import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Buying credits with Stripe: one Stripe Customer per member (made once, reused by every
 * checkout), one row per Checkout Session the billing page started (its status follows
 * Stripe's events; the ledger, not this row, holds the money), and every Stripe event the
 * webhook accepted, keyed by Stripe's event id so a redelivery is recognised.
 */
export class CreditPurchases1733400000000 implements MigrationInterface {
  name = 'CreditPurchases1733400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE stripe_customers (
        member_id uuid PRIMARY KEY REFERENCES members(id) ON DELETE CASCADE,
        customer_id text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE credit_purchases (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id),
        stripe_session_id text NOT NULL UNIQUE,
        customer_id text,
        requested_cents integer NOT NULL CHECK (requested_cents > 0),
        paid_cents integer,
        status text NOT NULL DEFAULT 'pending'
          CHECK (status IN ('pending','paid','failed','refunded','disputed')),
        payment_intent_id text,
        invoice_id text,
        receipt_url text,
        refunded_cents integer NOT NULL DEFAULT 0,
        disputed_cents integer NOT NULL DEFAULT 0,
        failure_reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX credit_purchases_member ON credit_purchases (member_id, created_at DESC)`);
    await q.query(
      `CREATE UNIQUE INDEX credit_purchases_payment_intent ON credit_purchases (payment_intent_id) WHERE payment_intent_id IS NOT NULL`,
    );
    await q.query(`
      CREATE TABLE stripe_events (
        id text PRIMARY KEY,
        type text NOT NULL,
        payload jsonb NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now(),
        processed_at timestamptz,
        outcome text
      )`);
    await q.query(`CREATE INDEX stripe_events_unprocessed ON stripe_events (received_at) WHERE processed_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE stripe_events`);
    await q.query(`DROP TABLE credit_purchases`);
    await q.query(`DROP TABLE stripe_customers`);
  }
}
