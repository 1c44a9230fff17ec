import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, TestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { newAgentWithKey } from '../helpers/agents';
import { MCP_TOOL_CATALOG, MCP_TOOL_NAMES, registeredTools } from '../../api/mcp/tools';

// The 45 tools of the contract, as the spec lists them.
const SPEC_TOOLS =
  `list_agent_inbox get_agent_inbox_context get_agent_inbox_sources list_agent_inbox_scans get_agent_inbox_scan
get_agent_inbox_activity report_agent_inbox_outcome get_agent_inbox_handling propose_agent_inbox_handling seed_agent_inbox_sandbox
list_inbound_forwarding_addresses list_inbound_mail get_inbound_mail list_postal_threads get_postal_thread get_service_md
propose_service_md_edit send_outbound_mail list_outbound_mail get_outbound_mail cancel_outbound_mail create_test_outbound_mail
advance_test_outbound_mail get_mailbox get_usage send_facility_message list_facility_conversations get_facility_messages
update_webhook list_webhook_endpoints create_webhook_endpoint update_webhook_endpoint test_webhook_endpoint
test_webhook_endpoint_with_sample rotate_webhook_endpoint_secret list_webhook_deliveries replay_webhook_delivery
list_inbound_items get_inbound_item_sources search_inbound_items get_inbound_item get_inbound_pages quote_inbound_forward
request_inbound_action get_inbound_activity`.split(/\s+/);

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: { result?: any; error?: any; status?: number };
}

describe('MCP server at {base_url}/mcp', () => {
  let app: TestApp;
  const clients: Client[] = [];
  // The worker runs the outbound mail workflows that the sandbox advance updates.
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await app.close();
  });

  async function connect(key: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const client = new Client({ name: 'mcp-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  const text = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('');

  async function agentSetup(scopes = ['message.send', 'agent.read', 'agent.write', 'mailbox.read']) {
    const member = await newMember(app.deps);
    const { agent, credential } = await newAgentWithKey(app.baseUrl, member.key, { scopes });
    return { member, agent, key: credential.key };
  }

  it('catalogs exactly the 45 tools of the contract and serves only registered ones', () => {
    expect(SPEC_TOOLS).toHaveLength(45);
    expect([...MCP_TOOL_NAMES].sort()).toEqual([...SPEC_TOOLS].sort());
    for (const [name, entry] of Object.entries(MCP_TOOL_CATALOG)) {
      const deprecated = (entry as { deprecated?: { successor: string } }).deprecated;
      if (deprecated) expect(SPEC_TOOLS).toContain(deprecated.successor);
      expect(name).toMatch(/^[a-z_]+$/);
    }
    for (const t of registeredTools) expect(SPEC_TOOLS).toContain(t.name);
  });

  it('refuses a request without a key with the REST 401 body and points at the MCP server’s protected-resource metadata', async () => {
    const res = await fetch(`${app.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ reason: 'token_missing' });
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${app.siteUrl}/.well-known/oauth-protected-resource/api/mcp"`,
    );
  });

  it('answers GET with 405 (stateless server, no SSE stream)', async () => {
    const res = await fetch(`${app.baseUrl}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('initializes with protocol 2025-11-25 as postal-mail-api 1.0.1 and lists the registry', async () => {
    const member = await newMember(app.deps);
    const { client, transport } = await connect(member.key);
    expect(client.getServerVersion()).toMatchObject({ name: 'postal-mail-api', version: '1.0.1' });
    expect(transport.protocolVersion).toBe('2025-11-25');
    expect(client.getServerCapabilities()?.tools).toBeDefined();

    const { tools } = await client.listTools();
    expect(tools).toHaveLength(registeredTools.length);
    for (const tool of tools) {
      expect(SPEC_TOOLS).toContain(tool.name);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool._meta).toMatchObject({ group: MCP_TOOL_CATALOG[tool.name as keyof typeof MCP_TOOL_CATALOG].group });
    }
    const send = tools.find((t) => t.name === 'send_facility_message')!;
    expect(Object.keys(send.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['body', 'conversation_id', 'idempotency_key', 'service_md_version']),
    );
    expect(send.inputSchema.required).toEqual(['body']);
    expect(send.annotations).toMatchObject({ readOnlyHint: false });
    const read = tools.find((t) => t.name === 'get_mailbox')!;
    expect(read.annotations).toMatchObject({ readOnlyHint: true });
    expect(Object.keys(read.inputSchema.properties ?? {})).not.toContain('idempotency_key');
  });

  describe('protocol version negotiation', () => {
    const REVISIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
    const post = (key: string, message: unknown, version?: string) =>
      fetch(`${app.baseUrl}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(version ? { 'mcp-protocol-version': version } : {}),
        },
        body: JSON.stringify(message),
      });
    const json = async (res: Response | Promise<Response>): Promise<any> => (await res).json();
    const initialize = (protocolVersion: string) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'newer-client', version: '2.0.0' } },
    });

    it('a client that first tries a newer revision gets 400 listing only real revisions, then follows the answer', async () => {
      const member = await newMember(app.deps);
      // A client of a newer, initialize-less revision sends its version on its first request.
      const refused = await post(member.key, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, '2026-06-01');
      expect(refused.status).toBe(400);
      const body = await json(refused);
      expect(body.error.message).toMatch(/Unsupported protocol version: 2026-06-01/);
      expect(body.error.data).toEqual({ supported: REVISIONS, requested: '2026-06-01' });
      expect(body.error.message).not.toContain('2024-10-07');

      // It falls back to initialize with the version it wanted, and is answered with ours.
      const init = await post(member.key, initialize('2026-06-01'), '2026-06-01');
      expect(init.status).toBe(200);
      const negotiated = (await json(init)).result.protocolVersion;
      expect(negotiated).toBe('2025-11-25');

      const listed = await post(member.key, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, negotiated);
      expect(listed.status).toBe(200);
      expect((await json(listed)).result.tools).toHaveLength(registeredTools.length);
    });

    it('echoes every real revision on initialize and answers the latest for 2024-10-07, which is none', async () => {
      const member = await newMember(app.deps);
      for (const version of REVISIONS) {
        expect((await json(post(member.key, initialize(version)))).result.protocolVersion).toBe(version);
        expect((await post(member.key, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, version)).status).toBe(200);
      }
      expect((await json(post(member.key, initialize('2024-10-07')))).result.protocolVersion).toBe('2025-11-25');
      expect((await post(member.key, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, '2024-10-07')).status).toBe(400);
    });
  });

  it('calls a read tool and returns the REST JSON in structuredContent.result', async () => {
    const { key, agent } = await agentSetup();
    const { client } = await connect(key);
    const r = await call(client, 'get_mailbox');
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent!.result).toMatchObject({
      mailboxes: [{ agent_id: agent.id, type: 'outbound' }],
      test_mode: false,
    });
    expect(JSON.parse(text(r))).toEqual(r.structuredContent!.result);

    const doc = await call(client, 'get_service_md');
    expect(doc.structuredContent!.result).toMatchObject({
      agent_id: agent.id,
      version: 1,
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it('guards mutations of agent keys with service_md_version, and replays an idempotency_key without a second message', async () => {
    const { key } = await agentSetup();
    const { client } = await connect(key);

    const missing = await call(client, 'send_facility_message', { body: 'Hello facility' });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/^SERVICE_MD_VERSION_REQUIRED: /);
    const stale = await call(client, 'send_facility_message', { body: 'Hello facility', service_md_version: 7 });
    expect(text(stale)).toMatch(/^SERVICE_MD_VERSION_MISMATCH: /);

    const args = {
      body: 'Please use the blue envelopes for my next batch.',
      subject: 'Envelopes',
      service_md_version: 1,
      idempotency_key: 'fm-1',
    };
    const first = await call(client, 'send_facility_message', args);
    expect(first.isError).toBeFalsy();
    const second = await call(client, 'send_facility_message', args);
    expect(second.structuredContent!.result).toEqual(first.structuredContent!.result);
    const conversationId = first.structuredContent!.result.conversation.id;

    const list = await call(client, 'list_facility_conversations');
    expect(list.structuredContent!.result).toMatchObject({ pagination: { total: 1, limit: 50, offset: 0 } });
    const messages = await call(client, 'get_facility_messages', { conversation_id: conversationId });
    expect(messages.structuredContent!.result.messages).toHaveLength(1);
    expect(messages.structuredContent!.result.messages[0]).toMatchObject({ sender_type: 'agent', body: args.body });

    // The same key with other input is refused, not replayed.
    const reused = await call(client, 'send_facility_message', { ...args, body: 'Something else' });
    expect(text(reused)).toMatch(/^IDEMPOTENCY_KEY_REUSED: /);
    const [{ n }] = await app.deps.db.query(
      `SELECT count(*)::int AS n FROM facility_messages WHERE conversation_id = $1`,
      [conversationId],
    );
    expect(n).toBe(1);
  });

  it('validates tool input with the REST schema and answers with isError and the field paths', async () => {
    const { key } = await agentSetup();
    const { client } = await connect(key);
    const r = await call(client, 'send_facility_message', { body: '', service_md_version: 1 });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^validation_error: .*body/);
    expect(r.structuredContent!.error.fields[0].path).toBe('body');
    const long = await call(client, 'send_facility_message', { body: 'x'.repeat(5001), service_md_version: 1 });
    expect(long.isError).toBe(true);
    // NUL cannot be stored: refused with its path like on REST, nothing written.
    const nul = await call(client, 'send_facility_message', { body: 'Hello\u0000there', service_md_version: 1 });
    expect(nul.isError).toBe(true);
    expect(text(nul)).toMatch(/^validation_error: .*NUL/);
    expect(nul.structuredContent!.error.fields[0].path).toBe('body');
  });

  it('refuses with isError what the REST access row refuses: missing scope, wrong key kind', async () => {
    const { key } = await agentSetup(['agent.read']);
    const { client } = await connect(key);
    const r = await call(client, 'send_facility_message', { body: 'hi', service_md_version: 1 });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^insufficient_scope: Missing scope: message.send/);
    expect(r.structuredContent).toMatchObject({ status: 403, error: { reason: 'insufficient_scope' } });

    const member = await newMember(app.deps);
    const { client: memberClient } = await connect(member.key);
    const propose = await call(memberClient, 'propose_service_md_edit', {
      suggested_content: 'Be brief.',
      reason: 'shorter',
    });
    expect(text(propose)).toMatch(/^agent_key_required: /);
  });

  it('records an instructions proposal for an agent key that echoes the current version', async () => {
    const { key, agent } = await agentSetup();
    const { client } = await connect(key);
    const tooLong = await call(client, 'propose_service_md_edit', {
      suggested_content: 'x'.repeat(10001),
      service_md_version: 1,
    });
    expect(tooLong.isError).toBe(true);
    const r = await call(client, 'propose_service_md_edit', {
      suggested_content: 'Always ask before certified mail.',
      reason: 'cost',
      service_md_version: 1,
      idempotency_key: 'p-1',
    });
    expect(r.structuredContent!.result.proposal).toMatchObject({
      agent_id: agent.id,
      status: 'pending',
      suggested_content: 'Always ask before certified mail.',
    });
    await call(client, 'propose_service_md_edit', {
      suggested_content: 'Always ask before certified mail.',
      reason: 'cost',
      service_md_version: 1,
      idempotency_key: 'p-1',
    });
    const [{ n }] = await app.deps.db.query(
      `SELECT count(*)::int AS n FROM instructions_proposals WHERE agent_id = $1`,
      [agent.id],
    );
    expect(n).toBe(1);
  });

  it('refuses update_webhook to a test key with text starting live_key_required:', async () => {
    const member = await newMember(app.deps);
    const { credential } = await newAgentWithKey(app.baseUrl, member.key, {
      environment: 'test',
      scopes: ['webhook.manage', 'webhook.read'],
    });
    const { client } = await connect(credential.key);
    const r = await call(client, 'update_webhook', {
      webhook_url: 'https://hooks.example.com/x',
      service_md_version: 1,
    });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^live_key_required: /);
  });

  it('creates and lists custom webhook endpoints through the webhook services', async () => {
    const member = await newMember(app.deps);
    const { client } = await connect(member.key);
    const created = await call(client, 'create_webhook_endpoint', {
      name: 'ops',
      url: 'http://127.0.0.1:9/hooks',
      event_types: ['inbound.received'],
      idempotency_key: 'ep-1',
    });
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent!.result).toMatchObject({
      endpoint: { name: 'ops', status: 'pending' },
      secret: expect.stringMatching(/^whsec_/),
    });
    const again = await call(client, 'create_webhook_endpoint', {
      name: 'ops',
      url: 'http://127.0.0.1:9/hooks',
      event_types: ['inbound.received'],
      idempotency_key: 'ep-1',
    });
    expect(again.structuredContent!.result.endpoint.id).toBe(created.structuredContent!.result.endpoint.id);
    const list = await call(client, 'list_webhook_endpoints');
    expect(list.structuredContent!.result.endpoints).toHaveLength(1);
    const noop = await call(client, 'update_webhook_endpoint', {
      endpoint_id: created.structuredContent!.result.endpoint.id,
    });
    expect(text(noop)).toMatch(/^validation_error: /);
    const renamed = await call(client, 'update_webhook_endpoint', {
      endpoint_id: created.structuredContent!.result.endpoint.id,
      name: 'ops-2',
    });
    expect(renamed.structuredContent!.result.endpoint.name).toBe('ops-2');
  });

  describe('outbound tools', () => {
    const pdf = readFileSync(path.join(__dirname, '..', 'fixtures', 'documents', 'one-page.pdf')).toString('base64');
    const recipient = {
      recipient_name: 'Ada Lovelace',
      recipient_line1: '12 Analytical Way',
      recipient_city: 'Austin',
      recipient_state: 'TX',
      recipient_zip: '78701',
    };

    it('sends a letter from document_base64 once per idempotency_key, and reads and lists it', async () => {
      const member = await newMember(app.deps);
      const { credential, agent } = await newAgentWithKey(app.baseUrl, member.key, {
        environment: 'test',
        scopes: ['mail.send'],
      });
      const { client } = await connect(credential.key);
      const args = {
        ...recipient,
        document_base64: pdf,
        document_filename: 'letter.pdf',
        service_md_version: 1,
        idempotency_key: 'send-1',
      };
      const sent = await call(client, 'send_outbound_mail', args);
      expect(sent.isError).toBeFalsy();
      const record = sent.structuredContent!.result;
      expect(record).toMatchObject({
        status: 'submitted',
        test_mode: true,
        cost_cents: 0,
        page_count: 1,
        recipient_name: 'Ada Lovelace',
      });
      expect(record.estimated_live_cost_cents).toBeGreaterThan(0);
      const again = await call(client, 'send_outbound_mail', args);
      expect(again.structuredContent!.result.id).toBe(record.id);
      const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM outbound_mail WHERE agent_id = $1`, [
        agent.id,
      ]);
      expect(n).toBe(1);

      const read = await call(client, 'get_outbound_mail', { outbound_mail_id: record.id });
      expect(read.structuredContent!.result).toMatchObject({ id: record.id, status: 'submitted' });
      const list = await call(client, 'list_outbound_mail', { test_mode: true, limit: 5 });
      expect(list.structuredContent!.result.mail.map((m: { id: string }) => m.id)).toEqual([record.id]);

      const cancelled = await call(client, 'cancel_outbound_mail', {
        outbound_mail_id: record.id,
        service_md_version: 1,
      });
      expect(cancelled.isError).toBeFalsy();
      expect(cancelled.structuredContent!.result.outbound_mail).toMatchObject({ id: record.id, status: 'cancelled' });
    });

    it('sends a letter with a test key and advances it to delivered through the tools', async () => {
      const member = await newMember(app.deps);
      const { credential } = await newAgentWithKey(app.baseUrl, member.key, {
        environment: 'test',
        scopes: ['mail.send'],
      });
      const { client } = await connect(credential.key);
      const sent = await call(client, 'send_outbound_mail', {
        ...recipient,
        mail_class: 'priority',
        document_base64: pdf,
        document_filename: 'letter.pdf',
        service_md_version: 1,
        idempotency_key: 'deliver-1',
      });
      expect(sent.isError).toBeFalsy();
      const id = sent.structuredContent!.result.id;
      const steps: string[] = [];
      for (let i = 0; i < 3; i++) {
        const advanced = await call(client, 'advance_test_outbound_mail', { outbound_mail_id: id });
        expect(advanced.isError).toBeFalsy();
        steps.push(advanced.structuredContent!.result.status);
      }
      expect(steps).toEqual(['ready', 'mailed', 'delivered']);
      const read = await call(client, 'get_outbound_mail', { outbound_mail_id: id });
      expect(read.structuredContent!.result).toMatchObject({
        status: 'delivered',
        test_mode: true,
        tracking_number: expect.any(String),
      });
      const beyond = await call(client, 'advance_test_outbound_mail', { outbound_mail_id: id });
      expect(beyond.isError).toBe(true);
    });

    it('prices with dry_run, refuses above max_cost_cents and refuses bad documents, spending nothing', async () => {
      const member = await newMember(app.deps, { creditsCents: 10_000 });
      await newAgentWithKey(app.baseUrl, member.key, { scopes: ['mail.send'] });
      const { client } = await connect(member.key);
      const dry = await call(client, 'send_outbound_mail', {
        ...recipient,
        document_base64: pdf,
        document_filename: 'letter.pdf',
        dry_run: true,
      });
      expect(dry.structuredContent!.result).toMatchObject({ dry_run: true, test_mode: false });
      expect(dry.structuredContent!.result.cost_cents).toBeGreaterThan(0);
      const capped = await call(client, 'send_outbound_mail', {
        ...recipient,
        document_base64: pdf,
        document_filename: 'letter.pdf',
        max_cost_cents: 1,
      });
      expect(capped.isError).toBe(true);
      expect(text(capped)).toMatch(/^MAX_COST_EXCEEDED: /);
      const notBase64 = await call(client, 'send_outbound_mail', {
        ...recipient,
        document_base64: '%%%',
        document_filename: 'letter.pdf',
      });
      expect(text(notBase64)).toMatch(/^validation_error: .*document_base64/);
      const noRecipient = await call(client, 'send_outbound_mail', {
        recipient_line1: '1 A St',
        recipient_city: 'Austin',
        recipient_state: 'TX',
        recipient_zip: '78701',
        document_base64: pdf,
        document_filename: 'letter.pdf',
      });
      expect(text(noRecipient)).toMatch(/^validation_error: .*recipient_name/);
      const usage = await call(client, 'get_usage');
      expect(usage.isError).toBeFalsy();
      const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM outbound_mail WHERE member_id = $1`, [
        member.member_id,
      ]);
      expect(n).toBe(0);
    });

    it('creates and advances a sandbox piece for test keys only', async () => {
      const member = await newMember(app.deps);
      const { credential } = await newAgentWithKey(app.baseUrl, member.key, {
        environment: 'test',
        scopes: ['mail.send'],
      });
      const { client } = await connect(credential.key);
      const created = await call(client, 'create_test_outbound_mail', {
        ...recipient,
        page_count: 2,
        service_md_version: 1,
      });
      expect(created.structuredContent!.result).toMatchObject({ status: 'submitted', page_count: 2, test_mode: true });
      const advanced = await call(client, 'advance_test_outbound_mail', {
        outbound_mail_id: created.structuredContent!.result.id,
      });
      expect(advanced.structuredContent!.result).toMatchObject({ status: 'ready' });

      const live = await newAgentWithKey(app.baseUrl, member.key, { scopes: ['mail.send'] });
      const { client: liveClient } = await connect(live.credential.key);
      const refused = await call(liveClient, 'create_test_outbound_mail', { ...recipient, service_md_version: 1 });
      expect(text(refused)).toMatch(/^test_key_required: /);
    });
  });

  describe('inbound tools', () => {
    const INBOUND_SCOPES = [
      'inbound.read',
      'inbound.item.read',
      'inbound.item.scan.read',
      'agent.read',
      'agent.inbox.read',
      'agent.inbox.report',
      'agent.inbox.propose',
    ];

    it('finds the sandbox sample letter by a search term and reads its pages', async () => {
      const member = await newMember(app.deps);
      const { credential } = await newAgentWithKey(app.baseUrl, member.key, {
        environment: 'test',
        scopes: INBOUND_SCOPES,
      });
      const { client } = await connect(credential.key);
      const found = await call(client, 'search_inbound_items', { q: 'riverside water' });
      expect(found.isError).toBeFalsy();
      const items = found.structuredContent!.result.items;
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ object: 'inbound_item', source_domain: 'member_sample', environment: 'test' });
      expect(
        (await call(client, 'search_inbound_items', { q: 'riverside gasworks' })).structuredContent!.result.items,
      ).toHaveLength(0);

      const item = await call(client, 'get_inbound_item', { item_id: items[0].id });
      expect(item.structuredContent!.result.item.id).toBe(items[0].id);
      const pages = await call(client, 'get_inbound_pages', { item_id: items[0].id });
      expect(JSON.stringify(pages.structuredContent!.result.scans)).toContain('RIVERSIDE WATER UTILITY');
      const sources = await call(client, 'get_inbound_item_sources', { item_id: items[0].id });
      expect(sources.structuredContent!.result).toEqual(pages.structuredContent!.result);
      const activity = await call(client, 'get_inbound_activity', { item_id: items[0].id });
      expect(activity.isError).toBeFalsy();
    });

    it('works the agent inbox: seed, context, outcome once per idempotency_key; deprecated reads name their successor', async () => {
      const member = await newMember(app.deps);
      const { credential } = await newAgentWithKey(app.baseUrl, member.key, {
        environment: 'test',
        scopes: INBOUND_SCOPES,
      });
      const { client } = await connect(credential.key);
      const noKey = await call(client, 'seed_agent_inbox_sandbox', { scenario: 'two_page_letter' });
      expect(text(noKey)).toMatch(/^validation_error: .*idempotency_key/);
      const seeded = await call(client, 'seed_agent_inbox_sandbox', {
        scenario: 'two_page_letter',
        idempotency_key: 'seed-1',
      });
      expect(seeded.isError).toBeFalsy();
      const itemId = seeded.structuredContent!.result.item.id;

      const list = await call(client, 'list_agent_inbox');
      expect(list.structuredContent!.result.items.map((i: { item: { id: string } }) => i.item.id)).toContain(itemId);
      const context = await call(client, 'get_agent_inbox_context', { item_id: itemId });
      const contextVersion = context.structuredContent!.result.context_version;
      expect(contextVersion).toMatch(/^[0-9a-f]{64}$/);

      const report = {
        item_id: itemId,
        outcome: 'processed',
        context_version: contextVersion,
        run_id: 'run-7',
        idempotency_key: 'ack-1',
      };
      const first = await call(client, 'report_agent_inbox_outcome', report);
      expect(first.isError).toBeFalsy();
      const again = await call(client, 'report_agent_inbox_outcome', report);
      expect(again.structuredContent!.result.acknowledgment.id).toBe(first.structuredContent!.result.acknowledgment.id);
      const stale = await call(client, 'report_agent_inbox_outcome', {
        ...report,
        context_version: '0'.repeat(64),
        idempotency_key: 'ack-2',
      });
      expect(text(stale)).toMatch(/^CONTEXT_VERSION_MISMATCH: /);

      const handling = await call(client, 'get_agent_inbox_handling', { item_id: itemId });
      expect(handling.structuredContent!.result).toMatchObject({ item_id: itemId, agent_may_confirm: false });

      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'list_agent_inbox')!._meta).toMatchObject({
        deprecated: true,
        successor: 'search_inbound_items',
      });
      expect(tools.find((t) => t.name === 'get_agent_inbox_context')!.description).toMatch(
        /^Deprecated: use get_inbound_item instead\./,
      );
      expect(tools.find((t) => t.name === 'report_agent_inbox_outcome')!.inputSchema.required).toContain(
        'idempotency_key',
      );

      // Member keys cannot act as an agent.
      const { client: memberClient } = await connect(member.key);
      expect(text(await call(memberClient, 'list_agent_inbox'))).toMatch(/^agent_key_required: /);
    });

    it('reads forwarded inbound context: aliases, mail and threads', async () => {
      const member = await newMember(app.deps);
      await newAgentWithKey(app.baseUrl, member.key, { scopes: ['inbound.read'] });
      const { client } = await connect(member.key);
      for (const name of ['list_inbound_forwarding_addresses', 'list_inbound_mail', 'list_postal_threads']) {
        const r = await call(client, name, { limit: 5 });
        expect({ name, isError: r.isError ?? false, total: r.structuredContent!.result.pagination.total }).toEqual({
          name,
          isError: false,
          total: 0,
        });
      }
      const missing = await call(client, 'get_inbound_mail', {
        inbound_mail_id: '00000000-0000-4000-8000-000000000000',
      });
      expect(missing.structuredContent).toMatchObject({ status: 404 });
    });
  });

  it('serves all 45 tools of the contract', () => {
    expect(registeredTools.map((t) => t.name).sort()).toEqual([...SPEC_TOOLS].sort());
  });

  it('answers an unknown tool with a JSON-RPC error', async () => {
    const member = await newMember(app.deps);
    const { client } = await connect(member.key);
    const err = await client.callTool({ name: 'print_money', arguments: {} }).catch((e) => e);
    expect(err).toBeInstanceOf(McpError);
    expect(err.code).toBe(ErrorCode.InvalidParams);
  });

  it('marks sandbox results with test_mode', async () => {
    const member = await newMember(app.deps);
    const { credential } = await newAgentWithKey(app.baseUrl, member.key, {
      environment: 'test',
      scopes: ['message.send', 'mailbox.read'],
    });
    const { client } = await connect(credential.key);
    const r = await call(client, 'send_facility_message', { body: 'sandbox hello', service_md_version: 1 });
    expect(r.structuredContent!.result).toMatchObject({
      test_mode: true,
      conversation: { test_mode: true, facility_id: null },
    });
  });

  it("counts every MCP request against the key's rate limit", async () => {
    const member = await newMember(app.deps, { rateLimitPerMinute: 2 });
    const post = () =>
      fetch(`${app.baseUrl}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${member.key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await post()).status);
    // Two per minute: even across a minute boundary some of five are refused.
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    expect(statuses).toContain(429);
  });
});
