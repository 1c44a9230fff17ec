// Merged batches against the real stack: a 200-row batch merged from a template, every row
// rendered by the letter renderer (Chromium) in the worker; a row that leaves a variable
// empty and a row whose value lays out past a postcard's one page are skipped with their
// reasons and never charged; the draft is priced for the rows that rendered and charged that
// once; each piece's PDF holds its own row's values, escaped. An HTML template file works the
// same way, and one with an unescaped tag is refused before anything is stored.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApp, TestApp } from '../helpers/app';
import { client, fieldPaths } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { priceBatch } from '../../domain/batches/pricing';
import { balance, ensureFacility, ledger, waitForStatus } from './batch-helpers';

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
