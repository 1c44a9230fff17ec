// Every statement that writes `package_actions` and `package_tags` (row types in rows.ts):
// requesting an action, the caller's and the facility's changes to it, the outcome of its
// scan, and adding or removing a tag.
import type { PackageActionStatus } from '../../domain/workflow-safe/handling';
import type { PackageActionRow } from './rows';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

// package_actions

/** A new action on a package, as requested (agent_data is stored only when given). */
export async function insertPackageAction(
  tx: Queryable,
  a: Pick<
    PackageActionRow,
    | 'item_id'
    | 'member_id'
    | 'agent_id'
    | 'action'
    | 'priority'
    | 'parameters'
    | 'requested_by'
    | 'package_status_before'
    | 'agent_notes'
  > & { agent_data: Record<string, unknown> | undefined },
): Promise<PackageActionRow> {
  const [action] = await sqlRows<PackageActionRow>(
    tx,
    `INSERT INTO package_actions (item_id, member_id, agent_id, action, priority, parameters, requested_by, package_status_before, agent_notes, agent_data)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
    [
      a.item_id,
      a.member_id,
      a.agent_id,
      a.action,
      a.priority,
      JSON.stringify(a.parameters),
      a.requested_by,
      a.package_status_before,
      a.agent_notes,
      a.agent_data ? JSON.stringify(a.agent_data) : null,
    ],
  );
  return action;
}

/**
 * The caller's change to an action (null keeps a column); a clarification answer sends it
 * back to `requested`. Returns the row with `scanRequestId` as its scan_request_id.
 */
export async function updatePackageActionByCaller(
  tx: Queryable,
  id: string,
  c: {
    agentNotes: string | null;
    agentData: Record<string, unknown> | null;
    decisionContext: Record<string, unknown> | null;
    clarificationResponse: string | null;
  },
  scanRequestId: string | null,
): Promise<PackageActionRow & { scan_request_id: string | null }> {
  const [row] = await sqlRows<PackageActionRow & { scan_request_id: string | null }>(
    tx,
    `UPDATE package_actions SET agent_notes = COALESCE($2, agent_notes), agent_data = COALESCE($3, agent_data),
           decision_context = COALESCE($4, decision_context), clarification_response = COALESCE($5, clarification_response),
           status = CASE WHEN $5::text IS NOT NULL THEN 'requested' ELSE status END, version = version + 1, updated_at = now()
          WHERE id = $1 RETURNING *, $6::uuid AS scan_request_id`,
    [
      id,
      c.agentNotes,
      c.agentData ? JSON.stringify(c.agentData) : null,
      c.decisionContext ? JSON.stringify(c.decisionContext) : null,
      c.clarificationResponse,
      scanRequestId,
    ],
  );
  return row;
}

/** The facility's update of an action: its status, result and clarification question. */
export async function updatePackageActionByFacility(
  tx: Queryable,
  id: string,
  status: PackageActionStatus,
  result: Record<string, unknown>,
  clarificationQuestion: string | null,
): Promise<PackageActionRow> {
  const [updated] = await sqlRows<PackageActionRow>(
    tx,
    `UPDATE package_actions SET status = $2, version = version + 1, updated_at = now(), result = $3,
         clarification_question = COALESCE($4, clarification_question), completed_at = CASE WHEN $2 = 'completed' THEN now() ELSE completed_at END
        WHERE id = $1 RETURNING *`,
    [id, status, JSON.stringify(result), clarificationQuestion],
  );
  return updated;
}

/** The action's scan was uploaded: completed with what was scanned. */
export async function completeScanAction(tx: Queryable, id: string, result: Record<string, unknown>): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE package_actions SET status = 'completed', result = $2, version = version + 1, completed_at = now(), updated_at = now() WHERE id = $1`,
    [id, JSON.stringify(result)],
  );
}

/** The action's scan was rejected: failed with the reason. */
export async function failScanAction(tx: Queryable, id: string, result: Record<string, unknown>): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE package_actions SET status = 'failed', result = $2, version = version + 1, updated_at = now() WHERE id = $1`,
    [id, JSON.stringify(result)],
  );
}

// package_tags

/** Tags the package; returns the tag when it is new (none when it already had it). */
export async function addPackageTagRow(db: Queryable, itemId: string, tag: string): Promise<{ tag: string }[]> {
  return sqlRows<{ tag: string }>(
    db,
    `INSERT INTO package_tags (item_id, tag) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING tag`,
    [itemId, tag],
  );
}

/** Removes the tag; returns it when the package had it. */
export async function deletePackageTagRow(db: Queryable, itemId: string, tag: string): Promise<{ tag: string }[]> {
  return sqlRows<{ tag: string }>(db, `DELETE FROM package_tags WHERE item_id = $1 AND tag = $2 RETURNING tag`, [
    itemId,
    tag,
  ]);
}
