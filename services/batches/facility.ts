// The facility's side of a batch (sk_facility_ keys): its queue of live batches, their
// files, and the fulfilment steps start -> mark pieces -> finish (or fail), each an Update
// to the batch workflow applied once per Idempotency-Key.
import { pagination } from '../../domain/shared/pagination';
import type { UpdateDefinition } from '@temporalio/client';
import { claimFacilityBatch } from '../operations/facilities';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { ApiError, codedError, errors } from '../../domain/shared/errors';
import { batchStateConflict } from '../../domain/shared/workflow-failures';
import { updateIdFor } from '../shared/workflow-gateway';
import {
  BatchPieceRange,
  BatchStatusName,
  FAILABLE_BATCH_STATUSES,
  failBatchUpdate,
  finishBatchUpdate,
  markBatchPiecesUpdate,
  startBatchFulfilmentUpdate,
} from '../../workflows/batches/contracts';
import { BatchRecipientRow, BatchRow, CountRow, loadBatchRow } from './rows';
import { BATCH_ID_PATTERN, toBatchObject } from './batch-view';
import { reload, runUpdate } from './batch-workflow';
import { heldFromFacility, RELEASED_TO_FACILITY_SQL } from './scheduled-send';
import { SIGNED_URL_SECONDS } from '../shared/storage';
import { sqlRows } from '../shared/sql';

/** Where a merged batch's per-piece PDFs are fetched (the facility cannot reach the object store). */
export const PIECE_DOCUMENT_PATH = '/v1/facility/batches/{id}/pieces/{batch_sequence}/document';

/** A facility step's Idempotency-Key (the Update id is derived from it, so a retried step is applied once). */
export interface FacilityStepOptions {
  idempotencyKey?: string;
}

async function facilityBatch(deps: Deps, auth: AuthContext, id: string): Promise<BatchRow> {
  const row = BATCH_ID_PATTERN.test(id) ? await loadBatchRow(deps.db, id) : undefined;
  if (!row || row.test_mode || !auth.facilityId || row.facility_id !== auth.facilityId || heldFromFacility(row))
    throw errors.notFound('Batch');
  return row;
}

export async function listFacilityBatches(
  deps: Deps,
  auth: AuthContext,
  input: { status?: BatchStatusName; limit: number; offset: number },
) {
  const statuses = input.status ? [input.status] : ['submitted', 'in_progress'];
  const params = [auth.facilityId, statuses];
  const [{ total }] = await sqlRows<CountRow>(
    deps.db,
    `SELECT count(*)::int AS total FROM batches WHERE facility_id = $1 AND NOT test_mode AND status = ANY($2) AND ${RELEASED_TO_FACILITY_SQL}`,
    params,
  );
  const rows = await sqlRows<BatchRow>(
    deps.db,
    `SELECT * FROM batches WHERE facility_id = $1 AND NOT test_mode AND status = ANY($2) AND ${RELEASED_TO_FACILITY_SQL}
      ORDER BY submitted_at NULLS LAST, created_at, id LIMIT $3 OFFSET $4`,
    [...params, input.limit, input.offset],
  );
  return {
    batches: rows.map(toBatchObject),
    pagination: pagination(total, input.limit, input.offset),
  };
}

export async function getFacilityBatch(deps: Deps, auth: AuthContext, id: string) {
  const row = await facilityBatch(deps, auth, id);
  const expiresAt = new Date(Date.now() + 3600 * 1000).toISOString();
  return {
    batch: toBatchObject(row),
    files: {
      template_url: await deps.storage.signedUrl(row.template_key),
      // Normalised, valid recipients in print order (batch_sequence); exists once submitted.
      recipients_url: row.manifest_key ? await deps.storage.signedUrl(row.manifest_key) : null,
      original_recipients_url: await deps.storage.signedUrl(row.recipients_key),
      expires_at: expiresAt,
      // Merged batches: every piece prints its own PDF, fetched by batch_sequence; others print template_url.
      merged: row.merged,
      piece_documents: row.merged ? PIECE_DOCUMENT_PATH.replace('{id}', row.id) : null,
    },
  };
}

/**
 * One piece's own PDF of a merged batch (decision 0143): its pages and a signed 1-hour URL.
 * 404 for a batch that is not this facility's, one that is not merged (its pieces all print
 * template_url), or a batch_sequence without a rendered piece (rows skipped at render have none).
 */
export async function getFacilityBatchPieceDocument(deps: Deps, auth: AuthContext, id: string, sequence: number) {
  const row = await facilityBatch(deps, auth, id);
  if (!row.merged)
    throw codedError(
      404,
      'NOT_FOUND',
      'Not a merged batch: non-merged batches print files.template_url for every piece',
      {
        suggestedAction: 'Print files.template_url of GET /v1/facility/batches/{id} for every piece of the manifest.',
      },
    );
  const [piece] = await sqlRows<Pick<BatchRecipientRow, 'seq' | 'render_pages' | 'document_key'>>(
    deps.db,
    `SELECT seq, render_pages, document_key FROM batch_recipients
      WHERE batch_id = $1 AND seq = $2 AND render_status = 'rendered' AND document_key IS NOT NULL`,
    [id, sequence],
  );
  if (!piece)
    throw codedError(404, 'NOT_FOUND', `Piece ${sequence} not found: the batch has pieces 1-${row.valid}`, {
      suggestedAction: 'Use a batch_sequence of the print manifest (files.recipients_url); skipped rows have none.',
    });
  return {
    batch_id: row.id,
    batch_sequence: piece.seq,
    pages: piece.render_pages ?? row.page_count,
    document_url: await deps.storage.signedUrl(piece.document_key!),
    expires_at: new Date(Date.now() + SIGNED_URL_SECONDS * 1000).toISOString(),
  };
}

/** A facility step as an Update (once per Idempotency-Key); undefined when the workflow has finished. */
async function facilityUpdate<Ret, Args extends unknown[]>(
  deps: Deps,
  auth: AuthContext,
  row: BatchRow,
  def: UpdateDefinition<Ret, Args>,
  args: Args,
  step: FacilityStepOptions & { operation: string },
): Promise<Ret | undefined> {
  const outcome = await runUpdate(deps, row, def, args, {
    updateId: updateIdFor(auth, step.operation, step.idempotencyKey),
  });
  return outcome.ok ? outcome.value : undefined;
}

function facilityStateConflict(r: BatchRow, needed: string): ApiError {
  return batchStateConflict(`The batch is ${r.status}; ${needed}.`, { status: r.status });
}

export async function startFacilityBatch(deps: Deps, auth: AuthContext, id: string, step: FacilityStepOptions = {}) {
  const before = await facilityBatch(deps, auth, id);
  if (before.status !== 'submitted' && before.status !== 'in_progress')
    throw facilityStateConflict(before, 'only submitted batches can be started');
  if (!(await claimFacilityBatch(deps.db, auth.facilityId!, id))) throw errors.notFound('Batch');
  if (before.status === 'submitted') {
    const result = await facilityUpdate(deps, auth, before, startBatchFulfilmentUpdate, [], {
      ...step,
      operation: 'facility.batch.start',
    });
    if (!result) throw facilityStateConflict(await reload(deps, id), 'only submitted batches can be started');
  }
  return { batch: toBatchObject(await reload(deps, id)) };
}

/** Sorted, merged ranges from ranges and single sequences; 400 when outside 1..valid. */
export function pieceRanges(
  valid: number,
  ranges: BatchPieceRange[] = [],
  sequences: number[] = [],
): BatchPieceRange[] {
  const all = [...ranges, ...sequences.map((s) => ({ from: s, to: s }))];
  const bad = all.findIndex((r) => r.from < 1 || r.to < r.from || r.to > valid);
  if (bad >= 0) {
    throw errors.validation([
      {
        path: bad < ranges.length ? `ranges.${bad}` : `sequences.${bad - ranges.length}`,
        message: `batch_sequence must be within 1-${valid} (from <= to)`,
      },
    ]);
  }
  all.sort((a, b) => a.from - b.from);
  const merged: BatchPieceRange[] = [];
  for (const r of all) {
    const last = merged[merged.length - 1];
    if (last && r.from <= last.to + 1) last.to = Math.max(last.to, r.to);
    else merged.push({ ...r });
  }
  return merged;
}

export async function markFacilityBatchPieces(
  deps: Deps,
  auth: AuthContext,
  id: string,
  input: { status: 'mailed' | 'failed'; ranges?: BatchPieceRange[]; sequences?: number[]; reason?: string },
  step: FacilityStepOptions = {},
) {
  const before = await facilityBatch(deps, auth, id);
  if (before.status !== 'in_progress')
    throw facilityStateConflict(before, 'pieces can be marked only while the batch is in_progress');
  const ranges = pieceRanges(before.valid, input.ranges, input.sequences);
  const result = await facilityUpdate(
    deps,
    auth,
    before,
    markBatchPiecesUpdate,
    [{ status: input.status, ranges, reason: input.reason ?? null }],
    { ...step, operation: 'facility.batch.pieces' },
  );
  if (!result)
    throw facilityStateConflict(await reload(deps, id), 'pieces can be marked only while the batch is in_progress');
  return { batch: toBatchObject(await reload(deps, id)), updated: result.updated };
}

export async function finishFacilityBatch(
  deps: Deps,
  auth: AuthContext,
  id: string,
  input: { facility_notes?: string },
  step: FacilityStepOptions = {},
) {
  const before = await facilityBatch(deps, auth, id);
  const finished = ['completed', 'partially_completed', 'failed'].includes(before.status);
  if (!finished && before.status !== 'in_progress')
    throw facilityStateConflict(before, 'only in_progress batches can be finished');
  if (!finished)
    await facilityUpdate(deps, auth, before, finishBatchUpdate, [{ facilityNotes: input.facility_notes ?? null }], {
      ...step,
      operation: 'facility.batch.finish',
    });
  const row = await reload(deps, id);
  return { batch: toBatchObject(row), refunded_credits_cents: row.refunded_cents, already_finished: finished };
}

export async function failFacilityBatch(
  deps: Deps,
  auth: AuthContext,
  id: string,
  input: { error_message: string; facility_notes?: string },
  step: FacilityStepOptions = {},
) {
  const before = await facilityBatch(deps, auth, id);
  if (before.status !== 'failed') {
    if (!FAILABLE_BATCH_STATUSES.includes(before.status)) {
      throw facilityStateConflict(before, 'only paid, generating, submitted or in_progress batches can be failed');
    }
    if (!(await claimFacilityBatch(deps.db, auth.facilityId!, id))) throw errors.notFound('Batch');
    await facilityUpdate(
      deps,
      auth,
      before,
      failBatchUpdate,
      [{ errorMessage: input.error_message, facilityNotes: input.facility_notes ?? null }],
      { ...step, operation: 'facility.batch.fail' },
    );
  }
  const row = await reload(deps, id);
  if (row.status !== 'failed') throw facilityStateConflict(row, 'it could not be failed');
  return {
    batch: toBatchObject(row),
    refunded_credits_cents: row.refunded_cents,
    already_failed: before.status === 'failed',
  };
}
