// How the business workflows (piece, batch, mail run, handling operation) answer a
// cancellation request from Temporal itself: "Request Cancellation" in the Temporal UI or
// `temporal workflow cancel`. Such a request must never abort a workflow half way and
// leave its record open and paid for. Instead, the workflow's main flow and its handlers
// keep running, and the workflow cancels its object the way the API's DELETE does (same
// activity, same refund ledger key, so the money moves once) while the object can still
// be cancelled; after that (printing started, facility accepted, run funded) it refuses,
// keeps running and records a workflow_incidents row the operator can see.
import { CancellationScope, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { createOperationsActivities } from '../../activities/operations/operations';
import type { IncidentObjectType } from '../../domain/workflow-safe/workflow-incidents';
import { DATABASE_STEP } from './activity-options';
import { refusalOf } from './activity-failures';
import type { ExclusiveTurns } from './turns';

/** Histories recorded before this behaviour existed replay as they ran: the request aborted the main flow. */
export const OPERATOR_CANCELLATION_PATCH = 'operator-cancellation-request';

const ops = proxyActivities<ReturnType<typeof createOperationsActivities>>(DATABASE_STEP);

/**
 * Runs `main` so that a cancellation request does not reach it; `onRequest` runs instead
 * (outside any cancellable scope, so its activities complete). Handlers must run their
 * steps in a turn (turns.ts), which shields them for the same reason: they run in the
 * workflow's root scope, which the request cancels.
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

/** Records that a cancellation request from Temporal was refused, once per workflow run. */
async function recordRefusedCancellation(
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

/** One workflow's object, as the cancel-or-refuse path sees it. */
export interface OperatorCancellation {
  objectType: IncidentObjectType;
  objectId: string;
  status(): string;
  /** Nothing left to do: the object is cancelled (or closed) already. */
  settled(): boolean;
  /** Whether the object can still be cancelled, as far as the workflow knows. */
  cancellable(): boolean;
  /** Cancels the object the way the API's DELETE does (the same activity) and applies the result. */
  cancel(): Promise<void>;
  /** Why the object can no longer be cancelled, when the workflow refuses without asking the activity. */
  whyNot(): string;
  /** Shows the refusal on the workflow (its details). */
  showRefusal(reason: string): void;
}

/**
 * The workflow's answer to a cancellation request from Temporal, for runShieldedFromCancellation:
 * in a turn, cancel the object while it can be cancelled; otherwise (or when the cancel
 * activity refuses) show and record the refusal, and keep running.
 */
export function cancelOrRefuse(turns: ExclusiveTurns, object: OperatorCancellation): () => Promise<void> {
  return () =>
    turns.run(async () => {
      if (object.settled()) return;
      let refusal: string | null = null;
      if (object.cancellable()) {
        try {
          await object.cancel();
          return;
        } catch (err) {
          refusal = refusalOf(err);
          if (refusal === null) throw err;
        }
      }
      const reason = refusal ?? object.whyNot();
      object.showRefusal(reason);
      await recordRefusedCancellation(
        object.objectType,
        object.objectId,
        object.status(),
        `Cancellation requested from Temporal refused: ${reason} The workflow keeps running.`,
      );
    });
}
