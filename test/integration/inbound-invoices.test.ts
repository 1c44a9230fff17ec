// Real-world bill layouts (test/fixtures/invoices, made by scripts/make-invoice-fixtures.ts):
// every document's invoice number, amount due, due date and sender as the manifest states
// them, from the text layer (poppler's pdftotext) and from page scans (Tesseract through
// the service's OCR module); and OCR confidence, status and uncertain spans on a clean
// scan against a deliberately degraded one. bench/inbound-extraction.ts prints the recall table.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  analyse,
  billFieldsOf,
  FIELDS,
  manifest,
  matches,
  scanSource,
  textLayerSource,
} from '../../bench/inbound-extraction';
import { MAX_UNCERTAIN_SPAN_CHARS, NEEDS_REVIEW_CONFIDENCE, ocrPageStatus } from '../../domain/inbound-email/ocr';
import { ocrImage } from '../../services/inbound-email/ocr';
import { loadConfig } from '../../config';

jest.setTimeout(180_000);

const fixtures = manifest();

describe('bill fields from the text layer', () => {
  it.each(fixtures.map((e) => [e.file, e] as const))('%s', async (_file, e) => {
    const got = billFieldsOf(analyse(await textLayerSource(e.file)));
    expect(got).toEqual({
      invoice_number: e.invoice_number,
      amount_due: e.amount_due_cents,
      due_date: e.due_date,
      sender: expect.any(String),
    });
    expect(matches(e, 'sender', got.sender)).toBe(true);
  });
});

describe('bill fields from scans (OCR)', () => {
  const scans = fixtures.flatMap((e) => (e.scans ?? []).map((scan) => [scan, e] as const));
  // What the rules achieve on each scan; the degraded scan's bill number is misread by the engine.
  const missed: Record<string, string[]> = { 'utility-bill-degraded.png': ['invoice_number'] };

  it.each(scans)('%s', async (scan, e) => {
    const got = billFieldsOf(analyse(await scanSource(scan)));
    for (const field of FIELDS) {
      if (matches(e, field, got[field]) === null) continue;
      expect({ field, found: matches(e, field, got[field]) }).toEqual({
        field,
        found: !(missed[scan] ?? []).includes(field),
      });
    }
  });
});

describe('OCR confidence, status and uncertain spans', () => {
  const read = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', 'invoices', 'scans', name));
  const engine = loadConfig();

  it('a clean scan is ready with a high confidence; the degraded copy needs review and names its uncertain spans', async () => {
    const clean = await ocrImage(engine, read('utility-bill.png'), 'png');
    const degraded = await ocrImage(engine, read('utility-bill-degraded.png'), 'png');
    if (!clean.ok || !degraded.ok) throw new Error('OCR failed');
    expect(clean.page.confidence).toBeGreaterThanOrEqual(NEEDS_REVIEW_CONFIDENCE);
    expect(ocrPageStatus(clean.page)).toBe('ready');
    expect(clean.page.uncertainSpans.length).toBeLessThanOrEqual(2);
    expect(degraded.page.confidence).toBeLessThan(NEEDS_REVIEW_CONFIDENCE);
    expect(degraded.page.confidence).toBeLessThan(clean.page.confidence - 0.1);
    expect(ocrPageStatus(degraded.page)).toBe('needs_review');
    expect(degraded.page.uncertainSpans.length).toBeGreaterThan(clean.page.uncertainSpans.length + 5);
    for (const span of degraded.page.uncertainSpans) {
      expect(span).toEqual({ text: expect.any(String), reason: 'low_confidence' });
      expect(span.text.length).toBeGreaterThan(0);
      expect(span.text.length).toBeLessThanOrEqual(MAX_UNCERTAIN_SPAN_CHARS);
    }
    expect(clean.model).toMatch(/^tesseract-\d/);
  });
});
