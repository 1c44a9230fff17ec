// Turns a Bearer key into an AuthContext: which member, agent or facility is calling,
// in which environment, with which scopes. Keys are looked up by SHA-256 hash only.
import type { Deps } from '../shared/deps';
import { errors } from '../../domain/shared/errors';
import { hashKey, KeyKind, parseBearer } from '../../domain/accounts/keys';
import { SCOPES, Scope } from '../../domain/shared/access';
import type { AgentCredentialRow, FacilityKeyRow, FacilityRow, MemberApiKeyRow, MemberRow } from './rows';

export interface AuthContext {
  kind: KeyKind;
  /** The key's own id (credential, member key or facility key). */
  keyId: string;
  /** Idempotency and rate-limit owner: `cred:<id>`, `mkey:<id>`, `fkey:<id>`. */
  ownerKey: string;
  memberId: string | null;
  agentId: string | null;
  facilityId: string | null;
  testMode: boolean;
  scopes: ReadonlySet<string>;
  forceApproval: boolean;
  maxDailyPieces: number | null;
  /** Custom per-key request budget per minute for this member, if any. */
  rateLimitPerMinute: number | null;
}

export function isAgentKey(auth: AuthContext): boolean {
  return auth.kind === 'agent' || auth.kind === 'agent_test';
}

export function isMemberKey(auth: AuthContext): boolean {
  return auth.kind === 'member' || auth.kind === 'member_test';
}

export function hasScope(auth: AuthContext, scope: Scope): boolean {
  return auth.scopes.has(scope);
}

const ALL_SCOPES: ReadonlySet<string> = new Set(SCOPES);

/** What every key lookup selects, so that one check refuses revoked, expired and suspended keys alike. */
interface KeyCheck {
  id: string;
  status: string;
  expires_at: Date | null;
  member_status: MemberRow['status'] | null;
}

/** The member columns a member or agent key lookup joins in. */
type KeyMemberColumns = {
  member_status: MemberRow['status'];
  rate_limit_per_minute: MemberRow['rate_limit_per_minute'];
};

type AgentKeyRow = Pick<
  AgentCredentialRow,
  | 'id'
  | 'status'
  | 'expires_at'
  | 'member_id'
  | 'agent_id'
  | 'scopes'
  | 'environment'
  | 'force_approval'
  | 'max_daily_pieces'
> &
  KeyMemberColumns;

type MemberKeyRow = Pick<MemberApiKeyRow, 'id' | 'status' | 'expires_at' | 'member_id' | 'environment'> &
  KeyMemberColumns;

/** A facility key has no member and no expiry: its lookup selects them as NULL to fit KeyCheck. */
type FacilityKeyLookupRow = Pick<FacilityKeyRow, 'id' | 'status' | 'facility_id'> & {
  expires_at: null;
  member_id: null;
  member_status: null;
  rate_limit_per_minute: null;
  facility_status: FacilityRow['status'];
};

function checkKeyRow<R extends KeyCheck>(row: R | undefined): asserts row is R {
  if (!row) throw errors.unauthorized('key_not_found', 'API key not found');
  if (row.status !== 'active') throw errors.unauthorized('key_revoked', 'API key has been revoked');
  if (row.expires_at && row.expires_at.getTime() <= Date.now())
    throw errors.unauthorized('key_expired', 'API key has expired');
  if (row.member_status && row.member_status !== 'active')
    throw errors.unauthorized('member_suspended', 'The account is suspended');
}

export async function authenticate(deps: Deps, authorization: string | undefined): Promise<AuthContext> {
  const parsed = parseBearer(authorization);
  if (!parsed.ok) {
    const messages = {
      token_missing: 'Send Authorization: Bearer <API_KEY>',
      token_malformed: 'Authorization header is not a well-formed Bearer key',
      token_prefix_unknown: 'Key prefix is not one of sk_live_, sk_test_, sk_agent_, sk_agent_test_, sk_facility_',
    } as const;
    throw errors.unauthorized(parsed.reason, messages[parsed.reason]);
  }
  const hash = hashKey(parsed.token);
  const base = { forceApproval: false, maxDailyPieces: null, agentId: null, facilityId: null };

  if (parsed.kind === 'agent' || parsed.kind === 'agent_test') {
    const [row]: AgentKeyRow[] = await deps.db.query(
      `SELECT c.id, c.status, c.expires_at, c.member_id, c.agent_id, c.scopes, c.environment, c.force_approval,
              c.max_daily_pieces, m.status AS member_status, m.rate_limit_per_minute
         FROM agent_credentials c JOIN members m ON m.id = c.member_id WHERE c.key_hash = $1`,
      [hash],
    );
    checkKeyRow(row);
    return {
      ...base,
      kind: parsed.kind,
      keyId: row.id,
      ownerKey: `cred:${row.id}`,
      memberId: row.member_id,
      agentId: row.agent_id,
      testMode: row.environment === 'test',
      scopes: new Set<string>(row.scopes),
      forceApproval: row.force_approval,
      maxDailyPieces: row.max_daily_pieces,
      rateLimitPerMinute: row.rate_limit_per_minute,
    };
  }

  if (parsed.kind === 'member' || parsed.kind === 'member_test') {
    const [row]: MemberKeyRow[] = await deps.db.query(
      `SELECT k.id, k.status, k.expires_at, k.member_id, k.environment, m.status AS member_status, m.rate_limit_per_minute
         FROM member_api_keys k JOIN members m ON m.id = k.member_id WHERE k.key_hash = $1`,
      [hash],
    );
    checkKeyRow(row);
    return {
      ...base,
      kind: row.environment === 'test' ? 'member_test' : 'member',
      keyId: row.id,
      ownerKey: `mkey:${row.id}`,
      memberId: row.member_id,
      testMode: row.environment === 'test',
      scopes: ALL_SCOPES,
      rateLimitPerMinute: row.rate_limit_per_minute,
    };
  }

  const [row]: FacilityKeyLookupRow[] = await deps.db.query(
    `SELECT k.id, k.status, NULL::timestamptz AS expires_at, NULL::uuid AS member_id, NULL AS member_status,
            NULL::integer AS rate_limit_per_minute, f.id AS facility_id, f.status AS facility_status
       FROM facility_keys k JOIN facilities f ON f.id = k.facility_id WHERE k.key_hash = $1`,
    [hash],
  );
  checkKeyRow(row);
  if (row.facility_status !== 'active') throw errors.unauthorized('facility_inactive', 'The facility is inactive');
  return {
    ...base,
    kind: 'facility',
    keyId: row.id,
    ownerKey: `fkey:${row.id}`,
    memberId: null,
    facilityId: row.facility_id,
    testMode: false,
    scopes: new Set<string>(),
    rateLimitPerMinute: null,
  };
}
