// Request and response schemas of outbound mail (REST and, later, MCP). Multipart
// fields arrive as strings, so flags and numbers go through the form coercions; an
// empty form field counts as not sent.
import { z } from 'zod';
import {
  formBoolean,
  formInt,
  formJsonObject,
  multiLine,
  Pagination,
  PG_INT_MAX,
  singleLine,
  TestMode,
} from '../../schemas/common';
import { MAIL_CLASSES, MailClass, MAX_OUTBOUND_PAGES } from '../../../domain/outbound-mail/pricing';
import {
  isServedCountry,
  normaliseCountry,
  normaliseStateCode,
  normaliseZip,
} from '../../../domain/outbound-mail/address';
import {
  CANCELLATION_REASONS,
  DISPATCH_METHODS,
  MAIL_STATUSES,
  PHOTO_CATEGORIES,
} from '../../../domain/workflow-safe/mail-rules';
import { SEND_AFTER_FORMAT_MESSAGE, SEND_AFTER_MAX_DAYS } from '../../../domain/workflow-safe/send-after';

const emptyToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(emptyToUndefined, schema.optional());

const MAX_LINE = 200;
const MAX_NOTES = 2000;

/** Address lines and names print on one line: no line breaks or hidden characters (decision 0110). */
const requiredText = (max: number) => singleLine(z.string({ error: 'required' }).trim().min(1, 'required').max(max));
const optionalText = (max: number) => optional(singleLine(z.string().trim().min(1).max(max)));
const optionalNotes = (max: number) => optional(multiLine(z.string().trim().min(1).max(max)));

const stateCode = z.string({ error: 'required' }).transform((v, ctx) => {
  const code = normaliseStateCode(v);
  if (!code) ctx.addIssue({ code: 'custom', message: 'must be a 2-letter US state code' });
  return code ?? z.NEVER;
});
const zipCode = z.string({ error: 'required' }).transform((v, ctx) => {
  const zip = normaliseZip(v);
  if (!zip) ctx.addIssue({ code: 'custom', message: 'must be 5 digits or ZIP+4 (12345-6789)' });
  return zip ?? z.NEVER;
});
const country = optional(z.string()).transform((v, ctx) => {
  if (v === undefined) return 'US';
  const code = normaliseCountry(v);
  if (!code) {
    ctx.addIssue({ code: 'custom', message: 'must be an ISO 3166-1 alpha-2 country code' });
    return z.NEVER;
  }
  if (!isServedCountry(code)) {
    ctx.addIssue({
      code: 'custom',
      message: 'only US destinations (the states, DC, territories and freely associated states) are served',
    });
    return z.NEVER;
  }
  return code;
});
/** A link to another object of the caller's, in the key's environment (agent keys: their agent's); 400 otherwise. */
const link = (what: string) =>
  optional(z.string().uuid({ message: 'must be a UUID' })).describe(
    `${what} of yours, in this key's environment (agent keys: their agent's); any other id is refused with 400`,
  );
const flag = formBoolean.optional().default(false);
const mailClass = optional(z.enum(MAIL_CLASSES as [MailClass, ...MailClass[]])).transform((v) => v ?? 'first_class');
/** metadata is echoed in every response and webhook, so it is kept small (16 KiB as sent). */
const metadata = optional(formJsonObject());
/** Scheduled send (extension); the window (future, at most 180 days ahead) is checked by the service. */
const sendAfter = optional(z.string().datetime({ offset: true, message: SEND_AFTER_FORMAT_MESSAGE })).describe(
  `Extension (not in the spec): scheduled send. An ISO 8601 date-time with offset, in the future and at most ${SEND_AFTER_MAX_DAYS} days ahead ` +
    '(otherwise 400 at send_after). The piece is priced, checked and debited now like any other and stays submitted, but the facility does not see it ' +
    'before this time; until then DELETE cancels it with a full refund. Sandbox: the first advance skips the wait. Not combinable with mail_run_id.',
);

const addressFields = {
  recipient_name: optionalText(MAX_LINE),
  recipient_company: optionalText(MAX_LINE),
  recipient_line1: requiredText(MAX_LINE),
  recipient_line2: optionalText(MAX_LINE),
  recipient_city: requiredText(100),
  recipient_state: stateCode,
  recipient_zip: zipCode,
  recipient_country: country,
  return_name: optionalText(MAX_LINE),
  return_company: optionalText(MAX_LINE),
  return_line1: optionalText(MAX_LINE),
  return_line2: optionalText(MAX_LINE),
  return_city: optionalText(100),
  return_state: optional(stateCode),
  return_zip: optional(zipCode),
};

const pieceFields = {
  ...addressFields,
  mail_class: mailClass,
  color: flag,
  duplex: flag,
  package_id: link('an inbound package'),
  inbound_capture_id: link('a forwarded inbound mail item'),
  postal_mail_thread_id: link('a postal thread'),
  agent_notes: optionalNotes(MAX_NOTES),
  requires_approval: flag,
  metadata,
  allow_duplicate: flag,
  send_after: sendAfter,
  strict_address: formBoolean
    .optional()
    .describe(
      'extension, default false: refuse (400, fields[] naming the recipient fields) a recipient address the offline address check finds doubtful; otherwise the check is advice only',
    ),
};

interface CrossFieldInput {
  recipient_name?: string;
  recipient_company?: string;
  return_line1?: string;
  return_line2?: string;
  return_city?: string;
  return_state?: string;
  return_zip?: string;
  mail_run_id?: string;
  dry_run?: boolean;
  requires_approval?: boolean;
  send_after?: string;
}

function crossFieldRules(v: CrossFieldInput, ctx: z.RefinementCtx) {
  if (!v.recipient_name && !v.recipient_company) {
    ctx.addIssue({
      code: 'custom',
      path: ['recipient_name'],
      message: 'recipient_name or recipient_company is required',
    });
  }
  // A return address replaces the profile's as a whole: line1, city, state and zip together.
  const block = [v.return_line1, v.return_line2, v.return_city, v.return_state, v.return_zip];
  if (block.some((x) => x !== undefined)) {
    for (const field of ['return_line1', 'return_city', 'return_state', 'return_zip'] as const) {
      if (v[field] === undefined)
        ctx.addIssue({ code: 'custom', path: [field], message: 'required when a return address is sent' });
    }
  }
  if (v.mail_run_id !== undefined && v.dry_run)
    ctx.addIssue({ code: 'custom', path: ['mail_run_id'], message: 'cannot be combined with dry_run' });
  if (v.mail_run_id !== undefined && v.requires_approval)
    ctx.addIssue({ code: 'custom', path: ['mail_run_id'], message: 'cannot be combined with requires_approval' });
  if (v.mail_run_id !== undefined && v.send_after !== undefined)
    ctx.addIssue({ code: 'custom', path: ['send_after'], message: 'cannot be combined with mail_run_id' });
}

/** A letter merged from a template instead of a document (extension; docs/agents.md, Templates). */
const templateFields = {
  template_id: optional(
    z.string().regex(/^tmpl_[a-f0-9]{24}$/, { message: 'must be a template id: tmpl_ followed by 24 hex characters' }),
  ).describe(
    'extension: a merge template of your member instead of document; the letter is the template merged with merge_variables and rendered like an HTML letter',
  ),
  template_version: optional(formInt.pipe(z.number().int().min(1).max(PG_INT_MAX))).describe(
    'extension: the version of template_id to merge (default: its current version)',
  ),
  merge_variables: optional(formJsonObject()).describe(
    "extension: values of the template's variables (a JSON object; in multipart a JSON string field). A variable the template uses and this does not give " +
      'is a 400 with one fields[] entry per name (merge_variables.<name>), before anything is priced, stored or charged.',
  ),
};

function templateRules(
  v: { template_id?: string; template_version?: number; merge_variables?: unknown },
  ctx: z.RefinementCtx,
) {
  if (v.template_id === undefined && v.template_version !== undefined)
    ctx.addIssue({ code: 'custom', path: ['template_version'], message: 'only with template_id' });
  if (v.template_id === undefined && v.merge_variables !== undefined)
    ctx.addIssue({ code: 'custom', path: ['merge_variables'], message: 'only with template_id' });
}

/** POST /v1/mail multipart fields (the file `document` is read separately). */
export const SubmitMailForm = z
  .strictObject({
    ...pieceFields,
    page_count: optional(formInt.pipe(z.number().int().min(1).max(MAX_OUTBOUND_PAGES))).describe(
      'DOCX, TXT and CSV only: the page count that prices the piece instead of the one counted (a DOCX is still laid out and printed as it lays out; a dry run warns page_count_differs_from_layout when they differ); a 400 for PDF, images, HTML and Markdown, whose pages are counted',
    ),
    mail_run_id: optionalText(100).describe(
      'an open Business mail run of your agent (live agent keys); any other id is refused with 400',
    ),
    dry_run: flag,
    ...templateFields,
  })
  .superRefine(crossFieldRules)
  .superRefine(templateRules);

/** POST /v1/test/mail JSON: a sandbox piece whose document is a simulated letter of page_count pages. */
export const TestMailBody = z
  .strictObject({
    ...pieceFields,
    page_count: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe('pages of the simulated letter (default 1); not with template_id'),
    ...templateFields,
  })
  .superRefine(crossFieldRules)
  .superRefine(templateRules)
  .superRefine((v, ctx) => {
    if (v.template_id !== undefined && v.page_count !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['page_count'],
        message: 'the merged letter is counted; send template_id or page_count, not both',
      });
  });

export const SubmitMailQuery = z.object({ agent_id: optional(z.string().uuid({ message: 'must be a UUID' })) });

const BooleanQuery = z.enum(['true', 'false']).transform((v) => v === 'true');

export const ListMailQuery = z.strictObject({
  q: optional(z.string().max(200)),
  status: optional(z.enum(MAIL_STATUSES)),
  created_after: optional(z.string()),
  created_before: optional(z.string()),
  test_mode: optional(BooleanQuery),
  agent_id: optional(z.string().uuid({ message: 'must be a UUID' })),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).max(PG_INT_MAX).default(0),
});

export const UsageQuery = z.strictObject({
  period_start: optional(z.string().datetime({ offset: true, message: 'must be an ISO 8601 date-time' })),
  period_end: optional(z.string().datetime({ offset: true, message: 'must be an ISO 8601 date-time' })),
  agent_id: optional(z.string().uuid({ message: 'must be a UUID' })),
  test_mode: optional(BooleanQuery),
});

const Address = z.object({
  name: z.string().nullable(),
  company: z.string().nullable(),
  line1: z.string(),
  line2: z.string().nullable(),
  city: z.string(),
  state: z.string(),
  zip: z.string(),
  country: z.string(),
  formatted: z.string(),
});

export const CostBreakdownSchema = z.looseObject({
  total_cents: z.number().int(),
  handling_cents: z.number().int(),
  printing_cents: z.number().int(),
  printing_per_page_cents: z.number().int(),
  color_printing_per_page_cents: z.number().int(),
  color_surcharge_per_page_cents: z.number().int(),
  postage_cents: z.number().int(),
  postage_description: z.string(),
  page_count: z.number().int(),
  weight_oz: z.number(),
  zone: z.number().int(),
  rate_source: z.string(),
  first_class_baseline_adjustment_cents: z.number().int(),
  service_adjustment_cents: z.number().int(),
});

/** The offline recipient address check (services/outbound-mail/address-review.ts); an extension beyond the spec. */
export const AddressCheckSchema = z
  .object({
    deliverability: z
      .enum(['likely', 'doubtful', 'unknown'])
      .describe(
        'likely: ZIP, city and state agree in the offline ZIP directory (not a confirmation of delivery); doubtful: something looks wrong (see warnings); unknown: not checked (a non-US country) or a field is missing',
      ),
    normalized: z
      .object({ line1: z.string(), line2: z.string().nullable(), city: z.string(), state: z.string(), zip: z.string() })
      .describe('the address written the USPS way (Publication 28); advice only: the piece is printed as sent'),
    changes: z
      .array(
        z.object({
          field: z.enum(['line1', 'line2', 'city', 'state', 'zip']),
          from: z.string(),
          to: z.string().describe("'' when dropped"),
          reason: z.string(),
        }),
      )
      .describe('what normalisation changed, besides case and spacing'),
    warnings: z.array(
      z.object({
        code: z
          .string()
          .describe(
            'missing_field, state_unknown, zip_invalid, zip_unknown, zip_state_mismatch, zip_city_mismatch, military_city, military_zip_mismatch, military_city_state, country_state_mismatch or not_checked',
          ),
        field: z.enum(['line1', 'line2', 'city', 'state', 'zip', 'country']),
        message: z.string(),
      }),
    ),
  })
  .describe('extension: the offline check of the recipient address (no external service is called)');

export const FulfillmentPhotoSchema = z.object({
  category: z.enum(PHOTO_CATEGORIES),
  url: z.string().describe('signed, 1-hour expiry'),
  uploaded_at: z.string(),
});

export const HumanReviewSchema = z.object({
  send_to: Address,
  return_address: Address.nullable(),
  mail_class: z.string(),
  cost: z.object({
    cost_cents: z.number().int(),
    cost_display: z.string(),
    credits_required_cents: z.number().int(),
    estimated_live_cost_cents: z.number().int().optional(),
    charged: z.boolean(),
    refunded: z.boolean(),
  }),
  document: z.object({
    filename: z.string().nullable(),
    type: z.string(),
    content_type: z.string(),
    page_count: z.number().int(),
    page_count_source: z
      .string()
      .nullable()
      .describe(
        'how page_count was found: pdf, image, text_layout, html_layout, markdown_layout, docx_layout (the laid-out PDF) or override (page_count sent)',
      ),
    size_bytes: z.number().int(),
    sha256: z.string(),
    color: z.boolean(),
    duplex: z.boolean(),
    simulated: z.boolean(),
    source: z
      .object({
        type: z.enum(['html', 'markdown', 'docx']),
        filename: z.string().nullable(),
        content_type: z.string(),
        size_bytes: z.number().int(),
        sha256: z.string().describe('of the file as sent; duplicate protection compares it'),
        layout_page_count: z
          .number()
          .int()
          .describe('pages the letter laid out to; page_count differs only when an explicit page_count priced a DOCX'),
      })
      .nullable()
      .describe(
        'extension: what was sent when it was an HTML, Markdown or DOCX letter, laid out into the PDF this document describes (type pdf), which is what prints; null otherwise',
      ),
    template: z
      .object({ id: z.string(), version: z.number().int() })
      .nullable()
      .describe(
        'extension: the merge template and the version of it this letter was merged from (source type html); null otherwise',
      ),
  }),
  safeguards: z.record(z.string(), z.unknown()),
  preview_url: z.string(),
  next_step: z.string(),
});

export const MailRecordSchema = z.object({
  id: z.string().uuid(),
  object: z.literal('outbound_mail'),
  status: z
    .enum(MAIL_STATUSES)
    .describe('funding_pending: a Business mail run child waiting, not yet charged, for its run to be funded'),
  mail_class: z.string(),
  agent_id: z.string().nullable(),
  mailbox_id: z.string().nullable(),
  recipient_name: z.string().nullable(),
  recipient_company: z.string().nullable(),
  recipient_line1: z.string(),
  recipient_line2: z.string().nullable(),
  recipient_city: z.string(),
  recipient_state: z.string(),
  recipient_zip: z.string(),
  recipient_country: z.string(),
  return_name: z.string().nullable(),
  return_company: z.string().nullable(),
  return_line1: z.string().nullable(),
  return_line2: z.string().nullable(),
  return_city: z.string().nullable(),
  return_state: z.string().nullable(),
  return_zip: z.string().nullable(),
  page_count: z.number().int(),
  color: z.boolean(),
  duplex: z.boolean(),
  cost_cents: z.number().int().describe('0 for test records'),
  cost_display: z.string(),
  credits_required_cents: z.number().int(),
  estimated_live_cost_cents: z.number().int().optional().describe('only when test_mode is true'),
  cost_breakdown: CostBreakdownSchema,
  tracking_number: z.string().nullable(),
  carrier: z.string().nullable(),
  dispatch_method: z.string().nullable(),
  error_message: z.string().nullable(),
  carrier_delivery_failed: z.boolean(),
  failure_stage: z.enum(['carrier_delivery']).nullable(),
  failure_source: z.enum(['carrierx_tracking']).nullable(),
  cancellation_reason: z.enum(CANCELLATION_REASONS).nullable(),
  requires_approval: z.boolean(),
  approved_at: z.string().nullable(),
  submitted_at: z.string().nullable(),
  send_after: z
    .string()
    .nullable()
    .describe(
      'Extension (not in the spec): the scheduled send time; the facility does not see the piece before it. Null: sent at once.',
    ),
  ready_at: z.string().nullable(),
  mailed_at: z.string().nullable(),
  delivered_at: z.string().nullable(),
  failed_at: z.string().nullable(),
  cancelled_at: z.string().nullable(),
  created_at: z.string(),
  document_preview_url: z
    .string()
    .nullable()
    .describe('authenticated: GET it with your key; it redirects to a fresh signed URL of the document'),
  pdf_url: z.string().nullable().describe('only for PDF documents; signed, 1-hour expiry'),
  proof_url: z
    .string()
    .nullable()
    .describe(
      'extension: the print proof (the address page placed for a #10 double-window envelope, then the document as printed); signed, 1-hour expiry; set in the creation answer for a PDF of up to 10 pages (rendered by the submission), else null until the worker has rendered it',
    ),
  address_check: AddressCheckSchema.nullable().describe(
    'extension: the recipient address check at submission; null for pieces from before it',
  ),
  fulfillment_photos: z.array(FulfillmentPhotoSchema),
  human_review: HumanReviewSchema,
  package_id: z.string().nullable(),
  inbound_capture_id: z.string().nullable(),
  postal_mail_thread_id: z.string().nullable(),
  mail_run_id: z.string().nullable(),
  a2a_task_id: z
    .string()
    .uuid()
    .nullable()
    .describe('the A2A task (send_letter) this piece carries out; null for pieces sent otherwise'),
  agent_notes: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  test_mode: z.boolean(),
});

export const SubmittedMailSchema = MailRecordSchema.extend({
  credit_balance_cents: z.number().int().describe('the balance after this submission'),
});

export const DryRunSchema = z.object({
  dry_run: z.literal(true),
  cost_cents: z.number().int(),
  cost_display: z.string(),
  credits_required_cents: z.number().int(),
  estimated_live_cost_cents: z.number().int().optional(),
  cost_breakdown: CostBreakdownSchema,
  credit_balance_cents: z.number().int(),
  page_count: z
    .number()
    .int()
    .describe('the pages that price the piece: of an HTML, Markdown or DOCX letter, those it lays out to'),
  mail_class: z.string(),
  send_after: z
    .string()
    .nullable()
    .describe('Extension (not in the spec): the send_after a real submission would be scheduled for (UTC)'),
  warnings: z
    .array(z.looseObject({ code: z.string(), message: z.string() }))
    .describe(
      "besides the spec's: recipient_address (one per address check warning, with check_code and field), print_proof and print_proof_unavailable; " +
        'for HTML, Markdown and DOCX letters document_resources_blocked (urls[]: what the renderer left out) and page_count_differs_from_layout (page_count, layout_page_count)',
    ),
  address_check: AddressCheckSchema,
  proof_url: z
    .string()
    .nullable()
    .describe(
      'extension: a signed link (1-hour expiry, no key needed) to the print proof of this piece as it would print, GET /v1/mail/dry-run-proofs/{token}; its first GET renders it; null (with a print_proof_unavailable warning) when the document could not be read for it or stored',
    ),
  test_mode: z.boolean(),
});

export const MailListSchema = z.object({
  mail: z.array(MailRecordSchema),
  pagination: Pagination,
  test_mode: z.boolean(),
});

export const CancelResultSchema = z.object({
  outbound_mail: MailRecordSchema,
  refunded_credits_cents: z.number().int(),
  credit_balance_cents: z.number().int().nullable(),
  already_cancelled: z.boolean(),
  test_mode: z.boolean(),
});

export const ApproveResultSchema = z.object({
  outbound_mail: MailRecordSchema,
  credits_charged_cents: z.number().int(),
  credit_balance_cents: z.number().int().nullable(),
  test_mode: z.boolean(),
});

export const RejectResultSchema = z.object({ outbound_mail: MailRecordSchema, test_mode: z.boolean() });

// Facility side

export const FacilityMailQuery = z.strictObject({
  status: optional(z.enum(['submitted', 'ready', 'mailed', 'delivered', 'failed', 'cancelled'])),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).max(PG_INT_MAX).default(0),
});

export const DispatchedForm = z.strictObject({
  carrier: requiredText(50),
  tracking_number: optionalText(100),
  dispatch_method: z.enum(DISPATCH_METHODS),
});

export const FailedBody = z.strictObject({ message: multiLine(z.string().trim().min(1).max(1000)) });
export const CarrierDeliveryFailedBody = z.strictObject({
  message: optional(multiLine(z.string().trim().min(1).max(1000))),
});

export const FacilityMailItemSchema = z.object({
  id: z.string().uuid(),
  status: z.enum(MAIL_STATUSES),
  mail_class: z.string(),
  tracked: z.boolean().describe('a tracking number is required at dispatch'),
  recipient: Address,
  return_address: Address.nullable(),
  page_count: z.number().int(),
  color: z.boolean(),
  duplex: z.boolean(),
  agent_notes: z.string().nullable(),
  document: z.object({ type: z.string(), content_type: z.string(), size_bytes: z.number().int(), sha256: z.string() }),
  facility_id: z.string().nullable(),
  printing_started_at: z.string().nullable(),
  submitted_at: z.string().nullable(),
  ready_at: z.string().nullable(),
  mailed_at: z.string().nullable(),
  delivered_at: z.string().nullable(),
  carrier: z.string().nullable(),
  tracking_number: z.string().nullable(),
  dispatch_method: z.string().nullable(),
  error_message: z.string().nullable(),
  fulfillment_photos: z.array(FulfillmentPhotoSchema),
  created_at: z.string(),
});

/** One piece as the answer of its read or a facility step, with test_mode. */
export const FacilityMailItemResponse = FacilityMailItemSchema.extend(TestMode);

export const FacilityDocumentSchema = z.object({
  ...TestMode,
  url: z.string().describe('signed, 1-hour expiry'),
  expires_at: z.string(),
  content_type: z.string(),
  filename: z.string().nullable(),
  page_count: z.number().int(),
  color: z.boolean(),
  duplex: z.boolean(),
  proof_url: z
    .string()
    .nullable()
    .describe(
      'extension: the print proof the sender saw (address page first, then the document as it prints); signed, 1-hour expiry; null until rendered',
    ),
});

export const UsageSchema = z.object({
  period: z.object({ start: z.string(), end: z.string() }),
  summary: z.object({
    pieces: z.object({ total: z.number().int(), by_status: z.record(z.string(), z.number().int()) }),
    spend_cents: z.number().int(),
    refunds_cents: z.number().int(),
    net_spend_cents: z.number().int(),
    net_spend_display: z.string(),
  }),
  credits: z.object({
    balance_cents: z.number().int(),
    balance_display: z.string(),
    currency: z.literal('usd'),
    billing_url: z.string(),
  }),
  events: z.array(
    z.object({
      id: z.string(),
      kind: z.string(),
      amount_cents: z.number().int(),
      amount_display: z.string(),
      description: z.string().nullable(),
      reference_type: z.string().nullable(),
      reference_id: z.string().nullable(),
      created_at: z.string(),
    }),
  ),
  events_truncated: z.boolean(),
  test_mode: z.boolean().describe("the calling key's environment"),
});
