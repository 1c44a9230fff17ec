// Members, member API keys and facilities: creation paths shared by signup, the
// operator CLI and tests.
import { endMemberGrants } from './oauth';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import { generateKey, hashKey, keyPrefixOf } from '../../domain/accounts/keys';
import { topUp } from '../billing/credits';
import type { MemberApiKeyRow } from './rows';
import { insertMember, updateMemberStatus } from './member-rows';
import { insertMemberKeyRow } from './member-key-rows';
import { insertFacility } from '../operations/facility-rows';
import { sqlRows, sqlRun } from '../shared/sql';

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
  returnAddress?: {
    name?: string;
    company?: string;
    line1: string;
    line2?: string;
    city: string;
    state: string;
    zip: string;
  };
}

export { MEMBER_KEY_COLUMNS, type MemberKeyColumns } from './member-key-rows';

/** Inserts a member key; `row` holds its MEMBER_KEY_COLUMNS, `key` the raw key (shown once). */
export async function insertMemberKey(
  tx: Pick<EntityManager, 'query'>,
  memberId: string,
  opts: { name: string; environment: 'prod' | 'test'; expiresAt?: Date | null },
) {
  const key = generateKey(opts.environment === 'test' ? 'member_test' : 'member');
  const row = await insertMemberKeyRow(tx, memberId, {
    name: opts.name,
    keyHash: hashKey(key),
    keyPrefix: keyPrefixOf(key),
    environment: opts.environment,
    expiresAt: opts.expiresAt ?? null,
  });
  return { id: row.id, key, createdAt: row.created_at, row };
}

export async function createMember(deps: Deps, input: NewMember): Promise<CreatedMember> {
  return deps.db.transaction(async (tx) => {
    const ra = input.returnAddress;
    const member = await insertMember(tx, {
      email: input.email,
      fullName: input.fullName,
      passwordHash: input.passwordHash ?? null,
      business: input.business ?? false,
      rateLimitPerMinute: input.rateLimitPerMinute ?? null,
      returnName: ra ? (ra.name ?? input.fullName) : null,
      returnCompany: ra?.company ?? null,
      returnLine1: ra?.line1 ?? null,
      returnLine2: ra?.line2 ?? null,
      returnCity: ra?.city ?? null,
      returnState: ra?.state ?? null,
      returnZip: ra?.zip ?? null,
    });
    const key = await insertMemberKey(tx, member.id, { name: 'Default', environment: 'prod' });
    if (input.creditsCents && input.creditsCents > 0) {
      await topUp(tx, {
        memberId: member.id,
        amountCents: input.creditsCents,
        entryKey: `topup:initial:${member.id}`,
        description: 'Initial credits',
      });
    }
    return { member_id: member.id, key: key.key, key_id: key.id };
  });
}

export async function createFacility(deps: Deps, name: string): Promise<{ facility_id: string; key: string }> {
  return deps.db.transaction(async (tx) => {
    const facility = await insertFacility(tx, name);
    const key = generateKey('facility');
    await sqlRun(tx, `INSERT INTO facility_keys (facility_id, key_hash, key_prefix) VALUES ($1, $2, $3)`, [
      facility.id,
      hashKey(key),
      keyPrefixOf(key),
    ]);
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
    const updated = await sqlRows<{ id: string }>(
      deps.db,
      `UPDATE ${table} SET status = 'revoked'${extra} WHERE ${column} = $1 RETURNING id`,
      [value],
    );
    if (updated.length) return { table, id: updated[0].id };
  }
  return null;
}

export interface MemberSummary {
  id: string;
  email: string;
  full_name: string;
  status: 'active' | 'suspended';
  status_reason: string | null;
  status_changed_at: string | null;
  business: boolean;
  balance_cents: number;
  facility_id: string | null;
  active_keys: number;
  agents: number;
  created_at: string;
}

/** Members whose email contains `text` (case-insensitive), the exact match first. */
export async function findMembers(
  db: Pick<EntityManager, 'query'>,
  text: string,
  limit = 20,
): Promise<MemberSummary[]> {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  type Row = Omit<MemberSummary, 'balance_cents' | 'status_changed_at' | 'created_at'> & {
    balance_cents: string;
    status_changed_at: Date | null;
    created_at: Date;
  };
  const rows = await sqlRows<Row>(
    db,
    `
    SELECT m.id, m.email, m.full_name, m.status, m.status_reason, m.status_changed_at, m.business, m.created_at,
           (SELECT COALESCE(SUM(amount_cents), 0)::bigint FROM credits_ledger l WHERE l.member_id = m.id) AS balance_cents,
           (SELECT facility_id FROM facility_assignments a WHERE a.member_id = m.id) AS facility_id,
           (SELECT count(*)::int FROM member_api_keys k WHERE k.member_id = m.id AND k.status = 'active') AS active_keys,
           (SELECT count(*)::int FROM agents g WHERE g.member_id = m.id AND g.deleted_at IS NULL) AS agents
      FROM members m WHERE m.email ILIKE $1
     ORDER BY lower(m.email) = lower($2) DESC, m.created_at, m.id LIMIT $3`,
    [pattern, text, limit],
  );
  return rows.map((r) => ({
    ...r,
    balance_cents: Number(r.balance_cents),
    status_changed_at: r.status_changed_at ? r.status_changed_at.toISOString() : null,
    created_at: r.created_at.toISOString(),
  }));
}

/**
 * Suspends or reinstates a member, with the operator's reason. A suspended member's keys
 * (member and agent keys alike) are refused with 401 member_suspended on their next request,
 * and the account's OAuth grants end (reinstating does not bring them back).
 */
export async function setMemberStatus(
  db: Pick<EntityManager, 'query'>,
  memberId: string,
  status: 'active' | 'suspended',
  reason: string,
) {
  const [before] = /^[0-9a-f-]{36}$/i.test(memberId)
    ? await sqlRows<{ status: string }>(db, `SELECT status FROM members WHERE id = $1`, [memberId])
    : [];
  if (!before) return null;
  const updated = await updateMemberStatus(db, memberId, status, reason);
  const changed = updated.length > 0;
  if (changed && status === 'suspended') await endMemberGrants(db, memberId, 'member_suspended');
  return { member_id: memberId, status, previous_status: changed ? before.status : status, changed, reason };
}
