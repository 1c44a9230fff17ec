// The rows of the accounts tables as node-postgres returns them: one interface per table,
// its columns named and typed as the migrations (entities/migrations/) define them.
// timestamptz arrives as Date, bigint and numeric as string, text[] as string[], jsonb
// parsed. A query that selects some columns types its result as a Pick of these (plus
// any joined or computed columns), next to the SQL that selects them.

/** The default return address columns of a member (and, as sent or defaulted, of each outbound piece). */
export interface ReturnAddressColumns {
  return_name: string | null;
  return_company: string | null;
  return_line1: string | null;
  return_line2: string | null;
  return_city: string | null;
  return_state: string | null;
  return_zip: string | null;
}

/** members */
export interface MemberRow extends ReturnAddressColumns {
  id: string;
  email: string;
  full_name: string;
  password_hash: string | null;
  status: 'active' | 'suspended';
  email_verified: boolean;
  business: boolean;
  agent_auto_fill: boolean;
  packages_enabled: boolean;
  per_transaction_limit_cents: number | null;
  daily_spend_limit_cents: number | null;
  /** Account overrides of the default price constants (domain/outbound-mail/pricing). */
  pricing_overrides: Record<string, number> | null;
  rate_limit_per_minute: number | null;
  needs: string | null;
  status_changed_at: Date | null;
  status_reason: string | null;
  created_at: Date;
}

/** agents */
export interface AgentRow {
  id: string;
  member_id: string;
  name: string;
  display_name: string | null;
  description: string | null;
  webhook_url: string | null;
  webhook_enabled: boolean;
  webhook_event_types: string[];
  webhook_auth_type: 'hmac' | 'bearer' | 'header';
  webhook_auth_token_enc: string | null;
  webhook_auth_header_name: string | null;
  webhook_payload_format: 'standard' | 'wrapped';
  webhook_signing_key_id: string | null;
  webhook_signing_secret_enc: string | null;
  /** Set when the agent is archived (DELETE /v1/agents/{id}). */
  deleted_at: Date | null;
  created_at: Date;
}

/** agent_credentials: agent keys (sk_agent_, sk_agent_test_). */
export interface AgentCredentialRow {
  id: string;
  agent_id: string;
  member_id: string;
  key_hash: string;
  key_prefix: string;
  scopes: string[];
  status: 'active' | 'revoked';
  environment: 'live' | 'test';
  expires_at: Date | null;
  force_approval: boolean;
  max_daily_pieces: number | null;
  revoked_at: Date | null;
  created_at: Date;
}

/** member_api_keys: member keys (sk_live_, sk_test_). */
export interface MemberApiKeyRow {
  id: string;
  member_id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  environment: 'prod' | 'test';
  status: 'active' | 'revoked' | 'rotated';
  expires_at: Date | null;
  rotated_to_id: string | null;
  created_at: Date;
}

/** facilities */
export interface FacilityRow {
  id: string;
  name: string;
  status: 'active' | 'inactive';
  origin_zip: string;
  is_default: boolean;
  created_at: Date;
}

/** facility_keys (sk_facility_) */
export interface FacilityKeyRow {
  id: string;
  facility_id: string;
  key_hash: string;
  key_prefix: string;
  status: 'active' | 'revoked';
  created_at: Date;
}

/** instructions_versions: primary key (agent_id, version). */
export interface InstructionsVersionRow {
  agent_id: string;
  version: number;
  text: string;
  hash: string;
  /** A text column without a CHECK; services/accounts/instructions.ts writes only these two. */
  source: 'renter' | 'platform_fallback';
  reason: string | null;
  created_at: Date;
}

/** instructions_proposals */
export interface InstructionsProposalRow {
  id: string;
  agent_id: string;
  member_id: string;
  credential_id: string | null;
  base_version: number;
  suggested_content: string;
  reason: string | null;
  status: 'pending' | 'accepted' | 'rejected';
  resulting_version: number | null;
  decided_at: Date | null;
  created_at: Date;
}
