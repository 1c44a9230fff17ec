// The one path from the API into a business object's workflow: an Update with a deadline
// (config.workflowUpdateDeadlineMs), its Update id derived from the caller's
// Idempotency-Key, one lost-start recovery (the workflow is missing while its row says it
// should be running: start it from the row and send the Update with the start), and one
// table from the workflow's refusals to the API's errors (domain/shared/workflow-failures.ts).
import {
  ActivityFailure,
  ApplicationFailure,
  ServiceError,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  WorkflowUpdateStage,
} from '@temporalio/client';
import type { UpdateDefinition, WorkflowStartOptions, WorkflowUpdateHandle } from '@temporalio/client';
import type { Deps } from './deps';
import { billingUrlOf } from '../../domain/billing/billing-url';
import { sha256Hex } from '../../domain/accounts/keys';
import { ApiError } from '../../domain/shared/errors';
import { workflowRefusalToApiError, workflowUnavailable } from '../../domain/shared/workflow-failures';

/** How to start an object's workflow from its row, for a start that was lost. */
export interface WorkflowStart {
  workflowType: string;
  /** Start options without the conflict policy (always USE_EXISTING: a concurrent start wins harmlessly). */
  options: Omit<WorkflowStartOptions, 'workflowIdConflictPolicy'>;
  /** Records on the row that the workflow exists (workflow_started_at), once it does. */
  markStarted?: () => Promise<unknown>;
}

export interface WorkflowUpdateCall<Ret, Args extends unknown[]> {
  workflowId: string;
  update: UpdateDefinition<Ret, Args>;
  args: Args;
  /** From updateIdFor(): the same key sends the same Update, which Temporal applies once. */
  updateId?: string;
  /**
   * Only when the row says the workflow should be running: how to start it. Null (or
   * absent) means a missing workflow has finished, and the row has the answer.
   */
  startFromRow?: () => WorkflowStart | null | Promise<WorkflowStart | null>;
}

/** The Update's result, or `closed` when the workflow has finished (the row has the answer). */
export type WorkflowUpdateAnswer<Ret> = { closed: false; value: Ret } | { closed: true };

/**
 * The Update id for a caller's Idempotency-Key: scoped by the caller (its key's owner) and
 * the operation, so two callers' keys never meet in one workflow. Undefined without a key.
 */
export function updateIdFor(
  auth: { ownerKey: string },
  operation: string,
  idempotencyKey: string | undefined,
): string | undefined {
  if (!idempotencyKey) return undefined;
  return `${operation}:${sha256Hex(`${auth.ownerKey}\n${operation}\n${idempotencyKey}`).slice(0, 40)}`;
}

/** The ApplicationFailure a refused Update carries (directly, or from the activity that refused). */
export function applicationFailureOf(err: unknown): ApplicationFailure | null {
  let cause: unknown = err;
  for (let depth = 0; cause && depth < 5; depth++) {
    if (cause instanceof ApplicationFailure && cause.type) return cause;
    if (!(
      cause instanceof WorkflowUpdateFailedError ||
      cause instanceof ActivityFailure ||
      cause instanceof ApplicationFailure
    ))
      return null;
    cause = cause.cause;
  }
  return null;
}

/** The API's error for a workflow's refusal: the one table. */
export function workflowFailureToApiError(deps: Pick<Deps, 'config'>, failure: ApplicationFailure): ApiError {
  const details = (failure.details?.[0] ?? {}) as Record<string, unknown>;
  return workflowRefusalToApiError(
    { type: failure.type, message: failure.message, details },
    billingUrlOf(deps.config.siteUrl),
  );
}

const isUnanswered = (err: unknown) =>
  err instanceof WorkflowUpdateRPCTimeoutOrCancelledError || err instanceof ServiceError;

/**
 * How long an accepted Update's result is awaited. Acceptance means a worker runs it; its
 * activities may retry for a while (the object store down, say) before it answers, and the
 * retried request with the same Idempotency-Key joins the same Update.
 */
const ACCEPTED_UPDATE_WAIT_MS = 60_000;

/**
 * Sends an Update and waits for its answer. The configured deadline bounds how long it
 * waits for a worker to accept the Update; an accepted one is awaited up to
 * ACCEPTED_UPDATE_WAIT_MS. Throws the table's ApiError when the workflow refuses, and 503
 * WORKFLOW_UNAVAILABLE when no answer came in time (no worker, or Temporal unreachable).
 */
export async function updateWorkflow<Ret, Args extends unknown[]>(
  deps: Deps,
  call: WorkflowUpdateCall<Ret, Args>,
): Promise<WorkflowUpdateAnswer<Ret>> {
  const deadlineMs = deps.config.workflowUpdateDeadlineMs;
  const options = { args: call.args, updateId: call.updateId, waitForStage: WorkflowUpdateStage.ACCEPTED };
  try {
    const accepted = await deps.temporal.withDeadline(Date.now() + deadlineMs, async () => {
      try {
        // The handle's overloads want a tuple type; the definition already ties args to it.
        const handle = deps.temporal.workflow.getHandle(call.workflowId);
        return {
          update: (await handle.startUpdate(
            call.update as unknown as UpdateDefinition<Ret, [unknown]>,
            options as never,
          )) as WorkflowUpdateHandle<Ret>,
        };
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        const start = await call.startFromRow?.();
        if (!start) return null;
        // The lost start: start it from the row and update it in one request.
        const startWorkflowOperation = new WithStartWorkflowOperation(start.workflowType, {
          ...start.options,
          workflowId: call.workflowId,
          workflowIdConflictPolicy: 'USE_EXISTING',
        } as never);
        const update = (await deps.temporal.workflow.startUpdateWithStart(call.update, {
          ...options,
          startWorkflowOperation,
        } as never)) as WorkflowUpdateHandle<Ret>;
        await start.markStarted?.();
        return { update };
      }
    });
    if (!accepted) return { closed: true };
    const value = await deps.temporal.withDeadline(Date.now() + ACCEPTED_UPDATE_WAIT_MS, () =>
      accepted.update.result(),
    );
    return { closed: false, value };
  } catch (err) {
    const failure = applicationFailureOf(err);
    if (failure) throw workflowFailureToApiError(deps, failure);
    // Finished meanwhile (a closed run of this id refuses a new start), or gone.
    if (err instanceof WorkflowNotFoundError || err instanceof WorkflowExecutionAlreadyStartedError)
      return { closed: true };
    if (isUnanswered(err)) {
      deps.log.warn(
        { err, workflow_id: call.workflowId, update: typeof call.update === 'string' ? call.update : call.update.name },
        'workflow update unanswered',
      );
      throw workflowUnavailable(deadlineMs);
    }
    throw err;
  }
}

/** The gateway's 503: the workflow did not answer within the deadline. */
export function isWorkflowUnavailable(err: unknown): err is ApiError {
  return err instanceof ApiError && err.code === 'WORKFLOW_UNAVAILABLE';
}
