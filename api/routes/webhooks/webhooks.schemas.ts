// Schemas of legacy agent webhooks, custom webhook endpoints, their rules and deliveries.
import { z } from 'zod';
import { Pagination, paginationQuery, singleLine, TestMode } from '../../schemas/common';
import {
  ENDPOINT_EVENT_TYPES,
  LEGACY_EVENT_TYPES,
  subscriptionProblem,
  TEST_EVENT_TYPE,
} from '../../../domain/webhooks/events';
import { RULE_LIMITS, termProblem } from '../../../domain/webhooks/rules';
import { SAMPLE_EVENT_TYPES } from '../../../domain/webhooks/samples';

const Id = z.uuid({ message: 'must be a UUID' });
const Url = z.url({ protocol: /^https?$/, message: 'must be an https URL' }).max(2048);

function eventTypeList(allowed: readonly string[]) {
  return z
    .array(z.string())
    .max(50)
    .superRefine((types, ctx) => {
      types.forEach((t, i) => {
        const problem = subscriptionProblem(t, allowed);
        if (problem) ctx.addIssue({ code: 'custom', path: [i], message: problem });
      });
    });
}

// Reserved: set by the delivery itself, or hop-by-hop.
const RESERVED_HEADERS = new Set([
  'host',
  'content-type',
  'content-length',
  'connection',
  'transfer-encoding',
  'user-agent',
  'te',
  'upgrade',
  'expect',
  'keep-alive',
  'proxy-authorization',
  'x-service-signature',
  'x-service-event-id',
  'x-service-event-type',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

export const WebhookSettingsRequest = z.strictObject({
  agent_id: Id.optional().describe('required for member keys; agent keys always configure their own agent'),
  webhook_url: Url.nullable().optional().describe('public https URL; null removes the webhook'),
  enabled: z.boolean().optional(),
  event_types: eventTypeList(LEGACY_EVENT_TYPES)
    .optional()
    .describe('mail.* and batch.* event types, a family such as "mail.*", or ["*"] for all; [] disables all'),
  auth_type: z
    .enum(['hmac', 'bearer', 'header'])
    .optional()
    .describe('default hmac; every delivery is HMAC-signed regardless'),
  auth_token: z
    .string()
    .regex(/^[\x21-\x7e]{8,512}$/, { message: 'must be 8-512 visible ASCII characters' })
    .nullable()
    .optional()
    .describe(
      'bearer: sent as Authorization: Bearer <token>; header: sent as <auth_header_name>: <token>. Stored encrypted, never returned',
    ),
  auth_header_name: z
    .string()
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/, { message: 'must be an HTTP header name (1-64 token characters)' })
    .refine((h) => !RESERVED_HEADERS.has(h.toLowerCase()), {
      message: 'is set by the delivery itself; choose another header name',
    })
    .nullable()
    .optional()
    .describe('the custom header that carries auth_token when auth_type is header'),
  payload_format: z.enum(['standard', 'wrapped']).optional().describe('wrapped = {message, agentId, deliver}'),
  rotate_signing_key: z
    .boolean()
    .optional()
    .describe('issue a new signing key (returned once); the old one stops at once'),
});

export const WebhookSettings = z.object({
  ...TestMode,
  agent_id: z.string(),
  webhook_url: z.string().nullable(),
  enabled: z.boolean(),
  event_types: z.array(z.string()),
  auth_type: z.enum(['hmac', 'bearer', 'header']),
  auth_header_name: z.string().nullable(),
  auth_token_set: z.boolean(),
  payload_format: z.enum(['standard', 'wrapped']),
  signing_key_id: z.string().nullable().describe('whsk_ key id named in X-Service-Signature'),
  webhook_signing_key: z
    .string()
    .optional()
    .describe(
      'returned once, when a key is issued: whsk_ + the 64-character HMAC secret (the secret is the part after whsk_)',
    ),
});

export const WebhookEventsQuery = z.object({
  status: z.enum(['delivered', 'pending', 'failed']).optional(),
  event_type: z.string().max(100).optional(),
  agent_id: Id.optional().describe('member keys only; agent keys always see their own agent'),
  ...paginationQuery({ limit: 20, max: 100 }),
});

export const WebhookEventParams = z.object({ eventId: Id });

/** One agent-webhook event in the log (GET /v1/webhooks/events, an agent's recent_webhooks). */
export const WebhookLogEntry = z.object({
  id: z.string().describe('event id'),
  event_type: z.string(),
  status: z.enum(['delivered', 'pending', 'failed']),
  created_at: z.string(),
  delivered_at: z.string().nullable(),
  agent_id: z.string().nullable(),
  delivery_id: z.string(),
  test_mode: z.boolean(),
});

export const Attempt = z.object({
  attempt_number: z.number().int(),
  series: z.number().int().describe('0 for the first series, n for the n-th replay'),
  outcome: z.enum(['delivered', 'failed']),
  status_code: z.number().int().nullable(),
  response_time_ms: z.number().int().nullable(),
  error: z.string().nullable(),
  response_body: z.string().nullable().describe('first 4 KiB of the response'),
  webhook_timestamp: z.number().int().nullable(),
  attempted_at: z.string(),
});

export const WebhookEventList = z.object({ ...TestMode, events: z.array(WebhookLogEntry), pagination: Pagination });
export const WebhookEventDetail = z.object({
  ...TestMode,
  event: WebhookLogEntry.extend({ payload: z.record(z.string(), z.unknown()), attempts: z.array(Attempt) }),
});

export const Delivery = z.object({
  id: z.string(),
  object: z.literal('webhook_delivery'),
  event_id: z.string(),
  event_type: z.string(),
  target_type: z.enum(['agent_webhook', 'endpoint']),
  endpoint_id: z.string().nullable(),
  agent_id: z.string().nullable(),
  kind: z.enum(['event', 'test', 'verification']),
  status: z.enum(['queued', 'processing', 'delivered', 'failed']),
  environment: z.enum(['live', 'test']),
  attempts_count: z.number().int(),
  replays: z.number().int(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  created_at: z.string(),
  delivered_at: z.string().nullable(),
});
export const DeliveryDetail = Delivery.extend({ attempts: z.array(Attempt) });

export const TestDeliveryResult = z.object({
  ...TestMode,
  delivered: z.boolean(),
  status_code: z.number().int().nullable(),
  response_time_ms: z.number().int().nullable(),
  error: z.string().nullable(),
  delivery: DeliveryDetail,
});

export const TestWebhookRequest = z.strictObject({
  agent_id: Id.optional().describe('member keys: the agent whose webhook to test'),
  endpoint_id: Id.optional().describe('test this custom endpoint instead of the agent webhook'),
  event_type: z
    .string()
    .max(100)
    .optional()
    .describe(`default ${TEST_EVENT_TYPE}; another type sends a sample payload of that type`),
});

// Custom endpoints

const Term = z.string().superRefine((t, ctx) => {
  const problem = termProblem(t);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
const RuleName = singleLine(z.string().trim().min(1).max(RULE_LIMITS.nameLength));
const RuleSource = z.enum(['envelope', 'letter', 'any']);
const RuleMatch = z.enum(['any', 'all']);

export const RuleRequest = z.strictObject({
  name: RuleName,
  source: RuleSource.default('any').describe(
    'envelope and letter select typed member-sample pages; physical scans need any',
  ),
  match: RuleMatch.default('any'),
  terms: z.array(Term).min(1).max(RULE_LIMITS.termsPerRule),
  exclude_terms: z.array(Term).max(RULE_LIMITS.termsPerRule).default([]),
});

export const RulePatchRequest = z
  .strictObject({
    name: RuleName.optional(),
    source: RuleSource.optional(),
    match: RuleMatch.optional(),
    terms: z.array(Term).min(1).max(RULE_LIMITS.termsPerRule).optional(),
    exclude_terms: z.array(Term).max(RULE_LIMITS.termsPerRule).optional(),
  })
  .refine((p) => Object.keys(p).length > 0, { message: 'send at least one field' });

export const Rule = z.object({
  id: z.string(),
  name: z.string(),
  source: RuleSource,
  match: RuleMatch,
  terms: z.array(z.string()),
  exclude_terms: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
});

const EndpointName = singleLine(z.string().trim().min(1).max(100));
const EVENT_TYPES_REQUIRED = {
  message: 'subscribe to at least one event type, a family such as "mail.*", or "*" for all',
};

export const EndpointCreateRequest = z.strictObject({
  name: EndpointName,
  url: Url.describe('public HTTPS on port 443'),
  agent_id: Id.nullable()
    .optional()
    .describe(
      'member keys: scope the endpoint to one agent; omit or null for account-wide. Agent keys always scope to their agent',
    ),
  environment: z
    .enum(['live', 'sandbox'])
    .optional()
    .describe(
      "fixed at creation: the key's environment (live keys create live endpoints, test keys sandbox ones; the other value is 403)",
    ),
  event_types: eventTypeList(ENDPOINT_EVENT_TYPES).pipe(z.array(z.string()).min(1, EVENT_TYPES_REQUIRED)),
  rules: z.array(RuleRequest).max(RULE_LIMITS.rulesPerEndpoint).optional(),
});

export const EndpointPatchRequest = z
  .strictObject({
    name: EndpointName.optional(),
    url: Url.optional().describe('a new URL pauses an active endpoint until it is verified again'),
    event_types: eventTypeList(ENDPOINT_EVENT_TYPES).pipe(z.array(z.string()).min(1, EVENT_TYPES_REQUIRED)).optional(),
    environment: z.never({ message: 'environment is fixed at creation' }).optional(),
    agent_id: z.never({ message: 'scope is fixed at creation' }).optional(),
  })
  .refine((p) => Object.keys(p).length > 0, { message: 'send at least one of name, url, event_types' });

export const Endpoint = z.object({
  id: z.string(),
  object: z.literal('webhook_endpoint'),
  name: z.string(),
  url: z.string(),
  scope: z.enum(['account', 'agent']),
  agent_id: z.string().nullable(),
  environment: z.enum(['live', 'sandbox']),
  status: z.enum(['pending', 'active', 'paused']),
  paused_reason: z.enum(['url_changed', 'consecutive_failures']).nullable(),
  event_types: z.array(z.string()),
  rules: z.array(Rule),
  consecutive_failures: z.number().int(),
  secret_prefix: z.string().describe('whsec_ and the first characters of the current secret'),
  secret_rotation: z
    .object({ previous_secret_expires_at: z.string() })
    .nullable()
    .describe('while set, deliveries carry a signature with the previous secret too'),
  verified_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const EndpointWithSecret = z.object({
  ...TestMode,
  endpoint: Endpoint,
  secret: z.string().describe('whsec_ + base64 of 32 random bytes; shown only in this response'),
});

export const EndpointListQuery = z.object({
  environment: z.enum(['live', 'sandbox']).optional(),
  agent_id: Id.optional(),
});

export const EndpointParams = z.object({ id: Id });
export const RuleParams = z.object({ id: Id, ruleId: Id });

export const VerificationResult = TestDeliveryResult.extend({ verified: z.boolean(), endpoint: Endpoint });
export const EndpointTestResult = TestDeliveryResult.extend({
  verification: z.boolean().describe('true when the endpoint was not active and the call ran its verification instead'),
  verified: z.boolean().optional(),
  endpoint: Endpoint.optional(),
});

export const SampleRequest = z.strictObject({
  event_type: z.enum(SAMPLE_EVENT_TYPES as [string, ...string[]]),
});

export const DeliveriesQuery = z.object({
  status: z.enum(['queued', 'processing', 'delivered', 'failed']).optional(),
  event_type: z.string().max(100).optional(),
  ...paginationQuery({ limit: 20, max: 100 }),
});
export const DeliveryList = z.object({ ...TestMode, deliveries: z.array(Delivery), pagination: Pagination });

/** The answer of deleting an endpoint or one of its rules. */
export const EndpointDeleted = z.object({ ...TestMode, id: z.string(), deleted: z.literal(true) });
