import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Operator-controlled facility assignment: one default facility (at most one row has
 * is_default), per-member assignments, a claim mark on batches a facility has begun
 * working (so a batch can no longer be reassigned), and why and when a member was last suspended or reinstated.
 * The oldest active facility becomes the default, which is what assignment did before.
 */
export class FacilityAssignment1733320000000 implements MigrationInterface {
  name = 'FacilityAssignment1733320000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE facilities ADD COLUMN is_default boolean NOT NULL DEFAULT false`);
    await q.query(`CREATE UNIQUE INDEX facilities_one_default ON facilities (is_default) WHERE is_default`);
    await q.query(`
      UPDATE facilities SET is_default = true
       WHERE id = (SELECT id FROM facilities WHERE status = 'active' ORDER BY created_at, id LIMIT 1)`);
    await q.query(`
      CREATE TABLE facility_assignments (
        member_id uuid PRIMARY KEY REFERENCES members(id),
        facility_id uuid NOT NULL REFERENCES facilities(id),
        assigned_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX facility_assignments_facility ON facility_assignments (facility_id)`);
    await q.query(`ALTER TABLE batches ADD COLUMN facility_claimed_at timestamptz`);
    await q.query(`ALTER TABLE members ADD COLUMN status_changed_at timestamptz, ADD COLUMN status_reason text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE members DROP COLUMN status_changed_at, DROP COLUMN status_reason`);
    await q.query(`ALTER TABLE batches DROP COLUMN facility_claimed_at`);
    await q.query(`DROP TABLE facility_assignments`);
    await q.query(`DROP INDEX facilities_one_default`);
    await q.query(`ALTER TABLE facilities DROP COLUMN is_default`);
  }
}
