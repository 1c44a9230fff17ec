import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Automatic reload of credits with a saved card. The owner's settings and saved card (one
 * row per member); each card saved through a Checkout Session in setup mode; and each
 * reload as a credit purchase of kind `auto_reload` (no Checkout Session: an off-session
 * PaymentIntent), so refunds and disputes of its charge are applied like any purchase's.
 * At most one reload per member is pending (the unique index): a crossing of the threshold
 * cannot start a second charge while one is unsettled.
 */
export class AutoReload1734100000000 implements MigrationInterface {
  name = 'AutoReload1734100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE credit_purchases ALTER COLUMN stripe_session_id DROP NOT NULL`);
    await q.query(`
      ALTER TABLE credit_purchases
        ADD COLUMN kind text NOT NULL DEFAULT 'checkout' CHECK (kind IN ('checkout','auto_reload')),
        ADD COLUMN payment_method_id text,
        ADD COLUMN threshold_cents integer,
        ADD COLUMN crossed_by text,
        ADD CONSTRAINT credit_purchases_session_of_checkout CHECK ((kind = 'checkout') = (stripe_session_id IS NOT NULL))`);
    await q.query(`ALTER TABLE credit_purchases DROP CONSTRAINT credit_purchases_status_check`);
    await q.query(`
      ALTER TABLE credit_purchases ADD CONSTRAINT credit_purchases_status_check
        CHECK (status IN ('pending','paid','failed','refunded','disputed','cancelled'))`);
    await q.query(
      `CREATE UNIQUE INDEX credit_purchases_one_open_reload ON credit_purchases (member_id) WHERE kind = 'auto_reload' AND status = 'pending'`,
    );
    await q.query(
      `CREATE INDEX credit_purchases_pending_reloads ON credit_purchases (created_at) WHERE kind = 'auto_reload' AND status = 'pending'`,
    );
    await q.query(`
      CREATE TABLE auto_reload_settings (
        member_id uuid PRIMARY KEY REFERENCES members(id) ON DELETE CASCADE,
        enabled boolean NOT NULL DEFAULT false,
        threshold_cents integer CHECK (threshold_cents > 0),
        amount_cents integer CHECK (amount_cents > 0),
        armed boolean NOT NULL DEFAULT false,
        payment_method_id text,
        card_brand text,
        card_last4 text,
        card_saved_at timestamptz,
        disabled_reason text,
        disabled_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (NOT enabled OR (threshold_cents IS NOT NULL AND amount_cents IS NOT NULL AND payment_method_id IS NOT NULL))
      )`);
    await q.query(`
      CREATE TABLE stripe_card_setups (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id),
        stripe_session_id text NOT NULL UNIQUE,
        customer_id text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','saved')),
        payment_method_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        saved_at timestamptz
      )`);
    await q.query(`CREATE INDEX stripe_card_setups_member ON stripe_card_setups (member_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE stripe_card_setups`);
    await q.query(`DROP TABLE auto_reload_settings`);
    await q.query(`DELETE FROM credit_purchases WHERE kind = 'auto_reload'`);
    await q.query(`DROP INDEX credit_purchases_pending_reloads`);
    await q.query(`DROP INDEX credit_purchases_one_open_reload`);
    await q.query(`ALTER TABLE credit_purchases DROP CONSTRAINT credit_purchases_status_check`);
    await q.query(`UPDATE credit_purchases SET status = 'failed' WHERE status = 'cancelled'`);
    await q.query(`
      ALTER TABLE credit_purchases ADD CONSTRAINT credit_purchases_status_check
        CHECK (status IN ('pending','paid','failed','refunded','disputed'))`);
    await q.query(`
      ALTER TABLE credit_purchases
        DROP CONSTRAINT credit_purchases_session_of_checkout,
        DROP COLUMN crossed_by, DROP COLUMN threshold_cents, DROP COLUMN payment_method_id, DROP COLUMN kind`);
    await q.query(`ALTER TABLE credit_purchases ALTER COLUMN stripe_session_id SET NOT NULL`);
  }
}
