import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outbound mail pieces and their fulfillment photos. A piece's status is owned by its
 * workflow (`outbound-mail-<id>`); `workflow_started_at` stays null until that workflow
 * has been started, which is what the reconciler looks for.
 */
export class OutboundMail1732400000000 implements MigrationInterface {
  name = 'OutboundMail1732400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE outbound_mail (
        id uuid PRIMARY KEY,
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid REFERENCES agents(id),
        owner_key text NOT NULL,
        idempotency_key text,
        request_fingerprint text,
        status text NOT NULL CHECK (status IN ('pending_approval','submitted','ready','mailed','delivered','failed','cancelled')),
        test_mode boolean NOT NULL,
        mail_class text NOT NULL,
        recipient_name text,
        recipient_company text,
        recipient_line1 text NOT NULL,
        recipient_line2 text,
        recipient_city text NOT NULL,
        recipient_state text NOT NULL,
        recipient_zip text NOT NULL,
        recipient_country text NOT NULL DEFAULT 'US',
        recipient_fingerprint text NOT NULL,
        return_name text, return_company text, return_line1 text, return_line2 text,
        return_city text, return_state text, return_zip text,
        color boolean NOT NULL DEFAULT false,
        duplex boolean NOT NULL DEFAULT false,
        page_count integer NOT NULL CHECK (page_count >= 1),
        page_count_source text,
        document_key text NOT NULL,
        document_filename text,
        document_type text NOT NULL,
        document_content_type text NOT NULL,
        document_sha256 text NOT NULL,
        document_size_bytes integer NOT NULL,
        simulated_document boolean NOT NULL DEFAULT false,
        price_cents integer NOT NULL CHECK (price_cents >= 0),
        cost_cents integer NOT NULL CHECK (cost_cents >= 0),
        cost_breakdown jsonb NOT NULL,
        origin_zip text NOT NULL,
        facility_id uuid REFERENCES facilities(id),
        approval_source text CHECK (approval_source IN ('request','force_approval')),
        max_cost_cents integer,
        safeguards jsonb NOT NULL DEFAULT '{}',
        allow_duplicate boolean NOT NULL DEFAULT false,
        package_id uuid,
        inbound_capture_id uuid,
        postal_mail_thread_id uuid,
        mail_run_id text,
        agent_notes text,
        metadata jsonb,
        carrier text,
        tracking_number text,
        dispatch_method text,
        error_message text,
        carrier_delivery_failed boolean NOT NULL DEFAULT false,
        failure_stage text CHECK (failure_stage IN ('carrier_delivery')),
        failure_source text CHECK (failure_source IN ('carrierx_tracking')),
        cancellation_reason text CHECK (cancellation_reason IN ('cancelled_by_caller','rejected_by_owner','approval_timed_out')),
        cancel_request_id text,
        approved_at timestamptz,
        submitted_at timestamptz,
        printing_started_at timestamptz,
        ready_at timestamptz,
        mailed_at timestamptz,
        delivered_at timestamptz,
        failed_at timestamptz,
        cancelled_at timestamptz,
        workflow_started_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // A retried submission with the same Idempotency-Key can never create a second piece,
    // even when the first attempt committed but its stored answer was lost.
    await q.query(
      `CREATE UNIQUE INDEX outbound_mail_idempotency ON outbound_mail (owner_key, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    );
    await q.query(`CREATE INDEX outbound_mail_member_created ON outbound_mail (member_id, created_at DESC)`);
    await q.query(`CREATE INDEX outbound_mail_agent_created ON outbound_mail (agent_id, created_at DESC)`);
    await q.query(`CREATE INDEX outbound_mail_owner_created ON outbound_mail (owner_key, created_at)`);
    await q.query(`CREATE INDEX outbound_mail_duplicates ON outbound_mail (member_id, document_sha256, created_at)`);
    await q.query(`CREATE INDEX outbound_mail_facility ON outbound_mail (facility_id, status) WHERE test_mode = false`);
    await q.query(
      `CREATE INDEX outbound_mail_unstarted ON outbound_mail (created_at) WHERE workflow_started_at IS NULL`,
    );

    await q.query(`
      CREATE TABLE outbound_mail_photos (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        outbound_mail_id uuid NOT NULL REFERENCES outbound_mail(id),
        category text NOT NULL CHECK (category IN ('pages','envelope','receipt','delivery')),
        storage_key text NOT NULL UNIQUE,
        content_type text NOT NULL,
        uploaded_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX outbound_mail_photos_mail ON outbound_mail_photos (outbound_mail_id, uploaded_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE outbound_mail_photos`);
    await q.query(`DROP TABLE outbound_mail`);
  }
}
