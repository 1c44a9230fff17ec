// Scheduled send (an extension beyond the spec): the piece workflow's one side effect of
// its own, letting the facility see a paid piece once its send_after has come (or the
// sandbox advance skipped the wait). Idempotent: a retry keeps the first release time.
import type { Deps } from '../../services/shared/deps';
import { releaseToFacility } from '../../services/outbound-mail/rows';

export function createScheduledMailActivities(deps: Deps) {
  return {
    async releaseScheduledMail(input: { outboundMailId: string }): Promise<void> {
      await releaseToFacility(deps.db, input.outboundMailId);
    },
  };
}
