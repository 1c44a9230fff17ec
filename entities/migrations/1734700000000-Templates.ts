import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Merge templates (docs/decisions/0142-templates-versioned-and-escaped.md): a template
 * belongs to a member and one environment (live or sandbox, as every record) and has numbered versions that are never changed or removed, so a
 * piece always names the version it was merged from. Deleting a template hides it
 * (deleted_at); its versions stay for the pieces that used them. Each version keeps the
 * text as sent, the HTML it merges into (a Markdown template is laid out once, when the
 * version is made) and the variables a merge must give.
 */
export class Templates1734700000000 implements MigrationInterface {
  name = 'Templates1734700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE templates (
        id text PRIMARY KEY CHECK (id ~ '^tmpl_[a-f0-9]{24}$'),
        member_id uuid NOT NULL REFERENCES members(id),
        test_mode boolean NOT NULL,
        name text NOT NULL,
        description text,
        current_version integer NOT NULL CHECK (current_version >= 1),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX templates_by_member ON templates (member_id, test_mode, created_at DESC, id DESC) WHERE deleted_at IS NULL`,
    );
    await q.query(`
      CREATE TABLE template_versions (
        template_id text NOT NULL REFERENCES templates(id),
        version integer NOT NULL CHECK (version >= 1),
        format text NOT NULL CHECK (format IN ('html', 'markdown')),
        source text NOT NULL,
        html text NOT NULL,
        variables text[] NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (template_id, version)
      )`);
    await q.query(`
      ALTER TABLE outbound_mail
        ADD COLUMN template_id text REFERENCES templates(id),
        ADD COLUMN template_version integer,
        ADD CONSTRAINT outbound_mail_template_version CHECK ((template_id IS NULL) = (template_version IS NULL))`);
    // Merged batches (docs/decisions/0143-merged-batches-render-per-row.md): a batch may merge a
    // template (a stored one, or an HTML file kept at template_key) with its CSV's columns. It is
    // 'rendering' until every row is rendered; each row's outcome is kept on its recipient row as
    // it is rendered, so a worker that stops half-way continues where it stopped.
    await q.query(`ALTER TABLE batches DROP CONSTRAINT batches_status_check`);
    await q.query(`
      ALTER TABLE batches
        ADD CONSTRAINT batches_status_check CHECK (status IN ('rendering','draft','paid','generating','submitted','in_progress','completed','partially_completed','failed','cancelled')),
        ADD COLUMN merged boolean NOT NULL DEFAULT false,
        ADD COLUMN template_id text REFERENCES templates(id),
        ADD COLUMN template_version integer,
        ADD COLUMN rows_rendered integer NOT NULL DEFAULT 0,
        ADD COLUMN rows_to_render integer NOT NULL DEFAULT 0`);
    await q.query(`
      ALTER TABLE batch_recipients
        ADD COLUMN merge_variables jsonb,
        ADD COLUMN render_status text CHECK (render_status IN ('rendered', 'skipped')),
        ADD COLUMN render_pages integer,
        ADD COLUMN document_key text,
        ADD COLUMN skip_reason text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE batch_recipients
        DROP COLUMN merge_variables, DROP COLUMN render_status, DROP COLUMN render_pages, DROP COLUMN document_key, DROP COLUMN skip_reason`);
    await q.query(`DELETE FROM batches WHERE status = 'rendering'`);
    await q.query(`
      ALTER TABLE batches
        DROP CONSTRAINT batches_status_check,
        DROP COLUMN merged, DROP COLUMN template_id, DROP COLUMN template_version, DROP COLUMN rows_rendered, DROP COLUMN rows_to_render,
        ADD CONSTRAINT batches_status_check CHECK (status IN ('draft','paid','generating','submitted','in_progress','completed','partially_completed','failed','cancelled'))`);
    await q.query(`
      ALTER TABLE outbound_mail
        DROP CONSTRAINT outbound_mail_template_version, DROP COLUMN template_id, DROP COLUMN template_version`);
    await q.query(`DROP TABLE template_versions`);
    await q.query(`DROP TABLE templates`);
  }
}
