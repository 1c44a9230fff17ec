// The facility's physical inbound operations (sk_facility_ keys): mailbox
// identification, intake drafts, sealed-exterior photos, matching, commit, scan
// fulfilment, package actions and decisions on handling operations.
import { z } from 'zod';
import { defineRoute, RouteDef } from '../../route';
import { IDEMPOTENCY_KEY_HEADER, idempotentRoute } from '../../idempotent';
import { WORKFLOW_UNAVAILABLE_RESPONSE, TestMode } from '../../schemas/common';
import {
  attachExterior,
  commitDraft,
  createDraft,
  getDraft,
  identifyMailbox,
  listDrafts,
  matchDraft,
  MAX_PHOTO_BYTES,
  updateDraft,
} from '../../../services/physical-inbound/facility-intake';
import {
  listFacilityPackageActions,
  updateFacilityPackageAction,
} from '../../../services/physical-inbound/facility-package-actions';
import {
  fulfilScanRequest,
  listScanRequests,
  rejectScanRequest,
  SCAN_PAGE_FIELDS,
} from '../../../services/physical-inbound/scan-requests';
import { decideFacilityHandling, listFacilityHandling } from '../../../services/physical-inbound/handling-decisions';
import {
  CommitBody,
  CommitResult,
  DecisionBody,
  Draft,
  DraftCreateBody,
  DraftListQuery,
  DraftPutBody,
  ExteriorForm,
  FacilityActionsQuery,
  FacilityActionStatusBody,
  FacilityHandlingQuery,
  FulfilForm,
  FulfilResult,
  HandlingOperation,
  IdentifyBody,
  IdentifyResult,
  IdParam,
  MatchBody,
  PageInfo,
  ScanRejectBody,
  ScanRequestListQuery,
  ScanRequestView,
} from './physical-inbound.schemas';

const tags = ['Facility: physical inbound'];
const DraftBody = z.object({ ...TestMode, draft: Draft });
const conflicts = {
  409: {
    description: 'VERSION_STALE (expected_version is not the current one) or the draft/request is no longer open',
  },
};
/** Every mutating facility call takes an optional Idempotency-Key: a retry answers the first answer and applies nothing twice. */
const headers = IDEMPOTENCY_KEY_HEADER;
const reused = { 422: { description: 'IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was used with another request' } };

export const routes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/v1/facility/mailboxes/identify',
    tags,
    summary: 'Identify the private mailbox a piece is addressed to',
    description:
      'By mailbox number (PMB-1001, "PMB 1001", "#1001", "1001") and/or the exact recipient name (member or agent) on the label. Only mailboxes of this facility.',
    body: IdentifyBody,
    requestHeaders: headers,
    responses: {
      200: { description: 'Matches', schema: IdentifyResult },
      400: { description: 'validation' },
      ...reused,
    },
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/mailboxes/identify', async () => ({
        body: await identifyMailbox(args.deps, args.auth, args.body),
      })),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/facility/inbound/drafts',
    tags,
    summary: 'Intake drafts of this facility',
    query: DraftListQuery,
    responses: {
      200: { description: 'Drafts', schema: z.object({ ...TestMode, drafts: z.array(Draft), pagination: PageInfo }) },
    },
    handler: async ({ deps, auth, query }) => ({ body: await listDrafts(deps, auth, query) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/facility/inbound/drafts',
    tags,
    summary: 'Start an intake draft for a received letter or parcel',
    body: DraftCreateBody,
    requestHeaders: headers,
    responses: {
      201: { description: 'Draft (status open, version 1)', schema: DraftBody },
      400: { description: 'validation' },
      ...reused,
    },
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/inbound/drafts', async () => ({
        status: 201,
        body: await createDraft(args.deps, args.auth, args.body),
      })),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/facility/inbound/drafts/:id',
    tags,
    summary: 'One intake draft',
    params: IdParam,
    responses: { 200: { description: 'Draft', schema: DraftBody }, 404: { description: 'not found' } },
    handler: async ({ deps, auth, params }) => ({ body: await getDraft(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'put',
    path: '/v1/facility/inbound/drafts/:id',
    tags,
    summary: "Replace a draft's label data",
    params: IdParam,
    body: DraftPutBody,
    requestHeaders: headers,
    responses: {
      200: { description: 'Draft', schema: DraftBody },
      400: { description: 'validation' },
      404: { description: 'not found' },
      ...conflicts,
      ...reused,
    },
    handler: (args) =>
      idempotentRoute(args, 'PUT /v1/facility/inbound/drafts/:id', async () => ({
        body: await updateDraft(args.deps, args.auth, args.params.id, args.body),
      })),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/facility/inbound/drafts/:id/exterior',
    tags,
    summary: 'Attach a sealed-exterior (or label) photo',
    description:
      'multipart/form-data: photo (PNG or JPEG, at most 10 MB), photo_type sealed_exterior (default) or label. Stored in the object store.',
    params: IdParam,
    body: ExteriorForm,
    multipart: { maxFileBytes: { photo: MAX_PHOTO_BYTES } },
    requestHeaders: headers,
    responses: {
      201: { description: 'Photo attached', schema: DraftBody.extend({ ...TestMode, photo_id: z.string() }) },
      400: { description: 'not an image' },
      404: { description: 'not found' },
      ...conflicts,
      ...reused,
    },
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/inbound/drafts/:id/exterior', async () => ({
        status: 201,
        body: await attachExterior(args.deps, args.auth, args.params.id, args.files.photo, args.body.photo_type),
      })),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/facility/inbound/drafts/:id/match',
    tags,
    summary: 'Match a draft to a member mailbox and agent',
    description:
      "agent_id defaults to the agent with an open expected shipment of this tracking number at the mailbox, else the mailbox's default agent; it must be an agent of the mailbox holder.",
    params: IdParam,
    body: MatchBody,
    requestHeaders: headers,
    responses: {
      200: { description: 'Draft (status matched)', schema: DraftBody },
      400: { description: 'validation' },
      404: { description: 'draft or mailbox not found' },
      ...conflicts,
      ...reused,
    },
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/inbound/drafts/:id/match', async () => ({
        body: await matchDraft(args.deps, args.auth, args.params.id, args.body),
      })),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/facility/inbound/drafts/:id/commit',
    tags,
    summary: 'Commit a matched draft into custody',
    description:
      'Needs at least one sealed-exterior photo. Creates the physical item (a package when the account has packages enabled, a managed mailbox item, ' +
      "and an agent-inbox assignment), status received; inbound.received follows. The agent's open expected shipment with the same normalised tracking number " +
      'is marked received and linked; its mailbox rules add tags; at most one action is requested (arrival).',
    params: IdParam,
    body: CommitBody,
    requestHeaders: headers,
    responses: {
      201: { description: 'Committed', schema: CommitResult },
      404: { description: 'not found' },
      409: { description: 'VERSION_STALE, DRAFT_NOT_MATCHED, EXTERIOR_PHOTO_REQUIRED, DRAFT_COMMITTED' },
      ...reused,
    },
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/inbound/drafts/:id/commit', async () => ({
        status: 201,
        body: await commitDraft(args.deps, args.auth, args.params.id, args.body),
      })),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/facility/scan-requests',
    tags,
    summary: 'Scan requests to fulfil (default status requested)',
    query: ScanRequestListQuery,
    responses: {
      200: {
        description: 'Scan requests',
        schema: z.object({ ...TestMode, scan_requests: z.array(ScanRequestView), pagination: PageInfo }),
      },
    },
    handler: async ({ deps, auth, query }) => ({ body: await listScanRequests(deps, auth, query) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/facility/scan-requests/:id/fulfil',
    tags,
    summary: 'Fulfil a scan request with page images',
    description:
      'multipart/form-data: page_1 .. page_20 (PNG or JPEG, 10 MB each), optional source_kinds (envelope|letter per page, comma-separated). ' +
      'Creates the scan bundle (every image is decoded first; a truncated one is a 400 naming its field); OCR runs (Tesseract) and inbound.scan_available then inbound.context_ready follow. Completes a linked package action at once, and a linked Open & Scan operation once the OCR is saved (after inbound.context_ready).',
    params: IdParam,
    body: FulfilForm,
    multipart: { maxFileBytes: Object.fromEntries(SCAN_PAGE_FIELDS.map((f) => [f, MAX_PHOTO_BYTES])) },
    requestHeaders: headers,
    responses: {
      201: { description: 'Fulfilled', schema: FulfilResult },
      400: { description: 'no pages or not images' },
      404: { description: 'not found' },
      409: { description: 'SCAN_REQUEST_NOT_OPEN' },
      ...reused,
    },
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/scan-requests/:id/fulfil', async () => ({
        status: 201,
        body: await fulfilScanRequest(args.deps, args.auth, args.params.id, args.files, args.body),
      })),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/facility/scan-requests/:id/reject',
    tags,
    summary: 'Refuse a scan request',
    params: IdParam,
    body: ScanRejectBody,
    requestHeaders: headers,
    responses: {
      200: { description: 'Rejected', schema: z.object({ ...TestMode, scan_request: ScanRequestView }) },
      404: { description: 'not found' },
      409: { description: 'SCAN_REQUEST_NOT_OPEN' },
      ...reused,
    },
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/scan-requests/:id/reject', async () => ({
        body: await rejectScanRequest(args.deps, args.auth, args.params.id, args.body),
      })),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/facility/package-actions',
    tags,
    summary: 'Package actions to carry out (default: active ones, most urgent first)',
    query: FacilityActionsQuery,
    responses: {
      200: {
        description: 'Actions',
        schema: z.object({ ...TestMode, actions: z.array(z.record(z.string(), z.unknown())), pagination: PageInfo }),
      },
    },
    handler: async ({ deps, auth, query }) => ({ body: await listFacilityPackageActions(deps, auth, query) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/facility/package-actions/:id/status',
    tags,
    summary: 'Record progress on a package action',
    description:
      'in_progress, clarification_needed (with clarification_question), completed or failed. Shipping a forward (in_progress) needs tracking_number; ' +
      'scan actions complete by fulfilling their scan request. The package moves with it (forwarding_shipped, forwarded, returning, returned, shredded, disposed, held).',
    params: IdParam,
    body: FacilityActionStatusBody,
    responses: {
      200: {
        description: 'Updated',
        schema: z.object({ ...TestMode, action: z.record(z.string(), z.unknown()), package_status: z.string() }),
      },
      400: { description: 'validation' },
      404: { description: 'not found' },
      409: { description: 'ACTION_NOT_ACTIVE or VERSION_STALE' },
      ...reused,
    },
    requestHeaders: headers,
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/package-actions/:id/status', async () => ({
        body: await updateFacilityPackageAction(args.deps, args.auth, args.params.id, args.body),
      })),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/facility/internal-inbound/handling',
    tags,
    summary: 'Handling operations for this facility (default: awaiting_facility and accepted)',
    query: FacilityHandlingQuery,
    responses: {
      200: {
        description: 'Operations',
        schema: z.object({
          ...TestMode,
          operations: z.array(HandlingOperation.extend({ item: z.record(z.string(), z.unknown()) })),
          pagination: PageInfo,
        }),
      },
    },
    handler: async ({ deps, auth, query }) => ({ body: await listFacilityHandling(deps, auth, query) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/facility/internal-inbound/handling/:id/decision',
    tags,
    summary: 'Accept, complete or reject a handling operation',
    description:
      'accept: awaiting_facility -> accepted (Open & Scan then gets a scan request). complete: accepted -> completed; a priority forward needs tracking_number, ' +
      'first_class none; a discard needs the staff attestation; Open & Scan completes by fulfilling its scan request. reject (reason required): from awaiting_facility or accepted; ' +
      "charged credits are refunded. expected_version is the operation's version.",
    params: IdParam,
    body: DecisionBody,
    responses: {
      200: { description: 'Decided', schema: z.object({ ...TestMode, operation: HandlingOperation }) },
      400: { description: 'validation' },
      404: { description: 'not found' },
      409: { description: 'VERSION_STALE, HANDLING_VERSION_STALE or HANDLING_STATE_INVALID' },
      ...reused,
      ...WORKFLOW_UNAVAILABLE_RESPONSE,
    },
    requestHeaders: headers,
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/internal-inbound/handling/:id/decision', async (key) => ({
        body: await decideFacilityHandling(args.deps, args.auth, args.params.id, args.body, { idempotencyKey: key }),
      })),
  }),
];
