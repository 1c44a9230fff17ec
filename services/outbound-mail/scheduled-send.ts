// Scheduled send (an extension beyond the spec): an optional `send_after` on a piece. The
// piece is priced, checked and debited at submission like any other; its workflow then
// holds it from the facility until send_after (workflows/outbound-mail/mail.ts). This
// module owns the API's side: the window check, storing the time with the new row, the
// workflow input that carries it, the facility queue's filter and the record's next step.
import { errors } from '../../domain/shared/errors';
import { heldFromFacility, sendAfterProblem } from '../../domain/workflow-safe/send-after';
import type { MailRow } from './rows';

/**
 * 400 at `send_after` unless it is in the future and at most 180 days ahead. Checked by
 * the service rather than the schema, so that a retry with the same Idempotency-Key after
 * the time has passed still gets its first answer.
 */
export function checkSendAfter(sendAfter: string | undefined, now = new Date()): void {
  if (sendAfter === undefined) return;
  const problem = sendAfterProblem(new Date(sendAfter), now);
  if (problem) throw errors.validation([{ path: 'send_after', message: problem }]);
}

/** The requested time as the record shows it (UTC), or null. */
export function sendAfterEcho(sendAfter: string | undefined): string | null {
  return sendAfter === undefined ? null : new Date(sendAfter).toISOString();
}

/**
 * The piece workflow's scheduled-send input: the time while the workflow has not yet
 * released the piece, nothing otherwise (rows read without the columns count as none).
 */
export function scheduledSendInput(row: Partial<Pick<MailRow, 'send_after' | 'released_to_facility_at'>>): {
  sendAfter?: string;
} {
  if (!row.send_after || row.released_to_facility_at) return {};
  return { sendAfter: row.send_after.toISOString() };
}

/** The facility queue's condition: a scheduled piece shows only once its workflow released it. */
export const RELEASED_TO_FACILITY_SQL = '(send_after IS NULL OR released_to_facility_at IS NOT NULL)';

export { heldFromFacility };

/** human_review.next_step of a paid piece its workflow still holds; null for every other piece. */
export function scheduledNextStep(row: MailRow): string | null {
  if (row.status !== 'submitted' || !heldFromFacility(row)) return null;
  const when = row.send_after!.toISOString();
  return row.test_mode
    ? `Sandbox: scheduled for ${when}. POST /v1/test/mail/${row.id}/advance skips the wait and simulates printing; DELETE /v1/mail/${row.id} cancels.`
    : `Paid and scheduled: the facility sees it from ${when}. Until then DELETE /v1/mail/${row.id} cancels it with a full refund.`;
}
