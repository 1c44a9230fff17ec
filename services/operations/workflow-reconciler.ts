// Records whose workflow is gone while the record is still open: the workflow was
// terminated (Terminate cannot be caught), cancelled by code from before cancellation
// requests were handled, failed or timed out; or its start was lost. The reconciler
// finds them through Temporal's visibility (closed runs on this task queue) and the
// database (rows never started), records each as a workflow_incidents row, and re-drives
// what can safely be started again from the row: pieces, mail runs, handling operations
// and draft batches keep all their state in Postgres, so a new run picks up where the row
// stands. A batch past its draft keeps its generation and fulfilment progress in its
// workflow: it is reported for an operator to reset (docs/operators.md, Operator runbook).
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Deps } from '../shared/deps';
import { ensureIntervalSchedule } from './schedules';
import { recordIncident, IncidentObjectType } from './workflow-incidents';
import { loadMailRow, MailRow } from '../outbound-mail/record';
import { mailWorkflowStartOptions, startMailWorkflow } from '../outbound-mail/workflow';
import { BATCH_MAIL_WORKFLOW, batchWorkflowInput, batchWorkflowStartOptions } from '../batches/batch-workflow';
import { loadBatchRow } from '../batches/rows';
import { loadMailRunById } from '../mail-runs/record';
import { mailRunStartOptions } from '../mail-runs/workflow';
import { scheduledSendInput } from '../outbound-mail/scheduled-send';
import { findOperation, handlingWorkflowInput } from '../physical-inbound/handling';
import { BATCH_DRAFT_EXPIRY_SECONDS } from '../../domain/workflow-safe/batch-drafts';
import {
  MailStartStatus,
  OUTBOUND_MAIL_WORKFLOW,
  OutboundMailWorkflowInput,
  ReconcileOutboundMailInput,
} from '../../workflows/outbound-mail/contracts';
import { MAIL_RUN_WORKFLOW } from '../../workflows/mail-runs/contracts';
import { sqlRows } from '../shared/sql';

export const RECONCILE_CLOSED_WORKFLOWS_WORKFLOW = 'reconcileClosedWorkflowsWorkflow';

/** The business workflows: one per record, its id the prefix and the record's id. */
export const BUSINESS_WORKFLOWS: { type: string; prefix: string; objectType: IncidentObjectType }[] = [
  { type: OUTBOUND_MAIL_WORKFLOW, prefix: 'outbound-mail-', objectType: 'outbound_mail' },
  { type: BATCH_MAIL_WORKFLOW, prefix: 'batch-mail-', objectType: 'batch' },
  { type: MAIL_RUN_WORKFLOW, prefix: 'mail-run-', objectType: 'mail_run' },
  { type: 'handlingWorkflow', prefix: 'handling-', objectType: 'handling' },
];

/** Statuses in which a record still needs its workflow. */
export const OPEN_STATUSES: Record<IncidentObjectType, readonly string[]> = {
  outbound_mail: ['pending_approval', 'funding_pending', 'submitted', 'ready', 'mailed'],
  batch: ['draft', 'paid', 'generating', 'submitted', 'in_progress'],
  mail_run: ['open', 'funding_pending'],
  handling: ['awaiting_member_approval', 'awaiting_facility', 'accepted'],
};

/** Temporal's names of the closed states that leave a record behind (Completed ones finished their record). */
export const ABANDONED_EXECUTION_STATUSES = ['Terminated', 'Canceled', 'Failed', 'TimedOut'];

export function workflowIdOf(objectType: IncidentObjectType, objectId: string): string {
  return `${BUSINESS_WORKFLOWS.find((w) => w.objectType === objectType)!.prefix}${objectId}`;
}

export function objectOfWorkflowId(workflowId: string): { objectType: IncidentObjectType; objectId: string } | null {
  const w = BUSINESS_WORKFLOWS.find((b) => workflowId.startsWith(b.prefix));
  return w ? { objectType: w.objectType, objectId: workflowId.slice(w.prefix.length) } : null;
}

/** The visibility query of this deployment's business workflows closed without finishing their record. */
export function abandonedWorkflowsQuery(taskQueue: string, closedAfter: Date): string {
  return (
    `TaskQueue = "${taskQueue}" AND WorkflowType IN (${BUSINESS_WORKFLOWS.map((w) => `"${w.type}"`).join(', ')})` +
    ` AND ExecutionStatus IN (${ABANDONED_EXECUTION_STATUSES.map((s) => `"${s}"`).join(', ')}) AND CloseTime > "${closedAfter.toISOString()}"`
  );
}

export interface OpenRecord {
  objectType: IncidentObjectType;
  objectId: string;
  status: string;
  /** Whether a new run started from the row carries the record on safely. */
  restartable: boolean;
}

/** The record behind a workflow id, when it is still open. */
export async function openRecord(
  deps: Deps,
  objectType: IncidentObjectType,
  objectId: string,
): Promise<OpenRecord | null> {
  let status: string | undefined;
  let restartable = true;
  if (objectType === 'outbound_mail') status = (await loadMailRow(deps.db, objectId))?.status;
  else if (objectType === 'batch') {
    status = (await loadBatchRow(deps.db, objectId))?.status;
    restartable = status === 'draft';
  } else if (objectType === 'mail_run') status = (await loadMailRunById(deps.db, objectId))?.status;
  else status = (await findOperation(deps.db, objectId))?.status;
  if (!status || !OPEN_STATUSES[objectType].includes(status)) return null;
  return { objectType, objectId, status, restartable };
}

/** When the piece entered its current status (for StatusChangedAt). */
export function mailStatusSince(row: MailRow): Date {
  const at: Record<string, Date | null> = { submitted: row.submitted_at, ready: row.ready_at, mailed: row.mailed_at };
  return at[row.status] ?? row.created_at;
}

/** Starts a new run of the record's workflow from its row; the previous run must be closed. */
async function restart(deps: Deps, rec: OpenRecord, previousRunStatus: string): Promise<void> {
  const again = { workflowIdReusePolicy: 'ALLOW_DUPLICATE' as const, workflowIdConflictPolicy: 'FAIL' as const };
  if (rec.objectType === 'outbound_mail') {
    const row = (await loadMailRow(deps.db, rec.objectId))!;
    const timeout = deps.config.outboundMail.approvalTimeoutSeconds;
    const input: OutboundMailWorkflowInput = {
      outboundMailId: row.id,
      statusAtStart: row.status as MailStartStatus,
      testMode: row.test_mode,
      memberId: row.member_id,
      agentId: row.agent_id,
      // The approval deadline counts from the piece's creation, not from this restart.
      approvalTimeoutSeconds: Math.max(1, Math.ceil((row.created_at.getTime() + timeout * 1000 - Date.now()) / 1000)),
      restart: { previousRunStatus, printingStarted: Boolean(row.printing_started_at), facilityId: row.facility_id },
      ...scheduledSendInput(row),
      printProof: row.proof_key ? 'stored' : 'render',
    };
    await deps.temporal.workflow.start(OUTBOUND_MAIL_WORKFLOW, {
      ...mailWorkflowStartOptions(deps, row, input, mailStatusSince(row)),
      ...again,
    });
  } else if (rec.objectType === 'mail_run') {
    const run = (await loadMailRunById(deps.db, rec.objectId))!;
    await deps.temporal.workflow.start(MAIL_RUN_WORKFLOW, { ...mailRunStartOptions(deps, run), ...again });
  } else if (rec.objectType === 'handling') {
    const op = (await findOperation(deps.db, rec.objectId))!;
    const left =
      op.created_at.getTime() + deps.config.physicalInbound.handlingApprovalTimeoutSeconds * 1000 - Date.now();
    const input = handlingWorkflowInput(op, Math.max(1000, left));
    await deps.temporal.workflow.start('handlingWorkflow', {
      taskQueue: deps.config.taskQueue,
      workflowId: workflowIdOf('handling', op.id),
      args: [input],
      ...again,
    });
  } else {
    const row = (await loadBatchRow(deps.db, rec.objectId))!;
    const expirySeconds =
      Math.max(1, Math.round((row.expires_at.getTime() - row.created_at.getTime()) / 1000)) ||
      BATCH_DRAFT_EXPIRY_SECONDS;
    await deps.temporal.workflow.start(BATCH_MAIL_WORKFLOW, {
      ...batchWorkflowStartOptions(deps, batchWorkflowInput(row, expirySeconds)),
      ...again,
    });
  }
}

export interface ReconciledWorkflow {
  object_type: IncidentObjectType;
  object_id: string;
  object_status: string;
  workflow_id: string;
  run_id: string;
  workflow_status: string;
  action: 'restarted' | 'reported';
  detail: string;
}

/** Finds business workflows closed while their record is open; restarts or reports each (once per closed run). */
export async function reconcileClosedWorkflows(
  deps: Deps,
  opts: { lookbackHours?: number } = {},
): Promise<ReconciledWorkflow[]> {
  const lookbackHours = opts.lookbackHours ?? deps.config.closedWorkflowReconciler.lookbackHours;
  const query = abandonedWorkflowsQuery(deps.config.taskQueue, new Date(Date.now() - lookbackHours * 3600_000));
  const seen = new Set<string>();
  const out: ReconciledWorkflow[] = [];
  for await (const listed of deps.temporal.workflow.list({ query })) {
    if (seen.has(listed.workflowId)) continue;
    seen.add(listed.workflowId);
    const object = objectOfWorkflowId(listed.workflowId);
    if (!object) continue;
    // The latest run decides: a run re-driven or reset since is running.
    const latest = await deps.temporal.workflow.getHandle(listed.workflowId).describe();
    if (latest.status.name === 'RUNNING' || latest.status.name === 'COMPLETED') continue;
    const rec = await openRecord(deps, object.objectType, object.objectId);
    if (!rec) continue;
    const workflowStatus = latest.status.name;
    let action: ReconciledWorkflow['action'] = 'reported';
    let detail = `The workflow run ${latest.runId} closed ${workflowStatus} while the ${rec.objectType} is ${rec.status}.`;
    if (rec.restartable) {
      await restart(deps, rec, workflowStatus);
      action = 'restarted';
      detail += ' The reconciler started a new run from the record.';
    } else {
      detail +=
        ` Its progress lives in the workflow: reset it (temporal workflow reset --workflow-id ${listed.workflowId} --type LastWorkflowTask), ` +
        'or finish the record through the facility API.';
    }
    await recordIncident(deps, {
      incidentKey: `workflow_closed:${listed.workflowId}:${latest.runId}`,
      objectType: rec.objectType,
      objectId: rec.objectId,
      workflowId: listed.workflowId,
      runId: latest.runId,
      kind: 'workflow_closed',
      objectStatus: rec.status,
      workflowStatus,
      detail,
      action,
    });
    out.push({
      object_type: rec.objectType,
      object_id: rec.objectId,
      object_status: rec.status,
      workflow_id: listed.workflowId,
      run_id: latest.runId,
      workflow_status: workflowStatus,
      action,
      detail,
    });
  }
  return out;
}

/** Starts the workflow of every piece committed more than graceSeconds ago without one, and records each. */
export async function reconcileUnstartedMail(deps: Deps, input: ReconcileOutboundMailInput): Promise<string[]> {
  const rows = await sqlRows<MailRow>(
    deps.db,
    `SELECT id, status, test_mode, member_id, agent_id, created_at, send_after, released_to_facility_at FROM outbound_mail
      WHERE workflow_started_at IS NULL AND status IN ('pending_approval','funding_pending','submitted')
        AND created_at < now() - ($1 || ' seconds')::interval
      ORDER BY created_at LIMIT 200`,
    [String(input.graceSeconds)],
  );
  for (const row of rows) {
    await startMailWorkflow(deps, row, {
      approvalTimeoutSeconds: input.approvalTimeoutSeconds,
      statusSince: row.created_at,
    });
    await recordIncident(deps, {
      incidentKey: `lost_start:outbound-mail-${row.id}`,
      objectType: 'outbound_mail',
      objectId: row.id,
      workflowId: `outbound-mail-${row.id}`,
      runId: null,
      kind: 'lost_start',
      objectStatus: row.status,
      workflowStatus: null,
      action: 'started',
      detail: 'The piece was committed but its workflow start was lost; the reconciler started it.',
    });
  }
  return rows.map((r) => r.id);
}

/** Whether the workflow of a record exists (any run); a lost start has none. */
export async function workflowExists(deps: Deps, workflowId: string): Promise<boolean> {
  try {
    await deps.temporal.workflow.getHandle(workflowId).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

export function closedWorkflowReconcilerScheduleId(taskQueue: string): string {
  return `closed-workflow-reconciler-${taskQueue}`;
}

/** Creates (or updates) the schedule of the closed-workflow reconciler. The worker calls it at start. */
export async function ensureClosedWorkflowReconcilerSchedule(deps: Deps): Promise<string> {
  const settings = deps.config.closedWorkflowReconciler;
  return ensureIntervalSchedule(deps, {
    scheduleId: closedWorkflowReconcilerScheduleId(deps.config.taskQueue),
    workflowType: RECONCILE_CLOSED_WORKFLOWS_WORKFLOW,
    workflowId: closedWorkflowReconcilerScheduleId(deps.config.taskQueue),
    args: [{ lookbackHours: settings.lookbackHours }],
    every: settings.everySeconds * 1000,
    catchupWindow: '1 minute',
    workflowExecutionTimeout: 10 * 60 * 1000,
  });
}
