// Every statement that writes the `handling_operations` table (the row type is in rows.ts):
// proposing an operation, charging it, recording its workflow, and its moves.
import type { ForwardMailClass, HandlingActionType, HandlingStatus } from '../../domain/workflow-safe/handling';
import type { ItemRow } from './item-records';
import type { HandlingOperationRow } from './rows';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** A new operation on `item`, proposed by an agent or requested by its member. */
export interface NewHandlingOperation {
  origin: 'agent' | 'member';
  status: HandlingStatus;
  actionType: HandlingActionType;
  agentId: string | null;
  mailClass: ForwardMailClass | null;
  untrackedAcknowledged: boolean;
  destination: unknown;
  quoteCents: number;
}

export async function insertHandlingOperation(
  tx: Queryable,
  item: Pick<ItemRow, 'id' | 'member_id' | 'facility_id' | 'environment'>,
  o: NewHandlingOperation,
): Promise<HandlingOperationRow> {
  const [op] = await sqlRows<HandlingOperationRow>(
    tx,
    `INSERT INTO handling_operations (item_id, member_id, agent_id, facility_id, environment, origin, action_type, status, mail_class,
       untracked_acknowledged, destination, quote_cents)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *`,
    [
      item.id,
      item.member_id,
      o.agentId,
      item.facility_id,
      item.environment,
      o.origin,
      o.actionType,
      o.status,
      o.mailClass,
      o.untrackedAcknowledged,
      o.destination ? JSON.stringify(o.destination) : null,
      o.quoteCents,
    ],
  );
  return op;
}

/** Records that the operation's workflow was started (the first time only). */
export async function markHandlingWorkflowStarted(db: Queryable, id: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE handling_operations SET workflow_started_at = COALESCE(workflow_started_at, now()) WHERE id = $1`,
    [id],
  );
}

/** The member's Open & Scan was debited its quote: charged and approved. */
export async function chargeQuote(tx: Queryable, id: string): Promise<HandlingOperationRow> {
  const [charged] = await sqlRows<HandlingOperationRow>(
    tx,
    `UPDATE handling_operations SET charged_cents = quote_cents, approved_at = now() WHERE id = $1 RETURNING *`,
    [id],
  );
  return charged;
}

/**
 * Moves the operation to `status` with the transition's column changes (names come from
 * handling-transitions.ts, never from requests).
 */
export async function moveHandlingOperation(
  tx: Queryable,
  id: string,
  status: HandlingStatus,
  changes: Record<string, unknown>,
): Promise<HandlingOperationRow> {
  const sets = Object.keys(changes).map((k, n) => `${k} = $${n + 3}`);
  const [updated] = await sqlRows<HandlingOperationRow>(
    tx,
    `UPDATE handling_operations SET status = $2, version = version + 1, updated_at = now()${sets.length ? ', ' + sets.join(', ') : ''}
        WHERE id = $1 RETURNING *`,
    [id, status, ...Object.values(changes)],
  );
  return updated;
}

/** A sandbox Open & Scan takes the scan request of the fixture bundle it was given. */
export async function linkFixtureScanRequest(tx: Queryable, id: string, bundleId: string): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE handling_operations SET scan_request_id = (SELECT request_id FROM scan_bundles WHERE id = $2) WHERE id = $1`,
    [id, bundleId],
  );
}
