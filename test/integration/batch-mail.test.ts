// Batch mail through the real API, worker, Postgres and object store: estimate, draft
// validation, the 10,000-piece sandbox flow, reads, agent isolation and draft expiry.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgentWithKey } from '../helpers/agents';
import { authenticate } from '../../services/accounts/auth';
import { createBatchDraft } from '../../services/batches/drafts';
import { batchForm, ledger, pdf, recipientsCsv, testKeyFor, waitFor, waitForStatus } from './batch-helpers';

describe('batch mail (sandbox and reads)', () => {
  let app: TestApp;
  let api: ReturnType<typeof client>;
  let member: { member_id: string; key: string };
  let testKey: string;
  let postcard: Buffer;

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    member = await newMember(app.deps, { creditsCents: 0 });
    testKey = await testKeyFor(app.deps, member.member_id);
    postcard = await pdf(1);
  });
  afterAll(async () => {
    await app.close();
  });

  const batchCount = async () =>
    Number((await app.deps.db.query(`SELECT count(*) FROM batches WHERE member_id = $1`, [member.member_id]))[0].count);

  describe('estimate', () => {
    it('prices with the discount and returns credits_required_cents 0 for test keys', async () => {
      const body = { mail_type: 'letter', mailing_class: 'first_class', quantity: 1000, page_count: 2, color: true };
      const live = await api('POST', '/v1/batch-mail/estimate', { key: member.key, json: body });
      expect(live.status).toBe(200);
      expect(live.body.estimate).toMatchObject({
        per_piece_cents: 54,
        color_surcharge_cents: 15,
        effective_per_piece_cents: 69,
        volume_discount_pct: 10,
        subtotal_cents: 69000,
        discount_cents: 6900,
        total_cents: 62100,
        credits_required_cents: 62100,
        sandbox: false,
      });
      const test = await api('POST', '/v1/batch-mail/estimate', { key: testKey, json: body });
      expect(test.body.estimate).toMatchObject({ total_cents: 62100, credits_required_cents: 0, sandbox: true });
      expect(test.body.test_mode).toBe(true);
    });

    it('refuses pages that do not fit the mail type, with duplex doubling postcards', async () => {
      const base = { mail_type: 'postcard_6x9', mailing_class: 'first_class', quantity: 10 };
      const two = await api('POST', '/v1/batch-mail/estimate', { key: member.key, json: { ...base, page_count: 2 } });
      expect(two.status).toBe(400);
      expect(two.body).toMatchObject({ code: 'BATCH_TEMPLATE_PAGES_INVALID', retryable: false });
      const duplex = await api('POST', '/v1/batch-mail/estimate', {
        key: member.key,
        json: { ...base, page_count: 2, duplex: true },
      });
      expect(duplex.status).toBe(200);
    });

    it('needs 200 pieces for marketing_mail (199 refused, 200 priced)', async () => {
      const base = { mail_type: 'flyer', mailing_class: 'marketing_mail' };
      const low = await api('POST', '/v1/batch-mail/estimate', { key: member.key, json: { ...base, quantity: 199 } });
      expect(low.status).toBe(400);
      expect(low.body.code).toBe('BATCH_MARKETING_MAIL_MINIMUM');
      const ok = await api('POST', '/v1/batch-mail/estimate', { key: member.key, json: { ...base, quantity: 200 } });
      expect(ok.body.estimate.total_cents).toBe(11000);
    });

    it('refuses unknown fields with fields[] dot-paths', async () => {
      const res = await api('POST', '/v1/batch-mail/estimate', {
        key: member.key,
        json: { mail_type: 'flyer', mailing_class: 'first_class', quantity: 0, extra: 1 },
      });
      expect(res.status).toBe(400);
      expect(res.body.fields.map((f: { path: string }) => f.path).sort()).toEqual(expect.arrayContaining(['quantity']));
    });
  });

  describe('draft creation', () => {
    it('refuses a template whose pages do not fit before storing anything', async () => {
      const before = await batchCount();
      const res = await api('POST', '/v1/batch-mail', {
        key: testKey,
        form: batchForm(await pdf(3), recipientsCsv(3), { mail_type: 'postcard_4x6' }),
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('BATCH_TEMPLATE_PAGES_INVALID');
      expect(await batchCount()).toBe(before);
    });

    it('refuses a template that is not a PDF, and missing files, naming the fields', async () => {
      const notPdf = await api('POST', '/v1/batch-mail', {
        key: testKey,
        form: batchForm(Buffer.from('hello'), recipientsCsv(1)),
      });
      expect(notPdf.status).toBe(400);
      expect(notPdf.body.fields).toEqual([{ path: 'template', message: expect.stringMatching(/PDF/) }]);
      const none = await api('POST', '/v1/batch-mail', { key: testKey, form: batchForm(null, null) });
      expect(none.body.fields.map((f: { path: string }) => f.path)).toEqual(['template', 'recipients']);
    });

    it('refuses marketing_mail with 199 valid recipients even when the file has more rows', async () => {
      const csv = recipientsCsv(199, ['Recipient 1,1 Main St,,Austin,TX,10001', 'Bad Zip,2 Main St,,Austin,TX,1234']);
      const res = await api('POST', '/v1/batch-mail', {
        key: testKey,
        form: batchForm(postcard, csv, { mailing_class: 'marketing_mail' }),
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'BATCH_MARKETING_MAIL_MINIMUM', details: { pieces: 199, minimum: 200 } });
    });

    it('stores a draft with its exact price and skipped rows, and honours column_map on a Windows-1252 export', async () => {
      const csv = readFileSync(path.join(__dirname, '..', 'fixtures', 'csv', 'blank-and-ragged.csv'));
      const res = await api('POST', '/v1/batch-mail', {
        key: testKey,
        form: batchForm(await pdf(2), csv, { job_name: 'Ragged', mail_type: 'letter', duplex: 'true', color: 'true' }),
      });
      expect(res.status).toBe(201);
      const b = res.body.batch;
      expect(b).toMatchObject({
        status: 'draft',
        test_mode: true,
        mail_type: 'letter',
        duplex: true,
        color: true,
        page_count: 2,
        recipients: { total_rows: 7, valid: 2, skipped: 5 },
        pieces: { total: 2, created: 0, mailed: 0, failed: 0 },
        pricing: {
          per_piece_cents: 39,
          effective_per_piece_cents: 54,
          total_cents: 108,
          credits_charged: false,
          refunded_cents: 0,
        },
      });
      expect(b.id).toMatch(/^bat_[a-f0-9]{24}$/);
      expect(b.recipients.skipped_rows[0]).toEqual({
        row: 4,
        field: 'row',
        value: expect.any(String),
        error: expect.stringMatching(/ragged/),
      });
      expect(res.body.next_step).toMatchObject({
        action: 'confirm',
        url: `${app.baseUrl}/v1/batch-mail/${b.id}/confirm`,
      });
      const stored = await app.deps.storage.get(`batches/${b.id}/recipients.csv`);
      expect(stored.equals(csv)).toBe(true);

      const mapped = await api('POST', '/v1/batch-mail', {
        key: testKey,
        form: batchForm(postcard, readFileSync(path.join(__dirname, '..', 'fixtures', 'csv', 'custom-headers.csv')), {
          column_map: JSON.stringify({
            name: 'Kunde',
            line1: 'Strasse',
            line2: 'Zusatz',
            city: 'Ort',
            state: 'Bundesstaat',
            zip: 'PLZ',
          }),
        }),
      });
      expect(mapped.status).toBe(201);
      const detail = await api('GET', `/v1/batch-mail/${mapped.body.batch.id}`, { key: testKey });
      expect(detail.body.batch.recipients.valid).toBe(2);
    });
  });

  it('runs a 10,000-piece sandbox batch from draft to completed without touching credits', async () => {
    const created = await api('POST', '/v1/batch-mail', {
      key: testKey,
      form: batchForm(postcard, recipientsCsv(10000), { job_name: 'Ten thousand' }),
    });
    expect(created.status).toBe(201);
    const id = created.body.batch.id;
    expect(created.body.batch.pricing).toMatchObject({ volume_discount_pct: 15, total_cents: 238000 });

    const early = await api('POST', `/v1/batch-mail/${id}/advance`, { key: testKey });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('BATCH_ADVANCE_INVALID');

    const confirmed = await api('POST', `/v1/batch-mail/${id}/confirm`, { key: testKey });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({
      credits_charged_cents: 0,
      sandbox: true,
      already_confirmed: false,
      test_mode: true,
    });
    expect(['paid', 'generating', 'submitted']).toContain(confirmed.body.batch.status);

    const submitted = await waitForStatus(app.baseUrl, testKey, id, ['submitted']);
    expect(submitted.batch.pieces).toEqual({ total: 10000, created: 10000, mailed: 0, failed: 0 });
    expect(submitted.pieces).toHaveLength(50);
    expect(submitted.pieces[0]).toEqual({
      batch_sequence: 1,
      recipient_name: 'Recipient 1',
      recipient_city: 'Austin',
      recipient_state: 'TX',
      recipient_zip: '10001',
      status: 'created',
      mailed_at: null,
    });

    const first = await api('POST', `/v1/batch-mail/${id}/advance`, { key: testKey });
    expect(first.body).toMatchObject({ previous_status: 'submitted', batch: { status: 'in_progress' }, sandbox: true });
    const second = await api('POST', `/v1/batch-mail/${id}/advance`, { key: testKey });
    expect(second.body).toMatchObject({
      previous_status: 'in_progress',
      batch: { status: 'completed', pieces: { mailed: 10000, failed: 0 } },
    });
    const again = await api('POST', `/v1/batch-mail/${id}/advance`, { key: testKey });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('BATCH_ADVANCE_INVALID');

    const [{ mailed }] = await app.deps.db.query(
      `SELECT count(*)::int AS mailed FROM batch_pieces WHERE batch_id = $1 AND status = 'mailed'`,
      [id],
    );
    expect(mailed).toBe(10000);
    expect(await ledger(app.deps, id)).toEqual([]);
    const events = await app.deps.db.query(
      `SELECT event_type, environment, payload FROM events WHERE object_id = $1 ORDER BY created_at`,
      [id],
    );
    expect(events.map((e: { event_type: string }) => e.event_type)).toEqual(['batch.submitted', 'batch.completed']);
    expect(events[1]).toMatchObject({
      environment: 'test',
      payload: {
        event_type: 'batch.completed',
        batch_job_id: id,
        job_name: 'Ten thousand',
        total_pieces: 10000,
        pieces_mailed: 10000,
        pieces_failed: 0,
        total_cents: 238000,
        status: 'completed',
      },
    });
    expect(events[1].payload.completed_at).toEqual(expect.any(String));

    const cancel = await api('DELETE', `/v1/batch-mail/${id}`, { key: testKey });
    expect(cancel.status).toBe(409);
    expect(cancel.body.code).toBe('BATCH_MAIL_NOT_CANCELLABLE');
  });

  it('lists newest first by environment and status, with pagination', async () => {
    const other = await newMember(app.deps);
    const key = await testKeyFor(app.deps, other.member_id);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api('POST', '/v1/batch-mail', {
        key,
        form: batchForm(postcard, recipientsCsv(2), { job_name: `Job ${i}` }),
      });
      ids.push(res.body.batch.id);
    }
    const page = await api('GET', '/v1/batch-mail?limit=2', { key });
    expect(page.body.batches.map((b: { id: string }) => b.id)).toEqual([ids[2], ids[1]]);
    expect(page.body.pagination).toEqual({ total: 3, limit: 2, offset: 0, has_more: true });
    const rest = await api('GET', '/v1/batch-mail?limit=2&offset=2', { key });
    expect(rest.body.batches.map((b: { id: string }) => b.id)).toEqual([ids[0]]);
    expect(rest.body.pagination.has_more).toBe(false);

    const live = await api('GET', '/v1/batch-mail', { key: other.key });
    expect(live.body.pagination.total).toBe(0);
    const liveRead = await api('GET', `/v1/batch-mail/${ids[0]}`, { key: other.key });
    expect(liveRead.status).toBe(404);

    await api('DELETE', `/v1/batch-mail/${ids[1]}`, { key });
    const cancelled = await api('GET', '/v1/batch-mail?status=cancelled', { key });
    expect(cancelled.body.batches.map((b: { id: string }) => b.id)).toEqual([ids[1]]);
    const bad = await api('GET', '/v1/batch-mail?status=bogus', { key });
    expect(bad.status).toBe(400);
  });

  it('keeps agents apart: an agent sees only its own batches; the member sees all', async () => {
    const owner = await newMember(app.deps);
    const a = await newAgentWithKey(app.baseUrl, owner.key, { environment: 'test' });
    const b = await newAgentWithKey(app.baseUrl, owner.key, { environment: 'test' });
    const ver = { 'X-Service-MD-Version': '1' };
    const made = await api('POST', '/v1/batch-mail', {
      key: a.credential.key,
      headers: ver,
      form: batchForm(postcard, recipientsCsv(2)),
    });
    expect(made.status).toBe(201);
    const id = made.body.batch.id;
    expect(made.body.batch.agent_id).toBe(a.agent.id);

    expect((await api('GET', `/v1/batch-mail/${id}`, { key: b.credential.key })).status).toBe(404);
    expect((await api('GET', '/v1/batch-mail', { key: b.credential.key })).body.pagination.total).toBe(0);
    expect((await api('POST', `/v1/batch-mail/${id}/confirm`, { key: b.credential.key, headers: ver })).status).toBe(
      404,
    );
    expect((await api('DELETE', `/v1/batch-mail/${id}`, { key: b.credential.key, headers: ver })).status).toBe(404);
    expect((await api('GET', `/v1/batch-mail/${id}`, { key: a.credential.key })).status).toBe(200);

    const memberTest = await testKeyFor(app.deps, owner.member_id);
    expect((await api('GET', `/v1/batch-mail/${id}`, { key: memberTest })).status).toBe(200);
    const narrowed = await api('GET', `/v1/batch-mail?agent_id=${b.agent.id}`, { key: memberTest });
    expect(narrowed.body.pagination.total).toBe(0);

    const noVersion = await api('POST', `/v1/batch-mail/${id}/confirm`, { key: a.credential.key });
    expect(noVersion.status).toBe(400);
    expect(noVersion.body.code).toBe('SERVICE_MD_VERSION_REQUIRED');
  });

  it('expires an unconfirmed draft as cancelled with error_message, after which confirm is refused', async () => {
    const auth = await authenticate(app.deps, `Bearer ${testKey}`);
    const dir = mkdtempSync(path.join(tmpdir(), 'batch-'));
    writeFileSync(path.join(dir, 't.pdf'), postcard);
    writeFileSync(path.join(dir, 'r.csv'), recipientsCsv(3));
    const draft = await createBatchDraft(
      app.deps,
      auth,
      {
        job_name: 'Short-lived',
        mail_type: 'postcard_4x6',
        mailing_class: 'first_class',
        duplex: false,
        color: false,
        template: {
          fieldName: 'template',
          filepath: path.join(dir, 't.pdf'),
          originalFilename: 't.pdf',
          mimetype: 'application/pdf',
          size: postcard.length,
        },
        recipients: {
          fieldName: 'recipients',
          filepath: path.join(dir, 'r.csv'),
          originalFilename: 'r.csv',
          mimetype: 'text/csv',
          size: recipientsCsv(3).length,
        },
      },
      { draftExpirySeconds: 2 },
    );
    const id = draft.batch.id;
    const expired = await waitForStatus(app.baseUrl, testKey, id, ['cancelled'], 30000);
    expect(expired.batch).toMatchObject({
      status: 'cancelled',
      error_message: expect.stringMatching(/^draft expired/),
      pricing: { refunded_cents: 0 },
    });
    await waitFor(
      'batch.cancelled event',
      async () =>
        (await app.deps.db.query(`SELECT 1 FROM events WHERE object_id = $1 AND event_type = 'batch.cancelled'`, [id]))
          .length > 0,
    );

    const confirm = await api('POST', `/v1/batch-mail/${id}/confirm`, { key: testKey });
    expect(confirm.status).toBe(409);
    expect(confirm.body.code).toBe('BATCH_MAIL_NOT_CONFIRMABLE');
    const cancel = await api('DELETE', `/v1/batch-mail/${id}`, { key: testKey });
    expect(cancel.body).toMatchObject({ id, status: 'cancelled', refunded_credits_cents: 0, already_cancelled: true });
  });
});
