import { MigrationInterface, QueryRunner } from 'typeorm';

/** The event log: one row per business event (mail.*, batch.*, inbound.*), written once. */
export class Events1732200100000 implements MigrationInterface {
  name = 'Events1732200100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        event_key text NOT NULL UNIQUE,
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid,
        event_type text NOT NULL,
        environment text NOT NULL CHECK (environment IN ('live','test')),
        object_type text NOT NULL,
        object_id text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX events_member_created ON events (member_id, created_at DESC)`);
    await q.query(`CREATE INDEX events_object ON events (object_type, object_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE events`);
  }
}
