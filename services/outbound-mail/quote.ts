// A submission priced and checked before anything is stored: the inspected document (or
// the sandbox's simulated letter), the member's return address and spending settings,
// the facility that prices it, the price, and the spending safeguards that refuse it
// (422). Also the dry run's answer: the price with the warnings a real submission would
// meet (daily pieces, duplicate, approval, credits), storing and charging nothing.
import { randomUUID } from 'node:crypto';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { formatCents } from '../../domain/shared/money';
import { LetterSource, PrintedDocument, prepareDocument } from './documents';
import { CostBreakdown, MailClass, priceOutboundMail } from '../../domain/outbound-mail/pricing';
import { recipientFingerprint } from '../../domain/outbound-mail/address';
import { DailyPieces, dailyPiecesWarning, SpendCheck, spendRefusal } from '../../domain/workflow-safe/mail-rules';
import { balanceCents } from '../billing/credits';
import { assignFacility } from '../operations/facilities';
import { checkDuplicate, DuplicateProbe, piecesLast24h, safeguardRefusal, spentLast24h } from './safeguards';
import type { SenderMember } from '../accounts/sender-member';
import { simulatedLetterPdf } from './sandbox';
import { sendAfterEcho } from './scheduled-send';
import { addressDryRunWarnings } from './address-review';
import { dryRunProof } from './print-proofs';
import { returnAddress, SubmitMailFields } from './submission-fields';
import type { AddressCheck } from '../../domain/outbound-mail/address-check';
import { mergeOrRefuse, templateForMerge } from '../templates/templates';
import type { InstructionsDocument } from '../accounts/instructions';

export interface SubmitMailRequest {
  fields: SubmitMailFields;
  /** The uploaded document (with the Content-Type it was declared with, if any), or a simulated letter of N pages (sandbox test pieces). */
  document:
    | { data: Buffer; filename: string | null; contentType?: string | null }
    | { simulatedPages: number }
    | TemplateLetter;
  /** Member keys: which agent's mailbox sends the piece. */
  agentId?: string;
  /** X-Max-Cost-Cents. */
  maxCostCents?: number | null;
  idempotencyKey?: string;
  /** The A2A task (send_letter) the piece carries out, recorded with the piece. */
  a2aTaskId?: string;
  /** The sending agent's current instructions as the version check read them: the new piece's event carries them. */
  instructions?: InstructionsDocument | null;
}

/** A letter merged from one of the member's templates (extension): rendered like an HTML letter. */
export interface TemplateLetter {
  template: { id: string; version?: number; variables: Record<string, unknown> };
}

/** The member's default return address (the piece's return_* columns) and spending settings, read with the sending mailbox. */
export type MemberSettings = SenderMember;

/** A submission priced and past the spending safeguards; nothing is stored or spent yet. */
export interface QuotedSubmission {
  /** The new piece's id (a simulated letter already names it). */
  id: string;
  fields: SubmitMailFields;
  agentId: string;
  testMode: boolean;
  /** What prints: the document as sent, or the PDF an HTML, Markdown or DOCX letter was laid out to. */
  document: PrintedDocument & { simulated: boolean };
  /** What was sent, when it was laid out (HTML, Markdown, DOCX). */
  source: LetterSource | null;
  /** The template and version a merged letter came from (extension), else null. */
  template: { id: string; version: number } | null;
  /** Dry-run warnings from the layout (resources left out, page_count against the layout). */
  documentWarnings: Record<string, unknown>[];
  member: MemberSettings;
  originZip: string;
  breakdown: CostBreakdown;
  /** The live price (breakdown.total_cents); a test piece is priced the same and costs nothing. */
  priceCents: number;
  maxCostCents: number | null;
  /** The spend check that passed; a debit runs it again under the member lock. */
  spendCheck: SpendCheck;
  piecesToday: DailyPieces;
  probe: DuplicateProbe;
  /** Waits for the owner's approval: requires_approval, or a force_approval key. */
  pending: boolean;
  balanceCents: number;
}

/**
 * Inspects the document, prices the piece and applies the spending safeguards: each refuses
 * (422) before anything is stored or spent. `sender` is the sending agent and its member's
 * settings, read with the mailbox (services/accounts/agents.ts getSendingMailbox).
 */
export async function quoteSubmission(
  deps: Deps,
  auth: AuthContext,
  req: SubmitMailRequest,
  sender: { agentId: string; member: MemberSettings },
): Promise<QuotedSubmission> {
  const { agentId, member } = sender;
  const f = req.fields;
  const testMode = auth.testMode;
  const id = randomUUID();

  let data: Buffer;
  let filename: string | null;
  let contentType: string | null = null;
  let template: QuotedSubmission['template'] = null;
  if ('template' in req.document) {
    // The merge comes first: a missing variable is refused before anything is rendered or priced.
    const t = req.document.template;
    const version = await templateForMerge(deps, auth, t.id, t.version);
    data = Buffer.from(mergeOrRefuse(version, t.variables), 'utf8');
    filename = `${t.id}-v${version.version}.html`;
    contentType = 'text/html';
    template = { id: t.id, version: version.version };
  } else if ('data' in req.document) {
    data = req.document.data;
    filename = req.document.filename;
    contentType = req.document.contentType ?? null;
  } else {
    data = await simulatedLetterPdf(req.document.simulatedPages, id);
    filename = `sandbox-letter-${id}.pdf`;
  }
  const prepared = await prepareDocument(deps, data, filename, {
    ...(f.page_count !== undefined ? { pageCountOverride: f.page_count } : {}),
    contentType,
    ...(template ? { field: 'merge_variables' } : {}),
  });
  const document = prepared.printed;

  const facility = await assignFacility(deps.db, testMode, auth.memberId);
  const breakdown = priceOutboundMail(
    {
      pageCount: document.pageCount,
      color: f.color,
      duplex: f.duplex,
      mailClass: f.mail_class,
      destinationZip: f.recipient_zip,
      destinationCountry: f.recipient_country,
      originZip: facility.originZip,
    },
    member.pricing_overrides,
  );
  const price = breakdown.total_cents;
  const maxCostCents = req.maxCostCents ?? null;

  const spent = testMode ? 0 : await spentLast24h(deps.db, auth.memberId!);
  const spendCheck = {
    costCents: price,
    maxCostCents,
    perTransactionLimitCents: member.per_transaction_limit_cents,
    dailySpendLimitCents: member.daily_spend_limit_cents,
    spentLast24hCents: spent,
    live: !testMode,
  };
  const spendProblem = spendRefusal(spendCheck);
  if (spendProblem) throw safeguardRefusal(spendProblem);
  const pieces = { limit: auth.maxDailyPieces, used: await piecesLast24h(deps.db, auth.ownerKey) };

  const recipient = {
    name: f.recipient_name,
    company: f.recipient_company,
    line1: f.recipient_line1,
    line2: f.recipient_line2,
    city: f.recipient_city,
    state: f.recipient_state,
    zip: f.recipient_zip,
    country: f.recipient_country,
  };
  const probe = {
    memberId: auth.memberId!,
    agentId,
    recipientFingerprint: recipientFingerprint(recipient),
    // What was sent: a letter laid out again would print from a PDF with other bytes.
    documentSha256: prepared.source?.sha256 ?? document.sha256,
    mailClass: f.mail_class,
    testMode,
  };
  return {
    id,
    fields: f,
    agentId,
    testMode,
    document: { ...document, simulated: 'simulatedPages' in req.document },
    template,
    source: prepared.source,
    documentWarnings: prepared.warnings,
    member,
    originZip: facility.originZip,
    breakdown,
    priceCents: price,
    maxCostCents,
    spendCheck,
    piecesToday: pieces,
    probe,
    pending: f.requires_approval || auth.forceApproval,
    balanceCents: await balanceCents(deps.db, auth.memberId!),
  };
}

/** The dry run's answer (200): what the piece would cost, and what a real submission would meet. */
export interface DryRunQuote {
  dry_run: true;
  cost_cents: number;
  cost_display: string;
  credits_required_cents: number;
  /** Test keys: what the piece would cost live. */
  estimated_live_cost_cents?: number;
  cost_breakdown: CostBreakdown;
  credit_balance_cents: number;
  page_count: number;
  mail_class: MailClass;
  /** Scheduled send (extension): the requested time, or null. */
  send_after: string | null;
  warnings: Record<string, unknown>[];
  /** Extension: the offline recipient address check. */
  address_check: AddressCheck;
  /** Extension: the print proof's signed link (1 hour; its first GET renders it), or null when it cannot be had. */
  proof_url: string | null;
}

export async function dryRunQuote(deps: Deps, q: QuotedSubmission, addressCheck: AddressCheck): Promise<DryRunQuote> {
  const { testMode, priceCents: price, balanceCents: balance } = q;
  const warnings: Record<string, unknown>[] = [];
  // The proof's link and warnings (nothing is rendered: the link's first GET renders it), beside the duplicate check.
  const proofing = dryRunProof(
    deps,
    { ...q.fields, ...returnAddress(q.fields, q.member) },
    q.document.data,
    q.document,
  );
  const piecesWarning = dailyPiecesWarning(q.piecesToday);
  if (piecesWarning) warnings.push(piecesWarning);
  const duplicateId = q.fields.allow_duplicate ? null : await checkDuplicate(deps.db, q.probe);
  if (duplicateId) {
    warnings.push({
      code: 'duplicate_outbound_mail',
      message:
        'The same letter went to this recipient in the last 24 hours; a real submission would be refused (409) unless allow_duplicate=true.',
      existing_outbound_mail_id: duplicateId,
    });
  }
  if (q.pending)
    warnings.push({
      code: 'requires_approval',
      message: "A real submission would wait for the account owner's approval; credits are debited on approval.",
    });
  if (!testMode && balance < price) {
    warnings.push({
      code: 'insufficient_credits',
      message: `The balance (${formatCents(balance)}) does not cover this piece; a real submission would be refused (402).`,
      credit_balance_cents: balance,
      credit_shortfall_cents: price - balance,
    });
  }
  // Extensions: the layout's warnings, the address check's and the print proof's.
  warnings.push(...q.documentWarnings);
  warnings.push(...addressDryRunWarnings(addressCheck));
  const proof = await proofing;
  warnings.push(...proof.warnings);
  return {
    dry_run: true,
    cost_cents: testMode ? 0 : price,
    cost_display: testMode ? `${formatCents(0)} (test mode; live cost ${formatCents(price)})` : formatCents(price),
    credits_required_cents: testMode ? 0 : price,
    ...(testMode ? { estimated_live_cost_cents: price } : {}),
    cost_breakdown: q.breakdown,
    credit_balance_cents: balance,
    page_count: q.document.pageCount,
    mail_class: q.fields.mail_class,
    send_after: sendAfterEcho(q.fields.send_after),
    warnings,
    address_check: addressCheck,
    proof_url: proof.url,
  };
}
