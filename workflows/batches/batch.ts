// The batch workflow (`batch-mail-<id>`): one per batch, from draft to a terminal state.
// A draft waits for confirm until it expires; confirm charges once; pieces are generated
// in chunks of 1,000 by activities; the facility (or the sandbox advance) moves the
// batch on. Every state-changing step runs through one queue, so a cancel arriving while
// a confirm is charging waits for it and then refunds what was charged. A cancellation
// request from Temporal cancels (and refunds) the batch like DELETE while it is
// cancellable, and is refused and recorded once the facility has started. A scheduled
// batch (send_after, an extension) is held from the facility once submitted until its
// durable timer fires; the sandbox advance skips the wait.
import { allHandlersFinished, ApplicationFailure, condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { BatchActivities } from '../../activities/batches/batch';
import type { createScheduledBatchActivities } from '../../activities/batches/scheduled-send';
import {
  advanceTestBatchUpdate,
  BATCH_GENERATION_CHUNK_SIZE,
  BatchEventType,
  BatchFailureType,
  BatchStatusName,
  BatchWorkflowInput,
  BatchWorkflowResult,
  CANCELLABLE_BATCH_STATUSES,
  cancelBatchUpdate,
  confirmBatchUpdate,
  FAILABLE_BATCH_STATUSES,
  FailBatchInput,
  failBatchUpdate,
  FinishBatchInput,
  finishBatchUpdate,
  MarkBatchPiecesInput,
  markBatchPiecesUpdate,
  startBatchFulfilmentUpdate,
  TERMINAL_BATCH_STATUSES,
} from './contracts';
import { BatchStatus } from '../shared/search-attributes';
import { call } from '../shared/activity-failures';
import { cancelOrRefuse, runShieldedFromCancellation } from '../shared/operator-cancellation';
import { exclusiveTurns } from '../shared/turns';
import { publishFacilityStep, publishStatus, showDetails } from '../shared/status-visibility';
import { heldMessage, holdRemainingMs } from '../../domain/workflow-safe/send-after';
import { BATCH_GENERATION, BATCH_STEP } from '../shared/activity-options';

const acts = proxyActivities<BatchActivities>(BATCH_STEP);
const scheduledActs = proxyActivities<ReturnType<typeof createScheduledBatchActivities>>(BATCH_STEP);
const generation = proxyActivities<BatchActivities>(BATCH_GENERATION);

function refuse(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

export async function batchMailWorkflow(input: BatchWorkflowInput): Promise<BatchWorkflowResult> {
  const { batchId } = input;
  let status: BatchStatusName = 'draft';
  let confirmed = false;
  // Scheduled send: true until the workflow lets the facility see the batch.
  let held = input.sendAfter !== undefined;

  const turns = exclusiveTurns();
  let refusedCancellation: string | null = null;
  const WAITING: Partial<Record<BatchStatusName, string>> = {
    draft: `Draft: waiting for confirm until ${new Date(Date.parse(input.createdAt) + input.draftExpirySeconds * 1000).toISOString()}; then it expires.`,
    paid: 'Paid: generating its pieces next.',
    generating: 'Generating its pieces.',
    submitted:
      'Submitted: waiting for the facility to start it; until then DELETE (or a cancellation request) cancels it with a full refund.',
    in_progress: 'The facility is fulfilling it; it can no longer be cancelled. Waiting for finish or fail.',
  };
  const waiting = () =>
    held && status === 'submitted'
      ? `Submitted and scheduled: hidden from the facility until ${input.sendAfter}; until then DELETE (or a cancellation request) cancels it with a full refund.`
      : WAITING[status];
  const details = () =>
    showDetails(
      [`**Batch ${batchId}** (${input.testMode ? 'sandbox' : 'live'}): **${status}**`, waiting() ?? 'Finished.'],
      refusedCancellation,
    );
  const submittedStep = () => (held ? 'scheduled' : 'awaiting_start');

  // Update handlers change `status` while the main flow awaits; read it through this so
  // TypeScript does not narrow it.
  const current = (): BatchStatusName => status;

  function setStatus(next: BatchStatusName): void {
    if (next === status) return;
    status = next;
    publishStatus(BatchStatus, next, {
      step: next === 'submitted' ? submittedStep() : next === 'in_progress' ? 'in_progress' : null,
    });
    details();
  }

  async function publish(eventType: BatchEventType): Promise<void> {
    await acts.publishBatchEvent({ batchId, eventType });
  }

  async function finishWith(r: { status: BatchStatusName; alreadyFinished: boolean }): Promise<void> {
    setStatus(r.status);
    if (!r.alreadyFinished) await publish(`batch.${r.status}` as BatchEventType);
  }

  setHandler(
    confirmBatchUpdate,
    () =>
      turns.run(async () => {
        if (status !== 'draft') return { status, alreadyConfirmed: true };
        const r = await call(acts.chargeBatch({ batchId }));
        confirmed = true;
        setStatus(r.status);
        return { status, alreadyConfirmed: r.alreadyConfirmed };
      }),
    {
      validator: () => {
        if (status === 'cancelled' && !confirmed)
          throw refuse(BatchFailureType.notConfirmable, 'The draft was cancelled or expired; it cannot be confirmed.');
      },
    },
  );

  setHandler(
    cancelBatchUpdate,
    () =>
      turns.run(async () => {
        const r = await call(acts.cancelBatch({ batchId }));
        setStatus(r.status);
        if (!r.alreadyCancelled) await publish('batch.cancelled');
        return r;
      }),
    {
      validator: () => {
        if (status !== 'cancelled' && !CANCELLABLE_BATCH_STATUSES.includes(status)) {
          throw refuse(
            BatchFailureType.notCancellable,
            `The batch is ${status}; only draft, paid, generating and submitted batches can be cancelled.`,
          );
        }
      },
    },
  );

  async function startFulfilment(): Promise<void> {
    setStatus((await call(acts.startBatchFulfilment({ batchId }))).status);
  }

  /** Scheduled send: lets the facility see the batch (its timer fired, or the sandbox skipped the wait). */
  async function release(): Promise<void> {
    await scheduledActs.releaseScheduledBatch({ batchId });
    held = false;
    if (status === 'submitted') publishFacilityStep({ step: submittedStep() });
    details();
  }

  /** A facility that guessed a scheduled batch's id still cannot act on it early. */
  const refuseWhileHeld = () => {
    if (held) throw refuse(BatchFailureType.stateConflict, heldMessage('batch', input.sendAfter!));
  };

  setHandler(
    advanceTestBatchUpdate,
    () =>
      turns.run(async () => {
        const previousStatus = status;
        if (held && status === 'submitted') await release();
        if (status === 'submitted') await startFulfilment();
        else if (status === 'in_progress') {
          await call(acts.markBatchPieces({ batchId, status: 'mailed', all: true }));
          await finishWith(await call(acts.finishBatch({ batchId, facilityNotes: null })));
        } else throw refuse(BatchFailureType.advanceInvalid, `The batch is ${status}; it cannot advance.`);
        return { previousStatus, status };
      }),
    {
      validator: () => {
        if (!input.testMode) throw refuse(BatchFailureType.advanceInvalid, 'Only sandbox batches can be advanced.');
        // 'generating' too: the row says submitted as soon as the last generation step commits,
        // a moment before this workflow records it; the API only sends an advance once the row
        // says submitted, and the handler waits in the queue behind that last step.
        if (status !== 'submitted' && status !== 'in_progress' && status !== 'generating') {
          throw refuse(
            BatchFailureType.advanceInvalid,
            status === 'draft' || status === 'paid'
              ? `The batch is ${status}; wait until it is submitted.`
              : `The batch is ${status}; it cannot advance further.`,
          );
        }
      },
    },
  );

  const requireStatus = (allowed: readonly BatchStatusName[], what: string) => () => {
    if (!allowed.includes(status)) throw refuse(BatchFailureType.stateConflict, `The batch is ${status}; ${what}.`);
  };

  setHandler(
    startBatchFulfilmentUpdate,
    () =>
      turns.run(async () => {
        requireStatus(['submitted', 'in_progress'], 'only submitted batches can be started')();
        refuseWhileHeld();
        if (status === 'submitted') await startFulfilment();
        return { status };
      }),
    {
      validator: () => {
        // 'generating' too, as for the sandbox advance: the row says submitted (which is when
        // the API lets a facility start it) as soon as the last generation step commits, a
        // moment before this workflow records it; the handler waits behind that step.
        requireStatus(['generating', 'submitted', 'in_progress'], 'only submitted batches can be started')();
        refuseWhileHeld();
      },
    },
  );

  setHandler(markBatchPiecesUpdate, (mark) => turns.run(async () => call(acts.markBatchPieces({ batchId, ...mark }))), {
    validator: (_mark: MarkBatchPiecesInput) =>
      requireStatus(['in_progress'], 'pieces can be marked only while it is in_progress')(),
  });

  setHandler(
    finishBatchUpdate,
    (finish) =>
      turns.run(async () => {
        const r = await call(acts.finishBatch({ batchId, ...finish }));
        await finishWith(r);
        return r;
      }),
    {
      validator: (_finish: FinishBatchInput) =>
        requireStatus(
          ['in_progress', 'completed', 'partially_completed', 'failed'],
          'only in_progress batches can be finished',
        )(),
    },
  );

  setHandler(
    failBatchUpdate,
    (fail) =>
      turns.run(async () => {
        refuseWhileHeld();
        const r = await call(acts.failBatch({ batchId, ...fail }));
        await finishWith(r);
        return r;
      }),
    {
      validator: (_fail: FailBatchInput) => {
        requireStatus([...FAILABLE_BATCH_STATUSES, 'failed'], 'it can no longer be failed')();
        refuseWhileHeld();
      },
    },
  );

  /** A cancellation request from Temporal: cancel and refund like DELETE while cancellable, else refuse and record why. */
  const onCancellationRequest = cancelOrRefuse(turns, {
    objectType: 'batch',
    objectId: batchId,
    status: () => status,
    settled: () => status === 'cancelled',
    cancellable: () => CANCELLABLE_BATCH_STATUSES.includes(status),
    cancel: async () => {
      const r = await call(acts.cancelBatch({ batchId }));
      setStatus(r.status);
      if (!r.alreadyCancelled) await publish('batch.cancelled');
    },
    whyNot: () => `the batch is ${status}; only draft, paid, generating and submitted batches can be cancelled.`,
    showRefusal: (reason) => {
      refusedCancellation = reason;
      details();
    },
  });

  return runShieldedFromCancellation(async () => {
    details();
    // Draft: wait for confirm or cancel until the draft expires.
    const remainingMs = Date.parse(input.createdAt) + input.draftExpirySeconds * 1000 - Date.now();
    const decided =
      remainingMs > 0
        ? await condition(() => status !== 'draft', remainingMs, {
            summary: 'Draft expiry: cancel the draft if it is not confirmed',
          })
        : status !== 'draft';
    if (!decided) {
      await turns.run(async () => {
        if (status !== 'draft') return;
        const r = await acts.expireBatchDraft({ batchId });
        setStatus(r.status);
        if (r.expired) await publish('batch.cancelled');
      });
    }

    // Paid: generate one piece per valid recipient in chunks, then submit to the facility.
    if (current() === 'paid') {
      const { pieces } = await turns.run(async () => {
        const r = await acts.startBatchGeneration({ batchId });
        setStatus(r.status);
        return r;
      });
      for (let from = 1; from <= pieces && current() === 'generating'; from += BATCH_GENERATION_CHUNK_SIZE) {
        const to = Math.min(from + BATCH_GENERATION_CHUNK_SIZE - 1, pieces);
        await turns.run(async () => {
          if (status === 'generating')
            await generation.generateBatchPieces({ batchId, fromSequence: from, toSequence: to });
        });
      }
      await turns.run(async () => {
        if (status !== 'generating') return;
        const r = await generation.finishBatchGeneration({ batchId });
        setStatus(r.status);
        if (r.status === 'submitted') await publish('batch.submitted');
      });
    }

    // Scheduled send: once submitted, the batch waits on a durable timer before the
    // facility sees it. DELETE (or a cancellation request) may cancel it meanwhile; the
    // sandbox advance releases it at once.
    if (held && current() === 'submitted') {
      const remainingMs = holdRemainingMs(input.sendAfter!, Date.now());
      if (remainingMs > 0) {
        await condition(() => !held || status !== 'submitted', remainingMs, {
          summary: 'Scheduled send: hold the batch from the facility until send_after',
        });
      }
      await turns.run(async () => {
        if (held && status === 'submitted') await release();
      });
    }

    await condition(() => TERMINAL_BATCH_STATUSES.includes(status));
    await condition(allHandlersFinished);
    return { status };
  }, onCancellationRequest);
}
