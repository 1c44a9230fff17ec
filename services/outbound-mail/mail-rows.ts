// The `outbound_mail` row a submission stores: every column it writes, filled from the
// quoted submission (rows.ts holds the INSERT, run inside the submission's transaction,
// next to the debit).
import type { AuthContext } from '../accounts/auth';
import type { MailStatusName } from '../../domain/workflow-safe/mail-rules';
import type { NewMailRow } from './rows';
import type { AddressCheck } from '../../domain/outbound-mail/address-check';
import type { QuotedSubmission } from './quote';
import { returnAddress } from './submission-fields';

/** What the submission decided beyond its quote. */
export interface NewPiece {
  status: MailStatusName;
  documentKey: string;
  /** Where what was sent is kept when it was laid out (HTML, Markdown, DOCX), else null. */
  sourceKey: string | null;
  facilityId: string | null;
  fingerprint: string;
  idempotencyKey: string | null;
  /** The offline recipient address check (extension; address-review.ts). */
  addressCheck: AddressCheck;
  /** The print proof the submission stored (extension; print-proofs.ts), or null for the worker to render. */
  proofKey: string | null;
  /** The A2A task the piece carries out (send_letter), or null. */
  a2aTaskId: string | null;
}

/** The safeguards as they applied to this piece (stored with it and shown in its record). */
function safeguardsApplied(auth: AuthContext, q: QuotedSubmission) {
  return {
    requires_approval: q.pending,
    approval_source: q.fields.requires_approval
      ? ('request' as const)
      : auth.forceApproval
        ? ('force_approval' as const)
        : null,
    force_approval: auth.forceApproval,
    max_cost_cents: q.maxCostCents,
    spend_limits_applied: !q.testMode,
    per_transaction_limit_cents: q.member.per_transaction_limit_cents,
    daily_spend_limit_cents: q.member.daily_spend_limit_cents,
    spent_last_24h_cents: q.spendCheck.spentLast24hCents,
    max_daily_pieces: auth.maxDailyPieces,
    pieces_last_24h: q.piecesToday.used,
    duplicate_protection: q.fields.allow_duplicate ? 'bypassed' : 'checked',
  };
}

export function newMailRow(auth: AuthContext, q: QuotedSubmission, piece: NewPiece): NewMailRow {
  const f = q.fields;
  const doc = q.document;
  const safeguards = safeguardsApplied(auth, q);
  return {
    id: q.id,
    member_id: auth.memberId!,
    agent_id: q.agentId,
    owner_key: auth.ownerKey,
    idempotency_key: piece.idempotencyKey,
    request_fingerprint: piece.fingerprint,
    status: piece.status,
    test_mode: q.testMode,
    mail_class: f.mail_class,
    recipient_name: f.recipient_name ?? null,
    recipient_company: f.recipient_company ?? null,
    recipient_line1: f.recipient_line1,
    recipient_line2: f.recipient_line2 ?? null,
    recipient_city: f.recipient_city,
    recipient_state: f.recipient_state,
    recipient_zip: f.recipient_zip,
    recipient_country: f.recipient_country,
    recipient_fingerprint: q.probe.recipientFingerprint,
    ...returnAddress(f, q.member),
    color: f.color,
    duplex: f.duplex,
    page_count: doc.pageCount,
    page_count_source: doc.pageCountSource,
    document_key: piece.documentKey,
    document_filename: doc.filename,
    document_type: doc.type,
    document_content_type: doc.contentType,
    document_sha256: doc.sha256,
    document_size_bytes: doc.sizeBytes,
    simulated_document: doc.simulated,
    source_type: q.source?.type ?? null,
    source_key: piece.sourceKey,
    source_filename: q.source?.filename ?? null,
    source_sha256: q.source?.sha256 ?? null,
    source_size_bytes: q.source?.sizeBytes ?? null,
    source_page_count: q.source?.layoutPageCount ?? null,
    template_id: q.template?.id ?? null,
    template_version: q.template?.version ?? null,
    price_cents: q.priceCents,
    cost_cents: q.testMode ? 0 : q.priceCents,
    cost_breakdown: q.breakdown,
    origin_zip: q.originZip,
    facility_id: piece.facilityId,
    approval_source: safeguards.approval_source,
    max_cost_cents: q.maxCostCents,
    safeguards,
    allow_duplicate: f.allow_duplicate,
    package_id: f.package_id ?? null,
    inbound_capture_id: f.inbound_capture_id ?? null,
    postal_mail_thread_id: f.postal_mail_thread_id ?? null,
    mail_run_id: f.mail_run_id ?? null,
    agent_notes: f.agent_notes ?? null,
    metadata: f.metadata ?? null,
    submitted_at: piece.status === 'submitted' ? new Date() : null,
    send_after: f.send_after !== undefined ? new Date(f.send_after) : null,
    address_check: piece.addressCheck,
    proof_key: piece.proofKey,
    a2a_task_id: piece.a2aTaskId,
  };
}
