// Webhook tools: the agent webhook settings (update_webhook, live keys only) and custom
// webhook endpoints with their tests, secrets and delivery log.
import { z } from 'zod';
import {
  DeliveriesQuery,
  EndpointCreateRequest,
  EndpointListQuery,
  EndpointPatchRequest,
  SampleRequest,
  WebhookSettingsRequest,
} from '../../routes/webhooks/webhooks.schemas';
import { pagination, Uuid } from '../../schemas/common';
import { parseOrThrow } from '../../router';
import {
  createWebhookEndpoint,
  listEndpointDeliveries,
  listWebhookEndpoints,
  rotateWebhookEndpointSecret,
  testWebhookEndpoint,
  testWebhookEndpointWithSample,
  updateWebhookEndpoint,
} from '../../../services/webhooks/endpoints';
import { replayDelivery, updateWebhookSettings } from '../../../services/webhooks/agent-webhooks';
import { defineTool } from '../tool';

const EndpointId = { endpoint_id: Uuid.describe('the webhook endpoint id') };

export const webhookTools = [
  defineTool({
    name: 'update_webhook',
    description:
      'Configure your agent webhook: webhook_url (public https), enabled, event_types (["*"] = all, [] = none), receiver auth (hmac, bearer, header) and payload format. Fields left out keep their value. Live keys only; setting a URL the first time returns the signing key once.',
    input: WebhookSettingsRequest,
    access: 'PUT /v1/webhooks/settings',
    mutation: true,
    handler: (deps, auth, input) => updateWebhookSettings(deps, auth, input),
  }),
  defineTool({
    name: 'list_webhook_endpoints',
    description: 'Your custom webhook endpoints with their status, subscriptions and rules.',
    input: EndpointListQuery,
    access: 'GET /v1/webhook-endpoints',
    handler: async (deps, auth, input) => ({ endpoints: await listWebhookEndpoints(deps, auth, input) }),
  }),
  defineTool({
    name: 'create_webhook_endpoint',
    description:
      'Create a custom webhook endpoint (public HTTPS on port 443; at most 3 per environment) with event subscriptions and optional literal rules. Returns the whsec_ signing secret once; the endpoint receives events after its verification (test_webhook_endpoint runs it).',
    input: EndpointCreateRequest,
    access: 'POST /v1/webhook-endpoints',
    mutation: true,
    handler: (deps, auth, input) => createWebhookEndpoint(deps, auth, input),
  }),
  defineTool({
    name: 'update_webhook_endpoint',
    description:
      'Rename an endpoint, change its URL (pauses it until verified again) or its event subscriptions. Environment and scope are fixed.',
    input: EndpointPatchRequest.extend(EndpointId),
    access: 'PATCH /v1/webhook-endpoints/:id',
    mutation: true,
    handler: async (deps, auth, { endpoint_id, ...patch }) => ({
      // Re-checked alone: "at least one field" must not count endpoint_id.
      endpoint: await updateWebhookEndpoint(deps, auth, endpoint_id, parseOrThrow(EndpointPatchRequest, patch)),
    }),
  }),
  defineTool({
    name: 'test_webhook_endpoint',
    description:
      'Send a signed webhook.test ping to an endpoint and return the delivery result; an endpoint that is not active yet gets its verification challenge instead.',
    input: z.object(EndpointId),
    access: 'POST /v1/webhook-endpoints/:id/test',
    mutation: true,
    handler: (deps, auth, input) => testWebhookEndpoint(deps, auth, input.endpoint_id),
  }),
  defineTool({
    name: 'test_webhook_endpoint_with_sample',
    description:
      'Send a signed sample of a real event type (data.sample = true) to an active endpoint and return the delivery result.',
    input: SampleRequest.extend(EndpointId),
    access: 'POST /v1/webhook-endpoints/:id/test-sample',
    mutation: true,
    handler: (deps, auth, input) => testWebhookEndpointWithSample(deps, auth, input.endpoint_id, input.event_type),
  }),
  defineTool({
    name: 'rotate_webhook_endpoint_secret',
    description:
      "Rotate an endpoint's signing secret; the new whsec_ secret is returned once. For 24 hours deliveries carry signatures with both secrets.",
    input: z.object(EndpointId),
    access: 'POST /v1/webhook-endpoints/:id/rotate-secret',
    mutation: true,
    handler: (deps, auth, input) => rotateWebhookEndpointSecret(deps, auth, input.endpoint_id),
  }),
  defineTool({
    name: 'list_webhook_deliveries',
    description: "An endpoint's delivery log, newest first (status queued, processing, delivered, failed).",
    input: DeliveriesQuery.extend(EndpointId),
    access: 'GET /v1/webhook-endpoints/:id/deliveries',
    handler: async (deps, auth, { endpoint_id, ...query }) => {
      const { deliveries, total } = await listEndpointDeliveries(deps, auth, endpoint_id, query);
      return { deliveries, pagination: pagination(total, query.limit, query.offset) };
    },
  }),
  defineTool({
    name: 'replay_webhook_delivery',
    description: 'Replay a failed delivery with a fresh timestamp and signature (the endpoint must be active).',
    input: z.object({ delivery_id: Uuid.describe('the delivery id from list_webhook_deliveries') }),
    access: 'POST /v1/webhook-deliveries/:id/replay',
    mutation: true,
    handler: async (deps, auth, input) => ({ delivery: await replayDelivery(deps, auth, input.delivery_id) }),
  }),
];
