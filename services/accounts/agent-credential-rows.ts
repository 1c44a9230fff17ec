// Every statement that writes the `agent_credentials` table (the row type is
// AgentCredentialRow in rows.ts): issuing a key or an OAuth grant's credential, and revoking.
import type { AgentCredentialRow } from './rows';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** The columns a credential's view reads (the key's kind computed from its OAuth grant, if any). */
export const CREDENTIAL_COLUMNS = `id, agent_id, key_prefix, scopes, status, environment, expires_at, revoked_at, created_at, force_approval, max_daily_pieces,
  CASE WHEN EXISTS (SELECT 1 FROM oauth_grants g WHERE g.credential_id = agent_credentials.id) THEN 'oauth_grant' ELSE 'api_key' END AS credential_type`;
export type CredentialColumns = Pick<
  AgentCredentialRow,
  | 'id'
  | 'agent_id'
  | 'key_prefix'
  | 'scopes'
  | 'status'
  | 'environment'
  | 'expires_at'
  | 'revoked_at'
  | 'created_at'
  | 'force_approval'
  | 'max_daily_pieces'
> & { credential_type: 'api_key' | 'oauth_grant' };

/** Issues an agent key (its hash and prefix stored, never the key). */
export async function insertAgentKeyCredential(
  db: Queryable,
  c: {
    agentId: string;
    /** The caller's account, as its auth context holds it. */
    memberId: string | null;
    keyHash: string;
    keyPrefix: string;
    scopes: string[];
    environment: string;
    expiresAt: Date | null;
    forceApproval: boolean;
    maxDailyPieces: number | null;
  },
): Promise<CredentialColumns> {
  const [row] = await sqlRows<CredentialColumns>(
    db,
    `INSERT INTO agent_credentials (agent_id, member_id, key_hash, key_prefix, scopes, environment, expires_at, force_approval, max_daily_pieces)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${CREDENTIAL_COLUMNS}`,
    [
      c.agentId,
      c.memberId,
      c.keyHash,
      c.keyPrefix,
      c.scopes,
      c.environment,
      c.expiresAt,
      c.forceApproval,
      c.maxDailyPieces,
    ],
  );
  return row;
}

/** The credential an OAuth grant acts as (its key is never shown); its id. */
export async function insertOAuthGrantCredential(
  tx: Queryable,
  c: {
    agentId: string;
    memberId: string;
    keyHash: string;
    keyPrefix: string;
    scopes: string[];
    environment: string;
    forceApproval: boolean;
    maxDailyPieces: number | null;
  },
): Promise<{ id: string }> {
  const [credential] = await sqlRows<{ id: string }>(
    tx,
    `INSERT INTO agent_credentials (agent_id, member_id, key_hash, key_prefix, scopes, environment, force_approval, max_daily_pieces)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
    [c.agentId, c.memberId, c.keyHash, c.keyPrefix, c.scopes, c.environment, c.forceApproval, c.maxDailyPieces],
  );
  return credential;
}

/** Revokes a credential (keeping the first revocation time); its view. */
export async function markCredentialRevoked(db: Queryable, credentialId: string): Promise<CredentialColumns> {
  const [updated] = await sqlRows<CredentialColumns>(
    db,
    `WITH changed AS (UPDATE agent_credentials SET status = 'revoked', revoked_at = COALESCE(revoked_at, now())
      WHERE id = $1 RETURNING ${CREDENTIAL_COLUMNS}) SELECT * FROM changed`,
    [credentialId],
  );
  return updated;
}

/** Revokes an ended OAuth grant's credential. */
export async function revokeGrantCredential(db: Queryable, credentialId: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE agent_credentials SET status = 'revoked', revoked_at = COALESCE(revoked_at, now()) WHERE id = $1`,
    [credentialId],
  );
}

/** Revokes every active credential of an archived agent; their ids. */
export async function revokeAgentCredentials(
  tx: Queryable,
  agentId: string,
): Promise<Pick<AgentCredentialRow, 'id'>[]> {
  return sqlRows<Pick<AgentCredentialRow, 'id'>>(
    tx,
    `WITH changed AS (UPDATE agent_credentials SET status = 'revoked', revoked_at = now() WHERE agent_id = $1 AND status = 'active' RETURNING id)
       SELECT * FROM changed`,
    [agentId],
  );
}
