// Scheduled send (an extension beyond the spec): the piece workflow's one side effect of
// its own, letting the facility see a paid piece once its send_after has come (or the
// sandbox advance skipped the wait). Idempotent: a retry keeps the first release time.
import type { Deps } from '../../services/shared/deps';

export function createScheduledMailActivities(deps: Deps) {
  return {
    async releaseScheduledMail(input: { outboundMailId: string }): Promise<void> {
      await deps.db.query(
        `UPDATE outbound_mail SET released_to_facility_at = now(), updated_at = now() WHERE id = $1 AND released_to_facility_at IS NULL`,
        [input.outboundMailId],
      );
    },
  };
}
