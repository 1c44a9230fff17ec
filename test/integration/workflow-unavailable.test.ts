// Every route that waits on an object's workflow (a Temporal Update) answers 503
// WORKFLOW_UNAVAILABLE, retryable, once no worker accepts the Update within
// WORKFLOW_UPDATE_DEADLINE_MS, and changes nothing: objects are brought to the state each
// step follows while a worker runs, then the worker stops and every step is sent.
import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { HttpResponse } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { createFacility } from '../../services/accounts/accounts';
import { sandboxPhotoPng } from '../../services/outbound-mail/sandbox';
import { setMemberRunSettings } from '../../services/mail-runs/mail-runs';
import { newWorld, receivePiece, World } from '../helpers/physical-inbound';
import { api, balance, letterForm, letterPdf, newSender, sendLetter, Sender, waitFor } from './mail-helpers';
import { batchForm, facilityKeyFor, pdf, recipientsCsv, testKeyFor, waitForStatus } from './batch-helpers';

const DEADLINE_MS = 1500;

function photoForm(photos: Record<string, Buffer>, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const [k, v] of Object.entries(photos))
    form.append(k, new Blob([new Uint8Array(v)], { type: 'image/png' }), `${k}.png`);
  return form;
}

function expectUnavailable(res: HttpResponse, what: string) {
  expect({ what, status: res.status }).toEqual({ what, status: 503 });
  expect(res.body).toMatchObject({
    code: 'WORKFLOW_UNAVAILABLE',
    retryable: true,
    details: { deadline_ms: DEADLINE_MS },
  });
  expect(res.body.suggested_action).toMatch(/same Idempotency-Key/);
  expect(typeof res.body.request_id).toBe('string');
}

describe('Update-backed routes while no worker polls the task queue', () => {
  let app: TestApp;
  let facility: { facility_id: string; key: string };
  // Outbound pieces, each in the state the step sent to it follows.
  let sender: Sender;
  let pendingSender: Sender;
  let testSender: Sender;
  const piece: Record<string, string> = {};
  // Batches: a live one submitted, a live one in progress, a sandbox one submitted.
  let batchMember: { member_id: string; key: string };
  let batchTestKey: string;
  const batchFacilityKey: Record<string, string> = {};
  const batch: Record<string, string> = {};
  // A Business mail run, open.
  let runSender: Sender;
  const runId = `run-${randomUUID()}`;
  // Handling operations: two awaiting the owner's approval, one approved and awaiting the facility's decision.
  let w: World;
  const op: Record<string, { id: string; version: number }> = {};

  const mailStatuses = async () =>
    Object.fromEntries(
      (
        await app.deps.db.query(`SELECT id, status, printing_started_at FROM outbound_mail WHERE id = ANY($1)`, [
          Object.values(piece),
        ])
      ).map((r: { id: string; status: string; printing_started_at: Date | null }) => [
        r.id,
        `${r.status}${r.printing_started_at ? '+printing' : ''}`,
      ]),
    );
  const batchStatuses = async () =>
    Object.fromEntries(
      (await app.deps.db.query(`SELECT id, status FROM batches WHERE id = ANY($1)`, [Object.values(batch)])).map(
        (r: { id: string; status: string }) => [r.id, r.status],
      ),
    );
  const runStatus = async () =>
    (
      await app.deps.db.query(`SELECT status, funded_cents FROM mail_runs WHERE member_id = $1 AND mail_run_id = $2`, [
        runSender.memberId,
        runId,
      ])
    )[0];
  const opStatuses = async () =>
    Object.fromEntries(
      (
        await app.deps.db.query(`SELECT id, status, version FROM handling_operations WHERE id = ANY($1)`, [
          Object.values(op).map((o) => o.id),
        ])
      ).map((r: { id: string; status: string; version: number }) => [r.id, `${r.status}@${r.version}`]),
    );
  const balances = async () =>
    Promise.all(
      [sender.memberId, pendingSender.memberId, batchMember.member_id, runSender.memberId, w.memberId].map((m) =>
        balance(app, m),
      ),
    );

  beforeAll(async () => {
    app = await startTestApp({ env: { WORKFLOW_UPDATE_DEADLINE_MS: String(DEADLINE_MS) } });
    facility = await createFacility(app.deps, 'Unattended Facility');
    const fac = (id: string, suffix: string, form?: FormData) =>
      api(app)('POST', `/v1/facility/mail/${id}${suffix}`, { key: facility.key, form });

    // Outbound mail.
    sender = await newSender(app, { facilityId: facility.facility_id, creditsCents: 100000 });
    pendingSender = await newSender(app, {
      facilityId: facility.facility_id,
      creditsCents: 100000,
      credential: { force_approval: true },
    });
    testSender = await newSender(app, { environment: 'test' });
    const send = async (s: Sender, fields: Record<string, string> = {}) => {
      const res = await sendLetter(app, s, letterForm(await letterPdf(), fields));
      if (res.status !== 201) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id as string;
    };
    for (const name of ['toCancel', 'toStart', 'toFail']) piece[name] = await send(sender);
    for (const name of ['toPrint', 'toDispatch', 'toDeliver', 'toReportUndelivered'])
      piece[name] = await send(sender, { mail_class: 'priority' });
    piece.toApprove = await send(pendingSender);
    piece.toReject = await send(pendingSender);
    piece.toAdvance = await send(testSender);
    for (const name of ['toPrint', 'toDispatch', 'toDeliver', 'toReportUndelivered']) {
      const id = piece[name];
      expect((await fac(id, '/printing')).status).toBe(200);
      if (name === 'toPrint') continue;
      const pages = { pages: sandboxPhotoPng('pages', id), envelope: sandboxPhotoPng('envelope', id) };
      expect((await fac(id, '/printed', photoForm(pages))).body.status).toBe('ready');
      if (name === 'toDispatch') continue;
      const dispatch = { carrier: 'usps', tracking_number: `94001${id.replace(/\D/g, '').slice(0, 17)}` };
      const receipt = photoForm(
        { receipt: sandboxPhotoPng('receipt', id) },
        { ...dispatch, dispatch_method: 'post_office_counter' },
      );
      expect((await fac(id, '/dispatched', receipt)).body.status).toBe('mailed');
    }

    // Batches.
    batchMember = await newMember(app.deps, { creditsCents: 100000 });
    batchTestKey = await testKeyFor(app.deps, batchMember.member_id);
    const newBatch = async (key: string) => {
      const created = await api(app)('POST', '/v1/batch-mail', {
        key,
        form: batchForm(await pdf(1), recipientsCsv(5)),
      });
      if (created.status !== 201) throw new Error(`batch: ${created.status} ${JSON.stringify(created.body)}`);
      const id = created.body.batch.id as string;
      expect((await api(app)('POST', `/v1/batch-mail/${id}/confirm`, { key })).status).toBe(200);
      await waitForStatus(app.baseUrl, key, id, ['submitted']);
      return id;
    };
    batch.submitted = await newBatch(batchMember.key);
    batch.inProgress = await newBatch(batchMember.key);
    batch.sandbox = await newBatch(batchTestKey);
    for (const id of [batch.submitted, batch.inProgress]) {
      const [row] = await app.deps.db.query(`SELECT facility_id FROM batches WHERE id = $1`, [id]);
      batchFacilityKey[id] = await facilityKeyFor(app.deps, row.facility_id);
    }
    const started = await api(app)('POST', `/v1/facility/batches/${batch.inProgress}/start`, {
      key: batchFacilityKey[batch.inProgress],
    });
    expect(started.body.batch?.status).toBe('in_progress');

    // A Business mail run.
    runSender = await newSender(app, { creditsCents: 100000 });
    await setMemberRunSettings(app.deps, runSender.memberId, { business: true, agentAutoFill: true });
    const opened = await api(app)('POST', '/v1/mail-runs', {
      key: runSender.key,
      headers: runSender.headers,
      json: { mail_run_id: runId },
    });
    expect([opened.status, opened.body.status]).toEqual([201, 'open']);

    // Handling operations.
    w = await newWorld(app, { creditsCents: 100000 });
    let n = 0;
    const propose = async () => {
      const item = await receivePiece(app, w);
      const version = (await api(app)('GET', `/v1/agent-inbox/${item}/handling`, { key: w.agentKey })).body.version;
      const res = await api(app)('POST', `/v1/agent-inbox/${item}/handling`, {
        key: w.agentKey,
        headers: { 'x-service-md-version': '1', 'idempotency-key': `propose-${++n}` },
        json: { expected_version: version, action_type: 'open_and_scan' },
      });
      if (res.status !== 201) throw new Error(`propose: ${res.status} ${JSON.stringify(res.body)}`);
      return { id: res.body.operation.id as string, version: res.body.operation.version as number };
    };
    op.toApprove = await propose();
    op.toReject = await propose();
    op.toAccept = await propose();
    const approved = await api(app)('POST', `/v1/handling/${op.toAccept.id}/approve`, {
      key: w.memberKey,
      json: { expected_version: op.toAccept.version },
    });
    expect(approved.body.operation?.status).toBe('awaiting_facility');
    op.toAccept.version = approved.body.operation.version;

    // Nothing answers Updates from here on.
    app.worker!.shutdown();
    await waitFor(async () => app.worker!.getState() === 'STOPPED', 'the worker to stop', 60000);
  }, 240000);
  afterAll(async () => {
    await app?.close();
  });

  it('answers every step 503 WORKFLOW_UNAVAILABLE and applies none of them', async () => {
    const before = {
      mail: await mailStatuses(),
      batches: await batchStatuses(),
      run: await runStatus(),
      ops: await opStatuses(),
      balances: await balances(),
    };
    expect(Object.values(before.batches).sort()).toEqual(['in_progress', 'submitted', 'submitted']);
    expect(before.run.status).toBe('open');

    const key = () => ({ 'idempotency-key': `unanswered-${randomUUID()}` });
    const facilityMail = (id: string, suffix: string, opts: { form?: FormData; json?: unknown } = {}) =>
      api(app)('POST', `/v1/facility/mail/${id}${suffix}`, { key: facility.key, headers: key(), ...opts });
    const facilityBatch = (id: string, suffix: string, json?: unknown) =>
      api(app)('POST', `/v1/facility/batches/${id}${suffix}`, { key: batchFacilityKey[id], headers: key(), json });
    const dispatchForm = () =>
      photoForm(
        { receipt: sandboxPhotoPng('receipt', piece.toDispatch) },
        { carrier: 'usps', tracking_number: '9400100000000000000123', dispatch_method: 'drop_box' },
      );
    const printedForm = () =>
      photoForm({
        pages: sandboxPhotoPng('pages', piece.toPrint),
        envelope: sandboxPhotoPng('envelope', piece.toPrint),
      });

    const calls: Record<string, () => Promise<HttpResponse>> = {
      'DELETE /v1/mail/{id}': () =>
        api(app)('DELETE', `/v1/mail/${piece.toCancel}`, { key: sender.key, headers: { ...sender.headers, ...key() } }),
      'POST /v1/mail/{id}/approve': () =>
        api(app)('POST', `/v1/mail/${piece.toApprove}/approve`, { key: pendingSender.memberKey, headers: key() }),
      'POST /v1/mail/{id}/reject': () =>
        api(app)('POST', `/v1/mail/${piece.toReject}/reject`, { key: pendingSender.memberKey, headers: key() }),
      'POST /v1/test/mail/{id}/advance': () =>
        api(app)('POST', `/v1/test/mail/${piece.toAdvance}/advance`, {
          key: testSender.key,
          headers: { ...testSender.headers, ...key() },
        }),
      'POST /v1/facility/mail/{id}/printing': () => facilityMail(piece.toStart, '/printing'),
      'POST /v1/facility/mail/{id}/printed': () => facilityMail(piece.toPrint, '/printed', { form: printedForm() }),
      'POST /v1/facility/mail/{id}/dispatched': () =>
        facilityMail(piece.toDispatch, '/dispatched', { form: dispatchForm() }),
      'POST /v1/facility/mail/{id}/delivered': () => facilityMail(piece.toDeliver, '/delivered'),
      'POST /v1/facility/mail/{id}/carrier-delivery-failed': () =>
        facilityMail(piece.toReportUndelivered, '/carrier-delivery-failed', { json: { message: 'Address unknown' } }),
      'POST /v1/facility/mail/{id}/failed': () =>
        facilityMail(piece.toFail, '/failed', { json: { message: 'Printer jammed' } }),
      'DELETE /v1/batch-mail/{id}': () =>
        api(app)('DELETE', `/v1/batch-mail/${batch.submitted}`, { key: batchMember.key, headers: key() }),
      'POST /v1/batch-mail/{id}/advance': () =>
        api(app)('POST', `/v1/batch-mail/${batch.sandbox}/advance`, { key: batchTestKey, headers: key() }),
      'POST /v1/facility/batches/{id}/start': () => facilityBatch(batch.submitted, '/start'),
      'POST /v1/facility/batches/{id}/pieces': () =>
        facilityBatch(batch.inProgress, '/pieces', { status: 'mailed', ranges: [{ from: 1, to: 5 }] }),
      'POST /v1/facility/batches/{id}/finish': () =>
        facilityBatch(batch.inProgress, '/finish', { facility_notes: 'x' }),
      'POST /v1/facility/batches/{id}/fail': () =>
        facilityBatch(batch.inProgress, '/fail', { error_message: 'Press broke down' }),
      'POST /v1/mail-runs/{id}/commit': () =>
        api(app)('POST', `/v1/mail-runs/${runId}/commit`, { key: runSender.key, headers: runSender.headers }),
      'DELETE /v1/mail-runs/{id}': () =>
        api(app)('DELETE', `/v1/mail-runs/${runId}`, { key: runSender.key, headers: runSender.headers }),
      'POST /v1/handling/{id}/approve': () =>
        api(app)('POST', `/v1/handling/${op.toApprove.id}/approve`, {
          key: w.memberKey,
          json: { expected_version: op.toApprove.version },
        }),
      'POST /v1/handling/{id}/reject': () =>
        api(app)('POST', `/v1/handling/${op.toReject.id}/reject`, {
          key: w.memberKey,
          json: { expected_version: op.toReject.version, reason: 'not needed' },
        }),
      'POST /v1/facility/internal-inbound/handling/{id}/decision': () =>
        api(app)('POST', `/v1/facility/internal-inbound/handling/${op.toAccept.id}/decision`, {
          key: w.facilityKey,
          headers: key(),
          json: { decision: 'accept', expected_version: op.toAccept.version },
        }),
    };
    // Two at a time: each waits out the deadline.
    const names = Object.keys(calls);
    const answers: Record<string, HttpResponse> = {};
    for (let i = 0; i < names.length; i += 2)
      await Promise.all(names.slice(i, i + 2).map(async (name) => (answers[name] = await calls[name]())));
    for (const name of names) expectUnavailable(answers[name], name);

    expect({
      mail: await mailStatuses(),
      batches: await batchStatuses(),
      run: await runStatus(),
      ops: await opStatuses(),
      balances: await balances(),
    }).toEqual(before);
    // A 503 is not stored against the Idempotency-Key: the same request is carried out once a worker runs.
    const [{ n }] = await app.deps.db.query(
      `SELECT count(*)::int AS n FROM idempotency_records WHERE idempotency_key LIKE 'unanswered-%'`,
    );
    expect(n).toBe(0);
  }, 120000);
});

describe('routes that start a workflow while Temporal refuses to start it', () => {
  let app: TestApp;
  beforeAll(async () => {
    // A namespace the Temporal server does not have: every workflow start is refused.
    app = await startTestApp({ worker: false, env: { TEMPORAL_NAMESPACE: `missing-${randomUUID()}` } });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers a new batch 503 BATCH_WORKFLOW_UNAVAILABLE and stores nothing', async () => {
    const member = await newMember(app.deps, { creditsCents: 10000 });
    const res = await api(app)('POST', '/v1/batch-mail', {
      key: member.key,
      form: batchForm(await pdf(1), recipientsCsv(3)),
    });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'BATCH_WORKFLOW_UNAVAILABLE' });
    const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM batches WHERE member_id = $1`, [
      member.member_id,
    ]);
    expect(n).toBe(0);
    expect(await balance(app, member.member_id)).toBe(10000);
  });

  it('answers opening a mail run 503 MAIL_RUN_WORKFLOW_UNAVAILABLE, and the same call again once more', async () => {
    const s = await newSender(app, { creditsCents: 10000 });
    await setMemberRunSettings(app.deps, s.memberId, { business: true, agentAutoFill: true });
    const open = () =>
      api(app)('POST', '/v1/mail-runs', { key: s.key, headers: s.headers, json: { mail_run_id: 'run-refused' } });
    for (const res of [await open(), await open()]) {
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 'MAIL_RUN_WORKFLOW_UNAVAILABLE' });
    }
    // The run stays unstarted (it gets its workflow when opened or read again) and takes no money.
    const runs = await app.deps.db.query(`SELECT status, workflow_started_at FROM mail_runs WHERE member_id = $1`, [
      s.memberId,
    ]);
    expect(runs).toEqual([{ status: 'open', workflow_started_at: null }]);
    expect(await balance(app, s.memberId)).toBe(10000);
  });
});
