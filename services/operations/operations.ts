// What operators ask of the system day to day, answered from Postgres and Temporal
// together: one piece with everything around it, lists of pieces, the work that is stuck
// (too long in a status, workflow start lost, workflow closed under an open record,
// waiting on a worker), an operator's cancellation, and running the reconcilers now.
import { WorkflowNotFoundError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { Deps } from '../shared/deps';
import { errors } from '../../domain/shared/errors';
import { loadMailRow, MailRow } from '../outbound-mail/record';
import { startMailWorkflow } from '../outbound-mail/workflow';
import { reconcilerScheduleId } from '../outbound-mail/workflow';
import { inboundReconcilerScheduleId, reconcilePhysicalInbound } from '../physical-inbound/inbound-reconciler';
import { webhookDispatchReconcilerScheduleId } from '../../workflows/webhooks/contracts';
import { reconcilePayments } from '../billing/reconciler';
import { paymentsReconcilerScheduleId } from '../../workflows/billing/contracts';
import { IncidentObjectType, IncidentRow, incidentsOf } from './workflow-incidents';
import type { DeliveryRow } from '../webhooks/deliveries';
import {
  abandonedWorkflowsQuery,
  closedWorkflowReconcilerScheduleId,
  mailStatusSince,
  objectOfWorkflowId,
  openRecord,
  reconcileClosedWorkflows,
  reconcileUnstartedMail,
} from './workflow-reconciler';
import { outboundMailWorkflowId } from '../../workflows/outbound-mail/contracts';
import { sqlRows } from '../shared/sql';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const OPEN_MAIL_STATUSES = ['pending_approval', 'funding_pending', 'submitted', 'ready', 'mailed'];

export function temporalUiLink(deps: Deps, workflowId: string): string | null {
  if (!deps.config.temporalUiUrl) return null;
  return `${deps.config.temporalUiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(deps.config.temporalNamespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

export async function operatorMailRow(deps: Deps, id: string): Promise<MailRow> {
  const row = UUID.test(id) ? await loadMailRow(deps.db, id) : null;
  if (!row) throw errors.notFound(`Outbound mail ${id}`);
  return row;
}

export interface WorkflowView {
  workflow_id: string;
  /** RUNNING, COMPLETED, TERMINATED, CANCELLED, FAILED, TIMED_OUT, ... or NOT_FOUND (start lost). */
  status: string;
  run_id: string | null;
  task_queue: string | null;
  pending_activities: { activity_type: string; attempt: number; last_failure: string | null }[];
  /** When a workflow task has waited for a worker (no worker polls, or all are busy). */
  workflow_task_waiting_since: string | null;
  search_attributes: Record<string, unknown>;
  temporal_ui: string | null;
}

export async function describeWorkflow(deps: Deps, workflowId: string): Promise<WorkflowView> {
  const base = { workflow_id: workflowId, temporal_ui: temporalUiLink(deps, workflowId) };
  try {
    const d = await deps.temporal.workflow.getHandle(workflowId).describe();
    const waiting = d.raw.pendingWorkflowTask?.scheduledTime;
    const attributes: Record<string, unknown> = {};
    for (const pair of d.typedSearchAttributes.getAll()) attributes[pair.key.name] = pair.value;
    return {
      ...base,
      status: d.status.name,
      run_id: d.runId,
      task_queue: d.taskQueue,
      pending_activities: (d.raw.pendingActivities ?? []).map((a) => ({
        activity_type: a.activityType?.name ?? '',
        attempt: a.attempt ?? 1,
        last_failure: a.lastFailure?.message ?? null,
      })),
      workflow_task_waiting_since: waiting?.seconds ? new Date(Number(waiting.seconds) * 1000).toISOString() : null,
      search_attributes: attributes,
    };
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    return {
      ...base,
      status: 'NOT_FOUND',
      run_id: null,
      task_queue: null,
      pending_activities: [],
      workflow_task_waiting_since: null,
      search_attributes: {},
    };
  }
}

/** mail:show: the row, its workflow, its ledger lines, events, webhook deliveries and incidents. */
export async function showMail(deps: Deps, id: string) {
  const row = await operatorMailRow(deps, id);
  const [ledger, events, deliveries, incidents, workflow] = await Promise.all([
    sqlRows<{ kind: string; amount_cents: number; entry_key: string; description: string | null; created_at: Date }>(
      deps.db,
      `SELECT kind, amount_cents, entry_key, description, created_at FROM credits_ledger WHERE reference_id = $1 ORDER BY created_at, id`,
      [row.id],
    ),
    sqlRows<{ id: string; event_type: string; created_at: Date }>(
      deps.db,
      `SELECT id, event_type, created_at FROM events WHERE object_type = 'outbound_mail' AND object_id = $1 ORDER BY created_at, id`,
      [row.id],
    ),
    sqlRows<
      Pick<
        DeliveryRow,
        | 'id'
        | 'event_type'
        | 'target_type'
        | 'target_url'
        | 'status'
        | 'attempts_count'
        | 'last_status_code'
        | 'last_error'
        | 'delivered_at'
      >
    >(
      deps.db,
      `SELECT d.id, d.event_type, d.target_type, d.target_url, d.status, d.attempts_count, d.last_status_code, d.last_error, d.delivered_at
         FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE e.object_type = 'outbound_mail' AND e.object_id = $1 ORDER BY d.created_at, d.id`,
      [row.id],
    ),
    incidentsOf(deps.db, 'outbound_mail', row.id),
    describeWorkflow(deps, outboundMailWorkflowId(row.id)),
  ]);
  return {
    mail: {
      id: row.id,
      status: row.status,
      status_since: mailStatusSince(row).toISOString(),
      live: !row.test_mode,
      member_id: row.member_id,
      agent_id: row.agent_id,
      facility_id: row.facility_id,
      mail_class: row.mail_class,
      price_cents: row.price_cents,
      cost_cents: row.cost_cents,
      printing_started_at: row.printing_started_at?.toISOString() ?? null,
      cancellation_reason: row.cancellation_reason,
      created_at: row.created_at.toISOString(),
      workflow_started_at: row.workflow_started_at?.toISOString() ?? null,
      url: `${deps.config.baseUrl}/v1/mail/${row.id}`,
    },
    workflow,
    ledger: ledger.map((l) => ({ ...l, amount_cents: Number(l.amount_cents) })),
    events,
    webhook_deliveries: deliveries,
    incidents: incidents.map(incidentView),
  };
}

function incidentView(i: IncidentRow) {
  return {
    kind: i.kind,
    action: i.action,
    object_status: i.object_status,
    workflow_status: i.workflow_status,
    run_id: i.run_id,
    detail: i.detail,
    created_at: i.created_at,
  };
}

export interface MailListFilter {
  status?: string;
  memberId?: string;
  agentId?: string;
  /** Only pieces in their status for longer than this. */
  olderThanSeconds?: number;
  live?: boolean;
  limit: number;
}

/** The SQL of "when the piece entered its status", from the per-status timestamps. */
const STATUS_SINCE_SQL = `CASE m.status WHEN 'submitted' THEN m.submitted_at WHEN 'ready' THEN m.ready_at WHEN 'mailed' THEN m.mailed_at
  WHEN 'delivered' THEN m.delivered_at WHEN 'failed' THEN m.failed_at WHEN 'cancelled' THEN m.cancelled_at ELSE NULL END`;

export async function listMailForOperator(deps: Deps, f: MailListFilter) {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (f.status) add('m.status = ?', f.status);
  if (f.memberId) add('m.member_id = ?', f.memberId);
  if (f.agentId) add('m.agent_id = ?', f.agentId);
  if (f.live !== undefined) add('m.test_mode = ?', !f.live);
  if (f.olderThanSeconds !== undefined)
    add(`COALESCE(${STATUS_SINCE_SQL}, m.created_at) < now() - make_interval(secs => ?)`, f.olderThanSeconds);
  params.push(f.limit);
  type Row = {
    id: string;
    status: string;
    status_since: Date;
    printing_started_at: Date | null;
    member_id: string;
    agent_id: string | null;
    test_mode: boolean;
    price_cents: number;
    facility_id: string | null;
    created_at: Date;
    workflow_started_at: Date | null;
  };
  const rows = await sqlRows<Row>(
    deps.db,
    `SELECT m.id, m.status, COALESCE(${STATUS_SINCE_SQL}, m.created_at) AS status_since, m.printing_started_at, m.member_id, m.agent_id,
            m.test_mode, m.price_cents, m.facility_id, m.created_at, m.workflow_started_at
       FROM outbound_mail m ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY status_since ASC, m.id LIMIT $${params.length}`,
    params,
  );
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    status_since: r.status_since.toISOString(),
    printing_started: Boolean(r.printing_started_at),
    live: !r.test_mode,
    member_id: r.member_id,
    agent_id: r.agent_id,
    facility_id: r.facility_id,
    price_cents: r.price_cents,
    created_at: r.created_at.toISOString(),
    workflow_started: Boolean(r.workflow_started_at),
  }));
}

export interface StuckReport {
  older_than_seconds: number;
  /** Open pieces in their status longer than older_than, with their workflow's state. */
  in_status_too_long: (Awaited<ReturnType<typeof listMailForOperator>>[number] & {
    workflow_status: string;
    temporal_ui: string | null;
  })[];
  /** Records committed without a workflow (start lost). */
  lost_starts: { object_type: IncidentObjectType; object_id: string; status: string; created_at: string }[];
  /** Workflows closed (terminated, cancelled, failed, timed out) while their record is open. */
  closed_workflows: {
    object_type: IncidentObjectType;
    object_id: string;
    object_status: string;
    workflow_id: string;
    workflow_status: string;
    temporal_ui: string | null;
  }[];
  /** Open pieces whose workflow waits for a worker: a workflow task or a retrying activity is pending, or no worker polls the queue. */
  waiting_on_worker: { object_id: string; workflow_id: string; reason: string; temporal_ui: string | null }[];
  task_queue: { name: string; workflow_pollers: number; activity_pollers: number };
}

async function pollers(deps: Deps, taskQueue: string, type: 1 | 2): Promise<number> {
  const r = await deps.temporal.workflowService.describeTaskQueue({
    namespace: deps.config.temporalNamespace,
    taskQueue: { name: taskQueue },
    taskQueueType: type,
  });
  return r.pollers?.length ?? 0;
}

/** stuck: everything an operator should look at now. */
/** `memberId` narrows the pieces, lost starts and closed workflows to one member. */
export async function findStuckWork(
  deps: Deps,
  opts: { olderThanSeconds: number; limit: number; memberId?: string },
): Promise<StuckReport> {
  const taskQueue = deps.config.taskQueue;
  const [workflowPollers, activityPollers] = await Promise.all([
    pollers(deps, taskQueue, 1),
    pollers(deps, taskQueue, 2),
  ]);

  const open = (
    await Promise.all(
      OPEN_MAIL_STATUSES.map((status) =>
        listMailForOperator(deps, {
          status,
          memberId: opts.memberId,
          olderThanSeconds: opts.olderThanSeconds,
          limit: opts.limit,
        }),
      ),
    )
  ).flat();
  const inStatus: StuckReport['in_status_too_long'] = [];
  const waiting: StuckReport['waiting_on_worker'] = [];
  for (const piece of open) {
    const wf = await describeWorkflow(deps, outboundMailWorkflowId(piece.id));
    inStatus.push({ ...piece, workflow_status: wf.status, temporal_ui: wf.temporal_ui });
    if (wf.status !== 'RUNNING') continue;
    const retrying = wf.pending_activities.find((a) => a.attempt > 1);
    const reason =
      workflowPollers === 0 || activityPollers === 0
        ? `no worker polls task queue ${taskQueue}`
        : wf.workflow_task_waiting_since
          ? `a workflow task has waited for a worker since ${wf.workflow_task_waiting_since}`
          : retrying
            ? `activity ${retrying.activity_type} is retrying (attempt ${retrying.attempt}): ${retrying.last_failure ?? 'no failure message'}`
            : null;
    if (reason) waiting.push({ object_id: piece.id, workflow_id: wf.workflow_id, reason, temporal_ui: wf.temporal_ui });
  }

  // Lost starts: committed records without workflow_started_at, and (for pieces) marked ones whose workflow does not exist.
  const grace = `now() - make_interval(secs => ${Math.max(1, deps.config.outboundMail.reconcileGraceSeconds)})`;
  const lost: StuckReport['lost_starts'] = [];
  type Unstarted = { object_type: IncidentObjectType; object_id: string; status: string; created_at: Date };
  const unstarted: Unstarted[] = [
    ...(await sqlRows<Unstarted>(
      deps.db,
      `SELECT 'outbound_mail' AS object_type, id::text AS object_id, status, created_at FROM outbound_mail
        WHERE ($2::uuid IS NULL OR member_id = $2) AND workflow_started_at IS NULL AND status IN ('pending_approval','funding_pending','submitted') AND created_at < ${grace} ORDER BY created_at LIMIT $1`,
      [opts.limit, opts.memberId ?? null],
    )),
    ...(await sqlRows<Unstarted>(
      deps.db,
      `SELECT 'mail_run' AS object_type, id::text AS object_id, status, created_at FROM mail_runs
        WHERE ($2::uuid IS NULL OR member_id = $2) AND workflow_started_at IS NULL AND status IN ('open','funding_pending') AND created_at < ${grace} ORDER BY created_at LIMIT $1`,
      [opts.limit, opts.memberId ?? null],
    )),
    ...(await sqlRows<Unstarted>(
      deps.db,
      `SELECT 'handling' AS object_type, id::text AS object_id, status, created_at FROM handling_operations
        WHERE ($2::uuid IS NULL OR member_id = $2) AND workflow_started_at IS NULL AND status IN ('awaiting_member_approval','awaiting_facility','accepted') AND created_at < ${grace} ORDER BY created_at LIMIT $1`,
      [opts.limit, opts.memberId ?? null],
    )),
  ];
  for (const u of unstarted) lost.push({ ...u, created_at: u.created_at.toISOString() });
  for (const piece of inStatus) {
    if (piece.workflow_started && piece.workflow_status === 'NOT_FOUND') {
      lost.push({
        object_type: 'outbound_mail',
        object_id: piece.id,
        status: piece.status,
        created_at: piece.created_at,
      });
    }
  }

  const closed: StuckReport['closed_workflows'] = [];
  const seen = new Set<string>();
  const query =
    abandonedWorkflowsQuery(
      taskQueue,
      new Date(Date.now() - deps.config.closedWorkflowReconciler.lookbackHours * 3600_000),
    ) + (opts.memberId ? ` AND MemberId = "${opts.memberId}"` : '');
  for await (const listed of deps.temporal.workflow.list({ query })) {
    if (seen.has(listed.workflowId) || closed.length >= opts.limit) continue;
    seen.add(listed.workflowId);
    const object = objectOfWorkflowId(listed.workflowId);
    if (!object) continue;
    const latest = await describeWorkflow(deps, listed.workflowId);
    if (latest.status === 'RUNNING' || latest.status === 'COMPLETED') continue;
    const rec = await openRecord(deps, object.objectType, object.objectId);
    if (!rec) continue;
    closed.push({
      object_type: rec.objectType,
      object_id: rec.objectId,
      object_status: rec.status,
      workflow_id: listed.workflowId,
      workflow_status: latest.status,
      temporal_ui: latest.temporal_ui,
    });
  }

  return {
    older_than_seconds: opts.olderThanSeconds,
    in_status_too_long: inStatus,
    lost_starts: lost,
    closed_workflows: closed,
    waiting_on_worker: waiting,
    task_queue: { name: taskQueue, workflow_pollers: workflowPollers, activity_pollers: activityPollers },
  };
}

/**
 * mail:cancel: the operator's cancellation goes through the piece's workflow as a
 * cancellation request (the same path as Request Cancellation in the Temporal UI), so it
 * is serialised with the facility's steps and refunds once. Waits for the outcome.
 */
export async function operatorCancelMail(deps: Deps, id: string, reason: string, opts: { waitMs?: number } = {}) {
  let row = await operatorMailRow(deps, id);
  const workflowId = outboundMailWorkflowId(row.id);
  if (row.status === 'cancelled')
    return { outbound_mail_id: row.id, status: row.status, already_cancelled: true, refunded_cents: 0, refused: null };
  if (!OPEN_MAIL_STATUSES.includes(row.status)) {
    throw errors.conflict('MAIL_NOT_CANCELLABLE', `The piece is ${row.status}; it is final and cannot be cancelled.`, {
      details: { status: row.status },
      suggestedAction: 'Nothing to cancel: the piece is finished.',
    });
  }
  let wf = await describeWorkflow(deps, workflowId);
  if (wf.status === 'NOT_FOUND' && !row.workflow_started_at) {
    await startMailWorkflow(deps, row);
    wf = await describeWorkflow(deps, workflowId);
  }
  if (wf.status !== 'RUNNING') {
    throw errors.conflict(
      'MAIL_WORKFLOW_CLOSED',
      `The piece's workflow is ${wf.status} while the piece is ${row.status}; nothing can cancel it now.`,
      {
        details: { workflow_id: workflowId, workflow_status: wf.status },
        suggestedAction: 'Run `npm run admin -- reconcile` to restart its workflow, then cancel again.',
      },
    );
  }
  const refusedBefore = (await incidentsOf(deps.db, 'outbound_mail', row.id)).filter(
    (i) => i.kind === 'cancel_refused' && i.run_id === wf.run_id,
  );
  await deps.temporal.workflowService.requestCancelWorkflowExecution({
    namespace: deps.config.temporalNamespace,
    workflowExecution: { workflowId, runId: wf.run_id ?? undefined },
    identity: 'operator-cli',
    requestId: randomUUID(),
    reason: `operator: ${reason}`,
  });
  const deadline = Date.now() + (opts.waitMs ?? 30_000);
  for (;;) {
    row = (await loadMailRow(deps.db, row.id))!;
    if (row.status === 'cancelled') {
      const [refund] = await sqlRows<{ amount_cents: number }>(
        deps.db,
        `SELECT amount_cents FROM credits_ledger WHERE entry_key = $1`,
        [`refund:mail:${row.id}`],
      );
      deps.log.warn({ outbound_mail_id: row.id, reason }, 'operator cancelled a piece');
      return {
        outbound_mail_id: row.id,
        status: row.status,
        already_cancelled: false,
        refunded_cents: refund ? Number(refund.amount_cents) : 0,
        refused: null,
      };
    }
    const refused = (await incidentsOf(deps.db, 'outbound_mail', row.id)).find(
      (i) => i.kind === 'cancel_refused' && i.run_id === wf.run_id,
    );
    if (refused || refusedBefore.length) {
      throw errors.conflict('MAIL_NOT_CANCELLABLE', (refused ?? refusedBefore[0]).detail, {
        details: { status: row.status },
        suggestedAction:
          'The facility has the piece; let it finish, or have the facility report it failed (which refunds).',
      });
    }
    if (Date.now() > deadline) {
      throw errors.unavailable(
        'MAIL_CANCEL_PENDING',
        'The cancellation was requested but the workflow has not acted on it yet (is a worker running?).',
        {
          suggestedAction: `Check \`npm run admin -- mail:show ${row.id}\`; the request stays with the workflow and is acted on when a worker runs it.`,
        },
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** reconcile: runs every reconciler now (the schedules run them on their own too). */
export async function runReconcilersNow(deps: Deps) {
  const mail = deps.config.outboundMail;
  const started = await reconcileUnstartedMail(deps, {
    graceSeconds: mail.reconcileGraceSeconds,
    approvalTimeoutSeconds: mail.approvalTimeoutSeconds,
  });
  const inbound = await reconcilePhysicalInbound(deps, deps.config.physicalInbound.reconcileGraceSeconds);
  const closed = await reconcileClosedWorkflows(deps);
  const payments = await reconcilePayments(deps, deps.config.stripe.reconcileGraceSeconds);
  return {
    lost_mail_starts_started: started,
    physical_inbound_started: inbound,
    closed_workflows: closed,
    payments_started: payments,
    schedules: reconcilerScheduleIds(deps),
  };
}

export function reconcilerScheduleIds(deps: Deps): string[] {
  const tq = deps.config.taskQueue;
  return [
    reconcilerScheduleId(deps),
    inboundReconcilerScheduleId(deps),
    closedWorkflowReconcilerScheduleId(tq),
    webhookDispatchReconcilerScheduleId(tq),
    paymentsReconcilerScheduleId(tq),
  ];
}
