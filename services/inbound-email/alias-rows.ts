// Every statement that writes the `inbound_forwarding_aliases` table (the row type is
// InboundForwardingAliasRow in rows.ts): creating and editing an alias, and noting mail received.
import type { InboundForwardingAliasRow } from './rows';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

export const ALIAS_COLUMNS = `id, member_id, agent_id, test_mode, label, alias_local_part, domain, alias_local_part || '@' || domain AS email, alias_type,
  requested_alias_local_part, source_type, provider, handled_by, capture_method, automation_level, approval_mode, status,
  last_received_at, metadata, created_at, updated_at`;

/** An alias as ALIAS_COLUMNS reads it: its row and its address. */
export type AliasRow = InboundForwardingAliasRow & { email: string };

/**
 * Creates an alias unless its address is taken; params are the 15 columns in the INSERT's
 * order. Returns the new alias, or no row when the address was taken.
 */
export async function insertAlias(db: Queryable, params: unknown[]): Promise<AliasRow[]> {
  return sqlRows<AliasRow>(
    db,
    `INSERT INTO inbound_forwarding_aliases (member_id, agent_id, test_mode, label, alias_local_part, domain, alias_type, requested_alias_local_part,
                                              source_type, provider, handled_by, capture_method, automation_level, approval_mode, metadata)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
       ON CONFLICT (lower(alias_local_part), lower(domain)) DO NOTHING RETURNING ${ALIAS_COLUMNS}`,
    params,
  );
}

/** Sets an alias's settings and status; params are the id then the 10 columns in the UPDATE's order. */
export async function updateAlias(db: Queryable, params: unknown[]): Promise<AliasRow[]> {
  return sqlRows<AliasRow>(
    db,
    `UPDATE inbound_forwarding_aliases SET label = $2, agent_id = $3, source_type = $4, provider = $5, handled_by = $6, capture_method = $7,
            automation_level = $8, approval_mode = $9, status = $10, metadata = $11, updated_at = now()
      WHERE id = $1 RETURNING ${ALIAS_COLUMNS}`,
    params,
  );
}

/** Notes that mail arrived at the alias now. */
export async function touchAliasReceived(tx: Queryable, aliasId: string): Promise<void> {
  await sqlRun(tx, `UPDATE inbound_forwarding_aliases SET last_received_at = now() WHERE id = $1`, [aliasId]);
}
