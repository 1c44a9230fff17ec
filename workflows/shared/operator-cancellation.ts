// How the business workflows (piece, batch, mail run, handling operation) answer a
// cancellation request from Temporal itself: "Request Cancellation" in the Temporal UI or
// `temporal workflow cancel`. Such a request must never abort a workflow half way and
// leave its record open and paid for. Instead, the workflow's main flow and its handlers
// keep running, and the workflow cancels its object the way the API's DELETE does (same
// activity, same refund ledger key, so the money moves once) while the object can still
// be cancelled; after that (printing started, facility accepted, run funded) it refuses,
// keeps running and records a workflow_incidents row the operator can see.
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  patched,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { createOperationsActivities } from '../../activities/operations/operations';
import type { IncidentObjectType } from '../../services/operations/workflow-incidents';
import { DATABASE_STEP } from './activity-options';

/** Histories recorded before this behaviour existed replay as they ran: the request aborted the main flow. */
export const OPERATOR_CANCELLATION_PATCH = 'operator-cancellation-request';

const ops = proxyActivities<ReturnType<typeof createOperationsActivities>>(DATABASE_STEP);

/**
 * Runs `main` so that a cancellation request does not reach it; `onRequest` runs instead
 * (outside any cancellable scope, so its activities complete). Handlers must run their
 * steps through `shielded` for the same reason: they run in the workflow's root scope,
 * which the request cancels.
 */
export function runShieldedFromCancellation<T>(main: () => Promise<T>, onRequest: () => Promise<void>): Promise<T> {
  let flow: CancellationScope | undefined;
  CancellationScope.current().cancelRequested.catch(() => {
    if (!patched(OPERATOR_CANCELLATION_PATCH)) {
      flow?.cancel();
      return;
    }
    void CancellationScope.nonCancellable(onRequest);
  });
  return CancellationScope.nonCancellable(() => {
    flow = new CancellationScope();
    return flow.run(main);
  });
}

/** Runs a handler's step so that a cancellation request does not interrupt it. */
export function shielded<T>(fn: () => Promise<T>): Promise<T> {
  return CancellationScope.nonCancellable(fn);
}

/**
 * One handler step at a time, each shielded from a cancellation request: `exclusive` waits
 * for the turn, so each step re-checks its guard once it holds it; `busy` tells the main
 * flow a step is under way.
 */
export function handlerTurns() {
  let busy = false;
  return {
    get busy() {
      return busy;
    },
    exclusive<T>(fn: () => Promise<T>): Promise<T> {
      return shielded(async () => {
        await condition(() => !busy);
        busy = true;
        try {
          return await fn();
        } finally {
          busy = false;
        }
      });
    },
  };
}

/** Records that a cancellation request from Temporal was refused, once per workflow run. */
export async function recordRefusedCancellation(
  objectType: IncidentObjectType,
  objectId: string,
  objectStatus: string,
  detail: string,
): Promise<void> {
  const { workflowId, runId } = workflowInfo();
  await ops.recordWorkflowIncident({
    incidentKey: `cancel_refused:${workflowId}:${runId}`,
    objectType,
    objectId,
    workflowId,
    runId,
    kind: 'cancel_refused',
    objectStatus,
    workflowStatus: 'Running',
    detail,
    action: 'refused',
  });
}

/** The refusal reason of a cancel activity that found the object past cancelling, or null for other errors. */
export function refusalOf(err: unknown): string | null {
  if (isCancellation(err)) return null;
  let cause: unknown = err;
  for (let depth = 0; cause && depth < 4; depth++) {
    if (cause instanceof ApplicationFailure && cause.type) return cause.message;
    cause = (cause as { cause?: unknown }).cause;
  }
  return null;
}
