// The webhook event catalogue, subscription matching and the request bodies receivers
// get: the legacy agent-webhook body (standard or wrapped) and the custom-endpoint
// envelope. Pure: no I/O.

export const MAIL_EVENT_TYPES = [
  'mail.pending_approval',
  'mail.submitted',
  'mail.ready',
  'mail.mailed',
  'mail.delivered',
  'mail.failed',
  'mail.cancelled',
] as const;
export const BATCH_EVENT_TYPES = [
  'batch.submitted',
  'batch.completed',
  'batch.partially_completed',
  'batch.failed',
  'batch.cancelled',
] as const;
export const INBOUND_EVENT_TYPES = [
  'inbound.received',
  'inbound.scan_available',
  'inbound.context_ready',
  'inbound.rule_matched',
  'inbound.action_completed',
  'inbound.action_failed',
] as const;

/** Synthetic deliveries: a ping and the endpoint ownership challenge. */
export const TEST_EVENT_TYPE = 'webhook.test';
export const VERIFICATION_EVENT_TYPE = 'webhook.endpoint_verification';
export const RULE_MATCHED_EVENT_TYPE = 'inbound.rule_matched';

/** Legacy agent webhooks carry outbound mail and batch events. */
export const LEGACY_EVENT_TYPES: readonly string[] = [...MAIL_EVENT_TYPES, ...BATCH_EVENT_TYPES];
/** Custom endpoints may subscribe to every business event. */
export const ENDPOINT_EVENT_TYPES: readonly string[] = [
  ...MAIL_EVENT_TYPES,
  ...BATCH_EVENT_TYPES,
  ...INBOUND_EVENT_TYPES,
];

/** Subscription patterns: an exact type, a family (`mail.*`) or everything (`*`). */
export function subscriptionProblem(pattern: string, allowed: readonly string[]): string | null {
  if (pattern === '*') return null;
  if (pattern.endsWith('.*')) {
    const family = pattern.slice(0, -1);
    return allowed.some((t) => t.startsWith(family)) ? null : `unknown event family ${pattern}`;
  }
  return allowed.includes(pattern) ? null : `unknown event type ${pattern}`;
}

export function isSubscribed(patterns: readonly string[], eventType: string): boolean {
  return patterns.some(
    (p) => p === '*' || p === eventType || (p.endsWith('.*') && eventType.startsWith(p.slice(0, -1))),
  );
}

/** Events record `live`/`test`; endpoints are `live`/`sandbox`. */
export type EventEnvironment = 'live' | 'test';
export type EndpointEnvironment = 'live' | 'sandbox';
export function endpointEnvironmentOf(env: EventEnvironment): EndpointEnvironment {
  return env === 'test' ? 'sandbox' : 'live';
}

export interface DeliverableEvent {
  id: string;
  eventType: string;
  environment: EventEnvironment;
  createdAt: Date;
  agentId: string | null;
  payload: Record<string, unknown>;
}

export const MAX_REQUEST_BYTES = 64 * 1024;

/**
 * Payloads that would make a request body over 64 KiB keep only their identifiers and
 * short scalar fields and say `truncated: true`; the receiver fetches the full record
 * (mail payloads carry `callback_url`). Returns null when even that does not fit.
 */
export function fitPayload(
  payload: Record<string, unknown>,
  render: (p: Record<string, unknown>) => string,
): { body: string; truncated: boolean } | null {
  const full = render(payload);
  if (byteLength(full) <= MAX_REQUEST_BYTES) return { body: full, truncated: false };
  const reduced: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(payload)) {
    if (v === null || typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && v.length <= 256))
      reduced[k] = v;
  }
  reduced.truncated = true;
  const body = render(reduced);
  return byteLength(body) <= MAX_REQUEST_BYTES ? { body, truncated: true } : null;
}

function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** The custom-endpoint envelope (schema_version 1); `data` is the event's payload. */
export function renderEnvelope(event: DeliverableEvent, data: Record<string, unknown>): string {
  return JSON.stringify({
    schema_version: 1,
    event_id: event.id,
    event_type: event.eventType,
    created_at: event.createdAt.toISOString(),
    environment: event.environment,
    data,
  });
}

/**
 * The legacy agent-webhook body. `standard` is the payload itself (with `event_type`);
 * `wrapped` is the agent-gateway hook shape {message, agentId, deliver}, where message is
 * one line naming the event followed by the payload as JSON.
 */
export function renderLegacyBody(
  event: DeliverableEvent,
  payload: Record<string, unknown>,
  format: 'standard' | 'wrapped',
  agentId: string,
): string {
  const standard = { event_type: event.eventType, ...payload };
  if (format === 'standard') return JSON.stringify(standard);
  return JSON.stringify({
    message: `Postal mail event ${event.eventType} (event ${event.id}). Payload: ${JSON.stringify(standard)}`,
    agentId,
    deliver: true,
  });
}
