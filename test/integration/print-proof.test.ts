// The print proof on the real stack (an extension beyond the spec): a live piece's proof is
// rendered by its submission (a document of up to 10 pages) or by the worker once the piece
// is recorded (a longer one), and appears as proof_url on its record;
// the file opens with pdf-lib, has the address page in front of the document's pages, and
// poppler (pdftotext -bbox-layout) finds the recipient, as sent, inside PROOF_LAYOUT's
// recipient window; the facility gets the very same file; a dry run answers a proof the
// same way before anything is paid; the daily clean-up deletes old dry-run proofs.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PDFDocument } from 'pdf-lib';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startTestApp, TestApp } from '../helpers/app';
import { createFacility } from '../../services/accounts/accounts';
import { formatAddressLines, MailAddress } from '../../domain/outbound-mail/address';
import { PageRect, PROOF_LAYOUT, renderPrintProof } from '../../domain/outbound-mail/print-proof';
import { DRY_RUN_PROOF_CLEANUP_WORKFLOW } from '../../workflows/outbound-mail/contracts';
import {
  DRY_RUN_PROOF_PATH,
  DRY_RUN_PROOF_PREFIX,
  dryRunProofRenders,
  proofInput,
  renderPieceProof,
} from '../../services/outbound-mail/print-proofs';
import {
  dryRunProofLinkKey,
  readDryRunProofLink,
  signDryRunProofLink,
} from '../../domain/outbound-mail/dry-run-proof-links';
import { api, letterForm, letterPdf, newSender, sendLetter, waitFor } from './mail-helpers';

const run = promisify(execFile);
const LAYOUT = PROOF_LAYOUT.letter;

interface TextLine {
  xMin: number;
  yMin: number;
  xMax: number;
  yMax: number;
  text: string;
}

const num = (attrs: string, name: string) => Number(new RegExp(`${name}="([\\d.]+)"`).exec(attrs)![1]);

/** The text lines of each page with their boxes, in points from the page's top-left corner (as the layout measures). */
async function textLines(pdf: Buffer): Promise<TextLine[][]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'proof-it-'));
  try {
    const file = path.join(dir, 'proof.pdf');
    await writeFile(file, pdf);
    const { stdout } = await run('pdftotext', ['-bbox-layout', file, '-']);
    return [...stdout.matchAll(/<page [^>]*>([\s\S]*?)<\/page>/g)].map(([, body]) =>
      [...body.matchAll(/<line ([^>]*)>([\s\S]*?)<\/line>/g)].map(([, attrs, words]) => ({
        xMin: num(attrs, 'xMin'),
        yMin: num(attrs, 'yMin'),
        xMax: num(attrs, 'xMax'),
        yMax: num(attrs, 'yMax'),
        text: [...words.matchAll(/<word [^>]*>([^<]*)<\/word>/g)].map((w) => w[1].replace(/&amp;/g, '&')).join(' '),
      })),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const within = (l: TextLine, r: PageRect) =>
  l.xMin >= r.x && l.yMin >= r.y && l.xMax <= r.x + r.width && l.yMax <= r.y + r.height;
const touches = (l: TextLine, r: PageRect) =>
  l.xMin < r.x + r.width && l.xMax > r.x && l.yMin < r.y + r.height && l.yMax > r.y;

/** The lines that touch `window`, top to bottom; each must lie wholly inside it. */
function linesIn(page: TextLine[], window: PageRect): string[] {
  const touching = page.filter((l) => touches(l, window)).sort((a, b) => a.yMin - b.yMin);
  for (const l of touching) expect({ line: l.text, inside: within(l, window) }).toEqual({ line: l.text, inside: true });
  return touching.map((l) => l.text);
}

async function download(url: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/pdf');
  return Buffer.from(await res.arrayBuffer());
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let listKeys: (prefix: string) => Promise<string[]>;

// Written as a sender might: the proof must show it so, not the address check's USPS form.
const RECIPIENT_FIELDS = {
  recipient_name: 'Jane Doe',
  recipient_company: 'Acme Widgets Inc.',
  recipient_line1: '350 Fifth Avenue',
  recipient_line2: 'Suite 3300',
  recipient_city: 'New York',
  recipient_state: 'NY',
  recipient_zip: '10118',
};
const RECIPIENT: MailAddress = {
  name: 'Jane Doe',
  company: 'Acme Widgets Inc.',
  line1: '350 Fifth Avenue',
  line2: 'Suite 3300',
  city: 'New York',
  state: 'NY',
  zip: '10118',
  country: 'US',
};
// newSender's member profile.
const RETURN_LINES = ['1 Return Way', 'Austin, TX 78701'];

describe('print proof (extension)', () => {
  let app: TestApp;
  let facility: { facility_id: string; key: string };
  beforeAll(async () => {
    app = await startTestApp();
    facility = await createFacility(app.deps, 'Print Proof Facility');
    listKeys = async (prefix) => {
      const page = await app.deps.storage.client.send(
        new ListObjectsV2Command({ Bucket: app.deps.storage.bucket, Prefix: prefix }),
      );
      return (page.Contents ?? []).map((o) => o.Key!);
    };
  });
  afterAll(async () => {
    await app.close();
  });

  it('a live piece answers its proof_url at once: address page, then the document; the facility gets the same file', async () => {
    const s = await newSender(app, { creditsCents: 100_000, facilityId: facility.facility_id });
    const sent = await sendLetter(app, s, letterForm(await letterPdf(2, 'Proof body'), RECIPIENT_FIELDS));
    expect(sent.status).toBe(201);
    // Rendered and stored by the submission (2 pages), before its answer.
    expect(sent.body.proof_url).toMatch(/^http/);
    const id = sent.body.id;

    const record = await waitFor(
      async () => {
        const read = await api(app)('GET', `/v1/mail/${id}`, { key: s.key });
        return read.body.proof_url ? read.body : null;
      },
      'the proof of the piece',
      60_000,
    );
    expect(record.proof_url).toMatch(/^http/);
    const [row] = await app.deps.db.query(`SELECT proof_key, document_key FROM outbound_mail WHERE id = $1`, [id]);
    expect(row.proof_key).toBe(`mail/${id}/proof.pdf`);
    expect(path.dirname(row.proof_key)).toBe(path.dirname(row.document_key));

    const proof = await download(record.proof_url);
    const doc = await PDFDocument.load(proof);
    // The document's 2 pages after the added address page (simplex).
    expect(doc.getPageCount()).toBe(3);
    expect(doc.getPages().map((p) => [p.getWidth(), p.getHeight()])).toEqual([
      [612, 792],
      [612, 792],
      [612, 792],
    ]);
    const pages = await textLines(proof);
    expect(linesIn(pages[0], LAYOUT.recipientWindow)).toEqual(formatAddressLines(RECIPIENT));
    expect(linesIn(pages[0], LAYOUT.returnWindow).slice(-2)).toEqual(RETURN_LINES);
    expect(pages[1].map((l) => l.text)).toContain('Proof body p1');
    expect(pages[2].map((l) => l.text)).toContain('Proof body p2');

    // The facility prints from the same file.
    const document = await api(app)('GET', `/v1/facility/mail/${id}/document`, { key: facility.key });
    expect(document.status).toBe(200);
    expect(document.body.url).toMatch(/^http/);
    expect(sha256(await download(document.body.proof_url))).toBe(sha256(proof));

    // A retried activity leaves the stored proof as it is.
    expect(await renderPieceProof(app.deps, id)).toEqual({ status: 'already_rendered', proofKey: row.proof_key });
  });

  it('a dry run answers proof_url before anything is paid: duplex adds a blank back to the address page', async () => {
    const s = await newSender(app, { creditsCents: 100_000 });
    const dry = await sendLetter(
      app,
      s,
      letterForm(await letterPdf(3, 'Dry body'), { ...RECIPIENT_FIELDS, duplex: true, dry_run: true }),
    );
    expect(dry.status).toBe(200);
    expect(dry.body.proof_url).toMatch(/^http/);
    expect(dry.body.warnings.filter((w: { code: string }) => w.code.startsWith('print_proof'))).toEqual([]);
    expect(new URL(dry.body.proof_url).pathname).toContain(`/api${DRY_RUN_PROOF_PATH}/`);

    const proof = await download(dry.body.proof_url);
    const doc = await PDFDocument.load(proof);
    // Address page, its blank back, then the 3 document pages.
    expect(doc.getPageCount()).toBe(5);
    const pages = await textLines(proof);
    expect(linesIn(pages[0], LAYOUT.recipientWindow)).toEqual(formatAddressLines(RECIPIENT));
    expect(pages[0].map((l) => l.text)).toContain(
      'first_class \u00b7 black and white \u00b7 double-sided \u00b7 5 pages on 3 sheets, this address page included',
    );
    expect(pages[1]).toEqual([]);
    expect(pages[2].map((l) => l.text)).toContain('Dry body p1');
    const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM outbound_mail WHERE member_id = $1`, [
      s.memberId,
    ]);
    expect(n).toBe(0);

    // The same letter priced again names the same stored proof, read without rendering; another recipient gets its own.
    const again = await sendLetter(
      app,
      s,
      letterForm(await letterPdf(3, 'Dry body'), { ...RECIPIENT_FIELDS, duplex: true, dry_run: true }),
    );
    const renders = dryRunProofRenders.count;
    expect(sha256(await download(again.body.proof_url))).toBe(sha256(proof));
    expect(dryRunProofRenders.count).toBe(renders);
    const other = await sendLetter(
      app,
      s,
      letterForm(await letterPdf(3, 'Dry body'), {
        ...RECIPIENT_FIELDS,
        recipient_name: 'John Roe',
        duplex: true,
        dry_run: true,
      }),
    );
    expect(new URL(other.body.proof_url).pathname).not.toBe(new URL(dry.body.proof_url).pathname);
    expect(linesIn((await textLines(await download(other.body.proof_url)))[0], LAYOUT.recipientWindow)[0]).toBe(
      'John Roe',
    );

    // The daily clean-up (its workflow, as the schedule starts it) deletes dry-run proofs past
    // the retention; with retention 0 that is this one.
    const deleted = await app.deps.temporal.workflow.execute(DRY_RUN_PROOF_CLEANUP_WORKFLOW, {
      taskQueue: app.deps.config.taskQueue,
      workflowId: `dry-run-proof-cleanup-test-${s.memberId}`,
      args: [{ retentionHours: 0 }],
    });
    expect(deleted).toBeGreaterThanOrEqual(1);
    const gone = await fetch(dry.body.proof_url);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ code: 'PROOF_NO_LONGER_AVAILABLE', reason: 'url_expired' });
  });

  it("a dry run renders nothing: the proof_url's first GET renders the very proof an eager render gives, and two first GETs render once", async () => {
    const s = await newSender(app, { creditsCents: 100_000 });
    const pdf = await letterPdf(2, 'Lazy body');
    const renders = dryRunProofRenders.count;
    const dry = await sendLetter(app, s, letterForm(pdf, { ...RECIPIENT_FIELDS, dry_run: true }));
    expect(dry.status).toBe(200);
    expect(dryRunProofRenders.count).toBe(renders);
    // Nothing rendered or stored for the proof yet: only the document, by its hash.
    const day = new Date().toISOString().slice(0, 10);
    const documentKey = `${DRY_RUN_PROOF_PREFIX}${day}/documents/${sha256(pdf)}`;
    expect(await listKeys(documentKey)).toEqual([documentKey]);

    const [first, second] = await Promise.all([download(dry.body.proof_url), download(dry.body.proof_url)]);
    expect(dryRunProofRenders.count).toBe(renders + 1);
    expect(sha256(second)).toBe(sha256(first));
    // What the dry run rendered before it went lazy: the same input, dated the start of the day.
    const eager = await renderPrintProof(
      proofInput(
        {
          ...RECIPIENT_FIELDS,
          recipient_country: 'US',
          return_name: 'Test Member',
          return_line1: '1 Return Way',
          return_city: 'Austin',
          return_state: 'TX',
          return_zip: '78701',
          mail_class: 'first_class',
          color: false,
          duplex: false,
        },
        { bytes: pdf, type: 'pdf', pageCount: 2 },
        new Date(`${day}T00:00:00Z`),
      ),
    );
    const doc = await PDFDocument.load(first);
    expect(doc.getPageCount()).toBe(3);
    expect(doc.getPages().map((p) => p.getSize())).toEqual(
      (await PDFDocument.load(eager.pdf)).getPages().map((p) => p.getSize()),
    );
    expect((await textLines(first)).map((page) => page.map((l) => l.text))).toEqual(
      (await textLines(Buffer.from(eager.pdf))).map((page) => page.map((l) => l.text)),
    );
    expect(first.length).toBe(eager.pdf.length);
    // A later GET reads the stored proof.
    expect(sha256(await download(dry.body.proof_url))).toBe(sha256(first));
    expect(dryRunProofRenders.count).toBe(renders + 1);
  });

  it('a proof_url is sealed: one changed or sealed elsewhere is 404 url_invalid; one past its hour is 410 url_expired', async () => {
    const s = await newSender(app, { creditsCents: 100_000 });
    const dry = await sendLetter(app, s, letterForm(await letterPdf(1), { ...RECIPIENT_FIELDS, dry_run: true }));
    const url = new URL(dry.body.proof_url);
    const token = url.pathname.split('/').pop()!;
    // Sealed: the recipient's address does not show in the URL.
    expect(Buffer.from(token, 'base64url').toString('latin1')).not.toContain(RECIPIENT_FIELDS.recipient_line1);
    const key = dryRunProofLinkKey(app.deps.config.appEncryptionKey);
    const reading = readDryRunProofLink(key, token, Math.floor(Date.now() / 1000));
    if (!reading.ok) throw new Error('the dry run answered a link it cannot read');
    const claim = reading.claim;

    // One byte of the sealed claim changed.
    const bytes = Buffer.from(token, 'base64url');
    bytes[20] ^= 1;
    const forged = await fetch(url.href.replace(token, bytes.toString('base64url')));
    expect(forged.status).toBe(404);
    expect(await forged.json()).toMatchObject({ code: 'PROOF_URL_INVALID', reason: 'url_invalid', retryable: false });
    // Another recipient's claim sealed under another deployment's key.
    const otherKey = signDryRunProofLink(dryRunProofLinkKey(Buffer.alloc(32, 7).toString('base64')), {
      ...claim,
      recipient: { ...claim.recipient, name: 'Mallory' },
    });
    expect((await fetch(url.href.replace(token, otherKey))).status).toBe(404);

    const expired = signDryRunProofLink(key, {
      ...claim,
      exp: Math.floor(Date.now() / 1000) - 1,
    });
    const late = await fetch(url.href.replace(token, expired));
    expect(late.status).toBe(410);
    expect(await late.json()).toMatchObject({ code: 'PROOF_URL_EXPIRED', reason: 'url_expired' });
    // The genuine link still works.
    expect((await download(url.href)).subarray(0, 5).toString()).toBe('%PDF-');
  });

  it("a dry run's warnings say what its proof will change without rendering it: an A4 page, an oversize page", async () => {
    const s = await newSender(app, { creditsCents: 100_000 });
    const doc = await PDFDocument.create();
    doc.addPage([595.28, 841.89]).drawText('A4 page', { x: 72, y: 700 });
    doc.addPage([792, 1224]).drawText('Tabloid page', { x: 72, y: 1000 });
    const pdf = Buffer.from(await doc.save());
    const renders = dryRunProofRenders.count;
    const dry = await sendLetter(app, s, letterForm(pdf, { ...RECIPIENT_FIELDS, dry_run: true }));
    expect(dry.status).toBe(200);
    const proofWarnings = dry.body.warnings.filter((w: { code: string }) => w.code === 'print_proof');
    expect(proofWarnings).toEqual([
      {
        code: 'print_proof',
        message: 'Print proof: page 1 is 8.27 x 11.69 in, not US Letter; it is scaled to 94% to fit',
      },
      { code: 'print_proof', message: 'Print proof: page 2 is 11 x 17 in, not US Letter; it is scaled to 65% to fit' },
    ]);
    expect(dryRunProofRenders.count).toBe(renders);
    // The same as the render says once the proof is opened.
    const proof = await download(dry.body.proof_url);
    const rendered = await renderPrintProof(
      proofInput(
        {
          ...RECIPIENT_FIELDS,
          recipient_country: 'US',
          return_name: 'Test Member',
          return_line1: '1 Return Way',
          return_city: 'Austin',
          return_state: 'TX',
          return_zip: '78701',
          mail_class: 'first_class',
          color: false,
          duplex: false,
        },
        { bytes: pdf, type: 'pdf', pageCount: 2 },
        new Date(),
      ),
    );
    expect(proofWarnings.map((w: { message: string }) => w.message)).toEqual(
      rendered.warnings.map((w) => `Print proof: ${w}`),
    );
    expect((await PDFDocument.load(proof)).getPages().map((p) => p.getSize())).toEqual([
      { width: 612, height: 792 },
      { width: 612, height: 792 },
      { width: 612, height: 792 },
    ]);
  });

  it('a text letter gets its proof from the worker (the submission renders short PDFs only)', async () => {
    const s = await newSender(app, { creditsCents: 100_000, facilityId: facility.facility_id });
    const sent = await sendLetter(
      app,
      s,
      letterForm(Buffer.from('Dear reader,\nA plain text letter.\n'), RECIPIENT_FIELDS, 'letter.txt'),
    );
    expect(sent.status).toBe(201);
    expect(sent.body.proof_url).toBeNull();
    const url = await waitFor(
      async () => (await api(app)('GET', `/v1/mail/${sent.body.id}`, { key: s.key })).body.proof_url as string | null,
      "the worker's proof",
      60_000,
    );
    expect((await textLines(await download(url)))[1].map((l) => l.text)).toContain('A plain text letter.');
  });

  it('a document of more than 10 pages gets its proof from the worker, after the answer', async () => {
    const s = await newSender(app, { creditsCents: 100_000, facilityId: facility.facility_id });
    const sent = await sendLetter(app, s, letterForm(await letterPdf(11, 'Long letter'), RECIPIENT_FIELDS));
    expect(sent.status).toBe(201);
    expect(sent.body.proof_url).toBeNull();
    const url = await waitFor(
      async () => (await api(app)('GET', `/v1/mail/${sent.body.id}`, { key: s.key })).body.proof_url as string | null,
      "the worker's proof",
      60_000,
    );
    const proof = await download(url);
    expect((await PDFDocument.load(proof)).getPageCount()).toBe(12);
    expect((await textLines(proof))[11].map((l) => l.text)).toContain('Long letter p11');
  });

  it('a sandbox piece gets its proof too; a piece from before proofs, or whose document cannot be laid out, reads proof_url null', async () => {
    const s = await newSender(app, { environment: 'test' });
    const created = await api(app)('POST', '/v1/test/mail', {
      key: s.key,
      headers: s.headers,
      json: { ...RECIPIENT_FIELDS, page_count: 2 },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const url = created.body.proof_url as string;
    expect(url).toMatch(/^http/);
    expect((await PDFDocument.load(await download(url))).getPageCount()).toBe(3);

    await app.deps.db.query(`UPDATE outbound_mail SET proof_key = NULL WHERE id = $1`, [id]);
    expect((await api(app)('GET', `/v1/mail/${id}`, { key: s.key })).body.proof_url).toBeNull();

    // A document the renderer cannot lay out is reported once, not retried, and leaves no proof.
    const [row] = await app.deps.db.query(`SELECT document_key FROM outbound_mail WHERE id = $1`, [id]);
    await app.deps.storage.put(row.document_key, Buffer.from('%PDF-1.7\nnot really a PDF'), 'application/pdf');
    expect(await renderPieceProof(app.deps, id)).toMatchObject({
      status: 'not_renderable',
      reason: expect.any(String),
    });
    expect((await api(app)('GET', `/v1/mail/${id}`, { key: s.key })).body.proof_url).toBeNull();
  });
});
