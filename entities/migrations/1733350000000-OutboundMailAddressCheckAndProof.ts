import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two extensions of an outbound piece: the offline check of its recipient address as it
 * stood at submission (kept, so a later ZIP directory does not rewrite what the sender was
 * told), and the object key of its print proof, set once the worker has rendered it.
 * Pieces from before have neither (null).
 */
export class OutboundMailAddressCheckAndProof1733350000000 implements MigrationInterface {
  name = 'OutboundMailAddressCheckAndProof1733350000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbound_mail ADD COLUMN address_check jsonb, ADD COLUMN proof_key text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbound_mail DROP COLUMN proof_key, DROP COLUMN address_check`);
  }
}
