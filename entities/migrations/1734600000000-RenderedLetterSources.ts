import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Letters sent as HTML, Markdown or DOCX are laid out into a PDF at submission, and that
 * PDF is the piece's document from then on (document_* columns: what prints, what the
 * proof, the owner's page images and the facility see). What the sender sent is kept
 * beside it as the piece's source: its type, object key, file name, SHA-256 and size,
 * and the pages it laid out to (which differ from page_count when a DOCX's explicit
 * page_count decided the price). Duplicate protection compares what was sent, so it
 * looks at source_sha256 for these pieces (a fresh PDF of the same letter has other bytes).
 */
export class RenderedLetterSources1734600000000 implements MigrationInterface {
  name = 'RenderedLetterSources1734600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE outbound_mail
        ADD COLUMN source_type text CHECK (source_type IN ('html', 'markdown', 'docx')),
        ADD COLUMN source_key text,
        ADD COLUMN source_filename text,
        ADD COLUMN source_sha256 text,
        ADD COLUMN source_size_bytes integer,
        ADD COLUMN source_page_count integer CHECK (source_page_count >= 1),
        ADD CONSTRAINT outbound_mail_source_complete CHECK (
          (source_type IS NULL AND source_key IS NULL AND source_sha256 IS NULL AND source_size_bytes IS NULL AND source_page_count IS NULL)
          OR (source_type IS NOT NULL AND source_key IS NOT NULL AND source_sha256 IS NOT NULL AND source_size_bytes IS NOT NULL AND source_page_count IS NOT NULL)
        )`);
    await q.query(
      `CREATE INDEX outbound_mail_source_duplicates ON outbound_mail (member_id, source_sha256, created_at) WHERE source_sha256 IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX outbound_mail_source_duplicates`);
    await q.query(`
      ALTER TABLE outbound_mail
        DROP CONSTRAINT outbound_mail_source_complete,
        DROP COLUMN source_type, DROP COLUMN source_key, DROP COLUMN source_filename,
        DROP COLUMN source_sha256, DROP COLUMN source_size_bytes, DROP COLUMN source_page_count`);
  }
}
