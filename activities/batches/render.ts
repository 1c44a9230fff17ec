// Side effects of the batch render workflow: render a merged batch's next rows (heartbeating
// the rows rendered so far), and make the rendered batch a draft and start its batch
// workflow. Both are safe to run again: rows keep their first outcome, and finishing a batch
// that is no longer rendering only makes sure its workflow runs.
import { Context } from '@temporalio/activity';
import type { Deps } from '../../services/shared/deps';
import { finishMergedRendering, renderMergedRows } from '../../services/batches/merged';
import {
  BATCH_MAIL_WORKFLOW,
  batchWorkflowInput,
  batchWorkflowStartOptions,
} from '../../services/batches/batch-workflow';
import type { BatchStatusName } from '../../workflows/batches/contracts';

export function createBatchRenderActivities(deps: Deps) {
  return {
    async renderBatchRows(input: { batchId: string }): Promise<{ remaining: number }> {
      const context = Context.current();
      context.heartbeat(0);
      return renderMergedRows(deps, input.batchId, (rendered) => context.heartbeat(rendered));
    },

    async finishBatchRendering(input: { batchId: string }): Promise<{ status: BatchStatusName }> {
      const row = await finishMergedRendering(deps, input.batchId);
      if (!row) return { status: 'cancelled' };
      if (row.status === 'draft') {
        const expirySeconds = Math.round((row.expires_at.getTime() - row.created_at.getTime()) / 1000);
        await deps.temporal.workflow.start(BATCH_MAIL_WORKFLOW, {
          ...batchWorkflowStartOptions(deps, batchWorkflowInput(row, expirySeconds)),
          workflowIdConflictPolicy: 'USE_EXISTING',
        });
      }
      return { status: row.status };
    },
  };
}
