// The sandbox's stand-in for a facility: each advance moves a submitted test batch one step
// (to in_progress, then to completed with every piece mailed).
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { errors } from '../../domain/shared/errors';
import { updateIdFor } from '../shared/workflow-gateway';
import { advanceTestBatchUpdate, BatchStatusName } from '../../workflows/batches/contracts';
import { toBatchObject, visibleBatch } from './batch-view';
import { BatchServiceOptions, reload, runUpdate } from './batch-workflow';

export async function advanceTestBatch(deps: Deps, auth: AuthContext, id: string, opts: BatchServiceOptions = {}) {
  const before = await visibleBatch(deps, auth, id);
  const invalid = (status: BatchStatusName) =>
    errors.conflict(
      'BATCH_ADVANCE_INVALID',
      status === 'paid' || status === 'generating' || status === 'draft'
        ? `The batch is ${status}; confirm it and wait until it is submitted before advancing.`
        : `The batch is ${status}; it cannot advance further.`,
      { suggestedAction: 'Poll GET /v1/batch-mail/{id} until status is submitted, then advance.', details: { status } },
    );
  if (before.status !== 'submitted' && before.status !== 'in_progress') throw invalid(before.status);
  const outcome = await runUpdate(deps, before, advanceTestBatchUpdate, [], {
    ...opts,
    updateId: updateIdFor(auth, 'batch.test_advance', opts.idempotencyKey),
  });
  if (!outcome.ok) throw invalid((await reload(deps, id)).status);
  const row = await reload(deps, id);
  return { batch: toBatchObject(row), previous_status: outcome.value.previousStatus, sandbox: true };
}
