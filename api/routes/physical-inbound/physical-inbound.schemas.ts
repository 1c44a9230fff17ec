// Schemas of physical inbound: packages, managed mailbox items, the agent inbox, handling
// operations and the facility's intake and scan endpoints. Query objects are strict
// (unknown parameters are a 400) and a parameter given twice is a 400 too.
import { z } from 'zod';
import {
  FORWARD_MAIL_CLASSES,
  HANDLING_ACTION_TYPES,
  HANDLING_STATUSES,
  PACKAGE_ACTION_STATUSES,
  PACKAGE_ACTIONS,
} from '../../../domain/workflow-safe/handling';
import { PACKAGE_PHOTO_TYPES } from '../../../services/physical-inbound/packages';
import { SEED_SCENARIOS } from '../../../services/physical-inbound/agent-inbox';
import {
  ExpectedVersion,
  FreeFormJson,
  multiLine,
  PG_INT_MAX,
  singleLine,
  withoutHiddenCharacters,
  TestMode,
} from '../../schemas/common';

export const PACKAGE_STATUSES = [
  'received',
  'stored',
  'held',
  'forwarding_requested',
  'forwarding_shipped',
  'forwarded',
  'returning',
  'shredded',
  'disposed',
  'returned',
  'expired',
] as const;

const once = (iss: { input?: unknown }) => (Array.isArray(iss.input) ? 'may be given only once' : undefined);

/** A single-valued string query parameter. */
export const qString = () => z.string({ error: once });
export const qEnum = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: (iss) => once(iss) ?? `must be one of ${values.join(', ')}` });
export const qUuid = () => z.uuid({ error: (iss) => once(iss) ?? 'must be a UUID' });
export function qInt(min: number, max: number, fallback: number) {
  const message = `must be one integer from ${min} to ${max}`;
  return z.coerce
    .number({ error: message })
    .int({ message })
    .min(min, { message })
    .max(max, { message })
    .default(fallback);
}
/** ISO 8601 date-time (with offset) or YYYY-MM-DD (midnight UTC). */
export const qInstant = () =>
  z
    .union([z.iso.datetime({ offset: true }), z.iso.date()], {
      error: (iss) => once(iss) ?? 'must be an ISO 8601 date-time or YYYY-MM-DD',
    })
    .transform((s) => new Date(s.length === 10 ? `${s}T00:00:00Z` : s));

export const IdParam = z.object({ id: z.uuid({ message: 'must be a UUID' }) });
export const PackageActionParams = z.object({
  id: z.uuid({ message: 'must be a UUID' }),
  actionId: z.uuid({ message: 'must be a UUID' }),
});
export const ScanOperationParams = z.object({
  id: z.uuid({ message: 'must be a UUID' }),
  operationId: z.uuid({ message: 'must be a UUID' }),
});

const Instant = z.string().describe('ISO 8601 date-time');
export const PageInfo = z.object({
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  has_more: z.boolean(),
  next_offset: z.number().int().nullable().optional(),
});

// ---------------------------------------------------------------------------------------
// Shared views

export const OcrPage = z.object({
  page_id: z.string(),
  page_number: z.number().int(),
  source_sha256: z.string(),
  status: z.enum(['queued', 'processing', 'ready', 'needs_review', 'failed']),
  text: z.string().nullable(),
  is_blank: z.boolean(),
  confidence: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .describe(
      'mean word confidence of the OCR engine (0-1); below 0.85 the page is needs_review; null for template OCR and unfinished pages',
    ),
  uncertain_spans: z.array(z.object({ text: z.string(), reason: z.string() })),
  provider: z.string().nullable(),
  model: z.string().nullable(),
  completed_at: Instant.nullable(),
  attempts: z.number().int(),
  error_code: z
    .enum(['provider_unavailable', 'invalid_output', 'source_invalid', 'timeout', 'access_revoked', 'worker_failed'])
    .nullable(),
  provenance: z
    .object({
      kind: z.literal('template_ocr'),
      template_version: z.number().int(),
      source_sha256: z.string(),
      transcript_sha256: z.string(),
      extracted_at: Instant,
    })
    .optional(),
});
export const OcrRecord = z.object({
  content_trust: z.literal('untrusted_document'),
  id: z.string(),
  status: z.string().nullable(),
  model: z.string().nullable(),
  created_at: Instant,
  pages: z.array(OcrPage),
});
export const ScanSummary = z.object({
  request_id: z.string(),
  bundle_id: z.string(),
  created_at: Instant,
  page_count: z.number().int(),
  ocr_status: z.enum(['queued', 'processing', 'ready', 'needs_review', 'failed']).nullable(),
});
export const Quote = z.object({
  action_type: z.string(),
  amount_cents: z.number().int(),
  currency: z.literal('usd'),
  display: z.string(),
  handling_cents: z.number().int(),
  postage_cents: z.number().int(),
  estimated_live_cost_cents: z.number().int().optional().describe('test keys: what a live key would be quoted'),
});
export const HandlingOperation = z.object({
  object: z.literal('handling_operation'),
  id: z.string(),
  item_id: z.string(),
  agent_id: z.string().nullable(),
  environment: z.enum(['live', 'test']),
  origin: z.enum(['agent', 'member']),
  action_type: z.enum(['forward_original', 'open_and_scan', 'discard']),
  status: z.enum(HANDLING_STATUSES),
  version: z.number().int(),
  mail_class: z.enum(FORWARD_MAIL_CLASSES).nullable(),
  untracked_acknowledged: z.boolean(),
  destination: z.record(z.string(), z.unknown()).nullable(),
  quote: z.object({ amount_cents: z.number().int(), currency: z.literal('usd'), display: z.string() }),
  charged_cents: z.number().int(),
  refunded_cents: z.number().int(),
  destructive_confirmed: z.boolean(),
  scan_request_id: z.string().nullable(),
  tracking_number: z.string().nullable(),
  attestation: z.string().nullable(),
  rejection_reason: z.string().nullable(),
  rejected_by: z.string().nullable(),
  created_at: Instant,
  updated_at: Instant,
  approved_at: Instant.nullable(),
  accepted_at: Instant.nullable(),
  completed_at: Instant.nullable(),
  rejected_at: Instant.nullable(),
});

// ---------------------------------------------------------------------------------------
// Packages

export const PackageListQuery = z.strictObject({
  agent_id: qUuid().optional().describe('required for member keys; ignored for agent keys'),
  mailbox_id: qString().max(40).optional(),
  status: qEnum(PACKAGE_STATUSES).optional(),
  carrier: qString().max(60).optional(),
  since: qInstant().optional().describe('received at or after'),
  before: qInstant().optional().describe('received at or before'),
  limit: qInt(1, 100, 20),
  offset: qInt(0, PG_INT_MAX, 0),
});
export const PackageSummary = z.object({
  id: z.string(),
  mailbox_id: z.string().nullable(),
  agent_id: z.string().nullable(),
  tracking_number: z.string().nullable(),
  carrier: z.string().nullable(),
  weight_oz: z.number().nullable(),
  status: z.enum(PACKAGE_STATUSES),
  received_at: Instant,
  photos_count: z.number().int(),
  kind: z.enum(['letter', 'parcel']),
  reference_code: z.string(),
});
export const PackageList = z.object({ ...TestMode, packages: z.array(PackageSummary), pagination: PageInfo });
export const PackagePhoto = z.object({
  id: z.string(),
  photo_type: z.enum(PACKAGE_PHOTO_TYPES),
  content_type: z.string(),
  size_bytes: z.number().int(),
  sha256: z.string(),
  url: z.string().describe('signed, 1-hour expiry'),
  url_expires_at: Instant,
  created_at: Instant,
  scan: z
    .object({ request_id: z.string(), bundle_id: z.string(), page_number: z.number().int(), source_kind: z.string() })
    .nullable(),
  ocr: z
    .object({
      status: z.string(),
      text: z.string().nullable(),
      is_blank: z.boolean(),
      uncertain_spans: z.array(z.object({ text: z.string(), reason: z.string() })),
      provider: z.string().nullable(),
      model: z.string().nullable(),
      completed_at: Instant.nullable(),
      attempts: z.number().int(),
      error_code: z.string().nullable(),
    })
    .nullable(),
});
export const PackagePhotosQuery = z.strictObject({ photo_type: qEnum(PACKAGE_PHOTO_TYPES).optional() });
export const PackageAction = z.object({
  id: z.string(),
  package_id: z.string(),
  action: z.enum(PACKAGE_ACTIONS),
  priority: z.enum(['low', 'normal', 'high', 'urgent']),
  parameters: z.record(z.string(), z.unknown()),
  status: z.enum(PACKAGE_ACTION_STATUSES),
  version: z.number().int(),
  requested_by: z.enum(['agent', 'member']),
  agent_notes: z.string().nullable(),
  agent_data: z.record(z.string(), z.unknown()).nullable(),
  clarification_question: z.string().nullable(),
  clarification_response: z.string().nullable(),
  decision_context: z.record(z.string(), z.unknown()).nullable(),
  result: z.record(z.string(), z.unknown()).nullable(),
  scan_request_id: z.string().nullable(),
  created_at: Instant,
  updated_at: Instant,
  completed_at: Instant.nullable(),
});
export const ForwardingRequest = z.object({
  id: z.string(),
  package_id: z.string(),
  action_id: z.string(),
  status: z.enum(PACKAGE_ACTION_STATUSES),
  to_name: z.string(),
  to_line1: z.string(),
  to_line2: z.string().nullable(),
  to_city: z.string(),
  to_state: z.string(),
  to_zip: z.string(),
  to_country: z.string(),
  carrier_preference: z.string().nullable(),
  service_level: z.string(),
  insurance: z.boolean(),
  signature_required: z.boolean(),
  tracking_number: z.string().nullable(),
  carrier: z.string().nullable(),
  created_at: Instant,
});
export const PackageDetail = z.object({
  ...TestMode,
  package: PackageSummary.extend({
    version: z.number().int(),
    label_data: z.object({
      carrier: z.string().nullable(),
      tracking_number: z.string().nullable(),
      weight_oz: z.number().nullable(),
      sender_name: z.string().nullable(),
      recipient_name: z.string().nullable(),
      mailbox_id: z.string().nullable(),
    }),
    photos: z.array(PackagePhoto),
    events: z.array(z.object({ id: z.string(), event_type: z.string(), detail: z.unknown(), created_at: Instant })),
    actions: z.array(PackageAction),
    forwarding_requests: z.array(ForwardingRequest),
    tags: z.array(z.string()),
    notes_count: z.number().int(),
    expected_shipment: z
      .object({
        id: z.string(),
        agent_id: z.string(),
        tracking_number: z.string(),
        carrier: z.string().nullable(),
        sender_name: z.string().nullable(),
        description: z.string().nullable(),
        expected_date: z.string().nullable(),
        arrival_action_id: z.string().nullable(),
      })
      .nullable()
      .describe(
        "the agent's expected shipment this package satisfied (GET /v1/expected-shipments/{id} for the record)",
      ),
  }),
});
export const ActionRequest = z.strictObject({
  action: z.enum(PACKAGE_ACTIONS),
  priority: z.enum(['low', 'normal', 'high', 'urgent']).default('normal'),
  parameters: FreeFormJson.optional().describe(
    'action-specific; forward: to_name, to_line1, to_line2, to_city, to_state, to_zip, to_country; scan: scan_type, options',
  ),
});
export const ActionPatchRequest = z.strictObject({
  agent_notes: withoutHiddenCharacters(z.string().max(10000), 'multi_line').optional(),
  agent_data: FreeFormJson.optional(),
  respond_to_clarification: multiLine(z.string().min(1).max(10000)).optional(),
  decision_context: z
    .strictObject({ mailbox_md_section: z.string().max(10000).optional(), reasoning: z.string().max(10000).optional() })
    .optional(),
});
const RequiredText = (max: number) =>
  singleLine(z.string({ error: 'is required' }).trim().min(1, { message: 'is required' }).max(max));
export const ForwardRequest = z.strictObject({
  to_name: RequiredText(100),
  to_line1: RequiredText(200),
  to_line2: withoutHiddenCharacters(z.string().max(200), 'single_line').optional(),
  to_city: RequiredText(100),
  to_state: RequiredText(50),
  to_zip: RequiredText(10),
  to_country: z.string().length(2).default('US'),
  carrier_preference: z.string().max(60).optional(),
  service_level: z.string().max(40).default('ground'),
  insurance: z.boolean().default(false),
  signature_required: z.boolean().default(false),
});
export const ScanRequestBody = z.strictObject({
  scan_type: z
    .enum(['label', 'envelope', 'document', 'content'], { error: 'must be one of label, envelope, document, content' })
    .default('document'),
  options: FreeFormJson.optional(),
});
export const ScanRequestView = z.object({
  id: z.string(),
  item_id: z.string(),
  agent_id: z.string().nullable(),
  scan_type: z.enum(['label', 'envelope', 'document', 'content']),
  origin: z.string(),
  package_action_id: z.string().nullable(),
  handling_id: z.string().nullable(),
  options: z.record(z.string(), z.unknown()),
  status: z.enum(['requested', 'fulfilled', 'rejected']),
  rejection_reason: z.string().nullable(),
  requested_at: Instant,
  fulfilled_at: Instant.nullable(),
  item: z.object({ reference_code: z.string(), kind: z.string(), mailbox_id: z.string().nullable() }).optional(),
});
const TagText = singleLine(z.string().trim().min(1).max(50));
export const TagBody = z.strictObject({ tag: TagText.optional(), label: TagText.optional(), name: TagText.optional() });
export const TagDeleteQuery = z.strictObject({ tag: qString().min(1).max(50).optional() });
export const TagList = z.object({
  ...TestMode,
  package_id: z.string(),
  tags: z.array(z.object({ tag: z.string(), created_at: Instant })),
});
const NoteText = multiLine(z.string().trim().min(1).max(10000));
export const NoteBody = z.strictObject({
  note: NoteText.optional(),
  text: NoteText.optional(),
  message: NoteText.optional(),
  metadata: FreeFormJson.optional(),
});
export const Note = z.object({
  id: z.string(),
  package_id: z.string(),
  note: z.string(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  author: z.enum(['agent', 'member']),
  agent_id: z.string().nullable(),
  created_at: Instant,
});
export const PageQuery = (max: number, fallback: number) =>
  z.strictObject({ limit: qInt(1, max, fallback), offset: qInt(0, 10000, 0) });

// ---------------------------------------------------------------------------------------
// Managed mailbox items

export const InboundItemListQuery = z.strictObject({
  q: qString().optional().describe('literal AND terms (NFKC, lower case); max 200 characters and 12 terms'),
  received_after: qInstant().optional().describe('inclusive'),
  received_before: qInstant().optional().describe('exclusive'),
  status: qEnum(PACKAGE_STATUSES).optional(),
  kind: qEnum(['letter', 'parcel'] as const).optional(),
  agent_id: qUuid().optional().describe('member keys: narrow to one agent'),
  limit: qInt(1, 50, 25),
  offset: qInt(0, 10000, 0),
});
export const ManagedItem = z.object({
  object: z.literal('inbound_item'),
  id: z.string(),
  reference_code: z.string(),
  kind: z.enum(['letter', 'parcel']),
  status: z.enum(PACKAGE_STATUSES),
  version: z.number().int(),
  environment: z.enum(['live', 'test']),
  source_domain: z.enum(['internal_team', 'sandbox', 'member_sample']),
  mailbox_id: z.string().nullable(),
  agent_id: z.string().nullable(),
  carrier: z.string().nullable(),
  tracking_number: z.string().nullable(),
  weight_oz: z.number().nullable(),
  sender_name: z.string().nullable(),
  recipient_name: z.string().nullable(),
  received_at: Instant,
  scan_count: z.number().int(),
  latest_scan: ScanSummary.nullable(),
  open_operation: z
    .object({ id: z.string(), action_type: z.string(), status: z.string(), version: z.number().int() })
    .nullable(),
  available_actions: z.array(z.literal('open_and_scan')),
  quotes: z.object({ open_and_scan: Quote }),
});
export const ManagedItemList = z.object({
  ...TestMode,
  items: z.array(ManagedItem),
  pagination: PageInfo,
  search: z.object({ query: z.string(), mode: z.literal('literal_and'), terms: z.array(z.string()) }).nullable(),
  filters: z.object({
    received_after: Instant.nullable(),
    received_before: Instant.nullable(),
    status: z.string().nullable(),
    kind: z.string().nullable(),
  }),
});
export const InboundActionBody = z.strictObject({
  action_type: z.literal('open_and_scan', { error: 'only open_and_scan can be requested' }),
  expected_version: ExpectedVersion,
  expected_quote: z
    .strictObject({
      amount_cents: z.number().int().min(0).max(PG_INT_MAX),
      currency: z.literal('usd'),
      display: z.string().optional(),
    })
    .optional()
    .describe('required for member keys: the quote shown to the member (item.quotes.open_and_scan)'),
});
export const InboundScans = z.object({
  ...TestMode,
  item_id: z.string(),
  scans: z.array(ScanSummary.extend({ ocr: OcrRecord.nullable() })),
});
export const ActivityQuery = z.strictObject({
  item_id: qUuid().optional(),
  agent_id: qUuid().optional(),
  limit: qInt(1, 100, 20),
  offset: qInt(0, 10000, 0),
});
export const ForwardQuoteQuery = z.strictObject({ mail_class: qEnum(FORWARD_MAIL_CLASSES).default('priority') });

// ---------------------------------------------------------------------------------------
// Agent inbox

export const AgentInboxListQuery = z.strictObject({
  q: qString()
    .optional()
    .describe(
      'literal AND search (needs agent.read): item id, reference, kind words, UTC receipt date, request/bundle/page ids, recipient, OCR',
    ),
  limit: qInt(1, 50, 25),
  offset: qInt(0, 10000, 0),
  received_after: qInstant().optional().describe('inclusive'),
  received_before: qInstant().optional().describe('exclusive'),
});
export const InboxItem = z.object({
  id: z.string(),
  reference_code: z.string(),
  item_kind: z.enum(['letter', 'parcel']),
  created_at: Instant,
});
export const Assignment = z.object({
  id: z.string(),
  item_id: z.string(),
  source_domain: z.enum(['internal_team', 'sandbox', 'member_sample']),
  environment: z.enum(['live', 'test']),
  agent_id: z.string(),
  revision: z.number().int(),
  assigned_at: Instant,
});
export const AgentInboxList = z.object({
  ...TestMode,
  schema_version: z.literal(1),
  environment: z.enum(['live', 'test']),
  items: z.array(z.object({ item: InboxItem, assignment: Assignment })),
  pagination: z.object({
    limit: z.number().int(),
    offset: z.number().int(),
    next_offset: z.number().int().nullable(),
    total: z.number().int(),
    has_more: z.boolean(),
  }),
  search: z.object({ query: z.string().nullable(), mode: z.literal('literal_and') }),
  filters: z.object({ received_after: Instant.nullable(), received_before: Instant.nullable() }),
});
export const AgentInboxContext = z.object({
  schema_version: z.literal(1),
  environment: z.enum(['live', 'test']),
  test_mode: z.boolean(),
  agent: z.object({ id: z.string(), name: z.string() }),
  assignment: Assignment,
  item: InboxItem,
  scan: z
    .object({
      request_id: z.string(),
      bundle_id: z.string(),
      created_at: Instant,
      pages: z.array(
        z.object({
          page_id: z.string(),
          page_number: z.number().int(),
          source_sha256: z.string(),
          source_kind: z.enum(['envelope', 'letter']),
        }),
      ),
    })
    .nullable(),
  ocr: OcrRecord.nullable(),
  instructions: z.object({ duties: z.string(), version: z.number().int(), hash: z.string() }),
  contract: z.object({
    version: z.literal('agent-inbox.v1'),
    instructions_path: z.string(),
    api_reference_path: z.literal('/api-docs'),
  }),
  policy: z.object({
    supported_actions: z.array(z.string()),
    physical_actions_enabled: z.literal(false),
    charges_enabled: z.literal(false),
  }),
  context_version: z.string().describe('SHA-256 (hex) of the canonical JSON of this context without context_version'),
});
export const SourcePage = z.object({
  document_id: z.string(),
  source_kind: z.enum(['exterior', 'contents', 'sample_letter']),
  request_id: z.string(),
  bundle_id: z.string(),
  page_id: z.string(),
  page_number: z.number().int(),
  source_sha256: z.string(),
  created_at: Instant,
  status: z.string().nullable(),
  text: z.string().nullable(),
  is_blank: z.boolean(),
  uncertain_spans: z.array(z.object({ text: z.string(), reason: z.string() })),
  model: z.string().nullable(),
  provider: z.string().nullable(),
});
export const AgentInboxSources = z.object({
  schema_version: z.literal(1),
  environment: z.enum(['live', 'test']),
  test_mode: z.boolean(),
  content_trust: z.literal('untrusted_document'),
  item: InboxItem,
  assignment: Assignment,
  pages: z.array(SourcePage),
  pagination: PageInfo,
});
export const AgentInboxScans = z.object({ ...TestMode, item_id: z.string(), scans: z.array(ScanSummary) });
export const AgentInboxScan = z.object({
  ...TestMode,
  item_id: z.string(),
  scan: ScanSummary.extend({ pages: z.array(SourcePage) }),
});
export const AgentInboxActivity = z.object({
  ...TestMode,
  environment: z.enum(['live', 'test']),
  activity: z.array(
    z.object({
      type: z.enum(['assigned', 'receipt', 'outcome']),
      id: z.string(),
      item_id: z.string(),
      assignment_id: z.string(),
      context_version: z.string().nullable(),
      outcome: z.string().nullable(),
      run_id: z.string().nullable(),
      note: z.string().nullable(),
      created_at: Instant,
    }),
  ),
  pagination: PageInfo,
});
export const AcknowledgmentBody = z.strictObject({
  outcome: z.enum(['processed', 'needs_review', 'failed']),
  context_version: z
    .string()
    .regex(/^[0-9a-f]{64}$/, { message: 'must be the 64-hex context_version of the context you read' }),
  run_id: singleLine(z.string().trim().min(1).max(200)).describe('your run or job id'),
  note: withoutHiddenCharacters(z.string().max(2000), 'multi_line').optional(),
});
export const Acknowledgment = z.object({
  ...TestMode,
  acknowledgment: z.object({
    id: z.string(),
    item_id: z.string(),
    assignment_id: z.string(),
    outcome: z.enum(['processed', 'needs_review', 'failed']),
    context_version: z.string(),
    run_id: z.string(),
    note: z.string().nullable(),
    created_at: Instant,
  }),
});
export const SeedBody = z.strictObject({ scenario: z.enum(SEED_SCENARIOS) });
export const SeedResult = z.object({
  ...TestMode,
  scenario: z.enum(SEED_SCENARIOS),
  item: InboxItem,
  assignment: Assignment,
  scan: ScanSummary.nullable(),
});
export const Capability = z.object({
  action_type: z.enum(HANDLING_ACTION_TYPES),
  available: z.boolean(),
  reason: z.string().nullable(),
  mail_classes: z.array(z.enum(FORWARD_MAIL_CLASSES)).optional(),
  quote: Quote.nullable().optional(),
  requires_owner_confirmation: z.boolean(),
  requires_staff_attestation: z.boolean(),
});
export const HandlingState = z.object({
  ...TestMode,
  schema_version: z.literal(1),
  item_id: z.string(),
  assignment: Assignment,
  version: z.number().int().describe('the item version; send it as expected_version'),
  item_status: z.string(),
  agent_may_confirm: z.literal(false),
  requires_member_approval: z.literal(true),
  capabilities: z.array(Capability),
  operations: z.array(HandlingOperation),
});
export const ProposalBody = z.strictObject({
  action_type: z.enum(HANDLING_ACTION_TYPES),
  expected_version: ExpectedVersion.describe('the version from GET .../handling'),
  confirmed: z.boolean().default(false).describe('agents may only propose: false'),
  destructive_confirmed: z.boolean().default(false).describe('only the owner confirms a discard: false'),
  mail_class: z.enum(FORWARD_MAIL_CLASSES).nullable().optional(),
  untracked_acknowledged: z.boolean().default(false),
  destination: z
    .strictObject({
      name: z.string().max(100),
      address_line1: z.string().max(200),
      address_line2: z.string().max(200).nullable().optional(),
      city: z.string().max(100),
      state: z.string().max(50),
      postal_code: z.string().max(10),
      country: z.string().max(2).default('US'),
    })
    .nullable()
    .optional(),
});

// ---------------------------------------------------------------------------------------
// Owner decisions

export const HandlingListQuery = z.strictObject({
  status: qEnum(HANDLING_STATUSES).optional(),
  item_id: qUuid().optional(),
  limit: qInt(1, 100, 20),
  offset: qInt(0, 10000, 0),
});
export const HandlingList = z.object({ ...TestMode, operations: z.array(HandlingOperation), pagination: PageInfo });
export const ApproveBody = z.strictObject({
  expected_version: ExpectedVersion,
  destructive_confirmed: z.boolean().default(false).describe('must be true to approve a discard'),
});
export const RejectBody = z.strictObject({
  expected_version: ExpectedVersion,
  reason: z.string().max(1000).optional(),
});

// ---------------------------------------------------------------------------------------
// Facility

export const IdentifyBody = z
  .strictObject({
    mailbox_id: singleLine(z.string().trim().min(1).max(40))
      .optional()
      .describe('PMB-1001, "PMB 1001", "#1001" or "1001"'),
    recipient_name: singleLine(z.string().trim().min(1).max(200))
      .optional()
      .describe('exact member or agent name on the label'),
  })
  .refine((b) => b.mailbox_id || b.recipient_name, {
    message: 'send mailbox_id or recipient_name',
    path: ['mailbox_id'],
  });
export const IdentifyResult = z.object({
  ...TestMode,
  matches: z.array(
    z.object({
      mailbox_id: z.string(),
      member_id: z.string(),
      member_name: z.string(),
      default_agent_id: z.string().nullable(),
      agents: z.array(z.object({ id: z.string(), name: z.string() })),
    }),
  ),
});
const DraftFieldsShape = {
  kind: z.enum(['letter', 'parcel']),
  carrier: z.string().trim().max(60).nullable().optional(),
  tracking_number: z.string().trim().max(80).nullable().optional(),
  weight_oz: z.number().positive().max(2400).nullable().optional(),
  sender_name: z.string().trim().max(200).nullable().optional(),
  recipient_name: z.string().trim().max(200).nullable().optional(),
  notes: z.string().max(2000).nullable().optional(),
  mailbox_id: z.string().trim().max(40).nullable().optional(),
};
export const DraftCreateBody = z.strictObject(DraftFieldsShape);
export const DraftPutBody = z.strictObject({ ...DraftFieldsShape, expected_version: ExpectedVersion });
export const Draft = z.object({
  object: z.literal('inbound_draft'),
  id: z.string(),
  facility_id: z.string(),
  kind: z.enum(['letter', 'parcel']),
  carrier: z.string().nullable(),
  tracking_number: z.string().nullable(),
  weight_oz: z.number().nullable(),
  sender_name: z.string().nullable(),
  recipient_name: z.string().nullable(),
  notes: z.string().nullable(),
  mailbox_id: z.string().nullable(),
  member_id: z.string().nullable(),
  agent_id: z.string().nullable(),
  status: z.enum(['open', 'matched', 'committed']),
  version: z.number().int(),
  item_id: z.string().nullable(),
  photos: z.array(
    z.object({
      id: z.string(),
      photo_type: z.enum(['sealed_exterior', 'label']),
      content_type: z.string(),
      size_bytes: z.number().int(),
      sha256: z.string(),
      created_at: Instant,
      url: z.string(),
    }),
  ),
  created_at: Instant,
  updated_at: Instant,
});
export const DraftListQuery = z.strictObject({
  status: qEnum(['open', 'matched', 'committed']).optional(),
  limit: qInt(1, 100, 20),
  offset: qInt(0, 10000, 0),
});
export const ExteriorForm = z.object({ photo_type: z.enum(['sealed_exterior', 'label']).default('sealed_exterior') });
export const MatchBody = z.strictObject({
  mailbox_id: z.string().trim().min(1).max(40),
  agent_id: z.uuid().optional(),
  expected_version: ExpectedVersion,
});
export const CommitBody = z.strictObject({ expected_version: ExpectedVersion });
export const CommitResult = z.object({
  ...TestMode,
  draft: Draft,
  item: z.object({
    id: z.string(),
    reference_code: z.string(),
    kind: z.string(),
    status: z.string(),
    mailbox_id: z.string().nullable(),
    member_id: z.string(),
    agent_id: z.string().nullable(),
    received_at: Instant,
    version: z.number().int(),
  }),
  assignment: z.object({ id: z.string(), agent_id: z.string(), revision: z.number().int() }),
  arrival: z.object({
    expected_shipment_id: z
      .string()
      .nullable()
      .describe(
        "the agent's expected shipment this piece satisfied (same mailbox, agent and normalised tracking number)",
      ),
    matched_rule_ids: z.array(z.string()).describe("the agent's mailbox rules that matched the label"),
    tags: z.array(z.string()).describe('tags the rules added'),
    action_id: z
      .string()
      .nullable()
      .describe("the package action requested on arrival (in the facility's package-action queue)"),
  }),
});
export const ScanRequestListQuery = z.strictObject({
  status: qEnum(['requested', 'fulfilled', 'rejected']).optional(),
  limit: qInt(1, 100, 20),
  offset: qInt(0, 10000, 0),
});
export const FulfilForm = z.object({
  source_kinds: z
    .string()
    .max(200)
    .optional()
    .describe('comma-separated envelope|letter per page; default from scan_type'),
});
export const FulfilResult = z.object({
  ...TestMode,
  scan_request: ScanRequestView,
  bundle: z.object({
    id: z.string(),
    item_id: z.string(),
    pages: z.array(
      z.object({
        page_id: z.string(),
        page_number: z.number().int(),
        source_kind: z.enum(['envelope', 'letter']),
        source_sha256: z.string(),
      }),
    ),
  }),
});
export const ScanRejectBody = z.strictObject({ reason: multiLine(z.string().trim().min(1).max(1000)) });
export const FacilityHandlingQuery = z.strictObject({
  status: qEnum(HANDLING_STATUSES).optional(),
  limit: qInt(1, 100, 20),
  offset: qInt(0, 10000, 0),
});
export const DecisionBody = z.strictObject({
  decision: z.enum(['accept', 'complete', 'reject']),
  expected_version: ExpectedVersion,
  attestation: z
    .string()
    .trim()
    .max(2000)
    .nullable()
    .optional()
    .describe('staff attestation; required to complete a discard'),
  tracking_number: z
    .string()
    .trim()
    .max(80)
    .nullable()
    .optional()
    .describe('required to complete a priority forward; none for first_class'),
  reason: z.string().trim().max(1000).nullable().optional().describe('required to reject'),
});
export const FacilityActionsQuery = z.strictObject({
  status: qEnum(PACKAGE_ACTION_STATUSES).optional(),
  limit: qInt(1, 100, 20),
  offset: qInt(0, 10000, 0),
});
export const FacilityActionStatusBody = z.strictObject({
  status: z.enum(['in_progress', 'clarification_needed', 'completed', 'failed']),
  expected_version: ExpectedVersion,
  clarification_question: z.string().trim().max(2000).optional(),
  tracking_number: z.string().trim().max(80).optional(),
  carrier: z.string().trim().max(60).optional(),
  note: z.string().max(2000).optional(),
});
