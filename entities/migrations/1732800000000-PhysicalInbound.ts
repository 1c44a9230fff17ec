import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Physical inbound: private receiving mailboxes, facility intake drafts with their
 * sealed-exterior photos, the physical item in custody (seen as a package, a managed
 * mailbox item and an agent-inbox item), agent assignments, scan requests with their
 * bundles, pages and saved OCR, the literal search index, package actions, forwarding
 * requests, tags and notes, handling operations, agent receipts and acknowledgments,
 * and the item activity timeline.
 */
export class PhysicalInbound1732800000000 implements MigrationInterface {
  name = 'PhysicalInbound1732800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE private_mailbox_number_seq START 1001`);
    await q.query(`
      CREATE TABLE private_mailboxes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        mailbox_id text NOT NULL UNIQUE,
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid REFERENCES agents(id),
        facility_id uuid REFERENCES facilities(id),
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active','closed')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE UNIQUE INDEX private_mailboxes_member_active ON private_mailboxes (member_id) WHERE status = 'active'`,
    );

    await q.query(`
      CREATE TABLE inbound_drafts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        facility_id uuid NOT NULL REFERENCES facilities(id),
        kind text NOT NULL CHECK (kind IN ('letter','parcel')),
        carrier text,
        tracking_number text,
        weight_oz numeric(10,2) CHECK (weight_oz IS NULL OR weight_oz > 0),
        sender_name text,
        recipient_name text,
        notes text,
        mailbox_id text,
        member_id uuid REFERENCES members(id),
        agent_id uuid REFERENCES agents(id),
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open','matched','committed')),
        version integer NOT NULL DEFAULT 1,
        item_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX inbound_drafts_facility ON inbound_drafts (facility_id, status, created_at DESC)`);

    await q.query(`
      CREATE TABLE physical_inbound_items (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        reference_code text NOT NULL CHECK (char_length(reference_code) BETWEEN 1 AND 80),
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid REFERENCES agents(id),
        facility_id uuid REFERENCES facilities(id),
        mailbox_id text,
        draft_id uuid UNIQUE REFERENCES inbound_drafts(id),
        kind text NOT NULL CHECK (kind IN ('letter','parcel')),
        environment text NOT NULL CHECK (environment IN ('live','test')),
        source_domain text NOT NULL CHECK (source_domain IN ('internal_team','sandbox','member_sample')),
        scenario text,
        status text NOT NULL DEFAULT 'received' CHECK (status IN ('received','stored','held','forwarding_requested',
          'forwarding_shipped','forwarded','returning','shredded','disposed','returned','expired')),
        version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
        carrier text,
        tracking_number text,
        weight_oz numeric(10,2),
        sender_name text,
        recipient_name text,
        recipient_email text,
        received_at timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX physical_inbound_items_member ON physical_inbound_items (member_id, environment, received_at DESC)`,
    );
    await q.query(
      `CREATE INDEX physical_inbound_items_agent ON physical_inbound_items (agent_id, environment, received_at DESC)`,
    );
    await q.query(`CREATE INDEX physical_inbound_items_facility ON physical_inbound_items (facility_id)`);
    // One member sample per member, materialised on a test key's first read.
    await q.query(
      `CREATE UNIQUE INDEX physical_inbound_items_sample ON physical_inbound_items (member_id) WHERE source_domain = 'member_sample'`,
    );

    await q.query(`
      CREATE TABLE inbound_photos (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        draft_id uuid REFERENCES inbound_drafts(id),
        item_id uuid REFERENCES physical_inbound_items(id) ON DELETE CASCADE,
        photo_type text NOT NULL CHECK (photo_type IN ('sealed_exterior','label')),
        storage_key text NOT NULL,
        content_type text NOT NULL,
        size_bytes integer NOT NULL,
        sha256 text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX inbound_photos_draft ON inbound_photos (draft_id)`);
    await q.query(`CREATE INDEX inbound_photos_item ON inbound_photos (item_id)`);

    await q.query(`
      CREATE TABLE agent_inbox_assignments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        item_id uuid NOT NULL REFERENCES physical_inbound_items(id) ON DELETE CASCADE,
        agent_id uuid NOT NULL REFERENCES agents(id),
        member_id uuid NOT NULL REFERENCES members(id),
        source_domain text NOT NULL CHECK (source_domain IN ('internal_team','sandbox','member_sample')),
        environment text NOT NULL CHECK (environment IN ('live','test')),
        revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
        assigned_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (item_id, agent_id)
      )`);
    await q.query(
      `CREATE INDEX agent_inbox_assignments_agent ON agent_inbox_assignments (agent_id, environment, assigned_at DESC)`,
    );

    await q.query(`
      CREATE TABLE package_actions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        item_id uuid NOT NULL REFERENCES physical_inbound_items(id) ON DELETE CASCADE,
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid REFERENCES agents(id),
        action text NOT NULL CHECK (action IN ('scan','open_and_scan','photograph','record_video','forward','shred',
          'dispose','return_to_sender','hold')),
        priority text NOT NULL DEFAULT 'normal' CHECK (priority IN ('low','normal','high','urgent')),
        parameters jsonb NOT NULL DEFAULT '{}',
        status text NOT NULL DEFAULT 'requested' CHECK (status IN ('requested','clarification_needed','in_progress',
          'completed','failed','cancelled')),
        version integer NOT NULL DEFAULT 1,
        requested_by text NOT NULL CHECK (requested_by IN ('agent','member')),
        agent_notes text,
        agent_data jsonb,
        clarification_question text,
        clarification_response text,
        decision_context jsonb,
        result jsonb,
        package_status_before text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz
      )`);
    await q.query(`CREATE INDEX package_actions_item ON package_actions (item_id, created_at DESC)`);
    await q.query(`CREATE INDEX package_actions_status ON package_actions (status)`);

    await q.query(`
      CREATE TABLE package_forwards (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        item_id uuid NOT NULL REFERENCES physical_inbound_items(id) ON DELETE CASCADE,
        action_id uuid NOT NULL UNIQUE REFERENCES package_actions(id),
        to_name text NOT NULL,
        to_line1 text NOT NULL,
        to_line2 text,
        to_city text NOT NULL,
        to_state text NOT NULL,
        to_zip text NOT NULL,
        to_country text NOT NULL DEFAULT 'US',
        carrier_preference text,
        service_level text NOT NULL DEFAULT 'ground',
        insurance boolean NOT NULL DEFAULT false,
        signature_required boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX package_forwards_item ON package_forwards (item_id, created_at DESC)`);

    await q.query(`
      CREATE TABLE package_tags (
        item_id uuid NOT NULL REFERENCES physical_inbound_items(id) ON DELETE CASCADE,
        tag text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (item_id, tag)
      )`);
    await q.query(`
      CREATE TABLE package_notes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        item_id uuid NOT NULL REFERENCES physical_inbound_items(id) ON DELETE CASCADE,
        note text NOT NULL,
        metadata jsonb,
        author text NOT NULL CHECK (author IN ('agent','member')),
        agent_id uuid REFERENCES agents(id),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX package_notes_item ON package_notes (item_id, created_at DESC)`);

    await q.query(`
      CREATE TABLE handling_operations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        item_id uuid NOT NULL REFERENCES physical_inbound_items(id) ON DELETE CASCADE,
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid REFERENCES agents(id),
        facility_id uuid REFERENCES facilities(id),
        environment text NOT NULL CHECK (environment IN ('live','test')),
        origin text NOT NULL CHECK (origin IN ('agent','member')),
        action_type text NOT NULL CHECK (action_type IN ('forward_original','open_and_scan','discard')),
        status text NOT NULL CHECK (status IN ('awaiting_member_approval','awaiting_facility','accepted','completed','rejected')),
        version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
        mail_class text CHECK (mail_class IN ('priority','first_class')),
        untracked_acknowledged boolean NOT NULL DEFAULT false,
        destination jsonb,
        quote_cents integer NOT NULL CHECK (quote_cents >= 0),
        charged_cents integer NOT NULL DEFAULT 0,
        refunded_cents integer NOT NULL DEFAULT 0,
        destructive_confirmed boolean NOT NULL DEFAULT false,
        item_status_before text,
        scan_request_id uuid,
        tracking_number text,
        attestation text,
        rejection_reason text,
        rejected_by text CHECK (rejected_by IN ('member','facility','system')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        approved_at timestamptz,
        accepted_at timestamptz,
        completed_at timestamptz,
        rejected_at timestamptz
      )`);
    await q.query(`CREATE INDEX handling_operations_item ON handling_operations (item_id, created_at DESC)`);
    await q.query(
      `CREATE INDEX handling_operations_member ON handling_operations (member_id, status, created_at DESC)`,
    );
    await q.query(`CREATE INDEX handling_operations_facility ON handling_operations (facility_id, status)`);
    // One open operation per item: a second proposal must wait for the first's outcome.
    await q.query(`CREATE UNIQUE INDEX handling_operations_one_open ON handling_operations (item_id)
      WHERE status IN ('awaiting_member_approval','awaiting_facility','accepted')`);

    await q.query(`
      CREATE TABLE scan_requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        item_id uuid NOT NULL REFERENCES physical_inbound_items(id) ON DELETE CASCADE,
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid REFERENCES agents(id),
        facility_id uuid REFERENCES facilities(id),
        scan_type text NOT NULL CHECK (scan_type IN ('label','envelope','document','content')),
        origin text NOT NULL CHECK (origin IN ('package_scan','package_action','handling','sandbox')),
        package_action_id uuid REFERENCES package_actions(id),
        handling_id uuid REFERENCES handling_operations(id),
        options jsonb NOT NULL DEFAULT '{}',
        status text NOT NULL DEFAULT 'requested' CHECK (status IN ('requested','fulfilled','rejected')),
        rejection_reason text,
        requested_at timestamptz NOT NULL DEFAULT now(),
        fulfilled_at timestamptz
      )`);
    await q.query(`CREATE INDEX scan_requests_item ON scan_requests (item_id, requested_at DESC)`);
    await q.query(`CREATE INDEX scan_requests_facility ON scan_requests (facility_id, status, requested_at)`);
    await q.query(
      `CREATE UNIQUE INDEX scan_requests_handling ON scan_requests (handling_id) WHERE handling_id IS NOT NULL`,
    );

    await q.query(`
      CREATE TABLE scan_bundles (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        request_id uuid NOT NULL UNIQUE REFERENCES scan_requests(id) ON DELETE CASCADE,
        item_id uuid NOT NULL REFERENCES physical_inbound_items(id) ON DELETE CASCADE,
        ocr_id uuid NOT NULL DEFAULT gen_random_uuid(),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX scan_bundles_item ON scan_bundles (item_id, created_at)`);
    await q.query(`
      CREATE TABLE scan_pages (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        bundle_id uuid NOT NULL REFERENCES scan_bundles(id) ON DELETE CASCADE,
        item_id uuid NOT NULL REFERENCES physical_inbound_items(id) ON DELETE CASCADE,
        page_number integer NOT NULL CHECK (page_number BETWEEN 1 AND 20),
        page_role text NOT NULL CHECK (page_role IN ('envelope','letter')),
        origin text NOT NULL CHECK (origin IN ('physical','sample')),
        storage_key text NOT NULL,
        content_type text NOT NULL,
        size_bytes integer NOT NULL,
        source_sha256 text NOT NULL CHECK (source_sha256 ~ '^[0-9a-f]{64}$'),
        created_at timestamptz NOT NULL DEFAULT now(),
        ocr_status text NOT NULL DEFAULT 'queued' CHECK (ocr_status IN ('queued','processing','ready','needs_review','failed')),
        ocr_text text CHECK (ocr_text IS NULL OR char_length(ocr_text) <= 32000),
        ocr_is_blank boolean,
        ocr_uncertain_spans jsonb NOT NULL DEFAULT '[]',
        ocr_provider text,
        ocr_model text,
        ocr_completed_at timestamptz,
        ocr_attempts integer NOT NULL DEFAULT 0 CHECK (ocr_attempts BETWEEN 0 AND 3),
        ocr_error_code text CHECK (ocr_error_code IN ('provider_unavailable','invalid_output','source_invalid','timeout',
          'access_revoked','worker_failed')),
        ocr_provenance jsonb,
        UNIQUE (bundle_id, page_number)
      )`);
    await q.query(`CREATE INDEX scan_pages_item ON scan_pages (item_id)`);

    // Normalised (NFKC, lower-case, collapsed whitespace) search fields, written by the
    // services from the same domain rule the queries use, matched with strpos (literal).
    await q.query(`
      CREATE TABLE inbound_search_fields (
        item_id uuid NOT NULL REFERENCES physical_inbound_items(id) ON DELETE CASCADE,
        source text NOT NULL,
        text text NOT NULL
      )`);
    await q.query(`CREATE INDEX inbound_search_fields_item ON inbound_search_fields (item_id)`);

    await q.query(`
      CREATE TABLE agent_inbox_receipts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        assignment_id uuid NOT NULL REFERENCES agent_inbox_assignments(id) ON DELETE CASCADE,
        item_id uuid NOT NULL REFERENCES physical_inbound_items(id) ON DELETE CASCADE,
        agent_id uuid NOT NULL REFERENCES agents(id),
        environment text NOT NULL CHECK (environment IN ('live','test')),
        context_version text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX agent_inbox_receipts_agent ON agent_inbox_receipts (agent_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE agent_inbox_acknowledgments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        assignment_id uuid NOT NULL REFERENCES agent_inbox_assignments(id) ON DELETE CASCADE,
        item_id uuid NOT NULL REFERENCES physical_inbound_items(id) ON DELETE CASCADE,
        agent_id uuid NOT NULL REFERENCES agents(id),
        environment text NOT NULL CHECK (environment IN ('live','test')),
        outcome text NOT NULL CHECK (outcome IN ('processed','needs_review','failed')),
        context_version text NOT NULL,
        run_id text NOT NULL,
        note text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX agent_inbox_acknowledgments_agent ON agent_inbox_acknowledgments (agent_id, created_at DESC)`,
    );

    await q.query(`
      CREATE TABLE inbound_item_activity (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        item_id uuid NOT NULL REFERENCES physical_inbound_items(id) ON DELETE CASCADE,
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid,
        environment text NOT NULL CHECK (environment IN ('live','test')),
        kind text NOT NULL,
        detail jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(
      `CREATE INDEX inbound_item_activity_member ON inbound_item_activity (member_id, environment, created_at DESC)`,
    );
    await q.query(`CREATE INDEX inbound_item_activity_item ON inbound_item_activity (item_id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'inbound_item_activity',
      'agent_inbox_acknowledgments',
      'agent_inbox_receipts',
      'inbound_search_fields',
      'scan_pages',
      'scan_bundles',
      'scan_requests',
      'handling_operations',
      'package_notes',
      'package_tags',
      'package_forwards',
      'package_actions',
      'agent_inbox_assignments',
      'inbound_photos',
      'physical_inbound_items',
      'inbound_drafts',
      'private_mailboxes',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
    await q.query(`DROP SEQUENCE IF EXISTS private_mailbox_number_seq`);
  }
}
