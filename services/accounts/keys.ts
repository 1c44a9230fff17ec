// Agent credentials (sk_agent_, sk_agent_test_) and member API keys (sk_live_, sk_test_):
// creation, listing, rotation and revocation. A raw key exists only in the answer that
// creates it; the database keeps its SHA-256 hash and its first 18 characters.
// Updates that return rows are written as `WITH changed AS (UPDATE ... RETURNING ...) SELECT`:
// TypeORM answers a bare UPDATE with [rows, rowCount] instead of the rows.
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import type { AuthContext } from './auth';
import { errors } from '../../domain/shared/errors';
import { generateKey, hashKey, keyPrefixOf } from '../../domain/accounts/keys';
import type { Scope } from '../../domain/shared/access';
import { insertMemberKey, MEMBER_KEY_COLUMNS, MemberKeyColumns } from './accounts';
import type { AgentCredentialRow } from './rows';
import { assertAgentOfMember } from '../shared/scoping';
import { sqlRows } from '../shared/sql';
import {
  CREDENTIAL_COLUMNS,
  type CredentialColumns,
  insertAgentKeyCredential,
  markCredentialRevoked,
} from './agent-credential-rows';
import { markMemberKeyRevoked, markMemberKeyRotated } from './member-key-rows';

const DAY_MS = 86_400_000;

function expiryFrom(days: number | undefined | null): Date | null {
  return days ? new Date(Date.now() + days * DAY_MS) : null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function liveKeyRequired(what: string) {
  return errors.forbidden('live_key_required', `Test keys cannot ${what}; use a live member key (sk_live_).`);
}

// ---------------------------------------------------------------- agent credentials

export interface CredentialInput {
  scopes: Scope[];
  expires_in_days?: number;
  environment: 'live' | 'test';
  force_approval: boolean;
  max_daily_pieces?: number | null;
}

export interface CredentialRecord {
  id: string;
  key?: string;
  key_prefix: string;
  /** oauth_grant: the credential an OAuth grant owns; only the grant's access tokens act as it. */
  credential_type: 'api_key' | 'oauth_grant';
  agent_id: string;
  scopes: string[];
  status: 'active' | 'revoked';
  environment: 'live' | 'test';
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
  force_approval: boolean;
  max_daily_pieces: number | null;
}

function toCredential(row: CredentialColumns): CredentialRecord {
  return {
    id: row.id,
    key_prefix: row.key_prefix,
    credential_type: row.credential_type,
    agent_id: row.agent_id,
    scopes: row.scopes,
    status: row.status,
    environment: row.environment,
    expires_at: iso(row.expires_at),
    revoked_at: iso(row.revoked_at),
    created_at: row.created_at.toISOString(),
    force_approval: row.force_approval,
    max_daily_pieces: row.max_daily_pieces,
  };
}

/**
 * Issues an agent key. A member test key (sk_test_) may issue only test credentials: it
 * must not be a way to mint live keys.
 */
export async function createCredential(
  deps: Deps,
  auth: AuthContext,
  agentId: string,
  input: CredentialInput,
): Promise<CredentialRecord> {
  await assertAgentOfMember(deps, auth, agentId);
  if (auth.testMode && input.environment === 'live') throw liveKeyRequired('issue live agent credentials');
  const key = generateKey(input.environment === 'test' ? 'agent_test' : 'agent');
  const scopes = [...new Set(input.scopes)];
  const row = await insertAgentKeyCredential(deps.db, {
    agentId,
    memberId: auth.memberId,
    keyHash: hashKey(key),
    keyPrefix: keyPrefixOf(key),
    scopes,
    environment: input.environment,
    expiresAt: expiryFrom(input.expires_in_days),
    forceApproval: input.force_approval,
    maxDailyPieces: input.max_daily_pieces ?? null,
  });
  return { ...toCredential(row), key };
}

export async function listCredentials(deps: Deps, auth: AuthContext, agentId: string): Promise<CredentialRecord[]> {
  await assertAgentOfMember(deps, auth, agentId);
  const rows = await sqlRows<CredentialColumns>(
    deps.db,
    `SELECT ${CREDENTIAL_COLUMNS} FROM agent_credentials WHERE agent_id = $1 AND member_id = $2 ORDER BY created_at, id`,
    [agentId, auth.memberId],
  );
  return rows.map(toCredential);
}

/** Revokes once; revoking an already revoked credential answers its record again. */
export async function revokeCredential(
  deps: Deps,
  auth: AuthContext,
  agentId: string,
  credentialId: string,
): Promise<CredentialRecord> {
  await assertAgentOfMember(deps, auth, agentId);
  const [row] = await sqlRows<Pick<AgentCredentialRow, 'environment'>>(
    deps.db,
    `SELECT environment FROM agent_credentials WHERE id = $1 AND agent_id = $2 AND member_id = $3`,
    [credentialId, agentId, auth.memberId],
  );
  if (!row) throw errors.notFound('Credential');
  if (auth.testMode && row.environment === 'live') throw liveKeyRequired('revoke live agent credentials');
  const updated = await markCredentialRevoked(deps.db, credentialId);
  return toCredential(updated);
}

// ---------------------------------------------------------------- member API keys

export interface MemberKeyInput {
  name: string;
  environment: 'prod' | 'test';
  expires_in_days?: number;
}

export interface MemberKeyRecord {
  id: string;
  key?: string;
  key_prefix: string;
  name: string;
  environment: 'prod' | 'test';
  status: 'active' | 'revoked' | 'rotated';
  expires_at: string | null;
  created_at: string;
  rotated_to_id: string | null;
}

function toMemberKey(row: MemberKeyColumns): MemberKeyRecord {
  return {
    id: row.id,
    key_prefix: row.key_prefix,
    name: row.name,
    environment: row.environment,
    status: row.status,
    expires_at: iso(row.expires_at),
    created_at: row.created_at.toISOString(),
    rotated_to_id: row.rotated_to_id,
  };
}

export async function listMemberKeys(deps: Deps, auth: AuthContext): Promise<MemberKeyRecord[]> {
  const rows = await sqlRows<MemberKeyColumns>(
    deps.db,
    `SELECT ${MEMBER_KEY_COLUMNS} FROM member_api_keys WHERE member_id = $1 ORDER BY created_at, id`,
    [auth.memberId],
  );
  return rows.map(toMemberKey);
}

/** Production keys carry sk_live_, test keys sk_test_. A test key can only create test keys. */
export async function createMemberKey(deps: Deps, auth: AuthContext, input: MemberKeyInput): Promise<MemberKeyRecord> {
  if (auth.testMode && input.environment === 'prod') throw liveKeyRequired('create production member keys');
  const created = await insertMemberKey(deps.db, auth.memberId!, {
    name: input.name,
    environment: input.environment,
    expiresAt: expiryFrom(input.expires_in_days),
  });
  return { ...toMemberKey(created.row), key: created.key };
}

async function findMemberKey(
  db: Pick<EntityManager, 'query'>,
  auth: AuthContext,
  keyId: string,
  lock = false,
): Promise<MemberKeyColumns> {
  const [row] = await sqlRows<MemberKeyColumns>(
    db,
    `SELECT ${MEMBER_KEY_COLUMNS} FROM member_api_keys WHERE id = $1 AND member_id = $2 ${lock ? 'FOR UPDATE' : ''}`,
    [keyId, auth.memberId],
  );
  if (!row) throw errors.notFound('API key');
  return row;
}

/**
 * Replaces an active key by a new one with the same name, environment and expiry. The
 * old key becomes `rotated` at once (401 key_revoked from then on).
 */
export async function rotateMemberKey(
  deps: Deps,
  auth: AuthContext,
  keyId: string,
): Promise<{ api_key: MemberKeyRecord; rotated_key: MemberKeyRecord }> {
  return deps.db.transaction(async (tx) => {
    const old = await findMemberKey(tx, auth, keyId, true);
    if (old.status !== 'active') {
      throw errors.conflict('KEY_NOT_ACTIVE', `Only active keys can be rotated; this key is ${old.status}.`, {
        suggestedAction: 'Rotate an active key, or create a new one with POST /v1/api-keys.',
      });
    }
    const created = await insertMemberKey(tx, auth.memberId!, {
      name: old.name,
      environment: old.environment,
      expiresAt: old.expires_at,
    });
    const rotated = await markMemberKeyRotated(tx, keyId, created.id);
    return { api_key: { ...toMemberKey(created.row), key: created.key }, rotated_key: toMemberKey(rotated) };
  });
}

/** Revokes an active key; a key already revoked or rotated is answered unchanged. */
export async function revokeMemberKey(deps: Deps, auth: AuthContext, keyId: string): Promise<MemberKeyRecord> {
  const row = await findMemberKey(deps.db, auth, keyId);
  if (auth.testMode && row.environment === 'prod') throw liveKeyRequired('revoke production member keys');
  const updated = await markMemberKeyRevoked(deps.db, keyId);
  return toMemberKey(updated ?? row);
}
