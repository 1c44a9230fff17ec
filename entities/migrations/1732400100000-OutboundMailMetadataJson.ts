import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * metadata is echoed unchanged in every response and event: `json` keeps the caller's
 * text (key order, duplicate-free as sent) where `jsonb` would reorder keys.
 */
export class OutboundMailMetadataJson1732400100000 implements MigrationInterface {
  name = 'OutboundMailMetadataJson1732400100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbound_mail ALTER COLUMN metadata TYPE json USING metadata::json`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbound_mail ALTER COLUMN metadata TYPE jsonb USING metadata::jsonb`);
  }
}
