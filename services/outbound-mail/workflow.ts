// The API's side of the piece workflow: starting it (idempotently, by workflow id),
// sending it updates through the workflow gateway, and the
// reconciler schedule that starts workflows for pieces whose start was lost (the API
// died between committing a paid piece and starting its workflow).
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { UpdateDefinition, WorkflowStartOptions } from '@temporalio/client';
import type { OutboundMailSettings } from '../../config';
import type { Deps } from '../shared/deps';
import { ensureIntervalSchedule } from '../operations/schedules';
import { updateWorkflow, WorkflowStart } from '../shared/workflow-gateway';
import { mailNotCancellable, mailStateConflict } from '../../domain/shared/workflow-failures';
import {
  mailStatusAtStart,
  OUTBOUND_MAIL_WORKFLOW,
  outboundMailWorkflowId,
  OutboundMailWorkflowInput,
  RECONCILE_OUTBOUND_MAIL_WORKFLOW,
  ReconcileOutboundMailInput,
} from '../../workflows/outbound-mail/contracts';
import {
  AgentId,
  MailStatus,
  MemberId,
  ObjectId,
  StatusChangedAt,
  TestMode,
} from '../../workflows/shared/search-attributes';
import { MailRow, markWorkflowStarted } from './rows';
import { scheduledSendInput } from './scheduled-send';
import { sqlRows } from '../shared/sql';

type StartableRow = Pick<MailRow, 'id' | 'status' | 'test_mode' | 'member_id' | 'agent_id'> &
  Partial<Pick<MailRow, 'send_after' | 'released_to_facility_at' | 'proof_key'>>;
type NewMailStatus = NonNullable<OutboundMailWorkflowInput['status']>;

/** The statuses a piece is created in, so the only ones its workflow can start from. */
const STARTABLE_STATUSES: readonly string[] = [
  'pending_approval',
  'funding_pending',
  'submitted',
] satisfies NewMailStatus[];

function isStartableStatus(status: string): status is NewMailStatus {
  return STARTABLE_STATUSES.includes(status);
}

/**
 * The start options of a piece's workflow: its search attributes (StatusChangedAt is
 * when the piece entered `status`) and what the Temporal UI shows as its summary.
 */
export function mailWorkflowStartOptions(
  deps: Deps,
  row: StartableRow,
  input: OutboundMailWorkflowInput,
  statusSince: Date,
) {
  const status = mailStatusAtStart(input);
  return {
    taskQueue: deps.config.taskQueue,
    workflowId: outboundMailWorkflowId(row.id),
    args: [input],
    typedSearchAttributes: [
      { key: MailStatus, value: status },
      { key: StatusChangedAt, value: statusSince },
      { key: ObjectId, value: row.id },
      { key: MemberId, value: row.member_id },
      { key: AgentId, value: row.agent_id ?? '' },
      { key: TestMode, value: row.test_mode },
    ],
    staticSummary: `Outbound mail ${row.id} (${row.test_mode ? 'sandbox' : 'live'})`,
    staticDetails:
      `Started ${input.restart ? `again by the reconciler (the previous run was ${input.restart.previousRunStatus}) ` : ''}with the piece ${status}. ` +
      'The input does not change; the current status is the MailStatus search attribute and the current details. ' +
      'Request Cancellation cancels and refunds the piece like DELETE /v1/mail/{id} until printing starts, and is refused after that.',
  };
}

/** How a piece's workflow is started: from a submission that announced it, or later. */
export interface MailStartOptions {
  /** How long a pending piece waits for its owner (from the start); the configured timeout unless given. */
  approvalTimeoutSeconds?: number;
  /** When the piece entered its status (StatusChangedAt); now unless given. */
  statusSince?: Date;
  /** The caller published the piece's first event already (see OutboundMailWorkflowInput.announced). */
  announced?: boolean;
}

/** How a new piece's `outbound-mail-<id>` starts from its row (the same for a first start and a lost one). */
function mailWorkflowStart(
  deps: Deps,
  row: StartableRow & { status: NewMailStatus },
  opts: MailStartOptions = {},
): WorkflowStart {
  const input: OutboundMailWorkflowInput = {
    outboundMailId: row.id,
    statusAtStart: row.status,
    testMode: row.test_mode,
    memberId: row.member_id,
    agentId: row.agent_id,
    approvalTimeoutSeconds: opts.approvalTimeoutSeconds ?? deps.config.outboundMail.approvalTimeoutSeconds,
    ...scheduledSendInput(row),
    ...(opts.announced ? { announced: true as const } : {}),
    printProof: row.proof_key ? 'stored' : 'render',
  };
  return {
    workflowType: OUTBOUND_MAIL_WORKFLOW,
    options: {
      ...mailWorkflowStartOptions(deps, row, input, opts.statusSince ?? new Date()),
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    },
    markStarted: () => markWorkflowStarted(deps.db, row.id),
  };
}

/**
 * Starts `outbound-mail-<id>` unless it exists (running or closed), then records
 * workflow_started_at. Safe to call any number of times for the same piece.
 */
export async function startMailWorkflow(deps: Deps, row: StartableRow, opts: MailStartOptions = {}): Promise<void> {
  if (!isStartableStatus(row.status)) {
    throw new Error(`piece ${row.id} is ${row.status}; only new pieces get a workflow`);
  }
  const start = mailWorkflowStart(deps, { ...row, status: row.status }, opts);
  try {
    await deps.temporal.workflow.start(start.workflowType, {
      ...start.options,
      workflowIdConflictPolicy: 'USE_EXISTING',
    } as WorkflowStartOptions);
  } catch (err) {
    // A closed workflow with this id already ran for this piece.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  await start.markStarted!();
}

export { mailNotCancellable, mailStateConflict };

/** A call's Idempotency-Key: the workflow Update's id derives from it, so a retry is the same Update. */
export interface MailCallOptions {
  idempotencyKey?: string;
}

/** Raised when the piece's workflow has already finished (the piece is in a final state). */
export class MailWorkflowClosed extends Error {}

/**
 * Sends an update to the piece's workflow through the gateway and waits for its answer
 * (once per `updateId`). A workflow that was never started (lost start) is started first;
 * one that has finished raises MailWorkflowClosed so the caller can answer from the
 * stored record.
 */
export async function runMailUpdate<R, Args extends [] | [unknown]>(
  deps: Deps,
  row: StartableRow,
  update: UpdateDefinition<R, Args>,
  args: Args,
  opts: { updateId?: string } = {},
): Promise<R> {
  const answer = await updateWorkflow<R, Args>(deps, {
    workflowId: outboundMailWorkflowId(row.id),
    update,
    args,
    updateId: opts.updateId,
    startFromRow: async () => {
      if (!isStartableStatus(row.status)) return null;
      const [started] = await sqlRows<Pick<MailRow, 'workflow_started_at'>>(
        deps.db,
        `SELECT workflow_started_at FROM outbound_mail WHERE id = $1`,
        [row.id],
      );
      if (started?.workflow_started_at) return null;
      return mailWorkflowStart(deps, { ...row, status: row.status });
    },
  });
  if (answer.closed) throw new MailWorkflowClosed(`outbound mail ${row.id}: workflow finished`);
  return answer.value;
}

export function reconcilerScheduleId(deps: Deps): string {
  return `outbound-mail-reconciler-${deps.config.taskQueue}`;
}

/**
 * Creates (or updates) the Temporal Schedule that runs the reconciler every
 * reconcileEverySeconds (config.outboundMail) on this deployment's task queue. The worker
 * calls it at start.
 */
export async function ensureMailReconcilerSchedule(
  deps: Deps,
  overrides: Partial<OutboundMailSettings> = {},
): Promise<string> {
  const settings = { ...deps.config.outboundMail, ...overrides };
  const scheduleId = reconcilerScheduleId(deps);
  const input: ReconcileOutboundMailInput = {
    graceSeconds: settings.reconcileGraceSeconds,
    approvalTimeoutSeconds: settings.approvalTimeoutSeconds,
  };
  return ensureIntervalSchedule(deps, {
    scheduleId,
    workflowType: RECONCILE_OUTBOUND_MAIL_WORKFLOW,
    workflowId: `outbound-mail-reconciler-${deps.config.taskQueue}`,
    args: [input],
    every: settings.reconcileEverySeconds * 1000,
    catchupWindow: '1 minute',
    workflowExecutionTimeout: 10 * 60 * 1000,
  });
}
