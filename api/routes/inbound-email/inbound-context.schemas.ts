// Schemas of forwarded inbound context: intake aliases, inbound mail items (files, OCR,
// lineage, drafting context) and postal threads.
import { z } from 'zod';
import {
  ALIAS_STATUSES,
  ALIAS_TYPES,
  APPROVAL_MODES,
  AUTOMATION_LEVELS,
  CAPTURE_METHODS,
  HANDLED_BY,
  SOURCE_TYPES,
} from '../../../domain/inbound-email/aliases';
import { CATEGORIES, SUGGESTED_ACTIONS } from '../../../domain/inbound-email/classifier';
import { INCLUDE_VALUES, ITEM_INCLUDE_VALUES } from '../../../services/inbound-email/inbound-context';
import { FreeFormJson, Pagination, paginationQuery, singleLine, TestMode } from '../../schemas/common';

export const ITEM_STATUSES = ['captured', 'stored', 'extracted', 'needs_review', 'failed'] as const;
export const THREAD_STATUSES = ['open', 'waiting', 'closed', 'archived'] as const;
export const FILE_EXTRACTION_STATUSES = ['pending', 'extracted', 'pending_ocr', 'unsupported', 'failed'] as const;

const Id = z.uuid({ message: 'must be a UUID' });

/** `include=a,b` or `include=a&include=b`; absent means the default. */
function includeParam<T extends readonly [string, ...string[]]>(values: T, fallback: T[number][]) {
  return z.preprocess(
    (v) =>
      v === undefined
        ? undefined
        : (Array.isArray(v) ? v : [v])
            .flatMap((s) => String(s).split(','))
            .map((s) => s.trim())
            .filter(Boolean),
    z.array(z.enum(values)).default(fallback as never),
  );
}

const QueryBoolean = z.preprocess((v) => {
  if (typeof v !== 'string') return v;
  const s = v.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(s)) return true;
  if (['false', '0', 'no', ''].includes(s)) return false;
  return v;
}, z.boolean().default(false));

// ---------------------------------------------------------------- aliases

const Label = singleLine(z.string().trim().min(1).max(100));

const AliasSettings = {
  label: Label.optional(),
  source_type: z.enum(SOURCE_TYPES).optional(),
  provider: singleLine(z.string().trim().min(1).max(100)).nullable().optional(),
  handled_by: z.enum(HANDLED_BY).optional(),
  capture_method: z.enum(CAPTURE_METHODS).optional(),
  automation_level: z.enum(AUTOMATION_LEVELS).optional(),
  approval_mode: z.enum(APPROVAL_MODES).optional(),
  metadata: FreeFormJson.optional(),
};

export const AliasCreateRequest = z.strictObject({
  ...AliasSettings,
  agent_id: Id.nullable()
    .optional()
    .describe(
      'member keys: the agent that handles the alias (omit or null for member-wide); agent keys: ignored, always their own agent',
    ),
  alias_type: z.enum(ALIAS_TYPES).default('random'),
  requested_alias_local_part: z.string().max(64).optional().describe('vanity only: 3-40 of a-z 0-9 . _ -'),
});

export const AliasUpdateRequest = z.strictObject({
  ...AliasSettings,
  agent_id: Id.nullable().optional().describe('member keys only: reassign (null = member-wide)'),
  status: z.enum(ALIAS_STATUSES).optional().describe('active <-> paused; archived is final'),
});

export const AliasListQuery = z.object({
  ...paginationQuery(),
  status: z.enum(ALIAS_STATUSES).optional(),
  agent_id: Id.optional().describe('member keys: only this agent'),
});

export const ForwardingAddress = z.object({
  id: z.string(),
  member_id: z.string(),
  agent_id: z.string().nullable(),
  label: z.string(),
  alias_local_part: z.string(),
  domain: z.string(),
  email: z.string(),
  alias_type: z.enum(ALIAS_TYPES),
  requested_alias_local_part: z.string().nullable(),
  source_type: z.string(),
  provider: z.string().nullable(),
  handled_by: z.string(),
  capture_method: z.string(),
  automation_level: z.enum(AUTOMATION_LEVELS),
  approval_mode: z.enum(APPROVAL_MODES),
  status: z.enum(ALIAS_STATUSES),
  last_received_at: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  updated_at: z.string(),
});

export const ForwardingAddressBody = z.object({ forwarding_address: ForwardingAddress, test_mode: z.boolean() });
export const ForwardingAddressList = z.object({
  forwarding_addresses: z.array(ForwardingAddress),
  pagination: Pagination,
  test_mode: z.boolean(),
});

// ---------------------------------------------------------------- items

export const InboundListQuery = z.object({
  ...paginationQuery(),
  category: z.enum(CATEGORIES).optional(),
  status: z.enum(ITEM_STATUSES).optional(),
  thread_id: Id.optional(),
  agent_id: Id.optional().describe("member keys: only items of this agent's aliases"),
  include: includeParam(INCLUDE_VALUES, ['drafting']).describe(
    'drafting, files, ocr, lineage (comma-separated or repeated); default drafting',
  ),
});

export const InboundGetQuery = z.object({
  include: includeParam(ITEM_INCLUDE_VALUES, ['drafting']).describe(
    'drafting, files, ocr, lineage, signed_urls (comma-separated or repeated); default drafting. signed_urls is the same as signed_urls=true',
  ),
  signed_urls: QueryBoolean.describe('adds a signed object-store URL (1 hour) and download_url to every file'),
});

export const ItemParams = z.object({ id: Id });
export const FileParams = z.object({ id: Id, fileId: Id });

const File = z.object({
  id: z.string(),
  kind: z.enum(['raw_email', 'attachment']),
  filename: z.string(),
  content_type: z.string(),
  size_bytes: z.number().int(),
  sha256: z.string().nullable(),
  extraction_status: z.enum(FILE_EXTRACTION_STATUSES),
  download_url: z.string().optional().describe('with include=files or signed_urls: authenticated download'),
  signed_url: z.string().optional().describe('with signed_urls=true: signed, 1-hour expiry'),
  created_at: z.string(),
});

const ReplyContact = z.object({
  id: z.string(),
  name: z.string().nullable(),
  line1: z.string().nullable(),
  line2: z.string().nullable(),
  city: z.string(),
  state: z.string(),
  postal_code: z.string(),
  country: z.string(),
  source_type: z.string().describe('text the address was read from: pdf_text, ocr, docx_text, plain_text, email_body'),
  verification_status: z.enum(['unverified', 'parsed', 'verified_format']),
  confidence: z.number(),
  formatted_address: z.string(),
});

const Address = ReplyContact.omit({ id: true });
const Party = z.object({ name: z.string().nullable(), email: z.string().nullable(), address: Address.nullable() });
const KeyFact = z.object({
  kind: z.string(),
  label: z.string(),
  value: z.string(),
  amount_cents: z.number().int().optional(),
});

const LinkedOutbound = z.object({
  id: z.string(),
  status: z.string(),
  mail_class: z.string(),
  recipient_name: z.string().nullable(),
  recipient_company: z.string().nullable(),
  recipient_city: z.string(),
  recipient_state: z.string(),
  tracking_number: z.string().nullable(),
  inbound_capture_id: z.string().nullable(),
  postal_mail_thread_id: z.string().nullable(),
  created_at: z.string(),
  mailed_at: z.string().nullable(),
});

const DraftContext = z.object({
  summary: z.string().nullable(),
  category: z.enum(CATEGORIES).nullable(),
  suggested_action: z.enum(SUGGESTED_ACTIONS).nullable(),
  inbound_capture_id: z.string(),
  postal_mail_thread_id: z.string().nullable(),
  sender: Party.nullable(),
  recipient: Party.nullable(),
  reply_contact: ReplyContact.nullable(),
  reply_contact_confidence: z.number().nullable(),
  deadlines: z.array(z.string()).describe('YYYY-MM-DD'),
  key_facts: z.array(KeyFact),
  source_files: z.array(
    z.object({ id: z.string(), filename: z.string(), content_type: z.string(), extraction_status: z.string() }),
  ),
  linked_outbound_mail: z.array(LinkedOutbound),
});

const Extraction = z.object({
  id: z.string(),
  inbound_mail_file_id: z.string().nullable(),
  source: z.string(),
  field: z.string(),
  value: z.string(),
  confidence: z.number(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});

const ThreadRef = z.object({
  id: z.string(),
  object: z.literal('postal_mail_thread'),
  title: z.string(),
  category: z.string(),
  status: z.enum(THREAD_STATUSES),
});

export const InboundMailItem = z.object({
  id: z.string(),
  object: z.literal('inbound_mail_item'),
  status: z.enum(ITEM_STATUSES),
  received_at: z.string(),
  from: z.object({ name: z.string().nullable(), email: z.string().nullable() }).nullable(),
  subject: z.string(),
  note_preview: z.string().nullable(),
  attachment_count: z.number().int(),
  category: z.enum(CATEGORIES).nullable(),
  suggested_action: z.enum(SUGGESTED_ACTIONS).nullable(),
  parsed: z.record(z.string(), z.unknown()),
  thread: ThreadRef.nullable(),
  files: z.array(File),
  context: z.record(z.string(), z.unknown()),
  draft_context: DraftContext.optional().describe('with include=drafting (the default)'),
  extractions: z.array(Extraction).optional().describe('with include=lineage'),
  ocr: z
    .array(
      z.object({
        inbound_mail_file_id: z.string(),
        page_number: z.number().int(),
        text: z.string(),
        confidence: z.number(),
        unreadable: z.boolean(),
        status: z.enum(['ready', 'needs_review']).describe('needs_review below 0.85 confidence'),
        uncertain_spans: z
          .array(z.object({ text: z.string(), reason: z.string() }))
          .describe('runs of words read with under 0.6 confidence; at most 100 of 500 characters'),
        engine: z.string(),
      }),
    )
    .optional()
    .describe('with include=ocr'),
});

/** GET /v1/inbound/{id}: the item, with the answer's test_mode. */
export const InboundMailItemResponse = InboundMailItem.extend(TestMode);

export const InboundMailList = z.object({
  items: z.array(InboundMailItem),
  pagination: Pagination,
  test_mode: z.boolean(),
});

// ---------------------------------------------------------------- threads

export const ThreadListQuery = z.object({
  ...paginationQuery(),
  category: z.enum(CATEGORIES).optional(),
  status: z.enum(THREAD_STATUSES).optional(),
  agent_id: Id.optional(),
  include: includeParam(['events'] as const, []).describe('events'),
});

export const ThreadGetQuery = z.object({ include: includeParam(['events'] as const, []) });

export const ThreadUpdateRequest = z.strictObject({
  status: z.enum(THREAD_STATUSES).optional(),
  title: singleLine(z.string().trim().min(1).max(120)).optional(),
});

export const PostalThread = z.object({
  id: z.string(),
  object: z.literal('postal_mail_thread'),
  title: z.string(),
  category: z.string(),
  status: z.enum(THREAD_STATUSES),
  summary: z.string().nullable(),
  last_event_at: z.string(),
  events: z
    .array(z.record(z.string(), z.unknown()))
    .optional()
    .describe('with include=events: inbound items and outbound replies, oldest first'),
});

/** A thread as the answer of its own read or update, with test_mode. */
export const PostalThreadResponse = PostalThread.extend(TestMode);

export const PostalThreadList = z.object({
  threads: z.array(PostalThread),
  pagination: Pagination,
  test_mode: z.boolean(),
});

// ---------------------------------------------------------------- intake

export const IntakeQuery = z.object({
  recipient: z
    .string()
    .max(320)
    .optional()
    .describe(
      'the envelope recipient (an intake alias); default: the first alias in Delivered-To, X-Original-To, To or Cc',
    ),
});

export const IntakeResponse = z.object({
  ...TestMode,
  item_id: z.string(),
  alias_id: z.string(),
  status: z.string(),
  attachment_count: z.number().int(),
  duplicate: z.boolean(),
});
