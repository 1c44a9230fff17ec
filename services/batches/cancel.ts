// Cancel: allowed until the facility starts; the batch workflow refunds the whole charge once.
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { ApiError, errors } from '../../domain/shared/errors';
import { updateIdFor } from '../shared/workflow-gateway';
import { CANCELLABLE_BATCH_STATUSES, cancelBatchUpdate } from '../../workflows/batches/contracts';
import { BatchRow, cancelRenderingBatch } from './rows';
import { toBatchObject, visibleBatch } from './batch-view';
import { BatchServiceOptions, reload, runUpdate } from './batch-workflow';

function notCancellable(r: BatchRow): ApiError {
  return errors.conflict(
    'BATCH_MAIL_NOT_CANCELLABLE',
    `The batch is ${r.status}; only draft, paid, generating and submitted batches can be cancelled.`,
    {
      suggestedAction: 'The facility has started or the batch is finished; it can no longer be cancelled.',
      details: { status: r.status },
    },
  );
}

export async function cancelBatch(deps: Deps, auth: AuthContext, id: string, opts: BatchServiceOptions = {}) {
  let before = await visibleBatch(deps, auth, id);
  let alreadyCancelled = before.status === 'cancelled';
  // A merged batch still rendering has no batch workflow and no charge yet: cancelling it is
  // one update, and its render workflow stops at its next step (services/batches/merged.ts).
  if (before.status === 'rendering') {
    await cancelRenderingBatch(deps.db, id);
    before = await reload(deps, id);
  }
  if (before.status === 'cancelled') {
    // Cancelled here, or by another request: the row says which below.
  } else {
    if (!CANCELLABLE_BATCH_STATUSES.includes(before.status)) throw notCancellable(before);
    const outcome = await runUpdate(deps, before, cancelBatchUpdate, [], {
      ...opts,
      updateId: updateIdFor(auth, 'batch.cancel', opts.idempotencyKey),
    });
    if (outcome.ok) alreadyCancelled = outcome.value.alreadyCancelled;
  }
  const row = await reload(deps, id);
  if (row.status !== 'cancelled') throw notCancellable(row);
  return {
    id: row.id,
    status: row.status,
    refunded_credits_cents: row.refunded_cents,
    already_cancelled: alreadyCancelled,
    batch: toBatchObject(row),
    sandbox: row.test_mode,
  };
}
