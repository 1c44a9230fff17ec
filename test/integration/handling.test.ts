// Handling operations as workflows: proposal rules, owner decisions, facility decisions,
// refunds, Open & Scan completed by scan fulfilment, the sandbox facility and sample reset.
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { eventsOf, FIXTURES, fixtureImage, newWorld, receivePiece, waitFor, World } from '../helpers/physical-inbound';
import { getBalance } from '../../services/billing/credits';
import { memberSampleId } from '../../services/physical-inbound/sandbox-fixtures';
import { requestInboundAction } from '../../services/physical-inbound/handling';
import { reconcilePhysicalInbound } from '../../services/physical-inbound/inbound-reconciler';
import { attachExterior, commitDraft, matchDraft } from '../../services/physical-inbound/facility-intake';
import { authenticate } from '../../services/accounts/auth';
import type { Deps } from '../../services/shared/deps';
import { handlingWorkflowId } from '../../workflows/physical-inbound/contracts';
import { startReceiver } from './webhook-helpers';

describe('handling operations', () => {
  let app: TestApp;
  let w: World;
  let api: ReturnType<typeof client>;
  let n = 0;
  const destination = {
    name: 'Ada Lovelace',
    address_line1: '1 Main St',
    city: 'Austin',
    state: 'TX',
    postal_code: '78701',
    country: 'US',
  };

  const handling = (item: string, key = w.agentKey) => api('GET', `/v1/agent-inbox/${item}/handling`, { key });
  const propose = async (item: string, body: Record<string, unknown>, key = w.agentKey) => {
    const version = (await handling(item, key)).body.version;
    return api('POST', `/v1/agent-inbox/${item}/handling`, {
      key,
      headers: { 'x-service-md-version': '1', 'idempotency-key': `p-${++n}` },
      json: { expected_version: version, ...body },
    });
  };
  const decide = (op: string, json: Record<string, unknown>) =>
    api('POST', `/v1/facility/internal-inbound/handling/${op}/decision`, { key: w.facilityKey, json });

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    w = await newWorld(app, { creditsCents: 5000 });
  });
  afterAll(async () => {
    await app.close();
  });

  it('checks proposals: agents only propose, vault is inactive, first_class is for letters with the acknowledgment', async () => {
    const letter = await receivePiece(app, w);
    const parcel = await receivePiece(app, w, { kind: 'parcel', weightOz: 40 });
    const cases: Array<[string, Record<string, unknown>, number, string]> = [
      [
        letter,
        { action_type: 'forward_original', mail_class: 'priority', destination, confirmed: true },
        400,
        'confirmed',
      ],
      [letter, { action_type: 'discard', destructive_confirmed: true }, 400, 'destructive_confirmed'],
      [
        letter,
        { action_type: 'forward_original', mail_class: 'first_class', destination },
        400,
        'untracked_acknowledged',
      ],
      [
        parcel,
        { action_type: 'forward_original', mail_class: 'first_class', untracked_acknowledged: true, destination },
        400,
        'mail_class',
      ],
      [
        letter,
        { action_type: 'forward_original', mail_class: 'priority', destination: { ...destination, country: 'CA' } },
        400,
        'destination.country',
      ],
      [letter, { action_type: 'forward_original', destination }, 400, 'mail_class'],
      [letter, { action_type: 'open_and_scan', destination }, 400, 'destination'],
      [letter, { action_type: 'vault' }, 400, 'action_type'],
      [letter, { action_type: 'shred' }, 400, 'action_type'],
    ];
    for (const [item, body, status, path] of cases) {
      const res = await propose(item, body);
      expect([JSON.stringify(body), res.status, res.body.fields?.[0]?.path]).toEqual([
        JSON.stringify(body),
        status,
        path,
      ]);
    }
    expect((await propose(letter, { action_type: 'vault' })).body.code).toBe('HANDLING_ACTION_INACTIVE');
    const noHeader = await api('POST', `/v1/agent-inbox/${letter}/handling`, {
      key: w.agentKey,
      headers: { 'idempotency-key': 'x' },
      json: { action_type: 'discard', expected_version: 1 },
    });
    expect(noHeader.body.code).toBe('SERVICE_MD_VERSION_REQUIRED');
    const noKey = await api('POST', `/v1/agent-inbox/${letter}/handling`, {
      key: w.agentKey,
      headers: { 'x-service-md-version': '1' },
      json: { action_type: 'discard', expected_version: 1 },
    });
    expect(noKey.status).toBe(400);
    expect(noKey.body.fields).toEqual([expect.objectContaining({ path: 'headers.idempotency-key' })]);

    const caps = (await handling(parcel)).body;
    expect(caps.capabilities.find((c: { action_type: string }) => c.action_type === 'forward_original')).toMatchObject({
      available: true,
      mail_classes: ['priority'],
      quote: { amount_cents: 250 + 1500 + 2 * 300 },
    });
    expect(caps.capabilities.find((c: { action_type: string }) => c.action_type === 'vault')).toMatchObject({
      available: false,
    });
    const firstClass = await propose(letter, {
      action_type: 'forward_original',
      mail_class: 'first_class',
      untracked_acknowledged: true,
      destination,
    });
    expect(firstClass.status).toBe(201);
    expect(firstClass.body.operation).toMatchObject({
      mail_class: 'first_class',
      untracked_acknowledged: true,
      quote: { amount_cents: 450 },
    });
    const second = await propose(letter, { action_type: 'discard' });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('HANDLING_OPERATION_OPEN');
    expect((await handling(letter)).body.capabilities.every((c: { available: boolean }) => !c.available)).toBe(true);
  });

  it('replays a proposal for a repeated Idempotency-Key', async () => {
    const item = await receivePiece(app, w);
    const version = (await handling(item)).body.version;
    const send = () =>
      api('POST', `/v1/agent-inbox/${item}/handling`, {
        key: w.agentKey,
        headers: { 'x-service-md-version': '1', 'idempotency-key': 'same-proposal' },
        json: { action_type: 'open_and_scan', expected_version: version },
      });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(201);
    expect(again.body.operation.id).toBe(first.body.operation.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('lets the owner reject only while approval is pending, and reports the failure', async () => {
    const item = await receivePiece(app, w);
    const op = (await propose(item, { action_type: 'open_and_scan' })).body.operation;
    expect(
      (await api('POST', `/v1/handling/${op.id}/reject`, { key: w.memberKey, json: { expected_version: 5 } })).status,
    ).toBe(409);
    const rejected = await api('POST', `/v1/handling/${op.id}/reject`, {
      key: w.memberKey,
      json: { expected_version: 1, reason: 'not needed' },
    });
    expect(rejected.body.operation).toMatchObject({
      status: 'rejected',
      rejected_by: 'member',
      rejection_reason: 'not needed',
      version: 2,
    });
    expect(
      (await api('POST', `/v1/handling/${op.id}/approve`, { key: w.memberKey, json: { expected_version: 2 } })).body
        .code,
    ).toBe('HANDLING_STATE_INVALID');
    const events = await waitFor(async () => {
      const rows = await eventsOf(app, [op.id]);
      return rows.length ? rows : null;
    }, 'inbound.action_failed');
    expect(events.map((e) => e.event_type)).toEqual(['inbound.action_failed']);
    // A closed operation frees the item for a new proposal.
    expect((await propose(item, { action_type: 'open_and_scan' })).status).toBe(201);
  });

  it('refunds a rejected approved operation and restores the item', async () => {
    const item = await receivePiece(app, w);
    const op = (await propose(item, { action_type: 'forward_original', mail_class: 'priority', destination })).body
      .operation;
    const before = (await getBalance(app.deps, w.memberId)).balance_cents;
    const approved = await api('POST', `/v1/handling/${op.id}/approve`, {
      key: w.memberKey,
      json: { expected_version: 1 },
    });
    expect(approved.body.operation.charged_cents).toBe(1750);
    expect((await api('GET', `/v1/packages/${item}`, { key: w.agentKey })).body.package.status).toBe(
      'forwarding_requested',
    );
    expect(
      (await api('POST', `/v1/handling/${op.id}/reject`, { key: w.memberKey, json: { expected_version: 2 } })).body
        .code,
    ).toBe('HANDLING_STATE_INVALID');
    expect((await decide(op.id, { decision: 'reject', expected_version: 2 })).body.fields).toEqual([
      expect.objectContaining({ path: 'reason' }),
    ]);
    const rejected = await decide(op.id, { decision: 'reject', expected_version: 2, reason: 'address undeliverable' });
    expect(rejected.body.operation).toMatchObject({
      status: 'rejected',
      rejected_by: 'facility',
      refunded_cents: 1750,
    });
    expect((await getBalance(app.deps, w.memberId)).balance_cents).toBe(before);
    expect((await api('GET', `/v1/packages/${item}`, { key: w.agentKey })).body.package.status).toBe('received');
  });

  it('refuses an approval the member cannot pay for (402) and changes nothing', async () => {
    const poor = await newWorld(app, { creditsCents: 100 });
    const item = await receivePiece(app, poor);
    const version = (await api('GET', `/v1/agent-inbox/${item}/handling`, { key: poor.agentKey })).body.version;
    const op = (
      await api('POST', `/v1/agent-inbox/${item}/handling`, {
        key: poor.agentKey,
        headers: { 'x-service-md-version': '1', 'idempotency-key': 'poor' },
        json: { action_type: 'open_and_scan', expected_version: version },
      })
    ).body.operation;
    const res = await api('POST', `/v1/handling/${op.id}/approve`, {
      key: poor.memberKey,
      json: { expected_version: 1 },
    });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({
      code: 'INSUFFICIENT_CREDITS',
      credits_required_cents: 500,
      credit_balance_cents: 100,
      credit_shortfall_cents: 400,
    });
    expect((await api('GET', `/v1/handling/${op.id}`, { key: poor.memberKey })).body.operation).toMatchObject({
      status: 'awaiting_member_approval',
      version: 1,
    });
  });

  it("completes a discard only with the owner's confirmation and a staff attestation", async () => {
    const item = await receivePiece(app, w);
    const op = (await propose(item, { action_type: 'discard' })).body.operation;
    const unconfirmed = await api('POST', `/v1/handling/${op.id}/approve`, {
      key: w.memberKey,
      json: { expected_version: 1 },
    });
    expect(unconfirmed.body.fields).toEqual([expect.objectContaining({ path: 'destructive_confirmed' })]);
    expect(
      (
        await api('POST', `/v1/handling/${op.id}/approve`, {
          key: w.memberKey,
          json: { expected_version: 1, destructive_confirmed: true },
        })
      ).status,
    ).toBe(200);
    expect((await decide(op.id, { decision: 'accept', expected_version: 2 })).status).toBe(200);
    expect((await decide(op.id, { decision: 'complete', expected_version: 3 })).body.fields).toEqual([
      expect.objectContaining({ path: 'attestation' }),
    ]);
    const done = await decide(op.id, {
      decision: 'complete',
      expected_version: 3,
      attestation: 'Shredded by J. Doe, witnessed by K. Roe',
    });
    expect(done.body.operation).toMatchObject({
      status: 'completed',
      attestation: 'Shredded by J. Doe, witnessed by K. Roe',
      destructive_confirmed: true,
    });
    expect((await api('GET', `/v1/packages/${item}`, { key: w.agentKey })).body.package.status).toBe('disposed');
  });

  it("completes Open & Scan when the facility fulfils its scan request, after the scan's context is ready", async () => {
    // A live endpoint of the member: when inbound.action_completed arrives, the saved OCR must be there to read.
    const ocrAtCompletion: string[][] = [];
    const receiver = await startReceiver(async (r) => {
      const body = JSON.parse(r.body || '{}');
      if (body.event_type === 'webhook.endpoint_verification')
        return { status: 200, body: JSON.stringify({ challenge: body.data.challenge }) };
      if (body.event_type === 'inbound.action_completed') {
        const pages = await app.deps.db.query(
          `SELECT ocr_status FROM scan_pages WHERE item_id = $1 ORDER BY page_number`,
          [body.data.item_id],
        );
        ocrAtCompletion.push(pages.map((p: { ocr_status: string }) => p.ocr_status));
      }
      return { status: 200, body: '{}' };
    });
    const endpoint = await api('POST', '/v1/webhook-endpoints', {
      key: w.memberKey,
      json: { name: 'Inbound', url: receiver.url, event_types: ['inbound.*'] },
    });
    expect(endpoint.status).toBe(201);
    expect(
      (await api('POST', `/v1/webhook-endpoints/${endpoint.body.endpoint.id}/verify`, { key: w.memberKey })).body,
    ).toMatchObject({ verified: true });

    const item = await receivePiece(app, w);
    const op = (await propose(item, { action_type: 'open_and_scan' })).body.operation;
    await api('POST', `/v1/handling/${op.id}/approve`, { key: w.memberKey, json: { expected_version: 1 } });
    const accepted = await decide(op.id, { decision: 'accept', expected_version: 2 });
    expect(accepted.body.operation.scan_request_id).toEqual(expect.any(String));
    expect((await decide(op.id, { decision: 'complete', expected_version: 3 })).body.fields).toEqual([
      expect.objectContaining({ path: 'decision' }),
    ]);
    const form = new FormData();
    form.append('page_1', new Blob([fixtureImage('sample-envelope.png')], { type: 'image/png' }), 'p1.png');
    form.append('page_2', new Blob([fixtureImage('sample-letter.png')], { type: 'image/png' }), 'p2.png');
    form.append('source_kinds', 'envelope,letter');
    const fulfil = await api('POST', `/v1/facility/scan-requests/${accepted.body.operation.scan_request_id}/fulfil`, {
      key: w.facilityKey,
      form,
    });
    expect(fulfil.status).toBe(201);
    const done = await waitFor(async () => {
      const res = await api('GET', `/v1/handling/${op.id}`, { key: w.memberKey });
      return res.body.operation.status === 'completed' ? res.body.operation : null;
    }, 'operation completed');
    expect(done.version).toBe(4);
    const events = await waitFor(async () => {
      const rows = await eventsOf(app, [op.id]);
      return rows.length ? rows : null;
    }, 'inbound.action_completed');
    expect(events.map((e) => e.event_type)).toEqual(['inbound.action_completed']);
    // Published in order: the scan's context is ready before the operation completes.
    expect(
      (await eventsOf(app, [item, op.id])).map((e) => e.event_type).filter((t) => t !== 'inbound.received'),
    ).toEqual(['inbound.scan_available', 'inbound.context_ready', 'inbound.action_completed']);
    const delivered = await waitFor(async () => {
      const types = receiver.received.map((r) => JSON.parse(r.body).event_type);
      return types.includes('inbound.action_completed') ? types : null;
    }, 'inbound.action_completed delivered');
    expect(delivered).toContain('inbound.context_ready');
    expect(ocrAtCompletion).toHaveLength(1);
    expect(ocrAtCompletion[0]).toHaveLength(2);
    expect(ocrAtCompletion[0].every((s) => ['ready', 'needs_review', 'failed'].includes(s))).toBe(true);
    await receiver.close();
    const desc = await app.deps.temporal.workflow.getHandle(handlingWorkflowId(op.id)).describe();
    expect(desc.searchAttributes.ObjectStatus).toEqual(['completed']);
    expect(desc.searchAttributes.ObjectId).toEqual([op.id]);
  });

  it('has the sandbox facility carry out test operations and restarts the sample', async () => {
    const sample = memberSampleId(w.memberId);
    const op = (await propose(sample, { action_type: 'open_and_scan' }, w.agentTestKey)).body.operation;
    expect(op).toMatchObject({ environment: 'test', quote: { amount_cents: 0 } });
    expect(
      (await api('POST', `/v1/handling/${op.id}/approve`, { key: w.memberKey, json: { expected_version: 1 } })).status,
    ).toBe(404);
    expect(
      (await api('POST', `/v1/handling/${op.id}/approve`, { key: w.memberTestKey, json: { expected_version: 1 } }))
        .status,
    ).toBe(200);
    const done = await waitFor(async () => {
      const res = await api('GET', `/v1/handling/${op.id}`, { key: w.memberTestKey });
      return res.body.operation.status === 'completed' ? res.body.operation : null;
    }, 'sandbox completion');
    expect(done).toMatchObject({ charged_cents: 0 });
    const scans = await api('GET', `/v1/agent-inbox/${sample}/scans`, { key: w.agentTestKey });
    expect(scans.body.scans).toHaveLength(2);
    const events = await waitFor(async () => {
      const rows = await eventsOf(app, [sample, op.id]);
      return rows.some((e) => e.event_type === 'inbound.action_completed') ? rows : null;
    }, 'sandbox events');
    expect(events.map((e) => e.event_type)).toEqual([
      'inbound.scan_available',
      'inbound.context_ready',
      'inbound.action_completed',
    ]);
    expect(events.every((e) => e.environment === 'test')).toBe(true);

    // A pending proposal on the sample is closed by a reset; the sample starts over.
    const pending = (await propose(sample, { action_type: 'discard' }, w.agentTestKey)).body.operation;
    const reset = await api('POST', `/v1/inbound-items/${sample}/reset-sample`, { key: w.memberTestKey });
    expect(reset.status).toBe(200);
    expect(reset.body.item).toMatchObject({ id: sample, version: 1, scan_count: 1, open_operation: null });
    const closed = await app.deps.temporal.workflow.getHandle(handlingWorkflowId(pending.id)).result();
    expect(closed).toMatchObject({ status: 'rejected' });
    expect((await api('GET', `/v1/agent-inbox/${sample}/scans`, { key: w.agentTestKey })).body.scans).toHaveLength(1);
    expect((await api('POST', `/v1/inbound-items/${sample}/reset-sample`, { key: w.memberKey })).body.reason).toBe(
      'test_key_required',
    );
  });
});

describe('a lost workflow start', () => {
  let app: TestApp;
  let w: World;

  beforeAll(async () => {
    app = await startTestApp();
    w = await newWorld(app);
  });
  afterAll(async () => {
    await app.close();
  });

  /** Deps whose Temporal client cannot start or signal workflows (the process "died" after the commit). */
  function withoutTemporalStarts(deps: Deps): Deps {
    const down = async () => {
      throw new Error('Temporal unavailable');
    };
    const workflow = Object.create(deps.temporal.workflow, { start: { value: down } });
    return { ...deps, temporal: Object.create(deps.temporal, { workflow: { value: workflow } }) };
  }

  it("still answers, and the reconciler starts the charged operation's workflow and the item's", async () => {
    const broken = withoutTemporalStarts(app.deps);
    const item = await receivePiece(app, w);
    const member = await authenticate(app.deps, `Bearer ${w.memberKey}`);
    const created = await requestInboundAction(broken, member, item, {
      action_type: 'open_and_scan',
      expected_version: 1,
      expected_quote: { amount_cents: 500, currency: 'usd' },
    });
    const op = created.operation;
    expect(op.charged_cents).toBe(500);
    const [row] = await app.deps.db.query(`SELECT workflow_started_at FROM handling_operations WHERE id = $1`, [op.id]);
    expect(row.workflow_started_at).toBeNull();
    await expect(app.deps.temporal.workflow.getHandle(handlingWorkflowId(op.id)).describe()).rejects.toThrow();

    const draft = (
      await client(app.baseUrl)('POST', '/v1/facility/inbound/drafts', { key: w.facilityKey, json: { kind: 'letter' } })
    ).body.draft;
    const facility = await authenticate(app.deps, `Bearer ${w.facilityKey}`);
    const file = {
      fieldName: 'photo',
      filepath: `${FIXTURES}/sample-envelope.png`,
      originalFilename: 'e.png',
      mimetype: 'image/png',
      size: 1,
    };
    const attached = await attachExterior(app.deps, facility, draft.id, file, 'sealed_exterior');
    const matched = await matchDraft(app.deps, facility, draft.id, {
      mailbox_id: w.mailboxId,
      expected_version: attached.draft.version,
    });
    const committed = await commitDraft(broken, facility, draft.id, { expected_version: matched.draft.version });
    expect(committed.item.status).toBe('received');

    const done = await reconcilePhysicalInbound(app.deps, 0);
    expect(done.operations).toBeGreaterThanOrEqual(1);
    expect(done.items).toBeGreaterThanOrEqual(1);
    expect((await app.deps.temporal.workflow.getHandle(handlingWorkflowId(op.id)).describe()).status.name).toBe(
      'RUNNING',
    );
    await waitFor(
      async () => (await eventsOf(app, [committed.item.id])).some((e) => e.event_type === 'inbound.received'),
      'inbound.received after reconcile',
    );
    const accepted = await client(app.baseUrl)('POST', `/v1/facility/internal-inbound/handling/${op.id}/decision`, {
      key: w.facilityKey,
      json: { decision: 'accept', expected_version: 1 },
    });
    expect(accepted.body.operation).toMatchObject({ status: 'accepted', version: 2 });
    const [started] = await app.deps.db.query(`SELECT workflow_started_at FROM handling_operations WHERE id = $1`, [
      op.id,
    ]);
    expect(started.workflow_started_at).not.toBeNull();
  });
});
