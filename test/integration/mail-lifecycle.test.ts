// A piece's life through its workflow on the real stack: the sandbox advance with real
// photos and the spec's event payloads, a live piece driven by a facility key, carrier
// delivery failure, facility failure, cancellation under concurrency, and approval.
import { PNG } from 'pngjs';
import { startTestApp, TestApp } from '../helpers/app';
import { createFacility } from '../../services/accounts/accounts';
import { topUp } from '../../services/billing/credits';
import { sandboxPhotoPng } from '../../services/outbound-mail/sandbox';
import { outboundMailWorkflowId } from '../../workflows/outbound-mail/contracts';
import { MailStatus } from '../../workflows/shared/search-attributes';
import { commands } from '../../scripts/admin';
import { authenticate } from '../../services/accounts/auth';
import { advanceTestMail } from '../../services/outbound-mail/sandbox-advance';
import {
  api,
  balance,
  ledger,
  letterForm,
  letterPdf,
  mailEvents,
  newSender,
  sendLetter,
  Sender,
  waitFor,
} from './mail-helpers';

async function fetchPng(url: string): Promise<PNG> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return PNG.sync.read(Buffer.from(await res.arrayBuffer()));
}

async function mailStatus(app: TestApp, id: string): Promise<string> {
  const [row] = await app.deps.db.query(`SELECT status FROM outbound_mail WHERE id = $1`, [id]);
  return row.status;
}

function photoForm(photos: Record<string, Buffer>, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const [k, v] of Object.entries(photos))
    form.append(k, new Blob([new Uint8Array(v)], { type: 'image/png' }), `${k}.png`);
  return form;
}

describe('outbound mail lifecycle', () => {
  let app: TestApp;
  let facility: { facility_id: string; key: string };
  beforeAll(async () => {
    app = await startTestApp();
    facility = await createFacility(app.deps, 'Mail Lifecycle Facility');
  });
  afterAll(async () => {
    await app.close();
  });

  const advance = (s: Sender, id: string) => api(app)('POST', `/v1/test/mail/${id}/advance`, { key: s.key });
  const fac = (method: string, path: string, opts: { form?: FormData; json?: unknown } = {}) =>
    api(app)(method, `/v1/facility/mail${path}`, { key: facility.key, ...opts });

  it('advances a sandbox piece to delivered with real photos in S3 and the mail.* events in order', async () => {
    const s = await newSender(app, { environment: 'test' });
    const created = await sendLetter(
      app,
      s,
      letterForm(await letterPdf(2), {
        mail_class: 'certified',
        agent_notes: 'handle with care',
        metadata: JSON.stringify({ case: 'A-1', tags: ['x'] }),
      }),
    );
    expect(created.status).toBe(201);
    const id = created.body.id;
    await waitFor(async () => (await mailEvents(app, id)).length === 1, 'mail.submitted');

    const ready = await advance(s, id);
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', tracking_number: null });
    expect(ready.body.fulfillment_photos.map((p: { category: string }) => p.category).sort()).toEqual([
      'envelope',
      'pages',
    ]);
    for (const photo of ready.body.fulfillment_photos) expect((await fetchPng(photo.url)).width).toBe(320);

    const mailed = await advance(s, id);
    expect(mailed.body).toMatchObject({ status: 'mailed', carrier: 'usps', dispatch_method: 'post_office_counter' });
    expect(mailed.body.tracking_number).toMatch(/^TEST/);
    expect(mailed.body.mailed_at).not.toBeNull();

    const delivered = await advance(s, id);
    expect(delivered.body).toMatchObject({ status: 'delivered', test_mode: true, cost_cents: 0 });
    expect(delivered.body.fulfillment_photos.map((p: { category: string }) => p.category).sort()).toEqual([
      'delivery',
      'envelope',
      'pages',
      'receipt',
    ]);

    const again = await advance(s, id);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('MAIL_STATE_CONFLICT');

    const events = await mailEvents(app, id);
    expect(events.map((e) => e.event_type)).toEqual(['mail.submitted', 'mail.ready', 'mail.mailed', 'mail.delivered']);
    const [submitted, readyEvent, mailedEvent, deliveredEvent] = events.map((e) => e.payload);
    expect(submitted).toMatchObject({
      event_type: 'mail.submitted',
      outbound_mail_id: id,
      agent_id: s.agentId,
      mailbox_id: `mbx_${s.agentId}`,
      package_id: null,
      recipient_name: 'Jane Doe',
      recipient_city: 'Austin',
      recipient_state: 'TX',
      recipient_zip: '78701',
      return_name: 'Test Member',
      return_line1: '1 Return Way',
      return_line2: null,
      return_city: 'Austin',
      return_state: 'TX',
      return_zip: '78701',
      mail_class: 'certified',
      status: 'submitted',
      tracking_number: null,
      carrier: null,
      cost_cents: 0,
      mailed_at: null,
      agent_notes: 'handle with care',
      metadata: { case: 'A-1', tags: ['x'] },
      fulfillment_photos: [],
      callback_url: `${app.baseUrl}/v1/mail/${id}`,
      test_mode: true,
      estimated_live_cost_cents: created.body.estimated_live_cost_cents,
      instructions: { version: 1 },
    });
    expect(submitted.pdf_url).toMatch(/^http/);
    expect(submitted.instructions.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(typeof submitted.instructions.text).toBe('string');
    expect(submitted).not.toHaveProperty('error_message');
    expect(readyEvent.fulfillment_photos).toHaveLength(2);
    expect(mailedEvent).toMatchObject({
      status: 'mailed',
      carrier: 'usps',
      tracking_number: mailed.body.tracking_number,
    });
    expect(deliveredEvent).toMatchObject({ status: 'delivered' });

    const description = await app.deps.temporal.workflow.getHandle(outboundMailWorkflowId(id)).describe();
    expect(description.typedSearchAttributes.get(MailStatus)).toBe('delivered');
    expect(description.status.name).toBe('COMPLETED');
  });

  it('creates a sandbox piece without a document and refuses advance to live keys', async () => {
    const s = await newSender(app, { environment: 'test' });
    const res = await api(app)('POST', '/v1/test/mail', {
      key: s.key,
      headers: s.headers,
      json: {
        recipient_name: 'Sim Ulated',
        recipient_line1: '1 Test St',
        recipient_city: 'Austin',
        recipient_state: 'TX',
        recipient_zip: '78701',
        page_count: 3,
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: 'submitted',
      page_count: 3,
      test_mode: true,
      human_review: { document: { simulated: true, type: 'pdf' } },
    });
    expect((await advance(s, res.body.id)).body.status).toBe('ready');
    const live = await newSender(app, { facilityId: facility.facility_id, creditsCents: 10000 });
    const refused = await api(app)('POST', `/v1/test/mail/${res.body.id}/advance`, { key: live.key });
    expect(refused.status).toBe(403);
    const tooLong = await api(app)('POST', '/v1/test/mail', {
      key: s.key,
      headers: s.headers,
      json: {
        recipient_name: 'X',
        recipient_line1: '1 Test St',
        recipient_city: 'Austin',
        recipient_state: 'TX',
        recipient_zip: '78701',
        page_count: 101,
      },
    });
    expect(tooLong.status).toBe(400);
  });

  it('moves a sandbox piece once per Idempotency-Key, also when the first answer was lost after the workflow applied it', async () => {
    const s = await newSender(app, { environment: 'test' });
    const created = await sendLetter(app, s, letterForm(await letterPdf()));
    const id = created.body.id;
    const advanceWith = (key: string) =>
      api(app)('POST', `/v1/test/mail/${id}/advance`, { key: s.key, headers: { 'idempotency-key': key } });
    const first = await advanceWith('step-1');
    const retried = await advanceWith('step-1');
    expect([first.status, retried.status]).toEqual([200, 200]);
    expect([first.body.status, retried.body.status]).toEqual(['ready', 'ready']);
    expect(await mailStatus(app, id)).toBe('ready');
    // The API never stored an answer (lost between workflow and API): the Temporal update id
    // still makes the repeat a replay of the first step.
    const auth = await authenticate(app.deps, `Bearer ${s.key}`);
    const viaWorkflow = await advanceTestMail(app.deps, auth, id, { idempotencyKey: 'step-2' });
    const again = await advanceTestMail(app.deps, auth, id, { idempotencyKey: 'step-2' });
    expect([viaWorkflow.status, again.status]).toEqual(['mailed', 'mailed']);
    expect((await advanceWith('step-3')).body.status).toBe('delivered');
    expect((await mailEvents(app, id)).map((e) => e.event_type)).toEqual([
      'mail.submitted',
      'mail.ready',
      'mail.mailed',
      'mail.delivered',
    ]);
  });

  it('lets a facility key drive a live piece through printing, dispatch and delivery', async () => {
    const s = await newSender(app, { facilityId: facility.facility_id, creditsCents: 100000 });
    const created = await sendLetter(app, s, letterForm(await letterPdf(), { mail_class: 'priority' }));
    expect(created.status).toBe(201);
    const id = created.body.id;

    const queue = await fac('GET', '?status=submitted&limit=100');
    expect(queue.status).toBe(200);
    expect(queue.body.items.map((i: { id: string }) => i.id)).toContain(id);
    const doc = await fac('GET', `/${id}/document`);
    expect(doc.body).toMatchObject({ content_type: 'application/pdf', page_count: 1 });
    expect((await fetch(doc.body.url)).status).toBe(200);
    expect((await api(app)('GET', '/v1/facility/mail', { key: s.key })).status).toBe(403);

    expect((await fac('POST', `/${id}/printing`)).body.printing_started_at).not.toBeNull();
    const cancel = await api(app)('DELETE', `/v1/mail/${id}`, { key: s.key, headers: s.headers });
    expect(cancel.status).toBe(409);
    expect(cancel.body.code).toBe('MAIL_NOT_CANCELLABLE');

    const early = await fac('POST', `/${id}/dispatched`, {
      form: photoForm(
        { receipt: sandboxPhotoPng('receipt', id) },
        { carrier: 'usps', tracking_number: '9400100000000000000001', dispatch_method: 'post_office_counter' },
      ),
    });
    expect(early.status).toBe(409);
    const notImage = await fac('POST', `/${id}/printed`, {
      form: photoForm({ pages: Buffer.from('not an image'), envelope: sandboxPhotoPng('envelope', id) }),
    });
    expect(notImage.status).toBe(400);
    const printed = await fac('POST', `/${id}/printed`, {
      form: photoForm({ pages: sandboxPhotoPng('pages', id), envelope: sandboxPhotoPng('envelope', id) }),
    });
    expect(printed.status).toBe(200);
    expect(printed.body.status).toBe('ready');

    const untracked = await fac('POST', `/${id}/dispatched`, {
      form: photoForm(
        { receipt: sandboxPhotoPng('receipt', id) },
        { carrier: 'usps', dispatch_method: 'post_office_counter' },
      ),
    });
    expect(untracked.status).toBe(400);
    expect(untracked.body.fields[0].path).toBe('tracking_number');
    const dispatched = await fac('POST', `/${id}/dispatched`, {
      form: photoForm(
        { receipt: sandboxPhotoPng('receipt', id) },
        { carrier: 'usps', tracking_number: '9400100000000000000001', dispatch_method: 'post_office_counter' },
      ),
    });
    expect(dispatched.body).toMatchObject({
      status: 'mailed',
      tracking_number: '9400100000000000000001',
      carrier: 'usps',
    });

    const delivered = await fac('POST', `/${id}/delivered`, {
      form: photoForm({ delivery: sandboxPhotoPng('delivery', id) }),
    });
    expect(delivered.body.status).toBe('delivered');

    const record = await api(app)('GET', `/v1/mail/${id}`, { key: s.key });
    expect(record.body).toMatchObject({
      status: 'delivered',
      tracking_number: '9400100000000000000001',
      carrier: 'usps',
      cost_cents: created.body.cost_cents,
    });
    expect(record.body.fulfillment_photos.map((p: { category: string }) => p.category).sort()).toEqual([
      'delivery',
      'envelope',
      'pages',
      'receipt',
    ]);
    for (const photo of record.body.fulfillment_photos) expect((await fetchPng(photo.url)).height).toBe(200);
    expect((await mailEvents(app, id)).map((e) => e.event_type)).toEqual([
      'mail.submitted',
      'mail.ready',
      'mail.mailed',
      'mail.delivered',
    ]);

    const stranger = await createFacility(app.deps, 'Other Facility');
    expect((await api(app)('GET', `/v1/facility/mail/${id}`, { key: stranger.key })).status).toBe(404);
  });

  it('reports a carrier delivery failure of a mailed piece as failed without a refund', async () => {
    const s = await newSender(app, { facilityId: facility.facility_id, creditsCents: 100000 });
    const created = await sendLetter(app, s, letterForm(await letterPdf(), { mail_class: 'carrierx_ground' }));
    const id = created.body.id;
    await fac('POST', `/${id}/printed`, {
      form: photoForm({ pages: sandboxPhotoPng('pages', id), envelope: sandboxPhotoPng('envelope', id) }),
    });
    await fac('POST', `/${id}/dispatched`, {
      form: photoForm(
        { receipt: sandboxPhotoPng('receipt', id) },
        { carrier: 'carrierx', tracking_number: 'CX123', dispatch_method: 'carrier_pickup' },
      ),
    });
    const failed = await fac('POST', `/${id}/carrier-delivery-failed`, {
      json: { message: 'Address not found by carrier' },
    });
    expect(failed.status).toBe(200);
    const record = await api(app)('GET', `/v1/mail/${id}`, { key: s.key });
    expect(record.body).toMatchObject({
      status: 'failed',
      carrier_delivery_failed: true,
      failure_stage: 'carrier_delivery',
      failure_source: 'carrierx_tracking',
      error_message: 'Address not found by carrier',
      tracking_number: 'CX123',
    });
    const events = await mailEvents(app, id);
    expect(events.map((e) => e.event_type)).toEqual(['mail.submitted', 'mail.ready', 'mail.mailed', 'mail.failed']);
    expect(events[3].payload).toMatchObject({
      status: 'failed',
      error_message: 'Address not found by carrier',
      carrier_delivery_failed: true,
      tracking_number: 'CX123',
    });
    expect((await ledger(app, id)).map((l) => l.kind)).toEqual(['debit']);
  });

  it('refunds a piece the facility could not print', async () => {
    const s = await newSender(app, { facilityId: facility.facility_id, creditsCents: 100000 });
    const created = await sendLetter(app, s, letterForm(await letterPdf()));
    const res = await fac('POST', `/${created.body.id}/failed`, { json: { message: 'Document unreadable' } });
    expect(res.body).toMatchObject({ status: 'failed', error_message: 'Document unreadable' });
    expect(await balance(app, s.memberId)).toBe(100000);
    expect((await mailEvents(app, created.body.id)).map((e) => e.event_type)).toEqual([
      'mail.submitted',
      'mail.failed',
    ]);
  });

  it('refunds once under five concurrent DELETEs', async () => {
    const s = await newSender(app, { facilityId: facility.facility_id, creditsCents: 100000 });
    const created = await sendLetter(app, s, letterForm(await letterPdf()));
    const id = created.body.id;
    const price = created.body.cost_cents;
    expect(await balance(app, s.memberId)).toBe(100000 - price);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => api(app)('DELETE', `/v1/mail/${id}`, { key: s.key, headers: s.headers })),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const refunded = results.filter((r) => !r.body.already_cancelled);
    expect(refunded).toHaveLength(1);
    expect(refunded[0].body).toMatchObject({
      refunded_credits_cents: price,
      credit_balance_cents: 100000,
      outbound_mail: { status: 'cancelled', cancellation_reason: 'cancelled_by_caller' },
    });
    for (const r of results.filter((x) => x.body.already_cancelled)) expect(r.body.refunded_credits_cents).toBe(0);
    const later = await api(app)('DELETE', `/v1/mail/${id}`, { key: s.key, headers: s.headers });
    expect(later.body).toMatchObject({ already_cancelled: true, refunded_credits_cents: 0 });
    expect((await ledger(app, id)).map((l) => l.kind)).toEqual(['debit', 'refund']);
    expect(await balance(app, s.memberId)).toBe(100000);
    expect((await mailEvents(app, id)).map((e) => e.event_type)).toEqual(['mail.submitted', 'mail.cancelled']);
    // A sandbox piece cancels with nothing to refund and no balance to report.
    const sandbox = await newSender(app, { environment: 'test' });
    const test = await sendLetter(app, sandbox, letterForm(await letterPdf()));
    const cancelled = await api(app)('DELETE', `/v1/mail/${test.body.id}`, {
      key: sandbox.key,
      headers: sandbox.headers,
    });
    expect(cancelled.body).toMatchObject({
      refunded_credits_cents: 0,
      credit_balance_cents: null,
      already_cancelled: false,
    });
  });

  it('debits a pending piece when its owner approves it, and leaves it pending when credits are short', async () => {
    const s = await newSender(app, {
      facilityId: facility.facility_id,
      creditsCents: 100,
      credential: { force_approval: true },
    });
    const created = await sendLetter(app, s, letterForm(await letterPdf()));
    expect(created.body.status).toBe('pending_approval');
    const id = created.body.id;
    const price = created.body.credits_required_cents;
    expect((await api(app)('POST', `/v1/mail/${id}/approve`, { key: s.key })).status).toBe(403);
    expect((await api(app)('POST', `/v1/test/mail/${id}/advance`, { key: s.key })).status).toBe(403);

    const short = await api(app)('POST', `/v1/mail/${id}/approve`, { key: s.memberKey });
    expect(short.status).toBe(402);
    expect(short.body).toMatchObject({
      code: 'INSUFFICIENT_CREDITS',
      credits_required_cents: price,
      credit_balance_cents: 100,
      credit_shortfall_cents: price - 100,
    });
    expect(await mailStatus(app, id)).toBe('pending_approval');
    expect(await ledger(app, id)).toEqual([]);

    await topUp(app.deps.db, { memberId: s.memberId, amountCents: 100000, entryKey: `topup:test:${id}` });
    const approved = await api(app)('POST', `/v1/mail/${id}/approve`, { key: s.memberKey });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      credits_charged_cents: price,
      credit_balance_cents: 100100 - price,
      outbound_mail: { status: 'submitted', cost_cents: price },
    });
    expect(approved.body.outbound_mail.approved_at).not.toBeNull();
    expect(await ledger(app, id)).toEqual([{ kind: 'debit', amount_cents: -price, entry_key: `debit:mail:${id}` }]);
    const twice = await api(app)('POST', `/v1/mail/${id}/approve`, { key: s.memberKey });
    expect(twice.status).toBe(409);
    expect(twice.body.code).toBe('MAIL_NOT_PENDING_APPROVAL');
    await waitFor(async () => (await mailEvents(app, id)).length === 2, 'two events');
    expect((await mailEvents(app, id)).map((e) => e.event_type)).toEqual(['mail.pending_approval', 'mail.submitted']);
  });

  it('rejects through the API or the operator CLI without charging', async () => {
    const s = await newSender(app, { facilityId: facility.facility_id, creditsCents: 100000 });
    const a = await sendLetter(app, s, letterForm(await letterPdf(), { requires_approval: 'true' }));
    const rejected = await api(app)('POST', `/v1/mail/${a.body.id}/reject`, { key: s.memberKey });
    expect(rejected.body.outbound_mail).toMatchObject({
      status: 'cancelled',
      cancellation_reason: 'rejected_by_owner',
    });

    const b = await sendLetter(app, s, letterForm(await letterPdf(), { requires_approval: 'true' }));
    const viaCli = (await commands.approve.run(app.deps, { mail: b.body.id })) as {
      outbound_mail: { status: string };
      credits_charged_cents: number;
    };
    expect(viaCli).toMatchObject({
      outbound_mail: { status: 'submitted' },
      credits_charged_cents: b.body.credits_required_cents,
    });
    const c = await sendLetter(app, s, letterForm(await letterPdf(), { requires_approval: 'true' }));
    await commands.reject.run(app.deps, { mail: c.body.id });
    expect(await mailStatus(app, c.body.id)).toBe('cancelled');
    expect(await balance(app, s.memberId)).toBe(100000 - b.body.credits_required_cents);
    await expect(commands.approve.run(app.deps, { mail: c.body.id })).rejects.toThrow(/cancelled/);
  });

  it('cancels a piece whose approval does not come in time', async () => {
    const timeoutBefore = app.deps.config.outboundMail.approvalTimeoutSeconds;
    app.deps.config.outboundMail.approvalTimeoutSeconds = 2;
    try {
      const s = await newSender(app, { facilityId: facility.facility_id, creditsCents: 100000 });
      const created = await sendLetter(app, s, letterForm(await letterPdf(), { requires_approval: 'true' }));
      await waitFor(async () => (await mailStatus(app, created.body.id)) === 'cancelled', 'approval timeout', 20000);
      const record = await api(app)('GET', `/v1/mail/${created.body.id}`, { key: s.key });
      expect(record.body).toMatchObject({ status: 'cancelled', cancellation_reason: 'approval_timed_out' });
      expect((await mailEvents(app, created.body.id)).map((e) => e.event_type)).toEqual([
        'mail.pending_approval',
        'mail.cancelled',
      ]);
    } finally {
      app.deps.config.outboundMail.approvalTimeoutSeconds = timeoutBefore;
    }
  });
});
