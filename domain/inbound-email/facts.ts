// Facts pulled out of mail text: calendar dates (and which of them are deadlines, by the
// words before them), dollar amounts with their labels, and account or reference numbers.
// Pure: text in, facts out.

const MONTHS: Record<string, number> = {
  jan: 1,
  january: 1,
  feb: 2,
  february: 2,
  mar: 3,
  march: 3,
  apr: 4,
  april: 4,
  may: 5,
  jun: 6,
  june: 6,
  jul: 7,
  july: 7,
  aug: 8,
  august: 8,
  sep: 9,
  sept: 9,
  september: 9,
  oct: 10,
  october: 10,
  nov: 11,
  november: 11,
  dec: 12,
  december: 12,
};
const MONTH_NAMES = Object.keys(MONTHS)
  .sort((a, b) => b.length - a.length)
  .join('|');

export interface FoundDate {
  /** YYYY-MM-DD */
  iso: string;
  raw: string;
  index: number;
}

function iso(y: number, m: number, d: number): string | null {
  if (y < 100) y += 2000;
  if (m < 1 || m > 12 || d < 1 || y < 1900 || y > 2199) return null;
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
  if (d > days) return null;
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** Every calendar date in the text: "March 15, 2025", "15 Mar 2025", "03/15/2025", "2025-03-15". */
export function findDates(text: string): FoundDate[] {
  const out: FoundDate[] = [];
  const patterns: Array<[RegExp, (m: RegExpExecArray) => string | null]> = [
    [
      new RegExp(`\\b(${MONTH_NAMES})\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, 'gi'),
      (m) => iso(+m[3], MONTHS[m[1].toLowerCase()], +m[2]),
    ],
    [
      new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(${MONTH_NAMES})\\.?,?\\s+(\\d{4})\\b`, 'gi'),
      (m) => iso(+m[3], MONTHS[m[2].toLowerCase()], +m[1]),
    ],
    [/\b(\d{4})-(\d{2})-(\d{2})\b/g, (m) => iso(+m[1], +m[2], +m[3])],
    [/\b(\d{1,2})\/(\d{1,2})\/(\d{4}|\d{2})\b/g, (m) => iso(+m[3], +m[1], +m[2])],
  ];
  for (const [re, toIso] of patterns) {
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const value = toIso(m);
      if (value && !out.some((d) => d.index === m!.index)) out.push({ iso: value, raw: m[0], index: m.index });
    }
  }
  return out.sort((a, b) => a.index - b.index);
}

export interface Deadline {
  date: string;
  label: string;
  context: string;
  confidence: number;
}

const STRONG_DEADLINE =
  /\b(due date|payment due|deadline|no later than|on or before|must be received(?: by)?|pay by|respond by|reply by|due on|due by|due|expires on|expires|expiration date|appear on|hearing date|last day to \w+)$/i;
const WEAK_DEADLINE = /\b(by|before|until)$/i;

/** Dates that follow deadline words (due, by, before, deadline, ...) within a short window. */
export function findDeadlines(text: string): Deadline[] {
  const out: Deadline[] = [];
  for (const d of findDates(text)) {
    const lineStart = text.lastIndexOf('\n', d.index - 1) + 1;
    // The window reaches back into the previous line for "Due date:\nMarch 15, 2025".
    const windowStart = Math.max(0, d.index - 60, text.lastIndexOf('\n', lineStart - 2) + 1);
    const tail = text
      .slice(windowStart, d.index)
      .replace(/\s+/g, ' ')
      .replace(/[\s:,\-]+$/, '');
    const strong = STRONG_DEADLINE.exec(tail);
    const weak = strong ? null : WEAK_DEADLINE.exec(tail);
    const hit = strong ?? weak;
    if (!hit) continue;
    if (out.some((o) => o.date === d.iso)) continue;
    const lineEnd = text.indexOf('\n', d.index);
    out.push({
      date: d.iso,
      label: hit[1].toLowerCase(),
      context: text
        .slice(lineStart, lineEnd === -1 ? undefined : lineEnd)
        .trim()
        .slice(0, 200),
      confidence: strong ? 0.85 : 0.6,
    });
  }
  return out;
}

export interface Amount {
  cents: number;
  display: string;
  label: string | null;
  isAmountDue: boolean;
  context: string;
}

const AMOUNT_LABEL =
  /(total amount due|amount due|total due|balance due|minimum payment due|minimum payment|new balance|past due amount|past due|amount enclosed|total|premium|balance|amount)\b[^$\n]{0,30}$/i;

/** Dollar amounts ("$1,234.56", "$ 42") with the label that precedes them on the same line. */
export function findAmounts(text: string): Amount[] {
  const out: Amount[] = [];
  const re = /\$\s?((?:\d{1,3}(?:,\d{3})+|\d+))(?:\.(\d{2}))?(?![\d,])/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const dollars = Number(m[1].replace(/,/g, ''));
    const cents = dollars * 100 + (m[2] ? Number(m[2]) : 0);
    if (!Number.isSafeInteger(cents)) continue;
    const lineStart = text.lastIndexOf('\n', m.index - 1) + 1;
    const lineEnd = text.indexOf('\n', m.index);
    let before = text.slice(lineStart, m.index);
    // A label alone on the line above ("Amount due\n$123.45").
    if (!before.trim() && lineStart > 0) before = text.slice(text.lastIndexOf('\n', lineStart - 2) + 1, lineStart - 1);
    const label = AMOUNT_LABEL.exec(before)?.[1]?.toLowerCase() ?? null;
    out.push({
      cents,
      display: formatDollars(cents),
      label,
      isAmountDue: label !== null && /due|balance|minimum|enclosed/.test(label),
      context: text
        .slice(lineStart, lineEnd === -1 ? undefined : lineEnd)
        .trim()
        .slice(0, 200),
    });
  }
  return out;
}

export function formatDollars(cents: number): string {
  const dollars = Math.floor(cents / 100).toLocaleString('en-US');
  return `$${dollars}.${String(cents % 100).padStart(2, '0')}`;
}

export type ReferenceKind =
  'account_number' | 'invoice_number' | 'policy_number' | 'claim_number' | 'case_number' | 'reference_number';

export interface ReferenceNumber {
  kind: ReferenceKind;
  label: string;
  value: string;
}

// Label and value on one line.
const REFERENCE =
  /\b(account|acct|invoice|inv|policy|claim|case|docket|reference|ref|customer|member|loan|order|confirmation|notice)\.?[ \t]*(?:number|no\.?|num\.?|#|id)?[ \t]*[:#]?[ \t]*([A-Z0-9][A-Z0-9-]{3,24}[A-Z0-9])\b/gi;

function referenceKind(word: string): ReferenceKind {
  const w = word.toLowerCase();
  if (w === 'account' || w === 'acct' || w === 'customer' || w === 'member' || w === 'loan') return 'account_number';
  if (w === 'invoice' || w === 'inv') return 'invoice_number';
  if (w === 'policy') return 'policy_number';
  if (w === 'claim') return 'claim_number';
  if (w === 'case' || w === 'docket') return 'case_number';
  return 'reference_number';
}

/** Account, invoice, policy, claim, case and reference numbers (values must contain a digit). */
export function findReferenceNumbers(input: string): ReferenceNumber[] {
  // OCR often spaces out hyphens ("2025-SC -0042") and reads them as dashes.
  const text = input.replace(/([A-Za-z0-9])[ \t]?[-\u2010-\u2014][ \t]?(?=[A-Za-z0-9])/g, '$1-');
  const out: ReferenceNumber[] = [];
  for (let m = REFERENCE.exec(text); m; m = REFERENCE.exec(text)) {
    const value = m[2];
    if (!/\d/.test(value)) {
      // "Notice Account Number: 123": the word taken as a value may be the next label.
      REFERENCE.lastIndex = m.index + m[1].length;
      continue;
    }
    if (out.some((r) => r.value === value)) continue;
    out.push({
      kind: referenceKind(m[1]),
      label: m[0]
        .slice(0, m[0].length - value.length)
        .replace(/[\s:#]+$/, '')
        .trim(),
      value,
    });
  }
  return out;
}
