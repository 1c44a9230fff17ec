// The agent-inbox contract (agent-inbox.v1): how a context is versioned and how stored
// pages are described to agents and to webhook rules.
import { sha256Hex } from '../accounts/keys';

export const AGENT_INBOX_CONTRACT_VERSION = 'agent-inbox.v1';
export const AGENT_INBOX_SCHEMA_VERSION = 1;
export const CONTENT_TRUST = 'untrusted_document' as const;
export const MAX_DUTIES_CHARS = 10000;
export const MAX_OCR_PAGE_CHARS = 32000;
export const MAX_UNCERTAIN_SPANS = 100;
export const MAX_UNCERTAIN_SPAN_CHARS = 500;
export const MAX_PAGES_PER_ITEM = 20;

/** JSON with object keys sorted at every depth, so equal contexts hash equally. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** context_version: SHA-256 (hex) of the canonical JSON of the context without context_version. */
export function contextVersion(context: Record<string, unknown>): string {
  const { context_version: _omit, ...rest } = context;
  void _omit;
  return sha256Hex(canonicalJson(rest));
}

export type PageRole = 'envelope' | 'letter';
export type PageOrigin = 'physical' | 'sample';

/** How a page is named in a sources response. */
export function sourcesKind(page: { role: PageRole; origin: PageOrigin }): 'exterior' | 'contents' | 'sample_letter' {
  if (page.origin === 'sample') return 'sample_letter';
  return page.role === 'envelope' ? 'exterior' : 'contents';
}

/** How a page is seen by webhook rules: typed sample pages by role, physical scans as `physical`. */
export function ruleSourceKind(page: { role: PageRole; origin: PageOrigin }): 'envelope' | 'letter' | 'physical' {
  return page.origin === 'sample' ? page.role : 'physical';
}

export type OcrPageStatus = 'queued' | 'processing' | 'ready' | 'needs_review' | 'failed';

/** One status for a bundle's OCR: the least finished page decides. */
export function aggregateOcrStatus(statuses: OcrPageStatus[]): OcrPageStatus | null {
  if (!statuses.length) return null;
  for (const s of ['processing', 'queued'] as const) if (statuses.includes(s)) return s;
  if (statuses.every((s) => s === 'failed')) return 'failed';
  if (statuses.some((s) => s === 'needs_review' || s === 'failed')) return 'needs_review';
  return 'ready';
}

/** The OCR state of a page as webhook rules see it. */
export function ruleOcrStatus(status: OcrPageStatus, text: string | null): 'ready' | 'pending' | 'failed' | 'missing' {
  if (status === 'queued' || status === 'processing') return 'pending';
  if (status === 'failed') return 'failed';
  return text === null ? 'missing' : 'ready';
}
