// Side effects of the batch workflow: each activity is one transition of
// services/batches/batch-transitions.ts (one transaction each, safe to retry), plus the
// heartbeats of the long ones.
import { Context } from '@temporalio/activity';
import type { Deps } from '../../services/shared/deps';
import {
  cancelBatch,
  chargeBatch,
  expireBatchDraft,
  failBatch,
  finishBatch,
  finishBatchGeneration,
  generateBatchPieces,
  markBatchPieces,
  publishBatchEvent,
  startBatchFulfilment,
  startBatchGeneration,
} from '../../services/batches/batch-transitions';

export function createBatchActivities(deps: Deps) {
  return {
    chargeBatch: (input: Parameters<typeof chargeBatch>[1]) => chargeBatch(deps, input),
    startBatchGeneration: (input: Parameters<typeof startBatchGeneration>[1]) => startBatchGeneration(deps, input),
    generateBatchPieces: (input: Parameters<typeof generateBatchPieces>[1]) =>
      generateBatchPieces(deps, input, (created) => Context.current().heartbeat(created)),
    finishBatchGeneration: (input: Parameters<typeof finishBatchGeneration>[1]) =>
      finishBatchGeneration(deps, input, () => Context.current().heartbeat()),
    cancelBatch: (input: Parameters<typeof cancelBatch>[1]) => cancelBatch(deps, input),
    expireBatchDraft: (input: Parameters<typeof expireBatchDraft>[1]) => expireBatchDraft(deps, input),
    startBatchFulfilment: (input: Parameters<typeof startBatchFulfilment>[1]) => startBatchFulfilment(deps, input),
    markBatchPieces: (input: Parameters<typeof markBatchPieces>[1]) => markBatchPieces(deps, input),
    finishBatch: (input: Parameters<typeof finishBatch>[1]) => finishBatch(deps, input),
    failBatch: (input: Parameters<typeof failBatch>[1]) => failBatch(deps, input),
    publishBatchEvent: (input: Parameters<typeof publishBatchEvent>[1]) => publishBatchEvent(deps, input),
  };
}

export type BatchActivities = ReturnType<typeof createBatchActivities>;
