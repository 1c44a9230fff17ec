import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Forwarded inbound context: member-scoped intake email aliases, the mail items received
 * on them with their stored files (raw email and attachments), extraction rows (lineage),
 * reply contacts and postal threads. An item's status after capture is owned by its
 * workflow (`inbound-extraction-<id>`).
 */
export class InboundContext1732700000000 implements MigrationInterface {
  name = 'InboundContext1732700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE inbound_forwarding_aliases (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid REFERENCES agents(id),
        test_mode boolean NOT NULL,
        label text NOT NULL,
        alias_local_part text NOT NULL,
        domain text NOT NULL,
        alias_type text NOT NULL CHECK (alias_type IN ('random','vanity')),
        requested_alias_local_part text,
        source_type text NOT NULL,
        provider text,
        handled_by text NOT NULL,
        capture_method text NOT NULL,
        automation_level text NOT NULL CHECK (automation_level IN ('high','medium','low')),
        approval_mode text NOT NULL CHECK (approval_mode IN ('always_require','require_for_sensitive','allow_rules')),
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active','paused','archived')),
        last_received_at timestamptz,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // An address is never handed out twice, even after its alias is archived.
    await q.query(
      `CREATE UNIQUE INDEX inbound_forwarding_aliases_address ON inbound_forwarding_aliases (lower(alias_local_part), lower(domain))`,
    );
    await q.query(
      `CREATE INDEX inbound_forwarding_aliases_member ON inbound_forwarding_aliases (member_id, created_at DESC)`,
    );

    await q.query(`
      CREATE TABLE postal_threads (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid REFERENCES agents(id),
        test_mode boolean NOT NULL,
        title text NOT NULL,
        category text NOT NULL,
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open','waiting','closed','archived')),
        summary text,
        sender_keys text[] NOT NULL DEFAULT '{}',
        subject_keys text[] NOT NULL DEFAULT '{}',
        reference_keys text[] NOT NULL DEFAULT '{}',
        last_event_at timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX postal_threads_member ON postal_threads (member_id, test_mode, last_event_at DESC)`);

    await q.query(`
      CREATE TABLE inbound_mail_items (
        id uuid PRIMARY KEY,
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid REFERENCES agents(id),
        alias_id uuid NOT NULL REFERENCES inbound_forwarding_aliases(id),
        test_mode boolean NOT NULL,
        status text NOT NULL CHECK (status IN ('captured','stored','extracted','needs_review','failed')),
        capture_method text NOT NULL CHECK (capture_method IN ('smtp','http')),
        envelope_from text,
        envelope_to text NOT NULL,
        message_id text,
        from_name text,
        from_address text,
        subject text NOT NULL DEFAULT '',
        body_text text NOT NULL DEFAULT '',
        headers jsonb NOT NULL DEFAULT '{}'::jsonb,
        category text,
        suggested_action text,
        summary text,
        sender jsonb,
        recipient jsonb,
        deadlines jsonb NOT NULL DEFAULT '[]'::jsonb,
        key_facts jsonb NOT NULL DEFAULT '[]'::jsonb,
        review_reasons jsonb NOT NULL DEFAULT '[]'::jsonb,
        thread_id uuid REFERENCES postal_threads(id),
        failure_reason text,
        received_at timestamptz NOT NULL DEFAULT now(),
        extracted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX inbound_mail_items_member ON inbound_mail_items (member_id, test_mode, received_at DESC)`,
    );
    await q.query(`CREATE INDEX inbound_mail_items_thread ON inbound_mail_items (thread_id, received_at)`);
    // A sender's retry (SMTP after a lost reply, a provider's webhook retry) finds the first copy.
    await q.query(
      `CREATE UNIQUE INDEX inbound_mail_items_message ON inbound_mail_items (alias_id, message_id) WHERE message_id IS NOT NULL`,
    );

    await q.query(`
      CREATE TABLE inbound_mail_files (
        id uuid PRIMARY KEY,
        inbound_mail_item_id uuid NOT NULL REFERENCES inbound_mail_items(id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('raw_email','attachment')),
        position integer NOT NULL,
        filename text NOT NULL,
        content_type text NOT NULL,
        declared_content_type text,
        content_type_mismatch boolean NOT NULL DEFAULT false,
        size_bytes bigint NOT NULL,
        sha256 text,
        storage_key text NOT NULL UNIQUE,
        extraction_status text NOT NULL DEFAULT 'pending' CHECK (extraction_status IN ('pending','extracted','pending_ocr','unsupported','failed')),
        page_count integer,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (inbound_mail_item_id, position)
      )`);

    await q.query(`
      CREATE TABLE inbound_extractions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        inbound_mail_item_id uuid NOT NULL REFERENCES inbound_mail_items(id) ON DELETE CASCADE,
        inbound_mail_file_id uuid REFERENCES inbound_mail_files(id) ON DELETE CASCADE,
        source text NOT NULL,
        field text NOT NULL,
        value text NOT NULL,
        confidence numeric(4,3) NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        position integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX inbound_extractions_item ON inbound_extractions (inbound_mail_item_id, position)`);

    await q.query(`
      CREATE TABLE inbound_reply_contacts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        inbound_mail_item_id uuid NOT NULL UNIQUE REFERENCES inbound_mail_items(id) ON DELETE CASCADE,
        name text,
        line1 text,
        line2 text,
        city text NOT NULL,
        state text NOT NULL,
        postal_code text NOT NULL,
        country text NOT NULL DEFAULT 'US',
        source_type text NOT NULL,
        verification_status text NOT NULL CHECK (verification_status IN ('unverified','parsed','verified_format')),
        confidence numeric(4,3) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'inbound_reply_contacts',
      'inbound_extractions',
      'inbound_mail_files',
      'inbound_mail_items',
      'postal_threads',
      'inbound_forwarding_aliases',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
  }
}
