// Recall of the bill fields on the real-world fixtures (test/fixtures/invoices): for
// every document, the text layer (pdftotext, reading order and -layout) and, where the
// manifest lists scans, the OCR path, run through the same analysis as forwarded mail;
// a field counts when it equals the manifest's value (the sender by normalised name).
// Also times OCR of each scan with the service's OCR module (OMP_THREAD_LIMIT=1) against
// plain `tesseract <page> -` with Tesseract's default threading.
//   npx tsx bench/inbound-extraction.ts            (add --no-timing to skip the timings)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { analyseInbound, Analysis, TextSource } from '../domain/inbound-email/analysis';
import { normaliseName } from '../domain/inbound-email/thread';
import { pdfPageTexts } from '../services/inbound-email/document-tools';
import { ocrImage, ocrImageFile } from '../services/inbound-email/ocr';
import { loadConfig } from '../config';
import type { InvoiceExpectation } from '../scripts/make-invoice-fixtures';

const DIR = path.join(__dirname, '..', 'test', 'fixtures', 'invoices');
/** The Tesseract the service would run (TESSERACT_PATH). */
const engine = { tesseractPath: loadConfig().tesseractPath };
export const FIELDS = ['invoice_number', 'amount_due', 'due_date', 'sender'] as const;
type Field = (typeof FIELDS)[number];

export function manifest(): InvoiceExpectation[] {
  return JSON.parse(readFileSync(path.join(DIR, 'manifest.json'), 'utf8'));
}

/** The four fields as the drafting context states them. */
export function billFieldsOf(a: Analysis): Record<Field, string | number | null> {
  return {
    invoice_number: a.keyFacts.find((k) => k.kind === 'invoice_number')?.value ?? null,
    amount_due: a.keyFacts.find((k) => k.kind === 'amount_due')?.amount_cents ?? null,
    due_date: a.keyFacts.find((k) => k.kind === 'due_date')?.value ?? null,
    sender: a.sender.name,
  };
}

export function matches(e: InvoiceExpectation, field: Field, got: string | number | null): boolean | null {
  const want = {
    invoice_number: e.invoice_number,
    amount_due: e.amount_due_cents,
    due_date: e.due_date,
    sender: e.sender,
  }[field];
  if (want === null) return null;
  if (field === 'sender') return typeof got === 'string' && normaliseName(got) === normaliseName(String(want));
  return got === want;
}

export function analyse(doc: TextSource): Analysis {
  return analyseInbound({
    subject: 'Fwd: bill',
    body: '',
    fromName: 'Jordan Example',
    fromAddress: 'jordan@example.test',
    aliasEmail: 'bills@in.postal.localhost',
    hasAttachments: true,
    documents: [doc],
  });
}

export async function textLayerSource(file: string): Promise<TextSource> {
  const pages = await pdfPageTexts(readFileSync(path.join(DIR, file)));
  return {
    source: 'pdf_text',
    fileId: null,
    text: pages.map((p) => p.text).join('\n\n'),
    layout: pages.map((p) => p.layout).join('\n\n'),
    confidence: 1,
  };
}

export async function scanSource(scan: string): Promise<TextSource & { ms: number }> {
  const run = await ocrImage(engine, readFileSync(path.join(DIR, 'scans', scan)), 'png');
  if (!run.ok) throw new Error(`OCR of ${scan} failed: ${run.message}`);
  return {
    source: 'ocr',
    fileId: null,
    text: run.page.text,
    layout: run.page.layout,
    confidence: run.page.confidence,
    ms: run.elapsedMs,
  };
}

async function main() {
  const timing = !process.argv.includes('--no-timing');
  const totals: Record<'text' | 'ocr', Record<Field, [number, number]>> = {
    text: { invoice_number: [0, 0], amount_due: [0, 0], due_date: [0, 0], sender: [0, 0] },
    ocr: { invoice_number: [0, 0], amount_due: [0, 0], due_date: [0, 0], sender: [0, 0] },
  };
  const rows: string[][] = [];
  const score = (path: 'text' | 'ocr', name: string, e: InvoiceExpectation, a: Analysis) => {
    const got = billFieldsOf(a);
    const cells = FIELDS.map((f) => {
      const ok = matches(e, f, got[f]);
      if (ok === null) return '-';
      totals[path][f][1]++;
      if (ok) totals[path][f][0]++;
      return ok ? 'ok' : `MISS (${got[f] ?? 'none'})`;
    });
    rows.push([path, name, ...cells]);
  };
  const timings: string[] = [];
  for (const e of manifest()) {
    score('text', e.file, e, analyse(await textLayerSource(e.file)));
    for (const scan of e.scans ?? []) {
      const src = await scanSource(scan);
      score('ocr', `${scan} (confidence ${src.confidence})`, e, analyse(src));
      if (timing) {
        const file = path.join(DIR, 'scans', scan);
        const t0 = Date.now();
        const env = { ...process.env };
        delete env.OMP_THREAD_LIMIT;
        execFileSync(engine.tesseractPath, [file, '-'], { env, stdio: ['ignore', 'ignore', 'ignore'] });
        const before = Date.now() - t0;
        const after = await ocrImageFile(engine, file);
        timings.push(
          `${scan}: default threading ${before} ms, OCR module (OMP_THREAD_LIMIT=1) ${after.ok ? after.elapsedMs : NaN} ms`,
        );
      }
    }
  }
  console.log(['path', 'fixture', ...FIELDS].join(' | '));
  for (const r of rows) console.log(r.join(' | '));
  for (const p of ['text', 'ocr'] as const) {
    const found = FIELDS.reduce((s, f) => s + totals[p][f][0], 0);
    const expected = FIELDS.reduce((s, f) => s + totals[p][f][1], 0);
    console.log(
      `${p}: ${FIELDS.map((f) => `${f} ${totals[p][f][0]}/${totals[p][f][1]}`).join(', ')}; recall ${found}/${expected} = ${((100 * found) / expected).toFixed(1)}%`,
    );
  }
  for (const t of timings) console.log(t);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
