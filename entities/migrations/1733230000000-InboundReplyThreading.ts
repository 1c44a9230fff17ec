import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reply threading: a forwarded email whose In-Reply-To or References names the
 * Message-ID of the member's earlier mail joins that mail's thread. Every inbound email's
 * Message-ID is already stored (inbound_mail_items.message_id, unique per alias); this
 * index lets the thread matcher find them across all of the member's aliases.
 */
export class InboundReplyThreading1733230000000 implements MigrationInterface {
  name = 'InboundReplyThreading1733230000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX inbound_mail_items_member_message ON inbound_mail_items (member_id, message_id) WHERE message_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX inbound_mail_items_member_message`);
  }
}
