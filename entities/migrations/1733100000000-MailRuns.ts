import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Business mail runs. A run is named by its client-chosen `mail_run_id` (unique per
 * member) and owned by one agent; `id` is the internal uuid behind the workflow id
 * `mail-run-<id>`. The run's status is owned by that workflow. Child pieces are
 * outbound_mail rows with the run's mail_run_id: a child that waits for funding is
 * `funding_pending`, and `run_funded_at` records when the run's funding debited it.
 */
export class MailRuns1733100000000 implements MigrationInterface {
  name = 'MailRuns1733100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE mail_runs (
        id uuid PRIMARY KEY,
        mail_run_id text NOT NULL,
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid NOT NULL REFERENCES agents(id),
        opened_by_key text NOT NULL,
        status text NOT NULL CHECK (status IN ('open','funding_pending','funded','closed','cancelled')),
        window_seconds integer NOT NULL CHECK (window_seconds >= 1),
        opened_at timestamptz NOT NULL,
        closes_at timestamptz NOT NULL,
        committed_at timestamptz,
        funded_at timestamptz,
        funded_cents integer NOT NULL DEFAULT 0 CHECK (funded_cents >= 0),
        pending_reason text CHECK (pending_reason IN ('business_required','agent_auto_fill_not_authorised','daily_spend_limit','insufficient_credits')),
        cancellation_reason text CHECK (cancellation_reason IN ('cancelled_by_caller','unfunded_at_close')),
        cancelled_at timestamptz,
        closed_at timestamptz,
        workflow_started_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (closes_at = opened_at + make_interval(secs => window_seconds))
      )`);
    await q.query(`CREATE UNIQUE INDEX mail_runs_member_run ON mail_runs (member_id, mail_run_id)`);

    await q.query(`ALTER TABLE outbound_mail DROP CONSTRAINT outbound_mail_status_check`);
    await q.query(`ALTER TABLE outbound_mail ADD CONSTRAINT outbound_mail_status_check
      CHECK (status IN ('pending_approval','funding_pending','submitted','ready','mailed','delivered','failed','cancelled'))`);
    await q.query(`ALTER TABLE outbound_mail DROP CONSTRAINT outbound_mail_cancellation_reason_check`);
    await q.query(`ALTER TABLE outbound_mail ADD CONSTRAINT outbound_mail_cancellation_reason_check
      CHECK (cancellation_reason IN ('cancelled_by_caller','rejected_by_owner','approval_timed_out','mail_run_cancelled'))`);
    await q.query(`ALTER TABLE outbound_mail ADD COLUMN run_funded_at timestamptz`);
    await q.query(
      `CREATE INDEX outbound_mail_mail_run ON outbound_mail (member_id, mail_run_id, created_at) WHERE mail_run_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX outbound_mail_mail_run`);
    await q.query(`ALTER TABLE outbound_mail DROP COLUMN run_funded_at`);
    await q.query(`ALTER TABLE outbound_mail DROP CONSTRAINT outbound_mail_cancellation_reason_check`);
    await q.query(`ALTER TABLE outbound_mail ADD CONSTRAINT outbound_mail_cancellation_reason_check
      CHECK (cancellation_reason IN ('cancelled_by_caller','rejected_by_owner','approval_timed_out'))`);
    await q.query(`ALTER TABLE outbound_mail DROP CONSTRAINT outbound_mail_status_check`);
    await q.query(`ALTER TABLE outbound_mail ADD CONSTRAINT outbound_mail_status_check
      CHECK (status IN ('pending_approval','submitted','ready','mailed','delivered','failed','cancelled'))`);
    await q.query(`DROP TABLE mail_runs`);
  }
}
