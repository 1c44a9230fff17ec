// Transitions of the batch workflow, one per activity of activities/batches/batch.ts.
// Each status change is one Postgres transaction that locks the batch row, checks the
// state it starts from and is a no-op when already done, so Temporal's retries are safe.
// Money moves through services/billing/credits.ts with the keys debit:batch:<id>,
// refund:batch:<id> (full) and refund:batch:<id>:partial.
import { ApplicationFailure } from '@temporalio/common';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import { debit, refund } from '../billing/credits';
import { assignFacility } from '../operations/facilities';
import { publishEvent } from '../webhooks/events';
import { batchEvent } from './batch-view';
import {
  addRefunded,
  BatchRecipientRow,
  BatchRow,
  expireBatch,
  loadBatchRow,
  markBatchCancelled,
  markBatchFailed,
  markBatchFinished,
  markBatchGenerating,
  markBatchInProgress,
  markBatchPaid,
  markBatchSubmitted,
  setPieceCounts,
} from './rows';
import { ApiError } from '../../domain/shared/errors';
import { insufficientCreditsDetails } from '../../domain/shared/workflow-failures';
import { priceBatch, unmailedRefundCents } from '../../domain/batches/pricing';
import {
  BatchEventType,
  BatchFailureType,
  BatchStatusName,
  BatchStatusResult,
  CANCELLABLE_BATCH_STATUSES,
  CancelBatchResult,
  ConfirmBatchResult,
  FailBatchInput,
  FAILABLE_BATCH_STATUSES,
  FinishBatchInput,
  FinishBatchResult,
  MarkBatchPiecesInput,
  MarkBatchPiecesResult,
} from '../../workflows/batches/contracts';
import { sqlRows, sqlRun } from '../shared/sql';

export const DRAFT_EXPIRED_MESSAGE = 'draft expired: not confirmed in time';

function conflict(message: string, type: string = BatchFailureType.stateConflict): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

async function locked(tx: EntityManager, batchId: string): Promise<BatchRow> {
  const row = await loadBatchRow(tx, batchId, { lock: true });
  if (!row) throw conflict(`batch ${batchId} does not exist`);
  return row;
}

interface PieceCounts {
  created: number;
  mailed: number;
  failed: number;
}

async function recountPieces(tx: EntityManager, batchId: string): Promise<PieceCounts> {
  const [c] = await sqlRows<PieceCounts>(
    tx,
    `SELECT count(*)::int AS created,
            count(*) FILTER (WHERE status = 'mailed')::int AS mailed,
            count(*) FILTER (WHERE status = 'failed')::int AS failed
       FROM batch_pieces WHERE batch_id = $1`,
    [batchId],
  );
  await setPieceCounts(tx, batchId, c);
  return c;
}

function csvCell(v: string | number | null): string {
  const s = v === null ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Refunds what is still unrefunded of the charge, once per entry key. */
async function refundRest(
  tx: EntityManager,
  b: BatchRow,
  amountCents: number,
  entryKey: string,
  why: string,
): Promise<number> {
  const amount = Math.min(amountCents, b.credits_charged_cents - b.refunded_cents);
  const refunded = await refund(tx, {
    memberId: b.member_id,
    amountCents: amount,
    entryKey,
    referenceType: 'batch',
    referenceId: b.id,
    description: `Batch ${b.job_name}: ${why}`,
  });
  if (refunded > 0) await addRefunded(tx, b.id, refunded);
  return refunded;
}

/** draft -> paid: debits the batch price once (test batches: nothing) and picks the facility. */
export async function chargeBatch(deps: Deps, input: { batchId: string }): Promise<ConfirmBatchResult> {
  return deps.db.transaction(async (tx) => {
    const b = await locked(tx, input.batchId);
    if (b.status !== 'draft') return { status: b.status, alreadyConfirmed: true };
    // The same pure function priced the estimate and the draft.
    const price = priceBatch({
      mailType: b.mail_type,
      mailingClass: b.mailing_class,
      pieces: b.valid,
      pageCount: b.page_count,
      color: b.color,
      duplex: b.duplex,
    });
    let charged = 0;
    if (!b.test_mode) {
      try {
        await debit(deps, tx, {
          memberId: b.member_id,
          amountCents: price.total_cents,
          entryKey: `debit:batch:${b.id}`,
          referenceType: 'batch',
          referenceId: b.id,
          description: `Batch ${b.job_name}: ${b.valid} ${b.mail_type} pieces`,
        });
        charged = price.total_cents;
      } catch (err) {
        if (err instanceof ApiError && err.code === 'INSUFFICIENT_CREDITS') {
          throw ApplicationFailure.create({
            type: BatchFailureType.insufficientCredits,
            message: err.message,
            nonRetryable: true,
            details: [insufficientCreditsDetails(err)],
          });
        }
        throw err;
      }
    }
    const facility = await assignFacility(tx, b.test_mode, b.member_id);
    await markBatchPaid(tx, b.id, charged, facility.id);
    return { status: 'paid', alreadyConfirmed: false };
  });
}

/** paid -> generating. Returns how many pieces to generate. */
export async function startBatchGeneration(
  deps: Deps,
  input: { batchId: string },
): Promise<BatchStatusResult & { pieces: number }> {
  return deps.db.transaction(async (tx) => {
    const b = await locked(tx, input.batchId);
    if (b.status === 'paid') {
      await markBatchGenerating(tx, b.id);
      return { status: 'generating', pieces: b.valid };
    }
    return { status: b.status, pieces: b.valid };
  });
}

/** One chunk of pieces (batch_sequence from..to); inserting twice is harmless. */
export async function generateBatchPieces(
  deps: Deps,
  input: {
    batchId: string;
    fromSequence: number;
    toSequence: number;
  },
  heartbeat: (created: number) => void,
): Promise<{ created: number; status: BatchStatusName }> {
  const result = await deps.db.transaction(async (tx) => {
    const b = await locked(tx, input.batchId);
    if (b.status !== 'generating') return { created: b.pieces_created, status: b.status };
    await sqlRun(
      tx,
      `INSERT INTO batch_pieces (batch_id, batch_sequence)
           SELECT batch_id, seq FROM batch_recipients WHERE batch_id = $1 AND seq BETWEEN $2 AND $3
           ON CONFLICT DO NOTHING`,
      [b.id, input.fromSequence, input.toSequence],
    );
    const counts = await recountPieces(tx, b.id);
    return { created: counts.created, status: b.status };
  });
  heartbeat(result.created);
  return result;
}

/** generating -> submitted: writes the print manifest, then the facility sees the batch. */
export async function finishBatchGeneration(
  deps: Deps,
  input: { batchId: string },
  heartbeat: () => void,
): Promise<BatchStatusResult> {
  const current = await loadBatchRow(deps.db, input.batchId);
  if (!current || current.status !== 'generating') return { status: current?.status ?? 'failed' };
  const recipients = await sqlRows<
    Pick<BatchRecipientRow, 'seq' | 'name' | 'line1' | 'line2' | 'city' | 'state' | 'zip' | 'document_key'>
  >(
    deps.db,
    `SELECT seq, name, line1, line2, city, state, zip, document_key FROM batch_recipients WHERE batch_id = $1 ORDER BY seq`,
    [input.batchId],
  );
  // A merged batch prints each piece from its own rendered PDF, named in the manifest's last column.
  const lines = [`batch_sequence,name,address,address2,city,state,zip${current.merged ? ',document_key' : ''}`];
  for (const r of recipients)
    lines.push(
      [r.seq, r.name, r.line1, r.line2, r.city, r.state, r.zip, ...(current.merged ? [r.document_key] : [])]
        .map(csvCell)
        .join(','),
    );
  const manifestKey = `batches/${input.batchId}/print-manifest.csv`;
  await deps.storage.put(manifestKey, lines.join('\r\n') + '\r\n', 'text/csv; charset=utf-8');
  heartbeat();

  return deps.db.transaction(async (tx) => {
    const b = await locked(tx, input.batchId);
    if (b.status !== 'generating') return { status: b.status };
    const counts = await recountPieces(tx, b.id);
    if (counts.created !== b.valid) {
      throw ApplicationFailure.retryable(
        `generated ${counts.created} of ${b.valid} pieces`,
        'BATCH_GENERATION_INCOMPLETE',
      );
    }
    const facilityId = b.facility_id ?? (await assignFacility(tx, b.test_mode, b.member_id)).id;
    await markBatchSubmitted(tx, b.id, manifestKey, facilityId);
    return { status: 'submitted' };
  });
}

/** Cancels before the facility starts, refunding the whole charge once. */
export async function cancelBatch(deps: Deps, input: { batchId: string }): Promise<CancelBatchResult> {
  return deps.db.transaction(async (tx) => {
    const b = await locked(tx, input.batchId);
    if (b.status === 'cancelled')
      return { status: 'cancelled', refundedCents: b.refunded_cents, alreadyCancelled: true };
    if (!CANCELLABLE_BATCH_STATUSES.includes(b.status)) {
      throw conflict(
        `The batch is ${b.status}; only draft, paid, generating and submitted batches can be cancelled.`,
        BatchFailureType.notCancellable,
      );
    }
    await refundRest(tx, b, b.credits_charged_cents, `refund:batch:${b.id}`, 'cancelled');
    await sqlRun(
      tx,
      `UPDATE batch_pieces SET status = 'cancelled', updated_at = now() WHERE batch_id = $1 AND status = 'created'`,
      [b.id],
    );
    await markBatchCancelled(tx, b.id);
    const after = await locked(tx, b.id);
    return { status: 'cancelled', refundedCents: after.refunded_cents, alreadyCancelled: false };
  });
}

/** A draft nobody confirmed in time becomes cancelled with error_message 'draft expired ...'. */
export async function expireBatchDraft(
  deps: Deps,
  input: { batchId: string },
): Promise<BatchStatusResult & { expired: boolean }> {
  return deps.db.transaction(async (tx) => {
    const b = await locked(tx, input.batchId);
    if (b.status !== 'draft') return { status: b.status, expired: false };
    await expireBatch(tx, b.id, DRAFT_EXPIRED_MESSAGE);
    return { status: 'cancelled', expired: true };
  });
}

/** submitted -> in_progress (facility start or sandbox advance). */
export async function startBatchFulfilment(deps: Deps, input: { batchId: string }): Promise<BatchStatusResult> {
  return deps.db.transaction(async (tx) => {
    const b = await locked(tx, input.batchId);
    if (b.status === 'in_progress') return { status: b.status };
    if (b.status !== 'submitted') throw conflict(`The batch is ${b.status}; only submitted batches can be started.`);
    await markBatchInProgress(tx, b.id);
    return { status: 'in_progress' };
  });
}

/** Marks pieces mailed or failed by batch_sequence ranges (or all of them); a correction may flip one to the other. */
export async function markBatchPieces(
  deps: Deps,
  input: { batchId: string } & (MarkBatchPiecesInput | { status: 'mailed'; all: true }),
): Promise<MarkBatchPiecesResult> {
  return deps.db.transaction(async (tx) => {
    const b = await locked(tx, input.batchId);
    if (b.status !== 'in_progress')
      throw conflict(`The batch is ${b.status}; pieces can be marked only while it is in_progress.`);
    const ranges = 'all' in input ? [{ from: 1, to: b.valid }] : input.ranges;
    const reason = 'all' in input ? null : (input.reason ?? null);
    const rows = await sqlRows<{ updated: number }>(
      tx,
      `WITH r AS (SELECT * FROM unnest($3::int[], $4::int[]) AS r(f, t)),
                changed AS (
                  UPDATE batch_pieces p
                     SET status = $2,
                         mailed_at = CASE WHEN $2 = 'mailed' THEN now() ELSE NULL END,
                         failure_reason = CASE WHEN $2 = 'failed' THEN $5 ELSE NULL END,
                         updated_at = now()
                   WHERE p.batch_id = $1 AND p.status IN ('created', 'mailed', 'failed') AND p.status <> $2
                     AND EXISTS (SELECT 1 FROM r WHERE p.batch_sequence BETWEEN r.f AND r.t)
                  RETURNING 1)
           SELECT count(*)::int AS updated FROM changed`,
      [b.id, input.status, ranges.map((r) => r.from), ranges.map((r) => r.to), reason],
    );
    const counts = await recountPieces(tx, b.id);
    return { status: b.status, updated: rows[0].updated, mailed: counts.mailed, failed: counts.failed };
  });
}

/**
 * Ends fulfilment. Pieces not marked mailed count as failed. All mailed -> completed;
 * some -> partially_completed with floor(charged x unmailed / pieces) refunded;
 * none -> failed with a full refund.
 */
export async function finishBatch(
  deps: Deps,
  input: { batchId: string } & FinishBatchInput,
): Promise<FinishBatchResult> {
  return deps.db.transaction(async (tx) => {
    const b = await locked(tx, input.batchId);
    if (b.status === 'completed' || b.status === 'partially_completed' || b.status === 'failed') {
      return { status: b.status, refundedCents: b.refunded_cents, alreadyFinished: true };
    }
    if (b.status !== 'in_progress')
      throw conflict(`The batch is ${b.status}; only in_progress batches can be finished.`);
    await sqlRun(
      tx,
      `UPDATE batch_pieces SET status = 'failed', failure_reason = 'not mailed by the facility', updated_at = now()
            WHERE batch_id = $1 AND status = 'created'`,
      [b.id],
    );
    const counts = await recountPieces(tx, b.id);
    let status: BatchStatusName;
    let refunded = 0;
    let errorMessage: string | null = null;
    if (counts.mailed >= b.valid) status = 'completed';
    else if (counts.mailed > 0) {
      status = 'partially_completed';
      refunded = await refundRest(
        tx,
        b,
        unmailedRefundCents(b.credits_charged_cents, b.valid, b.valid - counts.mailed),
        `refund:batch:${b.id}:partial`,
        `${b.valid - counts.mailed} pieces not mailed`,
      );
    } else {
      status = 'failed';
      errorMessage = 'no pieces were mailed';
      refunded = await refundRest(tx, b, b.credits_charged_cents, `refund:batch:${b.id}`, 'no pieces mailed');
    }
    await markBatchFinished(tx, b.id, status, input.facilityNotes ?? null, errorMessage);
    return { status, refundedCents: refunded, alreadyFinished: false };
  });
}

/** The facility cannot fulfil: failed, every unmailed piece failed, full refund. */
export async function failBatch(deps: Deps, input: { batchId: string } & FailBatchInput): Promise<FinishBatchResult> {
  return deps.db.transaction(async (tx) => {
    const b = await locked(tx, input.batchId);
    if (b.status === 'failed') return { status: b.status, refundedCents: b.refunded_cents, alreadyFinished: true };
    if (!FAILABLE_BATCH_STATUSES.includes(b.status))
      throw conflict(`The batch is ${b.status}; it can no longer be failed.`);
    await sqlRun(
      tx,
      `UPDATE batch_pieces SET status = 'failed', failure_reason = $2, updated_at = now()
            WHERE batch_id = $1 AND status = 'created'`,
      [b.id, input.errorMessage],
    );
    await recountPieces(tx, b.id);
    const refunded = await refundRest(
      tx,
      b,
      b.credits_charged_cents,
      `refund:batch:${b.id}`,
      'facility could not fulfil',
    );
    await markBatchFailed(tx, b.id, input.errorMessage, input.facilityNotes ?? null);
    return { status: 'failed', refundedCents: refunded, alreadyFinished: false };
  });
}

/** Publishes batch.<event> from the committed row (once per event key). */
export async function publishBatchEvent(
  deps: Deps,
  input: { batchId: string; eventType: BatchEventType },
): Promise<void> {
  const row = await loadBatchRow(deps.db, input.batchId);
  if (!row) return;
  await publishEvent(deps, batchEvent(row, input.eventType));
}
