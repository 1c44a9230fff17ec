// The owner's decision on a piece awaiting approval (POST /v1/mail/{id}/approve and
// /reject, and the operator CLI): the piece's workflow debits and submits it, or cancels
// it; this module finds the piece, asks the workflow and answers from the record.
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { ApiError, errors } from '../../domain/shared/errors';
import { updateIdFor } from '../shared/workflow-gateway';
import type { UpdateDefinition } from '@temporalio/client';
import { approveMailUpdate, rejectMailUpdate } from '../../workflows/outbound-mail/contracts';
import { loadMailRow, MailRow } from './record';
import { recordOf, visibleMailRow } from './read';
import { MailCallOptions, MailWorkflowClosed, runMailUpdate } from './workflow';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Who approves: a member key of the piece's member, or the operator CLI. */
export type Approver = AuthContext | 'operator';

function notPendingApproval(status: string): ApiError {
  return errors.conflict(
    'MAIL_NOT_PENDING_APPROVAL',
    `The piece is ${status}; only pieces awaiting approval can be approved or rejected.`,
    {
      details: { status },
      suggestedAction: 'Nothing to decide: GET /v1/mail?status=pending_approval lists the pieces awaiting approval.',
    },
  );
}

async function approverRow(deps: Deps, approver: Approver, id: string): Promise<MailRow> {
  const row =
    approver === 'operator'
      ? UUID.test(id)
        ? await loadMailRow(deps.db, id)
        : null
      : await visibleMailRow(deps, approver, id);
  if (!row) throw errors.notFound('Outbound mail');
  return row;
}

/**
 * Sends the owner's decision. Without an Idempotency-Key only a pending piece is asked;
 * with one the workflow is asked anyway, so a retry whose answer was lost gets the first
 * answer, and a decision the piece no longer allows is MAIL_NOT_PENDING_APPROVAL.
 */
async function decided<T>(
  deps: Deps,
  approver: Approver,
  row: MailRow,
  update: UpdateDefinition<T, []>,
  opts: MailCallOptions,
): Promise<T> {
  if (row.status !== 'pending_approval' && !opts.idempotencyKey) throw notPendingApproval(row.status);
  const caller = approver === 'operator' ? { ownerKey: 'operator' } : approver;
  try {
    return await runMailUpdate(deps, row, update, [], {
      updateId: updateIdFor(caller, `mail.${update.name}`, opts.idempotencyKey),
    });
  } catch (err) {
    const refused = err instanceof ApiError && err.code === 'MAIL_STATE_CONFLICT';
    if (!(err instanceof MailWorkflowClosed) && !refused) throw err;
    const now = (await loadMailRow(deps.db, row.id))!;
    throw notPendingApproval(now.status);
  }
}

/**
 * The owner's approval of a pending piece: debits it now (402 when short; the piece
 * stays pending so the owner can add credits and approve again) and submits it.
 */
export async function approveMail(deps: Deps, approver: Approver, id: string, opts: MailCallOptions = {}) {
  const row = await approverRow(deps, approver, id);
  const result = await decided(deps, approver, row, approveMailUpdate, opts);
  return {
    outbound_mail: await recordOf(deps, (await loadMailRow(deps.db, id))!),
    credits_charged_cents: result.creditsChargedCents,
    credit_balance_cents: result.balanceCents,
  };
}

/** The owner's rejection: the piece is cancelled and nothing is charged. */
export async function rejectMail(deps: Deps, approver: Approver, id: string, opts: MailCallOptions = {}) {
  const row = await approverRow(deps, approver, id);
  await decided(deps, approver, row, rejectMailUpdate, opts);
  return { outbound_mail: await recordOf(deps, (await loadMailRow(deps.db, id))!) };
}
