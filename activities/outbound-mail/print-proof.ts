// The piece workflow's print-proof side effects: rendering a recorded piece's proof (beside
// its document, services/outbound-mail/print-proofs.ts), and the daily clean-up of dry-run
// proofs. Rendering is idempotent; a document the renderer cannot lay out is reported in the
// result rather than failed, so the workflow does not retry what cannot succeed.
import { heartbeat } from '@temporalio/activity';
import type { Deps } from '../../services/shared/deps';
import { deleteOldDryRunProofs, PieceProofOutcome, renderPieceProof } from '../../services/outbound-mail/print-proofs';

export function createPrintProofActivities(deps: Deps) {
  return {
    async renderMailProof(input: { outboundMailId: string }): Promise<PieceProofOutcome> {
      return renderPieceProof(deps, input.outboundMailId);
    },

    /** Deletes dry-run proofs older than retentionHours; returns how many. */
    async deleteOldDryRunProofs(input: { retentionHours: number }): Promise<number> {
      return deleteOldDryRunProofs(deps, new Date(Date.now() - input.retentionHours * 3_600_000), () => heartbeat());
    },
  };
}
