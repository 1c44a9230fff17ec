import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Scheduled send (an extension beyond the spec): a piece or batch may carry `send_after`,
 * before which the facility does not see it. `released_to_facility_at` is when its
 * workflow let the facility see it (the send_after timer fired, or the sandbox advance
 * skipped the wait); the facility's queues show a scheduled row only once it is set.
 */
export class ScheduledSend1733340000000 implements MigrationInterface {
  name = 'ScheduledSend1733340000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE outbound_mail ADD COLUMN send_after timestamptz, ADD COLUMN released_to_facility_at timestamptz`,
    );
    await q.query(
      `ALTER TABLE batches ADD COLUMN send_after timestamptz, ADD COLUMN released_to_facility_at timestamptz`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE batches DROP COLUMN send_after, DROP COLUMN released_to_facility_at`);
    await q.query(`ALTER TABLE outbound_mail DROP COLUMN send_after, DROP COLUMN released_to_facility_at`);
  }
}
