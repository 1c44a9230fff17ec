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
import { cancelOrRefuse, OperatorCancellation, runShieldedFromCancellation } from '../shared/operator-cancellation';
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
  const batch = new BatchMail(input);
  batch.setHandlers();
  return runShieldedFromCancellation(() => batch.run(), batch.onCancellationRequest);
}

const WAITING: Partial<Record<BatchStatusName, string>> = {
  paid: 'Paid: generating its pieces next.',
  generating: 'Generating its pieces.',
  submitted:
    'Submitted: waiting for the facility to start it; until then DELETE (or a cancellation request) cancels it with a full refund.',
  in_progress: 'The facility is fulfilling it; it can no longer be cancelled. Waiting for finish or fail.',
};

/** One batch's workflow state, its handlers, and the steps of its main flow. */
class BatchMail {
  readonly batchId: string;
  status: BatchStatusName = 'draft';
  confirmed = false;
  /** Scheduled send: true until the workflow lets the facility see the batch. */
  held: boolean;
  readonly turns = exclusiveTurns();
  refusedCancellation: string | null = null;
  readonly onCancellationRequest: () => Promise<void>;

  constructor(readonly input: BatchWorkflowInput) {
    this.batchId = input.batchId;
    this.held = input.sendAfter !== undefined;
    this.onCancellationRequest = cancelOrRefuse(this.turns, this.operatorCancellation());
  }

  /** Update handlers change `status` while the main flow awaits; read it through this so TypeScript does not narrow it. */
  current(): BatchStatusName {
    return this.status;
  }

  waiting(): string | undefined {
    const { status, input } = this;
    if (status === 'draft')
      return `Draft: waiting for confirm until ${new Date(Date.parse(input.createdAt) + input.draftExpirySeconds * 1000).toISOString()}; then it expires.`;
    if (this.held && status === 'submitted')
      return `Submitted and scheduled: hidden from the facility until ${input.sendAfter}; until then DELETE (or a cancellation request) cancels it with a full refund.`;
    return WAITING[status];
  }

  details(): void {
    showDetails(
      [
        `**Batch ${this.batchId}** (${this.input.testMode ? 'sandbox' : 'live'}): **${this.status}**`,
        this.waiting() ?? 'Finished.',
      ],
      this.refusedCancellation,
    );
  }

  submittedStep(): 'scheduled' | 'awaiting_start' {
    return this.held ? 'scheduled' : 'awaiting_start';
  }

  setStatus(next: BatchStatusName): void {
    if (next === this.status) return;
    this.status = next;
    publishStatus(BatchStatus, next, {
      step: next === 'submitted' ? this.submittedStep() : next === 'in_progress' ? 'in_progress' : null,
    });
    this.details();
  }

  async publish(eventType: BatchEventType): Promise<void> {
    await acts.publishBatchEvent({ batchId: this.batchId, eventType });
  }

  async finishWith(r: { status: BatchStatusName; alreadyFinished: boolean }): Promise<void> {
    this.setStatus(r.status);
    if (!r.alreadyFinished) await this.publish(`batch.${r.status}` as BatchEventType);
  }

  async startFulfilment(): Promise<void> {
    this.setStatus((await call(acts.startBatchFulfilment({ batchId: this.batchId }))).status);
  }

  /** Scheduled send: lets the facility see the batch (its timer fired, or the sandbox skipped the wait). */
  async release(): Promise<void> {
    await scheduledActs.releaseScheduledBatch({ batchId: this.batchId });
    this.held = false;
    if (this.status === 'submitted') publishFacilityStep({ step: this.submittedStep() });
    this.details();
  }

  /** A facility that guessed a scheduled batch's id still cannot act on it early. */
  refuseWhileHeld(): void {
    if (this.held) throw refuse(BatchFailureType.stateConflict, heldMessage('batch', this.input.sendAfter!));
  }

  requireStatus(allowed: readonly BatchStatusName[], what: string): void {
    if (!allowed.includes(this.status))
      throw refuse(BatchFailureType.stateConflict, `The batch is ${this.status}; ${what}.`);
  }

  setHandlers(): void {
    this.setOwnerHandlers();
    this.setFacilityHandlers();
  }

  /** The owner's confirm and cancel, and the sandbox's advance. */
  setOwnerHandlers(): void {
    const { batchId, turns } = this;
    setHandler(
      confirmBatchUpdate,
      () =>
        turns.run(async () => {
          if (this.status !== 'draft') return { status: this.status, alreadyConfirmed: true };
          const r = await call(acts.chargeBatch({ batchId }));
          this.confirmed = true;
          this.setStatus(r.status);
          return { status: this.status, alreadyConfirmed: r.alreadyConfirmed };
        }),
      {
        validator: () => {
          if (this.status === 'cancelled' && !this.confirmed)
            throw refuse(
              BatchFailureType.notConfirmable,
              'The draft was cancelled or expired; it cannot be confirmed.',
            );
        },
      },
    );
    setHandler(
      cancelBatchUpdate,
      () =>
        turns.run(async () => {
          const r = await call(acts.cancelBatch({ batchId }));
          this.setStatus(r.status);
          if (!r.alreadyCancelled) await this.publish('batch.cancelled');
          return r;
        }),
      {
        validator: () => {
          if (this.status !== 'cancelled' && !CANCELLABLE_BATCH_STATUSES.includes(this.status)) {
            throw refuse(
              BatchFailureType.notCancellable,
              `The batch is ${this.status}; only draft, paid, generating and submitted batches can be cancelled.`,
            );
          }
        },
      },
    );
    setHandler(advanceTestBatchUpdate, () => turns.run(() => this.advanceTest()), {
      validator: () => this.validateAdvanceTest(),
    });
  }

  /** The sandbox's advance: releases a held batch, starts it, or marks all its pieces mailed and finishes it. */
  async advanceTest(): Promise<{ previousStatus: BatchStatusName; status: BatchStatusName }> {
    const { batchId } = this;
    const previousStatus = this.status;
    if (this.held && this.status === 'submitted') await this.release();
    if (this.status === 'submitted') await this.startFulfilment();
    else if (this.status === 'in_progress') {
      await call(acts.markBatchPieces({ batchId, status: 'mailed', all: true }));
      await this.finishWith(await call(acts.finishBatch({ batchId, facilityNotes: null })));
    } else throw refuse(BatchFailureType.advanceInvalid, `The batch is ${this.status}; it cannot advance.`);
    return { previousStatus, status: this.status };
  }

  validateAdvanceTest(): void {
    const { status } = this;
    if (!this.input.testMode) throw refuse(BatchFailureType.advanceInvalid, 'Only sandbox batches can be advanced.');
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
  }

  /** The facility's start, piece marks, finish and fail. */
  setFacilityHandlers(): void {
    const { batchId, turns } = this;
    setHandler(
      startBatchFulfilmentUpdate,
      () =>
        turns.run(async () => {
          this.requireStatus(['submitted', 'in_progress'], 'only submitted batches can be started');
          this.refuseWhileHeld();
          if (this.status === 'submitted') await this.startFulfilment();
          return { status: this.status };
        }),
      {
        validator: () => {
          // 'generating' too, as for the sandbox advance: the row says submitted (which is when
          // the API lets a facility start it) as soon as the last generation step commits, a
          // moment before this workflow records it; the handler waits behind that step.
          this.requireStatus(['generating', 'submitted', 'in_progress'], 'only submitted batches can be started');
          this.refuseWhileHeld();
        },
      },
    );
    setHandler(
      markBatchPiecesUpdate,
      (mark) => turns.run(async () => call(acts.markBatchPieces({ batchId, ...mark }))),
      {
        validator: (_mark: MarkBatchPiecesInput) =>
          this.requireStatus(['in_progress'], 'pieces can be marked only while it is in_progress'),
      },
    );
    setHandler(
      finishBatchUpdate,
      (finish) =>
        turns.run(async () => {
          const r = await call(acts.finishBatch({ batchId, ...finish }));
          await this.finishWith(r);
          return r;
        }),
      {
        validator: (_finish: FinishBatchInput) =>
          this.requireStatus(
            ['in_progress', 'completed', 'partially_completed', 'failed'],
            'only in_progress batches can be finished',
          ),
      },
    );
    setHandler(
      failBatchUpdate,
      (fail) =>
        turns.run(async () => {
          this.refuseWhileHeld();
          const r = await call(acts.failBatch({ batchId, ...fail }));
          await this.finishWith(r);
          return r;
        }),
      {
        validator: (_fail: FailBatchInput) => {
          this.requireStatus([...FAILABLE_BATCH_STATUSES, 'failed'], 'it can no longer be failed');
          this.refuseWhileHeld();
        },
      },
    );
  }

  /** A cancellation request from Temporal: cancel and refund like DELETE while cancellable, else refuse and record why. */
  operatorCancellation(): OperatorCancellation {
    return {
      objectType: 'batch',
      objectId: this.batchId,
      status: () => this.status,
      settled: () => this.status === 'cancelled',
      cancellable: () => CANCELLABLE_BATCH_STATUSES.includes(this.status),
      cancel: async () => {
        const r = await call(acts.cancelBatch({ batchId: this.batchId }));
        this.setStatus(r.status);
        if (!r.alreadyCancelled) await this.publish('batch.cancelled');
      },
      whyNot: () => `the batch is ${this.status}; only draft, paid, generating and submitted batches can be cancelled.`,
      showRefusal: (reason) => {
        this.refusedCancellation = reason;
        this.details();
      },
    };
  }

  /** The main flow: the draft's confirm or expiry, generation, the scheduled hold, then a final status. */
  async run(): Promise<BatchWorkflowResult> {
    this.details();
    await this.awaitConfirm();
    if (this.current() === 'paid') await this.generate();
    await this.holdUntilSendAfter();
    await condition(() => TERMINAL_BATCH_STATUSES.includes(this.status));
    await condition(allHandlersFinished);
    return { status: this.status };
  }

  /** Draft: waits for confirm or cancel until the draft expires, then expires it. */
  async awaitConfirm(): Promise<void> {
    const { input, batchId } = this;
    const remainingMs = Date.parse(input.createdAt) + input.draftExpirySeconds * 1000 - Date.now();
    const decided =
      remainingMs > 0
        ? await condition(() => this.status !== 'draft', remainingMs, {
            summary: 'Draft expiry: cancel the draft if it is not confirmed',
          })
        : this.status !== 'draft';
    if (decided) return;
    await this.turns.run(async () => {
      if (this.status !== 'draft') return;
      const r = await acts.expireBatchDraft({ batchId });
      this.setStatus(r.status);
      if (r.expired) await this.publish('batch.cancelled');
    });
  }

  /** Paid: generates one piece per valid recipient in chunks, then submits the batch to the facility. */
  async generate(): Promise<void> {
    const { batchId, turns } = this;
    const { pieces } = await turns.run(async () => {
      const r = await acts.startBatchGeneration({ batchId });
      this.setStatus(r.status);
      return r;
    });
    for (let from = 1; from <= pieces && this.current() === 'generating'; from += BATCH_GENERATION_CHUNK_SIZE) {
      const to = Math.min(from + BATCH_GENERATION_CHUNK_SIZE - 1, pieces);
      await turns.run(async () => {
        if (this.status === 'generating')
          await generation.generateBatchPieces({ batchId, fromSequence: from, toSequence: to });
      });
    }
    await turns.run(async () => {
      if (this.status !== 'generating') return;
      const r = await generation.finishBatchGeneration({ batchId });
      this.setStatus(r.status);
      if (r.status === 'submitted') await this.publish('batch.submitted');
    });
  }

  /**
   * Scheduled send: once submitted, the batch waits on a durable timer before the
   * facility sees it. DELETE (or a cancellation request) may cancel it meanwhile; the
   * sandbox advance releases it at once.
   */
  async holdUntilSendAfter(): Promise<void> {
    if (!this.held || this.current() !== 'submitted') return;
    const remainingMs = holdRemainingMs(this.input.sendAfter!, Date.now());
    if (remainingMs > 0) {
      await condition(() => !this.held || this.status !== 'submitted', remainingMs, {
        summary: 'Scheduled send: hold the batch from the facility until send_after',
      });
    }
    await this.turns.run(async () => {
      if (this.held && this.status === 'submitted') await this.release();
    });
  }
}
