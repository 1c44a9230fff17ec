// Turns a Bearer key into an AuthContext: which member, agent or facility is calling,
// in which environment, with which scopes. Keys are looked up by SHA-256 hash only.
import type { Deps } from '../shared/deps';
import { errors } from '../../domain/shared/errors';
import { hashKey, KeyKind, parseBearer } from '../../domain/accounts/keys';
import { audienceCovers, protectedResourcesOf } from '../../domain/accounts/oauth';
import { SCOPES, Scope } from '../../domain/shared/access';
import type { AgentCredentialRow, FacilityKeyRow, FacilityRow, MemberApiKeyRow, MemberRow } from './rows';
import { sqlRows, sqlRun } from '../shared/sql';
import { touchGrant } from './oauth-grant-rows';

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
  /** Set when the caller presented an OAuth access token: the grant whose agent credential it acts as. */
  oauthGrantId?: string;
}

/** Which protected resource a request is for: an access token must have been issued for it (RFC 8707). */
export type ResourceTarget = 'rest' | 'mcp';

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

/** The grant of an access token, with its agent credential and member. */
type AccessTokenRow = AgentKeyRow & {
  token_expires_at: Date;
  token_scopes: string[];
  audience: string;
  grant_id: string;
  grant_revoked_at: Date | null;
  last_used_at: Date | null;
};

/**
 * An OAuth access token acts exactly as the agent credential its grant owns: the same
 * checks (revoked, expired, member suspended), scopes, environment and safeguards, and the
 * same rate-limit and idempotency owner. It must also be unexpired and issued for the
 * resource it is presented to.
 */
async function authenticateAccessToken(deps: Deps, token: string, target: ResourceTarget): Promise<AuthContext> {
  const [row] = await sqlRows<AccessTokenRow>(
    deps.db,
    `SELECT t.expires_at AS token_expires_at, t.scopes AS token_scopes, t.audience, g.id AS grant_id, g.revoked_at AS grant_revoked_at, g.last_used_at,
            c.id, c.status, c.expires_at, c.member_id, c.agent_id, c.scopes, c.environment, c.force_approval,
            c.max_daily_pieces, m.status AS member_status, m.rate_limit_per_minute
       FROM oauth_access_tokens t
       JOIN oauth_grants g ON g.id = t.grant_id
       JOIN agent_credentials c ON c.id = g.credential_id
       JOIN members m ON m.id = c.member_id
      WHERE t.token_hash = $1`,
    [hashKey(token)],
  );
  if (!row) throw errors.unauthorized('key_not_found', 'Access token not found');
  if (row.grant_revoked_at) throw errors.unauthorized('key_revoked', 'The grant of this access token has been revoked');
  checkKeyRow(row);
  if (row.token_expires_at.getTime() <= Date.now())
    throw errors.unauthorized('key_expired', 'Access token has expired; use the refresh token for a new one');
  if (!audienceCovers(row.audience, target, protectedResourcesOf(deps.config.baseUrl))) {
    throw errors.unauthorized(
      'token_audience_mismatch',
      `This access token was issued for ${row.audience}, not for this resource`,
    );
  }
  // For the owner's list of grants; a minute's precision is enough.
  if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > 60_000) {
    await touchGrant(deps.db, row.grant_id);
  }
  return {
    kind: row.environment === 'test' ? 'agent_test' : 'agent',
    keyId: row.id,
    ownerKey: `cred:${row.id}`,
    memberId: row.member_id,
    agentId: row.agent_id,
    facilityId: null,
    testMode: row.environment === 'test',
    // A refreshed token may carry fewer scopes than the grant (RFC 6749 6), never more.
    scopes: new Set<string>(row.scopes.filter((s) => row.token_scopes.includes(s))),
    forceApproval: row.force_approval,
    maxDailyPieces: row.max_daily_pieces,
    rateLimitPerMinute: row.rate_limit_per_minute,
    oauthGrantId: row.grant_id,
  };
}

export async function authenticate(
  deps: Deps,
  authorization: string | undefined,
  target: ResourceTarget = 'rest',
): Promise<AuthContext> {
  const parsed = parseBearer(authorization);
  if (!parsed.ok) {
    const messages = {
      token_missing: 'Send Authorization: Bearer <API_KEY>',
      token_malformed: 'Authorization header is not a well-formed Bearer key',
      token_prefix_unknown:
        'Key prefix is not one of sk_live_, sk_test_, sk_agent_, sk_agent_test_, sk_facility_ (or oauth_at_ for an OAuth access token)',
    } as const;
    throw errors.unauthorized(parsed.reason, messages[parsed.reason]);
  }
  if (parsed.kind === 'oauth_access_token') return authenticateAccessToken(deps, parsed.token, target);
  const hash = hashKey(parsed.token);
  const base = { forceApproval: false, maxDailyPieces: null, agentId: null, facilityId: null };

  if (parsed.kind === 'agent' || parsed.kind === 'agent_test') {
    const [row] = await sqlRows<AgentKeyRow>(
      deps.db,
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
    const [row] = await sqlRows<MemberKeyRow>(
      deps.db,
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

  const [row] = await sqlRows<FacilityKeyLookupRow>(
    deps.db,
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
