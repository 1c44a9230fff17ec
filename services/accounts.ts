// Members, member API keys and facilities: creation paths shared by signup, the
// operator CLI and tests.
import type { EntityManager } from 'typeorm';
import type { Deps } from './deps';
import { generateKey, hashKey, keyPrefixOf } from '../domain/keys';
import { topUp } from './credits';

export interface CreatedMember {
  member_id: string;
  key: string;
  key_id: string;
}

export interface NewMember {
  email: string;
  fullName: string;
  passwordHash?: string | null;
  business?: boolean;
  creditsCents?: number;
  rateLimitPerMinute?: number | null;
  returnAddress?: { name?: string; company?: string; line1: string; line2?: string; city: string; state: string; zip: string };
}

/** The member_api_keys columns an API answer shows (never the hash). */
export const MEMBER_KEY_COLUMNS = `id, key_prefix, name, environment, status, expires_at, created_at, rotated_to_id`;

/** Inserts a member key; `row` holds its MEMBER_KEY_COLUMNS, `key` the raw key (shown once). */
export async function insertMemberKey(tx: Pick<EntityManager, 'query'>, memberId: string, opts: { name: string; environment: 'prod' | 'test'; expiresAt?: Date | null }) {
  const key = generateKey(opts.environment === 'test' ? 'member_test' : 'member');
  const [row] = await tx.query(
    `INSERT INTO member_api_keys (member_id, name, key_hash, key_prefix, environment, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${MEMBER_KEY_COLUMNS}`,
    [memberId, opts.name, hashKey(key), keyPrefixOf(key), opts.environment, opts.expiresAt ?? null],
  );
  return { id: row.id as string, key, createdAt: row.created_at as Date, row };
}

export async function createMember(deps: Deps, input: NewMember): Promise<CreatedMember> {
  return deps.db.transaction(async (tx) => {
    const ra = input.returnAddress;
    const [member] = await tx.query(
      `INSERT INTO members (email, full_name, password_hash, business, rate_limit_per_minute,
                            return_name, return_company, return_line1, return_line2, return_city, return_state, return_zip)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
      [input.email, input.fullName, input.passwordHash ?? null, input.business ?? false, input.rateLimitPerMinute ?? null,
        ra ? (ra.name ?? input.fullName) : null, ra?.company ?? null, ra?.line1 ?? null, ra?.line2 ?? null, ra?.city ?? null, ra?.state ?? null, ra?.zip ?? null],
    );
    const key = await insertMemberKey(tx, member.id, { name: 'Default', environment: 'prod' });
    if (input.creditsCents && input.creditsCents > 0) {
      await topUp(tx, { memberId: member.id, amountCents: input.creditsCents, entryKey: `topup:initial:${member.id}`, description: 'Initial credits' });
    }
    return { member_id: member.id, key: key.key, key_id: key.id };
  });
}

export async function createFacility(deps: Deps, name: string): Promise<{ facility_id: string; key: string }> {
  return deps.db.transaction(async (tx) => {
    const [facility] = await tx.query(`INSERT INTO facilities (name) VALUES ($1) RETURNING id`, [name]);
    // The first active facility becomes the default; after that the operator chooses (facility:set-default).
    await tx.query(
      `UPDATE facilities SET is_default = true
        WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM facilities WHERE (is_default OR status = 'active') AND id <> $1)`, [facility.id]);
    const key = generateKey('facility');
    await tx.query(`INSERT INTO facility_keys (facility_id, key_hash, key_prefix) VALUES ($1, $2, $3)`, [facility.id, hashKey(key), keyPrefixOf(key)]);
    return { facility_id: facility.id, key };
  });
}

/** Revokes any kind of key given its raw value or its id. Returns what was revoked. */
export async function revokeKey(deps: Deps, keyOrId: string): Promise<{ table: string; id: string } | null> {
  const byHash = keyOrId.startsWith('sk_');
  const column = byHash ? 'key_hash' : 'id';
  const value = byHash ? hashKey(keyOrId) : keyOrId;
  if (!byHash && !/^[0-9a-f-]{36}$/i.test(value)) return null;
  for (const table of ['agent_credentials', 'member_api_keys', 'facility_keys']) {
    const extra = table === 'agent_credentials' ? ', revoked_at = now()' : '';
    const rows = await deps.db.query(`UPDATE ${table} SET status = 'revoked'${extra} WHERE ${column} = $1 RETURNING id`, [value]);
    const updated = Array.isArray(rows[0]) ? rows[0] : rows;
    if (updated.length) return { table, id: updated[0].id };
  }
  return null;
}
