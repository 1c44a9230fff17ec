// The physical inbound item record (one row of physical_inbound_items per piece in
// custody, letter or parcel): reading and locking it, moving its version, and appending to
// its activity timeline. Packages, managed mailbox items and the agent inbox all present
// this one record.
import type { EntityManager } from 'typeorm';
import type { AuthContext } from '../accounts/auth';
import type { Environment, PhysicalInboundItemRow } from './rows';
import { sqlRows, sqlRun } from '../shared/sql';

export type { Environment, SourceDomain } from './rows';
export type Db = Pick<EntityManager, 'query'>;

export function environmentOf(auth: AuthContext): Environment {
  return auth.testMode ? 'test' : 'live';
}

/** The columns of an item that ITEM_COLUMNS selects, as pg returns them. */
export type ItemColumns = Omit<PhysicalInboundItemRow, 'draft_id' | 'received_workflow_started_at'>;

/** An item as services use it: its ITEM_COLUMNS, with weight_oz (numeric, a string from pg) as a number. */
export interface ItemRow extends Omit<ItemColumns, 'weight_oz'> {
  weight_oz: number | null;
}

export const ITEM_COLUMNS = `i.id, i.reference_code, i.member_id, i.agent_id, i.facility_id, i.mailbox_id, i.kind, i.environment,
  i.source_domain, i.scenario, i.status, i.version, i.carrier, i.tracking_number, i.weight_oz, i.sender_name, i.recipient_name,
  i.recipient_email, i.received_at, i.created_at, i.updated_at`;

export function toItemRow(row: ItemColumns): ItemRow {
  return { ...row, weight_oz: row.weight_oz === null || row.weight_oz === undefined ? null : Number(row.weight_oz) };
}

export async function findItem(db: Db, id: string, opts: { forUpdate?: boolean } = {}): Promise<ItemRow | null> {
  const [row] = await sqlRows<ItemColumns>(
    db,
    `SELECT ${ITEM_COLUMNS} FROM physical_inbound_items i WHERE i.id = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return row ? toItemRow(row) : null;
}

/**
 * Runs an UPDATE/DELETE ... RETURNING; TypeORM answers those with [rows, count], so this
 * returns the rows, typed as the caller's RETURNING list says.
 */
export async function updateReturning<T>(db: Db, sql: string, params: unknown[]): Promise<T[]> {
  return sqlRows<T>(db, sql, params);
}

/** Bumps the item's version (every change a reader could act on moves it). */
export async function bumpItem(db: Db, itemId: string, status?: string | null): Promise<number> {
  const [row] = await updateReturning<Pick<PhysicalInboundItemRow, 'version'>>(
    db,
    `UPDATE physical_inbound_items SET version = version + 1, status = COALESCE($2, status), updated_at = now() WHERE id = $1 RETURNING version`,
    [itemId, status ?? null],
  );
  return row.version;
}

export async function recordActivity(
  db: Db,
  item: Pick<ItemRow, 'id' | 'member_id' | 'agent_id' | 'environment'>,
  kind: string,
  detail: Record<string, unknown> = {},
): Promise<void> {
  await sqlRun(
    db,
    `INSERT INTO inbound_item_activity (item_id, member_id, agent_id, environment, kind, detail) VALUES ($1, $2, $3, $4, $5, $6)`,
    [item.id, item.member_id, item.agent_id, item.environment, kind, JSON.stringify(detail)],
  );
}
