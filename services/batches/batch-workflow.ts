// Starting the batch workflow and calling it: a batch's status changes are the workflow's
// (Updates), so confirm, cancel, the sandbox advance and the facility steps all go through
// runUpdate here; the reconciler restarts a draft's lost workflow with the same options.
import type { UpdateDefinition } from '@temporalio/client';
import type { Deps } from '../shared/deps';
import { updateWorkflow } from '../shared/workflow-gateway';
import { BatchWorkflowInput, batchWorkflowId } from '../../workflows/batches/contracts';
import { AgentId, BatchStatus, MemberId, ObjectId, TestMode } from '../../workflows/shared/search-attributes';
import { BatchRow, loadBatchRow } from './rows';
import { scheduledBatchInput } from './scheduled-send';

export const BATCH_MAIL_WORKFLOW = 'batchMailWorkflow';

/** Per-call settings; the defaults come from the deployment's config. */
export interface BatchServiceOptions {
  /** Draft lifetime; unset: config.batchDraftExpirySeconds (BATCH_DRAFT_EXPIRY_SECONDS, 7 days). Tests shorten it. */
  draftExpirySeconds?: number;
  /** The caller's Idempotency-Key: the workflow Update's id is derived from it. */
  idempotencyKey?: string;
}

export function draftExpirySeconds(deps: Deps, opts: BatchServiceOptions): number {
  return opts.draftExpirySeconds ?? deps.config.batchDraftExpirySeconds;
}

/** Also used by the reconciler to start a draft's workflow again. */
export function batchWorkflowStartOptions(deps: Deps, input: BatchWorkflowInput) {
  const attributes = [
    { key: BatchStatus, value: 'draft' },
    { key: MemberId, value: input.memberId },
    { key: ObjectId, value: input.batchId },
    { key: TestMode, value: input.testMode },
    ...(input.agentId ? [{ key: AgentId, value: input.agentId }] : []),
  ];
  return {
    taskQueue: deps.config.taskQueue,
    workflowId: batchWorkflowId(input.batchId),
    args: [input] as [BatchWorkflowInput],
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    typedSearchAttributes: attributes as never,
  };
}

export function batchWorkflowInput(r: BatchRow, expirySeconds: number): BatchWorkflowInput {
  return {
    batchId: r.id,
    memberId: r.member_id,
    agentId: r.agent_id,
    testMode: r.test_mode,
    createdAt: r.created_at.toISOString(),
    draftExpirySeconds: expirySeconds,
    ...scheduledBatchInput(r),
  };
}

export type UpdateOutcome<T> = { ok: true; value: T } | { ok: false; kind: 'gone' };

/**
 * Sends an Update to the batch workflow through the gateway. A draft's workflow may be
 * started here (its start was lost); any other batch whose workflow is gone has finished,
 * and Postgres has the answer. Refusals and 503 WORKFLOW_UNAVAILABLE are thrown.
 */
export async function runUpdate<Ret, Args extends unknown[]>(
  deps: Deps,
  row: BatchRow,
  def: UpdateDefinition<Ret, Args>,
  args: Args,
  opts: BatchServiceOptions & { updateId?: string } = {},
): Promise<UpdateOutcome<Ret>> {
  const answer = await updateWorkflow(deps, {
    workflowId: batchWorkflowId(row.id),
    update: def,
    args,
    updateId: opts.updateId,
    startFromRow: () =>
      row.status === 'draft'
        ? {
            workflowType: BATCH_MAIL_WORKFLOW,
            options: batchWorkflowStartOptions(deps, batchWorkflowInput(row, draftExpirySeconds(deps, opts))) as never,
          }
        : null,
  });
  return answer.closed ? { ok: false, kind: 'gone' } : { ok: true, value: answer.value };
}

export async function reload(deps: Deps, id: string): Promise<BatchRow> {
  return (await loadBatchRow(deps.db, id))!;
}
