// workflow_incidents: what an operator must know about a business workflow that the
// workflow itself cannot fix: a cancellation request from Temporal it refused, a workflow
// closed (terminated, cancelled, failed, timed out) while its record was still open, a
// record whose workflow never started. Each cause is recorded once (incident_key).
import type { Deps } from '../shared/deps';
import type { IncidentAction, IncidentKind, IncidentObjectType } from '../../domain/workflow-safe/workflow-incidents';
import { sqlRows, type Queryable } from '../shared/sql';

export type { IncidentAction, IncidentKind, IncidentObjectType };

export interface IncidentInput {
  incidentKey: string;
  objectType: IncidentObjectType;
  objectId: string;
  workflowId: string;
  runId: string | null;
  kind: IncidentKind;
  objectStatus: string;
  workflowStatus: string | null;
  detail: string;
  action: IncidentAction;
}

export interface IncidentRow {
  id: string;
  object_type: IncidentObjectType;
  object_id: string;
  workflow_id: string;
  run_id: string | null;
  kind: IncidentKind;
  object_status: string;
  workflow_status: string | null;
  detail: string;
  action: IncidentAction;
  created_at: Date;
}

/** Inserts the incident unless its key is recorded already; true when it is new. */
export async function recordIncident(deps: Pick<Deps, 'db' | 'log'>, i: IncidentInput): Promise<boolean> {
  const rows = await sqlRows<Pick<IncidentRow, 'id'>>(
    deps.db,
    `INSERT INTO workflow_incidents (incident_key, object_type, object_id, workflow_id, run_id, kind, object_status, workflow_status, detail, action)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (incident_key) DO NOTHING RETURNING id`,
    [
      i.incidentKey,
      i.objectType,
      i.objectId,
      i.workflowId,
      i.runId,
      i.kind,
      i.objectStatus,
      i.workflowStatus,
      i.detail,
      i.action,
    ],
  );
  if (rows.length)
    deps.log.warn({ incident: i }, `workflow incident: ${i.kind} ${i.objectType} ${i.objectId}: ${i.detail}`);
  return rows.length > 0;
}

export async function incidentsOf(
  db: Queryable,
  objectType: IncidentObjectType,
  objectId: string,
): Promise<IncidentRow[]> {
  return sqlRows<IncidentRow>(
    db,
    `SELECT * FROM workflow_incidents WHERE object_type = $1 AND object_id = $2 ORDER BY created_at, id`,
    [objectType, objectId],
  );
}
