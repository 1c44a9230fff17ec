// Batch mail use-cases, shared by REST (and later MCP): estimate, draft creation from a
// template PDF and a recipients CSV, reads, confirm, cancel, sandbox advance and the
// facility's fulfilment calls. Status changes belong to the batch workflow: this module
// stores drafts, reads Postgres and asks the workflow (Updates) for everything else.
import { pagination } from '../../domain/shared/pagination';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { UpdateDefinition } from '@temporalio/client';
import type { EntityManager } from 'typeorm';
import { claimFacilityBatch } from '../operations/facilities';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { balanceCents, insufficientCredits } from '../billing/credits';
import { canSee, resolveAgentFilter } from '../shared/scoping';
import type { DomainEvent } from '../webhooks/events';
import { requestFingerprint } from '../shared/idempotency';
import { sha256Hex } from '../../domain/accounts/keys';
import { ApiError, errors } from '../../domain/shared/errors';
import { batchStateConflict } from '../../domain/shared/workflow-failures';
import { isWorkflowUnavailable, updateIdFor, updateWorkflow } from '../shared/workflow-gateway';
import { formatCents } from '../../domain/shared/money';
import {
  BatchMailingClass, BatchMailType, BatchPrice, describeAllowance, MARKETING_MAIL_MINIMUM, pageAllowance, pagesFit, priceBatch,
} from '../../domain/batches/pricing';
import { ColumnMap, parseRecipientsCsv, Recipient, RECIPIENTS_CSV_MAX_BYTES, SkippedRow } from '../../domain/batches/recipients-csv';
import { countPdfPages } from '../../domain/outbound-mail/documents';
import {
  advanceTestBatchUpdate, BATCH_DRAFT_EXPIRY_SECONDS, BatchEventType,
  BatchPieceRange, BatchStatusName, BatchWorkflowInput, batchWorkflowId, CANCELLABLE_BATCH_STATUSES, cancelBatchUpdate, FAILABLE_BATCH_STATUSES, confirmBatchUpdate,
  failBatchUpdate, finishBatchUpdate, markBatchPiecesUpdate, startBatchFulfilmentUpdate,
} from '../../workflows/batches/contracts';
import { AgentId, BatchStatus, MemberId, ObjectId, TestMode } from '../../workflows/shared/search-attributes';

export const BATCH_MAIL_WORKFLOW = 'batchMailWorkflow';
export const TEMPLATE_MAX_BYTES = 10 * 1024 * 1024;
export const TEMPLATE_MAX_PAGES = 200;
export const PIECES_SHOWN_ON_GET = 50;
export const BATCH_ID_PATTERN = /^bat_[a-f0-9]{24}$/;

/** Settings an operator (or a test) may change; defaults follow the spec. */
export interface BatchServiceOptions {
  /** Draft lifetime; BATCH_DRAFT_EXPIRY_SECONDS overrides the 7-day default. */
  draftExpirySeconds?: number;
  /** The caller's Idempotency-Key: the workflow Update's id is derived from it. */
  idempotencyKey?: string;
}

/** A facility step's Idempotency-Key (the Update id is derived from it, so a retried step is applied once). */
export interface FacilityStepOptions {
  idempotencyKey?: string;
}

function draftExpirySeconds(opts: BatchServiceOptions): number {
  return opts.draftExpirySeconds ?? Number(process.env.BATCH_DRAFT_EXPIRY_SECONDS ?? BATCH_DRAFT_EXPIRY_SECONDS);
}


export function newBatchId(): string {
  return `bat_${randomBytes(12).toString('hex')}`;
}

// ---------------------------------------------------------------------------------------
// Records

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
}

type Queryable = Pick<EntityManager, 'query'>;

export async function loadBatchRow(db: Queryable, id: string, opts: { lock?: boolean } = {}): Promise<BatchRow | undefined> {
  const [row] = await db.query(`SELECT * FROM batches WHERE id = $1${opts.lock ? ' FOR UPDATE' : ''}`, [id]);
  return row;
}

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
    recipients: { total_rows: r.total_rows, valid: r.valid, skipped: r.skipped, skipped_rows: r.skipped_rows },
    pieces: { total: r.valid, created: r.pieces_created, mailed: r.pieces_mailed, failed: r.pieces_failed },
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
  };
}
export type BatchObject = ReturnType<typeof toBatchObject>;

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
async function visibleBatch(deps: Deps, auth: AuthContext, id: string): Promise<BatchRow> {
  const row = BATCH_ID_PATTERN.test(id) ? await loadBatchRow(deps.db, id) : undefined;
  if (!row || !canSee(auth, { memberId: row.member_id, agentId: row.agent_id, testMode: row.test_mode })) {
    throw errors.notFound('Batch');
  }
  return row;
}

function batchUrl(deps: Deps, id: string, suffix = ''): string {
  return `${deps.config.baseUrl}/v1/batch-mail/${id}${suffix}`;
}

// ---------------------------------------------------------------------------------------
// Estimate

export interface EstimateInput {
  mail_type: BatchMailType;
  mailing_class: BatchMailingClass;
  quantity: number;
  page_count?: number;
  color: boolean;
  duplex: boolean;
}

function assertPagesFit(mailType: BatchMailType, duplex: boolean, pageCount: number, path: string): void {
  if (!pagesFit(mailType, duplex, pageCount)) {
    throw errors.badRequest('BATCH_TEMPLATE_PAGES_INVALID', `A ${pageCount}-page template does not fit: ${describeAllowance(mailType, duplex)}.`, {
      fields: [{ path, message: describeAllowance(mailType, duplex) }],
      suggestedAction: 'Use a template whose page count fits the mail type, or pick another mail type (duplex doubles the pages of postcards, flyers and letters).',
      details: { page_count: pageCount, allowed: pageAllowance(mailType, duplex) },
    });
  }
}

function assertMarketingMinimum(mailingClass: BatchMailingClass, pieces: number, path: string): void {
  if (mailingClass === 'marketing_mail' && pieces < MARKETING_MAIL_MINIMUM) {
    throw errors.badRequest('BATCH_MARKETING_MAIL_MINIMUM', `marketing_mail needs at least ${MARKETING_MAIL_MINIMUM} recipients; this batch has ${pieces}.`, {
      fields: [{ path, message: `at least ${MARKETING_MAIL_MINIMUM} for marketing_mail` }],
      suggestedAction: 'Add recipients or use mailing_class first_class.',
      details: { pieces, minimum: MARKETING_MAIL_MINIMUM },
    });
  }
}

export function estimateBatch(auth: AuthContext, input: EstimateInput) {
  const pageCount = input.page_count ?? pageAllowance(input.mail_type, input.duplex).min;
  assertPagesFit(input.mail_type, input.duplex, pageCount, 'page_count');
  assertMarketingMinimum(input.mailing_class, input.quantity, 'quantity');
  const price = priceBatch({
    mailType: input.mail_type, mailingClass: input.mailing_class, pieces: input.quantity,
    pageCount, color: input.color, duplex: input.duplex,
  });
  return {
    estimate: {
      mail_type: input.mail_type,
      mailing_class: input.mailing_class,
      quantity: input.quantity,
      page_count: pageCount,
      color: input.color,
      duplex: input.duplex,
      ...price,
      credits_required_cents: auth.testMode ? 0 : price.total_cents,
      sandbox: auth.testMode,
    },
  };
}

// ---------------------------------------------------------------------------------------
// Draft creation

export interface UploadedFileRef {
  filepath: string;
  originalFilename: string | null;
  size: number;
}

export interface CreateBatchInput {
  job_name: string;
  mail_type: BatchMailType;
  mailing_class: BatchMailingClass;
  duplex: boolean;
  color: boolean;
  column_map?: ColumnMap;
  template?: UploadedFileRef;
  recipients?: UploadedFileRef;
}

/** What makes two create requests "the same" for Idempotency-Key: the fields and both files' bytes. */
export async function batchCreateFingerprint(input: CreateBatchInput): Promise<string> {
  const fileHash = async (f?: UploadedFileRef) => (f ? sha256Hex(await readFile(f.filepath)) : null);
  const { template, recipients, ...fields } = input;
  return requestFingerprint({ fields, template: await fileHash(template), recipients: await fileHash(recipients) });
}

/** Page count of a PDF template, or a 400 naming the template field. */
export async function templatePageCount(bytes: Buffer): Promise<number> {
  const bad = (message: string) => errors.validation([{ path: 'template', message }], `Template refused: ${message}`);
  if (bytes.length === 0) throw bad('the file is empty');
  if (bytes.length > TEMPLATE_MAX_BYTES) throw bad('the template PDF may be at most 10 MB');
  if (!bytes.subarray(0, 1024).toString('latin1').includes('%PDF-')) throw bad('the template must be a PDF');
  // The guarded reader of letter documents: bounded decompression and parse time, and a
  // page-tree walk that refuses loops (pdf-lib alone inflates object-stream bombs and
  // throws on malformed trees).
  try {
    return await countPdfPages(bytes, TEMPLATE_MAX_PAGES);
  } catch (err) {
    if (err instanceof ApiError && err.options.fields?.length) throw bad(err.options.fields[0].message);
    throw err;
  }
}

function nextStepAfterDraft(deps: Deps, r: BatchRow) {
  const pay = r.test_mode ? 'nothing is charged in the sandbox' : `this charges ${formatCents(r.total_cents)} in credits`;
  return {
    action: 'confirm',
    url: batchUrl(deps, r.id, '/confirm'),
    hint: `Check recipients.skipped_rows and pricing, then POST confirm to print ${r.valid} pieces (${pay}). ` +
      `The draft expires at ${r.expires_at.toISOString()}; DELETE cancels it.`,
  };
}

/** Also used by the reconciler to start a draft's workflow again. */
export function batchWorkflowStartOptions(deps: Deps, input: BatchWorkflowInput) {
  const attributes = [
    { key: BatchStatus, value: 'draft' },
    { key: MemberId, value: input.memberId },
    { key: ObjectId, value: input.batchId },
    { key: TestMode, value: input.testMode },
    ...(input.agentId ? [{ key: AgentId, value: input.agentId }] : []),
  ];
  return {
    taskQueue: deps.config.taskQueue,
    workflowId: batchWorkflowId(input.batchId),
    args: [input] as [BatchWorkflowInput],
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    typedSearchAttributes: attributes as never,
  };
}

export function batchWorkflowInput(r: BatchRow, expirySeconds: number): BatchWorkflowInput {
  return {
    batchId: r.id,
    memberId: r.member_id,
    agentId: r.agent_id,
    testMode: r.test_mode,
    createdAt: r.created_at.toISOString(),
    draftExpirySeconds: expirySeconds,
  };
}

/** Inserts recipients in multi-row batches (one unnest INSERT per 1,000 rows). */
async function insertRecipients(tx: Queryable, batchId: string, recipients: Recipient[]): Promise<void> {
  const CHUNK = 1000;
  for (let start = 0; start < recipients.length; start += CHUNK) {
    const part = recipients.slice(start, start + CHUNK);
    await tx.query(
      `INSERT INTO batch_recipients (batch_id, seq, source_row, name, line1, line2, city, state, zip)
       SELECT $1, * FROM unnest($2::int[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])`,
      [batchId, part.map((_, i) => start + i + 1), part.map((r) => r.row), part.map((r) => r.name), part.map((r) => r.line1),
        part.map((r) => r.line2), part.map((r) => r.city), part.map((r) => r.state), part.map((r) => r.zip)],
    );
  }
}

export async function createBatchDraft(deps: Deps, auth: AuthContext, input: CreateBatchInput, opts: BatchServiceOptions = {}) {
  const missing = [
    ...(input.template ? [] : [{ path: 'template', message: 'a template PDF file is required' }]),
    ...(input.recipients ? [] : [{ path: 'recipients', message: 'a recipients CSV file is required' }]),
  ];
  if (missing.length) throw errors.validation(missing);
  const template = input.template!;
  const recipientsFile = input.recipients!;

  // Every check runs before anything is stored.
  if (template.size > TEMPLATE_MAX_BYTES) throw errors.validation([{ path: 'template', message: 'the template PDF may be at most 10 MB' }]);
  if (recipientsFile.size > RECIPIENTS_CSV_MAX_BYTES) throw errors.validation([{ path: 'recipients', message: 'the recipients CSV may be at most 5 MB' }]);
  const templateBytes = await readFile(template.filepath);
  const pageCount = await templatePageCount(templateBytes);
  if (pageCount > TEMPLATE_MAX_PAGES) {
    throw errors.badRequest('BATCH_TEMPLATE_PAGES_INVALID', `The template has ${pageCount} pages; at most ${TEMPLATE_MAX_PAGES} are accepted.`, {
      fields: [{ path: 'template', message: `at most ${TEMPLATE_MAX_PAGES} pages` }],
      suggestedAction: `Upload a template of at most ${TEMPLATE_MAX_PAGES} pages that fits the mail type (${describeAllowance(input.mail_type, input.duplex)}).`,
    });
  }
  assertPagesFit(input.mail_type, input.duplex, pageCount, 'template');

  const csvBytes = await readFile(recipientsFile.filepath);
  const parsed = parseRecipientsCsv(csvBytes, { columnMap: input.column_map });
  if (parsed.valid === 0) {
    throw new ApiError(400, 'The recipients CSV has no valid recipients', {
      fields: [{ path: 'recipients', message: `no valid recipients: all ${parsed.total_rows} rows were skipped` }],
      retryable: false,
      suggestedAction: 'Fix the rows listed in details.skipped_rows and upload the file again.',
      details: { skipped_rows: parsed.skipped_rows.slice(0, 100) },
    });
  }
  assertMarketingMinimum(input.mailing_class, parsed.valid, 'recipients');
  const price: BatchPrice = priceBatch({
    mailType: input.mail_type, mailingClass: input.mailing_class, pieces: parsed.valid, pageCount, color: input.color, duplex: input.duplex,
  });

  const id = newBatchId();
  const templateKey = `batches/${id}/template.pdf`;
  const recipientsKey = `batches/${id}/recipients.csv`;
  await deps.storage.put(templateKey, templateBytes, 'application/pdf');
  await deps.storage.put(recipientsKey, csvBytes, 'text/csv');

  const expirySeconds = draftExpirySeconds(opts);
  const row = await deps.db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO batches (id, member_id, agent_id, test_mode, job_name, mail_type, mailing_class, duplex, color, page_count,
         template_key, recipients_key, total_rows, valid, skipped, skipped_rows,
         per_piece_cents, color_surcharge_cents, effective_per_piece_cents, volume_discount_pct, subtotal_cents, discount_cents, total_cents,
         expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23,
         now() + ($24 || ' seconds')::interval)`,
      [id, auth.memberId, auth.agentId, auth.testMode, input.job_name, input.mail_type, input.mailing_class, input.duplex, input.color, pageCount,
        templateKey, recipientsKey, parsed.total_rows, parsed.valid, parsed.skipped, JSON.stringify(parsed.skipped_rows),
        price.per_piece_cents, price.color_surcharge_cents, price.effective_per_piece_cents, price.volume_discount_pct,
        price.subtotal_cents, price.discount_cents, price.total_cents, String(expirySeconds)],
    );
    await insertRecipients(tx, id, parsed.recipients);
    return (await loadBatchRow(tx, id))!;
  });

  try {
    await deps.temporal.workflow.start(BATCH_MAIL_WORKFLOW, {
      ...batchWorkflowStartOptions(deps, batchWorkflowInput(row, expirySeconds)),
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  } catch (err) {
    // Without its workflow a draft could never expire or be confirmed: take it back.
    deps.log.error({ err, batch_id: id }, 'batch workflow start failed; draft withdrawn');
    await deps.db.query(`DELETE FROM batches WHERE id = $1 AND status = 'draft'`, [id]).catch(() => undefined);
    await Promise.all([deps.storage.remove(templateKey), deps.storage.remove(recipientsKey)]).catch(() => undefined);
    throw errors.unavailable('BATCH_WORKFLOW_UNAVAILABLE', 'The batch could not be scheduled right now; nothing was stored or charged.');
  }

  return { batch: toBatchObject(row), next_step: nextStepAfterDraft(deps, row) };
}

// ---------------------------------------------------------------------------------------
// Reads

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
  const [{ total }] = await deps.db.query(`SELECT count(*)::int AS total FROM batches WHERE ${clause}`, params);
  const rows: BatchRow[] = await deps.db.query(
    `SELECT * FROM batches WHERE ${clause} ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, input.limit, input.offset],
  );
  return {
    batches: rows.map(toBatchObject),
    pagination: pagination(total, input.limit, input.offset),
  };
}

async function firstPieces(db: Queryable, batchId: string, limit = PIECES_SHOWN_ON_GET) {
  const rows = await db.query(
    `SELECT p.batch_sequence, r.name, r.city, r.state, r.zip, p.status, p.mailed_at
       FROM batch_pieces p JOIN batch_recipients r ON r.batch_id = p.batch_id AND r.seq = p.batch_sequence
      WHERE p.batch_id = $1 ORDER BY p.batch_sequence LIMIT $2`, [batchId, limit]);
  return rows.map((p: { batch_sequence: number; name: string; city: string; state: string; zip: string; status: string; mailed_at: Date | null }) => ({
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

// ---------------------------------------------------------------------------------------
// Talking to the batch workflow

type UpdateOutcome<T> =
  | { ok: true; value: T }
  | { ok: false; kind: 'gone' };

/**
 * Sends an Update to the batch workflow through the gateway. A draft's workflow may be
 * started here (its start was lost); any other batch whose workflow is gone has finished,
 * and Postgres has the answer. Refusals and 503 WORKFLOW_UNAVAILABLE are thrown.
 */
async function runUpdate<Ret, Args extends unknown[]>(
  deps: Deps, row: BatchRow, def: UpdateDefinition<Ret, Args>, args: Args,
  opts: BatchServiceOptions & { updateId?: string } = {},
): Promise<UpdateOutcome<Ret>> {
  const answer = await updateWorkflow(deps, {
    workflowId: batchWorkflowId(row.id),
    update: def,
    args,
    updateId: opts.updateId,
    startFromRow: () => (row.status === 'draft'
      ? { workflowType: BATCH_MAIL_WORKFLOW, options: batchWorkflowStartOptions(deps, batchWorkflowInput(row, draftExpirySeconds(opts))) as never }
      : null),
  });
  return answer.closed ? { ok: false, kind: 'gone' } : { ok: true, value: answer.value };
}

async function reload(deps: Deps, id: string): Promise<BatchRow> {
  return (await loadBatchRow(deps.db, id))!;
}

// ---------------------------------------------------------------------------------------
// Confirm, cancel, sandbox advance

function nextStepAfterConfirm(deps: Deps, r: BatchRow) {
  if (r.status === 'paid' || r.status === 'generating') {
    return {
      action: 'poll',
      url: batchUrl(deps, r.id),
      hint: `Pieces are being generated; the batch moves to submitted by itself.${r.test_mode ? ' Then POST /advance to move it to in_progress and completed.' : ' The facility is alerted when it is submitted.'}`,
    };
  }
  if (r.status === 'submitted' && r.test_mode) {
    return { action: 'advance', url: batchUrl(deps, r.id, '/advance'), hint: 'POST advance moves the sandbox batch to in_progress, then to completed.' };
  }
  return { action: 'poll', url: batchUrl(deps, r.id), hint: `The batch is ${r.status}.` };
}

export async function confirmBatch(deps: Deps, auth: AuthContext, id: string, opts: BatchServiceOptions = {}) {
  const before = await visibleBatch(deps, auth, id);
  let alreadyConfirmed = before.status !== 'draft';
  if (before.status === 'cancelled' && !before.confirmed_at) {
    throw errors.conflict('BATCH_MAIL_NOT_CONFIRMABLE', `The draft was cancelled${before.error_message ? ` (${before.error_message})` : ''}; it cannot be confirmed.`, {
      suggestedAction: 'Create a new batch.',
    });
  }
  if (before.status === 'draft') {
    let outcome: UpdateOutcome<{ alreadyConfirmed: boolean }>;
    try {
      outcome = await runUpdate(deps, before, confirmBatchUpdate, [], { ...opts, updateId: updateIdFor(auth, 'batch.confirm', opts.idempotencyKey) });
    } catch (err) {
      if (!isWorkflowUnavailable(err)) throw err;
      // The spec's answer for a confirm the workflow has not taken yet: it is carried out by itself.
      const now = await reload(deps, id);
      const charged = now.status !== 'draft';
      throw errors.unavailable('BATCH_GENERATION_DISPATCH_PENDING',
        charged
          ? 'The batch is paid; generating its pieces is pending and is retried automatically. It moves to submitted by itself: poll GET /v1/batch-mail/{id}. Repeating confirm never charges twice.'
          : 'The confirmation is queued for the batch workflow and is retried automatically; nothing has been charged yet. Poll GET /v1/batch-mail/{id}, or repeat confirm: it never charges twice.',
        { details: { status: now.status, credits_charged: now.credits_charged_cents > 0 } });
    }
    if (outcome.ok) alreadyConfirmed = outcome.value.alreadyConfirmed;
  }
  const row = await reload(deps, id);
  return {
    batch: toBatchObject(row),
    credits_charged_cents: row.credits_charged_cents,
    credit_balance_cents: await balanceCents(deps.db, row.member_id),
    already_confirmed: alreadyConfirmed,
    sandbox: row.test_mode,
    next_step: nextStepAfterConfirm(deps, row),
  };
}

function notCancellable(r: BatchRow): ApiError {
  return errors.conflict('BATCH_MAIL_NOT_CANCELLABLE', `The batch is ${r.status}; only draft, paid, generating and submitted batches can be cancelled.`, {
    suggestedAction: 'The facility has started or the batch is finished; it can no longer be cancelled.',
    details: { status: r.status },
  });
}

export async function cancelBatch(deps: Deps, auth: AuthContext, id: string, opts: BatchServiceOptions = {}) {
  const before = await visibleBatch(deps, auth, id);
  let alreadyCancelled = before.status === 'cancelled';
  if (!alreadyCancelled) {
    if (!CANCELLABLE_BATCH_STATUSES.includes(before.status)) throw notCancellable(before);
    const outcome = await runUpdate(deps, before, cancelBatchUpdate, [], { ...opts, updateId: updateIdFor(auth, 'batch.cancel', opts.idempotencyKey) });
    if (outcome.ok) alreadyCancelled = outcome.value.alreadyCancelled;
  }
  const row = await reload(deps, id);
  if (row.status !== 'cancelled') throw notCancellable(row);
  return {
    id: row.id,
    status: row.status,
    refunded_credits_cents: row.refunded_cents,
    already_cancelled: alreadyCancelled,
    batch: toBatchObject(row),
    sandbox: row.test_mode,
  };
}

export async function advanceTestBatch(deps: Deps, auth: AuthContext, id: string, opts: BatchServiceOptions = {}) {
  const before = await visibleBatch(deps, auth, id);
  const invalid = (status: BatchStatusName) => errors.conflict('BATCH_ADVANCE_INVALID',
    status === 'paid' || status === 'generating' || status === 'draft'
      ? `The batch is ${status}; confirm it and wait until it is submitted before advancing.`
      : `The batch is ${status}; it cannot advance further.`,
    { suggestedAction: 'Poll GET /v1/batch-mail/{id} until status is submitted, then advance.', details: { status } });
  if (before.status !== 'submitted' && before.status !== 'in_progress') throw invalid(before.status);
  const outcome = await runUpdate(deps, before, advanceTestBatchUpdate, [], { ...opts, updateId: updateIdFor(auth, 'batch.test_advance', opts.idempotencyKey) });
  if (!outcome.ok) throw invalid((await reload(deps, id)).status);
  const row = await reload(deps, id);
  return { batch: toBatchObject(row), previous_status: outcome.value.previousStatus, sandbox: true };
}

// ---------------------------------------------------------------------------------------
// Facility

async function facilityBatch(deps: Deps, auth: AuthContext, id: string): Promise<BatchRow> {
  const row = BATCH_ID_PATTERN.test(id) ? await loadBatchRow(deps.db, id) : undefined;
  if (!row || row.test_mode || !auth.facilityId || row.facility_id !== auth.facilityId) throw errors.notFound('Batch');
  return row;
}

export async function listFacilityBatches(deps: Deps, auth: AuthContext, input: { status?: BatchStatusName; limit: number; offset: number }) {
  const statuses = input.status ? [input.status] : ['submitted', 'in_progress'];
  const params = [auth.facilityId, statuses];
  const [{ total }] = await deps.db.query(
    `SELECT count(*)::int AS total FROM batches WHERE facility_id = $1 AND NOT test_mode AND status = ANY($2)`, params);
  const rows: BatchRow[] = await deps.db.query(
    `SELECT * FROM batches WHERE facility_id = $1 AND NOT test_mode AND status = ANY($2)
      ORDER BY submitted_at NULLS LAST, created_at, id LIMIT $3 OFFSET $4`, [...params, input.limit, input.offset]);
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
    },
  };
}

/** A facility step as an Update (once per Idempotency-Key); undefined when the workflow has finished. */
async function facilityUpdate<Ret, Args extends unknown[]>(
  deps: Deps, auth: AuthContext, row: BatchRow, def: UpdateDefinition<Ret, Args>, args: Args, step: FacilityStepOptions & { operation: string },
): Promise<Ret | undefined> {
  const outcome = await runUpdate(deps, row, def, args, { updateId: updateIdFor(auth, step.operation, step.idempotencyKey) });
  return outcome.ok ? outcome.value : undefined;
}

function facilityStateConflict(r: BatchRow, needed: string): ApiError {
  return batchStateConflict(`The batch is ${r.status}; ${needed}.`, { status: r.status });
}

export async function startFacilityBatch(deps: Deps, auth: AuthContext, id: string, step: FacilityStepOptions = {}) {
  const before = await facilityBatch(deps, auth, id);
  if (before.status !== 'submitted' && before.status !== 'in_progress') throw facilityStateConflict(before, 'only submitted batches can be started');
  if (!(await claimFacilityBatch(deps.db, auth.facilityId!, id))) throw errors.notFound('Batch');
  if (before.status === 'submitted') {
    const result = await facilityUpdate(deps, auth, before, startBatchFulfilmentUpdate, [], { ...step, operation: 'facility.batch.start' });
    if (!result) throw facilityStateConflict(await reload(deps, id), 'only submitted batches can be started');
  }
  return { batch: toBatchObject(await reload(deps, id)) };
}

/** Sorted, merged ranges from ranges and single sequences; 400 when outside 1..valid. */
export function pieceRanges(valid: number, ranges: BatchPieceRange[] = [], sequences: number[] = []): BatchPieceRange[] {
  const all = [...ranges, ...sequences.map((s) => ({ from: s, to: s }))];
  const bad = all.findIndex((r) => r.from < 1 || r.to < r.from || r.to > valid);
  if (bad >= 0) {
    throw errors.validation([{ path: bad < ranges.length ? `ranges.${bad}` : `sequences.${bad - ranges.length}`, message: `batch_sequence must be within 1-${valid} (from <= to)` }]);
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
  deps: Deps, auth: AuthContext, id: string,
  input: { status: 'mailed' | 'failed'; ranges?: BatchPieceRange[]; sequences?: number[]; reason?: string }, step: FacilityStepOptions = {},
) {
  const before = await facilityBatch(deps, auth, id);
  if (before.status !== 'in_progress') throw facilityStateConflict(before, 'pieces can be marked only while the batch is in_progress');
  const ranges = pieceRanges(before.valid, input.ranges, input.sequences);
  const result = await facilityUpdate(deps, auth, before, markBatchPiecesUpdate, [{ status: input.status, ranges, reason: input.reason ?? null }],
    { ...step, operation: 'facility.batch.pieces' });
  if (!result) throw facilityStateConflict(await reload(deps, id), 'pieces can be marked only while the batch is in_progress');
  return { batch: toBatchObject(await reload(deps, id)), updated: result.updated };
}

export async function finishFacilityBatch(deps: Deps, auth: AuthContext, id: string, input: { facility_notes?: string }, step: FacilityStepOptions = {}) {
  const before = await facilityBatch(deps, auth, id);
  const finished = ['completed', 'partially_completed', 'failed'].includes(before.status);
  if (!finished && before.status !== 'in_progress') throw facilityStateConflict(before, 'only in_progress batches can be finished');
  if (!finished) await facilityUpdate(deps, auth, before, finishBatchUpdate, [{ facilityNotes: input.facility_notes ?? null }], { ...step, operation: 'facility.batch.finish' });
  const row = await reload(deps, id);
  return { batch: toBatchObject(row), refunded_credits_cents: row.refunded_cents, already_finished: finished };
}

export async function failFacilityBatch(deps: Deps, auth: AuthContext, id: string, input: { error_message: string; facility_notes?: string }, step: FacilityStepOptions = {}) {
  const before = await facilityBatch(deps, auth, id);
  if (before.status !== 'failed') {
    if (!FAILABLE_BATCH_STATUSES.includes(before.status)) {
      throw facilityStateConflict(before, 'only paid, generating, submitted or in_progress batches can be failed');
    }
    if (!(await claimFacilityBatch(deps.db, auth.facilityId!, id))) throw errors.notFound('Batch');
    await facilityUpdate(deps, auth, before, failBatchUpdate, [{ errorMessage: input.error_message, facilityNotes: input.facility_notes ?? null }],
      { ...step, operation: 'facility.batch.fail' });
  }
  const row = await reload(deps, id);
  if (row.status !== 'failed') throw facilityStateConflict(row, 'it could not be failed');
  return { batch: toBatchObject(row), refunded_credits_cents: row.refunded_cents, already_failed: before.status === 'failed' };
}
