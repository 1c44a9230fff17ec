// The rows of the support tables as node-postgres returns them: one interface per table,
// its columns named and typed as the migrations (entities/migrations/) define them.
// timestamptz arrives as Date, bigint as string. A query that selects some columns types
// its result as a Pick of these, next to the SQL that selects them.
import type { SupportCategory, SupportStatus } from '../../domain/support/conversations';

/** support_conversations: one support case (ticket). */
export interface SupportConversationRow {
  id: string;
  /** bigint from support_case_number_seq: node-postgres answers it as a string. */
  case_number: string;
  member_id: string;
  agent_id: string | null;
  /** The ownerKey (services/accounts/auth.ts) of the key that opened the case. */
  opened_by: string;
  category: SupportCategory;
  status: SupportStatus;
  environment: 'live' | 'test';
  message_count: number;
  last_message_at: Date;
  resolved_at: Date | null;
  created_at: Date;
}

/** support_messages */
export interface SupportMessageRow {
  id: string;
  conversation_id: string;
  sequence: number;
  author_type: 'member' | 'agent' | 'support';
  agent_id: string | null;
  /** A text column without a CHECK: the case's category when the message was written. */
  category: SupportCategory;
  body: string;
  created_at: Date;
}

/** support_attachments: the bytes live in the object store under storage_key. */
export interface SupportAttachmentRow {
  id: string;
  message_id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  storage_key: string;
  created_at: Date;
}

/** facility_conversations: between a member (or its agent) and the fulfilling facility. */
export interface FacilityConversationRow {
  id: string;
  member_id: string;
  agent_id: string | null;
  /** Null until a facility is assigned or a facility claims the conversation by answering. */
  facility_id: string | null;
  subject: string | null;
  environment: 'live' | 'test';
  message_count: number;
  last_message_at: Date;
  created_at: Date;
}

/** facility_messages */
export interface FacilityMessageRow {
  id: string;
  conversation_id: string;
  sequence: number;
  sender_type: 'member' | 'agent' | 'facility';
  agent_id: string | null;
  facility_id: string | null;
  body: string;
  created_at: Date;
}
