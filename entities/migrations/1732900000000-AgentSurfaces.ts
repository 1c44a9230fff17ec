import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Support conversations (tickets) with their messages and attachments, conversations
 * between members/agents and the fulfilling facility, and agent sign-in intents recorded
 * by POST {site}/agent/auth.
 */
export class AgentSurfaces1732900000000 implements MigrationInterface {
  name = 'AgentSurfaces1732900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE support_case_number_seq`);
    await q.query(`
      CREATE TABLE support_conversations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        case_number bigint NOT NULL UNIQUE DEFAULT nextval('support_case_number_seq'),
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid REFERENCES agents(id),
        opened_by text NOT NULL,
        category text NOT NULL CHECK (category IN ('support','billing','feature','account','other')),
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open','waiting_on_member','resolved')),
        environment text NOT NULL CHECK (environment IN ('live','test')),
        message_count integer NOT NULL DEFAULT 0,
        last_message_at timestamptz NOT NULL DEFAULT now(),
        resolved_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX support_conversations_member ON support_conversations (member_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE support_messages (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        conversation_id uuid NOT NULL REFERENCES support_conversations(id),
        sequence integer NOT NULL,
        author_type text NOT NULL CHECK (author_type IN ('member','agent','support')),
        agent_id uuid REFERENCES agents(id),
        category text NOT NULL,
        body text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (conversation_id, sequence)
      )`);
    await q.query(`
      CREATE TABLE support_attachments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        message_id uuid NOT NULL REFERENCES support_messages(id),
        filename text NOT NULL,
        content_type text NOT NULL,
        size_bytes integer NOT NULL,
        sha256 text NOT NULL,
        storage_key text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX support_attachments_message ON support_attachments (message_id)`);

    await q.query(`
      CREATE TABLE facility_conversations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid REFERENCES agents(id),
        facility_id uuid REFERENCES facilities(id),
        subject text,
        environment text NOT NULL CHECK (environment IN ('live','test')),
        message_count integer NOT NULL DEFAULT 0,
        last_message_at timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX facility_conversations_member ON facility_conversations (member_id, last_message_at DESC)`,
    );
    await q.query(
      `CREATE INDEX facility_conversations_facility ON facility_conversations (facility_id, last_message_at DESC)`,
    );
    await q.query(`
      CREATE TABLE facility_messages (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        conversation_id uuid NOT NULL REFERENCES facility_conversations(id),
        sequence integer NOT NULL,
        sender_type text NOT NULL CHECK (sender_type IN ('member','agent','facility')),
        agent_id uuid REFERENCES agents(id),
        facility_id uuid REFERENCES facilities(id),
        body text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (conversation_id, sequence)
      )`);

    await q.query(`
      CREATE TABLE agent_auth_intents (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email text NOT NULL,
        agent_name text,
        purpose text,
        client_ip text,
        status text NOT NULL DEFAULT 'awaiting_human',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX agent_auth_intents_email ON agent_auth_intents (lower(email), created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'agent_auth_intents',
      'facility_messages',
      'facility_conversations',
      'support_attachments',
      'support_messages',
      'support_conversations',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
    await q.query(`DROP SEQUENCE IF EXISTS support_case_number_seq`);
  }
}
