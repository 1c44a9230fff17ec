// The API's side of the `mail-run-<uuid>` workflow: starting it from the run's row (on
// open, and again wherever a lost start is noticed), and sending it commit and cancel as
// Updates through the workflow gateway, whose refusals are answered from the run as it is
// now.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/client';
import type { Deps } from '../shared/deps';
import { ApiError, errors } from '../../domain/shared/errors';
import { mailRunNotCancellable, mailRunNotCommittable } from '../../domain/shared/workflow-failures';
import { updateWorkflow } from '../shared/workflow-gateway';
import { MAIL_RUN_WORKFLOW, MailRunWorkflowInput, mailRunWorkflowId } from '../../workflows/mail-runs/contracts';
import { AgentId, MemberId, ObjectId, ObjectStatus, TestMode } from '../../workflows/shared/search-attributes';
import { loadMailRunById, MailRunRow } from './record';
import { markRunWorkflowStarted } from './rows';

function workflowInput(run: MailRunRow): MailRunWorkflowInput {
  return {
    mailRunUuid: run.id,
    mailRunId: run.mail_run_id,
    memberId: run.member_id,
    agentId: run.agent_id,
    status: run.status,
    openedAt: run.opened_at.toISOString(),
    windowSeconds: run.window_seconds,
  };
}

/** Also used by the reconciler to start a run's workflow again from its row. */
export function mailRunStartOptions(deps: Deps, run: MailRunRow) {
  return {
    taskQueue: deps.config.taskQueue,
    workflowId: mailRunWorkflowId(run.id),
    args: [workflowInput(run)] as [MailRunWorkflowInput],
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    typedSearchAttributes: [
      { key: ObjectStatus, value: run.status },
      { key: ObjectId, value: run.mail_run_id },
      { key: MemberId, value: run.member_id },
      { key: AgentId, value: run.agent_id },
      { key: TestMode, value: false },
    ],
  };
}

async function markStarted(deps: Deps, run: MailRunRow): Promise<void> {
  if (run.workflow_started_at) return;
  await markRunWorkflowStarted(deps.db, run.id);
}

/** The run's workflow could not be started (Temporal unreachable). */
function workflowUnavailable(what: string): ApiError {
  return errors.unavailable(
    'MAIL_RUN_WORKFLOW_UNAVAILABLE',
    `${what} could not be confirmed right now. Repeat the same call: it never charges twice, and the run's close time stays as it is.`,
  );
}

/** Starts `mail-run-<uuid>` unless it exists (running or finished). Safe to repeat. */
export async function ensureRunWorkflow(deps: Deps, run: MailRunRow): Promise<void> {
  if (run.workflow_started_at) return;
  try {
    await deps.temporal.workflow.start(MAIL_RUN_WORKFLOW, {
      ...mailRunStartOptions(deps, run),
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
      deps.log.error({ err, mail_run: run.id }, 'starting the mail run workflow failed');
      throw workflowUnavailable('Opening the mail run');
    }
  }
  await markStarted(deps, run);
}

export function notCommittable(run: MailRunRow): ApiError {
  return mailRunNotCommittable(`The mail run is ${run.status}; it can no longer be committed.`, {
    status: run.status,
    cancellation_reason: run.cancellation_reason,
  });
}

export function notCancellable(run: MailRunRow): ApiError {
  return mailRunNotCancellable(`The mail run is ${run.status}; only a run that is not funded yet can be cancelled.`, {
    status: run.status,
  });
}

/**
 * Sends an update to the run's workflow through the gateway (starting it first if its
 * start was lost) and waits for the answer as long as every workflow call
 * (WORKFLOW_UPDATE_DEADLINE_MS). Null when the workflow has finished: Postgres has the
 * answer. A refusal is answered from the run as it is now.
 */
export async function runMailRunUpdate<R>(
  deps: Deps,
  run: MailRunRow,
  def: UpdateDefinition<R, []>,
  updateId?: string,
): Promise<R | null> {
  try {
    const answer = await updateWorkflow(deps, {
      workflowId: mailRunWorkflowId(run.id),
      update: def,
      args: [],
      updateId,
      startFromRow: () => ({
        workflowType: MAIL_RUN_WORKFLOW,
        options: mailRunStartOptions(deps, run),
        markStarted: () => markStarted(deps, run),
      }),
    });
    return answer.closed ? null : answer.value;
  } catch (err) {
    if (err instanceof ApiError && err.code === 'MAIL_RUN_NOT_CANCELLABLE')
      throw notCancellable((await loadMailRunById(deps.db, run.id))!);
    if (err instanceof ApiError && err.code === 'MAIL_RUN_NOT_COMMITTABLE')
      throw notCommittable((await loadMailRunById(deps.db, run.id))!);
    throw err;
  }
}
