// A facility app's day on a shop-floor network: every facility step is retried with the
// same Idempotency-Key, also after the first answer was lost between the workflow and the
// API, and is applied once (one event, one status change, the ledger unchanged). And a
// night with no worker: calls into workflows answer 503 WORKFLOW_UNAVAILABLE within the
// deadline, and the same calls retried once a worker runs are applied exactly once.
import type { Worker } from '@temporalio/worker';
import { startTestApp, TestApp } from '../../helpers/app';
import { createWorker } from '../../../worker/worker';
import { createFacility } from '../../../services/accounts/accounts';
import { assignMemberFacility } from '../../../services/operations/facilities';
import { authenticate, AuthContext } from '../../../services/accounts/auth';
import { sandboxPhotoPng } from '../../../services/outbound-mail/sandbox';
import {
  facilityCarrierDeliveryFailed,
  facilityDelivered,
  facilityDispatched,
  facilityFailed,
  facilityPrinted,
  facilityStartPrinting,
} from '../../../services/outbound-mail/facility';
import { decideFacilityHandling } from '../../../services/physical-inbound/handling-decisions';
import { finishFacilityBatch, markFacilityBatchPieces, startFacilityBatch } from '../../../services/batches/facility';
import { newMember } from '../../helpers/factories';
import {
  eventsOf,
  fixtureImage,
  newWorld,
  photoForm as exteriorForm,
  receivePiece,
  waitFor,
  World,
} from '../../helpers/physical-inbound';
import { api, balance, ledger, letterForm, letterPdf, mailEvents, newSender, sendLetter } from '../mail-helpers';
import { batchForm, facilityKeyFor, ledger as batchLedger, pdf, recipientsCsv, waitForStatus } from '../batch-helpers';

function photoForm(photos: Record<string, Buffer>, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const [k, v] of Object.entries(photos))
    form.append(k, new Blob([new Uint8Array(v)], { type: 'image/png' }), `${k}.png`);
  return form;
}

describe('a facility app retrying every step with the same Idempotency-Key', () => {
  let app: TestApp;
  let facility: { facility_id: string; key: string };
  let facilityAuth: AuthContext;
  beforeAll(async () => {
    app = await startTestApp();
    facility = await createFacility(app.deps, 'Operators Day Facility');
    facilityAuth = await authenticate(app.deps, `Bearer ${facility.key}`);
  });
  afterAll(async () => {
    await app.close();
  });

  const step = (path: string, key: string, opts: { form?: () => FormData; json?: unknown } = {}) =>
    api(app)('POST', `/v1/facility/mail${path}`, {
      key: facility.key,
      headers: { 'idempotency-key': key },
      ...(opts.form ? { form: opts.form() } : {}),
      ...(opts.json ? { json: opts.json } : {}),
    });

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
    const s = await newSender(app, { facilityId: facility.facility_id, creditsCents: 100000 });
    const created = await sendLetter(app, s, letterForm(await letterPdf(), { mail_class: 'priority' }));
    const id = created.body.id;
    const pieces = { pages: sandboxPhotoPng('pages', id), envelope: sandboxPhotoPng('envelope', id) };
    const receipt = { receipt: sandboxPhotoPng('receipt', id) };
    const dispatch = {
      carrier: 'usps',
      tracking_number: '9400100000000000000077',
      dispatch_method: 'post_office_counter',
    };

    expect((await twice(`/${id}/printing`, 'p-1')).printing_started_at).not.toBeNull();
    expect((await twice(`/${id}/printed`, 'p-2', { form: () => photoForm(pieces) })).status).toBe('ready');
    expect((await twice(`/${id}/dispatched`, 'p-3', { form: () => photoForm(receipt, dispatch) })).status).toBe(
      'mailed',
    );
    expect(
      (await twice(`/${id}/delivered`, 'p-4', { form: () => photoForm({ delivery: sandboxPhotoPng('delivery', id) }) }))
        .status,
    ).toBe('delivered');

    // The same key with another request is refused and changes nothing.
    const reused = await step(`/${id}/dispatched`, 'p-3', {
      form: () => photoForm(receipt, { ...dispatch, carrier: 'ups' }),
    });
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED');

    expect((await mailEvents(app, id)).map((e) => e.event_type)).toEqual([
      'mail.submitted',
      'mail.ready',
      'mail.mailed',
      'mail.delivered',
    ]);
    expect((await ledger(app, id)).map((l) => l.kind)).toEqual(['debit']);
    const photos = await app.deps.db.query(
      `SELECT category FROM outbound_mail_photos WHERE outbound_mail_id = $1 ORDER BY category`,
      [id],
    );
    expect(photos.map((p: { category: string }) => p.category)).toEqual(['delivery', 'envelope', 'pages', 'receipt']);
  });

  it('answers a retried step whose first answer was lost after the workflow applied it (no 409, applied once)', async () => {
    const s = await newSender(app, { facilityId: facility.facility_id, creditsCents: 100000 });
    const created = await sendLetter(app, s, letterForm(await letterPdf(), { mail_class: 'priority' }));
    const id = created.body.id;
    const pieces = { pages: sandboxPhotoPng('pages', id), envelope: sandboxPhotoPng('envelope', id) };
    const receipt = { receipt: sandboxPhotoPng('receipt', id) };
    const dispatch = {
      carrier: 'usps',
      tracking_number: '9400100000000000000078',
      dispatch_method: 'post_office_counter' as const,
    };

    // Each step runs once in the service (the workflow applies it; the API never stores or sends its answer),
    // then the app's retry with the same key arrives over HTTP.
    await facilityStartPrinting(app.deps, facilityAuth, id, { idempotencyKey: 'l-1' });
    expect((await step(`/${id}/printing`, 'l-1')).status).toBe(200);
    await facilityPrinted(app.deps, facilityAuth, id, pieces, { idempotencyKey: 'l-2' });
    const printed = await step(`/${id}/printed`, 'l-2', { form: () => photoForm(pieces) });
    expect([printed.status, printed.body.status]).toEqual([200, 'ready']);
    await facilityDispatched(
      app.deps,
      facilityAuth,
      id,
      { ...dispatch, receipt: receipt.receipt },
      { idempotencyKey: 'l-3' },
    );
    const dispatched = await step(`/${id}/dispatched`, 'l-3', { form: () => photoForm(receipt, dispatch) });
    expect([dispatched.status, dispatched.body.status]).toEqual([200, 'mailed']);
    await facilityDelivered(app.deps, facilityAuth, id, null, { idempotencyKey: 'l-4' });
    const delivered = await step(`/${id}/delivered`, 'l-4');
    expect([delivered.status, delivered.body.status]).toEqual([200, 'delivered']);

    expect((await mailEvents(app, id)).map((e) => e.event_type)).toEqual([
      'mail.submitted',
      'mail.ready',
      'mail.mailed',
      'mail.delivered',
    ]);
    expect((await ledger(app, id)).map((l) => l.kind)).toEqual(['debit']);
    const photos = await app.deps.db.query(
      `SELECT category FROM outbound_mail_photos WHERE outbound_mail_id = $1 ORDER BY category`,
      [id],
    );
    expect(photos.map((p: { category: string }) => p.category)).toEqual(['envelope', 'pages', 'receipt']);
  });

  it('fails a piece and reports a carrier failure once each: one refund, one mail.failed', async () => {
    const s = await newSender(app, { facilityId: facility.facility_id, creditsCents: 100000 });
    const unprintable = (await sendLetter(app, s, letterForm(await letterPdf()))).body;
    await twice(`/${unprintable.id}/failed`, 'f-1', { json: { message: 'Document unreadable' } });
    await facilityFailed(app.deps, facilityAuth, unprintable.id, 'Document unreadable', { idempotencyKey: 'f-1' });
    expect((await ledger(app, unprintable.id)).map((l) => l.kind)).toEqual(['debit', 'refund']);
    expect(await balance(app, s.memberId)).toBe(100000);
    expect((await mailEvents(app, unprintable.id)).map((e) => e.event_type)).toEqual(['mail.submitted', 'mail.failed']);

    const lost = (await sendLetter(app, s, letterForm(await letterPdf(), { mail_class: 'carrierx_ground' }))).body;
    await step(`/${lost.id}/printed`, 'c-1', {
      form: () =>
        photoForm({ pages: sandboxPhotoPng('pages', lost.id), envelope: sandboxPhotoPng('envelope', lost.id) }),
    });
    await step(`/${lost.id}/dispatched`, 'c-2', {
      form: () =>
        photoForm(
          { receipt: sandboxPhotoPng('receipt', lost.id) },
          { carrier: 'carrierx', tracking_number: 'CX9', dispatch_method: 'carrier_pickup' },
        ),
    });
    await facilityCarrierDeliveryFailed(app.deps, facilityAuth, lost.id, 'Address not found', {
      idempotencyKey: 'c-3',
    });
    expect(
      (await twice(`/${lost.id}/carrier-delivery-failed`, 'c-3', { json: { message: 'Address not found' } })).status,
    ).toBe('failed');
    expect((await mailEvents(app, lost.id)).map((e) => e.event_type)).toEqual([
      'mail.submitted',
      'mail.ready',
      'mail.mailed',
      'mail.failed',
    ]);
    expect((await ledger(app, lost.id)).map((l) => l.kind)).toEqual(['debit']);
  });

  it('starts, marks and finishes a batch once when every step is retried, also after a lost answer', async () => {
    const member = await newMember(app.deps, { creditsCents: 100000 });
    const created = await api(app)('POST', '/v1/batch-mail', {
      key: member.key,
      form: batchForm(await pdf(1), recipientsCsv(20)),
    });
    const id = created.body.batch.id;
    expect(
      (
        await api(app)('POST', `/v1/batch-mail/${id}/confirm`, {
          key: member.key,
          headers: { 'idempotency-key': 'b-0' },
        })
      ).status,
    ).toBe(200);
    await waitForStatus(app.baseUrl, member.key, id, ['submitted']);
    const [{ facility_id: facilityId }] = await app.deps.db.query(`SELECT facility_id FROM batches WHERE id = $1`, [
      id,
    ]);
    const key = await facilityKeyFor(app.deps, facilityId);
    const batchAuth = await authenticate(app.deps, `Bearer ${key}`);
    const fac = (suffix: string, idem: string, json?: unknown) =>
      api(app)('POST', `/v1/facility/batches/${id}${suffix}`, { key, json, headers: { 'idempotency-key': idem } });
    const charged = await batchLedger(app.deps, id);
    expect(charged).toHaveLength(1);

    // Lost answers: the service applied each step, then the app retries over HTTP with the same key.
    await startFacilityBatch(app.deps, batchAuth, id, { idempotencyKey: 'b-1' });
    expect((await fac('/start', 'b-1')).body.batch.status).toBe('in_progress');
    const marked = await markFacilityBatchPieces(
      app.deps,
      batchAuth,
      id,
      { status: 'mailed', ranges: [{ from: 1, to: 15 }] },
      { idempotencyKey: 'b-2' },
    );
    const markedAgain = await fac('/pieces', 'b-2', { status: 'mailed', ranges: [{ from: 1, to: 15 }] });
    expect([marked.updated, markedAgain.body.updated]).toEqual([15, 15]);
    const failedPieces = await fac('/pieces', 'b-3', { status: 'failed', sequences: [16, 17] });
    expect((await fac('/pieces', 'b-3', { status: 'failed', sequences: [16, 17] })).body).toEqual(failedPieces.body);
    const reused = await fac('/pieces', 'b-3', { status: 'failed', sequences: [18] });
    expect([reused.status, reused.body.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
    await finishFacilityBatch(app.deps, batchAuth, id, { facility_notes: 'done' }, { idempotencyKey: 'b-4' });
    const finished = await fac('/finish', 'b-4', { facility_notes: 'done' });
    expect(finished.status).toBe(200);
    expect(finished.body.batch).toMatchObject({ status: 'partially_completed', pieces: { mailed: 15, failed: 5 } });
    expect((await fac('/finish', 'b-4', { facility_notes: 'done' })).body).toEqual(finished.body);

    // 5 of 20 unmailed: one partial refund, once.
    expect((await batchLedger(app.deps, id)).map((l) => l.kind)).toEqual(['debit', 'refund']);
    const events = await app.deps.db.query(`SELECT event_type FROM events WHERE object_id = $1 ORDER BY created_at`, [
      id,
    ]);
    expect(events.map((e: { event_type: string }) => e.event_type)).toEqual([
      'batch.submitted',
      'batch.partially_completed',
    ]);
  });

  describe('physical inbound', () => {
    let w: World;
    beforeAll(async () => {
      w = await newWorld(app);
      // The member's new conversations go to its assigned facility: this suite's.
      await assignMemberFacility(app.deps, w.memberId, facility.facility_id);
    });
    const agentHeaders = { 'x-service-md-version': '1' };
    const call = (method: string, path: string, idem: string, opts: { json?: unknown; form?: () => FormData } = {}) =>
      api(app)(method, path, {
        key: w.facilityKey,
        headers: { 'idempotency-key': idem },
        ...(opts.json ? { json: opts.json } : {}),
        ...(opts.form ? { form: opts.form() } : {}),
      });
    async function again(
      method: string,
      path: string,
      idem: string,
      opts: { json?: unknown; form?: () => FormData } = {},
    ) {
      const first = await call(method, path, idem, opts);
      const second = await call(method, path, idem, opts);
      expect(first.status).toBeLessThan(300);
      expect(second.status).toBe(first.status);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.body).toEqual(first.body);
      return first.body;
    }

    it('takes a letter in (identify, draft, label, photo, match, commit) once when every call is sent twice', async () => {
      const identified = await again('POST', '/v1/facility/mailboxes/identify', 'i-1', {
        json: { mailbox_id: w.mailboxId },
      });
      expect(identified.matches[0].mailbox_id).toBe(w.mailboxId);
      const [{ n: draftsBefore }] = await app.deps.db.query(
        `SELECT count(*)::int AS n FROM inbound_drafts WHERE facility_id = $1`,
        [w.facilityId],
      );
      const draft = (
        await again('POST', '/v1/facility/inbound/drafts', 'i-2', {
          json: { kind: 'letter', carrier: 'usps', sender_name: 'Acme' },
        })
      ).draft;
      const [{ n: draftsAfter }] = await app.deps.db.query(
        `SELECT count(*)::int AS n FROM inbound_drafts WHERE facility_id = $1`,
        [w.facilityId],
      );
      expect(draftsAfter).toBe(draftsBefore + 1);
      const put = (
        await again('PUT', `/v1/facility/inbound/drafts/${draft.id}`, 'i-3', {
          json: {
            kind: 'letter',
            carrier: 'usps',
            sender_name: 'Acme',
            recipient_name: 'Test Member',
            expected_version: draft.version,
          },
        })
      ).draft;
      const photo = await again('POST', `/v1/facility/inbound/drafts/${draft.id}/exterior`, 'i-4', {
        form: () => exteriorForm(),
      });
      expect(photo.draft.photos).toHaveLength(1);
      expect(put.version).toBeLessThan(photo.draft.version);
      const matched = (
        await again('POST', `/v1/facility/inbound/drafts/${draft.id}/match`, 'i-5', {
          json: { mailbox_id: w.mailboxId, expected_version: photo.draft.version },
        })
      ).draft;
      const committed = await again('POST', `/v1/facility/inbound/drafts/${draft.id}/commit`, 'i-6', {
        json: { expected_version: matched.version },
      });
      const itemId = committed.item.id;
      await waitFor(
        async () => (await eventsOf(app, [itemId])).some((e) => e.event_type === 'inbound.received'),
        'inbound.received',
      );
      const [{ n: items }] = await app.deps.db.query(
        `SELECT count(*)::int AS n FROM physical_inbound_items WHERE id = $1`,
        [itemId],
      );
      expect(items).toBe(1);
      expect((await eventsOf(app, [itemId])).filter((e) => e.event_type === 'inbound.received')).toHaveLength(1);
    });

    it('fulfils and rejects scan requests and records package action progress once each', async () => {
      const itemId = await receivePiece(app, w);
      const askScan = () =>
        api(app)('POST', `/v1/packages/${itemId}/scan`, {
          key: w.agentKey,
          headers: agentHeaders,
          json: { scan_type: 'document' },
        });
      expect((await askScan()).status).toBe(201);
      const open = async () =>
        (await api(app)('GET', '/v1/facility/scan-requests', { key: w.facilityKey })).body.scan_requests.filter(
          (r: { item_id: string; status: string }) => r.item_id === itemId && r.status === 'requested',
        );
      const [request] = await open();
      const pages = () => {
        const form = new FormData();
        form.append(
          'page_1',
          new Blob([fixtureImage('facility-scan-letter.png')], { type: 'image/png' }),
          'page-1.png',
        );
        return form;
      };
      const fulfilled = await again('POST', `/v1/facility/scan-requests/${request.id}/fulfil`, 's-1', { form: pages });
      const [{ n: bundles }] = await app.deps.db.query(
        `SELECT count(*)::int AS n FROM scan_bundles WHERE item_id = $1`,
        [itemId],
      );
      expect(bundles).toBe(1);
      expect(fulfilled.bundle.id).toEqual(expect.any(String));

      expect((await askScan()).status).toBe(201);
      const [second] = await open();
      const rejected = await again('POST', `/v1/facility/scan-requests/${second.id}/reject`, 's-2', {
        json: { reason: 'Envelope is sealed with tape' },
      });
      expect(rejected.scan_request.status).toBe('rejected');

      const hold = await api(app)('POST', `/v1/packages/${itemId}/actions`, {
        key: w.agentKey,
        headers: agentHeaders,
        json: { action: 'hold' },
      });
      expect(hold.status).toBe(201);
      const actions = (
        await api(app)('GET', '/v1/facility/package-actions', { key: w.facilityKey })
      ).body.actions.filter(
        (a: { package_id: string; action: string }) => a.package_id === itemId && a.action === 'hold',
      );
      const progressed = await again('POST', `/v1/facility/package-actions/${actions[0].id}/status`, 's-3', {
        json: { status: 'completed', expected_version: actions[0].version },
      });
      expect(progressed.action.status).toBe('completed');
    });

    it('decides a handling operation once per key, also when the first answer was lost after the workflow applied it', async () => {
      const itemId = await receivePiece(app, w);
      const handling = await api(app)('GET', `/v1/agent-inbox/${itemId}/handling`, { key: w.agentKey });
      const proposed = await api(app)('POST', `/v1/agent-inbox/${itemId}/handling`, {
        key: w.agentKey,
        headers: { ...agentHeaders, 'idempotency-key': 'h-0' },
        json: {
          action_type: 'forward_original',
          expected_version: handling.body.version,
          confirmed: false,
          destructive_confirmed: false,
          mail_class: 'priority',
          untracked_acknowledged: false,
          destination: {
            name: 'Ada',
            address_line1: '1 Main St',
            address_line2: null,
            city: 'Austin',
            state: 'TX',
            postal_code: '78701',
            country: 'US',
          },
        },
      });
      const opId = proposed.body.operation.id;
      const balanceBefore = await balance(app, w.memberId);
      expect(
        (await api(app)('POST', `/v1/handling/${opId}/approve`, { key: w.memberKey, json: { expected_version: 1 } }))
          .status,
      ).toBe(200);
      const charged = balanceBefore - (await balance(app, w.memberId));
      expect(charged).toBeGreaterThan(0);

      const facilityOf = await authenticate(app.deps, `Bearer ${w.facilityKey}`);
      const decision = (json: Record<string, unknown>, idem: string) =>
        call('POST', `/v1/facility/internal-inbound/handling/${opId}/decision`, idem, { json });
      // accept: applied by the service, answer lost; the app's retry answers 200, not 409.
      const first = await decideFacilityHandling(
        app.deps,
        facilityOf,
        opId,
        { decision: 'accept', expected_version: 2 },
        { idempotencyKey: 'h-1' },
      );
      const retried = await decision({ decision: 'accept', expected_version: 2 }, 'h-1');
      expect([retried.status, retried.body.operation]).toEqual([200, first.operation]);
      // A new key for the same step is refused as before.
      expect((await decision({ decision: 'accept', expected_version: 2 }, 'h-1b')).status).toBe(409);
      // complete finishes the workflow; the lost-answer retry still answers the first outcome.
      const completeBody = {
        decision: 'complete' as const,
        expected_version: 3,
        tracking_number: '9400100000000000000099',
      };
      await decideFacilityHandling(app.deps, facilityOf, opId, completeBody, { idempotencyKey: 'h-2' });
      const completed = await decision(completeBody, 'h-2');
      expect([completed.status, completed.body.operation.status, completed.body.operation.version]).toEqual([
        200,
        'completed',
        4,
      ]);
      expect((await decision(completeBody, 'h-2')).body).toEqual(completed.body);

      expect(balanceBefore - (await balance(app, w.memberId))).toBe(charged);
      const events = await waitFor(async () => {
        const rows = await eventsOf(app, [itemId, opId]);
        return rows.some((e) => e.event_type === 'inbound.action_completed') ? rows : null;
      }, 'inbound.action_completed');
      expect(events.filter((e) => e.event_type === 'inbound.action_completed')).toHaveLength(1);
    });

    it('answers a conversation once when the answer is sent twice', async () => {
      const opened = await api(app)('POST', '/v1/facility-messages', {
        key: w.memberKey,
        json: { body: 'Is my parcel in?', subject: 'Parcel' },
      });
      expect(opened.status).toBe(201);
      const conversationId = opened.body.message.conversation_id;
      const answer = () =>
        api(app)('POST', `/v1/facility/conversations/${conversationId}/messages`, {
          key: facility.key,
          headers: { 'idempotency-key': 'm-1' },
          json: { body: 'Yes, it arrived this morning.' },
        });
      const [first, second] = [await answer(), await answer()];
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(second.body).toEqual(first.body);
      const thread = await api(app)('GET', `/v1/facility/conversations/${conversationId}/messages`, {
        key: facility.key,
      });
      expect(
        thread.body.messages.filter((m: { body: string }) => m.body === 'Yes, it arrived this morning.'),
      ).toHaveLength(1);
    });
  });
});

describe('with no worker polling the task queue', () => {
  let app: TestApp;
  let facility: { facility_id: string; key: string };
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  let connection: { close(): Promise<void> } | undefined;
  beforeAll(async () => {
    app = await startTestApp({ worker: false, env: { WORKFLOW_UPDATE_DEADLINE_MS: '2000' } });
    facility = await createFacility(app.deps, 'Night Shift Facility');
  });
  afterAll(async () => {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running?.catch(() => undefined);
    await connection?.close();
    await app.close();
  });

  it('answers approve, cancel and a facility step 503 WORKFLOW_UNAVAILABLE, then applies each retry once when a worker runs', async () => {
    const pendingSender = await newSender(app, {
      facilityId: facility.facility_id,
      creditsCents: 100000,
      credential: { force_approval: true },
    });
    const pending = (await sendLetter(app, pendingSender, letterForm(await letterPdf()))).body;
    expect(pending.status).toBe('pending_approval');
    const s = await newSender(app, { facilityId: facility.facility_id, creditsCents: 100000 });
    const toCancel = (await sendLetter(app, s, letterForm(await letterPdf()))).body;
    const toPrint = (await sendLetter(app, s, letterForm(await letterPdf()))).body;
    expect([toCancel.status, toPrint.status]).toEqual(['submitted', 'submitted']);

    const approve = () =>
      api(app)('POST', `/v1/mail/${pending.id}/approve`, {
        key: pendingSender.memberKey,
        headers: { 'idempotency-key': 'night-1' },
      });
    const cancel = () =>
      api(app)('DELETE', `/v1/mail/${toCancel.id}`, {
        key: s.key,
        headers: { ...s.headers, 'idempotency-key': 'night-2' },
      });
    const printing = () =>
      api(app)('POST', `/v1/facility/mail/${toPrint.id}/printing`, {
        key: facility.key,
        headers: { 'idempotency-key': 'night-3' },
      });

    for (const res of [await approve(), await cancel(), await printing()]) {
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 'WORKFLOW_UNAVAILABLE', retryable: true, details: { deadline_ms: 2000 } });
      expect(res.body.suggested_action).toMatch(/same Idempotency-Key/);
    }
    const statuses = async () =>
      (
        await app.deps.db.query(`SELECT id, status FROM outbound_mail WHERE id = ANY($1) ORDER BY created_at`, [
          [pending.id, toCancel.id, toPrint.id],
        ])
      ).map((r: { status: string }) => r.status);
    expect(await statuses()).toEqual(['pending_approval', 'submitted', 'submitted']);
    expect(await ledger(app, pending.id)).toEqual([]);

    const created = await createWorker(app.deps, {
      workflowBundlePath: process.env.WORKFLOW_BUNDLE_PATH,
      taskQueue: app.deps.config.taskQueue,
    });
    worker = created.worker;
    connection = created.connection;
    running = worker.run();

    const approved = await approve();
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      outbound_mail: { status: 'submitted' },
      credits_charged_cents: pending.credits_required_cents,
    });
    const cancelled = await cancel();
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      outbound_mail: { status: 'cancelled' },
      refunded_credits_cents: toCancel.cost_cents,
      already_cancelled: false,
    });
    const printed = await printing();
    expect(printed.status).toBe(200);
    expect(printed.body.printing_started_at).not.toBeNull();
    // Each retry again replays the answer.
    for (const [retry, first] of [
      [approve, approved],
      [cancel, cancelled],
      [printing, printed],
    ] as const) {
      expect((await retry()).body).toEqual(first.body);
    }

    expect(await statuses()).toEqual(['submitted', 'cancelled', 'submitted']);
    expect((await ledger(app, pending.id)).map((l) => l.kind)).toEqual(['debit']);
    expect((await ledger(app, toCancel.id)).map((l) => l.kind)).toEqual(['debit', 'refund']);
    expect((await ledger(app, toPrint.id)).map((l) => l.kind)).toEqual(['debit']);
    await waitFor(async () => (await mailEvents(app, toCancel.id)).length >= 2, "the cancelled piece's events");
    expect((await mailEvents(app, toCancel.id)).map((e) => e.event_type)).toEqual(['mail.submitted', 'mail.cancelled']);
    expect((await mailEvents(app, pending.id)).map((e) => e.event_type)).toEqual([
      'mail.pending_approval',
      'mail.submitted',
    ]);
    expect(await balance(app, s.memberId)).toBe(100000 - toPrint.cost_cents);
  });
});
