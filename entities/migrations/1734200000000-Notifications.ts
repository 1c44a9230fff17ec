import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Owner notifications by email. Who is told: the owner (members.email) and extra
 * recipients the owner added, each confirmed by their own link, with the kinds each has
 * switched off; the member's low-balance threshold. What is told: one row per (event,
 * recipient, kind), the intent recorded before anything is sent, so a retried publish, a
 * redelivered event or a crashed worker finds the row and never sends twice; digests are
 * rows too, and the rows they carried point at them. A notifier per member is woken
 * through notification_notifiers (one pending wake-up at a time). Links that change
 * something once (sign-up verification, recipient confirmation) are rows used once.
 */
export class Notifications1734200000000 implements MigrationInterface {
  name = 'Notifications1734200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE notification_settings (
        member_id uuid PRIMARY KEY REFERENCES members(id) ON DELETE CASCADE,
        low_balance_threshold_cents integer NOT NULL CHECK (low_balance_threshold_cents >= 0),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE notification_recipients (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id) ON DELETE CASCADE,
        is_owner boolean NOT NULL DEFAULT false,
        -- The owner's address is the member's (members.email); an extra recipient's its own.
        email text,
        disabled_kinds text[] NOT NULL DEFAULT '{}',
        confirmed_at timestamptz,
        removed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (is_owner = (email IS NULL))
      )`);
    await q.query(
      `CREATE UNIQUE INDEX notification_recipients_owner ON notification_recipients (member_id) WHERE is_owner`,
    );
    await q.query(
      `CREATE UNIQUE INDEX notification_recipients_email ON notification_recipients (member_id, lower(email))
        WHERE removed_at IS NULL AND NOT is_owner`,
    );
    await q.query(`
      CREATE TABLE notifications (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id) ON DELETE CASCADE,
        recipient_id uuid NOT NULL REFERENCES notification_recipients(id) ON DELETE CASCADE,
        kind text NOT NULL,
        -- The business event (or the fact) told: e.g. mail:<id>:mail.pending_approval.
        event_key text NOT NULL,
        -- What the email says, kept from the moment it was recorded.
        payload jsonb NOT NULL DEFAULT '{}',
        status text NOT NULL DEFAULT 'pending'
          CHECK (status IN ('pending','sending','sent','digested','skipped','failed')),
        is_digest boolean NOT NULL DEFAULT false,
        digest_id uuid REFERENCES notifications(id),
        -- Set on the first attempt and never changed: a resend after a crash carries the same one.
        message_id text UNIQUE,
        -- The member's notifier has seen the row (it sends it or holds it for a digest).
        queued_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        -- While an attempt may be talking to the relay, no other attempt sends the row.
        lease_until timestamptz,
        last_error text,
        smtp_response text,
        created_at timestamptz NOT NULL DEFAULT now(),
        sent_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (event_key, recipient_id, kind)
      )`);
    await q.query(
      `CREATE INDEX notifications_pending ON notifications (member_id, recipient_id, kind, created_at) WHERE status = 'pending'`,
    );
    await q.query(`CREATE INDEX notifications_digest ON notifications (digest_id) WHERE digest_id IS NOT NULL`);
    await q.query(`CREATE INDEX notifications_member ON notifications (member_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE notification_notifiers (
        member_id uuid PRIMARY KEY REFERENCES members(id) ON DELETE CASCADE,
        wake_requested_at timestamptz
      )`);
    await q.query(`
      CREATE TABLE email_links (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        purpose text NOT NULL CHECK (purpose IN ('verify_email','confirm_recipient')),
        member_id uuid NOT NULL REFERENCES members(id) ON DELETE CASCADE,
        recipient_id uuid REFERENCES notification_recipients(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      )`);
    await q.query(`ALTER TABLE members ADD COLUMN email_verified_at timestamptz`);
    // The approval reminder sweep reads pending pieces by age.
    await q.query(
      `CREATE INDEX outbound_mail_pending_approval ON outbound_mail (created_at) WHERE status = 'pending_approval'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS outbound_mail_pending_approval`);
    await q.query(`ALTER TABLE members DROP COLUMN IF EXISTS email_verified_at`);
    await q.query(`DROP TABLE IF EXISTS email_links`);
    await q.query(`DROP TABLE IF EXISTS notification_notifiers`);
    await q.query(`DROP TABLE IF EXISTS notifications`);
    await q.query(`DROP TABLE IF EXISTS notification_recipients`);
    await q.query(`DROP TABLE IF EXISTS notification_settings`);
  }
}
