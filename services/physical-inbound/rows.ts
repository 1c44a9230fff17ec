// Rows of the physical inbound tables as node-postgres returns them: one interface per
// table, column names as the migrations define them (entities/migrations
// 1732800000000-PhysicalInbound, 1732800100000-PhysicalInboundWorkflowStarts and
// 1733230100000-ScanPageOcrConfidence). numeric columns arrive as strings, timestamptz as
// Date, jsonb already parsed; text columns with a CHECK list are typed as that list.
import type { ItemKind } from '../../domain/physical-inbound/search';
import type { OcrPageStatus, PageOrigin, PageRole } from '../../domain/physical-inbound/agent-inbox';
import type {
  ForwardAddress,
  ForwardMailClass,
  HandlingActionType,
  HandlingStatus,
  PackageActionStatus,
  PackageActionType,
} from '../../domain/workflow-safe/handling';

export type Environment = 'live' | 'test';
export type SourceDomain = 'internal_team' | 'sandbox' | 'member_sample';

/** private_mailboxes */
export interface PrivateMailboxRow {
  id: string;
  mailbox_id: string;
  member_id: string;
  agent_id: string | null;
  facility_id: string | null;
  status: 'active' | 'closed';
  created_at: Date;
  updated_at: Date;
}

/** inbound_drafts */
export interface InboundDraftRow {
  id: string;
  facility_id: string;
  kind: ItemKind;
  carrier: string | null;
  tracking_number: string | null;
  /** numeric(10,2) */
  weight_oz: string | null;
  sender_name: string | null;
  recipient_name: string | null;
  notes: string | null;
  mailbox_id: string | null;
  member_id: string | null;
  agent_id: string | null;
  status: 'open' | 'matched' | 'committed';
  version: number;
  item_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** physical_inbound_items */
export interface PhysicalInboundItemRow {
  id: string;
  reference_code: string;
  member_id: string;
  agent_id: string | null;
  facility_id: string | null;
  mailbox_id: string | null;
  draft_id: string | null;
  kind: ItemKind;
  environment: Environment;
  source_domain: SourceDomain;
  scenario: string | null;
  status: string;
  version: number;
  carrier: string | null;
  tracking_number: string | null;
  /** numeric(10,2) */
  weight_oz: string | null;
  sender_name: string | null;
  recipient_name: string | null;
  recipient_email: string | null;
  received_at: Date;
  created_at: Date;
  updated_at: Date;
  received_workflow_started_at: Date | null;
}

/** inbound_photos */
export interface InboundPhotoRow {
  id: string;
  draft_id: string | null;
  item_id: string | null;
  photo_type: 'sealed_exterior' | 'label';
  storage_key: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  created_at: Date;
}

/** agent_inbox_assignments */
export interface AgentInboxAssignmentRow {
  id: string;
  item_id: string;
  agent_id: string;
  member_id: string;
  source_domain: SourceDomain;
  environment: Environment;
  revision: number;
  assigned_at: Date;
}

/** agent_inbox_acknowledgments */
export interface AgentInboxAcknowledgmentRow {
  id: string;
  assignment_id: string;
  item_id: string;
  agent_id: string;
  environment: Environment;
  outcome: 'processed' | 'needs_review' | 'failed';
  context_version: string;
  run_id: string;
  note: string | null;
  created_at: Date;
}

/** package_actions */
export interface PackageActionRow {
  id: string;
  item_id: string;
  member_id: string;
  agent_id: string | null;
  action: PackageActionType;
  priority: 'low' | 'normal' | 'high' | 'urgent';
  parameters: Record<string, unknown>;
  status: PackageActionStatus;
  version: number;
  requested_by: 'agent' | 'member';
  agent_notes: string | null;
  agent_data: Record<string, unknown> | null;
  clarification_question: string | null;
  clarification_response: string | null;
  decision_context: Record<string, unknown> | null;
  result: Record<string, unknown> | null;
  package_status_before: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

/** package_forwards */
export interface PackageForwardRow extends ForwardAddress {
  id: string;
  item_id: string;
  action_id: string;
  carrier_preference: string | null;
  service_level: string;
  insurance: boolean;
  signature_required: boolean;
  created_at: Date;
}

/** package_notes */
export interface PackageNoteRow {
  id: string;
  item_id: string;
  note: string;
  metadata: Record<string, unknown> | null;
  author: 'agent' | 'member';
  agent_id: string | null;
  created_at: Date;
}

/** handling_operations */
export interface HandlingOperationRow {
  id: string;
  item_id: string;
  member_id: string;
  agent_id: string | null;
  facility_id: string | null;
  environment: Environment;
  origin: 'agent' | 'member';
  action_type: HandlingActionType;
  status: HandlingStatus;
  version: number;
  mail_class: ForwardMailClass | null;
  untracked_acknowledged: boolean;
  destination: Record<string, unknown> | null;
  quote_cents: number;
  charged_cents: number;
  refunded_cents: number;
  destructive_confirmed: boolean;
  item_status_before: string | null;
  scan_request_id: string | null;
  tracking_number: string | null;
  attestation: string | null;
  rejection_reason: string | null;
  rejected_by: 'member' | 'facility' | 'system' | null;
  created_at: Date;
  updated_at: Date;
  approved_at: Date | null;
  accepted_at: Date | null;
  completed_at: Date | null;
  rejected_at: Date | null;
  workflow_started_at: Date | null;
}

/** scan_requests */
export interface ScanRequestRow {
  id: string;
  item_id: string;
  member_id: string;
  agent_id: string | null;
  facility_id: string | null;
  scan_type: 'label' | 'envelope' | 'document' | 'content';
  origin: 'package_scan' | 'package_action' | 'handling' | 'sandbox';
  package_action_id: string | null;
  handling_id: string | null;
  options: Record<string, unknown>;
  status: 'requested' | 'fulfilled' | 'rejected';
  rejection_reason: string | null;
  requested_at: Date;
  fulfilled_at: Date | null;
}

/** scan_bundles */
export interface ScanBundleRow {
  id: string;
  request_id: string;
  item_id: string;
  ocr_id: string;
  created_at: Date;
  workflow_started_at: Date | null;
}

/** scan_pages, with each page's saved OCR */
export interface ScanPageRow {
  id: string;
  bundle_id: string;
  item_id: string;
  page_number: number;
  page_role: PageRole;
  origin: PageOrigin;
  storage_key: string;
  content_type: string;
  size_bytes: number;
  source_sha256: string;
  created_at: Date;
  ocr_status: OcrPageStatus;
  ocr_text: string | null;
  ocr_is_blank: boolean | null;
  /** numeric(4,3): mean word confidence of engine OCR (0-1); null for template OCR and unfinished pages. */
  ocr_confidence: string | null;
  ocr_uncertain_spans: Array<{ text: string; reason: string }>;
  ocr_provider: string | null;
  ocr_model: string | null;
  ocr_completed_at: Date | null;
  ocr_attempts: number;
  ocr_error_code:
    | 'provider_unavailable'
    | 'invalid_output'
    | 'source_invalid'
    | 'timeout'
    | 'access_revoked'
    | 'worker_failed'
    | null;
  ocr_provenance: Record<string, unknown> | null;
}

/** inbound_item_activity */
export interface InboundItemActivityRow {
  id: string;
  item_id: string;
  member_id: string;
  agent_id: string | null;
  environment: Environment;
  kind: string;
  detail: Record<string, unknown>;
  created_at: Date;
}
