import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Merge templates (docs/decisions/0142-templates-versioned-and-escaped.md): a template
 * belongs to a member and has numbered versions that are never changed or removed, so a
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
        name text NOT NULL,
        description text,
        current_version integer NOT NULL CHECK (current_version >= 1),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX templates_by_member ON templates (member_id, created_at DESC, id DESC) WHERE deleted_at IS NULL`,
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
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE outbound_mail
        DROP CONSTRAINT outbound_mail_template_version, DROP COLUMN template_id, DROP COLUMN template_version`);
    await q.query(`DROP TABLE template_versions`);
    await q.query(`DROP TABLE templates`);
  }
}
