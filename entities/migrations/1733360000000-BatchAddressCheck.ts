import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An extension of a batch: the summary of the offline address check of its valid
 * recipients at draft time (counts by deliverability and the first doubtful rows), kept
 * as the sender was told it. Batches from before have none (null).
 */
export class BatchAddressCheck1733360000000 implements MigrationInterface {
  name = 'BatchAddressCheck1733360000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE batches ADD COLUMN address_check jsonb NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE batches DROP COLUMN address_check`);
  }
}
