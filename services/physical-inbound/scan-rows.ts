// Every statement that writes the scan tables (`scan_requests`, `scan_bundles`,
// `scan_pages`; row types in rows.ts): requesting a scan, fulfilling or rejecting it, its
// bundles and pages, and each page's OCR.
import type { OcrPageStatus, PageOrigin, PageRole } from '../../domain/physical-inbound/agent-inbox';
import type { ScanBundleRow, ScanPageRow, ScanRequestRow } from './rows';
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** The item a scan request is for. */
interface ScanTarget {
  id: string;
  member_id: string;
  facility_id: string | null;
}

// scan_requests

/** The scan of a live Open & Scan operation, for the item's facility. */
export async function insertHandlingScanRequest(
  tx: Queryable,
  item: ScanTarget,
  op: { id: string; agent_id: string | null; facility_id: string | null },
): Promise<Pick<ScanRequestRow, 'id'>> {
  const [request] = await sqlRows<Pick<ScanRequestRow, 'id'>>(
    tx,
    `INSERT INTO scan_requests (item_id, member_id, agent_id, facility_id, scan_type, origin, handling_id)
         VALUES ($1, $2, $3, $4, 'content', 'handling', $5) RETURNING id`,
    [item.id, item.member_id, op.agent_id, op.facility_id, op.id],
  );
  return request;
}

/** The scan a package action (scan, open_and_scan) asks for. */
export async function insertPackageActionScanRequest(
  tx: Queryable,
  item: ScanTarget,
  r: { agentId: string | null; scanType: string; origin: string; packageActionId: string; options: unknown },
): Promise<Pick<ScanRequestRow, 'id'>> {
  const [request] = await sqlRows<Pick<ScanRequestRow, 'id'>>(
    tx,
    `INSERT INTO scan_requests (item_id, member_id, agent_id, facility_id, scan_type, origin, package_action_id, options)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
    [
      item.id,
      item.member_id,
      r.agentId,
      item.facility_id,
      r.scanType,
      r.origin,
      r.packageActionId,
      JSON.stringify(r.options),
    ],
  );
  return request;
}

/** A sandbox scan: already fulfilled. */
export async function insertFixtureScanRequest(
  tx: Queryable,
  item: { id: string; member_id: string; agent_id: string | null },
): Promise<Pick<ScanRequestRow, 'id'>> {
  const [request] = await sqlRows<Pick<ScanRequestRow, 'id'>>(
    tx,
    `INSERT INTO scan_requests (item_id, member_id, agent_id, scan_type, origin, status, fulfilled_at)
     VALUES ($1, $2, $3, 'document', 'sandbox', 'fulfilled', now()) RETURNING id`,
    [item.id, item.member_id, item.agent_id],
  );
  return request;
}

/** The facility uploaded the scan. */
export async function markScanFulfilled(tx: Queryable, id: string): Promise<void> {
  await sqlRun(tx, `UPDATE scan_requests SET status = 'fulfilled', fulfilled_at = now() WHERE id = $1`, [id]);
}

/** The facility could not scan: rejected with its reason. */
export async function markScanRejected(tx: Queryable, id: string, reason: string): Promise<ScanRequestRow> {
  const [updated] = await sqlRows<ScanRequestRow>(
    tx,
    `UPDATE scan_requests SET status = 'rejected', rejection_reason = $2 WHERE id = $1 RETURNING *`,
    [id, reason],
  );
  return updated;
}

/** A rejected operation's scan, if still requested, is rejected too (a reason given before stays). */
export async function rejectRequestedScan(tx: Queryable, id: string, reason: string): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE scan_requests SET status = 'rejected', rejection_reason = COALESCE(rejection_reason, $2) WHERE id = $1 AND status = 'requested'`,
    [id, reason],
  );
}

/** A sandbox Open & Scan's fixture bundle becomes the operation's content scan. */
export async function linkFixtureScanToHandling(tx: Queryable, bundleId: string, handlingId: string): Promise<void> {
  await sqlRun(
    tx,
    `UPDATE scan_requests SET handling_id = $2, scan_type = 'content' WHERE id = (SELECT request_id FROM scan_bundles WHERE id = $1)`,
    [bundleId, handlingId],
  );
}

// scan_bundles

/** The bundle of a facility's upload. */
export async function insertScanBundle(tx: Queryable, id: string, requestId: string, itemId: string): Promise<void> {
  await sqlRun(tx, `INSERT INTO scan_bundles (id, request_id, item_id) VALUES ($1, $2, $3)`, [id, requestId, itemId]);
}

/** A sandbox bundle; `announced`: marked started, no bundle workflow is to run for it. */
export async function insertFixtureBundle(
  tx: Queryable,
  requestId: string,
  itemId: string,
  announced: boolean,
): Promise<Pick<ScanBundleRow, 'id' | 'created_at'>> {
  const [bundle] = await sqlRows<Pick<ScanBundleRow, 'id' | 'created_at'>>(
    tx,
    `INSERT INTO scan_bundles (request_id, item_id, workflow_started_at) VALUES ($1, $2, CASE WHEN $3::boolean THEN now() END) RETURNING id, created_at`,
    [requestId, itemId, announced],
  );
  return bundle;
}

/** Records that the bundle's workflow was started (the first time only). */
export async function markBundleWorkflowStarted(db: Queryable, id: string): Promise<void> {
  await sqlRun(db, `UPDATE scan_bundles SET workflow_started_at = COALESCE(workflow_started_at, now()) WHERE id = $1`, [
    id,
  ]);
}

// scan_pages

/** A page the facility uploaded (its OCR is queued). */
export async function insertPhysicalPage(
  tx: Queryable,
  bundleId: string,
  itemId: string,
  p: { id: string; n: number; role: PageRole; key: string; contentType: string; size: number; sha: string },
): Promise<void> {
  await sqlRun(
    tx,
    `INSERT INTO scan_pages (id, bundle_id, item_id, page_number, page_role, origin, storage_key, content_type, size_bytes, source_sha256)
         VALUES ($1, $2, $3, $4, $5, 'physical', $6, $7, $8, $9)`,
    [p.id, bundleId, itemId, p.n, p.role, p.key, p.contentType, p.size, p.sha],
  );
}

/** A sandbox page with its fixture transcript saved as template OCR. */
export async function insertFixturePage(
  tx: Queryable,
  p: {
    bundleId: string;
    itemId: string;
    pageNumber: number;
    role: PageRole;
    origin: PageOrigin;
    storageKey: string;
    sizeBytes: number;
    sourceSha256: string;
    ocrStatus: string;
    ocrText: string;
    uncertainSpans: unknown;
    provider: string;
    model: string;
    completedAt: Date;
    provenance: unknown;
  },
): Promise<void> {
  await sqlRun(
    tx,
    `INSERT INTO scan_pages (bundle_id, item_id, page_number, page_role, origin, storage_key, content_type, size_bytes, source_sha256,
         ocr_status, ocr_text, ocr_is_blank, ocr_uncertain_spans, ocr_provider, ocr_model, ocr_completed_at, ocr_attempts, ocr_provenance)
       VALUES ($1, $2, $3, $4, $5, $6, 'image/png', $7, $8, $9, $10, $11, $12, $13, $14, $15, 0, $16)`,
    [
      p.bundleId,
      p.itemId,
      p.pageNumber,
      p.role,
      p.origin,
      p.storageKey,
      p.sizeBytes,
      p.sourceSha256,
      p.ocrStatus,
      p.ocrText,
      p.ocrText.trim() === '',
      JSON.stringify(p.uncertainSpans),
      p.provider,
      p.model,
      p.completedAt,
      JSON.stringify(p.provenance),
    ],
  );
}

/** Claims a page for an OCR attempt; undefined when it is finished or out of attempts. */
export async function claimPageForOcr(
  db: Queryable,
  pageId: string,
  maxAttempts: number,
): Promise<ScanPageRow | undefined> {
  const [page] = await sqlRows<ScanPageRow>(
    db,
    `UPDATE scan_pages SET ocr_status = 'processing', ocr_attempts = ocr_attempts + 1
      WHERE id = $1 AND ocr_status IN ('queued','processing') AND ocr_attempts < $2 RETURNING *`,
    [pageId, maxAttempts],
  );
  return page;
}

/** Saves a page's OCR (Tesseract). */
export async function saveOcrResult(
  db: Queryable,
  pageId: string,
  r: {
    status: OcrPageStatus;
    text: string;
    isBlank: boolean;
    confidence: number | null;
    uncertainSpans: unknown;
    model: string;
  },
): Promise<void> {
  await sqlRun(
    db,
    `UPDATE scan_pages SET ocr_status = $2, ocr_text = $3, ocr_is_blank = $4, ocr_confidence = $5, ocr_uncertain_spans = $6, ocr_provider = 'tesseract',
         ocr_model = $7, ocr_completed_at = now(), ocr_error_code = NULL WHERE id = $1`,
    [pageId, r.status, r.text, r.isBlank, r.confidence, JSON.stringify(r.uncertainSpans), r.model],
  );
}

/** An OCR attempt failed: queued again, or failed for good. */
export async function markOcrAttemptFailed(
  db: Queryable,
  pageId: string,
  status: 'queued' | 'failed',
  errorCode: string,
): Promise<void> {
  await sqlRun(
    db,
    `UPDATE scan_pages SET ocr_status = $2, ocr_error_code = $3, ocr_provider = 'tesseract', ocr_completed_at = CASE WHEN $2 = 'failed' THEN now() END
      WHERE id = $1`,
    [pageId, status, errorCode],
  );
}
