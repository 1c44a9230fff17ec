// Mailbox rules (/v1/rules): agent-specific standing instructions for arriving pieces.
// Validation and limits, the agent scoping member keys get with ?agent_id=, and what a
// rule does when the facility commits a matching piece: tags, one requested action,
// the expected shipment's action first, other agents' rules never.
import { startTestApp, TestApp } from '../helpers/app';
import { client, fieldPaths } from '../helpers/http';
import { newCredential } from '../helpers/agents';
import { commitPiece, newWorld, World } from '../helpers/physical-inbound';

describe('mailbox rules', () => {
  let app: TestApp;
  let w: World;
  let api: ReturnType<typeof client>;
  const V = { 'x-service-md-version': '1' };

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    w = await newWorld(app);
  });
  afterAll(async () => {
    await app.close();
  });

  const create = (json: Record<string, unknown>, key = w.agentKey, qs = '') =>
    api('POST', `/v1/rules${qs}`, { key, headers: V, json });

  it('refuses test keys, missing scopes, versions and agents, and bad rules with their paths', async () => {
    const ok = { name: 'x', match: { kinds: ['letter'] }, apply: { add_tags: ['x'] } };
    for (const key of [w.agentTestKey, w.memberTestKey])
      expect((await create(ok, key, `?agent_id=${w.agentId}`)).body.reason).toBe('sandbox_not_supported');
    const reader = await newCredential(app.baseUrl, w.memberKey, w.agentId, { scopes: ['package.read'] });
    expect((await create(ok, reader.key)).body.reason).toBe('insufficient_scope');
    const writer = await newCredential(app.baseUrl, w.memberKey, w.agentId, { scopes: ['package.write'] });
    const forward = await create(
      {
        ...ok,
        apply: {
          request_action: {
            action: 'forward',
            parameters: { to_name: 'A', to_line1: '1 Main', to_city: 'Austin', to_state: 'TX', to_zip: '78701' },
          },
        },
      },
      writer.key,
    );
    expect([forward.status, forward.body.details?.required_scopes]).toEqual([403, ['forward.create']]);
    const noVersion = await api('POST', '/v1/rules', { key: w.agentKey, json: ok });
    expect(noVersion.body.code).toBe('SERVICE_MD_VERSION_REQUIRED');
    expect(fieldPaths((await create(ok, w.memberKey)).body)).toEqual(['query.agent_id']);
    expect(fieldPaths((await create(ok, w.memberKey, `?agent_id=${(await newWorld(app)).agentId}`)).body)).toEqual([
      'query.agent_id',
    ]);

    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ ...ok, match: {} }, ['match']],
      [{ ...ok, match: { sender_contains: [], carriers: [] } }, ['match']],
      [{ ...ok, apply: {} }, ['apply']],
      [{ ...ok, apply: { add_tags: [] } }, ['apply']],
      [{ ...ok, match: { sender_contains: ['ok', 'bad\u0007bell'] } }, ['match.sender_contains.1']],
      [{ ...ok, match: { sender_contains: ['   '] } }, ['match.sender_contains.0']],
      [{ ...ok, match: { kinds: ['crate'] } }, ['match.kinds.0']],
      [{ ...ok, apply: { add_tags: Array.from({ length: 11 }, (_, i) => `t${i}`) } }, ['apply.add_tags']],
      [
        { ...ok, apply: { request_action: { action: 'forward', parameters: { to_name: 'A' } } } },
        [
          'apply.request_action.parameters.to_city',
          'apply.request_action.parameters.to_line1',
          'apply.request_action.parameters.to_state',
          'apply.request_action.parameters.to_zip',
        ],
      ],
      [{ ...ok, name: '' }, ['name']],
    ];
    for (const [json, paths] of cases) {
      const res = await create(json);
      expect({ json, status: res.status, paths: fieldPaths(res.body) }).toEqual({ json, status: 400, paths });
    }
    expect(await app.deps.db.query(`SELECT 1 FROM mailbox_rules WHERE member_id = $1`, [w.memberId])).toEqual([]);
  });

  it('reads, lists in order, changes and deletes rules per agent; at most 25 per agent', async () => {
    const world = await newWorld(app);
    const made: string[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await create(
        { name: `r${i}`, match: { carriers: ['ups'] }, apply: { add_tags: [`t${i}`] } },
        world.memberKey,
        `?agent_id=${world.agentId}`,
      );
      expect(res.status).toBe(201);
      made.push(res.body.rule.id);
    }
    const over = await create(
      { name: 'one too many', match: { carriers: ['ups'] }, apply: { add_tags: ['t'] } },
      world.agentKey,
    );
    expect([over.status, over.body.code]).toEqual([422, 'MAILBOX_RULE_LIMIT']);
    // The other agent has its own budget.
    expect(
      (await create({ name: 'other', match: { carriers: ['ups'] }, apply: { add_tags: ['t'] } }, world.otherAgentKey))
        .status,
    ).toBe(201);

    const page = await api('GET', '/v1/rules?limit=10&offset=20', { key: world.agentKey });
    expect([page.body.pagination.total, page.body.rules.map((r: { id: string }) => r.id)]).toEqual([
      25,
      made.slice(20),
    ]);
    const first = made[0];
    expect((await api('GET', `/v1/rules/${first}`, { key: world.otherAgentKey })).status).toBe(404);
    expect(
      (await api('GET', `/v1/rules/${first}?agent_id=${world.otherAgentId}`, { key: world.memberKey })).status,
    ).toBe(404);
    expect((await api('GET', `/v1/rules/${first}`, { key: w.memberKey })).status).toBe(404);
    const patched = await api('PATCH', `/v1/rules/${first}`, {
      key: world.agentKey,
      headers: V,
      json: { enabled: false, apply: { request_action: { action: 'hold' } } },
    });
    expect(patched.body.rule).toMatchObject({
      enabled: false,
      match: { carriers: ['ups'] },
      apply: { request_action: { action: 'hold', priority: 'normal' } },
    });
    expect(
      (await api('GET', '/v1/rules?enabled=false', { key: world.agentKey })).body.rules.map(
        (r: { id: string }) => r.id,
      ),
    ).toEqual([first]);
    expect(
      fieldPaths(
        (await api('PATCH', `/v1/rules/${first}`, { key: world.agentKey, headers: V, json: { match: {} } })).body,
      ),
    ).toEqual(['match']);
    expect((await api('DELETE', `/v1/rules/${first}`, { key: world.agentKey, headers: V })).body).toEqual({
      deleted: true,
      id: first,
      test_mode: false,
    });
    expect((await api('GET', `/v1/rules/${first}`, { key: world.agentKey })).status).toBe(404);
    expect(
      (await create({ name: 'room again', match: { carriers: ['ups'] }, apply: { add_tags: ['t'] } }, world.agentKey))
        .status,
    ).toBe(201);
  });

  it("acts on arriving pieces: tags from every matching rule, the first rule's action, nothing from other agents' rules", async () => {
    const mine = async (json: Record<string, unknown>) => (await create(json)).body.rule.id as string;
    const insurer = await mine({
      name: 'Insurers: hold',
      match: { sender_contains: ['acme insurance', 'globex'] },
      apply: { add_tags: ['insurance'], request_action: { action: 'hold', priority: 'high' } },
    });
    const ups = await mine({
      name: 'UPS parcels',
      match: { carriers: ['ups'], kinds: ['parcel'] },
      apply: { add_tags: ['ups', 'insurance'], request_action: { action: 'photograph' } },
    });
    await mine({ name: 'off', enabled: false, match: { sender_contains: ['acme'] }, apply: { add_tags: ['never'] } });
    await create(
      {
        name: 'theirs',
        match: { sender_contains: ['acme'] },
        apply: { add_tags: ['other-agent'], request_action: { action: 'shred' } },
      },
      w.otherAgentKey,
    );

    const parcel = await commitPiece(app, w, { kind: 'parcel', carrier: 'UPS', sender: 'ACME  Insurance Co.' });
    expect(parcel.arrival).toEqual({
      expected_shipment_id: null,
      matched_rule_ids: [insurer, ups],
      tags: ['insurance', 'ups'],
      action_id: expect.any(String),
    });
    const pkg = (await api('GET', `/v1/packages/${parcel.item.id}`, { key: w.agentKey })).body.package;
    expect(pkg.tags).toEqual(['insurance', 'ups']);
    expect(pkg.actions).toEqual([
      expect.objectContaining({
        id: parcel.arrival.action_id,
        action: 'hold',
        priority: 'high',
        requested_by: 'agent',
        status: 'requested',
        agent_notes: `Requested on arrival by mailbox rule "Insurers: hold" (${insurer}).`,
      }),
    ]);
    expect(pkg.events.map((e: { event_type: string }) => e.event_type)).toEqual(
      expect.arrayContaining(['mailbox_rules_matched', 'tag_added', 'package_action_requested']),
    );
    const facilityQueue = (await api('GET', '/v1/facility/package-actions', { key: w.facilityKey })).body.actions;
    expect(facilityQueue.find((a: { id: string }) => a.id === parcel.arrival.action_id)).toMatchObject({
      action: 'hold',
      priority: 'high',
    });
    const counted = (await api('GET', `/v1/rules/${insurer}`, { key: w.agentKey })).body.rule;
    expect([counted.match_count, typeof counted.last_matched_at]).toEqual([1, 'string']);

    const letter = await commitPiece(app, w, { kind: 'letter', carrier: 'USPS', sender: 'City Water' });
    expect(letter.arrival).toEqual({ expected_shipment_id: null, matched_rule_ids: [], tags: [], action_id: null });

    // The expected shipment's own instruction wins; the rules' tags still apply.
    const expected = await api('POST', '/v1/expected-shipments', {
      key: w.agentKey,
      headers: V,
      json: { tracking_number: 'RULES-1', on_arrival: { action: 'scan' } },
    });
    const tracked = await commitPiece(app, w, {
      kind: 'parcel',
      carrier: 'ups',
      sender: 'Globex',
      tracking: 'rules 1',
    });
    expect(tracked.arrival).toMatchObject({
      expected_shipment_id: expected.body.expected_shipment.id,
      tags: ['insurance', 'ups'],
    });
    const trackedPkg = (await api('GET', `/v1/packages/${tracked.item.id}`, { key: w.agentKey })).body.package;
    expect(trackedPkg.actions.map((a: { action: string }) => a.action)).toEqual(['scan']);
  });
});
