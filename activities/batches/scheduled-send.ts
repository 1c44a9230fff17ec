// Scheduled send (an extension beyond the spec): the batch workflow's release of a paid,
// submitted batch to its facility once its send_after has come (or the sandbox advance
// skipped the wait). Idempotent: a retry keeps the first release time.
import type { Deps } from '../../services/shared/deps';

export function createScheduledBatchActivities(deps: Deps) {
  return {
    async releaseScheduledBatch(input: { batchId: string }): Promise<void> {
      await deps.db.query(
        `UPDATE batches SET released_to_facility_at = now(), updated_at = now() WHERE id = $1 AND released_to_facility_at IS NULL`,
        [input.batchId],
      );
    },
  };
}
