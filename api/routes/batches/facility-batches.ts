// Facility side of batch mail (sk_facility_ keys): the queue of batches to fulfil, their
// files, and the fulfilment steps start -> mark pieces -> finish (or fail). A facility
// sees only live batches assigned to it.
import { defineRoute, RouteDef } from '../../route';
import { WORKFLOW_UNAVAILABLE_RESPONSE } from '../../schemas/common';
import { IDEMPOTENCY_KEY_HEADER, idempotentRoute } from '../../idempotent';
import {
  BatchIdParams,
  BatchListResponse,
  FacilityBatchResponse,
  FacilityListQuery,
  FacilityPieceDocumentResponse,
  FacilityPieceParams,
  FacilityStateResponse,
  FailBody,
  FailResponse,
  FinishBody,
  FinishResponse,
  MarkPiecesBody,
  MarkPiecesResponse,
} from './batches.schemas';
import {
  failFacilityBatch,
  finishFacilityBatch,
  getFacilityBatch,
  getFacilityBatchPieceDocument,
  listFacilityBatches,
  markFacilityBatchPieces,
  startFacilityBatch,
} from '../../../services/batches/facility';

const TAGS = ['Facility: batch mail'];
const CONFLICT = {
  description: 'BATCH_STATE_CONFLICT: the batch is not in a state that allows this step',
};
const NOT_FOUND = { description: 'Not a batch of this facility' };
const REUSED = {
  description: 'IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was used with another request',
};
/** Every step takes an optional Idempotency-Key: a retry answers the first answer, the step is applied once. */
const STEP = { requestHeaders: IDEMPOTENCY_KEY_HEADER };

export const routes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/v1/facility/batches',
    summary: 'Batches to fulfil (default: submitted and in_progress), oldest submission first',
    tags: TAGS,
    query: FacilityListQuery,
    responses: { 200: { description: 'Batches', schema: BatchListResponse } },
    handler: async ({ deps, auth, query }) => ({ body: await listFacilityBatches(deps, auth, query) }),
  }),

  defineRoute({
    method: 'get',
    path: '/v1/facility/batches/:id',
    summary: 'A batch with signed download URLs (1 hour) for the template and the print manifest',
    description:
      'files.merged says whether the batch is merged: each piece of a merged batch prints its own PDF, fetched from ' +
      'files.piece_documents (`/v1/facility/batches/{id}/pieces/{batch_sequence}/document`); the manifest has a document_key column then. ' +
      'Every piece of any other batch prints files.template_url.',
    tags: TAGS,
    params: BatchIdParams,
    responses: { 200: { description: 'Batch and files', schema: FacilityBatchResponse }, 404: NOT_FOUND },
    handler: async ({ deps, auth, params }) => ({ body: await getFacilityBatch(deps, auth, params.id) }),
  }),

  defineRoute({
    method: 'get',
    path: '/v1/facility/batches/:id/pieces/:sequence/document',
    summary: "A merged batch's piece: its own PDF (signed URL, 1 hour) and pages",
    description:
      "Merged batches only (files.merged): the PDF rendered from the template with this batch_sequence's row, as named in the " +
      "manifest's document_key column. Non-merged batches print files.template_url for every piece (404 here).",
    tags: TAGS,
    params: FacilityPieceParams,
    responses: {
      200: { description: "The piece's document", schema: FacilityPieceDocumentResponse },
      400: { description: 'fields[] params.sequence: not a positive integer (a batch_sequence)' },
      404: {
        description:
          'Not a batch of this facility, not a merged batch (every piece prints files.template_url), or no piece with this ' +
          'batch_sequence (rows skipped at render have none)',
      },
    },
    handler: async ({ deps, auth, params }) => ({
      body: await getFacilityBatchPieceDocument(deps, auth, params.id, params.sequence),
    }),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/facility/batches/:id/start',
    summary: 'Start printing: submitted -> in_progress (the member can no longer cancel)',
    tags: TAGS,
    params: BatchIdParams,
    ...STEP,
    responses: {
      200: { description: 'Started', schema: FacilityStateResponse },
      404: NOT_FOUND,
      409: CONFLICT,
      422: REUSED,
      ...WORKFLOW_UNAVAILABLE_RESPONSE,
    },
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/batches/:id/start', async (key) => ({
        body: await startFacilityBatch(args.deps, args.auth, args.params.id, { idempotencyKey: key }),
      })),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/facility/batches/:id/pieces',
    summary: 'Mark pieces mailed or failed by batch_sequence ranges or lists',
    description: 'Only while in_progress. Repeating a mark changes nothing; marking a piece the other way corrects it.',
    tags: TAGS,
    params: BatchIdParams,
    body: MarkPiecesBody,
    ...STEP,
    responses: {
      200: { description: 'Marked', schema: MarkPiecesResponse },
      400: { description: 'Validation' },
      404: NOT_FOUND,
      409: CONFLICT,
      422: REUSED,
      ...WORKFLOW_UNAVAILABLE_RESPONSE,
    },
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/batches/:id/pieces', async (key) => ({
        body: await markFacilityBatchPieces(args.deps, args.auth, args.params.id, args.body, { idempotencyKey: key }),
      })),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/facility/batches/:id/finish',
    summary:
      'Finish fulfilment: completed when every piece is mailed, partially_completed (unmailed share refunded) when some are, failed when none are',
    description:
      'Pieces not marked mailed count as failed. Refund for a partial batch: floor(charged x unmailed / pieces).',
    tags: TAGS,
    params: BatchIdParams,
    body: FinishBody,
    ...STEP,
    responses: {
      200: { description: 'Finished', schema: FinishResponse },
      404: NOT_FOUND,
      409: CONFLICT,
      422: REUSED,
      ...WORKFLOW_UNAVAILABLE_RESPONSE,
    },
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/batches/:id/finish', async (key) => ({
        body: await finishFacilityBatch(args.deps, args.auth, args.params.id, args.body, { idempotencyKey: key }),
      })),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/facility/batches/:id/fail',
    summary: 'The facility cannot fulfil the batch: failed with a full refund',
    tags: TAGS,
    params: BatchIdParams,
    body: FailBody,
    ...STEP,
    responses: {
      200: { description: 'Failed', schema: FailResponse },
      404: NOT_FOUND,
      409: CONFLICT,
      422: REUSED,
      ...WORKFLOW_UNAVAILABLE_RESPONSE,
    },
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/facility/batches/:id/fail', async (key) => ({
        body: await failFacilityBatch(args.deps, args.auth, args.params.id, args.body, { idempotencyKey: key }),
      })),
  }),
];
