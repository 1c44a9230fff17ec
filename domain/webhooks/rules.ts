// Custom-endpoint rules: literal matching of saved OCR text against a rule's terms.
// Text and terms are NFKC-normalised, lowercased and whitespace-collapsed, then compared
// as substrings of the combined text of the selected pages. Pure: no I/O.
import { hasVisibleCharacter, VISIBLE_CHARACTER_MESSAGE } from '../workflow-safe/visible-text';

export type RuleSource = 'envelope' | 'letter' | 'any';
export type RuleMatch = 'any' | 'all';

export interface WebhookRule {
  id: string;
  name: string;
  source: RuleSource;
  match: RuleMatch;
  terms: string[];
  exclude_terms: string[];
}

/** A page of an inbound item as the rules see it. `physical` = a scan of real mail. */
export interface RulePage {
  pageId: string;
  sourceKind: 'envelope' | 'letter' | 'physical';
  ocrStatus: 'ready' | 'pending' | 'failed' | 'missing';
  text: string | null;
}

export const RULE_LIMITS = {
  rulesPerEndpoint: 10,
  pages: 100,
  charsPerPage: 32_000,
  totalBytes: 1024 * 1024,
  termsPerRule: 20,
  termLength: 200,
  nameLength: 100,
} as const;

export type RuleOutcome =
  | 'matched'
  | 'no_pages' // the rule's source selects no page of this item
  | 'ocr_not_ready' // a selected page has missing, pending or failed OCR
  | 'oversized' // more than 100 pages, a page over 32,000 chars, or over 1 MiB in total
  | 'terms_missing' // `any`: no term found; `all`: some term not found
  | 'excluded'; // an exclude term was found

export function normalizeRuleText(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
}

/**
 * Envelope and letter rules see only typed member-sample pages of that kind; physical
 * scan pages are only seen by rules with source `any`.
 */
export function selectPages(source: RuleSource, pages: RulePage[]): RulePage[] {
  if (source === 'any') return pages;
  return pages.filter((p) => p.sourceKind === source);
}

function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}

export function evaluateRule(
  rule: Pick<WebhookRule, 'source' | 'match' | 'terms' | 'exclude_terms'>,
  pages: RulePage[],
): RuleOutcome {
  const selected = selectPages(rule.source, pages);
  if (!selected.length) return 'no_pages';
  if (selected.length > RULE_LIMITS.pages) return 'oversized';
  let total = 0;
  for (const page of selected) {
    if (page.ocrStatus !== 'ready' || page.text === null) return 'ocr_not_ready';
    if (codePointLength(page.text) > RULE_LIMITS.charsPerPage) return 'oversized';
    total += utf8Length(page.text);
  }
  if (total > RULE_LIMITS.totalBytes) return 'oversized';

  // Pages are joined by whitespace: a phrase may continue onto the next page.
  const combined = normalizeRuleText(selected.map((p) => p.text as string).join('\n'));
  const terms = rule.terms.map(normalizeRuleText).filter((t) => t !== '');
  const excludes = rule.exclude_terms.map(normalizeRuleText).filter((t) => t !== '');
  if (!terms.length) return 'terms_missing';
  const found =
    rule.match === 'all' ? terms.every((t) => combined.includes(t)) : terms.some((t) => combined.includes(t));
  if (!found) return 'terms_missing';
  if (excludes.some((t) => combined.includes(t))) return 'excluded';
  return 'matched';
}

/** Why a term list is unusable, or null when it is fine (used by request validation). */
export function termProblem(term: string): string | null {
  if (!hasVisibleCharacter(term)) return VISIBLE_CHARACTER_MESSAGE;
  if (codePointLength(term) > RULE_LIMITS.termLength) return `must be at most ${RULE_LIMITS.termLength} characters`;
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(term)) return 'must not contain control characters';
  return null;
}
