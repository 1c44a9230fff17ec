// Label/value pairing on laid-out page text: `pdftotext -layout` output, or OCR words
// placed at their positions (domain/inbound-email/ocr.ts layoutText). Real bills put a label
// and its value in many arrangements; each rule below is one of them, tried in order:
//   same_cell     "Invoice Number: NW-0142", "Please pay by 03/07/2026."
//   same_line     the next cell to the right: "Invoice No.  ....  58812-A", totals blocks
//                 ("Balance Due   $1,259.05"), "Total amount due on March 3, 2026 .... $1,234.56"
//   column_below  the cell under the label within two rows: labels above values, header
//                 grids and remittance stubs ("Invoice #  Due Date" over "10234  03/03/2026")
// Cells are the runs of a line separated by two or more spaces (or leader dots). Also the
// letterhead (the sender's name at the top left) and a column-aware reading order for
// address blocks that sit side by side. Pure.
import { findDates } from './facts';

export interface Cell {
  text: string;
  /** Column of the first and after the last character. */
  start: number;
  end: number;
}

export interface Row {
  line: number;
  cells: Cell[];
}

/** Each line of the text as cells; blank lines are rows without cells. */
export function layoutRows(text: string): Row[] {
  return text.split(/\r?\n/).map((raw, line) => {
    // Leader dots and tabs separate cells like wide spaces do.
    const clean = raw.replace(/\t/g, '    ').replace(/\.{4,}|(?:\. ){3,}\.?|_{4,}/g, (m) => ' '.repeat(m.length));
    const cells: Cell[] = [];
    for (const m of clean.matchAll(/\S+(?: \S+)*/g)) {
      cells.push({ text: m[0], start: m.index!, end: m.index! + m[0].length });
    }
    return { line, cells };
  });
}

export type PairingRule = 'same_cell' | 'same_line' | 'column_below';

export interface LabelledValue<T> {
  value: T;
  /** The label as printed. */
  label: string;
  rule: PairingRule;
  /** Lower is stronger (the label's rank in its list). */
  rank: number;
  line: number;
}

export interface LabelRule {
  pattern: RegExp;
  rank: number;
}

const overlaps = (a: Cell, b: Cell) => a.start <= b.end + 1 && b.start <= a.end + 1;

/**
 * Every value that one of the labels names, by the pairing rules above; the strongest
 * first (label rank, then rule order, then position on the page).
 */
export function labelledValues<T>(
  rows: Row[],
  labels: LabelRule[],
  parse: (text: string) => T | null,
): Array<LabelledValue<T>> {
  const out: Array<LabelledValue<T>> = [];
  const ruleOrder: PairingRule[] = ['same_cell', 'same_line', 'column_below'];
  rows.forEach((row, r) => {
    row.cells.forEach((cell, c) => {
      for (const { pattern, rank } of labels) {
        const m = pattern.exec(cell.text);
        if (!m) continue;
        const label = m[0].replace(/[\s:]+$/, '');
        const push = (value: T | null, rule: PairingRule, line: number) => {
          if (value !== null) out.push({ value, label, rule, rank, line });
          return value !== null;
        };
        const rest = cell.text.slice(m.index + m[0].length).replace(/^[\s:#.\-–]+/, '');
        if (rest && push(parse(rest), 'same_cell', row.line)) break;
        const right = row.cells[c + 1];
        if (right && push(parse(right.text), 'same_line', row.line)) break;
        // The cell under the label: the next one or two rows with cells, skipping one blank row.
        let below = 0;
        for (let k = r + 1; k < rows.length && k <= r + 3 && below < 2; k++) {
          if (!rows[k].cells.length) continue;
          below++;
          const under = rows[k].cells.find((x) => overlaps(x, cell));
          if (under && push(parse(under.text), 'column_below', rows[k].line)) break;
        }
        break;
      }
    });
  });
  return out.sort(
    (a, b) => a.rank - b.rank || ruleOrder.indexOf(a.rule) - ruleOrder.indexOf(b.rule) || a.line - b.line,
  );
}

// ------------------------------------------------------------------------------ values

const MONEY =
  /(-)?\$\s?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{2}))?)(?![\d,])|(-)?\b((?:\d{1,3}(?:,\d{3})+|\d+)\.(\d{2}))\b(?![\d,%])/;

/** The first dollar amount in the text, in cents ("$1,234.56", "$ 42", "1,234.56"); null when negative or absent. */
export function parseAmountCents(text: string): number | null {
  const m = MONEY.exec(text);
  if (!m) return null;
  if (m[1] || m[4]) return null;
  const digits = (m[2] ?? m[5]).replace(/,/g, '');
  const [dollars, cents = '0'] = digits.split('.');
  const value = Number(dollars) * 100 + Number(cents.padEnd(2, '0'));
  return Number.isSafeInteger(value) ? value : null;
}

/** The first calendar date in the text, as YYYY-MM-DD. */
export function parseDate(text: string): string | null {
  return findDates(text)[0]?.iso ?? null;
}

/** A document number: the first token with a digit, 3-30 characters of letters, digits and - / . (not a date or an amount). */
export function parseDocumentNumber(text: string): string | null {
  const token =
    text
      .trim()
      .split(/\s+/)[0]
      ?.replace(/[.,;:)]+$/, '') ?? '';
  if (!/^[A-Z0-9][A-Z0-9\-/.]{1,28}[A-Z0-9]$/i.test(token) || !/\d/.test(token)) return null;
  if (parseDate(token) || /^\$/.test(token) || /^\d{1,3}(,\d{3})*\.\d{2}$/.test(token)) return null;
  return token;
}

// ------------------------------------------------------------------------------ fields

export const INVOICE_NUMBER_LABELS: LabelRule[] = [
  { pattern: /\b(?:invoice|inv\.?)\s*(?:number|no\.?|num\.?|#|id)\s*[:#]?/i, rank: 0 },
  { pattern: /\b(?:bill|statement|notice)\s*(?:number|no\.?|num\.?|#)\s*[:#]?/i, rank: 1 },
];

// The amount to pay, strongest wording first; "total" alone is the last resort.
export const AMOUNT_DUE_LABELS: LabelRule[] = [
  {
    pattern:
      /\b(?:total\s+)?(?:amount\s+due|balance\s+due|amount\s+you\s+owe|total\s+due|please\s+pay(?:\s+this\s+amount)?|pay\s+this\s+amount)\b(?!\s+by\b)[:]?/i,
    rank: 0,
  },
  {
    pattern:
      /\b(?:patient\s+(?:balance|responsibility)|total\s+premium\s+due|premium\s+due|past\s+due\s+amount|new\s+balance)\b[:]?/i,
    rank: 1,
  },
  { pattern: /^(?:invoice\s+)?total\b(?!\s+(?:current|charges|paid|payments|adjustments|credits))[:]?/i, rank: 2 },
];

export const DUE_DATE_LABELS: LabelRule[] = [
  {
    pattern:
      /\b(?:payment\s+due\s+date|due\s+date|date\s+due|pay\s+by|please\s+pay\s+by|payment\s+due(?:\s+by|\s+on)?|(?:amount\s+)?due\s+(?:by|on)|pay\s+on\s+or\s+before|must\s+be\s+received\s+by)\b[:]?/i,
    rank: 0,
  },
];

export interface BillFields {
  invoiceNumber: LabelledValue<string> | null;
  amountDue: LabelledValue<number> | null;
  dueDate: LabelledValue<string> | null;
}

/** Invoice number, amount due and due date of a laid-out page, each by the strongest pairing. */
export function billFields(layout: string): BillFields {
  const rows = layoutRows(layout);
  return {
    invoiceNumber: labelledValues(rows, INVOICE_NUMBER_LABELS, parseDocumentNumber)[0] ?? null,
    amountDue: labelledValues(rows, AMOUNT_DUE_LABELS, parseAmountCents)[0] ?? null,
    dueDate: labelledValues(rows, DUE_DATE_LABELS, parseDate)[0] ?? null,
  };
}

// --------------------------------------------------------------------------- letterhead

const DOCUMENT_TITLES =
  /^(?:(?:tax|sales|commercial|proforma|final|past due|patient|resident|account|billing|premium|monthly|annual|customer|utility)\s+)*(?:invoice|statement|bill|receipt|notice|remittance|estimate|quote|billing notice|notice of [a-z ]+|statement of account)s?$/i;

/** A line that can be an organisation's or a person's name: words, few digits, no label, address, phone or email. */
export function plausibleOrganisation(text: string): boolean {
  const t = text.trim();
  if (t.length < 3 || t.length > 70 || DOCUMENT_TITLES.test(t)) return false;
  const letters = (t.match(/[A-Za-z]/g) ?? []).length;
  const digits = (t.match(/\d/g) ?? []).length;
  if (letters < 3 || digits > 0) return false;
  if (
    /[:@$;]|,\s*$|www\.|https?:|\.com\b/i.test(t) ||
    /^(dear|re|subject|date|page|phone|tel|fax|email|to|from|attn|attention|hello|hi)\b/i.test(t)
  )
    return false;
  // A sentence ("Thank you for your business") is not a name.
  if ((t.match(/(^|\s)[a-z]/g) ?? []).length >= 3) return false;
  return t.split(/\s+/).length >= 2 || /^[A-Z][A-Za-z&.'-]{3,}$/.test(t);
}

/**
 * The letterhead: the first name-like cell in the left half of the page's first rows
 * (a company prints its name at the top left, or centred above everything else).
 */
export function letterheadName(layout: string): string | null {
  const rows = layoutRows(layout)
    .filter((r) => r.cells.length)
    .slice(0, 6);
  const width = Math.max(0, ...rows.flatMap((r) => r.cells.map((c) => c.end)));
  for (const row of rows) {
    const cell = row.cells[0];
    if (cell.start > width * 0.45) continue;
    if (plausibleOrganisation(cell.text)) return cell.text.replace(/\s+/g, ' ');
  }
  return null;
}

// -------------------------------------------------------------------------- reading order

/**
 * The page read block by block: cells that start in the same column on consecutive rows
 * (one blank row allowed) form a block, and blocks are read top to bottom, left to right,
 * a blank line apart. Side-by-side address blocks ("Bill To" next to "Remit To", a
 * letterhead next to an account box) come out whole instead of interleaved.
 */
export function blocksText(layout: string): string {
  const rows = layoutRows(layout);
  interface Block {
    start: number;
    lastRow: number;
    firstRow: number;
    lines: string[];
  }
  const open: Block[] = [];
  const done: Block[] = [];
  rows.forEach((row, r) => {
    for (const cell of row.cells) {
      const block = open.find((b) => Math.abs(b.start - cell.start) <= 2 && r - b.lastRow <= 2);
      if (block) {
        if (r - block.lastRow === 2) block.lines.push('');
        block.lines.push(cell.text);
        block.lastRow = r;
      } else {
        open.push({ start: cell.start, firstRow: r, lastRow: r, lines: [cell.text] });
      }
    }
    for (let i = open.length - 1; i >= 0; i--) {
      if (r - open[i].lastRow > 2) done.push(...open.splice(i, 1));
    }
  });
  done.push(...open);
  return done
    .sort((a, b) => a.firstRow - b.firstRow || a.start - b.start)
    .map((b) => b.lines.join('\n'))
    .join('\n\n');
}
