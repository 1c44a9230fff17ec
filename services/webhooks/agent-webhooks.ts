// Legacy agent webhooks (settings on the agent, X-Service-Signature, the event log) and
// what both webhook kinds share: synthetic test deliveries, delivery reads and replay.
// The API never calls a receiver: test deliveries run as one-attempt delivery workflows
// in the worker and the API waits for their result.
import { randomUUID } from 'node:crypto';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import type { AgentRow } from '../accounts/rows';
import { canSee, ownsAcrossEnvironments, resolveAgentFilter } from '../shared/scoping';
import { assertLinkedObjects } from '../shared/linked-objects';
import { recordEvent } from './events';
import {
  attemptView,
  DeliveryRow,
  deliveryView,
  loadAttempts,
  runSyntheticDelivery,
  startDeliveryWorkflow,
} from './deliveries';
import type { Resolver } from './http';
import { wakeDispatchers } from './dispatch';
import { assertWebhookTarget } from './targets';
import { errors } from '../../domain/shared/errors';
import { encryptSecret } from '../../domain/shared/secrets';
import { generateLegacySigningKey, legacySigningKeyValue } from '../../domain/webhooks/signatures';
import { LEGACY_EVENT_TYPES, TEST_EVENT_TYPE } from '../../domain/webhooks/events';
import { pingPayload, samplePayload } from '../../domain/webhooks/samples';
import { sqlRows, type Queryable } from '../shared/sql';
import { requeueFailedDelivery } from './delivery-rows';
import { setAgentSigningKey, updateAgentWebhookSettings } from '../accounts/agent-rows';

export { assertWebhookTarget };

// ---------------------------------------------------------------------------------
// Legacy agent webhook settings

/** Agent webhook settings and their event history are live-key only (REST and MCP alike). */
function assertLiveKey(auth: AuthContext): void {
  if (auth.testMode)
    throw errors.forbidden(
      'live_key_required',
      'Test keys cannot use webhook settings or event history; use a live key.',
    );
}

export type WebhookAuthType = 'hmac' | 'bearer' | 'header';

export interface WebhookSettingsInput {
  agent_id?: string;
  webhook_url?: string | null;
  enabled?: boolean;
  event_types?: string[];
  auth_type?: WebhookAuthType;
  auth_token?: string | null;
  auth_header_name?: string | null;
  payload_format?: 'standard' | 'wrapped';
  rotate_signing_key?: boolean;
}

interface AgentWebhookRow {
  id: string;
  webhook_url: string | null;
  webhook_enabled: boolean;
  webhook_event_types: string[];
  webhook_auth_type: WebhookAuthType;
  webhook_auth_token_enc: string | null;
  webhook_auth_header_name: string | null;
  webhook_payload_format: 'standard' | 'wrapped';
  webhook_signing_key_id: string | null;
}

function settingsView(row: AgentWebhookRow) {
  return {
    agent_id: row.id,
    webhook_url: row.webhook_url,
    enabled: row.webhook_enabled,
    event_types: row.webhook_event_types,
    auth_type: row.webhook_auth_type,
    auth_header_name: row.webhook_auth_header_name,
    auth_token_set: row.webhook_auth_token_enc !== null,
    payload_format: row.webhook_payload_format,
    signing_key_id: row.webhook_signing_key_id,
  };
}

/**
 * Gives the agent a legacy signing key when it has a webhook URL but no key yet (or when
 * `rotate` is set). Returns the one-time `webhook_signing_key` and its id, or null.
 * Callers that set webhook_url elsewhere (agent create/update) use it in their transaction.
 */
export async function issueAgentSigningKey(
  deps: Deps,
  tx: Queryable,
  agentId: string,
  rotate = false,
): Promise<{ webhook_signing_key: string; signing_key_id: string } | null> {
  const [row] = await sqlRows<Pick<AgentRow, 'webhook_url' | 'webhook_signing_key_id'>>(
    tx,
    `SELECT webhook_url, webhook_signing_key_id FROM agents WHERE id = $1 FOR UPDATE`,
    [agentId],
  );
  if (!row?.webhook_url || (row.webhook_signing_key_id && !rotate)) return null;
  const key = generateLegacySigningKey();
  await setAgentSigningKey(tx, agentId, key.keyId, encryptSecret(deps.config.appEncryptionKey, key.secret));
  return { webhook_signing_key: legacySigningKeyValue(key), signing_key_id: key.keyId };
}

export async function updateWebhookSettings(
  deps: Deps,
  auth: AuthContext,
  input: WebhookSettingsInput,
  resolve?: Resolver,
) {
  assertLiveKey(auth);
  const agentId = isAgentKey(auth) ? (auth.agentId as string) : input.agent_id;
  if (!agentId) throw errors.validation([{ path: 'agent_id', message: 'Required for member keys' }]);
  if (!isAgentKey(auth)) await assertLinkedObjects(deps.db, auth, { agent_id: ['agent', agentId] });
  if (input.webhook_url) await assertWebhookTarget(deps, input.webhook_url, 'agent_webhook', 'webhook_url', resolve);
  const key = deps.config.appEncryptionKey;

  return deps.db.transaction(async (tx) => {
    const [row] = await sqlRows<AgentWebhookRow>(tx, `SELECT * FROM agents WHERE id = $1 FOR UPDATE`, [agentId]);
    const url = input.webhook_url !== undefined ? input.webhook_url : row.webhook_url;
    const authType = input.auth_type ?? row.webhook_auth_type;
    const tokenEnc =
      input.auth_token !== undefined
        ? input.auth_token
          ? encryptSecret(key, input.auth_token)
          : null
        : row.webhook_auth_token_enc;
    const headerName =
      input.auth_header_name !== undefined
        ? (input.auth_header_name?.toLowerCase() ?? null)
        : row.webhook_auth_header_name;
    if (authType !== 'hmac' && !tokenEnc) {
      throw errors.validation([{ path: 'auth_token', message: `Required when auth_type is ${authType}` }]);
    }
    if (authType === 'header' && !headerName) {
      throw errors.validation([{ path: 'auth_header_name', message: 'Required when auth_type is header' }]);
    }
    if (input.rotate_signing_key && !url) {
      throw errors.validation([{ path: 'rotate_signing_key', message: 'The agent has no webhook URL to sign for' }]);
    }
    const [updated]: AgentWebhookRow[] = await updateAgentWebhookSettings<AgentWebhookRow>(tx, agentId, {
      url,
      enabled: input.enabled ?? row.webhook_enabled,
      eventTypes: input.event_types ?? row.webhook_event_types,
      authType,
      authTokenEnc: tokenEnc,
      authHeaderName: authType === 'header' ? headerName : null,
      payloadFormat: input.payload_format ?? row.webhook_payload_format,
    });
    const issued = await issueAgentSigningKey(deps, tx, agentId, input.rotate_signing_key ?? false);
    const view = settingsView(updated);
    return issued
      ? { ...view, signing_key_id: issued.signing_key_id, webhook_signing_key: issued.webhook_signing_key }
      : view;
  });
}

// ---------------------------------------------------------------------------------
// The legacy event log: events sent (or being sent) to agent webhooks, live and sandbox.

export type LegacyLogStatus = 'delivered' | 'pending' | 'failed';

function logStatus(status: DeliveryRow['status']): LegacyLogStatus {
  return status === 'delivered' ? 'delivered' : status === 'failed' ? 'failed' : 'pending';
}

interface LogRow extends DeliveryRow {
  event_created_at: Date;
  payload: Record<string, unknown>;
}

function logEntry(r: LogRow) {
  return {
    id: r.event_id,
    event_type: r.event_type,
    status: logStatus(r.status),
    created_at: r.event_created_at.toISOString(),
    delivered_at: r.delivered_at ? r.delivered_at.toISOString() : null,
    agent_id: r.agent_id,
    delivery_id: r.id,
    test_mode: r.environment === 'test',
  };
}

export async function listWebhookEvents(
  deps: Deps,
  auth: AuthContext,
  q: { status?: LegacyLogStatus; event_type?: string; agent_id?: string; limit: number; offset: number },
) {
  assertLiveKey(auth);
  const agentId = await resolveAgentFilter(deps, auth, q.agent_id);
  const where = [`d.member_id = $1`, `d.target_type = 'agent_webhook'`];
  const args: unknown[] = [auth.memberId];
  if (agentId) {
    args.push(agentId);
    where.push(`d.agent_id = $${args.length}`);
  }
  if (q.event_type) {
    args.push(q.event_type);
    where.push(`d.event_type = $${args.length}`);
  }
  if (q.status === 'pending') where.push(`d.status IN ('queued','processing')`);
  else if (q.status) {
    args.push(q.status);
    where.push(`d.status = $${args.length}`);
  }
  const sql = `FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE ${where.join(' AND ')}`;
  const [{ total }] = await sqlRows<{ total: number }>(deps.db, `SELECT count(*)::int AS total ${sql}`, args);
  const rows = await sqlRows<LogRow>(
    deps.db,
    `SELECT d.*, e.created_at AS event_created_at ${sql} ORDER BY e.created_at DESC, d.id LIMIT ${q.limit} OFFSET ${q.offset}`,
    args,
  );
  return { events: rows.map(logEntry), total };
}

export async function getWebhookEvent(deps: Deps, auth: AuthContext, eventId: string) {
  assertLiveKey(auth);
  const rows = await sqlRows<LogRow>(
    deps.db,
    `SELECT d.*, e.created_at AS event_created_at, e.payload
       FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.event_id = $1 AND d.member_id = $2 AND d.target_type = 'agent_webhook'`,
    [eventId, auth.memberId],
  );
  // The spec's legacy event log "includes sandbox and live": read by id like the list.
  const row = rows.find((r) => ownsAcrossEnvironments(auth, { memberId: r.member_id, agentId: r.agent_id }));
  if (!row) throw errors.notFound('Webhook event');
  const attempts = await loadAttempts(deps, row.id);
  return { ...logEntry(row), payload: row.payload, attempts: attempts.map(attemptView) };
}

// ---------------------------------------------------------------------------------
// Synthetic test deliveries

/** Records a synthetic event (webhook.test, a sample, or a verification) in the event log. */
export async function recordSyntheticEvent(
  deps: Deps,
  e: {
    memberId: string;
    agentId: string | null;
    eventType: string;
    testMode: boolean;
    objectType: 'webhook_test' | 'webhook_endpoint';
    objectId: string;
    payload: Record<string, unknown>;
  },
): Promise<string> {
  const recorded = await recordEvent(deps.db, { ...e, eventKey: `${e.objectType}:${randomUUID()}` });
  return recorded.id;
}

export function testResult(delivery: DeliveryRow, attempts: Awaited<ReturnType<typeof loadAttempts>>) {
  const last = attempts[attempts.length - 1];
  return {
    delivered: delivery.status === 'delivered',
    status_code: last?.status_code ?? null,
    response_time_ms: last?.response_time_ms ?? null,
    error: delivery.status === 'delivered' ? null : delivery.last_error,
    delivery: { ...deliveryView(delivery), attempts: attempts.map(attemptView) },
  };
}

export async function loadDelivery(deps: Deps, id: string): Promise<DeliveryRow> {
  const [row] = await sqlRows<DeliveryRow>(deps.db, `SELECT * FROM webhook_deliveries WHERE id = $1`, [id]);
  return row;
}

/** POST /v1/test/webhook to the agent's legacy webhook: one signed attempt, answered with its result. */
export async function sendAgentTestWebhook(
  deps: Deps,
  auth: AuthContext,
  input: { agent_id?: string; event_type?: string },
) {
  const agentId = isAgentKey(auth) ? (auth.agentId as string) : input.agent_id;
  if (!agentId)
    throw errors.validation([{ path: 'agent_id', message: 'Required for member keys (or pass endpoint_id)' }]);
  if (!isAgentKey(auth)) await assertLinkedObjects(deps.db, auth, { agent_id: ['agent', agentId] });
  const eventType = input.event_type ?? TEST_EVENT_TYPE;
  if (eventType !== TEST_EVENT_TYPE && !LEGACY_EVENT_TYPES.includes(eventType)) {
    throw errors.validation([
      { path: 'event_type', message: `Agent webhooks carry ${TEST_EVENT_TYPE}, mail.* and batch.* events` },
    ]);
  }
  const [agent] = await sqlRows<Pick<AgentRow, 'webhook_url'>>(
    deps.db,
    `SELECT webhook_url FROM agents WHERE id = $1`,
    [agentId],
  );
  if (!agent?.webhook_url) {
    throw errors.conflict(
      'WEBHOOK_NOT_CONFIGURED',
      'The agent has no webhook URL; set one with PUT /v1/webhooks/settings.',
      {
        suggestedAction: 'Set webhook_url with PUT /v1/webhooks/settings (live key), then test again.',
      },
    );
  }
  const ctx = {
    objectId: randomUUID(),
    agentId,
    testMode: auth.testMode,
    now: new Date(),
    baseUrl: deps.config.baseUrl,
  };
  const environment = auth.testMode ? 'test' : 'live';
  const eventId = await recordSyntheticEvent(deps, {
    memberId: auth.memberId as string,
    agentId,
    eventType,
    testMode: auth.testMode,
    objectType: 'webhook_test',
    objectId: agentId,
    payload: eventType === TEST_EVENT_TYPE ? pingPayload(ctx) : samplePayload(eventType, ctx),
  });
  const { delivery } = await runSyntheticDelivery(deps, {
    eventId,
    target: `agent:${agentId}`,
    targetType: 'agent_webhook',
    endpointId: null,
    memberId: auth.memberId as string,
    agentId,
    eventType,
    environment,
    kind: 'test',
  });
  return testResult(await loadDelivery(deps, delivery.id), await loadAttempts(deps, delivery.id));
}

// ---------------------------------------------------------------------------------
// Delivery reads and replay (both webhook kinds)

interface VisibleDelivery extends DeliveryRow {
  endpoint_agent_id: string | null;
  endpoint_status: string | null;
}

/**
 * A delivery the caller may see, or 404. A custom endpoint's delivery belongs to the
 * endpoint's environment. Agent-webhook deliveries are the legacy event log, which the
 * spec shows to live keys for both environments ("includes sandbox and live") and to
 * test keys not at all.
 */
export async function findVisibleDelivery(deps: Deps, auth: AuthContext, id: string): Promise<VisibleDelivery> {
  const [d] = await sqlRows<VisibleDelivery>(
    deps.db,
    `SELECT d.*, ep.agent_id AS endpoint_agent_id, ep.status AS endpoint_status
       FROM webhook_deliveries d LEFT JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
      WHERE d.id = $1 AND d.member_id = $2`,
    [id, auth.memberId],
  );
  if (!d) throw errors.notFound('Webhook delivery');
  if (d.target_type === 'endpoint') {
    if (!canSee(auth, { memberId: d.member_id, agentId: d.endpoint_agent_id, testMode: d.environment === 'test' }))
      throw errors.notFound('Webhook delivery');
    return d;
  }
  if (!ownsAcrossEnvironments(auth, { memberId: d.member_id, agentId: d.agent_id }))
    throw errors.notFound('Webhook delivery');
  if (auth.testMode) throw errors.forbidden('live_key_required', 'Agent webhook deliveries need a live key.');
  return d;
}

export async function getDelivery(deps: Deps, auth: AuthContext, id: string) {
  const d = await findVisibleDelivery(deps, auth, id);
  return { ...deliveryView(d), attempts: (await loadAttempts(deps, d.id)).map(attemptView) };
}

/**
 * Replays a failed delivery: a new attempt series (fresh timestamps and signatures), sent
 * by the receiver's dispatcher (a test delivery: in a new workflow
 * `webhook-delivery-<id>-replay-<n>`). Endpoint deliveries need the endpoint
 * active again (verified); verifications are never replayed (verify again instead).
 */
export async function replayDelivery(deps: Deps, auth: AuthContext, id: string) {
  const d = await findVisibleDelivery(deps, auth, id);
  if (d.kind === 'verification') {
    throw errors.conflict(
      'WEBHOOK_DELIVERY_NOT_REPLAYABLE',
      'Verifications are not replayed; start a new verification (new challenge).',
      {
        suggestedAction: 'POST /v1/webhook-endpoints/{id}/verify',
      },
    );
  }
  if (d.status !== 'failed') {
    throw errors.conflict(
      'WEBHOOK_DELIVERY_NOT_REPLAYABLE',
      `Only failed deliveries can be replayed; this one is ${d.status}.`,
      {
        suggestedAction: 'Nothing to replay: the delivery has not failed.',
      },
    );
  }
  if (d.target_type === 'endpoint' && d.endpoint_status !== 'active') {
    throw errors.conflict(
      'WEBHOOK_ENDPOINT_NOT_ACTIVE',
      `The endpoint is ${d.endpoint_status}; verify it before replaying.`,
      {
        suggestedAction: 'POST /v1/webhook-endpoints/{id}/verify, then replay.',
      },
    );
  }
  const queued = await requeueFailedDelivery(deps.db, d.id);
  if (!queued) {
    throw errors.conflict('WEBHOOK_DELIVERY_NOT_REPLAYABLE', 'The delivery is already being replayed.', {
      suggestedAction: 'Wait for the replay to finish; GET /v1/webhook-deliveries/{id} shows its attempts.',
    });
  }
  if (queued.kind === 'event') {
    await wakeDispatchers(deps, [queued]);
  } else {
    await startDeliveryWorkflow(deps, queued);
  }
  return deliveryView(queued);
}
