import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What operators must see about workflows: a cancellation request from Temporal that was
 * refused (printing had started), a workflow closed while its record was still open
 * (terminated, cancelled, failed, timed out), and a record whose workflow never started.
 * One row per cause (incident_key), so a reconciler that runs again reports once.
 * Pieces may now be cancelled by an operator (cancellation_reason cancelled_by_operator).
 */
export class WorkflowIncidents1733310000000 implements MigrationInterface {
  name = 'WorkflowIncidents1733310000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE workflow_incidents (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        incident_key text NOT NULL UNIQUE,
        object_type text NOT NULL CHECK (object_type IN ('outbound_mail','batch','mail_run','handling')),
        object_id text NOT NULL,
        workflow_id text NOT NULL,
        run_id text,
        kind text NOT NULL CHECK (kind IN ('cancel_refused','workflow_closed','lost_start')),
        object_status text NOT NULL,
        workflow_status text,
        detail text NOT NULL,
        action text NOT NULL CHECK (action IN ('refused','restarted','started','reported')),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX workflow_incidents_object ON workflow_incidents (object_type, object_id, created_at)`);
    await q.query(`CREATE INDEX workflow_incidents_created ON workflow_incidents (created_at DESC)`);
    await q.query(`ALTER TABLE outbound_mail DROP CONSTRAINT outbound_mail_cancellation_reason_check`);
    await q.query(`ALTER TABLE outbound_mail ADD CONSTRAINT outbound_mail_cancellation_reason_check
      CHECK (cancellation_reason IN ('cancelled_by_caller','rejected_by_owner','approval_timed_out','mail_run_cancelled','cancelled_by_operator'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbound_mail DROP CONSTRAINT outbound_mail_cancellation_reason_check`);
    await q.query(`ALTER TABLE outbound_mail ADD CONSTRAINT outbound_mail_cancellation_reason_check
      CHECK (cancellation_reason IN ('cancelled_by_caller','rejected_by_owner','approval_timed_out','mail_run_cancelled'))`);
    await q.query(`DROP TABLE workflow_incidents`);
  }
}
