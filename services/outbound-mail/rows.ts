// The `outbound_mail` table: its row types, and every statement that writes it. Other
// modules read the table where they need to, but change it only through these functions,
// so each kind of change has one name and one statement.
import type { EntityManager } from 'typeorm';
import type { CostBreakdown } from '../../domain/outbound-mail/pricing';
import type { CancellationReason, MailStatusName, PhotoCategory } from '../../domain/workflow-safe/mail-rules';
import type { AddressCheck } from '../../domain/outbound-mail/address-check';
import type { ReturnAddressColumns } from '../accounts/rows';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** One row of `outbound_mail`, as node-postgres returns it. */
export interface MailRow extends ReturnAddressColumns {
  id: string;
  member_id: string;
  agent_id: string | null;
  owner_key: string;
  idempotency_key: string | null;
  request_fingerprint: string | null;
  status: MailStatusName;
  test_mode: boolean;
  mail_class: string;
  recipient_name: string | null;
  recipient_company: string | null;
  recipient_line1: string;
  recipient_line2: string | null;
  recipient_city: string;
  recipient_state: string;
  recipient_zip: string;
  recipient_country: string;
  /** Normalised recipient address, for duplicate protection. */
  recipient_fingerprint: string;
  color: boolean;
  duplex: boolean;
  page_count: number;
  page_count_source: string | null;
  document_key: string;
  document_filename: string | null;
  document_type: string;
  document_content_type: string;
  document_sha256: string;
  document_size_bytes: number;
  simulated_document: boolean;
  /** HTML, Markdown or DOCX letters: what was sent (the document_* columns are the PDF it was laid out to). */
  source_type: 'html' | 'markdown' | 'docx' | null;
  source_key: string | null;
  source_filename: string | null;
  source_sha256: string | null;
  source_size_bytes: number | null;
  source_page_count: number | null;
  template_id: string | null;
  template_version: number | null;
  price_cents: number;
  cost_cents: number;
  cost_breakdown: Record<string, unknown>;
  origin_zip: string;
  facility_id: string | null;
  approval_source: 'request' | 'force_approval' | null;
  max_cost_cents: number | null;
  safeguards: Record<string, unknown>;
  allow_duplicate: boolean;
  package_id: string | null;
  inbound_capture_id: string | null;
  postal_mail_thread_id: string | null;
  mail_run_id: string | null;
  agent_notes: string | null;
  metadata: Record<string, unknown> | null;
  carrier: string | null;
  tracking_number: string | null;
  dispatch_method: string | null;
  error_message: string | null;
  carrier_delivery_failed: boolean;
  failure_stage: string | null;
  failure_source: string | null;
  cancellation_reason: string | null;
  cancel_request_id: string | null;
  approved_at: Date | null;
  submitted_at: Date | null;
  printing_started_at: Date | null;
  ready_at: Date | null;
  mailed_at: Date | null;
  delivered_at: Date | null;
  failed_at: Date | null;
  cancelled_at: Date | null;
  workflow_started_at: Date | null;
  /** When its Business mail run's funding debited this child (null for every other piece). */
  run_funded_at: Date | null;
  /** Scheduled send (extension): the facility sees the piece only from this time (null: at once). */
  send_after: Date | null;
  /** When the piece's workflow let the facility see a scheduled piece. */
  released_to_facility_at: Date | null;
  /** The offline recipient address check at submission (null for pieces from before it). */
  address_check: AddressCheck | null;
  /** The print proof beside the document, once rendered (by the submission for short PDFs, else by the worker). */
  proof_key: string | null;
  /** The A2A task (send_letter) this piece carries out, or null. */
  a2a_task_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface PhotoRow {
  outbound_mail_id: string;
  category: PhotoCategory;
  storage_key: string;
  content_type: string;
  uploaded_at: Date;
}

/** The columns a submission writes, in the INSERT's order; the others keep their defaults. */
const INSERTED_COLUMNS = [
  'id',
  'member_id',
  'agent_id',
  'owner_key',
  'idempotency_key',
  'request_fingerprint',
  'status',
  'test_mode',
  'mail_class',
  'recipient_name',
  'recipient_company',
  'recipient_line1',
  'recipient_line2',
  'recipient_city',
  'recipient_state',
  'recipient_zip',
  'recipient_country',
  'recipient_fingerprint',
  'return_name',
  'return_company',
  'return_line1',
  'return_line2',
  'return_city',
  'return_state',
  'return_zip',
  'color',
  'duplex',
  'page_count',
  'page_count_source',
  'document_key',
  'document_filename',
  'document_type',
  'document_content_type',
  'document_sha256',
  'document_size_bytes',
  'simulated_document',
  'source_type',
  'source_key',
  'source_filename',
  'source_sha256',
  'source_size_bytes',
  'source_page_count',
  'template_id',
  'template_version',
  'price_cents',
  'cost_cents',
  'cost_breakdown',
  'origin_zip',
  'facility_id',
  'approval_source',
  'max_cost_cents',
  'safeguards',
  'allow_duplicate',
  'package_id',
  'inbound_capture_id',
  'postal_mail_thread_id',
  'mail_run_id',
  'agent_notes',
  'metadata',
  'submitted_at',
  'send_after',
  'address_check',
  'proof_key',
  'a2a_task_id',
] as const satisfies readonly (keyof MailRow)[];

/** Stored as JSON text. */
const JSON_COLUMNS: ReadonlySet<string> = new Set(['cost_breakdown', 'safeguards', 'metadata', 'address_check']);

/** A new piece's row as the submission writes it. */
export type NewMailRow = Omit<Pick<MailRow, (typeof INSERTED_COLUMNS)[number]>, 'cost_breakdown'> & {
  cost_breakdown: CostBreakdown;
};

/** Runs an UPDATE ... RETURNING and gives its rows. */
async function updateReturning(db: Queryable, sql: string, params: unknown[]): Promise<MailRow[]> {
  return sqlRows<MailRow>(db, sql, params);
}

export async function insertMailRow(tx: Pick<EntityManager, 'query'>, row: NewMailRow): Promise<MailRow> {
  const values = INSERTED_COLUMNS.map((column) => {
    const value = row[column];
    return JSON_COLUMNS.has(column) && value !== null ? JSON.stringify(value) : value;
  });
  const [inserted] = await sqlRows<MailRow>(
    tx,
    `INSERT INTO outbound_mail (${INSERTED_COLUMNS.join(', ')})
     VALUES (${INSERTED_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})
     RETURNING *`,
    values,
  );
  return inserted;
}

/** Records that the piece's workflow was started (the first time only). */
export async function markWorkflowStarted(db: Queryable, id: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE outbound_mail SET workflow_started_at = now() WHERE id = $1 AND workflow_started_at IS NULL`,
    [id],
  );
}

/** Stores the key of the piece's rendered print proof, keeping one stored before. */
export async function setProofKey(db: Queryable, id: string, proofKey: string): Promise<void> {
  await sqlRun(db, `UPDATE outbound_mail SET proof_key = $2 WHERE id = $1 AND proof_key IS NULL`, [id, proofKey]);
}

/** Assigns the piece to a facility (an operator's move, or a facility leaving). */
export async function setFacility(tx: Queryable, id: string, facilityId: string): Promise<void> {
  await sqlRun(tx, `UPDATE outbound_mail SET facility_id = $2, updated_at = now() WHERE id = $1`, [id, facilityId]);
}

/** Lets the facility see a scheduled piece; a repeat keeps the first release time. */
export async function releaseToFacility(db: Queryable, id: string): Promise<void> {
  await sqlRun(
    db,
    `UPDATE outbound_mail SET released_to_facility_at = now(), updated_at = now() WHERE id = $1 AND released_to_facility_at IS NULL`,
    [id],
  );
}

/** Records that a Business mail run's funding debited these children. */
export async function markChildrenRunFunded(tx: Queryable, ids: string[]): Promise<void> {
  await sqlRun(tx, `UPDATE outbound_mail SET run_funded_at = now(), updated_at = now() WHERE id = ANY($1::uuid[])`, [
    ids,
  ]);
}

/** A run child whose run's funding debited it: submitted. */
export async function submitFundedRunChild(tx: Queryable, id: string): Promise<MailRow> {
  const [updated] = await updateReturning(
    tx,
    `UPDATE outbound_mail SET status = 'submitted', submitted_at = now(), updated_at = now() WHERE id = $1 RETURNING *`,
    [id],
  );
  return updated;
}

/** A run child whose run was cancelled or closed without funding it: cancelled. */
export async function cancelUnfundedRunChild(tx: Queryable, id: string): Promise<MailRow> {
  const [updated] = await updateReturning(
    tx,
    `UPDATE outbound_mail SET status = 'cancelled', cancelled_at = now(), cancellation_reason = 'mail_run_cancelled', updated_at = now()
            WHERE id = $1 RETURNING *`,
    [id],
  );
  return updated;
}

/** The owner approved a pending piece: submitted, with what it cost. */
export async function submitApproved(tx: Queryable, id: string, costCents: number): Promise<MailRow> {
  const [updated] = await updateReturning(
    tx,
    `UPDATE outbound_mail SET status = 'submitted', approved_at = now(), submitted_at = now(), cost_cents = $2, updated_at = now()
            WHERE id = $1 RETURNING *`,
    [id, costCents],
  );
  return updated;
}

/** Cancels the piece for `reason`, remembering which cancellation request did it. */
export async function markCancelled(
  tx: Queryable,
  id: string,
  reason: CancellationReason,
  requestId: string,
): Promise<MailRow> {
  const [updated] = await updateReturning(
    tx,
    `UPDATE outbound_mail SET status = 'cancelled', cancelled_at = now(), cancellation_reason = $2, cancel_request_id = $3, updated_at = now()
            WHERE id = $1 RETURNING *`,
    [id, reason, requestId],
  );
  return updated;
}

/** The facility claimed the piece for printing (keeping the facility it had, if any). */
export async function markPrintingStarted(tx: Queryable, id: string, facilityId: string): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE outbound_mail SET printing_started_at = now(), facility_id = COALESCE(facility_id, $2), updated_at = now() WHERE id = $1`,
    [id, facilityId],
  );
}

/** Marks a column to be set to the transaction's time. */
export const NOW = Symbol('now');

/**
 * Sets the given columns of a fulfilment step (names come from the caller's own module,
 * never from requests; NOW for the transaction's time) and returns the changed row.
 */
export async function setFulfilmentColumns(tx: Queryable, id: string, set: Record<string, unknown>): Promise<MailRow> {
  const values: unknown[] = [];
  const assignments = Object.entries(set).map(([column, value]) => {
    if (value === NOW) return `${column} = now()`;
    values.push(value);
    return `${column} = $${values.length + 1}`;
  });
  const [updated] = await updateReturning(
    tx,
    `UPDATE outbound_mail SET ${assignments.join(', ')}, updated_at = now() WHERE id = $1 RETURNING *`,
    [id, ...values],
  );
  return updated;
}
