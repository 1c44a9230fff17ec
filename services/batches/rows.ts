// The batch tables as Postgres returns their rows (entities/migrations/*BatchMail*,
// *FacilityAssignment*): every number column is an integer (a JS number), timestamptz is a
// Date and jsonb arrives parsed. Plus the one loader every batch module reads a batch with.
import type { EntityManager } from 'typeorm';
import type { BatchMailingClass, BatchMailType, BatchPrice } from '../../domain/batches/pricing';
import type { SkippedRow } from '../../domain/batches/recipients-csv';
import type { BatchAddressCheck } from '../../domain/batches/address-summary';
import type { BatchStatusName } from '../../workflows/batches/contracts';

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

/** What reads and writes need of a DataSource or a transaction's EntityManager. */
export type Queryable = Pick<EntityManager, 'query'>;

export async function loadBatchRow(
  db: Queryable,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<BatchRow | undefined> {
  const [row]: BatchRow[] = await db.query(`SELECT * FROM batches WHERE id = $1${opts.lock ? ' FOR UPDATE' : ''}`, [
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
  await db.query(
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
