// Confirm: the batch workflow debits the draft's price once and starts generating its
// pieces; a confirm the workflow has not taken yet answers 503 and is carried out by itself.
import { noteCreditsRefused } from '../notifications/notices';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { balanceCents } from '../billing/credits';
import { errors } from '../../domain/shared/errors';
import { isWorkflowUnavailable, updateIdFor } from '../shared/workflow-gateway';
import { confirmBatchUpdate } from '../../workflows/batches/contracts';
import type { BatchRow } from './rows';
import { batchUrl, toBatchObject, visibleBatch } from './batch-view';
import { BatchServiceOptions, reload, runUpdate, UpdateOutcome } from './batch-workflow';

function nextStepAfterConfirm(deps: Deps, r: BatchRow) {
  if (r.status === 'paid' || r.status === 'generating') {
    return {
      action: 'poll',
      url: batchUrl(deps, r.id),
      hint: `Pieces are being generated; the batch moves to submitted by itself.${r.test_mode ? ' Then POST /advance to move it to in_progress and completed.' : ' The facility is alerted when it is submitted.'}`,
    };
  }
  if (r.status === 'submitted' && r.test_mode) {
    return {
      action: 'advance',
      url: batchUrl(deps, r.id, '/advance'),
      hint: 'POST advance moves the sandbox batch to in_progress, then to completed.',
    };
  }
  return { action: 'poll', url: batchUrl(deps, r.id), hint: `The batch is ${r.status}.` };
}

export async function confirmBatch(deps: Deps, auth: AuthContext, id: string, opts: BatchServiceOptions = {}) {
  const before = await visibleBatch(deps, auth, id);
  let alreadyConfirmed = before.status !== 'draft';
  if (before.status === 'rendering')
    throw errors.conflict(
      'BATCH_MAIL_RENDERING',
      `The batch's pieces are still being rendered (${before.rows_rendered} of ${before.rows_to_render}); it can be confirmed once it is a draft.`,
      {
        suggestedAction:
          'Poll GET /v1/batch-mail/{id} until status is draft, check recipients.skipped_rows and pricing, then confirm.',
        details: { rows_rendered: before.rows_rendered, rows_to_render: before.rows_to_render },
      },
    );
  if (before.status === 'cancelled' && !before.confirmed_at) {
    throw errors.conflict(
      'BATCH_MAIL_NOT_CONFIRMABLE',
      `The draft was cancelled${before.error_message ? ` (${before.error_message})` : ''}; it cannot be confirmed.`,
      {
        suggestedAction: 'Create a new batch.',
      },
    );
  }
  if (before.status === 'draft') {
    let outcome: UpdateOutcome<{ alreadyConfirmed: boolean }>;
    try {
      outcome = await runUpdate(deps, before, confirmBatchUpdate, [], {
        ...opts,
        updateId: updateIdFor(auth, 'batch.confirm', opts.idempotencyKey),
      });
    } catch (err) {
      await noteCreditsRefused(deps, auth, err, 'batch');
      if (!isWorkflowUnavailable(err)) throw err;
      // The spec's answer for a confirm the workflow has not taken yet: it is carried out by itself.
      const now = await reload(deps, id);
      const charged = now.status !== 'draft';
      throw errors.unavailable(
        'BATCH_GENERATION_DISPATCH_PENDING',
        charged
          ? 'The batch is paid; generating its pieces is pending and is retried automatically. It moves to submitted by itself: poll GET /v1/batch-mail/{id}. Repeating confirm never charges twice.'
          : 'The confirmation is queued for the batch workflow and is retried automatically; nothing has been charged yet. Poll GET /v1/batch-mail/{id}, or repeat confirm: it never charges twice.',
        { details: { status: now.status, credits_charged: now.credits_charged_cents > 0 } },
      );
    }
    if (outcome.ok) alreadyConfirmed = outcome.value.alreadyConfirmed;
  }
  const row = await reload(deps, id);
  return {
    batch: toBatchObject(row),
    credits_charged_cents: row.credits_charged_cents,
    credit_balance_cents: await balanceCents(deps.db, row.member_id),
    already_confirmed: alreadyConfirmed,
    sandbox: row.test_mode,
    next_step: nextStepAfterConfirm(deps, row),
  };
}
