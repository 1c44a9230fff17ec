// How a batch is read and presented: the spec's Batch object and batch event payload,
// the caller-visibility check (404 for anything not theirs), and the list and detail reads.
import { pagination } from '../../domain/shared/pagination';
import type { BatchAddressCheck } from '../../domain/batches/address-summary';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { canSee, resolveAgentFilter } from '../shared/scoping';
import type { DomainEvent } from '../webhooks/events';
import { errors } from '../../domain/shared/errors';
import type { BatchEventType, BatchStatusName } from '../../workflows/batches/contracts';
import { BatchPieceRow, BatchRecipientRow, BatchRow, CountRow, loadBatchRow } from './rows';
import { type Queryable, sqlRows } from '../shared/sql';

export const PIECES_SHOWN_ON_GET = 50;
export const BATCH_ID_PATTERN = /^bat_[a-f0-9]{24}$/;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The spec's Batch object (plus timestamps, print settings and error_message). */
export function toBatchObject(r: BatchRow) {
  return {
    id: r.id,
    job_name: r.job_name,
    mail_type: r.mail_type,
    mailing_class: r.mailing_class,
    status: r.status,
    test_mode: r.test_mode,
    agent_id: r.agent_id,
    page_count: r.page_count,
    duplex: r.duplex,
    color: r.color,
    recipients: {
      total_rows: r.total_rows,
      valid: r.valid,
      skipped: r.skipped,
      skipped_rows: r.skipped_rows,
      address_check: storedBatchAddressCheck(r),
    },
    pieces: { total: r.valid, created: r.pieces_created, mailed: r.pieces_mailed, failed: r.pieces_failed },
    merge: r.merged
      ? {
          template_id: r.template_id,
          template_version: r.template_version,
          rows_to_render: r.rows_to_render,
          rows_rendered: r.rows_rendered,
        }
      : null,
    pricing: {
      per_piece_cents: r.per_piece_cents,
      color_surcharge_cents: r.color_surcharge_cents,
      effective_per_piece_cents: r.effective_per_piece_cents,
      volume_discount_pct: r.volume_discount_pct,
      subtotal_cents: r.subtotal_cents,
      discount_cents: r.discount_cents,
      total_cents: r.total_cents,
      credits_charged: r.credits_charged_cents > 0,
      refunded_cents: r.refunded_cents,
    },
    facility_notes: r.facility_notes,
    error_message: r.error_message,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    expires_at: r.expires_at.toISOString(),
    confirmed_at: iso(r.confirmed_at),
    submitted_at: iso(r.submitted_at),
    started_at: iso(r.started_at),
    completed_at: iso(r.completed_at),
    cancelled_at: iso(r.cancelled_at),
    send_after: iso(r.send_after),
  };
}
export type BatchObject = ReturnType<typeof toBatchObject>;

/** The stored address check summary in its own key order (jsonb sorts keys), or null for batches from before it. */
function storedBatchAddressCheck(r: Pick<BatchRow, 'address_check'>): BatchAddressCheck | null {
  const c = r.address_check;
  if (!c) return null;
  return {
    likely: c.likely,
    doubtful: c.doubtful,
    unknown: c.unknown,
    doubtful_rows: c.doubtful_rows.map((d) => ({ row: d.row, warnings: d.warnings })),
  };
}

/** The spec's batch event payload. */
export function batchEvent(r: BatchRow, eventType: BatchEventType): DomainEvent {
  return {
    eventKey: `batch:${r.id}:${eventType}`,
    memberId: r.member_id,
    agentId: r.agent_id,
    eventType,
    testMode: r.test_mode,
    objectType: 'batch',
    objectId: r.id,
    payload: {
      event_type: eventType,
      batch_job_id: r.id,
      job_name: r.job_name,
      mail_type: r.mail_type,
      mailing_class: r.mailing_class,
      total_pieces: r.valid,
      pieces_mailed: r.pieces_mailed,
      pieces_failed: r.pieces_failed,
      total_cents: r.total_cents,
      status: r.status,
      error_message: r.error_message,
      created_at: r.created_at.toISOString(),
      completed_at: iso(r.completed_at ?? r.cancelled_at),
    },
  };
}

/** The caller's batch or 404 (other members, other agents and the other environment alike). */
export async function visibleBatch(deps: Deps, auth: AuthContext, id: string): Promise<BatchRow> {
  const row = BATCH_ID_PATTERN.test(id) ? await loadBatchRow(deps.db, id) : undefined;
  if (!row || !canSee(auth, { memberId: row.member_id, agentId: row.agent_id, testMode: row.test_mode })) {
    throw errors.notFound('Batch');
  }
  return row;
}

export function batchUrl(deps: Deps, id: string, suffix = ''): string {
  return `${deps.config.baseUrl}/v1/batch-mail/${id}${suffix}`;
}

export interface ListBatchesInput {
  status?: BatchStatusName;
  agent_id?: string;
  limit: number;
  offset: number;
}

export async function listBatches(deps: Deps, auth: AuthContext, input: ListBatchesInput) {
  const agentId = await resolveAgentFilter(deps, auth, input.agent_id);
  const where = ['member_id = $1', 'test_mode = $2'];
  const params: unknown[] = [auth.memberId, auth.testMode];
  if (agentId) where.push(`agent_id = $${params.push(agentId)}`);
  if (input.status) where.push(`status = $${params.push(input.status)}`);
  const clause = where.join(' AND ');
  const [{ total }] = await sqlRows<CountRow>(
    deps.db,
    `SELECT count(*)::int AS total FROM batches WHERE ${clause}`,
    params,
  );
  const rows = await sqlRows<BatchRow>(
    deps.db,
    `SELECT * FROM batches WHERE ${clause} ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, input.limit, input.offset],
  );
  return {
    batches: rows.map(toBatchObject),
    pagination: pagination(total, input.limit, input.offset),
  };
}

/** A piece as GET shows it: its status beside its recipient's name and place. */
type PieceWithRecipient = Pick<BatchPieceRow, 'batch_sequence' | 'status' | 'mailed_at'> &
  Pick<BatchRecipientRow, 'name' | 'city' | 'state' | 'zip'>;

async function firstPieces(db: Queryable, batchId: string, limit = PIECES_SHOWN_ON_GET) {
  const rows = await sqlRows<PieceWithRecipient>(
    db,
    `SELECT p.batch_sequence, r.name, r.city, r.state, r.zip, p.status, p.mailed_at
       FROM batch_pieces p JOIN batch_recipients r ON r.batch_id = p.batch_id AND r.seq = p.batch_sequence
      WHERE p.batch_id = $1 ORDER BY p.batch_sequence LIMIT $2`,
    [batchId, limit],
  );
  return rows.map((p) => ({
    batch_sequence: p.batch_sequence,
    recipient_name: p.name,
    recipient_city: p.city,
    recipient_state: p.state,
    recipient_zip: p.zip,
    status: p.status,
    mailed_at: iso(p.mailed_at),
  }));
}

export async function getBatch(deps: Deps, auth: AuthContext, id: string) {
  const row = await visibleBatch(deps, auth, id);
  return { batch: toBatchObject(row), pieces: await firstPieces(deps.db, id) };
}
