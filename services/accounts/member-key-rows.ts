// Every statement that writes the `member_api_keys` table: issuing a member key, rotating
// it into a new one, and revoking it.
import type { MemberApiKeyRow } from './rows';
import { sqlRows, type Queryable } from '../shared/sql';

/** The member_api_keys columns an API answer shows (never the hash). */
export const MEMBER_KEY_COLUMNS = `id, key_prefix, name, environment, status, expires_at, created_at, rotated_to_id`;
export type MemberKeyColumns = Pick<
  MemberApiKeyRow,
  'id' | 'key_prefix' | 'name' | 'environment' | 'status' | 'expires_at' | 'created_at' | 'rotated_to_id'
>;

/** Stores a member key's hash and prefix; its MEMBER_KEY_COLUMNS. */
export async function insertMemberKeyRow(
  tx: Queryable,
  memberId: string,
  k: { name: string; keyHash: string; keyPrefix: string; environment: 'prod' | 'test'; expiresAt: Date | null },
): Promise<MemberKeyColumns> {
  const [row] = await sqlRows<MemberKeyColumns>(
    tx,
    `INSERT INTO member_api_keys (member_id, name, key_hash, key_prefix, environment, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${MEMBER_KEY_COLUMNS}`,
    [memberId, k.name, k.keyHash, k.keyPrefix, k.environment, k.expiresAt],
  );
  return row;
}

/** The key was rotated into `rotatedToId`; its MEMBER_KEY_COLUMNS. */
export async function markMemberKeyRotated(
  tx: Queryable,
  keyId: string,
  rotatedToId: string,
): Promise<MemberKeyColumns> {
  const [rotated] = await sqlRows<MemberKeyColumns>(
    tx,
    `WITH changed AS (UPDATE member_api_keys SET status = 'rotated', rotated_to_id = $2 WHERE id = $1 RETURNING ${MEMBER_KEY_COLUMNS})
       SELECT * FROM changed`,
    [keyId, rotatedToId],
  );
  return rotated;
}

/** Revokes an active key; undefined when it was not active. */
export async function markMemberKeyRevoked(db: Queryable, keyId: string): Promise<MemberKeyColumns | undefined> {
  const [updated] = await sqlRows<MemberKeyColumns>(
    db,
    `WITH changed AS (UPDATE member_api_keys SET status = 'revoked' WHERE id = $1 AND status = 'active' RETURNING ${MEMBER_KEY_COLUMNS})
     SELECT * FROM changed`,
    [keyId],
  );
  return updated;
}
