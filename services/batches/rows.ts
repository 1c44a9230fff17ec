// The batch tables as Postgres returns their rows (entities/migrations/*BatchMail*,
// *FacilityAssignment*): every number column is an integer (a JS number), timestamptz is a
// Date and jsonb arrives parsed. Plus the one loader every batch module reads a batch with,
// and every statement that writes the batches table.
import type { EntityManager } from 'typeorm';
import type { BatchMailingClass, BatchMailType, BatchPrice } from '../../domain/batches/pricing';
import type { Recipient, SkippedRow } from '../../domain/batches/recipients-csv';
import type { BatchAddressCheck } from '../../domain/batches/address-summary';
import type { BatchStatusName } from '../../workflows/batches/contracts';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** A batches row; its price columns are the BatchPrice stored at draft time. */
export interface BatchRow extends BatchPrice {
  id: string;
  member_id: string;
  agent_id: string | null;
  facility_id: string | null;
  test_mode: boolean;
  job_name: string;
  mail_type: BatchMailType;
  mailing_class: BatchMailingClass;
  duplex: boolean;
  color: boolean;
  page_count: number;
  status: BatchStatusName;
  template_key: string;
  recipients_key: string;
  manifest_key: string | null;
  total_rows: number;
  valid: number;
  skipped: number;
  skipped_rows: SkippedRow[];
  credits_charged_cents: number;
  refunded_cents: number;
  pieces_created: number;
  pieces_mailed: number;
  pieces_failed: number;
  facility_notes: string | null;
  error_message: string | null;
  created_at: Date;
  updated_at: Date;
  expires_at: Date;
  confirmed_at: Date | null;
  submitted_at: Date | null;
  started_at: Date | null;
  completed_at: Date | null;
  cancelled_at: Date | null;
  /** Set once the assigned facility has begun the batch (services/operations/facilities.ts). */
  facility_claimed_at: Date | null;
  /** Scheduled send (extension; scheduled-send.ts): the facility sees the batch only from this time. */
  send_after: Date | null;
  released_to_facility_at: Date | null;
  /** Address check summary of the valid recipients (extension; null for batches from before it). */
  address_check: BatchAddressCheck | null;
  /** Merged batches (extension): every row rendered from a template. */
  merged: boolean;
  template_id: string | null;
  template_version: number | null;
  rows_rendered: number;
  rows_to_render: number;
}

/** A batch_recipients row: one valid recipient; seq is its piece's batch_sequence (1..valid). */
export interface BatchRecipientRow {
  batch_id: string;
  seq: number;
  /** The recipient's row number in the uploaded CSV. */
  source_row: number;
  name: string;
  line1: string;
  line2: string | null;
  city: string;
  state: string;
  zip: string;
  /** Merged batches: the row's values by CSV header, and its render outcome. */
  merge_variables: Record<string, string> | null;
  render_status: 'rendered' | 'skipped' | null;
  render_pages: number | null;
  document_key: string | null;
  skip_reason: string | null;
}

export type BatchPieceStatus = 'created' | 'mailed' | 'failed' | 'cancelled';

/** A batch_pieces row. */
export interface BatchPieceRow {
  batch_id: string;
  batch_sequence: number;
  status: BatchPieceStatus;
  mailed_at: Date | null;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A `SELECT count(*)::int AS total` answer. */
export interface CountRow {
  total: number;
}

export async function loadBatchRow(
  db: Queryable,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<BatchRow | undefined> {
  const [row] = await sqlRows<BatchRow>(db, `SELECT * FROM batches WHERE id = $1${opts.lock ? ' FOR UPDATE' : ''}`, [
    id,
  ]);
  return row;
}

/** A new batch draft's row: what both the PDF-template and the merged drafts store. */
export interface NewBatchDraft {
  id: string;
  memberId: string;
  agentId: string | null | undefined;
  testMode: boolean;
  jobName: string;
  mailType: BatchMailType;
  mailingClass: BatchMailingClass;
  duplex: boolean;
  color: boolean;
  pageCount: number;
  templateKey: string;
  recipientsKey: string;
  totalRows: number;
  valid: number;
  skippedRows: SkippedRow[];
  price: BatchPrice;
  expirySeconds: number;
  addressCheck: BatchAddressCheck;
  /** A merged batch (merged.ts) starts `rendering` with the template it merges and the rows left to render. */
  merge?: { templateId: string | null; templateVersion: number | null; rowsToRender: number };
}

export async function insertBatchDraft(db: Queryable, d: NewBatchDraft): Promise<void> {
  await sqlRun(
    db,
    `INSERT INTO batches (id, member_id, agent_id, test_mode, job_name, mail_type, mailing_class, duplex, color, page_count,
       template_key, recipients_key, total_rows, valid, skipped, skipped_rows,
       per_piece_cents, color_surcharge_cents, effective_per_piece_cents, volume_discount_pct, subtotal_cents, discount_cents, total_cents,
       expires_at, address_check, status, merged, template_id, template_version, rows_to_render)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23,
       now() + ($24 || ' seconds')::interval, $25, $26, $27, $28, $29, $30)`,
    [
      d.id,
      d.memberId,
      d.agentId,
      d.testMode,
      d.jobName,
      d.mailType,
      d.mailingClass,
      d.duplex,
      d.color,
      d.pageCount,
      d.templateKey,
      d.recipientsKey,
      d.totalRows,
      d.valid,
      d.skippedRows.length,
      JSON.stringify(d.skippedRows),
      d.price.per_piece_cents,
      d.price.color_surcharge_cents,
      d.price.effective_per_piece_cents,
      d.price.volume_discount_pct,
      d.price.subtotal_cents,
      d.price.discount_cents,
      d.price.total_cents,
      String(d.expirySeconds),
      JSON.stringify(d.addressCheck),
      d.merge ? 'rendering' : 'draft',
      Boolean(d.merge),
      d.merge?.templateId ?? null,
      d.merge?.templateVersion ?? null,
      d.merge?.rowsToRender ?? 0,
    ],
  );
}

/** Assigns the batch to a facility (an operator's move, or a facility leaving). */
export async function setBatchFacility(tx: Queryable, id: string, facilityId: string): Promise<void> {
  await sqlRun(tx, `UPDATE batches SET facility_id = $2, updated_at = now() WHERE id = $1`, [id, facilityId]);
}

/**
 * Claims a live batch for its facility (the first claim's time stays); false when the batch
 * is not that facility's.
 */
export async function claimBatchForFacility(db: Queryable, facilityId: string, batchId: string): Promise<boolean> {
  const claimed = await sqlRows<Pick<BatchRow, 'id'>>(
    db,
    `UPDATE batches SET facility_claimed_at = COALESCE(facility_claimed_at, now())
      WHERE id = $1 AND facility_id = $2 AND NOT test_mode RETURNING id`,
    [batchId, facilityId],
  );
  return claimed.length > 0;
}

/** Cancels a batch still rendering (no-op once it left rendering). */
export async function cancelRenderingBatch(db: Queryable, id: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE batches SET status = 'cancelled', cancelled_at = now(), error_message = 'cancelled while rendering', updated_at = now()
        WHERE id = $1 AND status = 'rendering'`,
    [id],
  );
}

/** Stores the batch's scheduled send time. */
export async function setBatchSendAfter(tx: Queryable, id: string, sendAfter: Date): Promise<void> {
  await sqlRun(tx, `UPDATE batches SET send_after = $2 WHERE id = $1`, [id, sendAfter]);
}

/** Withdraws a draft whose workflow could not start. */
export async function deleteUnstartedDraft(db: Queryable, id: string): Promise<void> {
  await sqlRun(db, `DELETE FROM batches WHERE id = $1 AND status = 'draft'`, [id]);
}

/** Withdraws a merged batch whose render workflow could not start. */
export async function deleteUnstartedRendering(db: Queryable, id: string): Promise<void> {
  await sqlRun(db, `DELETE FROM batches WHERE id = $1 AND status = 'rendering'`, [id]);
}

/** Counts the merged batch's rendered (or skipped) rows into rows_rendered. */
export async function countRenderedRows(db: Queryable, id: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE batches SET rows_rendered = (SELECT count(*) FROM batch_recipients WHERE batch_id = $1 AND render_status IS NOT NULL),
         updated_at = now() WHERE id = $1`,
    [id],
  );
}

/** A merged batch with too few rendered rows: cancelled with `message`. */
export async function cancelUnrenderedBatch(
  tx: Queryable,
  id: string,
  rows: { valid: number; skipped: number; skippedRows: SkippedRow[] },
  message: string,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE batches SET status = 'cancelled', cancelled_at = now(), valid = $2, skipped = $3, skipped_rows = $4, rows_rendered = rows_to_render,
           error_message = $5, updated_at = now() WHERE id = $1`,
    [id, rows.valid, rows.skipped, JSON.stringify(rows.skippedRows), message],
  );
}

/** A rendered merged batch becomes a draft with its rows, page count and price. */
export async function setRenderedDraft(
  tx: Queryable,
  id: string,
  rows: { valid: number; skipped: number; skippedRows: SkippedRow[] },
  pageCount: number,
  price: BatchPrice,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE batches SET status = 'draft', valid = $2, skipped = $3, skipped_rows = $4, page_count = $5, rows_rendered = rows_to_render,
         per_piece_cents = $6, color_surcharge_cents = $7, effective_per_piece_cents = $8, volume_discount_pct = $9,
         subtotal_cents = $10, discount_cents = $11, total_cents = $12, updated_at = now() WHERE id = $1`,
    [
      id,
      rows.valid,
      rows.skipped,
      JSON.stringify(rows.skippedRows),
      pageCount,
      price.per_piece_cents,
      price.color_surcharge_cents,
      price.effective_per_piece_cents,
      price.volume_discount_pct,
      price.subtotal_cents,
      price.discount_cents,
      price.total_cents,
    ],
  );
}

/** Lets the facility see a scheduled batch; a repeat keeps the first release time. */
export async function releaseBatchToFacility(db: Queryable, id: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE batches SET released_to_facility_at = now(), updated_at = now() WHERE id = $1 AND released_to_facility_at IS NULL`,
    [id],
  );
}

/** Stores the batch's piece counts. */
export async function setPieceCounts(
  tx: Queryable,
  id: string,
  c: { created: number; mailed: number; failed: number },
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE batches SET pieces_created = $2, pieces_mailed = $3, pieces_failed = $4, updated_at = now() WHERE id = $1`,
    [id, c.created, c.mailed, c.failed],
  );
}

/** Adds a refund to what the batch has had refunded. */
export async function addRefunded(tx: Queryable, id: string, cents: number): Promise<void> {
  await sqlRun(tx, `UPDATE batches SET refunded_cents = refunded_cents + $2 WHERE id = $1`, [id, cents]);
}

/** draft -> paid, with what was charged and the facility picked. */
export async function markBatchPaid(
  tx: Queryable,
  id: string,
  chargedCents: number,
  facilityId: string | null,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE batches SET status = 'paid', confirmed_at = now(), credits_charged_cents = $2, facility_id = $3, updated_at = now() WHERE id = $1`,
    [id, chargedCents, facilityId],
  );
}

/** paid -> generating. */
export async function markBatchGenerating(tx: Queryable, id: string): Promise<void> {
  await sqlRun(tx, `UPDATE batches SET status = 'generating', updated_at = now() WHERE id = $1`, [id]);
}

/** generating -> submitted, with its print manifest and facility. */
export async function markBatchSubmitted(
  tx: Queryable,
  id: string,
  manifestKey: string,
  facilityId: string | null,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE batches SET status = 'submitted', submitted_at = now(), manifest_key = $2, facility_id = $3, updated_at = now() WHERE id = $1`,
    [id, manifestKey, facilityId],
  );
}

/** Cancelled before the facility started. */
export async function markBatchCancelled(tx: Queryable, id: string): Promise<void> {
  await sqlRun(tx, `UPDATE batches SET status = 'cancelled', cancelled_at = now(), updated_at = now() WHERE id = $1`, [
    id,
  ]);
}

/** A draft nobody confirmed in time: cancelled with `message`. */
export async function expireBatch(tx: Queryable, id: string, message: string): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE batches SET status = 'cancelled', cancelled_at = now(), error_message = $2, updated_at = now() WHERE id = $1`,
    [id, message],
  );
}

/** submitted -> in_progress. */
export async function markBatchInProgress(tx: Queryable, id: string): Promise<void> {
  await sqlRun(tx, `UPDATE batches SET status = 'in_progress', started_at = now(), updated_at = now() WHERE id = $1`, [
    id,
  ]);
}

/** Fulfilment ended in `status` (notes and error kept unless given). */
export async function markBatchFinished(
  tx: Queryable,
  id: string,
  status: BatchStatusName,
  facilityNotes: string | null,
  errorMessage: string | null,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE batches SET status = $2, completed_at = now(), facility_notes = COALESCE($3, facility_notes),
                  error_message = COALESCE($4, error_message), updated_at = now() WHERE id = $1`,
    [id, status, facilityNotes, errorMessage],
  );
}

/** The facility could not fulfil: failed with `errorMessage`. */
export async function markBatchFailed(
  tx: Queryable,
  id: string,
  errorMessage: string,
  facilityNotes: string | null,
): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE batches SET status = 'failed', completed_at = now(), error_message = $2,
                  facility_notes = COALESCE($3, facility_notes), updated_at = now() WHERE id = $1`,
    [id, errorMessage, facilityNotes],
  );
}

/** Inserts recipients in multi-row batches (one unnest INSERT per 1,000 rows). */
export async function insertRecipients(tx: Queryable, batchId: string, recipients: Recipient[]): Promise<void> {
  const CHUNK = 1000;
  for (let start = 0; start < recipients.length; start += CHUNK) {
    const part = recipients.slice(start, start + CHUNK);
    await sqlRun(
      tx,
      `INSERT INTO batch_recipients (batch_id, seq, source_row, name, line1, line2, city, state, zip)
       SELECT $1, * FROM unnest($2::int[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])`,
      [
        batchId,
        part.map((_, i) => start + i + 1),
        part.map((r) => r.row),
        part.map((r) => r.name),
        part.map((r) => r.line1),
        part.map((r) => r.line2),
        part.map((r) => r.city),
        part.map((r) => r.state),
        part.map((r) => r.zip),
      ],
    );
  }
}

/** Inserts a merged batch's rows with their merge variables (one unnest INSERT per 1,000 rows). */
export async function insertMergeRows(
  tx: Queryable,
  batchId: string,
  rows: (Recipient & { values: Record<string, string> })[],
) {
  const CHUNK = 1000;
  for (let start = 0; start < rows.length; start += CHUNK) {
    const part = rows.slice(start, start + CHUNK);
    await sqlRun(
      tx,
      `INSERT INTO batch_recipients (batch_id, seq, source_row, name, line1, line2, city, state, zip, merge_variables)
       SELECT $1, * FROM unnest($2::int[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::jsonb[])`,
      [
        batchId,
        part.map((_, i) => start + i + 1),
        part.map((r) => r.row),
        part.map((r) => r.name),
        part.map((r) => r.line1),
        part.map((r) => r.line2),
        part.map((r) => r.city),
        part.map((r) => r.state),
        part.map((r) => r.zip),
        part.map((r) => JSON.stringify(r.values)),
      ],
    );
  }
}

/** One merged row's render outcome, by its seq. */
export interface RenderOutcome {
  seq: number;
  status: string;
  pages: number | null;
  key: string | null;
  reason: string | null;
}

/** Records the render outcomes of rows that have none yet. */
export async function saveRenderOutcomes(db: Queryable, batchId: string, saved: RenderOutcome[]): Promise<void> {
  await sqlRun(
    db,
    `UPDATE batch_recipients r SET render_status = u.status, render_pages = u.pages, document_key = u.key, skip_reason = u.reason
         FROM unnest($2::int[], $3::text[], $4::int[], $5::text[], $6::text[]) AS u(seq, status, pages, key, reason)
        WHERE r.batch_id = $1 AND r.seq = u.seq AND r.render_status IS NULL`,
    [
      batchId,
      saved.map((s) => s.seq),
      saved.map((s) => s.status),
      saved.map((s) => s.pages),
      saved.map((s) => s.key),
      saved.map((s) => s.reason),
    ],
  );
}

/** Drops the rows whose render failed and numbers the others 1..valid again, in seq order. */
export async function dropSkippedRecipients(tx: Queryable, batchId: string): Promise<void> {
  await sqlRun(tx, `DELETE FROM batch_recipients WHERE batch_id = $1 AND render_status = 'skipped'`, [batchId]);
  // Two steps, so no new number meets an old one under the primary key.
  await sqlRun(tx, `UPDATE batch_recipients SET seq = seq + 1000000 WHERE batch_id = $1`, [batchId]);
  await sqlRun(
    tx,
    `UPDATE batch_recipients r SET seq = n.new_seq
         FROM (SELECT seq, row_number() OVER (ORDER BY seq)::int AS new_seq FROM batch_recipients WHERE batch_id = $1) n
        WHERE r.batch_id = $1 AND r.seq = n.seq`,
    [batchId],
  );
}
