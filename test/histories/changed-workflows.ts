// A deliberately changed workflow for the replay guard (test/integration/workflow-replay.test.ts):
// scanBundleWorkflow as today, but with its last step (reporting the scan's outcome once
// the context is saved) dropped without patched(). Replaying a history recorded from
// today's code against it must fail with DeterminismViolationError.
import { proxyActivities, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import type { createHandlingActivities } from '../../activities/physical-inbound/handling';
import type { ScanBundleWorkflowInput } from '../../workflows/physical-inbound/contracts';
import { ObjectStatus } from '../../workflows/shared/search-attributes';

type Activities = ReturnType<typeof createHandlingActivities>;

const acts = proxyActivities<Activities>({ startToCloseTimeout: '1 minute' });
const ocr = proxyActivities<Activities>({ startToCloseTimeout: '5 minutes' });

export async function scanBundleWorkflow(input: ScanBundleWorkflowInput): Promise<string | null> {
  const pageIds = await acts.publishPhysicalScanAvailable({ bundleId: input.bundleId });
  upsertSearchAttributes([{ key: ObjectStatus, value: 'processing' }]);
  for (const pageId of pageIds) {
    for (;;) {
      const result = await ocr.ocrPhysicalScanPage({ pageId });
      if (!result.retry) break;
      await sleep('10 seconds');
    }
  }
  const status = await acts.finishPhysicalScanBundle({ bundleId: input.bundleId });
  upsertSearchAttributes([{ key: ObjectStatus, value: status ?? 'missing' }]);
  return status;
}
