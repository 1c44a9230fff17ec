// Scans of an item: its scan bundles with their pages in order and each page's saved OCR,
// and the views of them that the managed mailbox, packages and the agent inbox answer with.
import {
  aggregateOcrStatus,
  CONTENT_TRUST,
  OcrPageStatus,
  sourcesKind,
} from '../../domain/physical-inbound/agent-inbox';
import type { Db } from './item-records';
import type { ScanBundleRow, ScanPageRow } from './rows';
import { sqlRows } from '../shared/sql';

/** A scan bundle with its pages in order. */
export interface BundleRow extends Omit<ScanBundleRow, 'workflow_started_at'> {
  pages: ScanPageRow[];
}

/** Every scan bundle of the given items, oldest first, with their pages in order. */
export async function loadBundles(db: Db, itemIds: string[]): Promise<Map<string, BundleRow[]>> {
  const out = new Map<string, BundleRow[]>();
  if (!itemIds.length) return out;
  const bundles = await sqlRows<BundleRow>(
    db,
    `SELECT id, request_id, item_id, ocr_id, created_at FROM scan_bundles WHERE item_id = ANY($1::uuid[]) ORDER BY created_at, id`,
    [itemIds],
  );
  const pages = await sqlRows<ScanPageRow>(
    db,
    `SELECT * FROM scan_pages WHERE item_id = ANY($1::uuid[]) ORDER BY page_number`,
    [itemIds],
  );
  const byBundle = new Map<string, ScanPageRow[]>();
  for (const p of pages) (byBundle.get(p.bundle_id) ?? byBundle.set(p.bundle_id, []).get(p.bundle_id)!).push(p);
  for (const b of bundles) {
    b.pages = byBundle.get(b.id) ?? [];
    (out.get(b.item_id) ?? out.set(b.item_id, []).get(b.item_id)!).push(b);
  }
  return out;
}

/** One item's scan bundles, oldest first, with their pages in order. */
export async function loadItemBundles(db: Db, itemId: string): Promise<BundleRow[]> {
  return (await loadBundles(db, [itemId])).get(itemId) ?? [];
}

export function bundleOcrStatus(bundle: BundleRow): OcrPageStatus | null {
  return aggregateOcrStatus(bundle.pages.map((p) => p.ocr_status));
}

export function scanSummary(bundle: BundleRow) {
  return {
    request_id: bundle.request_id,
    bundle_id: bundle.id,
    created_at: bundle.created_at.toISOString(),
    page_count: bundle.pages.length,
    ocr_status: bundleOcrStatus(bundle),
  };
}

export function ocrPageView(p: ScanPageRow) {
  return {
    page_id: p.id,
    page_number: p.page_number,
    source_sha256: p.source_sha256,
    status: p.ocr_status,
    text: p.ocr_text,
    is_blank: p.ocr_is_blank ?? false,
    confidence: p.ocr_confidence === null || p.ocr_confidence === undefined ? null : Number(p.ocr_confidence),
    uncertain_spans: p.ocr_uncertain_spans,
    provider: p.ocr_provider,
    model: p.ocr_model,
    completed_at: p.ocr_completed_at ? p.ocr_completed_at.toISOString() : null,
    attempts: p.ocr_attempts,
    error_code: p.ocr_error_code,
    ...(p.ocr_provenance ? { provenance: p.ocr_provenance } : {}),
  };
}

/** A stored page as agents and pages readers see it: where it came from and its saved OCR. */
export function sourcePageView(bundle: BundleRow, p: BundleRow['pages'][number]) {
  const ocr = ocrPageView(p);
  return {
    document_id: p.id,
    source_kind: sourcesKind({ role: p.page_role, origin: p.origin }),
    request_id: bundle.request_id,
    bundle_id: bundle.id,
    page_id: p.id,
    page_number: p.page_number,
    source_sha256: p.source_sha256,
    created_at: p.created_at.toISOString(),
    status: ocr.status,
    text: ocr.text,
    is_blank: ocr.is_blank,
    uncertain_spans: ocr.uncertain_spans,
    model: ocr.model,
    provider: ocr.provider,
  };
}

/** A bundle's OCR record, whatever state its pages are in (agent-inbox context). */
export function ocrRecord(bundle: BundleRow) {
  const models = [...new Set(bundle.pages.map((p) => p.ocr_model).filter((m): m is string => !!m))];
  const done = bundle.pages.map((p) => p.ocr_completed_at?.getTime() ?? 0);
  return {
    content_trust: CONTENT_TRUST,
    id: bundle.ocr_id,
    status: bundleOcrStatus(bundle),
    model: models.join(', ') || null,
    created_at: new Date(Math.max(bundle.created_at.getTime(), ...done)).toISOString(),
    pages: bundle.pages.map(ocrPageView),
  };
}

/** The saved OCR of a bundle, or null while none is available (queued or processing). */
export function savedOcr(bundle: BundleRow) {
  const status = bundleOcrStatus(bundle);
  return status === null || status === 'queued' || status === 'processing' ? null : ocrRecord(bundle);
}
