// Every include and enumerated query value that the spec lists is accepted, on every REST
// route and MCP tool that takes it, and include values change the answer as documented.
// The values are written out here from the spec's words, not read from the code, so a
// schema that drops one fails this test.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newWorld, waitFor, World } from '../helpers/physical-inbound';

jest.setTimeout(180_000);

// The spec's lists (Endpoints: Outbound mail, Batch mail, Packages, Physical inbound items,
// Forwarded inbound context, Agents/keys/webhooks; States).
const SPEC = {
  mailStatus: ['pending_approval', 'submitted', 'ready', 'mailed', 'delivered', 'failed', 'cancelled'],
  batchStatus: [
    'draft',
    'paid',
    'generating',
    'submitted',
    'in_progress',
    'completed',
    'partially_completed',
    'failed',
    'cancelled',
  ],
  packageStatus: [
    'received',
    'stored',
    'held',
    'forwarding_requested',
    'forwarding_shipped',
    'forwarded',
    'returning',
    'shredded',
    'disposed',
    'returned',
    'expired',
  ],
  itemKind: ['letter', 'parcel'],
  inboundStatus: ['captured', 'stored', 'extracted', 'needs_review', 'failed'],
  inboundListInclude: ['drafting', 'files', 'ocr', 'lineage'],
  inboundGetInclude: ['drafting', 'files', 'ocr', 'lineage', 'signed_urls'],
  threadStatus: ['open', 'waiting', 'closed', 'archived'],
  threadInclude: ['events'],
  webhookEventStatus: ['delivered', 'pending', 'failed'],
  booleans: ['true', 'false'],
};

type Item = { files: Array<Record<string, unknown>>; draft_context?: unknown; ocr?: unknown; extractions?: unknown };

/** What each include value adds to an inbound mail item. */
function showsInclude(item: Item, include: string): boolean {
  switch (include) {
    case 'drafting':
      return item.draft_context !== undefined;
    case 'files':
      return (
        item.files.length > 0 &&
        item.files.every((f) => typeof f.download_url === 'string' && f.signed_url === undefined)
      );
    case 'ocr':
      return Array.isArray(item.ocr);
    case 'lineage':
      return Array.isArray(item.extractions);
    case 'signed_urls':
      return (
        item.files.length > 0 &&
        item.files.every((f) => typeof f.signed_url === 'string' && typeof f.download_url === 'string')
      );
    default:
      return false;
  }
}

describe('spec-listed query values on every route and tool', () => {
  let app: TestApp;
  let api: ReturnType<typeof client>;
  let w: World;
  let itemId: string;
  let threadId: string;
  let mcp: Client;

  beforeAll(async () => {
    app = await startTestApp();
    api = client(app.baseUrl);
    w = await newWorld(app);
    const alias = await api('POST', '/v1/inbound-forwarding-addresses', { key: w.memberKey, json: { label: 'Home' } });
    const intake = await api(
      'POST',
      `/v1/intake/email?recipient=${encodeURIComponent(alias.body.forwarding_address.email)}`,
      {
        raw: readFileSync(path.join(__dirname, '..', 'fixtures', 'inbound', 'plain-note.eml')),
        headers: { 'x-intake-secret': app.deps.config.intakeSecret },
      },
    );
    itemId = intake.body.item_id;
    threadId = await waitFor(
      async () => {
        const res = await api('GET', `/v1/inbound/${itemId}`, { key: w.memberKey });
        return ['extracted', 'needs_review'].includes(res.body.status) ? res.body.thread?.id : null;
      },
      'the forwarded note to be extracted',
      120_000,
    );
    mcp = new Client({ name: 'query-values', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${w.memberKey}` } },
      }),
    );
  });
  afterAll(async () => {
    await mcp?.close();
    await app?.close();
  });

  const get = (p: string) => api('GET', p, { key: w.memberKey });
  const tool = async (name: string, args: Record<string, unknown>) => {
    const r = (await mcp.callTool({ name, arguments: args })) as {
      isError?: boolean;
      content: Array<{ text?: string }>;
      structuredContent?: { result?: any };
    };
    return { ok: !r.isError, text: r.content.map((c) => c.text ?? '').join(''), result: r.structuredContent?.result };
  };

  describe('REST', () => {
    const cases: Array<[string, () => string]> = [
      ...SPEC.mailStatus.map((v): [string, () => string] => [`GET /v1/mail?status=${v}`, () => `/v1/mail?status=${v}`]),
      ...SPEC.booleans.map((v): [string, () => string] => [
        `GET /v1/mail?test_mode=${v}`,
        () => `/v1/mail?test_mode=${v}`,
      ]),
      [
        'GET /v1/mail?created_after=YYYY-MM-DD&created_before=ISO',
        () => '/v1/mail?created_after=2026-01-01&created_before=2026-02-01T00%3A00%3A00Z',
      ],
      ...SPEC.batchStatus.map((v): [string, () => string] => [
        `GET /v1/batch-mail?status=${v}`,
        () => `/v1/batch-mail?status=${v}`,
      ]),
      ...SPEC.packageStatus.map((v): [string, () => string] => [
        `GET /v1/packages?status=${v}`,
        () => `/v1/packages?agent_id=${w.agentId}&status=${v}`,
      ]),
      ...SPEC.itemKind.map((v): [string, () => string] => [
        `GET /v1/inbound-items?kind=${v}`,
        () => `/v1/inbound-items?kind=${v}`,
      ]),
      ...SPEC.inboundStatus.map((v): [string, () => string] => [
        `GET /v1/inbound?status=${v}`,
        () => `/v1/inbound?status=${v}`,
      ]),
      ...SPEC.threadStatus.map((v): [string, () => string] => [
        `GET /v1/postal-threads?status=${v}`,
        () => `/v1/postal-threads?status=${v}`,
      ]),
      ...SPEC.webhookEventStatus.map((v): [string, () => string] => [
        `GET /v1/webhooks/events?status=${v}`,
        () => `/v1/webhooks/events?status=${v}`,
      ]),
    ];
    it.each(cases)('accepts %s', async (_, target) => {
      const res = await get(target());
      expect([res.status, res.body.fields]).toEqual([200, undefined]);
    });

    it.each(SPEC.inboundListInclude)('GET /v1/inbound?include=%s shapes every item', async (include) => {
      const res = await get(`/v1/inbound?include=${include}`);
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeGreaterThan(0);
      expect(res.body.items.every((i: Item) => showsInclude(i, include))).toBe(true);
    });

    it.each(SPEC.inboundGetInclude)('GET /v1/inbound/{id}?include=%s shapes the item', async (include) => {
      const res = await get(`/v1/inbound/${itemId}?include=${include}`);
      expect([res.status, res.body.fields]).toEqual([200, undefined]);
      expect(showsInclude(res.body, include)).toBe(true);
    });

    it('GET /v1/inbound/{id}: signed_urls=true and false, and include=signed_urls combined with others', async () => {
      expect(showsInclude((await get(`/v1/inbound/${itemId}?signed_urls=true`)).body, 'signed_urls')).toBe(true);
      const plain = (await get(`/v1/inbound/${itemId}?signed_urls=false`)).body;
      expect(
        plain.files.every((f: Record<string, unknown>) => f.signed_url === undefined && f.download_url === undefined),
      ).toBe(true);
      const both = (await get(`/v1/inbound/${itemId}?include=drafting,signed_urls`)).body;
      expect([showsInclude(both, 'drafting'), showsInclude(both, 'signed_urls')]).toEqual([true, true]);
      const signed = await fetch(both.files[0].signed_url);
      expect(signed.status).toBe(200);
    });

    it('GET /v1/postal-threads and /v1/postal-threads/{id} with include=events', async () => {
      const list = await get('/v1/postal-threads?include=events');
      expect(list.body.threads.every((t: { events?: unknown[] }) => Array.isArray(t.events))).toBe(true);
      const one = await get(`/v1/postal-threads/${threadId}?include=events`);
      expect(one.body.events.map((e: { inbound_mail_item_id?: string }) => e.inbound_mail_item_id)).toContain(itemId);
    });
  });

  describe('MCP tools', () => {
    it.each(SPEC.inboundGetInclude)('get_inbound_mail include [%s]', async (include) => {
      const r = await tool('get_inbound_mail', { inbound_mail_id: itemId, include: [include] });
      expect([r.ok, r.ok ? '' : r.text]).toEqual([true, '']);
      expect(showsInclude(r.result, include)).toBe(true);
    });

    it('get_inbound_mail signed_urls true and false', async () => {
      expect(
        showsInclude(
          (await tool('get_inbound_mail', { inbound_mail_id: itemId, signed_urls: true })).result,
          'signed_urls',
        ),
      ).toBe(true);
      const plain = (await tool('get_inbound_mail', { inbound_mail_id: itemId, signed_urls: false })).result;
      expect(plain.files.every((f: Record<string, unknown>) => f.signed_url === undefined)).toBe(true);
    });

    it.each(SPEC.inboundListInclude)('list_inbound_mail include [%s]', async (include) => {
      const r = await tool('list_inbound_mail', { include: [include] });
      expect([r.ok, r.ok ? '' : r.text]).toEqual([true, '']);
      expect(r.result.items.every((i: Item) => showsInclude(i, include))).toBe(true);
    });

    const enumCases: Array<[string, Record<string, unknown>]> = [
      ...SPEC.inboundStatus.map((v): [string, Record<string, unknown>] => ['list_inbound_mail', { status: v }]),
      ...SPEC.threadStatus.map((v): [string, Record<string, unknown>] => ['list_postal_threads', { status: v }]),
      ['list_postal_threads', { include: ['events'] }],
      ...SPEC.mailStatus.map((v): [string, Record<string, unknown>] => ['list_outbound_mail', { status: v }]),
      ...SPEC.itemKind.map((v): [string, Record<string, unknown>] => ['search_inbound_items', { kind: v }]),
    ];
    it.each(enumCases)('%s %j', async (name, args) => {
      const r = await tool(name, args);
      expect([r.ok, r.ok ? '' : r.text]).toEqual([true, '']);
    });

    it('get_postal_thread include [events]', async () => {
      const r = await tool('get_postal_thread', { thread_id: threadId, include: ['events'] });
      expect(r.result.events.map((e: { inbound_mail_item_id?: string }) => e.inbound_mail_item_id)).toContain(itemId);
    });
  });
});
