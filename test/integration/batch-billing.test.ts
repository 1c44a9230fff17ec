// Live batches and money: estimate equals the debit, concurrent confirms debit once,
// 402 leaves the draft untouched, concurrent cancels refund once, and facility finishes
// refund exactly the unmailed share (partial) or everything (failure).
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { topUp } from '../../services/billing/credits';
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

describe('batch mail billing (live keys, facility)', () => {
  let app: TestApp;
  let api: ReturnType<typeof client>;
  let postcard: Buffer;

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    postcard = await pdf(1);
    await ensureFacility(app.deps);
  });
  afterAll(async () => {
    await app.close();
  });

  async function draft(key: string, pieces: number, fields: Record<string, string> = {}) {
    const res = await api('POST', '/v1/batch-mail', { key, form: batchForm(postcard, recipientsCsv(pieces), fields) });
    expect(res.status).toBe(201);
    return res.body.batch as { id: string; pricing: { total_cents: number } };
  }

  /** A live, paid batch that reached submitted, with a key of the facility it was assigned to. */
  async function submittedBatch(pieces: number) {
    const member = await newMember(app.deps, { creditsCents: 100000 });
    const batch = await draft(member.key, pieces);
    const confirmed = await api('POST', `/v1/batch-mail/${batch.id}/confirm`, { key: member.key });
    expect(confirmed.status).toBe(200);
    await waitForStatus(app.baseUrl, member.key, batch.id, ['submitted']);
    const [{ facility_id }] = await app.deps.db.query(`SELECT facility_id FROM batches WHERE id = $1`, [batch.id]);
    expect(facility_id).toEqual(expect.any(String));
    return { member, batch, facilityKey: await facilityKeyFor(app.deps, facility_id) };
  }

  it('debits exactly the estimate once when two confirms race', async () => {
    const member = await newMember(app.deps, { creditsCents: 50000 });
    const estimate = await api('POST', '/v1/batch-mail/estimate', {
      key: member.key,
      json: { mail_type: 'postcard_4x6', mailing_class: 'first_class', quantity: 500, page_count: 1 },
    });
    const batch = await draft(member.key, 500);
    expect(batch.pricing.total_cents).toBe(estimate.body.estimate.total_cents);
    expect(batch.pricing.total_cents).toBe(13300);

    const [a, b] = await Promise.all([
      api('POST', `/v1/batch-mail/${batch.id}/confirm`, { key: member.key }),
      api('POST', `/v1/batch-mail/${batch.id}/confirm`, { key: member.key }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.body.already_confirmed, b.body.already_confirmed].sort()).toEqual([false, true]);
    for (const r of [a, b]) {
      expect(r.body).toMatchObject({
        credits_charged_cents: 13300,
        sandbox: false,
        batch: { pricing: { credits_charged: true } },
      });
    }
    expect(await ledger(app.deps, batch.id)).toEqual([
      { kind: 'debit', amount_cents: -13300, entry_key: `debit:batch:${batch.id}` },
    ]);
    expect(await balance(app.deps, member.member_id)).toBe(50000 - 13300);

    const again = await api('POST', `/v1/batch-mail/${batch.id}/confirm`, {
      key: member.key,
      headers: { 'Idempotency-Key': 'confirm-1' },
    });
    expect(again.body.already_confirmed).toBe(true);
    expect(await ledger(app.deps, batch.id)).toHaveLength(1);
    await waitForStatus(app.baseUrl, member.key, batch.id, ['submitted']);
  });

  it('answers 402 with the spec body when credits are short, and confirms after a top-up', async () => {
    const member = await newMember(app.deps, { creditsCents: 1000 });
    const batch = await draft(member.key, 100);
    expect(batch.pricing.total_cents).toBe(2800);
    const res = await api('POST', `/v1/batch-mail/${batch.id}/confirm`, { key: member.key });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({
      code: 'INSUFFICIENT_CREDITS',
      retryable: false,
      credits_required_cents: 2800,
      credit_balance_cents: 1000,
      credit_shortfall_cents: 1800,
    });
    expect(res.body.billing_url).toMatch(/#credits$/);
    expect((await api('GET', `/v1/batch-mail/${batch.id}`, { key: member.key })).body.batch.status).toBe('draft');
    expect(await ledger(app.deps, batch.id)).toEqual([]);

    await topUp(app.deps.db, { memberId: member.member_id, amountCents: 5000, entryKey: `topup:test:${batch.id}` });
    const ok = await api('POST', `/v1/batch-mail/${batch.id}/confirm`, { key: member.key });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ credits_charged_cents: 2800, credit_balance_cents: 3200 });
  });

  it('refunds a cancelled paid batch once when DELETEs race, and repeats answer the same', async () => {
    const member = await newMember(app.deps, { creditsCents: 20000 });
    const batch = await draft(member.key, 50);
    await api('POST', `/v1/batch-mail/${batch.id}/confirm`, { key: member.key });
    const responses = await Promise.all(
      [0, 1, 2].map(() => api('DELETE', `/v1/batch-mail/${batch.id}`, { key: member.key })),
    );
    for (const r of responses) {
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ id: batch.id, status: 'cancelled', refunded_credits_cents: 1400, sandbox: false });
    }
    expect(responses.filter((r) => r.body.already_cancelled === false)).toHaveLength(1);
    expect(await ledger(app.deps, batch.id)).toEqual([
      { kind: 'debit', amount_cents: -1400, entry_key: `debit:batch:${batch.id}` },
      { kind: 'refund', amount_cents: 1400, entry_key: `refund:batch:${batch.id}` },
    ]);
    expect(await balance(app.deps, member.member_id)).toBe(20000);
    const later = await api('DELETE', `/v1/batch-mail/${batch.id}`, { key: member.key });
    expect(later.body).toMatchObject({ status: 'cancelled', refunded_credits_cents: 1400, already_cancelled: true });
    const detail = await api('GET', `/v1/batch-mail/${batch.id}`, { key: member.key });
    expect(detail.body.batch.pieces.mailed).toBe(0);
    const [{ n }] = await app.deps.db.query(
      `SELECT count(*)::int AS n FROM events WHERE object_id = $1 AND event_type = 'batch.cancelled'`,
      [batch.id],
    );
    expect(n).toBe(1);
  });

  it('refunds exactly the unmailed share when the facility finishes a batch partially', async () => {
    const { member, batch, facilityKey } = await submittedBatch(500);
    const fac = (method: string, suffix: string, json?: unknown) =>
      api(method, `/v1/facility/batches/${batch.id}${suffix}`, { key: facilityKey, json });

    const queue = await api('GET', '/v1/facility/batches', { key: facilityKey });
    expect(queue.body.batches.map((b: { id: string }) => b.id)).toContain(batch.id);
    const files = await fac('GET', '');
    expect(files.body.files.recipients_url).toEqual(expect.any(String));
    const manifest = await (await fetch(files.body.files.recipients_url)).text();
    expect(manifest.split('\r\n')[1]).toBe('1,Recipient 1,1 Main St,,Austin,TX,10001');

    expect((await fac('POST', '/pieces', { status: 'mailed', ranges: [{ from: 1, to: 10 }] })).status).toBe(409);
    expect((await fac('POST', '/start')).body.batch.status).toBe('in_progress');
    const cancel = await api('DELETE', `/v1/batch-mail/${batch.id}`, { key: member.key });
    expect(cancel.status).toBe(409);
    expect(cancel.body.code).toBe('BATCH_MAIL_NOT_CANCELLABLE');

    const mailed = await fac('POST', '/pieces', {
      status: 'mailed',
      ranges: [
        { from: 1, to: 300 },
        { from: 290, to: 320 },
      ],
    });
    expect(mailed.body).toMatchObject({ updated: 320, batch: { pieces: { mailed: 320 } } });
    const failed = await fac('POST', '/pieces', {
      status: 'failed',
      sequences: [319, 320, 321],
      reason: 'address unreadable',
    });
    expect(failed.body).toMatchObject({ updated: 3, batch: { pieces: { mailed: 318, failed: 3 } } });
    const outOfRange = await fac('POST', '/pieces', { status: 'mailed', ranges: [{ from: 400, to: 501 }] });
    expect(outOfRange.status).toBe(400);

    const finished = await fac('POST', '/finish', { facility_notes: 'Printer jam on the last run' });
    // 182 of 500 pieces unmailed: floor(13300 x 182 / 500) = 4841
    expect(finished.body).toMatchObject({
      refunded_credits_cents: 4841,
      already_finished: false,
      batch: {
        status: 'partially_completed',
        facility_notes: 'Printer jam on the last run',
        pieces: { mailed: 318, failed: 182 },
        pricing: { refunded_cents: 4841 },
      },
    });
    const repeat = await fac('POST', '/finish', {});
    expect(repeat.body).toMatchObject({ refunded_credits_cents: 4841, already_finished: true });
    expect(await ledger(app.deps, batch.id)).toEqual([
      { kind: 'debit', amount_cents: -13300, entry_key: `debit:batch:${batch.id}` },
      { kind: 'refund', amount_cents: 4841, entry_key: `refund:batch:${batch.id}:partial` },
    ]);
    expect(await balance(app.deps, member.member_id)).toBe(100000 - 13300 + 4841);
    const events = await app.deps.db.query(
      `SELECT event_type, payload FROM events WHERE object_id = $1 ORDER BY created_at`,
      [batch.id],
    );
    expect(events.map((e: { event_type: string }) => e.event_type)).toEqual([
      'batch.submitted',
      'batch.partially_completed',
    ]);
    expect(events[1].payload).toMatchObject({ pieces_mailed: 318, pieces_failed: 182, status: 'partially_completed' });
  });

  it('completes a fully mailed batch without a refund', async () => {
    const { member, batch, facilityKey } = await submittedBatch(20);
    const started = await api('POST', `/v1/facility/batches/${batch.id}/start`, { key: facilityKey });
    expect(started.body).toMatchObject({ batch: { status: 'in_progress' } });
    await api('POST', `/v1/facility/batches/${batch.id}/pieces`, {
      key: facilityKey,
      json: { status: 'mailed', ranges: [{ from: 1, to: 20 }] },
    });
    const done = await api('POST', `/v1/facility/batches/${batch.id}/finish`, { key: facilityKey, json: {} });
    expect(done.body).toMatchObject({
      refunded_credits_cents: 0,
      batch: { status: 'completed', pieces: { mailed: 20, failed: 0 } },
    });
    const detail = await api('GET', `/v1/batch-mail/${batch.id}`, { key: member.key });
    expect(detail.body.pieces[0]).toMatchObject({ status: 'mailed', mailed_at: expect.any(String) });
    expect(await ledger(app.deps, batch.id)).toHaveLength(1);
  });

  it('refunds everything when the facility cannot fulfil, and hides batches from other facilities', async () => {
    const { member, batch, facilityKey } = await submittedBatch(30);
    const stranger = (await app.deps.db.query(`INSERT INTO facilities (name) VALUES ('Elsewhere') RETURNING id`))[0].id;
    const strangerKey = await facilityKeyFor(app.deps, stranger);
    expect((await api('GET', `/v1/facility/batches/${batch.id}`, { key: strangerKey })).status).toBe(404);
    expect((await api('GET', `/v1/facility/batches/${batch.id}`, { key: member.key })).status).toBe(403);

    const failed = await api('POST', `/v1/facility/batches/${batch.id}/fail`, {
      key: facilityKey,
      json: { error_message: 'Stock for 6x9 cards ran out' },
    });
    expect(failed.body).toMatchObject({
      refunded_credits_cents: 840,
      batch: { status: 'failed', error_message: 'Stock for 6x9 cards ran out', pieces: { failed: 30 } },
    });
    expect(await ledger(app.deps, batch.id)).toEqual([
      { kind: 'debit', amount_cents: -840, entry_key: `debit:batch:${batch.id}` },
      { kind: 'refund', amount_cents: 840, entry_key: `refund:batch:${batch.id}` },
    ]);
    expect(await balance(app.deps, member.member_id)).toBe(100000);
    const events = await app.deps.db.query(`SELECT event_type FROM events WHERE object_id = $1 ORDER BY created_at`, [
      batch.id,
    ]);
    expect(events.map((e: { event_type: string }) => e.event_type)).toEqual(['batch.submitted', 'batch.failed']);
    const cancel = await api('DELETE', `/v1/batch-mail/${batch.id}`, { key: member.key });
    expect(cancel.status).toBe(409);
  });
});
