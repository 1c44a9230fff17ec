// Starting the workflows of physical inbound records: `inbound-item-<id>` (publishes
// inbound.received) and `inbound-scan-<bundle>` (OCR, rule matching and the scan events),
// and the start options handling workflows share. A start that fails after its record is
// committed is left to the reconciler (services/physical-inbound/inbound-reconciler.ts).
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Deps } from '../shared/deps';
import {
  inboundReceivedWorkflowId,
  InboundReceivedWorkflowInput,
  scanBundleWorkflowId,
  ScanBundleWorkflowInput,
} from '../../workflows/physical-inbound/contracts';
import { AgentId, MemberId, ObjectId, ObjectStatus, TestMode } from '../../workflows/shared/search-attributes';
import { Db, ItemRow, markReceivedWorkflowStarted } from './item-records';
import { markBundleWorkflowStarted } from './scan-rows';

export interface InboundWorkflowAttributes {
  objectId: string;
  status: string;
  memberId: string;
  agentId: string | null;
  testMode: boolean;
}

/** Start options of a physical-inbound workflow (never a second run of a closed one). */
export function inboundStartOptions(deps: Deps, workflowId: string, args: unknown[], attrs: InboundWorkflowAttributes) {
  return {
    taskQueue: deps.config.taskQueue,
    workflowId,
    args,
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    typedSearchAttributes: [
      { key: ObjectStatus, value: attrs.status },
      { key: ObjectId, value: attrs.objectId },
      { key: MemberId, value: attrs.memberId },
      { key: AgentId, value: attrs.agentId ?? '' },
      { key: TestMode, value: attrs.testMode },
    ],
  };
}

/**
 * Starts a workflow (an existing one of that id is fine: its record already reached or is
 * on its way to an outcome) and marks the record started with `markStarted`.
 */
export async function startOnce(
  deps: Deps,
  workflowType: string,
  workflowId: string,
  args: unknown[],
  attrs: InboundWorkflowAttributes,
  markStarted: (db: Db, objectId: string) => Promise<void>,
) {
  try {
    await deps.temporal.workflow.start(workflowType, {
      ...inboundStartOptions(deps, workflowId, args, attrs),
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  // The reconciler starts what is not marked (a start lost after the record was committed).
  await markStarted(deps.db, attrs.objectId);
}

/**
 * Starts a workflow once its record is committed. The commit is what counts: if the
 * start fails, the reconciler starts it later, so the caller still gets its answer.
 */
export async function startAfterCommit(deps: Deps, what: string, start: () => Promise<unknown>): Promise<void> {
  try {
    await start();
  } catch (err) {
    deps.log.warn({ err, what }, 'workflow start left to the reconciler');
  }
}

/** `inbound-item-<id>`: publishes inbound.received for a committed item. */
export async function startInboundReceivedWorkflow(
  deps: Deps,
  item: Pick<ItemRow, 'id' | 'member_id' | 'agent_id' | 'environment' | 'status'>,
): Promise<void> {
  const input: InboundReceivedWorkflowInput = {
    itemId: item.id,
    memberId: item.member_id,
    agentId: item.agent_id,
    testMode: item.environment === 'test',
  };
  await startOnce(
    deps,
    'inboundReceivedWorkflow',
    inboundReceivedWorkflowId(item.id),
    [input],
    {
      objectId: item.id,
      status: item.status,
      memberId: item.member_id,
      agentId: item.agent_id,
      testMode: input.testMode,
    },
    markReceivedWorkflowStarted,
  );
}

/** `inbound-scan-<bundle>`: publishes scan_available, runs OCR, saves it, matches rules, publishes context_ready. */
export async function startScanBundleWorkflow(
  deps: Deps,
  bundleId: string,
  item: Pick<ItemRow, 'id' | 'member_id' | 'agent_id' | 'environment'>,
): Promise<void> {
  const input: ScanBundleWorkflowInput = {
    bundleId,
    itemId: item.id,
    memberId: item.member_id,
    agentId: item.agent_id,
    testMode: item.environment === 'test',
  };
  await startOnce(
    deps,
    'scanBundleWorkflow',
    scanBundleWorkflowId(bundleId),
    [input],
    {
      objectId: bundleId,
      status: 'queued',
      memberId: item.member_id,
      agentId: item.agent_id,
      testMode: input.testMode,
    },
    markBundleWorkflowStarted,
  );
}
