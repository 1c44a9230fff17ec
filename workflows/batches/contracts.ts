// Batch mail: the workflow's input, its updates (answers the API waits for) and the
// failure types that the API maps to the spec's error codes.
import { defineUpdate } from '@temporalio/workflow';

export const BATCH_STATUSES = [
  /** A merged batch whose rows are being rendered (extension); it becomes a draft when they are. */
  'rendering',
  'draft',
  'paid',
  'generating',
  'submitted',
  'in_progress',
  'completed',
  'partially_completed',
  'failed',
  'cancelled',
] as const;
export type BatchStatusName = (typeof BATCH_STATUSES)[number];

export const TERMINAL_BATCH_STATUSES: readonly BatchStatusName[] = [
  'completed',
  'partially_completed',
  'failed',
  'cancelled',
];
/** The facility has not started: DELETE cancels with a full refund. */
export const CANCELLABLE_BATCH_STATUSES: readonly BatchStatusName[] = ['draft', 'paid', 'generating', 'submitted'];
// A batch still rendering (merged batches) is cancelled by the API itself: it has no batch workflow yet (services/batches/cancel.ts).
/** "In progress or earlier" once paid: the facility may declare it cannot fulfil. */
export const FAILABLE_BATCH_STATUSES: readonly BatchStatusName[] = ['paid', 'generating', 'submitted', 'in_progress'];

export const BATCH_EVENT_TYPES = [
  'batch.submitted',
  'batch.completed',
  'batch.partially_completed',
  'batch.failed',
  'batch.cancelled',
] as const;
export type BatchEventType = (typeof BATCH_EVENT_TYPES)[number];

export { BATCH_DRAFT_EXPIRY_SECONDS } from '../../domain/workflow-safe/batch-drafts';
/** Pieces inserted per generation activity. */
export const BATCH_GENERATION_CHUNK_SIZE = 1000;

/** The workflow that renders a merged batch's rows before it is a draft (workflows/batches/render.ts). */
export function batchRenderWorkflowId(batchId: string): string {
  return `batch-render-${batchId}`;
}

export interface BatchRenderWorkflowInput {
  batchId: string;
}

export function batchWorkflowId(batchId: string): string {
  return `batch-mail-${batchId}`;
}

export interface BatchWorkflowInput {
  batchId: string;
  memberId: string;
  agentId: string | null;
  testMode: boolean;
  /** ISO time the draft was created; the expiry counts from here. */
  createdAt: string;
  /** How long a draft waits for confirm (7 days; tests pass seconds). */
  draftExpirySeconds: number;
  /**
   * Scheduled send (extension): once submitted, the batch stays hidden from the facility
   * until this time. Absent for every other batch, so their histories are unchanged.
   */
  sendAfter?: string;
}

export interface BatchWorkflowResult {
  status: BatchStatusName;
}

/** Types of ApplicationFailure the batch workflow and its activities raise. */
export const BatchFailureType = {
  insufficientCredits: 'INSUFFICIENT_CREDITS',
  notCancellable: 'BATCH_MAIL_NOT_CANCELLABLE',
  notConfirmable: 'BATCH_MAIL_NOT_CONFIRMABLE',
  advanceInvalid: 'BATCH_ADVANCE_INVALID',
  stateConflict: 'BATCH_STATE_CONFLICT',
} as const;

export interface BatchStatusResult {
  status: BatchStatusName;
}

export interface ConfirmBatchResult extends BatchStatusResult {
  alreadyConfirmed: boolean;
}

export interface CancelBatchResult extends BatchStatusResult {
  refundedCents: number;
  alreadyCancelled: boolean;
}

export interface AdvanceTestBatchResult extends BatchStatusResult {
  previousStatus: BatchStatusName;
}

export interface BatchPieceRange {
  from: number;
  to: number;
}

export interface MarkBatchPiecesInput {
  status: 'mailed' | 'failed';
  ranges: BatchPieceRange[];
  reason?: string | null;
}

export interface MarkBatchPiecesResult extends BatchStatusResult {
  updated: number;
  mailed: number;
  failed: number;
}

export interface FinishBatchInput {
  facilityNotes?: string | null;
}

export interface FailBatchInput {
  errorMessage: string;
  facilityNotes?: string | null;
}

export interface FinishBatchResult extends BatchStatusResult {
  refundedCents: number;
  alreadyFinished: boolean;
}

export const confirmBatchUpdate = defineUpdate<ConfirmBatchResult>('confirmBatch');
export const cancelBatchUpdate = defineUpdate<CancelBatchResult>('cancelBatch');
export const advanceTestBatchUpdate = defineUpdate<AdvanceTestBatchResult>('advanceTestBatch');
export const startBatchFulfilmentUpdate = defineUpdate<BatchStatusResult>('startBatchFulfilment');
export const markBatchPiecesUpdate = defineUpdate<MarkBatchPiecesResult, [MarkBatchPiecesInput]>('markBatchPieces');
export const finishBatchUpdate = defineUpdate<FinishBatchResult, [FinishBatchInput]>('finishBatch');
export const failBatchUpdate = defineUpdate<FinishBatchResult, [FailBatchInput]>('failBatch');
