// The physical inbound item record (one row of physical_inbound_items per piece in
// custody, letter or parcel): reading and locking it, moving its version, and appending to
// its activity timeline. Packages, managed mailbox items and the agent inbox all present
// this one record. Every statement that writes physical_inbound_items is here.
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

/** A piece the facility committed from its draft: live, from the internal team, received. */
export async function insertReceivedItem(
  tx: Db,
  v: Pick<
    PhysicalInboundItemRow,
    | 'reference_code'
    | 'agent_id'
    | 'facility_id'
    | 'mailbox_id'
    | 'draft_id'
    | 'kind'
    | 'carrier'
    | 'tracking_number'
    | 'weight_oz'
    | 'sender_name'
    | 'recipient_name'
    | 'recipient_email'
    | 'received_at'
  > & { member_id: string | null },
): Promise<ItemColumns> {
  const [row] = await sqlRows<ItemColumns>(
    tx,
    `INSERT INTO physical_inbound_items (reference_code, member_id, agent_id, facility_id, mailbox_id, draft_id, kind, environment,
         source_domain, status, carrier, tracking_number, weight_oz, sender_name, recipient_name, recipient_email, received_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'live', 'internal_team', 'received', $8, $9, $10, $11, $12, $13, $14)
       RETURNING ${ITEM_COLUMNS.replace(/i\./g, '')}`,
    [
      v.reference_code,
      v.member_id,
      v.agent_id,
      v.facility_id,
      v.mailbox_id,
      v.draft_id,
      v.kind,
      v.carrier,
      v.tracking_number,
      v.weight_oz,
      v.sender_name,
      v.recipient_name,
      v.recipient_email,
      v.received_at,
    ],
  );
  return row;
}

/** A test-environment item made from a sandbox fixture, already stored; undefined if the id exists. */
export async function insertFixtureItem(
  tx: Db,
  v: { id: string | null } & Pick<
    PhysicalInboundItemRow,
    | 'reference_code'
    | 'member_id'
    | 'agent_id'
    | 'kind'
    | 'source_domain'
    | 'scenario'
    | 'sender_name'
    | 'recipient_name'
    | 'recipient_email'
  >,
): Promise<ItemColumns | undefined> {
  const [row] = await sqlRows<ItemColumns>(
    tx,
    `INSERT INTO physical_inbound_items (id, reference_code, member_id, agent_id, kind, environment, source_domain, scenario, status,
       sender_name, recipient_name, recipient_email, received_workflow_started_at)
     VALUES (COALESCE($1::uuid, gen_random_uuid()), $2, $3, $4, $5, 'test', $6, $7, 'stored', $8, $9, $10, now())
     ON CONFLICT DO NOTHING RETURNING ${ITEM_COLUMNS.replace(/i\./g, '')}`,
    [
      v.id,
      v.reference_code,
      v.member_id,
      v.agent_id,
      v.kind,
      v.source_domain,
      v.scenario,
      v.sender_name,
      v.recipient_name,
      v.recipient_email,
    ],
  );
  return row;
}

/** Records that the item's inbound-item workflow was started (the first time only). */
export async function markReceivedWorkflowStarted(db: Db, id: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE physical_inbound_items SET received_workflow_started_at = COALESCE(received_workflow_started_at, now()) WHERE id = $1`,
    [id],
  );
}

/** Deletes the member sample (a reset; it is made again from its fixture). */
export async function deleteMemberSample(db: Db, id: string): Promise<void> {
  await sqlRun(db, `DELETE FROM physical_inbound_items WHERE id = $1 AND source_domain = 'member_sample'`, [id]);
}
