import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The OCR engine's page confidence (mean word confidence, 0-1) of each scan page, beside
 * its status and uncertain spans; null for template OCR and pages not read yet.
 */
export class ScanPageOcrConfidence1733230100000 implements MigrationInterface {
  name = 'ScanPageOcrConfidence1733230100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE scan_pages ADD COLUMN ocr_confidence numeric(4,3) CHECK (ocr_confidence BETWEEN 0 AND 1)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE scan_pages DROP COLUMN ocr_confidence`);
  }
}
