// Two refusals many routes document, produced on every route that documents them: 404 for an
// id that names nothing the key may see (random UUIDs, with a body that validates, so the
// request reaches the lookup), and 409 SERVICE_MD_VERSION_MISMATCH for an agent key that
// sends a stale X-Service-MD-Version on a route that guards the instructions version
// (api/discovery/statuses.ts derives that 409 from domain/shared/access.ts). The contract
// check (test/contract/) validates each answer against the OpenAPI document.
import { newBatchId } from '../../services/batches/drafts';
import { newTemplateId } from '../../services/templates/templates';
import { randomBytes, randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../helpers/app';
import { client, HttpResponse } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { allRoutes } from '../../api/routes';
import type { RouteDef } from '../../api/route';
import { Access, accessKey, ENDPOINT_ACCESS, SCOPES } from '../../domain/shared/access';
import type { KeyKind } from '../../domain/accounts/keys';
import { createFacility, insertMemberKey } from '../../services/accounts/accounts';

/** Bodies that validate, so that a request gets past validation to the lookup or the version guard. */
const BODIES: Record<string, unknown> = {
  'PUT /v1/agents/:id/instructions': { text: 'Stale', expected_version: 1 },
  'POST /v1/agents/:id/instructions/proposals': { suggested_content: 'Stale' },
  'POST /v1/agents/:id/instructions/proposals/:proposalId/decision': { decision: 'reject' },
  'POST /v1/agents/:id/credentials': { scopes: ['mail.send'] },
  'POST /v1/rules': { name: 'Stale rule', match: { carriers: ['ups'] }, apply: { add_tags: ['x'] } },
  'PATCH /v1/rules/:id': { name: 'Changed' },
  'POST /v1/webhook-endpoints': {
    name: 'Stale endpoint',
    url: 'https://example.com/hook',
    event_types: ['mail.submitted'],
  },
  'PATCH /v1/webhook-endpoints/:id': { name: 'Changed' },
  'POST /v1/webhook-endpoints/:id/rules': { name: 'Rule', terms: ['invoice'] },
  'PATCH /v1/webhook-endpoints/:id/rules/:ruleId': { name: 'Changed' },
  'POST /v1/webhook-endpoints/:id/test': {},
  'POST /v1/webhook-endpoints/:id/test-sample': { event_type: 'mail.submitted' },
  'POST /v1/packages/:id/actions': { action: 'scan' },
  'POST /v1/packages/:id/forward': {
    to_name: 'A',
    to_line1: '1 Main St',
    to_city: 'Reno',
    to_state: 'NV',
    to_zip: '89501',
  },
  'POST /v1/packages/:id/scan': { scan_type: 'document' },
  'POST /v1/packages/:id/tags': { tag: 'stale' },
  'POST /v1/packages/:id/notes': { note: 'A note' },
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
  'POST /v1/support/messages': { category: 'other', body: 'Stale version' },
  'POST /v1/support/conversations/:id/messages': { body: 'Stale version' },
  'POST /v1/support/conversations/:id/resolve': {},
  'POST /v1/facility-messages': { subject: 'Stale', body: 'Stale version' },
  'PATCH /v1/postal-threads/:id': { title: 'Changed' },
  'PUT /v1/webhooks/settings': { webhook_url: 'https://example.com/hook' },
  'POST /v1/expected-shipments': { tracking_number: '1Z999AA10123456784' },
  'POST /v1/mail-runs': { mail_run_id: '00000000-0000-4000-8000-000000000000' },
  'POST /v1/test/mail': {
    recipient_name: 'A Person',
    recipient_line1: '1 Main St',
    recipient_city: 'Austin',
    recipient_state: 'TX',
    recipient_zip: '78701',
  },
  'POST /v1/facility/conversations/:id/messages': { body: 'An answer' },
  'PUT /v1/facility/inbound/drafts/:id': { expected_version: 1, kind: 'letter' },
  'POST /v1/facility/inbound/drafts/:id/commit': { expected_version: 1 },
  'POST /v1/facility/inbound/drafts/:id/match': {
    expected_version: 1,
    mailbox_id: '00000000-0000-4000-8000-000000000000',
  },
  'POST /v1/facility/internal-inbound/handling/:id/decision': { expected_version: 1, decision: 'reject' },
  'POST /v1/facility/package-actions/:id/status': { status: 'completed', expected_version: 1 },
  'POST /v1/facility/scan-requests/:id/reject': { reason: 'unreadable' },
  'POST /v1/facility/batches/:id/fail': { error_message: 'printer down' },
  'POST /v1/facility/batches/:id/finish': {},
  'POST /v1/facility/batches/:id/pieces': { status: 'mailed', sequences: [1] },
  'POST /v1/facility/mail/:id/printing': {},
  'POST /v1/facility/mail/:id/printed': {},
  'POST /v1/facility/mail/:id/dispatched': { tracking_number: '1Z999AA10123456784', carrier: 'ups' },
  'POST /v1/facility/mail/:id/delivered': {},
  'POST /v1/facility/mail/:id/failed': { message: 'undeliverable' },
};

/** Query strings a route needs before it looks at the object. */
const QUERIES: Record<string, string> = {
  'DELETE /v1/packages/:id/tags': 'tag=stale',
};

/** Routes whose 404 is not about an agent: the member's own (a member of these tests has no private mailbox). */
const OWN_404 = new Set(['POST /v1/expected-shipments']);

const isTest = (k: KeyKind) => k === 'member_test' || k === 'agent_test';

function allowedKind(access: Access, prefer: KeyKind[]): KeyKind | undefined {
  if (access.callers === 'public') return undefined;
  const callers = access.callers;
  return prefer.find(
    (k) =>
      callers.includes(k) &&
      (!access.testOnly || isTest(k)) &&
      !((access.liveOnly || access.sandboxUnsupported) && isTest(k)),
  );
}

const label = (route: RouteDef) => accessKey(route.method, route.path);
const BATCH_PATHS = /^\/v1\/(batch-mail|facility\/batches)\/:id/;
const TEMPLATE_PATHS = /^\/v1\/templates\/:id/;
/** A well-formed id nobody has: batches and templates have ids of their own shape, the rest are UUIDs. */
const randomId = (path: string) =>
  BATCH_PATHS.test(path) ? newBatchId() : TEMPLATE_PATHS.test(path) ? newTemplateId() : ':id';
const randomPath = (route: RouteDef) =>
  route.path
    .replace(/:leadId/g, `wl_${randomBytes(8).toString('hex')}`)
    .replace(/:id\b/, randomId(route.path))
    .replace(/:sequence\b/, String(1 + (randomBytes(2).readUInt16BE(0) % 10_000)))
    .replace(/:[A-Za-z]+/g, () => randomUUID());
/** Whether the route reads ?agent_id= (a member key names the agent it acts for). */
const takesAgentId = (route: RouteDef) =>
  Boolean((route.query as { shape?: Record<string, unknown> } | undefined)?.shape?.agent_id);
/** A route with a body this file has no valid sample of is left out (counted), not failed. */
const sendable = (route: RouteDef) => !route.multipart && (!route.body || label(route) in BODIES);
const describe_ = (res: HttpResponse) => `${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;

describe('unknown ids and stale instructions versions, on every route that documents them', () => {
  let app: TestApp;
  const keys = {} as Record<KeyKind, string>;
  let agentId: string;

  beforeAll(async () => {
    app = await startTestApp({
      worker: false,
      env: { RATE_LIMIT_PER_MINUTE: '1000000', SIGNUP_RATE_LIMIT_PER_MINUTE: '1000000' },
    });
    const member = await newMember(app.deps, { creditsCents: 1000 });
    await app.deps.db.query(`UPDATE members SET packages_enabled = true WHERE id = $1`, [member.member_id]);
    keys.member = member.key;
    keys.member_test = (
      await insertMemberKey(app.deps.db, member.member_id, { name: 'sandbox', environment: 'test' })
    ).key;
    const agent = await newAgent(app.baseUrl, member.key);
    agentId = agent.id;
    keys.agent = (await newCredential(app.baseUrl, member.key, agent.id, { scopes: [...SCOPES] })).key;
    keys.agent_test = (
      await newCredential(app.baseUrl, member.key, agent.id, { scopes: [...SCOPES], environment: 'test' })
    ).key;
    keys.facility = (await createFacility(app.deps, 'Unknown ids facility')).key;
  });
  afterAll(async () => {
    await app?.close();
  });

  const send = (route: RouteDef, key: string | undefined, headers: Record<string, string>, query = '') => {
    const body = BODIES[label(route)];
    const q = [QUERIES[label(route)], takesAgentId(route) ? query : ''].filter(Boolean).join('&');
    return client(app.baseUrl)(route.method.toUpperCase(), `${randomPath(route)}${q ? `?${q}` : ''}`, {
      key,
      headers: { 'idempotency-key': randomUUID(), ...headers },
      ...(route.multipart ? {} : route.body ? { json: body ?? {} } : {}),
    });
  };

  it('answers 404 for random ids on every route with an id that documents 404', async () => {
    const routes = allRoutes.filter((r) => r.responses[404] && /:(id|[a-z]+Id)\b/.test(r.path) && sendable(r));
    expect(routes.length).toBeGreaterThan(60);
    const problems: string[] = [];
    for (const route of routes) {
      const access = ENDPOINT_ACCESS[label(route)];
      const kind = allowedKind(access, ['member', 'facility', 'agent', 'member_test', 'agent_test']);
      const res = await send(route, kind ? keys[kind] : undefined, { 'x-service-md-version': '1' });
      if (res.status !== 404) problems.push(`${label(route)}: ${describe_(res)}`);
    }
    expect(problems).toEqual([]);
  });

  it('answers 404 for an agent_id that is not an agent of the account (or a missing mailbox), on the routes without an id that document 404', async () => {
    const routes = allRoutes.filter((r) => r.responses[404] && !/:/.test(r.path) && sendable(r));
    const problems: string[] = [];
    for (const route of routes) {
      const kind = allowedKind(ENDPOINT_ACCESS[label(route)], ['member', 'member_test']);
      if (!kind) continue;
      if (!takesAgentId(route) && !(label(route) in BODIES)) continue;
      const res = await send(route, keys[kind], {}, `agent_id=${OWN_404.has(label(route)) ? agentId : randomUUID()}`);
      if (res.status !== 404) problems.push(`${label(route)}: ${describe_(res)}`);
    }
    expect(problems).toEqual([]);
  });

  it('answers 409 SERVICE_MD_VERSION_MISMATCH to an agent key with a stale version, on every guarded route', async () => {
    const routes = allRoutes.filter((r) => ENDPOINT_ACCESS[label(r)].versionGuard && sendable(r));
    expect(routes.length).toBeGreaterThan(20);
    const problems: string[] = [];
    for (const route of routes) {
      const kind = allowedKind(ENDPOINT_ACCESS[label(route)], ['agent', 'agent_test']);
      if (!kind) continue;
      const res = await send(route, keys[kind], { 'x-service-md-version': '999' }, `agent_id=${agentId}`);
      if (res.status !== 409 || res.body?.code !== 'SERVICE_MD_VERSION_MISMATCH')
        problems.push(`${label(route)}: ${describe_(res)}`);
    }
    expect(problems).toEqual([]);
  });
});
