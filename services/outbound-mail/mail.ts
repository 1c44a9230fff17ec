// Outbound mail use-cases shared by REST and MCP: submit (with dry run and every
// safeguard), read and list, cancel, owner approval and rejection, and the sandbox's
// test pieces and advance. Submission order: validate -> (mail run checks) -> inspect
// document -> price -> spending safeguards -> (dry run answers here) -> duplicate
// protection -> upload -> one transaction (record + debit) -> start the piece workflow.
// Everything after the commit belongs to the workflow. A child of a Business mail run
// is stored funding_pending and debited by its run's funding, unless its class commits
// immediately (then it is debited and submitted like any piece).
import { pagination } from '../../domain/shared/pagination';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import { ApiError, codedError, errors } from '../../domain/shared/errors';
import { sha256Hex } from '../../domain/accounts/keys';
import { formatCents } from '../../domain/shared/money';
import { inspectDocument } from '../../domain/outbound-mail/documents';
import { MailClass, priceOutboundMail, PricingOverrides } from '../../domain/outbound-mail/pricing';
import { recipientFingerprint } from '../../domain/outbound-mail/address';
import {
  dailyPiecesRefusal, dailyPiecesWarning, MailStatusName, parseCreatedBound, spendRefusal,
} from '../../domain/workflow-safe/mail-rules';
import { balanceCents, debit, insufficientCredits } from '../billing/credits';
import { requestFingerprint, runIdempotent } from '../shared/idempotency';
import { assignFacility } from '../operations/facilities';
import { canSee, resolveAgentFilter } from '../shared/scoping';
import { assertLinkedObjects } from '../shared/linked-objects';
import { getOutboundMailbox, listMailboxes } from '../accounts/agents';
import { DuplicateProbe, findDuplicate, piecesLast24h, spentLast24h } from './safeguards';
import { loadMailRow, loadPhotos, MailRecord, MailRow, signedDocumentUrl, toMailRecord } from './record';
import { mailNotCancellable, mailStateConflict, MailWorkflowClosed, runMailUpdate, startMailWorkflow } from './workflow';
import { updateIdFor } from '../shared/workflow-gateway';
import { simulatedLetterPdf } from './sandbox';
import { lockMailRunForChild, mailRunForChild } from '../mail-runs/mail-runs';
import { commitsImmediately } from '../../domain/workflow-safe/mail-runs';
import type { ApproveResult, CancelResult } from '../../workflows/outbound-mail/contracts';

/** Validated submission fields (POST /v1/mail, POST /v1/test/mail, MCP send_outbound_mail). */
export interface SubmitMailFields {
  recipient_name?: string;
  recipient_company?: string;
  recipient_line1: string;
  recipient_line2?: string;
  recipient_city: string;
  recipient_state: string;
  recipient_zip: string;
  recipient_country: string;
  return_name?: string;
  return_company?: string;
  return_line1?: string;
  return_line2?: string;
  return_city?: string;
  return_state?: string;
  return_zip?: string;
  mail_class: MailClass;
  color: boolean;
  duplex: boolean;
  page_count?: number;
  package_id?: string;
  inbound_capture_id?: string;
  postal_mail_thread_id?: string;
  mail_run_id?: string;
  agent_notes?: string;
  requires_approval: boolean;
  metadata?: Record<string, unknown>;
  dry_run: boolean;
  allow_duplicate: boolean;
}

export interface SubmitMailRequest {
  fields: SubmitMailFields;
  /** The uploaded document, or a simulated letter of N pages (sandbox test pieces). */
  document: { data: Buffer; filename: string | null } | { simulatedPages: number };
  /** Member keys: which agent's mailbox sends the piece. */
  agentId?: string;
  /** X-Max-Cost-Cents. */
  maxCostCents?: number | null;
  idempotencyKey?: string;
  /** Idempotency operation name (the route). */
  operation?: string;
}

export interface ServiceResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * Fault injection for the "API dies between commit and workflow start" case: tests set
 * afterCommit to throw, which leaves a committed, debited piece without a workflow for
 * the reconciler to find. Never set outside tests.
 */
export const mailFaults: { afterCommit?: (outboundMailId: string) => void } = {};

/** The member's default return address (the piece's return_* columns) and spending settings. */
interface MemberSettings extends Pick<MailRow,
  'return_name' | 'return_company' | 'return_line1' | 'return_line2' | 'return_city' | 'return_state' | 'return_zip'> {
  per_transaction_limit_cents: number | null;
  daily_spend_limit_cents: number | null;
  pricing_overrides: PricingOverrides | null;
}

function noActiveMailbox(message: string): ApiError {
  return codedError(404, 'MAILBOX_NOT_FOUND', message, {
    suggestedAction: 'Create an agent (POST /v1/agents) or pass ?agent_id= naming one of your active agents (GET /v1/mailboxes).',
  });
}

/**
 * The agent whose mailbox sends the piece. An agent key sends from its own agent's
 * mailbox (404 when the agent was deleted). A member key names one with ?agent_id=, or
 * sends from its only agent; with no active agent there is no mailbox (404), and with
 * several it must choose (400).
 */
async function sendingAgent(deps: Deps, auth: AuthContext, requested?: string): Promise<string> {
  if (isAgentKey(auth)) return (await getOutboundMailbox(deps, auth, auth.agentId!)).agent_id;
  if (requested) return (await getOutboundMailbox(deps, auth, requested)).agent_id;
  const mailboxes = await listMailboxes(deps, auth);
  if (mailboxes.length === 0) throw noActiveMailbox('No active mailbox: this account has no active agent to send from.');
  if (mailboxes.length > 1) {
    throw errors.validation([{ path: 'query.agent_id', message: 'this account has several agents; name the sending agent with ?agent_id=' }]);
  }
  return mailboxes[0].agent_id;
}

function returnAddress(f: SubmitMailFields, m: MemberSettings) {
  const sentBlock = f.return_line1 !== undefined;
  return {
    return_name: f.return_name ?? m.return_name,
    return_company: f.return_company ?? m.return_company,
    return_line1: sentBlock ? f.return_line1! : m.return_line1,
    return_line2: sentBlock ? f.return_line2 ?? null : m.return_line2,
    return_city: sentBlock ? f.return_city! : m.return_city,
    return_state: sentBlock ? f.return_state! : m.return_state,
    return_zip: sentBlock ? f.return_zip! : m.return_zip,
  };
}

function duplicateError(existingId: string): ApiError {
  return errors.conflict('DUPLICATE_OUTBOUND_MAIL', 'The same letter was already sent to this recipient in the last 24 hours; nothing was charged.', {
    details: { existing_outbound_mail_id: existingId },
    suggestedAction: 'Check the existing piece. To send the same letter again on purpose, resend with allow_duplicate=true.',
  });
}

/** Duplicate protection's lookup; an unavailable check refuses (503) rather than risk a double send. */
async function checkDuplicate(db: Pick<EntityManager, 'query'>, probe: DuplicateProbe): Promise<string | null> {
  try {
    return await findDuplicate(db, probe);
  } catch (err) {
    throw errors.unavailable('DUPLICATE_PROTECTION_UNAVAILABLE', `Duplicate protection is unavailable right now (${(err as Error).message}); nothing was charged.`);
  }
}

function refuse(r: { code: string; message: string; details: Record<string, unknown> }): ApiError {
  return errors.unprocessable(r.code, `${r.message} Nothing was charged.`, {
    details: r.details, suggestedAction: 'Lower the cost (fewer pages, black-and-white, another mail_class) or ask your human to change the limit.',
  });
}

/** How long a submission waits for its workflow start before leaving it to the reconciler. */
const WORKFLOW_START_DEADLINE_MS = 5_000;

/** A transaction-scoped lock on a name (a hash collision only makes two submissions wait for each other). */
async function lockName(tx: Pick<EntityManager, 'query'>, name: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [name]);
}

/**
 * POST /v1/mail (and POST /v1/test/mail): see the module comment for the order of checks.
 *
 * Two idempotency guards, on purpose. runIdempotent stores the first answer and holds
 * concurrent repeats off while it runs; but its record is completed only after the piece's
 * transaction has committed, so a process that dies in between leaves a record that a
 * retry takes over after 30 s and runs again. The piece row carries the key itself
 * (unique per owner key, written in the same transaction as the debit), so that rerun finds
 * the committed piece (existingForIdempotencyKey) instead of charging a second one.
 */
export async function submitMail(deps: Deps, auth: AuthContext, req: SubmitMailRequest): Promise<ServiceResult> {
  const doc = 'data' in req.document ? req.document : null;
  const fingerprint = requestFingerprint({
    fields: req.fields, agent_id: req.agentId ?? null, max_cost_cents: req.maxCostCents ?? null,
    document: doc ? sha256Hex(doc.data) : { simulated_pages: (req.document as { simulatedPages: number }).simulatedPages },
  });
  return runIdempotent(deps, auth, { operation: req.operation ?? 'POST /v1/mail', key: req.idempotencyKey, fingerprint },
    () => submitOnce(deps, auth, req, fingerprint));
}

async function existingForIdempotencyKey(deps: Deps, auth: AuthContext, key: string, fingerprint: string): Promise<ServiceResult | null> {
  const [row] = await deps.db.query(`SELECT * FROM outbound_mail WHERE owner_key = $1 AND idempotency_key = $2`, [auth.ownerKey, key]);
  if (!row) return null;
  if (row.request_fingerprint !== fingerprint) {
    throw errors.unprocessable('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request body.', {
      suggestedAction: 'Use a new Idempotency-Key for a different request.',
    });
  }
  return { status: 201, body: await creationBody(deps, row) };
}

async function creationBody(deps: Deps, row: MailRow) {
  const record = await toMailRecord(deps, row, []);
  return { ...record, credit_balance_cents: await balanceCents(deps.db, row.member_id) };
}

async function submitOnce(deps: Deps, auth: AuthContext, req: SubmitMailRequest, fingerprint: string): Promise<ServiceResult> {
  const f = req.fields;
  const testMode = auth.testMode;
  if (req.idempotencyKey) {
    const existing = await existingForIdempotencyKey(deps, auth, req.idempotencyKey, fingerprint);
    if (existing) return existing;
  }
  // Linked objects must be the caller's (and in its environment) before anything is priced or stored.
  await assertLinkedObjects(deps.db, auth, {
    package_id: ['package', f.package_id],
    inbound_capture_id: ['inbound_mail_item', f.inbound_capture_id],
    postal_mail_thread_id: ['postal_thread', f.postal_mail_thread_id],
  });
  const run = f.mail_run_id !== undefined ? await mailRunForChild(deps, auth, f.mail_run_id) : null;
  const agentId = await sendingAgent(deps, auth, req.agentId);
  const id = randomUUID();

  const data = 'data' in req.document ? req.document.data : await simulatedLetterPdf(req.document.simulatedPages, id);
  const filename = 'data' in req.document ? req.document.filename : `sandbox-letter-${id}.pdf`;
  const document = await inspectDocument(data, filename, f.page_count !== undefined ? { pageCountOverride: f.page_count } : {});

  const [member]: MemberSettings[] = await deps.db.query(
    `SELECT return_name, return_company, return_line1, return_line2, return_city, return_state, return_zip,
            per_transaction_limit_cents, daily_spend_limit_cents, pricing_overrides FROM members WHERE id = $1`, [auth.memberId]);
  const facility = await assignFacility(deps.db, testMode, auth.memberId);
  const breakdown = priceOutboundMail({
    pageCount: document.pageCount, color: f.color, duplex: f.duplex, mailClass: f.mail_class,
    destinationZip: f.recipient_zip, destinationCountry: f.recipient_country, originZip: facility.originZip,
  }, member.pricing_overrides);
  const price = breakdown.total_cents;
  const costCents = testMode ? 0 : price;
  const maxCostCents = req.maxCostCents ?? null;

  // Spending safeguards: each refuses (422) before anything is stored or spent.
  const spent = testMode ? 0 : await spentLast24h(deps.db, auth.memberId!);
  const spendCheck = { costCents: price, maxCostCents, perTransactionLimitCents: member.per_transaction_limit_cents, dailySpendLimitCents: member.daily_spend_limit_cents, spentLast24hCents: spent, live: !testMode };
  const spendProblem = spendRefusal(spendCheck);
  if (spendProblem) throw refuse(spendProblem);
  const pieces = { limit: auth.maxDailyPieces, used: await piecesLast24h(deps.db, auth.ownerKey) };

  const recipient = {
    name: f.recipient_name, company: f.recipient_company, line1: f.recipient_line1, line2: f.recipient_line2,
    city: f.recipient_city, state: f.recipient_state, zip: f.recipient_zip, country: f.recipient_country,
  };
  const probe = { memberId: auth.memberId!, agentId, recipientFingerprint: recipientFingerprint(recipient), documentSha256: document.sha256, mailClass: f.mail_class, testMode };
  const pending = f.requires_approval || auth.forceApproval;
  const balance = await balanceCents(deps.db, auth.memberId!);

  if (f.dry_run) {
    const warnings: Record<string, unknown>[] = [];
    const piecesWarning = dailyPiecesWarning(pieces);
    if (piecesWarning) warnings.push(piecesWarning);
    const duplicateId = f.allow_duplicate ? null : await checkDuplicate(deps.db, probe);
    if (duplicateId) {
      warnings.push({ code: 'duplicate_outbound_mail', message: 'The same letter went to this recipient in the last 24 hours; a real submission would be refused (409) unless allow_duplicate=true.', existing_outbound_mail_id: duplicateId });
    }
    if (pending) warnings.push({ code: 'requires_approval', message: 'A real submission would wait for the account owner\'s approval; credits are debited on approval.' });
    if (!testMode && balance < price) {
      warnings.push({ code: 'insufficient_credits', message: `The balance (${formatCents(balance)}) does not cover this piece; a real submission would be refused (402).`, credit_balance_cents: balance, credit_shortfall_cents: price - balance });
    }
    return {
      status: 200,
      body: {
        dry_run: true,
        cost_cents: costCents,
        cost_display: testMode ? `${formatCents(0)} (test mode; live cost ${formatCents(price)})` : formatCents(price),
        credits_required_cents: testMode ? 0 : price,
        ...(testMode ? { estimated_live_cost_cents: price } : {}),
        cost_breakdown: breakdown,
        credit_balance_cents: balance,
        page_count: document.pageCount,
        mail_class: f.mail_class,
        warnings,
      },
    };
  }

  const piecesProblem = dailyPiecesRefusal(pieces);
  if (piecesProblem) throw refuse(piecesProblem);
  if (!f.allow_duplicate) {
    const duplicateId = await checkDuplicate(deps.db, probe);
    if (duplicateId) throw duplicateError(duplicateId);
  }
  // A run child waits for its run's funding unless its class commits immediately.
  const awaitsFunding = run !== null && !commitsImmediately(f.mail_class);
  const charge = !testMode && !pending && !awaitsFunding;
  // A cheap look before uploading; the debit below re-checks under the member lock.
  if (charge && balance < price) throw insufficientCredits(deps, price, balance);

  const documentKey = `mail/${id}/document.${document.extension}`;
  await deps.storage.put(documentKey, data, document.contentType);

  const safeguards = {
    requires_approval: pending,
    approval_source: f.requires_approval ? 'request' : auth.forceApproval ? 'force_approval' : null,
    force_approval: auth.forceApproval,
    max_cost_cents: maxCostCents,
    spend_limits_applied: !testMode,
    per_transaction_limit_cents: member.per_transaction_limit_cents,
    daily_spend_limit_cents: member.daily_spend_limit_cents,
    spent_last_24h_cents: spent,
    max_daily_pieces: auth.maxDailyPieces,
    pieces_last_24h: pieces.used,
    duplicate_protection: f.allow_duplicate ? 'bypassed' : 'checked',
  };

  const status: MailStatusName = pending ? 'pending_approval' : awaitsFunding ? 'funding_pending' : 'submitted';
  let row: MailRow;
  try {
    row = await deps.db.transaction(async (tx) => {
      // Serialise only what the re-checks below need, always in this order: the member's
      // ledger for a debit and spend caps, the key's daily count when it has a limit, and
      // this very letter for duplicate protection. Unrelated submissions of one member
      // (other letters, other recipients, sandbox pieces) then commit side by side.
      if (charge) await tx.query(`SELECT id FROM members WHERE id = $1 FOR UPDATE`, [auth.memberId]);
      if (auth.maxDailyPieces !== null) await lockName(tx, `mail-daily-pieces:${auth.ownerKey}`);
      if (!f.allow_duplicate) await lockName(tx, `mail-duplicate:${[probe.memberId, probe.agentId, probe.recipientFingerprint, probe.documentSha256, probe.mailClass, probe.testMode].join(':')}`);
      if (run) await lockMailRunForChild(tx, run);
      const again = dailyPiecesRefusal({ limit: auth.maxDailyPieces, used: await piecesLast24h(tx, auth.ownerKey) });
      if (again) throw refuse(again);
      if (!f.allow_duplicate) {
        const duplicateId = await checkDuplicate(tx, probe);
        if (duplicateId) throw duplicateError(duplicateId);
      }
      if (charge) {
        const spendAgain = spendRefusal({ ...spendCheck, spentLast24hCents: await spentLast24h(tx, auth.memberId!) });
        if (spendAgain) throw refuse(spendAgain);
      }
      const ret = returnAddress(f, member);
      // Picked again under the facility's lock: a deactivation meanwhile is waited for, not missed.
      const facilityId = (await assignFacility(tx, testMode, auth.memberId)).id;
      const [inserted] = await tx.query(
        `INSERT INTO outbound_mail (
           id, member_id, agent_id, owner_key, idempotency_key, request_fingerprint, status, test_mode, mail_class,
           recipient_name, recipient_company, recipient_line1, recipient_line2, recipient_city, recipient_state, recipient_zip, recipient_country,
           recipient_fingerprint, return_name, return_company, return_line1, return_line2, return_city, return_state, return_zip,
           color, duplex, page_count, page_count_source, document_key, document_filename, document_type, document_content_type,
           document_sha256, document_size_bytes, simulated_document, price_cents, cost_cents, cost_breakdown, origin_zip, facility_id,
           approval_source, max_cost_cents, safeguards, allow_duplicate, package_id, inbound_capture_id, postal_mail_thread_id,
           mail_run_id, agent_notes, metadata, submitted_at)
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29,$30,
                 $31,$32,$33,$34,$35,$36,$37,$38,$39,$40,$41,$42,$43,$44,$45,$46,$47,$48,$49,$50,$51, $52)
         RETURNING *`,
        [id, auth.memberId, agentId, auth.ownerKey, req.idempotencyKey ?? null, fingerprint, status, testMode, f.mail_class,
          f.recipient_name ?? null, f.recipient_company ?? null, f.recipient_line1, f.recipient_line2 ?? null, f.recipient_city, f.recipient_state, f.recipient_zip, f.recipient_country,
          probe.recipientFingerprint, ret.return_name, ret.return_company, ret.return_line1, ret.return_line2, ret.return_city, ret.return_state, ret.return_zip,
          f.color, f.duplex, document.pageCount, document.pageCountSource, documentKey, filename, document.type, document.contentType,
          document.sha256, document.sizeBytes, !('data' in req.document), price, testMode ? 0 : price, JSON.stringify(breakdown), facility.originZip, facilityId,
          safeguards.approval_source, maxCostCents, JSON.stringify(safeguards), f.allow_duplicate, f.package_id ?? null, f.inbound_capture_id ?? null, f.postal_mail_thread_id ?? null,
          f.mail_run_id ?? null, f.agent_notes ?? null, f.metadata === undefined ? null : JSON.stringify(f.metadata), status === 'submitted' ? new Date() : null],
      );
      if (charge) {
        await debit(deps, tx, {
          memberId: auth.memberId!, amountCents: price, entryKey: `debit:mail:${id}`,
          referenceType: 'outbound_mail', referenceId: id, description: `Outbound mail ${id} (${f.mail_class})`,
        });
      }
      return inserted as MailRow;
    });
  } catch (err) {
    await deps.storage.remove(documentKey).catch(() => undefined);
    // A concurrent retry with the same Idempotency-Key committed first: answer with its piece.
    if (req.idempotencyKey && (err as { constraint?: string }).constraint === 'outbound_mail_idempotency') {
      const existing = await existingForIdempotencyKey(deps, auth, req.idempotencyKey, fingerprint);
      if (existing) return existing;
    }
    throw err;
  }

  mailFaults.afterCommit?.(row.id);
  try {
    // Bounded: when Temporal is unreachable the caller gets its 201 after a few seconds,
    // not after the client's own retries give up.
    await deps.temporal.connection.withDeadline(Date.now() + WORKFLOW_START_DEADLINE_MS, () => startMailWorkflow(deps, row));
  } catch (err) {
    // The piece is committed (and paid): the reconciler starts its workflow shortly.
    deps.log.error({ err, outbound_mail_id: row.id }, 'starting the outbound mail workflow failed; the reconciler will start it');
  }
  // The inserted row is the answer: the workflow start sets only workflow_started_at,
  // which the record does not show.
  return { status: 201, body: await creationBody(deps, row) };
}

/** The piece if the caller may see it; 404 otherwise (other members', other agents' and the other environment's pieces). */
export async function visibleMailRow(deps: Deps, auth: AuthContext, id: string): Promise<MailRow> {
  const row = await loadMailRow(deps.db, id);
  if (!row || !canSee(auth, { memberId: row.member_id, agentId: row.agent_id, testMode: row.test_mode })) throw errors.notFound('Outbound mail');
  return row;
}

async function recordOf(deps: Deps, row: MailRow): Promise<MailRecord> {
  const photos = await loadPhotos(deps.db, [row.id]);
  return toMailRecord(deps, row, photos.get(row.id) ?? []);
}

export async function getMail(deps: Deps, auth: AuthContext, id: string): Promise<MailRecord> {
  return recordOf(deps, await visibleMailRow(deps, auth, id));
}

/** A fresh signed URL of the stored document (the record's document_preview_url redirects here). */
export async function mailDocumentUrl(deps: Deps, auth: AuthContext, id: string): Promise<string> {
  return signedDocumentUrl(deps, await visibleMailRow(deps, auth, id));
}

export interface ListMailQuery {
  q?: string;
  status?: MailStatusName;
  created_after?: string;
  created_before?: string;
  test_mode?: boolean;
  agent_id?: string;
  limit: number;
  offset: number;
}

function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** GET /v1/mail: newest first; every whitespace-separated term of q must match some searched field. */
export async function listMail(deps: Deps, auth: AuthContext, query: ListMailQuery) {
  const agentId = await resolveAgentFilter(deps, auth, query.agent_id);
  const where: string[] = ['m.member_id = $1', 'm.test_mode = $2'];
  const params: unknown[] = [auth.memberId, query.test_mode ?? auth.testMode];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (agentId) add((p) => `m.agent_id = ${p}`, agentId);
  if (query.status) add((p) => `m.status = ${p}`, query.status);
  const bounds: { field: 'created_after' | 'created_before'; side: 'after' | 'before' }[] = [
    { field: 'created_after', side: 'after' }, { field: 'created_before', side: 'before' },
  ];
  for (const { field, side } of bounds) {
    const text = query[field];
    if (text === undefined) continue;
    const bound = parseCreatedBound(text, side);
    if (!bound) throw errors.validation([{ path: `query.${field}`, message: 'must be an ISO 8601 date-time or YYYY-MM-DD' }]);
    const op = side === 'after' ? '>=' : bound.inclusive ? '<=' : '<';
    add((p) => `m.created_at ${op} ${p}`, bound.at);
  }
  for (const term of (query.q ?? '').trim().split(/\s+/).filter(Boolean)) {
    add((p) => `concat_ws(' ', m.recipient_name, m.recipient_company, m.recipient_line1, m.recipient_line2, m.recipient_city,
      m.recipient_state, m.recipient_zip, m.tracking_number, m.agent_notes) ILIKE ${p}`, likePattern(term));
  }
  const whereSql = where.join(' AND ');
  const [{ total }] = await deps.db.query(`SELECT count(*)::int AS total FROM outbound_mail m WHERE ${whereSql}`, params);
  const rows: MailRow[] = await deps.db.query(
    `SELECT m.* FROM outbound_mail m WHERE ${whereSql} ORDER BY m.created_at DESC, m.id DESC LIMIT ${query.limit} OFFSET ${query.offset}`, params);
  const photos = await loadPhotos(deps.db, rows.map((r) => r.id));
  const mail = await Promise.all(rows.map((r) => toMailRecord(deps, r, photos.get(r.id) ?? [])));
  return { mail, pagination: pagination(total, query.limit, query.offset) };
}

/** A call's Idempotency-Key: the workflow Update's id derives from it, so a retry is the same Update. */
export interface MailCallOptions {
  idempotencyKey?: string;
}

/**
 * DELETE /v1/mail/{id}: cancels while submitted and not yet printing (or still pending
 * approval); refunds once. With an Idempotency-Key the workflow is asked even for a
 * cancelled piece, so a retry whose answer was lost gets the first answer (with its refund).
 */
export async function cancelMail(deps: Deps, auth: AuthContext, id: string, opts: MailCallOptions = {}) {
  const row = await visibleMailRow(deps, auth, id);
  /** `current` is the row as it stands now when the caller has just read it. */
  const answer = async (result: CancelResult, current?: MailRow) => ({
    outbound_mail: await recordOf(deps, current ?? (await loadMailRow(deps.db, id))!),
    refunded_credits_cents: result.refundedCents,
    credit_balance_cents: result.balanceCents,
    already_cancelled: result.alreadyCancelled,
  });
  const alreadyCancelled = async (): Promise<CancelResult> => ({
    refundedCents: 0, alreadyCancelled: true, balanceCents: row.test_mode ? null : await balanceCents(deps.db, row.member_id),
  });
  if (row.status === 'cancelled' && !opts.idempotencyKey) return answer(await alreadyCancelled(), row);
  try {
    return answer(await runMailUpdate<CancelResult>(deps, row, 'cancel', [], { updateId: updateIdFor(auth, 'mail.cancel', opts.idempotencyKey) }));
  } catch (err) {
    if (!(err instanceof MailWorkflowClosed)) throw err;
    const now = (await loadMailRow(deps.db, id))!;
    if (now.status === 'cancelled') return answer(await alreadyCancelled(), now);
    throw mailNotCancellable(`The piece is ${now.status} and can no longer be cancelled.`, { status: now.status });
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Who approves: a member key of the piece's member, or the operator CLI. */
export type Approver = AuthContext | 'operator';

function notPendingApproval(status: string): ApiError {
  return errors.conflict('MAIL_NOT_PENDING_APPROVAL', `The piece is ${status}; only pieces awaiting approval can be approved or rejected.`, {
    details: { status }, suggestedAction: 'Nothing to decide: GET /v1/mail?status=pending_approval lists the pieces awaiting approval.',
  });
}

async function approverRow(deps: Deps, approver: Approver, id: string): Promise<MailRow> {
  const row = approver === 'operator'
    ? (UUID.test(id) ? await loadMailRow(deps.db, id) : null)
    : await visibleMailRow(deps, approver, id);
  if (!row) throw errors.notFound('Outbound mail');
  return row;
}

/**
 * Sends the owner's decision. Without an Idempotency-Key only a pending piece is asked;
 * with one the workflow is asked anyway, so a retry whose answer was lost gets the first
 * answer, and a decision the piece no longer allows is MAIL_NOT_PENDING_APPROVAL.
 */
async function decided<T>(deps: Deps, approver: Approver, row: MailRow, update: string, opts: MailCallOptions): Promise<T> {
  if (row.status !== 'pending_approval' && !opts.idempotencyKey) throw notPendingApproval(row.status);
  const caller = approver === 'operator' ? { ownerKey: 'operator' } : approver;
  try {
    return await runMailUpdate<T>(deps, row, update, [], { updateId: updateIdFor(caller, `mail.${update}`, opts.idempotencyKey) });
  } catch (err) {
    const refused = err instanceof ApiError && err.code === 'MAIL_STATE_CONFLICT';
    if (!(err instanceof MailWorkflowClosed) && !refused) throw err;
    const now = (await loadMailRow(deps.db, row.id))!;
    throw notPendingApproval(now.status);
  }
}

/**
 * The owner's approval of a pending piece: debits it now (402 when short; the piece
 * stays pending so the owner can add credits and approve again) and submits it.
 */
export async function approveMail(deps: Deps, approver: Approver, id: string, opts: MailCallOptions = {}) {
  const row = await approverRow(deps, approver, id);
  const result = await decided<ApproveResult>(deps, approver, row, 'approve', opts);
  return {
    outbound_mail: await recordOf(deps, (await loadMailRow(deps.db, id))!),
    credits_charged_cents: result.creditsChargedCents,
    credit_balance_cents: result.balanceCents,
  };
}

/** The owner's rejection: the piece is cancelled and nothing is charged. */
export async function rejectMail(deps: Deps, approver: Approver, id: string, opts: MailCallOptions = {}) {
  const row = await approverRow(deps, approver, id);
  await decided<void>(deps, approver, row, 'reject', opts);
  return { outbound_mail: await recordOf(deps, (await loadMailRow(deps.db, id))!) };
}

/**
 * POST /v1/test/mail/{id}/advance: one sandbox step through the workflow's own handlers.
 * With an idempotency key, the step is also one Temporal update id, so a retry whose
 * first answer was lost between the workflow and the API moves the piece once.
 */
export async function advanceTestMail(deps: Deps, auth: AuthContext, id: string, opts: { idempotencyKey?: string } = {}): Promise<MailRecord> {
  const row = await visibleMailRow(deps, auth, id);
  const updateId = updateIdFor(auth, 'mail.test_advance', opts.idempotencyKey);
  try {
    await runMailUpdate<{ status: string }>(deps, row, 'testAdvance', [], { updateId });
  } catch (err) {
    if (!(err instanceof MailWorkflowClosed)) throw err;
    const now = (await loadMailRow(deps.db, id))!;
    throw mailStateConflict(`A ${now.status} piece cannot be advanced.`, { status: now.status });
  }
  return recordOf(deps, (await loadMailRow(deps.db, id))!);
}
