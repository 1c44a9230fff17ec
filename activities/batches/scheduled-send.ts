// Scheduled send (an extension beyond the spec): the batch workflow's release of a paid,
// submitted batch to its facility once its send_after has come (or the sandbox advance
// skipped the wait). Idempotent: a retry keeps the first release time.
import type { Deps } from '../../services/shared/deps';
import { releaseBatchToFacility } from '../../services/batches/rows';

export function createScheduledBatchActivities(deps: Deps) {
  return {
    async releaseScheduledBatch(input: { batchId: string }): Promise<void> {
      await releaseBatchToFacility(deps.db, input.batchId);
    },
  };
}
