// Webhook deliveries: one row per (event, receiver), created by fanOut and sent by the
// receiver's dispatcher workflow (services/webhooks/dispatch.ts), whose passes run
// attemptDelivery in the worker. Synthetic one-attempt deliveries (tests, endpoint
// verifications), which a caller waits for, run in a `webhook-delivery-<id>` workflow.
// Receivers are a legacy agent webhook (settings on the agents table, X-Service-Signature),
// a custom endpoint (Standard Webhooks signatures, verification, pausing) or an A2A push
// notification config of a letter's task (services/a2a/push-notifications.ts).
import { WorkflowExecutionAlreadyStartedError, WorkflowHandle } from '@temporalio/client';
import type { Deps } from '../shared/deps';
import { sendWebhook, Resolver } from './http';
import { pushConfigIdsOfPieceSql, pushDeliveryTarget, pushedPieceOf, pushTarget } from '../a2a/push-notifications';
import { noteEndpointPaused } from '../notifications/notices';
import { decryptSecret } from '../../domain/shared/secrets';
import {
  DeliverableEvent,
  endpointEnvironmentOf,
  ENDPOINT_EVENT_TYPES,
  fitPayload,
  isSubscribed,
  LEGACY_EVENT_TYPES,
  renderEnvelope,
  renderLegacyBody,
  RULE_MATCHED_EVENT_TYPE,
} from '../../domain/webhooks/events';
import { legacySignatureHeader, standardWebhookHeaders } from '../../domain/webhooks/signatures';
import { CONSECUTIVE_FAILURES_TO_PAUSE, MAX_ATTEMPTS, retryDelayMs } from '../../domain/workflow-safe/webhook-retry';
import {
  AttemptInput,
  AttemptOutcome,
  DeliveryStatus,
  WEBHOOK_DELIVERY_WORKFLOW,
  webhookDeliveryWorkflowId,
  WebhookDeliveryInput,
  WebhookDeliveryResult,
} from '../../workflows/webhooks/contracts';
import { AgentId, MemberId, ObjectId, ObjectStatus, TestMode } from '../../workflows/shared/search-attributes';
import { sqlRows, sqlRun } from '../shared/sql';
import type { AgentRow } from '../accounts/rows';
import {
  type DeliveryRow,
  failDeliverySeries,
  insertEventDelivery,
  insertSyntheticDelivery,
  markDeliveryProcessing,
  recordDeliveryAttempt,
  stopDelivery,
} from './delivery-rows';
import { countEndpointFailure, markEndpointVerified, resetEndpointFailures } from './endpoint-rows';

export type { DeliveryRow } from './delivery-rows';

export interface AttemptRow {
  delivery_id: string;
  series: number;
  attempt_number: number;
  outcome: 'delivered' | 'failed';
  webhook_timestamp: string | null;
  status_code: number | null;
  response_time_ms: number | null;
  error: string | null;
  response_body: string | null;
  attempted_at: Date;
}

/** Starts (or finds) the workflow of a synthetic delivery (test or verification). */
export async function startDeliveryWorkflow(
  deps: Deps,
  d: Pick<DeliveryRow, 'id' | 'series' | 'max_attempts' | 'member_id' | 'agent_id' | 'environment'>,
): Promise<WorkflowHandle> {
  const workflowId = webhookDeliveryWorkflowId(d.id, d.series);
  const input: WebhookDeliveryInput = {
    deliveryId: d.id,
    series: d.series,
    maxAttempts: d.max_attempts,
    baseDelayMs: deps.config.webhookRetryBaseMs,
  };
  try {
    return await deps.temporal.workflow.start(WEBHOOK_DELIVERY_WORKFLOW, {
      taskQueue: deps.config.taskQueue,
      workflowId,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: ObjectId, value: d.id },
        { key: ObjectStatus, value: 'queued' },
        { key: MemberId, value: d.member_id },
        { key: TestMode, value: d.environment === 'test' },
        ...(d.agent_id ? [{ key: AgentId, value: d.agent_id }] : []),
      ],
    });
  } catch (err) {
    // A closed workflow with this id already ran this series: nothing to send again.
    if (err instanceof WorkflowExecutionAlreadyStartedError) return deps.temporal.workflow.getHandle(workflowId);
    throw err;
  }
}

export interface EventRow {
  id: string;
  member_id: string;
  agent_id: string | null;
  event_type: string;
  environment: 'live' | 'test';
  payload: Record<string, unknown>;
  created_at: Date;
}

interface Receivers {
  /** The agent's legacy webhook settings (legacy event types of an agent's events). */
  agent: { webhook_url: string | null; webhook_enabled: boolean; webhook_event_types: string[] } | null;
  /** The member's active endpoints in the event's environment and scope, active since before the event. */
  endpoints: Array<{ id: string; event_types: string[] }>;
  /** The push configs of the piece's A2A task (mail.* events). */
  pushes: string[];
}

/** Every receiver the event may go to, read in one statement (none when its type has none). */
async function receiversOf(deps: Deps, event: EventRow): Promise<Receivers> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const columns: string[] = [];
  if (event.agent_id && LEGACY_EVENT_TYPES.includes(event.event_type))
    columns.push(`(SELECT json_build_object('webhook_url', webhook_url, 'webhook_enabled', webhook_enabled, 'webhook_event_types', webhook_event_types)
        FROM agents WHERE id = ${param(event.agent_id)} AND member_id = ${param(event.member_id)} AND deleted_at IS NULL) AS agent`);
  if (ENDPOINT_EVENT_TYPES.includes(event.event_type))
    columns.push(`(SELECT coalesce(json_agg(json_build_object('id', id, 'event_types', event_types)), '[]'::json) FROM webhook_endpoints
        WHERE member_id = ${param(event.member_id)} AND status = 'active' AND environment = ${param(endpointEnvironmentOf(event.environment))}
          AND (agent_id IS NULL OR agent_id = ${param(event.agent_id)}::uuid) AND activated_at <= ${param(event.created_at)}) AS endpoints`);
  const pieceId = pushedPieceOf(event);
  if (pieceId) columns.push(`${pushConfigIdsOfPieceSql(param(pieceId))} AS pushes`);
  if (!columns.length) return { agent: null, endpoints: [], pushes: [] };
  const [row] = await sqlRows<Partial<Receivers>>(deps.db, `SELECT ${columns.join(', ')}`, params);
  return { agent: row.agent ?? null, endpoints: row.endpoints ?? [], pushes: row.pushes ?? [] };
}

/**
 * One delivery per subscribed receiver of the event (unique per event and receiver);
 * returns the ones still to send. Safe to run again: existing deliveries are kept.
 * Given the row of an event its caller has just inserted (so no delivery of it can exist
 * yet), it skips reading the event and, with no receiver, looking for deliveries.
 */
export async function createEventDeliveries(deps: Deps, eventIdOrNewRow: string | EventRow): Promise<DeliveryRow[]> {
  const newRow = typeof eventIdOrNewRow === 'string' ? null : eventIdOrNewRow;
  const [event]: EventRow[] = newRow
    ? [newRow]
    : await sqlRows<EventRow>(
        deps.db,
        `SELECT id, member_id, agent_id, event_type, environment, payload, created_at FROM events WHERE id = $1`,
        [eventIdOrNewRow],
      );
  if (!event) return [];
  const targets: Array<{
    target: string;
    type: DeliveryRow['target_type'];
    endpointId: string | null;
    agentId: string | null;
  }> = [];

  const receivers = await receiversOf(deps, event);
  const agent = receivers.agent;
  if (agent?.webhook_url && agent.webhook_enabled && isSubscribed(agent.webhook_event_types, event.event_type)) {
    targets.push({
      target: `agent:${event.agent_id}`,
      type: 'agent_webhook',
      endpointId: null,
      agentId: event.agent_id,
    });
  }
  // No backfill: an endpoint receives events recorded after it became active.
  for (const ep of receivers.endpoints) {
    const wanted =
      event.event_type === RULE_MATCHED_EVENT_TYPE
        ? event.payload.endpoint_id === ep.id
        : isSubscribed(ep.event_types, event.event_type);
    if (wanted)
      targets.push({ target: `endpoint:${ep.id}`, type: 'endpoint', endpointId: ep.id, agentId: event.agent_id });
  }
  for (const id of receivers.pushes)
    targets.push({ target: pushTarget(id), type: 'a2a_push', endpointId: null, agentId: event.agent_id });

  if (newRow && targets.length === 0) return [];
  for (const t of targets) {
    await insertEventDelivery(deps.db, {
      eventId: event.id,
      target: t.target,
      targetType: t.type,
      endpointId: t.endpointId,
      memberId: event.member_id,
      agentId: t.agentId,
      eventType: event.event_type,
      environment: event.environment,
      maxAttempts: MAX_ATTEMPTS,
    });
  }
  const pending = await sqlRows<DeliveryRow>(
    deps.db,
    `SELECT * FROM webhook_deliveries WHERE event_id = $1 AND kind = 'event' AND status IN ('queued','processing')`,
    [event.id],
  );
  return pending;
}

/** Inserts a one-attempt delivery of a synthetic event (test or verification) and runs it to its end. */
export async function runSyntheticDelivery(
  deps: Deps,
  insert: {
    eventId: string;
    target: string;
    targetType: 'agent_webhook' | 'endpoint';
    endpointId: string | null;
    memberId: string;
    agentId: string | null;
    eventType: string;
    environment: 'live' | 'test';
    kind: 'test' | 'verification';
    challenge?: string;
    targetUrl?: string;
  },
): Promise<{ delivery: DeliveryRow; result: WebhookDeliveryResult | null }> {
  const delivery = await insertSyntheticDelivery(deps.db, insert);
  const handle = await startDeliveryWorkflow(deps, delivery);
  // One attempt takes at most ~10 s; if no worker picks it up, answer with the queued state.
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    handle.result() as Promise<WebhookDeliveryResult>,
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), SYNTHETIC_WAIT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
  return { delivery, result };
}

const SYNTHETIC_WAIT_MS = 30_000;

interface Target {
  url: string;
  kind: 'endpoint' | 'agent_webhook';
  body: string;
  headers: (timestamp: number) => Record<string, string>;
}

type TargetOrStop = { target: Target } | { stop: string };

function eventOf(row: EventRow): DeliverableEvent {
  return {
    id: row.id,
    eventType: row.event_type,
    environment: row.environment,
    createdAt: row.created_at,
    agentId: row.agent_id,
    payload: row.payload,
  };
}

async function loadTarget(deps: Deps, d: DeliveryRow, event: EventRow): Promise<TargetOrStop> {
  const key = deps.config.appEncryptionKey;
  if (d.target_type === 'a2a_push') {
    const push = await pushDeliveryTarget(deps, d.target, event);
    // Push URLs follow the agent-webhook rules (public HTTPS on any port).
    return 'stop' in push ? push : { target: { ...push.target, kind: 'agent_webhook' } };
  }
  if (d.target_type === 'endpoint') {
    const [ep] = await sqlRows<{
      url: string;
      status: 'pending' | 'active' | 'paused';
      secret_enc: string;
      previous_secret_enc: string | null;
      previous_valid: boolean | null;
    }>(
      deps.db,
      `SELECT url, status, secret_enc, previous_secret_enc, previous_secret_expires_at > now() AS previous_valid
         FROM webhook_endpoints WHERE id = $1`,
      [d.endpoint_id],
    );
    if (!ep) return { stop: 'endpoint_deleted: the endpoint no longer exists' };
    if (d.kind === 'verification') {
      if (ep.url !== d.target_url) return { stop: 'url_changed: the endpoint URL changed; verify again' };
    } else if (ep.status !== 'active') {
      return { stop: `endpoint_${ep.status}: the endpoint is ${ep.status}; verify it, then replay failed deliveries` };
    }
    const fitted = fitPayload(event.payload, (p) => renderEnvelope(eventOf(event), p));
    if (!fitted) return { stop: 'payload_too_large: the request body would exceed 64 KiB' };
    const secrets = [decryptSecret(key, ep.secret_enc)];
    if (ep.previous_secret_enc && ep.previous_valid) secrets.push(decryptSecret(key, ep.previous_secret_enc));
    return {
      target: {
        url: d.kind === 'verification' ? (d.target_url as string) : ep.url,
        kind: 'endpoint',
        body: fitted.body,
        headers: (ts) => standardWebhookHeaders(secrets, event.id, ts, fitted.body),
      },
    };
  }

  const [agent] = await sqlRows<
    Pick<
      AgentRow,
      | 'webhook_url'
      | 'webhook_enabled'
      | 'webhook_auth_type'
      | 'webhook_auth_token_enc'
      | 'webhook_auth_header_name'
      | 'webhook_payload_format'
      | 'webhook_signing_key_id'
      | 'webhook_signing_secret_enc'
    >
  >(
    deps.db,
    `SELECT webhook_url, webhook_enabled, webhook_auth_type, webhook_auth_token_enc, webhook_auth_header_name, webhook_payload_format,
            webhook_signing_key_id, webhook_signing_secret_enc
       FROM agents WHERE id = $1`,
    [d.agent_id],
  );
  if (!agent?.webhook_url) return { stop: 'webhook_not_configured: the agent has no webhook URL' };
  if (!agent.webhook_enabled && d.kind === 'event') return { stop: 'webhook_disabled: the agent webhook is disabled' };
  if (!agent.webhook_signing_key_id || !agent.webhook_signing_secret_enc) {
    return { stop: 'signing_key_missing: set the webhook with PUT /v1/webhooks/settings to get a signing key' };
  }
  const signingKey = {
    keyId: agent.webhook_signing_key_id as string,
    secret: decryptSecret(key, agent.webhook_signing_secret_enc),
  };
  const token = agent.webhook_auth_token_enc ? decryptSecret(key, agent.webhook_auth_token_enc) : null;
  const fitted = fitPayload(event.payload, (p) =>
    renderLegacyBody(eventOf(event), p, agent.webhook_payload_format, d.agent_id as string),
  );
  if (!fitted) return { stop: 'payload_too_large: the request body would exceed 64 KiB' };
  return {
    target: {
      url: agent.webhook_url,
      kind: 'agent_webhook',
      body: fitted.body,
      headers: (ts) => ({
        // Signed in every auth mode, so receivers can always verify the body.
        'x-service-signature': legacySignatureHeader(signingKey, ts, fitted.body),
        'x-service-event-id': event.id,
        'x-service-event-type': event.event_type,
        ...(agent.webhook_auth_type === 'bearer' && token ? { authorization: `Bearer ${token}` } : {}),
        ...(agent.webhook_auth_type === 'header' && token && agent.webhook_auth_header_name
          ? { [agent.webhook_auth_header_name]: token }
          : {}),
      }),
    },
  };
}

function challengeAnswered(body: string, challenge: string | null): boolean {
  try {
    const parsed = JSON.parse(body) as { challenge?: unknown };
    return typeof parsed?.challenge === 'string' && parsed.challenge === challenge;
  } catch {
    return false;
  }
}

function outcomeOf(row: AttemptRow, status: DeliveryStatus): AttemptOutcome {
  return { outcome: row.outcome, statusCode: row.status_code, error: row.error, status };
}

/**
 * One attempt of a delivery (the workflow's activity). Idempotent per (delivery, series,
 * attempt): a repeated call returns the recorded result instead of sending again.
 */
export async function attemptDelivery(deps: Deps, input: AttemptInput, resolve?: Resolver): Promise<AttemptOutcome> {
  const [d] = await sqlRows<DeliveryRow>(deps.db, `SELECT * FROM webhook_deliveries WHERE id = $1`, [input.deliveryId]);
  if (!d) return { outcome: 'stopped', statusCode: null, error: 'delivery_deleted', status: 'failed' };
  if (d.status === 'delivered')
    return { outcome: 'delivered', statusCode: d.last_status_code, error: null, status: 'delivered' };
  if (d.series !== input.series)
    return {
      outcome: 'stopped',
      statusCode: null,
      error: 'superseded: a replay started a newer attempt series',
      status: 'failed',
    };
  const [done] = await sqlRows<AttemptRow>(
    deps.db,
    `SELECT * FROM webhook_delivery_attempts WHERE delivery_id = $1 AND series = $2 AND attempt_number = $3`,
    [d.id, input.series, input.attemptNumber],
  );
  if (done) return outcomeOf(done, d.status);

  const [event] = await sqlRows<EventRow>(
    deps.db,
    `SELECT id, member_id, agent_id, event_type, environment, payload, created_at FROM events WHERE id = $1`,
    [d.event_id],
  );
  const loaded = await loadTarget(deps, d, event);
  if ('stop' in loaded) {
    await stopDelivery(deps.db, d.id, loaded.stop, input.series);
    return { outcome: 'stopped', statusCode: null, error: loaded.stop, status: 'failed' };
  }
  const { target } = loaded;
  await markDeliveryProcessing(deps.db, d.id);

  const timestamp = Math.floor(Date.now() / 1000);
  const sent = await sendWebhook({
    url: target.url,
    headers: target.headers(timestamp),
    body: target.body,
    kind: target.kind,
    allowInsecureLocal: deps.config.webhooksAllowInsecureLocal,
    resolve,
  });
  let ok = sent.ok;
  let error = sent.error;
  if (ok && d.kind === 'verification' && !challengeAnswered(sent.body, d.challenge)) {
    ok = false;
    error = 'challenge_mismatch: answer with JSON {"challenge": "<data.challenge>"}';
  }

  return deps.db.transaction(async (tx) => {
    const inserted = await sqlRows<AttemptRow>(
      tx,
      `INSERT INTO webhook_delivery_attempts (delivery_id, series, attempt_number, outcome, webhook_timestamp, status_code, response_time_ms, error, response_body)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (delivery_id, series, attempt_number) DO NOTHING RETURNING *`,
      [
        d.id,
        input.series,
        input.attemptNumber,
        ok ? 'delivered' : 'failed',
        timestamp,
        sent.statusCode,
        sent.responseTimeMs,
        error,
        sent.body,
      ],
    );
    if (!inserted.length) {
      // A concurrent run of this same attempt recorded it first.
      const [row] = await sqlRows<AttemptRow>(
        tx,
        `SELECT * FROM webhook_delivery_attempts WHERE delivery_id = $1 AND series = $2 AND attempt_number = $3`,
        [d.id, input.series, input.attemptNumber],
      );
      const [current] = await sqlRows<Pick<DeliveryRow, 'status'>>(
        tx,
        `SELECT status FROM webhook_deliveries WHERE id = $1`,
        [d.id],
      );
      return outcomeOf(row, current.status);
    }

    let endpointPaused = false;
    if (d.target_type === 'endpoint') {
      if (ok && d.kind === 'verification') {
        await markEndpointVerified(tx, d.endpoint_id, d.target_url);
      } else if (ok) {
        await resetEndpointFailures(tx, d.endpoint_id);
      } else if (d.kind === 'event') {
        const ep = await countEndpointFailure(tx, d.endpoint_id, CONSECUTIVE_FAILURES_TO_PAUSE);
        endpointPaused = ep?.status === 'paused';
        // This failure is the one that paused it (later ones count on while it stays paused).
        if (
          endpointPaused &&
          ep.paused_reason === 'consecutive_failures' &&
          ep.consecutive_failures === CONSECUTIVE_FAILURES_TO_PAUSE
        )
          await noteEndpointPaused(tx, {
            endpointId: d.endpoint_id!,
            memberId: d.member_id,
            attemptKey: `${d.id}-${input.series}-${input.attemptNumber}`,
            failures: CONSECUTIVE_FAILURES_TO_PAUSE,
            lastError: error,
          });
      }
    }

    const status: DeliveryStatus = ok ? 'delivered' : input.final || endpointPaused ? 'failed' : 'queued';
    // A queued delivery is due again after the backoff (its dispatcher sleeps until then).
    const retryInMs =
      status === 'queued' ? retryDelayMs(input.attemptNumber + 1, deps.config.webhookRetryBaseMs, Math.random()) : 0;
    await recordDeliveryAttempt(
      tx,
      d.id,
      status,
      sent.statusCode,
      ok
        ? null
        : endpointPaused
          ? `${error}; endpoint paused after ${CONSECUTIVE_FAILURES_TO_PAUSE} consecutive failed attempts`
          : error,
      input.attemptNumber,
      retryInMs,
    );
    return outcomeOf(inserted[0], status);
  });
}

/**
 * Marks the current series failed when its attempt activity itself kept failing (for
 * example a secret that no longer decrypts), so no delivery is left `processing`.
 */
export async function failDelivery(
  deps: Deps,
  input: { deliveryId: string; series: number; error: string },
): Promise<void> {
  await failDeliverySeries(deps.db, input.deliveryId, input.series, `internal_error: ${input.error}`.slice(0, 1000));
}

// Views shared by the legacy event log and the endpoint delivery log.

export function attemptView(a: AttemptRow) {
  return {
    attempt_number: a.attempt_number,
    series: a.series,
    outcome: a.outcome,
    status_code: a.status_code,
    response_time_ms: a.response_time_ms,
    error: a.error,
    response_body: a.response_body,
    webhook_timestamp: a.webhook_timestamp === null ? null : Number(a.webhook_timestamp),
    attempted_at: a.attempted_at.toISOString(),
  };
}

export function deliveryView(d: DeliveryRow) {
  return {
    id: d.id,
    object: 'webhook_delivery' as const,
    event_id: d.event_id,
    event_type: d.event_type,
    target_type: d.target_type,
    endpoint_id: d.endpoint_id,
    agent_id: d.agent_id,
    kind: d.kind,
    status: d.status,
    environment: d.environment,
    attempts_count: d.attempts_count,
    replays: d.series,
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    created_at: d.created_at.toISOString(),
    delivered_at: d.delivered_at ? d.delivered_at.toISOString() : null,
  };
}

export async function loadAttempts(deps: Deps, deliveryId: string): Promise<AttemptRow[]> {
  return sqlRows<AttemptRow>(
    deps.db,
    `SELECT * FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY series, attempt_number`,
    [deliveryId],
  );
}
