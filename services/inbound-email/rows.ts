// Rows of the forwarded inbound context tables as node-postgres returns them: one
// interface per table, column names as the migration defines them (entities/migrations
// 1732700000000-InboundContext). numeric and bigint columns arrive as strings, timestamptz
// as Date, jsonb already parsed; text columns with a CHECK list are typed as that list.
import type { AliasStatus } from '../../domain/inbound-email/aliases';
import type { ParsedAddress, VerificationStatus } from '../../domain/inbound-email/address';

/** inbound_forwarding_aliases */
export interface InboundForwardingAliasRow {
  id: string;
  member_id: string;
  agent_id: string | null;
  test_mode: boolean;
  label: string;
  alias_local_part: string;
  domain: string;
  alias_type: 'random' | 'vanity';
  requested_alias_local_part: string | null;
  source_type: string;
  provider: string | null;
  handled_by: string;
  capture_method: string;
  automation_level: 'high' | 'medium' | 'low';
  approval_mode: 'always_require' | 'require_for_sensitive' | 'allow_rules';
  status: AliasStatus;
  last_received_at: Date | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

/** postal_threads */
export interface PostalThreadRow {
  id: string;
  member_id: string;
  agent_id: string | null;
  test_mode: boolean;
  title: string;
  category: string;
  status: 'open' | 'waiting' | 'closed' | 'archived';
  summary: string | null;
  sender_keys: string[];
  subject_keys: string[];
  reference_keys: string[];
  last_event_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** inbound_mail_items */
export interface InboundMailItemRow {
  id: string;
  member_id: string;
  agent_id: string | null;
  alias_id: string;
  test_mode: boolean;
  status: 'captured' | 'stored' | 'extracted' | 'needs_review' | 'failed';
  capture_method: 'smtp' | 'http';
  envelope_from: string | null;
  envelope_to: string;
  message_id: string | null;
  from_name: string | null;
  from_address: string | null;
  subject: string;
  body_text: string;
  /** The parsed message headers (message_id, date, in_reply_to, references, to, cc, reply_to). */
  headers: Record<string, unknown>;
  category: string | null;
  suggested_action: string | null;
  summary: string | null;
  sender: Record<string, unknown> | null;
  recipient: Record<string, unknown> | null;
  deadlines: unknown[];
  key_facts: unknown[];
  review_reasons: unknown[];
  thread_id: string | null;
  failure_reason: string | null;
  received_at: Date;
  extracted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** inbound_mail_files */
export interface InboundMailFileRow {
  id: string;
  inbound_mail_item_id: string;
  kind: 'raw_email' | 'attachment';
  position: number;
  filename: string;
  content_type: string;
  declared_content_type: string | null;
  content_type_mismatch: boolean;
  /** bigint */
  size_bytes: string;
  sha256: string | null;
  storage_key: string;
  extraction_status: 'pending' | 'extracted' | 'pending_ocr' | 'unsupported' | 'failed';
  page_count: number | null;
  created_at: Date;
}

/** inbound_extractions */
export interface InboundExtractionRow {
  id: string;
  inbound_mail_item_id: string;
  inbound_mail_file_id: string | null;
  source: string;
  field: string;
  value: string;
  /** numeric(4,3) */
  confidence: string;
  metadata: Record<string, unknown>;
  position: number;
  created_at: Date;
}

/** inbound_reply_contacts */
export interface InboundReplyContactRow extends Pick<
  ParsedAddress,
  'name' | 'line1' | 'line2' | 'city' | 'state' | 'postal_code'
> {
  id: string;
  inbound_mail_item_id: string;
  country: string;
  source_type: string;
  verification_status: VerificationStatus;
  /** numeric(4,3) */
  confidence: string;
  created_at: Date;
}
