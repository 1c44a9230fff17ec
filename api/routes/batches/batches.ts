// Batch mail: estimate, draft creation (template PDF + recipients CSV), reads, confirm,
// cancel and the sandbox advance.
import { defineRoute, RouteDef } from '../../route';
import { WORKFLOW_UNAVAILABLE_RESPONSE } from '../../schemas/common';
import {
  AdvanceResponse,
  BatchDetailResponse,
  BatchIdParams,
  BatchListResponse,
  CancelResponse,
  ConfirmResponse,
  CreateBatchForm,
  CreateBatchResponse,
  EstimateBody,
  EstimateResponse,
  ListBatchesQuery,
} from './batches.schemas';
import { estimateBatch } from '../../../services/batches/estimate';
import { batchCreateFingerprint, createBatchDraft, TEMPLATE_MAX_BYTES } from '../../../services/batches/drafts';
import { getBatch, listBatches } from '../../../services/batches/batch-view';
import { confirmBatch } from '../../../services/batches/confirm';
import { cancelBatch } from '../../../services/batches/cancel';
import { advanceTestBatch } from '../../../services/batches/sandbox-advance';
import { RECIPIENTS_CSV_MAX_BYTES } from '../../../domain/batches/recipients-csv';
import { requestFingerprint, runIdempotent } from '../../../services/shared/idempotency';
import { IDEMPOTENCY_KEY_HEADER, idempotentRoute } from '../../idempotent';

const TAGS = ['Batch mail'];
const VERSION_HEADER = { 'X-Service-MD-Version': 'Agent keys: the current instructions version' };
const IDEMPOTENT = { ...VERSION_HEADER, 'Idempotency-Key': 'Retries with the same key replay the first answer' };

export const routes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/v1/batch-mail/estimate',
    summary: 'Price a batch before uploading anything',
    description:
      'Per-piece price by mail type and mailing class, +15 cents for color, volume discount 5% at 500+, 10% at 1,000+, 15% at 5,000+ pieces. ' +
      'discount_cents = round-half-up(subtotal_cents x volume_discount_pct / 100); total_cents = subtotal_cents - discount_cents; confirm debits exactly total_cents.',
    tags: TAGS,
    body: EstimateBody,
    responses: {
      200: { description: 'Estimate', schema: EstimateResponse },
      400: {
        description: 'Validation, BATCH_TEMPLATE_PAGES_INVALID or BATCH_MARKETING_MAIL_MINIMUM',
      },
    },
    handler: async ({ auth, body }) => ({ body: estimateBatch(auth, body) }),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/batch-mail',
    summary: 'Create a priced draft from a template PDF and a recipients CSV',
    description:
      'Nothing is charged. Template checks (PDF, <= 10 MB, <= 200 pages, page count fits the mail type) run before anything is stored. ' +
      'Invalid and duplicate CSV rows are skipped and listed in recipients.skipped_rows; recipients.valid is the billed count. The draft expires after 7 days. ' +
      'Extension, merged batches: with template_id (one of your merge templates, optional template_version) or an HTML template file (.html or text/html) instead of a PDF, ' +
      'every row is merged (its CSV columns fill the variables by header name, values escaped; recipient_name, recipient_line1 ... are given too) and rendered by the letter renderer. ' +
      'A row that leaves a variable empty is skipped at once. The batch answers status rendering with merge.rows_rendered counting up; rows whose render fails or whose pages do not fit the mail type ' +
      'are then skipped (field template, with the reason) and never charged, the draft is priced at its longest piece, and the status becomes draft (or cancelled when no row rendered). ' +
      'Confirm answers 409 BATCH_MAIL_RENDERING until then; DELETE cancels a rendering batch at once.',
    tags: TAGS,
    body: CreateBatchForm,
    multipart: { maxFileBytes: { template: TEMPLATE_MAX_BYTES, recipients: RECIPIENTS_CSV_MAX_BYTES } },
    requestHeaders: IDEMPOTENT,
    responses: {
      201: { description: 'Draft created', schema: CreateBatchResponse },
      400: {
        description: 'Validation, BATCH_TEMPLATE_PAGES_INVALID or BATCH_MARKETING_MAIL_MINIMUM',
      },
      503: { description: 'Scheduling unavailable; nothing stored' },
    },
    handler: async ({ deps, auth, body, files, headers }) => {
      const input = { ...body, template: files.template, recipients: files.recipients };
      const result = await runIdempotent(
        deps,
        auth,
        {
          operation: 'batch.create',
          key: headers['idempotency-key'],
          fingerprint: await batchCreateFingerprint(input),
        },
        async () => ({ status: 201, body: await createBatchDraft(deps, auth, input) }),
      );
      return { status: result.status, body: result.body, headers: result.headers };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/v1/batch-mail',
    summary: 'List batches, newest first',
    description: "Test keys list test batches, live keys live ones; agent keys see their agent's batches only.",
    tags: TAGS,
    query: ListBatchesQuery,
    responses: { 200: { description: 'Batches', schema: BatchListResponse } },
    handler: async ({ deps, auth, query }) => ({ body: await listBatches(deps, auth, query) }),
  }),

  defineRoute({
    method: 'get',
    path: '/v1/batch-mail/:id',
    summary: 'A batch with its first 50 pieces',
    tags: TAGS,
    params: BatchIdParams,
    responses: {
      200: { description: 'Batch', schema: BatchDetailResponse },
      404: { description: 'Not found' },
    },
    handler: async ({ deps, auth, params }) => ({ body: await getBatch(deps, auth, params.id) }),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/batch-mail/:id/confirm',
    summary: 'Pay for a draft and start printing',
    description:
      'Debits pricing.total_cents once (test keys: nothing). Repeated or concurrent confirms return the current state without a second debit. ' +
      'Pieces are then generated and the batch moves to submitted by itself.',
    tags: TAGS,
    params: BatchIdParams,
    requestHeaders: IDEMPOTENT,
    responses: {
      200: { description: 'Confirmed', schema: ConfirmResponse },
      402: {
        description:
          'INSUFFICIENT_CREDITS with billing_url, credits_required_cents, credit_balance_cents, credit_shortfall_cents',
      },
      404: { description: 'Not found' },
      409: {
        description:
          'BATCH_MAIL_NOT_CONFIRMABLE (cancelled or expired draft), or BATCH_MAIL_RENDERING (a merged batch whose pieces are still being rendered)',
      },
      503: {
        description:
          'BATCH_GENERATION_DISPATCH_PENDING: the workflow did not take the confirmation within the deadline (WORKFLOW_UPDATE_DEADLINE_MS); retried automatically; repeating confirm never charges twice',
      },
    },
    handler: async ({ deps, auth, params, headers }) => {
      const result = await runIdempotent(
        deps,
        auth,
        {
          operation: 'batch.confirm',
          key: headers['idempotency-key'],
          fingerprint: requestFingerprint({ id: params.id }),
        },
        async () => ({
          status: 200,
          body: await confirmBatch(deps, auth, params.id, { idempotencyKey: headers['idempotency-key'] }),
        }),
      );
      return { status: result.status, body: result.body, headers: result.headers };
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/v1/batch-mail/:id',
    summary: 'Cancel a batch the facility has not started, with a full refund',
    description:
      'Allowed while draft, paid, generating or submitted. Idempotent: a repeat returns the same result and refunds nothing more.',
    tags: TAGS,
    params: BatchIdParams,
    requestHeaders: { ...VERSION_HEADER, ...IDEMPOTENCY_KEY_HEADER },
    responses: {
      200: { description: 'Cancelled', schema: CancelResponse },
      404: { description: 'Not found' },
      409: { description: 'BATCH_MAIL_NOT_CANCELLABLE (in_progress or finished)' },
      ...WORKFLOW_UNAVAILABLE_RESPONSE,
    },
    handler: (args) =>
      idempotentRoute(args, 'DELETE /v1/batch-mail/:id', async (key) => ({
        body: await cancelBatch(args.deps, args.auth, args.params.id, { idempotencyKey: key }),
      })),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/batch-mail/:id/advance',
    summary: 'Sandbox: move a submitted batch to in_progress, then to completed',
    description:
      'Completion marks every piece mailed and fires batch.completed. Each call is one more step: send an Idempotency-Key so a retried call replays the first answer.',
    tags: TAGS,
    params: BatchIdParams,
    requestHeaders: { 'Idempotency-Key': 'Retries with the same key replay the first answer (the batch moves once)' },
    responses: {
      200: { description: 'Advanced', schema: AdvanceResponse },
      404: { description: 'Not found' },
      409: { description: 'BATCH_ADVANCE_INVALID (not yet submitted, or already completed)' },
      ...WORKFLOW_UNAVAILABLE_RESPONSE,
    },
    handler: async ({ deps, auth, params, headers }) => {
      const result = await runIdempotent(
        deps,
        auth,
        {
          operation: 'batch.test_advance',
          key: headers['idempotency-key'],
          fingerprint: requestFingerprint({ id: params.id }),
        },
        async () => ({
          status: 200,
          body: await advanceTestBatch(deps, auth, params.id, { idempotencyKey: headers['idempotency-key'] }),
        }),
      );
      return { status: result.status, body: result.body, headers: result.headers };
    },
  }),
];
