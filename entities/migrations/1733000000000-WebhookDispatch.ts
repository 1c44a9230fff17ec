import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook deliveries are sent by one dispatcher workflow per receiver and environment
 * (`webhook-dispatch-<environment>-<target>`) instead of one workflow per delivery, so
 * a burst of events costs Temporal one workflow task per batch, not per delivery.
 * `next_attempt_at` says when a queued delivery is due (now for a new one, the backoff
 * for a retry); `series_attempts` counts the attempts of the current series;
 * `internal_errors` counts attempts that could not even be recorded (after 3 the
 * delivery fails). `webhook_dispatchers` holds, per dispatcher, when a wake-up signal
 * was last sent, so a burst of events signals a busy dispatcher once, not per event.
 */
export class WebhookDispatch1733000000000 implements MigrationInterface {
  name = 'WebhookDispatch1733000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN next_attempt_at timestamptz NOT NULL DEFAULT now()`);
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN series_attempts integer NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN internal_errors integer NOT NULL DEFAULT 0`);
    await q.query(`
      UPDATE webhook_deliveries d
         SET series_attempts = (SELECT count(*) FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id AND a.series = d.series)
       WHERE d.status IN ('queued','processing')`);
    await q.query(`
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (target, environment, next_attempt_at)
       WHERE kind = 'event' AND status IN ('queued','processing')`);
    await q.query(`
      CREATE TABLE webhook_dispatchers (
        dispatch_key text PRIMARY KEY,
        wake_requested_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS webhook_dispatchers`);
    await q.query(`DROP INDEX IF EXISTS webhook_deliveries_due`);
    for (const c of ['internal_errors', 'series_attempts', 'next_attempt_at']) {
      await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN IF EXISTS ${c}`);
    }
  }
}
