// The batch render workflow (`batch-render-<id>`): renders a merged batch's rows before it
// is a draft (services/batches/merged.ts). Each activity renders the next rows that have no
// outcome yet and saves outcomes as it goes, heartbeating; a worker that dies mid-activity
// leaves the saved rows saved, and the retry continues from the first row without an
// outcome. When no row is left, the batch becomes a draft (or is cancelled, having cost
// nothing, when no row rendered) and its batch workflow is started.
import { proxyActivities } from '@temporalio/workflow';
import type { createBatchRenderActivities } from '../../activities/batches/render';
import type { BatchRenderWorkflowInput } from './contracts';
import { BATCH_RENDERING, BATCH_STEP } from '../shared/activity-options';

type RenderActivities = ReturnType<typeof createBatchRenderActivities>;

// Postgres, the object store or the renderer being down must not lose a batch: retry without limit.
const rendering = proxyActivities<RenderActivities>(BATCH_RENDERING);
const acts = proxyActivities<RenderActivities>(BATCH_STEP);

export async function batchRenderWorkflow(input: BatchRenderWorkflowInput): Promise<string> {
  for (;;) {
    const { remaining } = await rendering.renderBatchRows({ batchId: input.batchId });
    if (remaining === 0) break;
  }
  const { status } = await acts.finishBatchRendering({ batchId: input.batchId });
  return status;
}
