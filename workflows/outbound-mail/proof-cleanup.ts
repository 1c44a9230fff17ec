// Run by a daily Temporal Schedule that the worker creates when it starts: deletes the
// print proofs of dry runs once they are a day old (their signed URLs expired after an
// hour; the object store's lifecycle rules are not relied on).
import { proxyActivities } from '@temporalio/workflow';
import type { createPrintProofActivities } from '../../activities/outbound-mail/print-proof';
import type { DryRunProofCleanupInput } from './contracts';
import { HOUSEKEEPING } from '../shared/activity-options';

const { deleteOldDryRunProofs } = proxyActivities<ReturnType<typeof createPrintProofActivities>>(HOUSEKEEPING);

export async function dryRunProofCleanupWorkflow(input: DryRunProofCleanupInput): Promise<number> {
  return deleteOldDryRunProofs({ retentionHours: input.retentionHours });
}
