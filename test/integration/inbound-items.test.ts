// Managed mailbox items: search and filters, Open & Scan requests (member quote, agent
// approval), scans with saved OCR, the member sample for test keys, and the timeline.
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newCredential } from '../helpers/agents';
import { newWorld, receivePiece, World } from '../helpers/physical-inbound';
import { getBalance } from '../../services/billing/credits';
import { memberSampleId } from '../../services/physical-inbound/sandbox-fixtures';

describe('managed mailbox items', () => {
  let app: TestApp;
  let w: World;
  let api: ReturnType<typeof client>;
  let letter: string;
  let parcel: string;
  let otherAgentsLetter: string;

  const list = (qs: string, key = w.memberKey) => api('GET', `/v1/inbound-items${qs}`, { key });
  const ids = (res: { body: { items: Array<{ id: string }> } }) => res.body.items.map((i) => i.id).sort();

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    w = await newWorld(app);
    letter = await receivePiece(app, w, { carrier: 'usps' });
    parcel = await receivePiece(app, w, {
      kind: 'parcel',
      carrier: 'ups',
      tracking: '1Z999AA10123456784',
      weightOz: 20,
    });
    otherAgentsLetter = await receivePiece(app, w, { agentId: w.otherAgentId });
  });
  afterAll(async () => {
    await app.close();
  });

  it("lists the caller's items: member keys all agents, agent keys their own", async () => {
    expect(ids(await list(''))).toEqual([letter, parcel, otherAgentsLetter].sort());
    expect(ids(await list(`?agent_id=${w.otherAgentId}`))).toEqual([otherAgentsLetter]);
    expect(ids(await list('', w.agentKey))).toEqual([letter, parcel].sort());
    expect((await api('GET', `/v1/inbound-items/${otherAgentsLetter}`, { key: w.agentKey })).status).toBe(404);
    const item = (await api('GET', `/v1/inbound-items/${parcel}`, { key: w.agentKey })).body.item;
    expect(item).toMatchObject({
      object: 'inbound_item',
      kind: 'parcel',
      status: 'received',
      version: 1,
      environment: 'live',
      source_domain: 'internal_team',
      mailbox_id: w.mailboxId,
      tracking_number: '1Z999AA10123456784',
      weight_oz: 20,
      latest_scan: null,
      available_actions: ['open_and_scan'],
      quotes: { open_and_scan: { amount_cents: 1500, currency: 'usd', display: '$15.00' } },
    });
  });

  it('searches with literal AND terms and filters by status, kind and receipt time', async () => {
    expect(ids(await list('?q=package'))).toEqual([parcel]);
    expect(ids(await list('?q=LETTER%20test%20member'))).toEqual([letter, otherAgentsLetter].sort());
    expect(ids(await list('?kind=letter&agent_id=' + w.agentId))).toEqual([letter]);
    expect(ids(await list('?status=forwarded'))).toEqual([]);
    const [row] = await app.deps.db.query(`SELECT received_at FROM physical_inbound_items WHERE id = $1`, [parcel]);
    const at = encodeURIComponent((row.received_at as Date).toISOString());
    expect(ids(await list(`?received_after=${at}`))).toContain(parcel);
    expect(ids(await list(`?received_before=${at}`))).not.toContain(parcel);
    const page = await list('?limit=2');
    expect(page.body.pagination).toMatchObject({ total: 3, limit: 2, offset: 0, has_more: true, next_offset: 2 });
    expect((await list('?q=letter')).body.search).toEqual({ query: 'letter', mode: 'literal_and', terms: ['letter'] });
    for (const qs of [
      '?limit=51',
      '?offset=10001',
      '?kind=box',
      '?q=a&q=b',
      '?color=red',
      `?q=${'x'.repeat(201)}`,
      '?status=lost',
    ]) {
      expect([qs, (await list(qs)).status]).toEqual([qs, 400]);
    }
  });

  it("takes a member's Open & Scan with the displayed quote, charged at once", async () => {
    const send = (json: Record<string, unknown>, key = 'm-1') =>
      api('POST', `/v1/inbound-items/${letter}/actions`, {
        key: w.memberKey,
        json,
        headers: { 'idempotency-key': key },
      });
    expect(
      (
        await api('POST', `/v1/inbound-items/${letter}/actions`, {
          key: w.memberKey,
          json: { action_type: 'open_and_scan', expected_version: 1 },
        })
      ).status,
    ).toBe(400);
    expect((await send({ action_type: 'forward_original', expected_version: 1 }, 'm-0')).status).toBe(400);
    const noQuote = await send({ action_type: 'open_and_scan', expected_version: 1 }, 'm-2');
    expect(noQuote.body.fields).toEqual([expect.objectContaining({ path: 'expected_quote' })]);
    const changed = await send(
      { action_type: 'open_and_scan', expected_version: 1, expected_quote: { amount_cents: 400, currency: 'usd' } },
      'm-3',
    );
    expect(changed.status).toBe(409);
    expect(changed.body).toMatchObject({ code: 'QUOTE_CHANGED', details: { quote: { amount_cents: 500 } } });
    const stale = await send(
      { action_type: 'open_and_scan', expected_version: 9, expected_quote: { amount_cents: 500, currency: 'usd' } },
      'm-4',
    );
    expect(stale.status).toBe(409);
    expect(stale.body.details).toMatchObject({ current_version: 1 });

    const before = (await getBalance(app.deps, w.memberId)).balance_cents;
    const ok = await send(
      {
        action_type: 'open_and_scan',
        expected_version: 1,
        expected_quote: { amount_cents: 500, currency: 'usd', display: '$5.00' },
      },
      'm-5',
    );
    expect(ok.status).toBe(201);
    expect(ok.body.operation).toMatchObject({
      origin: 'member',
      status: 'awaiting_facility',
      charged_cents: 500,
      action_type: 'open_and_scan',
    });
    expect(ok.body.item).toMatchObject({
      version: 2,
      open_operation: { id: ok.body.operation.id },
      available_actions: [],
    });
    expect((await getBalance(app.deps, w.memberId)).balance_cents).toBe(before - 500);
    const replay = await send(
      {
        action_type: 'open_and_scan',
        expected_version: 1,
        expected_quote: { amount_cents: 500, currency: 'usd', display: '$5.00' },
      },
      'm-5',
    );
    expect(replay.body.operation.id).toBe(ok.body.operation.id);
    expect((await getBalance(app.deps, w.memberId)).balance_cents).toBe(before - 500);
    const queue = await api('GET', '/v1/facility/internal-inbound/handling', { key: w.facilityKey });
    expect(queue.body.operations.map((o: { id: string }) => o.id)).toContain(ok.body.operation.id);
  });

  it("makes an agent's Open & Scan wait for the member", async () => {
    const res = await api('POST', `/v1/inbound-items/${parcel}/actions`, {
      key: w.agentKey,
      headers: { 'idempotency-key': 'a-1', 'x-service-md-version': '1' },
      json: { action_type: 'open_and_scan', expected_version: 1 },
    });
    expect(res.status).toBe(201);
    expect(res.body.operation).toMatchObject({ origin: 'agent', status: 'awaiting_member_approval', charged_cents: 0 });
    const readOnly = await newCredential(app.baseUrl, w.memberKey, w.agentId, { scopes: ['inbound.item.read'] });
    const refused = await api('POST', `/v1/inbound-items/${parcel}/actions`, {
      key: readOnly.key,
      headers: { 'idempotency-key': 'a-2', 'x-service-md-version': '1' },
      json: { action_type: 'open_and_scan', expected_version: 2 },
    });
    expect(refused.body).toMatchObject({
      reason: 'insufficient_scope',
      details: { required_scopes: ['agent.inbox.propose'] },
    });
  });

  it('shows scans with their saved OCR to keys holding inbound.item.scan.read', async () => {
    const noScanScope = await newCredential(app.baseUrl, w.memberKey, w.agentId, { scopes: ['inbound.item.read'] });
    expect(
      (await api('GET', `/v1/inbound-items/${letter}/scans`, { key: noScanScope.key })).body.details.required_scopes,
    ).toEqual(['inbound.item.scan.read']);
    expect((await api('GET', `/v1/inbound-items/${letter}/scans`, { key: w.agentKey })).body).toEqual({
      item_id: letter,
      scans: [],
      test_mode: false,
    });
    const sample = memberSampleId(w.memberId);
    const scans = await api('GET', `/v1/inbound-items/${sample}/scans`, { key: w.agentTestKey });
    expect(scans.body.scans).toEqual([
      expect.objectContaining({
        page_count: 2,
        ocr_status: 'ready',
        ocr: expect.objectContaining({ status: 'ready', content_trust: 'untrusted_document' }),
      }),
    ]);
    expect(scans.body.scans[0].ocr.pages[0].text).toMatch(/RIVERSIDE WATER UTILITY/);
    const pages = await api('GET', `/v1/inbound-items/${sample}/pages?limit=1&offset=1`, { key: w.memberTestKey });
    expect(pages.body).toMatchObject({
      item_id: sample,
      content_trust: 'untrusted_document',
      pagination: { total: 2, limit: 1, offset: 1, has_more: false },
    });
    expect(pages.body.pages[0]).toMatchObject({
      page_number: 2,
      source_kind: 'sample_letter',
      status: 'ready',
      text: expect.stringMatching(/AMOUNT DUE/),
    });
    expect((await api('GET', `/v1/inbound-items/${letter}/pages`, { key: noScanScope.key })).status).toBe(403);
  });

  it('gives test keys the member sample and nothing live', async () => {
    const sample = memberSampleId(w.memberId);
    const res = await list('', w.memberTestKey);
    expect(ids(res)).toEqual([sample]);
    expect(res.body.items[0]).toMatchObject({
      source_domain: 'member_sample',
      environment: 'test',
      quotes: { open_and_scan: { amount_cents: 0, estimated_live_cost_cents: 500 } },
    });
    expect(ids(await list('?q=riverside%20water', w.agentTestKey))).toEqual([sample]);
    expect((await api('GET', `/v1/inbound-items/${letter}`, { key: w.memberTestKey })).status).toBe(404);
    expect((await api('POST', `/v1/inbound-items/${letter}/reset-sample`, { key: w.memberTestKey })).status).toBe(404);
  });

  it('quotes forwarding the original', async () => {
    const q = await api('GET', `/v1/inbound-items/${parcel}/forward-quote`, { key: w.agentKey });
    expect(q.body).toMatchObject({ mail_class: 'priority', tracked: true, quote: { amount_cents: 250 + 1500 + 300 } });
    expect(
      (await api('GET', `/v1/inbound-items/${parcel}/forward-quote?mail_class=first_class`, { key: w.agentKey }))
        .status,
    ).toBe(400);
    expect(
      (await api('GET', `/v1/inbound-items/${letter}/forward-quote?mail_class=first_class`, { key: w.agentKey })).body
        .quote.amount_cents,
    ).toBe(450);
  });

  it('keeps a timeline of what happened', async () => {
    const all = await api('GET', '/v1/inbound-activity', { key: w.memberKey });
    expect(all.body.activity.map((a: { kind: string }) => a.kind)).toEqual(
      expect.arrayContaining(['received', 'assigned', 'handling_requested', 'handling_proposed']),
    );
    const mine = await api('GET', '/v1/inbound-activity', { key: w.agentKey });
    expect(mine.body.activity.every((a: { item_id: string }) => a.item_id !== otherAgentsLetter)).toBe(true);
    const one = await api('GET', `/v1/inbound-activity?item_id=${letter}&limit=1`, { key: w.memberKey });
    expect(one.body.activity).toHaveLength(1);
    expect(one.body.pagination).toMatchObject({ limit: 1, has_more: true });
  });
});
