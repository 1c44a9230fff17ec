// Request and response schemas of batch mail (member, agent and facility routes).
import { z } from 'zod';
import { BATCH_MAILING_CLASSES, BATCH_MAIL_TYPES, BATCH_MAX_PIECES } from '../../../domain/batches/pricing';
import { DOUBTFUL_ROWS_SHOWN } from '../../../domain/batches/address-summary';
import { BATCH_STATUSES } from '../../../workflows/batches/contracts';
import { BATCH_ID_PATTERN } from '../../../services/batches/batch-view';
import { TEMPLATE_MAX_PAGES } from '../../../services/batches/drafts';
import {
  formBoolean,
  formInt,
  formJsonObject,
  Pagination,
  paginationQuery,
  multiLine,
  PG_INT_MAX,
  singleLine,
  textInt,
} from '../../schemas/common';
import { SEND_AFTER_FORMAT_MESSAGE, SEND_AFTER_MAX_DAYS } from '../../../domain/workflow-safe/send-after';

export const MailType = z.enum(BATCH_MAIL_TYPES);
export const MailingClass = z.enum(BATCH_MAILING_CLASSES);
export const BatchStatusEnum = z.enum(BATCH_STATUSES);

export const BatchIdParams = z.object({
  id: z.string().regex(BATCH_ID_PATTERN, { message: 'must be a batch id: bat_ followed by 24 hex characters' }),
});

export const EstimateBody = z.strictObject({
  mail_type: MailType,
  mailing_class: MailingClass,
  quantity: z.number().int().min(1).max(BATCH_MAX_PIECES),
  page_count: z
    .number()
    .int()
    .min(1)
    .max(TEMPLATE_MAX_PAGES)
    .optional()
    .describe('Template pages; defaults to the fewest the mail type takes'),
  color: z.boolean().default(false),
  duplex: z
    .boolean()
    .default(false)
    .describe('Printing on both sides doubles the pages postcards, flyers and letters take'),
});

const PriceFields = {
  per_piece_cents: z.number().int(),
  color_surcharge_cents: z.number().int(),
  effective_per_piece_cents: z.number().int(),
  volume_discount_pct: z.number().int(),
  subtotal_cents: z.number().int(),
  discount_cents: z.number().int(),
  total_cents: z.number().int(),
};

export const EstimateResponse = z.object({
  estimate: z.object({
    mail_type: MailType,
    mailing_class: MailingClass,
    quantity: z.number().int(),
    page_count: z.number().int(),
    color: z.boolean(),
    duplex: z.boolean(),
    ...PriceFields,
    credits_required_cents: z.number().int(),
    sandbox: z.boolean(),
  }),
  test_mode: z.boolean(),
});

export const ColumnMapSchema = z
  .strictObject({
    name: z.string().min(1).optional(),
    line1: z.string().min(1).optional(),
    line2: z.string().min(1).optional(),
    city: z.string().min(1).optional(),
    state: z.string().min(1).optional(),
    zip: z.string().min(1).optional(),
  })
  .describe('Maps a recipient field to the header text of a CSV column');

export const CreateBatchForm = z.strictObject({
  job_name: singleLine(z.string().trim().min(1).max(200)),
  template_id: z
    .string()
    .regex(/^tmpl_[a-f0-9]{24}$/, { message: 'must be a template id: tmpl_ followed by 24 hex characters' })
    .optional()
    .describe(
      'Extension: a merged batch. One of your merge templates instead of the template file; every CSV row is merged into it ' +
        '(its columns fill the variables by header name) and rendered. See the batch status rendering.',
    ),
  template_version: formInt
    .pipe(z.number().int().min(1).max(PG_INT_MAX))
    .optional()
    .describe('Extension: the version of template_id (default: its current version)'),
  mail_type: MailType,
  mailing_class: MailingClass,
  duplex: formBoolean.default(false),
  color: formBoolean.default(false).describe('Color printing, +15 cents per piece'),
  column_map: formJsonObject()
    .pipe(ColumnMapSchema)
    .optional()
    .describe(
      'JSON object mapping name, line1, line2, city, state, zip to CSV header text, e.g. {"name":"Customer","zip":"PLZ"}',
    ),
  send_after: z
    .string()
    .datetime({ offset: true, message: SEND_AFTER_FORMAT_MESSAGE })
    .optional()
    .describe(
      `Extension (not in the spec): scheduled send. An ISO 8601 date-time with offset, in the future and at most ${SEND_AFTER_MAX_DAYS} days ahead ` +
        '(otherwise 400 at send_after). Confirm still debits at once; once its pieces are generated the batch stays submitted but the facility does not see it ' +
        'before this time, and DELETE cancels it with a full refund until then. A time already passed at confirm holds nothing. Sandbox: the first advance skips the wait.',
    ),
});

export const SkippedRowSchema = z.object({
  row: z.number().int().describe('Spreadsheet row number: the header is row 1, the first data row is row 2'),
  field: z.string(),
  value: z.string(),
  error: z.string(),
});

const BatchAddressCheckSchema = z.object({
  likely: z.number().int().describe('Valid recipients whose ZIP, city and state agree in the offline ZIP directory'),
  doubtful: z.number().int().describe('Valid recipients whose address looks wrong (see doubtful_rows)'),
  unknown: z.number().int().describe('Valid recipients that could not be judged'),
  doubtful_rows: z
    .array(
      z.object({
        row: z.number().int().describe('The CSV row number the recipient came from, as in skipped_rows'),
        warnings: z.array(z.string()),
      }),
    )
    .describe(`The first ${DOUBTFUL_ROWS_SHOWN} doubtful recipients with their warnings`),
});

export const BatchObject = z.object({
  id: z.string(),
  job_name: z.string(),
  mail_type: MailType,
  mailing_class: MailingClass,
  status: BatchStatusEnum,
  test_mode: z.boolean(),
  agent_id: z.string().nullable(),
  page_count: z.number().int(),
  duplex: z.boolean(),
  color: z.boolean(),
  recipients: z.object({
    total_rows: z.number().int(),
    valid: z.number().int(),
    skipped: z.number().int(),
    skipped_rows: z.array(SkippedRowSchema),
    address_check: BatchAddressCheckSchema.nullable().describe(
      'Extension (not in the spec): the offline US address check of the valid recipients at draft time. Advice only: no row is skipped and the price is unchanged. Null for batches from before it.',
    ),
  }),
  pieces: z.object({
    total: z.number().int(),
    created: z.number().int(),
    mailed: z.number().int(),
    failed: z.number().int(),
  }),
  merge: z
    .object({
      template_id: z.string().nullable().describe('The merge template, or null for an HTML template file'),
      template_version: z.number().int().nullable(),
      rows_to_render: z
        .number()
        .int()
        .describe('CSV rows that reached rendering (valid addresses with every variable given)'),
      rows_rendered: z
        .number()
        .int()
        .describe('Rows rendered so far (rendered or skipped); equal to rows_to_render once the batch is a draft'),
    })
    .nullable()
    .describe(
      'Extension: a merged batch (every row rendered from a template), or null. While status is rendering, rows_rendered counts up; ' +
        'rows whose render failed or whose pages do not fit the mail type are then in recipients.skipped_rows (field template) and never charged.',
    ),
  pricing: z.object({ ...PriceFields, credits_charged: z.boolean(), refunded_cents: z.number().int() }),
  facility_notes: z.string().nullable(),
  error_message: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  expires_at: z.string().describe('When an unconfirmed draft expires'),
  confirmed_at: z.string().nullable(),
  submitted_at: z.string().nullable(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  cancelled_at: z.string().nullable(),
  send_after: z
    .string()
    .nullable()
    .describe(
      'Extension (not in the spec): the scheduled send time; the facility does not see the batch before it. Null: at once.',
    ),
});

export const NextStep = z.object({ action: z.string(), url: z.string(), hint: z.string() });

export const BatchPiece = z.object({
  batch_sequence: z.number().int(),
  recipient_name: z.string(),
  recipient_city: z.string(),
  recipient_state: z.string(),
  recipient_zip: z.string(),
  status: z.enum(['created', 'mailed', 'failed', 'cancelled']),
  mailed_at: z.string().nullable(),
});

export const CreateBatchResponse = z.object({ batch: BatchObject, next_step: NextStep, test_mode: z.boolean() });

export const ListBatchesQuery = z.object({
  status: BatchStatusEnum.optional(),
  agent_id: z.string().uuid().optional().describe("Member keys: only this agent's batches; ignored for agent keys"),
  ...paginationQuery(),
});

export const BatchListResponse = z.object({
  batches: z.array(BatchObject),
  pagination: Pagination,
  test_mode: z.boolean(),
});
export const BatchDetailResponse = z.object({
  batch: BatchObject,
  pieces: z.array(BatchPiece),
  test_mode: z.boolean(),
});

export const ConfirmResponse = z.object({
  batch: BatchObject,
  credits_charged_cents: z.number().int(),
  credit_balance_cents: z.number().int(),
  already_confirmed: z.boolean(),
  sandbox: z.boolean(),
  next_step: NextStep,
  test_mode: z.boolean(),
});

export const CancelResponse = z.object({
  id: z.string(),
  status: z.literal('cancelled'),
  refunded_credits_cents: z.number().int(),
  already_cancelled: z.boolean(),
  batch: BatchObject,
  sandbox: z.boolean(),
  test_mode: z.boolean(),
});

export const AdvanceResponse = z.object({
  batch: BatchObject,
  previous_status: BatchStatusEnum,
  sandbox: z.boolean(),
  test_mode: z.boolean(),
});

// Facility

export const FacilityListQuery = z.object({
  status: BatchStatusEnum.optional().describe('Default: submitted and in_progress'),
  ...paginationQuery(),
});

export const FacilityBatchResponse = z.object({
  batch: BatchObject,
  files: z.object({
    template_url: z.string(),
    recipients_url: z
      .string()
      .nullable()
      .describe('Valid recipients in print order: batch_sequence,name,address,address2,city,state,zip'),
    original_recipients_url: z.string(),
    expires_at: z.string(),
    merged: z
      .boolean()
      .describe(
        'Extension: true for a merged batch, whose pieces each print their own PDF (see piece_documents); false: every piece prints template_url',
      ),
    piece_documents: z
      .string()
      .nullable()
      .describe(
        "Extension, merged batches: the path that answers one piece's PDF, `/v1/facility/batches/{id}/pieces/{batch_sequence}/document` " +
          "with the id filled in (the manifest's batch_sequence goes in place of {batch_sequence}); null for other batches",
      ),
  }),
  test_mode: z.boolean(),
});

export const FacilityPieceParams = BatchIdParams.extend({
  sequence: textInt(1, BATCH_MAX_PIECES).describe("The piece's batch_sequence (1..recipients.valid)"),
});

export const FacilityPieceDocumentResponse = z.object({
  batch_id: z.string(),
  batch_sequence: z.number().int(),
  pages: z.number().int().describe("The piece's pages as rendered"),
  document_url: z.string().describe("The piece's own PDF (its row merged into the template); signed, 1-hour expiry"),
  expires_at: z.string(),
  test_mode: z.boolean(),
});

const Sequence = z.number().int().min(1).max(BATCH_MAX_PIECES);

export const MarkPiecesBody = z
  .strictObject({
    status: z.enum(['mailed', 'failed']),
    ranges: z
      .array(z.strictObject({ from: Sequence, to: Sequence }))
      .max(1000)
      .optional(),
    sequences: z.array(Sequence).max(BATCH_MAX_PIECES).optional(),
    reason: z.string().max(500).optional().describe('Why pieces failed'),
  })
  .refine((b) => (b.ranges?.length ?? 0) + (b.sequences?.length ?? 0) > 0, {
    message: 'send ranges or sequences',
    path: ['ranges'],
  });

export const FinishBody = z.strictObject({ facility_notes: z.string().max(5000).optional() });
export const FailBody = z.strictObject({
  error_message: multiLine(z.string().trim().min(1).max(1000)),
  facility_notes: z.string().max(5000).optional(),
});

export const FacilityStateResponse = z.object({ batch: BatchObject, test_mode: z.boolean() });
export const MarkPiecesResponse = z.object({ batch: BatchObject, updated: z.number().int(), test_mode: z.boolean() });
export const FinishResponse = z.object({
  batch: BatchObject,
  refunded_credits_cents: z.number().int(),
  already_finished: z.boolean(),
  test_mode: z.boolean(),
});
export const FailResponse = z.object({
  batch: BatchObject,
  refunded_credits_cents: z.number().int(),
  already_failed: z.boolean(),
  test_mode: z.boolean(),
});
