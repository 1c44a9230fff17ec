// Turns the texts of one forwarded item (subject, body, PDF/DOCX text, OCR) into its
// drafting context: category and suggested action, sender, recipient and reply contact,
// deadlines, key facts, a one-line summary, the thread keys, and one lineage row per
// conclusion (source, field, value, confidence). A document's layout (pdftotext -layout,
// or OCR words at their positions) drives the bill fields (invoice number, amount due,
// due date: domain/inbound-email/layout.ts), the letterhead sender and the address blocks.
// Pure: the extraction workflow's activity feeds it stored texts and writes what it returns.
import { formatAddress, findAddresses, ParsedAddress } from './address';
import { Category, classify, suggestAction, SuggestedAction } from './classifier';
import { findAmounts, findDeadlines, findReferenceNumbers, formatDollars, ReferenceKind } from './facts';
import { billFields, blocksText, LabelledValue, letterheadName, PairingRule } from './layout';
import { forwardedFrom } from './message';
import { referenceKey, senderKey, subjectKey, ThreadKeys } from './thread';

export type TextSourceName = 'email_subject' | 'email_body' | 'pdf_text' | 'docx_text' | 'plain_text' | 'ocr';

export interface TextSource {
  source: TextSourceName;
  fileId: string | null;
  text: string;
  /** The same page(s) with columns kept (pdftotext -layout, OCR layout); absent for plain text. */
  layout?: string;
  /** How far the text itself can be trusted (1 for a digital text layer, OCR's mean confidence). */
  confidence: number;
}

export interface Contact {
  name: string | null;
  line1: string | null;
  line2: string | null;
  city: string;
  state: string;
  postal_code: string;
  country: string;
  source_type: TextSourceName;
  verification_status: ParsedAddress['verification_status'];
  confidence: number;
  formatted_address: string;
}

export interface KeyFact {
  /** invoice_number is the number the bill is known by (invoice, bill, statement or notice number); due_date is YYYY-MM-DD. */
  kind: 'amount_due' | 'amount' | 'due_date' | ReferenceKind;
  label: string;
  value: string;
  amount_cents?: number;
}

export interface ExtractionDraft {
  fileId: string | null;
  source: string;
  field: string;
  value: string;
  confidence: number;
  metadata: Record<string, unknown>;
}

export interface Party {
  name: string | null;
  email: string | null;
  address: Contact | null;
}

export interface Analysis {
  category: Category;
  categoryConfidence: number;
  suggestedAction: SuggestedAction;
  sender: Party;
  recipient: Party;
  replyContact: Contact | null;
  deadlines: string[];
  keyFacts: KeyFact[];
  summary: string;
  threadKeys: ThreadKeys;
  threadTitle: string;
  lowConfidence: boolean;
  extractions: ExtractionDraft[];
}

export interface AnalysisInput {
  subject: string;
  body: string;
  fromName: string | null;
  fromAddress: string | null;
  aliasEmail: string;
  hasAttachments: boolean;
  /** Document texts in file order (email subject/body are taken from the fields above). */
  documents: TextSource[];
}

/** Below this classifier confidence an item is flagged for review. */
export const LOW_CATEGORY_CONFIDENCE = 0.45;

const CATEGORY_LABELS: Record<Category, string> = {
  bill: 'Bill',
  invoice: 'Invoice',
  legal_notice: 'Legal notice',
  government: 'Government letter',
  bank: 'Bank letter',
  insurance: 'Insurance letter',
  medical: 'Medical letter',
  marketing: 'Marketing mail',
  personal: 'Personal mail',
  other: 'Mail',
};

const round = (n: number) => Math.round(n * 1000) / 1000;

/** How sure a label/value pairing is, by the rule that paired them. */
const RULE_CONFIDENCE: Record<PairingRule, number> = { same_cell: 0.9, same_line: 0.85, column_below: 0.8 };

function toContact(a: ParsedAddress, src: TextSource): Contact {
  return {
    name: a.name,
    line1: a.line1,
    line2: a.line2,
    city: a.city,
    state: a.state,
    postal_code: a.postal_code,
    country: a.country,
    source_type: src.source,
    verification_status: a.verification_status,
    confidence: round(a.confidence * src.confidence),
    formatted_address: formatAddress(a),
  };
}

export function analyseInbound(input: AnalysisInput): Analysis {
  const bodySource: TextSource = { source: 'email_body', fileId: null, text: input.body, confidence: 1 };
  const texts: TextSource[] = [...input.documents, bodySource].filter((t) => t.text.trim());
  const extractions: ExtractionDraft[] = [];
  const allText = texts.map((t) => t.text).join('\n\n');

  // Addresses: documents first (letterheads), then the email body; a laid-out page is read
  // block by block so that side-by-side address blocks are not interleaved.
  const found = texts.flatMap((src) =>
    findAddresses(src.layout ? blocksText(src.layout) : src.text).map((a) => ({ a, src })),
  );
  const senderHit = found.find((f) => f.a.role === 'sender') ?? found.find((f) => f.a.role === null);
  const recipientHit =
    found.find((f) => f.a.role === 'recipient') ?? found.find((f) => f.a.role === null && f !== senderHit);
  const replyHit = found.find((f) => f.a.role === 'reply') ?? senderHit;
  const senderAddress = senderHit ? toContact(senderHit.a, senderHit.src) : null;
  const recipientAddress = recipientHit ? toContact(recipientHit.a, recipientHit.src) : null;
  const replyContact = replyHit ? toContact(replyHit.a, replyHit.src) : null;
  for (const [field, hit] of [
    ['sender_address', senderHit],
    ['recipient_address', recipientHit],
    ['reply_contact', replyHit],
  ] as const) {
    if (!hit) continue;
    const c = toContact(hit.a, hit.src);
    extractions.push({
      fileId: hit.src.fileId,
      source: 'address_parser',
      field,
      value: c.formatted_address,
      confidence: c.confidence,
      metadata: {
        text_source: hit.src.source,
        role_label: hit.a.role,
        verification_status: hit.a.verification_status,
        line_index: hit.a.line_index,
      },
    });
  }

  // Deadlines, amounts and reference numbers, with the text they came from.
  const deadlines = new Map<string, { label: string }>();
  const keyFacts: KeyFact[] = [];
  const seenRefs = new Set<string>();
  let amountDue: KeyFact | null = null;
  for (const src of texts) {
    for (const d of findDeadlines(src.text)) {
      extractions.push({
        fileId: src.fileId,
        source: 'date_extractor',
        field: 'deadline',
        value: d.date,
        confidence: round(d.confidence * src.confidence),
        metadata: { label: d.label, context: d.context, text_source: src.source },
      });
      if (!deadlines.has(d.date)) deadlines.set(d.date, { label: d.label });
    }
    for (const a of findAmounts(src.text)) {
      const field = a.isAmountDue ? 'amount_due' : 'amount';
      extractions.push({
        fileId: src.fileId,
        source: 'amount_extractor',
        field,
        value: a.display,
        confidence: round((a.label ? 0.85 : 0.5) * src.confidence),
        metadata: { amount_cents: a.cents, label: a.label, context: a.context, text_source: src.source },
      });
      if (a.isAmountDue && !amountDue)
        amountDue = { kind: 'amount_due', label: a.label ?? 'amount due', value: a.display, amount_cents: a.cents };
      else if (a.label && !a.isAmountDue && keyFacts.filter((f) => f.kind === 'amount').length < 3)
        keyFacts.push({ kind: 'amount', label: a.label, value: a.display, amount_cents: a.cents });
    }
    for (const r of findReferenceNumbers(src.text)) {
      const key = referenceKey(r.value);
      if (!key || seenRefs.has(key)) continue;
      seenRefs.add(key);
      extractions.push({
        fileId: src.fileId,
        source: 'reference_extractor',
        field: r.kind,
        value: r.value,
        confidence: round(0.8 * src.confidence),
        metadata: { label: r.label, text_source: src.source },
      });
      keyFacts.push({ kind: r.kind, label: r.label, value: r.value });
    }
  }
  // Bill fields from the layout of the documents (the first document that has each wins):
  // they take precedence over the line-by-line findings above.
  const documents = texts.filter((t) => t.source !== 'email_body');
  const pick = <T>(get: (f: ReturnType<typeof billFields>) => LabelledValue<T> | null) => {
    for (const src of documents) {
      const hit = get(billFields(src.layout ?? src.text));
      if (hit) return { hit, src };
    }
    return null;
  };
  const invoice = pick((f) => f.invoiceNumber);
  const due = pick((f) => f.amountDue);
  const dueDate = pick((f) => f.dueDate);
  const fieldRow = (
    field: string,
    value: string,
    found: { hit: LabelledValue<unknown>; src: TextSource },
    extra: Record<string, unknown> = {},
  ) => {
    extractions.push({
      fileId: found.src.fileId,
      source: 'field_extractor',
      field,
      value,
      confidence: round(RULE_CONFIDENCE[found.hit.rule] * (found.hit.rank >= 2 ? 0.8 : 1) * found.src.confidence),
      metadata: {
        label: found.hit.label,
        rule: found.hit.rule,
        line: found.hit.line,
        text_source: found.src.source,
        ...extra,
      },
    });
  };
  if (due) {
    const cents = due.hit.value;
    amountDue = {
      kind: 'amount_due',
      label: due.hit.label.toLowerCase(),
      value: formatDollars(cents),
      amount_cents: cents,
    };
    fieldRow('amount_due', amountDue.value, due, { amount_cents: cents });
  }
  if (amountDue) keyFacts.unshift(amountDue);
  if (dueDate) {
    const date = dueDate.hit.value;
    keyFacts.splice(amountDue ? 1 : 0, 0, { kind: 'due_date', label: dueDate.hit.label.toLowerCase(), value: date });
    if (!deadlines.has(date)) deadlines.set(date, { label: dueDate.hit.label.toLowerCase() });
    fieldRow('due_date', date, dueDate);
  }
  if (invoice) {
    const number = invoice.hit.value;
    const key = referenceKey(number);
    const at = keyFacts.findIndex((f) => f.kind !== 'amount_due' && f.kind !== 'due_date');
    // The line-by-line finder may have read the same number under another label.
    const same = keyFacts.findIndex(
      (f) => f.kind !== 'amount_due' && f.kind !== 'due_date' && f.kind !== 'amount' && referenceKey(f.value) === key,
    );
    if (same >= 0) keyFacts.splice(same, 1);
    keyFacts.splice(at < 0 ? keyFacts.length : Math.min(at, keyFacts.length), 0, {
      kind: 'invoice_number',
      label: invoice.hit.label,
      value: number,
    });
    if (key) seenRefs.add(key);
    fieldRow('invoice_number', number, invoice);
  }
  const deadlineList = [...deadlines.keys()].sort();

  // Category and next step.
  const cls = classify(input.subject, allText);
  const suggestedAction = suggestAction(cls.category, {
    hasAmountDue: Boolean(amountDue),
    hasDeadline: deadlineList.length > 0,
    text: allText,
  });
  extractions.push({
    fileId: null,
    source: 'heuristic_classifier',
    field: 'category',
    value: cls.category,
    confidence: cls.confidence,
    metadata: { scores: cls.scores, matched_keywords: cls.matched },
  });
  extractions.push({
    fileId: null,
    source: 'heuristic_classifier',
    field: 'suggested_action',
    value: suggestedAction,
    confidence: cls.confidence,
    metadata: { has_amount_due: Boolean(amountDue), has_deadline: deadlineList.length > 0 },
  });

  // Parties: the letterhead names the sender, else the sender's address block, else the
  // remit-to block, else a forwarded message's original sender.
  const forwarded = forwardedFrom(input.body);
  const letterhead = documents
    .map((src) => ({ name: letterheadName(src.layout ?? src.text), src }))
    .find((l) => l.name);
  if (letterhead?.name) {
    extractions.push({
      fileId: letterhead.src.fileId,
      source: 'field_extractor',
      field: 'sender_name',
      value: letterhead.name,
      confidence: round(0.8 * letterhead.src.confidence),
      metadata: { rule: 'letterhead', text_source: letterhead.src.source },
    });
  }
  const replyName = replyHit && replyHit !== senderHit ? replyHit.a.name : null;
  const senderName =
    letterhead?.name ??
    senderAddress?.name ??
    replyName ??
    forwarded?.name ??
    (input.hasAttachments ? null : input.fromName);
  const sender: Party = {
    name: senderName,
    email: forwarded?.address ?? (input.hasAttachments ? null : input.fromAddress),
    address: senderAddress,
  };
  const recipient: Party = { name: recipientAddress?.name ?? null, email: input.aliasEmail, address: recipientAddress };

  const threadKeys: ThreadKeys = {
    senderKeys: [
      senderKey({
        documentSenderName: letterhead?.name ?? senderAddress?.name ?? replyName,
        forwardedFromAddress: forwarded?.address,
        fromAddress: input.fromAddress,
        hasAttachments: input.hasAttachments,
      }),
    ].filter((k): k is string => Boolean(k)),
    subjectKeys: [subjectKey(input.subject)].filter((k): k is string => Boolean(k)),
    referenceKeys: [...seenRefs],
  };

  const label = CATEGORY_LABELS[cls.category];
  const cleanSubject = input.subject.replace(/^\s*((re|fwd?)\s*:\s*)+/i, '').trim();
  const parts: string[] = [];
  if (amountDue) parts.push(`${amountDue.value} due`);
  if (deadlineList.length) parts.push(`${amountDue ? 'by' : 'deadline'} ${deadlineList[0]}`);
  const account = keyFacts.find((f) => f.kind !== 'amount' && f.kind !== 'amount_due' && f.kind !== 'due_date');
  if (account) parts.push(`${account.kind.replace(/_/g, ' ')} ${account.value}`);
  const head = senderName ? `${label} from ${senderName}` : cleanSubject ? `${label}: ${cleanSubject}` : label;
  const summary = (parts.length ? `${head}: ${parts.join(', ')}.` : `${head}.`).slice(0, 300);

  return {
    category: cls.category,
    categoryConfidence: cls.confidence,
    suggestedAction,
    sender,
    recipient,
    replyContact,
    deadlines: deadlineList,
    keyFacts,
    summary,
    threadKeys,
    threadTitle: (senderName ?? (cleanSubject || label)).slice(0, 120),
    lowConfidence: cls.confidence < LOW_CATEGORY_CONFIDENCE,
    extractions,
  };
}
