// A facility app's day on a shop-floor network: every facility step is retried with the
// same Idempotency-Key, also after the first answer was lost between the workflow and the
// API, and is applied once (one event, one status change, the ledger unchanged).
import { startTestApp, TestApp } from '../../helpers/app';
import { createFacility } from '../../../services/accounts';
import { authenticate, AuthContext } from '../../../services/auth';
import { sandboxPhotoPng } from '../../../services/mail-sandbox';
import {
  facilityCarrierDeliveryFailed, facilityDelivered, facilityDispatched, facilityFailed, facilityPrinted, facilityStartPrinting,
} from '../../../services/mail-facility';
import { api, balance, ledger, letterForm, letterPdf, mailEvents, newSender, sendLetter } from '../mail-helpers';

function photoForm(photos: Record<string, Buffer>, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const [k, v] of Object.entries(photos)) form.append(k, new Blob([new Uint8Array(v)], { type: 'image/png' }), `${k}.png`);
  return form;
}

describe('a facility app retrying every step with the same Idempotency-Key', () => {
  let app: TestApp;
  let facility: { facility_id: string; key: string };
  let facilityAuth: AuthContext;
  beforeAll(async () => {
    app = await startTestApp();
    facility = await createFacility(app.deps, 'Operators Day Facility');
    // Live pieces go to the oldest active facility: make it this one.
    await app.deps.db.query(`UPDATE facilities SET created_at = '1999-01-01' WHERE id = $1`, [facility.facility_id]);
    facilityAuth = await authenticate(app.deps, `Bearer ${facility.key}`);
  });
  afterAll(async () => { await app.close(); });

  const step = (path: string, key: string, opts: { form?: () => FormData; json?: unknown } = {}) =>
    api(app)('POST', `/v1/facility/mail${path}`, { key: facility.key, headers: { 'idempotency-key': key }, ...(opts.form ? { form: opts.form() } : {}), ...(opts.json ? { json: opts.json } : {}) });

  async function twice(path: string, key: string, opts: Parameters<typeof step>[2] = {}) {
    const first = await step(path, key, opts);
    const again = await step(path, key, opts);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    return first.body;
  }

  it('moves a live piece printing -> ready -> mailed -> delivered once when every step is sent twice', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const created = await sendLetter(app, s, letterForm(await letterPdf(), { mail_class: 'priority' }));
    const id = created.body.id;
    const pieces = { pages: sandboxPhotoPng('pages', id), envelope: sandboxPhotoPng('envelope', id) };
    const receipt = { receipt: sandboxPhotoPng('receipt', id) };
    const dispatch = { carrier: 'usps', tracking_number: '9400100000000000000077', dispatch_method: 'post_office_counter' };

    expect((await twice(`/${id}/printing`, 'p-1')).printing_started_at).not.toBeNull();
    expect((await twice(`/${id}/printed`, 'p-2', { form: () => photoForm(pieces) })).status).toBe('ready');
    expect((await twice(`/${id}/dispatched`, 'p-3', { form: () => photoForm(receipt, dispatch) })).status).toBe('mailed');
    expect((await twice(`/${id}/delivered`, 'p-4', { form: () => photoForm({ delivery: sandboxPhotoPng('delivery', id) }) })).status).toBe('delivered');

    // The same key with another request is refused and changes nothing.
    const reused = await step(`/${id}/dispatched`, 'p-3', { form: () => photoForm(receipt, { ...dispatch, carrier: 'ups' }) });
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED');

    expect((await mailEvents(app, id)).map((e) => e.event_type)).toEqual(['mail.submitted', 'mail.ready', 'mail.mailed', 'mail.delivered']);
    expect((await ledger(app, id)).map((l) => l.kind)).toEqual(['debit']);
    const photos = await app.deps.db.query(`SELECT category FROM outbound_mail_photos WHERE outbound_mail_id = $1 ORDER BY category`, [id]);
    expect(photos.map((p: { category: string }) => p.category)).toEqual(['delivery', 'envelope', 'pages', 'receipt']);
  });

  it('answers a retried step whose first answer was lost after the workflow applied it (no 409, applied once)', async () => {
    const s = await newSender(app, { creditsCents: 100000 });
    const created = await sendLetter(app, s, letterForm(await letterPdf(), { mail_class: 'priority' }));
    const id = created.body.id;
    const pieces = { pages: sandboxPhotoPng('pages', id), envelope: sandboxPhotoPng('envelope', id) };
    const receipt = { receipt: sandboxPhotoPng('receipt', id) };
    const dispatch = { carrier: 'usps', tracking_number: '9400100000000000000078', dispatch_method: 'post_office_counter' as const };

    // Each step runs once in the service (the workflow applies it; the API never stores or sends its answer),
    // then the app's retry with the same key arrives over HTTP.
    await facilityStartPrinting(app.deps, facilityAuth, id, { idempotencyKey: 'l-1' });
    expect((await step(`/${id}/printing`, 'l-1')).status).toBe(200);
    await facilityPrinted(app.deps, facilityAuth, id, pieces, { idempotencyKey: 'l-2' });
    const printed = await step(`/${id}/printed`, 'l-2', { form: () => photoForm(pieces) });
    expect([printed.status, printed.body.status]).toEqual([200, 'ready']);
    await facilityDispatched(app.deps, facilityAuth, id, { ...dispatch, receipt: receipt.receipt }, { idempotencyKey: 'l-3' });
    const dispatched = await step(`/${id}/dispatched`, 'l-3', { form: () => photoForm(receipt, dispatch) });
    expect([dispatched.status, dispatched.body.status]).toEqual([200, 'mailed']);
    await facilityDelivered(app.deps, facilityAuth, id, null, { idempotencyKey: 'l-4' });
    const delivered = await step(`/${id}/delivered`, 'l-4');
    expect([delivered.status, delivered.body.status]).toEqual([200, 'delivered']);

    expect((await mailEvents(app, id)).map((e) => e.event_type)).toEqual(['mail.submitted', 'mail.ready', 'mail.mailed', 'mail.delivered']);
    expect((await ledger(app, id)).map((l) => l.kind)).toEqual(['debit']);
    const photos = await app.deps.db.query(`SELECT category FROM outbound_mail_photos WHERE outbound_mail_id = $1 ORDER BY category`, [id]);
    expect(photos.map((p: { category: string }) => p.category)).toEqual(['envelope', 'pages', 'receipt']);
  });
});
