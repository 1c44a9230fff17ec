// Literal search over physical inbound items (agent inbox and managed mailbox items):
// a query is NFKC-normalised, lower-cased and whitespace-collapsed, split on spaces into
// at most 12 terms, and every term must be a substring of some searchable field of the
// same item. Nothing is a wildcard: punctuation, quotes, % and _ are ordinary characters.
// The services store each item's fields already normalised by searchFields(), so the
// database compares exactly what these functions compare.
import type { FieldError } from '../shared/errors';

export const SEARCH_QUERY_MAX_CHARS = 200;
export const SEARCH_MAX_TERMS = 12;
export const SEARCH_MODE = 'literal_and' as const;

export type ItemKind = 'letter' | 'parcel';

/** Words an agent may use for a kind of item. "mail" finds both. */
export const KIND_ALIASES: Record<ItemKind, string[]> = {
  letter: ['letter', 'letters', 'mail', 'envelope', 'correspondence'],
  parcel: ['parcel', 'parcels', 'package', 'packages', 'box', 'mail'],
};

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export function normalizeSearchText(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
}

export interface LiteralQuery {
  /** The query as sent. */
  query: string;
  normalized: string;
  terms: string[];
}

export type ParsedQuery = { ok: true; value: LiteralQuery | null } | { ok: false; error: FieldError };

/**
 * Parses `q`. An absent or blank query is "no search" (value null). Over-long queries
 * (original or normalised, counted in characters) and more than 12 terms are refused.
 */
export function parseLiteralQuery(q: string | undefined | null, path = 'query.q'): ParsedQuery {
  if (q === undefined || q === null) return { ok: true, value: null };
  if (codePoints(q) > SEARCH_QUERY_MAX_CHARS) {
    return { ok: false, error: { path, message: `q may be at most ${SEARCH_QUERY_MAX_CHARS} characters` } };
  }
  const normalized = normalizeSearchText(q);
  if (codePoints(normalized) > SEARCH_QUERY_MAX_CHARS) {
    return {
      ok: false,
      error: { path, message: `q may be at most ${SEARCH_QUERY_MAX_CHARS} characters after normalisation` },
    };
  }
  if (normalized === '') return { ok: true, value: null };
  const terms = normalized.split(' ');
  if (terms.length > SEARCH_MAX_TERMS) {
    return { ok: false, error: { path, message: `q may have at most ${SEARCH_MAX_TERMS} terms` } };
  }
  return { ok: true, value: { query: q, normalized, terms } };
}

/** The UTC calendar date of a receipt, as searched: YYYY-MM-DD. */
export function receiptDate(at: Date): string {
  return at.toISOString().slice(0, 10);
}

export interface SearchDocument {
  itemId: string;
  referenceCode: string;
  kind: ItemKind;
  receivedAt: Date;
  requestIds: string[];
  bundleIds: string[];
  pageIds: string[];
  recipientName: string | null;
  recipientEmail: string | null;
  /** Saved OCR text of pages the item's readers are authorised to see. */
  ocrTexts: string[];
}

export type SearchFieldSource =
  | 'item_id'
  | 'reference'
  | 'kind'
  | 'receipt_date'
  | 'request_id'
  | 'bundle_id'
  | 'page_id'
  | 'recipient_name'
  | 'recipient_email'
  | 'ocr';

export interface SearchField {
  source: SearchFieldSource;
  text: string;
}

/** Every searchable field of an item, normalised. Empty values are left out. */
export function searchFields(doc: SearchDocument): SearchField[] {
  const out: SearchField[] = [];
  const add = (source: SearchFieldSource, value: string | null | undefined) => {
    if (value === null || value === undefined) return;
    const text = normalizeSearchText(value);
    if (text) out.push({ source, text });
  };
  add('item_id', doc.itemId);
  add('reference', doc.referenceCode);
  for (const alias of KIND_ALIASES[doc.kind]) add('kind', alias);
  add('receipt_date', receiptDate(doc.receivedAt));
  for (const id of doc.requestIds) add('request_id', id);
  for (const id of doc.bundleIds) add('bundle_id', id);
  for (const id of doc.pageIds) add('page_id', id);
  add('recipient_name', doc.recipientName);
  add('recipient_email', doc.recipientEmail);
  for (const text of doc.ocrTexts) add('ocr', text);
  return out;
}

/** True when every term is a literal substring of at least one field of the item. */
export function matchesAllTerms(terms: string[], fields: Array<Pick<SearchField, 'text'>>): boolean {
  return terms.every((term) => fields.some((f) => f.text.includes(term)));
}
