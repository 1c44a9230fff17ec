// Merged batches against the real stack: a 200-row batch merged from a template, every row
// rendered by the letter renderer (Chromium) in the worker; a row that leaves a variable
// empty and a row whose value lays out past a postcard's one page are skipped with their
// reasons and never charged; the draft is priced for the rows that rendered and charged that
// once; each piece's PDF holds its own row's values, escaped. An HTML template file works the
// same way, and one with an unescaped tag is refused before anything is stored. The facility
// the batch is assigned to fetches each piece's own PDF through the API (it cannot reach the
// object store); a sequence without a piece, another facility and a non-merged batch are 404.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApp, TestApp } from '../helpers/app';
import { client, fieldPaths } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { priceBatch } from '../../domain/batches/pricing';
import { createFacility } from '../../services/accounts/accounts';
import {
  balance,
  batchForm,
  ensureFacility,
  facilityKeyFor,
  ledger,
  pdf,
  recipientsCsv,
  waitForStatus,
} from './batch-helpers';

const work = mkdtempSync(path.join(tmpdir(), 'batch-merged-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function pdfText(pdf: Buffer): { pages: number; text: string } {
  const file = path.join(work, `p-${Date.now()}-${Math.random().toString(16).slice(2)}.pdf`);
  writeFileSync(file, pdf);
  const info = execFileSync('pdfinfo', [file]).toString();
  return { pages: Number(/Pages:\s+(\d+)/.exec(info)![1]), text: execFileSync('pdftotext', [file, '-']).toString() };
}

const POSTCARD =
  '<!DOCTYPE html><html><head><style>body{font-family:Carlito;font-size:14pt}</style></head><body>' +
  '<h1>Hello {{first_name}}!</h1><p>{{message}}</p><p>Sent to {{recipient_name}}, {{recipient_city}}</p></body></html>';

function mergedCsv(
  rows: number,
  override: (i: number) => Partial<Record<'first_name' | 'message', string>> = () => ({}),
) {
  const quote = (v: string) => `"${v.replace(/"/g, '""')}"`;
  const lines = ['name,address,city,state,zip,first_name,message'];
  for (let i = 1; i <= rows; i++) {
    const v = { first_name: `Ada${i}`, message: `Your code is CODE-${i}.`, ...override(i) };
    lines.push(
      [`Recipient ${i}`, `${i} Main St`, 'Austin', 'TX', '78701', v.first_name, v.message].map(quote).join(','),
    );
  }
  return Buffer.from(lines.join('\n') + '\n');
}

function form(fields: Record<string, string>, csv: Buffer, template?: { data: Buffer; name: string; type: string }) {
  const f = new FormData();
  for (const [k, v] of Object.entries({
    job_name: 'Merged',
    mail_type: 'postcard_4x6',
    mailing_class: 'first_class',
    ...fields,
  }))
    f.append(k, v);
  if (template) f.append('template', new Blob([new Uint8Array(template.data)], { type: template.type }), template.name);
  f.append('recipients', new Blob([new Uint8Array(csv)], { type: 'text/csv' }), 'recipients.csv');
  return f;
}

describe('merged batches', () => {
  let app: TestApp;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    await ensureFacility(app.deps);
  });
  afterAll(async () => {
    await app.close();
  });

  it('renders 200 rows, skips the two that fail without charging them, and charges the rest once', async () => {
    const member = await newMember(app.deps, { creditsCents: 100_000 });
    const created = await api('POST', '/v1/templates', { key: member.key, json: { name: 'Postcard', html: POSTCARD } });
    expect(created.status).toBe(201);
    const templateId = created.body.template.id;
    const csv = mergedCsv(200, (i) =>
      i === 50
        ? { message: 'A message far too long for a postcard. '.repeat(400) }
        : i === 120
          ? { first_name: '' }
          : i === 7
            ? { first_name: '<b>Bold</b> & "Co"' }
            : {},
    );
    const before = await balance(app.deps, member.member_id);
    const res = await api('POST', '/v1/batch-mail', { key: member.key, form: form({ template_id: templateId }, csv) });
    expect(res.status).toBe(201);
    const id = res.body.batch.id;
    expect(res.body.batch.status).toBe('rendering');
    expect(res.body.batch.merge).toMatchObject({ template_id: templateId, template_version: 1, rows_to_render: 199 });
    // The empty first_name is a CSV error at once; nothing to render for it.
    expect(res.body.batch.recipients.skipped_rows).toEqual([
      expect.objectContaining({ row: 121, field: 'first_name', error: 'no value for merge variable first_name' }),
    ]);

    const draft = (await waitForStatus(app.baseUrl, member.key, id, ['draft'], 180_000)).batch;
    expect(draft.merge).toMatchObject({ rows_to_render: 199, rows_rendered: 199 });
    expect(draft.recipients).toMatchObject({ total_rows: 200, valid: 198, skipped: 2 });
    expect(draft.recipients.skipped_rows).toEqual([
      expect.objectContaining({
        row: 51,
        field: 'template',
        error: expect.stringContaining('postcard_4x6 takes 1 page'),
      }),
      expect.objectContaining({ row: 121, field: 'first_name' }),
    ]);
    const price = priceBatch({
      mailType: 'postcard_4x6',
      mailingClass: 'first_class',
      pieces: 198,
      pageCount: 1,
      color: false,
      duplex: false,
    });
    expect(draft.pricing.total_cents).toBe(price.total_cents);
    expect(await balance(app.deps, member.member_id)).toBe(before);

    const confirmed = await api('POST', `/v1/batch-mail/${id}/confirm`, { key: member.key });
    expect(confirmed.status).toBe(200);
    await waitForStatus(app.baseUrl, member.key, id, ['submitted'], 120_000);
    expect(await ledger(app.deps, id)).toEqual([
      expect.objectContaining({ kind: 'debit', amount_cents: -price.total_cents }),
    ]);
    expect(await balance(app.deps, member.member_id)).toBe(before - price.total_cents);

    // Each piece prints from its own PDF, named in the manifest; a row's values are its own, escaped.
    const pieces: { seq: number; source_row: number; document_key: string }[] = await app.deps.db.query(
      `SELECT seq, source_row, document_key FROM batch_recipients WHERE batch_id = $1 ORDER BY seq`,
      [id],
    );
    expect(pieces.map((p) => p.seq)).toEqual(Array.from({ length: 198 }, (_, i) => i + 1));
    for (const p of [pieces[0], pieces[6], pieces[197]]) {
      const i = p.source_row - 1;
      const { pages, text } = pdfText(await app.deps.storage.get(p.document_key));
      expect(pages).toBe(1);
      expect(text).toContain(i === 7 ? 'Hello <b>Bold</b> & "Co"!' : `Hello Ada${i}!`);
      expect(text).toContain(`Sent to Recipient ${i}, Austin`);
      expect(text).not.toContain(`Ada${i + 1}!`);
    }
    const [{ manifest_key }] = await app.deps.db.query(`SELECT manifest_key FROM batches WHERE id = $1`, [id]);
    const manifest = (await app.deps.storage.get(manifest_key)).toString();
    expect(manifest.split('\r\n')[0]).toBe('batch_sequence,name,address,address2,city,state,zip,document_key');
    expect(manifest).toContain(pieces[0].document_key);
  });

  it("lets the assigned facility fetch each merged piece's own PDF; other pieces, facilities and batches are 404", async () => {
    const member = await newMember(app.deps, { creditsCents: 100_000 });
    const html = { data: Buffer.from(POSTCARD), name: 'postcard.html', type: 'text/html' };
    // Row 2 lays out past the postcard's page: skipped at render, so the batch has pieces 1-3 (rows 1, 3, 4).
    const csv = mergedCsv(4, (i) =>
      i === 2 ? { message: 'A message far too long for a postcard. '.repeat(400) } : {},
    );
    const res = await api('POST', '/v1/batch-mail', { key: member.key, form: form({}, csv, html) });
    expect(res.status).toBe(201);
    const id = res.body.batch.id;
    const draft = (await waitForStatus(app.baseUrl, member.key, id, ['draft'], 60_000)).batch;
    expect(draft.recipients).toMatchObject({ total_rows: 4, valid: 3, skipped: 1 });
    expect((await api('POST', `/v1/batch-mail/${id}/confirm`, { key: member.key })).status).toBe(200);
    await waitForStatus(app.baseUrl, member.key, id, ['submitted'], 60_000);
    const [{ facility_id }] = await app.deps.db.query(`SELECT facility_id FROM batches WHERE id = $1`, [id]);
    const facilityKey = await facilityKeyFor(app.deps, facility_id);

    const files = await api('GET', `/v1/facility/batches/${id}`, { key: facilityKey });
    expect(files.status).toBe(200);
    expect(files.body.files).toMatchObject({
      merged: true,
      piece_documents: `/v1/facility/batches/${id}/pieces/{batch_sequence}/document`,
    });
    const manifest = (await (await fetch(files.body.files.recipients_url)).text()).split('\r\n');
    expect(manifest[2]).toMatch(/^2,Recipient 3,3 Main St,/);

    const doc = await api('GET', files.body.files.piece_documents.replace('{batch_sequence}', '2'), {
      key: facilityKey,
    });
    expect(doc.status).toBe(200);
    expect(doc.body).toMatchObject({ batch_id: id, batch_sequence: 2, pages: 1, test_mode: false });
    expect(Date.parse(doc.body.expires_at)).toBeGreaterThan(Date.now() + 55 * 60_000);
    // The same PDF the manifest's document_key names for that row.
    const [{ document_key }] = await app.deps.db.query(
      `SELECT document_key FROM batch_recipients WHERE batch_id = $1 AND seq = 2`,
      [id],
    );
    expect(manifest[2].endsWith(`,${document_key}`)).toBe(true);
    expect(new URL(doc.body.document_url).pathname).toContain(document_key);
    const download = await fetch(doc.body.document_url);
    expect(download.status).toBe(200);
    const { pages, text } = pdfText(Buffer.from(await download.arrayBuffer()));
    expect(pages).toBe(1);
    expect(text).toContain('Hello Ada3!');
    expect(text).toContain('Your code is CODE-3.');
    expect(text).toContain('Sent to Recipient 3, Austin');
    expect(text).not.toMatch(/Ada[124]!/);

    const piece = (suffix: string, key = facilityKey, batch = id) =>
      api('GET', `/v1/facility/batches/${batch}/pieces/${suffix}/document`, { key });
    // No piece 4: the skipped row has no batch_sequence.
    const skipped = await piece('4');
    expect(skipped.status).toBe(404);
    expect(skipped.body.code).toBe('NOT_FOUND');
    expect((await piece('1', facilityKey, `bat_${'0'.repeat(24)}`)).status).toBe(404);
    for (const bad of ['abc', '0', '-1', '1.5']) {
      const refused = await piece(bad);
      expect(refused.status).toBe(400);
      expect(fieldPaths(refused.body)).toEqual(['params.sequence']);
    }
    // Another facility does not see the batch.
    const other = await createFacility(app.deps, 'Another print facility');
    expect((await piece('1', other.key)).status).toBe(404);
    await app.deps.db.query(`UPDATE facilities SET status = 'inactive' WHERE id = $1`, [other.facility_id]);

    // A batch printed from one PDF template has no per-piece documents.
    const plain = await api('POST', '/v1/batch-mail', {
      key: member.key,
      form: batchForm(await pdf(1), recipientsCsv(3)),
    });
    expect(plain.status).toBe(201);
    expect((await api('POST', `/v1/batch-mail/${plain.body.batch.id}/confirm`, { key: member.key })).status).toBe(200);
    await waitForStatus(app.baseUrl, member.key, plain.body.batch.id, ['submitted'], 60_000);
    const plainFiles = await api('GET', `/v1/facility/batches/${plain.body.batch.id}`, { key: facilityKey });
    expect(plainFiles.status).toBe(200);
    expect(plainFiles.body.files).toMatchObject({ merged: false, piece_documents: null });
    const notMerged = await piece('1', facilityKey, plain.body.batch.id);
    expect(notMerged.status).toBe(404);
    expect(notMerged.body.error).toContain('template_url');
  });

  it('takes an HTML template file, and refuses one with an unescaped tag before storing anything', async () => {
    const member = await newMember(app.deps, { creditsCents: 0 });
    const html = { data: Buffer.from(POSTCARD), name: 'postcard.html', type: 'text/html' };
    const res = await api('POST', '/v1/batch-mail', { key: member.key, form: form({}, mergedCsv(3), html) });
    expect(res.status).toBe(201);
    expect(res.body.batch.merge).toMatchObject({ template_id: null, rows_to_render: 3 });
    const draft = (await waitForStatus(app.baseUrl, member.key, res.body.batch.id, ['draft'], 60_000)).batch;
    expect(draft.recipients).toMatchObject({ valid: 3, skipped: 0 });
    // While rendering, confirm is refused (held there by hand: three rows render in a moment).
    await app.deps.db.query(`UPDATE batches SET status = 'rendering' WHERE id = $1`, [draft.id]);
    const early = await api('POST', `/v1/batch-mail/${draft.id}/confirm`, { key: member.key });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('BATCH_MAIL_RENDERING');
    await app.deps.db.query(`UPDATE batches SET status = 'draft' WHERE id = $1`, [draft.id]);

    const raw = { ...html, data: Buffer.from('<p>{{{first_name}}}</p>') };
    const refused = await api('POST', '/v1/batch-mail', { key: member.key, form: form({}, mergedCsv(3), raw) });
    expect(refused.status).toBe(400);
    expect(fieldPaths(refused.body)).toEqual(['template']);
    const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM batches WHERE member_id = $1`, [
      member.member_id,
    ]);
    expect(n).toBe(1);

    // A rendering batch is cancelled at once; it never becomes a draft.
    const again = await api('POST', '/v1/batch-mail', { key: member.key, form: form({}, mergedCsv(40), html) });
    const cancelled = await api('DELETE', `/v1/batch-mail/${again.body.batch.id}`, { key: member.key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
  });
});
