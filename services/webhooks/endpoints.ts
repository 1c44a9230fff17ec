// Custom webhook endpoints: up to 3 per environment per member, scoped to the account or
// one agent, with subscriptions, up to 10 literal rules, a `whsec_` signing secret (shown
// once, stored encrypted), ownership verification by challenge, secret rotation with a
// 24-hour window in which both signatures are sent, and their own delivery log.
// An endpoint's environment is its key's: test keys create and manage sandbox endpoints,
// live keys live ones (the other environment's endpoints are 404, as everywhere).
import { randomBytes, randomUUID } from 'node:crypto';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import { canSee } from '../shared/scoping';
import { assertLinkedObjects } from '../shared/linked-objects';
import { loadDelivery, recordSyntheticEvent, sendAgentTestWebhook, testResult } from './agent-webhooks';
import { assertWebhookTarget } from './targets';
import { DeliveryRow, deliveryView, loadAttempts, runSyntheticDelivery } from './deliveries';
import type { Resolver } from './http';
import { errors } from '../../domain/shared/errors';
import { encryptSecret } from '../../domain/shared/secrets';
import { endpointSecretPrefix, generateEndpointSecret } from '../../domain/webhooks/signatures';
import { EndpointEnvironment, TEST_EVENT_TYPE, VERIFICATION_EVENT_TYPE } from '../../domain/webhooks/events';
import { RULE_LIMITS, RuleMatch, RuleSource } from '../../domain/webhooks/rules';
import { pingPayload, samplePayload } from '../../domain/webhooks/samples';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';
import {
  deleteEndpoint,
  type EndpointRow,
  insertEndpoint,
  rotateEndpointSecret,
  updateEndpoint,
} from './endpoint-rows';

export const ENDPOINTS_PER_ENVIRONMENT = 3;
export const ROTATION_WINDOW_HOURS = 24;

export interface RuleInput {
  name: string;
  source: RuleSource;
  match: RuleMatch;
  terms: string[];
  exclude_terms?: string[];
}

export interface EndpointInput {
  name: string;
  url: string;
  agent_id?: string | null;
  environment?: EndpointEnvironment;
  event_types: string[];
  rules?: RuleInput[];
}

export interface EndpointPatch {
  name?: string;
  url?: string;
  event_types?: string[];
}

interface RuleRow {
  id: string;
  endpoint_id: string;
  name: string;
  source: RuleSource;
  match: RuleMatch;
  terms: string[];
  exclude_terms: string[];
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function ruleView(r: RuleRow) {
  return {
    id: r.id,
    name: r.name,
    source: r.source,
    match: r.match,
    terms: r.terms,
    exclude_terms: r.exclude_terms,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

function endpointView(e: EndpointRow, rules: RuleRow[]) {
  const rotating = e.previous_secret_expires_at && e.previous_secret_expires_at.getTime() > Date.now();
  return {
    id: e.id,
    object: 'webhook_endpoint' as const,
    name: e.name,
    url: e.url,
    scope: e.agent_id ? ('agent' as const) : ('account' as const),
    agent_id: e.agent_id,
    environment: e.environment,
    status: e.status,
    paused_reason: e.paused_reason,
    event_types: e.event_types,
    rules: rules.map(ruleView),
    consecutive_failures: e.consecutive_failures,
    secret_prefix: e.secret_prefix,
    secret_rotation: rotating ? { previous_secret_expires_at: iso(e.previous_secret_expires_at) } : null,
    verified_at: iso(e.verified_at),
    created_at: e.created_at.toISOString(),
    updated_at: e.updated_at.toISOString(),
  };
}

export type EndpointView = ReturnType<typeof endpointView>;

async function rulesOf(db: Queryable, endpointIds: string[]): Promise<Map<string, RuleRow[]>> {
  const map = new Map<string, RuleRow[]>();
  if (!endpointIds.length) return map;
  const rows = await sqlRows<RuleRow>(
    db,
    `SELECT * FROM webhook_endpoint_rules WHERE endpoint_id = ANY($1::uuid[]) ORDER BY created_at, id`,
    [endpointIds],
  );
  for (const r of rows) map.set(r.endpoint_id, [...(map.get(r.endpoint_id) ?? []), r]);
  return map;
}

async function view(db: Queryable, e: EndpointRow): Promise<EndpointView> {
  return endpointView(e, (await rulesOf(db, [e.id])).get(e.id) ?? []);
}

/** The caller's endpoint or 404 (other members, other agents, and the other environment). */
async function findEndpoint(db: Queryable, auth: AuthContext, id: string, lock = false): Promise<EndpointRow> {
  const [row] = await sqlRows<EndpointRow>(
    db,
    `SELECT * FROM webhook_endpoints WHERE id = $1 AND member_id = $2 ${lock ? 'FOR UPDATE' : ''}`,
    [id, auth.memberId],
  );
  if (
    !row ||
    !canSee(auth, { memberId: row.member_id, agentId: row.agent_id, testMode: row.environment === 'sandbox' })
  ) {
    throw errors.notFound('Webhook endpoint');
  }
  return row;
}

async function insertRule(db: Queryable, endpointId: string, r: RuleInput): Promise<RuleRow> {
  const [row] = await sqlRows<RuleRow>(
    db,
    `INSERT INTO webhook_endpoint_rules (endpoint_id, name, source, match, terms, exclude_terms)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [endpointId, r.name, r.source, r.match, r.terms, r.exclude_terms ?? []],
  );
  return row;
}

export async function listWebhookEndpoints(
  deps: Deps,
  auth: AuthContext,
  q: { environment?: EndpointEnvironment; agent_id?: string },
) {
  const where = ['member_id = $1'];
  const args: unknown[] = [auth.memberId];
  if (isAgentKey(auth)) {
    args.push(auth.agentId);
    where.push(`agent_id = $${args.length}`);
  } else if (q.agent_id) {
    args.push(q.agent_id);
    where.push(`agent_id = $${args.length}`);
  }
  const environment = auth.testMode ? 'sandbox' : q.environment;
  if (environment) {
    args.push(environment);
    where.push(`environment = $${args.length}`);
  }
  const rows = await sqlRows<EndpointRow>(
    deps.db,
    `SELECT * FROM webhook_endpoints WHERE ${where.join(' AND ')} ORDER BY created_at, id`,
    args,
  );
  const rules = await rulesOf(
    deps.db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => endpointView(r, rules.get(r.id) ?? []));
}

export async function getWebhookEndpoint(deps: Deps, auth: AuthContext, id: string): Promise<EndpointView> {
  return view(deps.db, await findEndpoint(deps.db, auth, id));
}

/** Creates a pending endpoint and returns its signing secret once. */
export async function createWebhookEndpoint(deps: Deps, auth: AuthContext, input: EndpointInput, resolve?: Resolver) {
  const environment: EndpointEnvironment = auth.testMode ? 'sandbox' : 'live';
  if (input.environment !== undefined && input.environment !== environment) {
    throw auth.testMode
      ? errors.forbidden(
          'live_key_required',
          'Test keys create sandbox endpoints only; use a live key for a live endpoint.',
        )
      : errors.forbidden(
          'test_key_required',
          'Live keys create live endpoints only; use a test key (sk_test_ or sk_agent_test_) for a sandbox endpoint.',
        );
  }
  let agentId: string | null = null;
  if (isAgentKey(auth)) agentId = auth.agentId;
  else if (input.agent_id) {
    await assertLinkedObjects(deps.db, auth, { agent_id: ['agent', input.agent_id] });
    agentId = input.agent_id;
  }
  await assertWebhookTarget(deps, input.url, 'endpoint', 'url', resolve);
  const secret = generateEndpointSecret();

  const endpoint = await deps.db.transaction(async (tx) => {
    // The member row lock serialises concurrent creates, so the limit cannot be raced.
    await sqlRun(tx, `SELECT id FROM members WHERE id = $1 FOR UPDATE`, [auth.memberId]);
    const [{ n }] = await sqlRows<{ n: number }>(
      tx,
      `SELECT count(*)::int AS n FROM webhook_endpoints WHERE member_id = $1 AND environment = $2`,
      [auth.memberId, environment],
    );
    if (n >= ENDPOINTS_PER_ENVIRONMENT) {
      throw errors.unprocessable(
        'WEBHOOK_ENDPOINT_LIMIT',
        `At most ${ENDPOINTS_PER_ENVIRONMENT} ${environment} endpoints per account.`,
        {
          suggestedAction:
            'Delete an endpoint you no longer use, or subscribe an existing endpoint to more event types.',
        },
      );
    }
    const row = await insertEndpoint(tx, {
      memberId: auth.memberId,
      agentId,
      name: input.name,
      url: input.url,
      environment,
      eventTypes: input.event_types,
      secretEnc: encryptSecret(deps.config.appEncryptionKey, secret),
      secretPrefix: endpointSecretPrefix(secret),
    });
    for (const r of input.rules ?? []) await insertRule(tx, row.id, r);
    return view(tx, row);
  });
  return { endpoint, secret };
}

/** A changed URL needs verification again: an active endpoint becomes paused. */
export async function updateWebhookEndpoint(
  deps: Deps,
  auth: AuthContext,
  id: string,
  patch: EndpointPatch,
  resolve?: Resolver,
): Promise<EndpointView> {
  await findEndpoint(deps.db, auth, id);
  if (patch.url !== undefined) await assertWebhookTarget(deps, patch.url, 'endpoint', 'url', resolve);
  return deps.db.transaction(async (tx) => {
    const current = await findEndpoint(tx, auth, id, true);
    const urlChanged = patch.url !== undefined && patch.url !== current.url;
    const row = await updateEndpoint(
      tx,
      id,
      patch.name ?? current.name,
      patch.url ?? current.url,
      patch.event_types ?? current.event_types,
      urlChanged,
    );
    return view(tx, row);
  });
}

/** Deletes the endpoint with its rules and delivery history; in-flight deliveries stop. */
export async function deleteWebhookEndpoint(deps: Deps, auth: AuthContext, id: string) {
  await findEndpoint(deps.db, auth, id);
  await deleteEndpoint(deps.db, id);
  return { id, deleted: true };
}

/** A new secret, shown once; the old one keeps signing (as a second signature) for 24 hours. */
export async function rotateWebhookEndpointSecret(deps: Deps, auth: AuthContext, id: string) {
  const secret = generateEndpointSecret();
  return deps.db.transaction(async (tx) => {
    await findEndpoint(tx, auth, id, true);
    const row = await rotateEndpointSecret(
      tx,
      id,
      encryptSecret(deps.config.appEncryptionKey, secret),
      endpointSecretPrefix(secret),
      ROTATION_WINDOW_HOURS,
    );
    return { endpoint: await view(tx, row), secret };
  });
}

function environmentOfEndpoint(e: EndpointRow): 'live' | 'test' {
  return e.environment === 'sandbox' ? 'test' : 'live';
}

/**
 * Sends webhook.endpoint_verification with a new random challenge to the endpoint's URL
 * (one attempt). An answer of JSON {challenge} makes the endpoint active.
 */
export async function verifyWebhookEndpoint(deps: Deps, auth: AuthContext, id: string) {
  const ep = await findEndpoint(deps.db, auth, id);
  const challenge = randomBytes(24).toString('base64url');
  const eventId = await recordSyntheticEvent(deps, {
    memberId: ep.member_id,
    agentId: ep.agent_id,
    eventType: VERIFICATION_EVENT_TYPE,
    testMode: ep.environment === 'sandbox',
    objectType: 'webhook_endpoint',
    objectId: ep.id,
    payload: { endpoint_id: ep.id, challenge },
  });
  const { delivery } = await runSyntheticDelivery(deps, {
    eventId,
    target: `endpoint:${ep.id}`,
    targetType: 'endpoint',
    endpointId: ep.id,
    memberId: ep.member_id,
    agentId: ep.agent_id,
    eventType: VERIFICATION_EVENT_TYPE,
    environment: environmentOfEndpoint(ep),
    kind: 'verification',
    challenge,
    targetUrl: ep.url,
  });
  const result = testResult(await loadDelivery(deps, delivery.id), await loadAttempts(deps, delivery.id));
  return { verified: result.delivered, ...result, endpoint: await getWebhookEndpoint(deps, auth, id) };
}

async function sendEndpointTest(deps: Deps, ep: EndpointRow, eventType: string, payload: Record<string, unknown>) {
  const eventId = await recordSyntheticEvent(deps, {
    memberId: ep.member_id,
    agentId: ep.agent_id,
    eventType,
    testMode: ep.environment === 'sandbox',
    objectType: 'webhook_test',
    objectId: ep.id,
    payload,
  });
  const { delivery } = await runSyntheticDelivery(deps, {
    eventId,
    target: `endpoint:${ep.id}`,
    targetType: 'endpoint',
    endpointId: ep.id,
    memberId: ep.member_id,
    agentId: ep.agent_id,
    eventType,
    environment: environmentOfEndpoint(ep),
    kind: 'test',
  });
  return testResult(await loadDelivery(deps, delivery.id), await loadAttempts(deps, delivery.id));
}

function sampleContext(deps: Deps, ep: EndpointRow) {
  return {
    objectId: randomUUID(),
    agentId: ep.agent_id,
    testMode: ep.environment === 'sandbox',
    now: new Date(),
    baseUrl: deps.config.baseUrl,
    endpointId: ep.id,
  };
}

/**
 * A signed webhook.test ping to an active endpoint. On an endpoint that is not active
 * (pending or paused) it runs the verification instead, so one call gets it working.
 */
export async function testWebhookEndpoint(deps: Deps, auth: AuthContext, id: string) {
  const ep = await findEndpoint(deps.db, auth, id);
  if (ep.status !== 'active') return { verification: true, ...(await verifyWebhookEndpoint(deps, auth, id)) };
  return {
    verification: false,
    ...(await sendEndpointTest(deps, ep, TEST_EVENT_TYPE, pingPayload(sampleContext(deps, ep)))),
  };
}

/** A signed sample of a real event type (data.sample = true) to an active endpoint. */
export async function testWebhookEndpointWithSample(deps: Deps, auth: AuthContext, id: string, eventType: string) {
  const ep = await findEndpoint(deps.db, auth, id);
  if (ep.status !== 'active') {
    throw errors.conflict('WEBHOOK_ENDPOINT_NOT_ACTIVE', `The endpoint is ${ep.status}; verify it first.`, {
      suggestedAction: `POST /v1/webhook-endpoints/${ep.id}/verify`,
    });
  }
  const [rule] = (await rulesOf(deps.db, [ep.id])).get(ep.id) ?? [];
  const payload = samplePayload(eventType, {
    ...sampleContext(deps, ep),
    rule: rule ? { id: rule.id, name: rule.name } : undefined,
  });
  return sendEndpointTest(deps, ep, eventType, payload);
}

export async function listEndpointDeliveries(
  deps: Deps,
  auth: AuthContext,
  id: string,
  q: {
    status?: DeliveryRow['status'];
    event_type?: string;
    limit: number;
    offset: number;
  },
) {
  await findEndpoint(deps.db, auth, id);
  const where = ['endpoint_id = $1'];
  const args: unknown[] = [id];
  if (q.status) {
    args.push(q.status);
    where.push(`status = $${args.length}`);
  }
  if (q.event_type) {
    args.push(q.event_type);
    where.push(`event_type = $${args.length}`);
  }
  const [{ total }] = await sqlRows<{ total: number }>(
    deps.db,
    `SELECT count(*)::int AS total FROM webhook_deliveries WHERE ${where.join(' AND ')}`,
    args,
  );
  const rows = await sqlRows<DeliveryRow>(
    deps.db,
    `SELECT * FROM webhook_deliveries WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id LIMIT ${q.limit} OFFSET ${q.offset}`,
    args,
  );
  return { deliveries: rows.map(deliveryView), total: total as number };
}

// Rules

export async function listRules(deps: Deps, auth: AuthContext, endpointId: string) {
  await findEndpoint(deps.db, auth, endpointId);
  return ((await rulesOf(deps.db, [endpointId])).get(endpointId) ?? []).map(ruleView);
}

export async function createRule(deps: Deps, auth: AuthContext, endpointId: string, input: RuleInput) {
  return deps.db.transaction(async (tx) => {
    await findEndpoint(tx, auth, endpointId, true);
    const [{ n }] = await sqlRows<{ n: number }>(
      tx,
      `SELECT count(*)::int AS n FROM webhook_endpoint_rules WHERE endpoint_id = $1`,
      [endpointId],
    );
    if (n >= RULE_LIMITS.rulesPerEndpoint) {
      throw errors.unprocessable('WEBHOOK_RULE_LIMIT', `At most ${RULE_LIMITS.rulesPerEndpoint} rules per endpoint.`, {
        suggestedAction: 'Delete or edit an existing rule.',
      });
    }
    return ruleView(await insertRule(tx, endpointId, input));
  });
}

export async function updateRule(
  deps: Deps,
  auth: AuthContext,
  endpointId: string,
  ruleId: string,
  patch: Partial<RuleInput>,
) {
  return deps.db.transaction(async (tx) => {
    await findEndpoint(tx, auth, endpointId, true);
    const [current] = await sqlRows<RuleRow>(
      tx,
      `SELECT * FROM webhook_endpoint_rules WHERE id = $1 AND endpoint_id = $2`,
      [ruleId, endpointId],
    );
    if (!current) throw errors.notFound('Webhook rule');
    const [row] = await sqlRows<RuleRow>(
      tx,
      `UPDATE webhook_endpoint_rules SET name = $2, source = $3, match = $4, terms = $5, exclude_terms = $6, updated_at = now()
        WHERE id = $1 RETURNING *`,
      [
        ruleId,
        patch.name ?? current.name,
        patch.source ?? current.source,
        patch.match ?? current.match,
        patch.terms ?? current.terms,
        patch.exclude_terms ?? current.exclude_terms,
      ],
    );
    return ruleView(row);
  });
}

export async function deleteRule(deps: Deps, auth: AuthContext, endpointId: string, ruleId: string) {
  await findEndpoint(deps.db, auth, endpointId);
  const [deleted] = await sqlRows<{ id: string }>(
    deps.db,
    `DELETE FROM webhook_endpoint_rules WHERE id = $1 AND endpoint_id = $2 RETURNING id`,
    [ruleId, endpointId],
  );
  if (!deleted) throw errors.notFound('Webhook rule');
  return { id: ruleId, deleted: true };
}

/**
 * POST /v1/test/webhook: without endpoint_id, one attempt to the agent webhook; with it, a
 * test of that custom endpoint (a sample when event_type names another type). endpoint_id
 * must be one of the caller's endpoints in its environment (400 otherwise).
 */
export async function sendTestWebhook(
  deps: Deps,
  auth: AuthContext,
  input: { agent_id?: string; endpoint_id?: string; event_type?: string },
) {
  if (!input.endpoint_id) return sendAgentTestWebhook(deps, auth, input);
  await assertLinkedObjects(deps.db, auth, { endpoint_id: ['webhook_endpoint', input.endpoint_id] });
  if (input.event_type && input.event_type !== TEST_EVENT_TYPE) {
    return {
      verification: false,
      ...(await testWebhookEndpointWithSample(deps, auth, input.endpoint_id, input.event_type)),
    };
  }
  return testWebhookEndpoint(deps, auth, input.endpoint_id);
}
