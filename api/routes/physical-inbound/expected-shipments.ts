// Expected shipments: pieces an agent announces before they reach its private mailbox
// (agent-specific: member keys pass ?agent_id=; physical inbound custody, live keys only).
import { defineRoute, RouteDef } from '../../route';
import {
  cancelExpectedShipment,
  getExpectedShipment,
  listExpectedShipments,
  updateExpectedShipment,
} from '../../../services/physical-inbound/expected-shipments';
import { createExpectedShipmentOnce } from './idempotent-requests';
import {
  AgentScopedQuery,
  ExpectedShipmentBody,
  ExpectedShipmentCancelled,
  ExpectedShipmentCreate,
  ExpectedShipmentList,
  ExpectedShipmentListQuery,
  ExpectedShipmentUpdate,
} from './expected-shipments.schemas';
import { IdParam } from './physical-inbound.schemas';

const tags = ['Expected shipments'];
const VERSION_HEADER = {
  'X-Service-MD-Version': 'agent keys: the current instructions version (400 when missing, 409 when stale)',
};
const refusals = {
  400: {
    description:
      'validation (fields[]; query.agent_id missing or not an agent of the account for member keys), SERVICE_MD_VERSION_REQUIRED',
  },
  403: {
    description:
      'missing scope, test key (reason sandbox_not_supported) or packages not enabled (reason packages_not_enabled)',
  },
};
const notFound = { 404: { description: "expected shipment not found (another member's, or another agent's)" } };
const notOpen = {
  409: {
    description:
      'EXPECTED_SHIPMENT_NOT_OPEN (received or cancelled), EXPECTED_SHIPMENT_DUPLICATE or SERVICE_MD_VERSION_MISMATCH',
  },
};

export const routes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/v1/expected-shipments',
    tags,
    summary: 'List expected shipments of an agent (newest first)',
    description:
      "Member keys must pass agent_id; agent keys see their own agent's. Filters: status (expected, received, cancelled), carrier, tracking_number.",
    query: ExpectedShipmentListQuery,
    responses: { 200: { description: 'Expected shipments', schema: ExpectedShipmentList }, ...refusals },
    handler: async ({ deps, auth, query }) => ({ body: await listExpectedShipments(deps, auth, query) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/expected-shipments',
    tags,
    summary: 'Announce a piece the agent expects at its private mailbox',
    description:
      "When the facility commits a piece to the account's mailbox for this agent with the same tracking number (ignoring case, spaces and " +
      'punctuation), the shipment becomes received and links the package; on_arrival (an ActionRequest) is then requested on the package as if the ' +
      'agent had asked. One open shipment per tracking number and account; at most 500 open per agent. Scope package.write (forward.create for an ' +
      'on_arrival forward). Member keys pass ?agent_id=.',
    query: AgentScopedQuery,
    body: ExpectedShipmentCreate,
    requestHeaders: {
      ...VERSION_HEADER,
      'Idempotency-Key': 'optional: a retry with the same key and body replays the first answer',
    },
    responses: {
      201: { description: 'Expected shipment', schema: ExpectedShipmentBody },
      ...refusals,
      404: { description: 'the account has no private mailbox' },
      409: {
        description:
          'EXPECTED_SHIPMENT_DUPLICATE (details.existing_expected_shipment_id) or SERVICE_MD_VERSION_MISMATCH',
      },
      422: { description: 'EXPECTED_SHIPMENT_LIMIT' },
    },
    handler: async ({ deps, auth, query, body, headers }) =>
      createExpectedShipmentOnce(deps, auth, query.agent_id, body, headers['idempotency-key']),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/expected-shipments/:id',
    tags,
    summary: 'One expected shipment',
    params: IdParam,
    query: AgentScopedQuery,
    responses: { 200: { description: 'Expected shipment', schema: ExpectedShipmentBody }, ...refusals, ...notFound },
    handler: async ({ deps, auth, params, query }) => ({
      body: await getExpectedShipment(deps, auth, params.id, query.agent_id),
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/expected-shipments/:id',
    tags,
    summary: 'Change an expected shipment that has not arrived',
    description: 'Fields sent replace the stored ones; null clears an optional field. Only while status is expected.',
    params: IdParam,
    query: AgentScopedQuery,
    body: ExpectedShipmentUpdate,
    requestHeaders: VERSION_HEADER,
    responses: {
      200: { description: 'Expected shipment', schema: ExpectedShipmentBody },
      ...refusals,
      ...notFound,
      ...notOpen,
    },
    handler: async ({ deps, auth, params, query, body }) => ({
      body: await updateExpectedShipment(deps, auth, params.id, query.agent_id, body),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/expected-shipments/:id',
    tags,
    summary: 'Cancel an expected shipment',
    description:
      'Cancelling again answers the cancelled shipment with already_cancelled true; a received one cannot be cancelled (409).',
    params: IdParam,
    query: AgentScopedQuery,
    requestHeaders: VERSION_HEADER,
    responses: {
      200: { description: 'Cancelled', schema: ExpectedShipmentCancelled },
      ...refusals,
      ...notFound,
      ...notOpen,
    },
    handler: async ({ deps, auth, params, query }) => ({
      body: await cancelExpectedShipment(deps, auth, params.id, query.agent_id),
    }),
  }),
];
