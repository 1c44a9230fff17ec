// Physical inbound tools: the managed mailbox (items, pages, quotes, Open & Scan, the
// activity timeline) and the assigned-inbound agent inbox (context, sources, outcomes,
// handling proposals, sandbox seeding). The agent-inbox reads are deprecated in favour
// of the managed-mailbox tools and stay served unchanged. Requests whose REST route
// demands an Idempotency-Key share that route's record (idempotent-requests.ts: same
// operation, so a retry through either surface replays), and their tools require idempotency_key.
import { z } from 'zod';
import {
  getAgentInboxActivity,
  getAgentInboxContext,
  getAgentInboxScan,
  getAgentInboxSources,
  listAgentInbox,
  listAgentInboxScans,
} from '../../../services/physical-inbound/agent-inbox';
import { getAgentInboxHandling, quoteInboundForward } from '../../../services/physical-inbound/handling';
import {
  acknowledgeOnce,
  proposeHandlingOnce,
  requestInboundActionOnce,
  seedSandboxOnce,
} from '../../routes/physical-inbound/idempotent-requests';
import {
  getInboundItem,
  listInboundActivity,
  listInboundItems,
  listInboundItemScans,
} from '../../../services/physical-inbound/inbound-items';
import {
  AcknowledgmentBody,
  ActivityQuery,
  AgentInboxListQuery,
  ForwardQuoteQuery,
  InboundActionBody,
  InboundItemListQuery,
  PageQuery,
  ProposalBody,
  SeedBody,
} from '../../routes/physical-inbound/physical-inbound.schemas';
import { Uuid } from '../../schemas/common';
import { defineTool, REQUIRED_IDEMPOTENCY_KEY, RestOutcome } from '../tool';

const ItemId = { item_id: Uuid.describe('the inbound item id') };
const served = (r: { status: number; body: unknown }) => new RestOutcome(r.status, r.body);

export const managedMailboxTools = [
  defineTool({
    name: 'search_inbound_items',
    description:
      'Search physical inbound items: q is literal AND terms (NFKC, lower case; max 200 characters, 12 terms) matched in the same item ' +
      '(id, reference, kind words, UTC receipt date, request/bundle/page ids, recipient, saved OCR); received_after (inclusive), received_before (exclusive), status, kind, limit 1-50, offset.',
    input: InboundItemListQuery,
    access: 'GET /v1/inbound-items',
    handler: (deps, auth, input) => listInboundItems(deps, auth, input),
  }),
  defineTool({
    name: 'list_inbound_items',
    description: 'List physical inbound items, newest first (the same filters as search_inbound_items without q).',
    input: InboundItemListQuery.omit({ q: true }),
    access: 'GET /v1/inbound-items',
    handler: (deps, auth, input) => listInboundItems(deps, auth, input),
  }),
  defineTool({
    name: 'get_inbound_item',
    description:
      'One physical inbound item: status, version (send it as expected_version), latest scan, open operation and the Open & Scan quote.',
    input: z.object(ItemId),
    access: 'GET /v1/inbound-items/:id',
    handler: (deps, auth, input) => getInboundItem(deps, auth, input.item_id),
  }),
  defineTool({
    name: 'get_inbound_pages',
    description:
      'The scanned pages of an item, per scan, with saved OCR text (untrusted document content; ocr is null while none is saved). Reading never queues extraction.',
    input: z.object(ItemId),
    access: 'GET /v1/inbound-items/:id/scans',
    handler: (deps, auth, input) => listInboundItemScans(deps, auth, input.item_id),
  }),
  defineTool({
    name: 'get_inbound_item_sources',
    description: 'The scanned pages of an item with their saved OCR (the same answer as get_inbound_pages).',
    input: z.object(ItemId),
    access: 'GET /v1/inbound-items/:id/scans',
    handler: (deps, auth, input) => listInboundItemScans(deps, auth, input.item_id),
  }),
  defineTool({
    name: 'quote_inbound_forward',
    description:
      'Quote forwarding the original of an item (mail_class priority, tracked; or first_class, letters only, untracked).',
    input: ForwardQuoteQuery.extend(ItemId),
    access: 'GET /v1/inbound-items/:id/forward-quote',
    handler: (deps, auth, input) => quoteInboundForward(deps, auth, input.item_id, input.mail_class),
  }),
  defineTool({
    name: 'request_inbound_action',
    description:
      "Request Open & Scan of an item (action_type open_and_scan, expected_version = the item's version). An agent's request waits for the owner's approval; " +
      'member keys echo the displayed expected_quote and are charged at once. idempotency_key is required.',
    input: InboundActionBody.extend({ ...ItemId, ...REQUIRED_IDEMPOTENCY_KEY }),
    access: 'POST /v1/inbound-items/:id/actions',
    mutation: true,
    idempotency: 'service',
    handler: async (deps, auth, { item_id: id, ...body }, call) =>
      served(await requestInboundActionOnce(deps, auth, id, body, call.idempotencyKey)),
  }),
  defineTool({
    name: 'get_inbound_activity',
    description:
      'Timeline of physical inbound items (received, scanned, requested, approved, completed ...), newest first; item_id narrows to one item.',
    input: ActivityQuery,
    access: 'GET /v1/inbound-activity',
    handler: (deps, auth, input) => listInboundActivity(deps, auth, input),
  }),
];

export const agentInboxTools = [
  defineTool({
    name: 'list_agent_inbox',
    description: 'Items assigned to the agent (metadata only); q is literal AND search and needs agent.read.',
    input: AgentInboxListQuery,
    access: 'GET /v1/agent-inbox',
    handler: (deps, auth, input) => listAgentInbox(deps, auth, input),
  }),
  defineTool({
    name: 'get_agent_inbox_context',
    description:
      'Versioned duties and saved OCR of an assigned item (OCR is untrusted document content); context_version identifies this context for report_agent_inbox_outcome.',
    input: z.object(ItemId),
    access: 'GET /v1/agent-inbox/:id/context',
    handler: (deps, auth, input) => getAgentInboxContext(deps, auth, input.item_id),
  }),
  defineTool({
    name: 'get_agent_inbox_sources',
    description: 'The stored pages of an assigned item with their OCR text (limit 1-50, offset).',
    input: PageQuery(50, 25).extend(ItemId),
    access: 'GET /v1/agent-inbox/:id/sources',
    handler: (deps, auth, { item_id: id, ...page }) => getAgentInboxSources(deps, auth, id, page),
  }),
  defineTool({
    name: 'list_agent_inbox_scans',
    description: 'Scan history of the member sample (test keys).',
    input: z.object(ItemId),
    access: 'GET /v1/agent-inbox/:id/scans',
    handler: (deps, auth, input) => listAgentInboxScans(deps, auth, input.item_id),
  }),
  defineTool({
    name: 'get_agent_inbox_scan',
    description: 'One scan of the member sample by its request id, with its pages (test keys).',
    input: z.object({ ...ItemId, operation_id: Uuid.describe('the scan request id') }),
    access: 'GET /v1/agent-inbox/:id/scans/:operationId',
    handler: (deps, auth, input) => getAgentInboxScan(deps, auth, input.item_id, input.operation_id),
  }),
  defineTool({
    name: 'get_agent_inbox_activity',
    description: 'Assignments received, context reads and reported outcomes, newest first.',
    input: PageQuery(50, 25),
    access: 'GET /v1/agent-inbox/activity',
    handler: (deps, auth, input) => getAgentInboxActivity(deps, auth, input),
  }),
  defineTool({
    name: 'report_agent_inbox_outcome',
    description:
      'Report the outcome of handling an assigned item (processed, needs_review, failed) for the exact context_version you read, with your run_id. idempotency_key is required.',
    input: AcknowledgmentBody.extend({ ...ItemId, ...REQUIRED_IDEMPOTENCY_KEY }),
    access: 'POST /v1/agent-inbox/:id/acknowledgments',
    mutation: true,
    idempotency: 'service',
    handler: async (deps, auth, { item_id: id, ...body }, call) =>
      served(await acknowledgeOnce(deps, auth, id, body, call.idempotencyKey)),
  }),
  defineTool({
    name: 'get_agent_inbox_handling',
    description:
      'What can be done with an assigned item (forward_original, open_and_scan, discard: availability, mail classes, quotes), its operations and version.',
    input: z.object(ItemId),
    access: 'GET /v1/agent-inbox/:id/handling',
    handler: (deps, auth, input) => getAgentInboxHandling(deps, auth, input.item_id),
  }),
  defineTool({
    name: 'propose_agent_inbox_handling',
    description:
      'Propose handling of an assigned item for the owner to approve: action_type, expected_version (from get_agent_inbox_handling), and for forward_original a US destination and ' +
      'mail_class (priority, or first_class with untracked_acknowledged). Agents only propose (confirmed and destructive_confirmed stay false). idempotency_key is required.',
    input: ProposalBody.extend({ ...ItemId, ...REQUIRED_IDEMPOTENCY_KEY }),
    access: 'POST /v1/agent-inbox/:id/handling',
    mutation: true,
    idempotency: 'service',
    handler: async (deps, auth, { item_id: id, ...body }, call) =>
      served(await proposeHandlingOnce(deps, auth, id, body, call.idempotencyKey)),
  }),
  defineTool({
    name: 'seed_agent_inbox_sandbox',
    description:
      'Test keys: put a sandbox fixture into your inbox (scenario two_page_letter or needs_review), with real page images and template OCR. idempotency_key is required.',
    input: SeedBody.extend(REQUIRED_IDEMPOTENCY_KEY),
    access: 'POST /v1/agent-inbox/sandbox/seed',
    mutation: true,
    idempotency: 'service',
    handler: async (deps, auth, input, call) => served(await seedSandboxOnce(deps, auth, input, call.idempotencyKey)),
  }),
];
