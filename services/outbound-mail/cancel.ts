// Cancelling an outbound piece (DELETE /v1/mail/{id}, MCP cancel_outbound_mail): the
// piece's workflow cancels and refunds it; this module asks it and answers from the
// record, also for a piece that was already cancelled.
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { balanceCents } from '../billing/credits';
import { updateIdFor } from '../shared/workflow-gateway';
import { cancelMailUpdate, CancelResult } from '../../workflows/outbound-mail/contracts';
import { loadMailRow, MailRow } from './record';
import { recordOf, visibleMailRow } from './read';
import { MailCallOptions, mailNotCancellable, MailWorkflowClosed, runMailUpdate } from './workflow';

/**
 * DELETE /v1/mail/{id}: cancels while submitted and not yet printing (or still pending
 * approval); refunds once. With an Idempotency-Key the workflow is asked even for a
 * cancelled piece, so a retry whose answer was lost gets the first answer (with its refund).
 */
export async function cancelMail(deps: Deps, auth: AuthContext, id: string, opts: MailCallOptions = {}) {
  const row = await visibleMailRow(deps, auth, id);
  /** `current` is the row as it stands now when the caller has just read it. */
  const answer = async (result: CancelResult, current?: MailRow) => ({
    outbound_mail: await recordOf(deps, current ?? (await loadMailRow(deps.db, id))!),
    refunded_credits_cents: result.refundedCents,
    credit_balance_cents: result.balanceCents,
    already_cancelled: result.alreadyCancelled,
  });
  const alreadyCancelled = async (): Promise<CancelResult> => ({
    refundedCents: 0,
    alreadyCancelled: true,
    balanceCents: row.test_mode ? null : await balanceCents(deps.db, row.member_id),
  });
  if (row.status === 'cancelled' && !opts.idempotencyKey) return answer(await alreadyCancelled(), row);
  try {
    return answer(
      await runMailUpdate(deps, row, cancelMailUpdate, [], {
        updateId: updateIdFor(auth, 'mail.cancel', opts.idempotencyKey),
      }),
    );
  } catch (err) {
    if (!(err instanceof MailWorkflowClosed)) throw err;
    const now = (await loadMailRow(deps.db, id))!;
    if (now.status === 'cancelled') return answer(await alreadyCancelled(), now);
    throw mailNotCancellable(`The piece is ${now.status} and can no longer be cancelled.`, { status: now.status });
  }
}
