// Legacy agent webhooks: settings, the event log, and the synthetic test delivery.
import { z } from 'zod';
import { defineRoute, RouteDef } from '../../route';
import { pagination } from '../../schemas/common';
import {
  TestDeliveryResult,
  TestWebhookRequest,
  WebhookEventDetail,
  WebhookEventList,
  WebhookEventParams,
  WebhookEventsQuery,
  WebhookSettings,
  WebhookSettingsRequest,
  EndpointTestResult,
} from './webhooks.schemas';
import { getWebhookEvent, listWebhookEvents, updateWebhookSettings } from '../../../services/webhooks/agent-webhooks';
import { sendTestWebhook } from '../../../services/webhooks/endpoints';

export const routes: RouteDef[] = [
  defineRoute({
    method: 'put',
    path: '/v1/webhooks/settings',
    summary: 'Configure an agent webhook (URL, subscriptions, receiver auth, payload format)',
    description:
      'Fields left out keep their value. Setting webhook_url on an agent without a signing key returns a one-time ' +
      'webhook_signing_key (whsk_ + 64-character secret). Live keys only.',
    tags: ['Webhooks'],
    body: WebhookSettingsRequest,
    responses: { 200: { description: 'The agent webhook settings', schema: WebhookSettings } },
    handler: async ({ deps, auth, body }) => ({ body: await updateWebhookSettings(deps, auth, body) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/webhooks/events',
    summary: 'Agent webhook event log (live and sandbox)',
    tags: ['Webhooks'],
    query: WebhookEventsQuery,
    responses: { 200: { description: 'Events sent to agent webhooks, newest first', schema: WebhookEventList } },
    handler: async ({ deps, auth, query }) => {
      const { events, total } = await listWebhookEvents(deps, auth, query);
      return { body: { events, pagination: pagination(total, query.limit, query.offset) } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/webhooks/events/:eventId',
    summary: 'One agent webhook event: payload and delivery attempts',
    tags: ['Webhooks'],
    params: WebhookEventParams,
    responses: { 200: { description: 'The event', schema: WebhookEventDetail }, 404: { description: 'Not found' } },
    handler: async ({ deps, auth, params }) => ({ body: { event: await getWebhookEvent(deps, auth, params.eventId) } }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/test/webhook',
    summary: 'Send a synthetic signed delivery and return its result',
    description:
      'Without endpoint_id: one attempt to the agent webhook (member keys pass agent_id). With endpoint_id: a test of ' +
      'that custom endpoint (a sample when event_type is given; a verification when the endpoint is not active yet).',
    tags: ['Webhooks'],
    body: TestWebhookRequest,
    responses: {
      200: { description: 'The delivery result', schema: z.union([TestDeliveryResult, EndpointTestResult]) },
      409: { description: 'WEBHOOK_NOT_CONFIGURED: the agent has no webhook URL' },
    },
    handler: async ({ deps, auth, body }) => ({ body: await sendTestWebhook(deps, auth, body) }),
  }),
];
