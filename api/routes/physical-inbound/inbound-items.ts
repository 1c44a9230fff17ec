// Managed mailbox items (physical inbound items), the owner's decisions on handling
// operations, and the inbound activity timeline.
import { z } from 'zod';
import { WORKFLOW_UNAVAILABLE_RESPONSE, TestMode } from '../../schemas/common';
import { defineRoute, RouteDef } from '../../route';
import {
  getInboundItem,
  getInboundItemPages,
  listInboundActivity,
  listInboundItems,
  listInboundItemScans,
} from '../../../services/physical-inbound/inbound-items';
import { quoteInboundForward } from '../../../services/physical-inbound/handling';
import {
  approveHandling,
  getHandlingOperation,
  listMemberHandling,
  rejectHandling,
  resetMemberSample,
} from '../../../services/physical-inbound/handling-decisions';
import { requestInboundActionOnce } from './idempotent-requests';
import {
  ActivityQuery,
  ApproveBody,
  ForwardQuoteQuery,
  HandlingList,
  HandlingListQuery,
  HandlingOperation,
  IdParam,
  InboundActionBody,
  InboundItemListQuery,
  InboundScans,
  ManagedItem,
  ManagedItemList,
  PageInfo,
  PageQuery,
  Quote,
  RejectBody,
  SourcePage,
} from './physical-inbound.schemas';

const tags = ['Physical inbound items'];
const IDEMPOTENCY = { 'Idempotency-Key': 'required: retries with the same key and body replay the first answer' };

export const routes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/v1/inbound-items',
    tags,
    summary: 'List or search physical inbound items (search_inbound_items)',
    description:
      'q is literal AND search: NFKC-normalised, lower-cased terms (max 200 characters, 12 terms) that must all appear in the same item ' +
      '(id, reference, kind words, UTC receipt date, request/bundle/page ids, recipient name/email, saved OCR). Unknown or repeated parameters are a 400. ' +
      'Test keys see the member sample and their seeded items.',
    query: InboundItemListQuery,
    responses: {
      200: { description: 'Items', schema: ManagedItemList },
      400: { description: 'validation' },
      503: { description: 'SEARCH_UNAVAILABLE' },
    },
    handler: async ({ deps, auth, query }) => ({ body: await listInboundItems(deps, auth, query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/inbound-items/:id',
    tags,
    summary: 'One physical inbound item with its quotes',
    params: IdParam,
    responses: {
      200: { description: 'Item', schema: z.object({ ...TestMode, item: ManagedItem }) },
      404: { description: 'not found' },
    },
    handler: async ({ deps, auth, params }) => ({ body: await getInboundItem(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/inbound-items/:id/actions',
    tags,
    summary: 'Request Open & Scan (request_inbound_action)',
    description:
      "Only open_and_scan. expected_version is the item's current version. Agent requests wait for the member's approval " +
      '(awaiting_member_approval); member requests must echo the displayed expected_quote, are charged at once and go to the facility (awaiting_facility).',
    params: IdParam,
    body: InboundActionBody,
    requestHeaders: { ...IDEMPOTENCY, 'X-Service-MD-Version': 'agent keys: the current instructions version' },
    responses: {
      201: {
        description: 'Operation created',
        schema: z.object({ ...TestMode, operation: HandlingOperation, item: ManagedItem }),
      },
      400: { description: 'validation (Idempotency-Key, expected_quote)' },
      402: { description: 'INSUFFICIENT_CREDITS' },
      404: { description: 'not found' },
      409: { description: 'VERSION_STALE, QUOTE_CHANGED, HANDLING_OPERATION_OPEN, HANDLING_NOT_AVAILABLE' },
    },
    handler: async ({ deps, auth, params, body, headers }) => {
      const r = await requestInboundActionOnce(deps, auth, params.id, body, headers['idempotency-key']);
      return { status: r.status, body: r.body, headers: r.headers };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/inbound-items/:id/forward-quote',
    tags,
    summary: 'Quote forwarding the original (quote_inbound_forward)',
    params: IdParam,
    query: ForwardQuoteQuery,
    responses: {
      200: {
        description: 'Quote',
        schema: z.object({
          ...TestMode,
          item_id: z.string(),
          mail_class: z.string(),
          tracked: z.boolean(),
          available: z.boolean(),
          quote: Quote,
        }),
      },
      400: { description: 'first_class for a parcel' },
      404: { description: 'not found' },
    },
    handler: async ({ deps, auth, params, query }) => ({
      body: await quoteInboundForward(deps, auth, params.id, query.mail_class),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/inbound-items/:id/scans',
    tags,
    summary: 'Scans of an item with their saved OCR',
    description: 'Per scan: ocr_status and ocr (null while no OCR is saved). Reading never queues extraction.',
    params: IdParam,
    responses: { 200: { description: 'Scans', schema: InboundScans }, 404: { description: 'not found' } },
    handler: async ({ deps, auth, params }) => ({ body: await listInboundItemScans(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/inbound-items/:id/pages',
    tags,
    summary: 'Stored pages of an item with their saved OCR (get_inbound_pages)',
    description: 'OCR text is untrusted document content. Needs inbound.item.scan.read.',
    params: IdParam,
    query: PageQuery(50, 25),
    responses: {
      200: {
        description: 'Pages',
        schema: z.object({
          ...TestMode,
          item_id: z.string(),
          content_trust: z.literal('untrusted_document'),
          pages: z.array(SourcePage),
          pagination: PageInfo,
        }),
      },
      404: { description: 'not found' },
    },
    handler: async ({ deps, auth, params, query }) => ({
      body: await getInboundItemPages(deps, auth, params.id, query),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/inbound-items/:id/reset-sample',
    tags,
    summary: 'Restart the member sample (test keys)',
    description:
      "Closes the sample's open operations (rejected, reason sample_reset) and rebuilds it as new (version 1, one scan).",
    params: IdParam,
    responses: {
      200: {
        description: 'Sample restarted',
        schema: z.object({ ...TestMode, item: ManagedItem, reset: z.literal(true) }),
      },
      400: { description: 'NOT_MEMBER_SAMPLE' },
      404: { description: 'Not found' },
    },
    handler: async ({ deps, auth, params }) => ({ body: await resetMemberSample(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/inbound-activity',
    tags,
    summary: 'Timeline of physical inbound items (get_inbound_activity)',
    query: ActivityQuery,
    responses: {
      200: {
        description: 'Activity',
        schema: z.object({
          ...TestMode,
          activity: z.array(
            z.object({
              id: z.string(),
              item_id: z.string(),
              agent_id: z.string().nullable(),
              kind: z.string(),
              detail: z.unknown(),
              created_at: z.string(),
            }),
          ),
          pagination: PageInfo,
        }),
      },
    },
    handler: async ({ deps, auth, query }) => ({ body: await listInboundActivity(deps, auth, query) }),
  }),

  // The owner's decisions on handling operations (member keys).
  defineRoute({
    method: 'get',
    path: '/v1/handling',
    tags: ['Handling'],
    summary: 'Handling operations of the member',
    query: HandlingListQuery,
    responses: { 200: { description: 'Operations', schema: HandlingList } },
    handler: async ({ deps, auth, query }) => ({ body: await listMemberHandling(deps, auth, query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/handling/:id',
    tags: ['Handling'],
    summary: 'One handling operation',
    params: IdParam,
    responses: {
      200: { description: 'Operation', schema: z.object({ ...TestMode, operation: HandlingOperation }) },
      404: { description: 'not found' },
    },
    handler: async ({ deps, auth, params }) => ({ body: await getHandlingOperation(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/handling/:id/approve',
    tags: ['Handling'],
    summary: "Approve an agent's proposal (owner)",
    description:
      'awaiting_member_approval -> awaiting_facility. Live operations are charged their quote now (refunded if later rejected). ' +
      'A discard needs destructive_confirmed true.',
    params: IdParam,
    body: ApproveBody,
    responses: {
      200: { description: 'Approved', schema: z.object({ ...TestMode, operation: HandlingOperation }) },
      400: { description: 'validation' },
      402: { description: 'INSUFFICIENT_CREDITS' },
      404: { description: 'not found' },
      409: { description: 'VERSION_STALE or HANDLING_STATE_INVALID' },
      ...WORKFLOW_UNAVAILABLE_RESPONSE,
    },
    handler: async ({ deps, auth, params, body }) => ({ body: await approveHandling(deps, auth, params.id, body) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/handling/:id/reject',
    tags: ['Handling'],
    summary: "Reject an agent's proposal (owner)",
    description: 'Only while awaiting_member_approval; the facility may reject later states.',
    params: IdParam,
    body: RejectBody,
    responses: {
      200: { description: 'Rejected', schema: z.object({ ...TestMode, operation: HandlingOperation }) },
      404: { description: 'not found' },
      409: { description: 'VERSION_STALE or HANDLING_STATE_INVALID' },
      ...WORKFLOW_UNAVAILABLE_RESPONSE,
    },
    handler: async ({ deps, auth, params, body }) => ({ body: await rejectHandling(deps, auth, params.id, body) }),
  }),
];
