// The refusals of a facility's steps, each on an object brought to the step: 422
// IDEMPOTENCY_KEY_REUSED for a step sent again under the same Idempotency-Key with another
// body (or for another object), which changes nothing and leaves the first answer to be
// replayed; 409 for a step the object is past; 404 for a multipart step naming no piece or draft.
import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { HttpResponse } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgentWithKey } from '../helpers/agents';
import { createFacility } from '../../services/accounts/accounts';
import { sandboxPhotoPng } from '../../services/outbound-mail/sandbox';
import { fixtureImage, newWorld, photoForm as exteriorForm, receivePiece, World } from '../helpers/physical-inbound';
import { api, letterForm, letterPdf, mailEvents, newSender, sendLetter, Sender } from './mail-helpers';
import { batchForm, facilityKeyFor, ledger, pdf, recipientsCsv, waitForStatus } from './batch-helpers';

function photoForm(photos: Record<string, Buffer>, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const [k, v] of Object.entries(photos))
    form.append(k, new Blob([new Uint8Array(v)], { type: 'image/png' }), `${k}.png`);
  return form;
}

function expectCode(res: HttpResponse, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
}

const expectReused = (res: HttpResponse) => expectCode(res, 422, 'IDEMPOTENCY_KEY_REUSED');

describe('refused facility steps', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  describe('outbound pieces', () => {
    let facility: { facility_id: string; key: string };
    let s: Sender;
    beforeAll(async () => {
      facility = await createFacility(app.deps, 'Refusing Facility');
      s = await newSender(app, { facilityId: facility.facility_id, creditsCents: 100000 });
    });
    const send = async (mailClass = 'first_class') => {
      const res = await sendLetter(app, s, letterForm(await letterPdf(), { mail_class: mailClass }));
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const step = (id: string, suffix: string, key: string | null, opts: { form?: FormData; json?: unknown } = {}) =>
      api(app)('POST', `/v1/facility/mail/${id}${suffix}`, {
        key: facility.key,
        headers: key ? { 'idempotency-key': key } : {},
        ...opts,
      });
    const pieceStatus = async (id: string) =>
      (await app.deps.db.query(`SELECT status FROM outbound_mail WHERE id = $1`, [id]))[0].status as string;
    const pagesOf = (id: string, seed = id) => ({
      pages: sandboxPhotoPng('pages', seed),
      envelope: sandboxPhotoPng('envelope', id),
    });
    const dispatchForm = (id: string, carrier = 'usps') =>
      photoForm(
        { receipt: sandboxPhotoPng('receipt', id) },
        { carrier, tracking_number: '9400100000000000000555', dispatch_method: 'drop_box' },
      );

    it('refuses each step under a reused Idempotency-Key with another request, and replays the first answer', async () => {
      const a = await send('priority');
      const b = await send('priority');
      const other = await send();
      const k = (step_: string) => `${step_}-${a}`;

      const printing = await step(a, '/printing', k('printing'));
      expect(printing.status).toBe(200);
      expectReused(await step(other, '/printing', k('printing')));
      expect((await step(a, '/printing', k('printing'))).body).toEqual(printing.body);

      const printed = await step(a, '/printed', k('printed'), { form: photoForm(pagesOf(a)) });
      expect(printed.body.status).toBe('ready');
      expectReused(await step(a, '/printed', k('printed'), { form: photoForm(pagesOf(a, other)) }));

      expect((await step(a, '/dispatched', k('dispatched'), { form: dispatchForm(a) })).body.status).toBe('mailed');
      expectReused(await step(a, '/dispatched', k('dispatched'), { form: dispatchForm(a, 'ups') }));

      const delivered = await step(a, '/delivered', k('delivered'));
      expect(delivered.body.status).toBe('delivered');
      expectReused(
        await step(a, '/delivered', k('delivered'), {
          form: photoForm({ delivery: sandboxPhotoPng('delivery', a) }),
        }),
      );
      const replayed = await step(a, '/delivered', k('delivered'));
      expect([replayed.headers.get('idempotent-replayed'), replayed.body]).toEqual(['true', delivered.body]);

      // The carrier reports b undeliverable once it is mailed.
      expect((await step(b, '/printing', null)).status).toBe(200);
      expect((await step(b, '/printed', null, { form: photoForm(pagesOf(b)) })).status).toBe(200);
      expect((await step(b, '/dispatched', null, { form: dispatchForm(b) })).status).toBe(200);
      const undelivered = await step(b, '/carrier-delivery-failed', k('undelivered'), {
        json: { message: 'No such street' },
      });
      expect(undelivered.status).toBe(200);
      expectReused(
        await step(b, '/carrier-delivery-failed', k('undelivered'), { json: { message: 'Recipient moved' } }),
      );

      const failed = await step(other, '/failed', k('failed'), { json: { message: 'Paper jam' } });
      expect(failed.body.status).toBe('failed');
      expectReused(await step(other, '/failed', k('failed'), { json: { message: 'Toner empty' } }));

      expect(await pieceStatus(a)).toBe('delivered');
      expect(await pieceStatus(other)).toBe('failed');
      expect((await mailEvents(app, a)).map((e) => e.event_type)).toEqual([
        'mail.submitted',
        'mail.ready',
        'mail.mailed',
        'mail.delivered',
      ]);
    });

    it('refuses with 409 the steps of a piece the sender cancelled', async () => {
      const id = await send();
      const cancelled = await api(app)('DELETE', `/v1/mail/${id}`, { key: s.key, headers: s.headers });
      expect(cancelled.body.outbound_mail?.status).toBe('cancelled');
      const refusals = [
        await step(id, '/printing', null),
        await step(id, '/printed', null, { form: photoForm(pagesOf(id)) }),
        await step(id, '/delivered', null),
        await step(id, '/carrier-delivery-failed', null, { json: {} }),
        await step(id, '/failed', null, { json: { message: 'Paper jam' } }),
      ];
      for (const res of refusals) {
        expectCode(res, 409, 'MAIL_STATE_CONFLICT');
        expect(res.body.details).toMatchObject({ status: 'cancelled' });
      }
      expect(await pieceStatus(id)).toBe('cancelled');
      const photos = await app.deps.db.query(`SELECT 1 FROM outbound_mail_photos WHERE outbound_mail_id = $1`, [id]);
      expect(photos).toEqual([]);
    });

    it('answers 404 to a multipart step naming no piece', async () => {
      const unknown = randomUUID();
      expectCode(await step(unknown, '/printed', null, { form: photoForm(pagesOf(unknown)) }), 404, 'NOT_FOUND');
      expectCode(await step(unknown, '/dispatched', null, { form: dispatchForm(unknown) }), 404, 'NOT_FOUND');
      expectCode(
        await step(unknown, '/delivered', null, {
          form: photoForm({ delivery: sandboxPhotoPng('delivery', unknown) }),
        }),
        404,
        'NOT_FOUND',
      );
    });
  });

  describe('batches', () => {
    it('refuses reused keys, and starting or failing a batch that is finished', async () => {
      const member = await newMember(app.deps, { creditsCents: 100000 });
      const submitted = async () => {
        const created = await api(app)('POST', '/v1/batch-mail', {
          key: member.key,
          form: batchForm(await pdf(1), recipientsCsv(4)),
        });
        const id = created.body.batch.id as string;
        expect((await api(app)('POST', `/v1/batch-mail/${id}/confirm`, { key: member.key })).status).toBe(200);
        await waitForStatus(app.baseUrl, member.key, id, ['submitted']);
        const [row] = await app.deps.db.query(`SELECT facility_id FROM batches WHERE id = $1`, [id]);
        keys[row.facility_id] ??= await facilityKeyFor(app.deps, row.facility_id);
        return { id, key: keys[row.facility_id] };
      };
      // One key per facility: an Idempotency-Key belongs to the key that sent it.
      const keys: Record<string, string> = {};
      const one = await submitted();
      const two = await submitted();
      expect(two.key).toBe(one.key);
      const fac = (b: { id: string; key: string }, suffix: string, key: string | null, json?: unknown) =>
        api(app)('POST', `/v1/facility/batches/${b.id}${suffix}`, {
          key: b.key,
          json,
          headers: key ? { 'idempotency-key': key } : {},
        });
      const k = (s: string) => `${s}-${one.id}`;

      expect((await fac(one, '/start', k('start'))).body.batch.status).toBe('in_progress');
      // The same key for another batch.
      expectReused(await fac(two, '/start', k('start')));
      expect((await fac(two, '/start', null)).body.batch.status).toBe('in_progress');

      const marked = await fac(one, '/pieces', k('pieces'), { status: 'mailed', ranges: [{ from: 1, to: 4 }] });
      expect(marked.body.updated).toBe(4);
      expectReused(await fac(one, '/pieces', k('pieces'), { status: 'failed', ranges: [{ from: 1, to: 4 }] }));

      const finished = await fac(one, '/finish', k('finish'), { facility_notes: 'All out' });
      expect(finished.body.batch.status).toBe('completed');
      expectReused(await fac(one, '/finish', k('finish'), { facility_notes: 'Something else' }));

      // Past the step: a completed batch is neither started again nor failed.
      const restart = await fac(one, '/start', null);
      expectCode(restart, 409, 'BATCH_STATE_CONFLICT');
      expect(restart.body.details).toMatchObject({ status: 'completed' });
      expectCode(await fac(one, '/fail', null, { error_message: 'Too late' }), 409, 'BATCH_STATE_CONFLICT');

      const failed = await fac(two, '/fail', k('fail'), { error_message: 'Press broke down' });
      expect(failed.body.batch.status).toBe('failed');
      expectReused(await fac(two, '/fail', k('fail'), { error_message: 'Out of paper' }));

      // One debit each, one full refund for the failed batch, nothing more.
      expect((await ledger(app.deps, one.id)).map((l) => l.kind)).toEqual(['debit']);
      expect((await ledger(app.deps, two.id)).map((l) => l.kind)).toEqual(['debit', 'refund']);
    });
  });

  describe('physical inbound', () => {
    let w: World;
    beforeAll(async () => {
      w = await newWorld(app, { creditsCents: 100000 });
    });
    const post = (path: string, key: string | null, opts: { json?: unknown; form?: FormData } = {}) =>
      api(app)('POST', path, { key: w.facilityKey, headers: key ? { 'idempotency-key': key } : {}, ...opts });

    it('refuses reused keys through intake, and a photo for a committed or unknown draft', async () => {
      const k = (s: string) => `${s}-${w.mailboxId}`;
      const identified = await post('/v1/facility/mailboxes/identify', k('identify'), {
        json: { mailbox_id: w.mailboxId },
      });
      expect(identified.status).toBe(200);
      expectReused(
        await post('/v1/facility/mailboxes/identify', k('identify'), { json: { recipient_name: 'Nobody' } }),
      );

      const fields = { kind: 'letter', carrier: 'usps', sender_name: 'Acme Insurance', recipient_name: 'Test Member' };
      const created = await post('/v1/facility/inbound/drafts', k('draft'), { json: fields });
      expect(created.status).toBe(201);
      expectReused(await post('/v1/facility/inbound/drafts', k('draft'), { json: { ...fields, kind: 'parcel' } }));
      const id = created.body.draft.id as string;

      const put = (key: string, senderName: string, version: number) =>
        api(app)('PUT', `/v1/facility/inbound/drafts/${id}`, {
          key: w.facilityKey,
          headers: { 'idempotency-key': key },
          json: { ...fields, sender_name: senderName, expected_version: version },
        });
      const updated = await put(k('put'), 'Acme Bank', created.body.draft.version);
      expect(updated.status).toBe(200);
      expectReused(await put(k('put'), 'Other Bank', created.body.draft.version));

      const photo = await post(`/v1/facility/inbound/drafts/${id}/exterior`, k('photo'), { form: exteriorForm() });
      expect(photo.status).toBe(201);
      expectReused(
        await post(`/v1/facility/inbound/drafts/${id}/exterior`, k('photo'), {
          form: exteriorForm('sample-envelope.png', 'label'),
        }),
      );

      const version = photo.body.draft.version as number;
      const matched = await post(`/v1/facility/inbound/drafts/${id}/match`, k('match'), {
        json: { mailbox_id: w.mailboxId, expected_version: version },
      });
      expect(matched.status).toBe(200);
      expectReused(
        await post(`/v1/facility/inbound/drafts/${id}/match`, k('match'), {
          json: { mailbox_id: w.mailboxId, agent_id: w.otherAgentId, expected_version: version },
        }),
      );

      const committed = await post(`/v1/facility/inbound/drafts/${id}/commit`, k('commit'), {
        json: { expected_version: matched.body.draft.version },
      });
      expect(committed.status).toBe(201);
      expectReused(
        await post(`/v1/facility/inbound/drafts/${id}/commit`, k('commit'), {
          json: { expected_version: matched.body.draft.version + 1 },
        }),
      );
      const items = await app.deps.db.query(`SELECT id FROM physical_inbound_items WHERE id = $1`, [
        committed.body.item.id,
      ]);
      expect(items).toHaveLength(1);

      const late = await post(`/v1/facility/inbound/drafts/${id}/exterior`, null, { form: exteriorForm() });
      expect(late.status).toBe(409);
      expect(
        (await post(`/v1/facility/inbound/drafts/${randomUUID()}/exterior`, null, { form: exteriorForm() })).status,
      ).toBe(404);
    });

    it('refuses reused keys on decisions and scan requests, and rejecting a fulfilled scan request', async () => {
      const item = await receivePiece(app, w);
      const version = (await api(app)('GET', `/v1/agent-inbox/${item}/handling`, { key: w.agentKey })).body.version;
      const proposed = await api(app)('POST', `/v1/agent-inbox/${item}/handling`, {
        key: w.agentKey,
        headers: { 'x-service-md-version': '1', 'idempotency-key': `propose-${item}` },
        json: { expected_version: version, action_type: 'open_and_scan' },
      });
      const op = proposed.body.operation;
      const approved = await api(app)('POST', `/v1/handling/${op.id}/approve`, {
        key: w.memberKey,
        json: { expected_version: op.version },
      });
      const decide = (key: string, json: Record<string, unknown>) =>
        post(`/v1/facility/internal-inbound/handling/${op.id}/decision`, key, { json });
      const k = (s: string) => `${s}-${op.id}`;
      const accepted = await decide(k('decide'), {
        decision: 'accept',
        expected_version: approved.body.operation.version,
      });
      expect(accepted.status).toBe(200);
      expectReused(
        await decide(k('decide'), {
          decision: 'reject',
          reason: 'Cannot open',
          expected_version: approved.body.operation.version,
        }),
      );
      const scanRequest = accepted.body.operation.scan_request_id as string;

      const scanForm = (file: string) => {
        const form = new FormData();
        form.append('page_1', new Blob([fixtureImage(file)], { type: 'image/png' }), 'p1.png');
        form.append('source_kinds', 'letter');
        return form;
      };
      const fulfilled = await post(`/v1/facility/scan-requests/${scanRequest}/fulfil`, k('fulfil'), {
        form: scanForm('sample-letter.png'),
      });
      expect(fulfilled.status).toBe(201);
      expectReused(
        await post(`/v1/facility/scan-requests/${scanRequest}/fulfil`, k('fulfil'), {
          form: scanForm('sample-envelope.png'),
        }),
      );

      const reject = (key: string, reason: string) =>
        post(`/v1/facility/scan-requests/${scanRequest}/reject`, key, { json: { reason } });
      const tooLate = await reject(k('reject'), 'Unreadable');
      expect(tooLate.status).toBe(409);
      expectReused(await reject(k('reject'), 'Torn'));
      const [row] = await app.deps.db.query(`SELECT status FROM scan_requests WHERE id = $1`, [scanRequest]);
      expect(row.status).not.toBe('rejected');
    });

    it('refuses a reused key on a package action status', async () => {
      // The first answer (a 404 here) is stored under the key like any other.
      const path = `/v1/facility/package-actions/${randomUUID()}/status`;
      const first = await post(path, `status-${w.mailboxId}`, { json: { status: 'in_progress', expected_version: 1 } });
      expect(first.status).toBe(404);
      expectReused(await post(path, `status-${w.mailboxId}`, { json: { status: 'completed', expected_version: 1 } }));
      const replayed = await post(path, `status-${w.mailboxId}`, {
        json: { status: 'in_progress', expected_version: 1 },
      });
      expect([replayed.status, replayed.headers.get('idempotent-replayed')]).toEqual([404, 'true']);
      // The replayed refusal is an error body like any other, with the id of the request it answers.
      expect(replayed.body).toMatchObject({ code: first.body.code, request_id: expect.any(String) });
      expect(replayed.body.request_id).not.toBe(first.body.request_id);
    });
  });

  describe('facility conversations', () => {
    it("reads a member agent's conversation and refuses a reused key on an answer", async () => {
      const member = await newMember(app.deps);
      const { credential } = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['message.send'] });
      const sent = await api(app)('POST', '/v1/facility-messages', {
        key: credential.key,
        headers: { 'x-service-md-version': '1' },
        json: { body: 'Please fold in thirds.', subject: 'Folding' },
      });
      expect(sent.status).toBe(201);
      const conversation = sent.body.conversation;
      const key = await facilityKeyFor(app.deps, conversation.facility_id);

      const read = await api(app)('GET', `/v1/facility/conversations/${conversation.id}/messages`, { key });
      expect(read.status).toBe(200);
      expect(read.body.messages).toEqual([
        expect.objectContaining({ sender_type: 'agent', body: 'Please fold in thirds.' }),
      ]);

      const answer = (body: string) =>
        api(app)('POST', `/v1/facility/conversations/${conversation.id}/messages`, {
          key,
          headers: { 'idempotency-key': `answer-${conversation.id}` },
          json: { body },
        });
      expect((await answer('Will do.')).status).toBe(201);
      expectReused(await answer('Will not.'));
      const after = await api(app)('GET', `/v1/facility/conversations/${conversation.id}/messages`, { key });
      expect(after.body.messages.map((m: { body: string }) => m.body)).toEqual(['Please fold in thirds.', 'Will do.']);
    });
  });
});
