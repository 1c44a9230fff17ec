// Packages: live-only custody; filters, photos, actions and their PATCH rules, forwarding,
// scans, tags, notes, and the refusals (test keys, scopes, other agents, not enabled).
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newCredential } from '../helpers/agents';
import { newWorld, receivePiece, World } from '../helpers/physical-inbound';

describe('packages', () => {
  let app: TestApp;
  let w: World;
  let api: ReturnType<typeof client>;
  let letter: string;
  let parcel: string;
  let othersParcel: string;
  const V = { 'x-service-md-version': '1' };
  const address = {
    to_name: 'Ada Lovelace',
    to_line1: '1 Main St',
    to_city: 'Austin',
    to_state: 'TX',
    to_zip: '78701',
  };

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    w = await newWorld(app);
    letter = await receivePiece(app, w, { carrier: 'usps' });
    parcel = await receivePiece(app, w, {
      kind: 'parcel',
      carrier: 'UPS',
      tracking: '1Z999AA10123456784',
      weightOz: 32,
    });
    othersParcel = await receivePiece(app, w, { kind: 'parcel', agentId: w.otherAgentId });
  });
  afterAll(async () => {
    await app.close();
  });

  describe('refusals', () => {
    it.each([
      ['agent test key', 'agentTestKey'],
      ['member test key', 'memberTestKey'],
    ] as const)('answers a %s with sandbox_not_supported', async (_, which) => {
      for (const [method, path] of [
        ['GET', '/v1/packages'],
        ['GET', `/v1/packages/${parcel}`],
        ['POST', `/v1/packages/${parcel}/forward`],
        ['DELETE', `/v1/packages/${parcel}/tags?tag=x`],
      ]) {
        const res = await api(method, path, {
          key: w[which],
          headers: V,
          json: method === 'POST' ? address : undefined,
        });
        expect([path, res.status, res.body.reason]).toEqual([path, 403, 'sandbox_not_supported']);
      }
    });

    it("refuses another agent's package with 403 and another member's with 404", async () => {
      const res = await api('GET', `/v1/packages/${othersParcel}`, { key: w.agentKey });
      expect(res.status).toBe(403);
      expect(res.body.reason).toBe('package_belongs_to_another_agent');
      expect(
        (await api('POST', `/v1/packages/${othersParcel}/forward`, { key: w.agentKey, headers: V, json: address }))
          .status,
      ).toBe(403);
      const stranger = await newWorld(app);
      expect((await api('GET', `/v1/packages/${parcel}`, { key: stranger.memberKey })).status).toBe(404);
      expect((await api('GET', `/v1/packages/${parcel}`, { key: w.memberKey })).status).toBe(200);
    });

    it('needs the account enabled, the scopes, and the instructions version from agents', async () => {
      const off = await newWorld(app, { packages: false });
      const res = await api('GET', `/v1/packages?agent_id=${off.agentId}`, { key: off.memberKey });
      expect(res.status).toBe(403);
      expect(res.body.reason).toBe('packages_not_enabled');
      const writer = await newCredential(app.baseUrl, w.memberKey, w.agentId, {
        scopes: ['package.read', 'package.write'],
      });
      const forwarder = await newCredential(app.baseUrl, w.memberKey, w.agentId, {
        scopes: ['package.read', 'forward.create'],
      });
      const noScope = (r: { status: number; body: { reason?: string; details?: { required_scopes?: string[] } } }) => [
        r.status,
        r.body.reason,
        r.body.details?.required_scopes,
      ];
      expect(
        noScope(
          await api('POST', `/v1/packages/${letter}/actions`, {
            key: writer.key,
            headers: V,
            json: { action: 'forward', parameters: address },
          }),
        ),
      ).toEqual([403, 'insufficient_scope', ['forward.create']]);
      expect(
        noScope(
          await api('POST', `/v1/packages/${letter}/actions`, {
            key: forwarder.key,
            headers: V,
            json: { action: 'hold' },
          }),
        ),
      ).toEqual([403, 'insufficient_scope', ['package.write']]);
      expect(
        noScope(await api('POST', `/v1/packages/${letter}/forward`, { key: writer.key, headers: V, json: address })),
      ).toEqual([403, 'insufficient_scope', ['forward.create']]);
      expect(
        noScope(await api('POST', `/v1/packages/${letter}/scan`, { key: writer.key, headers: V, json: {} })),
      ).toEqual([403, 'insufficient_scope', ['scan.create']]);
      const missing = await api('POST', `/v1/packages/${letter}/notes`, { key: w.agentKey, json: { note: 'x' } });
      expect([missing.status, missing.body.code]).toEqual([400, 'SERVICE_MD_VERSION_REQUIRED']);
      const staleVersion = await api('POST', `/v1/packages/${letter}/notes`, {
        key: w.agentKey,
        headers: { 'x-service-md-version': '2' },
        json: { note: 'x' },
      });
      expect([staleVersion.status, staleVersion.body.code]).toEqual([409, 'SERVICE_MD_VERSION_MISMATCH']);
    });
  });

  it('lists with filters and pagination; member keys name the agent', async () => {
    expect((await api('GET', '/v1/packages', { key: w.memberKey })).body.fields).toEqual([
      expect.objectContaining({ path: 'query.agent_id' }),
    ]);
    const ids = async (qs: string, key = w.agentKey) =>
      (await api('GET', `/v1/packages${qs}`, { key })).body.packages.map((p: { id: string }) => p.id).sort();
    expect(await ids('')).toEqual([letter, parcel].sort());
    expect(await ids(`?agent_id=${w.otherAgentId}`)).toEqual([letter, parcel].sort()); // ignored for agent keys
    expect(await ids(`?agent_id=${w.otherAgentId}`, w.memberKey)).toEqual([othersParcel]);
    expect(await ids('?carrier=ups')).toEqual([parcel]);
    expect(await ids('?status=received')).toHaveLength(2);
    expect(await ids('?status=forwarded')).toEqual([]);
    expect(await ids(`?mailbox_id=${w.mailboxId.toLowerCase()}`)).toHaveLength(2);
    const [row] = await app.deps.db.query(`SELECT received_at FROM physical_inbound_items WHERE id = $1`, [parcel]);
    const at = encodeURIComponent((row.received_at as Date).toISOString());
    expect(await ids(`?since=${at}&before=${at}`)).toEqual([parcel]); // both bounds inclusive
    const page = await api('GET', '/v1/packages?limit=1&offset=1', { key: w.agentKey });
    expect(page.body.pagination).toEqual({ total: 2, limit: 1, offset: 1, has_more: false });
    expect(page.body.packages[0]).toEqual(
      expect.objectContaining({ mailbox_id: w.mailboxId, agent_id: w.agentId, photos_count: 1, status: 'received' }),
    );
    expect((await api('GET', '/v1/packages?limit=101', { key: w.agentKey })).status).toBe(400);
    expect((await api('GET', '/v1/packages?status=lost', { key: w.agentKey })).status).toBe(400);
  });

  it('shows detail and photos with signed URLs', async () => {
    const detail = await api('GET', `/v1/packages/${parcel}`, { key: w.agentKey });
    expect(detail.body.package).toMatchObject({
      id: parcel,
      kind: 'parcel',
      carrier: 'UPS',
      tracking_number: '1Z999AA10123456784',
      weight_oz: 32,
      photos_count: 1,
      label_data: { carrier: 'UPS', sender_name: 'Acme Insurance', mailbox_id: w.mailboxId },
      actions: [],
      tags: [],
      notes_count: 0,
    });
    expect(detail.body.package.events.map((e: { event_type: string }) => e.event_type)).toEqual([
      'received',
      'assigned',
    ]);
    const photos = await api('GET', `/v1/packages/${parcel}/photos?photo_type=sealed_exterior`, { key: w.agentKey });
    expect(photos.body.photos).toHaveLength(1);
    const image = await fetch(photos.body.photos[0].url);
    expect(image.status).toBe(200);
    expect(
      Buffer.from(await image.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    expect(
      (await api('GET', `/v1/packages/${parcel}/photos?photo_type=scan_letter`, { key: w.agentKey })).body.photos,
    ).toEqual([]);
    expect((await api('GET', `/v1/packages/${parcel}/photos?photo_type=selfie`, { key: w.agentKey })).status).toBe(400);
  });

  it('forwards: required fields, a forwardable package, forwarding_requested', async () => {
    const missing = await api('POST', `/v1/packages/${parcel}/forward`, {
      key: w.agentKey,
      headers: V,
      json: { to_name: 'A', to_line1: '1 Main' },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.fields.map((f: { path: string }) => f.path).sort()).toEqual(['to_city', 'to_state', 'to_zip']);
    const badZip = await api('POST', `/v1/packages/${parcel}/forward`, {
      key: w.agentKey,
      headers: V,
      json: { ...address, to_zip: '7870' },
    });
    expect(badZip.body.fields).toEqual([expect.objectContaining({ path: 'to_zip' })]);
    const res = await api('POST', `/v1/packages/${parcel}/forward`, {
      key: w.agentKey,
      headers: V,
      json: { ...address, insurance: true },
    });
    expect(res.status).toBe(201);
    expect(res.body.forwarding_request).toMatchObject({
      to_country: 'US',
      service_level: 'ground',
      insurance: true,
      signature_required: false,
      status: 'requested',
    });
    expect(res.body.package.status).toBe('forwarding_requested');
    const again = await api('POST', `/v1/packages/${parcel}/forward`, { key: w.agentKey, headers: V, json: address });
    expect([again.status, again.body.code]).toEqual([400, 'PACKAGE_NOT_FORWARDABLE']);
    expect(
      (await api('GET', `/v1/packages/${parcel}/forward`, { key: w.agentKey })).body.forwarding_requests,
    ).toHaveLength(1);

    // The facility ships it (tracking required), then it is delivered.
    const action = res.body.action;
    const status = (json: Record<string, unknown>) =>
      api('POST', `/v1/facility/package-actions/${action.id}/status`, { key: w.facilityKey, json });
    expect((await status({ status: 'in_progress', expected_version: 1 })).body.fields).toEqual([
      expect.objectContaining({ path: 'tracking_number' }),
    ]);
    expect((await status({ status: 'in_progress', expected_version: 2, tracking_number: '1ZSHIP' })).status).toBe(409);
    expect(
      (await status({ status: 'in_progress', expected_version: 1, tracking_number: '1ZSHIP', carrier: 'ups' })).body
        .package_status,
    ).toBe('forwarding_shipped');
    expect((await status({ status: 'completed', expected_version: 2 })).body.package_status).toBe('forwarded');
    const fwd = (await api('GET', `/v1/packages/${parcel}/forward`, { key: w.agentKey })).body.forwarding_requests[0];
    expect(fwd).toMatchObject({ status: 'completed', tracking_number: '1ZSHIP', carrier: 'ups' });
  });

  it('records actions and lets agents PATCH them only while active', async () => {
    const created = await api('POST', `/v1/packages/${letter}/actions`, {
      key: w.agentKey,
      headers: V,
      json: { action: 'photograph', priority: 'high', parameters: { angles: 4 } },
    });
    expect(created.status).toBe(201);
    const action = created.body.action;
    expect(action).toMatchObject({
      action: 'photograph',
      priority: 'high',
      status: 'requested',
      version: 1,
      requested_by: 'agent',
    });
    expect(
      (
        await api('POST', `/v1/packages/${letter}/actions`, {
          key: w.agentKey,
          headers: V,
          json: { action: 'teleport' },
        })
      ).status,
    ).toBe(400);
    const path = `/v1/packages/${letter}/actions/${action.id}`;
    const patch = (json: Record<string, unknown>, headers: Record<string, string> = {}) =>
      api('PATCH', path, { key: w.agentKey, headers: { ...V, ...headers }, json });

    const noted = await patch({
      agent_notes: 'front and back',
      agent_data: { run: 7 },
      decision_context: { mailbox_md_section: 'Photos', reasoning: 'asked by owner' },
    });
    expect(noted.status).toBe(200);
    expect(noted.body.action).toMatchObject({
      agent_notes: 'front and back',
      agent_data: { run: 7 },
      decision_context: { mailbox_md_section: 'Photos' },
      version: 2,
    });
    expect((await patch({ unknown_field: 1 })).status).toBe(400);
    expect((await patch({ respond_to_clarification: 'yes' })).body.fields).toEqual([
      expect.objectContaining({ path: 'respond_to_clarification' }),
    ]);
    const stale = await patch({ agent_notes: 'x' }, { 'if-match': '1' });
    expect([stale.status, stale.body.code]).toEqual([409, 'VERSION_STALE']);

    // A change in progress elsewhere holds the row: 409 concurrent modification.
    const runner = app.deps.db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      await runner.query(`SELECT id FROM package_actions WHERE id = $1 FOR UPDATE`, [action.id]);
      const busy = await patch({ agent_notes: 'y' });
      expect([busy.status, busy.body.code]).toEqual([409, 'CONCURRENT_MODIFICATION']);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }

    // The facility asks a question; the agent's answer puts the action back to requested.
    const facility = (json: Record<string, unknown>) =>
      api('POST', `/v1/facility/package-actions/${action.id}/status`, { key: w.facilityKey, json });
    expect((await facility({ status: 'clarification_needed', expected_version: 2 })).status).toBe(400);
    expect(
      (
        await facility({
          status: 'clarification_needed',
          expected_version: 2,
          clarification_question: 'Colour or black and white?',
        })
      ).status,
    ).toBe(200);
    const answered = await patch({ respond_to_clarification: 'Colour' });
    expect(answered.body.action).toMatchObject({
      status: 'requested',
      clarification_question: 'Colour or black and white?',
      clarification_response: 'Colour',
      version: 4,
    });
    expect((await facility({ status: 'completed', expected_version: 4, note: '4 photos' })).status).toBe(200);
    const inactive = await patch({ agent_notes: 'late' });
    expect([inactive.status, inactive.body.code]).toEqual([400, 'ACTION_NOT_ACTIVE']);
    expect((await facility({ status: 'failed', expected_version: 5 })).status).toBe(409);

    const listed = await api('GET', `/v1/packages/${letter}/actions`, { key: w.agentKey });
    expect(listed.body.actions.map((a: { id: string }) => a.id)).toContain(action.id);
    expect(
      (await api('GET', `${path.replace(action.id, '00000000-0000-4000-8000-000000000000')}`, { key: w.agentKey }))
        .status,
    ).toBe(404);
    expect((await api('GET', path, { key: w.memberKey })).body.action).toMatchObject({
      status: 'completed',
      result: { note: '4 photos' },
    });
  });

  it('requests scans (a scan action with a facility scan request)', async () => {
    const bad = await api('POST', `/v1/packages/${letter}/scan`, {
      key: w.agentKey,
      headers: V,
      json: { scan_type: 'xray' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.fields).toEqual([expect.objectContaining({ path: 'scan_type' })]);
    const res = await api('POST', `/v1/packages/${letter}/scan`, {
      key: w.agentKey,
      headers: V,
      json: { scan_type: 'envelope', options: { dpi: 300 } },
    });
    expect(res.status).toBe(201);
    expect(res.body.scan_request).toMatchObject({ scan_type: 'envelope', status: 'requested', options: { dpi: 300 } });
    expect(res.body.action).toMatchObject({ action: 'scan', scan_request_id: res.body.scan_request.id });
    const dflt = await api('POST', `/v1/packages/${letter}/scan`, {
      key: w.agentKey,
      headers: { ...V, 'idempotency-key': 'scan-1' },
    });
    expect(dflt.body.scan_request.scan_type).toBe('document');
    const replay = await api('POST', `/v1/packages/${letter}/scan`, {
      key: w.agentKey,
      headers: { ...V, 'idempotency-key': 'scan-1' },
    });
    expect(replay.body.scan_request.id).toBe(dflt.body.scan_request.id);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const refused = await api('POST', `/v1/facility/scan-requests/${res.body.scan_request.id}/reject`, {
      key: w.facilityKey,
      json: { reason: 'envelope too damaged' },
    });
    expect(refused.body.scan_request.status).toBe('rejected');
    const scans = await api('GET', `/v1/packages/${letter}/scan`, { key: w.agentKey });
    expect(
      scans.body.scans.find((s: { scan_request: { id: string } }) => s.scan_request.id === res.body.scan_request.id),
    ).toMatchObject({ scan_request: { status: 'rejected', rejection_reason: 'envelope too damaged' }, bundle: null });
    const action = await api('GET', `/v1/packages/${letter}/actions/${res.body.action.id}`, { key: w.agentKey });
    expect(action.body.action.status).toBe('failed');
  });

  it('tags and notes', async () => {
    const tag = (json: Record<string, unknown>) =>
      api('POST', `/v1/packages/${letter}/tags`, { key: w.agentKey, headers: V, json });
    expect((await tag({ tag: 'urgent' })).status).toBe(201);
    expect((await tag({ label: 'tax' })).body.tags.map((t: { tag: string }) => t.tag)).toEqual(['urgent', 'tax']);
    expect((await tag({ name: 'tax' })).body.created).toBe(false);
    expect((await tag({})).status).toBe(400);
    const noTag = await api('DELETE', `/v1/packages/${letter}/tags`, { key: w.agentKey, headers: V });
    expect([noTag.status, noTag.body.fields?.[0]?.path]).toEqual([400, 'query.tag']);
    expect((await api('DELETE', `/v1/packages/${letter}/tags?tag=nope`, { key: w.agentKey, headers: V })).status).toBe(
      404,
    );
    const removed = await api('DELETE', `/v1/packages/${letter}/tags?tag=urgent`, { key: w.agentKey, headers: V });
    expect(removed.body).toMatchObject({ removed: 'urgent', tags: [{ tag: 'tax' }] });
    expect(
      (
        await api('DELETE', '/v1/packages/00000000-0000-4000-8000-000000000000/tags?tag=tax', {
          key: w.agentKey,
          headers: V,
        })
      ).status,
    ).toBe(404);

    const note = (json: Record<string, unknown>) =>
      api('POST', `/v1/packages/${letter}/notes`, { key: w.agentKey, headers: V, json });
    expect((await note({ note: 'first', metadata: { source: 'run-1' } })).body.note).toMatchObject({
      note: 'first',
      metadata: { source: 'run-1' },
      author: 'agent',
    });
    expect((await note({ text: 'second' })).status).toBe(201);
    expect((await note({ message: 'third' })).status).toBe(201);
    expect((await note({ metadata: {} })).status).toBe(400);
    expect((await note({ note: '' })).status).toBe(400);
    const notes = await api('GET', `/v1/packages/${letter}/notes?limit=2`, { key: w.memberKey });
    expect(notes.body.notes.map((n: { note: string }) => n.note)).toEqual(['third', 'second']);
    expect(notes.body.pagination).toMatchObject({ total: 3, has_more: true });
  });
});
