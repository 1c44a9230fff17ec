// Expected shipments: agent-specific (member keys pass ?agent_id=), live-only custody;
// validation, refusals, duplicates, updates and cancellation while open, and the real
// effect: the facility's commit of a piece with the same (normalised) tracking number
// links it, marks it received, sends it to the expecting agent and requests its
// on_arrival action.
import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { client, fieldPaths } from '../helpers/http';
import { newCredential } from '../helpers/agents';
import { commitPiece, newWorld, World } from '../helpers/physical-inbound';

describe('expected shipments', () => {
  let app: TestApp;
  let w: World;
  let api: ReturnType<typeof client>;
  const V = { 'x-service-md-version': '1' };
  const address = {
    to_name: 'Ada Lovelace',
    to_line1: '1 Main St',
    to_city: 'Austin',
    to_state: 'tx',
    to_zip: '78701',
  };

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    w = await newWorld(app);
  });
  afterAll(async () => {
    await app.close();
  });

  const create = (json: Record<string, unknown>, key = w.agentKey, qs = '', headers: Record<string, string> = V) =>
    api('POST', `/v1/expected-shipments${qs}`, { key, headers, json });

  describe('refusals and validation', () => {
    it('is live-only, account-enabled, needs the scopes and the instructions version', async () => {
      for (const key of [w.agentTestKey, w.memberTestKey]) {
        const res = await api('GET', `/v1/expected-shipments?agent_id=${w.agentId}`, { key });
        expect([res.status, res.body.reason]).toEqual([403, 'sandbox_not_supported']);
      }
      const off = await newWorld(app, { packages: false });
      const disabled = await create({ tracking_number: 'X1' }, off.agentKey);
      expect([disabled.status, disabled.body.reason]).toEqual([403, 'packages_not_enabled']);
      const reader = await newCredential(app.baseUrl, w.memberKey, w.agentId, { scopes: ['package.read'] });
      const refused = await create({ tracking_number: 'X1' }, reader.key);
      expect([refused.status, refused.body.reason, refused.body.details.required_scopes]).toEqual([
        403,
        'insufficient_scope',
        ['package.write'],
      ]);
      expect((await api('GET', '/v1/expected-shipments', { key: reader.key })).status).toBe(200);
      const writer = await newCredential(app.baseUrl, w.memberKey, w.agentId, { scopes: ['package.write'] });
      const forward = await create(
        { tracking_number: 'X1', on_arrival: { action: 'forward', parameters: address } },
        writer.key,
      );
      expect([forward.status, forward.body.details?.required_scopes]).toEqual([403, ['forward.create']]);
      const missing = await create({ tracking_number: 'X1' }, w.agentKey, '', {});
      expect([missing.status, missing.body.code]).toEqual([400, 'SERVICE_MD_VERSION_REQUIRED']);
      const stale = await create({ tracking_number: 'X1' }, w.agentKey, '', { 'x-service-md-version': '9' });
      expect([stale.status, stale.body.code]).toEqual([409, 'SERVICE_MD_VERSION_MISMATCH']);
      expect(
        await app.deps.db.query(`SELECT 1 FROM expected_shipments WHERE member_id = ANY($1)`, [
          [w.memberId, off.memberId],
        ]),
      ).toEqual([]);
    });

    it('makes member keys name one of their agents, and ignores agent_id from agent keys', async () => {
      expect(fieldPaths((await api('GET', '/v1/expected-shipments', { key: w.memberKey })).body)).toEqual([
        'query.agent_id',
      ]);
      expect(fieldPaths((await create({ tracking_number: 'X1' }, w.memberKey)).body)).toEqual(['query.agent_id']);
      const stranger = await newWorld(app);
      const foreign = await api('GET', `/v1/expected-shipments?agent_id=${stranger.agentId}`, { key: w.memberKey });
      expect([foreign.status, fieldPaths(foreign.body)]).toEqual([400, ['query.agent_id']]);
      expect(
        fieldPaths((await create({ tracking_number: 'X1' }, w.memberKey, `?agent_id=${randomUUID()}`)).body),
      ).toEqual(['query.agent_id']);
      expect(fieldPaths((await create({ tracking_number: 'X1' }, w.memberKey, '?agent_id=nope')).body)).toEqual([
        'query.agent_id',
      ]);
      // An agent key's agent_id is ignored: it lists its own.
      expect((await api('GET', `/v1/expected-shipments?agent_id=${w.otherAgentId}`, { key: w.agentKey })).status).toBe(
        200,
      );
    });

    it('refuses bad fields with their paths and stores nothing', async () => {
      const cases: Array<[Record<string, unknown>, string[]]> = [
        [{}, ['tracking_number']],
        [{ tracking_number: ' -- ' }, ['tracking_number']],
        [{ tracking_number: 'A1', expected_date: '2026-02-30' }, ['expected_date']],
        [{ tracking_number: 'A1', kind: 'crate' }, ['kind']],
        [{ tracking_number: 'A1', description: 'x'.repeat(501) }, ['description']],
        [{ tracking_number: 'A1', on_arrival: { action: 'teleport' } }, ['on_arrival.action']],
        [
          { tracking_number: 'A1', on_arrival: { action: 'forward', parameters: { to_name: 'Ada' } } },
          [
            'on_arrival.parameters.to_city',
            'on_arrival.parameters.to_line1',
            'on_arrival.parameters.to_state',
            'on_arrival.parameters.to_zip',
          ],
        ],
        [{ tracking_number: 'A1', surprise: true }, ['body']],
      ];
      for (const [json, paths] of cases) {
        const res = await create(json);
        expect({ json, status: res.status, paths: fieldPaths(res.body) }).toEqual({ json, status: 400, paths });
      }
      expect(await app.deps.db.query(`SELECT 1 FROM expected_shipments WHERE member_id = $1`, [w.memberId])).toEqual(
        [],
      );
    });
  });

  it('creates, reads, lists, updates and cancels; one open shipment per tracking number', async () => {
    const res = await create({
      tracking_number: '9400 1000 0000 0000 0000 01',
      carrier: 'USPS',
      sender_name: 'Grandma',
      description: 'Birthday box',
      kind: 'parcel',
      expected_date: '2026-03-01',
      on_arrival: { action: 'forward', priority: 'high', parameters: address },
    });
    expect(res.status).toBe(201);
    const s = res.body.expected_shipment;
    expect(s).toMatchObject({
      object: 'expected_shipment',
      agent_id: w.agentId,
      mailbox_id: w.mailboxId,
      status: 'expected',
      carrier: 'USPS',
      kind: 'parcel',
      expected_date: '2026-03-01',
      package_id: null,
      version: 1,
      created_by: 'agent',
      on_arrival: {
        action: 'forward',
        priority: 'high',
        parameters: { ...address, to_state: 'TX', to_country: 'US', to_line2: null },
      },
    });

    const dup = await create({ tracking_number: '9400-1000-0000-0000-0000-01' });
    expect([dup.status, dup.body.code, dup.body.details]).toEqual([
      409,
      'EXPECTED_SHIPMENT_DUPLICATE',
      { existing_expected_shipment_id: s.id },
    ]);
    // Another agent of the account is told about the clash, not given the other agent's id.
    const other = await create({ tracking_number: '9400100000000000000001' }, w.otherAgentKey);
    expect([other.status, other.body.details]).toEqual([409, {}]);

    expect((await api('GET', `/v1/expected-shipments/${s.id}`, { key: w.memberKey })).body.expected_shipment.id).toBe(
      s.id,
    );
    expect(
      (await api('GET', `/v1/expected-shipments/${s.id}?agent_id=${w.otherAgentId}`, { key: w.memberKey })).status,
    ).toBe(404);
    expect((await api('GET', `/v1/expected-shipments/${s.id}`, { key: w.otherAgentKey })).status).toBe(404);
    expect((await api('GET', `/v1/expected-shipments/${s.id}`, { key: (await newWorld(app)).memberKey })).status).toBe(
      404,
    );

    const list = async (qs: string) => (await api('GET', `/v1/expected-shipments${qs}`, { key: w.memberKey })).body;
    expect(
      (await list(`?agent_id=${w.agentId}&tracking_number=9400-1000-0000-0000-0000-01`)).expected_shipments.map(
        (x: { id: string }) => x.id,
      ),
    ).toEqual([s.id]);
    expect((await list(`?agent_id=${w.agentId}&carrier=usps&status=expected`)).pagination.total).toBe(1);
    expect((await list(`?agent_id=${w.otherAgentId}`)).expected_shipments).toEqual([]);
    expect((await api('GET', '/v1/expected-shipments?status=lost', { key: w.agentKey })).status).toBe(400);

    const patched = await api('PATCH', `/v1/expected-shipments/${s.id}`, {
      key: w.agentKey,
      headers: V,
      json: { sender_name: null, description: 'Two boxes', on_arrival: null },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.expected_shipment).toMatchObject({
      sender_name: null,
      description: 'Two boxes',
      on_arrival: null,
      carrier: 'USPS',
      version: 2,
    });

    const cancel = await api('DELETE', `/v1/expected-shipments/${s.id}`, { key: w.agentKey, headers: V });
    expect([cancel.status, cancel.body.already_cancelled, cancel.body.expected_shipment.status]).toEqual([
      200,
      false,
      'cancelled',
    ]);
    expect(
      (await api('DELETE', `/v1/expected-shipments/${s.id}`, { key: w.agentKey, headers: V })).body.already_cancelled,
    ).toBe(true);
    const late = await api('PATCH', `/v1/expected-shipments/${s.id}`, {
      key: w.agentKey,
      headers: V,
      json: { description: 'x' },
    });
    expect([late.status, late.body.code]).toEqual([409, 'EXPECTED_SHIPMENT_NOT_OPEN']);
    // Cancelled, the tracking number is free again.
    expect((await create({ tracking_number: '9400100000000000000001' }, w.otherAgentKey)).status).toBe(201);
  });

  it('replays a create with the same Idempotency-Key', async () => {
    const headers = { ...V, 'idempotency-key': randomUUID() };
    const first = await create({ tracking_number: 'IDEM-1' }, w.agentKey, '', headers);
    const again = await create({ tracking_number: 'IDEM-1' }, w.agentKey, '', headers);
    expect([first.status, again.status, again.body.expected_shipment.id]).toEqual([
      201,
      201,
      first.body.expected_shipment.id,
    ]);
  });

  it('is satisfied by the arriving package: linked, received, routed to the expecting agent, on_arrival requested', async () => {
    // The member announces a parcel for the second agent; the facility matches the piece without naming an agent.
    const announced = await create(
      {
        tracking_number: '1z 999-aa1 0123456784',
        carrier: 'UPS',
        on_arrival: { action: 'scan', parameters: { scan_type: 'label' } },
      },
      w.memberKey,
      `?agent_id=${w.otherAgentId}`,
    );
    expect(announced.status).toBe(201);
    const id = announced.body.expected_shipment.id;

    const commit = await commitPiece(app, w, { kind: 'parcel', carrier: 'UPS', tracking: '1Z999AA10123456784' });
    expect(commit.item.agent_id).toBe(w.otherAgentId);
    expect(commit.arrival).toMatchObject({ expected_shipment_id: id, action_id: expect.any(String) });
    const packageId = commit.item.id;

    const shipment = (await api('GET', `/v1/expected-shipments/${id}`, { key: w.otherAgentKey })).body
      .expected_shipment;
    expect(shipment).toMatchObject({
      status: 'received',
      package_id: packageId,
      arrival_action_id: commit.arrival.action_id,
      received_at: expect.any(String),
    });
    const pkg = (await api('GET', `/v1/packages/${packageId}`, { key: w.otherAgentKey })).body.package;
    expect(pkg.expected_shipment).toMatchObject({
      id,
      tracking_number: '1z 999-aa1 0123456784',
      arrival_action_id: commit.arrival.action_id,
    });
    expect(pkg.events.map((e: { event_type: string }) => e.event_type)).toEqual(
      expect.arrayContaining(['expected_shipment_received', 'package_action_requested']),
    );
    expect(pkg.actions).toEqual([
      expect.objectContaining({
        id: commit.arrival.action_id,
        action: 'scan',
        requested_by: 'member',
        status: 'requested',
        parameters: { scan_type: 'label' },
        agent_data: { requested_on_arrival: { source: 'expected_shipment', id } },
      }),
    ]);
    // The facility has the scan to do.
    const requests = (await api('GET', '/v1/facility/scan-requests', { key: w.facilityKey })).body.scan_requests;
    expect(requests.filter((r: { item_id: string }) => r.item_id === packageId)).toEqual([
      expect.objectContaining({ scan_type: 'label', package_action_id: commit.arrival.action_id }),
    ]);

    const change = await api('PATCH', `/v1/expected-shipments/${id}`, {
      key: w.memberKey,
      headers: V,
      json: { notes: 'x' },
    });
    expect([change.status, change.body.code, change.body.details]).toEqual([
      409,
      'EXPECTED_SHIPMENT_NOT_OPEN',
      { status: 'received', package_id: packageId },
    ]);
    expect((await api('DELETE', `/v1/expected-shipments/${id}`, { key: w.memberKey, headers: V })).status).toBe(409);
  });

  it('is not satisfied by a piece the facility gives to another agent, nor by another tracking number', async () => {
    const id = (await create({ tracking_number: 'ZZ-555' })).body.expected_shipment.id;
    const elsewhere = await commitPiece(app, w, { kind: 'parcel', tracking: 'zz555', agentId: w.otherAgentId });
    expect(elsewhere.arrival).toEqual({ expected_shipment_id: null, matched_rule_ids: [], tags: [], action_id: null });
    const untracked = await commitPiece(app, w, { kind: 'parcel', tracking: 'ZZ-556' });
    expect(untracked.arrival.expected_shipment_id).toBeNull();
    expect((await api('GET', `/v1/expected-shipments/${id}`, { key: w.agentKey })).body.expected_shipment.status).toBe(
      'expected',
    );
    const arrived = await commitPiece(app, w, { kind: 'parcel', tracking: 'ZZ 555' });
    expect([arrived.item.agent_id, arrived.arrival.expected_shipment_id, arrived.arrival.action_id]).toEqual([
      w.agentId,
      id,
      null,
    ]);
  });
});
