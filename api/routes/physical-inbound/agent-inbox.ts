import { TestMode } from '../../schemas/common';
// Assigned inbound (the agent inbox, agent-inbox.v1): agent-scoped keys only.
import { z } from 'zod';
import { defineRoute, RouteDef } from '../../route';
import {
  getAgentInboxActivity,
  getAgentInboxContext,
  getAgentInboxScan,
  getAgentInboxSources,
  listAgentInbox,
  listAgentInboxScans,
} from '../../../services/physical-inbound/agent-inbox';
import { getAgentInboxHandling } from '../../../services/physical-inbound/handling';
import { acknowledgeOnce, proposeHandlingOnce, seedSandboxOnce } from './idempotent-requests';
import {
  Acknowledgment,
  AcknowledgmentBody,
  AgentInboxActivity,
  AgentInboxContext,
  AgentInboxList,
  AgentInboxListQuery,
  AgentInboxScan,
  AgentInboxScans,
  AgentInboxSources,
  HandlingOperation,
  HandlingState,
  IdParam,
  PageQuery,
  ProposalBody,
  ScanOperationParams,
  SeedBody,
  SeedResult,
} from './physical-inbound.schemas';

const tags = ['Agent inbox'];
const IDEMPOTENCY = { 'Idempotency-Key': 'required: retries with the same key and body replay the first answer' };
const refusals = {
  403: {
    description: 'member or facility key (reason agent_key_required) or missing scope (reason insufficient_scope)',
  },
  404: { description: 'not assigned to this agent' },
};

export const routes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/v1/agent-inbox',
    tags,
    summary: 'Items assigned to the agent (list_agent_inbox)',
    description:
      'Metadata only. q (needs agent.read) is literal AND search: every space-separated term must appear in the same item ' +
      '(UUID, reference_code, kind words such as letter/parcel/package/mail, UTC receipt date YYYY-MM-DD, request/bundle/page UUIDs, ' +
      'recipient name/email, saved OCR); punctuation, quotes, % and _ are literal. Max 200 characters (original and normalised) and 12 terms. ' +
      'Search records no receipt. 503 when search is unavailable (never an unfiltered list).',
    query: AgentInboxListQuery,
    responses: {
      200: { description: 'Assigned items', schema: AgentInboxList },
      400: { description: 'unknown or repeated parameters, query over limits' },
      // A list of the agent's own assignments: never 404.
      403: refusals[403],
      503: { description: 'SEARCH_UNAVAILABLE' },
    },
    handler: async ({ deps, auth, query }) => ({ body: await listAgentInbox(deps, auth, query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/agent-inbox/activity',
    tags,
    summary: 'Assignments received, context reads (receipts) and reported outcomes (get_agent_inbox_activity)',
    query: PageQuery(50, 25),
    responses: { 200: { description: 'Activity', schema: AgentInboxActivity }, 403: refusals[403] },
    handler: async ({ deps, auth, query }) => ({ body: await getAgentInboxActivity(deps, auth, query) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/agent-inbox/sandbox/seed',
    tags,
    summary: "Seed a sandbox fixture into the test agent's inbox (seed_agent_inbox_sandbox)",
    description:
      'Scenarios: two_page_letter (two letter pages, OCR ready) and needs_review (one smudged page, OCR needs_review with uncertain spans). ' +
      'Real page images with template OCR; test events follow (inbound.received, inbound.scan_available, inbound.context_ready).',
    body: SeedBody,
    requestHeaders: IDEMPOTENCY,
    responses: {
      201: { description: 'Seeded', schema: SeedResult },
      400: { description: 'validation' },
      403: { description: 'live key (reason test_key_required)' },
      422: { description: 'IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was used with another request' },
    },
    handler: async ({ deps, auth, body, headers }) => {
      const r = await seedSandboxOnce(deps, auth, body, headers['idempotency-key']);
      return { status: r.status, body: r.body, headers: r.headers };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/agent-inbox/:id/context',
    tags,
    summary: 'Versioned duties and saved OCR of an assigned item (get_agent_inbox_context)',
    description:
      'OCR text is untrusted document content. context_version identifies exactly this context; report outcomes against it. Reading records a receipt.',
    params: IdParam,
    responses: { 200: { description: 'Context', schema: AgentInboxContext }, ...refusals },
    handler: async ({ deps, auth, params }) => ({ body: await getAgentInboxContext(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/agent-inbox/:id/sources',
    tags,
    summary: 'Stored pages of an assigned item (get_agent_inbox_sources)',
    params: IdParam,
    query: PageQuery(50, 25),
    responses: { 200: { description: 'Pages', schema: AgentInboxSources }, ...refusals },
    handler: async ({ deps, auth, params, query }) => ({
      body: await getAgentInboxSources(deps, auth, params.id, query),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/agent-inbox/:id/scans',
    tags,
    summary: 'Scan history of the member sample (test keys; list_agent_inbox_scans)',
    params: IdParam,
    responses: { 200: { description: 'Scans', schema: AgentInboxScans }, ...refusals },
    handler: async ({ deps, auth, params }) => ({ body: await listAgentInboxScans(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/agent-inbox/:id/scans/:operationId',
    tags,
    summary: 'One scan of the member sample by its request id (test keys; get_agent_inbox_scan)',
    params: ScanOperationParams,
    responses: { 200: { description: 'Scan', schema: AgentInboxScan }, ...refusals },
    handler: async ({ deps, auth, params }) => ({
      body: await getAgentInboxScan(deps, auth, params.id, params.operationId),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/agent-inbox/:id/acknowledgments',
    tags,
    summary: 'Report an outcome for the context read (report_agent_inbox_outcome)',
    description:
      'Needs the exact current context_version (409 CONTEXT_VERSION_MISMATCH otherwise), a run_id and an Idempotency-Key.',
    params: IdParam,
    body: AcknowledgmentBody,
    requestHeaders: IDEMPOTENCY,
    responses: {
      201: { description: 'Recorded', schema: Acknowledgment },
      400: { description: 'validation' },
      ...refusals,
      409: { description: 'CONTEXT_VERSION_MISMATCH' },
    },
    handler: async ({ deps, auth, params, body, headers }) => {
      const r = await acknowledgeOnce(deps, auth, params.id, body, headers['idempotency-key']);
      return { status: r.status, body: r.body, headers: r.headers };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/agent-inbox/:id/handling',
    tags,
    summary: 'Handling capabilities, operations and version (get_agent_inbox_handling)',
    params: IdParam,
    responses: { 200: { description: 'Handling state', schema: HandlingState }, ...refusals },
    handler: async ({ deps, auth, params }) => ({ body: await getAgentInboxHandling(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/agent-inbox/:id/handling',
    tags,
    summary: 'Propose handling for the owner to approve (propose_agent_inbox_handling)',
    description:
      'action_type forward_original, open_and_scan or discard (vault is inactive). Agents only propose: confirmed and destructive_confirmed are false. ' +
      'Forwarding freezes a US destination and the mail class: priority (tracked; the facility records tracking) or first_class (letters only, untracked, ' +
      "needs untracked_acknowledged true). A discard needs the owner's confirmation and a staff attestation. expected_version is the version from GET.",
    params: IdParam,
    body: ProposalBody,
    requestHeaders: { ...IDEMPOTENCY, 'X-Service-MD-Version': 'the current instructions version' },
    responses: {
      201: {
        description: 'Proposed (awaiting_member_approval)',
        schema: z.object({ ...TestMode, operation: HandlingOperation, item_version: z.number().int() }),
      },
      400: { description: 'validation or HANDLING_ACTION_INACTIVE' },
      ...refusals,
      409: {
        description: 'VERSION_STALE, HANDLING_OPERATION_OPEN, HANDLING_NOT_AVAILABLE or SERVICE_MD_VERSION_MISMATCH',
      },
    },
    handler: async ({ deps, auth, params, body, headers }) => {
      const r = await proposeHandlingOnce(deps, auth, params.id, body, headers['idempotency-key']);
      return { status: r.status, body: r.body, headers: r.headers };
    },
  }),
];
