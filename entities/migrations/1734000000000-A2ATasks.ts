import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The A2A server's task store. One row per task a client's message/send created: a letter
 * sent (its piece names the task in outbound_mail.a2a_task_id, the one link between them,
 * written in the piece's own INSERT, so the piece's first event already finds its task)
 * or a refused one (the rejection kept as the task's answer). The state of a letter's task
 * is never stored: it is read from the piece. `message_id` is the client's messageId, unique per caller key,
 * so a retried message/send finds its task instead of sending a second letter.
 * Push notification configs are receivers of the piece's events in the existing webhook
 * deliveries (target_type a2a_push): token, credentials and signing secret encrypted.
 */
export class A2ATasks1734000000000 implements MigrationInterface {
  name = 'A2ATasks1734000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE a2a_tasks (
        id uuid PRIMARY KEY,
        context_id text NOT NULL,
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid,
        owner_key text NOT NULL,
        test_mode boolean NOT NULL,
        skill text NOT NULL,
        message_id text NOT NULL,
        rejection jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (owner_key, message_id)
      )`);
    await q.query(`CREATE INDEX a2a_tasks_member ON a2a_tasks (member_id, created_at DESC)`);
    await q.query(`ALTER TABLE outbound_mail ADD COLUMN a2a_task_id uuid UNIQUE REFERENCES a2a_tasks(id)`);
    await q.query(`
      CREATE TABLE a2a_push_configs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        config_id text NOT NULL,
        task_id uuid NOT NULL REFERENCES a2a_tasks(id) ON DELETE CASCADE,
        member_id uuid NOT NULL REFERENCES members(id),
        url text NOT NULL,
        token_enc text,
        auth_schemes text[] NOT NULL DEFAULT '{}',
        credentials_enc text,
        secret_enc text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(
      `CREATE UNIQUE INDEX a2a_push_configs_live ON a2a_push_configs (task_id, config_id) WHERE deleted_at IS NULL`,
    );
    await q.query(`ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_target_type_check`);
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_target_type_check
         CHECK (target_type IN ('agent_webhook','endpoint','a2a_push'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM webhook_deliveries WHERE target_type = 'a2a_push'`);
    await q.query(`ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_target_type_check`);
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_target_type_check
         CHECK (target_type IN ('agent_webhook','endpoint'))`,
    );
    await q.query(`DROP TABLE a2a_push_configs`);
    await q.query(`ALTER TABLE outbound_mail DROP COLUMN a2a_task_id`);
    await q.query(`DROP TABLE a2a_tasks`);
  }
}
