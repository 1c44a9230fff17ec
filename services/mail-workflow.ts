// The API's side of the piece workflow: starting it (idempotently, by workflow id),
// sending it updates and turning its failures into the spec's errors, and the
// reconciler schedule that starts workflows for pieces whose start was lost (the API
// died between committing a paid piece and starting its workflow).
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Deps } from './deps';
import { ensureIntervalSchedule } from './schedules';
import { ApiError, codedError, errors } from '../domain/errors';
import { insufficientCredits } from './credits';
import {
  MAIL_FAILURE, OUTBOUND_MAIL_WORKFLOW, outboundMailWorkflowId, OutboundMailWorkflowInput, RECONCILE_OUTBOUND_MAIL_WORKFLOW,
  ReconcileOutboundMailInput,
} from '../workflows/contracts/mail';
import { AgentId, MailStatus, MemberId, ObjectId, TestMode } from '../workflows/search-attributes';
import type { MailRow } from './mail-record';
import type { Refusal } from '../domain/mail-rules';

export function positiveInt(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && Number.isInteger(n) && n >= 1 ? n : fallback;
}

/**
 * Outbound mail timings, from the environment: MAIL_APPROVAL_TIMEOUT_SECONDS (how long a
 * pending piece waits for approval before it is cancelled; 30 days),
 * MAIL_RECONCILE_EVERY_SECONDS (how often the reconciler runs; 30) and
 * MAIL_RECONCILE_GRACE_SECONDS (how old an unstarted piece must be before the reconciler
 * starts it; 30). Read at use, so tests can shorten them.
 */
export function mailSettings(env: NodeJS.ProcessEnv = process.env) {
  return {
    approvalTimeoutSeconds: positiveInt(env.MAIL_APPROVAL_TIMEOUT_SECONDS, 30 * 86400),
    reconcileEverySeconds: positiveInt(env.MAIL_RECONCILE_EVERY_SECONDS, 30),
    reconcileGraceSeconds: positiveInt(env.MAIL_RECONCILE_GRACE_SECONDS, 30),
  };
}

type StartableRow = Pick<MailRow, 'id' | 'status' | 'test_mode' | 'member_id' | 'agent_id'>;

/** The statuses a piece is created in, so the only ones its workflow can start from. */
const STARTABLE_STATUSES: readonly string[] = ['pending_approval', 'funding_pending', 'submitted'] satisfies OutboundMailWorkflowInput['status'][];

function isStartableStatus(status: string): status is OutboundMailWorkflowInput['status'] {
  return STARTABLE_STATUSES.includes(status);
}

/**
 * Starts `outbound-mail-<id>` unless it exists (running or closed), then records
 * workflow_started_at. Safe to call any number of times for the same piece.
 */
export async function startMailWorkflow(deps: Deps, row: StartableRow, approvalTimeoutSeconds = mailSettings().approvalTimeoutSeconds): Promise<void> {
  if (!isStartableStatus(row.status)) {
    throw new Error(`piece ${row.id} is ${row.status}; only new pieces get a workflow`);
  }
  const input: OutboundMailWorkflowInput = {
    outboundMailId: row.id,
    status: row.status,
    testMode: row.test_mode,
    memberId: row.member_id,
    agentId: row.agent_id,
    approvalTimeoutSeconds,
  };
  try {
    await deps.temporal.workflow.start(OUTBOUND_MAIL_WORKFLOW, {
      taskQueue: deps.config.taskQueue,
      workflowId: outboundMailWorkflowId(row.id),
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: MailStatus, value: row.status },
        { key: ObjectId, value: row.id },
        { key: MemberId, value: row.member_id },
        { key: AgentId, value: row.agent_id ?? '' },
        { key: TestMode, value: row.test_mode },
      ],
    });
  } catch (err) {
    // A closed workflow with this id already ran for this piece.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  await deps.db.query(`UPDATE outbound_mail SET workflow_started_at = now() WHERE id = $1 AND workflow_started_at IS NULL`, [row.id]);
}

const SPEND_LIMIT_HINT = 'Ask your human to raise the limit, or approve again when the last 24 hours\' spend allows it.';

/** MAIL_STATE_CONFLICT: the piece's status does not allow the step. */
export function mailStateConflict(message: string, details: Record<string, unknown>): ApiError {
  return errors.conflict('MAIL_STATE_CONFLICT', message, {
    details, suggestedAction: 'GET /v1/mail/{id} for the piece\'s current status; this step does not apply to it now.',
  });
}

/** MAIL_NOT_CANCELLABLE: printing has started, or the piece is final. */
export function mailNotCancellable(message: string, details: Record<string, unknown>): ApiError {
  return errors.conflict('MAIL_NOT_CANCELLABLE', message, {
    details, suggestedAction: 'Only pieces that are submitted and not yet printing (or awaiting approval) can be cancelled.',
  });
}

/** Maps a failure the piece workflow reported to the spec's error. */
export function mailFailureToApiError(deps: Deps, failure: ApplicationFailure): ApiError {
  const detail = (failure.details?.[0] ?? {}) as Record<string, unknown>;
  switch (failure.type) {
    case MAIL_FAILURE.stateConflict:
      return mailStateConflict(failure.message, detail);
    case MAIL_FAILURE.notCancellable:
      return mailNotCancellable(failure.message, detail);
    case MAIL_FAILURE.insufficientCredits:
      return insufficientCredits(deps, Number(detail.credits_required_cents), Number(detail.credit_balance_cents));
    case MAIL_FAILURE.spendLimit: {
      const refusal = detail as unknown as Refusal;
      return errors.unprocessable(refusal.code, refusal.message, { details: refusal.details, suggestedAction: SPEND_LIMIT_HINT });
    }
    case MAIL_FAILURE.notFound:
      return errors.notFound('Outbound mail');
    default:
      return codedError(500, 'MAIL_WORKFLOW_ERROR', failure.message, { suggestedAction: 'Retry the same request; quote the request_id if it persists.' });
  }
}

/** Raised when the piece's workflow has already finished (the piece is in a final state). */
export class MailWorkflowClosed extends Error {}

/**
 * Sends an update to the piece's workflow and waits for its answer (once per `updateId`). A workflow that was
 * never started (lost start) is started first; one that has finished raises
 * MailWorkflowClosed so the caller can answer from the stored record.
 */
export async function runMailUpdate<R>(deps: Deps, row: StartableRow, updateName: string, args: [] | [unknown], opts: { updateId?: string } = {}): Promise<R> {
  const handle = deps.temporal.workflow.getHandle(outboundMailWorkflowId(row.id));
  for (let attempt = 0; ; attempt++) {
    try {
      // With an updateId, Temporal applies a repeated update once and answers it with the first result.
      return (args.length
        ? await handle.executeUpdate<R, [unknown]>(updateName, { args, updateId: opts.updateId })
        : await handle.executeUpdate<R, []>(updateName, { updateId: opts.updateId }));
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
        throw mailFailureToApiError(deps, err.cause);
      }
      if (err instanceof WorkflowNotFoundError) {
        if (attempt > 0 || !isStartableStatus(row.status)) throw new MailWorkflowClosed(err.message);
        const [started] = await deps.db.query(`SELECT workflow_started_at FROM outbound_mail WHERE id = $1`, [row.id]);
        if (started?.workflow_started_at) throw new MailWorkflowClosed(err.message);
        await startMailWorkflow(deps, row);
        continue;
      }
      throw err;
    }
  }
}

export function reconcilerScheduleId(deps: Deps): string {
  return `outbound-mail-reconciler-${deps.config.taskQueue}`;
}

/**
 * Creates (or updates) the Temporal Schedule that runs the reconciler every
 * reconcileEverySeconds on this deployment's task queue. The worker calls it at start.
 */
export async function ensureMailReconcilerSchedule(deps: Deps, overrides: Partial<ReturnType<typeof mailSettings>> = {}): Promise<string> {
  const settings = { ...mailSettings(), ...overrides };
  const scheduleId = reconcilerScheduleId(deps);
  const input: ReconcileOutboundMailInput = { graceSeconds: settings.reconcileGraceSeconds, approvalTimeoutSeconds: settings.approvalTimeoutSeconds };
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
