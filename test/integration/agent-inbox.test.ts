// The agent inbox: who may call it, literal search and its limits, the member sample,
// sandbox seeds, context, sources and scans.
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newCredential } from '../helpers/agents';
import { eventsOf, newWorld, receivePiece, waitFor, World } from '../helpers/physical-inbound';
import { memberSampleId } from '../../services/physical-inbound/sandbox-fixtures';

describe('agent inbox', () => {
  let app: TestApp;
  let w: World;
  let api: ReturnType<typeof client>;
  let twoPage: { item: { id: string; reference_code: string }; scan: { request_id: string; bundle_id: string } };
  let needsReview: { item: { id: string } };
  let liveItem: string;
  let sample: string;

  const seed = (scenario: string, key: string, idem: string | null = `seed-${scenario}-${Math.random()}`) =>
    api('POST', '/v1/agent-inbox/sandbox/seed', {
      key,
      json: { scenario },
      headers: idem ? { 'idempotency-key': idem } : {},
    });
  const search = (q: string, key = w.agentTestKey) => api('GET', `/v1/agent-inbox?q=${encodeURIComponent(q)}`, { key });
  const ids = (res: { body: { items: Array<{ item: { id: string } }> } }) =>
    res.body.items.map((i) => i.item.id).sort();

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    w = await newWorld(app);
    twoPage = (await seed('two_page_letter', w.agentTestKey)).body;
    needsReview = (await seed('needs_review', w.agentTestKey)).body;
    liveItem = await receivePiece(app, w);
    sample = memberSampleId(w.memberId);
  });
  afterAll(async () => {
    await app.close();
  });

  describe('who may call it', () => {
    const routes = (item: string) => [
      ['GET', '/v1/agent-inbox'],
      ['GET', '/v1/agent-inbox/activity'],
      ['GET', `/v1/agent-inbox/${item}/context`],
      ['GET', `/v1/agent-inbox/${item}/sources`],
      ['GET', `/v1/agent-inbox/${item}/handling`],
      ['POST', `/v1/agent-inbox/${item}/acknowledgments`],
      ['POST', `/v1/agent-inbox/${item}/handling`],
    ];
    it.each([
      ['member live key', 'memberKey'],
      ['member test key', 'memberTestKey'],
      ['facility key', 'facilityKey'],
    ] as const)('refuses a %s: it cannot act as an agent', async (_, which) => {
      for (const [method, path] of routes(liveItem)) {
        const res = await api(method, path, { key: w[which], json: method === 'POST' ? {} : undefined });
        expect([path, res.status, res.body.reason]).toEqual([path, 403, 'agent_key_required']);
      }
    });

    it('needs the read scopes, and agent.read to search', async () => {
      const inboxOnly = await newCredential(app.baseUrl, w.memberKey, w.agentId, { scopes: ['agent.inbox.read'] });
      const noInbox = await newCredential(app.baseUrl, w.memberKey, w.agentId, { scopes: ['agent.read'] });
      const cases: Array<[string, string, string]> = [
        [noInbox.key, '/v1/agent-inbox', 'agent.inbox.read'],
        [inboxOnly.key, `/v1/agent-inbox/${liveItem}/context`, 'agent.read'],
        [inboxOnly.key, `/v1/agent-inbox/${liveItem}/sources`, 'agent.read'],
        [inboxOnly.key, `/v1/agent-inbox/${liveItem}/handling`, 'agent.read'],
        [inboxOnly.key, '/v1/agent-inbox?q=letter', 'agent.read'],
      ];
      for (const [key, path, scope] of cases) {
        const res = await api('GET', path, { key });
        expect([path, res.status, res.body.reason, res.body.details?.required_scopes]).toEqual([
          path,
          403,
          'insufficient_scope',
          [scope],
        ]);
      }
      expect((await api('GET', '/v1/agent-inbox', { key: inboxOnly.key })).status).toBe(200);
      const noReport = await api('POST', `/v1/agent-inbox/${liveItem}/acknowledgments`, {
        key: inboxOnly.key,
        json: {},
      });
      expect(noReport.body).toMatchObject({
        reason: 'insufficient_scope',
        details: { required_scopes: ['agent.inbox.report'] },
      });
    });

    it('keeps environments and agents apart', async () => {
      expect(ids(await api('GET', '/v1/agent-inbox', { key: w.agentKey }))).toEqual([liveItem]);
      expect(ids(await api('GET', '/v1/agent-inbox', { key: w.agentTestKey }))).toEqual(
        [twoPage.item.id, needsReview.item.id, sample].sort(),
      );
      expect((await api('GET', `/v1/agent-inbox/${twoPage.item.id}/context`, { key: w.agentKey })).status).toBe(404);
      expect((await api('GET', `/v1/agent-inbox/${liveItem}/context`, { key: w.agentTestKey })).status).toBe(404);
      expect((await api('GET', `/v1/agent-inbox/${liveItem}/context`, { key: w.otherAgentKey })).status).toBe(404);
      expect((await api('GET', '/v1/agent-inbox', { key: w.otherAgentKey })).body.items).toEqual([]);
    });
  });

  describe('literal search', () => {
    it('needs every term to match within one item', async () => {
      expect(ids(await search('riverside'))).toEqual([sample]);
      expect(ids(await search('COUNTY appeal'))).toEqual([twoPage.item.id]); // the two terms sit on different pages of one item
      expect(ids(await search('riverside appeal'))).toEqual([]);
      expect(ids(await search('ｃｏｕｎｔｙ'))).toEqual([twoPage.item.id]); // NFKC
    });

    it('treats punctuation, quotes, % and _ literally', async () => {
      expect(ids(await search('$1,8?4.00'))).toEqual([needsReview.item.id]);
      expect(ids(await search('%'))).toEqual([]);
      expect(ids(await search('_'))).toEqual([]);
      expect(ids(await search('c%nty'))).toEqual([]);
      expect(ids(await search('c_unty'))).toEqual([]);
      expect(ids(await search('"county'))).toEqual([]);
      expect(ids(await search('$42.10'))).toEqual([sample]);
    });

    it('matches ids, reference, kind words, the UTC receipt date and the recipient', async () => {
      expect(ids(await search(twoPage.item.id))).toEqual([twoPage.item.id]);
      expect(ids(await search(twoPage.item.reference_code.toLowerCase()))).toEqual([twoPage.item.id]);
      expect(ids(await search(twoPage.scan.request_id))).toEqual([twoPage.item.id]);
      expect(ids(await search(twoPage.scan.bundle_id))).toEqual([twoPage.item.id]);
      const sources = await api('GET', `/v1/agent-inbox/${twoPage.item.id}/sources`, { key: w.agentTestKey });
      expect(ids(await search(sources.body.pages[1].page_id))).toEqual([twoPage.item.id]);
      expect(ids(await search('letter'))).toHaveLength(3);
      expect(ids(await search('package'))).toEqual([]);
      expect(ids(await search(new Date().toISOString().slice(0, 10)))).toHaveLength(3);
      expect(ids(await search('test member'))).toHaveLength(3);
      expect(ids(await search('example.test needs_review'))).toEqual([]);
    });

    it('reports the query, the mode and pagination', async () => {
      const res = await api('GET', '/v1/agent-inbox?q=letter&limit=1&offset=1', { key: w.agentTestKey });
      expect(res.body.search).toEqual({ query: 'letter', mode: 'literal_and' });
      expect(res.body.pagination).toEqual({ limit: 1, offset: 1, next_offset: 2, total: 3, has_more: true });
      expect(res.body.items[0]).toEqual({
        item: expect.objectContaining({ item_kind: 'letter' }),
        assignment: expect.objectContaining({ environment: 'test' }),
      });
      const last = await api('GET', '/v1/agent-inbox?limit=2&offset=2', { key: w.agentTestKey });
      expect(last.body.pagination).toEqual({ limit: 2, offset: 2, next_offset: null, total: 3, has_more: false });
      const plain = await api('GET', '/v1/agent-inbox', { key: w.agentTestKey });
      expect(plain.body.search).toEqual({ query: null, mode: 'literal_and' });
    });

    it('refuses queries over the limits and unknown or repeated parameters', async () => {
      const bad: Array<[string, string]> = [
        [`q=${'a'.repeat(201)}`, 'query.q'],
        [`q=${encodeURIComponent(Array.from({ length: 13 }, (_, i) => `t${i}`).join(' '))}`, 'query.q'],
        [`q=${encodeURIComponent('\uFDFA'.repeat(12))}`, 'query.q'],
        ['q=a&q=b', 'query.q'],
        ['limit=51', 'query.limit'],
        ['limit=0', 'query.limit'],
        ['offset=10001', 'query.offset'],
        ['limit=5&limit=6', 'query.limit'],
        ['sort=desc', 'query'],
        ['received_after=yesterday', 'query.received_after'],
      ];
      for (const [qs, path] of bad) {
        const res = await api('GET', `/v1/agent-inbox?${qs}`, { key: w.agentTestKey });
        expect([qs, res.status, res.body.fields?.[0]?.path]).toEqual([qs, 400, path]);
      }
      expect((await api('GET', `/v1/agent-inbox?q=${'a'.repeat(200)}`, { key: w.agentTestKey })).status).toBe(200);
    });

    it('filters by receipt time (after inclusive, before exclusive)', async () => {
      const [row] = await app.deps.db.query(`SELECT received_at FROM physical_inbound_items WHERE id = $1`, [
        twoPage.item.id,
      ]);
      const at = (row.received_at as Date).toISOString();
      expect(
        ids(
          await api(
            'GET',
            `/v1/agent-inbox?received_after=${encodeURIComponent(at)}&received_before=${encodeURIComponent(at)}`,
            { key: w.agentTestKey },
          ),
        ),
      ).toEqual([]);
      const after = ids(
        await api('GET', `/v1/agent-inbox?received_after=${encodeURIComponent(at)}`, { key: w.agentTestKey }),
      );
      expect(after).toContain(twoPage.item.id);
      expect(
        ids(await api('GET', `/v1/agent-inbox?received_before=${encodeURIComponent(at)}`, { key: w.agentTestKey })),
      ).not.toContain(twoPage.item.id);
    });

    it('answers 503 when search is unavailable, never an unfiltered list', async () => {
      const runner = app.deps.db.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      try {
        await runner.query('LOCK TABLE inbound_search_fields IN ACCESS EXCLUSIVE MODE');
        const res = await search('riverside');
        expect(res.status).toBe(503);
        expect(res.body).toMatchObject({ code: 'SEARCH_UNAVAILABLE', retryable: true });
        expect(res.body.items).toBeUndefined();
      } finally {
        await runner.rollbackTransaction();
        await runner.release();
      }
    });
  });

  describe('sandbox fixtures', () => {
    it('seeds with an Idempotency-Key and publishes test events', async () => {
      expect((await seed('two_page_letter', w.agentTestKey, null)).status).toBe(400);
      expect((await seed('two_page_letter', w.agentKey)).body.reason).toBe('test_key_required');
      expect((await seed('three_pages', w.agentTestKey)).status).toBe(400);
      const first = await seed('needs_review', w.agentTestKey, 'same-key');
      const again = await seed('needs_review', w.agentTestKey, 'same-key');
      expect(again.body.item.id).toBe(first.body.item.id);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect((await seed('two_page_letter', w.agentTestKey, 'same-key')).status).toBe(422);
      const events = await waitFor(async () => {
        const rows = await eventsOf(app, [twoPage.item.id]);
        return rows.length === 3 ? rows : null;
      }, 'seed events');
      expect(events.map((e) => e.event_type)).toEqual([
        'inbound.received',
        'inbound.scan_available',
        'inbound.context_ready',
      ]);
      expect(events.every((e) => e.environment === 'test' && e.payload.source_domain === 'sandbox')).toBe(true);
      expect(events[2].payload.ocr_status).toBe('ready');
    });

    it('reading the member sample emits nothing', async () => {
      await api('GET', `/v1/agent-inbox/${sample}/context`, { key: w.agentTestKey });
      await api('GET', `/v1/agent-inbox/${sample}/sources`, { key: w.agentTestKey });
      await api('GET', `/v1/inbound-items/${sample}`, { key: w.memberTestKey });
      expect(await eventsOf(app, [sample])).toEqual([]);
    });

    it('gives a context with template OCR, duties and a stable version', async () => {
      const res = await api('GET', `/v1/agent-inbox/${needsReview.item.id}/context`, { key: w.agentTestKey });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        schema_version: 1,
        environment: 'test',
        test_mode: true,
        agent: { id: w.agentId },
        assignment: { source_domain: 'sandbox', environment: 'test', revision: 1 },
        item: { id: needsReview.item.id, item_kind: 'letter' },
        ocr: { content_trust: 'untrusted_document', status: 'needs_review' },
        instructions: { version: 1, hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
        contract: {
          version: 'agent-inbox.v1',
          instructions_path: `/v1/agents/${w.agentId}/instructions`,
          api_reference_path: '/api-docs',
        },
      });
      const page = res.body.ocr.pages[0];
      expect(page).toMatchObject({
        status: 'needs_review',
        attempts: 0,
        provider: 'template',
        uncertain_spans: [{ text: '$1,8?4.00', reason: 'low_confidence' }, expect.anything()],
      });
      expect(page.provenance).toMatchObject({
        kind: 'template_ocr',
        template_version: 1,
        source_sha256: page.source_sha256,
      });
      expect(res.body.scan.pages[0].source_sha256).toBe(page.source_sha256);
      const again = await api('GET', `/v1/agent-inbox/${needsReview.item.id}/context`, { key: w.agentTestKey });
      expect(again.body.context_version).toBe(res.body.context_version);
    });

    it('lists every stored page as sources, paginated', async () => {
      const res = await api('GET', `/v1/agent-inbox/${sample}/sources?limit=1`, { key: w.agentTestKey });
      expect(res.body).toMatchObject({
        content_trust: 'untrusted_document',
        pagination: { total: 2, limit: 1, offset: 0, has_more: true },
      });
      expect(res.body.pages[0]).toMatchObject({ source_kind: 'sample_letter', page_number: 1, status: 'ready' });
      expect(res.body.pages[0].document_id).toBe(res.body.pages[0].page_id);
      const seeded = await api('GET', `/v1/agent-inbox/${twoPage.item.id}/sources`, { key: w.agentTestKey });
      expect(seeded.body.pages.map((p: { source_kind: string }) => p.source_kind)).toEqual(['contents', 'contents']);
      expect((await api('GET', `/v1/agent-inbox/${sample}/sources?limit=51`, { key: w.agentTestKey })).status).toBe(
        400,
      );
    });

    it('shows scan history to test keys on the member sample only', async () => {
      const scans = await api('GET', `/v1/agent-inbox/${sample}/scans`, { key: w.agentTestKey });
      expect(scans.status).toBe(200);
      expect(scans.body.scans).toEqual([expect.objectContaining({ page_count: 2, ocr_status: 'ready' })]);
      const one = await api('GET', `/v1/agent-inbox/${sample}/scans/${scans.body.scans[0].request_id}`, {
        key: w.agentTestKey,
      });
      expect(one.body.scan.pages).toHaveLength(2);
      expect((await api('GET', `/v1/agent-inbox/${twoPage.item.id}/scans`, { key: w.agentTestKey })).status).toBe(404);
      expect((await api('GET', `/v1/agent-inbox/${liveItem}/scans`, { key: w.agentKey })).body.reason).toBe(
        'test_key_required',
      );
    });
  });
});
