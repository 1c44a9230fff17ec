// Facility endpoints for outbound mail (facility keys only): the print queue, the
// document, and the fulfillment steps that move a live piece through its workflow.
import { z } from 'zod';
import { defineRoute, RouteDef, UploadedFile } from '../../route';
import { IdParams, Pagination, WORKFLOW_UNAVAILABLE_RESPONSE, TestMode } from '../../schemas/common';
import { IDEMPOTENCY_KEY_HEADER, idempotentRoute } from '../../idempotent';
import {
  CarrierDeliveryFailedBody,
  DispatchedForm,
  FacilityDocumentSchema,
  FacilityMailItemResponse,
  FacilityMailItemSchema,
  FacilityMailQuery,
  FailedBody,
} from './mail.schemas';
import { errors } from '../../../domain/shared/errors';
import {
  facilityCarrierDeliveryFailed,
  facilityDelivered,
  facilityDispatched,
  facilityDocument,
  facilityFailed,
  facilityPrinted,
  facilityStartPrinting,
  getFacilityMail,
  listFacilityMail,
} from '../../../services/outbound-mail/facility';
import { readUpload } from './mail';

const MAX_PHOTO_BYTES = 10 * 1024 * 1024;

const stepResponses = {
  200: { description: 'The piece after the step', schema: FacilityMailItemResponse },
  400: { description: 'Validation failed (fields[])' },
  404: { description: 'Not a live piece of this facility' },
  409: {
    description: 'MAIL_STATE_CONFLICT: the piece is not in a status this step follows (for example cancelled)',
  },
  422: { description: 'IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was used with another request' },
  ...WORKFLOW_UNAVAILABLE_RESPONSE,
};

/** Every step: the optional Idempotency-Key (the step is applied once, a retry answers the first answer). */
const STEP_HEADERS = IDEMPOTENCY_KEY_HEADER;

async function requiredPhoto(files: Record<string, UploadedFile>, field: string): Promise<Buffer> {
  const file = files[field];
  if (!file) throw errors.validation([{ path: field, message: 'required: a PNG or JPEG photo' }]);
  return readUpload(file);
}

export const routes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/v1/facility/mail',
    summary: "The facility's outbound queue",
    description:
      'Live pieces assigned to this facility (or not yet assigned), oldest submission first. Without status: submitted, ready and mailed.',
    tags: ['Facility'],
    query: FacilityMailQuery,
    responses: {
      200: {
        description: 'Queue page',
        schema: z.object({ ...TestMode, items: z.array(FacilityMailItemSchema), pagination: Pagination }),
      },
    },
    handler: async ({ deps, auth, query }) => ({ body: await listFacilityMail(deps, auth, query) }),
  }),

  defineRoute({
    method: 'get',
    path: '/v1/facility/mail/:id',
    summary: "One piece of the facility's queue",
    tags: ['Facility'],
    params: IdParams,
    responses: {
      200: { description: 'The piece', schema: FacilityMailItemResponse },
      404: { description: 'Not found' },
    },
    handler: async ({ deps, auth, params }) => ({ body: await getFacilityMail(deps, auth, params.id) }),
  }),

  defineRoute({
    method: 'get',
    path: '/v1/facility/mail/:id/document',
    summary: 'The document to print',
    description:
      'A signed URL of the stored document (1-hour expiry) and the print settings, and proof_url: the print-ready proof the sender saw (an address page for a #10 double-window envelope, then the document as it prints; signed, 1 hour; null until rendered: at submission for a PDF of up to 10 pages, else by the worker shortly after).',
    tags: ['Facility'],
    params: IdParams,
    responses: {
      200: { description: 'Document', schema: FacilityDocumentSchema },
      404: { description: 'Not found' },
    },
    handler: async ({ deps, auth, params }) => ({ body: await facilityDocument(deps, auth, params.id) }),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/facility/mail/:id/printing',
    summary: 'Start printing a submitted piece',
    description:
      'Claims the piece for printing. From this moment the sender can no longer cancel it; a piece cancelled a moment earlier answers 409.',
    tags: ['Facility'],
    params: IdParams,
    requestHeaders: STEP_HEADERS,
    responses: stepResponses,
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/mail/:id/printing', async (key) => ({
        body: await facilityStartPrinting(args.deps, args.auth, args.params.id, { idempotencyKey: key }),
      })),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/facility/mail/:id/printed',
    summary: 'Printed and enveloped: submitted -> ready',
    description: 'Multipart: `pages` and `envelope` photos (PNG or JPEG, at most 10 MB each). Emits mail.ready.',
    tags: ['Facility'],
    params: IdParams,
    body: z.strictObject({}),
    multipart: { maxFileBytes: { pages: MAX_PHOTO_BYTES, envelope: MAX_PHOTO_BYTES } },
    requestHeaders: STEP_HEADERS,
    responses: stepResponses,
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/mail/:id/printed', async (key) => {
        const pages = await requiredPhoto(args.files, 'pages');
        const envelope = await requiredPhoto(args.files, 'envelope');
        return {
          body: await facilityPrinted(
            args.deps,
            args.auth,
            args.params.id,
            { pages, envelope },
            { idempotencyKey: key },
          ),
        };
      }),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/facility/mail/:id/dispatched',
    summary: 'Handed to the carrier: ready -> mailed',
    description:
      'Multipart: carrier, tracking_number (required for every class but first_class), dispatch_method (post_office_counter, carrier_pickup, ' +
      'drop_box) and the `receipt` photo. Emits mail.mailed.',
    tags: ['Facility'],
    params: IdParams,
    body: DispatchedForm,
    multipart: { maxFileBytes: { receipt: MAX_PHOTO_BYTES } },
    requestHeaders: STEP_HEADERS,
    responses: stepResponses,
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/mail/:id/dispatched', async (key) => {
        const receipt = await requiredPhoto(args.files, 'receipt');
        return {
          body: await facilityDispatched(
            args.deps,
            args.auth,
            args.params.id,
            { ...args.body, receipt },
            { idempotencyKey: key },
          ),
        };
      }),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/facility/mail/:id/delivered',
    summary: 'Delivery confirmed: mailed -> delivered',
    description: 'Multipart with an optional `delivery` proof photo (PNG or JPEG). Emits mail.delivered.',
    tags: ['Facility'],
    params: IdParams,
    body: z.strictObject({}),
    multipart: { maxFileBytes: { delivery: MAX_PHOTO_BYTES } },
    requestHeaders: STEP_HEADERS,
    responses: stepResponses,
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/mail/:id/delivered', async (key) => {
        const proof = args.files.delivery ? await readUpload(args.files.delivery) : null;
        return { body: await facilityDelivered(args.deps, args.auth, args.params.id, proof, { idempotencyKey: key }) };
      }),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/facility/mail/:id/failed',
    summary: 'The facility could not print or dispatch the piece',
    description:
      "From submitted or ready: status failed with error_message = message; the sender's credits for the piece are refunded. Emits mail.failed.",
    tags: ['Facility'],
    params: IdParams,
    body: FailedBody,
    requestHeaders: STEP_HEADERS,
    responses: stepResponses,
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/mail/:id/failed', async (key) => ({
        body: await facilityFailed(args.deps, args.auth, args.params.id, args.body.message, { idempotencyKey: key }),
      })),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/facility/mail/:id/carrier-delivery-failed',
    summary: 'The carrier could not deliver a mailed piece',
    description:
      'From mailed: status failed, carrier_delivery_failed true, failure_stage carrier_delivery, failure_source carrierx_tracking. Postage was spent, ' +
      'so nothing is refunded. Emits mail.failed.',
    tags: ['Facility'],
    params: IdParams,
    body: CarrierDeliveryFailedBody,
    requestHeaders: STEP_HEADERS,
    responses: stepResponses,
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/mail/:id/carrier-delivery-failed', async (key) => ({
        body: await facilityCarrierDeliveryFailed(args.deps, args.auth, args.params.id, args.body.message ?? null, {
          idempotencyKey: key,
        }),
      })),
  }),
];
