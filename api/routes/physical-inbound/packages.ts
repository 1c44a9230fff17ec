import { TestMode } from '../../schemas/common';
// Packages: physical inbound custody (account-enabled, live keys only).
import { z } from 'zod';
import { defineRoute, RouteDef } from '../../route';
import { errors } from '../../../domain/shared/errors';
import {
  getPackageAction,
  listPackageActions,
  listPackageForwards,
  listPackageScans,
  patchPackageAction,
} from '../../../services/physical-inbound/package-actions';
import {
  addPackageNote,
  addPackageTag,
  getPackage,
  listPackageNotes,
  listPackagePhotos,
  listPackages,
  listPackageTags,
  removePackageTag,
} from '../../../services/physical-inbound/packages';
import { requestPackageActionOnce, requestPackageForwardOnce, requestPackageScanOnce } from './idempotent-requests';
import {
  ActionPatchRequest,
  ActionRequest,
  ForwardingRequest,
  ForwardRequest,
  IdParam,
  Note,
  NoteBody,
  PackageAction,
  PackageActionParams,
  PackageDetail,
  PackageList,
  PackageListQuery,
  PackagePhoto,
  PackagePhotosQuery,
  PackageSummary,
  PageInfo,
  PageQuery,
  ScanRequestBody,
  ScanRequestView,
  ScanSummary,
  TagBody,
  TagDeleteQuery,
  TagList,
} from './physical-inbound.schemas';

const tags = ['Packages'];
const VERSION_HEADER = {
  'X-Service-MD-Version': 'agent keys: the current instructions version (400 when missing, 409 when stale)',
};
const REQUEST_HEADERS = {
  ...VERSION_HEADER,
  'Idempotency-Key': 'optional: a retry with the same key and body replays the first answer',
};
const refusals = {
  403: {
    description:
      "missing scope, another agent's package (reason package_belongs_to_another_agent), test key (reason sandbox_not_supported) or packages not enabled (reason packages_not_enabled)",
  },
  404: { description: 'package not found' },
};

export const routes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/v1/packages',
    tags,
    summary: 'List packages in custody',
    description:
      "Letters and parcels held at the member's private mailbox, newest first. Member keys must pass agent_id; agent keys see their own agent's packages.",
    query: PackageListQuery,
    responses: {
      200: { description: 'Packages', schema: PackageList },
      400: { description: 'validation (agent_id missing for a member key)' },
      401: { description: 'unauthenticated' },
      403: refusals[403],
    },
    handler: async ({ deps, auth, query }) => ({ body: await listPackages(deps, auth, query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/packages/:id',
    tags,
    summary: 'Package detail: photos, events, label data, actions',
    params: IdParam,
    responses: { 200: { description: 'Package', schema: PackageDetail }, ...refusals },
    handler: async ({ deps, auth, params }) => ({ body: await getPackage(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/packages/:id/photos',
    tags,
    summary: 'Package photos with signed 1-hour URLs and OCR metadata',
    description:
      'Intake photos (sealed_exterior, label) and scan pages (scan_envelope, scan_letter) with their saved OCR.',
    params: IdParam,
    query: PackagePhotosQuery,
    responses: {
      200: {
        description: 'Photos',
        schema: z.object({ ...TestMode, package_id: z.string(), photos: z.array(PackagePhoto) }),
      },
      ...refusals,
    },
    handler: async ({ deps, auth, params, query }) => ({
      body: await listPackagePhotos(deps, auth, params.id, query.photo_type),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/packages/:id/actions',
    tags,
    summary: 'Actions requested on a package',
    params: IdParam,
    responses: {
      200: {
        description: 'Actions',
        schema: z.object({ ...TestMode, package_id: z.string(), actions: z.array(PackageAction) }),
      },
      ...refusals,
    },
    handler: async ({ deps, auth, params }) => ({ body: await listPackageActions(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/packages/:id/actions',
    tags,
    summary: 'Request an action on a package',
    description:
      'The facility carries it out. Scope forward.create for forward (parameters carry the forwarding address), package.write otherwise. ' +
      'Action states: requested, clarification_needed, in_progress (active), completed, failed, cancelled.',
    params: IdParam,
    body: ActionRequest,
    requestHeaders: REQUEST_HEADERS,
    responses: {
      201: { description: 'Action recorded', schema: z.object({ ...TestMode, action: PackageAction }) },
      400: { description: 'validation, SERVICE_MD_VERSION_REQUIRED or PACKAGE_NOT_FORWARDABLE' },
      ...refusals,
      409: { description: 'SERVICE_MD_VERSION_MISMATCH or PACKAGE_ACTION_NOT_AVAILABLE' },
    },
    handler: async ({ deps, auth, params, body, headers }) =>
      requestPackageActionOnce(deps, auth, params.id, body, headers['idempotency-key']),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/packages/:id/actions/:actionId',
    tags,
    summary: 'One package action',
    params: PackageActionParams,
    responses: {
      200: { description: 'Action', schema: z.object({ ...TestMode, action: PackageAction }) },
      ...refusals,
    },
    handler: async ({ deps, auth, params }) => ({
      body: await getPackageAction(deps, auth, params.id, params.actionId),
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/packages/:id/actions/:actionId',
    tags,
    summary: 'Add notes, data, a clarification answer or decision context to an active action',
    description:
      'Only active actions (requested, clarification_needed, in_progress) change. Answering a clarification puts the action back to requested. ' +
      'Send If-Match: <version> to refuse a stale edit.',
    params: PackageActionParams,
    body: ActionPatchRequest,
    requestHeaders: {
      ...VERSION_HEADER,
      'If-Match': 'optional: the action version the edit is based on (409 when stale)',
    },
    responses: {
      200: { description: 'Action', schema: z.object({ ...TestMode, action: PackageAction }) },
      400: { description: 'validation or ACTION_NOT_ACTIVE' },
      ...refusals,
      409: { description: 'CONCURRENT_MODIFICATION, VERSION_STALE or SERVICE_MD_VERSION_MISMATCH' },
    },
    handler: async ({ deps, auth, params, body, headers }) => ({
      body: await patchPackageAction(deps, auth, params.id, params.actionId, body, headers['if-match']),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/packages/:id/forward',
    tags,
    summary: 'Forwarding requests of a package',
    params: IdParam,
    responses: {
      200: {
        description: 'Forwarding requests',
        schema: z.object({ ...TestMode, package_id: z.string(), forwarding_requests: z.array(ForwardingRequest) }),
      },
      ...refusals,
    },
    handler: async ({ deps, auth, params }) => ({ body: await listPackageForwards(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/packages/:id/forward',
    tags,
    summary: 'Forward a package',
    description: 'Creates a forwarding request (a forward action) and sets the package to forwarding_requested.',
    params: IdParam,
    body: ForwardRequest,
    requestHeaders: REQUEST_HEADERS,
    responses: {
      201: {
        description: 'Forwarding requested',
        schema: z.object({
          ...TestMode,
          forwarding_request: ForwardingRequest,
          action: PackageAction,
          package: PackageSummary,
        }),
      },
      400: { description: 'missing fields or PACKAGE_NOT_FORWARDABLE' },
      ...refusals,
      409: { description: 'SERVICE_MD_VERSION_MISMATCH' },
    },
    handler: async ({ deps, auth, params, body, headers }) =>
      requestPackageForwardOnce(deps, auth, params.id, body, headers['idempotency-key']),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/packages/:id/scan',
    tags,
    summary: 'Scan requests of a package and their scans',
    params: IdParam,
    responses: {
      200: {
        description: 'Scans',
        schema: z.object({
          ...TestMode,
          package_id: z.string(),
          scans: z.array(z.object({ scan_request: ScanRequestView, bundle: ScanSummary.nullable() })),
        }),
      },
      ...refusals,
    },
    handler: async ({ deps, auth, params }) => ({ body: await listPackageScans(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/packages/:id/scan',
    tags,
    summary: 'Request a scan of a package',
    params: IdParam,
    body: ScanRequestBody,
    requestHeaders: REQUEST_HEADERS,
    responses: {
      201: {
        description: 'Scan requested',
        schema: z.object({ ...TestMode, scan_request: ScanRequestView, action: PackageAction }),
      },
      400: { description: 'invalid scan_type' },
      ...refusals,
    },
    handler: async ({ deps, auth, params, body, headers }) =>
      requestPackageScanOnce(deps, auth, params.id, body, headers['idempotency-key']),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/packages/:id/tags',
    tags,
    summary: 'Tags of a package',
    params: IdParam,
    responses: { 200: { description: 'Tags', schema: TagList }, ...refusals },
    handler: async ({ deps, auth, params }) => ({ body: await listPackageTags(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/packages/:id/tags',
    tags,
    summary: 'Tag a package',
    description: 'Body field tag, label or name (1-50 characters).',
    params: IdParam,
    body: TagBody,
    requestHeaders: VERSION_HEADER,
    responses: {
      201: { description: 'Tagged', schema: TagList.extend({ ...TestMode, tag: z.string(), created: z.boolean() }) },
      400: { description: 'validation' },
      ...refusals,
    },
    handler: async ({ deps, auth, params, body }) => {
      const tag = body.tag ?? body.label ?? body.name;
      if (!tag) throw errors.validation([{ path: 'tag', message: 'send tag, label or name' }]);
      return { status: 201, body: await addPackageTag(deps, auth, params.id, tag) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/packages/:id/tags',
    tags,
    summary: 'Remove a tag (?tag=)',
    params: IdParam,
    query: TagDeleteQuery,
    requestHeaders: VERSION_HEADER,
    responses: {
      200: { description: 'Removed', schema: TagList.extend({ ...TestMode, removed: z.string() }) },
      400: { description: 'tag query missing' },
      ...refusals,
    },
    handler: async ({ deps, auth, params, query }) => {
      if (!query.tag) throw errors.validation([{ path: 'query.tag', message: 'the tag query parameter is required' }]);
      return { body: await removePackageTag(deps, auth, params.id, query.tag) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/packages/:id/notes',
    tags,
    summary: 'Notes on a package',
    params: IdParam,
    query: PageQuery(100, 20),
    responses: {
      200: {
        description: 'Notes',
        schema: z.object({ ...TestMode, package_id: z.string(), notes: z.array(Note), pagination: PageInfo }),
      },
      ...refusals,
    },
    handler: async ({ deps, auth, params, query }) => ({ body: await listPackageNotes(deps, auth, params.id, query) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/packages/:id/notes',
    tags,
    summary: 'Add a note to a package',
    description: 'Body field note, text or message, plus an optional metadata object.',
    params: IdParam,
    body: NoteBody,
    requestHeaders: VERSION_HEADER,
    responses: {
      201: { description: 'Note added', schema: z.object({ ...TestMode, note: Note }) },
      400: { description: 'invalid or missing note' },
      ...refusals,
    },
    handler: async ({ deps, auth, params, body }) => {
      const note = body.note ?? body.text ?? body.message;
      if (!note) throw errors.validation([{ path: 'note', message: 'send note, text or message' }]);
      return { status: 201, body: await addPackageNote(deps, auth, params.id, note, body.metadata) };
    },
  }),
];
