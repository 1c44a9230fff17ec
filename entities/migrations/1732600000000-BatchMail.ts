import { MigrationInterface, QueryRunner } from 'typeorm';

/** Batch mail: batches (drafts with their price), their recipients and their pieces. */
export class BatchMail1732600000000 implements MigrationInterface {
  name = 'BatchMail1732600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE batches (
        id text PRIMARY KEY CHECK (id ~ '^bat_[a-f0-9]{24}$'),
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid REFERENCES agents(id),
        facility_id uuid REFERENCES facilities(id),
        test_mode boolean NOT NULL,
        job_name text NOT NULL,
        mail_type text NOT NULL CHECK (mail_type IN ('postcard_4x6','postcard_6x9','letter','flyer','pamphlet_light','pamphlet_heavy')),
        mailing_class text NOT NULL CHECK (mailing_class IN ('first_class','marketing_mail')),
        duplex boolean NOT NULL,
        color boolean NOT NULL,
        page_count integer NOT NULL CHECK (page_count BETWEEN 1 AND 200),
        status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft','paid','generating','submitted','in_progress','completed','partially_completed','failed','cancelled')),
        template_key text NOT NULL,
        recipients_key text NOT NULL,
        manifest_key text,
        total_rows integer NOT NULL,
        valid integer NOT NULL CHECK (valid BETWEEN 1 AND 10000),
        skipped integer NOT NULL,
        skipped_rows jsonb NOT NULL,
        per_piece_cents integer NOT NULL,
        color_surcharge_cents integer NOT NULL,
        effective_per_piece_cents integer NOT NULL,
        volume_discount_pct integer NOT NULL,
        subtotal_cents integer NOT NULL,
        discount_cents integer NOT NULL,
        total_cents integer NOT NULL CHECK (total_cents >= 0),
        credits_charged_cents integer NOT NULL DEFAULT 0 CHECK (credits_charged_cents >= 0),
        refunded_cents integer NOT NULL DEFAULT 0 CHECK (refunded_cents >= 0 AND refunded_cents <= credits_charged_cents),
        pieces_created integer NOT NULL DEFAULT 0,
        pieces_mailed integer NOT NULL DEFAULT 0,
        pieces_failed integer NOT NULL DEFAULT 0,
        facility_notes text,
        error_message text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        confirmed_at timestamptz,
        submitted_at timestamptz,
        started_at timestamptz,
        completed_at timestamptz,
        cancelled_at timestamptz
      )`);
    await q.query(`CREATE INDEX batches_member_list ON batches (member_id, test_mode, created_at DESC, id)`);
    await q.query(
      `CREATE INDEX batches_agent_list ON batches (agent_id, test_mode, created_at DESC) WHERE agent_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX batches_facility_queue ON batches (facility_id, status, created_at)`);

    // One row per valid recipient; seq is the piece's batch_sequence (1..valid).
    await q.query(`
      CREATE TABLE batch_recipients (
        batch_id text NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
        seq integer NOT NULL CHECK (seq >= 1),
        source_row integer NOT NULL,
        name text NOT NULL,
        line1 text NOT NULL,
        line2 text,
        city text NOT NULL,
        state text NOT NULL,
        zip text NOT NULL,
        PRIMARY KEY (batch_id, seq)
      )`);

    await q.query(`
      CREATE TABLE batch_pieces (
        batch_id text NOT NULL,
        batch_sequence integer NOT NULL,
        status text NOT NULL DEFAULT 'created' CHECK (status IN ('created','mailed','failed','cancelled')),
        mailed_at timestamptz,
        failure_reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (batch_id, batch_sequence),
        FOREIGN KEY (batch_id, batch_sequence) REFERENCES batch_recipients(batch_id, seq) ON DELETE CASCADE
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS batch_pieces`);
    await q.query(`DROP TABLE IF EXISTS batch_recipients`);
    await q.query(`DROP TABLE IF EXISTS batches`);
  }
}
