import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When the workflow that drives (or announces) a physical inbound record was started, so
 * that the reconciler can start any whose start was lost after the record was committed.
 */
export class PhysicalInboundWorkflowStarts1732800100000 implements MigrationInterface {
  name = 'PhysicalInboundWorkflowStarts1732800100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE handling_operations ADD COLUMN workflow_started_at timestamptz`);
    await q.query(`ALTER TABLE physical_inbound_items ADD COLUMN received_workflow_started_at timestamptz`);
    await q.query(`ALTER TABLE scan_bundles ADD COLUMN workflow_started_at timestamptz`);
    await q.query(
      `CREATE INDEX handling_operations_unstarted ON handling_operations (created_at) WHERE workflow_started_at IS NULL`,
    );
    await q.query(
      `CREATE INDEX physical_inbound_items_unstarted ON physical_inbound_items (created_at) WHERE received_workflow_started_at IS NULL`,
    );
    await q.query(`CREATE INDEX scan_bundles_unstarted ON scan_bundles (created_at) WHERE workflow_started_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE scan_bundles DROP COLUMN workflow_started_at`);
    await q.query(`ALTER TABLE physical_inbound_items DROP COLUMN received_workflow_started_at`);
    await q.query(`ALTER TABLE handling_operations DROP COLUMN workflow_started_at`);
  }
}
