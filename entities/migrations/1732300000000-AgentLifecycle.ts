import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deleted agents are archived (their records keep pointing at them) and free their name;
 * agents propose instructions edits that their member reviews.
 */
export class AgentLifecycle1732300000000 implements MigrationInterface {
  name = 'AgentLifecycle1732300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents ADD COLUMN deleted_at timestamptz`);
    await q.query(`DROP INDEX agents_member_name`);
    await q.query(`CREATE UNIQUE INDEX agents_member_name ON agents (member_id, lower(name)) WHERE deleted_at IS NULL`);

    await q.query(`
      CREATE TABLE instructions_proposals (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        agent_id uuid NOT NULL REFERENCES agents(id),
        member_id uuid NOT NULL REFERENCES members(id),
        credential_id uuid REFERENCES agent_credentials(id),
        base_version integer NOT NULL,
        suggested_content text NOT NULL,
        reason text,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','accepted','rejected')),
        resulting_version integer,
        decided_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX instructions_proposals_agent ON instructions_proposals (agent_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE instructions_proposals`);
    await q.query(`DROP INDEX agents_member_name`);
    await q.query(`CREATE UNIQUE INDEX agents_member_name ON agents (member_id, lower(name))`);
    await q.query(`ALTER TABLE agents DROP COLUMN deleted_at`);
  }
}
