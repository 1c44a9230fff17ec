// Every mounted route (api/routes allRoutes, joined with domain/shared/access.ts) called with every
// kind of key, so a new route is covered the day it is mounted. The expected refusal is
// derived from the route's access row by the rules the spec documents: no key 401
// token_missing, revoked 401 key_revoked, expired 401 key_expired, a kind the row does not
// list 401/403 with the router's reason, test keys on live-only rows 403 live_key_required,
// on custody rows 403 sandbox_not_supported, agent keys without the scope 403
// insufficient_scope; every allowed kind gets past authorization (ids and bodies are
// dummies, so 400/404 are expected). Nothing may answer 5xx, and every coded refusal carries
// retryable and suggested_action. A second table calls every
// object route with another member's key on that member's real objects: 404. A third calls
// every object route, and every MCP tool that takes ids, with the owner's key of the other
// environment (test keys on live objects and the reverse): 404 too, or the route's own
// refusal of that key; only the objects listed in SPANS_ENVIRONMENTS are shared.
import { randomBytes, randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { client, HttpResponse } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { allRoutes } from '../../api/routes';
import type { RouteDef } from '../../api/route';
import { Access, accessKey, ENDPOINT_ACCESS, SCOPES } from '../../domain/shared/access';
import type { KeyKind } from '../../domain/accounts/keys';
import { createFacility, insertMemberKey, revokeKey } from '../../services/accounts/accounts';
import { SAMPLE_EVENT_TYPES } from '../../domain/webhooks/samples';
import { batchForm, pdf, recipientsCsv } from '../integration/batch-helpers';
import { newWorld, receivePiece } from '../helpers/physical-inbound';
import { memberSampleId } from '../../services/physical-inbound/sandbox-fixtures';
import { setMemberRunSettings } from '../../services/mail-runs/mail-runs';
import { registeredTools } from '../../api/mcp/tools';
import { letterForm, letterPdf } from '../integration/mail-helpers';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

type Kind = 'none' | 'revoked' | 'expired' | KeyKind | 'agent_without_scope';
const KINDS: Kind[] = [
  'none',
  'revoked',
  'expired',
  'member',
  'member_test',
  'agent',
  'agent_test',
  'facility',
  'agent_without_scope',
];

/** Reasons that mean "your API key was refused" (public routes must never give them). */
const KEY_REASONS = new Set([
  'token_missing',
  'token_malformed',
  'token_prefix_unknown',
  'key_not_found',
  'key_revoked',
  'key_expired',
  'member_suspended',
  'facility_inactive',
  'member_key_required',
  'agent_key_required',
  'facility_key_required',
  'key_kind_not_allowed',
  'test_key_required',
  'live_key_required',
  'sandbox_not_supported',
  'insufficient_scope',
]);

const MEMBER_KINDS: KeyKind[] = ['member', 'member_test'];
const AGENT_KINDS: KeyKind[] = ['agent', 'agent_test'];
const isTest = (k: KeyKind) => k === 'member_test' || k === 'agent_test';
const isAgent = (k: KeyKind) => AGENT_KINDS.includes(k);

type Expectation = { allowed: true } | { status: 401 | 403; reason: string };

/** The documented answer for one route and one kind of caller (`scopes`: the agent key's scopes). */
export function expectedFor(access: Access, path: string, kind: Kind, scopes: ReadonlySet<string>): Expectation {
  if (access.callers === 'public') return { allowed: true };
  if (kind === 'none') return { status: 401, reason: 'token_missing' };
  if (kind === 'revoked') return { status: 401, reason: 'key_revoked' };
  if (kind === 'expired') return { status: 401, reason: 'key_expired' };
  const k: KeyKind = kind === 'agent_without_scope' ? 'agent' : kind;
  const callers = access.callers;
  if (!callers.includes(k)) {
    if (path.startsWith('/v1/api-keys') && isAgent(k)) return { status: 401, reason: 'member_key_required' };
    if (access.testOnly && !isTest(k)) return { status: 403, reason: 'test_key_required' };
    const only = (kinds: KeyKind[]) => callers.every((c) => kinds.includes(c));
    if (only(MEMBER_KINDS)) return { status: 403, reason: 'member_key_required' };
    if (only(AGENT_KINDS)) return { status: 403, reason: 'agent_key_required' };
    if (only(['facility'])) return { status: 403, reason: 'facility_key_required' };
    return { status: 403, reason: 'key_kind_not_allowed' };
  }
  if (access.testOnly && !isTest(k)) return { status: 403, reason: 'test_key_required' };
  if (access.liveOnly && isTest(k)) return { status: 403, reason: 'live_key_required' };
  if (access.sandboxUnsupported && isTest(k)) return { status: 403, reason: 'sandbox_not_supported' };
  if (isAgent(k)) {
    const missing = (access.scopes ?? []).some((s) => !scopes.has(s));
    const anyOk = !access.anyScope || access.anyScope.some((s) => scopes.has(s));
    if (missing || !anyOk) return { status: 403, reason: 'insufficient_scope' };
  }
  return { allowed: true };
}

function dummyPath(path: string): string {
  return path.replace(/:leadId/g, `wl_${randomBytes(8).toString('hex')}`).replace(/:[A-Za-z]+/g, () => randomUUID());
}

function dummyBody(route: RouteDef): { json?: unknown; form?: FormData } {
  if (route.multipart) {
    const form = new FormData();
    form.append('note', 'dummy');
    return { form };
  }
  return route.body ? { json: {} } : {};
}

function describeResponse(res: HttpResponse): string {
  return `${res.status} ${JSON.stringify(res.body)?.slice(0, 300)}`;
}

/** A body with a code (top-level or nested) also has retryable and suggested_action. */
function carriesCodedFields(res: HttpResponse): boolean {
  const code = res.body?.code ?? res.body?.error?.code;
  if (code === undefined) return true;
  return typeof res.body.retryable === 'boolean' && typeof res.body.suggested_action === 'string';
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}

const MD = { 'x-service-md-version': '1' };

describe('access matrix: every route x every kind of key', () => {
  let app: TestApp;
  let api: ReturnType<typeof client>;
  const keys: Record<Exclude<Kind, 'none'>, string> = {} as never;
  let narrowKeys: Array<{ key: string; scopes: Set<string> }>;
  const allScopes = new Set<string>(SCOPES);

  beforeAll(async () => {
    app = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000', SIGNUP_RATE_LIMIT_PER_MINUTE: '1000000' } });
    api = client(app.baseUrl);
    const member = await newMember(app.deps, { creditsCents: 10000 });
    await app.deps.db.query(`UPDATE members SET packages_enabled = true WHERE id = $1`, [member.member_id]);
    keys.member = member.key;
    keys.member_test = (
      await insertMemberKey(app.deps.db, member.member_id, { name: 'sandbox', environment: 'test' })
    ).key;
    const agent = await newAgent(app.baseUrl, member.key);
    keys.agent = (await newCredential(app.baseUrl, member.key, agent.id, { scopes: [...SCOPES] })).key;
    keys.agent_test = (
      await newCredential(app.baseUrl, member.key, agent.id, { scopes: [...SCOPES], environment: 'test' })
    ).key;
    narrowKeys = [];
    for (const scope of ['message.send', 'mailbox.read']) {
      narrowKeys.push({
        key: (await newCredential(app.baseUrl, member.key, agent.id, { scopes: [scope] })).key,
        scopes: new Set([scope]),
      });
    }
    keys.agent_without_scope = narrowKeys[0].key;
    keys.facility = (await createFacility(app.deps, 'Access matrix facility')).key;
    const revoked = await insertMemberKey(app.deps.db, member.member_id, { name: 'revoked', environment: 'prod' });
    await revokeKey(app.deps, revoked.key);
    keys.revoked = revoked.key;
    const expired = await newCredential(app.baseUrl, member.key, agent.id, { scopes: [...SCOPES], expires_in_days: 1 });
    await app.deps.db.query(`UPDATE agent_credentials SET expires_at = now() - interval '1 minute' WHERE id = $1`, [
      expired.id,
    ]);
    keys.expired = expired.key;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('has an access row for every mounted route', () => {
    const missing = allRoutes
      .filter((r) => !ENDPOINT_ACCESS[accessKey(r.method, r.path)])
      .map((r) => accessKey(r.method, r.path));
    expect(missing).toEqual([]);
  });

  it('answers every route and key kind as the access table documents, and never with 5xx', async () => {
    const cases = allRoutes.flatMap((route) => KINDS.map((kind) => ({ route, kind })));
    const problems = (
      await pool(cases, 6, async ({ route, kind }) => {
        const access = ENDPOINT_ACCESS[accessKey(route.method, route.path)];
        let key: string | undefined = kind === 'none' ? undefined : keys[kind];
        let scopes: ReadonlySet<string> = allScopes;
        if (kind === 'agent_without_scope') {
          // A key whose only scope is not among the ones this route names.
          const needed = new Set<string>([...(access.scopes ?? []), ...(access.anyScope ?? [])]);
          const narrow = narrowKeys.find((n) => ![...n.scopes].some((s) => needed.has(s)))!;
          key = narrow.key;
          scopes = narrow.scopes;
        }
        const expected = expectedFor(access, route.path, kind, scopes);
        const path = dummyPath(route.path);
        const res = await api(route.method.toUpperCase(), path, { key, headers: MD, ...dummyBody(route) });
        const label = `${accessKey(route.method, route.path)} as ${kind}: got ${describeResponse(res)}`;
        if (res.status >= 500) return `${label}; expected no 5xx`;
        if (!carriesCodedFields(res)) return `${label}; a coded error must carry retryable and suggested_action`;
        if ('allowed' in expected) {
          if (access.callers === 'public') {
            if (res.status === 403 || (res.status === 401 && KEY_REASONS.has(res.body?.reason)))
              return `${label}; a public route must not refuse for the key`;
          } else if (res.status === 401 || res.status === 403) {
            return `${label}; expected the caller to be allowed`;
          }
          return null;
        }
        if (
          res.status !== expected.status ||
          res.body?.reason !== expected.reason ||
          typeof res.body?.error !== 'string'
        ) {
          return `${label}; expected ${expected.status} ${expected.reason}`;
        }
        return null;
      })
    ).filter((p): p is string => p !== null);
    expect(problems).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------
// Another member's key on an object route.

/** Object routes with no object in this test, and why they are covered elsewhere or not reachable. */
const NOT_COVERED: Record<string, string> = {
  '/v1/facility/': 'facility keys act on the pieces of their facility; there is one facility per deployment in tests',
};

/** Valid bodies, so that the request reaches the ownership check instead of stopping at validation. */
const SAMPLE_BODIES: Record<string, unknown> = {
  'PATCH /v1/agents/:id': { display_name: 'Changed by another member' },
  'PUT /v1/agents/:id/instructions': { text: 'Overwritten by another member', expected_version: 1 },
  'POST /v1/agents/:id/instructions/proposals': { suggested_content: 'Proposed by another member' },
  'POST /v1/agents/:id/instructions/proposals/:proposalId/decision': { decision: 'reject' },
  'POST /v1/agents/:id/credentials': { scopes: ['mail.send'] },
  'PATCH /v1/webhook-endpoints/:id': { name: 'Changed by another member' },
  'PATCH /v1/templates/:id': { name: 'Changed by another member' },
  'POST /v1/templates/:id/preview': { merge_variables: { x: 'y' } },
  'POST /v1/webhook-endpoints/:id/test-sample': { event_type: SAMPLE_EVENT_TYPES[0] },
  'POST /v1/webhook-endpoints/:id/rules': { name: 'Foreign rule', terms: ['invoice'] },
  'PATCH /v1/webhook-endpoints/:id/rules/:ruleId': { name: 'Changed by another member' },
  'PATCH /v1/notifications/recipients/:id': { kinds: { approval_needed: false } },
  'PATCH /v1/inbound-forwarding-addresses/:id': { label: 'Changed by another member' },
  'POST /v1/support/conversations/:id/messages': { body: 'Written by another member' },
  'PATCH /v1/postal-threads/:id': { title: 'Changed by another member' },
  'POST /v1/packages/:id/actions': { action: 'scan' },
  'PATCH /v1/packages/:id/actions/:actionId': { agent_notes: 'Changed by another member' },
  'POST /v1/packages/:id/forward': {
    to_name: 'Thief',
    to_line1: '1 Elsewhere Rd',
    to_city: 'Reno',
    to_state: 'NV',
    to_zip: '89501',
  },
  'POST /v1/packages/:id/scan': { scan_type: 'document' },
  'POST /v1/packages/:id/tags': { tag: 'stolen' },
  'POST /v1/packages/:id/notes': { note: 'Written by another member' },
  'PATCH /v1/expected-shipments/:id': { description: 'Changed by another member' },
  'PATCH /v1/rules/:id': { name: 'Changed by another member' },
  'POST /v1/inbound-items/:id/actions': {
    action_type: 'open_and_scan',
    expected_version: 1,
    expected_quote: { amount_cents: 0, currency: 'usd' },
  },
  'POST /v1/handling/:id/approve': { expected_version: 1 },
  'POST /v1/handling/:id/reject': { expected_version: 1 },
  'POST /v1/agent-inbox/:id/acknowledgments': {
    outcome: 'processed',
    context_version: '0'.repeat(64),
    run_id: 'run-1',
  },
  'POST /v1/agent-inbox/:id/handling': { action_type: 'open_and_scan', expected_version: 1 },
};

/** Query strings a route needs before it looks at the object. */
const SAMPLE_QUERIES: Record<string, string> = {
  'DELETE /v1/packages/:id/tags': '?tag=stolen',
};

/** Routes whose object differs from the one their path prefix names (a sandbox-only action on a sandbox object). */
const ROUTE_OBJECTS: Record<string, string> = {
  'POST /v1/inbound-items/:id/reset-sample': '/v1/inbound-items/:id (sample)',
  'GET /v1/agent-inbox/:id/scans': '/v1/agent-inbox/:id (sample)',
  'GET /v1/agent-inbox/:id/scans/:operationId': '/v1/agent-inbox/:id (sample)',
};

/**
 * Object routes whose objects are not kept apart by environment, and why. Every other
 * object route answers the owner's key of the other environment as it answers a stranger.
 */
const SPANS_ENVIRONMENTS: Record<string, string> = {
  '/v1/agents/':
    'an agent, its credentials, instructions and proposals belong to no environment: test keys read their agent profile and instructions (spec)',
  '/v1/api-keys/':
    'member keys are account administration: live keys manage test keys, test keys get 403 live_key_required on production keys',
  '/v1/webhooks/events/':
    'the legacy agent-webhook event log "includes sandbox and live" (spec): live keys read sandbox events by id too (test keys: 403 live_key_required)',
  '/v1/notifications/':
    "the owner's email notification settings belong to no environment: live member keys only (test keys: 403 live_key_required)",
};

const OTHER_ENVIRONMENT: Partial<Record<KeyKind, KeyKind>> = {
  member: 'member_test',
  member_test: 'member',
  agent: 'agent_test',
  agent_test: 'agent',
};

/** One MCP client per key, connected on first use. */
function mcpClients(baseUrl: () => string) {
  const clients = new Map<string, Promise<McpClient>>();
  return {
    async call(key: string, name: string, args: Record<string, unknown>) {
      if (!clients.has(key)) {
        clients.set(
          key,
          (async () => {
            const c = new McpClient({ name: 'access-matrix', version: '1.0.0' });
            await c.connect(
              new StreamableHTTPClientTransport(new URL(`${baseUrl()}/mcp`), {
                requestInit: { headers: { Authorization: `Bearer ${key}` } },
              }),
            );
            return c;
          })(),
        );
      }
      const c = await clients.get(key)!;
      return (await c.callTool({ name, arguments: args })) as {
        isError?: boolean;
        structuredContent?: { error?: Record<string, unknown>; status?: number };
      };
    },
    async close() {
      await Promise.all([...clients.values()].map(async (c) => (await c).close()));
    },
  };
}

function shapeKeys(schema: unknown): string[] {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape) : [];
}

describe("another member's key on object routes", () => {
  let app: TestApp;
  let api: ReturnType<typeof client>;
  /** Path parameter values of the victim's objects, keyed by the route path prefix up to the parameter. */
  const objects: Record<string, string> = {};
  /** Which objects live in the sandbox (reached with the attacker's test keys). */
  const testObjects = new Set<string>();
  /** The same kinds of objects in the other environment (live where `objects` has a sandbox one, and the reverse). */
  const otherObjects: Record<string, string> = {};
  let livePendingMail: string;
  const mcp = mcpClients(() => app.baseUrl);
  const attacker: Partial<Record<KeyKind, string>> = {};
  /** The owner's keys of each object, by prefix: reads with them must succeed (the objects are real). */
  const owners: Record<string, Partial<Record<KeyKind, string>>> = {};

  beforeAll(async () => {
    app = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
    api = client(app.baseUrl);

    const thief = await newMember(app.deps, { creditsCents: 10000 });
    const thiefAgent = await newAgent(app.baseUrl, thief.key);
    attacker.member = thief.key;
    attacker.member_test = (
      await insertMemberKey(app.deps.db, thief.member_id, { name: 'sandbox', environment: 'test' })
    ).key;
    attacker.agent = (await newCredential(app.baseUrl, thief.key, thiefAgent.id, { scopes: [...SCOPES] })).key;
    attacker.agent_test = (
      await newCredential(app.baseUrl, thief.key, thiefAgent.id, { scopes: [...SCOPES], environment: 'test' })
    ).key;

    const victim = await newMember(app.deps, { creditsCents: 10000 });
    await app.deps.db.query(`UPDATE members SET packages_enabled = true WHERE id = ANY($1)`, [
      [victim.member_id, thief.member_id],
    ]);
    const victimTestKey = (
      await insertMemberKey(app.deps.db, victim.member_id, { name: 'sandbox', environment: 'test' })
    ).key;
    const agent = await newAgent(app.baseUrl, victim.key);
    objects['/v1/agents/:id'] = agent.id;
    const credential = await newCredential(app.baseUrl, victim.key, agent.id, { scopes: [...SCOPES] });
    const victimAgentTest = await newCredential(app.baseUrl, victim.key, agent.id, {
      scopes: [...SCOPES],
      environment: 'test',
    });
    const victimKeys = {
      member: victim.key,
      agent: credential.key,
      member_test: victimTestKey,
      agent_test: victimAgentTest.key,
    };
    objects['/v1/agents/:id/credentials/:credentialId'] = credential.id;
    const proposal = await api('POST', `/v1/agents/${agent.id}/instructions/proposals`, {
      key: credential.key,
      headers: MD,
      json: { suggested_content: 'Be brief.' },
    });
    expect(proposal.status).toBe(201);
    objects['/v1/agents/:id/instructions/proposals/:proposalId'] = proposal.body.proposal.id;
    const apiKey = await api('POST', '/v1/api-keys', { key: victim.key, json: { name: 'victim key' } });
    objects['/v1/api-keys/:id'] = apiKey.body.id;
    const recipient = await api('POST', '/v1/notifications/recipients', {
      key: victim.key,
      json: { email: 'victim-colleague@example.test' },
    });
    objects['/v1/notifications/recipients/:id'] = recipient.body.recipient.id;

    const mail = await api('POST', '/v1/test/mail', {
      key: victimTestKey,
      json: {
        recipient_name: 'Jane Doe',
        recipient_line1: '1 Main St',
        recipient_city: 'Austin',
        recipient_state: 'TX',
        recipient_zip: '78701',
      },
    });
    expect(mail.status).toBe(201);
    objects['/v1/mail/:id'] = mail.body.id;
    objects['/v1/test/mail/:id'] = mail.body.id;
    testObjects.add('/v1/mail/:id').add('/v1/test/mail/:id');

    const batch = await api('POST', '/v1/batch-mail', {
      key: victimTestKey,
      form: batchForm(await pdf(1), recipientsCsv(3)),
    });
    expect(batch.status).toBe(201);
    objects['/v1/batch-mail/:id'] = batch.body.batch.id;
    testObjects.add('/v1/batch-mail/:id');

    const endpoint = await api('POST', '/v1/webhook-endpoints', {
      key: victim.key,
      json: {
        name: 'victim endpoint',
        url: 'http://127.0.0.1:9/hook',
        event_types: ['mail.submitted'],
        rules: [{ name: 'r', terms: ['invoice'] }],
      },
    });
    expect(endpoint.status).toBe(201);
    objects['/v1/webhook-endpoints/:id'] = endpoint.body.endpoint.id;
    objects['/v1/webhook-endpoints/:id/rules/:ruleId'] = endpoint.body.endpoint.rules[0].id;
    const template = await api('POST', '/v1/templates', {
      key: victim.key,
      json: { name: 'victim template', html: '<p>{{x}}</p>' },
    });
    expect(template.status).toBe(201);
    objects['/v1/templates/:id'] = template.body.template.id;
    const test = await api('POST', `/v1/webhook-endpoints/${endpoint.body.endpoint.id}/test`, { key: victim.key });
    expect(test.status).toBeLessThan(500);
    const [delivery] = await app.deps.db.query(`SELECT id FROM webhook_deliveries WHERE member_id = $1 LIMIT 1`, [
      victim.member_id,
    ]);
    objects['/v1/webhook-deliveries/:id'] = delivery.id;
    // The legacy event log lists events sent to the agent's webhook: give the agent one and send a test event.
    const hook = await api('PUT', '/v1/webhooks/settings', {
      key: credential.key,
      headers: MD,
      json: { webhook_url: 'http://127.0.0.1:9/hook', enabled: true, event_types: ['*'] },
    });
    expect(hook.status).toBe(200);
    expect((await api('POST', '/v1/test/webhook', { key: credential.key, json: {} })).status).toBeLessThan(500);
    const [event] = await app.deps.db.query(
      `SELECT event_id AS id FROM webhook_deliveries WHERE member_id = $1 AND target_type = 'agent_webhook' LIMIT 1`,
      [victim.member_id],
    );
    objects['/v1/webhooks/events/:eventId'] = event.id;

    const ticket = await api('POST', '/v1/support/messages', {
      key: victim.key,
      json: { category: 'support', body: 'Help, please.' },
    });
    expect(ticket.status).toBe(201);
    objects['/v1/support/conversations/:id'] = ticket.body.message.conversation_id;

    const alias = await api('POST', '/v1/inbound-forwarding-addresses', {
      key: victim.key,
      json: { label: 'victim alias', agent_id: agent.id },
    });
    expect(alias.status).toBe(201);
    const aliasBody = alias.body.forwarding_address;
    objects['/v1/inbound-forwarding-addresses/:id'] = aliasBody.id;
    const raw = [
      `From: Billing <billing@example.com>`,
      `To: ${aliasBody.email}`,
      `Subject: Invoice 42 due`,
      `Message-ID: <${randomUUID()}@example.com>`,
      `Date: ${new Date().toUTCString()}`,
      '',
      'Your invoice 42 of $10.00 is due on 2030-01-01.',
      '',
    ].join('\r\n');
    const intake = await api('POST', `/v1/intake/email?recipient=${encodeURIComponent(aliasBody.email)}`, {
      raw,
      headers: { 'x-intake-secret': app.deps.config.intakeSecret, 'content-type': 'message/rfc822' },
    });
    expect(intake.status).toBe(202);
    const [item] = await app.deps.db.query(`SELECT id FROM inbound_mail_items WHERE member_id = $1 LIMIT 1`, [
      victim.member_id,
    ]);
    objects['/v1/inbound/:id'] = item.id;
    const [file] = await app.deps.db.query(
      `SELECT id FROM inbound_mail_files WHERE inbound_mail_item_id = $1 LIMIT 1`,
      [item.id],
    );
    objects['/v1/inbound/:id/files/:fileId'] = file.id;
    const thread = await waitForRow(app, `SELECT id FROM postal_threads WHERE member_id = $1 LIMIT 1`, [
      victim.member_id,
    ]);
    objects['/v1/postal-threads/:id'] = thread.id;

    // Physical inbound: a live letter through facility intake, a handling proposal on it,
    // a sandbox inbox seed with its scan, the member sample, and an open Business mail run.
    const world = await newWorld(app, { creditsCents: 100000 });
    const letter = await receivePiece(app, world);
    objects['/v1/inbound-items/:id'] = letter;
    objects['/v1/inbound-items/:id (sample)'] = memberSampleId(world.memberId);
    testObjects.add('/v1/inbound-items/:id (sample)');
    const version = (await api('GET', `/v1/agent-inbox/${letter}/handling`, { key: world.agentKey })).body.version;
    const proposal2 = await api('POST', `/v1/agent-inbox/${letter}/handling`, {
      key: world.agentKey,
      headers: { ...MD, 'idempotency-key': randomUUID() },
      json: { action_type: 'open_and_scan', expected_version: version },
    });
    expect(proposal2.status).toBe(201);
    objects['/v1/handling/:id'] = proposal2.body.operation.id;
    const seeded = await api('POST', '/v1/agent-inbox/sandbox/seed', {
      key: world.agentTestKey,
      headers: { 'idempotency-key': randomUUID() },
      json: { scenario: 'two_page_letter' },
    });
    if (seeded.status >= 300) throw new Error(`seed: ${seeded.status} ${JSON.stringify(seeded.body)}`);
    objects['/v1/agent-inbox/:id'] = seeded.body.item.id;
    // Scan history is shown for the member sample only.
    const sample = memberSampleId(world.memberId);
    const sampleScans = await api('GET', `/v1/agent-inbox/${sample}/scans`, { key: world.agentTestKey });
    expect(sampleScans.status).toBe(200);
    objects['/v1/agent-inbox/:id (sample)'] = sample;
    objects['/v1/agent-inbox/:id (sample)/scans/:operationId'] = sampleScans.body.scans[0].request_id;
    testObjects.add('/v1/agent-inbox/:id (sample)');
    testObjects.add('/v1/agent-inbox/:id');
    await setMemberRunSettings(app.deps, world.memberId, { business: true, agentAutoFill: true });
    await setMemberRunSettings(app.deps, thief.member_id, { business: true, agentAutoFill: true });
    const runId = `run-${randomUUID()}`;
    const sender = await newCredential(app.baseUrl, world.memberKey, world.agentId, { scopes: ['mail.send'] });
    const run = await api('POST', '/v1/mail-runs', { key: sender.key, headers: MD, json: { mail_run_id: runId } });
    if (run.status >= 300) throw new Error(`mail run: ${run.status} ${JSON.stringify(run.body)}`);
    objects['/v1/mail-runs/:id'] = runId;

    // The other environment: a live piece awaiting approval and a live draft batch beside the sandbox ones, a sandbox
    // endpoint (with a rule and a delivery), sandbox tickets, conversations, alias, inbound mail and thread beside the
    // live ones, a live agent-inbox item and a sandbox handling operation, and a sandbox event in the legacy log.
    const liveMail = await api('POST', '/v1/mail', {
      key: victim.key,
      form: letterForm(await letterPdf(), { requires_approval: true }),
    });
    expect(liveMail.body.status).toBe('pending_approval');
    livePendingMail = liveMail.body.id;
    otherObjects['/v1/mail/:id'] = liveMail.body.id;
    otherObjects['/v1/test/mail/:id'] = liveMail.body.id;
    const liveBatch = await api('POST', '/v1/batch-mail', {
      key: victim.key,
      form: batchForm(await pdf(1), recipientsCsv(3)),
    });
    expect(liveBatch.status).toBe(201);
    otherObjects['/v1/batch-mail/:id'] = liveBatch.body.batch.id;
    const sandboxTemplate = await api('POST', '/v1/templates', {
      key: victimTestKey,
      json: { name: 'sandbox template', html: '<p>{{x}}</p>' },
    });
    expect(sandboxTemplate.status).toBe(201);
    otherObjects['/v1/templates/:id'] = sandboxTemplate.body.template.id;
    const sandboxEndpoint = await api('POST', '/v1/webhook-endpoints', {
      key: victimTestKey,
      json: {
        name: 'sandbox endpoint',
        url: 'http://127.0.0.1:9/hook',
        event_types: ['mail.submitted'],
        rules: [{ name: 'r', terms: ['invoice'] }],
      },
    });
    expect(sandboxEndpoint.body.endpoint.environment).toBe('sandbox');
    otherObjects['/v1/webhook-endpoints/:id'] = sandboxEndpoint.body.endpoint.id;
    otherObjects['/v1/webhook-endpoints/:id/rules/:ruleId'] = sandboxEndpoint.body.endpoint.rules[0].id;
    expect(
      (await api('POST', `/v1/webhook-endpoints/${sandboxEndpoint.body.endpoint.id}/test`, { key: victimTestKey }))
        .status,
    ).toBeLessThan(500);
    const [sandboxDelivery] = await app.deps.db.query(
      `SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 LIMIT 1`,
      [sandboxEndpoint.body.endpoint.id],
    );
    otherObjects['/v1/webhook-deliveries/:id'] = sandboxDelivery.id;
    expect((await api('POST', '/v1/test/webhook', { key: victimAgentTest.key, json: {} })).status).toBeLessThan(500);
    const [sandboxEvent] = await app.deps.db.query(
      `SELECT event_id AS id FROM webhook_deliveries WHERE member_id = $1 AND target_type = 'agent_webhook' AND environment = 'test' LIMIT 1`,
      [victim.member_id],
    );
    otherObjects['/v1/webhooks/events/:eventId'] = sandboxEvent.id;
    const testTicket = await api('POST', '/v1/support/messages', {
      key: victimTestKey,
      json: { category: 'support', body: 'Sandbox help, please.' },
    });
    expect(testTicket.status).toBe(201);
    otherObjects['/v1/support/conversations/:id'] = testTicket.body.message.conversation_id;
    const testFacilityMessage = await api('POST', '/v1/facility-messages', {
      key: victimTestKey,
      json: { body: 'Sandbox question', subject: 'Sandbox' },
    });
    expect(testFacilityMessage.status).toBe(201);
    otherObjects['/v1/facility-messages/conversations/:id'] = testFacilityMessage.body.message.conversation_id;
    const testAlias = await api('POST', '/v1/inbound-forwarding-addresses', {
      key: victimTestKey,
      json: { label: 'sandbox alias', agent_id: agent.id },
    });
    expect(testAlias.status).toBe(201);
    otherObjects['/v1/inbound-forwarding-addresses/:id'] = testAlias.body.forwarding_address.id;
    const testIntake = await api(
      'POST',
      `/v1/intake/email?recipient=${encodeURIComponent(testAlias.body.forwarding_address.email)}`,
      {
        raw: raw
          .replace(aliasBody.email, testAlias.body.forwarding_address.email)
          .replace(/Message-ID: <[^>]+>/, `Message-ID: <${randomUUID()}@example.com>`),
        headers: { 'x-intake-secret': app.deps.config.intakeSecret, 'content-type': 'message/rfc822' },
      },
    );
    expect(testIntake.status).toBe(202);
    const [testItem] = await app.deps.db.query(
      `SELECT id FROM inbound_mail_items WHERE member_id = $1 AND test_mode LIMIT 1`,
      [victim.member_id],
    );
    otherObjects['/v1/inbound/:id'] = testItem.id;
    const [testFile] = await app.deps.db.query(
      `SELECT id FROM inbound_mail_files WHERE inbound_mail_item_id = $1 LIMIT 1`,
      [testItem.id],
    );
    otherObjects['/v1/inbound/:id/files/:fileId'] = testFile.id;
    otherObjects['/v1/postal-threads/:id'] = (
      await waitForRow(app, `SELECT id FROM postal_threads WHERE member_id = $1 AND test_mode LIMIT 1`, [
        victim.member_id,
      ])
    ).id;
    otherObjects['/v1/agent-inbox/:id'] = letter;
    otherObjects['/v1/inbound-items/:id'] = memberSampleId(world.memberId);
    const sampleVersion = (await api('GET', `/v1/agent-inbox/${sample}/handling`, { key: world.agentTestKey })).body
      .version;
    const sandboxOperation = await api('POST', `/v1/agent-inbox/${sample}/handling`, {
      key: world.agentTestKey,
      headers: { ...MD, 'idempotency-key': randomUUID() },
      json: { action_type: 'open_and_scan', expected_version: sampleVersion },
    });
    expect(sandboxOperation.status).toBe(201);
    otherObjects['/v1/handling/:id'] = sandboxOperation.body.operation.id;
    const senderTest = await newCredential(app.baseUrl, world.memberKey, world.agentId, {
      scopes: ['mail.send'],
      environment: 'test',
    });

    const worldKeys = {
      member: world.memberKey,
      agent: world.agentKey,
      member_test: world.memberTestKey,
      agent_test: world.agentTestKey,
    };
    for (const prefix of [
      '/v1/inbound-items/:id',
      '/v1/inbound-items/:id (sample)',
      '/v1/handling/:id',
      '/v1/agent-inbox/:id',
      '/v1/agent-inbox/:id (sample)',
    ]) {
      owners[prefix] = worldKeys;
    }
    owners['/v1/mail-runs/:id'] = { agent: sender.key, agent_test: senderTest.key };

    const facilityMessage = await api('POST', '/v1/facility-messages', {
      key: victim.key,
      json: { body: 'Is my letter printed?', subject: 'Printing' },
    });
    expect(facilityMessage.status).toBe(201);
    objects['/v1/facility-messages/conversations/:id'] = facilityMessage.body.message.conversation_id;

    // Packages arrive through the facility; a received parcel and one action request stand in for that.
    const [parcel] = await app.deps.db.query(
      `INSERT INTO physical_inbound_items (reference_code, member_id, agent_id, kind, environment, source_domain)
       VALUES ('SEC-1', $1, $2, 'parcel', 'live', 'internal_team') RETURNING id`,
      [victim.member_id, agent.id],
    );
    objects['/v1/packages/:id'] = parcel.id;
    const [action] = await app.deps.db.query(
      `INSERT INTO package_actions (item_id, member_id, agent_id, action, requested_by) VALUES ($1, $2, $3, 'scan', 'member') RETURNING id`,
      [parcel.id, victim.member_id, agent.id],
    );
    objects['/v1/packages/:id/actions/:actionId'] = action.id;
    // An expected shipment and a mailbox rule of the victim's agent.
    const [shipment] = await app.deps.db.query(
      `INSERT INTO expected_shipments (member_id, agent_id, mailbox_id, tracking_number, tracking_number_normalized, created_by)
       VALUES ($1, $2, 'PMB-0', 'SEC-1', 'SEC1', 'member') RETURNING id`,
      [victim.member_id, agent.id],
    );
    objects['/v1/expected-shipments/:id'] = shipment.id;
    const [mailboxRule] = await app.deps.db.query(
      `INSERT INTO mailbox_rules (member_id, agent_id, name, match, apply, created_by)
       VALUES ($1, $2, 'victim rule', '{"kinds":["parcel"]}', '{"add_tags":["x"]}', 'member') RETURNING id`,
      [victim.member_id, agent.id],
    );
    objects['/v1/rules/:id'] = mailboxRule.id;
    // Objects the member key made account-wide are the member's; the agent key does not see them.
    const memberOnly = [
      '/v1/api-keys/:id',
      '/v1/notifications/recipients/:id',
      '/v1/batch-mail/:id',
      '/v1/webhook-endpoints/:id',
      '/v1/webhook-endpoints/:id/rules/:ruleId',
      '/v1/webhook-deliveries/:id',
      '/v1/support/conversations/:id',
      '/v1/facility-messages/conversations/:id',
    ];
    for (const prefix of memberOnly) owners[prefix] = { member: victim.key, member_test: victimTestKey };
    for (const prefix of Object.keys(objects)) owners[prefix] ??= victimKeys;
  });
  afterAll(async () => {
    await mcp.close();
    await app?.close();
  });

  /**
   * Fills the route's parameters with the victim's objects (`other`: those of the other
   * environment); null when a parameter has none.
   */
  function victimPath(
    path: string,
    other = false,
  ): { path: string; test: boolean; owner: string; values: string[] } | null {
    let test = false;
    let missing = false;
    let owner = '';
    const values: string[] = [];
    const filled = path.replace(/:[A-Za-z]+/g, (param, offset: number) => {
      const prefix = path.slice(0, offset + param.length);
      const value = (other ? otherObjects : objects)[prefix];
      if (!value) missing = true;
      if (testObjects.has(prefix) !== other) test = true;
      owner ||= prefix;
      values.push(value ?? '');
      return value ?? '';
    });
    return missing ? null : { path: filled, test, owner, values };
  }

  /** The victim's objects a route can be tried on, in either environment. */
  function targetsOf(route: RouteDef): Array<{ path: string; test: boolean; owner: string; values: string[] }> {
    const override = ROUTE_OBJECTS[accessKey(route.method, route.path)];
    if (override) {
      const values = [objects[override], objects[`${override}/scans/:operationId`]].slice(
        0,
        (route.path.match(/:/g) ?? []).length,
      );
      return [
        {
          path: route.path.replace(/:id\b/, values[0]).replace(/:operationId\b/, values[1] ?? ''),
          test: testObjects.has(override),
          owner: override,
          values,
        },
      ];
    }
    return [victimPath(route.path), victimPath(route.path, true)].filter((t): t is NonNullable<typeof t> => t !== null);
  }

  it('answers 404 (403 for packages) on every object route', async () => {
    const objectRoutes = allRoutes.filter(
      (r) => r.path.includes(':') && ENDPOINT_ACCESS[accessKey(r.method, r.path)].callers !== 'public',
    );
    const problems: string[] = [];
    const uncovered: string[] = [];
    const cases: Array<{ route: RouteDef; kind: KeyKind; path: string; owner: string }> = [];
    for (const route of objectRoutes) {
      if (Object.keys(NOT_COVERED).some((prefix) => route.path.startsWith(prefix))) continue;
      const override = ROUTE_OBJECTS[accessKey(route.method, route.path)];
      const target = override
        ? {
            path: route.path
              .replace(/:id\b/, objects[override])
              .replace(/:operationId\b/, objects[`${override}/scans/:operationId`] ?? ''),
            test: testObjects.has(override),
            owner: override,
          }
        : victimPath(route.path);
      if (!target) {
        uncovered.push(accessKey(route.method, route.path));
        continue;
      }
      const access = ENDPOINT_ACCESS[accessKey(route.method, route.path)];
      const kinds = (target.test ? ['member_test', 'agent_test'] : ['member', 'agent']) as KeyKind[];
      for (const kind of kinds) {
        // Only callers the route lets through get as far as the ownership check.
        if (!('allowed' in expectedFor(access, route.path, kind, new Set(SCOPES)))) continue;
        cases.push({ route, kind, path: target.path, owner: target.owner });
      }
    }
    let controls = 0;
    await pool(cases, 4, async ({ route, kind, path, owner }) => {
      const key = accessKey(route.method, route.path);
      if (route.body && !route.multipart && SAMPLE_BODIES[key] === undefined) {
        problems.push(`${key}: add a valid sample body so the request reaches the ownership check`);
        return;
      }
      const body = route.multipart ? dummyBody(route) : route.body ? { json: SAMPLE_BODIES[key] } : {};
      const res = await api(route.method.toUpperCase(), `${path}${SAMPLE_QUERIES[key] ?? ''}`, {
        key: attacker[kind],
        headers: { ...MD, 'idempotency-key': randomUUID() },
        ...body,
      });
      const allowed = route.path.startsWith('/v1/packages/') ? [403, 404] : [404];
      if (!allowed.includes(res.status))
        problems.push(
          `${key} as the other member's ${kind}: got ${describeResponse(res)}; expected ${allowed.join(' or ')}`,
        );
      // Control: the owner reads the same object (so the 404 above is about ownership, not a dead id).
      const ownerKey = owners[owner]?.[kind];
      if (route.method === 'get' && ownerKey) {
        const mine = await api('GET', `${path}${SAMPLE_QUERIES[key] ?? ''}`, { key: ownerKey, headers: MD });
        controls++;
        if (mine.status >= 400)
          problems.push(`${key} as the owner's ${kind}: got ${describeResponse(mine)}; the object should be readable`);
      }
    });
    expect(controls).toBeGreaterThan(20);
    expect(uncovered).toEqual([]);
    expect(problems).toEqual([]);
    expect(cases.length).toBeGreaterThan(40);
  });

  it("answers the owner's key of the other environment as a stranger on every object route, REST and MCP", async () => {
    const objectRoutes = allRoutes.filter(
      (r) => r.path.includes(':') && ENDPOINT_ACCESS[accessKey(r.method, r.path)].callers !== 'public',
    );
    const skipped = (path: string) =>
      [...Object.keys(NOT_COVERED), ...Object.keys(SPANS_ENVIRONMENTS)].some((prefix) => path.startsWith(prefix));
    type Case = { route: RouteDef; kind: KeyKind; target: ReturnType<typeof targetsOf>[number] };
    const cases: Case[] = [];
    const untried: string[] = [];
    for (const route of objectRoutes) {
      if (skipped(route.path)) continue;
      const before = cases.length;
      for (const target of targetsOf(route)) {
        const kinds: KeyKind[] = target.test ? ['member', 'agent'] : ['member_test', 'agent_test'];
        for (const kind of kinds) if (owners[target.owner]?.[kind]) cases.push({ route, kind, target });
      }
      if (cases.length === before) untried.push(accessKey(route.method, route.path));
    }
    /** What the other environment's key must get: the route's own refusal for that key, otherwise 404. */
    const expectation = (access: Access, path: string, kind: KeyKind) => {
      const e = expectedFor(access, path, kind, new Set(SCOPES));
      return 'allowed' in e ? { status: 404 } : e;
    };

    const problems: string[] = [];
    let controls = 0;
    await pool(cases, 4, async ({ route, kind, target }) => {
      const key = accessKey(route.method, route.path);
      const body = route.multipart ? dummyBody(route) : route.body ? { json: SAMPLE_BODIES[key] } : {};
      const res = await api(route.method.toUpperCase(), `${target.path}${SAMPLE_QUERIES[key] ?? ''}`, {
        key: owners[target.owner][kind],
        headers: { ...MD, 'idempotency-key': randomUUID() },
        ...body,
      });
      const want = expectation(ENDPOINT_ACCESS[key], route.path, kind);
      const env = target.test ? 'sandbox' : 'live';
      if (res.status !== want.status || ('reason' in want && res.body?.reason !== want.reason)) {
        problems.push(
          `${key} on a ${env} object as the owner's ${kind}: got ${describeResponse(res)}; expected ${JSON.stringify(want)}`,
        );
      }
      // Control: the owner's key of the object's own environment reads it.
      const sameKind = OTHER_ENVIRONMENT[kind]!;
      const sameKey = owners[target.owner][sameKind];
      if (
        route.method === 'get' &&
        sameKey &&
        'allowed' in expectedFor(ENDPOINT_ACCESS[key], route.path, sameKind, new Set(SCOPES))
      ) {
        const mine = await api('GET', `${target.path}${SAMPLE_QUERIES[key] ?? ''}`, { key: sameKey, headers: MD });
        controls++;
        if (mine.status >= 400)
          problems.push(
            `${key} on a ${env} object as the owner's ${sameKind}: got ${describeResponse(mine)}; the object should be readable`,
          );
      }
    });

    // The MCP tools that take ids call the same services: the same answers.
    let toolCases = 0;
    for (const tool of registeredTools) {
      const route = allRoutes.find((r) => accessKey(r.method, r.path) === tool.declaration.access)!;
      const params = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]);
      if (!params.length || skipped(route.path)) continue;
      const restFields = new Set([...shapeKeys(route.query), ...shapeKeys(route.body)]);
      const idFields = Object.keys(tool.input.shape).filter((k) => k.endsWith('_id') && !restFields.has(k));
      if (idFields.length !== params.length) {
        problems.push(
          `${tool.name}: cannot tell which inputs are the ids of ${tool.declaration.access} (${idFields.join(', ')})`,
        );
        continue;
      }
      for (const target of targetsOf(route)) {
        const kinds: KeyKind[] = target.test ? ['member', 'agent'] : ['member_test', 'agent_test'];
        for (const kind of kinds) {
          const key = owners[target.owner]?.[kind];
          if (!key) continue;
          const args: Record<string, unknown> = { ...(SAMPLE_BODIES[tool.declaration.access] as object | undefined) };
          idFields.forEach((field, i) => {
            args[field] = target.values[i];
          });
          if ('idempotency_key' in tool.input.shape) args.idempotency_key = randomUUID();
          if (tool.versionGuard) args.service_md_version = 1;
          const result = await mcp.call(key, tool.name, args);
          toolCases++;
          const want = expectation(tool.access, tool.accessPath, kind);
          const got = { status: result.structuredContent?.status, reason: result.structuredContent?.error?.reason };
          if (!result.isError || got.status !== want.status || ('reason' in want && got.reason !== want.reason)) {
            problems.push(
              `MCP ${tool.name} on a ${target.test ? 'sandbox' : 'live'} object as the owner's ${kind}: got ${JSON.stringify(result.structuredContent)?.slice(0, 300)}; expected ${JSON.stringify(want)}`,
            );
          }
        }
      }
    }

    expect(untried).toEqual([]);
    expect(problems).toEqual([]);
    // The spec's exception: the legacy event log shows a sandbox event to the live keys.
    const sandboxEvent = await api('GET', `/v1/webhooks/events/${otherObjects['/v1/webhooks/events/:eventId']}`, {
      key: owners['/v1/webhooks/events/:eventId'].member,
    });
    expect(sandboxEvent.status).toBe(200);
    // Nothing the other environment's keys sent changed anything: the live piece still waits, undebited.
    const [piece] = await app.deps.db.query(`SELECT status FROM outbound_mail WHERE id = $1`, [livePendingMail]);
    expect(piece.status).toBe('pending_approval');
    expect(await app.deps.db.query(`SELECT 1 FROM credits_ledger WHERE reference_id = $1`, [livePendingMail])).toEqual(
      [],
    );

    expect(cases.length).toBeGreaterThan(100);
    expect(controls).toBeGreaterThan(30);
    expect(toolCases).toBeGreaterThan(40);
  });
});

async function waitForRow(app: TestApp, sql: string, params: unknown[], timeoutMs = 30000): Promise<any> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await app.deps.db.query(sql, params);
    if (row) return row;
    if (Date.now() > end) throw new Error(`no row for ${sql}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
