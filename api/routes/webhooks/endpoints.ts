// Custom webhook endpoints: CRUD, verification, tests, secret rotation, rules, and the
// endpoint delivery log with replay.
import { defineRoute, RouteDef } from '../../route';
import { pagination, TestMode } from '../../schemas/common';
import {
  DeliveriesQuery,
  DeliveryDetail,
  DeliveryList,
  Delivery,
  Endpoint,
  EndpointCreateRequest,
  EndpointDeleted,
  EndpointListQuery,
  EndpointParams,
  EndpointPatchRequest,
  EndpointTestResult,
  EndpointWithSecret,
  Rule,
  RulePatchRequest,
  RuleParams,
  RuleRequest,
  SampleRequest,
  TestDeliveryResult,
  VerificationResult,
} from './webhooks.schemas';
import { z } from 'zod';
import {
  createRule,
  createWebhookEndpoint,
  deleteRule,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listEndpointDeliveries,
  listRules,
  listWebhookEndpoints,
  rotateWebhookEndpointSecret,
  testWebhookEndpoint,
  testWebhookEndpointWithSample,
  updateRule,
  updateWebhookEndpoint,
  verifyWebhookEndpoint,
} from '../../../services/webhooks/endpoints';
import { getDelivery, replayDelivery } from '../../../services/webhooks/agent-webhooks';

const TAGS = ['Webhook endpoints'];
const notFound = { 404: { description: 'Not found' } };

export const routes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/v1/webhook-endpoints',
    summary: 'List custom webhook endpoints',
    tags: TAGS,
    query: EndpointListQuery,
    responses: { 200: { description: 'Endpoints', schema: z.object({ ...TestMode, endpoints: z.array(Endpoint) }) } },
    handler: async ({ deps, auth, query }) => ({ body: { endpoints: await listWebhookEndpoints(deps, auth, query) } }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhook-endpoints',
    summary: 'Create a custom webhook endpoint (pending until verified)',
    tags: TAGS,
    description:
      'Returns the whsec_ signing secret once. The endpoint receives nothing until POST /verify succeeds. ' +
      'At most 3 endpoints per environment (422 WEBHOOK_ENDPOINT_LIMIT).',
    body: EndpointCreateRequest,
    responses: {
      201: { description: 'Created', schema: EndpointWithSecret },
      422: { description: 'Endpoint limit reached' },
    },
    handler: async ({ deps, auth, body }) => ({ status: 201, body: await createWebhookEndpoint(deps, auth, body) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/webhook-endpoints/:id',
    summary: 'One custom webhook endpoint',
    tags: TAGS,
    params: EndpointParams,
    responses: { 200: { description: 'Endpoint', schema: z.object({ ...TestMode, endpoint: Endpoint }) }, ...notFound },
    handler: async ({ deps, auth, params }) => ({
      body: { endpoint: await getWebhookEndpoint(deps, auth, params.id) },
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/webhook-endpoints/:id',
    summary: 'Rename, change URL or subscriptions',
    tags: TAGS,
    description:
      'Environment and scope are fixed at creation. A new URL pauses an active endpoint until it is verified again.',
    params: EndpointParams,
    body: EndpointPatchRequest,
    responses: { 200: { description: 'Endpoint', schema: z.object({ ...TestMode, endpoint: Endpoint }) }, ...notFound },
    handler: async ({ deps, auth, params, body }) => ({
      body: { endpoint: await updateWebhookEndpoint(deps, auth, params.id, body) },
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/webhook-endpoints/:id',
    summary: 'Delete an endpoint with its rules and delivery history',
    tags: TAGS,
    params: EndpointParams,
    responses: { 200: { description: 'Deleted', schema: EndpointDeleted }, ...notFound },
    handler: async ({ deps, auth, params }) => ({ body: await deleteWebhookEndpoint(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhook-endpoints/:id/verify',
    summary: 'Send a verification challenge; a correct answer activates the endpoint',
    tags: TAGS,
    description:
      'POSTs a signed webhook.endpoint_verification event with a new random data.challenge; the receiver answers 2xx ' +
      'with JSON {"challenge": "<value>"} within 10 s. One attempt; the result is returned.',
    params: EndpointParams,
    responses: { 200: { description: 'Verification result', schema: VerificationResult }, ...notFound },
    handler: async ({ deps, auth, params }) => ({ body: await verifyWebhookEndpoint(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhook-endpoints/:id/test',
    summary: 'Send a signed webhook.test ping (or the verification, if not active)',
    tags: TAGS,
    params: EndpointParams,
    responses: { 200: { description: 'Delivery result', schema: EndpointTestResult }, ...notFound },
    handler: async ({ deps, auth, params }) => ({ body: await testWebhookEndpoint(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhook-endpoints/:id/test-sample',
    summary: 'Send a signed sample of a real event type',
    tags: TAGS,
    description:
      'The envelope carries the chosen event_type and data.sample = true. The endpoint must be active (409 WEBHOOK_ENDPOINT_NOT_ACTIVE).',
    params: EndpointParams,
    body: SampleRequest,
    responses: {
      200: { description: 'Delivery result', schema: TestDeliveryResult },
      409: { description: 'Endpoint not active' },
      ...notFound,
    },
    handler: async ({ deps, auth, params, body }) => ({
      body: await testWebhookEndpointWithSample(deps, auth, params.id, body.event_type),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhook-endpoints/:id/rotate-secret',
    summary: 'Rotate the signing secret (returned once)',
    tags: TAGS,
    description:
      'For 24 hours deliveries carry two space-separated signatures in webhook-signature: one with the new secret, one with the old.',
    params: EndpointParams,
    responses: { 200: { description: 'New secret', schema: EndpointWithSecret }, ...notFound },
    handler: async ({ deps, auth, params }) => ({ body: await rotateWebhookEndpointSecret(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/webhook-endpoints/:id/deliveries',
    summary: 'The endpoint delivery log, newest first',
    tags: TAGS,
    params: EndpointParams,
    query: DeliveriesQuery,
    responses: { 200: { description: 'Deliveries', schema: DeliveryList }, ...notFound },
    handler: async ({ deps, auth, params, query }) => {
      const { deliveries, total } = await listEndpointDeliveries(deps, auth, params.id, query);
      return { body: { deliveries, pagination: pagination(total, query.limit, query.offset) } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/webhook-endpoints/:id/rules',
    summary: 'List the endpoint rules',
    tags: TAGS,
    params: EndpointParams,
    responses: { 200: { description: 'Rules', schema: z.object({ ...TestMode, rules: z.array(Rule) }) }, ...notFound },
    handler: async ({ deps, auth, params }) => ({ body: { rules: await listRules(deps, auth, params.id) } }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhook-endpoints/:id/rules',
    summary: 'Add a literal rule (max 10 per endpoint)',
    tags: TAGS,
    params: EndpointParams,
    body: RuleRequest,
    responses: {
      201: { description: 'Rule', schema: z.object({ ...TestMode, rule: Rule }) },
      422: { description: 'Rule limit reached' },
      ...notFound,
    },
    handler: async ({ deps, auth, params, body }) => ({
      status: 201,
      body: { rule: await createRule(deps, auth, params.id, body) },
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/webhook-endpoints/:id/rules/:ruleId',
    summary: 'Change a rule',
    tags: TAGS,
    params: RuleParams,
    body: RulePatchRequest,
    responses: { 200: { description: 'Rule', schema: z.object({ ...TestMode, rule: Rule }) }, ...notFound },
    handler: async ({ deps, auth, params, body }) => ({
      body: { rule: await updateRule(deps, auth, params.id, params.ruleId, body) },
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/webhook-endpoints/:id/rules/:ruleId',
    summary: 'Delete a rule',
    tags: TAGS,
    params: RuleParams,
    responses: { 200: { description: 'Deleted', schema: EndpointDeleted }, ...notFound },
    handler: async ({ deps, auth, params }) => ({ body: await deleteRule(deps, auth, params.id, params.ruleId) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/webhook-deliveries/:id',
    summary: 'One delivery with its attempts',
    tags: TAGS,
    params: EndpointParams,
    responses: {
      200: { description: 'Delivery', schema: z.object({ ...TestMode, delivery: DeliveryDetail }) },
      ...notFound,
    },
    handler: async ({ deps, auth, params }) => ({ body: { delivery: await getDelivery(deps, auth, params.id) } }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/webhook-deliveries/:id/replay',
    summary: 'Replay a failed delivery (fresh timestamp and signature)',
    tags: TAGS,
    description:
      'Only failed deliveries; endpoint deliveries need the endpoint active (verify first). Starts a new attempt series of up to 5 attempts.',
    params: EndpointParams,
    responses: {
      202: { description: 'Queued again', schema: z.object({ ...TestMode, delivery: Delivery }) },
      409: { description: 'Not replayable' },
      ...notFound,
    },
    handler: async ({ deps, auth, params }) => ({
      status: 202,
      body: { delivery: await replayDelivery(deps, auth, params.id) },
    }),
  }),
];
